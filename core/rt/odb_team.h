/* odb_team.h - a persistent team of pinned threads, barriers, spinlocks. */
#ifndef ODB_TEAM_H
#define ODB_TEAM_H

#include <stdatomic.h>
#include "odb_ctx.h"
#include "odb_status.h"
#include "odb_topo.h"

/*
** A team of p members that run one function together. The thread calling
** odb_team_run is member 0 (it does its share of the work instead of
** waiting); members 1..p-1 are POSIX threads created once with the team and
** parked between runs (they spin for a short while, then sleep on a
** condition variable). Member q is pinned to core q (hwloc's logical
** order). Member 0 is pinned only for the duration of a run (when p > 1)
** and its previous binding is restored afterwards, so that threads the
** caller creates later do not inherit a single-core mask; this costs a few
** microseconds per run. A team with more members than cores is allowed:
** a warning is logged, nobody is pinned, and waiting members yield the CPU
** at once instead of spinning.
*/
typedef struct odb_team odb_team;

/* Work of member tid (0 <= tid < odb_team_size) in one run. */
typedef void (*odb_team_fn)(odb_team *team, int tid, void *arg);

typedef enum odb_barrier_kind {
  ODB_BARRIER_CENTRAL = 0, /* sense-reversing central counter, busy waiting */
  ODB_BARRIER_FLAGS,       /* per-thread arrival flags gathered by a master
                              (Cheng & Carter 2005), busy waiting */
  ODB_BARRIER_PTHREAD,     /* pthread_barrier_wait, for comparison */
  ODB_BARRIER_KIND_COUNT
} odb_barrier_kind;

/* "central", "flags", "pthread". */
const char *odb_barrier_kind_name(odb_barrier_kind kind);

/*
** The most threads a team (and so a parallel solver) takes: 4 per hardware
** thread the OS reports online, and at least ODB_MIN_THREAD_LIMIT (so that
** oversubscribed runs can be tested on small machines); *hw receives the
** hardware threads when hw is not NULL. odb_team_create, a solver's
** opts.threads and odb_solver_set_variant's threads above it are refused
** before any thread is made.
*/
#define ODB_MIN_THREAD_LIMIT 64
int odb_team_max_threads(int *hw);

/*
** Creates a team of p >= 1 members whose odb_team_barrier is of the given
** kind. ctx (may be NULL) receives log lines; topo (may be NULL: no
** pinning) supplies the cores. More members than cores is allowed with a
** warning. Fails with ODB_ERR_BACKEND and the pthread error text when a
** thread cannot be created.
*/
odb_status odb_team_create(odb_ctx *ctx, const odb_topo *topo, int p,
                           odb_barrier_kind kind, odb_team **out);
/* Stops and joins the workers (no run may be in progress). */
void odb_team_destroy(odb_team *team);

int odb_team_size(const odb_team *team);
/* 1 when the members are pinned; 0 without a topology, when oversubscribed
   or when pinning failed (the team then runs unpinned). */
int odb_team_pinned(const odb_team *team);
/* 1 when the team has more members than the machine has cores. */
int odb_team_oversubscribed(const odb_team *team);

/*
** Runs fn(team, tid, arg) once on every member and returns when all have
** returned (with all their writes visible to the caller). Fails with
** ODB_ERR_INTERNAL when called while a run of this team is in progress
** (from fn itself or from another thread).
*/
odb_status odb_team_run(odb_team *team, odb_team_fn fn, void *arg);

/*
** Runs fn(team, tid, arg) on members 0..k-1 only (1 <= k <= size), which
** start together: every member passes the team's barrier first, then
** members k.. return at once. For timing a run of k threads on the cores
** of a larger team (odb_bandwidth.c measures 1, 2, 4, ... threads on one
** team). fn must not call odb_team_barrier (only k members run it).
** Fails with ODB_ERR_ARG for k out of range, else as odb_team_run.
*/
odb_status odb_team_run_first(odb_team *team, int k, odb_team_fn fn,
                              void *arg);

/* The team's barrier of its kind; every member must call it. */
void odb_team_barrier(odb_team *team, int tid);

/*
** Block distribution of n components over p members (thesis 9.2): the first
** n mod p members get ceil(n/p), the others floor(n/p); member q owns
** [*first, *last) (empty when n < p and q >= n).
*/
void odb_team_range(long n, int p, int q, long *first, long *last);

/* ---- Barriers on their own (p participants with ids 0..p-1) ---------- */

typedef struct odb_barrier odb_barrier;

/*
** Creates a barrier of p participants. spin is the number of busy-wait
** polls before a waiter starts yielding the CPU (0: a default; a team uses
** few spins when it is oversubscribed).
*/
odb_status odb_barrier_create(int p, odb_barrier_kind kind, int spin,
                              odb_barrier **out);
void odb_barrier_destroy(odb_barrier *b);
/* Participant tid waits until all p have arrived. */
void odb_barrier_wait(odb_barrier *b, int tid);

/*
** Seconds per barrier episode with p pinned threads: the median over a few
** repetitions of up to 10^4 back-to-back episodes, bounded to about 0.2 s
** for this p. topo may be NULL (no pinning).
*/
odb_status odb_barrier_cost(const odb_topo *topo, int p, odb_barrier_kind kind,
                            double *seconds);

/* One row of the barrier-cost table: seconds per episode by kind. */
typedef struct odb_barrier_cost_row {
  int p;
  double seconds[ODB_BARRIER_KIND_COUNT];
} odb_barrier_cost_row;

/*
** Fills rows for p = 1, 2, 4, ... up to the core count, plus the core count
** itself when it is not a power of two (the support points of the thesis's
** offline profiling, 9.3.3). Returns the number of rows written (at most
** max), or -1 with a recorded message on failure. Takes at most about
** 0.7 s per row (0.2 s per kind plus calibration and thread start-up).
*/
int odb_barrier_cost_table(const odb_topo *topo, odb_barrier_cost_row *rows,
                           int max);

/* ---- Spinlock and progress counters ---------------------------------- */

/* Test-and-test-and-set lock with exponential backoff. Zero-initialized =
   unlocked; odb_spin_init does the same. */
typedef struct odb_spinlock {
  atomic_int locked;
} odb_spinlock;

void odb_spin_init(odb_spinlock *l);
void odb_spin_lock(odb_spinlock *l);
/* 1 when the lock was taken. */
int odb_spin_trylock(odb_spinlock *l);
void odb_spin_unlock(odb_spinlock *l);

/*
** Per-member progress counters on their own cache lines, for neighbour
** synchronization without barriers: member q publishes how far it got
** (release), a neighbour waits until the counter reaches a value (acquire).
** Counters start at 0; reset them only while no run is in progress.
*/
void odb_team_progress_set(odb_team *team, int q, long value);
long odb_team_progress_get(odb_team *team, int q);
/* Busy-waits (with backoff) until member q's counter is >= value. */
void odb_team_progress_wait(odb_team *team, int q, long value);
void odb_team_progress_reset(odb_team *team);

#endif
