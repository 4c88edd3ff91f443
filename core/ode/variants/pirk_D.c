/* pirk_D.c - variants "D" and "Dblock": the Y-scheme with the source
   stage outermost inside each corrector step (thesis Fig. 7.3, 7.4), for
   PIRK correctors and for explicit RK methods. */
#include "pirk_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
** D (k-i-j-l): for each source stage i a sweep over the components j that
** evaluates the scalar F = h f_j(t + c_i h, Y_i^(prev)) and adds a_li F to
** all s targets Y_l^(cur)[j] at once (temporal reuse of F). Dblock
** (k-i-j-l-jj) tiles the j-loop: F is a buffer of B values, f is evaluated
** over a tile, then each target row takes the tile. Y^(cur) is written
** while Y^(prev) is read, so the two are separate s x n matrices (s->F and
** the variant's Y), swapped after every corrector step. The thesis's
** Fig. 7.3 starts the target loop at 1 and never sets row 0; here all s
** targets are set, as the method requires. Remainder tiles (B does not
** divide n) are handled by a shorter last tile.
** Explicit RK methods: the source stages in order; source i
** scatters a_li h f(Y_i) into the later targets l > i (whose arguments are
** then complete when their turn comes), b_i h f into ynew (started from
** eta) and (b_i - bhat_i) h f into the error vector. Stage 0 reuses s->F[0]
** when the solver has it (s->fsal_ready); an FSAL method's last stage value
** is kept in s->F[s-1] for the next step, as in plain.
*/

/* Any PIRK or explicit RK method with at most PIRK_MAX_STAGES stages. */
static int D_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  (void)p;
  return pirk_applies_any("D", m, why, nwhy);
}

/* As D_applies. */
static int Dblock_applies(const odb_problem *p, const odb_method *m,
                          char *why, size_t nwhy) {
  (void)p;
  return pirk_applies_any("Dblock", m, why, nwhy);
}

/* Y-scheme storage; Dblock adds the F tile of B = opts.block. */
static odb_status D_init(odb_solver *s) { return pirk_y_init(s, "D", 0, 1); }

static odb_status Dblock_init(odb_solver *s) {
  return pirk_y_init(s, "Dblock", 1, 1);
}

/* {====== PIRK */

/*
** One corrector step k of D: Y^(cur) from Y^(prev) (eta when k = 0); the
** last step also sums dEta^(m-1).
*/
static void D_corrector(odb_solver *s, pirk_ydata *d, double *const *Yc,
                        double *const *Yp, int k, double h) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  const double *eta = s->y;
  int S = me->s, last = k == s->m - 1;
  double *de1 = d->deta1;
  for (int i = 0; i < S; ++i) {
    const double *src = k == 0 ? eta : Yp[i];
    double tc = s->t + me->c[i] * h, b = me->b[i];
    for (long j = 0; j < s->n; ++j) {
      double F = h * pirk_fj(p, tc, src, j);
      pirk_scatter1(Yc, me->A, S, i, j, F, eta[j]);
      if (last) de1[j] = i ? de1[j] + b * F : b * F;
    }
  }
}

/* Dblock's corrector step: D with the j-loop tiled (B = d->B). */
static void Dblock_corrector(odb_solver *s, pirk_ydata *d, double *const *Yc,
                             double *const *Yp, int k, double h) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  int S = me->s, last = k == s->m - 1;
  long n = s->n, B = d->B;
  for (int i = 0; i < S; ++i) {
    const double *src = k == 0 ? s->y : Yp[i];
    double tc = s->t + me->c[i] * h;
    for (long j0 = 0; j0 < n; j0 += B) {
      long len = n - j0 < B ? n - j0 : B;
      pirk_hf(p, tc, src, h, d->Fb, j0, j0 + len);
      pirk_scatter_tile(Yc, me->A, S, i, j0, len, d->Fb, s->y);
      if (last) pirk_acc_tile(d->deta1, me->b[i], i, j0, len, d->Fb);
    }
  }
}

/*
** The m corrector steps, then dEta^(m) = sum_i b_i h f(Y_i^(m)) into ynew
** (one sweep per source, tiled or not) and the update with the norm.
*/
static double pirk_step(odb_solver *s, pirk_ydata *d, double h, int tiled) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  int S = me->s;
  long n = s->n;
  double *cur[PIRK_MAX_STAGES], *prev[PIRK_MAX_STAGES];
  for (int l = 0; l < S; ++l) {
    cur[l] = s->F[l];
    prev[l] = d->Y.row[l];
  }
  for (int k = 0; k < s->m; ++k) {
    pirk_swap_rows(cur, prev, S);
    if (tiled) Dblock_corrector(s, d, cur, prev, k, h);
    else D_corrector(s, d, cur, prev, k, h);
  }
  for (int i = 0; i < S; ++i) {       /* cur holds Y^(m) */
    double tc = s->t + me->c[i] * h, b = me->b[i];
    if (tiled) {
      for (long j0 = 0; j0 < n; j0 += d->B) {
        long len = n - j0 < d->B ? n - j0 : d->B;
        pirk_hf(p, tc, cur[i], h, d->Fb, j0, j0 + len);
        pirk_acc_tile(s->ynew, b, i, j0, len, d->Fb);
      }
    } else {
      for (long j = 0; j < n; ++j) {
        double F = h * pirk_fj(p, tc, cur[i], j);
        s->ynew[j] = i ? s->ynew[j] + b * F : b * F;
      }
    }
  }
  return pirk_finish(s, d->deta1, 0, n);
}

/* }====== */

/* {====== explicit RK */

/*
** Source stage i's values h f on [j0, j0 + len) into Fb: from s->F[0] for
** stage 0 when the solver has it, else evaluated; an FSAL method's last
** stage keeps f (not h f) in s->F[s-1].
*/
static void erk_source(odb_solver *s, int i, const double *src, double h,
                       double *Fb, long j0, long len) {
  const odb_method *me = s->method;
  if (i == 0 && s->fsal_ready)
    memcpy(Fb, s->F[0] + j0, (size_t)len * sizeof(double));
  else
    s->problem->rhs(s->problem, s->t + me->c[i] * h, src, 0, Fb, j0,
                    j0 + len);
  if (me->fsal && i == me->s - 1)
    memcpy(s->F[i] + j0, Fb, (size_t)len * sizeof(double));
  for (long jj = 0; jj < len; ++jj) Fb[jj] = h * Fb[jj];
}

/*
** Source i's contribution on [j0, j0 + len): the later targets, ynew (from
** eta at i = 0) and the error vector e (when the method has bhat).
*/
static void erk_scatter(odb_solver *s, pirk_ydata *d, int i, long j0,
                        long len, const double *restrict Fb) {
  const odb_method *me = s->method;
  const erk_terms *t = &d->tgt[i];
  const double *restrict eta = s->y + j0;
  double *restrict yn = s->ynew + j0, *restrict e = d->deta1 + j0;
  double b = me->b[i], eb = me->bhat ? me->b[i] - me->bhat[i] : 0.0;
  for (int q = 0; q < t->n; ++q) {
    double a = t->coef[q], *restrict y = d->Y.row[t->idx[q]] + j0;
    if (i == 0)
      for (long jj = 0; jj < len; ++jj) y[jj] = eta[jj] + a * Fb[jj];
    else
      for (long jj = 0; jj < len; ++jj) y[jj] += a * Fb[jj];
  }
  if (i == 0)
    for (long jj = 0; jj < len; ++jj) yn[jj] = eta[jj] + b * Fb[jj];
  else if (b != 0.0)
    for (long jj = 0; jj < len; ++jj) yn[jj] += b * Fb[jj];
  if (!me->bhat) return;
  if (i == 0)
    for (long jj = 0; jj < len; ++jj) e[jj] = eb * Fb[jj];
  else if (eb != 0.0)
    for (long jj = 0; jj < len; ++jj) e[jj] += eb * Fb[jj];
}

/*
** One explicit RK step; B = 1 is D (one component at a time, scalar F),
** B > 1 is Dblock. Returns the sum of the norm's summands.
*/
static double erk_step(odb_solver *s, pirk_ydata *d, double h, long B) {
  long n = s->n;
  double F1, *Fb = B > 1 ? d->Fb : &F1, acc = 0.0;
  for (int i = 0; i < s->method->s; ++i) {
    const double *src = i ? d->Y.row[i] : s->y;
    for (long j0 = 0; j0 < n; j0 += B) {
      long len = n - j0 < B ? n - j0 : B;
      erk_source(s, i, src, h, Fb, j0, len);
      erk_scatter(s, d, i, j0, len, Fb);
    }
  }
  if (!s->method->bhat) return 0.0;
  for (long j = 0; j < n; ++j)
    acc += pirk_sq(d->deta1[j], s->y[j], s->ynew[j], s->opts.atol,
                   s->opts.rtol);
  return acc;
}

/*
** Explicit RK: per source sweep, reads the argument (stage 0: eta, and
** F[0] when reused), reads and writes each later target with a_li != 0
** (stage 0 only writes all of them, ynew and e), ynew when b_i != 0 and e
** when b_i != bhat_i; an FSAL method's last sweep also writes F[s-1]. The
** norm reads e, y and ynew.
*/
static void erk_traffic(const odb_solver *s, int stage0, double *r,
                        double *w) {
  const pirk_ydata *d = s->vdata;
  const odb_method *me = s->method;
  int S = me->s, est = me->bhat != NULL;
  double v = pirk_vbytes(s), rd = 0, wr = 0;
  rd += v * (stage0 ? 1 : 2);
  wr += v * (d->tgt[0].n + 1 + est);
  for (int i = 1; i < S; ++i) {
    int nrmw = d->tgt[i].n + (me->b[i] != 0.0) +
               (est && me->b[i] != me->bhat[i]);
    rd += v * (1 + nrmw);
    wr += v * (nrmw + (me->fsal && i == S - 1));
  }
  if (est) rd += 3 * v;
  *r = rd;
  *w = wr;
}

/* }====== */

/* PIRK or explicit RK step; no estimate (0) for methods without bhat. */
static odb_status D_attempt(odb_solver *s, double h, double *err) {
  pirk_ydata *d = s->vdata;
  int pirk = s->method->kind == ODB_METHOD_PIRK;
  double acc = pirk ? pirk_step(s, d, h, 0) : erk_step(s, d, h, 1);
  *err = pirk || s->method->bhat ? sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

/* As D_attempt, tiled. */
static odb_status Dblock_attempt(odb_solver *s, double h, double *err) {
  pirk_ydata *d = s->vdata;
  int pirk = s->method->kind == ODB_METHOD_PIRK;
  double acc = pirk ? pirk_step(s, d, h, 1) : erk_step(s, d, h, d->B);
  *err = pirk || s->method->bhat ? sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

/* D and Dblock move the same vectors; the F tile stays in cache. */
static void D_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  if (s->method->kind == ODB_METHOD_PIRK) pirk_y_traffic(s, 1, r, w);
  else erk_traffic(s, stage0, r, w);
}

const odb_variant odb_variant_pirk_D = {
  .name = "D",
  .doc = "thesis variant D (k-i-j-l): Y-scheme; each scalar h f_j of a "
         "source stage goes at once into all targets; PIRK and explicit RK",
  .backend = "cpu",
  .applies = D_applies,
  .init = D_init,
  .fini = pirk_y_fini,
  .attempt = D_attempt,
  .traffic = D_traffic,
};

const odb_variant odb_variant_pirk_Dblock = {
  .name = "Dblock",
  .doc = "thesis variant Dblock (k-i-j-l-jj): D with the component loop "
         "tiled, f over a tile into a buffer of B; parameter block (default "
         "1024); PIRK and explicit RK",
  .backend = "cpu",
  .applies = Dblock_applies,
  .init = Dblock_init,
  .fini = pirk_y_fini,
  .attempt = Dblock_attempt,
  .traffic = D_traffic,
};
