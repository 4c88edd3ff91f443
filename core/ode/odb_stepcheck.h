/* odb_stepcheck.h - a reference step on a window of components. */
#ifndef ODB_STEPCHECK_H
#define ODB_STEPCHECK_H

#include "odb_solver.h"

/*
** The new solution of one step of size h from (t, y) on the components
** [a, b) only, computed straight from the formulas (thesis (3.26)-(3.29)
** for a PIRK corrector with m steps: Y_l^(0) = y, Y_l^(k) = y + h sum_i
** a_li f(t + c_i h, Y_i^(k-1)), y_new = y + h sum_i b_i f(t + c_i h,
** Y_i^(m)); the stage formulas for an explicit RK method). Component j of
** the result depends on y within R = (m + 1) d (PIRK) or s d (explicit
** RK) of j, d the access distance, so only [a - R, b + R) (cut at 0 and n)
** is read and computed: for a limited access distance a check of a few
** windows costs a small part of a step. It is a third implementation (not
** a registered variant), for checking variants cheaply; the unit tests
** compare it with variant A and plain.
*/
typedef struct odb_stepcheck odb_stepcheck;

/* For solver s's problem and method (s->m corrector steps), windows of up
   to max_window components. */
odb_status odb_stepcheck_create(const odb_solver *s, long max_window,
                                odb_stepcheck **out);
void odb_stepcheck_destroy(odb_stepcheck *c);
/* R: how far the result of a component reaches back into y. */
long odb_stepcheck_reach(const odb_stepcheck *c);
/*
** out[0 .. b - a) = the new solution on [a, b) (0 <= a < b <= n,
** b - a <= max_window); y is the full state (host memory).
*/
odb_status odb_stepcheck_window(odb_stepcheck *c, double t, double h,
                                const double *y, long a, long b, double *out);

#endif
