/* odb_dist_link.h - the link between the GPU ranks of one distributed
** matrix when every rank drives a GPU of its own on one host
** (odb_dist_link.cu; docs/mpi.md, "GPU ranks that wait on the device").
** Included by the CUDA sources of dist/sparse only.
**
** Each rank keeps a mailbox in device memory that every other rank maps
** by CUDA IPC, and maps the send buffers of the ranks it receives from.
** Then:
**  - the halo of an SpMV travels with no host in the way: a pack kernel
**    gathers the values the neighbours need into the rank's send buffer
**    and tells them so (ready); on a stream of the matrix's own, beside
**    the interior rows, a fetch kernel waits for each neighbour's word,
**    copies its values over the GPUs' link into the ghosts, tells it
**    (copied), and waits until the ranks it sends to have copied this
**    rank's values, after which the send buffer may be written again;
**  - the fused Krylov kernels sum each group of dot products over the
**    ranks on the device (odb_kxsum, gpu/sparse/odb_krylov_gpu.cuh), so
**    the state machine runs on every GPU with the same bits and the host
**    only polls it.
** Every rank queues the same exchanges and reductions in the same order
** (a distributed SpMV and a solve are collectives), so their counts
** agree. A wait gives up after the timeout of odb_dist.h: the mailbox's
** fail word is set, the kernels after it return at once, and the host
** reports the rank whose neighbour did not answer (odb_dlink_check).
**
** When: more than one rank, at most KX_MAX, all on one host, every
** rank's GPU distinct (their UUIDs), every IPC mapping made, and
** ODEBENCH_GPU_LINK not "off" on any rank: then every rank has the link,
** else none (the host path of odb_dist_gpu.cu).
**
** Quiescence: when a rank's stream has ended, no other rank writes into
** its mailbox or reads its send buffer any more (each reduction waited
** for every rank's slot, each fetch for the copies of its own values),
** so a rank frees its link without a collective; its own memory goes
** once every other rank has closed its mappings of it.
*/
#ifndef ODB_DIST_LINK_H
#define ODB_DIST_LINK_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "odb_krylov_gpu.cuh"
extern "C" {
#include "odb_dist_sparse.h"
}

typedef struct odb_dlink odb_dlink;

/* A's link, or *out NULL where the conditions above do not hold on every
** rank. dsend: A's device send buffer (send_off[nsend] doubles, its own
** allocation; NULL when the rank sends nothing). A collective: every
** rank calls it for the same matrix. */
odb_status odb_dlink_setup(const odb_dsparse *A, double *dsend, odb_dlink **out);
/* Closes the other ranks' memory and frees this rank's mailbox and its
** send buffer dsend (which the link then owns; NULL: none), once no other
** rank maps them (odb_dist_link.cu, "Freeing what other ranks map").
** NULL L: nothing. */
void odb_dlink_free(odb_dlink *L, double *dsend);
/* Queues one exchange of A's halo for the vector dx (nloc + nghost):
** the pack of dx's values into dsend on the legacy stream (idx: the
** device send indices), then, on stream halo after the event ready
** that the caller records between the two (odb_dist_gpu.cu), the fetch
** into dx's ghosts. pack and fetch go in that order, once each an
** exchange. */
odb_status odb_dlink_pack(odb_dlink *L, const int32_t *idx, const double *dx);
odb_status odb_dlink_fetch(odb_dlink *L, double *dx, cudaStream_t halo);
/* The persistent kernel's halo (pk_halo, gpu/sparse/odb_krylov_gpu.cuh)
** over L: the same mailboxes, send buffer and mappings as the pack and
** fetch, idx the device send indices, its exchanges numbered on from the
** link's count; after the kernel, set_count takes the number it reached,
** so that later packs and fetches continue from there. */
void odb_dlink_pk_halo(const odb_dlink *L, const int32_t *idx, pk_halo *h);
void odb_dlink_set_count(odb_dlink *L, unsigned long long nx);
/* The cross-rank sums of the fused Krylov kernels (device memory). */
const odb_kxsum *odb_dlink_xsum(const odb_dlink *L);
/* ODB_OK, or ODB_ERR_IO naming the rank when a wait of the link gave up
** (reads the mailbox: waits for the device). who names the caller. */
odb_status odb_dlink_check(const odb_dlink *L, const char *who);

/* For the solvers of odb_dist_krylov_gpu.cu (defined in odb_dist_gpu.cu,
   which holds A->gpu): A's cross-rank sums, NULL without a link; and
   odb_dlink_check of A's link (ODB_OK without one). */
const odb_kxsum *odb_dgpu_xsum(const odb_dsparse *A);
/* A's link as the persistent kernel's halo: 0 (h untouched) without a
   link; after the kernel, pk_done hands the link its exchange count. */
int odb_dgpu_pk_halo(const odb_dsparse *A, pk_halo *h);
/* A's rows (CSR parts) as one local CSR on the device (interior rows,
   then boundary rows; columns below nloc + nghost) for the persistent
   kernel's SpMV: made at the first call and kept with A's device side. */
odb_status odb_dgpu_pk_csr(odb_dsparse *A, const int64_t **rp, const int32_t **ci, const double **va);
void odb_dgpu_pk_done(const odb_dsparse *A, unsigned long long nx);
odb_status odb_dgpu_link_check(const odb_dsparse *A, const char *who);

#endif
