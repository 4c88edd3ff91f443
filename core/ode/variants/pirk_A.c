/* pirk_A.c - variants "A" and "E": the F-scheme of the thesis (Fig. 7.2),
   for PIRK correctors and, stage by stage, for explicit RK methods. */
#include "pirk_common.h"

#include <math.h>
#include <stdlib.h>

/*
** Storage (thesis Ch. 7.2.2, F-scheme): the function values F^(cur) and
** F^(prev) (two s x n matrices: s->F and Fprev), one argument vector Y, and
** for A an error vector e; dEta^(m) lives in s->ynew. Working set
** (2s + 4) n doubles. F^(cur) and F^(prev) are swapped (as pointer tables)
** after every corrector step.
** A (k-l-i-j) builds Y one term per full sweep over j ("vector oriented");
** E (k-l-j-i) builds Y in one sweep with the sum over i innermost and fuses
** the j-loops of the step's end. The evaluation F_l = f(Y) stays a sweep of
** its own in both: f_j may read any component of Y, so Y must be complete
** before any f_j is evaluated. (The thesis describes E only in its text,
** with all j-loops fused; for a general f the evaluation cannot be.)
** Explicit RK methods: the stage loop, where stage l's
** argument needs F_0..F_{l-1}; A builds it with one full sweep per nonzero
** a_li (the same sums as "plain", term by term), E in one j-sweep. Stage 0
** reuses s->F[0] under FSAL; F[l] is stage l's value, as in plain.
*/
typedef struct fscheme {
  pirk_mat Fprev;  /* PIRK only */
  double *Y;       /* argument vector (ERK: also the error vector) */
  double *e;       /* A, PIRK: the error vector */
  erk_plan plan;   /* ERK: the nonzero terms */
} fscheme;

/* Frees what fs_init allocated (also after a failed init). */
static void fs_fini(odb_solver *s) {
  fscheme *d = s->vdata;
  if (!d) return;
  pirk_mat_free(&d->Fprev);
  free(d->Y);
  free(d->e);
  free(d);
  s->vdata = NULL;
}

/* Allocates what the F-scheme needs; E's PIRK step needs no e vector. */
static odb_status fs_init(odb_solver *s, const char *name, int need_e) {
  fscheme *d = calloc(1, sizeof *d);
  if (!d) return ODB_FAIL(ODB_ERR_NOMEM, "%s: data", name);
  s->vdata = d;
  s->block = 0;
  ODB_TRY(pirk_check(s, name));
  d->Y = odb_doubles_alloc(s->n);
  if (!d->Y) return ODB_FAIL(ODB_ERR_NOMEM, "%s: argument vector", name);
  if (s->method->kind == ODB_METHOD_ERK)
    return erk_plan_make(s->method, &d->plan);
  ODB_TRY(pirk_mat_alloc(&d->Fprev, s->method->s, s->n, "F^(prev)"));
  if (need_e && !(d->e = odb_doubles_alloc(s->n)))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: error vector", name);
  return ODB_OK;
}

/* A keeps the error vector e; E sums e per component. */
static odb_status A_init(odb_solver *s) { return fs_init(s, "A", 1); }
static odb_status E_init(odb_solver *s) { return fs_init(s, "E", 0); }

/* Any PIRK or explicit RK method with at most PIRK_MAX_STAGES stages. */
static int A_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  (void)p;
  return pirk_applies_any("A", m, why, nwhy);
}

/* As A_applies. */
static int E_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  (void)p;
  return pirk_applies_any("E", m, why, nwhy);
}

/* The predictor's function values F_l^(0) = f(t + c_l h, eta), l < s. */
static void predictor(odb_solver *s, double *const *cur, double h) {
  const odb_problem *p = s->problem;
  for (int l = 0; l < s->method->s; ++l)
    p->rhs(p, s->t + s->method->c[l] * h, s->y, 0, cur[l], 0, s->n);
}

/* {====== A */

/*
** out = base + h sum_q coef_q F_{idx_q} (base NULL: no base term), one
** full sweep per term and one for the base: thesis Fig. 7.2 lines 8-11.
** Sums in index order, so it equals erk_lc's sums.
*/
static void lc_vector(double *restrict out, const double *restrict base,
                      double *const *F, const int *idx, const double *coef,
                      int nt, double h, long n) {
  if (nt == 0) {
    for (long j = 0; j < n; ++j) out[j] = base ? base[j] : 0.0;
    return;
  }
  {
    const double *restrict f = F[idx ? idx[0] : 0];
    double a = coef[0];
    for (long j = 0; j < n; ++j) out[j] = a * f[j];
  }
  for (int q = 1; q < nt; ++q) {
    const double *restrict f = F[idx ? idx[q] : q];
    double a = coef[q];
    for (long j = 0; j < n; ++j) out[j] += a * f[j];
  }
  if (base)
    for (long j = 0; j < n; ++j) out[j] = base[j] + h * out[j];
  else
    for (long j = 0; j < n; ++j) out[j] = h * out[j];
}

/* One PIRK step, thesis Fig. 7.2 (with c_l in line 12, not its typo c_j). */
static double A_pirk(odb_solver *s, fscheme *d, double h) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  int S = me->s;
  long n = s->n;
  double *cur[PIRK_MAX_STAGES], *prev[PIRK_MAX_STAGES];
  double *restrict Y = d->Y, *restrict e = d->e, *restrict de = s->ynew;
  const double *restrict eta = s->y;
  double acc = 0.0;
  for (int l = 0; l < S; ++l) {
    cur[l] = s->F[l];
    prev[l] = d->Fprev.row[l];
  }
  predictor(s, cur, h);
  for (int k = 0; k < s->m; ++k) {
    pirk_swap_rows(cur, prev, S);
    for (int l = 0; l < S; ++l) {
      lc_vector(Y, eta, prev, NULL, me->A + l * S, S, h, n);
      p->rhs(p, s->t + me->c[l] * h, Y, 0, cur[l], 0, n);
    }
  }
  /* dEta^(m) = sum b_i F_i^(m) and e = sum b_i (F_i^(m) - F_i^(m-1)) */
  {
    const double *restrict fc = cur[0], *restrict fp = prev[0];
    double b = me->b[0];
    for (long j = 0; j < n; ++j) {
      de[j] = b * fc[j];
      e[j] = b * (fc[j] - fp[j]);
    }
  }
  for (int i = 1; i < S; ++i) {
    const double *restrict fc = cur[i], *restrict fp = prev[i];
    double b = me->b[i];
    for (long j = 0; j < n; ++j) {
      de[j] += b * fc[j];
      e[j] += b * (fc[j] - fp[j]);
    }
  }
  for (long j = 0; j < n; ++j) {   /* eta_new = eta + h dEta, err of h e */
    de[j] = eta[j] + h * de[j];
    acc += pirk_sq(h * e[j], eta[j], de[j], s->opts.atol, s->opts.rtol);
  }
  return acc;
}

/* One explicit RK step: the stage loop with one sweep per term. */
static double A_erk(odb_solver *s, fscheme *d, double h) {
  const odb_problem *p = s->problem;
  const erk_plan *pl = &d->plan;
  long n = s->n;
  double acc = 0.0;
  if (!s->fsal_ready) p->rhs(p, s->t, s->y, 0, s->F[0], 0, n);
  for (int l = 1; l < pl->s; ++l) {
    lc_vector(d->Y, s->y, s->F, pl->a[l].idx, pl->a[l].coef, pl->a[l].n, h,
              n);
    p->rhs(p, s->t + s->method->c[l] * h, d->Y, 0, s->F[l], 0, n);
  }
  lc_vector(s->ynew, s->y, s->F, pl->b.idx, pl->b.coef, pl->b.n, h, n);
  if (pl->e.n == 0) return 0.0;
  lc_vector(d->Y, NULL, s->F, pl->e.idx, pl->e.coef, pl->e.n, h, n);
  for (long j = 0; j < n; ++j)
    acc += pirk_sq(d->Y[j], s->y[j], s->ynew[j], s->opts.atol, s->opts.rtol);
  return acc;
}

/* The error norm of an explicit method without bhat is 0 (fixed steps). */
static odb_status A_attempt(odb_solver *s, double h, double *err) {
  fscheme *d = s->vdata;
  int est = s->method->kind == ODB_METHOD_PIRK || d->plan.e.n > 0;
  double acc = s->method->kind == ODB_METHOD_PIRK ? A_pirk(s, d, h)
                                                   : A_erk(s, d, h);
  *err = est ? sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

/*
** Bytes of one step of a term-per-sweep linear combination of nt terms
** with a base vector: sweep 0 reads F and writes out; sweeps 1..nt-1 read
** F and out and write out; the base sweep reads base (or nothing) and out
** and writes out. nt == 0 copies the base.
*/
static void lc_vector_traffic(int nt, int base, double v, double *r,
                              double *w) {
  if (nt == 0) {
    *r += v;
    *w += v;
    return;
  }
  *r += v * (1 + 2.0 * (nt - 1) + 1 + base);
  *w += v * (nt + 1);
}

/*
** PIRK: the predictor (s sweeps: read eta, write F_l); per corrector step
** and target l the LC (s terms plus base) and the f sweep (read Y, write
** F_l); the end: sweep 0 reads F_0^(m), F_0^(m-1), writes dEta, e; sweeps
** i >= 1 also read dEta and e; the update reads eta, dEta, e, writes ynew.
** ERK: stage 0 (unless reused), per stage the LC and the f sweep, the new
** solution, the estimate and the norm (reads e, y, ynew).
*/
static void A_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  const fscheme *d = s->vdata;
  int S = s->method->s;
  double v = pirk_vbytes(s), rd = 0, wr = 0;
  if (s->method->kind == ODB_METHOD_PIRK) {
    rd += S * v;
    wr += S * v;
    for (int k = 0; k < s->m; ++k)
      for (int l = 0; l < S; ++l) {
        lc_vector_traffic(S, 1, v, &rd, &wr);
        rd += v;
        wr += v;
      }
    rd += v * (2 + 4.0 * (S - 1) + 3);
    wr += v * (2 + 2.0 * (S - 1) + 1);
  } else {
    const erk_plan *pl = &d->plan;
    if (stage0) { rd += v; wr += v; }
    for (int l = 1; l < S; ++l) {
      lc_vector_traffic(pl->a[l].n, 1, v, &rd, &wr);
      rd += v;
      wr += v;
    }
    lc_vector_traffic(pl->b.n, 1, v, &rd, &wr);
    if (pl->e.n > 0) {
      lc_vector_traffic(pl->e.n, 0, v, &rd, &wr);
      rd += 3 * v;
    }
  }
  *r = rd;
  *w = wr;
}

const odb_variant odb_variant_pirk_A = {
  .name = "A",
  .doc = "thesis variant A (k-l-i-j): F-scheme, vector-oriented; one full "
         "sweep per term of each argument vector, then one for f; PIRK and "
         "explicit RK",
  .backend = "cpu",
  .applies = A_applies,
  .init = A_init,
  .fini = fs_fini,
  .attempt = A_attempt,
  .traffic = A_traffic,
};

/* }====== */

/* {====== E */

/* One PIRK step with the sums over i innermost (k-l-j-i). */
static double E_pirk(odb_solver *s, fscheme *d, double h) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  int S = me->s;
  long n = s->n;
  double *cur[PIRK_MAX_STAGES], *prev[PIRK_MAX_STAGES];
  double *restrict Y = d->Y, *restrict yn = s->ynew;
  const double *restrict eta = s->y;
  double acc = 0.0;
  for (int l = 0; l < S; ++l) {
    cur[l] = s->F[l];
    prev[l] = d->Fprev.row[l];
  }
  predictor(s, cur, h);
  for (int k = 0; k < s->m; ++k) {
    pirk_swap_rows(cur, prev, S);
    for (int l = 0; l < S; ++l) {
      const double *a = me->A + l * S;
      for (long j = 0; j < n; ++j) {
        double sum = a[0] * prev[0][j];
        for (int i = 1; i < S; ++i) sum += a[i] * prev[i][j];
        Y[j] = eta[j] + h * sum;
      }
      p->rhs(p, s->t + me->c[l] * h, Y, 0, cur[l], 0, n);
    }
  }
  for (long j = 0; j < n; ++j) {   /* dEta, e and the update in one sweep */
    double de = me->b[0] * cur[0][j];
    double e = me->b[0] * (cur[0][j] - prev[0][j]);
    for (int i = 1; i < S; ++i) {
      de += me->b[i] * cur[i][j];
      e += me->b[i] * (cur[i][j] - prev[i][j]);
    }
    yn[j] = eta[j] + h * de;
    acc += pirk_sq(h * e, eta[j], yn[j], s->opts.atol, s->opts.rtol);
  }
  return acc;
}

/* sum_q t_q F_{idx_q}[j] in index order (t->n >= 1). */
static inline double terms_at(const erk_terms *t, double *const *F, long j) {
  double sum = t->coef[0] * F[t->idx[0]][j];
  for (int q = 1; q < t->n; ++q) sum += t->coef[q] * F[t->idx[q]][j];
  return sum;
}

/* One explicit RK step: per stage one j-sweep for the argument. */
static double E_erk(odb_solver *s, fscheme *d, double h) {
  const odb_problem *p = s->problem;
  const erk_plan *pl = &d->plan;
  long n = s->n;
  double acc = 0.0;
  if (!s->fsal_ready) p->rhs(p, s->t, s->y, 0, s->F[0], 0, n);
  for (int l = 1; l < pl->s; ++l) {
    const erk_terms *t = &pl->a[l];
    for (long j = 0; j < n; ++j)
      d->Y[j] = t->n ? s->y[j] + h * terms_at(t, s->F, j) : s->y[j];
    p->rhs(p, s->t + s->method->c[l] * h, d->Y, 0, s->F[l], 0, n);
  }
  for (long j = 0; j < n; ++j) {
    s->ynew[j] = pl->b.n ? s->y[j] + h * terms_at(&pl->b, s->F, j) : s->y[j];
    if (pl->e.n > 0)
      acc += pirk_sq(h * terms_at(&pl->e, s->F, j), s->y[j], s->ynew[j],
                     s->opts.atol, s->opts.rtol);
  }
  return acc;
}

/* As A_attempt. */
static odb_status E_attempt(odb_solver *s, double h, double *err) {
  fscheme *d = s->vdata;
  int est = s->method->kind == ODB_METHOD_PIRK || d->plan.e.n > 0;
  double acc = s->method->kind == ODB_METHOD_PIRK ? E_pirk(s, d, h)
                                                   : E_erk(s, d, h);
  *err = est ? sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

/*
** PIRK: the predictor (s sweeps); per corrector step and target one LC
** sweep (reads the s F_i^(prev) and eta, writes Y) and the f sweep; the end
** is one sweep reading F^(m), F^(m-1) and eta and writing ynew.
** ERK: stage 0 (unless reused); per stage the LC sweep (reads y and the
** F_i with a_li != 0, writes Y) and the f sweep; the end reads y and the
** F_i that b or b - bhat needs and writes ynew.
*/
static void E_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  const fscheme *d = s->vdata;
  int S = s->method->s;
  double v = pirk_vbytes(s), rd = 0, wr = 0;
  if (s->method->kind == ODB_METHOD_PIRK) {
    rd += S * v + (double)s->m * S * v * (S + 2) + v * (2 * S + 1);
    wr += S * v + (double)s->m * S * v * 2 + v;
  } else {
    const erk_plan *pl = &d->plan;
    int need[PIRK_MAX_STAGES] = {0}, nneed = 0;
    if (stage0) { rd += v; wr += v; }
    for (int l = 1; l < S; ++l) {
      rd += v * (pl->a[l].n + 2);
      wr += 2 * v;
    }
    for (int q = 0; q < pl->b.n; ++q) need[pl->b.idx[q]] = 1;
    for (int q = 0; q < pl->e.n; ++q) need[pl->e.idx[q]] = 1;
    for (int i = 0; i < S; ++i) nneed += need[i];
    rd += v * (nneed + 1);
    wr += v;
  }
  *r = rd;
  *w = wr;
}

const odb_variant odb_variant_pirk_E = {
  .name = "E",
  .doc = "thesis variant E (k-l-j-i): F-scheme; each argument vector in one "
         "sweep with the stage sum innermost, then one sweep for f; PIRK and "
         "explicit RK",
  .backend = "cpu",
  .applies = E_applies,
  .init = E_init,
  .fini = fs_fini,
  .attempt = E_attempt,
  .traffic = E_traffic,
};

/* }====== */
