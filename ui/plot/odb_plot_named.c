/* odb_plot_named.c - the plots a scenario asked for with ob.plot: their
   requests read back from results.csv's context lines, their points
   gathered from the rows, their data files and gnuplot charts written. */
#include "odb_plot_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQ 32          /* requests of one run */
#define MAX_GROUP 4         /* grouping columns of one request */
#define MAX_WHERE 8         /* filter columns of one request */
#define MAX_SERIES 32       /* lines of one chart */
#define MAX_CAT 64          /* heatmap values per axis */
#define COL_LEN 64
#define CAT_LEN 24
#define PATHBUF (PATH_MAX + 64)

/* One ob.plot request as results.csv holds it (plots.<name>.<field>). */
typedef struct request {
  char name[48], kind[16], rows[8];
  char x[COL_LEN], y[COL_LEN], z[COL_LEN];
  char title[256];
  char group[MAX_GROUP][COL_LEN];
  int ngroup;
  char wkey[MAX_WHERE][COL_LEN], wval[MAX_WHERE][128];
  int nwhere;
  int logx, logy;
} request;

/* The points of one line; row[k] is the results row of point k, lo[k]
   and hi[k] its error bar (both y without one). */
typedef struct series {
  char title[128];
  int n, cap;
  double *x, *y, *lo, *hi;
  int *row;
} series;

/* A request and what it shows. */
typedef struct chart {
  request q;
  series s[MAX_SERIES];       /* lines and roofline */
  int ns;
  int nx, ny;                 /* heatmap: values of x and y, and the cells */
  char xv[MAX_CAT][CAT_LEN], yv[MAX_CAT][CAT_LEN];
  double *cells;              /* ny x nx, NAN where no row fits */
  double scale;               /* y (lines) or z (heatmap) into unit */
  const char *unit;           /* "" unless the column is a time */
  int bars;                   /* some points have an error bar (q1, q3) */
} chart;

struct odb_plot_named {
  chart *c;                   /* the requests that can be drawn */
  int n;
  const odb_csv *res;         /* their rows (the caller's) */
};

/* {====== requests */

/* Copies at most cap - 1 bytes of s and terminates. */
static void copy(char *dst, size_t cap, const char *s, size_t len) {
  if (len >= cap) len = cap - 1;
  memcpy(dst, s, len);
  dst[len] = '\0';
}

/* The request called name (len bytes), added when new; NULL when full. */
static request *find_request(request *reqs, int *n, const char *name,
                             size_t len) {
  for (int i = 0; i < *n; ++i)
    if (strlen(reqs[i].name) == len && strncmp(reqs[i].name, name, len) == 0)
      return &reqs[i];
  if (*n == MAX_REQ) return NULL;
  memset(&reqs[*n], 0, sizeof reqs[0]);
  copy(reqs[*n].name, sizeof reqs[0].name, name, len);
  return &reqs[(*n)++];
}

/* Splits "a,b,c" into the grouping columns. */
static void set_group(request *q, const char *v) {
  while (*v && q->ngroup < MAX_GROUP) {
    size_t len = strcspn(v, ",");
    if (len) copy(q->group[q->ngroup++], COL_LEN, v, len);
    v += len;
    if (*v == ',') ++v;
  }
}

/* One field ("x", "where.variant", ...) of a request; others are ignored
   (a later odebench may write more). */
static void set_field(request *q, const char *field, const char *v) {
  size_t len = strlen(v);
  if (strcmp(field, "kind") == 0) copy(q->kind, sizeof q->kind, v, len);
  else if (strcmp(field, "rows") == 0) copy(q->rows, sizeof q->rows, v, len);
  else if (strcmp(field, "x") == 0) copy(q->x, COL_LEN, v, len);
  else if (strcmp(field, "y") == 0) copy(q->y, COL_LEN, v, len);
  else if (strcmp(field, "z") == 0) copy(q->z, COL_LEN, v, len);
  else if (strcmp(field, "title") == 0)
    copy(q->title, sizeof q->title, v, len);
  else if (strcmp(field, "group") == 0) set_group(q, v);
  else if (strcmp(field, "logx") == 0) q->logx = strcmp(v, "true") == 0;
  else if (strcmp(field, "logy") == 0) q->logy = strcmp(v, "true") == 0;
  else if (strncmp(field, "where.", 6) == 0 && field[6] &&
           q->nwhere < MAX_WHERE) {
    copy(q->wkey[q->nwhere], COL_LEN, field + 6, strlen(field + 6));
    copy(q->wval[q->nwhere], sizeof q->wval[0], v, len);
    q->nwhere++;
  }
}

/* Reads the plots.<name>.<field>=value context lines, in order. */
static int parse_requests(const odb_csv *res, request *reqs) {
  int n = 0;
  for (int i = 0; i < res->nctx; ++i) {
    const char *e = res->ctx[i], *name, *dot, *eq;
    char field[COL_LEN + 8];
    request *q;
    if (strncmp(e, "plots.", 6) != 0) continue;
    name = e + 6;
    eq = strchr(name, '=');
    dot = strchr(name, '.');
    if (!eq || !dot || dot > eq || dot == name) continue;
    q = find_request(reqs, &n, name, (size_t)(dot - name));
    if (!q) continue;
    copy(field, sizeof field, dot + 1, (size_t)(eq - dot - 1));
    set_field(q, field, eq + 1);
  }
  for (int i = 0; i < n; ++i) {
    if (!reqs[i].kind[0]) snprintf(reqs[i].kind, sizeof reqs[i].kind, "lines");
    if (!reqs[i].rows[0]) snprintf(reqs[i].rows, sizeof reqs[i].rows, "solve");
  }
  return n;
}

/* }====== */

/* {====== values of the rows */

/* The columns a derived quantity is computed from (NULL: not derived). */
static const char *const *derived_from(const char *col) {
  static const char *const speedup[] = { "time_per_step", NULL };
  static const char *const tpc[] = { "time_per_step", "n", NULL };
  static const char *const fpb[] = { "gflops", "gbs", NULL };
  if (strcmp(col, "speedup") == 0) return speedup;
  if (strcmp(col, "time_per_component") == 0) return tpc;
  if (strcmp(col, "flop_per_byte") == 0) return fpb;
  return NULL;
}

/* The number of row r in col, derived ones included; "speedup" gives the
   time per step here (its baseline is divided by it later). */
static double value(const odb_csv *res, int r, const char *col) {
  if (strcmp(col, "time_per_component") == 0)
    return odb_csv_num(res, r, odb_csv_col(res, "time_per_step")) /
           odb_csv_num(res, r, odb_csv_col(res, "n"));
  if (strcmp(col, "flop_per_byte") == 0)
    return odb_csv_num(res, r, odb_csv_col(res, "gflops")) /
           odb_csv_num(res, r, odb_csv_col(res, "gbs"));
  if (strcmp(col, "speedup") == 0)
    return odb_csv_num(res, r, odb_csv_col(res, "time_per_step"));
  return odb_csv_num(res, r, odb_csv_col(res, col));
}

/* 1 when the texts are equal, or both numbers of equal value. */
static int same_value(const char *a, const char *b) {
  char *ea, *eb;
  double x, y;
  if (strcmp(a, b) == 0) return 1;
  if (!*a || !*b) return 0;
  x = strtod(a, &ea);
  y = strtod(b, &eb);
  return !*ea && !*eb && x == y;
}

/* 1 when row r is of the request's kind, finished ok and passes where. */
static int selected(const odb_csv *res, const request *q, int r) {
  int kind = odb_csv_col(res, "kind"), status = odb_csv_col(res, "status");
  const char *st = odb_csv_cell(res, r, status);
  if (kind >= 0 && strcmp(odb_csv_cell(res, r, kind), q->rows) != 0) return 0;
  if (*st && strcmp(st, "ok") != 0) return 0;
  for (int i = 0; i < q->nwhere; ++i)
    if (!same_value(odb_csv_cell(res, r, odb_csv_col(res, q->wkey[i])),
                    q->wval[i]))
      return 0;
  return 1;
}

/* Writes into why the first column the request needs that res lacks;
   returns 0 then. */
static int has_columns(const odb_csv *res, const request *q, char *why,
                       size_t cap) {
  const char *need[3 + MAX_GROUP + MAX_WHERE + 2];
  int n = 0;
  if (strcmp(q->kind, "roofline") == 0) {
    need[n++] = "gbs";
    need[n++] = "gflops";
  } else {
    need[n++] = q->x;
    need[n++] = q->y;
    if (strcmp(q->kind, "heatmap") == 0) need[n++] = q->z;
  }
  for (int i = 0; i < q->ngroup; ++i) need[n++] = q->group[i];
  for (int i = 0; i < q->nwhere; ++i) need[n++] = q->wkey[i];
  for (int i = 0; i < n; ++i) {
    const char *const *from = derived_from(need[i]);
    if (!need[i][0]) {
      snprintf(why, cap, "the request names no column for x, y or z");
      return 0;
    }
    for (int k = 0; from && from[k]; ++k)
      if (odb_csv_col(res, from[k]) < 0) {
        snprintf(why, cap, "results.csv has no column '%s' (for %s)",
                 from[k], need[i]);
        return 0;
      }
    if (!from && odb_csv_col(res, need[i]) < 0) {
      snprintf(why, cap, "results.csv has no column '%s'", need[i]);
      return 0;
    }
  }
  return 1;
}

/* }====== */

/* {====== lines and rooflines */

/* *p grown to cap doubles; 0 when out of memory (*p kept). */
static int grow(double **p, int cap) {
  double *g = realloc(*p, (size_t)cap * sizeof *g);
  if (!g) return 0;
  *p = g;
  return 1;
}

/* Appends a point (its error bar lo..hi); 0 when out of memory. */
static int add_point(series *s, double x, double y, double lo, double hi,
                     int row) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    int *nr;
    if (!grow(&s->x, cap) || !grow(&s->y, cap) || !grow(&s->lo, cap) ||
        !grow(&s->hi, cap))
      return 0;
    nr = realloc(s->row, (size_t)cap * sizeof *nr);
    if (!nr) return 0;
    s->row = nr;
    s->cap = cap;
  }
  s->x[s->n] = x;
  s->y[s->n] = y;
  s->lo[s->n] = lo;
  s->hi[s->n] = hi;
  s->row[s->n] = row;
  s->n++;
  return 1;
}

/* The series of row r (the values of the grouping columns joined by '/');
   NULL when MAX_SERIES are taken by others. */
static series *series_of(const odb_csv *res, chart *c, int r) {
  char title[128] = "";
  for (int i = 0; i < c->q.ngroup; ++i) {
    size_t len = strlen(title);
    snprintf(title + len, sizeof title - len, "%s%s", i ? "/" : "",
             odb_csv_cell(res, r, odb_csv_col(res, c->q.group[i])));
  }
  if (c->q.ngroup == 0)
    snprintf(title, sizeof title, "%s", c->q.y[0] ? c->q.y : "solves");
  for (int i = 0; i < c->ns; ++i)
    if (strcmp(c->s[i].title, title) == 0) return &c->s[i];
  if (c->ns == MAX_SERIES) return NULL;
  snprintf(c->s[c->ns].title, sizeof c->s[0].title, "%s", title);
  return &c->s[c->ns++];
}

/* A point while its series is sorted. */
typedef struct point {
  double x, y, lo, hi;
  int row;
} point;

/* By x, then in the order of results.csv (x is finite). */
static int cmp_point(const void *pa, const void *pb) {
  const point *a = pa, *b = pb;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

/* Orders a series by x; 0 when out of memory. */
static int sort_series(series *s) {
  point *p = malloc((size_t)(s->n + 1) * sizeof *p);
  if (!p) return 0;
  for (int i = 0; i < s->n; ++i) {
    p[i].x = s->x[i];
    p[i].y = s->y[i];
    p[i].lo = s->lo[i];
    p[i].hi = s->hi[i];
    p[i].row = s->row[i];
  }
  qsort(p, (size_t)s->n, sizeof *p, cmp_point);
  for (int i = 0; i < s->n; ++i) {
    s->x[i] = p[i].x;
    s->y[i] = p[i].y;
    s->lo[i] = p[i].lo;
    s->hi[i] = p[i].hi;
    s->row[i] = p[i].row;
  }
  free(p);
  return 1;
}

/* A sequential run's time per step under its problem, method and n. */
typedef struct seq_time {
  const char *key[3];
  double t;
} seq_time;

/* The columns that make two runs comparable for a speed-up. */
static const char *const same_run[3] = { "problem", "method", "n" };

/* By the three key cells, then the faster first. */
static int cmp_seq(const void *pa, const void *pb) {
  const seq_time *a = pa, *b = pb;
  for (int k = 0; k < 3; ++k) {
    int c = strcmp(a->key[k], b->key[k]);
    if (c) return c;
  }
  return (a->t > b->t) - (a->t < b->t);
}

/* Only the key cells: a lookup matches every time of the key. */
static int cmp_seq_key(const void *pa, const void *pb) {
  const seq_time *a = pa, *b = pb;
  for (int k = 0; k < 3; ++k) {
    int c = strcmp(a->key[k], b->key[k]);
    if (c) return c;
  }
  return 0;
}

/*
** The solve rows without a threads value (the sequential runs) with a
** time per step, sorted by problem, method, n and time: the fastest of a
** key is the first of its equals. *n is their number; NULL when out of
** memory.
*/
static seq_time *sequential_runs(const odb_csv *res, int *n) {
  int kind = odb_csv_col(res, "kind"), status = odb_csv_col(res, "status");
  int th = odb_csv_col(res, "threads"), tps = odb_csv_col(res, "time_per_step");
  int cols[3];
  seq_time *v = malloc((size_t)(res->nrows + 1) * sizeof *v);
  *n = 0;
  if (!v) return NULL;
  for (int k = 0; k < 3; ++k) cols[k] = odb_csv_col(res, same_run[k]);
  for (int o = 0; o < res->nrows; ++o) {
    double t = odb_csv_num(res, o, tps);
    if (kind >= 0 && strcmp(odb_csv_cell(res, o, kind), "solve") != 0) continue;
    if (*odb_csv_cell(res, o, status) &&
        strcmp(odb_csv_cell(res, o, status), "ok") != 0)
      continue;
    if (*odb_csv_cell(res, o, th) || !(t > 0)) continue;
    for (int k = 0; k < 3; ++k) v[*n].key[k] = odb_csv_cell(res, o, cols[k]);
    v[(*n)++].t = t;
  }
  qsort(v, (size_t)*n, sizeof *v, cmp_seq);
  return v;
}

/* The fastest time per step among the sequential runs (sorted by
   sequential_runs) of row r's problem, method and n; 0 when none. */
static double sequential_best(const odb_csv *res, const seq_time *v, int n,
                              int r) {
  seq_time want;
  int lo = 0, hi = n;
  for (int k = 0; k < 3; ++k)
    want.key[k] = odb_csv_cell(res, r, odb_csv_col(res, same_run[k]));
  while (lo < hi) {             /* the first element not below want */
    int mid = lo + (hi - lo) / 2;
    if (cmp_seq_key(&v[mid], &want) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && cmp_seq_key(&v[lo], &want) == 0 ? v[lo].t : 0;
}

/* Turns the times per step of a speedup chart into speed-ups: over the
   sequential best of the same problem, method and n, else over the
   series' own first point (its smallest x). 0 when out of memory. */
static int to_speedup(const odb_csv *res, chart *c) {
  int nseq;
  seq_time *seq = sequential_runs(res, &nseq);
  if (!seq) return 0;
  for (int i = 0; i < c->ns; ++i) {
    series *s = &c->s[i];
    double first = s->n > 0 ? s->y[0] : 0;
    for (int k = 0; k < s->n; ++k) {
      double base = sequential_best(res, seq, nseq, s->row[k]);
      if (!(base > 0)) base = first;
      s->y[k] = base / s->y[k];
    }
  }
  free(seq);
  return 1;
}

/* The points of a lines or roofline chart; 0 when out of memory. */
static int gather_points(const odb_csv *res, chart *c, FILE *warn) {
  int roof = strcmp(c->q.kind, "roofline") == 0, full = 0;
  int bars = !roof && odb_plot_is_time(c->q.y);
  double hi = 0;
  for (int r = 0; r < res->nrows; ++r) {
    double x, y, blo, bhi;
    series *s;
    if (!selected(res, &c->q, r)) continue;
    x = value(res, r, roof ? "flop_per_byte" : c->q.x);
    y = value(res, r, roof ? "gflops" : c->q.y);
    if (!isfinite(x) || !isfinite(y)) continue;
    if ((roof || c->q.logx) && !(x > 0)) continue;
    if ((roof || c->q.logy || strcmp(c->q.y, "speedup") == 0) && !(y > 0))
      continue;
    s = series_of(res, c, r);
    if (!s) {
      full = 1;
      continue;
    }
    c->bars |= bars && odb_csv_quartiles(res, r, y, &blo, &bhi);
    if (!bars) blo = bhi = y;
    if (!add_point(s, x, y, blo, bhi, r)) return 0;
  }
  if (full)
    odb_plot_warn(warn, "plot '%s': more than %d groups; the rest are left "
                  "out", c->q.name, MAX_SERIES);
  for (int i = 0; i < c->ns; ++i)
    if (!sort_series(&c->s[i])) return 0;
  if (!roof && strcmp(c->q.y, "speedup") == 0 && !to_speedup(res, c))
    return 0;
  c->scale = 1;
  c->unit = "";
  if (!roof && odb_plot_is_time(c->q.y)) {
    for (int i = 0; i < c->ns; ++i)
      for (int k = 0; k < c->s[i].n; ++k) hi = fmax(hi, c->s[i].y[k]);
    odb_plot_time_unit(hi, &c->scale, &c->unit);
  }
  return 1;
}

/* }====== */

/* {====== heatmaps */

/* Index of value v among the n values of an axis (added when new); -1
   when the axis is full. */
static int category(char (*vals)[CAT_LEN], int *n, const char *v) {
  char t[CAT_LEN];
  snprintf(t, sizeof t, "%s", v);
  odb_plot_token(t);                       /* one word in the data file */
  for (int i = 0; i < *n; ++i)
    if (strcmp(vals[i], t) == 0) return i;
  if (*n == MAX_CAT) return -1;
  snprintf(vals[*n], CAT_LEN, "%s", t);
  return (*n)++;
}

/* Sorts the values of an axis numerically when all are numbers (the
   first-seen order stays otherwise); perm[old index] = new index. */
static void order_axis(char (*vals)[CAT_LEN], int n, int *perm) {
  double num[MAX_CAT];
  int idx[MAX_CAT], numeric = 1;
  char tmp[MAX_CAT][CAT_LEN];
  for (int i = 0; i < n; ++i) {
    char *end;
    idx[i] = i;
    num[i] = strtod(vals[i], &end);
    if (!vals[i][0] || *end) numeric = 0;
  }
  for (int i = 1; numeric && i < n; ++i) {
    int v = idx[i], j = i;
    while (j > 0 && num[idx[j - 1]] > num[v]) {
      idx[j] = idx[j - 1];
      --j;
    }
    idx[j] = v;
  }
  memcpy(tmp, vals, (size_t)n * CAT_LEN);
  for (int i = 0; i < n; ++i) {
    memcpy(vals[i], tmp[idx[i]], CAT_LEN);
    perm[idx[i]] = i;
  }
}

/* The cells of a heatmap: the smallest z of the rows per (x, y) value. */
static int gather_cells(const odb_csv *res, chart *c) {
  int *xi = malloc((size_t)(res->nrows + 1) * sizeof *xi);
  int *yi = malloc((size_t)(res->nrows + 1) * sizeof *yi);
  int xcol = odb_csv_col(res, c->q.x), ycol = odb_csv_col(res, c->q.y);
  int px[MAX_CAT], py[MAX_CAT];
  double hi = 0;
  if (!xi || !yi) {
    free(xi);
    free(yi);
    return 0;
  }
  for (int r = 0; r < res->nrows; ++r) {
    xi[r] = yi[r] = -1;
    if (!selected(res, &c->q, r) || !isfinite(value(res, r, c->q.z))) continue;
    if (!*odb_csv_cell(res, r, xcol) || !*odb_csv_cell(res, r, ycol)) continue;
    xi[r] = category(c->xv, &c->nx, odb_csv_cell(res, r, xcol));
    yi[r] = category(c->yv, &c->ny, odb_csv_cell(res, r, ycol));
  }
  order_axis(c->xv, c->nx, px);
  order_axis(c->yv, c->ny, py);
  c->cells = malloc((size_t)(c->nx * c->ny + 1) * sizeof *c->cells);
  if (!c->cells) {
    free(xi);
    free(yi);
    return 0;
  }
  for (int k = 0; k < c->nx * c->ny; ++k) c->cells[k] = NAN;
  for (int r = 0; r < res->nrows; ++r) {
    double z, *cell;
    if (xi[r] < 0 || yi[r] < 0) continue;
    z = value(res, r, c->q.z);
    cell = &c->cells[py[yi[r]] * c->nx + px[xi[r]]];
    if (isnan(*cell) || z < *cell) *cell = z;
    hi = fmax(hi, z);
  }
  free(xi);
  free(yi);
  c->scale = 1;
  c->unit = "";
  if (odb_plot_is_time(c->q.z)) odb_plot_time_unit(hi, &c->scale, &c->unit);
  return 1;
}

/* }====== */

/* {====== loading */

/* Frees what a chart holds. */
static void chart_free(chart *c) {
  for (int i = 0; i < c->ns; ++i) {
    free(c->s[i].x);
    free(c->s[i].y);
    free(c->s[i].lo);
    free(c->s[i].hi);
    free(c->s[i].row);
  }
  free(c->cells);
}

/* 1 when the chart shows at least one point or cell. */
static int has_data(const chart *c) {
  for (int i = 0; i < c->ns; ++i)
    if (c->s[i].n > 0) return 1;
  for (int k = 0; c->cells && k < c->nx * c->ny; ++k)
    if (!isnan(c->cells[k])) return 1;
  return 0;
}

/* 1 when name is what ob.plot allows (it names files and goes into the
   script): 1 to 40 letters, digits, '_' and '-'. */
static int plot_name(const char *name) {
  size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_-");
  return n >= 1 && n <= 40 && name[n] == '\0';
}

/* Gathers the data of request q into c; 0 with why set when it cannot be
   drawn, -1 when out of memory. */
static int load_chart(const odb_csv *res, const request *q, chart *c,
                      FILE *warn, char *why, size_t cap) {
  int heat = strcmp(q->kind, "heatmap") == 0;
  memset(c, 0, sizeof *c);
  c->q = *q;
  if (!plot_name(q->name)) {
    snprintf(why, cap, "not a plot name (1 to 40 letters, digits, '_' and "
             "'-')");
    return 0;
  }
  if (!heat && strcmp(q->kind, "lines") != 0 &&
      strcmp(q->kind, "roofline") != 0) {
    snprintf(why, cap, "unknown kind '%s' (allowed: lines, roofline, "
             "heatmap)", q->kind);
    return 0;
  }
  if (!has_columns(res, q, why, cap)) return 0;
  if (!(heat ? gather_cells(res, c) : gather_points(res, c, warn))) return -1;
  if (!has_data(c)) {
    snprintf(why, cap, "no finished %s rows with values for it", q->rows);
    return 0;
  }
  return 1;
}

odb_status odb_plot_named_load(const odb_csv *res, FILE *warn,
                               odb_plot_named **out) {
  request *reqs = calloc(MAX_REQ, sizeof *reqs);
  odb_plot_named *n = calloc(1, sizeof *n);
  int nreq;
  *out = NULL;
  if (!reqs || !n || !(n->c = calloc(MAX_REQ, sizeof *n->c))) {
    free(reqs);
    odb_plot_named_free(n);
    return ODB_FAIL(ODB_ERR_NOMEM, "plot: out of memory");
  }
  n->res = res;
  nreq = parse_requests(res, reqs);
  for (int i = 0; i < nreq; ++i) {
    char why[256];
    int got = load_chart(res, &reqs[i], &n->c[n->n], warn, why, sizeof why);
    if (got < 0) {
      chart_free(&n->c[n->n]);
      free(reqs);
      odb_plot_named_free(n);
      return ODB_FAIL(ODB_ERR_NOMEM, "plot: out of memory");
    }
    if (got > 0) {
      n->n++;
      continue;
    }
    chart_free(&n->c[n->n]);
    odb_plot_warn(warn, "plot '%s' of the scenario is left out: %s",
                  reqs[i].name, why);
  }
  free(reqs);
  *out = n;
  return ODB_OK;
}

void odb_plot_named_free(odb_plot_named *n) {
  if (!n) return;
  for (int i = 0; n->c && i < n->n; ++i) chart_free(&n->c[i]);
  free(n->c);
  free(n);
}

int odb_plot_named_count(const odb_plot_named *n) { return n ? n->n : 0; }

const char *odb_plot_named_name(const odb_plot_named *n, int i) {
  return n && i >= 0 && i < n->n ? n->c[i].q.name : NULL;
}

int odb_plot_named_has(const odb_plot_named *n, const char *name) {
  for (int i = 0; n && i < n->n; ++i)
    if (strcmp(n->c[i].q.name, name) == 0) return 1;
  return 0;
}

/* }====== */

/* {====== files */

/* named_<name>.dat of a lines or roofline chart: a block per series,
   with the error bar's ends (y scaled like y) where the chart has them. */
static int write_points(const chart *c, FILE *f) {
  fprintf(f, "# %s: x y%s, one block per series\n", c->q.name,
          c->bars ? " q1 q3" : "");
  for (int i = 0; i < c->ns; ++i) {
    fputs("# ", f);
    odb_plot_put_token(f, c->s[i].title);
    fputc('\n', f);
    for (int k = 0; k < c->s[i].n; ++k) {
      fprintf(f, "%.17g %.17g", c->s[i].x[k], c->s[i].y[k] * c->scale);
      if (c->bars)
        fprintf(f, " %.17g %.17g", c->s[i].lo[k] * c->scale,
                c->s[i].hi[k] * c->scale);
      fputc('\n', f);
    }
    fputs("\n\n", f);
  }
  return 1;
}

/* named_<name>.dat of a heatmap: a matrix with row and column headers. */
static int write_matrix(const chart *c, FILE *f) {
  odb_plot_put_token(f, c->q.y);
  for (int k = 0; k < c->nx; ++k) fprintf(f, " %s", c->xv[k]);
  fputc('\n', f);
  for (int r = 0; r < c->ny; ++r) {
    fprintf(f, "%s", c->yv[r]);
    for (int k = 0; k < c->nx; ++k) {
      double v = c->cells[r * c->nx + k];
      if (isnan(v)) fputs(" NaN", f);
      else fprintf(f, " %.6g", v * c->scale);
    }
    fputc('\n', f);
  }
  return 1;
}

/* The title: the request's, else "<scenario>: <what>". */
static void put_title(FILE *f, const chart *c, const char *scenario,
                      const char *what) {
  char buf[512];
  if (c->q.title[0]) snprintf(buf, sizeof buf, "%s", c->q.title);
  else snprintf(buf, sizeof buf, "%s%s%s", scenario ? scenario : "",
                scenario && *scenario ? ": " : "", what);
  fputs("  set title ", f);
  odb_plot_put_quoted(f, buf);
  fputc('\n', f);
}

/* "  set <axis>label '<label of col>'" (unit: see odb_plot_axis_label). */
static void put_label(FILE *f, const char *axis, const char *col,
                      const char *unit) {
  char text[160];
  odb_plot_axis_label(text, sizeof text, col, unit);
  fprintf(f, "  set %slabel ", axis);
  odb_plot_put_quoted(f, text);
  /* clear of the colour box's tick labels, which gnuplot can overlap */
  fputs(strcmp(axis, "cb") == 0 ? " offset 1.5,0\n" : "\n", f);
}

/* The smallest and largest x (or y, as written: scaled) of c's points
   (INFINITY, -INFINITY: none). */
static void range(const chart *c, int want_y, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int i = 0; i < c->ns; ++i)
    for (int k = 0; k < c->s[i].n; ++k) {
      double v = want_y ? c->s[i].y[k] * c->scale : c->s[i].x[k];
      *lo = fmin(*lo, v);
      *hi = fmax(*hi, v);
    }
}

/* 1 when a lines chart of c draws a reference line (script_lines). */
static int has_reference(const chart *c, double floor_gbs) {
  return (strcmp(c->q.y, "gbs") == 0 && floor_gbs > 0) ||
         strcmp(c->q.y, "floor_pct") == 0 || strcmp(c->q.y, "speedup") == 0;
}

/* "  plot" with an item per series of dat, each in its own colour and
   marker (a note in the key past 16 series). */
static void plot_series(FILE *f, const chart *c, const char *dat,
                        const char *using, const char *with) {
  odb_plot_style_note(f, c->ns);
  fputs("  plot ", f);
  for (int i = 0; i < c->ns; ++i) {
    fputs(i ? ", \\\n       " : "", f);
    odb_plot_put_quoted(f, dat);
    fprintf(f, " index %d using %s with %s", i, using, with);
    odb_plot_series_style(f, i);
    fputs(" title ", f);
    odb_plot_put_quoted(f, c->s[i].title);
  }
}

/* The chart of a lines request, with a reference line where one fits and
   error bars from q1 to q3 where the rows have them. */
static void script_lines(FILE *f, const chart *c, const char *dat,
                         double floor_gbs, const char *scenario) {
  char what[300];
  double lo, hi;
  int nonneg = 1;
  snprintf(what, sizeof what, "%s vs %s", odb_plot_column_name(c->q.y),
           odb_plot_column_name(c->q.x));
  put_title(f, c, scenario, what);
  put_label(f, "x", c->q.x, NULL);
  put_label(f, "y", c->q.y, c->unit);
  odb_plot_xy_frame(f);
  if (c->q.logx)
    fprintf(f, "  set logscale x%s\n",
            strcmp(c->q.x, "threads") == 0 ? " 2" : "");
  if (c->q.logy) fputs("  set logscale y\n", f);
  range(c, 0, &lo, &hi);
  if (has_reference(c, floor_gbs))   /* the line spans the chart */
    odb_plot_x_span(f, lo, hi, !c->q.logx ? 0
                    : strcmp(c->q.x, "threads") == 0 ? 2 : 10);
  if (strcmp(c->q.x, "threads") != 0 || !c->q.logx)
    odb_plot_axis_format(f, "x", c->q.logx, lo, hi);
  range(c, 1, &lo, &hi);
  odb_plot_axis_format(f, "y", c->q.logy, lo, hi);
  nonneg = !(lo < 0);
  if (!c->q.logy && nonneg) fputs("  set yrange [0:*]\n", f);
  if (c->bars) plot_series(f, c, dat, "1:2:3:4", "yerrorlines");
  else plot_series(f, c, dat, "1:2", "linespoints");
  if (strcmp(c->q.y, "gbs") == 0 && floor_gbs > 0)
    fprintf(f, ", \\\n       %.6g with lines dt 2 lc rgb 'black' title "
            "'read bandwidth, 1 thread (%.1f GB/s)'", floor_gbs, floor_gbs);
  if (strcmp(c->q.y, "floor_pct") == 0)
    fputs(", \\\n       100 with lines dt 2 lc rgb 'black' title "
          "'the memory floor'", f);
  if (strcmp(c->q.y, "speedup") == 0)
    fputs(", \\\n       1 with lines dt 2 lc rgb 'black' title "
          "'no speed-up'", f);
  fputc('\n', f);
}

/* The chart of a roofline request: points under the memory and compute
   roofs of their rows (odb_plot_roofs). */
static void script_roofline(FILE *f, const chart *c, const odb_csv *res,
                            const char *dat, double floor_gbs,
                            double peak_gflops, const char *scenario) {
  odb_plot_roof roofs[ODB_PLOT_ROOFS];
  double lo, hi;   /* flop/byte, all positive (gather_points) */
  int nrows = 0, nroofs, *rows;
  for (int i = 0; i < c->ns; ++i) nrows += c->s[i].n;
  rows = malloc((size_t)(nrows + 1) * sizeof *rows);
  nrows = 0;
  for (int i = 0; rows && i < c->ns; ++i)
    for (int k = 0; k < c->s[i].n; ++k) rows[nrows++] = c->s[i].row[k];
  nroofs = odb_plot_roofs(res, rows, nrows, floor_gbs, peak_gflops, roofs);
  free(rows);
  range(c, 0, &lo, &hi);
  put_title(f, c, scenario, "roofline");
  odb_plot_roofs_xrange(f, lo, hi, roofs, nroofs);
  odb_plot_xy_frame(f);
  fputs("  set logscale xy\n", f);
  odb_plot_axis_format(f, "x", 1, lo, hi);
  range(c, 1, &lo, &hi);
  odb_plot_roofs_yformat(f, lo, hi, roofs, nroofs);
  put_label(f, "x", "flop_per_byte", NULL);
  put_label(f, "y", "gflops", NULL);
  plot_series(f, c, dat, "1:2", "points");
  odb_plot_roofs_put(f, roofs, nroofs);
  fputc('\n', f);
}

/* The chart of a heatmap request: cells coloured and labelled by z. */
static void script_heatmap(FILE *f, const chart *c, const char *dat,
                           const char *scenario) {
  char what[400];
  int positive = 1;
  double lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < c->nx * c->ny; ++k)
    if (!isnan(c->cells[k])) {
      positive &= c->cells[k] > 0;
      lo = fmin(lo, c->cells[k] * c->scale);
      hi = fmax(hi, c->cells[k] * c->scale);
    }
  snprintf(what, sizeof what, "%s by %s and %s", odb_plot_column_name(c->q.z),
           odb_plot_column_name(c->q.x), odb_plot_column_name(c->q.y));
  put_title(f, c, scenario, what);
  put_label(f, "x", c->q.x, NULL);
  put_label(f, "y", c->q.y, NULL);
  put_label(f, "cb", c->q.z, c->unit);
  if (positive) {
    fputs("  set logscale cb\n", f);
    odb_plot_log_tics(f, "cb", lo, hi);
  }
  odb_plot_axis_format(f, "cb", positive, lo, hi);
  fputs("  set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\n"
        "  unset key\n  unset grid\n  plot ", f);
  odb_plot_put_quoted(f, dat);
  fputs(" matrix rowheaders columnheaders using 1:2:3 with image, \\\n"
        "       '' matrix rowheaders columnheaders using 1:2:"
        "($3 == $3 ? sprintf('%.3g', $3) : '') with labels\n", f);
}

int odb_plot_named_write(const odb_plot_named *n, const char *dir, FILE *f,
                         double floor_gbs, double peak_gflops,
                         const char *scenario) {
  for (int i = 0; n && i < n->n; ++i) {
    const chart *c = &n->c[i];
    char dat[96], path[PATHBUF];
    int heat = strcmp(c->q.kind, "heatmap") == 0;
    FILE *d;
    snprintf(dat, sizeof dat, "named_%s.dat", c->q.name);
    snprintf(path, sizeof path, "%s/%s", dir, dat);
    if (!(d = fopen(path, "w"))) return 0;
    if (heat) write_matrix(c, d);
    else write_points(c, d);
    if (fclose(d) != 0) return 0;
    fprintf(f, "# the scenario's plot '%s' (ob.plot)\n", c->q.name);
    odb_plot_chart_begin(f, c->q.name);
    if (heat) script_heatmap(f, c, dat, scenario);
    else if (strcmp(c->q.kind, "roofline") == 0)
      script_roofline(f, c, n->res, dat, floor_gbs, peak_gflops, scenario);
    else script_lines(f, c, dat, floor_gbs, scenario);
    odb_plot_chart_end(f);
  }
  return 1;
}

/* }====== */
