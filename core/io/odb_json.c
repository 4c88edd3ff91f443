/* odb_json.c - a streaming JSON writer with two-space indentation. */
#include "odb_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH ((int)(sizeof(((odb_json *)0)->first) / sizeof(int)))

/* Index into first[] for depth d, clamped so deep nesting never overflows
   (output past the limit is still valid JSON, only the commas may suffer). */
static int slot(int d) {
  if (d < 0) return 0;
  return d < JSON_MAX_DEPTH ? d : JSON_MAX_DEPTH - 1;
}

/* Two spaces per open container. */
static void indent(odb_json *j) {
  for (int i = 0; i < j->depth; ++i) fputs("  ", j->f);
}

/*
** Starts a value: the separator from the previous member, a newline and the
** indentation inside a container, and the key when one is given.
*/
static void prefix(odb_json *j, const char *key) {
  int s = slot(j->depth);
  if (j->depth > 0) {
    fputs(j->first[s] ? "\n" : ",\n", j->f);
    indent(j);
  } else if (!j->first[0]) {
    fputc('\n', j->f);
  }
  j->first[s] = 0;
  if (key) {
    odb_json_write_string(j->f, key);
    fputs(": ", j->f);
  }
}

/* Opens a container whose members go one level deeper. */
static void open_container(odb_json *j, const char *key, char c) {
  prefix(j, key);
  fputc(c, j->f);
  ++j->depth;
  j->first[slot(j->depth)] = 1;
}

/* Closes a container; empty ones stay on one line ("{}" or "[]"). */
static void close_container(odb_json *j, char c) {
  int empty = j->first[slot(j->depth)];
  if (j->depth > 0) --j->depth;
  if (!empty) {
    fputc('\n', j->f);
    indent(j);
  }
  fputc(c, j->f);
  if (j->depth == 0) fputc('\n', j->f);
}

/* f stays owned by the caller; nothing is written yet. */
void odb_json_init(odb_json *j, FILE *f) {
  memset(j, 0, sizeof *j);
  j->f = f;
  j->first[0] = 1;
}

/* key is NULL inside arrays and at the top level. */
void odb_json_begin_object(odb_json *j, const char *key) {
  open_container(j, key, '{');
}

/* Assumes a matching begin_object. */
void odb_json_end_object(odb_json *j) { close_container(j, '}'); }

/* key is NULL inside arrays and at the top level. */
void odb_json_begin_array(odb_json *j, const char *key) {
  open_container(j, key, '[');
}

/* Assumes a matching begin_array. */
void odb_json_end_array(odb_json *j) { close_container(j, ']'); }

/* A NULL value is written as null. */
void odb_json_string(odb_json *j, const char *key, const char *value) {
  prefix(j, key);
  odb_json_write_string(j->f, value);
}

/*
** Shortest of %.15g, %.16g, %.17g that reads back as the same double, so
** 0.1 prints as 0.1 and every value round-trips. Commas from a foreign
** LC_NUMERIC become points.
*/
void odb_json_format_double(char *buf, size_t cap, double v) {
  for (int prec = 15; prec <= 17; ++prec) {
    snprintf(buf, cap, "%.*g", prec, v);
    for (char *p = buf; *p; ++p)
      if (*p == ',') *p = '.';
    if (prec == 17 || strtod(buf, NULL) == v) break;
  }
}

/* Non-finite values are written as null. */
void odb_json_number(odb_json *j, const char *key, double value) {
  char buf[40];
  prefix(j, key);
  if (!isfinite(value)) {
    fputs("null", j->f);
    return;
  }
  odb_json_format_double(buf, sizeof buf, value);
  fputs(buf, j->f);
}

/* Exact for any long long (no trip through double). */
void odb_json_integer(odb_json *j, const char *key, long long value) {
  prefix(j, key);
  fprintf(j->f, "%lld", value);
}

/* Any nonzero value is true. */
void odb_json_bool(odb_json *j, const char *key, int value) {
  prefix(j, key);
  fputs(value ? "true" : "false", j->f);
}

/* A member or element with the value null. */
void odb_json_null(odb_json *j, const char *key) {
  prefix(j, key);
  fputs("null", j->f);
}

/* Bytes >= 0x80 pass through (the caller supplies UTF-8); NULL gives null. */
void odb_json_write_string(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    switch (*p) {
    case '"':  fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\b': fputs("\\b", f); break;
    case '\f': fputs("\\f", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (*p < 0x20) fprintf(f, "\\u%04x", *p);
      else fputc(*p, f);
    }
  }
  fputc('"', f);
}
