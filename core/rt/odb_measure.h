/* odb_measure.h - timing one configuration: warm-up, repetitions, spread. */
#ifndef ODB_MEASURE_H
#define ODB_MEASURE_H

#include "odb_ctx.h"
#include "odb_status.h"

/*
** How one configuration is timed. After `warmup` untimed runs, timed runs
** repeat until
**   - at least min_reps runs were made and the relative spread is at most
**     target_spread, or
**   - max_reps runs were made, or
**   - the timed runs add up to max_seconds (at least one run is made).
** The relative spread is the interquartile range over the median,
** (p75 - p25) / median, with quartiles linearly interpolated between the
** sorted samples (Hyndman-Fan type 7, as R and NumPy do by default). It
** ignores a single outlier in five or more runs, which a max - min range
** would not. With one run it is 0 and says nothing: look at reps.
** Zero fields mean the defaults; warmup < 0 means no warm-up run.
*/
typedef struct odb_measure_opts {
  int warmup;            /* default 1 */
  int min_reps;          /* default 3 */
  int max_reps;          /* default 25 */
  double max_seconds;    /* default 1.0 */
  double target_spread;  /* default 0.02 (2%) */
} odb_measure_opts;

/* The summary of the timed runs of one configuration (seconds). */
typedef struct odb_measurement {
  double median;
  double spread;         /* (p75 - p25) / median; 0 with one run */
  double p25, p75, min, max;
  int reps;              /* timed runs */
  double run_seconds;    /* sum of the timed runs */
} odb_measurement;

/* One run: writes its own measured seconds (a GPU run may use events). */
typedef odb_status (*odb_measure_fn)(void *ud, double *seconds);

/* Fills every zero field of o with its default (o may be partly set). */
void odb_measure_defaults(odb_measure_opts *o);

/*
** Times fn as described above. Between runs it honours the context (may be
** NULL): it waits while the UI pauses, returns ODB_INTERRUPTED when a stop
** is requested, and when the UI asks to skip the configuration it returns
** ODB_INTERRUPTED with *skipped = 1 (skipped may be NULL). A failing run
** ends the measurement with its status. out holds what was measured so far.
*/
odb_status odb_measure_run(odb_measure_fn fn, void *ud,
                           const odb_measure_opts *o, odb_ctx *ctx,
                           odb_measurement *out, int *skipped);

/* Summarizes n >= 1 samples (they are sorted in place). */
void odb_measure_summarize(double *samples, int n, odb_measurement *out);
/* Quantile q in [0, 1] of n >= 1 sorted samples (type 7). */
double odb_quantile(const double *sorted, int n, double q);
/* Sorts v[0..n) ascending and returns its median (NAN for n <= 0). The
   one median of the tree: timings of every family go through it. */
double odb_median(double *v, int n);

/*
** 1 when two medians are tied: they differ by no more than the larger of
** their interquartile ranges, |m1 - m2| <= max(s1 m1, s2 m2) with s the
** relative spreads. Neither is then called faster than the other.
*/
int odb_measure_tied(double m1, double s1, double m2, double s2);


#endif
