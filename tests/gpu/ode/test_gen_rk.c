/* test_gen_rk.c - the generated RK kernels without a device (TAP):
   gpu_stream2d's plans and refusals, and that NVRTC compiles the kernels
   of every layout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "odebench.h"
#include "odb_config.h"
#if ODB_HAVE_CUDA
#include "odb_gen_rk.h"
#include "odb_nvrtc.h"
#include "tmp_cache.h"

/* BRUSS2D on an N x Nx grid (odb_problem_create's parameters). */
static odb_problem *bruss(double N, double Nx) {
  odb_param_value v[2] = { { .name = "N", .num = N },
                           { .name = "Nx", .num = Nx } };
  odb_problem *p = NULL;
  return odb_problem_create("bruss2d", v, 2, &p) == ODB_OK ? p : NULL;
}

/*
** One check that NVRTC compiles all n sources (sm_90, two threads) into an
** empty temporary kernel cache; a failure when fewer than n were generated
** (nsrc); a skip when the kernel cache is off.
*/
static void check_compiles(char *const *src, int n, int nsrc,
                           const char *what) {
  int compiled = -1;
  if (getenv("ODEBENCH_KERNEL_CACHE") &&
      strcmp(getenv("ODEBENCH_KERNEL_CACHE"), "off") == 0) {
    tap_ok(1, "NVRTC compiles %s # SKIP the kernel cache is off", what);
  } else if (nsrc == n) {
    tmp_cache tc;
    tmp_cache_open(&tc);
    if (tc.ok)
      compiled = odb_nvrtc_prefetch((const char *const *)src, n, 9, 0, 2);
    tmp_cache_close(&tc);
    tap_ok(compiled == n, "NVRTC compiles %d of %d: %s for sm_90", compiled,
           n, what);
  } else {
    tap_ok(0, "NVRTC compiles %s: %d of %d generated: %s", what, nsrc, n,
           odb_last_error());
  }
}

/*
** Skew 2 for four methods (with and without an estimate, FSAL or not),
** skew 1 once, skew 2 keeping 1, 2 and 3 centre rows in registers, half
** of them storing ynew's rows in the last stage: the plan's one kernel,
** its shared memory ((2 s + 4 rows of y, BRUSS2D being a star, plus 4 a
** stage) x comps x (threads + 2) doubles for skew 2), its blocks: a grid 23
** columns wide fits a block of 64 threads twice (skew 2: whole rows, two
** sub-strips a block, each a chunk of 9 rows), one 100 wide takes strips
** of 64 - 2 s columns; then NVRTC compiles every source (sm_90, two
** threads, an empty cache). Then the refusals.
*/
static void check_stream2d(void) {
  static const char *const meths[] = { "bs3", "dopri5", "verner65", "rk4" };
  enum { NSRC = 8 };
  char *src[NSRC] = { NULL };
  odb_problem *p = bruss(37, 23), *wide = bruss(37, 100);
  int nsrc = 0;
  for (int i = 0; p && wide && i < NSRC; ++i) {
    const odb_method *m = odb_method_find(meths[i % 4]);
    odb_gen_opts o;
    odb_gen_plan pl;
    long S = m ? m->s : 0, YR, strips, ntiles, chunks;
    int whole;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.rows = 9;
    o.skew = i == 4 ? 1 : 2;
    o.band = i == 4 ? 2 : 1;
    o.carry = i > 4 ? i - 4 : 0;
    o.early_store = i / 2 % 2;   /* the last stage stores ynew's row */
    YR = o.skew == 2 ? 2 * S + 4 : S + o.band * 3 + 2;   /* a star: +1 */
    whole = o.skew == 2 && i % 2 == 0;   /* odd: the wide grid */
    strips = i % 2 ? (100 + 64 - 2 * S - 1) / (64 - 2 * S) : 1;
    chunks = whole ? 6 : 5;
    ntiles = whole ? 3 : strips * 5;
    odb_status st = m ? odb_gen_rk(i % 2 ? wide : p, m, ODB_GEN_STREAM2D, &o,
                                   &src[i], &pl)
                      : ODB_ERR_NAME;
    size_t want = (size_t)((YR + (S - 1) * (o.skew == 2 ? 4 : o.band + 2)) *
                           2 * 66) * sizeof(double);
    tap_ok(st == ODB_OK && pl.nlaunch == 1 &&
           strcmp(pl.launch[0].kernel, "k_s2d") == 0 &&
           pl.launch[0].smem == want && pl.strips == strips &&
           pl.chunks == chunks && pl.subs == (whole ? 2 : 1) &&
           pl.ntiles == ntiles,
           "stream2d %s %s skew %d carry %d: one kernel k_s2d, %zu bytes of "
           "shared memory (want %zu), %ld strip(s) x %ld chunks in %ld "
           "blocks of %d sub-strips%s%s", i % 2 ? "37x100" : "37x23",
           meths[i % 4], o.skew, o.carry, st == ODB_OK ? pl.launch[0].smem : 0, want,
           st == ODB_OK ? pl.strips : 0, st == ODB_OK ? pl.chunks : 0,
           st == ODB_OK ? pl.ntiles : 0, st == ODB_OK ? pl.subs : 0,
           st == ODB_OK ? "" : ": ", st == ODB_OK ? "" : odb_last_error());
    nsrc += st == ODB_OK;
  }
  for (int k = 0; p && k < 4; ++k) {   /* refusals */
    static const struct { int skew, band, carry; const char *want; } bad[4] = {
      { 2, 2, 0, "skew 2 takes a band of 1 row" },
      { 3, 1, 0, "must be 1 (a barrier a stage) or 2" },
      { 2, 1, 4, "carry (4) must be 0..3" },
      { 1, 1, 1, "carry 1 needs skew 2" } };
    odb_gen_opts o;
    odb_gen_plan pl;
    char *s = NULL;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.skew = bad[k].skew;
    o.band = bad[k].band;
    o.carry = bad[k].carry;
    tap_ok(odb_gen_rk(p, odb_method_find("bs3"), ODB_GEN_STREAM2D, &o, &s,
                      &pl) == ODB_ERR_ARG &&
           strstr(odb_last_error(), bad[k].want),
           "skew %d, a band of %d, carry %d refused: %s", bad[k].skew,
           bad[k].band, bad[k].carry, odb_last_error());
    free(s);
  }
  check_compiles(src, NSRC, nsrc, "the stream2d kernels");
  for (int i = 0; i < NSRC; ++i) free(src[i]);
  odb_problem_destroy(p);
  odb_problem_destroy(wide);
}

/*
** A cell function of three components on a 9-point stencil (the corners
** too), mirrored at the edges: what BRUSS2D does not exercise (an odd
** count of components, so 8-byte copies and loads; rows and columns off
** the centre together).
*/
static const char cell9[] =
  "__device__ __forceinline__ void odb_rhs_cell(odb_idx i, odb_idx j, "
  "double t,\n"
  "                                             const odb_cell_in &in,\n"
  "                                             double *f) {\n"
  "  const int up = i > 0 ? -1 : 1, dn = i < 36 ? 1 : -1;\n"
  "  const int lf = j > 0 ? -1 : 1, rt = j < 22 ? 1 : -1;\n"
  "  for (int c = 0; c < 3; ++c) {\n"
  "    const double s = ODB_Y(up, lf, c) + ODB_Y(up, rt, c) + "
  "ODB_Y(dn, lf, c)\n"
  "                     + ODB_Y(dn, rt, c);\n"
  "    const double e = ODB_Y(up, 0, c) + ODB_Y(dn, 0, c) + ODB_Y(0, lf, c)\n"
  "                     + ODB_Y(0, rt, c);\n"
  "    f[c] = 0.25 * s + 0.5 * e - 3.0 * ODB_Y(0, 0, c)\n"
  "           + t * ODB_Y(0, 0, (c + 1) % 3);\n"
  "  }\n"
  "}\n";

/* BRUSS2D's 37 x 23 problem b with cell9 and 3 components in place of its
   cells (not a star). */
static odb_problem cell9_problem(const odb_problem *b) {
  odb_problem q = *b;
  q.n = 37L * 23 * 3;
  q.grid_comps = 3;
  q.gpu_cell_source = cell9;
  q.grid_star = 0;
  return q;
}

/*
** That cell function on a 37 x 23 grid of 3 components (BRUSS2D's
** problem with the grid and the cell source replaced): skew 2 with 0 to 3
** centre rows kept and skew 1 generate and compile (sm_90, empty cache).
*/
static void check_cell9(void) {
  enum { NSRC = 5 };
  char *src[NSRC] = { NULL };
  odb_problem *b = bruss(37, 23);
  odb_problem q;
  int nsrc = 0;
  if (!b) {
    tap_ok(0, "9-point cells: %s", odb_last_error());
    return;
  }
  q = cell9_problem(b);
  for (int i = 0; i < NSRC; ++i) {
    odb_gen_opts o;
    odb_gen_plan pl;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.rows = 9;
    o.skew = i < 4 ? 2 : 1;
    o.band = i < 4 ? 1 : 2;
    o.carry = i < 4 ? i : 0;
    nsrc += odb_gen_rk(&q, odb_method_find("dopri5"), ODB_GEN_STREAM2D, &o,
                       &src[i], &pl) == ODB_OK;
  }
  check_compiles(src, NSRC, nsrc, "9-point cells of 3 components (skew 2 "
                 "keeping 0-3 centre rows, skew 1)");
  for (int i = 0; i < NSRC; ++i) free(src[i]);
  {   /* declared a star, it reads a diagonal: the guard's call stays */
    odb_gen_opts o;
    odb_gen_plan pl;
    char *s = NULL;
    int compiled = -1;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.skew = 2;
    q.grid_star = 1;
    if (odb_gen_rk(&q, odb_method_find("bs3"), ODB_GEN_STREAM2D, &o, &s,
                   &pl) == ODB_OK && strstr(s, "#define ODB_STAR 1")) {
      tmp_cache tc;
      tmp_cache_open(&tc);
      if (tc.ok) compiled = odb_nvrtc_prefetch((const char *const *)&s, 1, 9,
                                               0, 1);
      tmp_cache_close(&tc);
    }
    tap_ok(compiled == 0 || (compiled < 0 && getenv("ODEBENCH_KERNEL_CACHE")),
           "9-point cells declared a star (grid_star) do not compile: the "
           "call to the undefined odb_grid_star_problem_reads_a_diagonal_"
           "neighbour stays (%d compiled)", compiled);
    free(s);
  }
  odb_problem_destroy(b);
}

/*
** A grid problem with a cell source and no gpu_source (what ob.problem{grid=,
** cell_source=} makes): gpu_stream2d generates and compiles without it, at
** lag 2 with the 9-point cells and at lag 1 with BRUSS2D's star cells, and
** the source holds no odb_rhs; the kinds that need f_j refuse, naming it.
*/
static void check_cell_only(void) {
  char *src[2] = { NULL };
  odb_problem *b = bruss(37, 23);
  odb_problem q9, q5;
  int nsrc = 0, norhs = 1;
  if (!b) {
    tap_ok(0, "cells only: %s", odb_last_error());
    return;
  }
  q9 = cell9_problem(b);
  q9.gpu_source = NULL;
  q5 = *b;
  q5.gpu_source = NULL;
  for (int i = 0; i < 2; ++i) {
    odb_gen_opts o;
    odb_gen_plan pl;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.rows = 9;
    o.skew = 2;
    o.band = 1;
    o.lag = i == 0 ? 2 : 1;
    o.carry = 3;
    if (odb_gen_rk(i == 0 ? &q9 : &q5, odb_method_find("dopri5"),
                   ODB_GEN_STREAM2D, &o, &src[i], &pl) == ODB_OK) {
      ++nsrc;
      if (strstr(src[i], "odb_rhs(")) norhs = 0;
    } else {
      tap_diag("cells only: %s", odb_last_error());
    }
  }
  tap_ok(nsrc == 2 && norhs, "cells only (no gpu_source): gpu_stream2d "
         "generates at lag 2 (9 points) and lag 1 (star), %d of 2, without "
         "odb_rhs", nsrc);
  check_compiles(src, 2, nsrc, "gpu_stream2d from cells only");
  for (int i = 0; i < 2; ++i) free(src[i]);
  {
    odb_gen_opts o;
    odb_gen_plan pl;
    char *s = NULL;
    odb_status st;
    memset(&o, 0, sizeof o);
    o.threads = 128;
    st = odb_gen_rk(&q5, odb_method_find("dopri5"), ODB_GEN_REFERENCE, &o,
                    &s, &pl);
    tap_ok(st != ODB_OK && strstr(odb_last_error(), "has no GPU source of "
                                  "f_j"),
           "cells only: gpu_reference refuses: %s",
           st != ODB_OK ? odb_last_error() : "generated");
    free(s);
  }
  odb_problem_destroy(b);
}

/*
** Lag 1 (stage l one row behind stage l-1, the stages in order, a barrier
** every pass): BRUSS2D's kernels for bs3, DOPRI5 and Verner keeping 1 to 3
** centre rows generate with one register set per stage boundary (no
** parity 1 names) and a barrier in each of the 4 unrolled passes, a y
** ring of s + 4 rows, and compile (sm_90); lag 1 with no centre row kept,
** with skew 1, on a stencil that is not a star, and lag 3 are refused.
*/
static void check_lag1(void) {
  static const char *const meths[3] = { "bs3", "dopri5", "verner65" };
  char *src[3] = { NULL };
  odb_problem *p = bruss(37, 23), q;
  int nsrc = 0;
  for (int i = 0; p && i < 3; ++i) {
    const odb_method *m = odb_method_find(meths[i]);
    odb_gen_opts o;
    odb_gen_plan pl;
    long S = m ? m->s : 0;
    size_t want = (size_t)((S + 4 + (S - 1) * 4) * 2 * 66) * sizeof(double);
    int bars = 0;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.rows = 9;
    o.skew = 2;
    o.lag = 1;
    o.carry = i + 1;
    o.early_store = i != 1;
    if (m && odb_gen_rk(p, m, ODB_GEN_STREAM2D, &o, &src[i], &pl) == ODB_OK) {
      const char *end = strstr(src[i], "cp.async.wait_group 0;");   /* tail */
      for (const char *x = strstr(src[i], "i0 += 4"); x && (!end || x < end);
           x = strstr(x + 1, "__syncthreads();"))
        ++bars;
      --bars;   /* the loop's head */
    }
    tap_ok(src[i] && bars == 4 && !strstr(src[i], "s1_1_") &&
           strstr(src[i], "odb_f0_0") && pl.launch[0].smem == want,
           "lag 1 %s keeping %d centre rows: a barrier each of 4 passes "
           "(%d), one state a boundary, %zu bytes of shared memory (want "
           "%zu)%s%s", meths[i], i + 1, bars, src[i] ? pl.launch[0].smem : 0,
           want, src[i] ? "" : ": ", src[i] ? "" : odb_last_error());
    nsrc += src[i] != NULL;
  }
  check_compiles(src, 3, nsrc, "the lag-1 stream2d kernels");
  for (int i = 0; i < 3; ++i) free(src[i]);
  for (int k = 0; p && k < 4; ++k) {
    static const struct { int skew, carry, lag, star; const char *want; }
    bad[4] = { { 2, 0, 1, 1, "lag 1 needs skew 2, a star stencil" },
               { 1, 0, 1, 1, "lag 1 needs skew 2" },
               { 2, 2, 1, 0, "no star stencil" },
               { 2, 1, 3, 1, "lag (3) must be 1 or 2" } };
    odb_gen_opts o;
    odb_gen_plan pl;
    char *x = NULL;
    q = *p;
    q.grid_star = bad[k].star;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.skew = bad[k].skew;
    o.band = 1;
    o.carry = bad[k].carry;
    o.lag = bad[k].lag;
    tap_ok(odb_gen_rk(&q, odb_method_find("bs3"), ODB_GEN_STREAM2D, &o, &x,
                      &pl) == ODB_ERR_ARG &&
           strstr(odb_last_error(), bad[k].want),
           "skew %d, carry %d, lag %d%s refused: %s", bad[k].skew,
           bad[k].carry, bad[k].lag, bad[k].star ? "" : " (not a star)",
           odb_last_error());
    free(x);
  }
  odb_problem_destroy(p);
}

/*
** The step controller in the other layouts without barriers: unfused,
** reference, trapezoid and hexagons for DOPRI5 (FSAL: stage 0's launches
** in two forms) and Verner. Each generates the launches of the same
** layout without the controller, every kernel opens with the controller's
** prologue, the last launch finishes the norm (where the controller
** runs), and NVRTC compiles them.
*/
static void check_devctl_layouts(void) {
  static const char *const meths[2] = { "dopri5", "verner65" };
  static const odb_gen_kind kinds[4] = { ODB_GEN_UNFUSED, ODB_GEN_REFERENCE,
                                         ODB_GEN_TRAPEZOID, ODB_GEN_HEXAGON };
  char *src[8] = { NULL };
  odb_problem *p = bruss(37, 8);        /* n = 592, d = 16 */
  int nsrc = 0;
  for (int i = 0; p && i < 8; ++i) {
    const odb_method *m = odb_method_find(meths[i % 2]);
    odb_gen_opts o;
    odb_gen_plan pl, pc;
    char *plain = NULL;
    int ok, heads = 0, pro = 0;
    memset(&o, 0, sizeof o);
    o.threads = 128;
    o.smem_max = 96 * 1024;
    if (kinds[i / 2] == ODB_GEN_HEXAGON) {
      o.tile_w = 256;
      o.tile_w2 = 200;
      o.tile_h = 2;
    }
    ok = odb_gen_rk(p, m, kinds[i / 2], &o, &plain, &pl) == ODB_OK;
    o.devctl = 1;
    ok = ok && odb_gen_rk(p, m, kinds[i / 2], &o, &src[i], &pc) == ODB_OK;
    for (const char *x = ok ? strstr(src[i], "__global__") : NULL; x;
         x = strstr(x + 1, "__global__"))
      ++heads;
    for (const char *x = ok ? strstr(src[i], "if (odb_done || odb_cur != "
                                             "(int)odb_a0.par) return;")
                            : NULL;
         x; x = strstr(x + 1, "if (odb_done || odb_cur != (int)odb_a0.par)"))
      ++pro;
    tap_ok(ok && pc.nlaunch == pl.nlaunch && heads > 0 && pro == heads &&
           pc.launch[pc.nlaunch - 1].reduce,
           "devctl layout %d %s: %d launches as without it, the prologue in "
           "%d of %d kernels, the last launch (%s) finishes the norm%s%s",
           (int)kinds[i / 2], meths[i % 2], ok ? pc.nlaunch : 0, pro, heads,
           ok ? pc.launch[pc.nlaunch - 1].kernel : "-", ok ? "" : ": ",
           ok ? "" : odb_last_error());
    free(plain);
    nsrc += src[i] != NULL;
  }
  check_compiles(src, 8, nsrc, "the other layouts with the controller");
  for (int i = 0; i < 8; ++i) free(src[i]);
  odb_problem_destroy(p);
}

/* Skew-2 options of a small stream2d kernel: 64 threads, 9 rows a block,
   3 centre rows kept, the lag and devctl given. */
static odb_gen_opts s2d_small(int lag, int devctl) {
  odb_gen_opts o;
  memset(&o, 0, sizeof o);
  o.threads = 64;
  o.rows = 9;
  o.skew = 2;
  o.lag = lag;
  o.carry = 3;
  o.devctl = devctl;
  return o;
}

/*
** The step controller across GPU ranks (xnorm): gpu_stream2d with devctl
** and xnorm for bs3 and verner65 sums the norm over the ranks before the
** controller takes it and divides by the whole system's n (norm_n), the
** kernel without xnorm has neither, NVRTC compiles both; xnorm without
** devctl and a norm_n below 0 are refused.
*/
static void check_xnorm(void) {
  static const char *const meths[2] = { "bs3", "verner65" };
  char *src[4] = { NULL };
  odb_problem *p = bruss(37, 23);   /* n = 1702: norm_n 4 n, a slab's */
  int nsrc = 0;
  for (int i = 0; p && i < 2; ++i) {
    const odb_method *m = odb_method_find(meths[i]);
    odb_gen_opts o = s2d_small(1, 1);
    odb_gen_plan pl, px;
    char want[64];
    const char *sum, *after;
    int ok = odb_gen_rk(p, m, ODB_GEN_STREAM2D, &o, &src[2 * i], &pl) ==
             ODB_OK;
    o.xnorm = 1;
    o.norm_n = 4 * p->n;
    ok = ok && odb_gen_rk(p, m, ODB_GEN_STREAM2D, &o, &src[2 * i + 1], &px) ==
                   ODB_OK;
    snprintf(want, sizeof want, "#define ODB_NORM_N ((odb_idx)%ld)",
             4 * p->n);
    sum = ok ? strstr(src[2 * i + 1], "v = odb_xnorm_sum(a.xn, v, a.ctl);")
             : NULL;
    after = sum ? strstr(sum, "odb_ctl_after(a.ctl, v, a.h);") : NULL;
    tap_ok(ok && px.nlaunch == pl.nlaunch && sum && after &&
           strstr(src[2 * i + 1], want) &&
           !strstr(src[2 * i], "odb_xnorm_sum(a.xn") &&
           strstr(src[2 * i], "sqrt(v / (double)ODB_NORM_N)"),
           "xnorm %s: the sum over the ranks before the controller, norm_n "
           "%ld; none without xnorm%s%s", meths[i], 4 * p->n,
           ok ? "" : ": ", ok ? "" : odb_last_error());
    nsrc += (src[2 * i] != NULL) + (src[2 * i + 1] != NULL);
  }
  check_compiles(src, 4, nsrc, "the stream2d kernels with and without the "
                 "norm over ranks");
  for (int i = 0; i < 4; ++i) free(src[i]);
  for (int k = 0; p && k < 2; ++k) {
    odb_gen_opts o = s2d_small(1, k);
    odb_gen_plan pl;
    char *x = NULL;
    o.xnorm = 1 - k;
    o.norm_n = k ? -1 : 0;
    tap_ok(odb_gen_rk(p, odb_method_find("bs3"), ODB_GEN_STREAM2D, &o, &x,
                      &pl) != ODB_OK && !x,
           "%s is refused: %s", k ? "norm_n -1" : "xnorm without devctl",
           odb_last_error());
    free(x);
  }
  odb_problem_destroy(p);
}

/*
** The kernel with the step controller (devctl): gpu_stream2d at lag 1 and
** lag 2 for bs3 and verner65, with the same plan (grid, shared memory) as
** without it, a head that returns once the controller is done or holds
** the state in the other buffer and takes h from it, the controller's
** call where the norm is finished; NVRTC
** compiles them; then the other layouts (check_devctl_layouts). Refused
** for gpu_multiblock (barriers) and for a method without an estimate.
*/
static void check_devctl(void) {
  static const char *const meths[2] = { "bs3", "verner65" };
  char *src[4] = { NULL };
  odb_problem *p = bruss(37, 23);
  int nsrc = 0;
  for (int i = 0; p && i < 4; ++i) {
    const odb_method *m = odb_method_find(meths[i / 2]);
    odb_gen_opts o = s2d_small(1 + i % 2, 0);
    odb_gen_plan pl, pc;
    char *plain = NULL;
    int ok = odb_gen_rk(p, m, ODB_GEN_STREAM2D, &o, &plain, &pl) == ODB_OK;
    o.devctl = 1;
    ok = ok && odb_gen_rk(p, m, ODB_GEN_STREAM2D, &o, &src[i], &pc) == ODB_OK;
    tap_ok(ok && pc.nlaunch == 1 && pc.ntiles == pl.ntiles &&
           pc.launch[0].smem == pl.launch[0].smem &&
           strstr(src[i], "if (odb_done || odb_cur != (int)odb_a0.par) "
                          "return;") &&
           strstr(src[i], "a.h = odb_h;") &&
           strstr(src[i], "odb_ctl_after(a.ctl, v, a.h);") &&
           !strstr(plain, "odb_ctl_after(a.ctl"),
           "devctl %s lag %d: the plan of the kernel without it (%ld blocks, "
           "%zu bytes), h from the controller, its update after the norm%s%s",
           meths[i / 2], 1 + i % 2, ok ? pc.ntiles : 0L,
           ok ? pc.launch[0].smem : (size_t)0, ok ? "" : ": ",
           ok ? "" : odb_last_error());
    free(plain);
    nsrc += src[i] != NULL;
  }
  check_compiles(src, 4, nsrc, "the stream2d kernels with the controller");
  for (int i = 0; i < 4; ++i) free(src[i]);
  check_devctl_layouts();
  for (int k = 0; p && k < 2; ++k) {
    odb_gen_opts o;
    odb_gen_plan pl;
    char *x = NULL;
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.skew = 2;
    o.lag = 2;
    o.devctl = 1;
    o.blocks = 2;
    o.stride = o.barrier = 'A';
    o.wg_per_tile = 4;
    o.groups = 2;
    o.watchdog = 2.0;
    tap_ok(odb_gen_rk(p, odb_method_find(k ? "rk4" : "dopri5"),
                      k ? ODB_GEN_STREAM2D : ODB_GEN_MULTIBLOCK, &o, &x,
                      &pl) == ODB_ERR_UNSUPPORTED &&
           strstr(odb_last_error(), "needs a variant without barriers (not "
                                    "gpu_multiblock) and a method with an "
                                    "error estimate"),
           "devctl refused for %s: %s", k ? "rk4 (no estimate)"
                                         : "gpu_multiblock",
           odb_last_error());
    free(x);
  }
  odb_problem_destroy(p);
}

/*
** The other layouts, which otherwise only meet NVRTC on a GPU machine:
** unfused, reference, trapezoid (full and partial height), multi-block
** with barriers A, B and C and each stride, and hexagons, for a method
** without an error estimate (rk4), an FSAL one (dopri5) and the widest
** (verner65), on a BRUSS2D grid whose n no tile divides; each source
** generates, has a plan, and NVRTC compiles it (sm_90, empty cache).
*/
static void check_layouts(void) {
  static const char *const meths[3] = { "rk4", "dopri5", "verner65" };
  enum { NCASE = 8, NSRC = NCASE * 3 };
  char *src[NSRC] = { NULL };
  odb_problem *p = bruss(37, 8);        /* n = 592, d = 16 */
  int nsrc = 0;
  for (int i = 0; p && i < NSRC; ++i) {
    const odb_method *m = odb_method_find(meths[i % 3]);
    int c = i / 3;
    odb_gen_kind kind = c == 0 ? ODB_GEN_UNFUSED : c == 1 ? ODB_GEN_REFERENCE
                        : c <= 3 ? ODB_GEN_TRAPEZOID
                        : c <= 6 ? ODB_GEN_MULTIBLOCK : ODB_GEN_HEXAGON;
    odb_gen_opts o;
    odb_gen_plan pl;
    odb_status st;
    memset(&o, 0, sizeof o);
    memset(&pl, 0, sizeof pl);
    o.threads = 128;
    o.smem_max = 96 * 1024;
    if (c == 3) {                      /* a trapezoid of partial height */
      o.tile_w = 256;
      o.tile_h = 2;
    }
    if (kind == ODB_GEN_MULTIBLOCK) {  /* tiles of 1024 or 2048 */
      o.comps = c == 6 ? 2 : 1;
      o.blocks = 2;
      o.stride = "ABC"[c - 4];
      o.barrier = "ABC"[c - 4];
      o.wg_per_tile = 4;
      o.groups = c == 6 ? 1 : 2;       /* barrier C spans the grid */
      o.watchdog = 2.0;
    }
    if (kind == ODB_GEN_HEXAGON) {
      o.tile_w = 256;
      o.tile_w2 = 200;
      o.tile_h = 2;
    }
    st = m ? odb_gen_rk(p, m, kind, &o, &src[i], &pl) : ODB_ERR_NAME;
    if (st != ODB_OK || pl.nlaunch < 1) {
      tap_ok(0, "layout %d %s generates: %s", (int)kind, meths[i % 3],
             odb_last_error());
      continue;
    }
    ++nsrc;
  }
  tap_ok(nsrc == NSRC, "unfused, reference, trapezoid (2 heights), "
         "multi-block (barriers and strides A, B, C) and hexagons generate "
         "for rk4, dopri5 and verner65: %d of %d", nsrc, NSRC);
  {   /* the norm's note: written, after a system fence, where a norm is */
    int notes = 0, fields = 0;
    for (int i = 0; i < NSRC; ++i) {
      if (!src[i]) continue;
      fields += strstr(src[i], "  double *note;\n  long long seq;\n"
                               "  struct odb_xnorm *xn;\n};") != NULL;
      notes += (strstr(src[i], "      a.note[0] = v;\n"
                              "      __threadfence_system();\n"
                              "      *(volatile long long *)(a.note + 1) = "
                              "a.seq;") != NULL) == (i % 3 != 0);
    }
    tap_ok(nsrc == NSRC && fields == NSRC && notes == NSRC,
           "every layout's args end with the note, its number and the norm "
           "over ranks (%d of %d), "
           "and the block finishing a norm writes the sum, a system fence, "
           "then the number (dopri5, verner65; none for rk4): %d of %d",
           fields, NSRC, notes, NSRC);
  }
  check_compiles(src, NSRC, nsrc, "the other layouts' kernels");
  for (int i = 0; i < NSRC; ++i) free(src[i]);
  odb_problem_destroy(p);
}

#endif

#if ODB_HAVE_CUDA
/*
** Each step launched early (odb_gpu_launch_ex): the stream2d kernel,
** with and without the controller, first waits for the step before
** (griddepcontrol.wait, before the controller's words are read), inside
** a guard for compute capability 9.0, so that NVRTC still compiles it for
** sm_80, where the step launches as before.
*/
static void check_early(void) {
  static const char *const guard =
    "#if __CUDA_ARCH__ >= 900\n"
    "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");";
  odb_problem *p = bruss(37, 23);
  char *src[2] = { NULL, NULL };
  int good = 0;
  for (int i = 0; p && i < 2; ++i) {
    odb_gen_opts o = s2d_small(1, i);
    odb_gen_plan pl;
    const char *w, *ctl;
    if (odb_gen_rk(p, odb_method_find("verner65"), ODB_GEN_STREAM2D, &o,
                   &src[i], &pl) != ODB_OK)
      continue;
    w = strstr(src[i], guard);
    ctl = strstr(src[i], "odb_c->done");
    good += w && strstr(w, "griddepcontrol.launch_dependents") &&
            (i == 0 ? !ctl : ctl && w < ctl);
  }
  tap_ok(good == 2, "stream2d, with and without the controller: the kernel "
         "waits for the step before first, for sm_90 on (%d of 2)", good);
  if (getenv("ODEBENCH_KERNEL_CACHE") &&
      strcmp(getenv("ODEBENCH_KERNEL_CACHE"), "off") == 0) {
    tap_ok(1, "NVRTC compiles it for sm_80 # SKIP the kernel cache is off");
  } else {
    tmp_cache tc;
    int compiled = -1;
    tmp_cache_open(&tc);
    if (tc.ok && src[0] && src[1])
      compiled = odb_nvrtc_prefetch((const char *const *)src, 2, 8, 0, 2);
    tmp_cache_close(&tc);
    tap_ok(compiled == 2, "NVRTC compiles both for sm_80, without the wait "
           "(%d of 2)", compiled);
  }
  free(src[0]);
  free(src[1]);
  odb_problem_destroy(p);
}
#endif

#if ODB_HAVE_CUDA
/*
** Clusters (gpu_stream2d at lag 1): the strips across a row (BRUSS2D N =
** 2896 with 128 threads and Verner's 8 stages: 26 alone, 24 in clusters of
** 2, 4 or 8; a grid no wider than the cluster: one cluster); the plan and
** source of clusters of 2 and 8 on a grid 100 columns wide in blocks of 32
** threads, with and without the controller (edge columns sent by st.async
** to the neighbour, waited for on an mbarrier, a cluster barrier at the
** start and end, the first cluster from column 0); NVRTC compiles them for
** sm_90; then the refusals: 3 blocks, lag 2, whole rows.
*/
static void check_cluster(void) {
  static const long want[4] = { 26, 24, 24, 24 };
  odb_problem *p = bruss(37, 100), *narrow = bruss(37, 23);
  const odb_method *m = odb_method_find("verner65");
  char *src[4] = { NULL };
  int nsrc = 0, strips_ok = 0;
  for (int i = 0; i < 4; ++i)
    strips_ok += odb_gen_s2d_strips(2896, 128, 8, 1L << i) == want[i];
  tap_ok(strips_ok == 4 && odb_gen_s2d_strips(200, 32, 8, 8) == 8 &&
         odb_gen_s2d_strips(100, 16, 8, 1) == -1,
         "stream2d strips across 2896 columns, 128 threads, 8 stages: 26 "
         "alone, 24 in clusters of 2, 4, 8 (%d of 4)", strips_ok);
  for (int i = 0; p && m && i < 4; ++i) {
    odb_gen_opts o = s2d_small(1, i % 2);
    odb_gen_plan pl;
    int c = i < 2 ? 2 : 8;
    long strips = odb_gen_s2d_strips(100, 32, 8, c);
    o.threads = 32;
    o.cluster = c;
    if (odb_gen_rk(p, m, ODB_GEN_STREAM2D, &o, &src[nsrc], &pl) != ODB_OK) {
      tap_ok(0, "stream2d in clusters of %d: %s", c, odb_last_error());
      continue;
    }
    tap_ok(pl.cluster == c && pl.strips == strips && strips % c == 0 &&
           pl.ntiles == strips * pl.chunks &&
           strstr(src[nsrc], "#define ODB_CL ") &&
           strstr(src[nsrc], "st.async.shared::cluster.mbarrier::"
                             "complete_tx::bytes") &&
           strstr(src[nsrc], "odb_xwait(odb_mine, ip - it0 - 3)") &&
           strstr(src[nsrc], "barrier.cluster.arrive.release") &&
           strstr(src[nsrc], "const odb_idx col = c0 + rank * ODB_T + t;"),
           "stream2d in clusters of %d%s: %ld strips (want %ld), %ld "
           "blocks, the edge columns sent and waited for", c,
           i % 2 ? " with the controller" : "", pl.strips, strips,
           pl.ntiles);
    nsrc++;
  }
  check_compiles(src, 4, nsrc, "the stream2d kernels in clusters");
  for (int k = 0; p && narrow && m && k < 3; ++k) {
    static const char *const bad[3] = { "must be 1, 2, 4 or 8",
                                        "needs skew 2 and lag 1",
                                        "a grid wider than the block" };
    odb_gen_opts o = s2d_small(k == 1 ? 2 : 1, 0);
    odb_gen_plan pl;
    char *x = NULL;
    o.cluster = k == 0 ? 3 : 2;
    tap_ok(odb_gen_rk(k == 2 ? narrow : p, m, ODB_GEN_STREAM2D, &o, &x,
                      &pl) == ODB_ERR_ARG &&
           strstr(odb_last_error(), bad[k]),
           "stream2d: %s refused: %s", k == 0 ? "a cluster of 3"
           : k == 1 ? "a cluster at lag 2" : "a cluster on whole rows",
           odb_last_error());
    free(x);
  }
  for (int i = 0; i < 4; ++i) free(src[i]);
  odb_problem_destroy(p);
  odb_problem_destroy(narrow);
}
#endif

#if ODB_HAVE_CUDA
/*
** The FP64 count of a step (odb_gen_plan_fp64) against a count by hand, on
** BRUSS2D 64 x 64 (n = 8192, d = 128), whose f_j is 8 FP64 instructions
** (bruss2d.c). The rule of a linear combination "[y +] h (c0 F0 + ...)"
** of k terms: the first product a DMUL, each further term a DFMA, h times
** the sum a DFMA with y (a DMUL without): k + 1. The norm's share a
** component: 6 (rk_loop.cuh's odb_sq_scaled and the sum).
**
** bs3 (s = 4, FSAL, Y_3 = ynew): Y_1 1 term (2), Y_2 1 term (a_31 = 0: 2),
** Y_3 = ynew 3 terms (4), E = b - bhat 4 terms (5). gpu_reference, a
** component: kernel 0: f + Y_1 = 10 (F_0 loaded after an FSAL step: 2),
** kernel 1: f + Y_2 = 10, kernel 2: f + Y_3 = 12, kernel 3: f + E + norm
** (ynew is Y_3) = 19: 51 n with stage 0, 43 n without.
** dopri5 (s = 7, FSAL, Y_6 = ynew): Y_1..Y_6 of 1, 2, 3, 4, 5, 5 terms
** (2, 3, 4, 5, 6, 6), E 6 terms (b_2 = bhat_2 = 0: 7): 7 f + 26 + 7 + 6 =
** 95 n, 87 n without stage 0.
** gpu_multiblock with tiles of w = 1024 (8 tiles; bs3: 7 components a
** thread x 256 threads = 1792 = w + 2 (s-1) d; dopri5: 5 x 512 = 2560):
** stage l's argument on each tile widened by (s - l) d a side, F_l by
** (s - 1 - l) d, ynew (its LC, even where it is Y_{s-1}), E and the norm
** on the tile. Widened by x d a side, clipped to [0, n) (x d <= w: only
** the system's two ends clip): n + 2 x d (tiles - 1) components.
*/
static void check_fp64(void) {
  odb_problem *p = bruss(64, 64), nof;
  const odb_method *bs3 = odb_method_find("bs3");
  const odb_method *dp5 = odb_method_find("dopri5");
  const double n = 8192, d = 128, nt = 8;
#define WIDE(x) (n + 2.0 * (x) * d * (nt - 1))
  /* bs3, the stage-0 kernel k_mbt: F_0 on +-3d; Y_1 (2) on +-3d, F_1 on
     +-2d; Y_2 (2) on +-2d, F_2 on +-d; Y_3 (4) on +-d, F_3 on the tile;
     ynew (4) + E (5) + norm (6) on the tile */
  const double bs3_mb = 8 * WIDE(3) + 2 * WIDE(3) + 8 * WIDE(2) +
                        2 * WIDE(2) + 8 * WIDE(1) + 4 * WIDE(1) +
                        8 * WIDE(0) + (4 + 5 + 6) * WIDE(0);
  /* dopri5: F_0 on +-6d, then Y_l (lc[l]) on +-(7-l)d and F_l on
     +-(6-l)d; ynew (6) + E (7) + norm (6) on the tile */
  static const int lc[7] = { 0, 2, 3, 4, 5, 6, 6 };
  double dp5_mb = 8 * WIDE(6) + (6 + 7 + 6) * WIDE(0);
  static const struct { int stage0; double want; } ref[4] = {
    { 1, 51 }, { 0, 43 }, { 1, 95 }, { 0, 87 } };
  for (int l = 1; l < 7; ++l) dp5_mb += lc[l] * WIDE(7 - l) + 8 * WIDE(6 - l);
  for (int i = 0; p && bs3 && dp5 && i < 4; ++i) {
    const odb_method *m = i < 2 ? bs3 : dp5;
    odb_gen_opts o;
    odb_gen_plan pl;
    char *src = NULL;
    double got = -1, want = -1;
    memset(&o, 0, sizeof o);
    o.threads = 128;
    if (odb_gen_rk(p, m, ODB_GEN_REFERENCE, &o, &src, &pl) == ODB_OK)
      got = odb_gen_plan_fp64(&pl, ref[i].stage0);
    free(src);
    tap_ok(got == ref[i].want * n, "gpu_reference %s, %s: %.0f FP64 "
           "instructions a step, by hand %.0f n = %.0f", m->name,
           ref[i].stage0 ? "stage 0 evaluated" : "F_0 from memory", got,
           ref[i].want, ref[i].want * n);
    memset(&o, 0, sizeof o);
    o.comps = i < 2 ? 7 : 5;
    o.threads = i < 2 ? 256 : 512;
    o.blocks = o.wg_per_tile = o.groups = 1;
    o.stride = 'B';
    o.barrier = 'A';
    o.watchdog = 2.0;
    got = want = -1;
    if (odb_gen_rk(p, m, ODB_GEN_MULTIBLOCK, &o, &src, &pl) == ODB_OK &&
        pl.tile_w == 1024 && pl.ntiles == 8) {
      got = odb_gen_plan_fp64(&pl, ref[i].stage0);
      want = (i < 2 ? bs3_mb : dp5_mb) - (ref[i].stage0 ? 0 : 8 * WIDE(m->s - 1));
    }
    free(src);
    tap_ok(got == want && want > 0, "gpu_multiblock %s (tiles of 1024 with "
           "halos), %s: %.0f FP64 instructions a step, by hand %.0f", m->name,
           ref[i].stage0 ? "stage 0 evaluated" : "F_0 from memory", got,
           want);
  }
  if (p) {   /* an f without a count: no count of the step */
    odb_gen_opts o;
    odb_gen_plan pl;
    char *src = NULL;
    int ok;
    nof = *p;
    nof.gpu_fp64_per_comp = 0;
    memset(&o, 0, sizeof o);
    o.threads = 128;
    ok = odb_gen_rk(&nof, bs3, ODB_GEN_REFERENCE, &o, &src, &pl) == ODB_OK;
    free(src);
    tap_ok(ok && odb_gen_plan_fp64(&pl, 1) == 0 &&
           odb_gen_plan_fp64(&pl, 0) == 0, "a problem without the FP64 count "
           "of its f: the step's count is 0 (unknown)");
  }
#undef WIDE
  odb_problem_destroy(p);
}
/*
** gpu_onchip's layout on an H200's figures (132 multiprocessors, 227 KB a
** block): N = 17 one row a block with the stages in shared memory; N = 255
** bands of at most 2 rows, shared; N = 1024 bands of 8 rows, y alone fits
** (131072 bytes), so the stages go to global memory; N = 2048 is refused
** with the sizes and the largest N whose y fits (1320: 10 rows of 1320
** cells, 211 KB); asking for shared memory at N = 1024 is refused. Then
** NVRTC compiles the kernels of bs3, DOPRI5 and Verner 6(5) at N = 17, 64
** and 255 in both places (sm_90).
*/
static void check_onchip(void) {
  enum { NSRC = 18 };
  static const char *const ms[] = { "bs3", "dopri5", "verner65" };
  static const long Ns[] = { 17, 64, 255 };
  char *src[NSRC] = {0};
  int nsrc = 0;
  odb_gen_onchip_layout lay;
  odb_problem *p = bruss(17, 0);
  odb_status st = odb_gen_onchip_fit(p, 4, 132, 232448, 0, &lay);
  tap_ok(st == ODB_OK && lay.blocks == 17 && lay.rows == 1 &&
         lay.place == 1 && lay.smem == (size_t)((1 + 3 + 4) * 34 * 8),
         "onchip N=17 bs3: %ld blocks, %ld rows, place %d, %zu bytes",
         lay.blocks, lay.rows, lay.place, lay.smem);
  odb_problem_destroy(p);
  p = bruss(255, 0);
  st = odb_gen_onchip_fit(p, 7, 132, 232448, 0, &lay);
  tap_ok(st == ODB_OK && lay.blocks == 132 && lay.rows == 2 &&
         lay.place == 1, "onchip N=255 dopri5: %ld blocks, %ld rows, place "
         "%d", lay.blocks, lay.rows, lay.place);
  odb_problem_destroy(p);
  p = bruss(1024, 0);
  st = odb_gen_onchip_fit(p, 7, 132, 232448, 0, &lay);
  tap_ok(st == ODB_OK && lay.blocks == 132 && lay.rows == 8 &&
         lay.place == 2 && lay.smem == 131072, "onchip N=1024 dopri5: %ld "
         "blocks, %ld rows, place %d (global), %zu bytes", lay.blocks,
         lay.rows, lay.place, lay.smem);
  st = odb_gen_onchip_fit(p, 7, 132, 232448, 1, &lay);
  tap_ok(st == ODB_ERR_UNSUPPORTED &&
         strstr(odb_last_error(), "place = 'shared' needs"),
         "onchip N=1024 place shared is refused: %s", odb_last_error());
  odb_problem_destroy(p);
  p = bruss(2048, 0);
  st = odb_gen_onchip_fit(p, 7, 132, 232448, 0, &lay);
  tap_ok(st == ODB_ERR_UNSUPPORTED &&
         strstr(odb_last_error(), "gpu_onchip: y needs 69.2 MB of shared "
                "memory over 132 blocks (16 rows of 2048 cells a block: "
                "524.3 KB); the device has 30.5 MB (132 multiprocessors x "
                "231.4 KB): N <= 1320"),
         "onchip N=2048 is refused: %s", odb_last_error());
  odb_problem_destroy(p);
  for (int ni = 0; ni < 3; ++ni) {
    p = bruss((double)Ns[ni], 0);
    for (int mi = 0; mi < 3; ++mi)
      for (int place = 1; place <= 2; ++place) {
        odb_gen_opts o;
        odb_gen_plan pl;
        memset(&o, 0, sizeof o);
        o.threads = 1024;
        o.groups = Ns[ni] < 132 ? (int)Ns[ni] : 132;
        o.place = place;
        o.watchdog = 2;
        if (odb_gen_rk(p, odb_method_find(ms[mi]), ODB_GEN_ONCHIP, &o,
                       &src[nsrc], &pl) == ODB_OK &&
            pl.nlaunch == 1 && pl.grid == o.groups)
          ++nsrc;
      }
    odb_problem_destroy(p);
  }
  check_compiles(src, NSRC, nsrc, "the gpu_onchip kernels");
  for (int i = 0; i < nsrc; ++i) free(src[i]);
}
/*
** A slab of the GPU ranks (grid_own0/1: the rows whose cells count in
** the error norm) with the last stage storing its row (bs3): the norm's
** own-row compare at the pass's end, none beside the store, for a slab
** bounded above, below and on both sides; the whole grid keeps the add
** beside the store (no compare to move). All compile.
*/
static void check_slab_norm(void) {
  enum { NS = 4 };
  static const long own[NS][2] = { { 0, 56 }, { 8, 64 }, { 8, 56 }, { 0, 0 } };
  char *src[NS] = { 0 };
  int nsrc = 0;
  odb_problem *p = bruss(64, 64);
  for (int i = 0; p && i < NS; ++i) {
    odb_problem q = *p;
    odb_gen_opts o;
    odb_gen_plan pl;
    const char *late = NULL, *beside = NULL;
    q.grid_own0 = own[i][0];
    q.grid_own1 = own[i][1];
    memset(&o, 0, sizeof o);
    o.threads = 64;
    o.skew = 2;
    o.lag = 1;
    o.carry = 3;
    o.early_store = 1;
    if (odb_gen_rk(&q, odb_method_find("bs3"), ODB_GEN_STREAM2D, &o, &src[i],
                   &pl) != ODB_OK) {
      tap_ok(0, "bs3 on a slab with own rows %ld-%ld: %s", own[i][0],
             own[i][1], odb_last_error());
      continue;
    }
    ++nsrc;
    late = strstr(src[i], "q < r1 && ODB_IN_NORM(q)) acc += odb_nv;");
    beside = strstr(src[i], "            if (ODB_IN_NORM(q)) acc += odb_nv;");
    tap_ok(i < 3 ? late && !beside : !late && beside,
           "bs3, own rows %ld-%ld of 64: the norm's add %s", own[i][0],
           own[i][1], i < 3 ? "at the pass's end only" : "beside the store");
  }
  check_compiles(src, NS, nsrc, "bs3 on slabs of rows (the norm's own rows)");
  for (int i = 0; i < NS; ++i) free(src[i]);
  odb_problem_destroy(p);
}
#endif

int main(void) {
#if ODB_HAVE_CUDA
  check_stream2d();
  check_cell9();
  check_cell_only();
  check_lag1();
  check_devctl();
  check_xnorm();
  check_layouts();
  check_early();
  check_cluster();
  check_fp64();
  check_onchip();
  check_slab_norm();
#else
  tap_ok(1, "generated RK kernels # SKIP built without CUDA");
#endif
  return tap_done();
}
