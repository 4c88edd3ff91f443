/* odb_dist_sparse.c - a rank's rows of a sparse matrix, the plan of its
** halo exchange and the distributed SpMV (odb_dist_sparse.h).
**
** Assumes: the global CSR has ascending columns and the same values on
** every rank (every rank builds or reads it the same way), or, partial,
** the same values in every row it holds whole: this rank's and those of
** other ranks that read this rank's values; own[] is the same on every
** rank. Then the plan needs no message: what rank q must send to rank r is
** read off r's rows in the pattern, and both sort by global index, so q's
** message is exactly r's ghosts from q, in r's order. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(ODB_HAVE_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>            /* Open MPI's MPIX_Query_cuda_support */
#endif
#endif

#include "odb_clock.h"
#include "odb_dist.h"
#include "odb_dist_sparse.h"
#include "odb_sparse_file.h"
#include "odb_sparse_floor.h"

/* See the header. Rows are compacted in order, so a kept row's columns
   stay ascending. */
void odb_dsparse_trim(odb_sparse *csr, const int *own, int rank)
{
  long n = csr->n;
  int64_t e = 0, a = 0;
  for (long r = 0; r < n; r++) {
    int64_t b = csr->rowptr[r + 1];
    int keep = own[r] == rank;
    for (int64_t p = a; p < b && !keep; p++) keep = own[csr->col[p]] == rank;
    if (keep)
      for (int64_t p = a; p < b; p++, e++) {
        csr->col[e] = csr->col[p];
        csr->val[e] = csr->val[p];
      }
    csr->rowptr[r + 1] = e;
    a = b;
  }
  csr->nnz = (long)e;
  /* smaller blocks: a failed shrink leaves the larger ones, still valid */
  int32_t *c = realloc(csr->col, (size_t)(e ? e : 1) * sizeof *c);
  if (c) csr->col = c;
  double *v = realloc(csr->val, (size_t)(e ? e : 1) * sizeof *v);
  if (v) csr->val = v;
}

/* The first row r with rowptr[r] * size >= q * nnz, for every q. */
void odb_dsparse_owner_rows(const odb_sparse *csr, int size, int *own)
{
  long n = csr->n;
  double nnz = (double)csr->rowptr[n];
  int q = 0;
  for (long r = 0; r < n; r++) {
    while (q + 1 < size && (double)csr->rowptr[r] * size >= (double)(q + 1) * nnz) q++;
    own[r] = q;
  }
}

/* Plane i's rank: the first I mod size ranks hold one plane more. */
static int plane_owner(int I, int size, int i)
{
  int base = I / size, extra = I % size;
  int cut = extra * (base + 1);
  if (i < cut) return i / (base + 1);
  return extra + (i - cut) / (base ? base : 1);
}

void odb_dsparse_owner_planes(const odb_reservoir *g, int size, int *own)
{
  long plane = (long)g->J * g->H * g->k;     /* rows of one plane */
  for (long r = 0; r < g->M * g->k; r++) own[r] = plane_owner(g->I, size, (int)(r / plane));
  for (int w = 0; w < g->nw; w++) own[g->M * g->k + w] = plane_owner(g->I, size, g->well_i[w]);
}

void odb_dsparse_free(odb_dsparse *D)
{
  if (!D) return;
  if (D->gpu) D->gpu_free(D);    /* keeps its buffers when D is stuck */
  free(D->glob); free(D->ghost);
  odb_sparse_free(D->Ai); odb_sparse_free(D->Ab);
  odb_dslab_free(D->slab);
  free(D->send_rank); free(D->recv_rank); free(D->send_off); free(D->recv_off);
  free(D->send_idx);
  free(D->counts); free(D->displs); free(D->all_glob);
  /* stuck: MPI may still write recv_buf, gather_buf and red, and read
     send_buf (the header's "Buffers under a request") */
  if (D->stuck) return;
  free(D->send_buf); free(D->recv_buf); free(D->reqs); free(D->gather_buf);
  free(D);
}

#define SETTLE_S 0.1             /* seconds a failed exchange is polled */

int odb_dsparse_settle(int n, void *reqs, int nrecv, odb_status why)
{
#ifdef ODB_HAVE_MPI
  MPI_Request *rq = reqs;
  int done = 0;
  long tests = 0;
  if (n <= 0) return 1;
  /* a receive that a message has matched is not cancelled (MPI_Cancel
     then has no effect) and completes as the message arrives */
  for (int i = 0; i < nrecv && i < n; i++)
    if (rq[i] != MPI_REQUEST_NULL) MPI_Cancel(&rq[i]);
  /* a stopped run is given no time: mpirun kills the ranks that linger */
  double limit = why == ODB_INTERRUPTED ? 0.0 : odb_dist_timeout() < SETTLE_S ? odb_dist_timeout() : SETTLE_S;
  double t0 = odb_clock_now();
  for (;;) {
    done = 0;
    if (MPI_Testall(n, rq, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
      /* an error status of one request: test them one by one */
      done = 1;
      for (int i = 0; i < n; i++) {
        int one = 0;
        if (rq[i] != MPI_REQUEST_NULL && (MPI_Test(&rq[i], &one, MPI_STATUS_IGNORE) != MPI_SUCCESS || !one))
          done = 0;
      }
    }
    if (done) return 1;
    if (odb_clock_since(t0) > limit) return 0;
    if (++tests > 64) {
      struct timespec ts = {0, 200000L};
      nanosleep(&ts, NULL);
    }
  }
#else
  (void)n; (void)reqs; (void)nrecv; (void)why;
  return 1;
#endif
}

/* Rows list[0..cnt) of csr as a CSR part with columns through loc[], in
   format f; *out NULL when cnt is 0. */
static odb_status make_part(const odb_sparse *csr, const int64_t *list, long cnt,
                            const int32_t *loc, odb_sparse_format f, int ell_width,
                            odb_sparse **out)
{
  *out = NULL;
  if (cnt == 0) return ODB_OK;
  long nz = 0;
  for (long i = 0; i < cnt; i++) nz += (long)(csr->rowptr[list[i] + 1] - csr->rowptr[list[i]]);
  odb_sparse *P = calloc(1, sizeof *P);
  if (!P) return ODB_FAIL(ODB_ERR_NOMEM, "distributed matrix part");
  P->fmt = ODB_FMT_CSR; P->n = cnt; P->nnz = nz;
  P->rowptr = malloc((size_t)(cnt + 1) * sizeof *P->rowptr);
  P->col = malloc((size_t)(nz ? nz : 1) * sizeof *P->col);
  P->val = malloc((size_t)(nz ? nz : 1) * sizeof *P->val);
  if (!P->rowptr || !P->col || !P->val) {
    odb_sparse_free(P);
    return ODB_FAIL(ODB_ERR_NOMEM, "distributed matrix part of %ld nonzeros", nz);
  }
  long e = 0;
  P->rowptr[0] = 0;
  for (long i = 0; i < cnt; i++) {
    for (int64_t p = csr->rowptr[list[i]]; p < csr->rowptr[list[i] + 1]; p++) {
      P->col[e] = loc[csr->col[p]];
      P->val[e++] = csr->val[p];
    }
    P->rowptr[i + 1] = e;
  }
  if (f == ODB_FMT_CSR) { *out = P; return ODB_OK; }
  odb_status st = odb_sparse_convert(P, f, 1, ell_width, 0, out);
  odb_sparse_free(P);
  return st;
}

/* Ghost order: owner rank, then global index. */
static const int *sort_own;
static int ghost_cmp(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  int ox = sort_own[x], oy = sort_own[y];
  if (ox != oy) return ox < oy ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* The whole matrix as the only part (one rank): any format that applies
   to it, refused with the core's reason otherwise (Bdia needs the grid). */
static odb_status whole_part(const odb_sparse *csr, odb_sparse_format f, int ell_width,
                             const odb_reservoir *grid, odb_sparse **out)
{
  odb_sparse_conv c = {1, ell_width, 0, grid};
  return odb_sparse_convert_to(csr, f, &c, out);
}

/* 1 when row r of csr (and of also, when given) reads only rank q's
   values. */
static int row_inside(const odb_sparse *csr, const odb_sparse *also, const int *own,
                      int64_t r, int q)
{
  for (int64_t p = csr->rowptr[r]; p < csr->rowptr[r + 1]; p++)
    if (own[csr->col[p]] != q) return 0;
  return also ? row_inside(also, NULL, own, r, q) : 1;
}

odb_status odb_dsparse_create(const odb_sparse *csr, const odb_sparse *also,
                              const int *own, int rank,
                              int size, odb_sparse_format f, int ell_width,
                              const odb_reservoir *grid, odb_dsparse_split split,
                              int tag, odb_dsparse **out)
{
  return odb_dsparse_create_ordered(csr, also, own, rank, size, f, ell_width, grid, split, tag, 0, 0, out);
}

/* Bdia on several ranks: its slab (odb_dist_bdia.c) */
static odb_status create_slab(const odb_sparse *csr, const int *own, int rank, int size,
                              const odb_reservoir *grid, odb_dsparse_split split, int tag,
                              int partial, odb_dsparse **out)
{
  if (split != ODB_DSPLIT_PLANES)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "format 'bdia' on %d ranks: needs dist = \"planes\" (slabs of whole grid "
                    "planes: Bdia addresses x by grid cell); with dist = \"rows\" use 'csr', 'ell' or 'hyb'", size);
  if (!grid)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "format 'bdia' on %d ranks: needs the grid of the matrix", size);
  odb_dsparse *D = calloc(1, sizeof *D);
  if (!D) return ODB_FAIL(ODB_ERR_NOMEM, "distributed matrix");
  D->n = csr->n; D->nnz = (long)csr->rowptr[csr->n]; D->rank = rank; D->size = size;
  D->fmt = ODB_FMT_BDIA; D->split = split; D->tag = tag;
  odb_status st = odb_dslab_create(csr, own, grid, partial, D);
  if (st == ODB_OK && partial) {   /* the whole matrix's count: the ranks' rows summed */
    double t = (double)D->lnnz;
    st = odb_dist_allreduce_sum(&t, 1, "MPI_Allreduce (the matrix's nonzeros)");
    D->nnz = (long)t;
  }
  if (st != ODB_OK) { odb_dsparse_free(D); return st; }
  *out = D;
  return ODB_OK;
}

/* D->all_glob from every rank's D->glob (counts and displs set). */
static odb_status gather_order(odb_dsparse *D)
{
  long cnt = D->counts[D->rank];
  double *mine = malloc((size_t)(cnt ? cnt : 1) * sizeof *mine);
  double *all = malloc((size_t)(D->n ? D->n : 1) * sizeof *all);
  odb_status st = ODB_OK;
  if (!mine || !all) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "the gathered order of %ld rows", D->n);
  } else {
    for (long i = 0; i < cnt; i++) mine[i] = (double)D->glob[i];
    st = odb_dist_allgatherv(mine, cnt, all, D->counts, D->displs, "MPI_Allgatherv (the ranks' row orders)");
    for (long r = 0; st == ODB_OK && r < D->n; r++) D->all_glob[r] = (int64_t)all[r];
  }
  free(mine);
  free(all);
  return st;
}

odb_status odb_dsparse_create_ordered(const odb_sparse *csr, const odb_sparse *also,
                                      const int *own, int rank, int size, odb_sparse_format f,
                                      int ell_width, const odb_reservoir *grid,
                                      odb_dsparse_split split, int tag, int grid_order,
                                      int partial, odb_dsparse **out)
{
  odb_status st = ODB_OK;
  long n = csr->n;
  int32_t *loc = NULL, *stamp = NULL;
  int64_t *list = NULL, *need = NULL;
  long *byown = NULL;
  *out = NULL;
  if (size > 1 && f == ODB_FMT_BDIA) return create_slab(csr, own, rank, size, grid, split, tag, partial, out);
  partial = partial && size > 1;
  if (size > 1 && f != ODB_FMT_CSR && f != ODB_FMT_ELL && f != ODB_FMT_HYB)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED,
                    "format '%s' is not split over ranks (it addresses x by row: a block column or a diagonal "
                    "offset); on %d ranks use 'csr', 'ell' or 'hyb' ('bdia' with dist = \"planes\")",
                    odb_sparse_format_name(f), size);
  grid_order = grid_order && size > 1;
  odb_dsparse *D = calloc(1, sizeof *D);
  if (!D) return ODB_FAIL(ODB_ERR_NOMEM, "distributed matrix");
  D->n = n; D->nnz = (long)csr->rowptr[n]; D->rank = rank; D->size = size;
  D->fmt = f; D->split = split; D->tag = tag;
  loc = malloc((size_t)n * sizeof *loc);
  stamp = malloc((size_t)n * sizeof *stamp);
  list = malloc((size_t)n * sizeof *list);
  need = malloc((size_t)n * sizeof *need);
  byown = calloc((size_t)size + 1, sizeof *byown);
  D->counts = calloc((size_t)size, sizeof *D->counts);
  D->displs = calloc((size_t)size, sizeof *D->displs);
  D->all_glob = malloc((size_t)n * sizeof *D->all_glob);
  if (!loc || !stamp || !list || !need || !byown || !D->counts || !D->displs || !D->all_glob) goto nomem;

  /* the rows of every rank, ascending (a counting sort by owner) */
  for (long r = 0; r < n; r++) D->counts[own[r]]++;
  for (int q = 1; q < size; q++) D->displs[q] = D->displs[q - 1] + D->counts[q - 1];
  for (int q = 0; q <= size; q++) byown[q] = q ? D->displs[q - 1] + D->counts[q - 1] : 0;
  for (long r = 0; r < n; r++) list[byown[own[r]]++] = r;
  long lo = D->displs[rank], cnt = D->counts[rank];
  const int64_t *mine = list + lo;

  /* interior rows first, then boundary rows; local indices */
  D->nloc = cnt;
  D->glob = malloc((size_t)(cnt ? cnt : 1) * sizeof *D->glob);
  if (!D->glob) goto nomem;
  long a = 0, b = 0;
  for (long i = 0; i < cnt; i++)
    need[!grid_order && row_inside(csr, also, own, mine[i], rank) ? a++ : cnt - 1 - b++] = mine[i];
  D->nint = a;
  memcpy(D->glob, need, (size_t)a * sizeof *need);
  for (long i = 0; i < b; i++) D->glob[a + i] = need[cnt - 1 - i];
  for (long r = 0; r < n; r++) { loc[r] = -1; stamp[r] = -1; }
  for (long i = 0; i < cnt; i++) loc[D->glob[i]] = (int32_t)i;

  /* ghosts: the other ranks' columns of our boundary rows */
  long ng = 0;
  for (long i = a; i < cnt; i++)
    for (int64_t p = csr->rowptr[D->glob[i]]; p < csr->rowptr[D->glob[i] + 1]; p++) {
      int32_t c = csr->col[p];
      if (own[c] != rank && stamp[c] != rank) { stamp[c] = rank; need[ng++] = c; }
    }
  sort_own = own;
  qsort(need, (size_t)ng, sizeof *need, ghost_cmp);
  if (cnt + ng > INT32_MAX)
    { st = ODB_FAIL(ODB_ERR_ARG, "rank %d holds more than 2^31 values", rank); goto fail; }
  D->nghost = ng;
  D->ghost = malloc((size_t)(ng ? ng : 1) * sizeof *D->ghost);
  D->recv_rank = malloc((size_t)size * sizeof *D->recv_rank);
  D->recv_off = malloc((size_t)(size + 1) * sizeof *D->recv_off);
  if (!D->ghost || !D->recv_rank || !D->recv_off) goto nomem;
  D->recv_off[0] = 0;
  for (long g = 0; g < ng; g++) {
    D->ghost[g] = need[g];
    loc[need[g]] = (int32_t)(cnt + g);
    if (g == 0 || own[need[g]] != own[need[g - 1]]) {
      if (D->nrecv) D->recv_off[D->nrecv] = g;
      D->recv_rank[D->nrecv++] = own[need[g]];
    }
  }
  D->recv_off[D->nrecv] = ng;

  /* what we send: our values read by another rank's rows, per rank in
     ascending global order (the order of its ghosts from us) */
  D->send_rank = malloc((size_t)size * sizeof *D->send_rank);
  D->send_off = malloc((size_t)(size + 1) * sizeof *D->send_off);
  if (!D->send_rank || !D->send_off) goto nomem;
  long ns = 0;
  D->send_off[0] = 0;
  for (long r = 0; r < n; r++) stamp[r] = -1;
  for (int q = 0; q < size; q++) {
    if (q == rank) continue;
    long start = ns;
    for (long i = D->displs[q]; i < D->displs[q] + D->counts[q]; i++)
      for (int64_t p = csr->rowptr[list[i]]; p < csr->rowptr[list[i] + 1]; p++) {
        int32_t c = csr->col[p];
        if (own[c] == rank && stamp[c] != q) { stamp[c] = q; need[ns++] = c; }
      }
    if (ns == start) continue;
    /* ascending global order within q's piece */
    for (long i = start + 1; i < ns; i++) {
      int64_t v = need[i]; long j = i;
      while (j > start && need[j - 1] > v) { need[j] = need[j - 1]; j--; }
      need[j] = v;
    }
    D->send_rank[D->nsend++] = q;
    D->send_off[D->nsend] = ns;
  }
  if (odb_dsparse_plan_buffers(D, ns, ng) != ODB_OK) goto nomem;
  for (long i = 0; i < ns; i++) D->send_idx[i] = loc[need[i]];

  /* the gathered order: every rank's local order, ranks in turn (from a
     part of the matrix: each rank's own, gathered; the row numbers travel
     as doubles, exact below 2^53) */
  if (partial) {
    if ((st = gather_order(D)) != ODB_OK) goto fail;
  } else for (int q = 0; q < size; q++) {
    long qa = 0, qb = 0, qn = D->counts[q];
    int64_t *dst = D->all_glob + D->displs[q];
    const int64_t *rows = list + D->displs[q];
    for (long i = 0; i < qn; i++) {
      if (!grid_order && row_inside(csr, also, own, rows[i], q)) dst[qa++] = rows[i];
      else need[qb++] = rows[i];
    }
    memcpy(dst + qa, need, (size_t)qb * sizeof *need);
  }

  for (int64_t i = 0; i < cnt; i++) D->lnnz += (long)(csr->rowptr[D->glob[i] + 1] - csr->rowptr[D->glob[i]]);
  if (partial) {   /* the whole matrix's count: the ranks' rows summed */
    double t = (double)D->lnnz;
    if ((st = odb_dist_allreduce_sum(&t, 1, "MPI_Allreduce (the matrix's nonzeros)")) != ODB_OK) goto fail;
    D->nnz = (long)t;
  }
  if (size == 1) st = whole_part(csr, f, ell_width, grid, &D->Ai);
  else {
    st = make_part(csr, D->glob, a, loc, f, ell_width, &D->Ai);
    if (st == ODB_OK) st = make_part(csr, D->glob + a, b, loc, f, ell_width, &D->Ab);
  }
  if (st != ODB_OK) goto fail;
  free(loc); free(stamp); free(list); free(need); free(byown);
  *out = D;
  return ODB_OK;
nomem:
  st = ODB_FAIL(ODB_ERR_NOMEM, "distributed matrix of order %ld on rank %d", n, rank);
fail:
  free(loc); free(stamp); free(list); free(need); free(byown);
  odb_dsparse_free(D);
  return st;
}

/* See the header. */
odb_status odb_dsparse_plan_buffers(odb_dsparse *D, long ns, long ng)
{
  D->send_idx = malloc((size_t)(ns ? ns : 1) * sizeof *D->send_idx);
  D->send_buf = malloc((size_t)(ns ? ns : 1) * sizeof *D->send_buf);
  D->recv_buf = malloc((size_t)(ng ? ng : 1) * sizeof *D->recv_buf);
#ifdef ODB_HAVE_MPI
  D->reqs = malloc((size_t)(D->nsend + D->nrecv + 1) * sizeof(MPI_Request));
#else
  D->reqs = malloc(1);
#endif
  if (!D->send_idx || !D->send_buf || !D->recv_buf || !D->reqs)
    return ODB_FAIL(ODB_ERR_NOMEM, "the exchange buffers of a distributed "
                    "matrix (%ld values sent, %ld received)", ns, ng);
  return ODB_OK;
}

odb_status odb_dsparse_fail(odb_dsparse *A, odb_status st, int settled)
{
  A->broken = 1;
  if (!settled) A->stuck = 1;
  return st;
}

odb_status odb_dsparse_check(const odb_dsparse *A, const char *who)
{
  if (!A->broken) return ODB_OK;
  return ODB_FAIL(ODB_ERR_IO, "%s: an earlier exchange of this distributed matrix failed on rank %d; "
                  "its messages no longer pair with the other ranks' (end the run)", who, A->rank);
}

/* Receives into recv_buf, not into x: x is the caller's, and a failed
   wait may leave a receive open (the header's "Buffers under a
   request"). The copy into x costs 16 bytes a ghost, a few per cent of
   the SpMV's traffic on slabs of planes. */
odb_status odb_dsparse_spmv(odb_dsparse *A, double *x, double *y)
{
  if (A->broken) return odb_dsparse_check(A, "distributed SpMV");
  if (A->gpu) return ODB_FAIL(ODB_ERR_ARG, "distributed SpMV: the matrix is on the GPU (odb_dgpu_spmv_host)");
#ifdef ODB_HAVE_MPI
  MPI_Request *rq = A->reqs;
  int nreq = 0, nrecv = 0;
  odb_status st = ODB_OK;
  if (A->nsend + A->nrecv == 0) goto compute;
  MPI_Comm comm = odb_dist_comm();
  for (int j = 0; j < A->nrecv; j++, nreq++)
    if (MPI_Irecv(A->recv_buf + A->recv_off[j], (int)(A->recv_off[j + 1] - A->recv_off[j]), MPI_DOUBLE,
                  A->recv_rank[j], A->tag, comm, &rq[nreq]) != MPI_SUCCESS)
      { st = ODB_FAIL(ODB_ERR_IO, "MPI_Irecv (distributed SpMV halo) failed"); goto fail; }
  nrecv = nreq;
  for (int j = 0; j < A->nsend; j++, nreq++) {
    double *buf = A->send_buf + A->send_off[j];
    for (long i = A->send_off[j]; i < A->send_off[j + 1]; i++) A->send_buf[i] = x[A->send_idx[i]];
    if (MPI_Isend(buf, (int)(A->send_off[j + 1] - A->send_off[j]), MPI_DOUBLE,
                  A->send_rank[j], A->tag, comm, &rq[nreq]) != MPI_SUCCESS)
      { st = ODB_FAIL(ODB_ERR_IO, "MPI_Isend (distributed SpMV halo) failed"); goto fail; }
  }
  if (A->slab) odb_dslab_spmv(A, x, y, 1);
  if (A->Ai) odb_sparse_spmv(A->Ai, x, y);
  st = odb_dist_waitall(nreq, rq, "MPI_Waitall (distributed SpMV halo)");
  if (st != ODB_OK) goto fail;
  /* a slab reads its ghosts where they arrived */
  if (A->slab) { odb_dslab_spmv(A, x, y, 0); return ODB_OK; }
  memcpy(x + A->nloc, A->recv_buf, (size_t)A->nghost * sizeof *x);
  if (A->Ab) odb_sparse_spmv(A->Ab, x, y + A->nint);
  return ODB_OK;
fail:
  return odb_dsparse_fail(A, st, odb_dsparse_settle(nreq, rq, nrecv, st));
compute:
#endif
  /* one rank, or a slab with no neighbour: every row is interior */
  if (A->slab) { odb_dslab_spmv(A, x, y, 1); odb_dslab_spmv(A, x, y, 0); }
  if (A->Ai) odb_sparse_spmv(A->Ai, x, y);
  return ODB_OK;
}

odb_status odb_dsparse_halo_post(odb_dsparse *A, double *recv, const double *send)
{
  if (A->broken) return odb_dsparse_check(A, "distributed SpMV");
  A->hreq = A->hrecv = 0;
#ifdef ODB_HAVE_MPI
  MPI_Request *rq = A->reqs;
  odb_status st = ODB_OK;
  if (A->nsend + A->nrecv == 0) return ODB_OK;
  MPI_Comm comm = odb_dist_comm();
  for (int j = 0; j < A->nrecv; j++, A->hreq++)
    if (MPI_Irecv(recv + A->recv_off[j], (int)(A->recv_off[j + 1] - A->recv_off[j]), MPI_DOUBLE,
                  A->recv_rank[j], A->tag, comm, &rq[A->hreq]) != MPI_SUCCESS)
      { st = ODB_FAIL(ODB_ERR_IO, "MPI_Irecv (distributed SpMV halo) failed"); goto fail; }
  A->hrecv = A->hreq;
  for (int j = 0; j < A->nsend; j++, A->hreq++)
    if (MPI_Isend(send + A->send_off[j], (int)(A->send_off[j + 1] - A->send_off[j]), MPI_DOUBLE,
                  A->send_rank[j], A->tag, comm, &rq[A->hreq]) != MPI_SUCCESS)
      { st = ODB_FAIL(ODB_ERR_IO, "MPI_Isend (distributed SpMV halo) failed"); goto fail; }
  return ODB_OK;
fail:
  st = odb_dsparse_fail(A, st, odb_dsparse_settle(A->hreq, rq, A->hrecv, st));
  A->hreq = A->hrecv = 0;
  return st;
#else
  (void)recv; (void)send;
  return ODB_OK;
#endif
}

odb_status odb_dsparse_halo_wait(odb_dsparse *A)
{
#ifdef ODB_HAVE_MPI
  int n = A->hreq, nr = A->hrecv;
  A->hreq = A->hrecv = 0;
  if (n == 0) return ODB_OK;
  odb_status st = odb_dist_waitall(n, A->reqs, "MPI_Waitall (distributed SpMV halo)");
  if (st != ODB_OK) return odb_dsparse_fail(A, st, odb_dsparse_settle(n, A->reqs, nr, st));
#else
  (void)A;
#endif
  return ODB_OK;
}

int odb_dsparse_cuda_aware(void)
{
  static int aware = -1;
  if (aware >= 0) return aware;
  aware = 0;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  /* at run time, not MPIX_CUDA_AWARE_SUPPORT: the library that runs may
     be built otherwise than the one this program was compiled against */
  if (odb_dist_active()) aware = MPIX_Query_cuda_support() == 1;
#endif
  const char *e = getenv("ODEBENCH_MPI_CUDA_AWARE");
  if (e && !strcmp(e, "0")) aware = 0;
  return aware;
}

void odb_dsparse_scatter(const odb_dsparse *A, const double *whole, double *loc)
{
  for (long i = 0; i < A->nloc; i++) loc[i] = whole[A->glob[i]];
}

/* Through gather_buf, this rank's block copied in place: the caller's loc
   and whole are never under a request. */
odb_status odb_dsparse_gather(odb_dsparse *A, const double *loc, double *whole)
{
  if (A->broken) return odb_dsparse_check(A, "distributed gather");
  if (!A->gather_buf && !(A->gather_buf = malloc((size_t)(A->n ? A->n : 1) * sizeof *A->gather_buf)))
    return ODB_FAIL(ODB_ERR_NOMEM, "gather of a vector of %ld entries", A->n);
  double *all = A->gather_buf, *mine = all + A->displs[A->rank];
  memcpy(mine, loc, (size_t)A->nloc * sizeof *loc);
  odb_status st = odb_dist_allgatherv(mine, A->nloc, all, A->counts, A->displs,
                                      "MPI_Allgatherv (distributed vector)");
  /* a failed wait of odb_dist.h leaves its request open */
  if (st != ODB_OK) return odb_dsparse_fail(A, st, 0);
  for (long j = 0; j < A->n; j++) whole[A->all_glob[j]] = all[j];
  return ODB_OK;
}

odb_status odb_dsparse_allreduce(odb_dsparse *A, double *v, int op_max, const char *what)
{
  if (A->broken) return odb_dsparse_check(A, what);
  A->red = *v;
  odb_status st = op_max ? odb_dist_allreduce_max(&A->red, 1, what) : odb_dist_allreduce_sum(&A->red, 1, what);
  if (st != ODB_OK) return odb_dsparse_fail(A, st, 0);
  *v = A->red;
  return ODB_OK;
}

double odb_dsparse_min_bytes(const odb_dsparse *A)
{
  double t = 0.0, r, w;
  if (A->slab) return odb_dslab_min_bytes(A);
  if (A->Ai) { odb_sparse_min_bytes(A->Ai, &r, &w); t += r + w; }
  if (A->Ab) { odb_sparse_min_bytes(A->Ab, &r, &w); t += r + w; }
  /* the parts' x terms count their rows; the ghosts arrive once and are
     read once, the sent values are read and packed */
  t += 16.0 * (double)A->nghost + 16.0 * (double)A->send_off[A->nsend];
  return t;
}
