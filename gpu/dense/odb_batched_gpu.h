/* odb_batched_gpu.h - batched small dense matrices on the GPU (C interface):
   the compact (interleaved) and standard layouts of odb_batched.h in device
   memory, LU without pivoting, TRSM/TRSV, GEMM/GEMV and solves in a
   serial-per-lane and a team variant, the line block-tridiagonal factor and
   solve, and the cuBLAS batched LU baseline. Only builds with CUDA have
   them; callers outside gpu/ reach them through the "cuda" table of
   odb_batched_impl.h (odb_batched_cuda.c).

   All matrix pointers are device memory of the current device, laid out as
   the batch says (odb_batch_mat_len / odb_batch_rhs_len doubles, padding
   lanes included). Launches go to the legacy default stream; calls that
   return a result computed on the device (a bad pivot) wait for it, the
   others do not (odb_bgpu_sync waits). Not thread-safe: one host thread
   drives the GPU. */
#ifndef ODB_BATCHED_GPU_H
#define ODB_BATCHED_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_batched.h"
#include "odb_batched_impl.h"

/* The "cuda" table of odb_batched_impl.h (odb_batched_cuda.c). */
extern const odb_batched_ops odb_batched_cuda_ops;

/* Lanes per pack on the GPU: any of 1 (standard), 2, 4, 8, 16, 32. */
#define ODB_BGPU_MAX_VL 32
/* The default: 16 lanes = 128 bytes per element (the seed's GPU choice). */
#define ODB_BGPU_DEFAULT_VL 16

/*
** How a kernel maps threads to matrices:
**   serial   one thread per matrix (lane), the matrix in registers for
**            B <= 16 (B a template parameter), in place in memory above;
**   serial2  one thread per two adjacent lanes with 16-byte double2
**            accesses (compact layout with an even VL; LU, solve and the
**            block-tridiagonal kernels);
**   team     B threads per matrix, thread i owning row i (several threads
**            per matrix for larger B; LU, TRSM/TRSV, GEMM/GEMV, solve,
**            and the block-tridiagonal lines for B <= 16);
**   stream   (block-tridiagonal lines only; compact layout with VL 4, 8
**            or 16, B <= 16, compute capability 9.0 or newer) a block of
**            threads per pack, several threads per line, the blocks
**            streamed through a ring of shared-memory stages by bulk
**            copies (cp.async.bulk with mbarriers) block rows ahead: the
**            solve's factors, the factor's input blocks (each factor
**            written out once);
**   auto     the one picked for the op, layout and B (odb_bgpu_pick);
**   cublas   (block-tridiagonal lines only, any layout and B) the same
**            block LU and solve as cuBLAS batched calls per block row
**            across all lines (odb_bgpu_btd_blas_*); parsed and named by
**            the "cuda" table (odb_batched_cuda.c), which runs it: the
**            kernel entry points here (odb_bgpu_btd_factor, ...) refuse it.
*/
typedef enum odb_bgpu_variant {
  ODB_BGPU_AUTO = 0,
  ODB_BGPU_SERIAL = 1,
  ODB_BGPU_SERIAL2 = 2,
  ODB_BGPU_TEAM = 3,
  ODB_BGPU_STREAM = 4,
  ODB_BGPU_CUBLAS = 5
} odb_bgpu_variant;

/* The operations, for variant choice, applicability and byte counts. */
typedef enum odb_bgpu_op {
  ODB_BGPU_OP_LU = 0,      /* LU in place */
  ODB_BGPU_OP_SOLVE = 1,   /* x := (LU)^{-1} x with given factors */
  ODB_BGPU_OP_TRSM = 2,    /* X := L^{-1} X (unit lower, X B x B) */
  ODB_BGPU_OP_GEMM = 3,    /* C := A X (B x B) */
  ODB_BGPU_OP_GEMV = 4     /* y := A x */
} odb_bgpu_op;

const char *odb_bgpu_variant_name(odb_bgpu_variant v);
/* "auto", "serial", "serial2", "team", "stream"; ODB_ERR_NAME for
   others. */
odb_status odb_bgpu_variant_parse(const char *name, odb_bgpu_variant *out);
const char *odb_bgpu_op_name(odb_bgpu_op op);
/* "lu", "solve", "trsm", "gemm", "gemv"; ODB_ERR_NAME for others. */
odb_status odb_bgpu_op_parse(const char *name, odb_bgpu_op *out);

/* Like odb_batch_init, with vl in {2, 4, 8, 16, 32} (0: 16) for the GPU. */
odb_status odb_bgpu_batch_init(odb_batch *bt, odb_batched_layout layout,
                               long n, int b, int vl);

/* ODB_OK when this build has CUDA and a device answers; otherwise
   ODB_ERR_NO_DEVICE with the reason. */
odb_status odb_bgpu_ready(void);

/* The variant `auto` stands for (never ODB_BGPU_AUTO). */
odb_bgpu_variant odb_bgpu_pick(const odb_batch *bt, odb_bgpu_op op);
/* ODB_OK when variant v (auto resolved) runs op on bt, else ODB_ERR_ARG
   saying why (serial2 needs the compact layout with an even VL; TRSM,
   GEMM and GEMV have no serial2; stream is for block-tridiagonal solves
   only). *out gets the resolved variant. */
odb_status odb_bgpu_resolve(const odb_batch *bt, odb_bgpu_op op,
                            odb_bgpu_variant v, odb_bgpu_variant *out);
/* Bytes an op must move at least (each operand read once, each result
   written once; LU 2nB^2, solve n(B^2 + 2B), TRSM 3nB^2 (L counted whole),
   GEMM 3nB^2, GEMV n(B^2 + 2B), times 8). */
double odb_bgpu_op_bytes(const odb_batch *bt, odb_bgpu_op op);

/* {====== device memory (doubles) */
odb_status odb_bgpu_alloc(size_t doubles, double **out);
void odb_bgpu_free(void *d);
odb_status odb_bgpu_upload(double *d, const double *h, size_t doubles);
odb_status odb_bgpu_download(double *h, const double *d, size_t doubles);
odb_status odb_bgpu_copy(double *dst, const double *src, size_t doubles);
/* Waits for the device; reports a failed kernel. */
odb_status odb_bgpu_sync(void);
/* Copies matrix p (row-major B x B) between host and a batch on the
   device (0 <= p < n). */
odb_status odb_bgpu_get_matrix(const odb_batch *bt, const double *dA, long p,
                               double *h);
odb_status odb_bgpu_set_matrix(const odb_batch *bt, double *dA, long p,
                               const double *h);
/* }====== */

/* {====== layouts and data on the device */

/*
** Converts n matrices from the standard layout (src, row-major; with
** transpose set, column-major, i.e. the cuBLAS storage) to bt's layout
** (dst; padding lanes identity), and back (only real matrices written).
*/
odb_status odb_bgpu_pack(const odb_batch *bt, const double *src, double *dst,
                         int transpose);
odb_status odb_bgpu_unpack(const odb_batch *bt, const double *src,
                           double *dst, int transpose);
/* The same for right-hand sides of m columns (padding zero). */
odb_status odb_bgpu_pack_rhs(const odb_batch *bt, int m, const double *src,
                             double *dst);
odb_status odb_bgpu_unpack_rhs(const odb_batch *bt, int m, const double *src,
                               double *dst);
/* The values of odb_batched_random / odb_batched_random_rhs, generated on
   the device. */
odb_status odb_bgpu_random(const odb_batch *bt, uint64_t seed,
                           double dominance, double *dA);
odb_status odb_bgpu_random_rhs(const odb_batch *bt, int m, uint64_t seed,
                               double *dx);
/* }====== */

/* {====== batched operations (variant as above; auto picks) */

/*
** LU without pivoting of every matrix in place. A zero, tiny or non-finite
** pivot (ODB_BATCHED_PIVOT_TINY, as on the CPU) gives ODB_ERR_ARG naming
** the lowest such matrix (0-based) and its row, also stored in *bad (-1 on
** success); the others are factored all the same. Waits.
*/
odb_status odb_bgpu_lu(const odb_batch *bt, odb_bgpu_variant v, double *dA,
                       long *bad);
/* The same without the pivot check and without waiting (for timing). */
odb_status odb_bgpu_lu_launch(const odb_batch *bt, odb_bgpu_variant v,
                              double *dA);
/* Triangular solves with LU factors T (kinds of odb_batched.h); X is B x B
   per matrix (trsm) or one vector (trsv, left kinds). */
odb_status odb_bgpu_trsm(const odb_batch *bt, odb_bgpu_variant v,
                         odb_batched_trsm_kind kind, const double *dT,
                         double *dX);
odb_status odb_bgpu_trsv(const odb_batch *bt, odb_bgpu_variant v,
                         odb_batched_trsm_kind kind, const double *dT,
                         double *dx);
/* C := alpha A X + beta C (B x B); y := alpha A x + beta y. The outputs
   must not alias the inputs. */
odb_status odb_bgpu_gemm(const odb_batch *bt, odb_bgpu_variant v,
                         double alpha, const double *dA, const double *dX,
                         double beta, double *dC);
odb_status odb_bgpu_gemv(const odb_batch *bt, odb_bgpu_variant v,
                         double alpha, const double *dA, const double *dx,
                         double beta, double *dy);
/* x := A^{-1} x with dLU from odb_bgpu_lu (one vector per matrix). */
odb_status odb_bgpu_lu_solve(const odb_batch *bt, odb_bgpu_variant v,
                             const double *dLU, double *dx);
/* }====== */

/* {====== timing with device events on the default stream */
/* Records the start; odb_bgpu_elapsed records the end, waits and gives the
   seconds in between. */
odb_status odb_bgpu_mark(void);
odb_status odb_bgpu_elapsed(double *seconds);
/* Device-to-device copy bandwidth (GB/s, bytes read + written): the
   figure of odb_cuda_copy_bandwidth, measured once per process; `bytes` is
   not used (pass 0). */
odb_status odb_bgpu_copy_bandwidth(size_t bytes, double *gbs);
/* }====== */

/* {====== the cuBLAS baseline: getrfBatched / getrsBatched */

typedef struct odb_bgpu_blas odb_bgpu_blas;
/*
** Prepares cuBLAS on n column-major B x B matrices at dA (n*B*B doubles,
** e.g. odb_bgpu_unpack with transpose) and n vectors at dx (n*B doubles):
** the pointer arrays, pivots (pivot != 0: partial pivoting, as cuBLAS and
** PyTorch do by default; 0: none) and info arrays.
*/
odb_status odb_bgpu_blas_new(long n, int b, double *dA, double *dx, int pivot,
                             odb_bgpu_blas **out);
void odb_bgpu_blas_free(odb_bgpu_blas *h);
/* cublasDgetrfBatched in place; with bad != NULL waits and reports the
   lowest matrix whose info is nonzero (an exactly zero pivot). */
odb_status odb_bgpu_blas_lu(odb_bgpu_blas *h, long *bad);
/* cublasDgetrsBatched on dx with the factors of odb_bgpu_blas_lu. */
odb_status odb_bgpu_blas_solve(odb_bgpu_blas *h);
/* }====== */

/* {====== block-tridiagonal lines on the GPU (one thread per line) */

/*
** The device copy of a block-tridiagonal object's blocks has the host
** layout (odb_blocktridiag_blocks, odb_blocktridiag_blocks_len doubles);
** t gives the shape only and is not touched. The right-hand side is in the
** internal layout (odb_blocktridiag_work_len doubles; see
** odb_blocktridiag_pack_rhs). v: serial (a thread per line), serial2
** (a thread per two lines, double2), team (B <= 16: B threads per line,
** one per block row, cooperating through warp shuffles) or stream (see
** odb_bgpu_variant; the automatic plans); auto: odb_bgpu_btd_pick.
*/
odb_status odb_bgpu_btd_random(const odb_blocktridiag *t, uint64_t seed,
                               double dominance, double *dm);
/* Factors in place; a bad pivot gives ODB_ERR_ARG naming the lowest line
   and its block row (*bad_line as on the CPU). Waits. */
odb_status odb_bgpu_btd_factor(const odb_blocktridiag *t, odb_bgpu_variant v,
                               double *dm, long *bad_line);
/* Without the check and without waiting (for timing). */
odb_status odb_bgpu_btd_factor_launch(const odb_blocktridiag *t,
                                      odb_bgpu_variant v, double *dm);
odb_status odb_bgpu_btd_solve(const odb_blocktridiag *t, odb_bgpu_variant v,
                              const double *dm, double *dxp);
/* The variant auto picks for factor (solve 0) or solve (solve 1). */
odb_bgpu_variant odb_bgpu_btd_pick(const odb_blocktridiag *t, int solve);
/* The variant that runs for v (auto resolved), or
   ODB_ERR_ARG saying why v cannot run on t. */
odb_status odb_bgpu_btd_resolve(const odb_blocktridiag *t, odb_bgpu_variant v,
                                int solve, odb_bgpu_variant *out);
/*
** The stream solve with an explicit plan, for tuning: stages (2..16; 0:
** automatic, the most up to 4 that keep every block resident at once
** where 2 do) shared-memory stages of one block row each, and whether the
** intermediate y of the forward sweep stays in shared memory (y_on_chip
** 1) or goes through dxp (0, and -1: automatic), and the threads per line
** (1, and 2, 4 or 8 for B >= 5 with VL*threads <= 32; 0: automatic, by
** B and VL: odb_batched_btd.cu, stream_auto_tpl), which share the
** block-vector products. Refuses a plan that does not fit the device's
** shared memory.
*/
odb_status odb_bgpu_btd_solve_stream(const odb_blocktridiag *t, int stages,
                                     int y_on_chip, int threads_per_line,
                                     const double *dm, double *dxp);
/*
** The stream factor with an explicit plan, for tuning: with bad_line
** (not NULL) it waits and reports a refused pivot as odb_bgpu_btd_factor
** does; without, it neither checks nor waits (as
** odb_bgpu_btd_factor_launch). The kernel (odb_btd_kernel) and its
** threads per line, which share a block's rows and columns: the row
** kernel 1, 2, 4 or 8 with VL*threads <= 32 (the running Schur complement
** in shared memory), the tile kernel 16 or 32 and the warp kernel 8 (B <=
** 12), 16 or 32, with VL*threads <= 256 (the running Schur complement in
** registers); threads 0 and kernel AUTO: the plan's choice
** (odb_btd_factor_stream.cu, fs_plan_of), a kernel with threads 0: its
** usual threads. Stages (1..4 shared-memory stages of three blocks each,
** besides two blocks for the running Schur complement of the row kernel
** or the pivot buffers of the tile kernel; 0: automatic, the most from
** two that keep the packs in the fewest waves of resident blocks).
** Refuses a plan that does not fit the device's shared memory.
*/
odb_status odb_bgpu_btd_factor_stream(const odb_blocktridiag *t, int stages,
                                      int threads_per_line,
                                      odb_btd_kernel kernel, double *dm,
                                      long *bad_line);
/* }====== */

/* {====== the cuBLAS peer of the lines (odb_batched_cublas.cu)

   The same block LU without pivoting and the same solve as the kernels
   above, written as cuBLAS batched calls per block row r across all lines:
   cublasDgetrfBatched of D_r with no pivot array, cublasDtrsmBatched for
   C_r := L_r^-1 C_r (left, unit lower) and A_{r+1} := A_{r+1} U_r^-1
   (right, upper), cublasDgemmStridedBatched for D_{r+1} -= A_{r+1} C_r;
   the solve y_r = L_r^-1 (b_r - A_r y_{r-1}) forward and x_r = U_r^-1 (y_r
   - C_r x_{r+1}) backward with cublasDgemvStridedBatched and
   cublasDtrsmBatched of one column. So the factors are ours block by block.
   The getrs form (X_r = D_r^-1 C_r, A_{r+1} kept) has the same flops
   (4B^3 a row) but other factors; cuBLAS has no batched trsv.

   cuBLAS takes column-major matrices at a constant stride (the strided
   calls) or through arrays of pointers (getrf, trsm): the blocks are copied
   once from the object's layout into one column-major B x B matrix each,
   block (line, r, w) at ((r*3 + w)*lines + line)*B*B, so that the lines of
   one block row lie at stride B*B; the right-hand side likewise, vector
   (line, r) at (r*lines + line)*B. The copies and the pointer arrays are
   outside the timed calls. Lines <= 2^31 - 1 (cuBLAS's batch count). */
typedef struct odb_bgpu_btd_blas odb_bgpu_btd_blas;
/* Buffers for the shape of t (kept: t must outlive h; only its shape is
   read, and its lines and length in the refused-pivot message). */
odb_status odb_bgpu_btd_blas_new(const odb_blocktridiag *t,
                                 odb_bgpu_btd_blas **out);
void odb_bgpu_btd_blas_free(odb_bgpu_btd_blas *h);
/* The device blocks dm (the host layout of t) into the column-major copy,
   and back (real lines only; padding lanes of dm are not written). */
odb_status odb_bgpu_btd_blas_load(odb_bgpu_btd_blas *h, const double *dm);
odb_status odb_bgpu_btd_blas_store(const odb_bgpu_btd_blas *h, double *dm);
/* Factors the column-major copy. With bad_line (not NULL) every pivot is
   checked as on the CPU (|u_kk| > ODB_BATCHED_PIVOT_TINY ||D_r||_F, the
   norm taken before the LU) and a refused one gives ODB_ERR_ARG naming the
   lowest line and its block row, as odb_bgpu_btd_factor (waits); without,
   neither checks nor waits (for timing). */
odb_status odb_bgpu_btd_blas_factor(odb_bgpu_btd_blas *h, long *bad_line);
/* A right-hand side in the internal layout (odb_blocktridiag_work_len
   doubles, device) into the column-major copy, and back. */
odb_status odb_bgpu_btd_blas_rhs_load(odb_bgpu_btd_blas *h,
                                      const double *dxp);
odb_status odb_bgpu_btd_blas_rhs_store(const odb_bgpu_btd_blas *h,
                                       double *dxp);
/* Solves the copied right-hand side with the factors of
   odb_bgpu_btd_blas_factor; does not wait. */
odb_status odb_bgpu_btd_blas_solve(odb_bgpu_btd_blas *h);
/* }====== */

#ifdef __cplusplus
}
#endif

#endif
