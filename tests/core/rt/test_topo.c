/* test_topo.c - topology from a synthetic description and from this host. */
#include <string.h>

#include "odb_topo.h"
#include "tap.h"

/* Finds the cache entry of a level, or NULL. */
static const odb_cache_level *level(const odb_topo *t, int lv) {
  for (int i = 0; i < t->ncaches; ++i)
    if (t->caches[i].level == lv) return &t->caches[i];
  return NULL;
}

/* One package of four cores with two PUs each and three cache levels. */
static void test_synthetic(void) {
  odb_topo t;
  const odb_cache_level *l1, *l2, *l3;
  const char *desc =
    "pack:1 l3:1(size=32MiB) l2:4(size=1MiB) l1d:1(size=48KiB) core:1 pu:2";
  odb_status st;
  odb_clear_error();
  st = odb_topo_load_synthetic(&t, desc);
  if (!tap_ok(st == ODB_OK, "synthetic topology loads (%s)",
              odb_last_error()))
    return;
  tap_ok(t.packages == 1, "packages = 1 (got %d)", t.packages);
  tap_ok(t.cores == 4, "cores = 4 (got %d)", t.cores);
  tap_ok(t.pus == 8, "pus = 8 (got %d)", t.pus);
  tap_ok(t.numa_nodes >= 1, "at least one NUMA node (got %d)", t.numa_nodes);
  tap_ok(t.ncaches == 3, "three data cache levels (got %d)", t.ncaches);
  l1 = level(&t, 1);
  l2 = level(&t, 2);
  l3 = level(&t, 3);
  tap_ok(l3 && l3->size == 33554432 && l3->count == 1 && l3->sharing == 4,
         "L3: 32 MiB, one instance shared by 4 cores");
  tap_ok(l2 && l2->size == 1048576 && l2->count == 4 && l2->sharing == 1,
         "L2: 1 MiB, four instances, one core each");
  tap_ok(l1 && l1->size == 49152 && l1->count == 4 && l1->sharing == 1,
         "L1d: 48 KiB per core");
  tap_ok(t.ncaches == 3 && t.caches[0].level == 1 &&
         t.caches[1].level == 2 && t.caches[2].level == 3,
         "caches sorted by level");
  tap_ok(l1 && l1->line > 0, "line size is positive (%d)", l1 ? l1->line : 0);
  tap_ok(odb_topo_llc_bytes(&t) == 33554432, "llc_bytes = 32 MiB");
  tap_ok(odb_topo_llc_total(&t) == 33554432, "llc_total = 32 MiB");
  tap_ok(t.hwloc != NULL && t.cpu_model[0] != '\0',
         "hwloc handle kept, cpu model set ('%s')", t.cpu_model);
  odb_topo_free(&t);
  tap_ok(t.hwloc == NULL && t.cores == 0, "free clears the topology");

  st = odb_topo_load_synthetic(&t, "pack:2 l3:1(size=8MiB) core:3 pu:1");
  tap_ok(st == ODB_OK && t.packages == 2 && t.cores == 6 &&
         odb_topo_llc_total(&t) == 2 * 8388608,
         "two packages: llc_total sums the instances");
  odb_topo_free(&t);

  st = odb_topo_load_synthetic(&t, "this is not a topology");
  tap_ok(st == ODB_ERR_ARG && t.hwloc == NULL &&
         strstr(odb_last_error(), "this is not a topology"),
         "a bad description fails with ODB_ERR_ARG naming it");
  odb_topo_free(&t);
}

/* Whatever this host is, it has a core and a cache. */
static void test_host(void) {
  odb_topo t;
  odb_status st;
  odb_clear_error();
  st = odb_topo_load(&t);
  if (!tap_ok(st == ODB_OK, "this machine's topology loads (%s)",
              odb_last_error()))
    return;
  tap_diag("cpu '%s': %d packages, %d cores, %d PUs, %d NUMA nodes",
           t.cpu_model, t.packages, t.cores, t.pus, t.numa_nodes);
  for (int i = 0; i < t.ncaches; ++i)
    tap_diag("L%d: %zu bytes, line %d, %d instances, %d cores each",
             t.caches[i].level, t.caches[i].size, t.caches[i].line,
             t.caches[i].count, t.caches[i].sharing);
  tap_ok(t.cores >= 1 && t.pus >= t.cores, "cores >= 1 and pus >= cores");
  tap_ok(t.ncaches >= 1, "at least one cache level");
  tap_ok(t.cpu_model[0] != '\0', "cpu model is known or 'unknown'");
  tap_ok(odb_topo_llc_bytes(&t) > 0, "last-level cache size > 0");
  odb_topo_free(&t);
  odb_topo_free(NULL);
}

int main(void) {
  test_synthetic();
  test_host();
  return tap_done();
}
