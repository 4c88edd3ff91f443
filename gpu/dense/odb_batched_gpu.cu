/* odb_batched_gpu.cu - batched small dense matrices on the GPU (see
   odb_batched_gpu.h): compact and standard layouts, LU without pivoting,
   TRSM/TRSV, GEMM/GEMV, solves, block-tridiagonal lines, the cuBLAS
   baseline.

   Element (i, j) of matrix p lies at ((p/VL*B + i)*B + j)*VL + p%VL, so a
   thread that owns lane p of a pack reads its matrix with stride VL and the
   threads of a warp, owning consecutive lanes, read consecutive doubles:
   every access is coalesced (the standard layout is VL = 1, where they are
   not). B is a template parameter for 2..16 (the loops unroll and a small
   matrix lives in registers) and 0 for the generic path (B from the
   argument, up to 32). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "odb_batched_gpu.h"
#include "odb_cuda_check.h"
#include "odb_gpulib_check.h"

#define MAXB ODB_BATCHED_MAX_B
#define SERIAL_THREADS 128
#define TINY2 (ODB_BATCHED_PIVOT_TINY * ODB_BATCHED_PIVOT_TINY)
/* Serial LU keeps the matrix in registers while B*B*lanes stays at or
   under this many doubles (B <= 10 with one lane, 7 with two); above it
   it works in place in memory (through the L1 cache). The block-tridiagonal
   factorization holds more per thread and keeps D in registers up to a
   smaller size. */
#define REG_DOUBLES 110
#define BTD_REG_DOUBLES 64
#define NO_BAD 0xFFFFFFFFFFFFFFFFull

/* {====== lane vectors: double (one lane per thread) or double2 (two) */

static __device__ __forceinline__ double2 operator-(double2 a, double2 b) {
  return make_double2(a.x - b.x, a.y - b.y);
}
static __device__ __forceinline__ double2 operator*(double2 a, double2 b) {
  return make_double2(a.x * b.x, a.y * b.y);
}
static __device__ __forceinline__ double2 &operator+=(double2 &a, double2 b) {
  a.x += b.x;
  a.y += b.y;
  return a;
}
static __device__ __forceinline__ double2 &operator-=(double2 &a, double2 b) {
  a.x -= b.x;
  a.y -= b.y;
  return a;
}

template <int LPT> struct lanes_t;
template <> struct lanes_t<1> { typedef double T; };
template <> struct lanes_t<2> { typedef double2 T; };

template <class V> __device__ __forceinline__ V vset(double s);
template <> __device__ __forceinline__ double vset<double>(double s) {
  return s;
}
template <> __device__ __forceinline__ double2 vset<double2>(double s) {
  return make_double2(s, s);
}
static __device__ __forceinline__ double vrcp(double a) { return 1.0 / a; }
static __device__ __forceinline__ double2 vrcp(double2 a) {
  return make_double2(1.0 / a.x, 1.0 / a.y);
}
static __device__ __forceinline__ double lanev(double v, int) { return v; }
static __device__ __forceinline__ double lanev(double2 v, int c) {
  return c ? v.y : v.x;
}
template <class V> __device__ __forceinline__ V ld(const double *p) {
  return *reinterpret_cast<const V *>(p);
}
template <class V> __device__ __forceinline__ void st(double *p, V v) {
  *reinterpret_cast<V *>(p) = v;
}

/* Calls f(integral_constant<int, I>) for I = I0 .. N-1: loops whose index
   is a compile-time constant, so that register arrays are indexed
   statically whatever the compiler's unrolling limits. */
template <int I0, int N, class F> __device__ __forceinline__ void sfor(F &&f) {
  if constexpr (I0 < N) {
    f(std::integral_constant<int, I0>());
    sfor<I0 + 1, N>(f);
  }
}
#define CI(x) decltype(x)::value

/* A B x B matrix of one thread's lanes in registers (B > 0). */
template <class V, int B> struct RegMat {
  V a[B * B];
  /* p: element (0, 0) of the thread's first lane, stride vl. */
  __device__ __forceinline__ void load(const double *p, int vl) {
    sfor<0, B * B>([&](auto e) {
      a[CI(e)] = ld<V>(p + (size_t)CI(e) * vl);
    });
  }
  __device__ __forceinline__ void store(double *p, int vl) {
    sfor<0, B * B>([&](auto e) {
      st<V>(p + (size_t)CI(e) * vl, a[CI(e)]);
    });
  }
};

/* LU without pivoting of a register matrix (as lu_alg below). */
template <int B, class V>
__device__ __forceinline__ void lu_reg(RegMat<V, B> &m, V &fro) {
  fro = vset<V>(0.0);
  sfor<0, B * B>([&](auto e) { fro += m.a[CI(e)] * m.a[CI(e)]; });
  sfor<0, B>([&](auto K) {
    constexpr int k = CI(K);
    V inv = vrcp(m.a[k * B + k]);
    sfor<k + 1, B>([&](auto I) {
      constexpr int i = CI(I);
      V lik = m.a[i * B + k] * inv;
      m.a[i * B + k] = lik;
      sfor<k + 1, B>([&](auto J) {
        m.a[i * B + CI(J)] -= lik * m.a[k * B + CI(J)];
      });
    });
  });
}

/* First refused pivot row of lane c of a register matrix, or -1. */
template <int B, class V>
__device__ __forceinline__ int bad_row_reg(const RegMat<V, B> &m,
                                           const V &fro, int c) {
  double f = lanev(fro, c);
  int bad = -1;
  sfor<0, B>([&](auto K) {
    double u = lanev(m.a[CI(K) * B + CI(K)], c);
    if (bad < 0 && !(u * u > TINY2 * f)) bad = CI(K);
  });
  return bad;
}

/* x := L^{-1} x with L the unit lower part of a register matrix. */
template <int B, class V>
__device__ __forceinline__ void fwd_reg(const RegMat<V, B> &m, V *x) {
  sfor<1, B>([&](auto I) {
    sfor<0, CI(I)>([&](auto K) {
      x[CI(I)] -= m.a[CI(I) * B + CI(K)] * x[CI(K)];
    });
  });
}

/* Row vector y := y U^{-1}, U the upper part of a register matrix; inv
   holds the reciprocals of its diagonal. */
template <int B, class V>
__device__ __forceinline__ void row_bwd_reg(const RegMat<V, B> &m,
                                            const V *inv, V *y) {
  sfor<0, B>([&](auto J) {
    constexpr int j = CI(J);
    V s = y[j];
    sfor<0, j>([&](auto K) { s -= y[CI(K)] * m.a[CI(K) * B + j]; });
    y[j] = s * inv[j];
  });
}

/* The same matrix left in memory (large or runtime B). */
template <class V> struct MemMat {
  double *p;
  int nb, vl;
  __device__ __forceinline__ V &at(int i, int j) {
    return *reinterpret_cast<V *>(p + (size_t)(i * nb + j) * vl);
  }
};

/* }====== */

/* {====== per-thread algorithms (serial variants) */

/*
** LU without pivoting of the matrix behind a (accessor: RegMat or
** MemMat); fro gets the squared Frobenius norm of the input. B > 0: the
** size (loops unroll); B = 0: nb. Multiplies by the pivot's reciprocal as
** the CPU kernels do.
*/
template <int B, class V, class M>
__device__ __forceinline__ void lu_alg(M &a, int nb_rt, V &fro) {
  const int nb = B > 0 ? B : nb_rt;
  fro = vset<V>(0.0);
#pragma unroll
  for (int i = 0; i < nb; ++i)
#pragma unroll
    for (int j = 0; j < nb; ++j) {
      V v = a.at(i, j);
      fro += v * v;
    }
#pragma unroll
  for (int k = 0; k < nb; ++k) {
    V inv = vrcp(a.at(k, k));
#pragma unroll
    for (int i = k + 1; i < nb; ++i) {
      V lik = a.at(i, k) * inv;
      a.at(i, k) = lik;
#pragma unroll
      for (int j = k + 1; j < nb; ++j) a.at(i, j) -= lik * a.at(k, j);
    }
  }
}

/* First row whose final pivot is refused in lane c, or -1 (as the CPU:
   |u_kk|^2 > tiny^2 ||A||_F^2, which also refuses NaN). */
template <int B, class V, class M>
__device__ __forceinline__ int bad_row(M &a, int nb_rt, const V &fro, int c) {
  const int nb = B > 0 ? B : nb_rt;
  double f = lanev(fro, c);
#pragma unroll
  for (int k = 0; k < nb; ++k) {
    double u = lanev(a.at(k, k), c);
    if (!(u * u > TINY2 * f)) return k;
  }
  return -1;
}

/* x := L^{-1} x (unit lower of t), x[i] for i < nb. */
template <int B, class V, class M>
__device__ __forceinline__ void fwd_alg(M &t, int nb_rt, V *x) {
  const int nb = B > 0 ? B : nb_rt;
#pragma unroll
  for (int i = 1; i < nb; ++i)
#pragma unroll
    for (int k = 0; k < i; ++k) x[i] -= t.at(i, k) * x[k];
}

/* x := U^{-1} x (upper of t, diagonal included). */
template <int B, class V, class M>
__device__ __forceinline__ void bwd_alg(M &t, int nb_rt, V *x) {
  const int nb = B > 0 ? B : nb_rt;
#pragma unroll
  for (int i = nb - 1; i >= 0; --i) {
    V s = x[i];
#pragma unroll
    for (int k = i + 1; k < nb; ++k) s -= t.at(i, k) * x[k];
    x[i] = s * vrcp(t.at(i, i));
  }
}

/* Row vector y := y U^{-1} (upper of t). */
template <int B, class V, class M>
__device__ __forceinline__ void row_bwd_alg(M &t, int nb_rt, V *y) {
  const int nb = B > 0 ? B : nb_rt;
#pragma unroll
  for (int j = 0; j < nb; ++j) {
    V s = y[j];
#pragma unroll
    for (int k = 0; k < j; ++k) s -= y[k] * t.at(k, j);
    y[j] = s * vrcp(t.at(j, j));
  }
}

/* Lane of global thread t (LPT lanes each): pack and lane in the pack. */
struct lane_pos {
  long pk;
  int l;
};
static __device__ __forceinline__ lane_pos lane_of(long lane0, int vl) {
  lane_pos q;
  q.pk = lane0 / vl;
  q.l = (int)(lane0 - q.pk * vl);
  return q;
}

/* Whether a serial kernel of B (0: runtime) keeps matrices in registers. */
template <int B, int LPT, int LIMIT = REG_DOUBLES> struct in_regs {
  static const bool value = B > 0 && B * B * LPT <= LIMIT;
};

/* Records the first bad pivot of each lane of this thread. */
template <int B, int LPT, class V, class M>
__device__ __forceinline__ void report_pivots(M &a, int nb, const V &fro,
                                              long lane0, long n,
                                              unsigned long long *flag) {
#pragma unroll
  for (int c = 0; c < LPT; ++c) {
    int k = bad_row<B>(a, nb, fro, c);
    if (k >= 0 && lane0 + c < n)
      atomicMin(flag, (unsigned long long)(lane0 + c) * nb + k);
  }
}

/* }====== */

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
** T threads per line (T = 1, 2 or 4; with T > 1 thread t computes rows t,
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define STREAM_ARCH 1
#else
#define STREAM_ARCH 0
#endif

static __device__ __forceinline__ unsigned smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* Arms mbarrier bar for `bytes` more bytes (and arrives: count 1). */
static __device__ __forceinline__ void mbar_expect(unsigned bar,
                                                   unsigned bytes) {
#if STREAM_ARCH
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(bar), "r"(bytes) : "memory");
#endif
}

/* Bulk copy of `bytes` (a multiple of 16, both ends 16-byte aligned) from
   global src to shared dst, completing on mbarrier bar. */
static __device__ __forceinline__ void bulk_g2s(double *dst,
                                                const double *src,
                                                unsigned bytes, unsigned bar) {
#if STREAM_ARCH
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx"
               "::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}

/* Waits until phase `parity` of mbarrier bar has completed. */
static __device__ __forceinline__ void mbar_wait(unsigned bar,
                                                 unsigned parity) {
#if STREAM_ARCH
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
#endif
}

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
  if (h == 0) mbar_expect(bar, stream_bytes<B, VL>(s, K));
  __syncwarp(mask);
  for (int p = h; p <= B; p += NT) {
    const double *src;
    size_t o;
    unsigned n;
    if (stream_run<B, VL>(s, K, p, pm, xr0, &src, &o, &n))
      bulk_g2s(dst + o, src, 8u * n, bar);
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
  const unsigned bar0 = smem_u32(sm_raw);
  const int steps = 2 * K;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;"
                   :: "r"(bar0 + 8 * s) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncwarp(mask);
  for (int s = 0; s < stages && s < steps; ++s)
    stream_issue<B, VL, NT>(s, K, threadIdx.x, mask, pm, xr0,
                            stg + (size_t)s * sd, bar0 + 8 * s);
  /* step s's stage for this lane, once its copies have landed */
  auto wait = [&](int s) -> const double * {
    const int slot = s % stages;
    mbar_wait(bar0 + 8 * slot, (unsigned)(s / stages) & 1u);
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

/* {====== element-wise kernels: layouts, random data, pointer arrays */

/* Grid-stride loop over total elements. */
#define FOR_ELEMENTS(e, total)                                          \
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;        \
       e < (total); e += (size_t)gridDim.x * blockDim.x)

/* Splits offset e of a (vl, rows, cols) batch into p, i, j. */
static __device__ __forceinline__ void split_at(size_t e, int vl, int rows,
                                                int cols, long *p, int *i,
                                                int *j) {
  size_t l = e % vl, t = e / vl;
  *j = (int)(t % cols);
  t /= cols;
  *i = (int)(t % rows);
  *p = (long)(t / rows) * vl + (long)l;
}

/* dst (vl layout, rows x cols per entry) from standard src; padding gets
   the identity (ident) or zero. transpose: src is column-major. */
__global__ void k_pack(const double *src, double *dst, size_t total, int vl,
                       int rows, int cols, long n, int transpose, int ident) {
  FOR_ELEMENTS(e, total) {
    long p;
    int i, j;
    split_at(e, vl, rows, cols, &p, &i, &j);
    double v;
    if (p < n)
      v = src[((size_t)p * (transpose ? cols : rows) + (transpose ? j : i)) *
                  (transpose ? rows : cols) + (transpose ? i : j)];
    else
      v = ident && i == j ? 1.0 : 0.0;
    dst[e] = v;
  }
}

/* The inverse of k_pack for the n real entries (total = n*rows*cols). */
__global__ void k_unpack(const double *src, double *dst, size_t total,
                         int vl, int rows, int cols, int transpose) {
  FOR_ELEMENTS(e, total) {
    size_t rc = (size_t)rows * cols;
    long p = (long)(e / rc);
    int i = (int)(e % rc / cols), j = (int)(e % cols);
    size_t at = (((size_t)(p / vl) * rows + i) * cols + j) * vl + p % vl;
    size_t to = transpose ? (size_t)p * rc + (size_t)j * rows + i : e;
    dst[to] = src[at];
  }
}

/* Random matrices (rhs: cols = m, unit entries) as on the host. */
__global__ void k_random(double *dst, size_t total, int vl, int b, long n,
                         uint64_t seed, double shift) {
  FOR_ELEMENTS(e, total) {
    long p;
    int i, j;
    split_at(e, vl, b, b, &p, &i, &j);
    dst[e] = p < n ? odb_batched_rand_entry(seed, (uint64_t)p, b, i, j, shift)
                   : (i == j ? 1.0 : 0.0);
  }
}

__global__ void k_random_rhs(double *dst, size_t total, int vl, int b, int m,
                             long n, uint64_t seed) {
  FOR_ELEMENTS(e, total) {
    long p;
    int i, c;
    split_at(e, vl, b, m, &p, &i, &c);
    dst[e] = p < n ? odb_batched_unit(seed ^ ODB_BATCHED_RHS_SEED,
                                      ((uint64_t)p * b + i) * m + c)
                   : 0.0;
  }
}

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

/* out[p] = base + p*stride. */
__global__ void k_ptrs(double **out, double *base, long n, size_t stride) {
  FOR_ELEMENTS(e, (size_t)n) out[e] = base + e * stride;
}

/* }====== */

/* {====== host side: checks, launches */

static unsigned long long *d_flag;   /* pivot flag, allocated on first use */
static cudaEvent_t ev0, ev1;         /* timing events, created on first use */
static cublasHandle_t blas;          /* cuBLAS, created on first use */

/* Reports a failed launch as the kernel's name. */
static odb_status launched(const char *what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return odb_cuda_fail(err, what, __FILE__, __LINE__);
  return ODB_OK;
}

/* Blocks of an element-wise grid-stride launch. */
static unsigned elem_grid(size_t total) {
  size_t g = (total + 255) / 256;
  return g > 8192 ? 8192u : (g < 1 ? 1u : (unsigned)g);
}

/* Lanes a batch covers (padding included). */
static long lanes_of(const odb_batch *bt) { return bt->packs * bt->vl; }

static unsigned serial_grid(long nlanes, int lpt) {
  long threads = (nlanes + lpt - 1) / lpt;
  return (unsigned)((threads + SERIAL_THREADS - 1) / SERIAL_THREADS);
}

/* The pivot flag reset to "none". */
static odb_status flag_reset(void) {
  if (!d_flag)
    ODB_CUDA_CHECK(cudaMalloc((void **)&d_flag, sizeof *d_flag));
  ODB_CUDA_CHECK(cudaMemsetAsync(d_flag, 0xFF, sizeof *d_flag, 0));
  return ODB_OK;
}

/* Waits and reads the pivot flag (NO_BAD: none). */
static odb_status flag_read(unsigned long long *key) {
  ODB_CUDA_CHECK(cudaMemcpy(key, d_flag, sizeof *key,
                            cudaMemcpyDeviceToHost));
  return ODB_OK;
}

/* Calls F<B>(args) with B a constant for 2..16 and 0 (generic) above. */
#define SWITCH_B(b, F, ...)                                             \
  switch (b) {                                                          \
  case 2: F<2>(__VA_ARGS__); break;                                     \
  case 3: F<3>(__VA_ARGS__); break;                                     \
  case 4: F<4>(__VA_ARGS__); break;                                     \
  case 5: F<5>(__VA_ARGS__); break;                                     \
  case 6: F<6>(__VA_ARGS__); break;                                     \
  case 7: F<7>(__VA_ARGS__); break;                                     \
  case 8: F<8>(__VA_ARGS__); break;                                     \
  case 9: F<9>(__VA_ARGS__); break;                                     \
  case 10: F<10>(__VA_ARGS__); break;                                   \
  case 11: F<11>(__VA_ARGS__); break;                                   \
  case 12: F<12>(__VA_ARGS__); break;                                   \
  case 13: F<13>(__VA_ARGS__); break;                                   \
  case 14: F<14>(__VA_ARGS__); break;                                   \
  case 15: F<15>(__VA_ARGS__); break;                                   \
  case 16: F<16>(__VA_ARGS__); break;                                   \
  default: F<0>(__VA_ARGS__); break;                                    \
  }

/* Double2 kernels exist for B <= 8 (two small matrices per thread in
   registers); larger B run them through the generic path. */
#define LPT2_B(B) ((B) > 0 && (B) <= 8 ? (B) : 0)

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
  int tpl;           /* threads per line: 1, 2 or 4 */
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

/* VL 4, 8 or 16; T 2 only for B >= 5 and VL 8 or 16, T 4 only for B >= 5
   and VL 8 (checked by the caller); B = 0 never gets here. */
template <int B>
static void run_btd_stream(const odb_blocktridiag *t, const stream_plan *p,
                           int smem_max, const double *M, double *X) {
  if constexpr (B > 0) {
    int vl = odb_blocktridiag_batch(t)->vl;
    if constexpr (B >= 5) {
      if (p->tpl == 2 && vl == 8)
        return launch_stream<B, 8, 2>(t, p, smem_max, M, X);
      if (p->tpl == 2)
        return launch_stream<B, 16, 2>(t, p, smem_max, M, X);
      if (p->tpl == 4)
        return launch_stream<B, 8, 4>(t, p, smem_max, M, X);
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

static const char *const variant_names[] = { "auto", "serial", "serial2",
                                             "team", "stream" };
static const char *const op_names[] = { "lu", "solve", "trsm", "gemm",
                                        "gemv" };

extern "C" const char *odb_bgpu_variant_name(odb_bgpu_variant v) {
  return (unsigned)v < 5 ? variant_names[v] : "?";
}

extern "C" odb_status odb_bgpu_variant_parse(const char *name,
                                             odb_bgpu_variant *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, variant_names[i]) == 0) {
      *out = (odb_bgpu_variant)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown GPU variant '%s' (known: auto, "
                  "serial, serial2, team, stream)", name ? name : "(null)");
}

extern "C" const char *odb_bgpu_op_name(odb_bgpu_op op) {
  return (unsigned)op < 5 ? op_names[op] : "?";
}

extern "C" odb_status odb_bgpu_op_parse(const char *name, odb_bgpu_op *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, op_names[i]) == 0) {
      *out = (odb_bgpu_op)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown batched op '%s' (known: lu, solve, "
                  "trsm, gemm, gemv)", name ? name : "(null)");
}

/* vl 32 is checked here; the rest by odb_batch_init. */
extern "C" odb_status odb_bgpu_batch_init(odb_batch *bt,
                                          odb_batched_layout layout, long n,
                                          int b, int vl) {
  if (vl == 0) vl = ODB_BGPU_DEFAULT_VL;
  ODB_TRY(odb_batch_init(bt, layout, n, b, vl == 32 ? 16 : vl));
  if (vl == 32 && layout == ODB_LAYOUT_COMPACT) {
    bt->vl = 32;
    bt->packs = (n + 31) / 32;
  }
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_ready(void) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "no usable CUDA device: %s",
                    cudaGetErrorString(err));
  }
  if (n < 1) return ODB_FAIL(ODB_ERR_NO_DEVICE, "no CUDA device present");
  return ODB_OK;
}

/* Thresholds from the H200 runs (scenarios/blocktridiag.lua): LU one
   thread per matrix while it fits in registers without spilling (B <= 8),
   then a thread per row; solves double2 for small B. */
extern "C" odb_bgpu_variant odb_bgpu_pick(const odb_batch *bt,
                                          odb_bgpu_op op) {
  int even = bt->layout == ODB_LAYOUT_COMPACT && bt->vl % 2 == 0;
  switch (op) {
  case ODB_BGPU_OP_LU:
    return bt->b <= 8 ? ODB_BGPU_SERIAL : ODB_BGPU_TEAM;
  case ODB_BGPU_OP_SOLVE:
    if (bt->b <= 6 && even) return ODB_BGPU_SERIAL2;
    return bt->b <= 16 ? ODB_BGPU_SERIAL : ODB_BGPU_TEAM;
  default:
    return bt->b <= 8 ? ODB_BGPU_SERIAL : ODB_BGPU_TEAM;
  }
}

extern "C" odb_status odb_bgpu_resolve(const odb_batch *bt, odb_bgpu_op op,
                                       odb_bgpu_variant v,
                                       odb_bgpu_variant *out) {
  if (v == ODB_BGPU_AUTO) v = odb_bgpu_pick(bt, op);
  if (v == ODB_BGPU_STREAM)
    return ODB_FAIL(ODB_ERR_ARG, "GPU variant stream exists for "
                    "block-tridiagonal solves only, not batched %s",
                    odb_bgpu_op_name(op));
  if (v != ODB_BGPU_SERIAL && v != ODB_BGPU_SERIAL2 && v != ODB_BGPU_TEAM)
    return ODB_FAIL(ODB_ERR_ARG, "GPU variant %d is not auto, serial, "
                    "serial2 or team", (int)v);
  if (v == ODB_BGPU_SERIAL2) {
    if (op != ODB_BGPU_OP_LU && op != ODB_BGPU_OP_SOLVE)
      return ODB_FAIL(ODB_ERR_ARG, "variant serial2 (double2) exists for lu "
                      "and solve only, not %s", odb_bgpu_op_name(op));
    if (bt->layout != ODB_LAYOUT_COMPACT || bt->vl % 2)
      return ODB_FAIL(ODB_ERR_ARG, "variant serial2 (double2) needs the "
                      "compact layout with an even VL (have %s, VL %d)",
                      odb_batched_layout_name(bt->layout), bt->vl);
  }
  *out = v;
  return ODB_OK;
}

extern "C" double odb_bgpu_op_bytes(const odb_batch *bt, odb_bgpu_op op) {
  double n = (double)bt->n, b = bt->b;
  switch (op) {
  case ODB_BGPU_OP_LU: return 8.0 * n * 2 * b * b;
  case ODB_BGPU_OP_SOLVE:
  case ODB_BGPU_OP_GEMV: return 8.0 * n * (b * b + 2 * b);
  default: return 8.0 * n * 3 * b * b;
  }
}

extern "C" odb_status odb_bgpu_alloc(size_t doubles, double **out) {
  *out = NULL;
  ODB_CUDA_CHECK(cudaMalloc((void **)out, sizeof(double) *
                            (doubles ? doubles : 1)));
  return ODB_OK;
}

extern "C" void odb_bgpu_free(void *d) {
  if (d) cudaFree(d);
}

extern "C" odb_status odb_bgpu_upload(double *d, const double *h,
                                      size_t doubles) {
  ODB_CUDA_CHECK(cudaMemcpy(d, h, sizeof(double) * doubles,
                            cudaMemcpyHostToDevice));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_download(double *h, const double *d,
                                        size_t doubles) {
  ODB_CUDA_CHECK(cudaMemcpy(h, d, sizeof(double) * doubles,
                            cudaMemcpyDeviceToHost));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_copy(double *dst, const double *src,
                                    size_t doubles) {
  ODB_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeof(double) * doubles,
                                 cudaMemcpyDeviceToDevice, 0));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_sync(void) {
  ODB_CUDA_CHECK(cudaDeviceSynchronize());
  return launched("a batched kernel");
}

/* Refuses p outside 0..n-1. */
static odb_status check_index(const odb_batch *bt, long p) {
  if (p < 0 || p >= bt->n)
    return ODB_FAIL(ODB_ERR_ARG, "matrix %ld is outside 0..%ld", p,
                    bt->n - 1);
  return ODB_OK;
}

/* One strided 2-D copy: B*B elements VL doubles apart. */
extern "C" odb_status odb_bgpu_get_matrix(const odb_batch *bt,
                                          const double *dA, long p,
                                          double *h) {
  ODB_TRY(check_index(bt, p));
  ODB_CUDA_CHECK(cudaMemcpy2D(h, sizeof(double), dA +
                              odb_batch_mat_at(bt, p, 0, 0),
                              sizeof(double) * bt->vl, sizeof(double),
                              (size_t)bt->b * bt->b,
                              cudaMemcpyDeviceToHost));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_set_matrix(const odb_batch *bt, double *dA,
                                          long p, const double *h) {
  ODB_TRY(check_index(bt, p));
  ODB_CUDA_CHECK(cudaMemcpy2D(dA + odb_batch_mat_at(bt, p, 0, 0),
                              sizeof(double) * bt->vl, h, sizeof(double),
                              sizeof(double), (size_t)bt->b * bt->b,
                              cudaMemcpyHostToDevice));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_pack(const odb_batch *bt, const double *src,
                                    double *dst, int transpose) {
  size_t total = odb_batch_mat_len(bt);
  k_pack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, bt->b,
                                    bt->n, transpose, 1);
  return launched("k_pack");
}

extern "C" odb_status odb_bgpu_unpack(const odb_batch *bt, const double *src,
                                      double *dst, int transpose) {
  size_t total = (size_t)bt->n * bt->b * bt->b;
  k_unpack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, bt->b,
                                      transpose);
  return launched("k_unpack");
}

/* m >= 1 (refused otherwise). */
static odb_status check_m(int m) {
  if (m < 1 || m > MAXB)
    return ODB_FAIL(ODB_ERR_ARG, "right-hand side columns m = %d, allowed "
                    "1..%d", m, MAXB);
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_pack_rhs(const odb_batch *bt, int m,
                                        const double *src, double *dst) {
  ODB_TRY(check_m(m));
  size_t total = odb_batch_rhs_len(bt, m);
  k_pack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, m, bt->n,
                                    0, 0);
  return launched("k_pack (rhs)");
}

extern "C" odb_status odb_bgpu_unpack_rhs(const odb_batch *bt, int m,
                                          const double *src, double *dst) {
  ODB_TRY(check_m(m));
  size_t total = (size_t)bt->n * bt->b * m;
  k_unpack<<<elem_grid(total), 256>>>(src, dst, total, bt->vl, bt->b, m, 0);
  return launched("k_unpack (rhs)");
}

extern "C" odb_status odb_bgpu_random(const odb_batch *bt, uint64_t seed,
                                      double dominance, double *dA) {
  size_t total = odb_batch_mat_len(bt);
  k_random<<<elem_grid(total), 256>>>(dA, total, bt->vl, bt->b, bt->n, seed,
                                      dominance * bt->b);
  return launched("k_random");
}

extern "C" odb_status odb_bgpu_random_rhs(const odb_batch *bt, int m,
                                          uint64_t seed, double *dx) {
  ODB_TRY(check_m(m));
  size_t total = odb_batch_rhs_len(bt, m);
  k_random_rhs<<<elem_grid(total), 256>>>(dx, total, bt->vl, bt->b, m, bt->n,
                                          seed);
  return launched("k_random_rhs");
}

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

extern "C" odb_status odb_bgpu_mark(void) {
  if (!ev0) {
    ODB_CUDA_CHECK(cudaEventCreate(&ev0));
    ODB_CUDA_CHECK(cudaEventCreate(&ev1));
  }
  ODB_CUDA_CHECK(cudaEventRecord(ev0, 0));
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_elapsed(double *seconds) {
  float ms = 0;
  if (!ev0)
    return ODB_FAIL(ODB_ERR_ARG, "odb_bgpu_elapsed without odb_bgpu_mark");
  ODB_CUDA_CHECK(cudaEventRecord(ev1, 0));
  ODB_CUDA_CHECK(cudaEventSynchronize(ev1));
  ODB_TRY(launched("a timed kernel"));
  ODB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
  *seconds = ms * 1e-3;
  return ODB_OK;
}

/* Median of 7 timed copies after a warm-up. */
extern "C" odb_status odb_bgpu_copy_bandwidth(size_t bytes, double *gbs) {
  double *a = NULL, *b = NULL, t[7];
  odb_status st;
  if (bytes == 0) bytes = (size_t)512 << 20;
  size_t nd = bytes / sizeof(double);
  st = odb_bgpu_alloc(nd, &a);
  if (st == ODB_OK) st = odb_bgpu_alloc(nd, &b);
  if (st == ODB_OK) st = odb_bgpu_copy(b, a, nd);
  for (int r = 0; r < 7 && st == ODB_OK; ++r) {
    st = odb_bgpu_mark();
    if (st == ODB_OK) st = odb_bgpu_copy(r & 1 ? a : b, r & 1 ? b : a, nd);
    if (st == ODB_OK) st = odb_bgpu_elapsed(&t[r]);
  }
  odb_bgpu_free(a);
  odb_bgpu_free(b);
  if (st != ODB_OK) return st;
  for (int i = 1; i < 7; ++i)
    for (int k = i; k > 0 && t[k - 1] > t[k]; --k) {
      double x = t[k];
      t[k] = t[k - 1];
      t[k - 1] = x;
    }
  *gbs = 2.0 * (double)(nd * sizeof(double)) / t[3] * 1e-9;
  return ODB_OK;
}

/* {------ cuBLAS */

struct odb_bgpu_blas {
  long n;
  int b, pivot;
  double **ap, **xp;   /* device pointer arrays */
  int *piv, *info;     /* device: n*b pivots, n infos */
};

/* The handle, created on first use and kept. */
static odb_status blas_handle(void) {
  if (blas) return ODB_OK;
  cublasStatus_t s = cublasCreate(&blas);
  if (s != CUBLAS_STATUS_SUCCESS) blas = NULL;
  return ODB_CUBLAS_STATUS(s, "cublasCreate");
}

extern "C" void odb_bgpu_blas_free(odb_bgpu_blas *h) {
  if (!h) return;
  odb_bgpu_free(h->ap);
  odb_bgpu_free(h->xp);
  odb_bgpu_free(h->piv);
  odb_bgpu_free(h->info);
  free(h);
}

extern "C" odb_status odb_bgpu_blas_new(long n, int b, double *dA, double *dx,
                                        int pivot, odb_bgpu_blas **out) {
  odb_bgpu_blas *h = NULL;
  odb_status st = ODB_OK;
  cudaError_t err = cudaSuccess;
  *out = NULL;
  if (n < 1 || n > 0x7fffffffL || b < ODB_BATCHED_MIN_B ||
      b > ODB_BATCHED_MAX_B)
    return ODB_FAIL(ODB_ERR_ARG, "cuBLAS batch: n = %ld (1..2^31-1) or B = "
                    "%d (%d..%d) out of range", n, b, ODB_BATCHED_MIN_B,
                    ODB_BATCHED_MAX_B);
  ODB_TRY(blas_handle());
  h = (odb_bgpu_blas *)calloc(1, sizeof *h);
  if (!h) return ODB_FAIL(ODB_ERR_NOMEM, "cuBLAS batch: no memory");
  h->n = n;
  h->b = b;
  h->pivot = pivot != 0;
  err = cudaMalloc((void **)&h->ap, sizeof(double *) * n);
  if (err == cudaSuccess)
    err = cudaMalloc((void **)&h->xp, sizeof(double *) * n);
  if (err == cudaSuccess)
    err = cudaMalloc((void **)&h->piv, sizeof(int) * n * b);
  if (err == cudaSuccess) err = cudaMalloc((void **)&h->info, sizeof(int) * n);
  if (err != cudaSuccess) {
    st = odb_cuda_fail(err, "cudaMalloc (cuBLAS batch arrays)", __FILE__,
                       __LINE__);
    goto fail;
  }
  k_ptrs<<<elem_grid(n), 256>>>(h->ap, dA, n, (size_t)b * b);
  k_ptrs<<<elem_grid(n), 256>>>(h->xp, dx, n, (size_t)b);
  st = launched("k_ptrs");
  if (st != ODB_OK) goto fail;
  *out = h;
  return ODB_OK;
fail:
  odb_bgpu_blas_free(h);
  return st;
}

extern "C" odb_status odb_bgpu_blas_lu(odb_bgpu_blas *h, long *bad) {
  cublasStatus_t s = cublasDgetrfBatched(blas, h->b, h->ap, h->b,
                                         h->pivot ? h->piv : NULL, h->info,
                                         (int)h->n);
  ODB_TRY(ODB_CUBLAS_STATUS(s, "cublasDgetrfBatched"));
  if (!bad) return ODB_OK;
  *bad = -1;
  int *info = (int *)malloc(sizeof(int) * h->n);
  if (!info) return ODB_FAIL(ODB_ERR_NOMEM, "cuBLAS batch: no memory");
  cudaError_t err = cudaMemcpy(info, h->info, sizeof(int) * h->n,
                               cudaMemcpyDeviceToHost);
  for (long p = 0; err == cudaSuccess && p < h->n; ++p)
    if (info[p] != 0) {
      *bad = p;
      break;
    }
  free(info);
  if (err != cudaSuccess)
    return odb_cuda_fail(err, "cudaMemcpy (cuBLAS info)", __FILE__, __LINE__);
  if (*bad >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "cuBLAS: matrix %ld is singular (info != 0)",
                    *bad);
  return ODB_OK;
}

extern "C" odb_status odb_bgpu_blas_solve(odb_bgpu_blas *h) {
  int info = 0;
  cublasStatus_t s = cublasDgetrsBatched(
    blas, CUBLAS_OP_N, h->b, 1, (const double *const *)h->ap, h->b,
    h->pivot ? h->piv : NULL, h->xp, h->b, &info, (int)h->n);
  ODB_TRY(ODB_CUBLAS_STATUS(s, "cublasDgetrsBatched"));
  if (info != 0)
    return ODB_FAIL(ODB_ERR_ARG, "cublasDgetrsBatched: argument %d is "
                    "invalid", -info);
  return ODB_OK;
}

/* }------ */

/* {------ block-tridiagonal lines */

/* The current device's compute capability (major), opt-in shared memory
   per block, shared memory per SM, reserved per block, and SMs: asked
   once. */
static int dev_major = -1, dev_smem_optin, dev_smem_sm, dev_smem_rsv,
           dev_sms;
static void dev_props(void) {
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

/* Why the stream solve cannot run on t (quiet: NULL when it can). */
static const char *stream_unfit(const odb_blocktridiag *t) {
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
/* Two threads per line from this B up (VL 8 and 16): they share the
   block-vector products, whose per-step instruction chains limit a single
   thread per line (H200, scenarios/blocktridiag.lua: B = 9 and 10 at VL 16
   87.6 and 77.0% of the copy bandwidth with one thread, 88.3 and 85.7%
   with two; B = 5 and 7 within 1% either way). */
#define STREAM_T2_B 9

/* Blocks of smem bytes resident per SM (at most 32). */
static long stream_per_sm(size_t smem) {
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
  if (tpl == 0)
    tpl = bt->b >= STREAM_T2_B && bt->vl >= 8 ? 2 : 1;
  if (!(tpl == 1 || (tpl == 2 && bt->b >= 5 && bt->vl >= 8) ||
        (tpl == 4 && bt->b >= 5 && bt->vl == 8)))
    return ODB_FAIL(ODB_ERR_ARG, "stream solve: %d threads per line on B "
                    "%d, VL %d; allowed 1, 2 (B >= 5, VL 8 or 16) and 4 "
                    "(B >= 5, VL 8), 0: automatic", tpl, bt->b, bt->vl);
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

/* The stream solve where it runs (compact layout, VL 4, 8 or 16, B <= 16,
   sm_90): 79 to 88% of the copy bandwidth for B 3 to 10 at VL 16 on the
   H200, against 31 to 67% for the team and serial kernels. Else
   the team kernels wherever they exist (B <= 16): a line's B rows on B
   threads give B times the parallelism, which larger B need most; the
   H200 runs had the serial solve ahead for B <= 3 only. */
extern "C" odb_bgpu_variant odb_bgpu_btd_pick(const odb_blocktridiag *t,
                                              int solve) {
  int b = odb_blocktridiag_batch(t)->b;
  if (solve && !stream_unfit(t)) return ODB_BGPU_STREAM;
  if (b > 16 || (solve && b <= 3)) return ODB_BGPU_SERIAL;
  return ODB_BGPU_TEAM;
}

extern "C" odb_status odb_bgpu_btd_resolve(const odb_blocktridiag *t,
                                           odb_bgpu_variant v, int solve,
                                           odb_bgpu_variant *out) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  if (v == ODB_BGPU_AUTO || (v == ODB_BGPU_STREAM && !solve))
    v = odb_bgpu_btd_pick(t, solve);
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
      return ODB_FAIL(ODB_ERR_ARG, "block-tridiagonal GPU solve: variant "
                      "stream needs %s (have %s, VL %d, B %d)", why,
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
   1 serial, 2 serial2, 3 team, 4 stream (solve only). */
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
  unsigned long long key = NO_BAD;
  int K = odb_blocktridiag_length(t);
  if (bad_line) *bad_line = -1;
  ODB_TRY(flag_reset());
  ODB_TRY(btd_factor_launch(t, v, dm, d_flag));
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
