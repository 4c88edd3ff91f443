/* odb_sparse_gpu.cuh - what odb_sparse_gpu.cu (formats, our SpMV kernels,
** tuning, timing) and odb_sparse_cusparse.cu (the cuSPARSE baselines)
** share: the private state of an uploaded matrix and the functions one
** calls in the other. Not a public header (see odb_sparse_gpu.h).
*/
#ifndef ODB_SPARSE_GPU_CUH
#define ODB_SPARSE_GPU_CUH

#include <cuda_runtime.h>
#include <cusparse.h>

#include "odb_sparse_gpu.h"

/* {====== private state */

typedef struct spmv_priv {
  odb_sparse_gpu_opts opts;
  int tuned;
  /* cuSPARSE baseline (set up on first use) */
  int cs_ready;
  cusparseHandle_t h;
  cusparseSpMatDescr_t mat;     /* generic CSR or BSR */
  cusparseMatDescr_t descr;     /* bsrmv */
  cusparseDnVecDescr_t vx, vy;
  int32_t *rp32;                /* 32-bit (block) row pointers */
  void *buf; size_t buf_bytes;
  double *xpad, *ypad;          /* BSR whose order is not a multiple of bs */
  long npad;
  int bsr_api;                  /* BSR: 0 bsrmv, 1 generic (faster one) */
  int bsr_generic_ok;
  /* bench scratch */
  double *bx, *by;
} spmv_priv;
static inline spmv_priv *priv(odb_sparse_gpu *g) { return (spmv_priv *)g->priv; }

/* }====== */

/* Blocks of a grid-stride launch over `items` work items, block threads,
** grain items per thread. */
static inline unsigned grid_for(long items, int block, int grain) {
  long per = (long)block * grain;
  long b = (items + per - 1) / per;
  if (b < 1) b = 1;
  if (b > 2147483647L) b = 2147483647L;
  return (unsigned)b;
}

/* Pointer checks shared by the SpMV entries (odb_sparse_gpu.cu). */
odb_status vec_check(const odb_sparse_gpu *g, const double *x, const double *y);

/* Releases the cuSPARSE state of p (odb_sparse_cusparse.cu). */
void cusparse_release(spmv_priv *p);
/* cs_setup_once unless done; a failed setup leaves nothing behind. */
odb_status cs_setup(odb_sparse_gpu *g);
/* y = A x through cuSPARSE with the given BSR API (0 bsrmv, 1 generic). */
odb_status cs_run(odb_sparse_gpu *g, int bsr_api, const double *x, double *y);

#endif
