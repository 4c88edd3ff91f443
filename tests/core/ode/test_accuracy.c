/* test_accuracy.c - BRUSS2D N=32 to t=1 with DOPRI5 against a reference. */
#include "solver_util.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/*
** The reference is an independent solution: Verner's 6(5) pair at
** rtol = atol = 1e-13, cross-checked against classic RK4 with a small fixed
** step. DOPRI5 at 1e-10 must match it to 1e-7 relative in the max norm,
** with both variants.
*/
int main(void) {
  odb_ctx_opts co = { .seed = 1 };
  odb_ctx *ctx;
  odb_problem *p;
  odb_solver *ref, *rk4, *s;
  odb_solver_opts tight = { .rtol = 1e-13, .atol = 1e-13 };
  odb_solver_opts fixed = { .h_fixed = 1.0 / 1024 };
  odb_solver_opts o = { .rtol = 1e-10, .atol = 1e-10 };
  const char *variants[] = { "plain", "fused" };
  odb_solve_stats st;
  int ok;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  p = make_bruss(32);
  ref = make_solver(ctx, p, "verner65", "fused", &tight);
  rk4 = make_solver(ctx, p, "rk4", "fused", &fixed);
  ok = odb_solver_integrate(ref, 1.0, &st) == ODB_OK && ref->t == 1.0;
  tap_ok(ok, "reference: verner65 at 1e-13 reached t = 1 (%ld steps)",
         st.accepted);
  ok = odb_solver_integrate(rk4, 1.0, &st) == ODB_OK && st.steps == 1024;
  tap_ok(ok, "cross-check: rk4 with h = 1/1024 reached t = 1 in %ld steps",
         st.steps);
  tap_ok(rel_maxnorm(rk4->y, ref->y, p->n) <= 1e-10,
         "the two references agree to %.2e", rel_maxnorm(rk4->y, ref->y, p->n));
  for (int v = 0; v < 2; ++v) {
    double e;
    s = make_solver(ctx, p, "dopri5", variants[v], &o);
    ok = odb_solver_integrate(s, 1.0, &st) == ODB_OK && s->t == 1.0;
    tap_ok(ok, "dopri5/%s at 1e-10 reached t = 1", variants[v]);
    e = rel_maxnorm(s->y, ref->y, p->n);
    tap_ok(e <= 1e-7, "dopri5/%s matches the reference: %.2e (%ld accepted, "
           "%ld rejected)", variants[v], e, st.accepted, st.rejected);
    tap_ok(st.steps == st.accepted + st.rejected && st.nfev > 0 &&
           st.seconds > 0 && st.rbytes > 0, "dopri5/%s statistics add up",
           variants[v]);
    odb_solver_destroy(s);
  }
  {
    odb_solver_opts bad = { .rtol = 1e-6, .atol = 1e-6 };
    s = make_solver(ctx, p, "rk4", "fused", &bad);
    tap_ok(odb_solver_integrate(s, 1.0, &st) == ODB_ERR_UNSUPPORTED &&
           strstr(odb_last_error(), "give a fixed step"),
           "adaptive rk4 refused: %s", odb_last_error());
    tap_ok(odb_solver_integrate(s, s->t - 1, &st) == ODB_ERR_ARG,
           "t1 before t0 refused: %s", odb_last_error());
    odb_solver_destroy(s);
  }
  odb_solver_destroy(ref);
  odb_solver_destroy(rk4);
  odb_problem_destroy(p);
  odb_ctx_destroy(ctx);
  return tap_done();
}
