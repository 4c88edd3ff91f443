/* odb_sparse_cuda.c - the "cuda" table of odb_sparse_impl.h: device copies
** of matrices with our SpMV and the cuSPARSE baseline
** (odb_sparse_gpu.h), and the Krylov solvers of odb_krylov_gpu.h.
** Registered by odb_kernels_register (gpu/odb_kernels_cuda.c). */
#include "odb_sparse_impl.h"

#include "odb_krylov_gpu.h"
#include "odb_sparse_gpu.h"

static void cuda_describe(const odb_sparse_gpu *g, odb_sparse_format *fmt,
                          long *n, long *nnz, size_t *bytes)
{
  *fmt = g->fmt;
  *n = g->n;
  *nnz = g->nnz;
  *bytes = g->bytes;
}

const odb_sparse_ops odb_sparse_cuda_ops = {
  .backend = "cuda",
  .upload = odb_sparse_gpu_upload,
  .free = odb_sparse_gpu_free,
  .describe = cuda_describe,
  .spmv_host = odb_sparse_gpu_spmv_host,
  .bench = odb_sparse_gpu_bench_m,
  .tune = odb_sparse_gpu_tune,
  .get_opts = odb_sparse_gpu_get_opts,
  .set_opts = odb_sparse_gpu_set_opts,
  .opts_str = odb_sparse_gpu_opts_str,
  .baseline_name = odb_sparse_gpu_cusparse_name,
  .krylov_solve = odb_krylov_gpu_solve,
  .krylov_spmv_seconds = odb_krylov_gpu_spmv_seconds,
};
