/* odb_tuner.h - tuning targets, strategies, and the search driver. */
#ifndef ODB_TUNER_H
#define ODB_TUNER_H

#include <stdint.h>
#include "odb_ctx.h"
#include "odb_measure.h"
#include "odb_space.h"
#include "odb_tune_types.h"

typedef struct odb_tuner odb_tuner;
typedef struct odb_tunedb odb_tunedb;

/* Budget of a search; 0 means unlimited. */
typedef struct odb_tune_budget {
  long evals;            /* evaluations (cached ones count) */
  double seconds;        /* wall time; checked before each evaluation */
} odb_tune_budget;

/* Called after each evaluation is recorded (results rows, Lua, tests). */
typedef void (*odb_tune_eval_fn)(void *ud, odb_tuner *t,
                                 const odb_tune_eval *ev);

/*
** What a search minimizes per configuration: the median of the runs'
** seconds (time), of the joules the CPU packages used in a run (energy,
** from odb_energy.h) or of joules times seconds (edp). The evaluation's
** median, quartiles and spread are in that unit.
*/
typedef enum odb_tune_objective {
  ODB_TUNE_TIME, ODB_TUNE_ENERGY, ODB_TUNE_EDP
} odb_tune_objective;

typedef struct odb_tune_opts {
  const char *strategy;       /* NULL: "exhaustive" */
  const void *strategy_opts;  /* strategy-specific, may be NULL */
  odb_tune_budget budget;
  odb_measure_opts measure;
  int has_seed;               /* 0: seed from the context's generator */
  uint64_t seed;
  int verify;                 /* 0 or 1: call check when present; -1: never */
  odb_tunedb *db;             /* NULL: no persistence */
  odb_tune_eval_fn on_eval;
  void *on_eval_ud;
  const char *label;          /* for log lines; NULL: the key's problem */
  odb_tune_objective objective;   /* ODB_TUNE_TIME (0) by default */
} odb_tune_opts;

/*
** The run across ranks, for a tuner that runs in every process of an SPMD
** run (dist/, which core/ never includes, sets it when it registers the
** distributed variants): max reduces count values to their maximum over
** the ranks, on every rank; ranks is the number of ranks; reader is 1 on
** the one process that reads the energy counters (the others give 0 to
** the maximum). With it, every run of a configuration is timed as its
** slowest rank (and its energy is the reader's), so every rank sees the
** same figures, repeats the same number of runs and chooses the same
** configuration; with ranks > 1 the database is not read (only the
** process that holds it would answer from it, and the others would run
** alone), only written. NULL (the default): one process.
*/
typedef struct odb_tune_ranks {
  odb_status (*max)(double *v, int count, const char *what);
  int ranks;
  int reader;
} odb_tune_ranks;
void odb_tune_set_ranks(const odb_tune_ranks *r);
const odb_tune_ranks *odb_tune_get_ranks(void);
/* "time", "energy", "edp" -> *out; ODB_ERR_ARG naming the allowed ones. */
odb_status odb_tune_objective_parse(const char *name,
                                    odb_tune_objective *out);
const char *odb_tune_objective_name(odb_tune_objective o);

/* Figures of a search so far. */
typedef struct odb_tune_stats {
  long valid;            /* valid configurations of the space */
  double raw;            /* configurations before the constraints */
  long planned;          /* evaluations the budget allows: min(valid, evals) */
  long evals;            /* recorded evaluations, cached ones included */
  long measured, cached, rejected, failed, skipped;
  double seconds;        /* wall time since the search started */
  uint64_t seed;
} odb_tune_stats;

/*
** Creates a search: checks the options, counts and lists the valid
** configurations (ODB_ERR_ARG when the space is empty or the constraints
** leave nothing valid), looks up the strategy (ODB_ERR_NAME listing the
** registered ones), and loads the evaluations stored for this target,
** machine and version in db. target must outlive the tuner.
*/
odb_status odb_tuner_create(odb_ctx *ctx, const odb_tune_target *target,
                            const odb_tune_opts *opts, odb_tuner **out);
void odb_tuner_destroy(odb_tuner *t);

/*
** Runs the offline search: asks the strategy, evaluates, records, until the
** strategy is done, the budget is spent or a stop is requested (then it
** returns ODB_INTERRUPTED with everything recorded so far kept).
*/
odb_status odb_tuner_run(odb_tuner *t);

/*
** The ask/tell interface for drivers that evaluate configurations
** themselves (online tuning inside a time-step loop):
** next() proposes a valid configuration not evaluated yet in this search
** (*done = 1 when the search is over); configurations the database already
** holds are recorded as cached evaluations on the way and not proposed.
** tell() records the result of a proposed configuration (the driver fills
** ev->status, ev->m, ev->err/tol, ev->msg; ev->cfg must be the proposal).
** evaluate() is what run() does with a proposal: setup, check, measure,
** teardown; it fills ev and does not record it.
*/
odb_status odb_tuner_next(odb_tuner *t, odb_config *cfg, int *done);
odb_status odb_tuner_tell(odb_tuner *t, const odb_tune_eval *ev);
odb_status odb_tuner_evaluate(odb_tuner *t, const odb_config *c,
                              odb_tune_eval *ev);

/* Results. Evaluations are kept in the order they were recorded. */
long odb_tuner_nevals(const odb_tuner *t);
const odb_tune_eval *odb_tuner_eval_at(const odb_tuner *t, long i);
/* The fastest evaluation with status ok (smallest median); NULL if none. */
const odb_tune_eval *odb_tuner_best(const odb_tuner *t);
/* Indices of the ok evaluations tied with the best (the best excluded),
   at most max of them; returns how many there are in all. */
long odb_tuner_tied(const odb_tuner *t, long *idx, long max);
void odb_tuner_stats(const odb_tuner *t, odb_tune_stats *out);
/* "k=v k2=v2" of c into buf (truncated text ends in "..."). */
const char *odb_tuner_config_text(const odb_tuner *t, const odb_config *c,
                                  char *buf, size_t len);

/* {====== writing a strategy */

/*
** A search strategy is a function table. The tuner calls create once, then
** alternates propose and observe; observe also sees configurations the
** tuner answered without running them (database entries, revisits).
** propose may return a configuration evaluated before in this search (a
** local search revisiting a point): the tuner answers it from its memo at
** once, without using budget. It must return valid configurations only
** (odb_tuner_valid_index >= 0). The model-guided and online strategies
** plug in here (they are registered under "model" and "online" when
** present).
*/
typedef struct odb_strategy {
  const char *name;
  const char *doc;
  odb_status (*create)(odb_tuner *t, const void *opts, void **state);
  /* *done = 1: nothing left to propose */
  odb_status (*propose)(void *state, odb_tuner *t, odb_config *cfg,
                        int *done);
  void (*observe)(void *state, odb_tuner *t, const odb_tune_eval *ev);
  /* a short state line for events ("T=0.05 restart 2"); may be NULL */
  void (*describe)(void *state, char *buf, size_t len);
  void (*destroy)(void *state);
} odb_strategy;

int odb_strategy_count(void);
const odb_strategy *odb_strategy_at(int i);
const odb_strategy *odb_strategy_find(const char *name);
/* "exhaustive, random, anneal" (the registered names) into buf. */
const char *odb_strategy_names(char *buf, size_t len);

extern const odb_strategy odb_strategy_exhaustive;
extern const odb_strategy odb_strategy_random;
extern const odb_strategy odb_strategy_anneal;

/* What a strategy may ask the tuner. */
odb_ctx *odb_tuner_ctx(const odb_tuner *t);
const odb_tune_target *odb_tuner_target(const odb_tuner *t);
const odb_space *odb_tuner_space(const odb_tuner *t);
odb_rng *odb_tuner_rng(odb_tuner *t);
long odb_tuner_nvalid(const odb_tuner *t);
/* The i-th valid configuration in enumeration order. */
const odb_config *odb_tuner_valid(const odb_tuner *t, long i);
/* Index of c among the valid configurations, -1 when c is invalid. */
long odb_tuner_valid_index(const odb_tuner *t, const odb_config *c);
/* The evaluation of c recorded in this search, or NULL. */
const odb_tune_eval *odb_tuner_lookup(const odb_tuner *t,
                                      const odb_config *c);
/* Evaluations the budget allows (min of the evals budget and valid). */
long odb_tuner_planned(const odb_tuner *t);

/* }====== */

/* {====== tolerances */

/*
** Verification tolerance for a result obtained after `ops` dependent
** floating-point updates per component in a precision with unit roundoff
** eps (DBL_EPSILON / 2 for double): 900 eps ops, which is 1e-13 for one
** update in double. Variants that reorder sums differ by a few eps per
** update; a wrong index or a missing term is off by far more.
*/
double odb_tune_tolerance(double eps, double ops);
/*
** The tolerance of an ODE step comparison: steps time steps of a method
** with s stages and m corrector iterations (m = 1 for explicit RK), with
** ops = steps * max(1, m) * s.
*/
double odb_tune_ode_tolerance(int steps, int s, int m);

/* }====== */

#endif
