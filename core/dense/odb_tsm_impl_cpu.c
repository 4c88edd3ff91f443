/* odb_tsm_impl_cpu.c - the "cpu" table of odb_tsm_impl.h over
   odb_tsm_host (the threaded CPU version, its peer the plain loop) and the
   family's registry. */
#include "odb_tsm_impl.h"

#include <stdio.h>
#include <string.h>

#include "odb_registry.h"

/* An odb_tsm_run of this table is an odb_tsm_host. */
static odb_status cpu_ready(struct odb_ctx *ctx) {
  (void)ctx;
  return ODB_OK;
}

static odb_status cpu_create(struct odb_ctx *ctx, odb_tsm_op op,
                             odb_tsm_dtype t, long M, long N, long K,
                             int full, int threads, uint64_t seed,
                             odb_tsm_run **out) {
  (void)ctx; (void)full;
  return odb_tsm_host_create(op, t, M, N, K, threads, seed,
                             (odb_tsm_host **)out);
}

static void cpu_destroy(odb_tsm_run *r) {
  odb_tsm_host_destroy((odb_tsm_host *)r);
}

static odb_status cpu_time(odb_tsm_run *r, const odb_measure_opts *o,
                           struct odb_ctx *ctx, odb_measurement *m) {
  return odb_tsm_host_time((odb_tsm_host *)r, o, ctx, m);
}

static odb_status cpu_compare(odb_tsm_run *r, const odb_measure_opts *o,
                              struct odb_ctx *ctx, odb_measurement *mine,
                              odb_measurement *peer) {
  return odb_tsm_host_compare((odb_tsm_host *)r, o, ctx, mine, peer);
}

static odb_status cpu_check(odb_tsm_run *r, double *err) {
  return odb_tsm_host_check((odb_tsm_host *)r, err);
}

static odb_status cpu_load(odb_tsm_run *r, const double *A,
                           const double *X) {
  odb_tsm_host_load((odb_tsm_host *)r, A, X);
  return ODB_OK;
}

static odb_status cpu_result(odb_tsm_run *r, double *out) {
  return odb_tsm_host_result((odb_tsm_host *)r, out);
}

static void cpu_describe(const odb_tsm_run *r, odb_tsm_desc *d) {
  memset(d, 0, sizeof *d);
  d->threads = odb_tsm_host_threads((const odb_tsm_host *)r);
  snprintf(d->config, sizeof d->config, "threads=%d", d->threads);
}

const odb_tsm_ops odb_tsm_cpu_ops = {
  .backend = "cpu", .peer = "plain loop", .copies = 1.0,
  .takes_threads = 1,
  .ready = cpu_ready, .create = cpu_create, .destroy = cpu_destroy,
  .time = cpu_time, .peer_time = NULL, .compare = cpu_compare,
  .check = cpu_check, .load = cpu_load, .result = cpu_result,
  .describe = cpu_describe,
};

static odb_registry registry = {
  "tsm", 1, { "cpu" }, { &odb_tsm_cpu_ops }
};

odb_status odb_tsm_impl_register(const odb_tsm_ops *ops) {
  return odb_registry_add(&registry, ops->backend, ops);
}

odb_status odb_tsm_impl_find(const char *name, const odb_tsm_ops **out) {
  const void *p;
  odb_status st = odb_registry_find(&registry, name, &p);
  *out = p;
  return st;
}

const odb_tsm_ops *odb_tsm_impl_get(const char *name) {
  return odb_registry_get(&registry, name);
}

const char *odb_tsm_impl_list(char *buf, size_t len) {
  return odb_registry_list(&registry, buf, len);
}
