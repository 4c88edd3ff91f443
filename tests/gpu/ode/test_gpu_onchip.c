/* test_gpu_onchip.c - gpu_onchip (gpu/ode/odb_gpu_onchip.c) against
   gpu_reference (fixed steps) and gpu_stream2d (adaptive, the controller on
   the device), with the stages in shared and in global memory, on odd
   grids whose bands have unequal heights (TAP; exit 77 without a GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "odebench.h"
#include "odb_kernels.h"

static odb_ctx *ctx;
static odb_backend *gpu;

static odb_problem *bruss(long N) {
  odb_param_value v = { .name = "N", .num = (double)N, .str = NULL };
  odb_problem *p = NULL;
  if (odb_problem_create("bruss2d", &v, 1, &p) != ODB_OK) {
    printf("Bail out! bruss2d(N=%ld): %s\n", N, odb_last_error());
    exit(1);
  }
  return p;
}

/* A solver on the device, place (NULL: the variant's choice) given to
   gpu_onchip; NULL with the reason in odb_last_error. */
static odb_solver *solver(odb_problem *p, const char *method,
                          const char *variant, const char *place,
                          const odb_solver_opts *base) {
  odb_solver_opts o;
  odb_param_value v = { .name = "place", .str = place };
  odb_solver *s = NULL;
  if (base) o = *base;
  else memset(&o, 0, sizeof o);
  if (place) {
    o.vopts = &v;
    o.nvopts = 1;
  }
  if (odb_solver_create(ctx, p, odb_method_find(method), gpu, variant, &o,
                        &s) != ODB_OK)
    return NULL;
  return s;
}

/* The solver's state on the host (malloc'd). */
static double *state(odb_solver *s) {
  double *y = malloc((size_t)s->n * sizeof(double));
  if (odb_backend_sync(s->backend) != ODB_OK ||
      s->backend->ops->to_host(s->backend, y, s->y,
                               (size_t)s->n * sizeof(double)) != ODB_OK)
    for (long i = 0; i < s->n; ++i) y[i] = NAN;
  return y;
}

static double max_rel(const double *a, const double *b, long n) {
  double w = 0;
  for (long i = 0; i < n; ++i) {
    double e = fabs(a[i] - b[i]) / (fabs(b[i]) + 1e-300);
    if (!(e <= w)) w = isnan(e) ? INFINITY : e;
  }
  return w;
}

/*
** Runs s from y0 to t1 (fixed h when h > 0, else adaptive) in two
** integrate calls; the final state and the summed counts.
*/
static odb_status run(odb_solver *s, const double *y0, double t1,
                      double **y, long *acc, long *rej) {
  odb_solve_stats st;
  odb_status r;
  odb_solver_set_state(s, 0.0, y0);
  r = odb_solver_integrate(s, t1 / 2, &st);
  *acc = st.accepted;
  *rej = st.rejected;
  if (r == ODB_OK) r = odb_solver_integrate(s, t1, &st);
  *acc += st.accepted;
  *rej += st.rejected;
  *y = state(s);
  return r;
}

/*
** BRUSS2D N = 17, 64 and 255 (one row a block at 17 and 64, bands of one
** and two rows at 255 on a device of 132 multiprocessors), bs3, DOPRI5
** and Verner 6(5), the stages in shared memory (where they fit) and in
** global memory: fixed steps equal gpu_reference's to 1e-12; adaptive runs
** (tolerance 1e-6 and, with rejections, h0 0.2 and tolerance 1e-9) take
** the same accepted and rejected steps as gpu_stream2d's and end within
** 1e-12 of its state.
*/
static void test_against(void) {
  static const long Ns[] = { 17, 64, 255 };
  static const char *const ms[] = { "bs3", "dopri5", "verner65" };
  static const char *const places[] = { NULL, "global" };
  for (int ni = 0; ni < 3; ++ni) {
    odb_problem *p = bruss(Ns[ni]);
    double *y0 = malloc((size_t)p->n * sizeof(double));
    for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + 0.3 * sin(0.37 * i);
    for (int mi = 0; mi < 3; ++mi)
      for (int pi = 0; pi < 2; ++pi)
        for (int c = 0; c < 3; ++c) {   /* fixed, adaptive, rejections */
          odb_solver_opts o;
          odb_solver *g, *r;
          double *yg = NULL, *yr = NULL, e, t1 = c == 0 ? 2e-3 : 0.05;
          long ag = 0, rg = 0, ar = 0, rr = 0;
          odb_status sg, sr;
          memset(&o, 0, sizeof o);
          if (c == 0) {
            o.h_fixed = 1e-4;
          } else if (c == 2) {
            o.h0 = 0.2;
            o.rtol = o.atol = 1e-9;
          }
          g = solver(p, ms[mi], "gpu_onchip", places[pi], &o);
          r = solver(p, ms[mi], c == 0 ? "gpu_reference" : "gpu_stream2d",
                     NULL, &o);
          if (!g || !r) {
            tap_ok(0, "gpu_onchip %s N=%ld: %s", ms[mi], Ns[ni],
                   odb_last_error());
            odb_solver_destroy(g);
            odb_solver_destroy(r);
            continue;
          }
          sg = run(g, y0, t1, &yg, &ag, &rg);
          sr = run(r, y0, t1, &yr, &ar, &rr);
          e = max_rel(yg, yr, p->n);
          tap_ok(sg == ODB_OK && sr == ODB_OK && e <= 1e-12,
                 "gpu_onchip %s N=%ld place %s, %s: state within %.2e of %s",
                 ms[mi], Ns[ni], places[pi] ? places[pi] : "auto",
                 c == 0 ? "fixed steps" : c == 1 ? "adaptive"
                                                 : "adaptive with rejections",
                 e, c == 0 ? "gpu_reference" : "gpu_stream2d");
          if (c > 0)
            tap_ok(ag == ar && rg == rr, "gpu_onchip %s N=%ld place %s: "
                   "%ld accepted, %ld rejected (gpu_stream2d: %ld, %ld)",
                   ms[mi], Ns[ni], places[pi] ? places[pi] : "auto", ag, rg,
                   ar, rr);
          free(yg);
          free(yr);
          odb_solver_destroy(g);
          odb_solver_destroy(r);
        }
    free(y0);
    odb_problem_destroy(p);
  }
}

/* A state larger than the blocks' shared memory is refused when the solver
   is made, with the sizes and the largest N that fits. */
static void test_refusal(void) {
  odb_problem *p = bruss(2048);
  odb_solver *s = solver(p, "dopri5", "gpu_onchip", NULL, NULL);
  const char *e = odb_last_error();
  tap_ok(!s && strstr(e, "gpu_onchip: y needs") &&
         strstr(e, "MB of shared memory over") && strstr(e, ": N <= "),
         "N = 2048 is refused: %s", s ? "(made)" : e);
  odb_solver_destroy(s);
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts o = {0};
  o.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&o, &ctx) != ODB_OK) {
    printf("Bail out! odb_ctx_create: %s\n", odb_last_error());
    return 1;
  }
  if (odb_kernels_register(ctx) != ODB_OK ||
      !(gpu = odb_ctx_backend(ctx, "cuda"))) {
    odb_ctx_destroy(ctx);
    printf("1..0 # SKIP no GPU\n");
    return 77;
  }
  test_against();
  test_refusal();
  odb_ctx_destroy(ctx);
  return tap_done();
}
