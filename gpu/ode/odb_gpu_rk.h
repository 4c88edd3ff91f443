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
/*
** A solver that steps one slab of a system split over the GPU ranks of a
** host (dist/ode/dist_gpu.c) takes part in their step controller on the
** device: its kernels sum the error norm over the ranks (xn, device
** memory: odb_gen_xnorm of odb_gen_rk.h) and divide by the whole system's
** norm_n, and before each attempt of a batch the advance calls
** before(ctx, launch, ctl) to queue what the ranks do between attempts
** (the halo exchange), launch counting the batch's attempts from 0, ctl
** the device's controller (odb_gen_ctl: which of the solver's y and ynew
** as the batch began holds the state). Only for the variants with
** advance, before their first batch.
*/
struct odb_gen_xnorm;
struct odb_gen_ctl;
typedef struct odb_gpu_rk_link {
  struct odb_gen_xnorm *xn;
  long norm_n;
  odb_status (*before)(void *ctx, int launch, const struct odb_gen_ctl *ctl);
  void *ctx;
} odb_gpu_rk_link;
odb_status odb_gpu_rk_set_link(odb_solver *s, const odb_gpu_rk_link *l);
/* Registers gpu_onchip (odb_gpu_onchip.c); odb_gpu_rk_register calls it. */
odb_status odb_gpu_onchip_register(void);

#endif
