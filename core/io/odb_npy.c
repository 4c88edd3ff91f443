/* odb_npy.c - NumPy .npy reader and writer (see odb_npy.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "odb_npy.h"
#include "odb_shown.h"
#include "odb_size.h"
#include "odb_topo.h"
#include "odb_wfile.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "odb_npy.c reads and writes little-endian data in place: a little-endian host is assumed"
#endif

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

const char *odb_npy_dtype_name(odb_npy_dtype d)
{
  return d == ODB_NPY_C16 ? "<c16" : "<f8";
}

/* {====== the header dict */

typedef struct hp {
  const char *s, *start, *end;
  long base;                 /* file offset of start */
  const char *shown;         /* file name, escaped */
  char descr[16];
  int have_descr, have_fortran, have_shape, fortran, ndim;
  long shape[2];
} hp;

static long off(const hp *h) { return h->base + (long)(h->s - h->start); }

static void ws(hp *h)
{
  while (h->s < h->end && (*h->s == ' ' || *h->s == '\t' || *h->s == '\n' || *h->s == '\r')) h->s++;
}

/* What is at the cursor, shown (for "got ..."). */
static const char *here(const hp *h, char *buf, size_t cap)
{
  if (h->s >= h->end) return "the end of the header";
  size_t n = (size_t)(h->end - h->s);
  char tmp[24];
  odb_shown_n(h->s, n > 12 ? 12 : n, tmp, sizeof tmp);
  snprintf(buf, cap, "'%s'", tmp);
  return buf;
}

#define HFAIL(h, ...) hfail((h), __VA_ARGS__)
static odb_status hfail(const hp *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static odb_status hfail(const hp *h, const char *fmt, ...)
{
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ODB_FAIL(ODB_ERR_IO, "%s: byte offset %ld: %s", h->shown, off(h), msg);
}

/* A quoted string (' or ", no escapes) into out[cap]. */
static odb_status str(hp *h, char *out, size_t cap, const char *what)
{
  char g[32];
  if (h->s >= h->end || (*h->s != '\'' && *h->s != '"'))
    return HFAIL(h, "expected %s (a quoted string), got %s", what, here(h, g, sizeof g));
  char q = *h->s++;
  const char *a = h->s;
  while (h->s < h->end && *h->s != q && *h->s != '\\') h->s++;
  if (h->s >= h->end || *h->s != q) return HFAIL(h, "unterminated or escaped string in %s", what);
  size_t n = (size_t)(h->s - a);
  h->s++;
  if (n >= cap) { h->s = a; return HFAIL(h, "%s of %zu characters is longer than any this reader knows", what, n); }
  memcpy(out, a, n);
  out[n] = '\0';
  return ODB_OK;
}

/* True or False. */
static odb_status boolean(hp *h, int *out)
{
  char g[32];
  size_t left = (size_t)(h->end - h->s);
  if (left >= 4 && !memcmp(h->s, "True", 4)) { *out = 1; h->s += 4; return ODB_OK; }
  if (left >= 5 && !memcmp(h->s, "False", 5)) { *out = 0; h->s += 5; return ODB_OK; }
  return HFAIL(h, "expected True or False for 'fortran_order', got %s", here(h, g, sizeof g));
}

/* A tuple of non-negative integers: (), (n,), (n, m) and so on; 1-D and
** 2-D kept. */
static odb_status tuple(hp *h)
{
  char g[32];
  int n = 0, comma = 0;
  if (h->s >= h->end || *h->s != '(') return HFAIL(h, "expected the shape tuple '(', got %s", here(h, g, sizeof g));
  const char *open = h->s++;
  for (;;) {
    ws(h);
    if (h->s < h->end && *h->s == ')') break;
    if (h->s >= h->end || *h->s < '0' || *h->s > '9')
      return HFAIL(h, "expected a dimension (a non-negative integer) in the shape, got %s", here(h, g, sizeof g));
    long v = 0;
    const char *d0 = h->s;
    while (h->s < h->end && *h->s >= '0' && *h->s <= '9') {
      if (v > (INT64_MAX - 9) / 10) { h->s = d0; return HFAIL(h, "dimension too large"); }
      v = v * 10 + (*h->s++ - '0');
    }
    if (h->s < h->end && *h->s == 'L') h->s++;      /* Python 2's long */
    if (n < 2) h->shape[n] = v;
    n++;
    ws(h);
    comma = h->s < h->end && *h->s == ',';
    if (comma) { h->s++; continue; }
    ws(h);
    if (h->s >= h->end || *h->s != ')') return HFAIL(h, "expected ',' or ')' in the shape, got %s", here(h, g, sizeof g));
  }
  h->s++;
  if (n == 1 && !comma) {
    h->s = open;
    return HFAIL(h, "the shape is not a tuple (a 1-tuple is written (n,))");
  }
  if (n < 1 || n > 2) {
    h->s = open;
    return HFAIL(h, "a %d-D array is not read (1-D and 2-D only)", n);
  }
  h->ndim = n;
  if (n == 1) h->shape[1] = 1;
  return ODB_OK;
}

/* The dict [start, end) at file offset base. */
static odb_status parse_dict(hp *h)
{
  char g[32], key[32];
  ws(h);
  if (h->s >= h->end || *h->s != '{') return HFAIL(h, "expected the header dict '{', got %s", here(h, g, sizeof g));
  h->s++;
  for (;;) {
    ws(h);
    if (h->s < h->end && *h->s == '}') break;
    const char *k0 = h->s;
    ODB_TRY(str(h, key, sizeof key, "a key"));
    int *have = !strcmp(key, "descr") ? &h->have_descr : !strcmp(key, "fortran_order") ? &h->have_fortran
              : !strcmp(key, "shape") ? &h->have_shape : NULL;
    if (!have) {
      char sh[48];
      h->s = k0;
      return HFAIL(h, "unknown key '%s' (expected 'descr', 'fortran_order', 'shape')", odb_shown(key, sh, sizeof sh));
    }
    if (*have) { h->s = k0; return HFAIL(h, "key '%s' given twice", key); }
    *have = 1;
    ws(h);
    if (h->s >= h->end || *h->s != ':') return HFAIL(h, "expected ':' after '%s', got %s", key, here(h, g, sizeof g));
    h->s++;
    ws(h);
    if (!strcmp(key, "descr")) {
      const char *d0 = h->s;
      if (h->s < h->end && (*h->s == '[' || *h->s == '('))
        return HFAIL(h, "a structured dtype is not read (odebench reads '<f8' float64 and '<c16' complex128)");
      ODB_TRY(str(h, h->descr, sizeof h->descr, "the dtype"));
      if (strcmp(h->descr, "<f8") && strcmp(h->descr, "<c16")) {
        char sh[48];
        odb_shown(h->descr, sh, sizeof sh);
        h->s = d0;
        if (h->descr[0] == '>' && (!strcmp(h->descr + 1, "f8") || !strcmp(h->descr + 1, "c16")))
          return HFAIL(h, "dtype '%s' is big-endian (odebench reads little-endian '<f8' and '<c16')", sh);
        return HFAIL(h, "dtype '%s' cannot be held (odebench reads '<f8' float64 and '<c16' complex128)", sh);
      }
    } else if (!strcmp(key, "fortran_order")) {
      ODB_TRY(boolean(h, &h->fortran));
    } else {
      ODB_TRY(tuple(h));
    }
    ws(h);
    if (h->s < h->end && *h->s == ',') { h->s++; continue; }
    if (h->s < h->end && *h->s == '}') break;
    return HFAIL(h, "expected ',' or '}' in the header dict, got %s", here(h, g, sizeof g));
  }
  const char *missing = !h->have_descr ? "descr" : !h->have_fortran ? "fortran_order" : !h->have_shape ? "shape" : NULL;
  if (missing) return HFAIL(h, "the header dict has no '%s'", missing);
  h->s++;
  ws(h);
  if (h->s < h->end) return HFAIL(h, "expected only spaces after the header dict, got %s", here(h, g, sizeof g));
  return ODB_OK;
}

/* }====== */

odb_status odb_npy_read(const char *path, odb_npy *a)
{
  char sh[ODB_SHOWN_NAME];
  unsigned char pre[12];
  char *hdr = NULL;
  odb_status st = ODB_OK;
  struct stat sb;
  hp h;
  memset(a, 0, sizeof *a);
  memset(&h, 0, sizeof h);
  odb_shown(path, sh, sizeof sh);
  h.shown = sh;
  FILE *f = fopen(path, "rb");
  if (!f) return ODB_FAIL(ODB_ERR_IO, "%s: cannot open: %s", sh, strerror(errno));
  if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) { st = ODB_FAIL(ODB_ERR_IO, "%s: not a regular file", sh); goto done; }
  size_t size = (size_t)sb.st_size, got = fread(pre, 1, sizeof pre, f);
  if (got < 10 || memcmp(pre, magic, 6)) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset 0: not a .npy file (expected the magic \\x93NUMPY and a 10-byte preamble)", sh);
    goto done;
  }
  int major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset 6: format version %d.%d is not read (1.0, 2.0, 3.0)", sh, major, minor);
    goto done;
  }
  size_t hstart = major == 1 ? 10 : 12, hl;
  if (got < hstart) { st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset %zu: the file ends inside the preamble", sh, got); goto done; }
  hl = major == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8
                  : (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  if (hl > size - hstart) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset 8: the header length %zu runs past the end of the file (%zu bytes)", sh, hl, size);
    goto done;
  }
  if (!(hdr = malloc(hl + 1)) || fseek(f, (long)hstart, SEEK_SET) || fread(hdr, 1, hl, f) != hl) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset %zu: cannot read the %zu-byte header", sh, hstart, hl);
    goto done;
  }
  h.s = h.start = hdr; h.end = hdr + hl; h.base = (long)hstart;
  if ((st = parse_dict(&h)) != ODB_OK) goto done;
  size_t count, bytes, dpos = hstart + hl;
  size_t item = !strcmp(h.descr, "<c16") ? 16 : 8;
  if (odb_size_mul(&count, (size_t)h.shape[0], (size_t)h.shape[1]) || odb_size_mul(&bytes, count, item)) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset %zu: shape (%ld, %ld) of '%s' needs more bytes than a size_t holds",
                  sh, hstart, h.shape[0], h.shape[1], h.descr);
    goto done;
  }
  if (bytes > size - dpos) {
    char shp[64];
    if (h.ndim == 1) snprintf(shp, sizeof shp, "(%ld,)", h.shape[0]);
    else snprintf(shp, sizeof shp, "(%ld, %ld)", h.shape[0], h.shape[1]);
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset %zu: the data of shape %s '%s' needs %zu bytes, the file holds "
                  "%zu after the header (truncated)", sh, dpos, shp, h.descr, bytes, size - dpos);
    goto done;
  }
  if (bytes < size - dpos) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset %zu: %zu bytes after the data (a .npy file ends with its data)",
                  sh, dpos + bytes, size - dpos - bytes);
    goto done;
  }
  char what[ODB_SHOWN_NAME + 32];
  snprintf(what, sizeof what, "%s: the array", sh);
  if ((st = odb_topo_check_memory((double)bytes, what)) != ODB_OK) goto done;
  if (!(a->data = malloc(bytes ? bytes : 1))) { st = ODB_FAIL(ODB_ERR_NOMEM, "%s (%zu bytes)", what, bytes); goto done; }
  if (fread(a->data, 1, bytes, f) != bytes) {
    st = ODB_FAIL(ODB_ERR_IO, "%s: byte offset %zu: read failed", sh, dpos);
    goto done;
  }
  a->dtype = item == 16 ? ODB_NPY_C16 : ODB_NPY_F8;
  a->ndim = h.ndim; a->shape[0] = h.shape[0]; a->shape[1] = h.shape[1];
  a->fortran = h.fortran; a->count = count; a->version = major;
done:
  fclose(f);
  free(hdr);
  if (st != ODB_OK) odb_npy_free(a);
  return st;
}

void odb_npy_free(odb_npy *a)
{
  free(a->data);
  a->data = NULL;
}

odb_status odb_npy_write(const char *path, const odb_npy *a)
{
  char sh[ODB_SHOWN_NAME], dict[160], shape[64];
  size_t count, bytes;
  odb_wfile w;
  if (a->ndim != 1 && a->ndim != 2)
    return ODB_FAIL(ODB_ERR_ARG, "%s: a %d-D array is not written (1-D and 2-D only)", odb_shown(path, sh, sizeof sh), a->ndim);
  long s1 = a->ndim == 2 ? a->shape[1] : 1;
  if (a->shape[0] < 0 || s1 < 0 || odb_size_mul(&count, (size_t)a->shape[0], (size_t)s1) ||
      odb_size_mul(&bytes, count, a->dtype == ODB_NPY_C16 ? 16 : 8))
    return ODB_FAIL(ODB_ERR_ARG, "%s: shape (%ld, %ld) is not a valid size", odb_shown(path, sh, sizeof sh), a->shape[0], s1);
  if (a->ndim == 1) snprintf(shape, sizeof shape, "(%ld,)", a->shape[0]);
  else snprintf(shape, sizeof shape, "(%ld, %ld)", a->shape[0], a->shape[1]);
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                    odb_npy_dtype_name(a->dtype), a->fortran && a->ndim == 2 ? "True" : "False", shape);
  size_t total = 10 + (size_t)dl + 1;       /* a header this short is always 1.0 */
  size_t pad = (64 - total % 64) % 64, hl = (size_t)dl + pad + 1;
  unsigned char pre[10];
  memcpy(pre, magic, 6);
  pre[6] = 1; pre[7] = 0; pre[8] = (unsigned char)(hl & 0xff); pre[9] = (unsigned char)(hl >> 8);
  ODB_TRY(odb_wfile_open(&w, path));
  fwrite(pre, 1, sizeof pre, w.f);
  fwrite(dict, 1, (size_t)dl, w.f);
  for (size_t k = 0; k < pad; k++) fputc(' ', w.f);
  fputc('\n', w.f);
  if (bytes) fwrite(a->data, 1, bytes, w.f);
  return odb_wfile_commit(&w);
}
