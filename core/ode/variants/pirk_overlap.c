/* pirk_overlap.c - the overlapped iterate matrix Ybar and its block
   kernels; variants "PipeDb1m" and "PipeDb1mt" (thesis Ch. 7.2.2). */
#include "pirk_overlap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** PipeDb1m / PipeDb1mt have PipeDb2m's / PipeDb2mt's loop structure
** (k-j-i-jj-l and k-j-i-(jj)-l-jj): for each corrector step k one sweep
** over the blocks, in each block the s source stages i, and the value
** f_j(Y_i^(k-1)) is added at once into all s target rows. Instead of two
** s x n matrices they keep the iterates in the overlapped Ybar (see
** pirk_overlap.h), which needs B >= d. A last sweep computes the new
** solution and the error estimate from Y^(m). Delta eta^(m-1) (as the sum
** sum_i b_i F_i^(m-1)) lives in the solver's s->F[0] between the sweep of
** k = m and the last one.
*/

/* {====== shared by the four overlapped variants */

/* See pirk_overlap.h; the block constraints wait for init (they need B, m). */

int pirk_ov_applies(const char *name, int pipelined, const odb_problem *p,
                    const odb_method *m, char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_PIRK) {
    snprintf(why, nwhy, "%s %s the corrector steps of a PIRK method; '%s' "
             "is an explicit RK method and has none", name,
             pipelined ? "pipelines" : "overlaps the iterates of", m->name);
    return 0;
  }
  if (p->d >= p->n) {
    snprintf(why, nwhy, "%s needs a limited access distance (d < n); %s has "
             "d = n = %ld", name, p->label, p->n);
    return 0;
  }
  if (m->s > PIRK_OV_MAX_STAGES) {
    snprintf(why, nwhy, "%s supports at most %d stages; '%s' has %d", name,
             PIRK_OV_MAX_STAGES, m->name, m->s);
    return 0;
  }
  return 1;
}

/*
** Default block size: the largest multiple of 8 whose most important
** working set fills half of one L2 cache (the rest is left to the RHS's
** neighbours and to eta), but never below d. For PipeDb1m(t) that is the
** working set of one block iteration, (2s+2) B + 2sd doubles (thesis Table
** 8.1, WS_1); for the pipelined variants that of one pipeline step,
** ((3s+1) m + 3) B (formula 7.1), capped at n / m so that at least m blocks
** exist.
*/
static long default_block(const odb_solver *s, long d, int pipelined) {
  double words = 0.5 * odb_solver_cache_bytes(s, 2, 256.0 * 1024.0) / sizeof(double), B;
  int S = s->method->s, m = s->m;
  if (pipelined)
    B = words / ((3.0 * S + 1.0) * m + 3.0);
  else
    B = (words - 2.0 * S * (double)d) / (2.0 * S + 2.0);
  B = floor(B / 8.0) * 8.0;
  if (pipelined && B > (double)(s->n / m)) B = (double)(s->n / m);
  return B < (double)d ? d : (long)B;
}

/* n doubles (at least one), 64-byte aligned; NULL when out of memory. */
static void *alloc_doubles(long n) {
  void *p = NULL;
  return posix_memalign(&p, 64, (size_t)(n > 0 ? n : 1) * sizeof(double))
         ? NULL : p;
}

/* Frees what pirk_ov_init allocated, also after a failed init. */
void pirk_ov_fini(odb_solver *s) {
  pirk_ov *ov = s->vdata;
  if (!ov) return;
  if (ov->rows)
    for (int l = 0; l < ov->s; ++l) free(ov->rows[l]);
  free(ov->rows);
  free(ov->Fb);
  free(ov->ring);
  free(ov);
  s->vdata = NULL;
}

/*
** Checks the block constraints: B >= d (the 2B shift, see pirk_overlap.h)
** and, for pipelining, at least m whole blocks (thesis 8.4.2: B <= n/m).
** A block larger than n is clamped to n (one block).
*/
static odb_status check_block(const pirk_ov *ov, int pipelined) {
  long B = ov->B;
  if (B < ov->d)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: block "
                    "%ld is smaller than the access distance %ld; %s needs "
                    "B >= d", ov->name, B, ov->d, ov->name);
  if (pipelined && ov->n / B < ov->m)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: %s "
                    "needs at least m = %d blocks; n/B = %ld/%ld = %ld%s",
                    ov->name, ov->name, ov->m, ov->n, B, ov->n / B,
                    ov->n / ov->m >= ov->d ? "" : " (no block size works: "
                    "n/m is below the access distance)");
  return ODB_OK;
}

/* Block size, constraints and storage (see pirk_overlap.h). */
odb_status pirk_ov_init(odb_solver *s, const char *name, int tiled,
                        int pipelined) {
  pirk_ov *ov = calloc(1, sizeof *ov);
  if (!ov) return ODB_FAIL(ODB_ERR_NOMEM, "%s: data", name);
  s->vdata = ov;
  ov->name = name;
  ov->n = s->n;
  ov->d = s->problem->d;
  ov->s = s->method->s;
  ov->m = s->m;
  ov->tiled = tiled;
  if (ov->m < 1)
    return ODB_FAIL(ODB_ERR_ARG, "%s needs at least one corrector step, got "
                    "m = %d", name, ov->m);
  ov->B = s->opts.block > 0 ? s->opts.block
                            : default_block(s, ov->d, pipelined);
  if (ov->B > ov->n) ov->B = ov->n;
  ODB_TRY(check_block(ov, pipelined));
  s->block = ov->B;
  ov->nb = (ov->n + ov->B - 1) / ov->B;
  ov->L = (long)(ov->m - 1) * 2 * ov->B + ov->n;
  ov->rows = calloc((size_t)ov->s, sizeof *ov->rows);
  if (!ov->rows) return ODB_FAIL(ODB_ERR_NOMEM, "%s: rows", name);
  for (int l = 0; l < ov->s; ++l)
    if (!(ov->rows[l] = alloc_doubles(ov->L)))
      return ODB_FAIL(ODB_ERR_NOMEM, "%s: Ybar of %d x %ld doubles", name,
                      ov->s, ov->L);
  if (tiled && !(ov->Fb = alloc_doubles(ov->B)))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: F buffer", name);
  if (pipelined && !(ov->ring = alloc_doubles(2 * ov->B)))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: estimate ring", name);
  return ODB_OK;
}

/* Column offset of iterate k in Ybar, (m - k) 2B. */
static inline long off(const pirk_ov *ov, int k) {
  return (long)(ov->m - k) * 2 * ov->B;
}

/*
** Block J of Y^(r) (see pirk_overlap.h): per source stage i, f on the block
** (one call, or runs of PIRK_OV_RUN) from Y_i^(r-1), then into all s rows.
*/
void pirk_ov_corrector(odb_solver *s, pirk_ov *ov, int r, long J, double h,
                       double *s1) {
  const odb_problem *p = s->problem;
  const odb_method *me = s->method;
  const double *eta = s->y;
  long j0 = J * ov->B, j1 = j0 + ov->B < ov->n ? j0 + ov->B : ov->n;
  long o = off(ov, r);
  int S = ov->s;
  double *dr[PIRK_OV_MAX_STAGES];
  for (int i = 0; i < S; ++i) {
    const double *src = r == 1 ? eta : ov->rows[i] + off(ov, r - 1);
    double tau = s->t + me->c[i] * h;
    if (ov->tiled) {
      p->rhs(p, tau, src, 0, ov->Fb, j0, j1);
      for (int l = 0; l < S; ++l)
        pirk_ov_row_update(ov->rows[l] + o + j0, ov->Fb, eta + j0,
                           me->A[l * S + i], h, i, S, j1 - j0);
      if (s1) pirk_ov_sum_update(s1, ov->Fb, me->b[i], i, j1 - j0);
      continue;
    }
    for (long a = j0; a < j1; a += PIRK_OV_RUN) {
      double F[PIRK_OV_RUN];
      long len = j1 - a < PIRK_OV_RUN ? j1 - a : PIRK_OV_RUN;
      p->rhs(p, tau, src, 0, F, a, a + len);
      for (int l = 0; l < S; ++l) dr[l] = ov->rows[l] + o + a;
      pirk_ov_apply_run(dr, me->A, F, eta + a, h, i, S, len);
      if (s1) pirk_ov_sum_update(s1 + (a - j0), F, me->b[i], i, len);
    }
  }
}

/*
** Block J of eta_new (see pirk_overlap.h): ynew serves as the accumulator
** of sum_i b_i F_i^(m) before it receives eta + h sum.
*/
void pirk_ov_finish(odb_solver *s, pirk_ov *ov, long J, double h,
                    const double *s1, double *acc) {
  const odb_problem *p = s->problem;
  const odb_method *me = s->method;
  const double *eta = s->y;
  double *yn = s->ynew, atol = s->opts.atol, rtol = s->opts.rtol, sum = *acc;
  long j0 = J * ov->B, j1 = j0 + ov->B < ov->n ? j0 + ov->B : ov->n;
  for (int i = 0; i < ov->s; ++i) {
    const double *src = ov->rows[i] + off(ov, ov->m);
    double tau = s->t + me->c[i] * h;
    if (ov->tiled) {
      p->rhs(p, tau, src, 0, ov->Fb, j0, j1);
      pirk_ov_sum_update(yn + j0, ov->Fb, me->b[i], i, j1 - j0);
      continue;
    }
    for (long a = j0; a < j1; a += PIRK_OV_RUN) {
      double F[PIRK_OV_RUN];
      long len = j1 - a < PIRK_OV_RUN ? j1 - a : PIRK_OV_RUN;
      p->rhs(p, tau, src, 0, F, a, a + len);
      pirk_ov_sum_update(yn + a, F, me->b[i], i, len);
    }
  }
  for (long j = j0; j < j1; ++j) {
    double dn = h * yn[j], e = dn - h * s1[j - j0], y1 = eta[j] + dn;
    double ay = fabs(eta[j]), an = fabs(y1);
    double q = e / (atol + rtol * (ay > an ? ay : an));
    yn[j] = y1;
    sum += q * q;
  }
  *acc = sum;
}

/* }====== */

/* {====== PipeDb1m, PipeDb1mt: one sweep per corrector step */

/* applies(): PIRK correctors on problems with d < n (block checked at init). */
static int db1m_applies(const odb_problem *p, const odb_method *m, char *why,
                        size_t nwhy) {
  return pirk_ov_applies("PipeDb1m", 0, p, m, why, nwhy);
}

static int db1mt_applies(const odb_problem *p, const odb_method *m,
                         char *why, size_t nwhy) {
  return pirk_ov_applies("PipeDb1mt", 0, p, m, why, nwhy);
}

/* init(): Ybar, untiled (runs of PIRK_OV_RUN) / tiled (F buffer of B). */
static odb_status db1m_init(odb_solver *s) {
  return pirk_ov_init(s, "PipeDb1m", 0, 0);
}

static odb_status db1mt_init(odb_solver *s) {
  return pirk_ov_init(s, "PipeDb1mt", 1, 0);
}

/*
** Corrector steps k = 1..m, each a sweep over the blocks in ascending order
** (the order the overlap needs); the sweep of k = m leaves sum b_i F^(m-1)
** in F[0]. Then a sweep for the new solution and the error norm.
*/
static odb_status db1m_attempt(odb_solver *s, double h, double *err) {
  pirk_ov *ov = s->vdata;
  double acc = 0.0, *s1 = s->F[0];
  for (int k = 1; k <= ov->m; ++k)
    for (long J = 0; J < ov->nb; ++J)
      pirk_ov_corrector(s, ov, k, J, h, k == ov->m ? s1 + J * ov->B : NULL);
  for (long J = 0; J < ov->nb; ++J)
    pirk_ov_finish(s, ov, J, h, s1 + J * ov->B, &acc);
  *err = sqrt(acc / (double)ov->n);
  return ODB_OK;
}

/*
** Bytes per step, each vector once per sweep that needs it (the F buffer
** and the neighbouring blocks stay in cache). Sweep k = 1 reads eta and
** writes Y^(1) (s rows of n); sweeps k = 2..m read Y^(k-1) and eta and write
** Y^(k) over it, k = m also the estimate sum; the last sweep reads Y^(m),
** eta and the estimate sum and writes ynew.
*/
static void db1m_traffic(const odb_solver *s, int stage0, double *r,
                         double *w) {
  double v = (double)s->n * sizeof(double);
  int S = s->method->s, m = s->m;
  (void)stage0;
  *r = v + (m - 1) * (S + 1) * v + (S + 2) * v;
  *w = m * S * v + v + v;
}

const odb_variant odb_variant_pirk_PipeDb1m = {
  .name = "PipeDb1m",
  .doc = "thesis variant PipeDb1m (k-j-i-jj-l): PipeDb2m on one overlapped "
         "matrix of the m iterates, each stored 2B left of its predecessor; "
         "parameter block (B >= d; default: a block iteration's working set "
         "fills half an L2); PIRK, limited access distance only",
  .backend = "cpu",
  .applies = db1m_applies,
  .init = db1m_init,
  .fini = pirk_ov_fini,
  .attempt = db1m_attempt,
  .traffic = db1m_traffic,
};

const odb_variant odb_variant_pirk_PipeDb1mt = {
  .name = "PipeDb1mt",
  .doc = "thesis variant PipeDb1mt (k-j-i-(jj)-l-jj): PipeDb2mt (f over a "
         "block into a buffer of B) on the overlapped iterate matrix; "
         "parameter block (B >= d; default: a block iteration's working set "
         "fills half an L2); PIRK, limited access distance only",
  .backend = "cpu",
  .applies = db1mt_applies,
  .init = db1mt_init,
  .fini = pirk_ov_fini,
  .attempt = db1m_attempt,
  .traffic = db1m_traffic,
};

/* }====== */
