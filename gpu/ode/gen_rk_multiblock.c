/* gen_rk_multiblock.c - gpu_multiblock: tiles across the stages that a
   group of blocks computes together, one barrier between the blocks a
   stage (device/rk_barrier.cuh). */
#include "gen_rk_int.h"

/*
** The components of a thread: q = i * NC + c for its block i < NB and
** component c < NC of that block, at an offset from the extended tile's
** start that depends on the stride kind (Korch and Werner, Figure 9): A, the
** thread's blocks one after the other; B, blocks a workgroup's threads
** apart; C, blocks a tile's threads apart.
*/
static void put_mb_mapping(odb_emit *b, char stride) {
  put(b, "#define ODB_I(q) ((q) / ODB_NC)\n#define ODB_C(q) ((q) %% ODB_NC)\n");
  if (stride == 'A')
    put(b, "#define ODB_LOC(q) ((((odb_idx)gb * ODB_T + threadIdx.x) * ODB_NB "
           "+ ODB_I(q)) * ODB_NC + ODB_C(q))\n");
  else if (stride == 'B')
    put(b, "#define ODB_LOC(q) (((odb_idx)gb * ODB_NB * ODB_T + ODB_I(q) * "
           "ODB_T + threadIdx.x) * ODB_NC + ODB_C(q))\n");
  else
    put(b, "#define ODB_LOC(q) ((ODB_I(q) * (odb_idx)ODB_G * ODB_T + "
           "(odb_idx)gb * ODB_T + threadIdx.x) * ODB_NC + ODB_C(q))\n");
}

/* The loop over a thread's components, with j its index in [lo, hi). */
static void put_mb_for(odb_emit *b, const char *lo, const char *hi) {
  put(b, "    #pragma unroll\n"
         "    for (int q = 0; q < ODB_K; ++q) {\n"
         "      const odb_idx j = e0 + ODB_LOC(q);\n"
         "      if (j < %s || j >= %s) continue;\n", lo, hi);
}

/* "y<q> + h (sum a F)" with registers fl[q]; returns its FP64
   instructions. */
static int put_mb_lc(odb_emit *b, const erk_terms *t) {
  put(b, "yv[q]");
  if (t->n == 0) return 0;
  put(b, " + a.h * (");
  for (int i = 0; i < t->n; ++i) {
    if (i) put(b, " + ");
    rkg_put_num(b, t->coef[i]);
    put(b, " * f%d[q]", t->idx[i]);
  }
  put(b, ")");
  return rkg_lc_fp64(t, 1, 1);
}

/*
** Components over all tiles of width w of the range [ta - x d, tb + x d)
** (clipped to [0, n)) of each tile [ta, tb).
*/
static double mb_comps(long n, long w, long d, long x) {
  double sum = 0;
  for (long ta = 0; ta < n; ta += w) {
    long tb = ta + w < n ? ta + w : n;
    long lo = ta - x * d > 0 ? ta - x * d : 0;
    long hi = tb + x * d < n ? tb + x * d : n;
    sum += (double)(hi - lo);
  }
  return sum;
}
/*
** The kernel (fsal_load: F_0 from memory). A group of ODB_G blocks owns
** one tile at a time (persistent: tiles grp, grp + groups, ...): the top
** range [ta, tb) of width ODB_W, extended by ODB_H = (s-1) d on each side
** so that stage l is computed on [ta - (s-1-l) d, tb + (s-1-l) d), the
** trapezoid narrowing by d per stage (Korch and Werner, §4.1, with the
** overlap computed redundantly instead of by a second kernel). Each thread
** keeps y and every F_q of its components in registers (the same mapping
** for all stages, §4.2 and §4.4); only the argument Y_l goes through the
** group's double buffer in global memory (L2-resident), one barrier per
** stage. Returns its FP64 instructions over all tiles (tile width w):
** stage l's argument on the tile widened by (s - l) d a side, F_l by
** (s - 1 - l) d, ynew, the estimate and the norm on the tile.
*/
static double gen_mb_kernel(gen *g, int fsal_load, char barrier, long w) {
  odb_emit *b = &g->b;
  int S = g->S, fpt;
  long n = g->p->n, d = g->p->d;
  double fp64 = fsal_load ? 0 : rkg_rhs_fp64(g) * mb_comps(n, w, d, S - 1);
  rkg_put_kernel_head(g, fsal_load ? "k_mbtf" : "k_mbt");
  put(b, "  const unsigned grp = blockIdx.x / ODB_G, gb = blockIdx.x %% ODB_G;\n"
         "  const unsigned ngrp = gridDim.x / ODB_G;\n"
         "  double *const buf = a.Y[0] + (odb_idx)grp * (2 * ODB_WE);\n"
         "  unsigned k = 0u;\n  double acc = 0.0;\n"
         "  for (odb_idx tile = grp; tile < ODB_NTILES; tile += ngrp) {\n"
         "    const odb_idx ta = tile * ODB_W;\n"
         "    const odb_idx tb = ta + ODB_W < ODB_N ? ta + ODB_W : ODB_N;\n"
         "    const odb_idx e0 = ta - ODB_H;\n"
         "    const odb_idx lo0 = e0 > 0 ? e0 : 0;\n"
         "    const odb_idx hi0 = tb + ODB_H < ODB_N ? tb + ODB_H : ODB_N;\n"
         "    double yv[ODB_K]");
  for (int l = 0; l < S; ++l) put(b, ", f%d[ODB_K]", l);
  put(b, ";\n");
  put_mb_for(b, "lo0", "hi0");
  put(b, "      yv[q] = __ldg(a.y + j);\n      f0[q] = %s;\n    }\n",
      fsal_load ? "__ldg(a.F[0] + j)" : "odb_rhs(j, a.tl[0], a.y)");
  for (int l = 1; l < S; ++l) {
    put(b, "    {  // stage %d: Y_%d to the buffer, barrier, F_%d\n", l, l, l);
    put(b, "    double *const B = buf + (odb_idx)(k & 1u) * ODB_WE;\n"
           "    odb_idx lo = ta - %d * ODB_D, hi = tb + %d * ODB_D;\n"
           "    lo = lo > 0 ? lo : 0;\n    hi = hi < ODB_N ? hi : ODB_N;\n",
        S - l, S - l);
    put_mb_for(b, "lo", "hi");
    put(b, "      B[j - e0] = ");
    fp64 += put_mb_lc(b, &g->e.a[l]) * mb_comps(n, w, d, S - l);
    put(b, ";\n    }\n    ++k;\n"
           "    if (!odb_bar_%c(a.bar, a.fail, grp, gb, k)) return;\n",
        g->plan->wg_per_tile == 1 ? '1'
        : barrier == 'A' ? 'a' : barrier == 'B' ? 'b' : 'c');
    put(b, "    lo = ta - %d * ODB_D; hi = tb + %d * ODB_D;\n"
           "    lo = lo > 0 ? lo : 0;\n    hi = hi < ODB_N ? hi : ODB_N;\n"
           "    const double *const arg = B - e0;\n", S - 1 - l, S - 1 - l);
    put_mb_for(b, "lo", "hi");
    put(b, "      f%d[q] = odb_rhs(j, a.tl[%d], arg);\n    }\n    }\n", l, l);
    fp64 += rkg_rhs_fp64(g) * mb_comps(n, w, d, S - 1 - l);
  }
  put_mb_for(b, "ta", "tb");
  put(b, "      const double yn = ");
  fpt = put_mb_lc(b, &g->e.b);
  put(b, ";\n      a.ynew[j] = yn;\n");
  if (g->m->fsal) put(b, "      a.F[%d][j] = f%d[q];\n", S - 1, S - 1);
  if (g->plan->has_err) {
    put(b, "      const double ej = ");
    if (g->e.e.n == 0) {
      put(b, "0.0");
    } else {
      put(b, "a.h * (");
      for (int i = 0; i < g->e.e.n; ++i) {
        if (i) put(b, " + ");
        rkg_put_num(b, g->e.e.coef[i]);
        put(b, " * f%d[q]", g->e.e.idx[i]);
      }
      put(b, ")");
    }
    put(b, ";\n      acc += odb_sq_scaled(ej, yv[q], yn, a.atol, a.rtol);\n");
    fpt += rkg_lc_fp64(&g->e.e, 0, 1) + RKG_FP64_NORM;
  }
  fp64 += fpt * mb_comps(n, w, d, 0);
  put(b, "    }\n  }\n");
  if (g->plan->has_err) put(b, "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n");
  else put(b, "  (void)acc;\n");
  put(b, "  odb_bar_exit(a.bar, ODB_NBAR);\n}\n");
  return fp64;
}

/*
** Checks the tile width configuration (equation (7): W_ext = n_comp
** n_blocks threads wg_per_tile must exceed the 2 (s-1) d of redundant
** halo) and generates both kernels. The buffers hold 2 W_ext doubles per
** group. Traffic per step: y once (plus the halos of neighbouring tiles,
** which the L2 usually serves), ynew and, FSAL, F_{s-1} once.
*/
odb_status rkg_multiblock(gen *g, const odb_gen_opts *o) {
  odb_gen_plan *pl = g->plan;
  long S = g->S, d = g->p->d, n = g->p->n, halo = (S - 1) * d;
  long G = o->wg_per_tile, K = (long)o->comps * o->blocks, we, w, nt, ngrp;
  char bar = o->barrier ? o->barrier : 'A', stride = o->stride ? o->stride : 'B';
  if (o->comps < 1 || o->comps > 8 || o->blocks < 1 || o->blocks > 8 ||
      K > 16)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: comps (%d) and blocks (%d) "
                    "per thread must be 1..8 with comps * blocks <= 16",
                    o->comps, o->blocks);
  if (stride != 'A' && stride != 'B' && stride != 'C')
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: stride must be A, B or C");
  if (bar != 'A' && bar != 'B' && bar != 'C')
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: barrier must be A, B or C");
  if (G < 1 || o->groups < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: wg_per_tile (%ld) and "
                    "groups (%d) must be positive", G, o->groups);
  we = K * o->threads * G;
  w = we - 2 * halo;
  if (w <= 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_multiblock: tile width %ld "
                    "(comps %d x blocks %d x threads %d x wg_per_tile %ld) "
                    "does not exceed the halo 2 (s-1) d = %ld (s = %ld, d = "
                    "%ld); give more blocks per tile or components per "
                    "thread", we, o->comps, o->blocks, o->threads, G,
                    2 * halo, S, d);
  nt = (n + w - 1) / w;
  ngrp = o->groups < nt ? o->groups : nt;
  if (bar == 'C' && ngrp != 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: barrier C (grid sync) "
                    "spans the whole grid, so it takes one tile group, not "
                    "%ld", ngrp);
  pl->tile_w = w;
  pl->tile_we = we;
  pl->tile_h = S;
  pl->ntiles = nt;
  pl->wg_per_tile = (int)G;
  pl->grid = ngrp * G;
  pl->nbar = 32 * (1 + ngrp) + 2 * pl->grid;
  pl->scratch[0] = ngrp * 2 * we;
  pl->scratch[1] = 0;
  if (bar == 'C') put(&g->b, "#define ODB_BAR_C 1\n#include <cooperative_groups.h>\n");
  put(&g->b, "#define ODB_S %ld\n#define ODB_NC %d\n#define ODB_NB %d\n"
             "#define ODB_K %ld\n#define ODB_G %ld\n#define ODB_GRID %ldu\n"
             "#define ODB_WE ((odb_idx)%ld)\n#define ODB_W ((odb_idx)%ld)\n"
             "#define ODB_H ((odb_idx)%ld)\n#define ODB_NTILES ((odb_idx)%ld)\n"
             "#define ODB_BARB %ldu\n#define ODB_NBAR %ldu\n"
             "#define ODB_WATCHDOG %.0f\n",
      S, o->comps, o->blocks, K, G, pl->grid, we, w, halo, nt, 32 * (1 + ngrp),
      pl->nbar, (o->watchdog > 0 ? o->watchdog : 2.0) * 1e9);
  odb_emit_cuh(&g->b, &odb_cuh_rk_barrier, NULL);
  put_mb_mapping(&g->b, stride);
  double f_all = gen_mb_kernel(g, 0, bar, w);
  double f_f0 = gen_mb_kernel(g, 1, bar, w);
  {
    double halo_v = (double)nt * 2.0 * (double)halo / (double)n;
    double wv = 1 + (g->m->fsal ? 1 : 0);
    odb_gen_launch *l = rkg_add_launch(g, "k_mbt", ODB_GEN_IF_STAGE0,
                                       g->plan->has_err, 1 + halo_v, wv);
    if (l) { l->grid = ODB_GEN_GRID_GROUPS; l->fp64 = f_all; }
    l = rkg_add_launch(g, "k_mbtf", ODB_GEN_IF_FSAL, g->plan->has_err,
                       2 + 2 * halo_v, wv);
    if (l) { l->grid = ODB_GEN_GRID_GROUPS; l->fp64 = f_f0; }
  }
  return ODB_OK;
}
