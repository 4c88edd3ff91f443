/* odb_tune_solver.c - tuning a solver's variant, block size and threads. */
#include "odb_status.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_space.h"
#include "odb_team.h"
#include "odb_clock.h"
#include "odb_measure.h"
#include "odb_tuner.h"
#include "odb_tunedb.h"
#include "odb_tune_solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct odb_tune_solver {
  odb_tune_target target;
  odb_solver *base;
  odb_space *space;
  odb_tune_solver_opts o;
  int ivariant, iblock, ithreads;   /* parameter indices, -1 when absent */
  int nvopt, ivopt[ODB_SOLVER_MAX_VOPTS];   /* the variant options tuned */
  odb_param_value *vals;            /* a configuration's options (setup) */
  double t0, h;
  double *y0, *yref, *y;            /* start, reference, scratch (n) */
  odb_solver *cur;                  /* the configuration's solver */
  char size[160], method[64], family[64], params[192];
};

/* {====== checking the space */

/* The variant called name in the registry. */
static const odb_variant *registry_lookup(void *ud, const char *name) {
  (void)ud;
  return odb_variant_find(name);
}

/* Checks parameter i of sp and notes its index in w. */
static odb_status check_param(const odb_space *sp, int i,
                              const odb_variant *(*lookup)(void *,
                                                           const char *),
                              void *ud, odb_solver_space *w) {
  const char *name = odb_space_name(sp, i);
  int is_enum = odb_space_is_enum(sp, i);
  if (strcmp(name, "variant") == 0 && is_enum) {
    w->ivariant = i;
    for (int k = 0; k < odb_space_nvalues(sp, i); ++k)
      if (!lookup(ud, odb_space_str(sp, i, k)))
        return ODB_FAIL(ODB_ERR_NAME, "unknown variant '%s' in the space",
                        odb_space_str(sp, i, k));
    return ODB_OK;
  }
  if ((strcmp(name, "block") == 0 || strcmp(name, "threads") == 0) &&
      !is_enum) {
    int hw, lim = odb_team_max_threads(&hw);
    if (odb_space_int(sp, i, 0) < 1)
      return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' must be at least 1, got "
                      "%ld", name, odb_space_int(sp, i, 0));
    for (int k = 0; name[0] == 't' && k < odb_space_nvalues(sp, i); ++k)
      if (odb_space_int(sp, i, k) > lim)
        return ODB_FAIL(ODB_ERR_ARG, "parameter 'threads': %ld is more than "
                        "%d, the most this machine takes (4 x its %d "
                        "hardware threads, at least %d)",
                        odb_space_int(sp, i, k), lim, hw,
                        ODB_MIN_THREAD_LIMIT);
    *(name[0] == 'b' ? &w->iblock : &w->ithreads) = i;
    return ODB_OK;
  }
  if (!is_enum && strcmp(name, "m") != 0 && strcmp(name, "variant") != 0 &&
      strcmp(name, "block") != 0 && strcmp(name, "threads") != 0) {
    if (w->nvopt == ODB_SOLVER_MAX_VOPTS)
      return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': a solver's space tunes "
                      "at most %d variant options", name,
                      ODB_SOLVER_MAX_VOPTS);
    w->ivopt[w->nvopt++] = i;   /* checked once the variants are known */
    return ODB_OK;
  }
  if (strcmp(name, "m") == 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter 'm' (corrector steps) changes "
                    "the method's order and cannot be tuned (allowed for a "
                    "solver: variant, block, threads)");
  if (strcmp(name, "variant") == 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter 'variant' must list variant "
                    "names");
  if (strcmp(name, "block") == 0 || strcmp(name, "threads") == 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' must list integers", name);
  return ODB_FAIL(ODB_ERR_ARG, "unknown parameter '%s' for a solver target "
                  "(allowed: variant, block, threads)", name);
}

/*
** Variant option parameter i: declared by a variant of the space (or by
** base without a variant parameter), and each value allowed by every
** variant that declares it, so that no configuration fails on its
** options when it is set up.
*/
static odb_status check_vopt(const odb_space *sp, int i,
                             const odb_variant *(*lookup)(void *,
                                                          const char *),
                             void *ud, const odb_variant *base,
                             const odb_solver_space *w) {
  const char *name = odb_space_name(sp, i);
  int nv = w->ivariant >= 0 ? odb_space_nvalues(sp, w->ivariant) : 1;
  int declared = 0;
  char why[256];
  for (int k = 0; k < nv; ++k) {
    const odb_variant *v = w->ivariant >= 0
        ? lookup(ud, odb_space_str(sp, w->ivariant, k)) : base;
    int at = v ? odb_param_find(v->opts, v->nopts, name) : -1;
    if (at < 0) continue;
    declared = 1;
    for (int j = 0; j < odb_space_nvalues(sp, i); ++j) {
      odb_param_value g = { name, (double)odb_space_int(sp, i, j), NULL };
      double x;
      if (odb_param_check(&v->opts[at], &g, &x, why, sizeof why) != ODB_OK)
        return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': variant '%s': option "
                        "'%s' %s", name, v->name, name, why);
    }
  }
  if (!declared)
    return ODB_FAIL(ODB_ERR_ARG, "unknown parameter '%s' for a solver target "
                    "(allowed: variant, block, threads); no variant %s "
                    "declares an option '%s'", name, w->ivariant >= 0
                    ? "of the space" : "of the solver", name);
  return ODB_OK;
}

odb_status odb_solver_space_check(const odb_space *sp,
                                  const odb_variant *(*lookup)(void *ud,
                                                               const char *name),
                                  void *ud, const odb_variant *base,
                                  odb_solver_space *w) {
  w->ivariant = w->iblock = w->ithreads = -1;
  w->nvopt = 0;
  if (!lookup) lookup = registry_lookup;
  if (odb_space_nparams(sp) == 0)
    return ODB_FAIL(ODB_ERR_ARG, "the space is empty (no parameters)");
  for (int i = 0; i < odb_space_nparams(sp); ++i)
    ODB_TRY(check_param(sp, i, lookup, ud, w));
  for (int k = 0; k < w->nvopt; ++k)
    ODB_TRY(check_vopt(sp, w->ivopt[k], lookup, ud, base, w));
  return ODB_OK;
}

/* The constraint: the configuration's variant runs here and applies. */
static int variant_applies(const odb_space *sp, const odb_config *c,
                           void *ud) {
  odb_tune_solver *ts = ud;
  const odb_variant *v = odb_variant_find(odb_space_str(sp, ts->ivariant,
                                                        c->idx[ts->ivariant]));
  char why[160];
  if (!v) return 0;
  if (strcmp(v->backend, ts->base->backend->ops->name) != 0) return 0;
  return v->applies(ts->base->problem, ts->base->method, why, sizeof why);
}

/* The configuration's variant (the solver's without a variant parameter). */
static const odb_variant *config_variant(const odb_tune_solver *ts,
                                         const odb_config *c) {
  if (ts->ivariant < 0) return ts->base->variant;
  return odb_variant_find(odb_space_str(ts->space, ts->ivariant,
                                        c->idx[ts->ivariant]));
}

/* See the header. */
int odb_tune_vopts_apply(const odb_space *sp, const odb_config *c,
                         const odb_variant *v, const int *ivopt, int nvopt) {
  for (int k = 0; k < nvopt; ++k) {
    int i = ivopt[k];
    if (c->idx[i] != 0 &&
        (!v || odb_param_find(v->opts, v->nopts, odb_space_name(sp, i)) < 0))
      return 0;
  }
  return 1;
}

/* The constraint of odb_tune_vopts_apply for this tuning's space. */
static int vopts_apply(const odb_space *sp, const odb_config *c, void *ud) {
  odb_tune_solver *ts = ud;
  return odb_tune_vopts_apply(sp, c, config_variant(ts, c), ts->ivopt,
                              ts->nvopt);
}

/* }====== */

/* {====== states */

/* Runs ts->o.steps fixed steps of h on s from (t0, y0). */
static odb_status run_steps(odb_tune_solver *ts, odb_solver *s) {
  odb_solver_set_state(s, ts->t0, ts->y0);
  for (int k = 0; k < ts->o.steps; ++k)
    ODB_TRY(odb_solver_step(s, ts->h, NULL));
  return ODB_OK;
}

/* The reference variant's name for the method. */
static const char *reference_name(const odb_tune_solver *ts) {
  if (ts->o.reference) return ts->o.reference;
  return ts->base->method->kind == ODB_METHOD_PIRK ? "A" : "plain";
}

/* The step size, then the reference state after the steps. */
static odb_status make_reference(odb_tune_solver *ts) {
  odb_solver *b = ts->base, *ref = NULL;
  odb_solver_opts o = b->opts;
  odb_backend *cpu = odb_ctx_backend(b->ctx, "cpu");
  odb_solve_stats info;
  odb_status st;
  o.block = 0;
  o.threads = 0;
  o.h_fixed = 0;
  o.vopts = NULL;   /* the base variant's options; the reference takes none */
  o.nvopts = 0;
  st = odb_solver_create(b->ctx, b->problem, b->method, cpu ? cpu : b->backend,
                         reference_name(ts), &o, &ref);
  if (st != ODB_OK) return st;
  ts->h = ts->o.h > 0 ? ts->o.h : b->opts.h_fixed > 0 ? b->opts.h_fixed
          : b->h_next;
  if (!(ts->h > 0)) {
    /*
    ** The smallest of the first few adaptive steps: the very first one can
    ** be far above the stability limit the controller settles to on stiff
    ** problems (80x on CUSP), and fixed steps of it would blow up.
    */
    odb_solver_set_state(ref, ts->t0, ts->y0);
    for (int k = 0; k < 8; ++k) {
      st = odb_solver_step(ref, 0, &info);
      if (st != ODB_OK) {
        odb_solver_destroy(ref);
        return ODB_FAIL(st == ODB_ERR_UNSUPPORTED ? ODB_ERR_ARG : st,
                        "no step size for tuning: %s (give the solver h=)",
                        odb_last_error());
      }
      if (k == 0 || info.h < ts->h) ts->h = info.h;
    }
  }
  st = run_steps(ts, ref);
  if (st == ODB_OK) st = odb_solver_get_state(ref, ts->yref);
  odb_solver_destroy(ref);
  return st;
}

/* }====== */

/* {====== the target's functions */

/*
** The options of configuration c's solver into o: the solver's own that
** the variant declares and the space does not tune, then the tuned ones
** the variant declares with c's values. ts->vals has room for both; the
** solver copies them.
*/
static void config_vopts(odb_tune_solver *ts, const odb_config *c,
                         odb_solver_opts *o) {
  const odb_variant *v = config_variant(ts, c);
  const odb_solver_opts *bo = &ts->base->opts;
  int n = 0;
  for (int k = 0; v && k < bo->nvopts; ++k) {
    int tuned = 0;
    for (int j = 0; j < ts->nvopt; ++j)
      tuned |= strcmp(odb_space_name(ts->space, ts->ivopt[j]),
                      bo->vopts[k].name) == 0;
    if (!tuned && odb_param_find(v->opts, v->nopts, bo->vopts[k].name) >= 0)
      ts->vals[n++] = bo->vopts[k];
  }
  for (int j = 0; v && j < ts->nvopt; ++j) {
    int i = ts->ivopt[j];
    const char *name = odb_space_name(ts->space, i);
    if (odb_param_find(v->opts, v->nopts, name) < 0) continue;
    ts->vals[n].name = name;
    ts->vals[n].num = (double)odb_space_int(ts->space, i, c->idx[i]);
    ts->vals[n++].str = NULL;
  }
  o->vopts = n > 0 ? ts->vals : NULL;
  o->nvopts = n;
}

/* Creates the solver of configuration c. */
static odb_status ts_setup(void *ud, const odb_config *c) {
  odb_tune_solver *ts = ud;
  odb_solver *b = ts->base;
  odb_solver_opts o = b->opts;
  const char *variant = b->variant->name;
  if (ts->ivariant >= 0)
    variant = odb_space_str(ts->space, ts->ivariant, c->idx[ts->ivariant]);
  if (ts->iblock >= 0)
    o.block = odb_space_int(ts->space, ts->iblock, c->idx[ts->iblock]);
  if (ts->ithreads >= 0)
    o.threads = (int)odb_space_int(ts->space, ts->ithreads,
                                   c->idx[ts->ithreads]);
  o.h_fixed = 0;
  config_vopts(ts, c, &o);
  return odb_solver_create(b->ctx, b->problem, b->method, b->backend, variant,
                           &o, &ts->cur);
}

static void ts_teardown(void *ud, const odb_config *c) {
  odb_tune_solver *ts = ud;
  (void)c;
  odb_solver_destroy(ts->cur);
  ts->cur = NULL;
}

/* Relative max-norm error of y against yref. */
static double rel_err(const double *y, const double *yref, long n) {
  double num = 0, den = 0;
  for (long i = 0; i < n; ++i) {
    double d = fabs(y[i] - yref[i]);
    if (d > num || isnan(d)) num = isnan(d) ? INFINITY : d;
    if (fabs(yref[i]) > den) den = fabs(yref[i]);
  }
  return den > 0 ? num / den : num;
}

static odb_status ts_check(void *ud, const odb_config *c, double *err,
                           double *tol) {
  odb_tune_solver *ts = ud;
  odb_solver *s = ts->cur;
  ODB_TRY(run_steps(ts, s));
  ODB_TRY(odb_solver_get_state(s, ts->y));
  if (ts->o.verify)
    return ts->o.verify(ts->o.verify_ud, c, ts->y, ts->yref, s->n, err, tol);
  *err = rel_err(ts->y, ts->yref, s->n);
  *tol = odb_tune_ode_tolerance(ts->o.steps, s->method->s,
                                s->m > 0 ? s->m : 1);
  return ODB_OK;
}

static odb_status ts_run(void *ud, const odb_config *c, double *seconds) {
  odb_tune_solver *ts = ud;
  odb_solver *s = ts->cur;
  double t0;
  (void)c;
  odb_solver_set_state(s, ts->t0, ts->y0);
  t0 = odb_clock_now();
  for (int k = 0; k < ts->o.steps; ++k)
    ODB_TRY(odb_solver_step(s, ts->h, NULL));
  if (!s->backend->host_memory) ODB_TRY(odb_backend_sync(s->backend));
  *seconds = odb_clock_now() - t0;
  return ODB_OK;
}

/* }====== */

/* {====== create and destroy */

/*
** Appends to the key's params (used bytes of len) what else the timings
** depend on: the solver's variant options that the space does not tune
** (" ranks=2"), and the ranks of a run across ranks (" mpi=4"; a tuning
** at R ranks times every rank's share of the work, which is not one
** process's, and with fewer active ranks than the run's the others still
** take part in the norm). One process adds nothing, so its keys are those
** of a build without MPI.
*/
void odb_tune_key_extras(char *params, size_t len, size_t used,
                         const odb_solver_opts *o, const odb_space *sp,
                         const int *ivopt, int nvopt) {
  const odb_tune_ranks *rk = odb_tune_get_ranks();
  for (int k = 0; k < o->nvopts && used < len; ++k) {
    const odb_param_value *g = &o->vopts[k];
    int tuned = 0;
    for (int j = 0; j < nvopt; ++j)
      tuned |= strcmp(odb_space_name(sp, ivopt[j]), g->name) == 0;
    if (tuned) continue;
    if (g->str)
      used += (size_t)snprintf(params + used, len - used, " %s=%s", g->name,
                               g->str);
    else
      used += (size_t)snprintf(params + used, len - used, " %s=%.17g",
                               g->name, g->num);
  }
  if (rk && rk->ranks > 1 && used < len)
    snprintf(params + used, len - used, " mpi=%d", rk->ranks);
}

/* Fills the key strings: what the timings depend on (the problem's part
   from odb_problem_key). */
static void fill_key(odb_tune_solver *ts) {
  odb_solver *b = ts->base;
  size_t used;
  odb_problem_key(b->problem, ts->size, sizeof ts->size);
  if (b->method->kind == ODB_METHOD_PIRK)
    snprintf(ts->method, sizeof ts->method, "%s m=%d", b->method->name, b->m);
  else
    snprintf(ts->method, sizeof ts->method, "%s", b->method->name);
  snprintf(ts->family, sizeof ts->family, "solver/%s",
           b->backend->ops->name);
  snprintf(ts->params, sizeof ts->params, "steps=%d h=%.6g", ts->o.steps,
           ts->h);
  used = strlen(ts->params);
  if (ts->ivariant < 0)
    used += (size_t)snprintf(ts->params + used, sizeof ts->params - used,
                             " variant=%s", b->variant->name);
  if (ts->iblock < 0 && used < sizeof ts->params)
    used += (size_t)snprintf(ts->params + used, sizeof ts->params - used,
                             " block=%ld", b->opts.block);
  if (ts->ithreads < 0 && used < sizeof ts->params)
    used += (size_t)snprintf(ts->params + used, sizeof ts->params - used,
                             " threads=%d", b->opts.threads);
  odb_tune_key_extras(ts->params, sizeof ts->params, used, &b->opts,
                      ts->space, ts->ivopt, ts->nvopt);
  ts->target.key.problem = b->problem->type->name;
  ts->target.key.size = ts->size;
  ts->target.key.method = ts->method;
  ts->target.key.family = ts->family;
  ts->target.key.params = ts->params;
  ts->target.key.code_hash = odb_engine_code_hash();
}

/* Checks the parameters of the space and notes where they are. */
static odb_status check_space(odb_tune_solver *ts) {
  odb_solver_space w;
  size_t room;
  ODB_TRY(odb_solver_space_check(ts->space, NULL, NULL, ts->base->variant,
                                 &w));
  ts->ivariant = w.ivariant;
  ts->iblock = w.iblock;
  ts->ithreads = w.ithreads;
  ts->nvopt = w.nvopt;
  memcpy(ts->ivopt, w.ivopt, sizeof ts->ivopt);
  room = (size_t)(ts->base->opts.nvopts + ts->nvopt);
  if (room == 0) return ODB_OK;
  ts->vals = malloc(room * sizeof *ts->vals);
  if (!ts->vals)
    return ODB_FAIL(ODB_ERR_NOMEM, "solver tuning target: options");
  return ODB_OK;
}

/* Adds the applicability constraint (last: the space then refers to ts). */
static odb_status add_constraint(odb_tune_solver *ts) {
  static const char *const deps[] = {"variant", NULL};
  if (ts->nvopt > 0)
    ODB_TRY(odb_space_add_constraint(ts->space, vopts_apply, ts, NULL,
                                     "the variant takes the options"));
  if (ts->ivariant < 0) return ODB_OK;
  return odb_space_add_constraint(ts->space, variant_applies, ts, deps,
                                  "the variant applies");
}

odb_status odb_tune_solver_create(odb_solver *base, odb_space *space,
                                  const odb_tune_solver_opts *o,
                                  odb_tune_solver **out) {
  odb_tune_solver *ts;
  size_t bytes = (size_t)base->n * sizeof(double);
  odb_status st;
  *out = NULL;
  ts = calloc(1, sizeof *ts);
  if (!ts) return ODB_FAIL(ODB_ERR_NOMEM, "solver tuning target");
  ts->base = base;
  ts->space = space;
  if (o) ts->o = *o;
  if (ts->o.steps <= 0) ts->o.steps = 3;
  ts->ivariant = ts->iblock = ts->ithreads = -1;
  ts->t0 = base->t;
  st = check_space(ts);
  if (st != ODB_OK) goto fail;
  ts->y0 = malloc(bytes);
  ts->yref = malloc(bytes);
  ts->y = malloc(bytes);
  if (!ts->y0 || !ts->yref || !ts->y) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "solver tuning target: 3 x %zu bytes",
                  bytes);
    goto fail;
  }
  st = odb_solver_get_state(base, ts->y0);
  if (st == ODB_OK) st = make_reference(ts);
  if (st == ODB_OK) st = add_constraint(ts);
  if (st != ODB_OK) goto fail;
  ts->target.space = space;
  ts->target.ud = ts;
  ts->target.setup = ts_setup;
  ts->target.check = ts_check;
  ts->target.run = ts_run;
  ts->target.teardown = ts_teardown;
  ts->target.solver = base;
  fill_key(ts);
  *out = ts;
  return ODB_OK;
fail:
  odb_tune_solver_destroy(ts);
  return st;
}

void odb_tune_solver_destroy(odb_tune_solver *ts) {
  if (!ts) return;
  odb_solver_destroy(ts->cur);
  free(ts->y0);
  free(ts->yref);
  free(ts->y);
  free(ts->vals);
  free(ts);
}

const odb_tune_target *odb_tune_solver_target(const odb_tune_solver *ts) {
  return &ts->target;
}

double odb_tune_solver_h(const odb_tune_solver *ts) { return ts->h; }
int odb_tune_solver_steps(const odb_tune_solver *ts) { return ts->o.steps; }
odb_solver *odb_tune_solver_current(const odb_tune_solver *ts) {
  return ts->cur;
}

/* }====== */
