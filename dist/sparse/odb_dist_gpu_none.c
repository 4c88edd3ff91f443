/* odb_dist_gpu_none.c - odb_dist_gpu.h in a build without CUDA: no rank
** computes on a GPU, so attaching refuses (the binding checks the
** context's "cuda" backend first and names the argument) and nothing
** else is reached. */
#include "odb_dist_gpu.h"

#define NO_CUDA "backend 'cuda': this build has no CUDA (configure with -Dcuda=enabled)"

odb_status odb_dgpu_attach(odb_dsparse *A)
{
  (void)A;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

void odb_dgpu_free(odb_dsparse *A) { (void)A; }

odb_status odb_dgpu_spmv(odb_dsparse *A, double *dx, double *dy)
{
  (void)A; (void)dx; (void)dy;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

odb_status odb_dgpu_spmv_host(odb_dsparse *A, const double *x, double *y)
{
  (void)A; (void)x; (void)y;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

odb_status odb_dgpu_bench_put(odb_dsparse *A, const double *x)
{
  (void)A; (void)x;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

odb_status odb_dgpu_bench_run(odb_dsparse *A)
{
  (void)A;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

const char *odb_dgpu_halo_path(const odb_dsparse *A) { (void)A; return "halo: host buffers"; }

odb_status odb_dgpu_copy_share(int local_size, double *bytes_per_s)
{
  (void)local_size;
  *bytes_per_s = 0.0;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

odb_status odb_dgpu_read_share(int local_size, double *bytes_per_s)
{
  (void)local_size;
  *bytes_per_s = 0.0;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}

double odb_dgpu_bytes(const odb_dsparse *A) { (void)A; return 0.0; }

const char *odb_dgpu_krylov_control(const odb_dsparse *A, const odb_dsparse *At, int m)
{
  (void)A; (void)At; (void)m;
  return "host";
}

odb_status odb_dgpu_krylov(odb_dsparse *A, odb_dsparse *At, int m, const double *b, double *x,
                           const odb_krylov_opts *o, int replace, int persistent,
                           odb_krylov_result *res, double *seconds)
{
  (void)A; (void)At; (void)m; (void)b; (void)x; (void)o; (void)replace; (void)persistent; (void)res;
  (void)seconds;
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, NO_CUDA);
}
