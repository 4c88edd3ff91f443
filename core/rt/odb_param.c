/* odb_param.c - checking parameter values against their declarations. */
#include "odb_status.h"
#include "odb_param.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Writes "A, B, C" from the declared names into buf. */
static void list_names(const odb_param_decl *d, int n, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < n; ++i) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", i ? ", " : "", d[i].name);
  }
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

/* Checks one given value against its declaration; v receives the value. */
static odb_status check_value(const char *what, const odb_param_decl *d,
                              const odb_param_value *g, double *v) {
  if (d->type == ODB_PARAM_ENUM) {
    int k = g->str ? find_choice(d->choices, g->str) : -1;
    if (k < 0)
      return ODB_FAIL(ODB_ERR_ARG, "%s: parameter '%s' must be one of %s",
                      what, d->name, d->choices);
    *v = k;
    return ODB_OK;
  }
  if (g->str)
    return ODB_FAIL(ODB_ERR_ARG, "%s: parameter '%s' must be a number, got "
                    "'%s'", what, d->name, g->str);
  if (!isfinite(g->num) || (d->type == ODB_PARAM_INT && g->num != floor(g->num)))
    return ODB_FAIL(ODB_ERR_ARG, "%s: parameter '%s' must be %s, got %g", what,
                    d->name, d->type == ODB_PARAM_INT ? "an integer"
                                                       : "a finite number",
                    g->num);
  if (g->num < d->min || g->num > d->max)
    return ODB_FAIL(ODB_ERR_ARG, "%s: parameter '%s' must be in [%g, %g], "
                    "got %g", what, d->name, d->min, d->max, g->num);
  *v = g->num;
  return ODB_OK;
}

odb_status odb_param_resolve(const char *what, const odb_param_decl *decls,
                             int ndecl, const odb_param_value *given,
                             int ngiven, double *out) {
  char names[256];
  for (int i = 0; i < ndecl; ++i) out[i] = decls[i].def;
  for (int k = 0; k < ngiven; ++k) {
    int i;
    for (i = 0; i < ndecl; ++i)
      if (strcmp(decls[i].name, given[k].name) == 0) break;
    if (i == ndecl) {
      list_names(decls, ndecl, names, sizeof names);
      return ODB_FAIL(ODB_ERR_ARG, "%s has no parameter '%s' (valid: %s)",
                      what, given[k].name, ndecl ? names : "none");
    }
    ODB_TRY(check_value(what, &decls[i], &given[k], &out[i]));
  }
  return ODB_OK;
}
