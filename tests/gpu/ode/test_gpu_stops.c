/* test_gpu_stops.c - stops (odb_problem.tstops and a call's) and
   checkpoints on the GPU RK variants, against the CPU's plain and against
   an uninterrupted run of the same variant. */
#include "odebench.h"
#include "odb_kernels.h"
#include "tap.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static odb_ctx *ctx;
static odb_backend *gpu, *cpu;

/* The variants that take BRUSS2D with their default options, and the
   methods with an error estimate. */
static const char *const variants[] = { "gpu_reference", "gpu_unfused",
                                        "gpu_stream2d", "gpu_multiblock" };
static const char *const methods[] = { "bs3", "dopri5", "verner65" };
#define NV ((int)(sizeof variants / sizeof *variants))
#define NM ((int)(sizeof methods / sizeof *methods))

/* Stops declared by the problem (BRUSS2D's f has no jump: a stop only
   makes every variant land there and choose its step again, which is what
   is checked). */
static const double problem_stops[] = { 0.0371, 0.1 };
static const double call_stops[] = { 0.05, 0.13 };

static odb_problem *bruss(long N, int with_stops) {
  odb_param_value v = { .name = "N", .num = (double)N, .str = NULL };
  odb_problem *p = NULL;
  if (odb_problem_create("bruss2d", &v, 1, &p) != ODB_OK) {
    printf("Bail out! bruss2d(N=%ld): %s\n", N, odb_last_error());
    exit(1);
  }
  if (with_stops) {
    p->tstops = problem_stops;
    p->ntstops = 2;
  }
  return p;
}

static odb_solver *solver(odb_problem *p, const char *method,
                          odb_backend *b, const char *variant,
                          const odb_solver_opts *o) {
  const odb_method *m = odb_method_find(method);
  odb_solver *s = NULL;
  if (!m || odb_solver_create(ctx, p, m, b, variant, o, &s) != ODB_OK)
    return NULL;
  return s;
}

/* The solver's state on the host (n doubles, malloc'd; NULL on failure). */
static double *state(odb_solver *s) {
  double *y = malloc((size_t)s->n * sizeof(double));
  if (!y) return NULL;
  if (s->backend->host_memory) {
    memcpy(y, s->y, (size_t)s->n * sizeof(double));
  } else if (odb_backend_sync(s->backend) != ODB_OK ||
             s->backend->ops->to_host(s->backend, y, s->y,
                                      (size_t)s->n * sizeof(double)) !=
                 ODB_OK) {
    free(y);
    return NULL;
  }
  return y;
}

static double max_rel(const double *a, const double *b, long n) {
  double num = 0, den = 0;
  if (!a || !b) return INFINITY;
  for (long i = 0; i < n; ++i) {
    num = fmax(num, fabs(a[i] - b[i]));
    den = fmax(den, fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

static const char *why(odb_status st) {
  return st == ODB_OK ? "" : odb_last_error();
}

/*
** Adaptive runs to t1 = 0.2 over the problem's stops and a call's, with
** the step controller on the device (sync = call) and on the host (sync =
** step): each takes the accepted and rejected steps of plain on the CPU
** given the same stops, ends at the same state to 1e-10, and stepping one
** step at a time lands exactly on the first stop.
*/
static void test_stops(void) {
  odb_problem *p = bruss(37, 1);
  const double t1 = 0.2;
  for (int mi = 0; mi < NM; ++mi) {
    odb_solver_opts o;
    odb_solve_stats sc, sg;
    odb_solver *c;
    double *yc;
    memset(&o, 0, sizeof o);
    o.rtol = o.atol = 1e-8;
    c = solver(p, methods[mi], cpu, "plain", &o);
    if (!c || odb_solver_integrate_stops(c, t1, call_stops, 2, &sc) != ODB_OK) {
      tap_ok(0, "plain %s with stops: %s", methods[mi], odb_last_error());
      odb_solver_destroy(c);
      continue;
    }
    yc = state(c);
    for (int vi = 0; vi < NV; ++vi)
      for (int sync = 0; sync < 2; ++sync) {
        odb_solver_opts go = o;
        odb_solver *g;
        odb_status st;
        double *yg, e;
        /* gpu_multiblock has no device controller */
        if (sync == 0 && strcmp(variants[vi], "gpu_multiblock") == 0)
          continue;
        go.sync = sync == 0 ? ODB_SYNC_CALL : ODB_SYNC_STEP;
        g = solver(p, methods[mi], gpu, variants[vi], &go);
        if (!g) {
          tap_ok(0, "%s %s: %s", variants[vi], methods[mi], odb_last_error());
          continue;
        }
        st = odb_solver_integrate_stops(g, t1, call_stops, 2, &sg);
        yg = state(g);
        e = max_rel(yg, yc, p->n);
        tap_ok(st == ODB_OK && e <= 1e-10 && sg.accepted == sc.accepted &&
               sg.rejected == sc.rejected && g->t == t1,
               "%s %s, controller on the %s, stops 0.0371 0.1 (problem) "
               "0.05 0.13 (call): %ld/%ld accepted/rejected (plain %ld/%ld), "
               "rel err %.2e, t %.17g %s", variants[vi], methods[mi],
               sync == 0 ? "device" : "host", sg.accepted, sg.rejected,
               sc.accepted, sc.rejected, e, g->t, why(st));
        free(yg);
        odb_solver_destroy(g);
      }
    free(yc);
    odb_solver_destroy(c);
  }
  /* one step at a time: a step ends on the stop, the next starts after */
  for (int vi = 0; vi < NV; ++vi) {
    odb_solver_opts o;
    odb_solve_stats st;
    odb_solver *g;
    int landed = 0, after = 0, k;
    memset(&o, 0, sizeof o);
    o.rtol = o.atol = 1e-8;
    o.sync = ODB_SYNC_STEP;
    g = solver(p, "dopri5", gpu, variants[vi], &o);
    if (!g) {
      tap_ok(0, "%s dopri5: %s", variants[vi], odb_last_error());
      continue;
    }
    for (k = 0; k < 400 && g->t < 0.05; ++k) {
      double t_before = g->t;
      if (odb_solver_step(g, 0, &st) != ODB_OK) break;
      if (g->t == problem_stops[0]) landed = 1;
      if (t_before == problem_stops[0] && g->t > problem_stops[0])
        after = 1;
    }
    tap_ok(landed && after, "%s dopri5 step by step: a step ends on %.17g "
           "and the next starts from it", variants[vi], problem_stops[0]);
    odb_solver_destroy(g);
  }
  odb_problem_destroy(p);
}

/*
** A checkpoint written by a GPU solver in the middle of an integration and
** read into a new one continues bit for bit: the two halves give the state
** of one uninterrupted run, both with the controller on the device and on
** the host, and the same steps. Also read back by plain on the CPU, which
** continues with its own steps from there: the same solution to 1e-6 at
** tolerance 1e-9 (one such run, gpu_stream2d with the controller on the
** host, ends 1.0e-7 from the GPU's on an H200).
*/
static void test_checkpoint(void) {
  odb_problem *p = bruss(41, 0);
  char path[256];
  const double tm = 0.07, t1 = 0.15;
  snprintf(path, sizeof path, "/tmp/odb_gpu_ckpt_%ld.ckpt", (long)getpid());
  for (int vi = 0; vi < NV; ++vi)
    for (int sync = 0; sync < 2; ++sync) {
      odb_solver_opts o;
      odb_solve_stats s1, s2, s3;
      odb_solver *a = NULL, *b = NULL, *c = NULL;
      odb_status st;
      double *ya = NULL, *yb = NULL, *yc = NULL;
      long steps_ab;
      if (sync == 0 && strcmp(variants[vi], "gpu_multiblock") == 0) continue;
      memset(&o, 0, sizeof o);
      o.rtol = o.atol = 1e-9;
      o.sync = sync == 0 ? ODB_SYNC_CALL : ODB_SYNC_STEP;
      a = solver(p, "dopri5", gpu, variants[vi], &o);   /* uninterrupted */
      b = solver(p, "dopri5", gpu, variants[vi], &o);   /* written at tm */
      st = a && b ? ODB_OK : ODB_ERR_BACKEND;
      if (st == ODB_OK) st = odb_solver_integrate(a, tm, &s1);
      if (st == ODB_OK) st = odb_solver_integrate(a, t1, &s1);
      if (st == ODB_OK) st = odb_solver_integrate(b, tm, &s2);
      if (st == ODB_OK) st = odb_solver_checkpoint_write(b, path);
      odb_solver_destroy(b);
      b = solver(p, "dopri5", gpu, variants[vi], &o);
      {
        odb_solver_opts oc = o;   /* the same tolerance, on the host */
        oc.sync = 0;
        c = solver(p, "dopri5", cpu, "plain", &oc);
      }
      if (st == ODB_OK && (!b || !c)) st = ODB_ERR_BACKEND;
      if (st == ODB_OK) st = odb_solver_checkpoint_read(b, path);
      if (st == ODB_OK) st = odb_solver_checkpoint_read(c, path);
      if (st == ODB_OK) st = odb_solver_integrate(b, t1, &s3);
      steps_ab = st == ODB_OK ? b->stats.steps : -1;
      if (st == ODB_OK) st = odb_solver_integrate(c, t1, &s3);
      ya = a ? state(a) : NULL;
      yb = b ? state(b) : NULL;
      yc = c ? state(c) : NULL;
      tap_ok(st == ODB_OK && ya && yb &&
             memcmp(ya, yb, (size_t)p->n * sizeof(double)) == 0 &&
             a->stats.steps == steps_ab &&
             a->stats.accepted == b->stats.accepted &&
             max_rel(yc, ya, p->n) <= 1e-6,
             "%s dopri5, controller on the %s: restart at t = %g from a "
             "checkpoint ends bit for bit on the uninterrupted run (%ld "
             "steps, restarted %ld; max |diff| %.2e), plain from the same "
             "file %.2e %s", variants[vi], sync == 0 ? "device" : "host", tm,
             a ? a->stats.steps : -1L, steps_ab, max_rel(yb, ya, p->n),
             max_rel(yc, ya, p->n), why(st));
      free(ya);
      free(yb);
      free(yc);
      odb_solver_destroy(a);
      odb_solver_destroy(b);
      odb_solver_destroy(c);
    }
  remove(path);
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts o = {0};
  o.seed = (uint64_t)time(NULL);
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
  cpu = odb_ctx_backend(ctx, "cpu");
  test_stops();
  test_checkpoint();
  odb_ctx_destroy(ctx);
  return tap_done();
}
