/* odb_gpu_onchip.c - gpu_onchip: the state of a 2-D grid problem kept on
   the chip for a whole batch of adaptive attempts. One persistent kernel
   (gen_rk_onchip.c), one block a multiprocessor, each block's band of grid
   rows of y in its shared memory from the launch's start to its end, a
   barrier between the blocks after each stage's argument and after the
   norm's block sums; every block runs the step controller on the same
   total, so all take the same decisions without a second barrier. After
   M. Korch and T. Werner, "An in-depth introduction of multi-workgroup
   tiling for improving the locality of explicit one-step methods for ODE
   systems with limited access distance on GPUs": a step reads y and
   writes ynew, and here neither leaves the chip between the attempts of a
   launch. */
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

typedef struct onchip {
  odb_gen_plan plan;
  odb_gen_onchip_layout lay;
  odb_gpu_module *mod;
  odb_gpu_kernel k;
  double *Y[2];          /* place 1: the halo rows; place 2: the arguments */
  double *part;          /* the blocks' sums of the norm */
  unsigned *ticket;
  double *err2;          /* [0] the sum of squares, [1] the watchdog's word */
  double *err_host;      /* pinned: err2 comes back here */
  unsigned *bar;         /* barrier A's words (plan.nbar) */
  odb_gen_ctl *ctl, *ctl_host;
  double watchdog;
} onchip;

/*
** gpu_onchip applies to explicit RK methods on 2-D grid problems with a
** cell source; whether the state fits the device is for init, which knows
** the device.
*/
static int onchip_applies(const odb_problem *p, const odb_method *m,
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
  if (!p->gpu_cell_source || p->grid_comps < 1 ||
      p->grid_rows * p->grid_cols * p->grid_comps != p->n) {
    snprintf(why, nwhy, "problem %s is not a 2-D grid problem with a cell "
             "source (gpu_cell_source)", p->label);
    return 0;
  }
  return 1;
}

static void onchip_fini(odb_solver *s) {
  onchip *g = s->vdata;
  odb_backend *b = s->backend;
  if (!g) return;
  for (int i = 0; i < 2; ++i) b->ops->free(b, g->Y[i]);
  b->ops->free(b, g->part);
  b->ops->free(b, g->ticket);
  b->ops->free(b, g->err2);
  b->ops->free(b, g->bar);
  b->ops->free(b, g->ctl);
  if (g->err_host) cudaFreeHost(g->err_host);
  if (g->ctl_host) cudaFreeHost(g->ctl_host);
  odb_gpu_module_free(g->mod);
  free(g);
  s->vdata = NULL;
}

/* Device memory of doubles (0: none), refused before allocating when the
   device has not that much free. */
static odb_status onchip_alloc(odb_solver *s, onchip *g) {
  odb_backend *b = s->backend;
  size_t fr = 0, tot = 0;
  size_t need = ((size_t)g->plan.scratch[0] + (size_t)g->plan.scratch[1] +
                 (size_t)g->plan.nparts + 2) * sizeof(double) +
                (size_t)g->plan.nbar * sizeof(unsigned) + sizeof(odb_gen_ctl);
  if (cudaMemGetInfo(&fr, &tot) == cudaSuccess && need > fr)
    return ODB_FAIL(ODB_ERR_NOMEM, "out of device memory: gpu_onchip needs "
                    "%.2f GB more for its buffers (n = %ld); %.2f GB of %.2f "
                    "GB are free", need * 1e-9, s->n, fr * 1e-9, tot * 1e-9);
  (void)cudaGetLastError();
  for (int i = 0; i < 2; ++i)
    if (g->plan.scratch[i] > 0)
      ODB_TRY(b->ops->alloc(b, (size_t)g->plan.scratch[i] * sizeof(double),
                            (void **)&g->Y[i]));
  ODB_TRY(b->ops->alloc(b, (size_t)g->plan.nparts * sizeof(double),
                        (void **)&g->part));
  ODB_TRY(b->ops->alloc(b, sizeof(unsigned), (void **)&g->ticket));
  ODB_TRY(b->ops->alloc(b, 2 * sizeof(double), (void **)&g->err2));
  ODB_TRY(b->ops->alloc(b, (size_t)g->plan.nbar * sizeof(unsigned),
                        (void **)&g->bar));
  ODB_TRY(b->ops->alloc(b, sizeof(odb_gen_ctl), (void **)&g->ctl));
  ODB_CUDA_CHECK(cudaMemset(g->ticket, 0, sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMemset(g->err2, 0, 2 * sizeof(double)));
  ODB_CUDA_CHECK(cudaMemset(g->bar, 0, (size_t)g->plan.nbar *
                                       sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMallocHost((void **)&g->err_host, 2 * sizeof(double)));
  ODB_CUDA_CHECK(cudaMallocHost((void **)&g->ctl_host, sizeof(odb_gen_ctl)));
  return ODB_OK;
}

/*
** The layout from the device's multiprocessors and shared memory a block
** (odb_gen_onchip_fit: a state that does not fit is refused here, with
** the sizes, before anything is built or allocated), the kernel, and the
** check that the grid is co-resident: one block a multiprocessor must fit
** with the kernel's registers and shared memory, since every block waits
** at the barriers for all others. ODEBENCH_ONCHIP_PLAN prints the layout
** picked (where the stages live).
*/
static odb_status onchip_init(odb_solver *s) {
  odb_tiling_opts t;
  odb_device_info dev;
  odb_gen_opts o;
  onchip *g;
  char *src = NULL, name[160];
  int smem = 0, device = 0, occ = 0;
  odb_status st;
  ODB_TRY(odb_gpu_tiling_resolve(s, &t));
  ODB_TRY(odb_backend_query(s->backend, &dev));
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             device) != cudaSuccess) {
    (void)cudaGetLastError();
    smem = 48 << 10;
  }
  g = calloc(1, sizeof *g);
  if (!g) return ODB_FAIL(ODB_ERR_NOMEM, "gpu_onchip state");
  s->vdata = g;
  ODB_TRY(odb_gen_onchip_fit(s->problem, s->method->s,
                                dev.sm_count > 0 ? dev.sm_count : 1, smem,
                                t.place, &g->lay));
  memset(&o, 0, sizeof o);
  o.threads = t.threads > 0 ? t.threads : 1024;
  o.groups = (int)g->lay.blocks;
  o.place = g->lay.place;
  o.watchdog = t.watchdog > 0 ? t.watchdog : 2.0;
  g->watchdog = o.watchdog;
  ODB_TRY(odb_gen_rk(s->problem, s->method, ODB_GEN_ONCHIP, &o, &src,
                     &g->plan));
  snprintf(name, sizeof name, "gpu_onchip %s %s", s->method->name,
           s->problem->label);
  st = odb_nvrtc_build(name, src, dev.cc_major, dev.cc_minor, &g->mod);
  free(src);
  if (st != ODB_OK) return st;
  ODB_TRY(odb_gpu_kernel_get(g->mod, "k_onchip", &g->k));
  ODB_TRY(odb_gpu_kernel_smem(&g->k, g->lay.smem));
  ODB_TRY(odb_gpu_occupancy(&g->k, (unsigned)o.threads, g->lay.smem, &occ));
  if ((long)occ * (dev.sm_count > 0 ? dev.sm_count : 1) < g->lay.blocks)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_onchip: %ld blocks must be co-resident "
                    "(one a multiprocessor), but the device holds %d blocks "
                    "of this kernel a multiprocessor x %d (%d registers per "
                    "thread, %d threads, %.1f KB of shared memory a block); "
                    "lower threads", g->lay.blocks, occ, dev.sm_count,
                    g->k.regs, o.threads, g->lay.smem * 1e-3);
  if (getenv("ODEBENCH_ONCHIP_PLAN"))
    fprintf(stderr, "gpu_onchip: %ld blocks of %d threads, bands of at most "
            "%ld rows, the stages in %s memory, %.1f KB of shared memory a "
            "block, %d registers\n", g->lay.blocks, o.threads, g->lay.rows,
            g->lay.place == 1 ? "shared" : "global", g->lay.smem * 1e-3,
            g->k.regs);
  s->block = o.threads;
  return onchip_alloc(s, g);
}

/* The kernel's argument for the state (s->t, s->y). */
static void onchip_args(const odb_solver *s, const onchip *g, double h,
                        odb_gen_args *a) {
  memset(a, 0, sizeof *a);
  a->y = s->y;
  a->ynew = s->ynew;
  for (int i = 0; i < s->method->s; ++i) {
    a->F[i] = s->F[i];
    a->tl[i] = s->t + s->method->c[i] * h;
  }
  a->Y[0] = g->Y[0];
  a->Y[1] = g->Y[1];
  a->part = g->part;
  a->ticket = g->ticket;
  a->err2 = g->err2;
  a->h = h;
  a->atol = s->opts.atol;
  a->rtol = s->opts.rtol;
  a->bar = g->bar;
  a->fail = (unsigned *)(g->err2 + 1);
}

/*
** A barrier's watchdog that fired (the word beside the norm) becomes an
** error; the words are cleared so that the solver can go on.
*/
static odb_status onchip_watchdog(odb_solver *s, onchip *g) {
  unsigned failed;
  memcpy(&failed, g->err_host + 1, sizeof failed);
  if (!failed) return ODB_OK;
  ODB_CUDA_CHECK(cudaMemset(g->bar, 0, (size_t)g->plan.nbar *
                                       sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMemset(g->ticket, 0, sizeof(unsigned)));
  ODB_CUDA_CHECK(cudaMemset(g->err2, 0, 2 * sizeof(double)));
  return ODB_FAIL(ODB_ERR_BACKEND, "gpu_onchip: a barrier between the "
                  "blocks waited longer than its watchdog (%.3g s) at t = "
                  "%.17g; the %ld blocks were not all running at once",
                  g->watchdog, s->t, g->lay.blocks);
}

/* One attempt of h (a fixed step, or the host's controller): y into
   shared memory, the stages, ynew and the norm back. */
static odb_status onchip_attempt(odb_solver *s, double h, double *err) {
  onchip *g = s->vdata;
  odb_gen_args a;
  onchip_args(s, g, h, &a);
  ODB_TRY(odb_gpu_launch(&g->k, (unsigned)g->lay.blocks,
                         (unsigned)g->plan.threads, g->lay.smem, &a));
  ODB_CUDA_CHECK(cudaMemcpy(g->err_host, g->err2, 2 * sizeof(double),
                            cudaMemcpyDeviceToHost));
  ODB_TRY(onchip_watchdog(s, g));
  *err = g->plan.has_err ? sqrt(g->err_host[0] / (double)s->n) : 0.0;
  return ODB_OK;
}

/*
** advance: the controller set from the solver as gpu_advance sets it, one
** launch of up to a->launches attempts (a.par), the controller brought
** back. The state goes back into s->y (never swapped), and F_0 is not
** kept: every attempt evaluates stage 0.
*/
static odb_status onchip_advance(odb_solver *s, odb_advance *v) {
  onchip *g = s->vdata;
  odb_gen_ctl *c = g->ctl_host;
  odb_gen_args a;
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
  onchip_args(s, g, c->h, &a);
  a.ctl = g->ctl;
  a.par = v->launches;
  ODB_TRY(odb_gpu_launch(&g->k, (unsigned)g->lay.blocks,
                         (unsigned)g->plan.threads, g->lay.smem, &a));
  ODB_CUDA_CHECK(cudaMemcpy(c, g->ctl, sizeof *c, cudaMemcpyDeviceToHost));
  ODB_CUDA_CHECK(cudaMemcpy(g->err_host, g->err2, 2 * sizeof(double),
                            cudaMemcpyDeviceToHost));
  ODB_TRY(onchip_watchdog(s, g));
  v->attempts = (long)c->attempts;
  v->accepted = (long)c->accepted;
  v->rejected = (long)c->rejected;
  v->t = c->t;
  v->h_next = c->h_next;
  v->h_last = c->h_last;
  v->err = c->err;
  v->capped = c->capped;
  v->swapped = 0;
  v->fsal_ready = 0;
  v->first_stage0 = 1;
  return ODB_OK;
}

/* Bytes an attempt moves through global memory (the plan's launch). */
static void onchip_traffic(const odb_solver *s, int stage0, double *r,
                           double *w) {
  const onchip *g = s->vdata;
  double v = (double)s->n * sizeof(double);
  (void)stage0;
  *r = v * g->plan.launch[0].rvec;
  *w = v * g->plan.launch[0].wvec;
}

/* The generator's count of an attempt (stage 0 is always evaluated). */
static double onchip_fp64(const odb_solver *s, int stage0) {
  const onchip *g = s->vdata;
  (void)stage0;
  return g ? odb_gen_plan_fp64(&g->plan, 1) : 0;
}

static const odb_variant odb_variant_gpu_onchip = {
  .name = "gpu_onchip",
  .doc = "GPU, 2-D grid problems (a cell source): one persistent kernel a "
         "batch of adaptive attempts, one block a multiprocessor, each "
         "block's band of grid rows of y in shared memory for the whole "
         "batch; the stage argument and vectors in shared memory where a "
         "band's fit (place = shared), else in global memory; a barrier "
         "between the blocks (with a watchdog) a stage and one for the "
         "norm; the step controller on the device, every block deciding "
         "alike; refused where y does not fit the blocks' shared memory",
  .backend = "cuda",
  .applies = onchip_applies,
  .init = onchip_init,
  .fini = onchip_fini,
  .attempt = onchip_attempt,
  .fp64 = onchip_fp64,
  .traffic = onchip_traffic,
  .advance = onchip_advance,
  .advance_default = 1,
  .opts = odb_gpu_onchip_opts,
  .nopts = ODB_GPU_ONCHIP_NOPTS,
};

odb_status odb_gpu_onchip_register(void) {
  return odb_variant_register(&odb_variant_gpu_onchip);
}
