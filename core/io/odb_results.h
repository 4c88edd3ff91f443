/* odb_results.h - the records of a run and their atomic JSON/CSV files. */
#ifndef ODB_RESULTS_H
#define ODB_RESULTS_H

#include "odb_status.h"

/* One field: a name and a number or a string (str != NULL). */
typedef struct odb_field {
  char *key;
  char *str;     /* owned copy, or NULL for a number */
  double num;
  int is_int;    /* print the number as an integer */
} odb_field;

/* An ordered list of fields (the context block, or one result row). */
typedef struct odb_record {
  odb_field *fields;
  int n, cap;
} odb_record;

typedef struct odb_results {
  odb_record context;
  odb_record *rows;
  int nrows, caprows;
} odb_results;

void odb_results_init(odb_results *r);
void odb_results_free(odb_results *r);
/* Sets (or replaces) a field of a record; keys may contain '.' for nesting
   in JSON ("cpu.model" becomes {"cpu": {"model": ...}} in the context). */
odb_status odb_record_set_str(odb_record *rec, const char *key,
                              const char *value);
odb_status odb_record_set_num(odb_record *rec, const char *key, double v);
odb_status odb_record_set_int(odb_record *rec, const char *key, long long v);
const odb_field *odb_record_get(const odb_record *rec, const char *key);
/* Appends an empty row and returns it (NULL when out of memory). */
odb_record *odb_results_add_row(odb_results *r);

/*
** Writes dir/results.json ({"context": {...}, "results": [...]}) and
** dir/results.csv (one column per key seen in any row, in first-seen
** order), each through a temporary file in dir and rename(), so a reader
** never sees a half-written file. Creates dir (and parents) if needed.
*/
odb_status odb_results_write(const odb_results *r, const char *dir);

/* mkdir -p; fails with ODB_ERR_IO and a message naming the path. */
odb_status odb_mkdirs(const char *path);
/* Checks that dir can be created and written (creates it, writes and
   removes a probe file). */
odb_status odb_check_writable_dir(const char *dir);

#endif
