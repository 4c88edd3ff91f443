/* gen_rk_hexagonal.c - tiles of a height across the stages: gpu_hexagonal,
   and gpu_trapezoid in rows lower than the step (tile_h < s), which share
   the machinery of a sequence of kernels over levels [L0, L1). */
#include <stdio.h>

#include "gen_rk_int.h"

/*
** Tiling across the stages with a tile height (Korch and Werner, §4.1
** and §4.6, Figure 4), single-block tiles. A level l computes
** F_l = f(Y_l); the step's levels are covered by a sequence of kernels,
** each over levels [L0, L1) with a middle M: at level l its tile has u(l) = l - M (l >= M)
** or M - 1 - l (l < M) and spans [org + u d, org + w - u d), so it grows
** by d a side per level below M and shrinks by d above. Tiles of the two
** parities alternate along the system and partition every level (period
** P = w0 + w1 - 2 (G - 1) d, G the levels of a half). Hexagonal: kernel k
** has levels [(k-1) H, (k+1) H), M = k H, parity k mod 2 (H half the
** height). Trapezoidal rows of height h: per row a shrinking kernel
** (parity 0, M = L0) and a growing one (parity 1, M = L0 + h).
**
** A tile keeps its own levels over the window [org - d, org + w + d),
** each thread the same components at every level, in registers (only the
** argument Y_l, which f reads within d, goes through shared memory): below
** M it first loads from F (memory) what the tiles of the other parity
** computed in an earlier kernel; above M it needs only its own values.
** Levels below L0 come from memory, written in full by earlier kernels;
** otherwise a kernel writes F_l only in the band at its tile's edges that
** the next kernel loads (lv_band), and the last kernel none. A tile of
** width w needs w - 2 (G - 1) d >= d at its narrowest so that what it
** loads lies in its neighbours. The tile that computes level s-1 at j also forms ynew, the
** estimate and the norm there.
*/

/* Window components a thread may own (each keeps its stages in
   registers). */
#define LV_MAX_PER_THREAD 8

typedef struct lv_kernel {
  int L0, L1, M;         /* levels [L0, L1), the middle */
  long i0, count;        /* tiles i0 .. i0 + count - 1 */
  long off, w;           /* tile i's widest range: [i P + off, + w) */
} lv_kernel;

/* u(l) of kernel k: levels from the tile's widest one. */
static long lv_u(const lv_kernel *k, int l) {
  return l >= k->M ? l - k->M : k->M - 1 - l;
}

/* lo/hi = the tile's range at level l, clipped to [0, n). */
static void put_lv_range(odb_emit *b, const lv_kernel *k, int l) {
  long u = lv_u(k, l);
  put(b, "  lo = org + %ld * ODB_D; if (lo < 0) lo = 0;\n"
         "  hi = org + %ld - %ld * ODB_D; if (hi > ODB_N) hi = ODB_N;\n",
      u, k->w, u);
}

/*
** The edge band (in units of d) of level l that the next kernel loads: it
** covers l in its growing half with middle M + G, and reaches (M + G - l) d
** into this tile. Levels below M are read later only in full (from
** full_below), and nothing follows the last kernel: 0.
*/
static long lv_band(const lv_kernel *k, int l, long G, int last) {
  return last || l < k->M ? 0 : k->M + G - l;
}

/* 1 when F_l is read after its level: by a later stage, ynew or E. */
static int lv_used_later(const gen *g, int l) {
  for (int k = l + 1; k < g->S; ++k)
    if (rkg_uses(&g->e.a[k], l)) return 1;
  return rkg_uses(&g->e.b, l) || rkg_uses(&g->e.e, l);
}

/* Loads into f<q> the stages of t at component c of the thread's unit i:
   own levels from registers F<q>_<i>_<c>, levels below L0 from memory. */
static void put_lv_loads(odb_emit *b, const erk_terms *t, int L0, int i,
                         int c) {
  for (int k = 0; k < t->n; ++k) {
    int q = t->idx[k];
    if (q >= L0) put(b, "      const double f%d = F%d_%d_%d;\n", q, q, i, c);
    else put(b, "      const double f%d = __ldg(a.F[%d] + j%d + %d);\n", q, q,
             i, c);
  }
}

/* f of unit i at level l into F<l>_<i>_<c> (c < K), reading the argument
   at ya: the cell form (K > 1) or f_j. Returns its FP64 instructions a
   component. */
static double put_lv_rhs(gen *g, int K, int i, int l, const char *ya) {
  odb_emit *b = &g->b;
  if (K == 1) {
    put(b, "      F%d_%d_0 = odb_rhs(j%d, a.tl[%d], %s);\n", l, i, i, l, ya);
    return rkg_rhs_fp64(g);
  }
  put(b, "      {\n        const odb_idx ci = j%d / %d / ODB_GX, cj = j%d / %d - "
         "ci * ODB_GX;\n        const odb_cell_in in = { %s + j%d };\n"
         "        double f[%d];\n"
         "        odb_rhs_cell(ci, cj, a.tl[%d], in, f);\n",
      i, K, i, K, ya, i, K, l);
  for (int c = 0; c < K; ++c) put(b, "        F%d_%d_%d = f[%d];\n", l, i, c, c);
  put(b, "      }\n");
  return rkg_cell_fp64(g, 0) / K;   /* ODB_LAG is not defined here */
}

/*
** Components of kernel k's tiles at level l, over all its tiles (period
** P): the level's range (put_lv_range) widened by grow d a side (1: the
** argument Y_l, formed on [lo - d, hi + d)), clipped to the tile's
** window and to [0, n).
*/
static double lv_comps(const lv_kernel *k, int l, long P, long d, long n,
                       int grow) {
  long u = lv_u(k, l);
  double sum = 0;
  for (long i = k->i0; i < k->i0 + k->count; ++i) {
    long org = i * P + k->off;
    long lo = org + u * d, hi = org + k->w - u * d;
    if (lo < 0) lo = 0;
    if (hi > n) hi = n;
    lo -= grow * d;
    hi += grow * d;
    if (lo < org - d) lo = org - d;
    if (lo < 0) lo = 0;
    if (hi > org + k->w + d) hi = org + k->w + d;
    if (hi > n) hi = n;
    if (hi > lo) sum += (double)(hi - lo);
  }
  return sum;
}

/*
** One kernel (fsal_load: F_0 from memory). full_below: levels below it are
** written in full; G: levels a half tile; last: no kernel follows; slot0:
** its first partial sum of the norm, total: the partial sums of a step;
** np units a thread, K components a unit (K > 1: the cells of a 2-D grid
** problem, f in its cell form); P the tiles' period. Returns the FP64
** instructions of the kernel over all its tiles (lv_comps). Thread x owns the window's units x + i T
** through every level: their stage values stay in registers F<q>_<i>_<c>,
** y in y_<i>_<c>; only the argument Y_l, which f reads within d, goes
** through shared memory, double-buffered so that one barrier a level
** suffices. Ranges are multiples of K, so a unit is in or out whole.
*/
static double gen_lv_kernel(gen *g, const lv_kernel *k, int idx,
                            int fsal_load, int full_below, long G, int last,
                            long slot0, long total, int np, int K, long P) {
  odb_emit *b = &g->b;
  long win = k->w + 2 * g->p->d, d = g->p->d, n = g->p->n;
  int S = g->S, T = g->plan->threads;
  double fp64 = 0;
  char name[24];
  snprintf(name, sizeof name, "k_lv%d%s", idx, fsal_load ? "f" : "");
  rkg_put_kernel_head(g, name);
  put(b, "  extern __shared__ double sm[];\n"
         "  const odb_idx org = ((odb_idx)blockIdx.x + (%ld)) * ODB_HP + "
         "(%ld);\n"
         "  const odb_idx wlo = org - ODB_D;\n"
         "  odb_idx lo, hi;\n", k->i0, k->off);
  for (int i = 0; i < np; ++i) {
    put(b, "  const odb_idx j%d = wlo + ((odb_idx)threadIdx.x + %ld) * %d;\n"
           "  const bool v%d = ((odb_idx)threadIdx.x + %ld) * %d < %ld && "
           "j%d >= 0 && j%d < ODB_N;\n",
        i, (long)i * T, K, i, (long)i * T, K, win, i, i);
    for (int c = 0; c < K; ++c) {
      put(b, "  const double y_%d_%d = v%d ? __ldg(a.y + j%d + %d) : 0.0;\n",
          i, c, i, i, c);
      for (int q = k->L0; q < k->L1; ++q)
        put(b, "  double F%d_%d_%d = 0.0;\n", q, i, c);
    }
  }
  /* what the other parity computed beside the growing half */
  for (int q = k->L0; q < k->L1 && q < k->M; ++q) {
    put_lv_range(b, k, q);
    for (int i = 0; i < np; ++i) {
      put(b, "  if (v%d && (j%d < lo || j%d >= hi)) {\n", i, i, i);
      for (int c = 0; c < K; ++c)
        put(b, "    F%d_%d_%d = __ldg(a.F[%d] + j%d + %d);\n", q, i, c, q, i,
            c);
      put(b, "  }\n");
    }
  }
  for (int l = k->L0; l < k->L1; ++l) {
    int full = (l < full_below) || (l == S - 1 && g->m->fsal);
    long bw = lv_band(k, l, G, last) * g->p->d;
    int write = full || (bw > 0 && lv_used_later(g, l));
    int fpl = 0;          /* Y_l's LC a component */
    double fpf = 0;       /* F_l's a component */
    put(b, "  // level %d\n", l);
    put_lv_range(b, k, l);
    if (l > 0) {
      put(b, "  {\n    double *const Yb = sm + %ld - wlo;\n"
             "    const odb_idx y0 = lo - ODB_D, y1 = hi + ODB_D;\n",
          (long)(l % 2) * win);
      for (int i = 0; i < np; ++i) {
        put(b, "    if (v%d && j%d >= y0 && j%d < y1) {\n", i, i, i);
        for (int c = 0; c < K; ++c) {
          char ye[24];
          put(b, "     {\n");
          put_lv_loads(b, &g->e.a[l], k->L0, i, c);
          put(b, "      Yb[j%d + %d] = ", i, c);
          snprintf(ye, sizeof ye, "y_%d_%d", i, c);
          fpl = rkg_put_lc(b, ye, &g->e.a[l]);
          put(b, ";\n     }\n");
        }
        put(b, "    }\n");
      }
      put(b, "    __syncthreads();\n");
    } else {
      put(b, "  {\n");
    }
    for (int i = 0; i < np; ++i) {
      put(b, "    if (v%d && j%d >= lo && j%d < hi) {\n", i, i, i);
      if (l == 0 && fsal_load) {
        for (int c = 0; c < K; ++c)
          put(b, "      F0_%d_%d = __ldg(a.F[0] + j%d + %d);\n", i, c, i, c);
      } else {
        fpf = put_lv_rhs(g, K, i, l, l == 0 ? "a.y" : "Yb");
        if (write)
          for (int c = 0; c < K; ++c) {
            if (full) put(b, "      ");
            else put(b, "      if (j%d < lo + %ld || j%d >= hi - %ld) ", i, bw,
                     i, bw);
            put(b, "a.F[%d][j%d + %d] = F%d_%d_%d;\n", l, i, c, l, i, c);
          }
      }
      put(b, "    }\n");
    }
    put(b, "  }\n");
    fp64 += fpl * lv_comps(k, l, P, d, n, 1) + fpf * lv_comps(k, l, P, d, n, 0);
  }
  if (k->L1 == S) {
    int fpt = 0;          /* ynew, the estimate and the norm a component */   /* ynew, the estimate and the norm at level s-1 */
    erk_terms both = g->e.b;   /* the loads of b and e together */
    for (int q = 0; q < g->e.e.n; ++q)
      if (!rkg_uses(&both, g->e.e.idx[q]) && both.n < ERK_MAX_STAGES) {
        both.idx[both.n] = g->e.e.idx[q];
        both.coef[both.n++] = 0;
      }
    put(b, "  double acc = 0.0;\n");
    for (int i = 0; i < np; ++i) {
      put(b, "  if (v%d && j%d >= lo && j%d < hi) {\n", i, i, i);
      for (int c = 0; c < K; ++c) {
        char ye[24];
        snprintf(ye, sizeof ye, "y_%d_%d", i, c);
        put(b, "   {\n");
        put_lv_loads(b, &both, k->L0, i, c);
        put(b, "      const double yn = ");
        fpt = rkg_put_lc(b, ye, &g->e.b);
        put(b, ";\n      a.ynew[j%d + %d] = yn;\n", i, c);
        if (g->plan->has_err) {
          put(b, "      const double ej = ");
          fpt += rkg_put_lc(b, NULL, &g->e.e) + RKG_FP64_NORM;
          put(b, ";\n      acc += odb_sq_scaled(ej, %s, yn, a.atol, "
                 "a.rtol);\n", ye);
        }
        put(b, "   }\n");
      }
      put(b, "  }\n");
    }
    if (g->plan->has_err)
      put(b, "  odb_reduce(a, acc, %ldu + blockIdx.x, %ldu);\n", slot0,
          total);
    else
      put(b, "  (void)acc;\n");
    fp64 += fpt * lv_comps(k, S - 1, P, d, n, 0);
  }
  put(b, "}\n");
  return fp64;
}

/* floor(a / b) for b > 0. */
static long floor_div(long a, long b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The tiles i whose widest range [i P + off, + w) meets [0, n). */
static void lv_tiles(lv_kernel *k, long P, long n) {
  long i0 = floor_div(-k->off - k->w, P) + 1;
  long i1 = floor_div(n - 1 - k->off, P);
  k->i0 = i0;
  k->count = i1 >= i0 ? i1 - i0 + 1 : 0;
}

/*
** Builds the kernel sequence of the scheme (hex: hexagons of height
** h = 2 H; else trapezoid rows of height h), checks widths and shared
** memory, generates the kernels and their launches.
*/
odb_status rkg_levels(gen *g, const odb_gen_opts *o, int hex) {
  odb_gen_plan *pl = g->plan;
  const char *vn = hex ? "gpu_hexagonal" : "gpu_trapezoid";
  long S = g->S, d = g->p->d, n = g->p->n, h = o->tile_h, G, P;
  long w[2] = { o->tile_w, o->tile_w2 > 0 ? o->tile_w2 : o->tile_w };
  lv_kernel ks[ODB_GEN_MAX_LAUNCH];   /* s <= 16: at most 2 s kernels */
  int nk = 0, full_below = 0, np = 1;
  long total = 0, slot = 0;
  /* a 2-D grid problem whose d is one grid row: f in its cell form */
  const odb_problem *pb = g->p;
  int cu = pb->gpu_cell_source && pb->grid_comps >= 1 &&
           pb->grid_rows * pb->grid_cols * pb->grid_comps == n &&
           d == pb->grid_comps * pb->grid_cols ? pb->grid_comps : 1;
  if (h < 1 || (hex && (h % 2 || h > 2 * S)) || (!hex && h > S))
    return ODB_FAIL(ODB_ERR_ARG, "%s: tile height %ld must be %s", vn, h,
                    hex ? "even, from 2 to 2 s" : "from 1 to s");
  G = hex ? h / 2 : h;
  for (int p = 0; p < 2; ++p) {
    if (w[p] % cu) w[p] += cu - w[p] % cu;   /* whole cells */
    if (w[p] > n)   /* one tile spans the system */
      w[p] = n > (2 * G - 1) * d ? n : (2 * G - 1) * d;
    if (w[p] - 2 * (G - 1) * d < d)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: tile width %ld is narrower "
                      "than (2 G - 1) d = %ld (d = %ld, %ld levels a half "
                      "tile) so a tile would reach past its neighbour; widen "
                      "the tiles or lower the height", vn, w[p],
                      (2 * G - 1) * d, d, G);
  }
  P = w[0] + w[1] - 2 * (G - 1) * d;
  if (hex) {
    int K = (int)((S - 1) / G) + 2;
    for (int k = 0; k < K; ++k) {
      lv_kernel *x = &ks[nk++];
      x->L0 = (int)((k - 1) * G > 0 ? (k - 1) * G : 0);
      x->L1 = (int)((k + 1) * G < S ? (k + 1) * G : S);
      x->M = (int)(k * G);
      x->w = w[k % 2];
      x->off = k % 2 ? w[0] - (G - 1) * d : 0;
    }
  } else {
    for (long r = 0; r * h < S; ++r)
      for (int p = 0; p < 2; ++p) {
        lv_kernel *x = &ks[nk++];
        x->L0 = (int)(r * h);
        x->L1 = (int)((r + 1) * h < S ? (r + 1) * h : S);
        x->M = (int)(p ? r * h + h : r * h);
        x->w = w[p];
        x->off = p ? w[0] - (G - 1) * d : 0;
      }
  }
  for (int k = 0; k < nk; ++k) {
    size_t sm = 2 * (size_t)(ks[k].w + 2 * d) * sizeof(double);
    long per = (ks[k].w + 2 * d + (long)cu * o->threads - 1) /
               ((long)cu * o->threads);   /* units (cells) a thread */
    lv_tiles(&ks[k], P, n);
    if (ks[k].L0 > full_below) full_below = ks[k].L0;
    if ((long)sm > o->smem_max)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: a tile of width %ld needs "
                      "its argument twice over w + 2 d, %zu bytes of shared "
                      "memory (d = %ld); a block may have %ld; narrow the "
                      "tiles", vn, ks[k].w, sm, d, o->smem_max);
    if (per * cu > LV_MAX_PER_THREAD)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: a tile of width %ld gives "
                      "each of %d threads %ld components (w + 2 d over the "
                      "threads; at most %d keep their stages in registers); "
                      "raise threads or narrow the tiles", vn, ks[k].w,
                      o->threads, per * cu, LV_MAX_PER_THREAD);
    if (per > np) np = (int)per;
    if (ks[k].L1 == S) total += ks[k].count;
  }
  pl->tile_w = w[0];
  pl->tile_h = h;
  pl->nparts = total;
  pl->scratch[0] = pl->scratch[1] = 0;
  put(&g->b, "#define ODB_HP ((odb_idx)%ld)\n", P);
  if (pb->gpu_cell_source && cu == pb->grid_comps) {
    /* ODB_Y(di, dj, c): component c of the argument at cell (i + di,
       j + dj), cells row-major with their components interleaved */
    /* ODB_NR, ODB_NC, ODB_K: the grid, as every cell source sees it
       (odb_problem.h) */
    put(&g->b, "#define ODB_GX ((odb_idx)%ld)\n"
               "#define ODB_NR ((odb_idx)%ld)\n#define ODB_NC ((odb_idx)%ld)\n"
               "#define ODB_K %d\n"
               "struct odb_cell_in {\n  const double *p;\n};\n"
               "#define ODB_Y(di, dj, c) in.p[((di) * ODB_GX + (dj)) * %d + "
               "(c)]\n", pb->grid_cols, pb->grid_rows, pb->grid_cols, cu, cu);
    odb_emit_foreign(&g->b, pb->label, "gpu_cell_source",
                     pb->gpu_cell_source);
  }
  for (int k = 0; k < nk; ++k) {
    const lv_kernel *x = &ks[k];
    int has0 = x->L0 == 0 && g->m->fsal;
    size_t sm = 2 * (size_t)(x->w + 2 * d) * sizeof(double);
    /* traffic per step in vectors: y and the levels below L0 over the
       windows, the bands of the growing half; F_l written in full or in
       bands; ynew on top */
    double cover = (double)x->count * (double)(x->w + 2 * d) / (double)n;
    double per_d = (double)x->count * 2.0 * (double)d / (double)n;
    double rv = cover * (1 + x->L0), wv = 0;
    for (int l = x->L0; l < x->L1; ++l) {
      int full = l < full_below || (l == S - 1 && g->m->fsal);
      double e = per_d * (double)lv_band(x, l, G, k == nk - 1);
      if (l < x->M) rv += per_d * (double)(x->M - l);   /* loads */
      if (full) wv += 0.5;   /* each level: two kernels of tiles */
      else if (lv_used_later(g, l)) wv += e < 0.5 ? e : 0.5;
    }
    if (x->L1 == S) wv += 0.5;
    double fk = gen_lv_kernel(g, x, k, 0, full_below, G, k == nk - 1, slot,
                              total, np, cu, P), fkf = 0;
    if (has0)
      fkf = gen_lv_kernel(g, x, k, 1, full_below, G, k == nk - 1, slot,
                          total, np, cu, P);
    {
      char kn[24];
      odb_gen_launch *l;
      snprintf(kn, sizeof kn, "k_lv%d", k);
      l = rkg_add_launch(g, kn, has0 ? ODB_GEN_IF_STAGE0 : ODB_GEN_ALWAYS,
                         x->L1 == S, rv, wv);
      if (l) { l->grid = ODB_GEN_GRID_COUNT; l->blocks = x->count;
               l->smem = sm; l->fp64 = fk; }
      if (has0) {
        snprintf(kn, sizeof kn, "k_lv%df", k);
        l = rkg_add_launch(g, kn, ODB_GEN_IF_FSAL, x->L1 == S, rv + cover, wv);
        if (l) { l->grid = ODB_GEN_GRID_COUNT; l->blocks = x->count;
                 l->smem = sm; l->fp64 = fkf; }
      }
    }
    if (x->L1 == S) slot += x->count;
  }
  return ODB_OK;
}
