/* odb_dist_gpu.cu - a GPU rank's side of a distributed matrix: the device
** copies of its parts, the gather kernel of its plan and its SpMV with the
** halo exchange overlapped (odb_dist_gpu.h).
**
** Streams: the interior rows (gpu/sparse/odb_sparse_gpu.h) and the Krylov
** vector kernels run on the legacy default stream, in order; the pack,
** the copies of the halo and the boundary rows run on a non-blocking
** stream of the matrix, which the legacy stream does not wait for: an
** event orders the pack after the writes of x (and of y by earlier
** kernels), another the legacy stream's next kernels (a slab's wells
** first) after the boundary rows. So the interior rows compute while the
** values are packed, copied, sent and received, and while the boundary
** rows run (their y entries are apart).
**
** Assumes: the device of the context's "cuda" backend is current on this
** thread (the binding's thread, odb_kernels_register_on); x vectors hold
** nloc + nghost entries and the parts read no entry past them (their
** columns are local indices below nloc + nghost, odb_dist_sparse.c). */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "odb_cuda_check.h"
#include "odb_dist_link.h"
extern "C" {
#include "cuda_backend.h"
#include "odb_dist_gpu.h"
#include "odb_sparse_gpu.h"
}

struct odb_dgpu {
  odb_sparse_gpu *Ai, *Ab;     /* interior and boundary parts (NULL: none) */
  odb_sparse_gpu *S;           /* Bdia on a slab of planes: its Bdia (Ai and
                                  Ab NULL) */
  odb_dslab_geo sg;            /* and its geometry */
  int32_t *didx;               /* send_idx on the device */
  double *dsend, *drecv;       /* packed values, ghosts (CUDA-aware MPI) */
  double *dx, *dy;             /* the SpMV of host vectors, D:bench */
  cudaStream_t halo;           /* pack and halo copies */
  cudaEvent_t ready, ghosts;   /* x written; ghosts in x */
  int has_stream, has_ready, has_ghosts;
  int pin_send, pin_recv;      /* host buffers registered with CUDA */
  int aware;                   /* MPI gets the device buffers */
  double bytes;                /* device bytes held */
  odb_dlink *link;             /* the GPUs of one host wait for each other
                                  on the device (odb_dist_link.h); NULL:
                                  the host path */
  /* the persistent BiCGStab's SpMV (CSR): the rank's interior and
     boundary rows as one local CSR, made at its first solve and kept */
  int64_t *pk_rp;
  int32_t *pk_ci;
  double *pk_va;
};

/* Packs x's values the neighbours need: out[i] = x[idx[i]]. */
__global__ void k_pack(long n, const int32_t *__restrict__ idx, const double *__restrict__ x,
                       double *__restrict__ out) {
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    out[i] = x[idx[i]];
}

static unsigned blocks_for(long n) {
  long b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

/* cudaMalloc of bytes (0: none), counted in g->bytes. */
static odb_status dev_alloc(void **p, size_t bytes, odb_dgpu *g, const char *what) {
  *p = NULL;
  if (bytes == 0) return ODB_OK;
  cudaError_t e = cudaMalloc(p, bytes);
  if (e != cudaSuccess) {
    *p = NULL;
    (void)cudaGetLastError();
    return ODB_FAIL(odb_cuda_status(e), "GPU rank: %s of %zu bytes: %s", what, bytes, cudaGetErrorString(e));
  }
  g->bytes += (double)bytes;
  return ODB_OK;
}

const char *odb_dgpu_halo_path(const odb_dsparse *A) {
  if (A && A->size == 1) return "halo: none (one rank)";
  if (A && A->gpu && A->gpu->link) return "halo: GPU peer copies, waits on the device";
  return odb_dsparse_cuda_aware() ? "halo: CUDA-aware MPI" : "halo: host buffers";
}

const odb_kxsum *odb_dgpu_xsum(const odb_dsparse *A) {
  return A->gpu && A->gpu->link ? odb_dlink_xsum(A->gpu->link) : NULL;
}

odb_status odb_dgpu_pk_csr(odb_dsparse *A, const int64_t **rp, const int32_t **ci, const double **va) {
  odb_dgpu *g = A->gpu;
  if (!g->pk_rp) {
    const odb_sparse *P[2] = {A->Ai, A->Ab};
    long nnz = 0, e = 0, r = 0;
    for (int p = 0; p < 2; p++)
      if (P[p]) nnz += (long)P[p]->rowptr[P[p]->n];
    int64_t *hr = (int64_t *)malloc((size_t)(A->nloc + 1) * sizeof *hr);
    int32_t *hc = (int32_t *)malloc((size_t)(nnz ? nnz : 1) * sizeof *hc);
    double *hv = (double *)malloc((size_t)(nnz ? nnz : 1) * sizeof *hv);
    odb_status st = ODB_OK;
    if (!hr || !hc || !hv) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "persistent BiCGStab: the local CSR of %ld nonzeros on rank %d", nnz, A->rank);
    } else {
      hr[0] = 0;
      for (int p = 0; p < 2; p++)
        for (long i = 0; P[p] && i < P[p]->n; i++) {
          for (int64_t q = P[p]->rowptr[i]; q < P[p]->rowptr[i + 1]; q++) {
            hc[e] = P[p]->col[q];
            hv[e++] = P[p]->val[q];
          }
          hr[++r] = e;
        }
      size_t br = (size_t)(A->nloc + 1) * sizeof *hr, bc = (size_t)(nnz ? nnz : 1) * sizeof *hc,
             bv = (size_t)(nnz ? nnz : 1) * sizeof *hv;
      if ((st = dupload(&g->pk_rp, hr, br, "persistent BiCGStab's row pointers")) == ODB_OK &&
          (st = dupload(&g->pk_ci, hc, bc, "persistent BiCGStab's columns")) == ODB_OK &&
          (st = dupload(&g->pk_va, hv, bv, "persistent BiCGStab's values")) == ODB_OK)
        g->bytes += (double)(br + bc + bv);
    }
    free(hr); free(hc); free(hv);
    if (st != ODB_OK) {
      dfree(g->pk_rp); dfree(g->pk_ci); dfree(g->pk_va);
      g->pk_rp = NULL; g->pk_ci = NULL; g->pk_va = NULL;
      return st;
    }
  }
  *rp = g->pk_rp; *ci = g->pk_ci; *va = g->pk_va;
  return ODB_OK;
}

int odb_dgpu_pk_halo(const odb_dsparse *A, pk_halo *h) {
  if (!A->gpu || !A->gpu->link) return 0;
  odb_dlink_pk_halo(A->gpu->link, A->gpu->didx, h);
  return 1;
}

void odb_dgpu_pk_done(const odb_dsparse *A, unsigned long long nx) {
  if (A->gpu && A->gpu->link) odb_dlink_set_count(A->gpu->link, nx);
}

odb_status odb_dgpu_link_check(const odb_dsparse *A, const char *who) {
  return A->gpu && A->gpu->link ? odb_dlink_check(A->gpu->link, who) : ODB_OK;
}

/* This rank's share of its device's bandwidth, read (1) or copy (0). */
static odb_status bw_share(int local_size, int read, double *bytes_per_s) {
  int count = 0, dev = -1, share = 0;
  *bytes_per_s = 0.0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0 || cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "GPU %s bandwidth: no CUDA device", read ? "read" : "copy");
  }
  ODB_TRY(read ? odb_cuda_read_bandwidth(bytes_per_s) : odb_cuda_copy_bandwidth(bytes_per_s));
  const char *e = getenv("ODEBENCH_DEVICE");
  if (e && *e) share = local_size;
  else
    for (int r = 0; r < local_size; r++) share += r % count == dev;
  if (share > 1) *bytes_per_s /= share;
  return ODB_OK;
}

odb_status odb_dgpu_copy_share(int local_size, double *bytes_per_s) {
  return bw_share(local_size, 0, bytes_per_s);
}

odb_status odb_dgpu_read_share(int local_size, double *bytes_per_s) {
  return bw_share(local_size, 1, bytes_per_s);
}

double odb_dgpu_bytes(const odb_dsparse *A) {
  return A->gpu ? A->gpu->bytes : 0.0;
}

void odb_dgpu_free(odb_dsparse *A) {
  odb_dgpu *g = A->gpu;
  if (!g) return;
  A->gpu = NULL;
  /* the legacy stream's work on the parts ends before they go */
  (void)cudaStreamSynchronize(cudaStreamLegacy);
  if (g->link) {   /* the link takes the send buffer, which the others map */
    if (g->has_stream) (void)cudaStreamSynchronize(g->halo);
    odb_dlink_free(g->link, g->dsend);
    g->link = NULL;
    g->dsend = NULL;
  }
  odb_sparse_gpu_free(g->Ai);
  odb_sparse_gpu_free(g->Ab);
  odb_sparse_gpu_free(g->S);
  cudaFree(g->didx); cudaFree(g->dx); cudaFree(g->dy);
  cudaFree(g->pk_rp); cudaFree(g->pk_ci); cudaFree(g->pk_va);
  if (g->has_stream) { (void)cudaStreamSynchronize(g->halo); cudaStreamDestroy(g->halo); }
  if (g->has_ready) cudaEventDestroy(g->ready);
  if (g->has_ghosts) cudaEventDestroy(g->ghosts);
  (void)cudaGetLastError();
  /* stuck: MPI may still read dsend and the pinned send buffer and write
     drecv and the pinned receive buffer (odb_dist_sparse.h) */
  if (A->stuck) return;
  cudaFree(g->dsend); cudaFree(g->drecv);
  if (g->pin_send) cudaHostUnregister(A->send_buf);
  if (g->pin_recv) cudaHostUnregister(A->recv_buf);
  (void)cudaGetLastError();
  free(g);
}

/* One part to the device (NULL stays NULL). */
static odb_status part_up(const odb_sparse *P, odb_sparse_gpu **out, odb_dgpu *g) {
  *out = NULL;
  if (!P) return ODB_OK;
  ODB_TRY(odb_sparse_gpu_upload(P, out));
  g->bytes += (double)(*out)->bytes;
  return ODB_OK;
}

odb_status odb_dgpu_attach(odb_dsparse *A) {
  odb_status st = ODB_OK;
  long ns = A->send_off[A->nsend], ng = A->nghost, ext = A->nloc + A->nghost;
  if (A->gpu) return ODB_OK;
  odb_dgpu *g = (odb_dgpu *)calloc(1, sizeof *g);
  if (!g) return ODB_FAIL(ODB_ERR_NOMEM, "GPU rank: descriptor");
  A->gpu = g;
  A->gpu_free = odb_dgpu_free;
  g->aware = odb_dsparse_cuda_aware();
  if ((st = part_up(A->Ai, &g->Ai, g)) != ODB_OK || (st = part_up(A->Ab, &g->Ab, g)) != ODB_OK) goto fail;
  if (A->slab) {   /* a rank without planes has no cells and no wells */
    odb_dslab_geometry(A, &g->sg);
    if (g->sg.ncell > 0 && (st = part_up(g->sg.B, &g->S, g)) != ODB_OK) goto fail;
  }
  /* Bdia's launch options tuned for its shape (kept per process, so once
     a shape); a failed tuning keeps the defaults */
  {
    odb_sparse_gpu *bd = g->S ? g->S : g->Ai && g->Ai->fmt == ODB_FMT_BDIA ? g->Ai : NULL;
    if (bd && !odb_sparse_gpu_is_tuned(bd) && odb_sparse_gpu_tune(bd, 5, NULL) != ODB_OK) odb_clear_error();
  }
  if ((st = dev_alloc((void **)&g->didx, (size_t)ns * sizeof *g->didx, g, "send indices")) != ODB_OK ||
      (st = dev_alloc((void **)&g->dsend, (size_t)ns * sizeof(double), g, "send buffer")) != ODB_OK ||
      (st = dev_alloc((void **)&g->drecv, (size_t)ng * sizeof(double), g, "receive buffer")) != ODB_OK ||
      (st = dev_alloc((void **)&g->dx, (size_t)(ext > 0 ? ext : 1) * sizeof(double), g, "x")) != ODB_OK ||
      (st = dev_alloc((void **)&g->dy, (size_t)(A->nloc > 0 ? A->nloc : 1) * sizeof(double), g, "y")) != ODB_OK)
    goto fail;
  if (ns) {
    cudaError_t e = cudaMemcpy(g->didx, A->send_idx, (size_t)ns * sizeof *g->didx, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) { st = odb_cuda_fail(e, "cudaMemcpy (send indices)", __FILE__, __LINE__); goto fail; }
  }
  {
    cudaError_t e = cudaMemset(g->dx, 0, (size_t)(ext > 0 ? ext : 1) * sizeof(double));
    if (e != cudaSuccess) { st = odb_cuda_fail(e, "cudaMemset (x)", __FILE__, __LINE__); goto fail; }
    e = cudaStreamCreateWithFlags(&g->halo, cudaStreamNonBlocking);
    if (e == cudaSuccess) { g->has_stream = 1; e = cudaEventCreateWithFlags(&g->ready, cudaEventDisableTiming); }
    if (e == cudaSuccess) { g->has_ready = 1; e = cudaEventCreateWithFlags(&g->ghosts, cudaEventDisableTiming); }
    if (e == cudaSuccess) g->has_ghosts = 1;
    if (e != cudaSuccess) { st = odb_cuda_fail(e, "cudaStreamCreate/cudaEventCreate (GPU rank)", __FILE__, __LINE__); goto fail; }
  }
  /* the host path copies through pinned memory: the copies are then DMA
     without a staging buffer, and asynchronous on the halo stream */
  if (!g->aware && ns) {
    if (cudaHostRegister(A->send_buf, (size_t)ns * sizeof(double), cudaHostRegisterDefault) == cudaSuccess) g->pin_send = 1;
    else (void)cudaGetLastError();     /* pageable still works, slower */
  }
  if (!g->aware && ng) {
    if (cudaHostRegister(A->recv_buf, (size_t)ng * sizeof(double), cudaHostRegisterDefault) == cudaSuccess) g->pin_recv = 1;
    else (void)cudaGetLastError();
  }
  /* a collective: every rank attaches the same matrix */
  if ((st = odb_dlink_setup(A, g->dsend, &g->link)) != ODB_OK) goto fail;
  return ODB_OK;
fail:
  odb_dgpu_free(A);
  return st;
}

/* A CUDA error inside an SpMV: the rank cannot go on pairing its
   messages, so the matrix is refused from here on. */
static odb_status cuda_broke(odb_dsparse *A, cudaError_t e, const char *call, int line) {
  odb_status st = odb_cuda_fail(e, call, __FILE__, line);
  return odb_dsparse_fail(A, st, 1);
}
#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cuda_broke(A, e_, #call, __LINE__); } while (0)

/* Which rows rows() launches. */
enum { ROWS_INNER, ROWS_GHOSTS, ROWS_WELLS };

/* The rows that read no ghost (ROWS_INNER), those that do (ROWS_GHOSTS),
   or a slab's wells (ROWS_WELLS; parts have none apart), on stream st.
   The wells come after every cell: their kernel adds W^T x_w into y of
   their cells, which the cells' kernels write, at either end. */
static odb_status rows(odb_dsparse *A, const double *dx, double *dy, int which, cudaStream_t st) {
  odb_dgpu *g = A->gpu;
  odb_status e = ODB_OK;
  if (g->S) {
    const odb_dslab_geo *s = &g->sg;
    const double *xg = dx + A->nloc + s->nlo;
    /* the inner cells from an even cell to an even cell, so that the pair
       form (two cells a thread, value pairs 16-byte aligned) takes them:
       a cell or two more at the ends wait for the ghosts */
    long lo = s->blo + (s->blo & 1), top = s->ncell - s->bhi, nhi = A->nghost - s->nlo;
    top -= top & 1;
    if (top < lo) top = lo;
    if (lo > s->ncell) lo = top = s->ncell;
    if (which == ROWS_INNER)
      e = odb_sparse_gpu_bdia_slab(g->S, s->first, dx, xg, s->nlo, nhi, dy, lo, top, 0, st);
    else if (which == ROWS_WELLS)
      e = odb_sparse_gpu_bdia_slab(g->S, s->first, dx, xg, s->nlo, nhi, dy, 0, 0, 1, st);
    else if ((e = odb_sparse_gpu_bdia_slab(g->S, s->first, dx, xg, s->nlo, nhi, dy, 0, lo, 0, st)) == ODB_OK)
      e = odb_sparse_gpu_bdia_slab(g->S, s->first, dx, xg, s->nlo, nhi, dy, top, s->ncell, 0, st);
  } else if (which == ROWS_INNER) {
    if (g->Ai) e = odb_sparse_gpu_spmv_on(g->Ai, dx, dy, st);
  } else if (which == ROWS_GHOSTS) {
    if (g->Ab) e = odb_sparse_gpu_spmv_on(g->Ab, dx, dy + A->nint, st);
  }
  return e == ODB_OK ? e : odb_dsparse_fail(A, e, 1);
}

/* After the ghosts are queued into x on the halo stream: the rows that
   read them there, beside the inner rows on the legacy stream (launched
   here when inner is 1, already running otherwise; their y entries are
   apart), then the legacy stream waits for them and adds a slab's wells. */
static odb_status rows_after_ghosts(odb_dsparse *A, const double *dx, double *dy, int inner) {
  odb_dgpu *g = A->gpu;
  ODB_TRY(rows(A, dx, dy, ROWS_GHOSTS, g->halo));
  CK(cudaEventRecord(g->ghosts, g->halo));
  if (inner) ODB_TRY(rows(A, dx, dy, ROWS_INNER, cudaStreamLegacy));
  CK(cudaStreamWaitEvent(cudaStreamLegacy, g->ghosts, 0));
  return rows(A, dx, dy, ROWS_WELLS, cudaStreamLegacy);
}

odb_status odb_dgpu_spmv(odb_dsparse *A, double *dx, double *dy) {
  odb_dgpu *g = A->gpu;
  odb_status st;
  if (A->broken) return odb_dsparse_check(A, "distributed SpMV");
  long ns = A->send_off[A->nsend], ng = A->nghost;
  if (A->nsend + A->nrecv == 0) {     /* one rank, or a rank with no neighbour */
    ODB_TRY(rows(A, dx, dy, ROWS_INNER, cudaStreamLegacy));
    ODB_TRY(rows(A, dx, dy, ROWS_GHOSTS, cudaStreamLegacy));
    return rows(A, dx, dy, ROWS_WELLS, cudaStreamLegacy);
  }
  if (g->link) {
    /* the link: pack and signal on the legacy stream, then the fetch
       and the rows that read the ghosts on the halo stream, the inner
       rows on the legacy stream: no host wait */
    if ((st = odb_dlink_pack(g->link, g->didx, dx)) != ODB_OK) return odb_dsparse_fail(A, st, 1);
    CK(cudaEventRecord(g->ready, cudaStreamLegacy));
    CK(cudaStreamWaitEvent(g->halo, g->ready, 0));
    if ((st = odb_dlink_fetch(g->link, dx, g->halo)) != ODB_OK) return odb_dsparse_fail(A, st, 1);
    return rows_after_ghosts(A, dx, dy, 1);
  }
  /* the legacy stream's work on x and y before now is done before the
     halo stream packs x or writes y */
  CK(cudaEventRecord(g->ready, cudaStreamLegacy));
  CK(cudaStreamWaitEvent(g->halo, g->ready, 0));
  if (ns) {
    k_pack<<<blocks_for(ns), 256, 0, g->halo>>>(ns, g->didx, dx, g->dsend);
    CK(cudaGetLastError());
    if (!g->aware)
      CK(cudaMemcpyAsync(A->send_buf, g->dsend, (size_t)ns * sizeof(double), cudaMemcpyDeviceToHost, g->halo));
  }
  /* the inner rows read only owned values: they run beside the pack and
     the exchange */
  ODB_TRY(rows(A, dx, dy, ROWS_INNER, cudaStreamLegacy));
  CK(cudaStreamSynchronize(g->halo));
  if ((st = odb_dsparse_halo_post(A, g->aware ? g->drecv : A->recv_buf,
                                  g->aware ? g->dsend : A->send_buf)) != ODB_OK) return st;
  if ((st = odb_dsparse_halo_wait(A)) != ODB_OK) return st;
  if (ng)
    CK(cudaMemcpyAsync(dx + A->nloc, g->aware ? g->drecv : A->recv_buf, (size_t)ng * sizeof(double),
                       g->aware ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, g->halo));
  return rows_after_ghosts(A, dx, dy, 0);   /* the inner rows may still run */
}

/* After a wait for the legacy stream: the halo stream's fetch has ended
   too (the boundary rows waited for it), so a wait of the link that gave
   up shows in its fail word; the matrix is then refused from here on. */
static odb_status link_settled(odb_dsparse *A, const char *who) {
  odb_status st = odb_dgpu_link_check(A, who);
  return st == ODB_OK ? st : odb_dsparse_fail(A, st, 1);
}

odb_status odb_dgpu_spmv_host(odb_dsparse *A, const double *x, double *y) {
  odb_dgpu *g = A->gpu;
  if (A->broken) return odb_dsparse_check(A, "distributed SpMV");
  if (A->nloc) CK(cudaMemcpy(g->dx, x, (size_t)A->nloc * sizeof *x, cudaMemcpyHostToDevice));
  ODB_TRY(odb_dgpu_spmv(A, g->dx, g->dy));
  if (A->nloc) CK(cudaMemcpy(y, g->dy, (size_t)A->nloc * sizeof *y, cudaMemcpyDeviceToHost));
  else CK(cudaStreamSynchronize(cudaStreamLegacy));
  return link_settled(A, "distributed SpMV");
}

odb_status odb_dgpu_bench_put(odb_dsparse *A, const double *x) {
  if (A->broken) return odb_dsparse_check(A, "distributed SpMV");
  if (A->nloc) CK(cudaMemcpy(A->gpu->dx, x, (size_t)A->nloc * sizeof *x, cudaMemcpyHostToDevice));
  return ODB_OK;
}

odb_status odb_dgpu_bench_run(odb_dsparse *A) {
  ODB_TRY(odb_dgpu_spmv(A, A->gpu->dx, A->gpu->dy));
  CK(cudaStreamSynchronize(cudaStreamLegacy));
  return link_settled(A, "distributed SpMV");
}
