/* odb_floor.h - the time a kernel needs at least to move its bytes (its
** floor), from the measured bandwidth figures of odb_bandwidth.h, and
** what a result above its floor says.
**
** The model, for the CPU and the GPU alike: a kernel that must read
** rbytes and write wbytes between memory and the cores needs at least
**
**     rbytes / read                          seconds when it only reads,
**     (rbytes + wbytes) / max(read, copy)    seconds when it writes too,
**
** with read the measured streaming read bandwidth and copy the measured
** copy figure (the bytes read plus the bytes written of one copy, over
** its time). An array that is only read counts once in rbytes; one only
** written counts once in wbytes; an array read and written (updated in
** place) counts in both. Each family's bytes are the fewest its operation
** can move (odb_sparse_floor.h, odb_dense_floor.h, odb_ode_floor.h), never
** the bytes one implementation happens to move.
**
** Why a lower bound: every byte counted must cross the memory interface at
** least once, and no stream was measured moving bytes faster than the
** faster of the two figures. A model that charges the writes at a write
** bandwidth derived from the copy (copy = 2 / (1/read + 1/write)) is not
** one: a kernel that reads more than it writes overlaps the two better
** than a copy does, and on an H200 batched LU and tall & skinny AC passed
** such a floor by 5-14%. The model assumes the data come from memory: a
** working set that fits the last-level cache (the CPU's LLC, the GPU's L2)
** can be served faster. A result above 100% of its floor then says "in
** cache"; above it with a working set larger than the cache, the bytes or
** the figure are wrong ("floor to fix").
*/
#ifndef ODB_FLOOR_H
#define ODB_FLOOR_H

#include <stddef.h>

/* The figures one floor is taken from: a GPU's from odb_floor_bw_gpu,
   the CPU's of a thread count from odb_bandwidth_floor_bw
   (odb_bandwidth.h). */
typedef struct odb_floor_bw {
  double read;          /* bytes/s of a streaming read */
  double copy;          /* bytes/s of a copy, read + written bytes */
  double cache_bytes;   /* the last-level cache the data could stay in
                           (CPU LLC, GPU L2); 0 when unknown */
  char where[16];       /* "cpu" or "gpu" */
  int threads;          /* the CPU figure's thread count; 0 for a GPU */
} odb_floor_bw;

/* Notes of a result above its floor (odb_floor_note). */
#define ODB_FLOOR_IN_CACHE "in cache"
#define ODB_FLOOR_TO_FIX "floor to fix"

/* The GPU figures (bytes/s) and its L2 size in bytes (0 unknown). 0 when
   read is not positive, else 1. */
int odb_floor_bw_gpu(double read, double copy, double l2_bytes,
                     odb_floor_bw *out);

/* Seconds to read rbytes and write wbytes at least (the model above); 0
   without figures. */
double odb_floor_seconds(const odb_floor_bw *bw, double rbytes,
                         double wbytes);
/* The figure used, for a results row: "cpu read 1t" (only reads),
   "cpu read+copy 4t" (writes too: the faster of the read and copy
   figures), "gpu read", "gpu read+copy". Into buf (at least 32 bytes). */
const char *odb_floor_name(const odb_floor_bw *bw, double rbytes,
                           double wbytes, char *buf, size_t nbuf);
/* NULL when pct <= 100 (or not a number); ODB_FLOOR_IN_CACHE when touched
   (the distinct bytes the operation touches) fits the cache of bw;
   ODB_FLOOR_TO_FIX otherwise. */
const char *odb_floor_note(const odb_floor_bw *bw, double pct,
                           double touched);

#endif
