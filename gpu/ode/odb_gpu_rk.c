/* odb_gpu_rk.c - the GPU variants of explicit RK steps: generated CUDA C,
   compiled at run time, launched on the "cuda" backend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "odb_cuda_check.h"
#include "odb_gen_rk.h"
#include "odb_nvrtc.h"
#include "odebench.h"
#include "odb_gpu_rk.h"
#include "odb_gpu_rk_opts.h"

/*
** The solver's vectors y, ynew and F_0..F_{s-1} live in device memory (the
** driver allocates them on the backend, see odb_solver.h); the variant adds
** its argument buffers, the partial sums of the norm and the counter that
** elects the block finishing it. A step is a fixed sequence of launches on
** the default stream; the only copy to the host is the 8-byte sum of
** squares of the weighted error, which accept/reject needs, or, with the
** step controller on the device (advance), the controller once a batch of
** attempts. The solver
** option `block` sets the threads per block (default 256) of gpu_unfused
** and gpu_reference, and the tile width of gpu_trapezoid (default: the
** widest tile that fits shared memory; 256 threads per block).
*/

enum { DEFAULT_THREADS = 256, THREADS_PER_SM = 2048, S2D_THREADS = 128,
       S2D_ROWS = 48, S2D_BAND = 2, S2D_SKEW = 2, HEX_WINDOW = 1024 };

typedef struct gpu_rk {
  odb_gen_plan plan;
  odb_gpu_module *mod;
  odb_gpu_kernel k[ODB_GEN_MAX_LAUNCH];
  double *Y[2];          /* argument or exchange buffers (plan.scratch) */
  double *part;          /* partial sums of the norm (nparts) */
  unsigned *ticket;
  double *err2;
  double *err_host;      /* pinned: the sum of squares comes back here */
  double *note;          /* pinned and mapped: the norm's note (odb_gen_args),
                            NULL where the device cannot write host memory
                            or ODEBENCH_NORM_COPY is set */
  double *note_dev;      /* note as the kernels address it */
  long long seq;         /* the number of the last note asked for */
  unsigned grid;         /* blocks of grid-stride kernels */
  unsigned nparts;
  unsigned *bar;         /* multi-block: barrier words (plan.nbar) */
  int coop;              /* multi-block with barrier C: cooperative launch */
  int early;             /* stream2d: programmatic dependent launches */
  char barrier;
  double watchdog;
  double rd[2], wr[2];   /* bytes read/written per step, [stage0] */
  /* the kind and options the step's kernels were built with, and the
     kernels with the step controller (odb_gen_ctl; built at the first
     advance) with the controller's device and pinned host copies */
  odb_gen_kind kind;
  odb_gen_opts opts;
  odb_gpu_module *mod_ctl;
  odb_gpu_kernel kctl[ODB_GEN_MAX_LAUNCH];
  odb_gen_ctl *ctl, *ctl_host;
  odb_gpu_rk_link link;  /* a slab of a system over GPU ranks (xn set), or
                            all zero */
} gpu_rk;

/*
** Why a variant cannot run p with m, whatever the source of f it compiles;
** shared by every GPU variant.
*/
static int gpu_method_applies(const odb_problem *p, const odb_method *m,
                              char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_ERK) {
    snprintf(why, nwhy, "%s is not an explicit RK method", m->name);
    return 0;
  }
  if (m->s > ODB_GEN_MAX_STAGES) {
    snprintf(why, nwhy, "%s has %d stages, more than %d", m->name, m->s,
             ODB_GEN_MAX_STAGES);
    return 0;
  }
  if (p->d >= p->n) {
    snprintf(why, nwhy, "access distance d = %ld is not smaller than n = "
             "%ld", p->d, p->n);
    return 0;
  }
  return 1;
}

/* gpu_method_applies, and p has CUDA C of f_j (gpu_source). */
static int gpu_applies(const odb_problem *p, const odb_method *m, char *why,
                       size_t nwhy) {
  if (!gpu_method_applies(p, m, why, nwhy)) return 0;
  if (!p->gpu_source) {
    snprintf(why, nwhy, "problem %s has no GPU source of f_j", p->label);
    return 0;
  }
  return 1;
}

/* Frees what init made; safe on a partial init. */
static void gpu_fini(odb_solver *s) {
  gpu_rk *g = s->vdata;
  odb_backend *b = s->backend;
  if (!g) return;
  for (int i = 0; i < 2; ++i) b->ops->free(b, g->Y[i]);
  b->ops->free(b, g->part);
  b->ops->free(b, g->ticket);
  b->ops->free(b, g->err2);
  b->ops->free(b, g->bar);
  b->ops->free(b, g->ctl);
  if (g->err_host) cudaFreeHost(g->err_host);
  if (g->note) cudaFreeHost(g->note);
  if (g->ctl_host) cudaFreeHost(g->ctl_host);
  odb_gpu_module_free(g->mod);
  odb_gpu_module_free(g->mod_ctl);
  free(g);
  s->vdata = NULL;
}

/* Bytes a step moves, from the vectors each of its launches reads/writes. */
static void plan_traffic(gpu_rk *g, long n) {
  double v = (double)n * sizeof(double);
  for (int st0 = 0; st0 < 2; ++st0) {
    g->rd[st0] = g->wr[st0] = 0;
    for (int i = 0; i < g->plan.nlaunch; ++i) {
      const odb_gen_launch *l = &g->plan.launch[i];
      if (!odb_gen_launch_runs(l, st0)) continue;
      g->rd[st0] += v * l->rvec;
      g->wr[st0] += v * l->wvec;
    }
  }
}

/*
** The note a step's norm comes back in without a copy: pinned host memory
** the device writes (mapped; with unified addressing every pinned
** allocation is). The host then waits for the note's number instead of a
** cudaMemcpy after the kernels, which saves the copy's own round trip.
** Left NULL (the copy stays) where the device cannot map host memory, the
** mapped allocation fails, or ODEBENCH_NORM_COPY is set (for comparisons).
*/
static odb_status note_alloc(gpu_rk *g) {
  int device = 0, can = 0;
  const char *off = getenv("ODEBENCH_NORM_COPY");
  if ((off && *off && strcmp(off, "0") != 0) ||
      cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&can, cudaDevAttrCanMapHostMemory, device) !=
          cudaSuccess ||
      !can) {
    (void)cudaGetLastError();
    return ODB_OK;
  }
  if (cudaHostAlloc((void **)&g->note, 2 * sizeof(double),
                    cudaHostAllocMapped) != cudaSuccess) {
    (void)cudaGetLastError();
    g->note = NULL;
    return ODB_OK;
  }
  memset(g->note, 0, 2 * sizeof(double));
  if (cudaHostGetDevicePointer((void **)&g->note_dev, g->note, 0) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    cudaFreeHost(g->note);
    g->note = NULL;
  }
  return ODB_OK;
}

/*
** Refuses, before allocating, scratch that does not fit into the device's
** free memory, with the size needed.
*/
static odb_status alloc_scratch(odb_solver *s, gpu_rk *g) {
  odb_backend *b = s->backend;
  size_t fr = 0, tot = 0;
  size_t need = ((size_t)g->plan.scratch[0] + (size_t)g->plan.scratch[1] +
                 g->nparts) * sizeof(double) + 64;
  if (cudaMemGetInfo(&fr, &tot) == cudaSuccess && need > fr)
    return ODB_FAIL(ODB_ERR_NOMEM, "out of device memory: %s needs %.2f GB "
                    "more for its buffers (n = %ld); %.2f GB of %.2f GB are "
                    "free", s->variant->name, need * 1e-9, s->n, fr * 1e-9,
                    tot * 1e-9);
  (void)cudaGetLastError();
  for (int i = 0; i < 2; ++i)
    if (g->plan.scratch[i] > 0)
      ODB_TRY(b->ops->alloc(b, (size_t)g->plan.scratch[i] * sizeof(double),
                            (void **)&g->Y[i]));
  ODB_TRY(b->ops->alloc(b, g->nparts * sizeof(double), (void **)&g->part));
  ODB_TRY(b->ops->alloc(b, sizeof(unsigned), (void **)&g->ticket));
  /* err2[0]: the sum of squares; err2[1]: the watchdog's failure word */
  ODB_TRY(b->ops->alloc(b, 2 * sizeof(double), (void **)&g->err2));
  ODB_CUDA_CHECK(cudaMemset(g->ticket, 0, sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMemset(g->err2, 0, 2 * sizeof(double)));
  if (g->plan.nbar > 0) {
    ODB_TRY(b->ops->alloc(b, (size_t)g->plan.nbar * sizeof(unsigned),
                          (void **)&g->bar));
    ODB_CUDA_CHECK(cudaMemset(g->bar, 0, (size_t)g->plan.nbar *
                                         sizeof(unsigned)));
  }
  ODB_CUDA_CHECK(cudaMallocHost((void **)&g->err_host, 2 * sizeof(double)));
  return note_alloc(g);
}

/* Shared memory a block may have (opt-in maximum), 48 KiB when unknown. */
static long smem_optin(void) {
  int smem = 0, device = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             device) != cudaSuccess) {
    (void)cudaGetLastError();
    smem = 48 << 10;
  }
  return smem;
}

/* Generates the step with options o, compiles (or finds in the cache) and
   loads it; replaces a module loaded before. */
static odb_status build(odb_solver *s, gpu_rk *g, odb_gen_kind kind,
                        const odb_gen_opts *o, const odb_device_info *dev) {
  char *src = NULL, name[160];
  odb_status st;
  odb_gpu_module_free(g->mod);
  g->mod = NULL;
  ODB_TRY(odb_gen_rk(s->problem, s->method, kind, o, &src, &g->plan));
  snprintf(name, sizeof name, "%s %s %s", s->variant->name, s->method->name,
           s->problem->label);
  st = odb_nvrtc_build(name, src, dev->cc_major, dev->cc_minor, &g->mod);
  free(src);
  if (st != ODB_OK) return st;
  g->kind = kind;
  g->opts = *o;
  for (int i = 0; i < g->plan.nlaunch; ++i) {
    ODB_TRY(odb_gpu_kernel_get(g->mod, g->plan.launch[i].kernel, &g->k[i]));
    if (g->plan.launch[i].smem > 0)   /* with the static, may pass 48 KiB */
      ODB_TRY(odb_gpu_kernel_smem(&g->k[i], g->plan.launch[i].smem));
  }
  return ODB_OK;
}

/* The options of the single-kernel-per-stage and trapezoid variants. */
static void basic_opts(const odb_solver *s, odb_gen_kind kind,
                       odb_gen_opts *o) {
  memset(o, 0, sizeof *o);
  o->threads = s->opts.block > 0 && kind != ODB_GEN_TRAPEZOID
                 ? (int)s->opts.block : DEFAULT_THREADS;
  o->tile_w = kind == ODB_GEN_TRAPEZOID ? s->opts.block : 0;
  /* the norm's block reduction takes static shared memory besides */
  o->smem_max = smem_optin() - (long)(DEFAULT_THREADS * sizeof(double) + 128);
}

/* The device's properties and a zeroed state, owned by s (gpu_fini frees
   it, also after a failed init). */
static odb_status new_state(odb_solver *s, odb_device_info *dev,
                            gpu_rk **out) {
  gpu_rk *g = NULL;
  ODB_TRY(odb_backend_query(s->backend, dev));
  g = calloc(1, sizeof *g);
  if (!g) return ODB_FAIL(ODB_ERR_NOMEM, "GPU variant state");
  s->vdata = g;
  *out = g;
  return ODB_OK;
}

/* Common init of the GPU variants: kernels, launch size, scratch. */
static odb_status gpu_init(odb_solver *s, odb_gen_kind kind) {
  odb_device_info dev;
  odb_gen_opts o;
  gpu_rk *g = NULL;
  long blocks;
  ODB_TRY(new_state(s, &dev, &g));
  basic_opts(s, kind, &o);
  ODB_TRY(build(s, g, kind, &o, &dev));
  s->block = g->plan.threads;
  blocks = (s->n + g->plan.threads - 1) / g->plan.threads;
  if (dev.sm_count > 0 &&
      blocks > (long)dev.sm_count * (THREADS_PER_SM / g->plan.threads))
    blocks = (long)dev.sm_count * (THREADS_PER_SM / g->plan.threads);
  g->grid = (unsigned)blocks;
  g->nparts = g->plan.nparts > 0 ? (unsigned)g->plan.nparts : g->grid;
  ODB_TRY(alloc_scratch(s, g));
  plan_traffic(g, s->n);
  return ODB_OK;
}

/*
** Finishes a tiled variant whose kernels are built: its plan gives its
** grids (tiles, boundaries or per-launch counts) and its partial sums;
** then its scratch.
*/
static odb_status built_finish(odb_solver *s, gpu_rk *g,
                               const odb_gen_opts *o) {
  s->block = o->threads;
  g->grid = g->plan.ntiles > 0 ? (unsigned)g->plan.ntiles : 1;
  g->nparts = g->plan.nparts > 0 ? (unsigned)g->plan.nparts : g->grid;
  ODB_TRY(alloc_scratch(s, g));
  plan_traffic(g, s->n);
  return ODB_OK;
}

/* Builds the kernels of options o, then finishes as built_finish. */
static odb_status tiled_finish(odb_solver *s, gpu_rk *g, odb_gen_kind kind,
                               const odb_gen_opts *o,
                               const odb_device_info *dev) {
  ODB_TRY(build(s, g, kind, o, dev));
  return built_finish(s, g, o);
}

/* The default number of concurrent tiles: the most that still leave each
   tile's top at least three times its redundant halo (at least one). */
static long default_tiles(long cap, long per_block, long halo) {
  long t = 1;
  while (t < cap && per_block * (cap / (t + 1)) >= 8 * halo) ++t;
  return t;
}

/*
** The fewest blocks of threads per multiprocessor over every kernel of
** the step (with FSAL the kernels of the first step and of later ones
** differ, and so may their registers): what a grid that must be
** co-resident is checked against.
*/
static odb_status least_occupancy(const gpu_rk *g, unsigned threads,
                                  int *occ) {
  *occ = 1 << 30;
  for (int i = 0; i < g->plan.nlaunch; ++i) {
    int k = 0;
    ODB_TRY(odb_gpu_occupancy(&g->k[i], threads, g->plan.launch[i].smem,
                              &k));
    if (k < *occ) *occ = k;
  }
  if (*occ == 1 << 30) *occ = 0;
  return ODB_OK;
}

/*
** gpu_multiblock: its options (odb_gpu_multiblock_opts); blocks per tile
** and concurrent tiles from equation (8) of Korch and Werner where not given
** (wg_per_tile = floor(wg_per_sm SMs / tiles)). A probe build gives the
** kernel's registers and so its occupancy; the final build is refused before
** any launch when the blocks that must be co-resident (the whole persistent
** grid, or one tile's group) exceed what the device holds.
*/
static odb_status multiblock_init(odb_solver *s) {
  odb_tiling_opts tiling;
  const odb_tiling_opts *t = &tiling;
  odb_device_info dev;
  odb_gen_opts o;
  gpu_rk *g = NULL;
  int occ = 0, persistent;
  long halo = (long)(s->method->s - 1) * s->problem->d, per, cap, G, tiles;
  ODB_TRY(odb_gpu_tiling_resolve(s, &tiling));
  persistent = t->persistent;
  ODB_TRY(new_state(s, &dev, &g));
  memset(&o, 0, sizeof o);
  o.threads = t->threads > 0 ? t->threads : DEFAULT_THREADS;
  o.comps = t->comps > 0 ? t->comps : 1;
  o.blocks = t->blocks > 0 ? t->blocks : 2;
  o.stride = t->stride ? t->stride : 'B';
  o.barrier = t->barrier ? t->barrier : 'A';
  o.watchdog = t->watchdog > 0 ? t->watchdog : 2.0;
  per = (long)o.comps * o.blocks * o.threads;
  o.groups = 1;
  o.wg_per_tile = t->wg_per_tile > 0 ? t->wg_per_tile
                                     : (int)(2 * halo / per + 1);
  ODB_TRY(build(s, g, ODB_GEN_MULTIBLOCK, &o, &dev));
  ODB_TRY(least_occupancy(g, (unsigned)o.threads, &occ));
  if (t->wg_per_sm > 0 && t->wg_per_sm < occ) occ = t->wg_per_sm;
  if (occ < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: a block of %d threads "
                    "does not fit a multiprocessor (%d registers per thread)",
                    o.threads, g->k[0].regs);
  cap = (long)occ * (dev.sm_count > 0 ? dev.sm_count : 1);
  if (o.barrier == 'C') {
    tiles = 1;
    G = t->wg_per_tile > 0 ? t->wg_per_tile : cap;
  } else if (t->wg_per_tile > 0) {
    G = t->wg_per_tile;
    tiles = t->tiles > 0 ? t->tiles : (cap / G > 0 ? cap / G : 1);
  } else {
    tiles = t->tiles > 0 ? t->tiles : default_tiles(cap, per, halo);
    G = cap / tiles;
  }
  if (G < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: %ld concurrent tiles leave "
                    "no block per tile (the device holds %ld blocks of this "
                    "kernel)", tiles, cap);
  /* the final kernel may take more registers than the probe: with blocks
     per tile of our choosing, shrink them until the grid fits */
  for (int tries = 0; tries < 4; ++tries) {
    o.wg_per_tile = (int)G;
    o.groups = persistent ? (int)tiles : 1 << 30;
    ODB_TRY(build(s, g, ODB_GEN_MULTIBLOCK, &o, &dev));
    ODB_TRY(least_occupancy(g, (unsigned)o.threads, &occ));
    if (t->wg_per_sm > 0 && t->wg_per_sm < occ) occ = t->wg_per_sm;
    cap = (long)occ * (dev.sm_count > 0 ? dev.sm_count : 1);
    if (t->wg_per_tile > 0 || g->plan.grid <= cap || cap / tiles < 1 ||
        cap / tiles >= G)
      break;
    G = cap / tiles;
  }
  {
    long need = persistent || o.barrier == 'C' ? g->plan.grid : G;
    if (need > cap)
      return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: %ld blocks must be "
                      "co-resident (%s), but the device holds %ld blocks of "
                      "this kernel (%d per multiprocessor x %d; %d registers "
                      "per thread, %d threads per block); lower tiles or "
                      "wg_per_tile", need, persistent ? "the persistent grid"
                      : "one tile's group", cap, occ, dev.sm_count,
                      g->k[0].regs, o.threads);
  }
  g->coop = o.barrier == 'C';
  g->barrier = o.barrier;
  g->watchdog = o.watchdog;
  s->block = o.threads;
  g->grid = (unsigned)g->plan.grid;
  g->nparts = g->grid;
  ODB_TRY(alloc_scratch(s, g));
  plan_traffic(g, s->n);
  return ODB_OK;
}

/*
** gpu_stream2d applies to 2-D grid problems with a cell source (which is
** all it compiles: a problem defined in a scenario needs no gpu_source for
** it), for the methods and access distances of every GPU variant.
*/
static int stream2d_applies(const odb_problem *p, const odb_method *m,
                            char *why, size_t nwhy) {
  if (!gpu_method_applies(p, m, why, nwhy)) return 0;
  if (!p->gpu_cell_source || p->grid_comps < 1 ||
      p->grid_rows * p->grid_cols * p->grid_comps != p->n) {
    snprintf(why, nwhy, "problem %s is not a 2-D grid problem with a cell "
             "source (gpu_cell_source)", p->label);
    return 0;
  }
  return 1;
}

/*
** The row chunks of a gpu_stream2d grid (skew 2) with strips strips (or a
** block's subs sub-strips of whole rows, each a chunk) and
** cap blocks resident at once: the fewest that minimise waves of blocks
** times the passes of a block (its rows plus about (lag + 1) s of halo
** rows and pipeline: 3 s at lag 2, 2 s at lag 1), so that neither a
** part-filled last wave nor short chunks waste the device.
*/
static long s2d_chunks(long NR, long strips, long subs, long cap, long S,
                       int lag) {
  long best = 1, best_cost = -1;
  for (long c = 1; c <= NR && c <= 64 * cap * subs; ++c) {
    long waves = (strips * ((c + subs - 1) / subs) + cap - 1) / cap;
    long cost = waves * ((NR + c - 1) / c + (lag + 1) * S);
    if (best_cost < 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

/*
** The default threads of a skew-2 block on a grid NC cells wide: 128 up to
** 4 stages (their registers let three blocks of 128 share an SM, against
** one of 256), 256 for 5 to 8 stages unless strips of 128 cover a row with
** fewer threads in all (odb_gen_s2d_strips: the first and last strips
** carry halo columns on one side only; at NC = 1024, bs3 takes 9 x 128
** threads against 5 x 256), 128 above 8 stages (registers). Up to 256
** columns 256, which stream2d_init halves while half still cover the
** columns plus 2 s: whole rows without halo columns. Verner at N = 2896
** takes 12 strips of 256 (3072 threads a row) against 26 of 128 (3328),
** one block of 256 an SM. Each rule is the faster choice measured on an
** H100 (BENCHMARKS.md, "gpu_stream2d: layout measurements").
*/
static int s2d_threads(long NC, long S) {
  long n128 = odb_gen_s2d_strips(NC, S2D_THREADS, S, 1);
  long n256 = odb_gen_s2d_strips(NC, 2 * S2D_THREADS, S, 1);
  if (NC <= 2 * S2D_THREADS) return 2 * S2D_THREADS;   /* whole rows */
  if (S > 8 || S <= 4 || n128 < 1) return S2D_THREADS;
  if (n128 * S2D_THREADS < n256 * 2 * S2D_THREADS) return S2D_THREADS;
  return 2 * S2D_THREADS;
}

/*
** The default rows of a skew-2 stencil's centre column kept in registers:
** 3 up to 7 stages (the loads they save are what bounds the kernel; DOPRI5
** has the registers for 3 because the norm multiplies by a reciprocal
** instead of dividing), 1 above (Verner's registers: 2 or 3 rows spill and
** measured slower on an H100 than 1, and 1 faster than none).
*/
static int s2d_carry(long S) {
  return S > 7 ? 1 : 3;
}

/*
** The default lag of a skew-2 block (rows stage l runs behind stage l-1):
** 1 on a star stencil (with 3 centre rows kept), else 2 (with s2d_carry).
** Lag 1 carries one state a stage boundary instead of two (the pass's
** parity), which frees the registers for all three rows (Verner: 224
** registers, none spilled, against 255 and 128 bytes of spill with 1 row
** at lag 2). Lag 1 measured faster than lag 2 on an H100 for Verner,
** DOPRI5 and bs3 (BENCHMARKS.md, "gpu_stream2d: layout measurements"); for
** DOPRI5 and bs3 that gain rests on the order of the sums (F_l enters
** Y_{l+1} last, gen_rk_stream2d.c) and on BRUSS2D's cell source reading the
** row below last, without which lag 1 is no faster than lag 2.
*/
static int s2d_lag(const odb_problem *p) {
  return p->grid_star ? 1 : 2;
}

/*
** Whether a skew-2 block stores each completed row of ynew in its last
** stage (1) or after all stages of the pass (0): the last stage's store
** frees registers, but a store among the stages holds back the stages'
** scheduling. The store in the last stage measured faster on an H100 for
** bs3 and Verner and slower for DOPRI5, whose 3 rows kept leave no
** register to gain (it spills more with it).
*/
static int s2d_early_store(long S) {
  return S <= 4 || S > 7;
}

/*
** Whether gpu_stream2d launches each step early (odb_gpu_launch_ex: its
** blocks start as the step before leaves the multiprocessors, and wait in
** the kernel for it to end): on compute capability 9.0 and later, unless
** the option early is false or ODEBENCH_PDL=0 (for comparisons). Measured about
** 1% faster on an H100 (BENCHMARKS.md, "gpu_stream2d: layout
** measurements", early launch off / on).
*/
static int s2d_early(const odb_device_info *dev, const odb_tiling_opts *t) {
  const char *v = getenv("ODEBENCH_PDL");
  if (!t->early || (v && *v && atoi(v) == 0)) return 0;
  return dev->cc_major >= 9;
}

/*
** The blocks of a gpu_stream2d cluster: the option cluster (or ODEBENCH_S2D_CLUSTER
** for all, for comparisons), else 1. Clusters carry halo columns only at
** their ends (BRUSS2D N = 2896, Verner, 128 threads: 24 strips in clusters
** of 2 against 26 alone, 8% fewer cells computed), but the edge columns
** they hand each other every pass cost more than that saves (measured
** slower on an H100 for every cluster size; BENCHMARKS.md, "gpu_stream2d:
** layout measurements", cluster), so none is the default. Refused
** on a device without clusters.
*/
static odb_status s2d_cluster(const odb_device_info *dev,
                              const odb_tiling_opts *t, odb_gen_opts *o) {
  const char *v = getenv("ODEBENCH_S2D_CLUSTER");
  if (t->cluster > 1 && dev->cc_major < 9)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_stream2d: cluster = %d "
                    "needs compute capability 9.0 or later (this device: "
                    "%d.%d); leave it out or give 1", t->cluster,
                    dev->cc_major, dev->cc_minor);
  o->cluster = t->cluster > 0 ? t->cluster
               : v && *v && atoi(v) > 0 && dev->cc_major >= 9 ? atoi(v) : 1;
  return ODB_OK;
}

/*
** gpu_stream2d, its options (odb_gpu_stream2d_opts): skew (default 2: one
** barrier a pass; 1 when a band of several rows is asked for), threads per
** block (default: 128
** for skew 1, s2d_threads for skew 2; fewer for a grid narrower than that:
** a strip is threads - 2 s columns wide),
** rows per block, band rows a pass (skew 1 only, default 2),
** carry (skew 2: the stencil's centre rows kept in registers,
** default s2d_carry), wg_per_sm as the kernel's minimum resident
** blocks. With skew 1
** the default rows are 48 (at least 6 s, so that the 2 s halo rows stay a
** small part), the best of a sweep on an H200; with skew 2 a probe build
** gives the blocks a multiprocessor holds (the rows do not enter the
** kernel's source, so the probe's kernel is the one that runs), and
** s2d_chunks cuts the rows
** into chunks for whole waves of blocks (BENCHMARKS.md, "gpu_stream2d:
** layout measurements", rows a block).
*/
static odb_status stream2d_init(odb_solver *s) {
  odb_tiling_opts tiling;
  const odb_tiling_opts *t = &tiling;
  odb_device_info dev;
  odb_gen_opts o;
  gpu_rk *g = NULL;
  long S = s->method->s, NR = s->problem->grid_rows;
  ODB_TRY(odb_gpu_tiling_resolve(s, &tiling));
  ODB_TRY(new_state(s, &dev, &g));
  g->early = s2d_early(&dev, t);
  memset(&o, 0, sizeof o);
  o.skew = t->skew > 0 ? t->skew : t->band > 1 ? 1 : S2D_SKEW;
  o.threads = t->threads > 0 ? t->threads
              : o.skew == 2 ? s2d_threads(s->problem->grid_cols, S)
              : S2D_THREADS;
  if (t->threads <= 0)   /* a power of two that spans the grid's width */
    while (o.threads > 32 && o.threads / 2 >= s->problem->grid_cols + 2 * S)
      o.threads /= 2;
  o.min_blocks = t->wg_per_sm > 0 ? t->wg_per_sm : 0;
  o.rows = t->rows > 0 ? t->rows : (6 * S > S2D_ROWS ? 6 * S : S2D_ROWS);
  o.band = t->band > 0 ? t->band : o.skew == 2 ? 1 : S2D_BAND;
  /* lag 1 by default only where centre rows may be kept (carry 0 asked
     for takes lag 2) */
  o.lag = t->lag > 0 ? t->lag
          : o.skew == 2 && t->carry != 0 ? s2d_lag(s->problem) : 2;
  o.carry = t->carry >= 0 ? t->carry
            : o.skew != 2 ? 0 : o.lag == 1 ? 3 : s2d_carry(S);
  o.early_store = s2d_early_store(S);
  ODB_TRY(s2d_cluster(&dev, t, &o));
  if (t->rows <= 0 && o.skew == 2 && NR > 1) {   /* whole waves of blocks */
    int occ = 0;
    long cap, chunks;
    o.rows = NR;
    ODB_TRY(build(s, g, ODB_GEN_STREAM2D, &o, &dev));
    ODB_TRY(least_occupancy(g, (unsigned)o.threads, &occ));
    cap = (long)(occ > 0 ? occ : 1) * (dev.sm_count > 0 ? dev.sm_count : 1);
    if (o.cluster > 1) {   /* clusters fill whole GPCs' worth of blocks */
      int nc = 0;
      ODB_TRY(odb_gpu_max_clusters(&g->k[0], (unsigned)o.threads,
                                   g->plan.launch[0].smem, o.cluster, &nc));
      if (nc > 0 && (long)nc * o.cluster < cap) cap = (long)nc * o.cluster;
    }
    chunks = s2d_chunks(NR, g->plan.strips, g->plan.subs, cap, S, o.lag);
    o.rows = (NR + chunks - 1) / chunks;
    if (getenv("ODEBENCH_S2D_PLAN"))   /* for comparisons: the layout picked */
      fprintf(stderr, "gpu_stream2d: %d threads, clusters of %d, %ld strips "
              "x %ld chunks of %ld rows, %d blocks an SM, %ld at once\n",
              o.threads, o.cluster, g->plan.strips, chunks, o.rows, occ, cap);
    /* the rows are not in the source: the probe's kernel stays, only the
       plan (chunks, grid) is made again */
    {
      char *src = NULL;
      ODB_TRY(odb_gen_rk(s->problem, s->method, ODB_GEN_STREAM2D, &o, &src,
                         &g->plan));
      free(src);
    }
    g->opts = o;   /* the rows, planned after the build */
    return built_finish(s, g, &o);
  }
  return tiled_finish(s, g, ODB_GEN_STREAM2D, &o, &dev);
}

static odb_status unfused_init(odb_solver *s) {
  return gpu_init(s, ODB_GEN_UNFUSED);
}

static odb_status reference_init(odb_solver *s) {
  return gpu_init(s, ODB_GEN_REFERENCE);
}

/*
** The default tile width: the window (the width plus d each side) a power
** of two of components, HEX_WINDOW or more, so that the power-of-two
** threads of tile_threads own equal shares of it and none idles; the
** smallest such window that allows the narrowest width, (2 G - 1) d. At
** d = 32 that is a width of 960: one cell a thread at 512 threads (64
** registers, two blocks an SM), measured faster on an H100 than a width of
** 2048 (BENCHMARKS.md, "GPU explicit RK: access distance").
*/
static long default_width(long G, long d) {
  long win = HEX_WINDOW;
  while (win < (2 * G + 1) * d) win *= 2;
  return win - 2 * d;
}

/* Threads of a tile of width w: the fewest (128 to 1024) that leave each
   at most four window components (w + 2 d). */
static int tile_threads(long w, long d) {
  int t = 128;
  while (t < 1024 && 4L * t < w + 2 * d) t *= 2;
  return t;
}

/*
** The tile width and threads of a tiling with a height (G levels a half
** tile): width, else the option block, else default_width; width2;
** threads, else tile_threads of the wider tile.
*/
static void height_opts(const odb_solver *s, const odb_tiling_opts *t,
                        long G, odb_gen_opts *o) {
  o->tile_w = t->width > 0 ? t->width : s->opts.block > 0 ? s->opts.block
              : default_width(G, s->problem->d);
  o->tile_w2 = t->width2;
  o->threads = t->threads > 0 ? t->threads
               : tile_threads(o->tile_w > o->tile_w2 ? o->tile_w : o->tile_w2,
                              s->problem->d);
}

/*
** gpu_trapezoid (odb_gpu_trapezoid_opts): a height below s tiles the step
** in rows of that height (the shared generator of gpu_hexagonal);
** otherwise one row of height s. The tile width is the option width, else
** the option block, else default_width for rows and the widest that fits
** shared memory for one row; rows take threads, else tile_threads.
*/
static odb_status trapezoid_init(odb_solver *s) {
  odb_tiling_opts tiling;
  const odb_tiling_opts *t = &tiling;
  odb_device_info dev;
  odb_gen_opts o;
  gpu_rk *g = NULL;
  ODB_TRY(odb_gpu_tiling_resolve(s, &tiling));
  ODB_TRY(new_state(s, &dev, &g));
  basic_opts(s, ODB_GEN_TRAPEZOID, &o);
  if (t->height <= 0 || t->height >= s->method->s) {   /* one row */
    if (t->width > 0) o.tile_w = t->width;
    return tiled_finish(s, g, ODB_GEN_TRAPEZOID, &o, &dev);
  }
  o.tile_h = t->height;
  height_opts(s, t, t->height, &o);
  return tiled_finish(s, g, ODB_GEN_TRAPEZOID, &o, &dev);
}

/*
** gpu_hexagonal (odb_gpu_hexagonal_opts): height (even, 2..2s; default 4,
** at most 2s), width and width2 (the odd and even hexagons' widest widths;
** default_width), threads (tile_threads).
*/
static odb_status hexagonal_init(odb_solver *s) {
  odb_tiling_opts tiling;
  const odb_tiling_opts *t = &tiling;
  odb_device_info dev;
  odb_gen_opts o;
  gpu_rk *g = NULL;
  int S = s->method->s;
  ODB_TRY(odb_gpu_tiling_resolve(s, &tiling));
  ODB_TRY(new_state(s, &dev, &g));
  basic_opts(s, ODB_GEN_HEXAGON, &o);
  o.tile_h = t->height > 0 ? t->height : (2 * S < 4 ? 2 * S : 4);
  height_opts(s, t, o.tile_h / 2, &o);
  return tiled_finish(s, g, ODB_GEN_HEXAGON, &o, &dev);
}

/*
** After a multi-block step: a barrier's watchdog that fired (the failure
** word beside the norm) becomes an error; the barrier words, the norm's
** ticket and the failure word are cleared so that the solver can go on.
*/
static odb_status check_watchdog(odb_solver *s, gpu_rk *g) {
  unsigned failed;
  memcpy(&failed, g->err_host + 1, sizeof failed);
  if (!failed) return ODB_OK;
  ODB_CUDA_CHECK(cudaMemset(g->bar, 0, (size_t)g->plan.nbar *
                                       sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMemset(g->ticket, 0, sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMemset(g->err2, 0, 2 * sizeof(double)));
  return ODB_FAIL(ODB_ERR_BACKEND, "%s: barrier %c waited longer than its "
                  "watchdog (%.3g s) in a step at t = %.17g; the blocks of "
                  "a tile (%d) were not all running at once", s->variant->name,
                  g->barrier, g->watchdog, s->t, g->plan.wg_per_tile);
}

/* The kernels' argument for an attempt of h from (s->t, s->y). */
static void fill_args(const odb_solver *s, const gpu_rk *g, double h,
                      odb_gen_args *out) {
  const odb_method *m = s->method;
  odb_gen_args a;
  memset(&a, 0, sizeof a);
  a.y = s->y;
  a.ynew = s->ynew;
  for (int i = 0; i < m->s; ++i) {
    a.F[i] = s->F[i];
    a.tl[i] = s->t + m->c[i] * h;
  }
  a.Y[0] = g->Y[0];
  a.Y[1] = g->Y[1];
  a.part = g->part;
  a.ticket = g->ticket;
  a.err2 = g->err2;
  a.h = h;
  a.atol = s->opts.atol;
  a.rtol = s->opts.rtol;
  a.bar = g->bar;
  a.fail = (unsigned *)(g->err2 + 1);
  *out = a;
}

/* The blocks of launch l (0: none). */
static unsigned launch_grid(const gpu_rk *g, const odb_gen_launch *l) {
  return l->grid == ODB_GEN_GRID_TILES ? (unsigned)g->plan.ntiles
       : l->grid == ODB_GEN_GRID_COUNT ? (unsigned)l->blocks
       : l->grid == ODB_GEN_GRID_BOUNDS ? (unsigned)(g->plan.ntiles - 1)
       : g->grid;
}

/*
** Whether the last launch a step runs (with stage 0 evaluated or not)
** finishes the norm, so that the note comes when the step's work is done.
*/
static int last_reduces(const gpu_rk *g, int stage0) {
  for (int i = g->plan.nlaunch - 1; i >= 0; --i) {
    const odb_gen_launch *l = &g->plan.launch[i];
    if (odb_gen_launch_runs(l, stage0) && launch_grid(g, l) > 0)
      return l->reduce;
  }
  return 0;
}

/*
** Waits until the note carries number seq and gives its sum of squares.
** The kernels were queued on the legacy stream; every 4096 reads of the
** note the stream is asked whether they ended, so that a failed launch is
** reported (with the call, file and line) instead of awaited. A stream
** that ended without the note (which the kernels always write) falls back
** to copying err2.
*/
static odb_status note_wait(gpu_rk *g, long long seq, double *v) {
  const volatile long long *num = (const volatile long long *)(g->note + 1);
  for (unsigned k = 1; *num != seq; ++k) {
    if (k % 4096u) continue;
    cudaError_t e = cudaStreamQuery(0);
    if (e == cudaErrorNotReady) continue;
    if (e != cudaSuccess)
      return odb_cuda_fail(e, "cudaStreamQuery(0) (the step's kernels, "
                              "waited on for the norm)", __FILE__, __LINE__);
    if (*num == seq) break;
    ODB_CUDA_CHECK(cudaMemcpy(g->err_host, g->err2, sizeof(double),
                              cudaMemcpyDeviceToHost));
    *v = g->err_host[0];
    return ODB_OK;
  }
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  *v = ((const volatile double *)g->note)[0];
  return ODB_OK;
}

/* One launch of a step's kernel k: cooperative for barrier C, early
   (programmatic dependent) where g->early, in clusters where the plan has
   them, else plain. */
static odb_status launch_step(const gpu_rk *g, const odb_gpu_kernel *k,
                              unsigned grid, size_t smem, void *args) {
  unsigned threads = (unsigned)g->plan.threads;
  if (g->coop) return odb_gpu_launch_coop(k, grid, threads, smem, args);
  if (g->early || g->plan.cluster > 1)
    return odb_gpu_launch_ex(k, grid, threads, smem, args, g->early,
                             g->plan.cluster);
  return odb_gpu_launch(k, grid, threads, smem, args);
}

/*
** Launches the step's kernels in order (skipping stage 0 or its FSAL
** replacement), then brings the norm's sum of squares back (8 bytes).
*/
static odb_status gpu_attempt(odb_solver *s, double h, double *err) {
  gpu_rk *g = s->vdata;
  odb_gen_args a;
  /* the norm by note (note_wait), where one is wanted and no barrier's
     watchdog word must come back with it */
  const int by_note = g->note && g->plan.has_err && !s->defer_norm &&
                      !g->bar && last_reduces(g, !s->fsal_ready);
  fill_args(s, g, h, &a);
  if (by_note) {
    a.note = g->note_dev;
    a.seq = ++g->seq;
  }
  for (int i = 0; i < g->plan.nlaunch; ++i) {
    const odb_gen_launch *l = &g->plan.launch[i];
    unsigned grid = launch_grid(g, l);
    if (!odb_gen_launch_runs(l, !s->fsal_ready) || grid == 0) continue;
    ODB_TRY(launch_step(g, &g->k[i], grid, l->smem, &a));
  }
  *err = 0.0;
  if (by_note) {
    double v = 0.0;
    ODB_TRY(note_wait(g, a.seq, &v));
    *err = sqrt(v / (double)s->n);
    return ODB_OK;
  }
  /* no norm wanted (sync = call, not the call's last step): no copy and no
     wait; the barrier variants still read their watchdog's flag */
  if ((!g->plan.has_err || s->defer_norm) && !g->bar) return ODB_OK;
  ODB_CUDA_CHECK(cudaMemcpy(g->err_host, g->err2, 2 * sizeof(double),
                            cudaMemcpyDeviceToHost));
  if (g->bar) ODB_TRY(check_watchdog(s, g));
  if (g->plan.has_err) *err = sqrt(g->err_host[0] / (double)s->n);
  return ODB_OK;
}

/* The plan's vector counts (see odb_gen_launch). */
static void gpu_traffic(const odb_solver *s, int stage0, double *r,
                        double *w) {
  const gpu_rk *g = s->vdata;
  *r = g->rd[stage0 ? 1 : 0];
  *w = g->wr[stage0 ? 1 : 0];
}

/*
** The step's kernels with the step controller: the options the variant's
** kernels were built with, devctl on (the same launches, grids and shared
** memory), and the controller's device and pinned host copies.
*/
static odb_status build_ctl(odb_solver *s, gpu_rk *g) {
  odb_device_info dev;
  odb_gen_opts o = g->opts;
  odb_gen_plan plan;
  char *src = NULL, name[160];
  odb_status st;
  o.devctl = 1;
  o.xnorm = g->link.xn != NULL;
  o.norm_n = g->link.norm_n;
  odb_gpu_module_free(g->mod_ctl);   /* a build that failed before */
  g->mod_ctl = NULL;
  s->backend->ops->free(s->backend, g->ctl);
  g->ctl = NULL;
  ODB_TRY(odb_backend_query(s->backend, &dev));
  ODB_TRY(odb_gen_rk(s->problem, s->method, g->kind, &o, &src, &plan));
  snprintf(name, sizeof name, "%s %s %s (controller)", s->variant->name,
           s->method->name, s->problem->label);
  st = plan.nlaunch == g->plan.nlaunch
           ? odb_nvrtc_build(name, src, dev.cc_major, dev.cc_minor,
                             &g->mod_ctl)
           : ODB_FAIL(ODB_ERR_INTERNAL, "devctl: %d launches, not %d",
                      plan.nlaunch, g->plan.nlaunch);
  free(src);
  if (st != ODB_OK) return st;
  for (int i = 0; i < plan.nlaunch; ++i) {
    ODB_TRY(odb_gpu_kernel_get(g->mod_ctl, plan.launch[i].kernel,
                               &g->kctl[i]));
    if (plan.launch[i].smem > 0)
      ODB_TRY(odb_gpu_kernel_smem(&g->kctl[i], plan.launch[i].smem));
  }
  ODB_TRY(s->backend->ops->alloc(s->backend, sizeof(odb_gen_ctl),
                                 (void **)&g->ctl));
  ODB_CUDA_CHECK(cudaMallocHost((void **)&g->ctl_host, sizeof(odb_gen_ctl)));
  return ODB_OK;
}

/* Whether the plan keeps F_0 = f(t, y) in memory between steps (FSAL). */
static int keeps_f0(const gpu_rk *g) {
  for (int i = 0; i < g->plan.nlaunch; ++i)
    if (g->plan.launch[i].when == ODB_GEN_IF_FSAL) return 1;
  return 0;
}

/*
** Queues one attempt's launches with the controller (parity par): y and
** ynew, and under FSAL F_0 and F_s-1, in the order par says; stage 0
** evaluated or taken from F_0 as stage0 says.
*/
static odb_status queue_attempt(odb_solver *s, gpu_rk *g, odb_gen_args *a,
                                int par, int stage0, int fsal) {
  int S = s->method->s;
  a->par = par;
  a->y = par ? s->ynew : s->y;
  a->ynew = par ? s->y : s->ynew;
  if (fsal) {
    a->F[0] = par ? s->F[S - 1] : s->F[0];
    a->F[S - 1] = par ? s->F[0] : s->F[S - 1];
  }
  for (int i = 0; i < g->plan.nlaunch; ++i) {
    const odb_gen_launch *l = &g->plan.launch[i];
    unsigned grid = launch_grid(g, l);
    if (!odb_gen_launch_runs(l, stage0) || grid == 0) continue;
    ODB_TRY(launch_step(g, &g->kctl[i], grid, l->smem, a));
  }
  return ODB_OK;
}

/*
** advance: the controller set from the solver (its options, t, h_next,
** the batch's limits), a->launches attempts' launches queued back to back
** with the buffers in turns (an attempt returns at once when the
** controller is done or, after a rejection, when the state is in its
** ynew), then the controller brought back: the one host round trip of the
** batch. Under FSAL, F_0 and F_s-1 take turns with y and ynew, and a batch
** before the first accepted attempt is one attempt (a->launches cut to 1).
*/
static odb_status gpu_advance(odb_solver *s, odb_advance *v) {
  gpu_rk *g = s->vdata;
  odb_gen_ctl *c;
  odb_gen_args a;
  int keeps = keeps_f0(g), fsal = s->method->fsal && keeps;
  if (!g->ctl_host) ODB_TRY(build_ctl(s, g));   /* its last step */
  c = g->ctl_host;
  memset(c, 0, sizeof *c);
  c->t = s->t;
  c->h_next = s->h_next;
  c->h = fmin(s->h_next, v->t1 - s->t);
  c->t1 = v->t1;
  c->t_eps = v->t_eps;
  c->hmin = v->hmin;
  c->safety = s->opts.safety;
  c->fac_min = s->opts.fac_min;
  c->fac_max = s->opts.fac_max;
  c->expo = -1.0 / (s->err_order + 1);
  c->max_attempts = v->max_attempts;
  c->capped = v->capped;
  ODB_CUDA_CHECK(cudaMemcpyAsync(g->ctl, c, sizeof *c,
                                 cudaMemcpyHostToDevice, 0));
  fill_args(s, g, c->h, &a);
  a.ctl = g->ctl;
  a.xn = g->link.xn;
  /* F_0 of the state is in memory only after an accepted attempt (its
     F_s-1; a layout's stage 0 need not write F_0 in full): until then one
     attempt a batch, evaluating stage 0 */
  if (fsal && !s->fsal_ready) v->launches = 1;
  for (int i = 0; i < v->launches; ++i) {
    if (g->link.before)
      ODB_TRY(g->link.before(g->link.ctx, i, g->ctl));
    ODB_TRY(queue_attempt(s, g, &a, i % 2,
                          i == 0 ? !(fsal && s->fsal_ready) : !fsal, fsal));
  }
  ODB_CUDA_CHECK(cudaMemcpy(c, g->ctl, sizeof *c, cudaMemcpyDeviceToHost));
  v->attempts = (long)c->attempts;
  v->accepted = (long)c->accepted;
  v->rejected = (long)c->rejected;
  v->t = c->t;
  v->h_next = c->h_next;
  v->h_last = c->h_last;
  v->err = c->err;
  v->capped = c->capped;
  v->swapped = c->cur;
  /* F_0 of the state, after the caller's swap */
  v->fsal_ready = fsal && (s->fsal_ready || c->accepted > 0);
  /* (a layout without stage 0's alternatives evaluates it every attempt) */
  v->first_stage0 = keeps ? !(fsal && s->fsal_ready) : 1;
  return ODB_OK;
}

/* See odb_gpu_rk.h. */
odb_status odb_gpu_rk_set_link(odb_solver *s, const odb_gpu_rk_link *l) {
  gpu_rk *g = s->vdata;
  if (s->variant->advance != gpu_advance || !g)
    return ODB_FAIL(ODB_ERR_INTERNAL, "odb_gpu_rk_set_link: variant '%s' "
                    "has no step controller on the device",
                    s->variant->name);
  if (g->ctl_host)
    return ODB_FAIL(ODB_ERR_INTERNAL, "odb_gpu_rk_set_link after the first "
                    "batch of attempts");
  g->link = *l;
  return ODB_OK;
}

/*
** The step controller on the device (advance) is every variant's but
** gpu_multiblock's (barriers); it is the default for the variants of few
** launches a step, where it measured faster than the host's on an H100.
** gpu_reference and gpu_unfused (a launch or two a stage) keep the host's,
** which measured faster for them except on the smallest grids: each of
** their launches waits for the controller's words before it starts
** (BENCHMARKS.md, "Small grids: the step controller on the device").
*/
static double gpu_fp64(const odb_solver *s, int stage0);

static const odb_variant odb_variant_gpu_unfused = {
  .name = "gpu_unfused",
  .doc = "GPU: one generated kernel per basic operation (each stage's LC "
         "and RHS, the new solution, the estimate, the norm); adaptive "
         "steps: the step controller on the host (sync = call: on the "
         "device)",
  .backend = "cuda",
  .applies = gpu_applies,
  .init = unfused_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .fp64 = gpu_fp64,
  .traffic = gpu_traffic,
  .advance = gpu_advance,
  .advance_default = 0,
};

static const odb_variant odb_variant_gpu_reference = {
  .name = "gpu_reference",
  .doc = "GPU, Korch and Werner's reference: one kernel per stage fusing "
         "all but the LC->RHS dependencies; the last one also forms ynew and "
         "the error norm; adaptive steps: the step controller on the host "
         "(sync = call: on the device)",
  .backend = "cuda",
  .applies = gpu_applies,
  .init = reference_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .fp64 = gpu_fp64,
  .traffic = gpu_traffic,
  .advance = gpu_advance,
  .advance_default = 0,
};

static const odb_variant odb_variant_gpu_trapezoid = {
  .name = "gpu_trapezoid",
  .doc = "GPU, single-block trapezoidal tiles across all stages (block = "
         "tile width): each tile's F in shared memory, an inverted "
         "trapezoid per tile boundary; needs (2s-2)d <= W and small d; "
         "a height below s: rows of that height (gpu_hexagonal's "
         "generator); adaptive steps: the step controller on the device "
         "(sync = step: on the host)",
  .backend = "cuda",
  .applies = gpu_applies,
  .init = trapezoid_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .fp64 = gpu_fp64,
  .traffic = gpu_traffic,
  .advance = gpu_advance,
  .advance_default = 1,
  .opts = odb_gpu_trapezoid_opts,
  .nopts = ODB_GPU_TRAPEZOID_NOPTS,
};

static const odb_variant odb_variant_gpu_hexagonal = {
  .name = "gpu_hexagonal",
  .doc = "GPU, single-block hexagonal tiles across the stages (Korch and "
         "Werner, §4.1, §4.6): hexagons of a height (even) "
         "alternate in two kernels' parities; a thread keeps its components' "
         "stage values in registers, the argument goes through shared "
         "memory; F written only in the next kernel's edge bands (in full "
         "below a later kernel); adaptive steps: the step controller on the "
         "device (sync = step: on the host)",
  .backend = "cuda",
  .applies = gpu_applies,
  .init = hexagonal_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .fp64 = gpu_fp64,
  .traffic = gpu_traffic,
  .advance = gpu_advance,
  .advance_default = 1,
  .opts = odb_gpu_hexagonal_opts,
  .nopts = ODB_GPU_HEXAGONAL_NOPTS,
};

static const odb_variant odb_variant_gpu_multiblock = {
  .name = "gpu_multiblock",
  .doc = "GPU, multi-block tiles across all stages (Korch and Werner, §4): "
         "groups of blocks share a tile, F in registers, arguments through an "
         "L2-resident double buffer, barrier A/B/C per stage",
  .backend = "cuda",
  .applies = gpu_applies,
  .init = multiblock_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .fp64 = gpu_fp64,
  .traffic = gpu_traffic,
  .opts = odb_gpu_multiblock_opts,
  .nopts = ODB_GPU_MULTIBLOCK_NOPTS,
};

static const odb_variant odb_variant_gpu_stream2d = {
  .name = "gpu_stream2d",
  .doc = "GPU, 2-D grid problems (a cell source: BRUSS2D, or "
         "ob.problem{grid=, cell_source=, star=}): each block streams a "
         "strip of columns row by row through all stages in one kernel, "
         "stage arguments in shared-memory rings, F or partial sums in "
         "registers; skew 2 (default): stage l one row behind stage l-1 on "
         "a star stencil (lag 1), two rows otherwise (lag 2), "
         "one barrier a pass, Y_l+1 formed from Y_l, the stencil's centre "
         "rows kept in registers, and a grid no wider than the block "
         "streamed in whole rows (several sub-strips a block, no halo "
         "columns); y read once (plus halos), ynew written "
         "once; each step launched while the one before ends (compute "
         "capability 9.0 on); adaptive steps run the step controller on the "
         "device (one host round trip a batch of launches; sync = step: on "
         "the host); clusters of blocks that hand each other their edge "
         "columns are an option, none by default, as the exchange costs "
         "more than it saves",
  .backend = "cuda",
  .applies = stream2d_applies,
  .init = stream2d_init,
  .fini = gpu_fini,
  .attempt = gpu_attempt,
  .fp64 = gpu_fp64,
  .traffic = gpu_traffic,
  .advance = gpu_advance,
  .advance_default = 1,
  .opts = odb_gpu_stream2d_opts,
  .nopts = ODB_GPU_STREAM2D_NOPTS,
};

/* See odb_kernels.h. */
int odb_gpu_rk_cluster(const odb_solver *s) {
  const gpu_rk *g;
  if (!s || s->variant != &odb_variant_gpu_stream2d || !s->vdata) return 0;
  g = s->vdata;
  return g->plan.cluster > 0 ? g->plan.cluster : 1;
}

/* odb_variant.fp64 of every GPU RK variant: the generator's count of the
   plan's kernels (odb_gen_plan_fp64). */
static double gpu_fp64(const odb_solver *s, int stage0) {
  const gpu_rk *g;
  if (!s || !s->variant || s->variant->attempt != gpu_attempt || !s->vdata)
    return 0;
  g = s->vdata;
  return odb_gen_plan_fp64(&g->plan, stage0);
}

odb_status odb_gpu_rk_register(void) {
  static const odb_variant *const all[] = {
    &odb_variant_gpu_reference, &odb_variant_gpu_unfused,
    &odb_variant_gpu_trapezoid, &odb_variant_gpu_multiblock,
    &odb_variant_gpu_stream2d, &odb_variant_gpu_hexagonal,
  };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    odb_status st = odb_variant_register(all[i]);
    if (st != ODB_OK) return st;
  }
  return odb_gpu_onchip_register();
}
