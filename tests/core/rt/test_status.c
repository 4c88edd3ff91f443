/* test_status.c - status codes, messages and the per-thread error detail. */
#include "odebench.h"
#include "tap.h"

#include <string.h>

static odb_status fails(void) {
  return ODB_FAIL(ODB_ERR_ARG, "N must be positive, got %d", -3);
}

static odb_status propagates(void) {
  ODB_TRY(fails());
  return ODB_OK;
}

int main(void) {
  tap_ok(strcmp(odb_status_str(ODB_OK), "success") == 0, "OK message");
  tap_ok(strcmp(odb_status_name(ODB_ERR_NAME), "ODB_ERR_NAME") == 0,
         "names come from the same list");
  for (int st = 0; st < ODB_STATUS_COUNT; ++st)
    if (!tap_ok(odb_status_str((odb_status)st)[0] != '\0', "code %d has a "
                "message", st)) break;
  tap_ok(strcmp(odb_status_str((odb_status)999), "unknown status") == 0,
         "out-of-range code");
  odb_clear_error();
  tap_ok(odb_last_error()[0] == '\0', "cleared detail is empty");
  tap_ok(propagates() == ODB_ERR_ARG, "ODB_TRY propagates the status");
  tap_ok(strcmp(odb_last_error(), "N must be positive, got -3") == 0,
         "detail message recorded: %s", odb_last_error());
  tap_ok(strstr(odb_last_error_where(), "test_status.c:") != NULL,
         "file and line recorded: %s", odb_last_error_where());
  return tap_done();
}
