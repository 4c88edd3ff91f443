/* odb_dist_ode.h - the distributed ODE variants (mpi_A, mpi_S, mpi_N,
   mpi_X): explicit RK steps with the components in blocks over the MPI
   ranks (docs/mpi.md, "Distributed variants"). Built only with MPI. */
#ifndef ODB_DIST_ODE_H
#define ODB_DIST_ODE_H

#include "odb_status.h"
#include "odb_solver.h"

extern const odb_variant odb_variant_mpi_A;
extern const odb_variant odb_variant_mpi_S;
extern const odb_variant odb_variant_mpi_N;
extern const odb_variant odb_variant_mpi_X;

/* Registers the four variants (odb_variant_register); the program calls
   it at start, beside odb_kernels_register. They run with one rank too
   (with or without mpirun). */
odb_status odb_dist_ode_register(void);

#endif
