/* odb_kernels_none.c - gpu/ of a build without CUDA: registers nothing
   (the families' registries hold their CPU tables only). */
#include "odb_kernels.h"

/* Leaves a note so that --list and info can say why "cuda" is missing. */
odb_status odb_kernels_register(odb_ctx *ctx) {
  odb_ctx_note_backend(ctx, "cuda: not built (configure with -Dcuda=enabled "
                       "and nvcc available)");
  return ODB_OK;
}

odb_status odb_kernels_register_on(odb_ctx *ctx, int local_rank) {
  (void)local_rank;
  return odb_kernels_register(ctx);
}

int odb_kernels_device(void) { return -1; }

int odb_kernels_have_cuda(void) { return 0; }
