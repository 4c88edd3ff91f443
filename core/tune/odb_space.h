/* odb_space.h - tuning spaces: named parameters, constraints, configurations. */
#ifndef ODB_SPACE_H
#define ODB_SPACE_H

#include <stddef.h>
#include <stdint.h>
#include "odb_rng.h"
#include "odb_status.h"

/*
** A search space is an ordered list of named parameters, each with a finite
** list of values, and a list of constraints. A parameter is one of
**   - an integer range lo, lo + step, ..., <= hi;
**   - the powers of two in [lo, hi];
**   - a list of integers (kept sorted ascending, duplicates refused);
**   - an enumeration of strings (kept in the given order).
** A configuration picks one value index per parameter. It is valid when
** every constraint accepts it; the tuner never evaluates an invalid one.
*/
#define ODB_SPACE_MAX_PARAMS 16
#define ODB_SPACE_NAME_MAX   32     /* bytes of a parameter name with NUL */
/* The valid configurations are listed in memory; more is refused. */
#define ODB_SPACE_MAX_VALID  (1L << 24)

typedef struct odb_space odb_space;

typedef enum odb_space_kind {
  ODB_SPACE_RANGE = 0, ODB_SPACE_POW2, ODB_SPACE_INTS, ODB_SPACE_ENUM
} odb_space_kind;

/* One configuration: idx[i] indexes the values of parameter i. A plain
   value: copy it, compare it with odb_config_equal. */
typedef struct odb_config {
  int n;                               /* number of parameters */
  int idx[ODB_SPACE_MAX_PARAMS];
} odb_config;

/*
** A constraint: returns 1 when c is allowed, 0 when not, and a negative
** number after recording a message with ODB_FAIL when it cannot decide (a
** Lua `where` function that raised, say); that aborts the enumeration.
** A constraint with dependencies is checked as soon as those parameters
** are set, on a partial configuration whose other indices are 0, so it
** must read only the parameters it names; it prunes whole subtrees.
*/
typedef int (*odb_space_pred)(const odb_space *s, const odb_config *c,
                              void *ud);

odb_status odb_space_create(odb_space **out);
void odb_space_destroy(odb_space *s);

/*
** Adding parameters. Names are 1..31 characters of [A-Za-z0-9_] starting
** with a letter or '_', unique in the space. Every call fails with
** ODB_ERR_ARG and a message naming the parameter for an empty value list,
** a duplicate, step <= 0, lo > hi, more than ODB_SPACE_MAX_PARAMS
** parameters or more than 65536 values.
*/
odb_status odb_space_add_range(odb_space *s, const char *name, long lo,
                               long hi, long step);
/* Powers of two p with lo <= p <= hi (lo >= 1); none in range: an error. */
odb_status odb_space_add_pow2(odb_space *s, const char *name, long lo,
                              long hi);
odb_status odb_space_add_ints(odb_space *s, const char *name,
                              const long *values, int n);
/* Strings are copied; they must be non-empty without spaces or '='. */
odb_status odb_space_add_enum(odb_space *s, const char *name,
                              const char *const *values, int n);
/*
** Adds a constraint. deps is a NULL-terminated list of the parameter names
** it reads, or NULL when it may read all of them (then it is checked on
** complete configurations only). doc (may be NULL) names it in messages.
** ud must outlive the space.
*/
odb_status odb_space_add_constraint(odb_space *s, odb_space_pred fn,
                                    void *ud, const char *const *deps,
                                    const char *doc);

/* Introspection. i is a parameter index, k a value index. */
int odb_space_nparams(const odb_space *s);
const char *odb_space_name(const odb_space *s, int i);
/* Index of the parameter called name, -1 when there is none. */
int odb_space_find(const odb_space *s, const char *name);
odb_space_kind odb_space_kind_of(const odb_space *s, int i);
int odb_space_nvalues(const odb_space *s, int i);
int odb_space_is_enum(const odb_space *s, int i);
long odb_space_int(const odb_space *s, int i, int k);       /* 0 for enums */
const char *odb_space_str(const odb_space *s, int i, int k); /* NULL for ints */
/* The value as text ("64", "A") into buf; returns buf. */
const char *odb_space_value_text(const odb_space *s, int i, int k, char *buf,
                                 size_t len);
/* Index of the value written as text, -1 when absent. */
int odb_space_value_index(const odb_space *s, int i, const char *text);
/* Product of the value counts (a double: it may exceed a long). */
double odb_space_raw_size(const odb_space *s);
int odb_space_nconstraints(const odb_space *s);

/* Evaluates every constraint on a complete configuration: 1, 0, or < 0. */
int odb_space_check(const odb_space *s, const odb_config *c);

/*
** Counts the valid configurations without evaluating any of them (only the
** constraints run), by a depth-first walk in declaration order that prunes
** with constraints as soon as their dependencies are set.
*/
odb_status odb_space_count(const odb_space *s, long *count);
/*
** Lists the valid configurations in lexicographic order of the value
** indices (the first parameter varies slowest) into a new array (free()
** it). Refuses more than ODB_SPACE_MAX_VALID valid configurations.
*/
odb_status odb_space_enumerate(const odb_space *s, odb_config **list,
                               long *count);

/* Configuration helpers. */
void odb_config_init(const odb_space *s, odb_config *c);   /* all indices 0 */
int odb_config_equal(const odb_config *a, const odb_config *b);
uint64_t odb_config_hash(const odb_config *c);
/* Value of parameter name: def when absent or not of that type. */
long odb_config_int(const odb_space *s, const odb_config *c, const char *name,
                    long def);
const char *odb_config_str(const odb_space *s, const odb_config *c,
                           const char *name, const char *def);
/*
** "k=v k2=v2" in declaration order. Fails with ODB_ERR_ARG when it does not
** fit len (at most ODB_SPACE_MAX_PARAMS * (31 + 1 + value) bytes).
*/
odb_status odb_config_format(const odb_space *s, const odb_config *c,
                             char *buf, size_t len);
/*
** Parses "k=v k2=v2" (any order, separated by spaces or commas); every
** parameter must be given once. ODB_ERR_ARG names an unknown key, a
** missing one or a value not in the parameter's list.
*/
odb_status odb_config_parse(const odb_space *s, const char *text,
                            odb_config *out);
/*
** A random neighbour of c for local search: one parameter changes, ordered
** parameters (ranges, powers of two, integer lists) by one step up or down,
** enumerations to another value. Returns 0 when no parameter has two
** values. Validity is not checked.
*/
int odb_config_neighbor(const odb_space *s, const odb_config *c,
                        odb_rng *rng, odb_config *out);

#endif
