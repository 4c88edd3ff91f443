/* odb_batched.h - batched small dense matrices (B x B, B in 2..32) in the
   standard or the compact (interleaved) layout: LU without pivoting, TRSM,
   GEMM, GEMV, solves, and a line block-tridiagonal solver; CPU versions.
   The compact layout and the line solver follow the KokkosKernels batched
   work: K. Kim et al., "Designing vector-friendly compact BLAS and LAPACK
   kernels" (SC17), and its block-tridiagonal line-implicit solver. */
#ifndef ODB_BATCHED_H
#define ODB_BATCHED_H

#include <stddef.h>
#include <stdint.h>
#include "odb_status.h"

/* A team of threads (odb_team.h, not included: it is C11-only and this
   header also serves the CUDA sources). */
typedef struct odb_team odb_team;

#define ODB_BATCHED_MIN_B 2
#define ODB_BATCHED_MAX_B 32
#define ODB_BATCHED_MAX_VL 16
/* A pivot p of a matrix M is refused when !(|p| > tiny * ||M||_F). */
#define ODB_BATCHED_PIVOT_TINY 1e-14

/*
** Layouts of n matrices B x B (element (p, i, j): matrix p, row i, col j):
**   standard  A[(p*B + i)*B + j]                          (n*B*B doubles)
**   compact   A[(((p/VL)*B + i)*B + j)*VL + p%VL]  (ceil(n/VL)*B*B*VL)
** Right-hand sides of m columns (vectors: m = 1), element (p, i, c):
**   standard  X[(p*B + i)*m + c]
**   compact   X[(((p/VL)*B + i)*m + c)*VL + p%VL]
** In the compact layout the VL matrices of a pack are interleaved along the
** fastest dimension; the lanes past n of the last pack are padding (the
** pack functions fill them with identity matrices and zero vectors, so that
** LU stays safe there; their results are ignored).
*/
typedef enum odb_batched_layout {
  ODB_LAYOUT_STANDARD = 0,
  ODB_LAYOUT_COMPACT = 1
} odb_batched_layout;

/* "standard" / "compact"; parse gives ODB_ERR_NAME for others. */
const char *odb_batched_layout_name(odb_batched_layout l);
odb_status odb_batched_layout_parse(const char *name, odb_batched_layout *out);

/* Shape of a batch; built by odb_batch_init, then read-only. */
typedef struct odb_batch {
  odb_batched_layout layout;
  long n;          /* matrices */
  int b;           /* block size */
  int vl;          /* lanes per pack (1 in the standard layout) */
  long packs;      /* ceil(n / vl) */
} odb_batch;

/*
** Reproducible random entries, the same on the host and on the GPU
** (gpu/dense/odb_batched_gpu.cu includes this header): entry idx of a stream
** is a hash of (seed, idx) mapped to a uniform double in [-1, 1).
*/
#ifdef __CUDACC__
#define ODB_BATCHED_HD __host__ __device__
#else
#define ODB_BATCHED_HD
#endif
/* splitmix64's finalizer of seed and idx. */
static inline ODB_BATCHED_HD uint64_t odb_batched_hash(uint64_t seed,
                                                       uint64_t idx) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + idx * 0xD1B54A32D192ED03ull
               + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* Uniform in [-1, 1) (53 random bits; exact arithmetic). */
static inline ODB_BATCHED_HD double odb_batched_unit(uint64_t seed,
                                                     uint64_t idx) {
  return (double)(odb_batched_hash(seed, idx) >> 11) * 0x1.0p-52 - 1.0;
}
/*
** Entry (i, j) of random matrix number q (B x B): uniform in [-1, 1), the
** diagonal moved away from zero by shift (= dominance * B) with its sign;
** shift > B - 1 makes the rows strictly diagonally dominant.
*/
static inline ODB_BATCHED_HD double odb_batched_rand_entry(
    uint64_t seed, uint64_t q, int b, int i, int j, double shift) {
  double u = odb_batched_unit(seed, (q * (uint64_t)b + (uint64_t)i) *
                                        (uint64_t)b + (uint64_t)j);
  if (i == j)
    u = u < 0 ? u - shift : u + shift;
  return u;
}

/* Lanes per pack matching this build's SIMD width (8 with AVX-512, else 4). */
int odb_batched_default_vl(void);

/*
** Checks and fills a shape: n >= 1, b in 2..32, vl in {1, 2, 4, 8, 16} or 0
** for odb_batched_default_vl() (vl is forced to 1 in the standard layout).
** ODB_ERR_ARG naming the bad value otherwise; ODB_ERR_NOMEM when the bytes
** of the matrices (padding included) would not fit a size_t, so that the
** lengths and offsets below never wrap around.
*/
odb_status odb_batch_init(odb_batch *bt, odb_batched_layout layout, long n,
                          int b, int vl);

/* Doubles held by n matrices / by n right-hand sides of m columns, padding
   included (allocate that many). */
size_t odb_batch_mat_len(const odb_batch *bt);
size_t odb_batch_rhs_len(const odb_batch *bt, int m);
/* Offset of element (p, i, j) of the matrices / (p, i, c) of m-column rhs. */
size_t odb_batch_mat_at(const odb_batch *bt, long p, int i, int j);
size_t odb_batch_rhs_at(const odb_batch *bt, int m, long p, int i, int c);

/* Converts n matrices from the standard layout (src) to bt's layout (dst,
   odb_batch_mat_len doubles; padding set to identity) and back. */
void odb_batched_pack(const odb_batch *bt, const double *src, double *dst);
void odb_batched_unpack(const odb_batch *bt, const double *src, double *dst);
/* The same for right-hand sides of m columns (padding set to zero). */
void odb_batched_pack_rhs(const odb_batch *bt, int m, const double *src,
                          double *dst);
void odb_batched_unpack_rhs(const odb_batch *bt, int m, const double *src,
                            double *dst);

/*
** Fills A (bt's layout, padding as odb_batched_pack leaves it) with random
** matrices: matrix p gets odb_batched_rand_entry(seed, p, ...) with shift
** dominance * B (dominance >= 1: diagonally dominant). x (rhs layout, m
** columns, padding zero) gets entries odb_batched_unit(seed ^ 0x5bd1e995,
** (p*B + i)*m + c). The GPU versions (odb_batched_gpu.h) give the same.
*/
void odb_batched_random(const odb_batch *bt, uint64_t seed, double dominance,
                        double *A);
void odb_batched_random_rhs(const odb_batch *bt, int m, uint64_t seed,
                            double *x);
#define ODB_BATCHED_RHS_SEED 0x5bd1e995ull

/*
** LU without pivoting of every matrix, in place (unit lower L below the
** diagonal, U on and above). A zero, tiny (see ODB_BATCHED_PIVOT_TINY) or
** non-finite pivot gives ODB_ERR_ARG naming the lowest such matrix index,
** also stored in *bad (when not NULL; -1 on success); the other matrices are
** factored all the same. Where the matrices must survive a failure, call
** odb_batched_lu_check first.
*/
odb_status odb_batched_lu(const odb_batch *bt, double *A, long *bad);
/*
** The pivot checks of odb_batched_lu without touching A: factors a copy of
** one pack at a time (no more memory than that), and stops at the first
** bad matrix. The same result and message as odb_batched_lu would give;
** *bad_row (when not NULL) gets the row of the refused pivot, -1 on
** success. ODB_ERR_NOMEM when the copy of a pack cannot be had.
*/
odb_status odb_batched_lu_check(const odb_batch *bt, const double *A,
                                long *bad, int *bad_row);

/* Triangular solves with the factors of odb_batched_lu (T). */
typedef enum odb_batched_trsm_kind {
  ODB_TRSM_LEFT_LOWER_UNIT = 0,   /* X := L^{-1} X */
  ODB_TRSM_LEFT_UPPER = 1,        /* X := U^{-1} X */
  ODB_TRSM_RIGHT_UPPER = 2        /* X := X U^{-1} (X square) */
} odb_batched_trsm_kind;

/* X is B x B per matrix (in bt's matrix layout); in place. */
odb_status odb_batched_trsm(const odb_batch *bt, odb_batched_trsm_kind kind,
                            const double *T, double *X);
/* x is a vector per matrix (rhs layout, m = 1); left kinds only. */
odb_status odb_batched_trsv(const odb_batch *bt, odb_batched_trsm_kind kind,
                            const double *T, double *x);
/* C := alpha A B + beta C, all B x B; C must not alias A or B. */
odb_status odb_batched_gemm(const odb_batch *bt, double alpha,
                            const double *A, const double *B, double beta,
                            double *C);
/* y := alpha A x + beta y (rhs layout, m = 1); y must not alias x. */
odb_status odb_batched_gemv(const odb_batch *bt, double alpha,
                            const double *A, const double *x, double beta,
                            double *y);
/* x := A^{-1} x with LU the output of odb_batched_lu (two TRSVs). */
odb_status odb_batched_lu_solve(const odb_batch *bt, const double *LU,
                                double *x);
/* Factors A in place and solves A x = b in place (x holds b on entry). */
odb_status odb_batched_solve(const odb_batch *bt, double *A, double *x,
                             long *bad);

/*
** Block-tridiagonal systems: `lines` independent lines of `length` block
** rows, each row r holding B x B blocks A_r (left of the diagonal; unused
** for r = 0), D_r (diagonal) and C_r (right; unused for r = length-1).
** Stored in the batch's layout with one batch entry per line; block
** (line, r, w) with w = 0 (A), 1 (D), 2 (C) is a B x B matrix. New objects
** hold zero blocks and identity D blocks.
*/
typedef struct odb_blocktridiag odb_blocktridiag;

typedef enum odb_btd_block { ODB_BTD_A = 0, ODB_BTD_D = 1, ODB_BTD_C = 2 }
  odb_btd_block;

/* lines >= 1, length >= 1, block in 2..32, vl as in odb_batch_init;
   ODB_ERR_NOMEM, with the size, when the blocks do not fit. */
odb_status odb_blocktridiag_new(long lines, int length, int block,
                                odb_batched_layout layout, int vl,
                                odb_blocktridiag **out);
/* The bytes of the blocks odb_blocktridiag_new would allocate for that
   shape, into *bytes; its errors (a bad shape, or ODB_ERR_NOMEM naming the
   shape and the bytes when the count does not fit a size_t) otherwise. */
odb_status odb_blocktridiag_size(long lines, int length, int block,
                                 odb_batched_layout layout, int vl,
                                 size_t *bytes);
void odb_blocktridiag_free(odb_blocktridiag *t);
const odb_batch *odb_blocktridiag_batch(const odb_blocktridiag *t);
int odb_blocktridiag_length(const odb_blocktridiag *t);
/* Whether factor() has run since the last set(). */
int odb_blocktridiag_factored(const odb_blocktridiag *t);

/* Copies a row-major B x B block in or out (line and row count from 0);
   ODB_ERR_ARG when out of range. */
odb_status odb_blocktridiag_set(odb_blocktridiag *t, long line, long row,
                                odb_btd_block w, const double *blk);
odb_status odb_blocktridiag_get(const odb_blocktridiag *t, long line, long row,
                                odb_btd_block w, double *blk);

/* Block LU (block Thomas) of every line in place; a bad pivot gives
   ODB_ERR_ARG naming the line and block row (0-based), *bad_line set as in
   LU, and leaves the object unfactored and its blocks partly factored (set
   them again). Refuses an object already factored. Where the blocks must
   survive a failure, call odb_blocktridiag_factor_check first. */
odb_status odb_blocktridiag_factor(odb_blocktridiag *t, long *bad_line);
/* The pivot checks of odb_blocktridiag_factor without writing the blocks
   (a pack at a time on four blocks of scratch; it stops at the first pack
   with a bad line): the same result and message. *bad_line and *bad_row
   (either may be NULL) get the lowest bad line and its block row, -1 when
   every pivot passes. ODB_ERR_NOMEM when the scratch cannot be had. */
odb_status odb_blocktridiag_factor_check(const odb_blocktridiag *t,
                                         long *bad_line, int *bad_row);

/*
** Solves every line in place. x holds lines*length*B doubles in the
** standard order x[(line*length + r)*B + i]; `len` must be exactly that
** (ODB_ERR_ARG otherwise, or when not factored). work may be NULL (then
** allocated) or hold odb_blocktridiag_work_len doubles.
*/
size_t odb_blocktridiag_work_len(const odb_blocktridiag *t);
odb_status odb_blocktridiag_solve(const odb_blocktridiag *t, double *x,
                                  size_t len, double *work);
/* The same on a right-hand side already in the internal layout
   (odb_blocktridiag_work_len doubles, element (line, r, i) at
   ((line/VL * length + r)*B + i)*VL + line%VL, VL = 1 when standard). */
odb_status odb_blocktridiag_solve_packed(const odb_blocktridiag *t,
                                         double *xp);
/* The same spread over a team's members (blocks of packs per member;
   team from odb_team_create, not running). Results equal the serial ones. */
odb_status odb_blocktridiag_factor_team(odb_blocktridiag *t, odb_team *team,
                                        long *bad_line);
odb_status odb_blocktridiag_solve_packed_team(const odb_blocktridiag *t,
                                              odb_team *team, double *xp);
/* Converts x between the standard order above and the internal layout. */
void odb_blocktridiag_pack_rhs(const odb_blocktridiag *t, const double *x,
                               double *xp);
void odb_blocktridiag_unpack_rhs(const odb_blocktridiag *t, const double *xp,
                                 double *x);

/*
** Random blocks: block (line, r, w) entry (i, j) is odb_batched_rand_entry(
** seed, (line*length + r)*3 + w, B, i, j, shift) with shift = dominance * B
** for D blocks and 0 for A and C; A of row 0 and C of the last row stay
** zero. dominance > 2 makes every line block diagonally dominant. Leaves the
** object unfactored. The GPU version (odb_bgpu_btd_random) gives the same.
*/
void odb_blocktridiag_random(odb_blocktridiag *t, uint64_t seed,
                             double dominance);
/*
** The block storage itself (odb_blocktridiag_blocks_len doubles; block
** (line, r, w) element (i, j) at ((line/VL*length + r)*3 + w)*B*B*VL +
** (i*B + j)*VL + line%VL), for copies to and from a device. Writing into it
** is allowed; then call odb_blocktridiag_mark_factored with whether it now
** holds factors (computed elsewhere, e.g. on the GPU) or plain blocks.
*/
double *odb_blocktridiag_blocks(odb_blocktridiag *t);
size_t odb_blocktridiag_blocks_len(const odb_blocktridiag *t);
void odb_blocktridiag_mark_factored(odb_blocktridiag *t, int factored);

/* Bytes read and written at least, for GB/s figures
   (odb_blocktridiag_min_bytes in odb_dense_floor.h): factor reads each
   block that matters once (3K - 2 per line: A_0 and C_{K-1} lie outside
   the matrix) and writes all but the first rows of D_0 and of each C_r,
   solve reads each of those blocks once and the right-hand side once and
   writes the solution once. */
double odb_blocktridiag_factor_bytes(const odb_blocktridiag *t);
double odb_blocktridiag_solve_bytes(const odb_blocktridiag *t);

#endif
