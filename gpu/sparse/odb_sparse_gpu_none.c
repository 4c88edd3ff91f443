/* odb_sparse_gpu_none.c - odb_sparse_gpu.h in a build without CUDA: every
** entry reports that this build has no CUDA. */
#include <stdio.h>
#include "odb_sparse_gpu.h"

#define NO_CUDA(what) \
  ODB_FAIL(ODB_ERR_NO_DEVICE, "%s: this build has no CUDA (configure with -Dcuda=enabled)", what)

/* Always fails. */
odb_status odb_sparse_gpu_upload(const odb_sparse *A, odb_sparse_gpu **out) {
  (void)A;
  *out = NULL;
  return NO_CUDA("sparse GPU upload");
}

/* Nothing was ever uploaded. */
void odb_sparse_gpu_free(odb_sparse_gpu *g) { (void)g; }

/* Always fails. */
odb_status odb_sparse_gpu_spmv(odb_sparse_gpu *g, const double *x, double *y) {
  (void)g; (void)x; (void)y;
  return NO_CUDA("sparse GPU SpMV");
}

/* Defaults (no matrix can exist). */
odb_sparse_gpu_opts odb_sparse_gpu_get_opts(const odb_sparse_gpu *g) {
  odb_sparse_gpu_opts o = {256, 1, 0, 0, 0};
  (void)g;
  return o;
}

/* No matrix is ever tuned without CUDA. */
int odb_sparse_gpu_is_tuned(const odb_sparse_gpu *g) {
  (void)g;
  return 0;
}

/* Always fails. */
odb_status odb_sparse_gpu_set_opts(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o) {
  (void)g; (void)o;
  return NO_CUDA("sparse GPU options");
}

/* Always fails. */
odb_status odb_sparse_gpu_spmv_opts(odb_sparse_gpu *g, const odb_sparse_gpu_opts *o,
                                    const double *x, double *y) {
  (void)g; (void)o; (void)x; (void)y;
  return NO_CUDA("sparse GPU SpMV");
}

/* Always fails. */
odb_status odb_sparse_gpu_tune(odb_sparse_gpu *g, int reps, double *seconds) {
  (void)g; (void)reps; (void)seconds;
  return NO_CUDA("sparse GPU tuning");
}

/* Formats the options as the CUDA build does. */
const char *odb_sparse_gpu_opts_str(const odb_sparse_gpu_opts *o, char *buf, size_t len) {
  snprintf(buf, len, "block=%d grain=%d shared_x=%d pair=%d stream=%d", o->block, o->grain,
           o->shared_x, o->pair, o->stream);
  return buf;
}

/* No candidates without CUDA. */
int odb_sparse_gpu_space(const odb_sparse_gpu *g, odb_sparse_gpu_opts *out, int max) {
  (void)g; (void)out; (void)max;
  return 0;
}

/* No baseline without CUDA. */
const char *odb_sparse_gpu_cusparse_name(const odb_sparse_gpu *g) {
  (void)g;
  return "";
}

/* Always fails. */
odb_status odb_sparse_gpu_cusparse(odb_sparse_gpu *g, const double *x, double *y) {
  (void)g; (void)x; (void)y;
  return NO_CUDA("cuSPARSE SpMV");
}

/* Always fails. */
odb_status odb_sparse_gpu_bench(odb_sparse_gpu *g, odb_spmv_impl impl, int reps,
                                double *seconds) {
  (void)g; (void)impl; (void)reps; (void)seconds;
  return NO_CUDA("sparse GPU bench");
}

/* Always fails. */
odb_status odb_sparse_gpu_spmv_host(odb_sparse_gpu *g, odb_spmv_impl impl, const double *x,
                                    double *y, long n) {
  (void)g; (void)impl; (void)x; (void)y; (void)n;
  return NO_CUDA("sparse GPU SpMV");
}

/* Always fails. */
odb_status odb_sparse_gpu_copy_bandwidth(double *bytes_per_s) {
  (void)bytes_per_s;
  return NO_CUDA("GPU copy bandwidth");
}

/* Always fails. */
odb_status odb_sparse_gpu_mem(size_t *free_b, size_t *total_b) {
  (void)free_b; (void)total_b;
  return NO_CUDA("GPU memory");
}
