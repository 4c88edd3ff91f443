/* odb_plot_int.h - what the files of odebench plot share: results.csv
   read into memory, the frame of a gnuplot chart, the plots a scenario
   asked for with ob.plot. Internal to ui/. */
#ifndef ODB_PLOT_INT_H
#define ODB_PLOT_INT_H

#include <stdio.h>

#include "odebench.h"

/* {====== results.csv (odb_plot_csv.c) */

/* A CSV file: context comments, a header and rows of strings. */
typedef struct odb_csv {
  char **cells;          /* (nrows + 1) x ncols, row 0 the header */
  int nrows, ncols, cap;
  char **ctx;            /* "key=value" of the "# " lines */
  int nctx;
} odb_csv;

/* Parses results.csv; 0 (errno set) when it cannot be read. */
int odb_csv_read(const char *path, odb_csv *c);
void odb_csv_free(odb_csv *c);
/* Column index of name, or -1. */
int odb_csv_col(const odb_csv *c, const char *name);
/* The cell of data row r (0-based) in column k; "" for k < 0. */
const char *odb_csv_cell(const odb_csv *c, int r, int k);
/* The cell as a number; NAN when empty or not a number. */
double odb_csv_num(const odb_csv *c, int r, int k);
/* The value of a context key ("bandwidth.read_1t"), or NULL. */
const char *odb_csv_ctx(const odb_csv *c, const char *key);
/*
** The error bar of y, a time of row r (time_per_step, time_per_component,
** median, ...): the row's quartiles q1..q3, seconds of the same runs as
** its median (or seconds, in a row without median), scaled onto y, which
** is that time or a part of it (per step, per component). 1 with *lo, *hi
** set; 0 and both y when the row has no quartiles.
*/
int odb_csv_quartiles(const odb_csv *c, int r, double y, double *lo,
                      double *hi);

/* }====== */

/* {====== gnuplot charts (odb_plot.c) */

/* Starts chart name (written as name.png and name.svg) in the script. */
void odb_plot_chart_begin(FILE *f, const char *name);
/* Ends it and resets the settings for the next one. */
void odb_plot_chart_end(FILE *f);
/* The unit that shows seconds up to hi readably: factor and name. */
void odb_plot_time_unit(double hi, double *scale, const char **unit);
/* s as a gnuplot single-quoted string (quotes doubled, control characters
   as spaces): the only way text from a file or a scenario name gets into
   plot.gp. */
void odb_plot_put_quoted(FILE *f, const char *s);
/* s as one word of a data file or of the group list: blanks, control
   characters and quotes become '_' (in place, or as it is written). */
void odb_plot_token(char *s);
void odb_plot_put_token(FILE *f, const char *s);
/* "odebench: warning: <message>" on f (NULL: nothing), the message made
   safe for a terminal (odb_ui_clean): it may quote results.csv. */
void odb_plot_warn(FILE *f, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
/*
** "set xrange" of a roofline whose points lie at intensities lo..hi
** (flop/byte, 0 < lo <= hi; nothing written otherwise): a decade around
** them and the ridge point peak / bw where both are known, so that the
** roofs span the chart (gnuplot samples them over the points' range only,
** a single point's width).
*/
void odb_plot_roof_xrange(FILE *f, double lo, double hi, double bw,
                          double peak);
/*
** "set xrange" over x values lo..hi for a chart that draws reference lines
** (gnuplot samples functions over the data's range only, so they stop at
** the outer points, and one point leaves them a point wide): whole powers
** of base around them on a log axis (base 10 or 2; at least one power
** wide), 5% of the span beside them on a linear one (base 0; half of the
** value, or 1, around a single one). Nothing when hi < lo.
*/
void odb_plot_x_span(FILE *f, double lo, double hi, int base);
/* "set <axis>tics (...)" at 1, 2 and 5 times the powers of ten within
   lo..hi for a log axis spanning less than three decades (where gnuplot
   would label one decade or none); nothing for fewer than two such. */
void odb_plot_log_tics(FILE *f, const char *axis, double lo, double hi);
/* The memory roof bw * x as a gnuplot function, ending at the ridge point
   where the compute roof peak takes over (peak > 0; else unbounded). */
void odb_plot_memory_roof(FILE *f, double bw, double peak);

/* One pair of roofs of a roofline chart: GB/s and GFLOP/s (0: not drawn)
   and whose they are ("1 thread" and "1 core", or a backend's name). */
#define ODB_PLOT_ROOFS 4
typedef struct odb_plot_roof {
  double bw, peak;
  char who[48];
} odb_plot_roof;

/*
** The roofs of the rows rows[0..nrows) of res (into out, at most
** ODB_PLOT_ROOFS; returns how many). Rows that carry fp64_peak_gflops (the
** GPU rows measure their device's FP64 peak) get a pair per distinct peak:
** that compute roof, and as memory roof the bandwidth their floor_pct is
** measured against (100 gbs / floor_pct, the median over the rows; none
** without floor_pct). The other rows get the run's one-thread read
** bandwidth floor_gbs and one-core peak peak_1t (results.csv's context).
*/
int odb_plot_roofs(const odb_csv *res, const int *rows, int nrows,
                   double floor_gbs, double peak_1t, odb_plot_roof *out);
/* odb_plot_roof_xrange over all the roofs' ridge points. */
void odb_plot_roofs_xrange(FILE *f, double lo, double hi,
                           const odb_plot_roof *r, int n);
/* The y tick format of a roofline: points lo..hi and the roofs. */
void odb_plot_roofs_yformat(FILE *f, double lo, double hi,
                            const odb_plot_roof *r, int n);
/* The roofs as further items of a plot command (", ... title '...'"). */
void odb_plot_roofs_put(FILE *f, const odb_plot_roof *r, int n);

/* }====== */

/* {====== how a chart looks (odb_plot_style.c) */

/* Series with a colour and a marker of their own. */
#define ODB_PLOT_STYLES 16

/* " lw .. lc rgb '#rrggbb' pt .. ps .." of series i (0-based): 16 distinct
   colours, each with its own marker; from i = 16 on they repeat. */
void odb_plot_series_style(FILE *f, int i);
/* "set key title" saying that styles repeat, when nseries > 16. */
void odb_plot_style_note(FILE *f, int nseries);
/* The label of column col on an axis: "time per step [s]", "GFLOP/s",
   "n [components]" (one table; unit, when given, replaces the table's, as
   for a time shown in ms). An unknown column keeps its name. */
void odb_plot_axis_label(char *buf, size_t cap, const char *col,
                         const char *unit);
/* The name alone ("time per step"), for titles. */
const char *odb_plot_column_name(const char *col);
/* 1 when col holds seconds. */
int odb_plot_is_time(const char *col);
/* The frame of a chart with x and y axes (not a heatmap, whose colour
   box takes the right margin): room for the last x tick label. */
void odb_plot_xy_frame(FILE *f);
/* "set format <axis> ..." for values lo..hi on a log or linear axis. */
void odb_plot_axis_format(FILE *f, const char *axis, int log_axis, double lo,
                          double hi);
/* The scenario's name from its path: "pirk_variants" for
   "scenarios/pirk_variants.lua" (directories and .lua left out). */
void odb_plot_scenario_name(char *buf, size_t cap, const char *path);

/* }====== */

/* {====== the scenario's plots (odb_plot_named.c) */

typedef struct odb_plot_named odb_plot_named;

/*
** Reads the requests of ob.plot (the plots.<name>.* context keys of res)
** and gathers each one's data; n keeps res (for the roofs of a roofline)
** until odb_plot_named_write. A request that cannot be drawn (a column
** results.csv lacks, no rows that fit) is left out with a warning on warn
** (may be NULL). ODB_ERR_NOMEM only.
*/
odb_status odb_plot_named_load(const odb_csv *res, FILE *warn,
                               odb_plot_named **out);
void odb_plot_named_free(odb_plot_named *n);
/* Number of requests that will be drawn; the name of the i-th. */
int odb_plot_named_count(const odb_plot_named *n);
const char *odb_plot_named_name(const odb_plot_named *n, int i);
/* 1 when a request that will be drawn is called name. */
int odb_plot_named_has(const odb_plot_named *n, const char *name);
/*
** Writes each request's data (named_<name>.dat) into dir and its chart
** into the script f. floor_gbs: the read bandwidth of one thread (GB/s,
** 0 unknown) for the reference lines; peak_gflops: the measured FP64 peak
** of one core (the roofline's compute roof, 0 unknown); scenario: for
** default titles (its name, no path). 0 (errno set) when a file cannot
** be written.
*/
int odb_plot_named_write(const odb_plot_named *n, const char *dir, FILE *f,
                         double floor_gbs, double peak_gflops,
                         const char *scenario);

/* }====== */

#endif
