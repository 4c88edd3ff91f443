/* dist_gpu_link.cu - the halo exchange of mpi_gpu_stream2d between the
** GPUs of one host as a kernel (dist_gpu_link.h): the ranks' GPUs wait
** for each other through words in each other's memory, so a stream of
** attempts runs with no host round trip between them.
**
** Assumes: all ranks run on one host, each on a GPU of its own with
** peer access to its neighbours' (dist_gpu.c sets the link up only
** then); the buffers src and the words *_to are the neighbours' memory
** mapped by CUDA IPC; every rank queues the same sequence of exchanges.
** A spinning block is one block of a GPU that has nothing else to do
** until the neighbour answers; after timeout_ns it gives up, sets
** box->fail, and the caller reports the rank as lost (the exchange's
** numbers no longer agree, so the link is not used again). */
#include <stdint.h>

#include <cuda_runtime.h>

#include "odb_cuda_check.h"
#include "odb_dist_wait.cuh"
extern "C" {
#include "dist_gpu_link.h"
}

enum { XCHG_THREADS = 256, XCHG_BLOCKS = 264 };

/* The exchange (dist_gpu_link.h). */
__global__ void __launch_bounds__(XCHG_THREADS) k_xchg(const dgl_xchg a) {
  __shared__ int go, lost, cur;
  __shared__ unsigned long long e;
  __shared__ bool last;
  dgl_box *const box = a.box;
  if (threadIdx.x == 0) {
    const volatile odb_gen_ctl *c = a.ctl;
    go = !(c && c->done) && !*(volatile unsigned *)&box->fail;
    cur = c ? c->cur : 0;
    lost = 0;
    e = box->xchg + 1;
  }
  __syncthreads();
  if (!go) return;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {   /* this rank's state is whole: say so */
      __threadfence_system();
      for (int i = 0; i < 2; ++i)
        if (a.ready_to[i])
          *(volatile unsigned long long *)a.ready_to[i] = e;
    }
    for (int i = 0; i < 2 && !lost; ++i)
      if (a.src[i][0]) lost = odb_dwait_ge(&box->ready[i], e, &box->fail, a.timeout_ns);
    __threadfence_system();
  }
  __syncthreads();
  if (lost) return;
  for (int i = 0; i < 2; ++i) {
    if (!a.src[i][0]) continue;
    const double *s = a.src[i][cur] + a.from[i];
    double *d = a.y[cur] + a.dst[i];
    const long long first = (long long)blockIdx.x * XCHG_THREADS + threadIdx.x,
                    step = (long long)gridDim.x * XCHG_THREADS;
    if ((((uintptr_t)s | (uintptr_t)d) & 15) == 0 && a.count[i] % 2 == 0) {
      /* pairs: half the loads in flight over the link for the same rows */
      const double2 *s2 = reinterpret_cast<const double2 *>(s);
      double2 *d2 = reinterpret_cast<double2 *>(d);
      for (long long j = first; j < a.count[i] / 2; j += step)
        d2[j] = __ldcv(s2 + j);
    } else {
      for (long long j = first; j < a.count[i]; j += step)
        d[j] = __ldcv(s + j);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    last = atomicAdd(&box->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  /* every block has copied: tell the neighbours, and wait until they
     have copied this rank's rows before the stream goes on */
  for (int i = 0; i < 2; ++i)
    if (a.copied_to[i]) *(volatile unsigned long long *)a.copied_to[i] = e;
  for (int i = 0; i < 2; ++i)
    if (a.src[i][0] && odb_dwait_ge(&box->copied[i], e, &box->fail, a.timeout_ns)) break;
  box->xchg = e;
  box->ticket = 0u;
}

extern "C" odb_status dgl_xchg_launch(const dgl_xchg *a) {
  k_xchg<<<XCHG_BLOCKS, XCHG_THREADS>>>(*a);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return odb_cuda_fail(e, "k_xchg<<<>>> (mpi_gpu_stream2d halo exchange)",
                         __FILE__, __LINE__);
  return ODB_OK;
}
