/* odb_dist_wait.cuh - the device-side wait of the links between the GPUs
   of one host (dist/ode/dist_gpu_link.cu, dist/sparse/odb_dist_link.cu):
   one thread spins on a word that another rank's GPU writes into this
   GPU's memory over CUDA IPC, with a deadline from the global timer.
   CUDA sources only. */
#ifndef ODB_DIST_WAIT_CUH
#define ODB_DIST_WAIT_CUH

/* Nanoseconds of the GPU's global timer. */
static __device__ __forceinline__ unsigned long long odb_dwait_now(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Waits until *w >= e; 0 when it came, else 1 after timeout_ns with
   *fail set (a word the caller's kernels check before they wait again). */
static __device__ int odb_dwait_ge(const unsigned long long *w, unsigned long long e,
                                   unsigned *fail, long long timeout_ns) {
  const unsigned long long t0 = odb_dwait_now();
  while (*(const volatile unsigned long long *)w < e)
    if ((long long)(odb_dwait_now() - t0) > timeout_ns) {
      atomicOr(fail, 1u);
      return 1;
    }
  return 0;
}

#endif
