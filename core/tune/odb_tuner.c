/* odb_tuner.c - the search driver: propose, evaluate, verify, record. */
#include "odb_status.h"
#include "odb_rng.h"
#include "odb_event.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_space.h"
#include "odb_clock.h"
#include "odb_measure.h"
#include "odb_version.h"
#include "odb_tuner.h"
#include "odb_tunedb.h"
#include "odb_energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A strategy may revisit evaluated points for free; this many in a row
   without a new proposal ends the search (a strategy that cannot move). */
#define MAX_MEMO_STREAK 100000

struct odb_tuner {
  odb_ctx *ctx;
  const odb_tune_target *tg;
  odb_tune_opts o;
  const odb_strategy *strat;
  void *sstate;
  odb_rng rng;
  odb_config *valid;         /* the valid configurations */
  long nvalid;
  long *map;                 /* open addressing: valid index or -1 */
  long mapcap;
  long *done;                /* per valid index: eval index or -1 */
  long *stored;              /* per valid index: index in db_evals or -1 */
  odb_tune_eval *db_evals;   /* loaded from the database */
  long ndb, capdb;
  odb_tune_eval *evals;      /* recorded in this search */
  long nevals, capevals;
  long best;                 /* eval index or -1 */
  long pending;              /* valid index proposed, not told; -1 */
  long memo_streak;
  int finished;              /* the strategy said done */
  double t_start;
  odb_tune_stats stats;
  odb_tunedb *db;
  long long db_target;
  char label[64];
  odb_energy energy;         /* objective energy or edp */
};

/* The run across ranks (odb_tuner.h); NULL: one process. */
static const odb_tune_ranks *tune_ranks;

void odb_tune_set_ranks(const odb_tune_ranks *r) { tune_ranks = r; }
const odb_tune_ranks *odb_tune_get_ranks(void) { return tune_ranks; }

static const char *const objective_names[] = { "time", "energy", "edp" };

const char *odb_tune_objective_name(odb_tune_objective o) {
  return (unsigned)o < 3 ? objective_names[o] : "?";
}

odb_status odb_tune_objective_parse(const char *name,
                                    odb_tune_objective *out) {
  for (int i = 0; i < 3; ++i)
    if (name && strcmp(name, objective_names[i]) == 0) {
      *out = (odb_tune_objective)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_ARG, "objective '%s' is not allowed (time, "
                  "energy, edp)", name ? name : "(null)");
}

/* {====== small helpers */


double odb_tune_tolerance(double eps, double ops) {
  return 900.0 * eps * (ops > 1 ? ops : 1);
}

double odb_tune_ode_tolerance(int steps, int s, int m) {
  double ops = (double)(steps > 1 ? steps : 1) * (m > 1 ? m : 1) *
               (s > 1 ? s : 1);
  return odb_tune_tolerance(1.1102230246251565e-16, ops);
}

/* Statuses a target function may return for one bad configuration. */
static int soft_failure(odb_status st) {
  return st == ODB_ERR_UNSUPPORTED || st == ODB_ERR_NOMEM ||
         st == ODB_ERR_BACKEND || st == ODB_ERR_NONFINITE ||
         st == ODB_ERR_STEP_SIZE || st == ODB_ERR_MAX_STEPS;
}

const char *odb_tuner_config_text(const odb_tuner *t, const odb_config *c,
                                  char *buf, size_t len) {
  if (odb_config_format(t->tg->space, c, buf, len) != ODB_OK && len > 4)
    memcpy(buf + len - 4, "...", 4);   /* format left a prefix in buf */
  odb_clear_error();
  return buf;
}

/* }====== */

/* {====== the valid set and its index */

/* Slot of c in the map: where it is, or the empty slot where it goes. */
static long map_slot(const odb_tuner *t, const odb_config *c) {
  long mask = t->mapcap - 1, i = (long)(odb_config_hash(c) & (uint64_t)mask);
  while (t->map[i] >= 0 && !odb_config_equal(&t->valid[t->map[i]], c))
    i = (i + 1) & mask;
  return i;
}

/* Lists the valid configurations and indexes them. */
static odb_status build_valid(odb_tuner *t) {
  const odb_space *s = t->tg->space;
  ODB_TRY(odb_space_enumerate(s, &t->valid, &t->nvalid));
  t->stats.raw = odb_space_raw_size(s);
  t->stats.valid = t->nvalid;
  if (t->nvalid == 0)
    return ODB_FAIL(ODB_ERR_ARG, "the constraints leave no valid "
                    "configuration (%.0f before the constraints)",
                    t->stats.raw);
  for (t->mapcap = 16; t->mapcap < 2 * t->nvalid; t->mapcap *= 2) {}
  t->map = malloc((size_t)t->mapcap * sizeof *t->map);
  t->done = malloc((size_t)t->nvalid * sizeof *t->done);
  t->stored = malloc((size_t)t->nvalid * sizeof *t->stored);
  if (!t->map || !t->done || !t->stored)
    return ODB_FAIL(ODB_ERR_NOMEM, "index of %ld configurations", t->nvalid);
  for (long i = 0; i < t->mapcap; ++i) t->map[i] = -1;
  for (long i = 0; i < t->nvalid; ++i) {
    t->map[map_slot(t, &t->valid[i])] = i;
    t->done[i] = t->stored[i] = -1;
  }
  return ODB_OK;
}

long odb_tuner_valid_index(const odb_tuner *t, const odb_config *c) {
  if (c->n != odb_space_nparams(t->tg->space)) return -1;
  return t->map[map_slot(t, c)];
}

/* }====== */

/* {====== the database */

/* Keeps one stored evaluation when its configuration is still valid. */
static int load_one(void *ud, const char *config, const odb_tune_eval *ev) {
  odb_tuner *t = ud;
  odb_config c;
  long vi;
  if (odb_config_parse(t->tg->space, config, &c) != ODB_OK) {
    odb_clear_error();
    return 0;
  }
  vi = odb_tuner_valid_index(t, &c);
  if (vi < 0) return 0;
  /* an unverified timing does not stand in for a verified one */
  if (ev->status == ODB_TUNE_OK && t->o.verify >= 0 && t->tg->check &&
      isnan(ev->err))
    return 0;
  if (t->ndb == t->capdb) {
    long cap = t->capdb ? 2 * t->capdb : 64;
    odb_tune_eval *ne = realloc(t->db_evals, (size_t)cap * sizeof *ne);
    if (!ne) return 1;
    t->db_evals = ne;
    t->capdb = cap;
  }
  t->db_evals[t->ndb] = *ev;
  t->db_evals[t->ndb].cfg = c;
  t->db_evals[t->ndb].cached = 1;
  t->db_evals[t->ndb].seconds = 0;
  t->stored[vi] = t->ndb++;
  return 0;
}

/* Finds or creates the target row and loads what it holds. */
static odb_status open_db(odb_tuner *t) {
  odb_machine_id mid;
  odb_machine_fingerprint(t->ctx, &mid);
  odb_tunedb_set_log(t->db, t->ctx);    /* rows it ignores are warned of */
  ODB_TRY(odb_tunedb_target(t->db, &mid, &t->tg->key, odb_version(), 1,
                            &t->db_target));
  if (tune_ranks && tune_ranks->ranks > 1) return ODB_OK;   /* write only */
  ODB_TRY(odb_tunedb_each(t->db, t->db_target, load_one, t));
  if (t->ndb > 0)
    odb_ctx_log(t->ctx, ODB_LOG_INFO, "tune %s: %ld evaluations reused from "
                "%s", t->label, t->ndb, odb_tunedb_path(t->db));
  return ODB_OK;
}

/* }====== */

/* {====== create and destroy */

/* Checks the options a caller may get wrong. */
static odb_status check_opts(const odb_tune_target *tg,
                             const odb_tune_opts *o) {
  if (!tg || !tg->space)
    return ODB_FAIL(ODB_ERR_ARG, "a tuning target needs a space");
  if (odb_space_nparams(tg->space) == 0)
    return ODB_FAIL(ODB_ERR_ARG, "the space is empty (no parameters)");
  if (o->budget.evals < 0 || o->budget.seconds < 0 ||
      isnan(o->budget.seconds))
    return ODB_FAIL(ODB_ERR_ARG, "the budget must not be negative");
  if ((unsigned)o->objective > ODB_TUNE_EDP)
    return ODB_FAIL(ODB_ERR_ARG, "objective %d is not allowed (time, "
                    "energy, edp)", (int)o->objective);
  return ODB_OK;
}

/* Copies the options and fills the defaults. */
static void set_opts(odb_tuner *t, const odb_tune_opts *o) {
  const char *name;
  t->o = *o;
  if (!t->o.strategy) t->o.strategy = "exhaustive";
  odb_measure_defaults(&t->o.measure);
  name = o->label ? o->label : t->tg->key.problem;
  snprintf(t->label, sizeof t->label, "%s", name && *name ? name : "target");
}

odb_status odb_tuner_create(odb_ctx *ctx, const odb_tune_target *target,
                            const odb_tune_opts *opts, odb_tuner **out) {
  odb_tune_opts none;
  odb_tuner *t;
  odb_status st;
  char names[128];
  *out = NULL;
  memset(&none, 0, sizeof none);
  if (!opts) opts = &none;
  ODB_TRY(check_opts(target, opts));
  t = calloc(1, sizeof *t);
  if (!t) return ODB_FAIL(ODB_ERR_NOMEM, "tuner");
  t->ctx = ctx;
  t->tg = target;
  t->best = t->pending = -1;
  t->t_start = odb_clock_now();
  set_opts(t, opts);
  t->strat = odb_strategy_find(t->o.strategy);
  if (!t->strat) {
    st = ODB_FAIL(ODB_ERR_NAME, "unknown strategy '%s' (valid: %s)",
                  t->o.strategy, odb_strategy_names(names, sizeof names));
    goto fail;
  }
  t->stats.seed = opts->has_seed ? opts->seed
                  : ctx ? odb_rng_next(&ctx->rng) : 0;
  odb_rng_seed(&t->rng, t->stats.seed);
  st = build_valid(t);
  if (st != ODB_OK) goto fail;
  t->stats.planned = t->o.budget.evals > 0 && t->o.budget.evals < t->nvalid
                         ? t->o.budget.evals : t->nvalid;
  /* the energy objectives need a counter on every rank's host; their
     figures are not stored (the database's key holds no objective) */
  if (t->o.objective != ODB_TUNE_TIME) {
    st = odb_energy_open(&t->energy, NULL);
    if (st != ODB_OK) {
      char why[300];
      snprintf(why, sizeof why, "%s", odb_last_error());
      st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "objective '%s' refused: %s",
                    odb_tune_objective_name(t->o.objective), why);
      goto fail;
    }
  }
  t->db = t->o.objective == ODB_TUNE_TIME ? opts->db : NULL;
  if (t->db && (st = open_db(t)) != ODB_OK) goto fail;
  st = t->strat->create(t, t->o.strategy_opts, &t->sstate);
  if (st != ODB_OK) goto fail;
  *out = t;
  return ODB_OK;
fail:
  odb_tuner_destroy(t);
  return st;
}

void odb_tuner_destroy(odb_tuner *t) {
  if (!t) return;
  if (t->strat && t->sstate) t->strat->destroy(t->sstate);
  free(t->valid);
  free(t->map);
  free(t->done);
  free(t->stored);
  free(t->db_evals);
  free(t->evals);
  free(t);
}

/* }====== */

/* {====== recording */

/* Publishes the evaluation event (and a log line when it did not pass). */
static void publish_eval(odb_tuner *t, const odb_tune_eval *ev) {
  odb_event e;
  char state[96] = "";
  memset(&e, 0, sizeof e);
  e.kind = ODB_EV_TUNE_EVAL;
  odb_tuner_config_text(t, &ev->cfg, e.name, sizeof e.name);
  e.value = ev->status == ODB_TUNE_OK ? ev->m.median : NAN;
  e.value2 = ev->status == ODB_TUNE_OK ? ev->m.spread : NAN;
  e.err = ev->err;
  e.t = odb_clock_now() - t->t_start;
  e.step = t->stats.evals;
  e.accepted = t->stats.planned;
  e.rejected = ev->status != ODB_TUNE_OK;
  if (t->strat->describe) t->strat->describe(t->sstate, state, sizeof state);
  if (ev->status != ODB_TUNE_OK)
    snprintf(e.text, sizeof e.text, "%s: %.110s",
             odb_tune_status_name(ev->status), ev->msg);
  else
    snprintf(e.text, sizeof e.text, "%s%s", ev->cached ? "cached; " : "",
             state);
  odb_ctx_publish(t->ctx, &e);
  if (ev->status == ODB_TUNE_REJECTED || ev->status == ODB_TUNE_FAILED)
    odb_ctx_log(t->ctx, ODB_LOG_WARN, "tune %s: %s %s: %s", t->label, e.name,
                odb_tune_status_name(ev->status), ev->msg);
}

/* Publishes the best-so-far event. */
static void publish_best(odb_tuner *t) {
  const odb_tune_eval *b = &t->evals[t->best];
  odb_event e;
  long ntied = odb_tuner_tied(t, NULL, 0);
  memset(&e, 0, sizeof e);
  e.kind = ODB_EV_TUNE_BEST;
  odb_tuner_config_text(t, &b->cfg, e.name, sizeof e.name);
  e.value = b->m.median;
  e.value2 = b->m.spread;
  e.step = t->best + 1;
  e.accepted = t->stats.planned;
  e.t = odb_clock_now() - t->t_start;
  snprintf(e.text, sizeof e.text, ntied ? "tied with %ld other(s)" : "",
           ntied);
  odb_ctx_publish(t->ctx, &e);
}

/* Appends ev to the evaluations and updates counters and the best. */
static odb_status record(odb_tuner *t, const odb_tune_eval *ev, long vi) {
  odb_tune_eval *e;
  int better;
  if (t->nevals == t->capevals) {
    long cap = t->capevals ? 2 * t->capevals : 64;
    odb_tune_eval *ne = realloc(t->evals, (size_t)cap * sizeof *ne);
    if (!ne) return ODB_FAIL(ODB_ERR_NOMEM, "evaluations");
    t->evals = ne;
    t->capevals = cap;
  }
  e = &t->evals[t->nevals];
  *e = *ev;
  t->done[vi] = t->nevals++;
  t->stats.evals++;
  if (e->cached) t->stats.cached++;
  else if (e->status != ODB_TUNE_SKIPPED) t->stats.measured++;
  if (e->status == ODB_TUNE_REJECTED) t->stats.rejected++;
  if (e->status == ODB_TUNE_FAILED) t->stats.failed++;
  if (e->status == ODB_TUNE_SKIPPED) t->stats.skipped++;
  better = e->status == ODB_TUNE_OK &&
           (t->best < 0 || e->m.median < t->evals[t->best].m.median);
  if (better) t->best = t->nevals - 1;
  publish_eval(t, e);
  if (better) publish_best(t);
  t->strat->observe(t->sstate, t, e);
  if (t->o.on_eval) t->o.on_eval(t->o.on_eval_ud, t, e);
  return ODB_OK;
}

odb_status odb_tuner_tell(odb_tuner *t, const odb_tune_eval *ev) {
  long vi = odb_tuner_valid_index(t, &ev->cfg);
  odb_tune_eval copy = *ev;
  char text[256];
  if (vi < 0 || vi != t->pending)
    return ODB_FAIL(ODB_ERR_ARG, "tell: configuration %s was not proposed by "
                    "odb_tuner_next", vi < 0 ? "(invalid)"
                    : odb_tuner_config_text(t, &ev->cfg, text, sizeof text));
  t->pending = -1;
  copy.cached = 0;
  if (copy.at <= 0) copy.at = (double)time(NULL);
  if (t->db && copy.status != ODB_TUNE_SKIPPED) {
    odb_tuner_config_text(t, &copy.cfg, text, sizeof text);
    ODB_TRY(odb_tunedb_put(t->db, t->db_target, text, &copy));
  }
  return record(t, &copy, vi);
}

/* }====== */

/* {====== proposing */

/*
** 1 when the budget or the strategy ends the search (logs why once).
** Across ranks the time budget is judged by the slowest rank's elapsed
** time, so that every rank ends the search at the same evaluation (each
** rank calls this as often as the others: the proposals and what they
** observe are the same on every rank); a failed reduction ends it too.
*/
static int search_over(odb_tuner *t) {
  double elapsed = odb_clock_now() - t->t_start;
  if (t->finished) return 1;
  if (t->o.budget.seconds > 0 && tune_ranks && tune_ranks->ranks > 1 &&
      tune_ranks->max(&elapsed, 1, "MPI_Allreduce (tuner: the time "
                      "budget)") != ODB_OK) {
    odb_ctx_log(t->ctx, ODB_LOG_WARN, "tune %s: %s", t->label,
                odb_last_error());
    t->finished = 1;
    return 1;
  }
  if (t->stats.evals >= t->stats.planned) {
    if (t->stats.planned < t->nvalid)
      odb_ctx_log(t->ctx, ODB_LOG_INFO, "tune %s: evaluation budget (%ld) "
                  "reached", t->label, t->stats.planned);
    t->finished = 1;
  } else if (t->o.budget.seconds > 0 && elapsed >= t->o.budget.seconds) {
    odb_ctx_log(t->ctx, ODB_LOG_INFO, "tune %s: time budget (%g s) reached "
                "after %ld of %ld evaluations", t->label, t->o.budget.seconds,
                t->stats.evals, t->stats.planned);
    t->finished = 1;
  }
  return t->finished;
}

/* Answers a proposal already known; 1 when it was known. */
static odb_status answer_known(odb_tuner *t, long vi, int *known) {
  *known = 1;
  if (t->done[vi] >= 0) {
    t->strat->observe(t->sstate, t, &t->evals[t->done[vi]]);
    if (++t->memo_streak > MAX_MEMO_STREAK) {
      odb_ctx_log(t->ctx, ODB_LOG_WARN, "tune %s: strategy '%s' proposes "
                  "only evaluated configurations; stopping", t->label,
                  t->strat->name);
      t->finished = 1;
    }
    return ODB_OK;
  }
  t->memo_streak = 0;
  if (t->stored[vi] >= 0) return record(t, &t->db_evals[t->stored[vi]], vi);
  *known = 0;
  return ODB_OK;
}

odb_status odb_tuner_next(odb_tuner *t, odb_config *cfg, int *done) {
  *done = 0;
  if (t->pending >= 0) {
    *cfg = t->valid[t->pending];
    return ODB_OK;
  }
  for (;;) {
    int sdone = 0, known;
    long vi;
    char text[256];
    if (odb_ctx_stop_requested(t->ctx))
      return ODB_FAIL(ODB_INTERRUPTED, "tuning interrupted");
    if (search_over(t)) break;
    ODB_TRY(t->strat->propose(t->sstate, t, cfg, &sdone));
    if (sdone) {
      t->finished = 1;
      break;
    }
    vi = odb_tuner_valid_index(t, cfg);
    if (vi < 0)
      return ODB_FAIL(ODB_ERR_INTERNAL, "strategy '%s' proposed an invalid "
                      "configuration %s", t->strat->name,
                      odb_tuner_config_text(t, cfg, text, sizeof text));
    ODB_TRY(answer_known(t, vi, &known));
    if (!known) {
      t->pending = vi;
      return ODB_OK;
    }
  }
  *done = 1;
  return ODB_OK;
}

/* }====== */

/* {====== evaluating */

typedef struct run_arg {
  const odb_tune_target *tg;
  const odb_config *c;
  odb_tuner *t;
} run_arg;

/* odb_measure_fn over the target's run function. */
/*
** One run's figure of the objective. Across ranks every rank runs it, and
** the figure is the maximum over the ranks (the slowest rank's seconds;
** the joules of the one reader, the others giving 0), so that every rank
** measures the same values and stops after the same number of runs.
*/
static odb_status run_once(void *ud, double *seconds) {
  run_arg *a = ud;
  odb_tuner *t = a->t;
  const odb_tune_ranks *rk = tune_ranks;
  int reads = !rk || rk->reader;
  double v[2] = {0, 0};
  if (t->o.objective != ODB_TUNE_TIME && reads)
    ODB_TRY(odb_energy_joules(&t->energy, &v[1]));      /* the start */
  ODB_TRY(a->tg->run(a->tg->ud, a->c, &v[0]));
  if (t->o.objective != ODB_TUNE_TIME && reads)
    ODB_TRY(odb_energy_joules(&t->energy, &v[1]));
  else
    v[1] = 0;
  if (rk) ODB_TRY(rk->max(v, 2, "MPI_Allreduce (tuner: a run's seconds)"));
  *seconds = t->o.objective == ODB_TUNE_TIME ? v[0]
             : t->o.objective == ODB_TUNE_ENERGY ? v[1] : v[0] * v[1];
  return ODB_OK;
}

/* Marks ev failed with the message of st; returns st when it is fatal. */
static odb_status fail_eval(odb_tune_eval *ev, odb_status st,
                            const char *what) {
  const char *e = odb_last_error();
  ev->status = ODB_TUNE_FAILED;
  snprintf(ev->msg, sizeof ev->msg, "%s: %s", what,
           e && *e ? e : odb_status_str(st));
  return soft_failure(st) ? ODB_OK : st;
}

/* Runs check and judges its result. Returns a fatal status or ODB_OK. */
static odb_status verify(odb_tuner *t, const odb_config *c,
                         odb_tune_eval *ev) {
  odb_status st;
  odb_clear_error();
  st = t->tg->check(t->tg->ud, c, &ev->err, &ev->tol);
  if (st != ODB_OK) return fail_eval(ev, st, "check");
  if (!(ev->err <= ev->tol)) {
    ev->status = ODB_TUNE_REJECTED;
    snprintf(ev->msg, sizeof ev->msg, "error %.3g exceeds the tolerance "
             "%.3g", ev->err, ev->tol);
  }
  return ODB_OK;
}

/* Times c; sets skipped or failed states; returns a fatal status. */
static odb_status measure(odb_tuner *t, const odb_config *c,
                          odb_tune_eval *ev) {
  run_arg a = {t->tg, c, t};
  int skipped = 0;
  odb_status st;
  odb_clear_error();
  st = odb_measure_run(run_once, &a, &t->o.measure, t->ctx,
                                  &ev->m, &skipped);
  if (st == ODB_OK) return ODB_OK;
  if (skipped) {
    ev->status = ODB_TUNE_SKIPPED;
    snprintf(ev->msg, sizeof ev->msg, "skipped");
    return ODB_OK;
  }
  return fail_eval(ev, st, "run");
}

odb_status odb_tuner_evaluate(odb_tuner *t, const odb_config *c,
                              odb_tune_eval *ev) {
  const odb_tune_target *tg = t->tg;
  double t0 = odb_clock_now();
  odb_status st = ODB_OK;
  if (!tg->run)
    return ODB_FAIL(ODB_ERR_ARG, "the tuning target has no run function "
                    "(drive it with odb_tuner_next/odb_tuner_tell)");
  memset(ev, 0, sizeof *ev);
  ev->cfg = *c;
  ev->err = ev->tol = NAN;
  ev->m.median = ev->m.spread = NAN;
  if (odb_ctx_take_skip(t->ctx)) {
    ev->status = ODB_TUNE_SKIPPED;
    snprintf(ev->msg, sizeof ev->msg, "skipped");
    return ODB_OK;
  }
  odb_clear_error();
  if (tg->setup && (st = tg->setup(tg->ud, c)) != ODB_OK) {
    st = fail_eval(ev, st, "setup");
    ev->seconds = odb_clock_now() - t0;
    return st;
  }
  if (t->o.verify >= 0 && tg->check) st = verify(t, c, ev);
  if (st == ODB_OK && ev->status == ODB_TUNE_OK) st = measure(t, c, ev);
  if (tg->teardown) tg->teardown(tg->ud, c);
  ev->seconds = odb_clock_now() - t0;
  ev->at = (double)time(NULL);
  return st;
}

/* Logs the outcome of a finished search. */
static void log_summary(odb_tuner *t) {
  const odb_tune_eval *b = odb_tuner_best(t);
  char text[256];
  if (!b) {
    odb_ctx_log(t->ctx, ODB_LOG_WARN, "tune %s: no configuration passed "
                "(%ld evaluated, %ld rejected, %ld failed)", t->label,
                t->stats.evals, t->stats.rejected, t->stats.failed);
    return;
  }
  odb_ctx_log(t->ctx, ODB_LOG_INFO, "tune %s: best %s, median %.4g s "
              "(spread %.2g), tied with %ld; %ld evaluations (%ld cached)",
              t->label, odb_tuner_config_text(t, &b->cfg, text, sizeof text),
              b->m.median, b->m.spread, odb_tuner_tied(t, NULL, 0),
              t->stats.evals, t->stats.cached);
}

odb_status odb_tuner_run(odb_tuner *t) {
  odb_config c;
  odb_tune_eval ev;
  odb_status st = ODB_OK;
  int done = 0;
  while (st == ODB_OK) {
    st = odb_tuner_next(t, &c, &done);
    if (st != ODB_OK || done) break;
    st = odb_tuner_evaluate(t, &c, &ev);
    if (st != ODB_OK) break;
    st = odb_tuner_tell(t, &ev);
  }
  if (st != ODB_OK) t->pending = -1;   /* the interrupted one is dropped */
  if (st == ODB_OK) log_summary(t);
  return st;
}

/* }====== */

/* {====== results and accessors */

long odb_tuner_nevals(const odb_tuner *t) { return t->nevals; }

const odb_tune_eval *odb_tuner_eval_at(const odb_tuner *t, long i) {
  return i >= 0 && i < t->nevals ? &t->evals[i] : NULL;
}

const odb_tune_eval *odb_tuner_best(const odb_tuner *t) {
  return t->best >= 0 ? &t->evals[t->best] : NULL;
}

long odb_tuner_tied(const odb_tuner *t, long *idx, long max) {
  const odb_tune_eval *b = odb_tuner_best(t);
  long n = 0;
  if (!b) return 0;
  for (long i = 0; i < t->nevals; ++i) {
    const odb_tune_eval *e = &t->evals[i];
    if (i == t->best || e->status != ODB_TUNE_OK) continue;
    if (!odb_measure_tied(b->m.median, b->m.spread, e->m.median,
                          e->m.spread))
      continue;
    if (idx && n < max) idx[n] = i;
    n++;
  }
  return n;
}

void odb_tuner_stats(const odb_tuner *t, odb_tune_stats *out) {
  *out = t->stats;
  out->seconds = odb_clock_now() - t->t_start;
}

odb_ctx *odb_tuner_ctx(const odb_tuner *t) { return t->ctx; }
const odb_tune_target *odb_tuner_target(const odb_tuner *t) { return t->tg; }
const odb_space *odb_tuner_space(const odb_tuner *t) { return t->tg->space; }
odb_rng *odb_tuner_rng(odb_tuner *t) { return &t->rng; }
long odb_tuner_nvalid(const odb_tuner *t) { return t->nvalid; }
long odb_tuner_planned(const odb_tuner *t) { return t->stats.planned; }

const odb_config *odb_tuner_valid(const odb_tuner *t, long i) {
  return i >= 0 && i < t->nvalid ? &t->valid[i] : NULL;
}

const odb_tune_eval *odb_tuner_lookup(const odb_tuner *t,
                                      const odb_config *c) {
  long vi = odb_tuner_valid_index(t, c);
  return vi >= 0 && t->done[vi] >= 0 ? &t->evals[t->done[vi]] : NULL;
}

/* }====== */
