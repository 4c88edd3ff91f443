/* test_cuda_backend.c - the "cuda" backend against the CPU backend (TAP). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "odebench.h"
#include "odb_kernels.h"
#include "cuda_backend.h"

#define N ((size_t)1000000 + 3)   /* not a multiple of any block size */

/* Fills v with uniform values in [-1, 1). */
static void fill(odb_rng *r, double *v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = 2.0 * odb_rng_uniform(r) - 1.0;
}

/*
** Runs y += a*x on backend b with host inputs x, y and returns the result
** in out. Assumes b has an axpy op.
*/
static odb_status run_axpy(odb_backend *b, double a, const double *x,
                           const double *y, double *out) {
  odb_buffer *bx = NULL, *by = NULL;
  size_t bytes = N * sizeof(double);
  odb_status st = odb_buffer_create(b, bytes, &bx);
  if (st == ODB_OK) st = odb_buffer_create(b, bytes, &by);
  if (st == ODB_OK) st = odb_buffer_write(bx, 0, x, bytes);
  if (st == ODB_OK) st = odb_buffer_write(by, 0, y, bytes);
  if (st == ODB_OK) st = b->ops->axpy(b, N, a, bx->data, by->data);
  if (st == ODB_OK) st = odb_backend_sync(b);
  if (st == ODB_OK) st = odb_buffer_read(by, 0, out, bytes);
  odb_buffer_destroy(bx);
  odb_buffer_destroy(by);
  return st;
}

/*
** Largest error of the GPU result relative to |y| + |a*x|, a bound that
** holds with and without fused multiply-add on either side.
*/
static double max_rel_err(double a, const double *x, const double *y,
                          const double *gpu, const double *cpu,
                          size_t *exact) {
  double worst = 0.0;
  *exact = 0;
  for (size_t i = 0; i < N; ++i) {
    double scale = fabs(y[i]) + fabs(a * x[i]);
    double e = fabs(gpu[i] - cpu[i]) / (scale > 0 ? scale : 1.0);
    if (gpu[i] == cpu[i]) ++*exact;
    if (!(e <= worst)) worst = e;   /* NaN counts as the worst */
  }
  return worst;
}

/* Name, SMs, memory and versions as the runtime reports them. */
static void test_query(odb_backend *gpu) {
  odb_device_info info;
  odb_status st = odb_backend_query(gpu, &info);
  tap_ok(st == ODB_OK, "query: %s", st == ODB_OK ? "ok" : odb_last_error());
  tap_ok(info.name[0] != '\0', "device name \"%s\"", info.name);
  tap_ok(info.sm_count > 0, "SMs: %d", info.sm_count);
  tap_ok(info.mem_bytes > 0, "memory: %.1f GiB", info.mem_bytes / 1073741824.0);
  tap_ok(info.cc_major >= 7, "compute capability %d.%d", info.cc_major,
         info.cc_minor);
  tap_ok(info.runtime_version > 0, "runtime %d, driver %d",
         info.runtime_version, info.driver_version);
  tap_diag("clock %.0f MHz, memory clock %.0f MHz, bus %d bits",
           info.clock_mhz, info.mem_clock_mhz, info.mem_bus_bits);
}

/*
** The measured FP64 peaks and their clocks: both clocks positive and at
** most the device's maximum, and each peak's FLOP a cycle and SM within
** what the hardware issues (64 FP64 FMA a clock and SM at most, 256 FLOP
** through the FP64 tensor cores of a Hopper SM); a second call gives the
** figures the first one measured.
*/
static void test_peaks(odb_backend *gpu) {
  odb_device_info info;
  odb_fp64_peaks a, b;
  double sms, vec, ten;
  odb_status st = odb_backend_query(gpu, &info);
  if (st == ODB_OK) st = odb_backend_fp64_peak(gpu, &a);
  tap_ok(st == ODB_OK, "fp64 peaks: %s",
         st == ODB_OK ? "measured" : odb_last_error());
  if (st != ODB_OK) return;
  sms = info.sm_count > 0 ? info.sm_count : 1;
  if (!(info.clock_mhz > 0)) info.clock_mhz = 1e9;   /* not known */
  tap_ok(a.flops > 0 && a.mhz > 0 && a.mhz <= 1.02 * info.clock_mhz,
         "DFMA %.0f GFLOP/s at %.0f MHz (device maximum %.0f)",
         a.flops / 1e9, a.mhz, info.clock_mhz);
  vec = a.mhz > 0 ? a.flops / (sms * a.mhz * 1e6) : 0;
  tap_ok(vec > 0 && vec <= 128 * 1.02, "DFMA %.1f FLOP a cycle and SM "
         "(at most 128)", vec);
  if (info.cc_major >= 8) {
    ten = a.tensor_mhz > 0 ? a.tensor_flops / (sms * a.tensor_mhz * 1e6) : 0;
    tap_ok(a.tensor_mhz > 0 && a.tensor_mhz <= 1.02 * info.clock_mhz,
           "DMMA %.0f GFLOP/s at %.0f MHz", a.tensor_flops / 1e9,
           a.tensor_mhz);
    tap_ok(ten > 0 && ten <= 256 * 1.02, "DMMA %.1f FLOP a cycle and SM "
           "(at most 256)", ten);
  } else {
    tap_ok(a.tensor_flops == 0, "no FP64 tensor cores below 8.0");
  }
  st = odb_backend_fp64_peak(gpu, &b);
  tap_ok(st == ODB_OK && memcmp(&a, &b, sizeof a) == 0,
         "a second call gives the same figures");
}

/* axpy on fresh random data, GPU against CPU. */
static void test_axpy(odb_backend *gpu, odb_backend *cpu, odb_rng *r) {
  size_t bytes = N * sizeof(double), exact = 0;
  double *x = malloc(bytes), *y = malloc(bytes);
  double *gy = malloc(bytes), *cy = malloc(bytes);
  double a = 2.0 * odb_rng_uniform(r) - 1.0, err;
  odb_status sg, sc;
  if (!x || !y || !gy || !cy) {
    tap_ok(0, "axpy: host memory");
    goto done;
  }
  fill(r, x, N);
  fill(r, y, N);
  sg = run_axpy(gpu, a, x, y, gy);
  tap_ok(sg == ODB_OK, "axpy on cuda: %s",
         sg == ODB_OK ? "ok" : odb_last_error());
  sc = run_axpy(cpu, a, x, y, cy);
  tap_ok(sc == ODB_OK, "axpy on cpu: %s",
         sc == ODB_OK ? "ok" : odb_last_error());
  if (sg != ODB_OK || sc != ODB_OK) goto done;
  err = max_rel_err(a, x, y, gy, cy, &exact);
  tap_ok(err <= 1e-15, "axpy n=%zu a=%.17g: max relative error %.3g "
         "(%zu of %zu exactly equal)", N, a, err, exact, N);
done:
  free(x);
  free(y);
  free(gy);
  free(cy);
}

/* host -> A, A -> B on the device, B -> host: the same bytes come back. */
static void test_copy(odb_backend *gpu, odb_rng *r) {
  size_t bytes = N * sizeof(double);
  double *h = malloc(bytes), *back = malloc(bytes);
  odb_buffer *a = NULL, *b = NULL;
  odb_status st = (h && back) ? ODB_OK : ODB_ERR_NOMEM;
  if (st == ODB_OK) {
    fill(r, h, N);
    memset(back, 0, bytes);
  }
  if (st == ODB_OK) st = odb_buffer_create(gpu, bytes, &a);
  if (st == ODB_OK) st = odb_buffer_create(gpu, bytes, &b);
  if (st == ODB_OK) st = odb_buffer_write(a, 0, h, bytes);
  if (st == ODB_OK) st = odb_backend_copy(gpu, b->data, a->data, bytes);
  if (st == ODB_OK) st = odb_backend_sync(gpu);
  if (st == ODB_OK) st = odb_buffer_read(b, 0, back, bytes);
  tap_ok(st == ODB_OK, "device-to-device copy: %s",
         st == ODB_OK ? "ok" : odb_last_error());
  tap_ok(st == ODB_OK && memcmp(h, back, bytes) == 0,
         "copy round trip returns the same %zu bytes", bytes);
  /* a part in the middle, at element offsets, through the buffer API */
  if (st == ODB_OK) {
    size_t off = 12345, cnt = 1000;
    double part[1000];
    st = odb_buffer_read(b, off * sizeof(double), part, cnt * sizeof(double));
    tap_ok(st == ODB_OK && memcmp(part, h + off, sizeof part) == 0,
           "partial read at offset %zu", off);
  }
  odb_buffer_destroy(a);
  odb_buffer_destroy(b);
  free(h);
  free(back);
}

/* 1 PiB cannot be had: ODB_ERR_NOMEM, cudaMalloc named, device still fine. */
static void test_oom(odb_backend *gpu) {
  odb_buffer *big = NULL, *small = NULL;
  size_t pib = (size_t)1 << 50;
  double one = 1.0, got = 0.0;
  odb_status st;
  odb_clear_error();
  st = odb_buffer_create(gpu, pib, &big);
  tap_ok(st == ODB_ERR_NOMEM && big == NULL, "1 PiB allocation fails with "
         "ODB_ERR_NOMEM (got %s)", odb_status_name(st));
  tap_ok(strstr(odb_last_error(), "cudaMalloc") != NULL,
         "message names cudaMalloc: \"%s\"", odb_last_error());
  odb_buffer_destroy(big);
  /* the failed allocation must not leak into the next launch check */
  st = odb_buffer_create(gpu, sizeof one, &small);
  if (st == ODB_OK) st = odb_buffer_write(small, 0, &one, sizeof one);
  if (st == ODB_OK) st = gpu->ops->axpy(gpu, 1, 2.0, small->data, small->data);
  if (st == ODB_OK) st = odb_backend_sync(gpu);
  if (st == ODB_OK) st = odb_buffer_read(small, 0, &got, sizeof got);
  tap_ok(st == ODB_OK && got == 3.0, "device usable after the failure "
         "(x += 2x with x = 1 gives %g): %s", got,
         st == ODB_OK ? "ok" : odb_last_error());
  odb_buffer_destroy(small);
}

/*
** A failing CUDA call (a device ordinal that does not exist) reports the
** call in the message and this backend's source file and line as where.
*/
static void test_error_place(odb_ctx *ctx) {
  odb_backend *b = NULL;
  const char *where;
  odb_status st;
  odb_clear_error();
  st = odb_cuda_backend_create(ctx, 1000000, &b);
  where = odb_last_error_where();
  tap_ok(st == ODB_ERR_BACKEND && b == NULL, "backend on device 1000000 "
         "fails with ODB_ERR_BACKEND (got %s)", odb_status_name(st));
  tap_ok(strstr(odb_last_error(), "cudaSetDevice") != NULL &&
         strstr(odb_last_error(), "failed:") != NULL,
         "message names the call: \"%s\"", odb_last_error());
  {
    const char *colon = strrchr(where, ':');
    tap_ok(strstr(where, "cuda_backend.cu:") != NULL && colon &&
           atoi(colon + 1) > 0, "where names file and line: \"%s\"", where);
  }
  odb_backend_destroy(b);
}

int main(void) {
  odb_ctx_opts o = {0};
  odb_ctx *ctx = NULL;
  odb_backend *gpu, *cpu;
  odb_rng r;
  uint64_t seed = (uint64_t)time(NULL);
  odb_status st;
  o.seed = seed;
  o.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&o, &ctx) != ODB_OK) {
    printf("Bail out! odb_ctx_create: %s\n", odb_last_error());
    return 1;
  }
  st = odb_kernels_register(ctx);
  gpu = odb_ctx_backend(ctx, "cuda");
  if (st != ODB_OK || !gpu) {
    for (int i = 0; i < ctx->nnotes; ++i) tap_diag("%s", ctx->backend_notes[i]);
    if (st != ODB_OK) tap_diag("odb_kernels_register: %s", odb_last_error());
    odb_ctx_destroy(ctx);
    printf("1..0 # SKIP no GPU\n");
    return 77;
  }
  cpu = odb_ctx_backend(ctx, "cpu");
  tap_ok(odb_kernels_have_cuda() == 1, "built with CUDA");
  tap_ok(gpu->host_memory == 0 && gpu->ops->axpy != NULL,
         "cuda backend: device memory, has axpy");
  tap_diag("seed %llu", (unsigned long long)seed);
  odb_rng_seed(&r, seed);
  test_query(gpu);
  test_peaks(gpu);
  test_axpy(gpu, cpu, &r);
  test_copy(gpu, &r);
  test_oom(gpu);
  test_error_place(ctx);
  odb_ctx_destroy(ctx);
  return tap_done();
}
