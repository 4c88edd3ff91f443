/* odb_batched_btd.cu - block-tridiagonal lines on the GPU: block LU
   without pivoting of every line and its solve, with serial kernels (one
   thread per line, two with double2), team kernels (a thread per block
   row) and the stream solve (sm_90: bulk copies into shared-memory stages
   under mbarriers), on the compact layout of odb_batched_gpu.cuh; their
   launches, plans and the C interface of odb_batched_gpu.h for them. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched_gpu.cuh"
#include "odb_bulk.cuh"

/* {====== block-tridiagonal lines: one thread per line (two with double2) */

/* Records the first bad block row of each lane (key line*K + r). */
template <int LPT>
__device__ __forceinline__ void btd_report(const int *k, int *done, long lane0,
                                           long n, int K, int r,
                                           unsigned long long *flag) {
#pragma unroll
  for (int c = 0; c < LPT; ++c)
    if (k[c] >= 0 && !done[c] && lane0 + c < n) {
      atomicMin(flag, (unsigned long long)(lane0 + c) * K + r);
      done[c] = 1;
    }
}

/*
** One block row of the factorization with D_r in registers (small B):
** LU(D_r), stored; C_r := L^{-1} C_r column by column; A_{r+1} := A_{r+1}
** U^{-1} row by row; then D holds D_{r+1} - A_{r+1} C_r for the next row
** (A_{r+1} and C_r re-read through the cache). Returns D_r's bad rows.
*/
template <int B, class V, int LPT>
__device__ __forceinline__ void btd_row_reg(RegMat<V, B> &D, double *Dp,
                                            size_t blk, int vl, int last,
                                            int *bad) {
  V fro;
  lu_reg<B>(D, fro);
  D.store(Dp, vl);
#pragma unroll
  for (int c = 0; c < LPT; ++c) bad[c] = bad_row_reg<B>(D, fro, c);
  if (last) return;
  double *Cp = Dp + blk, *Ap = Dp + 2 * blk, *Dn = Dp + 3 * blk;
  V v[B], inv[B];
  sfor<0, B>([&](auto J) { inv[CI(J)] = vrcp(D.a[CI(J) * B + CI(J)]); });
  for (int c = 0; c < B; ++c) {                  /* C := L^{-1} C */
    sfor<0, B>([&](auto I) {
      v[CI(I)] = ld<V>(Cp + (size_t)(CI(I) * B + c) * vl);
    });
    fwd_reg<B>(D, v);
    sfor<0, B>([&](auto I) {
      st<V>(Cp + (size_t)(CI(I) * B + c) * vl, v[CI(I)]);
    });
  }
  for (int i = 0; i < B; ++i) {                  /* A := A U^{-1} */
    sfor<0, B>([&](auto J) {
      v[CI(J)] = ld<V>(Ap + (size_t)(i * B + CI(J)) * vl);
    });
    row_bwd_reg<B>(D, inv, v);
    sfor<0, B>([&](auto J) {
      st<V>(Ap + (size_t)(i * B + CI(J)) * vl, v[CI(J)]);
    });
  }
  sfor<0, B>([&](auto I) {                       /* D := D_{r+1} - A C */
    constexpr int i = CI(I);
    sfor<0, B>([&](auto K) {
      v[CI(K)] = ld<V>(Ap + (size_t)(i * B + CI(K)) * vl);
    });
    sfor<0, B>([&](auto J) {
      constexpr int j = CI(J);
      V acc = ld<V>(Dn + (size_t)(i * B + j) * vl);
      sfor<0, B>([&](auto K) {
        acc -= v[CI(K)] * ld<V>(Cp + (size_t)(CI(K) * B + j) * vl);
      });
      D.a[i * B + j] = acc;
    });
  });
}

/* The same in place in memory (larger or runtime B). */
template <int B, class V, int LPT>
__device__ __forceinline__ void btd_row_mem(double *Dp, size_t blk, int nb,
                                            int vl, int last, int *bad) {
  MemMat<V> D = { Dp, nb, vl }, C = { Dp + blk, nb, vl },
            A = { Dp + 2 * blk, nb, vl }, Dn = { Dp + 3 * blk, nb, vl };
  V fro;
  lu_alg<B>(D, nb, fro);
#pragma unroll
  for (int c = 0; c < LPT; ++c) bad[c] = bad_row<B>(D, nb, fro, c);
  if (last) return;
  for (int c = 0; c < nb; ++c)                   /* C := L^{-1} C */
    for (int i = 1; i < nb; ++i) {
      V s = C.at(i, c);
      for (int k = 0; k < i; ++k) s -= D.at(i, k) * C.at(k, c);
      C.at(i, c) = s;
    }
  for (int i = 0; i < nb; ++i)                   /* A := A U^{-1} */
    for (int j = 0; j < nb; ++j) {
      V s = A.at(i, j);
      for (int k = 0; k < j; ++k) s -= A.at(i, k) * D.at(k, j);
      A.at(i, j) = s * vrcp(D.at(j, j));
    }
  for (int i = 0; i < nb; ++i)                   /* D_{r+1} -= A C */
    for (int j = 0; j < nb; ++j) {
      V acc = Dn.at(i, j);
      for (int k = 0; k < nb; ++k) acc -= A.at(i, k) * C.at(k, j);
      Dn.at(i, j) = acc;
    }
}

/*
** Factors the lines of this thread: for each block row r, LU(D_r); then
** C_r := L_r^{-1} C_r, A_{r+1} := A_{r+1} U_r^{-1} and D_{r+1} -= A_{r+1}
** C_r. flag gets min(line*K + r) over refused pivots.
*/
template <int B, int LPT>
__global__ void __launch_bounds__(SERIAL_THREADS, 1)
k_btd_factor(double *M, long nlanes, int vl, int b, int K, long n,
             unsigned long long *flag) {
  typedef typename lanes_t<LPT>::T V;
  long lane0 = ((long)blockIdx.x * blockDim.x + threadIdx.x) * LPT;
  if (lane0 >= nlanes) return;
  const int nb = B > 0 ? B : b;
  const size_t blk = (size_t)nb * nb * vl;
  lane_pos q = lane_of(lane0, vl);
  double *p = M + (size_t)q.pk * 3 * K * blk + q.l;
  int done[LPT], bad[LPT];
#pragma unroll
  for (int c = 0; c < LPT; ++c) done[c] = 0;
  if constexpr (in_regs<B, LPT, BTD_REG_DOUBLES>::value) {
    RegMat<V, B> D;
    D.load(p + blk, vl);
    for (int r = 0; r < K; ++r) {
      btd_row_reg<B, V, LPT>(D, p + ((size_t)r * 3 + 1) * blk, blk, vl,
                             r + 1 == K, bad);
      btd_report<LPT>(bad, done, lane0, n, K, r, flag);
    }
  } else {
    for (int r = 0; r < K; ++r) {
      btd_row_mem<B, V, LPT>(p + ((size_t)r * 3 + 1) * blk, blk, nb, vl,
                             r + 1 == K, bad);
      btd_report<LPT>(bad, done, lane0, n, K, r, flag);
    }
  }
}

/*
** Solves the lines of this thread in place: forward y_r = L_r^{-1}(b_r -
** A_r y_{r-1}), backward x_r = U_r^{-1}(y_r - C_r x_{r+1}). Every block is
** read once (the L part of D forward, the U part backward); the vectors
** live in registers. X: element (r, i) at ((pk*K + r)*B + i)*VL + l.
*/
template <int B, int LPT>
__global__ void __launch_bounds__(SERIAL_THREADS, 1)
k_btd_solve(const double *M, double *X, long nlanes, int vl, int b, int K) {
  typedef typename lanes_t<LPT>::T V;
  long lane0 = ((long)blockIdx.x * blockDim.x + threadIdx.x) * LPT;
  if (lane0 >= nlanes) return;
  const int nb = B > 0 ? B : b;
  const size_t blk = (size_t)nb * nb * vl, vec = (size_t)nb * vl;
  lane_pos q = lane_of(lane0, vl);
  double *p = const_cast<double *>(M) + (size_t)q.pk * 3 * K * blk + q.l;
  double *xb = X + (size_t)q.pk * K * vec + q.l;
  V xp[B > 0 ? B : MAXB], xc[B > 0 ? B : MAXB];
  for (int r = 0; r < K; ++r) {
    double *xr = xb + (size_t)r * vec;
    MemMat<V> A = { p + ((size_t)r * 3) * blk, nb, vl };
    MemMat<V> D = { p + ((size_t)r * 3 + 1) * blk, nb, vl };
#pragma unroll
    for (int i = 0; i < nb; ++i) xc[i] = ld<V>(xr + (size_t)i * vl);
    if (r > 0)
#pragma unroll
      for (int i = 0; i < nb; ++i) {
        V s = vset<V>(0.0);
#pragma unroll
        for (int j = 0; j < nb; ++j) s += A.at(i, j) * xp[j];
        xc[i] -= s;
      }
    fwd_alg<B>(D, nb, xc);
#pragma unroll
    for (int i = 0; i < nb; ++i) {
      st<V>(xr + (size_t)i * vl, xc[i]);
      xp[i] = xc[i];
    }
  }
  for (int r = K - 1; r >= 0; --r) {
    double *xr = xb + (size_t)r * vec;
    MemMat<V> D = { p + ((size_t)r * 3 + 1) * blk, nb, vl };
    MemMat<V> C = { p + ((size_t)r * 3 + 2) * blk, nb, vl };
    if (r + 1 < K) {
#pragma unroll
      for (int i = 0; i < nb; ++i) {
        V s = vset<V>(0.0);
#pragma unroll
        for (int j = 0; j < nb; ++j) s += C.at(i, j) * xp[j];
        xc[i] = ld<V>(xr + (size_t)i * vl) - s;
      }
    }   /* else xc holds y_{K-1} from the forward sweep */
    bwd_alg<B>(D, nb, xc);
#pragma unroll
    for (int i = 0; i < nb; ++i) {
      st<V>(xr + (size_t)i * vl, xc[i]);
      xp[i] = xc[i];
    }
  }
}

/*
** Team variants (B <= 16): the B threads of a lane group own one row each
** of every block of their line; a warp holds 32/B lane groups (lines), so
** that a line's rows cooperate through warp shuffles (no shared memory, no
** barriers) and many more threads work than there are lines. Loads stay
** coalesced over the lanes of a group. Idle threads (32 mod B of them)
** and lanes past the batch run along without loading or storing.
*/
#define FULL_MASK 0xFFFFFFFFu

/* Thread's place in a team kernel: lane group l (line `lane`), row i. */
struct team_pos {
  long lane;
  int l, i, base;    /* base: the warp lane of row 0 of the group */
  bool act;
};
template <int B>
__device__ __forceinline__ bool team_place(long nlanes, team_pos *t) {
  constexpr int L = 32 / B;
  const int w = threadIdx.x & 31;
  const long warp = ((long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (warp * L >= nlanes) return false;        /* the whole warp is past */
  t->l = w / B;
  t->i = w - t->l * B;
  t->base = t->l * B;
  t->lane = warp * L + t->l;
  t->act = t->l < L && t->lane < nlanes;
  if (!t->act) t->lane = warp * L;             /* a valid address */
  return true;
}

/* Row i of a block whose row 0 is at p (element j at p[j*vl]); only the
   columns in [j0, j1) are loaded, the others are zero. */
template <int B>
__device__ __forceinline__ void load_row(double *v, const double *p, int vl,
                                         bool act, int j0, int j1) {
  sfor<0, B>([&](auto J) {
    v[CI(J)] = act && CI(J) >= j0 && CI(J) < j1 ? p[(size_t)CI(J) * vl] : 0.0;
  });
}

/* Copies n (B) row values from src to dst. */
template <int B>
__device__ __forceinline__ void row_copy(double *dst, const double *src) {
  sfor<0, B>([&](auto J) { dst[CI(J)] = src[CI(J)]; });
}

/* Solves the lines (see k_btd_solve). The loads run two block rows ahead
   of the arithmetic (three register sets rotate), so that a warp keeps
   its memory requests in flight through the shuffle chains. */
template <int B>
__global__ void __launch_bounds__(128)
k_btd_solve_team(const double *M, double *X, long nlanes, int vl, int K) {
  team_pos t;
  if (!team_place<B>(nlanes, &t)) return;
  const size_t blk = (size_t)B * B * vl, vec = (size_t)B * vl;
  lane_pos q = lane_of(t.lane, vl);
  const double *p = M + (size_t)q.pk * 3 * K * blk + q.l + (size_t)t.i * B * vl;
  double *xb = X + (size_t)q.pk * K * vec + q.l + (size_t)t.i * vl;
  const int i = t.i, base = t.base;
  const bool act = t.act;
  double a0[B], d0[B], a1[B], d1[B], a2[B], d2[B];
  double b0 = 0, b1 = 0, b2 = 0, xo = 0;
  /* forward row r: A_r's row i (zero for r = 0), L_r's row i, b_r(i) */
  auto fload = [&](int r, double *aa, double *dd, double &bb) {
    if (r >= K) return;
    const double *Ar = p + (size_t)r * 3 * blk;
    load_row<B>(aa, Ar, vl, act && r > 0, 0, B);
    load_row<B>(dd, Ar + blk, vl, act, 0, i);
    bb = act ? xb[(size_t)r * vec] : 0.0;
  };
  fload(0, a0, d0, b0);
  fload(1, a1, d1, b1);
  for (int r = 0; r < K; ++r) {   /* y_r = L_r^{-1} (b_r - A_r y_{r-1}) */
    fload(r + 2, a2, d2, b2);
    double s = b0;
    sfor<0, B>([&](auto J) {
      s -= a0[CI(J)] * __shfl_sync(FULL_MASK, xo, base + CI(J));
    });
    sfor<0, B>([&](auto Kc) {
      double yk = __shfl_sync(FULL_MASK, s, base + CI(Kc));
      if (i > CI(Kc)) s -= d0[CI(Kc)] * yk;
    });
    if (act) xb[(size_t)r * vec] = s;
    xo = s;
    row_copy<B>(a0, a1); row_copy<B>(d0, d1); b0 = b1;
    row_copy<B>(a1, a2); row_copy<B>(d1, d2); b1 = b2;
  }
  /* backward row r: C_r's row i (zero for the last row), U_r's row i,
     y_r(i) as the forward sweep stored it */
  auto bload = [&](int r, double *cc, double *uu, double &yy) {
    if (r < 0) return;
    const double *Dp = p + ((size_t)r * 3 + 1) * blk;
    load_row<B>(uu, Dp, vl, act, i, B);
    load_row<B>(cc, Dp + blk, vl, act && r < K - 1, 0, B);
    yy = act ? xb[(size_t)r * vec] : 0.0;
  };
  double xn = 0;
  bload(K - 1, a0, d0, b0);
  bload(K - 2, a1, d1, b1);
  for (int r = K - 1; r >= 0; --r) {   /* x_r = U_r^{-1}(y_r - C_r x_{r+1}) */
    bload(r - 2, a2, d2, b2);
    double s = b0;
    sfor<0, B>([&](auto J) {
      s -= a0[CI(J)] * __shfl_sync(FULL_MASK, xn, base + CI(J));
    });
    sfor<0, B>([&](auto Kr) {
      constexpr int k = B - 1 - CI(Kr);
      if (i == k) s *= 1.0 / d0[k];
      double xk = __shfl_sync(FULL_MASK, s, base + k);
      if (i < k) s -= d0[k] * xk;
    });
    if (act) xb[(size_t)r * vec] = s;
    xn = s;
    row_copy<B>(a0, a1); row_copy<B>(d0, d1); b0 = b1;
    row_copy<B>(a1, a2); row_copy<B>(d1, d2); b1 = b2;
  }
}

/*
** Factors the lines (see k_btd_factor) with row i of D_r, C_r, A_{r+1}
** and D_{r+1} in thread i's registers; the rows of C_r, A_{r+1}, D_{r+1}
** are loaded before D_r is factored.
*/
template <int B>
__global__ void __launch_bounds__(128)
k_btd_factor_team(double *M, long nlanes, int vl, int K, long n,
                  unsigned long long *flag) {
  team_pos t;
  if (!team_place<B>(nlanes, &t)) return;
  const size_t blk = (size_t)B * B * vl;
  lane_pos q = lane_of(t.lane, vl);
  double *p = M + (size_t)q.pk * 3 * K * blk + q.l + (size_t)t.i * B * vl;
  const int i = t.i, base = t.base;
  double d[B], c[B], a[B], dn[B];
  bool done = false;
  load_row<B>(d, p + blk, vl, t.act, 0, B);
  if (!t.act) sfor<0, B>([&](auto J) { d[CI(J)] = CI(J) == i ? 1.0 : 0.0; });
  for (int r = 0; r < K; ++r) {
    double *Dr = p + ((size_t)r * 3 + 1) * blk;
    const bool more = r + 1 < K;
    if (more) {
      load_row<B>(c, Dr + blk, vl, t.act, 0, B);
      load_row<B>(a, Dr + 2 * blk, vl, t.act, 0, B);
      load_row<B>(dn, Dr + 3 * blk, vl, t.act, 0, B);
    }
    double s2 = 0.0, fro = 0.0;
    sfor<0, B>([&](auto J) { s2 += d[CI(J)] * d[CI(J)]; });
    sfor<0, B>([&](auto Kc) { fro += __shfl_sync(FULL_MASK, s2, base + CI(Kc)); });
    sfor<0, B>([&](auto Kc) {                    /* LU of D_r */
      constexpr int k = CI(Kc);
      double lik = d[k] * (1.0 / __shfl_sync(FULL_MASK, d[k], base + k));
      if (i > k) d[k] = lik;
      sfor<k + 1, B>([&](auto J) {
        double ukj = __shfl_sync(FULL_MASK, d[CI(J)], base + k);
        if (i > k) d[CI(J)] -= lik * ukj;
      });
    });
    double uii = 0.0;
    sfor<0, B>([&](auto J) {
      if (t.act) Dr[(size_t)CI(J) * vl] = d[CI(J)];
      if (CI(J) == i) uii = d[CI(J)];
    });
    if (t.act && !done && t.lane < n && !(uii * uii > TINY2 * fro)) {
      atomicMin(flag, (unsigned long long)t.lane * K + r);
      done = true;
    }
    if (!more) break;
    sfor<0, B>([&](auto Kc) {                    /* C := L^{-1} C */
      constexpr int k = CI(Kc);
      sfor<0, B>([&](auto J) {
        double ckj = __shfl_sync(FULL_MASK, c[CI(J)], base + k);
        if (i > k) c[CI(J)] -= d[k] * ckj;
      });
    });
    sfor<0, B>([&](auto J) {                     /* A := A U^{-1} */
      constexpr int j = CI(J);
      sfor<0, j>([&](auto Kc) {
        a[j] -= a[CI(Kc)] * __shfl_sync(FULL_MASK, d[j], base + CI(Kc));
      });
      a[j] *= 1.0 / __shfl_sync(FULL_MASK, d[j], base + j);
    });
    sfor<0, B>([&](auto J) {
      if (t.act) {
        Dr[blk + (size_t)CI(J) * vl] = c[CI(J)];
        Dr[2 * blk + (size_t)CI(J) * vl] = a[CI(J)];
      }
    });
    sfor<0, B>([&](auto J) {                     /* D := D_{r+1} - A C */
      double acc = dn[CI(J)];
      sfor<0, B>([&](auto Kc) {
        acc -= a[CI(Kc)] * __shfl_sync(FULL_MASK, c[CI(J)], base + CI(Kc));
      });
      d[CI(J)] = acc;
    });
  }
}


/*
** Stream variant of the solve (sm_90): a block of VL*T threads per pack,
** T threads per line (T = 1, 2, 4 or 8, VL*T <= 32: a warp per pack at
** most; with T > 1 thread t computes rows t,
** t+T, ... of the block-vector products A_r y and C_r x and the rows are
** gathered through shuffles, the triangular solves running on every
** thread). Row r of a pack's blocks is contiguous ([A_r | D_r |
** C_r], B*B*VL doubles each), and so is the part of D_r each sweep needs:
** row i's strict lower part (forward) and its upper part (backward) are
** runs of i*VL and (B - i)*VL doubles. The threads stream those runs with
** bulk copies (cp.async.bulk, completion counted on one mbarrier per
** stage; the runs of a step are spread over the threads) into a ring of
** `stages` shared-memory stages, stages - 1 block rows ahead of the
** arithmetic; nothing but the runs the sweep uses is read (A_0 and C_{K-1}
** are skipped). A stage holds [A_r | D_r | b_r] forward and [D_r | C_r]
** backward at their global offsets, so that lane l reads element (i, j) at
** (i*B + j)*VL + l: consecutive lanes, consecutive words, and with VL a
** template parameter every offset is an immediate. The forward sweep keeps
** y in shared memory (ysm) or in X; the backward sweep loads y_{r-1} one
** row ahead and divides by U's diagonal through reciprocals computed
** without branches (rcp.approx and two Newton steps: within an ulp or two
** of 1/u, for the normal numbers a factorization that passed the pivot
** check has).
*/
#define STREAM_BARS 16           /* most stages (mbarriers in 128 bytes) */

/* sm_90's copy engine: the bulk copies and mbarriers of gpu/rt/odb_bulk.cuh */
#define STREAM_ARCH ODB_BULK

/* 1/d without a branch: the hardware estimate and two Newton steps. */
static __device__ __forceinline__ double rcp_nr(double d) {
  double r = 1.0 / d;
#if STREAM_ARCH
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
  double e = fma(-d, r, 1.0);
  r = fma(r, e, r);
  e = fma(-d, r, 1.0);
  r = fma(r, e, r);
#endif
  return r;
}

/* Bytes step s (forward rows 0..K-1, then backward rows K-1..0) copies. */
template <int B, int VL>
__device__ __forceinline__ unsigned stream_bytes(int s, int K) {
  constexpr unsigned blk = 8u * B * B * VL;
  if (s < K)                       /* b_r, L of D_r, A_r (r > 0) */
    return 8u * B * VL + 8u * (B * (B - 1) / 2) * VL + (s > 0 ? blk : 0u);
  return 8u * (B * (B + 1) / 2) * VL + (s > K ? blk : 0u); /* U, C_r */
}

/* Run p of step s: offset o (doubles) in the stage and in the source
   (blocks of row r from w0, or the rhs), length n doubles; false past the
   step's runs. Forward: p = 0 b_r, 1..B-1 row p of L, B the block A_r;
   backward: p = 0..B-1 row p of U (the last one with C_r behind it). */
template <int B, int VL>
__device__ __forceinline__ bool stream_run(int s, int K, int p,
                                           const double *pm,
                                           const double *xr0,
                                           const double **src, size_t *o,
                                           unsigned *n) {
  constexpr size_t blk = (size_t)B * B * VL, row = (size_t)B * VL;
  if (s < K) {
    const double *g = pm + (size_t)s * 3 * blk;
    if (p == 0) {
      *src = xr0 + (size_t)s * row;
      *o = 2 * blk;
      *n = (unsigned)row;
      return true;
    }
    if (p < B) {
      *o = blk + (size_t)p * row;
      *n = (unsigned)(p * VL);
    } else if (p == B && s > 0) {
      *o = 0;
      *n = (unsigned)blk;
    } else {
      return false;
    }
    *src = g + *o;
    return true;
  }
  const int r = 2 * K - 1 - s;
  if (p >= B) return false;
  *o = (size_t)p * row + (size_t)p * VL;
  *n = (unsigned)((B - p) * VL + (p == B - 1 && r + 1 < K ? blk : 0));
  *src = pm + ((size_t)r * 3 + 1) * blk + *o;
  return true;
}

/* All NT threads of the block (thread h): arm the stage's mbarrier for
   step s and issue its runs, spread over the threads. */
template <int B, int VL, int NT>
__device__ __forceinline__ void stream_issue(int s, int K, int h,
                                             unsigned mask, const double *pm,
                                             const double *xr0, double *dst,
                                             unsigned bar) {
  if (h == 0) odb_mbar_expect(bar, stream_bytes<B, VL>(s, K));
  __syncwarp(mask);
  for (int p = h; p <= B; p += NT) {
    const double *src;
    size_t o;
    unsigned n;
    if (stream_run<B, VL>(s, K, p, pm, xr0, &src, &o, &n))
      odb_bulk_g2s(dst + o, src, 8u * n, bar);
  }
}

template <int B, int VL, int T>
__global__ void __launch_bounds__(VL * T)
k_btd_solve_stream(const double *M, double *X, int K, int stages, int ysm) {
#if STREAM_ARCH
  extern __shared__ __align__(128) unsigned char sm_raw[];
  constexpr size_t blk = (size_t)B * B * VL, row = (size_t)B * VL;
  constexpr size_t sd = 2 * blk + row;         /* doubles per stage */
  constexpr int NT = VL * T;                   /* threads of the block */
  constexpr unsigned mask = NT >= 32 ? 0xFFFFFFFFu : (1u << NT) - 1u;
  constexpr int R = (B + T - 1) / T;           /* rows per thread (T > 1) */
  const int l = threadIdx.x % VL, t = threadIdx.x / VL;
  const size_t pk = blockIdx.x;
  const double *pm = M + pk * 3 * K * blk;
  double *xr0 = X + pk * K * row;              /* the pack's rhs */
  double *stg = (double *)(sm_raw + 8 * STREAM_BARS);
  double *ys = ysm ? stg + (size_t)stages * sd + l : xr0 + l;
  const unsigned bar0 = odb_smem_u32(sm_raw);
  const int steps = 2 * K;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) odb_mbar_init(bar0 + 8 * s, 1);
  }
  __syncwarp(mask);
  for (int s = 0; s < stages && s < steps; ++s)
    stream_issue<B, VL, NT>(s, K, threadIdx.x, mask, pm, xr0,
                            stg + (size_t)s * sd, bar0 + 8 * s);
  /* step s's stage for this lane, once its copies have landed */
  auto wait = [&](int s) -> const double * {
    const int slot = s % stages;
    odb_mbar_wait(bar0 + 8 * slot, (unsigned)(s / stages) & 1u);
    return stg + (size_t)slot * sd + l;
  };
  /* every thread is done with step s's stage: refill it with step
     s+stages */
  auto release = [&](int s) {
    __syncwarp(mask);
    const int slot = s % stages;
    if (s + stages < steps)
      stream_issue<B, VL, NT>(s + stages, K, threadIdx.x, mask, pm, xr0,
                              stg + (size_t)slot * sd, bar0 + 8 * slot);
  };
  /* v := v - G x for the matrix G at g (element (i, j) at (i*B + j)*VL):
     every row on one thread (T = 1), or rows t, t+T, ... on thread t and
     the results gathered through shuffles, rows past B clamped to B - 1
     (computed, never used) */
  auto gemv_sub = [&](const double *g, const double *x, double *v) {
    if constexpr (T == 1) {
      sfor<0, B>([&](auto I) {
        double s = 0.0;
        sfor<0, B>([&](auto J) {
          s += g[(CI(I) * B + CI(J)) * VL] * x[CI(J)];
        });
        v[CI(I)] -= s;
      });
    } else {
      double own[R];
      sfor<0, R>([&](auto Mi) {
        int i = t + T * CI(Mi);
        i = i < B ? i : B - 1;
        const double *gi = g + (size_t)i * B * VL;
        double s = 0.0;
        sfor<0, B>([&](auto J) { s += gi[CI(J) * VL] * x[CI(J)]; });
        own[CI(Mi)] = s;
      });
      sfor<0, B>([&](auto I) {
        v[CI(I)] -= __shfl_sync(mask, own[CI(I) / T],
                                (CI(I) % T) * VL + l);
      });
    }
  };
  /* rows of a vector this thread stores: all (T = 1), or i % T == t */
  auto mine = [&](int i) { return T == 1 || i % T == t; };
  double xp[B], xc[B];
  for (int r = 0; r < K; ++r) {    /* y_r = L_r^{-1}(b_r - A_r y_{r-1}) */
    const double *g = wait(r);
    sfor<0, B>([&](auto I) { xc[CI(I)] = g[2 * blk + CI(I) * VL]; });
    if (r > 0) gemv_sub(g, xp, xc);
    sfor<1, B>([&](auto I) {
      sfor<0, CI(I)>([&](auto Kc) {
        xc[CI(I)] -= g[blk + (CI(I) * B + CI(Kc)) * VL] * xc[CI(Kc)];
      });
    });
    sfor<0, B>([&](auto I) {
      if (mine(CI(I))) ys[((size_t)r * B + CI(I)) * VL] = xc[CI(I)];
      xp[CI(I)] = xc[CI(I)];
    });
    release(r);
  }
  double yn[B], inv[B];            /* y_{r-1} for the next backward row */
  for (int r = K - 1; r >= 0; --r) { /* x_r = U_r^{-1}(y_r - C_r x_{r+1}) */
    const int s = 2 * K - 1 - r;
    if (r > 0)
      sfor<0, B>([&](auto I) {
        yn[CI(I)] = ys[((size_t)(r - 1) * B + CI(I)) * VL];
      });
    const double *g = wait(s);
    sfor<0, B>([&](auto I) {
      inv[CI(I)] = rcp_nr(g[(CI(I) * B + CI(I)) * VL]);
    });
    if (r + 1 < K) gemv_sub(g + blk, xp, xc);
    /* else xc holds y_{K-1} from the forward sweep */
    sfor<0, B>([&](auto Ir) {
      constexpr int i = B - 1 - CI(Ir);
      double acc = xc[i];
      sfor<i + 1, B>([&](auto Kc) {
        acc -= g[(i * B + CI(Kc)) * VL] * xc[CI(Kc)];
      });
      xc[i] = acc * inv[i];
    });
    sfor<0, B>([&](auto I) {
      if (mine(CI(I))) xr0[((size_t)r * B + CI(I)) * VL + l] = xc[CI(I)];
      xp[CI(I)] = xc[CI(I)];
      if (r > 0) xc[CI(I)] = yn[CI(I)];
    });
    release(s);
  }
#endif
}

/* }====== */

/* {====== random lines */

/* Block-tridiagonal blocks as odb_blocktridiag_random; padding lines get
   D = I, A = C = 0. */
__global__ void k_btd_random(double *dst, size_t total, int vl, int b, int K,
                             long n, uint64_t seed, double shift) {
  FOR_ELEMENTS(e, total) {
    size_t l = e % vl, t = e / vl;
    int j = (int)(t % b);
    t /= b;
    int i = (int)(t % b);
    t /= b;
    int w = (int)(t % 3);
    t /= 3;
    int r = (int)(t % K);
    long line = (long)(t / K) * vl + (long)l;
    double v;
    if (line >= n)
      v = w == 1 && i == j ? 1.0 : 0.0;
    else if ((w == 0 && r == 0) || (w == 2 && r == K - 1))
      v = 0.0;
    else
      v = odb_batched_rand_entry(seed, ((uint64_t)line * K + r) * 3 + w, b,
                                 i, j, w == 1 ? shift : 0.0);
    dst[e] = v;
  }
}

/* }====== */

/* {====== launches by B */

/* lpt 3 stands for the team kernels (B <= 16, checked by the caller). */
template <int B>
static void run_btd(const odb_blocktridiag *t, int lpt, int solve, double *M,
                    double *X, unsigned long long *flag) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  long nl = lanes_of(bt);
  int K = odb_blocktridiag_length(t);
  if (lpt == 3) {
    if constexpr (B > 0) {
      long warps = (nl + 32 / B - 1) / (32 / B);
      unsigned g = (unsigned)((warps * 32 + 127) / 128);
      if (solve)
        k_btd_solve_team<B><<<g, 128>>>(M, X, nl, bt->vl, K);
      else
        k_btd_factor_team<B><<<g, 128>>>(M, nl, bt->vl, K, bt->n, flag);
    }
    return;
  }
  unsigned g = serial_grid(nl, lpt);
  if (solve) {
    if (lpt == 2)
      k_btd_solve<LPT2_B(B), 2><<<g, SERIAL_THREADS>>>(M, X, nl, bt->vl,
                                                       bt->b, K);
    else
      k_btd_solve<B, 1><<<g, SERIAL_THREADS>>>(M, X, nl, bt->vl, bt->b, K);
  } else {
    if (lpt == 2)
      k_btd_factor<LPT2_B(B), 2><<<g, SERIAL_THREADS>>>(M, nl, bt->vl, bt->b,
                                                        K, bt->n, flag);
    else
      k_btd_factor<B, 1><<<g, SERIAL_THREADS>>>(M, nl, bt->vl, bt->b, K,
                                                bt->n, flag);
  }
}

/* Plan of a stream solve. */
typedef struct stream_plan {
  int stages, ysm;
  int tpl;           /* threads per line: 1, 2, 4 or 8 */
  size_t smem;       /* dynamic shared memory per block, bytes */
} stream_plan;

/* One block of VL*T threads per pack, VL and T constants. */
template <int B, int VL, int T>
static void launch_stream(const odb_blocktridiag *t, const stream_plan *p,
                          int smem_max, const double *M, double *X) {
  static int attr_set;     /* per kernel: the opt-in shared memory, once */
  if (!attr_set)           /* a failure stays for launched() to report */
    attr_set = cudaFuncSetAttribute(
      k_btd_solve_stream<B, VL, T>,
      cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max) == cudaSuccess;
  k_btd_solve_stream<B, VL, T>
    <<<(unsigned)odb_blocktridiag_batch(t)->packs, VL * T, p->smem>>>(
      M, X, odb_blocktridiag_length(t), p->stages, p->ysm);
}

/* VL 4, 8 or 16; T > 1 only for B >= 5 with VL*T <= 32 (checked by the
   caller); B = 0 never gets here. */
template <int B>
static void run_btd_stream(const odb_blocktridiag *t, const stream_plan *p,
                           int smem_max, const double *M, double *X) {
  if constexpr (B > 0) {
    int vl = odb_blocktridiag_batch(t)->vl;
    if constexpr (B >= 5) {
      switch (vl * 64 + p->tpl) {
      case 4 * 64 + 2: return launch_stream<B, 4, 2>(t, p, smem_max, M, X);
      case 4 * 64 + 4: return launch_stream<B, 4, 4>(t, p, smem_max, M, X);
      case 4 * 64 + 8: return launch_stream<B, 4, 8>(t, p, smem_max, M, X);
      case 8 * 64 + 2: return launch_stream<B, 8, 2>(t, p, smem_max, M, X);
      case 8 * 64 + 4: return launch_stream<B, 8, 4>(t, p, smem_max, M, X);
      case 16 * 64 + 2: return launch_stream<B, 16, 2>(t, p, smem_max, M, X);
      default: break;
      }
    }
    switch (vl) {
    case 4: launch_stream<B, 4, 1>(t, p, smem_max, M, X); break;
    case 8: launch_stream<B, 8, 1>(t, p, smem_max, M, X); break;
    default: launch_stream<B, 16, 1>(t, p, smem_max, M, X); break;
    }
  }
}

/* }====== */

/* {====== the C interface */

/* {------ block-tridiagonal lines */

/* The current device's compute capability (major), opt-in shared memory
   per block, shared memory per SM, reserved per block, and SMs: asked
   once. */
int dev_major = -1, dev_smem_optin, dev_smem_sm, dev_smem_rsv, dev_sms;
void dev_props(void) {
  int d = 0;
  if (dev_major >= 0) return;
  dev_major = 0;
  if (cudaGetDevice(&d) != cudaSuccess ||
      cudaDeviceGetAttribute(&dev_major, cudaDevAttrComputeCapabilityMajor,
                             d) != cudaSuccess ||
      cudaDeviceGetAttribute(&dev_smem_optin,
                             cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             d) != cudaSuccess ||
      cudaDeviceGetAttribute(&dev_smem_sm,
                             cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                             d) != cudaSuccess ||
      cudaDeviceGetAttribute(&dev_smem_rsv,
                             cudaDevAttrReservedSharedMemoryPerBlock,
                             d) != cudaSuccess ||
      cudaDeviceGetAttribute(&dev_sms, cudaDevAttrMultiProcessorCount,
                             d) != cudaSuccess) {
    (void)cudaGetLastError();
    dev_major = 0;
    dev_smem_optin = dev_smem_sm = dev_smem_rsv = dev_sms = 0;
  }
}

/* Why the stream kernels cannot run on t (quiet: NULL when it can). */
const char *stream_unfit(const odb_blocktridiag *t) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  if (bt->layout != ODB_LAYOUT_COMPACT ||
      (bt->vl != 4 && bt->vl != 8 && bt->vl != 16))
    return "the compact layout with VL 4, 8 or 16";
  if (bt->b > 16) return "B <= 16";
  if (odb_blocktridiag_length(t) > (1 << 29)) return "length <= 2^29";
  dev_props();
  if (dev_major < 9) return "a GPU of compute capability 9.0 or newer";
  return NULL;
}

/*
** Stream plans. The H200 runs of tests/gpu/test_batched_gpu --bench (B 3
** to 10, VL 4 to 16, lines of 64 block rows in 512 MiB) ran at about one
** speed with 2, 3 or 4 stages as long as every block was resident at
** once, and at half of it as soon as a second wave of blocks was needed;
** y through X was as fast as or faster than y on chip (which takes shared
** memory from the stages). So: y through X, and the most stages (up to
** STREAM_STAGES) that keep the fewest waves. Explicit values (stages > 0,
** y_on_chip >= 0, threads per line > 0) win; an explicit plan that does
** not fit is refused.
*/
#define STREAM_STAGES 4
/* The automatic threads per line of the solve: they share the
   block-vector products, whose per-step instruction chains limit a single
   thread per line, and at VL 4 they also fill the block's warp. At VL 16
   and 8 two from B = 8 (and four from B = 14 at VL 8), at VL 4 four from
   B = 7 and eight from B = 13; one below. Measured on an H200, % of the
   copy bandwidth, one thread against the plan's (BENCHMARKS.md, "More
   threads a line for the stream solve"): VL 4 B = 8 65.1 -> 79.3, B = 10
   60.8 -> 77.8, B = 12 43.5 -> 65.6, B = 13 44.4 -> 73.7, B = 15 43.7 ->
   65.9; VL 8 B = 14 and 15 at two threads 62.8 and 61.2, at four 67.6 and
   66.6; VL 16 B = 8 73.9 -> 85.6; B = 5 and 6 within 1% either way. */
#define STREAM_T2_B 8
static int stream_auto_tpl(int b, int vl) {
  if (vl == 4) return b >= 13 ? 8 : b >= 7 ? 4 : 1;
  if (vl == 8 && b >= 14) return 4;
  return b >= STREAM_T2_B ? 2 : 1;
}

/* Blocks of smem bytes resident per SM (at most 32). */
long stream_per_sm(size_t smem) {
  long per = (long)(dev_smem_sm / (smem + (size_t)dev_smem_rsv));
  return per > 32 ? 32 : per;
}

static odb_status stream_plan_of(const odb_blocktridiag *t, int stages,
                                 int y_on_chip, int tpl, stream_plan *p) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  const char *why = stream_unfit(t);
  if (why)
    return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU solve: variant "
                    "stream needs %s (have %s, VL %d, B %d)", why,
                    odb_batched_layout_name(bt->layout), bt->vl, bt->b);
  if (stages != 0 && (stages < 2 || stages > STREAM_BARS))
    return ODB_FAIL(ODB_ERR_ARG, "stream solve: stages = %d, allowed 2..%d "
                    "(0: automatic)", stages, STREAM_BARS);
  if (tpl == 0) tpl = stream_auto_tpl(bt->b, bt->vl);
  if (!(tpl == 1 || ((tpl == 2 || tpl == 4 || tpl == 8) && bt->b >= 5 &&
                     tpl * bt->vl <= 32)))
    return ODB_FAIL(ODB_ERR_ARG, "stream solve: %d threads per line on B "
                    "%d, VL %d; allowed 1, and 2, 4 or 8 for B >= 5 with "
                    "VL*threads <= 32 (0: automatic)", tpl, bt->b, bt->vl);
  p->tpl = tpl;
  size_t b = (size_t)bt->b, vl = (size_t)bt->vl;
  size_t stage = 8 * (2 * b * b + b) * vl;
  size_t ybytes = 8 * (size_t)odb_blocktridiag_length(t) * b * vl;
  p->ysm = y_on_chip > 0;
  if (stages == 0) {               /* the most stages within the fewest waves */
    long waves = 0;
    stages = 2;
    for (int st = 2; st <= STREAM_STAGES; ++st) {
      size_t smem = 8 * STREAM_BARS + (size_t)st * stage +
                    (p->ysm ? ybytes : 0);
      long per = smem <= (size_t)dev_smem_optin ? stream_per_sm(smem) : 0;
      if (per < 1) break;
      long w = (bt->packs + per * dev_sms - 1) / (per * dev_sms);
      if (st > 2 && w > waves) break;
      waves = w;
      stages = st;
    }
  }
  p->stages = stages;
  p->smem = 8 * STREAM_BARS + (size_t)p->stages * stage +
            (p->ysm ? ybytes : 0);
  if (p->smem > (size_t)dev_smem_optin)
    return ODB_FAIL(ODB_ERR_ARG, "stream solve: %d stages of %zu bytes%s "
                    "need %zu bytes of shared memory per block; the device "
                    "allows %d", p->stages, stage,
                    p->ysm ? " and y on chip" : "", p->smem, dev_smem_optin);
  return ODB_OK;
}

/* The stream kernels where they run (compact layout, VL 4, 8 or 16,
   B <= 16, sm_90): the solve at 79 to 88% of the copy bandwidth for B 3
   to 10 at VL 16 on the H200, against 31 to 67% for the team and serial
   kernels; the factor (odb_btd_factor_stream.cu) moves each byte of a line
   once each way, where the team factor fell to 34% at B = 10. Else
   the team kernels wherever they exist (B <= 16): a line's B rows on B
   threads give B times the parallelism, which larger B need most; the
   H200 runs had the serial solve ahead for B <= 3 only. */
extern "C" odb_bgpu_variant odb_bgpu_btd_pick(const odb_blocktridiag *t,
                                              int solve) {
  int b = odb_blocktridiag_batch(t)->b;
  if (!stream_unfit(t)) return ODB_BGPU_STREAM;
  if (b > 16 || (solve && b <= 3)) return ODB_BGPU_SERIAL;
  return ODB_BGPU_TEAM;
}

extern "C" odb_status odb_bgpu_btd_resolve(const odb_blocktridiag *t,
                                           odb_bgpu_variant v, int solve,
                                           odb_bgpu_variant *out) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  if (v == ODB_BGPU_AUTO) v = odb_bgpu_btd_pick(t, solve);
  switch (v) {
  case ODB_BGPU_SERIAL:
    break;
  case ODB_BGPU_TEAM:
    if (bt->b > 16)
      return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU kernels: variant "
                      "team needs B <= 16 (have %d); use serial", bt->b);
    break;
  case ODB_BGPU_SERIAL2:
    if (bt->layout != ODB_LAYOUT_COMPACT || bt->vl % 2)
      return ODB_FAIL(ODB_ERR_ARG, "variant serial2 (double2) needs the "
                      "compact layout with an even VL");
    break;
  case ODB_BGPU_STREAM: {
    const char *why = stream_unfit(t);
    if (why)
      return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU %s: variant "
                      "stream needs %s (have %s, VL %d, B %d)",
                      solve ? "solve" : "factor", why,
                      odb_batched_layout_name(bt->layout), bt->vl, bt->b);
    break;
  }
  default:
    return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU kernels: variant %s "
                    "is not serial, serial2, team or stream",
                    odb_bgpu_variant_name(v));
  }
  *out = v;
  return ODB_OK;
}

/* lpt of variant v (auto resolved) for the block-tridiagonal kernels:
   1 serial, 2 serial2, 3 team, 4 stream. */
static odb_status btd_lpt(const odb_blocktridiag *t, odb_bgpu_variant v,
                          int solve, int *lpt) {
  ODB_TRY(odb_bgpu_btd_resolve(t, v, solve, &v));
  *lpt = v == ODB_BGPU_SERIAL ? 1 : v == ODB_BGPU_SERIAL2 ? 2
         : v == ODB_BGPU_TEAM ? 3 : 4;
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_btd_random(const odb_blocktridiag *t,
                                          uint64_t seed, double dominance,
                                          double *dm) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  size_t total = odb_blocktridiag_blocks_len(t);
  k_btd_random<<<elem_grid(total), 256>>>(dm, total, bt->vl, bt->b,
                                          odb_blocktridiag_length(t), bt->n,
                                          seed, dominance * bt->b);
  return launched("k_btd_random");
}

/* Launches the factorization with flag (may be NULL). */
static odb_status btd_factor_launch(const odb_blocktridiag *t,
                                    odb_bgpu_variant v, double *dm,
                                    unsigned long long *flag) {
  int lpt = 1;
  ODB_TRY(btd_lpt(t, v, 0, &lpt));
  if (lpt == 4)   /* odb_btd_factor_stream.cu, its automatic plan */
    return btd_factor_stream_launch(t, 0, 0, ODB_BTD_KERNEL_AUTO, dm,
                                    flag);
  SWITCH_B(odb_blocktridiag_batch(t)->b, run_btd, t, lpt, 0, dm, NULL, flag);
  return launched("block-tridiagonal factor");
}

extern "C" odb_status odb_bgpu_btd_factor_launch(const odb_blocktridiag *t,
                                                 odb_bgpu_variant v,
                                                 double *dm) {
  ODB_TRY(flag_reset());   /* the kernel always reports into a flag */
  return btd_factor_launch(t, v, dm, d_flag);
}

extern "C" odb_status odb_bgpu_btd_factor(const odb_blocktridiag *t,
                                          odb_bgpu_variant v, double *dm,
                                          long *bad_line) {
  if (bad_line) *bad_line = -1;
  ODB_TRY(flag_reset());
  ODB_TRY(btd_factor_launch(t, v, dm, d_flag));
  return btd_flag_result(t, bad_line);
}

odb_status btd_flag_result(const odb_blocktridiag *t, long *bad_line) {
  unsigned long long key = NO_BAD;
  int K = odb_blocktridiag_length(t);
  ODB_TRY(flag_read(&key));
  ODB_TRY(launched("block-tridiagonal factor"));
  if (key == NO_BAD) return ODB_OK;
  long line = (long)(key / (unsigned long long)K);
  if (bad_line) *bad_line = line;
  return ODB_FAIL(ODB_ERR_ARG, "line %ld has a zero or tiny pivot in the "
                  "diagonal block of row %d (block LU without pivoting needs "
                  "block diagonally dominant lines)", line,
                  (int)(key % (unsigned long long)K));
}

extern "C" odb_status odb_bgpu_btd_solve_stream(const odb_blocktridiag *t,
                                                int stages, int y_on_chip,
                                                int threads_per_line,
                                                const double *dm,
                                                double *dxp) {
  stream_plan p = { 0, 0, 0, 0 };
  ODB_TRY(stream_plan_of(t, stages, y_on_chip, threads_per_line, &p));
  SWITCH_B(odb_blocktridiag_batch(t)->b, run_btd_stream, t, &p,
           dev_smem_optin, dm, dxp);
  return launched("block-tridiagonal solve (stream)");
}

extern "C" odb_status odb_bgpu_btd_solve(const odb_blocktridiag *t,
                                         odb_bgpu_variant v, const double *dm,
                                         double *dxp) {
  int lpt = 1;
  ODB_TRY(btd_lpt(t, v, 1, &lpt));
  if (lpt == 4) return odb_bgpu_btd_solve_stream(t, 0, -1, 0, dm, dxp);
  SWITCH_B(odb_blocktridiag_batch(t)->b, run_btd, t, lpt, 1,
           const_cast<double *>(dm), dxp, NULL);
  return launched("block-tridiagonal solve");
}

/* }------ */

/* }====== */
