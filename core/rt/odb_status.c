/* odb_status.c - messages of status codes and the per-thread error detail. */
#include "odb_status.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const status_msgs[] = {
#define ODB_STATUS_MSG(code, msg) msg,
  ODB_STATUS_LIST(ODB_STATUS_MSG)
#undef ODB_STATUS_MSG
};

static const char *const status_names[] = {
#define ODB_STATUS_NAME(code, msg) #code,
  ODB_STATUS_LIST(ODB_STATUS_NAME)
#undef ODB_STATUS_NAME
};

static _Thread_local char last_msg[512];
static _Thread_local char last_where[160];

/* Assumes st may be any int; out-of-range codes map to a fixed text. */
const char *odb_status_str(odb_status st) {
  if ((int)st < 0 || st >= ODB_STATUS_COUNT) return "unknown status";
  return status_msgs[st];
}

const char *odb_status_name(odb_status st) {
  if ((int)st < 0 || st >= ODB_STATUS_COUNT) return "ODB_STATUS_UNKNOWN";
  return status_names[st];
}

/* The detail is truncated to the buffer; a NULL fmt stores the plain message. */
odb_status odb_fail_at(odb_status st, const char *file, int line,
                       const char *fmt, ...) {
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
  } else {
    snprintf(last_msg, sizeof last_msg, "%s", odb_status_str(st));
  }
  snprintf(last_where, sizeof last_where, "%s:%d", file ? file : "?", line);
  return st;
}

const char *odb_last_error(void) { return last_msg; }
const char *odb_last_error_where(void) { return last_where; }

void odb_clear_error(void) {
  last_msg[0] = '\0';
  last_where[0] = '\0';
}
