/* odb_dist_one.h - the one-rank run (odb_dist_one.c), and the checks and
   settings every run shares. Internal to dist/rt: odb_dist_mpi.c answers
   with these functions while MPI is not active (a build with MPI started
   without mpirun and without ODEBENCH_MPI=1). */
#ifndef ODB_DIST_ONE_H
#define ODB_DIST_ONE_H

#include <stddef.h>

#include "odb_status.h"

/* ODEBENCH_MPI_TIMEOUT parsed into *out (default 60 when unset or empty);
   ODB_ERR_ARG naming the variable when it is not a number in (0, 1e6]. */
odb_status odb_dist_read_timeout(double *out);
/* The label of a collective in messages: `what`, or "collective" when
   NULL. */
const char *odb_dist_what(const char *what);

/* Argument checks shared by both runs, so that a call wrong on one rank is
   wrong on every build (size = number of ranks). */
odb_status odb_dist_check_reduce(const double *v, int count, const char *what);
odb_status odb_dist_check_bcast(const void *buf, size_t bytes, int root,
                                int size, const char *what);
odb_status odb_dist_check_gather(const double *mine, long nmine, double *all,
                                 const long *counts, const long *displs,
                                 int rank, int size, const char *what);

/* One rank: reductions leave v as it is, a broadcast from rank 0 leaves
   buf as it is, allgatherv copies mine to all + displs[0]. */
odb_status odb_dist_one_allgatherv(const double *mine, long nmine,
                                   double *all, const long *counts,
                                   const long *displs, const char *what);
/* Prints "odebench: rank R: <msg>" on stderr (one line, flushed). */
void odb_dist_say(int rank, const char *msg);

#endif
