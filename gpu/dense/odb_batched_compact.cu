/* odb_batched_compact.cu - batched LU without pivoting, TRSM/TRSV and
   GEMM/GEMV of small dense matrices on the GPU, in the compact layout
   (odb_batched_gpu.cuh) or the standard one: serial kernels (one thread per
   matrix, two with double2) and team kernels (a thread per row), their
   launches by B and the C interface of odb_batched_gpu.h for them. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched_gpu.cuh"

/* {====== serial kernels: one thread per lane (two with double2) */

/* LU of every matrix; flag (may be NULL) gets min(p*B + row) of bad ones. */
template <int B, int LPT>
__global__ void __launch_bounds__(SERIAL_THREADS, 1)
k_lu_serial(double *A, long nlanes, int vl, int b, long n,
            unsigned long long *flag) {
  typedef typename lanes_t<LPT>::T V;
  long lane0 = ((long)blockIdx.x * blockDim.x + threadIdx.x) * LPT;
  if (lane0 >= nlanes) return;
  const int nb = B > 0 ? B : b;
  lane_pos q = lane_of(lane0, vl);
  double *p = A + (size_t)q.pk * nb * nb * vl + q.l;
  V fro;
  if constexpr (in_regs<B, LPT>::value) {
    RegMat<V, B> a;
    a.load(p, vl);
    lu_reg<B>(a, fro);
    a.store(p, vl);
#pragma unroll
    for (int c = 0; c < LPT; ++c) {
      int k = flag ? bad_row_reg<B>(a, fro, c) : -1;
      if (k >= 0 && lane0 + c < n)
        atomicMin(flag, (unsigned long long)(lane0 + c) * nb + k);
    }
  } else {
    MemMat<V> a = { p, nb, vl };
    lu_alg<B>(a, nb, fro);
    if (flag) report_pivots<B, LPT>(a, nb, fro, lane0, n, flag);
  }
}

/* x := (LU)^{-1} x, one vector per lane. */
template <int B, int LPT>
__global__ void __launch_bounds__(SERIAL_THREADS, 1)
k_solve_serial(const double *LU, double *X, long nlanes, int vl, int b) {
  typedef typename lanes_t<LPT>::T V;
  long lane0 = ((long)blockIdx.x * blockDim.x + threadIdx.x) * LPT;
  if (lane0 >= nlanes) return;
  const int nb = B > 0 ? B : b;
  lane_pos q = lane_of(lane0, vl);
  MemMat<V> t = { const_cast<double *>(LU) + (size_t)q.pk * nb * nb * vl +
                  q.l, nb, vl };
  double *xp = X + (size_t)q.pk * nb * vl + q.l;
  V x[B > 0 ? B : MAXB];
#pragma unroll
  for (int i = 0; i < nb; ++i) x[i] = ld<V>(xp + (size_t)i * vl);
  fwd_alg<B>(t, nb, x);
  bwd_alg<B>(t, nb, x);
#pragma unroll
  for (int i = 0; i < nb; ++i) st<V>(xp + (size_t)i * vl, x[i]);
}

/* Kinds of the triangular solves (odb_batched_trsm_kind). */
#define KIND_LLU 0
#define KIND_LU 1
#define KIND_RU 2

/* Triangular solve of kind KIND with T's factors on X (B x m per lane). */
template <int B, int KIND>
__global__ void __launch_bounds__(SERIAL_THREADS, 1)
k_trsm_serial(const double *T, double *X, long nlanes, int vl, int b,
              int m) {
  long lane = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= nlanes) return;
  const int nb = B > 0 ? B : b;
  lane_pos q = lane_of(lane, vl);
  MemMat<double> t = { const_cast<double *>(T) + (size_t)q.pk * nb * nb * vl +
                       q.l, nb, vl };
  MemMat<double> x = { X + (size_t)q.pk * nb * m * vl + q.l, m, vl };
  double v[B > 0 ? B : MAXB];
  if constexpr (KIND == KIND_RU) {   /* rows of X (square) */
    for (int r = 0; r < nb; ++r) {
#pragma unroll
      for (int j = 0; j < nb; ++j) v[j] = x.at(r, j);
      row_bwd_alg<B>(t, nb, v);
#pragma unroll
      for (int j = 0; j < nb; ++j) x.at(r, j) = v[j];
    }
  } else {
    for (int c = 0; c < m; ++c) {     /* columns of X */
#pragma unroll
      for (int i = 0; i < nb; ++i) v[i] = x.at(i, c);
      if constexpr (KIND == KIND_LLU)
        fwd_alg<B>(t, nb, v);
      else
        bwd_alg<B>(t, nb, v);
#pragma unroll
      for (int i = 0; i < nb; ++i) x.at(i, c) = v[i];
    }
  }
}

/* C := alpha A X + beta C, X and C B x m per lane. */
template <int B>
__global__ void __launch_bounds__(SERIAL_THREADS, 1)
k_gemm_serial(double alpha, const double *A, const double *X, double beta,
              double *C, long nlanes, int vl, int b, int m) {
  long lane = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= nlanes) return;
  const int nb = B > 0 ? B : b;
  lane_pos q = lane_of(lane, vl);
  MemMat<double> a = { const_cast<double *>(A) + (size_t)q.pk * nb * nb * vl +
                       q.l, nb, vl };
  MemMat<double> x = { const_cast<double *>(X) + (size_t)q.pk * nb * m * vl +
                       q.l, m, vl };
  MemMat<double> cm = { C + (size_t)q.pk * nb * m * vl + q.l, m, vl };
  double v[B > 0 ? B : MAXB];
  for (int c = 0; c < m; ++c) {
#pragma unroll
    for (int k = 0; k < nb; ++k) v[k] = x.at(k, c);
#pragma unroll
    for (int i = 0; i < nb; ++i) {
      double acc = 0.0;
#pragma unroll
      for (int k = 0; k < nb; ++k) acc += a.at(i, k) * v[k];
      double *ci = &cm.at(i, c);
      *ci = beta == 0.0 ? alpha * acc : alpha * acc + beta * *ci;
    }
  }
}

/* }====== */

/* {====== team kernels: block (lanes x B rows), thread (x, i) owns row i */

/* Lanes per block of the team kernels. */
static int team_lanes(int nb) { return nb <= 16 ? 32 : 8; }

/* a[k] of a row held in registers, k possibly a runtime value. */
template <int MB>
__device__ __forceinline__ double row_get(const double (&a)[MB], int k) {
  double r = 0.0;
#pragma unroll
  for (int j = 0; j < MB; ++j)
    if (j == k) r = a[j];
  return r;
}
template <int MB>
__device__ __forceinline__ void row_set(double (&a)[MB], int k, double v) {
#pragma unroll
  for (int j = 0; j < MB; ++j)
    if (j == k) a[j] = v;
}

/* Row i of lane `lane`'s matrix: element j at the result + j*vl. */
static __device__ __forceinline__ double *row_ptr(double *A, long lane, int vl,
                                                  int nb, int m, int i) {
  lane_pos q = lane_of(lane, vl);
  return A + ((size_t)q.pk * nb + i) * m * vl + q.l;
}

/*
** LU with one thread per row: at step k the owner of row k publishes it
** in shared memory (two buffers by step parity, so one barrier per step
** suffices) and rows below update. Lanes past nlanes factor an identity
** and store nothing. Shared: (2B + B) x lanes doubles.
*/
template <int B>
__global__ void __launch_bounds__(512) k_lu_team(double *A, long nlanes, int vl, int b, long n,
                          unsigned long long *flag) {
  constexpr int MB = B > 0 ? B : MAXB;
  const int nb = B > 0 ? B : b;
  const int tl = blockDim.x, x = threadIdx.x, i = threadIdx.y;
  extern __shared__ double sh[];
  double *fr = sh + 2 * nb * tl;
  long lane = (long)blockIdx.x * tl + x;
  bool act = lane < nlanes;
  double *row = act ? row_ptr(A, lane, vl, nb, nb, i) : NULL;
  double a[MB];
  double s = 0.0;
#pragma unroll
  for (int j = 0; j < MB; ++j)
    if (j < nb) {
      a[j] = act ? row[(size_t)j * vl] : (i == j ? 1.0 : 0.0);
      s += a[j] * a[j];
    }
  fr[i * tl + x] = s;
  __syncthreads();
  double fro = 0.0;
  for (int r = 0; r < nb; ++r) fro += fr[r * tl + x];
#pragma unroll
  for (int k = 0; k < (B > 0 ? B : MAXB); ++k) {
    if (B == 0 && k >= nb) break;
    double *buf = sh + (k & 1) * nb * tl;
    if (i == k) {
#pragma unroll
      for (int j = 0; j < MB; ++j)
        if (j >= k && j < nb) buf[j * tl + x] = a[j];
    }
    __syncthreads();
    if (i > k) {
      double lik = row_get(a, k) * (1.0 / buf[k * tl + x]);
      row_set(a, k, lik);
#pragma unroll
      for (int j = 0; j < MB; ++j)
        if (j > k && j < nb) a[j] -= lik * buf[j * tl + x];
    }
  }
  if (!act) return;
#pragma unroll
  for (int j = 0; j < MB; ++j)
    if (j < nb) row[(size_t)j * vl] = a[j];
  double u = row_get(a, i);
  if (flag && lane < n && !(u * u > TINY2 * fro))
    atomicMin(flag, (unsigned long long)lane * nb + i);
}

/*
** Left triangular solve with one thread per row of X (m columns): the
** finished row k is published and the rows it feeds update (LLU: rows
** below, in ascending k; LU: rows above, descending k, the owner scaling
** by the pivot's reciprocal first). RU (X square): each row on its own.
** Shared: 2 m x lanes doubles.
*/
template <int B, int KIND>
__global__ void __launch_bounds__(512) k_trsm_team(const double *T, double *X, long nlanes, int vl,
                            int b, int m) {
  constexpr int MB = B > 0 ? B : MAXB;
  const int nb = B > 0 ? B : b;
  const int tl = blockDim.x, x = threadIdx.x, i = threadIdx.y;
  extern __shared__ double sh[];
  long lane = (long)blockIdx.x * tl + x;
  bool act = lane < nlanes;
  long ln = act ? lane : 0;
  const double *trow = row_ptr(const_cast<double *>(T), ln, vl, nb, nb, i);
  double *xrow = row_ptr(X, ln, vl, nb, m, i);
  double v[MB];
#pragma unroll
  for (int c = 0; c < MB; ++c)
    if (c < m) v[c] = act ? xrow[(size_t)c * vl] : 0.0;
  if (KIND == KIND_RU) {
    if (!act) return;
    const double *t0 = trow - (size_t)i * nb * vl;   /* row 0 of T */
#pragma unroll
    for (int j = 0; j < MB; ++j) {
      if (j >= nb) break;
      double s = v[j];
#pragma unroll
      for (int k = 0; k < MB; ++k)
        if (k < j) s -= v[k] * t0[(size_t)(k * nb + j) * vl];
      v[j] = s * (1.0 / t0[(size_t)(j * nb + j) * vl]);
    }
  } else {
    for (int step = 0; step < nb; ++step) {
      int k = KIND == KIND_LLU ? step : nb - 1 - step;
      double *buf = sh + (step & 1) * m * tl;
      if (i == k) {
        if (KIND == KIND_LU) {
          double inv = act ? 1.0 / trow[(size_t)k * vl] : 1.0;
#pragma unroll
          for (int c = 0; c < MB; ++c)
            if (c < m) v[c] *= inv;
        }
#pragma unroll
        for (int c = 0; c < MB; ++c)
          if (c < m) buf[c * tl + x] = v[c];
      }
      __syncthreads();
      if (KIND == KIND_LLU ? i > k : i < k) {
        double tik = act ? trow[(size_t)k * vl] : 0.0;
#pragma unroll
        for (int c = 0; c < MB; ++c)
          if (c < m) v[c] -= tik * buf[c * tl + x];
      }
    }
    if (!act) return;
  }
#pragma unroll
  for (int c = 0; c < MB; ++c)
    if (c < m) xrow[(size_t)c * vl] = v[c];
}

/* C := alpha A X + beta C with one thread per row of C (X read through
   the cache by the B threads of a matrix). */
template <int B>
__global__ void __launch_bounds__(512) k_gemm_team(double alpha, const double *A, const double *X,
                            double beta, double *C, long nlanes, int vl,
                            int b, int m) {
  constexpr int MB = B > 0 ? B : MAXB;
  const int nb = B > 0 ? B : b;
  const int tl = blockDim.x, x = threadIdx.x, i = threadIdx.y;
  long lane = (long)blockIdx.x * tl + x;
  if (lane >= nlanes) return;
  const double *arow = row_ptr(const_cast<double *>(A), lane, vl, nb, nb, i);
  const double *x0 = row_ptr(const_cast<double *>(X), lane, vl, nb, m, 0);
  double *crow = row_ptr(C, lane, vl, nb, m, i);
  double acc[MB];
#pragma unroll
  for (int c = 0; c < MB; ++c) acc[c] = 0.0;
  for (int k = 0; k < nb; ++k) {
    double aik = arow[(size_t)k * vl];
#pragma unroll
    for (int c = 0; c < MB; ++c)
      if (c < m) acc[c] += aik * x0[(size_t)(k * m + c) * vl];
  }
#pragma unroll
  for (int c = 0; c < MB; ++c)
    if (c < m) {
      double *ci = crow + (size_t)c * vl;
      *ci = beta == 0.0 ? alpha * acc[c] : alpha * acc[c] + beta * *ci;
    }
}

/* }====== */

/* {====== launches by B */

template <int B>
static void run_lu_serial(const odb_batch *bt, int lpt, double *A,
                          unsigned long long *flag) {
  long nl = lanes_of(bt);
  if (lpt == 2)
    k_lu_serial<LPT2_B(B), 2><<<serial_grid(nl, 2), SERIAL_THREADS>>>(
      A, nl, bt->vl, bt->b, bt->n, flag);
  else
    k_lu_serial<B, 1><<<serial_grid(nl, 1), SERIAL_THREADS>>>(
      A, nl, bt->vl, bt->b, bt->n, flag);
}

template <int B>
static void run_lu_team(const odb_batch *bt, double *A,
                        unsigned long long *flag) {
  long nl = lanes_of(bt);
  int tl = team_lanes(bt->b);
  dim3 block(tl, bt->b);
  size_t smem = sizeof(double) * 3 * bt->b * tl;
  k_lu_team<B><<<(unsigned)((nl + tl - 1) / tl), block, smem>>>(
    A, nl, bt->vl, bt->b, bt->n, flag);
}

template <int B>
static void run_solve_serial(const odb_batch *bt, int lpt, const double *LU,
                             double *x) {
  long nl = lanes_of(bt);
  if (lpt == 2)
    k_solve_serial<LPT2_B(B), 2><<<serial_grid(nl, 2), SERIAL_THREADS>>>(
      LU, x, nl, bt->vl, bt->b);
  else
    k_solve_serial<B, 1><<<serial_grid(nl, 1), SERIAL_THREADS>>>(
      LU, x, nl, bt->vl, bt->b);
}

template <int B>
static void run_trsm_serial(const odb_batch *bt, int kind, int m,
                            const double *T, double *X) {
  long nl = lanes_of(bt);
  unsigned g = serial_grid(nl, 1);
  if (kind == KIND_LLU)
    k_trsm_serial<B, KIND_LLU><<<g, SERIAL_THREADS>>>(T, X, nl, bt->vl,
                                                      bt->b, m);
  else if (kind == KIND_LU)
    k_trsm_serial<B, KIND_LU><<<g, SERIAL_THREADS>>>(T, X, nl, bt->vl, bt->b,
                                                     m);
  else
    k_trsm_serial<B, KIND_RU><<<g, SERIAL_THREADS>>>(T, X, nl, bt->vl, bt->b,
                                                     m);
}

template <int B>
static void run_trsm_team(const odb_batch *bt, int kind, int m,
                          const double *T, double *X) {
  long nl = lanes_of(bt);
  int tl = team_lanes(bt->b);
  dim3 block(tl, bt->b);
  unsigned g = (unsigned)((nl + tl - 1) / tl);
  size_t smem = sizeof(double) * 2 * m * tl;
  if (kind == KIND_LLU)
    k_trsm_team<B, KIND_LLU><<<g, block, smem>>>(T, X, nl, bt->vl, bt->b, m);
  else if (kind == KIND_LU)
    k_trsm_team<B, KIND_LU><<<g, block, smem>>>(T, X, nl, bt->vl, bt->b, m);
  else
    k_trsm_team<B, KIND_RU><<<g, block, smem>>>(T, X, nl, bt->vl, bt->b, m);
}

template <int B>
static void run_gemm(const odb_batch *bt, int team, int m, double alpha,
                     const double *A, const double *X, double beta,
                     double *C) {
  long nl = lanes_of(bt);
  if (team) {
    int tl = team_lanes(bt->b);
    dim3 block(tl, bt->b);
    k_gemm_team<B><<<(unsigned)((nl + tl - 1) / tl), block>>>(
      alpha, A, X, beta, C, nl, bt->vl, bt->b, m);
  } else {
    k_gemm_serial<B><<<serial_grid(nl, 1), SERIAL_THREADS>>>(
      alpha, A, X, beta, C, nl, bt->vl, bt->b, m);
  }
}

/* }====== */

/* {====== the C interface: LU, TRSM/TRSV, GEMM/GEMV, solves */

/* Launches the LU of variant v (resolved) with flag (may be NULL). */
static odb_status lu_launch(const odb_batch *bt, odb_bgpu_variant v,
                            double *dA, unsigned long long *flag) {
  odb_bgpu_variant r;
  ODB_TRY(odb_bgpu_resolve(bt, ODB_BGPU_OP_LU, v, &r));
  if (r == ODB_BGPU_TEAM) {
    SWITCH_B(bt->b, run_lu_team, bt, dA, flag);
  } else {
    SWITCH_B(bt->b, run_lu_serial, bt, r == ODB_BGPU_SERIAL2 ? 2 : 1, dA,
             flag);
  }
  return launched("batched LU");
}

extern "C" odb_status odb_bgpu_lu_launch(const odb_batch *bt,
                                         odb_bgpu_variant v, double *dA) {
  return lu_launch(bt, v, dA, NULL);
}

extern "C" odb_status odb_bgpu_lu(const odb_batch *bt, odb_bgpu_variant v,
                                  double *dA, long *bad) {
  unsigned long long key = NO_BAD;
  if (bad) *bad = -1;
  ODB_TRY(flag_reset());
  ODB_TRY(lu_launch(bt, v, dA, d_flag));
  ODB_TRY(flag_read(&key));
  ODB_TRY(launched("batched LU"));
  if (key == NO_BAD) return ODB_OK;
  long p = (long)(key / (unsigned long long)bt->b);
  if (bad) *bad = p;
  return ODB_FAIL(ODB_ERR_ARG, "matrix %ld has a zero or tiny pivot at row "
                  "%d (LU without pivoting needs diagonally dominant "
                  "blocks)", p, (int)(key % (unsigned long long)bt->b));
}

/* Refuses kinds outside the enum (right kinds only where right_ok). */
static odb_status check_kind(odb_batched_trsm_kind kind, int right_ok) {
  if (kind == ODB_TRSM_LEFT_LOWER_UNIT || kind == ODB_TRSM_LEFT_UPPER ||
      (right_ok && kind == ODB_TRSM_RIGHT_UPPER))
    return ODB_OK;
  return ODB_FAIL(ODB_ERR_ARG, "triangular solve kind %d is not supported "
                  "here", (int)kind);
}

/* Either triangular solve with m columns. */
static odb_status trsm_any(const odb_batch *bt, odb_bgpu_variant v,
                           odb_batched_trsm_kind kind, int m, const double *T,
                           double *X) {
  odb_bgpu_variant r;
  ODB_TRY(check_kind(kind, m > 1));
  ODB_TRY(odb_bgpu_resolve(bt, ODB_BGPU_OP_TRSM, v, &r));
  if (r == ODB_BGPU_TEAM) {
    SWITCH_B(bt->b, run_trsm_team, bt, (int)kind, m, T, X);
  } else {
    SWITCH_B(bt->b, run_trsm_serial, bt, (int)kind, m, T, X);
  }
  return launched("batched TRSM");
}

extern "C" odb_status odb_bgpu_trsm(const odb_batch *bt, odb_bgpu_variant v,
                                    odb_batched_trsm_kind kind,
                                    const double *dT, double *dX) {
  return trsm_any(bt, v, kind, bt->b, dT, dX);
}

extern "C" odb_status odb_bgpu_trsv(const odb_batch *bt, odb_bgpu_variant v,
                                    odb_batched_trsm_kind kind,
                                    const double *dT, double *dx) {
  return trsm_any(bt, v, kind, 1, dT, dx);
}

/* GEMM with m columns; C aliases neither input. */
static odb_status gemm_any(const odb_batch *bt, odb_bgpu_variant v, int m,
                           double alpha, const double *A, const double *X,
                           double beta, double *C) {
  odb_bgpu_variant r;
  if (C == A || C == X)
    return ODB_FAIL(ODB_ERR_ARG, "gemm/gemv: the output must not alias an "
                    "input");
  ODB_TRY(odb_bgpu_resolve(bt, m > 1 ? ODB_BGPU_OP_GEMM : ODB_BGPU_OP_GEMV,
                           v, &r));
  SWITCH_B(bt->b, run_gemm, bt, r == ODB_BGPU_TEAM, m, alpha, A, X, beta, C);
  return launched("batched GEMM");
}

extern "C" odb_status odb_bgpu_gemm(const odb_batch *bt, odb_bgpu_variant v,
                                    double alpha, const double *dA,
                                    const double *dX, double beta,
                                    double *dC) {
  return gemm_any(bt, v, bt->b, alpha, dA, dX, beta, dC);
}

extern "C" odb_status odb_bgpu_gemv(const odb_batch *bt, odb_bgpu_variant v,
                                    double alpha, const double *dA,
                                    const double *dx, double beta,
                                    double *dy) {
  return gemm_any(bt, v, 1, alpha, dA, dx, beta, dy);
}

extern "C" odb_status odb_bgpu_lu_solve(const odb_batch *bt,
                                        odb_bgpu_variant v, const double *dLU,
                                        double *dx) {
  odb_bgpu_variant r;
  ODB_TRY(odb_bgpu_resolve(bt, ODB_BGPU_OP_SOLVE, v, &r));
  if (r == ODB_BGPU_TEAM) {
    ODB_TRY(trsm_any(bt, r, ODB_TRSM_LEFT_LOWER_UNIT, 1, dLU, dx));
    return trsm_any(bt, r, ODB_TRSM_LEFT_UPPER, 1, dLU, dx);
  }
  SWITCH_B(bt->b, run_solve_serial, bt, r == ODB_BGPU_SERIAL2 ? 2 : 1, dLU,
           dx);
  return launched("batched solve");
}

/* }====== */
