/* test_parallel_variants.c - par_* equal a literal PIRK step and "A". */
#include "solver_util.h"
#include "tap.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const par_names[] = {
  "par_A", "par_E", "par_EAblock", "par_D", "par_Dblock", "par_PipeDe2m",
  "par_PipeDb2m", "par_PipeDb2mt",
};
#define NPAR ((int)(sizeof par_names / sizeof par_names[0]))
#define H 1e-2

/* A fallback tableau for a registry without PIRK methods: Radau IA(5) with
   its standard coefficients (the thesis does not print its tableaus). */
#define R6 2.449489742783178098197284
static const double r1a5_c[3] = { 0, (6 - R6) / 10, (6 + R6) / 10 };
static const double r1a5_A[9] = {
  1.0 / 9, (-1 - R6) / 18, (-1 + R6) / 18,
  1.0 / 9, (88 + 7 * R6) / 360, (88 - 43 * R6) / 360,
  1.0 / 9, (88 + 43 * R6) / 360, (88 - 7 * R6) / 360 };
static const double r1a5_b[3] = { 1.0 / 9, (16 + R6) / 36, (16 - R6) / 36 };
static const odb_method local_radau = {
  .name = "radau1a5(test)", .title = "Radau IA(5)", .kind = ODB_METHOD_PIRK,
  .s = 3, .order = 5, .A = r1a5_A, .b = r1a5_b, .c = r1a5_c,
  .m_default = 4 };

/*
** The PIRK step literally as (3.26)-(3.29): F^(0)_l = f(t + c_l h, eta);
** for k = 1..m all Y_l = eta + h sum_i a_li F^(k-1)_i, then all F^(k)_l;
** ynew = eta + h sum b_i F^(m)_i, e = that - h sum b_i F^(m-1)_i. Returns
** the weighted RMS error; *scale gets a bound of its rounding error
** (16 eps max_j |dEta_j| / sk_j).
*/
static double ref_step(const odb_problem *p, const odb_method *me, int m,
                       double t, double h, const double *eta, double *ynew,
                       double atol, double rtol, double *scale) {
  long n = p->n;
  int S = me->s;
  double *F = malloc(sizeof(double) * S * n), *Fo = malloc(sizeof(double) *
                                                            S * n);
  double *Y = malloc(sizeof(double) * S * n), sum = 0, sc = 0;
  for (int l = 0; l < S; ++l)
    p->rhs(p, t + me->c[l] * h, eta, 0, F + l * n, 0, n);
  for (int k = 1; k <= m; ++k) {
    for (int l = 0; l < S; ++l)
      for (long j = 0; j < n; ++j) {
        double acc = 0;
        for (int i = 0; i < S; ++i) acc += me->A[l * S + i] * F[i * n + j];
        Y[l * n + j] = eta[j] + h * acc;
      }
    memcpy(Fo, F, sizeof(double) * S * n);
    for (int l = 0; l < S; ++l)
      p->rhs(p, t + me->c[l] * h, Y + l * n, 0, F + l * n, 0, n);
  }
  for (long j = 0; j < n; ++j) {
    double de = 0, de1 = 0, sk, e;
    for (int i = 0; i < S; ++i) {
      de += me->b[i] * F[i * n + j];
      de1 += me->b[i] * Fo[i * n + j];
    }
    de *= h;
    de1 *= h;
    ynew[j] = eta[j] + de;
    sk = atol + rtol * fmax(fabs(eta[j]), fabs(ynew[j]));
    e = (de - de1) / sk;
    sum += e * e;
    sc = fmax(sc, fabs(de) / sk);
  }
  free(F);
  free(Fo);
  free(Y);
  *scale = 16 * DBL_EPSILON * sc;
  return sqrt(sum / (double)n);
}

/* y0: the initial value plus a random perturbation of 0.1. */
static double *perturbed_start(const odb_problem *p, odb_rng *rng) {
  double *y0 = malloc(sizeof(double) * p->n);
  p->initial(p, y0);
  for (long i = 0; i < p->n; ++i) y0[i] += 0.1 * (odb_rng_uniform(rng) - 0.5);
  return y0;
}

/* One fixed step of variant v with th threads; 1 when it matched. */
static int one_step_matches(odb_ctx *ctx, const odb_problem *p,
                            const odb_method *me, const char *v, int th,
                            long block, const double *y0, const double *yref,
                            double eref, double escale, double *diff) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6, .threads = th,
                        .block = block };
  odb_solver *s = NULL;
  odb_solve_stats st;
  int ok;
  if (odb_solver_create(ctx, p, me, odb_ctx_backend(ctx, "cpu"), v, &o, &s)
      != ODB_OK) {
    fprintf(stderr, "%s: %s\n", v, odb_last_error());
    return 0;
  }
  odb_solver_set_state(s, 0.0, y0);
  ok = odb_solver_step(s, H, &st) == ODB_OK;
  *diff = rel_maxnorm(s->y, yref, p->n);
  ok = ok && *diff <= 1e-13 &&
       fabs(st.err_last - eref) <= 1e-13 * eref + escale;
  if (!ok)
    tap_diag("%s th=%d: state diff %.2e, err %.17g vs %.17g (scale %.1e)", v,
             th, *diff, st.err_last, eref, escale);
  odb_solver_destroy(s);
  return ok;
}

/* Adaptive run to t = 0.1 from y0; fills y and the step counts. */
static int adaptive_run(odb_ctx *ctx, const odb_problem *p,
                        const odb_method *me, const char *v, int th,
                        const double *y0, double *y, long *acc, long *rej) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6, .threads = th };
  odb_solver *s = NULL;
  odb_solve_stats st;
  odb_status rc;
  if (odb_solver_create(ctx, p, me, odb_ctx_backend(ctx, "cpu"), v, &o, &s)
      != ODB_OK)
    return 0;
  odb_solver_set_state(s, 0.0, y0);
  rc = odb_solver_integrate(s, 0.1, &st);
  memcpy(y, s->y, sizeof(double) * p->n);
  *acc = st.accepted;
  *rej = st.rejected;
  odb_solver_destroy(s);
  return rc == ODB_OK;
}

/*
** Every par_* variant with 1, 2 and 3 threads: one step equals the literal
** reference (and "A" when registered) to 1e-13, error estimate included;
** an adaptive run to t = 0.1 equals the sequential "A" (par_A with one
** thread while "A" is missing) in steps and to 1e-13 in the state.
*/
static void one_case(odb_ctx *ctx, const odb_method *me, long N,
                     odb_rng *rng) {
  odb_problem *p = make_bruss(N);
  double *y0 = perturbed_start(p, rng), *yref = malloc(sizeof(double) *
                                                       p->n);
  double *ya = malloc(sizeof(double) * p->n), *yb = malloc(sizeof(double) *
                                                          p->n);
  double eref, escale, diff, worst = 0;
  const char *adapt_ref = odb_variant_find("A") ? "A" : "par_A";
  long acc0, rej0;
  int bad = 0;
  eref = ref_step(p, me, me->m_default, 0.0, H, y0, yref, 1e-6, 1e-6,
                  &escale);
  if (odb_variant_find("A")) {
    bad += !one_step_matches(ctx, p, me, "A", 0, 0, y0, yref, eref, escale,
                             &diff);
    tap_ok(!bad, "%s N=%ld: sequential A equals the literal step (%.1e)",
           me->name, N, diff);
  }
  for (int v = 0; v < NPAR; ++v) {
    bad = 0;
    worst = 0;
    for (int th = 1; th <= 3; ++th) {
      bad += !one_step_matches(ctx, p, me, par_names[v], th, 0, y0, yref,
                               eref, escale, &diff);
      worst = fmax(worst, diff);
    }
    tap_ok(bad == 0, "%s N=%ld: %s with 1, 2, 3 threads equals the literal "
           "PIRK step (max diff %.1e, err %.6g)", me->name, N, par_names[v],
           worst, eref);
  }
  if (!adaptive_run(ctx, p, me, adapt_ref, 1, y0, ya, &acc0, &rej0)) {
    tap_ok(0, "%s N=%ld: adaptive reference run with %s: %s", me->name, N,
           adapt_ref, odb_last_error());
    goto done;
  }
  for (int v = 0; v < NPAR; ++v) {
    long acc, rej;
    bad = 0;
    worst = 0;
    for (int th = 1; th <= 3; ++th) {
      if (!adaptive_run(ctx, p, me, par_names[v], th, y0, yb, &acc, &rej) ||
          acc != acc0 || rej != rej0)
        ++bad;
      worst = fmax(worst, rel_maxnorm(yb, ya, p->n));
    }
    tap_ok(bad == 0 && worst <= 1e-13, "%s N=%ld: adaptive run to 0.1 with "
           "%s (1, 2, 3 threads) equals %s (%ld/%ld steps, diff %.1e)",
           me->name, N, par_names[v], adapt_ref, acc0, rej0, worst);
  }
done:
  free(y0);
  free(yref);
  free(ya);
  free(yb);
  odb_problem_destroy(p);
}

/* Explicit block sizes (1, 7, a whole range) give the same step. */
static void block_sizes(odb_ctx *ctx, const odb_method *me, odb_rng *rng) {
  odb_problem *p = make_bruss(13);
  double *y0 = perturbed_start(p, rng), *yref = malloc(sizeof(double) *
                                                       p->n);
  double eref, escale, diff;
  const char *blocked[] = { "par_EAblock", "par_Dblock", "par_PipeDb2m",
                            "par_PipeDb2mt" };
  long blocks[] = { 1, 7, 1000 };
  eref = ref_step(p, me, me->m_default, 0.0, H, y0, yref, 1e-6, 1e-6,
                  &escale);
  for (int v = 0; v < 4; ++v) {
    int bad = 0;
    for (int k = 0; k < 3; ++k)
      bad += !one_step_matches(ctx, p, me, blocked[v], 2, blocks[k], y0, yref,
                               eref, escale, &diff);
    tap_ok(bad == 0, "%s: %s with blocks 1, 7, 1000 on 2 threads equals the "
           "literal step", me->name, blocked[v]);
  }
  free(y0);
  free(yref);
  odb_problem_destroy(p);
}

/* Same p twice: bit-identical state and error; ERK refused with a reason. */
static void misc(odb_ctx *ctx, const odb_method *me) {
  odb_problem *p = make_bruss(13);
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6, .threads = 2 };
  odb_solver *a = NULL, *b = NULL, *s = NULL;
  odb_solve_stats sa, sb;
  int same;
  odb_solver_create(ctx, p, me, odb_ctx_backend(ctx, "cpu"), "par_D", &o, &a);
  odb_solver_create(ctx, p, me, odb_ctx_backend(ctx, "cpu"), "par_D", &o, &b);
  if (a && b) {
    odb_solver_step(a, H, &sa);
    odb_solver_step(b, H, &sb);
    same = memcmp(a->y, b->y, sizeof(double) * p->n) == 0 &&
           sa.err_last == sb.err_last;
    tap_ok(same, "par_D with 2 threads twice: bit-identical state and "
           "error (%.17g)", sa.err_last);
  }
  odb_solver_destroy(a);
  odb_solver_destroy(b);
  tap_ok(odb_solver_create(ctx, p, odb_method_find("dopri5"),
                           odb_ctx_backend(ctx, "cpu"), "par_A", NULL, &s) ==
             ODB_ERR_UNSUPPORTED && strstr(odb_last_error(), "PIRK"),
         "par_A refuses dopri5: %s", odb_last_error());
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  odb_ctx *ctx;
  odb_rng rng;
  const odb_method *meths[16];
  int nm = 0;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  odb_rng_seed(&rng, co.seed);
  tap_diag("seed %llu, %d cores (3 threads oversubscribe when fewer)",
           (unsigned long long)co.seed, ctx->topo.cores);
  for (int i = 0; i < odb_method_count() && nm < 16; ++i)
    if (odb_method_at(i)->kind == ODB_METHOD_PIRK)
      meths[nm++] = odb_method_at(i);
  if (nm == 0) {
    tap_diag("no PIRK method registered yet: using a local Radau IA(5)");
    meths[nm++] = &local_radau;
  }
  for (int i = 0; i < nm; ++i) {
    one_case(ctx, meths[i], 8, &rng);
    one_case(ctx, meths[i], 13, &rng);
  }
  block_sizes(ctx, meths[nm - 1], &rng);
  misc(ctx, meths[0]);
  odb_ctx_destroy(ctx);
  return tap_done();
}
