/* odb_registry.c - see odb_registry.h. */
#include "odb_registry.h"

#include <stdio.h>
#include <string.h>

odb_status odb_registry_add(odb_registry *r, const char *name,
                            const void *ops) {
  for (int i = 0; i < r->n; ++i)
    if (strcmp(r->names[i], name) == 0) {
      r->ops[i] = ops;
      return ODB_OK;
    }
  if (r->n >= ODB_REGISTRY_MAX)
    return ODB_FAIL(ODB_ERR_ARG, "%s: no room for backend '%s'", r->family,
                    name);
  r->names[r->n] = name;
  r->ops[r->n] = ops;
  r->n++;
  return ODB_OK;
}

const void *odb_registry_get(const odb_registry *r, const char *name) {
  for (int i = 0; name && i < r->n; ++i)
    if (strcmp(r->names[i], name) == 0) return r->ops[i];
  return NULL;
}

odb_status odb_registry_find(const odb_registry *r, const char *name,
                             const void **out) {
  char known[64];
  *out = odb_registry_get(r, name);
  if (*out) return ODB_OK;
  if (name && strcmp(name, "cuda") == 0)
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "backend 'cuda': this build has no "
                    "CUDA (configure with -Dcuda=enabled)");
  return ODB_FAIL(ODB_ERR_NAME, "backend '%s' is unknown (registered: %s)",
                  name ? name : "(null)",
                  odb_registry_list(r, known, sizeof known));
}

const char *odb_registry_list(const odb_registry *r, char *buf, size_t len) {
  size_t at = 0;
  if (len) buf[0] = '\0';
  for (int i = 0; i < r->n && at < len; ++i) {
    int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", r->names[i]);
    if (w < 0) break;
    at += (size_t)w;
  }
  return buf;
}
