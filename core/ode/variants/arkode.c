/* arkode.c - variant "arkode": the peer, SUNDIALS ARKODE's ERKStep. */
#include "erk_common.h"
#include "arkode.h"

/*
** This file is compiled only when the build has peers (meson -Dpeers=
** enabled): it and arkode.h (what the distributed peer arkode_mpi shares
** with it) are the only files in core/ that include SUNDIALS headers,
** because ARKODE is an optional peer measured beside our variants, not a
** dependency of the engine. It needs SUNDIALS 6.x (Debian 12: 6.4.1).
*/
#include <arkode/arkode_erkstep.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_version.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(SUNDIALS_DOUBLE_PRECISION) || SUNDIALS_VERSION_MAJOR != 6
#error "the arkode variant needs SUNDIALS 6.x built for double precision"
#endif

/*
** Design. ARKODE owns its time stepping and its step-size control, and
** odb's driver wants a single step of a given h (variant->attempt). So one
** attempt is one ARKODE step of exactly h:
**
**   - ARKODE runs in fixed-step mode: ERKStepSetFixedStep(h) before each
**     ERKStepEvolve(..., ARK_ONE_STEP). Our driver's controller chooses h,
**     accepts or rejects, so ARKODE and our variants take the same step
**     sequence and their times per step compare like with like. (The same
**     up to rounding: the embedded estimate is a difference of terms 10^4
**     to 10^6 times larger than itself, so ARKODE's summation order moves
**     its last digits and h then differs in about the 11th digit; over
**     hundreds of steps an accept/reject decision next to err = 1 can
**     flip, and the step counts then differ by a few.)
**   - The tableau is ours (ARKodeButcherTable_Create from A, b, bhat, c and
**     the orders), so ARKODE computes the same arithmetic up to rounding:
**     it forms each stage argument as sum_j (h a_lj) F_j + 1 * y with
**     N_VLinearCombination, over all j < l (zero coefficients included).
**   - No copies at the interface: s->y and s->ynew are wrapped in serial
**     N_Vectors (N_VMake_Serial / N_VSetArrayPointer). ARKODE 6.4 uses the
**     output vector as its ycur, so the stage arguments and the new
**     solution are written straight into s->ynew; it keeps its own copy of
**     the state (yn) and copies ycur into it after each step.
**   - The error estimate: in fixed-step mode ERKStep computes no embedded
**     estimate (ERKStepGetEstLocalErrors stays zero), and it has no API to
**     the stage values. The RHS wrapper therefore watches which ARKODE
**     vector each call writes. The first call ever writes stage 0 (F0);
**     later calls into F0 evaluate stage 0 at the start of a step (or, in
**     6.4, f at the new solution at the end of one), every other call is
**     the next stage 1, 2, ..., s-1 of this step. ARKODE 6.4 overwrites F0
**     at the end of the step (with f(t+h, ynew) or, under FSAL, a copy of
**     the last stage), so the wrapper takes the stage-0 term when stage 1
**     is called: e = h (b_0 - bhat_0) F0 (N_VScale); after the step,
**     e += sum_{i>=1} h (b_i - bhat_i) F_i (N_VLinearCombination over
**     ARKODE's stage vectors, zero coefficients included, as ERKStep does
**     it in adaptive mode), and our weighted RMS norm (odb_err_norm) of e.
**     With ARKODE's one-vector-at-a-time linear combinations that is
**     2s + 3 vector reads and s + 1 writes against 2s + 1 and s for
**     ERKStep's own estimate and WRMS norm: three transfers more, about 2%
**     of the some 155 vector transfers of an ARKODE dopri5 step, a small
**     handicap for ARKODE.
**   - State hand-over: after an accepted step the driver swaps y and ynew
**     and adds h to t, so ARKODE's state (tn, yn) is ours again and the
**     next step continues without a reset (FSAL reuse included). After a
**     rejected step, set_state or reset, ARKODE is out of step with us and
**     is reset with ERKStepReset(t, y): a copy of y and, for FSAL methods,
**     one RHS evaluation more than ARKODE's own retry would make (it
**     recomputes stage 0). We detect "in step" by t, by the y pointer and
**     by three sample components of y (first, middle, last) that must be
**     bitwise what ARKODE returned; a caller that changes other components
**     of s->y in place without changing those three goes unnoticed (the
**     solver API does not do that: set_state copies a whole vector).
**   - ARKODE's controller (ERKStepSetAdaptivityMethod, SetSafetyFactor,
**     SetMaxGrowth, SetMinReduction, SetErrorBias) is not used in
**     fixed-step mode. Its error weights are set, though: in fixed-step
**     mode ERKStep would fill them with the smallest normal double, and the WRMS norm of
**     y it takes every step (its "too much accuracy" check) then runs on
**     denormal numbers, which makes a cache-resident step about 1.5x
**     slower than ARKODE's own adaptive loop. So the variant installs its own weight
**     function (ERKStepWFtolerances) that does what ERKStep's adaptive mode
**     does with scalar tolerances, with the same vector operations (|y|,
**     * rtol, + atol, 1/x; a min check only when atol = 0):
**     ewt = 1 / (rtol |y| + atol).
**   - ARKODE 6.4 treats every table with c_s = 1 as first-same-as-last
**     (SUNDIALS issue #311, fixed in later releases): for heun_euler, rk4
**     and verner65, which have c_s = 1 but are not FSAL, it would copy the
**     last stage into stage 0 and compute a wrong step. init() probes the
**     library for that behaviour (a two-step Heun run on y' = -y); where it
**     shows, the variant resets ARKODE before every step of such a method,
**     which makes ARKODE evaluate stage 0 (as it must) at the cost of one
**     extra vector copy per step (y into ARKODE's yn). FSAL methods (bs3,
**     dopri5) are unaffected.
**   - Methods without bhat (rk4) run: fixed steps need no estimate. PIRK
**     methods do not apply.
**   - nfev counts ARKODE's actual RHS calls.
**   - ARKODE's speed depends on how its library was compiled: Debian 12's
**     libsundials 6.4.1+dfsg1-3 is built without optimization (its rules
**     set CMAKE_C_FLAGS=-fcommon, which drops dpkg's -O2), so init() logs
**     which libsundials_arkode was loaded; an optimized build of the same
**     source can be swapped in with LD_LIBRARY_PATH (same soname and ABI).
*/

typedef struct arkode_data {
  SUNContext sunctx;
  void *mem;                /* ERKStep memory */
  N_Vector yin, yout;       /* wrap s->y (for resets) and s->ynew */
  N_Vector e;               /* wraps s->F[0], the estimate's vector */
  N_Vector Fw[ERK_MAX_STAGES]; /* wrap ARKODE's stage vectors; Fw[0] = e */
  sunrealtype ecoef[ERK_MAX_STAGES]; /* b_i - bhat_i */
  double *F0;               /* ARKODE's stage-0 vector (first call's output) */
  double *stage[ERK_MAX_STAGES]; /* this step's stage vectors 1..s-1 */
  int nstage;               /* stage calls (>= 1) so far in this step */
  int ncalls;               /* all RHS calls in this step */
  double h;                 /* this step's size */
  int estimating;           /* the method has bhat: build e */
  int failed;               /* the wrapper met a call it cannot place */
  int reset_each_step;      /* workaround for SUNDIALS issue #311 */
  int synced;               /* ARKODE's (tn, yn) is (t_sync, y_sync) */
  double t_sync;
  const double *y_sync;
  double probe[3];          /* y_sync[0], y_sync[n/2], y_sync[n-1] */
  char msg[ARKODE_MSG_LEN]; /* last error ARKODE reported */
} arkode_data;

/*
** The RHS ARKODE calls: the problem's f over all components. Places the
** call (stage 0, or the next stage of this step, by the output vector) and,
** before stage 1, puts the stage-0 term of the estimate into e while F0
** still holds f(tn, yn). Assumes user_data is the solver and y, ydot are
** serial vectors of length n.
*/
static int arkode_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  odb_solver *s = ud;
  arkode_data *vd = s->vdata;
  double *f = N_VGetArrayPointer(ydot);
  vd->ncalls++;
  if (!vd->F0) vd->F0 = f;
  if (f != vd->F0) {
    if (vd->nstage + 1 >= s->method->s) {
      vd->failed = 1;
      return -1;
    }
    vd->stage[++vd->nstage] = f;
    if (vd->nstage == 1 && vd->estimating) {
      N_VSetArrayPointer(vd->F0, vd->Fw[1]);
      N_VScale(vd->h * vd->ecoef[0], vd->Fw[1], vd->e);
    }
  }
  s->problem->rhs(s->problem, t, N_VGetArrayPointer(y), 0, f, 0, s->n);
  return 0;
}

/* See arkode.h. */
int arkode_ewt(N_Vector y, N_Vector ewt, void *ud) {
  const odb_solver *s = ud;
  N_VAbs(y, ewt);
  N_VScale(s->opts.rtol, ewt, ewt);
  N_VAddConst(ewt, s->opts.atol, ewt);
  if (s->opts.atol <= 0 && N_VMin(ewt) <= 0) return -1;
  N_VInv(ewt, ewt);
  return 0;
}

/* Keeps ARKODE's last error message in ud (ARKODE_MSG_LEN chars) for
   ODB_FAIL instead of printing it. */
static void arkode_err(int code, const char *module, const char *function,
                       char *msg, void *ud) {
  snprintf(ud, ARKODE_MSG_LEN, "%s (%s, code %d)", msg,
           function ? function : (module ? module : "ARKODE"), code);
}

/* See arkode.h. */
int arkode_erk_setup(void *mem, const odb_method *m, odb_solver *s,
                     char *msg) {
  ARKodeButcherTable B;
  int rc;
  ERKStepSetErrHandlerFn(mem, arkode_err, msg);
  B = arkode_table(m);
  if (!B) {
    snprintf(msg, ARKODE_MSG_LEN, "out of memory for the Butcher table");
    return ARK_MEM_FAIL;
  }
  rc = ERKStepSetTable(mem, B);
  ARKodeButcherTable_Free(B);
  if (rc == ARK_SUCCESS) rc = ERKStepSetUserData(mem, s);
  if (rc == ARK_SUCCESS) rc = ERKStepWFtolerances(mem, arkode_ewt);
  if (rc == ARK_SUCCESS) rc = ERKStepSetFixedStep(mem, 1.0);
  if (rc == ARK_SUCCESS) rc = ERKStepSetMaxHnilWarns(mem, -1);
  return rc;
}

/* Explicit RK methods of 2 to ERK_MAX_STAGES stages, any problem. */
static int arkode_applies(const odb_problem *p, const odb_method *m,
                          char *why, size_t nwhy) {
  (void)p;
  if (m->kind != ODB_METHOD_ERK) {
    snprintf(why, nwhy, "arkode runs explicit RK methods only; '%s' is a "
             "PIRK corrector", m->name);
    return 0;
  }
  if (m->s < 2 || m->s > ERK_MAX_STAGES) {
    snprintf(why, nwhy, "arkode supports 2 to %d stages", ERK_MAX_STAGES);
    return 0;
  }
  return 1;
}

/* See arkode.h. */
ARKodeButcherTable arkode_table(const odb_method *m) {
  sunrealtype A[ERK_MAX_STAGES * ERK_MAX_STAGES], b[ERK_MAX_STAGES];
  sunrealtype c[ERK_MAX_STAGES], d[ERK_MAX_STAGES];
  int S = m->s;
  for (int i = 0; i < S * S; ++i) A[i] = m->A[i];
  for (int i = 0; i < S; ++i) {
    b[i] = m->b[i];
    c[i] = m->c[i];
    d[i] = m->bhat ? m->bhat[i] : 0.0;
  }
  return ARKodeButcherTable_Create(S, m->order, m->bhat ? m->order_emb : 0,
                                   c, A, b, m->bhat ? d : NULL);
}

/* y' = -y for the probe of SUNDIALS issue #311. */
static int probe_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  (void)t; (void)ud;
  NV_Ith_S(ydot, 0) = -NV_Ith_S(y, 0);
  return 0;
}

/* See arkode.h (Heun's growth factor is 1 - h + h^2/2). */
int arkode_fsal_bug(SUNContext ctx) {
  sunrealtype A[4] = { 0, 0, 1, 0 }, b[2] = { 0.5, 0.5 }, c[2] = { 0, 1 };
  sunrealtype t = 0;
  ARKodeButcherTable B = ARKodeButcherTable_Create(2, 2, 0, c, A, b, NULL);
  N_Vector y = N_VNew_Serial(1, ctx);
  void *mem = NULL;
  int bug = 1;
  if (!B || !y) goto done;
  NV_Ith_S(y, 0) = 1.0;
  mem = ERKStepCreate(probe_rhs, 0.0, y, ctx);
  if (!mem || ERKStepSetTable(mem, B) != ARK_SUCCESS ||
      ERKStepSetFixedStep(mem, 0.5) != ARK_SUCCESS)
    goto done;
  if (ERKStepEvolve(mem, 0.5, y, &t, ARK_ONE_STEP) < 0 ||
      ERKStepEvolve(mem, 1.0, y, &t, ARK_ONE_STEP) < 0)
    goto done;
  bug = NV_Ith_S(y, 0) != 0.390625;
done:
  if (mem) ERKStepFree(&mem);
  if (y) N_VDestroy(y);
  if (B) ARKodeButcherTable_Free(B);
  return bug;
}

/* Logs, once per process, the ARKODE library and version in use. */
static void log_library(odb_ctx *ctx) {
  static int done;
  char version[32] = "?";
  Dl_info info;
  if (done || !ctx) return;
  done = 1;
  SUNDIALSGetVersion(version, (int)sizeof version);
  if (!dladdr((void *)ERKStepCreate, &info) || !info.dli_fname)
    info.dli_fname = "an unknown library";
  odb_ctx_log(ctx, ODB_LOG_INFO, "arkode: SUNDIALS %s ERKStep from %s",
              version, info.dli_fname);
}

/* Sets up ARKODE: context, vectors, ERKStep with our tableau, fixed step. */
static odb_status arkode_init(odb_solver *s) {
  const odb_method *m = s->method;
  arkode_data *vd = calloc(1, sizeof *vd);
  int rc;
  if (!vd) return ODB_FAIL(ODB_ERR_NOMEM, "arkode: variant data");
  s->vdata = vd;
  if (SUNContext_Create(NULL, &vd->sunctx) != 0)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode: SUNContext_Create failed");
  /* ERKStepCreate copies y0 into its own state: give it defined values */
  s->problem->initial(s->problem, s->y);
  vd->yin = N_VMake_Serial((sunindextype)s->n, s->y, vd->sunctx);
  vd->yout = N_VMake_Serial((sunindextype)s->n, s->ynew, vd->sunctx);
  vd->e = N_VMake_Serial((sunindextype)s->n, s->F[0], vd->sunctx);
  if (!vd->yin || !vd->yout || !vd->e)
    return ODB_FAIL(ODB_ERR_NOMEM, "arkode: vector wrappers");
  vd->Fw[0] = vd->e;
  for (int l = 1; l < m->s; ++l) {
    vd->Fw[l] = N_VMake_Serial((sunindextype)s->n, s->F[0], vd->sunctx);
    if (!vd->Fw[l]) return ODB_FAIL(ODB_ERR_NOMEM, "arkode: wrappers");
  }
  vd->mem = ERKStepCreate(arkode_rhs, s->problem->t0, vd->yin, vd->sunctx);
  if (!vd->mem) return ODB_FAIL(ODB_ERR_BACKEND, "arkode: ERKStepCreate "
                                "failed for n = %ld", s->n);
  rc = arkode_erk_setup(vd->mem, m, s, vd->msg);
  if (rc != ARK_SUCCESS)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode: setting up %s failed: %s",
                    m->name, vd->msg);
  vd->estimating = m->bhat != NULL;
  for (int i = 0; i < m->s && m->bhat; ++i)
    vd->ecoef[i] = m->b[i] - m->bhat[i];
  vd->reset_each_step = !m->fsal && fabs(m->c[m->s - 1] - 1.0) <= 1e-10 &&
                        arkode_fsal_bug(vd->sunctx);
  log_library(s->ctx);
  return ODB_OK;
}

/* Frees what init made, also after a partial init (NULL members skipped). */
static void arkode_fini(odb_solver *s) {
  arkode_data *vd = s->vdata;
  if (!vd) return;
  if (vd->mem) ERKStepFree(&vd->mem);
  for (int i = 1; i < ERK_MAX_STAGES; ++i)
    if (vd->Fw[i]) N_VDestroy(vd->Fw[i]);
  if (vd->e) N_VDestroy(vd->e);
  if (vd->yout) N_VDestroy(vd->yout);
  if (vd->yin) N_VDestroy(vd->yin);
  if (vd->sunctx) SUNContext_Free(&vd->sunctx);
  free(vd);
  s->vdata = NULL;
}

/* 1 when ARKODE's state is (s->t, s->y) (see "State hand-over" above). */
static int in_sync(const odb_solver *s, const arkode_data *vd) {
  long n = s->n;
  double now[3] = { s->y[0], s->y[n / 2], s->y[n - 1] };
  return vd->synced && !vd->reset_each_step && s->t == vd->t_sync &&
         s->y == vd->y_sync && memcmp(now, vd->probe, sizeof now) == 0;
}

/*
** Completes the estimate after the step: e (holding the stage-0 term) +=
** sum_{i>=1} h (b_i - bhat_i) F_i over ARKODE's stage vectors, then our
** weighted RMS norm. Assumes the wrapper saw all s - 1 stage calls.
*/
static odb_status estimate(odb_solver *s, arkode_data *vd, double h,
                           double *err) {
  sunrealtype cv[ERK_MAX_STAGES];
  int S = s->method->s;
  cv[0] = 1.0;
  for (int l = 1; l < S; ++l) {
    cv[l] = h * vd->ecoef[l];
    N_VSetArrayPointer(vd->stage[l], vd->Fw[l]);
  }
  if (N_VLinearCombination(S, cv, vd->Fw, vd->e) != 0)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode: N_VLinearCombination failed");
  *err = odb_err_norm(s->F[0], s->y, s->ynew, s->n, s->opts.atol,
                      s->opts.rtol);
  return ODB_OK;
}

/*
** One ARKODE step of exactly h from (s->t, s->y) into s->ynew (see the
** design notes at the top). Resets ARKODE first when it is out of step.
*/
static odb_status arkode_attempt(odb_solver *s, double h, double *err) {
  arkode_data *vd = s->vdata;
  sunrealtype tret = s->t;
  long n = s->n;
  int rc, expected = s->method->s - (s->fsal_ready ? 1 : 0);
  vd->msg[0] = '\0';
  vd->ncalls = vd->nstage = vd->failed = 0;
  vd->h = h;
  N_VSetArrayPointer(s->F[0], vd->e);
  if (!in_sync(s, vd)) {
    N_VSetArrayPointer(s->y, vd->yin);
    if (ERKStepReset(vd->mem, s->t, vd->yin) != ARK_SUCCESS)
      return ODB_FAIL(ODB_ERR_BACKEND, "arkode: reset failed: %s", vd->msg);
  }
  vd->synced = 0;
  if (ERKStepSetFixedStep(vd->mem, h) != ARK_SUCCESS)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode: step %g refused: %s", h,
                    vd->msg);
  N_VSetArrayPointer(s->ynew, vd->yout);
  rc = ERKStepEvolve(vd->mem, s->t + h, vd->yout, &tret, ARK_ONE_STEP);
  if (vd->failed || (rc >= 0 && vd->nstage != s->method->s - 1))
    return ODB_FAIL(ODB_ERR_INTERNAL, "arkode: ARKODE made %d stage calls "
                    "in a %d-stage step", vd->nstage + vd->failed,
                    s->method->s);
  if (rc < 0)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode: step of %g at t = %.17g "
                    "failed (%d): %s", h, s->t, rc, vd->msg);
  /* the driver books method->s (- 1 under FSAL); book ARKODE's real calls */
  s->stats.nfev += vd->ncalls - expected;
  *err = 0.0;
  if (vd->estimating) ODB_TRY(estimate(s, vd, h, err));
  vd->synced = 1;
  vd->t_sync = tret;
  vd->y_sync = s->ynew;
  vd->probe[0] = s->ynew[0];
  vd->probe[1] = s->ynew[n / 2];
  vd->probe[2] = s->ynew[n - 1];
  return ODB_OK;
}

/*
** The sweeps ERKStep 6.4 makes per step, as read from its source (setup
** work after resets left out). Its linear combinations of k vectors go one
** vector at a time (N_VScale, then N_VLinearSum per further vector): 2k - 1
** reads, k writes. Stage l >= 1: the argument from the l earlier stages and
** y, the RHS. Stage 0: the RHS and a copy into ARKODE's fn, or under FSAL
** reuse copies of the last stage into stage 0 and into fn. The new solution
** (s stages and y); our estimate (stage-0 term, then e plus the other
** s - 1 stages) and norm (e, y, ynew); the error weights (|y|, scale, add,
** invert) and ARKODE's WRMS norm of y; the copy of ycur into yn and the
** Hermite interpolant's copies of yn and fn.
*/
static void arkode_traffic(const odb_solver *s, int stage0, double *r,
                           double *w) {
  int S = s->method->s;
  double v = (double)s->n * sizeof(double), rd = 2 * v, wr = 2 * v;
  (void)stage0;   /* stage 0: RHS + copy, or under FSAL two copies */
  for (int l = 1; l < S; ++l) {
    rd += v * (2 * (l + 1) - 1) + v;
    wr += v * (l + 1) + v;
  }
  rd += v * (2 * (S + 1) - 1);
  wr += v * (S + 1);
  if (s->method->bhat) {
    rd += v * (1 + 2 * S - 1) + 3 * v;
    wr += v * (1 + S);
  }
  rd += 4 * v + 2 * v + 3 * v;
  wr += 4 * v + 3 * v;
  *r = rd;
  *w = wr;
}

const odb_variant odb_variant_arkode = {
  .name = "arkode",
  .doc = "the peer: SUNDIALS ARKODE's ERKStep with our tableau, one fixed "
         "ARKODE step per attempt (built with -Dpeers=enabled)",
  .backend = "cpu",
  .applies = arkode_applies,
  .init = arkode_init,
  .fini = arkode_fini,
  .attempt = arkode_attempt,
  .traffic = arkode_traffic,
};
