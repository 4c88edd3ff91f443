/* odb_krylov_gpu_none.c - odb_krylov_gpu.h in a build without CUDA: impl
** "cpu" runs the reference (timed on the host), the GPU impls give
** ODB_ERR_NO_DEVICE "this build has no CUDA". */
#include <string.h>
#include <time.h>

#include "odb_krylov_gpu.h"
#include "odb_clock.h"

/* The checks the CUDA build makes before it needs a device. */
static odb_status check_opts(const odb_krylov_gpu_opts *o)
{
  if (!o) return ODB_OK;
  if (o->kry.tol < 0 || o->kry.tol != o->kry.tol) return ODB_FAIL(ODB_ERR_ARG, "tol must be positive, got %g", o->kry.tol);
  if (o->kry.maxit < 0) return ODB_FAIL(ODB_ERR_ARG, "maxit must be positive, got %d", o->kry.maxit);
  if ((unsigned)o->impl >= ODB_KRY_IMPL_COUNT)
    return ODB_FAIL(ODB_ERR_ARG, "impl %d is not one of cpu, cusparse, fused, persistent", (int)o->impl);
  if ((unsigned)o->sync >= ODB_KRY_SYNC_COUNT)
    return ODB_FAIL(ODB_ERR_ARG, "sync %d is not one of lock, lockfree, wss", (int)o->sync);
  if (o->delay_ns < 0 || o->delay_ns > 1000000)
    return ODB_FAIL(ODB_ERR_ARG, "delay must be in 0..1000000 ns, got %d", o->delay_ns);
  if (o->grain < 0 || o->grain > 16) return ODB_FAIL(ODB_ERR_ARG, "grain must be 1, 2, 4 or k (0: chosen), got %d", o->grain);
  if (o->stream < -1 || o->stream > 1) return ODB_FAIL(ODB_ERR_ARG, "stream must be 1 (evict-first), -1 (plain) or 0 (chosen), got %d", o->stream);
  if (o->call < -1 || o->call > 1) return ODB_FAIL(ODB_ERR_ARG, "call must be 1 (SpMV called), -1 (inlined) or 0 (chosen), got %d", o->call);
  if (o->tune < -1 || o->tune > 1) return ODB_FAIL(ODB_ERR_ARG, "tune must be 1 (always), -1 (never) or 0 (large matrices), got %d", o->tune);
  if (o->grid < 0) return ODB_FAIL(ODB_ERR_ARG, "grid must be positive (0: automatic), got %d", o->grid);
  if (o->block && (o->block < 64 || o->block > 1024 || o->block % 32))
    return ODB_FAIL(ODB_ERR_ARG, "block must be a multiple of 32 in 64..1024, got %d", o->block);
  if (o->watchdog_s < 0 || o->watchdog_s > 3600)
    return ODB_FAIL(ODB_ERR_ARG, "watchdog must be in 0..3600 s, got %g", o->watchdog_s);
  return ODB_OK;
}

/* The reference for impl cpu; ODB_ERR_NO_DEVICE for the others. */
odb_status odb_krylov_gpu_solve(const odb_sparse *A, odb_krylov_method method, const double *b,
                                double *x, const odb_krylov_gpu_opts *o,
                                odb_krylov_result *res, odb_krylov_gpu_info *info)
{
  memset(res, 0, sizeof *res);
  res->breakdown_iter = -1;
  if (info) memset(info, 0, sizeof *info);
  ODB_TRY(check_opts(o));
  odb_krylov_impl impl = o ? o->impl : ODB_KRY_IMPL_CPU;
  if (impl != ODB_KRY_IMPL_CPU)
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "impl %s: this build has no CUDA (configure with -Dcuda=enabled)",
                    odb_krylov_impl_name(impl));
  double t0 = odb_clock_now();
  odb_status st = odb_krylov_solve(A, method, b, x, o ? &o->kry : NULL, res);
  if (info) {
    info->seconds = odb_clock_since(t0);
    info->seconds_per_iter = info->seconds / (res->iters > 0 ? res->iters : 1);
    info->bytes_per_iter = 2.0 * (double)odb_sparse_bytes(A)
                           + (method == ODB_KRYLOV_QMR ? 30.0 : 22.0) * 8.0 * (double)A->n;
  }
  return st;
}

/* Always ODB_ERR_NO_DEVICE. */
odb_status odb_krylov_gpu_spmv_seconds(const odb_sparse *A, odb_krylov_impl impl, int reps,
                                       double *seconds, double *copy_bytes_per_s)
{
  (void)A; (void)reps; (void)seconds; (void)copy_bytes_per_s;
  return ODB_FAIL(ODB_ERR_NO_DEVICE, "SpMV timing of impl %s: this build has no CUDA "
                  "(configure with -Dcuda=enabled)", odb_krylov_impl_name(impl));
}
