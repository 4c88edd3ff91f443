/* odb_stepcheck.c - a reference step on a window of components. */
#include "odb_status.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_stepcheck.h"

#include <stdlib.h>
#include <string.h>

struct odb_stepcheck {
  const odb_problem *p;
  const odb_method *me;
  long n, d, R, cap;     /* cap: doubles per buffer row (window + 2R) */
  int S, m;              /* stages; corrector steps (0: explicit RK) */
  double *Y, *F;         /* S rows each of cap doubles */
};

odb_status odb_stepcheck_create(const odb_solver *s, long max_window,
                                odb_stepcheck **out) {
  odb_stepcheck *c = calloc(1, sizeof *c);
  long d;
  *out = NULL;
  if (!c) return ODB_FAIL(ODB_ERR_NOMEM, "step check");
  c->p = s->problem;
  c->me = s->method;
  c->n = s->n;
  d = s->problem->d < s->n ? s->problem->d : s->n;
  c->d = d > 0 ? d : s->n;
  c->S = s->method->s;
  c->m = s->method->kind == ODB_METHOD_PIRK ? (s->m > 0 ? s->m : 1) : 0;
  c->R = c->d * (c->m > 0 ? c->m + 1 : c->S);
  c->cap = max_window + 2 * c->R;
  if (c->cap > c->n) c->cap = c->n;
  c->Y = malloc((size_t)c->S * (size_t)c->cap * sizeof(double));
  c->F = malloc((size_t)c->S * (size_t)c->cap * sizeof(double));
  if (!c->Y || !c->F) {
    odb_stepcheck_destroy(c);
    return ODB_FAIL(ODB_ERR_NOMEM, "step check: 2 x %d x %ld doubles",
                    s->method->s, max_window);
  }
  *out = c;
  return ODB_OK;
}

void odb_stepcheck_destroy(odb_stepcheck *c) {
  if (!c) return;
  free(c->Y);
  free(c->F);
  free(c);
}

long odb_stepcheck_reach(const odb_stepcheck *c) { return c->R; }

/* [lo, hi) narrowed by d where it does not touch 0 or n. */
static void shrink(const odb_stepcheck *c, long *lo, long *hi) {
  if (*lo > 0) *lo += c->d;
  if (*hi < c->n) *hi -= c->d;
}

/*
** The PIRK step: rows of Y and F hold components L.. of the window; at
** iteration k, Y^(k) is valid on [lo, hi) (Y^(0) = y needs no copy) and
** F^(k) = h f(Y^(k)) is computed on the narrowed range.
*/
static void pirk_window(odb_stepcheck *c, double t, double h,
                        const double *y, long L, long a, long b,
                        double *out) {
  const odb_method *me = c->me;
  long lo = L, hi = L + c->cap < c->n ? L + c->cap : c->n, cap = c->cap;
  int S = c->S;
  if (b + c->R < hi) hi = b + c->R;
  for (int k = 0; k <= c->m; ++k) {
    long lo2 = lo, hi2 = hi;
    shrink(c, &lo2, &hi2);
    for (int i = 0; i < S; ++i) {
      const double *arg = k == 0 ? y : c->Y + (long)i * cap;
      double *Fi = c->F + (long)i * cap + (lo2 - L);
      c->p->rhs(c->p, t + me->c[i] * h, arg, k == 0 ? 0 : L, Fi, lo2, hi2);
      for (long j = 0; j < hi2 - lo2; ++j) Fi[j] *= h;
    }
    if (k == c->m) break;
    for (int l = 0; l < S; ++l) {
      double *Yl = c->Y + (long)l * cap;
      for (long j = lo2; j < hi2; ++j) {
        double acc = 0;
        for (int i = 0; i < S; ++i)
          acc += me->A[l * S + i] * c->F[(long)i * cap + (j - L)];
        Yl[j - L] = y[j] + acc;
      }
    }
    lo = lo2;
    hi = hi2;
  }
  for (long j = a; j < b; ++j) {
    double acc = 0;
    for (int i = 0; i < S; ++i) acc += me->b[i] * c->F[(long)i * cap + (j - L)];
    out[j - a] = y[j] + acc;
  }
}

/* The explicit RK step: stage l's argument on a range narrowed l times. */
static void erk_window(odb_stepcheck *c, double t, double h,
                       const double *y, long L, long a, long b, double *out) {
  const odb_method *me = c->me;
  long lo = L, hi = L + c->cap < c->n ? L + c->cap : c->n, cap = c->cap;
  int S = c->S;
  if (b + c->R < hi) hi = b + c->R;
  for (int l = 0; l < S; ++l) {
    long lo2 = lo, hi2 = hi;
    double *Yl = c->Y + (long)l * cap, *Fl = c->F + (long)l * cap;
    if (l > 0)
      for (long j = lo; j < hi; ++j) {
        double acc = 0;
        for (int i = 0; i < l; ++i) acc += me->A[l * S + i] * c->F[(long)i * cap + (j - L)];
        Yl[j - L] = y[j] + acc;
      }
    shrink(c, &lo2, &hi2);
    c->p->rhs(c->p, t + me->c[l] * h, l == 0 ? y : Yl, l == 0 ? 0 : L,
              Fl + (lo2 - L), lo2, hi2);
    for (long j = lo2; j < hi2; ++j) Fl[j - L] *= h;
    lo = lo2;
    hi = hi2;
  }
  for (long j = a; j < b; ++j) {
    double acc = 0;
    for (int i = 0; i < S; ++i) acc += me->b[i] * c->F[(long)i * cap + (j - L)];
    out[j - a] = y[j] + acc;
  }
}

odb_status odb_stepcheck_window(odb_stepcheck *c, double t, double h,
                                const double *y, long a, long b,
                                double *out) {
  long L = a - c->R > 0 ? a - c->R : 0, H = b + c->R < c->n ? b + c->R : c->n;
  if (a < 0 || b > c->n || a >= b || H - L > c->cap)
    return ODB_FAIL(ODB_ERR_ARG, "step check: window [%ld, %ld) of n = %ld "
                    "does not fit (reach %ld, room %ld)", a, b, c->n, c->R,
                    c->cap);
  if (c->m > 0) pirk_window(c, t, h, y, L, a, b, out);
  else erk_window(c, t, h, y, L, a, b, out);
  return ODB_OK;
}
