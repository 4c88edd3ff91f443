/* odb_plot_style.c - what makes a chart readable: a colour and a marker of
   its own for each series, axis labels with units from one table, tick
   formats that fit the axis, titles that name the scenario. */
#include "odb_plot_int.h"

#include <math.h>
#include <string.h>

/* {====== series */

/*
** 16 colours told apart on a white background, also with the common
** colour-vision deficiencies for the first seven: the Okabe-Ito set
** (M. Okabe and K. Ito, "Color Universal Design", 2008) without its
** yellow, which hardly shows on white, followed by P. Tol's "muted" set
** ("Colour schemes", SRON/EPS/TN/09-002) without the colours close to
** those before it, and a grey. Neighbouring series differ most.
*/
static const char *const palette[ODB_PLOT_STYLES] = {
  "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
  "#000000", "#882255", "#117733", "#332288", "#999933", "#aa4499",
  "#44aa99", "#ddcc77", "#cc6677", "#7f7f7f",
};

/*
** 16 markers. gnuplot has 15 point types that differ in every terminal
** (pngcairo and svg draw 1..15 as shapes and start again at 16; dumb
** prints them as letters); the 16th is a character drawn as text, which
** every terminal can. Filled shapes first, then the open ones, then the
** line markers: the first series are the easiest to tell apart.
*/
static const char *const markers[ODB_PLOT_STYLES] = {
  "7", "5", "9", "11", "13", "15", "6", "4", "8", "10", "12", "14",
  "1", "2", "3", "'#'",
};

/* See the header (odb_plot_int.h). */
void odb_plot_series_style(FILE *f, int i) {
  int k = i >= 0 ? i % ODB_PLOT_STYLES : 0;
  fprintf(f, " lw 1.5 lc rgb '%s' pt %s ps 1.2", palette[k], markers[k]);
}

/* See the header (odb_plot_int.h). */
void odb_plot_style_note(FILE *f, int nseries) {
  char buf[128];
  if (nseries <= ODB_PLOT_STYLES) return;
  snprintf(buf, sizeof buf, "%d series: from series %d on, colours and "
           "markers repeat", nseries, ODB_PLOT_STYLES + 1);
  fputs("  set key title ", f);
  odb_plot_put_quoted(f, buf);
  fputc('\n', f);
}

/* }====== */

/* {====== axes */

/* See the header (odb_plot_int.h). Half of the last x tick label lies
   right of the border; gnuplot's automatic margin can leave it too little
   room, and a browser's font in the SVG can be wider than gnuplot
   estimates: 6 characters hold half of "0.0001" or "1e-10". */
void odb_plot_xy_frame(FILE *f) {
  fputs("  set rmargin 6\n", f);
}

/*
** What a column of the result rows means on an axis: a name and a unit
** ("" when the name says it, as for GFLOP/s, or for a count). A column
** not listed is shown by its name ("cfg." left out of a tuning
** parameter).
*/
static const struct column_label {
  const char *col, *name, *unit;
} labels[] = {
  { "n", "n", "components" },
  { "d", "access distance", "components" },
  { "time_per_step", "time per step", "s" },
  { "time_per_component", "time per step and component", "s" },
  { "seconds", "run time", "s" },
  { "median", "median time", "s" },
  { "q1", "lower quartile of the time", "s" },
  { "q3", "upper quartile of the time", "s" },
  { "spread", "spread", "(q3 - q1) / median" },
  { "seconds_per_iter", "time per iteration", "s" },
  { "spmv_seconds", "SpMV time", "s" },
  { "fp64_floor_s", "FP64 floor", "s" },
  { "gbs", "bandwidth", "GB/s" },
  { "floor_pct", "floor", "% of memory floor" },
  { "roofline_pct", "roofline", "% of roofline" },
  { "gflops", "GFLOP/s", "" },
  { "fp64_peak_gflops", "FP64 peak", "GFLOP/s" },
  { "flop_per_byte", "arithmetic intensity", "flop/byte" },
  { "speedup", "speed-up", "" },
  { "bytes", "memory traffic", "bytes" },
  { "bytes_per_iter", "memory traffic per iteration", "bytes" },
  { "iters", "iterations", "" },
  { "iterations", "iterations", "" },
  { "relres", "relative residual", "" },
  { "relres_true", "true relative residual", "" },
  { "threads", "threads", "" },
  { "steps", "steps", "" },
  { "accepted", "accepted steps", "" },
  { "rejected", "rejected steps", "" },
  { "nfev", "function evaluations", "" },
  { "h", "step size", "" },
  { "h_fixed", "step size", "" },
  { "rtol", "relative tolerance", "" },
  { "atol", "absolute tolerance", "" },
  { "tol", "tolerance", "" },
  { "t0", "start time", "" },
  { "t1", "end time", "" },
  { "err", "error", "" },
  { "eval", "evaluation", "" },
  { "reps", "repetitions", "" },
};

static const struct column_label *find_label(const char *col) {
  for (size_t i = 0; col && i < sizeof labels / sizeof labels[0]; ++i)
    if (strcmp(col, labels[i].col) == 0) return &labels[i];
  return NULL;
}

/* See the header (odb_plot_int.h). */
const char *odb_plot_column_name(const char *col) {
  const struct column_label *l = find_label(col);
  if (l) return l->name;
  if (!col) return "";
  return strncmp(col, "cfg.", 4) == 0 && col[4] ? col + 4 : col;
}

/* See the header (odb_plot_int.h). */
int odb_plot_is_time(const char *col) {
  const struct column_label *l = find_label(col);
  return l && strcmp(l->unit, "s") == 0;
}

/* See the header (odb_plot_int.h). */
void odb_plot_axis_label(char *buf, size_t cap, const char *col,
                         const char *unit) {
  const struct column_label *l = find_label(col);
  const char *u = unit && *unit ? unit : l ? l->unit : "";
  if (*u) snprintf(buf, cap, "%s [%s]", odb_plot_column_name(col), u);
  else snprintf(buf, cap, "%s", odb_plot_column_name(col));
}

/*
** Tick labels by the magnitude the axis spans. Between 1e-3 and 1e5 "%g"
** reads best (0.01, 250, 4096). Beyond, "%g" writes 1e-08 or 0.00000001
** (gnuplot's default), so a log axis gets "1e-8": the mantissa (%t, to
** no decimals: its ticks are 1, 2 or 5 times a power of ten) and the
** power (%T). A linear axis beyond gets "%.1te%T" for small values and
** whole numbers for large ones (1500000). No "10^{%T}": the charts draw
** text as it is (noenhanced), so the braces would show.
*/
void odb_plot_axis_format(FILE *f, const char *axis, int log_axis, double lo,
                          double hi) {
  double big = fmax(fabs(lo), fabs(hi));
  const char *fmt = "%g";
  if (!isfinite(lo) || !isfinite(hi) || hi < lo) big = NAN;
  if (log_axis && lo > 0 && (lo < 1e-3 || hi >= 1e5)) fmt = "%.0te%T";
  else if (!log_axis && big >= 1e5) fmt = "%.0f";
  else if (!log_axis && big > 0 && big < 1e-3) fmt = "%.1te%T";
  fprintf(f, "  set format %s \"%s\"\n", axis, fmt);
}

/* }====== */

/* {====== titles */

/* See the header (odb_plot_int.h). */
void odb_plot_scenario_name(char *buf, size_t cap, const char *path) {
  const char *base = path ? strrchr(path, '/') : NULL;
  size_t len;
  base = base ? base + 1 : path ? path : "";
  len = strlen(base);
  if (len > 4 && strcmp(base + len - 4, ".lua") == 0) len -= 4;
  if (len >= cap) len = cap - 1;
  memcpy(buf, base, len);
  buf[len] = '\0';
}

/* }====== */
