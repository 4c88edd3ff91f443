/* odb_gpu_rk.h - the GPU RK variants (odb_gpu_rk.c) as the rest of the
   tree sees them. */
#ifndef ODB_GPU_RK_H
#define ODB_GPU_RK_H

#include "odb_solver.h"

/*
** Registers gpu_reference, gpu_unfused, gpu_trapezoid, gpu_multiblock,
** gpu_stream2d and gpu_hexagonal with the variant registry (in the order
** variant = "auto" tries them, after the CPU variants). Idempotent.
*/
odb_status odb_gpu_rk_register(void);
/*
** The blocks a cluster of a gpu_stream2d solver's step kernel (1: no
** clusters); 0 for any other solver.
*/
int odb_gpu_rk_cluster(const odb_solver *s);
/* Registers gpu_onchip (odb_gpu_onchip.c); odb_gpu_rk_register calls it. */
odb_status odb_gpu_onchip_register(void);

#endif
