/* odb_dense_floor.c - the fewest bytes of the dense kernels
** (odb_dense_floor.h). */
#include "odb_dense_floor.h"

/* See the header. */
void odb_batched_min_bytes(const odb_batch *bt, odb_batched_op op, int pivot,
                           double *r, double *w, double *touched) {
  double n = 8.0 * (double)bt->n, b = bt->b, bb = b * b, rd, wr, tc;
  switch (op) {
  case ODB_BATCHED_OP_LU: rd = bb; wr = bb - b; tc = bb; break;
  case ODB_BATCHED_OP_SOLVE: rd = bb + b; wr = b; tc = bb + b; break;
  case ODB_BATCHED_OP_TRSM:
    rd = b * (b - 1) / 2 + bb; wr = bb - b; tc = rd; break;
  case ODB_BATCHED_OP_GEMM: rd = 2 * bb; wr = bb; tc = 3 * bb; break;
  default: rd = bb + b; wr = b; tc = bb + 2 * b; break;   /* gemv */
  }
  if (pivot && op == ODB_BATCHED_OP_LU) { wr += b / 2; tc += b / 2; }
  *r = n * rd;   /* 4 b bytes of pivots: b / 2 doubles */
  *w = n * wr;
  if (touched) *touched = n * tc;
}

/* See the header. */
void odb_blocktridiag_min_bytes(const odb_blocktridiag *t, int solve,
                                double *r, double *w, double *touched) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  double K = odb_blocktridiag_length(t), b = bt->b;
  double n = 8.0 * (double)bt->n, blocks = (3 * K - 2) * b * b;
  if (solve) {
    *r = n * (blocks + K * b);
    *w = n * K * b;
    if (touched) *touched = n * (blocks + K * b);   /* x in place */
  } else {
    *r = n * blocks;
    *w = n * (blocks - K * b);
    if (touched) *touched = n * blocks;
  }
}

/* See the header. */
void odb_tsm_min_bytes(odb_tsm_op op, odb_tsm_dtype t, long M, long N, long K,
                       double *r, double *w) {
  double e = t == ODB_TSM_Z ? 16.0 : 8.0, m = (double)M, nn = (double)N,
         k = (double)K;
  if (op == ODB_TSM_TSMTTSM) { *r = e * (k * m + k * nn); *w = e * m * nn; }
  else { *r = e * (k * m + m * nn); *w = e * k * nn; }
}
