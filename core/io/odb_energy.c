/* odb_energy.c - the CPU's energy counters (Intel RAPL, powercap). */
#include "odb_energy.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
** Assumes the powercap layout of Linux's intel_rapl driver: a directory
** intel-rapl:<k> per package holding energy_uj (microjoules since some
** start, wrapping to 0 past max_energy_range_uj). AMD's RAPL driver uses
** the same names. Counters are read as whole files, one number each.
*/

static int read_number(const char *path, double *v) {
  FILE *f = fopen(path, "r");
  int ok;
  if (!f) return 0;
  ok = fscanf(f, "%lf", v) == 1 && *v >= 0;
  fclose(f);
  return ok;
}

/* A package zone: "intel-rapl:" then digits only. */
static int is_package(const char *name) {
  const char *p = name + strlen("intel-rapl:");
  if (strncmp(name, "intel-rapl:", strlen("intel-rapl:")) != 0 || !*p)
    return 0;
  for (; *p; ++p)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

odb_status odb_energy_open(odb_energy *e, const char *root) {
  DIR *d;
  struct dirent *de;
  int seen = 0, err = 0;
  if (!root) root = "/sys/class/powercap";
  memset(e, 0, sizeof *e);
  d = opendir(root);
  if (!d)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "no CPU energy counter: %s: %s "
                    "(no RAPL powercap interface; virtual machines have "
                    "none)", root, strerror(errno));
  while ((de = readdir(d)) != NULL && e->nzones < ODB_ENERGY_MAX_ZONES) {
    char f[600];
    int k = e->nzones, n1, n2;
    if (!is_package(de->d_name)) continue;
    seen++;
    n1 = snprintf(e->path[k], sizeof e->path[k], "%s/%s/energy_uj", root,
                  de->d_name);
    n2 = snprintf(f, sizeof f, "%s/%s/max_energy_range_uj", root,
                  de->d_name);
    if (n1 < 0 || n1 >= (int)sizeof e->path[k] || n2 < 0 ||
        n2 >= (int)sizeof f) {
      err = ENAMETOOLONG;
      continue;
    }
    if (!read_number(e->path[k], &e->last_uj[k]) ||
        !read_number(f, &e->range_uj[k])) {
      err = errno;
      continue;
    }
    e->nzones++;
  }
  closedir(d);
  if (e->nzones > 0) return ODB_OK;
  if (seen == 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "no CPU energy counter: %s has no "
                    "intel-rapl:<k> package zone", root);
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, "no CPU energy counter: %d package "
                  "zone(s) under %s, none readable (%s; RAPL's energy_uj "
                  "is readable by root only on many kernels)", seen, root,
                  strerror(err ? err : EACCES));
}

odb_status odb_energy_joules(odb_energy *e, double *joules) {
  double sum = 0;
  for (int k = 0; k < e->nzones; ++k) {
    double v, dv;
    if (!read_number(e->path[k], &v))
      return ODB_FAIL(ODB_ERR_IO, "energy counter %s: cannot be read",
                      e->path[k]);
    dv = v - e->last_uj[k];
    if (dv < 0) dv += e->range_uj[k];     /* wrapped past its range */
    e->last_uj[k] = v;
    sum += dv;
  }
  *joules = sum * 1e-6;
  return ODB_OK;
}
