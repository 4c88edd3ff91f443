/* odb_cachedir.c - the cache directory (odb_cachedir.h). */
#include "odb_cachedir.h"

#include <stdio.h>
#include <stdlib.h>

#include "odb_results.h"   /* odb_mkdirs */

odb_status odb_cache_path(const char *sub, char *out, size_t cap) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  const char *sep = sub && *sub ? "/" : "";
  int n;
  if (!sub) sub = "";
  if (xdg && xdg[0] == '/')
    n = snprintf(out, cap, "%s/odebench%s%s", xdg, sep, sub);
  else if (home && home[0] == '/')
    n = snprintf(out, cap, "%s/.cache/odebench%s%s", home, sep, sub);
  else
    return ODB_FAIL(ODB_ERR_IO, "no cache directory: neither XDG_CACHE_HOME "
                    "nor HOME is an absolute path");
  if (n < 0 || (size_t)n >= cap)
    return ODB_FAIL(ODB_ERR_IO, "cache path for '%s' is longer than %zu "
                    "bytes", sub, cap - 1);
  return ODB_OK;
}

odb_status odb_cache_dir(const char *sub, char *out, size_t cap) {
  ODB_TRY(odb_cache_path(sub, out, cap));
  return odb_mkdirs(out);
}
