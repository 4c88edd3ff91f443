/* odb_sparse_floor.h - the fewest bytes an SpMV of each format and an
** iteration of each Krylov method must move: the bytes of their floors
** (odb_floor.h). Formats and the reservoir matrix GH follow M. A.
** Al-Mouhamed and A. H. Khan, "SpMV and BiCG-Stab optimization for a class
** of hepta-diagonal-sparse matrices on GPU" (J. Supercomputing, 2017).
*/
#ifndef ODB_SPARSE_FLOOR_H
#define ODB_SPARSE_FLOOR_H

#include "odb_sparse.h"

/*
** Bytes of A's arrays that y = A x must read at least, in A's format
** (int64 row pointers and offsets, int32 columns, doubles):
**   CSR  8 nnz + 4 nnz + 8 (n + 1)
**   BSR  8 bs^2 nblocks + 4 nblocks + 8 (nbr + 1)   (zeros of a block
**        are stored, and read with it)
**   ELL  12 n width (the padding is stored and read)
**   HYB  12 n width + 16 ncoo
**   DIA  8 sum_d (n - |off_d|) + 8 ndiag   (the parts of a diagonal
**        outside the matrix are stored but need no read)
**   Bdia 8 (7 k^2 M - the entries of columns outside 0..Mk-1)
**        + 16 sum_w c_w (W and W^T) + 12 nw + 4 pu pv + 8 nw (D)
*/
double odb_sparse_matrix_min_bytes(const odb_sparse *A);
/*
** One y = A x: *r = the matrix (above) + 8 n (x, each entry once: a
** lower bound, a format reads x where its columns say), *w = 8 n (y once).
*/
void odb_sparse_min_bytes(const odb_sparse *A, double *r, double *w);
/*
** One iteration of method on A, at least: the matrix twice (A twice for
** BiCGStab, A and A^T for QMR) and, in vectors of 8 n bytes, what the
** recurrences must carry between the phases that their global dot
** products separate (a vector made in one phase and used in a later one
** is written once and read once in each such phase; one used within its
** phase, like an SpMV's input made on the fly, is not stored):
**   BiCGStab 11 read, 6 written;  QMR 13 read, 9 written.
** The phases are in odb_sparse_floor.c.
*/
void odb_krylov_min_bytes(const odb_sparse *A, odb_krylov_method m,
                          double *r, double *w);
/* The distinct bytes a solve touches (for the cache test): the matrix and
   its vectors, BiCGStab 7 (x, r, r^, p, v, s, t), QMR 11 (x, r, v~, w~,
   v, w, p, q, p~, d, s). */
double odb_krylov_touched_bytes(const odb_sparse *A, odb_krylov_method m);
/* The vectors of n doubles above (read, written) per iteration of m. */
void odb_krylov_min_vectors(odb_krylov_method m, int *vr, int *vw);

#endif
