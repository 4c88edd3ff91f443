/* gen_rk_onchip.c - gpu_onchip: one persistent kernel a batch of attempts
   on a 2-D grid problem with a cell source, each block keeping its band of
   grid rows of y in shared memory across the attempts, stage by stage with
   a barrier between the blocks after each stage's argument (its band's
   edge rows are what the neighbouring bands read). The layout and its
   fixed helpers: device/onchip.cuh. */
#include <stdio.h>
#include <string.h>

#include "gen_rk_int.h"

/* Static shared memory a gpu_onchip block takes besides its dynamic
   shared memory: the controller's copy, the sums of the norm, the
   barrier's flags (about 0.6 KB; rounded up). */
#define ONCHIP_STATIC 1024L

/* Doubles of the dynamic shared memory of a band of HM rows of W doubles:
   y alone (place 2), or y, the argument with its two halo rows and the S
   stage vectors (place 1). */
static long onchip_doubles(long HM, long W, long S, int place) {
  return place == 1 ? (HM + (HM + 2) + S * HM) * W : HM * W;
}

/* The tallest band of NR rows over the blocks (one a multiprocessor, at
   most one a row). */
static long onchip_blocks(long NR, long sms) {
  return sms < NR ? sms : NR;
}

/* See odb_gen_rk.h. */
odb_status odb_gen_onchip_fit(const odb_problem *p, int S, long sms,
                                 long smem, int place,
                                 odb_gen_onchip_layout *out) {
  long NR = p->grid_rows, NC = p->grid_cols, K = p->grid_comps, W, B, HM;
  long avail = smem - ONCHIP_STATIC;
  memset(out, 0, sizeof *out);
  if (!p->gpu_cell_source || K < 1 || K > 8 || NR < 2 || NC < 2 ||
      NR * NC * K != p->n)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_onchip: %s is not a 2-D grid "
                    "problem with a cell source (gpu_cell_source, rows x "
                    "cols x comps = n, 1..8 comps)", p->label);
  if (sms < 1 || avail < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_onchip: %ld multiprocessors with %ld "
                    "bytes of shared memory a block hold nothing", sms, smem);
  if (place < 0 || place > 2)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_onchip: place %d must be 0 (chosen), "
                    "1 (shared) or 2 (global)", place);
  W = NC * K;
  B = onchip_blocks(NR, sms);
  HM = (NR + B - 1) / B;
  if (onchip_doubles(HM, W, S, 2) * 8 > avail) {
    /* the largest grid of this shape whose y fits: a square one (N x N)
       or, otherwise, the rows of this width */
    long z = 1;
    if (NR == NC) {
      while (((z + 1 + onchip_blocks(z + 1, sms) - 1) /
              onchip_blocks(z + 1, sms)) * (z + 1) * K * 8 <= avail)
        ++z;
    } else {
      z = (avail / (W * 8)) * sms;
    }
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_onchip: y needs %.1f MB of "
                    "shared memory over %ld blocks (%ld rows of %ld cells "
                    "a block: %.1f KB); the device has %.1f MB (%ld "
                    "multiprocessors x %.1f KB): %s <= %ld",
                    (double)(B * HM * W) * 8e-6, B, HM, NC,
                    (double)(HM * W) * 8e-3, (double)(sms * avail) * 1e-6,
                    sms, (double)avail * 1e-3, NR == NC ? "N" : "rows", z);
  }
  if (place == 1 && onchip_doubles(HM, W, S, 1) * 8 > avail)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_onchip: place = 'shared' "
                    "needs %.1f KB of shared memory a block (y, the argument "
                    "with 2 halo rows and %d stage vectors of %ld rows of %ld "
                    "cells); a block has %.1f KB; give place = 'global'",
                    (double)(onchip_doubles(HM, W, S, 1) * 8) * 1e-3, S, HM,
                    NC, (double)avail * 1e-3);
  out->blocks = B;
  out->rows = HM;
  out->place = place ? place
               : onchip_doubles(HM, W, S, 1) * 8 <= avail ? 1 : 2;
  out->smem = (size_t)onchip_doubles(HM, W, S, out->place) * 8;
  return ODB_OK;
}

/* "ys[x] + h * (c0 * K(q0) + ...)" of terms t (yexpr NULL: without y),
   K(q) stage q's value at band component x. Returns its FP64 count. */
static int put_on_lc(odb_emit *b, const char *yexpr, const erk_terms *t) {
  if (t->n == 0) {
    put(b, "%s", yexpr ? yexpr : "0.0");
    return 0;
  }
  if (yexpr) put(b, "%s + ", yexpr);
  put(b, "h * (");
  for (int i = 0; i < t->n; ++i) {
    if (i) put(b, " + ");
    rkg_put_num(b, t->coef[i]);
    put(b, " * ODB_KV(%d, x)", t->idx[i]);
  }
  put(b, ")");
  return rkg_lc_fp64(t, yexpr != NULL, 1);
}

/*
** Stage l of an attempt: the argument on the band (its edge rows into the
** halo buffer, place 1), the barrier, the neighbours' edge rows (place 1),
** F_l on the band. *lc gets the argument's FP64 count per component.
*/
static void put_on_stage(gen *g, int l, double *lc) {
  odb_emit *b = &g->b;
  put(b, "      {   // stage %d\n", l);
  put(b, "        const double tl = ctl ? __dadd_rn(t0, __dmul_rn(");
  rkg_put_num(b, g->m->c[l]);
  put(b, ", h)) : a.tl[%d];\n", l);
  put(b, "        for (odb_idx x = t; x < nq; x += ODB_T) {\n"
         "          const double v = ");
  *lc += put_on_lc(b, "ys[x]", &g->e.a[l]);
  put(b, ";\n"
         "#if ODB_PLACE == 1\n"
         "          as[ODB_RW + x] = v;\n"
         "          if (x < ODB_RW) hb[(((bk + 1) & 1) * ODB_NB + blk) * 2 * "
         "ODB_RW + x] = v;\n"
         "          if (x >= nq - ODB_RW) hb[((((bk + 1) & 1) * ODB_NB + blk) "
         "* 2 + 1) * ODB_RW + x - (nq - ODB_RW)] = v;\n"
         "#else\n"
         "          a.Y[%d][g0 + x] = v;\n"
         "#endif\n"
         "        }\n"
         "        if (!odb_bar_a(a.bar, a.fail, 0u, 0u, ++bk)) { alive = 0; "
         "break; }\n"
         "#if ODB_PLACE == 1\n"
         "        if (blk > 0)   // the row above: the band before's last\n"
         "          for (odb_idx x = t; x < ODB_RW; x += ODB_T)\n"
         "            as[x] = __ldcg(hb + (((bk & 1) * ODB_NB + blk - 1) * 2 "
         "+ 1) * ODB_RW + x);\n"
         "        if (blk < ODB_NB - 1)   // the row below: the next band's "
         "first\n"
         "          for (odb_idx x = t; x < ODB_RW; x += ODB_T)\n"
         "            as[ODB_RW + nq + x] = __ldcg(hb + ((bk & 1) * ODB_NB + "
         "blk + 1) * 2 * ODB_RW + x);\n"
         "        __syncthreads();\n"
         "        const double *const arg = as + ODB_RW;\n"
         "#else\n"
         "        const double *const arg = a.Y[%d] + g0;\n"
         "#endif\n"
         "        for (odb_idx q = t; q < nc; q += ODB_T) {\n"
         "          const odb_idx r = q / ODB_NC, j = q - r * ODB_NC;\n"
         "          const odb_cell_in in = odb_on_rows(arg + r * ODB_RW, j);\n"
         "          double f[ODB_K];\n"
         "          odb_rhs_cell(r0 + r, j, tl, in, f);\n"
         "          for (int cc = 0; cc < ODB_K; ++cc) ODB_KV(%d, q * ODB_K + cc) = "
         "f[cc];\n"
         "        }\n"
         "        __syncthreads();\n"
         "      }\n", l % 2, l % 2, l);
}

/*
** The kernel k_onchip. Without a controller (a.ctl NULL) one attempt of
** a.h from a.y into a.ynew, the norm reduced into *a.err2 as every
** variant's; with one, up to a.par attempts from a.y, each block deciding
** accept or reject on the same total of the norm (odb_on_total) and
** keeping the accepted new values in its y, which goes back to a.y at the
** end, and block 0 writes the controller back. Returns the FP64
** instructions of an attempt.
*/
static double gen_on_kernel(gen *g) {
  odb_emit *b = &g->b;
  const odb_problem *p = g->p;
  int S = g->S, err = g->plan->has_err;
  double lc = 0, tail = 0, cells = (double)(p->grid_rows * p->grid_cols);
  odb_emit_foreign(b, p->label, "gpu_cell_source", p->gpu_cell_source);
  put(b, "extern \"C\" __global__ void __launch_bounds__(ODB_T, 1)\n"
         "k_onchip(const odb_args a) {\n"
         "  extern __shared__ __align__(16) double odb_sm[];\n"
         "  double *const ys = odb_sm;   // the band of y [ODB_HM rows]\n"
         "#if ODB_PLACE == 1\n"
         "  // the argument with its halo rows, then the stage vectors\n"
         "  double *const as = ys + ODB_HM * ODB_RW;\n"
         "  double *const ks = as + (ODB_HM + 2) * ODB_RW;\n"
         "  double *const hb = a.Y[0];   // [parity][block][first, last][row]\n"
         "#define ODB_KV(l, x) ks[(l) * (ODB_HM * ODB_RW) + (x)]\n"
         "#define ODB_YN(x) as[ODB_RW + (x)]\n"
         "#else\n"
         "#define ODB_KV(l, x) a.F[l][g0 + (x)]\n"
         "#define ODB_YN(x) a.ynew[g0 + (x)]\n"
         "#endif\n"
         "  const odb_idx t = (odb_idx)threadIdx.x, blk = (odb_idx)blockIdx.x;\n"
         "  const odb_idx r0 = blk * ODB_NR / ODB_NB;\n"
         "  const odb_idx r1 = (blk + 1) * ODB_NR / ODB_NB;\n"
         "  const odb_idx nc = (r1 - r0) * ODB_NC, nq = nc * ODB_K;\n"
         "  const odb_idx g0 = r0 * ODB_RW;   // the band's first in a vector\n"
         "  const bool ctl = a.ctl != 0;\n"
         "  unsigned bk = 0;   // barriers passed\n"
         "  int alive = 1;\n");
  if (err)
    put(b, "  __shared__ odb_ctl c;\n"
           "  __shared__ double odb_sh[32];\n"
           "  if (ctl && t == 0) c = *a.ctl;\n");
  else
    put(b, "  (void)ctl;\n");
  put(b, "  for (odb_idx x = t; x < nq; x += ODB_T) ys[x] = __ldcg(a.y + g0 + "
         "x);\n"
         "  __syncthreads();\n"
         "  for (long long att = 0;; ++att) {\n"
         "    double h, t0;\n");
  if (err)
    put(b, "    if (ctl) {\n"
           "      if (c.done || att >= a.par) break;\n"
           "      h = c.h;\n"
           "      t0 = c.t;\n"
           "    } else {\n");
  else
    put(b, "    {\n");
  put(b, "      if (att > 0) break;\n"
         "      h = a.h;\n"
         "      t0 = a.tl[0];\n"
         "    }\n"
         "    (void)t0;\n");
  if (err) put(b, "    const long long acc0 = ctl ? c.accepted : 0;\n");
  put(b, "    double acc = 0.0;\n"
         "    do {\n");
  for (int l = 0; l < S; ++l) put_on_stage(g, l, &lc);
  /* the new solution and the estimate */
  put(b, "      for (odb_idx x = t; x < nq; x += ODB_T) {\n"
         "        const double yv = ys[x];\n"
         "        const double yn = ");
  tail += put_on_lc(b, "yv", &g->e.b);
  put(b, ";\n"
         "#if ODB_PLACE == 1\n"
         "        if (!ctl) a.ynew[g0 + x] = yn;\n"
         "#endif\n"
         "        ODB_YN(x) = yn;\n");
  if (err) {
    put(b, "        const double ej = ");
    tail += put_on_lc(b, NULL, &g->e.e) + RKG_FP64_NORM;
    put(b, ";\n        acc += odb_sq_scaled(ej, yv, yn, a.atol, a.rtol);\n");
  }
  put(b, "      }\n    } while (0);\n"
         "    if (!alive) break;\n");
  if (err)
    put(b, "    if (!ctl) {\n"
           "      odb_reduce(a, acc, (unsigned)blk, gridDim.x);\n"
           "      continue;\n"
           "    }\n"
           "    {   // the norm over the blocks; each block decides alike\n"
           "      const double v = odb_block_sum(acc, odb_sh);\n"
           "      if (t == 0) a.part[blk] = v;\n"
           "      if (!odb_bar_a(a.bar, a.fail, 0u, 0u, ++bk)) { alive = 0; break; }\n"
           "      if (t < 32) {\n"
           "        const double tot = odb_on_total(a.part);\n"
           "        if (t == 0) odb_ctl_after(&c, tot, h);\n"
           "      }\n"
           "      __syncthreads();\n"
           "      if (c.accepted != acc0)   // the new values become y\n"
           "        for (odb_idx x = t; x < nq; x += ODB_T) ys[x] = ODB_YN(x);\n"
           "      __syncthreads();\n"
           "    }\n");
  else
    put(b, "    (void)acc;\n");
  put(b, "  }\n");
  if (err)
    put(b, "  if (ctl && alive) {   // the state back, once a launch\n"
           "    for (odb_idx x = t; x < nq; x += ODB_T) "
           "((double *)a.y)[g0 + x] = ys[x];\n"
           "    if (blk == 0 && t == 0) *a.ctl = c;\n"
           "  }\n");
  put(b, "  odb_bar_exit(a.bar, ODB_NBAR);\n}\n");
  return (lc + tail) * (double)p->n + cells * S * rkg_cell_fp64(g, 0);
}

/* See gen_rk_int.h. */
odb_status rkg_onchip(gen *g, const odb_gen_opts *o) {
  const odb_problem *p = g->p;
  odb_gen_plan *pl = g->plan;
  long NR = p->grid_rows, NC = p->grid_cols, K = p->grid_comps;
  long B = o->groups, HM, S = g->S;
  int place = o->place;
  double fp64;
  if (!p->gpu_cell_source || K < 1 || K > 8 || NR < 2 || NC < 2 ||
      NR * NC * K != p->n)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_onchip: %s is not a 2-D grid "
                    "problem with a cell source (gpu_cell_source, rows x "
                    "cols x comps = n, 1..8 comps)", p->label);
  if (B < 1 || B > NR)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_onchip: %ld blocks for %ld rows: "
                    "1..rows", B, NR);
  if (place != 1 && place != 2)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_onchip: place %d must be 1 (shared) "
                    "or 2 (global)", place);
  HM = (NR + B - 1) / B;
  pl->grid = B;
  pl->nparts = B;
  pl->nbar = 64;   /* [0] the blocks leaving, [32] barrier A's counter */
  pl->rows = HM;
  pl->tile_h = S;
  pl->scratch[0] = place == 1 ? 2 * B * 2 * NC * K : p->n;
  pl->scratch[1] = place == 1 ? 0 : p->n;
  put(&g->b, "// place %s: the stage argument and vectors in %s memory\n",
      place == 1 ? "shared" : "global", place == 1 ? "shared" : "global");
  put(&g->b, "#define ODB_S %ld\n#define ODB_K %ld\n"
             "#define ODB_NR ((odb_idx)%ld)\n#define ODB_NC ((odb_idx)%ld)\n"
             "#define ODB_NB %ld\n#define ODB_HM ((odb_idx)%ld)\n"
             "#define ODB_PLACE %d\n"
             "#define ODB_G %ld\n#define ODB_GRID %ldu\n"
             "#define ODB_BARB 64u\n#define ODB_NBAR 64u\n"
             "#define ODB_WATCHDOG %.0f\n",
      S, K, NR, NC, B, HM, place, B, B,
      (o->watchdog > 0 ? o->watchdog : 2.0) * 1e9);
  odb_emit_cuh(&g->b, &odb_cuh_rk_barrier, NULL);
  odb_emit_cuh(&g->b, &odb_cuh_onchip, NULL);
  fp64 = gen_on_kernel(g);
  {
    /* what an attempt moves through global memory: place 1 the halo rows
       (two a block and stage); place 2 each stage's argument written and
       read (with its halo rows), F_l written and read by the later
       combinations, ynew written and read; y in and out once a launch is
       not counted per attempt */
    double rv = 0, wv = 0, halo = (double)(2 * B * NC * K) / (double)p->n;
    if (place == 1) {
      rv = wv = S * halo;
    } else {
      for (int l = 0; l < S; ++l) rv += g->e.a[l].n;
      rv += g->e.b.n + g->e.e.n + S * (1 + halo) + 1;
      wv = 2.0 * S + 1;
    }
    odb_gen_launch *l = rkg_add_launch(g, "k_onchip", ODB_GEN_ALWAYS,
                                       pl->has_err, rv, wv);
    if (l) {
      l->grid = ODB_GEN_GRID_GROUPS;
      l->smem = (size_t)onchip_doubles(HM, NC * K, S, place) * 8;
      l->fp64 = fp64;
    }
  }
  return ODB_OK;
}
