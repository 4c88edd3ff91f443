/* odb_barrier_impl.c - the registry of odb_barrier_impl.h (empty until a
   build with CUDA registers its table). */
#include "odb_barrier_impl.h"

#include "odb_registry.h"

static odb_registry registry = { "barrier", 0, { NULL }, { NULL } };

odb_status odb_barrier_impl_register(const odb_barrier_ops *ops) {
  return odb_registry_add(&registry, ops->backend, ops);
}

odb_status odb_barrier_impl_find(const char *name,
                                 const odb_barrier_ops **out) {
  const void *p;
  odb_status st = odb_registry_find(&registry, name, &p);
  *out = p;
  return st;
}

const char *odb_barrier_impl_list(char *buf, size_t len) {
  return odb_registry_list(&registry, buf, len);
}
