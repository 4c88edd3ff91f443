/* odb_wfile.h - files written whole or not at all: the text goes to
** <name>.tmp.<pid> in the same directory, is flushed and fsync'ed, and
** only then renamed over <name>. A failure at any step removes the
** temporary file, so a reader never sees half a file and an existing
** <name> is left as it was. */
#ifndef ODB_WFILE_H
#define ODB_WFILE_H

#include <stdio.h>
#include "odb_status.h"

typedef struct odb_wfile {
  FILE *f;               /* write here between open and commit */
  char *path, *tmp;      /* owned */
  char shown[160];       /* path escaped for messages (odb_shown) */
} odb_wfile;

/* Creates the temporary file (mode 0666 less the umask). ODB_ERR_IO with
** the path and the system's reason; nothing to clean up then. */
odb_status odb_wfile_open(odb_wfile *w, const char *path);
/* Checks the stream for write errors, flushes, fsyncs, closes and renames
** the temporary file to the path; on any failure removes it (ODB_ERR_IO
** naming the step). w is released either way. */
odb_status odb_wfile_commit(odb_wfile *w);
/* Closes and removes the temporary file; releases w. Safe after a failed
** open (a zeroed w). */
void odb_wfile_abort(odb_wfile *w);

#endif
