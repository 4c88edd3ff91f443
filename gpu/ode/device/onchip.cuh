/* onchip.cuh - the helpers of gpu_onchip, whose one persistent kernel
   keeps each block's band of grid rows of y in shared memory for a whole
   batch of attempts (Korch and Werner, "An in-depth introduction of
   multi-workgroup tiling for improving the locality of explicit one-step
   methods for ODE systems with limited access distance on GPUs": the
   state never leaves the chip between steps). Block b owns rows
   [b NR / NB, (b + 1) NR / NB), so the bands differ by at most a row.
   ODB_PLACE says where a stage's argument and the stage vectors live:
   1 in shared memory beside y (the argument with a halo row above and
   below, which the neighbouring bands publish in a small global buffer,
   a.Y[0], double-buffered by the barrier's parity), 2 in global memory
   (the argument in a.Y[stage parity], the stage vectors in a.F, y's new
   value in a.ynew), read with __ldcg where another block wrote it, since
   an SM's L1 is not coherent with the others'. Needs ODB_K, ODB_NR,
   ODB_NC, ODB_NB, ODB_HM, ODB_PLACE and odb_idx. */
#define ODB_RW (ODB_NC * ODB_K)   // doubles of a grid row
// a stage argument's rows i-1, i, i+1 at cell (i, j): pointers to the
// cell (i + di, j) in a row-major [cell][component] layout
struct odb_cell_in {
  const double *pm, *p0, *pp;
};
static __device__ __forceinline__ double odb_cell_y(const odb_cell_in &in,
    int di, int dj, int c) {
  const double *r = di < 0 ? in.pm : di > 0 ? in.pp : in.p0;
#if ODB_PLACE == 2
  return __ldcg(r + dj * ODB_K + c);
#else
  return r[dj * ODB_K + c];
#endif
}
#define ODB_Y(di, dj, c) odb_cell_y(in, (di), (dj), (c))
// the rows of cell (i, j) in an argument whose row i starts at base
// (rows above and below ODB_RW apart)
static __device__ __forceinline__ odb_cell_in odb_on_rows(const double *base,
    odb_idx j) {
  const double *c = base + j * ODB_K;
  odb_cell_in in = {c - ODB_RW, c, c + ODB_RW};
  return in;
}
// the sum of v over the blocks' values part[0..ODB_NB) in warp 0, in the
// same order in every block, so that every block holds the same bits and
// takes the same decision (thread 0 gets it)
static __device__ __forceinline__ double odb_on_total(const double *part) {
  double v = 0.0;
  for (int i = (int)threadIdx.x; i < ODB_NB; i += 32) v += __ldcg(part + i);
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
