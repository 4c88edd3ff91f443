/* par.h - parallel loops of the sparse assembly and conversions (private to
** core/sparse): [0, n) split into contiguous parts run on a temporary team
** of threads, one part per member. */
#ifndef ODB_SPARSE_PAR_H
#define ODB_SPARSE_PAR_H

/* Work on part q of parts: items [lo, hi) (odb_team_range's split). */
typedef void (*odb_sparse_part_fn)(void *arg, int q, int parts, long lo, long hi);

/* Parts for n items: the online cores (ODEBENCH_SPARSE_THREADS overrides),
** at most 64 and at most one per min_per items, at least 1. */
int odb_sparse_par_parts(long n, long min_per);
/* Runs fn on parts parts of [0, n) at once (serially when a team cannot
** be started); the parts of two calls with the same n and parts match. */
void odb_sparse_par_for(long n, int parts, odb_sparse_part_fn fn, void *arg);

struct odb_sparse;
/* y = A x (formats.c's parts) over the threads of a temporary team. */
void odb_sparse_spmv_par(const struct odb_sparse *A, const double *x, double *y);

#endif
