/* odb_krylov_gpu.cu - BiCGStab and QMR on the GPU: library calls
** (cuSPARSE + cuBLAS), fused vector kernels over our SpMV, and the seed's
** persistent in-kernel solver with inter-block barriers (seeds/001
** 6.3-6.4). See odb_krylov_gpu.h for what each form does.
**
** All three run one scalar state machine (kstate below, host and device)
** that mirrors core/sparse/krylov.c step by step: the same recurrences,
** the same breakdown tests (rho, omega, QMR's delta/eps/gamma), the same
** stagnation window and maxit, the same history. Only the order of the
** floating-point sums differs, so iteration counts agree with the CPU up
** to rounding.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cusparse.h>

#include "odb_cuda_check.h"
#include "odb_gpulib_check.h"
extern "C" {
#include "odb_clock.h"
#include "odb_measure.h"
}
#include "odb_krylov_gpu.h"
#include "odb_sparse_gpu.h"

#define HD __host__ __device__

enum { KS_RUN = -1 };
enum { FB = 256 };                 /* threads per block of the fused kernels */
enum { PK_LANES = 4 };             /* threads per CSR row in the persistent kernel */
enum { PK_CSR = 0, PK_BDIA = 1 };

/* {====== the scalar state machine (mirrors krylov.c) */

/* Everything the recurrences carry between reductions. */
typedef struct kstate {
  double bn, rhn, tol;             /* ||b|| (1 if 0), ||rhat||, tolerance */
  int maxit, window;
  int it, outcome, bditer, half, nhist, since;
  double rel, best;
  /* BiCGStab */
  double rho, rho_old, alpha, omega, beta, rnorm, snorm;
  /* QMR */
  double qrho, xi, gamma_old, eta, eps, eps_old, theta_old, delta, cp, cq, qbeta, c, wv;
} kstate;

/* The CPU's breakdown test: |v| tiny relative to the scale of its factors. */
HD static inline int ks_tiny(double v, double scale) {
  return !(fabs(v) > 1e-300) || fabs(v) <= 1e-15 * scale;
}

/* hist NULL: count only (blocks other than the recording one). */
HD static inline void ks_push(kstate *s, double *hist, double rel) {
  if (hist) hist[s->nhist] = rel;
  s->nhist++;
  s->rel = rel;
}

/* Stops with outcome o at the current iteration. */
HD static inline void ks_break(kstate *s, int o) {
  s->outcome = o;
  s->bditer = s->it;
}

/* After an iteration's residual: converged, non-finite, stagnated, out of
** iterations (the CPU's order); 1 when the solve stops. */
HD static inline int ks_judge(kstate *s, double rel) {
  if (rel <= s->tol) { s->outcome = ODB_KRY_CONVERGED; return 1; }
  if (!isfinite(rel)) { ks_break(s, ODB_KRY_BREAKDOWN_OTHER); return 1; }
  if (rel < 0.99 * s->best) { s->best = rel; s->since = 0; }
  else if (++s->since >= s->window) { s->outcome = ODB_KRY_STAGNATED; return 1; }
  if (s->it >= s->maxit) { s->outcome = ODB_KRY_MAXIT; return 1; }
  return 0;
}

/* The first residual: history[0], the best so far, convergence at 0. */
HD static inline int ks_first(kstate *s, double *hist, double rnorm) {
  double rel = rnorm / s->bn;
  ks_push(s, hist, rel);
  s->best = rel;
  s->since = 0;
  if (rel <= s->tol) { s->outcome = ODB_KRY_CONVERGED; return 1; }
  return 0;
}

/* BiCGStab, iteration start: rho = rhat.r known. */
HD static inline void bicg_begin(kstate *s) {
  s->it++;
  if (ks_tiny(s->rho, s->rhn * s->rnorm)) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  s->beta = (s->rho / s->rho_old) * (s->alpha / s->omega);
}

/* rr = r.r of r = b - A x0; rhat = r0, so rhat.r = rr. */
HD static inline void bicg_init(kstate *s, double *hist, double rr) {
  s->rnorm = s->rhn = sqrt(rr);
  if (ks_first(s, hist, s->rnorm)) return;
  s->rho = rr;
  s->rho_old = s->alpha = s->omega = 1.0;
  bicg_begin(s);
}

/* v = A p: rhv = rhat.v, vv = v.v. */
HD static inline void bicg_after_v(kstate *s, double rhv, double vv) {
  if (ks_tiny(rhv, s->rhn * sqrt(vv))) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  s->alpha = s->rho / rhv;
}

/* s = r - alpha v: ss = s.s; converged on s sets half (x += alpha p). */
HD static inline void bicg_after_s(kstate *s, double *hist, double ss) {
  s->snorm = sqrt(ss);
  double sn = s->snorm / s->bn;
  if (sn <= s->tol) {
    s->half = 1;
    ks_push(s, hist, sn);
    s->outcome = ODB_KRY_CONVERGED;
  }
}

/* t = A s: tt = t.t, ts = t.s. */
HD static inline void bicg_after_t(kstate *s, double tt, double ts) {
  if (tt == 0.0 || ks_tiny(ts, sqrt(tt) * s->snorm)) { ks_break(s, ODB_KRY_BREAKDOWN_OMEGA); return; }
  s->omega = ts / tt;
}

/* x, r updated: rr = r.r, rhr = rhat.r (the next rho). */
HD static inline void bicg_end(kstate *s, double *hist, double rr, double rhr) {
  s->rho_old = s->rho;
  double rel = sqrt(rr) / s->bn;
  ks_push(s, hist, rel);
  if (ks_judge(s, rel)) return;
  s->rho = rhr;
  s->rnorm = sqrt(rr);
  bicg_begin(s);
}

/* QMR: delta = w.v of the scaled vectors and the coefficients of p and q. */
HD static inline void qmr_peek(kstate *s) {
  s->delta = s->wv / (s->qrho * s->xi);
  s->cp = s->xi * s->delta / s->eps_old;
  s->cq = s->qrho * s->delta / s->eps_old;
}

/* QMR, iteration start (the CPU's checks on rho, xi and delta). */
HD static inline void qmr_begin(kstate *s) {
  s->it++;
  if (s->qrho == 0.0 || s->xi == 0.0) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  if (ks_tiny(s->delta, 1.0)) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  if (s->it == 1) s->cp = s->cq = 0.0;       /* p = v, q = w */
}

/* rr = r.r of r = b - A x0 (= vt.vt = wt.wt = wt.vt). */
HD static inline void qmr_init(kstate *s, double *hist, double rr) {
  s->qrho = s->xi = sqrt(rr);
  if (ks_first(s, hist, s->qrho)) return;
  s->gamma_old = 1.0; s->eta = -1.0; s->eps_old = 1.0; s->theta_old = 0.0;
  s->wv = rr;
  qmr_peek(s);
  qmr_begin(s);
}

/* pt = A p: qpt = q.pt, qq = q.q, ptpt = pt.pt. */
HD static inline void qmr_after_pt(kstate *s, double qpt, double qq, double ptpt) {
  if (ks_tiny(qpt, sqrt(qq) * sqrt(ptpt))) { ks_break(s, ODB_KRY_BREAKDOWN_OTHER); return; }
  s->eps = qpt;
  s->qbeta = qpt / s->delta;
}

/* vt, wt updated: vv, ww, wv = wt.vt; the next delta, cp, cq peeked. */
HD static inline void qmr_after_vw(kstate *s, double vv, double ww, double wv) {
  double rho_new = sqrt(vv), xi_new = sqrt(ww);
  double theta = rho_new / (s->gamma_old * fabs(s->qbeta));
  double gamma = 1.0 / sqrt(1.0 + theta * theta);
  if (gamma == 0.0) { ks_break(s, ODB_KRY_BREAKDOWN_OTHER); return; }
  s->eta = -s->eta * s->qrho * gamma * gamma / (s->qbeta * s->gamma_old * s->gamma_old);
  s->c = s->it == 1 ? 0.0 : (s->theta_old * gamma) * (s->theta_old * gamma);
  s->qrho = rho_new; s->xi = xi_new; s->gamma_old = gamma; s->theta_old = theta;
  s->eps_old = s->eps; s->wv = wv;
  qmr_peek(s);
}

/* x, r updated: rr = r.r. */
HD static inline void qmr_end(kstate *s, double *hist, double rr) {
  double rel = sqrt(rr) / s->bn;
  ks_push(s, hist, rel);
  if (ks_judge(s, rel)) return;
  qmr_begin(s);
}

/* }====== */

/* {====== device helpers: reductions, ordered atomics, timer */

/* Sums v[0..nr) over the block (blockDim a multiple of 32); thread 0 gets
** the sums in v. red: shared, 96 doubles. Fixed order: deterministic.
** Every thread must call it; it ends with a barrier. */
__device__ static void block_sum(double *v, int nr, double *red) {
  int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nwarp = blockDim.x >> 5;
  for (int j = 0; j < nr; j++)
    for (int o = 16; o > 0; o >>= 1) v[j] += __shfl_down_sync(0xffffffffu, v[j], o);
  if (lane == 0)
    for (int j = 0; j < nr; j++) red[wid * 3 + j] = v[j];
  __syncthreads();
  if (wid == 0) {
    for (int j = 0; j < nr; j++) {
      v[j] = lane < nwarp ? red[lane * 3 + j] : 0.0;
      for (int o = 16; o > 0; o >>= 1) v[j] += __shfl_down_sync(0xffffffffu, v[j], o);
    }
  }
  __syncthreads();
}

/* Grid-wide sum of v[0..nr) by the last block to finish (ticket counter,
** reset for the next kernel). Returns 1 in the last block only, where
** thread 0 holds the sums in v; the partials are summed in block order. */
__device__ static int red_last(double *v, int nr, double *part, unsigned *ticket, double *red) {
  __shared__ int last;
  block_sum(v, nr, red);
  if (threadIdx.x == 0) {
    for (int j = 0; j < nr; j++) part[(size_t)blockIdx.x * 4 + j] = v[j];
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return 0;
  __threadfence();
  double w[3] = {0.0, 0.0, 0.0};
  for (int i = threadIdx.x; i < (int)gridDim.x; i += blockDim.x)
    for (int j = 0; j < nr; j++) w[j] += __ldcg(&part[(size_t)i * 4 + j]);
  block_sum(w, nr, red);
  if (threadIdx.x == 0) {
    for (int j = 0; j < nr; j++) v[j] = w[j];
    *ticket = 0;
  }
  return 1;
}

__device__ static inline unsigned long long ld_acquire(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ static inline void st_release(unsigned long long *p, unsigned long long v) {
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ static inline void add_release(unsigned long long *p, unsigned long long v) {
  asm volatile("red.release.gpu.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ static inline unsigned long long gtimer(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

#define GSTRIDE(i, n) \
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

/* }====== */

/* {====== fused vector kernels (state on the device, host polls) */

/* r = b - r (r holds A x0), rhat = r, p = v = 0; r.r -> bicg_init. */
__global__ void fb_init(long n, const double *b, double *r, double *rh, double *p, double *v,
                        kstate *st, double *hist, double *part, unsigned *ticket) {
  __shared__ double red[96];
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double ri = b[i] - r[i];
    r[i] = ri; rh[i] = ri; p[i] = 0.0; v[i] = 0.0;
    a[0] += ri * ri;
  }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) bicg_init(st, hist, a[0]);
}

/* p = r + beta (p - omega v). */
__global__ void fb_p(long n, const kstate *st, const double *r, double *p, const double *v) {
  if (st->outcome != KS_RUN) return;
  double beta = st->beta, om = st->omega;
  GSTRIDE(i, n) p[i] = r[i] + beta * (p[i] - om * v[i]);
}

/* rhat.v and v.v -> alpha. */
__global__ void fb_v(long n, kstate *st, const double *rh, const double *v, double *part, unsigned *ticket) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { a[0] += rh[i] * v[i]; a[1] += v[i] * v[i]; }
  if (red_last(a, 2, part, ticket, red) && threadIdx.x == 0) bicg_after_v(st, a[0], a[1]);
}

/* s = r - alpha v and s.s. */
__global__ void fb_s(long n, kstate *st, double *hist, const double *r, const double *v, double *s,
                     double *part, unsigned *ticket) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double alpha = st->alpha, a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { double si = r[i] - alpha * v[i]; s[i] = si; a[0] += si * si; }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) bicg_after_s(st, hist, a[0]);
}

/* t.t and t.s -> omega. */
__global__ void fb_t(long n, kstate *st, const double *t, const double *s, double *part, unsigned *ticket) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { a[0] += t[i] * t[i]; a[1] += t[i] * s[i]; }
  if (red_last(a, 2, part, ticket, red) && threadIdx.x == 0) bicg_after_t(st, a[0], a[1]);
}

/* x += alpha p + omega s, r = s - omega t, r.r and rhat.r -> next rho;
** or, converged on s (half == 1), x += alpha p once. */
__global__ void fb_xr(long n, kstate *st, double *hist, double *x, const double *p, const double *s,
                      const double *t, double *r, const double *rh, double *part, unsigned *ticket) {
  __shared__ double red[96];
  int half = st->half;
  if (st->outcome != KS_RUN && half != 1) return;
  double alpha = st->alpha, om = st->omega, a[3] = {0.0, 0.0, 0.0};
  if (half == 1) {
    GSTRIDE(i, n) x[i] += alpha * p[i];
    if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) st->half = 2;
    return;
  }
  GSTRIDE(i, n) {
    double ri = s[i] - om * t[i];
    x[i] += alpha * p[i] + om * s[i];
    r[i] = ri;
    a[0] += ri * ri; a[1] += rh[i] * ri;
  }
  if (red_last(a, 2, part, ticket, red) && threadIdx.x == 0) bicg_end(st, hist, a[0], a[1]);
}

/* QMR: r = b - r, vt = wt = r, p = q = d = s = 0; r.r -> qmr_init. */
__global__ void fq_init(long n, const double *b, double *r, double *vt, double *wt, double *p, double *q,
                        double *d, double *s, kstate *st, double *hist, double *part, unsigned *ticket) {
  __shared__ double red[96];
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double ri = b[i] - r[i];
    r[i] = ri; vt[i] = ri; wt[i] = ri;
    p[i] = q[i] = d[i] = s[i] = 0.0;
    a[0] += ri * ri;
  }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) qmr_init(st, hist, a[0]);
}

/* v = vt / rho, w = wt / xi, p = v - cp p, q = w - cq q. */
__global__ void fq_pq(long n, const kstate *st, const double *vt, const double *wt, double *v, double *w,
                      double *p, double *q) {
  if (st->outcome != KS_RUN) return;
  double rho = st->qrho, xi = st->xi, cp = st->cp, cq = st->cq;
  GSTRIDE(i, n) {
    double vi = vt[i] / rho, wi = wt[i] / xi;
    v[i] = vi; w[i] = wi;
    p[i] = vi - cp * p[i];
    q[i] = wi - cq * q[i];
  }
}

/* q.pt, q.q, pt.pt -> eps, beta. */
__global__ void fq_pt(long n, kstate *st, const double *q, const double *pt, double *part, unsigned *ticket) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { a[0] += q[i] * pt[i]; a[1] += q[i] * q[i]; a[2] += pt[i] * pt[i]; }
  if (red_last(a, 3, part, ticket, red) && threadIdx.x == 0) qmr_after_pt(st, a[0], a[1], a[2]);
}

/* vt = pt - beta v, wt = A^T q - beta w; vt.vt, wt.wt, wt.vt. */
__global__ void fq_vw(long n, kstate *st, const double *pt, const double *v, const double *atq,
                      const double *w, double *vt, double *wt, double *part, unsigned *ticket) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double beta = st->qbeta, a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double vti = pt[i] - beta * v[i], wti = atq[i] - beta * w[i];
    vt[i] = vti; wt[i] = wti;
    a[0] += vti * vti; a[1] += wti * wti; a[2] += wti * vti;
  }
  if (red_last(a, 3, part, ticket, red) && threadIdx.x == 0) qmr_after_vw(st, a[0], a[1], a[2]);
}

/* d = eta p + c d, s = eta pt + c s, x += d, r -= s; r.r. */
__global__ void fq_upd(long n, kstate *st, double *hist, const double *p, const double *pt, double *d,
                       double *s, double *x, double *r, double *part, unsigned *ticket) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double eta = st->eta, c = st->c, a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double di = eta * p[i] + c * d[i], si = eta * pt[i] + c * s[i];
    d[i] = di; s[i] = si;
    x[i] += di;
    double ri = r[i] - si;
    r[i] = ri;
    a[0] += ri * ri;
  }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) qmr_end(st, hist, a[0]);
}

/* out[0] = ||b - y||^2. */
__global__ void k_diffnorm(long n, const double *b, const double *y, double *part, unsigned *ticket,
                           double *out) {
  __shared__ double red[96];
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { double d = b[i] - y[i]; a[0] += d * d; }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0) out[0] = a[0];
}

/* }====== */

/* {====== the persistent kernel */

/* Everything the persistent kernel reads; passed by value. */
typedef struct pk_args {
  long n;
  int sync, rv, delay_ns, test_hang, Lmax;
  unsigned long long timeout_ns;
  /* CSR of A and (QMR) of A^T */
  const int64_t *rp; const int32_t *ci; const double *va;
  const int64_t *trp; const int32_t *tci; const double *tva;
  /* Bdia (odb_bdia layout) and the column -> well map */
  int k, J, H, half, nw, M;
  const double *bv, *Wa, *WTa, *D;
  const int *wa, *wb, *wc, *colwell;
  const double *b;
  double *g[12];                   /* global vectors, n each */
  double *part, *pub;              /* partial sums [2][grid][4]; block 0's sums [2][4] */
  unsigned long long *count, *ain, *aout, *err;
  kstate *st_out;
  double *hist;
  kstate st0;
} pk_args;

/* Rows [r0, r1) of block blk of G: CSR contiguous rows; Bdia the cells
** [c0, c1) (rows c0 k .. c1 k), the last block also the nw well rows. */
HD static inline void pk_range(int fmt, long n, int M, int k, int blk, int G, int *r0, int *r1,
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
** come through L1 once for all its rows (the old row-major order re-read
** them from L2 k times), and each x word a thread loads serves GR rows.
** Consecutive threads read consecutive value words (seed 6.1); the W^T
** term goes to row 0 of well cells (6.2). ST: evict-first value loads.
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

/* Spins until *p >= target; the watchdog (global timer) or another block's
** failure ends it with 0. One thread. */
__device__ static int pk_spin(const pk_args &a, const unsigned long long *p, unsigned long long target,
                              unsigned long long ep, int it) {
  unsigned long long t0 = gtimer();
  unsigned n = 0;
  while (ld_acquire(p) < target) {
    if ((++n & 63) == 0) {
      if (ld_acquire(a.err) != 0) return 0;
      if (gtimer() - t0 > a.timeout_ns) {
        if (atomicCAS(a.err, 0ull, 1ull) == 0ull) {
          a.err[1] = ep; a.err[2] = blockIdx.x; a.err[3] = (unsigned long long)it;
          __threadfence();
        }
        return 0;
      }
    }
    if (a.sync == ODB_KRY_SYNC_WSS) __nanosleep(32);
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
  unsigned long long ep = 0;
  double acc[3] = {0.0, 0.0, 0.0};
  if (threadIdx.x == 0) { st = a.st0; fail = 0; }
  __syncthreads();

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
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.st_out = st;
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

/* {====== host: common pieces */

/* Device allocation; out of memory names the size and what it was for. */
static odb_status dalloc(void *pp, size_t bytes, const char *what) {
  void **p = (void **)pp;
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 8);
  if (e == cudaSuccess) return ODB_OK;
  *p = NULL;
  (void)cudaGetLastError();
  if (e == cudaErrorMemoryAllocation)
    return ODB_FAIL(ODB_ERR_NOMEM, "Krylov GPU: no room for %s (%zu bytes)", what, bytes);
  return odb_cuda_fail(e, "cudaMalloc", __FILE__, __LINE__);
}

/* Host -> new device copy. */
static odb_status dupload(void *pp, const void *src, size_t bytes, const char *what) {
  ODB_TRY(dalloc(pp, bytes, what));
  ODB_CUDA_CHECK(cudaMemcpy(*(void **)pp, src, bytes, cudaMemcpyHostToDevice));
  return ODB_OK;
}

static void dfree(void *p) {
  if (p && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

/* Fresh state: constants set, nothing done. */
static kstate ks_new(double bn, const odb_krylov_opts *o) {
  kstate s;
  memset(&s, 0, sizeof s);
  s.bn = bn; s.tol = o->tol; s.maxit = o->maxit; s.window = o->stag_window;
  s.outcome = KS_RUN; s.bditer = -1;
  return s;
}

/* Reduction scratch of the fused kernels and the true residual. */
typedef struct red_scratch {
  int grid;
  double *part, *out;
  unsigned *ticket;
} red_scratch;

static odb_status red_alloc(red_scratch *r, long n, int sms) {
  long g = (n + FB - 1) / FB;
  r->grid = (int)(g < 4L * sms ? (g > 0 ? g : 1) : 4L * sms);
  ODB_TRY(dalloc(&r->part, (size_t)r->grid * 4 * sizeof(double), "reduction partials"));
  ODB_TRY(dalloc(&r->out, 4 * sizeof(double), "reduction result"));
  ODB_TRY(dalloc(&r->ticket, sizeof(unsigned), "reduction ticket"));
  ODB_CUDA_CHECK(cudaMemset(r->ticket, 0, sizeof(unsigned)));
  return ODB_OK;
}

static void red_free(red_scratch *r) {
  dfree(r->part); dfree(r->out); dfree(r->ticket);
  memset(r, 0, sizeof *r);
}

/* ||b - y|| for device vectors (waits). */
static odb_status diff_norm(red_scratch *r, long n, const double *b, const double *y, double *out) {
  double s;
  k_diffnorm<<<r->grid, FB>>>(n, b, y, r->part, r->ticket, r->out);
  ODB_CUDA_CHECK(cudaGetLastError());
  ODB_CUDA_CHECK(cudaMemcpy(&s, r->out, sizeof s, cudaMemcpyDeviceToHost));
  *out = sqrt(s);
  return ODB_OK;
}

static int sm_count(void) {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  return sms;
}

/* CSR of A^T (A CSR), built on the host by odb_sparse_transpose. */
static odb_status csr_transpose(const odb_sparse *A, odb_sparse **out) {
  return odb_sparse_transpose(A, out);
}

/* Events around a solve. */
typedef struct ktimer { cudaEvent_t a, b; } ktimer;

static odb_status timer_start(ktimer *t) {
  ODB_CUDA_CHECK(cudaEventCreate(&t->a));
  ODB_CUDA_CHECK(cudaEventCreate(&t->b));
  ODB_CUDA_CHECK(cudaEventRecord(t->a, 0));
  return ODB_OK;
}

static odb_status timer_stop(ktimer *t, double *seconds) {
  float ms = 0.0f;
  ODB_CUDA_CHECK(cudaEventRecord(t->b, 0));
  ODB_CUDA_CHECK(cudaEventSynchronize(t->b));
  ODB_CUDA_CHECK(cudaEventElapsedTime(&ms, t->a, t->b));
  *seconds = 1e-3 * ms;
  return ODB_OK;
}

static void timer_free(ktimer *t) {
  if (t->a) cudaEventDestroy(t->a);
  if (t->b) cudaEventDestroy(t->b);
  t->a = t->b = NULL;
}

/* What every impl hands back to the dispatcher. */
typedef struct kout {
  kstate st;
  double *hist;          /* host, maxit + 2 */
  double seconds, rtrue; /* solve time; ||b - A x|| */
} kout;

/* }====== */

/* {====== impl "cusparse": one library call per operation */

typedef struct cs_ws {
  long n;
  cublasHandle_t blas;
  cusparseHandle_t sp;
  cusparseSpMatDescr_t mat;
  int32_t *rp; int32_t *col; double *val;
  double *v[14];                 /* device vectors */
  cusparseDnVecDescr_t dv[14];
  void *buf;
  double *dots;                  /* device results of the dots of one step */
  red_scratch red;
} cs_ws;

#define BL(call) ODB_CUBLAS_CHECK(call)
#define SP(call) ODB_CUSPARSE_CHECK(call)

static void cs_free(cs_ws *w) {
  for (int i = 0; i < 14; i++) {
    if (w->dv[i]) cusparseDestroyDnVec(w->dv[i]);
    dfree(w->v[i]);
  }
  if (w->mat) cusparseDestroySpMat(w->mat);
  if (w->sp) cusparseDestroy(w->sp);
  if (w->blas) cublasDestroy(w->blas);
  dfree(w->rp); dfree(w->col); dfree(w->val); dfree(w->buf); dfree(w->dots);
  red_free(&w->red);
  memset(w, 0, sizeof *w);
}

/* CSR with 32-bit indices on the device, nv vectors with descriptors, the
** SpMV work buffer (for A^T too when trans). */
static odb_status cs_setup(cs_ws *w, const odb_sparse *A, int nv, int trans) {
  long n = A->n, nnz = A->rowptr[n];
  size_t bsz = 0, bsz2 = 0;
  double one = 1.0, zero = 0.0;
  if (n >= INT32_MAX || nnz >= INT32_MAX)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "impl cusparse: order %ld / %ld nonzeros need 64-bit indices", n, nnz);
  w->n = n;
  int32_t *rp32 = (int32_t *)malloc(((size_t)n + 1) * sizeof *rp32);
  if (!rp32) return ODB_FAIL(ODB_ERR_NOMEM, "row pointers of order %ld", n);
  for (long i = 0; i <= n; i++) rp32[i] = (int32_t)A->rowptr[i];
  odb_status st = dupload(&w->rp, rp32, ((size_t)n + 1) * sizeof *rp32, "CSR row pointers");
  free(rp32);
  ODB_TRY(st);
  ODB_TRY(dupload(&w->col, A->col, (size_t)(nnz ? nnz : 1) * sizeof(int32_t), "CSR columns"));
  ODB_TRY(dupload(&w->val, A->val, (size_t)(nnz ? nnz : 1) * sizeof(double), "CSR values"));
  BL(cublasCreate(&w->blas));
  SP(cusparseCreate(&w->sp));
  SP(cusparseCreateCsr(&w->mat, n, n, nnz, w->rp, w->col, w->val, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  for (int i = 0; i < nv; i++) {
    ODB_TRY(dalloc(&w->v[i], (size_t)n * sizeof(double), "Krylov vectors"));
    ODB_CUDA_CHECK(cudaMemset(w->v[i], 0, (size_t)n * sizeof(double)));
    SP(cusparseCreateDnVec(&w->dv[i], n, w->v[i], CUDA_R_64F));
  }
  SP(cusparseSpMV_bufferSize(w->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, w->mat, w->dv[0], &zero,
                             w->dv[1], CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bsz));
  if (trans)
    SP(cusparseSpMV_bufferSize(w->sp, CUSPARSE_OPERATION_TRANSPOSE, &one, w->mat, w->dv[0], &zero,
                               w->dv[1], CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bsz2));
  ODB_TRY(dalloc(&w->buf, bsz > bsz2 ? bsz : bsz2, "cuSPARSE SpMV buffer"));
  ODB_TRY(dalloc(&w->dots, 4 * sizeof(double), "dot results"));
  ODB_TRY(red_alloc(&w->red, n, sm_count()));
  return ODB_OK;
}

/* v[y] = op(A) v[x]. */
static odb_status cs_spmv(cs_ws *w, int trans, int x, int y) {
  double one = 1.0, zero = 0.0;
  SP(cusparseSpMV(w->sp, trans ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                  w->mat, w->dv[x], &zero, w->dv[y], CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, w->buf));
  return ODB_OK;
}

/* v[r] = v[b] - A v[x]. */
static odb_status cs_residual(cs_ws *w, int b, int x, int r) {
  double m1 = -1.0, one = 1.0;
  ODB_TRY(cs_spmv(w, 0, x, r));
  BL(cublasDscal(w->blas, (int)w->n, &m1, w->v[r], 1));
  BL(cublasDaxpy(w->blas, (int)w->n, &one, w->v[b], 1, w->v[r], 1));
  return ODB_OK;
}

/* The nd dot products v[p[2j]].v[p[2j+1]] of one step: one cuBLAS call
** each (device pointer mode), then one copy to the host that waits. */
static odb_status cs_dots(cs_ws *w, int nd, const int *p, double *out) {
  BL(cublasSetPointerMode(w->blas, CUBLAS_POINTER_MODE_DEVICE));
  for (int j = 0; j < nd; j++) {
    cublasStatus_t s = cublasDdot(w->blas, (int)w->n, w->v[p[2 * j]], 1, w->v[p[2 * j + 1]], 1, w->dots + j);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasSetPointerMode(w->blas, CUBLAS_POINTER_MODE_HOST);
      return ODB_CUBLAS_STATUS(s, "cublasDdot");
    }
  }
  BL(cublasSetPointerMode(w->blas, CUBLAS_POINTER_MODE_HOST));
  ODB_CUDA_CHECK(cudaMemcpy(out, w->dots, (size_t)nd * sizeof *out, cudaMemcpyDeviceToHost));
  return ODB_OK;
}

/* One dot product (waits). */
static odb_status cs_dot(cs_ws *w, int a, int b, double *out) {
  int p[2] = {a, b};
  return cs_dots(w, 1, p, out);
}

/* Two dot products (one wait). */
static odb_status cs_dot2(cs_ws *w, int a, int b, int c, int d, double *o1, double *o2) {
  int p[4] = {a, b, c, d};
  double o[2];
  ODB_TRY(cs_dots(w, 2, p, o));
  *o1 = o[0]; *o2 = o[1];
  return ODB_OK;
}

/* Three dot products (one wait). */
static odb_status cs_dot3(cs_ws *w, const int *p, double *o1, double *o2, double *o3) {
  double o[3];
  ODB_TRY(cs_dots(w, 3, p, o));
  *o1 = o[0]; *o2 = o[1]; *o3 = o[2];
  return ODB_OK;
}

/* v[y] += alpha v[x]. */
static odb_status cs_axpy(cs_ws *w, double alpha, int x, int y) {
  BL(cublasDaxpy(w->blas, (int)w->n, &alpha, w->v[x], 1, w->v[y], 1));
  return ODB_OK;
}

static odb_status cs_scal(cs_ws *w, double alpha, int x) {
  BL(cublasDscal(w->blas, (int)w->n, &alpha, w->v[x], 1));
  return ODB_OK;
}

static odb_status cs_copy(cs_ws *w, int x, int y) {
  BL(cublasDcopy(w->blas, (int)w->n, w->v[x], 1, w->v[y], 1));
  return ODB_OK;
}

/* BiCGStab by library calls. Vectors: 0 r, 1 rhat, 2 p, 3 v, 4 s, 5 t, 6 x,
** 7 b. The dots that one step needs go out together and are read back
** with one wait (4 waits per iteration). */
static odb_status cs_bicg(cs_ws *w, kstate *s, double *hist) {
  enum { R, RH, P, V, S, T, X, B };
  double rr, rhr, rhv, vv, ss, tt, ts;
  ODB_TRY(cs_residual(w, B, X, R));
  ODB_TRY(cs_copy(w, R, RH));
  ODB_TRY(cs_dot(w, R, R, &rr));
  bicg_init(s, hist, rr);
  while (s->outcome == KS_RUN) {
    ODB_TRY(cs_axpy(w, -s->omega, V, P));
    ODB_TRY(cs_scal(w, s->beta, P));
    ODB_TRY(cs_axpy(w, 1.0, R, P));
    ODB_TRY(cs_spmv(w, 0, P, V));
    ODB_TRY(cs_dot2(w, RH, V, V, V, &rhv, &vv));
    bicg_after_v(s, rhv, vv);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_copy(w, R, S));
    ODB_TRY(cs_axpy(w, -s->alpha, V, S));
    ODB_TRY(cs_dot(w, S, S, &ss));
    bicg_after_s(s, hist, ss);
    if (s->half) { ODB_TRY(cs_axpy(w, s->alpha, P, X)); break; }
    ODB_TRY(cs_spmv(w, 0, S, T));
    ODB_TRY(cs_dot2(w, T, T, T, S, &tt, &ts));
    bicg_after_t(s, tt, ts);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_axpy(w, s->alpha, P, X));
    ODB_TRY(cs_axpy(w, s->omega, S, X));
    ODB_TRY(cs_copy(w, S, R));
    ODB_TRY(cs_axpy(w, -s->omega, T, R));
    ODB_TRY(cs_dot2(w, R, R, RH, R, &rr, &rhr));
    bicg_end(s, hist, rr, rhr);
  }
  return ODB_OK;
}

/* QMR by library calls, A^T x through the transpose op. Vectors: 0 r,
** 1 vt, 2 wt, 3 v, 4 w, 5 p, 6 q, 7 pt, 8 d, 9 s, 10 x, 11 b. */
static odb_status cs_qmr(cs_ws *w, kstate *s, double *hist) {
  enum { R, VT, WT, V, W, P, Q, PT, D, S, X, B };
  double rr, qpt, qq, ptpt, vv, ww, wv;
  ODB_TRY(cs_residual(w, B, X, R));
  ODB_TRY(cs_copy(w, R, VT));
  ODB_TRY(cs_copy(w, R, WT));
  ODB_TRY(cs_dot(w, R, R, &rr));
  qmr_init(s, hist, rr);
  while (s->outcome == KS_RUN) {
    ODB_TRY(cs_copy(w, VT, V));
    ODB_TRY(cs_scal(w, 1.0 / s->qrho, V));
    ODB_TRY(cs_copy(w, WT, W));
    ODB_TRY(cs_scal(w, 1.0 / s->xi, W));
    ODB_TRY(cs_scal(w, -s->cp, P));
    ODB_TRY(cs_axpy(w, 1.0, V, P));
    ODB_TRY(cs_scal(w, -s->cq, Q));
    ODB_TRY(cs_axpy(w, 1.0, W, Q));
    ODB_TRY(cs_spmv(w, 0, P, PT));
    {
      const int p3[6] = {Q, PT, Q, Q, PT, PT};
      ODB_TRY(cs_dot3(w, p3, &qpt, &qq, &ptpt));
    }
    qmr_after_pt(s, qpt, qq, ptpt);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_copy(w, PT, VT));
    ODB_TRY(cs_axpy(w, -s->qbeta, V, VT));
    ODB_TRY(cs_spmv(w, 1, Q, WT));
    ODB_TRY(cs_axpy(w, -s->qbeta, W, WT));
    {
      const int p3[6] = {VT, VT, WT, WT, WT, VT};
      ODB_TRY(cs_dot3(w, p3, &vv, &ww, &wv));
    }
    qmr_after_vw(s, vv, ww, wv);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_scal(w, s->c, D));
    ODB_TRY(cs_axpy(w, s->eta, P, D));
    ODB_TRY(cs_scal(w, s->c, S));
    ODB_TRY(cs_axpy(w, s->eta, PT, S));
    ODB_TRY(cs_axpy(w, 1.0, D, X));
    ODB_TRY(cs_axpy(w, -1.0, S, R));
    ODB_TRY(cs_dot(w, R, R, &rr));
    qmr_end(s, hist, rr);
  }
  return ODB_OK;
}

/* The whole cusparse solve on workspace w (set up by the caller). */
static odb_status cs_run(cs_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         kout *o) {
  int X = m == ODB_KRYLOV_QMR ? 10 : 6, B = X + 1, Y = X + 2;
  long n = A->n;
  ktimer t = {NULL, NULL};
  odb_status st;
  ODB_TRY(cs_setup(w, A, Y + 1, m == ODB_KRYLOV_QMR));
  ODB_CUDA_CHECK(cudaMemcpy(w->v[X], x, (size_t)n * sizeof *x, cudaMemcpyHostToDevice));
  ODB_CUDA_CHECK(cudaMemcpy(w->v[B], b, (size_t)n * sizeof *b, cudaMemcpyHostToDevice));
  st = timer_start(&t);
  if (st == ODB_OK) st = m == ODB_KRYLOV_QMR ? cs_qmr(w, &o->st, o->hist) : cs_bicg(w, &o->st, o->hist);
  if (st == ODB_OK) st = timer_stop(&t, &o->seconds);
  timer_free(&t);
  ODB_TRY(st);
  ODB_CUDA_CHECK(cudaMemcpy(x, w->v[X], (size_t)n * sizeof *x, cudaMemcpyDeviceToHost));
  ODB_TRY(cs_spmv(w, 0, X, Y));
  return diff_norm(&w->red, n, w->v[B], w->v[Y], &o->rtrue);
}

/* }====== */

/* {====== impl "fused": our SpMV + fused vector kernels, device-side control */

typedef struct fz_ws {
  odb_sparse_gpu *g, *gt;        /* A; A^T (QMR) */
  odb_sparse *At;
  double *v[14];
  kstate *st;
  double *hist;
  kstate *pin;                   /* pinned, 2 */
  cudaEvent_t ev[2];
  red_scratch red;
} fz_ws;

static void fz_free(fz_ws *w) {
  for (int i = 0; i < 14; i++) dfree(w->v[i]);
  dfree(w->st); dfree(w->hist);
  if (w->pin) cudaFreeHost(w->pin);
  for (int i = 0; i < 2; i++) if (w->ev[i]) cudaEventDestroy(w->ev[i]);
  if (w->g) odb_sparse_gpu_free(w->g);
  if (w->gt) odb_sparse_gpu_free(w->gt);
  odb_sparse_free(w->At);
  red_free(&w->red);
  memset(w, 0, sizeof *w);
}

/* Launch check after a fused kernel. */
#define FZ_CHECK() ODB_CUDA_CHECK(cudaGetLastError())

/* One BiCGStab iteration's launches. Vectors: 0 r, 1 rhat, 2 p, 3 v, 4 s, 5 t, 6 x, 7 b. */
static odb_status fz_bicg_iter(fz_ws *w, long n) {
  enum { R, RH, P, V, S, T, X };
  int G = w->red.grid;
  double *pa = w->red.part;
  unsigned *tk = w->red.ticket;
  fb_p<<<G, FB>>>(n, w->st, w->v[R], w->v[P], w->v[V]);
  FZ_CHECK();
  ODB_TRY(odb_sparse_gpu_spmv(w->g, w->v[P], w->v[V]));
  fb_v<<<G, FB>>>(n, w->st, w->v[RH], w->v[V], pa, tk);
  FZ_CHECK();
  fb_s<<<G, FB>>>(n, w->st, w->hist, w->v[R], w->v[V], w->v[S], pa, tk);
  FZ_CHECK();
  ODB_TRY(odb_sparse_gpu_spmv(w->g, w->v[S], w->v[T]));
  fb_t<<<G, FB>>>(n, w->st, w->v[T], w->v[S], pa, tk);
  FZ_CHECK();
  fb_xr<<<G, FB>>>(n, w->st, w->hist, w->v[X], w->v[P], w->v[S], w->v[T], w->v[R], w->v[RH], pa, tk);
  FZ_CHECK();
  return ODB_OK;
}

/* One QMR iteration's launches. Vectors: 0 r, 1 vt, 2 wt, 3 v, 4 w, 5 p,
** 6 q, 7 pt, 8 d, 9 s, 10 x, 11 b, 12 A^T q. */
static odb_status fz_qmr_iter(fz_ws *w, long n) {
  enum { R, VT, WT, V, W, P, Q, PT, D, S, X, B, ATQ };
  int G = w->red.grid;
  double *pa = w->red.part;
  unsigned *tk = w->red.ticket;
  fq_pq<<<G, FB>>>(n, w->st, w->v[VT], w->v[WT], w->v[V], w->v[W], w->v[P], w->v[Q]);
  FZ_CHECK();
  ODB_TRY(odb_sparse_gpu_spmv(w->g, w->v[P], w->v[PT]));
  ODB_TRY(odb_sparse_gpu_spmv(w->gt, w->v[Q], w->v[ATQ]));
  fq_pt<<<G, FB>>>(n, w->st, w->v[Q], w->v[PT], pa, tk);
  FZ_CHECK();
  fq_vw<<<G, FB>>>(n, w->st, w->v[PT], w->v[V], w->v[ATQ], w->v[W], w->v[VT], w->v[WT], pa, tk);
  FZ_CHECK();
  fq_upd<<<G, FB>>>(n, w->st, w->hist, w->v[P], w->v[PT], w->v[D], w->v[S], w->v[X], w->v[R], pa, tk);
  FZ_CHECK();
  return ODB_OK;
}

/* The initial residual and state; then iterations, each followed by an
** asynchronous copy of the state; the host looks at iteration k-1's copy
** after queueing iteration k, so at most one iteration runs past the end
** (its kernels find the solve stopped and return; only its two SpMVs run). */
static odb_status fz_loop(fz_ws *w, odb_krylov_method m, long n, const kstate *s0) {
  int qmr = m == ODB_KRYLOV_QMR, X = qmr ? 10 : 6, B = X + 1;
  int G = w->red.grid;
  kstate s;
  ODB_CUDA_CHECK(cudaMemcpy(w->st, s0, sizeof *s0, cudaMemcpyHostToDevice));
  ODB_TRY(odb_sparse_gpu_spmv(w->g, w->v[X], w->v[0]));
  if (qmr)
    fq_init<<<G, FB>>>(n, w->v[B], w->v[0], w->v[1], w->v[2], w->v[5], w->v[6], w->v[8], w->v[9], w->st,
                       w->hist, w->red.part, w->red.ticket);
  else
    fb_init<<<G, FB>>>(n, w->v[B], w->v[0], w->v[1], w->v[2], w->v[3], w->st, w->hist, w->red.part,
                       w->red.ticket);
  FZ_CHECK();
  ODB_CUDA_CHECK(cudaMemcpy(&s, w->st, sizeof s, cudaMemcpyDeviceToHost));
  if (s.outcome != KS_RUN) return ODB_OK;
  for (int k = 1; k <= s0->maxit; k++) {
    ODB_TRY(qmr ? fz_qmr_iter(w, n) : fz_bicg_iter(w, n));
    ODB_CUDA_CHECK(cudaMemcpyAsync(&w->pin[k & 1], w->st, sizeof(kstate), cudaMemcpyDeviceToHost, 0));
    ODB_CUDA_CHECK(cudaEventRecord(w->ev[k & 1], 0));
    if (k >= 2) {
      ODB_CUDA_CHECK(cudaEventSynchronize(w->ev[(k - 1) & 1]));
      if (w->pin[(k - 1) & 1].outcome != KS_RUN) break;
    }
  }
  return ODB_OK;
}

static odb_status fz_run(fz_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         kout *o) {
  int qmr = m == ODB_KRYLOV_QMR, X = qmr ? 10 : 6, B = X + 1, Y = qmr ? 12 : 8;
  int nv = qmr ? 13 : 9;
  long n = A->n;
  ktimer t = {NULL, NULL};
  odb_status st;
  ODB_TRY(odb_sparse_gpu_upload(A, &w->g));
  /* our best SpMV launch options for this shape (remembered per process,
     so tuned once); a failed tuning leaves the defaults */
  if (!odb_sparse_gpu_is_tuned(w->g) && odb_sparse_gpu_tune(w->g, 5, NULL) != ODB_OK)
    odb_clear_error();
  if (qmr) {
    ODB_TRY(csr_transpose(A, &w->At));
    ODB_TRY(odb_sparse_gpu_upload(w->At, &w->gt));
    if (!odb_sparse_gpu_is_tuned(w->gt) && odb_sparse_gpu_tune(w->gt, 5, NULL) != ODB_OK)
      odb_clear_error();
  }
  for (int i = 0; i < nv; i++) ODB_TRY(dalloc(&w->v[i], (size_t)n * sizeof(double), "Krylov vectors"));
  ODB_TRY(dalloc(&w->st, sizeof(kstate), "solver state"));
  ODB_TRY(dalloc(&w->hist, (size_t)(o->st.maxit + 2) * sizeof(double), "residual history"));
  ODB_CUDA_CHECK(cudaMallocHost((void **)&w->pin, 2 * sizeof(kstate)));
  ODB_CUDA_CHECK(cudaEventCreateWithFlags(&w->ev[0], cudaEventDisableTiming));
  ODB_CUDA_CHECK(cudaEventCreateWithFlags(&w->ev[1], cudaEventDisableTiming));
  ODB_TRY(red_alloc(&w->red, n, sm_count()));
  ODB_CUDA_CHECK(cudaMemcpy(w->v[X], x, (size_t)n * sizeof *x, cudaMemcpyHostToDevice));
  ODB_CUDA_CHECK(cudaMemcpy(w->v[B], b, (size_t)n * sizeof *b, cudaMemcpyHostToDevice));
  st = timer_start(&t);
  if (st == ODB_OK) st = fz_loop(w, m, n, &o->st);
  if (st == ODB_OK) st = timer_stop(&t, &o->seconds);
  timer_free(&t);
  ODB_TRY(st);
  ODB_CUDA_CHECK(cudaMemcpy(&o->st, w->st, sizeof(kstate), cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(o->hist, w->hist, (size_t)o->st.nhist * sizeof(double), cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(x, w->v[X], (size_t)n * sizeof *x, cudaMemcpyDeviceToHost));
  ODB_TRY(odb_sparse_gpu_spmv(w->g, w->v[X], w->v[Y]));
  return diff_norm(&w->red, n, w->v[B], w->v[Y], &o->rtrue);
}

/* }====== */

/* {====== impl "persistent": launch shape, co-residency, watchdog */

/* A launch shape of the persistent kernel. */
typedef struct pk_geom {
  int grid, max_grid, rv, lmax;
  size_t smem;
} pk_geom;

/* A grain and value-load form of the Bdia SpMV and its shape. */
typedef struct pk_cand { int gr, st; pk_geom g; } pk_cand;   /* st as in pk_ws */

typedef struct pk_ws {
  pk_args a;
  int fmt, qmr, nv, gr, st;         /* gr: Bdia rows of a cell per thread; st: 1 evict-first values | 2 SpMV called */
  int64_t *rp, *trp; int32_t *ci, *tci; double *va, *tva;
  double *bv, *Wa, *WTa, *D; int *wa, *wb, *wc, *colwell;
  double *b, *y;
  kstate *st_d;
  red_scratch red;
  int grid, block;
  size_t smem;
  pk_cand cand[16];                 /* the candidates (one unless tuned) and their shapes */
  int ncand, gmax, tuned;           /* gmax: the largest grid of any candidate */
} pk_ws;

static void pk_free(pk_ws *w) {
  for (int i = 0; i < 12; i++) dfree(w->a.g[i]);
  dfree(w->rp); dfree(w->trp); dfree(w->ci); dfree(w->tci); dfree(w->va); dfree(w->tva);
  dfree(w->bv); dfree(w->Wa); dfree(w->WTa); dfree(w->D);
  dfree(w->wa); dfree(w->wb); dfree(w->wc); dfree(w->colwell);
  dfree(w->b); dfree(w->y); dfree(w->st_d);
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
static odb_status pk_spmv_launch(const pk_ws *w, const double *x, double *y) {
  pk_args a = w->a;
  void *params[] = {&a, &x, &y};
  const void *kern = pk_kernel(w->qmr, 1, w->fmt, w->a.k, w->gr, w->st);
  ODB_CUDA_CHECK(cudaLaunchKernel(kern, dim3(w->grid), dim3(w->block), params, 0, 0));
  return ODB_OK;
}

/* Uploads the matrix arrays the in-kernel SpMV reads (CSR, A^T for QMR,
** or Bdia with a column -> well map built from b[w]). */
static odb_status pk_upload(pk_ws *w, const odb_sparse *A) {
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
  ODB_TRY(dupload(&w->bv, bd->val, (size_t)7 * bd->k * bd->k * bd->M * sizeof(double), "Bdia values"));
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
static odb_status pk_shape(pk_ws *w, const odb_krylov_gpu_opts *o, odb_krylov_gpu_info *info, int spmv_only) {
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
  ODB_CUDA_CHECK(cudaMemcpy(err, a->err, sizeof err, cudaMemcpyDeviceToHost));
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
static odb_status pk_run(pk_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         const odb_krylov_gpu_opts *o, kout *out, odb_krylov_gpu_info *info) {
  pk_args *a = &w->a;
  long n = A->n;
  int X = w->qmr ? 10 : 2;
  ODB_TRY(pk_upload(w, A));
  ODB_TRY(pk_shape(w, o, info, 0));
  int G = w->gmax;
  for (int i = 0; i < w->nv; i++) ODB_TRY(dalloc(&a->g[i], (size_t)n * sizeof(double), "Krylov vectors"));
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
  ODB_TRY(pk_launch(w, x, &out->st, o->test_hang, o, &out->seconds));
  ODB_CUDA_CHECK(cudaMemcpy(&out->st, w->st_d, sizeof(kstate), cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(out->hist, a->hist, (size_t)out->st.nhist * sizeof(double), cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(x, a->g[X], (size_t)n * sizeof *x, cudaMemcpyDeviceToHost));
  ODB_TRY(dalloc(&w->y, (size_t)n * sizeof(double), "residual"));
  ODB_TRY(red_alloc(&w->red, n, sm_count()));
  ODB_TRY(pk_spmv_launch(w, a->g[X], w->y));
  ODB_TRY(diff_norm(&w->red, n, w->b, w->y, &out->rtrue));
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

/* {====== dispatcher */

/* Checks the options (ODB_ERR_ARG naming the field) and fills defaults. */
static odb_status check_opts(const odb_krylov_gpu_opts *in, odb_krylov_gpu_opts *o) {
  odb_krylov_opts d = {1e-10, 1000, 100};
  if (in) *o = *in;
  else memset(o, 0, sizeof *o);
  if (o->kry.tol < 0 || o->kry.tol != o->kry.tol) return ODB_FAIL(ODB_ERR_ARG, "tol must be positive, got %g", o->kry.tol);
  if (o->kry.maxit < 0) return ODB_FAIL(ODB_ERR_ARG, "maxit must be positive, got %d", o->kry.maxit);
  if (o->kry.tol == 0) o->kry.tol = d.tol;
  if (o->kry.maxit == 0) o->kry.maxit = d.maxit;
  if (o->kry.stag_window <= 0) o->kry.stag_window = d.stag_window;
  if ((unsigned)o->impl >= ODB_KRY_IMPL_COUNT) return ODB_FAIL(ODB_ERR_ARG, "impl %d is not one of cpu, cusparse, fused, persistent", (int)o->impl);
  if ((unsigned)o->sync >= ODB_KRY_SYNC_COUNT) return ODB_FAIL(ODB_ERR_ARG, "sync %d is not one of lock, lockfree, wss", (int)o->sync);
  if (o->delay_ns < 0 || o->delay_ns > 1000000) return ODB_FAIL(ODB_ERR_ARG, "delay must be in 0..1000000 ns, got %d", o->delay_ns);
  if (o->grid < 0) return ODB_FAIL(ODB_ERR_ARG, "grid must be positive (0: automatic), got %d", o->grid);
  if (o->block == 0) o->block = 256;
  if (o->block < 64 || o->block > 1024 || o->block % 32)
    return ODB_FAIL(ODB_ERR_ARG, "block must be a multiple of 32 in 64..1024, got %d", o->block);
  if ((unsigned)o->rv > ODB_KRY_RV_GLOBAL) return ODB_FAIL(ODB_ERR_ARG, "rv %d is not auto, shared or global", (int)o->rv);
  if (o->grain < 0 || o->grain > 16) return ODB_FAIL(ODB_ERR_ARG, "grain must be 1, 2, 4 or k (0: chosen), got %d", o->grain);
  if (o->stream < -1 || o->stream > 1) return ODB_FAIL(ODB_ERR_ARG, "stream must be 1 (evict-first), -1 (plain) or 0 (chosen), got %d", o->stream);
  if (o->call < -1 || o->call > 1) return ODB_FAIL(ODB_ERR_ARG, "call must be 1 (SpMV called), -1 (inlined) or 0 (chosen), got %d", o->call);
  if (o->tune < -1 || o->tune > 1) return ODB_FAIL(ODB_ERR_ARG, "tune must be 1 (always), -1 (never) or 0 (large matrices), got %d", o->tune);
  if (o->watchdog_s < 0 || o->watchdog_s > 3600) return ODB_FAIL(ODB_ERR_ARG, "watchdog must be in 0..3600 s, got %g", o->watchdog_s);
  return ODB_OK;
}

/* Which formats each impl takes. */
static odb_status check_format(const odb_sparse *A, odb_krylov_method m, odb_krylov_impl impl) {
  const char *f = odb_sparse_format_name(A->fmt);
  if (A->n < 1 || A->n >= INT32_MAX) return ODB_FAIL(ODB_ERR_ARG, "matrix order %ld outside 1..2^31-1", A->n);
  if (m == ODB_KRYLOV_QMR && A->fmt != ODB_FMT_CSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "QMR needs A^T x and so CSR, got %s", f);
  if (impl == ODB_KRY_IMPL_CUSPARSE && A->fmt != ODB_FMT_CSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "impl cusparse takes CSR, got %s", f);
  if (impl == ODB_KRY_IMPL_PERSISTENT && A->fmt != ODB_FMT_CSR && A->fmt != ODB_FMT_BDIA)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "impl persistent takes CSR or Bdia, got %s", f);
  return ODB_OK;
}

/* The CPU's status and message for a finished solve. */
static odb_status finish(const char *name, const kstate *s, int window) {
  switch (s->outcome) {
  case ODB_KRY_CONVERGED: return ODB_OK;
  case ODB_KRY_MAXIT:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s: no convergence in %d iterations (relative residual %.3g)",
                    name, s->it, s->rel);
  case ODB_KRY_STAGNATED:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s stagnated at iteration %d (relative residual %.3g, no 1%% progress in %d)",
                    name, s->it, s->rel, window);
  default:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s breakdown (%s) at iteration %d (relative residual %.3g)",
                    name, odb_krylov_outcome_name((odb_krylov_outcome)s->outcome), s->bditer, s->rel);
  }
}

/* Least traffic of one iteration: A read twice (QMR: A and A^T) and the
** vector passes of the fused form (BiCGStab 22, QMR 30 vectors of n). */
static double bytes_per_iter(const odb_sparse *A, odb_krylov_method m) {
  return 2.0 * (double)odb_sparse_bytes(A) + (m == ODB_KRYLOV_QMR ? 30.0 : 22.0) * 8.0 * (double)A->n;
}

/* The CPU reference, timed on the host. */
static odb_status solve_cpu(const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                            const odb_krylov_opts *o, odb_krylov_result *res, double *seconds) {
  double t0 = odb_clock_now();
  odb_status st = odb_krylov_solve(A, m, b, x, o, res);
  *seconds = odb_clock_since(t0);
  return st;
}

/* A any format the impl takes; b, x of length n; o may be NULL. */
extern "C" odb_status odb_krylov_gpu_solve(const odb_sparse *A, odb_krylov_method method, const double *b,
                                           double *x, const odb_krylov_gpu_opts *opts,
                                           odb_krylov_result *res, odb_krylov_gpu_info *info) {
  odb_krylov_gpu_opts o;
  odb_status st;
  int ndev = 0;
  memset(res, 0, sizeof *res);
  res->breakdown_iter = -1;
  if (info) memset(info, 0, sizeof *info);
  ODB_TRY(check_opts(opts, &o));
  if (method != ODB_KRYLOV_BICGSTAB && method != ODB_KRYLOV_QMR)
    return ODB_FAIL(ODB_ERR_ARG, "unknown Krylov method %d", (int)method);
  ODB_TRY(check_format(A, method, o.impl));
  if (info) info->bytes_per_iter = bytes_per_iter(A, method);
  if (o.impl == ODB_KRY_IMPL_CPU) {
    double sec = 0.0;
    st = solve_cpu(A, method, b, x, &o.kry, res, &sec);
    if (info) { info->seconds = sec; info->seconds_per_iter = sec / (res->iters > 0 ? res->iters : 1); }
    return st;
  }
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "impl %s: no CUDA device (%s)", odb_krylov_impl_name(o.impl),
                    e != cudaSuccess ? cudaGetErrorString(e) : "none found");
  }
  long n = A->n;
  double bn = 0.0;
  for (long i = 0; i < n; i++) bn += b[i] * b[i];
  bn = sqrt(bn);
  if (bn == 0.0) bn = 1.0;
  kout out;
  memset(&out, 0, sizeof out);
  out.st = ks_new(bn, &o.kry);
  out.hist = (double *)malloc((size_t)(o.kry.maxit + 2) * sizeof(double));
  if (!out.hist) return ODB_FAIL(ODB_ERR_NOMEM, "residual history of %d iterations", o.kry.maxit);
  double *xw = (double *)malloc((size_t)n * sizeof *xw);
  if (!xw) { free(out.hist); return ODB_FAIL(ODB_ERR_NOMEM, "solution of order %ld", n); }
  memcpy(xw, x, (size_t)n * sizeof *xw);
  if (o.impl == ODB_KRY_IMPL_CUSPARSE) {
    cs_ws w;
    memset(&w, 0, sizeof w);
    st = cs_run(&w, A, method, b, xw, &out);
    cs_free(&w);
  } else if (o.impl == ODB_KRY_IMPL_FUSED) {
    fz_ws w;
    memset(&w, 0, sizeof w);
    st = fz_run(&w, A, method, b, xw, &out);
    fz_free(&w);
  } else {
    pk_ws w;
    memset(&w, 0, sizeof w);
    w.qmr = method == ODB_KRYLOV_QMR;
    w.fmt = A->fmt == ODB_FMT_BDIA ? PK_BDIA : PK_CSR;
    w.nv = w.qmr ? 12 : 7;
    w.block = o.block;
    st = pk_run(&w, A, method, b, xw, &o, &out, info);
    pk_free(&w);
  }
  if (st != ODB_OK) { free(out.hist); free(xw); return st; }
  memcpy(x, xw, (size_t)n * sizeof *xw);
  free(xw);
  res->outcome = (odb_krylov_outcome)out.st.outcome;
  res->iters = out.st.it;
  res->breakdown_iter = out.st.outcome == ODB_KRY_BREAKDOWN_RHO || out.st.outcome == ODB_KRY_BREAKDOWN_OMEGA ||
                        out.st.outcome == ODB_KRY_BREAKDOWN_OTHER ? out.st.bditer : -1;
  res->relres = out.st.rel;
  res->relres_true = out.rtrue / bn;
  res->history = out.hist;
  res->nhist = out.st.nhist;
  if (info) {
    info->seconds = out.seconds;
    info->seconds_per_iter = out.seconds / (res->iters > 0 ? res->iters : 1);
  }
  return finish(method == ODB_KRYLOV_QMR ? "QMR" : "BiCGStab", &out.st, o.kry.stag_window);
}

/* }====== */

/* {====== reference SpMV time and copy bandwidth */

/* Median of v[0..n) (sorts v). */
static double median(double *v, int n) { return odb_median(v, n); }

/* Device-to-device copy of 256 MiB, best of 5: bytes read + written per second. */
static odb_status copy_bandwidth(double *bps) {
  size_t bytes = (size_t)256 << 20;
  void *s = NULL, *d = NULL;
  ktimer t = {NULL, NULL};
  double best = 0.0, sec = 0.0;
  odb_status st = dalloc(&s, bytes, "bandwidth source");
  if (st == ODB_OK) st = dalloc(&d, bytes, "bandwidth target");
  for (int i = 0; st == ODB_OK && i < 6; i++) {
    st = timer_start(&t);
    if (st == ODB_OK && cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, 0) != cudaSuccess)
      st = odb_cuda_fail(cudaGetLastError(), "cudaMemcpyAsync", __FILE__, __LINE__);
    if (st == ODB_OK) st = timer_stop(&t, &sec);
    timer_free(&t);
    if (st == ODB_OK && i > 0 && 2.0 * bytes / sec > best) best = 2.0 * bytes / sec;
  }
  dfree(s); dfree(d);
  *bps = best;
  return st;
}

/* Times reps SpMVs of impl (after 3 warm-up runs), one event pair each. */
static odb_status spmv_time(const odb_sparse *A, odb_krylov_impl impl, int reps, double *seconds) {
  long n = A->n;
  double *xs = (double *)malloc((size_t)n * sizeof *xs), *tv = (double *)malloc((size_t)reps * sizeof *tv);
  cs_ws cw; pk_ws pw; fz_ws fw;
  ktimer t = {NULL, NULL};
  odb_status st = ODB_OK;
  memset(&cw, 0, sizeof cw); memset(&pw, 0, sizeof pw); memset(&fw, 0, sizeof fw);
  if (!xs || !tv) { free(xs); free(tv); return ODB_FAIL(ODB_ERR_NOMEM, "SpMV timing of order %ld", n); }
  for (long i = 0; i < n; i++) xs[i] = sin(0.37 * (double)i);
  if (impl == ODB_KRY_IMPL_CUSPARSE) {
    st = cs_setup(&cw, A, 2, 0);
    if (st == ODB_OK && cudaMemcpy(cw.v[0], xs, (size_t)n * 8, cudaMemcpyHostToDevice) != cudaSuccess)
      st = odb_cuda_fail(cudaGetLastError(), "cudaMemcpy", __FILE__, __LINE__);
    for (int i = -3; st == ODB_OK && i < reps; i++) {
      st = timer_start(&t);
      if (st == ODB_OK) st = cs_spmv(&cw, 0, 0, 1);
      if (st == ODB_OK) st = timer_stop(&t, i >= 0 ? &tv[i] : seconds);
      timer_free(&t);
    }
  } else if (impl == ODB_KRY_IMPL_FUSED) {
    st = odb_sparse_gpu_upload(A, &fw.g);
    if (st == ODB_OK) st = odb_sparse_gpu_bench(fw.g, ODB_SPMV_OURS, reps, seconds);
    reps = 0;
  } else {
    pw.fmt = A->fmt == ODB_FMT_BDIA ? PK_BDIA : PK_CSR;
    pw.nv = 7;
    pw.block = 256;
    odb_krylov_gpu_opts o;
    memset(&o, 0, sizeof o);
    o.rv = ODB_KRY_RV_GLOBAL;
    st = pk_upload(&pw, A);
    if (st == ODB_OK) st = pk_shape(&pw, &o, NULL, 1);
    if (st == ODB_OK) st = dalloc(&pw.b, (size_t)n * 8, "SpMV x");
    if (st == ODB_OK) st = dalloc(&pw.y, (size_t)n * 8, "SpMV y");
    if (st == ODB_OK && cudaMemcpy(pw.b, xs, (size_t)n * 8, cudaMemcpyHostToDevice) != cudaSuccess)
      st = odb_cuda_fail(cudaGetLastError(), "cudaMemcpy", __FILE__, __LINE__);
    for (int i = -3; st == ODB_OK && i < reps; i++) {
      st = timer_start(&t);
      if (st == ODB_OK) st = pk_spmv_launch(&pw, pw.b, pw.y);
      if (st == ODB_OK) st = timer_stop(&t, i >= 0 ? &tv[i] : seconds);
      timer_free(&t);
    }
  }
  if (st == ODB_OK && reps > 0) *seconds = median(tv, reps);
  cs_free(&cw); pk_free(&pw); fz_free(&fw);
  free(xs); free(tv);
  return st;
}

/* A in a format the impl takes (cpu: refused). */
extern "C" odb_status odb_krylov_gpu_spmv_seconds(const odb_sparse *A, odb_krylov_impl impl, int reps,
                                                  double *seconds, double *copy_bytes_per_s) {
  int ndev = 0;
  if (impl == ODB_KRY_IMPL_CPU || (unsigned)impl >= ODB_KRY_IMPL_COUNT)
    return ODB_FAIL(ODB_ERR_ARG, "SpMV timing: impl must be cusparse, fused or persistent");
  if (reps < 1 || reps > 100000) return ODB_FAIL(ODB_ERR_ARG, "SpMV timing: reps must be in 1..100000, got %d", reps);
  ODB_TRY(check_format(A, ODB_KRYLOV_BICGSTAB, impl));
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "SpMV timing: no CUDA device");
  }
  ODB_TRY(spmv_time(A, impl, reps, seconds));
  if (copy_bytes_per_s) ODB_TRY(copy_bandwidth(copy_bytes_per_s));
  return ODB_OK;
}

/* }====== */
