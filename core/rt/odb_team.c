/* odb_team.c - a persistent team of pinned threads, barriers, spinlocks. */
#include "odb_team.h"
#include "odb_measure.h"
#include "odb_clock.h"

#include <errno.h>
#include <limits.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE 64
#define SPIN_DEFAULT 2000    /* polls before a waiter starts yielding */
#define SPIN_OVERSUB 4       /* ... when there are more threads than cores */
#define IDLE_SPIN_S 1e-3     /* parked workers poll this long, then sleep */

/* A value alone on its cache line (no false sharing between members). */
typedef struct padded_long {
  _Alignas(LINE) atomic_long v;
} padded_long;

typedef struct padded_int {
  _Alignas(LINE) int v;
} padded_int;

/* A hint to the core that this is a spin-wait loop. */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/*
** One poll of a busy-wait loop: pause for the first `spin` polls, then
** give the CPU away on each poll, so that an oversubscribed team still
** makes progress (the thread waited for may need this core).
*/
static inline void wait_poll(int *polls, int spin) {
  if (*polls < spin) {
    ++*polls;
    cpu_relax();
  } else {
    sched_yield();
  }
}

/* Zeroed memory of bytes rounded up to whole lines, line-aligned. */
static void *line_alloc(size_t bytes) {
  void *p = NULL;
  bytes = (bytes + LINE - 1) / LINE * LINE;
  if (posix_memalign(&p, LINE, bytes ? bytes : LINE)) return NULL;
  memset(p, 0, bytes ? bytes : LINE);
  return p;
}

/* ------------------------------------------------------------------ */
/* Barriers                                                            */
/* ------------------------------------------------------------------ */

struct odb_barrier {
  odb_barrier_kind kind;
  int p, spin;
  /* central: arrivals left in this episode and the global sense */
  _Alignas(LINE) atomic_int count;
  _Alignas(LINE) atomic_int sense;
  /* flags: episodes the master has released */
  _Alignas(LINE) atomic_long release;
  padded_int *local_sense;  /* central: each participant's sense */
  padded_long *arrive;      /* flags: episodes participant q arrived at */
  padded_long *epoch;       /* flags: each participant's episode count */
  pthread_barrier_t pb;
  int pb_ok;
};

const char *odb_barrier_kind_name(odb_barrier_kind kind) {
  static const char *const names[] = { "central", "flags", "pthread" };
  return kind >= 0 && kind < ODB_BARRIER_KIND_COUNT ? names[kind] : "?";
}

odb_status odb_barrier_create(int p, odb_barrier_kind kind, int spin,
                              odb_barrier **out) {
  odb_barrier *b;
  *out = NULL;
  if (p < 1 || kind < 0 || kind >= ODB_BARRIER_KIND_COUNT)
    return ODB_FAIL(ODB_ERR_ARG, "barrier needs p >= 1 (got %d) and a kind "
                    "0..%d (got %d)", p, ODB_BARRIER_KIND_COUNT - 1,
                    (int)kind);
  b = line_alloc(sizeof *b);
  if (!b) return ODB_FAIL(ODB_ERR_NOMEM, "barrier");
  b->kind = kind;
  b->p = p;
  b->spin = spin > 0 ? spin : SPIN_DEFAULT;
  atomic_init(&b->count, p);
  atomic_init(&b->sense, 0);
  atomic_init(&b->release, 0);
  b->local_sense = line_alloc((size_t)p * sizeof *b->local_sense);
  b->arrive = line_alloc((size_t)p * sizeof *b->arrive);
  b->epoch = line_alloc((size_t)p * sizeof *b->epoch);
  if (!b->local_sense || !b->arrive || !b->epoch) goto nomem;
  for (int q = 0; q < p; ++q) {
    atomic_init(&b->arrive[q].v, 0);
    atomic_init(&b->epoch[q].v, 0);
  }
  if (kind == ODB_BARRIER_PTHREAD) {
    int rc = pthread_barrier_init(&b->pb, NULL, (unsigned)p);
    if (rc) {
      odb_barrier_destroy(b);
      return ODB_FAIL(ODB_ERR_BACKEND, "pthread_barrier_init: %s",
                      strerror(rc));
    }
    b->pb_ok = 1;
  }
  *out = b;
  return ODB_OK;
nomem:
  odb_barrier_destroy(b);
  return ODB_FAIL(ODB_ERR_NOMEM, "barrier of %d participants", p);
}

void odb_barrier_destroy(odb_barrier *b) {
  if (!b) return;
  if (b->pb_ok) pthread_barrier_destroy(&b->pb);
  free(b->local_sense);
  free(b->arrive);
  free(b->epoch);
  free(b);
}

/*
** Sense-reversing central barrier: each arrival decrements the counter; the
** last one resets it and flips the global sense (release), the others spin
** until the sense equals their own flipped local sense (acquire). The
** counter is reset before the flip, so the next episode starts clean.
*/
static void central_wait(odb_barrier *b, int tid) {
  int s = !b->local_sense[tid].v, polls = 0;
  b->local_sense[tid].v = s;
  if (atomic_fetch_sub_explicit(&b->count, 1, memory_order_acq_rel) == 1) {
    atomic_store_explicit(&b->count, b->p, memory_order_relaxed);
    atomic_store_explicit(&b->sense, s, memory_order_release);
    return;
  }
  while (atomic_load_explicit(&b->sense, memory_order_acquire) != s)
    wait_poll(&polls, b->spin);
}

/*
** Flag barrier after Cheng & Carter (2005), as the thesis uses it: each
** participant counts its episodes and publishes the count in its own padded
** arrival flag (release); the master (tid 0) gathers by polling every flag
** until it shows the current episode, then releases everyone with one store
** of the episode number (release), which the others poll (acquire).
** Counters only grow (64 bits), so no flag needs resetting.
*/
static void flags_wait(odb_barrier *b, int tid) {
  long e = atomic_load_explicit(&b->epoch[tid].v, memory_order_relaxed) + 1;
  int polls = 0;
  atomic_store_explicit(&b->epoch[tid].v, e, memory_order_relaxed);
  if (tid == 0) {
    for (int q = 1; q < b->p; ++q)
      while (atomic_load_explicit(&b->arrive[q].v, memory_order_acquire) < e)
        wait_poll(&polls, b->spin);
    atomic_store_explicit(&b->release, e, memory_order_release);
    return;
  }
  atomic_store_explicit(&b->arrive[tid].v, e, memory_order_release);
  while (atomic_load_explicit(&b->release, memory_order_acquire) < e)
    wait_poll(&polls, b->spin);
}

void odb_barrier_wait(odb_barrier *b, int tid) {
  if (b->p == 1) {
    atomic_thread_fence(memory_order_seq_cst);
    return;
  }
  switch (b->kind) {
  case ODB_BARRIER_CENTRAL: central_wait(b, tid); break;
  case ODB_BARRIER_FLAGS: flags_wait(b, tid); break;
  default: pthread_barrier_wait(&b->pb); break;
  }
}

/* ------------------------------------------------------------------ */
/* Spinlock                                                            */
/* ------------------------------------------------------------------ */

void odb_spin_init(odb_spinlock *l) { atomic_init(&l->locked, 0); }

int odb_spin_trylock(odb_spinlock *l) {
  return atomic_load_explicit(&l->locked, memory_order_relaxed) == 0 &&
         atomic_exchange_explicit(&l->locked, 1, memory_order_acquire) == 0;
}

/*
** Test-and-test-and-set: read until the lock looks free (the line stays
** shared in the caches meanwhile), then try to take it; after a failed try
** back off for 1, 2, 4, ... up to 1024 pauses, and yield once the backoff
** is at its cap (the holder may be waiting for this core).
*/
void odb_spin_lock(odb_spinlock *l) {
  int backoff = 1;
  for (;;) {
    while (atomic_load_explicit(&l->locked, memory_order_relaxed))
      cpu_relax();
    if (atomic_exchange_explicit(&l->locked, 1, memory_order_acquire) == 0)
      return;
    if (backoff < 1024) {
      for (int i = 0; i < backoff; ++i) cpu_relax();
      backoff *= 2;
    } else {
      sched_yield();
    }
  }
}

void odb_spin_unlock(odb_spinlock *l) {
  atomic_store_explicit(&l->locked, 0, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* Team                                                                */
/* ------------------------------------------------------------------ */

typedef struct member {
  odb_team *team;
  int tid;
} member;

struct odb_team {
  int p, ncores, oversub, spin;
  odb_ctx *ctx;
  hwloc_topology_t topo;     /* NULL: nobody is pinned */
  hwloc_bitmap_t *sets;      /* p; NULL for members that are not pinned */
  hwloc_bitmap_t saved;      /* the caller's binding during a run */
  odb_barrier *bar;
  pthread_t *th;             /* p - 1 workers (members 1..p-1) */
  member *mem;               /* p */
  int nthreads;              /* workers created so far */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  padded_long *progress;     /* p */
  _Alignas(LINE) atomic_ulong gen;   /* number of runs started */
  _Alignas(LINE) atomic_int done;    /* workers finished in this run */
  _Alignas(LINE) atomic_int busy;    /* a run is in progress */
  atomic_int started;        /* workers that reached their loop */
  atomic_int pin_failed;     /* members whose pinning failed */
  atomic_int pin_errno;      /* errno of the last failure */
  atomic_int pin_warned;     /* the warning about it was logged */
  atomic_int quit;
  odb_team_fn fn;            /* the current run's work */
  void *arg;
};

/* Core count of the topology, or of the OS when there is none. */
static int count_cores(const odb_topo *topo) {
  long n;
  if (topo && topo->cores > 0) return topo->cores;
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/*
** The single-PU cpusets of members 0..min(p, cores)-1 (core q for member
** q); the others stay NULL. Uses PUs where hwloc shows no cores.
*/
static odb_status make_sets(odb_team *t) {
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  int n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
  if (n <= 0) {
    type = HWLOC_OBJ_PU;
    n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
  }
  t->sets = calloc((size_t)t->p, sizeof *t->sets);
  t->saved = hwloc_bitmap_alloc();
  if (!t->sets || !t->saved) return ODB_FAIL(ODB_ERR_NOMEM, "team cpusets");
  for (int q = 0; q < t->p && q < n; ++q) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t->topo, type, (unsigned)q);
    if (!obj || !obj->cpuset) continue;
    t->sets[q] = hwloc_bitmap_dup(obj->cpuset);
    if (!t->sets[q]) return ODB_FAIL(ODB_ERR_NOMEM, "team cpusets");
    hwloc_bitmap_singlify(t->sets[q]);
  }
  return ODB_OK;
}

/* Counts a failed pinning and remembers why. */
static void pin_fail(odb_team *t) {
  atomic_store(&t->pin_errno, errno ? errno : ENOSYS);
  atomic_fetch_add(&t->pin_failed, 1);
}

/* Pins the calling thread as member tid; counts a failure. */
static void pin_self(odb_team *t, int tid) {
  if (!t->topo || !t->sets[tid]) return;
  if (hwloc_set_cpubind(t->topo, t->sets[tid], HWLOC_CPUBIND_THREAD) != 0)
    pin_fail(t);
}

/* Logs once per team that pinning failed (threads still run). */
static void warn_pinning(odb_team *t) {
  if (atomic_load(&t->pin_failed) > 0 && !atomic_exchange(&t->pin_warned, 1))
    odb_ctx_log(t->ctx, ODB_LOG_WARN, "team of %d threads: pinning threads "
                "to cores failed (%s); running unpinned", t->p,
                strerror(atomic_load(&t->pin_errno)));
}

/*
** Waits until a run newer than `seen` starts: polls for IDLE_SPIN_S (not
** at all when oversubscribed), then sleeps on the condition variable.
*/
static unsigned long wait_run(odb_team *t, unsigned long seen) {
  unsigned long g;
  double t0 = 0;
  for (long i = 0; !t->oversub; ++i) {
    g = atomic_load_explicit(&t->gen, memory_order_acquire);
    if (g != seen) return g;
    if ((i & 255) == 255) {
      if (t0 == 0)
        t0 = odb_clock_now();
      else if (odb_clock_now() - t0 > IDLE_SPIN_S)
        break;
    }
    cpu_relax();
  }
  pthread_mutex_lock(&t->mu);
  while ((g = atomic_load_explicit(&t->gen, memory_order_acquire)) == seen)
    pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
  return g;
}

/* A worker: pin, report, then run the team's work once per run. */
static void *worker_main(void *a) {
  member *mb = a;
  odb_team *t = mb->team;
  unsigned long seen = 0;
  pin_self(t, mb->tid);
  atomic_fetch_add_explicit(&t->started, 1, memory_order_release);
  for (;;) {
    seen = wait_run(t, seen);
    if (atomic_load_explicit(&t->quit, memory_order_acquire)) break;
    t->fn(t, mb->tid, t->arg);
    atomic_fetch_add_explicit(&t->done, 1, memory_order_release);
  }
  return NULL;
}

/* Starts a run: publishes fn/arg, then bumps the generation (release). */
static void start_run(odb_team *t, odb_team_fn fn, void *arg) {
  atomic_store_explicit(&t->done, 0, memory_order_relaxed);
  t->fn = fn;
  t->arg = arg;
  pthread_mutex_lock(&t->mu);
  atomic_fetch_add_explicit(&t->gen, 1, memory_order_release);
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

/* Stops and joins the workers created so far. */
static void stop_workers(odb_team *t) {
  if (t->nthreads == 0) return;
  atomic_store_explicit(&t->quit, 1, memory_order_release);
  start_run(t, NULL, NULL);
  for (int i = 0; i < t->nthreads; ++i) pthread_join(t->th[i], NULL);
  t->nthreads = 0;
}

/* Creates the workers and waits until each has pinned itself. */
static odb_status start_workers(odb_team *t) {
  int polls = 0;
  for (int q = 1; q < t->p; ++q) {
    int rc;
    t->mem[q].team = t;
    t->mem[q].tid = q;
    rc = pthread_create(&t->th[q - 1], NULL, worker_main, &t->mem[q]);
    if (rc != 0)
      return ODB_FAIL(ODB_ERR_BACKEND, "creating thread %d of a team of %d: "
                      "%s", q, t->p, strerror(rc));
    t->nthreads++;
  }
  while (atomic_load_explicit(&t->started, memory_order_acquire) < t->p - 1)
    wait_poll(&polls, SPIN_OVERSUB);
  return ODB_OK;
}

int odb_team_max_threads(int *hw) {
  long n = sysconf(_SC_NPROCESSORS_ONLN), lim;
  if (n < 1) n = 1;
  if (n > INT_MAX / 4) n = INT_MAX / 4;
  lim = 4 * n;
  if (hw) *hw = (int)n;
  return lim < ODB_MIN_THREAD_LIMIT ? ODB_MIN_THREAD_LIMIT : (int)lim;
}

odb_status odb_team_create(odb_ctx *ctx, const odb_topo *topo, int p,
                           odb_barrier_kind kind, odb_team **out) {
  odb_team *t;
  odb_status st;
  *out = NULL;
  if (p < 1)
    return ODB_FAIL(ODB_ERR_ARG, "a team needs at least 1 thread, got %d", p);
  {   /* refused before any thread is made, not at the first that fails */
    int hw, lim = odb_team_max_threads(&hw);
    if (p > lim)
      return ODB_FAIL(ODB_ERR_ARG, "a team of %d threads is more than %d, "
                      "the most this machine takes (4 x its %d hardware "
                      "threads, at least %d)", p, lim, hw,
                      ODB_MIN_THREAD_LIMIT);
  }
  t = line_alloc(sizeof *t);
  if (!t) return ODB_FAIL(ODB_ERR_NOMEM, "team");
  t->p = p;
  t->ctx = ctx;
  t->ncores = count_cores(topo);
  t->oversub = p > t->ncores;
  t->spin = t->oversub ? SPIN_OVERSUB : SPIN_DEFAULT;
  t->topo = topo ? (hwloc_topology_t)topo->hwloc : NULL;
  atomic_init(&t->gen, 0);
  atomic_init(&t->done, 0);
  atomic_init(&t->busy, 0);
  atomic_init(&t->started, 0);
  atomic_init(&t->pin_failed, 0);
  atomic_init(&t->pin_warned, 0);
  atomic_init(&t->pin_errno, 0);
  atomic_init(&t->quit, 0);
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->th = calloc((size_t)p, sizeof *t->th);
  t->mem = calloc((size_t)p, sizeof *t->mem);
  t->progress = line_alloc((size_t)p * sizeof *t->progress);
  if (!t->th || !t->mem || !t->progress) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "team of %d", p);
    goto fail;
  }
  for (int q = 0; q < p; ++q) atomic_init(&t->progress[q].v, 0);
  /* oversubscribed: nobody is pinned, the scheduler balances better */
  if (t->topo && !t->oversub && (st = make_sets(t)) != ODB_OK) goto fail;
  if (t->oversub) t->topo = NULL;
  if ((st = odb_barrier_create(p, kind, t->spin, &t->bar)) != ODB_OK)
    goto fail;
  if (t->oversub)
    odb_ctx_log(ctx, ODB_LOG_WARN, "team of %d threads on %d cores: "
                "oversubscribed; no thread is pinned and waiting threads "
                "yield the CPU", p, t->ncores);
  if ((st = start_workers(t)) != ODB_OK) goto fail;
  warn_pinning(t);
  *out = t;
  return ODB_OK;
fail:
  odb_team_destroy(t);
  return st;
}

void odb_team_destroy(odb_team *t) {
  if (!t) return;
  stop_workers(t);
  if (t->sets)
    for (int q = 0; q < t->p; ++q)
      if (t->sets[q]) hwloc_bitmap_free(t->sets[q]);
  if (t->saved) hwloc_bitmap_free(t->saved);
  free(t->sets);
  odb_barrier_destroy(t->bar);
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  free(t->th);
  free(t->mem);
  free(t->progress);
  free(t);
}

int odb_team_size(const odb_team *t) { return t->p; }

int odb_team_pinned(const odb_team *t) {
  return t->topo && atomic_load(&((odb_team *)t)->pin_failed) == 0;
}

int odb_team_oversubscribed(const odb_team *t) { return t->oversub; }

/*
** Pins the caller as member 0 for the run (remembering its binding in
** t->saved); returns 1 when the binding must be restored afterwards.
*/
static int pin_caller(odb_team *t) {
  if (!t->topo || !t->sets[0] || t->p == 1) return 0;
  if (hwloc_get_cpubind(t->topo, t->saved, HWLOC_CPUBIND_THREAD) != 0) {
    pin_fail(t);
    return 0;
  }
  if (hwloc_bitmap_isequal(t->saved, t->sets[0])) return 0;
  if (hwloc_set_cpubind(t->topo, t->sets[0], HWLOC_CPUBIND_THREAD) != 0) {
    pin_fail(t);
    return 0;
  }
  return 1;
}

odb_status odb_team_run(odb_team *t, odb_team_fn fn, void *arg) {
  int polls = 0, restore;
  if (!t || !fn) return ODB_FAIL(ODB_ERR_ARG, "team run needs a team and a "
                                 "function");
  if (atomic_exchange_explicit(&t->busy, 1, memory_order_acquire))
    return ODB_FAIL(ODB_ERR_INTERNAL, "team run while a run of the same team "
                    "is in progress");
  restore = pin_caller(t);
  if (t->p > 1) start_run(t, fn, arg);
  fn(t, 0, arg);
  while (atomic_load_explicit(&t->done, memory_order_acquire) < t->p - 1)
    wait_poll(&polls, t->spin);
  if (restore)
    (void)hwloc_set_cpubind(t->topo, t->saved, HWLOC_CPUBIND_THREAD);
  warn_pinning(t);
  atomic_store_explicit(&t->busy, 0, memory_order_release);
  return ODB_OK;
}

/* The work of odb_team_run_first: k members of fn, after one barrier. */
typedef struct first_arg {
  int k;
  odb_team_fn fn;
  void *arg;
} first_arg;

static void first_fn(odb_team *t, int tid, void *a) {
  const first_arg *f = a;
  odb_team_barrier(t, tid);
  if (tid < f->k) f->fn(t, tid, f->arg);
}

odb_status odb_team_run_first(odb_team *t, int k, odb_team_fn fn,
                              void *arg) {
  first_arg f;
  if (!t || !fn || k < 1 || k > t->p)
    return ODB_FAIL(ODB_ERR_ARG, "team run of the first k members needs "
                    "1 <= k <= %d, got %d", t ? t->p : 0, k);
  f.k = k;
  f.fn = fn;
  f.arg = arg;
  return odb_team_run(t, first_fn, &f);
}

void odb_team_barrier(odb_team *t, int tid) { odb_barrier_wait(t->bar, tid); }

void odb_team_range(long n, int p, int q, long *first, long *last) {
  long base = n / p, rest = n % p;
  *first = q * base + (q < rest ? q : rest);
  *last = *first + base + (q < rest ? 1 : 0);
}

/* ---- progress counters ------------------------------------------- */

void odb_team_progress_set(odb_team *t, int q, long value) {
  atomic_store_explicit(&t->progress[q].v, value, memory_order_release);
}

long odb_team_progress_get(odb_team *t, int q) {
  return atomic_load_explicit(&t->progress[q].v, memory_order_acquire);
}

void odb_team_progress_wait(odb_team *t, int q, long value) {
  int polls = 0;
  while (atomic_load_explicit(&t->progress[q].v, memory_order_acquire) <
         value)
    wait_poll(&polls, t->spin);
}

void odb_team_progress_reset(odb_team *t) {
  for (int q = 0; q < t->p; ++q)
    atomic_store_explicit(&t->progress[q].v, 0, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* Barrier cost                                                        */
/* ------------------------------------------------------------------ */

typedef struct cost_arg {
  long episodes;
  double seconds;   /* written by member 0 */
} cost_arg;

/* Member 0 times `episodes` back-to-back barriers after one warm-up. */
static void cost_fn(odb_team *t, int tid, void *a) {
  cost_arg *c = a;
  double t0;
  odb_team_barrier(t, tid);
  t0 = odb_clock_now();
  for (long e = 0; e < c->episodes; ++e) odb_team_barrier(t, tid);
  if (tid == 0) c->seconds = odb_clock_now() - t0;
}

/*
** A calibration run of 200 episodes sizes the repetitions so that five of
** them take about 0.2 s together (at most 10^4 and at least 20 episodes
** each); the result is the median seconds per episode.
*/
odb_status odb_barrier_cost(const odb_topo *topo, int p, odb_barrier_kind kind,
                            double *seconds) {
  enum { REPS = 5 };
  odb_team *t;
  cost_arg c = { 200, 0 };
  double per[REPS], est;
  ODB_TRY(odb_team_create(NULL, topo, p, kind, &t));
  odb_team_run(t, cost_fn, &c);
  est = c.seconds / (double)c.episodes;
  c.episodes = est > 0 ? (long)(0.2 / REPS / est) : 10000;
  if (c.episodes > 10000) c.episodes = 10000;
  if (c.episodes < 20) c.episodes = 20;
  for (int r = 0; r < REPS; ++r) {
    odb_team_run(t, cost_fn, &c);
    per[r] = c.seconds / (double)c.episodes;
  }
  odb_team_destroy(t);
  *seconds = odb_median(per, REPS);
  return ODB_OK;
}

int odb_barrier_cost_table(const odb_topo *topo, odb_barrier_cost_row *rows,
                           int max) {
  int cores = count_cores(topo), n = 0;
  for (int p = 1; n < max; p *= 2) {
    int pp = p < cores ? p : cores;
    rows[n].p = pp;
    for (int k = 0; k < ODB_BARRIER_KIND_COUNT; ++k)
      if (odb_barrier_cost(topo, pp, (odb_barrier_kind)k,
                           &rows[n].seconds[k]) != ODB_OK)
        return -1;
    ++n;
    if (pp == cores) break;
  }
  return n;
}
