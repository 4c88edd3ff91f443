/* odb_ctx.h - one context per run: backends, topology, RNG, events, output. */
#ifndef ODB_CTX_H
#define ODB_CTX_H

#include <stdint.h>
#include "odb_backend.h"
#include "odb_event.h"
#include "odb_rng.h"
#include "odb_topo.h"

#define ODB_MAX_BACKENDS 8

typedef struct odb_ctx_opts {
  uint64_t seed;          /* RNG seed */
  const char *outdir;     /* output directory, may be NULL (none yet) */
  int log_level;          /* odb_log_level; default ODB_LOG_INFO */
  unsigned event_capacity;/* ring size; 0: 4096 */
} odb_ctx_opts;

struct odb_ctx {
  odb_backend *backends[ODB_MAX_BACKENDS];
  int nbackends;
  odb_topo topo;
  odb_rng rng;
  uint64_t seed;
  char outdir[1024];
  int log_level;
  odb_event_ring *events;
  volatile int stop;      /* set by a signal handler or the UI: stop soon */
  volatile int pause;     /* set by the UI (key p): loops wait at their next
                             step until it is cleared (or stop is set) */
  volatile int skip;      /* set by the UI (key s) while a tuning run goes:
                             the tuner drops its current configuration and
                             clears it (odb_ctx_take_skip) */
  char backend_notes[ODB_MAX_BACKENDS][160]; /* why a backend is missing */
  int nnotes;
};

/* Creates a context with the CPU backend registered and the topology loaded. */
odb_status odb_ctx_create(const odb_ctx_opts *o, odb_ctx **out);
void odb_ctx_destroy(odb_ctx *c);

/* Adds a backend (the context owns it from now on). */
odb_status odb_ctx_add_backend(odb_ctx *c, odb_backend *b);
/* Remembers why a backend is not available (shown by --list and info). */
void odb_ctx_note_backend(odb_ctx *c, const char *note);
/* NULL when no backend of that name is registered. */
odb_backend *odb_ctx_backend(odb_ctx *c, const char *name);
/*
** Resolves a backend name: "auto" picks "cpu" for CPU-only work; unknown
** names fail with ODB_ERR_NAME listing the registered backends.
*/
odb_status odb_ctx_lookup_backend(odb_ctx *c, const char *name,
                                  odb_backend **out);

/* Publishes an event (thread-safe). */
void odb_ctx_publish(odb_ctx *c, const odb_event *ev);
/* Publishes a log line at a level (printf style). */
void odb_ctx_log(odb_ctx *c, int level, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* Asks running loops to stop after their current step (signal-safe). */
void odb_ctx_request_stop(odb_ctx *c);
int odb_ctx_stop_requested(const odb_ctx *c);
/*
** Waits while the UI holds the run paused (polling every 20 ms) and returns
** the seconds waited, so that timers can leave the pause out; returns 0 at
** once when not paused, and as soon as a stop is requested.
*/
double odb_ctx_wait_if_paused(odb_ctx *c);
/* 1 once for each skip request of the UI (clears it); the tuner calls it
   between and during evaluations. */
int odb_ctx_take_skip(odb_ctx *c);

#endif
