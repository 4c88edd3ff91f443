/* odb_dist_link.cu - the link between the GPU ranks of a distributed
** matrix on one host (odb_dist_link.h): its set-up over MPI, the pack and
** fetch kernels of the halo, and the mailbox the fused Krylov kernels sum
** through.
**
** Assumes: the device of the rank is current (odb_dist_gpu.cu's); the
** plan's send_off and recv_off count doubles and agree between
** neighbours by construction (odb_dist_sparse.c), so the values rank q
** sends this rank are count doubles at the offset q announces; every
** rank queues the same pack and fetch kernels in the same order; the
** waits spin one thread a block of a GPU that has nothing else to do on
** this stream until the neighbour answers.
*/
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "odb_cuda_check.h"
#include "odb_dist_ipc.h"
#include "odb_dist_link.h"
#include "odb_dist_wait.cuh"
/* odb_dist.h includes mpi.h in MPI builds: its C interface only */
#define OMPI_SKIP_MPICXX 1
extern "C" {
#include "odb_dist.h"
}

enum { LT = 256, FETCH_BLOCKS = 66 };

/* A rank's mailbox: one allocation that every other rank maps. The other
   ranks write sum (odb_kxsum's slots), ready and copied; the rest only
   this rank touches. Zero at start. */
typedef struct dl_box {
  kx_slot sum[2 * KX_MAX];                 /* [parity][from rank] */
  unsigned long long ready[KX_MAX];        /* from rank q: its send buffer
                                              holds our values of exchange e */
  unsigned long long copied[KX_MAX];       /* from rank q: it has copied
                                              our values of exchange e */
  long long seq;                           /* odb_kxsum.seq */
  unsigned closed[KX_MAX];                 /* from rank q: it has closed its
                                              mappings of this mailbox and
                                              of our send buffer */
  unsigned fail;                           /* a wait gave up */
  unsigned ticket[2];                      /* elects the last block: pack, fetch */
  odb_kxsum xs;                            /* what the fused kernels take */
} dl_box;

/* The pack's arguments, by value. */
typedef struct dl_pack {
  const int32_t *idx;
  double *out;                             /* this rank's send buffer */
  long long ns;
  int nto;                                 /* ranks this rank sends to */
  unsigned long long *ready_to[KX_MAX];    /* their ready[this rank], mapped */
  dl_box *box;
} dl_pack;

/* The fetch's arguments, by value. */
typedef struct dl_fetch {
  int nfrom;                               /* ranks this rank receives from */
  int from[KX_MAX];
  const double *src[KX_MAX];               /* their send buffers at our values, mapped */
  long long dst[KX_MAX], count[KX_MAX];    /* ghost offset, doubles */
  unsigned long long *copied_to[KX_MAX];   /* their copied[this rank], mapped */
  int nto, to[KX_MAX];                     /* ranks this rank sends to */
  dl_box *box;
  long long timeout_ns;
} dl_fetch;

struct odb_dlink {
  int R, me;
  dl_box *box;                             /* this rank's (device) */
  dl_box *boxes[KX_MAX];                   /* every rank's, mapped; boxes[me] = box */
  double *peer_send[KX_MAX];               /* mapped send buffers, by rank */
  unsigned long long nx;                   /* exchanges queued */
  long nloc;
  dl_pack pk;
  dl_fetch ft;
};

/* {====== the kernels */

/* out[i] = x[idx[i]]; the last block tells the ranks this rank sends to
   that exchange e is in its send buffer. */
__global__ void __launch_bounds__(LT) k_dlpack(const dl_pack a, const double *__restrict__ x,
                                               unsigned long long e) {
  __shared__ bool last;
  if (*(volatile unsigned *)&a.box->fail) return;
  for (long long i = (long long)blockIdx.x * LT + threadIdx.x; i < a.ns; i += (long long)gridDim.x * LT)
    a.out[i] = x[a.idx[i]];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&a.box->ticket[0], 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence_system();
  for (int j = 0; j < a.nto; j++) *(volatile unsigned long long *)a.ready_to[j] = e;
  a.box->ticket[0] = 0u;
}

/* Exchange e's ghosts into g (dx + nloc): waits for each sender's word,
   copies its values, tells it; the last block then waits until the ranks
   this rank sends to have copied its values. */
__global__ void __launch_bounds__(LT) k_dlfetch(const dl_fetch a, double *__restrict__ g,
                                                unsigned long long e) {
  __shared__ int lost;
  __shared__ bool last;
  dl_box *const box = a.box;
  if (threadIdx.x == 0) {
    lost = *(volatile unsigned *)&box->fail != 0;
    for (int j = 0; j < a.nfrom && !lost; j++)
      lost = odb_dwait_ge(&box->ready[a.from[j]], e, &box->fail, a.timeout_ns);
    __threadfence_system();
  }
  __syncthreads();
  if (lost) return;
  for (int j = 0; j < a.nfrom; j++) {
    const double *s = a.src[j];
    double *d = g + a.dst[j];
    const long long c = a.count[j], step = (long long)gridDim.x * LT;
    long long i = (long long)blockIdx.x * LT + threadIdx.x;
    /* four loads in flight a thread: each crosses the link */
    for (; i + 3 * step < c; i += 4 * step) {
      double v0 = __ldcv(s + i), v1 = __ldcv(s + i + step), v2 = __ldcv(s + i + 2 * step),
             v3 = __ldcv(s + i + 3 * step);
      d[i] = v0; d[i + step] = v1; d[i + 2 * step] = v2; d[i + 3 * step] = v3;
    }
    for (; i < c; i += step) d[i] = __ldcv(s + i);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    last = atomicAdd(&box->ticket[1], 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  for (int j = 0; j < a.nfrom; j++) *(volatile unsigned long long *)a.copied_to[j] = e;
  for (int k = 0; k < a.nto; k++)
    if (odb_dwait_ge(&box->copied[a.to[k]], e, &box->fail, a.timeout_ns)) break;
  box->ticket[1] = 0u;
}

/* }====== */

/* {====== host */

odb_status odb_dlink_pack(odb_dlink *L, const int32_t *idx, const double *dx) {
  unsigned long long e = ++L->nx;
  if (L->pk.nto == 0) return ODB_OK;
  dl_pack a = L->pk;
  long long b = (a.ns + LT - 1) / LT;
  a.idx = idx;
  k_dlpack<<<(unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b), LT>>>(a, dx, e);
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? ODB_OK : odb_cuda_fail(err, "k_dlpack<<<>>> (GPU ranks' halo)", __FILE__, __LINE__);
}

odb_status odb_dlink_fetch(odb_dlink *L, double *dx, cudaStream_t halo) {
  if (L->ft.nfrom + L->ft.nto == 0) return ODB_OK;
  k_dlfetch<<<FETCH_BLOCKS, LT, 0, halo>>>(L->ft, dx + L->nloc, L->nx);
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? ODB_OK : odb_cuda_fail(err, "k_dlfetch<<<>>> (GPU ranks' halo)", __FILE__, __LINE__);
}

void odb_dlink_pk_halo(const odb_dlink *L, const int32_t *idx, pk_halo *h) {
  memset(h, 0, sizeof *h);
  h->on = 1;
  h->nloc = L->nloc;
  h->idx = idx;
  h->out = L->pk.out;
  h->ns = L->pk.ns;
  h->nto = L->pk.nto;
  h->nfrom = L->ft.nfrom;
  for (int k = 0; k < L->pk.nto; k++) {
    h->ready_to[k] = L->pk.ready_to[k];
    h->copied[k] = &L->box->copied[L->ft.to[k]];
  }
  for (int j = 0; j < L->ft.nfrom; j++) {
    h->copied_to[j] = L->ft.copied_to[j];
    h->ready[j] = &L->box->ready[L->ft.from[j]];
    h->src[j] = L->ft.src[j];
    h->dst[j] = L->ft.dst[j];
    h->count[j] = L->ft.count[j];
  }
  h->fail = &L->box->fail;
  h->e0 = L->nx;
}

void odb_dlink_set_count(odb_dlink *L, unsigned long long nx) {
  L->nx = nx;
}

const odb_kxsum *odb_dlink_xsum(const odb_dlink *L) {
  return &L->box->xs;
}

odb_status odb_dlink_check(const odb_dlink *L, const char *who) {
  unsigned fail = 0;
  cudaError_t e = cudaMemcpy(&fail, &L->box->fail, sizeof fail, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return odb_cuda_fail(e, "cudaMemcpy (the link's fail word)", __FILE__, __LINE__);
  if (fail)
    return ODB_FAIL(ODB_ERR_IO, "%s: rank %d: another rank's GPU did not answer within %g s (the link "
                    "between the GPUs; ODEBENCH_MPI_TIMEOUT)", who, L->me, odb_dist_timeout());
  return ODB_OK;
}

/*
** Freeing what other ranks map (dist/rt/odb_dist_ipc.h): a rank closes
** its mappings of the others' send buffers and mailboxes, saying so in
** each mailbox (closed[]), and hands its own mailbox and send buffer to
** odb_dist_ipc_release, which frees them once every other rank has said
** so of them.
*/
void odb_dlink_free(odb_dlink *L, double *dsend) {
  static const unsigned one = 1;
  if (!L) return;
  for (int q = 0; q < KX_MAX; q++) {
    odb_dist_ipc_close(L->peer_send[q], 0, NULL);
    if (L->boxes[q] && L->boxes[q] != L->box)
      odb_dist_ipc_close(L->boxes[q], sizeof(dl_box), &L->boxes[q]->closed[L->me]);
  }
  if (L->box) {
    void *mine[2] = { L->box, dsend };
    /* this rank maps nothing of its own */
    if (cudaMemcpy(&L->box->closed[L->me], &one, sizeof one, cudaMemcpyHostToDevice) != cudaSuccess)
      (void)cudaGetLastError();
    odb_dist_ipc_release(mine, 2, L->box->closed, L->R);
  } else {
    void *mine[1] = { dsend };
    odb_dist_ipc_release(mine, 1, NULL, 0);
  }
  free(L);
}

/* What each rank tells every other at set-up. */
typedef struct dl_rec {
  cudaUUID_t uuid;
  cudaIpcMemHandle_t box, send;
  int good, has_send;
  long long off[KX_MAX];     /* where our values for rank q start in our
                                send buffer, -1: none */
} dl_rec;

/* Whether this rank wants the link; the reason it does not is the same
   on every rank except for the environment. */
static int dl_wanted(const odb_dsparse *A) {
  const char *e = getenv("ODEBENCH_GPU_LINK");
  if (e && strcmp(e, "off") == 0) return 0;
  return A->size > 1 && A->size <= KX_MAX && odb_dist_active() && odb_dist_local_size() == A->size;
}

/* Maps rank q's mailbox and, when this rank receives from q, its send
   buffer; fills the fetch's entry j. 0 when a mapping failed. */
static int dl_open(odb_dlink *L, const odb_dsparse *A, const dl_rec *all) {
  for (int q = 0; q < A->size; q++) {
    if (q == A->rank) { L->boxes[q] = L->box; continue; }
    if (cudaIpcOpenMemHandle((void **)&L->boxes[q], all[q].box, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      (void)cudaGetLastError();
      L->boxes[q] = NULL;
      return 0;
    }
  }
  for (int j = 0; j < A->nrecv; j++) {
    int q = A->recv_rank[j];
    long long c = A->recv_off[j + 1] - A->recv_off[j];
    if (!all[q].has_send || all[q].off[A->rank] < 0) return 0;
    if (cudaIpcOpenMemHandle((void **)&L->peer_send[q], all[q].send, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      (void)cudaGetLastError();
      L->peer_send[q] = NULL;
      return 0;
    }
    L->ft.from[j] = q;
    L->ft.src[j] = L->peer_send[q] + all[q].off[A->rank];
    L->ft.dst[j] = A->recv_off[j];
    L->ft.count[j] = c;
    L->ft.copied_to[j] = &L->boxes[q]->copied[A->rank];
  }
  L->ft.nfrom = A->nrecv;
  for (int j = 0; j < A->nsend; j++) {
    L->pk.ready_to[j] = &L->boxes[A->send_rank[j]]->ready[A->rank];
    L->ft.to[j] = A->send_rank[j];
  }
  L->pk.nto = L->ft.nto = A->nsend;
  return 1;
}

odb_status odb_dlink_setup(const odb_dsparse *A, double *dsend, odb_dlink **out) {
  int R = A->size, me = A->rank, dev = 0, good = 1, opened = 0;
  double flag = dl_wanted(A) ? 0.0 : 1.0;
  dl_rec *all = NULL;
  odb_dlink *L = NULL;
  odb_status st = ODB_OK;
  *out = NULL;
  if (R < 2) return ODB_OK;                    /* nothing to link; no collective */
  /* any rank that does not want it: none has it */
  ODB_TRY(odb_dist_allreduce_max(&flag, 1, "MPI_Allreduce (GPU ranks' link)"));
  if (flag != 0.0) return ODB_OK;
  all = (dl_rec *)calloc((size_t)R, sizeof *all);
  L = (odb_dlink *)calloc(1, sizeof *L);
  if (!all || !L) {
    free(all); free(L);
    return ODB_FAIL(ODB_ERR_NOMEM, "GPU ranks' link: %d ranks' records", R);
  }
  L->R = R; L->me = me; L->nloc = A->nloc;
  if (A->nsend > KX_MAX || A->nrecv > KX_MAX) good = 0;
  {
    dl_rec *mine = &all[me];
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    for (int q = 0; q < KX_MAX; q++) mine->off[q] = -1;
    if (good && (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
                 cudaMalloc((void **)&L->box, sizeof *L->box) != cudaSuccess ||
                 cudaMemset(L->box, 0, sizeof *L->box) != cudaSuccess ||
                 cudaIpcGetMemHandle(&mine->box, L->box) != cudaSuccess)) {
      (void)cudaGetLastError();
      good = 0;
    }
    mine->uuid = prop.uuid;
    if (good && dsend && A->nsend > 0) {
      if (cudaIpcGetMemHandle(&mine->send, dsend) != cudaSuccess) {
        (void)cudaGetLastError();
        good = 0;
      }
      mine->has_send = 1;
      for (int j = 0; j < A->nsend && good; j++) mine->off[A->send_rank[j]] = A->send_off[j];
    }
    mine->good = good;
  }
  for (int q = 0; q < R; q++)
    if ((st = odb_dist_bcast(&all[q], sizeof all[q], q, "MPI_Bcast (GPU ranks' link handles)")) != ODB_OK)
      goto done;
  for (int q = 0; q < R && good; q++)
    if (!all[q].good || (q != me && memcmp(&all[q].uuid, &all[me].uuid, sizeof all[me].uuid) == 0)) good = 0;
  /* the same on every rank: from the records all ranks have */
  opened = good;
  if (good) {
    L->pk.out = dsend;
    L->pk.ns = A->send_off[A->nsend];
    L->pk.box = L->box;
    L->ft.box = L->box;
    L->ft.timeout_ns = (long long)(odb_dist_timeout() * 1e9);
    good = dl_open(L, A, all);
  }
  if (good) {
    odb_kxsum xs;
    memset(&xs, 0, sizeof xs);
    for (int q = 0; q < R; q++) xs.box[q] = L->boxes[q]->sum;
    xs.seq = &L->box->seq;
    xs.fail = &L->box->fail;
    xs.timeout_ns = L->ft.timeout_ns;
    xs.rank = me;
    xs.size = R;
    if (cudaMemcpy(&L->box->xs, &xs, sizeof xs, cudaMemcpyHostToDevice) != cudaSuccess) {
      (void)cudaGetLastError();
      good = 0;
    }
  }
  flag = good ? 0.0 : 1.0;
  st = odb_dist_allreduce_max(&flag, 1, "MPI_Allreduce (GPU ranks' link)");
  if (st == ODB_OK && flag == 0.0) {
    *out = L;
    L = NULL;
  }
done:
  if (L && !opened && L->box) {   /* no rank mapped it: it goes now */
    if (cudaFree(L->box) != cudaSuccess) (void)cudaGetLastError();
    L->box = NULL;
  }
  odb_dlink_free(L, NULL);
  free(all);
  return st;
}

/* }====== */
