/* test_arkode.c - the peer variant "arkode" computes what "plain" computes. */
#include "odb_config.h"
#include "tap.h"

#if !ODB_HAVE_PEERS

/* Built without peers (meson -Dpeers=disabled, the default): nothing to test. */
int main(void) {
  printf("1..0 # SKIP built without peers\n");
  return 0;
}

#else

#include "solver_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
** ARKODE runs our tableau with fixed steps of the h our driver chooses, so
** one step of h must equal plain's to rounding (ARKODE sums the stage terms
** in another order: 1e-12 relative leaves room for that), and an adaptive
** run must take the same steps to the same state. The error estimate
** e = h sum (b_i - bhat_i) F_i is a difference of terms some 10^4..10^6
** times larger than e itself, so another summation order moves its last
** 10 or so digits: it is compared to 1e-8 relative (the rounding of the
** terms, eps * 10^6, with a margin of 20).
*/

/* A perturbed initial state of p (fresh random values, seed printed). */
static double *random_state(const odb_problem *p, odb_rng *rng) {
  double *y = malloc(sizeof(double) * (size_t)p->n);
  p->initial(p, y);
  for (long i = 0; i < p->n; ++i) y[i] += 0.1 * (odb_rng_uniform(rng) - 0.5);
  return y;
}

/* One step of h from the same state with plain and arkode, twice in a row. */
static void one_step(odb_ctx *ctx, const odb_problem *p, const char *method,
                     const double *y0) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6 };
  odb_solver *ref = make_solver(ctx, p, method, "plain", &o);
  odb_solver *s = make_solver(ctx, p, method, "arkode", &o);
  odb_solve_stats a, b;
  double h = 1e-2;
  if (!ref || !s) {
    tap_ok(0, "%s: plain and arkode solvers created", method);
    goto done;
  }
  for (int k = 0; k < 3; ++k) {   /* the second and third continue ARKODE */
    double diff, ediff;
    if (k == 0) {
      odb_solver_set_state(ref, 0.0, y0);
      odb_solver_set_state(s, 0.0, y0);
    }
    odb_solver_step(ref, h * (1 + 0.5 * k), &a);
    odb_solver_step(s, h * (1 + 0.5 * k), &b);
    diff = rel_maxnorm(s->y, ref->y, p->n);
    ediff = fabs(a.err_last - b.err_last) / fmax(a.err_last, 1e-300);
    tap_ok(diff <= 1e-12 && ediff <= 1e-8 && s->t == ref->t,
           "%s step %d (h = %g): arkode = plain to %.1e (error estimate "
           "%.6e vs %.6e, rel. diff %.1e)", method, k + 1,
           h * (1 + 0.5 * k), diff, b.err_last, a.err_last, ediff);
  }
done:
  odb_solver_destroy(s);
  odb_solver_destroy(ref);
}

/*
** An adaptive integration to t = 0.5 with both: same steps, same state. The
** first proposed step (h_next = 0.2; the driver does not read opts.h0) is
** too large, so the runs start with rejections and ARKODE must be reset to
** the unchanged state.
*/
static void adaptive(odb_ctx *ctx, const odb_problem *p, const char *method,
                     const double *y0) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6 };
  odb_solver *ref = make_solver(ctx, p, method, "plain", &o);
  odb_solver *s = make_solver(ctx, p, method, "arkode", &o);
  odb_solve_stats a, b;
  double diff;
  if (!ref || !s) {
    tap_ok(0, "%s: plain and arkode solvers created", method);
    goto done;
  }
  odb_solver_set_state(ref, 0.0, y0);
  odb_solver_set_state(s, 0.0, y0);
  ref->h_next = s->h_next = 0.2;
  if (odb_solver_integrate(ref, 0.5, &a) != ODB_OK ||
      odb_solver_integrate(s, 0.5, &b) != ODB_OK) {
    tap_ok(0, "%s: adaptive runs finish: %s", method, odb_last_error());
    goto done;
  }
  diff = rel_maxnorm(s->y, ref->y, p->n);
  tap_ok(a.accepted == b.accepted && a.rejected == b.rejected &&
         b.rejected > 0 && diff <= 1e-10 && s->t == ref->t,
         "%s: adaptive to t = 0.5 agrees (plain %ld/%ld, arkode %ld/%ld "
         "accepted/rejected, state diff %.1e)", method, a.accepted,
         a.rejected, b.accepted, b.rejected, diff);
  /*
  ** For FSAL methods ARKODE evaluates stage 0 again after a rejection (the
  ** reset) where plain reuses it (after the first accepted step, when the
  ** driver knows F[0] = f(t, y)); otherwise the calls are the same.
  */
  tap_ok(odb_method_find(method)->fsal
             ? b.nfev >= a.nfev && b.nfev <= a.nfev + b.rejected
             : b.nfev == a.nfev,
         "%s: arkode made %ld RHS calls, plain %ld", method, b.nfev, a.nfev);
done:
  odb_solver_destroy(s);
  odb_solver_destroy(ref);
}

/* rk4 (no estimate) runs with fixed steps; PIRK methods do not apply. */
static void edges(odb_ctx *ctx, const odb_problem *p, const double *y0) {
  odb_solver_opts o = { .h_fixed = 5e-3 };
  odb_solver *ref = make_solver(ctx, p, "rk4", "plain", &o);
  odb_solver *s = make_solver(ctx, p, "rk4", "arkode", &o);
  odb_solve_stats a, b;
  const odb_method *pirk = NULL;
  if (ref && s) {
    odb_solver_set_state(ref, 0.0, y0);
    odb_solver_set_state(s, 0.0, y0);
    odb_solver_integrate(ref, 0.1, &a);
    odb_solver_integrate(s, 0.1, &b);
    tap_ok(a.steps == b.steps && rel_maxnorm(s->y, ref->y, p->n) <= 1e-12,
           "rk4 fixed steps: %ld steps, arkode = plain to %.1e", b.steps,
           rel_maxnorm(s->y, ref->y, p->n));
  } else {
    tap_ok(0, "rk4: plain and arkode solvers created");
  }
  odb_solver_destroy(s);
  odb_solver_destroy(ref);
  for (int i = 0; i < odb_method_count(); ++i)
    if (odb_method_at(i)->kind == ODB_METHOD_PIRK) pirk = odb_method_at(i);
  if (pirk) {
    odb_status st = odb_solver_create(ctx, p, pirk, odb_ctx_backend(ctx, "cpu"),
                                      "arkode", NULL, &s);
    tap_ok(st == ODB_ERR_UNSUPPORTED && strstr(odb_last_error(), "PIRK"),
           "arkode refuses the PIRK corrector %s: %s", pirk->name,
           odb_last_error());
    if (st == ODB_OK) odb_solver_destroy(s);
  }
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  const char *methods[] = { "dopri5", "bs3", "verner65", "heun_euler" };
  odb_ctx *ctx;
  odb_problem *p;
  odb_rng rng;
  double *y0;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  odb_rng_seed(&rng, co.seed);
  tap_diag("seed %llu", (unsigned long long)co.seed);
  p = make_bruss(24);
  if (!p) return 1;
  y0 = random_state(p, &rng);
  tap_ok(odb_variant_find("arkode") != NULL, "variant arkode is registered");
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; ++i) {
    one_step(ctx, p, methods[i], y0);
    adaptive(ctx, p, methods[i], y0);
  }
  edges(ctx, p, y0);
  free(y0);
  odb_problem_destroy(p);
  odb_ctx_destroy(ctx);
  return tap_done();
}

#endif
