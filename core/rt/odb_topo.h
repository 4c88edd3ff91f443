/* odb_topo.h - the machine as hwloc sees it: cores, caches, NUMA nodes. */
#ifndef ODB_TOPO_H
#define ODB_TOPO_H

#include <stddef.h>
#include "odb_status.h"

#define ODB_TOPO_MAX_CACHES 8

typedef struct odb_cache_level {
  int level;        /* 1, 2, 3, ... (data or unified caches only) */
  size_t size;      /* bytes of one instance */
  int line;         /* line size in bytes */
  int count;        /* instances in the machine */
  int sharing;      /* cores sharing one instance */
} odb_cache_level;

typedef struct odb_topo {
  char cpu_model[128];
  int packages, cores, pus, numa_nodes;
  int ncaches;
  odb_cache_level caches[ODB_TOPO_MAX_CACHES];  /* sorted by level */
  void *hwloc;      /* hwloc_topology_t, owned; NULL when built by hand */
} odb_topo;

/* Loads the topology of this machine. */
odb_status odb_topo_load(odb_topo *t);
/* Loads an hwloc synthetic description (for tests), e.g.
   "pack:1 l3:1(size=32MiB) l2:4(size=1MiB) l1d:1(size=48KiB) core:1 pu:1". */
odb_status odb_topo_load_synthetic(odb_topo *t, const char *desc);
void odb_topo_free(odb_topo *t);
/* Size in bytes of the largest (last-level) cache instance; 0 if none. */
size_t odb_topo_llc_bytes(const odb_topo *t);
/* Total bytes of the last level summed over instances; 0 if none. */
size_t odb_topo_llc_total(const odb_topo *t);
/* Bytes of the machine's physical memory (0 when the system does not say):
   the limit above which a size a user asks for is refused up front. */
double odb_topo_memory_bytes(void);
/* ODB_OK when bytes fit in the machine's memory (or it is unknown); else
   ODB_ERR_NOMEM "<what> would need B bytes, more than this machine's
   memory (M bytes)", before anything is allocated or computed. */
odb_status odb_topo_check_memory(double bytes, const char *what);

#endif
