/* odb_bulk.cuh - the sm_90 bulk copy engine (TMA without a tensor map):
   cp.async.bulk from global to shared memory, completing on an mbarrier
   that counts the bytes, and from shared to global memory, completing in
   bulk groups. The one home of these helpers for every kernel
   that streams through shared memory. Below sm_90 they compile to nothing
   (ODB_BULK is 0): callers check ODB_BULK and take another path. */
#ifndef ODB_BULK_CUH
#define ODB_BULK_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ODB_BULK 1
#else
#define ODB_BULK 0
#endif

/* The shared-memory address of p, as the PTX operands want it. */
static __device__ __forceinline__ unsigned odb_smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* Initializes mbarrier bar for `count` arrivals and makes it visible to
   the copy engine (the async proxy). One thread calls it, then the block
   synchronizes. */
static __device__ __forceinline__ void odb_mbar_init(unsigned bar,
                                                     unsigned count) {
#if ODB_BULK
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar),
               "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* Arms mbarrier bar for `bytes` more bytes (and arrives: count 1). */
static __device__ __forceinline__ void odb_mbar_expect(unsigned bar,
                                                       unsigned bytes) {
#if ODB_BULK
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(bar), "r"(bytes) : "memory");
#endif
}

/* Bulk copy of `bytes` (a multiple of 16, both ends 16-byte aligned) from
   global src to shared dst, completing on mbarrier bar. */
static __device__ __forceinline__ void odb_bulk_g2s(void *dst,
                                                    const void *src,
                                                    unsigned bytes,
                                                    unsigned bar) {
#if ODB_BULK
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx"
               "::bytes [%0], [%1], %2, [%3];"
               :: "r"(odb_smem_u32(dst)), "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}

/* Waits until phase `parity` of mbarrier bar has completed. */
static __device__ __forceinline__ void odb_mbar_wait(unsigned bar,
                                                     unsigned parity) {
#if ODB_BULK
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
#endif
}

/* Orders this thread's generic-proxy accesses to shared memory before the
   copy engine's later ones: every thread that wrote (or read) what a bulk
   copy will read (or overwrite) calls it, then the block synchronizes,
   then one thread issues the copy. */
static __device__ __forceinline__ void odb_bulk_fence(void) {
#if ODB_BULK
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/* Bulk copy of `bytes` (a multiple of 16, both ends 16-byte aligned) from
   shared src to global dst, in the calling thread's current bulk group. */
static __device__ __forceinline__ void odb_bulk_s2g(void *dst,
                                                    const void *src,
                                                    unsigned bytes) {
#if ODB_BULK
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :: "l"(dst), "r"(odb_smem_u32(src)), "r"(bytes) : "memory");
#endif
}

/* Closes the calling thread's current bulk group. */
static __device__ __forceinline__ void odb_bulk_commit(void) {
#if ODB_BULK
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

/* Waits until the calling thread's bulk groups but the newest `N` have
   read their shared memory (which may then be overwritten). */
template <int N>
static __device__ __forceinline__ void odb_bulk_wait_read(void) {
#if ODB_BULK
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
#endif
}

/* Waits until the calling thread's bulk groups have completed (their
   writes to global memory done). */
static __device__ __forceinline__ void odb_bulk_wait_all(void) {
#if ODB_BULK
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

#endif
