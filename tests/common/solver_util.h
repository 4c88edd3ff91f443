/* solver_util.h - helpers shared by the solver tests. */
#ifndef ODB_SOLVER_UTIL_H
#define ODB_SOLVER_UTIL_H

#include "odebench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/*
** Euler's equations of a free rigid body (HNW I, II.10): y1' = -2 y2 y3,
** y2' = 1.25 y1 y3, y3' = -0.5 y1 y2, y(0) = (1, 0, 0.9); smooth and
** non-stiff on [0, 10]. n = d = 3, so y is always the full vector.
*/
static inline void rigid_rhs(const odb_problem *p, double t, const double *y,
                             long yoff, double *f, long j0, long j1) {
  double g[3];
  (void)p; (void)t; (void)yoff;
  g[0] = -2.0 * y[1] * y[2];
  g[1] = 1.25 * y[0] * y[2];
  g[2] = -0.5 * y[0] * y[1];
  for (long j = j0; j < j1; ++j) f[j - j0] = g[j];
}

static inline void rigid_initial(const odb_problem *p, double *y) {
  (void)p;
  y[0] = 1.0; y[1] = 0.0; y[2] = 0.9;
}

/* Fills p with the rigid-body problem (not registered; for order tests). */
static inline void make_rigid_body(odb_problem *p) {
  static const odb_problem_type rigid_type = { .name = "rigid_body" };
  memset(p, 0, sizeof *p);
  p->type = &rigid_type;
  p->n = 3;
  p->d = 3;
  p->t1 = 10;
  p->rhs = rigid_rhs;
  p->initial = rigid_initial;
  snprintf(p->label, sizeof p->label, "rigid_body");
}

#endif
