/* krylov.c - BiCGStab and QMR (Freund-Nachtigal, no look-ahead, no
** preconditioner) CPU reference with residual history, breakdown and
** stagnation detection, and the true residual recomputed at the end. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "odb_sparse.h"

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

/* Euclidean norm of a vector of length n. */
static double nrm(long n, const double *a) { return sqrt(dot(n, a, a)); }

/* Stagnation tracker: best relative residual and iterations since it fell 1%. */
typedef struct stag { double best; int since; int window; } stag;
/* Returns 1 when no 1% progress for `window` iterations. */
static int stag_step(stag *s, double rel)
{
  if (rel < 0.99 * s->best) { s->best = rel; s->since = 0; return 0; }
  return ++s->since >= s->window;
}

/* res->history has room for maxit + 1 entries. */
static void hist_push(odb_krylov_result *res, double rel)
{
  res->history[res->nhist++] = rel;
  res->relres = rel;
}

/* True breakdown test: |v| tiny relative to the scale of its factors. */
static int tiny(double v, double scale) { return !(fabs(v) > 1e-300) || fabs(v) <= 1e-15 * scale; }

/* BiCGStab; w holds 7 n. */
static void bicgstab(const odb_sparse *A, const double *b, double *x, double bn,
                     const odb_krylov_opts *o, odb_krylov_result *res, double *w)
{
  long n = A->n;
  double *r = w, *rh = w + n, *p = w + 2 * n, *v = w + 3 * n, *s = w + 4 * n, *t = w + 5 * n;
  odb_sparse_spmv(A, x, r);
  for (long i = 0; i < n; i++) { r[i] = b[i] - r[i]; rh[i] = r[i]; p[i] = v[i] = 0.0; }
  double rho_old = 1.0, alpha = 1.0, omega = 1.0, rel = nrm(n, r) / bn;
  stag sg = {rel, 0, o->stag_window};
  hist_push(res, rel);
  if (rel <= o->tol) { res->outcome = ODB_KRY_CONVERGED; return; }
  for (int it = 1; it <= o->maxit; it++) {
    res->iters = it;
    double rho = dot(n, rh, r);
    if (tiny(rho, nrm(n, rh) * nrm(n, r))) { res->outcome = ODB_KRY_BREAKDOWN_RHO; res->breakdown_iter = it; return; }
    double beta = (rho / rho_old) * (alpha / omega);
    for (long i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    odb_sparse_spmv(A, p, v);
    double den = dot(n, rh, v);
    if (tiny(den, nrm(n, rh) * nrm(n, v))) { res->outcome = ODB_KRY_BREAKDOWN_RHO; res->breakdown_iter = it; return; }
    alpha = rho / den;
    for (long i = 0; i < n; i++) s[i] = r[i] - alpha * v[i];
    double sn = nrm(n, s) / bn;
    if (sn <= o->tol) {
      for (long i = 0; i < n; i++) { x[i] += alpha * p[i]; r[i] = s[i]; }
      hist_push(res, sn);
      res->outcome = ODB_KRY_CONVERGED;
      return;
    }
    odb_sparse_spmv(A, s, t);
    double tt = dot(n, t, t), ts = dot(n, t, s);
    if (tt == 0.0 || tiny(ts, sqrt(tt) * nrm(n, s))) {
      res->outcome = ODB_KRY_BREAKDOWN_OMEGA; res->breakdown_iter = it; return;
    }
    omega = ts / tt;
    for (long i = 0; i < n; i++) { x[i] += alpha * p[i] + omega * s[i]; r[i] = s[i] - omega * t[i]; }
    rho_old = rho;
    rel = nrm(n, r) / bn;
    hist_push(res, rel);
    if (rel <= o->tol) { res->outcome = ODB_KRY_CONVERGED; return; }
    if (!isfinite(rel)) { res->outcome = ODB_KRY_BREAKDOWN_OTHER; res->breakdown_iter = it; return; }
    if (stag_step(&sg, rel)) { res->outcome = ODB_KRY_STAGNATED; return; }
  }
  res->outcome = ODB_KRY_MAXIT;
}

/* QMR (Barrett et al., Templates, without look-ahead), M1 = M2 = I; w holds 10 n. */
static void qmr(const odb_sparse *A, const double *b, double *x, double bn,
                const odb_krylov_opts *o, odb_krylov_result *res, double *w)
{
  long n = A->n;
  double *r = w, *vt = w + n, *wt = w + 2 * n, *v = w + 3 * n, *ww = w + 4 * n;
  double *p = w + 5 * n, *q = w + 6 * n, *pt = w + 7 * n, *d = w + 8 * n, *s = w + 9 * n;
  odb_sparse_spmv(A, x, r);
  for (long i = 0; i < n; i++) { r[i] = b[i] - r[i]; vt[i] = wt[i] = r[i]; }
  double rho = nrm(n, vt), xi = nrm(n, wt), gamma_old = 1.0, eta = -1.0;
  double eps_old = 1.0, theta_old = 0.0, rel = rho / bn;
  stag sg = {rel, 0, o->stag_window};
  hist_push(res, rel);
  if (rel <= o->tol) { res->outcome = ODB_KRY_CONVERGED; return; }
  for (int it = 1; it <= o->maxit; it++) {
    res->iters = it;
    if (rho == 0.0 || xi == 0.0) { res->outcome = ODB_KRY_BREAKDOWN_RHO; res->breakdown_iter = it; return; }
    for (long i = 0; i < n; i++) { v[i] = vt[i] / rho; ww[i] = wt[i] / xi; }
    double delta = dot(n, ww, v);
    if (tiny(delta, 1.0)) { res->outcome = ODB_KRY_BREAKDOWN_RHO; res->breakdown_iter = it; return; }
    if (it == 1) { memcpy(p, v, n * sizeof *p); memcpy(q, ww, n * sizeof *q); }
    else {
      double cp = xi * delta / eps_old, cq = rho * delta / eps_old;
      for (long i = 0; i < n; i++) { p[i] = v[i] - cp * p[i]; q[i] = ww[i] - cq * q[i]; }
    }
    odb_sparse_spmv(A, p, pt);
    double eps = dot(n, q, pt);
    if (tiny(eps, nrm(n, q) * nrm(n, pt))) { res->outcome = ODB_KRY_BREAKDOWN_OTHER; res->breakdown_iter = it; return; }
    double beta = eps / delta;
    for (long i = 0; i < n; i++) vt[i] = pt[i] - beta * v[i];
    odb_sparse_spmv_t(A, q, wt);
    for (long i = 0; i < n; i++) wt[i] -= beta * ww[i];
    double rho_new = nrm(n, vt);
    xi = nrm(n, wt);
    double theta = rho_new / (gamma_old * fabs(beta));
    double gamma = 1.0 / sqrt(1.0 + theta * theta);
    if (gamma == 0.0) { res->outcome = ODB_KRY_BREAKDOWN_OTHER; res->breakdown_iter = it; return; }
    eta = -eta * rho * gamma * gamma / (beta * gamma_old * gamma_old);
    if (it == 1) {
      for (long i = 0; i < n; i++) { d[i] = eta * p[i]; s[i] = eta * pt[i]; }
    } else {
      double c = (theta_old * gamma) * (theta_old * gamma);
      for (long i = 0; i < n; i++) { d[i] = eta * p[i] + c * d[i]; s[i] = eta * pt[i] + c * s[i]; }
    }
    for (long i = 0; i < n; i++) { x[i] += d[i]; r[i] -= s[i]; }
    rho = rho_new; gamma_old = gamma; theta_old = theta; eps_old = eps;
    rel = nrm(n, r) / bn;
    hist_push(res, rel);
    if (rel <= o->tol) { res->outcome = ODB_KRY_CONVERGED; return; }
    if (!isfinite(rel)) { res->outcome = ODB_KRY_BREAKDOWN_OTHER; res->breakdown_iter = it; return; }
    if (stag_step(&sg, rel)) { res->outcome = ODB_KRY_STAGNATED; return; }
  }
  res->outcome = ODB_KRY_MAXIT;
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
  double bn = nrm(n, b);
  if (bn == 0.0) bn = 1.0;
  res->history = malloc((size_t)(o.maxit + 2) * sizeof *res->history);
  double *w = malloc((size_t)10 * n * sizeof *w);
  if (!res->history || !w) {
    free(w); odb_krylov_result_free(res);
    return ODB_FAIL(ODB_ERR_NOMEM, "Krylov work space for order %ld", n);
  }
  const char *name = method == ODB_KRYLOV_QMR ? "QMR" : "BiCGStab";
  if (method == ODB_KRYLOV_QMR) qmr(A, b, x, bn, &o, res, w);
  else bicgstab(A, b, x, bn, &o, res, w);
  odb_sparse_spmv(A, x, w);
  for (long i = 0; i < n; i++) w[i] = b[i] - w[i];
  res->relres_true = nrm(n, w) / bn;
  free(w);
  switch (res->outcome) {
  case ODB_KRY_CONVERGED: return ODB_OK;
  case ODB_KRY_MAXIT:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s: no convergence in %d iterations (relative residual %.3g)",
                    name, res->iters, res->relres);
  case ODB_KRY_STAGNATED:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s stagnated at iteration %d (relative residual %.3g, no 1%% progress in %d)",
                    name, res->iters, res->relres, o.stag_window);
  default:
    return ODB_FAIL(ODB_ERR_MAX_STEPS, "%s breakdown (%s) at iteration %d (relative residual %.3g)",
                    name, odb_krylov_outcome_name(res->outcome), res->breakdown_iter, res->relres);
  }
}

/* Accepts a zeroed or filled result. */
void odb_krylov_result_free(odb_krylov_result *res)
{
  free(res->history);
  res->history = NULL; res->nhist = 0;
}
