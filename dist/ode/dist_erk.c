/* dist_erk.c - the distributed explicit RK variants mpi_A, mpi_S, mpi_N,
   mpi_X: each rank computes its block of every stage, the exchanges of
   dist_halo.c bring the components f reads, and the error norm is summed
   over all ranks so that every rank takes the same steps; and mpi_P, the
   pipe variant's sweep on each rank's block with halos deep enough for a
   whole step, exchanged once a step. */
#include "odb_dist_ode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_halo.h"
#include "erk_common.h"
#include "odb_dist.h"
#include "odb_tuner.h"

/*
** The variants of [Str12] that the PIRK autotuning thesis (§10.3) draws on,
** for explicit RK methods: stage l's argument Y_l = y + h sum_i a_li F_i
** is formed on the rank's block [a, b) only; the exchange of its kind
** (dist_halo.h) then brings the components f reads from the other ranks,
** while f runs on the interior (components whose f reads only the block);
** the rest of the block follows when the exchange is done. Stage 0 reads
** y the same way (each accepted step leaves only the block of y current),
** except under FSAL, where F_0 is the block of the last stage before.
**
** Storage: y, ynew and the F_i are the solver's full-length vectors (the
** core allocates them, set_state and reset give every rank the whole
** state, f takes global component indices), and the argument vector Y
** (work) is full length too, so that messages land at the components'
** own places with no packing. Each rank keeps current only its block and
** the halo it received; gather() makes y (and F_0 under FSAL) whole when
** the solver needs the whole state (odb_solver_get_state, the first-step
** guess, a change of variant).
**
** Arithmetic: the same erk_lc per component as the plain variant, so every
** component of every stage is bit for bit the one process's as long as
** the steps are the same. The error norm's sum of squares is summed over
** the block, the R partial sums gathered to every rank and added in rank
** order: MPI does not promise that a reduction gives bitwise the same
** value on every rank (only advises it), and every rank must take the
** same accept/reject decision and step size. One rank's norm is the plain
** variant's exactly; R ranks differ from it only by the rounding of the
** R partial sums.
*/

typedef struct dist_data {
  erk_plan plan;
  dist_halo halo;
  fused_data *fz;            /* the fused sweeps; NULL: plain's sweeps */
  pipe_data *pz;             /* mpi_P: the pipelined sweep */
  long la, lb, ra, rb;       /* the block's edges whose argument Y_l is
                                written to memory (see fused_attempt) */
  long *one, *rank_at;       /* counts 1 and displacements r of the norm */
  double *parts;             /* the R partial sums */
} dist_data;

static dist_kind kind_of(const odb_variant *v);

/* {====== applies: what each communication pattern needs */

/*
** Common to all four: an explicit RK method; the layout (dist_halo.h) on
** one active rank, the least it may run on. applies sees no option, so
** the layout on the active ranks the option ranks names (all by default)
** is checked by init (dist_active_ranks), with the same words.
*/
static int kind_applies(const char *name, int halo, const odb_problem *p,
                        const odb_method *m, char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_ERK) {
    snprintf(why, nwhy, "%s runs explicit RK methods only; '%s' is a PIRK "
             "corrector (mpi_pirk_%s runs it)", name, m->name, name + 4);
    return 0;
  }
  return dist_layout_check(name, "mpi_", halo, p->label, p->n, p->d, 1,
                           odb_dist_size(), why, nwhy);
}

static int all_applies(const odb_problem *p, const odb_method *m, char *why,
                       size_t nwhy) {
  return kind_applies("mpi_A", 0, p, m, why, nwhy);
}

static int sparse_applies(const odb_problem *p, const odb_method *m,
                          char *why, size_t nwhy) {
  return kind_applies("mpi_S", 0, p, m, why, nwhy);
}

static int neighbour_applies(const odb_problem *p, const odb_method *m,
                             char *why, size_t nwhy) {
  return kind_applies("mpi_N", 2, p, m, why, nwhy);
}

static int forward_applies(const odb_problem *p, const odb_method *m,
                           char *why, size_t nwhy) {
  return kind_applies("mpi_X", 1, p, m, why, nwhy);
}

/* mpi_P: S's layout (its exchange is S's, of width s d) and the pipe
   variant's needs: two or more stages, a limited access distance. */
static int pipe_applies(const odb_problem *p, const odb_method *m, char *why,
                        size_t nwhy) {
  if (m->kind != ODB_METHOD_ERK) {
    snprintf(why, nwhy, "mpi_P runs explicit RK methods only; '%s' is a "
             "PIRK corrector (mpi_pirk_N runs it)", m->name);
    return 0;
  }
  if (!kind_applies("mpi_P", 0, p, m, why, nwhy)) return 0;
  if (m->s < 2 || p->d >= p->n) {
    snprintf(why, nwhy, "mpi_P needs a method of 2 or more stages and a "
             "limited access distance (d < n); %s has n = %ld, d = %ld "
             "(mpi_S applies to any)", p->label, p->n, p->d);
    return 0;
  }
  return 1;
}

/* }====== */

static void dist_fini(odb_solver *s) {
  dist_data *dd = s->vdata;
  if (dd) {
    dist_halo_free(&dd->halo);
    erk_fused_free(dd->fz);
    erk_pipe_free(dd->pz);
    free(dd->one);
    free(dd->rank_at);
    free(dd->parts);
    free(dd);
  }
  free(s->work);
  s->vdata = NULL;
  s->work = NULL;
}

/*
** The fused variant's sweeps (erk_fused.c) run on the block's interior
** where they can: a limited access distance (they walk a window of
** 2d + 4B components), a method of two or more stages, and an exchange
** that sends only components within d of the block's ends (S, N, X; A
** sends the whole block, so Y_l must be in memory on all of it and the
** plain sweeps are what it takes).
*/
static int uses_fused(const odb_solver *s, const dist_data *dd) {
  return dd->halo.kind != DIST_ALL && s->problem->d < s->n &&
         s->method->s >= 2;
}

/*
** The edges of the block whose Y_l goes to memory: the part of the block
** that f on the edges [a, ia) and [ib, b) reads ([a, ia + d) and
** [ib - d, b)), which holds every component another rank receives from
** this one; none on a side without a neighbour; the whole block when it
** has no interior. The window's fused sweep runs on [ia, ib) as erk_fused.c
** does on [0, n), with the option block as its block size.
*/
static odb_status fused_edges(odb_solver *s, dist_data *dd) {
  const dist_halo *h = &dd->halo;
  long d = s->problem->d;
  ODB_TRY(erk_fused_make(s, &dd->fz));
  if (h->ia >= h->ib) {
    dd->la = h->a;
    dd->lb = dd->ra = dd->rb = h->b;
    return ODB_OK;
  }
  dd->la = dd->lb = h->a;
  if (h->a > 0) dd->lb = h->ia + d < h->b ? h->ia + d : h->b;
  dd->ra = dd->rb = h->b;
  if (h->b < h->n) dd->ra = h->ib - d > dd->lb ? h->ib - d : dd->lb;
  return ODB_OK;
}

/*
** The width of the halo an exchange brings: d, or for mpi_P s d (at most
** n), what stage 0 of a whole step reads beyond the block when stage l is
** computed on (s-1-l) d beyond it (erk_common.h, erk_pipe_sweep).
*/
static long halo_width(const odb_solver *s) {
  long d = s->problem->d, w = d;
  if (s->variant == &odb_variant_mpi_P)
    w = d > s->n / s->method->s ? s->n : d * s->method->s;
  return w < s->n ? w : s->n;
}

/*
** The plan, the exchange and the argument vector. ynew, Y and the F_i are
** zeroed: outside its block a rank never writes them, and the core reads
** whole vectors in places (the end-of-call finiteness check of y, the
** first and last component of ynew for methods without an estimate), so
** what lies there must be finite.
*/
static odb_status dist_init(odb_solver *s) {
  MPI_Comm comm = odb_dist_active() ? odb_dist_comm() : MPI_COMM_NULL;
  dist_data *dd = calloc(1, sizeof *dd);
  size_t bytes = (size_t)s->n * sizeof(double);
  int R = odb_dist_size(), active = R;
  odb_status st;
  if (!dd) return ODB_FAIL(ODB_ERR_NOMEM, "%s: plan", s->variant->name);
  s->vdata = dd;
  ODB_TRY(dist_active_ranks(s, kind_of(s->variant), "mpi_", &active));
  ODB_TRY(erk_plan_make(s->method, &dd->plan));
  st = dist_halo_init_active(&dd->halo, kind_of(s->variant), comm, s->n,
                             halo_width(s), active, s->variant->name);
  if (st != ODB_OK) return st;
  dd->one = malloc((size_t)R * sizeof *dd->one);
  dd->rank_at = malloc((size_t)R * sizeof *dd->rank_at);
  dd->parts = malloc((size_t)R * sizeof *dd->parts);
  s->work_len = (size_t)s->n;
  if (posix_memalign((void **)&s->work, 64, bytes)) s->work = NULL;
  if (!dd->one || !dd->rank_at || !dd->parts || !s->work)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: argument vector of %ld doubles",
                    s->variant->name, s->n);
  for (int r = 0; r < R; ++r) {
    dd->one[r] = 1;
    dd->rank_at[r] = r;
  }
  memset(s->work, 0, bytes);
  memset(s->ynew, 0, bytes);
  for (int i = 0; i < s->method->s; ++i) memset(s->F[i], 0, bytes);
  if (s->variant == &odb_variant_mpi_P) return erk_pipe_make(s, &dd->pz);
  if (uses_fused(s, dd)) return fused_edges(s, dd);
  return ODB_OK;
}

/* out[a, b) = y + h sum t F on [a, b), in chunks as plain does. */
static void lc_block(double *out, const double *y, double *const *F,
                     const erk_terms *t, double h, long a, long b, int nst) {
  const double *Fp[ERK_MAX_STAGES];
  for (long k = a; k < b; k += ERK_CHUNK) {
    long len = b - k < ERK_CHUNK ? b - k : ERK_CHUNK;
    for (int i = 0; i < nst; ++i) Fp[i] = F[i] + k;
    erk_lc(out + k, y ? y + k : NULL, Fp, t, h, len);
  }
}

/* f_j(tc, v) for j in [j0, j1) into F[j0, j1). */
static void rhs(const odb_problem *p, double tc, const double *v, double *F,
                long j0, long j1) {
  if (j0 < j1) p->rhs(p, tc, v, 0, F + j0, j0, j1);
}

/*
** F[a, b) = f(tc, v) with v's block current: the exchange runs while f
** works on the interior, the two edges of the block after it.
*/
static odb_status stage_f(odb_solver *s, double tc, double *v, double *F) {
  dist_halo *h = &((dist_data *)s->vdata)->halo;
  const odb_problem *p = s->problem;
  ODB_TRY(dist_halo_begin(h, v));
  rhs(p, tc, v, F, h->ia, h->ib);
  ODB_TRY(dist_halo_end(h, v));
  rhs(p, tc, v, F, h->a, h->ia);
  rhs(p, tc, v, F, h->ib, h->b);
  return ODB_OK;
}

/* The error norm over all ranks: the partial sums added in rank order. */
static odb_status norm_all(dist_data *dd, double acc, long n, double *err) {
  double sum;
  ODB_TRY(odb_dist_allgatherv(&acc, 1, dd->parts, dd->one, dd->rank_at,
                              "MPI_Allgatherv (error norm)"));
  sum = dd->parts[0];
  for (int r = 1; r < dd->halo.size; ++r) sum += dd->parts[r];
  *err = sqrt(sum / (double)n);
  return ODB_OK;
}

/* Methods without an estimate: the block of ynew must be finite. */
static odb_status block_finite(const odb_solver *s, long a, long b, double h) {
  for (long j = a; j < b; ++j)
    if (!isfinite(s->ynew[j]))
      return ODB_FAIL(ODB_ERR_NONFINITE, "solution became non-finite at t = "
                      "%.17g with h = %g: component %ld is %g (%s, rank %d)",
                      s->t, h, j + 1, s->ynew[j], s->variant->name,
                      odb_dist_rank());
  return ODB_OK;
}

/* ynew and the error share of [j0, j1) from memory, as plain's sweeps. */
static void finish_edge(odb_solver *s, const erk_plan *plan, double h,
                        long j0, long j1, double *acc) {
  double *Y = s->work;
  lc_block(s->ynew, s->y, s->F, &plan->b, h, j0, j1, plan->s);
  if (plan->e.n == 0) return;
  lc_block(Y, NULL, s->F, &plan->e, h, j0, j1, plan->s);
  for (long k = j0; k < j1; k += ERK_CHUNK) {
    long len = j1 - k < ERK_CHUNK ? j1 - k : ERK_CHUNK;
    erk_norm_acc(Y + k, s->y + k, s->ynew + k, len, s->opts.atol,
                 s->opts.rtol, acc);
  }
}

/*
** A step with the fused sweeps. Stage l >= 1: Y_l is written to memory on
** the edges [la, lb) and [ra, rb) only, the exchange of Y_l is posted, the
** window's fused sweep computes F_l on the interior [ia, ib) (forming Y_l
** there in cache, from y and the F_i of the block) while the halo
** travels, and f on the edges [a, ia) and [ib, b) reads Y_l from memory
** once it has arrived. The last stage's sweep writes ynew and the error
** share of the interior; the edges' follow from memory. Every component
** is the same erk_lc and f as plain's, so the state is plain's bit for
** bit with the same steps; the error norm's share adds the interior first.
*/
static odb_status fused_attempt(odb_solver *s, dist_data *dd, double h,
                                double *err) {
  const erk_plan *plan = &dd->plan;
  const odb_method *m = s->method;
  const odb_problem *p = s->problem;
  dist_halo *hl = &dd->halo;
  long a = hl->a, b = hl->b, ia = hl->ia, ib = hl->ib;
  double acc = 0.0, *Y = s->work;
  if (!s->fsal_ready) ODB_TRY(stage_f(s, s->t, s->y, s->F[0]));
  for (int l = 1; l < m->s; ++l) {
    double tc = s->t + m->c[l] * h;
    lc_block(Y, s->y, s->F, &plan->a[l], h, dd->la, dd->lb, l);
    lc_block(Y, s->y, s->F, &plan->a[l], h, dd->ra, dd->rb, l);
    ODB_TRY(dist_halo_begin(hl, Y));
    if (ia < ib) erk_fused_stage(s, dd->fz, l, h, ia, ib, &acc);
    ODB_TRY(dist_halo_end(hl, Y));
    rhs(p, tc, Y, s->F[l], a, ia);
    rhs(p, tc, Y, s->F[l], ib, b);
  }
  finish_edge(s, plan, h, a, ia, &acc);
  finish_edge(s, plan, h, ib, b, &acc);
  *err = 0.0;
  if (plan->e.n == 0) return block_finite(s, a, b, h);
  return norm_all(dd, acc, s->n, err);
}

/*
** mpi_P: y's halo of width s d arrives (the only exchange of the step),
** then the pipelined sweep computes stage l on (s-1-l) d beyond the block
** (the neighbours' parts again, as they do) and the block's ynew and
** error share. F_0 is the last step's on the block under FSAL and is
** computed from y beyond it: the same bits as the neighbour's F_{s-1},
** which is f of the same ynew.
*/
static odb_status pipe_attempt(odb_solver *s, dist_data *dd, double h,
                               double *err) {
  dist_halo *hl = &dd->halo;
  double acc = 0.0;
  ODB_TRY(dist_halo_begin(hl, s->y));
  ODB_TRY(dist_halo_end(hl, s->y));
  erk_pipe_sweep(s, dd->pz, h, hl->a, hl->b, hl->a,
                 s->fsal_ready ? hl->b : hl->a, &acc);
  *err = 0.0;
  if (dd->plan.e.n == 0) return block_finite(s, hl->a, hl->b, h);
  return norm_all(dd, acc, s->n, err);
}

static odb_status dist_attempt(odb_solver *s, double h, double *err) {
  dist_data *dd = s->vdata;
  const erk_plan *plan = &dd->plan;
  const odb_method *m = s->method;
  long a = dd->halo.a, b = dd->halo.b;
  double acc = 0.0, *Y = s->work;
  if (dd->pz) return pipe_attempt(s, dd, h, err);
  if (dd->fz) return fused_attempt(s, dd, h, err);
  if (!s->fsal_ready) ODB_TRY(stage_f(s, s->t, s->y, s->F[0]));
  for (int l = 1; l < m->s; ++l) {
    lc_block(Y, s->y, s->F, &plan->a[l], h, a, b, l);
    ODB_TRY(stage_f(s, s->t + m->c[l] * h, Y, s->F[l]));
  }
  lc_block(s->ynew, s->y, s->F, &plan->b, h, a, b, m->s);
  *err = 0.0;
  if (plan->e.n == 0) return block_finite(s, a, b, h);
  lc_block(Y, NULL, s->F, &plan->e, h, a, b, m->s);   /* Y[a, b) holds e */
  for (long k = a; k < b; k += ERK_CHUNK) {
    long len = b - k < ERK_CHUNK ? b - k : ERK_CHUNK;
    erk_norm_acc(Y + k, s->y + k, s->ynew + k, len, s->opts.atol,
                 s->opts.rtol, &acc);
  }
  return norm_all(dd, acc, s->n, err);
}

/*
** The sweeps over this rank's block (the fused variant's, plus the edges'
** Y_l written and read back by f; else the plain variant's), plus per
** exchange
** (stage 0 unless FSAL gave F_0, and every later stage) the halo written
** into memory on arrival and read by f, and the block's parts read to be
** sent (A: the whole block, once per gather).
*/
static void dist_traffic(const odb_solver *s, int stage0, double *r,
                         double *w) {
  const dist_data *dd = s->vdata;
  const dist_halo *hl = &dd->halo;
  double v = (double)(hl->b - hl->a) * sizeof(double);
  double in = hl->in * sizeof(double), out = hl->out * sizeof(double);
  int nx = dd->plan.s - 1 + (stage0 ? 1 : 0);
  if (dd->pz) {   /* the sweep over the deepest stage's range; one
                     exchange of y */
    long x = (long)(dd->plan.s - 1) * s->problem->d;
    long lo = hl->a - x > 0 ? hl->a - x : 0;
    long hi = hl->b + x < s->n ? hl->b + x : s->n;
    erk_pipe_bytes(s->method->fsal,
                   hl->a < hl->b ? (double)(hi - lo) * sizeof(double) : 0,
                   stage0, r, w);
    *r += in + out;
    *w += in;
    return;
  }
  if (dd->fz) {
    double e = (double)(dd->lb - dd->la + dd->rb - dd->ra) * sizeof(double);
    erk_fused_bytes(&dd->plan, s->method->fsal, v, stage0, r, w);
    for (int l = 1; l < dd->plan.s; ++l) {   /* Y_l's edges out and back */
      *r += e * (1 + dd->plan.a[l].n) + e;
      *w += e;
    }
  } else {
    erk_plain_bytes(&dd->plan, v, stage0, r, w);
  }
  *r += nx * (in + out);
  *w += nx * in;
}

/* y whole on every rank, and F_0 under FSAL. */
static odb_status dist_gather(odb_solver *s) {
  dist_data *dd = s->vdata;
  ODB_TRY(dist_halo_gather(&dd->halo, s->y));
  if (s->fsal_ready) ODB_TRY(dist_halo_gather(&dd->halo, s->F[0]));
  return ODB_OK;
}

#define DIST_VARIANT(id, nm, app, text)                                     \
  const odb_variant odb_variant_##id = {                                    \
    .name = nm, .doc = text, .backend = "cpu", .applies = app,              \
    .init = dist_init, .fini = dist_fini, .attempt = dist_attempt,          \
    .traffic = dist_traffic, .gather = dist_gather,                         \
    .opts = dist_opts, .nopts = DIST_NOPTS,                                 \
  }

DIST_VARIANT(mpi_A, "mpi_A", all_applies,
             "MPI, any access pattern: every stage's argument vector "
             "gathered on every rank by MPI_Iallgatherv (overlapped with f "
             "on the block's interior); error norm summed over the ranks");
DIST_VARIANT(mpi_S, "mpi_S", sparse_applies,
             "MPI, sparse: each rank receives point to point from each "
             "owner only the components its f reads, [lo-d, hi+d) from the "
             "access distance d (all of them when d = n); overlapped with "
             "f on the interior");
DIST_VARIANT(mpi_N, "mpi_N", neighbour_applies,
             "MPI, neighbours: halos of width d from the two neighbouring "
             "ranks (MPI_Isend/Irecv, overlapped with f on the interior); "
             "needs d < n and every rank's block at least d long");
DIST_VARIANT(mpi_X, "mpi_X", forward_applies,
             "MPI, forwarded halos: width-d halos passed on between "
             "neighbours in rounds, so blocks may be shorter than d; needs "
             "d < n");
DIST_VARIANT(mpi_P, "mpi_P", pipe_applies,
             "MPI, pipelined: the pipe variant's sweep on each rank's block "
             "(stages pipelined over blocks in cache), y's halo of width s d "
             "received once a step (S's point-to-point messages) and stage "
             "l recomputed (s-1-l) d beyond the block; needs d < n; "
             "parameter block");

static dist_kind kind_of(const odb_variant *v) {
  if (v == &odb_variant_mpi_A) return DIST_ALL;
  if (v == &odb_variant_mpi_S || v == &odb_variant_mpi_P) return DIST_SPARSE;
  if (v == &odb_variant_mpi_N) return DIST_NEIGHBOUR;
  return DIST_FORWARD;
}

/* The tuner across ranks (odb_tuner.h): each run timed as the slowest
   rank; rank 0 reads the energy counters (one reader; a run spread over
   several hosts adds no other host's energy). */
static odb_tune_ranks tune_ranks;

odb_status odb_dist_ode_register(void) {
  tune_ranks.max = odb_dist_allreduce_max;
  tune_ranks.ranks = odb_dist_size();
  tune_ranks.reader = odb_dist_rank() == 0;
  dist_opts_set_size(odb_dist_size());
  odb_tune_set_ranks(&tune_ranks);
  ODB_TRY(odb_variant_register(&odb_variant_mpi_A));
  ODB_TRY(odb_variant_register(&odb_variant_mpi_S));
  ODB_TRY(odb_variant_register(&odb_variant_mpi_N));
  ODB_TRY(odb_variant_register(&odb_variant_mpi_X));
  ODB_TRY(odb_variant_register(&odb_variant_mpi_P));
#if ODB_HAVE_ARKODE_MPI
  ODB_TRY(odb_dist_arkode_register());   /* the peer (dist_arkode.c) */
#endif
  return ODB_OK;
}
