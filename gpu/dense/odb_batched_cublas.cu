/* odb_batched_cublas.cu - the cuBLAS baseline of the batched LU and
   solve: cublasDgetrfBatched / cublasDgetrsBatched over pointer arrays of
   the standard layout (see odb_batched_gpu.h). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched_gpu.cuh"
#include "odb_gpulib_check.h"

static cublasHandle_t blas;          /* cuBLAS, created on first use */

/* out[p] = base + p*stride. */
__global__ void k_ptrs(double **out, double *base, long n, size_t stride) {
  FOR_ELEMENTS(e, (size_t)n) out[e] = base + e * stride;
}

/* {------ cuBLAS */

struct odb_bgpu_blas {
  long n;
  int b, pivot;
  double **ap, **xp;   /* device pointer arrays */
  int *piv, *info;     /* device: n*b pivots, n infos */
};

/* The handle, created on first use and kept. */
static odb_status blas_handle(void) {
  if (blas) return ODB_OK;
  cublasStatus_t s = cublasCreate(&blas);
  if (s != CUBLAS_STATUS_SUCCESS) blas = NULL;
  return ODB_CUBLAS_STATUS(s, "cublasCreate");
}

extern "C" void odb_bgpu_blas_free(odb_bgpu_blas *h) {
  if (!h) return;
  odb_bgpu_free(h->ap);
  odb_bgpu_free(h->xp);
  odb_bgpu_free(h->piv);
  odb_bgpu_free(h->info);
  free(h);
}

extern "C" odb_status odb_bgpu_blas_new(long n, int b, double *dA, double *dx,
                                        int pivot, odb_bgpu_blas **out) {
  odb_bgpu_blas *h = NULL;
  odb_status st = ODB_OK;
  cudaError_t err = cudaSuccess;
  *out = NULL;
  if (n < 1 || n > 0x7fffffffL || b < ODB_BATCHED_MIN_B ||
      b > ODB_BATCHED_MAX_B)
    return ODB_FAIL(ODB_ERR_ARG, "cuBLAS batch: n = %ld (1..2^31-1) or B = "
                    "%d (%d..%d) out of range", n, b, ODB_BATCHED_MIN_B,
                    ODB_BATCHED_MAX_B);
  ODB_TRY(blas_handle());
  h = (odb_bgpu_blas *)calloc(1, sizeof *h);
  if (!h) return ODB_FAIL(ODB_ERR_NOMEM, "cuBLAS batch: no memory");
  h->n = n;
  h->b = b;
  h->pivot = pivot != 0;
  err = cudaMalloc((void **)&h->ap, sizeof(double *) * n);
  if (err == cudaSuccess)
    err = cudaMalloc((void **)&h->xp, sizeof(double *) * n);
  if (err == cudaSuccess)
    err = cudaMalloc((void **)&h->piv, sizeof(int) * n * b);
  if (err == cudaSuccess) err = cudaMalloc((void **)&h->info, sizeof(int) * n);
  if (err != cudaSuccess) {
    st = odb_cuda_fail(err, "cudaMalloc (cuBLAS batch arrays)", __FILE__,
                       __LINE__);
    goto fail;
  }
  k_ptrs<<<elem_grid(n), 256>>>(h->ap, dA, n, (size_t)b * b);
  k_ptrs<<<elem_grid(n), 256>>>(h->xp, dx, n, (size_t)b);
  st = launched("k_ptrs");
  if (st != ODB_OK) goto fail;
  *out = h;
  return ODB_OK;
fail:
  odb_bgpu_blas_free(h);
  return st;
}

extern "C" odb_status odb_bgpu_blas_lu(odb_bgpu_blas *h, long *bad) {
  cublasStatus_t s = cublasDgetrfBatched(blas, h->b, h->ap, h->b,
                                         h->pivot ? h->piv : NULL, h->info,
                                         (int)h->n);
  ODB_TRY(ODB_CUBLAS_STATUS(s, "cublasDgetrfBatched"));
  if (!bad) return ODB_OK;
  *bad = -1;
  int *info = (int *)malloc(sizeof(int) * h->n);
  if (!info) return ODB_FAIL(ODB_ERR_NOMEM, "cuBLAS batch: no memory");
  cudaError_t err = cudaMemcpy(info, h->info, sizeof(int) * h->n,
                               cudaMemcpyDeviceToHost);
  for (long p = 0; err == cudaSuccess && p < h->n; ++p)
    if (info[p] != 0) {
      *bad = p;
      break;
    }
  free(info);
  if (err != cudaSuccess)
    return odb_cuda_fail(err, "cudaMemcpy (cuBLAS info)", __FILE__, __LINE__);
  if (*bad >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "cuBLAS: matrix %ld is singular (info != 0)",
                    *bad);
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_blas_solve(odb_bgpu_blas *h) {
  int info = 0;
  cublasStatus_t s = cublasDgetrsBatched(
    blas, CUBLAS_OP_N, h->b, 1, (const double *const *)h->ap, h->b,
    h->pivot ? h->piv : NULL, h->xp, h->b, &info, (int)h->n);
  ODB_TRY(ODB_CUBLAS_STATUS(s, "cublasDgetrsBatched"));
  if (info != 0)
    return ODB_FAIL(ODB_ERR_ARG, "cublasDgetrsBatched: argument %d is "
                    "invalid", -info);
  return ODB_OK;
}

/* }------ */
