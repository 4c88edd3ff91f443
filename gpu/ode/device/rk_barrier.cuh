/* rk_barrier.cuh - the barriers between the blocks of a tile of
   gpu_multiblock (Korch and Werner, "An in-depth introduction of
   multi-workgroup tiling for improving the locality of explicit one-step
   methods for ODE systems with limited access distance on GPUs",
   §4.3), also timed on their own by the barrier microbenchmark.
   Before it a source defines ODB_T (threads per block), ODB_G (blocks
   per barrier), ODB_WATCHDOG (nanoseconds a barrier may wait), ODB_GRID
   and ODB_BARB (where barrier B's flags start), and ODB_BAR_C (with
   <cooperative_groups.h>) for barrier C. odb_bar_a/b/c(bar, fail, group,
   member, k) return 1, or 0 when the watchdog fired or another block
   reported failure (*fail); k counts the barriers from 1.

   Words of bar: [0] counts the blocks leaving the kernel (the last one
   resets the rest for the next launch), [32 (1 + g)] is barrier A's
   counter of group g (a line of its own), from ODB_BARB on barrier B's
   entered flags, one per block, then its exit flags. Counters and flags
   only grow during a launch, so barrier k waits for k G arrivals (A) or
   for flags >= k (B). Every wait polls *fail and a clock: past
   ODB_WATCHDOG ns it sets *fail and returns 0, and so does every other
   waiting block, so a barrier that cannot complete ends the kernel with
   an error instead of hanging it. */
static __device__ __forceinline__ unsigned long long odb_clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static __device__ __forceinline__ unsigned odb_ld(const unsigned *p) {
  return *(const volatile unsigned *)p;
}
// Waits until *p >= k; 0 when the watchdog fired or *fail was set.
static __device__ int odb_wait_ge(const unsigned *p, unsigned k,
                                  unsigned *fail) {
  unsigned long long t0 = 0ull;
  while (odb_ld(p) < k) {
    {
      const unsigned long long t = odb_clock_ns();
      if (odb_ld(fail)) return 0;
      if (t0 == 0ull) t0 = t;
      else if (t - t0 > (unsigned long long)ODB_WATCHDOG) {
        atomicExch(fail, 1u);
        return 0;
      }
    }
  }
  return 1;
}
// Barrier A: one thread per block adds to the group's counter and waits
// for k G arrivals; the block's other threads wait at __syncthreads.
static __device__ int odb_bar_a(unsigned *bar, unsigned *fail,
                                unsigned grp, unsigned mem, unsigned k) {
  __shared__ int ok;
  (void)mem;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned *const c = bar + 32u * (1u + grp);
    __threadfence();
    atomicAdd(c, 1u);
    ok = odb_wait_ge(c, k * (unsigned)ODB_G, fail);
    __threadfence();
  }
  __syncthreads();
  return ok;
}
// Barrier B: every block sets its entered flag; the group's master block
// (member 0) waits for all of them, its threads in parallel, then sets
// every exit flag, on which the other blocks wait.
static __device__ int odb_bar_b(unsigned *bar, unsigned *fail,
                                unsigned grp, unsigned mem, unsigned k) {
  __shared__ int okb;
  unsigned *const in = bar + ODB_BARB + grp * (unsigned)ODB_G;
  unsigned *const ex = in + ODB_GRID;
  int ok = 1;
  __syncthreads();
  if (mem == 0u) {
    for (unsigned i = 1u + threadIdx.x; i < (unsigned)ODB_G; i += ODB_T)
      ok &= odb_wait_ge(in + i, k, fail);
    ok = __syncthreads_and(ok);
    if (!ok) return 0;
    __threadfence();
    for (unsigned i = 1u + threadIdx.x; i < (unsigned)ODB_G; i += ODB_T)
      *(volatile unsigned *)(ex + i) = k;
    return 1;
  }
  if (threadIdx.x == 0) {
    __threadfence();
    *(volatile unsigned *)(in + mem) = k;
    okb = odb_wait_ge(ex + mem, k, fail);
    __threadfence();
  }
  __syncthreads();
  return okb;
}
// A tile of one block: __syncthreads orders the block's global writes
// for its own threads, so no atomics are needed (single-block tiling).
static __device__ __forceinline__ int odb_bar_1(unsigned *bar,
    unsigned *fail, unsigned grp, unsigned mem, unsigned k) {
  (void)bar; (void)fail; (void)grp; (void)mem; (void)k;
  __syncthreads();
  return 1;
}
#ifdef ODB_BAR_C
// Barrier C: cooperative groups' grid sync (one group, cooperative
// launch; co-residency is guaranteed by the launch, no watchdog).
static __device__ int odb_bar_c(unsigned *bar, unsigned *fail,
                                unsigned grp, unsigned mem, unsigned k) {
  (void)bar; (void)fail; (void)grp; (void)mem; (void)k;
  cooperative_groups::this_grid().sync();
  return 1;
}
#endif
// The last block to leave resets the barrier words for the next launch.
static __device__ void odb_bar_exit(unsigned *bar, unsigned nwords) {
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(bar, 1u) == gridDim.x - 1u;
  }
  __syncthreads();
  if (!last) return;
  for (unsigned i = 1u + threadIdx.x; i < nwords; i += ODB_T) bar[i] = 0u;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) bar[0] = 0u;
}
