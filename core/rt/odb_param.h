/* odb_param.h - declared parameters with checked values (problem sizes, ...). */
#ifndef ODB_PARAM_H
#define ODB_PARAM_H

#include "odb_status.h"

typedef enum odb_param_type { ODB_PARAM_INT, ODB_PARAM_REAL, ODB_PARAM_ENUM }
  odb_param_type;

/*
** Declaration of one parameter: its type, default, and allowed range
** (inclusive). For ODB_PARAM_ENUM, choices is a '|'-separated list and the
** value is the index of the choice.
*/
typedef struct odb_param_decl {
  const char *name;
  odb_param_type type;
  double def, min, max;
  const char *choices;   /* ODB_PARAM_ENUM only */
  const char *doc;
} odb_param_decl;

/* A value given by a caller, by name. str is used for enums, num otherwise. */
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

#endif
