/* dist_gpu.c - GPU ranks: mpi_gpu_stream2d, BRUSS2D-like grid problems split
   into slabs of rows over the ranks, one GPU a rank, each slab stepped by
   gpu_stream2d with halo rows deep enough for a whole step. Built with MPI
   and CUDA. */
#include "odb_dist_ode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "dist_gpu_link.h"
#include "dist_halo.h"
#include "odb_ctx.h"
#include "odb_dist.h"
#include "odb_dist_ipc.h"
#include "odb_gpu_rk.h"
#include "odb_gpu_rk_opts.h"

/*
** The layout follows M. Korch and T. Werner, "An in-depth introduction of
** multi-workgroup tiling for improving the locality of explicit one-step
** methods for ODE systems with limited access distance on GPUs": where
** the tiles of one GPU recompute the stages of their halo instead of
** waiting for a neighbour, the ranks do the same one level up. Rank r owns
** the grid rows [r0, r1) (dist_blocks over the rows) and keeps the slab
** [e0, e1) = [r0 - K S, r1 + K S] (cut at the grid's edges), S the
** method's stages. A step of gpu_stream2d on the slab, mirrored at the slab's ends
** as at the grid's, gets f wrong only at the slab's end rows; each stage
** carries the error one row further in, so after S stages the rows of
** ynew and of the error estimate more than S rows from a cut end, the
** own rows, are those of the whole grid, bit for bit (the same source,
** constants and operation order per cell). The next step starts from
** rows wrong S deep at the cut ends and carries that S rows further, so
** halos K S deep serve K accepted steps: then the K S rows next to each
** cut end come again from the neighbour, its own rows nearest to us
** (every rank needs at least S rows when there are several; K is the
** most the shortest rank's rows allow, at most the option halo_steps). A
** rejected attempt leaves y, and its halos, as they were; a state set
** from outside (set_state, reset, gather) is whole on every rank, halos
** included.
**
** Storage: the solver's vectors are full length on this rank's GPU (the
** core allocates them and set_state copies the whole state in); a rank
** keeps current only its own rows and, after the exchange, its halo rows.
** The slab is the window y + e0 * row of those vectors, and its step runs
** through an inner gpu_stream2d solver on a copy of the problem cut to the
** slab (grid_rows = e1 - e0, grid_own0/1 the own rows), whose y and ynew
** are pointed at the windows for each attempt. F_0 is never kept between
** steps (every attempt evaluates stage 0), so FSAL plays no part.
**
** How the halos travel, the first that every rank can use (init reports
** it on the context's log, odb_dist_gpu_halo_path to the binding):
**  - peer copies (CUDA IPC), when all ranks run on one host: each rank
**    maps its neighbours' y and ynew (cudaIpcGetMemHandle at init, the
**    handles swapped over MPI) and copies the rows it needs straight from
**    the neighbour's current y into its own halo rows, device to device
**    (NVLink between GPUs; within a GPU, a copy). Safe because every rank
**    takes the same steps, so the buffers swap in step on every rank;
**    because an exchange starts with the rank's stream drained and a
**    barrier, so the neighbour's y is complete (also after a state set
**    from outside); and because the neighbour writes the buffer read only
**    in its next step, which waits for this rank's copies: behind the
**    attempt's norm allgather, or a second barrier where there is none;
**  - device buffers to MPI, when the MPI library says it is CUDA-aware
**    (Open MPI's MPIX_Query_cuda_support);
**  - pinned host buffers: the own rows copied out, sent, received and
**    copied in.
** ODEBENCH_GPU_HALO=mpi leaves the peer copies out (to compare, and to
** test the MPI paths on one host).
**
** The error norm: the inner step's sum of squares over its own rows (the
** generated kernel leaves the halo rows out), added exactly over the ranks
** (dist_norm), then sqrt(sum / n): the same decision on every rank.
**
** The link (dist_gpu_link.h), when every rank has a GPU of its own on one
** host and the peer copies work: the ranks' GPUs wait for each other
** through words in each other's memory instead of the hosts through
** barriers. The halo exchange is then a kernel queued in the stream, and
** the step controller runs on the device across the ranks (advance): the
** inner solver's kernels add the ranks' sums of squares on the device,
** exactly and in the same order on every rank (odb_gen_xnorm), and an
** exchange kernel runs before every K-th attempt of a batch, from its
** first, so a batch of attempts runs with no host round trip. Several
** ranks on one GPU would wait for each other across contexts that the GPU
** time-slices, so there the hosts keep the controller (advance_off) as
** without the link.
** ODEBENCH_GPU_LINK=off leaves it out.
*/

/* A copy of the whole problem cut to this rank's slab. */
typedef struct slab_problem {
  odb_problem p;               /* first: the inner solver's problem */
} slab_problem;

typedef struct dgpu {
  slab_problem *slab;
  odb_solver *inner;
  long row;                    /* doubles a grid row (cols x comps) */
  long r0, r1, e0, e1;         /* own rows, slab rows */
  int up, down;                /* neighbour ranks, -1: none */
  long halo_up, halo_down;     /* rows received from each (0: none) */
  int K;                       /* accepted steps an exchange serves */
  int left;                    /* of those, still to take (0: exchange) */
  const double *last_y, *last_ynew;   /* s->y, s->ynew of the last attempt */
  int aware;                   /* 1: halos as device buffers to MPI */
  int ipc;                     /* 1: halos by peer copies */
  double *own[2];              /* this rank's y and ynew at init */
  double *peer[2][2];          /* [up/down][its y, its ynew at init], mapped */
  unsigned *fin;               /* peer copies: [0] from up, [1] from down:
                                  the neighbour has closed its mappings of
                                  own[] and of fin (device memory) */
  unsigned *peer_fin[2];       /* the neighbours' fin, mapped */
  double *snd[2], *rcv[2];     /* pinned host staging: [0] up, [1] down */
  double *whole;               /* host copy of the state for gather */
  int link;                    /* 1: the device-side link (see above) */
  dgl_box *box;                /* this rank's mailbox (link) */
  dgl_box *boxes[ODB_GEN_XNORM_MAX];   /* every rank's, mapped ([r]: box) */
  long *counts, *displs;       /* the ranks' own parts, in doubles */
  dist_norm norm;
} dgpu;

static const char *halo_path = "";

const char *odb_dist_gpu_halo_path(void) { return halo_path; }

/* 1 when this MPI library can take device buffers (CUDA-aware). */
static int mpi_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

/* The slab's initial value is never used: the state comes from the
   whole problem through the solver's vectors. */
static void slab_initial(const odb_problem *p, double *y0) {
  memset(y0, 0, (size_t)p->n * sizeof *y0);
}

/*
** gpu_stream2d's options, which the inner solver takes, and halo_steps,
** the most accepted steps one exchange of halos serves (see above);
** odb_dist_gpu_register fills the table.
*/
enum { GPU_NOPTS = ODB_GPU_STREAM2D_NOPTS + 1 };
static odb_param_decl gpu_opts[GPU_NOPTS];
static const odb_param_decl halo_steps_decl = {
  "halo_steps", ODB_PARAM_INT, 4, 1, 16, NULL,
  "accepted steps one halo exchange serves: halos halo_steps x S rows deep "
  "(S stages), at most as deep as the shortest rank's rows allow"
};

/*
** The options without halo_steps (for the inner solver) into *inner, a
** block to free, and halo_steps into *steps (its default where not given;
** the core checked the values against gpu_opts).
*/
static odb_status split_opts(const odb_solver_opts *o,
                             odb_param_value **inner, int *ninner,
                             int *steps) {
  *steps = (int)halo_steps_decl.def;
  *ninner = 0;
  *inner = malloc(sizeof **inner * (size_t)(o->nvopts > 0 ? o->nvopts : 1));
  if (!*inner) return ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d options");
  for (int i = 0; i < o->nvopts; ++i) {
    if (strcmp(o->vopts[i].name, halo_steps_decl.name) == 0)
      *steps = (int)o->vopts[i].num;
    else
      (*inner)[(*ninner)++] = o->vopts[i];
  }
  return ODB_OK;
}

static int gpu_applies(const odb_problem *p, const odb_method *m, char *why,
                       size_t nwhy) {
  int R = odb_dist_size();
  if (m->kind != ODB_METHOD_ERK) {
    snprintf(why, nwhy, "mpi_gpu_stream2d runs explicit RK methods only");
    return 0;
  }
  if (!p->gpu_cell_source || p->grid_rows < 2) {
    snprintf(why, nwhy, "mpi_gpu_stream2d needs a 2-D grid problem with a "
             "cell source (BRUSS2D, or ob.problem{grid=, cell_source=}); %s "
             "has none", p->label);
    return 0;
  }
  if (R > 1 && p->grid_rows / R < m->s) {
    snprintf(why, nwhy, "mpi_gpu_stream2d: %ld grid rows over %d ranks leave "
             "a rank %ld rows, fewer than the %d halo rows a step of %s takes "
             "from each neighbour; use at most %ld rank(s)", p->grid_rows, R,
             p->grid_rows / R, m->s, m->name, p->grid_rows / m->s);
    return 0;
  }
  if (p->n > 2147483647L) {
    snprintf(why, nwhy, "mpi_gpu_stream2d: n = %ld is more than MPI's int "
             "counts allow", p->n);
    return 0;
  }
  return 1;
}

/* A neighbour that did not answer: what the link's waits wait at most. */
#define LINK_TIMEOUT_S 60

/*
** Closing what the ranks map of each other (dist/rt/odb_dist_ipc.h): this
** rank's mappings of the others' mailboxes, y, ynew and fin, each closing
** said in the owner's word; its own mailbox, and y, ynew and fin where the
** neighbours mapped them, freed once they have said so (y and ynew taken
** from the solver, whose core would free them at once). A set-up that
** failed closes its mappings on every rank before any frees (ipc_setup,
** link_setup). link_close: the mailboxes.
*/
static void link_close(dgpu *g) {
  static const unsigned one = 1;
  const int me = odb_dist_rank();
  for (int q = 0; q < ODB_GEN_XNORM_MAX; ++q) {
    if (g->boxes[q] && g->boxes[q] != g->box)
      odb_dist_ipc_close(g->boxes[q], sizeof(dgl_box),
                         &g->boxes[q]->closed[me]);
    g->boxes[q] = NULL;
  }
  if (g->box) {
    void *mine[1] = { g->box };
    if (cudaMemcpy(&g->box->closed[me], &one, sizeof one,
                   cudaMemcpyHostToDevice) != cudaSuccess)
      (void)cudaGetLastError();
    odb_dist_ipc_release(mine, 1, g->box->closed, odb_dist_size());
  }
  g->box = NULL;
}

/* The peer copies' mappings closed and said so; then this rank's (fin
   is set only where they were set up: ipc_setup). */
static void ipc_close(odb_solver *s, dgpu *g) {
  static const unsigned one = 1;
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 2; ++k) odb_dist_ipc_close(g->peer[i][k], 0, NULL);
    /* this rank is the neighbour below the one above, and above the one
       below */
    if (g->peer_fin[i])
      odb_dist_ipc_close(g->peer_fin[i], 2 * sizeof(unsigned),
                         &g->peer_fin[i][1 - i]);
    g->peer[i][0] = g->peer[i][1] = NULL;
    g->peer_fin[i] = NULL;
  }
  if (!g->fin) return;
  {
    void *mine[3] = { g->own[0], g->own[1], g->fin };
    for (int i = 0; i < 2; ++i)   /* no neighbour there: no one to wait for */
      if ((i == 0 ? g->up : g->down) < 0 &&
          cudaMemcpy(&g->fin[i], &one, sizeof one, cudaMemcpyHostToDevice) !=
              cudaSuccess)
        (void)cudaGetLastError();
    if (s->y == g->own[0] || s->y == g->own[1]) s->y = NULL;
    if (s->ynew == g->own[0] || s->ynew == g->own[1]) s->ynew = NULL;
    odb_dist_ipc_release(mine, 3, g->fin, 2);
  }
  g->fin = NULL;
}

static void gpu_fini(odb_solver *s) {
  dgpu *g = s->vdata;
  if (!g) return;
  link_close(g);
  ipc_close(s, g);
  if (g->inner) odb_solver_destroy(g->inner);
  free(g->slab);
  for (int i = 0; i < 2; ++i) {
    if (g->snd[i]) cudaFreeHost(g->snd[i]);
    if (g->rcv[i]) cudaFreeHost(g->rcv[i]);
  }
  free(g->whole);
  free(g->counts);
  free(g->displs);
  dist_norm_free(&g->norm);
  free(g);
  s->vdata = NULL;
}

static odb_status pinned(double **p, long doubles) {
  if (doubles <= 0) return ODB_OK;
  if (cudaMallocHost((void **)p, (size_t)doubles * sizeof(double)) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    *p = NULL;
    return ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d: %ld doubles of pinned "
                    "host memory for the halos", doubles);
  }
  return ODB_OK;
}

/* The slab problem: the whole one with rows [e0, e1) and own rows. */
static odb_status make_slab(const odb_problem *p, dgpu *g) {
  slab_problem *sp = calloc(1, sizeof *sp);
  if (!sp) return ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d: slab problem");
  g->slab = sp;
  sp->p = *p;
  sp->p.grid_rows = g->e1 - g->e0;
  sp->p.n = (g->e1 - g->e0) * g->row;
  sp->p.grid_own0 = g->r0 - g->e0;
  sp->p.grid_own1 = g->r1 - g->e0;
  sp->p.initial = slab_initial;
  sp->p.take_failure = NULL;
  sp->p.data = NULL;   /* the whole problem's; never freed through here */
  snprintf(sp->p.label, sizeof sp->p.label, "%.60s rows %ld-%ld", p->label,
           g->e0, g->e1);
  return ODB_OK;
}

/*
** The peer copies' set-up: this rank's y and ynew handles to both
** neighbours, theirs opened here. A collective (every rank calls it at
** the same point); *ok is 1 on every rank only when every rank mapped
** its neighbours' buffers, else 0 on all, and what was opened is closed.
*/
static odb_status ipc_setup(odb_solver *s, dgpu *g, int *ok) {
  MPI_Comm comm = odb_dist_comm();
  MPI_Request req[4];
  /* [0] y, [1] ynew, [2] fin */
  cudaIpcMemHandle_t mine[3], theirs[2][3];
  int peer[2] = { g->up, g->down }, n = 0, good = 1;
  double flag;
  const char *e = getenv("ODEBENCH_GPU_HALO");
  *ok = 0;
  if (e && strcmp(e, "mpi") == 0) return ODB_OK;   /* the same on all ranks */
  if (odb_dist_local_size() != odb_dist_size()) return ODB_OK;
  g->own[0] = s->y;
  g->own[1] = s->ynew;
  memset(mine, 0, sizeof mine);
  if (cudaMalloc((void **)&g->fin, 2 * sizeof *g->fin) != cudaSuccess ||
      cudaMemset(g->fin, 0, 2 * sizeof *g->fin) != cudaSuccess) {
    (void)cudaGetLastError();
    good = 0;
  }
  for (int k = 0; k < 3 && good; ++k)
    if (cudaIpcGetMemHandle(&mine[k], k < 2 ? (void *)g->own[k]
                                            : (void *)g->fin) != cudaSuccess) {
      (void)cudaGetLastError();
      good = 0;
    }
  for (int i = 0; i < 2; ++i) {
    if (peer[i] < 0) continue;
    if (MPI_Irecv(theirs[i], (int)sizeof theirs[i], MPI_BYTE, peer[i],
                  7310 + (1 - i), comm, &req[n++]) != MPI_SUCCESS ||
        MPI_Isend(mine, (int)sizeof mine, MPI_BYTE, peer[i], 7310 + i, comm,
                  &req[n++]) != MPI_SUCCESS)
      return ODB_FAIL(ODB_ERR_IO, "mpi_gpu_stream2d: MPI_Isend/Irecv of the "
                      "CUDA IPC handles with rank %d failed", peer[i]);
  }
  ODB_TRY(odb_dist_waitall(n, req, "MPI_Waitall (mpi_gpu_stream2d IPC "
                           "handles)"));
  for (int i = 0; i < 2 && good; ++i)
    for (int k = 0; k < 3 && good && peer[i] >= 0; ++k) {
      void *m = NULL;
      if (cudaIpcOpenMemHandle(&m, theirs[i][k],
                               cudaIpcMemLazyEnablePeerAccess) !=
          cudaSuccess) {
        (void)cudaGetLastError();
        good = 0;
      } else if (k < 2) {
        g->peer[i][k] = m;
      } else {
        g->peer_fin[i] = m;
      }
    }
  flag = good ? 0.0 : 1.0;   /* any rank without them: none uses them */
  ODB_TRY(odb_dist_allreduce_max(&flag, 1, "MPI_Allreduce (mpi_gpu_stream2d "
                                 "peer copies)"));
  if (flag == 0.0) {
    *ok = 1;
    return ODB_OK;
  }
  /* what was opened closed on every rank before any frees its own: then
     y and ynew go with the solver, fin at once */
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 2; ++k) odb_dist_ipc_close(g->peer[i][k], 0, NULL);
    odb_dist_ipc_close(g->peer_fin[i], 0, NULL);
    g->peer[i][0] = g->peer[i][1] = NULL;
    g->peer_fin[i] = NULL;
  }
  ODB_TRY(odb_dist_barrier("MPI_Barrier (mpi_gpu_stream2d peer copies "
                           "closed)"));
  if (g->fin && cudaFree(g->fin) != cudaSuccess) (void)cudaGetLastError();
  g->fin = NULL;
  return ODB_OK;
}

/*
** The link's set-up, after the peer copies' (a collective): every rank's
** GPU its own (the devices' UUIDs differ), at most ODB_GEN_XNORM_MAX
** ranks, each rank's mailbox mapped by every other. *ok as ipc_setup's.
*/
static odb_status link_setup(odb_solver *s, dgpu *g, int *ok) {
  MPI_Comm comm = odb_dist_comm();
  int R = odb_dist_size(), r = odb_dist_rank(), dev = 0, good = 1;
  struct cudaDeviceProp prop;
  cudaIpcMemHandle_t mine, *all = NULL;
  cudaUUID_t *ids = NULL;
  odb_gen_xnorm xn;
  double flag;
  const char *e = getenv("ODEBENCH_GPU_LINK");
  odb_status st = ODB_OK;
  *ok = 0;
  (void)s;
  if ((e && strcmp(e, "off") == 0) || R > ODB_GEN_XNORM_MAX) return ODB_OK;
  ids = calloc((size_t)R, sizeof *ids);
  all = calloc((size_t)R, sizeof *all);
  if (!ids || !all) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d: %d ranks' handles", R);
    goto done;
  }
  memset(&mine, 0, sizeof mine);
  memset(&prop, 0, sizeof prop);
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
      cudaMalloc((void **)&g->box, sizeof *g->box) != cudaSuccess ||
      cudaMemset(g->box, 0, sizeof *g->box) != cudaSuccess ||
      cudaIpcGetMemHandle(&mine, g->box) != cudaSuccess) {
    (void)cudaGetLastError();
    good = 0;
  }
  if (MPI_Allgather(&prop.uuid, (int)sizeof prop.uuid, MPI_BYTE, ids,
                    (int)sizeof prop.uuid, MPI_BYTE, comm) != MPI_SUCCESS ||
      MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                    MPI_BYTE, comm) != MPI_SUCCESS) {
    st = ODB_FAIL(ODB_ERR_IO, "mpi_gpu_stream2d: MPI_Allgather of the GPUs' "
                  "UUIDs and the link's handles failed");
    goto done;
  }
  for (int q = 0; q < R && good; ++q)
    if (q != r && memcmp(&ids[q], &ids[r], sizeof ids[r]) == 0) good = 0;
  for (int q = 0; q < R && good; ++q) {
    if (q == r) {
      g->boxes[q] = g->box;
    } else if (cudaIpcOpenMemHandle((void **)&g->boxes[q], all[q],
                                    cudaIpcMemLazyEnablePeerAccess) !=
               cudaSuccess) {
      (void)cudaGetLastError();
      g->boxes[q] = NULL;
      good = 0;
    }
  }
  if (good) {
    memset(&xn, 0, sizeof xn);
    for (int q = 0; q < R; ++q) xn.box[q] = g->boxes[q]->norm;
    xn.mine = g->box->norm;
    xn.seq = &g->box->xseq;
    xn.fail = &g->box->fail;
    xn.timeout_ns = (long long)LINK_TIMEOUT_S * 1000000000LL;
    xn.rank = r;
    xn.size = R;
    if (cudaMemcpy(&g->box->xn, &xn, sizeof xn, cudaMemcpyHostToDevice) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      good = 0;
    }
  }
  flag = good ? 0.0 : 1.0;
  st = odb_dist_allreduce_max(&flag, 1, "MPI_Allreduce (mpi_gpu_stream2d "
                              "link)");
  if (st == ODB_OK && flag == 0.0) *ok = 1;
done:
  if (!*ok) {
    /* the mailboxes opened are closed on every rank before any frees its
       own (after a failed collective, MPI is gone: at once) */
    for (int q = 0; q < ODB_GEN_XNORM_MAX; ++q) {
      if (g->boxes[q] != g->box) odb_dist_ipc_close(g->boxes[q], 0, NULL);
      g->boxes[q] = NULL;
    }
    if (st == ODB_OK)
      st = odb_dist_barrier("MPI_Barrier (mpi_gpu_stream2d link closed)");
    if (g->box && cudaFree(g->box) != cudaSuccess) (void)cudaGetLastError();
    g->box = NULL;
  }
  free(ids);
  free(all);
  return st;
}

static odb_status link_before(void *ctx, int launch, const odb_gen_ctl *ctl);

static odb_status gpu_init(odb_solver *s) {
  const odb_problem *p = s->problem;
  int R = odb_dist_size(), r = odb_dist_rank();
  long S = s->method->s, N = p->grid_rows, *lo = NULL;
  odb_solver_opts o = s->opts;
  odb_param_value *vin = NULL;
  int nvin = 0, steps = 0;
  dgpu *g = calloc(1, sizeof *g);
  odb_status st;
  if (!g) return ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d state");
  s->vdata = g;
  odb_dist_ipc_reap();   /* an earlier solver's, when its peers have closed */
  ODB_TRY(split_opts(&s->opts, &vin, &nvin, &steps));
  g->row = p->grid_cols * p->grid_comps;
  lo = malloc(sizeof *lo * (size_t)(R + 1));
  g->counts = malloc(sizeof *g->counts * (size_t)R);
  g->displs = malloc(sizeof *g->displs * (size_t)R);
  if (!lo || !g->counts || !g->displs) {
    free(lo);
    free(vin);
    return ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d: %d ranks' rows", R);
  }
  dist_blocks(N, R, lo);
  for (int k = 0; k < R; ++k) {
    g->counts[k] = (lo[k + 1] - lo[k]) * g->row;
    g->displs[k] = lo[k] * g->row;
  }
  g->r0 = lo[r];
  g->r1 = lo[r + 1];
  free(lo);
  /* halos for K steps, K <= halo_steps, as deep as the shortest rank's
     own rows allow (the neighbours send from their own rows) */
  g->K = R > 1 ? (int)(N / R / S) : 1;
  if (g->K > steps) g->K = steps;
  if (g->K < 1) g->K = 1;
  g->e0 = g->r0 - g->K * S > 0 ? g->r0 - g->K * S : 0;
  g->e1 = g->r1 + g->K * S < N ? g->r1 + g->K * S : N;
  g->up = g->e0 < g->r0 ? r - 1 : -1;
  g->down = g->e1 > g->r1 ? r + 1 : -1;
  g->halo_up = g->r0 - g->e0;
  g->halo_down = g->e1 - g->r1;
  st = make_slab(p, g);
  if (st == ODB_OK && R > 1) st = ipc_setup(s, g, &g->ipc);
  if (st == ODB_OK && R > 1 && g->ipc) st = link_setup(s, g, &g->link);
  g->aware = R > 1 && !g->ipc && mpi_cuda_aware();
  /* the inner solver runs its attempts only; sync and the controller
     are the outer solver's */
  o.sync = ODB_SYNC_STEP;
  o.vopts = vin;
  o.nvopts = nvin;
  if (st == ODB_OK)
    st = odb_solver_create(s->ctx, &g->slab->p, s->method, s->backend,
                           "gpu_stream2d", &o, &g->inner);
  free(vin);
  if (st != ODB_OK) return st;
  s->block = g->inner->block;
  if (g->link) {
    odb_gpu_rk_link l = { &g->box->xn, p->n, link_before, s };
    ODB_TRY(odb_gpu_rk_set_link(g->inner, &l));
  } else if (R > 1) {
    s->advance_off = 1;   /* the hosts sum the norm (see above) */
  }
  if (R > 1 && !g->aware && !g->ipc)
    for (int i = 0; i < 2; ++i) {
      long h = i == 0 ? g->halo_up : g->halo_down;
      ODB_TRY(pinned(&g->snd[i], h * g->row));
      ODB_TRY(pinned(&g->rcv[i], h * g->row));
    }
  ODB_TRY(dist_norm_init(&g->norm, R, "mpi_gpu_stream2d error norm"));
  halo_path = R == 1 ? "none (one rank)"
              : g->link ? "peer copies (CUDA IPC, device to device), the "
                          "GPUs waiting for each other on the device"
              : g->ipc ? "peer copies (CUDA IPC, device to device)"
              : g->aware ? "CUDA-aware MPI (device buffers)"
              : "host buffers (the MPI library is not CUDA-aware)";
  if (r == 0)
    odb_ctx_log(s->ctx, ODB_LOG_INFO, "mpi_gpu_stream2d: %d rank(s), halos "
                "of %ld rows a step: %s", R, S, halo_path);
  return ODB_OK;
}

/* A CUDA call's error as the run's error (dist/ has no odb_cuda_check). */
static odb_status cuda_ok(cudaError_t e, const char *call) {
  if (e == cudaSuccess) return ODB_OK;
  return ODB_FAIL(ODB_ERR_BACKEND, "mpi_gpu_stream2d: %s: %s", call,
                  cudaGetErrorString(e));
}

/*
** The halo rows of y from the neighbours: this rank's own rows next to
** each neighbour go to it, its rows next to ours come in. Blocking: the
** step needs them all.
*/
static odb_status exchange(dgpu *g, double *y, int norm) {
  MPI_Comm comm = odb_dist_comm();
  MPI_Request req[4];
  int n = 0;
  long row = g->row;
  /* [0]: up (rows r0 .. r0 + halo_up go up, e0 .. r0 come in);
     [1]: down (rows r1 - halo_down .. r1 go down, r1 .. e1 come in) */
  double *sdev[2] = { y + g->r0 * row, y + (g->r1 - g->halo_down) * row };
  double *rdev[2] = { y + g->e0 * row, y + g->r1 * row };
  long cnt[2] = { g->halo_up * row, g->halo_down * row };
  int peer[2] = { g->up, g->down };
  if (g->up < 0 && g->down < 0) return ODB_OK;
  if (g->ipc) {
    /* the neighbours' y: the buffer that holds ours, as all swap alike */
    int cur = y == g->own[0] ? 0 : 1;
    ODB_TRY(cuda_ok(cudaStreamSynchronize(0), "cudaStreamSynchronize (halo)"));
    ODB_TRY(odb_dist_barrier("MPI_Barrier (mpi_gpu_stream2d peer copies)"));
    for (int i = 0; i < 2; ++i) {
      const double *src;
      if (peer[i] < 0) continue;
      /* up: its last rows, just above ours; down: its first rows */
      src = g->peer[i][cur] + (i == 0 ? g->e0 : g->r1) * row;
      ODB_TRY(cuda_ok(cudaMemcpyAsync(rdev[i], src, (size_t)cnt[i] *
                                      sizeof(double), cudaMemcpyDeviceToDevice,
                                      0), "cudaMemcpyAsync (halo, peer)"));
    }
    /* the neighbour writes the buffer just read in its step after this
       one; with a norm this attempt's allgather (after this rank's step,
       which follows the copies) holds it back until then, without one a
       second barrier does */
    if (!norm) {
      ODB_TRY(cuda_ok(cudaStreamSynchronize(0), "cudaStreamSynchronize "
                      "(halo, peer)"));
      ODB_TRY(odb_dist_barrier("MPI_Barrier (mpi_gpu_stream2d peer "
                               "copies done)"));
    }
    return ODB_OK;
  }
  if (!g->aware) {
    for (int i = 0; i < 2; ++i)
      if (peer[i] >= 0)
        ODB_TRY(cuda_ok(cudaMemcpyAsync(g->snd[i], sdev[i], (size_t)cnt[i] *
                                        sizeof(double), cudaMemcpyDeviceToHost,
                                        0), "cudaMemcpyAsync (halo out)"));
  }
  /* the step before (or the copies out) must be done before MPI reads */
  ODB_TRY(cuda_ok(cudaStreamSynchronize(0), "cudaStreamSynchronize (halo)"));
  for (int i = 0; i < 2; ++i) {
    if (peer[i] < 0) continue;
    if (MPI_Irecv(g->aware ? rdev[i] : g->rcv[i], (int)cnt[i], MPI_DOUBLE,
                  peer[i], 7300 + (1 - i), comm, &req[n++]) != MPI_SUCCESS ||
        MPI_Isend(g->aware ? sdev[i] : g->snd[i], (int)cnt[i], MPI_DOUBLE,
                  peer[i], 7300 + i, comm, &req[n++]) != MPI_SUCCESS)
      return ODB_FAIL(ODB_ERR_IO, "mpi_gpu_stream2d: MPI_Isend/Irecv of "
                      "the halo rows with rank %d failed", peer[i]);
  }
  ODB_TRY(odb_dist_waitall(n, req, "MPI_Waitall (mpi_gpu_stream2d halo rows)"));
  if (!g->aware)
    for (int i = 0; i < 2; ++i)
      if (peer[i] >= 0)
        ODB_TRY(cuda_ok(cudaMemcpyAsync(rdev[i], g->rcv[i], (size_t)cnt[i] *
                                        sizeof(double), cudaMemcpyHostToDevice,
                                        0), "cudaMemcpyAsync (halo in)"));
  return ODB_OK;
}

/*
** The exchange as a kernel (the link), on the state in s->y, or with the
** device's controller ctl in the buffer it holds it in (s->y or s->ynew
** as the batch began).
*/
static odb_status link_xchg(odb_solver *s, const odb_gen_ctl *ctl) {
  dgpu *g = s->vdata;
  dgl_xchg a;
  int peer[2] = { g->up, g->down };
  memset(&a, 0, sizeof a);
  a.ctl = ctl;
  a.timeout_ns = (long long)LINK_TIMEOUT_S * 1000000000LL;
  a.y[0] = s->y;
  a.y[1] = s->ynew;
  a.box = g->box;
  for (int i = 0; i < 2; ++i) {
    if (peer[i] < 0) continue;
    /* the neighbour's buffers in the same order as ours: all swap alike */
    for (int k = 0; k < 2; ++k)
      a.src[i][k] = g->peer[i][a.y[k] == g->own[0] ? 0 : 1];
    /* up: its last rows, just above ours; down: its first rows */
    a.dst[i] = a.from[i] = (i == 0 ? g->e0 : g->r1) * g->row;
    a.count[i] = (i == 0 ? g->halo_up : g->halo_down) * g->row;
    /* this rank is the neighbour below the one above, and above the one
       below */
    a.ready_to[i] = &g->boxes[peer[i]]->ready[1 - i];
    a.copied_to[i] = &g->boxes[peer[i]]->copied[1 - i];
  }
  return dgl_xchg_launch(&a);
}

/*
** Before launch `launch` of a batch: an exchange every K launches, from
** the first. A batch's launches take at most one accepted step each
** (rejected and skipped ones none), so K launches never take more steps
** than the halos serve, whatever the controller decides.
*/
static odb_status link_before(void *ctx, int launch, const odb_gen_ctl *ctl) {
  odb_solver *s = ctx;
  const dgpu *g = s->vdata;
  return launch % g->K ? ODB_OK : link_xchg(s, ctl);
}

/* ODB_ERR_BACKEND when a wait of the link timed out on this rank. */
static odb_status link_check(dgpu *g) {
  unsigned fail = 0;
  ODB_TRY(cuda_ok(cudaMemcpy(&fail, &g->box->fail, sizeof fail,
                             cudaMemcpyDeviceToHost), "cudaMemcpy (link)"));
  if (!fail) return ODB_OK;
  g->link = 0;   /* the ranks' counts no longer agree */
  return ODB_FAIL(ODB_ERR_BACKEND, "mpi_gpu_stream2d: rank %d's GPU waited "
                  "more than %d s for a neighbour's (a rank stopped, or "
                  "took another path)", odb_dist_rank(), LINK_TIMEOUT_S);
}

static odb_status gpu_attempt(odb_solver *s, double h, double *err) {
  dgpu *g = s->vdata;
  odb_solver *in = g->inner;
  double *y0 = in->y, *yn0 = in->ynew, e = 0.0;
  odb_status st;
  const int norm = !s->defer_norm && s->method->bhat;
  if (s->y == g->last_ynew) --g->left;          /* the last was accepted */
  else if (s->y != g->last_y) g->left = 0;      /* not the last's state */
  g->last_y = s->y;
  g->last_ynew = s->ynew;
  if (g->left <= 0) {
    if (g->link) ODB_TRY(link_xchg(s, NULL));
    else ODB_TRY(exchange(g, s->y, norm));
    g->left = g->K;
  }
  in->y = s->y + g->e0 * g->row;
  in->ynew = s->ynew + g->e0 * g->row;
  in->t = s->t;
  in->fsal_ready = 0;
  in->defer_norm = s->defer_norm;
  st = in->variant->attempt(in, h, &e);
  in->y = y0;
  in->ynew = yn0;
  if (st != ODB_OK) return st;
  *err = 0.0;
  if (!norm) return ODB_OK;
  if (g->link) ODB_TRY(link_check(g));
  /* the inner norm is sqrt(own sum / slab n) */
  dist_norm_reset(&g->norm);
  dist_norm_add(&g->norm, e * e * (double)in->n);
  return dist_norm_all(&g->norm, s->n, err);
}

/*
** A batch of attempts with the step controller on the device: the inner
** solver's, on the slab's windows, its kernels summing the norm over the
** ranks and each attempt after an exchange kernel (the link; one rank:
** gpu_stream2d's own). The host path exchanges again before its next
** attempt.
*/
static odb_status gpu_advance(odb_solver *s, odb_advance *v) {
  dgpu *g = s->vdata;
  odb_solver *in = g->inner;
  double *y0 = in->y, *yn0 = in->ynew;
  odb_status st;
  if (odb_dist_size() > 1 && !g->link)
    return ODB_FAIL(ODB_ERR_INTERNAL, "mpi_gpu_stream2d: advance without "
                    "the link");
  in->y = s->y + g->e0 * g->row;
  in->ynew = s->ynew + g->e0 * g->row;
  in->t = s->t;
  in->h_next = s->h_next;
  in->fsal_ready = 0;
  st = in->variant->advance(in, v);
  in->y = y0;
  in->ynew = yn0;
  g->left = 0;
  if (st == ODB_OK && g->link) st = link_check(g);
  return st;
}

/* This rank's bytes: the slab's step, stage 0 always evaluated. */
static void gpu_traffic(const odb_solver *s, int stage0, double *r,
                        double *w) {
  const dgpu *g = s->vdata;
  (void)stage0;
  g->inner->variant->traffic(g->inner, 1, r, w);
}

static double gpu_fp64(const odb_solver *s, int stage0) {
  const dgpu *g = s->vdata;
  (void)stage0;
  return g->inner->variant->fp64 ? g->inner->variant->fp64(g->inner, 1) : 0;
}

/* The whole state on every rank: own rows out, allgatherv, all back in. */
static odb_status gpu_gather(odb_solver *s) {
  dgpu *g = s->vdata;
  int r = odb_dist_rank();
  size_t bytes = (size_t)s->n * sizeof(double);
  if (!g->whole && !(g->whole = malloc(bytes)))
    return ODB_FAIL(ODB_ERR_NOMEM, "mpi_gpu_stream2d: %.2f GB of host memory "
                    "to gather the state", bytes * 1e-9);
  ODB_TRY(odb_backend_sync(s->backend));
  ODB_TRY(s->backend->ops->to_host(s->backend, g->whole + g->displs[r],
                                   s->y + g->displs[r],
                                   (size_t)g->counts[r] * sizeof(double)));
  ODB_TRY(odb_dist_allgatherv(g->whole + g->displs[r], g->counts[r], g->whole,
                              g->counts, g->displs,
                              "MPI_Allgatherv (mpi_gpu_stream2d state)"));
  ODB_TRY(s->backend->ops->to_device(s->backend, s->y, g->whole, bytes));
  s->fsal_ready = 0;   /* F_0 is not kept (see above) */
  return ODB_OK;
}

const odb_variant odb_variant_mpi_gpu_stream2d = {
  .name = "mpi_gpu_stream2d",
  .doc = "MPI, GPU ranks (one GPU a rank, by local rank): a 2-D grid "
         "problem in slabs of rows, each stepped by gpu_stream2d with halo "
         "rows that the steps recompute, K S deep for K steps (S stages, "
         "K up to halo_steps); the halos exchanged once every K accepted "
         "steps (CUDA IPC peer copies on one host, else device buffers with a "
         "CUDA-aware MPI, else pinned host buffers); error norm summed "
         "exactly over the ranks; with a GPU of its own for each rank on "
         "one host, the GPUs wait for each other on the device and the "
         "step controller runs there (else on the hosts); takes "
         "gpu_stream2d's options",
  .backend = "cuda",
  .applies = gpu_applies,
  .init = gpu_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .advance = gpu_advance,
  .advance_default = 1,
  .traffic = gpu_traffic,
  .gather = gpu_gather,
  .fp64 = gpu_fp64,
  .opts = gpu_opts,
  .nopts = GPU_NOPTS,
};

odb_status odb_dist_gpu_register(void) {
  memcpy(gpu_opts, odb_gpu_stream2d_opts, sizeof odb_gpu_stream2d_opts);
  gpu_opts[ODB_GPU_STREAM2D_NOPTS] = halo_steps_decl;
  return odb_variant_register(&odb_variant_mpi_gpu_stream2d);
}
