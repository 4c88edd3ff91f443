/* odb_dist_ode.h - the distributed ODE variants: explicit RK steps (mpi_A,
   mpi_S, mpi_N, mpi_X) and PIRK corrector steps (mpi_pirk_A, mpi_pirk_S,
   mpi_pirk_N, mpi_pirk_X) with the components in blocks over the MPI
   ranks (docs/mpi.md, "Distributed variants"). Built only with MPI. */
#ifndef ODB_DIST_ODE_H
#define ODB_DIST_ODE_H

#include "odb_status.h"
#include "odb_solver.h"

extern const odb_variant odb_variant_mpi_A;
extern const odb_variant odb_variant_mpi_S;
extern const odb_variant odb_variant_mpi_N;
extern const odb_variant odb_variant_mpi_X;
extern const odb_variant odb_variant_mpi_P;
extern const odb_variant odb_variant_mpi_pirk_A;
extern const odb_variant odb_variant_mpi_pirk_S;
extern const odb_variant odb_variant_mpi_pirk_N;
extern const odb_variant odb_variant_mpi_pirk_X;

/* Registers the five explicit RK variants (dist_erk.c); the program calls
   it at start, beside odb_kernels_register. They run with one rank too
   (with or without mpirun). */
odb_status odb_dist_ode_register(void);
/* Registers the four PIRK variants (dist_pirk.c), called beside it. */
odb_status odb_dist_pirk_register(void);
/* The distributed ARKODE peer arkode_mpi (dist_arkode.c), built with peers,
   MPI and SUNDIALS's parallel N_Vector (ODB_HAVE_ARKODE_MPI);
   odb_dist_ode_register registers it. */
extern const odb_variant odb_variant_arkode_mpi;
odb_status odb_dist_arkode_register(void);

/*
** GPU ranks (dist_gpu.c, built with MPI and CUDA): mpi_gpu_stream2d, a 2-D
** grid problem in slabs of rows, one GPU a rank. The binding registers it
** beside the others. The halo path of the last init ("peer copies ...",
** "host buffers ...",
** "CUDA-aware MPI ...", "none (one rank)"; "" before any).
*/
extern const odb_variant odb_variant_mpi_gpu_stream2d;
odb_status odb_dist_gpu_register(void);
const char *odb_dist_gpu_halo_path(void);

#endif
