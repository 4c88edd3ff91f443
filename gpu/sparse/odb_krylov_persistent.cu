/* odb_krylov_persistent.cu - the "persistent" Krylov implementation: the
** whole BiCGStab or QMR solve in one kernel whose blocks meet at
** inter-block barriers (lock, lock-free or WS-S synchronization), with the
** SpMV of CSR or Bdia inside, as in Al-Mouhamed and Khan, "SpMV and
** BiCG-Stab optimization for a class of hepta-diagonal-sparse matrices on
** GPU" (sections 6.3 and 6.4); its host side chooses the launch shape,
** checks co-residency, tunes the Bdia grain and watches for a hung grid.
** On GPU ranks of one host (dist/sparse/odb_dist_krylov_gpu.cu) the same
** BiCGStab kernel also exchanges the SpMV's halo with the other ranks'
** GPUs (pk_xchg) and adds each group of sums over the ranks (kx_allsum in
** pk_wait), so a rank's whole solve is still one launch.
** One cohesive thing (the kernel and the host code that shapes and
** launches it), kept in one file.
*/
#include "odb_krylov_gpu.cuh"

/* {====== the persistent kernel */

/* Rows [r0, r1) of block blk of G: CSR contiguous rows; Bdia the cells
** [c0, c1) (rows c0 k .. c1 k), the last block also the nw well rows. */
ODB_HD static inline void pk_range(int fmt, long n, int M, int k, int blk, int G, int *r0, int *r1,
                               int *c0, int *c1) {
  if (fmt == PK_BDIA) {
    *c0 = (int)((long)M * blk / G);
    *c1 = (int)((long)M * (blk + 1) / G);
    *r0 = *c0 * k;
    *r1 = blk == G - 1 ? (int)n : *c1 * k;
  } else {
    *c0 = *c1 = 0;
    *r0 = (int)(n * blk / G);
    *r1 = (int)(n * (blk + 1) / G);
  }
}

/* CSR rows [r0, r1), PK_LANES threads a row: y[r - r0] = (A x)_r; with w,
** acc[0] += y.w and acc[1] += y.y over these rows. x is read with plain
** loads: other blocks wrote it before the last barrier. */
__device__ static void pk_spmv_csr(const int64_t *__restrict__ rp, const int32_t *__restrict__ ci,
                                   const double *__restrict__ va, const double *x, double *y,
                                   int r0, int r1, const double *w, double *acc) {
  const int lane = threadIdx.x % PK_LANES, grp = threadIdx.x / PK_LANES;
  const int ngrp = blockDim.x / PK_LANES;
  for (int base = r0; base < r1; base += ngrp) {
    int r = base + grp;
    double s = 0.0;
    if (r < r1) {
      long e = __ldg(rp + r) + lane, e1 = __ldg(rp + r + 1);
      for (; e + 3 * PK_LANES < e1; e += 4 * PK_LANES) {   /* four independent loads in flight */
        int j0 = __ldg(ci + e), j1 = __ldg(ci + e + PK_LANES), j2 = __ldg(ci + e + 2 * PK_LANES),
            j3 = __ldg(ci + e + 3 * PK_LANES);
        double v0 = __ldg(va + e), v1 = __ldg(va + e + PK_LANES), v2 = __ldg(va + e + 2 * PK_LANES),
               v3 = __ldg(va + e + 3 * PK_LANES);
        double x0 = x[j0], x1 = x[j1], x2 = x[j2], x3 = x[j3];
        s += v0 * x0; s += v1 * x1; s += v2 * x2; s += v3 * x3;
      }
      for (; e < e1; e += PK_LANES) s += __ldg(va + e) * x[__ldg(ci + e)];
    }
    for (int o = PK_LANES / 2; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o, PK_LANES);
    if (lane == 0 && r < r1) {
      y[r - r0] = s;
      if (w) { acc[0] += s * w[r - r0]; acc[1] += s * s; }
    }
  }
}

/* One Bdia matrix value: evict-first (ST; read once per SpMV, they then
** leave x and the Krylov vectors in L2) or through the read-only path. */
template <bool ST>
__device__ __forceinline__ double pk_ldv(const double *p) {
  return ST ? __ldcs(p) : __ldg(p);
}

/* Bdia cells [c0, c1), KC a compile-time k, GR rows of a cell per thread
** (GR divides KC), the standalone kernel's tiles (odb_sparse_gpu.cu
** k_bdia): KC/GR threads a cell, tiles of blockDim/(KC/GR) consecutive
** cells, thread (lm, q) computes rows q GR .. q GR + GR - 1 of cell
** m0 + lm. The threads of one cell run together, so the x words of a cell
** come through L1 once for all its rows (a row-major order would read
** them from L2 k times), and each x word a thread loads serves GR rows.
** Consecutive threads read consecutive value words (Al-Mouhamed and Khan,
** section 6.1); the W^T term goes to row 0 of well cells (6.2). ST:
** evict-first value loads.
** Returns y.w and y.y over these rows (w NULL: zeros). */
template <int KC, int GR, bool ST>
__device__ __forceinline__ static double2 pk_bdia_tiled(const pk_args &a, const double *x, double *y, int c0,
                                                        int c1, const double *w) {
  double acc[2] = {0.0, 0.0};
  constexpr int TPC = KC / GR;
  const int Bc = blockDim.x / TPC, lm = threadIdx.x % Bc, q = threadIdx.x / Bc;
  const int M = a.M, J = a.J;
  const long Mk = (long)M * KC, JH = (long)J * a.H;
  if (q >= TPC) return make_double2(0.0, 0.0);   /* blockDim not a multiple of TPC */
  for (int m = c0 + lm; m < c1; m += Bc) {
    const int hb = a.half && (m & 1) ? KC / 2 : 0;
    const double *vq = a.bv + (size_t)q * GR * KC * M + m;
    double s[GR];
#pragma unroll
    for (int j = 0; j < GR; j++) s[j] = 0.0;
#pragma unroll
    for (int u = 0; u < 7; u++) {
      long off = u == 0 ? -JH : u == 1 ? -(long)J : u == 2 ? -1 : u == 3 ? 0 : u == 4 ? 1 : u == 5 ? J : JH;
      long cb = ((long)m + off) * KC + (u < 3 ? -hb : u > 3 ? hb : 0);
      const double *vp = vq + (size_t)u * KC * KC * M;
      double xv[KC];
      if (cb >= 0 && cb + KC <= Mk) {
#pragma unroll
        for (int c = 0; c < KC; c++) xv[c] = x[cb + c];
      } else {
#pragma unroll
        for (int c = 0; c < KC; c++) xv[c] = cb + c >= 0 && cb + c < Mk ? x[cb + c] : 0.0;
      }
#pragma unroll
      for (int j = 0; j < GR; j++)
#pragma unroll
        for (int c = 0; c < KC; c++) s[j] += pk_ldv<ST>(vp + (size_t)(j * KC + c) * M) * xv[c];
    }
    if (q == 0 && a.nw) {
      int wl = __ldg(a.colwell + m / J);
      if (wl >= 0) s[0] += __ldg(a.WTa + __ldg(a.wa + wl) + (m - __ldg(a.wb + wl))) * x[Mk + wl];
    }
    const int li = (m - c0) * KC + q * GR;
#pragma unroll
    for (int j = 0; j < GR; j++) {
      y[li + j] = s[j];
      if (w) { acc[0] += s[j] * w[li + j]; acc[1] += s[j] * s[j]; }
    }
  }
  return make_double2(acc[0], acc[1]);
}

/* The same as a called function (the solver kernel's live state is saved
** around the call, so the SpMV loop has the registers to itself); a must
** not be a local copy (the kernels take it as a __grid_constant__). */
template <int KC, int GR, bool ST>
__device__ __noinline__ static double2 pk_bdia_tiled_call(const pk_args &a, const double *x, double *y, int c0,
                                                          int c1, const double *w) {
  return pk_bdia_tiled<KC, GR, ST>(a, x, y, c0, c1, w);
}

/* Bdia cells [c0, c1) and, when last, the nw well rows. KC > 0: the tiled
** form above (GR rows per thread, ST value loads; NI: called, not
** inlined). KC = 0 (any k): one thread per row (m, r), rows of one
** component over consecutive cells. */
template <int KC, int GR, bool ST, bool NI>
__device__ static void pk_spmv_bdia(const pk_args &a, const double *x, double *y, int r0, int c0,
                                    int c1, int last, const double *w, double *acc) {
  const int k = KC ? KC : a.k, M = a.M, nc = c1 - c0, J = a.J;
  const long Mk = (long)M * k, JH = (long)J * a.H;
  if (KC) {
    constexpr int K1 = KC ? KC : 1, G1 = KC ? GR : 1;
    double2 d = NI ? pk_bdia_tiled_call<K1, G1, ST>(a, x, y, c0, c1, w) : pk_bdia_tiled<K1, G1, ST>(a, x, y, c0, c1, w);
    if (w) { acc[0] += d.x; acc[1] += d.y; }
  }
  else for (int i = threadIdx.x; i < nc * k; i += blockDim.x) {
    int r = i / nc, m = c0 + (i - r * nc);
    int hb = a.half && (m & 1) ? k / 2 : 0;
    double s = 0.0;
#pragma unroll
    for (int u = 0; u < 7; u++) {
      long off = u == 0 ? -JH : u == 1 ? -(long)J : u == 2 ? -1 : u == 3 ? 0 : u == 4 ? 1 : u == 5 ? J : JH;
      long cb = ((long)m + off) * k + (u < 3 ? -hb : u > 3 ? hb : 0);
      const double *vp = a.bv + (size_t)(u * k + r) * k * M + m;
      if (cb >= 0 && cb + k <= Mk) {
        for (int c = 0; c < k; c++) s += __ldg(vp + (size_t)c * M) * x[cb + c];
      } else {
        for (int c = 0; c < k; c++)
          if (cb + c >= 0 && cb + c < Mk) s += __ldg(vp + (size_t)c * M) * x[cb + c];
      }
    }
    if (r == 0 && a.nw) {
      int wl = __ldg(a.colwell + m / J);
      if (wl >= 0) s += __ldg(a.WTa + __ldg(a.wa + wl) + (m - __ldg(a.wb + wl))) * x[Mk + wl];
    }
    int li = (m - c0) * k + r;
    y[li] = s;
    if (w) { acc[0] += s * w[li]; acc[1] += s * s; }
  }
  if (!last) return;
  for (int wl = threadIdx.x; wl < a.nw; wl += blockDim.x) {
    double s = __ldg(a.D + wl) * x[Mk + wl];
    int a0 = __ldg(a.wa + wl), b0 = __ldg(a.wb + wl), cn = __ldg(a.wc + wl);
    for (int t = 0; t < cn; t++) s += __ldg(a.Wa + a0 + t) * x[(long)(b0 + t) * k];
    int li = (int)(Mk + wl - r0);
    y[li] = s;
    if (w) { acc[0] += s * w[li]; acc[1] += s * s; }
  }
}

/* y = A x on this block's rows (y local: index row - r0). */
template <int FMT, int KC, int GR, bool ST, bool NI>
__device__ static inline void pk_spmv(const pk_args &a, const double *x, double *y, int r0, int r1,
                                      int c0, int c1, const double *w, double *acc) {
  if (FMT == PK_BDIA) pk_spmv_bdia<KC, GR, ST, NI>(a, x, y, r0, c0, c1, blockIdx.x == gridDim.x - 1, w, acc);
  else pk_spmv_csr(a.rp, a.ci, a.va, x, y, r0, r1, w, acc);
}

__device__ static inline unsigned long long ld_acquire_sys(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

/* Spins until *p >= target; the watchdog (global timer) or another block's
** failure ends it with 0. One thread. PEER: *p is a word another GPU
** writes (GPU ranks, pk_xchg), read at system scope; its watchdog sets
** a.err 2 (a rank did not answer) and the link's fail word, so that the
** host names the rank; else a.err 1 with the barrier, block and
** iteration. */
template <bool PEER = false>
__device__ static int pk_spin(const pk_args &a, const unsigned long long *p, unsigned long long target,
                              unsigned long long ep, int it) {
  unsigned long long t0 = gtimer();
  unsigned n = 0;
  while ((PEER ? ld_acquire_sys(p) : ld_acquire(p)) < target) {
    if ((++n & 63) == 0) {
      if (ld_acquire(a.err) != 0) return 0;
      if (gtimer() - t0 > a.timeout_ns) {
        if (atomicCAS(a.err, 0ull, PEER ? 2ull : 1ull) == 0ull) {
          a.err[1] = ep; a.err[2] = blockIdx.x; a.err[3] = (unsigned long long)it;
        }
        if (PEER && a.h.fail) atomicOr(a.h.fail, 1u);
        __threadfence();
        return 0;
      }
    }
    if (!PEER && a.sync == ODB_KRY_SYNC_WSS) __nanosleep(32);
  }
  return 1;
}

/* Barrier episode ep+1, first half: the block's sums of v[0..nr) become
** its partials, then it announces its arrival (counter or flag). The
** caller may do independent work (WS-2) before pk_wait. */
__device__ static void pk_arrive(const pk_args &a, unsigned long long &ep, double *v, int nr, double *red) {
  ep++;
  int par = (int)(ep & 1);
  if (nr) {
    block_sum(v, nr, red);
    if (threadIdx.x == 0)
      for (int j = 0; j < nr; j++) a.part[((size_t)par * gridDim.x + blockIdx.x) * 4 + j] = v[j];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (a.sync == ODB_KRY_SYNC_LOCK) add_release(a.count, 1ull);
    else st_release(&a.ain[blockIdx.x], ep);
  }
}

/* Second half: waits until every block arrived at episode ep; tot gets the
** grid-wide sums of the nr partials (lock, lockfree: every block sums them
** in block order; WS-S: block 0 sums and publishes them). 0 (for the whole
** block) when the watchdog fired. */
__device__ static int pk_wait(const pk_args &a, unsigned long long ep, int it, int nr, double *tot,
                              double *red, int *fail) {
  const int G = gridDim.x, par = (int)(ep & 1);
  if (a.sync == ODB_KRY_SYNC_LOCK) {
    if (threadIdx.x == 0) {
      if (!pk_spin(a, a.count, ep * (unsigned long long)G, ep, it)) atomicExch(fail, 1);
      __threadfence();
    }
    __syncthreads();
  } else {
    if (a.sync == ODB_KRY_SYNC_WSS && a.delay_ns > 0) __nanosleep((unsigned)a.delay_ns);
    if (blockIdx.x == 0) {
      for (int i = threadIdx.x; i < G; i += blockDim.x)
        if (!pk_spin(a, &a.ain[i], ep, ep, it)) { atomicExch(fail, 1); break; }
      __threadfence();
      __syncthreads();
      if (*fail) return 0;
      if (a.sync == ODB_KRY_SYNC_WSS && nr) {
        double w[3] = {0.0, 0.0, 0.0};
        for (int i = threadIdx.x; i < G; i += blockDim.x)
          for (int j = 0; j < nr; j++) w[j] += __ldcg(&a.part[((size_t)par * G + i) * 4 + j]);
        block_sum(w, nr, red);
        if (threadIdx.x == 0) {
          /* GPU ranks: this GPU's sums become the ranks' (rank order, the
             same bits on every rank); a rank that does not answer makes
             them NaN, which ends the solve as a breakdown */
          kstate lost;
          if (a.xs && kx_allsum(a.xs, w, nr, &lost)) {
            for (int j = 0; j < nr; j++) w[j] = nan("");
            atomicCAS(a.err, 0ull, 2ull);
          }
          for (int j = 0; j < nr; j++) { tot[j] = w[j]; a.pub[par * 4 + j] = w[j]; }
          __threadfence();
        }
        __syncthreads();
      }
      for (int i = threadIdx.x; i < G; i += blockDim.x)
        if (i) st_release(&a.aout[i], ep);
    } else {
      if (threadIdx.x == 0) {
        if (!pk_spin(a, &a.aout[blockIdx.x], ep, ep, it)) atomicExch(fail, 1);
        __threadfence();
      }
      __syncthreads();
    }
  }
  if (*fail) return 0;
  if (nr) {
    if (a.sync == ODB_KRY_SYNC_WSS) {
      if (blockIdx.x != 0 && threadIdx.x < nr) tot[threadIdx.x] = __ldcg(&a.pub[par * 4 + threadIdx.x]);
    } else {
      double w[3] = {0.0, 0.0, 0.0};
      for (int i = threadIdx.x; i < G; i += blockDim.x)
        for (int j = 0; j < nr; j++) w[j] += __ldcg(&a.part[((size_t)par * G + i) * 4 + j]);
      block_sum(w, nr, red);
      if (threadIdx.x == 0)
        for (int j = 0; j < nr; j++) tot[j] = w[j];
    }
    __syncthreads();
  }
  return 1;
}

/* Range vectors: in shared memory (rv) or this block's slice of the global vectors. */
__device__ static inline double *pk_local(const pk_args &a, double *dsm, int j, int r0) {
  return a.rv ? dsm + (size_t)j * a.Lmax : a.g[j] + r0;
}

/* {------ GPU ranks of one host: the halo inside the kernel (pk_halo) */

/* Exchange e of v's halo (v: nloc own entries, every block's written and
** a barrier passed since; its ghosts from nloc on): once the receivers
** have copied exchange e - 1, every block packs its share of the send
** buffer; a barrier; block 0 tells the receivers; every block waits for
** the senders' words and copies its share of their values over the link;
** a barrier; block 0 tells the senders. Two barriers of episode ep. 0
** (for the whole block) when a wait gave up. */
__device__ static int pk_xchg(const pk_args &a, unsigned long long &ep, double *v, unsigned long long e,
                              int it, double *red, double *tot, int *fail) {
  const pk_halo &h = a.h;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  double none[3] = {0.0, 0.0, 0.0};
  if (threadIdx.x == 0)
    for (int k = 0; k < h.nto; k++)
      if (!pk_spin<true>(a, h.copied[k], e - 1, ep, it)) { atomicExch(fail, 1); break; }
  __syncthreads();
  if (*fail) return 0;
  for (long long i = first; i < h.ns; i += step) h.out[i] = v[h.idx[i]];
  __threadfence_system();
  pk_arrive(a, ep, none, 0, red);
  if (!pk_wait(a, ep, it, 0, tot, red, fail)) return 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    __threadfence_system();
    for (int j = 0; j < h.nto; j++) *(volatile unsigned long long *)h.ready_to[j] = e;
  }
  if (threadIdx.x == 0)
    for (int j = 0; j < h.nfrom; j++)
      if (!pk_spin<true>(a, h.ready[j], e, ep, it)) { atomicExch(fail, 1); break; }
  __syncthreads();
  if (*fail) return 0;
  for (int j = 0; j < h.nfrom; j++) {
    const double *s = h.src[j];
    double *d = v + h.nloc + h.dst[j];
    for (long long i = first; i < h.count[j]; i += step) d[i] = __ldcv(s + i);
  }
  pk_arrive(a, ep, none, 0, red);
  if (!pk_wait(a, ep, it, 0, tot, red, fail)) return 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    __threadfence_system();
    for (int j = 0; j < h.nfrom; j++) *(volatile unsigned long long *)h.copied_to[j] = e;
  }
  return 1;
}

/* }------ */

#define PK_LOOP(i) for (int i = threadIdx.x; i < L; i += blockDim.x)
#define PK_SYNC(nr)                                                        \
  do {                                                                     \
    pk_arrive(a, ep, acc, (nr), red);                                      \
    if (!pk_wait(a, ep, st.it, (nr), tot, red, &fail)) return;             \
  } while (0)

/* BiCGStab, the whole solve in one kernel: five barriers per iteration
** (p shared; rhat.v; s shared + s.s; t.t, t.s; r.r, rhat.r). WS-S does
** x += alpha p while waiting for omega and p - omega v while waiting for
** rho. Vectors: 0 r, 1 rhat, 2 x, 3 p, 4 v, 5 s, 6 t. */
template <int FMT, int KC, int GR, bool ST, bool NI>
__global__ void __launch_bounds__(1024) pk_bicg(const __grid_constant__ pk_args a) {
  extern __shared__ double dsm[];
  __shared__ double red[96];
  __shared__ double tot[4];
  __shared__ kstate st;
  __shared__ int fail;
  int r0, r1, c0, c1;
  pk_range(FMT, a.n, a.M, a.k, blockIdx.x, gridDim.x, &r0, &r1, &c0, &c1);
  const int L = r1 - r0, wss = a.sync == ODB_KRY_SYNC_WSS;
  double *R = pk_local(a, dsm, 0, r0), *RH = pk_local(a, dsm, 1, r0), *X = pk_local(a, dsm, 2, r0);
  double *P = pk_local(a, dsm, 3, r0), *V = pk_local(a, dsm, 4, r0), *S = pk_local(a, dsm, 5, r0);
  double *T = pk_local(a, dsm, 6, r0);
  double *gX = a.g[2], *gP = a.g[3], *gS = a.g[5];
  double *hist = blockIdx.x == 0 ? a.hist : NULL;
  unsigned long long ep = 0, e = a.h.e0;
  double acc[3] = {0.0, 0.0, 0.0};
  if (threadIdx.x == 0) { st = a.st0; fail = 0; }
  __syncthreads();

  if (a.h.on && !pk_xchg(a, ep, gX, ++e, 0, red, tot, &fail)) return;
  pk_spmv<FMT, KC, GR, ST, NI>(a, gX, R, r0, r1, c0, c1, NULL, acc);
  __syncthreads();
  acc[0] = 0.0;
  PK_LOOP(i) {
    double ri = a.b[r0 + i] - R[i];
    R[i] = ri; RH[i] = ri; P[i] = 0.0; V[i] = 0.0;
    if (a.rv) X[i] = gX[r0 + i];
    acc[0] += ri * ri;
  }
  PK_SYNC(1);
  if (threadIdx.x == 0) bicg_init(&st, hist, tot[0]);
  __syncthreads();

  while (st.outcome == KS_RUN) {
    if (a.test_hang == (int)blockIdx.x + 1 && st.it == 2) return;
    const double beta = st.beta, om0 = st.omega;
    PK_LOOP(i) {
      double p = R[i] + beta * (wss ? P[i] : P[i] - om0 * V[i]);
      P[i] = p;
      if (a.rv) gP[r0 + i] = p;
    }
    PK_SYNC(0);
    if (a.h.on && !pk_xchg(a, ep, gP, ++e, st.it, red, tot, &fail)) return;
    acc[0] = acc[1] = 0.0;
    pk_spmv<FMT, KC, GR, ST, NI>(a, gP, V, r0, r1, c0, c1, RH, acc);
    PK_SYNC(2);
    if (threadIdx.x == 0) bicg_after_v(&st, tot[0], tot[1]);
    __syncthreads();
    if (st.outcome != KS_RUN) break;
    const double alpha = st.alpha;
    acc[0] = 0.0;
    PK_LOOP(i) {
      double s = R[i] - alpha * V[i];
      S[i] = s;
      if (a.rv) gS[r0 + i] = s;
      acc[0] += s * s;
    }
    PK_SYNC(1);
    if (threadIdx.x == 0) bicg_after_s(&st, hist, tot[0]);
    __syncthreads();
    if (st.half) {
      PK_LOOP(i) X[i] += alpha * P[i];
      break;
    }
    if (a.h.on && !pk_xchg(a, ep, gS, ++e, st.it, red, tot, &fail)) return;
    acc[0] = acc[1] = 0.0;
    pk_spmv<FMT, KC, GR, ST, NI>(a, gS, T, r0, r1, c0, c1, S, acc);
    pk_arrive(a, ep, acc, 2, red);
    if (wss) PK_LOOP(i) X[i] += alpha * P[i];             /* WS-2 */
    if (!pk_wait(a, ep, st.it, 2, tot, red, &fail)) return;
    if (threadIdx.x == 0) bicg_after_t(&st, tot[1], tot[0]);
    __syncthreads();
    if (st.outcome != KS_RUN) {
      if (wss) PK_LOOP(i) X[i] -= alpha * P[i];
      break;
    }
    const double om = st.omega;
    acc[0] = acc[1] = 0.0;
    PK_LOOP(i) {
      double x = wss ? X[i] + om * S[i] : X[i] + (alpha * P[i] + om * S[i]);
      double r = S[i] - om * T[i];
      X[i] = x; R[i] = r;
      acc[0] += r * r; acc[1] += RH[i] * r;
    }
    pk_arrive(a, ep, acc, 2, red);
    if (wss) PK_LOOP(i) P[i] -= om * V[i];                /* WS-2 */
    if (!pk_wait(a, ep, st.it, 2, tot, red, &fail)) return;
    if (threadIdx.x == 0) bicg_end(&st, hist, tot[0], tot[1]);
    __syncthreads();
  }
  if (a.rv) PK_LOOP(i) gX[r0 + i] = X[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *a.st_out = st;
    if (a.h.on) {
      /* the send buffer is free for whatever packs next once every
         receiver has copied the last exchange */
      for (int k = 0; k < a.h.nto; k++)
        if (!pk_spin<true>(a, a.h.copied[k], e, ep, st.it)) break;
      *a.h.e_out = e;
    }
  }
}

/* QMR (CSR of A and of A^T), three barriers per iteration: p, q shared
** with the previous r.r; q.pt, q.q, pt.pt; vt.vt, wt.wt, wt.vt. The next
** p and q are computed with the x, r update, before the residual test of
** the iteration is known (discarded when it stops). Vectors: 0 r, 1 vt,
** 2 wt, 3 v, 4 w, 5 p, 6 q, 7 pt, 8 d, 9 s, 10 x, 11 A^T q. */
__global__ void __launch_bounds__(1024) pk_qmr(pk_args a) {
  extern __shared__ double dsm[];
  __shared__ double red[96];
  __shared__ double tot[4];
  __shared__ kstate st;
  __shared__ int fail;
  int r0, r1, c0, c1;
  pk_range(PK_CSR, a.n, a.M, a.k, blockIdx.x, gridDim.x, &r0, &r1, &c0, &c1);
  const int L = r1 - r0;
  double *R = pk_local(a, dsm, 0, r0), *VT = pk_local(a, dsm, 1, r0), *WT = pk_local(a, dsm, 2, r0);
  double *V = pk_local(a, dsm, 3, r0), *W = pk_local(a, dsm, 4, r0), *P = pk_local(a, dsm, 5, r0);
  double *Q = pk_local(a, dsm, 6, r0), *PT = pk_local(a, dsm, 7, r0), *D = pk_local(a, dsm, 8, r0);
  double *S = pk_local(a, dsm, 9, r0), *X = pk_local(a, dsm, 10, r0), *ATQ = pk_local(a, dsm, 11, r0);
  double *gX = a.g[10], *gP = a.g[5], *gQ = a.g[6];
  double *hist = blockIdx.x == 0 ? a.hist : NULL;
  unsigned long long ep = 0;
  double acc[3] = {0.0, 0.0, 0.0}, qq = 0.0;
  if (threadIdx.x == 0) { st = a.st0; fail = 0; }
  __syncthreads();

  pk_spmv_csr(a.rp, a.ci, a.va, gX, R, r0, r1, NULL, acc);
  __syncthreads();
  acc[0] = 0.0;
  PK_LOOP(i) {
    double ri = a.b[r0 + i] - R[i];
    R[i] = ri; VT[i] = ri; WT[i] = ri;
    P[i] = Q[i] = D[i] = S[i] = 0.0;
    if (a.rv) X[i] = gX[r0 + i];
    acc[0] += ri * ri;
  }
  PK_SYNC(1);
  if (threadIdx.x == 0) qmr_init(&st, hist, tot[0]);
  __syncthreads();
  if (st.outcome == KS_RUN) {
    const double rho = st.qrho, xi = st.xi, cp = st.cp, cq = st.cq;
    PK_LOOP(i) {
      double v = VT[i] / rho, w = WT[i] / xi, p = v - cp * P[i], q = w - cq * Q[i];
      V[i] = v; W[i] = w; P[i] = p; Q[i] = q;
      if (a.rv) { gP[r0 + i] = p; gQ[r0 + i] = q; }
      qq += q * q;
    }
    PK_SYNC(0);
  }
  while (st.outcome == KS_RUN) {
    if (a.test_hang == (int)blockIdx.x + 1 && st.it == 2) return;
    acc[0] = acc[1] = 0.0;
    pk_spmv_csr(a.rp, a.ci, a.va, gP, PT, r0, r1, Q, acc);      /* acc: q.pt, pt.pt */
    pk_spmv_csr(a.trp, a.tci, a.tva, gQ, ATQ, r0, r1, NULL, acc);
    acc[2] = acc[1];
    acc[1] = qq;
    PK_SYNC(3);
    if (threadIdx.x == 0) qmr_after_pt(&st, tot[0], tot[1], tot[2]);
    __syncthreads();
    if (st.outcome != KS_RUN) break;
    const double beta = st.qbeta;
    acc[0] = acc[1] = acc[2] = 0.0;
    PK_LOOP(i) {
      double vt = PT[i] - beta * V[i], wt = ATQ[i] - beta * W[i];
      VT[i] = vt; WT[i] = wt;
      acc[0] += vt * vt; acc[1] += wt * wt; acc[2] += wt * vt;
    }
    PK_SYNC(3);
    if (threadIdx.x == 0) qmr_after_vw(&st, tot[0], tot[1], tot[2]);
    __syncthreads();
    if (st.outcome != KS_RUN) break;
    const double eta = st.eta, c = st.c, rho = st.qrho, xi = st.xi, cp = st.cp, cq = st.cq;
    const int next = st.it < st.maxit;
    acc[0] = 0.0;
    qq = 0.0;
    PK_LOOP(i) {
      double d = eta * P[i] + c * D[i], s = eta * PT[i] + c * S[i];
      D[i] = d; S[i] = s;
      X[i] += d;
      double r = R[i] - s;
      R[i] = r;
      acc[0] += r * r;
      if (next) {
        double v = VT[i] / rho, w = WT[i] / xi, p = v - cp * P[i], q = w - cq * Q[i];
        V[i] = v; W[i] = w; P[i] = p; Q[i] = q;
        if (a.rv) { gP[r0 + i] = p; gQ[r0 + i] = q; }
        qq += q * q;
      }
    }
    PK_SYNC(1);
    if (threadIdx.x == 0) qmr_end(&st, hist, tot[0]);
    __syncthreads();
  }
  if (a.rv) PK_LOOP(i) gX[r0 + i] = X[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.st_out = st;
}

/* y = A x with the persistent kernel's SpMV (any grid): the true residual
** and the reference SpMV time of impl "persistent". */
template <int FMT, int KC, int GR, bool ST, bool NI>
__global__ void __launch_bounds__(1024) pk_spmv_kernel(const __grid_constant__ pk_args a, const double *x,
                                                       double *y) {
  int r0, r1, c0, c1;
  double acc[3];
  pk_range(FMT, a.n, a.M, a.k, blockIdx.x, gridDim.x, &r0, &r1, &c0, &c1);
  pk_spmv<FMT, KC, GR, ST, NI>(a, x, y + r0, r0, r1, c0, c1, NULL, acc);
}

/* }====== */

/* {====== impl "persistent": launch shape, co-residency, watchdog */

void pk_free(pk_ws *w) {
  for (int i = 0; i < 12; i++) dfree(w->a.g[i]);
  dfree(w->rp); dfree(w->trp); dfree(w->ci); dfree(w->tci); dfree(w->va); dfree(w->tva);
  dfree(w->bv); dfree(w->Wa); dfree(w->WTa); dfree(w->D);
  dfree(w->wa); dfree(w->wb); dfree(w->wc); dfree(w->colwell);
  dfree(w->b); dfree(w->y); dfree(w->st_d); dfree(w->e_d);
  dfree(w->a.part); dfree(w->a.pub); dfree(w->a.count); dfree(w->a.ain); dfree(w->a.aout);
  dfree(w->a.err); dfree(w->a.hist);
  red_free(&w->red);
  memset(w, 0, sizeof *w);
}

/* Whether k has unrolled Bdia kernels. */
static int pk_kc(int k) { return k == 2 || k == 4 || k == 8; }

/* Whether gr is a grain of the unrolled Bdia kernels for k (pk_kc(k)). */
static int pk_grain_ok(int k, int gr) { return gr == 1 || gr == k || ((gr == 2 || gr == 4) && gr < k); }

/* The solver (spmv 0) or SpMV (spmv 1) kernel of Bdia with k = K, grain
** GR, value loads v & 1 (evict-first) and v & 2 (SpMV called). */
template <int K, int GR>
static const void *pk_pick(int spmv, int v) {
#define PK_V(ST, NI) (spmv ? (const void *)pk_spmv_kernel<PK_BDIA, K, GR, ST, NI> \
                           : (const void *)pk_bicg<PK_BDIA, K, GR, ST, NI>)
  switch (v & 3) {
  case 1: return PK_V(true, false);
  case 2: return PK_V(false, true);
  case 3: return PK_V(true, true);
  default: return PK_V(false, false);
  }
#undef PK_V
}

/* The kernel of this method, format, k (2, 4, 8 unrolled), grain and
** variant st (bit 0 stream, bit 1 SpMV called); spmv 1: the kernel that
** runs only its SpMV (QMR: CSR's). */
static const void *pk_kernel(int qmr, int spmv, int fmt, int k, int gr, int st) {
  if (qmr && !spmv) return (const void *)pk_qmr;
  if (fmt == PK_CSR)
    return spmv ? (const void *)pk_spmv_kernel<PK_CSR, 0, 1, false, false>
                : (const void *)pk_bicg<PK_CSR, 0, 1, false, false>;
  switch (k) {
  case 2: return gr == 2 ? pk_pick<2, 2>(spmv, st) : pk_pick<2, 1>(spmv, st);
  case 4: return gr == 4 ? pk_pick<4, 4>(spmv, st) : gr == 2 ? pk_pick<4, 2>(spmv, st) : pk_pick<4, 1>(spmv, st);
  case 8:
    return gr == 8 ? pk_pick<8, 8>(spmv, st) : gr == 4 ? pk_pick<8, 4>(spmv, st)
         : gr == 2 ? pk_pick<8, 2>(spmv, st) : pk_pick<8, 1>(spmv, st);
  default:
    return spmv ? (const void *)pk_spmv_kernel<PK_BDIA, 0, 1, false, false>
                : (const void *)pk_bicg<PK_BDIA, 0, 1, false, false>;
  }
}

/* y = A x with the persistent kernel's SpMV on grid x block (no wait). */
odb_status pk_spmv_launch(const pk_ws *w, const double *x, double *y) {
  pk_args a = w->a;
  void *params[] = {&a, &x, &y};
  const void *kern = pk_kernel(w->qmr, 1, w->fmt, w->a.k, w->gr, w->st);
  ODB_CUDA_CHECK(cudaLaunchKernel(kern, dim3(w->grid), dim3(w->block), params, 0, 0));
  return ODB_OK;
}

/* Uploads the matrix arrays the in-kernel SpMV reads (CSR, A^T for QMR,
** or Bdia with a column -> well map built from b[w]). */
odb_status pk_upload(pk_ws *w, const odb_sparse *A) {
  pk_args *a = &w->a;
  long n = A->n;
  a->n = n;
  if (w->fmt == PK_CSR) {
    long nnz = A->rowptr[n];
    ODB_TRY(dupload(&w->rp, A->rowptr, ((size_t)n + 1) * sizeof(int64_t), "CSR row pointers"));
    ODB_TRY(dupload(&w->ci, A->col, (size_t)(nnz ? nnz : 1) * sizeof(int32_t), "CSR columns"));
    ODB_TRY(dupload(&w->va, A->val, (size_t)(nnz ? nnz : 1) * sizeof(double), "CSR values"));
    a->rp = w->rp; a->ci = w->ci; a->va = w->va;
    a->k = 1; a->M = (int)n;
    if (w->qmr) {
      odb_sparse *At = NULL;
      ODB_TRY(csr_transpose(A, &At));
      odb_status st = dupload(&w->trp, At->rowptr, ((size_t)n + 1) * sizeof(int64_t), "CSR of A^T");
      if (st == ODB_OK) st = dupload(&w->tci, At->col, (size_t)(nnz ? nnz : 1) * sizeof(int32_t), "CSR of A^T");
      if (st == ODB_OK) st = dupload(&w->tva, At->val, (size_t)(nnz ? nnz : 1) * sizeof(double), "CSR of A^T");
      odb_sparse_free(At);
      ODB_TRY(st);
      a->trp = w->trp; a->tci = w->tci; a->tva = w->tva;
    }
    return ODB_OK;
  }
  const odb_bdia *bd = A->bd;
  int nw1 = bd->nw ? bd->nw : 1;
  size_t cols = (size_t)bd->H * bd->I;
  size_t vbytes = 0;
  ODB_TRY(odb_sparse_gpu_bdia_values(bd, &w->bv, &vbytes));
  ODB_TRY(dupload(&w->Wa, bd->Wa, (size_t)nw1 * bd->J * sizeof(double), "Bdia well values"));
  ODB_TRY(dupload(&w->WTa, bd->WTa, (size_t)nw1 * bd->J * sizeof(double), "Bdia well values"));
  ODB_TRY(dupload(&w->D, bd->D, (size_t)nw1 * sizeof(double), "Bdia well diagonal"));
  ODB_TRY(dupload(&w->wa, bd->a, (size_t)nw1 * sizeof(int), "Bdia well pointers"));
  ODB_TRY(dupload(&w->wb, bd->b, (size_t)nw1 * sizeof(int), "Bdia well pointers"));
  ODB_TRY(dupload(&w->wc, bd->c, (size_t)nw1 * sizeof(int), "Bdia well pointers"));
  int *cw = (int *)malloc(cols * sizeof *cw);
  if (!cw) return ODB_FAIL(ODB_ERR_NOMEM, "column -> well map of %zu columns", cols);
  for (size_t i = 0; i < cols; i++) cw[i] = -1;
  for (int wl = 0; wl < bd->nw; wl++) cw[bd->b[wl] / bd->J] = wl;
  odb_status st = dupload(&w->colwell, cw, cols * sizeof *cw, "column -> well map");
  free(cw);
  ODB_TRY(st);
  a->k = bd->k; a->J = bd->J; a->H = bd->H; a->half = bd->pattern == ODB_GH_HALF && bd->k > 1;
  a->nw = bd->nw; a->M = (int)bd->M;
  a->bv = w->bv; a->Wa = w->Wa; a->WTa = w->WTa; a->D = w->D;
  a->wa = w->wa; a->wb = w->wb; a->wc = w->wc; a->colwell = w->colwell;
  return ODB_OK;
}

/* Largest row range of any block at grid G. */
static int pk_lmax(const pk_ws *w, int G) {
  int lmax = 0, r0, r1, c0, c1;
  for (int blk = 0; blk < G; blk++) {
    pk_range(w->fmt, w->a.n, w->a.M, w->a.k, blk, G, &r0, &r1, &c0, &c1);
    if (r1 - r0 > lmax) lmax = r1 - r0;
  }
  return lmax;
}

/* Blocks of `block` threads with `smem` dynamic bytes one SM holds. */
static odb_status pk_occupancy(const void *kern, int block, size_t smem, int *per_sm) {
  ODB_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  ODB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kern, block, smem));
  return ODB_OK;
}


/* Grid, range vectors and shared memory of the kernel for w->gr, w->st:
** the grid must be co-resident (occupancy x SMs) or the barriers would
** deadlock; a grid asked for beyond that is refused here, before launch. */
static odb_status pk_geom_of(const pk_ws *w, const odb_krylov_gpu_opts *o, pk_geom *g) {
  const void *kern = pk_kernel(w->qmr, 0, w->fmt, w->a.k, w->gr, w->st);
  int dev = 0, sms = 0, optin = 0, occ_g = 0, occ_s = 0, block = w->block;
  struct cudaFuncAttributes fa;
  memset(g, 0, sizeof *g);
  ODB_CUDA_CHECK(cudaGetDevice(&dev));
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  ODB_CUDA_CHECK(cudaFuncGetAttributes(&fa, kern));
  ODB_TRY(pk_occupancy(kern, block, 0, &occ_g));
  if (occ_g == 0)
    return ODB_FAIL(ODB_ERR_ARG, "persistent: a block of %d threads does not fit on an SM "
                    "(%d registers per thread)", block, fa.numRegs);
  int max_g = occ_g * sms;
  g->max_grid = max_g;
  if (o->grid > max_g)
    return ODB_FAIL(ODB_ERR_ARG, "persistent: grid %d exceeds the %d blocks the device holds at once "
                    "(%d per SM x %d SMs at %d threads); its barriers would deadlock",
                    o->grid, max_g, occ_g, sms, block);
  /* two rows (cells) per thread, but every SM busy and no more than fit */
  long cells = w->a.M;
  long units = w->fmt == PK_BDIA ? cells * (w->a.k / w->gr) : w->a.n;
  long want = (units + 2L * block - 1) / (2L * block);
  if (want < sms) want = sms;
  if (w->fmt == PK_BDIA && want > cells) want = cells;
  int G = o->grid > 0 ? o->grid : (int)(want < max_g ? want : max_g);
  if (w->fmt == PK_BDIA && G > w->a.M)
    return ODB_FAIL(ODB_ERR_ARG, "persistent: grid %d has more blocks than the %d cells", G, w->a.M);
  size_t max_dyn = (size_t)optin > fa.sharedSizeBytes ? (size_t)optin - fa.sharedSizeBytes : 0;
  int lmax = pk_lmax(w, G);
  size_t need = (size_t)w->nv * lmax * sizeof(double);
  int rv = 0;
  if (o->rv != ODB_KRY_RV_GLOBAL && need <= max_dyn) {
    ODB_TRY(pk_occupancy(kern, block, need, &occ_s));
    rv = (long)occ_s * sms >= G;
  }
  if (o->rv == ODB_KRY_RV_SHARED && !rv)
    return ODB_FAIL(ODB_ERR_ARG, "persistent: range vectors need %zu bytes of shared memory per block "
                    "at grid %d (the device allows %zu per block, %d such blocks resident)",
                    need, G, max_dyn, occ_s * sms);
  if (rv) g->max_grid = occ_s * sms;
  g->grid = G;
  g->rv = rv;
  g->lmax = lmax;
  g->smem = rv ? need : 0;
  return ODB_OK;
}

/* Takes candidate c of w (its grain, loads and shape). */
static void pk_take(pk_ws *w, int c) {
  const pk_cand *k = &w->cand[c];
  w->gr = k->gr;
  w->st = k->st;
  w->grid = k->g.grid;
  w->smem = k->g.smem;
  w->a.rv = k->g.rv;
  w->a.Lmax = k->g.lmax;
}

/* Seconds of one SpMV of w's current kernel and shape (zero x; one warm-up
** run, then the mean of three). */
static odb_status pk_time_spmv(const pk_ws *w, const double *x, double *y, double *sec) {
  ktimer t = {NULL, NULL};
  odb_status st = pk_spmv_launch(w, x, y);
  if (st == ODB_OK) st = timer_start(&t);
  for (int i = 0; st == ODB_OK && i < 3; i++) st = pk_spmv_launch(w, x, y);
  if (st == ODB_OK) st = timer_stop(&t, sec);
  timer_free(&t);
  if (st == ODB_OK) *sec /= 3.0;
  return st;
}

/* SpMV timing only (odb_krylov_gpu_spmv_seconds): keeps the candidate
** whose SpMV kernel is fastest on its own shape. */
static odb_status pk_tune_spmv(pk_ws *w) {
  double *x = NULL, *y = NULL, best = 0.0, sec = 0.0;
  int bc = 0;
  odb_status st = dalloc(&x, (size_t)w->a.n * sizeof(double), "SpMV tuning x");
  if (st == ODB_OK) st = dalloc(&y, (size_t)w->a.n * sizeof(double), "SpMV tuning y");
  if (st == ODB_OK && cudaMemset(x, 0, (size_t)w->a.n * sizeof(double)) != cudaSuccess)
    st = odb_cuda_fail(cudaGetLastError(), "cudaMemset(SpMV tuning x)", __FILE__, __LINE__);
  for (int c = 0; st == ODB_OK && c < w->ncand; c++) {
    pk_take(w, c);
    st = pk_time_spmv(w, x, y, &sec);
    if (st == ODB_OK && (c == 0 || sec < best)) { best = sec; bc = c; }
  }
  dfree(x); dfree(y);
  ODB_TRY(st);
  w->cand[0] = w->cand[bc];
  w->ncand = 1;
  pk_take(w, 0);
  return ODB_OK;
}

/* Grain and SpMV-variant candidates and their co-resident shapes. A
** grain, stream or call of 0 is chosen: among every candidate (the solve
** times them, pk_tune_solve) when o->tune asks for it or A's values take
** 64 MiB or more, else grain k when the cells alone fill the device
** (k <= 4) or 1, plain loads, inlined SpMV. Grain 8 at k = 8 inlined
** spills kilobytes of registers in the solver kernel and is tried only
** when asked for. spmv_only: keep the candidate with the fastest SpMV
** kernel instead. */
odb_status pk_shape(pk_ws *w, const odb_krylov_gpu_opts *o, odb_krylov_gpu_info *info, int spmv_only) {
  int dev = 0, sms = 0, k = w->a.k, kc = w->fmt == PK_BDIA && !w->qmr && pk_kc(k);
  int grs[4], ng = 0, stv[4], ns = 0;
  ODB_CUDA_CHECK(cudaGetDevice(&dev));
  ODB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (w->fmt == PK_BDIA && o->grain > 1 && (!kc || !pk_grain_ok(k, o->grain)))
    return ODB_FAIL(ODB_ERR_ARG, "persistent: grain must be 1 (a row per thread), 2 or 4 (dividing k, "
                    "k in 2, 4, 8) or k = %d (a cell per thread, k in 2, 4, 8), got %d", k, o->grain);
  if ((o->stream > 0 || o->call > 0) && !kc)
    return ODB_FAIL(ODB_ERR_ARG, "persistent: %s needs Bdia BiCGStab with k in 2, 4, 8 (got %s, k = %d)",
                    o->stream > 0 ? "stream (evict-first value loads)" : "call (the SpMV as a called function)",
                    w->fmt == PK_BDIA ? "Bdia" : "CSR", k);
  if (o->grain > 0 && w->fmt == PK_BDIA) grs[ng++] = o->grain;
  else if (kc)
    for (int gr = 1; gr <= k; gr *= 2) grs[ng++] = gr;
  else grs[ng++] = 1;
  for (int sv = 0; sv < 2; sv++)                /* variants: bit 0 stream, bit 1 call */
    for (int cv = 0; cv < 2; cv++)
      if (kc && (o->stream == 0 || (o->stream > 0) == sv) && (o->call == 0 || (o->call > 0) == cv))
        stv[ns++] = sv | cv << 1;
  if (!kc) stv[ns++] = 0;
  double vbytes = w->fmt == PK_BDIA ? 7.0 * k * k * (double)w->a.M * sizeof(double) : 0.0;
  w->tuned = ng * ns > 1 && (o->tune > 0 || (o->tune == 0 && vbytes >= 64.0 * 1024 * 1024));
  if (!w->tuned) {
    grs[0] = o->grain > 0 && w->fmt == PK_BDIA ? o->grain : kc && k <= 4 && w->a.M >= (long)sms * w->block ? k : 1;
    stv[0] = kc ? (o->stream > 0) | (o->call > 0) << 1 : 0;
    ng = ns = 1;
  }
  odb_status last = ODB_OK;
  w->ncand = 0;
  w->gmax = 0;
  for (int i = 0; i < ng; i++)
    for (int j = 0; j < ns; j++) {
      pk_cand *c = &w->cand[w->ncand];
      if (w->tuned && o->grain == 0 && k == 8 && grs[i] == 8 && !(stv[j] & 2)) continue;
      w->gr = c->gr = grs[i];
      w->st = c->st = stv[j];
      last = pk_geom_of(w, o, &c->g);
      if (last != ODB_OK) {                    /* a grid asked for beyond this kernel's occupancy */
        if (info) info->max_grid = c->g.max_grid;
        continue;
      }
      if (c->g.grid > w->gmax) w->gmax = c->g.grid;
      w->ncand++;
    }
  if (w->ncand == 0) return last;
  if (w->ncand == 1) w->tuned = 0;
  if (spmv_only && w->ncand > 1) ODB_TRY(pk_tune_spmv(w));
  pk_take(w, 0);
  if (info) {
    info->max_grid = w->cand[0].g.max_grid;
    info->grain = w->fmt == PK_BDIA ? w->gr : 1;
    info->stream = w->st & 1;
    info->call = w->st >> 1 & 1;
    info->tuned = w->tuned;
  }
  return ODB_OK;
}

/* One launch of the solver kernel of w's current candidate from x0 (host)
** and state st0, the barrier state reset first; sec gets its seconds. A
** barrier that waited longer than the watchdog fails (ODB_ERR_BACKEND). */
static odb_status pk_launch(pk_ws *w, const double *x0, const kstate *st0, int hang,
                            const odb_krylov_gpu_opts *o, double *sec) {
  pk_args *a = &w->a;
  int G = w->gmax, X = w->qmr ? 10 : 2;
  unsigned long long err[4];
  ktimer t = {NULL, NULL};
  ODB_CUDA_CHECK(cudaMemcpy(a->g[X], x0, (size_t)a->n * sizeof *x0, cudaMemcpyHostToDevice));
  ODB_CUDA_CHECK(cudaMemset(a->count, 0, sizeof(unsigned long long)));
  ODB_CUDA_CHECK(cudaMemset(a->ain, 0, (size_t)G * sizeof(unsigned long long)));
  ODB_CUDA_CHECK(cudaMemset(a->aout, 0, (size_t)G * sizeof(unsigned long long)));
  ODB_CUDA_CHECK(cudaMemset(a->err, 0, 4 * sizeof(unsigned long long)));
  ODB_CUDA_CHECK(cudaMemset(a->part, 0, (size_t)2 * G * 4 * sizeof(double)));
  a->st0 = *st0;
  a->test_hang = hang;
  void *params[] = {a};
  odb_status st = timer_start(&t);
  if (st == ODB_OK) {
    cudaError_t e = cudaLaunchKernel(pk_kernel(w->qmr, 0, w->fmt, a->k, w->gr, w->st), dim3(w->grid),
                                     dim3(w->block), params, w->smem, 0);
    if (e != cudaSuccess) st = odb_cuda_fail(e, "cudaLaunchKernel(persistent Krylov kernel)", __FILE__, __LINE__);
  }
  if (st == ODB_OK) st = timer_stop(&t, sec);
  timer_free(&t);
  ODB_TRY(st);
  if (a->h.on) {   /* the next launch numbers its exchanges on from there */
    ODB_CUDA_CHECK(cudaMemcpy(&w->xchg, w->e_d, sizeof w->xchg, cudaMemcpyDeviceToHost));
    a->h.e0 = w->xchg;
  }
  ODB_CUDA_CHECK(cudaMemcpy(err, a->err, sizeof err, cudaMemcpyDeviceToHost));
  if (err[0] == 2)
    return ODB_FAIL(ODB_ERR_IO, "persistent BiCGStab on GPU ranks: another rank's GPU did not answer "
                    "within %.3g s (the link between the GPUs); the kernel stopped",
                    (double)a->timeout_ns * 1e-9);
  if (err[0])
    return ODB_FAIL(ODB_ERR_BACKEND, "persistent %s (%s barriers, grid %d x %d): barrier %llu at iteration "
                    "%llu waited longer than the %.3g s watchdog in block %llu; the kernel stopped",
                    w->qmr ? "QMR" : "BiCGStab", odb_krylov_sync_name(o->sync), w->grid, w->block,
                    err[1], err[3], o->watchdog_s > 0 ? o->watchdog_s : 10.0, err[2]);
  return ODB_OK;
}

enum { PK_TUNE_ITS = 3 };           /* iterations of a tuning run */

/* Runs every candidate for PK_TUNE_ITS iterations of the real solve (the
** kernel the solve will run, on its own co-resident shape; a warm-up run
** of the first) and keeps the fastest. */
static odb_status pk_tune_solve(pk_ws *w, const double *x0, const kstate *s0, const odb_krylov_gpu_opts *o) {
  kstate ts = *s0;
  double best = 0.0, sec = 0.0;
  int bc = 0;
  ts.maxit = ts.it + PK_TUNE_ITS;
  ts.tol = 0.0;
  ts.window = PK_TUNE_ITS + 1;
  pk_take(w, 0);
  ODB_TRY(pk_launch(w, x0, &ts, 0, o, &sec));
  for (int c = 0; c < w->ncand; c++) {
    pk_take(w, c);
    ODB_TRY(pk_launch(w, x0, &ts, 0, o, &sec));
    if (c == 0 || sec < best) { best = sec; bc = c; }
  }
  pk_take(w, bc);
  return ODB_OK;
}

/* The solve: shape (and tuning), upload, one launch, watchdog check, results. */
odb_status pk_run(pk_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         const odb_krylov_gpu_opts *o, kout *out, odb_krylov_gpu_info *info) {
  pk_args *a = &w->a;
  long n = A->n, ext = w->ext > n ? w->ext : n;
  int X = w->qmr ? 10 : 2;
  if (w->borrowed) {   /* CSR of order n on the device: a.rp, a.ci, a.va */
    a->n = n;
    a->k = 1;
    a->M = (int)n;
  } else {
    ODB_TRY(pk_upload(w, A));
  }
  ODB_TRY(pk_shape(w, o, info, 0));
  int G = w->gmax;
  for (int i = 0; i < w->nv; i++) ODB_TRY(dalloc(&a->g[i], (size_t)ext * sizeof(double), "Krylov vectors"));
  if (a->h.on) {
    ODB_TRY(dalloc(&w->e_d, sizeof(unsigned long long), "exchange count"));
    a->h.e_out = w->e_d;
  }
  ODB_TRY(dupload(&w->b, b, (size_t)n * sizeof *b, "right-hand side"));
  ODB_TRY(dalloc(&a->part, (size_t)2 * G * 4 * sizeof(double), "barrier partials"));
  ODB_TRY(dalloc(&a->pub, 8 * sizeof(double), "barrier sums"));
  ODB_TRY(dalloc(&a->count, sizeof(unsigned long long), "barrier counter"));
  ODB_TRY(dalloc(&a->ain, (size_t)G * sizeof(unsigned long long), "barrier flags"));
  ODB_TRY(dalloc(&a->aout, (size_t)G * sizeof(unsigned long long), "barrier flags"));
  ODB_TRY(dalloc(&a->err, 4 * sizeof(unsigned long long), "watchdog flag"));
  ODB_TRY(dalloc(&w->st_d, sizeof(kstate), "solver state"));
  int hmax = out->st.maxit > PK_TUNE_ITS ? out->st.maxit : PK_TUNE_ITS;
  ODB_TRY(dalloc(&a->hist, (size_t)(hmax + 2) * sizeof(double), "residual history"));
  a->b = w->b;
  a->st_out = w->st_d;
  a->sync = o->sync;
  a->delay_ns = o->delay_ns;
  a->timeout_ns = (unsigned long long)((o->watchdog_s > 0 ? o->watchdog_s : 10.0) * 1e9);
  if (w->ncand > 1) ODB_TRY(pk_tune_solve(w, x, &out->st, o));
  if (w->before) ODB_TRY(w->before(w->ctx));
  ODB_TRY(pk_launch(w, x, &out->st, o->test_hang, o, &out->seconds));
  ODB_CUDA_CHECK(cudaMemcpy(&out->st, w->st_d, sizeof(kstate), cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(out->hist, a->hist, (size_t)out->st.nhist * sizeof(double), cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(x, a->g[X], (size_t)n * sizeof *x, cudaMemcpyDeviceToHost));
  if (w->ranks > 1) {
    out->rtrue = nan("");   /* the caller's distributed SpMV */
  } else {
    ODB_TRY(dalloc(&w->y, (size_t)n * sizeof(double), "residual"));
    ODB_TRY(red_alloc(&w->red, n, sm_count()));
    ODB_TRY(pk_spmv_launch(w, a->g[X], w->y));
    ODB_TRY(diff_norm(&w->red, n, w->b, w->y, &out->rtrue));
  }
  if (info) {
    for (int c = 0; c < w->ncand; c++)
      if (w->cand[c].gr == w->gr && w->cand[c].st == w->st) info->max_grid = w->cand[c].g.max_grid;
    info->grain = w->fmt == PK_BDIA ? w->gr : 1;
    info->stream = w->st & 1;
    info->call = w->st >> 1 & 1;
    info->tuned = w->tuned;
    info->grid = w->grid; info->block = w->block; info->rv_shared = a->rv;
    info->shared_bytes = w->smem; info->barriers_per_iter = w->qmr ? 3 : 5;
  }
  (void)m;
  return ODB_OK;
}

/* }====== */
