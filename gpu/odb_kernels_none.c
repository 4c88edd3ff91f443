/* odb_kernels_none.c - kernels/ of a build without CUDA: registers nothing. */
#include "odb_kernels.h"

/* Leaves a note so that --list and info can say why "cuda" is missing. */
odb_status odb_kernels_register(odb_ctx *ctx) {
  odb_ctx_note_backend(ctx, "cuda: not built (configure with -Dcuda=enabled "
                       "and nvcc available)");
  return ODB_OK;
}

int odb_kernels_have_cuda(void) { return 0; }

/* {====== tuned tall & skinny kernels need CUDA (odb_tsm.h) */
#include "odb_tsm.h"

odb_status odb_tsm_plan_create(struct odb_ctx *ctx, odb_tsm_op op,
                               odb_tsm_dtype t, long M, long N, long K,
                               const odb_tsm_plan_opts *o,
                               odb_tsm_plan **out) {
  (void)ctx; (void)t; (void)M; (void)N; (void)K; (void)o;
  *out = NULL;
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "%s: this build has no CUDA kernels "
                  "(configure with -Dcuda=enabled)", odb_tsm_op_name(op));
}
void odb_tsm_plan_destroy(odb_tsm_plan *p) { (void)p; }
const char *odb_tsm_plan_config(const odb_tsm_plan *p) { (void)p; return ""; }
int odb_tsm_plan_regs(const odb_tsm_plan *p) { (void)p; return 0; }
void odb_tsm_plan_search(const odb_tsm_plan *p, long *evals, long *cached) {
  (void)p;
  *evals = *cached = 0;
}
int odb_tsm_plan_raced(const odb_tsm_plan *p, int *changed) {
  (void)p;
  if (changed) *changed = 0;
  return 0;
}
odb_status odb_tsm_plan_time(odb_tsm_plan *p, int reps, double *seconds) {
  (void)p; (void)reps; (void)seconds;
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "tsm: no CUDA in this build");
}
odb_status odb_tsm_plan_cublas_time(odb_tsm_plan *p, int reps,
                                    double *seconds) {
  (void)p; (void)reps; (void)seconds;
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "tsm: no CUDA in this build");
}
odb_status odb_tsm_plan_compare(odb_tsm_plan *p, int reps, double *mine,
                                double *cublas, double q[3]) {
  (void)p; (void)reps; (void)mine; (void)cublas; (void)q;
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "tsm: no CUDA in this build");
}
odb_status odb_tsm_plan_check(odb_tsm_plan *p, double *err) {
  (void)p; (void)err;
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "tsm: no CUDA in this build");
}
/* }====== */

/* {====== the barrier microbenchmark needs CUDA (odb_gpu_barrier.h) */
#include "odb_gpu_barrier.h"
#include <string.h>

odb_status odb_gpu_barrier_bench(char kind, int m, int n, int threads,
                                 int iters, int reps, double watchdog,
                                 odb_barrier_result *out) {
  (void)kind; (void)m; (void)n; (void)threads; (void)iters; (void)reps;
  (void)watchdog;
  memset(out, 0, sizeof *out);
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "barrier benchmark: this build has no "
                  "CUDA (configure with -Dcuda=enabled)");
}
/* }====== */

/* No GPU solvers in this build. */
int odb_gpu_rk_cluster(const odb_solver *s) {
  (void)s;
  return 0;
}
