/* odb_dist_mpi.c - the run across ranks with MPI (Open MPI 4.x): start and
   end, rank and size, collectives that give up after a timeout, and the
   abort that ends every rank.

   Assumptions:
   - Only the main thread calls MPI (MPI_THREAD_FUNNELED): the thread team
     of core/rt computes between collectives and never communicates.
   - Every collective is non-blocking (MPI_Iallreduce, MPI_Ibcast,
     MPI_Iallgatherv, MPI_Ibarrier) and waited for by polling
     (odb_dist_waitall), so a rank that never arrives costs the others
     odb_dist_timeout() seconds and a message, not a hang. After a timeout
     the request is still pending: the caller ends the run
     (odb_dist_abort), which is the only safe continuation in MPI.
   - Which ranks did not arrive cannot be known in general (a rank may be
     computing). What can be known is which ranks have left the run:
     odb_dist_finalize sends a message on a private communicator to every
     other rank before MPI_Finalize, and a timed-out collective lists the
     ranks whose message has come.
   - MPI errors return (MPI_ERRORS_RETURN) and become ODB_ERR_IO with MPI's
     own text.
   - A collective's data goes through a staging buffer of this file, never
     the caller's memory: a stop signal or the timeout leaves its request
     open, and MPI_Finalize's progress may still complete it, writing
     into that buffer. A buffer whose request is left open is kept for
     the life of the process (stage_done), so callers may pass stack
     variables and free their arrays at will. The copies cost what the
     collective moves; none of these collectives is on a hot path (the
     halo exchanges post their own requests into buffers they own). */
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "odb_clock.h"
#include "odb_dist.h"
#include "odb_dist_one.h"

#define DIST_TAG_LEFT 7101       /* "this rank has left the run" */
#define DIST_TAG_FAILED 7102     /* "this rank ends the run (abort)" */
#define DIST_LIST_MAX 512        /* characters of a list of ranks */
#define DIST_BCAST_CHUNK (1 << 30)

static int dist_on;              /* odb_dist_init started MPI */
static int dist_done;            /* odb_dist_finalize ran */
static int dist_told;            /* the leave messages are sent */
static const volatile int *dist_stop;       /* odb_dist_set_stop_flag */
static int dist_rank, dist_size = 1;
static int dist_local_rank, dist_local_size = 1;
static double dist_timeout = 60.0;
static MPI_Comm dist_ctl = MPI_COMM_NULL;   /* leave messages only */
static unsigned char *dist_left;            /* dist_size flags */
static double dist_waited;                  /* odb_dist_wait_seconds */
static int dist_open;            /* a failed wait left requests open */

/* Turns an MPI error code into ODB_ERR_IO naming the call. */
static odb_status mpi_fail(int rc, const char *what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  return ODB_FAIL(ODB_ERR_IO, "%s: MPI error %d: %s", odb_dist_what(what), rc,
                  len > 0 ? text : "(no text)");
}

/* ODEBENCH_MPI: unset, "", "0" or "1". */
static odb_status read_switch(int *on) {
  const char *s = getenv("ODEBENCH_MPI");
  *on = 0;
  if (s == NULL || *s == '\0' || strcmp(s, "0") == 0) return ODB_OK;
  if (strcmp(s, "1") == 0) { *on = 1; return ODB_OK; }
  return ODB_FAIL(ODB_ERR_ARG, "ODEBENCH_MPI: expected 0 or 1, got '%.40s'", s);
}

odb_status odb_dist_init(int *argc, char ***argv) {
  int want, inited = 0, provided = 0, rc;
  if (dist_on || dist_done) return ODB_OK;
  ODB_TRY(odb_dist_read_timeout(&dist_timeout));
  ODB_TRY(read_switch(&want));
  if (getenv("OMPI_COMM_WORLD_SIZE") != NULL) want = 1;
  if (!want) return ODB_OK;
  MPI_Initialized(&inited);
  if (!inited) {
    rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Init_thread");
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "MPI_Init_thread: this MPI gives "
                      "thread level %d, odebench needs MPI_THREAD_FUNNELED",
                      provided);
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &dist_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &dist_size);
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &dist_ctl);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_dup");
  {  /* the ranks of this host (shared memory), for the GPU a rank takes */
    MPI_Comm node;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, dist_rank,
                             MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_split_type");
    MPI_Comm_rank(node, &dist_local_rank);
    MPI_Comm_size(node, &dist_local_size);
    MPI_Comm_free(&node);
  }
  dist_left = calloc((size_t)dist_size, 1);
  if (dist_left == NULL)
    return ODB_FAIL(ODB_ERR_NOMEM, "MPI: %d flags of ranks", dist_size);
  dist_on = 1;
  return ODB_OK;
}

static odb_status wait_for(int n, MPI_Request *reqs, double limit,
                           const char *what);

/* Tells every other rank, once, that this one has left the run: zero-byte
   sends on the private communicator, complete locally (eager). */
static void tell_left(void) {
  MPI_Request *reqs;
  int r, n = 0;
  if (dist_told) return;
  dist_told = 1;
  reqs = malloc(sizeof *reqs * (size_t)dist_size);
  if (reqs == NULL) return;
  for (r = 0; r < dist_size; r++)
    if (r != dist_rank &&
        MPI_Isend(NULL, 0, MPI_BYTE, r, DIST_TAG_LEFT, dist_ctl,
                  &reqs[n]) == MPI_SUCCESS)
      n++;
  if (wait_for(n, reqs, dist_timeout, "MPI_Isend (leaving the run)") != ODB_OK)
    odb_clear_error();
  free(reqs);
}

static void (*at_finalize[4])(void);

odb_status odb_dist_at_finalize(void (*fn)(void)) {
  for (int i = 0; i < 4; i++) {
    if (at_finalize[i] == fn) return ODB_OK;
    if (!at_finalize[i]) {
      at_finalize[i] = fn;
      return ODB_OK;
    }
  }
  return ODB_FAIL(ODB_ERR_NOMEM, "odb_dist_at_finalize: 4 functions "
                  "already");
}

void odb_dist_finalize(void) {
  if (!dist_on) return;
  for (int i = 3; i >= 0; i--)   /* the last registered first */
    if (at_finalize[i]) at_finalize[i]();
  tell_left();
  dist_on = 0;
  dist_done = 1;
  free(dist_left);
  dist_left = NULL;
  MPI_Finalize();
}

void odb_dist_set_stop_flag(const volatile int *flag) { dist_stop = flag; }

int odb_dist_rank(void) { return dist_on ? dist_rank : 0; }
int odb_dist_size(void) { return dist_on ? dist_size : 1; }
int odb_dist_local_rank(void) { return dist_on ? dist_local_rank : 0; }
int odb_dist_local_size(void) { return dist_on ? dist_local_size : 1; }
int odb_dist_active(void) { return dist_on; }
int odb_dist_requests_open(void) { return dist_open; }
double odb_dist_timeout(void) { return dist_timeout; }
MPI_Comm odb_dist_comm(void) { return dist_on ? MPI_COMM_WORLD : MPI_COMM_NULL; }

/* Receives the leave messages that have come and writes the ranks that
   have left into buf ("" when none). */
static void ranks_left(char *buf, size_t cap) {
  size_t used = 0;
  int r, flag, w;
  MPI_Status st;
  buf[0] = '\0';
  for (;;) {
    flag = 0;
    if (MPI_Iprobe(MPI_ANY_SOURCE, DIST_TAG_LEFT, dist_ctl, &flag, &st) !=
        MPI_SUCCESS || !flag)
      break;
    MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, DIST_TAG_LEFT, dist_ctl,
             MPI_STATUS_IGNORE);
    dist_left[st.MPI_SOURCE] = 1;
  }
  for (r = 0; r < dist_size; r++) {
    if (!dist_left[r]) continue;
    w = snprintf(buf + used, cap - used, "%s%d", used ? ", " : "", r);
    if (w < 0 || (size_t)w >= cap - used) { buf[used] = '\0'; break; }
    used += (size_t)w;
  }
}

/*
** What a waiter does between two tests, by how long it has waited: spin
** for the first 100 µs (a GPU rank's partner is usually that close: its
** step ends a few µs later, and a sleep costs the whole step's margin,
** nanosleep waking 50-80 µs late with the default timer slack), then
** yield the core until 5 ms (ranks share cores when oversubscribed, and
** a spinning waiter would slow the rank it waits for), then sleep 20 µs
** until 100 ms and 500 µs after that.
*/
static void pause_waited(double waited) {
  struct timespec ts = {0, 0};
  if (waited < 100e-6) return;
  if (waited < 5e-3) {
    sched_yield();
    return;
  }
  ts.tv_nsec = waited < 0.1 ? 20000L : 500000L;
  nanosleep(&ts, NULL);
}

/* Polls n requests until they complete, `limit` seconds pass (timeout
   message) or the stop flag rises (ODB_INTERRUPTED). */
static odb_status wait_for(int n, MPI_Request *reqs, double limit,
                           const char *what) {
  double t0 = odb_clock_now();
  int done = 0, rc;
  char left[DIST_LIST_MAX];
  if (n <= 0) return ODB_OK;
  for (;;) {
    rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, what);
    if (done) return ODB_OK;
    if (dist_stop != NULL && *dist_stop) {
      dist_open = 1;
      return ODB_FAIL(ODB_INTERRUPTED, "%s: interrupted", odb_dist_what(what));
    }
    if (odb_clock_since(t0) > limit) break;
    pause_waited(odb_clock_since(t0));
  }
  dist_open = 1;
  if (!dist_on || dist_left == NULL) left[0] = '\0';
  else ranks_left(left, sizeof left);
  if (left[0] != '\0')
    return ODB_FAIL(ODB_ERR_IO, "%s: timed out after %g s "
                    "(ODEBENCH_MPI_TIMEOUT) on rank %d of %d; rank%s %s "
                    "left the run without calling it", odb_dist_what(what),
                    dist_timeout, dist_rank, dist_size,
                    strchr(left, ',') ? "s" : "", left);
  return ODB_FAIL(ODB_ERR_IO, "%s: timed out after %g s (ODEBENCH_MPI_TIMEOUT) "
                  "on rank %d of %d; not every rank called it",
                  odb_dist_what(what), dist_timeout, dist_rank, dist_size);
}

/* A staging buffer of bytes (at least 1) into *b; ODB_ERR_NOMEM naming
   the call. */
static odb_status stage_new(size_t bytes, const char *what, void **b) {
  *b = malloc(bytes ? bytes : 1);
  if (*b == NULL)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: a staging buffer of %zu bytes",
                    odb_dist_what(what), bytes);
  return ODB_OK;
}

/* The end of a staging buffer's collective: freed when its wait succeeded
   or its request never started (posted 0); kept when a failed wait left
   its request open (MPI may still write it). */
static void stage_done(void *b, odb_status st, int posted) {
  if (st == ODB_OK || !posted) free(b);
}

static odb_status allreduce(double *v, int count, MPI_Op op, const char *what) {
  MPI_Request req;
  double *w;
  odb_status st;
  int rc;
  ODB_TRY(odb_dist_check_reduce(v, count, what));
  if (!dist_on) return ODB_OK;
  ODB_TRY(stage_new(sizeof *w * (size_t)count, what, (void **)&w));
  memcpy(w, v, sizeof *w * (size_t)count);
  rc = MPI_Iallreduce(MPI_IN_PLACE, w, count, MPI_DOUBLE, op, MPI_COMM_WORLD,
                      &req);
  if (rc != MPI_SUCCESS) {
    free(w);
    return mpi_fail(rc, what);
  }
  st = odb_dist_waitall(1, &req, what);
  if (st == ODB_OK) memcpy(v, w, sizeof *w * (size_t)count);
  stage_done(w, st, 1);
  return st;
}

odb_status odb_dist_allreduce_sum(double *v, int count, const char *what) {
  return allreduce(v, count, MPI_SUM, what);
}

odb_status odb_dist_allreduce_max(double *v, int count, const char *what) {
  return allreduce(v, count, MPI_MAX, what);
}

/* Broadcasts in chunks of at most 1 GiB (MPI counts are int), each
   through the staging buffer. */
odb_status odb_dist_bcast(void *buf, size_t bytes, int root, const char *what) {
  MPI_Request req;
  size_t off, n;
  unsigned char *w;
  odb_status st = ODB_OK;
  int rc;
  ODB_TRY(odb_dist_check_bcast(buf, bytes, root, odb_dist_size(), what));
  if (!dist_on) return ODB_OK;
  ODB_TRY(stage_new(bytes < DIST_BCAST_CHUNK ? bytes : DIST_BCAST_CHUNK, what,
                    (void **)&w));
  for (off = 0; off < bytes && st == ODB_OK; off += n) {
    n = bytes - off < DIST_BCAST_CHUNK ? bytes - off : DIST_BCAST_CHUNK;
    if (dist_rank == root) memcpy(w, (char *)buf + off, n);
    rc = MPI_Ibcast(w, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) {
      free(w);
      return mpi_fail(rc, what);
    }
    st = odb_dist_waitall(1, &req, what);
    if (st == ODB_OK && dist_rank != root) memcpy((char *)buf + off, w, n);
  }
  stage_done(w, st, 1);
  return st;
}

odb_status odb_dist_allgatherv(const double *mine, long nmine, double *all,
                               const long *counts, const long *displs,
                               const char *what) {
  MPI_Request req;
  int *ic = NULL, *id = NULL, r, rc, posted = 0;
  double *w = NULL;
  size_t extent = 0;
  odb_status st;
  if (!dist_on)
    return odb_dist_one_allgatherv(mine, nmine, all, counts, displs, what);
  ODB_TRY(odb_dist_check_gather(mine, nmine, all, counts, displs, dist_rank,
                                dist_size, what));
  ic = malloc(sizeof *ic * (size_t)dist_size);
  id = malloc(sizeof *id * (size_t)dist_size);
  if (ic == NULL || id == NULL) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "%s: counts of %d ranks", odb_dist_what(what),
                  dist_size);
    goto fail;
  }
  for (r = 0; r < dist_size; r++) {   /* checked <= INT_MAX above */
    ic[r] = (int)counts[r];
    id[r] = (int)displs[r];
    if ((size_t)(displs[r] + counts[r]) > extent)
      extent = (size_t)(displs[r] + counts[r]);
  }
  /* the staging buffer spans every rank's block; this rank's goes in
     place (MPI forbids aliased send and receive buffers) */
  if ((st = stage_new(sizeof *w * extent, what, (void **)&w)) != ODB_OK)
    goto fail;
  if (nmine > 0) memcpy(w + displs[dist_rank], mine, sizeof *w * (size_t)nmine);
  rc = MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, w, ic, id,
                       MPI_DOUBLE, MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS) {
    st = mpi_fail(rc, what);
    goto fail;
  }
  posted = 1;
  st = odb_dist_waitall(1, &req, what);
  for (r = 0; st == ODB_OK && r < dist_size; r++)
    if (counts[r] > 0)
      memcpy(all + displs[r], w + displs[r], sizeof *w * (size_t)counts[r]);
fail:
  if (w != NULL) stage_done(w, st, posted);
  free(ic);
  free(id);
  return st;
}

/* The time in the wait counts whether it ends well or not: a failed wait
   ends the run, and nobody reads the sum after that. */
odb_status odb_dist_waitall(int n, MPI_Request *reqs, const char *what) {
  double t0 = odb_clock_now();
  odb_status st = wait_for(n, reqs, dist_timeout, what);
  dist_waited += odb_clock_since(t0);
  return st;
}

double odb_dist_wait_seconds(void) { return dist_waited; }

/* The barrier of the finished ranks runs on the private communicator: a
   rank still in the scenario may call a collective on MPI_COMM_WORLD, and
   a barrier there would be matched against it. */
odb_status odb_dist_done(const char *what) {
  MPI_Request req;
  int rc;
  if (!dist_on) return ODB_OK;
  tell_left();
  rc = MPI_Ibarrier(dist_ctl, &req);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, what);
  return wait_for(1, &req, HUGE_VAL, what);
}

odb_status odb_dist_barrier(const char *what) {
  MPI_Request req;
  int rc;
  if (!dist_on) return ODB_OK;
  rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, what);
  return odb_dist_waitall(1, &req, what);
}

int odb_dist_failed_rank(double wait) {
  double t0 = odb_clock_now();
  int flag;
  MPI_Status st;
  if (!dist_on) return -1;
  for (;;) {
    flag = 0;
    if (MPI_Iprobe(MPI_ANY_SOURCE, DIST_TAG_FAILED, dist_ctl, &flag, &st) ==
        MPI_SUCCESS && flag)
      return st.MPI_SOURCE;
    if (odb_clock_since(t0) >= wait) return -1;
    pause_waited(odb_clock_since(t0));
  }
}

/* Prints once (a second call, from a handler of the first, stays quiet),
   tells the other ranks that this one fails (zero-byte eager sends, given
   at most a second), and ends every rank. MPI_Abort makes mpirun end the
   job with `status`. */
void odb_dist_abort(int status, const char *msg) {
  static volatile int said;
  MPI_Request *reqs;
  int r, n = 0;
  if (!said) {
    said = 1;
    odb_dist_say(odb_dist_rank(), msg);
  }
  if (!dist_on) exit(status);
  dist_stop = NULL;
  reqs = malloc(sizeof *reqs * (size_t)dist_size);
  if (reqs != NULL) {
    for (r = 0; r < dist_size; r++)
      if (r != dist_rank &&
          MPI_Isend(NULL, 0, MPI_BYTE, r, DIST_TAG_FAILED, dist_ctl,
                    &reqs[n]) == MPI_SUCCESS)
        n++;
    if (wait_for(n, reqs, 1.0, "MPI_Isend (failing)") != ODB_OK)
      odb_clear_error();
    free(reqs);
  }
  MPI_Abort(MPI_COMM_WORLD, status);
  exit(status);
}
