/* s2d_skew2.cuh - the helpers of gpu_stream2d with skew 2 (a barrier a
   pass): rows of the rings are [ODB_TP][ODB_K], a cell's components side
   by side (one 16-byte access for two), with a pad cell on both sides;
   the centre column's values in registers (ODB_CARRY), the check that a
   star stencil (ODB_STAR) reads no diagonal neighbour, the y ring's
   slots, a stencil's three rows, a row's cell fetched by cp.async, and
   the exchange between the blocks of a cluster (s2d_cluster.cuh). Needs
   the constants the generator defines first (ODB_K, ODB_TP, ODB_YR,
   ODB_NR, ODB_NC, ODB_CL, ODB_T, ODB_S, ODB_CARRY, ODB_STAR) and
   odb_idx. */
#include "s2d_clamp.cuh"
struct odb_cell_in {
  const double *pm, *p0, *pp;
  double vm[ODB_K], v0[ODB_K], vp[ODB_K];   // the column's centres
};
static __device__ __forceinline__ double odb_cell_y(const odb_cell_in &in, int di,
    int dj, int c) {
  const double *r = di < 0 ? in.pm : di > 0 ? in.pp : in.p0;
#if ODB_K % 2 == 0   // the pair of components in one 16-byte load
  const double2 v = *reinterpret_cast<const double2 *>(r + dj * ODB_K + (c & ~1));
  return c & 1 ? v.y : v.x;
#else
  return r[dj * ODB_K + c];
#endif
}
static __device__ __forceinline__ double odb_cell_yc(const odb_cell_in &in, int di,
    int c) {
  return di < 0 ? in.vm[c] : di > 0 ? in.vp[c] : in.v0[c];
}
// a star stencil (ODB_STAR: a barrier every second pass) reads no
// diagonal neighbour; where one is read, the call below stays and
// the build fails naming it (it is defined nowhere)
extern "C" __device__ void odb_grid_star_problem_reads_a_diagonal_neighbour(void);
// column offset 0 reads the centres (registers; the test folds away
// where the compiler knows the offset)
static __device__ __forceinline__ double odb_cell_get(const odb_cell_in &in, int di,
    int dj, int c) {
  if (ODB_STAR && di != 0 && dj != 0)
    odb_grid_star_problem_reads_a_diagonal_neighbour();
  return ODB_CARRY > 0 && dj == 0 ? odb_cell_yc(in, di, c)
                                  : odb_cell_y(in, di, dj, c);
}
#define ODB_Y(di, dj, c) odb_cell_get(in, (di), (dj), (c))
// slot of row ip - c in the y ring, ys the slot of row ip
#define odb_ysub(ys, c) ((ys) >= (c) ? (ys) - (c) : (ys) - (c) + ODB_YR)
static __device__ __forceinline__ odb_cell_in odb_in3(const double *r, int sm,
    int s0, int sp, int t) {
  const double *c = r + (t + 1) * ODB_K;
  odb_cell_in in = {c + sm * ODB_TP * ODB_K, c + s0 * ODB_TP * ODB_K,
                    c + sp * ODB_TP * ODB_K};
  return in;
}
// this thread's cell of row q into slot sl of the y ring (16 bytes
// a copy when the components pair up)
static __device__ __forceinline__ void odb_fetch_at(const double *y,
    double *ysm, odb_idx q, int sl, odb_idx colc, int t) {
  const double *src = y + (odb_clamp(q, ODB_NR) * ODB_NC + colc) * ODB_K;
  const unsigned d = (unsigned)__cvta_generic_to_shared(
      ysm + (sl * ODB_TP + t + 1) * ODB_K);
#if ODB_K % 2 == 0
  for (int c = 0; c < ODB_K; c += 2)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::
                 "r"(d + 8 * c), "l"(src + c));
#else
  for (int c = 0; c < ODB_K; ++c)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::
                 "r"(d + 8 * c), "l"(src + c));
#endif
#if ODB_CL > 1   // the edge threads fetch the pad cell beside too
  if (t == 0 || t == ODB_T - 1) {
    const int e = t == 0 ? -1 : 1;
    const double *ps = y + (odb_clamp(q, ODB_NR) * ODB_NC +
                            odb_clamp(colc + e, ODB_NC)) * ODB_K;
    for (int c = 0; c < ODB_K; ++c)
      asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::
                   "r"(d + 8 * (c + e * ODB_K)), "l"(ps + c));
  }
#endif
}
#include "s2d_cluster.cuh"
