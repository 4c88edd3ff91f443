/* gen_tsm_common.c - the tall & skinny kernel generator's entry
   (odb_gen_tsm): the configurations (their checks, text, tokens, register
   and shared-memory estimates), the geometry of the tensor-core kernels,
   the file header and the text the tsmttsm kernels share. The kernels are
   gen_tsm_fma.c's (the FMA units) and gen_tsm_mma.c's (the tensor cores),
   the tuning spaces gen_tsm_space.c's. Every kernel is readable CUDA C:
   every index that the shape and configuration fix is a literal, loops
   over the tile are written out, and guards appear only where the thread
   mapping does not divide M or N. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gen_tsm_int.h"

/* {====== the geometry of the tensor-core (mma) kernels */


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

/* See gen_tsm_int.h. */
int tsmg_mma_geom_of(const odb_tsm_cfg *c, mma_geom *g) {
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
    return tsmg_mma_geom_of(c, &g) ? g.BS : 32;
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
    return tsmg_mma_geom_of(c, &g) ? g.smem : 0;
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
    if (!tsmg_mma_geom_of(c, &g)) return 1 << 20;
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
  if (!tsmg_mma_geom_of(c, &g))
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
static void gen_head(odb_emit *b, const odb_tsm_cfg *c) {
  char cfg[160];
  put(b, "// odebench %s %s M=%d N=%d: %s\n", odb_tsm_op_name(c->op),
      odb_tsm_dtype_name(c->t), c->M, c->N,
      odb_tsm_cfg_text(c, cfg, sizeof cfg));
  put(b, "// generated by gpu/dense/gen_tsm_common.c and gen_tsm_%s.c; "
      "row-major, complex\n// entries as double2 (re, im)\n",
      c->mma ? "mma" : "fma");
  put(b, "struct tsm_args { const double *A; const double *X; double *out; "
      "long long K; };\n\n");
  if (c->op == ODB_TSM_TSMTTSM)
    put(b, "// first block, C zeroed, blocks done (tsmg_c_zero); the "
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
void tsmg_c_zero(odb_emit *b, int elems) {
  put(b, "  // the first block to start zeroes C (a barrier's OR tells its "
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
void tsmg_c_ready(odb_emit *b) {
  put(b, "  while (*(volatile unsigned *)&odb_tsm_sync[1] == 0u) {}  "
      "// C is zero\n  __threadfence();\n");
}

/* The kernel's end: the last block resets the counters. */
void tsmg_c_done(odb_emit *b) {
  put(b, "  __syncthreads();\n  if (threadIdx.x == 0) {\n"
      "    __threadfence();\n"
      "    if (atomicAdd(&odb_tsm_sync[2], 1u) == gridDim.x - 1) {  "
      "// the last block\n"
      "      odb_tsm_sync[0] = odb_tsm_sync[1] = odb_tsm_sync[2] = 0u;\n"
      "      odb_tsm_next = 0ull;\n"
      "      __threadfence();\n    }\n  }\n");
}

/* See the header. */
odb_status odb_gen_tsm(const odb_tsm_cfg *c, char **source) {
  odb_emit b;
  *source = NULL;
  ODB_TRY(odb_tsm_cfg_check(c));
  odb_emit_init(&b);
  gen_head(&b, c);
  if (c->mma) tsmg_mma(&b, c);
  else tsmg_fma(&b, c);
  *source = odb_emit_take(&b);
  if (!*source)
    return ODB_FAIL(ODB_ERR_NOMEM, "tsm: no memory for the kernel source");
  return ODB_OK;
}

/* See the header; sets no error message. */
int odb_tsm_cfg_allowed(const odb_tsm_cfg *c) {
  if (c->mma) {
    mma_geom g;
    if (!tsmg_mma_geom_of(c, &g) || g.BS > 1024 || g.smem > 200 * 1024)
      return 0;
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
