/* test_online.c - variant switching, online tuning, barrier pruning. */
#include "odebench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* BRUSS2D with N = 24 (n = 1152, d = 48), Radau IA(5) with m = 4. */
#define GRID 24

static odb_ctx *ctx;
static odb_problem *prob;
static const odb_method *radau;

/*
** Fixed step of the online runs compared with A (0: adaptive). Adaptive
** runs of two correct variants drift apart by far more than rounding: the
** error estimate is a difference of nearly equal sums (about 1e-7
** relative here), so the step sizes and, through them, the states differ
** (4e-8 after 4 time units at N = 96). Fixed steps leave only rounding.
*/
static double fixed_h;

/* A solver of variant v on the CPU (tol 1e-6), at the initial value. */
static odb_solver *make_solver(const char *v) {
  odb_solver *s = NULL;
  odb_solver_opts o;
  memset(&o, 0, sizeof o);
  o.h_fixed = fixed_h;
  if (odb_solver_create(ctx, prob, radau, odb_ctx_backend(ctx, "cpu"), v, &o,
                        &s) != ODB_OK)
    tap_diag("solver %s: %s", v, odb_last_error());
  return s;
}

/* max |a - b| / max |b|. */
static double rel_err(const double *a, const double *b, long n) {
  double num = 0, den = 0;
  for (long i = 0; i < n; ++i) {
    if (fabs(a[i] - b[i]) > num) num = fabs(a[i] - b[i]);
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return num / den;
}

/* The state of variant A integrated adaptively from t0 to t1. */
static double *reference_A(double t1) {
  odb_solver *a = make_solver("A");
  odb_solve_stats st;
  double *y = malloc((size_t)prob->n * sizeof *y);
  odb_solver_integrate(a, t1, &st);
  memcpy(y, a->y, (size_t)prob->n * sizeof *y);
  odb_solver_destroy(a);
  return y;
}

/* A space of variants and block sizes. */
static odb_space *space_of(const char *const *variants, int nv,
                           const long *blocks, int nb) {
  odb_space *sp;
  odb_space_create(&sp);
  odb_space_add_enum(sp, "variant", variants, nv);
  if (nb > 0) odb_space_add_ints(sp, "block", blocks, nb);
  return sp;
}

/* {====== switching */

static void test_set_variant(void) {
  odb_solver *s = make_solver("A"), *r = make_solver("A");
  odb_solve_stats info;
  long n = prob->n;
  double *y = malloc((size_t)n * sizeof *y), t, hn;
  odb_solver_step(s, 0, &info);
  odb_solver_step(s, 0, &info);
  memcpy(y, s->y, (size_t)n * sizeof *y);
  t = s->t;
  hn = s->h_next;
  tap_ok(odb_solver_set_variant(s, "ppDb1mt", 16, 0) == ODB_ERR_UNSUPPORTED &&
         strstr(odb_last_error(), "access distance") &&
         strcmp(s->variant->name, "A") == 0,
         "a block below d is refused and A stays: %s", odb_last_error());
  tap_ok(odb_solver_set_variant(s, "nope", 0, 0) == ODB_ERR_NAME &&
         strstr(odb_last_error(), "valid: plain") == NULL &&
         strstr(odb_last_error(), "unknown variant 'nope'"),
         "an unknown name: %s", odb_last_error());
  tap_ok(odb_solver_set_variant(s, "Dblock", 32, 0) == ODB_OK &&
         strcmp(s->variant->name, "Dblock") == 0 && s->block == 32 &&
         s->t == t && s->h_next == hn &&
         memcmp(s->y, y, (size_t)n * sizeof *y) == 0,
         "Dblock with B = 32: state, time and proposed step kept");
  odb_solver_set_state(r, t, y);
  odb_solver_step(s, 0.001, &info);
  odb_solver_step(r, 0.001, &info);
  tap_ok(rel_err(s->y, r->y, n) < 1e-13, "a step after the switch equals "
         "A's (%.2g)", rel_err(s->y, r->y, n));
  tap_ok(odb_solver_set_variant(s, "ppDb1mt", 64, 0) == ODB_OK &&
         odb_solver_step(s, 0.001, &info) == ODB_OK &&
         odb_solver_step(r, 0.001, &info) == ODB_OK &&
         rel_err(s->y, r->y, n) < 1e-13, "and after another to ppDb1mt");
  odb_solver_destroy(s);
  odb_solver_destroy(r);
  free(y);
}

static void test_step_to(void) {
  odb_solver *s = make_solver("A");
  odb_solve_stats info;
  int steps = 0, ok = 1;
  while (s->t < 0.05 && steps < 1000) {
    ok &= odb_solver_step_to(s, 0.05, &info) == ODB_OK && s->t <= 0.05;
    ++steps;
  }
  tap_ok(ok && s->t == 0.05 && steps > 1,
         "step_to never passes t1 and lands on it (%d steps)", steps);
  odb_solver_destroy(s);
}

/* }====== */

/* {====== the windowed reference step */

/* The windowed step equals variant v's full step on several windows. */
static void check_windows_against(const char *method, const char *v,
                                  long grid) {
  odb_param_value pv[1] = {{"N", (double)grid, NULL}};
  odb_problem *p = NULL;
  odb_solver *s = NULL;
  odb_stepcheck *c = NULL;
  odb_solver_opts o;
  odb_solve_stats info;
  double *y0, *out, worst = 0;
  long n, win = 64, starts[5];
  int ok = 1;
  memset(&o, 0, sizeof o);
  odb_problem_create("bruss2d", pv, 1, &p);
  odb_solver_create(ctx, p, odb_method_find(method),
                    odb_ctx_backend(ctx, "cpu"), v, &o, &s);
  n = s->n;
  odb_solver_step(s, 0, &info);             /* a state away from t0 */
  y0 = malloc((size_t)n * sizeof *y0);
  out = malloc((size_t)win * sizeof *out);
  memcpy(y0, s->y, (size_t)n * sizeof *y0);
  ok &= odb_stepcheck_create(s, win, &c) == ODB_OK;
  odb_solver_step(s, 0.5 * info.h, &info);  /* the full step */
  starts[0] = 0;
  starts[1] = n - win;
  starts[2] = n / 2 - 7;
  starts[3] = 3 * p->d + 5;
  starts[4] = n / 3;
  for (int i = 0; c && i < 5; ++i) {
    ok &= odb_stepcheck_window(c, s->t - info.h, info.h, y0, starts[i],
                               starts[i] + win, out) == ODB_OK;
    for (long j = 0; j < win; ++j) {
      double e = fabs(out[j] - s->y[starts[i] + j]) /
                 (1 + fabs(s->y[starts[i] + j]));
      if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
    }
  }
  tap_ok(ok && worst < 1e-13, "windowed %s step (reach %ld) = %s's full "
         "step on 5 windows, ends included (%.2g)", method,
         c ? odb_stepcheck_reach(c) : -1L, v, worst);
  odb_stepcheck_destroy(c);
  odb_solver_destroy(s);
  odb_problem_destroy(p);
  free(y0);
  free(out);
}

static void test_stepcheck(void) {
  check_windows_against("radau1a5", "A", 24);
  check_windows_against("lobatto3c8", "A", 40);
  check_windows_against("dopri5", "plain", 40);
  check_windows_against("verner65", "plain", 24);
}

/* }====== */

/* {====== online tuning of a real integration */

static const char *const pool[] = {"A", "E", "D", "Dblock", "PipeDb2mt",
                                   "PipeDb1mt", "ppDb1mt"};
static const long blocks[] = {16, 64, 256};

static void test_online_equals_A(double t1) {
  odb_solver *s = make_solver("A");
  odb_space *sp = space_of(pool, 7, blocks, 3);
  odb_online *ol = NULL;
  odb_online_opts o;
  odb_online_report rep;
  odb_solve_stats st;
  double *ref = reference_A(t1);
  int verified = 1, ok_evals = 0;
  memset(&o, 0, sizeof o);
  tap_ok(odb_online_create(s, sp, &o, &ol) == ODB_OK, "online tuner made");
  tap_ok(ol && odb_online_integrate(ol, t1, &st) == ODB_OK && s->t == t1,
         "n = %ld, %s checks: tuned and integrated to t = %g with %s steps",
         prob->n, ol && odb_online_windowed(ol) ? "windowed" : "full", t1,
         fixed_h > 0 ? "fixed" : "adaptive");
  odb_online_get_report(ol, &rep);
  tap_ok(rel_err(s->y, ref, prob->n) < 1e-12,
         "the final state equals variant A's to 1e-12 (%.2g): every tuning "
         "step was a real step", rel_err(s->y, ref, prob->n));
  for (long i = 0; ol && i < odb_tuner_nevals(odb_online_tuner(ol)); ++i) {
    const odb_tune_eval *e = odb_tuner_eval_at(odb_online_tuner(ol), i);
    char text[64];
    if (e->status != ODB_TUNE_OK) continue;
    ok_evals++;
    odb_tuner_config_text(odb_online_tuner(ol), &e->cfg, text, sizeof text);
    if (!isnan(e->err)) verified &= e->err <= e->tol;
    else verified &= strncmp(text, "variant=A ", 10) == 0;  /* the ref */
  }
  tap_ok(rep.finished && ok_evals >= 7 && verified && rep.steps > ok_evals,
         "the search finished: %d candidates passed their check, %ld "
         "tuning steps, winner %s", ok_evals, rep.steps, rep.winner);
  tap_ok(rep.winner[0] && strstr(rep.winner, s->variant->name) &&
         rep.best_step > 0 && rep.seconds > rep.step_seconds &&
         st.steps > rep.attempts,
         "the solver runs the winner (%s) for the rest (%ld steps in all)",
         s->variant->name, st.steps);
  tap_ok(isfinite(rep.overhead_steps) && rep.model.groups == 7,
         "overhead %.1f steps; %ld groups", rep.overhead_steps,
         rep.model.groups);
  odb_online_destroy(ol);
  odb_space_destroy(sp);
  odb_solver_destroy(s);
  free(ref);
}

/*
** Variant E gone wrong: where = 0, one component in the middle of every
** new solution is off by 1e-6 (relative); where = 1, every component by
** 1e-9 (a wrong coefficient); where = 2, the last one (a remainder bug).
*/
static odb_variant wrong_E;
static int wrong_where;

static odb_status wrong_attempt(odb_solver *s, double h, double *err) {
  odb_status st = odb_variant_find("E")->attempt(s, h, err);
  long j = wrong_where == 2 ? s->n - 1 : s->n / 2;
  if (st != ODB_OK) return st;
  if (wrong_where == 1)
    for (long i = 0; i < s->n; ++i) s->ynew[i] *= 1 + 1e-9;
  else
    s->ynew[j] += 1e-6 * (1 + fabs(s->ynew[j]));
  return st;
}

static const odb_variant *lookup_wrong(void *ud, const char *name) {
  (void)ud;
  return strcmp(name, "E") == 0 ? &wrong_E : odb_variant_find(name);
}

static void test_wrong_variant(int where, const char *what) {
  odb_solver *s = make_solver("A");
  static const char *const vs[] = {"A", "E", "Dblock"};
  static const long bs[] = {64};
  odb_space *sp = space_of(vs, 3, bs, 1);
  odb_online *ol = NULL;
  odb_online_opts o;
  odb_online_report rep;
  odb_solve_stats st;
  const odb_tune_eval *bad = NULL;
  double *ref = reference_A(0.1);
  wrong_E = *odb_variant_find("E");
  wrong_E.attempt = wrong_attempt;
  wrong_where = where;
  memset(&o, 0, sizeof o);
  o.lookup = lookup_wrong;
  odb_online_create(s, sp, &o, &ol);
  tap_ok(ol && odb_online_integrate(ol, 0.1, &st) == ODB_OK,
         "n = %ld, %s checks: tuning with a wrong E (%s) runs", prob->n,
         ol && odb_online_windowed(ol) ? "windowed" : "full", what);
  odb_online_get_report(ol, &rep);
  for (long i = 0; ol && i < odb_tuner_nevals(odb_online_tuner(ol)); ++i) {
    const odb_tune_eval *e = odb_tuner_eval_at(odb_online_tuner(ol), i);
    char text[64];
    odb_tuner_config_text(odb_online_tuner(ol), &e->cfg, text, sizeof text);
    if (strstr(text, "variant=E")) bad = e;
  }
  tap_ok(bad && bad->status == ODB_TUNE_REJECTED &&
         bad->err > 100 * bad->tol &&
         strstr(bad->msg, "exceeds the tolerance"),
         "the wrong E is rejected: %s", bad ? bad->msg : "not evaluated");
  tap_ok(rep.rejected == 1 && strcmp(s->variant->name, "E") != 0 &&
         !strstr(rep.winner, "=E"), "and never chosen (%s)", rep.winner);
  tap_ok(rel_err(s->y, ref, prob->n) < 1e-12,
         "its step was replaced by the reference's: final state equals A's "
         "(%.2g)", rel_err(s->y, ref, prob->n));
  odb_online_destroy(ol);
  odb_space_destroy(sp);
  odb_solver_destroy(s);
  free(ref);
}

/* par variants with a prohibitive barrier cost: only barrier-free run. */
static void test_driver_pruning(void) {
  odb_solver *s = make_solver("A");
  static const char *const vs[] = {"par_A", "par_D", "par_ppDb1mt"};
  static const long th[] = {2};
  odb_space *sp = space_of(vs, 3, NULL, 0);
  odb_online *ol = NULL;
  odb_online_opts o;
  odb_online_report rep;
  odb_space_add_ints(sp, "threads", th, 1);
  memset(&o, 0, sizeof o);
  o.barrier = 1.0;                  /* one second per barrier */
  odb_online_create(s, sp, &o, &ol);
  tap_ok(ol && odb_online_tune(ol, 1.0) == ODB_OK, "parallel pool tuned");
  odb_online_get_report(ol, &rep);
  tap_ok(rep.evaluated == 1 && rep.model.pruned == 2 &&
         strcmp(s->variant->name, "par_ppDb1mt") == 0,
         "T_bar = 1 s: par_D (m T_bar) and par_A (2m T_bar) pruned, "
         "par_ppDb1mt alone evaluated and chosen (%ld evaluated, %ld "
         "pruned)", rep.evaluated, rep.model.pruned);
  odb_online_destroy(ol);
  odb_space_destroy(sp);
  odb_solver_destroy(s);
}

/* }====== */

/* {====== pruning logic on a synthetic objective */

/* Seconds per step of each variant (1-based index in vnames). */
static const char *const vnames[] = {"par_A", "par_E", "par_D", "par_Dblock",
                                     "par_PipeDb1mt", "par_ppDb1mt"};
static const double vtime[] = {1.4e-3, 0.9e-3, 1.5e-3, 1.1e-3, 1.2e-3,
                               1.0e-3};

typedef struct synth {
  odb_space *sp;
  double tbar;
  int dblock_slow;       /* par_Dblock 3 x slower at every block */
  char order[256];
} synth;

static odb_status synth_run(void *ud, const odb_config *c, double *sec) {
  synth *s = ud;
  const char *v = odb_config_str(s->sp, c, "variant", "");
  long B = odb_config_int(s->sp, c, "block", 0);
  size_t used = strlen(s->order);
  for (int i = 0; i < 6; ++i)
    if (strcmp(v, vnames[i]) == 0) {
      *sec = vtime[i] * (s->dblock_slow && strcmp(v, "par_Dblock") == 0
                         ? 3 : 1) * (1 + 1e-6 * (double)B);
      if (used + 24 < sizeof s->order &&
          (used == 0 || !strstr(s->order, v)))
        snprintf(s->order + used, sizeof s->order - used, "%s%s",
                 used ? " " : "", v + 4);
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_ARG, "unknown %s", v);
}

static double synth_bar(void *ud, int p) {
  (void)p;
  return ((synth *)ud)->tbar;
}

/* Runs the online strategy offline; returns the tuner. */
static odb_tuner *run_synth(synth *s, double tbar, int with_blocks,
                            odb_model_report *rep) {
  static odb_topo topo;
  static const long bl[] = {64, 128, 256};
  odb_tune_target tg;
  odb_tune_opts o;
  odb_model_opts mo;
  odb_tuner *t = NULL;
  memset(s, 0, sizeof *s);
  s->tbar = tbar;
  s->dblock_slow = with_blocks;
  if (!topo.ncaches)
    odb_topo_load_synthetic(&topo, "pack:1 l3:1(size=8MiB) l2:4(size=256KiB) "
                            "l1d:1(size=32KiB) core:1 pu:1");
  s->sp = space_of(vnames, 6, bl, with_blocks ? 3 : 0);
  memset(&tg, 0, sizeof tg);
  tg.space = s->sp;
  tg.ud = s;
  tg.run = synth_run;
  tg.key.problem = "synthetic";
  memset(&mo, 0, sizeof mo);
  mo.params = (odb_bm_params){1000000, 10, 3, 4, 4};
  mo.topo = &topo;
  mo.threads = 4;
  mo.barrier = synth_bar;
  mo.barrier_ud = s;
  mo.report = rep;
  memset(&o, 0, sizeof o);
  o.strategy = "online";
  o.strategy_opts = &mo;
  o.measure.warmup = -1;
  o.measure.min_reps = o.measure.max_reps = 1;
  if (odb_tuner_create(ctx, &tg, &o, &t) != ODB_OK ||
      odb_tuner_run(t) != ODB_OK)
    tap_diag("synthetic online run: %s", odb_last_error());
  return t;
}

static const char *best_variant(const synth *s, const odb_tuner *t) {
  const odb_tune_eval *b = odb_tuner_best(t);
  return b ? odb_config_str(s->sp, &b->cfg, "variant", "?") : "none";
}

static void test_pruning_logic(void) {
  synth s;
  odb_model_report rep;
  odb_tuner *t;
  /* m T_bar = 1.2 ms > T_best = 1.0 ms: both barrier classes pruned */
  t = run_synth(&s, 0.3e-3, 0, &rep);
  tap_ok(t && strcmp(s.order, "ppDb1mt PipeDb1mt") == 0 && rep.pruned == 4 &&
         strcmp(best_variant(&s, t), "par_ppDb1mt") == 0,
         "T_bar = 0.3 ms: 4 m T_bar > T_best: only the barrier-free run "
         "(%s; %ld pruned)", s.order, rep.pruned);
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
  /* m T_bar = 0.8 ms < 1.0 ms <= 2 m T_bar = 1.6 ms */
  t = run_synth(&s, 0.2e-3, 0, &rep);
  tap_ok(t && strcmp(s.order, "ppDb1mt PipeDb1mt Dblock D") == 0 &&
         rep.pruned == 2,
         "T_bar = 0.2 ms: the 1-barrier class runs, the 2-barrier one is "
         "pruned (%s)", s.order);
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
  /* 2 m T_bar = 0.8 ms < T_best: everything runs, in class order */
  t = run_synth(&s, 0.1e-3, 0, &rep);
  tap_ok(t && strcmp(s.order, "ppDb1mt PipeDb1mt Dblock D A E") == 0 &&
         rep.pruned == 0 && strcmp(best_variant(&s, t), "par_E") == 0,
         "T_bar = 0.1 ms: all classes, barrier-free first (specialized, "
         "tiled, untiled), then 1, then 2 barriers; E wins (%s)", s.order);
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
  /* hopeless: Dblock's screening is 3.3 x the best */
  t = run_synth(&s, 0.1e-3, 1, &rep);
  {
    long dblock = 0;
    for (long i = 0; t && i < odb_tuner_nevals(t); ++i)
      dblock += strcmp(odb_config_str(s.sp, &odb_tuner_eval_at(t, i)->cfg,
                                      "variant", ""), "par_Dblock") == 0;
    tap_ok(t && rep.hopeless == 1 && dblock == 1,
           "a tiled group whose screening took over 2 x the best is not "
           "searched further (%ld cut, Dblock evaluated %ld x)", rep.hopeless,
           dblock);
  }
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

/* }====== */

int main(void) {
  odb_ctx_opts co;
  odb_param_value pv[1] = {{"N", GRID, NULL}};
  memset(&co, 0, sizeof co);
  co.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&co, &ctx) != ODB_OK ||
      odb_problem_create("bruss2d", pv, 1, &prob) != ODB_OK ||
      !(radau = odb_method_find("radau1a5")) ||
      !odb_variant_find("ppDb1mt") || !odb_variant_find("par_ppDb1mt")) {
    printf("1..0 # SKIP PIRK variants or BRUSS2D missing: %s\n",
           odb_last_error());
    return 77;
  }
  test_set_variant();
  test_step_to();
  test_stepcheck();
  test_online_equals_A(10.0);           /* n = 1152: full checks */
  fixed_h = 1e-3;                       /* 100 steps to t = 0.1 */
  test_wrong_variant(0, "one component in the middle");
  odb_problem_destroy(prob);
  {
    odb_param_value big[1] = {{"N", 96, NULL}};
    if (odb_problem_create("bruss2d", big, 1, &prob) != ODB_OK) return 1;
  }
  test_online_equals_A(0.1);            /* n = 18432: windowed checks */
  test_wrong_variant(1, "every component");
  test_wrong_variant(2, "the last component");
  test_driver_pruning();
  test_pruning_logic();
  odb_problem_destroy(prob);
  odb_ctx_destroy(ctx);
  return tap_done();
}
