/* s2d_skew1.cuh - the helpers of gpu_stream2d with skew 1 (a barrier a
   stage): rows modulo the rings, the y ring's slots, a row's column
   fetched by cp.async, and the cell form's view of a stage argument
   (odb_cell_in, ODB_Y) in rings laid out [row][component][ODB_TP]. Needs
   the constants the generator defines first (ODB_K, ODB_TP, ODB_D3,
   ODB_YR, ODB_NR, ODB_NC) and odb_idx. */
static __device__ __forceinline__ int odb_mod(odb_idx q) {
  const int r = (int)(q % ODB_D3);
  return r < 0 ? r + ODB_D3 : r;
}
#include "s2d_clamp.cuh"
// the y ring's slot of row q (rows from it0 - 2 on)
#define odb_yslot(q) ((int)(((q) - it0 + ODB_YR) % ODB_YR))
// this thread's column of row q into the y ring, by cp.async (rows
// outside the grid repeat an edge row; their results are unused)
static __device__ __forceinline__ void odb_fetch(const double *y,
    double *ysm, odb_idx q, odb_idx it0, odb_idx colc, int t) {
  const double *src = y + (odb_clamp(q, ODB_NR) * ODB_NC + colc) * ODB_K;
  const int sl = (int)((q - it0 + ODB_YR) % ODB_YR);
  for (int c = 0; c < ODB_K; ++c) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(
        ysm + (sl * ODB_K + c) * ODB_TP + t + 1);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::
                 "r"(d), "l"(src + c));
  }
}
// a stage argument's rows q-1, q, q+1 at this thread's column in a
// ring [row mod depth][c][ODB_TP] of shared memory; each row has a
// pad column on both sides, so that j-1 and j+1 need no clamping
// (the pads hold garbage that only reaches halo columns)
struct odb_cell_in {
  const double *pm, *p0, *pp;
};
static __device__ __forceinline__ odb_cell_in odb_rows(const double *r, int s,
    int depth, int t) {
  const int sm = s == 0 ? depth - 1 : s - 1;
  const int sp = s == depth - 1 ? 0 : s + 1;
  const double *c = r + t + 1;
  return {c + sm * ODB_K * ODB_TP, c + s * ODB_K * ODB_TP,
          c + sp * ODB_K * ODB_TP};
}
static __device__ __forceinline__ double odb_cell_y(const odb_cell_in &in, int di,
    int dj, int c) {
  const double *r = di < 0 ? in.pm : di > 0 ? in.pp : in.p0;
  return r[c * ODB_TP + dj];
}
#define ODB_Y(di, dj, c) odb_cell_y(in, (di), (dj), (c))
