/* s2d_clamp.cuh - a row or column index clamped into 0..n-1, for both
   skews of gpu_stream2d. */
static __device__ __forceinline__ odb_idx odb_clamp(odb_idx q, odb_idx n) {
  return q < 0 ? 0 : q >= n ? n - 1 : q;
}
