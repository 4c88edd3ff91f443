/* odb_registry.h - implementations of a family registered by backend name
   ("cpu", "cuda"): each family (batched dense, sparse, tall & skinny, the
   GPU barrier bench) keeps one registry of its ops tables. The CPU tables
   are built in; a build with CUDA adds the "cuda" ones from
   odb_kernels_register. A backend with no entry is refused here, in one
   message. */
#ifndef ODB_REGISTRY_H
#define ODB_REGISTRY_H

#include <stddef.h>
#include "odb_status.h"

/* Backends one family may hold. */
#define ODB_REGISTRY_MAX 4

typedef struct odb_registry {
  const char *family;                  /* for messages: "batched", ... */
  int n;
  const char *names[ODB_REGISTRY_MAX];
  const void *ops[ODB_REGISTRY_MAX];
} odb_registry;

/* Registers ops under name (a second call with the same name replaces
   it). ODB_ERR_ARG when the registry is full. */
odb_status odb_registry_add(odb_registry *r, const char *name,
                            const void *ops);
/* The ops registered under name, or NULL. */
const void *odb_registry_get(const odb_registry *r, const char *name);
/*
** The ops registered under name into *out. Otherwise ODB_ERR_NO_DEVICE
** "backend 'cuda': this build has no CUDA (configure with -Dcuda=enabled)"
** for "cuda", and ODB_ERR_NAME "backend 'x' is unknown (registered: ...)"
** for any other name.
*/
odb_status odb_registry_find(const odb_registry *r, const char *name,
                             const void **out);
/* The registered names, comma separated ("cpu, cuda"), into buf. */
const char *odb_registry_list(const odb_registry *r, char *buf, size_t len);

#endif
