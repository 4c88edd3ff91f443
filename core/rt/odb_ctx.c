/* odb_ctx.c - the run context: backend registry, topology, RNG, events. */
#include "odb_status.h"
#include "odb_clock.h"
#include "odb_rng.h"
#include "odb_event.h"
#include "odb_topo.h"
#include "odb_backend.h"
#include "odb_ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Loads the topology; a failure there is not fatal (tests, containers). */
odb_status odb_ctx_create(const odb_ctx_opts *o, odb_ctx **out) {
  odb_ctx *c;
  odb_backend *cpu = NULL;
  odb_status st;
  *out = NULL;
  c = calloc(1, sizeof *c);
  if (!c) return ODB_FAIL(ODB_ERR_NOMEM, "context");
  c->seed = o ? o->seed : 0;
  c->log_level = o && o->log_level ? o->log_level : ODB_LOG_INFO;
  if (o && o->outdir) snprintf(c->outdir, sizeof c->outdir, "%s", o->outdir);
  odb_rng_seed(&c->rng, c->seed);
  st = odb_event_ring_create(o && o->event_capacity ? o->event_capacity : 4096,
                             &c->events);
  if (st != ODB_OK) goto fail;
  if (odb_topo_load(&c->topo) != ODB_OK) {
    memset(&c->topo, 0, sizeof c->topo);
    snprintf(c->topo.cpu_model, sizeof c->topo.cpu_model, "unknown");
    c->topo.cores = c->topo.pus = c->topo.packages = c->topo.numa_nodes = 1;
  }
  st = odb_backend_cpu_create(c, &cpu);
  if (st != ODB_OK) goto fail;
  st = odb_ctx_add_backend(c, cpu);
  if (st != ODB_OK) goto fail;
  *out = c;
  return ODB_OK;
fail:
  odb_backend_destroy(cpu);
  odb_ctx_destroy(c);
  return st;
}

void odb_ctx_destroy(odb_ctx *c) {
  if (!c) return;
  for (int i = 0; i < c->nbackends; ++i) odb_backend_destroy(c->backends[i]);
  odb_topo_free(&c->topo);
  odb_event_ring_destroy(c->events);
  free(c);
}

/* Takes ownership of b, also on failure (then b is destroyed). */
odb_status odb_ctx_add_backend(odb_ctx *c, odb_backend *b) {
  if (c->nbackends >= ODB_MAX_BACKENDS) {
    odb_backend_destroy(b);
    return ODB_FAIL(ODB_ERR_ARG, "more than %d backends", ODB_MAX_BACKENDS);
  }
  if (odb_ctx_backend(c, b->ops->name)) {
    odb_backend_destroy(b);
    return ODB_FAIL(ODB_ERR_ARG, "backend '%s' registered twice", b->ops->name);
  }
  b->ctx = c;
  c->backends[c->nbackends++] = b;
  return ODB_OK;
}

void odb_ctx_note_backend(odb_ctx *c, const char *note) {
  if (c->nnotes >= ODB_MAX_BACKENDS) return;
  snprintf(c->backend_notes[c->nnotes++], sizeof c->backend_notes[0], "%s",
           note);
}

odb_backend *odb_ctx_backend(odb_ctx *c, const char *name) {
  for (int i = 0; i < c->nbackends; ++i)
    if (strcmp(c->backends[i]->ops->name, name) == 0) return c->backends[i];
  return NULL;
}

/* The message lists registered names, then why others are missing. */
odb_status odb_ctx_lookup_backend(odb_ctx *c, const char *name,
                                  odb_backend **out) {
  char list[256] = "";
  *out = NULL;
  if (!name || strcmp(name, "auto") == 0) name = "cpu";
  *out = odb_ctx_backend(c, name);
  if (*out) return ODB_OK;
  for (int i = 0; i < c->nbackends; ++i) {
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
             c->backends[i]->ops->name);
  }
  if (strcmp(name, "cuda") == 0 && c->nnotes > 0)
    return ODB_FAIL(ODB_ERR_NAME, "backend 'cuda' is not available (%s); "
                    "valid: auto, %s", c->backend_notes[0], list);
  return ODB_FAIL(ODB_ERR_NAME, "unknown backend '%s' (valid: auto, %s)", name,
                  list);
}

void odb_ctx_publish(odb_ctx *c, const odb_event *ev) {
  if (c && c->events) odb_event_push(c->events, ev);
}

/* Lines above the context's log level are dropped; a line longer than an
   event's text ends in "..." where it was cut. */
void odb_ctx_log(odb_ctx *c, int level, const char *fmt, ...) {
  odb_event ev;
  va_list ap;
  int n;
  if (!c || level > c->log_level) return;
  memset(&ev, 0, sizeof ev);
  ev.kind = ODB_EV_LOG;
  ev.level = level;
  va_start(ap, fmt);
  n = vsnprintf(ev.text, sizeof ev.text, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof ev.text)
    memcpy(ev.text + sizeof ev.text - 4, "...", 4);
  odb_ctx_publish(c, &ev);
}

/* Only stores to a volatile int: safe from a signal handler. */
void odb_ctx_request_stop(odb_ctx *c) { c->stop = 1; }
int odb_ctx_stop_requested(const odb_ctx *c) { return c && c->stop; }

/* Cheap when not paused: one read of a volatile int. */
double odb_ctx_wait_if_paused(odb_ctx *c) {
  struct timespec nap = { 0, 20 * 1000 * 1000 };
  double t0;
  if (!c || !c->pause || c->stop) return 0;
  t0 = odb_clock_now();
  while (c->pause && !c->stop) nanosleep(&nap, NULL);
  return odb_clock_now() - t0;
}

/* An atomic exchange, so a request made while it is read is not lost. */
int odb_ctx_take_skip(odb_ctx *c) {
  return c ? __atomic_exchange_n(&c->skip, 0, __ATOMIC_ACQ_REL) != 0 : 0;
}
