/* odb_krylov_gpu.cu - BiCGStab and QMR on the GPU (see odb_krylov_gpu.h):
** the host pieces the implementations share, the dispatcher that checks
** the options and runs one of them (odb_krylov_cusparse.cu: library
** calls, odb_krylov_fused.cu: fused vector kernels over our SpMV,
** odb_krylov_persistent.cu: one persistent kernel) and the reference SpMV
** timing. odb_krylov_gpu.cuh holds what they share.
*/
#include "odb_krylov_gpu.cuh"
#include "cuda_backend.h"
extern "C" {
#include "odb_sparse_floor.h"
}

/* {====== the true residual's kernel */

/* out[0] = ||b - y||^2. */
__global__ void k_diffnorm(long n, const double *b, const double *y, double *part, unsigned *ticket,
                           double *out) {
  __shared__ double red[96];
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { double d = b[i] - y[i]; a[0] += d * d; }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) out[0] = a[0];
}

/* }====== */

/* {====== host: common pieces */

/* Device allocation; out of memory names the size and what it was for. */
odb_status dalloc(void *pp, size_t bytes, const char *what) {
  void **p = (void **)pp;
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 8);
  if (e == cudaSuccess) return ODB_OK;
  *p = NULL;
  (void)cudaGetLastError();
  if (e == cudaErrorMemoryAllocation)
    return ODB_FAIL(ODB_ERR_NOMEM, "Krylov GPU: no room for %s (%zu bytes)", what, bytes);
  return odb_cuda_fail(e, "cudaMalloc", __FILE__, __LINE__);
}

/* Host -> new device copy. */
odb_status dupload(void *pp, const void *src, size_t bytes, const char *what) {
  ODB_TRY(dalloc(pp, bytes, what));
  ODB_CUDA_CHECK(cudaMemcpy(*(void **)pp, src, bytes, cudaMemcpyHostToDevice));
  return ODB_OK;
}

void dfree(void *p) {
  if (p && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

odb_status red_alloc(red_scratch *r, long n, int sms) {
  long g = (n + FB - 1) / FB;
  r->grid = (int)(g < 4L * sms ? (g > 0 ? g : 1) : 4L * sms);
  ODB_TRY(dalloc(&r->part, (size_t)r->grid * 4 * sizeof(double), "reduction partials"));
  ODB_TRY(dalloc(&r->out, 4 * sizeof(double), "reduction result"));
  ODB_TRY(dalloc(&r->ticket, sizeof(unsigned), "reduction ticket"));
  ODB_CUDA_CHECK(cudaMemset(r->ticket, 0, sizeof(unsigned)));
  return ODB_OK;
}

void red_free(red_scratch *r) {
  dfree(r->part); dfree(r->out); dfree(r->ticket);
  memset(r, 0, sizeof *r);
}

/* ||b - y|| for device vectors (waits). */
odb_status diff_norm(red_scratch *r, long n, const double *b, const double *y, double *out) {
  double s;
  k_diffnorm<<<r->grid, FB>>>(n, b, y, r->part, r->ticket, r->out);
  ODB_CUDA_CHECK(cudaGetLastError());
  ODB_CUDA_CHECK(cudaMemcpy(&s, r->out, sizeof s, cudaMemcpyDeviceToHost));
  *out = sqrt(s);
  return ODB_OK;
}

int sm_count(void) {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  return sms;
}

/* CSR of A^T (A CSR), built on the host by odb_sparse_transpose. */
odb_status csr_transpose(const odb_sparse *A, odb_sparse **out) {
  return odb_sparse_transpose(A, out);
}

odb_status timer_start(ktimer *t) {
  ODB_CUDA_CHECK(cudaEventCreate(&t->a));
  ODB_CUDA_CHECK(cudaEventCreate(&t->b));
  ODB_CUDA_CHECK(cudaEventRecord(t->a, 0));
  return ODB_OK;
}

odb_status timer_stop(ktimer *t, double *seconds) {
  float ms = 0.0f;
  ODB_CUDA_CHECK(cudaEventRecord(t->b, 0));
  ODB_CUDA_CHECK(cudaEventSynchronize(t->b));
  ODB_CUDA_CHECK(cudaEventElapsedTime(&ms, t->a, t->b));
  *seconds = 1e-3 * ms;
  return ODB_OK;
}

void timer_free(ktimer *t) {
  if (t->a) cudaEventDestroy(t->a);
  if (t->b) cudaEventDestroy(t->b);
  t->a = t->b = NULL;
}

/* }====== */

/* {====== dispatcher */

/* Checks the options (ODB_ERR_ARG naming the field) and fills defaults. */
static odb_status check_opts(const odb_krylov_gpu_opts *in, odb_krylov_gpu_opts *o) {
  odb_krylov_opts d = {1e-10, 1000, 100};
  if (in) *o = *in;
  else memset(o, 0, sizeof *o);
  if (o->kry.tol < 0 || o->kry.tol != o->kry.tol) return ODB_FAIL(ODB_ERR_ARG, "tol must be positive, got %g", o->kry.tol);
  if (o->kry.maxit < 0) return ODB_FAIL(ODB_ERR_ARG, "maxit must be positive, got %d", o->kry.maxit);
  if (o->kry.tol == 0) o->kry.tol = d.tol;
  if (o->kry.maxit == 0) o->kry.maxit = d.maxit;
  if (o->kry.stag_window <= 0) o->kry.stag_window = d.stag_window;
  if ((unsigned)o->impl >= ODB_KRY_IMPL_COUNT) return ODB_FAIL(ODB_ERR_ARG, "impl %d is not one of cpu, cusparse, fused, persistent", (int)o->impl);
  if ((unsigned)o->sync >= ODB_KRY_SYNC_COUNT) return ODB_FAIL(ODB_ERR_ARG, "sync %d is not one of lock, lockfree, wss", (int)o->sync);
  if (o->delay_ns < 0 || o->delay_ns > 1000000) return ODB_FAIL(ODB_ERR_ARG, "delay must be in 0..1000000 ns, got %d", o->delay_ns);
  if (o->grid < 0) return ODB_FAIL(ODB_ERR_ARG, "grid must be positive (0: automatic), got %d", o->grid);
  if (o->block == 0) o->block = 256;
  if (o->block < 64 || o->block > 1024 || o->block % 32)
    return ODB_FAIL(ODB_ERR_ARG, "block must be a multiple of 32 in 64..1024, got %d", o->block);
  if ((unsigned)o->rv > ODB_KRY_RV_GLOBAL) return ODB_FAIL(ODB_ERR_ARG, "rv %d is not auto, shared or global", (int)o->rv);
  if (o->grain < 0 || o->grain > 16) return ODB_FAIL(ODB_ERR_ARG, "grain must be 1, 2, 4 or k (0: chosen), got %d", o->grain);
  if (o->stream < -1 || o->stream > 1) return ODB_FAIL(ODB_ERR_ARG, "stream must be 1 (evict-first), -1 (plain) or 0 (chosen), got %d", o->stream);
  if (o->call < -1 || o->call > 1) return ODB_FAIL(ODB_ERR_ARG, "call must be 1 (SpMV called), -1 (inlined) or 0 (chosen), got %d", o->call);
  if (o->tune < -1 || o->tune > 1) return ODB_FAIL(ODB_ERR_ARG, "tune must be 1 (always), -1 (never) or 0 (large matrices), got %d", o->tune);
  if (o->watchdog_s < 0 || o->watchdog_s > 3600) return ODB_FAIL(ODB_ERR_ARG, "watchdog must be in 0..3600 s, got %g", o->watchdog_s);
  return ODB_OK;
}

/* Which formats each impl takes. */
static odb_status check_format(const odb_sparse *A, odb_krylov_method m, odb_krylov_impl impl) {
  const char *f = odb_sparse_format_name(A->fmt);
  if (A->n < 1 || A->n >= INT32_MAX) return ODB_FAIL(ODB_ERR_ARG, "matrix order %ld outside 1..2^31-1", A->n);
  if (m == ODB_KRYLOV_QMR && A->fmt != ODB_FMT_CSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "QMR needs A^T x and so CSR, got %s", f);
  if (impl == ODB_KRY_IMPL_CUSPARSE && A->fmt != ODB_FMT_CSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "impl cusparse takes CSR, got %s", f);
  if (impl == ODB_KRY_IMPL_PERSISTENT && A->fmt != ODB_FMT_CSR && A->fmt != ODB_FMT_BDIA)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "impl persistent takes CSR or Bdia, got %s", f);
  return ODB_OK;
}

/* Least traffic of one iteration (odb_krylov_min_bytes, read + written:
** A twice, or A and A^T, and the vectors the recurrences carry). */
static double bytes_per_iter(const odb_sparse *A, odb_krylov_method m) {
  double r, w;
  odb_krylov_min_bytes(A, m, &r, &w);
  return r + w;
}

/* The CPU reference, timed on the host. */
static odb_status solve_cpu(const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                            const odb_krylov_opts *o, odb_krylov_result *res, double *seconds) {
  double t0 = odb_clock_now();
  odb_status st = odb_krylov_solve(A, m, b, x, o, res);
  *seconds = odb_clock_since(t0);
  return st;
}

/* A any format the impl takes; b, x of length n; o may be NULL. */
extern "C" odb_status odb_krylov_gpu_solve(const odb_sparse *A, odb_krylov_method method, const double *b,
                                           double *x, const odb_krylov_gpu_opts *opts,
                                           odb_krylov_result *res, odb_krylov_gpu_info *info) {
  odb_krylov_gpu_opts o;
  odb_status st;
  int ndev = 0;
  memset(res, 0, sizeof *res);
  res->breakdown_iter = -1;
  if (info) memset(info, 0, sizeof *info);
  ODB_TRY(check_opts(opts, &o));
  if (method != ODB_KRYLOV_BICGSTAB && method != ODB_KRYLOV_QMR)
    return ODB_FAIL(ODB_ERR_ARG, "unknown Krylov method %d", (int)method);
  ODB_TRY(check_format(A, method, o.impl));
  if (info) info->bytes_per_iter = bytes_per_iter(A, method);
  if (o.impl == ODB_KRY_IMPL_CPU) {
    double sec = 0.0;
    st = solve_cpu(A, method, b, x, &o.kry, res, &sec);
    if (info) { info->seconds = sec; info->seconds_per_iter = sec / (res->iters > 0 ? res->iters : 1); }
    return st;
  }
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "impl %s: no CUDA device (%s)", odb_krylov_impl_name(o.impl),
                    e != cudaSuccess ? cudaGetErrorString(e) : "none found");
  }
  long n = A->n;
  double bn = 0.0;
  for (long i = 0; i < n; i++) bn += b[i] * b[i];
  bn = sqrt(bn);
  if (bn == 0.0) bn = 1.0;
  kout out;
  memset(&out, 0, sizeof out);
  out.st = ks_new(bn, &o.kry);
  out.hist = (double *)malloc((size_t)(o.kry.maxit + 2) * sizeof(double));
  if (!out.hist) return ODB_FAIL(ODB_ERR_NOMEM, "residual history of %d iterations", o.kry.maxit);
  double *xw = (double *)malloc((size_t)n * sizeof *xw);
  if (!xw) { free(out.hist); return ODB_FAIL(ODB_ERR_NOMEM, "solution of order %ld", n); }
  memcpy(xw, x, (size_t)n * sizeof *xw);
  if (o.impl == ODB_KRY_IMPL_CUSPARSE) {
    cs_ws w;
    memset(&w, 0, sizeof w);
    st = cs_run(&w, A, method, b, xw, &out);
    cs_free(&w);
  } else if (o.impl == ODB_KRY_IMPL_FUSED) {
    fz_ws w;
    memset(&w, 0, sizeof w);
    st = fz_run(&w, A, method, b, xw, &out);
    fz_free(&w);
  } else {
    pk_ws w;
    memset(&w, 0, sizeof w);
    w.qmr = method == ODB_KRYLOV_QMR;
    w.fmt = A->fmt == ODB_FMT_BDIA ? PK_BDIA : PK_CSR;
    w.nv = w.qmr ? 12 : 7;
    w.block = o.block;
    st = pk_run(&w, A, method, b, xw, &o, &out, info);
    pk_free(&w);
  }
  if (st != ODB_OK) { free(out.hist); free(xw); return st; }
  memcpy(x, xw, (size_t)n * sizeof *xw);
  free(xw);
  res->relres_true = out.rtrue / bn;
  res->history = out.hist;
  st = odb_krylov_state_finish(&out.st, method, res);
  if (info) {
    info->seconds = out.seconds;
    info->seconds_per_iter = out.seconds / (res->iters > 0 ? res->iters : 1);
  }
  return st;
}

/* }====== */

/* {====== reference SpMV time and copy bandwidth (odb_cuda_copy_bandwidth) */

/* Median of v[0..n) (sorts v). */
static double median(double *v, int n) { return odb_median(v, n); }

/* Times reps SpMVs of impl (after 3 warm-up runs), one event pair each. */
static odb_status spmv_time(const odb_sparse *A, odb_krylov_impl impl, int reps, double *seconds) {
  long n = A->n;
  double *xs = (double *)malloc((size_t)n * sizeof *xs), *tv = (double *)malloc((size_t)reps * sizeof *tv);
  cs_ws cw; pk_ws pw; fz_ws fw;
  ktimer t = {NULL, NULL};
  odb_status st = ODB_OK;
  memset(&cw, 0, sizeof cw); memset(&pw, 0, sizeof pw); memset(&fw, 0, sizeof fw);
  if (!xs || !tv) { free(xs); free(tv); return ODB_FAIL(ODB_ERR_NOMEM, "SpMV timing of order %ld", n); }
  for (long i = 0; i < n; i++) xs[i] = sin(0.37 * (double)i);
  if (impl == ODB_KRY_IMPL_CUSPARSE) {
    st = cs_setup(&cw, A, 2, 0);
    if (st == ODB_OK && cudaMemcpy(cw.v[0], xs, (size_t)n * 8, cudaMemcpyHostToDevice) != cudaSuccess)
      st = odb_cuda_fail(cudaGetLastError(), "cudaMemcpy", __FILE__, __LINE__);
    for (int i = -3; st == ODB_OK && i < reps; i++) {
      st = timer_start(&t);
      if (st == ODB_OK) st = cs_spmv(&cw, 0, 0, 1);
      if (st == ODB_OK) st = timer_stop(&t, i >= 0 ? &tv[i] : seconds);
      timer_free(&t);
    }
  } else if (impl == ODB_KRY_IMPL_FUSED) {
    st = odb_sparse_gpu_upload(A, &fw.g);
    if (st == ODB_OK) st = odb_sparse_gpu_bench(fw.g, ODB_SPMV_OURS, reps, seconds);
    reps = 0;
  } else {
    pw.fmt = A->fmt == ODB_FMT_BDIA ? PK_BDIA : PK_CSR;
    pw.nv = 7;
    pw.block = 256;
    odb_krylov_gpu_opts o;
    memset(&o, 0, sizeof o);
    o.rv = ODB_KRY_RV_GLOBAL;
    st = pk_upload(&pw, A);
    if (st == ODB_OK) st = pk_shape(&pw, &o, NULL, 1);
    if (st == ODB_OK) st = dalloc(&pw.b, (size_t)n * 8, "SpMV x");
    if (st == ODB_OK) st = dalloc(&pw.y, (size_t)n * 8, "SpMV y");
    if (st == ODB_OK && cudaMemcpy(pw.b, xs, (size_t)n * 8, cudaMemcpyHostToDevice) != cudaSuccess)
      st = odb_cuda_fail(cudaGetLastError(), "cudaMemcpy", __FILE__, __LINE__);
    for (int i = -3; st == ODB_OK && i < reps; i++) {
      st = timer_start(&t);
      if (st == ODB_OK) st = pk_spmv_launch(&pw, pw.b, pw.y);
      if (st == ODB_OK) st = timer_stop(&t, i >= 0 ? &tv[i] : seconds);
      timer_free(&t);
    }
  }
  if (st == ODB_OK && reps > 0) *seconds = median(tv, reps);
  cs_free(&cw); pk_free(&pw); fz_free(&fw);
  free(xs); free(tv);
  return st;
}

/* A in a format the impl takes (cpu: refused). */
extern "C" odb_status odb_krylov_gpu_spmv_seconds(const odb_sparse *A, odb_krylov_impl impl, int reps,
                                                  double *seconds, double *copy_bytes_per_s) {
  int ndev = 0;
  if (impl == ODB_KRY_IMPL_CPU || (unsigned)impl >= ODB_KRY_IMPL_COUNT)
    return ODB_FAIL(ODB_ERR_ARG, "SpMV timing: impl must be cusparse, fused or persistent");
  if (reps < 1 || reps > 100000) return ODB_FAIL(ODB_ERR_ARG, "SpMV timing: reps must be in 1..100000, got %d", reps);
  ODB_TRY(check_format(A, ODB_KRYLOV_BICGSTAB, impl));
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "SpMV timing: no CUDA device");
  }
  ODB_TRY(spmv_time(A, impl, reps, seconds));
  if (copy_bytes_per_s) ODB_TRY(odb_cuda_copy_bandwidth(copy_bytes_per_s));
  return ODB_OK;
}

/* }====== */
