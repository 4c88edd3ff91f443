/* dist_arkode.c - variant "arkode_mpi": the distributed peer, SUNDIALS
   ARKODE's ERKStep on an NVECTOR_PARALLEL vector over the ranks, beside
   mpi_N (dist_erk.c). */
#include "odb_dist_ode.h"

/*
** Compiled only when the build has peers, MPI and SUNDIALS's parallel
** N_Vector (meson: have_arkode_mpi; Debian 12: libsundials-arkode5 and
** libsundials-nvecparallel-mpi6, SUNDIALS 6.4.1 built against Open MPI).
*/
#include <arkode/arkode_erkstep.h>
#include <nvector/nvector_parallel.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_version.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkode.h"
#include "dist_halo.h"
#include "erk_common.h"
#include "odb_dist.h"

#if !defined(SUNDIALS_DOUBLE_PRECISION) || SUNDIALS_VERSION_MAJOR != 6
#error "the arkode_mpi variant needs SUNDIALS 6.x built for double precision"
#endif

/*
** Design: the one-process peer (core/ode/variants/arkode.c, whose design
** notes hold here too) with its vectors split over the ranks the way a
** SUNDIALS user splits them, and mpi_N's split and exchange:
**
**   - Every N_Vector is an NVECTOR_PARALLEL vector over the run's
**     communicator (odb_dist_comm: MPI_COMM_WORLD) whose local part is
**     this rank's block [a, b) of mpi_N's split (dist_blocks: contiguous,
**     the first n mod R ranks one component more). ARKODE's vector
**     operations run on the block; its reductions (the WRMS norm of y
**     that ERKStep takes every step, N_VMin of the weights) are its own
**     MPI_Allreduce calls.
**   - The solver's vectors stay full length on every rank (the core
**     allocates them, set_state gives every rank the whole state): y,
**     ynew and F[0] are wrapped at their block (N_VMake_Parallel on
**     s->y + a, ...), so ARKODE writes its stage arguments and the new
**     solution into s->ynew's block, as the one-process peer does.
**   - The RHS callback is what a SUNDIALS user writes for a stencil: it
**     exchanges the halo of width d with the two neighbours (dist_halo.c's
**     DIST_NEIGHBOUR plan, MPI_Isend/Irecv), evaluates f on the interior
**     while the halo travels, waits, and evaluates the two edges. The
**     plan's messages land at the components' own places of a full-length
**     vector: when ARKODE's input is the block of s->ynew (its ycur: every
**     stage l >= 1) or of s->y, the halo lands around it in place; any
**     other input (ARKODE's own yn, read for stage 0 after a reset) is
**     first copied into the block of a full-length work vector. Under FSAL
**     (dopri5) stage 0 is ARKODE's copy of the last stage, so a step runs
**     without that copy: a user's separate ghost buffer would cost a copy
**     of the block per RHS call, which the peer is spared.
**   - Tableau, fixed step per attempt, error weights, the estimate from
**     ARKODE's stage vectors and the workaround of SUNDIALS issue #311 are
**     the one-process peer's (the Butcher table and the probe are the same
**     code over parallel vectors). The estimate's norm is mpi_N's: this
**     block's sum of squares (erk_norm_acc), the R partial sums gathered
**     to every rank and added in rank order, so every rank takes the same
**     accept/reject decision and the same next h.
**   - Whether ARKODE is in step with the solver (no reset needed) is
**     decided by every rank together (the largest "out of step" over the
**     ranks): a reset makes ARKODE evaluate stage 0, an RHS call with an
**     exchange, which every rank must make or none. One 8-byte
**     allreduce a step, a few microseconds on one host.
**   - Applies where mpi_N does: an explicit RK method, a limited access
**     distance d < n and every block at least d long (the callback talks
**     to the two neighbours only), and only with MPI started.
**   - Timeouts: the halo exchanges and the estimate's gather wait at most
**     ODEBENCH_MPI_TIMEOUT (docs/mpi.md, "Faults"); ARKODE's own
**     MPI_Allreduce calls wait as long as MPI waits (a rank that fails
**     ends the run with MPI_Abort, which ends them).
*/

typedef struct arkode_mpi_data {
  SUNContext sunctx;
  void *mem;                /* ERKStep memory */
  dist_halo halo;           /* mpi_N's plan: block [a, b), interior */
  const odb_variant *peer;  /* "arkode", whose traffic is the block's */
  N_Vector yin, yout;       /* wrap the blocks of s->y and s->ynew */
  N_Vector e;               /* wraps s->F[0]'s block, the estimate */
  N_Vector Fw[ERK_MAX_STAGES]; /* wrap ARKODE's stage vectors; Fw[0] = e */
  sunrealtype ecoef[ERK_MAX_STAGES]; /* b_i - bhat_i */
  double *F0;               /* ARKODE's stage-0 vector (first call's output) */
  double *stage[ERK_MAX_STAGES]; /* this step's stage vectors 1..s-1 */
  long *one, *rank_at;      /* counts 1 and displacements r of the norm */
  double *parts;            /* the R partial sums */
  int nstage;               /* stage calls (>= 1) so far in this step */
  int ncalls;               /* all RHS calls in this step */
  double h;                 /* this step's size */
  int estimating;           /* the method has bhat: build e */
  int failed;               /* the wrapper met a call it cannot place */
  odb_status rhs_status;    /* an exchange in the callback failed */
  int reset_each_step;      /* workaround for SUNDIALS issue #311 */
  int synced;               /* ARKODE's (tn, yn) is (t_sync, y_sync) */
  double t_sync;
  const double *y_sync;
  double probe[3];          /* y_sync at a, (a + b) / 2, b - 1 */
  char msg[ARKODE_MSG_LEN]; /* last error ARKODE reported */
} arkode_mpi_data;

/* f_j(tc, v) for j in [j0, j1) into the block's F (F[0] is component a). */
static void rhs_range(const odb_problem *p, double tc, const double *v,
                      double *F, long a, long j0, long j1) {
  if (j0 < j1) p->rhs(p, tc, v, 0, F + (j0 - a), j0, j1);
}

/*
** The RHS ARKODE calls with the blocks of y and ydot: places the call as
** the one-process peer does (stage 0 or the next stage, by the output
** vector; the stage-0 term of the estimate before stage 1), then the
** halo exchange overlapped with f on the interior. Assumes user_data is
** the solver and y, ydot are parallel vectors of the block's length.
*/
static int rhs_cb(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  odb_solver *s = ud;
  arkode_mpi_data *vd = s->vdata;
  dist_halo *hl = &vd->halo;
  const odb_problem *p = s->problem;
  double *yl = N_VGetArrayPointer(y), *f = N_VGetArrayPointer(ydot), *v;
  long a = hl->a, b = hl->b;
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
  if (yl == s->ynew + a) {
    v = s->ynew;
  } else if (yl == s->y + a) {
    v = s->y;
  } else {
    v = s->work;
    memcpy(v + a, yl, (size_t)(b - a) * sizeof(double));
  }
  vd->rhs_status = dist_halo_begin(hl, v);
  if (vd->rhs_status != ODB_OK) return -1;
  rhs_range(p, t, v, f, a, hl->ia, hl->ib);
  vd->rhs_status = dist_halo_end(hl, v);
  if (vd->rhs_status != ODB_OK) return -1;
  rhs_range(p, t, v, f, a, a, hl->ia);
  rhs_range(p, t, v, f, a, hl->ib, b);
  return 0;
}

/*
** An explicit RK method, MPI started, and mpi_N's layout (dist_layout_applies:
** a component on every rank, d < n, every block at least d long), whose
** reasons name the mpi_* variants that apply instead.
*/
static int arkode_mpi_applies(const odb_problem *p, const odb_method *m,
                              char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_ERK) {
    snprintf(why, nwhy, "arkode_mpi runs explicit RK methods only; '%s' is "
             "a PIRK corrector", m->name);
    return 0;
  }
  if (m->s < 2 || m->s > ERK_MAX_STAGES) {
    snprintf(why, nwhy, "arkode_mpi supports 2 to %d stages", ERK_MAX_STAGES);
    return 0;
  }
  if (!odb_dist_active()) {
    snprintf(why, nwhy, "arkode_mpi needs MPI started (run under mpirun, or "
             "set ODEBENCH_MPI=1): SUNDIALS's parallel vectors reduce over "
             "the communicator");
    return 0;
  }
  return dist_layout_applies("arkode_mpi", "mpi_", 2, p->label, p->n, p->d,
                             why, nwhy);
}

/* Logs, once per process on rank 0, the libraries in use. */
static void log_library(odb_ctx *ctx) {
  static int done;
  char version[32] = "?";
  Dl_info ark, par;
  if (done || !ctx || odb_dist_rank() != 0) return;
  done = 1;
  SUNDIALSGetVersion(version, (int)sizeof version);
  if (!dladdr((void *)ERKStepCreate, &ark) || !ark.dli_fname)
    ark.dli_fname = "an unknown library";
  if (!dladdr((void *)N_VMake_Parallel, &par) || !par.dli_fname)
    par.dli_fname = "an unknown library";
  odb_ctx_log(ctx, ODB_LOG_INFO, "arkode_mpi: SUNDIALS %s ERKStep from %s, "
              "NVECTOR_PARALLEL from %s, %d ranks", version, ark.dli_fname,
              par.dli_fname, odb_dist_size());
}

/* A parallel vector over the block [a, b) of the full-length v. */
static N_Vector wrap(const odb_solver *s, const arkode_mpi_data *vd,
                     double *v) {
  return N_VMake_Parallel(odb_dist_comm(), (sunindextype)(vd->halo.b - vd->halo.a),
                          (sunindextype)s->n, v + vd->halo.a, vd->sunctx);
}

/*
** The plan, the norm's buffers, the wrappers and ERKStep with our tableau.
** ynew, the work vector and F[0] are zeroed: outside its block a rank
** writes them only with halos, and the core reads whole vectors in places
** (dist_erk.c's dist_init says which), so what lies there must be finite.
*/
static odb_status arkode_mpi_init(odb_solver *s) {
  MPI_Comm comm = odb_dist_comm();
  const odb_method *m = s->method;
  arkode_mpi_data *vd = calloc(1, sizeof *vd);
  size_t bytes = (size_t)s->n * sizeof(double);
  int R = odb_dist_size(), rc;
  if (!vd) return ODB_FAIL(ODB_ERR_NOMEM, "arkode_mpi: variant data");
  s->vdata = vd;
  ODB_TRY(dist_halo_init(&vd->halo, DIST_NEIGHBOUR, comm, s->n,
                         s->problem->d, "arkode_mpi"));
  vd->one = malloc((size_t)R * sizeof *vd->one);
  vd->rank_at = malloc((size_t)R * sizeof *vd->rank_at);
  vd->parts = malloc((size_t)R * sizeof *vd->parts);
  s->work_len = (size_t)s->n;
  if (posix_memalign((void **)&s->work, 64, bytes)) s->work = NULL;
  if (!vd->one || !vd->rank_at || !vd->parts || !s->work)
    return ODB_FAIL(ODB_ERR_NOMEM, "arkode_mpi: work vector of %ld doubles",
                    s->n);
  for (int r = 0; r < R; ++r) {
    vd->one[r] = 1;
    vd->rank_at[r] = r;
  }
  memset(s->work, 0, bytes);
  memset(s->ynew, 0, bytes);
  memset(s->F[0], 0, bytes);
  if (SUNContext_Create(NULL, &vd->sunctx) != 0)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: SUNContext_Create failed");
  s->problem->initial(s->problem, s->y);
  vd->yin = wrap(s, vd, s->y);
  vd->yout = wrap(s, vd, s->ynew);
  vd->e = wrap(s, vd, s->F[0]);
  if (!vd->yin || !vd->yout || !vd->e)
    return ODB_FAIL(ODB_ERR_NOMEM, "arkode_mpi: vector wrappers");
  vd->Fw[0] = vd->e;
  for (int l = 1; l < m->s; ++l) {
    vd->Fw[l] = wrap(s, vd, s->F[0]);
    if (!vd->Fw[l]) return ODB_FAIL(ODB_ERR_NOMEM, "arkode_mpi: wrappers");
  }
  vd->mem = ERKStepCreate(rhs_cb, s->problem->t0, vd->yin, vd->sunctx);
  if (!vd->mem) return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: ERKStepCreate "
                                "failed for n = %ld", s->n);
  rc = arkode_erk_setup(vd->mem, m, s, vd->msg);
  if (rc != ARK_SUCCESS)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: setting up %s failed: %s",
                    m->name, vd->msg);
  vd->estimating = m->bhat != NULL;
  for (int i = 0; i < m->s && m->bhat; ++i)
    vd->ecoef[i] = m->b[i] - m->bhat[i];
  vd->reset_each_step = !m->fsal && fabs(m->c[m->s - 1] - 1.0) <= 1e-10 &&
                        arkode_fsal_bug(vd->sunctx);
  vd->peer = odb_variant_find("arkode");
  log_library(s->ctx);
  return ODB_OK;
}

/* Frees what init made, also after a partial init (NULL members skipped). */
static void arkode_mpi_fini(odb_solver *s) {
  arkode_mpi_data *vd = s->vdata;
  if (vd) {
    if (vd->mem) ERKStepFree(&vd->mem);
    for (int i = 1; i < ERK_MAX_STAGES; ++i)
      if (vd->Fw[i]) N_VDestroy(vd->Fw[i]);
    if (vd->e) N_VDestroy(vd->e);
    if (vd->yout) N_VDestroy(vd->yout);
    if (vd->yin) N_VDestroy(vd->yin);
    if (vd->sunctx) SUNContext_Free(&vd->sunctx);
    dist_halo_free(&vd->halo);
    free(vd->one);
    free(vd->rank_at);
    free(vd->parts);
    free(vd);
  }
  free(s->work);
  s->vdata = NULL;
  s->work = NULL;
}

/*
** 1 when ARKODE's state is (s->t, s->y) on every rank: this rank's test
** (arkode.c's, with the three samples from its block), then the ranks'
** agreement (see the design notes).
*/
static odb_status in_sync(const odb_solver *s, const arkode_mpi_data *vd,
                          int *yes) {
  long a = vd->halo.a, b = vd->halo.b;
  double now[3] = { s->y[a], s->y[a + (b - a) / 2], s->y[b - 1] };
  double out = !(vd->synced && !vd->reset_each_step && s->t == vd->t_sync &&
                 s->y == vd->y_sync && memcmp(now, vd->probe, sizeof now) == 0);
  ODB_TRY(odb_dist_allreduce_max(&out, 1, "arkode_mpi: MPI_Allreduce (in "
                                 "step with ARKODE)"));
  *yes = out == 0.0;
  return ODB_OK;
}

/*
** e (holding the stage-0 term) += sum_{i>=1} h (b_i - bhat_i) F_i over
** ARKODE's stage vectors on the block, then mpi_N's norm: the block's sum
** of squares, the partial sums of all ranks added in rank order.
*/
static odb_status estimate(odb_solver *s, arkode_mpi_data *vd, double h,
                           double *err) {
  sunrealtype cv[ERK_MAX_STAGES];
  long a = vd->halo.a, b = vd->halo.b;
  double acc = 0.0, sum;
  int S = s->method->s;
  cv[0] = 1.0;
  for (int l = 1; l < S; ++l) {
    cv[l] = h * vd->ecoef[l];
    N_VSetArrayPointer(vd->stage[l], vd->Fw[l]);
  }
  if (N_VLinearCombination(S, cv, vd->Fw, vd->e) != 0)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: N_VLinearCombination "
                    "failed");
  for (long k = a; k < b; k += ERK_CHUNK) {
    long len = b - k < ERK_CHUNK ? b - k : ERK_CHUNK;
    erk_norm_acc(s->F[0] + k, s->y + k, s->ynew + k, len, s->opts.atol,
                 s->opts.rtol, &acc);
  }
  ODB_TRY(odb_dist_allgatherv(&acc, 1, vd->parts, vd->one, vd->rank_at,
                              "arkode_mpi: MPI_Allgatherv (error norm)"));
  sum = vd->parts[0];
  for (int r = 1; r < vd->halo.size; ++r) sum += vd->parts[r];
  *err = sqrt(sum / (double)s->n);
  return ODB_OK;
}

/* Methods without an estimate: the block of ynew must be finite. */
static odb_status block_finite(const odb_solver *s, long a, long b, double h) {
  for (long j = a; j < b; ++j)
    if (!isfinite(s->ynew[j]))
      return ODB_FAIL(ODB_ERR_NONFINITE, "solution became non-finite at t = "
                      "%.17g with h = %g: component %ld is %g (arkode_mpi, "
                      "rank %d)", s->t, h, j + 1, s->ynew[j], odb_dist_rank());
  return ODB_OK;
}

/*
** One ARKODE step of exactly h from (s->t, s->y) into the block of
** s->ynew, every rank together; ARKODE is reset first when it is out of
** step (arkode.c's attempt, over the block).
*/
static odb_status arkode_mpi_attempt(odb_solver *s, double h, double *err) {
  arkode_mpi_data *vd = s->vdata;
  sunrealtype tret = s->t;
  long a = vd->halo.a, b = vd->halo.b;
  int rc, synced, expected = s->method->s - (s->fsal_ready ? 1 : 0);
  vd->msg[0] = '\0';
  vd->ncalls = vd->nstage = vd->failed = 0;
  vd->rhs_status = ODB_OK;
  vd->h = h;
  N_VSetArrayPointer(s->F[0] + a, vd->e);
  ODB_TRY(in_sync(s, vd, &synced));
  if (!synced) {
    N_VSetArrayPointer(s->y + a, vd->yin);
    if (ERKStepReset(vd->mem, s->t, vd->yin) != ARK_SUCCESS)
      return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: reset failed: %s",
                      vd->msg);
  }
  vd->synced = 0;
  if (ERKStepSetFixedStep(vd->mem, h) != ARK_SUCCESS)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: step %g refused: %s", h,
                    vd->msg);
  N_VSetArrayPointer(s->ynew + a, vd->yout);
  rc = ERKStepEvolve(vd->mem, s->t + h, vd->yout, &tret, ARK_ONE_STEP);
  if (vd->rhs_status != ODB_OK) return vd->rhs_status;
  if (vd->failed || (rc >= 0 && vd->nstage != s->method->s - 1))
    return ODB_FAIL(ODB_ERR_INTERNAL, "arkode_mpi: ARKODE made %d stage "
                    "calls in a %d-stage step", vd->nstage + vd->failed,
                    s->method->s);
  if (rc < 0)
    return ODB_FAIL(ODB_ERR_BACKEND, "arkode_mpi: step of %g at t = %.17g "
                    "failed (%d): %s", h, s->t, rc, vd->msg);
  s->stats.nfev += vd->ncalls - expected;
  *err = 0.0;
  if (vd->estimating) ODB_TRY(estimate(s, vd, h, err));
  else ODB_TRY(block_finite(s, a, b, h));
  vd->synced = 1;
  vd->t_sync = tret;
  vd->y_sync = s->ynew;
  vd->probe[0] = s->ynew[a];
  vd->probe[1] = s->ynew[a + (b - a) / 2];
  vd->probe[2] = s->ynew[b - 1];
  return ODB_OK;
}

/*
** The one-process peer's sweeps (arkode.c's traffic) over the block, plus
** per RHS call (stage 0 unless FSAL gave it, and every later stage) the
** halo written on arrival and read by f, and the block's edges read to be
** sent, as mpi_N counts them.
*/
static void arkode_mpi_traffic(const odb_solver *s, int stage0, double *r,
                               double *w) {
  const arkode_mpi_data *vd = s->vdata;
  const dist_halo *hl = &vd->halo;
  double in = hl->in * sizeof(double), out = hl->out * sizeof(double);
  int nx = s->method->s - 1 + (stage0 ? 1 : 0);
  odb_solver block = *s;
  block.n = hl->b - hl->a;
  *r = *w = 0.0;
  if (vd->peer && vd->peer->traffic) vd->peer->traffic(&block, stage0, r, w);
  *r += nx * (in + out);
  *w += nx * in;
}

/* y whole on every rank. F[0] holds the estimate, never an FSAL stage:
   ARKODE keeps its stages to itself. */
static odb_status arkode_mpi_gather(odb_solver *s) {
  arkode_mpi_data *vd = s->vdata;
  return dist_halo_gather(&vd->halo, s->y);
}

const odb_variant odb_variant_arkode_mpi = {
  .name = "arkode_mpi",
  .doc = "the distributed peer: SUNDIALS ARKODE's ERKStep on an "
         "NVECTOR_PARALLEL vector over the ranks with our tableau, one "
         "fixed ARKODE step per attempt; the RHS exchanges mpi_N's halos "
         "with the two neighbours (built with -Dpeers=enabled and MPI)",
  .backend = "cpu",
  .applies = arkode_mpi_applies,
  .init = arkode_mpi_init,
  .fini = arkode_mpi_fini,
  .attempt = arkode_mpi_attempt,
  .traffic = arkode_mpi_traffic,
  .gather = arkode_mpi_gather,
};

odb_status odb_dist_arkode_register(void) {
  return odb_variant_register(&odb_variant_arkode_mpi);
}
