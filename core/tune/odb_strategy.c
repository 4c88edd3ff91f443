/* odb_strategy.c - search strategies: exhaustive, random, annealing. */
#include "odb_tuner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** The strategy registry: every strategy by name, in the order --list shows
** them. The model-guided block-size search and the online tuner live in
** odb_strategy_model.c; a new strategy adds one line here.
*/
extern const odb_strategy odb_strategy_model;
extern const odb_strategy odb_strategy_online;

static const odb_strategy *const all_strategies[] = {
  &odb_strategy_exhaustive,
  &odb_strategy_random,
  &odb_strategy_anneal,
  &odb_strategy_model,
  &odb_strategy_online,
};
#define NALL ((int)(sizeof all_strategies / sizeof all_strategies[0]))

const odb_strategy *odb_strategy_at(int i) {
  return i >= 0 && i < NALL ? all_strategies[i] : NULL;
}

int odb_strategy_count(void) { return NALL; }

const odb_strategy *odb_strategy_find(const char *name) {
  const odb_strategy *s;
  for (int i = 0; name && (s = odb_strategy_at(i)); ++i)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

const char *odb_strategy_names(char *buf, size_t len) {
  const odb_strategy *s;
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; (s = odb_strategy_at(i)) && used + 1 < len; ++i) {
    int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", s->name);
    if (n < 0) break;
    used += (size_t)n;
  }
  return buf;
}

/* Uniform integer in [0, n), n >= 1. */
static long rand_below(odb_rng *r, long n) {
  return (long)(odb_rng_uniform(r) * (double)n);
}

/* {====== exhaustive and random: a fixed order of the valid set */

typedef struct order_state {
  const char *name;
  long *perm;            /* NULL: enumeration order */
  long next, n;
} order_state;

/* Assumes t has its valid set; shuffled says whether to permute it. */
static odb_status order_create(odb_tuner *t, void **state, const char *name,
                               int shuffled) {
  order_state *s = calloc(1, sizeof *s);
  if (!s) return ODB_FAIL(ODB_ERR_NOMEM, "strategy state");
  s->name = name;
  s->n = odb_tuner_nvalid(t);
  if (shuffled) {
    odb_rng *r = odb_tuner_rng(t);
    s->perm = malloc((size_t)s->n * sizeof *s->perm);
    if (!s->perm) {
      long n = s->n;
      free(s);
      return ODB_FAIL(ODB_ERR_NOMEM, "permutation of %ld", n);
    }
    for (long i = 0; i < s->n; ++i) s->perm[i] = i;
    for (long i = s->n - 1; i > 0; --i) {   /* Fisher-Yates */
      long j = rand_below(r, i + 1), tmp = s->perm[i];
      s->perm[i] = s->perm[j];
      s->perm[j] = tmp;
    }
  }
  *state = s;
  return ODB_OK;
}

static odb_status exhaustive_create(odb_tuner *t, const void *opts,
                                    void **state) {
  (void)opts;
  return order_create(t, state, "exhaustive", 0);
}

static odb_status random_create(odb_tuner *t, const void *opts,
                                void **state) {
  (void)opts;
  return order_create(t, state, "random", 1);
}

static odb_status order_propose(void *state, odb_tuner *t, odb_config *cfg,
                                int *done) {
  order_state *s = state;
  long i;
  *done = s->next >= s->n;
  if (*done) return ODB_OK;
  i = s->perm ? s->perm[s->next] : s->next;
  s->next++;
  *cfg = *odb_tuner_valid(t, i);
  return ODB_OK;
}

static void order_observe(void *state, odb_tuner *t, const odb_tune_eval *e) {
  (void)state; (void)t; (void)e;
}

static void order_describe(void *state, char *buf, size_t len) {
  order_state *s = state;
  snprintf(buf, len, "%s %ld/%ld", s->name, s->next, s->n);
}

static void order_destroy(void *state) {
  order_state *s = state;
  if (!s) return;
  free(s->perm);
  free(s);
}

const odb_strategy odb_strategy_exhaustive = {
  .name = "exhaustive",
  .doc = "every valid configuration in enumeration order",
  .create = exhaustive_create,
  .propose = order_propose,
  .observe = order_observe,
  .describe = order_describe,
  .destroy = order_destroy,
};

const odb_strategy odb_strategy_random = {
  .name = "random",
  .doc = "valid configurations in a random order without repetition "
         "(seeded), until the budget is spent",
  .create = random_create,
  .propose = order_propose,
  .observe = order_observe,
  .describe = order_describe,
  .destroy = order_destroy,
};

/* }====== */

/* {====== simulated annealing with restarts */

/*
** A walk over neighbouring configurations (one parameter one step away).
** A move to a configuration of median c from one of median c0 is taken
** when c <= c0, else with probability exp(-((c - c0) / c0) / T): the
** temperature is relative, T = 0.1 takes a 10% slower move with
** probability 1/e. T falls geometrically from t0 = 0.1 to t_end = 0.002
** over one leg of max(8, planned / 3) evaluations. A leg restarts from a
** random configuration not evaluated yet when `patience` = max(6, planned
** / 8) evaluations in a row did not improve the leg's best, or when the
** walk is stuck among evaluated neighbours. Failed and rejected
** configurations cost +inf: never moved to. Revisits are answered by the
** tuner from its memo without budget.
*/
typedef struct anneal_state {
  long cur;              /* valid index of the current point; -1: restart */
  double cur_cost;
  double leg_best;
  double T, t0, alpha;
  long since_improve, patience;
  long stuck;            /* proposals in a row that were evaluated before */
  long seen;             /* evaluations recorded when last observed */
  int restarts;
} anneal_state;

static odb_status anneal_create(odb_tuner *t, const void *opts,
                                void **state) {
  anneal_state *s = calloc(1, sizeof *s);
  long planned = odb_tuner_planned(t), leg = planned / 3;
  double t_end = 0.002;
  (void)opts;
  if (!s) return ODB_FAIL(ODB_ERR_NOMEM, "strategy state");
  if (leg < 8) leg = 8;
  s->cur = -1;
  s->t0 = s->T = 0.1;
  s->alpha = pow(t_end / s->t0, 1.0 / (double)leg);
  s->patience = planned / 8 > 6 ? planned / 8 : 6;
  s->restarts = -1;   /* the first start is not a restart */
  *state = s;
  return ODB_OK;
}

/* A random valid configuration not evaluated yet; -1 when none is left. */
static long fresh_start(odb_tuner *t) {
  odb_rng *r = odb_tuner_rng(t);
  long n = odb_tuner_nvalid(t), i, off;
  for (int k = 0; k < 64; ++k) {
    i = rand_below(r, n);
    if (!odb_tuner_lookup(t, odb_tuner_valid(t, i))) return i;
  }
  off = rand_below(r, n);
  for (long k = 0; k < n; ++k) {
    i = (off + k) % n;
    if (!odb_tuner_lookup(t, odb_tuner_valid(t, i))) return i;
  }
  return -1;
}

/* Begins a new leg at a fresh point (or ends the search). */
static void anneal_restart(anneal_state *s) {
  s->cur = -1;
  s->T = s->t0;
  s->since_improve = 0;
  s->stuck = 0;
}

static odb_status anneal_propose(void *state, odb_tuner *t, odb_config *cfg,
                                 int *done) {
  anneal_state *s = state;
  const odb_space *sp = odb_tuner_space(t);
  *done = 0;
  if (odb_tuner_nevals(t) >= odb_tuner_nvalid(t)) {
    *done = 1;
    return ODB_OK;
  }
  if (s->cur >= 0 && s->stuck > 4L * odb_space_nparams(sp) + 8)
    anneal_restart(s);
  if (s->cur < 0) {
    long i = fresh_start(t);
    if (i < 0) {
      *done = 1;
      return ODB_OK;
    }
    s->restarts++;
    *cfg = *odb_tuner_valid(t, i);
    return ODB_OK;
  }
  /* a valid neighbour; fresh ones first, then any valid one */
  for (int k = 0; k < 64; ++k) {
    odb_config nb;
    if (!odb_config_neighbor(sp, odb_tuner_valid(t, s->cur),
                             odb_tuner_rng(t), &nb))
      break;
    if (odb_tuner_valid_index(t, &nb) < 0) continue;
    *cfg = nb;
    if (!odb_tuner_lookup(t, &nb) || k >= 16) return ODB_OK;
  }
  anneal_restart(s);            /* no valid neighbour at all */
  return anneal_propose(state, t, cfg, done);
}

/* Takes the observed point as the new current one or not. */
static int anneal_accept(anneal_state *s, odb_tuner *t, double cost) {
  double rel;
  if (!isfinite(cost)) return 0;
  if (!isfinite(s->cur_cost) || cost <= s->cur_cost) return 1;
  rel = (cost - s->cur_cost) / s->cur_cost;
  return odb_rng_uniform(odb_tuner_rng(t)) < exp(-rel / s->T);
}

static void anneal_observe(void *state, odb_tuner *t, const odb_tune_eval *e) {
  anneal_state *s = state;
  double cost = e->status == ODB_TUNE_OK ? e->m.median : INFINITY;
  long vi = odb_tuner_valid_index(t, &e->cfg);
  int revisit = odb_tuner_nevals(t) == s->seen;
  s->seen = odb_tuner_nevals(t);
  s->stuck = revisit ? s->stuck + 1 : 0;
  if (s->cur < 0) {                   /* the start of a leg */
    s->cur = vi;
    s->cur_cost = s->leg_best = cost;
    return;
  }
  if (anneal_accept(s, t, cost)) {
    s->cur = vi;
    s->cur_cost = cost;
  }
  if (revisit) return;
  s->T *= s->alpha;
  if (cost < s->leg_best * (1 - 1e-9) ||
      (!isfinite(s->leg_best) && isfinite(cost))) {
    s->leg_best = cost;
    s->since_improve = 0;
  } else if (++s->since_improve >= s->patience) {
    anneal_restart(s);
  }
}

static void anneal_describe(void *state, char *buf, size_t len) {
  anneal_state *s = state;
  snprintf(buf, len, "anneal T=%.3g restart %d", s->T,
           s->restarts > 0 ? s->restarts : 0);
}

static void anneal_destroy(void *state) { free(state); }

const odb_strategy odb_strategy_anneal = {
  .name = "anneal",
  .doc = "simulated annealing over neighbouring configurations with "
         "restarts from random points (seeded)",
  .create = anneal_create,
  .propose = anneal_propose,
  .observe = anneal_observe,
  .describe = anneal_describe,
  .destroy = anneal_destroy,
};

/* }====== */
