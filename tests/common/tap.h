/* tap.h - a tiny TAP producer for the C unit tests. */
#ifndef ODB_TAP_H
#define ODB_TAP_H

#include <stdio.h>
#include <stdarg.h>

static int tap_n = 0, tap_failed = 0;

/* Prints a formatted text on one line: a newline in it would start a line
   that is not TAP, so newlines show as \n. */
static inline void tap_vprint_line(const char *fmt, va_list ap) {
  char buf[1024];
  vsnprintf(buf, sizeof buf, fmt, ap);
  for (const char *c = buf; *c; ++c)
    if (*c == '\n') fputs("\\n", stdout);
    else putchar(*c);
}

/* Records one test point: ok or not ok, with a printf-style description. */
static inline int tap_ok(int cond, const char *fmt, ...) {
  va_list ap;
  ++tap_n;
  if (!cond) ++tap_failed;
  printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
  va_start(ap, fmt);
  tap_vprint_line(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  return cond;
}

/* A diagnostic line (shown by TAP consumers, not a test point). */
static inline void tap_diag(const char *fmt, ...) {
  va_list ap;
  printf("# ");
  va_start(ap, fmt);
  tap_vprint_line(fmt, ap);
  va_end(ap);
  printf("\n");
}

/* Prints the plan and returns the process exit status. */
static inline int tap_done(void) {
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#define TAP_SKIP_ALL(reason) do { printf("1..0 # SKIP %s\n", reason); return 77; } while (0)

#endif
