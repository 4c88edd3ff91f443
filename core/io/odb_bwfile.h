/* odb_bwfile.h - the bandwidth cache files (odb_bandwidth.c's): a reader
** for the flat JSON objects they hold and whole-or-nothing writes. */
#ifndef ODB_BWFILE_H
#define ODB_BWFILE_H

#include <stdio.h>

/* Called for each member of a flat object: s for a string, else v. */
typedef void (*odb_bwfile_member)(void *ud, const char *key, const char *s,
                                  double v);

/* Parses {"key": string-or-number, ...}; 1 when the text is such an
   object (keys up to 63 bytes, strings up to 255). */
int odb_bwfile_parse(const char *p, odb_bwfile_member fn, void *ud);
/* v as a count: -1 outside 0..2^40 or not an integer. */
long long odb_bwfile_count(double v);
/* The whole (small, under 16 KiB) file at path; NULL when absent. Free it. */
char *odb_bwfile_slurp(const char *path);
/* dir: the cache directory (created), path: name in it; 0 when there is
   none (a cache that cannot be used is no error). cap bytes each. */
int odb_bwfile_path(const char *name, char *dir, char *path, size_t cap);
/* Writes path through a temporary file in dir, fsync and rename(); 1 on
   success, 0 on failure (nothing left behind). */
int odb_bwfile_store(const char *dir, const char *path,
                     void (*write)(FILE *, const void *), const void *ud);

/*
** The measuring lock of the cache (dir/name, an flock): processes that ask
** for a figure at once, such as the ranks of mpirun on one host, measure
** one at a time, so that none measures a machine the others keep busy,
** and those that waited find the first one's figure in the cache. Returns
** the lock's descriptor, or -1 after wait_s seconds or where the file
** cannot be made (the caller then measures without it).
*/
int odb_bwfile_lock(const char *dir, const char *name, double wait_s);
void odb_bwfile_unlock(int fd);

#endif
