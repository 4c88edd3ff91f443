/* s2d_cluster.cuh - the helpers of a cluster of blocks in gpu_stream2d
   (ODB_CL > 1: skew 2, lag 1, compute capability 9.0; empty otherwise).
   At a pass's end each block's edge thread (t = 0 with a block on its
   left, t = ODB_T - 1 with one on its right) sends the rows of
   Y_1..Y_{s-1} it has just stored in the stage rings to the neighbour's
   pad cells of the same rows, by st.async, which completes their bytes
   on the neighbour's mbarrier for that side and the pass's parity. The
   neighbour's edge thread arms that barrier and waits for it before
   stage 1 of its next pass (stage 0 reads y, whose pads the edge threads
   fetch themselves). A block sends pass k only after it has received its
   neighbour's pass k-1, and the neighbour receives pass k-1 before it
   sends pass k, so neither runs more than a pass ahead: two barriers a
   side and the 4-row rings suffice, as for the threads of one block. A
   wait longer than 2 s traps (a launch failure with the call and line)
   instead of hanging. Measured slower than strips with halo columns on
   an H100 (BENCHMARKS.md, "gpu_stream2d: layout measurements"), so only
   tiling.cluster asks for it.
   Needs ODB_S, ODB_K, ODB_T and odb_idx. */
#if ODB_CL > 1
#if __CUDA_ARCH__ < 900
#error a cluster of blocks needs compute capability 9.0
#endif
#define ODB_XBYTES ((ODB_S - 1) * ODB_K * 8)   // a side's cells a pass
static __device__ __forceinline__ unsigned odb_smem(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
// shared address a in the block of cluster rank r
static __device__ __forceinline__ unsigned odb_mapa(unsigned a, int r) {
  unsigned x;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(x) :
               "r"(a), "r"(r));
  return x;
}
static __device__ __forceinline__ void odb_cluster_sync(void) {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// waits for the neighbour's cells of pass k (barrier mb + 8 (k & 1))
static __device__ __forceinline__ void odb_xwait(unsigned mb, odb_idx k) {
  const unsigned bar = mb + 8u * (unsigned)(k & 1);
  const unsigned par = (unsigned)((k >> 1) & 1);
  unsigned done = 0;
  unsigned long long t0 = 0;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::
               "r"(bar), "n"(ODB_XBYTES) : "memory");
  do {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 "
                 "p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) :
                 "r"(bar), "r"(par) : "memory");
    if (!done) {   // a watchdog: 2 s without the cells is a fault
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (!t0) t0 = now;
      else if (now - t0 > 2000000000ull) __trap();
    }
  } while (!done);
}
// a cell (ODB_K doubles) to the neighbour's shared address x, its bytes
// completing on the neighbour's barrier mb
static __device__ __forceinline__ void odb_xsend(unsigned x, unsigned mb,
    const double *v) {
#if ODB_K % 2 == 0
  for (int c = 0; c < ODB_K; c += 2)
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64 "
                 "[%0], {%1, %2}, [%3];" :: "r"(x + 8 * c), "d"(v[c]),
                 "d"(v[c + 1]), "r"(mb) : "memory");
#else
  for (int c = 0; c < ODB_K; ++c)
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f64 "
                 "[%0], %1, [%2];" :: "r"(x + 8 * c), "d"(v[c]),
                 "r"(mb) : "memory");
#endif
}
#endif
