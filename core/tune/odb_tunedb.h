/* odb_tunedb.h - the persistent tuning database (SQLite). */
#ifndef ODB_TUNEDB_H
#define ODB_TUNEDB_H

#include <stdio.h>
#include "odb_ctx.h"
#include "odb_tune_types.h"

typedef struct odb_tunedb odb_tunedb;

/*
** One SQLite file holds tuning targets and their evaluations. A target row
** is keyed by the machine fingerprint, the odebench version, the code hash
** and the odb_tune_key fields; an evaluation row by its target and the
** configuration text "k=v k2=v2". Every evaluation is committed on its own
** (write-ahead log), so a process killed at any point loses at most the
** evaluation it was running. Rows of other odebench versions are kept but
** never reused (the version is part of the key); `prune` removes them.
** A file that is not an odebench tuning database, is corrupt, or is write
** protected is refused with a message and never written to.
*/

/* The machine a timing belongs to. */
typedef struct odb_machine_id {
  char hash[17];         /* 16 hex digits of the SHA-256 of desc */
  char desc[512];        /* "cpu=...; cores=4; caches=L1:48KiB/1 ...; gpu=..." */
} odb_machine_id;

/*
** CPU model, core count and cache levels (size and sharing) from the
** context's topology; with a CUDA backend also the GPU name, SM count and
** driver version.
*/
void odb_machine_fingerprint(odb_ctx *ctx, odb_machine_id *out);

/*
** SHA-256 (64 hex digits) of the file holding this engine's code (the
** libodebench shared object, found with dladdr), computed once; any
** rebuild of the engine changes it. "unknown-<revision>" when the file
** cannot be read.
*/
const char *odb_engine_code_hash(void);

enum { ODB_TUNEDB_READONLY = 1 };

/* $XDG_CACHE_HOME/odebench/tune.db, else $HOME/.cache/odebench/tune.db. */
odb_status odb_tunedb_default_path(char *buf, size_t len);

/*
** Opens (creating file and parent directories unless read-only) a tuning
** database. Fails with ODB_ERR_IO and a message naming the path when the
** file is corrupt or not a database, holds tables of something else, is
** write protected (mode bits or access(2); also refused for root) while
** flags lacks ODB_TUNEDB_READONLY, or its directory cannot be written.
*/
odb_status odb_tunedb_open(const char *path, int flags, odb_tunedb **out);
void odb_tunedb_close(odb_tunedb *db);
const char *odb_tunedb_path(const odb_tunedb *db);
/*
** Where warnings about rows ignored on read go: ctx's log (level warn), or
** stderr when ctx is NULL (the default).
*/
void odb_tunedb_set_log(odb_tunedb *db, odb_ctx *ctx);

/*
** Id of the target row for (machine, key, version); creates it when create
** is set (committed at once), else *id = 0 when absent.
*/
odb_status odb_tunedb_target(odb_tunedb *db, const odb_machine_id *m,
                             const odb_tune_key *k, const char *version,
                             int create, long long *id);
/* Stores (replaces) one evaluation of a target, committed on return.
   Skipped evaluations are not stored (ODB_ERR_ARG). */
odb_status odb_tunedb_put(odb_tunedb *db, long long target,
                          const char *config, const odb_tune_eval *ev);
/*
** Calls fn for every evaluation of a target, in the order they were
** stored; ev->cfg is unset (n = 0), config holds its text and ev->msg the
** stored message with control characters escaped. fn returns nonzero to
** stop early. A row that odb_tunedb_put could not have written (a status
** it does not store; for an ok one a median that is not a finite number
** > 0, timings that are not finite numbers >= 0, no repetition; a number
** column holding text, a negative or an infinite value) is skipped and
** reported once per row and handle (see odb_tunedb_set_log), naming the
** file, the target and the configuration: the tuner never trusts it.
*/
typedef int (*odb_tunedb_each_fn)(void *ud, const char *config,
                                  const odb_tune_eval *ev);
odb_status odb_tunedb_each(odb_tunedb *db, long long target,
                           odb_tunedb_each_fn fn, void *ud);
/* Number of evaluations stored for a target (all targets when 0). */
odb_status odb_tunedb_count(odb_tunedb *db, long long target, long *n);

/* {====== the odebench tunedb command */

/* One line per target: id, version (marked when not current), machine
   (marked when it is this_machine, a fingerprint hash; may be NULL), key,
   evaluations, best configuration (among the rows odb_tunedb_each
   trusts). Text from the file is printed with control characters
   escaped. */
odb_status odb_tunedb_list(odb_tunedb *db, const char *this_machine,
                           FILE *out);
/* The target (by id) and its evaluations, fastest first, ties marked;
   rows that odb_tunedb_each skips are listed as ignored, with the reason.
   Text from the file is printed with control characters escaped. */
odb_status odb_tunedb_show(odb_tunedb *db, long long target, FILE *out);
/* Every evaluation with its target's fields (one target when id > 0), as
   one JSON document or as CSV with a header line. */
odb_status odb_tunedb_export(odb_tunedb *db, long long target, int csv,
                             FILE *out);
/*
** Deletes targets last updated more than older_days ago (older_days >= 0)
** and/or those of a version other than the current one, with their
** evaluations, in one transaction. Counts what went.
*/
odb_status odb_tunedb_prune(odb_tunedb *db, double older_days,
                            int version_mismatch, long *targets,
                            long *evals);

/* }====== */

#endif
