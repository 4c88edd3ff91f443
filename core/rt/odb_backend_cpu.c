/* odb_backend_cpu.c - the CPU backend: host memory, 64-byte aligned. */
#include "odb_status.h"
#include "odb_backend.h"
#include "odb_ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Aligned to 64 bytes (a cache line, and an AVX-512 vector). */
static odb_status cpu_alloc(odb_backend *b, size_t bytes, void **ptr) {
  (void)b;
  *ptr = NULL;
  if (posix_memalign(ptr, 64, bytes ? bytes : 64) != 0)
    return ODB_FAIL(ODB_ERR_NOMEM, "cpu: cannot allocate %zu bytes", bytes);
  return ODB_OK;
}

static void cpu_free(odb_backend *b, void *ptr) {
  (void)b;
  free(ptr);
}

static odb_status cpu_copy(odb_backend *b, void *dst, const void *src,
                           size_t bytes) {
  (void)b;
  if (bytes) memmove(dst, src, bytes);
  return ODB_OK;
}

/* The CPU's name comes from the context's topology. */
static odb_status cpu_query(odb_backend *b, odb_device_info *info) {
  const char *model = b->ctx ? b->ctx->topo.cpu_model : "";
  snprintf(info->name, sizeof info->name, "%s", model[0] ? model : "cpu");
  return ODB_OK;
}

/* Plain loop; the reference that GPU backends are compared with. */
static odb_status cpu_axpy(odb_backend *b, size_t n, double a,
                           const double *x, double *y) {
  (void)b;
  for (size_t i = 0; i < n; ++i) y[i] += a * x[i];
  return ODB_OK;
}

static const odb_backend_ops cpu_ops = {
  .name = "cpu",
  .alloc = cpu_alloc,
  .free = cpu_free,
  .to_device = cpu_copy,
  .to_host = cpu_copy,
  .query = cpu_query,
  .copy = cpu_copy,
  .sync = NULL,
  .axpy = cpu_axpy,
  .destroy = NULL,
};

odb_status odb_backend_cpu_create(odb_ctx *ctx, odb_backend **out) {
  odb_backend *b = calloc(1, sizeof *b);
  *out = NULL;
  if (!b) return ODB_FAIL(ODB_ERR_NOMEM, "cpu backend");
  b->ops = &cpu_ops;
  b->ctx = ctx;
  b->host_memory = 1;
  *out = b;
  return ODB_OK;
}
