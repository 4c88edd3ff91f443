/* odb_batched_gpu.cuh - what the files of the GPU batched family share
   (odb_batched_gpu.cu: host glue, odb_batched_compact.cu: LU, TRSM/TRSV,
   GEMM/GEMV, odb_batched_btd.cu: block-tridiagonal lines,
   odb_batched_cublas.cu: the cuBLAS baseline): the constants, the lane
   vectors and the per-thread algorithms of the kernels, and the host
   helpers of the launches. Not a public header (see odb_batched_gpu.h).

   Element (i, j) of matrix p lies at ((p/VL*B + i)*B + j)*VL + p%VL, so a
   thread that owns lane p of a pack reads its matrix with stride VL and the
   threads of a warp, owning consecutive lanes, read consecutive doubles:
   every access is coalesced (the standard layout is VL = 1, where they are
   not). This is the compact layout of "Designing vector-friendly compact
   BLAS and LAPACK kernels" (KokkosKernels, SC17). B is a template
   parameter for 2..16 (the loops unroll and a small matrix lives in
   registers) and 0 for the generic path (B from the argument, up to 32). */
#ifndef ODB_BATCHED_GPU_CUH
#define ODB_BATCHED_GPU_CUH

#include <cuda_runtime.h>

#include <type_traits>

#include "odb_batched_gpu.h"
#include "odb_cuda_check.h"

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

/* {====== host helpers of the launches (odb_batched_gpu.cu) */

/* Grid-stride loop over total elements. */
#define FOR_ELEMENTS(e, total)                                          \
  for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;        \
       e < (total); e += (size_t)gridDim.x * blockDim.x)

extern unsigned long long *d_flag;   /* pivot flag, allocated on first use */

/* Reports a failed launch as the kernel's name. */
static inline odb_status launched(const char *what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return odb_cuda_fail(err, what, __FILE__, __LINE__);
  return ODB_OK;
}

/* Blocks of an element-wise grid-stride launch. */
static inline unsigned elem_grid(size_t total) {
  size_t g = (total + 255) / 256;
  return g > 8192 ? 8192u : (g < 1 ? 1u : (unsigned)g);
}

/* Lanes a batch covers (padding included). */
static inline long lanes_of(const odb_batch *bt) { return bt->packs * bt->vl; }

static inline unsigned serial_grid(long nlanes, int lpt) {
  long threads = (nlanes + lpt - 1) / lpt;
  return (unsigned)((threads + SERIAL_THREADS - 1) / SERIAL_THREADS);
}

/* The pivot flag reset to "none". */
odb_status flag_reset(void);

/* Waits and reads the pivot flag (NO_BAD: none). */
odb_status flag_read(unsigned long long *key);

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

/* {------ the stream kernels (odb_batched_btd.cu: the solve, the plans'
   device figures; odb_btd_factor_stream.cu: the factor) */

/* The current device's compute capability (major), opt-in shared memory
   per block, shared memory per SM, reserved per block, and SMs, asked once
   by dev_props (all 0 where the device does not answer). */
extern int dev_major, dev_smem_optin, dev_smem_sm, dev_smem_rsv, dev_sms;
void dev_props(void);
/* Why the stream kernels cannot run on t (compact layout with VL 4, 8 or
   16, B <= 16, length <= 2^29, compute capability 9.0), NULL when they
   can; asks dev_props. */
const char *stream_unfit(const odb_blocktridiag *t);
/* Blocks of smem bytes of dynamic shared memory resident per SM (at most
   32). */
long stream_per_sm(size_t smem);
/* Waits for a factorization launched with d_flag and reports its refused
   pivot: ODB_ERR_ARG naming the lowest line and its block row (*bad_line,
   when not NULL, gets the line; left as it is on success). */
odb_status btd_flag_result(const odb_blocktridiag *t, long *bad_line);
/* Launches the stream factor with stages, threads per line and kernel
   (0 and ODB_BTD_KERNEL_AUTO: automatic) reporting refused pivots into
   flag (NULL: d_flag, reset); does not wait. */
odb_status btd_factor_stream_launch(const odb_blocktridiag *t, int stages,
                                    int threads_per_line,
                                    odb_btd_kernel kernel, double *dm,
                                    unsigned long long *flag);
/* }------ */

/* Double2 kernels exist for B <= 8 (two small matrices per thread in
   registers); larger B run them through the generic path. */
#define LPT2_B(B) ((B) > 0 && (B) <= 8 ? (B) : 0)

/* }====== */

#endif
