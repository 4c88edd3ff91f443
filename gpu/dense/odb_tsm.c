/* odb_tsm.c - the generated tall & skinny kernels and the cuBLAS baseline
   on the current CUDA device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "odb_cuda_check.h"
#include "odb_gpulib_check.h"
#include "odb_measure.h"
#include "odb_nvrtc.h"
#include "odb_tsm_gpu.h"

struct odb_tsm_kernel {
  odb_tsm_cfg cfg;
  odb_gpu_module *mod;
  odb_gpu_kernel fn;
  int sms;
  int fit;             /* blocks of this kernel resident on one SM */
};

/* The argument struct of every generated kernel (odb_gen_tsm.h). */
typedef struct tsm_args {
  const double *A;
  const double *X;
  double *out;
  long long K;
} tsm_args;

/* Needs a current device; 0 when the query fails. */
int odb_tsm_sm_count(void) {
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev)
          != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

/* Needs a current device; 0 when the query fails. */
int odb_tsm_device_cc(void) {
  int dev = 0, ma = 0, mi = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&ma, cudaDevAttrComputeCapabilityMajor, dev)
          != cudaSuccess ||
      cudaDeviceGetAttribute(&mi, cudaDevAttrComputeCapabilityMinor, dev)
          != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return 10 * ma + mi;
}

/* A device attribute of the current device, def when the query fails. */
static int dev_attr(enum cudaDeviceAttr a, int def) {
  int dev = 0, v = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess || v <= 0) {
    (void)cudaGetLastError();
    return def;
  }
  return v;
}

/*
** Blocks of k resident on one SM at once: the least of what the
** registers (allocated per warp in units of 256, per SM quarter), the
** shared memory (plus the block's reserved part) and the threads allow;
** 1 to 32.
*/
static int blocks_fit(const odb_tsm_kernel *k) {
  int threads = odb_tsm_cfg_block(&k->cfg), warps = (threads + 31) / 32;
  int regs = k->fn.regs > 0 ? k->fn.regs : 255;
  int rpw = (regs * 32 + 255) / 256 * 256;
  int quarter = dev_attr(cudaDevAttrMaxRegistersPerMultiprocessor, 65536) / 4;
  int fit = quarter / rpw * 4 / warps;
  int t = dev_attr(cudaDevAttrMaxThreadsPerMultiProcessor, 2048) / threads;
  size_t smem = odb_tsm_cfg_smem(&k->cfg);
  if (t < fit) fit = t;
  if (smem > 0) {
    size_t per = smem + (size_t)dev_attr(
        cudaDevAttrReservedSharedMemoryPerBlock, 1024);
    int s = (int)((size_t)dev_attr(
        cudaDevAttrMaxSharedMemoryPerMultiprocessor, 101376) / per);
    if (s < fit) fit = s;
  }
  if (fit > 32) fit = 32;
  return fit < 1 ? 1 : fit;
}

/* See the header. */
odb_status odb_tsm_kernel_create(const odb_tsm_cfg *c, odb_tsm_kernel **out) {
  odb_tsm_kernel *k = NULL;
  char *src = NULL, name[200], txt[160];
  int dev = 0, ccmaj = 0, ccmin = 0;
  size_t smem;
  odb_status st;

  *out = NULL;
  ODB_TRY(odb_tsm_cfg_check(c));
  ODB_CUDA_CHECK(cudaFree(0));   /* makes the primary context current */
  ODB_CUDA_CHECK(cudaGetDevice(&dev));
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&ccmaj,
                 cudaDevAttrComputeCapabilityMajor, dev));
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&ccmin,
                 cudaDevAttrComputeCapabilityMinor, dev));
  if (10 * ccmaj + ccmin < odb_tsm_cfg_min_cc(c))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "tsm: %s needs compute capability "
                    "%d.%d, the device has %d.%d",
                    odb_tsm_cfg_text(c, txt, sizeof txt),
                    odb_tsm_cfg_min_cc(c) / 10, odb_tsm_cfg_min_cc(c) % 10,
                    ccmaj, ccmin);
  k = calloc(1, sizeof *k);
  if (!k) return ODB_FAIL(ODB_ERR_NOMEM, "tsm: kernel");
  k->cfg = *c;
  k->sms = odb_tsm_sm_count();
  st = odb_gen_tsm(c, &src);
  if (st != ODB_OK) goto fail;
  snprintf(name, sizeof name, "tsm %s %s M=%d N=%d %s",
           odb_tsm_op_name(c->op), odb_tsm_dtype_name(c->t), c->M, c->N,
           odb_tsm_cfg_text(c, txt, sizeof txt));
  st = odb_nvrtc_build(name, src, ccmaj, ccmin, &k->mod);
  if (st != ODB_OK) goto fail;
  st = odb_gpu_kernel_get(k->mod, "tsm_kernel", &k->fn);
  if (st != ODB_OK) goto fail;
  smem = odb_tsm_cfg_smem(c);
  if (smem > 48 * 1024 && (st = odb_gpu_kernel_smem(&k->fn, smem)) != ODB_OK)
    goto fail;
  if (odb_tsm_cfg_block(c) > k->fn.max_threads) {
    st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "tsm: %d threads per block, the "
                  "kernel allows %d", odb_tsm_cfg_block(c),
                  k->fn.max_threads);
    goto fail;
  }
  k->fit = blocks_fit(k);
  free(src);
  *out = k;
  return ODB_OK;
fail:
  free(src);
  odb_tsm_kernel_free(k);
  return st;
}

/* NULL is allowed. */
void odb_tsm_kernel_free(odb_tsm_kernel *k) {
  if (!k) return;
  odb_gpu_module_free(k->mod);
  free(k);
}

const odb_tsm_cfg *odb_tsm_kernel_cfg(const odb_tsm_kernel *k) {
  return &k->cfg;
}

int odb_tsm_kernel_regs(const odb_tsm_kernel *k) { return k->fn.regs; }

int odb_tsm_kernel_spill(const odb_tsm_kernel *k) {
  return k->fn.local_bytes;
}

/* See the header; configurations that do not check or run on this
   device are left out. */
int odb_tsm_prefetch(const odb_tsm_cfg *list, int n) {
  int cc = odb_tsm_device_cc(), done;
  char **src = calloc((size_t)(n > 0 ? n : 1), sizeof *src);
  if (!src || cc == 0) {
    free(src);
    return 0;
  }
  for (int i = 0; i < n; ++i)
    if (odb_tsm_cfg_min_cc(&list[i]) <= cc &&
        odb_gen_tsm(&list[i], &src[i]) != ODB_OK)
      src[i] = NULL;
  odb_clear_error();
  done = odb_nvrtc_prefetch((const char *const *)src, n, cc / 10, cc % 10,
                            0);
  for (int i = 0; i < n; ++i) free(src[i]);
  free(src);
  return done;
}

/* Computed when k was created (blocks_fit). */
int odb_tsm_kernel_fit(const odb_tsm_kernel *k) { return k->fit; }

/* blocks_per_sm (0: as many as fit) x SMs, no more than there are row
   groups (chunks) for, or (-1) a block per chunk; with C split into bands
   a multiple of the bands, at most their number times the chunks. */
unsigned odb_tsm_kernel_grid(const odb_tsm_kernel *k, long K) {
  long rpb = k->cfg.stage || k->cfg.mma ? k->cfg.chunk
             : odb_tsm_cfg_block(&k->cfg) / odb_tsm_cfg_group(&k->cfg);
  long most = (K + rpb - 1) / rpb;
  long bps = k->cfg.blocks_per_sm ? k->cfg.blocks_per_sm : k->fit;
  long g = bps < 0 ? most : bps * (k->sms > 0 ? k->sms : 80);
  long split = k->cfg.split > 1 ? k->cfg.split : 1;
  if (g > most * split) g = most * split;
  g -= g % split;   /* every band gets as many blocks */
  return g < split ? (unsigned)split : (unsigned)g;
}

/* Device pointers; see the header. */
odb_status odb_tsm_kernel_run(odb_tsm_kernel *k, const double *A,
                              const double *X, double *out, long K) {
  const odb_tsm_cfg *c = &k->cfg;
  tsm_args a = { A, X, out, K };
  if (K < 1) return ODB_FAIL(ODB_ERR_ARG, "tsm: K = %ld, at least 1", K);
  if (!A || !X || !out) return ODB_FAIL(ODB_ERR_ARG, "tsm: NULL matrix");
  if (c->mma && (((uintptr_t)A | (uintptr_t)X | (uintptr_t)out) & 15))
    return ODB_FAIL(ODB_ERR_ARG, "tsm: the tensor-core kernels need "
                    "16-byte aligned matrices");
  return odb_gpu_launch(&k->fn, odb_tsm_kernel_grid(k, K),
                        (unsigned)odb_tsm_cfg_block(c), odb_tsm_cfg_smem(c),
                        &a);
}

static cublasHandle_t blas;   /* created on first use, kept */

/* The kept cuBLAS handle, created on first use. */
static odb_status blas_handle(void) {
  cublasStatus_t s;
  if (blas) return ODB_OK;
  s = cublasCreate(&blas);
  return ODB_CUBLAS_STATUS(s, "cublasCreate");
}

/*
** Row-major X (r x c) is column-major X~ = X^T (c x r, ld c). tsmttsm:
** C^T = B^T A, i.e. C~ (N x M) = B~ (N x K) A~^T; tsmm: B^T = C^T A^T,
** i.e. B~ (N x K) = C~ (N x M) A~ (M x K).
*/
odb_status odb_tsm_cublas(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                          long K, const double *A, const double *X,
                          double *out) {
  cublasStatus_t s;
  ODB_TRY(odb_tsm_check_shape(M, N, K, 0));
  ODB_TRY(blas_handle());
  if (t == ODB_TSM_D) {
    const double one = 1.0, zero = 0.0;
    if (op == ODB_TSM_TSMTTSM)
      s = cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)N, (int)M,
                      (int)K, &one, X, (int)N, A, (int)M, &zero, out,
                      (int)N);
    else
      s = cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)K,
                      (int)M, &one, X, (int)N, A, (int)M, &zero, out,
                      (int)N);
    ODB_TRY(ODB_CUBLAS_STATUS(s, "cublasDgemm"));
  } else {
    const cuDoubleComplex one = { 1.0, 0.0 }, zero = { 0.0, 0.0 };
    const cuDoubleComplex *a = (const cuDoubleComplex *)A;
    const cuDoubleComplex *x = (const cuDoubleComplex *)X;
    cuDoubleComplex *o = (cuDoubleComplex *)out;
    if (op == ODB_TSM_TSMTTSM)
      s = cublasZgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)N, (int)M,
                      (int)K, &one, x, (int)N, a, (int)M, &zero, o, (int)N);
    else
      s = cublasZgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)K,
                      (int)M, &one, x, (int)N, a, (int)M, &zero, o, (int)N);
    ODB_TRY(ODB_CUBLAS_STATUS(s, "cublasZgemm"));
  }
  return ODB_OK;
}

/* One run of k, or of cuBLAS when k is NULL. */
static odb_status run_once(odb_tsm_kernel *k, odb_tsm_op op, odb_tsm_dtype t,
                           long M, long N, long K, const double *A,
                           const double *X, double *out) {
  if (k) return odb_tsm_kernel_run(k, A, X, out, K);
  return odb_tsm_cublas(op, t, M, N, K, A, X, out);
}

/*
** {====== The L2 flush before each timed run: a read of four times the L2
** (cuBLAS's asum, its sum into the buffer's last double), so that no run
** starts with lines the run before it left in L2 (the next run of a race
** may read first what the last one read last). Reads leave clean lines, so
** no run pays for write-backs of the flush. ODEBENCH_TSM_NOFLUSH=1: no flush.
*/
typedef struct tsm_flush {
  double *buf;   /* n doubles, then the sum; NULL: no flush */
  int n;
} tsm_flush;

static tsm_flush flush;   /* allocated on first use and kept, as blas is
                             (a tuning times thousands of runs) */

/* Whether a race flushes: 0 with ODEBENCH_TSM_NOFLUSH=1 (asked once a race). */
static int flush_wanted(void) {
  const char *no = getenv("ODEBENCH_TSM_NOFLUSH");
  return !(no && strcmp(no, "1") == 0);
}

/* Allocates the buffer once (flush.buf stays NULL, no flush, when the L2
   size is unknown or the device has no room for the buffer). */
static odb_status flush_open(void) {
  int dev = 0, l2 = 0;
  cudaError_t e;
  if (flush.buf) return ODB_OK;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)
          != cudaSuccess || l2 <= 0) {
    (void)cudaGetLastError();
    return ODB_OK;
  }
  ODB_TRY(blas_handle());
  flush.n = l2 / 2;   /* 4 x l2 bytes of doubles */
  e = cudaMalloc((void **)&flush.buf, 8 * ((size_t)flush.n + 1));
  if (e == cudaSuccess)
    e = cudaMemset(flush.buf, 0, 8 * ((size_t)flush.n + 1));
  if (e != cudaSuccess) {   /* no room: time as before, without it */
    if (flush.buf) cudaFree(flush.buf);
    flush.buf = NULL;
    (void)cudaGetLastError();
  }
  return ODB_OK;
}

/* Reads the buffer on the default stream (no host wait); nothing when
   there is none. */
static odb_status flush_run(void) {
  cublasStatus_t s;
  if (!flush.buf) return ODB_OK;
  s = cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasDasum(blas, flush.n, flush.buf, 1, flush.buf + flush.n);
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST);
  return ODB_CUBLAS_STATUS(s, "cublasDasum");
}
/* }====== */

/* See the header; reps is clamped to 1..201, nk to 1..4. */
odb_status odb_tsm_time_race(odb_tsm_kernel *const *ks, int nk,
                             odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                             long K, const double *A, const double *X,
                             double *out, int reps, double *medians,
                             double *each) {
  cudaEvent_t ev[2 * 201 * 4];
  double ts[201];
  int n = 0, runs;
  odb_status st = ODB_OK;
  float ms;
  if (nk < 1 || nk > 4)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %d kernels to race, 1 to 4", nk);
  if (reps < 1) reps = 1;
  if (reps > 201) reps = 201;
  runs = reps * nk;
  int fl = flush_wanted();
  if (fl) ODB_TRY(flush_open());
  for (int i = 0; i < 2 * nk && st == ODB_OK; ++i)
    st = run_once(ks[i % nk], op, t, M, N, K, A, X, out);
  if (st != ODB_OK) goto done;
  for (; n < 2 * runs; ++n)
    if (cudaEventCreate(&ev[n]) != cudaSuccess) break;
  if (n < 2 * runs) {
    st = ODB_FAIL(ODB_ERR_BACKEND, "tsm: cudaEventCreate failed");
    goto done;
  }
  /* round robin: run r is kernel r % nk, between events 2r and 2r + 1 */
  for (int r = 0; r < runs && st == ODB_OK; ++r) {
    if (fl && (st = flush_run()) != ODB_OK) break;
    cudaEventRecord(ev[2 * r], 0);
    st = run_once(ks[r % nk], op, t, M, N, K, A, X, out);
    cudaEventRecord(ev[2 * r + 1], 0);
  }
  if (st == ODB_OK) {
    cudaError_t e = cudaEventSynchronize(ev[2 * runs - 1]);
    if (e != cudaSuccess) {
      st = odb_cuda_fail(e, "cudaEventSynchronize", __FILE__, __LINE__);
      goto done;
    }
    for (int j = 0; j < nk; ++j) {
      for (int i = 0; i < reps; ++i) {
        int r = i * nk + j;
        cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]);
        ts[i] = ms * 1e-3;
        if (each) each[r] = ts[i];
      }
      odb_measurement m;
      odb_measure_summarize(ts, reps, &m);
      medians[j] = m.median;
    }
  }
done:
  for (int i = 0; i < n; ++i) cudaEventDestroy(ev[i]);
  return st;
}

/* See the header. */
odb_status odb_tsm_time(odb_tsm_kernel *k, odb_tsm_op op, odb_tsm_dtype t,
                        long M, long N, long K, const double *A,
                        const double *X, double *out, int reps,
                        double *median) {
  return odb_tsm_time_race(&k, 1, op, t, M, N, K, A, X, out, reps, median,
                           NULL);
}
