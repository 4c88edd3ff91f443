/* odb_topo.c - cores, caches and NUMA nodes through hwloc 2.x. */
#include "odb_topo.h"

#include <pthread.h>
#include <unistd.h>

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

/* Copies at most cap-1 bytes of s into dst with leading/trailing blanks cut. */
static void copy_trimmed(char *dst, size_t cap, const char *s) {
  size_t n;
  while (*s == ' ' || *s == '\t') ++s;
  n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
    --n;
  if (n >= cap) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = '\0';
}

/* Reads "model name" from /proc/cpuinfo; leaves dst unchanged if absent. */
static void cpuinfo_model(char *dst, size_t cap) {
  char line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      copy_trimmed(dst, cap, colon + 1);
      break;
    }
  }
  fclose(f);
}

/* The "CPUModel" info of the first package, or NULL when hwloc has none. */
static const char *hwloc_model(hwloc_topology_t topo) {
  hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  return pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
}

/* Number of cores inside obj's cpuset, or PUs where hwloc knows no cores. */
static int cores_below(hwloc_topology_t topo, hwloc_obj_t obj) {
  int n;
  if (!obj->cpuset) return 1;
  n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, obj->cpuset,
                                             HWLOC_OBJ_CORE);
  if (n <= 0)
    n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, obj->cpuset,
                                               HWLOC_OBJ_PU);
  return n > 0 ? n : 1;
}

/*
** Adds one entry per data or unified cache level, in level order; the
** first instance of a level stands for all of them (hwloc machines are
** homogeneous per level in practice).
*/
static void collect_caches(hwloc_topology_t topo, odb_topo *t) {
  static const hwloc_obj_type_t types[] = {
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
    HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
  };
  t->ncaches = 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    int count = hwloc_get_nbobjs_by_type(topo, types[i]);
    hwloc_obj_t obj = count > 0 ? hwloc_get_obj_by_type(topo, types[i], 0)
                                : NULL;
    odb_cache_level *c;
    if (!obj || t->ncaches >= ODB_TOPO_MAX_CACHES) continue;
    if (obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
    c = &t->caches[t->ncaches++];
    c->level = (int)obj->attr->cache.depth;
    c->size = (size_t)obj->attr->cache.size;
    c->line = obj->attr->cache.linesize > 0 ? (int)obj->attr->cache.linesize
                                            : 64;  /* unknown: assume 64 */
    c->count = count;
    c->sharing = cores_below(topo, obj);
  }
}

/* Fills the counts of t from a loaded topology. */
static void summarize(hwloc_topology_t topo, odb_topo *t) {
  int n;
  t->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  t->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  t->cores = n > 0 ? n : t->pus;
  t->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  if (t->packages < 1) t->packages = 1;
  if (t->pus < 1) t->pus = 1;
  if (t->cores < 1) t->cores = 1;
  if (t->numa_nodes < 1) t->numa_nodes = 1;
  collect_caches(topo, t);
}

/*
** Builds a topology from desc (NULL: this machine). On failure t is left
** zeroed with hwloc NULL.
*/
static odb_status load(odb_topo *t, const char *desc) {
  hwloc_topology_t topo;
  const char *model;
  if (!t) return ODB_FAIL(ODB_ERR_ARG, "topology: t must not be NULL");
  memset(t, 0, sizeof *t);
  if (hwloc_topology_init(&topo) != 0)
    return ODB_FAIL(ODB_ERR_NOMEM, "hwloc_topology_init failed: %s",
                    strerror(errno));
  if (desc && hwloc_topology_set_synthetic(topo, desc) != 0) {
    hwloc_topology_destroy(topo);
    return ODB_FAIL(ODB_ERR_ARG, "invalid synthetic topology '%s'", desc);
  }
  if (hwloc_topology_load(topo) != 0) {
    int e = errno;
    hwloc_topology_destroy(topo);
    return ODB_FAIL(ODB_ERR_INTERNAL, "hwloc_topology_load failed: %s",
                    strerror(e));
  }
  summarize(topo, t);
  model = hwloc_model(topo);
  if (model && *model)
    copy_trimmed(t->cpu_model, sizeof t->cpu_model, model);
  else if (desc)
    copy_trimmed(t->cpu_model, sizeof t->cpu_model, "synthetic");
  else
    cpuinfo_model(t->cpu_model, sizeof t->cpu_model);
  if (!t->cpu_model[0])
    copy_trimmed(t->cpu_model, sizeof t->cpu_model, "unknown");
  t->hwloc = topo;
  return ODB_OK;
}

odb_status odb_topo_load(odb_topo *t) { return load(t, NULL); }

/* desc must be non-empty; sizes in KiB/MiB ("MB" means 10^6 to hwloc). */
odb_status odb_topo_load_synthetic(odb_topo *t, const char *desc) {
  if (!desc || !*desc) {
    if (t) memset(t, 0, sizeof *t);
    return ODB_FAIL(ODB_ERR_ARG, "synthetic topology: empty description");
  }
  return load(t, desc);
}

/* Accepts NULL and a topology built by hand (hwloc NULL). */
void odb_topo_free(odb_topo *t) {
  if (!t) return;
  if (t->hwloc) hwloc_topology_destroy((hwloc_topology_t)t->hwloc);
  memset(t, 0, sizeof *t);
}

/* Assumes caches sorted by level: the last entry is the last level. */
size_t odb_topo_llc_bytes(const odb_topo *t) {
  if (!t || t->ncaches <= 0) return 0;
  return t->caches[t->ncaches - 1].size;
}

size_t odb_topo_llc_total(const odb_topo *t) {
  const odb_cache_level *c;
  if (!t || t->ncaches <= 0) return 0;
  c = &t->caches[t->ncaches - 1];
  return c->size * (size_t)(c->count > 0 ? c->count : 1);
}

/* Read once: sizes are checked against it on hot paths (a user problem's
   f makes its Vectors each call). */
static double memory_bytes;
static pthread_once_t memory_once = PTHREAD_ONCE_INIT;

static void memory_read(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  memory_bytes = pages > 0 && psize > 0 ? (double)pages * (double)psize : 0.0;
}

double odb_topo_memory_bytes(void) {
  pthread_once(&memory_once, memory_read);
  return memory_bytes;
}

odb_status odb_topo_check_memory(double bytes, const char *what) {
  double mem = odb_topo_memory_bytes();
  if (mem > 0 && !(bytes <= mem))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s would need %.3g bytes, more than this "
                    "machine's memory (%.3g bytes)", what, bytes, mem);
  return ODB_OK;
}
