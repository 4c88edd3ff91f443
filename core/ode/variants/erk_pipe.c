/* erk_pipe.c - variant "pipe": the stages of an explicit RK step pipelined
   over blocks of components, so that the stage vectors never leave the
   cache; only y, F_0 (under FSAL), the new solution and F_{s-1} cross
   memory once a step. And "pipe_threads": the same sweep by every member
   of a thread team on its own slab. */
#include "erk_common.h"
#include "odb_team.h"

#include <stdlib.h>
#include <string.h>

/*
** Block-based pipelining of the stages (Korch and Rauber, "Optimizing
** locality and scalability of embedded Runge-Kutta solvers using
** block-based pipelining", JPDC 2006; the PIRK autotuning thesis's ppDb1m
** applies the same schedule to the corrector steps, §7.3). With an access
** distance d and blocks of B >= d components (block J is [JB, (J+1)B)),
** f on block J of stage l reads the argument Y_l on blocks J-1 .. J+1
** only, so it needs block J+1 of every F_i, i < l, and no more. Diagonal D
** runs, in this order, block D of stage 0, block D-1 of stage 1, ..., block
** D-s+1 of stage s-1 (the last stage also forms the new solution and the
** error share of its block): every block a stage reads was computed on an
** earlier diagonal or earlier on this one.
**
** Storage. F_0 is the solver's vector (under FSAL the last step's F_{s-1},
** else computed here). F_i, 0 < i < s-1, lives in a ring of s-i+1 blocks:
** block J of F_i is written on diagonal J+i and last read on diagonal J+s
** (by block J+1 of stage s-1), and on that diagonal stage i writes block
** J+s-i before stage s-1 reads, so s-i slots would be one short. F_{s-1}
** goes to the solver's vector under FSAL (the next step's F_0), else to
** a block buffer that only the finish reads. Y_l (l >= 1) is formed in a
** window of 2d + 2B components as fused forms it: each block adds the part
** the block before did not, and the window moves (its 2d shared components
** to the front) every second block. Under FSAL Y_{s-1} is the new solution,
** so the last stage forms it in ynew itself, which never moves (where
** others write ynew beside the range, as the members of pipe_threads do,
** it has a window of its own, copied out on the range). The working set is
** about (s^2/2 + 4(s-1)) B doubles, independent of n.
**
** Arithmetic: the same erk_lc and f per component as plain and fused, in
** the same order per component, so the state is plain's bit for bit; the
** error share is added block by block in ascending order, as fused adds
** it.
**
** Ranges (for the MPI variant mpi_P, which runs a rank's block with halos
** deep enough for the whole step): stage l is computed on [a - (s-1-l)d,
** b + (s-1-l)d) clipped to [0, n), so the last stage covers [a, b) and
** stage l's argument needs F_i only where stage l-1 computed it; stage 0
** reads y on [a - sd, b + sd). F_0 is taken as given on [f0a, f0b) and
** computed from y elsewhere.
*/

struct pipe_data {
  erk_plan plan;
  long B, d, wcap;
  double *ring[ERK_MAX_STAGES];   /* F_i, 0 < i < s-1: nslot[i] blocks */
  int nslot[ERK_MAX_STAGES];
  double *W[ERK_MAX_STAGES];      /* Y_l, l >= 1: wcap doubles each
                                     (under FSAL Y_{s-1} is in ynew) */
  long wbase[ERK_MAX_STAGES], whi[ERK_MAX_STAGES];  /* W_l holds
                                     Y_l[wbase, whi) during a sweep */
  double *fb, *eb;                /* last stage's F (non-FSAL), estimate */
};

static int pipe_applies(const odb_problem *p, const odb_method *m, char *why,
                        size_t nwhy) {
  return erk_window_applies("pipe", p, m, why, nwhy);
}

/* See erk_common.h. */
void erk_pipe_free(pipe_data *pd) {
  if (!pd) return;
  for (int i = 0; i < ERK_MAX_STAGES; ++i) {
    free(pd->ring[i]);
    free(pd->W[i]);
  }
  free(pd->fb);
  free(pd->eb);
  free(pd);
}

/*
** The block: the option block, else 1024, raised to d where smaller (the
** pipeline needs B >= d), to a multiple of 8 (64-byte aligned blocks), and
** capped by n rounded up the same way.
*/
static long pipe_block(const odb_solver *s, long d) {
  long B = s->opts.block > 0 ? s->opts.block : 1024;
  if (B < d) B = d;
  if (B > s->n) B = s->n;
  if (B < 1) B = 1;
  return (B + 7) & ~7L;
}

/* erk_pipe_make; ynew_window 0: the last stage keeps a window of its own
   under FSAL too. */
static odb_status pipe_make(odb_solver *s, int ynew_window, pipe_data **out) {
  const int S = s->method->s;
  pipe_data *pd = calloc(1, sizeof *pd);
  *out = pd;
  if (!pd) return ODB_FAIL(ODB_ERR_NOMEM, "%s: data", s->variant->name);
  ODB_TRY(erk_plan_make(s->method, &pd->plan));
  pd->d = s->problem->d;
  pd->B = pipe_block(s, pd->d);
  s->block = pd->B;
  pd->wcap = 2 * pd->d + 2 * pd->B;
  for (int i = 1; i < S - 1; ++i) {
    pd->nslot[i] = S - i + 1;
    pd->ring[i] = odb_doubles_alloc(pd->nslot[i] * pd->B);
    if (!pd->ring[i]) goto nomem;
  }
  for (int l = 1; l < (s->method->fsal && ynew_window ? S - 1 : S); ++l)
    if (!(pd->W[l] = odb_doubles_alloc(pd->wcap))) goto nomem;
  pd->fb = odb_doubles_alloc(pd->B);
  pd->eb = odb_doubles_alloc(pd->B);
  if (!pd->fb || !pd->eb) goto nomem;
  return ODB_OK;
nomem:
  return ODB_FAIL(ODB_ERR_NOMEM, "%s: rings and windows of %ld-component "
                  "blocks", s->variant->name, pd->B);
}

/* See erk_common.h. */
odb_status erk_pipe_make(odb_solver *s, pipe_data **out) {
  return pipe_make(s, 1, out);
}

static void pipe_fini(odb_solver *s) {
  erk_pipe_free(s->vdata);
  s->vdata = NULL;
}

static odb_status pipe_init(odb_solver *s) {
  pipe_data *pd;
  odb_status st = erk_pipe_make(s, &pd);
  s->vdata = pd;
  return st;
}

/* F_i from component u on (u in one block; i < s-1). */
static double *stage_at(const odb_solver *s, const pipe_data *pd, int i,
                        long u) {
  long K = u / pd->B;
  if (i == 0) return s->F[0] + u;
  return pd->ring[i] + (K % pd->nslot[i]) * pd->B + (u - K * pd->B);
}

/* Y_l's window: W_l, or under FSAL for the last stage ynew (from 0). */
static double *window(const odb_solver *s, const pipe_data *pd, int l) {
  return pd->W[l] ? pd->W[l] : s->ynew;
}

/*
** Y_l on [nlo, nhi) into its window: the part not there yet, one erk_lc
** per block it spans (the F_i of a block are contiguous only within it).
*/
static void window_fill(const odb_solver *s, pipe_data *pd, int l, double h,
                        long nlo, long nhi) {
  const double *Fp[ERK_MAX_STAGES];
  double *W = window(s, pd, l);
  long u, v;
  if (pd->W[l] && nhi - pd->wbase[l] > pd->wcap) {   /* keep [nlo, whi):
                                                         at most 2d */
    memmove(W, W + (nlo - pd->wbase[l]),
            (size_t)(pd->whi[l] - nlo) * sizeof(double));
    pd->wbase[l] = nlo;
  }
  for (u = pd->whi[l] > nlo ? pd->whi[l] : nlo; u < nhi; u = v) {
    v = (u / pd->B + 1) * pd->B;
    if (v > nhi) v = nhi;
    for (int i = 0; i < l; ++i) Fp[i] = stage_at(s, pd, i, u);
    erk_lc(W + (u - pd->wbase[l]), s->y + u, Fp, &pd->plan.a[l], h, v - u);
  }
  pd->whi[l] = nhi;
}

/* The new solution and the error share of [j0, j1) (last stage's F in fl). */
static void finish(odb_solver *s, pipe_data *pd, long j0, long j1,
                   const double *fl, double h, double *acc) {
  const int S = s->method->s;
  const double *Fp[ERK_MAX_STAGES], *yn;
  long len = j1 - j0;
  for (int i = 0; i < S - 1; ++i) Fp[i] = stage_at(s, pd, i, j0);
  Fp[S - 1] = fl;
  if (!s->method->fsal)
    erk_lc(s->ynew + j0, s->y + j0, Fp, &pd->plan.b, h, len);
  else if (pd->W[S - 1])   /* Y_{s-1} = y + h sum b_i F_i is ynew */
    memcpy(s->ynew + j0, pd->W[S - 1] + (j0 - pd->wbase[S - 1]),
           (size_t)len * sizeof(double));
  yn = s->ynew + j0;       /* (else formed there by the last stage) */
  if (pd->plan.e.n > 0) {
    erk_lc(pd->eb, NULL, Fp, &pd->plan.e, h, len);
    erk_norm_acc(pd->eb, s->y + j0, yn, len, s->opts.atol, s->opts.rtol,
                 acc);
  }
}

/* Stage l's range: [a - (s-1-l)d, b + (s-1-l)d) within [0, n). */
static void stage_range(const odb_solver *s, const pipe_data *pd, int l,
                        long a, long b, long *lo, long *hi) {
  long w = (long)(s->method->s - 1 - l) * pd->d;
  *lo = a - w > 0 ? a - w : 0;
  *hi = b + w < s->n ? b + w : s->n;
}

/* Block J of stage l, clipped to [lo, hi) (see the schedule above). */
static void stage_block(odb_solver *s, pipe_data *pd, int l, long J, long lo,
                        long hi, long f0a, long f0b, double h, double *acc) {
  const odb_problem *p = s->problem;
  const int S = s->method->s;
  long j0 = J * pd->B > lo ? J * pd->B : lo;
  long j1 = (J + 1) * pd->B < hi ? (J + 1) * pd->B : hi;
  double tl = s->t + s->method->c[l] * h, *dst;
  if (l == 0) {   /* F_0 = f(y) where it is not given */
    long u = j0, v = j1 < f0a ? j1 : f0a;
    if (u < v) p->rhs(p, tl, s->y, 0, s->F[0] + u, u, v);
    u = j0 > f0b ? j0 : f0b;
    if (u < j1) p->rhs(p, tl, s->y, 0, s->F[0] + u, u, j1);
    return;
  }
  {
    long nlo = j0 - pd->d > 0 ? j0 - pd->d : 0;
    long nhi = j1 + pd->d < s->n ? j1 + pd->d : s->n;
    if (pd->whi[l] < 0) {                       /* the first block */
      pd->wbase[l] = pd->W[l] ? nlo : 0;
      pd->whi[l] = nlo;
    }
    window_fill(s, pd, l, h, nlo, nhi);
  }
  if (l < S - 1) dst = stage_at(s, pd, l, j0);
  else dst = s->method->fsal ? s->F[S - 1] + j0 : pd->fb;
  p->rhs(p, tl, window(s, pd, l), pd->wbase[l], dst, j0, j1);
  if (l == S - 1) finish(s, pd, j0, j1, dst, h, acc);
}

/* See erk_common.h. */
void erk_pipe_sweep(odb_solver *s, pipe_data *pd, double h, long a, long b,
                    long f0a, long f0b, double *acc) {
  const int S = s->method->s;
  long lo[ERK_MAX_STAGES], hi[ERK_MAX_STAGES], J0[ERK_MAX_STAGES],
       J1[ERK_MAX_STAGES];
  if (a >= b) return;
  for (int l = 0; l < S; ++l) {
    stage_range(s, pd, l, a, b, &lo[l], &hi[l]);
    J0[l] = lo[l] / pd->B;
    J1[l] = (hi[l] + pd->B - 1) / pd->B;
    pd->whi[l] = -1;
  }
  for (long D = J0[0]; D < J1[S - 1] + S - 1; ++D)
    for (int l = 0; l < S; ++l) {
      long J = D - l;
      if (J >= J0[l] && J < J1[l])
        stage_block(s, pd, l, J, lo[l], hi[l], f0a, f0b, h, acc);
    }
}

static odb_status pipe_attempt(odb_solver *s, double h, double *err) {
  pipe_data *pd = s->vdata;
  double acc = 0.0;
  erk_pipe_sweep(s, pd, h, 0, s->n, 0, s->fsal_ready ? s->n : 0, &acc);
  *err = pd->plan.e.n > 0 ? __builtin_sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

/*
** Over v bytes of components: y read once (stage 0's f and the first
** window of each block; the later reads hit the cache), F_0 read when the
** last step gave it, else written (and read back from the cache); ynew
** written, and F_{s-1} under FSAL. The rings and windows stay in cache.
*/
void erk_pipe_bytes(int fsal, double v, int stage0, double *r, double *w) {
  *r = v * (stage0 ? 1 : 2);
  *w = v * (1 + (stage0 ? 1 : 0) + (fsal ? 1 : 0));
}

static void pipe_traffic(const odb_solver *s, int stage0, double *r,
                         double *w) {
  erk_pipe_bytes(s->method->fsal, (double)s->n * sizeof(double), stage0, r,
                 w);
}

const odb_variant odb_variant_pipe = {
  .name = "pipe",
  .doc = "the stages pipelined over blocks (diagonal D: block D of stage 0, "
         "D-1 of stage 1, ...), the stage vectors in rings of blocks in "
         "cache; only y, F_0, ynew and F_s-1 cross memory; parameter block "
         "(>= d; default max(d, 1024))",
  .backend = "cpu",
  .applies = pipe_applies,
  .init = pipe_init,
  .fini = pipe_fini,
  .attempt = pipe_attempt,
  .traffic = pipe_traffic,
};

/* {====== pipe_threads */

/*
** A team of p members (the solver's threads) splits the components into p
** balanced slabs (odb_team_range); member q runs the pipe sweep on its slab with rings and
** windows of its own, computing stage l also (s-1-l) d beyond the slab as
** mpi_P does on a rank, so the members never wait for each other within a
** step: y and F_0 are read by all, and each writes ynew (and F_{s-1})
** only on its slab. F_0 must be whole before any member starts: under
** FSAL it is (the last step's F_{s-1}); otherwise each member first
** computes f(y) on its slab, and one barrier follows. The error shares
** are added in member order after the run: the state is plain's bit for
** bit, the error norm plain's up to the rounding of p partial sums.
*/
typedef struct team_data {
  odb_team *team;
  int p;
  pipe_data **pd;         /* member q's rings and windows */
  double *acc;            /* member q's error share at acc[8 q] */
  odb_solver *s;          /* the run's solver, h and whether F_0 is whole */
  double h;
  int f0;
} team_data;

static void team_free(team_data *D) {
  if (!D) return;
  if (D->team) odb_team_destroy(D->team);
  for (int q = 0; D->pd && q < D->p; ++q) erk_pipe_free(D->pd[q]);
  free(D->pd);
  free(D->acc);
  free(D);
}

static void team_fini(odb_solver *s) {
  team_free(s->vdata);
  s->vdata = NULL;
}

static odb_status team_init(odb_solver *s) {
  team_data *D = calloc(1, sizeof *D);
  int p = odb_solver_threads(s);
  s->vdata = D;
  if (!D) return ODB_FAIL(ODB_ERR_NOMEM, "%s: data", s->variant->name);
  D->p = p;
  D->pd = calloc((size_t)p, sizeof *D->pd);
  D->acc = odb_doubles_alloc(8L * p);
  if (!D->pd || !D->acc)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: %d members", s->variant->name, p);
  for (int q = 0; q < p; ++q) ODB_TRY(pipe_make(s, 0, &D->pd[q]));
  return odb_team_create(s->ctx, s->ctx ? &s->ctx->topo : NULL, p,
                         ODB_BARRIER_FLAGS, &D->team);
}

static void team_fn(odb_team *team, int q, void *arg) {
  team_data *D = arg;
  odb_solver *s = D->s;
  long a, b;
  double acc = 0.0;
  odb_team_range(s->n, D->p, q, &a, &b);
  if (!D->f0) {
    if (a < b) s->problem->rhs(s->problem, s->t, s->y, 0, s->F[0] + a, a, b);
    odb_team_barrier(team, q);
  }
  erk_pipe_sweep(s, D->pd[q], D->h, a, b, 0, s->n, &acc);
  D->acc[8 * q] = acc;
}

static odb_status team_attempt(odb_solver *s, double h, double *err) {
  team_data *D = s->vdata;
  double acc = 0.0;
  D->s = s;
  D->h = h;
  D->f0 = s->fsal_ready;
  ODB_TRY(odb_team_run(D->team, team_fn, D));
  for (int q = 0; q < D->p; ++q) acc += D->acc[8 * q];
  *err = D->pd[0]->plan.e.n > 0 ? __builtin_sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

static int team_applies(const odb_problem *p, const odb_method *m,
                        char *why, size_t nwhy) {
  return erk_window_applies("pipe_threads", p, m, why, nwhy);
}

const odb_variant odb_variant_pipe_threads = {
  .name = "pipe_threads",
  .doc = "pipe on every thread of a team (the solver's threads), each on "
         "its own slab, stage l recomputed (s-1-l) d beyond it, so the "
         "threads meet only where F_0 is computed first; parameter block",
  .backend = "cpu",
  .applies = team_applies,
  .init = team_init,
  .fini = team_fini,
  .attempt = team_attempt,
  .traffic = pipe_traffic,
};

/* }====== */
