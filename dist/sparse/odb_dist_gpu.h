/* odb_dist_gpu.h - GPU ranks of a distributed matrix (odb_dist_sparse.h):
** the rank's interior and boundary parts as device copies, its SpMV with
** the halo exchange overlapped, and BiCGStab, QMR and pipelined BiCGStab
** with their vectors on the device (docs/mpi.md, "GPU ranks").
**
** The device is the one the context's "cuda" backend made current
** (odb_kernels_register_on: the local rank's GPU modulo the host's
** count); nothing here picks a device. This header names no CUDA or MPI
** type: odb_dist_gpu.cu and odb_dist_krylov_gpu.cu implement it in builds
** with CUDA, odb_dist_gpu_none.c (every entry refuses) in builds without.
**
** The SpMV of a GPU rank (odb_dgpu_spmv), after M. A. Al-Mouhamed and
** A. H. Khan's hepta-diagonal SpMV with the plan of odb_dist_sparse.c:
** the interior rows are launched on the device at once; beside them, on
** a stream of the matrix's own, a gather kernel packs the values the
** neighbours need (send_idx) and they are copied to the matrix's pinned
** host buffer; the receives and sends are posted
** (odb_dsparse_halo_post) and waited for while the interior rows run;
** the ghosts are copied to the device after the owned values of x, and
** the boundary rows follow on that stream, beside the interior ones. With CUDA-aware MPI (odb_dsparse_cuda_aware)
** the packed values and the ghosts stay on the device: MPI gets the
** matrix's device buffers and the two host copies go. Every buffer under
** a request belongs to the matrix, device ones included; a stuck matrix
** keeps them (odb_dist_sparse.h, "Buffers under a request").
*/
#ifndef ODB_DIST_GPU_H
#define ODB_DIST_GPU_H

#ifdef __cplusplus
extern "C" {
#endif

#include "odb_dist_sparse.h"

typedef struct odb_dgpu odb_dgpu;

/* Makes A a GPU rank's matrix: device copies of its parts (any format the
   GPU SpMV takes: on several ranks the parts are CSR, ELL or HYB in local
   numbering, which those kernels read only where the columns point), the
   plan's send indices, device buffers and two device vectors for the SpMV
   of host vectors, and the host buffers pinned. ODB_ERR_UNSUPPORTED in a
   build without CUDA; ODB_ERR_NOMEM naming the bytes when the device
   lacks room. */
odb_status odb_dgpu_attach(odb_dsparse *A);
/* Frees A->gpu (A stuck: keeps the buffers MPI may still use). */
void odb_dgpu_free(odb_dsparse *A);

/* y = A x on device vectors: dx of nloc + nghost entries (its ghosts
   overwritten), dy of nloc. Ends with the boundary rows launched, not
   waited for; the device work of a later call on the legacy default
   stream follows it. A collective. */
odb_status odb_dgpu_spmv(odb_dsparse *A, double *dx, double *dy);
/* The same on host vectors through the matrix's device vectors: x (nloc
   read) up, y (nloc) back. */
odb_status odb_dgpu_spmv_host(odb_dsparse *A, const double *x, double *y);
/* For timing: x (nloc) into the matrix's device x once (put), then
   y = A x on the device vectors, waited for (run). */
odb_status odb_dgpu_bench_put(odb_dsparse *A, const double *x);
odb_status odb_dgpu_bench_run(odb_dsparse *A);

/* The path the SpMV of A's GPU ranks takes: "halo: none (one rank)";
   "halo: GPU peer copies, waits on the device" where A has the link of
   odb_dist_link.h (every rank a GPU of its own on one host); else
   "halo: CUDA-aware MPI" or "halo: host buffers". NULL A: the path
   without a link. */
const char *odb_dgpu_halo_path(const odb_dsparse *A);
/* This rank's part of the GPU copy bandwidth of the run, in bytes read
   and written per second: its device's odb_cuda_copy_bandwidth over the
   ranks of the host that share that device (local_rank modulo the
   device count, or all of them under ODEBENCH_DEVICE; local_size is
   odb_dist_local_size()), so that the sum over the ranks counts every
   GPU once. */
odb_status odb_dgpu_copy_share(int local_size, double *bytes_per_s);
/* The same for the read bandwidth (odb_cuda_read_bandwidth): the floor of
   an SpMV, which reads nearly all its bytes (a pass that only reads is
   the fastest a device moves them, so the floor is a lower bound). */
odb_status odb_dgpu_read_share(int local_size, double *bytes_per_s);
/* Device bytes A's GPU side holds (0 on a CPU rank). */
double odb_dgpu_bytes(const odb_dsparse *A);

/* odb_dkrylov_solve on a GPU rank (odb_dist_krylov_gpu.cu): the same
   loops, state machine, reductions in rank order (odb_dist_red.h), history
   and true residual, with the vectors and their updates and the rank's
   part of every dot product on the device. o is resolved (defaults set);
   At is attached when m is QMR. persistent (BiCGStab): the whole solve in
   one kernel a rank, its halo and sums on the device: CSR on ranks that
   have the link of odb_dist_link.h, CSR or Bdia on one rank; refused
   elsewhere. */
/* Where the scalar work of odb_dgpu_krylov's method m on A (and At for
   QMR) runs: "device" (the fused kernels of gpu/sparse sum every group
   over the ranks on the device and advance the state machine there, the
   host polls it: BiCGStab and QMR on one rank, or on ranks linked by
   odb_dist_link.h) or "host" (every reduction through the host:
   pipelined BiCGStab, ranks without the link, ODEBENCH_GPU_LINK=off). */
const char *odb_dgpu_krylov_control(const odb_dsparse *A, const odb_dsparse *At, int m);
odb_status odb_dgpu_krylov(odb_dsparse *A, odb_dsparse *At, int m, const double *b, double *x,
                           const odb_krylov_opts *o, int replace, int persistent,
                           odb_krylov_result *res, double *seconds);

#ifdef __cplusplus
}
#endif

#endif
