/* dist_halo.h - block distribution of the components over the ranks, the
   exchanges that give each rank the components its f reads, and the error
   norm summed over the ranks (private to dist/ode). */
#ifndef ODB_DIST_HALO_H
#define ODB_DIST_HALO_H

#include <mpi.h>

#include "odb_param.h"
#include "odb_status.h"

struct odb_solver;

/*
** The communication patterns of the distributed variants of [Str12]
** (M. Straubinger's bachelor thesis, drawn on by the PIRK autotuning
** thesis of Korch's group, §10.3):
**  - DIST_ALL (A): every rank receives every other rank's block, one
**    MPI_Iallgatherv (any access pattern).
**  - DIST_SPARSE (S): every rank receives, point to point from each
**    owner, exactly the components its f may read. A problem declares its
**    dependence only by the access distance d (odb_problem.d), so what S
**    receives is [lo - d, hi + d) less its own block; with d = n (STARS)
**    that is everything, sent as one message by each other rank.
**  - DIST_NEIGHBOUR (N): the halo of width d from the two neighbours;
**    needs every block at least d long (then S's messages come only from
**    the neighbours, and N is S with that checked).
**  - DIST_FORWARD (X): the same halos when blocks are shorter than d:
**    data moves only between neighbours, in rounds; in round k a rank
**    receives the part of block rank - k (or rank + k) it and the ranks
**    beyond it need, and passes on in round k + 1 the part the next rank
**    needs (a subset of what it received, since that rank's halo starts
**    further out). Rounds run one after the other.
** Blocks are contiguous and balanced: rank r holds [lo[r], lo[r + 1]),
** the first n mod R ranks one component more. Every rank builds the same
** plan from (n, d, R), so sends and receives match by construction.
** Active ranks (the variants' option `ranks`, the self-adaptive solver of
** the thesis's §10.3 choosing how many processes to use): the blocks may
** cover only the first P <= R ranks; ranks P..R-1 hold the empty block
** [n, n), read nothing, receive and send nothing in an exchange, and take
** part only in the error norm's reduction (adding nothing) and the
** state's gather. A's allgather then runs on a communicator of the P
** active ranks (xcomm), so that no inactive rank relays a block.
** Vectors are full length (n) on every rank and messages go straight
** from and into them at the components' own places: nothing is packed.
*/
typedef enum dist_kind {
  DIST_ALL, DIST_SPARSE, DIST_NEIGHBOUR, DIST_FORWARD
} dist_kind;

/* One message: count components from `at` on, to or from `peer`. */
typedef struct dist_msg {
  int peer;
  int send;        /* 1: send, 0: receive */
  long at, count;
} dist_msg;

typedef struct dist_halo {
  dist_kind kind;
  MPI_Comm comm;
  int rank, size;
  long n, d;
  long *lo;                /* size + 1 block boundaries */
  long a, b;               /* this rank's block [a, b) */
  long ia, ib;             /* its interior: f_j reads only [a, b) for
                              j in [ia, ib) (ia == ib: none) */
  int nrounds;             /* rounds of messages (0: nothing to receive) */
  int *round;              /* nrounds + 1 starts into msg */
  dist_msg *msg;
  int nmsg;
  int *counts, *displs;    /* DIST_ALL: the blocks, for MPI_Iallgatherv */
  MPI_Request *req;        /* room for the largest round */
  int nreq;
  double in, out;          /* doubles received and sent by one exchange */
  const char *what;        /* names the exchange in timeout messages */
  int active;              /* ranks 0..active-1 hold the components */
  MPI_Comm xcomm;          /* A's exchange: comm, or the active ranks'
                              own communicator (MPI_COMM_NULL on an
                              inactive rank), freed with the plan */
} dist_halo;

/* The block boundaries of n components over size ranks into lo[0..size]. */
void dist_blocks(long n, int size, long *lo);
/* The same over the first active ranks (1 <= active <= size); ranks
   active..size-1 get the empty block [n, n). */
void dist_blocks_over(long n, int active, int size, long *lo);

/*
** The option every distributed ODE variant declares (odb_variant.opts):
** `ranks`, the number of active ranks, 0 (the default) for all of the
** run's, else 1..R. R is the run's size, set when the variants register
** (dist_opts_set_size), so the core's check of the options refuses a value
** above it with the range: "variant 'mpi_N': option 'ranks' must be in
** 0..4, got 5".
*/
#define DIST_NOPTS 1
extern odb_param_decl dist_opts[DIST_NOPTS];
void dist_opts_set_size(int size);

/*
** The active ranks of solver s (its variant's option ranks, 0: all) into
** *active, and the layout of s's problem on them (dist_layout_check for
** kind; fam as there): ODB_ERR_UNSUPPORTED "variant 'mpi_N' does not
** apply: <reason>" when it does not fit, as the solver words a variant's
** refusal; ODB_ERR_ARG for a value above the run's size.
*/
odb_status dist_active_ranks(const struct odb_solver *s, dist_kind kind,
                             const char *fam, int *active);

/*
** What the layout of a distributed variant needs of a problem with n
** components and access distance d on the ranks of this run, whatever its
** method: a component on every rank; with halo exchanges (halo 1: halos
** forwarded over several ranks, X; 2: from the two neighbours only, N) a
** limited access distance, and for N a block of at least d on every rank.
** name is the variant's ("mpi_N"), fam its family's prefix ("mpi_" or
** "mpi_pirk_"), which the reasons use to name the variants that apply
** instead. 1 when it applies, else 0 with the reason in why.
*/
int dist_layout_applies(const char *name, const char *fam, int halo,
                        const char *label, long n, long d, char *why,
                        size_t nwhy);
/* The same on the first active of the run's size ranks (the reasons name
   the active ranks when they are fewer than the run's). */
int dist_layout_check(const char *name, const char *fam, int halo,
                      const char *label, long n, long d, int active,
                      int size, char *why, size_t nwhy);
/* The halo argument of dist_layout_check for an exchange of kind: 0 for
   A and S, 1 for X, 2 for N. */
int dist_halo_level(dist_kind kind);

/*
** Builds h for kind over the communicator comm (n components, access
** distance d; d >= n: any component). ODB_ERR_ARG when n is more than
** INT_MAX (MPI counts and displacements are int); ODB_ERR_NOMEM.
*/
odb_status dist_halo_init(dist_halo *h, dist_kind kind, MPI_Comm comm,
                          long n, long d, const char *what);
/* The same plan for rank of size ranks, whatever comm is (MPI_COMM_NULL:
   a plan to inspect, as the tests do; no exchange may run on it). */
odb_status dist_halo_plan(dist_halo *h, dist_kind kind, MPI_Comm comm,
                          int rank, int size, long n, long d,
                          const char *what);
/* The same with the components on the first active ranks only
   (dist_blocks_over); A splits comm into the active ranks' own
   communicator, a collective of comm's ranks. */
odb_status dist_halo_init_active(dist_halo *h, dist_kind kind, MPI_Comm comm,
                                 long n, long d, int active,
                                 const char *what);
odb_status dist_halo_plan_active(dist_halo *h, dist_kind kind, MPI_Comm comm,
                                 int rank, int size, int active, long n,
                                 long d, const char *what);
void dist_halo_free(dist_halo *h);

/*
** An exchange of v (n doubles, this rank's block current) in two halves:
** begin posts the first round, end waits for it and runs the rest (X's
** later rounds). Between the two the caller may read v[a, b) (the
** interior's f) but not write v. After end every component f_j, j in
** [a, b), reads is current.
*/
odb_status dist_halo_begin(dist_halo *h, double *v);
odb_status dist_halo_end(dist_halo *h, double *v);

/* The whole of v on every rank (each rank's block current): an
   in-place allgather, whatever h's kind. */
odb_status dist_halo_gather(dist_halo *h, double *v);

/*
** The weighted error norm of a step over all ranks, the same bits whatever
** the number of ranks: each rank adds the squares of its block's weighted
** errors exactly (dist_norm_add: Shewchuk's non-overlapping partials, the
** algorithm of Python's math.fsum), dist_norm_all gathers every rank's
** partials to every rank, adds them exactly and rounds once (correctly,
** half to even), then sqrt(sum / n). The exact sum does not depend on how
** the components are split, so R ranks take the steps of one process bit
** for bit; a plain sum in rank order would differ from one process in the
** rounding of the R partial sums, which the step-size controller and the
** estimate (a difference of close numbers) magnify to about 1e-10 of h.
** The correctly rounded sum differs from a one-process variant's running
** sum (A's) by that sum's own rounding, n ulps at most.
** Non-finite summands (a non-finite state) make the norm NaN or inf, as a
** running sum would.
*/
#define DIST_NORM_PARTS 48   /* non-overlapping doubles span at most 2098
                                bits: 40 partials */

typedef struct dist_norm {
  int size;
  int np;                  /* partials of this rank's sum */
  double p[DIST_NORM_PARTS + 1];   /* the partials, then the non-finite
                                      summands' sum (gathered with them) */
  long *counts, *displs;   /* DIST_NORM_PARTS + 1 per rank */
  double *all;             /* every rank's p */
} dist_norm;

/* ODB_ERR_NOMEM naming what. */
odb_status dist_norm_init(dist_norm *nm, int size, const char *what);
void dist_norm_free(dist_norm *nm);
/* Starts this rank's sum of a step. */
void dist_norm_reset(dist_norm *nm);
/* Adds x to this rank's sum, exactly. */
void dist_norm_add(dist_norm *nm, double x);
/*
** sqrt(sum / n) of every rank's summands into *err, on every rank. A
** collective: every rank calls it once per step, in the same order.
*/
odb_status dist_norm_all(dist_norm *nm, long n, double *err);

#endif
