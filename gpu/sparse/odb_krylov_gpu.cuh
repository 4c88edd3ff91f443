/* odb_krylov_gpu.cuh - what the files of the GPU Krylov solvers share
** (odb_krylov_gpu.cu: common host pieces, the dispatcher and the SpMV
** timing; odb_krylov_cusparse.cu, odb_krylov_fused.cu,
** odb_krylov_persistent.cu: the three implementations): the device
** reductions, the argument block of the persistent kernel and the
** workspaces of the implementations. Not a public header (see
** odb_krylov_gpu.h).
**
** All three implementations and the CPU reference (core/sparse/krylov.c)
** run the one scalar state machine of core/sparse/odb_krylov_state.h
** (kstate and its steps, host and device): the same recurrences, the same
** breakdown tests (rho, omega, QMR's delta/eps/gamma), the same stagnation
** window and maxit, the same history and messages. Only the order of the
** floating-point sums differs, so iteration counts agree with the CPU up
** to rounding.
*/
#ifndef ODB_KRYLOV_GPU_CUH
#define ODB_KRYLOV_GPU_CUH

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
#include "odb_krylov_state.h"
#include "odb_sparse_gpu.h"

enum { FB = 256 };                 /* threads per block of the fused kernels */
enum { PK_LANES = 4 };             /* threads per CSR row in the persistent kernel */
enum { PK_CSR = 0, PK_BDIA = 1 };

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

/* {====== sums across the GPUs of one host
**
** The fused kernels of GPU ranks that each drive a GPU of their own on one
** host (dist/sparse/odb_dist_link.cu sets this up): the thread that holds
** a rank's sums of a group writes them into a slot of every other rank's
** mailbox, waits for theirs in its own, and adds all of them in rank
** order from 0, so that every rank gets the same bits and the state
** machine takes the same decisions on every GPU with no host round trip.
** A slot is written before its seq (a system fence between); two
** parities suffice because a rank cannot start reduction j + 2 before
** every rank has finished j + 1, hence read j.
*/
enum { KX_MAX = 8 };               /* ranks at most */

typedef struct kx_slot {
  double v[4];
  long long seq, pad_;             /* the reduction's number, after v */
} kx_slot;

typedef struct odb_kxsum {
  kx_slot *box[KX_MAX];            /* rank q's slots [parity][from rank], mapped */
  long long *seq;                  /* reductions this rank has made */
  unsigned *fail;                  /* set when a rank did not answer in time */
  long long timeout_ns;
  int rank, size;
} odb_kxsum;

/* v[0..nr) replaced by its sum over the ranks (xs NULL: one GPU, left
** as is). Called by the one thread that holds the rank's sums. A rank
** that did not answer within timeout_ns, now or before: xs->fail set,
** the solve stopped as a breakdown, and 1 returned (the host reports the
** lost rank, odb_dist_link.h). */
__device__ static int kx_allsum(const odb_kxsum *xs, double *v, int nr, kstate *st) {
  if (!xs) return 0;
  if (*(volatile unsigned *)xs->fail) {
    ks_break(st, ODB_KRY_BREAKDOWN_OTHER);
    return 1;
  }
  const long long seq = *xs->seq + 1;
  const int par = (int)(seq & 1), me = xs->rank, R = xs->size;
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  *xs->seq = seq;
  for (int q = 0; q < R; q++)
    if (q != me)
      for (int j = 0; j < nr; j++) xs->box[q][par * KX_MAX + me].v[j] = v[j];
  __threadfence_system();
  for (int q = 0; q < R; q++)
    if (q != me) *(volatile long long *)&xs->box[q][par * KX_MAX + me].seq = seq;
  const unsigned long long t0 = gtimer();
  for (int q = 0; q < R; q++) {
    if (q == me) {
      for (int j = 0; j < nr; j++) s[j] += v[j];
      continue;
    }
    const kx_slot *in = xs->box[me] + par * KX_MAX + q;
    while (*(const volatile long long *)&in->seq != seq)
      if ((long long)(gtimer() - t0) > xs->timeout_ns) {
        atomicOr(xs->fail, 1u);
        ks_break(st, ODB_KRY_BREAKDOWN_OTHER);
        return 1;
      }
    __threadfence_system();
    for (int j = 0; j < nr; j++) s[j] += *(const volatile double *)&in->v[j];
  }
  for (int j = 0; j < nr; j++) v[j] = s[j];
  return 0;
}

/* }====== */

/* {====== the persistent kernel's arguments */

/* The halo of the persistent kernel on GPU ranks of one host
** (dist/sparse/odb_dist_link.cu fills it from its link): each exchange
** packs the values the receivers need into this rank's send buffer, says
** so in their mailboxes (ready), waits for the senders' word, copies
** their values into the ghosts (from nloc on) and tells them (copied);
** the send buffer is written again only once every receiver has copied.
** Exchanges are numbered on from e0, the link's count, so that the
** kernel's words continue those of the fused solvers' pack and fetch. */
typedef struct pk_halo {
  int on;                          /* several ranks: exchange before every SpMV */
  long long nloc;                  /* own entries; the ghosts follow */
  const int32_t *idx;              /* ns own indices, packed in order */
  double *out;                     /* this rank's send buffer (ns) */
  long long ns;
  int nto, nfrom;
  unsigned long long *ready_to[KX_MAX];         /* receivers' ready[me], mapped */
  unsigned long long *copied_to[KX_MAX];        /* senders' copied[me], mapped */
  const unsigned long long *ready[KX_MAX];      /* this mailbox: sender j's word */
  const unsigned long long *copied[KX_MAX];     /* this mailbox: receiver k's word */
  const double *src[KX_MAX];       /* senders' buffers at our values, mapped */
  long long dst[KX_MAX], count[KX_MAX];        /* ghost offset, doubles */
  unsigned *fail;                  /* the link's: a wait gave up */
  unsigned long long e0;           /* exchanges made before the launch */
  unsigned long long *e_out;       /* exchanges made by the end (device) */
} pk_halo;

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
  /* GPU ranks of one host: the sums of every group over the ranks (NULL:
     one GPU) and the SpMV's halo */
  const odb_kxsum *xs;
  pk_halo h;
} pk_args;

/* }====== */

/* {====== host: common pieces (odb_krylov_gpu.cu) */

/* Reduction scratch of the fused kernels and the true residual. */
typedef struct red_scratch {
  int grid;
  double *part, *out;
  unsigned *ticket;
} red_scratch;

/* Events around a solve. */
typedef struct ktimer { cudaEvent_t a, b; } ktimer;

/* What every impl hands back to the dispatcher. */
typedef struct kout {
  kstate st;
  double *hist;          /* host, maxit + 2 */
  double seconds, rtrue; /* solve time; ||b - A x|| */
} kout;

/* Device allocation; out of memory names the size and what it was for. */
odb_status dalloc(void *pp, size_t bytes, const char *what);
/* Host -> new device copy. */
odb_status dupload(void *pp, const void *src, size_t bytes, const char *what);
void dfree(void *p);
odb_status red_alloc(red_scratch *r, long n, int sms);
void red_free(red_scratch *r);
/* ||b - y|| for device vectors (waits). */
odb_status diff_norm(red_scratch *r, long n, const double *b, const double *y, double *out);
int sm_count(void);
/* CSR of A^T (A CSR), built on the host by odb_sparse_transpose. */
odb_status csr_transpose(const odb_sparse *A, odb_sparse **out);
odb_status timer_start(ktimer *t);
odb_status timer_stop(ktimer *t, double *seconds);
void timer_free(ktimer *t);

/* }====== */

/* {====== the implementations' workspaces and entries */

/* impl "cusparse" (odb_krylov_cusparse.cu) */
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

void cs_free(cs_ws *w);
/* CSR with 32-bit indices on the device, nv vectors with descriptors, the
** SpMV work buffer (for A^T too when trans). */
odb_status cs_setup(cs_ws *w, const odb_sparse *A, int nv, int trans);
/* v[y] = op(A) v[x]. */
odb_status cs_spmv(cs_ws *w, int trans, int x, int y);
/* The whole cusparse solve on workspace w (set up by the caller). */
odb_status cs_run(cs_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         kout *o);

/* impl "fused" (odb_krylov_fused.cu) */
typedef struct fz_ws {
  odb_sparse_gpu *g, *gt;        /* A; A^T (QMR) */
  odb_sparse *At;
  double *v[14];
  kstate *st;
  double *hist;
  kstate *pin;                   /* pinned, 2 */
  cudaEvent_t ev[2];
  red_scratch red;
  /* GPU ranks (dist/sparse/odb_dist_krylov_gpu.cu): y = A x (trans 0)
     or A^T x (1) through spmv(ctx, ...) instead of g and gt, and the
     sums of every group over the ranks (xs, device memory); NULL: one
     GPU */
  odb_status (*spmv)(void *ctx, int trans, const double *x, double *y);
  void *ctx;
  const odb_kxsum *xs;
} fz_ws;

void fz_free(fz_ws *w);
odb_status fz_run(fz_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         kout *o);
/* The solve on a workspace whose vectors (BiCGStab: 0 r, 1 rhat, 2 p,
** 3 v, 4 s, 5 t, 6 x, 7 b; QMR: 0 r, 1 vt, 2 wt, 3 v, 4 w, 5 p, 6 q,
** 7 pt, 8 d, 9 s, 10 x, 11 b, 12 A^T q), state, history, pinned copies,
** events and reduction scratch are made, x and b set: the state s0 to the
** device, then the iterations, the host polling the state. n rows. Does
** not wait for the last iteration. */
odb_status fz_loop(fz_ws *w, odb_krylov_method m, long n, const kstate *s0);

/* impl "persistent" (odb_krylov_persistent.cu) */
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
  /* GPU ranks (dist/sparse/odb_dist_krylov_gpu.cu): vectors of ext
     entries (own and ghosts; 0: n), no true residual here (the caller's
     SpMV has the halo), and the exchanges the kernel made */
  long ext;
  int ranks;
  unsigned long long *e_d, xchg;
  /* CSR already on the device (a.rp, a.ci, a.va set, owned by the
     caller: pk_run uploads nothing and pk_free frees none of it) */
  int borrowed;
  /* called right before the solve's launch (NULL: nothing): the ranks
     start their kernels together, so that none times its wait for
     another's set-up */
  odb_status (*before)(void *ctx);
  void *ctx;
} pk_ws;

void pk_free(pk_ws *w);
/* Uploads the matrix arrays the in-kernel SpMV reads (CSR, A^T for QMR,
** or Bdia with a column -> well map built from b[w]). */
odb_status pk_upload(pk_ws *w, const odb_sparse *A);
/* The launch shape (and, where asked, the tuned candidate); spmv_only:
** the candidate with the fastest SpMV kernel. */
odb_status pk_shape(pk_ws *w, const odb_krylov_gpu_opts *o, odb_krylov_gpu_info *info, int spmv_only);
/* y = A x with the persistent kernel's SpMV on grid x block (no wait). */
odb_status pk_spmv_launch(const pk_ws *w, const double *x, double *y);
/* The solve: shape (and tuning), upload (none when w->borrowed: then A
** gives only the order n and the format, CSR), one launch, watchdog
** check, results. */
odb_status pk_run(pk_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         const odb_krylov_gpu_opts *o, kout *out, odb_krylov_gpu_info *info);

/* }====== */

#endif
