/* krylov.c - BiCGStab and QMR (Freund-Nachtigal, no look-ahead, no
** preconditioner) CPU reference with residual history, breakdown and
** stagnation detection, and the true residual recomputed at the end.
** This file does the vector work (SpMV, dots, axpys) in a fixed order;
** every scalar and every decision comes from the state machine of
** odb_krylov_state.h, the one the GPU implementations also run. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "odb_sparse.h"
#include "odb_krylov_state.h"

static const char *outcome_names[] = {"converged", "maxit", "breakdown_rho",
                                      "breakdown_omega", "breakdown", "stagnated"};

/* Any value. */
const char *odb_krylov_outcome_name(odb_krylov_outcome o)
{
  return (unsigned)o <= ODB_KRY_STAGNATED ? outcome_names[o] : "unknown";
}

/* Vectors of length n. */
static double dot(long n, const double *a, const double *b)
{
  double s = 0.0;
  for (long i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* BiCGStab on state ks (odb_krylov_state.h has the order of the steps);
** hist has room for maxit + 2 entries; w holds 6 n. */
static void bicgstab(const odb_sparse *A, const double *b, double *x, kstate *ks, double *hist, double *w)
{
  long n = A->n;
  double *r = w, *rh = w + n, *p = w + 2 * n, *v = w + 3 * n, *s = w + 4 * n, *t = w + 5 * n;
  odb_sparse_spmv(A, x, r);
  for (long i = 0; i < n; i++) { r[i] = b[i] - r[i]; rh[i] = r[i]; p[i] = v[i] = 0.0; }
  bicg_init(ks, hist, dot(n, r, r));
  while (ks->outcome == KS_RUN) {
    double beta = ks->beta, omega = ks->omega;
    for (long i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    odb_sparse_spmv(A, p, v);
    bicg_after_v(ks, dot(n, rh, v), dot(n, v, v));
    if (ks->outcome != KS_RUN) break;
    double alpha = ks->alpha;
    for (long i = 0; i < n; i++) s[i] = r[i] - alpha * v[i];
    bicg_after_s(ks, hist, dot(n, s, s));
    if (ks->half) {
      for (long i = 0; i < n; i++) x[i] += alpha * p[i];
      break;
    }
    odb_sparse_spmv(A, s, t);
    bicg_after_t(ks, dot(n, t, t), dot(n, t, s));
    if (ks->outcome != KS_RUN) break;
    omega = ks->omega;
    for (long i = 0; i < n; i++) { x[i] += alpha * p[i] + omega * s[i]; r[i] = s[i] - omega * t[i]; }
    bicg_end(ks, hist, dot(n, r, r), dot(n, rh, r));
  }
}

/* QMR (Barrett et al., Templates, without look-ahead), M1 = M2 = I, on
** state ks; A CSR (A^T x); hist as for bicgstab; w holds 10 n. */
static void qmr(const odb_sparse *A, const double *b, double *x, kstate *ks, double *hist, double *w)
{
  long n = A->n;
  double *r = w, *vt = w + n, *wt = w + 2 * n, *v = w + 3 * n, *ww = w + 4 * n;
  double *p = w + 5 * n, *q = w + 6 * n, *pt = w + 7 * n, *d = w + 8 * n, *s = w + 9 * n;
  odb_sparse_spmv(A, x, r);
  for (long i = 0; i < n; i++) {
    r[i] = b[i] - r[i]; vt[i] = wt[i] = r[i];
    p[i] = q[i] = d[i] = s[i] = 0.0;
  }
  qmr_init(ks, hist, dot(n, r, r));
  while (ks->outcome == KS_RUN) {
    double rho = ks->qrho, xi = ks->xi, cp = ks->cp, cq = ks->cq;
    for (long i = 0; i < n; i++) {
      v[i] = vt[i] / rho; ww[i] = wt[i] / xi;
      p[i] = v[i] - cp * p[i]; q[i] = ww[i] - cq * q[i];
    }
    odb_sparse_spmv(A, p, pt);
    qmr_after_pt(ks, dot(n, q, pt), dot(n, q, q), dot(n, pt, pt));
    if (ks->outcome != KS_RUN) break;
    double beta = ks->qbeta;
    for (long i = 0; i < n; i++) vt[i] = pt[i] - beta * v[i];
    odb_sparse_spmv_t(A, q, wt);
    for (long i = 0; i < n; i++) wt[i] -= beta * ww[i];
    qmr_after_vw(ks, dot(n, vt, vt), dot(n, wt, wt), dot(n, wt, vt));
    if (ks->outcome != KS_RUN) break;
    double eta = ks->eta, c = ks->c;
    for (long i = 0; i < n; i++) {
      d[i] = eta * p[i] + c * d[i]; s[i] = eta * pt[i] + c * s[i];
      x[i] += d[i]; r[i] -= s[i];
    }
    qmr_end(ks, hist, dot(n, r, r));
  }
}

/* s finished; res's history is the array the steps wrote. */
odb_status odb_krylov_state_finish(const kstate *s, odb_krylov_method m, odb_krylov_result *res)
{
  const char *name = m == ODB_KRYLOV_QMR ? "QMR" : "BiCGStab";
  int o = s->outcome;
  res->outcome = (odb_krylov_outcome)o;
  res->iters = s->it;
  res->breakdown_iter = o == ODB_KRY_BREAKDOWN_RHO || o == ODB_KRY_BREAKDOWN_OMEGA ||
                        o == ODB_KRY_BREAKDOWN_OTHER ? s->bditer : -1;
  res->relres = s->rel;
  res->nhist = s->nhist;
  switch (o) {
  case ODB_KRY_CONVERGED: return ODB_OK;
  case ODB_KRY_MAXIT:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s: no convergence in %d iterations (relative residual %.3g)",
                    name, s->it, s->rel);
  case ODB_KRY_STAGNATED:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s stagnated at iteration %d (relative residual %.3g, no 1%% progress in %d)",
                    name, s->it, s->rel, s->window);
  default:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s breakdown (%s) at iteration %d (relative residual %.3g)",
                    name, odb_krylov_outcome_name((odb_krylov_outcome)o), s->bditer, s->rel);
  }
}

/* A any format (CSR for QMR), b and x of length n; opts may be NULL. */
odb_status odb_krylov_solve(const odb_sparse *A, odb_krylov_method method,
                            const double *b, double *x,
                            const odb_krylov_opts *opts, odb_krylov_result *res)
{
  memset(res, 0, sizeof *res);
  res->breakdown_iter = -1;
  odb_krylov_opts o = {1e-10, 1000, 100};
  if (opts) {
    if (opts->tol > 0) o.tol = opts->tol;
    if (opts->maxit > 0) o.maxit = opts->maxit;
    if (opts->stag_window > 0) o.stag_window = opts->stag_window;
  }
  if (method != ODB_KRYLOV_BICGSTAB && method != ODB_KRYLOV_QMR)
    return ODB_FAIL(ODB_ERR_ARG, "unknown Krylov method %d", (int)method);
  if (method == ODB_KRYLOV_QMR && A->fmt != ODB_FMT_CSR)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "QMR needs A^T x and so CSR, got %s", odb_sparse_format_name(A->fmt));
  long n = A->n;
  double bn = sqrt(dot(n, b, b));
  if (bn == 0.0) bn = 1.0;
  res->history = malloc((size_t)(o.maxit + 2) * sizeof *res->history);
  double *w = malloc((size_t)10 * n * sizeof *w);
  if (!res->history || !w) {
    free(w); odb_krylov_result_free(res);
    return ODB_FAIL(ODB_ERR_NOMEM, "Krylov work space for order %ld", n);
  }
  kstate ks = ks_new(bn, &o);
  if (method == ODB_KRYLOV_QMR) qmr(A, b, x, &ks, res->history, w);
  else bicgstab(A, b, x, &ks, res->history, w);
  odb_sparse_spmv(A, x, w);
  for (long i = 0; i < n; i++) w[i] = b[i] - w[i];
  res->relres_true = sqrt(dot(n, w, w)) / bn;
  free(w);
  return odb_krylov_state_finish(&ks, method, res);
}

/* Accepts a zeroed or filled result. */
void odb_krylov_result_free(odb_krylov_result *res)
{
  free(res->history);
  res->history = NULL; res->nhist = 0;
}
