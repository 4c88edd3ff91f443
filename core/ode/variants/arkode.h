/* arkode.h - what the two ARKODE peers share: "arkode" (arkode.c, one
   process) and "arkode_mpi" (dist/ode/dist_arkode.c, across ranks). Built
   only with peers (-Dpeers=enabled); includes SUNDIALS 6.x headers, so only
   those two files include it. */
#ifndef ODB_ARKODE_H
#define ODB_ARKODE_H

#include <arkode/arkode_erkstep.h>

#include "odb_method.h"

/*
** ARKODE's Butcher table from an odb method (copies: ARKODE takes non-const
** arrays and copies them again in ERKStepSetTable). NULL on failure.
*/
ARKodeButcherTable arkode_table(const odb_method *m);

/* The buffer that keeps ARKODE's last error message (arkode_erk_setup). */
#define ARKODE_MSG_LEN 200

/*
** The ERKStep mem of either peer set up alike: ARKODE's error messages kept
** in msg (ARKODE_MSG_LEN chars) instead of printed, m's table, the solver s
** as user data, the error weights of arkode_ewt, fixed-step mode from the
** start (ERKStep's setup then also takes tables without an embedding: rk4)
** and no warnings for t + h == t. ARK_SUCCESS, or ARKODE's code with msg
** saying why (ARK_MEM_FAIL when the table could not be made).
*/
struct odb_solver;
int arkode_erk_setup(void *mem, const odb_method *m, struct odb_solver *s,
                     char *msg);

/*
** Error weights as ERKStep computes them for scalar tolerances (its
** arkEwtSetSS, same vector operations): ewt = 1 / (rtol |y| + atol), the
** check for a zero weight only when atol is 0. Assumes user_data is the
** solver (odb_solver *). Works on any N_Vector (serial or parallel).
*/
int arkode_ewt(N_Vector y, N_Vector ewt, void *ud);

/*
** 1 when this ARKODE treats a non-FSAL table with c_s = 1 as FSAL
** (SUNDIALS issue #311): two fixed Heun steps of h = 1/2 on y' = -y from 1
** must give (5/8)^2 exactly; the faulty reuse gives 13/32. On a serial
** vector of one component, so every rank of an MPI run probes its library
** alike. Errors count as "faulty" (the workaround is always correct).
*/
int arkode_fsal_bug(SUNContext ctx);

#endif
