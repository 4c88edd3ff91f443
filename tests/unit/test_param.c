/* test_param.c - parameter declarations: defaults, ranges, names, enums. */
#include "odebench.h"
#include "tap.h"

#include <string.h>

static const odb_param_decl decls[] = {
  { "N", ODB_PARAM_INT, 128, 2, 1000, NULL, "size" },
  { "alpha", ODB_PARAM_REAL, 0.5, 0, 1, NULL, "constant" },
  { "init", ODB_PARAM_ENUM, 0, 0, 1, "thesis|hnw", "initial values" },
};

/* Resolves one given value and returns the status. */
static odb_status one(const char *name, double num, const char *str,
                      double *out) {
  odb_param_value v = { name, num, str };
  return odb_param_resolve("problem 'x'", decls, 3, &v, 1, out);
}

int main(void) {
  double out[3];
  tap_ok(odb_param_resolve("p", decls, 3, NULL, 0, out) == ODB_OK &&
         out[0] == 128 && out[1] == 0.5 && out[2] == 0, "defaults");
  tap_ok(one("N", 64, NULL, out) == ODB_OK && out[0] == 64, "given int");
  tap_ok(one("init", 0, "hnw", out) == ODB_OK && out[2] == 1, "enum choice");
  tap_ok(one("N", 0, NULL, out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "'N' must be in [2, 1000], got 0"),
         "zero size refused: %s", odb_last_error());
  tap_ok(one("N", -3, NULL, out) == ODB_ERR_ARG, "negative size refused");
  tap_ok(one("N", 2.5, NULL, out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "integer"), "non-integer refused: %s",
         odb_last_error());
  tap_ok(one("N", 0, "abc", out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "must be a number"), "string for a number: %s",
         odb_last_error());
  tap_ok(one("M", 3, NULL, out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "no parameter 'M' (valid: N, alpha, init)"),
         "unknown name lists valid ones: %s", odb_last_error());
  tap_ok(one("init", 0, "foo", out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "thesis|hnw"), "unknown choice: %s",
         odb_last_error());
  return tap_done();
}
