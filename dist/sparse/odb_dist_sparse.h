/* odb_dist_sparse.h - sparse matrices split by rows over the ranks, their
** SpMV with the halo exchange overlapped, and the Krylov solvers on them
** (docs/mpi.md, "Distributed matrices and Krylov solvers").
**
** The matrices are those of core/sparse: the generalized hepta-diagonal GH
** of M. A. Al-Mouhamed and A. H. Khan, "SpMV and BiCG-Stab optimization
** for a class of hepta-diagonal-sparse matrices on GPU" (J. Supercomputing,
** 2017), and any square matrix read from a Matrix Market file.
**
** Every rank runs the same scenario, so every rank builds (or reads) the
** whole matrix in CSR, keeps its own rows and derives the communication
** plan of both directions from the whole pattern: no handshake is needed
** and every rank's plan agrees with its neighbours' by construction. The
** whole CSR is freed once the rank's part is made.
**
** A rank's rows: an owner for every row (odb_dsparse_owner_*), the rank's
** own rows in "local" order: first its interior rows (every column they
** read is the rank's own), then its boundary rows (they read at least one
** value of another rank), each group in ascending global order. Vectors on
** a rank are in that order, length nloc, with room after them for the
** nghost values other ranks send (the ghosts, ordered by owner rank and
** then by global index, so that each neighbour's message lands in one
** contiguous piece with no unpacking). On one rank every row is interior
** and the order is the global one.
**
** Storage: the interior and the boundary rows are each a core odb_sparse
** with columns in local numbering (0..nloc + nghost). The core's CSR, ELL
** and HYB SpMV read x only where their columns point, so they take these
** rectangular parts as they are; BSR and DIA address x by row (a block
** column, a diagonal offset) and are offered on one rank only, where the
** part is the whole matrix. Bdia addresses x by grid cell: on several
** ranks it needs slabs of whole planes (ODB_DSPLIT_PLANES), keeps the own
** rows in the slab's grid order and the ghosts in the receive buffer
** ("Bdia on slabs" below). Any other matrix whose vectors must share such a
** slab's order (A^T for QMR) is made in grid order too
** (odb_dsparse_create_ordered). This header names no MPI
** type: the seam for GPU ranks is the two parts (device copies of an
** odb_sparse, gpu/sparse) and the pack and unpack of the plan.
**
** Buffers under a request: every buffer a pending MPI request may still
** read or write belongs to the matrix (the halo's receive and send
** buffers, the gather's and the reductions' buffers), never to the
** caller, whose vectors are freed at will (Lua's collector frees them at
** the latest when the state closes, before MPI_Finalize). A wait that
** fails (the timeout of odb_dist.h, a stop signal, an MPI error) leaves
** requests open; the failing call then cancels its receives that no
** message has matched yet and polls the rest for a moment
** (odb_dsparse_settle). What still does not complete keeps its buffers
** for the life of the process: the matrix is marked stuck and
** odb_dsparse_free does not free them, so that MPI_Finalize's progress,
** which may still deliver a message into them, writes live memory. A
** matrix whose exchange failed is broken: its messages no longer pair
** with its neighbours' (a cancelled receive leaves the neighbour's send
** waiting), so every later SpMV, solve and gather on it is refused.
*/
#ifndef ODB_DIST_SPARSE_H
#define ODB_DIST_SPARSE_H

#include <stdint.h>
#include "odb_sparse.h"

/* How rows are given to ranks. */
typedef enum odb_dsparse_split {
  ODB_DSPLIT_ROWS = 0,   /* contiguous rows, balanced by nonzeros */
  ODB_DSPLIT_PLANES      /* a GH grid: slabs of whole planes (index i) */
} odb_dsparse_split;

typedef struct odb_dsparse {
  long n;                /* global order */
  long nnz;              /* global nonzeros */
  int rank, size;
  odb_sparse_format fmt;
  odb_dsparse_split split;
  int tag;               /* message tag of this matrix's exchanges */
  long nloc, nint;       /* own rows; the first nint are interior */
  long nghost;
  int64_t *glob;         /* nloc: global index of local row i */
  int64_t *ghost;        /* nghost: global index of ghost g (at nloc + g) */
  odb_sparse *Ai, *Ab;   /* interior and boundary rows; NULL when empty */
  long lnnz;             /* nonzeros of the rank's rows */
  /* the plan: nsend ranks get values of ours, nrecv send us theirs */
  int nsend, nrecv;
  int *send_rank, *recv_rank;
  long *send_off, *recv_off;   /* nsend + 1, nrecv + 1 */
  int32_t *send_idx;     /* send_off[nsend] local indices, packed in order */
  double *send_buf;
  double *recv_buf;      /* nghost: the halo lands here, then goes to x */
  void *reqs;            /* nsend + nrecv MPI requests (MPI builds) */
  int hreq, hrecv;       /* requests odb_dsparse_halo_post left open, the
                            first hrecv of them receives */
  double *gather_buf;    /* n: the gather's buffer, made at its first use */
  double red;            /* odb_dsparse_allreduce's value under its request */
  int broken;            /* an exchange or reduction failed: refused since */
  int stuck;             /* requests still open: their buffers are kept */
  /* the gather of a whole vector: counts and displs by rank (n in all)
     and the global index of each gathered entry */
  long *counts, *displs;
  int64_t *all_glob;     /* n */
  struct odb_dslab *slab;  /* Bdia on several ranks: the rank's slab of
                            planes (odb_dist_bdia.c); Ai and Ab NULL */
  struct odb_dgpu *gpu;  /* a GPU rank's device side (odb_dist_gpu.h); NULL
                            on a CPU rank */
  void (*gpu_free)(struct odb_dsparse *);   /* frees it (set with it) */
} odb_dsparse;

/* The owner of every row (own[n]) for ROWS: contiguous, rank q from the
   first row r with rowptr[r] * size >= q * nnz (balanced by nonzeros; a
   rank may get none when n < size). */
void odb_dsparse_owner_rows(const odb_sparse *csr, int size, int *own);
/* For PLANES on grid g: plane i (cells j + J h + J H i, k rows each) to
   rank q when it lies in q's slab (the I planes split as evenly as
   blocks of the state: the first I mod size ranks one more); well w goes
   with the rank that holds its plane i_w (a vertical well's J cells all
   lie in that plane), so a well is never split from its cells. */
void odb_dsparse_owner_planes(const odb_reservoir *g, int size, int *own);

/* Empties, in place, every row of csr that rank `rank` needs not hold for
   odb_dsparse_create_ordered's partial: it keeps its own rows (own[r] ==
   rank) and the rows of other ranks that read one of its values (a column
   it owns), and gives the rest back to the allocator: a file's matrix,
   which every rank reads whole, is cut to about the rank's share before
   its transpose, parts and plan are made from it. */
void odb_dsparse_trim(odb_sparse *csr, const int *own, int rank);

/* Rank `rank` of `size`'s part of the global CSR matrix csr (ascending
   columns) with row owners own, in format f (ell_width for HYB, <= 0
   automatic). grid: the matrix's grid, for Bdia on one rank (NULL:
   Bdia refused). tag: the exchanges' MPI tag. also (may be NULL): a
   second matrix of the same order whose vectors must share this one's
   local order (A^T for QMR): a row is interior only when it is interior
   in both, so that A and A^T made with each other as `also` order their
   rows alike. */
odb_status odb_dsparse_create(const odb_sparse *csr, const odb_sparse *also,
                              const int *own, int rank,
                              int size, odb_sparse_format f, int ell_width,
                              const odb_reservoir *grid, odb_dsparse_split split,
                              int tag, odb_dsparse **out);
/* odb_dsparse_create with grid_order 1 on several ranks: the own rows in
   ascending global order (a slab's grid order, that of a Bdia on slabs),
   every row of a CSR, ELL or HYB part in the boundary part (nint 0: its
   SpMV waits for the ghosts before it computes). Bdia on several ranks
   is in grid order whatever grid_order says; grid_order 0 is
   odb_dsparse_create. partial 1 (a collective): csr (and also) need hold
   whole only the rows of this rank and the rows of other ranks that read
   its values, every other row empty or not (a rank's planes and their
   neighbours, odb_reservoir_csr_planes); the ranks' row orders and the
   nonzero count then come from the ranks (Bdia on slabs: csr must then
   be the grid's own matrix; the slab is built from the grid). */
odb_status odb_dsparse_create_ordered(const odb_sparse *csr, const odb_sparse *also,
                                      const int *own, int rank, int size, odb_sparse_format f,
                                      int ell_width, const odb_reservoir *grid,
                                      odb_dsparse_split split, int tag, int grid_order,
                                      int partial, odb_dsparse **out);
void odb_dsparse_free(odb_dsparse *D);

/* y = A x. x has nloc + nghost entries (its ghosts are overwritten), y
   nloc. Receives posted, own values sent, interior rows computed, then
   the boundary rows once the ghosts have arrived (with the timeout of
   odb_dist.h). A CPU rank's: on a GPU rank (A->gpu) it is refused, and
   odb_dgpu_spmv_host (odb_dist_gpu.h) takes host vectors. A collective:
   every rank calls it. */
odb_status odb_dsparse_spmv(odb_dsparse *A, double *x, double *y);
/* The exchange of an SpMV in two halves, for the GPU ranks: post posts
   the receives into recv (nghost values, by sender as recv_off says) and
   sends send (send_off[nsend] values, packed in send_idx's order); wait
   waits for them (the timeout of odb_dist.h). recv and send are the
   matrix's host buffers or, with CUDA-aware MPI, its device buffers:
   either way they belong to the matrix ("Buffers under a request"). A
   failure marks A broken, as odb_dsparse_spmv's. */
odb_status odb_dsparse_halo_post(odb_dsparse *A, double *recv, const double *send);
odb_status odb_dsparse_halo_wait(odb_dsparse *A);
/* 1 when the MPI library takes device pointers (Open MPI's
   MPIX_Query_cuda_support() from <mpi-ext.h>, asked once, at run time:
   the library that runs is the one that counts); 0 without MPI, without
   the extension, or with ODEBENCH_MPI_CUDA_AWARE=0 in the environment
   (host buffers where the library would take device ones). */
int odb_dsparse_cuda_aware(void);
/* The rank's entries of a whole vector: loc[i] = whole[glob[i]]. */
void odb_dsparse_scatter(const odb_dsparse *A, const double *whole, double *loc);
/* The whole vector (n entries) on every rank from each rank's nloc
   entries loc (an allgatherv through A's gather buffer). A collective. */
odb_status odb_dsparse_gather(odb_dsparse *A, const double *loc, double *whole);
/* *v := the maximum (op_max 1) or the sum (0) of *v over the ranks,
   through A's own buffer (a collective; `what` names it in errors). */
odb_status odb_dsparse_allreduce(odb_dsparse *A, double *v, int op_max, const char *what);

/* After a failed wait: n MPI requests (MPI_Request *reqs) of an exchange
   or a reduction, the first nrecv of them receives: those that no
   message has matched are cancelled (sends and collectives' requests
   are not: Open MPI's ob1 does not cancel a send, MPI no collective).
   Then polls them, without the stop flag, for at most 0.1 s (the
   timeout of odb_dist.h if shorter; once only when why, the failure, is
   ODB_INTERRUPTED: mpirun kills a stopped rank that lingers): 1 when every one completed, 0 when
   some are still open and their buffers must outlive the process's MPI.
   Leaves the error message as it is. 1 without MPI. */
int odb_dsparse_settle(int n, void *reqs, int nrecv, odb_status why);
/* ODB_OK, or when A is broken ODB_ERR_IO "<who>: an earlier exchange of
   this distributed matrix failed on rank R; its messages no longer pair
   with the other ranks' (end the run)". */
odb_status odb_dsparse_check(const odb_dsparse *A, const char *who);
/* Marks A broken after a failed exchange or reduction: stuck (and its
   buffers kept) unless settled is 1. Returns st. */
odb_status odb_dsparse_fail(odb_dsparse *A, odb_status st, int settled);

/* Bytes an SpMV moves on this rank at least: its parts' floors
   (odb_sparse_min_bytes: matrix, x once, y once), the ghosts written on
   arrival and the values packed to be sent. */
double odb_dsparse_min_bytes(const odb_dsparse *A);

/* {====== Bdia on slabs of GH planes (odb_dist_bdia.c)
**
** Bdia on several ranks: a rank's part in the Bdia storage of M. A.
** Al-Mouhamed and A. H. Khan (sections 6.1-6.2; docs/mpi.md, "Bdia on
** slabs of planes"). Bdia addresses x by grid cell, so a rank keeps its
** rows in the grid order of its slab (its cells, then its wells:
** ascending global order), not in the interior-then-boundary order of the
** other formats. Its ghosts are the two windows of columns that its
** blocks reach below and above the slab (one plane each way, and for GH-h
** the half cell more that a biased block reaches), every column of them,
** truncated blocks included: the Bdia loop reads them as 0 * x. They
** arrive, ordered by owner rank and global index as every plan's ghosts,
** in the matrix's receive buffer, below then above, and the SpMV reads
** them there (odb_bdia_spmv_slab's three pieces): neither the own values
** nor the ghosts are copied into x. A Krylov vector's ghost room (nloc +
** nghost) is so left unused. The slab itself (struct odb_dslab) is
** odb_dist_bdia.c's. */

/* The exchange buffers of D's plan, once nsend and nrecv are known: ns
   send indices and values, ng received values, the requests (for the
   slab's plan too). ODB_ERR_NOMEM; what was made is freed with D. */
odb_status odb_dsparse_plan_buffers(odb_dsparse *D, long ns, long ng);
/* Fills D (allocated, its n, nnz, rank, size, fmt, split and tag set)
   as rank D->rank of D->size's slab of the GH matrix csr on grid g,
   split by own (odb_dsparse_owner_planes). Refuses, naming the format
   and the ranks, a split that is not whole planes or a well away from
   its cells' rank. from_grid 1: csr is the grid's own matrix (whole in
   this rank's rows at least), and the slab's values are built from the
   grid for its cells only (odb_reservoir_bdia_cells), with no Bdia of
   the whole order; 0: converted from csr, which may be any matrix on
   the grid's structure (a file's). */
odb_status odb_dslab_create(const odb_sparse *csr, const int *own, const odb_reservoir *g,
                            int from_grid, odb_dsparse *D);
void odb_dslab_free(struct odb_dslab *s);
/* y = A x on the slab's cells that read no ghost and its wells (interior
   1), or on its two boundary groups of cells with the ghosts in
   A->recv_buf (interior 0). */
void odb_dslab_spmv(const odb_dsparse *A, const double *x, double *y, int interior);
/* What a GPU rank's slab SpMV needs of A's slab (odb_dist_gpu.cu): its
   Bdia, its first cell in the grid and its cells, the ghosts below (the
   first nlo of the receive buffer), the blo cells at its low end and the
   bhi at its high end that read ghosts, and its wells. */
typedef struct odb_dslab_geo {
  const odb_sparse *B;
  long first, ncell, nlo, blo, bhi;
  int nwl;
} odb_dslab_geo;
void odb_dslab_geometry(const odb_dsparse *A, odb_dslab_geo *g);
/* Bytes of the slab's Bdia, and the fewest an SpMV moves on this rank
   (odb_dsparse_min_bytes's for a slab). */
double odb_dslab_bytes(const odb_dsparse *A);
double odb_dslab_min_bytes(const odb_dsparse *A);

/* }====== */

/* {====== Krylov (odb_dist_krylov.c) */

typedef enum odb_dkrylov_method {
  ODB_DKRY_BICGSTAB = 0, ODB_DKRY_QMR, ODB_DKRY_PBICGSTAB
} odb_dkrylov_method;
const char *odb_dkrylov_method_name(odb_dkrylov_method m);

typedef struct odb_dkrylov_opts {
  odb_krylov_opts k;     /* tol, maxit, stagnation window (0: defaults) */
  int replace;           /* pbicgstab: residual replacement every this
                            many iterations (0: none) */
  int persistent;        /* bicgstab on GPU ranks: the whole solve in one
                            kernel a rank (odb_dist_krylov_gpu.cu); 0: the
                            fused kernels or the host's loop */
} odb_dkrylov_opts;

/* Solves A x = b. b and x are the rank's nloc entries (x the start, then
   the solution). QMR needs At, A's transpose split by the same owners
   (any format that A has); NULL otherwise. The result as
   odb_krylov_solve's: the same state machine (odb_krylov_state.h), the
   same outcome, messages and history; relres_true recomputed with a
   distributed SpMV. seconds: this rank's wall time of the iterations.
   A collective. */
odb_status odb_dkrylov_solve(odb_dsparse *A, odb_dsparse *At,
                             odb_dkrylov_method m, const double *b, double *x,
                             const odb_dkrylov_opts *o, odb_krylov_result *res,
                             double *seconds);

/* }====== */

#endif
