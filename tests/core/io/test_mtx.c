/* test_mtx.c - Matrix Market reader and writer (core/io/odb_mtx.c), the
** sparse side (core/sparse/odb_sparse_file.c): round trips, SpMV of read
** matrices, every format written, symmetric expansion, duplicates, the
** formats that apply to a loaded matrix, and every refused input with its
** exact message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tap.h"
#include "odebench.h"
#include "odb_mtx.h"
#include "odb_sparse_file.h"

static char dir[64];

/* dir/name, in a static buffer (one at a time). */
static const char *path(const char *name)
{
  static char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}

static void put(const char *file, const char *text)
{
  FILE *f = fopen(file, "wb");
  fputs(text, f);
  fclose(f);
}

/* A random square CSR of order n, ascending columns, values over many
** magnitudes and signs (the round trip must keep every bit). */
static odb_sparse *random_csr(odb_rng *g, long n, double density)
{
  int64_t *rp = malloc((n + 1) * sizeof *rp);
  int32_t *col = malloc((size_t)n * n * sizeof *col);
  double *val = malloc((size_t)n * n * sizeof *val);
  rp[0] = 0;
  for (long r = 0; r < n; r++) {
    rp[r + 1] = rp[r];
    for (long c = 0; c < n; c++)
      if (c == r || odb_rng_uniform(g) < density) {
        double m = ldexp(odb_rng_uniform(g) + 0.5, (int)(odb_rng_uniform(g) * 200) - 100);
        col[rp[r + 1]] = (int32_t)c;
        val[rp[r + 1]++] = odb_rng_uniform(g) < 0.5 ? -m : m;
      }
  }
  odb_sparse *A;
  odb_sparse_csr_from(n, rp, col, val, &A);
  free(rp); free(col); free(val);
  return A;
}

static int same_csr(const odb_sparse *a, const odb_sparse *b)
{
  return a->n == b->n && a->rowptr[a->n] == b->rowptr[b->n] &&
         !memcmp(a->rowptr, b->rowptr, (a->n + 1) * sizeof *a->rowptr) &&
         !memcmp(a->col, b->col, a->rowptr[a->n] * sizeof *a->col) &&
         !memcmp(a->val, b->val, a->rowptr[a->n] * sizeof *a->val);
}

/* max |A x - B x| / max |A x| for a random x. */
static double spmv_diff(const odb_sparse *A, const odb_sparse *B, odb_rng *g)
{
  long n = A->n;
  double *x = calloc(n, sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  for (long i = 0; i < n; i++) x[i] = 2 * odb_rng_uniform(g) - 1;
  odb_sparse_spmv(A, x, y);
  odb_sparse_spmv(B, x, z);
  double num = 0, den = 0;
  for (long i = 0; i < n; i++) {
    if (fabs(y[i] - z[i]) > num || isnan(z[i])) num = fabs(y[i] - z[i]);
    if (fabs(y[i]) > den) den = fabs(y[i]);
  }
  free(x); free(y); free(z);
  return den > 0 ? num / den : num;
}

static void test_round_trip(odb_rng *g)
{
  int exact = 1;
  double worst = 0;
  for (int t = 0; t < 20; t++) {
    long n = 1 + (long)(odb_rng_uniform(g) * 150);
    odb_sparse *A = random_csr(g, n, odb_rng_uniform(g) * 0.2), *B = NULL;
    if (odb_sparse_write_mtx(A, path("rt.mtx")) != ODB_OK || odb_sparse_read_mtx(path("rt.mtx"), NULL, &B) != ODB_OK) {
      tap_ok(0, "round trip %d: %s", t, odb_last_error());
      odb_sparse_free(A);
      return;
    }
    exact &= same_csr(A, B);
    double d = spmv_diff(A, B, g);
    if (d > worst) worst = d;
    odb_sparse_free(A); odb_sparse_free(B);
  }
  tap_ok(exact, "20 random matrices: written and read back bit for bit (%%.17g)");
  tap_ok(worst <= 1e-15, "SpMV of the read matrices equals the originals' (max rel diff %.3g <= 1e-15)", worst);
}

/* Every format of a reservoir matrix written, read back as CSR: same
** SpMV; and converted back to CSR exactly. */
static void test_every_format(odb_rng *rg)
{
  odb_reservoir *g;
  odb_sparse *csr;
  odb_reservoir_create(&g, 4, 3, 3, 2, 2, ODB_GH_HALF, 7);
  odb_reservoir_csr(g, &csr);
  for (int f = 0; f < ODB_FMT_COUNT; f++) {
    odb_sparse *A = NULL, *B = NULL, *C = NULL;
    if (odb_reservoir_matrix(g, (odb_sparse_format)f, 0, &A) != ODB_OK) { tap_ok(0, "%s", odb_last_error()); continue; }
    odb_status st = odb_sparse_write_mtx(A, path("f.mtx"));
    if (st == ODB_OK) st = odb_sparse_read_mtx(path("f.mtx"), NULL, &B);
    if (st == ODB_OK) st = odb_sparse_to_csr(A, &C);
    double d = st == ODB_OK ? spmv_diff(A, B, rg) : 1;
    tap_ok(st == ODB_OK && d <= 1e-15 && same_csr(B, csr) && same_csr(C, csr),
           "%s written as coordinate real general reads back as GH's CSR, SpMV rel diff %.3g",
           odb_sparse_format_name((odb_sparse_format)f), d);
    odb_sparse_free(A); odb_sparse_free(B); odb_sparse_free(C);
  }
  odb_sparse_free(csr);
  odb_reservoir_free(g);
}

static void test_expansion(void)
{
  odb_sparse *A = NULL;
  put(path("sym.mtx"), "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n\n3 3 4\n1 1 2\n2 1 -1\n3 2 0.5\n3 3 4\n");
  int ok = odb_sparse_read_mtx(path("sym.mtx"), NULL, &A) == ODB_OK;
  static const int64_t rp[] = {0, 2, 4, 6};
  static const int32_t cl[] = {0, 1, 0, 2, 1, 2};
  static const double vl[] = {2, -1, -1, 0.5, 0.5, 4};
  tap_ok(ok && A->nnz == 6 && !memcmp(A->rowptr, rp, sizeof rp) && !memcmp(A->col, cl, sizeof cl) &&
         !memcmp(A->val, vl, sizeof vl), "symmetric: lower triangle mirrored, diagonal once, rows sorted");
  odb_sparse_free(A); A = NULL;
  put(path("skew.mtx"), "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n");
  ok = odb_sparse_read_mtx(path("skew.mtx"), NULL, &A) == ODB_OK;
  tap_ok(ok && A->nnz == 2 && A->col[0] == 1 && A->val[0] == -3 && A->col[1] == 0 && A->val[1] == 3,
         "skew-symmetric integer: (2,1) = 3 mirrored as (1,2) = -3");
  odb_sparse_free(A); A = NULL;
  put(path("dup.mtx"), "%%MatrixMarket matrix coordinate real general\n2 2 5\n2 2 1.5\n1 2 1\n2 2 2.25\n1 1 7\n1 2 -3\n");
  ok = odb_sparse_read_mtx(path("dup.mtx"), NULL, &A) == ODB_OK;
  tap_ok(ok && A->nnz == 3 && A->val[0] == 7 && A->val[1] == -2 && A->col[2] == 1 && A->val[2] == 3.75,
         "duplicates summed (as SciPy does): (1,2) 1 + -3 = -2, (2,2) 1.5 + 2.25 = 3.75");
  odb_sparse_free(A); A = NULL;
  put(path("pat.mtx"), "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n");
  ok = odb_sparse_read_mtx(path("pat.mtx"), NULL, &A) == ODB_OK;
  tap_ok(ok && A->nnz == 3 && A->val[0] == 1 && A->val[1] == 1 && A->val[2] == 1, "pattern entries read as 1.0");
  odb_sparse_free(A); A = NULL;
  odb_mtx m;
  put(path("arr.mtx"), "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n");
  ok = odb_mtx_read(path("arr.mtx"), NULL, &m) == ODB_OK;
  tap_ok(ok && m.array && m.dense[0] == 1 && m.dense[1] == 2 && m.dense[2] == 2 && m.dense[3] == 3,
         "array symmetric: column-major lower triangle expanded");
  odb_mtx_free(&m);
  put(path("arr2.mtx"), "%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n");
  ok = odb_sparse_read_mtx(path("arr2.mtx"), NULL, &A) == ODB_OK;
  tap_ok(ok && A->nnz == 3 && A->rowptr[1] == 2 && A->col[0] == 0 && A->val[1] == 3 && A->val[2] == 4,
         "array general as a sparse matrix keeps its nonzeros, row order");
  odb_sparse_free(A);
  double d[6] = {1, 2, 3, 4, 5, 6};
  ok = odb_mtx_write_array(path("w.mtx"), 2, 3, d) == ODB_OK && odb_mtx_read(path("w.mtx"), NULL, &m) == ODB_OK;
  tap_ok(ok && m.nrows == 2 && m.ncols == 3 && !memcmp(m.dense, d, sizeof d), "array written and read back");
  odb_mtx_free(&m);
}

/* The message of reading text as a file named name. */
static const char *err_of(const char *name, const char *text)
{
  odb_sparse *A = NULL;
  put(path(name), text);
  if (odb_sparse_read_mtx(path(name), NULL, &A) == ODB_OK) { odb_sparse_free(A); return "(read fine)"; }
  return strstr(odb_last_error(), name) ? strstr(odb_last_error(), name) : odb_last_error();
}

static void expect(const char *name, const char *text, const char *want)
{
  const char *got = err_of(name, text);
  tap_ok(!strcmp(got, want), "%s refused: %s", name, got);
  if (strcmp(got, want)) tap_diag("expected: %s", want);
}

#define H "%%MatrixMarket matrix coordinate real general\n"
static void test_bad_input(void)
{
  expect("b1.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
         "b1.mtx: line 1: field 'complex' is not read: odebench's matrices are real (float64)");
  expect("b2.mtx", "%MatrixMarket matrix coordinate real general\n",
         "b2.mtx: line 1: expected '%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric', got '%MatrixMarket'");
  expect("b3.mtx", "%%MatrixMarket vector coordinate real general\n", "b3.mtx: line 1: object 'vector' is not read (only 'matrix')");
  expect("b4.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n",
         "b4.mtx: line 1: field 'complex' is not read: odebench's matrices are real (float64)");
  expect("b5.mtx", "%%MatrixMarket matrix coordinate real hermitian\n",
         "b5.mtx: line 1: symmetry 'hermitian' is not read: it needs complex values");
  expect("b6.mtx", H "% c\n3 3\n", "b6.mtx: line 3: expected the size line 'rows columns entries', got 'end of line' as its third number");
  expect("b7.mtx", H "2 2 2\n1 1 1\n0 2 1\n", "b7.mtx: line 4: row index 0 out of range 1..2");
  expect("b8.mtx", H "2 2 2\n1 1 1\n1 3 1\n", "b8.mtx: line 4: column index 3 out of range 1..2");
  expect("b9.mtx", H "2 2 3\n1 1 1\n2 2 1\n", "b9.mtx: line 4: the file ends after 2 of the 3 entries the size line (line 2) declares");
  expect("b10.mtx", H "2 2 1\n1 1 1\n2 2 1\n", "b10.mtx: line 4: more entries than the 1 the size line declares");
  expect("b11.mtx", H "2 2 1\n1 1 nan\n", "b11.mtx: line 3: value 'nan' is not finite (a matrix holds finite numbers only)");
  expect("b12.mtx", H "2 2 1\n1 1 1e999\n", "b12.mtx: line 3: value '1e999' is not finite (a matrix holds finite numbers only)");
  expect("b13.mtx", H "2 2 1\n1 1 x1\n", "b13.mtx: line 3: expected a real value, got 'x1'");
  expect("b14.mtx", H "2 2 1\n1 1 1 2\n", "b14.mtx: line 3: expected the end of the line, got '2'");
  expect("b15.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
         "b15.mtx: line 3: entry (1, 2) is not below the diagonal: a symmetric file holds the lower triangle only");
  expect("b16.mtx", H "2000 2000 1000000\n1 1 1\n",
         "b16.mtx: line 2: the size line declares 1000000 entries, more than the 6 bytes after it can hold (each takes at least 4)");
  expect("b16a.mtx", "%%MatrixMarket matrix array real general\n2000000 2000000\n1\n",
         "b16a.mtx: line 2: the size line declares 4000000000000 entries, more than the 2 bytes after it can hold (each takes at least 2)");
  expect("b17.mtx", H "3000000000 3 1\n", "b17.mtx: line 2: 3000000000 x 3 is larger than odebench's 32-bit indices hold (at most 2147483647)");
  expect("b18.mtx", H "2 2 5\n", "b18.mtx: line 2: the size line declares 5 entries, more than the 0 bytes after it can hold (each takes at least 4)");
  expect("b19.mtx", H "2 3 1\n1 1 1\n",
         "b19.mtx: the matrix is 2 x 3; odebench's sparse matrices are square and not empty (SpMV and the Krylov solvers take an order n >= 1)");
  expect("b20.mtx", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n",
         "b20.mtx: line 3: expected an integer value, got '1.5'");
  expect("b21.mtx", H "2 2 1\n1 1 1", "(read fine)");         /* no final newline */
  expect("b22.mtx", H, "b22.mtx: line 2: the file ends before the size line");
  expect("b23.mtx", H "1 1 1\n1 1\n", "b23.mtx: line 3: expected a real value, got 'end of line'");
  expect("b24.mtx", "%%MatrixMarket matrix array real general\n2 2\n1.5\n2.5\n3.5\n",
         "b24.mtx: line 5: the file ends after 3 of the 4 entries the size line (line 2) declares");
  odb_mtx_opts lim = {1, NULL, NULL, 1e6};
  odb_sparse *L = NULL;
  put(path("b26.mtx"), H "100000 100000 1\n1 1 1\n");
  odb_status lst = odb_sparse_read_mtx(path("b26.mtx"), &lim, &L);
  tap_ok(lst == ODB_ERR_NOMEM && !strcmp(strstr(odb_last_error(), "b26.mtx"), "b26.mtx: a 100000 x 100000 matrix of 1 entries would need 1.6e+06 bytes, more than max_bytes (1e+06)"),
         "max_bytes refuses before allocating: %s", strstr(odb_last_error(), "b26.mtx"));
  put(path("b25\x1b[31m.mtx"), "junk\n");
  odb_sparse *A = NULL;
  odb_sparse_read_mtx(path("b25\x1b[31m.mtx"), NULL, &A);
  tap_ok(strstr(odb_last_error(), "b25\\x1b[31m.mtx: line 1:") != NULL && !strchr(odb_last_error(), '\x1b'),
         "a control character in the file name is shown escaped: %s", strstr(odb_last_error(), "b25"));
  odb_sparse_read_mtx(path("none.mtx"), NULL, &A);
  tap_ok(strstr(odb_last_error(), "none.mtx: cannot open: No such file or directory") != NULL, "missing file: %s",
         strstr(odb_last_error(), "none.mtx"));
}

/* Writes a big general file (n rows, 3 entries a row) with a bad line at
** line bad (0: none); returns its declared entry count. */
static long big_file(const char *file, long n, long bad)
{
  FILE *f = fopen(file, "wb");
  long line = 3, e = 0;
  fputs(H, f);
  fprintf(f, "%ld %ld %ld\n", n, n, 3 * n);
  for (long r = 1; r <= n; r++)
    for (long c = r - 1; c <= r + 1; c++) {
      long cc = c < 1 ? n : c > n ? 1 : c;
      if (line++ == bad) fprintf(f, "%ld %ld oops\n", r, cc);
      else fprintf(f, "%ld %ld %.17g\n", r, cc, (double)r * 1.25 + (double)cc / 3.0);
      e++;
    }
  fclose(f);
  return e;
}

static int calls, stop_at;
static double last_done, last_total;
static int progress(void *ud, double done, double total)
{
  (void)ud;
  if (done < last_done) calls = -1000;
  last_done = done; last_total = total;
  calls++;
  return stop_at && calls >= stop_at;
}

static void test_threads(void)
{
  long n = 400000;
  big_file(path("big.mtx"), n, 0);
  odb_mtx_opts one = {1, NULL, NULL, 0}, four = {4, progress, NULL, 0};
  odb_sparse *A = NULL, *B = NULL;
  int ok = odb_sparse_read_mtx(path("big.mtx"), &one, &A) == ODB_OK &&
           odb_sparse_read_mtx(path("big.mtx"), &four, &B) == ODB_OK;
  tap_ok(ok && same_csr(A, B) && A->nnz == 3 * n, "a %ld-entry file parsed by 4 threads equals the serial parse", 3 * n);
  tap_ok(calls >= 1 && last_done == last_total && last_total > 0, "progress called %d times, ending at done = total = %.0f",
         calls, last_total);
  odb_sparse_free(A); odb_sparse_free(B);
  calls = 0; last_done = 0; stop_at = 1;
  odb_status st = odb_sparse_read_mtx(path("big.mtx"), &four, &A);
  tap_ok(st == ODB_INTERRUPTED && strstr(odb_last_error(), "big.mtx: reading stopped by the progress callback"),
         "a progress callback returning nonzero stops the read: %s", strstr(odb_last_error(), "big.mtx"));
  stop_at = 0;
  big_file(path("bigbad.mtx"), n, 1000003);
  st = odb_sparse_read_mtx(path("bigbad.mtx"), &four, &A);
  tap_ok(st != ODB_OK && !strcmp(strstr(odb_last_error(), "bigbad.mtx"), "bigbad.mtx: line 1000003: expected a real value, got 'oops'"),
         "an error deep in a threaded parse names its line: %s", strstr(odb_last_error(), "bigbad.mtx"));
}

static void test_writes(void)
{
  double v[2] = {1, NAN};
  int64_t rp[3] = {0, 1, 2};
  int32_t cl[2] = {0, 1};
  put(path("keep.mtx"), "old");
  odb_status st = odb_mtx_write_csr(path("keep.mtx"), 2, 2, rp, cl, v);
  FILE *f = fopen(path("keep.mtx"), "rb");
  char buf[8] = {0};
  fread(buf, 1, 7, f);
  fclose(f);
  tap_ok(st == ODB_ERR_ARG && !strcmp(buf, "old") &&
         !strcmp(strstr(odb_last_error(), "keep.mtx"), "keep.mtx: entry (2, 2) is nan: a Matrix Market file holds finite numbers only (nothing written)"),
         "a NaN is refused before the file is touched: %s", strstr(odb_last_error(), "keep.mtx"));
  v[1] = 2;
  st = odb_mtx_write_csr(path("no/such/dir.mtx"), 2, 2, rp, cl, v);
  tap_ok(st == ODB_ERR_IO && strstr(odb_last_error(), "no/such/dir.mtx: cannot create the file: No such file or directory"),
         "an unwritable place: %s", strstr(odb_last_error(), "no/such"));
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path("keep.mtx"), (long)getpid());
  st = odb_mtx_write_csr(path("keep.mtx"), 2, 2, rp, cl, v);
  tap_ok(st == ODB_OK && access(tmp, F_OK) != 0, "a write renames its temporary file into place (none left)");
}

/* A copy of CSR A with entry (r, c) = v added (c beyond row r's columns). */
static odb_sparse *with_entry(const odb_sparse *A, long r, int32_t c, double v)
{
  long n = A->n, nnz = A->rowptr[n];
  int64_t *rp = malloc((n + 1) * sizeof *rp);
  int32_t *cl = malloc((nnz + 1) * sizeof *cl);
  double *vl = malloc((nnz + 1) * sizeof *vl);
  odb_sparse *X;
  for (long i = 0, q = 0; i < n; i++) {
    rp[i] = q;
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) { cl[q] = A->col[p]; vl[q++] = A->val[p]; }
    if (i == r) { cl[q] = c; vl[q++] = v; }
  }
  rp[n] = nnz + 1;
  odb_sparse_csr_from(n, rp, cl, vl, &X);
  free(rp); free(cl); free(vl);
  return X;
}

static void test_formats_apply(odb_rng *rg)
{
  odb_reservoir *g;
  odb_sparse *A = NULL, *B = NULL, *R = NULL;
  odb_reservoir_create(&g, 3, 4, 2, 2, 3, ODB_GH_BLOCK, 11);
  odb_reservoir_matrix(g, ODB_FMT_BDIA, 0, &R);
  odb_sparse_write_mtx(R, path("gh.mtx"));
  odb_sparse_read_mtx(path("gh.mtx"), NULL, &A);
  odb_sparse_conv c = {2, 0, 0, NULL};
  for (int f = 0; f < ODB_FMT_BDIA; f++) {
    odb_status st = odb_sparse_convert_to(A, (odb_sparse_format)f, &c, &B);
    double d = st == ODB_OK ? spmv_diff(A, B, rg) : 1;
    tap_ok(st == ODB_OK && d <= 1e-15, "loaded GH as %s: SpMV rel diff %.3g", odb_sparse_format_name((odb_sparse_format)f), d);
    odb_sparse_free(B); B = NULL;
  }
  odb_status st = odb_sparse_convert_to(A, ODB_FMT_BDIA, &c, &B);
  tap_ok(st == ODB_ERR_UNSUPPORTED && !strncmp(odb_last_error(), "bdia does not apply without the grid the matrix comes from (grid = {J=, H=, I=, k=, wells=, pattern=})", 95),
         "bdia without a grid: %s", odb_last_error());
  c.grid = g;
  st = odb_sparse_convert_to(A, ODB_FMT_BDIA, &c, &B);
  double d = st == ODB_OK ? spmv_diff(R, B, rg) : 1;
  tap_ok(st == ODB_OK && d == 0, "bdia over the grid it came from: SpMV equals the generated Bdia's exactly (%.3g)", d);
  odb_sparse_free(B); B = NULL;
  odb_sparse *X = with_entry(A, 0, 40, 0.5);  /* cell 0 does not touch cell 20 */
  st = odb_sparse_convert_to(X, ODB_FMT_BDIA, &c, &B);
  tap_ok(st == ODB_ERR_UNSUPPORTED && !strcmp(odb_last_error(), "bdia does not apply: entry (1, 41) lies outside the GH "
         "structure of the grid J=3 H=4 I=2 k=2 wells=3 pattern b (Bdia holds the seven k x k block diagonals and the "
         "well couplings only, Al-Mouhamed and Khan, section 6.1)"), "an entry outside GH: %s", odb_last_error());
  odb_sparse_free(X);
  odb_sparse_free(B);
  odb_reservoir *g2;
  odb_reservoir_create(&g2, 3, 3, 2, 2, 3, ODB_GH_BLOCK, 11);
  c.grid = g2;
  st = odb_sparse_convert_to(A, ODB_FMT_BDIA, &c, &B);
  tap_ok(st == ODB_ERR_ARG && !strcmp(odb_last_error(), "the matrix has order 51, the grid's GH has order 39 (J*H*I*k + wells = 3*3*2*2 + 3)"),
         "bdia of another grid's order: %s", odb_last_error());
  odb_sparse *Z = random_csr(rg, 200, 0.02);
  st = odb_sparse_convert_to(Z, ODB_FMT_DIA, NULL, &B);
  tap_ok(st == ODB_ERR_UNSUPPORTED && strstr(odb_last_error(), "dia does not apply: the ") &&
         strstr(odb_last_error(), "which DIA stores in full") && strstr(odb_last_error(), "the matrix is not banded enough: use csr, ell or hyb"),
         "DIA of a scattered matrix: %s", odb_last_error());
  odb_sparse_free(Z); odb_sparse_free(A); odb_sparse_free(R);
  odb_reservoir_free(g); odb_reservoir_free(g2);
}

int main(void)
{
  const char *env = getenv("ODB_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  odb_rng g;
  tap_diag("seed %llu (set ODB_TEST_SEED to repeat)", (unsigned long long)seed);
  odb_rng_seed(&g, seed);
  snprintf(dir, sizeof dir, "/tmp/odb_test_mtx.XXXXXX");
  if (!mkdtemp(dir)) TAP_SKIP_ALL("no temporary directory");
  test_round_trip(&g);
  test_every_format(&g);
  test_expansion();
  test_bad_input();
  test_threads();
  test_writes();
  test_formats_apply(&g);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) tap_diag("could not remove %s", dir);
  return tap_done();
}
