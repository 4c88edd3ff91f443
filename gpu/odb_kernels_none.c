/* odb_kernels_none.c - gpu/ of a build without CUDA: registers nothing
   (the families' registries hold their CPU tables only). */
#include "odb_kernels.h"

/* Leaves a note so that --list and info can say why "cuda" is missing. */
odb_status odb_kernels_register(odb_ctx *ctx) {
  odb_ctx_note_backend(ctx, "cuda: not built (configure with -Dcuda=enabled "
                       "and nvcc available)");
  return ODB_OK;
}

int odb_kernels_have_cuda(void) { return 0; }

/* No device code: no FP64 peak, no GPU RK step to count. */
odb_status odb_kernels_fp64_peak(odb_backend *b, double *flops,
                                 double *tensor_flops) {
  (void)b;
  *flops = *tensor_flops = 0;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, "FP64 peak: this build has no CUDA "
                  "(configure with -Dcuda=enabled)");
}

double odb_gpu_rk_fp64(const odb_solver *s, int stage0) {
  (void)s;
  (void)stage0;
  return 0;
}
