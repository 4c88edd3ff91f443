/* odb_bandwidth.h - measured memory bandwidth of this machine (the floor),
   its GPUs' beside it, and the cache of both. */
#ifndef ODB_BANDWIDTH_H
#define ODB_BANDWIDTH_H

#include "odb_backend.h"
#include "odb_floor.h"
#include "odb_status.h"
#include "odb_topo.h"

/* Thread counts measured: 1, 2, 4, ... below the cores, and the cores. */
#define ODB_BW_COUNTS 16

/*
** What a cached CPU figure must match to be used: the machine it was
** measured on. Memory size and kernel release stand for a hardware or
** system change the host name and CPU model do not show.
*/
typedef struct odb_bw_machine {
  char host[256];
  char cpu[128];             /* hwloc's CPU model, "unknown" without one */
  int cores;
  long long mem_mib;         /* physical memory in MiB, 0 when unknown */
  char kernel[128];          /* uname's release */
} odb_bw_machine;

/*
** CPU bandwidths in bytes per second, measured with the thread team
** (odb_team.h) on arrays of at least 4x the last-level cache: read (sum
** of an array), copy (counting read + write bytes), for one thread and
** for all cores, and per thread count in between.
*/
typedef struct odb_bandwidth {
  double read_1t, copy_1t;   /* one thread */
  double read_all, copy_all; /* one thread per core */
  int threads_all;
  int ncounts;               /* entries of threads, read, copy */
  int threads[ODB_BW_COUNTS];  /* ascending; [0] is 1, last threads_all */
  double read[ODB_BW_COUNTS], copy[ODB_BW_COUNTS];
  double flops_1t;           /* FP64 flop/s of one core: independent
                                multiply-add chains in this build's widest
                                vectors (the compute roof of a roofline) */
  double flops_all;          /* FP64 flop/s of threads_all cores running
                                those chains at once, the sum of their
                                rates: the machine's compute roof (0 when
                                a cache entry predates it) */
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
  odb_bw_machine machine;    /* where the figures were measured */
  char refused[300];         /* "cached entry refused: <why>; measured
                                again", "" when none was */
} odb_bandwidth;

/*
** A GPU's memory bandwidth in bytes per second, keyed by the device: read
** (a streaming sum) and copy (device to device, read + write bytes), each
** the median of 9 runs over 8x the L2 cache (gpu/rt/cuda_backend.cu).
*/
typedef struct odb_gpu_bandwidth {
  char name[128];            /* the device's product name */
  char pci_bus_id[32];       /* "0000:1b:00.0" */
  int driver_version;        /* CUDA driver version */
  char host[256];
  double peak;               /* theoretical: memory clock x 2 (double data
                                rate) x bus width in bytes; 0 unknown */
  double read, copy;
  char measured_at[32];
  int from_cache;
  char refused[300];         /* as in odb_bandwidth, or "measured now:
                                <why>; ..." for a figure above the peak */
} odb_gpu_bandwidth;

/* Below this cpu_share other work shared the cores: such figures are low,
   and they are not cached. */
#define ODB_BW_QUIET_SHARE 0.9

/*
** The most bytes per second one CPU thread is taken to read or copy from
** memory. No exact peak of a CPU is known to us (the memory channels,
** their clock and how many of them one core can keep busy are not
** reported), so the bound is generous: 256 GB/s is what the L1 load
** ports of a 4 GHz core with two 32-byte loads a cycle could deliver from
** L1 itself, above every single-core stream from memory reported (about
** 30 on servers, 120 on laptop-class chips with wide memory); a figure of
** t threads above t times it is a timing error (or a GPU's figure).
*/
#define ODB_BW_CPU_THREAD_MAX 256e9

/* Modes of odb_bandwidth_get and odb_bandwidth_gpu_get. */
enum {
  ODB_BW_CACHED = 0,   /* the cache's figures; measured when it has none */
  ODB_BW_NOW = 1,      /* measured now; stored when the cache has none or
                          lower ones (a machine's bandwidth does not drop:
                          a lower figure is contention), so the cached
                          floor stays the same from run to run */
  ODB_BW_REPLACE = 2   /* measured now and stored whatever the cache held
                          ('odebench info --remeasure') */
};

/* Measures now (takes a few seconds). t may be NULL (one thread per
   online CPU, no pinning). */
odb_status odb_bandwidth_measure(const odb_topo *t, odb_bandwidth *bw);
/*
** The figures for this machine in the given mode (above). The cache file
** is $XDG_CACHE_HOME/odebench/bandwidth.json (or ~/.cache/odebench). A
** cached entry is refused, and the figures measured, when it is of another
** machine (odb_bw_machine), was written before the last boot, or holds an
** impossible figure (odb_bandwidth_check); bw->refused says why. A
** measurement is stored only when the machine was quiet
** (odb_bandwidth_quiet), the build optimized without sanitizers
** (slow_build 0) and its figures possible; other figures serve this run.
** A measurement with impossible figures is taken again once, then fails.
*/
odb_status odb_bandwidth_get(const odb_topo *t, int mode, odb_bandwidth *bw);
/* 1 when bw came from the cache or its measurement had the cores to itself
   (cpu_share at least ODB_BW_QUIET_SHARE). */
int odb_bandwidth_quiet(const odb_bandwidth *bw);
/* 1 when bw came from the cache or may be stored there: quiet, and
   measured by an optimized build without sanitizers. */
int odb_bandwidth_cacheable(const odb_bandwidth *bw);
/* The cached figures only (never measures): ODB_ERR_IO when this machine
   has none yet, or a refused one (the message says why). For displays
   that must not wait for a measurement. */
odb_status odb_bandwidth_cached(const odb_topo *t, odb_bandwidth *bw);
/*
** NULL when every figure of bw is possible, else why not (static text
** valid until the next call): a figure not finite or not positive, one
** above ODB_BW_CPU_THREAD_MAX times its threads, a copy above 2.5 times
** the read of the same threads (a copy moves each byte read once more, so
** its figure, which counts both, is at most twice the read), or all cores
** reading below half of what one thread reads.
*/
const char *odb_bandwidth_check(const odb_bandwidth *bw);
/* This machine's fingerprint (t may be NULL). */
void odb_bandwidth_fingerprint(const odb_topo *t, odb_bw_machine *m);
/* Writes bw as this machine's cache entry (bw->machine is ignored: the
   entry gets this machine's fingerprint). ODB_ERR_IO when it cannot. */
odb_status odb_bandwidth_store(const odb_topo *t, const odb_bandwidth *bw);

/*
** The GPU figures of backend b ("cuda") in the given mode, cached per
** device in $XDG_CACHE_HOME/odebench/bandwidth-gpu-<PCI id>.json. The
** device (name, PCI id, driver version, peak) comes from
** odb_backend_query; measuring calls the backend's read_bandwidth and
** copy_bandwidth, which are the figures of this process that the GPU
** families compute their floors from. A cached entry of another device,
** host or driver, written before the last boot, or with a figure not
** finite, not positive or above the device's peak, is refused (g->refused
** says why) and measured again. A measured figure above the peak is
** returned but not stored, with g->refused saying so.
*/
odb_status odb_bandwidth_gpu_get(odb_backend *b, int mode,
                                 odb_gpu_bandwidth *g);
/* NULL when g's figures are possible, else why not (as
   odb_bandwidth_check). */
const char *odb_bandwidth_gpu_check(const odb_gpu_bandwidth *g);

/*
** The CPU figures a floor of threads threads is taken from (odb_floor.h):
** the read and copy of the smallest thread count measured that is at
** least threads (all cores when threads is more), each the highest of the
** counts up to it (a curve that dips does not lower the bound).
** cache_bytes: one LLC instance for one thread, the machine's LLC for
** more (t may be NULL: unknown). 0 when bw has no positive read figure,
** else 1.
*/
int odb_bandwidth_floor_bw(const odb_bandwidth *bw, const odb_topo *t,
                           int threads, odb_floor_bw *out);
/*
** Seconds a single-thread variant needs at least to read rbytes and write
** wbytes: odb_floor_seconds (odb_floor.h) on the one-thread figures.
*/
double odb_bandwidth_floor_seconds(const odb_bandwidth *bw, double rbytes,
                                   double wbytes);

#endif
