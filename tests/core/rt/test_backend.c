/* test_backend.c - the context's backend registry and the CPU backend. */
#include "odebench.h"
#include "odb_kernels.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
  odb_ctx_opts o = { .seed = 7 };
  odb_ctx *ctx;
  odb_backend *b;
  odb_buffer *x, *y;
  enum { N = 1000 };
  double hx[N], hy[N], out[N], ref[N];
  odb_device_info info;
  int same = 1;
  if (!tap_ok(odb_ctx_create(&o, &ctx) == ODB_OK, "context created"))
    return tap_done();
  tap_ok(odb_kernels_register(ctx) == ODB_OK, "GPU registration never fails");
  tap_ok(odb_ctx_lookup_backend(ctx, "auto", &b) == ODB_OK &&
         strcmp(b->ops->name, "cpu") == 0, "auto is the CPU for CPU work");
  tap_ok(odb_ctx_lookup_backend(ctx, "nope", &b) == ODB_ERR_NAME &&
         strstr(odb_last_error(), "unknown backend 'nope' (valid: auto, cpu"),
         "unknown backend lists valid names: %s", odb_last_error());
  b = odb_ctx_backend(ctx, "cpu");
  tap_ok(b && odb_backend_query(b, &info) == ODB_OK && info.name[0],
         "cpu query: %s", info.name);
  for (int i = 0; i < N; ++i) {
    hx[i] = odb_rng_uniform(&ctx->rng) - 0.5;
    hy[i] = odb_rng_uniform(&ctx->rng) - 0.5;
    ref[i] = hy[i] + 0.25 * hx[i];
  }
  tap_ok(odb_buffer_create(b, sizeof hx, &x) == ODB_OK &&
         odb_buffer_create(b, sizeof hy, &y) == ODB_OK, "buffers");
  tap_ok(odb_buffer_write(x, 0, hx, sizeof hx) == ODB_OK &&
         odb_buffer_write(y, 0, hy, sizeof hy) == ODB_OK, "writes");
  tap_ok(b->ops->axpy(b, N, 0.25, x->data, y->data) == ODB_OK, "axpy");
  tap_ok(odb_buffer_read(y, 0, out, sizeof out) == ODB_OK, "read back");
  for (int i = 0; i < N; ++i) same &= out[i] == ref[i];
  tap_ok(same, "axpy result equals the plain loop");
  tap_ok(odb_buffer_write(x, 8, hx, sizeof hx) == ODB_ERR_ARG,
         "write past the end refused: %s", odb_last_error());
  tap_ok(odb_backend_copy(b, y->data, x->data, sizeof hx) == ODB_OK &&
         odb_buffer_read(y, 0, out, sizeof out) == ODB_OK &&
         memcmp(out, hx, sizeof hx) == 0, "device copy");
  odb_buffer_destroy(x);
  odb_buffer_destroy(y);
  odb_ctx_destroy(ctx);
  return tap_done();
}
