/* odb_gen_tsm.h - CUDA C source of one tall & skinny product kernel
   (tsmttsm C = A^T B, tsmm B = A C), generated for one shape and one
   configuration of the options of Ernst, Hager, Thies and Wellein,
   "Performance engineering for real and complex tall & skinny matrix
   multiplication kernels on GPUs", and of the tensor-core kernels. The
   generator is gen_tsm_common.c with gen_tsm_fma.c, gen_tsm_mma.c and
   gen_tsm_space.c, its fixed device code in .cuh files under device/. */
#ifndef ODB_GEN_TSM_H
#define ODB_GEN_TSM_H

#include <stddef.h>
#include "odb_tsm.h"

typedef enum odb_tsm_reduce {
  ODB_TSM_REDUCE_GLOBAL = 0,   /* every thread: global atomicAdd */
  ODB_TSM_REDUCE_LOCAL = 1     /* shared-memory atomics per block, then
                                  one global atomicAdd per entry and block */
} odb_tsm_reduce;

typedef enum odb_tsm_csrc {
  ODB_TSM_C_L1 = 0,            /* tsmm: C read through the L1 cache */
  ODB_TSM_C_SHARED = 1,        /* copied to shared memory by each block */
  ODB_TSM_C_REGS = 2           /* each thread keeps its columns of C */
} odb_tsm_csrc;

/* Which units multiply: the FMA units (Ernst et al.'s kernels) or the FP64
   tensor cores through mma.sync (warp-wide products of an m x k and a
   k x n matrix). */
typedef enum odb_tsm_mma {
  ODB_TSM_FMA = 0,
  ODB_TSM_MMA_M8N8K4 = 1,      /* sm_80 and newer */
  ODB_TSM_MMA_M16N8K4 = 2,     /* sm_90 and newer */
  ODB_TSM_MMA_M16N8K8 = 3,     /* sm_90 and newer */
  ODB_TSM_MMA_M16N8K16 = 4     /* sm_90 and newer */
} odb_tsm_mma;

/*
** One kernel configuration. tsmttsm uses tm, tn (tile of C per thread),
** transposed (tiles interleaved across threads, Fig. 10/11), leapfrog
** (loads one group of rows ahead, §3.1), unroll (rows per loop iteration)
** and reduce; tsmm uses tpr (threads per row of B; each computes columns
** slot, slot + tpr, ...: the transposed mapping of Fig. 13), unroll and
** csrc. Both: block (threads per block wanted; the launch uses the
** largest multiple of the threads per row that fits) and blocks_per_sm
** (grid = blocks_per_sm x SMs, fewer when K has fewer row groups).
** stage (tsmttsm) follows the outlook of Ernst et al.: rows go through
** shared memory in chunks, loaded contiguously by the whole block.
**
** mma != 0 selects the tensor-core kernels (both operations). They work
** on the real view of the data: a complex K x M matrix is a real K x 2M
** one, a complex tsmttsm is the real one of 2M x 2N whose 2 x 2 blocks
** combine into C, and a complex tsmm multiplies by the real 2M x 2N form
** of C ([[re, im], [-im, re]] per entry): no flop is wasted. Chunks of
** `chunk` rows are copied to shared memory with cp.async by the whole
** block, `stages` chunks in flight (a persistent grid walks the chunks,
** or, with blocks_per_sm -1, each block takes one chunk and exits).
** Each warp owns wm x wn mma tiles: of C (tsmttsm; rg row groups of warps
** split a chunk's rows, k of them a step, and each adds its sums) or of
** B (tsmm: wm blocks of 8 or 16 rows times wn blocks of 8 columns, k
** columns of A a step; C comes from registers or shared memory, csrc).
** blocks_per_sm 0 launches as many blocks as fit on the device at once.
*/
typedef struct odb_tsm_cfg {
  odb_tsm_op op;
  odb_tsm_dtype t;
  int M, N;
  int tm, tn, transposed, leapfrog;   /* tsmttsm */
  int tpr, csrc;                      /* tsmm */
  int unroll;                         /* 1..4 */
  int reduce;                         /* tsmttsm: odb_tsm_reduce */
  int block;                          /* 32..1024 */
  int blocks_per_sm;                  /* 1..32; mma only: 0 fills the
                                         device, -1 launches a block per
                                         chunk (no persistent loop) */
  /* tsmttsm: 1 stages chunks of `chunk` rows of A and B in shared memory
     with coalesced loads of all the block's threads, then each thread
     sums its tile over the chunk from there (lf and unroll unused) */
  int stage, chunk;
  int mma;                            /* odb_tsm_mma */
  int wm, wn;                         /* mma tiles per warp */
  int rg;                             /* mma: row groups of warps */
  int stages;                         /* mma: chunks in flight, 2..4 */
  /* complex mma kernels (m16n8k*): 1 multiplies with Gauss's three real
     products P1 = Re X Re Y, P2 = Im X Im Y, P3 = (Re X + Im X)(Re Y +
     Im Y), Re = P1 - P2, Im = P3 - P1 - P2: 6 MNK real flops on the
     tensor cores instead of 8 (the figures still count 8 MNK). Each lane
     loads (re, im) pairs with one 16-byte load; warp tiles count complex
     entries (wm blocks of 16, wn of 8). tsmm takes C from registers or
     shared memory. */
  int gauss;
  /* Gauss tsmttsm: 2 or 4 splits C into as many bands of M / split rows;
     block b sums band b % split over every (gridDim / split)-th chunk
     and stages only its band's columns of A (the others read A again,
     from L2): smaller blocks, two of them per SM. 0 or 1: no split. */
  int split;
  /* real mma tsmm: 1 stages the chunk's rows of B in shared memory (row
     stride 8 mod 16 doubles) and writes them back as one contiguous run
     of 16-byte stores by the whole block, instead of each lane storing
     its fragments (8 rows x 64 bytes per warp store). */
  int ostage;
  /* mma: the L2 prefetch hint of the 16-byte cp.async loads of A and B,
     in bytes: 0 the default (128), 64 or 256; -1 none. The size the L2
     fetches from DRAM around a miss: larger runs may read the streams
     closer to the card's ceiling. Not in the spaces: tokens only (suffix
     p64, p256, pn), for races against the default. */
  int pf;
  /* mma tsmttsm (no split, a grid that fills the device or blocks_per_sm):
     1 hands out the chunks after each block's first stages - 1 from a
     global counter, so that blocks on SMs that read faster take more and
     all finish together (token suffix d); 0 walks every gridDim.x-th
     chunk. */
  int dyn;
} odb_tsm_cfg;

/* Threads that work on one row (tiles per row for tsmttsm, tpr for tsmm). */
int odb_tsm_cfg_group(const odb_tsm_cfg *c);
/* Threads per block of the launch: a multiple of the group. */
int odb_tsm_cfg_block(const odb_tsm_cfg *c);
/* Bytes of dynamic shared memory the kernel needs. */
size_t odb_tsm_cfg_smem(const odb_tsm_cfg *c);
/*
** The register estimate of §5.2, 2 (T_M T_N + 2 (T_M + T_N) + 8) for a
** leap-frogging real tsmttsm kernel, generalized: accumulators, loaded
** values (times the unroll depth, twice with leap frogging), kept columns
** of C, and 8 for indices; complex entries count twice.
*/
int odb_tsm_cfg_regs(const odb_tsm_cfg *c);
/* 1 when c fits its shape, the register estimate is at most 255 and the
   threads of a row fit a block (the tuning space's constraint). */
int odb_tsm_cfg_allowed(const odb_tsm_cfg *c);
/* ODB_ERR_ARG naming the first option out of range for the shape. */
odb_status odb_tsm_cfg_check(const odb_tsm_cfg *c);
/* "tm=4 tn=8 trans=1 lf=1 unroll=2 reduce=local block=256 bps=4". */
const char *odb_tsm_cfg_text(const odb_tsm_cfg *c, char *buf, size_t len);
/*
** A short token naming the options of c without its shape (at most 63
** characters, no blank, '=' or ','): the tuner's value for c, e.g.
** "f4x8t1l1u2lb4" (FMA tsmttsm), "p8Su2b4" (FMA tsmm),
** "m1w4x4g1r32s3lb0" (mma tsmttsm), "m2w2x2g2r32s3Rb0" (mma tsmm),
** "m2w1x4g1r32s3lb0z3" (Gauss's three products, complex only),
** "m3w1x2g1r16s4lb0z3h2" (the same, C split into 2 bands),
** "m2w1x2g1r64s3Rb0o" (mma tsmm with B staged for coalesced stores).
*/
const char *odb_tsm_cfg_token(const odb_tsm_cfg *c, char *buf, size_t len);
/* Parses a token of odb_tsm_cfg_token for a shape; ODB_ERR_ARG when it
   is malformed or does not fit the shape (odb_tsm_cfg_check). */
odb_status odb_tsm_cfg_parse(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                             const char *token, odb_tsm_cfg *out);
/* Smallest compute capability (major * 10 + minor) that runs c. */
int odb_tsm_cfg_min_cc(const odb_tsm_cfg *c);

/*
** Writes the kernel's CUDA C (extern "C" __global__ void tsm_kernel(args))
** into a new string (free() it). The argument struct is
** { const double *A; const double *X; double *out; long long K; } with X
** = B and out = C for tsmttsm, X = C and out = B for tsmm.
*/
odb_status odb_gen_tsm(const odb_tsm_cfg *c, char **source);

#endif

/*
** The tuning space of a shape, as a list: full = 1 is the exhaustive
** space (tiles T_M, T_N in {1,2,4,8,16} up to M, N, transposed and leap
** frogging on and off, unroll 1 or 2, both reductions, 2, 4 or 8 blocks
** per SM; tsmm: threads per row in {1,2,4,8,16,32} up to N, each source
** of C, unroll 1..4, 2, 4 or 8 blocks per SM); full = 0 is the quick
** space the roofline scenario tunes over (tsmttsm: tiles of at least 2
** where the side allows, transposed, the local reduction, unroll 1;
** tsmm: C in shared memory or L1, unroll 2 or 4; only where M or N is at
** most 12: wider shapes went to the tensor cores on an H200). Both add
** the tensor-core kernels where the real view has at least 4 columns on
** each side, or, for tsmm, any number beside a side of at least 16 (mma
** shapes, warp tiles, row groups, chunk sizes, pipeline depths; the quick
** space those that won on an H200: tsmttsm from 8 columns, or 4 beside a
** side of 16; tsmm from 4, or any beside 16), and, for complex data from
** 8 columns each side on sm_90, the kernels of Gauss's three products
** (the quick space a few that led on an H200; C may split into bands of
** unequal rows). The quick space of a complex shape at least 32 wide each
** side is wider: the tensor-core and Gauss kernels over every warp tile,
** 1 or 2 row groups, chunks of 16 to 64 rows, 2 to 4 stages, C in 1, 2 or
** 4 bands (Gauss A^T B), m16n8k8 and m16n8k16 (a few hundred each; see
** wide_keeps in gen_tsm_space.c), with the quick space's own kept whole.
** Configurations whose register estimate exceeds 255 (§5.2)
** are left out, and so are those that need a newer device than cc
** (major * 10 + minor; 0: no limit). Writes at most max configurations to
** list (may be NULL) and returns how many there are.
*/
int odb_tsm_space_list(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                       int full, int cc, odb_tsm_cfg *list, int max);
