/* odb_dist.h - the run across ranks: rank, size, communicator, collectives
   with a timeout, and the abort that ends every rank.

   dist/ is the distributed-memory layer (docs/mpi.md): above core/ and gpu/,
   below lua/ and cli/. A build with MPI (meson option mpi, Open MPI found)
   compiles odb_dist_mpi.c; a build without it compiles only
   odb_dist_one.c, where the run is rank 0 of 1 and every collective is a
   copy. The same functions answer in both builds, so callers need no
   #ifdef except for odb_dist_comm and odb_dist_waitall below.

   The distributed variants follow the thesis on autotuning PIRK solvers
   (Korch's group, §10.3): every rank holds a block of the state, the
   stage vectors are exchanged with allgatherv and the error norm is an
   allreduce. A rank that never reaches a collective would hang the others
   for ever; every collective here therefore waits at most
   odb_dist_timeout() seconds and then fails with a message that names the
   call, instead of hanging. */
#ifndef ODB_DIST_H
#define ODB_DIST_H

#include <stddef.h>

#include "odb_config.h"
#include "odb_status.h"

/* MPI_Init_thread(FUNNELED) when built with MPI and started by mpirun
   (OMPI_COMM_WORLD_SIZE set) or when ODEBENCH_MPI=1; otherwise one rank.
   Reads ODEBENCH_MPI_TIMEOUT (seconds, > 0; default 60) and fails with
   ODB_ERR_ARG when it is not a positive number. Safe to call once per
   process; a second call returns ODB_OK and changes nothing. */
odb_status odb_dist_init(int *argc, char ***argv);
/* MPI_Finalize when odb_dist_init started MPI; otherwise nothing. Safe to
   call more than once (every exit path of the program calls it). */
void odb_dist_finalize(void);
/* fn runs in odb_dist_finalize just before MPI_Finalize (a library that
   runs on MPI and must end first: the PETSc peer's PetscFinalize). At most
   4; a repeated fn is kept once. ODB_ERR_NOMEM when full. */
odb_status odb_dist_at_finalize(void (*fn)(void));
int  odb_dist_rank(void);          /* 0 without MPI */
int  odb_dist_size(void);          /* 1 without MPI */
/* This rank among the ranks of its host (MPI_COMM_TYPE_SHARED), and how
   many they are; 0 and 1 without MPI. The local rank picks the GPU a rank
   drives (odb_kernels_register_on). */
int  odb_dist_local_rank(void);
int  odb_dist_local_size(void);
int  odb_dist_active(void);        /* 1 when MPI is initialized (even with 1 rank) */
double odb_dist_timeout(void);     /* seconds a collective may wait: ODEBENCH_MPI_TIMEOUT, default 60 */

/* Collectives over all ranks, each with the timeout; `what` names the call
   in errors ("MPI_Allreduce (error norm)"). On timeout: ODB_ERR_IO whose
   message names the collective, the timeout and, where it can be known,
   the ranks that did not arrive (those that have already left the run).
   MPI works on a staging copy of the caller's data, so after any failure
   the caller's buffers are its own again (a stack variable, an array it
   frees at once). */
odb_status odb_dist_allreduce_sum(double *v, int count, const char *what);
odb_status odb_dist_allreduce_max(double *v, int count, const char *what);
odb_status odb_dist_bcast(void *buf, size_t bytes, int root, const char *what);
/* Every rank gives nmine values; all receives counts[r] values of rank r at
   displs[r] (counts and displs have odb_dist_size() entries, the same on
   every rank, and nmine == counts[rank]). */
odb_status odb_dist_allgatherv(const double *mine, long nmine, double *all,
                               const long *counts, const long *displs,
                               const char *what);
/* Waits until every rank has arrived (with the timeout). */
odb_status odb_dist_barrier(const char *what);

/* Seconds this rank has spent waiting for communication to complete since
   MPI started: every wait of odb_dist_waitall (the collectives above and
   the distributed variants' exchanges), not the end of the run
   (odb_dist_done). A caller takes the difference over a stretch of work.
   0 without MPI, where nothing is waited for. */
double odb_dist_wait_seconds(void);

/* Called by a rank that has finished its work (the program, after the
   scenario ended well): tells every other rank so (a collective they wait
   in names this rank as gone), then waits, without the timeout, until
   every rank has finished, so that rank 0 writes its results only when
   no rank failed. A rank that fails instead ends the run (odb_dist_abort)
   and this wait with it. ODB_INTERRUPTED when the stop flag is raised. */
odb_status odb_dist_done(const char *what);
/* 1 when a wait of this file failed (the timeout, the stop flag) and so
   left its requests open: MPI_Finalize's progress may still complete
   them, reading and writing their buffers, so the program then ends MPI
   before it frees the scenario's objects (0 without MPI). */
int odb_dist_requests_open(void);
/* The flag a signal handler raises to stop the run: every wait of this
   file returns ODB_INTERRUPTED ("<what>: interrupted") once *flag != 0,
   instead of waiting for ranks that are stopping too. NULL: none. */
void odb_dist_set_stop_flag(const volatile int *flag);

/* The lowest rank that has ended the run with odb_dist_abort, as far as
   this rank has heard within `wait` seconds; -1 when none (always -1
   without MPI). mpirun stops the other ranks with SIGTERM after an abort,
   just as it does on Ctrl-C: rank 0 asks this before it writes the rows
   of a stopped run, so that a run in which a rank failed leaves none. */
int odb_dist_failed_rank(double wait);

/* Ends every rank: prints "odebench: rank R: <msg>" on stderr once, tells
   the other ranks (odb_dist_failed_rank) and calls MPI_Abort(.., status)
   (exit(status) without MPI). */
void odb_dist_abort(int status, const char *msg)
  __attribute__((noreturn));

#ifdef ODB_HAVE_MPI
#include <mpi.h>
/* MPI_COMM_WORLD while MPI is active (its error handler returns errors
   instead of aborting), MPI_COMM_NULL otherwise. */
MPI_Comm odb_dist_comm(void);
/* Waits for n requests with the timeout (MPI_Testall polling), naming
   `what` on timeout. The requests are left pending on timeout: the caller
   is expected to abort. */
odb_status odb_dist_waitall(int n, MPI_Request *reqs, const char *what);
#endif

#endif
