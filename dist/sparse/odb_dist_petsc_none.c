/* odb_dist_petsc_none.c - odb_dist_petsc.h in a build without the PETSc
** peer (no -Dpeers=enabled, no MPI, or no PETSc found): every call is
** refused with what the build lacks. */
#include "odb_dist_petsc.h"

#define NO_PETSC "the PETSc peer is not in this build (configure with -Dpeers=enabled, MPI and " \
                 "libpetsc-real-dev)"

int odb_dpetsc_available(void) { return 0; }

odb_status odb_dpetsc_create(const odb_sparse *csr, const int *own, int rank, int size,
                             odb_dpetsc **out)
{
  (void)csr; (void)own; (void)rank; (void)size;
  *out = NULL;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_PETSC);
}

void odb_dpetsc_free(odb_dpetsc *P) { (void)P; }

odb_status odb_dpetsc_solve(odb_dpetsc *P, const double *b, const char *method, double tol,
                            long maxit, odb_dpetsc_result *out)
{
  (void)P; (void)b; (void)method; (void)tol; (void)maxit; (void)out;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_PETSC);
}
