/* odb_method.h - one-step methods from Butcher tableaus. */
#ifndef ODB_METHOD_H
#define ODB_METHOD_H

#include "odb_status.h"

typedef enum odb_method_kind {
  ODB_METHOD_ERK = 0,   /* explicit RK: A strictly lower triangular */
  ODB_METHOD_PIRK       /* implicit corrector (A full) iterated m times */
} odb_method_kind;

/*
** An explicit Runge-Kutta method, optionally with an embedded pair, or the
** corrector of a PIRK method (kind ODB_METHOD_PIRK: A full, order the
** corrector's order p, run with m fixed-point corrector steps, m_default =
** p - 1; bhat NULL, the estimate comes from the last two iterates).
** A is s x s, row-major. bhat is NULL for methods without an embedded
** estimate. fsal is 1 when the last stage is evaluated at the new solution
** (A's last row equals b, c_last = 1), so its function value is the first
** stage of the next step.
*/
typedef struct odb_method {
  const char *name;      /* registry name, e.g. "dopri5" */
  const char *title;     /* "Dormand-Prince 5(4)" */
  odb_method_kind kind;
  int s;                 /* stages */
  int order;             /* order of b */
  int order_emb;         /* order of bhat; 0 when bhat is NULL */
  int fsal;
  const double *A, *b, *bhat, *c;
  int m_default;         /* PIRK: corrector steps by default (p - 1); 0 for ERK */
} odb_method;

int odb_method_count(void);
const odb_method *odb_method_at(int i);
/* NULL when unknown; odb_method_lookup also records a message listing names. */
const odb_method *odb_method_find(const char *name);
odb_status odb_method_lookup(const char *name, const odb_method **out);
/* Order of the error estimate's exponent: min(order, order_emb). */
int odb_method_err_order(const odb_method *m);

#endif
