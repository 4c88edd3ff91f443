/* odb_space.c - tuning spaces: parameters, constraints, enumeration. */
#include "odb_space.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES 65536

typedef struct space_param {
  char name[ODB_SPACE_NAME_MAX];
  odb_space_kind kind;
  int n;
  long *ints;          /* n values (RANGE, POW2, INTS) */
  char **strs;         /* n owned strings (ENUM) */
} space_param;

typedef struct space_constraint {
  odb_space_pred fn;
  void *ud;
  int level;           /* checked once params 0..level-1 are set */
  char doc[64];
} space_constraint;

struct odb_space {
  space_param p[ODB_SPACE_MAX_PARAMS];
  int np;
  space_constraint *cons;
  int ncons, capcons;
};

/* {====== building */

odb_status odb_space_create(odb_space **out) {
  *out = calloc(1, sizeof **out);
  return *out ? ODB_OK : ODB_FAIL(ODB_ERR_NOMEM, "tuning space");
}

void odb_space_destroy(odb_space *s) {
  if (!s) return;
  for (int i = 0; i < s->np; ++i) {
    free(s->p[i].ints);
    for (int k = 0; s->p[i].strs && k < s->p[i].n; ++k) free(s->p[i].strs[k]);
    free(s->p[i].strs);
  }
  free(s->cons);
  free(s);
}

/* A name: [A-Za-z_][A-Za-z0-9_]*, shorter than ODB_SPACE_NAME_MAX. */
static int good_name(const char *name) {
  size_t len = name ? strlen(name) : 0;
  if (len == 0 || len >= ODB_SPACE_NAME_MAX) return 0;
  if (!isalpha((unsigned char)name[0]) && name[0] != '_') return 0;
  for (size_t i = 1; i < len; ++i)
    if (!isalnum((unsigned char)name[i]) && name[i] != '_') return 0;
  return 1;
}

/* Checks that a new parameter called name may be added; returns its slot. */
static odb_status new_param(odb_space *s, const char *name, int nvalues,
                            space_param **out) {
  if (!good_name(name))
    return ODB_FAIL(ODB_ERR_ARG, "bad parameter name '%s' (letters, digits "
                    "and '_', at most %d characters)", name ? name : "(null)",
                    ODB_SPACE_NAME_MAX - 1);
  if (odb_space_find(s, name) >= 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' declared twice", name);
  if (s->np >= ODB_SPACE_MAX_PARAMS)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': more than %d parameters",
                    name, ODB_SPACE_MAX_PARAMS);
  if (nvalues <= 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has no values", name);
  if (nvalues > MAX_VALUES)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has %d values (at most %d)",
                    name, nvalues, MAX_VALUES);
  *out = &s->p[s->np];
  memset(*out, 0, sizeof **out);
  snprintf((*out)->name, sizeof (*out)->name, "%s", name);
  return ODB_OK;
}

/* Takes ownership of vals (n ints) as the values of a new parameter. */
static odb_status add_int_param(odb_space *s, const char *name,
                                odb_space_kind kind, long *vals, int n) {
  space_param *p;
  odb_status st = new_param(s, name, n, &p);
  if (st != ODB_OK) {
    free(vals);
    return st;
  }
  p->kind = kind;
  p->n = n;
  p->ints = vals;
  s->np++;
  return ODB_OK;
}

odb_status odb_space_add_range(odb_space *s, const char *name, long lo,
                               long hi, long step) {
  long count, *v;
  if (step <= 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': step must be positive, got "
                    "%ld", name, step);
  if (lo > hi)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': min (%ld) is greater than "
                    "max (%ld)", name, lo, hi);
  count = (long)(((unsigned long)hi - (unsigned long)lo) / (unsigned long)step)
          + 1;
  if (count > MAX_VALUES)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has %ld values (at most %d)",
                    name, count, MAX_VALUES);
  v = malloc((size_t)count * sizeof *v);
  if (!v) return ODB_FAIL(ODB_ERR_NOMEM, "parameter '%s'", name);
  for (long k = 0; k < count; ++k) v[k] = lo + k * step;
  return add_int_param(s, name, ODB_SPACE_RANGE, v, (int)count);
}

odb_status odb_space_add_pow2(odb_space *s, const char *name, long lo,
                              long hi) {
  long v[64];
  int n = 0;
  long *copy;
  if (lo < 1 || lo > hi)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': powers of two need 1 <= lo "
                    "<= hi, got %ld..%ld", name, lo, hi);
  for (long p = 1; p > 0 && p <= hi; p *= 2) {
    if (p >= lo) v[n++] = p;
    if (p > hi / 2) break;
  }
  if (n == 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': no power of two in [%ld, "
                    "%ld]", name, lo, hi);
  copy = malloc((size_t)n * sizeof *copy);
  if (!copy) return ODB_FAIL(ODB_ERR_NOMEM, "parameter '%s'", name);
  memcpy(copy, v, (size_t)n * sizeof *copy);
  return add_int_param(s, name, ODB_SPACE_POW2, copy, n);
}

/* qsort order of longs. */
static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

odb_status odb_space_add_ints(odb_space *s, const char *name,
                              const long *values, int n) {
  long *v;
  if (n <= 0 || !values)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has no values", name);
  if (n > MAX_VALUES)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has %d values (at most %d)",
                    name, n, MAX_VALUES);
  v = malloc((size_t)n * sizeof *v);
  if (!v) return ODB_FAIL(ODB_ERR_NOMEM, "parameter '%s'", name);
  memcpy(v, values, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_long);
  for (int k = 1; k < n; ++k)
    if (v[k] == v[k - 1]) {
      long dup = v[k];
      free(v);
      return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': value %ld given twice",
                      name, dup);
    }
  return add_int_param(s, name, ODB_SPACE_INTS, v, n);
}

/* An enumeration value: non-empty, printable, no blank, '=' or ','. */
static int good_word(const char *w) {
  if (!w || !*w || strlen(w) > 63) return 0;
  for (; *w; ++w)
    if (!isgraph((unsigned char)*w) || *w == '=' || *w == ',') return 0;
  return 1;
}

/* Validates the strings of an enumeration before anything is allocated. */
static odb_status check_words(const char *name, const char *const *values,
                              int n) {
  for (int k = 0; k < n; ++k) {
    if (!good_word(values[k]))
      return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': bad value '%s' (1..63 "
                      "printable characters without blanks, '=' or ',')",
                      name, values[k] ? values[k] : "(null)");
    for (int j = 0; j < k; ++j)
      if (strcmp(values[j], values[k]) == 0)
        return ODB_FAIL(ODB_ERR_ARG, "parameter '%s': value '%s' given "
                        "twice", name, values[k]);
  }
  return ODB_OK;
}

odb_status odb_space_add_enum(odb_space *s, const char *name,
                              const char *const *values, int n) {
  space_param *p;
  odb_status st;
  if (!values || n <= 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has no values", name);
  st = new_param(s, name, n, &p);
  if (st == ODB_OK) st = check_words(name, values, n);
  if (st != ODB_OK) return st;
  p->strs = calloc((size_t)n, sizeof *p->strs);
  if (!p->strs) return ODB_FAIL(ODB_ERR_NOMEM, "parameter '%s'", name);
  p->kind = ODB_SPACE_ENUM;
  p->n = n;
  s->np++;   /* from here on destroy frees what was copied */
  for (int k = 0; k < n; ++k) {
    p->strs[k] = strdup(values[k]);
    if (!p->strs[k]) return ODB_FAIL(ODB_ERR_NOMEM, "parameter '%s'", name);
  }
  return ODB_OK;
}

/* The level at which a constraint on deps can be checked. */
static odb_status deps_level(const odb_space *s, const char *const *deps,
                             int *level) {
  if (!deps) {
    *level = s->np;
    return ODB_OK;
  }
  *level = 0;
  for (int i = 0; deps[i]; ++i) {
    int k = odb_space_find(s, deps[i]);
    if (k < 0)
      return ODB_FAIL(ODB_ERR_ARG, "constraint depends on unknown parameter "
                      "'%s'", deps[i]);
    if (k + 1 > *level) *level = k + 1;
  }
  return ODB_OK;
}

odb_status odb_space_add_constraint(odb_space *s, odb_space_pred fn,
                                    void *ud, const char *const *deps,
                                    const char *doc) {
  space_constraint *c;
  int level;
  if (!fn) return ODB_FAIL(ODB_ERR_ARG, "constraint without a function");
  ODB_TRY(deps_level(s, deps, &level));
  if (s->ncons == s->capcons) {
    int cap = s->capcons ? 2 * s->capcons : 4;
    space_constraint *nc = realloc(s->cons, (size_t)cap * sizeof *nc);
    if (!nc) return ODB_FAIL(ODB_ERR_NOMEM, "constraints");
    s->cons = nc;
    s->capcons = cap;
  }
  c = &s->cons[s->ncons++];
  c->fn = fn;
  c->ud = ud;
  /* a constraint without deps must see complete configurations, even when
     parameters are added after it */
  c->level = deps ? level : -1;
  snprintf(c->doc, sizeof c->doc, "%s", doc ? doc : "constraint");
  return ODB_OK;
}

/* }====== */

/* {====== introspection */

int odb_space_nparams(const odb_space *s) { return s->np; }

const char *odb_space_name(const odb_space *s, int i) {
  return i >= 0 && i < s->np ? s->p[i].name : NULL;
}

int odb_space_find(const odb_space *s, const char *name) {
  for (int i = 0; name && i < s->np; ++i)
    if (strcmp(s->p[i].name, name) == 0) return i;
  return -1;
}

odb_space_kind odb_space_kind_of(const odb_space *s, int i) {
  return s->p[i].kind;
}

int odb_space_nvalues(const odb_space *s, int i) {
  return i >= 0 && i < s->np ? s->p[i].n : 0;
}

int odb_space_is_enum(const odb_space *s, int i) {
  return s->p[i].kind == ODB_SPACE_ENUM;
}

long odb_space_int(const odb_space *s, int i, int k) {
  return s->p[i].ints && k >= 0 && k < s->p[i].n ? s->p[i].ints[k] : 0;
}

const char *odb_space_str(const odb_space *s, int i, int k) {
  return s->p[i].strs && k >= 0 && k < s->p[i].n ? s->p[i].strs[k] : NULL;
}

const char *odb_space_value_text(const odb_space *s, int i, int k, char *buf,
                                 size_t len) {
  if (odb_space_is_enum(s, i))
    snprintf(buf, len, "%s", odb_space_str(s, i, k));
  else
    snprintf(buf, len, "%ld", odb_space_int(s, i, k));
  return buf;
}

/* Integers must be written exactly as odb_space_value_text writes them. */
int odb_space_value_index(const odb_space *s, int i, const char *text) {
  char buf[72];
  for (int k = 0; k < s->p[i].n; ++k)
    if (strcmp(odb_space_value_text(s, i, k, buf, sizeof buf), text) == 0)
      return k;
  return -1;
}

double odb_space_raw_size(const odb_space *s) {
  double n = 1;
  for (int i = 0; i < s->np; ++i) n *= s->p[i].n;
  return s->np ? n : 0;
}

int odb_space_nconstraints(const odb_space *s) { return s->ncons; }

/* }====== */

/* {====== constraints and enumeration */

/* The level of constraint k (complete configurations for level -1). */
static int cons_level(const odb_space *s, int k) {
  return s->cons[k].level < 0 ? s->np : s->cons[k].level;
}

int odb_space_check(const odb_space *s, const odb_config *c) {
  if (c->n != s->np) return 0;
  for (int i = 0; i < s->np; ++i)
    if (c->idx[i] < 0 || c->idx[i] >= s->p[i].n) return 0;
  for (int k = 0; k < s->ncons; ++k) {
    int r = s->cons[k].fn(s, c, s->cons[k].ud);
    if (r <= 0) return r;
  }
  return 1;
}

/* Runs the constraints that become decidable once depth params are set. */
static int check_level(const odb_space *s, const odb_config *c, int depth) {
  for (int k = 0; k < s->ncons; ++k) {
    int r;
    if (cons_level(s, k) != depth) continue;
    r = s->cons[k].fn(s, c, s->cons[k].ud);
    if (r <= 0) return r;
  }
  return 1;
}

/* Where the walk delivers valid configurations. */
typedef struct walk {
  const odb_space *s;
  odb_config cur;
  long count;
  odb_config *list;    /* NULL: count only */
  long cap;
  odb_status st;
} walk;

/* Appends the current configuration (list mode) or counts it. */
static int deliver(walk *w) {
  if ((w->list || w->cap < 0) && w->count >= ODB_SPACE_MAX_VALID) {
    w->st = ODB_FAIL(ODB_ERR_ARG, "the space has more than %ld valid "
                     "configurations; narrow it", (long)ODB_SPACE_MAX_VALID);
    return -1;
  }
  if (w->list || w->cap < 0) {
    if (w->count == w->cap || w->cap < 0) {
      long cap = w->cap > 0 ? 2 * w->cap : 256;
      odb_config *nl = realloc(w->list, (size_t)cap * sizeof *nl);
      if (!nl) {
        w->st = ODB_FAIL(ODB_ERR_NOMEM, "list of %ld configurations", cap);
        return -1;
      }
      w->list = nl;
      w->cap = cap;
    }
    w->list[w->count] = w->cur;
  }
  w->count++;
  return 0;
}

/* Depth-first walk: parameters 0..depth-1 are set in w->cur. */
static int walk_from(walk *w, int depth) {
  int r = check_level(w->s, &w->cur, depth);
  if (r < 0) {
    w->st = ODB_ERR_ARG;
    if (!*odb_last_error())
      ODB_FAIL(ODB_ERR_ARG, "a constraint failed without a message");
    return -1;
  }
  if (r == 0) return 0;
  if (depth == w->s->np) return deliver(w);
  for (int k = 0; k < w->s->p[depth].n; ++k) {
    w->cur.idx[depth] = k;
    if (walk_from(w, depth + 1) < 0) return -1;
  }
  w->cur.idx[depth] = 0;
  return 0;
}

/* Runs the walk; cap < 0 asks for the list. */
static odb_status run_walk(const odb_space *s, walk *w, int want_list) {
  memset(w, 0, sizeof *w);
  w->s = s;
  w->cap = want_list ? -1 : 0;
  odb_config_init(s, &w->cur);
  if (s->np == 0) return ODB_FAIL(ODB_ERR_ARG, "the space has no parameters");
  odb_clear_error();
  walk_from(w, 0);
  if (w->st != ODB_OK) {
    free(w->list);
    w->list = NULL;
    return w->st;
  }
  return ODB_OK;
}

odb_status odb_space_count(const odb_space *s, long *count) {
  walk w;
  odb_status st = run_walk(s, &w, 0);
  *count = st == ODB_OK ? w.count : 0;
  return st;
}

odb_status odb_space_enumerate(const odb_space *s, odb_config **list,
                               long *count) {
  walk w;
  odb_status st = run_walk(s, &w, 1);
  *list = NULL;
  *count = 0;
  if (st != ODB_OK) return st;
  *list = w.list;
  *count = w.count;
  return ODB_OK;
}

/* }====== */

/* {====== configurations */

void odb_config_init(const odb_space *s, odb_config *c) {
  memset(c, 0, sizeof *c);
  c->n = s->np;
}

int odb_config_equal(const odb_config *a, const odb_config *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; ++i)
    if (a->idx[i] != b->idx[i]) return 0;
  return 1;
}

/* FNV-1a over the indices, then a final mix. */
uint64_t odb_config_hash(const odb_config *c) {
  uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < c->n; ++i) {
    h ^= (uint64_t)(uint32_t)c->idx[i];
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

long odb_config_int(const odb_space *s, const odb_config *c, const char *name,
                    long def) {
  int i = odb_space_find(s, name);
  if (i < 0 || i >= c->n || odb_space_is_enum(s, i)) return def;
  return odb_space_int(s, i, c->idx[i]);
}

const char *odb_config_str(const odb_space *s, const odb_config *c,
                           const char *name, const char *def) {
  int i = odb_space_find(s, name);
  if (i < 0 || i >= c->n || !odb_space_is_enum(s, i)) return def;
  return odb_space_str(s, i, c->idx[i]);
}

odb_status odb_config_format(const odb_space *s, const odb_config *c,
                             char *buf, size_t len) {
  size_t used = 0;
  char v[72];
  if (len == 0) return ODB_FAIL(ODB_ERR_ARG, "no room for a configuration");
  buf[0] = '\0';
  for (int i = 0; i < s->np && i < c->n; ++i) {
    int n = snprintf(buf + used, len - used, "%s%s=%s", i ? " " : "",
                     s->p[i].name, odb_space_value_text(s, i, c->idx[i], v,
                                                        sizeof v));
    if (n < 0 || (size_t)n >= len - used)
      return ODB_FAIL(ODB_ERR_ARG, "configuration text longer than %zu "
                      "bytes", len - 1);
    used += (size_t)n;
  }
  return ODB_OK;
}

/* Copies the next token of p (up to a blank or ',') into tok. */
static const char *next_token(const char *p, char *tok, size_t len) {
  size_t n = 0;
  while (*p == ' ' || *p == ',' || *p == '\t') ++p;
  while (*p && *p != ' ' && *p != ',' && *p != '\t') {
    if (n + 1 < len) tok[n++] = *p;
    ++p;
  }
  tok[n] = '\0';
  return p;
}

/* Sets the value of one "k=v" token in out; seen marks parameters given. */
static odb_status parse_pair(const odb_space *s, const char *tok,
                             odb_config *out, int *seen) {
  char key[ODB_SPACE_NAME_MAX + 1];
  const char *eq = strchr(tok, '=');
  size_t klen = eq ? (size_t)(eq - tok) : 0;
  int i, k;
  if (!eq || klen == 0 || klen >= sizeof key)
    return ODB_FAIL(ODB_ERR_ARG, "configuration item '%s' is not key=value",
                    tok);
  memcpy(key, tok, klen);
  key[klen] = '\0';
  i = odb_space_find(s, key);
  if (i < 0) return ODB_FAIL(ODB_ERR_ARG, "unknown parameter '%s'", key);
  if (seen[i])
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' given twice", key);
  k = odb_space_value_index(s, i, eq + 1);
  if (k < 0)
    return ODB_FAIL(ODB_ERR_ARG, "parameter '%s' has no value '%s'", key,
                    eq + 1);
  out->idx[i] = k;
  seen[i] = 1;
  return ODB_OK;
}

odb_status odb_config_parse(const odb_space *s, const char *text,
                            odb_config *out) {
  int seen[ODB_SPACE_MAX_PARAMS] = {0};
  char tok[160];
  const char *p = text ? text : "";
  odb_config_init(s, out);
  for (;;) {
    p = next_token(p, tok, sizeof tok);
    if (!tok[0]) break;
    ODB_TRY(parse_pair(s, tok, out, seen));
  }
  for (int i = 0; i < s->np; ++i)
    if (!seen[i])
      return ODB_FAIL(ODB_ERR_ARG, "configuration '%s' lacks parameter '%s'",
                      text ? text : "", s->p[i].name);
  return ODB_OK;
}

/* Uniform integer in [0, n). */
static int rng_below(odb_rng *rng, int n) {
  return (int)(odb_rng_uniform(rng) * n);
}

int odb_config_neighbor(const odb_space *s, const odb_config *c,
                        odb_rng *rng, odb_config *out) {
  int movable[ODB_SPACE_MAX_PARAMS], nm = 0, i, k;
  for (i = 0; i < s->np; ++i)
    if (s->p[i].n > 1) movable[nm++] = i;
  *out = *c;
  if (nm == 0) return 0;
  i = movable[rng_below(rng, nm)];
  if (s->p[i].kind == ODB_SPACE_ENUM) {
    k = rng_below(rng, s->p[i].n - 1);
    out->idx[i] = k >= c->idx[i] ? k + 1 : k;
  } else if (c->idx[i] == 0) {
    out->idx[i] = 1;
  } else if (c->idx[i] == s->p[i].n - 1) {
    out->idx[i] = c->idx[i] - 1;
  } else {
    out->idx[i] = c->idx[i] + (odb_rng_uniform(rng) < 0.5 ? -1 : 1);
  }
  return 1;
}

/* }====== */
