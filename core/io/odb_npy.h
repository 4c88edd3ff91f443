/* odb_npy.h - NumPy .npy files (the format NumPy's numpy.lib.format
** documents: the magic "\x93NUMPY", a version byte pair, a little-endian
** header length (2 bytes in 1.0, 4 in 2.0 and 3.0), a Python dict literal
** {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
** spaces to a multiple of 64 bytes and ended by a newline, then the data).
**
** Read and written: versions 1.0, 2.0 and 3.0 (3.0 differs only in allowing
** UTF-8 in the header, which the dtypes read here never need), dtypes
** '<f8' (float64) and '<c16' (complex128, real and imaginary parts
** interleaved), C or Fortran order, 1-D and 2-D. The header parser takes
** exactly the dict literal NumPy writes: the three keys once each, in any
** order, with any spacing and an optional trailing comma. Any IEEE value
** is data here (NaN included): a .npy file is a faithful binary container,
** unlike a Matrix Market matrix.
**
** Errors name the file (escaped, odb_shown), the byte offset and what was
** expected. A shape whose byte count overflows, differs from the bytes the
** file holds, or exceeds the machine's memory is refused before the data
** is read. Assumes a little-endian host (checked at compile time).
*/
#ifndef ODB_NPY_H
#define ODB_NPY_H

#include <stddef.h>
#include "odb_status.h"

typedef enum odb_npy_dtype { ODB_NPY_F8 = 0, ODB_NPY_C16 } odb_npy_dtype;

typedef struct odb_npy {
  odb_npy_dtype dtype;
  int ndim;                  /* 1 or 2 */
  long shape[2];             /* shape[1] is 1 for 1-D */
  int fortran;               /* 1: data in Fortran (column-major) order */
  size_t count;              /* elements: shape[0] * shape[1] */
  double *data;              /* count doubles ('<f8') or 2 * count ('<c16'),
                                in the order fortran says */
  int version;               /* major version read (1, 2, 3) */
} odb_npy;

/* "<f8" or "<c16". */
const char *odb_npy_dtype_name(odb_npy_dtype d);
/* Reads path into out (zeroed first; free with odb_npy_free). */
odb_status odb_npy_read(const char *path, odb_npy *out);
/* Writes a (ndim, shape, dtype, fortran, data as above) as version 1.0
** (the header of a 1-D or 2-D array is far below its 65535-byte limit),
** the preamble and header padded with spaces to a multiple of 64 bytes as
** NumPy does. Whole or nothing (odb_wfile.h). */
odb_status odb_npy_write(const char *path, const odb_npy *a);
void odb_npy_free(odb_npy *a);

#endif
