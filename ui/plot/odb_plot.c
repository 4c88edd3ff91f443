/* odb_plot.c - plots of a run: data files and a gnuplot script, then
   gnuplot draws PNG and SVG. */
#include "odb_plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "odb_plot_int.h"
#include "odb_ui_events.h"
#include "odb_ui_model.h"

#define MAX_GROUPS 32
#define PATHBUF (PATH_MAX + 64)   /* a directory and a file name */

/* {====== the data */

/* What a run gives to plot. */
typedef struct plot_data {
  odb_csv res;
  int have_res;
  int xcol;                       /* swept column */
  const char *xname;
  int *rows;                      /* solve rows, ok status, x and tps known */
  int nrows;
  char groups[MAX_GROUPS][96];
  int ngroups;
  int *group;                     /* group of rows[i] */
  int have_gbs, have_roof;
  int have_bars;                  /* some rows carry q1 and q3 */
  double floor_gbs;               /* bandwidth.read_1t, GB/s; 0 unknown */
  double peak_gflops;             /* bandwidth.peak_gflops_1t; 0 unknown */
  odb_ui_model *tune;             /* tuning evaluations: of one tuning */
  int tune_k, tune_n;             /* it is tuning tune_k (1-based) of the
                                     run's tune_n, the one with the most
                                     evaluations (the last of equals) */
  char scenario[256];             /* its name, for titles ("" unknown) */
  odb_plot_named *named;          /* the plots the scenario asked for */
} plot_data;

/* 1 when the solve row r should be plotted. */
static int solve_row(const odb_csv *c, int r, int xcol, int tcol) {
  int kind = odb_csv_col(c, "kind"), status = odb_csv_col(c, "status");
  if (kind >= 0 && strcmp(odb_csv_cell(c, r, kind), "solve") != 0) return 0;
  if (status >= 0 && *odb_csv_cell(c, r, status) &&
      strcmp(odb_csv_cell(c, r, status), "ok") != 0)
    return 0;
  return isfinite(odb_csv_num(c, r, xcol)) && odb_csv_num(c, r, tcol) > 0;
}

/* Number of distinct values of column k among the plotted solve rows,
   counted up to 3 (callers only ask whether it is more than one): one
   pass, each row compared with at most the two values seen before. */
static int distinct(const plot_data *d, int k) {
  const char *seen[3];
  int n = 0;
  for (int i = 0; i < d->nrows && n < 3; ++i) {
    const char *v = odb_csv_cell(&d->res, d->rows[i], k);
    int j = 0;
    while (j < n && strcmp(v, seen[j]) != 0) ++j;
    if (j == n) seen[n++] = v;
  }
  return n;
}

/* The rows that can be plotted against column x. */
static void pick_rows(plot_data *d, int xcol) {
  int tcol = odb_csv_col(&d->res, "time_per_step");
  d->nrows = 0;
  if (xcol < 0 || tcol < 0) return;
  for (int r = 0; r < d->res.nrows; ++r)
    if (solve_row(&d->res, r, xcol, tcol)) d->rows[d->nrows++] = r;
}

/* The swept column: --x, else n, else the first candidate that varies. */
static odb_status choose_x(plot_data *d, const char *want) {
  static const char *const candidates[] = { "n", "block", "threads", "rtol",
                                            "atol", "h_fixed", "t1" };
  if (want) {
    d->xcol = odb_csv_col(&d->res, want);
    if (d->xcol < 0)
      return ODB_FAIL(ODB_ERR_ARG, "--x: results.csv has no column '%s'",
                      want);
    d->xname = want;
    pick_rows(d, d->xcol);
    return ODB_OK;
  }
  d->xname = "n";
  d->xcol = odb_csv_col(&d->res, "n");
  pick_rows(d, d->xcol);
  if (d->nrows > 0 && distinct(d, d->xcol) > 1) return ODB_OK;
  for (size_t k = 1; k < sizeof candidates / sizeof candidates[0]; ++k) {
    int c = odb_csv_col(&d->res, candidates[k]);
    if (c < 0) continue;
    pick_rows(d, c);
    if (d->nrows > 0 && distinct(d, c) > 1) {
      d->xcol = c;
      d->xname = candidates[k];
      return ODB_OK;
    }
  }
  pick_rows(d, d->xcol);
  return ODB_OK;
}

/* Groups by the columns among problem/method/variant/backend that vary
   (method/variant when none does). */
static void make_groups(plot_data *d) {
  static const char *const keys[] = { "problem", "method", "variant",
                                      "backend" };
  int use[4], cols[4], any = 0;
  for (int k = 0; k < 4; ++k) {
    cols[k] = odb_csv_col(&d->res, keys[k]);
    use[k] = cols[k] >= 0 && distinct(d, cols[k]) > 1;
    any |= use[k];
  }
  if (!any) use[1] = use[2] = 1;
  d->ngroups = 0;
  for (int i = 0; i < d->nrows; ++i) {
    char name[96] = "";
    int g;
    for (int k = 0; k < 4; ++k) {
      size_t len = strlen(name);
      if (!use[k] || cols[k] < 0) continue;
      snprintf(name + len, sizeof name - len, "%s%s", len ? "/" : "",
               odb_csv_cell(&d->res, d->rows[i], cols[k]));
    }
    odb_plot_token(name);
    if (!name[0]) snprintf(name, sizeof name, "solves");
    for (g = 0; g < d->ngroups; ++g)
      if (strcmp(d->groups[g], name) == 0) break;
    if (g == d->ngroups) {
      if (d->ngroups == MAX_GROUPS) g = MAX_GROUPS - 1;   /* the rest */
      else snprintf(d->groups[d->ngroups++], sizeof d->groups[0], "%s", name);
    }
    d->group[i] = g;
  }
}

/*
** The tuning evaluations among evs, as the tunings of the run: a tuning
** starts where the evaluation index falls back. Sets *k (1-based) to the
** one with the most evaluations (the last of equals), *n to how many there
** are and *len to its evaluations; returns its first event (-1: none).
*/
static int largest_tuning(const odb_event *evs, int nev, int *k, int *n,
                          int *len) {
  int start = -1, best_start = -1, count = 0, seen = 0;
  long last = -1;
  *k = *n = *len = 0;
  for (int i = 0; i <= nev; ++i) {
    int eval = i < nev && evs[i].kind == ODB_EV_TUNE_EVAL;
    if (i == nev || (eval && evs[i].step < last)) {   /* a tuning ends */
      if (count > 0 && count >= *len) {
        *len = count;
        best_start = start;
        *k = seen;
      }
      count = 0;
    }
    if (!eval) continue;
    if (count == 0) {
      start = i;
      ++seen;
    }
    ++count;
    last = evs[i].step;
  }
  *n = seen;
  return best_start;
}

/* Folds the evaluations of the largest tuning among evs into d->tune. */
static void apply_largest(plot_data *d, const odb_event *evs, int n) {
  int len, first = largest_tuning(evs, n, &d->tune_k, &d->tune_n, &len);
  for (int i = first; first >= 0 && i < n && len > 0; ++i)
    if (evs[i].kind == ODB_EV_TUNE_EVAL) {
      odb_ui_model_apply(d->tune, &evs[i]);
      --len;
    }
}

/* Tuning evaluations of events.jsonl (a bad file is only warned about):
   those of its largest tuning; and the scenario's name from its header
   when results.csv gave none. */
static void tune_from_events(plot_data *d, const char *path, FILE *log) {
  odb_ui_info info;
  odb_event *evs = NULL;
  int n = 0;
  if (access(path, R_OK) != 0) return;
  if (odb_ui_events_read(path, &info, &evs, &n) != ODB_OK) {
    odb_plot_warn(log, "%s; its tuning evaluations are not plotted",
                  odb_last_error());
    return;
  }
  if (!d->scenario[0])
    odb_plot_scenario_name(d->scenario, sizeof d->scenario, info.scenario);
  apply_largest(d, evs, n);
  free(evs);
}

/* Tuning rows of results.csv (kind tune*) folded into the model: those
   of its largest tuning. */
static void tune_from_rows(plot_data *d) {
  const odb_csv *c = &d->res;
  int kind = odb_csv_col(c, "kind"), cfg = odb_csv_col(c, "config");
  int med = odb_csv_col(c, "median"), spr = odb_csv_col(c, "spread"),
      idx = odb_csv_col(c, "eval"), n = 0;
  odb_event *evs;
  long i = 0;
  if (cfg < 0) cfg = odb_csv_col(c, "configuration");
  if (med < 0) med = odb_csv_col(c, "seconds");
  if (idx < 0) idx = odb_csv_col(c, "i");
  if (kind < 0 || cfg < 0 || med < 0) return;
  evs = calloc((size_t)c->nrows + 1, sizeof *evs);
  if (!evs) return;
  for (int r = 0; r < c->nrows; ++r) {
    odb_event *e = &evs[n];
    if (strncmp(odb_csv_cell(c, r, kind), "tune", 4) != 0) continue;
    e->kind = ODB_EV_TUNE_EVAL;
    snprintf(e->name, sizeof e->name, "%s", odb_csv_cell(c, r, cfg));
    e->value = odb_csv_num(c, r, med);
    e->value2 = isfinite(odb_csv_num(c, r, spr)) ? odb_csv_num(c, r, spr)
                                                 : 0;
    e->step = isfinite(odb_csv_num(c, r, idx)) ? (long)odb_csv_num(c, r, idx)
                                               : ++i;
    ++n;
  }
  apply_largest(d, evs, n);
  free(evs);
}

/* }====== */

/* {====== files */

/* "<dir>/<name>" into buf. */
static void join(char *buf, size_t cap, const char *dir, const char *name) {
  snprintf(buf, cap, "%s/%s", dir, name);
}

/*
** The smallest and largest positive value over the solve rows (INFINITY,
** -INFINITY: none) of column col, or with per >= 0 of col / per (flop/byte
** as gflops / gbs).
*/
static void rows_range(const plot_data *d, int col, int per, double *lo,
                       double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int i = 0; i < d->nrows; ++i) {
    double x = odb_csv_num(&d->res, d->rows[i], col);
    if (per >= 0) x /= odb_csv_num(&d->res, d->rows[i], per);
    if (!(x > 0) || !isfinite(x)) continue;
    *lo = fmin(*lo, x);
    *hi = fmax(*hi, x);
  }
}

/* A solve row's place in solves.dat: its group, its x, its row. */
typedef struct solve_key {
  int group;
  double x;
  int row;
} solve_key;

/* Group, then x, then the order of results.csv. */
static int cmp_solve_key(const void *pa, const void *pb) {
  const solve_key *a = pa, *b = pb;
  if (a->group != b->group) return a->group < b->group ? -1 : 1;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

/* solves.dat: one gnuplot index block per group, sorted by x (one sort of
   all the rows; x is finite for every plotted row). */
static int write_solves(plot_data *d, const char *dir) {
  char path[PATHBUF];
  int tps = odb_csv_col(&d->res, "time_per_step"),
      gbs = odb_csv_col(&d->res, "gbs"), gfl = odb_csv_col(&d->res, "gflops");
  solve_key *keys = malloc((size_t)(d->nrows + 1) * sizeof *keys);
  FILE *f;
  int i = 0;
  if (!keys) return 0;
  for (int k = 0; k < d->nrows; ++k) {
    keys[k].group = d->group[k];
    keys[k].x = odb_csv_num(&d->res, d->rows[k], d->xcol);
    keys[k].row = d->rows[k];
  }
  qsort(keys, (size_t)d->nrows, sizeof *keys, cmp_solve_key);
  join(path, sizeof path, dir, "solves.dat");
  if (!(f = fopen(path, "w"))) {
    free(keys);
    return 0;
  }
  fputs("# ", f);
  odb_plot_put_token(f, d->xname);
  fputs(" time_per_step gbs gflops flop_per_byte time_per_step_q1 "
        "time_per_step_q3, one block per group\n", f);
  for (int g = 0; g < d->ngroups; ++g) {
    fprintf(f, "# %s\n", d->groups[g]);
    for (; i < d->nrows && keys[i].group == g; ++i) {
      int r = keys[i].row;
      double b = odb_csv_num(&d->res, r, gbs), fl = odb_csv_num(&d->res, r, gfl),
             t = odb_csv_num(&d->res, r, tps), lo, hi;
      d->have_bars |= odb_csv_quartiles(&d->res, r, t, &lo, &hi);
      fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", keys[i].x, t,
              b, fl, b > 0 && fl > 0 ? fl / b : NAN, lo, hi);
    }
    fputs("\n\n", f);
  }
  free(keys);
  return fclose(f) == 0;
}

void odb_plot_time_unit(double hi, double *scale, const char **unit) {
  if (hi < 1e-6) { *scale = 1e9; *unit = "ns"; }
  else if (hi < 1e-3) { *scale = 1e6; *unit = "us"; }
  else if (hi < 1) { *scale = 1e3; *unit = "ms"; }
  else { *scale = 1; *unit = "s"; }
}

/* heat.dat: the matrix of the first two parameters, with headers; and
   tuning.dat: evaluation, median, best so far. */
static int write_tuning(const plot_data *d, const char *dir, double *scale,
                        const char **unit) {
  const odb_ui_model *m = d->tune;
  const odb_ui_param *X = &m->params[0];
  const odb_ui_param *Y = &m->params[m->nparams > 1 ? 1 : 0];
  int py = m->nparams > 1 ? 1 : 0, ny = m->nparams > 1 ? Y->nvalues : 1;
  double cells[ODB_UI_VALUE_MAX * ODB_UI_VALUE_MAX], hi = 0, best = INFINITY;
  char path[PATHBUF];
  FILE *f;
  for (int i = 0; i < m->nevals; ++i) hi = fmax(hi, m->evals[i].median);
  odb_plot_time_unit(hi, scale, unit);
  join(path, sizeof path, dir, "tuning.dat");
  if (!(f = fopen(path, "w"))) return 0;
  fprintf(f, "# evaluation median_%s best_so_far_%s\n", *unit, *unit);
  for (int i = 0; i < m->nevals; ++i) {
    best = fmin(best, m->evals[i].median);
    fprintf(f, "%ld %.17g %.17g\n", m->evals[i].i,
            m->evals[i].median * *scale, best * *scale);
  }
  if (fclose(f) != 0) return 0;
  if (m->nparams == 0) return 1;
  odb_ui_model_heat(m, 0, py, cells);
  join(path, sizeof path, dir, "heat.dat");
  if (!(f = fopen(path, "w"))) return 0;
  odb_plot_put_token(f, m->nparams > 1 ? Y->name : "-");
  for (int c = 0; c < X->nvalues; ++c) {
    fputc(' ', f);
    odb_plot_put_token(f, X->values[X->order[c]]);
  }
  fputc('\n', f);
  for (int r = 0; r < ny; ++r) {
    odb_plot_put_token(f, m->nparams > 1 ? Y->values[Y->order[r]] : "median");
    for (int c = 0; c < X->nvalues; ++c) {
      double v = cells[r * X->nvalues + c];
      if (isnan(v)) fprintf(f, " NaN");
      else fprintf(f, " %.6g", v * *scale);
    }
    fputc('\n', f);
  }
  return fclose(f) == 0;
}

/* Both formats from one block: PNG (pngcairo when gnuplot has it). Text
   is drawn as it is (noenhanced: no ^, _, @ or braces markup). */
void odb_plot_chart_begin(FILE *f, const char *name) {
  char file[128];
  snprintf(file, sizeof file, "%s.", name);
  fputs("do for [fmt in \"png svg\"] {\n"
        "  if (fmt eq \"png\") { set terminal @pngterm size 960,640 } "
        "else { set terminal svg size 960,640 dynamic }\n"
        "  set termoption noenhanced\n"
        "  set output ", f);
  odb_plot_put_quoted(f, file);
  fputs(".fmt\n", f);
}

void odb_plot_chart_end(FILE *f) {
  fputs("  set output\n}\nreset\nset grid\nset key below\n"
        "set datafile missing \"NaN\"\n\n", f);
}

/* See the header (odb_plot_int.h). */
void odb_plot_roof_xrange(FILE *f, double lo, double hi, double bw,
                          double peak) {
  if (!(lo > 0) || !(hi >= lo) || !isfinite(hi)) return;
  if (bw > 0 && peak > 0) {
    lo = fmin(lo, peak / bw);
    hi = fmax(hi, peak / bw);
  }
  fprintf(f, "  set xrange [%.6g:%.6g]\n  set samples 1000\n", lo / 4,
          hi * 4);
}

/* See the header (odb_plot_int.h). */
void odb_plot_x_span(FILE *f, double lo, double hi, int base) {
  double a, b;
  if (!(hi >= lo) || !isfinite(lo) || !isfinite(hi)) return;
  if (base > 1) {
    double lb = log((double)base);
    if (!(lo > 0)) return;
    a = pow(base, floor(log(lo) / lb + 1e-9));
    b = pow(base, ceil(log(hi) / lb - 1e-9));
    if (b <= a) b = a * base;
  } else if (hi > lo) {
    a = lo - 0.05 * (hi - lo);
    b = hi + 0.05 * (hi - lo);
  } else {
    double d = lo != 0 ? 0.5 * fabs(lo) : 1;
    a = lo - d;
    b = lo + d;
  }
  fprintf(f, "  set xrange [%.6g:%.6g]\n", a, b);
}

/* See the header (odb_plot_int.h). */
void odb_plot_log_tics(FILE *f, const char *axis, double lo, double hi) {
  static const double m125[3] = { 1, 2, 5 };
  double v[32];
  int n = 0;
  if (!(lo > 0) || !(hi > lo) || !isfinite(hi) || hi / lo >= 1e3) return;
  for (double dec = pow(10, floor(log10(lo))); dec <= hi && n < 30; dec *= 10)
    for (int i = 0; i < 3; ++i) {
      double t = m125[i] * dec;
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) v[n++] = t;
    }
  if (n < 2) return;
  fprintf(f, "  set %stics (", axis);
  for (int i = 0; i < n; ++i) fprintf(f, "%s%.6g", i ? ", " : "", v[i]);
  fputs(")\n", f);
}

/* See the header (odb_plot_int.h). */
void odb_plot_memory_roof(FILE *f, double bw, double peak) {
  if (peak > 0)
    fprintf(f, "(x <= %.6g ? %.6g * x : 1/0)", peak / bw, bw);
  else
    fprintf(f, "%.6g * x", bw);
}

/* The median of the n values v (sorted in place); 0 for none. */
static double median_of(double *v, int n) {
  for (int i = 1; i < n; ++i)          /* a few rows: insertion sort */
    for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* See the header (odb_plot_int.h). */
int odb_plot_roofs(const odb_csv *res, const int *rows, int nrows,
                   double floor_gbs, double peak_1t, odb_plot_roof *out) {
  int pk = odb_csv_col(res, "fp64_peak_gflops"), be = odb_csv_col(res, "backend"),
      gbs = odb_csv_col(res, "gbs"), fl = odb_csv_col(res, "floor_pct"),
      fb = odb_csv_col(res, "floor_bytes"), sec = odb_csv_col(res, "seconds");
  int n = 0, host = 0;
  double *bw = malloc((size_t)(nrows + 1) * sizeof *bw);
  for (int i = 0; i < nrows; ++i) {
    double p = odb_csv_num(res, rows[i], pk);
    int k = 0, m = 0;
    if (!(p > 0) || !isfinite(p)) {
      host = 1;
      continue;
    }
    while (k < n && out[k].peak != p) ++k;
    if (k < n || n == ODB_PLOT_ROOFS - 1) continue;   /* seen, or full */
    out[n].peak = p;
    out[n].bw = 0;
    snprintf(out[n].who, sizeof out[n].who, "%s",
             be >= 0 && *odb_csv_cell(res, rows[i], be)
               ? odb_csv_cell(res, rows[i], be) : "FP64 rows");
    for (int j = i; bw && j < nrows; ++j) {   /* this peak's memory roof */
      /* floor_pct is of the row's floor_bytes (docs/floors.md), which a
         solve's gbs (the variant's own bytes) does not count */
      double g = fb >= 0 && sec >= 0 && odb_csv_num(res, rows[j], sec) > 0
                   ? odb_csv_num(res, rows[j], fb) /
                       odb_csv_num(res, rows[j], sec) * 1e-9
                   : odb_csv_num(res, rows[j], gbs),
             f = odb_csv_num(res, rows[j], fl);
      if (odb_csv_num(res, rows[j], pk) == p && g > 0 && f > 0 &&
          isfinite(g) && isfinite(f))
        bw[m++] = 100 * g / f;
    }
    out[n++].bw = median_of(bw, m);
  }
  free(bw);
  if (host && (floor_gbs > 0 || peak_1t > 0)) {
    out[n].bw = floor_gbs > 0 ? floor_gbs : 0;
    out[n].peak = peak_1t > 0 ? peak_1t : 0;
    snprintf(out[n].who, sizeof out[n].who, "1 thread");
    ++n;
  }
  return n;
}

/* See the header (odb_plot_int.h). */
void odb_plot_roofs_xrange(FILE *f, double lo, double hi,
                           const odb_plot_roof *r, int n) {
  if (!(lo > 0) || !(hi >= lo) || !isfinite(hi)) return;
  for (int i = 0; i < n; ++i)
    if (r[i].bw > 0 && r[i].peak > 0) {   /* widen lo..hi to each ridge */
      lo = fmin(lo, r[i].peak / r[i].bw);
      hi = fmax(hi, r[i].peak / r[i].bw);
    }
  odb_plot_roof_xrange(f, lo, hi, 0, 0);
}

/* See the header (odb_plot_int.h). */
void odb_plot_roofs_yformat(FILE *f, double lo, double hi,
                            const odb_plot_roof *r, int n) {
  for (int i = 0; i < n; ++i) hi = fmax(hi, r[i].peak);
  odb_plot_axis_format(f, "y", 1, lo, hi);
}

/* See the header (odb_plot_int.h). The run's own roofs (one thread, one
   core) in black as before; a GPU's in the colours after it. */
void odb_plot_roofs_put(FILE *f, const odb_plot_roof *r, int n) {
  static const char *const colour[ODB_PLOT_ROOFS] = {
    "#000000", "#7f7f7f", "#882255", "#117733"
  };
  char buf[160];
  for (int i = 0; i < n; ++i) {
    const char *c = colour[strcmp(r[i].who, "1 thread") == 0 ? 0
                           : 1 + i % (ODB_PLOT_ROOFS - 1)];
    int host = strcmp(r[i].who, "1 thread") == 0;
    if (r[i].bw > 0) {
      fputs(", \\\n       ", f);
      odb_plot_memory_roof(f, r[i].bw, r[i].peak);
      snprintf(buf, sizeof buf, "memory roof, %s (%.1f GB/s)", r[i].who,
               r[i].bw);
      fprintf(f, " with lines lw 2 lc rgb '%s' title ", c);
      odb_plot_put_quoted(f, buf);
    }
    if (r[i].peak > 0) {
      snprintf(buf, sizeof buf, "compute roof, %s%s (%.1f GFLOP/s)",
               host ? "1 core" : r[i].who, host ? "" : " FP64", r[i].peak);
      fprintf(f, ", \\\n       %.6g with lines lw 2 dt 2 lc rgb '%s' title ",
              r[i].peak, c);
      odb_plot_put_quoted(f, buf);
    }
  }
}

/*
** The one way text gets into plot.gp. Single quotes: gnuplot takes the
** text literally (no backslash escapes, no `command` substitution and no
** @macro expansion, which double quotes would do), '' is one quote. A
** newline or another control character (C0, DEL) would end the command or
** hide the rest of it: each is a space.
*/
void odb_plot_put_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '\'') fputs("''", f);
    else if (c < 0x20 || c == 0x7f) fputc(' ', f);
    else fputc(c, f);
  }
  fputc('\'', f);
}

/* 1 when c cannot stand in a word of a data file or of the group list:
   blanks, control characters, quotes (gnuplot's word() and its data
   columns honour both kinds). */
static int not_token(unsigned char c) {
  return c <= 0x20 || c == 0x7f || c == '"' || c == '\'';
}

void odb_plot_token(char *s) {
  for (; s && *s; ++s)
    if (not_token((unsigned char)*s)) *s = '_';
}

void odb_plot_put_token(FILE *f, const char *s) {
  for (; s && *s; ++s) fputc(not_token((unsigned char)*s) ? '_' : *s, f);
}

void odb_plot_warn(FILE *f, const char *fmt, ...) {
  char raw[1024], safe[1024];
  va_list ap;
  if (!f) return;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  odb_ui_clean(safe, sizeof safe, raw);
  fprintf(f, "odebench: warning: %s\n", safe);
}

/* "  set <what> '<text>'", the text formatted, through
   odb_plot_put_quoted. */
static void set_text(FILE *f, const char *what, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void set_text(FILE *f, const char *what, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(f, "  set %s ", what);
  odb_plot_put_quoted(f, buf);
  fputc('\n', f);
}

/* 1 when the automatic chart name is drawn: the scenario did not ask for
   a plot of that name. */
static int automatic(const plot_data *d, const char *name) {
  return !d->named || !odb_plot_named_has(d->named, name);
}

/* Characters of all the values of a parameter, as tick labels. */
static int label_chars(const odb_ui_param *p) {
  int n = 0;
  for (int i = 0; i < p->nvalues; ++i) n += (int)strlen(p->values[i]) + 1;
  return n;
}

/* "  set title '<scenario>: <what>'" (only what when the scenario's name
   is unknown), the text through odb_plot_put_quoted. */
static void set_title(FILE *f, const char *sc, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void set_title(FILE *f, const char *sc, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  set_text(f, "title", "%s%s%s", sc, *sc ? ": " : "", what);
}

/* "  set <axis>label '<label of col>'". */
static void set_label(FILE *f, const char *axis, const char *col,
                      const char *unit) {
  char label[160], what[16];
  odb_plot_axis_label(label, sizeof label, col, unit);
  snprintf(what, sizeof what, "%slabel", axis);
  set_text(f, what, "%s", label);
}

/* Tick format of an axis over column col of the plotted rows. */
static void set_format(FILE *f, const plot_data *d, const char *axis,
                       int log_axis, int col) {
  double lo, hi;
  rows_range(d, col, -1, &lo, &hi);
  odb_plot_axis_format(f, axis, log_axis, lo, hi);
}

/* "  plot" with an item per group of solves.dat: using, drawn with, in
   the group's own colour and marker. */
static void plot_groups(FILE *f, const plot_data *d, const char *using,
                        const char *with) {
  odb_plot_style_note(f, d->ngroups);
  fputs("  plot ", f);
  for (int g = 0; g < d->ngroups; ++g) {
    fprintf(f, "%s'solves.dat' index %d using %s with %s", g ? ", \\\n       "
            : "", g, using, with);
    odb_plot_series_style(f, g);
    fputs(" title ", f);
    odb_plot_put_quoted(f, d->groups[g]);
  }
}

/* plot.gp: the scenario's plots, then every automatic chart the data
   allows. */
static int write_script(const plot_data *d, const char *dir, double scale,
                        const char *unit) {
  char path[PATHBUF];
  const char *sc = d->scenario;
  const char *xn = odb_plot_column_name(d->xname);
  char which[64] = "";            /* " 1 of 7, the largest," */
  FILE *f;
  if (d->tune_n > 1)
    snprintf(which, sizeof which, " %d of %d, the largest,", d->tune_k,
             d->tune_n);
  join(path, sizeof path, dir, "plot.gp");
  if (!(f = fopen(path, "w"))) return 0;
  fprintf(f, "# written by odebench plot; run with: gnuplot plot.gp\n"
          "pngterm = strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0 ? "
          "\"pngcairo\" : \"png\"\n"
          "set datafile missing \"NaN\"\nset grid\nset key below\n\n");
  if (d->named && !odb_plot_named_write(d->named, dir, f, d->floor_gbs,
                                        d->peak_gflops, sc)) {
    int e = errno;
    fclose(f);
    errno = e;
    return 0;
  }
  if (d->nrows > 0 && automatic(d, "time_per_step")) {
    odb_plot_chart_begin(f, "time_per_step");
    set_title(f, sc, "time per step vs %s", xn);
    odb_plot_xy_frame(f);
    fputs("  set logscale xy\n", f);
    set_format(f, d, "x", 1, d->xcol);
    set_format(f, d, "y", 1, odb_csv_col(&d->res, "time_per_step"));
    set_label(f, "x", d->xname, NULL);
    set_label(f, "y", "time_per_step", NULL);
    if (d->have_bars) plot_groups(f, d, "1:2:6:7", "yerrorlines");
    else plot_groups(f, d, "1:2", "linespoints");
    fputc('\n', f);
    odb_plot_chart_end(f);
  }
  if (d->nrows > 0 && d->have_gbs && automatic(d, "gbs")) {
    double lo, hi;
    odb_plot_chart_begin(f, "gbs");
    rows_range(d, d->xcol, -1, &lo, &hi);
    if (d->floor_gbs > 0)   /* the bandwidth line spans the chart */
      odb_plot_x_span(f, lo, hi, 10);
    set_title(f, sc, "bandwidth vs %s", xn);
    odb_plot_xy_frame(f);
    fputs("  set logscale x\n", f);
    odb_plot_axis_format(f, "x", 1, lo, hi);
    rows_range(d, odb_csv_col(&d->res, "gbs"), -1, &lo, &hi);
    odb_plot_axis_format(f, "y", 0, 0, fmax(hi, d->floor_gbs));
    set_label(f, "x", d->xname, NULL);
    set_label(f, "y", "gbs", NULL);
    fputs("  set yrange [0:*]\n", f);
    plot_groups(f, d, "1:3", "linespoints");
    if (d->floor_gbs > 0)
      fprintf(f, ", \\\n       %.6g with lines dt 2 lc rgb 'black' title "
              "'read bandwidth, 1 thread (%.1f GB/s)'", d->floor_gbs,
              d->floor_gbs);
    fputc('\n', f);
    odb_plot_chart_end(f);
  }
  if (d->nrows > 0 && d->have_roof && automatic(d, "roofline")) {
    odb_plot_roof roofs[ODB_PLOT_ROOFS];
    int nroofs = odb_plot_roofs(&d->res, d->rows, d->nrows, d->floor_gbs,
                                d->peak_gflops, roofs);
    int gfl = odb_csv_col(&d->res, "gflops");
    double lo, hi;
    odb_plot_chart_begin(f, "roofline");
    rows_range(d, gfl, odb_csv_col(&d->res, "gbs"), &lo, &hi);
    odb_plot_roofs_xrange(f, lo, hi, roofs, nroofs);
    odb_plot_axis_format(f, "x", 1, lo, hi);
    rows_range(d, gfl, -1, &lo, &hi);
    odb_plot_roofs_yformat(f, lo, hi, roofs, nroofs);
    set_title(f, sc, "roofline");
    odb_plot_xy_frame(f);
    fputs("  set logscale xy\n", f);
    set_label(f, "x", "flop_per_byte", NULL);
    set_label(f, "y", "gflops", NULL);
    plot_groups(f, d, "5:4", "points");
    odb_plot_roofs_put(f, roofs, nroofs);
    fputc('\n', f);
    odb_plot_chart_end(f);
  }
  if (d->tune->nevals > 0 && automatic(d, "tuning")) {
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < d->tune->nevals; ++i)
      if (d->tune->evals[i].median > 0) {
        lo = fmin(lo, d->tune->evals[i].median * scale);
        hi = fmax(hi, d->tune->evals[i].median * scale);
      }
    odb_plot_chart_begin(f, "tuning");
    set_title(f, sc, "tuning%s %d configurations timed", which,
              d->tune->nevals);
    odb_plot_xy_frame(f);
    fputs("  set logscale y\n", f);
    odb_plot_axis_format(f, "x", 0, 0, d->tune->nevals);
    odb_plot_axis_format(f, "y", 1, lo, hi);
    set_label(f, "x", "eval", NULL);
    set_label(f, "y", "median", unit);
    fputs("  plot 'tuning.dat' using 1:2 with points", f);
    odb_plot_series_style(f, 0);
    fputs(" title 'configuration', '' using 1:3 with steps lw 2 lc rgb "
          "'#d55e00' title 'best so far'\n", f);
    odb_plot_chart_end(f);
  }
  if (d->tune->nevals > 0 && d->tune->nparams > 0 &&
      automatic(d, "heatmap")) {
    const odb_ui_model *m = d->tune;
    const char *yname = m->nparams > 1 ? m->params[1].name : "-";
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < m->nevals; ++i)
      if (m->evals[i].median > 0) {
        lo = fmin(lo, m->evals[i].median * scale);
        hi = fmax(hi, m->evals[i].median * scale);
      }
    odb_plot_chart_begin(f, "heatmap");
    odb_plot_log_tics(f, "cb", lo, hi);
    odb_plot_axis_format(f, "cb", 1, lo, hi);
    if (label_chars(&m->params[0]) > 60)   /* they would run together */
      fprintf(f, "  set xtics rotate by 30 right\n");
    set_title(f, sc, "tuning%s median time [%s], %s x %s", which, unit,
              m->params[0].name, yname);
    set_label(f, "x", m->params[0].name, NULL);
    set_text(f, "ylabel", "%s", m->nparams > 1
             ? odb_plot_column_name(m->params[1].name) : "");
    fputs("  set logscale cb\n", f);
    set_label(f, "cb", "median", unit);
    fputs("  set cblabel offset 1.5,0\n", f);   /* clear of the tick labels */
    fputs("  set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\n"
          "  unset key\n  unset grid\n"
          "  plot 'heat.dat' matrix rowheaders columnheaders using 1:2:3 "
          "with image, '' matrix rowheaders columnheaders using 1:2:"
          "($3 == $3 ? sprintf('%.3g', $3) : '') with labels\n", f);
    odb_plot_chart_end(f);
  }
  return fclose(f) == 0;
}

/* }====== */

/* {====== gnuplot */

/* Runs "gnuplot plot.gp" in dir, its output in dir/gnuplot.log. */
static odb_status run_gnuplot(const char *dir) {
  char logpath[PATHBUF];
  pid_t pid;
  int status;
  join(logpath, sizeof logpath, dir, "gnuplot.log");
  fflush(NULL);
  pid = fork();
  if (pid < 0) return ODB_FAIL(ODB_ERR_IO, "cannot start gnuplot: %s",
                               strerror(errno));
  if (pid == 0) {
    int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    if (chdir(dir) != 0) _exit(126);
    execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
    _exit(127);
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return ODB_FAIL(ODB_ERR_IO, "waiting for gnuplot: %s", strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gnuplot was not found (Debian: "
                    "apt-get install gnuplot-nox)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gnuplot failed; see %s", logpath);
  return ODB_OK;
}

/* Lists name.png and name.svg when both were written and are not empty. */
static int check_outputs(const char *dir, const char *name, FILE *log) {
  char path[PATHBUF];
  struct stat st;
  static const char *const ext[] = { "png", "svg" };
  for (int k = 0; k < 2; ++k) {
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[k]);
    if (stat(path, &st) != 0 || st.st_size == 0) return 0;
  }
  if (log) fprintf(log, "%s/%s.png  %s/%s.svg\n", dir, name, dir, name);
  return 1;
}

/* }====== */

/* Frees what plot_data holds. */
static void data_free(plot_data *d) {
  odb_csv_free(&d->res);
  free(d->rows);
  free(d->group);
  if (d->tune) odb_ui_model_free(d->tune);
  free(d->tune);
  odb_plot_named_free(d->named);
}

/* Loads results.csv and events.jsonl of the run directory. */
static odb_status load(plot_data *d, const odb_plot_opts *o) {
  char path[PATHBUF];
  struct stat st;
  const char *v;
  if (stat(o->run_dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return ODB_FAIL(ODB_ERR_ARG, "no run directory '%s'", o->run_dir);
  d->tune = malloc(sizeof *d->tune);
  if (!d->tune) return ODB_FAIL(ODB_ERR_NOMEM, "plot: out of memory");
  odb_ui_model_init(d->tune, NULL);
  join(path, sizeof path, o->run_dir, "results.csv");
  if (odb_csv_read(path, &d->res)) {
    d->have_res = 1;
    d->rows = malloc((size_t)(d->res.nrows + 1) * sizeof *d->rows);
    d->group = malloc((size_t)(d->res.nrows + 1) * sizeof *d->group);
    if (!d->rows || !d->group)
      return ODB_FAIL(ODB_ERR_NOMEM, "plot: out of memory");
    ODB_TRY(choose_x(d, o->x));
    make_groups(d);
    d->have_gbs = odb_csv_col(&d->res, "gbs") >= 0;
    d->have_roof = d->have_gbs && odb_csv_col(&d->res, "gflops") >= 0;
    v = odb_csv_ctx(&d->res, "bandwidth.read_1t");
    d->floor_gbs = v ? strtod(v, NULL) : 0;
    v = odb_csv_ctx(&d->res, "bandwidth.peak_gflops_1t");
    d->peak_gflops = v ? strtod(v, NULL) : 0;
    odb_plot_scenario_name(d->scenario, sizeof d->scenario,
                           odb_csv_ctx(&d->res, "scenario.path"));
    ODB_TRY(odb_plot_named_load(&d->res, o->warn ? o->warn : o->log,
                                &d->named));
  } else if (errno != ENOENT) {
    return ODB_FAIL(ODB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  } else if (o->x) {
    return ODB_FAIL(ODB_ERR_ARG, "--x: '%s' has no results.csv", o->run_dir);
  }
  join(path, sizeof path, o->run_dir, "events.jsonl");
  tune_from_events(d, path, o->log);
  if (d->tune->nevals == 0 && d->have_res) tune_from_rows(d);
  if (!d->have_res && access(path, F_OK) != 0)
    return ODB_FAIL(ODB_ERR_ARG, "'%s' holds no results.csv or events.jsonl "
                    "(not a run directory)", o->run_dir);
  return ODB_OK;
}

odb_status odb_plot_run(const odb_plot_opts *o) {
  plot_data d;
  char outdir[PATH_MAX];
  const char *unit = "s";
  double scale = 1;
  odb_status st;
  static const char *const charts[] = { "time_per_step", "gbs", "roofline",
                                        "tuning", "heatmap" };
  int wrote = 0, nnamed;
  memset(&d, 0, sizeof d);
  st = load(&d, o);
  nnamed = d.named ? odb_plot_named_count(d.named) : 0;
  if (st == ODB_OK && d.nrows == 0 && d.tune->nevals == 0 && nnamed == 0)
    st = ODB_FAIL(ODB_ERR_ARG, "nothing to plot in '%s': no finished solve "
                  "rows with %s and time_per_step, no tuning evaluations and "
                  "no plot of the scenario (ob.plot) that can be drawn",
                  o->run_dir, d.xname ? d.xname : "n");
  if (st != ODB_OK) goto done;
  if (o->out_dir) snprintf(outdir, sizeof outdir, "%s", o->out_dir);
  else join(outdir, sizeof outdir, o->run_dir, "plots");
  st = odb_mkdirs(outdir);
  if (st != ODB_OK) goto done;
  if ((d.nrows > 0 && !write_solves(&d, outdir)) ||
      (d.tune->nevals > 0 && !write_tuning(&d, outdir, &scale, &unit)) ||
      !write_script(&d, outdir, scale, unit)) {
    st = ODB_FAIL(ODB_ERR_IO, "cannot write the plot files in %s: %s", outdir,
                  strerror(errno));
    goto done;
  }
  st = run_gnuplot(outdir);
  if (st != ODB_OK) goto done;
  for (int k = 0; k < nnamed; ++k)
    wrote += check_outputs(outdir, odb_plot_named_name(d.named, k), o->log);
  for (size_t k = 0; k < sizeof charts / sizeof charts[0]; ++k)
    if (automatic(&d, charts[k]))
      wrote += check_outputs(outdir, charts[k], o->log);
  if (wrote == 0)
    st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "gnuplot wrote no plot; see "
                  "%s/gnuplot.log", outdir);
done:
  data_free(&d);
  return st;
}
