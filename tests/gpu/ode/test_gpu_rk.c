/* test_gpu_rk.c - the GPU RK variants against the CPU "plain" variant (TAP;
   exit 77 without a GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "tap.h"
#include "odebench.h"
#include "odb_kernels.h"

static const char *const variants[] = { "gpu_unfused", "gpu_reference",
                                        "gpu_trapezoid", "gpu_multiblock",
                                        "gpu_stream2d", "gpu_hexagonal" };
static const char *const methods[] = { "bs3", "dopri5", "verner65",
                                       "heun_euler", "rk4" };
#define NV ((int)(sizeof variants / sizeof variants[0]))
#define NM ((int)(sizeof methods / sizeof methods[0]))

static odb_ctx *ctx;
static odb_backend *gpu, *cpu;
static int quick;   /* ODB_GPU_TEST_QUICK=1: shorter runs (sanitizers) */
static int only_lag1;   /* ODB_GPU_TEST_ONLY=lag1: stream2d's lag-1 configurations */
static int only_cluster;   /* ODB_GPU_TEST_ONLY=cluster: those in clusters */

/* BRUSS2D with N points per side (n = 2 N^2). */
static odb_problem *bruss(long N) {
  odb_param_value v = { .name = "N", .num = (double)N, .str = NULL };
  odb_problem *p = NULL;
  if (odb_problem_create("bruss2d", &v, 1, &p) != ODB_OK) {
    printf("Bail out! bruss2d(N=%ld): %s\n", N, odb_last_error());
    exit(1);
  }
  return p;
}

/* A solver or NULL (the reason stays in odb_last_error). */
static odb_solver *solver(odb_problem *p, const char *method,
                          odb_backend *b, const char *variant,
                          const odb_solver_opts *o) {
  const odb_method *m = odb_method_find(method);
  odb_solver *s = NULL;
  if (!m || odb_solver_create(ctx, p, m, b, variant, o, &s) != ODB_OK)
    return NULL;
  return s;
}

/*
** A variant's options (odb_solver_opts.vopts) as a test builds them: opt
** and opt_str set one by name (replacing a value of that name) and point o
** at the list, opt_drop leaves one out. The list must outlive only the
** odb_solver_create it is given to (the solver copies it).
*/
typedef struct vlist {
  odb_param_value v[12];
  int n;
} vlist;

static void opt_str(odb_solver_opts *o, vlist *l, const char *name,
                    double num, const char *str) {
  int i = 0;
  while (i < l->n && strcmp(l->v[i].name, name) != 0) ++i;
  if (i == l->n) {
    if (l->n == (int)(sizeof l->v / sizeof l->v[0])) {
      printf("Bail out! more than %d options\n", l->n);
      exit(1);
    }
    l->n++;
  }
  l->v[i].name = name;
  l->v[i].num = num;
  l->v[i].str = str;
  o->vopts = l->v;
  o->nvopts = l->n;
}

static void opt(odb_solver_opts *o, vlist *l, const char *name, double num) {
  opt_str(o, l, name, num, NULL);
}

static void opt_drop(odb_solver_opts *o, vlist *l, const char *name) {
  for (int i = 0; i < l->n; ++i)
    if (strcmp(l->v[i].name, name) == 0) {
      l->v[i] = l->v[--l->n];
      break;
    }
  o->nvopts = l->n;
}

/* The text of a stride or barrier letter. */
static const char *letter(char c) {
  return c == 'A' ? "A" : c == 'B' ? "B" : "C";
}

/*
** Options of a GPU variant: gpu_trapezoid gets the narrowest tile width it
** takes plus 37 (so that it is a multiple of nothing and n holds several
** tiles); gpu_hexagonal widths of 3 d and more; the others their defaults.
** base may be NULL; the options are added to l, which must be the list
** base's options are in (if it has any).
*/
static odb_solver_opts gpu_opts(const char *variant, const char *method,
                                const odb_problem *p,
                                const odb_solver_opts *base, vlist *l) {
  odb_solver_opts o;
  const odb_method *m = odb_method_find(method);
  if (base) o = *base;
  else memset(&o, 0, sizeof o);
  if (strcmp(variant, "gpu_trapezoid") == 0 && m)
    o.block = (2L * m->s - 2) * p->d + 37;
  if (strcmp(variant, "gpu_hexagonal") == 0) {   /* height 4: 3 d at least */
    opt(&o, l, "width", (double)(3 * p->d + 37));
    opt(&o, l, "width2", (double)(3 * p->d + 5));
  }
  return o;
}

/* 1 when variant may refuse p: a trapezoid or hexagon too large for shared
   memory. */
static int may_refuse(const char *variant, const char *msg) {
  return (strcmp(variant, "gpu_trapezoid") == 0 ||
          strcmp(variant, "gpu_hexagonal") == 0) && strstr(msg, "shared memory");
}

/* The solver's state on the host (n doubles, malloc'd). */
static double *state(odb_solver *s) {
  double *y = malloc((size_t)s->n * sizeof(double));
  if (s->backend->host_memory) {
    memcpy(y, s->y, (size_t)s->n * sizeof(double));
  } else if (odb_backend_sync(s->backend) != ODB_OK ||
             s->backend->ops->to_host(s->backend, y, s->y,
                                      (size_t)s->n * sizeof(double)) !=
                 ODB_OK) {
    for (long i = 0; i < s->n; ++i) y[i] = NAN;
  }
  return y;
}

/* Largest |a - b| / |b| (NaN counts as infinitely large). */
static double max_rel(const double *a, const double *b, long n) {
  double w = 0;
  for (long i = 0; i < n; ++i) {
    double e = fabs(a[i] - b[i]) / (fabs(b[i]) + 1e-300);
    if (!(e <= w)) w = isnan(e) ? INFINITY : e;
  }
  return w;
}

/* Fills the device's ynew and stage vectors with NaN (unwritten shows). */
static void poison(odb_solver *s) {
  size_t bytes = (size_t)s->n * sizeof(double);
  double *nan = malloc(bytes);
  for (long i = 0; i < s->n; ++i) nan[i] = NAN;
  s->backend->ops->to_device(s->backend, s->ynew, nan, bytes);
  for (int i = 0; i < s->method->s; ++i)
    s->backend->ops->to_device(s->backend, s->F[i], nan, bytes);
  free(nan);
}

/*
** Rounding allowance of an error norm: 100 ulps of the weighted change of
** the step, RMS_j(|ynew_j - y_j| / sk_j). The estimate is h sum e_q F_q, a
** difference of nearly equal sums of the stage values, so its rounding
** error scales with the step's change, not with the estimate itself.
*/
static double err_allowance(const double *y, const double *yn, long n,
                            double tol) {
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    double a = fabs(y[i]), b = fabs(yn[i]);
    double r = (yn[i] - y[i]) / (tol + tol * (a > b ? a : b));
    sum += r * r;
  }
  return 100 * 2.220446049250313e-16 * sqrt(sum / (double)n);
}

/*
** Two fixed steps of h of plain from y0: the states after each (malloc'd)
** in yc, the error norms in ec and their rounding allowances in allow.
** Returns the solver, or NULL when plain cannot be made.
*/
static odb_solver *plain_steps(odb_problem *p, const char *method,
                               const double *y0, double h, double *yc[2],
                               double ec[2], double allow[2]) {
  odb_solver *c = solver(p, method, cpu, "plain", NULL);
  odb_solve_stats info;
  if (!c) return NULL;
  odb_solver_set_state(c, 0.0, y0);
  for (int k = 0; k < 2; ++k) {
    odb_solver_step(c, h, &info);
    ec[k] = info.err_last;
    yc[k] = state(c);
    allow[k] = err_allowance(k ? yc[0] : y0, yc[k], p->n, c->opts.rtol);
  }
  return c;
}

/* A message on one line (TAP): newlines become " | ". */
static const char *one_line(const char *msg) {
  static char buf[600];
  size_t i = 0;
  for (; msg[i] && i + 4 < sizeof buf; ++i) buf[i] = msg[i];
  buf[i] = '\0';
  for (char *c = buf; (c = strchr(c, '\n'));) *c = '|';
  return buf;
}

/*
** Two fixed steps of every GPU variant from a fresh random state against
** plain: the state after each (the second uses F_0 from the first for FSAL
** methods) to 1e-12 relative, the error norm to 1e-12 relative plus the
** rounding allowance above.
*/
static void test_steps(long N, odb_rng *r) {
  odb_problem *p = bruss(N);
  double *y0 = malloc((size_t)p->n * sizeof(double));
  double h = 1e-3;
  for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + odb_rng_uniform(r);
  for (int mi = 0; mi < NM; ++mi) {
    double *yc[2];
    double ec[2], allow[2];
    odb_solve_stats info;
    odb_solver *c = plain_steps(p, methods[mi], y0, h, yc, ec, allow);
    if (!c) {
      tap_ok(0, "plain %s: %s", methods[mi], odb_last_error());
      continue;
    }
    for (int vi = 0; vi < NV; ++vi) {
      vlist l = { .n = 0 };
      odb_solver_opts go = gpu_opts(variants[vi], methods[mi], p, NULL, &l);
      odb_solver *g = solver(p, methods[mi], gpu, variants[vi], &go);
      if (!g) {
        if (strstr(odb_last_error(), "unknown variant"))
          continue;   /* not in this build yet */
        tap_ok(may_refuse(variants[vi], odb_last_error()), "%s %s N=%ld: %s",
               variants[vi], methods[mi], N, one_line(odb_last_error()));
        continue;
      }
      odb_solver_set_state(g, 0.0, y0);
      poison(g);
      for (int k = 0; k < 2; ++k) {
        odb_status st = odb_solver_step(g, h, &info);
        double *yg = state(g), e = max_rel(yg, yc[k], p->n);
        double de = fabs(info.err_last - ec[k]);
        tap_ok(st == ODB_OK && e <= 1e-12,
               "%s %s N=%ld n=%ld step %d: state rel err %.2e%s%s",
               variants[vi], methods[mi], N, p->n, k + 1, e,
               st == ODB_OK ? "" : ": ",
               st == ODB_OK ? "" : one_line(odb_last_error()));
        tap_ok(de <= 1e-12 * fabs(ec[k]) + allow[k],
               "%s %s N=%ld step %d: error norm %.9e vs %.9e (diff %.1e, "
               "allowed %.1e)", variants[vi], methods[mi], N, k + 1,
               info.err_last, ec[k], de, 1e-12 * fabs(ec[k]) + allow[k]);
        free(yg);
      }
      odb_solver_destroy(g);
    }
    free(yc[0]);
    free(yc[1]);
    odb_solver_destroy(c);
  }
  free(y0);
  odb_problem_destroy(p);
}

/*
** Adaptive integrations of BRUSS2D from its initial value: the GPU run
** takes the same accepted and rejected steps as plain and ends within
** 1e-10 relative of it. With o (a first step far too large and a tight
** tolerance) rejections happen.
*/
static void test_adaptive(long N, const odb_solver_opts *o, const char *what,
                          long *rejections) {
  odb_problem *p = bruss(N);
  double t1 = quick ? 0.1 : 0.5;
  for (int mi = 0; mi < NM; ++mi) {
    odb_solver *c;
    odb_solve_stats sc, sg;
    double *yc;
    if (strcmp(methods[mi], "rk4") == 0) continue;   /* no estimate */
    if (o && strcmp(methods[mi], "heun_euler") == 0) continue;   /* slow */
    c = solver(p, methods[mi], cpu, "plain", o);
    if (!c || odb_solver_integrate(c, t1, &sc) != ODB_OK) {
      tap_ok(0, "plain %s adaptive: %s", methods[mi], odb_last_error());
      odb_solver_destroy(c);
      continue;
    }
    *rejections += sc.rejected;
    yc = state(c);
    for (int vi = 0; vi < NV; ++vi) {
      vlist l = { .n = 0 };
      odb_solver_opts go = gpu_opts(variants[vi], methods[mi], p, o, &l);
      odb_solver *g = solver(p, methods[mi], gpu, variants[vi], &go);
      odb_status st;
      double *yg, e;
      if (!g) {
        if (!strstr(odb_last_error(), "unknown variant"))
          tap_ok(0, "%s %s: %s", variants[vi], methods[mi],
                 one_line(odb_last_error()));
        continue;
      }
      st = odb_solver_integrate(g, t1, &sg);
      yg = state(g);
      e = max_rel(yg, yc, p->n);
      tap_ok(st == ODB_OK && e <= 1e-10 && sg.accepted == sc.accepted &&
             sg.rejected == sc.rejected,
             "%s %s adaptive%s N=%ld to t=%g: %ld/%ld accepted/rejected "
             "(plain %ld/%ld), state rel err %.2e%s%s", variants[vi],
             methods[mi], what, N, t1, sg.accepted, sg.rejected, sc.accepted,
             sc.rejected, e, st == ODB_OK ? "" : ": ",
             st == ODB_OK ? "" : one_line(odb_last_error()));
      free(yg);
      odb_solver_destroy(g);
    }
    free(yc);
    odb_solver_destroy(c);
  }
  odb_problem_destroy(p);
}

/*
** Bad input: an f_j that does not compile (NVRTC's log, with the line in
** the problem's source), d >= n, a problem larger than the device.
*/
static void test_refusals(void) {
  static const char bad[] =
    "__device__ double odb_rhs(odb_idx j, double t, const double *y) {\n"
    "  return y[j] +* 2.0;\n"
    "}\n";
  odb_problem *p = bruss(9), *big;
  const char *good = p->gpu_source;
  odb_solver *s;
  const char *e;
  for (int vi = 0; vi < NV; ++vi) {
    p->gpu_source = bad;
    s = solver(p, "dopri5", gpu, variants[vi], NULL);
    e = odb_last_error();
    if (!s && strstr(e, "unknown variant")) continue;
    tap_ok(!s && strstr(e, "NVRTC") && strstr(e, "gpu_source(2): error"),
           "%s: a bad f_j is refused with NVRTC's log: %s", variants[vi],
           one_line(e));
    odb_solver_destroy(s);
    p->gpu_source = good;
    p->d = p->n;
    s = solver(p, "dopri5", gpu, variants[vi], NULL);
    e = odb_last_error();
    tap_ok(!s && strstr(e, "access distance d = 162 is not smaller than n = "
                        "162"), "%s: d >= n is refused: %s", variants[vi], e);
    odb_solver_destroy(s);
    p->d = 18;
  }
  big = bruss(40000);   /* n = 3.2e9: 25.6 GB a vector, 9 vectors */
  s = solver(big, "dopri5", gpu, "gpu_reference", NULL);
  e = odb_last_error();
  tap_ok(!s && strstr(e, "out of device memory") && strstr(e, "230.40 GB"),
         "too large for the device: refused before allocating: %s", e);
  odb_solver_destroy(s);
  odb_problem_destroy(big);
  odb_problem_destroy(p);
}

/*
** gpu_multiblock's tile configurations (Korch and Werner, multi-workgroup
** tiling, sections 4.3-4.6): every stride and barrier kind, persistent
** and one group per tile, several components and blocks per thread, small
** blocks so that n = 2738 (d = 74) spans
** many tiles of several blocks; two steps each against plain to 1e-12.
** Then the refusals: more co-resident blocks than the device holds, and
** a watchdog of 1 ns, which any barrier wait outlasts: the step fails
** with the barrier named, and the solver steps correctly afterwards.
*/
static void test_multiblock(odb_rng *r) {
  static const struct { int th, nc, nb, G, tiles, pers; char st, bar; } cf[] = {
    { 32, 1, 1, 4, 3, 1, 'A', 'A' }, { 32, 2, 1, 6, 2, 1, 'B', 'A' },
    { 64, 1, 3, 3, 4, 1, 'C', 'A' }, { 32, 1, 2, 5, 2, 1, 'A', 'B' },
    { 64, 2, 2, 2, 3, 1, 'B', 'B' }, { 32, 3, 1, 4, 0, -1, 'C', 'B' },
    { 32, 1, 2, 7, 0, -1, 'B', 'A' }, { 64, 1, 2, 9, 1, 1, 'B', 'C' },
    { 128, 2, 1, 0, 1, 1, 'A', 'C' }, { 256, 1, 2, 0, 0, 1, 'B', 'A' },
    { 128, 2, 4, 1, 0, 1, 'B', 'A' }, { 256, 2, 4, 1, 0, -1, 'A', 'B' },
  };
  const char *meths[] = { "bs3", "verner65", "dopri5" };
  odb_problem *p = bruss(37);
  double *y0 = malloc((size_t)p->n * sizeof(double)), h = 1e-3;
  for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + odb_rng_uniform(r);
  for (int mi = 0; mi < 3; ++mi) {
    odb_solver *c = solver(p, meths[mi], cpu, "plain", NULL);
    odb_solve_stats info;
    double *yc[2];
    odb_solver_set_state(c, 0.0, y0);
    for (int k = 0; k < 2; ++k) {
      odb_solver_step(c, h, &info);
      yc[k] = state(c);
    }
    for (size_t ci = 0; ci < sizeof cf / sizeof cf[0]; ++ci) {
      odb_solver_opts o;
      odb_solver *g;
      vlist l = { .n = 0 };
      memset(&o, 0, sizeof o);
      opt(&o, &l, "threads", cf[ci].th);
      opt(&o, &l, "comps", cf[ci].nc);
      opt(&o, &l, "blocks", cf[ci].nb);
      if (cf[ci].G) opt(&o, &l, "wg_per_tile", cf[ci].G);
      if (cf[ci].tiles) opt(&o, &l, "tiles", cf[ci].tiles);
      opt_str(&o, &l, "persistent", 0, cf[ci].pers > 0 ? "true" : "false");
      opt_str(&o, &l, "stride", 0, letter(cf[ci].st));
      opt_str(&o, &l, "barrier", 0, letter(cf[ci].bar));
      g = solver(p, meths[mi], gpu, "gpu_multiblock", &o);
      if (!g) {
        tap_ok(strstr(odb_last_error(), "does not exceed the halo") != NULL,
               "multiblock %s cfg %zu: %s", meths[mi], ci,
               one_line(odb_last_error()));
        continue;
      }
      odb_solver_set_state(g, 0.0, y0);
      poison(g);
      for (int k = 0; k < 2; ++k) {
        odb_status st = odb_solver_step(g, h, &info);
        double *yg = state(g), e = max_rel(yg, yc[k], p->n);
        tap_ok(st == ODB_OK && e <= 1e-12, "multiblock %s threads %d comps "
               "%d blocks %d wg/tile %d tiles %d %s stride %c barrier %c "
               "step %d: rel err %.2e%s%s", meths[mi], cf[ci].th, cf[ci].nc,
               cf[ci].nb, cf[ci].G, cf[ci].tiles,
               cf[ci].pers > 0 ? "persistent" : "group per tile", cf[ci].st,
               cf[ci].bar, k + 1, e, st == ODB_OK ? "" : ": ",
               st == ODB_OK ? "" : one_line(odb_last_error()));
        free(yg);
      }
      odb_solver_destroy(g);
    }
    free(yc[0]);
    free(yc[1]);
    odb_solver_destroy(c);
  }
  {
    odb_solver_opts o;
    odb_solver *g;
    odb_solve_stats info;
    const char *e;
    vlist l = { .n = 0 };
    memset(&o, 0, sizeof o);
    opt(&o, &l, "threads", 1024);
    opt(&o, &l, "wg_per_tile", 20000);
    g = solver(p, "bs3", gpu, "gpu_multiblock", &o);
    e = g ? "(accepted)" : odb_last_error();
    tap_ok(!g && strstr(e, "must be co-resident"), "a tile of 20000 blocks of "
           "1024 threads is refused before launch: %s", one_line(e));
    odb_solver_destroy(g);
    memset(&o, 0, sizeof o);
    l.n = 0;
    opt(&o, &l, "threads", 32);     /* one tile of every block the device */
    opt(&o, &l, "tiles", 1);        /* holds: long waits at each barrier */
    opt(&o, &l, "watchdog", 1e-9);
    g = solver(p, "bs3", gpu, "gpu_multiblock", &o);
    if (!g) {
      tap_ok(0, "watchdog solver: %s", one_line(odb_last_error()));
    } else {
      odb_status st = ODB_OK;
      for (int k = 0; k < 200 && st == ODB_OK; ++k) {
        odb_solver_set_state(g, 0.0, y0);
        st = odb_solver_step(g, h, &info);
      }
      e = st == ODB_OK ? "(200 steps without a watchdog error)"
                       : odb_last_error();
      tap_ok(st == ODB_ERR_BACKEND && strstr(e, "watchdog") &&
             strstr(e, "barrier A"), "a 1 ns watchdog turns a barrier wait "
             "into an error: %s", one_line(e));
      odb_solver_destroy(g);
    }
  }
  free(y0);
  odb_problem_destroy(p);
}

/* BRUSS2D with N rows of Nx points (n = 2 N Nx). */
static odb_problem *bruss_nx(long N, long Nx) {
  odb_param_value v[2] = { { .name = "N", .num = (double)N, .str = NULL },
                           { .name = "Nx", .num = (double)Nx, .str = NULL } };
  odb_problem *p = NULL;
  if (odb_problem_create("bruss2d", v, 2, &p) != ODB_OK) {
    printf("Bail out! bruss2d(N=%ld,Nx=%ld): %s\n", N, Nx, odb_last_error());
    exit(1);
  }
  return p;
}

/* One test: dopri5 with variant and options o on p is refused with a
   message that contains want. */
static void expect_refusal(odb_problem *p, const char *variant,
                           const odb_solver_opts *o, const char *want,
                           const char *what) {
  odb_solver *s = solver(p, "dopri5", gpu, variant, o);
  const char *e = s ? "(accepted)" : odb_last_error();
  tap_ok(!s && strstr(e, want), "%s is refused: %s", what, one_line(e));
  odb_solver_destroy(s);
}

/*
** gpu_stream2d's configurations: strips of 32 to 256 threads (so that the
** halo of s columns is most of a narrow strip), one row per block up to all
** rows, bands of 1 to 4 rows a pass (more than a block's rows, too), skew 1
** and 2, skew 2 with 0 to 3 centre rows kept in registers (carry) and
** lag 1 (the stages in order, 1 to 3 rows kept), the
** defaults (skew 2, rows from a probe build's occupancy), grids
** narrower and wider than a strip, non-square (skew 2 on a grid no wider
** than the block streams whole rows, several sub-strips a block: 3 columns
** 10 times in 32 threads, 23 columns 11 times in 256); two steps each
** from a fresh random state against plain, the state to 1e-12 and the
** norm to 1e-12 plus rounding. Then the refusals: a problem without a cell
** source, a cell source that does not compile, a strip with no column,
** skew 2 with a band, 4 centre rows kept, centre rows kept with skew 1,
** lag 1 with no centre row kept.
*/
static void test_stream2d(odb_rng *r) {
  static const struct { long N, Nx; } shapes[] = {
    { 37, 23 }, { 13, 101 }, { 2, 3 }, { 61, 5 }, { 11, 300 } };
  static const struct { int th; long rows; int band, skew, carry, lag,
                        cluster; }
  cf[] = {
    { 32, 0, 1, 1, 0, 0, 0 }, { 64, 1, 2, 1, 0, 0, 0 }, { 64, 5, 3, 1, 0, 0, 0 },
    { 128, 3, 1, 1, 0, 0, 0 }, { 256, 0, 2, 1, 0, 0, 0 }, { 32, 7, 4, 1, 0, 0, 0 },
    { 128, 0, 3, 1, 0, 0, 0 }, { 32, 0, 1, 2, 0, 0, 0 }, { 64, 1, 1, 2, 0, 0, 0 },
    { 64, 5, 1, 2, 0, 0, 0 }, { 128, 3, 1, 2, 0, 0, 0 }, { 256, 0, 1, 2, 0, 0, 0 },
    { 0, 0, 0, 0, 0, 0, 0 }, { 32, 2, 1, 2, 0, 0, 0 }, { 64, 1, 1, 2, 4, 0, 0 },
    { 32, 0, 1, 2, 1, 0, 0 }, { 32, 3, 1, 2, 2, 0, 0 }, { 128, 2, 1, 2, 4, 0, 0 },
    { 256, 0, 1, 2, 3, 0, 0 }, { 64, 5, 1, 2, 2, 0, 0 }, { 32, 1, 1, 2, 1, 0, 0 },
    { 128, 0, 1, 2, 4, 0, 0 },
    /* lag 1: the stages in order, a barrier every pass */
    { 0, 0, 0, 0, 0, 1, 0 }, { 64, 5, 1, 2, 2, 1, 0 }, { 128, 3, 1, 2, 3, 1, 0 },
    { 32, 0, 1, 2, 4, 1, 0 }, { 256, 1, 1, 2, 4, 1, 0 }, { 64, 2, 1, 2, 3, 1, 0 },
    { 128, 0, 1, 2, 4, 1, 0 }, { 32, 7, 1, 2, 2, 1, 0 },
    /* clusters of 2, 4 and 8 blocks handing each other edge columns */
    { 32, 0, 1, 2, 4, 1, 2 }, { 128, 0, 1, 2, 4, 1, 2 },
    { 64, 3, 1, 2, 3, 1, 4 }, { 64, 5, 1, 2, 4, 1, 2 },
    { 32, 1, 1, 2, 2, 1, 8 }, { 0, 0, 0, 0, 0, 1, 2 } };
  /* carry: 1 + centre rows kept; 0 default. lag 0: default (2); cluster
     0: the default */
  const char *meths[] = { "bs3", "verner65", "dopri5", "rk4" };
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
    odb_problem *p = bruss_nx(shapes[si].N, shapes[si].Nx);
    double *y0 = malloc((size_t)p->n * sizeof(double)), h = 1e-3;
    for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + odb_rng_uniform(r);
    for (int mi = 0; mi < 4; ++mi) {
      odb_solve_stats info;
      double *yc[2], ec[2], allow[2];
      odb_solver *c = plain_steps(p, meths[mi], y0, h, yc, ec, allow);
      if (!c) {
        tap_ok(0, "plain %s: %s", meths[mi], odb_last_error());
        continue;
      }
      for (size_t ci = 0; ci < sizeof cf / sizeof cf[0]; ++ci) {
        odb_solver_opts o;
        odb_solver *g;
        vlist l = { .n = 0 };
        if (quick && ci % 2) continue;
        if (only_lag1 && cf[ci].lag != 1) continue;
        if (only_cluster && cf[ci].cluster == 0) continue;
        memset(&o, 0, sizeof o);
        if (cf[ci].th) opt(&o, &l, "threads", cf[ci].th);
        if (cf[ci].rows) opt(&o, &l, "rows", (double)cf[ci].rows);
        if (cf[ci].band) opt(&o, &l, "band", cf[ci].band);
        if (cf[ci].skew) opt(&o, &l, "skew", cf[ci].skew);
        if (cf[ci].carry) opt(&o, &l, "carry", cf[ci].carry - 1);
        if (cf[ci].lag) opt(&o, &l, "lag", cf[ci].lag);
        if (cf[ci].cluster) opt(&o, &l, "cluster", cf[ci].cluster);
        g = solver(p, meths[mi], gpu, "gpu_stream2d", &o);
        if (!g && cf[ci].cluster > 1 &&
            shapes[si].Nx <= (cf[ci].th ? cf[ci].th : 256)) {
          /* whole rows a block: no strips to put side by side */
          tap_ok(strstr(odb_last_error(), "a grid wider than the block") !=
                 NULL, "stream2d %s %s cluster %d on a grid no wider than "
                 "the block is refused: %s", p->label, meths[mi],
                 cf[ci].cluster, one_line(odb_last_error()));
          continue;
        }
        if (!g) {
          tap_ok(0, "stream2d %s %s cfg %zu: %s", p->label, meths[mi], ci,
                 one_line(odb_last_error()));
          continue;
        }
        odb_solver_set_state(g, 0.0, y0);
        poison(g);
        for (int k = 0; k < 2; ++k) {
          odb_status st = odb_solver_step(g, h, &info);
          double *yg = state(g), e = max_rel(yg, yc[k], p->n);
          double de = fabs(info.err_last - ec[k]);
          tap_ok(st == ODB_OK && e <= 1e-12 &&
                 de <= 1e-12 * fabs(ec[k]) + allow[k] &&
                 (cf[ci].cluster == 0 ||
                  odb_gpu_rk_cluster(g) == cf[ci].cluster),
                 "stream2d %s %s threads %d rows %ld band %d skew %d carry "
                 "%d lag %d cluster %d (%d) step %d: rel err %.2e, norm %.9e "
                 "vs %.9e%s%s",
                 p->label, meths[mi], cf[ci].th, cf[ci].rows, cf[ci].band,
                 cf[ci].skew, cf[ci].carry - 1, cf[ci].lag, cf[ci].cluster,
                 odb_gpu_rk_cluster(g), k + 1, e,
                 info.err_last,
                 ec[k],
                 st == ODB_OK ? "" : ": ",
                 st == ODB_OK ? "" : one_line(odb_last_error()));
          free(yg);
        }
        odb_solver_destroy(g);
      }
      free(yc[0]);
      free(yc[1]);
      odb_solver_destroy(c);
    }
    free(y0);
    odb_problem_destroy(p);
  }
  {
    static const char bad[] =
      "__device__ void odb_rhs_cell(odb_idx i, odb_idx j, double t,\n"
      "                             const odb_cell_in &in, double *f) {\n"
      "  f[0] = ODB_Y(0, 0, 0) +* 2.0;\n"
      "}\n";
    odb_problem *p = bruss(9);
    const char *good = p->gpu_cell_source, *e;
    odb_solver_opts o;
    odb_solver *s;
    vlist l = { .n = 0 };
    p->gpu_cell_source = NULL;
    expect_refusal(p, "gpu_stream2d", NULL, "not a 2-D grid problem",
                   "stream2d: a problem without a cell source");
    p->gpu_cell_source = bad;
    s = solver(p, "dopri5", gpu, "gpu_stream2d", NULL);
    e = s ? "(accepted)" : odb_last_error();
    tap_ok(!s && strstr(e, "NVRTC") && strstr(e, "gpu_cell_source(3): error"),
           "stream2d: a bad cell source is refused with NVRTC's log: %s",
           one_line(e));
    odb_solver_destroy(s);
    p->gpu_cell_source = good;
    memset(&o, 0, sizeof o);
    opt(&o, &l, "threads", 32);
    s = solver(p, "bs3", gpu, "gpu_stream2d", &o);
    tap_ok(s != NULL, "stream2d: 32 threads take bs3 (s = 4): %s",
           s ? "ok" : one_line(odb_last_error()));
    odb_solver_destroy(s);
    opt(&o, &l, "threads", 16);     /* below a warp */
    expect_refusal(p, "gpu_stream2d", &o, "variant 'gpu_stream2d': option "
                   "'threads' must be in 32..1024, got 16",
                   "stream2d: 16 threads per block");
    opt(&o, &l, "threads", 64);     /* skew 2 streams one row a pass */
    opt(&o, &l, "skew", 2);
    opt(&o, &l, "band", 2);
    expect_refusal(p, "gpu_stream2d", &o, "skew 2 takes a band of 1 row",
                   "stream2d: skew 2 with a band of 2 rows");
    opt(&o, &l, "band", 1);
    opt(&o, &l, "carry", 4);        /* a stencil has 3 rows */
    expect_refusal(p, "gpu_stream2d", &o, "option 'carry' must be in 0..3, "
                   "got 4", "stream2d: 4 centre rows kept");
    opt(&o, &l, "skew", 1);
    opt(&o, &l, "carry", 1);
    expect_refusal(p, "gpu_stream2d", &o, "carry 1 needs skew 2",
                   "stream2d: carry with skew 1");
    opt(&o, &l, "skew", 2);
    opt(&o, &l, "carry", 0);   /* lag 1 reads stage l-1's row from registers */
    opt(&o, &l, "lag", 1);
    expect_refusal(p, "gpu_stream2d", &o, "lag 1 needs skew 2, a star",
                   "stream2d: lag 1 with no centre row kept");
    odb_problem_destroy(p);
  }
}

/*
** Tiles of a height across the stages: gpu_hexagonal at every even height
** from 2 to 2 s, gpu_trapezoid in rows of 1 to s - 1 stages; the odd and
** even tiles at their narrowest allowed width ((2 G - 1) d, G the levels
** of a half tile), a few components wider, of different widths, and one
** tile wider than n (half of these combinations, rotating over methods and
** heights; a quarter with ODB_GPU_TEST_QUICK); grids whose n no width
** divides; f in its cell form (BRUSS2D's gpu_cell_source) and, for the odd
** width choices, as f_j. Two steps each from
** a fresh random state against plain (state 1e-12, norm 1e-12 plus
** rounding). Then the refusals: a tile narrower than (2 G - 1) d, an odd
** hexagon height, a tile over shared memory.
*/
static void test_levels(odb_rng *r) {
  static const struct { long N, Nx; } shapes[] = { { 13, 7 }, { 29, 3 } };
  static const long extra[][2] = { { 0, 0 }, { 1, 7 }, { 13, 0 },
                                   { 1 << 20, 0 } };
  const char *meths[] = { "bs3", "verner65", "dopri5", "rk4" };
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
    odb_problem *p = bruss_nx(shapes[si].N, shapes[si].Nx);
    double *y0 = malloc((size_t)p->n * sizeof(double)), h = 1e-3;
    const char *cell = p->gpu_cell_source;
    int pass = 0, cases = 0;
    for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + odb_rng_uniform(r);
    for (int mi = 0; mi < 4; ++mi) {
      const odb_method *m = odb_method_find(meths[mi]);
      double *yc[2], ec[2], allow[2];
      odb_solver *c = plain_steps(p, meths[mi], y0, h, yc, ec, allow);
      if (!c) {
        tap_ok(0, "plain %s: %s", meths[mi], odb_last_error());
        continue;
      }
      for (int hex = 0; hex < 2; ++hex)
        for (int ht = hex ? 2 : 1; ht <= (hex ? 2 * m->s : m->s - 1);
             ht += hex ? 2 : 1)
          for (size_t xi = 0; xi < sizeof extra / sizeof extra[0]; ++xi) {
            const char *v = hex ? "gpu_hexagonal" : "gpu_trapezoid";
            long G = hex ? ht / 2 : ht, wmin = (2 * G - 1) * p->d;
            long w = wmin + extra[xi][0];
            long w2 = extra[xi][1] ? wmin + extra[xi][1] : 0;
            odb_solver_opts o;
            odb_solve_stats info;
            odb_solver *g;
            vlist l = { .n = 0 };
            int ok = 1;
            if ((ht + (int)xi + mi) % (quick ? 4 : 2)) continue;
            memset(&o, 0, sizeof o);
            opt(&o, &l, "height", ht);
            opt(&o, &l, "width", (double)w);
            if (w2) opt(&o, &l, "width2", (double)w2);
            opt(&o, &l, "threads", xi % 2 ? 64 : 128);
            if (xi % 2) p->gpu_cell_source = NULL;   /* f_j, not cells */
            g = solver(p, meths[mi], gpu, v, &o);
            p->gpu_cell_source = cell;
            ++cases;
            if (!g) {
              tap_ok(0, "%s %s %s height %d width %ld/%ld: %s", v, p->label,
                     meths[mi], ht, w, w2, one_line(odb_last_error()));
              continue;
            }
            odb_solver_set_state(g, 0.0, y0);
            poison(g);
            for (int k = 0; k < 2 && ok; ++k) {
              odb_status st = odb_solver_step(g, h, &info);
              double *yg = state(g), e = max_rel(yg, yc[k], p->n);
              double de = fabs(info.err_last - ec[k]);
              ok = st == ODB_OK && e <= 1e-12 &&
                   de <= 1e-12 * fabs(ec[k]) + allow[k];
              if (!ok)
                tap_ok(0, "%s %s %s height %d width %ld/%ld step %d: rel "
                       "err %.2e, norm %.9e vs %.9e%s%s", v, p->label,
                       meths[mi], ht, w, w2, k + 1,
                       e, info.err_last, ec[k], st == ODB_OK ? "" : ": ",
                       st == ODB_OK ? "" : one_line(odb_last_error()));
              free(yg);
            }
            pass += ok;
            odb_solver_destroy(g);
          }
      free(yc[0]);
      free(yc[1]);
      odb_solver_destroy(c);
    }
    tap_ok(pass == cases && cases > 0, "hexagons and trapezoid rows on %s: "
           "%d of %d configurations match plain over two steps", p->label,
           pass, cases);
    free(y0);
    odb_problem_destroy(p);
  }
  {
    odb_problem *p = bruss(9), *big = bruss(200);   /* d = 18, 400 */
    odb_solver_opts o;
    vlist l = { .n = 0 };
    memset(&o, 0, sizeof o);
    opt(&o, &l, "height", 4);
    opt(&o, &l, "width", 3 * 18 - 2);   /* whole cells (2 components), < 3 d */
    expect_refusal(p, "gpu_hexagonal", &o, "narrower than (2 G - 1) d",
                   "hexagonal: a tile narrower than 3 d at height 4");
    opt(&o, &l, "height", 3);
    opt_drop(&o, &l, "width");
    expect_refusal(p, "gpu_hexagonal", &o, "must be even",
                   "hexagonal: an odd height");
    opt(&o, &l, "height", 2);
    opt(&o, &l, "width", 60000);      /* the argument twice over 60800 doubles */
    expect_refusal(big, "gpu_hexagonal", &o, "shared memory",
                   "hexagonal: a tile over shared memory");
    odb_problem_destroy(big);
    odb_problem_destroy(p);
  }
}

/* ODEBENCH_DUMP_KERNELS receives the generated source. */
static void test_dump(void) {
  char dir[] = "/tmp/odb_dump_XXXXXX", path[512];
  odb_problem *p = bruss(5);
  odb_solver *s;
  struct dirent *de;
  DIR *d;
  int found = 0;
  if (!mkdtemp(dir)) {
    tap_ok(0, "mkdtemp");
    return;
  }
  setenv("ODEBENCH_DUMP_KERNELS", dir, 1);
  s = solver(p, "bs3", gpu, "gpu_reference", NULL);
  unsetenv("ODEBENCH_DUMP_KERNELS");
  tap_ok(s != NULL, "gpu_reference bs3 N=5: %s", s ? "ok" : odb_last_error());
  d = opendir(dir);
  while (d && (de = readdir(d))) {
    FILE *f;
    char buf[4096];
    size_t len;
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    f = fopen(path, "r");
    len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[len] = '\0';
    if (f) fclose(f);
    found += strstr(de->d_name, "gpu_reference") && strstr(buf, "odb_rhs");
    remove(path);
  }
  if (d) closedir(d);
  rmdir(dir);
  tap_ok(found == 1, "--dump-kernels wrote the generated source (%d file)",
         found);
  odb_solver_destroy(s);
  odb_problem_destroy(p);
}

/*
** Fixed steps with sync = call (no norm copied back between a call's
** steps): gpu_reference, gpu_stream2d and gpu_multiblock (barriers: it
** still reads its watchdog's flag every step) end where sync = step does,
** bit for bit, with the same last norm; a NaN in the state is found at the
** call's end.
*/
static void test_sync(odb_rng *r) {
  static const char *const vars[] = { "gpu_reference", "gpu_stream2d",
                                      "gpu_multiblock" };
  odb_problem *p = bruss_nx(41, 29);
  double *y0 = malloc((size_t)p->n * sizeof(double));
  for (long i = 0; i < p->n; ++i) y0[i] = 0.5 + odb_rng_uniform(r);
  for (int vi = 0; vi < 3; ++vi) {
    odb_solver_opts o, oc;
    odb_solver *a, *b;
    odb_solve_stats sa, sb;
    double *ya, *yb;
    int ok;
    memset(&o, 0, sizeof o);
    o.h_fixed = 1e-3;
    oc = o;
    oc.sync = ODB_SYNC_CALL;
    a = solver(p, "dopri5", gpu, vars[vi], &o);
    b = solver(p, "dopri5", gpu, vars[vi], &oc);
    if (!a || !b) {
      tap_ok(0, "sync = call, %s: %s", vars[vi], odb_last_error());
      odb_solver_destroy(a);
      odb_solver_destroy(b);
      continue;
    }
    odb_solver_set_state(a, 0.0, y0);
    odb_solver_set_state(b, 0.0, y0);
    ok = odb_solver_integrate(a, 12e-3, &sa) == ODB_OK &&
         odb_solver_integrate(b, 12e-3, &sb) == ODB_OK;
    ya = state(a);
    yb = state(b);
    tap_ok(ok && memcmp(ya, yb, (size_t)p->n * sizeof(double)) == 0 &&
           sb.steps == 12 && sa.err_last == sb.err_last && sb.err_last > 0,
           "sync = call, %s: 12 fixed steps equal sync = step's bit for bit, "
           "last norm %.6e vs %.6e", vars[vi], sb.err_last, sa.err_last);
    free(ya);
    free(yb);
    y0[p->n / 3] = NAN;
    odb_solver_set_state(b, 0.0, y0);
    ok = odb_solver_integrate(b, 12e-3, &sb) == ODB_ERR_NONFINITE;
    tap_ok(ok && strstr(odb_last_error(), "sync = call"),
           "sync = call, %s: a NaN is found at the call's end: %s", vars[vi],
           one_line(odb_last_error()));
    y0[p->n / 3] = 0.5;
    odb_solver_destroy(a);
    odb_solver_destroy(b);
  }
  free(y0);
  odb_problem_destroy(p);
}

/*
** One adaptive integration of p from a random state on variant with
** options o, in two integrate calls (to t1 / 2, then t1); the final state,
** the counts and the last norm in *y, *st (the second call's) and *acc.
*/
static odb_status devctl_run(odb_problem *p, const char *variant,
                             const char *method, const odb_solver_opts *o,
                             const double *y0, double t1, double **y,
                             odb_solve_stats *st, long *acc) {
  odb_solver *g = solver(p, method, gpu, variant, o);
  odb_status s1;
  *y = NULL;
  *acc = 0;
  if (!g) return ODB_ERR_BACKEND;
  odb_solver_set_state(g, 0.0, y0);
  s1 = odb_solver_integrate(g, t1 / 2, st);
  *acc = st->accepted;
  if (s1 == ODB_OK) s1 = odb_solver_integrate(g, t1, st);
  *acc += st->accepted;
  *y = state(g);
  odb_solver_destroy(g);
  return s1;
}

/*
** The step controller on the device (advance: every GPU variant but
** gpu_multiblock, the default for adaptive steps) against the host's (sync
** = step) on the same variant: the same accepted and rejected steps, the same state to 1e-12
** and the last norm to 1e-4 relative plus 1e-8 (the two kernels round
** differently, and the estimate, a difference of stages, turns 1e-16 in
** the state into up to 1e-7 at tolerance 1e-9, and into 2e-4 of a norm of
** 1e-9 after the short step that lands on t1), from a random state, with and without rejections (h0 far too
** large, tolerance 1e-9), stream2d at lag 1 and lag 2, on an odd grid; plus plain
** on the CPU to 1e-10. hmin above the steps, max_steps below them and
** sync = call on a variant without the controller are refused.
*/
static void test_devctl(odb_rng *r) {
  static const char *const ms[] = { "bs3", "dopri5", "verner65" };
  static const char *const vs[] = { "gpu_stream2d", "gpu_reference",
                                    "gpu_unfused", "gpu_trapezoid",
                                    "gpu_hexagonal" };
  odb_problem *p0 = bruss_nx(29, 23), *pw = bruss_nx(29, 41), *p = p0;
  double *y0 = malloc((size_t)pw->n * sizeof(double));
  double t1 = quick ? 0.05 : 0.2;
  for (long i = 0; i < pw->n; ++i) y0[i] = 0.5 + 2.0 * odb_rng_uniform(r);
  for (int vi = 0; vi < 5; ++vi)
    for (int mi = 0; mi < 3; ++mi)
      for (int c = 0; c < (vi == 0 ? 6 : 2); ++c) {
        odb_solver_opts od, oh, oc;
        odb_solve_stats sd, sh, sc;
        double *yd, *yh, *yc, ed, ec;
        long ad = 0, ah = 0;
        odb_solver *cs;
        odb_status st;
        vlist l = { .n = 0 };
        memset(&od, 0, sizeof od);
        if (c & 1) {
          od.h0 = 0.2;
          od.rtol = od.atol = 1e-9;
        }
        if (c & 2) opt(&od, &l, "lag", 2);
        p = c >= 4 ? pw : p0;   /* 41 columns: strips of 32 threads */
        if (c >= 4) {           /* in clusters of 2 blocks */
          opt(&od, &l, "lag", 1);
          opt(&od, &l, "threads", 32);
          opt(&od, &l, "cluster", 2);
        }
        od = gpu_opts(vs[vi], ms[mi], p, &od, &l);
        oh = od;
        od.sync = ODB_SYNC_CALL;   /* the device's, default or not */
        oh.sync = ODB_SYNC_STEP;
        st = devctl_run(p, vs[vi], ms[mi], &od, y0, t1, &yd, &sd, &ad);
        if (st != ODB_OK && may_refuse(vs[vi], odb_last_error())) {
          free(yd);
          continue;
        }
        if (st == ODB_OK)
          st = devctl_run(p, vs[vi], ms[mi], &oh, y0, t1, &yh, &sh, &ah);
        else
          yh = NULL;
        oc = oh;   /* plain takes no variant options */
        oc.vopts = NULL;
        oc.nvopts = 0;
        cs = solver(p, ms[mi], cpu, "plain", &oc);
        if (!cs) {
          st = ODB_ERR_INTERNAL;
        } else {
          odb_solver_set_state(cs, 0.0, y0);
          if (odb_solver_integrate(cs, t1 / 2, &sc) != ODB_OK ||
              odb_solver_integrate(cs, t1, &sc) != ODB_OK)
            st = ODB_ERR_INTERNAL;
        }
        yc = cs ? state(cs) : NULL;
        ed = yd && yh ? max_rel(yd, yh, p->n) : INFINITY;
        ec = yd && yc ? max_rel(yd, yc, p->n) : INFINITY;
        tap_ok(st == ODB_OK && ad == ah && sd.rejected == sh.rejected &&
               ed <= 1e-12 && ec <= 1e-10 && ad >= 2 &&
               fabs(sd.err_last - sh.err_last) <=
                   1e-4 * sh.err_last + 1e-8 &&
               sd.t == t1,
               "devctl %s %s%s%s: %ld accepted, %ld/%ld rejected in the last "
               "call (host: %ld, %ld/%ld), rel err %.2e to the host's, %.2e "
               "to plain, last norm %.9e (host %.9e), t %.17g%s%s", vs[vi],
               ms[mi], c & 1 ? " h0 0.2 tol 1e-9" : "",
               vi ? "" : c >= 4 ? " lag 1, clusters of 2" : c & 2 ? " lag 2"
               : " lag 1", ad, sd.rejected,
               sd.steps, ah, sh.rejected, sh.steps, ed, ec, sd.err_last,
               sh.err_last, sd.t, st == ODB_OK ? "" : ": ",
               st == ODB_OK ? "" : one_line(odb_last_error()));
        free(yd);
        free(yh);
        free(yc);
        odb_solver_destroy(cs);
      }
  {
    odb_solver_opts o;
    odb_solve_stats sg;
    odb_solver *g;
    odb_status st;
    memset(&o, 0, sizeof o);
    o.hmin = 1.0;
    o.h0 = 2.0;   /* rejected on the device; the next h falls under hmin */
    g = solver(p, "dopri5", gpu, "gpu_stream2d", &o);
    if (g) odb_solver_set_state(g, 0.0, y0);
    st = g ? odb_solver_integrate(g, 5.0, &sg) : ODB_ERR_BACKEND;
    tap_ok(st == ODB_ERR_STEP_SIZE && strstr(odb_last_error(), "below hmin"),
           "devctl: hmin 1 is refused: %s", one_line(odb_last_error()));
    odb_solver_destroy(g);
    memset(&o, 0, sizeof o);
    o.max_steps = 5;
    g = solver(p, "dopri5", gpu, "gpu_stream2d", &o);
    if (g) odb_solver_set_state(g, 0.0, y0);
    st = g ? odb_solver_integrate(g, 1.0, &sg) : ODB_ERR_BACKEND;
    tap_ok(st == ODB_ERR_MAX_STEPS && sg.steps == 5 && sg.t < 1.0,
           "devctl: max_steps 5 stops after 5 attempts at t = %g: %s", sg.t,
           one_line(odb_last_error()));
    odb_solver_destroy(g);
    memset(&o, 0, sizeof o);
    o.sync = ODB_SYNC_CALL;
    g = solver(p, "dopri5", gpu, "gpu_multiblock", &o);
    tap_ok(!g && strstr(odb_last_error(), "needs the step controller on the "
                                          "device"),
           "devctl: sync = call, adaptive, on gpu_multiblock is refused: %s",
           one_line(odb_last_error()));
    odb_solver_destroy(g);
  }
  free(y0);
  odb_problem_destroy(p0);
  odb_problem_destroy(pw);
}

int main(void) {
  odb_ctx_opts o = {0};
  odb_rng r;
  uint64_t seed = (uint64_t)time(NULL);
  const char *q = getenv("ODB_GPU_TEST_QUICK");
  quick = q && *q == '1';
  o.seed = seed;
  o.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&o, &ctx) != ODB_OK) {
    printf("Bail out! odb_ctx_create: %s\n", odb_last_error());
    return 1;
  }
  if (odb_kernels_register(ctx) != ODB_OK ||
      !(gpu = odb_ctx_backend(ctx, "cuda"))) {
    for (int i = 0; i < ctx->nnotes; ++i) tap_diag("%s", ctx->backend_notes[i]);
    odb_ctx_destroy(ctx);
    printf("1..0 # SKIP no GPU\n");
    return 77;
  }
  cpu = odb_ctx_backend(ctx, "cpu");
  tap_diag("seed %llu", (unsigned long long)seed);
  odb_rng_seed(&r, seed);
  only_lag1 = getenv("ODB_GPU_TEST_ONLY") &&
              strcmp(getenv("ODB_GPU_TEST_ONLY"), "lag1") == 0;
  if (getenv("ODB_GPU_TEST_ONLY") &&
      (strcmp(getenv("ODB_GPU_TEST_ONLY"), "stream2d") == 0 || only_lag1)) {
    test_stream2d(&r);     /* while tuning that variant */
    test_sync(&r);
    test_devctl(&r);
    odb_ctx_destroy(ctx);
    return tap_done();
  }
  only_cluster = getenv("ODB_GPU_TEST_ONLY") &&
                 strcmp(getenv("ODB_GPU_TEST_ONLY"), "cluster") == 0;
  if (only_cluster) {    /* stream2d in clusters, and the controller */
    test_stream2d(&r);
    test_devctl(&r);
    odb_ctx_destroy(ctx);
    return tap_done();
  }
  if (getenv("ODB_GPU_TEST_ONLY") &&
      strcmp(getenv("ODB_GPU_TEST_ONLY"), "devctl") == 0) {
    long rej = 0;
    test_devctl(&r);       /* the step controller on the device */
    test_adaptive(37, NULL, "", &rej);
    odb_ctx_destroy(ctx);
    return tap_done();
  }
  if (getenv("ODB_GPU_TEST_ONLY") &&
      strcmp(getenv("ODB_GPU_TEST_ONLY"), "levels") == 0) {
    test_levels(&r);
    odb_ctx_destroy(ctx);
    return tap_done();
  }
  test_steps(3, &r);     /* n = 18: fewer components than a warp */
  test_steps(37, &r);    /* n = 2738 */
  if (!quick) test_steps(301, &r);   /* n = 181202: many blocks */
  {
    odb_solver_opts o;
    long rej = 0;
    test_adaptive(37, NULL, "", &rej);
    memset(&o, 0, sizeof o);
    o.h0 = 0.2;
    o.rtol = o.atol = 1e-9;
    rej = 0;
    test_adaptive(37, &o, " (h0 0.2, tol 1e-9)", &rej);
    tap_ok(rej > 0, "the runs with h0 0.2 had rejections (%ld)", rej);
  }
  test_multiblock(&r);
  test_stream2d(&r);
  test_sync(&r);
  test_devctl(&r);
  test_levels(&r);
  test_refusals();
  test_dump();
  odb_ctx_destroy(ctx);
  return tap_done();
}
