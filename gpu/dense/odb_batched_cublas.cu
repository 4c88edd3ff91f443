/* odb_batched_cublas.cu - the cuBLAS baselines (see odb_batched_gpu.h):
   the batched LU and solve, cublasDgetrfBatched / cublasDgetrsBatched over
   pointer arrays of the standard layout, and the block-tridiagonal line
   factor and solve written as cuBLAS batched calls per block row
   (odb_bgpu_btd_blas_*). */
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

/* {------ the cuBLAS peer of the lines (see odb_batched_gpu.h) */

struct odb_bgpu_btd_blas {
  const odb_blocktridiag *t;
  long n;              /* lines */
  int b, K, vl;
  double *col;         /* 3*K*n blocks: ((r*3 + w)*n + line)*B*B + j*B + i */
  double *xc;          /* K*n vectors: (r*n + line)*B + i */
  double **mp, **xp;   /* device pointer arrays: mp[q] = col + q*B*B,
                          xp[q] = xc + q*B */
  double *fro;         /* n squared Frobenius norms (the pivot check) */
  int *info;           /* n infos of getrf (not read: fro's check rules) */
};

/* Offset of element (i, j) of block (line, r, w) in the object's layout
   (odb_blocktridiag_blocks). */
static __device__ __forceinline__ size_t btd_at(long line, int r, int w,
                                                int i, int j, int K, int B,
                                                int VL) {
  size_t pk = (size_t)(line / VL), bb = (size_t)B * B;
  return ((pk * K + r) * 3 + w) * bb * VL + ((size_t)i * B + j) * VL +
         (size_t)(line % VL);
}

/* Blocks between the object's layout (dm) and the column-major copy; back:
   copy to dm. One thread per element of the copy. */
__global__ void k_btd_col(double *dm, double *col, long n, int K, int B,
                          int VL, int back) {
  size_t bb = (size_t)B * B, total = (size_t)3 * K * n * bb;
  FOR_ELEMENTS(e, total) {
    size_t q = e / bb, in = e % bb;
    int j = (int)(in / B), i = (int)(in % B);
    long line = (long)(q % (size_t)n);
    size_t rw = q / (size_t)n;
    size_t at = btd_at(line, (int)(rw / 3), (int)(rw % 3), i, j, K, B, VL);
    if (back) dm[at] = col[e];
    else col[e] = dm[at];
  }
}

/* Right-hand sides between the internal layout ((line/VL*K + r)*B + i)*VL
   + line%VL and the copy (r*n + line)*B + i. */
__global__ void k_btd_rhs_col(double *xp, double *xc, long n, int K, int B,
                              int VL, int back) {
  size_t total = (size_t)K * n * B;
  FOR_ELEMENTS(e, total) {
    int i = (int)(e % B);
    size_t q = e / B;
    long line = (long)(q % (size_t)n);
    size_t r = q / (size_t)n;
    size_t at = (((size_t)(line / VL) * K + r) * B + i) * VL +
                (size_t)(line % VL);
    if (back) xp[at] = xc[e];
    else xc[e] = xp[at];
  }
}

/* fro[line] = ||D||_F^2 of each line's block at d (stride B*B). */
__global__ void k_btd_fro(const double *d, long n, int B, double *fro) {
  size_t bb = (size_t)B * B;
  FOR_ELEMENTS(line, (size_t)n) {
    const double *m = d + line * bb;
    double s = 0;
    for (size_t e = 0; e < bb; ++e) s += m[e] * m[e];
    fro[line] = s;
  }
}

/* The CPU's pivot rule on the factored blocks at d: a line whose u_kk has
   !(u_kk^2 > tiny^2 ||D||_F^2) puts line*K + r into flag (the lowest
   wins: the lowest line, then its first row, the rows going in order). */
__global__ void k_btd_pivots(const double *d, long n, int B, int K, int r,
                             const double *fro, unsigned long long *flag) {
  size_t bb = (size_t)B * B;
  FOR_ELEMENTS(line, (size_t)n) {
    const double *m = d + line * bb;
    for (int k = 0; k < B; ++k) {
      double u = m[(size_t)k * B + k];
      if (!(u * u > TINY2 * fro[line])) {
        atomicMin(flag, (unsigned long long)line * K + r);
        break;
      }
    }
  }
}

extern "C" void odb_bgpu_btd_blas_free(odb_bgpu_btd_blas *h) {
  if (!h) return;
  odb_bgpu_free(h->col);
  odb_bgpu_free(h->xc);
  odb_bgpu_free(h->mp);
  odb_bgpu_free(h->xp);
  odb_bgpu_free(h->fro);
  odb_bgpu_free(h->info);
  free(h);
}

extern "C" odb_status odb_bgpu_btd_blas_new(const odb_blocktridiag *t,
                                            odb_bgpu_btd_blas **out) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  odb_bgpu_btd_blas *h = NULL;
  odb_status st = ODB_OK;
  cudaError_t err = cudaSuccess;
  int K = odb_blocktridiag_length(t);
  /* the copy has no more elements than the object's blocks, which fit */
  size_t bb = (size_t)bt->b * bt->b, blocks = (size_t)3 * K * bt->n;
  *out = NULL;
  if (bt->n > 0x7fffffffL)
    return ODB_FAIL(ODB_ERR_ARG, "variant cublas: %ld lines, more than "
                    "cuBLAS's batch count allows (2^31 - 1)", bt->n);
  ODB_TRY(blas_handle());
  h = (odb_bgpu_btd_blas *)calloc(1, sizeof *h);
  if (!h) return ODB_FAIL(ODB_ERR_NOMEM, "cuBLAS lines: no memory");
  h->t = t;
  h->n = bt->n;
  h->b = bt->b;
  h->K = K;
  h->vl = bt->vl;
  st = odb_bgpu_alloc(blocks * bb, &h->col);
  if (st == ODB_OK) st = odb_bgpu_alloc((size_t)K * bt->n * bt->b, &h->xc);
  if (st == ODB_OK) st = odb_bgpu_alloc((size_t)bt->n, &h->fro);
  if (st != ODB_OK) goto fail;
  err = cudaMalloc((void **)&h->mp, sizeof(double *) * blocks);
  if (err == cudaSuccess)
    err = cudaMalloc((void **)&h->xp, sizeof(double *) * (size_t)K * bt->n);
  if (err == cudaSuccess)
    err = cudaMalloc((void **)&h->info, sizeof(int) * (size_t)bt->n);
  if (err != cudaSuccess) {
    st = odb_cuda_fail(err, "cudaMalloc (cuBLAS line arrays)", __FILE__,
                       __LINE__);
    goto fail;
  }
  k_ptrs<<<elem_grid(blocks), 256>>>(h->mp, h->col, (long)blocks, bb);
  k_ptrs<<<elem_grid((size_t)K * bt->n), 256>>>(h->xp, h->xc,
                                                 (long)K * bt->n,
                                                 (size_t)bt->b);
  st = launched("k_ptrs (cuBLAS lines)");
  if (st != ODB_OK) goto fail;
  *out = h;
  return ODB_OK;
fail:
  odb_bgpu_btd_blas_free(h);
  return st;
}

extern "C" odb_status odb_bgpu_btd_blas_load(odb_bgpu_btd_blas *h,
                                             const double *dm) {
  size_t total = (size_t)3 * h->K * h->n * h->b * h->b;
  k_btd_col<<<elem_grid(total), 256>>>(const_cast<double *>(dm), h->col,
                                       h->n, h->K, h->b, h->vl, 0);
  return launched("k_btd_col");
}

extern "C" odb_status odb_bgpu_btd_blas_store(const odb_bgpu_btd_blas *h,
                                              double *dm) {
  size_t total = (size_t)3 * h->K * h->n * h->b * h->b;
  k_btd_col<<<elem_grid(total), 256>>>(dm, h->col, h->n, h->K, h->b, h->vl,
                                       1);
  return launched("k_btd_col");
}

extern "C" odb_status odb_bgpu_btd_blas_rhs_load(odb_bgpu_btd_blas *h,
                                                 const double *dxp) {
  size_t total = (size_t)h->K * h->n * h->b;
  k_btd_rhs_col<<<elem_grid(total), 256>>>(const_cast<double *>(dxp), h->xc,
                                           h->n, h->K, h->b, h->vl, 0);
  return launched("k_btd_rhs_col");
}

extern "C" odb_status odb_bgpu_btd_blas_rhs_store(const odb_bgpu_btd_blas *h,
                                                  double *dxp) {
  size_t total = (size_t)h->K * h->n * h->b;
  k_btd_rhs_col<<<elem_grid(total), 256>>>(dxp, h->xc, h->n, h->K, h->b,
                                           h->vl, 1);
  return launched("k_btd_rhs_col");
}

/* Block (r, w) of line 0 in the copy, and its pointer array. */
#define COL(h, r, w) ((h)->col + ((size_t)(r) * 3 + (w)) * (h)->n * \
                      ((size_t)(h)->b * (h)->b))
#define PTRS(h, r, w) ((h)->mp + ((size_t)(r) * 3 + (w)) * (h)->n)

/*
** Per block row r, across the lines: getrf of D_r without pivots (the
** no-pivot LU cuBLAS runs when the pivot array is NULL), C_r := L^-1 C_r
** and A_{r+1} := A_{r+1} U^-1 (trsm, the factors ours keeps), D_{r+1} -=
** A_{r+1} C_r (gemm at stride B*B). A row's calls depend on the one
** before, so they go in order on the default stream.
*/
extern "C" odb_status odb_bgpu_btd_blas_factor(odb_bgpu_btd_blas *h,
                                               long *bad_line) {
  const double one = 1.0, minus = -1.0;
  int B = h->b, n = (int)h->n;
  long long bb = (long long)B * B;
  unsigned g = elem_grid((size_t)h->n);
  if (bad_line) {
    *bad_line = -1;
    ODB_TRY(flag_reset());
  }
  for (int r = 0; r < h->K; ++r) {
    if (bad_line) k_btd_fro<<<g, 256>>>(COL(h, r, 1), h->n, B, h->fro);
    ODB_CUBLAS_CHECK(cublasDgetrfBatched(blas, B, PTRS(h, r, 1), B, NULL,
                                         h->info, n));
    if (bad_line)
      k_btd_pivots<<<g, 256>>>(COL(h, r, 1), h->n, B, h->K, r, h->fro,
                               d_flag);
    if (r + 1 == h->K) break;
    ODB_CUBLAS_CHECK(cublasDtrsmBatched(
      blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
      CUBLAS_DIAG_UNIT, B, B, &one, (const double *const *)PTRS(h, r, 1), B,
      PTRS(h, r, 2), B, n));
    ODB_CUBLAS_CHECK(cublasDtrsmBatched(
      blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
      CUBLAS_DIAG_NON_UNIT, B, B, &one, (const double *const *)PTRS(h, r, 1),
      B, PTRS(h, r + 1, 0), B, n));
    ODB_CUBLAS_CHECK(cublasDgemmStridedBatched(
      blas, CUBLAS_OP_N, CUBLAS_OP_N, B, B, B, &minus, COL(h, r + 1, 0), B,
      bb, COL(h, r, 2), B, bb, &one, COL(h, r + 1, 1), B, bb, n));
  }
  if (bad_line) return btd_flag_result(h->t, bad_line);
  return launched("cuBLAS line factor");
}

/* Forward: y_r = L^-1 (b_r - A_r y_{r-1}); backward: x_r = U^-1 (y_r -
   C_r x_{r+1}); gemv at stride B*B (blocks) and B (vectors), trsm of one
   column through the pointer arrays. */
extern "C" odb_status odb_bgpu_btd_blas_solve(odb_bgpu_btd_blas *h) {
  const double one = 1.0, minus = -1.0;
  int B = h->b, n = (int)h->n;
  long long bb = (long long)B * B;
  size_t vec = (size_t)h->n * B;
  for (int r = 0; r < h->K; ++r) {
    if (r > 0)
      ODB_CUBLAS_CHECK(cublasDgemvStridedBatched(
        blas, CUBLAS_OP_N, B, B, &minus, COL(h, r, 0), B, bb,
        h->xc + (r - 1) * vec, 1, B, &one, h->xc + r * vec, 1, B, n));
    ODB_CUBLAS_CHECK(cublasDtrsmBatched(
      blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
      CUBLAS_DIAG_UNIT, B, 1, &one, (const double *const *)PTRS(h, r, 1), B,
      h->xp + (size_t)r * h->n, B, n));
  }
  for (int r = h->K - 1; r >= 0; --r) {
    if (r + 1 < h->K)
      ODB_CUBLAS_CHECK(cublasDgemvStridedBatched(
        blas, CUBLAS_OP_N, B, B, &minus, COL(h, r, 2), B, bb,
        h->xc + (r + 1) * vec, 1, B, &one, h->xc + r * vec, 1, B, n));
    ODB_CUBLAS_CHECK(cublasDtrsmBatched(
      blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
      CUBLAS_DIAG_NON_UNIT, B, 1, &one, (const double *const *)PTRS(h, r, 1),
      B, h->xp + (size_t)r * h->n, B, n));
  }
  return launched("cuBLAS line solve");
}

#undef COL
#undef PTRS

/* }------ */
