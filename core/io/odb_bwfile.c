/* odb_bwfile.c - the bandwidth cache files: a reader for the flat JSON
** objects they hold, and whole-or-nothing writes. The writer side is
** odb_json.h; the figures and their checks are odb_bandwidth.c. */
#include "odb_bwfile.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "odb_cachedir.h"
#include "odb_status.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* {====================================================================
** A minimal reader for the flat objects the cache files hold
** ===================================================================== */

/* Skips JSON white space. */
static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
  return p;
}

/* Appends code point c (< 0x10000) to out as UTF-8 if it fits. */
static void put_utf8(char *out, size_t cap, size_t *len, unsigned c) {
  char tmp[3];
  size_t n;
  if (c < 0x80) { tmp[0] = (char)c; n = 1; }
  else if (c < 0x800) {
    tmp[0] = (char)(0xc0 | (c >> 6)); tmp[1] = (char)(0x80 | (c & 0x3f));
    n = 2;
  } else {
    tmp[0] = (char)(0xe0 | (c >> 12));
    tmp[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    tmp[2] = (char)(0x80 | (c & 0x3f));
    n = 3;
  }
  if (*len + n < cap) {
    memcpy(out + *len, tmp, n);
    *len += n;
  }
}

/* The value of hex digit c, -1 for anything else (also '\0'). */
static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/*
** Reads a string literal at p (which must point at '"') into out (truncated
** to cap-1 bytes). Returns the position after the closing quote, or NULL.
*/
static const char *read_string(const char *p, char *out, size_t cap) {
  size_t len = 0;
  if (*p != '"') return NULL;
  for (++p; *p && *p != '"'; ++p) {
    char c = *p;
    if (c == '\\') {
      unsigned u;
      switch (*++p) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'u':   /* exactly four hex digits, all before the string ends */
        u = 0;
        for (int i = 1; i <= 4; ++i) {
          int d = hex_digit(p[i]);
          if (d < 0) return NULL;
          u = u * 16 + (unsigned)d;
        }
        if (u == 0) return NULL;   /* no NUL inside a C string */
        put_utf8(out, cap, &len, u);
        p += 4;
        continue;
      case '\0': return NULL;
      default: c = *p;   /* \" \\ \/ */
      }
    }
    if (len + 1 < cap) out[len++] = c;
  }
  if (*p != '"') return NULL;
  out[len] = '\0';
  return p + 1;
}

/* One member: its key and a string (s) or a number (s NULL). */
/* Parses {"key": string-or-number, ...}; 1 when the text is such an object. */
int odb_bwfile_parse(const char *p, odb_bwfile_member fn, void *ud) {
  char key[64], s[256];
  p = skip_ws(p);
  if (*p++ != '{') return 0;
  for (;;) {
    p = skip_ws(p);
    if (*p == '}') break;
    if (!(p = read_string(p, key, sizeof key))) return 0;
    p = skip_ws(p);
    if (*p++ != ':') return 0;
    p = skip_ws(p);
    if (*p == '"') {
      if (!(p = read_string(p, s, sizeof s))) return 0;
      fn(ud, key, s, 0);
    } else {
      char *end;
      double v = strtod(p, &end);
      if (end == p) return 0;
      fn(ud, key, NULL, v);
      p = end;
    }
    p = skip_ws(p);
    if (*p == ',') ++p;
    else if (*p != '}') return 0;
  }
  return 1;
}

/* Counts outside 0..2^40 (or not integers) read as -1, which no check
   accepts; converting them to an integer would be undefined. */
long long odb_bwfile_count(double v) {
  return isfinite(v) && v >= 0 && v <= 1099511627776.0 && v == floor(v)
         ? (long long)v : -1;
}

/* Reads the whole (small) file at path; NULL when absent or too large. */
char *odb_bwfile_slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf;
  size_t n;
  if (!f) return NULL;
  buf = malloc(16384);
  if (!buf) {
    fclose(f);
    return NULL;
  }
  n = fread(buf, 1, 16383, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The cache directory (created), or 0 when there is none: a cache that
   cannot be used is no error, the figures are then measured each run. */
int odb_bwfile_path(const char *name, char *dir, char *path, size_t cap) {
  int ok = odb_cache_dir("", dir, cap) == ODB_OK &&
           snprintf(path, cap, "%s/%s", dir, name) < (int)cap;
  odb_clear_error();
  return ok;
}

/* Writes path through a temporary file and rename(); 0 on failure (the
   temporary file is removed), 1 on success. */
int odb_bwfile_store(const char *dir, const char *path,
                      void (*write)(FILE *, const void *), const void *ud) {
  char tmp[PATH_MAX];
  FILE *f;
  int fd, ok;
  if (snprintf(tmp, sizeof tmp, "%s/.bandwidth.json.tmp.%ld", dir,
               (long)getpid()) >= (int)sizeof tmp)
    return 0;
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    return 0;
  }
  write(f, ud);
  ok = !ferror(f) && fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = (fclose(f) == 0) && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  return ok;
}

/* See odb_bwfile.h. Polls a non-blocking flock every 20 ms, so that a
   holder stopped for good costs wait_s, not a hang. */
int odb_bwfile_lock(const char *dir, const char *name, double wait_s) {
  char path[PATH_MAX];
  struct timespec t0, t, nap = {0, 20000000L};
  int fd;
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
    return -1;
  fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec)
        > wait_s)
      break;
    nanosleep(&nap, NULL);
  }
  close(fd);
  return -1;
}

/* See odb_bwfile.h. */
void odb_bwfile_unlock(int fd) {
  if (fd < 0) return;
  (void)flock(fd, LOCK_UN);
  close(fd);
}

/* }==================================================================== */
