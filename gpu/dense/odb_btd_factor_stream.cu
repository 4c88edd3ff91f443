/* odb_btd_factor_stream.cu - the stream factorization of block-tridiagonal
   lines (sm_90): block LU without pivoting of every line of a pack in one
   block of threads, each block row's blocks brought into shared memory by
   bulk copies (odb_bulk.cuh) rows ahead of the arithmetic and every factor
   written out once; its plan and the C interface of odb_batched_gpu.h for
   it. The compact layout of "Designing vector-friendly compact BLAS and
   LAPACK kernels" (K. Kim et al., SC17) makes a block row of a pack one
   contiguous run, so a copy per block moves it whole. Three kernels: the
   row kernel (up to a warp per pack, the running Schur complement in
   shared memory), and for the larger B the tile kernel (a line's threads
   across up to eight warps, the running Schur complement in registers)
   and the warp kernel (the same elimination with a line's threads in one
   warp, the pivots by shuffles). */
#include <cuda_runtime.h>

#include "odb_batched_gpu.cuh"
#include "odb_bulk.cuh"

/*
** The row kernel (T = 1, 2, 4 or 8). One block of VL*T threads (at most
** a warp) per pack; thread h = t*VL + l works on line l of the pack, as
** the t-th of the T threads of that line.
** Row r of a pack is [A_r | D_r | C_r] (B*B*VL doubles each), so that
** step r's inputs beyond the running D, [C_r | A_{r+1} | D_{r+1}], are one
** contiguous run of three blocks: step r's stage. Shared memory holds the
** mbarriers, two D buffers (the running Schur complement D_r and the next
** one, D_{r+1} - A_{r+1} C_r, written while D_r's factors are still read)
** and a ring of `stages` stages, stages - 1 steps ahead of the arithmetic
** (the first step also copies D_0 into the first D buffer). Step r:
**   1. ||D_r||_F^2 (for the pivot check: as the CPU, of the block that is
**      factored), LU(D_r) in place, thread t updating rows i = t mod T,
**      one warp barrier per pivot; the factored D_r goes out;
**   2. C_r := L_r^{-1} C_r, thread t solving columns j = t mod T in
**      registers, written back to the stage (the update reads it) and out;
**   3. for rows i = t mod T: row i of A_{r+1} := A_{r+1} U_r^{-1} in
**      registers and out, then row i of D_{r+1} - A_{r+1} C_r into the
**      other D buffer.
** Each factor leaves once and each input arrives once (A_0 and C_{K-1} lie
** outside the matrix and are neither read nor written); the first row of
** D_0 and of every C_r, which the factorization leaves as they are, are
** not written (odb_dense_floor.h counts the same). Element (i, j) of lane
** l of a block lies at (i*B + j)*VL + l in shared memory as in global
** memory: a warp's accesses are consecutive words, and with B and VL
** template parameters every offset is an immediate. Rows and columns are
** taken G at a time (G*B <= FS_REG doubles in registers) so that an
** operand loaded from shared memory serves G multiply-adds. A pack's
** shared memory, not its registers, limits the packs an SM holds (three
** to five warps), so FS_REG = 48 lets G cover both rows of a thread up to
** B = 16 with T = 8 (H200: 6-7% faster at B = 12..15 than 24, no spills).
*/
#define FS_MAX_STAGES 4
#define FS_REG 48

template <int B, int VL, int T>
__global__ void __launch_bounds__(VL * T)
k_btd_factor_stream(double *M, int K, int stages, long n,
                    unsigned long long *flag) {
#if ODB_BULK
  extern __shared__ __align__(128) unsigned char sm_raw[];
  constexpr int blk = B * B * VL;
  constexpr int NT = VL * T;
  constexpr unsigned mask = NT >= 32 ? 0xFFFFFFFFu : (1u << NT) - 1u;
  constexpr int R = (B + T - 1) / T;          /* rows (columns) a thread */
  constexpr int G0 = FS_REG / B > 0 ? FS_REG / B : 1;
  constexpr int G = G0 < R ? G0 : R;           /* taken at once */
  constexpr unsigned stage_bytes = 8u * 3u * blk;
  const int l = threadIdx.x % VL, t = threadIdx.x / VL;
  const size_t pk = blockIdx.x;
  double *pm = M + pk * 3 * (size_t)K * blk;   /* the pack's rows */
  const long line = (long)pk * VL + l;
  const unsigned bar0 = odb_smem_u32(sm_raw);
  double *dbuf = (double *)(sm_raw + 128);     /* 2 blocks */
  double *stg = dbuf + 2 * blk;                /* stages * 3 blocks */
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) odb_mbar_init(bar0 + 8 * s, 1);
  __syncwarp(mask);
  /* step s's copies: D_0 (s = 0) and the stage (s < K - 1), by thread 0 */
  auto issue = [&](int s) {
    if (threadIdx.x != 0 || s >= K || (s > 0 && s >= K - 1)) return;
    const unsigned bar = bar0 + 8 * (s % stages);
    const unsigned bytes = (s == 0 ? 8u * blk : 0u) +
                           (s < K - 1 ? stage_bytes : 0u);
    odb_mbar_expect(bar, bytes);
    if (s == 0) odb_bulk_g2s(dbuf, pm + blk, 8u * blk, bar);
    if (s < K - 1) {
      double *dst = stg + (size_t)(s % stages) * 3 * blk;
      const double *src = pm + ((size_t)s * 3 + 2) * blk;
      for (int w = 0; w < 3; ++w)
        odb_bulk_g2s(dst + (size_t)w * blk, src + (size_t)w * blk, 8u * blk,
                     bar);
    }
  };
  for (int s = 0; s < stages; ++s) issue(s);
  bool reported = false;
  for (int r = 0; r < K; ++r) {
    const bool more = r + 1 < K;
    if (r == 0 || more)
      odb_mbar_wait(bar0 + 8 * (r % stages), (unsigned)(r / stages) & 1u);
    __syncwarp(mask);                          /* D_r complete */
    double *D = dbuf + (r & 1) * blk + l;
    double *Dnext = dbuf + ((r + 1) & 1) * blk + l;
    double *Cs = stg + (size_t)(r % stages) * 3 * blk + l;
    double *As = Cs + blk, *Dns = Cs + 2 * blk;
    double *Dg = pm + ((size_t)r * 3 + 1) * blk + l;   /* D_r, then C_r */
    double *Ag = pm + ((size_t)r * 3 + 3) * blk + l;   /* A_{r+1} */

    /* 1. ||D_r||^2, LU(D_r), the pivots, D_r out */
    double fro = 0.0;
#pragma unroll 1
    for (int m = 0; m < R; ++m) {
      const int i = t + T * m;
      if (i < B)
#pragma unroll
        for (int j = 0; j < B; ++j) {
          double v = D[(i * B + j) * VL];
          fro += v * v;
        }
    }
#pragma unroll
    for (int o = VL; o < NT; o <<= 1) fro += __shfl_xor_sync(mask, fro, o);
    double inv[B];                             /* 1/u_kk */
#pragma unroll
    for (int k = 0; k < B; ++k) {
      inv[k] = 1.0 / D[(k * B + k) * VL];
#pragma unroll 1
      for (int m = 0; m < R; ++m) {
        const int i = t + T * m;
        if (i > k && i < B) {
          double *Di = D + i * B * VL;
          const double lik = Di[k * VL] * inv[k];
          Di[k * VL] = lik;
#pragma unroll
          for (int j = k + 1; j < B; ++j)
            Di[j * VL] -= lik * D[(k * B + j) * VL];
        }
      }
      __syncwarp(mask);
    }
#pragma unroll 1
    for (int m = 0; m < R; ++m) {
      const int i = t + T * m;
      if (i < B) {
        const double u = D[(i * B + i) * VL];
        if (!(u * u > TINY2 * fro) && !reported && line < n) {
          atomicMin(flag, (unsigned long long)line * K + r);
          reported = true;
        }
        if (i > 0 || r > 0)                    /* D_0's row 0 stays */
#pragma unroll
          for (int j = 0; j < B; ++j)
            Dg[(i * B + j) * VL] = D[(i * B + j) * VL];
      }
    }
    if (!more) break;

    /* 2. C_r := L_r^{-1} C_r, G columns at a time */
#pragma unroll 1
    for (int m0 = 0; m0 < R; m0 += G) {
      double x[G][B];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        /* a column past B is computed on zeros and not stored: reading
           column B - 1 instead would race with its owner's store below */
        const int c = t + T * (m0 + g);
#pragma unroll
        for (int i = 0; i < B; ++i)
          x[g][i] = c < B ? Cs[(i * B + c) * VL] : 0.0;
      }
#pragma unroll
      for (int i = 1; i < B; ++i)
#pragma unroll
        for (int k = 0; k < i; ++k) {
          const double lik = D[(i * B + k) * VL];
#pragma unroll
          for (int g = 0; g < G; ++g) x[g][i] -= lik * x[g][k];
        }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const int c = t + T * (m0 + g);
        if (m0 + g < R && c < B)
#pragma unroll
          for (int i = 1; i < B; ++i) {        /* row 0 stays */
            Cs[(i * B + c) * VL] = x[g][i];
            Dg[blk + (i * B + c) * VL] = x[g][i];
          }
      }
    }
    __syncwarp(mask);                          /* C_r complete */

    /* 3. A_{r+1} := A_{r+1} U_r^{-1}; D_{r+1} - A_{r+1} C_r, G rows at a
       time */
#pragma unroll 1
    for (int m0 = 0; m0 < R; m0 += G) {
      double a[G][B], d[G][B];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        int i = t + T * (m0 + g);
        i = i < B ? i : B - 1;
#pragma unroll
        for (int j = 0; j < B; ++j) {
          a[g][j] = As[(i * B + j) * VL];
          d[g][j] = Dns[(i * B + j) * VL];
        }
      }
#pragma unroll
      for (int j = 0; j < B; ++j) {
#pragma unroll
        for (int k = 0; k < j; ++k) {
          const double ukj = D[(k * B + j) * VL];
#pragma unroll
          for (int g = 0; g < G; ++g) a[g][j] -= a[g][k] * ukj;
        }
#pragma unroll
        for (int g = 0; g < G; ++g) a[g][j] *= inv[j];
      }
#pragma unroll
      for (int k = 0; k < B; ++k)
#pragma unroll
        for (int j = 0; j < B; ++j) {
          const double ckj = Cs[(k * B + j) * VL];
#pragma unroll
          for (int g = 0; g < G; ++g) d[g][j] -= a[g][k] * ckj;
        }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const int i = t + T * (m0 + g);
        if (m0 + g < R && i < B)
#pragma unroll
          for (int j = 0; j < B; ++j) {
            Ag[(i * B + j) * VL] = a[g][j];
            Dnext[(i * B + j) * VL] = d[g][j];
          }
      }
    }
    /* every thread is done with D_r and the stage: refill the stage with
       step r + stages (its generic-proxy writes ordered before the copy
       engine's) */
    __syncwarp(mask);
    odb_bulk_fence();
    issue(r + stages);
  }
#endif
}

/* Step s's stage [C_s | A_{s+1} | D_{s+1}] (s < K - 1; none past it) into
   slot s % stages of the ring stg, by bulk copies completing on that
   slot's mbarrier: the tile and warp kernels (the row kernel's also brings
   D_0). One thread calls it. */
template <int BLK>
static __device__ __forceinline__ void fs_stage_issue(unsigned bar0,
                                                      double *stg,
                                                      const double *pm,
                                                      int s, int K,
                                                      int stages) {
  if (s >= K - 1) return;
  const unsigned bar = bar0 + 8 * (s % stages);
  odb_mbar_expect(bar, 8u * 3u * BLK);
  double *dst = stg + (size_t)(s % stages) * 3 * BLK;
  const double *src = pm + ((size_t)s * 3 + 2) * BLK;
  for (int w = 0; w < 3; ++w)
    odb_bulk_g2s(dst + (size_t)w * BLK, src + (size_t)w * BLK, 8u * BLK,
                 bar);
}

/* The tile and warp kernels: entry (a, b) of a thread's tile of a
   quadrant (rows tr + TR a, columns tc + TC b; off is entry (tr, tc) of
   its line) and whether it lies inside the B x B block. */
#define FS_OFF(a, b) (off + (TR * (a) * B + TC * (b)) * VL)
#define FS_IN(a, b) (tr + TR * (a) < B && tc + TC * (b) < B)

/* The tile and warp kernels share their start and their reads of a
   stage. Thread (tr, tc) of a line holds the entries of its tiles of the
   quadrants [D C; A D']: x[a][b] of D, x[a][NC + b] of C, x[NR + a][b] of
   A and x[NR + a][NC + b] of D' (FS_IN: inside the B x B block; FS_OFF:
   the entry's offset in a block of the pack, off being entry (tr, tc)).
   Entries past B hold 0. */

/* The ring's mbarriers (by thread 0), a barrier, then the copies of the
   first `stages` steps' stages. */
template <int BLK>
static __device__ __forceinline__ void fs_ring_start(unsigned bar0,
                                                     double *stg,
                                                     const double *pm,
                                                     int K, int stages) {
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) odb_mbar_init(bar0 + 8 * s, 1);
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s)
      fs_stage_issue<BLK>(bar0, stg, pm, s, K, stages);
}

/* D_0 (block 1 of the pack's rows pm) into the D tiles, from global
   memory directly. */
template <int B, int VL, int TR, int TC, int NR, int NC>
static __device__ __forceinline__ void fs_tiles_d0(
    double (&x)[2 * NR][2 * NC], const double *pm, int tr, int tc,
    int off) {
  constexpr int blk = B * B * VL;
#pragma unroll
  for (int a = 0; a < NR; ++a)
#pragma unroll
    for (int b = 0; b < NC; ++b)
      x[a][b] = FS_IN(a, b) ? pm[blk + FS_OFF(a, b)] : 0.0;
}

/* A stage S = [C_r | A_{r+1} | D_{r+1}] into the C, A and D' tiles; zeros
   where S is NULL (the last step has no next block row). */
template <int B, int VL, int TR, int TC, int NR, int NC>
static __device__ __forceinline__ void fs_tiles_stage(
    double (&x)[2 * NR][2 * NC], const double *S, int tr, int tc,
    int off) {
  constexpr int blk = B * B * VL;
#pragma unroll
  for (int a = 0; a < NR; ++a)
#pragma unroll
    for (int b = 0; b < NC; ++b) {
      const bool in = S && FS_IN(a, b);
      x[a][NC + b] = in ? S[FS_OFF(a, b)] : 0.0;
      x[NR + a][b] = in ? S[blk + FS_OFF(a, b)] : 0.0;
      x[NR + a][NC + b] = in ? S[2 * blk + FS_OFF(a, b)] : 0.0;
    }
}

/*
** The tile kernel: T = 16 or 32 threads per line, VL*T <= 256 (two to
** eight warps per pack), for B where one line's rows are too few work for
** the row kernel's threads. Step r is B steps of right-looking
** elimination without pivoting on the 2B x 2B matrix
**     [ D_r      C_r     ]
**     [ A_{r+1}  D_{r+1} ]
** after which its quadrants hold L_r\U_r, L_r^{-1} C_r, A_{r+1} U_r^{-1}
** and D_{r+1} - A_{r+1} U_r^{-1} L_r^{-1} C_r, the next running Schur
** complement: the row kernel's three phases with each entry updated by
** the same operations in the same order (ascending k). The T threads of a
** line form a TR x TC grid; thread (tr, tc) holds in registers the
** entries (i, j) of each quadrant with i = tr mod TR and j = tc mod TC
** (indices within the quadrant), so the Schur complement becomes the next
** step's D_r in the same thread's registers and the running D takes no
** shared memory. Pivot k: the holders of row k and of column k put them
** into shared memory, one barrier, then every thread updates its entries
** with one load per row and per column it holds (the multipliers l_ik and
** a_ik scaled by 1/u_kk on the fly and kept by the column's holder). The
** row and column buffers alternate by pivot (counted over all steps), so
** one barrier a pivot suffices. A step's stage is read into registers at
** its start and refilled after the first pivot's barrier, so the copy of
** step r + stages overlaps the rest of step r's arithmetic. D_0 comes
** from global memory directly. Shared memory: the mbarriers, the pivot
** buffers (8 B VL doubles), the ||D_r||_F^2 partial sums (2 T VL) and the
** ring (stages * 3 blocks).
*/
template <int B, int VL, int T>
__global__ void __launch_bounds__(VL * T)
k_btd_factor_tile(double *M, int K, int stages, long n,
                  unsigned long long *flag) {
#if ODB_BULK
  extern __shared__ __align__(128) unsigned char sm_raw[];
  constexpr int blk = B * B * VL;
  constexpr int TR = T >= 32 ? 8 : 4, TC = T / TR;
  constexpr int NR = (B + TR - 1) / TR, NC = (B + TC - 1) / TC;
  const int l = threadIdx.x % VL, t = threadIdx.x / VL;
  const int tr = t % TR, tc = t / TR;
  const size_t pk = blockIdx.x;
  double *pm = M + pk * 3 * (size_t)K * blk;   /* the pack's rows */
  const long line = (long)pk * VL + l;
  const unsigned bar0 = odb_smem_u32(sm_raw);
  double *sm = (double *)(sm_raw + 128);
  double *piv = sm + l;                        /* 2 x [row 2B | col 2B] */
  double *fsm = sm + 8 * B * VL + l;           /* 2 x T partial sums */
  double *stg = sm + 8 * B * VL + 2 * T * VL;  /* stages * 3 blocks */
  const int off = (tr * B + tc) * VL + l;      /* entry (tr, tc) */
  /* step s's stage (s < K - 1), by thread 0 */
  auto issue = [&](int s) {
    if (threadIdx.x == 0) fs_stage_issue<blk>(bar0, stg, pm, s, K, stages);
  };
  fs_ring_start<blk>(bar0, stg, pm, K, stages);
  double x[2 * NR][2 * NC];                    /* [D C; A D'] tiles */
  fs_tiles_d0<B, VL, TR, TC, NR, NC>(x, pm, tr, tc, off);
  bool reported = false;
  for (int r = 0; r < K; ++r) {
    const bool more = r + 1 < K;
    double *fs = fsm + (r & 1) * T * VL;
    if (more) {
      odb_mbar_wait(bar0 + 8 * (r % stages), (unsigned)(r / stages) & 1u);
      fs_tiles_stage<B, VL, TR, TC, NR, NC>(
          x, stg + (size_t)(r % stages) * 3 * blk, tr, tc, off);
      /* these generic-proxy reads before the copy engine's refill */
      odb_bulk_fence();
    } else {
      fs_tiles_stage<B, VL, TR, TC, NR, NC>(x, nullptr, tr, tc, off);
    }
    double fro = 0.0;                          /* ||D_r||^2, this tile */
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b) fro += x[a][b] * x[a][b];
    fs[t * VL] = fro;
    const int par = (r * B) & 1;
#pragma unroll
    for (int k = 0; k < B; ++k) {
      double *pr = piv + ((par + k) & 1) * 4 * B * VL;
      double *pc = pr + 2 * B * VL;
      if (tr == k % TR)                        /* row k, columns >= k */
#pragma unroll
        for (int b = 0; b < 2 * NC; ++b) {
          const int j = tc + TC * (b % NC), J = (b / NC) * B + j;
          if (j < B && J >= k) pr[J * VL] = x[k / TR][b];
        }
      if (tc == k % TC)                        /* column k, rows > k */
#pragma unroll
        for (int a = 0; a < 2 * NR; ++a) {
          const int i = tr + TR * (a % NR), I = (a / NR) * B + i;
          if (i < B && I > k) pc[I * VL] = x[a][k / TC];
        }
      __syncthreads();
      if (k == 0) {
        issue(r + stages);                     /* every thread read stage r */
        if (t == 0) {
          fro = 0.0;
#pragma unroll
          for (int s = 0; s < T; ++s) fro += fs[s * VL];
        }
      }
      const double u = pr[k * VL], inv = 1.0 / u;
      if (t == 0 && !(u * u > TINY2 * fro) && !reported && line < n) {
        atomicMin(flag, (unsigned long long)line * K + r);
        reported = true;
      }
      double li[2 * NR], uj[2 * NC];
#pragma unroll
      for (int a = 0; a < 2 * NR; ++a) {
        const int i = tr + TR * (a % NR), I = (a / NR) * B + i;
        li[a] = i < B && I > k ? pc[I * VL] * inv : 0.0;
      }
#pragma unroll
      for (int b = 0; b < 2 * NC; ++b) {
        const int j = tc + TC * (b % NC), J = (b / NC) * B + j;
        uj[b] = j < B && J > k ? pr[J * VL] : 0.0;
      }
#pragma unroll
      for (int a = 0; a < 2 * NR; ++a) {
        const int i = tr + TR * (a % NR), I = (a / NR) * B + i;
        if (i < B && I > k) {
#pragma unroll
          for (int b = 0; b < 2 * NC; ++b) {
            const int j = tc + TC * (b % NC), J = (b / NC) * B + j;
            if (j < B && J > k) x[a][b] -= li[a] * uj[b];
          }
          if (tc == k % TC) x[a][k / TC] = li[a];
        }
      }
    }
    /* the factors out: D_r (D_0's row 0 stays), C_r (row 0 stays) and
       A_{r+1} */
    double *Dg = pm + ((size_t)r * 3 + 1) * blk;
    double *Ag = pm + ((size_t)r * 3 + 3) * blk;
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b)
        if (FS_IN(a, b)) {
          const bool row0 = tr + TR * a == 0;
          if (r > 0 || !row0) Dg[FS_OFF(a, b)] = x[a][b];
          if (more) {
            if (!row0) Dg[blk + FS_OFF(a, b)] = x[a][NC + b];
            Ag[FS_OFF(a, b)] = x[NR + a][b];
          }
        }
    if (!more) break;
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b) x[a][b] = x[NR + a][NC + b];
  }
#endif
}

/*
** The warp kernel: the tile kernel's 2B x 2B elimination (the same
** operations on every entry, in the same order) with the T = 8, 16 or 32
** threads of a line in consecutive lanes of one warp (thread h works on
** line h / T), so that a pivot's u_kk, row and column travel between the
** line's threads by warp shuffles: no shared memory and no barrier a
** pivot. The thread grid is TR x TC (4 x 2 for T 8, 4 x 4 for T 16, 8 x
** 4 for T 32), laid out as the tile kernel's; the tiles whose rows (or
** columns) a pivot has left behind for every thread of the line are
** skipped as the loop over the pivots is unrolled (B = 16, T = 16: 37%
** fewer multiply-adds issued than the tile kernel's), and the multipliers
** go into column k after the whole update (separate loops: the faster
** schedule on an H200). A step's stage is read into registers, its
** factors are written back into the same places of the stage (each thread
** the entries it read) and leave by three bulk copies of whole blocks
** after the step's one barrier (the first rows of D_0 and of each C_r,
** which the factor leaves as they are and the floor does not count, go
** out unchanged); the next step's thread 0 waits until they have left,
** then refills that stage with step r - 1 + stages, so the wait falls
** after a step's worth of arithmetic. Shared memory: the mbarriers and
** the ring. At VL 4 the lanes of a warp span 4 (T 8), 2 or 1 lines, so
** reading and writing the stage take 1, 2 or 4 times the fewest
** shared-memory wavefronts; at VL 16 all lanes of a line fall into one
** bank, which is why the plan keeps the tile kernel there from B = 13.
*/
template <int B, int VL, int T>
__global__ void __launch_bounds__(VL * T)
k_btd_factor_warp(double *M, int K, int stages, long n,
                  unsigned long long *flag) {
#if ODB_BULK
  extern __shared__ __align__(128) unsigned char sm_raw[];
  constexpr int blk = B * B * VL;
  constexpr int TR = T >= 32 ? 8 : 4, TC = T / TR;
  constexpr int NR = (B + TR - 1) / TR, NC = (B + TC - 1) / TC;
  constexpr unsigned FULL = 0xFFFFFFFFu;
  const int l = threadIdx.x / T, t = threadIdx.x % T;
  const int tr = t % TR, tc = t / TR;
  const int lane0 = (int)(threadIdx.x % 32) - t;   /* the line's t = 0 */
  const size_t pk = blockIdx.x;
  double *pm = M + pk * 3 * (size_t)K * blk;   /* the pack's rows */
  const long line = (long)pk * VL + l;
  const unsigned bar0 = odb_smem_u32(sm_raw);
  double *stg = (double *)(sm_raw + 128);      /* stages * 3 blocks */
  const int off = (tr * B + tc) * VL + l;      /* entry (tr, tc) */
  /* step s's stage (s < K - 1), by thread 0 */
  auto issue = [&](int s) {
    if (threadIdx.x == 0) fs_stage_issue<blk>(bar0, stg, pm, s, K, stages);
  };
  fs_ring_start<blk>(bar0, stg, pm, K, stages);
  double x[2 * NR][2 * NC];                    /* [D C; A D'] tiles */
  fs_tiles_d0<B, VL, TR, TC, NR, NC>(x, pm, tr, tc, off);
  bool reported = false;
  for (int r = 0; r < K; ++r) {
    const bool more = r + 1 < K;
    double *S = stg + (size_t)(r % stages) * 3 * blk;
    if (r > 0) {
      if (threadIdx.x == 0) {        /* step r - 1's factors have left */
        odb_bulk_wait_read<0>();
        issue(r - 1 + stages);
      }
      /* with one stage D_r goes where they left from: wait for them */
      if (!more && stages == 1) __syncthreads();
    }
    if (more)
      odb_mbar_wait(bar0 + 8 * (r % stages), (unsigned)(r / stages) & 1u);
    fs_tiles_stage<B, VL, TR, TC, NR, NC>(x, more ? S : nullptr, tr, tc,
                                          off);
    double fro = 0.0;                          /* ||D_r||^2 */
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b) fro += x[a][b] * x[a][b];
#pragma unroll
    for (int o = 1; o < T; o <<= 1) fro += __shfl_xor_sync(FULL, fro, o);
    /* pivot k's u_kk, column (rl) and row (rc) as the holders have them,
       in the tiles a thread updates */
    double ru = 0.0, rl[2 * NR], rc[2 * NC];
    auto fetch = [&](const int k) {
      const int kr = k / TR, kc = k / TC, hr = k % TR, hc = k % TC;
      ru = __shfl_sync(FULL, x[kr][kc], lane0 + hr + TR * hc);
#pragma unroll
      for (int a = 0; a < 2 * NR; ++a) {
        const int i0 = (a / NR) * B + TR * (a % NR);
        if (i0 + TR - 1 <= k) continue;        /* done */
        rl[a] = __shfl_sync(FULL, x[a][kc], lane0 + tr + TR * hc);
      }
#pragma unroll
      for (int b = 0; b < 2 * NC; ++b) {
        const int j0 = (b / NC) * B + TC * (b % NC);
        if (j0 + TC - 1 <= k) continue;
        rc[b] = __shfl_sync(FULL, x[kr][b], lane0 + hr + TR * tc);
      }
    };
#pragma unroll
    for (int k = 0; k < B; ++k) {
      /* row k lies in row tile k / TR of the threads tr = k % TR, column
         k in column tile k / TC of the threads tc = k % TC; tile a holds
         rows (a / NR) B + TR (a % NR) + tr, tile b columns (b / NC) B +
         TC (b % NC) + tc. A tile is done when all its rows (columns) are
         at most k, whole when all exceed k. */
      const int kc = k / TC, hc = k % TC;
      fetch(k);
      const double u = ru, inv = __drcp_rn(u);   /* 1.0 / u, rounded alike */
      if (t == 0 && !(u * u > TINY2 * fro) && !reported && line < n) {
        atomicMin(flag, (unsigned long long)line * K + r);
        reported = true;
      }
      double li[2 * NR], uj[2 * NC];
#pragma unroll
      for (int a = 0; a < 2 * NR; ++a) {
        const int i0 = (a / NR) * B + TR * (a % NR);
        if (i0 + TR - 1 <= k) continue;        /* done */
        li[a] = i0 > k || i0 + tr > k ? rl[a] * inv : 0.0;
      }
#pragma unroll
      for (int b = 0; b < 2 * NC; ++b) {
        const int j0 = (b / NC) * B + TC * (b % NC);
        if (j0 + TC - 1 <= k) continue;
        uj[b] = j0 > k || j0 + tc > k ? rc[b] : 0.0;
      }
#pragma unroll
      for (int a = 0; a < 2 * NR; ++a) {
        const int i0 = (a / NR) * B + TR * (a % NR);
        if (i0 + TR - 1 <= k) continue;
#pragma unroll
        for (int b = 0; b < 2 * NC; ++b) {
          const int j0 = (b / NC) * B + TC * (b % NC);
          if (j0 + TC - 1 <= k) continue;
          x[a][b] -= li[a] * uj[b];
        }
      }
      /* the multipliers l_ik into column k, by its holders */
#pragma unroll
      for (int a = 0; a < 2 * NR; ++a) {
        const int i0 = (a / NR) * B + TR * (a % NR);
        if (i0 + TR - 1 <= k) continue;
        if (tc == hc && (i0 > k || i0 + tr > k)) x[a][kc] = li[a];
      }
    }
    /* the factors out: D_r, and C_r and A_{r+1} unless r is the last */
    double *Dg = pm + ((size_t)r * 3 + 1) * blk;
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b)
        if (FS_IN(a, b)) {
          S[2 * blk + FS_OFF(a, b)] = x[a][b];
          if (more) {
            S[FS_OFF(a, b)] = x[a][NC + b];
            S[blk + FS_OFF(a, b)] = x[NR + a][b];
          }
        }
    odb_bulk_fence();
    __syncthreads();
    if (threadIdx.x == 0) {
      odb_bulk_s2g(Dg, S + 2 * blk, 8u * blk);
      if (more) {
        odb_bulk_s2g(Dg + blk, S, 8u * blk);
        odb_bulk_s2g(Dg + 2 * blk, S + blk, 8u * blk);
      }
      odb_bulk_commit();
    }
    if (!more) break;
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b) x[a][b] = x[NR + a][NC + b];
  }
  if (threadIdx.x == 0) odb_bulk_wait_all();
#endif
}

#undef FS_OFF
#undef FS_IN

/* {====== plans and launches */

typedef struct fs_plan {
  odb_btd_kernel kernel;
  int stages, tpl;   /* stages of the ring, threads per line */
  size_t smem;       /* dynamic shared memory per block, bytes */
} fs_plan;

template <int B, int VL, int T, odb_btd_kernel KERN>
static void fs_launch(const odb_blocktridiag *t, const fs_plan *p, double *M,
                      unsigned long long *flag) {
  void (*k)(double *, int, int, long, unsigned long long *);
  if constexpr (KERN == ODB_BTD_KERNEL_ROW) k = k_btd_factor_stream<B, VL, T>;
  else if constexpr (KERN == ODB_BTD_KERNEL_TILE)
    k = k_btd_factor_tile<B, VL, T>;
  else k = k_btd_factor_warp<B, VL, T>;
  static int attr_set;     /* per kernel: the opt-in shared memory, once */
  if (!attr_set)           /* a failure stays for launched() to report */
    attr_set = cudaFuncSetAttribute(
      k, cudaFuncAttributeMaxDynamicSharedMemorySize, dev_smem_optin) ==
      cudaSuccess;
  const odb_batch *bt = odb_blocktridiag_batch(t);
  k<<<(unsigned)bt->packs, VL * T, p->smem>>>(
    M, odb_blocktridiag_length(t), p->stages, bt->n, flag);
}

/* The plans fs_plan_of lets through: the row kernel with VL 4, 8 or 16
   and T 1, 2, 4 or 8, VL*T <= 32; the tile kernel with T 16 or 32 and the
   warp kernel with T 8 (B <= FW_T8_MAX_B), 16 or 32, VL*T <= 256. B = 0
   never gets here. */
#define FW_T8_MAX_B 12
template <int B>
static void fs_run(const odb_blocktridiag *t, const fs_plan *p, double *M,
                   unsigned long long *flag) {
  if constexpr (B > 0) {
    constexpr odb_btd_kernel R = ODB_BTD_KERNEL_ROW, TI = ODB_BTD_KERNEL_TILE,
                             W = ODB_BTD_KERNEL_WARP;
    const int vl = odb_blocktridiag_batch(t)->vl;
    switch ((int)p->kernel * 4096 + vl * 64 + p->tpl) {
#define FS_CASE(K, V, T) \
    case (int)K * 4096 + V * 64 + T: fs_launch<B, V, T, K>(t, p, M, flag); break;
    FS_CASE(R, 4, 1) FS_CASE(R, 4, 2) FS_CASE(R, 4, 4) FS_CASE(R, 4, 8)
    FS_CASE(R, 8, 1) FS_CASE(R, 8, 2) FS_CASE(R, 8, 4)
    FS_CASE(R, 16, 1) FS_CASE(R, 16, 2)
    FS_CASE(TI, 4, 16) FS_CASE(TI, 4, 32) FS_CASE(TI, 8, 16)
    FS_CASE(TI, 8, 32) FS_CASE(TI, 16, 16)
    FS_CASE(W, 4, 16) FS_CASE(W, 4, 32) FS_CASE(W, 8, 16)
    FS_CASE(W, 8, 32) FS_CASE(W, 16, 16)
#undef FS_CASE
    default:
      if constexpr (B <= FW_T8_MAX_B) {
        if (p->kernel == W && p->tpl == 8) {
          if (vl == 4) fs_launch<B, 4, 8, W>(t, p, M, flag);
          else if (vl == 8) fs_launch<B, 8, 8, W>(t, p, M, flag);
          else fs_launch<B, 16, 8, W>(t, p, M, flag);
        }
      }
      break;
    }
  }
}

/* The row kernel's usual threads per line: a full warp per pack (32/VL)
   but no more than the largest power of two not above B. */
static int fs_row_tpl(int b, int vl) {
  int tpl = 32 / vl;
  while (tpl > 1 && tpl > b) tpl /= 2;
  return tpl;
}

/*
** The automatic kernel and threads per line of B and VL: the fastest plan
** of each measured on an H200 (BENCHMARKS.md, "The warp kernel of the
** stream factor"; 512 MB of blocks in lines of 64): the warp kernel from
** B = 5 at VL 4 (8 threads a line to B = 11, 16 above but 32 at B = 15),
** from B = 8 at VL 8 (8 to B = 12, then 16) and from B = 9 at VL 16 (8 to
** B = 12), the tile kernel (16) at VL 16 from B = 13, and the row kernel
** elsewhere with a full warp per pack (32/VL threads a line) but no more
** threads than the largest power of two not above B, since the rows and
** columns of a block are what the threads of a line share.
*/
static void fs_auto(int b, int vl, odb_btd_kernel *k, int *tpl) {
  *k = ODB_BTD_KERNEL_WARP;
  if (vl == 4 && b >= 5)
    *tpl = b <= 11 ? 8 : b == 15 ? 32 : 16;
  else if (vl == 8 && b >= 8)
    *tpl = b <= FW_T8_MAX_B ? 8 : 16;
  else if (vl == 16 && b >= 9 && b <= FW_T8_MAX_B)
    *tpl = 8;
  else if (vl == 16 && b > FW_T8_MAX_B) {
    *k = ODB_BTD_KERNEL_TILE;
    *tpl = 16;
  } else {
    *k = ODB_BTD_KERNEL_ROW;
    *tpl = fs_row_tpl(b, vl);
  }
}

/*
** The plan. The kernel and its threads per line T: the row kernel with T
** 1, 2, 4 or 8 and VL*T <= 32 (a warp per pack at most), the tile kernel
** with T 16 or 32 and the warp kernel with T 8 (B <= FW_T8_MAX_B: the
** registers of a line's 4B^2 entries over 8 threads), 16 or 32, VL*T <=
** 256. ODB_BTD_KERNEL_AUTO and T 0: fs_auto; a kernel without T: fs_auto's
** T where fs_auto picks that kernel, else 32/VL (at most the largest power
** of two not above B) for the row kernel and 16 for the others; T without
** a kernel: the row kernel up to 8, above it the warp kernel at VL 4 and
** 8 and the tile kernel at VL 16. Stages (0: automatic, else
** 1..FS_MAX_STAGES): the most stages, from two (one where two do not
** fit), that keep the packs within the fewest waves of resident blocks,
** as the stream solve's plan. Refuses what does not fit the device.
*/
static odb_status fs_plan_of(const odb_blocktridiag *t, int stages, int tpl,
                             odb_btd_kernel kernel, fs_plan *p) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  const char *why = stream_unfit(t);
  if (why)
    return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU factor: variant "
                    "stream needs %s (have %s, VL %d, B %d)", why,
                    odb_batched_layout_name(bt->layout), bt->vl, bt->b);
  if (stages < 0 || stages > FS_MAX_STAGES)
    return ODB_FAIL(ODB_ERR_ARG, "stream factor: stages = %d, allowed "
                    "1..%d (0: automatic)", stages, FS_MAX_STAGES);
  odb_btd_kernel k = kernel, ak;
  int at;
  fs_auto(bt->b, bt->vl, &ak, &at);
  if (k == ODB_BTD_KERNEL_AUTO)
    k = tpl == 0 ? ak
      : tpl <= 8 ? ODB_BTD_KERNEL_ROW
      : bt->vl == 16 ? ODB_BTD_KERNEL_TILE : ODB_BTD_KERNEL_WARP;
  if (tpl == 0 && k == ak)
    tpl = at;
  else if (tpl == 0 && k == ODB_BTD_KERNEL_ROW)
    tpl = fs_row_tpl(bt->b, bt->vl);
  else if (tpl == 0)
    tpl = 16;
  int ok = 0;
  switch (k) {
  case ODB_BTD_KERNEL_ROW:
    ok = (tpl == 1 || tpl == 2 || tpl == 4 || tpl == 8) && tpl * bt->vl <= 32;
    break;
  case ODB_BTD_KERNEL_TILE:
    ok = (tpl == 16 || tpl == 32) && tpl * bt->vl <= 256;
    break;
  case ODB_BTD_KERNEL_WARP:
    ok = ((tpl == 8 && bt->b <= FW_T8_MAX_B) || tpl == 16 || tpl == 32) &&
         tpl * bt->vl <= 256;
    break;
  default:
    return ODB_FAIL(ODB_ERR_ARG, "stream factor: kernel %d unknown",
                    (int)kernel);
  }
  if (!ok)
    return ODB_FAIL(ODB_ERR_ARG, "stream factor: %d threads per line for "
                    "the %s kernel with VL %d and B %d; allowed: row 1, 2, "
                    "4 or 8 with VL*threads <= 32; tile 16 or 32, warp 8 "
                    "(B <= %d), 16 or 32, with VL*threads <= 256 (0: "
                    "automatic)", tpl, odb_btd_kernel_name(k), bt->vl, bt->b,
                    FW_T8_MAX_B);
  p->kernel = k;
  p->tpl = tpl;
  /* besides the mbarriers, the row kernel: two D blocks; the tile
     kernel: the pivot row and column buffers (8 B VL doubles) and the
     partial sums (2 T VL); the warp kernel: nothing */
  const size_t blk = 8 * (size_t)bt->b * bt->b * bt->vl, stage = 3 * blk;
  const size_t fixed =
    128 + (k == ODB_BTD_KERNEL_ROW ? 2 * blk
           : k == ODB_BTD_KERNEL_TILE ? 8 * (8 * (size_t)bt->b * bt->vl +
                                             2 * (size_t)tpl * bt->vl)
                                      : 0);
  if (stages == 0) {
    long waves = 0;
    stages = fixed + 2 * stage <= (size_t)dev_smem_optin ? 2 : 1;
    for (int st = stages; st <= FS_MAX_STAGES; ++st) {
      size_t smem = fixed + (size_t)st * stage;
      long per = smem <= (size_t)dev_smem_optin ? stream_per_sm(smem)
                                                : 0;
      if (per < 1) break;
      long w = (bt->packs + per * dev_sms - 1) / (per * dev_sms);
      if (st > 2 && w > waves) break;
      waves = w;
      stages = st;
    }
  }
  p->stages = stages;
  p->smem = fixed + (size_t)stages * stage;
  if (p->smem > (size_t)dev_smem_optin)
    return ODB_FAIL(ODB_ERR_ARG, "stream factor: %d stages of %zu bytes and "
                    "%zu bytes besides need %zu bytes of shared memory per "
                    "block; the device allows %d", stages, stage, fixed,
                    p->smem, dev_smem_optin);
  return ODB_OK;
}

/* }====== */

/* {====== the C interface */

odb_status btd_factor_stream_launch(const odb_blocktridiag *t, int stages,
                                    int threads_per_line,
                                    odb_btd_kernel kernel, double *dm,
                                    unsigned long long *flag) {
  fs_plan p = { ODB_BTD_KERNEL_AUTO, 0, 0, 0 };
  ODB_TRY(fs_plan_of(t, stages, threads_per_line, kernel, &p));
  if (!flag) {             /* the kernel always reports into a flag */
    ODB_TRY(flag_reset());
    flag = d_flag;
  }
  SWITCH_B(odb_blocktridiag_batch(t)->b, fs_run, t, &p, dm, flag);
  return launched("block-tridiagonal factor (stream)");
}

extern "C" odb_status odb_bgpu_btd_factor_stream(const odb_blocktridiag *t,
                                                 int stages,
                                                 int threads_per_line,
                                                 odb_btd_kernel kernel,
                                                 double *dm, long *bad_line) {
  if (bad_line) *bad_line = -1;
  ODB_TRY(flag_reset());
  ODB_TRY(btd_factor_stream_launch(t, stages, threads_per_line, kernel, dm,
                                   d_flag));
  return bad_line ? btd_flag_result(t, bad_line) : ODB_OK;
}

/* }====== */
