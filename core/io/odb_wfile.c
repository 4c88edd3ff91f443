/* odb_wfile.c - whole-or-nothing file writes (see odb_wfile.h).
** Assumes POSIX rename(2): atomic within one file system, which holds
** because the temporary file is made next to its target. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "odb_shown.h"
#include "odb_wfile.h"

/* Frees the names; the stream is the caller's. */
static void release(odb_wfile *w)
{
  free(w->path); free(w->tmp);
  w->path = w->tmp = NULL;
  w->f = NULL;
}

odb_status odb_wfile_open(odb_wfile *w, const char *path)
{
  size_t n = strlen(path) + 32;
  memset(w, 0, sizeof *w);
  odb_shown(path, w->shown, sizeof w->shown);
  if (!*path) return ODB_FAIL(ODB_ERR_ARG, "file name is empty");
  w->path = strdup(path);
  w->tmp = malloc(n);
  if (!w->path || !w->tmp) { release(w); return ODB_FAIL(ODB_ERR_NOMEM, "%s: file name", w->shown); }
  snprintf(w->tmp, n, "%s.tmp.%ld", path, (long)getpid());
  if (!(w->f = fopen(w->tmp, "wb"))) {
    int e = errno;
    release(w);
    return ODB_FAIL(ODB_ERR_IO, "%s: cannot create the file: %s", w->shown, strerror(e));
  }
  return ODB_OK;
}

odb_status odb_wfile_commit(odb_wfile *w)
{
  const char *step = NULL;
  int e = 0;
  if (ferror(w->f)) { step = "writing"; e = EIO; }
  else if (fflush(w->f)) { step = "writing"; e = errno; }
  else if (fsync(fileno(w->f))) { step = "syncing"; e = errno; }
  if (fclose(w->f) && !step) { step = "closing"; e = errno; }
  w->f = NULL;
  if (!step && rename(w->tmp, w->path)) { step = "renaming into place"; e = errno; }
  if (step) {
    unlink(w->tmp);
    release(w);
    return ODB_FAIL(ODB_ERR_IO, "%s: %s failed: %s (nothing written)", w->shown, step, strerror(e));
  }
  release(w);
  return ODB_OK;
}

void odb_wfile_abort(odb_wfile *w)
{
  if (w->f) fclose(w->f);
  if (w->tmp) unlink(w->tmp);
  release(w);
}
