/* tsm_cp_async.cuh - the 8-byte cp.async of the tensor-core tall & skinny
   kernels (rows of an odd width; n = 0 writes zeros, for rows past K) and
   the commit of a group of copies. Spliced in after cp16, whose L2
   prefetch hint the configuration chooses, under the comment both
   share. */
__device__ __forceinline__ void cp8(double *s, const double *g, int n) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n"
               :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"(g),
                  "r"(n) : "memory");
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
