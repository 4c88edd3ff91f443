/* odb_krylov_gpu.h - BiCGStab and QMR on the current CUDA device, in three
** forms next to the CPU reference of odb_sparse.h (core/sparse/krylov.c):
**
**   cusparse    one library call per operation: cuSPARSE SpMV (QMR's A^T x
**               through the transpose op) and cuBLAS dot/axpy/scal/copy,
**               scalars on the host (the dots of one step land in device
**               memory and come back with one wait: 4 per BiCGStab
**               iteration, 3 per QMR iteration);
**   fused       our SpMV (odb_sparse_gpu.h, any format; QMR's A^T x on an
**               uploaded CSR of A^T) and fused vector kernels whose dot
**               products end in the last block, which also runs the
**               solver's scalar step on the device; the host only polls;
**   persistent  the seed's in-kernel solver (seeds/001 6.3-6.4): the whole
**               iteration loop in one kernel whose grid is co-resident,
**               inter-block barriers (lock-based counter, lock-free
**               arrival flags, or WS-S: lock-free with independent work
**               between arrive and wait and a tuned delay), range vectors
**               in shared memory where they fit; CSR or Bdia for BiCGStab,
**               CSR (and a CSR copy of A^T) for QMR. The Bdia SpMV runs
**               in tiles of cells as the standalone kernel does (grain
**               rows of a cell per thread, optionally evict-first value
**               loads and as a called function with registers of its
**               own); on large matrices the solve picks these by running
**               each candidate for a few iterations (opts tune).
**
** Every form runs the same scalar recurrences, breakdown, stagnation and
** maxit tests as the CPU reference, records the residual history and
** recomputes the true residual at the end: the result is the CPU's
** odb_krylov_result. A build without CUDA has these functions too
** (odb_krylov_gpu_none.c): impl "cpu" works, the others give
** ODB_ERR_NO_DEVICE "this build has no CUDA".
*/
#ifndef ODB_KRYLOV_GPU_H
#define ODB_KRYLOV_GPU_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_sparse.h"

typedef enum odb_krylov_impl {
  ODB_KRY_IMPL_CPU = 0, ODB_KRY_IMPL_CUSPARSE, ODB_KRY_IMPL_FUSED,
  ODB_KRY_IMPL_PERSISTENT, ODB_KRY_IMPL_COUNT
} odb_krylov_impl;

/* Inter-block synchronization of the persistent kernel. */
typedef enum odb_krylov_sync {
  ODB_KRY_SYNC_LOCK = 0,     /* atomic arrival counter, every block polls it */
  ODB_KRY_SYNC_LOCKFREE,     /* per-block arrival flags, block 0 releases (Xiao & Feng) */
  ODB_KRY_SYNC_WSS,          /* lock-free + work between arrive and wait + delay; block 0 reduces */
  ODB_KRY_SYNC_COUNT
} odb_krylov_sync;

/* Where the persistent kernel keeps its range vectors. */
typedef enum odb_krylov_rv {
  ODB_KRY_RV_AUTO = 0, ODB_KRY_RV_SHARED, ODB_KRY_RV_GLOBAL
} odb_krylov_rv;

/* Zero means "default" for every field (see odb_krylov_gpu_solve). */
typedef struct odb_krylov_gpu_opts {
  odb_krylov_opts kry;       /* tol, maxit, stag_window as for the CPU */
  odb_krylov_impl impl;
  odb_krylov_sync sync;      /* persistent only */
  int delay_ns;              /* WS-S: sleep before polling, 0..1000000 ns */
  int grid;                  /* persistent: blocks (0: automatic) */
  int block;                 /* persistent: threads per block, 64..1024, a multiple of 32 (0: 256) */
  odb_krylov_rv rv;          /* persistent: range vectors in shared memory or not */
  int grain;                 /* persistent Bdia: rows of a cell per thread, 1, 2, 4 (dividing k) or k (0: chosen, see tune) */
  double watchdog_s;         /* persistent: a barrier waiting longer fails the solve (0: 10 s) */
  int test_hang;             /* tests only: block test_hang-1 leaves at iteration 2 (0: none) */
  int stream;                /* persistent Bdia, k in 2, 4, 8: 1 evict-first loads of the matrix values, -1 plain (0: chosen) */
  int call;                  /* persistent Bdia, k in 2, 4, 8: 1 the SpMV is a called function with the
                                registers to itself, -1 inlined into the solver loop (0: chosen) */
  int tune;                  /* persistent Bdia, k in 2, 4, 8, grain, stream or call 0: 1 run every
                                candidate for a few iterations of the solve (each on its own co-resident
                                grid) and keep the fastest, -1 never (grain k when the cells fill the
                                device, else 1; plain loads; inlined), 0 tune when A's values take
                                64 MiB or more */
} odb_krylov_gpu_opts;

/* What a solve measured and how it ran. */
typedef struct odb_krylov_gpu_info {
  double seconds;            /* solve, from the initial residual to the end (device events) */
  double seconds_per_iter;   /* seconds / max(iters, 1) */
  double bytes_per_iter;     /* least traffic of one iteration: A twice + the vector passes */
  int grid, block;           /* persistent: launch shape; max_grid the co-resident limit */
  int max_grid;
  int rv_shared;             /* persistent: range vectors were in shared memory */
  int grain;                 /* persistent: rows of a cell per thread of the Bdia SpMV */
  size_t shared_bytes;       /* persistent: dynamic shared memory per block */
  int barriers_per_iter;     /* persistent: grid barriers per iteration */
  int stream;                /* persistent: the Bdia values were loaded evict-first */
  int call;                  /* persistent: the Bdia SpMV was a called function */
  int tuned;                 /* persistent: grain, stream and call come from timing the candidates */
} odb_krylov_gpu_info;

/*
** Solves A x = b from the x given with o->impl (o may be NULL: BiCGStab
** defaults, impl cpu). Returns what odb_krylov_solve returns: ODB_OK when
** converged, ODB_ERR_MAX_STEPS with the reason (breakdown and its
** iteration, stagnation, maxit) recorded and res filled in; other codes
** (bad options, a format the impl cannot take, no device, out of memory,
** a persistent grid larger than the device holds at once, a barrier
** watchdog) leave res empty. info may be NULL. Free res with
** odb_krylov_result_free.
*/
odb_status odb_krylov_gpu_solve(const odb_sparse *A, odb_krylov_method method,
                                const double *b, double *x,
                                const odb_krylov_gpu_opts *o,
                                odb_krylov_result *res,
                                odb_krylov_gpu_info *info);

/* Median seconds of one SpMV over reps runs on random x, as the impl does
** it (cusparse: cuSPARSE CSR; fused/persistent: our kernel for A's
** format), and the device copy bandwidth (bytes read + written per s). */
odb_status odb_krylov_gpu_spmv_seconds(const odb_sparse *A, odb_krylov_impl impl,
                                       int reps, double *seconds,
                                       double *copy_bytes_per_s);

static const char *const odb_krylov_impl_names[ODB_KRY_IMPL_COUNT] = {
  "cpu", "cusparse", "fused", "persistent"};
static const char *const odb_krylov_sync_names[ODB_KRY_SYNC_COUNT] = {
  "lock", "lockfree", "wss"};

/* Any value. */
static inline const char *odb_krylov_impl_name(odb_krylov_impl i) {
  return (unsigned)i < ODB_KRY_IMPL_COUNT ? odb_krylov_impl_names[i] : "unknown";
}
static inline const char *odb_krylov_sync_name(odb_krylov_sync s) {
  return (unsigned)s < ODB_KRY_SYNC_COUNT ? odb_krylov_sync_names[s] : "unknown";
}
/* name may be NULL; ODB_ERR_NAME lists the allowed names. */
static inline odb_status odb_krylov_impl_parse(const char *name, odb_krylov_impl *out) {
  for (int i = 0; name && i < ODB_KRY_IMPL_COUNT; i++)
    if (!strcmp(name, odb_krylov_impl_names[i])) { *out = (odb_krylov_impl)i; return ODB_OK; }
  return ODB_FAIL(ODB_ERR_NAME, "unknown Krylov impl '%s' (cpu, cusparse, fused, persistent)",
                  name ? name : "(null)");
}
static inline odb_status odb_krylov_sync_parse(const char *name, odb_krylov_sync *out) {
  for (int i = 0; name && i < ODB_KRY_SYNC_COUNT; i++)
    if (!strcmp(name, odb_krylov_sync_names[i])) { *out = (odb_krylov_sync)i; return ODB_OK; }
  return ODB_FAIL(ODB_ERR_NAME, "unknown sync '%s' (lock, lockfree, wss)", name ? name : "(null)");
}

#ifdef __cplusplus
}
#endif

#endif
