/* dist_halo.c - the exchange plans of the distributed variants (A, S, N,
   X), their non-blocking exchanges, and the error norm summed exactly
   over the ranks. See dist_halo.h. */
#include "dist_halo.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_dist.h"
#include "odb_solver.h"

void dist_blocks(long n, int size, long *lo) {
  dist_blocks_over(n, size, size, lo);
}

void dist_blocks_over(long n, int active, int size, long *lo) {
  long q = n / active, r = n % active;
  for (int k = 0; k <= size; ++k)
    lo[k] = k >= active ? n : k * q + (k < r ? k : r);
}

/* {====== the option ranks */

/* max: the run's size (dist_opts_set_size); one rank until the variants
   register */
odb_param_decl dist_opts[DIST_NOPTS] = {
  { "ranks", ODB_PARAM_INT, 0, 0, 1, NULL,
    "active ranks: the components are split over the first `ranks` ranks, "
    "the others hold none and only join the error norm (0: every rank of "
    "the run)" },
};

void dist_opts_set_size(int size) { dist_opts[0].max = size; }

int dist_halo_level(dist_kind kind) {
  return kind == DIST_NEIGHBOUR ? 2 : kind == DIST_FORWARD ? 1 : 0;
}

/*
** The value is checked here too, not only by the core against dist_opts:
** a caller may build a solver with options the core has not seen (a
** variant switched to keeps the options of the one before, and those are
** checked against the new variant's declaration, which is this one).
*/
odb_status dist_active_ranks(const odb_solver *s, dist_kind kind,
                             const char *fam, int *active) {
  const char *name = s->variant->name;
  char what[96], why[400];
  double v[DIST_NOPTS];
  int R = odb_dist_size();
  snprintf(what, sizeof what, "variant '%s'", name);
  ODB_TRY(odb_param_resolve(what, dist_opts, DIST_NOPTS, s->opts.vopts,
                            s->opts.nvopts, v));
  if (v[0] < 0 || v[0] > R)
    return ODB_FAIL(ODB_ERR_ARG, "variant '%s': option 'ranks' must be in "
                    "0..%d (0: all ranks of the run), got %g", name, R, v[0]);
  *active = v[0] == 0 ? R : (int)v[0];
  if (!dist_layout_check(name, fam, dist_halo_level(kind), s->problem->label,
                         s->n, s->problem->d, *active, R, why, sizeof why))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: %s",
                    name, why);
  return ODB_OK;
}

/* }====== */

/* "4 ranks", or "2 active ranks of 4 (option ranks)". */
static const char *ranks_text(int active, int size, char *buf, size_t len) {
  if (active == size) snprintf(buf, len, "%d ranks", size);
  else snprintf(buf, len, "%d active rank%s of %d (option ranks)", active,
                active == 1 ? "" : "s", size);
  return buf;
}

/* See the header. */
int dist_layout_applies(const char *name, const char *fam, int halo,
                        const char *label, long n, long d, char *why,
                        size_t nwhy) {
  int R = odb_dist_size();
  return dist_layout_check(name, fam, halo, label, n, d, R, R, why, nwhy);
}

int dist_layout_check(const char *name, const char *fam, int halo,
                      const char *label, long n, long d, int active,
                      int size, char *why, size_t nwhy) {
  int R = active;
  long shortest = n / R;
  char rk[64];
  ranks_text(active, size, rk, sizeof rk);
  if (n < R) {
    snprintf(why, nwhy, "%s needs a component on every %srank; %s has n = "
             "%ld for %s", name, active == size ? "" : "active ", label, n,
             rk);
    return 0;
  }
  if (halo && d >= n) {
    snprintf(why, nwhy, "%s needs a limited access distance (d < n); %s has "
             "d = n = %ld: every f_j may read every component (%sA and %sS "
             "apply)", name, label, n, fam, fam);
    return 0;
  }
  if (halo == 2 && shortest < d) {
    snprintf(why, nwhy, "%s needs every %srank's block at least as long "
             "as the access distance d = %ld; %s has n = %ld, and %s give "
             "blocks of %ld (%sX forwards halos over several ranks)", name,
             active == size ? "" : "active ", d, label, n, rk, shortest, fam);
    return 0;
  }
  return 1;
}

/* The intersection of [a, b) and [c, e) as a message (count 0: none). */
static dist_msg cut(int peer, int send, long a, long b, long c, long e) {
  dist_msg m = { peer, send, a > c ? a : c, 0 };
  long end = b < e ? b : e;
  m.count = end > m.at ? end - m.at : 0;
  return m;
}

/* [max(0, lo - d), lo) and [hi, min(n, hi + d)): what rank q's f reads
   outside its block; nothing for an empty block (an inactive rank). */
static long need_lo(const dist_halo *h, int q) {
  if (h->lo[q] == h->lo[q + 1]) return h->lo[q];
  return h->lo[q] - h->d > 0 ? h->lo[q] - h->d : 0;
}
static long need_hi(const dist_halo *h, int q) {
  if (h->lo[q] == h->lo[q + 1]) return h->lo[q + 1];
  return h->lo[q + 1] + h->d < h->n ? h->lo[q + 1] + h->d : h->n;
}

/* Appends m when it moves anything; the array has room (see plan). */
static void add(dist_halo *h, dist_msg m) {
  if (m.count > 0) h->msg[h->nmsg++] = m;
}

/*
** S and N: one round; with every other rank q (N: only rank +- 1), the
** part of q's block this rank reads, and the part of this block q reads.
*/
static void plan_direct(dist_halo *h) {
  int r = h->rank;
  h->round[0] = 0;
  for (int q = 0; q < h->size; ++q) {
    if (q == r) continue;
    if (h->kind == DIST_NEIGHBOUR && q != r - 1 && q != r + 1) continue;
    add(h, cut(q, 0, need_lo(h, r), need_hi(h, r), h->lo[q], h->lo[q + 1]));
    add(h, cut(q, 1, need_lo(h, q), need_hi(h, q), h->a, h->b));
  }
  h->nrounds = h->nmsg > 0;
  h->round[1] = h->nmsg;
}

/*
** X: round k (1, 2, ...) brings rank r the part of block r - k in its
** left halo from r - 1 and the part of block r + k in its right halo from
** r + 1, and passes rank r + 1 the part of block r + 1 - k in that rank's
** left halo (its own block at k = 1, else a part of what round k - 1
** brought), and rank r - 1 the mirror image. Every rank computes every
** rank's messages the same way, so the rounds end together.
*/
static void plan_forward(dist_halo *h) {
  int r = h->rank, R = h->size;
  h->nrounds = 0;
  for (int k = 1; k < R; ++k) {
    int any = 0;
    h->round[h->nrounds] = h->nmsg;
    for (int q = 0; q < R && !any; ++q)   /* does any rank receive? */
      any = (q - k >= 0 && cut(0, 0, need_lo(h, q), h->lo[q], h->lo[q - k],
                               h->lo[q - k + 1]).count > 0) ||
            (q + k < R && cut(0, 0, h->lo[q + 1], need_hi(h, q), h->lo[q + k],
                              h->lo[q + k + 1]).count > 0);
    if (!any) break;
    if (r - k >= 0)
      add(h, cut(r - 1, 0, need_lo(h, r), h->lo[r], h->lo[r - k],
                 h->lo[r - k + 1]));
    if (r + k < R)
      add(h, cut(r + 1, 0, h->lo[r + 1], need_hi(h, r), h->lo[r + k],
                 h->lo[r + k + 1]));
    if (r + 1 < R && r + 1 - k >= 0)
      add(h, cut(r + 1, 1, need_lo(h, r + 1), h->lo[r + 1],
                 h->lo[r + 1 - k], h->lo[r + 2 - k]));
    if (r - 1 >= 0 && r - 1 + k < R)
      add(h, cut(r - 1, 1, h->lo[r], need_hi(h, r - 1), h->lo[r - 1 + k],
                 h->lo[r + k]));
    h->nrounds++;
  }
  h->round[h->nrounds] = h->nmsg;
}

odb_status dist_halo_init(dist_halo *h, dist_kind kind, MPI_Comm comm,
                          long n, long d, const char *what) {
  int size = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
  return dist_halo_init_active(h, kind, comm, n, d, size, what);
}

/*
** A on fewer active ranks than comm's: the active ranks' communicator, in
** the same rank order (the key), so that A's counts and displacements of
** the first active ranks serve it as they are. MPI_Comm_split is a
** blocking collective of every rank of comm: every rank makes the solver
** together, and a rank that fails before it ends the run (docs/mpi.md,
** "Faults"), which frees the others.
*/
static odb_status split_active(dist_halo *h) {
  int active = h->rank < h->active, rc;
  rc = MPI_Comm_split(h->comm, active ? 0 : MPI_UNDEFINED, h->rank,
                      &h->xcomm);
  if (rc != MPI_SUCCESS) {
    h->xcomm = MPI_COMM_NULL;
    return ODB_FAIL(ODB_ERR_IO, "%s: MPI_Comm_split of the %d active ranks "
                    "failed (MPI error %d)", h->what, h->active, rc);
  }
  return ODB_OK;
}

odb_status dist_halo_init_active(dist_halo *h, dist_kind kind, MPI_Comm comm,
                                 long n, long d, int active,
                                 const char *what) {
  int rank = 0, size = 1;   /* MPI not started (no mpirun): rank 0 of 1 */
  odb_status st;
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  st = dist_halo_plan_active(h, kind, comm, rank, size, active, n, d, what);
  if (st == ODB_OK && kind == DIST_ALL && active < size &&
      comm != MPI_COMM_NULL)
    st = split_active(h);
  if (st != ODB_OK) dist_halo_free(h);
  return st;
}

odb_status dist_halo_plan(dist_halo *h, dist_kind kind, MPI_Comm comm,
                          int rank, int size, long n, long d,
                          const char *what) {
  return dist_halo_plan_active(h, kind, comm, rank, size, size, n, d, what);
}

odb_status dist_halo_plan_active(dist_halo *h, dist_kind kind, MPI_Comm comm,
                                 int rank, int size, int active, long n,
                                 long d, const char *what) {
  int R = size;
  size_t cap;
  memset(h, 0, sizeof *h);
  h->kind = kind;
  h->comm = comm;
  h->xcomm = comm;
  h->what = what;
  h->rank = rank;
  h->size = R;
  h->active = active;
  if (active < 1 || active > size)
    return ODB_FAIL(ODB_ERR_ARG, "%s: %d active ranks of %d", what, active,
                    size);
  h->n = n;
  h->d = d < n ? d : n;
  if (n > INT_MAX)   /* MPI counts and displacements are int */
    return ODB_FAIL(ODB_ERR_ARG, "%s: n = %ld components is more than an "
                    "MPI count holds (%d)", what, n, INT_MAX);
  /* X: at most 4 messages a round and R - 1 rounds; S: 2 per other rank */
  cap = (size_t)4 * (size_t)R + 4;
  h->lo = malloc((size_t)(R + 1) * sizeof *h->lo);
  h->round = malloc((size_t)(R + 1) * sizeof *h->round);
  h->msg = malloc(cap * sizeof *h->msg);
  h->req = malloc(cap * sizeof *h->req);
  h->counts = malloc((size_t)R * sizeof *h->counts);
  h->displs = malloc((size_t)R * sizeof *h->displs);
  if (!h->lo || !h->round || !h->msg || !h->req || !h->counts || !h->displs) {
    dist_halo_free(h);
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: exchange plan for %d ranks", what, R);
  }
  dist_blocks_over(n, active, R, h->lo);
  h->a = h->lo[h->rank];
  h->b = h->lo[h->rank + 1];
  for (int q = 0; q < R; ++q) {
    h->counts[q] = (int)(h->lo[q + 1] - h->lo[q]);
    h->displs[q] = (int)h->lo[q];
  }
  /* f_j reads [j - d, j + d]: inside the block for j in [a + d, b - d),
     and past the ends of the vector there is nothing to receive */
  h->ia = h->a == 0 ? 0 : h->a + h->d;
  h->ib = h->b == n ? n : h->b - h->d;
  if (h->ia >= h->ib || h->ia > h->b || h->ib < h->a) h->ia = h->ib = h->b;
  if (kind == DIST_ALL) {   /* the active ranks gather among themselves */
    int mine = rank < active;
    h->nrounds = active > 1 && mine;
    h->in = h->nrounds ? (double)(n - (h->b - h->a)) : 0.0;
    h->out = h->nrounds ? (double)(h->b - h->a) : 0.0;
    return ODB_OK;
  }
  if (kind == DIST_FORWARD) plan_forward(h);
  else plan_direct(h);
  for (int k = 0; k < h->nmsg; ++k) {
    if (h->msg[k].send) h->out += (double)h->msg[k].count;
    else h->in += (double)h->msg[k].count;
  }
  return ODB_OK;
}

void dist_halo_free(dist_halo *h) {
  /* after MPI_Finalize (a run stopped inside an exchange ends MPI before
     it frees its objects: odb_dist_requests_open) no MPI call is allowed */
  if (h->xcomm != h->comm && h->xcomm != MPI_COMM_NULL && odb_dist_active())
    MPI_Comm_free(&h->xcomm);
  free(h->lo);
  free(h->round);
  free(h->msg);
  free(h->req);
  free(h->counts);
  free(h->displs);
  memset(h, 0, sizeof *h);
}

/* Posts round k: the receives first, then the sends (tag = round). */
static odb_status post(dist_halo *h, double *v, int k) {
  int rc = MPI_SUCCESS;
  h->nreq = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = h->round[k]; i < h->round[k + 1]; ++i) {
      const dist_msg *m = &h->msg[i];
      if (m->send != pass) continue;
      rc = m->send ? MPI_Isend(v + m->at, (int)m->count, MPI_DOUBLE, m->peer,
                               k, h->comm, &h->req[h->nreq])
                   : MPI_Irecv(v + m->at, (int)m->count, MPI_DOUBLE, m->peer,
                               k, h->comm, &h->req[h->nreq]);
      if (rc != MPI_SUCCESS) goto fail;
      h->nreq++;
    }
  return ODB_OK;
fail:
  return ODB_FAIL(ODB_ERR_IO, "%s: posting round %d of the exchange failed "
                  "(MPI error %d)", h->what, k + 1, rc);
}

/*
** DIST_ALL posts one in-place MPI_Iallgatherv on v. The caller reads its
** own block of v while the gather runs: MPI does not write a rank's own
** block in place, and a pending operation's send data may be read
** (MPI 3.0 dropped the rule against it).
*/
odb_status dist_halo_begin(dist_halo *h, double *v) {
  if (h->nrounds == 0) return ODB_OK;
  if (h->kind == DIST_ALL) {
    int rc = MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, h->counts,
                             h->displs, MPI_DOUBLE, h->xcomm, &h->req[0]);
    h->nreq = 1;
    if (rc != MPI_SUCCESS)
      return ODB_FAIL(ODB_ERR_IO, "%s: MPI_Iallgatherv failed (MPI error %d)",
                      h->what, rc);
    return ODB_OK;
  }
  return post(h, v, 0);
}

odb_status dist_halo_end(dist_halo *h, double *v) {
  if (h->nrounds == 0) return ODB_OK;
  ODB_TRY(odb_dist_waitall(h->nreq, h->req, h->what));
  if (h->kind == DIST_ALL) return ODB_OK;
  for (int k = 1; k < h->nrounds; ++k) {   /* X: round k forwards k - 1's */
    ODB_TRY(post(h, v, k));
    ODB_TRY(odb_dist_waitall(h->nreq, h->req, h->what));
  }
  return ODB_OK;
}

odb_status dist_halo_gather(dist_halo *h, double *v) {
  int rc;
  if (h->size == 1) return ODB_OK;
  rc = MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, h->counts,
                       h->displs, MPI_DOUBLE, h->comm, &h->req[0]);
  if (rc != MPI_SUCCESS)
    return ODB_FAIL(ODB_ERR_IO, "%s: MPI_Iallgatherv of the state failed "
                    "(MPI error %d)", h->what, rc);
  return odb_dist_waitall(1, h->req, h->what);
}

/* {====== the error norm over the ranks (dist_halo.h) */

odb_status dist_norm_init(dist_norm *nm, int size, const char *what) {
  size_t per = DIST_NORM_PARTS + 1;
  memset(nm, 0, sizeof *nm);
  nm->size = size;
  nm->counts = malloc((size_t)size * sizeof *nm->counts);
  nm->displs = malloc((size_t)size * sizeof *nm->displs);
  nm->all = malloc((size_t)size * per * sizeof *nm->all);
  if (!nm->counts || !nm->displs || !nm->all) {
    dist_norm_free(nm);
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: error norm of %d ranks", what, size);
  }
  for (int r = 0; r < size; ++r) {
    nm->counts[r] = (long)per;
    nm->displs[r] = (long)per * r;
  }
  return ODB_OK;
}

void dist_norm_free(dist_norm *nm) {
  free(nm->counts);
  free(nm->displs);
  free(nm->all);
  memset(nm, 0, sizeof *nm);
}

void dist_norm_reset(dist_norm *nm) {
  nm->np = 0;
  nm->p[DIST_NORM_PARTS] = 0.0;
}

/*
** p[0..*np) are non-overlapping and increasing in magnitude; adds x so
** that they stay so and their exact sum grows by x (Shewchuk's grow-
** expansion with zeros dropped, as math.fsum). Returns 0 when the sum
** overflowed (then p is unchanged past what was consumed: the caller
** treats the norm as infinite).
*/
static int partials_add(double *p, int *np, double x) {
  int i = 0;
  for (int k = 0; k < *np; ++k) {
    double y = p[k], hi, lo;
    if (fabs(x) < fabs(y)) {
      double t = x;
      x = y;
      y = t;
    }
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) p[i++] = lo;
    x = hi;
  }
  *np = i;
  if (!isfinite(x)) return 0;
  /* non-overlapping: never more than 41 partials, so there is room */
  if (x != 0.0 && *np < DIST_NORM_PARTS) p[(*np)++] = x;
  return 1;
}

void dist_norm_add(dist_norm *nm, double x) {
  if (x == 0.0) return;
  if (!isfinite(x) || !partials_add(nm->p, &nm->np, x))
    nm->p[DIST_NORM_PARTS] += isfinite(x) ? INFINITY : x;
}

/* The exact sum of p[0..np) rounded once, half to even (math.fsum's end). */
static double partials_round(const double *p, int np) {
  double hi = 0.0, lo = 0.0;
  if (np == 0) return 0.0;
  hi = p[--np];
  while (np > 0) {   /* from the top, until the sum becomes inexact */
    double x = hi, y = p[--np];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (np > 0 && ((lo < 0.0 && p[np - 1] < 0.0) ||
                 (lo > 0.0 && p[np - 1] > 0.0))) {
    double y = lo * 2.0, x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

odb_status dist_norm_all(dist_norm *nm, long n, double *err) {
  size_t per = DIST_NORM_PARTS + 1;
  double p[DIST_NORM_PARTS], special = 0.0;
  int np = 0, finite = 1;
  for (int k = nm->np; k < DIST_NORM_PARTS; ++k) nm->p[k] = 0.0;
  ODB_TRY(odb_dist_allgatherv(nm->p, (long)per, nm->all, nm->counts,
                              nm->displs, "MPI_Allgatherv (error norm)"));
  for (int r = 0; r < nm->size; ++r) {
    const double *q = nm->all + per * (size_t)r;
    special += q[DIST_NORM_PARTS];
    for (int k = 0; k < DIST_NORM_PARTS && finite; ++k)
      if (q[k] != 0.0) finite = partials_add(p, &np, q[k]);
  }
  if (!finite) special += INFINITY;
  *err = special != 0.0 || isnan(special)
             ? special : sqrt(partials_round(p, np) / (double)n);
  return ODB_OK;
}

/* }====== */
