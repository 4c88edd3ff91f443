/* odb_bandwidth.h - measured memory bandwidth of this machine (the floor). */
#ifndef ODB_BANDWIDTH_H
#define ODB_BANDWIDTH_H

#include "odb_status.h"
#include "odb_topo.h"

/*
** Bandwidths in bytes per second, measured on arrays of at least 4x the
** last-level cache: read (sum of an array), copy (counting read + write
** bytes), for one thread and for all cores.
*/
typedef struct odb_bandwidth {
  double read_1t, copy_1t;   /* one thread */
  double read_all, copy_all; /* one thread per core */
  int threads_all;
  double flops_1t;           /* FP64 flop/s of one core: independent
                                multiply-add chains in this build's widest
                                vectors (the compute roof of a roofline) */
  double array_bytes;        /* size of each array used */
  char measured_at[32];      /* ISO-8601 UTC */
  int from_cache;            /* 1 when read from the cache file */
  double cpu_share;          /* measured now: the smallest share of wall
                                time the one measuring thread was on a core
                                in the one-thread timings kept (1: the
                                machine was quiet; 0 when read from the
                                cache) */
  int slow_build;            /* measured now by a build whose loops are not
                                optimized or are instrumented by a
                                sanitizer: the figures are the build's */
} odb_bandwidth;

/* Below this cpu_share other work shared the cores: such figures are low,
   and they are not cached. */
#define ODB_BW_QUIET_SHARE 0.9

/* Measures now (takes a few seconds). */
odb_status odb_bandwidth_measure(const odb_topo *t, odb_bandwidth *bw);
/*
** Returns the cached figures for this machine (cache file keyed by host name,
** CPU model and core count under $XDG_CACHE_HOME/odebench or
** ~/.cache/odebench), measuring them when absent or when remeasure is set.
** A measurement is stored only when the machine was quiet
** (odb_bandwidth_quiet) and the build optimized without sanitizers
** (slow_build 0): other figures serve this run and are measured again by
** the next.
*/
odb_status odb_bandwidth_get(const odb_topo *t, int remeasure,
                             odb_bandwidth *bw);
/* 1 when bw came from the cache or its measurement had the cores to itself
   (cpu_share at least ODB_BW_QUIET_SHARE). */
int odb_bandwidth_quiet(const odb_bandwidth *bw);
/* 1 when bw came from the cache or may be stored there: quiet, and
   measured by an optimized build without sanitizers. */
int odb_bandwidth_cacheable(const odb_bandwidth *bw);
/* The cached figures only (never measures): ODB_ERR_IO when this machine
   has none yet. For displays that must not wait for a measurement. */
odb_status odb_bandwidth_cached(const odb_topo *t, odb_bandwidth *bw);
/*
** Seconds a single-thread variant needs at least to read rbytes and write
** wbytes: rbytes/read_1t + wbytes/write_1t, where the write bandwidth is
** derived from copy_1t = 2/(1/read + 1/write).
*/
double odb_bandwidth_floor_seconds(const odb_bandwidth *bw, double rbytes,
                                   double wbytes);

#endif
