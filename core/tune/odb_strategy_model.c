/* odb_strategy_model.c - model-guided block search; the online order. */
#include "odb_status.h"
#include "odb_event.h"
#include "odb_topo.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_solver.h"
#include "odb_team.h"
#include "odb_space.h"
#include "odb_tuner.h"
#include "odb_blockmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** The strategies "model" and "online" (odb_blockmodel.h says what they
** do). The valid configurations are split into groups that agree on every
** parameter but `block`; a group is searched to its end before the next
** one starts. Group order: enumeration order ("model"), or by barrier
** class ("online"), where a group may also be pruned before it starts.
*/

#define NO_POS (-1)
#define MAX_P  4096      /* team sizes whose barrier cost is cached */

typedef enum phase { PH_ASCEND = 0, PH_HALVE, PH_DONE } phase;

/* What became of a group before its search. */
typedef enum gstate { G_PENDING = 0, G_OUT, G_PRUNED, G_CUT } gstate;

typedef struct group {
  odb_config key;        /* a valid configuration of the group */
  gstate state;
  double screen_T;       /* online: the median of its first candidate */
  const odb_bm_variant *bv;   /* NULL: unknown to the model */
  const char *vname;
  int p;                 /* threads the model assumes */
  int cls;               /* barriers per corrector step */
  int rank;              /* online order */
  long nvalid;           /* valid configurations in the group */
  int *vals;             /* valid block value indices, ascending */
  int nvals;
} group;

typedef struct mstate {
  int online;
  odb_model_opts o;
  odb_model_report rep;
  int ivariant, iblock, ithreads;
  odb_bm_params base;    /* n, d, s, m (p set per group) */
  const odb_topo *topo;
  group *g;
  int ng;
  int *order;            /* group indices in search order */
  int cur;               /* position in order of the active group; -1 */
  int started;
  int screening;         /* online: the first pass (one candidate each) */
  /* the active group's search */
  odb_bm_params q;
  long lmin;
  int cpos[ODB_BM_MAX_CANDS];   /* candidate positions in vals, ascending */
  int ncand, k;
  phase ph;
  int pend;              /* position proposed, not yet observed */
  int best;              /* position of the group's best; NO_POS */
  double best_T;
  long half;             /* halving: the raw size last tried */
  long low;              /* halving: the smallest value evaluated */
  double *tbar;          /* measured T_bar per p (NaN: not yet) */
} mstate;

/* {====== setup */

/* The number of threads a group of variant name bv assumes. */
static int group_threads(const mstate *s, const odb_tuner *t,
                         const odb_config *c, const char *vname) {
  const odb_space *sp = odb_tuner_space(t);
  const odb_solver *sv = odb_tuner_target(t)->solver;
  const odb_bm_variant *bv = odb_bm_variant_find(vname);
  int parallel = bv ? bv->parallel : vname && strncmp(vname, "par_", 4) == 0;
  if (!parallel) return 1;
  if (s->ithreads >= 0)
    return (int)odb_space_int(sp, s->ithreads, c->idx[s->ithreads]);
  if (s->o.threads > 0) return s->o.threads;
  if (sv && sv->opts.threads > 0) return sv->opts.threads;
  return s->topo && s->topo->cores > 0 ? s->topo->cores : 1;
}

/* The configuration's variant name (or the solver's, or NULL). */
static const char *config_variant(const mstate *s, const odb_tuner *t,
                                  const odb_config *c) {
  const odb_solver *sv = odb_tuner_target(t)->solver;
  if (s->ivariant >= 0)
    return odb_space_str(odb_tuner_space(t), s->ivariant,
                         c->idx[s->ivariant]);
  return sv ? sv->variant->name : NULL;
}

/*
** Online order: barrier class, then specialized, tiled, untiled; within
** those, more tiled loops (working sets) first: the "t" variants refine
** the ones without (an order only; it decides which group sets T_best
** early, and so how early the hopeless rule can act).
*/
static int group_rank(const group *g) {
  int sub = !g->bv ? 2 : g->bv->specialized ? 0 : g->bv->nws > 0 ? 1 : 2;
  int nws = g->bv ? g->bv->nws : 0;
  return 100 * g->cls + 10 * sub + (ODB_BM_MAX_WS - nws);
}

/* Index of the group of c (block ignored); creates it when new. */
static odb_status find_group(mstate *s, const odb_tuner *t,
                             const odb_config *c, int *gi) {
  odb_config key = *c;
  int n = s->ng;
  if (s->iblock >= 0) key.idx[s->iblock] = 0;
  for (int i = n - 1; i >= 0; --i) {
    odb_config k2 = s->g[i].key;
    if (s->iblock >= 0) k2.idx[s->iblock] = 0;
    if (odb_config_equal(&k2, &key)) {
      *gi = i;
      return ODB_OK;
    }
  }
  if ((n & (n - 1)) == 0) {          /* grow at powers of two */
    group *ng = realloc(s->g, (size_t)(n ? 2 * n : 8) * sizeof *ng);
    if (!ng) return ODB_FAIL(ODB_ERR_NOMEM, "strategy groups");
    s->g = ng;
  }
  memset(&s->g[n], 0, sizeof s->g[n]);
  s->g[n].key = *c;
  s->g[n].vname = config_variant(s, t, c);
  s->g[n].bv = odb_bm_variant_find(s->g[n].vname);
  s->g[n].p = group_threads(s, t, c, s->g[n].vname);
  s->g[n].cls = s->g[n].bv ? s->g[n].bv->barriers : 0;
  s->g[n].rank = group_rank(&s->g[n]);
  s->ng = n + 1;
  *gi = n;
  return ODB_OK;
}

/* Adds block value index v to group g's list (ascending by enumeration). */
static odb_status group_add_value(group *g, int v) {
  if (g->nvals > 0 && g->vals[g->nvals - 1] == v) return ODB_OK;
  if ((g->nvals & (g->nvals - 1)) == 0) {
    int *nv = realloc(g->vals, (size_t)(g->nvals ? 2 * g->nvals : 4) *
                               sizeof *nv);
    if (!nv) return ODB_FAIL(ODB_ERR_NOMEM, "strategy block values");
    g->vals = nv;
  }
  g->vals[g->nvals++] = v;
  return ODB_OK;
}

/* qsort order of block value indices (ascending values). */
static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Builds the groups from the valid configurations. */
static odb_status build_groups(mstate *s, const odb_tuner *t) {
  long nv = odb_tuner_nvalid(t);
  for (long i = 0; i < nv; ++i) {
    const odb_config *c = odb_tuner_valid(t, i);
    int gi = 0;
    ODB_TRY(find_group(s, t, c, &gi));
    s->g[gi].nvalid++;
    ODB_TRY(group_add_value(&s->g[gi],
                            s->iblock >= 0 ? c->idx[s->iblock] : 0));
  }
  for (int i = 0; i < s->ng; ++i) {  /* values may interleave: sort, dedupe */
    group *g = &s->g[i];
    int k = 0;
    qsort(g->vals, (size_t)g->nvals, sizeof *g->vals, cmp_int);
    for (int j = 0; j < g->nvals; ++j)
      if (k == 0 || g->vals[k - 1] != g->vals[j]) g->vals[k++] = g->vals[j];
    g->nvals = k;
  }
  return ODB_OK;
}

/* Order of the groups: as found, or stably by rank (online). */
static odb_status build_order(mstate *s) {
  s->order = malloc((size_t)(s->ng > 0 ? s->ng : 1) * sizeof *s->order);
  if (!s->order) return ODB_FAIL(ODB_ERR_NOMEM, "strategy order");
  for (int i = 0; i < s->ng; ++i) s->order[i] = i;
  if (!s->online) return ODB_OK;
  for (int i = 1; i < s->ng; ++i) {  /* insertion sort: stable */
    int x = s->order[i], j = i;
    while (j > 0 && s->g[s->order[j - 1]].rank > s->g[x].rank) {
      s->order[j] = s->order[j - 1];
      --j;
    }
    s->order[j] = x;
  }
  return ODB_OK;
}

/* n, d, s, m from the options or the target's solver. */
static odb_status base_params(mstate *s, const odb_tuner *t) {
  const odb_solver *sv = odb_tuner_target(t)->solver;
  if (s->o.params.n > 0) {
    s->base = s->o.params;
  } else if (sv) {
    s->base.n = sv->n;
    s->base.d = sv->problem->d;
    s->base.s = sv->method->s;
    s->base.m = sv->m;
  } else {
    return ODB_FAIL(ODB_ERR_ARG, "strategy '%s' needs a solver target (or "
                    "the problem's n, d, s and m in its options)",
                    s->online ? "online" : "model");
  }
  if (s->base.m < 1) s->base.m = 1;
  if (s->base.s < 1) s->base.s = 1;
  if (s->base.d <= 0 || s->base.d > s->base.n) s->base.d = s->base.n;
  return ODB_OK;
}

/* Creates the state of either strategy. */
static odb_status create(odb_tuner *t, const void *opts, void **state,
                         int online) {
  const odb_space *sp = odb_tuner_space(t);
  odb_ctx *ctx = odb_tuner_ctx(t);
  mstate *s = calloc(1, sizeof *s);
  odb_status st;
  int i;
  if (!s) return ODB_FAIL(ODB_ERR_NOMEM, "strategy state");
  *state = s;
  s->online = online;
  if (opts) s->o = *(const odb_model_opts *)opts;
  if (s->o.steps_per_eval <= 0) s->o.steps_per_eval = 1;
  if (s->o.hopeless == 0) s->o.hopeless = online ? 2.0 : -1.0;
  s->topo = s->o.topo ? s->o.topo : ctx ? &ctx->topo : NULL;
  i = odb_space_find(sp, "variant");
  s->ivariant = i >= 0 && odb_space_is_enum(sp, i) ? i : -1;
  i = odb_space_find(sp, "block");
  s->iblock = i >= 0 && !odb_space_is_enum(sp, i) ? i : -1;
  i = odb_space_find(sp, "threads");
  s->ithreads = i >= 0 && !odb_space_is_enum(sp, i) ? i : -1;
  s->cur = -1;
  s->pend = NO_POS;
  s->screening = online;
  if ((st = base_params(s, t)) != ODB_OK) return st;
  if ((st = build_groups(s, t)) != ODB_OK) return st;
  if ((st = build_order(s)) != ODB_OK) return st;
  s->rep.groups = s->ng;
  if (s->o.report) *s->o.report = s->rep;
  return ODB_OK;
}

/* The strategy "model" (opts: odb_model_opts or NULL). */
static odb_status model_create(odb_tuner *t, const void *opts, void **state) {
  return create(t, opts, state, 0);
}

/* The strategy "online" (opts: odb_model_opts or NULL). */
static odb_status online_create(odb_tuner *t, const void *opts,
                                void **state) {
  return create(t, opts, state, 1);
}

/* Frees the state; accepts NULL (a create that failed early). */
static void mstate_destroy(void *state) {
  mstate *s = state;
  if (!s) return;
  for (int i = 0; i < s->ng; ++i) free(s->g[i].vals);
  free(s->g);
  free(s->order);
  free(s->tbar);
  free(s);
}

/* }====== */

/* {====== the active group */

/* The integer value of position pos of the group's block values. */
static long value_at(const mstate *s, const odb_tuner *t, const group *g,
                     int pos) {
  if (s->iblock < 0) return 0;
  return odb_space_int(odb_tuner_space(t), s->iblock, g->vals[pos]);
}

/* Position of the largest valid value <= B; the smallest when none is. */
static int map_down(const mstate *s, const odb_tuner *t, const group *g,
                    long B) {
  int lo = 0, hi = g->nvals - 1;
  if (value_at(s, t, g, 0) > B) return 0;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (value_at(s, t, g, mid) <= B) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/*
** Like map_down among the positions whose value is a legal block of the
** group's variant: the largest legal value <= B, else the smallest legal
** one, else map_down's answer.
*/
static int map_legal(const mstate *s, const odb_tuner *t, const group *g,
                     long B) {
  int pos = map_down(s, t, g, B);
  if (!g->bv) return pos;
  for (int i = pos; i >= 0; --i)
    if (value_at(s, t, g, i) <= B &&
        odb_bm_block_ok(g->bv, &s->q, value_at(s, t, g, i)))
      return i;
  for (int i = 0; i < g->nvals; ++i)
    if (odb_bm_block_ok(g->bv, &s->q, value_at(s, t, g, i))) return i;
  return pos;
}

/* Logs the model's view of group g (debug level). */
static void log_candidates(const mstate *s, odb_tuner *t, const group *g,
                           const odb_bm_cand *c, int nc) {
  char buf[512];
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < nc && used + 40 < sizeof buf; ++i)
    used += (size_t)snprintf(buf + used, sizeof buf - used, " %ld(%s%s%d)",
                             c[i].B, c[i].ws >= 0 ?
                             odb_bm_ws_name(g->bv, c[i].ws) : "rule",
                             c[i].level ? " L" : "", c[i].level);
  odb_ctx_log(odb_tuner_ctx(t), ODB_LOG_DEBUG, "%s %s (p=%d): model "
              "candidates%s", s->online ? "online" : "model", g->vname,
              g->p, buf);
}

/* Candidate positions of group g: the model's, or all values. */
static void group_candidates(mstate *s, odb_tuner *t, const group *g) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  int nlv = odb_bm_levels(s->topo, s->q.p, s->o.factor, lv,
                          ODB_TOPO_MAX_CACHES);
  s->lmin = odb_bm_line_min(lv, nlv);
  s->ncand = 0;
  if (s->iblock < 0 || g->nvals == 1 || (g->bv && g->bv->nws == 0)) {
    long B = odb_bm_per_thread(&s->q);   /* untiled: T = {n/p} */
    s->cpos[s->ncand++] = s->iblock < 0 ? 0 : map_down(s, t, g, B);
  } else if (g->bv) {
    odb_bm_cand c[ODB_BM_MAX_CANDS];
    int nc = odb_bm_candidates(g->bv, &s->q, lv, nlv, c, ODB_BM_MAX_CANDS);
    log_candidates(s, t, g, c, nc);
    for (int i = 0; i < nc; ++i) {
      int pos = map_legal(s, t, g, c[i].B);
      if (s->ncand == 0 || s->cpos[s->ncand - 1] < pos)
        s->cpos[s->ncand++] = pos;
    }
  } else {
    for (int i = 0; i < g->nvals && i < ODB_BM_MAX_CANDS; ++i)
      s->cpos[s->ncand++] = i;
  }
}

/* Seconds per barrier episode with p threads (measured once per p). */
static double barrier_seconds(mstate *s, odb_tuner *t, int p) {
  double sec = NAN;
  if (p <= 1) return 0;
  if (s->o.barrier) return s->o.barrier(s->o.barrier_ud, p);
  if (p >= MAX_P) p = MAX_P - 1;
  if (!s->tbar) {
    s->tbar = malloc(MAX_P * sizeof *s->tbar);
    if (!s->tbar) return 0;
    for (int i = 0; i < MAX_P; ++i) s->tbar[i] = NAN;
  }
  if (isnan(s->tbar[p])) {
    if (odb_barrier_cost(s->topo, p, ODB_BARRIER_FLAGS, &sec) != ODB_OK) {
      odb_ctx_log(odb_tuner_ctx(t), ODB_LOG_WARN, "online: barrier cost "
                  "with %d threads: %s; no pruning", p, odb_last_error());
      odb_clear_error();
      sec = 0;
    }
    s->tbar[p] = sec;
  }
  return s->tbar[p];
}

/* The best seconds per step so far; INFINITY when none. */
static double best_step(const mstate *s, const odb_tuner *t) {
  const odb_tune_eval *b = odb_tuner_best(t);
  return b ? b->m.median / s->o.steps_per_eval : INFINITY;
}

/* 1 when group g is pruned by the barrier bound (online). */
static int barrier_pruned(mstate *s, odb_tuner *t, const group *g) {
  double tb = best_step(s, t), bar;
  if (!s->online || g->cls == 0 || !isfinite(tb)) return 0;
  bar = barrier_seconds(s, t, g->p);
  if (!(tb < g->cls * s->base.m * bar)) return 0;
  odb_ctx_log(odb_tuner_ctx(t), ODB_LOG_INFO, "online: %s pruned: %d m "
              "T_bar(%d) = %d x %d x %.3g s > T_best = %.3g s", g->vname,
              g->cls, g->p, g->cls, s->base.m, bar, tb);
  return 1;
}

/*
** Sets up group g for its search (or its screening): parameters, levels
** and candidates. 0 when pre-selection or the barrier bound leaves it out
** (its state says which).
*/
static int start_group(mstate *s, odb_tuner *t, group *g) {
  char why[160];
  s->q = s->base;
  s->q.p = g->p;
  if (g->state == G_PENDING && g->bv &&
      !odb_bm_applies(g->bv, &s->q, why, sizeof why)) {
    odb_ctx_log(odb_tuner_ctx(t), ODB_LOG_DEBUG, "%s: %s left out: %s",
                s->online ? "online" : "model", g->vname, why);
    g->state = G_OUT;
    s->rep.preselected_out++;
  }
  if (g->state == G_PENDING && barrier_pruned(s, t, g)) {
    g->state = G_PRUNED;
    s->rep.pruned++;
    s->rep.pruned_configs += g->nvalid;
  }
  if (g->state != G_PENDING) return 0;
  group_candidates(s, t, g);
  s->k = 0;
  s->ph = PH_ASCEND;
  s->best = NO_POS;
  s->best_T = INFINITY;
  return 1;
}

/*
** The hopeless rule (online, after the screening): a tiled group whose
** first candidate took more than `hopeless` times the best is not searched
** further.
*/
static int cut_hopeless(mstate *s, odb_tuner *t, group *g) {
  const odb_tune_eval *b = odb_tuner_best(t);
  int tiled = g->bv ? g->bv->nws > 0 && g->nvals > 1 : g->nvals > 1;
  if (!s->online || s->o.hopeless <= 0 || !b || !tiled ||
      !(g->screen_T > s->o.hopeless * b->m.median))
    return 0;
  odb_ctx_log(odb_tuner_ctx(t), ODB_LOG_DEBUG, "online: %s not searched "
              "further: %.3g s > %g x the best %.3g s", g->vname, g->screen_T,
              s->o.hopeless, b->m.median);
  g->state = G_CUT;
  s->rep.hopeless++;
  return 1;
}

/* Starts the next group in order to search; 0 when none is left. */
static int next_group(mstate *s, odb_tuner *t) {
  while (++s->cur < s->ng) {
    group *g = &s->g[s->order[s->cur]];
    if (start_group(s, t, g) && !cut_hopeless(s, t, g)) return 1;
  }
  return 0;
}

/*
** The screening pass (online): the first candidate of every group in
** order, so that every group meets a T_best before it is searched.
** Returns the position to propose in the group at s->cur, or NO_POS when
** the pass is over.
*/
static int next_screen(mstate *s, odb_tuner *t) {
  while (++s->cur < s->ng) {
    group *g = &s->g[s->order[s->cur]];
    g->screen_T = NAN;
    if (start_group(s, t, g)) return s->cpos[0];
  }
  s->screening = 0;
  s->cur = -1;
  return NO_POS;
}

/* The next position to evaluate in the active group; NO_POS when done. */
static int next_position(mstate *s, odb_tuner *t, const group *g) {
  if (s->ph == PH_ASCEND) {
    if (s->k < s->ncand) return s->cpos[s->k];
    /* the ascending search ended: halve when the smallest won */
    if (!g->bv || s->best == NO_POS || s->best != s->cpos[0]) {
      s->ph = PH_DONE;
      return NO_POS;
    }
    s->ph = PH_HALVE;
    s->half = s->low = value_at(s, t, g, s->best);
  }
  while (s->ph == PH_HALVE) {
    int pos;
    s->half = odb_bm_halve(s->half, s->lmin);
    if (s->half < s->lmin || !odb_bm_block_ok(g->bv, &s->q, s->half) ||
        value_at(s, t, g, 0) > s->half)
      break;
    pos = map_legal(s, t, g, s->half);
    if (value_at(s, t, g, pos) < s->low) return pos;
  }
  s->ph = PH_DONE;
  return NO_POS;
}

/* }====== */

/* {====== propose and observe */

/*
** Proposes the screening candidates (online), then the next block of the
** active group, moving on through the groups; *done when none is left.
*/
static odb_status model_propose(void *state, odb_tuner *t, odb_config *cfg,
                                int *done) {
  mstate *s = state;
  *done = 0;
  while (s->screening) {
    int pos = next_screen(s, t);
    if (pos != NO_POS) {
      group *g = &s->g[s->order[s->cur]];
      *cfg = g->key;
      if (s->iblock >= 0) cfg->idx[s->iblock] = g->vals[pos];
      s->pend = pos;
      if (s->o.report) *s->o.report = s->rep;
      return ODB_OK;
    }
  }
  if (!s->started) {
    s->started = 1;
    if (!next_group(s, t)) *done = 1;
  }
  while (!*done) {
    group *g = &s->g[s->order[s->cur]];
    int pos = next_position(s, t, g);
    if (pos != NO_POS) {
      *cfg = g->key;
      if (s->iblock >= 0) cfg->idx[s->iblock] = g->vals[pos];
      s->pend = pos;
      break;
    }
    if (!next_group(s, t)) *done = 1;
  }
  if (s->o.report) *s->o.report = s->rep;
  return ODB_OK;
}

/*
** Takes the result of the pending proposal (others, such as database
** entries of other configurations, are ignored): the screening time, or a
** step of the ascending search or of the halving.
*/
static void model_observe(void *state, odb_tuner *t, const odb_tune_eval *e) {
  mstate *s = state;
  group *g;
  odb_config c;
  int ok = e->status == ODB_TUNE_OK;
  double T = ok ? e->m.median : NAN;
  if (s->pend == NO_POS || s->cur < 0 || s->cur >= s->ng) return;
  g = &s->g[s->order[s->cur]];
  c = g->key;
  if (s->iblock >= 0) c.idx[s->iblock] = g->vals[s->pend];
  if (!odb_config_equal(&c, &e->cfg)) return;
  if (s->screening) {
    g->screen_T = T;
  } else if (s->ph == PH_ASCEND) {
    s->k++;
    if (ok && (s->best == NO_POS || T < s->best_T)) {
      s->best = s->pend;           /* the majority of its runs was faster */
      s->best_T = T;
    } else if (ok) {
      s->k = s->ncand;             /* the first slowdown ends the ascent */
    }
  } else if (s->ph == PH_HALVE) {
    s->low = value_at(s, t, g, s->pend);
    if (ok && T < s->best_T) {
      s->best = s->pend;
      s->best_T = T;
    } else {
      s->ph = PH_DONE;
    }
  }
  s->pend = NO_POS;
  if (s->o.report) *s->o.report = s->rep;
}

/* "model PipeDb2mt ascend 2/4, group 3/11" for events. */
static void model_describe(void *state, char *buf, size_t len) {
  mstate *s = state;
  const group *g = s->cur >= 0 && s->cur < s->ng ? &s->g[s->order[s->cur]]
                                                 : NULL;
  static const char *const ph[] = {"ascend", "halve", "done"};
  if (!g) {
    snprintf(buf, len, "%s", s->online ? "online" : "model");
    return;
  }
  snprintf(buf, len, "%s %s %s %d/%d, group %d/%d%s",
           s->online ? "online" : "model", g->vname ? g->vname : "",
           ph[s->ph], s->k, s->ncand, s->cur + 1, s->ng,
           s->rep.pruned ? " (pruned some)" : "");
}

const odb_strategy odb_strategy_model = {
  .name = "model",
  .doc = "the thesis's working-set model proposes block sizes per cache "
         "level; per variant ascending from the smallest, stop at the first "
         "slowdown, halve while the smallest wins",
  .create = model_create,
  .propose = model_propose,
  .observe = model_observe,
  .describe = model_describe,
  .destroy = mstate_destroy,
};

const odb_strategy odb_strategy_online = {
  .name = "online",
  .doc = "the thesis's online order: model-guided block search, barrier-free "
         "variants first, 1- and 2-barrier variants pruned by m T_bar(p)",
  .create = online_create,
  .propose = model_propose,
  .observe = model_observe,
  .describe = model_describe,
  .destroy = mstate_destroy,
};

/* }====== */
