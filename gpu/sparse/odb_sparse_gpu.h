/* odb_sparse_gpu.h - reservoir matrices (odb_sparse.h) on the current CUDA
** device: upload of every format, our SpMV kernels with tuned launch
** options, the cuSPARSE CSR and BSR baselines, and their timing.
**
** C interface, includable from C and CUDA. Vectors are device memory of
** length n; launches go to the legacy default stream and do not wait.
** Only builds with CUDA have these functions; callers outside gpu/ reach
** them through the "cuda" table of odb_sparse_impl.h (odb_sparse_cuda.c),
** where the launch options and odb_spmv_impl are declared.
*/
#ifndef ODB_SPARSE_GPU_H
#define ODB_SPARSE_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_sparse.h"
#include "odb_sparse_impl.h"

/* Device copy of an odb_sparse in its own format. All pointers are device
   memory; arrays a format does not use are NULL. */
typedef struct odb_sparse_gpu {
  odb_sparse_format fmt;
  long n, nnz;
  /* CSR */  int64_t *rowptr; int32_t *col; double *val;
  /* BSR */  int bs; long nbr, nblocks; int64_t *browptr; int32_t *bcol; double *bval;
  /* ELL (and HYB's ELL part) */ int width; int32_t *ecol; double *eval;
  /* HYB COO part */ long ncoo; int32_t *crow, *ccol; double *cval;
  /* DIA */  long ndiag; int64_t *doff; double *dval;
  /* Bdia (same layout as odb_bdia on the host) */
  int J, H, I, k, nw, pu, pv; odb_gh_pattern pattern; long M;
  double *bdval; double *Wa, *WTa; int *wa, *wb, *wc, *wd; double *D;
  size_t bytes;   /* device bytes held by the arrays above */
  void *priv;     /* the SpMV engineer's private data (cuSPARSE descriptors, tuned launch options) */
} odb_sparse_gpu;

/* Copies A (any format) to the current device. ODB_ERR_NOMEM naming the size when it does not fit. */
odb_status odb_sparse_gpu_upload(const odb_sparse *A, odb_sparse_gpu **out);
/* Bdia's values as the kernels read them: the 7 k k streams of M cells
   back to back in new device memory *dev (cudaFree it), *bytes long; the
   host keeps them odb_bdia_ldv(M) doubles apart. */
odb_status odb_sparse_gpu_bdia_values(const odb_bdia *b, double **dev, size_t *bytes);
void odb_sparse_gpu_free(odb_sparse_gpu *g);
/* y = A x with our best kernel for g's format (device vectors of length n, distinct; legacy default stream; does not wait). */
odb_status odb_sparse_gpu_spmv(odb_sparse_gpu *g, const double *x, double *y);
/* The same on stream (a cudaStream_t; NULL: the legacy default stream). */
odb_status odb_sparse_gpu_spmv_on(odb_sparse_gpu *g, const double *x, double *y, void *stream);

/* y = A x on a slab of whole cells of a GH grid, the layout of
** odb_bdia_spmv_slab (core/sparse/odb_sparse.h) on the device: g is the
** slab's Bdia (J, H, I the whole grid's, M its cells, the grid's cells
** first .. first + M - 1, wells counted from first); x its own values
** (cells, then wells); xg the ghosts: xg[-nlo] .. xg[-1] the nlo
** columns just below the slab, xg[0] .. xg[nhi - 1] those just above
** (NULL with nlo = nhi = 0: the whole grid); columns beyond them count
** as 0, as no cell's block reads them. Cells
** [m0, m1) of the slab, and then its wells when wells is 1: they read
** only own values, and add into y of their cells, so they come after
** every cell's launch. g's options, one cell a thread where the pair form would
** meet an odd end. On stream (a cudaStream_t; NULL: the legacy default
** stream); does not wait. */
odb_status odb_sparse_gpu_bdia_slab(odb_sparse_gpu *g, long first, const double *x, const double *xg,
                                    long nlo, long nhi, double *y, long m0, long m1, int wells,
                                    void *stream);

/* ---- beyond the shared interface: options, tuning, baselines, timing ---- */

/* The options odb_sparse_gpu_spmv uses now (tuned or default). */
odb_sparse_gpu_opts odb_sparse_gpu_get_opts(const odb_sparse_gpu *g);
/* Checks o for g's format (ODB_ERR_ARG naming the field) and makes it the
** options of odb_sparse_gpu_spmv. */
odb_status odb_sparse_gpu_set_opts(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o);
/* y = A x with the options o (NULL: g's). Does not wait. */
odb_status odb_sparse_gpu_spmv_opts(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o,
                                    const double *x, double *y);
/* Times every candidate of g's small option space (as odb_sparse_gpu_bench)
** and keeps the fastest; the choice is remembered per matrix shape
** (format, n, nnz, k, pattern, wells) for later uploads in this process.
** *seconds (may be NULL) gets the best median. */
odb_status odb_sparse_gpu_tune(odb_sparse_gpu *g, int reps, double *seconds);
/* 1 when g's options come from tuning (odb_sparse_gpu_tune on g, or on an
** earlier upload of the same shape in this process), else 0. */
int odb_sparse_gpu_is_tuned(const odb_sparse_gpu *g);
/* Writes "block=256 grain=1 shared_x=0 pair=0 stream=0" into buf (len
** bytes); returns buf. */
const char *odb_sparse_gpu_opts_str(const odb_sparse_gpu_opts *o, char *buf, size_t len);
/* The candidates odb_sparse_gpu_tune tries for g's format: writes up to max
** of them to out and returns how many there are. */
int odb_sparse_gpu_space(const odb_sparse_gpu *g, odb_sparse_gpu_opts *out, int max);

/* Which cuSPARSE routine odb_sparse_gpu_cusparse uses for g ("" for
** formats without a baseline); for BSR the faster one once benchmarked. */
const char *odb_sparse_gpu_cusparse_name(const odb_sparse_gpu *g);
/* y = A x through cuSPARSE; g must be CSR or BSR (ODB_ERR_UNSUPPORTED). */
odb_status odb_sparse_gpu_cusparse(odb_sparse_gpu *g, const double *x, double *y);
/* Seconds per SpMV of impl on random x: reps back-to-back runs (after 2
** warm-up runs) in up to 5 batches timed with device events between the
** batches; the median of the batch means. */
odb_status odb_sparse_gpu_bench(odb_sparse_gpu *g, odb_spmv_impl impl, int reps,
                                double *seconds);
/* The same summarized (odb_measure_summarize) over the batch means: the
** median, quartiles and spread of up to 5 samples, reps the batches. */
odb_status odb_sparse_gpu_bench_m(odb_sparse_gpu *g, odb_spmv_impl impl, int reps,
                                  odb_measurement *m);
/* Host vectors: uploads x (length n), runs impl, downloads y (length n). */
odb_status odb_sparse_gpu_spmv_host(odb_sparse_gpu *g, odb_spmv_impl impl,
                                    const double *x, double *y, long n);
/* Device-to-device copy bandwidth (bytes read + written per second), the
** figure of odb_cuda_copy_bandwidth; the floor of the SpMV figures. */
odb_status odb_sparse_gpu_copy_bandwidth(double *bytes_per_s);
/* Free and total device memory in bytes. */
odb_status odb_sparse_gpu_mem(size_t *free_b, size_t *total_b);

#ifdef __cplusplus
}
#endif

#endif
