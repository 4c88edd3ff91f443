/* odb_dist_krylov.c - BiCGStab, QMR and pipelined BiCGStab on matrices
** split by rows (odb_dist_sparse.h).
**
** The scalars and every decision come from the one state machine,
** core/sparse/odb_krylov_state.h, exactly as in the one-process solver
** (core/sparse/krylov.c): this file does the vector work on the rank's
** rows and reduces the dot products. BiCGStab and QMR here are krylov.c's
** loops with each group of dots that one state step takes reduced at once.
**
** Reductions in a fixed order: each rank sums its own rows in local order,
** the partial sums of all ranks are gathered to every rank (one
** allgather of the group's m values) and added in rank order, starting
** from 0. Every rank so gets the same bits whatever the timing (an
** MPI_Allreduce only advises that), and on one rank the sums are
** krylov.c's, bit for bit.
**
** Pipelined BiCGStab ("pbicgstab") is S. Cools and W. Vanroose, "The
** communication-hiding pipelined BiCGStab method for the parallel
** solution of large unsymmetric linear systems" (Parallel Computing 65,
** 2017), Algorithm 3, with J. Ghysels and W. Vanroose, "Hiding global
** synchronization latency in the preconditioned Conjugate Gradient
** algorithm" (Parallel Computing 40, 2014) as its origin. It carries
** w = A r, t = A w, s = A p, z = A s, v = A z by recurrences, so that each
** of its two reductions of an iteration is started (MPI_Iallgather of the
** partial sums) before an SpMV and finished after it: v = A z hides the
** first, t = A w the second. It does more vector work (10 updates, 11
** vectors against 6) and its recurrences drift from the true products
** with rounding, so the true residual can stall above the recursive one;
** `replace` recomputes r = b - A x, w = A r, s = A p, z = A s, v = A z
** every that many iterations (the residual replacement Cools and Vanroose
** discuss, 5 SpMVs each time). The state machine needs, before alpha,
** r^.(A p) and |A p|^2 for its breakdown test: r^.s follows from the dots
** of the second reduction (Cools and Vanroose's alpha), and |s|^2 of
** s = w + beta u, u = s_old - omega z, from three more dots in it:
** w.w + 2 beta w.u + beta^2 u.u. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odb_clock.h"
#include "odb_dist.h"
#include "odb_dist_gpu.h"
#include "odb_dist_red.h"
#include "odb_dist_sparse.h"
#include "odb_krylov_state.h"

#define RED_MAX ODB_DRED_MAX

static const char *method_names[] = {"bicgstab", "qmr", "pbicgstab"};

const char *odb_dkrylov_method_name(odb_dkrylov_method m)
{
  return (unsigned)m <= ODB_DKRY_PBICGSTAB ? method_names[m] : "unknown";
}

/* One group of dot products being reduced. On the heap with its
   buffers, as one block: a reduction whose wait fails stays open (a
   collective cannot be cancelled), and the block is then kept for the
   life of the process (odb_dist_sparse.h, "Buffers under a request"). */
typedef struct odb_dred {
  int m, size;
  double loc[RED_MAX], sum[RED_MAX];
#ifdef ODB_HAVE_MPI
  MPI_Request rq;
#endif
  int pending;
  double all[];                   /* size * RED_MAX */
} dred;

odb_dred *odb_dred_new(int size)
{
  dred *d = calloc(1, sizeof *d + (size_t)size * RED_MAX * sizeof *d->all);
  if (d) d->size = size;
  return d;
}

double *odb_dred_loc(odb_dred *d) { return d->loc; }
const double *odb_dred_sum(const odb_dred *d) { return d->sum; }

static double dot(long n, const double *a, const double *b)
{
  double s = 0.0;
  for (long i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* The partial sums of all ranks in all[], added in rank order. */
static void red_sum(dred *d)
{
  for (int j = 0; j < d->m; j++) {
    double s = 0.0;
    for (int q = 0; q < d->size; q++) s += d->all[(size_t)q * d->m + j];
    d->sum[j] = s;
  }
}

/* odb_dist_red.h: starts the reduction of d->loc[0..m) (non-blocking
   where MPI runs). */
odb_status odb_dred_start(dred *d, int m)
{
  d->m = m;
  if (d->size == 1 || !odb_dist_active()) {
    memcpy(d->all, d->loc, (size_t)m * sizeof *d->loc);
    return ODB_OK;
  }
#ifdef ODB_HAVE_MPI
  if (MPI_Iallgather(d->loc, m, MPI_DOUBLE, d->all, m, MPI_DOUBLE, odb_dist_comm(), &d->rq) != MPI_SUCCESS)
    return ODB_FAIL(ODB_ERR_IO, "MPI_Iallgather (Krylov dot products) failed");
  d->pending = 1;
#endif
  return ODB_OK;
}

/* Finishes it: d->sum holds the m global dots. d->pending stays set when
   the wait fails (the request is still open). */
odb_status odb_dred_finish(dred *d)
{
#ifdef ODB_HAVE_MPI
  if (d->pending) {
    odb_status st = odb_dist_waitall(1, &d->rq, "MPI_Iallgather (Krylov dot products)");
    if (st != ODB_OK) return st;
    d->pending = 0;
  }
#endif
  red_sum(d);
  return ODB_OK;
}

/* The blocking form: BiCGStab's and QMR's reductions. */
odb_status odb_dred_run(dred *d, int m)
{
  odb_status st = odb_dred_start(d, m);
  return st == ODB_OK ? odb_dred_finish(d) : st;
}

void odb_dred_release(dred *d, odb_status st)
{
  if (!d) return;
#ifdef ODB_HAVE_MPI
  if (d->pending && !odb_dsparse_settle(1, &d->rq, 0, st)) return;
#else
  (void)st;
#endif
  free(d);
}

#define TRY(x) do { if ((st = (x)) != ODB_OK) goto out; } while (0)

/* BiCGStab: krylov.c's loop; w holds 6 vectors of length ext. */
static odb_status bicgstab(odb_dsparse *A, const double *b, double *x, kstate *ks,
                           double *hist, double *w, long ext, dred *d)
{
  long n = A->nloc;
  double *r = w, *rh = w + ext, *p = w + 2 * ext, *v = w + 3 * ext, *s = w + 4 * ext, *t = w + 5 * ext;
  odb_status st = ODB_OK;
  TRY(odb_dsparse_spmv(A, x, r));
  for (long i = 0; i < n; i++) { r[i] = b[i] - r[i]; rh[i] = r[i]; p[i] = v[i] = 0.0; }
  d->loc[0] = dot(n, r, r);
  TRY(odb_dred_run(d, 1));
  bicg_init(ks, hist, d->sum[0]);
  while (ks->outcome == KS_RUN) {
    double beta = ks->beta, omega = ks->omega;
    for (long i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    TRY(odb_dsparse_spmv(A, p, v));
    d->loc[0] = dot(n, rh, v); d->loc[1] = dot(n, v, v);
    TRY(odb_dred_run(d, 2));
    bicg_after_v(ks, d->sum[0], d->sum[1]);
    if (ks->outcome != KS_RUN) break;
    double alpha = ks->alpha;
    for (long i = 0; i < n; i++) s[i] = r[i] - alpha * v[i];
    d->loc[0] = dot(n, s, s);
    TRY(odb_dred_run(d, 1));
    bicg_after_s(ks, hist, d->sum[0]);
    if (ks->half) {
      for (long i = 0; i < n; i++) x[i] += alpha * p[i];
      break;
    }
    TRY(odb_dsparse_spmv(A, s, t));
    d->loc[0] = dot(n, t, t); d->loc[1] = dot(n, t, s);
    TRY(odb_dred_run(d, 2));
    bicg_after_t(ks, d->sum[0], d->sum[1]);
    if (ks->outcome != KS_RUN) break;
    omega = ks->omega;
    for (long i = 0; i < n; i++) { x[i] += alpha * p[i] + omega * s[i]; r[i] = s[i] - omega * t[i]; }
    d->loc[0] = dot(n, r, r); d->loc[1] = dot(n, rh, r);
    TRY(odb_dred_run(d, 2));
    bicg_end(ks, hist, d->sum[0], d->sum[1]);
  }
out:
  return st;
}

/* QMR: krylov.c's loop, A^T q a distributed SpMV of At; w holds 10
   vectors. */
static odb_status qmr(odb_dsparse *A, odb_dsparse *At, const double *b, double *x,
                      kstate *ks, double *hist, double *w, long ext, dred *d)
{
  long n = A->nloc;
  double *r = w, *vt = w + ext, *wt = w + 2 * ext, *v = w + 3 * ext, *ww = w + 4 * ext;
  double *p = w + 5 * ext, *q = w + 6 * ext, *pt = w + 7 * ext, *dd = w + 8 * ext, *s = w + 9 * ext;
  odb_status st = ODB_OK;
  TRY(odb_dsparse_spmv(A, x, r));
  for (long i = 0; i < n; i++) {
    r[i] = b[i] - r[i]; vt[i] = wt[i] = r[i];
    p[i] = q[i] = dd[i] = s[i] = 0.0;
  }
  d->loc[0] = dot(n, r, r);
  TRY(odb_dred_run(d, 1));
  qmr_init(ks, hist, d->sum[0]);
  while (ks->outcome == KS_RUN) {
    double rho = ks->qrho, xi = ks->xi, cp = ks->cp, cq = ks->cq;
    for (long i = 0; i < n; i++) {
      v[i] = vt[i] / rho; ww[i] = wt[i] / xi;
      p[i] = v[i] - cp * p[i]; q[i] = ww[i] - cq * q[i];
    }
    TRY(odb_dsparse_spmv(A, p, pt));
    d->loc[0] = dot(n, q, pt); d->loc[1] = dot(n, q, q); d->loc[2] = dot(n, pt, pt);
    TRY(odb_dred_run(d, 3));
    qmr_after_pt(ks, d->sum[0], d->sum[1], d->sum[2]);
    if (ks->outcome != KS_RUN) break;
    double beta = ks->qbeta;
    for (long i = 0; i < n; i++) vt[i] = pt[i] - beta * v[i];
    TRY(odb_dsparse_spmv(At, q, wt));
    for (long i = 0; i < n; i++) wt[i] -= beta * ww[i];
    d->loc[0] = dot(n, vt, vt); d->loc[1] = dot(n, wt, wt); d->loc[2] = dot(n, wt, vt);
    TRY(odb_dred_run(d, 3));
    qmr_after_vw(ks, d->sum[0], d->sum[1], d->sum[2]);
    if (ks->outcome != KS_RUN) break;
    double eta = ks->eta, c = ks->c;
    for (long i = 0; i < n; i++) {
      dd[i] = eta * p[i] + c * dd[i]; s[i] = eta * pt[i] + c * s[i];
      x[i] += dd[i]; r[i] -= s[i];
    }
    d->loc[0] = dot(n, r, r);
    TRY(odb_dred_run(d, 1));
    qmr_end(ks, hist, d->sum[0]);
  }
out:
  return st;
}

/* Pipelined BiCGStab (Cools and Vanroose, Algorithm 3; the header of this
   file); w holds 11 vectors. */
static odb_status pbicgstab(odb_dsparse *A, const double *b, double *x, kstate *ks,
                            double *hist, double *w, long ext, dred *d, int replace)
{
  long n = A->nloc;
  double *r = w, *rh = w + ext, *wv = w + 2 * ext, *t = w + 3 * ext, *p = w + 4 * ext;
  double *s = w + 5 * ext, *z = w + 6 * ext, *v = w + 7 * ext, *q = w + 8 * ext;
  double *y = w + 9 * ext, *u = w + 10 * ext;
  odb_status st = ODB_OK;
  TRY(odb_dsparse_spmv(A, x, r));
  for (long i = 0; i < n; i++) { r[i] = b[i] - r[i]; rh[i] = r[i]; p[i] = s[i] = z[i] = v[i] = 0.0; }
  TRY(odb_dsparse_spmv(A, r, wv));
  d->loc[0] = dot(n, r, r); d->loc[1] = dot(n, rh, wv); d->loc[2] = dot(n, wv, wv);
  TRY(odb_dred_start(d, 3));
  TRY(odb_dsparse_spmv(A, wv, t));             /* hides the reduction */
  TRY(odb_dred_finish(d));
  double rhv = d->sum[1], vv = d->sum[2];
  bicg_init(ks, hist, d->sum[0]);
  while (ks->outcome == KS_RUN) {
    double beta = ks->beta, omega = ks->omega;
    if (ks->it == 1) beta = 0.0;               /* p = r, s = w, z = t */
    for (long i = 0; i < n; i++) {
      p[i] = r[i] + beta * (p[i] - omega * s[i]);
      s[i] = wv[i] + beta * (s[i] - omega * z[i]);
      z[i] = t[i] + beta * (z[i] - omega * v[i]);
    }
    bicg_after_v(ks, rhv, vv > 0.0 ? vv : 0.0);
    if (ks->outcome != KS_RUN) break;
    double alpha = ks->alpha;
    for (long i = 0; i < n; i++) { q[i] = r[i] - alpha * s[i]; y[i] = wv[i] - alpha * z[i]; }
    d->loc[0] = dot(n, q, y); d->loc[1] = dot(n, y, y); d->loc[2] = dot(n, q, q);
    TRY(odb_dred_start(d, 3));
    TRY(odb_dsparse_spmv(A, z, v));            /* hides the reduction */
    TRY(odb_dred_finish(d));
    double qy = d->sum[0], yy = d->sum[1];
    bicg_after_s(ks, hist, d->sum[2]);
    if (ks->half) {
      for (long i = 0; i < n; i++) x[i] += alpha * p[i];
      break;
    }
    bicg_after_t(ks, yy, qy);
    if (ks->outcome != KS_RUN) break;
    omega = ks->omega;
    for (long i = 0; i < n; i++) {
      x[i] += alpha * p[i] + omega * q[i];
      r[i] = q[i] - omega * y[i];
      wv[i] = y[i] - omega * (t[i] - alpha * v[i]);
    }
    if (replace > 0 && ks->it % replace == 0) {  /* residual replacement */
      TRY(odb_dsparse_spmv(A, x, r));
      for (long i = 0; i < n; i++) r[i] = b[i] - r[i];
      TRY(odb_dsparse_spmv(A, r, wv));
      TRY(odb_dsparse_spmv(A, p, s));
      TRY(odb_dsparse_spmv(A, s, z));
      TRY(odb_dsparse_spmv(A, z, v));
    }
    for (long i = 0; i < n; i++) u[i] = s[i] - omega * z[i];
    d->loc[0] = dot(n, r, r); d->loc[1] = dot(n, rh, r); d->loc[2] = dot(n, rh, wv);
    d->loc[3] = dot(n, rh, s); d->loc[4] = dot(n, rh, z);
    d->loc[5] = dot(n, wv, wv); d->loc[6] = dot(n, wv, u); d->loc[7] = dot(n, u, u);
    TRY(odb_dred_start(d, 8));
    TRY(odb_dsparse_spmv(A, wv, t));           /* hides the reduction */
    TRY(odb_dred_finish(d));
    bicg_end(ks, hist, d->sum[0], d->sum[1]);
    if (ks->outcome != KS_RUN) break;
    beta = ks->beta;
    rhv = d->sum[2] + beta * d->sum[3] - beta * omega * d->sum[4];
    vv = d->sum[5] + 2.0 * beta * d->sum[6] + beta * beta * d->sum[7];
  }
out:
  return st;
}

odb_status odb_dkrylov_solve(odb_dsparse *A, odb_dsparse *At,
                             odb_dkrylov_method m, const double *b, double *x,
                             const odb_dkrylov_opts *opts, odb_krylov_result *res,
                             double *seconds)
{
  odb_status st = ODB_OK;
  double *w = NULL, *xe = NULL;
  dred *d = NULL;
  memset(res, 0, sizeof *res);
  res->breakdown_iter = -1;
  *seconds = 0.0;
  odb_krylov_opts o = {1e-10, 1000, 100};
  int replace = 0, persistent = 0;
  if (opts) {
    if (opts->k.tol > 0) o.tol = opts->k.tol;
    if (opts->k.maxit > 0) o.maxit = opts->k.maxit;
    if (opts->k.stag_window > 0) o.stag_window = opts->k.stag_window;
    replace = opts->replace;
    persistent = opts->persistent;
  }
  if ((unsigned)m > ODB_DKRY_PBICGSTAB) return ODB_FAIL(ODB_ERR_ARG, "unknown Krylov method %d", (int)m);
  if (persistent && m != ODB_DKRY_BICGSTAB)
    return ODB_FAIL(ODB_ERR_ARG, "impl persistent is BiCGStab's (the whole solve in one kernel a GPU rank), "
                    "not %s's", odb_dkrylov_method_name(m));
  if (persistent && !A->gpu)
    return ODB_FAIL(ODB_ERR_ARG, "impl persistent runs on GPU ranks (backend = \"cuda\"); rank %d's matrix "
                    "is on the CPU", A->rank);
  if (m == ODB_DKRY_QMR && !At) return ODB_FAIL(ODB_ERR_ARG, "QMR needs the transpose of the matrix");
  if ((st = odb_dsparse_check(A, "Krylov solve")) != ODB_OK) return st;
  if (m == ODB_DKRY_QMR && (st = odb_dsparse_check(At, "Krylov solve")) != ODB_OK) return st;
  if (A->gpu) {
    if (m == ODB_DKRY_QMR && !At->gpu) return ODB_FAIL(ODB_ERR_ARG, "QMR on a GPU rank needs A^T on the GPU too");
    return odb_dgpu_krylov(A, At, (int)m, b, x, &o, replace, persistent, res, seconds);
  }
  long n = A->nloc;
  long ext = n + A->nghost;
  if (At && n + At->nghost > ext) ext = n + At->nghost;
  if (ext < 1) ext = 1;
  int nvec = m == ODB_DKRY_QMR ? 10 : m == ODB_DKRY_PBICGSTAB ? 11 : 6;
  d = odb_dred_new(A->size);
  res->history = malloc((size_t)(o.maxit + 2) * sizeof *res->history);
  w = malloc((size_t)nvec * ext * sizeof *w);
  xe = malloc((size_t)ext * sizeof *xe);
  if (!d || !res->history || !w || !xe) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "Krylov work space for %ld rows on rank %d", n, A->rank);
    goto fail;
  }
  memcpy(xe, x, (size_t)n * sizeof *xe);
  d->loc[0] = dot(n, b, b);
  if ((st = odb_dred_run(d, 1)) != ODB_OK) goto broken;
  double bn = sqrt(d->sum[0]);
  if (bn == 0.0) bn = 1.0;
  kstate ks = ks_new(bn, &o);
  double t0 = odb_clock_now();
  if (m == ODB_DKRY_QMR) st = qmr(A, At, b, xe, &ks, res->history, w, ext, d);
  else if (m == ODB_DKRY_PBICGSTAB) st = pbicgstab(A, b, xe, &ks, res->history, w, ext, d, replace);
  else st = bicgstab(A, b, xe, &ks, res->history, w, ext, d);
  *seconds = odb_clock_since(t0);
  if (st != ODB_OK) goto broken;
  memcpy(x, xe, (size_t)n * sizeof *x);
  if ((st = odb_dsparse_spmv(A, xe, w)) != ODB_OK) goto broken;
  for (long i = 0; i < n; i++) w[i] = b[i] - w[i];
  d->loc[0] = dot(n, w, w);
  if ((st = odb_dred_run(d, 1)) != ODB_OK) goto broken;
  res->relres_true = sqrt(d->sum[0]) / bn;
  free(w); free(xe); free(d);
  return odb_krylov_state_finish(&ks, m == ODB_DKRY_QMR ? ODB_KRYLOV_QMR : ODB_KRYLOV_BICGSTAB, res);
broken:
  /* an exchange or a reduction failed: the ranks' messages and
     collectives no longer pair, so the matrix is refused from here on;
     a reduction still open keeps d (an SpMV that failed has marked its
     matrix already) */
  odb_dred_release(d, st);
  d = NULL;
  if (!A->broken) odb_dsparse_fail(A, st, 1);
fail:
  free(w); free(xe); free(d);
  odb_krylov_result_free(res);
  return st;
}
