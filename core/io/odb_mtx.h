/* odb_mtx.h - Matrix Market files (the NIST format: R. F. Boisvert,
** R. Pozo and K. Remington, "The Matrix Market Exchange Formats: Initial
** Design", NISTIR 5935, 1996), read into plain arrays and written from
** them. core/io builds no odb_sparse (that is core/sparse's type, a layer
** above); core/sparse/odb_sparse_file.c turns the arrays into one.
**
** Read: "%%MatrixMarket matrix coordinate real|integer|pattern
** general|symmetric|skew-symmetric" into CSR (pattern entries are 1.0),
** and "%%MatrixMarket matrix array real|integer general|symmetric|
** skew-symmetric" into a dense column-major array. Duplicate coordinate
** entries are summed (as SciPy's coo -> csr does), a symmetric file's
** off-diagonal entries are mirrored (skew-symmetric: mirrored negated),
** and every CSR row has ascending columns. complex and hermitian files are
** refused: odebench's matrices are real. Values must be finite: a NaN or
** an infinity in a matrix can only come from a broken export, and would
** turn every SpMV and solve into NaN without saying why.
**
** Errors name the file (escaped, odb_shown), the line and what was
** expected. A size line whose entries could not fit the rest of the file,
** whose sizes overflow, or whose arrays exceed the machine's memory
** (odb_topo_check_memory) is refused before anything is allocated for it.
*/
#ifndef ODB_MTX_H
#define ODB_MTX_H

#include <stddef.h>
#include <stdint.h>
#include "odb_status.h"

/* Called between rounds of the parse with the bytes read so far and the
** file's size; a nonzero return stops the read (ODB_INTERRUPTED). */
typedef int (*odb_io_progress)(void *ud, double done, double total);

typedef struct odb_mtx_opts {
  int threads;               /* parse threads; 0: the online cores (<= 16) */
  odb_io_progress progress;  /* may be NULL */
  void *ud;
  double max_bytes;          /* > 0: refuse (ODB_ERR_NOMEM) a file whose
                                arrays would need more, before allocating */
} odb_mtx_opts;

typedef struct odb_mtx {
  int array;                 /* 1: dense ("array"), 0: "coordinate" */
  char field[12];            /* "real", "integer", "pattern" */
  char symmetry[16];         /* "general", "symmetric", "skew-symmetric" */
  long nrows, ncols;         /* each <= INT32_MAX */
  long entries;              /* entries the file holds */
  long nnz;                  /* CSR entries after mirroring and summing */
  int64_t *rowptr;           /* nrows + 1 (coordinate) */
  int32_t *col;              /* nnz, ascending within a row */
  double *val;               /* nnz */
  double *dense;             /* nrows * ncols, column-major (array) */
} odb_mtx;

/* Reads path into out (zeroed first; free with odb_mtx_free, also after
** a failure). opts may be NULL. Assumes the C locale's decimal point. */
odb_status odb_mtx_read(const char *path, const odb_mtx_opts *opts, odb_mtx *out);
void odb_mtx_free(odb_mtx *m);

/* Writes a CSR matrix as "%%MatrixMarket matrix coordinate real general"
** with 17 significant digits (%.17g), so that reading it back gives the
** same doubles; 1-based indices, entries in row order. Non-finite values
** are refused before the file is made. Whole or nothing (odb_wfile.h). */
odb_status odb_mtx_write_csr(const char *path, long nrows, long ncols,
                             const int64_t *rowptr, const int32_t *col,
                             const double *val);
/* Writes a dense column-major nrows x ncols array as "%%MatrixMarket
** matrix array real general" (%.17g, one value a line). */
odb_status odb_mtx_write_array(const char *path, long nrows, long ncols,
                               const double *colmajor);

#endif
