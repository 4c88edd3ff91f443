/* odb_dist_petsc.h - PETSc's Krylov solvers on the same matrix, split the
** same way, as the peer of the distributed BiCGStab (docs/mpi.md, "The
** PETSc peer"). Built with peers and MPI where PETSc is found
** (odb_dist_petsc.c); otherwise every call is refused
** (odb_dist_petsc_none.c).
**
** The matrix is PETSc's MPIAIJ made from the whole CSR and the row owners
** of the odb_dsparse it is compared with: rank q holds the same rows, in
** PETSc's numbering the rows of rank 0, then of rank 1, ..., each rank's
** in ascending global order (so a GH slab's wells, last in the global
** order, come right after its cells). No preconditioner, a zero initial
** guess and the relative residual ||b - A x|| / ||b|| <= tol as the test,
** as ob.krylov and the distributed solvers take it. */
#ifndef ODB_DIST_PETSC_H
#define ODB_DIST_PETSC_H

#include "odb_sparse.h"

typedef struct odb_dpetsc odb_dpetsc;

/* 1 when this build has the PETSc peer. */
int odb_dpetsc_available(void);

/* The MPIAIJ of csr (every rank's whole matrix) with owners own[n] on
   this rank of size (a collective); ODB_ERR_UNSUPPORTED without PETSc. */
odb_status odb_dpetsc_create(const odb_sparse *csr, const int *own, int rank, int size,
                             odb_dpetsc **out);
void odb_dpetsc_free(odb_dpetsc *P);

typedef struct odb_dpetsc_result {
  int converged;
  long iters;
  double seconds;        /* KSPSolve, the slowest rank's */
  double relres;         /* PETSc's last residual norm over ||b|| */
  double relres_true;    /* ||b - A x|| / ||b||, computed after */
  char reason[48];       /* KSPConvergedReason's name */
  char method[16];       /* PETSc's KSP type */
} odb_dpetsc_result;

/* Solves A x = b with method "bicgstab" (KSPBCGS) or "qmrcgs" (KSPQMRCGS)
   to tol in at most maxit iterations; b is the whole right-hand side on
   every rank (n values). A collective. */
odb_status odb_dpetsc_solve(odb_dpetsc *P, const double *b, const char *method, double tol,
                            long maxit, odb_dpetsc_result *out);

#endif
