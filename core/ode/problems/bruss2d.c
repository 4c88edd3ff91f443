/* bruss2d.c - BRUSS2D: the 2-D Brusselator with diffusion (thesis App. A.1). */
#include "odb_status.h"
#include "odb_param.h"
#include "odb_problem.h"

#include <stdio.h>

/*
** u_t = 1 + u^2 v - 4.4 u + alpha (u_xx + u_yy)
** v_t = 3.4 u - u^2 v     + alpha (v_xx + v_yy)
** on the unit square, homogeneous Neumann boundary, discretized on an N x N
** grid with spacing 1/(N-1) (or N rows of Nx points, for the access-distance
** study of M. Korch and T. Werner, "An in-depth introduction of
** multi-workgroup tiling for improving the locality of explicit one-step
** methods for ODE systems with limited access distance on GPUs", section
** 5). Component ordering (thesis, "BRUSS2D-MIX"):
** U_00, V_00, U_01, V_01, ..., second grid index fastest, so
** y[2(iN+j)] = U_ij, y[2(iN+j)+1] = V_ij, n = 2N^2, access distance d = 2N.
** The thesis prints alpha = 2*10^3; the problem is meant to be non-stiff and
** its step counts scale like 2*10^-3 (HNW I, II.10), so alpha = 2e-3.
** The boundary is not given in the thesis: the Neumann condition is applied
** with mirrored ghost points, U_{-1,j} = U_{1,j}, U_{N,j} = U_{N-2,j}, etc.
** Initial values: the thesis prints u = 0.5 + y, v = 0.5 + x ("thesis", the
** default); HNW I uses v = 1 + 5x ("hnw").
*/
enum { P_N, P_ALPHA, P_INIT, P_NX };

static const odb_param_decl bruss_params[] = {
  { "N", ODB_PARAM_INT, 128, 2, 100000000, NULL,
    "grid points per side (rows, when Nx is given)" },
  { "alpha", ODB_PARAM_REAL, 2e-3, 0, 1e6, NULL, "diffusion constant" },
  { "init", ODB_PARAM_ENUM, 0, 0, 1, "thesis|hnw",
    "initial values: thesis v=0.5+x, hnw v=1+5x" },
  { "Nx", ODB_PARAM_INT, 0, 0, 100000000, NULL,
    "grid points along the fast index (0: N); d = 2 Nx (varied in the "
    "access-distance study of Korch and Werner, multi-workgroup tiling, §5)" },
};

/* Points along the fast (second) grid index: Nx, or N when not given. */
static long bruss_nx(const odb_problem *p) {
  return p->param[P_NX] > 0 ? (long)p->param[P_NX] : (long)p->param[P_N];
}

/*
** f_U and f_V of one grid point whose U sits at y[q] (V at y[q+1]); ou/od/
** ol/orr are the offsets of the up/down/left/right neighbours (mirrored at
** the boundary). f_U reads the U neighbours and V_ij, f_V the V neighbours
** and U_ij, so each stays within d of its own component.
*/
static inline double bruss_fu(const double *y, long q, long ou, long od,
                              long ol, long orr, double c) {
  double U = y[q], V = y[q + 1];
  double lu = y[q + ou] + y[q + od] + y[q + ol] + y[q + orr] - 4.0 * U;
  return 1.0 + U * U * V - 4.4 * U + c * lu;
}

static inline double bruss_fv(const double *y, long q, long ou, long od,
                              long ol, long orr, double c) {
  double U = y[q], V = y[q + 1];
  double lv = y[q + ou + 1] + y[q + od + 1] + y[q + ol + 1] + y[q + orr + 1]
              - 4.0 * V;
  return 3.4 * U - U * U * V + c * lv;
}

/* One grid point with only its components inside [j0, j1) computed. */
static void bruss_point_masked(const odb_problem *p, const double *y, long yoff,
                               double *f, long j0, long j1, long pt) {
  long N = (long)p->param[P_N], X = bruss_nx(p), i = pt / X, jj = pt % X;
  long q = 2 * pt, ou = i > 0 ? -2 * X : 2 * X, od = i < N - 1 ? 2 * X : -2 * X;
  long ol = jj > 0 ? -2 : 2, orr = jj < X - 1 ? 2 : -2;
  double c = p->param[P_ALPHA] * (double)(N - 1) * (double)(N - 1);
  if (q >= j0 && q < j1)
    f[q - j0] = bruss_fu(y, q - yoff, ou, od, ol, orr, c);
  if (q + 1 >= j0 && q + 1 < j1)
    f[q + 1 - j0] = bruss_fv(y, q - yoff, ou, od, ol, orr, c);
}

/* Whole points [pa, pb) of grid row i, stored at f[2*pt - j0]. */
static void bruss_row(const odb_problem *p, const double *y, long yoff,
                      double *f, long j0, long i, long ja, long jb) {
  long N = (long)p->param[P_N], X = bruss_nx(p);
  long ou = i > 0 ? -2 * X : 2 * X, od = i < N - 1 ? 2 * X : -2 * X;
  double c = p->param[P_ALPHA] * (double)(N - 1) * (double)(N - 1);
  long lo = ja > 1 ? ja : 1, hi = jb < X - 1 ? jb : X - 1;
  const double *yr = y + (2 * i * X - yoff);   /* row start, in the window */
  double *fr = f + (2 * i * X - j0);
  if (ja == 0) bruss_point_masked(p, y, yoff, f, j0, 2 * (i * X + jb), i * X);
  for (long jj = lo; jj < hi; ++jj) {
    double U = yr[2 * jj], V = yr[2 * jj + 1], uuv = U * U * V;
    double lu = yr[2 * jj + ou] + yr[2 * jj + od] + yr[2 * jj - 2]
                + yr[2 * jj + 2] - 4.0 * U;
    double lv = yr[2 * jj + ou + 1] + yr[2 * jj + od + 1] + yr[2 * jj - 1]
                + yr[2 * jj + 3] - 4.0 * V;
    fr[2 * jj] = 1.0 + uuv - 4.4 * U + c * lu;
    fr[2 * jj + 1] = 3.4 * U - uuv + c * lv;
  }
  if (jb == X && X - 1 >= ja && X > 1)
    bruss_point_masked(p, y, yoff, f, j0, 2 * (i * X + jb), i * X + X - 1);
}

/*
** f_j for j in [j0, j1): a leading half point (j0 odd), whole points row by
** row, a trailing half point (j1 odd).
*/
static void bruss_rhs(const odb_problem *p, double t, const double *y,
                      long yoff, double *f, long j0, long j1) {
  long X = bruss_nx(p), pa = (j0 + 1) >> 1, pb = j1 >> 1;
  (void)t;
  if (j0 >= j1) return;
  if (j0 & 1) bruss_point_masked(p, y, yoff, f, j0, j1, j0 >> 1);
  for (long pt = pa; pt < pb;) {
    long i = pt / X, ja = pt % X, jb = (pb - i * X) < X ? pb - i * X : X;
    bruss_row(p, y, yoff, f, j0, i, ja, jb);
    pt = i * X + jb;
  }
  if ((j1 & 1) && (j1 >> 1) >= pa)
    bruss_point_masked(p, y, yoff, f, j0, j1, j1 >> 1);
}

/*
** f_j as CUDA C for the GPU variants (gpu/ode/odb_gen_rk.c): the generator
** defines odb_idx (an integer type for component indices), ODB_N, ODB_D
** and ODB_P0..ODB_P7 (this problem's parameter values in declaration order:
** N, alpha, init) as compile-time constants. y[k] is component k, valid
** within d of j. Same formulas, operand order and mirrored boundary as
** bruss_fu/bruss_fv above.
*/
static const char bruss_gpu_source[] =
  "__device__ __forceinline__ double odb_rhs(odb_idx j, double t,\n"
  "                                          const double *__restrict__ y) {\n"
  "  const odb_idx N = (odb_idx)ODB_P0;\n"
  "  const odb_idx X = ODB_P3 > 0 ? (odb_idx)ODB_P3 : N;   // row length\n"
  "  const double c = ODB_P1 * (double)(N - 1) * (double)(N - 1);\n"
  "  const odb_idx pt = j >> 1, i = pt / X, jj = pt - i * X, q = 2 * pt;\n"
  "  const odb_idx ou = i > 0 ? -2 * X : 2 * X;\n"
  "  const odb_idx od = i < N - 1 ? 2 * X : -2 * X;\n"
  "  const odb_idx ol = jj > 0 ? -2 : 2, orr = jj < X - 1 ? 2 : -2;\n"
  "  const double U = y[q], V = y[q + 1];\n"
  "  (void)t;\n"
  "  if ((j & 1) == 0) {\n"
  "    double lu = y[q + ou] + y[q + od] + y[q + ol] + y[q + orr] - 4.0 * U;\n"
  "    return 1.0 + U * U * V - 4.4 * U + c * lu;\n"
  "  }\n"
  "  double lv = y[q + ou + 1] + y[q + od + 1] + y[q + ol + 1]\n"
  "              + y[q + orr + 1] - 4.0 * V;\n"
  "  return 3.4 * U - U * U * V + c * lv;\n"
  "}\n";

/*
** The same f by cells for gpu_stream2d: ODB_Y(di, dj, c) is component c of
** the stage argument at cell (i + di, j + dj); the mirrors at the edges
** (Neumann) are the same as above. At lag 1 (ODB_LAG) each stage waits for
** the row below (di = +1), which the stage before has just formed, so the
** sums are rearranged to take it last, in one fused multiply-add:
** c (S' + b) + 1 + U^2 V - (4.4 + 4 c) U = fma(c, b, fma(c, S', fma(fma(U,
** V, -k), U, 1))), with S' the other neighbours. That is 13 FP64
** operations a cell instead of 15, and 1 after the row below instead of 4
** (measured faster on an H100, see BENCHMARKS.md). The rows end at
** ODB_NR, the constants come from N: a slab of the grid's rows (the GPU
** ranks, dist/ode/dist_gpu.c) is the same source with fewer rows, mirrored
** at its own ends (its halo rows, which it discards). The rounding differs
** from odb_rhs by a few ulp of c S (about 4 c U), the size of c (S - 4 U)'s
** there. At lag 2 the stages do not wait for each other, and the first
** form, with fewer registers, is used: the second costs enough registers
** to fit fewer blocks on a multiprocessor (for bs3, three instead of four),
** which measured slower.
*/
static const char bruss_gpu_cell_source[] =
  "__device__ __forceinline__ void odb_rhs_cell(odb_idx i, odb_idx j, double t,\n"
  "                                             const odb_cell_in &in,\n"
  "                                             double *f) {\n"
  "  const odb_idx N = (odb_idx)ODB_P0;\n"
  "  const odb_idx X = ODB_P3 > 0 ? (odb_idx)ODB_P3 : N;   // row length\n"
  "  const double c = ODB_P1 * (double)(N - 1) * (double)(N - 1);\n"
  "  const int up = i > 0 ? -1 : 1, dn = i < ODB_NR - 1 ? 1 : -1;\n"
  "  const int lf = j > 0 ? -1 : 1, rt = j < X - 1 ? 1 : -1;\n"
  "  const double U = ODB_Y(0, 0, 0), V = ODB_Y(0, 0, 1);\n"
  "  (void)t;\n"
  "#if defined(ODB_LAG) && ODB_LAG == 1\n"
  "  // the row above counts once (none on the first row, where the mirror\n"
  "  // takes the row below twice: cb = 2 c), the row below last\n"
  "  const double ku = 4.4 + 4.0 * c, kv = 4.0 * c, cb = i > 0 ? c : 2.0 * c;\n"
  "  (void)up;\n"
  "  const double au = i > 0 ? ODB_Y(-1, 0, 0) : 0.0;\n"
  "  const double av = i > 0 ? ODB_Y(-1, 0, 1) : 0.0;\n"
  "  const double gu = fma(fma(U, V, -ku), U, 1.0);\n"
  "  const double gv = fma(U, fma(-U, V, 3.4), -kv * V);\n"
  "  const double tu = fma(c, ODB_Y(0, lf, 0) + ODB_Y(0, rt, 0) + au, gu);\n"
  "  const double tv = fma(c, ODB_Y(0, lf, 1) + ODB_Y(0, rt, 1) + av, gv);\n"
  "  f[0] = fma(cb, dn > 0 ? ODB_Y(1, 0, 0) : ODB_Y(-1, 0, 0), tu);\n"
  "  f[1] = fma(cb, dn > 0 ? ODB_Y(1, 0, 1) : ODB_Y(-1, 0, 1), tv);\n"
  "#else\n"
  "  double lu = ODB_Y(up, 0, 0) + ODB_Y(dn, 0, 0) + ODB_Y(0, lf, 0)\n"
  "              + ODB_Y(0, rt, 0) - 4.0 * U;\n"
  "  double lv = ODB_Y(up, 0, 1) + ODB_Y(dn, 0, 1) + ODB_Y(0, lf, 1)\n"
  "              + ODB_Y(0, rt, 1) - 4.0 * V;\n"
  "  f[0] = 1.0 + U * U * V - 4.4 * U + c * lu;\n"
  "  f[1] = 3.4 * U - U * U * V + c * lv;\n"
  "#endif\n"
  "}\n";

/* U_ij = 0.5 + y_j, V_ij = 0.5 + x_i (thesis) or 1 + 5 x_i (HNW). */
static void bruss_initial(const odb_problem *p, double *y0) {
  long N = (long)p->param[P_N], X = bruss_nx(p);
  int hnw = p->param[P_INIT] == 1;
  double hgrid = 1.0 / (double)(N - 1), hx = 1.0 / (double)(X - 1);
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < X; ++j) {
      double x = i * hgrid, yy = j * hx;
      y0[2 * (i * X + j)] = 0.5 + yy;
      y0[2 * (i * X + j) + 1] = hnw ? 1.0 + 5.0 * x : 0.5 + x;
    }
}

static odb_status bruss_setup(odb_problem *p) {
  long N = (long)p->param[P_N], X = bruss_nx(p);
  if (X < 2)
    return ODB_FAIL(ODB_ERR_ARG, "bruss2d: Nx must be 0 (= N) or at least 2, "
                    "got %ld", X);
  if ((double)N * (double)X > 1e12)
    return ODB_FAIL(ODB_ERR_ARG, "bruss2d: N x Nx = %ld x %ld points is more "
                    "than 10^12", N, X);
  p->n = 2 * N * X;
  p->d = 2 * X;
  p->t0 = 0.0;
  p->t1 = 11.5;
  p->flops_per_comp = 12.0;
  p->rhs = bruss_rhs;
  p->initial = bruss_initial;
  p->gpu_source = bruss_gpu_source;
  p->gpu_cell_source = bruss_gpu_cell_source;
  /*
  ** FP64 instructions by hand (c, 4.4 + 4 c and 4 c fold: N and alpha are
  ** the constants ODB_P0, ODB_P1). odb_rhs, either branch: the Laplacian
  ** 3 DADD + 1 DFMA (- 4 U), then f_U: U U (DMUL), + 1 with V, - 4.4 U, +
  ** c lu (3 DFMA); f_V: 3.4 U and U U (2 DMUL), - U U V and + c lv (2
  ** DFMA): 8. The cell (both branches above in one): 2 x 4 for the
  ** Laplacians, U U once, 3 DFMA for f_U, 3.4 U and 2 DFMA for f_V: 15.
  ** At lag 1: gu 2 DFMA, gv 2 DFMA + 1 DMUL (kv V), tu and tv 2 DADD + 1
  ** DFMA each, f 1 DFMA each: 13.
  */
  p->gpu_fp64_per_comp = 8;
  p->gpu_fp64_cell = 15;
  p->gpu_fp64_cell_lag1 = 13;
  p->grid_rows = N;
  p->grid_cols = X;
  p->grid_comps = 2;
  p->grid_star = 1;
  if (X != N)
    snprintf(p->label, sizeof p->label, "bruss2d(N=%ld,Nx=%ld)", N, X);
  else
    snprintf(p->label, sizeof p->label, "bruss2d(N=%ld)", N);
  return ODB_OK;
}

const odb_problem_type odb_problem_bruss2d = {
  .name = "bruss2d",
  .doc = "2-D Brusselator with diffusion, interleaved U/V, n = 2N^2, d = 2N",
  .params = bruss_params,
  .nparams = (int)(sizeof bruss_params / sizeof bruss_params[0]),
  .setup = bruss_setup,
};
