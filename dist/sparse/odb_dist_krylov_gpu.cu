/* odb_dist_krylov_gpu.cu - BiCGStab, QMR and pipelined BiCGStab on GPU
** ranks (odb_dgpu_krylov, odb_dist_gpu.h).
**
** The loops of odb_dist_krylov.c step for step: the same state machine
** (core/sparse/odb_krylov_state.h) takes every scalar and decision on the
** host, the same groups of dot products go through the same fixed-order
** reductions (odb_dist_red.h), so all ranks take the same decisions. What
** moves to the device: the vectors, their updates (one kernel a group of
** updates, in the CPU loop's expressions) and the rank's part of every
** dot product (a block-partial kernel, then one block adding the partials
** in block order: the same bits on every run). The partial sums come back
** with one copy a group, which is also the only wait of the host on the
** device within an iteration besides the SpMV's exchange. The device
** contracts a * b + c into fused multiply-adds where the CPU rounds twice,
** so the residuals differ in the last bits from a CPU rank's and the
** iteration counts may differ by one or two (tests/mpi/dist_sparse_gpu.lua
** checks within 2 of the one-process solver).
**
** Where the scalar work runs on the device (odb_dgpu_krylov_control):
** BiCGStab and QMR are the fused solvers of gpu/sparse/odb_krylov_fused.cu
** (fz_loop) over the distributed SpMV, their sums added over the ranks
** in the kernels (odb_kxsum, through the link of odb_dist_link.h), so no
** reduction and no halo waits for a host; the loops here stay for the
** pipelined BiCGStab and for ranks without the link.
**
** Assumes: what odb_dist_gpu.cu assumes; b and x are the rank's nloc
** entries on the host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "odb_cuda_check.h"
#include "odb_dist_link.h"
/* odb_dist.h includes mpi.h in MPI builds: its C interface only */
#define OMPI_SKIP_MPICXX 1
extern "C" {
#include "odb_dist.h"
#include "odb_clock.h"
#include "odb_dist_gpu.h"
#include "odb_dist_red.h"
}
#include "odb_krylov_state.h"

enum { KB = 256, DOT_GRID_MAX = 1024 };

#define GS(i, n) for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

/* out = x + a z (out may be x or z). */
__global__ void k_axpy(long n, double *out, const double *x, double a, const double *z) {
  GS(i, n) out[i] = x[i] + a * z[i];
}
/* out = a + c1 (b - c2 d) (out may be any of them). */
__global__ void k_nest(long n, double *out, const double *a, double c1, const double *b, double c2,
                       const double *d) {
  GS(i, n) out[i] = a[i] + c1 * (b[i] - c2 * d[i]);
}
/* v = vt / rho; p = v - cp p (QMR's v, p and w, q). */
__global__ void k_divsub(long n, double *v, const double *vt, double rho, double *p, double cp) {
  GS(i, n) { double t = vt[i] / rho; v[i] = t; p[i] = t - cp * p[i]; }
}
/* y = a x + c y. */
__global__ void k_lin(long n, double *y, double a, const double *x, double c) {
  GS(i, n) y[i] = a * x[i] + c * y[i];
}
/* BiCGStab's x += alpha p + omega s; r = s - omega t. */
__global__ void k_xr(long n, double *x, double *r, double alpha, const double *p, double omega,
                     const double *s, const double *t) {
  GS(i, n) { x[i] += alpha * p[i] + omega * s[i]; r[i] = s[i] - omega * t[i]; }
}

typedef struct { const double *a[ODB_DRED_MAX], *b[ODB_DRED_MAX]; } dot_args;

/* Block partials of m dots a_j . b_j: part[blk * m + j]. blockDim KB. */
__global__ void k_dots(long n, int m, dot_args v, double *part) {
  __shared__ double sh[ODB_DRED_MAX][KB / 32];
  double s[ODB_DRED_MAX];
  for (int j = 0; j < ODB_DRED_MAX; j++) s[j] = 0.0;
  GS(i, n)
    for (int j = 0; j < m; j++) s[j] += v.a[j][i] * v.b[j][i];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int j = 0; j < m; j++) {
    double t = s[j];
    for (int o = 16; o > 0; o >>= 1) t += __shfl_down_sync(0xffffffffu, t, o);
    if (lane == 0) sh[j][w] = t;
  }
  __syncthreads();
  if (threadIdx.x < m) {
    double t = 0.0;
    for (int q = 0; q < KB / 32; q++) t += sh[threadIdx.x][q];
    part[(size_t)blockIdx.x * m + threadIdx.x] = t;
  }
}
/* The partials of nb blocks added in block order: out[j]. One block. */
__global__ void k_dots_sum(int nb, int m, const double *part, double *out) {
  if (threadIdx.x < m) {
    double t = 0.0;
    for (int q = 0; q < nb; q++) t += part[(size_t)q * m + threadIdx.x];
    out[threadIdx.x] = t;
  }
}

/* The work space of one solve. */
typedef struct {
  long n;                       /* rows of the rank */
  unsigned grid, dgrid;         /* vector kernels, dot kernel */
  double *part, *dsum;          /* DOT_GRID_MAX * ODB_DRED_MAX, ODB_DRED_MAX */
  double *sum_h;                /* pinned host copy of the group's sums */
  odb_dred *d;
} kws;

#define TRY(x) do { if ((st = (x)) != ODB_OK) goto out; } while (0)
#define CUTRY(call) do { cudaError_t e_ = (call); \
  if (e_ != cudaSuccess) { st = odb_cuda_fail(e_, #call, __FILE__, __LINE__); goto out; } } while (0)
#define LAUNCH(kern, ...) do { kern<<<w->grid, KB>>>(__VA_ARGS__); CUTRY(cudaGetLastError()); } while (0)

/* The rank's m dots of pairs (a[j], b[j]) into the reduction's loc[]. */
static odb_status dots(kws *w, int m, const double *const *a, const double *const *b) {
  dot_args v;
  odb_status st = ODB_OK;
  for (int j = 0; j < ODB_DRED_MAX; j++) { v.a[j] = j < m ? a[j] : a[0]; v.b[j] = j < m ? b[j] : b[0]; }
  k_dots<<<w->dgrid, KB>>>(w->n, m, v, w->part);
  CUTRY(cudaGetLastError());
  k_dots_sum<<<1, 32>>>((int)w->dgrid, m, w->part, w->dsum);
  CUTRY(cudaGetLastError());
  CUTRY(cudaMemcpy(w->sum_h, w->dsum, (size_t)m * sizeof(double), cudaMemcpyDeviceToHost));
  memcpy(odb_dred_loc(w->d), w->sum_h, (size_t)m * sizeof(double));
out:
  return st;
}
#define DOTS(m, ...) do { const double *ab_[] = {__VA_ARGS__}; const double *a_[ODB_DRED_MAX], *b_[ODB_DRED_MAX]; \
  for (int j_ = 0; j_ < (m); j_++) { a_[j_] = ab_[2 * j_]; b_[j_] = ab_[2 * j_ + 1]; } \
  TRY(dots(w, (m), a_, b_)); } while (0)

/* BiCGStab: odb_dist_krylov.c's loop; v holds 6 device vectors of length ext. */
static odb_status bicgstab(odb_dsparse *A, kws *w, const double *b, double *x, kstate *ks,
                           double *hist, double *v0, long ext) {
  long n = w->n;
  double *r = v0, *rh = v0 + ext, *p = v0 + 2 * ext, *v = v0 + 3 * ext, *s = v0 + 4 * ext, *t = v0 + 5 * ext;
  const double *sum = odb_dred_sum(w->d);
  odb_status st = ODB_OK;
  TRY(odb_dgpu_spmv(A, x, r));
  LAUNCH(k_axpy, n, r, b, -1.0, r);
  CUTRY(cudaMemcpyAsync(rh, r, (size_t)n * sizeof *r, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
  CUTRY(cudaMemsetAsync(p, 0, (size_t)n * sizeof *p, cudaStreamLegacy));
  CUTRY(cudaMemsetAsync(v, 0, (size_t)n * sizeof *v, cudaStreamLegacy));
  DOTS(1, r, r);
  TRY(odb_dred_run(w->d, 1));
  bicg_init(ks, hist, sum[0]);
  while (ks->outcome == KS_RUN) {
    LAUNCH(k_nest, n, p, r, ks->beta, p, ks->omega, v);
    TRY(odb_dgpu_spmv(A, p, v));
    DOTS(2, rh, v, v, v);
    TRY(odb_dred_run(w->d, 2));
    bicg_after_v(ks, sum[0], sum[1]);
    if (ks->outcome != KS_RUN) break;
    double alpha = ks->alpha;
    LAUNCH(k_axpy, n, s, r, -alpha, v);
    DOTS(1, s, s);
    TRY(odb_dred_run(w->d, 1));
    bicg_after_s(ks, hist, sum[0]);
    if (ks->half) {
      LAUNCH(k_axpy, n, x, x, alpha, p);
      break;
    }
    TRY(odb_dgpu_spmv(A, s, t));
    DOTS(2, t, t, t, s);
    TRY(odb_dred_run(w->d, 2));
    bicg_after_t(ks, sum[0], sum[1]);
    if (ks->outcome != KS_RUN) break;
    LAUNCH(k_xr, n, x, r, alpha, p, ks->omega, s, t);
    DOTS(2, r, r, rh, r);
    TRY(odb_dred_run(w->d, 2));
    bicg_end(ks, hist, sum[0], sum[1]);
  }
out:
  return st;
}

/* QMR: odb_dist_krylov.c's loop, A^T q a distributed SpMV of At; 10
   vectors. */
static odb_status qmr(odb_dsparse *A, odb_dsparse *At, kws *w, const double *b, double *x,
                      kstate *ks, double *hist, double *v0, long ext) {
  long n = w->n;
  double *r = v0, *vt = v0 + ext, *wt = v0 + 2 * ext, *v = v0 + 3 * ext, *ww = v0 + 4 * ext;
  double *p = v0 + 5 * ext, *q = v0 + 6 * ext, *pt = v0 + 7 * ext, *dd = v0 + 8 * ext, *s = v0 + 9 * ext;
  const double *sum = odb_dred_sum(w->d);
  size_t nb = (size_t)n * sizeof(double);
  odb_status st = ODB_OK;
  TRY(odb_dgpu_spmv(A, x, r));
  LAUNCH(k_axpy, n, r, b, -1.0, r);
  CUTRY(cudaMemcpyAsync(vt, r, nb, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
  CUTRY(cudaMemcpyAsync(wt, r, nb, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
  {
    double *zero[] = {p, q, dd, s};
    for (int i = 0; i < 4; i++) CUTRY(cudaMemsetAsync(zero[i], 0, nb, cudaStreamLegacy));
  }
  DOTS(1, r, r);
  TRY(odb_dred_run(w->d, 1));
  qmr_init(ks, hist, sum[0]);
  while (ks->outcome == KS_RUN) {
    LAUNCH(k_divsub, n, v, vt, ks->qrho, p, ks->cp);
    LAUNCH(k_divsub, n, ww, wt, ks->xi, q, ks->cq);
    TRY(odb_dgpu_spmv(A, p, pt));
    DOTS(3, q, pt, q, q, pt, pt);
    TRY(odb_dred_run(w->d, 3));
    qmr_after_pt(ks, sum[0], sum[1], sum[2]);
    if (ks->outcome != KS_RUN) break;
    double beta = ks->qbeta;
    LAUNCH(k_axpy, n, vt, pt, -beta, v);
    TRY(odb_dgpu_spmv(At, q, wt));
    LAUNCH(k_axpy, n, wt, wt, -beta, ww);
    DOTS(3, vt, vt, wt, wt, wt, vt);
    TRY(odb_dred_run(w->d, 3));
    qmr_after_vw(ks, sum[0], sum[1], sum[2]);
    if (ks->outcome != KS_RUN) break;
    LAUNCH(k_lin, n, dd, ks->eta, p, ks->c);
    LAUNCH(k_lin, n, s, ks->eta, pt, ks->c);
    LAUNCH(k_axpy, n, x, x, 1.0, dd);
    LAUNCH(k_axpy, n, r, r, -1.0, s);
    DOTS(1, r, r);
    TRY(odb_dred_run(w->d, 1));
    qmr_end(ks, hist, sum[0]);
  }
out:
  return st;
}

/* Pipelined BiCGStab (Cools and Vanroose, Algorithm 3; odb_dist_krylov.c
   says how); 11 vectors. Each reduction is started before an SpMV and
   finished after it, as on CPU ranks. */
static odb_status pbicgstab(odb_dsparse *A, kws *w, const double *b, double *x, kstate *ks,
                            double *hist, double *v0, long ext, int replace) {
  long n = w->n;
  double *r = v0, *rh = v0 + ext, *wv = v0 + 2 * ext, *t = v0 + 3 * ext, *p = v0 + 4 * ext;
  double *s = v0 + 5 * ext, *z = v0 + 6 * ext, *v = v0 + 7 * ext, *q = v0 + 8 * ext;
  double *y = v0 + 9 * ext, *u = v0 + 10 * ext;
  const double *sum = odb_dred_sum(w->d);
  size_t nb = (size_t)n * sizeof(double);
  odb_status st = ODB_OK;
  double rhv, vv;
  TRY(odb_dgpu_spmv(A, x, r));
  LAUNCH(k_axpy, n, r, b, -1.0, r);
  CUTRY(cudaMemcpyAsync(rh, r, nb, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
  {
    double *zero[] = {p, s, z, v};
    for (int i = 0; i < 4; i++) CUTRY(cudaMemsetAsync(zero[i], 0, nb, cudaStreamLegacy));
  }
  TRY(odb_dgpu_spmv(A, r, wv));
  DOTS(3, r, r, rh, wv, wv, wv);
  TRY(odb_dred_start(w->d, 3));
  TRY(odb_dgpu_spmv(A, wv, t));                /* hides the reduction */
  TRY(odb_dred_finish(w->d));
  rhv = sum[1]; vv = sum[2];
  bicg_init(ks, hist, sum[0]);
  while (ks->outcome == KS_RUN) {
    double beta = ks->beta, omega = ks->omega;
    if (ks->it == 1) beta = 0.0;               /* p = r, s = w, z = t */
    LAUNCH(k_nest, n, p, r, beta, p, omega, s);
    LAUNCH(k_nest, n, s, wv, beta, s, omega, z);
    LAUNCH(k_nest, n, z, t, beta, z, omega, v);
    bicg_after_v(ks, rhv, vv > 0.0 ? vv : 0.0);
    if (ks->outcome != KS_RUN) break;
    double alpha = ks->alpha;
    LAUNCH(k_axpy, n, q, r, -alpha, s);
    LAUNCH(k_axpy, n, y, wv, -alpha, z);
    DOTS(3, q, y, y, y, q, q);
    TRY(odb_dred_start(w->d, 3));
    TRY(odb_dgpu_spmv(A, z, v));               /* hides the reduction */
    TRY(odb_dred_finish(w->d));
    double qy = sum[0], yy = sum[1];
    bicg_after_s(ks, hist, sum[2]);
    if (ks->half) {
      LAUNCH(k_axpy, n, x, x, alpha, p);
      break;
    }
    bicg_after_t(ks, yy, qy);
    if (ks->outcome != KS_RUN) break;
    omega = ks->omega;
    LAUNCH(k_xr, n, x, r, alpha, p, omega, q, y);
    LAUNCH(k_nest, n, wv, y, -omega, t, alpha, v);
    if (replace > 0 && ks->it % replace == 0) {  /* residual replacement */
      TRY(odb_dgpu_spmv(A, x, r));
      LAUNCH(k_axpy, n, r, b, -1.0, r);
      TRY(odb_dgpu_spmv(A, r, wv));
      TRY(odb_dgpu_spmv(A, p, s));
      TRY(odb_dgpu_spmv(A, s, z));
      TRY(odb_dgpu_spmv(A, z, v));
    }
    LAUNCH(k_axpy, n, u, s, -omega, z);
    DOTS(8, r, r, rh, r, rh, wv, rh, s, rh, z, wv, wv, wv, u, u, u);
    TRY(odb_dred_start(w->d, 8));
    TRY(odb_dgpu_spmv(A, wv, t));              /* hides the reduction */
    TRY(odb_dred_finish(w->d));
    bicg_end(ks, hist, sum[0], sum[1]);
    if (ks->outcome != KS_RUN) break;
    beta = ks->beta;
    rhv = sum[2] + beta * sum[3] - beta * omega * sum[4];
    vv = sum[5] + 2.0 * beta * sum[6] + beta * beta * sum[7];
  }
out:
  return st;
}

/* {====== the scalar work on the device */

typedef struct dev_ctx { odb_dsparse *A, *At; } dev_ctx;

/* The fused loop's SpMV: A (trans 0) or A^T, exchange included. */
static odb_status dev_spmv(void *c, int trans, const double *x, double *y) {
  dev_ctx *d = (dev_ctx *)c;
  return odb_dgpu_spmv(trans ? d->At : d->A, (double *)x, y);
}

extern "C" const char *odb_dgpu_krylov_control(const odb_dsparse *A, const odb_dsparse *At, int m) {
  const char *e = getenv("ODEBENCH_GPU_LINK");
  if (m == ODB_DKRY_PBICGSTAB || (e && strcmp(e, "off") == 0)) return "host";
  if (A->size == 1) return "device";
  if (!odb_dgpu_xsum(A)) return "host";
  if (m == ODB_DKRY_QMR && (!At || !odb_dgpu_xsum(At))) return "host";
  return "device";
}

/* The solve with the state on the device: v0 holds nvec vectors of ext
   entries, b and x are set; ks the host's fresh state, then the final
   one, hist its history. */
static odb_status dev_solve(odb_dsparse *A, odb_dsparse *At, int m, double *v0, long ext, double *b,
                            double *x, kstate *ks, double *hist, double *seconds) {
  int qmr = m == ODB_DKRY_QMR, X = qmr ? 10 : 6, nv = qmr ? 11 : 6;
  long n = A->nloc;
  dev_ctx dc = {A, At};
  fz_ws fw;
  odb_status st = ODB_OK;
  memset(&fw, 0, sizeof fw);
  for (int i = 0; i < nv; i++) fw.v[i < X ? i : 12] = v0 + (size_t)i * ext;
  fw.v[X] = x;
  fw.v[X + 1] = b;
  fw.spmv = dev_spmv;
  fw.ctx = &dc;
  fw.xs = odb_dgpu_xsum(A);
  if ((st = dalloc(&fw.st, sizeof(kstate), "solver state")) != ODB_OK ||
      (st = dalloc(&fw.hist, (size_t)(ks->maxit + 2) * sizeof(double), "residual history")) != ODB_OK ||
      (st = red_alloc(&fw.red, n, sm_count())) != ODB_OK)
    goto out;
  CUTRY(cudaMallocHost((void **)&fw.pin, 2 * sizeof(kstate)));
  CUTRY(cudaEventCreateWithFlags(&fw.ev[0], cudaEventDisableTiming));
  CUTRY(cudaEventCreateWithFlags(&fw.ev[1], cudaEventDisableTiming));
  {
    double t0 = odb_clock_now();
    st = fz_loop(&fw, qmr ? ODB_KRYLOV_QMR : ODB_KRYLOV_BICGSTAB, n, ks);
    if (st == ODB_OK) CUTRY(cudaStreamSynchronize(cudaStreamLegacy));
    *seconds = odb_clock_since(t0);
  }
  if (st != ODB_OK) goto out;
  TRY(odb_dgpu_link_check(A, qmr ? "D:qmr" : "D:bicgstab"));
  if (qmr) TRY(odb_dgpu_link_check(At, "D:qmr"));
  CUTRY(cudaMemcpy(ks, fw.st, sizeof *ks, cudaMemcpyDeviceToHost));
  CUTRY(cudaMemcpy(hist, fw.hist, (size_t)ks->nhist * sizeof(double), cudaMemcpyDeviceToHost));
out:
  for (int i = 0; i < 14; i++) fw.v[i] = NULL;   /* the caller's */
  fz_free(&fw);
  return st;
}

/* }====== */

/* {====== the persistent form: a rank's whole solve in one kernel
**
** The persistent BiCGStab of gpu/sparse/odb_krylov_persistent.cu (M. A.
** Al-Mouhamed and A. H. Khan, sections 6.3-6.4) on each GPU rank: its
** blocks meet at inter-block barriers (WS-S: block 0 adds the partials),
** block 0 adds each group of sums over the ranks through the link's
** mailboxes (odb_kxsum), and before every SpMV the kernel exchanges the
** vector's halo over the link itself (pk_halo). CSR: the rank's interior
** and boundary rows as one local CSR, kept on the device with the matrix
** (odb_dgpu_pk_csr); Bdia (one rank): the matrix as it is, uploaded at
** each solve. */

/* Why the persistent form does not take A (ODB_OK: it does). The same on
   every rank (the link is every rank's or none's, the rows' condition is
   agreed on: a collective), and before the solve's other collectives, so
   that a refusal leaves the matrix usable. */
static odb_status pk_refused(const odb_dsparse *A) {
  pk_halo h;
  /* the one condition that differs between ranks: agreed on first */
  double bad = A->nloc < 1 || A->nloc + A->nghost >= INT32_MAX ? 1.0 : 0.0;
  if (A->size > 1) ODB_TRY(odb_dist_allreduce_max(&bad, 1, "MPI_Allreduce (persistent BiCGStab)"));
  if (bad != 0.0)
    return ODB_FAIL(ODB_ERR_ARG, "persistent BiCGStab: every rank must hold 1 .. 2^31 - 1 rows and ghosts "
                    "(rank %d holds %ld rows and %ld ghosts); use fewer ranks or impl = \"fused\"", A->rank,
                    A->nloc, A->nghost);
  if (A->size > 1 && A->fmt != ODB_FMT_CSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "persistent BiCGStab on %d GPU ranks takes CSR (the kernel's SpMV "
                    "reads the rank's rows in local numbering), got %s; Bdia on one rank", A->size,
                    odb_sparse_format_name(A->fmt));
  if (A->size > 1 && !odb_dgpu_pk_halo(A, &h))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "persistent BiCGStab on %d GPU ranks needs the link between the "
                    "GPUs of one host (every rank a GPU of its own, ODEBENCH_GPU_LINK not off): a kernel "
                    "cannot wait for the hosts' messages", A->size);
  if (A->size == 1 && (!A->Ai || (A->Ai->fmt != ODB_FMT_CSR && A->Ai->fmt != ODB_FMT_BDIA)))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "persistent BiCGStab takes CSR or Bdia, got %s",
                    odb_sparse_format_name(A->fmt));
  return ODB_OK;
}

/* Before the launch: this rank's set-up done, then every rank's. */
static odb_status pk_together(void *ctx) {
  (void)ctx;
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return odb_cuda_fail(e, "cudaDeviceSynchronize (persistent BiCGStab)", __FILE__, __LINE__);
  return odb_dist_barrier("MPI_Barrier (persistent BiCGStab launch)");
}

/* The solve: b and x the rank's host entries (x the start, then the
   solution), ks the fresh state, then the final one; hist its history. */
static odb_status pk_solve(odb_dsparse *A, const double *b, double *x, kstate *ks, double *hist,
                           double *seconds) {
  pk_ws w;
  kout out;
  odb_sparse order;   /* a borrowed CSR's order and format only */
  odb_krylov_gpu_opts o;
  const odb_sparse *M = A->Ai;
  odb_status st = ODB_OK;
  memset(&w, 0, sizeof w);
  memset(&out, 0, sizeof out);
  memset(&order, 0, sizeof order);
  memset(&o, 0, sizeof o);
  if (A->size > 1) {
    (void)odb_dgpu_pk_halo(A, &w.a.h);   /* pk_refused checked that there is a link */
    w.a.xs = odb_dgpu_xsum(A);
  }
  if (A->fmt == ODB_FMT_CSR) {   /* kept with the matrix from its first solve */
    ODB_TRY(odb_dgpu_pk_csr(A, &w.a.rp, &w.a.ci, &w.a.va));
    w.borrowed = 1;
    order.fmt = ODB_FMT_CSR;
    order.n = A->nloc;
    M = &order;
  }
  w.fmt = M->fmt == ODB_FMT_BDIA ? PK_BDIA : PK_CSR;
  w.nv = 7;
  w.block = 256;
  w.ext = A->nloc + A->nghost;
  w.ranks = A->size;
  if (A->size > 1) w.before = pk_together;
  o.kry.tol = ks->tol;
  o.kry.maxit = ks->maxit;
  o.sync = ODB_KRY_SYNC_WSS;   /* block 0 adds the sums, then the ranks' */
  o.block = 256;
  o.tune = 0;   /* Bdia's candidates, on one rank (CSR has one) */
  o.watchdog_s = odb_dist_timeout() > 10.0 ? odb_dist_timeout() : 10.0;
  out.st = *ks;
  out.hist = hist;
  st = pk_run(&w, M, ODB_KRYLOV_BICGSTAB, b, x, &o, &out, NULL);
  if (w.a.h.on) odb_dgpu_pk_done(A, w.xchg);
  if (st == ODB_OK) {
    *ks = out.st;
    *seconds = out.seconds;
  }
  pk_free(&w);
  return st;
}

/* }====== */

odb_status odb_dgpu_krylov(odb_dsparse *A, odb_dsparse *At, int m, const double *bh, double *xh,
                           const odb_krylov_opts *o, int replace, int persistent,
                           odb_krylov_result *res, double *seconds) {
  odb_status st = ODB_OK;
  kws ws, *w = &ws;
  double *vecs = NULL, *b = NULL, *x = NULL;
  long n = A->nloc, ext = n + A->nghost;
  if (At && n + At->nghost > ext) ext = n + At->nghost;
  if (ext < 1) ext = 1;
  if (persistent) ODB_TRY(pk_refused(A));
  int dev = strcmp(odb_dgpu_krylov_control(A, At, m), "device") == 0;
  int nvec = m == ODB_DKRY_QMR ? 10 + dev : m == ODB_DKRY_PBICGSTAB ? 11 : 6;
  size_t nb = (size_t)n * sizeof(double);
  kstate ks;
  memset(&ws, 0, sizeof ws);
  w->n = n;
  w->grid = (unsigned)((n + KB - 1) / KB < 1 ? 1 : (n + KB - 1) / KB > 65535 ? 65535 : (n + KB - 1) / KB);
  w->dgrid = w->grid > (unsigned)DOT_GRID_MAX ? (unsigned)DOT_GRID_MAX : w->grid;
  w->d = odb_dred_new(A->size);
  res->history = (double *)malloc((size_t)(o->maxit + 2) * sizeof *res->history);
  if (!w->d || !res->history) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "Krylov work space for %ld rows on rank %d", n, A->rank);
    goto fail;
  }
  {
    cudaError_t e = cudaMalloc((void **)&vecs, (size_t)nvec * ext * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc((void **)&b, (size_t)ext * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc((void **)&x, (size_t)ext * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc((void **)&w->part, (size_t)DOT_GRID_MAX * ODB_DRED_MAX * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc((void **)&w->dsum, ODB_DRED_MAX * sizeof(double));
    if (e == cudaSuccess) e = cudaMallocHost((void **)&w->sum_h, ODB_DRED_MAX * sizeof(double));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      st = ODB_FAIL(odb_cuda_status(e), "Krylov work space of %d vectors of %ld entries on the GPU of rank %d: %s",
                    nvec + 2, ext, A->rank, cudaGetErrorString(e));
      goto fail;
    }
    if (nb && ((e = cudaMemcpy(b, bh, nb, cudaMemcpyHostToDevice)) != cudaSuccess ||
               (e = cudaMemcpy(x, xh, nb, cudaMemcpyHostToDevice)) != cudaSuccess)) {
      st = odb_cuda_fail(e, "cudaMemcpy (b, x0)", __FILE__, __LINE__);
      goto fail;
    }
  }
  {
    const double *sum = odb_dred_sum(w->d);
    DOTS(1, b, b);
    TRY(odb_dred_run(w->d, 1));
    double bn = sqrt(sum[0]);
    if (bn == 0.0) bn = 1.0;
    ks = ks_new(bn, o);
    if (persistent) {
      st = pk_solve(A, bh, xh, &ks, res->history, seconds);
      if (st == ODB_OK) TRY(odb_dgpu_link_check(A, "D:bicgstab"));
      if (st == ODB_OK && nb) CUTRY(cudaMemcpy(x, xh, nb, cudaMemcpyHostToDevice));
    } else if (dev) {
      st = dev_solve(A, At, m, vecs, ext, b, x, &ks, res->history, seconds);
    } else {
      double t0 = odb_clock_now();
      if (m == ODB_DKRY_QMR) st = qmr(A, At, w, b, x, &ks, res->history, vecs, ext);
      else if (m == ODB_DKRY_PBICGSTAB) st = pbicgstab(A, w, b, x, &ks, res->history, vecs, ext, replace);
      else st = bicgstab(A, w, b, x, &ks, res->history, vecs, ext);
      if (st == ODB_OK) CUTRY(cudaStreamSynchronize(cudaStreamLegacy));
      *seconds = odb_clock_since(t0);
    }
    if (st != ODB_OK) goto out;
    if (nb) CUTRY(cudaMemcpy(xh, x, nb, cudaMemcpyDeviceToHost));
    /* the true residual, with a distributed SpMV */
    TRY(odb_dgpu_spmv(A, x, vecs));
    LAUNCH(k_axpy, n, vecs, b, -1.0, vecs);
    DOTS(1, vecs, vecs);
    TRY(odb_dred_run(w->d, 1));
    res->relres_true = sqrt(sum[0]) / bn;
  }
out:
  if (st != ODB_OK) {
    /* an exchange, a reduction or the device failed: the ranks no longer
       pair, so the matrix is refused from here on (odb_dist_krylov.c) */
    odb_dred_release(w->d, st);
    w->d = NULL;
    if (!A->broken) odb_dsparse_fail(A, st, 1);
    goto fail;
  }
  cudaFree(vecs); cudaFree(b); cudaFree(x); cudaFree(w->part); cudaFree(w->dsum); cudaFreeHost(w->sum_h);
  odb_dred_release(w->d, ODB_OK);
  return odb_krylov_state_finish(&ks, m == ODB_DKRY_QMR ? ODB_KRYLOV_QMR : ODB_KRYLOV_BICGSTAB, res);
fail:
  cudaFree(vecs); cudaFree(b); cudaFree(x); cudaFree(w->part); cudaFree(w->dsum); cudaFreeHost(w->sum_h);
  (void)cudaGetLastError();
  odb_dred_release(w->d, st);
  odb_krylov_result_free(res);
  return st;
}
