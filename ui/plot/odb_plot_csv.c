/* odb_plot_csv.c - reading a run's results.csv for the plots. */
#include "odb_plot_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frees what c holds and zeroes it. */
void odb_csv_free(odb_csv *c) {
  for (int i = 0; i < (c->nrows + 1) * c->ncols && c->cells; ++i)
    free(c->cells[i]);
  free(c->cells);
  for (int i = 0; i < c->nctx; ++i) free(c->ctx[i]);
  free(c->ctx);
  memset(c, 0, sizeof *c);
}

/* Reads a whole file; NULL (errno set) on failure. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0, got;
  if (!f) return NULL;
  do {
    if (len + 4096 + 1 > cap) {
      char *g;
      cap = cap ? 2 * cap : 65536;
      g = realloc(buf, cap);
      if (!g) {
        free(buf);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      buf = g;
    }
    got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
  } while (got > 0);
  fclose(f);
  buf[len] = '\0';
  return buf;
}

/* The length of the field at s: up to a ',' or the end of the line
   outside quotes (a quoted part may hold both), or the end of the text. */
static size_t field_span(const char *s) {
  const char *e = s;
  if (*e == '"') {
    for (++e; *e; ++e)
      if (*e == '"') {
        if (e[1] != '"') { ++e; break; }
        ++e;
      }
  }
  return (size_t)(e - s) + strcspn(e, ",\n\r");
}

/* One field at *p (quoted with doubled quotes, or plain up to ',' or the
   end of the line); *p is left on the separator. Allocates only the
   field's own bytes (the rest of the file may be large). */
static char *read_field(const char **p) {
  const char *s = *p, *end = s + field_span(s);
  char *out = malloc((size_t)(end - s) + 1);
  size_t n = 0;
  if (!out) return NULL;
  if (*s == '"') {
    for (++s; s < end; ++s) {
      if (*s == '"' && s[1] == '"') out[n++] = *++s;
      else if (*s == '"') { ++s; break; }
      else out[n++] = *s;
    }
  }
  while (s < end) out[n++] = *s++;
  out[n] = '\0';
  *p = end;
  return out;
}

/* Appends one record (a line); the first one fixes the columns. */
static int add_record(odb_csv *c, const char **p) {
  int first = c->ncols == 0, k = 0;
  char *fields[1024];
  int nf = 0;
  for (;;) {
    char *f = read_field(p);
    if (!f) return 0;
    if (nf < 1024) fields[nf++] = f;
    else free(f);
    if (**p == ',') { ++*p; continue; }
    break;
  }
  while (**p == '\r' || **p == '\n') ++*p;
  if (first) c->ncols = nf;
  if ((c->nrows + 2) * c->ncols > c->cap) {
    int nc = c->cap ? 2 * c->cap : 64 * c->ncols;
    char **g;
    while (nc < (c->nrows + 2) * c->ncols) nc *= 2;
    g = realloc(c->cells, (size_t)nc * sizeof *g);
    if (!g) return 0;
    c->cells = g;
    c->cap = nc;
  }
  for (k = 0; k < c->ncols; ++k)
    c->cells[(first ? 0 : c->nrows + 1) * c->ncols + k] =
      k < nf ? fields[k] : strdup("");
  for (; k < nf; ++k) free(fields[k]);
  if (!first) c->nrows++;
  return 1;
}

/* Parses results.csv; 0 (errno set) when it cannot be read. */
int odb_csv_read(const char *path, odb_csv *c) {
  char *text = slurp(path);
  const char *p = text;
  memset(c, 0, sizeof *c);
  if (!text) return 0;
  while (*p) {
    if (c->ncols == 0 && p[0] == '#') {
      const char *e = strchr(p, '\n');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      char **g = realloc(c->ctx, (size_t)(c->nctx + 1) * sizeof *g);
      if (g) {
        c->ctx = g;
        c->ctx[c->nctx] = strndup(p + (p[1] == ' ' ? 2 : 1),
                                  len - (p[1] == ' ' ? 2 : 1));
        if (c->ctx[c->nctx]) c->nctx++;
      }
      p += len;
      while (*p == '\n' || *p == '\r') ++p;
      continue;
    }
    if (*p == '\n' || *p == '\r') { ++p; continue; }
    if (!add_record(c, &p)) break;
  }
  free(text);
  return 1;
}

/* Column index of name, or -1. */
int odb_csv_col(const odb_csv *c, const char *name) {
  for (int k = 0; k < c->ncols; ++k)
    if (strcmp(c->cells[k], name) == 0) return k;
  return -1;
}

/* The cell of data row r (0-based) in column k; "" for k < 0. */
const char *odb_csv_cell(const odb_csv *c, int r, int k) {
  return k < 0 ? "" : c->cells[(r + 1) * c->ncols + k];
}

/* The cell as a number; NAN when empty or not a number. */
double odb_csv_num(const odb_csv *c, int r, int k) {
  const char *s = odb_csv_cell(c, r, k);
  char *end;
  double v;
  if (!*s) return NAN;
  v = strtod(s, &end);
  return *end ? NAN : v;
}

/* The value of a context key ("bandwidth.read_1t"), or NULL. */
const char *odb_csv_ctx(const odb_csv *c, const char *key) {
  size_t n = strlen(key);
  for (int i = 0; i < c->nctx; ++i)
    if (strncmp(c->ctx[i], key, n) == 0 && c->ctx[i][n] == '=')
      return c->ctx[i] + n + 1;
  return NULL;
}

/* See the header (odb_plot_int.h). */
int odb_csv_quartiles(const odb_csv *c, int r, double y, double *lo,
                      double *hi) {
  int ref = odb_csv_col(c, "median");
  double q1 = odb_csv_num(c, r, odb_csv_col(c, "q1")),
         q3 = odb_csv_num(c, r, odb_csv_col(c, "q3")), m;
  if (ref < 0) ref = odb_csv_col(c, "seconds");
  m = odb_csv_num(c, r, ref);
  *lo = *hi = y;
  if (!(m > 0) || !(q1 > 0) || !(q3 >= q1) || !isfinite(q3) || !isfinite(m))
    return 0;
  *lo = y * (q1 / m);
  *hi = y * (q3 / m);
  return 1;
}
