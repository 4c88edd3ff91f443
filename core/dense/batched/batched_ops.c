/* batched_ops.c - batched LU, TRSM, TRSV, GEMM, GEMV and solves over every
   pack of a batch (either layout: the standard one is packs of one lane). */
#include <stdlib.h>
#include <string.h>

#include "batched_kernels.h"

/* Runs the LU kernel over every pack; records the lowest bad matrix. */
#define LU_PACKS(VL, bt, A, first)                                      \
  for (long pk = 0; pk < (bt)->packs; ++pk) {                           \
    int badrow[ODB_BATCHED_MAX_VL];                                     \
    bk_lu(VL, (bt)->b, (A) + (size_t)pk * bb * VL, badrow);             \
    for (int l = 0; l < VL; ++l) {                                      \
      long p = pk * VL + l;                                             \
      if (badrow[l] >= 0 && p < (bt)->n && *(first) < 0) {              \
        *(first) = p;                                                   \
        first_row = badrow[l];                                          \
      }                                                                 \
    }                                                                   \
  }

/* bt from odb_batch_init; A holds odb_batch_mat_len(bt) doubles. */
odb_status odb_batched_lu(const odb_batch *bt, double *A, long *bad) {
  size_t bb = (size_t)bt->b * (size_t)bt->b;
  long first = -1;
  int first_row = -1;
  BATCHED_DISPATCH(bt->vl, LU_PACKS, bt, A, &first);
  if (bad)
    *bad = first;
  if (first >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "matrix %ld has a zero or tiny pivot at row "
                    "%d (LU without pivoting needs diagonally dominant "
                    "blocks)", first, first_row);
  return ODB_OK;
}

/* Runs the LU kernel on a copy of each pack in turn; stops at the first
   pack with a bad real matrix (it holds the lowest one). */
#define LU_CHECK_PACKS(VL, bt, A, s, first, first_row)                  \
  for (long pk = 0; pk < (bt)->packs && *(first) < 0; ++pk) {           \
    int badrow[ODB_BATCHED_MAX_VL];                                     \
    memcpy((s), (A) + (size_t)pk * bb * VL, sizeof(double) * bb * VL);  \
    bk_lu(VL, (bt)->b, (s), badrow);                                    \
    for (int l = 0; l < VL && *(first) < 0; ++l)                        \
      if (badrow[l] >= 0 && pk * VL + l < (bt)->n) {                    \
        *(first) = pk * VL + l;                                         \
        *(first_row) = badrow[l];                                       \
      }                                                                 \
  }

/* bt from odb_batch_init; A is only read. The kernel is the one of
   odb_batched_lu on the same values, so both refuse the same pivots. */
odb_status odb_batched_lu_check(const odb_batch *bt, const double *A,
                                long *bad, int *bad_row) {
  size_t bb = (size_t)bt->b * (size_t)bt->b;
  long first = -1;
  int first_row = -1;
  double *s = malloc(sizeof(double) * bb * (size_t)bt->vl);
  if (bad)
    *bad = -1;
  if (bad_row)
    *bad_row = -1;
  if (!s)
    return ODB_FAIL(ODB_ERR_NOMEM, "batched LU check: no memory");
  BATCHED_DISPATCH(bt->vl, LU_CHECK_PACKS, bt, A, s, &first, &first_row);
  free(s);
  if (bad)
    *bad = first;
  if (bad_row)
    *bad_row = first_row;
  if (first >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "matrix %ld has a zero or tiny pivot at row "
                    "%d (LU without pivoting needs diagonally dominant "
                    "blocks)", first, first_row);
  return ODB_OK;
}

/* Applies one triangular solve kind with m right-hand columns per pack. */
#define TRSM_PACKS(VL, bt, kind, m, T, X)                               \
  for (long pk = 0; pk < (bt)->packs; ++pk) {                           \
    const double *t_ = (T) + (size_t)pk * bb * VL;                      \
    double *x_ = (X) + (size_t)pk * (size_t)(bt)->b * (m) * VL;         \
    if ((kind) == ODB_TRSM_LEFT_LOWER_UNIT)                             \
      bk_trsm_llu(VL, (bt)->b, (m), t_, x_);                            \
    else if ((kind) == ODB_TRSM_LEFT_UPPER)                             \
      bk_trsm_lu(VL, (bt)->b, (m), t_, x_);                             \
    else                                                                \
      bk_trsm_ru(VL, (bt)->b, t_, x_);                                  \
  }

/* Refuses kinds outside the enum. */
static odb_status check_kind(odb_batched_trsm_kind kind, int right_ok) {
  if (kind == ODB_TRSM_LEFT_LOWER_UNIT || kind == ODB_TRSM_LEFT_UPPER ||
      (right_ok && kind == ODB_TRSM_RIGHT_UPPER))
    return ODB_OK;
  return ODB_FAIL(ODB_ERR_ARG, "triangular solve kind %d is not supported "
                  "here", (int)kind);
}

/* T from odb_batched_lu, X B x B per matrix in bt's layout. */
odb_status odb_batched_trsm(const odb_batch *bt, odb_batched_trsm_kind kind,
                            const double *T, double *X) {
  size_t bb = (size_t)bt->b * (size_t)bt->b;
  int m = bt->b;
  ODB_TRY(check_kind(kind, 1));
  BATCHED_DISPATCH(bt->vl, TRSM_PACKS, bt, kind, m, T, X);
  return ODB_OK;
}

/* T from odb_batched_lu, x one vector per matrix (rhs layout, m = 1). */
odb_status odb_batched_trsv(const odb_batch *bt, odb_batched_trsm_kind kind,
                            const double *T, double *x) {
  size_t bb = (size_t)bt->b * (size_t)bt->b;
  int m = 1;
  ODB_TRY(check_kind(kind, 0));
  BATCHED_DISPATCH(bt->vl, TRSM_PACKS, bt, kind, m, T, x);
  return ODB_OK;
}

/* C := alpha A X + beta C with X and C of m columns, every pack. */
#define GEMM_PACKS(VL, bt, m, alpha, A, X, beta, C)                     \
  for (long pk = 0; pk < (bt)->packs; ++pk)                             \
    bk_gemm(VL, (bt)->b, (m), (alpha), (A) + (size_t)pk * bb * VL,      \
            (X) + (size_t)pk * (size_t)(bt)->b * (m) * VL, (beta),      \
            (C) + (size_t)pk * (size_t)(bt)->b * (m) * VL);

/* C aliases neither A nor B. */
odb_status odb_batched_gemm(const odb_batch *bt, double alpha,
                            const double *A, const double *B, double beta,
                            double *C) {
  size_t bb = (size_t)bt->b * (size_t)bt->b;
  int m = bt->b;
  if (C == A || C == B)
    return ODB_FAIL(ODB_ERR_ARG, "gemm: C must not alias A or B");
  BATCHED_DISPATCH(bt->vl, GEMM_PACKS, bt, m, alpha, A, B, beta, C);
  return ODB_OK;
}

/* y aliases neither A nor x. */
odb_status odb_batched_gemv(const odb_batch *bt, double alpha,
                            const double *A, const double *x, double beta,
                            double *y) {
  size_t bb = (size_t)bt->b * (size_t)bt->b;
  int m = 1;
  if (y == x || y == A)
    return ODB_FAIL(ODB_ERR_ARG, "gemv: y must not alias A or x");
  BATCHED_DISPATCH(bt->vl, GEMM_PACKS, bt, m, alpha, A, x, beta, y);
  return ODB_OK;
}

/* LU from odb_batched_lu. */
odb_status odb_batched_lu_solve(const odb_batch *bt, const double *LU,
                                double *x) {
  ODB_TRY(odb_batched_trsv(bt, ODB_TRSM_LEFT_LOWER_UNIT, LU, x));
  return odb_batched_trsv(bt, ODB_TRSM_LEFT_UPPER, LU, x);
}

/* x holds b on entry (rhs layout, m = 1); A is overwritten by its LU. */
odb_status odb_batched_solve(const odb_batch *bt, double *A, double *x,
                             long *bad) {
  ODB_TRY(odb_batched_lu(bt, A, bad));
  return odb_batched_lu_solve(bt, A, x);
}
