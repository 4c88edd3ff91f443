/* rk_reduce.cuh - the error norm's sum over the blocks of a step
   (kernels of a method with an error estimate). The block that finishes
   it writes *a.err2 and, for the host to wait on, a.note; the line
   ODB_GEN_NORM_DONE is what it does then: the generator puts the step
   controller's call there in devctl kernels (rk_ctl.cuh) and removes the
   line otherwise. The line ODB_GEN_NORM_SUM before it becomes the sum over
   the ranks (rk_xnorm.cuh) in xnorm kernels, else nothing. Needs odb_args (rk_args.cuh) and ODB_T. */
// Sums acc over the blocks in a fixed order: a tree per block, its sum
// in a.part[slot], and the last of the total blocks to finish (elected
// by a.ticket; they may span kernels of one stream) adds the partial
// sums up in index order into *a.err2 and resets the ticket. The tree
// is warp shuffles, then the warps' sums (two barriers, not log2 T).
static __device__ __forceinline__ double odb_block_sum(double v,
                                                       double *sh) {
#if ODB_T % 32 == 0
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31u) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < ODB_T / 32 ? sh[threadIdx.x] : 0.0;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;   // in thread 0
#else
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = ODB_T / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
#endif
}
static __device__ void odb_reduce(const odb_args &a, double acc,
                                  unsigned slot, unsigned total) {
  __shared__ double sh[ODB_T % 32 == 0 ? ODB_T / 32 : ODB_T];
  __shared__ bool last;
  acc = odb_block_sum(acc, sh);
  if (threadIdx.x == 0) {
    a.part[slot] = acc;
    __threadfence();
    last = atomicAdd(a.ticket, 1u) == total - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double v = 0.0;
  for (unsigned i = threadIdx.x; i < total; i += ODB_T)
    v += __ldcg(a.part + i);
  v = odb_block_sum(v, sh);
  if (threadIdx.x == 0) {
    ODB_GEN_NORM_SUM
    *a.err2 = v;
    if (a.note) {   // the host waits on it: the sum, then its number
      a.note[0] = v;
      __threadfence_system();
      *(volatile long long *)(a.note + 1) = a.seq;
    }
    *a.ticket = 0u;
    ODB_GEN_NORM_DONE
  }
}
