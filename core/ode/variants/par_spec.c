/* par_spec.c - buffers, team, block kernels and the attempt of the
   specialized parallel PIRK variants (see par_spec.h). */
#include "par_spec.h"
#include "pirk_overlap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PIRK correctors of at most PSP_MAX_STAGES stages, d < n (the n/p rules
   need the thread count and m, so psp_init checks them). */
int psp_applies(const psp_spec *spec, const odb_problem *p,
                const odb_method *m, char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_PIRK) {
    snprintf(why, nwhy, "%s runs the corrector steps of PIRK methods; '%s' "
             "is an explicit RK method", spec->name, m->name);
    return 0;
  }
  if (m->s > PSP_MAX_STAGES) {
    snprintf(why, nwhy, "%s supports at most %d stages; '%s' has %d",
             spec->name, PSP_MAX_STAGES, m->name, m->s);
    return 0;
  }
  if (p->d >= p->n) {
    snprintf(why, nwhy, "%s needs a limited access distance (d < n); %s has "
             "d = n = %ld", spec->name, p->label, p->n);
    return 0;
  }
  return 1;
}

/* {====== init */

/*
** Default block (opts.block = 0): the sequential variants' model per thread
** (pirk_overlap.c): half of one L2 holds the working set of one block
** iteration, (2s+2) B + 2sd doubles (Table 8.1, WS_1), for PipeDb1m*; of
** one pipeline step, ((3s+1) m + 3) B (formula 7.1), for pp*. A multiple of
** 8, at least 8, at most n/p. B < d is allowed (par_spec.h).
*/
static long default_block(const odb_solver *s, const psp_data *D) {
  double words = 0.5 * odb_solver_cache_bytes(s, 2, 256.0 * 1024.0) / sizeof(double), B;
  long per = D->n / D->p;
  if (D->spec->pipelined)
    B = words / ((3.0 * D->S + 1.0) * D->m + 3.0);
  else
    B = (words - 2.0 * D->S * (double)D->d) / (2.0 * D->S + 2.0);
  B = floor(B / 8.0) * 8.0;
  if (B < 8) B = 8;
  if (B > (double)per) B = (double)per;
  return B < 1 ? 1 : (long)B;
}

/*
** The pre-selection conditions of thesis 9.3 (on the smallest range
** floor(n/p)): n/p >= d for PipeDb1m*, n/p >= (m+2) d for pp*.
*/
static odb_status check_sizes(const psp_data *D) {
  long per = D->n / D->p, need;
  const char *name = D->spec->name;
  if (!D->spec->pipelined) {
    if (per >= D->d) return ODB_OK;
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: %s "
                    "needs n/p >= d; n/p = %ld/%d = %ld < d = %ld", name,
                    name, D->n, D->p, per, D->d);
  }
  need = (long)(D->m + 2) * D->d;
  if (per >= need) return ODB_OK;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: %s "
                  "needs n/p >= (m+2) d; n/p = %ld/%d = %ld < (%d+2)*%ld = "
                  "%ld", name, name, D->n, D->p, per, D->m, D->d, need);
}

/* Doubles of thread T's edge buffers: rows 1..m, s x (hr + hl) each. */
static long edge_len(const psp_data *D) {
  return (long)D->m * D->S * (D->hr + D->hl);
}

/* Allocates thread T's buffers (untouched: touch_fn writes them). */
static odb_status alloc_thread(psp_data *D, psp_thr *T) {
  T->ybar = odb_doubles_alloc((long)D->S * T->stride);
  T->edges = odb_doubles_alloc(edge_len(D));
  T->s1 = odb_doubles_alloc(T->s1_hi - T->s1_lo);
  if (D->spec->tiled) T->Fb = odb_doubles_alloc(T->Bmax);
  if (D->spec->yl) {
    T->yl[0] = odb_doubles_alloc(T->yl_hi - T->yl_lo);
    T->yl[1] = odb_doubles_alloc(T->yl_hi - T->yl_lo);
  }
  if (!T->ybar || !T->edges || !T->s1 || (D->spec->tiled && !T->Fb) ||
      (D->spec->yl && (!T->yl[0] || !T->yl[1])))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: %d x %ld doubles of Ybar per thread",
                    D->spec->name, D->S, T->stride);
  return ODB_OK;
}

/* First touch: thread tid zeroes its own buffers in the order they are used. */
static void touch_fn(odb_team *team, int tid, void *arg) {
  psp_data *D = arg;
  psp_thr *T = &D->thr[tid];
  (void)team;
  if (D->spec->yl) {
    memset(T->yl[0], 0, (size_t)(T->yl_hi - T->yl_lo) * sizeof(double));
    memset(T->yl[1], 0, (size_t)(T->yl_hi - T->yl_lo) * sizeof(double));
  }
  memset(T->ybar, 0, (size_t)D->S * (size_t)T->stride * sizeof(double));
  memset(T->edges, 0, (size_t)edge_len(D) * sizeof(double));
  memset(T->s1, 0, (size_t)(T->s1_hi - T->s1_lo) * sizeof(double));
  if (T->Fb) memset(T->Fb, 0, (size_t)T->Bmax * sizeof(double));
  T->err = 0;
  T->cur = 0;
}

/*
** Assumes s->m, opts and the problem are set (the solver's create). On
** failure leaves what it allocated in s->vdata for psp_fini.
*/
odb_status psp_init(odb_solver *s, const psp_spec *spec) {
  psp_data *D = calloc(1, sizeof *D);
  void *mem = NULL;
  if (!D) return ODB_FAIL(ODB_ERR_NOMEM, "%s", spec->name);
  s->vdata = D;   /* on failure the solver calls psp_fini */
  D->spec = spec;
  D->prob = s->problem;
  D->A = s->method->A;
  D->b = s->method->b;
  D->c = s->method->c;
  D->S = s->method->s;
  D->m = s->m;
  D->n = s->n;
  D->d = s->problem->d;
  D->atol = s->opts.atol;
  D->rtol = s->opts.rtol;
  D->p = odb_solver_threads(s);
  if (D->m < 1)
    return ODB_FAIL(ODB_ERR_ARG, "%s needs at least 1 corrector step, got "
                    "m = %d", spec->name, D->m);
  D->w = spec->pipelined ? D->d : 0;
  D->hl = D->d - D->w;
  D->hr = D->d + D->w;
  ODB_TRY(check_sizes(D));
  D->B = s->opts.block > 0 ? s->opts.block : default_block(s, D);
  if (D->B > D->n) D->B = D->n;
  s->block = D->B;
  if (posix_memalign(&mem, 64, (size_t)D->p * sizeof *D->thr))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: %d thread records", spec->name,
                    D->p);
  memset(mem, 0, (size_t)D->p * sizeof *D->thr);
  D->thr = mem;
  for (int q = 0; q < D->p; ++q) ODB_TRY(psp_plan(D, q));
  ODB_TRY(psp_plan_link(D));
  for (int q = 0; q < D->p; ++q) ODB_TRY(alloc_thread(D, &D->thr[q]));
  ODB_TRY(odb_team_create(s->ctx, s->ctx ? &s->ctx->topo : NULL, D->p,
                          ODB_BARRIER_FLAGS, &D->team));
  return odb_team_run(D->team, touch_fn, D);
}

/* Stops the team and frees everything; s->vdata may be NULL or partial. */
void psp_fini(odb_solver *s) {
  psp_data *D = s->vdata;
  if (!D) return;
  odb_team_destroy(D->team);
  if (D->thr)
    for (int q = 0; q < D->p; ++q) psp_thr_free(&D->thr[q]);
  free(D->thr);
  free(D);
  s->vdata = NULL;
}

/* }====== */

/* {====== block kernels (the arithmetic of pirk_overlap.c) */

/* The eta vector of thread T: y_local (yl) or the solver's y. */
static void eta_src(const psp_data *D, const psp_thr *T, const double **e,
                    long *off) {
  if (D->spec->yl) {
    *e = T->yl[T->cur];
    *off = T->yl_lo;
  } else {
    *e = D->eta;
    *off = 0;
  }
}

/* Source stage i of row r: the argument vector (window) and its offset. */
static const double *source(const psp_data *D, const psp_thr *T, int r,
                            int i, long *yoff) {
  const double *e;
  if (r == 1) {
    eta_src(D, T, &e, yoff);
    return e;
  }
  *yoff = T->elo[r - 1];
  return T->ybar + (long)i * T->stride + psp_col(D, T, r - 1, *yoff);
}

/*
** Block [x0, x1) of the iterate Y^(r), r <= m, from Y^(r-1); row m also
** stores sum_i b_i F_i^(m-1) into s1.
*/
static void corrector(const psp_data *D, psp_thr *T, int r, long x0,
                      long x1) {
  const odb_problem *pr = D->prob;
  const double *etab, *eta;
  double *dst[PSP_MAX_STAGES], *s1 = NULL, h = D->h;
  long eoff, len = x1 - x0;
  int S = D->S;
  eta_src(D, T, &etab, &eoff);
  eta = etab + (x0 - eoff);
  for (int l = 0; l < S; ++l)
    dst[l] = T->ybar + (long)l * T->stride + psp_col(D, T, r, x0);
  if (r == D->m) s1 = T->s1 + (x0 - T->s1_lo);
  for (int i = 0; i < S; ++i) {
    long yoff;
    const double *src = source(D, T, r, i, &yoff);
    double tau = D->t + D->c[i] * h;
    if (D->spec->tiled) {
      pr->rhs(pr, tau, src, yoff, T->Fb, x0, x1);
      for (int l = 0; l < S; ++l)
        pirk_ov_row_update(dst[l], T->Fb, eta, D->A[l * S + i], h, i, S, len);
      if (s1) pirk_ov_sum_update(s1, T->Fb, D->b[i], i, len);
      continue;
    }
    for (long a = 0; a < len; a += PSP_RUN) {
      double F[PSP_RUN], *dr[PSP_MAX_STAGES];
      long k = len - a < PSP_RUN ? len - a : PSP_RUN;
      pr->rhs(pr, tau, src, yoff, F, x0 + a, x0 + a + k);
      for (int l = 0; l < S; ++l) dr[l] = dst[l] + a;
      pirk_ov_apply_run(dr, D->A, F, eta + a, h, i, S, k);
      if (s1) pirk_ov_sum_update(s1 + a, F, D->b[i], i, k);
    }
  }
}

/*
** Block [x0, x1) of the new solution: sum_i b_i F_i^(m) from Y^(m) (summed
** in ynew), then ynew = eta + h sum (and y_local's other buffer), e = h sum
** - h s1, and the block's (e / sk)^2 into T->err.
*/
static void finish(const psp_data *D, psp_thr *T, long x0, long x1) {
  const odb_problem *pr = D->prob;
  const double *etab;
  double *yn = D->ynew + x0, *yl = NULL, h = D->h, acc = T->err;
  long eoff, len = x1 - x0;
  eta_src(D, T, &etab, &eoff);
  for (int i = 0; i < D->S; ++i) {
    long yoff;
    const double *src = source(D, T, D->m + 1, i, &yoff);
    double tau = D->t + D->c[i] * h;
    if (D->spec->tiled) {
      pr->rhs(pr, tau, src, yoff, T->Fb, x0, x1);
      pirk_ov_sum_update(yn, T->Fb, D->b[i], i, len);
      continue;
    }
    for (long a = 0; a < len; a += PSP_RUN) {
      double F[PSP_RUN];
      long k = len - a < PSP_RUN ? len - a : PSP_RUN;
      pr->rhs(pr, tau, src, yoff, F, x0 + a, x0 + a + k);
      pirk_ov_sum_update(yn + a, F, D->b[i], i, k);
    }
  }
  if (D->spec->yl) yl = T->yl[T->cur ^ 1] + (x0 - T->yl_lo);
  for (long k = 0; k < len; ++k) {
    double eta = etab[x0 - eoff + k], dn = h * yn[k];
    double e = dn - h * T->s1[x0 + k - T->s1_lo], y1 = eta + dn;
    double ay = fabs(eta), an = fabs(y1);
    double q = e / (D->atol + D->rtol * (ay > an ? ay : an));
    yn[k] = y1;
    if (yl) yl[k] = y1;
    acc += q * q;
  }
  T->err = acc;
}

/* }====== */

/* {====== neighbour exchange */

/* Left edge (s x hr, position x at x - lo) and right edge (s x hl, position
   x at x - (hi - hl)) buffers of row r. */
static double *edge_left(const psp_data *D, const psp_thr *T, int r) {
  return T->edges + (long)(r - 1) * D->S * (D->hr + D->hl);
}
static double *edge_right(const psp_data *D, const psp_thr *T, int r) {
  return edge_left(D, T, r) + (long)D->S * D->hr;
}

/* Copies n doubles of stage i of row r from Ybar at position x to dst. */
static void ybar_get(const psp_data *D, const psp_thr *T, int r, int i,
                     long x, double *dst, long n) {
  memcpy(dst, T->ybar + (long)i * T->stride + psp_col(D, T, r, x),
         (size_t)n * sizeof(double));
}
static void ybar_put(const psp_data *D, psp_thr *T, int r, int i, long x,
                     const double *src, long n) {
  memcpy(T->ybar + (long)i * T->stride + psp_col(D, T, r, x), src,
         (size_t)n * sizeof(double));
}

/* PUB_L / PUB_R: my edges of row r into the edge buffers. */
static void pub_left(const psp_data *D, const psp_thr *T, int r) {
  long lo = T->lo[r], cnt = T->hi[r] - lo < D->hr ? T->hi[r] - lo : D->hr;
  for (int i = 0; i < D->S; ++i)
    ybar_get(D, T, r, i, lo, edge_left(D, T, r) + (long)i * D->hr, cnt);
}
static void pub_right(const psp_data *D, const psp_thr *T, int r) {
  long hi = T->hi[r], x = hi - D->hl < T->lo[r] ? T->lo[r] : hi - D->hl;
  for (int i = 0; i < D->S; ++i)
    ybar_get(D, T, r, i, x, edge_right(D, T, r) + (long)i * D->hl +
             (x - (hi - D->hl)), hi - x);
}

/* FILL_L / FILL_R: the neighbour's edge into my halo of row r. */
static void fill_left(const psp_data *D, psp_thr *T, const psp_thr *N,
                      int r) {
  long lo = T->lo[r], x = lo - D->hl < 0 ? 0 : lo - D->hl;
  for (int i = 0; i < D->S; ++i)
    ybar_put(D, T, r, i, x, edge_right(D, N, r) + (long)i * D->hl +
             (x - (lo - D->hl)), lo - x);
}
static void fill_right(const psp_data *D, psp_thr *T, const psp_thr *N,
                       int r) {
  long hi = T->hi[r];
  for (int i = 0; i < D->S; ++i)
    ybar_put(D, T, r, i, hi, edge_left(D, N, r) + (long)i * D->hr,
             T->ehi[r] - hi);
}

/* FILL_S: s1 on [hi_m, hi_{m+1}) from the right neighbour's s1, in place. */
static void fill_s1(const psp_data *D, psp_thr *T, const psp_thr *N) {
  long x = T->hi[D->m], cnt = T->hi[D->m + 1] - x;
  memcpy(T->s1 + (x - T->s1_lo), N->s1 + (x - N->s1_lo),
         (size_t)cnt * sizeof(double));
}

/*
** yl: makes y_local hold eta = s->y on the thread's window (par_spec.h):
** own part from the buffer that matches s->y (or from s->y), then event 1,
** then the halos from the neighbours' own parts once they published it.
*/
static void yl_start(psp_data *D, psp_thr *T, int q, long base) {
  long lo = T->lo[D->m + 1], hi = T->hi[D->m + 1];
  size_t bytes = (size_t)(hi - lo) * sizeof(double);
  const double *y = D->eta + lo;
  double *own = T->yl[T->cur] + (lo - T->yl_lo);
  if (memcmp(own, y, bytes) != 0) {
    if (memcmp(T->yl[T->cur ^ 1] + (lo - T->yl_lo), y, bytes) == 0)
      T->cur ^= 1;
    else
      memcpy(own, y, bytes);
  }
  own = T->yl[T->cur];
  odb_team_progress_set(D->team, q, base + 1);
  if (T->yl_lo < lo) {
    const psp_thr *N = &D->thr[q - 1];
    odb_team_progress_wait(D->team, q - 1, base + 1);
    memcpy(own, N->yl[N->cur] + (T->yl_lo - N->yl_lo),
           (size_t)(lo - T->yl_lo) * sizeof(double));
  }
  if (hi < T->yl_hi) {
    const psp_thr *N = &D->thr[q + 1];
    odb_team_progress_wait(D->team, q + 1, base + 1);
    memcpy(own + (hi - T->yl_lo), N->yl[N->cur] + (hi - N->yl_lo),
           (size_t)(T->yl_hi - hi) * sizeof(double));
  }
}

/* }====== */

/* What the executing sink needs. */
typedef struct exec {
  psp_data *D;
  psp_thr *T;
  int q;
  long base;            /* event base of the attempt */
} exec;

/* Executes one operation of thread q's program (see par_spec.h). */
static void exec_sink(void *arg, int kind, int r, long x0, long x1) {
  exec *x = arg;
  psp_data *D = x->D;
  psp_thr *T = x->T;
  int q = x->q;
  switch (kind) {
  case PSP_COMPUTE:
    if (r <= D->m)
      corrector(D, T, r, x0, x1);
    else
      finish(D, T, x0, x1);
    break;
  case PSP_PUB_L:
    pub_left(D, T, r);
    odb_team_progress_set(D->team, q, x->base + x0);
    break;
  case PSP_PUB_R:
    pub_right(D, T, r);
    odb_team_progress_set(D->team, q, x->base + x0);
    break;
  case PSP_PUB_S:
    odb_team_progress_set(D->team, q, x->base + x0);
    break;
  case PSP_FILL_L:
    odb_team_progress_wait(D->team, q - 1, x->base + D->thr[q - 1].evR[r]);
    fill_left(D, T, &D->thr[q - 1], r);
    break;
  case PSP_FILL_R:
    odb_team_progress_wait(D->team, q + 1, x->base + D->thr[q + 1].evL[r]);
    fill_right(D, T, &D->thr[q + 1], r);
    break;
  case PSP_FILL_S:
    odb_team_progress_wait(D->team, q + 1, x->base + D->thr[q + 1].evS);
    fill_s1(D, T, &D->thr[q + 1]);
    break;
  }
}

/* Thread q's program for the attempt in D. */
static void kernel_fn(odb_team *team, int q, void *arg) {
  psp_data *D = arg;
  exec x = { D, &D->thr[q], q, D->epoch * D->E };
  (void)team;
  D->thr[q].err = 0;
  if (D->spec->yl) yl_start(D, x.T, q, x.base);
  (void)psp_program(D, q, exec_sink, &x);   /* cannot fail: psp_plan ran it */
}

/*
** One attempt from (s->t, s->y) on the team; the error sums are added in
** thread order once the team is idle again.
*/
odb_status psp_attempt(odb_solver *s, double h, double *err) {
  psp_data *D = s->vdata;
  double sum = 0;
  D->t = s->t;
  D->h = h;
  D->eta = s->y;
  D->ynew = s->ynew;
  D->epoch++;
  ODB_TRY(odb_team_run(D->team, kernel_fn, D));
  for (int q = 0; q < D->p; ++q) sum += D->thr[q].err;
  *err = D->n > 0 ? sqrt(sum / (double)D->n) : 0.0;
  return ODB_OK;
}

/*
** Bytes per attempt, each vector once per sweep that needs it (blocks, the
** F buffer, halos and edges stay in cache).
** PipeDb1m*: as the sequential PipeDb1m: sweep 1 reads eta and writes Y^(1)
** (s vectors); sweeps 2..m read Y^(r-1) and eta and write Y^(r) (m also
** s1); the last reads Y^(m), eta and s1 and writes ynew.
** pp*: one pass: eta read once, ynew written once, Ybar (s rows of L per
** thread) written once, its dirty lines going back to memory.
** yl: plus the comparison of the own part of s->y with y_local (2 reads)
** and the write of eta_new into y_local.
*/
void psp_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  const psp_data *D = s->vdata;
  (void)stage0;
  double v = (double)s->n * sizeof(double);
  int S = s->method->s, m = s->m;
  if (!D->spec->pipelined) {
    *r = v + (m - 1) * (S + 1) * v + (S + 2) * v;
    *w = m * S * v + v + v;
  } else {
    double L = 0;
    for (int q = 0; q < D->p; ++q) L += (double)D->thr[q].L;
    *r = v;
    *w = v + S * L * sizeof(double);
  }
  if (D->spec->yl) {
    *r += 2 * v;
    *w += v;
  }
}
