/* odb_nvrtc.h - CUDA C compiled at run time: NVRTC, a disk cache of the
   machine code, modules and launches through the driver API. */
#ifndef ODB_NVRTC_H
#define ODB_NVRTC_H

#include <stddef.h>

#include "odb_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct odb_gpu_module odb_gpu_module;

/* A kernel of a loaded module (a CUfunction) and what the compiler gave it. */
typedef struct odb_gpu_kernel {
  void *fn;              /* CUfunction */
  int regs;              /* registers per thread */
  int local_bytes;       /* local memory per thread (spills, stack) */
  int max_threads;       /* largest block it can be launched with */
} odb_gpu_kernel;

/*
** Compiles source (CUDA C; toolkit headers such as <cooperative_groups.h>
** are found under $ODEBENCH_CUDA_HOME, $CUDA_HOME or the build's toolkit) for the current device's compute
** capability cc_major.cc_minor with NVRTC and loads it into the current
** context. name says what the source is ("gpu_reference dopri5 bruss2d")
** in messages and dump file names. The machine code is cached under
** $XDG_CACHE_HOME/odebench/kernels (else ~/.cache/...), keyed by the
** SHA-256 of the source, the options, the architecture and the NVRTC
** version; ODEBENCH_KERNEL_CACHE=off turns the cache off. When
** ODEBENCH_DUMP_KERNELS names a directory, the source is written there as
** <name>-<hash>.cu. A compile error fails with ODB_ERR_ARG and NVRTC's log
** (file(line): error ...), a driver failure with ODB_ERR_BACKEND.
*/
odb_status odb_nvrtc_build(const char *name, const char *source, int cc_major,
                           int cc_minor, odb_gpu_module **out);
/*
** Compiles, with `threads` threads (< 1: one per online CPU), every
** source of sources[0..n) (NULL entries skipped) that has no file in the
** disk cache yet, and stores the machine code there, so that the
** odb_nvrtc_build calls that follow load it at once. Nothing is loaded.
** A source that does not compile is skipped here (odb_nvrtc_build
** reports it). Without a cache directory it does nothing. Returns how
** many sources were compiled.
*/
int odb_nvrtc_prefetch(const char *const *sources, int n, int cc_major,
                       int cc_minor, int threads);
/* Unloads the module; NULL is allowed. */
void odb_gpu_module_free(odb_gpu_module *m);
/* 1 when the module came from the disk cache (no compilation ran). */
int odb_gpu_module_cached(const odb_gpu_module *m);
/* The first 16 hex digits of the module's cache key. */
const char *odb_gpu_module_key(const odb_gpu_module *m);

/* Looks up an extern "C" kernel of the module by name. */
odb_status odb_gpu_kernel_get(odb_gpu_module *m, const char *kernel,
                              odb_gpu_kernel *out);
/* Lets k be launched with up to bytes of dynamic shared memory (> 48 KiB). */
odb_status odb_gpu_kernel_smem(odb_gpu_kernel *k, size_t bytes);
/*
** Launches k on the legacy default stream (the one the runtime's
** cudaMemcpy uses) with grid x block threads, smem bytes of dynamic shared
** memory and one by-value argument at arg (a struct whose layout matches
** the kernel's only parameter). Does not wait.
*/
odb_status odb_gpu_launch(const odb_gpu_kernel *k, unsigned grid,
                          unsigned block, size_t smem, void *arg);
/*
** The same through cuLaunchKernelEx. early: a programmatic dependent
** launch, whose blocks may start while the kernel before it in the stream
** ends (the driver places them as that kernel's blocks leave); k must wait
** for it with `griddepcontrol.wait` before it reads what that kernel wrote.
** cluster > 1: clusters of that many blocks along x (grid a multiple of it).
*/
odb_status odb_gpu_launch_ex(const odb_gpu_kernel *k, unsigned grid,
                             unsigned block, size_t smem, void *arg,
                             int early, int cluster);
/* Clusters of `cluster` blocks of k that the device holds at once. */
odb_status odb_gpu_max_clusters(const odb_gpu_kernel *k, unsigned block,
                                size_t smem, int cluster, int *clusters);
/* The same as a cooperative launch (grid sync; every block co-resident,
   refused by the driver otherwise). */
odb_status odb_gpu_launch_coop(const odb_gpu_kernel *k, unsigned grid,
                               unsigned block, size_t smem, void *arg);
/* Blocks of k that one multiprocessor holds at once with that block size
   and dynamic shared memory. */
odb_status odb_gpu_occupancy(const odb_gpu_kernel *k, unsigned block,
                             size_t smem, int *blocks_per_sm);
/* NVRTC's version as major * 1000 + minor * 10 (13000), 0 when unknown. */
int odb_nvrtc_version(void);

#ifdef __cplusplus
}
#endif

#endif
