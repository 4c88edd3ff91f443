/* dist_pirk.c - the distributed PIRK corrector variants mpi_pirk_A,
   mpi_pirk_S, mpi_pirk_N, mpi_pirk_X: each rank computes its block of the
   s argument vectors of every corrector step, the exchanges of
   dist_halo.c bring the components f reads, and the error norm is summed
   over all ranks so that every rank takes the same steps. */
#include "odb_dist_ode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_halo.h"
#include "odb_dist.h"
#include "pirk_common.h"

/*
** The distributed variants of [Str12] (M. Straubinger's bachelor thesis)
** that the PIRK autotuning thesis (N. Kalinnik, Ch. 10.3) names A, S, N
** and X after their communication, for the PIRK correctors of its Ch. 3
** (pirk_common.h's notation): one step from eta = s->y is
**   F_l^(0) = f(t + c_l h, eta),
**   Y_l^(k) = eta + h sum_i a_li F_i^(k-1),  F_l^(k) = f(t + c_l h, Y_l^(k)),
** for k = 1..m, then eta_new = eta + h sum_i b_i F_i^(m) and the estimate
** e = h sum_i b_i (F_i^(m) - F_i^(m-1)).
**
** Each rank holds a contiguous block [a, b) of the components (dist_halo.h)
** and computes only that block of every argument vector, every F_l, of
** eta_new and of e. The s argument vectors of one corrector step depend
** only on the step before, so all s exchanges are posted together: the
** rank builds the block of Y_0..Y_{s-1}, posts the s exchanges, evaluates
** f on the interior of each (components whose f reads only the block)
** while they travel, then waits for each in turn and evaluates the two
** edges. The predictor exchanges eta once for its s evaluations. Each
** stage argument has its own exchange (dist_halo) so the s run at once;
** they share the communicator and the tags (the round), and match because
** MPI does not let messages of one pair, tag and communicator overtake
** each other: every rank posts exchange l before exchange l + 1, in every
** round.
**
** Storage: y, ynew and the F_l are the solver's full-length vectors, the
** s argument vectors Y and F^(prev) full length too (pirk_mat), so that
** messages land at the components' own places with no packing; outside
** its block (and the halo it received) a rank's copy is stale. gather()
** makes y whole when the solver needs the whole state.
**
** Arithmetic: per component the sums of the one-process variants A and E
** (pirk_A.c), term by term in index order: Y_l[j] = eta[j] + h (a_l0
** F_0[j] + a_l1 F_1[j] + ...), and the end sums dEta and e from i = 0 on,
** so every component of every stage is bit for bit A's as long as the
** steps are the same (fixed steps: always). The error norm is the exact
** sum of the summands over all ranks, rounded once (dist_norm_all): the
** same bits for any number of ranks, so R ranks take one process's steps
** bit for bit. It differs from A's running sum by that sum's rounding.
** Loop order on the block: the thesis's E (k-l-j-i), with E's traffic.
*/

typedef struct dpirk {
  dist_halo halo[PIRK_MAX_STAGES];   /* one exchange per stage argument */
  int nhalo;                         /* initialized plans */
  pirk_mat Y;                        /* the s argument vectors */
  pirk_mat Fprev;                    /* F^(k-1) */
  dist_norm norm;
} dpirk;

static dist_kind kind_of(const odb_variant *v);

/* {====== applies: what each communication pattern needs */

/* Common to all four: a PIRK corrector; the layout (dist_halo.h). */
static int kind_applies(const char *name, int halo, const odb_problem *p,
                        const odb_method *m, char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_PIRK) {
    snprintf(why, nwhy, "%s runs PIRK correctors only; '%s' is an explicit "
             "RK method (mpi_%c runs it)", name, m->name,
             name[strlen(name) - 1]);
    return 0;
  }
  if (!pirk_applies_any(name, m, why, nwhy)) return 0;
  /* one active rank, the least; init checks the option ranks' */
  return dist_layout_check(name, "mpi_pirk_", halo, p->label, p->n, p->d, 1,
                           odb_dist_size(), why, nwhy);
}

static int all_applies(const odb_problem *p, const odb_method *m, char *why,
                       size_t nwhy) {
  return kind_applies("mpi_pirk_A", 0, p, m, why, nwhy);
}

static int sparse_applies(const odb_problem *p, const odb_method *m,
                          char *why, size_t nwhy) {
  return kind_applies("mpi_pirk_S", 0, p, m, why, nwhy);
}

static int neighbour_applies(const odb_problem *p, const odb_method *m,
                             char *why, size_t nwhy) {
  return kind_applies("mpi_pirk_N", 2, p, m, why, nwhy);
}

static int forward_applies(const odb_problem *p, const odb_method *m,
                           char *why, size_t nwhy) {
  return kind_applies("mpi_pirk_X", 1, p, m, why, nwhy);
}

/* }====== */

static void dp_fini(odb_solver *s) {
  dpirk *dd = s->vdata;
  if (dd) {
    for (int l = 0; l < dd->nhalo; ++l) dist_halo_free(&dd->halo[l]);
    pirk_mat_free(&dd->Y);
    pirk_mat_free(&dd->Fprev);
    dist_norm_free(&dd->norm);
    free(dd);
  }
  s->vdata = NULL;
}

/*
** The s exchange plans (the same plan s times, each with its own
** requests), the argument vectors and F^(prev), all zeroed along with
** ynew and the F_l: outside its block a rank never writes them, and the
** core reads whole vectors in places (the end-of-call finiteness check of
** y), so what lies there must be finite.
*/
static odb_status dp_init(odb_solver *s) {
  MPI_Comm comm = odb_dist_active() ? odb_dist_comm() : MPI_COMM_NULL;
  const char *name = s->variant->name;
  int S = s->method->s, active = 1;
  dpirk *dd = calloc(1, sizeof *dd);
  size_t bytes = (size_t)s->n * sizeof(double);
  if (!dd) return ODB_FAIL(ODB_ERR_NOMEM, "%s: plan", name);
  s->vdata = dd;
  s->block = 0;
  ODB_TRY(pirk_check(s, name));
  ODB_TRY(dist_active_ranks(s, kind_of(s->variant), "mpi_pirk_", &active));
  for (; dd->nhalo < S; dd->nhalo++)
    ODB_TRY(dist_halo_init_active(&dd->halo[dd->nhalo], kind_of(s->variant),
                                  comm, s->n, s->problem->d, active, name));
  ODB_TRY(dist_norm_init(&dd->norm, dd->halo[0].size, name));
  ODB_TRY(pirk_mat_alloc(&dd->Y, S, s->n, "argument vectors"));
  ODB_TRY(pirk_mat_alloc(&dd->Fprev, S, s->n, "F^(prev)"));
  memset(s->ynew, 0, bytes);
  for (int l = 0; l < S; ++l) {
    memset(dd->Y.row[l], 0, bytes);
    memset(dd->Fprev.row[l], 0, bytes);
    memset(s->F[l], 0, bytes);
  }
  return ODB_OK;
}

/* f_j(tc, v) for j in [j0, j1) into F[j0, j1). */
static void rhs(const odb_problem *p, double tc, const double *v, double *F,
                long j0, long j1) {
  if (j0 < j1) p->rhs(p, tc, v, 0, F + j0, j0, j1);
}

/*
** The predictor F_l = f(t + c_l h, eta) on the block: one exchange of
** eta, f on the interior of every F_l while it travels, the edges after.
*/
static odb_status predictor(odb_solver *s, double *const *cur, double h) {
  dpirk *dd = s->vdata;
  dist_halo *hl = &dd->halo[0];
  const odb_problem *p = s->problem;
  int S = s->method->s;
  ODB_TRY(dist_halo_begin(hl, s->y));
  for (int l = 0; l < S; ++l)
    rhs(p, s->t + s->method->c[l] * h, s->y, cur[l], hl->ia, hl->ib);
  ODB_TRY(dist_halo_end(hl, s->y));
  for (int l = 0; l < S; ++l) {
    double tc = s->t + s->method->c[l] * h;
    rhs(p, tc, s->y, cur[l], hl->a, hl->ia);
    rhs(p, tc, s->y, cur[l], hl->ib, hl->b);
  }
  return ODB_OK;
}

/*
** One corrector step: the block of every Y_l from F^(prev), the s
** exchanges posted together, f on every interior, then per l the wait and
** the two edges into F^(cur).
*/
static odb_status corrector(odb_solver *s, double *const *cur,
                            double *const *prev, double h) {
  dpirk *dd = s->vdata;
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  const double *restrict eta = s->y;
  int S = me->s;
  long a = dd->halo[0].a, b = dd->halo[0].b;
  for (int l = 0; l < S; ++l) {
    const double *al = me->A + l * S;
    double *restrict Y = dd->Y.row[l];
    for (long j = a; j < b; ++j) {
      double sum = al[0] * prev[0][j];
      for (int i = 1; i < S; ++i) sum += al[i] * prev[i][j];
      Y[j] = eta[j] + h * sum;
    }
    ODB_TRY(dist_halo_begin(&dd->halo[l], Y));
  }
  for (int l = 0; l < S; ++l)
    rhs(p, s->t + me->c[l] * h, dd->Y.row[l], cur[l], dd->halo[l].ia,
        dd->halo[l].ib);
  for (int l = 0; l < S; ++l) {
    const dist_halo *hl = &dd->halo[l];
    double tc = s->t + me->c[l] * h;
    ODB_TRY(dist_halo_end(&dd->halo[l], dd->Y.row[l]));
    rhs(p, tc, dd->Y.row[l], cur[l], hl->a, hl->ia);
    rhs(p, tc, dd->Y.row[l], cur[l], hl->ib, hl->b);
  }
  return ODB_OK;
}

/*
** One step: the predictor, m corrector steps (F^(cur) and F^(prev)
** swapped as pointer tables before each, as in A), then eta_new and the
** block's share of the norm in one sweep, and the norm over all ranks.
*/
static odb_status dp_attempt(odb_solver *s, double h, double *err) {
  dpirk *dd = s->vdata;
  const odb_method *me = s->method;
  int S = me->s;
  long a = dd->halo[0].a, b = dd->halo[0].b;
  double *cur[PIRK_MAX_STAGES], *prev[PIRK_MAX_STAGES];
  for (int l = 0; l < S; ++l) {
    cur[l] = s->F[l];
    prev[l] = dd->Fprev.row[l];
  }
  ODB_TRY(predictor(s, cur, h));
  for (int k = 0; k < s->m; ++k) {
    pirk_swap_rows(cur, prev, S);
    ODB_TRY(corrector(s, cur, prev, h));
  }
  dist_norm_reset(&dd->norm);
  for (long j = a; j < b; ++j) {
    double de = me->b[0] * cur[0][j];
    double e = me->b[0] * (cur[0][j] - prev[0][j]);
    for (int i = 1; i < S; ++i) {
      de += me->b[i] * cur[i][j];
      e += me->b[i] * (cur[i][j] - prev[i][j]);
    }
    s->ynew[j] = s->y[j] + h * de;
    dist_norm_add(&dd->norm, pirk_sq(h * e, s->y[j], s->ynew[j],
                                     s->opts.atol, s->opts.rtol));
  }
  return dist_norm_all(&dd->norm, s->n, err);
}

/*
** E's sweeps over this rank's block (the predictor's s f sweeps; per
** corrector step and target one sweep reading the s F_i^(prev) and eta and
** writing Y_l, and the f sweep; the end reading F^(m), F^(m-1) and eta and
** writing ynew), plus per exchange (the predictor's and s per corrector
** step) the halo written on arrival and read by f, and the block's parts
** read to be sent (A: the whole block, once per gather).
*/
static void dp_traffic(const odb_solver *s, int stage0, double *r,
                       double *w) {
  const dpirk *dd = s->vdata;
  const dist_halo *hl = &dd->halo[0];
  int S = s->method->s;
  double v = (double)(hl->b - hl->a) * sizeof(double);
  double in = hl->in * sizeof(double), out = hl->out * sizeof(double);
  double nx = 1.0 + (double)s->m * S;
  (void)stage0;   /* the predictor evaluates every stage */
  *r = S * v + (double)s->m * S * v * (S + 2) + v * (2 * S + 1) +
       nx * (in + out);
  *w = S * v + (double)s->m * S * v * 2 + v + nx * in;
}

/* y whole on every rank, and F_0 where the core keeps f(t, y) in it. */
static odb_status dp_gather(odb_solver *s) {
  dpirk *dd = s->vdata;
  ODB_TRY(dist_halo_gather(&dd->halo[0], s->y));
  if (s->fsal_ready) ODB_TRY(dist_halo_gather(&dd->halo[0], s->F[0]));
  return ODB_OK;
}

#define DIST_PIRK_VARIANT(id, nm, app, text)                                \
  const odb_variant odb_variant_##id = {                                    \
    .name = nm, .doc = text, .backend = "cpu", .applies = app,              \
    .init = dp_init, .fini = dp_fini, .attempt = dp_attempt,                \
    .traffic = dp_traffic, .gather = dp_gather,                             \
    .opts = dist_opts, .nopts = DIST_NOPTS,                                 \
  }

DIST_PIRK_VARIANT(mpi_pirk_A, "mpi_pirk_A", all_applies,
                  "MPI, PIRK correctors, any access pattern: each corrector "
                  "step's s argument vectors gathered on every rank by s "
                  "MPI_Iallgatherv (overlapped with f on the blocks' "
                  "interiors); error norm summed over the ranks");
DIST_PIRK_VARIANT(mpi_pirk_S, "mpi_pirk_S", sparse_applies,
                  "MPI, PIRK correctors, sparse: per argument vector each "
                  "rank receives point to point from each owner only "
                  "[lo-d, hi+d) (all of it when d = n); overlapped with f "
                  "on the interior");
DIST_PIRK_VARIANT(mpi_pirk_N, "mpi_pirk_N", neighbour_applies,
                  "MPI, PIRK correctors, neighbours: per argument vector "
                  "halos of width d from the two neighbouring ranks, "
                  "overlapped with f on the interior; needs d < n and every "
                  "rank's block at least d long");
DIST_PIRK_VARIANT(mpi_pirk_X, "mpi_pirk_X", forward_applies,
                  "MPI, PIRK correctors, forwarded halos: per argument "
                  "vector width-d halos passed on between neighbours in "
                  "rounds, so blocks may be shorter than d; needs d < n");

static dist_kind kind_of(const odb_variant *v) {
  if (v == &odb_variant_mpi_pirk_A) return DIST_ALL;
  if (v == &odb_variant_mpi_pirk_S) return DIST_SPARSE;
  if (v == &odb_variant_mpi_pirk_N) return DIST_NEIGHBOUR;
  return DIST_FORWARD;
}

odb_status odb_dist_pirk_register(void) {
  dist_opts_set_size(odb_dist_size());
  ODB_TRY(odb_variant_register(&odb_variant_mpi_pirk_A));
  ODB_TRY(odb_variant_register(&odb_variant_mpi_pirk_S));
  ODB_TRY(odb_variant_register(&odb_variant_mpi_pirk_N));
  return odb_variant_register(&odb_variant_mpi_pirk_X);
}
