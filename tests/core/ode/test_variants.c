/* test_variants.c - the fused, pipe and pipe_threads variants match the
   plain one, every method. */
#include "solver_util.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
** BRUSS2D's initial value with every component moved by up to 0.05: a
** fresh random state (free with free).
*/
static double *random_state(const odb_problem *p, odb_rng *rng) {
  double *y0 = malloc(sizeof(double) * p->n);
  p->initial(p, y0);
  for (long i = 0; i < p->n; ++i) y0[i] += 0.1 * (odb_rng_uniform(rng) - 0.5);
  return y0;
}

/* One step of h from y0 with ref; its error estimate. */
static double ref_step(odb_solver *ref, const double *y0, double h) {
  odb_solve_stats st;
  odb_solver_set_state(ref, 0.0, y0);
  odb_solver_step(ref, h, &st);
  return st.err_last;
}

/*
** From the same random state, one step of h with plain and with variant v
** (fused or pipe; several block sizes, including ones that do not divide n
** and ones smaller than the access distance, which pipe raises to it) must
** agree to 1e-13 relative, error estimate included; so must a short
** adaptive integration. BRUSS2D N = 24 has n = 1152 and d = 48, so pipe's
** smallest blocks give 24 blocks and every stage's ring wraps.
*/
static void one_method(odb_ctx *ctx, const char *method, const char *v,
                       odb_rng *rng) {
  odb_problem *p = make_bruss(24);
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6 };
  odb_solver *ref = make_solver(ctx, p, method, "plain", &o), *s;
  long blocks[] = { 0, 2, 50, 100, 1000, 1152, -64 };   /* < 0: streaming */
  double *y0 = random_state(p, rng), e_ref = ref_step(ref, y0, 1e-2), e;
  odb_solve_stats st;
  for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; ++k) {
    double diff;
    o.block = blocks[k] < 0 ? -blocks[k] : blocks[k];
    o.streaming = blocks[k] < 0 ? 1 : -1;
    s = make_solver(ctx, p, method, v, &o);
    if (!s) { tap_ok(0, "%s %s created", method, v); continue; }
    odb_solver_set_state(s, 0.0, y0);
    odb_solver_step(s, 1e-2, &st);
    e = st.err_last;
    diff = rel_maxnorm(s->y, ref->y, p->n);
    tap_ok(diff <= 1e-13 && fabs(e - e_ref) <= 1e-13 * fmax(fabs(e_ref), 1e-300),
           "%s: %s (block %ld%s) = plain after one step (state %.1e, "
           "error estimate %.3e vs %.3e)", method, v, s->block,
           o.streaming > 0 && strcmp(v, "fused") == 0 ? ", streaming stores"
                                                       : "", diff, e, e_ref);
    odb_solver_destroy(s);
  }
  if (odb_method_find(method)->bhat) {
    odb_solve_stats a, b;
    o.block = 0;
    o.streaming = 1;
    s = make_solver(ctx, p, method, v, &o);
    odb_solver_set_state(ref, 0.0, y0);
    odb_solver_set_state(s, 0.0, y0);
    odb_solver_integrate(ref, 0.5, &a);
    odb_solver_integrate(s, 0.5, &b);
    tap_ok(a.accepted == b.accepted && a.rejected == b.rejected &&
           rel_maxnorm(s->y, ref->y, p->n) <= 1e-12,
           "%s: %s and plain adaptive runs agree (%ld/%ld steps, diff "
           "%.1e)", method, v, b.accepted, b.rejected,
           rel_maxnorm(s->y, ref->y, p->n));
    odb_solver_destroy(s);
  }
  free(y0);
  odb_solver_destroy(ref);
  odb_problem_destroy(p);
}

/*
** pipe_threads on 1..4 threads (BRUSS2D N = 24, n = 1152: slabs of 288 to
** 1152, shorter than the (s-1) d = 288 stage 0 reaches beyond them on 4):
** one step from a random state equals plain's bit for bit, its error
** estimate to 1e-13 relative (the members' shares are added in member
** order); ten fixed steps, the first without F_0 from the step before
** (each member computes its slab of f(y), then a barrier), bit for bit.
*/
static void check_threads(odb_ctx *ctx, const char *method, odb_rng *rng) {
  odb_problem *p = make_bruss(24);
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6 };
  odb_solver *ref = make_solver(ctx, p, method, "plain", &o), *s;
  double *y0 = random_state(p, rng), e_ref = ref_step(ref, y0, 1e-2);
  odb_solve_stats st;
  for (int th = 1; th <= 4; ++th) {
    odb_solver_opts ot = o;
    double d1, d10, e;
    ot.threads = th;
    ot.block = th == 3 ? 100 : 0;
    s = make_solver(ctx, p, method, "pipe_threads", &ot);
    if (!s) { tap_ok(0, "%s pipe_threads created", method); continue; }
    odb_solver_set_state(s, 0.0, y0);
    odb_solver_step(s, 1e-2, &st);
    e = st.err_last;
    d1 = rel_maxnorm(s->y, ref->y, p->n);
    odb_solver_set_state(s, 0.0, y0);
    odb_solver_set_state(ref, 0.0, y0);
    for (int k = 0; k < 10; ++k) {
      odb_solver_step(s, 1e-3, &st);
      odb_solver_step(ref, 1e-3, &st);
    }
    d10 = rel_maxnorm(s->y, ref->y, p->n);
    tap_ok(d1 == 0 && d10 == 0 &&
               fabs(e - e_ref) <= 1e-13 * fmax(fabs(e_ref), 1e-300),
           "%s: pipe_threads on %d threads (block %ld) = plain: one step "
           "%.1e, ten steps %.1e, estimate %.3e vs %.3e", method, th,
           s->block, d1, d10, e, e_ref);
    odb_solver_destroy(s);
    ref_step(ref, y0, 1e-2);
  }
  free(y0);
  odb_solver_destroy(ref);
  odb_problem_destroy(p);
}

/*
** Fixed steps with sync = call (the norm and the state's check after a
** call's last step only) end where sync = step does, bit for bit, with the
** last step's norm; a NaN in the state is still found, at the call's end,
** with a message that says so; sync = call without h (the step controller
** on the device) on a CPU variant, and a bad mode, are refused.
*/
static void check_sync(odb_ctx *ctx, odb_rng *rng) {
  odb_problem *p = make_bruss(9);
  odb_solver_opts o = { .h_fixed = 1e-3 }, oc = { .h_fixed = 1e-3,
                                                  .sync = ODB_SYNC_CALL };
  odb_solver *a = make_solver(ctx, p, "dopri5", "fused", &o);
  odb_solver *b = make_solver(ctx, p, "dopri5", "fused", &oc), *c = NULL;
  double *y0 = malloc((size_t)p->n * sizeof(double));
  double *ya = malloc((size_t)p->n * sizeof(double));
  double *yb = malloc((size_t)p->n * sizeof(double));
  odb_solve_stats sa, sb;
  int ok;
  for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + odb_rng_uniform(rng);
  odb_solver_set_state(a, 0.0, y0);
  odb_solver_set_state(b, 0.0, y0);
  ok = odb_solver_integrate(a, 10e-3, &sa) == ODB_OK &&
       odb_solver_integrate(b, 10e-3, &sb) == ODB_OK &&
       odb_solver_get_state(a, ya) == ODB_OK &&
       odb_solver_get_state(b, yb) == ODB_OK;
  tap_ok(ok && memcmp(ya, yb, (size_t)p->n * sizeof(double)) == 0 &&
         sa.steps == 10 && sb.steps == 10 && sa.err_last == sb.err_last &&
         sb.err_last > 0,
         "sync = call: 10 fixed steps equal sync = step's bit for bit, last "
         "norm %.3e vs %.3e", sb.err_last, sa.err_last);
  y0[p->n / 2] = NAN;
  odb_solver_set_state(b, 0.0, y0);
  ok = odb_solver_integrate(b, 10e-3, &sb) == ODB_ERR_NONFINITE;
  tap_ok(ok && strstr(odb_last_error(), "sync = call checks once a call"),
         "sync = call: a NaN is found at the call's end: %s",
         odb_last_error());
  o.h_fixed = 0;
  o.sync = ODB_SYNC_CALL;
  tap_ok(odb_solver_create(ctx, p, odb_method_find("dopri5"),
                           odb_ctx_backend(ctx, "cpu"), "fused", &o, &c)
             == ODB_ERR_UNSUPPORTED &&
             strstr(odb_last_error(), "needs the step controller on the "
                                      "device, which variant 'fused'"),
         "sync = call without h (adaptive) is refused on the CPU: %s",
         odb_last_error());
  o.sync = 7;
  tap_ok(odb_solver_create(ctx, p, odb_method_find("dopri5"),
                           odb_ctx_backend(ctx, "cpu"), "fused", &o, &c)
             == ODB_ERR_ARG && strstr(odb_last_error(), "sync must be"),
         "sync = 7 is refused: %s", odb_last_error());
  free(y0);
  free(ya);
  free(yb);
  odb_solver_destroy(a);
  odb_solver_destroy(b);
  odb_problem_destroy(p);
}

/*
** Steps that cannot make progress end with an error: a fixed step below
** half the spacing of doubles at t (t + h rounds to t), and threads past
** the machine's limit; a non-finite component in the middle of the state
** (which the per-step check of the ends does not see) fails integrate at
** the end of the call.
*/
static void check_refusals(odb_ctx *ctx) {
  odb_problem *p = make_bruss(24);   /* d = 2N: the NaN stays off the ends */
  int ok;
  odb_solver_opts o;
  odb_solver *s;
  odb_solve_stats info;
  double *y;
  odb_status st;
  int hw, lim = odb_team_max_threads(&hw);
  if (!p) return;
  memset(&o, 0, sizeof o);
  s = make_solver(ctx, p, "rk4", "plain", &o);
  y = malloc((size_t)p->n * sizeof *y);
  if (!s || !y) goto done;
  odb_solver_get_state(s, y);
  odb_solver_set_state(s, 1.0, y);
  st = odb_solver_step(s, 1e-17, &info);
  tap_ok(st == ODB_ERR_STEP_SIZE && s->t == 1.0 && info.steps == 0 &&
             strstr(odb_last_error(), "step size 1e-17 does not advance t = "
                    "1 (t + h rounds to t)"),
         "a fixed step that does not advance t: ODB_ERR_STEP_SIZE before f "
         "runs (%s)", odb_last_error());
  tap_ok(odb_solver_step(s, 1e-3, &info) == ODB_OK && s->t == 1.0 + 1e-3,
         "a step that advances t still runs");
  y[p->n / 2] = NAN;
  odb_solver_set_state(s, 0.0, y);
  s->opts.h_fixed = 1e-3;
  st = odb_solver_integrate(s, 1e-3, &info);
  {   /* the first non-finite component: within the NaN's reach, not an end */
    const char *e = strstr(odb_last_error(), "non-finite: component ");
    long k = e ? strtol(e + 22, NULL, 10) : 0;
    ok = k > 1 && k < p->n && k <= p->n / 2 + 1;
  }
  tap_ok(st == ODB_ERR_NONFINITE && ok && info.status == st,
         "a NaN in the middle of the state fails integrate (%s)",
         odb_last_error());
  odb_solver_destroy(s);
  o.threads = lim + 1;
  s = NULL;
  tap_ok(odb_solver_create(ctx, p, odb_method_find("dopri5"),
                           odb_ctx_backend(ctx, "cpu"), "plain", &o, &s)
             == ODB_ERR_ARG && !s &&
         strstr(odb_last_error(), "the most this machine takes"),
         "threads past %d (4 x %d hardware threads) refused: %s", lim, hw,
         odb_last_error());
done:
  free(y);
  odb_solver_destroy(s);
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  odb_ctx *ctx;
  odb_problem *p;
  odb_solver *s;
  odb_rng rng;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  odb_rng_seed(&rng, co.seed);
  tap_diag("seed %llu", (unsigned long long)co.seed);
  for (int i = 0; i < odb_method_count(); ++i)   /* explicit RK methods */
    if (odb_method_at(i)->kind == ODB_METHOD_ERK) {
      for (int k = 0; k < 2; ++k)
        one_method(ctx, odb_method_at(i)->name, k ? "pipe" : "fused", &rng);
      check_threads(ctx, odb_method_at(i)->name, &rng);
    }
  check_sync(ctx, &rng);
  check_refusals(ctx);
  p = make_bruss(8);
  tap_ok(odb_solver_create(ctx, p, odb_method_find("dopri5"),
                           odb_ctx_backend(ctx, "cpu"), "fancy", NULL, &s)
             == ODB_ERR_NAME &&
         strstr(odb_last_error(), "valid: auto, pipe, fused, plain, pipe_threads"),
         "unknown variant lists valid names: %s", odb_last_error());
  tap_ok(odb_solver_create(ctx, p, odb_method_find("dopri5"),
                           odb_ctx_backend(ctx, "cpu"), "auto", NULL, &s)
             == ODB_OK && strcmp(s->variant->name, "pipe") == 0,
         "auto picks pipe for bruss2d");
  odb_solver_destroy(s);
  odb_problem_destroy(p);
  odb_ctx_destroy(ctx);
  return tap_done();
}
