/* odb_ode_floor.c - the fewest bytes of a solve (odb_ode_floor.h). */
#include "odb_ode_floor.h"

/* See the header. */
void odb_solve_min_bytes(long n, const odb_solve_stats *st, double *r,
                         double *w, double *touched) {
  double v = 8.0 * (double)n;
  *r = v * (double)st->steps;
  *w = v * (double)st->accepted;
  if (touched) *touched = 2 * v;
}
