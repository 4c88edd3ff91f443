/* test_measure.c - the one measurement routine (core/rt/odb_measure.c):
   the warm-up that counts when it alone spends the budget, summaries of
   samples, the ratio of two measurements and its range, ties. */
#include <math.h>
#include <string.h>

#include "odebench.h"
#include "tap.h"

/* A run that reports the next of a list of seconds, cycling. */
typedef struct seq { const double *v; int n, i; } seq;

static odb_status seq_run(void *ud, double *secs) {
  seq *q = ud;
  *secs = q->v[q->i++ % q->n];
  return ODB_OK;
}

/* A run that fails at call `fail_at` (0-based) with ODB_ERR_ARG. */
typedef struct failing { int i, fail_at; } failing;

static odb_status failing_run(void *ud, double *secs) {
  failing *f = ud;
  if (f->i++ == f->fail_at) return ODB_FAIL(ODB_ERR_ARG, "run %d failed", f->i);
  *secs = 1e-3;
  return ODB_OK;
}

static void test_warmup_counts(void) {
  double long_run[] = {2.0, 2.0, 2.0};
  double short_run[] = {0.4, 0.4, 0.4, 0.4};
  odb_measure_opts o = {0};
  odb_measurement m;
  odb_status st;
  seq q = {long_run, 3, 0};
  o.warmup_counts = 1;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && q.i == 1 && m.reps == 1 && m.median == 2.0 &&
         m.p25 == 2.0 && m.p75 == 2.0 && m.spread == 0 &&
         m.run_seconds == 2.0,
         "warmup_counts: a 2 s warm-up over the 1 s budget is the only "
         "sample (runs %d, reps %d, median %g)", q.i, m.reps, m.median);
  q = (seq){long_run, 3, 0};
  o.warmup_counts = 0;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && q.i == 2 && m.reps == 1,
         "without warmup_counts the same warm-up is thrown away and one "
         "timed run follows (runs %d, reps %d)", q.i, m.reps);
  q = (seq){short_run, 4, 0};
  o.warmup_counts = 1;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && q.i == 4 && m.reps == 3 && m.median == 0.4,
         "warmup_counts: a 0.4 s warm-up under the budget is thrown away "
         "(runs %d, reps %d: the budget ends it after 3)", q.i, m.reps);
  q = (seq){long_run, 3, 0};
  o.warmup = -1;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && q.i == 1 && m.reps == 1,
         "no warm-up: the first timed run over the budget ends it");
  q = (seq){long_run, 3, 0};
  o = (odb_measure_opts){0};
  o.warmup = 2;
  o.warmup_counts = 1;
  o.max_seconds = 5;
  st = odb_measure_run(seq_run, &q, &o, NULL, &m, NULL);
  tap_ok(st == ODB_OK && q.i == 2 + 3 && m.reps == 3,
         "warmup_counts: warm-ups under a 5 s budget are thrown away "
         "(runs %d, reps %d)", q.i, m.reps);
}

static void test_summaries(void) {
  double one[] = {0.25};
  double two[] = {3, 1};
  double d[] = {5, 1, 4, 2, 3};
  odb_measurement m;
  odb_measure_summarize(one, 1, &m);
  tap_ok(m.reps == 1 && m.median == 0.25 && m.p25 == 0.25 &&
         m.p75 == 0.25 && m.spread == 0,
         "one sample: median = q1 = q3, spread 0");
  odb_measure_summarize(two, 2, &m);
  tap_ok(m.reps == 2 && m.median == 2 && m.p25 == 1.5 && m.p75 == 2.5 &&
         m.spread == 0.5 && m.min == 1 && m.max == 3,
         "two samples: type-7 quartiles 1.5, 2, 2.5; spread 0.5");
  odb_measure_summarize(d, 5, &m);
  tap_ok(m.p25 <= m.median && m.median <= m.p75 && m.run_seconds == 15,
         "q1 <= median <= q3, run_seconds the sum");
  odb_measure_summarize(NULL, 0, &m);
  tap_ok(m.reps == 0 && isnan(m.median) && isnan(m.spread),
         "no samples: NaN median and spread, 0 reps");
}

static void test_ratio(void) {
  /* the tall & skinny comparison's case: the median of per-round ratios
     (0.63) lay outside their quartiles' range printed as 0.89-1.18; the
     ratio of medians with the quartile range holds it by construction */
  double mine[] = {1.0, 1.2, 1.4, 1.1, 1.3};
  double peer[] = {0.7, 0.9, 0.8, 0.75, 0.85};
  odb_measurement a, b, z;
  double q[3];
  odb_measure_summarize(peer, 5, &a);
  odb_measure_summarize(mine, 5, &b);
  odb_measure_ratio(&a, &b, q);
  tap_ok(q[0] <= q[1] && q[1] <= q[2] &&
         fabs(q[1] - 0.8 / 1.2) < 1e-15 && fabs(q[0] - 0.75 / 1.3) < 1e-15 &&
         fabs(q[2] - 0.85 / 1.1) < 1e-15,
         "ratio of medians %.4f within [%.4f, %.4f] (q1/q3, q3/q1)",
         q[1], q[0], q[2]);
  memset(&z, 0, sizeof z);
  odb_measure_ratio(&a, &z, q);
  tap_ok(isnan(q[0]) && isnan(q[1]) && isnan(q[2]),
         "ratio over a zero measurement: NaN");
}

static void test_failure_keeps_samples(void) {
  odb_measure_opts o = {0};
  odb_measurement m;
  failing f = {0, 3};
  odb_status st;
  o.warmup = -1;
  o.min_reps = 10;
  o.max_reps = 10;
  st = odb_measure_run(failing_run, &f, &o, NULL, &m, NULL);
  tap_ok(st == ODB_ERR_ARG && m.reps == 3 && m.median == 1e-3 &&
         strcmp(odb_last_error(), "run 4 failed") == 0,
         "a failing run ends it with its status; the 3 samples before it "
         "are summarized (%s)", odb_last_error());
}

static void test_ties(void) {
  tap_ok(odb_measure_tied(1.57e-4, 0.05, 1.62e-4, 0.04),
         "1.57e-4 s and 1.62e-4 s with 5%% and 4%% spread are tied");
  tap_ok(!odb_measure_tied(1.57e-4, 0.01, 1.62e-4, 0.01),
         "the same medians with 1%% spread are not");
  tap_ok(!odb_measure_tied(NAN, 0, 1, 0) && !odb_measure_tied(1, 0, INFINITY, 0),
         "a median that is not finite ties with nothing");
}

int main(void) {
  test_warmup_counts();
  test_summaries();
  test_ratio();
  test_failure_keeps_samples();
  test_ties();
  return tap_done();
}
