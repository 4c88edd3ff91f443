/* test_batches.c - the driver's batches of adaptive attempts with the step
   controller on a device (odb_variant.advance), run on the CPU. */
#include "solver_util.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
** The GPU variants' advance (gpu/ode/odb_gpu_rk.c and the controller the
** generator writes) in C, over the fused variant's attempt, so that the
** driver's side (device_batch in core/ode/odb_solver.c: batch sizes, the state
** and FSAL's F_0 taken over, counts, capped carried across batches, hmin,
** max_steps) runs in CI, where there is no GPU. Attempts take y and ynew
** (and F_0 and F_s-1 under FSAL) in turns by parity; a launch whose parity
** is not the buffer that holds the state is skipped; until an accepted
** attempt has left F_0 in memory a batch is one attempt.
*/
static int launches_seen;   /* launches of the last batch */

/* One attempt of h from the state in buffer par, the fused variant's. */
static odb_status attempt_in(odb_solver *s, double *const buf[2],
                             double *const fb[2], int par, int stage0,
                             double t, double h, double *err) {
  int S = s->method->s;
  s->y = buf[par];
  s->ynew = buf[1 - par];
  if (s->method->fsal) {
    s->F[0] = fb[par];
    s->F[S - 1] = fb[1 - par];
  }
  s->fsal_ready = !stage0;
  s->t = t;
  return odb_variant_fused.attempt(s, h, err);
}

/* The controller's factor (step_factor in core/ode/odb_solver.c). */
static double factor(const odb_solver *s, double err, double cap) {
  if (!(err > 0)) return cap;
  return fmin(cap, fmax(s->opts.fac_min, s->opts.safety *
                        pow(err, -1.0 / (s->err_order + 1))));
}

/* advance on the CPU, as the device runs it (see the file's comment). */
static odb_status cpu_advance(odb_solver *s, odb_advance *v) {
  int S = s->method->s, fsal = s->method->fsal, cur = 0, done = 0;
  int ready = s->fsal_ready, capped = v->capped;
  double *const buf[2] = { s->y, s->ynew };
  double *const fb[2] = { s->F[0], s->F[S - 1] };
  double t = s->t, h_next = s->h_next, h = fmin(h_next, v->t1 - t);
  double err = 0, h_last = 0;
  long att = 0, acc = 0, rej = 0;
  if (fsal && !ready) v->launches = 1;
  launches_seen = v->launches;
  for (int i = 0; i < v->launches && !done; ++i) {
    int par = i % 2;
    if (cur != par) continue;   /* after a rejection */
    ODB_TRY(attempt_in(s, buf, fb, par, i == 0 ? !(fsal && ready) : !fsal,
                       t, h, &err));
    h_last = h;
    ++att;
    if (isfinite(err) && err <= 1.0) {
      t += h;
      cur ^= 1;
      ++acc;
      h_next = h * factor(s, err, capped ? 1.0 : s->opts.fac_max);
      capped = 0;
      if (v->t1 - t < v->t_eps) {
        t = v->t1;
        done = 1;
      } else if (att >= v->max_attempts) {
        done = 1;
      }
    } else {
      ++rej;
      h_next = h * (isfinite(err) ? factor(s, err, 1.0) : s->opts.fac_min);
      capped = 1;
    }
    h = fmin(h_next, v->t1 - t);
    if (!done && h < v->hmin) done = 1;
  }
  s->y = buf[0];
  s->ynew = buf[1];
  s->F[0] = fb[0];
  s->F[S - 1] = fb[1];
  s->fsal_ready = ready;   /* the driver takes it from v */
  v->attempts = att;
  v->accepted = acc;
  v->rejected = rej;
  v->t = t;
  v->h_next = h_next;
  v->h_last = h_last;
  v->err = err;
  v->capped = capped;
  v->swapped = cur;
  v->fsal_ready = fsal && (ready || acc > 0);
  v->first_stage0 = !(fsal && ready);
  return ODB_OK;
}

/* The fused variant with cpu_advance. */
static odb_variant batched(void) {
  odb_variant v = odb_variant_fused;
  v.name = "fused_batched";
  v.advance = cpu_advance;
  v.advance_default = 1;
  return v;
}

/*
** For each method with an estimate, from a random state, with and without
** rejections (a first step far too large and tolerance 1e-9), in two
** integrate calls: the batches take the same accepted and rejected
** attempts as the host's controller on the fused variant and end at the
** same state, last norm and next h bit for bit, with the same f
** evaluations (one more where the host's first attempt reuses the initial
** step's f(t0, y0) and the device evaluates it again).
*/
static void check_same(odb_ctx *ctx, odb_rng *rng, const odb_variant *bv) {
  static const char *const ms[] = { "heun_euler", "bs3", "dopri5",
                                    "verner65" };
  odb_problem *p = make_bruss(17);
  double *y0 = malloc(sizeof(double) * p->n);
  for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + 2 * odb_rng_uniform(rng);
  for (int mi = 0; mi < 4; ++mi)
    for (int c = 0; c < 2; ++c) {
      odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6 };
      odb_solver *a, *b;
      odb_solve_stats sa, sb;
      long na[3] = { 0, 0, 0 }, nb[3] = { 0, 0, 0 };   /* acc, rej, f */
      int ok;
      if (c) {
        o.h0 = 0.2;
        o.rtol = o.atol = 1e-9;
      }
      a = make_solver(ctx, p, ms[mi], "fused", &o);
      b = make_solver(ctx, p, ms[mi], "fused", &o);
      ok = a && b && odb_solver_set_variant_to(b, bv, 0, 0) == ODB_OK;
      if (ok) {
        odb_solver_set_state(a, 0.0, y0);
        odb_solver_set_state(b, 0.0, y0);
      }
      for (int k = 0; ok && k < 2; ++k) {   /* two calls: 0.05, then 0.3 */
        double t1 = k ? 0.3 : 0.05;
        ok = odb_solver_integrate(a, t1, &sa) == ODB_OK &&
             odb_solver_integrate(b, t1, &sb) == ODB_OK;
        na[0] += sa.accepted;
        na[1] += sa.rejected;
        na[2] += sa.nfev;
        nb[0] += sb.accepted;
        nb[1] += sb.rejected;
        nb[2] += sb.nfev;
      }
      /* without h0, the host's first attempt takes F_0 from the initial
         step's guess; the device's (and this stand-in's) evaluates it
         again unless the method is FSAL */
      na[2] += !c && !odb_method_find(ms[mi])->fsal;
      tap_ok(ok && memcmp(na, nb, sizeof na) == 0 &&
                 sa.err_last == sb.err_last && sa.t == sb.t &&
                 memcmp(a->y, b->y, sizeof(double) * p->n) == 0 &&
                 a->h_next == b->h_next,
             "batches %s%s: %ld accepted, %ld rejected, %ld f evaluations as "
             "the host's controller (%ld, %ld, %ld), the same state, last "
             "norm and next h bit for bit%s%s", ms[mi],
             c ? " (h0 0.2, tol 1e-9)" : "", nb[0], nb[1], nb[2], na[0],
             na[1], na[2], ok ? "" : ": ", ok ? "" : odb_last_error());
      odb_solver_destroy(a);
      odb_solver_destroy(b);
    }
  free(y0);
  odb_problem_destroy(p);
}

/*
** The batches' sizes: the first 16 (FSAL: 1 until F_0 is in memory), then
** doubling, each cut to the attempts the rest of the span needs plus an
** eighth and two; max_steps stops after that many attempts; hmin is met
** after a rejection; sync = step keeps the host's controller (no batch).
*/
static void check_limits(odb_ctx *ctx, const odb_variant *bv) {
  odb_problem *p = make_bruss(9);
  odb_solver_opts o = { .h0 = 1e-3 };
  odb_solver *s = make_solver(ctx, p, "verner65", "fused", &o);
  odb_solve_stats st;
  odb_status r;
  int ok = s && odb_solver_set_variant_to(s, bv, 0, 0) == ODB_OK;
  launches_seen = 0;
  if (ok) {   /* h grows (fac_max 5): the span ends within one batch */
    r = odb_solver_integrate(s, 3.5e-3, &st);
    ok = r == ODB_OK && launches_seen == 7;   /* 4 + 1 + 2 */
  }
  tap_ok(ok, "a batch is the span's attempts at h plus an eighth and two "
         "(7 launches for a span of 3.5 h; saw %d)", launches_seen);
  odb_solver_destroy(s);
  o.h0 = 1e-4;
  o.max_steps = 20;
  s = make_solver(ctx, p, "verner65", "fused", &o);
  ok = s && odb_solver_set_variant_to(s, bv, 0, 0) == ODB_OK;
  r = ok ? odb_solver_integrate(s, 10.0, &st) : ODB_ERR_INTERNAL;
  tap_ok(r == ODB_ERR_MAX_STEPS && st.steps == 20 && launches_seen <= 32,
         "max_steps 20 stops the batches after 20 attempts (%ld; last batch "
         "%d launches): %s", st.steps, launches_seen, odb_last_error());
  odb_solver_destroy(s);
  memset(&o, 0, sizeof o);
  o.h0 = 2.0;
  o.hmin = 1.0;
  s = make_solver(ctx, p, "dopri5", "fused", &o);
  ok = s && odb_solver_set_variant_to(s, bv, 0, 0) == ODB_OK;
  r = ok ? odb_solver_integrate(s, 5.0, &st) : ODB_ERR_INTERNAL;
  tap_ok(r == ODB_ERR_STEP_SIZE && strstr(odb_last_error(), "below hmin") &&
         launches_seen == 1,
         "hmin 1 after a rejected first attempt of 2 (FSAL: a batch of 1): "
         "%s", odb_last_error());
  odb_solver_destroy(s);
  memset(&o, 0, sizeof o);
  o.sync = ODB_SYNC_STEP;
  s = make_solver(ctx, p, "bs3", "fused", &o);
  ok = s && odb_solver_set_variant_to(s, bv, 0, 0) == ODB_OK;
  launches_seen = 0;
  r = ok ? odb_solver_integrate(s, 0.1, &st) : ODB_ERR_INTERNAL;
  tap_ok(r == ODB_OK && launches_seen == 0 && st.accepted > 0,
         "sync = step: the host's controller, no batch (%ld steps)",
         st.accepted);
  odb_solver_destroy(s);
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  odb_ctx *ctx;
  odb_rng rng;
  odb_variant bv = batched();
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  odb_rng_seed(&rng, co.seed);
  tap_diag("seed %llu", (unsigned long long)co.seed);
  check_same(ctx, &rng, &bv);
  check_limits(ctx, &bv);
  odb_ctx_destroy(ctx);
  return tap_done();
}
