/* sparse_impl_cpu.c - the "cpu" table of odb_sparse_impl.h (the Krylov
** reference timed on the host; no device matrices) and the family's
** registry. */
#include "odb_sparse_impl.h"

#include <string.h>

#include "odb_clock.h"
#include "odb_registry.h"
#include "odb_sparse_floor.h"

/* The checks the cuda table makes of the same options. */
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

/* The reference; another impl belongs to the "cuda" table. */
static odb_status cpu_krylov_solve(const odb_sparse *A, odb_krylov_method method, const double *b,
                                   double *x, const odb_krylov_gpu_opts *o,
                                   odb_krylov_result *res, odb_krylov_gpu_info *info)
{
  memset(res, 0, sizeof *res);
  res->breakdown_iter = -1;
  if (info) memset(info, 0, sizeof *info);
  ODB_TRY(check_opts(o));
  odb_krylov_impl impl = o ? o->impl : ODB_KRY_IMPL_CPU;
  if (impl != ODB_KRY_IMPL_CPU)
    return ODB_FAIL(ODB_ERR_ARG, "impl %s is not the CPU's (cpu)", odb_krylov_impl_name(impl));
  double t0 = odb_clock_now();
  odb_status st = odb_krylov_solve(A, method, b, x, o ? &o->kry : NULL, res);
  if (info) {
    info->seconds = odb_clock_since(t0);
    info->seconds_per_iter = info->seconds / (res->iters > 0 ? res->iters : 1);
    double r, w;
    odb_krylov_min_bytes(A, method, &r, &w);
    info->bytes_per_iter = r + w;
  }
  return st;
}

const odb_sparse_ops odb_sparse_cpu_ops = {
  .backend = "cpu",
  .krylov_solve = cpu_krylov_solve,
};

static odb_registry registry = {
  "sparse", 1, { "cpu" }, { &odb_sparse_cpu_ops }
};

odb_status odb_sparse_impl_register(const odb_sparse_ops *ops)
{
  return odb_registry_add(&registry, ops->backend, ops);
}

odb_status odb_sparse_impl_find(const char *name, const odb_sparse_ops **out)
{
  const void *p;
  odb_status st = odb_registry_find(&registry, name, &p);
  *out = p;
  return st;
}

const char *odb_sparse_impl_list(char *buf, size_t len)
{
  return odb_registry_list(&registry, buf, len);
}
