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
**
** warmup_counts: a warm-up run is thrown away because its caches, pages
** and clocks are cold; but a run that alone takes max_seconds or more
** would spend the whole budget again on one timed run that says little
** more. With warmup_counts set, such a warm-up run is kept as the only
** sample (reps = 1) and nothing else runs; a shorter one is thrown away as
** usual. Meant for long runs of the same work (an integration from t0 to
** t1), where the first run is a real run; off by default, as the tuner's
** candidates are short and their first run may compile or page in.
*/
typedef struct odb_measure_opts {
  int warmup;            /* default 1 */
  int min_reps;          /* default 3 */
  int max_reps;          /* default 25 */
  double max_seconds;    /* default 1.0 */
  double target_spread;  /* default 0.02 (2%) */
  int warmup_counts;     /* default 0 (see above) */
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

/*
** The ratio num / den of two measurements as q[0] <= q[1] <= q[2]:
** q[1] = num.median / den.median and the range from the quartiles that
** make it smallest and largest, q[0] = num.p25 / den.p75 and
** q[2] = num.p75 / den.p25. The range holds the ratio of the medians by
** construction (a median of the per-round ratios need not lie in it, nor
** the ratio of medians in the quartiles of those ratios). NAN where a
** denominator is not positive.
*/
void odb_measure_ratio(const odb_measurement *num, const odb_measurement *den,
                       double q[3]);


#endif
