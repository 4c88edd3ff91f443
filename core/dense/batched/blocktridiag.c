/* blocktridiag.c - many independent block-tridiagonal lines (the line-
   implicit solver): block LU (block Thomas) factorization and solve, one
   pack of VL interleaved lines at a time (compact) or one line (standard). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batched_kernels.h"
#include "odb_size.h"
#include "odb_team.h"
#include "odb_topo.h"

struct odb_blocktridiag {
  odb_batch bt;     /* one entry per line */
  int K;            /* block rows per line */
  int factored;
  double *m;        /* blocks: ((pack*K + r)*3 + w)*B*B*VL + (i*B+j)*VL + l */
};

/* Offset of element (i, j) of block (line, r, w). */
static size_t blk_at(const odb_blocktridiag *t, long line, int r, int w,
                     int i, int j) {
  size_t vl = (size_t)t->bt.vl, b = (size_t)t->bt.b;
  size_t pk = (size_t)line / vl;
  return ((pk * (size_t)t->K + (size_t)r) * 3 + (size_t)w) * b * b * vl
         + ((size_t)i * b + (size_t)j) * vl + (size_t)line % vl;
}

/* See the header. */
odb_status odb_blocktridiag_size(long lines, int length, int block,
                                 odb_batched_layout layout, int vl,
                                 size_t *bytes) {
  odb_batch bt;
  size_t len;
  *bytes = 0;
  if (length < 1)
    return ODB_FAIL(ODB_ERR_ARG, "line length %d must be at least 1", length);
  ODB_TRY(odb_batch_init(&bt, layout, lines, block, vl));
  if (odb_size_mul3(&len, odb_batch_mat_len(&bt), 3, (size_t)length) ||
      odb_size_mul(bytes, len, sizeof(double)))
    return ODB_FAIL(ODB_ERR_NOMEM, "lines = %ld, length = %d, block = %d: "
                    "the blocks would need %.3g bytes, more than this "
                    "machine can address", lines, length, block,
                    24.0 * (double)odb_batch_mat_len(&bt) * length);
  {
    char what[96];
    snprintf(what, sizeof what, "lines = %ld, length = %d, block = %d",
             lines, length, block);
    ODB_TRY(odb_topo_check_memory((double)*bytes, what));
  }
  return ODB_OK;
}

/* See the header; blocks start as A = C = 0, D = I (padding lines too). */
odb_status odb_blocktridiag_new(long lines, int length, int block,
                                odb_batched_layout layout, int vl,
                                odb_blocktridiag **out) {
  odb_blocktridiag *t = NULL;
  odb_status st;
  size_t bytes;
  *out = NULL;
  ODB_TRY(odb_blocktridiag_size(lines, length, block, layout, vl, &bytes));
  t = calloc(1, sizeof *t);
  if (!t)
    return ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag: no memory");
  st = odb_batch_init(&t->bt, layout, lines, block, vl);
  if (st != ODB_OK)
    goto fail;
  t->K = length;
  t->m = calloc(bytes / sizeof(double), sizeof(double));
  if (!t->m) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "lines = %ld, length = %d, block = %d: "
                  "out of memory for the blocks (%zu bytes)", lines, length,
                  block, bytes);
    goto fail;
  }
  for (long p = 0; p < t->bt.packs * t->bt.vl; ++p)
    for (int r = 0; r < length; ++r)
      for (int i = 0; i < block; ++i)
        t->m[blk_at(t, p, r, ODB_BTD_D, i, i)] = 1.0;
  *out = t;
  return ODB_OK;
fail:
  odb_blocktridiag_free(t);
  return st;
}

/* t may be NULL. */
void odb_blocktridiag_free(odb_blocktridiag *t) {
  if (!t)
    return;
  free(t->m);
  free(t);
}

const odb_batch *odb_blocktridiag_batch(const odb_blocktridiag *t) {
  return &t->bt;
}

int odb_blocktridiag_length(const odb_blocktridiag *t) { return t->K; }

int odb_blocktridiag_factored(const odb_blocktridiag *t) {
  return t->factored;
}

/* Refuses a block outside the object. */
static odb_status check_block(const odb_blocktridiag *t, long line, long row,
                              odb_btd_block w) {
  if (line < 0 || line >= t->bt.n)
    return ODB_FAIL(ODB_ERR_ARG, "line %ld is outside 0..%ld", line,
                    t->bt.n - 1);
  if (row < 0 || row >= t->K)
    return ODB_FAIL(ODB_ERR_ARG, "block row %ld is outside 0..%d", row,
                    t->K - 1);
  if (w != ODB_BTD_A && w != ODB_BTD_D && w != ODB_BTD_C)
    return ODB_FAIL(ODB_ERR_ARG, "block kind %d is not A, D or C", (int)w);
  return ODB_OK;
}

/* blk is row-major B x B. */
odb_status odb_blocktridiag_set(odb_blocktridiag *t, long line, long row,
                                odb_btd_block w, const double *blk) {
  int b = t->bt.b;
  ODB_TRY(check_block(t, line, row, w));
  for (int i = 0; i < b; ++i)
    for (int j = 0; j < b; ++j)
      t->m[blk_at(t, line, (int)row, (int)w, i, j)] = blk[i * b + j];
  t->factored = 0;
  return ODB_OK;
}

/* blk receives row-major B x B (the factors once factored). */
odb_status odb_blocktridiag_get(const odb_blocktridiag *t, long line, long row,
                                odb_btd_block w, double *blk) {
  int b = t->bt.b;
  ODB_TRY(check_block(t, line, row, w));
  for (int i = 0; i < b; ++i)
    for (int j = 0; j < b; ++j)
      blk[i * b + j] = t->m[blk_at(t, line, (int)row, (int)w, i, j)];
  return ODB_OK;
}

/*
** Factors one pack: for each row r, LU(D_r); then C_r := L_r^{-1} C_r,
** A_{r+1} := A_{r+1} U_r^{-1} and D_{r+1} -= A_{r+1} C_r. badrow[l] gets
** the first block row with a refused pivot in lane l (or -1). With s (room
** for 4 blocks) the pack is only read: D_r is carried in s, and C_r,
** A_{r+1} and D_{r+1} are copied into s as they are needed; the same
** kernels on the same values, so the same pivots are refused.
*/
BK_INLINE void factor_pack(const int VL, int B, int K, double *p, double *s,
                           int *badrow) {
  size_t blk = (size_t)B * B * VL, bytes = sizeof(double) * blk;
  int br[ODB_BATCHED_MAX_VL];
  double *D = p + blk;
  for (int l = 0; l < VL; ++l)
    badrow[l] = -1;
  if (s) {
    memcpy(s, D, bytes);
    D = s;
  }
  for (int r = 0; r < K; ++r) {
    bk_lu(VL, B, D, br);
    for (int l = 0; l < VL; ++l)
      if (br[l] >= 0 && badrow[l] < 0)
        badrow[l] = r;
    if (r + 1 == K)
      break;
    double *C = p + ((size_t)r * 3 + 2) * blk;
    double *An = p + ((size_t)(r + 1) * 3 + 0) * blk;
    double *Dn = p + ((size_t)(r + 1) * 3 + 1) * blk;
    if (s) {   /* D_{r+1} goes to the block D_r does not use */
      double *spare = D == s ? s + 3 * blk : s;
      C = memcpy(s + blk, C, bytes);
      An = memcpy(s + 2 * blk, An, bytes);
      Dn = memcpy(spare, Dn, bytes);
    }
    bk_trsm_llu(VL, B, B, D, C);
    bk_trsm_ru(VL, B, D, An);
    bk_gemm(VL, B, B, -1.0, An, C, 1.0, Dn);
    D = Dn;
  }
}

/* s NULL: every pack of [p0, p1) in place; else their checks (see
   factor_pack), up to the first pack with a bad line. */
#define FACTOR_PACKS(VL, t, p0, p1, s, first, first_row)               \
  for (long pk = (p0); pk < (p1) && !((s) && *(first) >= 0); ++pk) {  \
    int badrow[ODB_BATCHED_MAX_VL];                                     \
    factor_pack(VL, (t)->bt.b, (t)->K,                                  \
                (t)->m + (size_t)pk * 3 * (t)->K * bb * VL, (s), badrow); \
    for (int l = 0; l < VL; ++l) {                                      \
      long line = pk * VL + l;                                          \
      if (badrow[l] >= 0 && line < (t)->bt.n && *(first) < 0) {         \
        *(first) = line;                                                \
        *(first_row) = badrow[l];                                       \
      }                                                                 \
    }                                                                   \
  }

/* Factors packs [p0, p1) (s NULL), or checks them (s: 4 blocks of scratch;
   t->m is then only read); *first (-1 on entry) gets the lowest bad line. */
static void factor_range(odb_blocktridiag *t, long p0, long p1, double *s,
                         long *first, int *first_row) {
  size_t bb = (size_t)t->bt.b * (size_t)t->bt.b;
  BATCHED_DISPATCH(t->bt.vl, FACTOR_PACKS, t, p0, p1, s, first, first_row);
}

/* Per-member results of a team factorization. */
typedef struct factor_job {
  odb_blocktridiag *t;
  long *first;      /* one per member */
  int *first_row;
} factor_job;

/* Team member tid factors its block of packs. */
static void factor_member(odb_team *team, int tid, void *arg) {
  factor_job *job = arg;
  long p0, p1;
  odb_team_range(job->t->bt.packs, odb_team_size(team), tid, &p0, &p1);
  job->first[tid] = -1;
  factor_range(job->t, p0, p1, NULL, &job->first[tid],
               &job->first_row[tid]);
}

/* Records the outcome of a factorization (first < 0: success). */
static odb_status factor_done(odb_blocktridiag *t, long first, int first_row,
                              long *bad_line) {
  t->factored = first < 0;
  if (bad_line)
    *bad_line = first;
  if (first >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "line %ld has a zero or tiny pivot in the "
                    "diagonal block of row %d (block LU without pivoting "
                    "needs block diagonally dominant lines)", first,
                    first_row);
  return ODB_OK;
}

/* t from odb_blocktridiag_new. */
odb_status odb_blocktridiag_factor(odb_blocktridiag *t, long *bad_line) {
  long first = -1;
  int first_row = -1;
  if (t->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: already factored (set the "
                    "blocks again first)");
  factor_range(t, 0, t->bt.packs, NULL, &first, &first_row);
  return factor_done(t, first, first_row, bad_line);
}

/* t from odb_blocktridiag_new; its blocks are only read (factor_range with
   scratch), whatever the const of the pointer passed down. */
odb_status odb_blocktridiag_factor_check(const odb_blocktridiag *t,
                                         long *bad_line, int *bad_row) {
  size_t blk = (size_t)t->bt.b * (size_t)t->bt.b * (size_t)t->bt.vl;
  long first = -1;
  int first_row = -1;
  double *s;
  if (bad_line)
    *bad_line = -1;
  if (bad_row)
    *bad_row = -1;
  if (t->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: already factored (set the "
                    "blocks again first)");
  s = malloc(sizeof(double) * 4 * blk);
  if (!s)
    return ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag factor check: no memory");
  factor_range((odb_blocktridiag *)t, 0, t->bt.packs, s, &first, &first_row);
  free(s);
  if (bad_line)
    *bad_line = first;
  if (bad_row)
    *bad_row = first_row;
  if (first >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "line %ld has a zero or tiny pivot in the "
                    "diagonal block of row %d (block LU without pivoting "
                    "needs block diagonally dominant lines)", first,
                    first_row);
  return ODB_OK;
}

/* team from odb_team_create, not running. */
odb_status odb_blocktridiag_factor_team(odb_blocktridiag *t, odb_team *team,
                                        long *bad_line) {
  int p = odb_team_size(team);
  long first = -1;
  int first_row = -1;
  odb_status st;
  if (t->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: already factored (set the "
                    "blocks again first)");
  factor_job job = { t, calloc((size_t)p, sizeof(long)),
                     calloc((size_t)p, sizeof(int)) };
  if (!job.first || !job.first_row) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag: no memory");
    goto done;
  }
  st = odb_team_run(team, factor_member, &job);
  if (st != ODB_OK)
    goto done;
  for (int q = 0; q < p && first < 0; ++q)   /* members own ascending packs */
    if (job.first[q] >= 0) {
      first = job.first[q];
      first_row = job.first_row[q];
    }
  st = factor_done(t, first, first_row, bad_line);
done:
  free(job.first);
  free(job.first_row);
  return st;
}

/*
** Solves one pack in place: forward y_r = L_r^{-1}(b_r - A'_r y_{r-1}),
** backward x_r = U_r^{-1}(y_r - C'_r x_{r+1}). x: ((r*B + i)*VL + l).
*/
BK_INLINE void solve_pack(const int VL, int B, int K, const double *p,
                          double *x) {
  size_t blk = (size_t)B * B * VL, vec = (size_t)B * VL;
  for (int r = 0; r < K; ++r) {
    double *xr = x + (size_t)r * vec;
    if (r > 0)
      bk_gemm(VL, B, 1, -1.0, p + ((size_t)r * 3 + 0) * blk, xr - vec, 1.0,
              xr);
    bk_trsm_llu(VL, B, 1, p + ((size_t)r * 3 + 1) * blk, xr);
  }
  for (int r = K - 1; r >= 0; --r) {
    double *xr = x + (size_t)r * vec;
    if (r + 1 < K)
      bk_gemm(VL, B, 1, -1.0, p + ((size_t)r * 3 + 2) * blk, xr + vec, 1.0,
              xr);
    bk_trsm_lu(VL, B, 1, p + ((size_t)r * 3 + 1) * blk, xr);
  }
}

#define SOLVE_PACKS(VL, t, p0, p1, xp)                                  \
  for (long pk = (p0); pk < (p1); ++pk)                                 \
    solve_pack(VL, (t)->bt.b, (t)->K,                                   \
               (t)->m + (size_t)pk * 3 * (t)->K * bb * VL,              \
               (xp) + (size_t)pk * (t)->K * (size_t)(t)->bt.b * VL);

/* Solves packs [p0, p1) of xp. */
static void solve_range(const odb_blocktridiag *t, long p0, long p1,
                        double *xp) {
  size_t bb = (size_t)t->bt.b * (size_t)t->bt.b;
  BATCHED_DISPATCH(t->bt.vl, SOLVE_PACKS, t, p0, p1, xp);
}

size_t odb_blocktridiag_work_len(const odb_blocktridiag *t) {
  return odb_batch_rhs_len(&t->bt, 1) * (size_t)t->K;
}

/* xp in the internal layout (odb_blocktridiag_work_len doubles). */
odb_status odb_blocktridiag_solve_packed(const odb_blocktridiag *t,
                                         double *xp) {
  if (!t->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: solve before factor");
  solve_range(t, 0, t->bt.packs, xp);
  return ODB_OK;
}

typedef struct solve_job { const odb_blocktridiag *t; double *xp; } solve_job;

/* Team member tid solves its block of packs. */
static void solve_member(odb_team *team, int tid, void *arg) {
  solve_job *job = arg;
  long p0, p1;
  odb_team_range(job->t->bt.packs, odb_team_size(team), tid, &p0, &p1);
  solve_range(job->t, p0, p1, job->xp);
}

/* team from odb_team_create, not running. */
odb_status odb_blocktridiag_solve_packed_team(const odb_blocktridiag *t,
                                              odb_team *team, double *xp) {
  solve_job job = { t, xp };
  if (!t->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: solve before factor");
  return odb_team_run(team, solve_member, &job);
}

/* Padding lines get zero. One pack at a time: its VL lines' values are
   contiguous runs of K*B in x, interleaved into xp. */
void odb_blocktridiag_pack_rhs(const odb_blocktridiag *t, const double *x,
                               double *xp) {
  size_t run = (size_t)t->K * (size_t)t->bt.b, vl = (size_t)t->bt.vl;
  if (vl == 1) {
    memcpy(xp, x, sizeof(double) * odb_blocktridiag_work_len(t));
    return;
  }
  for (long pk = 0; pk < t->bt.packs; ++pk) {
    double *dst = xp + (size_t)pk * run * vl;
    for (size_t l = 0; l < vl; ++l) {
      long line = pk * (long)vl + (long)l;
      const double *src = x + (size_t)line * run;
      if (line < t->bt.n)
        for (size_t e = 0; e < run; ++e)
          dst[e * vl + l] = src[e];
      else
        for (size_t e = 0; e < run; ++e)
          dst[e * vl + l] = 0.0;
    }
  }
}

/* Only real lines are written. */
void odb_blocktridiag_unpack_rhs(const odb_blocktridiag *t, const double *xp,
                                 double *x) {
  size_t run = (size_t)t->K * (size_t)t->bt.b, vl = (size_t)t->bt.vl;
  if (vl == 1) {
    memcpy(x, xp, sizeof(double) * odb_blocktridiag_work_len(t));
    return;
  }
  for (long pk = 0; pk < t->bt.packs; ++pk) {
    const double *src = xp + (size_t)pk * run * vl;
    for (size_t l = 0; l < vl; ++l) {
      long line = pk * (long)vl + (long)l;
      if (line >= t->bt.n)
        break;
      double *dst = x + (size_t)line * run;
      for (size_t e = 0; e < run; ++e)
        dst[e] = src[e * vl + l];
    }
  }
}

/* Every block of every line, padding lines included (they keep I and 0). */
void odb_blocktridiag_random(odb_blocktridiag *t, uint64_t seed,
                             double dominance) {
  int b = t->bt.b, K = t->K;
  double shift = dominance * b;
  for (long line = 0; line < t->bt.n; ++line)
    for (int r = 0; r < K; ++r)
      for (int w = 0; w < 3; ++w) {
        int zero = (w == ODB_BTD_A && r == 0) || (w == ODB_BTD_C && r == K - 1);
        uint64_t q = ((uint64_t)line * (uint64_t)K + (uint64_t)r) * 3 + w;
        for (int i = 0; i < b; ++i)
          for (int j = 0; j < b; ++j)
            t->m[blk_at(t, line, r, w, i, j)] =
              zero ? 0.0 : odb_batched_rand_entry(seed, q, b, i, j,
                                                  w == ODB_BTD_D ? shift : 0.0);
      }
  t->factored = 0;
}

double *odb_blocktridiag_blocks(odb_blocktridiag *t) { return t->m; }

size_t odb_blocktridiag_blocks_len(const odb_blocktridiag *t) {
  return odb_batch_mat_len(&t->bt) * 3 * (size_t)t->K;
}

void odb_blocktridiag_mark_factored(odb_blocktridiag *t, int factored) {
  t->factored = factored != 0;
}

/* x in the standard order; work NULL or work_len doubles. */
odb_status odb_blocktridiag_solve(const odb_blocktridiag *t, double *x,
                                  size_t len, double *work) {
  size_t need = (size_t)t->bt.n * (size_t)t->K * (size_t)t->bt.b;
  double *own = NULL;
  odb_status st;
  if (len != need)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag solve: right-hand side has %zu "
                    "values, expected lines*length*block = %zu", len, need);
  if (!t->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: solve before factor");
  if (t->bt.vl == 1)
    return odb_blocktridiag_solve_packed(t, x);
  if (!work) {
    own = malloc(sizeof(double) * odb_blocktridiag_work_len(t));
    if (!own)
      return ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag solve: no memory");
    work = own;
  }
  odb_blocktridiag_pack_rhs(t, x, work);
  st = odb_blocktridiag_solve_packed(t, work);
  if (st == ODB_OK)
    odb_blocktridiag_unpack_rhs(t, work, x);
  free(own);
  return st;
}

/* Real lines only. A line of K block rows holds 3K - 2 blocks that matter
   (A_0 and C_{K-1} are outside the matrix: never read or written). */
static double btd_blocks(const odb_blocktridiag *t) {
  return (double)t->bt.n * (3.0 * t->K - 2.0) * t->bt.b * t->bt.b;
}

/* The fewest bytes of the factorization, read + written
   (odb_blocktridiag_min_bytes in odb_dense_floor.h: every block read once,
   all but the first rows of D_0 and the C_r written once). */
double odb_blocktridiag_factor_bytes(const odb_blocktridiag *t) {
  return 8.0 * (2.0 * btd_blocks(t)
                - (double)t->bt.n * t->K * t->bt.b);
}

/* Each factor block read once (L of D_r forward, U of D_r backward: D_r
   whole once), the right-hand side read once and the solution written
   once; the intermediate y is not counted. */
double odb_blocktridiag_solve_bytes(const odb_blocktridiag *t) {
  return 8.0 * (btd_blocks(t) + 2.0 * (double)t->bt.n * t->K * t->bt.b);
}
