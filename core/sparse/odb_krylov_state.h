/* odb_krylov_state.h - the scalar state machine of BiCGStab and QMR: the
** one home of their recurrences, breakdown tests, stagnation window,
** iteration limit and residual history. Not a public header (not
** installed, not in odebench.h).
**
** BiCGStab is H. A. van der Vorst's; QMR is Freund and Nachtigal's in the
** form of Barrett et al., "Templates for the Solution of Linear Systems"
** (no look-ahead, M1 = M2 = I). A solver splits each iteration at its
** reductions: it does the vector work (SpMV, dots, axpys) and hands the
** dot products to the step functions below, which compute every scalar
** (alpha, beta, omega; QMR's delta, eps, beta, theta, gamma, eta and the
** coefficients of the vector updates) and take every decision (breakdown,
** non-finite residual, convergence, stagnation, maxit). The CPU reference
** (krylov.c) and the three GPU implementations (gpu/sparse/odb_krylov_*.cu:
** on the host for cusparse, in the last block of a reduction for fused, in
** thread 0 of every block for persistent) drive the same steps, so for the
** same dot products they take the same decisions; only their sums' order
** differs.
**
** The steps compile as C99 and as CUDA: ODB_HD is __host__ __device__
** under nvcc or NVRTC and empty otherwise. This header includes no CUDA
** header (core/ builds without CUDA). The state is plain data (a
** __shared__ or device copy is a byte copy) and the steps call only
** fabs, sqrt and isfinite.
**
** A step that stops the solve sets outcome (KS_RUN while running) and, for
** a breakdown, bditer; the caller checks outcome after each step that can
** stop and leaves its vector work when it is not KS_RUN.
*/
#ifndef ODB_KRYLOV_STATE_H
#define ODB_KRYLOV_STATE_H

#include <math.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "odb_sparse.h"
#ifdef __cplusplus
}
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define ODB_HD __host__ __device__
#else
#define ODB_HD
#endif

enum { KS_RUN = -1 };              /* outcome while the solve runs */

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

/* Fresh state: constants set, nothing done. bn > 0 (the caller takes 1 for
** b = 0); o holds the defaults already (tol > 0, maxit >= 1, window >= 1). */
static inline kstate ks_new(double bn, const odb_krylov_opts *o) {
  kstate s;
  memset(&s, 0, sizeof s);
  s.bn = bn; s.tol = o->tol; s.maxit = o->maxit; s.window = o->stag_window;
  s.outcome = KS_RUN; s.bditer = -1;
  return s;
}

/* The breakdown test: |v| tiny relative to the scale of its factors (a
** NaN counts as tiny). */
ODB_HD static inline int ks_tiny(double v, double scale) {
  return !(fabs(v) > 1e-300) || fabs(v) <= 1e-15 * scale;
}

/* Appends rel to the history (room for maxit + 2 entries). hist NULL:
** counts only (the blocks of the persistent kernel other than the one
** that records). */
ODB_HD static inline void ks_push(kstate *s, double *hist, double rel) {
  if (hist) hist[s->nhist] = rel;
  s->nhist++;
  s->rel = rel;
}

/* Stops with breakdown outcome o at the current iteration. */
ODB_HD static inline void ks_break(kstate *s, int o) {
  s->outcome = o;
  s->bditer = s->it;
}

/* After an iteration's residual: converged, non-finite (a breakdown),
** stagnated (no 1% fall of the best residual in window iterations), out
** of iterations, in that order; 1 when the solve stops. */
ODB_HD static inline int ks_judge(kstate *s, double rel) {
  if (rel <= s->tol) { s->outcome = ODB_KRY_CONVERGED; return 1; }
  if (!isfinite(rel)) { ks_break(s, ODB_KRY_BREAKDOWN_OTHER); return 1; }
  if (rel < 0.99 * s->best) { s->best = rel; s->since = 0; }
  else if (++s->since >= s->window) { s->outcome = ODB_KRY_STAGNATED; return 1; }
  if (s->it >= s->maxit) { s->outcome = ODB_KRY_MAXIT; return 1; }
  return 0;
}

/* The first residual: history[0], the best so far, convergence at 0. */
ODB_HD static inline int ks_first(kstate *s, double *hist, double rnorm) {
  double rel = rnorm / s->bn;
  ks_push(s, hist, rel);
  s->best = rel;
  s->since = 0;
  if (rel <= s->tol) { s->outcome = ODB_KRY_CONVERGED; return 1; }
  return 0;
}

/* {====== BiCGStab
** One iteration: p = r + beta (p - omega v); v = A p; bicg_after_v;
** s = r - alpha v; bicg_after_s (half set: x += alpha p, done);
** t = A s; bicg_after_t; x += alpha p + omega s, r = s - omega t; bicg_end.
** rhat = r0 throughout. */

/* Iteration start: rho = rhat.r known; the rho test, then beta. */
ODB_HD static inline void bicg_begin(kstate *s) {
  s->it++;
  if (ks_tiny(s->rho, s->rhn * s->rnorm)) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  s->beta = (s->rho / s->rho_old) * (s->alpha / s->omega);
}

/* rr = r.r of r = b - A x0; rhat = r0, so rhat.r = rr. p = v = 0. */
ODB_HD static inline void bicg_init(kstate *s, double *hist, double rr) {
  s->rnorm = s->rhn = sqrt(rr);
  if (ks_first(s, hist, s->rnorm)) return;
  s->rho = rr;
  s->rho_old = s->alpha = s->omega = 1.0;
  bicg_begin(s);
}

/* v = A p: rhv = rhat.v, vv = v.v; the test on rhat.v, then alpha. */
ODB_HD static inline void bicg_after_v(kstate *s, double rhv, double vv) {
  if (ks_tiny(rhv, s->rhn * sqrt(vv))) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  s->alpha = s->rho / rhv;
}

/* s = r - alpha v: ss = s.s; converged on s sets half (x += alpha p). */
ODB_HD static inline void bicg_after_s(kstate *s, double *hist, double ss) {
  s->snorm = sqrt(ss);
  double sn = s->snorm / s->bn;
  if (sn <= s->tol) {
    s->half = 1;
    ks_push(s, hist, sn);
    s->outcome = ODB_KRY_CONVERGED;
  }
}

/* t = A s: tt = t.t, ts = t.s; the omega test, then omega. */
ODB_HD static inline void bicg_after_t(kstate *s, double tt, double ts) {
  if (tt == 0.0 || ks_tiny(ts, sqrt(tt) * s->snorm)) { ks_break(s, ODB_KRY_BREAKDOWN_OMEGA); return; }
  s->omega = ts / tt;
}

/* x, r updated: rr = r.r, rhr = rhat.r (the next rho). */
ODB_HD static inline void bicg_end(kstate *s, double *hist, double rr, double rhr) {
  s->rho_old = s->rho;
  double rel = sqrt(rr) / s->bn;
  ks_push(s, hist, rel);
  if (ks_judge(s, rel)) return;
  s->rho = rhr;
  s->rnorm = sqrt(rr);
  bicg_begin(s);
}

/* }====== */

/* {====== QMR
** One iteration: v = vt / qrho, w = wt / xi, p = v - cp p, q = w - cq q
** (cp = cq = 0 in the first); pt = A p; qmr_after_pt; vt = pt - qbeta v,
** wt = A^T q - qbeta w; qmr_after_vw; d = eta p + c d, s = eta pt + c s,
** x += d, r -= s; qmr_end. p, q, d, s start at 0. delta = w.v is taken
** as wt.vt / (qrho xi) from the unscaled vectors of the step before, so
** it needs no reduction of its own. */

/* delta and the coefficients of p and q. */
ODB_HD static inline void qmr_peek(kstate *s) {
  s->delta = s->wv / (s->qrho * s->xi);
  s->cp = s->xi * s->delta / s->eps_old;
  s->cq = s->qrho * s->delta / s->eps_old;
}

/* Iteration start: the tests on rho, xi and delta. */
ODB_HD static inline void qmr_begin(kstate *s) {
  s->it++;
  if (s->qrho == 0.0 || s->xi == 0.0) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  if (ks_tiny(s->delta, 1.0)) { ks_break(s, ODB_KRY_BREAKDOWN_RHO); return; }
  if (s->it == 1) s->cp = s->cq = 0.0;       /* p = v, q = w */
}

/* rr = r.r of r = b - A x0 (= vt.vt = wt.wt = wt.vt). */
ODB_HD static inline void qmr_init(kstate *s, double *hist, double rr) {
  s->qrho = s->xi = sqrt(rr);
  if (ks_first(s, hist, s->qrho)) return;
  s->gamma_old = 1.0; s->eta = -1.0; s->eps_old = 1.0; s->theta_old = 0.0;
  s->wv = rr;
  qmr_peek(s);
  qmr_begin(s);
}

/* pt = A p: qpt = q.pt, qq = q.q, ptpt = pt.pt; the eps test, then beta. */
ODB_HD static inline void qmr_after_pt(kstate *s, double qpt, double qq, double ptpt) {
  if (ks_tiny(qpt, sqrt(qq) * sqrt(ptpt))) { ks_break(s, ODB_KRY_BREAKDOWN_OTHER); return; }
  s->eps = qpt;
  s->qbeta = qpt / s->delta;
}

/* vt, wt updated: vv, ww, wv = wt.vt; theta, gamma, eta, c; the next
** delta, cp, cq peeked. */
ODB_HD static inline void qmr_after_vw(kstate *s, double vv, double ww, double wv) {
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
ODB_HD static inline void qmr_end(kstate *s, double *hist, double rr) {
  double rel = sqrt(rr) / s->bn;
  ks_push(s, hist, rel);
  if (ks_judge(s, rel)) return;
  qmr_begin(s);
}

/* }====== */

#ifdef __cplusplus
extern "C" {
#endif

/* A finished state s (outcome not KS_RUN) into res: outcome, iters,
** breakdown_iter (-1 unless a breakdown), relres and nhist; the history
** array and relres_true are the caller's. Returns ODB_OK when converged,
** else ODB_ERR_MAX_STEPS with the message that names the method, the
** outcome, the iteration and the residual (krylov.c). */
odb_status odb_krylov_state_finish(const kstate *s, odb_krylov_method m, odb_krylov_result *res);

#ifdef __cplusplus
}
#endif

#endif
