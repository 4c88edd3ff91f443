/* odb_tsm.h - tall & skinny matrix products: C = A^T B (tsmttsm) and
   B = A C (tsmm), real and complex double, row-major; CPU versions. The
   products, their roofline and the shapes studied follow D. Ernst,
   G. Hager, J. Thies and G. Wellein, "Performance engineering for real and
   complex tall & skinny matrix multiplication kernels on GPUs" (IJHPCA,
   2020). */
#ifndef ODB_TSM_H
#define ODB_TSM_H

#include <stddef.h>
#include <stdint.h>
#include "odb_measure.h"
#include "odb_status.h"

/*
** Shapes and layout (all row-major, no padding):
**   tsmttsm  C = A^T B   A: K x M, B: K x N, C: M x N (output)
**   tsmm     B = A C     A: K x M, C: M x N, B: K x N (output)
** Complex matrices ("z") hold interleaved (re, im) doubles; the transpose
** is the plain one (no conjugation), as in BLAS's op 'T'.
** M and N are the skinny sides (1..ODB_TSM_MAX_WIDTH for the generated
** GPU kernels; the CPU versions take any positive width), K the long one.
*/
#define ODB_TSM_MAX_WIDTH 64

typedef enum odb_tsm_op { ODB_TSM_TSMTTSM = 0, ODB_TSM_TSMM = 1 } odb_tsm_op;
typedef enum odb_tsm_dtype { ODB_TSM_D = 0, ODB_TSM_Z = 1 } odb_tsm_dtype;

/* "tsmttsm", "tsmm" / "d", "z". */
const char *odb_tsm_op_name(odb_tsm_op op);
const char *odb_tsm_dtype_name(odb_tsm_dtype t);
/* Parses the names above; ODB_ERR_NAME (listing them) when unknown. */
odb_status odb_tsm_op_parse(const char *name, odb_tsm_op *out);
odb_status odb_tsm_dtype_parse(const char *name, odb_tsm_dtype *out);

/*
** Checks a shape: M, N >= 1 (and <= ODB_TSM_MAX_WIDTH when max_width is
** set), K >= 1. ODB_ERR_ARG with a message naming the bad value and the
** supported range.
*/
odb_status odb_tsm_check_shape(long M, long N, long K, int max_width);

/* Doubles of A (K x M), of the second input X (B: K x N for tsmttsm, C:
   M x N for tsmm) and of the output (C: M x N, or B: K x N); complex
   entries are two doubles. ODB_ERR_NOMEM, naming the shape and the bytes
   it would need, when the bytes of the three together do not fit a size_t
   (the counts are then 0); every offset into them fits a long then. */
odb_status odb_tsm_sizes(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                         long K, size_t *na, size_t *nx, size_t *nout);

/* Flops (2MNK real, 8MNK complex) and the fewest bytes moved (each of the
   three matrices once) of one product. */
double odb_tsm_flops(odb_tsm_dtype t, long M, long N, long K);
double odb_tsm_bytes(odb_tsm_dtype t, long M, long N, long K);

/*
** The CPU versions, with nthreads POSIX threads (<= 0: one per online
** core; capped so that each has at least a few thousand rows). tsmttsm:
** each thread sums its block of rows into a private M x N tile, the tiles
** are added in thread order (the result does not depend on timing).
** tsmm: each thread writes its block of rows of B. Sums are kept in
** registers across rows (tiles of C, or several rows of B at once; see
** odb_tsm_cpu.c), complex data as its real view. Arguments as in the table
** above; out and the inputs must not overlap. ODB_ERR_NOMEM when a thread's
** buffers cannot be had.
*/
odb_status odb_tsm_cpu(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                       long K, const double *A, const double *B_or_C,
                       double *out, int nthreads);

/* The threads odb_tsm_cpu runs for K rows when asked for want (<= 0: one
   per online core): at most one per 4096 rows, at least 1, at most 256. */
int odb_tsm_cpu_threads(long K, int want);

/*
** The plain triple loop (one thread, one summation order), the reference
** that the tests compare everything with.
*/
void odb_tsm_naive(odb_tsm_op op, odb_tsm_dtype t, long M, long N, long K,
                   const double *A, const double *B_or_C, double *out);

/* ||x - y||_F / ||y||_F over n doubles (||x - y|| when y is 0). */
double odb_tsm_relerr(const double *x, const double *y, size_t n);


/* {====== one product on the CPU, timed (core/dense/odb_tsm_host.c) */

typedef struct odb_tsm_host odb_tsm_host;

/*
** A product of one shape (M, N in 1..ODB_TSM_MAX_WIDTH, K >= 1) with its
** own matrices in host memory, random entries in [-1, 1) from seed, run by
** odb_tsm_cpu with `threads` threads (0: one per online core; at most
** 256). ODB_ERR_NOMEM, with the size, when the matrices do not fit.
*/
odb_status odb_tsm_host_create(odb_tsm_op op, odb_tsm_dtype t, long M,
                               long N, long K, int threads, uint64_t seed,
                               odb_tsm_host **out);
void odb_tsm_host_destroy(odb_tsm_host *h);
/* The threads the product runs with. */
int odb_tsm_host_threads(const odb_tsm_host *h);
/* Runs of the product timed by odb_measure_run as o says (the context
   may be NULL). */
odb_status odb_tsm_host_time(odb_tsm_host *h, const odb_measure_opts *o,
                             struct odb_ctx *ctx, odb_measurement *m);
/*
** The peer in turn: rounds of one run of ours and one of the plain loop
** (one thread, the rows streamed in order, C += A[k]^T B[k] or
** B[k] = A[k] C), timed by odb_measure_run as o says (a round is one
** sample of its loop: the repetitions stop on the rounds' spread). The
** summaries of our runs and of the plain loop's.
*/
odb_status odb_tsm_host_compare(odb_tsm_host *h, const odb_measure_opts *o,
                                struct odb_ctx *ctx, odb_measurement *mine,
                                odb_measurement *plain);
/*
** The caller's inputs in place of the random ones: A (K x M) and the
** second input X (B: K x N, or C: M x N for tsmm), host arrays in the
** layout above (complex: interleaved), copied. Time, check and result use
** them from then on. Assumes the shape of h.
*/
void odb_tsm_host_load(odb_tsm_host *h, const double *A, const double *X);
/* One product of the current inputs by odb_tsm_cpu into out (the output's
   doubles: C M x N, or B K x N). */
odb_status odb_tsm_host_result(odb_tsm_host *h, double *out);
/* The larger relative Frobenius difference of ours and of the plain loop
   from odb_tsm_naive, on the first min(K, 20011) rows (outputs poisoned
   first). */
odb_status odb_tsm_host_check(odb_tsm_host *h, double *err);

/* }====== */

#endif
