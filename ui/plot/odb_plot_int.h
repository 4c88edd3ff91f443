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

/* }====== */

/* {====== the scenario's plots (odb_plot_named.c) */

typedef struct odb_plot_named odb_plot_named;

/*
** Reads the requests of ob.plot (the plots.<name>.* context keys of res)
** and gathers each one's data. A request that cannot be drawn (a column
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
** default titles. 0 (errno set) when a file cannot be written.
*/
int odb_plot_named_write(const odb_plot_named *n, const char *dir, FILE *f,
                         double floor_gbs, double peak_gflops,
                         const char *scenario);

/* }====== */

#endif
