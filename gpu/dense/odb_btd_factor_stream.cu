/* odb_btd_factor_stream.cu - the stream factorization of block-tridiagonal
   lines (sm_90): block LU without pivoting of every line of a pack in one
   block of threads, each block row's blocks brought into shared memory by
   bulk copies (odb_bulk.cuh) rows ahead of the arithmetic and every factor
   written out once; its plan and the C interface of odb_batched_gpu.h for
   it. The compact layout of "Designing vector-friendly compact BLAS and
   LAPACK kernels" (K. Kim et al., SC17) makes a block row of a pack one
   contiguous run, so a copy per block moves it whole. Two kernels: the
   row kernel (up to a warp per pack, the running Schur complement in
   shared memory) and the tile kernel (up to eight warps per pack, the
   running Schur complement in registers) for the larger B. */
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
        int c = t + T * (m0 + g);
        c = c < B ? c : B - 1;                 /* computed, not stored */
#pragma unroll
        for (int i = 0; i < B; ++i) x[g][i] = Cs[(i * B + c) * VL];
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
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    issue(r + stages);
  }
#endif
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
  constexpr unsigned stage_bytes = 8u * 3u * blk;
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
  /* entry (a, b) of a thread's tile of a quadrant: rows tr + TR a,
     columns tc + TC b */
#define FT_OFF(a, b) (off + (TR * (a) * B + TC * (b)) * VL)
#define FT_IN(a, b) (tr + TR * (a) < B && tc + TC * (b) < B)
  if (threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) odb_mbar_init(bar0 + 8 * s, 1);
  __syncthreads();
  /* step s's stage (s < K - 1), by thread 0 */
  auto issue = [&](int s) {
    if (threadIdx.x != 0 || s >= K - 1) return;
    const unsigned bar = bar0 + 8 * (s % stages);
    odb_mbar_expect(bar, stage_bytes);
    double *dst = stg + (size_t)(s % stages) * 3 * blk;
    const double *src = pm + ((size_t)s * 3 + 2) * blk;
    for (int w = 0; w < 3; ++w)
      odb_bulk_g2s(dst + (size_t)w * blk, src + (size_t)w * blk, 8u * blk,
                   bar);
  };
  for (int s = 0; s < stages; ++s) issue(s);
  double x[2 * NR][2 * NC];                    /* [D C; A D'] tiles */
#pragma unroll
  for (int a = 0; a < NR; ++a)
#pragma unroll
    for (int b = 0; b < NC; ++b)
      x[a][b] = FT_IN(a, b) ? pm[blk + FT_OFF(a, b)] : 0.0;
  bool reported = false;
  for (int r = 0; r < K; ++r) {
    const bool more = r + 1 < K;
    double *fs = fsm + (r & 1) * T * VL;
    if (more) {
      odb_mbar_wait(bar0 + 8 * (r % stages), (unsigned)(r / stages) & 1u);
      const double *S = stg + (size_t)(r % stages) * 3 * blk;
#pragma unroll
      for (int a = 0; a < NR; ++a)
#pragma unroll
        for (int b = 0; b < NC; ++b) {
          const bool in = FT_IN(a, b);
          x[a][NC + b] = in ? S[FT_OFF(a, b)] : 0.0;
          x[NR + a][b] = in ? S[blk + FT_OFF(a, b)] : 0.0;
          x[NR + a][NC + b] = in ? S[2 * blk + FT_OFF(a, b)] : 0.0;
        }
      /* these generic-proxy reads before the copy engine's refill */
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    } else {
#pragma unroll
      for (int a = 0; a < NR; ++a)
#pragma unroll
        for (int b = 0; b < NC; ++b)
          x[a][NC + b] = x[NR + a][b] = x[NR + a][NC + b] = 0.0;
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
        if (FT_IN(a, b)) {
          const bool row0 = tr + TR * a == 0;
          if (r > 0 || !row0) Dg[FT_OFF(a, b)] = x[a][b];
          if (more) {
            if (!row0) Dg[blk + FT_OFF(a, b)] = x[a][NC + b];
            Ag[FT_OFF(a, b)] = x[NR + a][b];
          }
        }
    if (!more) break;
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
      for (int b = 0; b < NC; ++b) x[a][b] = x[NR + a][NC + b];
  }
#undef FT_OFF
#undef FT_IN
#endif
}

/* {====== plans and launches */

typedef struct fs_plan {
  int stages, tpl;   /* stages of the ring, threads per line */
  size_t smem;       /* dynamic shared memory per block, bytes */
} fs_plan;

template <int B, int VL, int T>
static void fs_launch(const odb_blocktridiag *t, const fs_plan *p, double *M,
                      unsigned long long *flag) {
  /* T <= 8: the row kernel; 16 and 32: the tile kernel */
  void (*k)(double *, int, int, long, unsigned long long *);
  if constexpr (T >= 16) k = k_btd_factor_tile<B, VL, T>;
  else k = k_btd_factor_stream<B, VL, T>;
  static int attr_set;     /* per kernel: the opt-in shared memory, once */
  if (!attr_set)           /* a failure stays for launched() to report */
    attr_set = cudaFuncSetAttribute(
      k, cudaFuncAttributeMaxDynamicSharedMemorySize, dev_smem_optin) ==
      cudaSuccess;
  const odb_batch *bt = odb_blocktridiag_batch(t);
  k<<<(unsigned)bt->packs, VL * T, p->smem>>>(
    M, odb_blocktridiag_length(t), p->stages, bt->n, flag);
}

/* VL 4, 8 or 16 and T 1, 2, 4 or 8 with VL*T <= 32, or 16 or 32 with
   VL*T <= 256 (checked by the caller); B = 0 never gets here. */
template <int B>
static void fs_run(const odb_blocktridiag *t, const fs_plan *p, double *M,
                   unsigned long long *flag) {
  if constexpr (B > 0) {
    const int vl = odb_blocktridiag_batch(t)->vl;
    switch (vl * 64 + p->tpl) {
    case 4 * 64 + 1: fs_launch<B, 4, 1>(t, p, M, flag); break;
    case 4 * 64 + 2: fs_launch<B, 4, 2>(t, p, M, flag); break;
    case 4 * 64 + 4: fs_launch<B, 4, 4>(t, p, M, flag); break;
    case 4 * 64 + 8: fs_launch<B, 4, 8>(t, p, M, flag); break;
    case 4 * 64 + 16: fs_launch<B, 4, 16>(t, p, M, flag); break;
    case 4 * 64 + 32: fs_launch<B, 4, 32>(t, p, M, flag); break;
    case 8 * 64 + 1: fs_launch<B, 8, 1>(t, p, M, flag); break;
    case 8 * 64 + 2: fs_launch<B, 8, 2>(t, p, M, flag); break;
    case 8 * 64 + 4: fs_launch<B, 8, 4>(t, p, M, flag); break;
    case 8 * 64 + 16: fs_launch<B, 8, 16>(t, p, M, flag); break;
    case 8 * 64 + 32: fs_launch<B, 8, 32>(t, p, M, flag); break;
    case 16 * 64 + 1: fs_launch<B, 16, 1>(t, p, M, flag); break;
    case 16 * 64 + 16: fs_launch<B, 16, 16>(t, p, M, flag); break;
    default: fs_launch<B, 16, 2>(t, p, M, flag); break;
    }
  }
}

/*
** The plan: T (0: automatic) threads per line, 1, 2, 4 or 8 with VL*T <=
** 32 (the row kernel, a warp per pack at most) or 16 or 32 with VL*T <=
** 256 (the tile kernel). Automatic: the row kernel with a full warp per
** pack (32/VL threads a line) but no more threads than the largest power
** of two not above B, since the rows and columns of a block are what the
** threads of a line share; the tile kernel with T = 16 at VL 16 from B = 9
** and at VL 8 from B = 13, where the row kernel's 2 or 4 threads a line
** carry too long a serial chain. Measured on an H200 (BENCHMARKS.md, "The
** automatic plan of the stream factor"): at VL 4 the row kernel (T 8) led
** the tile kernel (T 32) from B = 9 to 15, by 2.3x at B = 9 and 1.55x at
** B = 14, and tied at 16; at VL 8 the row kernel (T 4) led at B = 9 and
** 11 and T 16 led T 32 and T 4 at 14 and 16. Stages (0: automatic, else
** 1..FS_MAX_STAGES): the most stages, from two (one where two do not fit),
** that keep the packs within the fewest waves of resident blocks, as the
** stream solve's plan. Refuses what does not fit the device.
*/
static odb_status fs_plan_of(const odb_blocktridiag *t, int stages, int tpl,
                             fs_plan *p) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  const char *why = stream_unfit(t);
  if (why)
    return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU factor: variant "
                    "stream needs %s (have %s, VL %d, B %d)", why,
                    odb_batched_layout_name(bt->layout), bt->vl, bt->b);
  if (stages < 0 || stages > FS_MAX_STAGES)
    return ODB_FAIL(ODB_ERR_ARG, "stream factor: stages = %d, allowed "
                    "1..%d (0: automatic)", stages, FS_MAX_STAGES);
  if (tpl == 0 && bt->b >= 9 && (bt->vl == 16 || (bt->vl == 8 && bt->b >= 13)))
    tpl = 16;
  else if (tpl == 0) {
    tpl = 32 / bt->vl;
    while (tpl > 1 && tpl > bt->b) tpl /= 2;
  }
  if (!(((tpl == 1 || tpl == 2 || tpl == 4 || tpl == 8) &&
         tpl * bt->vl <= 32) ||
        ((tpl == 16 || tpl == 32) && tpl * bt->vl <= 256)))
    return ODB_FAIL(ODB_ERR_ARG, "stream factor: %d threads per line with "
                    "VL %d; allowed 1, 2, 4 or 8 with VL*threads <= 32, or "
                    "16 or 32 with VL*threads <= 256 (0: automatic)", tpl,
                    bt->vl);
  p->tpl = tpl;
  /* the row kernel: two D blocks; the tile kernel: the pivot row and
     column buffers (8 B VL doubles) and the partial sums (2 T VL) */
  const size_t blk = 8 * (size_t)bt->b * bt->b * bt->vl, stage = 3 * blk;
  const size_t fixed = tpl >= 16 ? 128 + 8 * (8 * (size_t)bt->b * bt->vl +
                                               2 * (size_t)tpl * bt->vl)
                                 : 128 + 2 * blk;
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
                                    int threads_per_line, double *dm,
                                    unsigned long long *flag) {
  fs_plan p = { 0, 0, 0 };
  ODB_TRY(fs_plan_of(t, stages, threads_per_line, &p));
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
                                                 double *dm, long *bad_line) {
  if (bad_line) *bad_line = -1;
  ODB_TRY(flag_reset());
  ODB_TRY(btd_factor_stream_launch(t, stages, threads_per_line, dm, d_flag));
  return bad_line ? btd_flag_result(t, bad_line) : ODB_OK;
}

/* }====== */
