/* odb_tsm_cuda.c - the "cuda" table of odb_tsm_impl.h over the tuned
   plans of odb_tsm_plan.c (peer: cuBLAS). Registered by
   odb_kernels_register (gpu/odb_kernels_cuda.c). */
#include "odb_tsm_impl.h"

#include <stdio.h>
#include <string.h>

#include "odb_ctx.h"
#include "odb_tsm_gpu.h"

/* An odb_tsm_run of this table is an odb_tsm_plan. */
static odb_status cuda_ready(struct odb_ctx *ctx) {
  if (!odb_ctx_backend(ctx, "cuda"))
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "backend 'cuda': no cuda backend in "
                    "this run (backend 'auto' or 'cpu' runs the CPU "
                    "version)");
  return ODB_OK;
}

static odb_status cuda_create(struct odb_ctx *ctx, odb_tsm_op op,
                              odb_tsm_dtype t, long M, long N, long K,
                              int full, int threads, uint64_t seed,
                              odb_tsm_run **out) {
  odb_tsm_plan_opts o;
  (void)threads; (void)seed;
  memset(&o, 0, sizeof o);
  o.full = full;
  return odb_tsm_plan_create(ctx, op, t, M, N, K, &o, (odb_tsm_plan **)out);
}

static void cuda_destroy(odb_tsm_run *r) {
  odb_tsm_plan_destroy((odb_tsm_plan *)r);
}

/*
** The GPU keeps its event timing: the runs are queued back to back
** between events (a host clock around each would time the launch, not the
** kernel), so the repetitions are one batch of max_reps runs (at most
** 201) rather than odb_measure_run's loop that stops once the spread is
** small; the batch's samples are summarized the same way.
*/
static int batch_reps(const odb_measure_opts *o) {
  odb_measure_opts d = *o;
  odb_measure_defaults(&d);
  return d.max_reps > 201 ? 201 : d.max_reps;
}

static odb_status cuda_time(odb_tsm_run *r, const odb_measure_opts *o,
                            struct odb_ctx *ctx, odb_measurement *m) {
  (void)ctx;
  return odb_tsm_plan_time((odb_tsm_plan *)r, batch_reps(o), m);
}

static odb_status cuda_peer_time(odb_tsm_run *r, const odb_measure_opts *o,
                                 struct odb_ctx *ctx, odb_measurement *m) {
  (void)ctx;
  return odb_tsm_plan_cublas_time((odb_tsm_plan *)r, batch_reps(o), m);
}

static odb_status cuda_compare(odb_tsm_run *r, const odb_measure_opts *o,
                               struct odb_ctx *ctx, odb_measurement *mine,
                               odb_measurement *peer) {
  (void)ctx;
  return odb_tsm_plan_compare((odb_tsm_plan *)r, batch_reps(o), mine, peer);
}

static odb_status cuda_check(odb_tsm_run *r, double *err) {
  return odb_tsm_plan_check((odb_tsm_plan *)r, err);
}

static odb_status cuda_load(odb_tsm_run *r, const double *A,
                            const double *X) {
  return odb_tsm_plan_load((odb_tsm_plan *)r, A, X);
}

static odb_status cuda_result(odb_tsm_run *r, double *out) {
  return odb_tsm_plan_result((odb_tsm_plan *)r, out);
}

static void cuda_describe(const odb_tsm_run *r, odb_tsm_desc *d) {
  const odb_tsm_plan *p = (const odb_tsm_plan *)r;
  memset(d, 0, sizeof *d);
  d->tuned = 1;
  snprintf(d->config, sizeof d->config, "%s", odb_tsm_plan_config(p));
  d->regs = odb_tsm_plan_regs(p);
  d->raced = odb_tsm_plan_raced(p, &d->race_changed);
  odb_tsm_plan_search(p, &d->evals, &d->cached);
}

const odb_tsm_ops odb_tsm_cuda_ops = {
  .backend = "cuda", .peer = "cuBLAS", .copies = 2.0, .takes_threads = 0,
  .ready = cuda_ready, .create = cuda_create, .destroy = cuda_destroy,
  .time = cuda_time, .peer_time = cuda_peer_time, .compare = cuda_compare,
  .check = cuda_check, .load = cuda_load, .result = cuda_result,
  .describe = cuda_describe,
};
