/* odb_gpu_barrier.h - the multi-block barriers of Korch and Werner
   (§4.3; see odb_gen_rk.h) on their own: a microbenchmark of their
   throughput (their Figure 6). */
#ifndef ODB_GPU_BARRIER_H
#define ODB_GPU_BARRIER_H

#include "odb_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one measurement gives. */
typedef struct odb_barrier_result {
  double seconds;        /* one launch of iters barriers (median of reps) */
  double per_second;     /* barriers completed per second, all concurrent */
  double us_per_barrier; /* seconds / iters, in microseconds */
  int blocks_per_sm;     /* the kernel's occupancy */
} odb_barrier_result;

/*
** Launches concurrent x wg_per_barrier blocks of `threads` threads, each
** calling barrier `kind` ('A', 'B' or 'C') iters times with the other
** blocks of its barrier, and times it (reps launches after a warm-up).
** Refuses, before launching, a grid that the device cannot hold at once
** and barrier C with more than one concurrent barrier. A watchdog of
** watchdog seconds (<= 0: 2) turns a hang into ODB_ERR_BACKEND.
*/
odb_status odb_gpu_barrier_bench(char kind, int wg_per_barrier,
                                 int concurrent, int threads, int iters,
                                 int reps, double watchdog,
                                 odb_barrier_result *out);

#ifdef __cplusplus
}
#endif

#endif
