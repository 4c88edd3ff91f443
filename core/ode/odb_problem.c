/* odb_problem.c - the registry of initial value problems. */
#include "odb_status.h"
#include "odb_param.h"
#include "odb_problem.h"
#include "odb_sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The built-in problems, one file each under problems/. */
extern const odb_problem_type odb_problem_string;
extern const odb_problem_type odb_problem_medakzo;
extern const odb_problem_type odb_problem_cusp;
extern const odb_problem_type odb_problem_stars;

/* Every built-in problem kind; a new problem adds one line here. */
static const odb_problem_type *const all_types[] = {
  &odb_problem_bruss2d,
  &odb_problem_string,
  &odb_problem_medakzo,
  &odb_problem_cusp,
  &odb_problem_stars,
};
#define NALL ((int)(sizeof all_types / sizeof all_types[0]))

static const odb_problem_type *problem_types[NALL];
static int ntypes = -1;

/* Compacts the present kinds once. */
static void types_init(void) {
  if (ntypes >= 0) return;
  ntypes = 0;
  for (int i = 0; i < NALL; ++i)
    if (all_types[i]) problem_types[ntypes++] = all_types[i];
}
#define NTYPES (types_init(), ntypes)

int odb_problem_type_count(void) { return NTYPES; }

const odb_problem_type *odb_problem_type_at(int i) {
  return i >= 0 && i < NTYPES ? problem_types[i] : NULL;
}

const odb_problem_type *odb_problem_type_find(const char *name) {
  for (int i = 0; name && i < NTYPES; ++i)
    if (strcmp(problem_types[i]->name, name) == 0) return problem_types[i];
  return NULL;
}

/* Fails with a message that lists the valid problem names. */
static odb_status unknown_problem(const char *name) {
  char list[256] = "";
  for (int i = 0; i < NTYPES; ++i) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "",
             problem_types[i]->name);
  }
  return ODB_FAIL(ODB_ERR_NAME, "unknown problem '%s' (valid: %s)",
                  name ? name : "(null)", list);
}

odb_status odb_problem_create(const char *name, const odb_param_value *given,
                              int ngiven, odb_problem **out) {
  const odb_problem_type *type = odb_problem_type_find(name);
  char what[80];
  odb_problem *p;
  odb_status st;
  *out = NULL;
  if (!type) return unknown_problem(name);
  p = calloc(1, sizeof *p);
  if (!p) return ODB_FAIL(ODB_ERR_NOMEM, "problem");
  p->type = type;
  snprintf(what, sizeof what, "problem '%s'", type->name);
  st = odb_param_resolve(what, type->params, type->nparams, given, ngiven,
                         p->param);
  if (st == ODB_OK) st = type->setup(p);
  if (st != ODB_OK) {
    odb_problem_destroy(p);
    return st;
  }
  *out = p;
  return ODB_OK;
}

void odb_problem_destroy(odb_problem *p) {
  if (!p) return;
  free(p->data);
  free(p);
}

void odb_problem_key(const odb_problem *p, char *buf, size_t len) {
  size_t used;
  char hex[65];
  snprintf(buf, len, "%s n=%ld", p->label, p->n);
  if (strcmp(p->type->name, ODB_PROBLEM_USER) != 0) return;
  used = strlen(buf);
  if (p->fkey[0] && used < len)
    used += (size_t)snprintf(buf + used, len - used, " f=%s", p->fkey);
  if (p->gpu_source && used < len) {
    odb_sha256_hex(p->gpu_source, strlen(p->gpu_source), hex);
    used += (size_t)snprintf(buf + used, len - used, " src=%.12s", hex);
  }
  if (p->gpu_cell_source && used < len) {
    odb_sha256_hex(p->gpu_cell_source, strlen(p->gpu_cell_source), hex);
    snprintf(buf + used, len - used, " cell=%.12s%s", hex,
             p->grid_star ? " star" : "");
  }
}

void odb_problem_rhs_full(const odb_problem *p, double t, const double *y,
                          double *f) {
  p->rhs(p, t, y, 0, f, 0, p->n);
}
