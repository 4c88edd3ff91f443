/* odb_dist_red.h - the fixed-order reductions of the distributed Krylov
** solvers (odb_dist_krylov.c), shared with their GPU ranks
** (odb_dist_krylov_gpu.cu). Not a public header.
**
** A group of m <= ODB_DRED_MAX dot products: each rank puts its partial
** sums in odb_dred_loc, the partial sums of all ranks are gathered to
** every rank (one allgather, MPI_Iallgather where MPI runs) and added in
** rank order from 0, so every rank gets the same bits whatever the timing
** and one rank gets its own sums. Names no MPI type.
*/
#ifndef ODB_DIST_RED_H
#define ODB_DIST_RED_H

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_status.h"

#define ODB_DRED_MAX 8            /* dots in one reduction at most */

typedef struct odb_dred odb_dred;

/* A reduction block for size ranks; NULL when out of memory. */
odb_dred *odb_dred_new(int size);
/* The rank's partial sums of the next group (ODB_DRED_MAX entries). */
double *odb_dred_loc(odb_dred *d);
/* The m global sums of the group last finished. */
const double *odb_dred_sum(const odb_dred *d);
/* Starts the reduction of loc[0..m); finish waits for it (the timeout of
   odb_dist.h); run is both. */
odb_status odb_dred_start(odb_dred *d, int m);
odb_status odb_dred_finish(odb_dred *d);
odb_status odb_dred_run(odb_dred *d, int m);
/* Frees d, or after a failed wait (st) keeps it for the life of the
   process when its reduction is still open and does not settle
   (odb_dist_sparse.h, "Buffers under a request"). NULL is fine. */
void odb_dred_release(odb_dred *d, odb_status st);

#ifdef __cplusplus
}
#endif

#endif
