/* odb_energy.h - the CPU's energy counters (Intel RAPL through the
   powercap files), read around a timed run for the energy objectives of
   the tuner (docs/tuning.md). */
#ifndef ODB_ENERGY_H
#define ODB_ENERGY_H

#include <stddef.h>

#include "odb_status.h"

#define ODB_ENERGY_MAX_ZONES 16

/*
** The package zones /sys/class/powercap/intel-rapl:<k>/energy_uj (one per
** socket; the sub-zones intel-rapl:<k>:<j> are parts of a package and are
** not added again), each with its max_energy_range_uj for the wrap-around.
*/
typedef struct odb_energy {
  int nzones;
  char path[ODB_ENERGY_MAX_ZONES][512];
  double range_uj[ODB_ENERGY_MAX_ZONES];
  double last_uj[ODB_ENERGY_MAX_ZONES];
} odb_energy;

/*
** Finds the package zones under root ("/sys/class/powercap"; NULL: that)
** and reads each once. ODB_ERR_UNSUPPORTED, the message naming root and
** why (none present, not readable: RAPL needs root on many kernels, and
** virtual machines have none), when no zone can be read.
*/
odb_status odb_energy_open(odb_energy *e, const char *root);
/* Joules used by all packages since the last call (or since open), each
   counter's wrap-around past its range added back. */
odb_status odb_energy_joules(odb_energy *e, double *joules);

#endif
