/* test_tuner.c - spaces, measurement, strategies and verification. */
#include "odebench.h"
#include "odb_space.h"
#include "odb_tuner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"

/* {====== a synthetic objective with a known optimum */

/*
** x in 0..20, y the powers of two 1..64, mode in {a, b, c}. The "time" is
** 1e-3 (1 + (x - 13)^2 / 100 + (log2 y - 3)^2 / 10 + (mode != b) 0.2), so
** the optimum is x=13 y=8 mode=b at 1e-3. Constraint: x + log2(y) <= 22.
*/
typedef struct synth {
  odb_space *sp;
  int ix, iy, im;
  long runs, invalid_runs, checks;
  const char *bad;       /* configuration text the check rejects, or NULL */
  double noise;          /* relative amplitude of deterministic jitter */
  long tick;
  odb_ctx *ctx;
  const char *skip_at;   /* sets ctx->skip while running this config */
} synth;

static int ilog2(long v) {
  int k = 0;
  while (v > 1) {
    v >>= 1;
    ++k;
  }
  return k;
}

static double synth_cost(const synth *s, const odb_config *c) {
  long x = odb_space_int(s->sp, s->ix, c->idx[s->ix]);
  long y = odb_space_int(s->sp, s->iy, c->idx[s->iy]);
  const char *m = odb_space_str(s->sp, s->im, c->idx[s->im]);
  double ly = ilog2(y);
  return 1e-3 * (1 + (x - 13.0) * (x - 13.0) / 100 + (ly - 3) * (ly - 3) / 10
                 + (strcmp(m, "b") != 0) * 0.2);
}

/* x + log2(y) <= 22; depends on x and y only. */
static int synth_pred(const odb_space *sp, const odb_config *c, void *ud) {
  synth *s = ud;
  (void)sp;
  return odb_space_int(s->sp, s->ix, c->idx[s->ix]) +
         ilog2(odb_space_int(s->sp, s->iy, c->idx[s->iy])) <= 22;
}

static odb_status synth_run(void *ud, const odb_config *c, double *secs) {
  synth *s = ud;
  char text[128];
  s->runs++;
  if (odb_space_check(s->sp, c) != 1) s->invalid_runs++;
  odb_config_format(s->sp, c, text, sizeof text);
  if (s->skip_at && s->ctx && strcmp(text, s->skip_at) == 0) s->ctx->skip = 1;
  /* jitter cycling through -1, 0, +1 times noise */
  *secs = synth_cost(s, c) * (1 + s->noise * (double)((s->tick++ % 3) - 1));
  return ODB_OK;
}

static odb_status synth_check(void *ud, const odb_config *c, double *err,
                              double *tol) {
  synth *s = ud;
  char text[128];
  s->checks++;
  odb_config_format(s->sp, c, text, sizeof text);
  *tol = 1e-13;
  *err = s->bad && strcmp(text, s->bad) == 0 ? 0.5 : 1e-15;
  return ODB_OK;
}

static void synth_init(synth *s) {
  static const char *const modes[] = {"a", "b", "c"};
  static const char *const deps[] = {"x", "y", NULL};
  memset(s, 0, sizeof *s);
  odb_space_create(&s->sp);
  odb_space_add_range(s->sp, "x", 0, 20, 1);
  odb_space_add_pow2(s->sp, "y", 1, 64);
  odb_space_add_enum(s->sp, "mode", modes, 3);
  s->ix = odb_space_find(s->sp, "x");
  s->iy = odb_space_find(s->sp, "y");
  s->im = odb_space_find(s->sp, "mode");
  odb_space_add_constraint(s->sp, synth_pred, s, deps, "x + log2 y <= 22");
}

static odb_tune_target synth_target(synth *s) {
  odb_tune_target t;
  memset(&t, 0, sizeof t);
  t.space = s->sp;
  t.ud = s;
  t.run = synth_run;
  t.check = synth_check;
  t.key.problem = "synthetic";
  return t;
}

/* Fast measurement for deterministic objectives. */
static odb_tune_opts quick_opts(const char *strategy, long evals,
                                uint64_t seed) {
  odb_tune_opts o;
  memset(&o, 0, sizeof o);
  o.strategy = strategy;
  o.budget.evals = evals;
  o.has_seed = 1;
  o.seed = seed;
  o.measure.warmup = -1;
  o.measure.min_reps = 3;
  o.measure.max_reps = 5;
  return o;
}

/* Number of valid configurations counted by brute force. */
static long brute_count(synth *s) {
  long n = 0;
  odb_config c;
  odb_config_init(s->sp, &c);
  for (int a = 0; a < odb_space_nvalues(s->sp, 0); ++a)
    for (int b = 0; b < odb_space_nvalues(s->sp, 1); ++b)
      for (int d = 0; d < odb_space_nvalues(s->sp, 2); ++d) {
        c.idx[0] = a;
        c.idx[1] = b;
        c.idx[2] = d;
        n += odb_space_check(s->sp, &c) == 1;
      }
  return n;
}

/* }====== */

/* {====== spaces */

static int no_deps_pred(const odb_space *sp, const odb_config *c, void *ud) {
  return synth_pred(sp, c, ud);
}

static int never(const odb_space *sp, const odb_config *c, void *ud) {
  (void)sp; (void)c; (void)ud;
  return 0;
}

static int raises(const odb_space *sp, const odb_config *c, void *ud) {
  (void)sp; (void)c; (void)ud;
  ODB_FAIL(ODB_ERR_ARG, "where: boom");
  return -1;
}

static void test_space_basics(void) {
  synth s;
  odb_space *sp;
  long n = 0, n2 = 0, vals[] = {64, 8, 16};
  odb_config *list = NULL, c;
  char text[128];
  odb_status st;
  synth_init(&s);
  tap_ok(odb_space_raw_size(s.sp) == 21 * 7 * 3, "raw size 441");
  st = odb_space_count(s.sp, &n);
  tap_ok(st == ODB_OK && n == brute_count(&s),
         "count with pruning = brute force (%ld)", n);
  odb_space_create(&sp);
  {
    static const char *const modes[] = {"a", "b", "c"};
    odb_space_add_range(sp, "x", 0, 20, 1);
    odb_space_add_pow2(sp, "y", 1, 64);
    odb_space_add_enum(sp, "mode", modes, 3);
    odb_space_add_constraint(sp, no_deps_pred, &s, NULL, NULL);
  }
  st = odb_space_count(sp, &n2);
  tap_ok(st == ODB_OK && n2 == n, "count without dependencies agrees (%ld)",
         n2);
  tap_ok(odb_space_enumerate(s.sp, &list, &n2) == ODB_OK && n2 == n,
         "enumerate lists every valid configuration");
  {
    int all_valid = 1, ordered = 1;
    for (long i = 0; list && i < n2; ++i) {
      all_valid &= odb_space_check(s.sp, &list[i]) == 1;
      if (i && list[i - 1].idx[0] > list[i].idx[0]) ordered = 0;
    }
    tap_ok(all_valid && ordered, "listed ones are valid, first param slowest");
  }
  free(list);
  odb_config_init(s.sp, &c);
  c.idx[0] = 13;
  c.idx[1] = 3;
  c.idx[2] = 1;
  tap_ok(odb_config_format(s.sp, &c, text, sizeof text) == ODB_OK &&
         strcmp(text, "x=13 y=8 mode=b") == 0, "format: '%s'", text);
  {
    odb_config d;
    tap_ok(odb_config_parse(s.sp, "mode=b,y=8 x=13", &d) == ODB_OK &&
           odb_config_equal(&c, &d), "parse in any order round-trips");
    tap_ok(odb_config_parse(s.sp, "x=13 y=8", &d) == ODB_ERR_ARG &&
           strstr(odb_last_error(), "lacks parameter 'mode'"),
           "parse: missing key (%s)", odb_last_error());
    tap_ok(odb_config_parse(s.sp, "x=13 y=7 mode=b", &d) == ODB_ERR_ARG &&
           strstr(odb_last_error(), "no value '7'"), "parse: bad value");
    tap_ok(odb_config_parse(s.sp, "x=1 y=8 mode=b z=2", &d) == ODB_ERR_ARG &&
           strstr(odb_last_error(), "unknown parameter 'z'"),
           "parse: unknown key");
  }
  tap_ok(odb_config_int(s.sp, &c, "y", -1) == 8 &&
         strcmp(odb_config_str(s.sp, &c, "mode", "?"), "b") == 0 &&
         odb_config_int(s.sp, &c, "nope", -1) == -1, "typed accessors");
  /* declaration errors */
  tap_ok(odb_space_add_range(sp, "z", 5, 1, 1) == ODB_ERR_ARG,
         "range with min > max refused: %s", odb_last_error());
  tap_ok(odb_space_add_range(sp, "z", 1, 5, 0) == ODB_ERR_ARG,
         "range with step 0 refused");
  tap_ok(odb_space_add_pow2(sp, "z", 5, 7) == ODB_ERR_ARG,
         "no power of two in [5, 7] refused");
  tap_ok(odb_space_add_range(sp, "x", 1, 5, 1) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "twice"), "duplicate name refused");
  tap_ok(odb_space_add_enum(sp, "z", NULL, 0) == ODB_ERR_ARG,
         "empty enumeration refused");
  {
    long dup[] = {1, 2, 1};
    tap_ok(odb_space_add_ints(sp, "z", dup, 3) == ODB_ERR_ARG,
           "duplicate integer refused");
  }
  tap_ok(odb_space_add_ints(sp, "z", vals, 3) == ODB_OK &&
         odb_space_int(sp, 3, 0) == 8 && odb_space_int(sp, 3, 2) == 64,
         "integer lists are sorted");
  odb_space_destroy(sp);
  /* a constraint that cannot decide aborts counting with its message */
  odb_space_create(&sp);
  odb_space_add_range(sp, "a", 1, 3, 1);
  odb_space_add_constraint(sp, raises, NULL, NULL, NULL);
  tap_ok(odb_space_count(sp, &n) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "boom"), "failing constraint: %s",
         odb_last_error());
  odb_space_destroy(sp);
  odb_space_destroy(s.sp);
}

/* }====== */

/* {====== measurement */

typedef struct seq { const double *v; int n, i; } seq;

static odb_status seq_run(void *ud, double *secs) {
  seq *q = ud;
  *secs = q->v[q->i++ % q->n];
  return ODB_OK;
}

static void test_measure(void) {
  double d[] = {5, 1, 4, 2, 3};
  double flat[] = {1e-3, 1e-3, 1e-3};
  double noisy[] = {1e-3, 2e-3, 3e-3, 1.5e-3};
  odb_measurement m;
  odb_measure_opts o = {0};
  odb_status st;
  seq q;
  odb_measure_summarize(d, 5, &m);
  tap_ok(m.median == 3 && m.p25 == 2 && m.p75 == 4 && m.min == 1 &&
         m.max == 5 && fabs(m.spread - 2.0 / 3) < 1e-15,
         "summary of 1..5: median 3, IQR 2");
  {
    double e[] = {1, 2, 3, 4};
    tap_ok(odb_quantile(e, 4, 0.25) == 1.75 && odb_quantile(e, 4, 0.5) == 2.5,
           "type-7 quantiles");
  }
  q = (seq){flat, 3, 0};
  o.min_reps = 3;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && m.reps == 3 && q.i == 4 && m.spread == 0,
         "steady timings stop at min_reps after one warm-up (%d reps)",
         m.reps);
  q = (seq){noisy, 4, 0};
  o.max_reps = 9;
  o.warmup = -1;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && m.reps == 9 && q.i == 9,
         "noisy timings run to max_reps (%d)",
         m.reps);
  q = (seq){noisy, 4, 0};
  o.max_seconds = 2.5e-3;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && m.reps == 2, "time cap ends the repetitions (%d reps)", m.reps);
  tap_ok(odb_measure_tied(1.0, 0.02, 1.01, 0.01) &&
         !odb_measure_tied(1.0, 0.02, 1.05, 0.02) &&
         odb_measure_tied(1.0, 0.0, 1.0, 0.0) &&
         !odb_measure_tied(1.0, 0.0, 1.0000001, 0.0),
         "ties: within the larger IQR");
}

/* }====== */

/* {====== strategies */

static odb_ctx *make_ctx(void) {
  odb_ctx_opts co;
  odb_ctx *ctx = NULL;
  memset(&co, 0, sizeof co);
  co.seed = 7;
  co.log_level = ODB_LOG_DEBUG;
  odb_ctx_create(&co, &ctx);
  return ctx;
}

/* Runs a search; returns the tuner (caller destroys) or NULL. */
static odb_tuner *search(odb_ctx *ctx, synth *s, odb_tune_target *tg,
                         const odb_tune_opts *o, odb_status *st) {
  odb_tuner *t = NULL;
  *tg = synth_target(s);
  *st = odb_tuner_create(ctx, tg, o, &t);
  if (*st != ODB_OK) return NULL;
  *st = odb_tuner_run(t);
  return t;
}

/* 1 when no configuration appears twice among the evaluations. */
static int no_duplicates(const odb_tuner *t) {
  for (long i = 0; i < odb_tuner_nevals(t); ++i)
    for (long j = 0; j < i; ++j)
      if (odb_config_equal(&odb_tuner_eval_at(t, i)->cfg,
                           &odb_tuner_eval_at(t, j)->cfg))
        return 0;
  return 1;
}

static void test_exhaustive(odb_ctx *ctx) {
  synth s;
  odb_tune_target tg;
  odb_tune_opts o = quick_opts("exhaustive", 0, 1);
  odb_tune_stats stats;
  odb_status st;
  odb_tuner *t;
  long valid;
  char text[128];
  uint64_t cursor = odb_event_last_seq(ctx->events);
  odb_event evs[1024];
  int nev, ok_steps = 1, nbest = 0, neval = 0;
  synth_init(&s);
  odb_space_count(s.sp, &valid);
  t = search(ctx, &s, &tg, &o, &st);
  tap_ok(st == ODB_OK && t, "exhaustive search runs");
  if (!t) return;
  odb_tuner_stats(t, &stats);
  tap_ok(stats.evals == valid && stats.measured == valid &&
         odb_tuner_nevals(t) == valid, "every valid configuration once (%ld)",
         stats.evals);
  tap_ok(s.invalid_runs == 0 && s.checks == valid,
         "no invalid configuration run; each verified once");
  odb_tuner_config_text(t, &odb_tuner_best(t)->cfg, text, sizeof text);
  tap_ok(strcmp(text, "x=13 y=8 mode=b") == 0 &&
         fabs(odb_tuner_best(t)->m.median - 1e-3) < 1e-12,
         "finds the known optimum (%s)", text);
  nev = odb_event_poll(ctx->events, &cursor, evs, 1024, NULL);
  for (int i = 0; i < nev; ++i) {
    if (evs[i].kind == ODB_EV_TUNE_EVAL) {
      ++neval;
      ok_steps &= evs[i].step == neval && evs[i].accepted == valid;
    }
    if (evs[i].kind == ODB_EV_TUNE_BEST) ++nbest;
  }
  tap_ok(neval == valid && ok_steps, "one TUNE_EVAL per evaluation, step "
         "1..n, accepted = n");
  tap_ok(nbest >= 1, "TUNE_BEST published (%d)", nbest);
  odb_tuner_destroy(t);
  /* exhaustive under an evaluation budget stops there */
  o.budget.evals = 10;
  s.runs = 0;
  t = search(ctx, &s, &tg, &o, &st);
  odb_tuner_stats(t, &stats);
  tap_ok(st == ODB_OK && stats.evals == 10 && stats.planned == 10,
         "exhaustive respects an evaluation budget");
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

/* Ratio of the best found to the optimum 1e-3 (inf when none). */
static double quality(const odb_tuner *t) {
  const odb_tune_eval *b = odb_tuner_best(t);
  return b ? b->m.median / 1e-3 : INFINITY;
}

static void test_random_anneal(odb_ctx *ctx) {
  const char *names[] = {"random", "anneal"};
  for (int k = 0; k < 2; ++k) {
    synth s;
    odb_tune_target tg;
    odb_tune_opts o = quick_opts(names[k], 60, 11);
    odb_tune_stats stats;
    odb_status st;
    odb_tuner *t;
    int good = 0;
    char first[64] = "", again[64] = "";
    synth_init(&s);
    t = search(ctx, &s, &tg, &o, &st);
    odb_tuner_stats(t, &stats);
    tap_ok(st == ODB_OK && stats.evals == 60 && stats.measured == 60 &&
           no_duplicates(t) && s.invalid_runs == 0,
           "%s: 60 evaluations within the budget, no repeats, none invalid",
           names[k]);
    odb_tuner_config_text(t, &odb_tuner_eval_at(t, 5)->cfg, first,
                          sizeof first);
    odb_tuner_destroy(t);
    t = search(ctx, &s, &tg, &o, &st);
    odb_tuner_config_text(t, &odb_tuner_eval_at(t, 5)->cfg, again,
                          sizeof again);
    tap_ok(strcmp(first, again) == 0, "%s: same seed, same sequence (%s)",
           names[k], first);
    odb_tuner_destroy(t);
    /* quality over 10 seeds: within 5% of the optimum in most of them */
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      o.seed = seed;
      t = search(ctx, &s, &tg, &o, &st);
      good += quality(t) <= 1.05;
      odb_tuner_destroy(t);
    }
    tap_ok(good >= 6, "%s: within 5%% of the optimum with 60 evaluations "
           "for %d of 10 seeds", names[k], good);
    odb_space_destroy(s.sp);
  }
}

static void test_bad_input(odb_ctx *ctx) {
  synth s;
  odb_tune_target tg;
  odb_tune_opts o = quick_opts("exhaustive", 0, 1);
  odb_tuner *t = NULL;
  odb_space *empty;
  synth_init(&s);
  tg = synth_target(&s);
  o.strategy = "genetic";
  tap_ok(odb_tuner_create(ctx, &tg, &o, &t) == ODB_ERR_NAME && !t &&
         strstr(odb_last_error(), "exhaustive, random, anneal"),
         "unknown strategy: %s", odb_last_error());
  o.strategy = NULL;
  o.budget.evals = -1;
  tap_ok(odb_tuner_create(ctx, &tg, &o, &t) == ODB_ERR_ARG,
         "negative budget refused");
  o.budget.evals = 0;
  odb_space_add_constraint(s.sp, never, NULL, NULL, "never");
  tap_ok(odb_tuner_create(ctx, &tg, &o, &t) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "no valid configuration"),
         "constraints leaving nothing: %s", odb_last_error());
  odb_space_create(&empty);
  tg.space = empty;
  tap_ok(odb_tuner_create(ctx, &tg, &o, &t) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "empty"), "empty space: %s",
         odb_last_error());
  odb_space_destroy(empty);
  odb_space_destroy(s.sp);
}

/* }====== */

/* {====== verification, ties, failures, skips, ask/tell */

static void test_verification(odb_ctx *ctx) {
  synth s;
  odb_tune_target tg;
  odb_tune_opts o = quick_opts("exhaustive", 0, 1);
  odb_tune_stats stats;
  odb_status st;
  odb_tuner *t;
  const odb_tune_eval *bad = NULL;
  char text[128];
  uint64_t cursor = odb_event_last_seq(ctx->events);
  odb_event evs[2048];
  int nev, logged = 0;
  synth_init(&s);
  s.bad = "x=13 y=8 mode=b";      /* the fastest one is wrong */
  t = search(ctx, &s, &tg, &o, &st);
  odb_tuner_stats(t, &stats);
  for (long i = 0; i < odb_tuner_nevals(t); ++i) {
    odb_tuner_config_text(t, &odb_tuner_eval_at(t, i)->cfg, text,
                          sizeof text);
    if (strcmp(text, s.bad) == 0) bad = odb_tuner_eval_at(t, i);
  }
  tap_ok(st == ODB_OK && stats.rejected == 1 && bad &&
         bad->status == ODB_TUNE_REJECTED && bad->err == 0.5 &&
         strstr(bad->msg, "exceeds the tolerance"),
         "a wrong configuration is rejected with its error (%s)",
         bad ? bad->msg : "missing");
  {
    long reps = 0;
    for (long i = 0; i < odb_tuner_nevals(t); ++i)
      reps += odb_tuner_eval_at(t, i)->m.reps;
    tap_ok(bad && bad->m.reps == 0 && s.runs == reps, "it is never timed");
  }
  odb_tuner_config_text(t, &odb_tuner_best(t)->cfg, text, sizeof text);
  tap_ok(strcmp(text, s.bad) != 0, "and never chosen (best %s)", text);
  nev = odb_event_poll(ctx->events, &cursor, evs, 2048, NULL);
  for (int i = 0; i < nev; ++i)
    if (evs[i].kind == ODB_EV_LOG && evs[i].level == ODB_LOG_WARN &&
        strstr(evs[i].text, "rejected")) ++logged;
  tap_ok(logged == 1, "the rejection is logged as a warning");
  odb_tuner_destroy(t);
  /* verify = -1: no checks at all */
  o.verify = -1;
  s.checks = 0;
  t = search(ctx, &s, &tg, &o, &st);
  odb_tuner_stats(t, &stats);
  tap_ok(s.checks == 0 && stats.rejected == 0 &&
         isnan(odb_tuner_best(t)->err), "verify off: nothing is checked");
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

/* Times per configuration index of "v": a=1.000, b=1.005, c=2 (ms), with
   a +-2% jitter, so a and b are tied and c is not. */
typedef struct tie_target { odb_space *sp; long tick; } tie_target;

static odb_status tie_run(void *ud, const odb_config *c, double *secs) {
  tie_target *tt = ud;
  static const double base[] = {1.0e-3, 1.005e-3, 2.0e-3};
  static const double jit[] = {-0.02, 0.0, 0.02, 0.01, -0.01};
  *secs = base[c->idx[0]] * (1 + jit[tt->tick++ % 5]);
  return ODB_OK;
}

static void test_ties(odb_ctx *ctx) {
  static const char *const vs[] = {"a", "b", "c"};
  tie_target tt = {0};
  odb_tune_target tg;
  odb_tune_opts o = quick_opts("exhaustive", 0, 1);
  odb_tuner *t = NULL;
  long idx[4], n;
  odb_space_create(&tt.sp);
  odb_space_add_enum(tt.sp, "v", vs, 3);
  memset(&tg, 0, sizeof tg);
  tg.space = tt.sp;
  tg.ud = &tt;
  tg.run = tie_run;
  o.measure.min_reps = 5;
  o.measure.max_reps = 5;
  odb_tuner_create(ctx, &tg, &o, &t);
  tap_ok(odb_tuner_run(t) == ODB_OK, "tie target runs");
  n = odb_tuner_tied(t, idx, 4);
  tap_ok(n == 1 && odb_tuner_best(t)->cfg.idx[0] == 0 &&
         odb_tuner_eval_at(t, idx[0])->cfg.idx[0] == 1,
         "a and b are reported tied, c is not (%ld tied)", n);
  odb_tuner_destroy(t);
  odb_space_destroy(tt.sp);
}

/* Fails "unsupported" for x odd; a fatal error for x == 20. */
static odb_status flaky_run(void *ud, const odb_config *c, double *secs) {
  synth *s = ud;
  long x = odb_space_int(s->sp, s->ix, c->idx[s->ix]);
  if (x == 20) return ODB_FAIL(ODB_ERR_ARG, "callback raised");
  if (x % 2) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "odd x unsupported");
  return synth_run(ud, c, secs);
}

static void test_failures_and_skips(odb_ctx *ctx) {
  synth s;
  odb_tune_target tg;
  odb_tune_opts o = quick_opts("exhaustive", 0, 1);
  odb_tune_stats stats;
  odb_tuner *t = NULL;
  odb_status st;
  synth_init(&s);
  tg = synth_target(&s);
  tg.run = flaky_run;
  odb_tuner_create(ctx, &tg, &o, &t);
  st = odb_tuner_run(t);
  odb_tuner_stats(t, &stats);
  tap_ok(st == ODB_ERR_ARG && stats.failed > 0 &&
         strstr(odb_tuner_eval_at(t, odb_tuner_nevals(t) - 1)->msg,
                "odd x unsupported") && strstr(odb_last_error(), "raised"),
         "soft failures are recorded, a fatal one ends the search (%ld "
         "failed)", stats.failed);
  odb_tuner_destroy(t);
  /* a skip request while a configuration runs drops it */
  s.ctx = ctx;
  s.skip_at = "x=0 y=2 mode=a";
  tg = synth_target(&s);
  o.budget.evals = 12;
  odb_tuner_create(ctx, &tg, &o, &t);
  st = odb_tuner_run(t);
  odb_tuner_stats(t, &stats);
  tap_ok(st == ODB_OK && stats.skipped == 1 &&
         odb_tuner_eval_at(t, 3)->status == ODB_TUNE_SKIPPED &&
         stats.evals == 12, "a skipped configuration is dropped and the "
         "search goes on");
  odb_tuner_destroy(t);
  /* stop request: interrupted, what finished is kept */
  s.skip_at = NULL;
  odb_tuner_create(ctx, &tg, &o, &t);
  ctx->stop = 1;
  st = odb_tuner_run(t);
  ctx->stop = 0;
  tap_ok(st == ODB_INTERRUPTED && odb_tuner_nevals(t) == 0,
         "a stop request interrupts the search");
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

static void test_ask_tell(odb_ctx *ctx) {
  synth s;
  odb_tune_target tg;
  odb_tune_opts o = quick_opts("random", 20, 3);
  odb_tuner *t = NULL;
  odb_config c;
  odb_tune_eval ev;
  int done = 0, n = 0;
  synth_init(&s);
  tg = synth_target(&s);
  odb_tuner_create(ctx, &tg, &o, &t);
  while (odb_tuner_next(t, &c, &done) == ODB_OK && !done) {
    memset(&ev, 0, sizeof ev);
    ev.cfg = c;
    ev.status = ODB_TUNE_OK;
    ev.m.median = synth_cost(&s, &c);   /* the driver's own timing */
    ev.m.reps = 1;
    ev.err = ev.tol = NAN;
    if (odb_tuner_tell(t, &ev) != ODB_OK) break;
    ++n;
  }
  tap_ok(done && n == 20 && odb_tuner_nevals(t) == 20 && s.runs == 0,
         "ask/tell: 20 proposals told by the driver, none run by the tuner");
  ev.cfg = c;
  tap_ok(odb_tuner_tell(t, &ev) == ODB_ERR_ARG,
         "telling an unproposed configuration is refused");
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

static void test_tolerance(void) {
  double t1 = odb_tune_ode_tolerance(1, 1, 1);
  double t2 = odb_tune_ode_tolerance(3, 5, 7);
  tap_ok(fabs(t1 - 1e-13) < 1e-15 && fabs(t2 / t1 - 105) < 1e-9,
         "ODE tolerance 1e-13 per update, times steps*m*s (%.3g, %.3g)", t1,
         t2);
}

/* {====== a real solver target */

/* Rejects variant E with a made-up error (a "deliberately wrong" one). */
static odb_status reject_E(void *ud, const odb_config *c, const double *y,
                           const double *yref, long n, double *err,
                           double *tol) {
  const odb_space *sp = ud;
  double num = 0, den = 0;
  for (long i = 0; i < n; ++i) {
    num = fmax(num, fabs(y[i] - yref[i]));
    den = fmax(den, fabs(yref[i]));
  }
  *err = num / den;
  *tol = 1e-12;
  if (strcmp(odb_config_str(sp, c, "variant", ""), "E") == 0) *err = 1e-3;
  return ODB_OK;
}

static void test_solver_target(odb_ctx *ctx) {
  static const char *const vs[] = {"A", "E", "D", "fused"};
  long blocks[] = {16, 64};
  odb_param_value pv = {"N", 12, NULL};
  odb_problem *p = NULL;
  odb_solver *s = NULL;
  odb_space *sp = NULL;
  odb_tune_solver *ts = NULL;
  odb_tune_solver_opts so;
  odb_tune_opts o = quick_opts("exhaustive", 0, 1);
  odb_tuner *t = NULL;
  odb_tune_stats stats;
  odb_solver_opts sopt;
  long n = 0;
  int all_ok = 1;
  odb_status st;
  memset(&sopt, 0, sizeof sopt);
  sopt.rtol = sopt.atol = 1e-6;
  if (odb_problem_create("bruss2d", &pv, 1, &p) != ODB_OK ||
      odb_solver_create(ctx, p, odb_method_find("radau1a5"),
                        odb_ctx_backend(ctx, "cpu"), "A", &sopt, &s) !=
          ODB_OK) {
    tap_ok(0, "solver for the solver target: %s", odb_last_error());
    odb_problem_destroy(p);
    return;
  }
  odb_space_create(&sp);
  odb_space_add_enum(sp, "variant", vs, 4);
  odb_space_add_ints(sp, "block", blocks, 2);
  memset(&so, 0, sizeof so);
  so.steps = 2;
  st = odb_tune_solver_create(s, sp, &so, &ts);
  tap_ok(st == ODB_OK, "solver target over variant x block (%s)",
         st ? odb_last_error() : "ok");
  if (st != ODB_OK) goto done;
  odb_space_count(sp, &n);
  tap_ok(n == 6, "'fused' does not apply to a PIRK method: 6 valid of 8");
  tap_ok(odb_tune_solver_h(ts) > 0 &&
         strstr(odb_tune_solver_target(ts)->key.method, "radau1a5 m=4") &&
         strstr(odb_tune_solver_target(ts)->key.params, "steps=2 h="),
         "key: %s | %s", odb_tune_solver_target(ts)->key.method,
         odb_tune_solver_target(ts)->key.params);
  odb_tuner_create(ctx, odb_tune_solver_target(ts), &o, &t);
  st = odb_tuner_run(t);
  odb_tuner_stats(t, &stats);
  for (long i = 0; i < odb_tuner_nevals(t); ++i) {
    const odb_tune_eval *e = odb_tuner_eval_at(t, i);
    all_ok &= e->status == ODB_TUNE_OK && e->err <= e->tol && e->tol > 0;
  }
  tap_ok(st == ODB_OK && stats.evals == 6 && all_ok,
         "every variant verifies against A (tolerance %.2g)",
         odb_tuner_eval_at(t, 0) ? odb_tuner_eval_at(t, 0)->tol : 0.0);
  odb_tuner_destroy(t);
  odb_tune_solver_destroy(ts);
  odb_space_destroy(sp);
  /* a custom verification that rejects E */
  odb_space_create(&sp);
  odb_space_add_enum(sp, "variant", vs, 3);
  so.verify = reject_E;
  so.verify_ud = sp;
  odb_tune_solver_create(s, sp, &so, &ts);
  odb_tuner_create(ctx, odb_tune_solver_target(ts), &o, &t);
  st = odb_tuner_run(t);
  odb_tuner_stats(t, &stats);
  tap_ok(st == ODB_OK && stats.rejected == 1 &&
         odb_tuner_eval_at(t, 1)->status == ODB_TUNE_REJECTED &&
         strcmp(odb_config_str(sp, &odb_tuner_best(t)->cfg, "variant", ""),
                "E") != 0, "a configuration failing verification is "
         "rejected and not chosen");
  odb_tuner_destroy(t);
  odb_tune_solver_destroy(ts);
  odb_space_destroy(sp);
  /* m is not a tuning parameter; unknown variants are named */
  odb_space_create(&sp);
  odb_space_add_range(sp, "m", 1, 4, 1);
  tap_ok(odb_tune_solver_create(s, sp, NULL, &ts) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "order"), "m refused: %s",
         odb_last_error());
  odb_space_destroy(sp);
  odb_space_create(&sp);
  {
    static const char *const bad[] = {"A", "nope"};
    odb_space_add_enum(sp, "variant", bad, 2);
  }
  tap_ok(odb_tune_solver_create(s, sp, NULL, &ts) == ODB_ERR_NAME &&
         strstr(odb_last_error(), "'nope'"), "unknown variant refused");
done:
  odb_space_destroy(sp);
  odb_solver_destroy(s);
  odb_problem_destroy(p);
}

/* }====== */

int main(void) {
  odb_ctx *ctx = make_ctx();
  if (!ctx) TAP_SKIP_ALL("no context");
  test_space_basics();
  test_measure();
  test_tolerance();
  test_exhaustive(ctx);
  test_random_anneal(ctx);
  test_bad_input(ctx);
  test_verification(ctx);
  test_ties(ctx);
  test_failures_and_skips(ctx);
  test_ask_tell(ctx);
  test_solver_target(ctx);
  odb_ctx_destroy(ctx);
  return tap_done();
}
