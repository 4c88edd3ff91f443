/* odb_fp64_peak.cu - the FP64 peaks of the device, measured: fused
   multiply-adds on the FP64 pipes (DFMA) and on the tensor cores (DMMA),
   the compute roof of the GPU RK kernels (odb_cuda_fp64_peak). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "odb_cuda_check.h"
#include "cuda_backend.h"
extern "C" {
#include "odb_measure.h"
}

/*
** What a peak is checked against: an H100 or H200 SXM has 132 SMs, each
** issuing 64 FP64 FMA a clock (4 sub-partitions x 16 lanes), so at the
** 1.98 GHz boost clock 132 x 64 x 2 x 1.98e9 = 33.5 TFLOP/s on the
** vector pipes (NVIDIA quotes 34), and twice that, 67 TFLOP/s, through
** the tensor cores' DMMA. A measured figure within a few per cent below
** these is the clock the card holds under this load (its power limit can
** lower it), and that is the figure the roofline takes.
**
** Vector: every thread runs PK_CHAINS independent chains x = fma(x, a, b),
** 8 blocks of 256 threads an SM (64 warps, the most an SM holds), so each
** sub-partition has 16 warps x 8 chains of independent DFMA to hide their
** latency (a few clocks) behind. Tensor: every warp runs PK_MMA chains
** of mma.sync f64, its accumulator fed back: m16n8k16 (2048 FMA, 4096 FLOP
** an instruction) from compute capability 9.0, m8n8k4 (256 FMA) on 8.x.
** The larger shape is the one that reaches the tensor cores' rate on a
** Hopper card: m8n8k4 there runs no faster than the DFMA pipes (33.0
** TFLOP/s on an H200, against 35.9 TFLOP/s that the tall & skinny
** kernels reach with m16n8k4 and m16n8k8). Each kernel runs PK_REPS times after a
** warm-up, timed with events; the peak is from the median time. A launch
** takes about 7 ms (DFMA) and 17 ms (DMMA) on an H200.
**
** The SM clock of each run comes from the device itself: the first thread
** of block 0 reads the cycle counter (clock64) and the global nanosecond
** timer (%globaltimer) before and after its loop, which spans the run (all
** blocks are resident at once). Cycles over nanoseconds is the clock the
** peak was measured at; a kernel that runs at another clock (an H200 at
** its 700 W cap holds 1.2-1.6 GHz under long FP64 tensor loads, against
** the 1.98 GHz of these short runs) has the peak times its clock over
** this one as its roof.
*/
enum {
  PK_THREADS = 256, PK_BLOCKS_PER_SM = 8, PK_CHAINS = 8, PK_ITERS = 65536,
  PK_MMA = 4, PK_MMA_ITERS = 32768, PK_REPS = 9, PK_DEVICES = 64,
  /* m16n8k16 holds 16 fragment registers a chain: 2 blocks of 256 threads
     an SM leave 128 registers a thread (16 warps, 4 chains each) */
  PK_MMA_BLOCKS_PER_SM = 2
};

/* The cycle counter and the global timer (ns), read together. */
static __device__ __forceinline__ void clock_pair(unsigned long long *c,
                                                  unsigned long long *ns) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *c = (unsigned long long)clock64();
  *ns = t;
}

/* Block 0's first thread: cycles and nanoseconds of its run into clk[0],
   clk[1] (start: c0, t0). */
static __device__ __forceinline__ void clock_span(unsigned long long c0,
                                                  unsigned long long t0,
                                                  unsigned long long *clk) {
  unsigned long long c1, t1;
  clock_pair(&c1, &t1);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clk[0] = c1 - c0;
    clk[1] = t1 - t0;
  }
}

/* PK_CHAINS DFMA chains a thread, PK_ITERS steps; the sum is stored only
   in a case that does not happen, which keeps the chains alive. */
static __global__ void __launch_bounds__(PK_THREADS, PK_BLOCKS_PER_SM)
dfma_kernel(double a, double b, double *out, unsigned long long *clk) {
  unsigned long long c0, t0;
  double x[PK_CHAINS];
  clock_pair(&c0, &t0);
#pragma unroll
  for (int k = 0; k < PK_CHAINS; ++k) x[k] = (double)(threadIdx.x + k);
#pragma unroll 16
  for (int i = 0; i < PK_ITERS; ++i) {
#pragma unroll
    for (int k = 0; k < PK_CHAINS; ++k) x[k] = fma(x[k], a, b);
  }
  double s = 0;
#pragma unroll
  for (int k = 0; k < PK_CHAINS; ++k) s += x[k];
  if (s == -1.0) *out = s;
  clock_span(c0, t0, clk);
}

/* PK_MMA DMMA chains a warp, iters (PK_MMA_ITERS) steps: d = A B + d.
   From compute capability 9.0 m16n8k16: the thread's 8 elements of A
   (16 x 16, row), 4 of B (16 x 8, col) and 4 of d (16 x 8); on 8.x
   m8n8k4: one of A (8 x 4), one of B (4 x 8) and two of d (8 x 8).
   Nothing below 8.0 (no f64 mma). The count comes at run time and the
   loop is left as the compiler makes it: the same loop over a constant
   count unrolled 4 times reads 63.7 TFLOP/s on an H200, this one 66.0
   (253 FLOP a cycle and SM of the 256 the tensor cores issue), both at
   1980 MHz. */
static __global__ void __launch_bounds__(PK_THREADS, PK_MMA_BLOCKS_PER_SM)
dmma_kernel(double a, double b, int iters, double *out,
            unsigned long long *clk) {
  unsigned long long c0, t0;
  clock_pair(&c0, &t0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  double d[PK_MMA][4];
  const double av = a * (double)(threadIdx.x & 31u), bv = b;
#pragma unroll
  for (int k = 0; k < PK_MMA; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = k;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < PK_MMA; ++k)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
                   "{%0, %1, %2, %3}, {%4, %4, %4, %4, %4, %4, %4, %4}, "
                   "{%5, %5, %5, %5}, {%0, %1, %2, %3};"
                   : "+d"(d[k][0]), "+d"(d[k][1]), "+d"(d[k][2]),
                     "+d"(d[k][3])
                   : "d"(av), "d"(bv));
  }
  double s = 0;
#pragma unroll
  for (int k = 0; k < PK_MMA; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
  if (s == -1.0) *out = s;
  clock_span(c0, t0, clk);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  double d[PK_MMA][2];
  const double av = a * (double)(threadIdx.x & 31u), bv = b;
#pragma unroll
  for (int k = 0; k < PK_MMA; ++k) d[k][0] = d[k][1] = (double)k;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < PK_MMA; ++k)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                   "{%0, %1}, {%2}, {%3}, {%0, %1};"
                   : "+d"(d[k][0]), "+d"(d[k][1])
                   : "d"(av), "d"(bv));
  }
  double s = 0;
#pragma unroll
  for (int k = 0; k < PK_MMA; ++k) s += d[k][0] + d[k][1];
  if (s == -1.0) *out = s;
  clock_span(c0, t0, clk);
#else
  (void)a;
  (void)b;
  (void)iters;
  (void)out;
  (void)c0;
  (void)t0;
  (void)clk;
#endif
}

/*
** Times PK_REPS launches of one kernel (after a warm-up) of `blocks`
** blocks with events; *flops = the FLOP of a launch over the median time,
** *mhz = the median of the launches' SM clocks (block 0's cycles over its
** nanoseconds; 0 where the timer did not move). clk: two counters on the
** device.
*/
static odb_status time_kernel(int tensor, unsigned blocks, double *out,
                              unsigned long long *clk, double flop,
                              double *flops, double *mhz) {
  cudaEvent_t e0 = NULL, e1 = NULL;
  double sec[PK_REPS], clock[PK_REPS];
  unsigned long long span[2];
  odb_status st = ODB_OK;
  cudaError_t err = cudaEventCreate(&e0);
  if (err == cudaSuccess) err = cudaEventCreate(&e1);
  for (int r = -1; r < PK_REPS && err == cudaSuccess; ++r) {
    float ms = 0;
    err = cudaEventRecord(e0, 0);
    if (err == cudaSuccess) {
      if (tensor)
        dmma_kernel<<<blocks, PK_THREADS>>>(1e-3, 1e-3, PK_MMA_ITERS, out,
                                            clk);
      else dfma_kernel<<<blocks, PK_THREADS>>>(0.999999, 1e-6, out, clk);
      err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaEventRecord(e1, 0);
    if (err == cudaSuccess) err = cudaEventSynchronize(e1);
    if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, e0, e1);
    if (err == cudaSuccess)
      err = cudaMemcpy(span, clk, sizeof span, cudaMemcpyDeviceToHost);
    if (r >= 0) {   /* r = -1: the warm-up */
      sec[r] = ms * 1e-3;
      clock[r] = span[1] > 0 ? 1e3 * (double)span[0] / (double)span[1] : 0;
    }
  }
  if (err != cudaSuccess)
    st = odb_cuda_fail(err, tensor ? "FP64 tensor peak: events and DMMA "
                                     "launches"
                                   : "FP64 peak: events and DFMA launches",
                       __FILE__, __LINE__);
  else {
    *flops = flop / odb_median(sec, PK_REPS);
    *mhz = odb_median(clock, PK_REPS);
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  return st;
}

/* Both peaks of the current device and their clocks (tensor 0 below
   compute capability 8). */
static odb_status measure_peaks(int device, odb_fp64_peaks *pk) {
  int sms = 0, major = 0;
  double *out = NULL, threads;
  unsigned long long *clk = NULL;
  unsigned blocks;
  odb_status st;
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                        device));
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&major,
                                        cudaDevAttrComputeCapabilityMajor,
                                        device));
  blocks = (unsigned)(sms > 0 ? sms : 1) * PK_BLOCKS_PER_SM;
  threads = (double)blocks * PK_THREADS;
  ODB_CUDA_CHECK(cudaMalloc((void **)&out, sizeof *out));
  if (cudaMalloc((void **)&clk, 2 * sizeof *clk) != cudaSuccess) {
    cudaFree(out);
    return ODB_FAIL(ODB_ERR_NOMEM, "FP64 peak: 16 bytes of device memory");
  }
  st = time_kernel(0, blocks, out, clk, 2.0 * threads * PK_CHAINS * PK_ITERS,
                   &pk->flops, &pk->mhz);
  blocks = (unsigned)(sms > 0 ? sms : 1) * PK_MMA_BLOCKS_PER_SM;
  threads = (double)blocks * PK_THREADS;
  if (st == ODB_OK && major >= 8)   /* a warp's mma: m16n8k16 or m8n8k4 */
    st = time_kernel(1, blocks, out, clk, (major >= 9 ? 4096.0 : 512.0) *
                                              (threads / 32) * PK_MMA *
                                              PK_MMA_ITERS,
                     &pk->tensor_flops, &pk->tensor_mhz);
  cudaFree(clk);
  cudaFree(out);
  return st;
}

/* See cuda_backend.h: one measurement per device and process. */
extern "C" odb_status odb_cuda_fp64_peak(odb_fp64_peaks *out) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static odb_fp64_peaks cached[PK_DEVICES];
  odb_fp64_peaks once;
  int device = 0;
  odb_status st = ODB_OK;
  memset(out, 0, sizeof *out);
  memset(&once, 0, sizeof once);
  ODB_CUDA_CHECK(cudaGetDevice(&device));
  pthread_mutex_lock(&lock);
  if (device >= 0 && device < PK_DEVICES && cached[device].flops > 0) {
    once = cached[device];
  } else {   /* kept only when both were measured */
    st = measure_peaks(device, &once);
    if (st == ODB_OK && device >= 0 && device < PK_DEVICES)
      cached[device] = once;
  }
  pthread_mutex_unlock(&lock);
  if (st == ODB_OK) *out = once;
  return st;
}
