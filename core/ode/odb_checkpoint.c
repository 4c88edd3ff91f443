/* odb_checkpoint.c - writing and reading a solver's checkpoint (the format
   is in odb_checkpoint.h). */
#include "odb_status.h"
#include "odb_backend.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_checkpoint.h"
#include "odb_sha256.h"
#include "odb_shown.h"
#include "odb_size.h"
#include "odb_wfile.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char MAGIC[8] = { 'O', 'D', 'B', 'C', 'K', 'P', 'T', '\n' };

enum {
  OFF_VERSION = 8, OFF_FLAGS = 12, OFF_N = 16, OFF_M = 24,
  OFF_KEY = 32, OFF_KIND = 288, OFF_PARAM = 352, OFF_METHOD = 416,
  OFF_VARIANT = 480, OFF_BACKEND = 544, OFF_T = 608, OFF_HNEXT = 616,
  OFF_H = 624, OFF_ERR = 632, OFF_COUNTS = 640, HDR = 672,
  KEY_LEN = 256, NAME_LEN = 64, DIGEST = 32,
  FLAG_F0 = 1
};

/* Doubles encoded or decoded per chunk of a vector (32 KiB). */
#define CHUNK 4096

/* {====== little-endian fields */

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double x) {
  uint64_t v;
  memcpy(&v, &x, sizeof v);   /* the IEEE-754 bits (C's double on every
                                 platform this builds on) */
  put_u64(p, v);
}

static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

static double get_f64(const uint8_t *p) {
  uint64_t v = get_u64(p);
  double x;
  memcpy(&x, &v, sizeof x);
  return x;
}

/* Copies s NUL-padded into the field of cap bytes; -1 when it does not fit
   with a NUL after it. */
static int put_text(uint8_t *p, size_t cap, const char *s) {
  size_t len = strlen(s);
  if (len >= cap) return -1;
  memset(p, 0, cap);
  memcpy(p, s, len);
  return 0;
}

/* The text field of cap bytes as a C string in out[cap + 1] (a field
   without its NUL is cut at cap). */
static const char *get_text(const uint8_t *p, size_t cap, char *out) {
  memcpy(out, p, cap);
  out[cap] = '\0';
  return out;
}

/* }====== */

/* {====== writing */

/* Writes x[0..n) encoded, feeding the digest. */
static int write_doubles(FILE *f, odb_sha256_ctx *c, const double *x,
                         long n) {
  uint8_t buf[CHUNK * 8];
  for (long i = 0; i < n; i += CHUNK) {
    long k = n - i < CHUNK ? n - i : CHUNK;
    for (long j = 0; j < k; ++j) put_f64(buf + 8 * j, x[i + j]);
    odb_sha256_update(c, buf, (size_t)k * 8);
    if (fwrite(buf, 8, (size_t)k, f) != (size_t)k) return -1;
  }
  return 0;
}

/*
** The header of s (flags says whether F0 follows); ODB_ERR_ARG when a
** name does not fit its field.
*/
static odb_status make_header(const odb_solver *s, int flags, uint8_t *h) {
  const odb_problem *p = s->problem;
  char key[512];
  memset(h, 0, HDR);
  memcpy(h, MAGIC, sizeof MAGIC);
  put_u32(h + OFF_VERSION, ODB_CHECKPOINT_VERSION);
  put_u32(h + OFF_FLAGS, (uint32_t)flags);
  put_u64(h + OFF_N, (uint64_t)s->n);
  put_u32(h + OFF_M, (uint32_t)s->m);
  odb_problem_key(p, key, sizeof key);
  if (put_text(h + OFF_KEY, KEY_LEN, key) ||
      put_text(h + OFF_KIND, NAME_LEN, p->type->name) ||
      put_text(h + OFF_METHOD, NAME_LEN, s->method->name) ||
      put_text(h + OFF_VARIANT, NAME_LEN, s->variant->name) ||
      put_text(h + OFF_BACKEND, NAME_LEN, s->backend->ops->name))
    return ODB_FAIL(ODB_ERR_ARG, "a name of problem %s, method %s or "
                    "variant %s is too long for a checkpoint", p->label,
                    s->method->name, s->variant->name);
  for (int i = 0; i < 8; ++i) put_f64(h + OFF_PARAM + 8 * i, p->param[i]);
  put_f64(h + OFF_T, s->t);
  put_f64(h + OFF_HNEXT, s->h_next);
  put_f64(h + OFF_H, s->stats.h);
  put_f64(h + OFF_ERR, s->stats.err_last);
  put_u64(h + OFF_COUNTS, (uint64_t)s->stats.steps);
  put_u64(h + OFF_COUNTS + 8, (uint64_t)s->stats.accepted);
  put_u64(h + OFF_COUNTS + 16, (uint64_t)s->stats.rejected);
  put_u64(h + OFF_COUNTS + 24, (uint64_t)s->stats.nfev);
  return ODB_OK;
}

/*
** y and F[0] on the host: the solver's own vectors on a host-memory
** backend, else copies in *buf (2n doubles, freed by the caller).
*/
static odb_status host_vectors(odb_solver *s, int f0, const double **y,
                               const double **F0, double **buf) {
  odb_backend *b = s->backend;
  size_t bytes;
  *buf = NULL;
  if (s->variant->gather) ODB_TRY(s->variant->gather(s));   /* whole y, F0 */
  if (b->host_memory) {
    *y = s->y;
    *F0 = s->F[0];
    return ODB_OK;
  }
  if (odb_size_mul(&bytes, (size_t)s->n, 2 * sizeof(double)) ||
      !(*buf = malloc(bytes)))
    return ODB_FAIL(ODB_ERR_NOMEM, "checkpoint: a host copy of the state "
                    "(%ld doubles)", s->n);
  ODB_TRY(odb_solver_get_state(s, *buf));   /* waits for the device */
  if (f0)
    ODB_TRY(b->ops->to_host(b, *buf + s->n, s->F[0],
                            (size_t)s->n * sizeof(double)));
  *y = *buf;
  *F0 = *buf + s->n;
  return ODB_OK;
}

odb_status odb_solver_checkpoint_write(odb_solver *s, const char *path) {
  uint8_t h[HDR], dig[DIGEST];
  const double *y = NULL, *F0 = NULL;
  double *buf = NULL;
  int flags = s->fsal_ready ? FLAG_F0 : 0;
  odb_sha256_ctx c;
  odb_wfile w;
  odb_status st;
  char why[512];
  memset(&w, 0, sizeof w);
  st = make_header(s, flags, h);
  if (st == ODB_OK) st = host_vectors(s, flags & FLAG_F0, &y, &F0, &buf);
  if (st == ODB_OK) st = odb_wfile_open(&w, path);
  if (st != ODB_OK) goto fail;
  odb_sha256_init(&c);
  odb_sha256_update(&c, h, HDR);
  if (fwrite(h, 1, HDR, w.f) != HDR ||
      write_doubles(w.f, &c, y, s->n) ||
      ((flags & FLAG_F0) && write_doubles(w.f, &c, F0, s->n)))
    goto write_error;
  odb_sha256_final(&c, dig);
  if (fwrite(dig, 1, DIGEST, w.f) != DIGEST) goto write_error;
  st = odb_wfile_commit(&w);   /* checks the stream, syncs and renames */
  if (st != ODB_OK) goto fail;
  free(buf);
  return ODB_OK;
write_error:
  st = ODB_FAIL(ODB_ERR_IO, "%s: writing failed: %s (nothing written)",
                w.shown, strerror(errno));
fail:
  odb_wfile_abort(&w);
  free(buf);
  snprintf(why, sizeof why, "%s", odb_last_error());
  {   /* odb_wfile's messages begin with the name: it goes in quotes */
    char sh[ODB_SHOWN_NAME];
    size_t len;
    const char *rest = why;
    odb_shown(path, sh, sizeof sh);
    len = strlen(sh);
    if (strncmp(why, sh, len) == 0 && strncmp(why + len, ": ", 2) == 0)
      rest = why + len + 2;
    return ODB_FAIL(st, "checkpoint '%s': %s", sh, rest);
  }
}

/* }====== */

/* {====== reading */

/* What read_file found: the header and, when n matched, the vectors. */
typedef struct ckpt {
  uint8_t h[HDR];
  long n;
  int flags;
  double *y, *F0;        /* n each, in one block at y; NULL unless read */
} ckpt;

/* Reads x[0..n) encoded from f into x (NULL: only digested). */
static int read_doubles(FILE *f, odb_sha256_ctx *c, double *x, long n) {
  uint8_t buf[CHUNK * 8];
  for (long i = 0; i < n; i += CHUNK) {
    long k = n - i < CHUNK ? n - i : CHUNK;
    if (fread(buf, 8, (size_t)k, f) != (size_t)k) return -1;
    odb_sha256_update(c, buf, (size_t)k * 8);
    if (x)
      for (long j = 0; j < k; ++j) x[i + j] = get_f64(buf + 8 * j);
  }
  return 0;
}

/*
** Reads and checks the file's frame: magic, version, length against the
** header's n and flags, and the digest. The vectors are kept (k->y) when
** the file's n is want_n; otherwise only digested, and the caller refuses
** the size. sh is the file name shown escaped.
*/
static odb_status read_file(const char *path, const char *sh, long want_n,
                            ckpt *k) {
  FILE *f = fopen(path, "rb");
  struct stat sb;
  uint8_t dig[DIGEST], want[DIGEST];
  uint64_t n64;
  uint32_t version;
  size_t vec, body, total;
  odb_sha256_ctx c;
  odb_status st = ODB_OK;
  int e;
  memset(k, 0, sizeof *k);
  if (!f) {
    e = errno;
    return ODB_FAIL(ODB_ERR_IO, "checkpoint '%s': cannot open it: %s", sh,
                    strerror(e));
  }
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is not a regular file", sh);
    goto done;
  }
  if (fread(k->h, 1, HDR, f) != HDR) {
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is truncated: %lld bytes, "
                  "shorter than the %d of a header", sh,
                  (long long)sb.st_size, HDR);
    goto done;
  }
  if (memcmp(k->h, MAGIC, sizeof MAGIC) != 0) {
    st = ODB_FAIL(ODB_ERR_ARG, "'%s' is not an odebench checkpoint (it does "
                  "not begin with ODBCKPT)", sh);
    goto done;
  }
  version = get_u32(k->h + OFF_VERSION);
  if (version != ODB_CHECKPOINT_VERSION) {
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' has format version %u; this "
                  "build reads version %d", sh, (unsigned)version,
                  ODB_CHECKPOINT_VERSION);
    goto done;
  }
  n64 = get_u64(k->h + OFF_N);
  k->flags = (int)get_u32(k->h + OFF_FLAGS);
  if (n64 < 1 || n64 > (uint64_t)LONG_MAX ||
      odb_size_mul(&vec, (size_t)n64, 8) ||
      odb_size_mul(&body, vec, (k->flags & FLAG_F0) ? 2 : 1) ||
      odb_size_add(&total, body, HDR + DIGEST) ||
      (k->flags & ~FLAG_F0) != 0) {
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is corrupted: its header "
                  "holds n = %llu and flags %u", sh,
                  (unsigned long long)n64, (unsigned)k->flags);
    goto done;
  }
  k->n = (long)n64;
  if ((uint64_t)sb.st_size != (uint64_t)total) {
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is %s: %lld bytes, its "
                  "header (n = %ld) says %zu", sh,
                  (uint64_t)sb.st_size < (uint64_t)total ? "truncated"
                                                         : "too long",
                  (long long)sb.st_size, k->n, total);
    goto done;
  }
  if (k->n == want_n) {
    k->y = malloc(body);
    if (!k->y) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "checkpoint '%s': %zu bytes for the "
                    "state", sh, body);
      goto done;
    }
    if (k->flags & FLAG_F0) k->F0 = k->y + k->n;
  }
  odb_sha256_init(&c);
  odb_sha256_update(&c, k->h, HDR);
  if (read_doubles(f, &c, k->y, k->n) ||
      ((k->flags & FLAG_F0) && read_doubles(f, &c, k->F0, k->n)) ||
      fread(want, 1, DIGEST, f) != DIGEST) {
    e = ferror(f) ? errno : 0;
    st = ODB_FAIL(ODB_ERR_IO, "checkpoint '%s': a read failed%s%s", sh,
                  e ? ": " : " (the file shrank while read)",
                  e ? strerror(e) : "");
    goto done;
  }
  odb_sha256_final(&c, dig);
  if (memcmp(dig, want, DIGEST) != 0)
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is corrupted: its contents "
                  "do not match its SHA-256", sh);
done:
  fclose(f);
  if (st != ODB_OK) {
    free(k->y);
    k->y = k->F0 = NULL;
  }
  return st;
}

/* ODB_OK when the checkpoint k is of s's problem, size and method. */
static odb_status check_match(const odb_solver *s, const ckpt *k,
                              const char *sh) {
  const odb_problem *p = s->problem;
  char key[512], theirs[KEY_LEN + 1], name[NAME_LEN + 1];
  uint32_t m = get_u32(k->h + OFF_M);
  get_text(k->h + OFF_KEY, KEY_LEN, theirs);
  odb_problem_key(p, key, sizeof key);
  if (strcmp(get_text(k->h + OFF_KIND, NAME_LEN, name), p->type->name) != 0)
    return ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is of another problem: "
                    "%s, not %s", sh, theirs, key);
  if (k->n != s->n)
    return ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is of another size: n = "
                    "%ld (%s), not n = %ld (%s)", sh, k->n, theirs, s->n,
                    key);
  if (strcmp(theirs, key) != 0)
    return ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is of another problem: "
                    "%s, not %s", sh, theirs, key);
  for (int i = 0; i < 8; ++i) {
    double v = get_f64(k->h + OFF_PARAM + 8 * i);
    if (memcmp(&v, &p->param[i], sizeof v) != 0) {
      char pn[NAME_LEN];
      if (p->type->params && i < p->type->nparams)
        snprintf(pn, sizeof pn, "%s", p->type->params[i].name);
      else
        snprintf(pn, sizeof pn, "P%d", i);   /* ob.problem's params */
      return ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is of another problem: "
                      "%s with parameter %s = %.17g, not %.17g", sh, theirs,
                      pn, v, p->param[i]);
    }
  }
  get_text(k->h + OFF_METHOD, NAME_LEN, name);
  if (strcmp(name, s->method->name) != 0)
    return ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is of another method: %s, "
                    "not %s", sh, name, s->method->name);
  if (m != (uint32_t)s->m)
    return ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' is of %s with m = %u "
                    "corrector steps, not m = %d", sh, name, (unsigned)m,
                    s->m);
  return ODB_OK;
}

/* Puts the checked checkpoint k into s. */
static odb_status restore(odb_solver *s, const ckpt *k) {
  odb_backend *b = s->backend;
  const uint8_t *h = k->h;
  odb_solver_set_state(s, get_f64(h + OFF_T), k->y);
  if (k->F0) {
    if (b->host_memory)
      memcpy(s->F[0], k->F0, (size_t)s->n * sizeof(double));
    else
      ODB_TRY(b->ops->to_device(b, s->F[0], k->F0,
                                (size_t)s->n * sizeof(double)));
    s->fsal_ready = 1;
  }
  s->h_next = get_f64(h + OFF_HNEXT);
  s->stats.t = s->t;
  s->stats.h = get_f64(h + OFF_H);
  s->stats.err_last = get_f64(h + OFF_ERR);
  s->stats.steps = (long)get_u64(h + OFF_COUNTS);
  s->stats.accepted = (long)get_u64(h + OFF_COUNTS + 8);
  s->stats.rejected = (long)get_u64(h + OFF_COUNTS + 16);
  s->stats.nfev = (long)get_u64(h + OFF_COUNTS + 24);
  return ODB_OK;
}

odb_status odb_solver_checkpoint_read(odb_solver *s, const char *path) {
  char sh[ODB_SHOWN_NAME];
  ckpt k;
  odb_status st;
  double t, hn;
  odb_shown(path, sh, sizeof sh);
  ODB_TRY(read_file(path, sh, s->n, &k));
  st = check_match(s, &k, sh);
  t = get_f64(k.h + OFF_T);
  hn = get_f64(k.h + OFF_HNEXT);
  if (st == ODB_OK && (!isfinite(t) || !(hn >= 0) || !isfinite(hn)))
    st = ODB_FAIL(ODB_ERR_ARG, "checkpoint '%s' holds t = %g and h = %g: "
                  "a finite time and a finite h >= 0 expected", sh, t, hn);
  if (st == ODB_OK) st = restore(s, &k);
  free(k.y);
  return st;
}

/* }====== */
