/* odb_sparse_gpu.cu - reservoir matrices on the current CUDA device: upload
** of every format, SpMV kernels for CSR, BSR, ELL, HYB, DIA and Bdia with
** tuned launch options, and their timing (the cuSPARSE CSR/BSR baselines
** are in odb_sparse_cusparse.cu; odb_sparse_gpu.cuh holds what the two
** share).
**
** Kernels (y = A x, legacy default stream):
**   CSR   g threads per row (grain g = 1..32, a power of two), partial sums
**         reduced with shuffles among the row's threads.
**   BSR   one thread per scalar row; the row of each k x k block it meets
**         (block size a template parameter for 1..16).
**   ELL   one thread per row, column-major slots (coalesced).
**   HYB   the ELL kernel, then one thread per COO row (the first entry of
**         each row sums its row in order): deterministic, no atomics.
**   DIA   one thread per row over the diagonals (coalesced values and x).
**   Bdia  as in Al-Mouhamed and Khan, "SpMV and BiCG-Stab optimization
**         for a class of hepta-diagonal-sparse matrices on GPU" (sections
**         6.1 and 6.2): a block of threads owns a tile of Bc consecutive
**         cells, a thread computes grain (1, 2 or 4) rows of its cell from
**         the seven k x k blocks stored column-major over cells (consecutive
**         threads read consecutive words; each x word loaded serves grain
**         rows); x comes through L1/L2 or, with the
**         shared_x option, from the paper's cooperative load of the five x
**         ranges the tile needs (slots -JH, -J, {-1, 0, +1}, +J, +JH) into
**         shared memory. y is staged in shared memory and written
**         coalesced. With the pair option (even M, k <= 8) a thread
**         computes every row of two consecutive cells instead, loading each
**         value word pair as one 16-byte double2 and storing its 2k y
**         entries as double2 (no shared memory). With the stream option the
**         values are loaded with the evict-first hint (ld.global.cs): read
**         once per SpMV, they then leave x and y in L2 rather than
**         displacing them (worth about ten points of the copy bandwidth
**         at V=64, k=2 on an H200).
**         Wells: a second small kernel, one warp per well, adds
**         the W^T column to the well's cells and computes the well row.
** Tuning: an exhaustive loop over a small space (block size x grain, and
** shared_x for Bdia) timed with device events; the winner is kept per
** matrix shape in a process-wide table so a later upload of the same
** shape starts tuned. (The tuner's C interface needs an odb_ctx, which
** odb_sparse_gpu_upload does not have.)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <cuda_runtime.h>
#include <cusparse.h>

#include "odb_cuda_check.h"
#include "odb_gpulib_check.h"
extern "C" {
#include "odb_measure.h"
}
#include "odb_sparse_gpu.cuh"
#include "cuda_backend.h"
extern "C" {
#include "odb_rng.h"
}

/* {====== kernels */

/* CSR, TPR threads per row (power of two <= 32), grid-stride over rows. */
template <int TPR>
__global__ void k_csr(long n, const int64_t *__restrict__ rp,
                      const int32_t *__restrict__ col,
                      const double *__restrict__ val,
                      const double *__restrict__ x, double *__restrict__ y) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  int lane = (int)(t % TPR);
  long stride = (long)gridDim.x * blockDim.x / TPR;
  unsigned wl = threadIdx.x & 31u;
  unsigned mask = TPR == 32 ? 0xffffffffu
                            : (((1u << TPR) - 1u) << (wl & ~(unsigned)(TPR - 1)));
  for (long row = t / TPR; row < n; row += stride) {
    double s = 0.0;
    int64_t e1 = rp[row + 1];
    for (int64_t e = rp[row] + lane; e < e1; e += TPR)
      s += __ldg(val + e) * __ldg(x + __ldg(col + e));
#pragma unroll
    for (int o = TPR / 2; o > 0; o /= 2) s += __shfl_xor_sync(mask, s, o, TPR);
    if (lane == 0) y[row] = s;
  }
}

/* BSR, one thread per scalar row; BS = 0: runtime block size bs. Columns
** at or past n (padding of the last block column) are skipped. */
template <int BS>
__global__ void k_bsr(long n, int bs_rt, const int64_t *__restrict__ brp,
                      const int32_t *__restrict__ bcol,
                      const double *__restrict__ bval,
                      const double *__restrict__ x, double *__restrict__ y) {
  const int bs = BS ? BS : bs_rt;
  long stride = (long)gridDim.x * blockDim.x;
  for (long row = (long)blockIdx.x * blockDim.x + threadIdx.x; row < n;
       row += stride) {
    long br = row / bs;
    int r = (int)(row - br * bs);
    double s = 0.0;
    for (int64_t e = brp[br]; e < brp[br + 1]; e++) {
      long c0 = (long)__ldg(bcol + e) * bs;
      const double *v = bval + ((size_t)e * bs + r) * bs;
      if (c0 + bs <= n) {
#pragma unroll
        for (int c = 0; c < (BS ? BS : 64); c++) {
          if (!BS && c >= bs) break;
          s += __ldg(v + c) * __ldg(x + c0 + c);
        }
      } else {
        for (int c = 0; c < bs && c0 + c < n; c++) s += __ldg(v + c) * __ldg(x + c0 + c);
      }
    }
    y[row] = s;
  }
}

/* ELL (HYB's ELL part), one thread per row, grid-stride. */
__global__ void k_ell(long n, int width, const int32_t *__restrict__ ecol,
                      const double *__restrict__ eval,
                      const double *__restrict__ x, double *__restrict__ y) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long r = (long)blockIdx.x * blockDim.x + threadIdx.x; r < n; r += stride) {
    double s = 0.0;
    for (int e = 0; e < width; e++) {
      size_t p = (size_t)e * n + r;
      s += __ldg(eval + p) * __ldg(x + __ldg(ecol + p));
    }
    y[r] = s;
  }
}

/* HYB's COO part (entries in row order): the first entry of each row adds
** its row's entries in order to y (after the ELL kernel). */
__global__ void k_coo(long ncoo, const int32_t *__restrict__ crow,
                      const int32_t *__restrict__ ccol,
                      const double *__restrict__ cval,
                      const double *__restrict__ x, double *__restrict__ y) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < ncoo; e += stride) {
    int32_t r = crow[e];
    if (e > 0 && crow[e - 1] == r) continue;
    double s = y[r];
    for (long q = e; q < ncoo && crow[q] == r; q++) s += cval[q] * __ldg(x + ccol[q]);
    y[r] = s;
  }
}

/* DIA, one thread per row over every diagonal, grid-stride. */
__global__ void k_dia(long n, long ndiag, const int64_t *__restrict__ doff,
                      const double *__restrict__ dval,
                      const double *__restrict__ x, double *__restrict__ y) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long r = (long)blockIdx.x * blockDim.x + threadIdx.x; r < n; r += stride) {
    double s = 0.0;
    for (long d = 0; d < ndiag; d++) {
      long c = r + __ldg(doff + d);
      if (c >= 0 && c < n) s += __ldg(dval + (size_t)d * n + r) * __ldg(x + c);
    }
    y[r] = s;
  }
}

/* Bdia geometry shared by the kernels. The stored cells are the grid's
** first .. first + M - 1 (the whole grid, or a rank's slab of planes:
** odb_sparse_gpu_bdia_slab); x holds their values (M k columns from
** column c0 = first k), and a slab's ghosts are at xg: xg[-1] is the
** column just below the slab, xg[0] the one just above. A launch computes
** the stored cells [m0, m1). */
typedef struct bdia_geo {
  long M, Mk, J, JH;
  int half;     /* GH-h */
  int Bc;       /* cells per tile */
  long first, c0, Mkl;   /* first cell; its first column; M k */
  long m0, m1;
  const double *xg;      /* NULL: the whole grid (no column lies outside x) */
  long nlo, nhi;         /* ghost columns below and above (0 and 0: the
                            whole grid) */
} bdia_geo;

/* Column cc of the grid (Mk columns): 0 outside the grid, else from the
   stored cells' x or, on a slab, its ghosts; 0 too beyond the ghosts,
   where only the shared-x tiles reach (no cell's block does). */
__device__ __forceinline__ double xcol(const bdia_geo &g, const double *__restrict__ x, long cc) {
  if (cc < 0 || cc >= g.Mk) return 0.0;
  const long r = cc - g.c0;
  if (r < 0) return r >= -g.nlo ? __ldg(g.xg + r) : 0.0;
  if (r >= g.Mkl) return r < g.Mkl + g.nhi ? __ldg(g.xg + (r - g.Mkl)) : 0.0;
  return __ldg(x + r);
}

/* Block offset (cells) of slot u. */
__device__ __forceinline__ long slot_off(const bdia_geo &g, int u) {
  return u == 0 ? -g.JH : u == 1 ? -g.J : u == 2 ? -1L : u == 3 ? 0L
       : u == 4 ? 1L : u == 5 ? g.J : g.JH;
}

/* One matrix value: evict-first (ST) or through the read-only path. */
template <bool ST>
__device__ __forceinline__ double ldval(const double *p) {
  return ST ? __ldcs(p) : __ldg(p);
}

/* Two matrix values of consecutive cells (p 16-byte aligned). */
template <bool ST>
__device__ __forceinline__ double2 ldval2(const double *p) {
  return ST ? __ldcs((const double2 *)p) : __ldg((const double2 *)p);
}

/* Bdia cell rows, K components, G rows of a cell per thread (G divides
** K), tiles of g.Bc cells, blockDim = Bc*K/G, one tile per block. Thread
** (lm, q) computes rows q*G .. q*G+G-1 of cell m0+lm, so each x word it
** loads serves G rows. SHX: the five x ranges of the tile are loaded into
** shared memory first (Al-Mouhamed and Khan, 6.1). ST: values loaded evict-first. Shared
** memory: y staging Bc*K doubles, then (SHX) the x chunks. */
template <int K, int G, bool SHX, bool ST>
__global__ void k_bdia(bdia_geo g, const double *__restrict__ val,
                       const double *__restrict__ x, double *__restrict__ y) {
  extern __shared__ double sm[];
  constexpr int H2 = K / 2;
  const int Bc = g.Bc;
  const int tid = threadIdx.x, lm = tid % Bc, q = tid / Bc;
  const int nthr = blockDim.x;
  const long M = g.M;
  const size_t KKM = (size_t)K * K * M;
  double *ysh = sm;
  double *xs = sm + (size_t)Bc * K;
  const int Lc = Bc * K + 2 * H2;                  /* chunk of slots 0,1,5,6 */
  const int Lm = (Bc + 2) * K + 2 * H2;            /* chunk of slots 2,3,4 */
  const long m0 = g.m0 + (long)blockIdx.x * Bc, m = m0 + lm, gm0 = g.first + m0;
  if (SHX) {
    /* cooperative load of the tile's five x ranges */
    const long start[5] = {(gm0 - g.JH) * K - H2, (gm0 - g.J) * K - H2, (gm0 - 1) * K - H2,
                           (gm0 + g.J) * K - H2, (gm0 + g.JH) * K - H2};
    const int base[5] = {0, Lc, 2 * Lc, 2 * Lc + Lm, 3 * Lc + Lm};
    const int len[5] = {Lc, Lc, Lm, Lc, Lc};
#pragma unroll
    for (int c = 0; c < 5; c++)
      for (int i = tid; i < len[c]; i += nthr) xs[base[c] + i] = xcol(g, x, start[c] + i);
    __syncthreads();
  }
  if (m < g.m1) {
    const int odd = g.half && ((g.first + m) & 1);
    const double *v = val + (size_t)q * G * K * M + m;
    double s[G];
#pragma unroll
    for (int j = 0; j < G; j++) s[j] = 0.0;
#pragma unroll
    for (int u = 0; u < 7; u++) {
      const int bias = (odd && u != 3) ? (u < 3 ? -H2 : H2) : 0;
      const double *vu = v + (size_t)u * KKM;
      double xv[K];
      if (SHX) {
        int c5 = u < 2 ? u : u <= 4 ? 2 : u - 2;
        int b0 = c5 == 0 ? 0 : c5 == 1 ? Lc : c5 == 2 ? 2 * Lc : c5 == 3 ? 2 * Lc + Lm : 3 * Lc + Lm;
        int i0 = b0 + (c5 == 2 ? (lm + (u - 3) + 1) * K : lm * K) + bias + H2;
#pragma unroll
        for (int c = 0; c < K; c++) xv[c] = xs[i0 + c];
      } else {
        long c0 = (g.first + m + slot_off(g, u)) * K + bias;
#pragma unroll
        for (int c = 0; c < K; c++) xv[c] = xcol(g, x, c0 + c);
      }
#pragma unroll
      for (int j = 0; j < G; j++)
#pragma unroll
        for (int c = 0; c < K; c++) s[j] += ldval<ST>(vu + (size_t)(j * K + c) * M) * xv[c];
    }
#pragma unroll
    for (int j = 0; j < G; j++) ysh[lm * K + q * G + j] = s[j];
  }
  __syncthreads();
  long cells = g.m1 - m0 < Bc ? g.m1 - m0 : Bc;
  for (int i = tid; i < cells * K; i += nthr) y[m0 * K + i] = ysh[i];
}

/* Bdia cell rows, pair form: thread t computes all K rows of cells
** m = m0 + 2t and m + 1 (M and m0 even, so every value pair val[p*M + m],
** val[p*M + m + 1] is 16-byte aligned and read as one double2); of the
** two, the cell odd in the grid has the GH-h bias. The 2K y entries of the
** pair are contiguous and stored as double2 (K even) or doubles. One pair
** per thread; m1 - m0 even. */
template <int K, bool ST>
__global__ void k_bdia_pair(bdia_geo g, const double *__restrict__ val,
                            const double *__restrict__ x, double *__restrict__ y) {
  constexpr int H2 = K / 2;
  const long M = g.M, t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (g.m1 - g.m0) / 2) return;
  const long m = g.m0 + 2 * t;
  const int odd1 = !((g.first + m) & 1);   /* which of the two is odd */
  double s0[K], s1[K];
#pragma unroll
  for (int r = 0; r < K; r++) { s0[r] = 0.0; s1[r] = 0.0; }
#pragma unroll
  for (int u = 0; u < 7; u++) {
    const long off = slot_off(g, u);
    const int bb = g.half ? (u < 3 ? -H2 : u > 3 ? H2 : 0) : 0;
    const long c0 = (g.first + m + off) * K + (odd1 ? 0 : bb), c1 = (g.first + m + 1 + off) * K + (odd1 ? bb : 0);
    double x0[K], x1[K];
#pragma unroll
    for (int c = 0; c < K; c++) {
      x0[c] = xcol(g, x, c0 + c);
      x1[c] = xcol(g, x, c1 + c);
    }
    const double *vu = val + (size_t)u * K * K * M + m;
#pragma unroll
    for (int r = 0; r < K; r++)
#pragma unroll
      for (int c = 0; c < K; c++) {
        double2 v = ldval2<ST>(vu + (size_t)(r * K + c) * M);
        s0[r] += v.x * x0[c];
        s1[r] += v.y * x1[c];
      }
  }
  double *yo = y + m * K;
  if (K % 2 == 0) {
#pragma unroll
    for (int r = 0; r + 1 < K; r += 2) {
      ((double2 *)yo)[r / 2] = make_double2(s0[r], s0[r + 1]);
      ((double2 *)(yo + K))[r / 2] = make_double2(s1[r], s1[r + 1]);
    }
  } else {
#pragma unroll
    for (int r = 0; r < K; r++) { yo[r] = s0[r]; yo[K + r] = s1[r]; }
  }
}

/* Bdia wells, one warp per well (after k_bdia): y of the well's cells
** (component 0) gets W^T x_w; y of the well row is D x_w + W x. */
__global__ void k_bdia_wells(int nw, int k, long Mk, const double *__restrict__ Wa,
                             const double *__restrict__ WTa,
                             const int *__restrict__ a, const int *__restrict__ b,
                             const int *__restrict__ c, const double *__restrict__ D,
                             const double *__restrict__ x, double *__restrict__ y) {
  int w = (int)(((long)blockIdx.x * blockDim.x + threadIdx.x) / 32);
  int lane = threadIdx.x & 31;
  if (w >= nw) return;          /* whole warps leave together */
  double xw = x[Mk + w], s = 0.0;
  int aw = a[w], cw = c[w];
  long bw = b[w];
  for (int t = lane; t < cw; t += 32) {
    long cell = bw + t;
    s += Wa[aw + t] * x[cell * k];
    y[cell * k] += WTa[aw + t] * xw;
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) y[Mk + w] = D[w] * xw + s;
}

/* }====== */

/* {====== launch options */

typedef void (*bdia_kfn)(bdia_geo, const double *, const double *, double *);

/* Rows per thread G of the Bdia kernels: 1, 2 or 4 (index 0..2). */
static int g_index(int G) { return G == 1 ? 0 : G == 2 ? 1 : G == 4 ? 2 : -1; }

/* k_bdia<K, G, shx, st> for runtime shx and st. */
#define BDIA_SX(KK, GG)                                                               \
  (shx ? (st ? k_bdia<KK, GG, true, true> : k_bdia<KK, GG, true, false>)              \
       : (st ? k_bdia<KK, GG, false, true> : k_bdia<KK, GG, false, false>))

/* The Bdia kernel for K, G, shared_x and stream (NULL when not instantiated). */
static bdia_kfn bdia_kernel(int K, int G, int shx, int st) {
#define BDIA_K(KK)                                                                    \
  case KK:                                                                            \
    if (G == 1) return BDIA_SX(KK, 1);                                                \
    if (G == 2 && KK % 2 == 0) return BDIA_SX(KK, (KK % 2 ? 1 : 2));                  \
    if (G == 4 && KK % 4 == 0) return BDIA_SX(KK, (KK % 4 ? 1 : 4));                  \
    return NULL;
  switch (K) {
  BDIA_K(1) BDIA_K(2) BDIA_K(3) BDIA_K(4) BDIA_K(5) BDIA_K(6) BDIA_K(7) BDIA_K(8)
  BDIA_K(9) BDIA_K(10) BDIA_K(11) BDIA_K(12) BDIA_K(13) BDIA_K(14) BDIA_K(15) BDIA_K(16)
  default: return NULL;
  }
#undef BDIA_K
}

#undef BDIA_SX

/* Most cells of a pair-form Bdia kernel (k <= 8). */
#define PAIR_KMAX 8

/* The pair-form Bdia kernel for K (1..PAIR_KMAX) and stream; NULL otherwise. */
static bdia_kfn bdia_pair_kernel(int K, int st) {
#define PAIR_K(KK) case KK: return st ? k_bdia_pair<KK, true> : k_bdia_pair<KK, false>;
  switch (K) {
  PAIR_K(1) PAIR_K(2) PAIR_K(3) PAIR_K(4) PAIR_K(5) PAIR_K(6) PAIR_K(7) PAIR_K(8)
  default: return NULL;
  }
#undef PAIR_K
}

/* Most threads per block the Bdia kernel (K, G, shx) can launch with (its
** registers), cached; 0 when unknown. */
static int bdia_max_threads(int K, int G, int shx, int st) {
  static int cache[17][3][2][2];
  int gi = g_index(G);
  if (K < 1 || K > 16 || gi < 0) return 0;
  int v = __atomic_load_n(&cache[K][gi][shx][st], __ATOMIC_RELAXED);
  if (v) return v;
  bdia_kfn fn = bdia_kernel(K, G, shx, st);
  cudaFuncAttributes fa;
  if (!fn || cudaFuncGetAttributes(&fa, (const void *)fn) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  __atomic_store_n(&cache[K][gi][shx][st], fa.maxThreadsPerBlock, __ATOMIC_RELAXED);
  return fa.maxThreadsPerBlock;
}

/* Most threads per block of the pair-form kernel (K, st); 0 when unknown. */
static int pair_max_threads(int K, int st) {
  static int cache[PAIR_KMAX + 1][2];
  if (K < 1 || K > PAIR_KMAX) return 0;
  int v = __atomic_load_n(&cache[K][st], __ATOMIC_RELAXED);
  if (v) return v;
  cudaFuncAttributes fa;
  bdia_kfn fn = bdia_pair_kernel(K, st);
  if (!fn || cudaFuncGetAttributes(&fa, (const void *)fn) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  __atomic_store_n(&cache[K][st], fa.maxThreadsPerBlock, __ATOMIC_RELAXED);
  return fa.maxThreadsPerBlock;
}

/* Cells per tile of a Bdia launch for a requested block size: a multiple
** of 32 (whole warps over consecutive cells) with Bc*K/G threads within
** what the kernel can launch. */
static int bdia_cells(int block, int K, int G, int shx, int st) {
  int tpc = K / G;
  int maxt = bdia_max_threads(K, G, shx, st);
  if (maxt <= 0 || maxt > 1024) maxt = 1024;
  int bc = block / tpc / 32 * 32;
  if (bc < 32) bc = 32;
  while (bc * tpc > maxt && bc > 32) bc -= 32;
  if (bc * tpc > maxt) bc = maxt / tpc > 0 ? maxt / tpc : 1;
  return bc;
}

/* Dynamic shared memory (bytes) of a Bdia launch. */
static size_t bdia_smem(int Bc, int K, int shx) {
  size_t d = (size_t)Bc * K;
  if (shx) d += 4 * ((size_t)Bc * K + 2 * (K / 2)) + (size_t)(Bc + 2) * K + 2 * (K / 2);
  return d * sizeof(double);
}

/* Default options of a format (before tuning). */
static odb_sparse_gpu_opts default_opts(const odb_sparse_gpu *g) {
  odb_sparse_gpu_opts o = {256, 1, 0, 0, 0};
  if (g->fmt == ODB_FMT_CSR) o.grain = g->n > 0 && g->nnz / g->n >= 16 ? 8 : 4;
  return o;
}

/* Whether v is a power of two. */
static int pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* o against g's format; ODB_ERR_ARG naming the field. */
static odb_status opts_check(const odb_sparse_gpu *g, const odb_sparse_gpu_opts *o) {
  if (o->block < 32 || o->block > 1024 || o->block % 32)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: block must be a multiple of 32 in "
                    "32..1024, got %d", o->block);
  if (g->fmt == ODB_FMT_CSR) {
    if (!pow2(o->grain) || o->grain > 32)
      return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: CSR grain (threads per row) must be "
                      "1, 2, 4, 8, 16 or 32, got %d", o->grain);
  } else if (g->fmt == ODB_FMT_BDIA) {
    if (g_index(o->grain) < 0 || g->k % o->grain)
      return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: Bdia grain (rows of a cell per thread) "
                      "must be 1, 2 or 4 and divide k = %d, got %d", g->k, o->grain);
  } else if (o->grain < 1 || o->grain > 64) {
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: grain must be in 1..64, got %d", o->grain);
  }
  if (o->shared_x != 0 && o->shared_x != 1)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: shared_x must be 0 or 1, got %d",
                    o->shared_x);
  if (o->shared_x && g->fmt != ODB_FMT_BDIA)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: shared_x applies to bdia only, not %s",
                    odb_sparse_format_name(g->fmt));
  if ((o->pair != 0 && o->pair != 1) || (o->stream != 0 && o->stream != 1))
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: %s must be 0 or 1, got %d",
                    o->pair != 0 && o->pair != 1 ? "pair" : "stream",
                    o->pair != 0 && o->pair != 1 ? o->pair : o->stream);
  if ((o->pair || o->stream) && g->fmt != ODB_FMT_BDIA)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: %s applies to bdia only, not %s",
                    o->pair ? "pair" : "stream", odb_sparse_format_name(g->fmt));
  if (o->pair && (g->M % 2 || g->k > PAIR_KMAX || o->grain != 1 || o->shared_x))
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: pair (two cells per thread) needs an even "
                    "number of cells (got %ld), k <= %d (got %d), grain 1 (got %d) and "
                    "shared_x 0 (got %d)", g->M, PAIR_KMAX, g->k, o->grain, o->shared_x);
  if (o->pair && o->block > pair_max_threads(g->k, o->stream))
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: block %d exceeds the %d threads the pair "
                    "kernel for k = %d can launch", o->block, pair_max_threads(g->k, o->stream), g->k);
  if (g->fmt == ODB_FMT_BDIA && o->shared_x) {
    size_t sm = bdia_smem(bdia_cells(o->block, g->k, o->grain, 1, o->stream), g->k, 1);
    if (sm > 48 * 1024)
      return ODB_FAIL(ODB_ERR_ARG, "sparse GPU options: shared_x with block %d and k = %d "
                      "needs %zu bytes of shared memory, more than 48 KiB", o->block, g->k, sm);
  }
  return ODB_OK;
}

/* See the header. */
const char *odb_sparse_gpu_opts_str(const odb_sparse_gpu_opts *o, char *buf, size_t len) {
  snprintf(buf, len, "block=%d grain=%d shared_x=%d pair=%d stream=%d", o->block, o->grain,
           o->shared_x, o->pair, o->stream);
  return buf;
}

/* See the header. */
int odb_sparse_gpu_space(const odb_sparse_gpu *g, odb_sparse_gpu_opts *out, int max) {
  static const int blocks[] = {128, 256, 512, 1024};
  int n = 0;
  for (int b = 0; b < 4; b++) {
    int nb = blocks[b];
    if (g->fmt == ODB_FMT_CSR) {
      if (nb == 1024) continue;
      for (int t = 1; t <= 32; t *= 2) {
        odb_sparse_gpu_opts o = {nb, t, 0, 0, 0};
        if (n < max) out[n] = o;
        n++;
      }
    } else {
      int shx_max = g->fmt == ODB_FMT_BDIA ? 1 : 0;
      if (g->fmt != ODB_FMT_BDIA && nb == 1024) continue;
      for (int gr = 1; gr <= 4; gr *= 2)
        for (int s = 0; s <= shx_max; s++)
          for (int st = 0; st <= shx_max; st++) {
            odb_sparse_gpu_opts o = {nb, gr, s, 0, st};
            if (g->fmt == ODB_FMT_BDIA && g->k % gr) continue;
            if (s && bdia_smem(bdia_cells(nb, g->k, gr, 1, st), g->k, 1) > 48 * 1024) continue;
            if (n < max) out[n] = o;
            n++;
          }
    }
  }
  if (g->fmt == ODB_FMT_BDIA && g->M % 2 == 0 && g->k <= PAIR_KMAX)
    for (int nb = 64; nb <= 256; nb *= 2)
      for (int st = 0; st <= 1; st++) {
        odb_sparse_gpu_opts o = {nb, 1, 0, 1, st};
        if (nb > pair_max_threads(g->k, st)) continue;
        if (n < max) out[n] = o;
        n++;
      }
  return n;
}

/* Process-wide table of tuned options per shape. */
typedef struct shape_key {
  int fmt, k, pattern, nw, J, H, I;
  long n, nnz;
} shape_key;

#define TUNED_MAX 256
static struct { shape_key key; odb_sparse_gpu_opts o; } tuned_tab[TUNED_MAX];
static int tuned_n, tuned_next;
static pthread_mutex_t tuned_lock = PTHREAD_MUTEX_INITIALIZER;

/* The shape of g. */
static shape_key key_of(const odb_sparse_gpu *g) {
  shape_key k;
  memset(&k, 0, sizeof k);
  k.fmt = (int)g->fmt; k.n = g->n; k.nnz = g->nnz; k.k = g->k;
  k.pattern = (int)g->pattern; k.nw = g->nw; k.J = g->J; k.H = g->H; k.I = g->I;
  return k;
}

/* Options tuned earlier for g's shape into *o; 0 when none. */
static int tuned_lookup(const odb_sparse_gpu *g, odb_sparse_gpu_opts *o) {
  shape_key k = key_of(g);
  int hit = 0;
  pthread_mutex_lock(&tuned_lock);
  for (int i = 0; i < tuned_n; i++)
    if (!memcmp(&tuned_tab[i].key, &k, sizeof k)) { *o = tuned_tab[i].o; hit = 1; break; }
  pthread_mutex_unlock(&tuned_lock);
  return hit;
}

/* Remembers o for g's shape (replacing an older entry when full). */
static void tuned_store(const odb_sparse_gpu *g, const odb_sparse_gpu_opts *o) {
  shape_key k = key_of(g);
  pthread_mutex_lock(&tuned_lock);
  int i;
  for (i = 0; i < tuned_n; i++)
    if (!memcmp(&tuned_tab[i].key, &k, sizeof k)) break;
  if (i == tuned_n) {
    if (tuned_n < TUNED_MAX) i = tuned_n++;
    else { i = tuned_next; tuned_next = (tuned_next + 1) % TUNED_MAX; }
  }
  tuned_tab[i].key = k;
  tuned_tab[i].o = *o;
  pthread_mutex_unlock(&tuned_lock);
}

/* }====== */

/* {====== upload */

/* Bytes the device copy of A needs. */
static size_t device_bytes(const odb_sparse *A) {
  if (A->fmt != ODB_FMT_BDIA) return odb_sparse_bytes(A);
  const odb_bdia *b = A->bd;
  size_t nw = (size_t)b->nw;
  return 8 * (size_t)7 * b->k * b->k * b->M + 16 * nw * b->J + 12 * nw
         + 4 * (size_t)b->pu * b->pv + 8 * nw;
}

/* Nonzeros of a Bdia matrix built from the grid (which leaves A->nnz at
** 0): the stored nonzero values, so truncated blocks' zeros do not count. */
static long bdia_nnz(const odb_bdia *b) {
  size_t ns = (size_t)7 * b->k * b->k, nw = (size_t)b->nw * b->J;
  long cnt = 0;
  for (size_t q = 0; q < ns; q++)
    for (long m = 0; m < b->M; m++) cnt += b->val[q * b->ldv + m] != 0.0;
  for (size_t i = 0; i < nw; i++) cnt += (b->Wa[i] != 0.0) + (b->WTa[i] != 0.0);
  for (int w = 0; w < b->nw; w++) cnt += b->D[w] != 0.0;
  return cnt;
}

/* cudaMalloc + copy of bytes from h (bytes may be 0: *d stays NULL). */
/* See the header. */
odb_status odb_sparse_gpu_bdia_values(const odb_bdia *b, double **dev, size_t *bytes) {
  size_t w = (size_t)b->M * sizeof(double), ns = (size_t)7 * b->k * b->k;
  *dev = NULL;
  *bytes = w * ns;
  ODB_CUDA_CHECK(cudaMalloc((void **)dev, *bytes));
  cudaError_t e = cudaMemcpy2D(*dev, w, b->val, (size_t)b->ldv * sizeof(double), w, ns,
                               cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaFree(*dev);
    *dev = NULL;
    return odb_cuda_fail(e, "cudaMemcpy2D (Bdia values)", __FILE__, __LINE__);
  }
  return ODB_OK;
}

static odb_status dev_copy(void **d, const void *h, size_t bytes, size_t *total) {
  *d = NULL;
  if (!bytes) return ODB_OK;
  ODB_CUDA_CHECK(cudaMalloc(d, bytes));
  *total += bytes;
  ODB_CUDA_CHECK(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
  return ODB_OK;
}

#define DEV(ptr, host, count) \
  dev_copy((void **)&(ptr), (host), (size_t)(count) * sizeof *(host), &g->bytes)

/* Copies the arrays of A's format. */
static odb_status upload_arrays(const odb_sparse *A, odb_sparse_gpu *g) {
  odb_status st = ODB_OK;
  long n = A->n;
  switch (A->fmt) {
  case ODB_FMT_CSR:
    if ((st = DEV(g->rowptr, A->rowptr, n + 1)) || (st = DEV(g->col, A->col, A->nnz)) ||
        (st = DEV(g->val, A->val, A->nnz))) return st;
    break;
  case ODB_FMT_BSR:
    if ((st = DEV(g->browptr, A->browptr, A->nbr + 1)) ||
        (st = DEV(g->bcol, A->bcol, A->nblocks)) ||
        (st = DEV(g->bval, A->bval, (size_t)A->nblocks * A->bs * A->bs))) return st;
    break;
  case ODB_FMT_HYB:
    if (A->ncoo && ((st = DEV(g->crow, A->crow, A->ncoo)) || (st = DEV(g->ccol, A->ccol, A->ncoo)) ||
                    (st = DEV(g->cval, A->cval, A->ncoo)))) return st;
    [[fallthrough]];  /* the ELL part */
  case ODB_FMT_ELL:
    if ((st = DEV(g->ecol, A->ecol, (size_t)n * A->width)) ||
        (st = DEV(g->eval, A->eval, (size_t)n * A->width))) return st;
    break;
  case ODB_FMT_DIA:
    if ((st = DEV(g->doff, A->doff, A->ndiag)) ||
        (st = DEV(g->dval, A->dval, (size_t)n * A->ndiag))) return st;
    break;
  case ODB_FMT_BDIA: {
    const odb_bdia *b = A->bd;
    size_t nw = (size_t)b->nw, vb = 0;
    if ((st = odb_sparse_gpu_bdia_values(b, &g->bdval, &vb))) return st;
    g->bytes += vb;
    if ((st = DEV(g->Wa, b->Wa, nw * b->J)) || (st = DEV(g->WTa, b->WTa, nw * b->J)) ||
        (st = DEV(g->wa, b->a, nw)) || (st = DEV(g->wb, b->b, nw)) || (st = DEV(g->wc, b->c, nw)) ||
        (st = DEV(g->wd, b->d, (size_t)b->pu * b->pv)) || (st = DEV(g->D, b->D, nw))) return st;
    break;
  }
  default:
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU upload: unknown format %d", (int)A->fmt);
  }
  return ODB_OK;
}

#undef DEV

/* See the header. */
odb_status odb_sparse_gpu_mem(size_t *free_b, size_t *total_b) {
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "no CUDA device: %s",
                    e != cudaSuccess ? cudaGetErrorString(e) : "none found");
  }
  ODB_CUDA_CHECK(cudaMemGetInfo(free_b, total_b));
  return ODB_OK;
}

/* See the header. */
odb_status odb_sparse_gpu_upload(const odb_sparse *A, odb_sparse_gpu **out) {
  odb_sparse_gpu *g = NULL;
  size_t need, fb = 0, tb = 0;
  odb_status st;
  const size_t margin = (size_t)64 << 20;

  *out = NULL;
  if (!A) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU upload: no matrix");
  if ((unsigned)A->fmt >= ODB_FMT_COUNT || (A->fmt == ODB_FMT_BDIA && !A->bd))
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU upload: invalid matrix of format %d", (int)A->fmt);
  ODB_TRY(odb_sparse_gpu_mem(&fb, &tb));
  need = device_bytes(A);
  if (need + margin > fb)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s matrix of order %ld needs %zu bytes (%.2f GiB) on the "
                    "device, %zu bytes (%.2f GiB) free of %.2f GiB",
                    odb_sparse_format_name(A->fmt), A->n, need, need / 1073741824.0, fb,
                    fb / 1073741824.0, tb / 1073741824.0);
  g = (odb_sparse_gpu *)calloc(1, sizeof *g);
  spmv_priv *p = (spmv_priv *)calloc(1, sizeof *p);
  if (!g || !p) {
    free(g); free(p);
    return ODB_FAIL(ODB_ERR_NOMEM, "sparse GPU upload: host descriptor");
  }
  g->priv = p;
  g->fmt = A->fmt; g->n = A->n; g->nnz = A->nnz;
  g->bs = A->bs; g->nbr = A->nbr; g->nblocks = A->nblocks;
  g->width = A->width; g->ncoo = A->ncoo; g->ndiag = A->ndiag;
  if (A->fmt == ODB_FMT_BDIA) {
    const odb_bdia *b = A->bd;
    g->J = b->J; g->H = b->H; g->I = b->I; g->k = b->k; g->nw = b->nw;
    g->pu = b->pu; g->pv = b->pv; g->pattern = b->pattern; g->M = b->M;
    if (g->nnz <= 0) g->nnz = bdia_nnz(b);
  } else if (A->fmt == ODB_FMT_BSR) {
    g->k = A->bs;
  } else {
    g->k = 1;
  }
  st = upload_arrays(A, g);
  if (st != ODB_OK) {
    if (st == ODB_ERR_NOMEM) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", odb_last_error());
      st = ODB_FAIL(ODB_ERR_NOMEM, "%s matrix of order %ld needs %zu bytes on the device: %s",
                    odb_sparse_format_name(A->fmt), A->n, need, msg);
    }
    odb_sparse_gpu_free(g);
    return st;
  }
  p->opts = default_opts(g);
  if (tuned_lookup(g, &p->opts)) p->tuned = 1;
  *out = g;
  return ODB_OK;
}

/* See the header; accepts NULL. */
void odb_sparse_gpu_free(odb_sparse_gpu *g) {
  if (!g) return;
  spmv_priv *p = priv(g);
  if (p) {
    cusparse_release(p);
    cudaFree(p->bx); cudaFree(p->by);
    free(p);
  }
  void *arrs[] = {g->rowptr, g->col, g->val, g->browptr, g->bcol, g->bval, g->ecol, g->eval,
                  g->crow, g->ccol, g->cval, g->doff, g->dval, g->bdval, g->Wa, g->WTa,
                  g->wa, g->wb, g->wc, g->wd, g->D};
  for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) cudaFree(arrs[i]);
  (void)cudaGetLastError();
  free(g);
}

/* }====== */

/* {====== our SpMV */

/* CSR launch with TPR threads per row. */
template <int TPR>
static void launch_csr(odb_sparse_gpu *g, int block, const double *x, double *y, cudaStream_t st) {
  unsigned grid = grid_for(g->n * TPR, block, 1);
  k_csr<TPR><<<grid, block, 0, st>>>(g->n, g->rowptr, g->col, g->val, x, y);
}

/* BSR launch, block size templated for 1..16. */
static void launch_bsr(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o, const double *x,
                       double *y, cudaStream_t st) {
  unsigned grid = grid_for(g->n, o->block, o->grain);
#define BSR_CASE(B) case B: k_bsr<B><<<grid, o->block, 0, st>>>(g->n, g->bs, g->browptr, g->bcol, \
                                                         g->bval, x, y); break;
  switch (g->bs) {
  BSR_CASE(1) BSR_CASE(2) BSR_CASE(3) BSR_CASE(4) BSR_CASE(5) BSR_CASE(6) BSR_CASE(7)
  BSR_CASE(8) BSR_CASE(9) BSR_CASE(10) BSR_CASE(11) BSR_CASE(12) BSR_CASE(13)
  BSR_CASE(14) BSR_CASE(15) BSR_CASE(16)
  default:
    k_bsr<0><<<grid, o->block, 0, st>>>(g->n, g->bs, g->browptr, g->bcol, g->bval, x, y);
  }
#undef BSR_CASE
}

/* The cell kernel fn (pair form or not, as o says) on cells [m0, m1) of geo. */
static void launch_bdia_cells(const odb_sparse_gpu *g, const odb_sparse_gpu_opts *o, bdia_kfn fn,
                              bdia_geo *geo, const double *x, double *y, cudaStream_t st) {
  int K = g->k;
  long cells = geo->m1 - geo->m0;
  if (cells <= 0) return;
  if (o->pair) {
    geo->Bc = 0;
    if (cells >= 2)
      fn<<<grid_for(cells / 2, o->block, 1), o->block, 0, st>>>(*geo, g->bdval, x, y);
  } else {
    geo->Bc = bdia_cells(o->block, K, o->grain, o->shared_x, o->stream);
    long ntiles = (cells + geo->Bc - 1) / geo->Bc;
    unsigned thr = (unsigned)(geo->Bc * (K / o->grain));
    size_t sm = bdia_smem(geo->Bc, K, o->shared_x);
    fn<<<(unsigned)ntiles, thr, sm, st>>>(*geo, g->bdval, x, y);
  }
}

/* The wells of g (after its cells): they read only x's own values. */
static void launch_bdia_wells(const odb_sparse_gpu *g, const double *x, double *y, cudaStream_t st) {
  unsigned wg = (unsigned)((g->nw * 32L + 127) / 128);
  k_bdia_wells<<<wg, 128, 0, st>>>(g->nw, g->k, g->M * g->k, g->Wa, g->WTa, g->wa, g->wb, g->wc, g->D, x, y);
}

/* Bdia launch on stored cells [m0, m1) of a grid of Mk columns whose
** cells g holds from cell first (the geometry of bdia_geo), then the wells
** when wells is 1: the cell kernel for o's (k, grain, shared_x, pair,
** stream), one cell a thread where the pair form would meet an odd end. */
static odb_status bdia_run(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o_in, long first, long Mk,
                           const double *x, const double *xg, long nlo, long nhi, double *y,
                           long m0, long m1, int wells, cudaStream_t st) {
  odb_sparse_gpu_opts o = *o_in;
  int K = g->k;
  if (o.pair && ((m0 | m1) & 1)) { o.pair = 0; o.grain = 1; o.shared_x = 0; }
  bdia_kfn fn = o.pair ? bdia_pair_kernel(K, o.stream) : bdia_kernel(K, o.grain, o.shared_x, o.stream);
  if (!fn)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: no Bdia kernel for k = %d, grain %d, pair %d",
                    K, o.grain, o.pair);
  bdia_geo geo;
  geo.M = g->M; geo.Mk = Mk; geo.J = g->J; geo.JH = (long)g->J * g->H;
  geo.half = g->pattern == ODB_GH_HALF;
  geo.first = first; geo.c0 = first * K; geo.Mkl = g->M * K; geo.m0 = m0; geo.m1 = m1; geo.xg = xg;
  geo.nlo = nlo; geo.nhi = nhi;
  launch_bdia_cells(g, &o, fn, &geo, x, y, st);
  if (wells && g->nw > 0) launch_bdia_wells(g, x, y, st);
  return ODB_OK;
}

/* The whole grid: every stored cell, then the wells. */
static odb_status launch_bdia(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o, const double *x,
                              double *y, cudaStream_t st) {
  return bdia_run(g, o, 0, g->M * g->k, x, NULL, 0, 0, y, 0, g->M, 1, st);
}

/* See the header. */
odb_status odb_sparse_gpu_bdia_slab(odb_sparse_gpu *g, long first, const double *x, const double *xg,
                                    long nlo, long nhi, double *y, long m0, long m1, int wells,
                                    void *stream) {
  ODB_TRY(vec_check(g, x, y));
  if (g->fmt != ODB_FMT_BDIA)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU slab SpMV: needs format bdia, not %s", odb_sparse_format_name(g->fmt));
  long Mg = (long)g->J * g->H * g->I;
  if (first < 0 || first + g->M > Mg || m0 < 0 || m1 > g->M || m0 > m1 || nlo < 0 || nhi < 0 ||
      (!xg && (nlo || nhi)))
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU slab SpMV: cells %ld..%ld of a slab of %ld from cell %ld of %ld, "
                    "%ld and %ld ghosts%s", m0, m1, g->M, first, Mg, nlo, nhi, xg ? "" : " without xg");
  ODB_TRY(bdia_run(g, &priv(g)->opts, first, Mg * g->k, x, xg, nlo, nhi, y, m0, m1, wells,
                   (cudaStream_t)stream));
  ODB_CUDA_CHECK(cudaGetLastError());
  return ODB_OK;
}

/* Pointer checks shared by the SpMV entries. */
odb_status vec_check(const odb_sparse_gpu *g, const double *x, const double *y) {
  if (!g) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: no matrix");
  if (!x || !y) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: %s is NULL", !x ? "x" : "y");
  if (x == y) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: x and y must be distinct vectors");
  return ODB_OK;
}

/* See the header. */
/* Our SpMV with options o on stream st. */
static odb_status spmv_on(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o, const double *x, double *y,
                          cudaStream_t st) {
  switch (g->fmt) {
  case ODB_FMT_CSR:
    switch (o->grain) {
    case 1: launch_csr<1>(g, o->block, x, y, st); break;
    case 2: launch_csr<2>(g, o->block, x, y, st); break;
    case 4: launch_csr<4>(g, o->block, x, y, st); break;
    case 8: launch_csr<8>(g, o->block, x, y, st); break;
    case 16: launch_csr<16>(g, o->block, x, y, st); break;
    default: launch_csr<32>(g, o->block, x, y, st); break;
    }
    break;
  case ODB_FMT_BSR: launch_bsr(g, o, x, y, st); break;
  case ODB_FMT_ELL:
  case ODB_FMT_HYB:
    k_ell<<<grid_for(g->n, o->block, o->grain), o->block, 0, st>>>(g->n, g->width, g->ecol, g->eval, x, y);
    if (g->fmt == ODB_FMT_HYB && g->ncoo > 0)
      k_coo<<<grid_for(g->ncoo, 128, 1), 128, 0, st>>>(g->ncoo, g->crow, g->ccol, g->cval, x, y);
    break;
  case ODB_FMT_DIA:
    k_dia<<<grid_for(g->n, o->block, o->grain), o->block, 0, st>>>(g->n, g->ndiag, g->doff, g->dval, x, y);
    break;
  case ODB_FMT_BDIA: ODB_TRY(launch_bdia(g, o, x, y, st)); break;
  default:
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: unknown format %d", (int)g->fmt);
  }
  ODB_CUDA_CHECK(cudaGetLastError());
  return ODB_OK;
}

/* See the header. */
odb_status odb_sparse_gpu_spmv(odb_sparse_gpu *g, const double *x, double *y) {
  return odb_sparse_gpu_spmv_opts(g, NULL, x, y);
}

/* See the header. */
odb_status odb_sparse_gpu_spmv_on(odb_sparse_gpu *g, const double *x, double *y, void *stream) {
  ODB_TRY(vec_check(g, x, y));
  return spmv_on(g, &priv(g)->opts, x, y, (cudaStream_t)stream);
}

/* See the header. */
odb_status odb_sparse_gpu_spmv_opts(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o,
                                    const double *x, double *y) {
  ODB_TRY(vec_check(g, x, y));
  if (!o) o = &priv(g)->opts;
  else ODB_TRY(opts_check(g, o));
  return spmv_on(g, o, x, y, 0);
}

/* See the header. */
odb_sparse_gpu_opts odb_sparse_gpu_get_opts(const odb_sparse_gpu *g) {
  return ((const spmv_priv *)g->priv)->opts;
}

/* See the header. */
int odb_sparse_gpu_is_tuned(const odb_sparse_gpu *g) {
  return g && g->priv && ((const spmv_priv *)g->priv)->tuned;
}

/* See the header. */
odb_status odb_sparse_gpu_set_opts(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o) {
  ODB_TRY(opts_check(g, o));
  priv(g)->opts = *o;
  return ODB_OK;
}

/* }====== */

/* {====== timing */

typedef odb_status (*run_fn)(odb_sparse_gpu *g, const void *arg, const double *x, double *y);

/* Our kernel with the options in arg. */
static odb_status run_ours(odb_sparse_gpu *g, const void *arg, const double *x, double *y) {
  return odb_sparse_gpu_spmv_opts(g, (const odb_sparse_gpu_opts *)arg, x, y);
}

/* cuSPARSE with the BSR API in arg. */
static odb_status run_cs(odb_sparse_gpu *g, const void *arg, const double *x, double *y) {
  return cs_run(g, *(const int *)arg, x, y);
}

/* Random x and a y on the device for timing (kept in priv). */
static odb_status bench_vectors(odb_sparse_gpu *g) {
  spmv_priv *p = priv(g);
  if (p->bx) return ODB_OK;
  double *h = (double *)malloc((size_t)g->n * sizeof *h);
  if (!h) return ODB_FAIL(ODB_ERR_NOMEM, "sparse GPU bench: x of %ld entries", g->n);
  odb_rng r;
  odb_rng_seed(&r, 12345);
  for (long i = 0; i < g->n; i++) h[i] = 2.0 * odb_rng_uniform(&r) - 1.0;
  cudaError_t e = cudaMalloc(&p->bx, g->n * sizeof(double));
  if (e == cudaSuccess) e = cudaMalloc(&p->by, g->n * sizeof(double));
  if (e == cudaSuccess) e = cudaMemcpy(p->bx, h, g->n * sizeof(double), cudaMemcpyHostToDevice);
  free(h);
  if (e != cudaSuccess) {
    cudaFree(p->bx); cudaFree(p->by);
    p->bx = p->by = NULL;
    return odb_cuda_fail(e, "sparse GPU bench vectors", __FILE__, __LINE__);
  }
  return ODB_OK;
}

/* Seconds of one run of fn: reps back-to-back runs (after 2 warm-up runs)
** in up to 5 batches with device events only between batches (so no event
** sits between two SpMVs of a batch); the batch means summarized by
** odb_measure_summarize (median, quartiles, spread; reps the batches). */
static odb_status time_runs_m(odb_sparse_gpu *g, run_fn fn, const void *arg, int reps,
                              odb_measurement *m) {
  enum { NB = 5 };
  cudaEvent_t ev[NB + 1];
  double t[NB];
  int nev = 0;
  odb_status st = ODB_OK;
  if (reps < 1) reps = 1;
  int nb = reps < NB ? reps : NB, per = (reps + nb - 1) / nb;
  ODB_TRY(bench_vectors(g));
  spmv_priv *p = priv(g);
  for (int i = 0; i < 2 && st == ODB_OK; i++) st = fn(g, arg, p->bx, p->by);
  for (; nev <= nb && st == ODB_OK; nev++)
    if (cudaEventCreate(&ev[nev]) != cudaSuccess)
      st = odb_cuda_fail(cudaGetLastError(), "cudaEventCreate", __FILE__, __LINE__);
  if (st == ODB_OK) {
    cudaEventRecord(ev[0], 0);
    for (int b = 0; b < nb && st == ODB_OK; b++) {
      for (int i = 0; i < per && st == ODB_OK; i++) st = fn(g, arg, p->bx, p->by);
      cudaEventRecord(ev[b + 1], 0);
    }
  }
  if (st == ODB_OK) {
    cudaError_t e = cudaEventSynchronize(ev[nb]);
    if (e != cudaSuccess) st = odb_cuda_fail(e, "cudaEventSynchronize", __FILE__, __LINE__);
  }
  if (st == ODB_OK) {
    for (int b = 0; b < nb; b++) {
      float ms = 0;
      cudaEventElapsedTime(&ms, ev[b], ev[b + 1]);
      t[b] = ms * 1e-3 / per;
    }
    odb_measure_summarize(t, nb, m);
  } else {
    cudaDeviceSynchronize();
  }
  for (int i = 0; i < nev; i++) cudaEventDestroy(ev[i]);
  return st;
}

/* The median of time_runs_m. */
static odb_status time_runs(odb_sparse_gpu *g, run_fn fn, const void *arg, int reps,
                            double *seconds) {
  odb_measurement m;
  ODB_TRY(time_runs_m(g, fn, arg, reps, &m));
  *seconds = m.median;
  return ODB_OK;
}

/* See the header. */
odb_status odb_sparse_gpu_bench_m(odb_sparse_gpu *g, odb_spmv_impl impl, int reps,
                                  odb_measurement *m) {
  if (!g) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU bench: no matrix");
  if (impl == ODB_SPMV_OURS) return time_runs_m(g, run_ours, &priv(g)->opts, reps, m);
  if (impl != ODB_SPMV_CUSPARSE)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU bench: unknown implementation %d", (int)impl);
  ODB_TRY(cs_setup(g));
  spmv_priv *p = priv(g);
  if (g->fmt == ODB_FMT_CSR) {
    int api = 0;
    return time_runs_m(g, run_cs, &api, reps, m);
  }
  /* BSR: the faster of bsrmv and the generic API becomes the baseline */
  odb_measurement best, t;
  int api0 = g->bs > 1 ? 0 : 1, have = 0;
  for (int api = api0; api <= 1; api++) {
    if (api == 1 && !p->bsr_generic_ok) continue;
    ODB_TRY(time_runs_m(g, run_cs, &api, reps, &t));
    if (!have || t.median < best.median) { best = t; p->bsr_api = api; have = 1; }
  }
  if (!have)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "cuSPARSE: no BSR SpMV for block size %d", g->bs);
  *m = best;
  return ODB_OK;
}

/* See the header. */
odb_status odb_sparse_gpu_bench(odb_sparse_gpu *g, odb_spmv_impl impl, int reps,
                                double *seconds) {
  odb_measurement m;
  ODB_TRY(odb_sparse_gpu_bench_m(g, impl, reps, &m));
  *seconds = m.median;
  return ODB_OK;
}

/* See the header. */
odb_status odb_sparse_gpu_tune(odb_sparse_gpu *g, int reps, double *seconds) {
  enum { MAXC = 64 };
  odb_sparse_gpu_opts cand[MAXC];
  if (!g) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU tune: no matrix");
  int nc = odb_sparse_gpu_space(g, cand, MAXC);
  if (nc > MAXC) nc = MAXC;
  double best = 0;
  int bi = -1;
  for (int i = 0; i < nc; i++) {
    double t;
    ODB_TRY(time_runs(g, run_ours, &cand[i], reps, &t));
    if (bi < 0 || t < best) { best = t; bi = i; }
  }
  spmv_priv *p = priv(g);
  p->opts = cand[bi];
  p->tuned = 1;
  tuned_store(g, &p->opts);
  if (seconds) *seconds = best;
  return ODB_OK;
}

/* See the header. */
odb_status odb_sparse_gpu_spmv_host(odb_sparse_gpu *g, odb_spmv_impl impl, const double *x,
                                    double *y, long n) {
  double *dx = NULL, *dy = NULL;
  odb_status st;
  if (!g) return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: no matrix");
  if (n != g->n)
    return ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: x has %ld entries, the matrix order is %ld",
                    n, g->n);
  ODB_CUDA_CHECK(cudaMalloc(&dx, n * sizeof(double)));
  if (cudaMalloc(&dy, n * sizeof(double)) != cudaSuccess) {
    cudaFree(dx);
    return odb_cuda_fail(cudaGetLastError(), "cudaMalloc(y)", __FILE__, __LINE__);
  }
  cudaError_t e = cudaMemcpy(dx, x, n * sizeof(double), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) st = odb_cuda_fail(e, "cudaMemcpy(x)", __FILE__, __LINE__);
  else if (impl == ODB_SPMV_OURS) st = odb_sparse_gpu_spmv(g, dx, dy);
  else if (impl == ODB_SPMV_CUSPARSE) st = odb_sparse_gpu_cusparse(g, dx, dy);
  else st = ODB_FAIL(ODB_ERR_ARG, "sparse GPU SpMV: unknown implementation %d", (int)impl);
  if (st == ODB_OK) {
    e = cudaMemcpy(y, dy, n * sizeof(double), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) st = odb_cuda_fail(e, "cudaMemcpy(y)", __FILE__, __LINE__);
  }
  cudaFree(dx);
  cudaFree(dy);
  return st;
}

/* See the header: the figure of odb_cuda_copy_bandwidth. */
odb_status odb_sparse_gpu_copy_bandwidth(double *bytes_per_s) {
  return odb_cuda_copy_bandwidth(bytes_per_s);
}

/* }====== */
