/* odb_sparse_file.h - sparse matrices from and to Matrix Market files, and
** the conversions a matrix from a file needs: any format back to CSR, and
** CSR to every format that applies to it (odb_sparse_file.c).
**
** core/io/odb_mtx.c parses the file into plain CSR arrays (core/io may not
** know odb_sparse, a type of the layer above it); this file takes those
** arrays over as an odb_sparse, so a matrix is never copied on the way in.
*/
#ifndef ODB_SPARSE_FILE_H
#define ODB_SPARSE_FILE_H

#include "odb_mtx.h"
#include "odb_sparse.h"

/* DIA stores every diagonal that holds an entry in full (n values each):
** refused when that is more than this many stored values per nonzero. */
#define ODB_DIA_MAX_FILL 8

typedef struct odb_sparse_conv {
  int bs;                        /* BSR block size, 1..64 (0: 1) */
  int ell_width;                 /* HYB: ELL width (<= 0: automatic) */
  size_t max_bytes;              /* > 0: refuse a larger result */
  const odb_reservoir *grid;     /* Bdia: the grid whose GH structure the
                                    matrix has (NULL: Bdia refused) */
} odb_sparse_conv;

/* Reads a square Matrix Market file (odb_mtx.h: coordinate or array) as
** CSR with ascending columns; an array file keeps its nonzero entries.
** opts may be NULL. */
odb_status odb_sparse_read_mtx(const char *path, const odb_mtx_opts *opts,
                               odb_sparse **out);
/* Writes A (any format; converted to CSR first) as "%%MatrixMarket matrix
** coordinate real general" with %.17g values. */
odb_status odb_sparse_write_mtx(const odb_sparse *A, const char *path);
/* A in any format as CSR with ascending columns. The padded formats (BSR,
** ELL, HYB, DIA, Bdia) store zeros they cannot tell from entries: their
** zero values are left out; CSR is copied as it is. */
odb_status odb_sparse_to_csr(const odb_sparse *A, odb_sparse **out);
/* csr (ascending columns) in format f, refusing with the reason a format
** that does not apply: DIA past ODB_DIA_MAX_FILL, Bdia without a grid, of
** another order than the grid's GH, or with an entry outside GH's seven
** block diagonals and well couplings (Al-Mouhamed and Khan, section 6.1).
** c may be NULL (defaults). */
odb_status odb_sparse_convert_to(const odb_sparse *csr, odb_sparse_format f,
                                 const odb_sparse_conv *c, odb_sparse **out);

#endif
