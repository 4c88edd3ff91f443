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
**   persistent  the in-kernel solver of M. A. Al-Mouhamed and A. H. Khan,
**               "SpMV and BiCG-Stab optimization for a class of
**               hepta-diagonal-sparse matrices on GPU" (§6.3-6.4): the whole
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
** Every form runs the CPU reference's scalar state machine
** (core/sparse/odb_krylov_state.h: the recurrences, the breakdown,
** stagnation and maxit tests), records the residual history and
** recomputes the true residual at the end: the result is the CPU's
** odb_krylov_result. Only builds with CUDA have these functions; callers
** outside gpu/ reach them through the "cuda" table of odb_sparse_impl.h
** (odb_sparse_cuda.c). The options and the impl names are there too.
*/
#ifndef ODB_KRYLOV_GPU_H
#define ODB_KRYLOV_GPU_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_sparse.h"
#include "odb_sparse_impl.h"

/* The "cuda" table of odb_sparse_impl.h (odb_sparse_cuda.c). */
extern const odb_sparse_ops odb_sparse_cuda_ops;

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

#ifdef __cplusplus
}
#endif

#endif
