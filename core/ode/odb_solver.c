/* odb_solver.c - the step driver: step-size control, integration, stats. */
#include "odb_status.h"
#include "odb_clock.h"
#include "odb_event.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_team.h"
#include "odb_size.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Fills the defaults of every zero option. */
static void opts_defaults(odb_solver_opts *o) {
  if (o->rtol <= 0) o->rtol = 1e-6;
  if (o->atol <= 0) o->atol = 1e-6;
  if (o->safety <= 0) o->safety = 0.9;
  if (o->fac_min <= 0) o->fac_min = 0.2;
  if (o->fac_max <= 0) o->fac_max = 5.0;
  if (o->max_steps <= 0) o->max_steps = 100000000L;
}

/* ODB_OK when a parallel variant may make threads of them. */
static odb_status threads_check(int threads) {
  int hw, lim = odb_team_max_threads(&hw);
  if (threads < 0)
    return ODB_FAIL(ODB_ERR_ARG, "threads must be positive, got %d", threads);
  if (threads > lim)
    return ODB_FAIL(ODB_ERR_ARG, "threads = %d is more than %d, the most "
                    "this machine takes (4 x its %d hardware threads, at "
                    "least %d)", threads, lim, hw, ODB_MIN_THREAD_LIMIT);
  return ODB_OK;
}

/* Checks option values a user may get wrong. */
static odb_status opts_check(const odb_solver_opts *o) {
  if (!(o->safety > 0 && o->safety <= 1))
    return ODB_FAIL(ODB_ERR_ARG, "safety must be in (0, 1], got %g", o->safety);
  if (!(o->fac_min > 0 && o->fac_min < 1))
    return ODB_FAIL(ODB_ERR_ARG, "fac_min must be in (0, 1), got %g",
                    o->fac_min);
  if (!(o->fac_max > 1))
    return ODB_FAIL(ODB_ERR_ARG, "fac_max must be greater than 1, got %g",
                    o->fac_max);
  if (o->h_fixed < 0 || o->h0 < 0 || o->hmin < 0 || o->block < 0)
    return ODB_FAIL(ODB_ERR_ARG, "h, h0, hmin and block must not be negative");
  if (o->m < 0)
    return ODB_FAIL(ODB_ERR_ARG, "m (corrector steps) must be at least 1, got "
                    "%d", o->m);
  ODB_TRY(threads_check(o->threads));
  if (o->sync != 0 && o->sync != ODB_SYNC_STEP && o->sync != ODB_SYNC_CALL)
    return ODB_FAIL(ODB_ERR_ARG, "sync must be %d (every step) or %d (once "
                    "an integrate call), got %d", ODB_SYNC_STEP, ODB_SYNC_CALL,
                    o->sync);
  if (!isfinite(o->rtol) || !isfinite(o->atol))
    return ODB_FAIL(ODB_ERR_ARG, "tolerances must be finite");
  return ODB_OK;
}

/*
** Effective orders: an ERK method has its tableau's orders; a PIRK method
** with m corrector steps has order min(p, m + 1) and an estimate (from the
** last two iterates) of order m.
*/
static odb_status set_orders(odb_solver *s) {
  const odb_method *m = s->method;
  if (m->kind == ODB_METHOD_PIRK) {
    s->m = s->opts.m > 0 ? s->opts.m : m->m_default;
    s->order = s->m + 1 < m->order ? s->m + 1 : m->order;
    s->err_order = s->m;
    return ODB_OK;
  }
  if (s->opts.m > 0)
    return ODB_FAIL(ODB_ERR_ARG, "m (corrector steps) applies to PIRK "
                    "methods only; '%s' is an explicit RK method", m->name);
  s->m = 0;
  s->order = m->order;
  s->err_order = m->bhat ? odb_method_err_order(m) : 0;
  return ODB_OK;
}

/* Lists valid variant names into buf ("auto, fused, plain"). */
static void variant_names(char *buf, size_t len) {
  snprintf(buf, len, "auto");
  for (int i = 0; i < odb_variant_count(); ++i) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, ", %s", odb_variant_at(i)->name);
  }
}

/* Resolves a variant name (NULL/"auto": first applicable for the backend). */
static odb_status pick_variant(const odb_problem *p, const odb_method *m,
                               const odb_backend *b, const char *name,
                               const odb_variant **out) {
  char why[256] = "", names[1024];
  if (!name || strcmp(name, "auto") == 0) {
    for (int i = 0; i < odb_variant_count(); ++i) {
      const odb_variant *v = odb_variant_at(i);
      if (strcmp(v->backend, b->ops->name) == 0 &&
          v->applies(p, m, why, sizeof why)) {
        *out = v;
        return ODB_OK;
      }
    }
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "no variant on backend '%s' applies "
                    "to %s with %s", b->ops->name, p->label, m->name);
  }
  *out = odb_variant_find(name);
  if (!*out) {
    variant_names(names, sizeof names);
    return ODB_FAIL(ODB_ERR_NAME, "unknown variant '%s' (valid: %s)", name,
                    names);
  }
  if (strcmp((*out)->backend, b->ops->name) != 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' runs on backend '%s', "
                    "not '%s'", name, (*out)->backend, b->ops->name);
  if (!(*out)->applies(p, m, why, sizeof why))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: %s",
                    name, why);
  return ODB_OK;
}

/* Frees y, ynew and the stage vectors wherever alloc_vectors put them. */
static void free_vectors(odb_solver *s) {
  odb_backend *b = s->backend;
  int dev = b && !b->host_memory;
  if (s->F)
    for (int i = 0; i < s->method->s; ++i) {
      if (dev) b->ops->free(b, s->F[i]);
      else free(s->F[i]);
    }
  free(s->F);
  if (dev) {
    b->ops->free(b, s->y);
    b->ops->free(b, s->ynew);
  } else {
    free(s->y);
    free(s->ynew);
  }
  s->F = NULL;
  s->y = s->ynew = NULL;
}

/*
** Allocates y, ynew and the s stage vectors in the backend's memory: on
** the host (64-byte aligned) for host-memory backends, else with the
** backend's alloc. A device too small for them is refused before any
** allocation, with the size needed.
*/
static odb_status alloc_vectors(odb_solver *s) {
  odb_backend *b = s->backend;
  int S = s->method->s;
  size_t bytes = (size_t)s->n * sizeof(double);
  double total = (double)(S + 2) * (double)bytes;
  s->F = calloc((size_t)S, sizeof *s->F);
  if (!s->F) return ODB_FAIL(ODB_ERR_NOMEM, "stage table");
  if (!b->host_memory) {
    odb_device_info info;
    if (odb_backend_query(b, &info) == ODB_OK && info.mem_bytes > 0 &&
        total > (double)info.mem_bytes)
      return ODB_FAIL(ODB_ERR_NOMEM, "out of device memory: the solver needs "
                      "%.2f GB (%d vectors of %ld doubles) on '%s', which has "
                      "%.2f GB", total * 1e-9, S + 2, s->n, info.name,
                      (double)info.mem_bytes * 1e-9);
    if (b->ops->alloc(b, bytes, (void **)&s->y) != ODB_OK) goto nomem;
    if (b->ops->alloc(b, bytes, (void **)&s->ynew) != ODB_OK) goto nomem;
    for (int i = 0; i < S; ++i)
      if (b->ops->alloc(b, bytes, (void **)&s->F[i]) != ODB_OK) goto nomem;
    return ODB_OK;
  }
  if (posix_memalign((void **)&s->y, 64, bytes)) s->y = NULL;
  if (posix_memalign((void **)&s->ynew, 64, bytes)) s->ynew = NULL;
  for (int i = 0; i < S; ++i)
    if (posix_memalign((void **)&s->F[i], 64, bytes)) s->F[i] = NULL;
  if (!s->y || !s->ynew) goto nomem;
  for (int i = 0; i < S; ++i)
    if (!s->F[i]) goto nomem;
  return ODB_OK;
nomem:
  return ODB_FAIL(ODB_ERR_NOMEM, "out of %s memory: the solver needs %.2f GB "
                  "(%d vectors of %ld doubles)%s%s",
                  b->host_memory ? "host" : b->ops->name, total * 1e-9, S + 2,
                  s->n, b->host_memory ? "" : "; ",
                  b->host_memory ? "" : odb_last_error());
}

/*
** sync = call with adaptive steps asks for the step controller on the
** device: the variant must have one (advance).
*/
static odb_status sync_check(const odb_solver *s) {
  if (s->opts.sync != ODB_SYNC_CALL || s->opts.h_fixed > 0 ||
      (s->variant->advance && !s->advance_off))
    return ODB_OK;
  if (s->variant->advance)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "sync = call with adaptive steps "
                    "needs the step controller on the device, which this "
                    "'%s' solver cannot use here (%s); give a fixed step h, "
                    "or sync = step", s->variant->name, s->variant->doc);
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, "sync = call with adaptive steps "
                  "needs the step controller on the device, which variant "
                  "'%s' does not have (the GPU variants but gpu_multiblock "
                  "have it); give a fixed step h, or sync = step",
                  s->variant->name);
}

/*
** A copy of the variant options given[0..n) in one block (the values,
** then their names and strings) into *out, NULL for none; one free()
** releases it.
*/
static odb_status dup_vopts(const odb_param_value *given, int n,
                            const odb_param_value **out) {
  size_t bytes = 0, len;
  odb_param_value *v;
  char *text;
  *out = NULL;
  if (n == 0) return ODB_OK;
  if (n < 0 || !given)
    return ODB_FAIL(ODB_ERR_ARG, "variant options: %d given without a list",
                    n);
  if (odb_size_mul(&bytes, (size_t)n, sizeof *v))
    return ODB_FAIL(ODB_ERR_ARG, "variant options: %d are too many", n);
  for (int i = 0; i < n; ++i) {
    const odb_param_value *g = &given[i];
    if (!g->name)
      return ODB_FAIL(ODB_ERR_ARG, "variant option %d has no name", i + 1);
    len = strlen(g->name) + 1 + (g->str ? strlen(g->str) + 1 : 0);
    if (odb_size_add(&bytes, bytes, len))
      return ODB_FAIL(ODB_ERR_ARG, "variant options: too long");
  }
  v = malloc(bytes);
  if (!v) return ODB_FAIL(ODB_ERR_NOMEM, "variant options (%zu bytes)", bytes);
  text = (char *)(v + n);
  for (int i = 0; i < n; ++i) {
    const odb_param_value *g = &given[i];
    v[i] = *g;
    len = strlen(g->name) + 1;
    v[i].name = memcpy(text, g->name, len);
    text += len;
    if (g->str) {
      len = strlen(g->str) + 1;
      v[i].str = memcpy(text, g->str, len);
      text += len;
    }
  }
  *out = v;
  return ODB_OK;
}

/*
** Gives s its own copy of the variant options o->vopts (dup_vopts), so
** that the caller's list need not outlive create and a later init
** (set_variant) still finds them. s->opts.vopts is that block (freed by
** destroy) or NULL.
*/
static odb_status copy_vopts(odb_solver *s, const odb_solver_opts *o) {
  s->opts.vopts = NULL;
  s->opts.nvopts = 0;
  if (!o) return ODB_OK;
  ODB_TRY(dup_vopts(o->vopts, o->nvopts, &s->opts.vopts));
  s->opts.nvopts = o->nvopts;
  return ODB_OK;
}

odb_status odb_solver_create(odb_ctx *ctx, const odb_problem *p,
                             const odb_method *m, odb_backend *b,
                             const char *variant, const odb_solver_opts *o,
                             odb_solver **out) {
  odb_solver *s;
  odb_status st;
  *out = NULL;
  if (!p || !m || !b) return ODB_FAIL(ODB_ERR_ARG, "solver needs a problem, "
                                      "a method and a backend");
  s = calloc(1, sizeof *s);
  if (!s) return ODB_FAIL(ODB_ERR_NOMEM, "solver");
  s->ctx = ctx;
  s->problem = p;
  s->method = m;
  s->backend = b;
  s->n = p->n;
  if (o) s->opts = *o;
  st = copy_vopts(s, o);
  opts_defaults(&s->opts);
  if (st == ODB_OK) st = opts_check(&s->opts);
  if (st == ODB_OK) st = set_orders(s);
  if (st == ODB_OK) st = pick_variant(p, m, b, variant, &s->variant);
  if (st == ODB_OK)
    st = odb_variant_check_opts(s->variant, s->opts.vopts, s->opts.nvopts);
  if (st == ODB_OK) st = sync_check(s);
  if (st == ODB_OK) st = alloc_vectors(s);
  if (st == ODB_OK) st = s->variant->init(s);
  if (st != ODB_OK) {
    odb_solver_destroy(s);
    return st;
  }
  odb_solver_reset(s, p->t0);
  *out = s;
  return ODB_OK;
}

void odb_solver_destroy(odb_solver *s) {
  if (!s) return;
  if (s->variant && s->variant->fini) s->variant->fini(s);
  free_vectors(s);
  free((void *)s->opts.vopts);   /* copy_vopts's block */
  free(s);
}

/* Puts s on variant v with block and threads (s has no variant now). */
static odb_status enter_variant(odb_solver *s, const odb_variant *v,
                                long block, int threads) {
  odb_status st;
  s->variant = v;
  s->opts.block = block;
  s->opts.threads = threads;
  s->block = 0;
  s->fsal_ready = 0;
  s->advance_off = 0;
  st = v->init(s);
  if (st != ODB_OK && v->fini) v->fini(s);   /* frees a partial init */
  if (st != ODB_OK) s->variant = NULL;
  return st;
}

/*
** Moves s to v with block, threads and the variant options vopts[0..nvopts)
** (a list s->opts.vopts may point at from now on: the caller owns it). On
** failure s->opts.vopts is the old list again and s runs its old variant
** and settings, or (ODB_ERR_INTERNAL) none. Nothing changes until every
** check has passed; the old variant gathers its state before it leaves.
*/
static odb_status change_variant(odb_solver *s, const odb_variant *v,
                                 long block, int threads,
                                 const odb_param_value *vopts, int nvopts) {
  const odb_variant *old = s->variant;
  long old_block = s->opts.block;
  int old_threads = s->opts.threads;
  const odb_param_value *old_vopts = s->opts.vopts;
  int old_nvopts = s->opts.nvopts;
  char why[256] = "";
  odb_status st;
  if (!v || block < 0 || threads < 0)
    return ODB_FAIL(ODB_ERR_ARG, "set_variant: a variant, block >= 0 and "
                    "threads >= 0 are needed");
  ODB_TRY(threads_check(threads));
  if (strcmp(v->backend, s->backend->ops->name) != 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' runs on backend '%s', "
                    "not '%s'", v->name, v->backend, s->backend->ops->name);
  if (!v->applies(s->problem, s->method, why, sizeof why))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: %s",
                    v->name, why);
  ODB_TRY(odb_variant_check_opts(v, vopts, nvopts));
  if (old && old->gather) ODB_TRY(old->gather(s));   /* v reads all of y */
  if (old && old->fini) old->fini(s);
  s->vdata = NULL;
  s->opts.vopts = vopts;
  s->opts.nvopts = nvopts;
  st = enter_variant(s, v, block, threads);
  if (st == ODB_OK) return ODB_OK;
  s->opts.vopts = old_vopts;     /* the old variant's init reads them */
  s->opts.nvopts = old_nvopts;
  if (!old) return st;
  {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", odb_last_error());
    if (enter_variant(s, old, old_block, old_threads) != ODB_OK)
      return ODB_FAIL(ODB_ERR_INTERNAL, "set_variant: '%s' failed (%s) and "
                      "'%s' could not be restored: %s", v->name, msg,
                      old->name, odb_last_error());
    return ODB_FAIL(st, "%s", msg);
  }
}

odb_status odb_solver_set_variant_to(odb_solver *s, const odb_variant *v,
                                     long block, int threads) {
  /* the variant options stay with the solver: v must take them */
  return change_variant(s, v, block, threads, s->opts.vopts,
                        s->opts.nvopts);
}

odb_status odb_solver_set_variant_opts(odb_solver *s, const odb_variant *v,
                                       long block, int threads,
                                       const odb_param_value *vopts,
                                       int nvopts) {
  const odb_param_value *copy, *old = s->opts.vopts;
  odb_status st;
  ODB_TRY(dup_vopts(vopts, nvopts, &copy));   /* vopts may be s's own */
  st = change_variant(s, v, block, threads, copy, nvopts);
  free((void *)(st == ODB_OK ? old : copy));
  return st;
}

odb_status odb_solver_set_variant(odb_solver *s, const char *variant,
                                  long block, int threads) {
  const odb_variant *v = variant ? odb_variant_find(variant) : NULL;
  char names[1024];
  if (!v) {
    variant_names(names, sizeof names);
    return ODB_FAIL(ODB_ERR_NAME, "unknown variant '%s' (valid: %s)",
                    variant ? variant : "(null)",
                    strlen(names) > 6 ? names + 6 : names);
  }
  return odb_solver_set_variant_to(s, v, block, threads);
}

/*
** Host-memory backends copy (or use) y in place; otherwise y (host memory)
** is copied to the device. This returns nothing: a device that fails the
** copy is broken for good (CUDA errors are sticky), and the next step
** reports it.
*/
void odb_solver_set_state(odb_solver *s, double t, const double *y) {
  size_t bytes = (size_t)s->n * sizeof(double);
  if (s->backend->host_memory) {
    if (y != s->y) memcpy(s->y, y, bytes);
  } else {
    (void)s->backend->ops->to_device(s->backend, s->y, y, bytes);
  }
  s->t = t;
  s->fsal_ready = 0;
  s->h_next = 0;
}

int odb_solver_threads(const odb_solver *s) {
  long n;
  if (s->opts.threads > 0) return s->opts.threads;
  if (s->ctx && s->ctx->topo.cores > 0) return s->ctx->topo.cores;
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

double odb_solver_cache_bytes(const odb_solver *s, int level, double fallback) {
  if (s->ctx)
    for (int i = 0; i < s->ctx->topo.ncaches; ++i)
      if (s->ctx->topo.caches[i].level == level && s->ctx->topo.caches[i].size)
        return (double)s->ctx->topo.caches[i].size;
  return fallback;
}

odb_status odb_solver_get_state(odb_solver *s, double *y) {
  size_t bytes = (size_t)s->n * sizeof(double);
  if (s->variant && s->variant->gather) ODB_TRY(s->variant->gather(s));
  if (s->backend->host_memory) {
    memcpy(y, s->y, bytes);
    return ODB_OK;
  }
  ODB_TRY(odb_backend_sync(s->backend));
  return s->backend->ops->to_host(s->backend, y, s->y, bytes);
}

void odb_solver_reset(odb_solver *s, double t0) {
  if (s->backend->host_memory) {
    s->problem->initial(s->problem, s->y);
  } else {
    double *y0 = malloc((size_t)s->n * sizeof(double));
    if (y0) {   /* without host memory the device keeps its old state */
      s->problem->initial(s->problem, y0);
      odb_solver_set_state(s, t0, y0);
      free(y0);
    }
  }
  s->t = t0;
  s->fsal_ready = 0;
  s->h_next = 0;
}

double odb_err_norm(const double *e, const double *y, const double *ynew,
                    long n, double atol, double rtol) {
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    double a = fabs(y[i]), b = fabs(ynew[i]);
    double r = e[i] / (atol + rtol * (a > b ? a : b));
    sum += r * r;
  }
  return n > 0 ? sqrt(sum / (double)n) : 0.0;
}

/* Weighted RMS norm of v with sk = atol + rtol |y| (initial step guess). */
static double wnorm(const double *v, const double *y, long n, double atol,
                    double rtol) {
  return odb_err_norm(v, y, y, n, atol, rtol);
}

/*
** First step size after Hairer, Norsett & Wanner I, II.4: from |y0|, |f0|
** and a difference quotient of f. y, f0, tmp and f1 are n host doubles;
** y holds the state, f0 receives f(t, y), tmp and f1 are scratch.
*/
static double initial_guess(odb_solver *s, double span, const double *y,
                            double *f0, double *tmp, double *f1) {
  const odb_problem *p = s->problem;
  const odb_solver_opts *o = &s->opts;
  long n = s->n;
  int q = s->err_order > 0 ? s->err_order : s->order;
  double d0, d1, d2, h0, h1;
  p->rhs(p, s->t, y, 0, f0, 0, n);
  s->stats.nfev++;
  d0 = wnorm(y, y, n, o->atol, o->rtol);
  d1 = wnorm(f0, y, n, o->atol, o->rtol);
  h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  if (h0 > span) h0 = span;
  for (long i = 0; i < n; ++i) tmp[i] = y[i] + h0 * f0[i];
  p->rhs(p, s->t + h0, tmp, 0, f1, 0, n);
  s->stats.nfev++;
  for (long i = 0; i < n; ++i) tmp[i] = f1[i] - f0[i];
  d2 = wnorm(tmp, y, n, o->atol, o->rtol) / h0;
  if (d1 > d2) d2 = d1;
  h1 = d2 <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / d2, 1.0 / (q + 1));
  return fmin(fmin(100 * h0, h1), span);
}

/*
** The first step size, leaving f(t, y) in F[0] (fsal_ready). Host-memory
** backends work in place (ynew and F[1] are scratch). Device backends get
** the same arithmetic on the host: y comes over, F[0] goes back (once per
** integration). Without the host memory for that, or when a copy fails, it
** returns a cautious 1e-6 (capped at span) and leaves F[0] unset.
*/
static double initial_step(odb_solver *s, double span) {
  odb_backend *b = s->backend;
  size_t bytes = (size_t)s->n * sizeof(double);
  double *w, h = fmin(1e-6, span);
  if (b->host_memory) {
    h = initial_guess(s, span, s->y, s->F[0], s->ynew, s->F[1]);
    s->fsal_ready = 1;
    return h;
  }
  w = malloc(4 * bytes);
  if (!w) return h;
  if (odb_backend_sync(b) == ODB_OK &&
      b->ops->to_host(b, w, s->y, bytes) == ODB_OK) {
    double hg = initial_guess(s, span, w, w + s->n, w + 2 * s->n,
                              w + 3 * s->n);
    if (b->ops->to_device(b, s->F[0], w + s->n, bytes) == ODB_OK) {
      h = hg;
      s->fsal_ready = 1;
    }
  }
  free(w);
  return h;
}

/* Flops of one attempted step: RHS, linear combinations, estimate, norm. */
static double step_flops(const odb_solver *s, int stage0) {
  const odb_method *m = s->method;
  double n = (double)s->n, f = 0;
  if (m->kind == ODB_METHOD_PIRK)   /* (m+1)s evaluations, m s full LCs */
    return n * ((s->m + 1) * m->s * s->problem->flops_per_comp +
                s->m * m->s * (2.0 * m->s + 1.0) + 4.0 * m->s + 6.0);
  for (int l = stage0 ? 0 : 1; l < m->s; ++l) {
    int nnz = 0;
    for (int i = 0; i < l; ++i) nnz += m->A[l * m->s + i] != 0.0;
    f += n * (s->problem->flops_per_comp + (l ? 2.0 * nnz + 1.0 : 0.0));
  }
  f += n * 2.0 * m->s;
  if (m->bhat) f += n * (2.0 * m->s + 6.0);
  return f;
}

/*
** ODB_OK unless the problem's f failed during the attempt at (t, h) (a
** scenario's f raised an error): then its message, as a bad argument, or
** ODB_INTERRUPTED when a stop was asked for (a stop can surface in f).
*/
static odb_status problem_failure(odb_solver *s, double h) {
  const odb_problem *p = s->problem;
  char msg[384];
  if (!p->take_failure || !p->take_failure(p, msg, sizeof msg))
    return ODB_OK;
  if (odb_ctx_stop_requested(s->ctx))
    return ODB_FAIL(ODB_INTERRUPTED, "interrupted");
  return ODB_FAIL(ODB_ERR_ARG, "f of problem %s failed in the step at t = "
                  "%.17g with h = %g: %s", p->label, s->t, h, msg);
}

/* Runs one attempt and books its figures into the running totals. */
static odb_status attempt(odb_solver *s, double h, double *err) {
  double r, w;
  int stage0 = !s->fsal_ready;
  odb_status st = s->variant->attempt(s, h, err);
  if (st == ODB_OK) st = problem_failure(s, h);
  if (st != ODB_OK) return st;
  s->variant->traffic(s, stage0, &r, &w);
  s->stats.rbytes += r;
  s->stats.wbytes += w;
  s->stats.flops += step_flops(s, stage0);
  s->stats.nfev += s->method->kind == ODB_METHOD_PIRK
                       ? (long)(s->m + 1) * s->method->s
                       : s->method->s - (stage0 ? 0 : 1);
  s->stats.steps++;
  return ODB_OK;
}

/* Makes ynew the current state at t + h and keeps F[0] = f(t, y) valid. */
static void accept(odb_solver *s, double h) {
  double *tmp = s->y;
  s->y = s->ynew;
  s->ynew = tmp;
  s->t += h;
  if (s->method->fsal) {
    double *f0 = s->F[0];
    s->F[0] = s->F[s->method->s - 1];
    s->F[s->method->s - 1] = f0;
    s->fsal_ready = 1;
  } else {
    s->fsal_ready = 0;
  }
  s->stats.accepted++;
}

/* Step-size factor from the weighted error (standard I controller). */
static double step_factor(const odb_solver *s, double err, double fac_max) {
  int q = s->err_order;
  double fac;
  if (!(err > 0)) return fac_max;
  fac = s->opts.safety * pow(err, -1.0 / (q + 1));
  return fmin(fac_max, fmax(s->opts.fac_min, fac));
}

/* Publishes a progress event for the current state. */
static void publish(odb_solver *s, int kind, const odb_solve_stats *st,
                    double value, double value2) {
  odb_event ev;
  if (!s->ctx) return;
  memset(&ev, 0, sizeof ev);
  ev.kind = kind;
  ev.t = s->t;
  ev.h = st->h;
  ev.err = st->err_last;
  ev.step = st->steps;
  ev.accepted = st->accepted;
  ev.rejected = st->rejected;
  ev.value = value;
  ev.value2 = value2;
  snprintf(ev.name, sizeof ev.name, "%s/%s/%s", s->problem->type->name,
           s->method->name, s->variant->name);
  if (kind == ODB_EV_STEP) {
    ev.value = st->rbytes;
    ev.value2 = st->wbytes;
    snprintf(ev.text, sizeof ev.text, "flops=%.6e", st->flops);
  }
  if (kind == ODB_EV_SOLVE_END)
    snprintf(ev.text, sizeof ev.text, "%s",
             st->status == ODB_OK ? "ok" : odb_status_str(st->status));
  odb_ctx_publish(s->ctx, &ev);
}

/*
** One adaptive step from (t, y): attempts with the proposed h (capped at
** hmax_left) until one is accepted. Rejections shrink h; after a rejection
** the next factor is capped at 1. Non-finite errors count as rejections.
*/
static odb_status adaptive_step(odb_solver *s, double hmax_left,
                                double hmin) {
  double fac_max = s->opts.fac_max;
  if (s->err_order <= 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "method '%s' has no error estimate: "
                    "give a fixed step h", s->method->name);
  if (s->h_next <= 0 && !(s->opts.h0 > 0) && s->variant->gather)
    ODB_TRY(s->variant->gather(s));   /* the first-step guess reads all y */
  if (s->h_next <= 0)
    s->h_next = s->opts.h0 > 0 ? s->opts.h0 : initial_step(s, hmax_left);
  for (;;) {
    double h = fmin(s->h_next, hmax_left), err;
    if (h < hmin)
      return ODB_FAIL(ODB_ERR_STEP_SIZE, "step size %g below hmin %g at t = "
                      "%.17g", h, hmin, s->t);
    ODB_TRY(attempt(s, h, &err));
    s->stats.h = h;
    s->stats.err_last = err;
    if (isfinite(err) && err <= 1.0) {
      accept(s, h);
      s->h_next = h * step_factor(s, err, fac_max);
      return ODB_OK;
    }
    s->stats.rejected++;
    s->h_next = h * (isfinite(err) ? step_factor(s, err, 1.0)
                                   : s->opts.fac_min);
    fac_max = 1.0;
  }
}

/*
** ODB_OK when the candidate solution of a fixed step of h is finite. An
** error norm (methods with bhat) sums over every component, so a finite
** norm says ynew is finite; otherwise the first and last components are
** read (from the device for device backends: 16 bytes). A component in
** between that alone goes non-finite is found by integrate's check of the
** whole state at the end of the call (final_check).
*/
static odb_status check_finite(odb_solver *s, double err, double h) {
  odb_backend *b = s->backend;
  double v[2] = {0.0, 0.0};
  if (s->err_order > 0 && !isfinite(err)) v[0] = NAN;
  else if (b->host_memory) {
    v[0] = s->ynew[0];
    v[1] = s->ynew[s->n - 1];
  } else if (s->err_order <= 0) {
    ODB_TRY(b->ops->to_host(b, &v[0], s->ynew, sizeof(double)));
    ODB_TRY(b->ops->to_host(b, &v[1], s->ynew + s->n - 1, sizeof(double)));
  }
  if (!isfinite(v[0]) || !isfinite(v[1]))
    return ODB_FAIL(ODB_ERR_NONFINITE, "solution became non-finite at t = "
                    "%.17g with h = %g%s", s->t, h,
                    s->opts.sync == ODB_SYNC_CALL
                        ? " (sync = call checks once a call: at this step or "
                          "an earlier one of the call)" : "");
  return ODB_OK;
}

/*
** One fixed step of h; the state must stay finite. With defer (sync =
** call, not the call's last step) a device variant need not bring the
** error norm back, and the state is checked at the call's last step
** instead: err_last and the check then cover that step (a non-finite
** state earlier in the call carries through to it).
*/
static odb_status fixed_step(odb_solver *s, double h, int defer) {
  double err;
  odb_status st;
  if (!(s->t + h > s->t))
    return ODB_FAIL(ODB_ERR_STEP_SIZE, "step size %g does not advance t = "
                    "%.17g (t + h rounds to t)", h, s->t);
  s->defer_norm = defer;
  st = attempt(s, h, &err);
  s->defer_norm = 0;
  if (st != ODB_OK) return st;
  s->stats.h = h;
  if (!defer) {
    s->stats.err_last = err;
    ODB_TRY(check_finite(s, err, h));
  }
  accept(s, h);
  return ODB_OK;
}

/*
** The end of an integrate call on a host-memory backend: every component
** of the state must be finite (one read of y a call; the steps check less,
** see check_finite). A device's state is not read back for it.
*/
static odb_status final_check(const odb_solver *s) {
  double sum = 0.0;
  if (!s->backend->host_memory) return ODB_OK;
  for (long i = 0; i < s->n; ++i) sum += s->y[i] * 0.0;  /* NaN if any is */
  if (isfinite(sum)) return ODB_OK;
  for (long i = 0; i < s->n; ++i)
    if (!isfinite(s->y[i]))
      return ODB_FAIL(ODB_ERR_NONFINITE, "solution became non-finite: "
                      "component %ld is %g at t = %.17g", i + 1, s->y[i],
                      s->t);
  return ODB_OK;
}

/* Whether integrate's adaptive steps run with the controller on the device. */
static int device_control(const odb_solver *s) {
  const odb_variant *v = s->variant;
  return v->advance && !s->advance_off && !(s->opts.h_fixed > 0) &&
         s->err_order > 0 &&
         (s->opts.sync == ODB_SYNC_CALL ||
          (s->opts.sync == 0 && v->advance_default));
}

/*
** One batch of adaptive attempts toward t1 with the controller on the
** device (odb_variant.advance): the first h as adaptive_step chooses it,
** the batch's counts and figures booked as attempt() books each attempt,
** the state (and FSAL's F_0) taken over. *launches caps the batch's size
** (16 at first, doubling up to 256); within it the batch is the attempts
** that the rest of the span needs at the proposed h, plus an eighth and
** two. *capped carries a rejection across batches.
*/
static odb_status device_batch(odb_solver *s, double t1, double span,
                               double hmin, long left, int *launches,
                               int *capped) {
  odb_advance v;
  double r, w, h, want;
  if (s->h_next <= 0)
    s->h_next = s->opts.h0 > 0 ? s->opts.h0 : initial_step(s, t1 - s->t);
  h = fmin(s->h_next, t1 - s->t);
  if (h < hmin)
    return ODB_FAIL(ODB_ERR_STEP_SIZE, "step size %g below hmin %g at t = "
                    "%.17g", h, hmin, s->t);
  memset(&v, 0, sizeof v);
  v.t1 = t1;
  v.t_eps = 1e-14 * fmax(fabs(t1), span);
  v.hmin = hmin;
  v.max_attempts = left;
  v.capped = *capped;
  /* a launch after the end returns at once (a few microseconds), a batch
     too short costs a round trip: two spare launches, and one in eight for
     the launches that rejections skip */
  want = ceil((t1 - s->t) / h);
  want += ceil(want / 8) + 2;
  v.launches = (int)fmin(fmin((double)*launches, want), (double)left);
  if (v.launches < 1) v.launches = 1;
  ODB_TRY(s->variant->advance(s, &v));
  if (*launches < 256) *launches *= 2;
  for (int k = 0; k < 2 && v.attempts > 0; ++k) {   /* as attempt() books */
    int stage0 = k == 0 ? v.first_stage0 : !v.fsal_ready;
    double m = k == 0 ? 1.0 : (double)(v.attempts - 1);   /* first, rest */
    s->variant->traffic(s, stage0, &r, &w);
    s->stats.rbytes += m * r;
    s->stats.wbytes += m * w;
    s->stats.flops += m * step_flops(s, stage0);
    s->stats.nfev += (long)m * (s->method->s - (stage0 ? 0 : 1));
  }
  s->stats.steps += v.attempts;
  s->stats.accepted += v.accepted;
  s->stats.rejected += v.rejected;
  if (v.attempts > 0) {
    s->stats.h = v.h_last;
    s->stats.err_last = v.err;
  }
  if (v.swapped) {
    double *tmp = s->y;
    s->y = s->ynew;
    s->ynew = tmp;
    if (v.fsal_ready) {
      tmp = s->F[0];
      s->F[0] = s->F[s->method->s - 1];
      s->F[s->method->s - 1] = tmp;
    }
  }
  s->t = v.t;
  s->h_next = v.h_next;
  s->fsal_ready = v.fsal_ready;
  *capped = v.capped;
  return ODB_OK;
}

/* {====== stops: the times where f jumps (odb_problem.tstops, a call's) */

/* The first of a[0..n) (ascending) that is at least t; INFINITY if none. */
static double first_from(const double *a, int n, double t) {
  int lo = 0, hi = a ? n : 0, len = hi;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < len ? a[lo] : INFINITY;
}

/* The first stop at or after t: the problem's or one of x[0..nx). */
static double stop_from(const odb_solver *s, const double *x, int nx,
                        double t) {
  return fmin(first_from(s->problem->tstops, s->problem->ntstops, t),
              first_from(x, nx, t));
}

/*
** A step never starts on a stop: f there belongs to the piece before it,
** and the first stage of the next step would read that piece. When s->t
** is a stop, s moves on to the next double up (the state's change over
** that one unit in the last place, |f| ulp, is below any tolerance) and
** chooses its step size again as at a start (h_next = 0: the first-step
** algorithm; FSAL's f(t, y) dropped): the step size and F_0 belong to the
** other piece of f. Returns 1 when it did.
*/
static int leave_stop(odb_solver *s, const double *x, int nx) {
  if (stop_from(s, x, nx, s->t) != s->t) return 0;
  s->t = nextafter(s->t, INFINITY);
  s->h_next = 0;
  s->fsal_ready = 0;
  return 1;
}

/* ODB_OK when x[0..nx) are finite and ascending. */
static odb_status stops_check(const double *x, int nx) {
  if (nx < 0 || (nx > 0 && !x))
    return ODB_FAIL(ODB_ERR_ARG, "stops: %d given without a list", nx);
  for (int i = 0; i < nx; ++i) {
    if (!isfinite(x[i]))
      return ODB_FAIL(ODB_ERR_ARG, "stop %d is %g: stops must be finite",
                      i + 1, x[i]);
    if (i > 0 && !(x[i] >= x[i - 1]))
      return ODB_FAIL(ODB_ERR_ARG, "stop %d (%.17g) is below stop %d "
                      "(%.17g): stops must be ascending", i + 1, x[i], i,
                      x[i - 1]);
  }
  return ODB_OK;
}

/* }====== */

/*
** Records the time and status reached in s->stats and, when info is not
** NULL, gives the figures of the calls since before (counts and sums as
** differences; t, h, err_last and status as they are now).
*/
static void finish_stats(odb_solver *s, odb_status st,
                         const odb_solve_stats *before,
                         odb_solve_stats *info) {
  s->stats.t = s->t;
  s->stats.status = st;
  if (!info) return;
  *info = s->stats;
  info->steps -= before->steps;
  info->accepted -= before->accepted;
  info->rejected -= before->rejected;
  info->nfev -= before->nfev;
  info->seconds -= before->seconds;
  info->rbytes -= before->rbytes;
  info->wbytes -= before->wbytes;
  info->flops -= before->flops;
}

odb_status odb_solver_step(odb_solver *s, double h, odb_solve_stats *info) {
  odb_solve_stats before = s->stats;
  odb_status st;
  double t0 = odb_clock_now();
  if (h < 0 || !isfinite(h))
    return ODB_FAIL(ODB_ERR_ARG, "step size must be positive, got %g", h);
  if (h > 0) {
    st = fixed_step(s, h, 0);
  } else {   /* adaptive: not past the problem's next stop */
    double hmin = s->opts.hmin > 0 ? s->opts.hmin : 1e-300, stop, left;
    leave_stop(s, NULL, 0);
    stop = stop_from(s, NULL, 0, s->t);
    left = isfinite(stop) ? stop - s->t : 1e300;
    st = adaptive_step(s, left, hmin);
    if (st == ODB_OK && isfinite(stop) &&
        stop - s->t < 1e-14 * fmax(fabs(stop), left))
      s->t = stop;
  }
  s->stats.seconds += odb_clock_now() - t0;
  finish_stats(s, st, &before, info);
  return st;
}

/*
** One step of integrate's loop toward t1: fixed (h_fixed > 0, the last
** step shortened to land on t1) or adaptive capped at t1 - t; a sliver
** left below 1e-14 of the span merges into the step.
*/
static odb_status step_toward(odb_solver *s, double t1, double span,
                              double hmin) {
  double left = t1 - s->t, fixed = s->opts.h_fixed;
  odb_status st;
  if (fixed > 0) {
    int last = left < fixed * (1 + 1e-12);
    double h = last ? left : fixed;
    st = fixed_step(s, h, !last && s->opts.sync == ODB_SYNC_CALL);
    if (st == ODB_OK && last) s->t = t1;
    return st;
  }
  st = adaptive_step(s, left, hmin);
  if (st == ODB_OK && t1 - s->t < 1e-14 * fmax(fabs(t1), span)) s->t = t1;
  return st;
}

odb_status odb_solver_step_to(odb_solver *s, double t1,
                              odb_solve_stats *info) {
  odb_solve_stats before = s->stats;
  double span = t1 - s->t, t0 = odb_clock_now(), hmin, end;
  odb_status st;
  if (!(span > 0) || !isfinite(t1))
    return ODB_FAIL(ODB_ERR_ARG, "t1 (%g) must be greater than the current "
                    "time (%g)", t1, s->t);
  /* A state at t = -inf gives an infinite span and hmin: no step could
     ever reach t1. */
  if (!isfinite(s->t) || !isfinite(span))
    return ODB_FAIL(ODB_ERR_ARG, "the current time (%g) must be finite",
                    s->t);
  hmin = s->opts.hmin > 0 ? s->opts.hmin : 1e-14 * fmax(fabs(t1), span);
  leave_stop(s, NULL, 0);
  end = fmin(stop_from(s, NULL, 0, s->t), t1);
  if (!(s->t < t1) ||   /* t1 was the double after a stop */
      (end < t1 && end - s->t < 1e-14 * fmax(fabs(end), span))) {
    s->t = end;   /* a sliver before a stop, as step_toward merges one */
    st = ODB_OK;
  } else {
    st = step_toward(s, end, span, hmin);
  }
  s->stats.seconds += odb_clock_now() - t0;
  finish_stats(s, st, &before, info);
  return st;
}

/* See the header. */
void odb_solve_stats_delta(const odb_solve_stats *a, const odb_solve_stats *b,
                           odb_solve_stats *d) {
  *d = *b;
  d->steps = b->steps - a->steps;
  d->accepted = b->accepted - a->accepted;
  d->rejected = b->rejected - a->rejected;
  d->nfev = b->nfev - a->nfev;
  d->rbytes = b->rbytes - a->rbytes;
  d->wbytes = b->wbytes - a->wbytes;
  d->flops = b->flops - a->flops;
}

odb_status odb_solver_integrate(odb_solver *s, double t1,
                                odb_solve_stats *stats) {
  return odb_solver_integrate_stops(s, t1, NULL, 0, stats);
}

/*
** The loop runs one step (or one batch on the device) at a time toward the
** end of the current segment: the first stop after s->t, or t1. A sliver
** of a segment before a stop (below 1e-14 of the span) is merged away:
** s->t moves onto the stop without a step, as step_toward merges a
** sliver left before t1 into the step.
*/
odb_status odb_solver_integrate_stops(odb_solver *s, double t1,
                                      const double *x, int nx,
                                      odb_solve_stats *stats) {
  odb_solve_stats start = s->stats, cur;
  odb_status st = ODB_OK;
  double span = t1 - s->t, hmin, t0 = odb_clock_now(), last_pub = t0;
  int dev = device_control(s), launches = 16, capped = 0;
  if (!(span > 0) || !isfinite(t1))
    return ODB_FAIL(ODB_ERR_ARG, "t1 (%g) must be greater than the current "
                    "time (%g)", t1, s->t);
  /* A state at t = -inf gives an infinite span and hmin: no step could
     ever reach t1. */
  if (!isfinite(s->t) || !isfinite(span))
    return ODB_FAIL(ODB_ERR_ARG, "the current time (%g) must be finite",
                    s->t);
  ODB_TRY(stops_check(x, nx));
  hmin = s->opts.hmin > 0 ? s->opts.hmin : 1e-14 * fmax(fabs(t1), span);
  publish(s, ODB_EV_SOLVE_BEGIN, &s->stats, (double)s->n, t1);
  st = sync_check(s);   /* the variant may have changed since create */
  while (st == ODB_OK && s->t < t1) {
    long done = s->stats.steps - start.steps;
    double end;
    if (done >= s->opts.max_steps) {
      st = ODB_FAIL(ODB_ERR_MAX_STEPS, "%ld steps reached at t = %.17g",
                    s->opts.max_steps, s->t);
      break;
    }
    if (leave_stop(s, x, nx)) capped = 0;   /* a new segment */
    if (!(s->t < t1)) break;   /* t1 was the double after a stop */
    end = fmin(stop_from(s, x, nx, s->t), t1);
    if (end < t1 && end - s->t < 1e-14 * fmax(fabs(end), span)) {
      s->t = end;
      continue;
    }
    st = dev ? device_batch(s, end, span, hmin, s->opts.max_steps - done,
                            &launches, &capped)
             : step_toward(s, end, span, hmin);
    if (st != ODB_OK) break;
    if (odb_ctx_stop_requested(s->ctx)) {
      st = ODB_FAIL(ODB_INTERRUPTED, "interrupted at t = %.17g", s->t);
      break;
    }
    t0 += odb_ctx_wait_if_paused(s->ctx);   /* a pause is not run time */
    if (s->ctx && odb_clock_now() - last_pub > 0.05) {
      last_pub = odb_clock_now();
      odb_solve_stats_delta(&start, &s->stats, &cur);
      publish(s, ODB_EV_STEP, &cur, 0, 0);
    }
  }
  s->stats.seconds += odb_clock_now() - t0;
  if (st == ODB_OK) st = final_check(s);
  s->stats.t = s->t;
  s->stats.status = st;
  odb_solve_stats_delta(&start, &s->stats, stats);
  stats->seconds = odb_clock_now() - t0;
  publish(s, ODB_EV_STEP, stats, 0, 0);   /* the final totals */
  publish(s, ODB_EV_SOLVE_END, stats, stats->seconds,
          stats->seconds > 0 ? (stats->rbytes + stats->wbytes) /
                               stats->seconds * 1e-9 : 0);
  return st;
}
