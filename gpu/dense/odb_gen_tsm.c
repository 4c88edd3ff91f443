/* odb_gen_tsm.c - generates readable CUDA C for the tall & skinny
   products: every index that the shape and configuration fix is a
   literal, loops over the tile are written out, and guards appear only
   where the thread mapping does not divide M or N. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_gen_tsm.h"

/* A growing string; a failed allocation sets oom and drops the rest. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
  int oom;
} sbuf;

/* Appends printf-style text. */
static void out(sbuf *b, const char *fmt, ...) {
  va_list ap;
  int len;
  if (b->oom) return;
  va_start(ap, fmt);
  len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)len + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap * 2 : 8192) + (size_t)len;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)len;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* {====== the geometry of the tensor-core (mma) kernels */

/*
** Derived sizes of an mma configuration (see odb_tsm_cfg). Shared memory
** holds `stages` chunks; a chunk is `chunk` rows of A (and of B for
** tsmttsm), each row padded to a stride of 4 or 12 modulo 16 doubles so
** that a warp's fragment loads (4 rows x 8 columns, or 8 rows x 4) hit
** distinct banks in each half warp.
*/
typedef struct mma_geom {
  int z, e;            /* complex; doubles per entry */
  int Mr, Nr;          /* widths of the real view */
  int mr, E;           /* rows of one mma tile (8, 16); accumulators per tile */
  int KS;              /* k of one mma: 4, 8 or 16 */
  int AR, BR;          /* A and B registers of one mma per lane */
  int G, W, BS;        /* warps per row group, warps, threads per block */
  int SA, SB;          /* row strides in a stage (doubles) */
  int stage;           /* doubles per stage */
  /* tsmttsm */
  int TMt, TNt;        /* warp tiles of C down and across */
  int cm, cn;          /* columns of A and B the warp tiles cover */
  int steps;           /* KS-row steps per chunk and row group */
  /* tsmm */
  int Kt;              /* KS-column steps over the Mr columns of A */
  int ck;              /* KS Kt */
  int SC;              /* row stride of C's copy in shared memory */
  int SO;              /* row stride of B's staged rows (ostage) */
  int tiles;           /* row tiles (wm mr rows) per chunk and row group */
  size_t smem;         /* bytes of dynamic shared memory */
} mma_geom;

/* The smallest stride >= w (a multiple of 4) that is 4 or 12 mod 16. */
static int bank_stride(int w) {
  return w % 8 == 0 ? w + 4 : w;
}

/* The smallest stride >= w (a multiple of 8) that is 8 mod 16: lanes g
   and g + 1 reading 16 bytes at columns 2t of rows g, g + 1 (tsmm, Gauss)
   hit distinct banks in each quarter warp. */
static int pair_stride(int w) {
  return w % 16 == 8 ? w : w + 8;
}

/* 1 when M rows split into S bands of cdiv(M, S) rows (the last one may
   be shorter), none of them empty. */
static int bands_fit(int M, int S) {
  return S >= 1 && (S - 1) * cdiv(M, S) < M;
}

/* Shared memory of a sched=dyn kernel: its ring of 8 chunk numbers after
   the stages (doubles of them), at least smem bytes in all. */
static size_t dyn_smem(int doubles, size_t smem) {
  size_t need = 8 * (size_t)doubles + 8 * sizeof(long long);
  return need > smem ? need : smem;
}

/* The Gauss geometry (complex, m16n8k*): widths count complex entries,
   rows of the stages and of C's copy hold (re, im) pairs. */
static int gauss_geom_of(const odb_tsm_cfg *c, mma_geom *g) {
  if (!g->z || g->mr != 16) return 0;
  if (c->op == ODB_TSM_TSMTTSM) {
    int tmw = 16 * c->wm, tnw = 8 * c->wn;
    int bands = c->split > 1 ? c->split : 1, Mb = cdiv(c->M, bands);
    if (!bands_fit(c->M, bands) || (bands != 1 && bands != 2 && bands != 4))
      return 0;
    g->TMt = cdiv(Mb, tmw);
    g->TNt = cdiv(c->N, tnw);
    g->G = g->TMt * g->TNt;
    g->cm = g->TMt * tmw;
    g->cn = g->TNt * tnw;
    g->SA = bank_stride(2 * g->cm);
    g->SB = bank_stride(2 * g->cn);
    if (c->chunk % (g->KS * c->rg)) return 0;
    g->steps = c->chunk / (g->KS * c->rg);
    g->stage = c->chunk * (g->SA + g->SB);
    g->smem = 8 * (size_t)g->stage * c->stages;
    if (c->reduce == ODB_TSM_REDUCE_LOCAL &&
        16 * (size_t)Mb * c->N > g->smem)
      g->smem = 16 * (size_t)Mb * c->N;
    if (c->dyn) g->smem = dyn_smem(g->stage * c->stages, g->smem);
  } else {
    int nt = cdiv(c->N, 8);
    if (c->split > 1) return 0;
    g->Kt = cdiv(c->M, g->KS);
    g->ck = g->KS * g->Kt;
    g->G = cdiv(nt, c->wn);
    g->cn = 8 * c->wn * g->G;
    g->SA = pair_stride(2 * g->ck);
    g->SC = bank_stride(2 * g->cn);
    if (c->chunk % (c->wm * 16 * c->rg)) return 0;
    g->tiles = c->chunk / (c->wm * 16 * c->rg);
    g->stage = c->chunk * g->SA;
    g->smem = 8 * ((size_t)g->stage * c->stages +
                   (c->csrc == ODB_TSM_C_SHARED ? (size_t)g->ck * g->SC : 0));
  }
  g->W = g->G * c->rg;
  g->BS = 32 * g->W;
  return 1;
}

/* Fills g; 0 when the options do not map onto the shape (a row group's
   share of a chunk is not whole, or a field is out of range). */
static int mma_geom_of(const odb_tsm_cfg *c, mma_geom *g) {
  memset(g, 0, sizeof *g);
  if (c->mma < 1 || c->mma > 4 || c->wm < 1 || c->wm > 8 || c->wn < 1 ||
      c->wn > 8 || c->rg < 1 || c->rg > 8 || c->chunk < 4 ||
      c->chunk > 512 || c->stages < 2 || c->stages > 4 || c->M < 1 ||
      c->N < 1)
    return 0;
  g->z = c->t == ODB_TSM_Z;
  g->e = g->z ? 2 : 1;
  g->Mr = g->e * c->M;
  g->Nr = g->e * c->N;
  g->mr = c->mma == ODB_TSM_MMA_M8N8K4 ? 8 : 16;
  g->E = g->mr / 4;
  g->KS = c->mma == ODB_TSM_MMA_M16N8K16 ? 16
          : c->mma == ODB_TSM_MMA_M16N8K8 ? 8 : 4;
  g->AR = (g->mr / 8) * (g->KS / 4);
  g->BR = g->KS / 4;
  if (c->gauss) return gauss_geom_of(c, g);
  if (c->op == ODB_TSM_TSMTTSM) {
    int tmw = g->mr * c->wm, tnw = 8 * c->wn;
    g->TMt = cdiv(g->Mr, tmw);
    g->TNt = cdiv(g->Nr, tnw);
    g->G = g->TMt * g->TNt;
    g->cm = g->TMt * tmw;
    g->cn = g->TNt * tnw;
    g->SA = bank_stride(g->cm);
    g->SB = bank_stride(g->cn);
    if (c->chunk % (g->KS * c->rg)) return 0;
    g->steps = c->chunk / (g->KS * c->rg);
    g->stage = c->chunk * (g->SA + g->SB);
    g->smem = 8 * (size_t)g->stage * c->stages;
    if (c->reduce == ODB_TSM_REDUCE_LOCAL &&
        8 * (size_t)g->e * c->M * c->N > g->smem)
      g->smem = 8 * (size_t)g->e * c->M * c->N;
    if (c->dyn) g->smem = dyn_smem(g->stage * c->stages, g->smem);
  } else {
    int nt = cdiv(g->Nr, 8);
    g->Kt = cdiv(g->Mr, g->KS);
    g->ck = g->KS * g->Kt;
    g->G = cdiv(nt, c->wn);
    g->cn = 8 * c->wn * g->G;
    g->SA = bank_stride(g->ck);
    g->SC = bank_stride(g->cn);
    if (c->chunk % (c->wm * g->mr * c->rg)) return 0;
    g->tiles = c->chunk / (c->wm * g->mr * c->rg);
    g->stage = c->chunk * g->SA;
    g->SO = c->ostage ? pair_stride(g->cn) : 0;
    g->smem = 8 * ((size_t)g->stage * c->stages +
                   (c->csrc == ODB_TSM_C_SHARED ? (size_t)g->ck * g->SC : 0) +
                   (size_t)c->chunk * g->SO);
  }
  g->W = g->G * c->rg;
  g->BS = 32 * g->W;
  return 1;
}

/* }====== */

/* Tiles of C per row (tsmttsm), threads per row (tsmm) or, for the mma
   kernels, the whole block. */
int odb_tsm_cfg_group(const odb_tsm_cfg *c) {
  if (c->mma) return odb_tsm_cfg_block(c);
  if (c->op == ODB_TSM_TSMTTSM) return cdiv(c->M, c->tm) * cdiv(c->N, c->tn);
  return c->tpr;
}

/* At least one group even when it exceeds block (checked elsewhere). */
int odb_tsm_cfg_block(const odb_tsm_cfg *c) {
  if (c->mma) {
    mma_geom g;
    return mma_geom_of(c, &g) ? g.BS : 32;
  }
  int g = odb_tsm_cfg_group(c);
  int r = c->block / g;
  return (r < 1 ? 1 : r) * g;
}

/* The block-local sums of C (tsmttsm, local) or the copy of C (tsmm);
   the stages of the mma kernels. */
size_t odb_tsm_cfg_smem(const odb_tsm_cfg *c) {
  size_t e = c->t == ODB_TSM_Z ? 16 : 8;
  if (c->mma) {
    mma_geom g;
    return mma_geom_of(c, &g) ? g.smem : 0;
  }
  if (c->op == ODB_TSM_TSMTTSM)
    return (c->reduce == ODB_TSM_REDUCE_LOCAL ? e * c->M * c->N : 0) +
           (c->stage ? e * (size_t)c->chunk * (c->M + c->N) : 0);
  return c->csrc == ODB_TSM_C_SHARED ? e * c->M * c->N : 0;
}

/* See the header. The mma kernels: 2 (accumulators + f fragments + kept
   fragments of C) + 32, fragments being the operands of one step, f = 2
   for k = 4 (the next step's load early), 1 for the longer k. */
int odb_tsm_cfg_regs(const odb_tsm_cfg *c) {
  int e = c->t == ODB_TSM_Z ? 2 : 1;
  if (c->mma) {
    mma_geom g;
    if (!mma_geom_of(c, &g)) return 1 << 20;
    int p = c->gauss ? 3 : 1;   /* products (Gauss: three) */
    int acc = p * c->wm * c->wn * g.E;
    int frag = p * (c->wm * g.AR + c->wn * g.BR);
    int keep = c->op == ODB_TSM_TSMM && c->csrc == ODB_TSM_C_REGS
               ? p * g.Kt * c->wn * g.BR : 0;
    return 2 * (acc + (g.KS == 4 ? 2 : 1) * frag + keep) + 32;
  }
  if (c->op == ODB_TSM_TSMTTSM && c->stage)
    return 2 * (e * c->tm * c->tn + e * (c->tm + c->tn) + 16);
  if (c->op == ODB_TSM_TSMTTSM) {
    int loads = (c->leapfrog ? 2 : 1) * c->unroll * (c->tm + c->tn);
    return 2 * (e * c->tm * c->tn + e * loads + 8);
  }
  int J = cdiv(c->N, c->tpr);
  int keep = c->csrc == ODB_TSM_C_REGS ? c->M * J : 0;
  return 2 * (e * (c->unroll * J + keep + c->unroll + 1) + 8);
}

/* The options of an mma configuration; see odb_tsm_cfg_check. */
static odb_status check_mma(const odb_tsm_cfg *c) {
  mma_geom g;
  if (c->mma < 1 || c->mma > 4)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: mma = %d, expected 0 (FMA units), "
                    "1 (m8n8k4), 2 (m16n8k4), 3 (m16n8k8) or 4 (m16n8k16)",
                    c->mma);
  if (c->wm < 1 || c->wm > 8 || c->wn < 1 || c->wn > 8)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %dx%d mma tiles per warp, expected "
                    "1..8 each", c->wm, c->wn);
  if (c->rg < 1 || c->rg > 8)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %d row groups, expected 1..8", c->rg);
  if (c->stages < 2 || c->stages > 4)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %d stages, expected 2..4", c->stages);
  if (c->chunk < 4 || c->chunk > 512)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: chunk of %d rows, expected 4..512",
                    c->chunk);
  if (c->op == ODB_TSM_TSMM && c->csrc == ODB_TSM_C_L1)
    return ODB_FAIL(ODB_ERR_ARG, "tsmm: the mma kernels take C from "
                    "shared memory or registers, not L1");
  if (c->gauss && (c->t != ODB_TSM_Z || c->mma == ODB_TSM_MMA_M8N8K4))
    return ODB_FAIL(ODB_ERR_ARG, "tsm: Gauss's three products need "
                    "complex data and an m16n8k* mma");
  if (c->split > 1 && (!c->gauss || c->op != ODB_TSM_TSMTTSM ||
                       (c->split != 2 && c->split != 4) ||
                       !bands_fit(c->M, c->split)))
    return ODB_FAIL(ODB_ERR_ARG, "tsm: split = %d: C splits into 2 or 4 "
                    "bands of rows, none empty, Gauss tsmttsm only (M = %d)",
                    c->split, c->M);
  if (c->ostage && (c->op != ODB_TSM_TSMM || c->gauss || c->ostage != 1))
    return ODB_FAIL(ODB_ERR_ARG, "tsm: ostage = %d: staging B for "
                    "coalesced stores is 0 or 1, mma tsmm without Gauss's "
                    "products only", c->ostage);
  if (c->dyn && (c->dyn != 1 || c->op != ODB_TSM_TSMTTSM || c->split > 1 ||
                 c->blocks_per_sm < 0))
    return ODB_FAIL(ODB_ERR_ARG, "tsm: dyn = %d: chunks from a counter is "
                    "0 or 1, mma tsmttsm without split and with a "
                    "persistent grid (blocks_per_sm >= 0) only", c->dyn);
  if (c->pf != 0 && c->pf != -1 && c->pf != 64 && c->pf != 256)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: pf = %d: the L2 prefetch of the "
                    "copies is 0 (the default, 128 bytes), 64, 256 or -1 "
                    "(none)", c->pf);
  if (!mma_geom_of(c, &g))
    return ODB_FAIL(ODB_ERR_ARG, "tsm: a chunk of %d rows does not split "
                    "into %d row groups of whole mma steps", c->chunk,
                    c->rg);
  if (g.BS > 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %d threads per block (at most 1024)",
                    g.BS);
  if (c->blocks_per_sm < -1 || c->blocks_per_sm > 32)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: blocks_per_sm = %d, expected -1 (a "
                    "block per chunk), 0 (fill the device) or 1..32",
                    c->blocks_per_sm);
  if (g.smem > 200 * 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %zu bytes of shared memory (at most "
                    "200 KiB)", g.smem);
  return ODB_OK;
}

/* See the header. */
odb_status odb_tsm_cfg_check(const odb_tsm_cfg *c) {
  ODB_TRY(odb_tsm_check_shape(c->M, c->N, 1, 1));
  if ((unsigned)c->op > 1 || (unsigned)c->t > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: bad operation or dtype");
  if (c->op == ODB_TSM_TSMTTSM && (unsigned)c->reduce > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsmttsm: bad reduction %d", c->reduce);
  if (c->op == ODB_TSM_TSMM && (unsigned)c->csrc > 2)
    return ODB_FAIL(ODB_ERR_ARG, "tsmm: bad source of C %d", c->csrc);
  if (c->mma) return check_mma(c);
  if (c->gauss || c->split > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: Gauss's three products need the "
                    "tensor cores (mma)");
  if (c->pf || c->ostage || c->dyn)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: pf, ostage and dyn are options of "
                    "the tensor-core kernels (mma)");
  if (c->unroll < 1 || c->unroll > 4)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: unroll = %d, expected 1..4",
                    c->unroll);
  if (c->block < 32 || c->block > 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: block = %d, expected 32..1024",
                    c->block);
  if (c->blocks_per_sm < 1 || c->blocks_per_sm > 32)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: blocks_per_sm = %d, expected 1..32",
                    c->blocks_per_sm);
  if (c->op == ODB_TSM_TSMTTSM) {
    if (c->tm < 1 || c->tm > c->M || c->tn < 1 || c->tn > c->N)
      return ODB_FAIL(ODB_ERR_ARG, "tsmttsm: tile %dx%d does not fit "
                      "M=%d N=%d", c->tm, c->tn, c->M, c->N);
    if (c->stage && (c->chunk < 1 || c->chunk > 256 || c->leapfrog ||
                     c->unroll != 1))
      return ODB_FAIL(ODB_ERR_ARG, "tsmttsm: staging takes a chunk of "
                      "1..256 rows, no leap frogging, unroll 1");
  } else {
    if (c->tpr < 1 || c->tpr > c->N)
      return ODB_FAIL(ODB_ERR_ARG, "tsmm: %d threads per row for N=%d",
                      c->tpr, c->N);
  }
  if (odb_tsm_cfg_group(c) > 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %d threads per row exceed a block",
                    odb_tsm_cfg_group(c));
  if (odb_tsm_cfg_smem(c) > 200 * 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: too much shared memory");
  return ODB_OK;
}

/* See the header. */
int odb_tsm_cfg_min_cc(const odb_tsm_cfg *c) {
  if (c->mma >= ODB_TSM_MMA_M16N8K4) return 90;
  if (c->mma == ODB_TSM_MMA_M8N8K4) return 80;
  return 0;
}

static const char *const mma_names[] = { "fma", "m8n8k4", "m16n8k4",
                                         "m16n8k8", "m16n8k16" };

/* " pf=..." of a prefetch other than the default, else "". */
static const char *pf_text(int pf) {
  return pf == -1 ? " pf=none" : pf == 64 ? " pf=64" : pf == 256 ? " pf=256"
                                                                 : "";
}

/* The token's suffix of the same. */
static const char *pf_token(int pf) {
  return pf == -1 ? "pn" : pf == 64 ? "p64" : pf == 256 ? "p256" : "";
}

/* See the header. */
const char *odb_tsm_cfg_text(const odb_tsm_cfg *c, char *buf, size_t len) {
  static const char *const red[] = { "global", "local" };
  static const char *const src[] = { "l1", "shared", "regs" };
  char grid[16];
  if (c->blocks_per_sm > 0)
    snprintf(grid, sizeof grid, "%d", c->blocks_per_sm);
  else snprintf(grid, sizeof grid, c->blocks_per_sm ? "chunks" : "fill");
  if (c->mma && c->op == ODB_TSM_TSMTTSM)
    snprintf(buf, len, "mma=%s%s%s wm=%d wn=%d rg=%d chunk=%d stages=%d "
             "reduce=%s block=%d bps=%s%s%s", mma_names[c->mma % 5],
             c->gauss ? " gauss=3m" : "", c->split > 1 ? (c->split == 2 ?
             " split=2" : " split=4") : "", c->wm, c->wn, c->rg, c->chunk,
             c->stages, red[c->reduce & 1], odb_tsm_cfg_block(c), grid,
             c->dyn ? " sched=dyn" : "", pf_text(c->pf));
  else if (c->mma)
    snprintf(buf, len, "mma=%s%s wm=%d wn=%d rg=%d chunk=%d stages=%d "
             "csrc=%s%s block=%d bps=%s%s", mma_names[c->mma % 5],
             c->gauss ? " gauss=3m" : "", c->wm, c->wn, c->rg, c->chunk,
             c->stages, src[c->csrc % 3], c->ostage ? " ostage=1" : "",
             odb_tsm_cfg_block(c), grid, pf_text(c->pf));
  else if (c->op == ODB_TSM_TSMTTSM && c->stage)
    snprintf(buf, len, "tm=%d tn=%d trans=%d stage=%d reduce=%s "
             "block=%d bps=%d", c->tm, c->tn, c->transposed, c->chunk,
             red[c->reduce & 1], c->block, c->blocks_per_sm);
  else if (c->op == ODB_TSM_TSMTTSM)
    snprintf(buf, len, "tm=%d tn=%d trans=%d lf=%d unroll=%d reduce=%s "
             "block=%d bps=%d", c->tm, c->tn, c->transposed, c->leapfrog,
             c->unroll, red[c->reduce & 1], c->block, c->blocks_per_sm);
  else
    snprintf(buf, len, "tpr=%d csrc=%s unroll=%d block=%d bps=%d", c->tpr,
             src[c->csrc % 3], c->unroll, c->block, c->blocks_per_sm);
  return buf;
}

/* See the header. */
const char *odb_tsm_cfg_token(const odb_tsm_cfg *c, char *buf, size_t len) {
  char red = c->reduce ? 'l' : 'g';
  if (c->mma)
    snprintf(buf, len, "m%dw%dx%dg%dr%ds%d%cb%d%s%s%s%s", c->mma, c->wm,
             c->wn, c->rg, c->chunk, c->stages,
             c->op == ODB_TSM_TSMTTSM ? red : "LSR"[c->csrc % 3],
             c->blocks_per_sm, c->gauss ? (c->split == 2 ? "z3h2" :
             c->split == 4 ? "z3h4" : "z3") : "", c->ostage ? "o" : "",
             c->dyn ? "d" : "", pf_token(c->pf));
  else if (c->op == ODB_TSM_TSMTTSM && c->stage)
    snprintf(buf, len, "f%dx%dt%ds%d%cb%d", c->tm, c->tn, c->transposed,
             c->chunk, red, c->blocks_per_sm);
  else if (c->op == ODB_TSM_TSMTTSM)
    snprintf(buf, len, "f%dx%dt%dl%du%d%cb%d", c->tm, c->tn, c->transposed,
             c->leapfrog, c->unroll, red, c->blocks_per_sm);
  else
    snprintf(buf, len, "p%d%cu%db%d", c->tpr, "LSR"[c->csrc % 3], c->unroll,
             c->blocks_per_sm);
  return buf;
}

/* Index of ch in set, -1 when absent (ch 0 too). */
static int letter(const char *set, char ch) {
  const char *p = ch ? strchr(set, ch) : NULL;
  return p ? (int)(p - set) : -1;
}

/* Reads a prefetch suffix (pn, p64, p256) at t into *pf; returns its
   length, 0 when t holds none of them (the token is then refused). */
static int parse_pf(const char *t, int *pf) {
  static const char *const sfx[3] = { "pn", "p64", "p256" };
  static const int val[3] = { -1, 64, 256 };
  for (int i = 0; i < 3; ++i) {
    size_t l = strlen(sfx[i]);
    if (strncmp(t, sfx[i], l) == 0 && !isalnum((unsigned char)t[l])) {
      *pf = val[i];
      return (int)l;
    }
  }
  return 0;
}

/* See the header. */
odb_status odb_tsm_cfg_parse(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                             const char *token, odb_tsm_cfg *out) {
  odb_tsm_cfg c;
  char ch = 0;
  int n = -1, ok = 0;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.t = t;
  c.M = M;
  c.N = N;
  c.block = 256;
  c.unroll = 1;
  c.tm = c.tn = c.tpr = 1;
  if (!token) token = "";
  if (token[0] == 'm') {
    ok = sscanf(token, "m%dw%dx%dg%dr%ds%d%cb%d%n", &c.mma, &c.wm, &c.wn,
                &c.rg, &c.chunk, &c.stages, &ch, &c.blocks_per_sm, &n) == 8;
    if (ok && n >= 0 && strncmp(token + n, "z3", 2) == 0) {
      c.gauss = 1;
      n += 2;
      if (token[n] == 'h' && (token[n + 1] == '2' || token[n + 1] == '4')) {
        c.split = token[n + 1] - '0';
        n += 2;
      }
    }
    if (ok && n >= 0 && token[n] == 'o') {
      c.ostage = 1;
      ++n;
    }
    if (ok && n >= 0 && token[n] == 'd') {
      c.dyn = 1;
      ++n;
    }
    if (ok && n >= 0 && token[n] == 'p') n += parse_pf(token + n, &c.pf);
    if (op == ODB_TSM_TSMTTSM) {
      c.reduce = letter("gl", ch);
      ok = ok && c.reduce >= 0;
    } else {
      c.csrc = letter("LSR", ch);
      ok = ok && c.csrc >= 0;
    }
  } else if (token[0] == 'f' && op == ODB_TSM_TSMTTSM) {
    if (sscanf(token, "f%dx%dt%ds%d%cb%d%n", &c.tm, &c.tn, &c.transposed,
               &c.chunk, &ch, &c.blocks_per_sm, &n) == 6) {
      c.stage = 1;
      ok = 1;
    } else {
      n = -1;
      ok = sscanf(token, "f%dx%dt%dl%du%d%cb%d%n", &c.tm, &c.tn,
                  &c.transposed, &c.leapfrog, &c.unroll, &ch,
                  &c.blocks_per_sm, &n) == 7;
    }
    c.reduce = letter("gl", ch);
    ok = ok && c.reduce >= 0;
  } else if (token[0] == 'p' && op == ODB_TSM_TSMM) {
    ok = sscanf(token, "p%d%cu%db%d%n", &c.tpr, &ch, &c.unroll,
                &c.blocks_per_sm, &n) == 4;
    c.csrc = letter("LSR", ch);
    ok = ok && c.csrc >= 0;
  }
  if (!ok || n < 0 || token[n] != '\0')
    return ODB_FAIL(ODB_ERR_ARG, "%s: '%s' is no kernel configuration "
                    "token (like f4x8t1l1u2lb4, p8Su2b4, m1w4x4g1r32s3lb0)",
                    odb_tsm_op_name(op), token);
  ODB_TRY(odb_tsm_cfg_check(&c));
  *out = c;
  return ODB_OK;
}

/* The file header: what it is, the argument struct, complex helpers. */
static void gen_head(sbuf *b, const odb_tsm_cfg *c) {
  char cfg[160];
  out(b, "// odebench %s %s M=%d N=%d: %s\n", odb_tsm_op_name(c->op),
      odb_tsm_dtype_name(c->t), c->M, c->N,
      odb_tsm_cfg_text(c, cfg, sizeof cfg));
  out(b, "// generated by kernels/odb_gen_tsm.c; row-major, complex "
      "entries as double2 (re, im)\n");
  out(b, "struct tsm_args { const double *A; const double *X; double *out; "
      "long long K; };\n\n");
  if (c->op == ODB_TSM_TSMTTSM)
    out(b, "// first block, C zeroed, blocks done (gen_c_zero); the "
        "chunks handed out\n// (sched=dyn)\n"
        "__device__ unsigned odb_tsm_sync[3];\n"
        "__device__ unsigned long long odb_tsm_next;\n\n");
}

/*
** C = A^T B sums every block's part into C with atomics, so C must be
** zero first. The block that starts first zeroes it inside the kernel
** (instead of a memset before each launch: one launch less a call); the
** others wait for odb_tsm_sync[1] before their first atomic, and the last
** block to finish resets the counters for the next launch. The block that
** zeroes is running, so no block waits for one that cannot start. The
** counters are the module's: one launch of a kernel at a time.
*/
static void gen_c_zero(sbuf *b, int elems) {
  out(b, "  // the first block to start zeroes C (a barrier's OR tells its "
      "threads;\n  // no shared memory, which the stages may fill)\n"
      "  if (__syncthreads_or(threadIdx.x == 0 &&\n"
      "                       atomicAdd(&odb_tsm_sync[0], 1u) == 0u)) {\n"
      "    for (int i = threadIdx.x; i < %d; i += blockDim.x) "
      "p.out[i] = 0.0;\n"
      "    __threadfence();\n    __syncthreads();\n"
      "    if (threadIdx.x == 0) atomicExch(&odb_tsm_sync[1], 1u);\n"
      "  }\n", elems);
}

/* Before a thread's first atomic on C: C is zero. */
static void gen_c_ready(sbuf *b) {
  out(b, "  while (*(volatile unsigned *)&odb_tsm_sync[1] == 0u) {}  "
      "// C is zero\n  __threadfence();\n");
}

/* The kernel's end: the last block resets the counters. */
static void gen_c_done(sbuf *b) {
  out(b, "  __syncthreads();\n  if (threadIdx.x == 0) {\n"
      "    __threadfence();\n"
      "    if (atomicAdd(&odb_tsm_sync[2], 1u) == gridDim.x - 1) {  "
      "// the last block\n"
      "      odb_tsm_sync[0] = odb_tsm_sync[1] = odb_tsm_sync[2] = 0u;\n"
      "      odb_tsm_next = 0ull;\n"
      "      __threadfence();\n    }\n  }\n");
}

/* Element type and the multiply-add of the type. */
static const char *ety(const odb_tsm_cfg *c) {
  return c->t == ODB_TSM_Z ? "double2" : "double";
}

/* acc += x * y for the type (real or complex). */
static void gen_fma(sbuf *b, const odb_tsm_cfg *c, const char *acc,
                    const char *x, const char *y) {
  if (c->t == ODB_TSM_Z)
    out(b, "      %s.x = fma(%s.x, %s.x, %s.x); %s.x = fma(-%s.y, %s.y, %s.x);"
        " %s.y = fma(%s.x, %s.y, %s.y); %s.y = fma(%s.y, %s.x, %s.y);\n",
        acc, x, y, acc, acc, x, y, acc, acc, x, y, acc, acc, x, y, acc);
  else
    out(b, "      %s = fma(%s, %s, %s);\n", acc, x, y, acc);
}

/* Column of tile entry i for a thread at tile index idx (an expression). */
static void col_expr(char *buf, size_t len, int transposed, int tiles,
                     int tile, int i, const char *idx) {
  if (transposed) snprintf(buf, len, "%s + %d", idx, i * tiles);
  else snprintf(buf, len, "%s * %d + %d", idx, tile, i);
}

/* 1 when entry i of a tile can fall outside a side of width w. */
static int may_exceed(int transposed, int tiles, int tile, int i, int w) {
  int last = transposed ? (tiles - 1) + i * tiles : (tiles - 1) * tile + i;
  return last >= w;
}

/* Loads of one row group (rows k + u*ks) into <pre><u>_<i>. */
static void gen_tsmttsm_loads(sbuf *b, const odb_tsm_cfg *c, int U,
                              const char *pre, const char *k) {
  const char *T = ety(c);
  for (int u = 0; u < U; ++u) {
    out(b, "      { const long long r = %s + %d * ks;\n", k, u);
    for (int i = 0; i < c->tm; ++i)
      out(b, "        %sa%d_%d = A[r * %d + ma%d];\n", pre, u, i, c->M, i);
    for (int j = 0; j < c->tn; ++j)
      out(b, "        %sb%d_%d = B[r * %d + nb%d];\n", pre, u, j, c->N, j);
    out(b, "      }\n");
  }
  (void)T;
}

/* The multiply-adds of one row group from <pre> registers. */
static void gen_tsmttsm_fmas(sbuf *b, const odb_tsm_cfg *c, int U,
                             const char *pre) {
  char x[32], y[32], acc[32];
  for (int u = 0; u < U; ++u)
    for (int i = 0; i < c->tm; ++i)
      for (int j = 0; j < c->tn; ++j) {
        snprintf(acc, sizeof acc, "c%d_%d", i, j);
        snprintf(x, sizeof x, "%sa%d_%d", pre, u, i);
        snprintf(y, sizeof y, "%sb%d_%d", pre, u, j);
        gen_fma(b, c, acc, x, y);
      }
}

/* Declares the load registers <pre><u>_<i> for U rows. */
static void gen_tsmttsm_decl(sbuf *b, const odb_tsm_cfg *c, int U,
                             const char *pre) {
  for (int u = 0; u < U; ++u) {
    out(b, "  %s", ety(c));
    for (int i = 0; i < c->tm; ++i) out(b, "%s %sa%d_%d", i ? "," : "", pre,
                                        u, i);
    for (int j = 0; j < c->tn; ++j) out(b, ", %sb%d_%d", pre, u, j);
    out(b, ";\n");
  }
}

/* The copy of n elements from g (row-major rows from k0) to shared sh by
   all BS threads; rows past K read as zero when guard is set. */
static void gen_stage_copy(sbuf *b, const odb_tsm_cfg *c, int BS, int n,
                           int width, const char *g, const char *sh,
                           int guard) {
  int q = cdiv(n, BS);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {\n", q);
  out(b, "      const int i = threadIdx.x + q * %d;\n", BS);
  if (n % BS) out(b, "      if (i < %d)\n", n);
  if (guard)
    out(b, "      %s[i] = k0 + i / %d < K ? %s[k0 * %d + i] : %s;\n", sh,
        width, g, width, c->t == ODB_TSM_Z ? "make_double2(0.0, 0.0)"
                                           : "0.0");
  else
    out(b, "      %s[i] = %s[k0 * %d + i];\n", sh, g, width);
  out(b, "    }\n");
}

/* Staged main loop: chunks of rows through shared memory, then the tile
   sums from there; row group rg of the block takes rows rg, rg + RG, ... */
static void gen_tsmttsm_staged(sbuf *b, const odb_tsm_cfg *c, int G,
                               int RG) {
  int M = c->M, N = c->N, R = c->chunk, BS = G * RG;
  const char *T = ety(c);
  out(b, "  // staged: chunks of %d rows of A and B in shared memory\n", R);
  out(b, "  %s *sA = (%s *)smem, *sB = sA + %d;\n", T, T, R * M);
  out(b, "  const int rg = threadIdx.x / %d;\n", G);
  out(b, "  for (long long k0 = (long long)blockIdx.x * %d; k0 < K; "
      "k0 += (long long)gridDim.x * %d) {\n", R, R);
  out(b, "    __syncthreads();  // the last chunk is used up\n");
  out(b, "    if (k0 + %d <= K) {\n", R);
  gen_stage_copy(b, c, BS, R * M, M, "A", "sA", 0);
  gen_stage_copy(b, c, BS, R * N, N, "B", "sB", 0);
  out(b, "    } else {\n");
  gen_stage_copy(b, c, BS, R * M, M, "A", "sA", 1);
  gen_stage_copy(b, c, BS, R * N, N, "B", "sB", 1);
  out(b, "    }\n    __syncthreads();\n");
  out(b, "#pragma unroll 4\n    for (int r = rg; r < %d; r += %d) {\n", R,
      RG);
  for (int i = 0; i < c->tm; ++i)
    out(b, "      a0_%d = sA[r * %d + ma%d];\n", i, M, i);
  for (int j = 0; j < c->tn; ++j)
    out(b, "      b0_%d = sB[r * %d + nb%d];\n", j, N, j);
  gen_tsmttsm_fmas(b, c, 1, "");
  out(b, "    }\n  }\n");
}

/* C = A^T B: tiles of C per thread, rows of A and B in a grid-stride loop,
   then the global reduction. */
static void gen_tsmttsm(sbuf *b, const odb_tsm_cfg *c) {
  int M = c->M, N = c->N, mt = cdiv(M, c->tm), nt = cdiv(N, c->tn);
  int G = mt * nt, U = c->unroll, z = c->t == ODB_TSM_Z;
  int RPB = odb_tsm_cfg_block(c) / G;
  const char *T = ety(c);
  char e[64];

  out(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
      "tsm_kernel(tsm_args p) {\n", RPB * G);
  out(b, "  const %s *__restrict__ A = (const %s *)p.A;\n", T, T);
  out(b, "  const %s *__restrict__ B = (const %s *)p.X;\n", T, T);
  out(b, "  const long long K = p.K;\n");
  out(b, "  extern __shared__ double smem[];\n");
  gen_c_zero(b, M * N * (z ? 2 : 1));
  out(b, "  // %d x %d tiles of %d x %d per row, %d rows per block\n", mt, nt,
      c->tm, c->tn, RPB);
  if (G > 1) {
    out(b, "  const int slot = threadIdx.x %% %d;\n", G);
    out(b, "  const int midx = slot %% %d, nidx = slot / %d;\n", mt, mt);
  } else {
    out(b, "  const int midx = 0, nidx = 0;\n");
  }
  out(b, "  const long long ks = (long long)gridDim.x * %d;\n", RPB);
  out(b, "  long long k = (long long)blockIdx.x * %d + threadIdx.x / %d;\n",
      RPB, G);
  /* columns, clamped where the mapping does not divide the side */
  for (int i = 0; i < c->tm; ++i) {
    col_expr(e, sizeof e, c->transposed, mt, c->tm, i, "midx");
    if (may_exceed(c->transposed, mt, c->tm, i, M))
      out(b, "  const int m%d = %s, ma%d = min(m%d, %d);  // guarded\n", i, e,
          i, i, M - 1);
    else
      out(b, "  const int m%d = %s, ma%d = m%d;\n", i, e, i, i);
  }
  for (int j = 0; j < c->tn; ++j) {
    col_expr(e, sizeof e, c->transposed, nt, c->tn, j, "nidx");
    if (may_exceed(c->transposed, nt, c->tn, j, N))
      out(b, "  const int n%d = %s, nb%d = min(n%d, %d);  // guarded\n", j, e,
          j, j, N - 1);
    else
      out(b, "  const int n%d = %s, nb%d = n%d;\n", j, e, j, j);
  }
  for (int i = 0; i < c->tm; ++i)
    for (int j = 0; j < c->tn; ++j)
      out(b, "  %s c%d_%d = %s;\n", T, i, j,
          z ? "make_double2(0.0, 0.0)" : "0.0");
  gen_tsmttsm_decl(b, c, U, "");
  if (c->stage) {
    gen_tsmttsm_staged(b, c, G, RPB);
  } else if (c->leapfrog) {
    gen_tsmttsm_decl(b, c, U, "n");
    out(b, "  // leap frogging: the next row group loads while this one "
        "computes\n");
    out(b, "  if (k + %d * ks < K) {\n", U - 1);
    gen_tsmttsm_loads(b, c, U, "", "k");
    out(b, "    for (;;) {\n");
    out(b, "      const long long kn = k + %d * ks;\n", U);
    out(b, "      const bool more = kn + %d * ks < K;\n", U - 1);
    out(b, "      const long long kl = more ? kn : k;\n");
    gen_tsmttsm_loads(b, c, U, "n", "kl");
    gen_tsmttsm_fmas(b, c, U, "");
    for (int u = 0; u < U; ++u) {
      for (int i = 0; i < c->tm; ++i) out(b, "      a%d_%d = na%d_%d;\n", u,
                                          i, u, i);
      for (int j = 0; j < c->tn; ++j) out(b, "      b%d_%d = nb%d_%d;\n", u,
                                          j, u, j);
    }
    out(b, "      k = kn;\n      if (!more) break;\n    }\n  }\n");
  } else {
    out(b, "  for (; k + %d * ks < K; k += %d * ks) {\n", U - 1, U);
    gen_tsmttsm_loads(b, c, U, "", "k");
    gen_tsmttsm_fmas(b, c, U, "");
    out(b, "  }\n");
  }
  if (!c->stage && (U > 1 || c->leapfrog)) {
    out(b, "  for (; k < K; k += ks) {  // the rows left over\n");
    gen_tsmttsm_loads(b, c, 1, "", "k");
    gen_tsmttsm_fmas(b, c, 1, "");
    out(b, "  }\n");
  }
  /* the global reduction */
  if (c->reduce == ODB_TSM_REDUCE_LOCAL) {
    out(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    out(b, "  double *s = smem + %d;\n",
        c->stage ? c->chunk * (M + N) * (z ? 2 : 1) : 0);
    out(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) s[i] = 0.0;"
        "\n  __syncthreads();\n", M * N * (z ? 2 : 1));
  } else {
    out(b, "  // every thread adds its tile to C\n");
    gen_c_ready(b);
    if (!c->stage)
      out(b, "  if (blockIdx.x * %d + threadIdx.x / %d < K) {\n", RPB, G);
  }
  for (int i = 0; i < c->tm; ++i)
    for (int j = 0; j < c->tn; ++j) {
      int gm = may_exceed(c->transposed, mt, c->tm, i, M);
      int gn = may_exceed(c->transposed, nt, c->tn, j, N);
      const char *dst = c->reduce == ODB_TSM_REDUCE_LOCAL ? "s" : "p.out";
      out(b, "  ");
      if (gm && gn) out(b, "if (m%d < %d && n%d < %d) ", i, M, j, N);
      else if (gm) out(b, "if (m%d < %d) ", i, M);
      else if (gn) out(b, "if (n%d < %d) ", j, N);
      if (z)
        out(b, "{ atomicAdd(&%s[2 * (m%d * %d + n%d)], c%d_%d.x); "
            "atomicAdd(&%s[2 * (m%d * %d + n%d) + 1], c%d_%d.y); }\n", dst,
            i, N, j, i, j, dst, i, N, j, i, j);
      else
        out(b, "atomicAdd(&%s[m%d * %d + n%d], c%d_%d);\n", dst, i, N, j, i,
            j);
    }
  if (c->reduce == ODB_TSM_REDUCE_LOCAL) {
    out(b, "  __syncthreads();\n");
    gen_c_ready(b);
    out(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) "
        "atomicAdd(&p.out[i], s[i]);\n", M * N * (z ? 2 : 1));
  } else if (!c->stage) {
    out(b, "  }\n");
  }
  gen_c_done(b);
  out(b, "}\n");
}

/* C entry (m, column j of this thread) as an expression. */
static void c_expr(char *buf, size_t len, const odb_tsm_cfg *c, const char *m,
                   int j) {
  if (c->csrc == ODB_TSM_C_REGS) snprintf(buf, len, "cr[%s][%d]", m, j);
  else if (c->csrc == ODB_TSM_C_SHARED)
    snprintf(buf, len, "sc[%s * %d + nc%d]", m, c->N, j);
  else snprintf(buf, len, "__ldg(&C[%s * %d + nc%d])", m, c->N, j);
}

/* One group of U rows of B = A C: acc, the m loop, the stores. */
static void gen_tsmm_rows(sbuf *b, const odb_tsm_cfg *c, int U, int J,
                          const char *guardj) {
  int z = c->t == ODB_TSM_Z;
  char acc[32], x[32], y[64];
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j)
      out(b, "    %s s%d_%d = %s;\n", ety(c), u, j,
          z ? "make_double2(0.0, 0.0)" : "0.0");
  out(b, "#pragma unroll %s\n", c->csrc == ODB_TSM_C_REGS ? "" : "4");
  out(b, "    for (int m = 0; m < %d; ++m) {\n", c->M);
  for (int u = 0; u < U; ++u)
    out(b, "      const %s a%d = A[(k + %d * ks) * %d + m];\n", ety(c), u, u,
        c->M);
  for (int j = 0; j < J; ++j) {
    c_expr(y, sizeof y, c, "m", j);
    out(b, "      const %s c%d = %s;\n", ety(c), j, y);
  }
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j) {
      snprintf(acc, sizeof acc, "s%d_%d", u, j);
      snprintf(x, sizeof x, "a%d", u);
      snprintf(y, sizeof y, "c%d", j);
      gen_fma(b, c, acc, x, y);
    }
  out(b, "    }\n");
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j)
      out(b, "    %sB[(k + %d * ks) * %d + n%d] = s%d_%d;\n",
          j == J - 1 ? guardj : "", u, c->N, j, u, j);
}

/* B = A C: tpr threads per row of B, columns interleaved, rows in a
   grid-stride loop; C from registers, shared memory or L1. */
static void gen_tsmm(sbuf *b, const odb_tsm_cfg *c) {
  int M = c->M, N = c->N, T = c->tpr, J = cdiv(N, T), U = c->unroll;
  int RPB = odb_tsm_cfg_block(c) / T, z = c->t == ODB_TSM_Z;
  int guard = N % T != 0;
  const char *E = ety(c);
  char gj[64] = "";

  out(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
      "tsm_kernel(tsm_args p) {\n", RPB * T);
  out(b, "  const %s *__restrict__ A = (const %s *)p.A;\n", E, E);
  out(b, "  const %s *__restrict__ C = (const %s *)p.X;\n", E, E);
  out(b, "  %s *__restrict__ B = (%s *)p.out;\n", E, E);
  out(b, "  const long long K = p.K;\n");
  out(b, "  // %d threads per row, %d columns each, %d rows per block\n", T,
      J, RPB);
  out(b, "  const int slot = threadIdx.x %% %d;\n", T);
  out(b, "  const long long ks = (long long)gridDim.x * %d;\n", RPB);
  out(b, "  long long k = (long long)blockIdx.x * %d + threadIdx.x / %d;\n",
      RPB, T);
  for (int j = 0; j < J; ++j) {
    if (guard && j == J - 1)
      out(b, "  const int n%d = slot + %d, nc%d = min(n%d, %d);  // guarded"
          "\n", j, j * T, j, j, N - 1);
    else
      out(b, "  const int n%d = slot + %d, nc%d = n%d;\n", j, j * T, j, j);
  }
  if (guard) snprintf(gj, sizeof gj, "if (n%d < %d) ", J - 1, N);
  if (c->csrc == ODB_TSM_C_SHARED) {
    out(b, "  extern __shared__ %s sc[];\n", E);
    out(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) sc[i] = "
        "C[i];\n  __syncthreads();\n", M * N);
  } else if (c->csrc == ODB_TSM_C_REGS) {
    out(b, "  %s cr[%d][%d];\n#pragma unroll\n  for (int m = 0; m < %d; ++m)"
        " {\n", E, M, J, M);
    for (int j = 0; j < J; ++j)
      out(b, "    cr[m][%d] = C[m * %d + nc%d];\n", j, N, j);
    out(b, "  }\n");
  }
  out(b, "  for (; k + %d * ks < K; k += %d * ks) {\n", U - 1, U);
  gen_tsmm_rows(b, c, U, J, gj);
  out(b, "  }\n");
  if (U > 1) {
    out(b, "  for (; k < K; k += ks) {  // the rows left over\n");
    gen_tsmm_rows(b, c, 1, J, gj);
    out(b, "  }\n");
  }
  (void)z;
  out(b, "}\n");
}

/* {====== the tensor-core (mma) kernels */

/* Appends text as it is. */
static void outs(sbuf *b, const char *text) { out(b, "%s", text); }

static void gen_mma_fn(sbuf *b, const mma_geom *g);

/* cp.async and the mma of the configuration, as device functions. */
static void gen_mma_helpers(sbuf *b, const odb_tsm_cfg *c,
                            const mma_geom *g) {
  const char *hint = c->pf == -1 ? "" : c->pf == 64 ? ".L2::64B"
                     : c->pf == 256 ? ".L2::256B" : ".L2::128B";
  outs(b,
    "// cp.async: 16 or 8 bytes from global to shared memory; with n = 0\n"
    "// nothing is read and zeros are written (rows past K)\n"
    "__device__ __forceinline__ void cp16(double *s, const double *g, int n) {\n");
  out(b,
    "  asm volatile(\"cp.async.cg.shared.global%s [%%0], [%%1], 16, %%2;\\n\"\n",
    hint);
  outs(b,
    "               :: \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(g),\n"
    "                  \"r\"(n) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void cp8(double *s, const double *g, int n) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 8, %2;\\n\"\n"
    "               :: \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(g),\n"
    "                  \"r\"(n) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void cp_commit() {\n"
    "  asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n"
    "}\n");
  gen_mma_fn(b, g);
}

/* "{%first, ..., %(first + n - 1)}" into buf. */
static void operands(char *buf, size_t len, int first, int n) {
  size_t u = 0;
  for (int i = 0; i < n && u + 8 < len; ++i)
    u += (size_t)snprintf(buf + u, len - u, "%s%%%d", i ? ", " : "{",
                          first + i);
  snprintf(buf + u, len - u, "}");
}

/* mma(d, a, b): d += a b, one mma.sync of the configuration's shape. */
static void gen_mma_fn(sbuf *b, const mma_geom *g) {
  char od[64], oa[96], ob[64];
  int E = g->E, AR = g->AR, BR = g->BR;
  if (g->mr == 8)
    outs(b, "// d += a b on the FP64 tensor cores, an 8x4 by 4x8 product per "
         "warp:\n// lane (g, t) = (lane / 4, lane % 4) holds a = A[g][t], "
         "b = B[t][g]\n// and d = D[g][2t], D[g][2t + 1]\n");
  else
    out(b, "// d += a b on the FP64 tensor cores, a 16x%d by %dx8 product per "
        "warp:\n// lane (g, t) = (lane / 4, lane %% 4) holds a[v + 2 i] = "
        "A[g + 8 v][t + 4 i],\n// b[i] = B[t + 4 i][g] (i < %d) and d = "
        "D[g][2t], D[g][2t + 1], D[g + 8][2t],\n// D[g + 8][2t + 1]\n",
        g->KS, g->KS, g->KS / 4);
  operands(od, sizeof od, 0, E);
  operands(oa, sizeof oa, E, AR);
  operands(ob, sizeof ob, E + AR, BR);
  out(b, "__device__ __forceinline__ void mma(double (&d)[%d], const double "
      "(&a)[%d],\n                                    const double (&b)[%d]) "
      "{\n", E, AR, BR);
  out(b, "  asm volatile(\"mma.sync.aligned.m%dn8k%d.row.col.f64.f64.f64.f64 "
      "\"\n               \"%s, %s, %s, %s;\\n\"\n               : ", g->mr,
      g->KS, od, oa, ob, od);
  for (int i = 0; i < E; ++i) out(b, "%s\"+d\"(d[%d])", i ? ", " : "", i);
  out(b, "\n               : ");
  for (int i = 0; i < AR; ++i) out(b, "%s\"d\"(a[%d])", i ? ", " : "", i);
  for (int i = 0; i < BR; ++i) out(b, ", \"d\"(b[%d])", i);
  out(b, ");\n}\n\n");
}

/* The copy of rows k0 .. k0 + R - 1 of one operand (w doubles a row) to
   offset off of the stage st, row stride S, by all BS threads; wvar names
   a run-time width below w past which the copies fill zeros (NULL: none;
   w and it even where the copies take 16 bytes). */
static void gen_mma_copy(sbuf *b, const char *src, int R, int w, int gw,
                         int S, int off, int BS, const char *wvar) {
  int wide = w % 2 == 0, per = wide ? w / 2 : w, n = R * per;
  out(b, "  // %s: %d rows of %d doubles in %d-byte copies\n", src, R, w,
      wide ? 16 : 8);
  out(b, "#pragma unroll\n  for (int q = 0; q < %d; ++q) {\n", cdiv(n, BS));
  out(b, "    const int u = threadIdx.x + q * %d;\n", BS);
  if (n % BS) out(b, "    if (u >= %d) break;\n", n);
  out(b, "    const int r = u / %d, c = %s(u %% %d);\n", per,
      wide ? "2 * " : "", per);
  out(b, "    const bool ok = k0 + r < K%s%s;\n", wvar ? " && c < " : "",
      wvar ? wvar : "");
  out(b, "    %s(st + ", wide ? "cp16" : "cp8");
  if (off) out(b, "%d + ", off);
  out(b, "r * %d + c, ok ? %s + (k0 + r) * %d + c : %s, ok ? %d : 0);\n"
      "  }\n", S, src, gw, src, wide ? 16 : 8);
}

/* 1 when c splits C into bands whose last one is shorter (M not a
   multiple of split): load_chunk then takes the band's width aw. */
static int uneven_bands(const odb_tsm_cfg *c) {
  return c->split > 1 && c->M % c->split != 0;
}

/* load_chunk(): chunk ch of A (and of B for tsmttsm) into a stage. */
static void gen_mma_load(sbuf *b, const odb_tsm_cfg *c, const mma_geom *g) {
  int two = c->op == ODB_TSM_TSMTTSM;
  out(b, "// copies rows ch * %d .. ch * %d + %d of A%s into the stage st;\n"
      "// a chunk past the end copies nothing\n", c->chunk, c->chunk,
      c->chunk - 1, two ? " and B" : "");
  out(b, "__device__ __forceinline__ void load_chunk(double *st, "
      "const double *__restrict__ A,\n");
  if (two) out(b, "    const double *__restrict__ B,");
  out(b, "    long long ch, long long K%s) {\n",
      uneven_bands(c) ? ", int aw" : "");
  out(b, "  const long long k0 = ch * %d;\n  if (k0 >= K) return;\n",
      c->chunk);
  if (c->split > 1)   /* this block's band of columns of A (aw of them
                         valid where the last band is shorter) */
    gen_mma_copy(b, "A", c->chunk, 2 * cdiv(c->M, c->split), g->Mr, g->SA, 0,
                 g->BS, uneven_bands(c) ? "aw" : NULL);
  else
    gen_mma_copy(b, "A", c->chunk, g->Mr, g->Mr, g->SA, 0, g->BS, NULL);
  if (two) gen_mma_copy(b, "B", c->chunk, g->Nr, g->Nr, g->SB,
                        c->chunk * g->SA, g->BS, NULL);
  out(b, "}\n\n");
}

/* Kernel entry, pointers, lane indices and the zeroed stages. */
static void gen_mma_entry(sbuf *b, const odb_tsm_cfg *c, const mma_geom *g) {
  int tsmm = c->op == ODB_TSM_TSMM;
  /* min 1 block: the registers are not capped below 65536 / threads */
  out(b, "extern \"C\" __global__ void __launch_bounds__(%d, %d)\n"
      "tsm_kernel(tsm_args p) {\n", g->BS, c->split > 1 ? 2 : 1);
  if (g->z)
    out(b, "  // the real view: complex K x %d is K x %d doubles ((re, im) "
        "pairs)\n", c->M, g->Mr);
  out(b, "  const double *__restrict__ A = p.A;\n");
  out(b, "  const double *__restrict__ %s = p.X;\n", tsmm ? "C" : "B");
  if (tsmm) out(b, "  double *__restrict__ Bo = p.out;\n");
  out(b, "  const long long K = p.K;\n");
  out(b, "  extern __shared__ __align__(16) double smem[];\n");
  out(b, "  // %d stages of %d rows: A (row stride %d)%s\n", c->stages,
      c->chunk, g->SA, tsmm ? "" : ", then B");
  if (!tsmm) out(b, "  //   (row stride %d)\n", g->SB);
  out(b, "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
  out(b, "  const int g = lane >> 2, t = lane & 3;\n");
}

static void gen_mma_prologue_dyn(sbuf *b, const odb_tsm_cfg *c,
                                 const mma_geom *g);

/* The prologue: the first stages - 1 chunks start to load. */
static void gen_mma_prologue_x(sbuf *b, const odb_tsm_cfg *c,
                               const mma_geom *g, const char *a,
                               const char *first, const char *stride) {
  if (c->dyn) {
    gen_mma_prologue_dyn(b, c, g);
    return;
  }
  out(b, "  // the first %d chunks of this block start to load\n",
      c->stages - 1);
  out(b, "#pragma unroll\n  for (int s = 0; s < %d; ++s) {\n", c->stages - 1);
  out(b, "    load_chunk(smem + s * %d, %s, %s%s + (long long)s * "
      "%s, K%s);\n    cp_commit();\n  }\n", g->stage, a,
      c->op == ODB_TSM_TSMTTSM ? "B, " : "", first, stride,
      uneven_bands(c) ? ", aw" : "");
  out(b, "  int cur = 0;  // the stage of chunk ch\n");
  out(b, "  for (long long ch = %s; ch < nch; ch += %s) {\n", first, stride);
  out(b, "    asm volatile(\"cp.async.wait_group %d;\\n\" ::: \"memory\");\n",
      c->stages - 2);
  out(b, "    __syncthreads();  // chunk ch is in; the stage before is used "
      "up\n");
  out(b, "    load_chunk(smem + (cur == 0 ? %d : cur - 1) * %d, %s, %sch + "
      "%d * (long long)%s, K%s);\n    cp_commit();\n", c->stages - 1,
      g->stage, a, c->op == ODB_TSM_TSMTTSM ? "B, " : "", c->stages - 1,
      stride, uneven_bands(c) ? ", aw" : "");
}

/*
** The prologue of sched=dyn (tsmttsm, A and B, the whole width): the
** first stages - 1 chunks of a block are blockIdx.x + s gridDim.x, the
** later ones come from the counter odb_tsm_next, so a block on an SM that
** reads faster takes more of them and the SMs finish together. Thread 0
** asks for the chunk of the next iteration while this one computes and
** puts it in the ring odb_chq (slot it & 7 holds the chunk of load number
** it; a slot is written again only after the barrier that follows its
** last read), 64 bytes of the dynamic shared memory after the stages
** (dyn_smem; the local reduction may reuse them after the loop). The
** chunks a block takes grow, so the first one past the end ends its loop.
*/
static void gen_mma_prologue_dyn(sbuf *b, const odb_tsm_cfg *c,
                                 const mma_geom *g) {
  int S1 = c->stages - 1;
  out(b, "  // sched=dyn: the first %d chunks of this block start to load; "
      "the later\n  // ones come from the counter odb_tsm_next\n", S1);
  out(b, "  long long *const odb_chq = (long long *)(smem + %d);  // after "
      "the stages\n", c->stages * g->stage);
  out(b, "#pragma unroll\n  for (int s = 0; s < %d; ++s) {\n", S1);
  out(b, "    const long long c0 = blockIdx.x + (long long)s * gridDim.x;\n"
      "    load_chunk(smem + s * %d, A, B, c0, K);\n    cp_commit();\n"
      "    if (threadIdx.x == 0) odb_chq[s] = c0;\n  }\n", g->stage);
  out(b, "  const long long base = %d * (long long)gridDim.x;\n", S1);
  out(b, "  long long nx = 0;  // thread 0: the chunk of the next load\n"
      "  if (threadIdx.x == 0) nx = base + (long long)atomicAdd("
      "&odb_tsm_next, 1ull);\n");
  out(b, "  int cur = 0;  // the stage of load it\n");
  out(b, "  for (unsigned it = 0;; ++it) {\n");
  out(b, "    asm volatile(\"cp.async.wait_group %d;\\n\" ::: \"memory\");\n",
      c->stages - 2);
  out(b, "    if (threadIdx.x == 0) odb_chq[(it + %d) & 7] = nx;\n", S1);
  out(b, "    __syncthreads();  // load it is in; the stage before is used "
      "up\n");
  out(b, "    if (odb_chq[it & 7] >= nch) break;  // the same for the whole "
      "block\n");
  out(b, "    load_chunk(smem + (cur == 0 ? %d : cur - 1) * %d, A, B, "
      "odb_chq[(it + %d) & 7], K);\n    cp_commit();\n", S1, g->stage, S1);
  out(b, "    if (threadIdx.x == 0) nx = base + (long long)atomicAdd("
      "&odb_tsm_next, 1ull);\n");
}

/* The prologue of a block that walks every gridDim.x-th chunk. */
static void gen_mma_prologue(sbuf *b, const odb_tsm_cfg *c,
                             const mma_geom *g) {
  gen_mma_prologue_x(b, c, g, "A", "blockIdx.x", "gridDim.x");
}

/*
** AtB kernels: ends the caller's comment line (with the row groups, if
** any), then each warp's tile of C (m0, n0) and row group, the number of
** chunks of R rows, and the zeroed shared memory.
*/
static void gen_mma_warps_atb(sbuf *b, const odb_tsm_cfg *c,
                              const mma_geom *g, int tmw, int tnw, int R) {
  if (c->rg > 1)
    out(b, ";\n  // %d row groups of warps split each chunk's rows\n", c->rg);
  else
    out(b, "\n");
  if (c->rg > 1)
    out(b, "  const int tile = warp %% %d, rg = warp / %d;\n", g->G, g->G);
  else
    out(b, "  const int tile = warp, rg = 0;\n");
  out(b, "  const int m0 = tile %% %d * %d, n0 = tile / %d * %d;\n", g->TMt,
      tmw, g->TMt, tnw);
  out(b, "  const long long nch = (K + %d) / %d;  // chunks of %d rows\n",
      R - 1, R, R);
  out(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;  "
      "// padding stays 0\n  __syncthreads();\n", c->stages * g->stage,
      g->BS);
}

/*
** AC kernels: ends the caller's comment line (with the row groups, if
** any), then each warp's first column n0 and row group, the number of
** chunks of R rows, and the zeroed shared memory (no barrier).
*/
static void gen_mma_warps_ac(sbuf *b, const odb_tsm_cfg *c, const mma_geom *g,
                             int R) {
  if (c->rg > 1)
    out(b, ";\n  // %d row groups of warps split each chunk's rows\n", c->rg);
  else
    out(b, "\n");
  if (c->rg > 1)
    out(b, "  const int n0 = warp %% %d * %d, rg = warp / %d;\n", g->G,
        8 * c->wn, g->G);
  else
    out(b, "  const int n0 = warp * %d, rg = 0;\n", 8 * c->wn);
  out(b, "  const long long nch = (K + %d) / %d;  // chunks of %d rows\n",
      R - 1, R, R);
  /* zeroed only where the mma steps read columns past A's (complex ck
     counts entries with Gauss's products) */
  if (g->ck > (c->gauss ? c->M : g->Mr))
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;  "
        "// padding stays 0\n", c->stages * g->stage, g->BS);
}

/* Declares and zeroes acc[wm][wn][E]. */
static void gen_mma_acc(sbuf *b, const odb_tsm_cfg *c, const mma_geom *g,
                        const char *ind) {
  out(b, "%sdouble acc[%d][%d][%d];\n", ind, c->wm, c->wn, g->E);
  out(b, "#pragma unroll\n%sfor (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "%s  for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "%s    for (int e = 0; e < %d; ++e) acc[i][j][e] = 0.0;\n", ind, c->wm,
      ind, c->wn, ind, g->E);
}

/* C = A^T B on the tensor cores: each warp sums its tile of C over the
   rows of the chunks, then adds it to C (through shared memory with the
   local reduction). Complex: the real 2M x 2N sums combine in pairs of
   lanes (rows 2m and 2m + 1 of a tile sit in lanes 4 apart). */
static void gen_mma_tsmttsm(sbuf *b, const odb_tsm_cfg *c,
                            const mma_geom *g) {
  int R = c->chunk, mr = g->mr, tmw = mr * c->wm, tnw = 8 * c->wn;
  int rowg = g->cm > g->Mr, colg = g->cn > g->Nr, local = c->reduce;
  const char *sum = local ? "smem" : "p.out";
  gen_mma_helpers(b, c, g);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  gen_c_zero(b, g->e * c->M * c->N);
  out(b, "  // %d x %d warp tiles of %d x %d entries cover C (%d x %d real)",
      g->TMt, g->TNt, tmw, tnw, g->Mr, g->Nr);
  gen_mma_warps_atb(b, c, g, tmw, tnw, R);
  gen_mma_acc(b, c, g, "  ");
  gen_mma_prologue(b, c, g);
  out(b, "    const double *sa = smem + cur * %d + m0 + g;\n", g->stage);
  out(b, "    const double *sb = smem + cur * %d + %d + n0 + g;\n", g->stage,
      R * g->SA);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // %d rows a "
      "step\n", g->steps, g->KS);
  out(b, "      const int r = %d * (rg + q * %d) + t;\n", g->KS, c->rg);
  out(b, "      double a[%d][%d], bf[%d][%d];\n", c->wm, g->AR, c->wn, g->BR);
  out(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n", c->wm);
  if (mr == 8)
    out(b, "        a[i][0] = sa[r * %d + i * 8];\n", g->SA);
  else
    out(b, "#pragma unroll\n        for (int v = 0; v < %d; ++v)\n"
        "          a[i][v] = sa[(r + 4 * (v / 2)) * %d + i * 16 + 8 * (v %% 2)];"
        "\n", g->AR, g->SA);
  out(b, "#pragma unroll\n      for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "        for (int v = 0; v < %d; ++v) bf[j][v] = sb[(r + 4 * v) * %d + "
      "8 * j];\n", c->wn, g->BR, g->SB);
  out(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "        for (int j = 0; j < %d; ++j) mma(acc[i][j], a[i], bf[j]);\n",
      c->wm, c->wn);
  out(b, "    }\n    cur = cur == %d ? 0 : cur + 1;\n  }\n", c->stages - 1);
  /* the reduction */
  if (local) {
    out(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    out(b, "  asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n");
    out(b, "  __syncthreads();  // the stages are free\n");
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;\n"
        "  __syncthreads();\n", g->e * c->M * c->N, g->BS);
  } else {
    out(b, "  // each warp adds its tile to C\n");
    gen_c_ready(b);
  }
  out(b, "#pragma unroll\n  for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "      for (int h = 0; h < %d; ++h) {\n", c->wm, c->wn, g->E / 2);
  out(b, "        const int r = m0 + i * %d + 8 * h + g, c = n0 + 8 * j + "
      "2 * t;\n", mr);
  if (g->z) {
    out(b, "        // lanes g, g ^ 1 hold rows 2m, 2m + 1 (re, im of A); "
        "columns 2t, 2t + 1\n        // are re, im of B: even lanes add "
        "re = ar br - ai bi, odd ones im = ai br + ar bi\n");
    out(b, "        const double y = __shfl_xor_sync(0xffffffffu, "
        "acc[i][j][2 * h + 1], 4);\n");
    out(b, "        const int m = r >> 1, n = c >> 1;\n");
    out(b, "        ");
    if (rowg && colg) out(b, "if (m < %d && n < %d) ", c->M, c->N);
    else if (rowg) out(b, "if (m < %d) ", c->M);
    else if (colg) out(b, "if (n < %d) ", c->N);
    out(b, "atomicAdd(&%s[2 * (m * %d + n) + (g & 1)],\n"
        "                  (g & 1) ? acc[i][j][2 * h] + y : acc[i][j][2 * h] "
        "- y);\n", sum, c->N);
  } else {
    out(b, "        ");
    if (rowg) out(b, "if (r < %d) ", c->M);
    out(b, "{\n");
    out(b, "          %satomicAdd(&%s[r * %d + c], acc[i][j][2 * h]);\n",
        colg ? "if (c < N_) " : "", sum, c->N);
    out(b, "          %satomicAdd(&%s[r * %d + c + 1], acc[i][j][2 * h + 1]);"
        "\n        }\n", colg || c->N % 2 ? "if (c + 1 < N_) " : "", sum,
        c->N);
  }
  out(b, "      }\n");
  if (local) {
    out(b, "  __syncthreads();\n");
    gen_c_ready(b);
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d) "
        "atomicAdd(&p.out[i], smem[i]);\n", g->e * c->M * c->N, g->BS);
  }
  gen_c_done(b);
  out(b, "}\n");
}

/* B = A C on the tensor cores: each warp computes wm blocks of 8 or 16
   rows times wn blocks of 8 columns of B per step, the A fragments from
   the staged chunk, the C fragments from registers or shared memory. */
/*
** The tail of the ostage tsmm loop: the tiles' fragments go to the
** staging buffer so (after the stages and C's copy), then, after a
** barrier, the whole block writes the chunk's rows of B, one contiguous
** run of memory, in 16-byte (8-byte for an odd width) stores. The next
** chunk's barrier keeps so from being overwritten before it is read.
*/
static void gen_mma_tsmm_ostage(sbuf *b, const odb_tsm_cfg *c,
                                const mma_geom *g) {
  int R = c->chunk, pair = g->Nr % 2 == 0, per = pair ? g->Nr / 2 : g->Nr;
  out(b, "      // the tile's rows of B into the staging buffer\n");
  out(b, "#pragma unroll\n      for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "        for (int h = 0; h < %d; ++h) {\n", c->wm, g->E / 2);
  out(b, "          double *o = so + (r0 + w * %d + 8 * h + g) * %d + n0 + "
      "2 * t;\n", g->mr, g->SO);
  out(b, "#pragma unroll\n          for (int j = 0; j < %d; ++j)\n"
      "            *(double2 *)(o + 8 * j) = make_double2(acc[w][j][2 * h], "
      "acc[w][j][2 * h + 1]);\n        }\n    }\n", c->wn);
  out(b, "    __syncthreads();  // the chunk's rows of B are staged\n");
  out(b, "    // rows k0 .. k0 + %d of B are one run of %d doubles\n", R - 1,
      R * g->Nr);
  out(b, "    const int nu = (K - k0 < %d ? (int)(K - k0) : %d) * %d;\n", R, R,
      per);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {\n",
      cdiv(R * per, g->BS));
  out(b, "      const int u = threadIdx.x + q * %d;\n", g->BS);
  out(b, "      if (u < nu) {\n");
  out(b, "        const int r = u / %d, cc = %s(u %% %d);\n", per,
      pair ? "2 * " : "", per);
  if (pair)
    out(b, "        *(double2 *)(Bo + k0 * %d + 2 * u) = *(const double2 *)"
        "(so + r * %d + cc);\n", g->Nr, g->SO);
  else
    out(b, "        Bo[k0 * %d + u] = so[r * %d + cc];\n", g->Nr, g->SO);
  out(b, "      }\n    }\n");
  out(b, "    cur = cur == %d ? 0 : cur + 1;\n  }\n}\n", c->stages - 1);
}

static void gen_mma_tsmm(sbuf *b, const odb_tsm_cfg *c, const mma_geom *g) {
  int R = c->chunk, mr = g->mr, regs = c->csrc == ODB_TSM_C_REGS;
  int colg = g->cn > g->Nr, rowsw = c->wm * mr;
  gen_mma_helpers(b, c, g);
  if (g->z)
    out(b, "// entry (r, c) of the real %d x %d form of C: [re, im; -im, re] "
        "per complex entry\n__device__ __forceinline__ double "
        "cval(const double *__restrict__ C, int r, int c) {\n"
        "  if (r >= %d || c >= %d) return 0.0;\n"
        "  const double *v = C + 2 * ((r >> 1) * %d + (c >> 1));\n"
        "  return (r & 1) == (c & 1) ? v[0] : (r & 1) ? -v[1] : v[1];\n}\n\n",
        g->Mr, g->Nr, g->Mr, g->Nr, c->N);
  else
    out(b, "// entry (r, c) of C, zero outside\n__device__ __forceinline__ "
        "double cval(const double *__restrict__ C, int r, int c) {\n"
        "  return r < %d && c < %d ? C[r * %d + c] : 0.0;\n}\n\n", c->M,
        c->N, c->N);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  out(b, "  // %d warps cover the %d columns (%d blocks of 8 each)", g->G,
      g->Nr, c->wn);
  gen_mma_warps_ac(b, c, g, R);
  if (regs) {
    out(b, "  double f[%d][%d][%d];  // this lane's fragments of C\n", g->Kt,
        c->wn, g->BR);
    out(b, "#pragma unroll\n  for (int kk = 0; kk < %d; ++kk)\n#pragma unroll\n"
        "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
        "      for (int v = 0; v < %d; ++v)\n"
        "        f[kk][j][v] = cval(C, %d * kk + t + 4 * v, n0 + 8 * j + g);\n",
        g->Kt, c->wn, g->BR, g->KS);
  } else {
    out(b, "  // C (%d x %d with zeros around it) after the stages, row "
        "stride %d\n", g->ck, g->cn, g->SC);
    out(b, "  double *sc = smem + %d;\n", c->stages * g->stage);
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d)\n"
        "    sc[i / %d * %d + i %% %d] = cval(C, i / %d, i %% %d);\n",
        g->ck * g->cn, g->BS, g->cn, g->SC, g->cn, g->cn, g->cn);
    out(b, "  const double *scl = sc + t * %d + n0 + g;\n", g->SC);
  }
  if (c->ostage)
    out(b, "  // the chunk's rows of B before they are stored, row stride %d\n"
        "  double *so = smem + %d;\n", g->SO, c->stages * g->stage +
        (regs ? 0 : g->ck * g->SC));
  out(b, "  __syncthreads();\n");
  gen_mma_prologue(b, c, g);
  out(b, "    const long long k0 = ch * %d;\n", R);
  out(b, "    const double *sa = smem + cur * %d + g * %d + t;\n", g->stage,
      g->SA);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // tiles of "
      "%d rows\n", g->tiles, rowsw);
  out(b, "      const int r0 = (rg + q * %d) * %d;\n", c->rg, rowsw);
  gen_mma_acc(b, c, g, "      ");
  out(b, "#pragma unroll\n      for (int kk = 0; kk < %d; ++kk) {  // %d "
      "columns of A a step\n", g->Kt, g->KS);
  out(b, "        double a[%d][%d], bf[%d][%d];\n", c->wm, g->AR, c->wn,
      g->BR);
  out(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n", c->wm);
  if (mr == 8)
    out(b, "          a[w][0] = sa[(r0 + w * 8) * %d + 4 * kk];\n", g->SA);
  else
    out(b, "#pragma unroll\n          for (int v = 0; v < %d; ++v)\n"
        "            a[w][v] = sa[(r0 + w * 16 + 8 * (v %% 2)) * %d + %d * kk "
        "+ 4 * (v / 2)];\n", g->AR, g->SA, g->KS);
  out(b, "#pragma unroll\n        for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "          for (int v = 0; v < %d; ++v) ", c->wn, g->BR);
  if (regs) out(b, "bf[j][v] = f[kk][j][v];\n");
  else out(b, "bf[j][v] = scl[(%d * kk + 4 * v) * %d + 8 * j];\n", g->KS,
           g->SC);
  out(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n"
      "#pragma unroll\n          for (int j = 0; j < %d; ++j) "
      "mma(acc[w][j], a[w], bf[j]);\n      }\n", c->wm, c->wn);
  if (c->ostage) {
    gen_mma_tsmm_ostage(b, c, g);
    return;
  }
  /* stores */
  out(b, "#pragma unroll\n      for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "        for (int h = 0; h < %d; ++h) {\n", c->wm, g->E / 2);
  out(b, "          const long long row = k0 + r0 + w * %d + 8 * h + g;\n",
      mr);
  out(b, "          if (row < K) {\n#pragma unroll\n"
      "            for (int j = 0; j < %d; ++j) {\n", c->wn);
  out(b, "              const int c = n0 + 8 * j + 2 * t;\n");
  if (g->Nr % 2 == 0)
    out(b, "              %s*(double2 *)(Bo + row * %d + c) = "
        "make_double2(acc[w][j][2 * h], acc[w][j][2 * h + 1]);\n",
        colg ? "if (c < N_) " : "", g->Nr);
  else
    out(b, "              if (c < N_) Bo[row * %d + c] = acc[w][j][2 * h];\n"
        "              if (c + 1 < N_) Bo[row * %d + c + 1] = "
        "acc[w][j][2 * h + 1];\n", g->Nr, g->Nr);
  out(b, "            }\n          }\n        }\n    }\n");
  out(b, "    cur = cur == %d ? 0 : cur + 1;\n  }\n}\n", c->stages - 1);
}

/* {====== Gauss's three products on the tensor cores (complex) */

/* split3(): the three operands of Gauss's products from one pair. */
static void gen_gauss_split(sbuf *b) {
  outs(b,
    "// one 16-byte load of an entry (re, im): the operands of the three\n"
    "// products P1 (re), P2 (im) and P3 (re + im)\n"
    "__device__ __forceinline__ void split3(const double *p, double &r, "
    "double &i,\n                                       double &s) {\n"
    "  const double2 v = *(const double2 *)p;\n"
    "  r = v.x;\n  i = v.y;\n  s = v.x + v.y;\n}\n\n");
}

/* C = A^T B with Gauss's products: lane (g, t) loads (re, im) of column
   m0 + g (+ 8, + 16 i) of A and n0 + g (+ 8 j) of B in row t (+ 4 v) of
   a step; each warp sums its three tiles, then they combine into C. */
static void gen_gauss_tsmttsm(sbuf *b, const odb_tsm_cfg *c,
                              const mma_geom *g) {
  int R = c->chunk, tmw = 16 * c->wm, tnw = 8 * c->wn;
  int S = c->split > 1 ? c->split : 1, Mb = cdiv(c->M, S);
  int uneven = uneven_bands(c), rowg = g->cm > Mb || uneven;
  int colg = g->cn > c->N, local = c->reduce;
  const char *sum = local ? "smem" : "p.out";
  char mlim[32];   /* the rows of this block's band */
  if (uneven) snprintf(mlim, sizeof mlim, "mb");
  else snprintf(mlim, sizeof mlim, "%d", Mb);
  gen_mma_helpers(b, c, g);
  gen_gauss_split(b);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  gen_c_zero(b, 2 * c->M * c->N);
  if (S > 1) {
    out(b, "  // C in %d bands of %d rows: block b sums band b %% %d over "
        "every\n  // (gridDim.x / %d)-th chunk, from chunk b / %d on, and "
        "stages its columns of A\n", S, Mb, S, S, S);
    out(b, "  const int band = blockIdx.x %% %d;\n", S);
    out(b, "  const long long cb = blockIdx.x / %d, gs = gridDim.x / %d;\n",
        S, S);
    out(b, "  const double *__restrict__ Ab = A + %d * band;\n", 2 * Mb);
    if (uneven)
      out(b, "  // the last band holds %d rows, the others %d\n"
          "  const int mb = band == %d ? %d : %d, aw = 2 * mb;\n",
          c->M - (S - 1) * Mb, Mb, S - 1, c->M - (S - 1) * Mb, Mb);
  }
  out(b, "  // Gauss: P1 = Re A^T Re B, P2 = Im A^T Im B, P3 = (Re A + Im A)^T "
      "(Re B + Im B),\n  // C = P1 - P2 + i (P3 - P1 - P2); %d x %d warp "
      "tiles of %d x %d complex entries\n  // cover %s (%d x %d)", g->TMt,
      g->TNt, tmw, tnw, S > 1 ? "a band" : "C", Mb, c->N);
  gen_mma_warps_atb(b, c, g, tmw, tnw, R);
  out(b, "  double acc[3][%d][%d][4];  // P1, P2, P3\n", c->wm, c->wn);
  out(b, "#pragma unroll\n  for (int p = 0; p < 3; ++p)\n#pragma unroll\n"
      "    for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "      for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "        for (int e = 0; e < 4; ++e) acc[p][i][j][e] = 0.0;\n", c->wm,
      c->wn);
  if (S > 1) gen_mma_prologue_x(b, c, g, "Ab", "cb", "gs");
  else gen_mma_prologue(b, c, g);
  out(b, "    const double *sa = smem + cur * %d + 2 * (m0 + g);\n", g->stage);
  out(b, "    const double *sb = smem + cur * %d + %d + 2 * (n0 + g);\n",
      g->stage, R * g->SA);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // %d rows a "
      "step\n", g->steps, g->KS);
  out(b, "      const int r = %d * (rg + q * %d) + t;\n", g->KS, c->rg);
  out(b, "      double a[3][%d][%d], bf[3][%d][%d];\n", c->wm, g->AR, c->wn,
      g->BR);
  out(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "        for (int v = 0; v < %d; ++v)\n"
      "          split3(sa + (r + 4 * (v / 2)) * %d + 2 * (i * 16 + 8 * "
      "(v %% 2)),\n                 a[0][i][v], a[1][i][v], a[2][i][v]);\n",
      c->wm, g->AR, g->SA);
  out(b, "#pragma unroll\n      for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "        for (int v = 0; v < %d; ++v)\n"
      "          split3(sb + (r + 4 * v) * %d + 16 * j, bf[0][j][v], "
      "bf[1][j][v],\n                 bf[2][j][v]);\n", c->wn, g->BR, g->SB);
  out(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "        for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "          for (int p = 0; p < 3; ++p) mma(acc[p][i][j], a[p][i], "
      "bf[p][j]);\n", c->wm, c->wn);
  out(b, "    }\n    cur = cur == %d ? 0 : cur + 1;\n  }\n", c->stages - 1);
  if (local) {
    out(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    out(b, "  asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n");
    out(b, "  __syncthreads();  // the stages are free\n");
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;\n"
        "  __syncthreads();\n", 2 * Mb * c->N, g->BS);
  } else {
    out(b, "  // each warp adds its tiles to C\n");
    gen_c_ready(b);
  }
  out(b, "#pragma unroll\n  for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "      for (int e = 0; e < 4; ++e) {\n", c->wm, c->wn);
  out(b, "        const int m = m0 + 16 * i + 8 * (e / 2) + g, "
      "n = n0 + 8 * j + 2 * t + e %% 2;\n");
  out(b, "        const double p1 = acc[0][i][j][e], p2 = acc[1][i][j][e];\n");
  out(b, "        ");
  if (rowg && colg) out(b, "if (m < %s && n < %d) ", mlim, c->N);
  else if (rowg) out(b, "if (m < %s) ", mlim);
  else if (colg) out(b, "if (n < %d) ", c->N);
  if (S > 1 && !local)   /* m counts rows of the band */
    out(b, "{\n          atomicAdd(&%s[2 * ((m + %d * band) * %d + n)], "
        "p1 - p2);\n          atomicAdd(&%s[2 * ((m + %d * band) * %d + n) "
        "+ 1], acc[2][i][j][e] - p1 - p2);\n        }\n      }\n", sum, Mb,
        c->N, sum, Mb, c->N);
  else
    out(b, "{\n          atomicAdd(&%s[2 * (m * %d + n)], p1 - p2);\n"
        "          atomicAdd(&%s[2 * (m * %d + n) + 1], acc[2][i][j][e] - p1 - "
        "p2);\n        }\n      }\n", sum, c->N, sum, c->N);
  if (local) {
    out(b, "  __syncthreads();\n");
    gen_c_ready(b);
  }
  if (local && S > 1 && uneven)   /* the band's rows of C are contiguous */
    out(b, "  double *ob = p.out + %d * band;\n"
        "  for (int i = threadIdx.x; i < %d * mb; i += %d) "
        "atomicAdd(&ob[i], smem[i]);\n", 2 * Mb * c->N, 2 * c->N, g->BS);
  else if (local && S > 1)
    out(b, "  double *ob = p.out + %d * band;\n"
        "  for (int i = threadIdx.x; i < %d; i += %d) atomicAdd(&ob[i], "
        "smem[i]);\n", 2 * Mb * c->N, 2 * Mb * c->N, g->BS);
  else if (local)
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d)"
        " atomicAdd(&p.out[i], smem[i]);\n", 2 * c->M * c->N, g->BS);
  gen_c_done(b);
  out(b, "}\n");
}

/* B = A C with Gauss's products: each warp computes wm blocks of 16 rows
   times wn blocks of 8 complex columns of B per tile of rows; lane (g, t)
   loads (re, im) of A's column t (+ 4 i) of rows g, g + 8; C's three
   operands come from registers or from (re, im) pairs in shared memory. */
static void gen_gauss_tsmm(sbuf *b, const odb_tsm_cfg *c,
                           const mma_geom *g) {
  int R = c->chunk, regs = c->csrc == ODB_TSM_C_REGS, rowsw = 16 * c->wm;
  int colg = g->cn > c->N;
  gen_mma_helpers(b, c, g);
  gen_gauss_split(b);
  out(b, "// (re, im) of C's entry (k, n), zero outside C\n"
      "__device__ __forceinline__ double2 cpair(const double *__restrict__ C,"
      " int k, int n) {\n  return k < %d && n < %d ? *(const double2 *)(C + "
      "2 * (k * %d + n))\n                          : make_double2(0.0, 0.0);"
      "\n}\n\n", c->M, c->N, c->N);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  out(b, "  // Gauss: P1 = Re A Re C, P2 = Im A Im C, P3 = (Re A + Im A) "
      "(Re C + Im C),\n  // B = P1 - P2 + i (P3 - P1 - P2); %d warps cover "
      "the %d columns (%d blocks of 8 each)", g->G, c->N, c->wn);
  gen_mma_warps_ac(b, c, g, R);
  if (regs) {
    out(b, "  double f[3][%d][%d][%d];  // this lane's operands of C\n",
        g->Kt, c->wn, g->BR);
    out(b, "#pragma unroll\n  for (int kk = 0; kk < %d; ++kk)\n#pragma unroll\n"
        "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
        "      for (int v = 0; v < %d; ++v) {\n"
        "        const double2 y = cpair(C, %d * kk + t + 4 * v, n0 + 8 * j + "
        "g);\n        f[0][kk][j][v] = y.x;\n        f[1][kk][j][v] = y.y;\n"
        "        f[2][kk][j][v] = y.x + y.y;\n      }\n", g->Kt, c->wn, g->BR,
        g->KS);
  } else {
    out(b, "  // C (%d x %d complex with zeros around it) after the stages, "
        "row stride %d\n", g->ck, g->cn, g->SC);
    out(b, "  double *sc = smem + %d;\n", c->stages * g->stage);
    out(b, "  for (int i = threadIdx.x; i < %d; i += %d)\n"
        "    *(double2 *)(sc + i / %d * %d + 2 * (i %% %d)) = cpair(C, i / %d, "
        "i %% %d);\n", g->ck * g->cn, g->BS, g->cn, g->SC, g->cn, g->cn,
        g->cn);
    out(b, "  const double *scl = sc + t * %d + 2 * (n0 + g);\n", g->SC);
  }
  out(b, "  __syncthreads();\n");
  gen_mma_prologue(b, c, g);
  out(b, "    const long long k0 = ch * %d;\n", R);
  out(b, "    const double *sa = smem + cur * %d + g * %d + 2 * t;\n",
      g->stage, g->SA);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // tiles of "
      "%d rows\n", g->tiles, rowsw);
  out(b, "      const int r0 = (rg + q * %d) * %d;\n", c->rg, rowsw);
  out(b, "      double acc[3][%d][%d][4];  // P1, P2, P3\n", c->wm, c->wn);
  out(b, "#pragma unroll\n      for (int p = 0; p < 3; ++p)\n#pragma unroll\n"
      "        for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "          for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "            for (int e = 0; e < 4; ++e) acc[p][i][j][e] = 0.0;\n",
      c->wm, c->wn);
  out(b, "#pragma unroll\n      for (int kk = 0; kk < %d; ++kk) {  // %d "
      "columns of A a step\n", g->Kt, g->KS);
  out(b, "        double a[3][%d][%d], bf[3][%d][%d];\n", c->wm, g->AR,
      c->wn, g->BR);
  out(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "          for (int v = 0; v < %d; ++v)\n"
      "            split3(sa + (r0 + w * 16 + 8 * (v %% 2)) * %d + 2 * (%d * kk "
      "+ 4 * (v / 2)),\n                   a[0][w][v], a[1][w][v], "
      "a[2][w][v]);\n", c->wm, g->AR, g->SA, g->KS);
  out(b, "#pragma unroll\n        for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "          for (int v = 0; v < %d; ++v)", c->wn, g->BR);
  if (regs)
    out(b, "\n#pragma unroll\n            for (int p = 0; p < 3; ++p) "
        "bf[p][j][v] = f[p][kk][j][v];\n");
  else
    out(b, "\n            split3(scl + (%d * kk + 4 * v) * %d + 16 * j, "
        "bf[0][j][v], bf[1][j][v],\n                   bf[2][j][v]);\n",
        g->KS, g->SC);
  out(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n"
      "#pragma unroll\n          for (int j = 0; j < %d; ++j)\n"
      "#pragma unroll\n            for (int p = 0; p < 3; ++p) "
      "mma(acc[p][w][j], a[p][w], bf[p][j]);\n      }\n", c->wm, c->wn);
  /* stores: B = P1 - P2 + i (P3 - P1 - P2) */
  out(b, "#pragma unroll\n      for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "        for (int h = 0; h < 2; ++h) {\n", c->wm);
  out(b, "          const long long row = k0 + r0 + w * 16 + 8 * h + g;\n");
  out(b, "          if (row < K) {\n#pragma unroll\n"
      "            for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "              for (int e = 0; e < 2; ++e) {\n", c->wn);
  out(b, "                const int n = n0 + 8 * j + 2 * t + e;\n");
  out(b, "                const double p1 = acc[0][w][j][2 * h + e], "
      "p2 = acc[1][w][j][2 * h + e];\n");
  out(b, "                ");
  if (colg) out(b, "if (n < %d) ", c->N);
  out(b, "*(double2 *)(Bo + row * %d + 2 * n) =\n"
      "                    make_double2(p1 - p2, acc[2][w][j][2 * h + e] - p1 "
      "- p2);\n", 2 * c->N);
  out(b, "              }\n          }\n        }\n    }\n");
  out(b, "    cur = cur == %d ? 0 : cur + 1;\n  }\n}\n", c->stages - 1);
}

/* }====== */

/* The mma kernel of c (checked). */
static void gen_mma(sbuf *b, const odb_tsm_cfg *c) {
  mma_geom g;
  mma_geom_of(c, &g);
  if (c->gauss) {
    if (c->op == ODB_TSM_TSMTTSM) gen_gauss_tsmttsm(b, c, &g);
    else gen_gauss_tsmm(b, c, &g);
    return;
  }
  out(b, "#define N_ %d  // columns of %s (real view)\n\n",
      c->op == ODB_TSM_TSMTTSM ? c->N : g.Nr,
      c->op == ODB_TSM_TSMTTSM ? "C" : "B");
  if (c->op == ODB_TSM_TSMTTSM) gen_mma_tsmttsm(b, c, &g);
  else gen_mma_tsmm(b, c, &g);
}

/* }====== */

/* See the header. */
odb_status odb_gen_tsm(const odb_tsm_cfg *c, char **source) {
  sbuf b = { 0 };
  *source = NULL;
  ODB_TRY(odb_tsm_cfg_check(c));
  gen_head(&b, c);
  if (c->mma) gen_mma(&b, c);
  else if (c->op == ODB_TSM_TSMTTSM) gen_tsmttsm(&b, c);
  else gen_tsmm(&b, c);
  if (b.oom) {
    free(b.s);
    return ODB_FAIL(ODB_ERR_NOMEM, "tsm: no memory for the kernel source");
  }
  *source = b.s;
  return ODB_OK;
}

/* See the header; sets no error message. */
int odb_tsm_cfg_allowed(const odb_tsm_cfg *c) {
  if (c->mma) {
    mma_geom g;
    if (!mma_geom_of(c, &g) || g.BS > 1024 || g.smem > 200 * 1024) return 0;
    if (c->op == ODB_TSM_TSMM && c->csrc == ODB_TSM_C_L1) return 0;
    if (c->ostage && (c->op != ODB_TSM_TSMM || c->gauss)) return 0;
    /* the estimate fits the register file for one block at least */
    return odb_tsm_cfg_regs(c) <= 255 &&
           (long)odb_tsm_cfg_regs(c) * g.BS <= 65536;
  }
  if (c->op == ODB_TSM_TSMTTSM) {
    if (c->tm < 1 || c->tm > c->M || c->tn < 1 || c->tn > c->N) return 0;
    if (c->stage && (c->leapfrog || c->unroll != 1)) return 0;
    if (odb_tsm_cfg_smem(c) > 200 * 1024) return 0;
  } else if (c->tpr < 1 || c->tpr > c->N) {
    return 0;
  }
  if (odb_tsm_cfg_regs(c) > 255 || odb_tsm_cfg_group(c) > 1024) return 0;
  if (c->op == ODB_TSM_TSMM && c->csrc == ODB_TSM_C_REGS &&
      c->M * cdiv(c->N, c->tpr) > 64)
    return 0;
  return 1;
}

/* A growing list of configurations; at most max are written. */
typedef struct cfg_list {
  odb_tsm_cfg *list;
  int max, n, cc;
} cfg_list;

/* Appends c when it is valid, its estimate fits and the device runs it. */
static void space_add(const odb_tsm_cfg *c, cfg_list *l) {
  if (!odb_tsm_cfg_allowed(c)) return;
  if (l->cc && odb_tsm_cfg_min_cc(c) > l->cc) return;
  if (l->list && l->n < l->max) l->list[l->n] = *c;
  ++l->n;
}

/* The seed's FMA kernels (the spaces of before the tensor-core ones). */
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

/* 1 when a warp tile of w entries (a multiple of unit) wastes no whole
   unit on a side of n entries: w <= n rounded up to unit. */
static int tile_fits(int w, int unit, int n) {
  return w <= cdiv(n, unit) * unit;
}

/* Adds c with each mma shape of shapes[0..n-1]; m8n8k4 gets twice the
   tiles down (wm) so that a warp covers the same entries of C or B. */
static void add_shapes(odb_tsm_cfg c, const int *shapes, int n,
                       cfg_list *l) {
  int wm = c.wm;
  for (int i = 0; i < n; ++i) {
    c.mma = shapes[i];
    c.wm = shapes[i] == ODB_TSM_MMA_M8N8K4 ? 2 * wm : wm;
    if (c.wm <= 8) space_add(&c, l);
  }
}

/*
** The grids of an mma tsmm configuration c: c's own (the device filled
** or blocks_per_sm), and a block per chunk with 2 stages (the chunk
** loads while the block starts; led every real width from 32 to 64 on an
** H100, 1.02-1.04x cuBLAS). Full: a block per chunk with every number
** of stages, and each also with B staged for coalesced stores (ostage;
** within 1% either way on the H100).
*/
static void tsmm_grids(odb_tsm_cfg c, int full, const int *shapes,
                       int nshapes, cfg_list *l) {
  /* quick: staged stores too where B is at least 4 times as wide as A
     (the writes dominate) */
  int staged = full || 4 * c.M <= c.N;
  for (int o = 0; o <= staged; ++o) {
    c.ostage = o;
    add_shapes(c, shapes, nshapes, l);
    if (c.blocks_per_sm == 0) {   /* once per configuration of the rest */
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
** chunk (tsmm_grids). Full: every shape, 1..8 tiles each way, 1, 2 or 4
** row groups, chunks of 16 to 128 rows, 2 to 4 stages, both reductions,
** 0, 1 or 2 blocks per SM. Both: each AtB configuration twice, walking
** every gridDim.x-th chunk and taking its chunks from a counter
** (sched=dyn: complex 16 x 16 and 32 x 8 on an H100 went from 0.998x to
** 1.03x cuBLAS, as the SMs that read faster take more chunks).
*/
static void space_mma(odb_tsm_cfg c, int full, cfg_list *l) {
  static const int wts[] = { 1, 2, 4, 8 };
  static const int chunks_q[] = { 32, 64 }, chunks_f[] = { 16, 32, 64, 128 };
  static const int stages_f[] = { 2, 3, 4 }, bps_f[] = { 0, 1, 2 };
  static const int all[] = { 1, 2, 3, 4 }, new90[] = { 2, 3, 4 }, old[] = { 1 };
  static const int tq[][2] = { { 1, 2 }, { 1, 4 }, { 1, 8 }, { 2, 1 },
                               { 2, 2 }, { 2, 4 } };   /* tsmttsm, quick */
  static const int mq[][2] = { { 1, 1 }, { 1, 2 }, { 1, 4 }, { 1, 8 },
                               { 2, 1 } };             /* tsmm, quick */
  int e = c.t == ODB_TSM_Z ? 2 : 1, Mr = e * c.M, Nr = e * c.N;
  int nch = full ? 4 : 2, nbp = full ? 3 : 1;
  /* quick AtB also 4 stages (complex 16 x 16 on an H100: 1.02x cuBLAS
     against 1.00x with 3) */
  int nst = full ? 3 : c.op == ODB_TSM_TSMTTSM ? 2 : 1;
  const int *chunks = full ? chunks_f : chunks_q;
  const int *shapes = full ? all : l->cc && l->cc < 90 ? old : new90;
  int nshapes = full ? 4 : l->cc && l->cc < 90 ? 1 : 3;
  int nt = full ? 16 : c.op == ODB_TSM_TSMTTSM ? 6 : 5;
  /* quick AtB: at least 8 wide (the FMA kernels reach the roofline
     below), or 4 beside a side of 16 (real 5 x 37: FMA 0.97x cuBLAS);
     AC from 4 (the FMA kernels of real 16 x 4 had 77%), and any width
     beside a side of 16: a narrow AC is a GEMV or an outer product, where
     the FMA kernels' rows a thread read or write A and B uncoalesced
     (real 64 x 1: 0.69x cuBLAS, complex 1 x 64: 0.92x on an H100) */
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
    int wm = full ? wts[w / 4] : c.op == ODB_TSM_TSMTTSM ? tq[w][0] : mq[w][0];
    int wn = full ? wts[w % 4] : c.op == ODB_TSM_TSMTTSM ? tq[w][1] : mq[w][1];
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
              c.stages = full ? stages_f[st] : 3 + st;
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

/*
** Gauss's three products (complex, m16n8k* on sm_90; widths from 8
** complex columns each side). Warp tiles count complex entries. Quick:
** the candidates that led on an H200 (tsmm: 16 x 8 warp tiles with C in
** registers, 32 x 8, 16 x 16 with C in shared memory; tsmttsm: 32 x 16
** and 16 x 32; m16n8k8 ahead of m16n8k4 there), and 16 x 8 tiles on
** m16n8k16 (not yet measured).
** tsmttsm also C split into 2 bands (two blocks per SM; not yet
** measured). Full: the tiles of tt, 1 or 2 row groups, chunks of 16 to
** 64 rows, 2 to 4 stages, m16n8k4/k8/k16, the local reduction and C in
** 1, 2 or 4 bands (tsmttsm), C from registers or shared memory (tsmm),
** the device filled. tsmm also with a block per chunk (2 stages in the
** quick space, each number of stages in the full one); tsmttsm without
** bands also with sched=dyn (space_dyn).
*/
/* c again with its chunks handed out by the counter (sched=dyn). */
static void space_dyn(odb_tsm_cfg c, cfg_list *l) {
  c.dyn = 1;
  space_add(&c, l);
}

static void space_gauss(odb_tsm_cfg c, int full, cfg_list *l) {
  static const int tt[][2] = { { 1, 1 }, { 1, 2 }, { 2, 1 }, { 1, 4 },
                               { 2, 2 }, { 4, 1 }, { 1, 8 }, { 2, 4 },
                               { 4, 2 } };
  static const int chunks[] = { 16, 32, 64 }, stages[] = { 2, 3, 4 };
  /* quick: op, mma, wm, wn, rg, chunk, stages, csrc or split */
  static const int quick[][8] = {
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
  if (c.t != ODB_TSM_Z || c.M < 8 || c.N < 8) return;
  if (l->cc && l->cc < 90) return;
  c.tm = c.tn = c.tpr = 1;
  c.unroll = 1;
  c.block = 256;
  c.gauss = 1;
  c.blocks_per_sm = 0;
  c.reduce = c.op == ODB_TSM_TSMTTSM ? ODB_TSM_REDUCE_LOCAL : 0;
  if (!full) {
    for (int i = 0; i < (int)(sizeof quick / sizeof quick[0]); ++i) {
      if (quick[i][0] != (int)c.op) continue;
      c.mma = quick[i][1];
      c.wm = quick[i][2];
      c.wn = quick[i][3];
      c.rg = quick[i][4];
      c.chunk = quick[i][5];
      c.stages = quick[i][6];
      if (c.op == ODB_TSM_TSMM) c.csrc = quick[i][7];
      else c.split = quick[i][7] > 1 ? quick[i][7] : 0;
      if (!bands_fit(c.M, c.split ? c.split : 1)) continue;
      if (c.op == ODB_TSM_TSMTTSM &&
          !tile_fits(16 * c.wm, 16, cdiv(c.M, c.split ? c.split : 1)))
        continue;
      if (!tile_fits(8 * c.wn, 8, c.N)) continue;
      space_add(&c, l);
      if (c.op == ODB_TSM_TSMTTSM && !c.split) space_dyn(c, l);
      if (c.op == ODB_TSM_TSMM && !same_but_stages(quick, i))
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
              space_add(&c, l);
              if (c.op == ODB_TSM_TSMTTSM && !c.split) space_dyn(c, l);
              if (c.op == ODB_TSM_TSMM) gauss_chunks(c, c.stages, l);
            }
  }
}

/* See the header. */
int odb_tsm_space_list(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                       int full, int cc, odb_tsm_cfg *list, int max) {
  odb_tsm_cfg c;
  cfg_list l = { list, max, 0, cc };
  memset(&c, 0, sizeof c);
  c.op = op;
  c.t = t;
  c.M = M;
  c.N = N;
  c.block = 256;
  /* the FMA kernels won the quick race only up to 8 columns (H200) */
  if (full || M <= 12 || N <= 12) space_fma(c, full, &l);
  space_mma(c, full, &l);
  space_gauss(c, full, &l);
  return l.n;
}
