/* odb_mtx.c - Matrix Market reader and writers (see odb_mtx.h).
**
** The file is read whole into memory (its size is checked against the
** machine's first) and parsed in rounds: each round takes the next
** threads x 4 MiB, cut at newlines into one part per thread of a temporary
** odb_team. Pass 1 counts each part's lines and entries, so that pass 2
** knows every line's number and every entry's index and parses the parts
** at once into their own slots. Between rounds the progress callback runs
** on the calling thread (never on a worker). The first error in file order
** wins: each part keeps its own, and the lowest line number is reported.
** CSR is then built in two counting sorts (by column, then stably by row),
** so rows come out with ascending columns and duplicates side by side.
*/
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "odb_mtx.h"
#include "odb_shown.h"
#include "odb_size.h"
#include "odb_team.h"
#include "odb_topo.h"
#include "odb_wfile.h"

#define ROUND_PER_THREAD ((size_t)4 << 20)
#define MAX_THREADS 16
#define ERR_LEN 200

enum { F_REAL, F_INT, F_PAT };
enum { S_GEN, S_SYM, S_SKEW };

typedef struct part {
  const char *lo, *hi;       /* lines [lo, hi) */
  long lines, data;          /* pass 1: lines and entry lines */
  long line0, e0;            /* pass 2: number of the first line, first entry */
  long err_line;             /* first error (0: none) and its text */
  char err[ERR_LEN];
} part;

typedef struct reader {
  char shown[ODB_SHOWN_NAME];
  int array, field, sym;
  long nrows, ncols, declared;
  int32_t *ri, *ci;          /* coordinate: 0-based row and column per entry */
  double *v;                 /* coordinate: value per entry */
  double *raw;               /* array: values in file order */
  int pass, nparts;
  part parts[MAX_THREADS];
} reader;

/* {====== one line */

static int blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The next token of [*p, end) (skipping blanks) into *t, *tl (0: none). */
static void token(const char **p, const char *end, const char **t, size_t *tl)
{
  const char *s = *p;
  while (s < end && blank(*s)) s++;
  *t = s;
  while (s < end && !blank(*s)) s++;
  *tl = (size_t)(s - *t);
  *p = s;
}

/* The token as shown in a message ("end of line" when there is none). */
static const char *tok_shown(const char *t, size_t tl, char *buf, size_t cap)
{
  if (!tl) return "end of line";
  return odb_shown_n(t, tl > 40 ? 40 : tl, buf, cap);
}

/* A token of digits as a count, capped at 2^62 (past any limit); 0 when
** it is not all digits. */
static int to_index(const char *t, size_t tl, long *out)
{
  long v = 0;
  if (!tl) return 0;
  for (size_t i = 0; i < tl; i++) {
    if (t[i] < '0' || t[i] > '9') return 0;
    if (v < (1L << 62) / 10) v = v * 10 + (t[i] - '0');
    else v = 1L << 62;
  }
  *out = v;
  return 1;
}

/* A token as a double: the whole token must be a number (strtod's syntax;
** integer fields: an optional sign and digits). 0 when it is not. */
static int to_value(const char *t, size_t tl, int field, double *out)
{
  char buf[512], *e;
  if (!tl || tl >= sizeof buf) return 0;
  if (field == F_INT) {
    size_t i = (t[0] == '-' || t[0] == '+');
    if (i == tl) return 0;
    for (; i < tl; i++) if (t[i] < '0' || t[i] > '9') return 0;
  }
  memcpy(buf, t, tl);
  buf[tl] = '\0';
  *out = strtod(buf, &e);
  return e == buf + tl;
}

/* Parses entry e of the body line [s, end) into the reader's arrays; 0,
** or -1 with the reason in err. */
static int parse_line(reader *r, const char *s, const char *end, long e, char *err)
{
  const char *t;
  size_t tl;
  char sh[48];
  long i = 0, j = 0;
  double x = 1.0;
  if (e >= r->declared) {
    snprintf(err, ERR_LEN, "more entries than the %ld the size line declares", r->declared);
    return -1;
  }
  if (!r->array) {
    token(&s, end, &t, &tl);
    if (!to_index(t, tl, &i)) {
      snprintf(err, ERR_LEN, "expected a row index (a positive integer), got '%s'", tok_shown(t, tl, sh, sizeof sh));
      return -1;
    }
    if (i < 1 || i > r->nrows) {
      snprintf(err, ERR_LEN, "row index %ld out of range 1..%ld", i, r->nrows);
      return -1;
    }
    token(&s, end, &t, &tl);
    if (!to_index(t, tl, &j)) {
      snprintf(err, ERR_LEN, "expected a column index (a positive integer), got '%s'", tok_shown(t, tl, sh, sizeof sh));
      return -1;
    }
    if (j < 1 || j > r->ncols) {
      snprintf(err, ERR_LEN, "column index %ld out of range 1..%ld", j, r->ncols);
      return -1;
    }
    if ((r->sym == S_SYM && i < j) || (r->sym == S_SKEW && i <= j)) {
      snprintf(err, ERR_LEN, "entry (%ld, %ld) is not below the diagonal: a %s file holds the lower triangle only",
               i, j, r->sym == S_SYM ? "symmetric" : "skew-symmetric (strictly lower)");
      return -1;
    }
  }
  if (r->field != F_PAT) {
    token(&s, end, &t, &tl);
    if (!to_value(t, tl, r->field, &x)) {
      snprintf(err, ERR_LEN, "expected %s value, got '%s'", r->field == F_INT ? "an integer" : "a real",
               tok_shown(t, tl, sh, sizeof sh));
      return -1;
    }
    if (!isfinite(x)) {
      snprintf(err, ERR_LEN, "value '%s' is not finite (a matrix holds finite numbers only)",
               tok_shown(t, tl, sh, sizeof sh));
      return -1;
    }
  }
  token(&s, end, &t, &tl);
  if (tl) {
    snprintf(err, ERR_LEN, "expected the end of the line, got '%s'", tok_shown(t, tl, sh, sizeof sh));
    return -1;
  }
  if (r->array) r->raw[e] = x;
  else { r->ri[e] = (int32_t)(i - 1); r->ci[e] = (int32_t)(j - 1); r->v[e] = x; }
  return 0;
}

/* 1 when the line [s, end) holds an entry: not blank, not a % comment. */
static int data_line(const char *s, const char *end)
{
  while (s < end && blank(*s)) s++;
  return s < end && *s != '%';
}

/* }====== */

/* {====== the body in parts */

/* Pass 1 (count) or 2 (parse) over part q's lines. */
static void run_part(reader *r, int q)
{
  part *pt = &r->parts[q];
  const char *s = pt->lo;
  long line = pt->line0, e = pt->e0;
  if (r->pass == 1) pt->lines = pt->data = 0;
  while (s < pt->hi) {
    const char *nl = memchr(s, '\n', (size_t)(pt->hi - s));
    const char *end = nl ? nl : pt->hi;
    if (r->pass == 1) {
      pt->lines++;
      pt->data += data_line(s, end);
    } else if (data_line(s, end)) {
      if (parse_line(r, s, end, e, pt->err) < 0) { pt->err_line = line; return; }
      e++;
    }
    line++;
    s = nl ? nl + 1 : pt->hi;
  }
}

static void member(odb_team *team, int tid, void *arg)
{
  (void)team;
  run_part(arg, tid);
}

/* Runs the current pass on every part (on the team when there is one). */
static odb_status run_pass(reader *r, odb_team *team)
{
  if (team) return odb_team_run(team, member, r);
  for (int q = 0; q < r->nparts; q++) run_part(r, q);
  return ODB_OK;
}

/* Start of the line at or after p (p itself when it starts one). */
static const char *line_start(const char *lo, const char *p, const char *end)
{
  if (p <= lo || p[-1] == '\n') return p;
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  return nl ? nl + 1 : end;
}

/* Parses the body [s, end) whose first line is number line0; the entries
** found go to the reader's arrays. */
static odb_status parse_body(reader *r, const char *buf, const char *s, const char *end,
                             long line0, long size_line, const odb_mtx_opts *o)
{
  int p = o && o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  odb_team *team = NULL;
  odb_status st = ODB_OK;
  long line = line0, entries = 0;
  if (p > MAX_THREADS) p = MAX_THREADS;
  if (p < 1 || (size_t)(end - s) < ROUND_PER_THREAD) p = 1;
  if (p > 1 && odb_team_create(NULL, NULL, p, ODB_BARRIER_CENTRAL, &team) != ODB_OK) {
    odb_clear_error();         /* no threads to be had: one part a round */
    team = NULL;
    p = 1;
  }
  r->nparts = p;
  while (s < end) {
    size_t len = (size_t)(end - s);
    const char *hi = line_start(s, s + (len < p * ROUND_PER_THREAD ? len : p * ROUND_PER_THREAD), end);
    const char *lo = s;
    for (int q = 0; q < p; q++) {
      const char *b = line_start(s, s + (size_t)(hi - s) * (q + 1) / p, hi);
      r->parts[q].lo = lo;
      r->parts[q].hi = q == p - 1 ? hi : (b > lo ? b : lo);
      r->parts[q].err_line = 0;
      lo = r->parts[q].hi;
    }
    r->pass = 1;
    if ((st = run_pass(r, team)) != ODB_OK) goto done;
    for (int q = 0; q < p; q++) {
      r->parts[q].line0 = line; r->parts[q].e0 = entries;
      line += r->parts[q].lines; entries += r->parts[q].data;
    }
    r->pass = 2;
    if ((st = run_pass(r, team)) != ODB_OK) goto done;
    for (int q = 0; q < p; q++)
      if (r->parts[q].err_line) {     /* parts are in file order */
        st = ODB_FAIL(ODB_ERR_IO, "%s: line %ld: %s", r->shown, r->parts[q].err_line, r->parts[q].err);
        goto done;
      }
    s = hi;
    if (o && o->progress && o->progress(o->ud, (double)(s - buf), (double)(end - buf))) {
      st = ODB_FAIL(ODB_INTERRUPTED, "%s: reading stopped by the progress callback", r->shown);
      goto done;
    }
  }
  if (entries < r->declared)
    st = ODB_FAIL(ODB_ERR_IO, "%s: line %ld: the file ends after %ld of the %ld entries the size line (line %ld) declares",
                  r->shown, line > line0 ? line - 1 : line0, entries, r->declared, size_line);
done:
  if (team) odb_team_destroy(team);
  return st;
}

/* }====== */

/* {====== header, size line, arrays */

/* Case-insensitive match of token t with word w. */
static int word_is(const char *t, size_t tl, const char *w)
{
  return tl == strlen(w) && strncasecmp(t, w, tl) == 0;
}

#define BANNER_HELP "expected '%%%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric'"

/* Line 1 [s, end) into the reader's kind. */
static odb_status parse_banner(reader *r, const char *s, const char *end)
{
  const char *t; size_t tl; char sh[48];
  token(&s, end, &t, &tl);
  if (!word_is(t, tl, "%%MatrixMarket"))
    return ODB_FAIL(ODB_ERR_IO, "%s: line 1: " BANNER_HELP ", got '%s'", r->shown, tok_shown(t, tl, sh, sizeof sh));
  token(&s, end, &t, &tl);
  if (!word_is(t, tl, "matrix"))
    return ODB_FAIL(ODB_ERR_IO, "%s: line 1: object '%s' is not read (only 'matrix')", r->shown, tok_shown(t, tl, sh, sizeof sh));
  token(&s, end, &t, &tl);
  if (word_is(t, tl, "coordinate")) r->array = 0;
  else if (word_is(t, tl, "array")) r->array = 1;
  else return ODB_FAIL(ODB_ERR_IO, "%s: line 1: format '%s' is not 'coordinate' or 'array'", r->shown, tok_shown(t, tl, sh, sizeof sh));
  token(&s, end, &t, &tl);
  if (word_is(t, tl, "real")) r->field = F_REAL;
  else if (word_is(t, tl, "integer")) r->field = F_INT;
  else if (word_is(t, tl, "pattern") && !r->array) r->field = F_PAT;
  else if (word_is(t, tl, "complex"))
    return ODB_FAIL(ODB_ERR_IO, "%s: line 1: field 'complex' is not read: odebench's matrices are real (float64)", r->shown);
  else return ODB_FAIL(ODB_ERR_IO, "%s: line 1: field '%s' is not 'real', 'integer' or 'pattern' (pattern: coordinate only)",
                       r->shown, tok_shown(t, tl, sh, sizeof sh));
  token(&s, end, &t, &tl);
  if (word_is(t, tl, "general")) r->sym = S_GEN;
  else if (word_is(t, tl, "symmetric")) r->sym = S_SYM;
  else if (word_is(t, tl, "skew-symmetric")) r->sym = S_SKEW;
  else if (word_is(t, tl, "hermitian"))
    return ODB_FAIL(ODB_ERR_IO, "%s: line 1: symmetry 'hermitian' is not read: it needs complex values", r->shown);
  else return ODB_FAIL(ODB_ERR_IO, "%s: line 1: symmetry '%s' is not 'general', 'symmetric' or 'skew-symmetric'",
                       r->shown, tok_shown(t, tl, sh, sizeof sh));
  if (r->field == F_PAT && r->sym == S_SKEW)
    return ODB_FAIL(ODB_ERR_IO, "%s: line 1: a pattern matrix cannot be skew-symmetric", r->shown);
  token(&s, end, &t, &tl);
  if (tl) return ODB_FAIL(ODB_ERR_IO, "%s: line 1: expected the end of the line, got '%s'", r->shown, tok_shown(t, tl, sh, sizeof sh));
  return ODB_OK;
}

/* The size line [s, end) (line number ln), checked against the bytes
** left after it and the machine's memory. */
static odb_status parse_size(reader *r, const char *s, const char *end, long ln, size_t left, size_t fsize,
                             const odb_mtx_opts *o)
{
  const char *t; size_t tl; char sh[48];
  long v[3] = {0, 0, 0};
  int want = r->array ? 2 : 3;
  for (int k = 0; k < want; k++) {
    token(&s, end, &t, &tl);
    if (!to_index(t, tl, &v[k]))
      return ODB_FAIL(ODB_ERR_IO, "%s: line %ld: expected the size line '%s', got '%s' as its %s number", r->shown, ln,
                      r->array ? "rows columns" : "rows columns entries", tok_shown(t, tl, sh, sizeof sh),
                      k == 0 ? "first" : k == 1 ? "second" : "third");
  }
  token(&s, end, &t, &tl);
  if (tl) return ODB_FAIL(ODB_ERR_IO, "%s: line %ld: expected the end of the size line, got '%s'", r->shown, ln, tok_shown(t, tl, sh, sizeof sh));
  r->nrows = v[0]; r->ncols = v[1];
  if (v[0] > INT32_MAX || v[1] > INT32_MAX)
    return ODB_FAIL(ODB_ERR_IO, "%s: line %ld: %ld x %ld is larger than odebench's 32-bit indices hold (at most %d)",
                    r->shown, ln, v[0], v[1], INT32_MAX);
  if (r->sym != S_GEN && v[0] != v[1])
    return ODB_FAIL(ODB_ERR_IO, "%s: line %ld: a %s matrix must be square, got %ld x %ld", r->shown, ln,
                    r->sym == S_SYM ? "symmetric" : "skew-symmetric", v[0], v[1]);
  size_t cells = (size_t)v[0] * (size_t)v[1];  /* both < 2^31: fits */
  if (r->array) {
    size_t n = (size_t)v[0];
    r->declared = (long)(r->sym == S_GEN ? cells : r->sym == S_SYM ? n * (n + 1) / 2 : (n ? n * (n - 1) / 2 : 0));
  } else {
    r->declared = v[2];        /* duplicates may make it more than the cells */
  }
  /* Shortest entry lines: "1 1\n" (coordinate), "0\n" (array); the last
     line may lack its newline. A file that cannot hold what it declares
     is refused here, before arrays are allocated for it; a file that is
     only short of a few entries gets the parse's "ends after" instead. */
  size_t minb = r->array ? 2 : 4;
  if (r->declared > 0 && (double)r->declared * minb - 1 > (double)left)
    return ODB_FAIL(ODB_ERR_IO, "%s: line %ld: the size line declares %ld entries, more than the %zu bytes after it "
                    "can hold (each takes at least %zu)", r->shown, ln, r->declared, left, minb);
  double e = (double)r->declared, bytes;
  if (r->array) bytes = 8.0 * cells + (r->sym != S_GEN ? 8.0 * e : 0.0);
  else bytes = 16.0 * e + 24.0 * (r->sym != S_GEN ? 2 * e : e) + 8.0 * (v[0] + v[1] + 2);
  char what[ODB_SHOWN_NAME + 64];
  snprintf(what, sizeof what, "%s: a %ld x %ld matrix of %ld entries", r->shown, v[0], v[1], r->declared);
  ODB_TRY(odb_topo_check_memory(bytes + (double)fsize, what));
  if (o && o->max_bytes > 0 && bytes > o->max_bytes)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s would need %.3g bytes, more than max_bytes (%.3g)", what, bytes, o->max_bytes);
  if (r->array) {
    size_t nb;
    size_t nvals = r->sym == S_GEN ? cells : (size_t)r->declared;
    if (odb_size_mul(&nb, nvals ? nvals : 1, sizeof(double)) || !(r->raw = malloc(nb)))
      return ODB_FAIL(ODB_ERR_NOMEM, "%s", what);
  } else {
    size_t n = r->declared ? (size_t)r->declared : 1;
    r->ri = malloc(n * sizeof *r->ri); r->ci = malloc(n * sizeof *r->ci); r->v = malloc(n * sizeof *r->v);
    if (!r->ri || !r->ci || !r->v) return ODB_FAIL(ODB_ERR_NOMEM, "%s", what);
  }
  return ODB_OK;
}

/* Coordinate entries -> m's CSR (mirrored, sorted, duplicates summed). */
static odb_status build_csr(reader *r, odb_mtx *m)
{
  long nr = r->nrows, nc = r->ncols, ne = r->declared, E = ne;
  int mirror = r->sym != S_GEN;
  double sign = r->sym == S_SKEW ? -1.0 : 1.0;
  odb_status st = ODB_OK;
  int64_t *cnt = calloc((size_t)nc + 1, sizeof *cnt), *next = NULL;
  int32_t *crow = NULL;
  double *cv = NULL;
  if (mirror) for (long e = 0; e < ne; e++) E += r->ri[e] != r->ci[e];
  if (!cnt) goto nomem;
  for (long e = 0; e < ne; e++) {
    cnt[r->ci[e] + 1]++;
    if (mirror && r->ri[e] != r->ci[e]) cnt[r->ri[e] + 1]++;
  }
  for (long c = 0; c < nc; c++) cnt[c + 1] += cnt[c];
  crow = malloc((size_t)(E ? E : 1) * sizeof *crow);
  cv = malloc((size_t)(E ? E : 1) * sizeof *cv);
  if (!crow || !cv) goto nomem;
  for (long e = 0; e < ne; e++) {          /* by column, stable */
    int64_t p = cnt[r->ci[e]]++;
    crow[p] = r->ri[e]; cv[p] = r->v[e];
    if (mirror && r->ri[e] != r->ci[e]) { p = cnt[r->ri[e]]++; crow[p] = r->ci[e]; cv[p] = sign * r->v[e]; }
  }
  free(r->ri); free(r->ci); free(r->v);
  r->ri = r->ci = NULL; r->v = NULL;
  m->rowptr = calloc((size_t)nr + 1, sizeof *m->rowptr);
  next = malloc((size_t)(nr ? nr : 1) * sizeof *next);
  m->col = malloc((size_t)(E ? E : 1) * sizeof *m->col);
  m->val = malloc((size_t)(E ? E : 1) * sizeof *m->val);
  if (!m->rowptr || !next || !m->col || !m->val) goto nomem;
  for (long p = 0; p < E; p++) m->rowptr[crow[p] + 1]++;
  for (long i = 0; i < nr; i++) m->rowptr[i + 1] += m->rowptr[i];
  memcpy(next, m->rowptr, (size_t)nr * sizeof *next);
  for (long c = 0, p = 0; c < nc; c++)     /* cnt[c] is now column c's end */
    for (; p < cnt[c]; p++) {
      int64_t q = next[crow[p]]++;
      m->col[q] = (int32_t)c; m->val[q] = cv[p];
    }
  int64_t w = 0;
  for (long i = 0; i < nr; i++) {          /* sum duplicates in place */
    int64_t a = m->rowptr[i], b = m->rowptr[i + 1];
    m->rowptr[i] = w;
    for (int64_t p = a; p < b; p++) {
      if (w > m->rowptr[i] && m->col[w - 1] == m->col[p]) {
        m->val[w - 1] += m->val[p];
        if (!isfinite(m->val[w - 1])) {
          st = ODB_FAIL(ODB_ERR_IO, "%s: the duplicate entries at (%ld, %d) sum to a value that is not finite",
                        r->shown, i + 1, m->col[p] + 1);
          goto done;
        }
      } else { m->col[w] = m->col[p]; m->val[w] = m->val[p]; w++; }
    }
  }
  m->rowptr[nr] = w;
  m->nnz = w;
  goto done;
nomem:
  st = ODB_FAIL(ODB_ERR_NOMEM, "%s: CSR of %ld entries", r->shown, E);
done:
  free(cnt); free(next); free(crow); free(cv);
  return st;
}

/* Array values -> m's dense column-major matrix (mirrored when symmetric). */
static odb_status build_dense(reader *r, odb_mtx *m)
{
  long n = r->nrows;
  m->nnz = (long)((size_t)r->nrows * (size_t)r->ncols);
  if (r->sym == S_GEN) { m->dense = r->raw; r->raw = NULL; return ODB_OK; }
  m->dense = calloc((size_t)(n ? n * n : 1), sizeof *m->dense);
  if (!m->dense) return ODB_FAIL(ODB_ERR_NOMEM, "%s: a %ld x %ld array", r->shown, n, n);
  long e = 0;
  for (long j = 0; j < n; j++)
    for (long i = r->sym == S_SYM ? j : j + 1; i < n; i++, e++) {
      m->dense[(size_t)j * n + i] = r->raw[e];
      m->dense[(size_t)i * n + j] = r->sym == S_SKEW ? -r->raw[e] : r->raw[e];
    }
  return ODB_OK;
}

/* The whole file into a NUL-terminated buffer. */
static odb_status slurp(reader *r, const char *path, char **buf, size_t *size)
{
  struct stat sb;
  int fd = open(path, O_RDONLY);
  odb_status st = ODB_OK;
  *buf = NULL;
  if (fd < 0) return ODB_FAIL(ODB_ERR_IO, "%s: cannot open: %s", r->shown, strerror(errno));
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: not a regular file", r->shown);
    goto done;
  }
  *size = (size_t)sb.st_size;
  char what[ODB_SHOWN_NAME + 32];
  snprintf(what, sizeof what, "%s: reading the file", r->shown);
  if ((st = odb_topo_check_memory((double)*size + 1, what)) != ODB_OK) goto done;
  if (!(*buf = malloc(*size + 1))) { st = ODB_FAIL(ODB_ERR_NOMEM, "%s", what); goto done; }
  size_t got = 0;
  while (got < *size) {
    ssize_t k = read(fd, *buf + got, *size - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      st = ODB_FAIL(ODB_ERR_IO, "%s: read failed at byte %zu: %s", r->shown, got, k ? strerror(errno) : "file shrank");
      goto done;
    }
    got += (size_t)k;
  }
  (*buf)[*size] = '\0';
done:
  close(fd);
  if (st != ODB_OK) { free(*buf); *buf = NULL; }
  return st;
}

odb_status odb_mtx_read(const char *path, const odb_mtx_opts *opts, odb_mtx *m)
{
  reader *r = calloc(1, sizeof *r);
  char *buf = NULL;
  size_t size = 0;
  odb_status st;
  memset(m, 0, sizeof *m);
  if (!r) return ODB_FAIL(ODB_ERR_NOMEM, "Matrix Market reader");
  odb_shown(path, r->shown, sizeof r->shown);
  if ((st = slurp(r, path, &buf, &size)) != ODB_OK) goto done;
  const char *s = buf, *end = buf + size, *nl;
  long line = 1;
  nl = memchr(s, '\n', size);
  if ((st = parse_banner(r, s, nl ? nl : end)) != ODB_OK) goto done;
  s = nl ? nl + 1 : end;
  for (line = 2;; line++) {                /* comments, then the size line */
    if (s >= end) {
      st = ODB_FAIL(ODB_ERR_IO, "%s: line %ld: the file ends before the size line", r->shown, line);
      goto done;
    }
    nl = memchr(s, '\n', (size_t)(end - s));
    if (data_line(s, nl ? nl : end)) break;
    s = nl ? nl + 1 : end;
  }
  const char *body = nl ? nl + 1 : end;
  if ((st = parse_size(r, s, nl ? nl : end, line, (size_t)(end - body), size, opts)) != ODB_OK) goto done;
  if ((st = parse_body(r, buf, body, end, line + 1, line, opts)) != ODB_OK) goto done;
  free(buf); buf = NULL;                   /* before the CSR's arrays */
  m->array = r->array;
  snprintf(m->field, sizeof m->field, "%s", r->field == F_REAL ? "real" : r->field == F_INT ? "integer" : "pattern");
  snprintf(m->symmetry, sizeof m->symmetry, "%s", r->sym == S_GEN ? "general" : r->sym == S_SYM ? "symmetric" : "skew-symmetric");
  m->nrows = r->nrows; m->ncols = r->ncols; m->entries = r->declared;
  st = r->array ? build_dense(r, m) : build_csr(r, m);
done:
  free(buf);
  free(r->ri); free(r->ci); free(r->v); free(r->raw);
  free(r);
  if (st != ODB_OK) odb_mtx_free(m);
  return st;
}

void odb_mtx_free(odb_mtx *m)
{
  free(m->rowptr); free(m->col); free(m->val); free(m->dense);
  m->rowptr = NULL; m->col = NULL; m->val = NULL; m->dense = NULL;
}

/* }====== */

/* {====== writers */

/* The header of a written file. */
static void header(FILE *f, const char *format)
{
  fprintf(f, "%%%%MatrixMarket matrix %s real general\n%% written by odebench (%%.17g: reads back exactly)\n", format);
}

odb_status odb_mtx_write_csr(const char *path, long nrows, long ncols,
                             const int64_t *rowptr, const int32_t *col,
                             const double *val)
{
  char sh[ODB_SHOWN_NAME];
  odb_wfile w;
  for (long i = 0; i < nrows; i++)
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++)
      if (!isfinite(val[p]))
        return ODB_FAIL(ODB_ERR_ARG, "%s: entry (%ld, %d) is %g: a Matrix Market file holds finite numbers only "
                        "(nothing written)", odb_shown(path, sh, sizeof sh), i + 1, col[p] + 1, val[p]);
  ODB_TRY(odb_wfile_open(&w, path));
  setvbuf(w.f, NULL, _IOFBF, 1 << 20);
  header(w.f, "coordinate");
  fprintf(w.f, "%ld %ld %lld\n", nrows, ncols, (long long)rowptr[nrows]);
  for (long i = 0; i < nrows; i++)
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++)
      fprintf(w.f, "%ld %d %.17g\n", i + 1, col[p] + 1, val[p]);
  return odb_wfile_commit(&w);
}

odb_status odb_mtx_write_array(const char *path, long nrows, long ncols,
                               const double *colmajor)
{
  char sh[ODB_SHOWN_NAME];
  odb_wfile w;
  size_t n = (size_t)nrows * (size_t)ncols;
  for (size_t e = 0; e < n; e++)
    if (!isfinite(colmajor[e]))
      return ODB_FAIL(ODB_ERR_ARG, "%s: entry (%zu, %zu) is %g: a Matrix Market file holds finite numbers only "
                      "(nothing written)", odb_shown(path, sh, sizeof sh), e % (size_t)nrows + 1,
                      e / (size_t)nrows + 1, colmajor[e]);
  ODB_TRY(odb_wfile_open(&w, path));
  setvbuf(w.f, NULL, _IOFBF, 1 << 20);
  header(w.f, "array");
  fprintf(w.f, "%ld %ld\n", nrows, ncols);
  for (size_t e = 0; e < n; e++) fprintf(w.f, "%.17g\n", colmajor[e]);
  return odb_wfile_commit(&w);
}

/* }====== */
