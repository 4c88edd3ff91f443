/* odb_sparse_cusparse.cu - the cuSPARSE baselines of the reservoir SpMV
** (see odb_sparse_gpu.h): the generic CSR SpMV, and for BSR the faster of
** cusparseDbsrmv and the generic BSR SpMV, on the matrix uploaded by
** odb_sparse_gpu.cu.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cusparse.h>

#include "odb_cuda_check.h"
#include "odb_gpulib_check.h"
#include "odb_sparse_gpu.cuh"

/* {====== cuSPARSE baselines */

#define CS_CHECK(call) ODB_CUSPARSE_CHECK(call)

/* Releases the cuSPARSE state of p. */
void cusparse_release(spmv_priv *p) {
  if (!p->cs_ready) return;
  if (p->vx) cusparseDestroyDnVec(p->vx);
  if (p->vy) cusparseDestroyDnVec(p->vy);
  if (p->mat) cusparseDestroySpMat(p->mat);
  if (p->descr) cusparseDestroyMatDescr(p->descr);
  if (p->h) cusparseDestroy(p->h);
  cudaFree(p->rp32); cudaFree(p->buf); cudaFree(p->xpad); cudaFree(p->ypad);
  p->vx = p->vy = NULL; p->mat = NULL; p->descr = NULL; p->h = NULL;
  p->rp32 = NULL; p->buf = NULL; p->xpad = p->ypad = NULL;
  p->buf_bytes = 0; p->npad = 0; p->bsr_generic_ok = 0;
  p->cs_ready = 0;
}

/* int64 -> int32 (values checked by the caller to fit). */
__global__ void k_narrow(long n, const int64_t *__restrict__ a, int32_t *__restrict__ b) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    b[i] = (int32_t)a[i];
}

/* Generic SpMV work buffer for p->mat, (re)allocated to fit. */
static odb_status cs_buffer(spmv_priv *p) {
  const double one = 1.0, zero = 0.0;
  size_t need = 0;
  CS_CHECK(cusparseSpMV_bufferSize(p->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->mat, p->vx,
                                   &zero, p->vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &need));
  if (need > p->buf_bytes) {
    cudaFree(p->buf);
    p->buf = NULL; p->buf_bytes = 0;
    ODB_CUDA_CHECK(cudaMalloc(&p->buf, need));
    p->buf_bytes = need;
  }
  return ODB_OK;
}

/* Sets up the cuSPARSE handle, descriptors and 32-bit row pointers of g
** (CSR: generic SpMV; BSR: bsrmv and, where the library has it, the
** generic BSR SpMV). On failure the caller releases the partial state. */
static odb_status cs_setup_once(odb_sparse_gpu *g) {
  spmv_priv *p = priv(g);
  if (g->fmt != ODB_FMT_CSR && g->fmt != ODB_FMT_BSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "cuSPARSE baseline: CSR or BSR only, not %s",
                    odb_sparse_format_name(g->fmt));
  long nrp = g->fmt == ODB_FMT_CSR ? g->n + 1 : g->nbr + 1;
  long top = g->fmt == ODB_FMT_CSR ? g->nnz : g->nblocks;
  if (top > 2147483647L)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "cuSPARSE baseline: %ld %s exceed 32-bit indices", top,
                    g->fmt == ODB_FMT_CSR ? "nonzeros" : "blocks");
  p->cs_ready = 1;  /* from here on cusparse_release undoes what was done */
  CS_CHECK(cusparseCreate(&p->h));
  ODB_CUDA_CHECK(cudaMalloc(&p->rp32, nrp * sizeof(int32_t)));
  k_narrow<<<grid_for(nrp, 256, 4), 256>>>(nrp, g->fmt == ODB_FMT_CSR ? g->rowptr : g->browptr,
                                           p->rp32);
  ODB_CUDA_CHECK(cudaGetLastError());
  long nv = g->n;
  if (g->fmt == ODB_FMT_BSR) {
    nv = g->nbr * g->bs;
    if (nv != g->n) {
      ODB_CUDA_CHECK(cudaMalloc(&p->xpad, nv * sizeof(double)));
      ODB_CUDA_CHECK(cudaMalloc(&p->ypad, nv * sizeof(double)));
      ODB_CUDA_CHECK(cudaMemset(p->xpad, 0, nv * sizeof(double)));
      p->npad = nv;
    }
  }
  CS_CHECK(cusparseCreateDnVec(&p->vx, nv, p->rp32, CUDA_R_64F));  /* pointers set per call */
  CS_CHECK(cusparseCreateDnVec(&p->vy, nv, p->rp32, CUDA_R_64F));
  if (g->fmt == ODB_FMT_CSR) {
    CS_CHECK(cusparseCreateCsr(&p->mat, g->n, g->n, g->nnz, p->rp32, g->col, g->val,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                               CUDA_R_64F));
    ODB_TRY(cs_buffer(p));
  } else {
    CS_CHECK(cusparseCreateMatDescr(&p->descr));
    CS_CHECK(cusparseSetMatType(p->descr, CUSPARSE_MATRIX_TYPE_GENERAL));
    CS_CHECK(cusparseSetMatIndexBase(p->descr, CUSPARSE_INDEX_BASE_ZERO));
    if (g->bs == 1)   /* a 1 x 1 BSR is CSR; neither BSR routine takes it */
      p->bsr_generic_ok =
          cusparseCreateCsr(&p->mat, g->nbr, g->nbr, g->nblocks, p->rp32, g->bcol, g->bval,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                            CUDA_R_64F) == CUSPARSE_STATUS_SUCCESS;
    else
      p->bsr_generic_ok =
          cusparseCreateBsr(&p->mat, g->nbr, g->nbr, g->nblocks, g->bs, g->bs, p->rp32, g->bcol,
                            g->bval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F, CUSPARSE_ORDER_ROW)
          == CUSPARSE_STATUS_SUCCESS;
    if (p->bsr_generic_ok && cs_buffer(p) != ODB_OK) {
      odb_clear_error();
      p->bsr_generic_ok = 0;
    }
  }
  return ODB_OK;
}

/* cs_setup_once unless done; a failed setup leaves nothing behind. */
odb_status cs_setup(odb_sparse_gpu *g) {
  if (priv(g)->cs_ready) return ODB_OK;
  odb_status st = cs_setup_once(g);
  if (st != ODB_OK) cusparse_release(priv(g));
  return st;
}

/* y = A x through cuSPARSE with the given BSR API (0 bsrmv, 1 generic). */
odb_status cs_run(odb_sparse_gpu *g, int bsr_api, const double *x, double *y) {
  spmv_priv *p = priv(g);
  const double one = 1.0, zero = 0.0;
  const double *xx = x;
  double *yy = y;
  if (p->npad) {
    ODB_CUDA_CHECK(cudaMemcpyAsync(p->xpad, x, g->n * sizeof(double), cudaMemcpyDeviceToDevice, 0));
    xx = p->xpad; yy = p->ypad;
  }
  if (g->fmt == ODB_FMT_CSR || bsr_api == 1) {
    CS_CHECK(cusparseDnVecSetValues(p->vx, (void *)xx));
    CS_CHECK(cusparseDnVecSetValues(p->vy, yy));
    CS_CHECK(cusparseSpMV(p->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->mat, p->vx, &zero,
                          p->vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, p->buf));
  } else if (g->bs == 1) {
    /* bsrmv wants blocks larger than 1; a 1 x 1 BSR is CSR */
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "cuSPARSE bsrmv: block size 1");
  } else {
    CS_CHECK(cusparseDbsrmv(p->h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE,
                            (int)g->nbr, (int)g->nbr, (int)g->nblocks, &one, p->descr, g->bval,
                            p->rp32, g->bcol, g->bs, xx, &zero, yy));
  }
  if (p->npad)
    ODB_CUDA_CHECK(cudaMemcpyAsync(y, p->ypad, g->n * sizeof(double), cudaMemcpyDeviceToDevice, 0));
  return ODB_OK;
}

/* See the header. */
const char *odb_sparse_gpu_cusparse_name(const odb_sparse_gpu *g) {
  const spmv_priv *p = (const spmv_priv *)g->priv;
  if (g->fmt == ODB_FMT_CSR) return "cusparseSpMV (CSR)";
  if (g->fmt != ODB_FMT_BSR) return "";
  if (g->bs == 1) return "cusparseSpMV (1x1 BSR as CSR)";
  return p->bsr_api && p->bsr_generic_ok ? "cusparseSpMV (BSR)" : "cusparseDbsrmv";
}

/* See the header. */
odb_status odb_sparse_gpu_cusparse(odb_sparse_gpu *g, const double *x, double *y) {
  ODB_TRY(vec_check(g, x, y));
  ODB_TRY(cs_setup(g));
  spmv_priv *p = priv(g);
  int api = g->fmt == ODB_FMT_BSR ? (g->bs == 1 || (p->bsr_api && p->bsr_generic_ok)) : 0;
  if (api && !p->bsr_generic_ok)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "cuSPARSE: no BSR SpMV for block size %d", g->bs);
  return cs_run(g, api, x, y);
}

/* }====== */
