/* odb_ode_floor.h - the fewest bytes a solve must move: the bytes of its
** floor (odb_floor.h), for every variant of every method. */
#ifndef ODB_ODE_FLOOR_H
#define ODB_ODE_FLOOR_H

#include "odb_solver.h"

/*
** A step of any one-step method (explicit RK, PIRK) from y to ynew must
** read y (n doubles) and, when it is accepted, write ynew once; stages,
** iterates and the error estimate can stay in registers or cache (a fused
** variant keeps them there), so they need no traffic at the floor. A
** rejected step reads y and writes nothing that lasts. Over the steps of
** st: *r = 8 n st->steps, *w = 8 n st->accepted. *touched: y and ynew,
** 16 n (the working set that must stay in a cache for the steps to run
** from it). A variant's own count (its traffic, in odb_solve_stats) is at
** least this.
*/
void odb_solve_min_bytes(long n, const odb_solve_stats *st, double *r,
                         double *w, double *touched);

#endif
