/* erk_plain.c - variant "plain": one full sweep per stage and operation. */
#include "erk_common.h"

#include <stdio.h>
#include <stdlib.h>

/*
** The straightforward implementation: for each stage a sweep that builds
** the argument vector Y = y + h sum a_li F_i in memory, then a sweep that
** evaluates F_l = f(t + c_l h, Y); then a sweep for the new solution and
** one for the error estimate. Every vector makes a round trip to memory.
** vdata holds the plan, work the argument vector Y (n doubles).
*/

static int plain_applies(const odb_problem *p, const odb_method *m,
                         char *why, size_t nwhy) {
  (void)p;
  if (m->kind == ODB_METHOD_ERK) return 1;
  snprintf(why, nwhy, "plain runs explicit RK methods only; '%s' is a PIRK "
           "corrector (variants A, D and their kin take it)", m->name);
  return 0;
}

static odb_status plain_init(odb_solver *s) {
  erk_plan *plan = malloc(sizeof *plan);
  if (!plan) return ODB_FAIL(ODB_ERR_NOMEM, "plan");
  if (erk_plan_make(s->method, plan) != ODB_OK) {
    free(plan);
    return ODB_ERR_UNSUPPORTED;
  }
  s->vdata = plan;
  s->work_len = (size_t)s->n;
  if (posix_memalign((void **)&s->work, 64, s->work_len * sizeof(double))) {
    s->work = NULL;
    return ODB_FAIL(ODB_ERR_NOMEM, "plain: argument vector of %ld doubles",
                    s->n);
  }
  return ODB_OK;
}

static void plain_fini(odb_solver *s) {
  free(s->vdata);
  free(s->work);
  s->vdata = NULL;
  s->work = NULL;
}

/* out[0..n) = y + h sum t F, in chunks (one pass over memory per vector). */
static void lc_sweep(double *out, const double *y, double *const *F,
                     const erk_terms *t, double h, long n, int nst) {
  const double *Fp[ERK_MAX_STAGES];
  for (long a = 0; a < n; a += ERK_CHUNK) {
    long len = n - a < ERK_CHUNK ? n - a : ERK_CHUNK;
    for (int i = 0; i < nst; ++i) Fp[i] = F[i] + a;
    erk_lc(out + a, y ? y + a : NULL, Fp, t, h, len);
  }
}

static odb_status plain_attempt(odb_solver *s, double h, double *err) {
  const erk_plan *plan = s->vdata;
  const odb_method *m = s->method;
  const odb_problem *p = s->problem;
  long n = s->n;
  double acc = 0.0, *Y = s->work;
  for (int l = 0; l < m->s; ++l) {
    if (l == 0) {
      if (!s->fsal_ready) p->rhs(p, s->t, s->y, 0, s->F[0], 0, n);
      continue;
    }
    lc_sweep(Y, s->y, s->F, &plan->a[l], h, n, l);
    p->rhs(p, s->t + m->c[l] * h, Y, 0, s->F[l], 0, n);
  }
  lc_sweep(s->ynew, s->y, s->F, &plan->b, h, n, m->s);
  if (plan->e.n > 0) {
    lc_sweep(Y, NULL, s->F, &plan->e, h, n, m->s);   /* Y now holds e */
    for (long a = 0; a < n; a += ERK_CHUNK) {
      long len = n - a < ERK_CHUNK ? n - a : ERK_CHUNK;
      erk_norm_acc(Y + a, s->y + a, s->ynew + a, len, s->opts.atol,
                   s->opts.rtol, &acc);
    }
  }
  *err = plan->e.n > 0 ? __builtin_sqrt(acc / (double)n) : 0.0;
  return ODB_OK;
}

/*
** Per stage l >= 1: LC reads y and the F_i with a_li != 0 and writes Y;
** RHS reads Y and writes F_l. Then the new solution (reads y and the F_i
** with b_i != 0, writes ynew) and the estimate (reads the F_i with
** e_i != 0, y and ynew, writes e and reads it back in the norm).
*/
static void plain_traffic(const odb_solver *s, int stage0, double *r,
                          double *w) {
  erk_plain_bytes(s->vdata, (double)s->n * sizeof(double), stage0, r, w);
}

const odb_variant odb_variant_plain = {
  .name = "plain",
  .doc = "straightforward: a full sweep per stage for the argument vector "
         "and one for f; then the new solution and the error estimate",
  .backend = "cpu",
  .applies = plain_applies,
  .init = plain_init,
  .fini = plain_fini,
  .attempt = plain_attempt,
  .traffic = plain_traffic,
};
