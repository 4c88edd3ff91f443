/* odb_param.h - declared parameters with checked values (problem sizes,
   a variant's options, ...). */
#ifndef ODB_PARAM_H
#define ODB_PARAM_H

#include <stddef.h>

#include "odb_status.h"

/*
** What a parameter takes. The value a caller receives is a double in every
** case: the number, the index of the choice (ENUM), 1 or 0 (BOOL).
*/
typedef enum odb_param_type {
  ODB_PARAM_INT,         /* an integer in [min, max] */
  ODB_PARAM_REAL,        /* a finite number in [min, max] */
  ODB_PARAM_ENUM,        /* one of choices */
  ODB_PARAM_BOOL,        /* true or false */
  ODB_PARAM_POW2,        /* an integer power of two in [min, max] */
  ODB_PARAM_POS          /* a finite number above min (not equal), at most
                            max: min 0 and max HUGE_VAL is "positive" */
} odb_param_type;

/*
** Declaration of one parameter: its type, default, and allowed range
** (inclusive but for ODB_PARAM_POS's min). For ODB_PARAM_ENUM, choices is
** a '|'-separated list and the value is the index of the choice. A default
** the declaration does not allow (0 for an INT in [32, 1024], -1 for a
** choice) says that the owner chooses where nothing is given, as its doc
** says (odb_param_has_default).
*/
typedef struct odb_param_decl {
  const char *name;
  odb_param_type type;
  double def, min, max;
  const char *choices;   /* ODB_PARAM_ENUM only */
  const char *doc;
} odb_param_decl;

/*
** A value given by a caller, by name. str is used for enums, num otherwise;
** a boolean is the text "true" or "false" in str (that is how a Lua
** boolean or a --set value crosses a list of these), a number for a
** boolean is refused.
*/
typedef struct odb_param_value {
  const char *name;
  double num;
  const char *str;
} odb_param_value;

/*
** Resolves the values of decls[0..ndecl) into out[0..ndecl): the default
** where nothing is given, the given value otherwise. Fails with ODB_ERR_ARG
** (and a message naming the parameter and what is allowed) for an unknown
** name, a value out of range, a non-integer for an INT, an unknown choice.
** what names the owner in messages, e.g. "problem 'bruss2d'".
*/
odb_status odb_param_resolve(const char *what, const odb_param_decl *decls,
                             int ndecl, const odb_param_value *given,
                             int ngiven, double *out);

/* The index of the declaration named name in decls[0..ndecl), or -1. */
int odb_param_find(const odb_param_decl *decls, int ndecl, const char *name);

/*
** Checks one given value against its declaration: ODB_OK with the value in
** *v, else ODB_ERR_ARG with the reason alone in why ("must be in 32..1024,
** got 7"), which names neither the parameter nor its owner, so that each
** caller words that its own way. Records no error (odb_last_error).
*/
odb_status odb_param_check(const odb_param_decl *d, const odb_param_value *g,
                           double *v, char *why, size_t nwhy);

/*
** What d allows, as its error messages say it: "in 32..1024", "a power of
** two in 32..1024", "1, 2, 4 or 8", "in [0, 1]", "positive", "\"A\", \"B\"
** or \"C\"", "a boolean (true or false)". Returns buf.
*/
const char *odb_param_allowed(const odb_param_decl *d, char *buf, size_t len);

/* 1 when d's default is a value d allows; 0 when the owner chooses. */
int odb_param_has_default(const odb_param_decl *d);

/* The names of decls[0..ndecl) as "a, b, c" ("none" for none) into buf. */
const char *odb_param_names(const odb_param_decl *decls, int ndecl, char *buf,
                            size_t len);

#endif
