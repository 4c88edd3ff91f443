/* odb_emit.c - the text buffer of the kernel generators (see odb_emit.h). */
#include "odb_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the terminating NUL; 0 when out of memory
   (remembered: everything after it is dropped). */
static int reserve(odb_emit *e, size_t n) {
  size_t cap;
  char *nb;
  if (e->oom) return 0;
  if (e->len + n + 1 <= e->cap) return 1;
  cap = e->cap ? e->cap : 4096;
  while (cap < e->len + n + 1) cap *= 2;
  nb = realloc(e->buf, cap);
  if (!nb) {
    e->oom = 1;
    return 0;
  }
  e->buf = nb;
  e->cap = cap;
  return 1;
}

/* 1 when the next byte begins a line. */
static int at_line_start(const odb_emit *e) {
  return e->len == 0 || e->buf[e->len - 1] == '\n';
}

/* Appends n bytes as they are, counting their newlines. */
static void raw(odb_emit *e, const char *s, size_t n) {
  if (n == 0 || !reserve(e, n)) return;
  memcpy(e->buf + e->len, s, n);
  e->len += n;
  e->buf[e->len] = '\0';
  for (size_t i = 0; i < n; ++i)
    if (s[i] == '\n') {
      ++e->lines;
      ++e->at_line;
    }
}

/* Appends n bytes with e->indent spaces before each line they begin that
   is not empty. */
static void put_indented(odb_emit *e, const char *s, size_t n) {
  static const char spaces[] = "                                ";
  size_t i = 0;
  if (e->indent <= 0) {
    raw(e, s, n);
    return;
  }
  while (i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t end = nl ? (size_t)(nl - s) + 1 : n;
    if (at_line_start(e) && s[i] != '\n')
      for (int k = e->indent; k > 0; k -= (int)sizeof spaces - 1)
        raw(e, spaces, k < (int)sizeof spaces - 1 ? (size_t)k
                                                   : sizeof spaces - 1);
    raw(e, s + i, end - i);
    i = end;
  }
}

/* The file name of a path ("../gpu/ode/gen_rk_common.c": the last part;
   file names are unique across the tree). */
static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/*
** With ODEBENCH_GEN_LINES, a #line directive saying that the next line is
** line `line` of file, unless NVRTC would count it so already. Only at the
** start of a line that does not continue a macro definition (a directive
** there would end the macro).
*/
static void map_to(odb_emit *e, const char *file, int line) {
  char d[320];
  int n;
  if (!e->map || !file || !at_line_start(e)) return;
  if (e->len >= 2 && e->buf[e->len - 2] == '\\') return;
  file = base_name(file);
  if (e->at_file && e->at_line == line && strcmp(e->at_file, file) == 0)
    return;
  n = snprintf(d, sizeof d, "#line %d \"%s\"\n", line, file);
  if (n < 0 || (size_t)n >= sizeof d) return;
  raw(e, d, (size_t)n);
  e->at_file = file;
  e->at_line = line;
}

void odb_emit_init(odb_emit *e) {
  const char *v = getenv("ODEBENCH_GEN_LINES");
  memset(e, 0, sizeof *e);
  e->map = v && *v && strcmp(v, "0") != 0;
}

void odb_emit_at(odb_emit *e, const char *file, int line, const char *fmt,
                 ...) {
  char small[1024], *t = small;
  va_list ap;
  int n;
  if (e->oom) return;
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    e->oom = 1;
    return;
  }
  if ((size_t)n >= sizeof small) {
    t = malloc((size_t)n + 1);
    if (!t) {
      e->oom = 1;
      return;
    }
    va_start(ap, fmt);
    vsnprintf(t, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  map_to(e, file, line);
  put_indented(e, t, (size_t)n);
  if (t != small) free(t);
}

void odb_emit_text_at(odb_emit *e, const char *file, int line,
                      const char *text) {
  map_to(e, file, line);
  put_indented(e, text, strlen(text));
}

/* The value of identifier s[0..n) in subst, or NULL. */
static const char *lookup(const char *const *subst, const char *s, size_t n) {
  for (int i = 0; subst && subst[i]; i += 2)
    if (strlen(subst[i]) == n && memcmp(subst[i], s, n) == 0)
      return subst[i + 1] ? subst[i + 1] : "";
  return NULL;
}

static int ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}

/*
** One line s[0..n) (its newline included) of a .cuh file with subst
** applied: the whole line replaced when it is one of the names, else each
** identifier that is one. Numbers (0x1fu, 1e9) are copied whole so that
** their letters are not taken for identifiers.
*/
static void put_cuh_line(odb_emit *e, const char *s, size_t n,
                         const char *const *subst) {
  size_t i = 0, j, run = 0;
  const char *v;
  if (subst) {   /* a name alone on its line */
    size_t a = 0, b = n;
    while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
    while (b > a && (s[b - 1] == '\n' || s[b - 1] == ' ' || s[b - 1] == '\t'))
      --b;
    for (j = a; j < b && ident_char(s[j]); ++j) {}
    if (a < b && j == b && ident_start(s[a]) &&
        (v = lookup(subst, s + a, b - a)) != NULL) {
      put_indented(e, v, strlen(v));
      return;
    }
  }
  while (i < n) {
    if (subst && ident_start(s[i])) {
      for (j = i + 1; j < n && ident_char(s[j]); ++j) {}
      if ((v = lookup(subst, s + i, j - i)) != NULL) {
        put_indented(e, s + run, i - run);
        put_indented(e, v, strlen(v));
        run = j;
      }
      i = j;
    } else if (s[i] >= '0' && s[i] <= '9') {
      for (j = i + 1; j < n && (ident_char(s[j]) || s[j] == '.'); ++j) {}
      i = j;
    } else {
      ++i;
    }
  }
  put_indented(e, s + run, n - run);
}

void odb_emit_cuh(odb_emit *e, const odb_cuh *c, const char *const *subst) {
  const char *s = c->text;
  const odb_cuh_line *m = c->lines;
  const char *file = NULL;
  int line = 0;
  size_t at = 0, n = strlen(s);
  while (at < n && !e->oom) {
    const char *nl = memchr(s + at, '\n', n - at);
    size_t end = nl ? (size_t)(nl - s) + 1 : n;
    /* the file and line this line of the text comes from */
    while (m && m->file && m->at <= at) {
      file = m->file;
      line = m->line;
      ++m;
    }
    map_to(e, file, line);
    put_cuh_line(e, s + at, end - at, subst);
    at = end;
    ++line;
  }
}

void odb_emit_foreign(odb_emit *e, const char *label, const char *what,
                      const char *text) {
  char d[64];
  int n;
  /* unlike the directives of ODEBENCH_GEN_LINES, these are always there
     (the kernel cache keys of existing sources depend on them) */
  odb_emit_at(e, NULL, 0, "#line 1 \"%s:%s\"\n", label, what);
  raw(e, text, strlen(text));
  if (e->len > 0 && e->buf[e->len - 1] != '\n') raw(e, "\n", 1);
  n = snprintf(d, sizeof d, "#line %d \"" ODB_EMIT_SOURCE_NAME "\"\n",
               e->lines + 2);
  if (n > 0 && (size_t)n < sizeof d) raw(e, d, (size_t)n);
  e->at_file = ODB_EMIT_SOURCE_NAME;
  e->at_line = e->lines + 1;
}

void odb_emit_indent(odb_emit *e, int delta) {
  e->indent += delta;
  if (e->indent < 0) e->indent = 0;
}

char *odb_emit_take(odb_emit *e) {
  char *t = e->buf;
  if (e->oom) {
    free(t);
    t = NULL;
  } else if (!t) {
    t = calloc(1, 1);   /* nothing written: the empty text */
  }
  memset(e, 0, sizeof *e);
  return t;
}

void odb_emit_free(odb_emit *e) {
  free(e->buf);
  memset(e, 0, sizeof *e);
}
