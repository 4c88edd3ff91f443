/* odb_cachedir.h - where odebench keeps what it caches between runs: the
   bandwidth figures, the tuning database, compiled GPU kernels. */
#ifndef ODB_CACHEDIR_H
#define ODB_CACHEDIR_H

#include <stddef.h>

#include "odb_status.h"

/*
** Writes to out the path of sub inside the cache directory, which is
** $XDG_CACHE_HOME/odebench when XDG_CACHE_HOME is an absolute path (the
** XDG Base Directory rule: a relative value is ignored), else
** $HOME/.cache/odebench. sub may be "" for the directory itself. There
** is deliberately no fallback to a shared folder such as /tmp: another
** user could plant files there that odebench would trust (a tuning
** database, a compiled kernel). Fails (ODB_ERR_IO) when neither variable
** is usable or the path does not fit in cap. Creates nothing.
*/
odb_status odb_cache_path(const char *sub, char *out, size_t cap);

/* As odb_cache_path, then creates the directory out names (mkdir -p). */
odb_status odb_cache_dir(const char *sub, char *out, size_t cap);

#endif
