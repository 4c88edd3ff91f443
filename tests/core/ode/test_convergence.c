/* test_convergence.c - each method's observed order on a smooth problem. */
#include "solver_util.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/*
** Euler's equations of a free rigid body (HNW I, problem in II.10):
** y1' = -2 y2 y3, y2' = 1.25 y1 y3, y3' = -0.5 y1 y2, y(0) = (1, 0, 0.9),
** smooth and non-stiff on [0, 10]. For each method the global error at
** t = 10 is measured with fixed steps h, h/2, h/4 against verner65 with
** h = 1/4096; the observed orders log2(e(h) / e(h/2)) must be within 0.3 of
** the nominal order. Step sizes per order keep errors well above rounding
** and inside the asymptotic range.
*/

/* Global error at t = 10 of method m with fixed step h. */
static double error_with(odb_ctx *ctx, const odb_problem *p, const char *m,
                         const char *variant, double h, const double *ref) {
  odb_solver_opts o = { .h_fixed = h };
  odb_solver *s = make_solver(ctx, p, m, variant, &o);
  odb_solve_stats st;
  double e;
  odb_solver_integrate(s, 10.0, &st);
  e = rel_maxnorm(s->y, ref, p->n);
  odb_solver_destroy(s);
  return e;
}

int main(void) {
  odb_ctx_opts co = { .seed = 1 };
  odb_ctx *ctx;
  odb_problem p;
  odb_solver *ref;
  odb_solver_opts fine = { .h_fixed = 1.0 / 4096 };
  odb_solve_stats st;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  make_rigid_body(&p);
  ref = make_solver(ctx, &p, "verner65", "plain", &fine);
  odb_solver_integrate(ref, 10.0, &st);
  for (int i = 0; i < odb_method_count(); ++i) {
    const odb_method *m = odb_method_at(i);
    double h, e1, e2, e3, q1, q2;
    if (m->kind != ODB_METHOD_ERK) continue;   /* PIRK: test_pirk_methods */
    h = m->order <= 2 ? 1.0 / 128 : m->order <= 4 ? 1.0 / 32 : 1.0 / 8;
    e1 = error_with(ctx, &p, m->name, "plain", h, ref->y);
    e2 = error_with(ctx, &p, m->name, "plain", h / 2, ref->y);
    e3 = error_with(ctx, &p, m->name, "plain", h / 4, ref->y);
    q1 = log2(e1 / e2);
    q2 = log2(e2 / e3);
    tap_ok(fabs(q1 - m->order) <= 0.3 && fabs(q2 - m->order) <= 0.3,
           "%s: observed order %.2f, %.2f (nominal %d; errors %.2e %.2e %.2e)",
           m->name, q1, q2, m->order, e1, e2, e3);
  }
  odb_solver_destroy(ref);
  odb_ctx_destroy(ctx);
  return tap_done();
}
