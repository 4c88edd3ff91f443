/* odb_measure.c - repetitions until the spread is small, median and IQR. */
#include "odb_measure.h"
#include "odb_clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void odb_measure_defaults(odb_measure_opts *o) {
  if (o->warmup == 0) o->warmup = 1;
  if (o->warmup < 0) o->warmup = -1;
  if (o->min_reps <= 0) o->min_reps = 3;
  if (o->max_reps <= 0) o->max_reps = 25;
  if (o->max_reps < o->min_reps) o->max_reps = o->min_reps;
  if (!(o->max_seconds > 0)) o->max_seconds = 1.0;
  if (!(o->target_spread > 0)) o->target_spread = 0.02;
}

/* Assumes sorted[0..n) ascending and n >= 1. */
double odb_quantile(const double *sorted, int n, double q) {
  double pos, frac;
  int lo;
  if (n == 1 || q <= 0) return sorted[0];
  if (q >= 1) return sorted[n - 1];
  pos = q * (n - 1);
  lo = (int)pos;
  frac = pos - lo;
  if (lo + 1 >= n) return sorted[n - 1];
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* qsort order of doubles. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double odb_median(double *v, int n) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return odb_quantile(v, n, 0.5);
}

void odb_measure_summarize(double *samples, int n, odb_measurement *out) {
  double sum = 0;
  memset(out, 0, sizeof *out);
  if (n <= 0) {
    out->median = out->spread = NAN;
    return;
  }
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  for (int i = 0; i < n; ++i) sum += samples[i];
  out->reps = n;
  out->run_seconds = sum;
  out->min = samples[0];
  out->max = samples[n - 1];
  out->median = odb_quantile(samples, n, 0.5);
  out->p25 = odb_quantile(samples, n, 0.25);
  out->p75 = odb_quantile(samples, n, 0.75);
  out->spread = out->median > 0 ? (out->p75 - out->p25) / out->median : 0;
}

int odb_measure_tied(double m1, double s1, double m2, double s2) {
  double a = s1 * m1, b = s2 * m2;
  if (!isfinite(m1) || !isfinite(m2)) return 0;
  if (!(a >= 0)) a = 0;
  if (!(b >= 0)) b = 0;
  return fabs(m1 - m2) <= (a > b ? a : b);
}

void odb_measure_ratio(const odb_measurement *num, const odb_measurement *den,
                       double q[3]) {
  q[0] = q[1] = q[2] = NAN;
  if (!(den->median > 0) || !(den->p25 > 0) || !(den->p75 > 0)) return;
  q[0] = num->p25 / den->p75;
  q[1] = num->median / den->median;
  q[2] = num->p75 / den->p25;
}

/* 0 to go on; a status (and *skipped) when the context says to stop. */
static odb_status poll_ctx(odb_ctx *ctx, int *skipped) {
  if (!ctx) return ODB_OK;
  odb_ctx_wait_if_paused(ctx);
  if (odb_ctx_stop_requested(ctx))
    return ODB_FAIL(ODB_INTERRUPTED, "interrupted while measuring");
  if (odb_ctx_take_skip(ctx)) {
    if (skipped) *skipped = 1;
    return ODB_FAIL(ODB_INTERRUPTED, "configuration skipped");
  }
  return ODB_OK;
}

/* 1 when the timed runs so far are enough (see odb_measure.h). */
static int enough(const odb_measure_opts *o, double *samples, int n,
                  double total, odb_measurement *m) {
  double tmp[64], *copy = n <= 64 ? tmp : malloc((size_t)n * sizeof *copy);
  if (!copy) return 1;
  memcpy(copy, samples, (size_t)n * sizeof *copy);
  odb_measure_summarize(copy, n, m);
  if (copy != tmp) free(copy);
  if (n >= o->max_reps || total >= o->max_seconds) return 1;
  return n >= o->min_reps && m->spread <= o->target_spread;
}

odb_status odb_measure_run(odb_measure_fn fn, void *ud,
                           const odb_measure_opts *opts, odb_ctx *ctx,
                           odb_measurement *out, int *skipped) {
  odb_measure_opts o = opts ? *opts : (odb_measure_opts){0};
  double *samples, secs, total = 0;
  odb_status st = ODB_OK;
  int n = 0;
  if (skipped) *skipped = 0;
  odb_measure_defaults(&o);
  odb_measure_summarize(NULL, 0, out);
  samples = malloc((size_t)o.max_reps * sizeof *samples);
  if (!samples) return ODB_FAIL(ODB_ERR_NOMEM, "timing samples");
  for (int w = 0; w < o.warmup && st == ODB_OK; ++w) {
    st = poll_ctx(ctx, skipped);
    if (st == ODB_OK) st = fn(ud, &secs);
    if (st == ODB_OK && o.warmup_counts && isfinite(secs) &&
        secs >= o.max_seconds) {
      samples[n++] = secs;   /* the budget is spent: the only sample */
      odb_measure_summarize(samples, n, out);
      free(samples);
      return ODB_OK;
    }
  }
  while (st == ODB_OK) {
    st = poll_ctx(ctx, skipped);
    if (st == ODB_OK) st = fn(ud, &secs);
    if (st != ODB_OK) break;
    if (!isfinite(secs) || secs < 0) {
      st = ODB_FAIL(ODB_ERR_INTERNAL, "a run reported %g seconds", secs);
      break;
    }
    samples[n++] = secs;
    total += secs;
    if (enough(&o, samples, n, total, out)) break;
  }
  if (st != ODB_OK && n > 0) enough(&o, samples, n, total, out);
  free(samples);
  return st;
}
