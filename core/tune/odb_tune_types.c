/* odb_tune_types.c - the names of a tuning evaluation's statuses, as the
   tuning database stores them and events print them. */
#include "odb_tune_types.h"

#include <string.h>

static const char *const status_names[] = {"ok", "rejected", "failed",
                                           "skipped"};

const char *odb_tune_status_name(int status) {
  return status >= 0 && status <= ODB_TUNE_SKIPPED ? status_names[status]
                                                    : "unknown";
}

int odb_tune_status_parse(const char *name) {
  for (int i = 0; name && i <= ODB_TUNE_SKIPPED; ++i)
    if (strcmp(name, status_names[i]) == 0) return i;
  return -1;
}

