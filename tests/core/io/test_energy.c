/* test_energy.c - the RAPL energy counters (core/io/odb_energy.c) on a
   powercap tree written into a temporary directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb_energy.h"
#include "odb_status.h"
#include "tap.h"

static char root[64];

static void put(const char *zone, const char *file, const char *text) {
  char p[256];
  FILE *f;
  snprintf(p, sizeof p, "%s/%s", root, zone);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/%s/%s", root, zone, file);
  f = fopen(p, "w");
  if (f) { fputs(text, f); fclose(f); }
}

int main(void) {
  odb_energy e;
  double j = -1;
  snprintf(root, sizeof root, "/tmp/odb_energy_XXXXXX");
  if (!mkdtemp(root)) return 1;

  tap_ok(odb_energy_open(&e, root) == ODB_ERR_UNSUPPORTED &&
         strstr(odb_last_error(), "has no intel-rapl:<k> package zone"),
         "an empty powercap tree is refused: %s", odb_last_error());

  /* two packages and a sub-zone (a part of package 0: not added again) */
  put("intel-rapl:0", "energy_uj", "1000000\n");
  put("intel-rapl:0", "max_energy_range_uj", "262143328850\n");
  put("intel-rapl:1", "energy_uj", "262143000000\n");
  put("intel-rapl:1", "max_energy_range_uj", "262143328850\n");
  put("intel-rapl:0:0", "energy_uj", "5\n");
  put("intel-rapl:0:0", "max_energy_range_uj", "262143328850\n");
  tap_ok(odb_energy_open(&e, root) == ODB_OK && e.nzones == 2,
         "two package zones found (%d), the sub-zone left out", e.nzones);
  /* package 0 uses 2.5 J; package 1 wraps: 328850 uJ to the range, then
     171150 more from 0, 0.5 J in all */
  put("intel-rapl:0", "energy_uj", "3500000\n");
  put("intel-rapl:1", "energy_uj", "171150\n");
  tap_ok(odb_energy_joules(&e, &j) == ODB_OK && j > 2.999999 && j < 3.000001,
         "3 J over both packages, the wrap-around added back (%.9g)", j);
  tap_ok(odb_energy_joules(&e, &j) == ODB_OK && j == 0,
         "no change since the last read: 0 J (%.9g)", j);

  tap_ok(odb_energy_open(&e, "/nonexistent/powercap") == ODB_ERR_UNSUPPORTED
         && strstr(odb_last_error(), "no CPU energy counter: "
                   "/nonexistent/powercap: No such file or directory"),
         "a missing powercap directory is refused with the reason: %s",
         odb_last_error());
  {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0) tap_diag("could not remove %s", root);
  }
  return tap_done();
}
