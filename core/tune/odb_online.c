/* odb_online.c - online tuning during the first steps of a real integration. */
#include "odb_status.h"
#include "odb_event.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_team.h"
#include "odb_space.h"
#include "odb_clock.h"
#include "odb_measure.h"
#include "odb_tuner.h"
#include "odb_tunedb.h"
#include "odb_tune_solver.h"
#include "odb_blockmodel.h"
#include "odb_online.h"
#include "odb_stepcheck.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define PARK_WAIT  1.2e-3  /* odb_team's parked workers poll for 1 ms */
#define TRUST_GAIN 0.7     /* a passed candidate this much faster than the
                              reference becomes the reference */
#define MAX_TIMED  64      /* timed steps per candidate */
#define NBAR       32      /* team sizes whose barrier cost is kept */
#define WINDOW     256     /* components of one checked window */
#define MAX_FINAL  8       /* finalists */
#define TIE        0.10    /* finalists lie within 10% of the best */

struct odb_online {
  odb_solver *s;
  odb_space *space;
  odb_online_opts o;
  odb_tune_target target;
  odb_tuner *tuner;
  odb_model_opts mo;
  int ivariant, iblock, ithreads;
  int nvopt, ivopt[ODB_SOLVER_MAX_VOPTS];   /* variant options tuned */
  const odb_variant *start;      /* s's settings when the tuner was made */
  long start_block;
  int start_threads;
  odb_param_value *start_vopts;  /* a copy of s's options then (one block) */
  int start_nvopts;
  odb_param_value *vals;         /* a candidate's options (room for the
                                    start's and the tuned ones) */
  odb_solver *ref;               /* verification reference (lazily) */
  int ref_team;                  /* 1: the reference runs a thread team */
  double ref_T;                  /* its seconds per step, last verification */
  double *y0, *yc;               /* host scratch: state before, after */
  double *yr;                    /* host scratch: the reference's state
                                    after its step (odb_solver_get_state:
                                    a distributed or device reference keeps
                                    no whole host copy in r->y) */
  odb_stepcheck *check;          /* windowed checks; NULL: full steps */
  double wbuf[WINDOW];
  long nchecks;
  int bar_p[NBAR];
  double bar_s[NBAR];
  int nbar, tuned;
  odb_online_report rep;
  char size[160], method[64], family[64], params[192];
};

/* {====== small helpers */

/* Seconds on the monotonic clock. */
static double now(void) { return odb_clock_now(); }

/* Sleeps about sec seconds. */
static void sleep_for(double sec) {
  struct timespec ts;
  ts.tv_sec = (time_t)sec;
  ts.tv_nsec = (long)((sec - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* The variant called name (the injected lookup first). */
static const odb_variant *lookup(const odb_online *ol, const char *name) {
  if (ol->o.lookup) return ol->o.lookup(ol->o.lookup_ud, name);
  return odb_variant_find(name);
}

/*
** The maximum over the ranks of v[0..n) on every rank, in a run across
** ranks (odb_tune_ranks, set by dist/); nothing in one process. Every
** figure that steers the search (a step's seconds, a check's error, a
** barrier's cost) goes through it, so that each rank takes the slowest
** rank's figures, makes the same choices and switches at the same steps:
** the distributed variants' exchanges, norms and gathers are collectives.
** Assumes every rank calls it at the same points, which holds while their
** choices agree; NaN is given as +inf (MPI's max of a NaN is undefined).
*/
static odb_status across_max(double *v, int n, const char *what) {
  const odb_tune_ranks *rk = odb_tune_get_ranks();
  if (!rk || rk->ranks <= 1) return ODB_OK;
  for (int i = 0; i < n; ++i)
    if (isnan(v[i])) v[i] = INFINITY;
  return rk->max(v, n, what);
}

/* A copy of the options g[0..n) in one block, names and strings after the
   values; NULL when n is 0. */
static odb_status copy_options(const odb_param_value *g, int n,
                               odb_param_value **out) {
  size_t bytes = (size_t)n * sizeof **out;
  char *text;
  *out = NULL;
  if (n <= 0) return ODB_OK;
  for (int i = 0; i < n; ++i)     /* a solver's own few: no overflow */
    bytes += strlen(g[i].name) + 1 + (g[i].str ? strlen(g[i].str) + 1 : 0);
  *out = malloc(bytes);
  if (!*out) return ODB_FAIL(ODB_ERR_NOMEM, "online tuner: options");
  text = (char *)(*out + n);
  for (int i = 0; i < n; ++i) {
    (*out)[i] = g[i];
    (*out)[i].name = strcpy(text, g[i].name);
    text += strlen(text) + 1;
    if (g[i].str) {
      (*out)[i].str = strcpy(text, g[i].str);
      text += strlen(text) + 1;
    }
  }
  return ODB_OK;
}

/* 1 when the option lists a[0..na) and b[0..nb) are the same, in order. */
static int same_options(const odb_param_value *a, int na,
                        const odb_param_value *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; ++i)
    if (strcmp(a[i].name, b[i].name) != 0 || a[i].num != b[i].num ||
        !a[i].str != !b[i].str || (a[i].str && strcmp(a[i].str, b[i].str)))
      return 0;
  return 1;
}

/* Relative max-norm error of y against yref (NaN counts as infinite). */
static double rel_err(const double *y, const double *yref, long n) {
  double num = 0, den = 0;
  for (long i = 0; i < n; ++i) {
    double d = fabs(y[i] - yref[i]);
    if (d > num || isnan(d)) num = isnan(d) ? INFINITY : d;
    if (fabs(yref[i]) > den) den = fabs(yref[i]);
  }
  return den > 0 ? num / den : num;
}

/* Statuses that mark one candidate failed without ending the tuning. */
static int soft_failure(odb_status st) {
  return st == ODB_ERR_UNSUPPORTED || st == ODB_ERR_NOMEM ||
         st == ODB_ERR_BACKEND || st == ODB_ERR_NONFINITE ||
         st == ODB_ERR_STEP_SIZE || st == ODB_ERR_MAX_STEPS;
}

/* Marks ev failed with the last message; returns st when it is fatal. */
static odb_status fail_eval(odb_tune_eval *ev, odb_status st,
                            const char *what) {
  const char *e = odb_last_error();
  ev->status = ODB_TUNE_FAILED;
  snprintf(ev->msg, sizeof ev->msg, "%s: %s", what,
           e && *e ? e : odb_status_str(st));
  return soft_failure(st) ? ODB_OK : st;
}

/* Threads of the team variant v runs with `threads` (1: no team). */
static int team_size(const odb_online *ol, const odb_variant *v,
                     int threads) {
  const odb_bm_variant *bv = odb_bm_variant_find(v->name);
  int par = bv ? bv->parallel : strncmp(v->name, "par_", 4) == 0;
  int cores = ol->s->ctx && ol->s->ctx->topo.cores > 0
                  ? ol->s->ctx->topo.cores : 1;
  if (!par) return 1;
  return threads > 0 ? threads : cores;
}

/* 1 when variant v with threads runs a team of more than one thread. */
static int runs_team(const odb_online *ol, const odb_variant *v,
                     int threads) {
  return team_size(ol, v, threads) > 1;
}

/* }====== */

/* {====== the space and the target */

/* The constraint: the variant runs on the solver's backend and applies. */
static int variant_applies(const odb_space *sp, const odb_config *c,
                           void *ud) {
  odb_online *ol = ud;
  const odb_variant *v = lookup(ol, odb_space_str(sp, ol->ivariant,
                                                  c->idx[ol->ivariant]));
  char why[160];
  if (!v || strcmp(v->backend, ol->s->backend->ops->name) != 0) return 0;
  return v->applies(ol->s->problem, ol->s->method, why, sizeof why);
}

/* The variant of configuration c (the starting one without a variant
   parameter). */
static const odb_variant *config_variant(const odb_online *ol,
                                         const odb_config *c) {
  if (ol->ivariant < 0) return ol->start;
  return lookup(ol, odb_space_str(ol->space, ol->ivariant,
                                  c->idx[ol->ivariant]));
}

/* The constraint of odb_tune_vopts_apply for the online space. */
static int vopts_apply(const odb_space *sp, const odb_config *c, void *ud) {
  const odb_online *ol = ud;
  return odb_tune_vopts_apply(sp, c, config_variant(ol, c), ol->ivopt,
                              ol->nvopt);
}

/* Fills the key: the family says "online" so offline timings never mix. */
static void fill_key(odb_online *ol) {
  odb_solver *s = ol->s;
  size_t used;
  odb_problem_key(s->problem, ol->size, sizeof ol->size);
  if (s->method->kind == ODB_METHOD_PIRK)
    snprintf(ol->method, sizeof ol->method, "%s m=%d", s->method->name,
             s->m);
  else
    snprintf(ol->method, sizeof ol->method, "%s", s->method->name);
  snprintf(ol->family, sizeof ol->family, "solver/%s online",
           s->backend->ops->name);
  used = (size_t)snprintf(ol->params, sizeof ol->params, "warmup=%d "
                          "timed=%d", ol->o.warmup, ol->o.timed);
  if (ol->ivariant < 0 && used < sizeof ol->params)
    used += (size_t)snprintf(ol->params + used, sizeof ol->params - used,
                             " variant=%s", ol->start->name);
  if (ol->iblock < 0 && used < sizeof ol->params)
    used += (size_t)snprintf(ol->params + used, sizeof ol->params - used,
                             " block=%ld", ol->start_block);
  if (ol->ithreads < 0 && used < sizeof ol->params)
    used += (size_t)snprintf(ol->params + used, sizeof ol->params - used,
                             " threads=%d", ol->start_threads);
  odb_tune_key_extras(ol->params, sizeof ol->params, used, &s->opts,
                      ol->space, ol->ivopt, ol->nvopt);
  ol->target.key.problem = s->problem->type->name;
  ol->target.key.size = ol->size;
  ol->target.key.method = ol->method;
  ol->target.key.family = ol->family;
  ol->target.key.params = ol->params;
  ol->target.key.code_hash = odb_engine_code_hash();
}

/* T_bar(p) for the strategy: given, or measured once per p (timed apart). */
static double barrier_cost(void *ud, int p) {
  odb_online *ol = ud;
  double sec = 0, t0;
  if (ol->o.barrier > 0) return ol->o.barrier;
  for (int i = 0; i < ol->nbar; ++i)
    if (ol->bar_p[i] == p) return ol->bar_s[i];
  t0 = now();
  if (odb_barrier_cost(ol->s->ctx ? &ol->s->ctx->topo : NULL, p,
                       ODB_BARRIER_FLAGS, &sec) != ODB_OK) {
    odb_ctx_log(ol->s->ctx, ODB_LOG_WARN, "online: barrier cost with %d "
                "threads: %s; no pruning", p, odb_last_error());
    odb_clear_error();
    sec = 0;
  }
  /* the pruning must agree on every rank: the slowest rank's barrier */
  if (across_max(&sec, 1, "MPI_Allreduce (online tuner: barrier cost)") !=
      ODB_OK) {
    odb_ctx_log(ol->s->ctx, ODB_LOG_WARN, "online: %s", odb_last_error());
    odb_clear_error();
  }
  ol->rep.profile_seconds += now() - t0;
  if (ol->nbar < NBAR) {
    ol->bar_p[ol->nbar] = p;
    ol->bar_s[ol->nbar++] = sec;
  }
  return sec;
}

/* }====== */

/* {====== create and destroy */

/*
** Keeps freed work arrays in the process's heap. Each switch frees the old
** variant's arrays and allocates the new one's; glibc maps arrays over its
** (adaptive) threshold afresh and returns freed heap tops to the system, so
** without this the first step after a switch pays the page faults of every
** array again, several times the step's own work for a large BRUSS2D. With
** the threshold raised to 32 MiB (glibc's largest), arrays up to that size
** reuse memory already touched. Assumes glibc; elsewhere nothing changes.
** Process-wide and lasting.
*/
static void keep_freed_memory(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

/* Fills the defaults of the options. */
static void set_opts(odb_online *ol, const odb_online_opts *o) {
  if (o) ol->o = *o;
  if (!ol->o.strategy) ol->o.strategy = "online";
  if (ol->o.warmup == 0) ol->o.warmup = 1;
  if (ol->o.warmup < 0) ol->o.warmup = 0;
  if (ol->o.timed <= 0) ol->o.timed = 1;
  if (ol->o.timed > MAX_TIMED) ol->o.timed = MAX_TIMED;
  if (ol->o.hopeless == 0) ol->o.hopeless = 2.0;
  if (ol->o.finalists == 0) ol->o.finalists = 3;
  if (ol->o.finalists > MAX_FINAL) ol->o.finalists = MAX_FINAL;
}

/*
** Chooses windowed checks (the default) when four windows with their reach
** cover at most half of the components: an access distance well below n.
*/
static odb_status make_check(odb_online *ol) {
  const odb_solver *s = ol->s;
  long d = s->problem->d < s->n ? s->problem->d : s->n;
  long R = d * (s->method->kind == ODB_METHOD_PIRK ? s->m + 1 : s->method->s);
  if (ol->o.verify != 0 || ol->o.verify_fn ||
      8 * ((double)WINDOW + 2.0 * (double)R) > (double)s->n)
    return ODB_OK;
  return odb_stepcheck_create(s, WINDOW, &ol->check);
}

/* Checks the space, adds the constraint and makes the tuner. */
static odb_status make_tuner(odb_online *ol) {
  static const char *const deps[] = {"variant", NULL};
  odb_tune_opts to;
  odb_solver_space w;
  ODB_TRY(odb_solver_space_check(ol->space, ol->o.lookup, ol->o.lookup_ud,
                                 ol->s->variant, &w));
  ol->ivariant = w.ivariant;
  ol->iblock = w.iblock;
  ol->ithreads = w.ithreads;
  ol->nvopt = w.nvopt;
  memcpy(ol->ivopt, w.ivopt, sizeof ol->ivopt);
  ODB_TRY(copy_options(ol->s->opts.vopts, ol->s->opts.nvopts,
                       &ol->start_vopts));
  ol->start_nvopts = ol->s->opts.nvopts;
  if (ol->start_nvopts + ol->nvopt > 0) {
    ol->vals = malloc((size_t)(ol->start_nvopts + ol->nvopt) *
                      sizeof *ol->vals);
    if (!ol->vals) return ODB_FAIL(ODB_ERR_NOMEM, "online tuner: options");
  }
  if (ol->nvopt > 0)
    ODB_TRY(odb_space_add_constraint(ol->space, vopts_apply, ol, NULL,
                                     "the variant takes the options"));
  if (ol->ivariant >= 0)
    ODB_TRY(odb_space_add_constraint(ol->space, variant_applies, ol, deps,
                                     "the variant applies"));
  ol->target.space = ol->space;
  ol->target.ud = ol;
  ol->target.solver = ol->s;
  fill_key(ol);
  ol->mo.steps_per_eval = 1;
  ol->mo.barrier = barrier_cost;
  ol->mo.barrier_ud = ol;
  ol->mo.hopeless = ol->o.hopeless;
  ol->mo.report = &ol->rep.model;
  memset(&to, 0, sizeof to);
  to.strategy = ol->o.strategy;
  to.strategy_opts = strcmp(ol->o.strategy, "online") == 0 ||
                     strcmp(ol->o.strategy, "model") == 0 ? &ol->mo : NULL;
  to.budget = ol->o.budget;
  to.has_seed = ol->o.has_seed;
  to.seed = ol->o.seed;
  to.verify = -1;                 /* the driver verifies itself */
  to.db = ol->o.db;
  to.on_eval = ol->o.on_eval;
  to.on_eval_ud = ol->o.on_eval_ud;
  to.label = ol->o.label;
  return odb_tuner_create(ol->s->ctx, &ol->target, &to, &ol->tuner);
}

odb_status odb_online_create(odb_solver *s, odb_space *space,
                             const odb_online_opts *o, odb_online **out) {
  odb_online *ol;
  size_t bytes;
  odb_status st;
  *out = NULL;
  if (!s || !space)
    return ODB_FAIL(ODB_ERR_ARG, "online tuning needs a solver and a space");
  ol = calloc(1, sizeof *ol);
  if (!ol) return ODB_FAIL(ODB_ERR_NOMEM, "online tuner");
  ol->s = s;
  ol->space = space;
  ol->ivariant = ol->iblock = ol->ithreads = -1;
  ol->start = s->variant;
  ol->start_block = s->opts.block;
  ol->start_threads = s->opts.threads;
  ol->ref_T = INFINITY;
  set_opts(ol, o);
  keep_freed_memory();
  bytes = (size_t)s->n * sizeof(double);
  ol->y0 = malloc(bytes);
  ol->yc = malloc(bytes);
  ol->yr = malloc(bytes);
  if (!ol->y0 || !ol->yc || !ol->yr) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "online tuner: 3 x %zu bytes", bytes);
    goto fail;
  }
  st = make_tuner(ol);
  if (st == ODB_OK) st = make_check(ol);
  if (st != ODB_OK) goto fail;
  *out = ol;
  return ODB_OK;
fail:
  odb_online_destroy(ol);
  return st;
}

void odb_online_destroy(odb_online *ol) {
  if (!ol) return;
  odb_tuner_destroy(ol->tuner);
  odb_solver_destroy(ol->ref);
  odb_stepcheck_destroy(ol->check);
  free(ol->start_vopts);
  free(ol->vals);
  free(ol->y0);
  free(ol->yc);
  free(ol->yr);
  free(ol);
}

odb_tuner *odb_online_tuner(const odb_online *ol) { return ol->tuner; }

int odb_online_windowed(const odb_online *ol) { return ol->check != NULL; }

void odb_online_get_report(const odb_online *ol, odb_online_report *out) {
  *out = ol->rep;
}

/* }====== */

/* {====== switching and verifying */

/*
** The variant, block, threads and variant options of configuration c, or
** of the starting settings when c is NULL. The options (into ol->vals,
** valid until the next call) are, as for odb_tune_solver: the solver's
** starting options that the variant declares and the space does not tune,
** then the tuned ones the variant declares with c's values.
*/
typedef struct settings {
  const odb_variant *v;
  long block;
  int threads;
  const odb_param_value *vopts;
  int nvopts;
} settings;

static void settings_of(odb_online *ol, const odb_config *c, settings *st) {
  const odb_space *sp = ol->space;
  const odb_variant *v = c ? config_variant(ol, c) : ol->start;
  int n = 0;
  st->v = v;
  st->block = c && ol->iblock >= 0
                  ? odb_space_int(sp, ol->iblock, c->idx[ol->iblock])
                  : ol->start_block;
  st->threads = c && ol->ithreads >= 0
                    ? (int)odb_space_int(sp, ol->ithreads,
                                         c->idx[ol->ithreads])
                    : ol->start_threads;
  for (int k = 0; v && k < ol->start_nvopts; ++k) {
    const char *name = ol->start_vopts[k].name;
    int tuned = 0;
    for (int j = 0; c && j < ol->nvopt; ++j)
      tuned |= strcmp(odb_space_name(sp, ol->ivopt[j]), name) == 0;
    if (!tuned && odb_param_find(v->opts, v->nopts, name) >= 0)
      ol->vals[n++] = ol->start_vopts[k];
  }
  for (int j = 0; c && v && j < ol->nvopt; ++j) {
    int i = ol->ivopt[j];
    const char *name = odb_space_name(sp, i);
    if (odb_param_find(v->opts, v->nopts, name) < 0) continue;
    ol->vals[n].name = name;
    ol->vals[n].num = (double)odb_space_int(sp, i, c->idx[i]);
    ol->vals[n++].str = NULL;
  }
  st->vopts = n > 0 ? ol->vals : NULL;
  st->nvopts = n;
}

/* 1 when solver r runs the settings st (options included). */
static int runs_settings(const odb_solver *r, const settings *st) {
  return r->variant == st->v && r->opts.block == st->block &&
         r->opts.threads == st->threads &&
         same_options(r->opts.vopts, r->opts.nvopts, st->vopts, st->nvopts);
}

/*
** Puts s on the settings st unless it runs them already: with
** odb_solver_set_variant_opts, which leaves s as it was when the variant
** or its options refuse (a distributed variant whose layout does not fit
** on the active ranks of st).
*/
static odb_status switch_to(odb_online *ol, const settings *st) {
  odb_solver *s = ol->s;
  double t0 = now();
  odb_status r = ODB_OK;
  if (!runs_settings(s, st))
    r = odb_solver_set_variant_opts(s, st->v, st->block, st->threads,
                                    st->vopts, st->nvopts);
  ol->rep.switch_seconds += now() - t0;
  return r;
}

/* The reference solver (made at first use) on the CPU backend. */
static odb_status ensure_ref(odb_online *ol) {
  odb_solver *s = ol->s;
  odb_solver_opts o = s->opts;
  odb_backend *cpu = s->ctx ? odb_ctx_backend(s->ctx, "cpu") : NULL;
  const char *name = ol->o.reference ? ol->o.reference
                     : s->method->kind == ODB_METHOD_PIRK ? "A" : "plain";
  if (ol->ref) return ODB_OK;
  o.block = 0;
  o.threads = 0;                  /* h_fixed stays: redo_with_ref steps */
  o.vopts = NULL;                 /* s's variant's options, not the CPU's */
  o.nvopts = 0;
  return odb_solver_create(s->ctx, s->problem, s->method,
                           cpu ? cpu : s->backend, name, &o, &ol->ref);
}

/* 1 when the reference runs exactly the settings (nothing to verify). */
static int same_as_ref(const odb_online *ol, const settings *st) {
  const odb_solver *r = ol->ref;
  return r && runs_settings(r, st) && r->backend == ol->s->backend;
}

/* Where the first step of a candidate started, its h and the step proposed
   before it (for verification and a redo). */
typedef struct first_step {
  double t0, h, h_next0;
  int taken;
} first_step;

/*
** Puts s where the reference's own step from the first step's start takes
** it (state, time and proposed next step, as an uninterrupted run of the
** reference variant would be).
*/
static odb_status redo_with_ref(odb_online *ol, const first_step *fs,
                                double t1) {
  odb_solver *s = ol->s, *r = ol->ref;
  odb_solve_stats ri;
  odb_solver_set_state(r, fs->t0, ol->y0);
  r->h_next = fs->h_next0;
  ODB_TRY(odb_solver_step_to(r, t1, &ri));
  ODB_TRY(odb_solver_get_state(r, ol->yr));
  odb_solver_set_state(s, r->t, ol->yr);
  s->h_next = r->h_next;
  return ODB_OK;
}

/*
** The windows a check compares (at most 4 into w): both ends, one around a
** tile boundary of the candidate (block B) and, for a team of p, one around
** a thread boundary; the interior positions move from check to check.
*/
static int check_windows(odb_online *ol, long B, int p, long w[4][2]) {
  long n = ol->s->n, W = WINDOW < n ? WINDOW : n, c, k = ol->nchecks++;
  double frac = fmod(0.5 + 0.6180339887498949 * (double)k, 1.0);
  int nw = 0;
  w[nw][0] = 0;
  w[nw++][1] = W;
  w[nw][0] = n - W;
  w[nw++][1] = n;
  c = B > 0 && B < n ? (long)(frac * (double)n / (double)B) * B
                     : (long)(frac * (double)n);
  if (p > 1) {
    long lo, hi;
    odb_team_range(n, p, 1 + (int)(k % (p - 1)), &lo, &hi);
    w[nw][0] = lo;
    w[nw++][1] = lo;
  }
  w[nw][0] = c;
  w[nw++][1] = c;
  for (int i = 2; i < nw; ++i) {             /* centre W on the boundary */
    long a = w[i][0] - W / 2;
    if (a < 0) a = 0;
    if (a > n - W) a = n - W;
    w[i][0] = a;
    w[i][1] = a + W;
  }
  return nw;
}

/* The windowed check of the first step: err and tol into ev. */
static odb_status compare_windows(odb_online *ol, const first_step *fs,
                                  long B, int p, odb_tune_eval *ev) {
  odb_solver *s = ol->s;
  long w[4][2];
  int nw = check_windows(ol, B, p, w);
  double num = 0, den = 0;
  for (int i = 0; i < nw; ++i) {
    ODB_TRY(odb_stepcheck_window(ol->check, fs->t0, fs->h, ol->y0, w[i][0],
                                 w[i][1], ol->wbuf));
    for (long j = w[i][0]; j < w[i][1]; ++j) {
      double r = ol->wbuf[j - w[i][0]], d = fabs(ol->yc[j] - r);
      if (d > num || isnan(d)) num = isnan(d) ? INFINITY : d;
      if (fabs(r) > den) den = fabs(r);
    }
  }
  ev->err = den > 0 ? num / den : num;
  ev->tol = odb_tune_ode_tolerance(1, s->method->s, s->m > 0 ? s->m : 1);
  return ODB_OK;
}

/* The full check: the reference solver takes the same step. */
static odb_status compare_full(odb_online *ol, const odb_config *c,
                               const first_step *fs, odb_tune_eval *ev) {
  odb_solver *s = ol->s, *r = ol->ref;
  odb_solve_stats ri;
  odb_solver_set_state(r, fs->t0, ol->y0);
  ODB_TRY(odb_solver_step(r, fs->h, &ri));
  ODB_TRY(across_max(&ri.seconds, 1, "MPI_Allreduce (online tuner: the "
                     "reference's seconds)"));
  ol->ref_T = ri.seconds;
  ODB_TRY(odb_solver_get_state(r, ol->yr));
  if (ol->ref_team) sleep_for(PARK_WAIT);
  if (ol->o.verify_fn)
    return ol->o.verify_fn(ol->o.verify_ud, c, ol->yc, ol->yr, s->n,
                           &ev->err, &ev->tol);
  ev->err = rel_err(ol->yc, ol->yr, s->n);
  ev->tol = odb_tune_ode_tolerance(1, s->method->s, s->m > 0 ? s->m : 1);
  return ODB_OK;
}

/*
** Compares the first step of a candidate (fs; the state before in y0,
** after in yc) with the reference, on windows or in full. On a failure
** sets ev rejected and redoes the step with the reference solver (the
** steps the candidate took after it are dropped). Returns a fatal status
** or ODB_OK.
*/
static odb_status verify_step(odb_online *ol, const odb_config *c,
                              const first_step *fs, double t1, long later,
                              long B, int p, odb_tune_eval *ev) {
  double tv = now();
  odb_status st = ol->check ? compare_windows(ol, fs, B, p, ev)
                            : compare_full(ol, c, fs, ev);
  if (st == ODB_OK) {   /* every rank judges by the worst rank's check */
    double v[2] = {ev->err, -ev->tol};
    st = across_max(v, 2, "MPI_Allreduce (online tuner: a check's error)");
    ev->err = v[0];
    ev->tol = -v[1];
  }
  if (st == ODB_OK && !(ev->err <= ev->tol)) {
    ev->status = ODB_TUNE_REJECTED;
    snprintf(ev->msg, sizeof ev->msg, "error %.3g exceeds the tolerance "
             "%.3g; the reference's step was taken instead", ev->err,
             ev->tol);
    ol->rep.steps -= later;
    st = ensure_ref(ol);
    if (st == ODB_OK) st = redo_with_ref(ol, fs, t1);
  }
  ol->rep.verify_seconds += now() - tv;
  return st == ODB_OK ? ODB_OK : fail_eval(ev, st, "verify");
}

/* A candidate that passed and is much faster becomes the reference. */
static void maybe_trust(odb_online *ol, const settings *st,
                        double per_step) {
  double t0 = now();
  if (!ol->ref || !(per_step < TRUST_GAIN * ol->ref_T)) return;
  if (odb_solver_set_variant_opts(ol->ref, st->v, st->block, st->threads,
                                  st->vopts, st->nvopts) == ODB_OK)
    ol->ref_team = runs_team(ol, st->v, st->threads);
  else
    odb_clear_error();          /* the old reference stays */
  ol->ref_T = per_step;
  ol->rep.verify_seconds += now() - t0;
}

/* }====== */

/* {====== one candidate */

/*
** One step of s toward t1; adds its figures to the report. Across ranks
** the step's seconds are the slowest rank's (the step itself agrees on
** every rank: the distributed variants' error norm is the same bits).
*/
static odb_status take_step(odb_online *ol, double t1,
                            odb_solve_stats *info) {
  odb_solver *s = ol->s;
  double h_next = s->h_next;
  odb_status st = odb_solver_step_to(s, t1, info);
  ol->rep.attempts += info->steps;
  if (st != ODB_OK) {
    ol->rep.step_seconds += info->seconds;
    s->h_next = h_next;          /* s->y and s->t are unchanged */
    return st;
  }
  ol->rep.steps += info->accepted;
  st = across_max(&info->seconds, 1, "MPI_Allreduce (online tuner: a "
                  "step's seconds)");
  ol->rep.step_seconds += info->seconds;
  return st;
}

/*
** The steps of a candidate: warm-up steps (the first one's time decides
** the hopeless rule), then timed ones into samples. Saves the states
** around the first step when verifying. Returns the number of samples, or
** -1 with ev failed (a fatal status in *st).
*/
static int run_steps(odb_online *ol, double t1, int verify, double *warm,
                     double *samples, first_step *fs, odb_tune_eval *ev,
                     odb_status *st) {
  odb_solver *s = ol->s;
  const odb_tune_eval *best = odb_tuner_best(ol->tuner);
  int ns = 0, nsteps = ol->o.warmup + ol->o.timed;
  *st = ODB_OK;
  for (int k = 0; k < nsteps && s->t < t1; ++k) {
    odb_solve_stats info;
    double ts = s->t, hn = s->h_next, per;
    if (k == 0 && verify && (*st = odb_solver_get_state(s, ol->y0)) != ODB_OK) {
      *st = fail_eval(ev, *st, "state");
      return -1;
    }
    if ((*st = take_step(ol, t1, &info)) != ODB_OK) {
      *st = fail_eval(ev, *st, "step");
      return -1;
    }
    if (k == 0 && verify) {
      *fs = (first_step){ts, info.h, hn, 1};
      if ((*st = odb_solver_get_state(s, ol->yc)) != ODB_OK) {
        *st = fail_eval(ev, *st, "state");
        return -1;
      }
    }
    per = info.seconds / (double)(info.steps > 0 ? info.steps : 1);
    if (k < ol->o.warmup) {
      ol->rep.warmup_steps++;
      *warm = per;
      if (best && ol->o.hopeless > 0 && per > ol->o.hopeless * best->m.median)
        break;                   /* far behind even allowing for the cold */
    } else {
      samples[ns++] = per;
    }
  }
  return ns;
}

/*
** Runs candidate c: switch, warm-up and timed steps, then the check of
** its first step (after the timed steps, so that the reference's step does
** not stir the caches in between). Fills ev; returns a fatal status or
** ODB_OK.
*/
static odb_status evaluate(odb_online *ol, const odb_config *c, double t1,
                           odb_tune_eval *ev) {
  settings set;
  double samples[MAX_TIMED], t0 = now(), warm = NAN;
  first_step fs = {0, 0, 0, 0};
  int ns, verify;
  long steps0 = ol->rep.steps;
  odb_status st;
  memset(ev, 0, sizeof *ev);
  ev->cfg = *c;
  ev->err = ev->tol = NAN;
  ev->m.median = ev->m.spread = NAN;
  settings_of(ol, c, &set);
  st = switch_to(ol, &set);
  if (st == ODB_OK && ol->o.verify >= 0 && !ol->check) st = ensure_ref(ol);
  if (st != ODB_OK) {
    ev->seconds = now() - t0;
    return fail_eval(ev, st, "setup");
  }
  verify = ol->o.verify >= 0 &&
           (ol->check || !same_as_ref(ol, &set));
  ns = run_steps(ol, t1, verify, &warm, samples, &fs, ev, &st);
  if (st != ODB_OK) return st;
  if (fs.taken) {   /* also after a later step failed: the first stays */
    st = verify_step(ol, c, &fs, t1, ol->rep.steps - steps0 - 1,
                     ol->s->block, team_size(ol, set.v, set.threads), ev);
    if (st != ODB_OK) return st;
  }
  if (ev->status == ODB_TUNE_OK && ns == 0 && !isnan(warm)) {
    samples[ns++] = warm;
    snprintf(ev->msg, sizeof ev->msg, "from its warm-up step alone (over "
             "%g x the best)", ol->o.hopeless);
  }
  if (ev->status == ODB_TUNE_OK && ns == 0) {
    ev->status = ODB_TUNE_SKIPPED;
    snprintf(ev->msg, sizeof ev->msg, "the integration reached t1 first");
  }
  if (ev->status == ODB_TUNE_OK) {
    odb_measure_summarize(samples, ns, &ev->m);
    ev->m.run_seconds = 0;
    for (int i = 0; i < ns; ++i) ev->m.run_seconds += samples[i];
    if (verify && !ol->check)
      maybe_trust(ol, &set, ev->m.median);
  }
  ev->seconds = now() - t0;
  ev->at = (double)time(NULL);
  return st;
}

/* }====== */

/* {====== the tuning phase */

/* qsort order of evaluations by median. */
static int cmp_median(const void *a, const void *b) {
  double x = (*(const odb_tune_eval *const *)a)->m.median;
  double y = (*(const odb_tune_eval *const *)b)->m.median;
  return (x > y) - (x < y);
}

/*
** The candidates timed in full (not from a warm-up step alone) whose
** median lies within TIE of the best, best first, at most max of them.
*/
static int pick_finalists(odb_online *ol, const odb_tune_eval **f, int max) {
  const odb_tune_eval *b = odb_tuner_best(ol->tuner);
  long n = odb_tuner_nevals(ol->tuner);
  int k = 0;
  for (long i = 0; b && i < n && k < MAX_FINAL; ++i) {
    const odb_tune_eval *e = odb_tuner_eval_at(ol->tuner, i);
    if (e->status == ODB_TUNE_OK && !e->msg[0] && !e->cached &&
        e->m.median <= (1 + TIE) * b->m.median)
      f[k++] = e;
  }
  qsort(f, (size_t)k, sizeof *f, cmp_median);
  return k < max ? k : max;
}

/*
** A second look (not in the thesis, which times each candidate once):
** single-step timings on a busy machine differ by 10% and more between
** runs, so the `finalists` best candidates within 10% of the best run
** again (a warm-up step after the switch, then `timed` steps, all real
** steps), the worst first, so that the likely winner runs last and needs
** no switch. Each one's earlier median counts as one more sample. The
** lowest median wins; *med gets it. Returns 0 when nothing was re-run.
*/
static int second_look(odb_online *ol, double t1, odb_config *win,
                       double *med) {
  const odb_tune_eval *f[MAX_FINAL];
  int nf = pick_finalists(ol, f, ol->o.finalists), found = 0;
  size_t used = 0;
  if (nf < 2) return 0;
  for (int i = nf - 1; i >= 0 && ol->s->t < t1; --i) {
    settings set;
    int ns;
    double samples[MAX_TIMED + 1], warm = NAN, mm;
    first_step fs;
    odb_tune_eval scratch;
    odb_status st;
    char text[96];
    memset(&scratch, 0, sizeof scratch);
    settings_of(ol, &f[i]->cfg, &set);
    if (switch_to(ol, &set) != ODB_OK) {
      odb_clear_error();
      continue;
    }
    ns = run_steps(ol, t1, 0, &warm, samples, &fs, &scratch, &st);
    if (st != ODB_OK || ns <= 0) {
      odb_clear_error();
      continue;
    }
    samples[ns++] = f[i]->m.median;
    mm = odb_median(samples, ns);
    odb_tuner_config_text(ol->tuner, &f[i]->cfg, text, sizeof text);
    if (used < sizeof ol->rep.finalists)
      used += (size_t)snprintf(ol->rep.finalists + used,
                               sizeof ol->rep.finalists - used,
                               "%s%s %.4g>%.4g", used ? "; " : "", text,
                               f[i]->m.median, mm);
    ol->rep.second_looks++;
    if (!found || mm < *med) {
      *win = f[i]->cfg;
      *med = mm;
      found = 1;
    }
  }
  return found;
}

/*
** Puts s on the winner (win, else the tuner's best, else its starting
** variant); fills the report.
*/
static odb_status finish(odb_online *ol, const odb_config *win, double med) {
  const odb_tune_eval *b = odb_tuner_best(ol->tuner);
  settings set;
  odb_status st;
  odb_tune_stats ts;
  if (!win && b) {
    win = &b->cfg;
    med = b->m.median;
  }
  settings_of(ol, win, &set);   /* win NULL: the starting settings */
  if (win) {
    odb_tuner_config_text(ol->tuner, win, ol->rep.winner,
                          sizeof ol->rep.winner);
    ol->rep.best_step = med;
  } else {
    ol->rep.best_step = NAN;
    odb_ctx_log(ol->s->ctx, ODB_LOG_WARN, "online: no candidate passed; "
                "%s stays", set.v->name);
  }
  st = switch_to(ol, &set);
  odb_tuner_stats(ol->tuner, &ts);
  ol->rep.candidates = ts.valid;
  ol->rep.evaluated = ts.evals;
  ol->rep.rejected = ts.rejected;
  ol->rep.failed = ts.failed;
  ol->rep.t = ol->s->t;
  return st;
}

/*
** The first step of an adaptive integration (no step proposed yet) picks
** the initial step size and may be far off (an accepted first step of
** CUSP near its stability limit differs between correct variants by 1e-8);
** as in the thesis (8.4.3) the solver's own variant takes it, untimed and
** unchecked, before the candidates.
*/
static odb_status first_step_of_run(odb_online *ol, double t1) {
  odb_solver *s = ol->s;
  odb_solve_stats info;
  if (s->h_next > 0 || s->opts.h_fixed > 0) return ODB_OK;
  ODB_TRY(take_step(ol, t1, &info));
  ol->rep.warmup_steps++;
  return ODB_OK;
}

odb_status odb_online_tune(odb_online *ol, double t1) {
  odb_solver *s = ol->s;
  odb_status st = ODB_OK, fst;
  double t_start = now(), paused = 0, med = NAN;
  odb_config win;
  if (ol->tuned)
    return ODB_FAIL(ODB_ERR_ARG, "online tuning runs once per tuner");
  if (!(t1 > s->t) || !isfinite(t1))
    return ODB_FAIL(ODB_ERR_ARG, "t1 (%g) must be greater than the current "
                    "time (%g)", t1, s->t);
  ol->tuned = 1;
  st = first_step_of_run(ol, t1);
  while (st == ODB_OK && s->t < t1) {
    odb_config c;
    odb_tune_eval ev;
    int done = 0;
    double stop;
    paused += odb_ctx_wait_if_paused(s->ctx);
    /* across ranks a stop seen by any rank stops every rank here, before
       the next candidate's collectives */
    stop = odb_ctx_stop_requested(s->ctx) ? 1.0 : 0.0;
    if ((st = across_max(&stop, 1, "MPI_Allreduce (online tuner: a stop "
                         "request)")) != ODB_OK)
      break;
    if (stop > 0) {
      st = ODB_FAIL(ODB_INTERRUPTED, "interrupted at t = %.17g", s->t);
      break;
    }
    if ((st = odb_tuner_next(ol->tuner, &c, &done)) != ODB_OK) break;
    if (done) {
      ol->rep.finished = 1;
      break;
    }
    if ((st = evaluate(ol, &c, t1, &ev)) != ODB_OK) break;
    if ((st = odb_tuner_tell(ol->tuner, &ev)) != ODB_OK) break;
  }
  if (s->t >= t1 && !ol->rep.finished)
    odb_ctx_log(s->ctx, ODB_LOG_INFO, "online: t1 reached after %ld tuning "
                "steps, before the search ended", ol->rep.steps);
  if (st == ODB_OK && ol->rep.finished && ol->o.finalists > 1 &&
      second_look(ol, t1, &win, &med))
    fst = finish(ol, &win, med);
  else
    fst = finish(ol, NULL, NAN);
  ol->rep.seconds = now() - t_start - paused - ol->rep.profile_seconds;
  ol->rep.overhead_steps = ol->rep.seconds / ol->rep.best_step -
                           (double)ol->rep.attempts;
  if (st == ODB_OK) st = fst;
  if (st == ODB_OK)
    odb_ctx_log(s->ctx, ODB_LOG_INFO, "online: %s chosen after %ld steps "
                "(%.3g s, %.3g s/step; overhead %.1f steps)",
                ol->rep.winner[0] ? ol->rep.winner : s->variant->name,
                ol->rep.steps, ol->rep.seconds, ol->rep.best_step,
                ol->rep.overhead_steps);
  return st;
}

odb_status odb_online_integrate(odb_online *ol, double t1,
                                odb_solve_stats *stats) {
  odb_solver *s = ol->s;
  odb_solve_stats start = s->stats, rest;
  double t0 = now();
  odb_status st = odb_online_tune(ol, t1);
  if (st == ODB_OK && s->t < t1) st = odb_solver_integrate(s, t1, &rest);
  if (stats) {
    odb_solve_stats_delta(&start, &s->stats, stats);
    stats->seconds = now() - t0;
    stats->status = st;
  }
  return st;
}

/* }====== */
