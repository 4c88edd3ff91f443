/* test_registry.c - the families' ops tables by backend name
   (odb_registry.h): each family lists "cpu" and finds its CPU table; a
   backend the build lacks, or one that does not exist, is refused with
   the registry's one message; a second registration replaces the first. */
#include "odebench.h"
#include "odb_barrier_impl.h"
#include "odb_batched_impl.h"
#include "odb_kernels.h"
#include "odb_registry.h"
#include "odb_sparse_impl.h"
#include "odb_tsm_impl.h"
#include "tap.h"

#include <string.h>

/* Whether list (comma separated) names name. */
static int lists(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ','))
      return 1;
  return 0;
}

/* A lookup of "cuda" gives the table where the build has CUDA, else the
   one message. */
static void check_cuda(const char *family, odb_status st, const void *ops,
                       const char *list) {
  if (odb_kernels_have_cuda()) {
    tap_ok(st == ODB_OK && ops && lists(list, "cuda"),
           "%s: cuda registered in a build with CUDA (%s)", family, list);
    return;
  }
  tap_ok(st == ODB_ERR_NO_DEVICE && !ops &&
         strcmp(odb_last_error(), "backend 'cuda': this build has no CUDA "
                "(configure with -Dcuda=enabled)") == 0,
         "%s: cuda refused with the one message: %s", family,
         odb_last_error());
  tap_ok(!lists(list, "cuda"), "%s: no cuda entry (%s)", family, list);
}

int main(void) {
  odb_ctx_opts o = { .seed = 1 };
  odb_ctx *ctx;
  char buf[64];
  const odb_batched_ops *bo;
  const odb_sparse_ops *so;
  const odb_tsm_ops *to;
  const odb_barrier_ops *ro;
  odb_status st;
  if (!tap_ok(odb_ctx_create(&o, &ctx) == ODB_OK, "context created"))
    return tap_done();
  tap_ok(odb_kernels_register(ctx) == ODB_OK, "GPU registration never fails");

  /* batched */
  tap_ok(lists(odb_batched_impl_list(buf, sizeof buf), "cpu"),
         "batched lists cpu: %s", buf);
  tap_ok(odb_batched_impl_find("cpu", &bo) == ODB_OK &&
         bo == &odb_batched_cpu_ops && strcmp(bo->backend, "cpu") == 0,
         "batched finds its cpu table");
  st = odb_batched_impl_find("cuda", &bo);
  check_cuda("batched", st, bo, odb_batched_impl_list(buf, sizeof buf));
  tap_ok(odb_batched_impl_find("tpu", &bo) == ODB_ERR_NAME && !bo &&
         strstr(odb_last_error(), "backend 'tpu' is unknown (registered: "
                "cpu"),
         "batched: unknown backend names the registered: %s",
         odb_last_error());

  /* sparse and Krylov */
  tap_ok(lists(odb_sparse_impl_list(buf, sizeof buf), "cpu"),
         "sparse lists cpu: %s", buf);
  tap_ok(odb_sparse_impl_find("cpu", &so) == ODB_OK &&
         so == &odb_sparse_cpu_ops && so->krylov_solve && !so->upload,
         "sparse finds its cpu table (the Krylov reference, no device "
         "matrices)");
  st = odb_sparse_impl_find("cuda", &so);
  check_cuda("sparse", st, so, odb_sparse_impl_list(buf, sizeof buf));

  /* tall & skinny */
  tap_ok(lists(odb_tsm_impl_list(buf, sizeof buf), "cpu"),
         "tsm lists cpu: %s", buf);
  tap_ok(odb_tsm_impl_find("cpu", &to) == ODB_OK && to == &odb_tsm_cpu_ops &&
         odb_tsm_impl_get("cpu") == to && !to->peer_time,
         "tsm finds its cpu table");
  st = odb_tsm_impl_find("cuda", &to);
  check_cuda("tsm", st, to, odb_tsm_impl_list(buf, sizeof buf));

  /* the GPU barrier bench has no CPU version */
  odb_barrier_impl_list(buf, sizeof buf);
  tap_ok(!lists(buf, "cpu"), "barrier has no cpu table: '%s'", buf);
  st = odb_barrier_impl_find("cuda", &ro);
  check_cuda("barrier", st, ro, odb_barrier_impl_list(buf, sizeof buf));

  /* the helper itself: replace, full, list */
  {
    static const int a = 1, b = 2;
    odb_registry r = { "test", 0, { NULL }, { NULL } };
    const void *p;
    tap_ok(odb_registry_add(&r, "x", &a) == ODB_OK &&
           odb_registry_add(&r, "x", &b) == ODB_OK && r.n == 1 &&
           odb_registry_get(&r, "x") == &b,
           "a second registration under a name replaces the first");
    tap_ok(odb_registry_add(&r, "y", &a) == ODB_OK &&
           odb_registry_add(&r, "z", &a) == ODB_OK &&
           odb_registry_add(&r, "w", &a) == ODB_OK &&
           odb_registry_add(&r, "v", &a) == ODB_ERR_ARG && r.n == 4,
           "a full registry refuses another name");
    tap_ok(strcmp(odb_registry_list(&r, buf, sizeof buf), "x, y, z, w") == 0,
           "names listed in order: %s", buf);
    tap_ok(odb_registry_find(&r, NULL, &p) == ODB_ERR_NAME && !p,
           "no name is refused: %s", odb_last_error());
  }
  odb_ctx_destroy(ctx);
  return tap_done();
}
