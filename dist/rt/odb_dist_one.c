/* odb_dist_one.c - the run of one rank: rank 0 of 1, collectives that are
   copies, abort that is exit(). A build without MPI has only this file;
   a build with MPI (odb_dist_mpi.c) uses its helpers while MPI is not
   started. The timeout setting and the argument checks live here so that
   both builds refuse the same calls with the same words. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_dist.h"
#include "odb_dist_one.h"

#define DIST_TIMEOUT_DEFAULT 60.0
#define DIST_TIMEOUT_MAX     1e6

odb_status odb_dist_read_timeout(double *out) {
  const char *s = getenv("ODEBENCH_MPI_TIMEOUT");
  char *end;
  double t;
  *out = DIST_TIMEOUT_DEFAULT;
  if (s == NULL || *s == '\0') return ODB_OK;
  errno = 0;
  t = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !isfinite(t) || t <= 0 ||
      t > DIST_TIMEOUT_MAX)
    return ODB_FAIL(ODB_ERR_ARG, "ODEBENCH_MPI_TIMEOUT: expected seconds in "
                    "(0, 1e6], got '%.40s'", s);
  *out = t;
  return ODB_OK;
}

const char *odb_dist_what(const char *what) {
  return what != NULL ? what : "collective";
}

odb_status odb_dist_check_reduce(const double *v, int count, const char *what) {
  if (count < 0)
    return ODB_FAIL(ODB_ERR_ARG, "%s: count must be >= 0, got %d",
                    odb_dist_what(what), count);
  if (count > 0 && v == NULL)
    return ODB_FAIL(ODB_ERR_ARG, "%s: no values for a count of %d",
                    odb_dist_what(what), count);
  return ODB_OK;
}

odb_status odb_dist_check_bcast(const void *buf, size_t bytes, int root,
                                int size, const char *what) {
  if (root < 0 || root >= size)
    return ODB_FAIL(ODB_ERR_ARG, "%s: root must be a rank in [0, %d], got %d",
                    odb_dist_what(what), size - 1, root);
  if (bytes > 0 && buf == NULL)
    return ODB_FAIL(ODB_ERR_ARG, "%s: no buffer for %zu bytes",
                    odb_dist_what(what), bytes);
  return ODB_OK;
}

/* Assumes counts and displs hold `size` entries (the caller's contract;
   they cannot be checked). Each block must lie inside [0, LONG_MAX). */
odb_status odb_dist_check_gather(const double *mine, long nmine, double *all,
                                 const long *counts, const long *displs,
                                 int rank, int size, const char *what) {
  int r;
  if (counts == NULL || displs == NULL)
    return ODB_FAIL(ODB_ERR_ARG, "%s: counts and displs are required",
                    odb_dist_what(what));
  for (r = 0; r < size; r++) {
    if (counts[r] < 0 || displs[r] < 0 || counts[r] > INT_MAX ||
        displs[r] > INT_MAX)
      return ODB_FAIL(ODB_ERR_ARG, "%s: rank %d's block (count %ld at %ld) "
                      "must have count and offset in [0, %d]",
                      odb_dist_what(what), r, counts[r], displs[r], INT_MAX);
    if (counts[r] > 0 && all == NULL)
      return ODB_FAIL(ODB_ERR_ARG, "%s: no receive buffer",
                      odb_dist_what(what));
  }
  if (nmine != counts[rank])
    return ODB_FAIL(ODB_ERR_ARG, "%s: rank %d gives %ld values but counts[%d] "
                    "is %ld", odb_dist_what(what), rank, nmine, rank,
                    counts[rank]);
  if (nmine > 0 && mine == NULL)
    return ODB_FAIL(ODB_ERR_ARG, "%s: no values to send", odb_dist_what(what));
  return ODB_OK;
}

odb_status odb_dist_one_allgatherv(const double *mine, long nmine,
                                   double *all, const long *counts,
                                   const long *displs, const char *what) {
  ODB_TRY(odb_dist_check_gather(mine, nmine, all, counts, displs, 0, 1, what));
  /* memmove: a caller may gather in place (mine inside all). */
  if (nmine > 0 && all + displs[0] != mine)
    memmove(all + displs[0], mine, (size_t)nmine * sizeof *mine);
  return ODB_OK;
}

void odb_dist_say(int rank, const char *msg) {
  fflush(stdout);
  fprintf(stderr, "odebench: rank %d: %s\n", rank,
          msg != NULL && *msg != '\0' ? msg : "aborted");
  fflush(stderr);
}

#ifndef ODB_HAVE_MPI
/* The public functions of a build without MPI. */
static double one_timeout = DIST_TIMEOUT_DEFAULT;

odb_status odb_dist_init(int *argc, char ***argv) {
  (void)argc; (void)argv;
  return odb_dist_read_timeout(&one_timeout);
}

void odb_dist_finalize(void) {}
odb_status odb_dist_at_finalize(void (*fn)(void)) {
  (void)fn;   /* no MPI: nothing to end before it */
  return ODB_OK;
}
int odb_dist_rank(void) { return 0; }
int odb_dist_size(void) { return 1; }
int odb_dist_local_rank(void) { return 0; }
int odb_dist_local_size(void) { return 1; }
int odb_dist_active(void) { return 0; }
int odb_dist_requests_open(void) { return 0; }
double odb_dist_timeout(void) { return one_timeout; }

odb_status odb_dist_allreduce_sum(double *v, int count, const char *what) {
  return odb_dist_check_reduce(v, count, what);
}

odb_status odb_dist_allreduce_max(double *v, int count, const char *what) {
  return odb_dist_check_reduce(v, count, what);
}

odb_status odb_dist_bcast(void *buf, size_t bytes, int root, const char *what) {
  return odb_dist_check_bcast(buf, bytes, root, 1, what);
}

odb_status odb_dist_allgatherv(const double *mine, long nmine, double *all,
                               const long *counts, const long *displs,
                               const char *what) {
  return odb_dist_one_allgatherv(mine, nmine, all, counts, displs, what);
}

double odb_dist_wait_seconds(void) { return 0; }

odb_status odb_dist_barrier(const char *what) {
  (void)what;
  return ODB_OK;
}

odb_status odb_dist_done(const char *what) {
  (void)what;
  return ODB_OK;
}

void odb_dist_set_stop_flag(const volatile int *flag) { (void)flag; }

int odb_dist_failed_rank(double wait) {
  (void)wait;
  return -1;
}

void odb_dist_abort(int status, const char *msg) {
  odb_dist_say(0, msg);
  exit(status);
}
#endif
