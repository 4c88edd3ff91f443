/* odb_clock.c - monotonic seconds (odb_clock.h). */
#include "odb_clock.h"

#include <time.h>

double odb_clock_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
