/* cuda_backend.cu - the "cuda" backend: device memory, copies, axpy, and
   the read and copy bandwidth of the device (odb_cuda_copy_bandwidth,
   odb_cuda_read_bandwidth). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "odb_bulk.cuh"
#include "odb_cuda_check.h"
#include "cuda_backend.h"
extern "C" {
#include "odb_measure.h"
}

/* Backend-private state: the device and what launches need to know. */
typedef struct odb_cuda {
  int device;
  int sm_count;
} odb_cuda;

enum { AXPY_THREADS = 256, AXPY_BLOCKS_PER_SM = 32 };

/*
** y[i] += a * x[i] over a grid-stride loop, so any grid size covers any n.
** x may equal y (each element is read before it is written by one thread).
*/
static __global__ void axpy_kernel(size_t n, double a, const double *x,
                                   double *y) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] += a * x[i];
}

/*
** Makes the backend's device current for the calling thread (engine
** threads other than the one that created the backend start on device 0).
*/
static odb_status cuda_use(odb_backend *b) {
  const odb_cuda *cu = (const odb_cuda *)b->impl;
  ODB_CUDA_CHECK(cudaSetDevice(cu->device));
  return ODB_OK;
}

/* Out of memory maps to ODB_ERR_NOMEM; the message gives the request. */
static odb_status cuda_alloc(odb_backend *b, size_t bytes, void **ptr) {
  cudaError_t err;
  char call[64];
  *ptr = NULL;
  ODB_TRY(cuda_use(b));
  err = cudaMalloc(ptr, bytes ? bytes : 1);
  if (err == cudaSuccess) return ODB_OK;
  *ptr = NULL;
  snprintf(call, sizeof call, "cudaMalloc(%zu bytes)", bytes);
  return odb_cuda_fail(err, call, __FILE__, __LINE__);
}

/* Errors cannot be returned here; a sticky error shows at the next call. */
static void cuda_free(odb_backend *b, void *ptr) {
  if (!ptr) return;
  if (cuda_use(b) != ODB_OK) return;
  if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
}

/* Synchronous with respect to the host (pageable host memory). */
static odb_status cuda_to_device(odb_backend *b, void *dst,
                                 const void *host_src, size_t bytes) {
  if (bytes == 0) return ODB_OK;
  ODB_TRY(cuda_use(b));
  ODB_CUDA_CHECK(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice));
  return ODB_OK;
}

/* Waits for earlier work on the default stream, so results are complete. */
static odb_status cuda_to_host(odb_backend *b, void *host_dst,
                               const void *src, size_t bytes) {
  if (bytes == 0) return ODB_OK;
  ODB_TRY(cuda_use(b));
  ODB_CUDA_CHECK(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost));
  return ODB_OK;
}

/* Device to device; may return before the copy is done (see sync). */
static odb_status cuda_copy(odb_backend *b, void *dst, const void *src,
                            size_t bytes) {
  if (bytes == 0) return ODB_OK;
  ODB_TRY(cuda_use(b));
  ODB_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  return ODB_OK;
}

/*
** Waits for all work on the device. A launch error not yet seen is
** reported first; errors raised while kernels ran come from the wait.
*/
static odb_status cuda_sync(odb_backend *b) {
  ODB_TRY(cuda_use(b));
  ODB_CUDA_CHECK(cudaGetLastError());
  ODB_CUDA_CHECK(cudaDeviceSynchronize());
  return ODB_OK;
}

/*
** One device attribute, 0 where this device or runtime does not report it
** (CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes
** remain).
*/
static int cuda_attr(enum cudaDeviceAttr attr, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

/* info arrives zeroed (odb_backend_query); only known fields are set. */
static odb_status cuda_query(odb_backend *b, odb_device_info *info) {
  const odb_cuda *cu = (const odb_cuda *)b->impl;
  cudaDeviceProp p;
  ODB_CUDA_CHECK(cudaGetDeviceProperties(&p, cu->device));
  snprintf(info->name, sizeof info->name, "%.*s", (int)sizeof info->name - 1,
           p.name);
  info->cc_major = p.major;
  info->cc_minor = p.minor;
  info->sm_count = p.multiProcessorCount;
  info->mem_bytes = p.totalGlobalMem;
  {
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) info->mem_free_bytes = fr;
    else (void)cudaGetLastError();
  }
  info->mem_bus_bits = p.memoryBusWidth;
  ODB_CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
  ODB_CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
  info->clock_mhz = cuda_attr(cudaDevAttrClockRate, cu->device) / 1000.0;
  info->mem_clock_mhz =
    cuda_attr(cudaDevAttrMemoryClockRate, cu->device) / 1000.0;
  info->l2_bytes = (size_t)cuda_attr(cudaDevAttrL2CacheSize, cu->device);
  if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id,
                            cu->device) != cudaSuccess) {
    (void)cudaGetLastError();   /* left "": NVML takes its first device */
    info->pci_bus_id[0] = '\0';
  }
  return ODB_OK;
}

/*
** Launches axpy on the default stream and returns without waiting; the
** launch itself is checked, errors while it runs show at sync or to_host.
*/
static odb_status cuda_axpy(odb_backend *b, size_t n, double a,
                            const double *x, double *y) {
  const odb_cuda *cu = (const odb_cuda *)b->impl;
  size_t blocks = (n + AXPY_THREADS - 1) / AXPY_THREADS;
  size_t max_blocks = (size_t)cu->sm_count * AXPY_BLOCKS_PER_SM;
  if (n == 0) return ODB_OK;
  if (max_blocks > 0 && blocks > max_blocks) blocks = max_blocks;
  ODB_TRY(cuda_use(b));
  axpy_kernel<<<(unsigned)blocks, AXPY_THREADS>>>(n, a, x, y);
  ODB_CUDA_CHECK(cudaGetLastError());
  return ODB_OK;
}

/* {====== read and copy bandwidth: the figures of the run */

enum { BW_REPS = 9, BW_PASSES = 10 };
enum { BW_DEVICES = 64 };   /* devices whose figures are cached */
enum { BW_READ_THREADS = 256, BW_READ_BLOCKS_PER_SM = 32 };
/* The bulk reader: one thread of a block keeps BW_BULK_STAGES copies of
   BW_BULK_CHUNK bytes in flight into shared memory (96 KiB a block, two
   blocks an SM: 192 KiB in flight an SM, far more than the bandwidth-delay
   product of about 30 KiB an SM). */
enum { BW_BULK_CHUNK = 16384, BW_BULK_STAGES = 6, BW_BULK_THREADS = 32 };

/*
** How the read figure is taken. A floor divides by it, so it must be the
** fastest a kernel can read, or a kernel that streams better than the
** measuring loop shows more than 100% of its floor; three readers are
** timed and the fastest median counts:
**   READ_STRIDE  16-byte loads, four in flight a thread, a grid-stride loop
**                over 32 blocks an SM (more than are resident);
**   READ_RESIDENT  16-byte streaming loads (__ldcs), eight in flight a
**                thread, over exactly the blocks that are resident;
**   READ_BULK    the copy engine (cp.async.bulk, sm_90) into shared memory:
**                what the tall & skinny and stream kernels read with;
**   READ_PAIR    two buffers at once, four streaming loads from each in
**                flight a thread: two streams keep more DRAM banks busy than
**                one (the tall & skinny AᵀB reads A and B side by side and
**                streamed 1-2% faster than any one-buffer reader on an H200).
** A pair pass reads both buffers: twice the bytes.
*/
enum { READ_STRIDE, READ_RESIDENT, READ_BULK, READ_PAIR, READ_KINDS };

/*
** Sums x[0..n) in four independent loads a thread per step (so enough
** loads are in flight to keep the memory busy); the sum is stored only in
** the case that never happens on the zeroed buffer, which keeps the loads
** without writing anything the timing would count.
*/
static __global__ void read_kernel(const double2 *__restrict__ x, size_t n,
                                   int passes, double *out) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int p = 0; p < passes; ++p) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
      double2 a = x[i], b = x[i + stride], c = x[i + 2 * stride],
              d = x[i + 3 * stride];
      s0 += a.x + a.y;
      s1 += b.x + b.y;
      s2 += c.x + c.y;
      s3 += d.x + d.y;
    }
    for (; i < n; i += stride) s0 += x[i].x + x[i].y;
  }
  s0 += s1 + s2 + s3;
  if (s0 == 1e300) *out = s0;
}

/* The same with eight streaming loads in flight a thread. */
static __global__ void read_kernel8(const double2 *__restrict__ x, size_t n,
                                    int passes, double *out) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
  for (int p = 0; p < passes; ++p) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 7 * stride < n; i += 8 * stride) {
      double2 v[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = __ldcs(x + i + k * stride);
#pragma unroll
      for (int k = 0; k < 8; ++k) s[k] += v[k].x + v[k].y;
    }
    for (; i < n; i += stride) s[0] += x[i].x + x[i].y;
  }
#pragma unroll
  for (int k = 1; k < 8; ++k) s[0] += s[k];
  if (s[0] == 1e300) *out = s[0];
}

/* x[0..n) and y[0..n) together, four streaming loads from each in flight. */
static __global__ void read_kernel_pair(const double2 *__restrict__ x,
                                        const double2 *__restrict__ y,
                                        size_t n, int passes, double *out) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
  for (int p = 0; p < passes; ++p) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
      double2 v[8];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        v[2 * k] = __ldcs(x + i + k * stride);
        v[2 * k + 1] = __ldcs(y + i + k * stride);
      }
#pragma unroll
      for (int k = 0; k < 8; ++k) s[k] += v[k].x + v[k].y;
    }
    for (; i < n; i += stride) s[0] += x[i].x + x[i].y + y[i].x + y[i].y;
  }
#pragma unroll
  for (int k = 1; k < 8; ++k) s[0] += s[k];
  if (s[0] == 1e300) *out = s[0];
}

/*
** Reads nchunks chunks of BW_BULK_CHUNK bytes with the copy engine, chunk
** c by block c mod gridDim.x, into a ring of BW_BULK_STAGES stages; the
** data is not used (the copy engine moves it whether or not anything reads
** it). Thread 0 issues and waits; the others only keep the block alive.
*/
static __global__ void read_bulk_kernel(const char *__restrict__ x,
                                        size_t nchunks, int passes) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long bar[BW_BULK_STAGES];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < BW_BULK_STAGES; ++s) odb_mbar_init(odb_smem_u32(bar + s), 1);
  {
    unsigned parity = 0;   /* bit s: the phase stage s waits for next */
    size_t k = 0;
    size_t total = nchunks * (size_t)passes;
    for (size_t c = blockIdx.x; c < total; c += gridDim.x, ++k) {
      int s = (int)(k % BW_BULK_STAGES);
      unsigned b = odb_smem_u32(bar + s);
      if (k >= BW_BULK_STAGES) {   /* the stage's last copy landed */
        odb_mbar_wait(b, (parity >> s) & 1u);
        parity ^= 1u << s;
      }
      odb_mbar_expect(b, BW_BULK_CHUNK);
      odb_bulk_g2s(ring + (size_t)s * BW_BULK_CHUNK,
                   x + (c % nchunks) * BW_BULK_CHUNK, BW_BULK_CHUNK, b);
    }
    for (size_t j = k > BW_BULK_STAGES ? k - BW_BULK_STAGES : 0; j < k; ++j) {
      int s = (int)(j % BW_BULK_STAGES);   /* the copies still in flight */
      odb_mbar_wait(odb_smem_u32(bar + s), (parity >> s) & 1u);
      parity ^= 1u << s;
    }
  }
}

/* Launches one pass of reader `kind` over bytes of a (b: the sink that is
   never written). */
static cudaError_t read_pass(int kind, int device, const void *a, void *b,
                             size_t bytes, int passes) {
  int sms = cuda_attr(cudaDevAttrMultiProcessorCount, device);
  size_t n2 = bytes / sizeof(double2);
  if (sms <= 0) sms = 32;
  if (kind == READ_STRIDE) {
    read_kernel<<<(unsigned)sms * BW_READ_BLOCKS_PER_SM, BW_READ_THREADS>>>(
        (const double2 *)a, n2, passes, (double *)b);
  } else if (kind == READ_RESIDENT) {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, read_kernel8, BW_READ_THREADS, 0) != cudaSuccess ||
        per_sm <= 0)
      per_sm = 1;
    read_kernel8<<<(unsigned)(sms * per_sm), BW_READ_THREADS>>>(
        (const double2 *)a, n2, passes, (double *)b);
  } else if (kind == READ_PAIR) {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, read_kernel_pair, BW_READ_THREADS, 0) != cudaSuccess ||
        per_sm <= 0)
      per_sm = 1;
    /* out is b itself: the sums of the zeroed buffers are 0, so nothing
       is ever stored */
    read_kernel_pair<<<(unsigned)(sms * per_sm), BW_READ_THREADS>>>(
        (const double2 *)a, (const double2 *)b, n2, passes, (double *)b);
  } else {
    size_t smem = (size_t)BW_BULK_CHUNK * BW_BULK_STAGES;
    read_bulk_kernel<<<(unsigned)sms * 2, BW_BULK_THREADS, smem>>>(
        (const char *)a, bytes / BW_BULK_CHUNK, passes);
  }
  return cudaGetLastError();
}

/* 1 when reader kind runs on device (the bulk reader needs sm_90 and its
   ring of shared memory). */
static int read_kind_runs(int kind, int device) {
  if (kind != READ_BULK) return 1;
  if (cuda_attr(cudaDevAttrComputeCapabilityMajor, device) < 9) return 0;
  return cudaFuncSetAttribute(read_bulk_kernel,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              BW_BULK_CHUNK * BW_BULK_STAGES) == cudaSuccess;
}

/*
** Times BW_REPS runs of what (after one warm-up) with events: copies of
** bytes between a and b alternating the direction (counting bytes read +
** written), or reads of a by reader kind (b receives nothing). Each timed
** run makes BW_PASSES passes: ten copies back to back, or one read kernel
** that loops over the buffer ten times, so that neither the ramp at the
** start and the tail at the end of a kernel (a pass over 8x the L2 takes
** about 0.24 ms on an H200) nor the gaps between launches lower the figure
** below what one long streaming kernel reaches (the tall & skinny AᵀB
** reads 17 GB in one 3.8 ms kernel): the floors divide by it and must not
** be beaten. *bps from the median seconds (odb_median).
*/
static odb_status time_runs(int read, int kind, int device, void *a,
                            void *b, size_t bytes, double *bps) {
  cudaEvent_t e0 = NULL, e1 = NULL;
  double sec[BW_REPS];
  odb_status st = ODB_OK;
  cudaError_t err = cudaEventCreate(&e0);
  if (err == cudaSuccess) err = cudaEventCreate(&e1);
  if (err == cudaSuccess) err = cudaMemset(a, 0, bytes);
  if (err == cudaSuccess && read) err = cudaMemset(b, 0, bytes);
  for (int r = -1; r < BW_REPS && err == cudaSuccess; ++r) {
    float ms = 0;
    err = cudaEventRecord(e0, 0);
    if (read)   /* one kernel: no launch gaps between the passes */
      err = read_pass(kind, device, a, b, bytes, BW_PASSES);
    for (int p = 0; !read && p < BW_PASSES && err == cudaSuccess; ++p)
      err = cudaMemcpyAsync((r + p) & 1 ? a : b, (r + p) & 1 ? b : a,
                            bytes, cudaMemcpyDeviceToDevice, 0);
    if (err == cudaSuccess) err = cudaEventRecord(e1, 0);
    if (err == cudaSuccess) err = cudaEventSynchronize(e1);
    if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 0) sec[r] = ms * 1e-3;   /* r = -1: the warm-up */
  }
  if (err != cudaSuccess)
    st = odb_cuda_fail(err, read ? "read bandwidth: events and reads"
                                 : "copy bandwidth: events and copies",
                       __FILE__, __LINE__);
  else
    *bps = (read && kind != READ_PAIR ? 1.0 : 2.0) * (double)bytes *
           BW_PASSES / odb_median(sec, BW_REPS);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  return st;
}

/* The read figure: the fastest of the readers that run (see READ_STRIDE);
   the copy figure: cudaMemcpyAsync's. */
static odb_status time_all(int read, int device, void *a, void *b,
                           size_t bytes, double *bps) {
  double best = 0, one = 0;
  if (!read) return time_runs(0, 0, device, a, b, bytes, bps);
  for (int kind = 0; kind < READ_KINDS; ++kind) {
    if (!read_kind_runs(kind, device)) {
      (void)cudaGetLastError();
      continue;
    }
    ODB_TRY(time_runs(1, kind, device, a, b, bytes, &one));
    if (one > best) best = one;
  }
  *bps = best;
  return ODB_OK;
}

/*
** Measures the current device: two buffers of 8 times its L2 cache, at
** least 256 MiB and at most 1 GiB each (so the data streams from memory,
** not from the L2), halved while they do not fit in the free memory with
** 64 MiB to spare, down to twice the L2 and at least 32 MiB. A read
** streams the first buffer; a copy goes between the two.
*/
static odb_status measure_bandwidth(int read, int device, double *bps) {
  const size_t mib = (size_t)1 << 20;
  size_t l2 = (size_t)cuda_attr(cudaDevAttrL2CacheSize, device);
  size_t bytes = 8 * l2, least = 2 * l2, fb = 0, tb = 0;
  void *x = NULL, *y = NULL;
  odb_status st;
  if (bytes < 256 * mib) bytes = 256 * mib;
  if (bytes > 1024 * mib) bytes = 1024 * mib;
  if (least < 32 * mib) least = 32 * mib;
  if (cudaMemGetInfo(&fb, &tb) != cudaSuccess) {
    (void)cudaGetLastError();
    fb = 0;                        /* unknown: the allocations tell */
  }
  while (fb > 0 && bytes / 2 >= least && 2 * bytes + 64 * mib > fb)
    bytes /= 2;
  while (bytes >= least) {
    if (cudaMalloc(&x, bytes) == cudaSuccess) {
      if (cudaMalloc(&y, bytes) == cudaSuccess) break;
      cudaFree(x);
      x = NULL;
    }
    (void)cudaGetLastError();
    y = NULL;
    bytes /= 2;
  }
  if (!x || !y)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s bandwidth: no room for two buffers "
                    "of %zu MiB on the device", read ? "read" : "copy",
                    least / mib);
  st = time_all(read, device, x, y, bytes, bps);
  cudaFree(x);
  cudaFree(y);
  return st;
}

/* One measurement of read (1) or copy (0) per device and process. */
static odb_status device_bandwidth(int read, double *bytes_per_s) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static double cached[2][BW_DEVICES];
  int device = 0;
  odb_status st = ODB_OK;
  *bytes_per_s = 0;
  ODB_CUDA_CHECK(cudaGetDevice(&device));
  pthread_mutex_lock(&lock);
  if (device < 0 || device >= BW_DEVICES) {
    double once = 0;               /* beyond the cache: measured each time */
    st = measure_bandwidth(read, device, &once);
    *bytes_per_s = once;
  } else {
    if (!(cached[read][device] > 0))
      st = measure_bandwidth(read, device, &cached[read][device]);
    if (st == ODB_OK) *bytes_per_s = cached[read][device];
  }
  pthread_mutex_unlock(&lock);
  return st;
}

/* See the header: one measurement per device and process. */
extern "C" odb_status odb_cuda_copy_bandwidth(double *bytes_per_s) {
  return device_bandwidth(0, bytes_per_s);
}

/* See the header: one measurement per device and process. */
extern "C" odb_status odb_cuda_read_bandwidth(double *bytes_per_s) {
  return device_bandwidth(1, bytes_per_s);
}

/* The backend's figures in GB/s, on the backend's device. */
static odb_status cuda_copy_bandwidth(odb_backend *b, double *gbs) {
  double bps = 0;
  ODB_TRY(cuda_use(b));
  ODB_TRY(odb_cuda_copy_bandwidth(&bps));
  *gbs = bps * 1e-9;
  return ODB_OK;
}

static odb_status cuda_read_bandwidth(odb_backend *b, double *gbs) {
  double bps = 0;
  ODB_TRY(cuda_use(b));
  ODB_TRY(odb_cuda_read_bandwidth(&bps));
  *gbs = bps * 1e-9;
  return ODB_OK;
}

/* The peaks of odb_fp64_peak.cu on the backend's device (measured once a
   device and process there). */
static odb_status cuda_fp64_peak(odb_backend *b, odb_fp64_peaks *out) {
  memset(out, 0, sizeof *out);
  ODB_TRY(cuda_use(b));
  return odb_cuda_fp64_peak(out);
}

/* }====== */

/* Frees only the private state; buffers must have been destroyed before. */
static void cuda_destroy(odb_backend *b) {
  free(b->impl);
  b->impl = NULL;
}

/* In the field order of odb_backend_ops (C++ has no designated fields). */
static const odb_backend_ops cuda_ops = {
  "cuda",          /* name */
  cuda_alloc,      /* alloc */
  cuda_free,       /* free */
  cuda_to_device,  /* to_device */
  cuda_to_host,    /* to_host */
  cuda_query,      /* query */
  cuda_copy,       /* copy */
  cuda_sync,       /* sync */
  cuda_axpy,       /* axpy */
  cuda_destroy,    /* destroy */
  cuda_copy_bandwidth, /* copy_bandwidth */
  cuda_read_bandwidth, /* read_bandwidth */
  cuda_fp64_peak,  /* fp64_peak */
};

/* Assumes why has room for len > 0 bytes. */
extern "C" int odb_cuda_device_count(char *why, size_t len) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(why, len, "cudaGetDeviceCount: %s", cudaGetErrorString(err));
    return 0;
  }
  if (n <= 0) snprintf(why, len, "cudaGetDeviceCount: 0 devices");
  else snprintf(why, len, "%d device%s", n, n == 1 ? "" : "s");
  return n > 0 ? n : 0;
}

/*
** Selects the device and reads its SM count (for launch sizes); this also
** creates the device's primary context, so later calls do not pay for it.
*/
extern "C" odb_status odb_cuda_backend_create(odb_ctx *ctx, int device,
                                              odb_backend **out) {
  odb_backend *b = NULL;
  odb_cuda *cu = NULL;
  int sms = 0;
  odb_status st;
  *out = NULL;
  b = (odb_backend *)calloc(1, sizeof *b);
  cu = (odb_cuda *)calloc(1, sizeof *cu);
  if (!b || !cu) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "cuda backend state");
    goto fail;
  }
  cu->device = device;
  b->ops = &cuda_ops;
  b->impl = cu;
  b->ctx = ctx;
  b->host_memory = 0;
  st = cuda_use(b);
  if (st != ODB_OK) goto fail;
  {
    cudaError_t err =
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) {
      st = odb_cuda_fail(err, "cudaDeviceGetAttribute(MultiProcessorCount)",
                         __FILE__, __LINE__);
      goto fail;
    }
  }
  cu->sm_count = sms;
  *out = b;
  return ODB_OK;
fail:
  free(cu);
  free(b);
  return st;
}
