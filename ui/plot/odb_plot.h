/* odb_plot.h - PNG and SVG plots of a run's results, drawn by gnuplot. */
#ifndef ODB_PLOT_H
#define ODB_PLOT_H

#include <stdio.h>

#include "odebench.h"

typedef struct odb_plot_opts {
  const char *run_dir;    /* holds results.csv and/or events.jsonl */
  const char *out_dir;    /* NULL: <run_dir>/plots */
  const char *x;          /* the swept column; NULL: n (or the first
                             numeric column that varies) */
  FILE *log;              /* the files written are listed here */
  FILE *warn;             /* warnings (a plot left out); NULL: log */
} odb_plot_opts;

/*
** Writes first the plots the scenario asked for (ob.plot: the plots.<name>.*
** context keys of results.csv), each as <name>.png and <name>.svg; then,
** for the solve rows of results.csv grouped by what varies among
** problem/method/variant/backend: time_per_step and gbs against x, and a
** roofline (GFLOP/s against flop/byte under the bandwidth roof); for the
** tuning evaluations (events.jsonl, or rows of kind tune*): a heatmap of
** the first two parameters and the tuning curve. Each as .png and .svg,
** with the data (*.dat) and the script (plot.gp) beside them. An automatic
** chart whose name the scenario gave to one of its plots is left out.
** ODB_ERR_ARG: not a run directory or nothing to plot (the message says
** which); ODB_ERR_IO: files; ODB_ERR_UNSUPPORTED: gnuplot missing/failed.
*/
odb_status odb_plot_run(const odb_plot_opts *o);

#endif
