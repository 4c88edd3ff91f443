/* odb_tsm_gpu.h - the generated tall & skinny kernels on the current CUDA
   device, the cuBLAS baseline, and their timing (C interface). All matrix
   pointers here are device memory; launches go to the legacy default
   stream. */
#ifndef ODB_TSM_GPU_H
#define ODB_TSM_GPU_H

#include "odb_gen_tsm.h"
#include "odb_tsm.h"
#include "odb_tsm_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct odb_tsm_kernel odb_tsm_kernel;

/*
** Generates, compiles (NVRTC, disk cache) and loads the kernel of c for
** the current device. ODB_ERR_ARG for a bad configuration or a compile
** error, ODB_ERR_NO_DEVICE without a device.
*/
odb_status odb_tsm_kernel_create(const odb_tsm_cfg *c, odb_tsm_kernel **out);
/* Compiles the kernels of list[0..n) that the disk cache lacks, one
   thread per CPU (odb_nvrtc_prefetch), so that creating them afterwards
   only loads them. Returns how many were compiled. */
int odb_tsm_prefetch(const odb_tsm_cfg *list, int n);
void odb_tsm_kernel_free(odb_tsm_kernel *k);
const odb_tsm_cfg *odb_tsm_kernel_cfg(const odb_tsm_kernel *k);
/* Registers per thread and spilled bytes the compiler gave it. */
int odb_tsm_kernel_regs(const odb_tsm_kernel *k);
int odb_tsm_kernel_spill(const odb_tsm_kernel *k);
/* Blocks of a launch over K rows. */
unsigned odb_tsm_kernel_grid(const odb_tsm_kernel *k, long K);
/* Blocks of k that fit on one SM at once (the grid of blocks_per_sm 0). */
int odb_tsm_kernel_fit(const odb_tsm_kernel *k);

/*
** One product over K rows (see odb_tsm.h for X and out), one launch:
** tsmttsm's kernel zeroes out itself (its first block), so one launch of
** a kernel at a time (a module's counters; the default stream keeps it).
** Does not wait.
*/
odb_status odb_tsm_kernel_run(odb_tsm_kernel *k, const double *A,
                              const double *X, double *out, long K);

/*
** The same product through cuBLAS (D/Z gemm on the row-major data read as
** column-major transposes; Ernst et al., §1.5). Does not wait.
*/
odb_status odb_tsm_cublas(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                          long K, const double *A, const double *X,
                          double *out);

/*
** Times reps runs (after 2 warm-up runs) with device events; *median
** gets the median seconds of one run (odb_measure_summarize's). k NULL:
** cuBLAS.
*/
odb_status odb_tsm_time(odb_tsm_kernel *k, odb_tsm_op op, odb_tsm_dtype t,
                        long M, long N, long K, const double *A,
                        const double *X, double *out, int reps,
                        double *median);
/*
** Races nk (1..4) kernels (NULL entries: cuBLAS) on the same data: reps
** rounds, each running every kernel once in turn, so that all of them
** see the same clocks (a compute-bound FP64 kernel at the power cap runs
** 10-15% slower when the card is hot). medians[j] gets kernel j's median
** seconds of one run; each (NULL, or reps * nk entries; reps clamped to
** 1..201) every run's seconds, round by round (kernel j of round i at
** i * nk + j). Warm-up: 2 rounds.
*/
odb_status odb_tsm_time_race(odb_tsm_kernel *const *ks, int nk,
                             odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                             long K, const double *A, const double *X,
                             double *out, int reps, double *medians,
                             double *each);

/* Multiprocessors of the current device (0 when unknown). */
int odb_tsm_sm_count(void);
/* Compute capability of the current device as major * 10 + minor (0 when
   unknown): the cc argument of odb_tsm_space_list. */
int odb_tsm_device_cc(void);

/* {====== tuned kernels of a shape (odb_tsm_plan.c); the binding reaches
   them through the "cuda" table of odb_tsm_impl.h (odb_tsm_cuda.c) */

struct odb_ctx;
struct odb_tunedb;

/*
** A tall & skinny product of one shape on the "cuda" backend, with its own
** device matrices (random entries in [-1, 1)) and the best kernel known
** for the shape. Creating it tunes through the tuner (strategy
** "exhaustive" over the space, the register estimate of §5.2 as a
** constraint, each configuration checked against the CPU reference on
** min(K, 20011) rows before it is timed) unless the tuning database
** already holds the evaluations; they are stored there.
*/
typedef struct odb_tsm_plan odb_tsm_plan;

typedef struct odb_tsm_plan_opts {
  int full;                 /* 1: the exhaustive space; 0: the quick one */
  struct odb_tunedb *db;    /* NULL: the default database (if it opens) */
  int no_db;                /* 1: keep nothing */
} odb_tsm_plan_opts;

/*
** M, N in 1..ODB_TSM_MAX_WIDTH (ODB_ERR_ARG naming the range otherwise),
** K >= 1. ODB_ERR_NO_DEVICE when ctx has no "cuda" backend, ODB_ERR_NOMEM
** when the matrices do not fit. o may be NULL (quick space, default db).
*/
odb_status odb_tsm_plan_create(struct odb_ctx *ctx, odb_tsm_op op,
                               odb_tsm_dtype t, long M, long N, long K,
                               const odb_tsm_plan_opts *o,
                               odb_tsm_plan **out);
void odb_tsm_plan_destroy(odb_tsm_plan *p);
/* The chosen configuration ("tm=4 tn=8 ..."), registers, and how the
   search went: configurations evaluated, of them taken from the database. */
const char *odb_tsm_plan_config(const odb_tsm_plan *p);
int odb_tsm_plan_regs(const odb_tsm_plan *p);
void odb_tsm_plan_search(const odb_tsm_plan *p, long *evals, long *cached);
/* How many of the tuner's fastest configurations the final race ran in
   turn with cuBLAS (0: none); *changed (may be NULL) 1 when its winner is
   not the tuner's fastest. */
int odb_tsm_plan_raced(const odb_tsm_plan *p, int *changed);
/* reps (1..201) runs of the chosen kernel / of cuBLAS, each between
   device events, summarized by odb_measure_summarize. */
odb_status odb_tsm_plan_time(odb_tsm_plan *p, int reps, odb_measurement *m);
odb_status odb_tsm_plan_cublas_time(odb_tsm_plan *p, int reps,
                                    odb_measurement *m);
/* Both in turn, reps rounds of one run each (so both see the same
   clocks): the summaries of the chosen kernel's runs and of cuBLAS's. */
odb_status odb_tsm_plan_compare(odb_tsm_plan *p, int reps,
                                odb_measurement *mine,
                                odb_measurement *cublas);
/* The larger relative Frobenius difference of the chosen kernel's output
   from the CPU reference and from cuBLAS's, on the verification rows:
   min(K, 20011) rows, random or the first rows of the loaded inputs
   (output poisoned before each run). */
odb_status odb_tsm_plan_check(odb_tsm_plan *p, double *err);
/* The caller's host inputs (A K x M, X as the op's second input) in place
   of the random ones, for time, check and result; the verification rows
   become their first min(K, 20011) rows (the CPU reference recomputed). */
odb_status odb_tsm_plan_load(odb_tsm_plan *p, const double *A,
                             const double *X);
/* One run of the chosen kernel on the current inputs, its output copied
   to out (host). */
odb_status odb_tsm_plan_result(odb_tsm_plan *p, double *out);

/* }====== */

/* The "cuda" table of odb_tsm_impl.h (odb_tsm_cuda.c). */
extern const odb_tsm_ops odb_tsm_cuda_ops;

#ifdef __cplusplus
}
#endif

#endif
