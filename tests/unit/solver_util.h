/* solver_util.h - helpers shared by the solver tests. */
#ifndef ODB_SOLVER_UTIL_H
#define ODB_SOLVER_UTIL_H

#include "odebench.h"

#include <math.h>
#include <stdio.h>

/* max_i |a_i - b_i| / max_i |b_i|: the relative max-norm error. */
static inline double rel_maxnorm(const double *a, const double *b, long n) {
  double num = 0, den = 0;
  for (long i = 0; i < n; ++i) {
    num = fmax(num, fabs(a[i] - b[i]));
    den = fmax(den, fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

/* Creates bruss2d with grid size N (NULL on failure). */
static inline odb_problem *make_bruss(long N) {
  odb_param_value pv = { "N", (double)N, NULL };
  odb_problem *p = NULL;
  if (odb_problem_create("bruss2d", &pv, 1, &p) != ODB_OK)
    fprintf(stderr, "bruss2d: %s\n", odb_last_error());
  return p;
}

/* Creates a solver or prints why not (NULL on failure). */
static inline odb_solver *make_solver(odb_ctx *ctx, const odb_problem *p,
                                      const char *method, const char *variant,
                                      const odb_solver_opts *o) {
  odb_solver *s = NULL;
  const odb_method *m = odb_method_find(method);
  if (odb_solver_create(ctx, p, m, odb_ctx_backend(ctx, "cpu"), variant, o,
                        &s) != ODB_OK)
    fprintf(stderr, "solver %s/%s: %s\n", method, variant, odb_last_error());
  return s;
}

#endif
