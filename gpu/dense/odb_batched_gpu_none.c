/* odb_batched_gpu_none.c - odb_batched_gpu.h in a build without CUDA:
   names and shapes work, every device call fails with ODB_ERR_NO_DEVICE
   ("this build has no CUDA"). */
#include <string.h>

#include "odb_batched_gpu.h"

/* The one failure of every device call. */
static odb_status no_cuda(const char *what) {
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "%s: this build has no CUDA "
                  "(configure with -Dcuda=enabled)", what);
}

static const char *const variant_names[] = { "auto", "serial", "serial2",
                                             "team", "stream" };
static const char *const op_names[] = { "lu", "solve", "trsm", "gemm",
                                        "gemv" };

const char *odb_bgpu_variant_name(odb_bgpu_variant v) {
  return (unsigned)v < 5 ? variant_names[v] : "?";
}

odb_status odb_bgpu_variant_parse(const char *name, odb_bgpu_variant *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, variant_names[i]) == 0) {
      *out = (odb_bgpu_variant)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown GPU variant '%s' (known: auto, "
                  "serial, serial2, team, stream)", name ? name : "(null)");
}

const char *odb_bgpu_op_name(odb_bgpu_op op) {
  return (unsigned)op < 5 ? op_names[op] : "?";
}

odb_status odb_bgpu_op_parse(const char *name, odb_bgpu_op *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, op_names[i]) == 0) {
      *out = (odb_bgpu_op)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown batched op '%s' (known: lu, solve, "
                  "trsm, gemm, gemv)", name ? name : "(null)");
}

odb_status odb_bgpu_batch_init(odb_batch *bt, odb_batched_layout layout,
                               long n, int b, int vl) {
  (void)bt; (void)layout; (void)n; (void)b; (void)vl;
  return no_cuda("batched GPU kernels");
}

odb_status odb_bgpu_ready(void) { return no_cuda("backend \"cuda\""); }

odb_bgpu_variant odb_bgpu_pick(const odb_batch *bt, odb_bgpu_op op) {
  (void)bt; (void)op;
  return ODB_BGPU_SERIAL;
}

odb_status odb_bgpu_resolve(const odb_batch *bt, odb_bgpu_op op,
                            odb_bgpu_variant v, odb_bgpu_variant *out) {
  (void)bt; (void)op; (void)v; (void)out;
  return no_cuda("batched GPU kernels");
}

/* As in odb_batched_gpu.cu: the CPU benchmarks count the same bytes. */
double odb_bgpu_op_bytes(const odb_batch *bt, odb_bgpu_op op) {
  double n = (double)bt->n, b = bt->b;
  switch (op) {
  case ODB_BGPU_OP_LU: return 8.0 * n * 2 * b * b;
  case ODB_BGPU_OP_SOLVE:
  case ODB_BGPU_OP_GEMV: return 8.0 * n * (b * b + 2 * b);
  default: return 8.0 * n * 3 * b * b;
  }
}

odb_status odb_bgpu_alloc(size_t doubles, double **out) {
  (void)doubles;
  *out = NULL;
  return no_cuda("device memory");
}

void odb_bgpu_free(void *d) { (void)d; }

odb_status odb_bgpu_upload(double *d, const double *h, size_t doubles) {
  (void)d; (void)h; (void)doubles;
  return no_cuda("device memory");
}

odb_status odb_bgpu_download(double *h, const double *d, size_t doubles) {
  (void)d; (void)h; (void)doubles;
  return no_cuda("device memory");
}

odb_status odb_bgpu_copy(double *dst, const double *src, size_t doubles) {
  (void)dst; (void)src; (void)doubles;
  return no_cuda("device memory");
}

odb_status odb_bgpu_sync(void) { return no_cuda("device"); }

odb_status odb_bgpu_get_matrix(const odb_batch *bt, const double *dA, long p,
                               double *h) {
  (void)bt; (void)dA; (void)p; (void)h;
  return no_cuda("device memory");
}

odb_status odb_bgpu_set_matrix(const odb_batch *bt, double *dA, long p,
                               const double *h) {
  (void)bt; (void)dA; (void)p; (void)h;
  return no_cuda("device memory");
}

odb_status odb_bgpu_pack(const odb_batch *bt, const double *src, double *dst,
                         int transpose) {
  (void)bt; (void)src; (void)dst; (void)transpose;
  return no_cuda("batched pack");
}

odb_status odb_bgpu_unpack(const odb_batch *bt, const double *src,
                           double *dst, int transpose) {
  (void)bt; (void)src; (void)dst; (void)transpose;
  return no_cuda("batched unpack");
}

odb_status odb_bgpu_pack_rhs(const odb_batch *bt, int m, const double *src,
                             double *dst) {
  (void)bt; (void)m; (void)src; (void)dst;
  return no_cuda("batched pack");
}

odb_status odb_bgpu_unpack_rhs(const odb_batch *bt, int m, const double *src,
                               double *dst) {
  (void)bt; (void)m; (void)src; (void)dst;
  return no_cuda("batched unpack");
}

odb_status odb_bgpu_random(const odb_batch *bt, uint64_t seed,
                           double dominance, double *dA) {
  (void)bt; (void)seed; (void)dominance; (void)dA;
  return no_cuda("batched random");
}

odb_status odb_bgpu_random_rhs(const odb_batch *bt, int m, uint64_t seed,
                               double *dx) {
  (void)bt; (void)m; (void)seed; (void)dx;
  return no_cuda("batched random");
}

odb_status odb_bgpu_lu(const odb_batch *bt, odb_bgpu_variant v, double *dA,
                       long *bad) {
  (void)bt; (void)v; (void)dA;
  if (bad) *bad = -1;
  return no_cuda("batched LU");
}

odb_status odb_bgpu_lu_launch(const odb_batch *bt, odb_bgpu_variant v,
                              double *dA) {
  (void)bt; (void)v; (void)dA;
  return no_cuda("batched LU");
}

odb_status odb_bgpu_trsm(const odb_batch *bt, odb_bgpu_variant v,
                         odb_batched_trsm_kind kind, const double *dT,
                         double *dX) {
  (void)bt; (void)v; (void)kind; (void)dT; (void)dX;
  return no_cuda("batched TRSM");
}

odb_status odb_bgpu_trsv(const odb_batch *bt, odb_bgpu_variant v,
                         odb_batched_trsm_kind kind, const double *dT,
                         double *dx) {
  (void)bt; (void)v; (void)kind; (void)dT; (void)dx;
  return no_cuda("batched TRSV");
}

odb_status odb_bgpu_gemm(const odb_batch *bt, odb_bgpu_variant v,
                         double alpha, const double *dA, const double *dX,
                         double beta, double *dC) {
  (void)bt; (void)v; (void)alpha; (void)dA; (void)dX; (void)beta; (void)dC;
  return no_cuda("batched GEMM");
}

odb_status odb_bgpu_gemv(const odb_batch *bt, odb_bgpu_variant v,
                         double alpha, const double *dA, const double *dx,
                         double beta, double *dy) {
  (void)bt; (void)v; (void)alpha; (void)dA; (void)dx; (void)beta; (void)dy;
  return no_cuda("batched GEMV");
}

odb_status odb_bgpu_lu_solve(const odb_batch *bt, odb_bgpu_variant v,
                             const double *dLU, double *dx) {
  (void)bt; (void)v; (void)dLU; (void)dx;
  return no_cuda("batched solve");
}

odb_status odb_bgpu_mark(void) { return no_cuda("device timing"); }

odb_status odb_bgpu_elapsed(double *seconds) {
  *seconds = 0.0;
  return no_cuda("device timing");
}

odb_status odb_bgpu_copy_bandwidth(size_t bytes, double *gbs) {
  (void)bytes;
  *gbs = 0.0;
  return no_cuda("device bandwidth");
}

odb_status odb_bgpu_blas_new(long n, int b, double *dA, double *dx, int pivot,
                             odb_bgpu_blas **out) {
  (void)n; (void)b; (void)dA; (void)dx; (void)pivot;
  *out = NULL;
  return no_cuda("cuBLAS");
}

void odb_bgpu_blas_free(odb_bgpu_blas *h) { (void)h; }

odb_status odb_bgpu_blas_lu(odb_bgpu_blas *h, long *bad) {
  (void)h;
  if (bad) *bad = -1;
  return no_cuda("cuBLAS");
}

odb_status odb_bgpu_blas_solve(odb_bgpu_blas *h) {
  (void)h;
  return no_cuda("cuBLAS");
}

odb_status odb_bgpu_btd_random(const odb_blocktridiag *t, uint64_t seed,
                               double dominance, double *dm) {
  (void)t; (void)seed; (void)dominance; (void)dm;
  return no_cuda("block-tridiagonal GPU kernels");
}

odb_status odb_bgpu_btd_factor(const odb_blocktridiag *t, odb_bgpu_variant v,
                               double *dm, long *bad_line) {
  (void)t; (void)v; (void)dm;
  if (bad_line) *bad_line = -1;
  return no_cuda("block-tridiagonal GPU kernels");
}

odb_status odb_bgpu_btd_factor_launch(const odb_blocktridiag *t,
                                      odb_bgpu_variant v, double *dm) {
  (void)t; (void)v; (void)dm;
  return no_cuda("block-tridiagonal GPU kernels");
}

odb_status odb_bgpu_btd_solve(const odb_blocktridiag *t, odb_bgpu_variant v,
                              const double *dm, double *dxp) {
  (void)t; (void)v; (void)dm; (void)dxp;
  return no_cuda("block-tridiagonal GPU kernels");
}

odb_bgpu_variant odb_bgpu_btd_pick(const odb_blocktridiag *t, int solve) {
  (void)t; (void)solve;
  return ODB_BGPU_SERIAL;
}

odb_status odb_bgpu_btd_resolve(const odb_blocktridiag *t, odb_bgpu_variant v,
                                int solve, odb_bgpu_variant *out) {
  (void)t; (void)v; (void)solve; (void)out;
  return no_cuda("block-tridiagonal GPU kernels");
}

odb_status odb_bgpu_btd_solve_stream(const odb_blocktridiag *t, int stages,
                                     int y_on_chip, int threads_per_line,
                                     const double *dm, double *dxp) {
  (void)t; (void)stages; (void)y_on_chip; (void)threads_per_line; (void)dm;
  (void)dxp;
  return no_cuda("block-tridiagonal GPU kernels");
}
