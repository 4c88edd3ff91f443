/* odb_krylov_fused.cu - the "fused" Krylov implementation: our SpMV
** (odb_sparse_gpu.h) and fused vector kernels that also reduce their dot
** products and advance the scalar state machine on the device, so the
** host only polls the state (core/sparse/odb_krylov_state.h).
*/
#include "odb_krylov_gpu.cuh"

/* {====== fused vector kernels (state on the device, host polls) */

/* r = b - r (r holds A x0), rhat = r, p = v = 0; r.r -> bicg_init. */
__global__ void fb_init(long n, const double *b, double *r, double *rh, double *p, double *v,
                        kstate *st, double *hist, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double ri = b[i] - r[i];
    r[i] = ri; rh[i] = ri; p[i] = 0.0; v[i] = 0.0;
    a[0] += ri * ri;
  }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 1, st)) bicg_init(st, hist, a[0]);
}

/* p = r + beta (p - omega v). */
__global__ void fb_p(long n, const kstate *st, const double *r, double *p, const double *v) {
  if (st->outcome != KS_RUN) return;
  double beta = st->beta, om = st->omega;
  GSTRIDE(i, n) p[i] = r[i] + beta * (p[i] - om * v[i]);
}

/* rhat.v and v.v -> alpha. */
__global__ void fb_v(long n, kstate *st, const double *rh, const double *v, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { a[0] += rh[i] * v[i]; a[1] += v[i] * v[i]; }
  if (red_last(a, 2, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 2, st)) bicg_after_v(st, a[0], a[1]);
}

/* s = r - alpha v and s.s. */
__global__ void fb_s(long n, kstate *st, double *hist, const double *r, const double *v, double *s,
                     double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double alpha = st->alpha, a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { double si = r[i] - alpha * v[i]; s[i] = si; a[0] += si * si; }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 1, st)) bicg_after_s(st, hist, a[0]);
}

/* t.t and t.s -> omega. */
__global__ void fb_t(long n, kstate *st, const double *t, const double *s, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { a[0] += t[i] * t[i]; a[1] += t[i] * s[i]; }
  if (red_last(a, 2, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 2, st)) bicg_after_t(st, a[0], a[1]);
}

/* x += alpha p + omega s, r = s - omega t, r.r and rhat.r -> next rho;
** or, converged on s (half == 1), x += alpha p once. */
__global__ void fb_xr(long n, kstate *st, double *hist, double *x, const double *p, const double *s,
                      const double *t, double *r, const double *rh, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
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
  if (red_last(a, 2, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 2, st)) bicg_end(st, hist, a[0], a[1]);
}

/* QMR: r = b - r, vt = wt = r, p = q = d = s = 0; r.r -> qmr_init. */
__global__ void fq_init(long n, const double *b, double *r, double *vt, double *wt, double *p, double *q,
                        double *d, double *s, kstate *st, double *hist, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double ri = b[i] - r[i];
    r[i] = ri; vt[i] = ri; wt[i] = ri;
    p[i] = q[i] = d[i] = s[i] = 0.0;
    a[0] += ri * ri;
  }
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 1, st)) qmr_init(st, hist, a[0]);
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
__global__ void fq_pt(long n, kstate *st, const double *q, const double *pt, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) { a[0] += q[i] * pt[i]; a[1] += q[i] * q[i]; a[2] += pt[i] * pt[i]; }
  if (red_last(a, 3, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 3, st)) qmr_after_pt(st, a[0], a[1], a[2]);
}

/* vt = pt - beta v, wt = A^T q - beta w; vt.vt, wt.wt, wt.vt. */
__global__ void fq_vw(long n, kstate *st, const double *pt, const double *v, const double *atq,
                      const double *w, double *vt, double *wt, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
  __shared__ double red[96];
  if (st->outcome != KS_RUN) return;
  double beta = st->qbeta, a[3] = {0.0, 0.0, 0.0};
  GSTRIDE(i, n) {
    double vti = pt[i] - beta * v[i], wti = atq[i] - beta * w[i];
    vt[i] = vti; wt[i] = wti;
    a[0] += vti * vti; a[1] += wti * wti; a[2] += wti * vti;
  }
  if (red_last(a, 3, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 3, st)) qmr_after_vw(st, a[0], a[1], a[2]);
}

/* d = eta p + c d, s = eta pt + c s, x += d, r -= s; r.r. */
__global__ void fq_upd(long n, kstate *st, double *hist, const double *p, const double *pt, double *d,
                       double *s, double *x, double *r, double *part, unsigned *ticket,
                       const odb_kxsum *xs) {
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
  if (red_last(a, 1, part, ticket, red) && threadIdx.x == 0 && !kx_allsum(xs, a, 1, st)) qmr_end(st, hist, a[0]);
}

/* }====== */

/* {====== impl "fused": our SpMV + fused vector kernels, device-side control */

void fz_free(fz_ws *w) {
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

/* y = A x (trans 0) or A^T x (1): the GPU ranks' exchange and SpMV where
   w->spmv is set, else our SpMV of g or gt. */
static odb_status fz_spmv(fz_ws *w, int trans, const double *x, double *y) {
  if (w->spmv) return w->spmv(w->ctx, trans, x, y);
  return odb_sparse_gpu_spmv(trans ? w->gt : w->g, x, y);
}

/* One BiCGStab iteration's launches. Vectors: 0 r, 1 rhat, 2 p, 3 v, 4 s, 5 t, 6 x, 7 b. */
static odb_status fz_bicg_iter(fz_ws *w, long n) {
  enum { R, RH, P, V, S, T, X };
  int G = w->red.grid;
  double *pa = w->red.part;
  unsigned *tk = w->red.ticket;
  fb_p<<<G, FB>>>(n, w->st, w->v[R], w->v[P], w->v[V]);
  FZ_CHECK();
  ODB_TRY(fz_spmv(w, 0, w->v[P], w->v[V]));
  fb_v<<<G, FB>>>(n, w->st, w->v[RH], w->v[V], pa, tk, w->xs);
  FZ_CHECK();
  fb_s<<<G, FB>>>(n, w->st, w->hist, w->v[R], w->v[V], w->v[S], pa, tk, w->xs);
  FZ_CHECK();
  ODB_TRY(fz_spmv(w, 0, w->v[S], w->v[T]));
  fb_t<<<G, FB>>>(n, w->st, w->v[T], w->v[S], pa, tk, w->xs);
  FZ_CHECK();
  fb_xr<<<G, FB>>>(n, w->st, w->hist, w->v[X], w->v[P], w->v[S], w->v[T], w->v[R], w->v[RH], pa, tk, w->xs);
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
  ODB_TRY(fz_spmv(w, 0, w->v[P], w->v[PT]));
  ODB_TRY(fz_spmv(w, 1, w->v[Q], w->v[ATQ]));
  fq_pt<<<G, FB>>>(n, w->st, w->v[Q], w->v[PT], pa, tk, w->xs);
  FZ_CHECK();
  fq_vw<<<G, FB>>>(n, w->st, w->v[PT], w->v[V], w->v[ATQ], w->v[W], w->v[VT], w->v[WT], pa, tk, w->xs);
  FZ_CHECK();
  fq_upd<<<G, FB>>>(n, w->st, w->hist, w->v[P], w->v[PT], w->v[D], w->v[S], w->v[X], w->v[R], pa, tk, w->xs);
  FZ_CHECK();
  return ODB_OK;
}

/* Whether the host should wait for the iteration just queued before it
   queues another: s is the state after the iteration before it (the
   solve still running), prev the residual of the one before that (0:
   none). Yes when the residual, falling as it fell last, or the
   iteration count would end the solve within that iteration: a wait
   then costs one round trip, and queueing past the end two SpMVs. The
   same on every GPU rank (they hold the same state bits). */
static int fz_near_end(const kstate *s, double prev) {
  if (s->it + 1 >= s->maxit) return 1;
  return prev > 0.0 && s->rel < prev && s->rel * (s->rel / prev) <= 2.0 * s->tol;
}

/* The initial residual and state; then iterations, each followed by an
** asynchronous copy of the state; the host looks at iteration k-1's copy
** after queueing iteration k, and where that copy says the end is near
** (fz_near_end) at iteration k's too, so at most one iteration runs past
** the end (its kernels find the solve stopped and return; only its two
** SpMVs run), and only where the residual fell faster than it had. */
odb_status fz_loop(fz_ws *w, odb_krylov_method m, long n, const kstate *s0) {
  int qmr = m == ODB_KRYLOV_QMR, X = qmr ? 10 : 6, B = X + 1;
  int G = w->red.grid;
  double prev = 0.0;
  kstate s;
  ODB_CUDA_CHECK(cudaMemcpy(w->st, s0, sizeof *s0, cudaMemcpyHostToDevice));
  ODB_TRY(fz_spmv(w, 0, w->v[X], w->v[0]));
  if (qmr)
    fq_init<<<G, FB>>>(n, w->v[B], w->v[0], w->v[1], w->v[2], w->v[5], w->v[6], w->v[8], w->v[9], w->st,
                       w->hist, w->red.part, w->red.ticket, w->xs);
  else
    fb_init<<<G, FB>>>(n, w->v[B], w->v[0], w->v[1], w->v[2], w->v[3], w->st, w->hist, w->red.part,
                       w->red.ticket, w->xs);
  FZ_CHECK();
  ODB_CUDA_CHECK(cudaMemcpy(&s, w->st, sizeof s, cudaMemcpyDeviceToHost));
  if (s.outcome != KS_RUN) return ODB_OK;
  for (int k = 1; k <= s0->maxit; k++) {
    ODB_TRY(qmr ? fz_qmr_iter(w, n) : fz_bicg_iter(w, n));
    ODB_CUDA_CHECK(cudaMemcpyAsync(&w->pin[k & 1], w->st, sizeof(kstate), cudaMemcpyDeviceToHost, 0));
    ODB_CUDA_CHECK(cudaEventRecord(w->ev[k & 1], 0));
    const kstate *last = &s;             /* iteration k-1's state */
    if (k >= 2) {
      ODB_CUDA_CHECK(cudaEventSynchronize(w->ev[(k - 1) & 1]));
      last = &w->pin[(k - 1) & 1];
      if (last->outcome != KS_RUN) break;
    }
    if (fz_near_end(last, prev)) {
      ODB_CUDA_CHECK(cudaEventSynchronize(w->ev[k & 1]));
      if (w->pin[k & 1].outcome != KS_RUN) break;
    }
    prev = last->rel;
  }
  return ODB_OK;
}

odb_status fz_run(fz_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
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
