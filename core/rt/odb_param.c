/* odb_param.c - checking parameter values against their declarations. */
#include "odb_status.h"
#include "odb_param.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The most powers of two listed one by one ("1, 2, 4 or 8"); a wider range
   is "a power of two in lo..hi". */
enum { POW2_LISTED = 4 };

const char *odb_param_names(const odb_param_decl *d, int n, char *buf,
                            size_t len) {
  buf[0] = '\0';
  if (n <= 0) snprintf(buf, len, "none");
  for (int i = 0; i < n; ++i) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", i ? ", " : "", d[i].name);
  }
  return buf;
}

int odb_param_find(const odb_param_decl *decls, int ndecl, const char *name) {
  for (int i = 0; name && i < ndecl; ++i)
    if (strcmp(decls[i].name, name) == 0) return i;
  return -1;
}

/* Index of choice s in the '|'-separated list, or -1. */
static int find_choice(const char *choices, const char *s) {
  int idx = 0;
  size_t n = strlen(s);
  for (const char *p = choices; p && *p; ++idx) {
    const char *e = strchr(p, '|');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, s, n) == 0) return idx;
    p = e ? e + 1 : NULL;
  }
  return -1;
}

/* The number of choices in the '|'-separated list. */
static int count_choices(const char *choices) {
  int n = choices && *choices ? 1 : 0;
  for (const char *p = choices; p && (p = strchr(p, '|')); ++p) ++n;
  return n;
}

/* Appends item k of n to buf as a list in words: "a", "a or b", "a, b or
   c". */
static void list_item(char *buf, size_t len, int k, int n, const char *item) {
  size_t l = strlen(buf);
  snprintf(buf + l, len - l, "%s%s", k == 0 ? "" : k == n - 1 ? " or "
           : ", ", item);
}

/* The powers of two in [lo, hi]. */
static int count_pow2(double lo, double hi) {
  int n = 0;
  for (double p = 1; p <= hi; p *= 2) n += p >= lo;
  return n;
}

/* A number as text: integers in full ("1073741824"), others as %g. */
static const char *num_text(double v, char *buf, size_t len) {
  if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, len, "%.0f", v);
  else snprintf(buf, len, "%g", v);
  return buf;
}

/* "in lo..hi" of an integer range. */
static const char *int_range(const odb_param_decl *d, char *buf, size_t len) {
  char a[32], b[32];
  snprintf(buf, len, "in %s..%s", num_text(d->min, a, sizeof a),
           num_text(d->max, b, sizeof b));
  return buf;
}

const char *odb_param_allowed(const odb_param_decl *d, char *buf,
                              size_t len) {
  char a[80], b[32];
  buf[0] = '\0';
  switch (d->type) {
  case ODB_PARAM_INT:
    return int_range(d, buf, len);
  case ODB_PARAM_REAL:
    snprintf(buf, len, "in [%g, %g]", d->min, d->max);
    return buf;
  case ODB_PARAM_POS:
    if (d->min == 0 && d->max == HUGE_VAL) snprintf(buf, len, "positive");
    else if (d->max == HUGE_VAL) snprintf(buf, len, "greater than %g", d->min);
    else snprintf(buf, len, "in (%g, %g]", d->min, d->max);
    return buf;
  case ODB_PARAM_BOOL:
    snprintf(buf, len, "a boolean (true or false)");
    return buf;
  case ODB_PARAM_POW2: {
    int n = count_pow2(d->min, d->max), k = 0;
    if (n > POW2_LISTED) {
      snprintf(buf, len, "a power of two %s", int_range(d, a, sizeof a));
      return buf;
    }
    for (double p = 1; p <= d->max; p *= 2)
      if (p >= d->min) list_item(buf, len, k++, n, num_text(p, b, sizeof b));
    return buf;
  }
  case ODB_PARAM_ENUM: {
    int n = count_choices(d->choices), k = 0;
    for (const char *p = d->choices; p && *p; ++k) {
      const char *e = strchr(p, '|');
      snprintf(a, sizeof a, "\"%.*s\"", (int)(e ? (size_t)(e - p)
                                                : strlen(p)), p);
      list_item(buf, len, k, n, a);
      p = e ? e + 1 : NULL;
    }
    return buf;
  }
  }
  return buf;
}

int odb_param_has_default(const odb_param_decl *d) {
  double v = d->def;
  switch (d->type) {
  case ODB_PARAM_ENUM:
    return v >= 0 && v < count_choices(d->choices) && v == floor(v);
  case ODB_PARAM_BOOL:
    return v == 0 || v == 1;
  case ODB_PARAM_POS:
    return v > d->min && v <= d->max;
  case ODB_PARAM_POW2:
    if (frexp(v, &(int){0}) != 0.5) return 0;   /* not a power of two */
    /* fall through */
  case ODB_PARAM_INT:
  case ODB_PARAM_REAL:
    return v >= d->min && v <= d->max;
  }
  return 0;
}

/* The value given, as text for a message: 'abc', 2.5, true. */
static const char *given_text(const odb_param_value *g, char *buf,
                              size_t len) {
  if (g->str) snprintf(buf, len, "'%s'", g->str);
  else num_text(g->num, buf, len);
  return buf;
}

odb_status odb_param_check(const odb_param_decl *d, const odb_param_value *g,
                           double *v, char *why, size_t nwhy) {
  char allowed[160], got[96];
  const int integer = d->type == ODB_PARAM_INT || d->type == ODB_PARAM_POW2;
  given_text(g, got, sizeof got);
  if (d->type == ODB_PARAM_ENUM || d->type == ODB_PARAM_BOOL) {
    int k = !g->str ? -1
            : d->type == ODB_PARAM_ENUM ? find_choice(d->choices, g->str)
            : strcmp(g->str, "true") == 0 ? 1
            : strcmp(g->str, "false") == 0 ? 0 : -1;
    if (k < 0) goto refused;
    *v = k;
    return ODB_OK;
  }
  if (g->str) {
    snprintf(why, nwhy, "must be a number, got %s", got);
    return ODB_ERR_ARG;
  }
  if (!isfinite(g->num) || (integer && g->num != floor(g->num))) {
    snprintf(why, nwhy, "must be %s, got %s", integer ? "an integer"
             : "a finite number", got);
    return ODB_ERR_ARG;
  }
  /* the range first: a power of two out of range reads "in 1..8" */
  if (integer && (g->num < d->min || g->num > d->max)) {
    snprintf(why, nwhy, "must be %s, got %s",
             int_range(d, allowed, sizeof allowed), got);
    return ODB_ERR_ARG;
  }
  if (d->type == ODB_PARAM_POW2 && frexp(g->num, &(int){0}) != 0.5)
    goto refused;
  if (d->type == ODB_PARAM_REAL && (g->num < d->min || g->num > d->max))
    goto refused;
  if (d->type == ODB_PARAM_POS && !(g->num > d->min && g->num <= d->max))
    goto refused;
  *v = g->num;
  return ODB_OK;
refused:
  snprintf(why, nwhy, "must be %s, got %s",
           odb_param_allowed(d, allowed, sizeof allowed), got);
  return ODB_ERR_ARG;
}

odb_status odb_param_resolve(const char *what, const odb_param_decl *decls,
                             int ndecl, const odb_param_value *given,
                             int ngiven, double *out) {
  char names[256], why[256];
  for (int i = 0; i < ndecl; ++i) out[i] = decls[i].def;
  for (int k = 0; k < ngiven; ++k) {
    int i = odb_param_find(decls, ndecl, given[k].name);
    if (i < 0)
      return ODB_FAIL(ODB_ERR_ARG, "%s has no parameter '%s' (valid: %s)",
                      what, given[k].name ? given[k].name : "(null)",
                      odb_param_names(decls, ndecl, names, sizeof names));
    if (odb_param_check(&decls[i], &given[k], &out[i], why, sizeof why) !=
        ODB_OK)
      return ODB_FAIL(ODB_ERR_ARG, "%s: parameter '%s' %s", what,
                      decls[i].name, why);
  }
  return ODB_OK;
}
