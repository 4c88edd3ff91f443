/* test_npy.c - NumPy .npy reader and writer (core/io/odb_npy.c): round
** trips of each dtype and order, headers as NumPy writes them and in the
** other spellings a dict literal allows, and every refused file with its
** exact message and byte offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tap.h"
#include "odebench.h"
#include "odb_npy.h"

static char dir[64];

static const char *path(const char *name)
{
  static char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}

/* A file of the preamble (version major.0), header text padded to hl
** bytes (0: its length) and nbytes of data (the values 0.5, 1.5, ...). */
static void put(const char *name, int major, const char *hdr, size_t hl, size_t nbytes)
{
  FILE *f = fopen(path(name), "wb");
  size_t n = strlen(hdr);
  if (!hl) hl = n;
  fwrite("\x93NUMPY", 1, 6, f);
  fputc(major, f); fputc(0, f);
  fputc((int)(hl & 0xff), f); fputc((int)(hl >> 8 & 0xff), f);
  if (major > 1) { fputc((int)(hl >> 16 & 0xff), f); fputc((int)(hl >> 24 & 0xff), f); }
  fwrite(hdr, 1, n, f);
  for (size_t k = n; k < hl; k++) fputc(' ', f);
  for (size_t k = 0; k < nbytes / 8; k++) { double v = k + 0.5; fwrite(&v, 8, 1, f); }
  fclose(f);
}

static void test_round_trips(odb_rng *g)
{
  static const struct { odb_npy_dtype dt; int ndim, fortran; long r, c; const char *hdr; } cases[] = {
    {ODB_NPY_F8, 1, 0, 7, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (7,), }"},
    {ODB_NPY_F8, 2, 0, 3, 5, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }"},
    {ODB_NPY_F8, 2, 1, 4, 2, "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 2), }"},
    {ODB_NPY_C16, 1, 0, 6, 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (6,), }"},
    {ODB_NPY_C16, 2, 1, 2, 3, "{'descr': '<c16', 'fortran_order': True, 'shape': (2, 3), }"},
    {ODB_NPY_F8, 2, 0, 0, 4, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }"},
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    odb_npy a = {cases[t].dt, cases[t].ndim, {cases[t].r, cases[t].c}, cases[t].fortran, 0, NULL, 1}, b;
    size_t nd = (size_t)cases[t].r * cases[t].c * (cases[t].dt == ODB_NPY_C16 ? 2 : 1);
    a.data = malloc((nd ? nd : 1) * sizeof(double));
    for (size_t k = 0; k < nd; k++) a.data[k] = (odb_rng_uniform(g) - 0.5) * 1e300;
    if (nd > 1) a.data[1] = 0.0 / 0.0;                 /* NaN is data in a .npy */
    odb_status st = odb_npy_write(path("rt.npy"), &a);
    char head[256] = {0};
    FILE *f = fopen(path("rt.npy"), "rb");
    size_t got = fread(head, 1, 255, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    size_t hl = (unsigned char)head[8] | (size_t)(unsigned char)head[9] << 8;
    int same_hdr = got > 10 && !strncmp(head + 10, cases[t].hdr, strlen(cases[t].hdr)) && head[10 + hl - 1] == '\n';
    st = st == ODB_OK ? odb_npy_read(path("rt.npy"), &b) : st;
    tap_ok(st == ODB_OK && same_hdr && (10 + hl) % 64 == 0 && (size_t)size == 10 + hl + nd * 8 &&
           b.dtype == a.dtype && b.ndim == a.ndim && b.shape[0] == a.shape[0] && b.shape[1] == a.shape[1] &&
           b.fortran == a.fortran && !memcmp(a.data, b.data, nd * sizeof(double)),
           "%s %s-order %ld x %ld: header as NumPy writes it (%s), padded to %zu bytes, data bit for bit",
           odb_npy_dtype_name(a.dtype), a.fortran ? "F" : "C", a.shape[0], a.shape[1], cases[t].hdr, 10 + hl);
    if (st != ODB_OK) tap_diag("%s", odb_last_error());
    free(a.data);
    if (st == ODB_OK) odb_npy_free(&b);
  }
}

static void test_spellings(void)
{
  static const char *const ok[] = {
    "{\"shape\":(2,3),\"descr\":\"<f8\",\"fortran_order\":False}\n",
    "{ 'fortran_order' : True , 'shape' : ( 2 , 3 , ) , 'descr' : '<f8' , }          \n",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}\n",
  };
  for (int k = 0; k < 3; k++) {
    odb_npy a;
    put("sp.npy", k + 1, ok[k], 0, 48);
    odb_status st = odb_npy_read(path("sp.npy"), &a);
    tap_ok(st == ODB_OK && a.version == k + 1 && a.shape[0] == 2 && a.shape[1] == 3 && a.data[5] == 5.5 &&
           a.fortran == (k == 1), "version %d.0, header %s", k + 1, ok[k]);
    if (st == ODB_OK) odb_npy_free(&a);
    else tap_diag("%s", odb_last_error());
  }
}

static void expect(const char *name, int major, const char *hdr, size_t nbytes, const char *want)
{
  odb_npy a;
  put(name, major, hdr, 0, nbytes);
  odb_status st = odb_npy_read(path(name), &a);
  const char *got = st == ODB_OK ? "(read fine)" : strstr(odb_last_error(), name) ? strstr(odb_last_error(), name) : odb_last_error();
  tap_ok(!strcmp(got, want), "%s refused: %s", name, got);
  if (strcmp(got, want)) tap_diag("expected: %s", want);
  if (st == ODB_OK) odb_npy_free(&a);
}

#define D(x) "{'descr': " x ", 'fortran_order': False, 'shape': (2,), }\n"
static void test_bad(void)
{
  expect("e1.npy", 1, D("'>f8'"), 16, "e1.npy: byte offset 20: dtype '>f8' is big-endian (odebench reads little-endian '<f8' and '<c16')");
  expect("e2.npy", 1, D("'<i4'"), 16, "e2.npy: byte offset 20: dtype '<i4' cannot be held (odebench reads '<f8' float64 and '<c16' complex128)");
  expect("e3.npy", 1, D("[('a', '<f8')]"), 16, "e3.npy: byte offset 20: a structured dtype is not read (odebench reads '<f8' float64 and '<c16' complex128)");
  expect("e4.npy", 1, D("'<f8'"), 8, "e4.npy: byte offset 68: the data of shape (2,) '<f8' needs 16 bytes, the file holds 8 after the header (truncated)");
  expect("e5.npy", 1, D("'<f8'"), 24, "e5.npy: byte offset 84: 8 bytes after the data (a .npy file ends with its data)");
  expect("e6.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }\n", 16,
         "e6.npy: byte offset 60: the shape is not a tuple (a 1-tuple is written (n,))");
  expect("e7.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }\n", 64,
         "e7.npy: byte offset 60: a 3-D array is not read (1-D and 2-D only)");
  expect("e8.npy", 1, "{'descr': '<f8', 'shape': (2,), }\n", 16, "e8.npy: byte offset 42: the header dict has no 'fortran_order'");
  expect("e9.npy", 1, "{'descr': '<f8', 'descr': '<f8', }\n", 16, "e9.npy: byte offset 27: key 'descr' given twice");
  expect("e10.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 16,
         "e10.npy: byte offset 66: unknown key 'x' (expected 'descr', 'fortran_order', 'shape')");
  expect("e10a.npy", 1, "{'descr': '<f8', 'x\x1b[2J': 1}\n", 16,
         "e10a.npy: byte offset 27: unknown key 'x\\x1b[2J' (expected 'descr', 'fortran_order', 'shape')");
  expect("e11.npy", 1, "{'descr': '<f8', 'fortran_order': false, 'shape': (2,), }\n", 16,
         "e11.npy: byte offset 44: expected True or False for 'fortran_order', got 'false, 'shap'");
  expect("e12.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }\n", 0,
         "e12.npy: byte offset 10: shape (1099511627776, 1099511627776) of '<f8' needs more bytes than a size_t holds");
  expect("e13.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 1024), }\n", 0,
         "e13.npy: byte offset 82: the data of shape (4294967296, 1024) '<f8' needs 35184372088832 bytes, the file holds 0 after the header (truncated)");
  expect("e14.npy", 1, D("'<f8'") "x", 16, "e14.npy: byte offset 68: expected only spaces after the header dict, got 'x'");
  expect("e15.npy", 4, D("'<f8'"), 16, "e15.npy: byte offset 6: format version 4.0 is not read (1.0, 2.0, 3.0)");
  FILE *f = fopen(path("e16.npy"), "wb");
  fwrite("\x93NUMPX\x01\x00\x10\x00", 1, 10, f);
  fclose(f);
  odb_npy a;
  odb_npy_read(path("e16.npy"), &a);
  tap_ok(!strcmp(strstr(odb_last_error(), "e16.npy"), "e16.npy: byte offset 0: not a .npy file (expected the magic \\x93NUMPY and a 10-byte preamble)"),
         "bad magic: %s", strstr(odb_last_error(), "e16.npy"));
  f = fopen(path("e17.npy"), "wb");
  fwrite("\x93NUMPY\x01\x00\xff\x00{", 1, 11, f);
  fclose(f);
  odb_npy_read(path("e17.npy"), &a);
  tap_ok(!strcmp(strstr(odb_last_error(), "e17.npy"), "e17.npy: byte offset 8: the header length 255 runs past the end of the file (11 bytes)"),
         "header length past the end: %s", strstr(odb_last_error(), "e17.npy"));
  odb_npy w = {ODB_NPY_F8, 3, {1, 1}, 0, 1, NULL, 1};
  odb_status st = odb_npy_write(path("w.npy"), &w);
  tap_ok(st == ODB_ERR_ARG && !strcmp(strstr(odb_last_error(), "w.npy"), "w.npy: a 3-D array is not written (1-D and 2-D only)"),
         "writer refuses 3-D: %s", strstr(odb_last_error(), "w.npy"));
}

int main(void)
{
  const char *env = getenv("ODB_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  odb_rng g;
  tap_diag("seed %llu (set ODB_TEST_SEED to repeat)", (unsigned long long)seed);
  odb_rng_seed(&g, seed);
  snprintf(dir, sizeof dir, "/tmp/odb_test_npy.XXXXXX");
  if (!mkdtemp(dir)) TAP_SKIP_ALL("no temporary directory");
  test_round_trips(&g);
  test_spellings();
  test_bad();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) tap_diag("could not remove %s", dir);
  return tap_done();
}
