/* odb_sparse_impl.h - the implementations of the sparse family (device
** copies of matrices and their SpMV for ob.reservoir's matrices, and the
** Krylov solvers of ob.krylov) as ops tables registered by backend name:
** "cpu" (sparse_impl_cpu.c, built in: the Krylov reference, no device
** matrices) and, in builds with CUDA, "cuda" (gpu/sparse/odb_sparse_cuda.c,
** registered by odb_kernels_register). Also the options both take: the
** launch options of the GPU SpMV and the Krylov impls, syncs and options.
*/
#ifndef ODB_SPARSE_IMPL_H
#define ODB_SPARSE_IMPL_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_measure.h"
#include "odb_sparse.h"

/* Launch options of our kernels. block: threads per block (32..1024, a
** multiple of 32; Bdia: rounded to whole warps of cells and to what the
** kernel's registers allow); grain: CSR: threads per row (1..32, a power
** of two); BSR, ELL, HYB, DIA: rows per thread (1..64, grid-stride);
** Bdia: rows of a cell per thread (1, 2 or 4, dividing k); shared_x:
** Bdia only, the seed's cooperative loading of the x ranges a block needs
** into shared memory (6.1) instead of reading x through L1/L2; pair: Bdia
** only (even number of cells, k <= 8, grain 1, shared_x 0), a thread
** computes every row of two consecutive cells with 16-byte value loads;
** stream: Bdia only, the values are loaded with the evict-first cache hint.
** Zero pair and stream are the plain forms, so {block, grain, shared_x}
** initializers keep their meaning. */
typedef struct odb_sparse_gpu_opts {
  int block, grain, shared_x, pair, stream;
} odb_sparse_gpu_opts;

typedef enum odb_spmv_impl {
  ODB_SPMV_OURS = 0,       /* our kernel for g's format */
  ODB_SPMV_CUSPARSE        /* cuSPARSE: cusparseSpMV (CSR) or bsrmv (BSR) */
} odb_spmv_impl;

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
  double bytes_per_iter;     /* least traffic of one iteration (odb_krylov_min_bytes) */
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

/* A device copy of a matrix (gpu/sparse/odb_sparse_gpu.h). */
typedef struct odb_sparse_gpu odb_sparse_gpu;

typedef struct odb_sparse_ops {
  const char *backend;   /* "cpu", "cuda" */
  /* {====== device matrices; upload NULL where the backend has none (its
     matrices are the odb_sparse themselves) */
  odb_status (*upload)(const odb_sparse *A, odb_sparse_gpu **out);
  void (*free)(odb_sparse_gpu *g);
  /* Format, order, nonzeros and the bytes the copy holds. */
  void (*describe)(const odb_sparse_gpu *g, odb_sparse_format *fmt, long *n,
                   long *nnz, size_t *bytes);
  /* y = A x for host vectors of length n, through impl. */
  odb_status (*spmv_host)(odb_sparse_gpu *g, odb_spmv_impl impl,
                          const double *x, double *y, long n);
  /* Seconds per SpMV of impl: about reps runs timed as the backend
     does (the GPU: batches between device events), summarized. */
  odb_status (*bench)(odb_sparse_gpu *g, odb_spmv_impl impl, int reps,
                      odb_measurement *m);
  /* Tunes the launch options; *seconds the best. */
  odb_status (*tune)(odb_sparse_gpu *g, int reps, double *seconds);
  odb_sparse_gpu_opts (*get_opts)(const odb_sparse_gpu *g);
  odb_status (*set_opts)(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o);
  const char *(*opts_str)(const odb_sparse_gpu_opts *o, char *buf,
                          size_t len);
  /* The vendor routine of the baseline ("" where there is none). */
  const char *(*baseline_name)(const odb_sparse_gpu *g);
  /* }====== */
  /* {====== Krylov solvers: the impls of the backend (cpu: the
     reference; cuda: cusparse, fused, persistent). As
     odb_krylov_gpu_solve (gpu/sparse/odb_krylov_gpu.h). */
  odb_status (*krylov_solve)(const odb_sparse *A, odb_krylov_method method,
                             const double *b, double *x,
                             const odb_krylov_gpu_opts *o,
                             odb_krylov_result *res,
                             odb_krylov_gpu_info *info);
  /* Median seconds of one SpMV as impl does it, and the copy bandwidth;
     NULL where the backend does not time it. */
  odb_status (*krylov_spmv_seconds)(const odb_sparse *A, odb_krylov_impl impl,
                                    int reps, double *seconds,
                                    double *copy_bytes_per_s);
  /* }====== */
} odb_sparse_ops;

/* The CPU table (always registered). */
extern const odb_sparse_ops odb_sparse_cpu_ops;

/* Registers ops under its backend name. */
odb_status odb_sparse_impl_register(const odb_sparse_ops *ops);
/* The table of backend name; the registry's error otherwise. */
odb_status odb_sparse_impl_find(const char *name, const odb_sparse_ops **out);
/* The registered names ("cpu, cuda") into buf. */
const char *odb_sparse_impl_list(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
