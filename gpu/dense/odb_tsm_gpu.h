/* odb_tsm_gpu.h - the generated tall & skinny kernels on the current CUDA
   device, the cuBLAS baseline, and their timing (C interface). All matrix
   pointers here are device memory; launches go to the legacy default
   stream. */
#ifndef ODB_TSM_GPU_H
#define ODB_TSM_GPU_H

#include "odb_gen_tsm.h"
#include "odb_tsm.h"

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
** column-major transposes, §1.5 of the seed). Does not wait.
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

#ifdef __cplusplus
}
#endif

#endif
