/* gen_tsm_space.c - the tuning spaces of the tall & skinny kernels
   (odb_tsm_space_list): the FMA kernels of Ernst et al., the tensor-core
   kernels and Gauss's products, quick and full. */
#include <string.h>

#include "gen_tsm_int.h"

/* A growing list of configurations; at most max are written. wide: the
   quick space of a wide complex shape (wide_complex). */
typedef struct cfg_list {
  odb_tsm_cfg *list;
  int max, n, cc, wide;
} cfg_list;

/* The warp tiles (wm, wn) of the quick mma space. */
static const int tq[][2] = { { 1, 2 }, { 1, 4 }, { 1, 8 }, { 2, 1 },
                             { 2, 2 }, { 2, 4 } };   /* tsmttsm */
static const int mq[][2] = { { 1, 1 }, { 1, 2 }, { 1, 4 }, { 1, 8 },
                             { 2, 1 } };             /* tsmm */

/* Appends c when it is valid, its estimate fits and the device runs it. */
static void space_add(const odb_tsm_cfg *c, cfg_list *l) {
  if (!odb_tsm_cfg_allowed(c)) return;
  if (l->cc && odb_tsm_cfg_min_cc(c) > l->cc) return;
  if (l->list && l->n < l->max) l->list[l->n] = *c;
  ++l->n;
}

/* The FMA kernels of Ernst et al. over the options of their search space
   (tiles, transposed, leapfrog, unroll, reduction, staging; threads per
   row for tsmm), each with 2, 4 or 8 blocks per SM. */
static void space_fma(odb_tsm_cfg c, int full, cfg_list *l) {
  static const int tiles[] = { 1, 2, 4, 8, 16 };
  static const int tprs[] = { 1, 2, 4, 8, 16, 32 };
  static const int bpss[] = { 2, 4, 8 };
  int M = c.M, N = c.N;
  if (c.op == ODB_TSM_TSMTTSM) {
    for (int a = 0; a < 5; ++a)
      for (int b = 0; b < 5; ++b) {
        if (tiles[a] > M || tiles[b] > N) continue;
        /* the quick space skips tiles thinner than 2 where the side allows */
        if (!full && (tiles[a] < (M < 2 ? M : 2) || tiles[b] < (N < 2 ? N : 2)))
          continue;
        c.tm = tiles[a];
        c.tn = tiles[b];
        for (int tr = full ? 0 : 1; tr <= 1; ++tr)
          for (int lf = 0; lf <= 1; ++lf)
            for (int u = 1; u <= (full ? 2 : 1); ++u)
              for (int r = full ? 0 : 1; r <= 1; ++r)
                for (int st = 0; st <= 64; st += 32)
                  for (int q = 0; q < 3; ++q) {
                    c.transposed = tr;
                    c.leapfrog = lf;
                    c.unroll = u;
                    c.reduce = r;
                    c.stage = st > 0;
                    c.chunk = st;
                    c.blocks_per_sm = bpss[q];
                    space_add(&c, l);
                  }
      }
    return;
  }
  for (int a = 0; a < 6; ++a) {
    if (tprs[a] > N) continue;
    c.tpr = tprs[a];
    for (int s = 0; s <= (full ? 2 : 1); ++s)
      for (int u = full ? 1 : 2; u <= 4; u += full ? 1 : 2)
        for (int q = 0; q < 3; ++q) {
          c.csrc = s;
          c.unroll = u;
          c.blocks_per_sm = bpss[q];
          space_add(&c, l);
        }
  }
}

/*
** 1 when c's quick space is the wider one of complex shapes at least 32
** wide each side: there the whole C (or the columns of B a block writes)
** needs many warps or large warp tiles, the register file and shared
** memory leave few of the quick space's tiles, chunks and stages (14
** configurations for A^T B 64 x 64), and the card runs at its power cap
** on a compute-bound kernel, where the fastest configuration moved with
** the card (H100: a full-space pick at 90.9% of the roofline, H200: the
** quick pick at 63.9%, behind cuBLAS).
*/
static int wide_complex(const odb_tsm_cfg *c, int full) {
  return !full && c->t == ODB_TSM_Z && c->M >= 32 && c->N >= 32;
}

/* 1 when a warp tile of w entries (a multiple of unit) wastes no whole
   unit on a side of n entries: w <= n rounded up to unit. */
static int tile_fits(int w, int unit, int n) {
  return w <= cdiv(n, unit) * unit;
}

/* 1 when (wm, wn) is a row of the n rows of t. */
static int tile_in(const int (*t)[2], int n, int wm, int wn) {
  for (int i = 0; i < n; ++i)
    if (t[i][0] == wm && t[i][1] == wn) return 1;
  return 0;
}

/* 1 when the plain mma configuration c (m16n8k*) is one of the quick
   space of narrower shapes: its warp tiles, chunks of 32 or 64 rows, 3
   stages (AtB also 4) on a filled device, 2 with a block per chunk. */
static int in_quick_mma(const odb_tsm_cfg *c) {
  if (c->chunk != 32 && c->chunk != 64) return 0;
  if (c->op == ODB_TSM_TSMTTSM)
    return tile_in(tq, 6, c->wm, c->wn) && c->stages >= 3;
  return tile_in(mq, 5, c->wm, c->wn) &&
         c->stages == (c->blocks_per_sm < 0 ? 2 : 3);
}

static int in_quick_gauss(const odb_tsm_cfg *c);

/*
** What the quick space of a wide complex shape keeps beyond the quick
** space of narrower shapes (which it keeps whole): m16n8k8 and m16n8k16
** (m16n8k4 multiplies the same with two or four times the mma and
** fragment-load instructions; Gauss's m16n8k8 kernels led m16n8k4 on an
** H200), plain warp tiles of 2 mma blocks or more (a single block per
** warp reads the most shared memory per flop), and no chunk of 16 rows
** split into 2 row groups (8 rows a group: one step per stage).
*/
static int wide_keeps(const odb_tsm_cfg *c) {
  if (c->gauss ? in_quick_gauss(c) : in_quick_mma(c)) return 1;
  if (c->mma == ODB_TSM_MMA_M16N8K4) return 0;
  if (!c->gauss && c->wm * c->wn < 4) return 0;
  return !(c->rg == 2 && c->chunk == 16);
}

/* Adds c with each mma shape of shapes[0..n-1]; m8n8k4 gets twice the
   tiles down (wm) so that a warp covers the same entries of C or B. */
static void add_shapes(odb_tsm_cfg c, const int *shapes, int n,
                       cfg_list *l) {
  int wm = c.wm;
  for (int i = 0; i < n; ++i) {
    c.mma = shapes[i];
    c.wm = shapes[i] == ODB_TSM_MMA_M8N8K4 ? 2 * wm : wm;
    if (c.wm <= 8 && (!l->wide || wide_keeps(&c))) space_add(&c, l);
  }
}

/*
** The grids of an mma tsmm configuration c: c's own (the device filled
** or blocks_per_sm), and a block per chunk with 2 stages (the chunk
** loads while the block starts; measured fastest for real widths from 32
** to 64 on an H100). Full: a block per chunk with every number of
** stages, and each also with B staged for coalesced stores (ostage; no
** clear gain either way on an H100, so the quick space stages only where
** the writes dominate).
*/
static void tsmm_grids(odb_tsm_cfg c, int full, const int *shapes,
                       int nshapes, cfg_list *l) {
  /* quick: staged stores too where B is at least 4 times as wide as A
     (the writes dominate) */
  int staged = full || 4 * c.M <= c.N;
  for (int o = 0; o <= staged; ++o) {
    c.ostage = o;
    add_shapes(c, shapes, nshapes, l);
    /* once per configuration of the rest (wide complex: the loop's
       2-stage pass) */
    if (c.blocks_per_sm == 0 && (full || !l->wide || c.stages == 2)) {
      odb_tsm_cfg one = c;
      one.blocks_per_sm = -1;
      if (!full) one.stages = 2;
      add_shapes(one, shapes, nshapes, l);
    }
  }
}

/*
** The tensor-core kernels (real view at least 4 wide each side, or a
** narrow AC beside a side of 16; AtB from 4 beside a side of 16). Quick
** (AtB at least 8 wide, or 4 beside 16): the fastest mma shapes of the device (m16n8k4,
** m16n8k8, m16n8k16 from sm_90 on, m8n8k4 before), warp tiles of 16 rows
** times 16 to 64 columns and 32 x 16, 32 x 32 (tsmttsm) or 1..2 row
** blocks times 1..8 column blocks (tsmm), 1 or 2 row groups, chunks of
** 32 or 64 rows, 3 stages (AtB also 4), the device filled with blocks, the local
** reduction; C from registers or shared memory; tsmm also a block per
** chunk (tsmm_grids). Quick for wide complex shapes (wide_complex): every
** warp tile of 1..8 blocks each way, chunks of 16, 32 or 64 rows and 2 to
** 4 stages, the rest as quick. Full: every shape, 1..8 tiles each way, 1, 2 or 4
** row groups, chunks of 16 to 128 rows, 2 to 4 stages, both reductions,
** 0, 1 or 2 blocks per SM. All: each AtB configuration twice, walking
** every gridDim.x-th chunk and taking its chunks from a counter
** (sched=dyn: the SMs that read faster take more chunks, which put
** complex 16 x 16 and 32 x 8 ahead of cuBLAS on an H100; BENCHMARKS.md,
** "Tall & skinny products on the GPU").
*/
static void space_mma(odb_tsm_cfg c, int full, cfg_list *l) {
  static const int wts[] = { 1, 2, 4, 8 };
  static const int chunks_q[] = { 32, 64 }, chunks_f[] = { 16, 32, 64, 128 };
  static const int chunks_w[] = { 16, 32, 64 };
  static const int stages_f[] = { 2, 3, 4 }, bps_f[] = { 0, 1, 2 };
  static const int all[] = { 1, 2, 3, 4 }, new90[] = { 2, 3, 4 }, old[] = { 1 };
  int e = c.t == ODB_TSM_Z ? 2 : 1, Mr = e * c.M, Nr = e * c.N;
  int wide = l->wide;
  int nch = full ? 4 : wide ? 3 : 2, nbp = full ? 3 : 1;
  /* quick AtB also 4 stages (faster than 3 for complex 16 x 16 on an
     H100); wide complex 2 to 4 */
  int nst = full || wide ? 3 : c.op == ODB_TSM_TSMTTSM ? 2 : 1;
  const int *chunks = full ? chunks_f : wide ? chunks_w : chunks_q;
  const int *shapes = full ? all : l->cc && l->cc < 90 ? old : new90;
  int nshapes = full ? 4 : l->cc && l->cc < 90 ? 1 : 3;
  int nt = full || wide ? 16 : c.op == ODB_TSM_TSMTTSM ? 6 : 5;
  /* quick AtB: at least 8 wide (the FMA kernels reach the roofline
     below), or 4 beside a side of 16 (real 5 x 37: the FMA kernels
     measured behind cuBLAS); AC from 4 (the FMA kernels of real 16 x 4
     fall short of the roofline), and any width beside a side of 16: a
     narrow AC is a GEMV or an outer product, where the FMA kernels' rows
     a thread read or write A and B uncoalesced (measured behind cuBLAS on
     an H100; BENCHMARKS.md, "Tall & skinny products on the GPU") */
  int lo = Mr < Nr ? Mr : Nr, hi = Mr < Nr ? Nr : Mr;
  int least = c.op == ODB_TSM_TSMM ? (hi >= 16 ? 1 : 4)
              : full || hi >= 16 ? 4 : 8;
  if (lo < least) return;
  /* an A under 4 real columns fills one k4 step: quick takes m16n8k4 alone
     (the deeper shapes would multiply zeros, and the compiles add up) */
  if (!full && c.op == ODB_TSM_TSMM && Mr < 4 && !(l->cc && l->cc < 90)) {
    static const int k4[] = { ODB_TSM_MMA_M16N8K4 };
    shapes = k4;
    nshapes = 1;
  }
  c.tm = c.tn = c.tpr = 1;
  c.unroll = 1;
  c.block = 256;
  for (int w = 0; w < nt; ++w) {
    int wm = full || wide ? wts[w / 4]
             : c.op == ODB_TSM_TSMTTSM ? tq[w][0] : mq[w][0];
    int wn = full || wide ? wts[w % 4]
             : c.op == ODB_TSM_TSMTTSM ? tq[w][1] : mq[w][1];
    /* no warp tile reaches a whole 16-row or 8-column block past the
       shape (tsmttsm) or a column block past B (tsmm) */
    if (c.op == ODB_TSM_TSMTTSM && !tile_fits(16 * wm, 16, Mr)) continue;
    if (!tile_fits(8 * wn, 8, Nr)) continue;
    for (int rg = 1; rg <= (full ? 4 : 2); rg *= 2)
      for (int k = 0; k < nch; ++k)
        for (int st = 0; st < nst; ++st)
          for (int q = 0; q < nbp; ++q)
            for (int v = 0; v < 2; ++v) {
              c.wm = wm;
              c.wn = wn;
              c.rg = rg;
              c.chunk = chunks[k];
              c.stages = full || wide ? stages_f[st] : 3 + st;
              c.blocks_per_sm = full ? bps_f[q] : 0;
              if (c.op == ODB_TSM_TSMTTSM) {
                if (!full && v) continue;
                c.reduce = full ? v : ODB_TSM_REDUCE_LOCAL;
              } else {
                c.csrc = v ? ODB_TSM_C_SHARED : ODB_TSM_C_REGS;
                tsmm_grids(c, full, shapes, nshapes, l);
                continue;
              }
              add_shapes(c, shapes, nshapes, l);
              c.dyn = 1;   /* the same with chunks from the counter */
              add_shapes(c, shapes, nshapes, l);
              c.dyn = 0;
            }
  }
}

/* c again with its chunks handed out by the counter (sched=dyn). */
static void space_dyn(odb_tsm_cfg c, cfg_list *l) {
  c.dyn = 1;
  space_add(&c, l);
}

/*
** Gauss's three products (complex, m16n8k* on sm_90; widths from 8
** complex columns each side). Warp tiles count complex entries. Quick:
** the candidates that led on an H200 (tsmm: 16 x 8 warp tiles with C in
** registers, 32 x 8, 16 x 16 with C in shared memory; tsmttsm: 32 x 16
** and 16 x 32; m16n8k8 ahead of m16n8k4 there), and 16 x 8 tiles on
** m16n8k16 (in the space without a measurement behind it). tsmttsm also
** C split into 2 bands (two blocks per SM; likewise without a measurement
** behind it). Full: the tiles of tt, 1 or 2 row groups, chunks of 16 to
** 64 rows, 2 to 4 stages, m16n8k4/k8/k16, the local reduction and C in
** 1, 2 or 4 bands (tsmttsm), C from registers or shared memory (tsmm),
** the device filled. tsmm also with a block per chunk (2 stages in the
** quick space, each number of stages in the full one); tsmttsm without
** bands also with sched=dyn (space_dyn). Quick for wide complex shapes:
** the full space's options less what wide_keeps leaves out, a block per
** chunk with 2 stages, and every row of the quick table.
*/
/* quick: op, mma, wm, wn, rg, chunk, stages, csrc or split */
static const int gauss_quick[][8] = {
  { ODB_TSM_TSMM, 2, 1, 1, 1, 32, 3, ODB_TSM_C_REGS },
  { ODB_TSM_TSMM, 2, 1, 1, 1, 32, 4, ODB_TSM_C_REGS },
  { ODB_TSM_TSMM, 3, 1, 1, 1, 32, 2, ODB_TSM_C_REGS },
  { ODB_TSM_TSMM, 3, 1, 1, 1, 16, 4, ODB_TSM_C_REGS },
  { ODB_TSM_TSMM, 3, 2, 1, 1, 32, 3, ODB_TSM_C_REGS },
  { ODB_TSM_TSMM, 3, 1, 2, 2, 32, 2, ODB_TSM_C_SHARED },
  { ODB_TSM_TSMM, 4, 1, 1, 1, 16, 4, ODB_TSM_C_REGS },
  { ODB_TSM_TSMM, 4, 1, 1, 1, 32, 3, ODB_TSM_C_REGS },
  { ODB_TSM_TSMTTSM, 3, 2, 2, 1, 16, 4, 1 },
  { ODB_TSM_TSMTTSM, 3, 1, 4, 1, 32, 3, 1 },
  { ODB_TSM_TSMTTSM, 2, 1, 2, 1, 16, 4, 2 },
  { ODB_TSM_TSMTTSM, 3, 1, 2, 1, 16, 4, 2 },
  { ODB_TSM_TSMTTSM, 3, 2, 2, 1, 16, 4, 2 },
  { ODB_TSM_TSMTTSM, 3, 1, 4, 1, 16, 4, 2 },
  { ODB_TSM_TSMTTSM, 3, 2, 2, 1, 32, 2, 2 },
  { ODB_TSM_TSMTTSM, 3, 1, 2, 1, 32, 2, 2 },
};
#define NGQ ((int)(sizeof gauss_quick / sizeof gauss_quick[0]))

/* 1 when the Gauss configuration c is in the quick space of narrower
   shapes: a row of gauss_quick, its block-per-chunk twin with 2 stages
   (tsmm), or its sched=dyn twin (tsmttsm without bands). */
static int in_quick_gauss(const odb_tsm_cfg *c) {
  for (int i = 0; i < NGQ; ++i) {
    const int *q = gauss_quick[i];
    if (q[0] != (int)c->op || q[1] != c->mma || q[2] != c->wm ||
        q[3] != c->wn || q[4] != c->rg || q[5] != c->chunk)
      continue;
    if (c->op == ODB_TSM_TSMM) {
      if (c->csrc == q[7] && (c->blocks_per_sm < 0 ? c->stages == 2
                                                   : c->stages == q[6]))
        return 1;
    } else if (c->split == (q[7] > 1 ? q[7] : 0) && c->stages == q[6]) {
      return 1;
    }
  }
  return 0;
}

/* 1 when an earlier row of the quick table q differs from row i only in
   its stages (its block-per-chunk twin is the same configuration). */
static int same_but_stages(const int (*q)[8], int i) {
  for (int j = 0; j < i; ++j) {
    int k = 0;
    while (k < 8 && (k == 6 || q[j][k] == q[i][k])) ++k;
    if (k == 8) return 1;
  }
  return 0;
}

/* A Gauss tsmm configuration c with a block per chunk and `stages`. */
static void gauss_chunks(odb_tsm_cfg c, int stages, cfg_list *l) {
  c.blocks_per_sm = -1;
  c.stages = stages;
  space_add(&c, l);
}

/* The Gauss configuration c of the full loop and its twins: all of them
   (full), or those wide_keeps keeps, a block per chunk only from the
   2-stage pass (quick of a wide complex shape). */
static void gauss_add(odb_tsm_cfg c, int full, cfg_list *l) {
  if (full || wide_keeps(&c)) {
    space_add(&c, l);
    if (c.op == ODB_TSM_TSMTTSM && !c.split) space_dyn(c, l);
  }
  if (c.op != ODB_TSM_TSMM) return;
  if (full) {
    gauss_chunks(c, c.stages, l);
  } else if (c.stages == 2) {
    c.blocks_per_sm = -1;
    if (wide_keeps(&c)) space_add(&c, l);
  }
}

static void space_gauss(odb_tsm_cfg c, int full, cfg_list *l) {
  static const int tt[][2] = { { 1, 1 }, { 1, 2 }, { 2, 1 }, { 1, 4 },
                               { 2, 2 }, { 4, 1 }, { 1, 8 }, { 2, 4 },
                               { 4, 2 } };
  static const int chunks[] = { 16, 32, 64 }, stages[] = { 2, 3, 4 };
  if (c.t != ODB_TSM_Z || c.M < 8 || c.N < 8) return;
  if (l->cc && l->cc < 90) return;
  c.tm = c.tn = c.tpr = 1;
  c.unroll = 1;
  c.block = 256;
  c.gauss = 1;
  c.blocks_per_sm = 0;
  c.reduce = c.op == ODB_TSM_TSMTTSM ? ODB_TSM_REDUCE_LOCAL : 0;
  if (!full && !l->wide) {
    for (int i = 0; i < NGQ; ++i) {
      const int *q = gauss_quick[i];
      if (q[0] != (int)c.op) continue;
      c.mma = q[1];
      c.wm = q[2];
      c.wn = q[3];
      c.rg = q[4];
      c.chunk = q[5];
      c.stages = q[6];
      if (c.op == ODB_TSM_TSMM) c.csrc = q[7];
      else c.split = q[7] > 1 ? q[7] : 0;
      if (!bands_fit(c.M, c.split ? c.split : 1)) continue;
      if (c.op == ODB_TSM_TSMTTSM &&
          !tile_fits(16 * c.wm, 16, cdiv(c.M, c.split ? c.split : 1)))
        continue;
      if (!tile_fits(8 * c.wn, 8, c.N)) continue;
      space_add(&c, l);
      if (c.op == ODB_TSM_TSMTTSM && !c.split) space_dyn(c, l);
      if (c.op == ODB_TSM_TSMM && !same_but_stages(gauss_quick, i))
        gauss_chunks(c, 2, l);
    }
    return;
  }
  for (int w = 0; w < 9; ++w) {
    c.wm = tt[w][0];
    c.wn = tt[w][1];
    if (c.op == ODB_TSM_TSMTTSM && !tile_fits(16 * c.wm, 16, c.M)) continue;
    if (!tile_fits(8 * c.wn, 8, c.N)) continue;
    for (int rg = 1; rg <= 2; ++rg)
      for (int k = 0; k < 3; ++k)
        for (int st = 0; st < 3; ++st)
          for (int v = 0; v < 3; ++v)
            for (int m = ODB_TSM_MMA_M16N8K4; m <= ODB_TSM_MMA_M16N8K16;
                 ++m) {
              c.rg = rg;
              c.chunk = chunks[k];
              c.stages = stages[st];
              if (c.op == ODB_TSM_TSMM) {
                if (v == 2) continue;
                c.csrc = v ? ODB_TSM_C_SHARED : ODB_TSM_C_REGS;
              } else {   /* C in 1, 2 or 4 bands */
                c.split = v ? 2 * v : 0;
                if (!bands_fit(c.M, c.split ? c.split : 1) ||
                    !tile_fits(16 * c.wm, 16, cdiv(c.M, c.split ? c.split : 1)))
                  continue;
              }
              c.mma = m;
              gauss_add(c, full, l);
            }
  }
}

/* See the header. */
int odb_tsm_space_list(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                       int full, int cc, odb_tsm_cfg *list, int max) {
  odb_tsm_cfg c;
  cfg_list l = { list, max, 0, cc, 0 };
  memset(&c, 0, sizeof c);
  c.op = op;
  c.t = t;
  c.M = M;
  c.N = N;
  c.block = 256;
  l.wide = wide_complex(&c, full);
  /* the FMA kernels won the quick race only up to 8 columns (H200) */
  if (full || M <= 12 || N <= 12) space_fma(c, full, &l);
  space_mma(c, full, &l);
  space_gauss(c, full, &l);
  return l.n;
}
