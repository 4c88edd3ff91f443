/* odb_kernels_none.c - kernels/ of a build without CUDA: registers nothing. */
#include "odb_kernels.h"

/* Leaves a note so that --list and info can say why "cuda" is missing. */
odb_status odb_kernels_register(odb_ctx *ctx) {
  odb_ctx_note_backend(ctx, "cuda: not built (configure with -Dcuda=enabled "
                       "and nvcc available)");
  return ODB_OK;
}

int odb_kernels_have_cuda(void) { return 0; }

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
