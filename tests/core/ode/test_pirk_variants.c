/* test_pirk_variants.c - the general sequential PIRK variants (E, D,
   Dblock, PipeDe2m, PipeDb2m, PipeDb2mt) match variant A; A, E, D and
   Dblock run explicit RK methods and match "plain"; refusals. */
#include "solver_util.h"
#include "tap.h"
#include "pirk_common.h"   /* PIRK_BLOCK_DEFAULT */

#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
** From the same random state (the problem's initial value plus a relative
** perturbation of up to 1e-3), one attempted step of fixed h with each
** variant is compared with variant A: the new state to 1e-13 relative (max
** norm) and the weighted error norm to 1e-13 relative plus its rounding
** floor. The floor: e = dEta^(m) - dEta^(m-1) is a difference of two
** increments that agree in their leading digits (A forms it as
** h sum b_i (F_i^(m) - F_i^(m-1)), the D family as the difference of the
** two sums), and each F_i is evaluated at an argument Y = eta + ... whose
** rounding (eps |eta|) differs between summation orders. So two correct
** variants agree in the estimate only as far as it is insensitive to
** rounding-size changes of its inputs. The test measures that: A's error
** norm from the state perturbed by rounding size (err_floor) moves by
** Delta; allowed is 1e-13 err + 16 Delta + 256 s eps ||h sum |F_i| / sk||.
** When the estimate is many orders below the increment (high order, small
** h) this floor, not 1e-13 err, is what two summation orders can reach.
** h is the step the adaptive controller accepts first (tol 1e-6, variant A
** or plain; dopri5's for rk4) from that state, so that stiff problems stay
** stable. Every registered problem is used at a small size (parameter N).
*/

#define NBLOCKS 4

static const char *const pirk_variants[] = {
  "E", "D", "Dblock", "PipeDe2m", "PipeDb2m", "PipeDb2mt",
};
static const char *const erk_variants[] = { "A", "E", "D", "Dblock" };

/* 1 for the variants with a block parameter. */
static int tiled(const char *v) {
  return strcmp(v, "Dblock") == 0 || strcmp(v, "PipeDb2m") == 0 ||
         strcmp(v, "PipeDb2mt") == 0;
}

/* A small instance of problem type t (N chosen per type), or NULL. */
static odb_problem *small_problem(const odb_problem_type *t) {
  odb_param_value pv = { "N", 100, NULL };
  odb_problem *p = NULL;
  int hasN = 0;
  for (int i = 0; i < t->nparams; ++i)
    if (strcmp(t->params[i].name, "N") == 0) hasN = 1;
  if (strcmp(t->name, "bruss2d") == 0) pv.num = 24;   /* n = 1152, d = 48 */
  if (odb_problem_create(t->name, &pv, hasN, &p) != ODB_OK)
    tap_diag("%s: %s", t->name, odb_last_error());
  return p;
}

/* The perturbed initial state of p (caller frees). */
static double *random_state(const odb_problem *p, odb_rng *rng) {
  double *y = malloc(sizeof(double) * (size_t)p->n);
  p->initial(p, y);
  for (long i = 0; i < p->n; ++i)
    y[i] += 1e-3 * (odb_rng_uniform(rng) - 0.5) * (fabs(y[i]) + 1e-2);
  return y;
}

/* The first step size the controller accepts from y0 (0 on failure). */
static double accepted_h(odb_ctx *ctx, const odb_problem *p,
                         const char *method, const char *variant,
                         const double *y0) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6 };
  odb_solver *s = make_solver(ctx, p, method, variant, &o);
  odb_solve_stats st;
  double h = 0;
  if (!s) return 0;
  odb_solver_set_state(s, p->t0, y0);
  if (odb_solver_step(s, 0, &st) == ODB_OK) h = st.h;
  odb_solver_destroy(s);
  return h;
}

/* One attempt from (t0, y0); the result and error stay in the solver. */
typedef struct result {
  odb_solver *s;
  double err;
  int y_kept;    /* s->y was not changed by the attempt */
} result;

static result attempt(odb_ctx *ctx, const odb_problem *p, const char *method,
                      const char *variant, long block, const double *y0,
                      double h) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6, .block = block };
  result r = { NULL, -1, 0 };
  r.s = make_solver(ctx, p, method, variant, &o);
  if (!r.s) return r;
  odb_solver_set_state(r.s, p->t0, y0);
  if (r.s->variant->attempt(r.s, h, &r.err) != ODB_OK) r.err = -1;
  r.y_kept = memcmp(r.s->y, y0, sizeof(double) * (size_t)p->n) == 0;
  return r;
}

/*
** The rounding floor of the reference's error norm (see the top of the
** file). The rounding of a sum Y = eta + sum a h F is of the size
** eps (|eta| + h sum |F_i|), not eps |Y - eta|, where the F_i are large and
** cancel (oscillatory or stiff components); sc_j = |y_j| + h sum_i |F_i[j]|
** with the F values A left in s->F. A's norm from y + 4 eps sc (random
** signs) moves by Delta; the floor is 16 Delta + 256 s eps ||h sum|F| / sk||.
*/
static double err_floor(odb_ctx *ctx, const odb_problem *p,
                        const char *method, const result *ref,
                        const double *y0, double h, odb_rng *rng) {
  const odb_solver *s = ref->s;
  double sum = 0, *y1 = malloc(sizeof(double) * (size_t)p->n), delta = 0;
  result r;
  for (long j = 0; j < s->n; ++j) {
    double hf = 0, sk = s->opts.atol + s->opts.rtol *
                        fmax(fabs(s->y[j]), fabs(s->ynew[j]));
    for (int i = 0; i < s->method->s; ++i) hf += h * fabs(s->F[i][j]);
    sum += (hf / sk) * (hf / sk);
    y1[j] = y0[j] + 4.0 * DBL_EPSILON * (fabs(y0[j]) + hf) *
                    (odb_rng_uniform(rng) < 0.5 ? -1.0 : 1.0);
  }
  if (s->method->kind == ODB_METHOD_PIRK || s->method->bhat) {
    r = attempt(ctx, p, method, s->variant->name, 0, y1, h);
    if (r.s) delta = fabs(r.err - ref->err);
    odb_solver_destroy(r.s);
  }
  free(y1);
  return 16.0 * delta +
         256.0 * s->method->s * DBL_EPSILON * sqrt(sum / (double)s->n);
}

/* The block sizes to try for n: default, 7, 64, and one not dividing n. */
static void block_sizes(long n, long *b) {
  long nd = n / 3 + 1;
  while (n % nd == 0) ++nd;
  b[0] = 0;
  b[1] = 7;
  b[2] = 64;
  b[3] = nd;
}

/* Compares one variant's attempt with the reference's. */
static void compare(const result *ref, const result *r, double floor,
                    const char *method, const char *variant,
                    const odb_problem *p, double h) {
  double dy, de, tol_e;
  if (!r->s) {
    tap_ok(0, "%s/%s/%s created", p->label, method, variant);
    return;
  }
  dy = rel_maxnorm(r->s->ynew, ref->s->ynew, p->n);
  de = fabs(r->err - ref->err);
  tol_e = 1e-13 * ref->err + floor;
  tap_ok(r->y_kept && r->err >= 0 && dy <= 1e-13 && de <= tol_e,
         "%s %s %s (block %ld) = %s, h %.3g: state %.1e, error norm %.6e vs "
         "%.6e (diff %.1e, allowed %.1e)%s", p->label, method, variant,
         r->s->block, ref->s->variant->name, h, dy, r->err, ref->err, de,
         tol_e, r->y_kept ? "" : ", y CHANGED");
}

/* Every variant against A (PIRK) or plain (ERK) on problem p. */
static void one_problem(odb_ctx *ctx, const odb_problem *p,
                        const odb_method *m, odb_rng *rng) {
  int pirk = m->kind == ODB_METHOD_PIRK;
  const char *refname = pirk ? "A" : "plain";
  const char *const *vars = pirk ? pirk_variants : erk_variants;
  int nvars = pirk ? (int)(sizeof pirk_variants / sizeof *pirk_variants)
                   : (int)(sizeof erk_variants / sizeof *erk_variants);
  double *y0 = random_state(p, rng);   /* rk4 has no estimate: dopri5's h */
  double h = accepted_h(ctx, p, pirk || m->bhat ? m->name : "dopri5",
                        refname, y0);
  long blocks[NBLOCKS];
  double floor;
  result ref;
  block_sizes(p->n, blocks);
  if (!(h > 0)) {
    tap_ok(0, "%s %s: an accepted step from the random state", p->label,
           m->name);
    free(y0);
    return;
  }
  ref = attempt(ctx, p, m->name, refname, 0, y0, h);
  if (!ref.s || ref.err < 0 || !ref.y_kept) {
    tap_ok(0, "%s %s: reference %s step", p->label, m->name, refname);
    odb_solver_destroy(ref.s);
    free(y0);
    return;
  }
  floor = err_floor(ctx, p, m->name, &ref, y0, h, rng);
  for (int v = 0; v < nvars; ++v)
    for (int b = 0; b < (tiled(vars[v]) ? NBLOCKS : 1); ++b) {
      result r = attempt(ctx, p, m->name, vars[v], blocks[b], y0, h);
      compare(&ref, &r, floor, m->name, vars[v], p, h);
      odb_solver_destroy(r.s);
    }
  odb_solver_destroy(ref.s);
  free(y0);
}

/*
** Through the driver: two fixed steps (the second reuses f(t, y) in F[0]
** where the method is FSAL), then an adaptive run to t = 0.05 (the
** initial-step guess leaves f(t0, y0) in F[0] for every method). The
** variant's states equal the reference's to 1e-13 after the fixed steps and
** 1e-12 after the adaptive run with the same accepted and rejected counts.
*/
static void driver_runs(odb_ctx *ctx, const odb_problem *p,
                        const char *method, const char *refname,
                        const char *variant, long block, const double *y0,
                        double h) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6, .block = block };
  odb_solver *a = make_solver(ctx, p, method, refname, &o);
  odb_solver *b = make_solver(ctx, p, method, variant, &o);
  odb_solve_stats sa, sb;
  double diff = 1, diff2 = 1;
  int same = 0, est = odb_method_find(method)->kind == ODB_METHOD_PIRK ||
                      odb_method_find(method)->bhat;
  if (a && b) {
    odb_solver_set_state(a, p->t0, y0);
    odb_solver_set_state(b, p->t0, y0);
    for (int k = 0; k < 2; ++k) {
      odb_solver_step(a, h, &sa);
      odb_solver_step(b, h, &sb);
    }
    diff = rel_maxnorm(b->y, a->y, p->n);
    if (est) {
      odb_solver_set_state(a, p->t0, y0);
      odb_solver_set_state(b, p->t0, y0);
      odb_solver_integrate(a, p->t0 + 0.05, &sa);
      odb_solver_integrate(b, p->t0 + 0.05, &sb);
      diff2 = rel_maxnorm(b->y, a->y, p->n);
      same = sa.status == ODB_OK && sb.status == ODB_OK &&
             sa.accepted == sb.accepted && sa.rejected == sb.rejected;
    }
  }
  tap_ok(diff <= 1e-13 && (!est || (same && diff2 <= 1e-12)),
         "%s %s %s (block %ld): two fixed driver steps = %s (%.1e)%s%.1e, "
         "%ld/%ld steps vs %ld/%ld", p->label, method, variant, block,
         refname, diff, est ? "; adaptive run " : " (no estimate) ", diff2,
         est ? sb.accepted : 0L, est ? sb.rejected : 0L,
         est ? sa.accepted : 0L, est ? sa.rejected : 0L);
  odb_solver_destroy(a);
  odb_solver_destroy(b);
}

/* Pipe* refuse explicit methods; bad names and m are refused with reasons. */
static void refusals(odb_ctx *ctx) {
  static const char *const pipes[] = { "PipeDe2m", "PipeDb2m", "PipeDb2mt" };
  odb_problem *p = make_bruss(8);
  odb_backend *cpu = odb_ctx_backend(ctx, "cpu");
  const odb_method *m = NULL;
  odb_solver *s = NULL;
  odb_solver_opts o = { 0 };
  odb_status st;
  for (int i = 0; i < 3; ++i) {
    st = odb_solver_create(ctx, p, odb_method_find("dopri5"), cpu, pipes[i],
                           NULL, &s);
    tap_ok(st == ODB_ERR_UNSUPPORTED && !s &&
           strstr(odb_last_error(), "pipelines corrector steps") &&
           strstr(odb_last_error(), "use A, E, D, Dblock or fused"),
           "%s refuses dopri5: %s", pipes[i], odb_last_error());
  }
  st = odb_method_lookup("radau9", &m);
  tap_ok(st == ODB_ERR_NAME && !m && strstr(odb_last_error(), "radau1a5") &&
         strstr(odb_last_error(), "radau2a5") &&
         strstr(odb_last_error(), "lobatto3c8") &&
         strstr(odb_last_error(), "gauss4") &&
         strstr(odb_last_error(), "gauss6"),
         "unknown corrector lists the valid names: %s", odb_last_error());
  o.m = -1;
  st = odb_solver_create(ctx, p, odb_method_find("radau1a5"), cpu, "A", &o,
                         &s);
  tap_ok(st == ODB_ERR_ARG && !s && strstr(odb_last_error(), "at least 1"),
         "m = -1 is refused: %s", odb_last_error());
  o.m = 0;
  st = odb_solver_create(ctx, p, odb_method_find("lobatto3c8"), cpu, "D", &o,
                         &s);
  tap_ok(st == ODB_OK && s && s->m == 7 && s->order == 8 && s->err_order == 7,
         "m = 0 in the C options means the default: lobatto3c8 runs m = %d, "
         "order %d", s ? s->m : -1, s ? s->order : -1);
  odb_solver_destroy(s);
  o.m = 2;
  st = odb_solver_create(ctx, p, odb_method_find("radau2a5"), cpu, "Dblock",
                         &o, &s);
  tap_ok(st == ODB_OK && s && s->m == 2 && s->order == 3 &&
         s->block == (p->n < PIRK_BLOCK_DEFAULT ? p->n : PIRK_BLOCK_DEFAULT),
         "m = 2: radau2a5 has order %d; Dblock's default block %ld",
         s ? s->order : -1, s ? s->block : -1L);
  odb_solver_destroy(s);
  st = odb_solver_create(ctx, p, odb_method_find("rk4"), cpu, "D", &o, &s);
  tap_ok(st == ODB_ERR_ARG && !s, "m with an explicit method is refused: %s",
         odb_last_error());
  st = odb_solver_create(ctx, p, odb_method_find("gauss6"), cpu, "auto",
                         NULL, &s);
  tap_ok(st == ODB_OK && s && strcmp(s->variant->name, "A") == 0,
         "auto picks A for a PIRK method (pipe, fused and plain refuse it)");
  odb_solver_destroy(s);
  odb_problem_destroy(p);
}

/* Traffic: positive, and the D family moves less than A for PIRK. */
static void traffic(odb_ctx *ctx) {
  odb_problem *p = make_bruss(64);
  static const char *const v[] = { "A", "E", "D", "Dblock", "PipeDe2m",
                                   "PipeDb2m", "PipeDb2mt" };
  double ra = 0, wa = 0;
  for (int i = 0; i < 7; ++i) {
    odb_solver *s = make_solver(ctx, p, "lobatto3c8", v[i], NULL);
    double r = 0, w = 0;
    if (!s) continue;
    s->variant->traffic(s, 1, &r, &w);
    if (i == 0) { ra = r; wa = w; }
    tap_ok(r > 0 && w > 0 && r + w <= ra + wa,
           "%s: %.1f + %.1f vectors read + written per step (A %.1f + %.1f)",
           v[i], r / (8.0 * p->n), w / (8.0 * p->n), ra / (8.0 * p->n),
           wa / (8.0 * p->n));
    odb_solver_destroy(s);
  }
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  odb_ctx *ctx;
  odb_rng rng;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  odb_rng_seed(&rng, co.seed);
  tap_diag("seed %llu", (unsigned long long)co.seed);
  for (int t = 0; t < odb_problem_type_count(); ++t) {
    odb_problem *p = small_problem(odb_problem_type_at(t));
    if (!p) {
      tap_ok(0, "problem %s created", odb_problem_type_at(t)->name);
      continue;
    }
    tap_diag("%s: n = %ld, d = %ld", p->label, p->n, p->d);
    for (int i = 0; i < odb_method_count(); ++i)
      one_problem(ctx, p, odb_method_at(i), &rng);
    odb_problem_destroy(p);
  }
  {   /* the driver path (FSAL reuse, F[0] left by the initial guess) */
    odb_problem *p = make_bruss(24);
    double *y0 = random_state(p, &rng);
    for (int i = 0; i < odb_method_count(); ++i) {
      const odb_method *m = odb_method_at(i);
      int pirk = m->kind == ODB_METHOD_PIRK;
      const char *const *vars = pirk ? pirk_variants : erk_variants;
      int nv = pirk ? 6 : 4;
      for (int v = 0; v < nv; ++v)
        driver_runs(ctx, p, m->name, pirk ? "A" : "plain", vars[v],
                  tiled(vars[v]) ? 100 : 0, y0, 2e-3);
    }
    free(y0);
    odb_problem_destroy(p);
  }
  refusals(ctx);
  traffic(ctx);
  odb_ctx_destroy(ctx);
  return tap_done();
}
