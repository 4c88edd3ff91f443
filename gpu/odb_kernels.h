/* odb_kernels.h - how the layers above gpu/ (lua/, cli/) reach it:
   registering the GPU backends with a context, and whether this build
   has CUDA (odb_kernels_cuda.c, or odb_kernels_none.c without it). */
#ifndef ODB_KERNELS_H
#define ODB_KERNELS_H

#include "odebench.h"

/*
** Registers the GPU backends this build has ("cuda") in ctx when a device
** is present. Where none can be used (built without CUDA, no driver, no
** device) it registers nothing, records the reason with
** odb_ctx_note_backend, and still returns ODB_OK.
*/
odb_status odb_kernels_register(odb_ctx *ctx);
/*
** The same on the device a process of a run across ranks takes: the
** local_rank-th of the host's devices, modulo their count (one rank a GPU
** when as many ranks as GPUs run on a host; several ranks share a GPU when
** there are more). ODEBENCH_DEVICE (a device number) overrides it.
** odb_kernels_register is odb_kernels_register_on(ctx, 0).
*/
odb_status odb_kernels_register_on(odb_ctx *ctx, int local_rank);
/* The device the "cuda" backend uses (-1: none, or no CUDA in the build). */
int odb_kernels_device(void);
/* odb_gpu_rk_cluster: the blocks a cluster of a gpu_stream2d solver. */
#include "odb_gpu_rk.h"
/* 1 when this build has the CUDA backend compiled in. */
int odb_kernels_have_cuda(void);

#endif
