/* odb_barrier_impl.h - the multi-block barrier microbenchmark
   (ob.gpu_barrier) as an ops table registered by backend name. Only a
   build with CUDA has one ("cuda", defined and registered by
   gpu/odb_kernels_cuda.c over gpu/ode/odb_gpu_barrier.c); there is no CPU
   version, so a build without CUDA has an empty registry and the lookup
   gives the registry's one error. */
#ifndef ODB_BARRIER_IMPL_H
#define ODB_BARRIER_IMPL_H

#include <stddef.h>
#include "odb_status.h"

/* What one measurement gives. */
typedef struct odb_barrier_figures {
  double seconds;        /* one launch of iters barriers (median of reps) */
  double per_second;     /* barriers completed per second, all concurrent */
  double us_per_barrier; /* seconds / iters, in microseconds */
  int blocks_per_sm;     /* the kernel's occupancy */
} odb_barrier_figures;

typedef struct odb_barrier_ops {
  const char *backend;   /* "cuda" */
  /* concurrent x wg_per_barrier blocks of threads threads, each calling
     barrier kind ('A', 'B' or 'C') iters times, timed over reps launches;
     a watchdog of watchdog seconds turns a hang into an error. */
  odb_status (*bench)(char kind, int wg_per_barrier, int concurrent,
                      int threads, int iters, int reps, double watchdog,
                      odb_barrier_figures *out);
} odb_barrier_ops;

/* Registers ops under its backend name. */
odb_status odb_barrier_impl_register(const odb_barrier_ops *ops);
/* The table of backend name; the registry's error otherwise. */
odb_status odb_barrier_impl_find(const char *name,
                                 const odb_barrier_ops **out);
/* The registered names ("cuda", or "") into buf. */
const char *odb_barrier_impl_list(char *buf, size_t len);

#endif
