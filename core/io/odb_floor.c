/* odb_floor.c - floors from bandwidth figures (the model is in
   odb_floor.h). */
#include "odb_floor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* See the header. */
int odb_floor_bw_gpu(double read, double copy, double l2_bytes,
                     odb_floor_bw *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->where, sizeof out->where, "gpu");
  if (!(read > 0)) return 0;
  out->read = read;
  out->copy = copy > 0 ? copy : 0;
  out->cache_bytes = l2_bytes > 0 ? l2_bytes : 0;
  return 1;
}

/* See the header. */
double odb_floor_seconds(const odb_floor_bw *bw, double rbytes,
                         double wbytes) {
  double best;
  if (!bw || !(bw->read > 0)) return 0;
  rbytes = rbytes > 0 ? rbytes : 0;
  if (!(wbytes > 0)) return rbytes / bw->read;
  best = bw->copy > bw->read ? bw->copy : bw->read;
  return (rbytes + wbytes) / best;
}

/* See the header. */
const char *odb_floor_name(const odb_floor_bw *bw, double rbytes,
                           double wbytes, char *buf, size_t nbuf) {
  const char *fig = wbytes > 0 ? "read+copy" : "read";
  (void)rbytes;
  if (bw->threads > 0)
    snprintf(buf, nbuf, "%s %s %dt", bw->where, fig, bw->threads);
  else
    snprintf(buf, nbuf, "%s %s", bw->where, fig);
  return buf;
}

/* See the header. */
const char *odb_floor_note(const odb_floor_bw *bw, double pct,
                           double touched) {
  if (!(pct > 100)) return NULL;
  if (bw && bw->cache_bytes > 0 && touched >= 0 && touched <= bw->cache_bytes)
    return ODB_FLOOR_IN_CACHE;
  return ODB_FLOOR_TO_FIX;
}
