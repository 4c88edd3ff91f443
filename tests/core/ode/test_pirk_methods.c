/* test_pirk_methods.c - each PIRK method's observed order, and adaptive
   PIRK integration against a tight explicit RK reference. */
#include "solver_util.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/*
** Euler's equations of a free rigid body (HNW I, problem in II.10), as in
** test_convergence.c: y1' = -2 y2 y3, y2' = 1.25 y1 y3, y3' = -0.5 y1 y2,
** y(0) = (1, 0, 0.9), smooth and non-stiff on [0, 10]. For each corrector
** the global error at t = 10 is measured with fixed steps h, h/2, h/4
** against verner65 with h = 1/4096; the observed orders log2(e(h)/e(h/2))
** must be within 0.3 of min(p, m + 1): p with the default m = p - 1, and 3
** for radau2a5 with m = 2. The step sizes keep the errors well above
** rounding (> 1e-12) and inside the asymptotic range: h = 1/8 for p <= 5,
** 1/4 for p = 6 and for m = 2, 1/2 for Lobatto IIIC(8), which converges
** fast. (Radau IA(5) and IIA(5) show nearly the same errors here, which
** suggests that with m = p - 1 the leading error comes from truncating the
** iteration, which is the same for both, rather than from the corrector.)
*/

/* Global error at t = 10 with fixed step h and m corrector steps (0: p-1). */
static double error_with(odb_ctx *ctx, const odb_problem *p, const char *m,
                         const char *variant, int msteps, double h,
                         const double *ref) {
  odb_solver_opts o = { .h_fixed = h, .m = msteps };
  odb_solver *s = make_solver(ctx, p, m, variant, &o);
  odb_solve_stats st;
  double e;
  if (!s) return NAN;
  odb_solver_integrate(s, 10.0, &st);
  e = st.status == ODB_OK ? rel_maxnorm(s->y, ref, p->n) : NAN;
  odb_solver_destroy(s);
  return e;
}

/* One observed-order check; h0 the largest of the three steps. */
static void order_check(odb_ctx *ctx, const odb_problem *p, const char *m,
                        const char *variant, int msteps, int expect,
                        double h0, const double *ref) {
  double e1 = error_with(ctx, p, m, variant, msteps, h0, ref);
  double e2 = error_with(ctx, p, m, variant, msteps, h0 / 2, ref);
  double e3 = error_with(ctx, p, m, variant, msteps, h0 / 4, ref);
  double q1 = log2(e1 / e2), q2 = log2(e2 / e3);
  tap_ok(fabs(q1 - expect) <= 0.3 && fabs(q2 - expect) <= 0.3 && e3 > 1e-12,
         "%s (m = %d, %s): observed order %.2f, %.2f (expected %d; errors "
         "%.2e %.2e %.2e at h = %g, %g, %g)", m, msteps ? msteps
         : odb_method_find(m)->m_default, variant, q1, q2, expect, e1, e2, e3,
         h0, h0 / 2, h0 / 4);
}

/*
** BRUSS2D (N = 16) to t = 1 adaptively at tol 1e-8 with every corrector
** (variants A and D) against verner65 at tol 1e-12: the relative max-norm
** difference must lie between 1e-12 and 1e-6 (an integration that is
** accurate, but is not the reference itself), the step count must be
** sensible, and the two variants must take the same steps.
*/
static void adaptive_bruss(odb_ctx *ctx) {
  odb_problem *p = make_bruss(16);
  odb_solver_opts tight = { .rtol = 1e-12, .atol = 1e-12 };
  odb_solver_opts o = { .rtol = 1e-8, .atol = 1e-8 };
  odb_solver *ref = make_solver(ctx, p, "verner65", "plain", &tight);
  odb_solve_stats st;
  odb_solver_integrate(ref, 1.0, &st);
  tap_ok(st.status == ODB_OK, "verner65 reference at tol 1e-12: %ld steps",
         st.accepted);
  for (int i = 0; i < odb_method_count(); ++i) {
    const odb_method *m = odb_method_at(i);
    odb_solve_stats sa, sd;
    odb_solver *a, *d;
    double ea, ed;
    if (m->kind != ODB_METHOD_PIRK) continue;
    a = make_solver(ctx, p, m->name, "A", &o);
    d = make_solver(ctx, p, m->name, "D", &o);
    if (!a || !d) {
      tap_ok(0, "%s: solvers created", m->name);
      odb_solver_destroy(a);
      odb_solver_destroy(d);
      continue;
    }
    odb_solver_integrate(a, 1.0, &sa);
    odb_solver_integrate(d, 1.0, &sd);
    ea = rel_maxnorm(a->y, ref->y, p->n);
    ed = rel_maxnorm(d->y, ref->y, p->n);
    tap_ok(sa.status == ODB_OK && sa.t == 1.0 && ea >= 1e-12 && ea <= 1e-6 &&
           sa.accepted > 1 && sa.accepted < 2000 &&
           sa.nfev == (long)sa.steps * (a->m + 1) * m->s + 2,
           "%s (m = %d): bruss2d(N=16) to t = 1 at tol 1e-8 differs from "
           "verner65 by %.2e (%ld accepted, %ld rejected, %ld evaluations)",
           m->name, a->m, ea, sa.accepted, sa.rejected, sa.nfev);
    tap_ok(sd.status == ODB_OK && sd.accepted == sa.accepted &&
           sd.rejected == sa.rejected && fabs(ed - ea) <= 1e-12,
           "%s: variant D takes the same %ld/%ld steps (difference to A %.1e)",
           m->name, sd.accepted, sd.rejected, rel_maxnorm(d->y, a->y, p->n));
    odb_solver_destroy(a);
    odb_solver_destroy(d);
  }
  odb_solver_destroy(ref);
  odb_problem_destroy(p);
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
    double h = m->order >= 8 ? 0.5 : m->order >= 6 ? 0.25 : 0.125;
    if (m->kind != ODB_METHOD_PIRK) continue;
    order_check(ctx, &p, m->name, "A", 0, m->order, h, ref->y);
  }
  order_check(ctx, &p, "radau2a5", "A", 2, 3, 0.25, ref->y);
  order_check(ctx, &p, "radau2a5", "D", 2, 3, 0.25, ref->y);
  odb_solver_destroy(ref);
  adaptive_bruss(ctx);
  odb_ctx_destroy(ctx);
  return tap_done();
}
