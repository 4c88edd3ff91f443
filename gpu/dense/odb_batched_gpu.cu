/* odb_batched_gpu.cu - batched small dense matrices on the GPU (see
   odb_batched_gpu.h): the host glue of the family. Variant and op names,
   the batch and its variant choice, allocation and copies, packing between
   the standard and compact layouts, random data, the pivot flag and event
   timing. The kernels are in odb_batched_compact.cu (LU, TRSM/TRSV,
   GEMM/GEMV), odb_batched_btd.cu (block-tridiagonal lines) and
   odb_batched_cublas.cu (the cuBLAS baseline); odb_batched_gpu.cuh holds
   what they share. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched_gpu.cuh"
#include "cuda_backend.h"

unsigned long long *d_flag;          /* pivot flag, allocated on first use */
static cudaEvent_t ev0, ev1;         /* timing events, created on first use */

/* {====== element-wise kernels: layouts, random data, pointer arrays */

/* Splits offset e of a (vl, rows, cols) batch into p, i, j. */
static __device__ __forceinline__ void split_at(size_t e, int vl, int rows,
                                                int cols, long *p, int *i,
                                                int *j) {
  size_t l = e % vl, t = e / vl;
  *j = (int)(t % cols);
  t /= cols;
  *i = (int)(t % rows);
  *p = (long)(t / rows) * vl + (long)l;
}

/* dst (vl layout, rows x cols per entry) from standard src; padding gets
   the identity (ident) or zero. transpose: src is column-major. */
__global__ void k_pack(const double *src, double *dst, size_t total, int vl,
                       int rows, int cols, long n, int transpose, int ident) {
  FOR_ELEMENTS(e, total) {
    long p;
    int i, j;
    split_at(e, vl, rows, cols, &p, &i, &j);
    double v;
    if (p < n)
      v = src[((size_t)p * (transpose ? cols : rows) + (transpose ? j : i)) *
                  (transpose ? rows : cols) + (transpose ? i : j)];
    else
      v = ident && i == j ? 1.0 : 0.0;
    dst[e] = v;
  }
}

/* The inverse of k_pack for the n real entries (total = n*rows*cols). */
__global__ void k_unpack(const double *src, double *dst, size_t total,
                         int vl, int rows, int cols, int transpose) {
  FOR_ELEMENTS(e, total) {
    size_t rc = (size_t)rows * cols;
    long p = (long)(e / rc);
    int i = (int)(e % rc / cols), j = (int)(e % cols);
    size_t at = (((size_t)(p / vl) * rows + i) * cols + j) * vl + p % vl;
    size_t to = transpose ? (size_t)p * rc + (size_t)j * rows + i : e;
    dst[to] = src[at];
  }
}

/* Random matrices (rhs: cols = m, unit entries) as on the host. */
__global__ void k_random(double *dst, size_t total, int vl, int b, long n,
                         uint64_t seed, double shift) {
  FOR_ELEMENTS(e, total) {
    long p;
    int i, j;
    split_at(e, vl, b, b, &p, &i, &j);
    dst[e] = p < n ? odb_batched_rand_entry(seed, (uint64_t)p, b, i, j, shift)
                   : (i == j ? 1.0 : 0.0);
  }
}

__global__ void k_random_rhs(double *dst, size_t total, int vl, int b, int m,
                             long n, uint64_t seed) {
  FOR_ELEMENTS(e, total) {
    long p;
    int i, c;
    split_at(e, vl, b, m, &p, &i, &c);
    dst[e] = p < n ? odb_batched_unit(seed ^ ODB_BATCHED_RHS_SEED,
                                      ((uint64_t)p * b + i) * m + c)
                   : 0.0;
  }
}

/* }====== */

/* {====== the pivot flag */

/* The pivot flag reset to "none". */
odb_status flag_reset(void) {
  if (!d_flag)
    ODB_CUDA_CHECK(cudaMalloc((void **)&d_flag, sizeof *d_flag));
  ODB_CUDA_CHECK(cudaMemsetAsync(d_flag, 0xFF, sizeof *d_flag, 0));
  return ODB_OK;
}

/* Waits and reads the pivot flag (NO_BAD: none). */
odb_status flag_read(unsigned long long *key) {
  ODB_CUDA_CHECK(cudaMemcpy(key, d_flag, sizeof *key,
                            cudaMemcpyDeviceToHost));
  return ODB_OK;
}

/* }====== */

/* {====== the C interface */

/* By odb_bgpu_variant; "cublas" (the peer of the line factor and solve in
   odb_batched_cublas.cu) is named but not parsed here: the ops table of
   odb_batched_cuda.c takes it for the block-tridiagonal lines only. */
static const char *const variant_names[] = { "auto", "serial", "serial2",
                                             "team", "stream", "cublas" };
static const char *const op_names[] = { "lu", "solve", "trsm", "gemm",
                                        "gemv" };

extern "C" const char *odb_bgpu_variant_name(odb_bgpu_variant v) {
  return (unsigned)v < 6 ? variant_names[v] : "?";
}

extern "C" odb_status odb_bgpu_variant_parse(const char *name,
                                             odb_bgpu_variant *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, variant_names[i]) == 0) {
      *out = (odb_bgpu_variant)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown GPU variant '%s' (known: auto, "
                  "serial, serial2, team, stream)", name ? name : "(null)");
}

extern "C" const char *odb_bgpu_op_name(odb_bgpu_op op) {
  return (unsigned)op < 5 ? op_names[op] : "?";
}

extern "C" odb_status odb_bgpu_op_parse(const char *name, odb_bgpu_op *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, op_names[i]) == 0) {
      *out = (odb_bgpu_op)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown batched op '%s' (known: lu, solve, "
                  "trsm, gemm, gemv)", name ? name : "(null)");
}

/* vl 32 is checked here; the rest by odb_batch_init. */
extern "C" odb_status odb_bgpu_batch_init(odb_batch *bt,
                                          odb_batched_layout layout, long n,
                                          int b, int vl) {
  if (vl == 0) vl = ODB_BGPU_DEFAULT_VL;
  ODB_TRY(odb_batch_init(bt, layout, n, b, vl == 32 ? 16 : vl));
  if (vl == 32 && layout == ODB_LAYOUT_COMPACT) {
    bt->vl = 32;
    bt->packs = (n + 31) / 32;
  }
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_ready(void) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "no usable CUDA device: %s",
                    cudaGetErrorString(err));
  }
  if (n < 1) return ODB_FAIL(ODB_ERR_NO_DEVICE, "no CUDA device present");
  return ODB_OK;
}

/* Thresholds from the H200 runs (scenarios/blocktridiag.lua): LU one
   thread per matrix while it fits in registers without spilling (B <= 8),
   then a thread per row; solves double2 for small B. */
extern "C" odb_bgpu_variant odb_bgpu_pick(const odb_batch *bt,
                                          odb_bgpu_op op) {
  int even = bt->layout == ODB_LAYOUT_COMPACT && bt->vl % 2 == 0;
  switch (op) {
  case ODB_BGPU_OP_LU:
    return bt->b <= 8 ? ODB_BGPU_SERIAL : ODB_BGPU_TEAM;
  case ODB_BGPU_OP_SOLVE:
    if (bt->b <= 6 && even) return ODB_BGPU_SERIAL2;
    return bt->b <= 16 ? ODB_BGPU_SERIAL : ODB_BGPU_TEAM;
  default:
    return bt->b <= 8 ? ODB_BGPU_SERIAL : ODB_BGPU_TEAM;
  }
}

extern "C" odb_status odb_bgpu_resolve(const odb_batch *bt, odb_bgpu_op op,
                                       odb_bgpu_variant v,
                                       odb_bgpu_variant *out) {
  if (v == ODB_BGPU_AUTO) v = odb_bgpu_pick(bt, op);
  if (v == ODB_BGPU_STREAM)
    return ODB_FAIL(ODB_ERR_ARG, "GPU variant stream exists for "
                    "block-tridiagonal solves only, not batched %s",
                    odb_bgpu_op_name(op));
  if (v != ODB_BGPU_SERIAL && v != ODB_BGPU_SERIAL2 && v != ODB_BGPU_TEAM)
    return ODB_FAIL(ODB_ERR_ARG, "GPU variant %d is not auto, serial, "
                    "serial2 or team", (int)v);
  if (v == ODB_BGPU_SERIAL2) {
    if (op != ODB_BGPU_OP_LU && op != ODB_BGPU_OP_SOLVE)
      return ODB_FAIL(ODB_ERR_ARG, "variant serial2 (double2) exists for lu "
                      "and solve only, not %s", odb_bgpu_op_name(op));
    if (bt->layout != ODB_LAYOUT_COMPACT || bt->vl % 2)
      return ODB_FAIL(ODB_ERR_ARG, "variant serial2 (double2) needs the "
                      "compact layout with an even VL (have %s, VL %d)",
                      odb_batched_layout_name(bt->layout), bt->vl);
  }
  *out = v;
  return ODB_OK;
}

extern "C" double odb_bgpu_op_bytes(const odb_batch *bt, odb_bgpu_op op) {
  double n = (double)bt->n, b = bt->b;
  switch (op) {
  case ODB_BGPU_OP_LU: return 8.0 * n * 2 * b * b;
  case ODB_BGPU_OP_SOLVE:
  case ODB_BGPU_OP_GEMV: return 8.0 * n * (b * b + 2 * b);
  default: return 8.0 * n * 3 * b * b;
  }
}

extern "C" odb_status odb_bgpu_alloc(size_t doubles, double **out) {
  *out = NULL;
  ODB_CUDA_CHECK(cudaMalloc((void **)out, sizeof(double) *
                            (doubles ? doubles : 1)));
  return ODB_OK;
}

extern "C" void odb_bgpu_free(void *d) {
  if (d) cudaFree(d);
}

extern "C" odb_status odb_bgpu_upload(double *d, const double *h,
                                      size_t doubles) {
  ODB_CUDA_CHECK(cudaMemcpy(d, h, sizeof(double) * doubles,
                            cudaMemcpyHostToDevice));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_download(double *h, const double *d,
                                        size_t doubles) {
  ODB_CUDA_CHECK(cudaMemcpy(h, d, sizeof(double) * doubles,
                            cudaMemcpyDeviceToHost));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_copy(double *dst, const double *src,
                                    size_t doubles) {
  ODB_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeof(double) * doubles,
                                 cudaMemcpyDeviceToDevice, 0));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_sync(void) {
  ODB_CUDA_CHECK(cudaDeviceSynchronize());
  return launched("a batched kernel");
}

/* Refuses p outside 0..n-1. */
static odb_status check_index(const odb_batch *bt, long p) {
  if (p < 0 || p >= bt->n)
    return ODB_FAIL(ODB_ERR_ARG, "matrix %ld is outside 0..%ld", p,
                    bt->n - 1);
  return ODB_OK;
}

/* One strided 2-D copy: B*B elements VL doubles apart. */
extern "C" odb_status odb_bgpu_get_matrix(const odb_batch *bt,
                                          const double *dA, long p,
                                          double *h) {
  ODB_TRY(check_index(bt, p));
  ODB_CUDA_CHECK(cudaMemcpy2D(h, sizeof(double), dA +
                              odb_batch_mat_at(bt, p, 0, 0),
                              sizeof(double) * bt->vl, sizeof(double),
                              (size_t)bt->b * bt->b,
                              cudaMemcpyDeviceToHost));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_set_matrix(const odb_batch *bt, double *dA,
                                          long p, const double *h) {
  ODB_TRY(check_index(bt, p));
  ODB_CUDA_CHECK(cudaMemcpy2D(dA + odb_batch_mat_at(bt, p, 0, 0),
                              sizeof(double) * bt->vl, h, sizeof(double),
                              sizeof(double), (size_t)bt->b * bt->b,
                              cudaMemcpyHostToDevice));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_pack(const odb_batch *bt, const double *src,
                                    double *dst, int transpose) {
  size_t total = odb_batch_mat_len(bt);
  k_pack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, bt->b,
                                    bt->n, transpose, 1);
  return launched("k_pack");
}

extern "C" odb_status odb_bgpu_unpack(const odb_batch *bt, const double *src,
                                      double *dst, int transpose) {
  size_t total = (size_t)bt->n * bt->b * bt->b;
  k_unpack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, bt->b,
                                      transpose);
  return launched("k_unpack");
}

/* m >= 1 (refused otherwise). */
static odb_status check_m(int m) {
  if (m < 1 || m > MAXB)
    return ODB_FAIL(ODB_ERR_ARG, "right-hand side columns m = %d, allowed "
                    "1..%d", m, MAXB);
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_pack_rhs(const odb_batch *bt, int m,
                                        const double *src, double *dst) {
  ODB_TRY(check_m(m));
  size_t total = odb_batch_rhs_len(bt, m);
  k_pack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, m, bt->n,
                                    0, 0);
  return launched("k_pack (rhs)");
}

extern "C" odb_status odb_bgpu_unpack_rhs(const odb_batch *bt, int m,
                                          const double *src, double *dst) {
  ODB_TRY(check_m(m));
  size_t total = (size_t)bt->n * bt->b * m;
  k_unpack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, m, 0);
  return launched("k_unpack (rhs)");
}

extern "C" odb_status odb_bgpu_random(const odb_batch *bt, uint64_t seed,
                                      double dominance, double *dA) {
  size_t total = odb_batch_mat_len(bt);
  k_random<<<elem_grid(total), 256>>>(dA, total, bt->vl, bt->b, bt->n, seed,
                                      dominance * bt->b);
  return launched("k_random");
}

extern "C" odb_status odb_bgpu_random_rhs(const odb_batch *bt, int m,
                                          uint64_t seed, double *dx) {
  ODB_TRY(check_m(m));
  size_t total = odb_batch_rhs_len(bt, m);
  k_random_rhs<<<elem_grid(total), 256>>>(dx, total, bt->vl, bt->b, m, bt->n,
                                          seed);
  return launched("k_random_rhs");
}

extern "C" odb_status odb_bgpu_mark(void) {
  if (!ev0) {
    ODB_CUDA_CHECK(cudaEventCreate(&ev0));
    ODB_CUDA_CHECK(cudaEventCreate(&ev1));
  }
  ODB_CUDA_CHECK(cudaEventRecord(ev0, 0));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_elapsed(double *seconds) {
  float ms = 0;
  if (!ev0)
    return ODB_FAIL(ODB_ERR_ARG, "odb_bgpu_elapsed without odb_bgpu_mark");
  ODB_CUDA_CHECK(cudaEventRecord(ev1, 0));
  ODB_CUDA_CHECK(cudaEventSynchronize(ev1));
  ODB_TRY(launched("a timed kernel"));
  ODB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
  *seconds = ms * 1e-3;
  return ODB_OK;
}

/* The process's copy bandwidth (odb_cuda_copy_bandwidth) in GB/s; bytes is
   not used: every caller gets the one figure of the run. */
extern "C" odb_status odb_bgpu_copy_bandwidth(size_t bytes, double *gbs) {
  double bps = 0;
  (void)bytes;
  ODB_TRY(odb_cuda_copy_bandwidth(&bps));
  *gbs = bps * 1e-9;
  return ODB_OK;
}

/* }====== */
