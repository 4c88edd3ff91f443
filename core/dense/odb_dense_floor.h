/* odb_dense_floor.h - the fewest bytes the dense kernels must move: the
** bytes of their floors (odb_floor.h). Compact batched matrices and block
** tridiagonal lines (odb_batched.h); tall & skinny products after D.
** Ernst, G. Hager, J. Thies and G. Wellein, "Performance engineering for
** real and complex tall & skinny matrix multiplication kernels on GPUs"
** (IJHPCA, 2020).
*/
#ifndef ODB_DENSE_FLOOR_H
#define ODB_DENSE_FLOOR_H

#include "odb_batched.h"
#include "odb_batched_impl.h"
#include "odb_tsm.h"

/*
** One op over the bt->n matrices of order b (padding lanes of the compact
** layout do not count: a kernel need not touch them), per matrix in
** doubles (8 bytes):
**   lu     read b^2, write b^2 - b: in place, and the first row of U is
**          the first row of A, which no LU must write again
**   solve  x := U^{-1} L^{-1} x: read the factors b^2 and x b, write x b
**   trsm   X := L^{-1} X, L unit lower: read L's b (b - 1) / 2 and X b^2,
**          write X b^2 - b (its first row stays)
**   gemm   C := A X: read 2 b^2, write b^2
**   gemv   y := A x: read b^2 + b, write b
** pivot: the row swaps of partial pivoting are recorded too (lu, the
** vendor's getrf): 4 b bytes of int pivots written more per matrix.
** *touched: the distinct bytes (each array once), for the cache test.
*/
void odb_batched_min_bytes(const odb_batch *bt, odb_batched_op op, int pivot,
                           double *r, double *w, double *touched);
/*
** Block tridiagonal lines of K block rows of order b, 3K - 2 blocks each
** (odb_blocktridiag_factor): factor in place reads every block once and
** writes all but the first row of D_0 and of each C_r (LU of D_0 and
** C_r := L_r^{-1} C_r keep their first rows; A_{r+1} U_r^{-1} and the
** updated D_{r+1} change everywhere): read (3K - 2) b^2, write
** (3K - 2) b^2 - K b. Solve reads the factors and the right-hand side
** once and writes the solution once: read (3K - 2) b^2 + K b, write K b.
** Per line, in doubles. *touched as above.
*/
void odb_blocktridiag_min_bytes(const odb_blocktridiag *t, int solve,
                                double *r, double *w, double *touched);
/*
** One tall & skinny product, each matrix once (e: 8 bytes real, 16
** complex): tsmttsm C = A^T B reads A (K x M) and B (K x N), writes C
** (M x N); tsmm B = A C reads A and C (M x N), writes B (K x N).
*/
void odb_tsm_min_bytes(odb_tsm_op op, odb_tsm_dtype t, long M, long N, long K,
                       double *r, double *w);

#endif
