/* odb_bandwidth.c - read and copy bandwidth of main memory measured on the
   thread team, a GPU's beside it, the checks that refuse impossible
   figures, and their cache. */
#include "odb_bandwidth.h"
#include "odb_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "odb_bwfile.h"
#include "odb_cachedir.h"
#include "odb_json.h"
#include "odb_results.h"
#include "odb_team.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define BW_REPS 5
#define BW_MIN_REPS 3
#define BW_SERIES_S 1.2
#define BW_MIN_ARRAY (64 * MIB)
#define BW_BLOCK 32          /* doubles per block of a slice (256 bytes) */
#define BW_CACHE_VERSION 5   /* 2: four read streams; 3: flops_1t;
                                4: stored only when measured quiet by an
                                optimized build without sanitizers;
                                5: the machine's fingerprint, the time it
                                was written, figures per thread count */
#define BW_GPU_CACHE_VERSION 1
/* A measured GPU figure may exceed the peak computed from the reported
   memory clock by timer rounding; more than this is no such rounding. */
#define BW_GPU_PEAK_SLACK 1.02
/* Seconds an entry's writing time may precede the boot time computed from
   the uptime (which is read to the second) and still count as after it. */
#define BW_BOOT_SLACK_S 5

/* Eight doubles: 64 bytes, the unit of every slice. */
typedef double v4d __attribute__((vector_size(32)));

/* Written once per measurement so the sums cannot be optimized away. */
static volatile double bw_sink;

/* Copies src into dst[cap], truncated. */
static void set_text(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* {====================================================================
** Kernels
** ===================================================================== */

/*
** Assumes a is 64-byte aligned and n a multiple of 32; the sum of a[0..n).
** The array is read as four concurrent streams (its quarters): one stream
** per core is limited by the prefetchers on many server CPUs, and the
** variants we compare with read several vectors at once.
*/
static double read_kernel(const double *a, size_t n) {
  size_t q = n / 4 / 4;   /* v4d elements per quarter */
  const v4d *v0 = (const v4d *)a, *v1 = v0 + q, *v2 = v1 + q, *v3 = v2 + q;
  v4d s0 = { 0, 0, 0, 0 }, s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < q; ++i) {
    s0 += v0[i];
    s1 += v1[i];
    s2 += v2[i];
    s3 += v3[i];
  }
  s0 += s1 + s2 + s3;
  return s0[0] + s0[1] + s0[2] + s0[3];
}

/* Assumes a, b 64-byte aligned, n a multiple of 8; b[i] = a[i]. */
static void copy_kernel(double *restrict b, const double *restrict a,
                        size_t n) {
  v4d *vb = (v4d *)b;
  const v4d *va = (const v4d *)a;
  for (size_t i = 0; i < n / 4; i += 2) {
    vb[i] = va[i];
    vb[i + 1] = va[i + 1];
  }
}

/* First touch with nonzero values (zero pages could be shared); one array
   after the other, which faults pages in faster than interleaving. */
static void touch_kernel(double *a, double *b, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = 1.0 + (double)(i & 1023) * 1e-3;
  for (size_t i = 0; i < n; ++i) b[i] = 0.5;
}

/* }==================================================================== */

/* {====================================================================
** Runs on the thread team: k members, one slice each
** ===================================================================== */

enum { OP_TOUCH, OP_READ, OP_COPY };

/* One timed op of k members; the per-member arrays have the team's size. */
typedef struct bw_run {
  int op, k;
  double *a, *b;
  long blocks;              /* BW_BLOCK-double blocks per array */
  double *start, *end;      /* each member's clock around its slice */
  double *cpu;              /* each member's CPU seconds of the slice */
  double *sums;             /* each member's read sum */
} bw_run;

/* CPU seconds this thread has run (only differences mean anything). */
static double thread_cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Member tid of r->k runs r->op on its block range (odb_team_range). */
static void bw_member(odb_team *team, int tid, void *arg) {
  bw_run *r = arg;
  long first, last;
  size_t lo, n;
  double t0, c0;
  (void)team;
  odb_team_range(r->blocks, r->k, tid, &first, &last);
  lo = (size_t)first * BW_BLOCK;
  n = (size_t)(last - first) * BW_BLOCK;
  t0 = odb_clock_now();
  c0 = thread_cpu_seconds();
  if (r->op == OP_TOUCH) touch_kernel(r->a + lo, r->b + lo, n);
  else if (r->op == OP_READ) r->sums[tid] = read_kernel(r->a + lo, n);
  else copy_kernel(r->b + lo, r->a + lo, n);
  r->cpu[tid] = thread_cpu_seconds() - c0;
  r->end[tid] = odb_clock_now();
  r->start[tid] = t0;
}

/* The share of wall seconds a thread that ran cpu seconds was on a core
   (at most 1; 0 for no wall time). */
static double cpu_share(double cpu, double wall) {
  if (!(wall > 0)) return 0;
  return cpu >= wall ? 1 : cpu / wall;
}

/*
** Runs op on the first k members and returns the seconds from the first
** member's start to the last one's end: each member reads the clock
** itself, so a member descheduled before or after its slice does not
** shorten the time (a single clock read by the caller after releasing
** the others would miss the work they did meanwhile). *share: the
** smallest share of its own time a member ran on a core.
*/
static odb_status team_time(odb_team *team, bw_run *r, int op, int k,
                            double *seconds, double *share) {
  double t0 = INFINITY, t1 = -INFINITY, s = 0, least = 1;
  r->op = op;
  r->k = k;
  ODB_TRY(odb_team_run_first(team, k, bw_member, r));
  for (int i = 0; i < k; ++i) {
    double c = cpu_share(r->cpu[i], r->end[i] - r->start[i]);
    if (r->start[i] < t0) t0 = r->start[i];
    if (r->end[i] > t1) t1 = r->end[i];
    if (c < least) least = c;
    s += op == OP_READ ? r->sums[i] : 0;
  }
  bw_sink = s;
  *seconds = t1 - t0;
  *share = least;
  return ODB_OK;
}

/*
** Best (shortest) of up to BW_REPS timings of op: at least BW_MIN_REPS,
** further ones only while the series has taken less than BW_SERIES_S, so
** a slow machine still finishes in a few seconds. *share: that of the
** best timing. The best is the run least disturbed by other work; it
** cannot be shorter than the work (team_time).
*/
static odb_status best_time(odb_team *team, bw_run *r, int op, int k,
                            double *best, double *share) {
  double spent = 0;
  *best = INFINITY;
  *share = 0;
  for (int rep = 0; rep < BW_REPS; ++rep) {
    double s, c;
    if (rep >= BW_MIN_REPS && spent > BW_SERIES_S) break;
    ODB_TRY(team_time(team, r, op, k, &s, &c));
    spent += s;
    if (s < *best) {
      *best = s;
      *share = c;
    }
  }
  return ODB_OK;
}

/* Thread counts 1, 2, 4, ... below nall, then nall; returns how many. */
static int thread_counts(int nall, int *counts) {
  int n = 0;
  for (int p = 1; p < nall && n < ODB_BW_COUNTS - 1; p *= 2) counts[n++] = p;
  counts[n++] = nall;
  return n;
}

/*
** Touches the arrays with all members (so their pages lie where the
** members run), then times read and copy for each thread count. *share:
** the smaller of the one-thread read's and copy's shares.
*/
static odb_status team_measure(odb_team *team, bw_run *r, int nall,
                               odb_bandwidth *bw, double *share) {
  double bytes = (double)r->blocks * BW_BLOCK * sizeof(double), s, c;
  *share = 1;
  ODB_TRY(team_time(team, r, OP_TOUCH, nall, &s, &c));
  bw->ncounts = thread_counts(nall, bw->threads);
  for (int i = 0; i < bw->ncounts; ++i) {
    int k = bw->threads[i];
    ODB_TRY(best_time(team, r, OP_READ, k, &s, &c));
    bw->read[i] = s > 0 && isfinite(s) ? bytes / s : 0;
    if (k == 1 && c < *share) *share = c;
    ODB_TRY(best_time(team, r, OP_COPY, k, &s, &c));
    bw->copy[i] = s > 0 && isfinite(s) ? 2 * bytes / s : 0;
    if (k == 1 && c < *share) *share = c;
  }
  return ODB_OK;
}

/* }==================================================================== */

/* {====================================================================
** Measurement
** ===================================================================== */

/*
** Bytes per array: max(4 x last-level cache, 256 MiB), with both arrays
** together at most a quarter of physical memory and each at most 2 GiB.
*/
static size_t array_bytes(const odb_topo *t) {
  size_t want = t ? 4 * odb_topo_llc_total(t) : 0;
  double mem = odb_topo_memory_bytes();
  if (want < 256 * MIB) want = 256 * MIB;
  if (mem > 0 && (double)want > mem / 8)   /* two arrays: 1/4 */
    want = (size_t)(mem / 8);
  if (want > 2 * GIB) want = 2 * GIB;
  if (want < BW_MIN_ARRAY) want = BW_MIN_ARRAY;
  return want;
}

/* mmap'ed so the array is page aligned; huge pages are asked for. */
static double *map_array(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/*
** 16 independent chains of a = a * b + c on v4d vectors (the compiler maps
** them to the widest FMA the build allows), 2 flops per lane per update.
** Best of 5 runs of about 20 ms; the result is used so it is not removed.
** *share: the share of the best run's wall time this thread was on a core.
*/
static double measure_flops(double *share) {
  const long iters = 1L << 20;
  double best = 0;
  *share = 0;
  for (int r = 0; r < 5; ++r) {
    v4d a[16], b = { 0.999999, 0.999999, 0.999999, 0.999999 },
        c = { 1e-7, 1e-7, 1e-7, 1e-7 }, sum = { 0, 0, 0, 0 };
    double t0, c0, sec, cpu;
    for (int k = 0; k < 16; ++k) a[k] = (v4d){ k, k + 1, k + 2, k + 3 };
    t0 = odb_clock_now();
    c0 = thread_cpu_seconds();
    for (long i = 0; i < iters; ++i)
      for (int k = 0; k < 16; ++k) a[k] = a[k] * b + c;
    cpu = thread_cpu_seconds() - c0;
    sec = odb_clock_now() - t0;
    for (int k = 0; k < 16; ++k) sum += a[k];
    bw_sink = sum[0] + sum[1] + sum[2] + sum[3];
    if (sec > 0 && 2.0 * 4 * 16 * (double)iters / sec > best) {
      best = 2.0 * 4 * 16 * (double)iters / sec;
      *share = cpu_share(cpu, sec);
    }
  }
  return best;
}

/* One member of the all-cores FP64 measurement: its own best rate. */
static void flops_member(odb_team *team, int tid, void *arg) {
  double share;
  (void)team;
  ((double *)arg)[tid] = measure_flops(&share);
}

/*
** *flops: the sum of the rates of k members running measure_flops at
** once. Each member times its own runs, which overlap (they start after
** one team barrier and take the same ~0.1 s), so the sum is the rate of
** all k together; a member that a busy machine delayed lowers it, as it
** would lower any run.
*/
static odb_status team_flops(odb_team *team, int k, double *flops) {
  double *rate = calloc((size_t)k, sizeof *rate);
  odb_status st;
  *flops = 0;
  if (!rate) return ODB_FAIL(ODB_ERR_NOMEM, "bandwidth: out of memory for "
                             "%d threads", k);
  st = odb_team_run_first(team, k, flops_member, rate);
  for (int i = 0; st == ODB_OK && i < k; ++i) *flops += rate[i];
  free(rate);
  return st;
}

/*
** 1 when this build's measuring loops are not what a user's run would
** time: compiled without optimization, or instrumented by AddressSanitizer
** or ThreadSanitizer (such a build measures a fraction of the release
** build's bandwidth and about a hundredth of its flop rate).
*/
static int slow_build(void) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return 1;
#endif
#endif
#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) || \
    defined(__SANITIZE_THREAD__)
  return 1;
#else
  return 0;
#endif
}

/* Current UTC time as 2024-01-31T12:00:00Z. */
static void iso_now(char *buf, size_t cap) {
  time_t now = time(NULL);
  struct tm tmv;
  gmtime_r(&now, &tmv);
  strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

/* The per-member arrays of a run for a team of p; 0 when out of memory. */
static int run_alloc(bw_run *r, int p) {
  r->start = calloc((size_t)p, sizeof *r->start);
  r->end = calloc((size_t)p, sizeof *r->end);
  r->cpu = calloc((size_t)p, sizeof *r->cpu);
  r->sums = calloc((size_t)p, sizeof *r->sums);
  return r->start && r->end && r->cpu && r->sums;
}

static void run_free(bw_run *r) {
  free(r->start);
  free(r->end);
  free(r->cpu);
  free(r->sums);
}

/*
** t may be NULL (one thread per online CPU, no pinning). The team pins
** only when t->hwloc describes this machine (not a synthetic topology).
*/
odb_status odb_bandwidth_measure(const odb_topo *t, odb_bandwidth *bw) {
  odb_team *team = NULL;
  bw_run r;
  size_t bytes;
  int nall;
  double share_1t = 0, share_flops = 0;
  odb_status st;
  if (!bw) return ODB_FAIL(ODB_ERR_ARG, "bandwidth: bw must not be NULL");
  memset(bw, 0, sizeof *bw);
  memset(&r, 0, sizeof r);
  nall = t && t->cores > 0 ? t->cores : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nall < 1) nall = 1;
  bytes = array_bytes(t);
  for (;;) {   /* halve the size until both arrays fit */
    bytes -= bytes % (BW_BLOCK * sizeof(double));
    r.a = map_array(bytes);
    r.b = r.a ? map_array(bytes) : NULL;
    if (r.b) break;
    if (r.a) munmap(r.a, bytes);
    if (bytes / 2 < BW_MIN_ARRAY / 4)
      return ODB_FAIL(ODB_ERR_NOMEM, "bandwidth: cannot map two arrays of "
                      "%zu MiB", bytes / MIB);
    bytes /= 2;
  }
  r.blocks = (long)(bytes / (BW_BLOCK * sizeof(double)));
  if (!run_alloc(&r, nall)) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "bandwidth: out of memory for %d threads",
                  nall);
    goto done;
  }
  st = odb_team_create(NULL, t && t->hwloc &&
                       hwloc_topology_is_thissystem((hwloc_topology_t)t->hwloc)
                       ? t : NULL, nall, ODB_BARRIER_CENTRAL, &team);
  if (st == ODB_OK) st = team_measure(team, &r, nall, bw, &share_1t);
  if (st == ODB_OK) st = team_flops(team, nall, &bw->flops_all);
done:
  odb_team_destroy(team);
  run_free(&r);
  munmap(r.a, bytes);
  munmap(r.b, bytes);
  if (st != ODB_OK) return st;
  bw->read_1t = bw->read[0];
  bw->copy_1t = bw->copy[0];
  bw->read_all = bw->read[bw->ncounts - 1];
  bw->copy_all = bw->copy[bw->ncounts - 1];
  bw->threads_all = nall;
  bw->array_bytes = (double)bytes;
  bw->flops_1t = measure_flops(&share_flops);
  /* the one-thread timings decide: with all cores, a CPU quota below the
     cores (a container's) would read as busy on every run */
  bw->cpu_share = share_1t < share_flops ? share_1t : share_flops;
  bw->slow_build = slow_build();
  iso_now(bw->measured_at, sizeof bw->measured_at);
  odb_bandwidth_fingerprint(t, &bw->machine);
  return ODB_OK;
}

/* Figures from the cache were measured quiet (only such are stored). */
int odb_bandwidth_quiet(const odb_bandwidth *bw) {
  return bw->from_cache || bw->cpu_share >= ODB_BW_QUIET_SHARE;
}

/* See the header. */
int odb_bandwidth_cacheable(const odb_bandwidth *bw) {
  return bw->from_cache || (odb_bandwidth_quiet(bw) && !bw->slow_build);
}

/* See the header; the counts of bw ascend. */
int odb_bandwidth_floor_bw(const odb_bandwidth *bw, const odb_topo *t,
                           int threads, odb_floor_bw *out) {
  int last = 0;
  memset(out, 0, sizeof *out);
  snprintf(out->where, sizeof out->where, "cpu");
  if (!bw || !(bw->read_1t > 0)) return 0;
  if (threads < 1) threads = 1;
  if (bw->ncounts > 0) {
    while (last + 1 < bw->ncounts && bw->threads[last] < threads) ++last;
    for (int i = 0; i <= last; ++i) {
      if (bw->read[i] > out->read) out->read = bw->read[i];
      if (bw->copy[i] > out->copy) out->copy = bw->copy[i];
    }
    out->threads = bw->threads[last];
  } else {   /* the one-thread and all-core figures only */
    int all = threads > 1 && bw->threads_all > 1;
    out->read = all && bw->read_all > bw->read_1t ? bw->read_all : bw->read_1t;
    out->copy = all && bw->copy_all > bw->copy_1t ? bw->copy_all : bw->copy_1t;
    out->threads = all ? bw->threads_all : 1;
  }
  if (!(out->read > 0)) out->read = bw->read_1t;
  if (t)
    out->cache_bytes = (double)(out->threads <= 1 ? odb_topo_llc_bytes(t)
                                                  : odb_topo_llc_total(t));
  return 1;
}

/* The one-thread floor of odb_floor.h (odb_floor_seconds); 0 without a
   positive read_1t. */
double odb_bandwidth_floor_seconds(const odb_bandwidth *bw, double rbytes,
                                   double wbytes) {
  odb_floor_bw f;
  if (!bw || !(bw->read_1t > 0)) return 0;
  memset(&f, 0, sizeof f);
  f.read = bw->read_1t;
  f.copy = bw->copy_1t;
  f.threads = 1;
  return odb_floor_seconds(&f, rbytes, wbytes);
}

/* }==================================================================== */

/* {====================================================================
** Checks: what no measurement of a machine can give
** ===================================================================== */

static char check_why[200];

/* NULL when v is a possible figure of what (threads threads). */
static const char *check_one(const char *what, int threads, double v) {
  if (!isfinite(v) || !(v > 0)) {
    snprintf(check_why, sizeof check_why, "%s with %d thread%s is %g GB/s "
             "(not a finite positive figure)", what, threads,
             threads == 1 ? "" : "s", v / 1e9);
    return check_why;
  }
  if (v > ODB_BW_CPU_THREAD_MAX * threads) {
    snprintf(check_why, sizeof check_why, "%s with %d thread%s is %.2f GB/s, "
             "above %.0f GB/s (%.0f GB/s a thread, the most a CPU thread "
             "reads)", what, threads, threads == 1 ? "" : "s", v / 1e9,
             ODB_BW_CPU_THREAD_MAX * threads / 1e9,
             ODB_BW_CPU_THREAD_MAX / 1e9);
    return check_why;
  }
  return NULL;
}

/* NULL when a copy figure fits its read figure (threads threads). */
static const char *check_pair(int threads, double rd, double cp) {
  if (cp > 2.5 * rd) {
    snprintf(check_why, sizeof check_why, "copy with %d thread%s is %.2f "
             "GB/s, more than 2.5 times its read (%.2f GB/s)", threads,
             threads == 1 ? "" : "s", cp / 1e9, rd / 1e9);
    return check_why;
  }
  return NULL;
}

const char *odb_bandwidth_check(const odb_bandwidth *bw) {
  const char *why;
  int all = bw->threads_all;
  if (all < 1) {
    snprintf(check_why, sizeof check_why, "%d threads for all cores", all);
    return check_why;
  }
  if ((why = check_one("read", 1, bw->read_1t)) ||
      (why = check_one("copy", 1, bw->copy_1t)) ||
      (why = check_one("read", all, bw->read_all)) ||
      (why = check_one("copy", all, bw->copy_all)) ||
      (why = check_pair(1, bw->read_1t, bw->copy_1t)) ||
      (why = check_pair(all, bw->read_all, bw->copy_all)))
    return why;
  for (int i = 0; i < bw->ncounts; ++i) {
    int k = bw->threads[i];
    if (k < 1 || k > all || (i > 0 && k <= bw->threads[i - 1])) {
      snprintf(check_why, sizeof check_why, "thread count %d out of order "
               "or not in 1..%d", k, all);
      return check_why;
    }
    if ((why = check_one("read", k, bw->read[i])) ||
        (why = check_one("copy", k, bw->copy[i])) ||
        (why = check_pair(k, bw->read[i], bw->copy[i])))
      return why;
  }
  if (bw->read_all < 0.5 * bw->read_1t) {
    snprintf(check_why, sizeof check_why, "read with %d threads is %.2f "
             "GB/s, less than half of one thread's %.2f GB/s", all,
             bw->read_all / 1e9, bw->read_1t / 1e9);
    return check_why;
  }
  if (!isfinite(bw->flops_1t) || bw->flops_1t < 0 ||
      !isfinite(bw->flops_all) || bw->flops_all < 0 ||
      !isfinite(bw->array_bytes) || !(bw->array_bytes > 0)) {
    snprintf(check_why, sizeof check_why, "flops %g or array size %g not "
             "finite and positive", bw->flops_1t, bw->array_bytes);
    return check_why;
  }
  return NULL;
}

/* A figure of a device with the given peak (0: unknown). */
static const char *check_gpu_one(const char *what, double v, double peak) {
  if (!isfinite(v) || !(v > 0)) {
    snprintf(check_why, sizeof check_why, "GPU %s is %g GB/s (not a finite "
             "positive figure)", what, v / 1e9);
    return check_why;
  }
  if (peak > 0 && v > BW_GPU_PEAK_SLACK * peak) {
    snprintf(check_why, sizeof check_why, "GPU %s is %.2f GB/s, above the "
             "device's peak of %.2f GB/s", what, v / 1e9, peak / 1e9);
    return check_why;
  }
  return NULL;
}

const char *odb_bandwidth_gpu_check(const odb_gpu_bandwidth *g) {
  const char *why;
  if ((why = check_gpu_one("read", g->read, g->peak)) ||
      (why = check_gpu_one("copy", g->copy, g->peak)))
    return why;
  return NULL;
}

/* }==================================================================== */

/* {====================================================================
** Fingerprints
** ===================================================================== */

void odb_bandwidth_fingerprint(const odb_topo *t, odb_bw_machine *m) {
  struct utsname u;
  double mem = odb_topo_memory_bytes();
  memset(m, 0, sizeof *m);
  if (gethostname(m->host, sizeof m->host - 1) != 0)
    snprintf(m->host, sizeof m->host, "unknown");
  set_text(m->cpu, sizeof m->cpu,
           t && t->cpu_model[0] ? t->cpu_model : "unknown");
  m->cores = t && t->cores > 0 ? t->cores
                               : (int)sysconf(_SC_NPROCESSORS_ONLN);
  m->mem_mib = mem > 0 ? (long long)(mem / (double)MIB) : 0;
  set_text(m->kernel, sizeof m->kernel,
           uname(&u) == 0 ? u.release : "unknown");
}

/* NULL when got is machine m, else which field differs. */
static const char *machine_differs(const odb_bw_machine *got,
                                   const odb_bw_machine *m) {
  if (strcmp(got->host, m->host))
    snprintf(check_why, sizeof check_why, "measured on host '%.60s', this "
             "is '%.60s'", got->host, m->host);
  else if (strcmp(got->cpu, m->cpu))
    snprintf(check_why, sizeof check_why, "measured on CPU '%.60s', this "
             "is '%.60s'", got->cpu, m->cpu);
  else if (got->cores != m->cores)
    snprintf(check_why, sizeof check_why, "measured with %d cores, this "
             "machine has %d", got->cores, m->cores);
  else if (got->mem_mib != m->mem_mib)
    snprintf(check_why, sizeof check_why, "measured with %lld MiB of "
             "memory, this machine has %lld", got->mem_mib, m->mem_mib);
  else if (strcmp(got->kernel, m->kernel))
    snprintf(check_why, sizeof check_why, "measured under kernel '%.60s', "
             "this is '%.60s'", got->kernel, m->kernel);
  else
    return NULL;
  return check_why;
}

/* Seconds since the epoch at which this machine booted; 0 when unknown. */
static double boot_time(void) {
  struct timespec up;
#ifdef CLOCK_BOOTTIME
  if (clock_gettime(CLOCK_BOOTTIME, &up) != 0) return 0;
#else
  if (clock_gettime(CLOCK_MONOTONIC, &up) != 0) return 0;
#endif
  return (double)time(NULL) - (double)up.tv_sec;
}

/* NULL when an entry written at `written` (epoch seconds) is of this boot. */
static const char *written_before_boot(double written) {
  double boot = boot_time();
  if (!isfinite(written) || (boot > 0 && written + BW_BOOT_SLACK_S < boot)) {
    snprintf(check_why, sizeof check_why, "written before the last boot");
    return check_why;
  }
  return NULL;
}

/* }==================================================================== */

/* {====================================================================
** The CPU cache file
** ===================================================================== */

/* What a CPU cache file holds besides the figures. */
typedef struct cpu_entry {
  odb_bandwidth *bw;
  long long version;
  double written;            /* epoch seconds; NAN when absent */
} cpu_entry;

/* "read_t4" -> 4 (the thread count of a per-count key), else -1. */
static int count_key(const char *key, const char *prefix) {
  size_t n = strlen(prefix);
  char *end;
  long v;
  if (strncmp(key, prefix, n) || !key[n]) return -1;
  v = strtol(key + n, &end, 10);
  return *end || v < 1 || v > (1 << 20) ? -1 : (int)v;
}

/* Index of thread count k in bw (appended when new; -1 when full). */
static int count_slot(odb_bandwidth *bw, int k) {
  for (int i = 0; i < bw->ncounts; ++i)
    if (bw->threads[i] == k) return i;
  if (bw->ncounts == ODB_BW_COUNTS) return -1;
  bw->threads[bw->ncounts] = k;
  bw->read[bw->ncounts] = bw->copy[bw->ncounts] = 0;
  return bw->ncounts++;
}

/* Stores one member of a CPU cache object; unknown keys pass. */
static void cpu_member(void *ud, const char *key, const char *s, double v) {
  cpu_entry *e = ud;
  odb_bandwidth *bw = e->bw;
  odb_bw_machine *m = &bw->machine;
  int k, i;
  if (s) {
    if (!strcmp(key, "host")) set_text(m->host, sizeof m->host, s);
    else if (!strcmp(key, "cpu_model")) set_text(m->cpu, sizeof m->cpu, s);
    else if (!strcmp(key, "kernel")) set_text(m->kernel, sizeof m->kernel, s);
    else if (!strcmp(key, "measured_at"))
      set_text(bw->measured_at, sizeof bw->measured_at, s);
    return;
  }
  if (!strcmp(key, "version")) e->version = odb_bwfile_count(v);
  else if (!strcmp(key, "written_at")) e->written = v;
  else if (!strcmp(key, "cores")) m->cores = (int)odb_bwfile_count(v);
  else if (!strcmp(key, "mem_mib")) m->mem_mib = odb_bwfile_count(v);
  else if (!strcmp(key, "threads_all")) bw->threads_all = (int)odb_bwfile_count(v);
  else if (!strcmp(key, "read_1t")) bw->read_1t = v;
  else if (!strcmp(key, "copy_1t")) bw->copy_1t = v;
  else if (!strcmp(key, "read_all")) bw->read_all = v;
  else if (!strcmp(key, "copy_all")) bw->copy_all = v;
  else if (!strcmp(key, "flops_1t")) bw->flops_1t = v;
  else if (!strcmp(key, "flops_all")) bw->flops_all = v;
  else if (!strcmp(key, "array_bytes")) bw->array_bytes = v;
  else if ((k = count_key(key, "read_t")) > 0 &&
           (i = count_slot(bw, k)) >= 0)
    bw->read[i] = v;
  else if ((k = count_key(key, "copy_t")) > 0 &&
           (i = count_slot(bw, k)) >= 0)
    bw->copy[i] = v;
}

/* Orders the per-count figures by thread count (insertion sort). */
static void sort_counts(odb_bandwidth *bw) {
  for (int i = 1; i < bw->ncounts; ++i)
    for (int j = i; j > 0 && bw->threads[j - 1] > bw->threads[j]; --j) {
      int tk = bw->threads[j];
      double tr = bw->read[j], tc = bw->copy[j];
      bw->threads[j] = bw->threads[j - 1];
      bw->read[j] = bw->read[j - 1];
      bw->copy[j] = bw->copy[j - 1];
      bw->threads[j - 1] = tk;
      bw->read[j - 1] = tr;
      bw->copy[j - 1] = tc;
    }
}

/*
** Reads the cache at path for machine m into bw. Returns 1 with bw filled
** when its entry is usable; 0 when there is no entry (why ""); -1 when an
** entry was refused (why says why).
*/
static int load_cpu(const char *path, const odb_bw_machine *m,
                    odb_bandwidth *bw, char *why, size_t cap) {
  char *text = odb_bwfile_slurp(path);
  cpu_entry e;
  const char *bad = NULL;
  int ok;
  why[0] = '\0';
  if (!text) return 0;
  memset(bw, 0, sizeof *bw);
  e.bw = bw;
  e.version = 0;
  e.written = NAN;
  ok = odb_bwfile_parse(text, cpu_member, &e);
  free(text);
  sort_counts(bw);
  if (!ok) bad = "not a flat JSON object";
  else if (e.version != BW_CACHE_VERSION) {
    snprintf(check_why, sizeof check_why, "version %lld, this build writes "
             "%d", e.version, BW_CACHE_VERSION);
    bad = check_why;
  } else if (!(bad = machine_differs(&bw->machine, m)) &&
             !(bad = written_before_boot(e.written)))
    bad = odb_bandwidth_check(bw);
  if (bad) {
    snprintf(why, cap, "%s", bad);
    memset(bw, 0, sizeof *bw);
    return -1;
  }
  bw->from_cache = 1;
  return 1;
}

/* The cache object; the field names are the ones cpu_member knows. */
static void write_cpu(FILE *f, const void *ud) {
  const odb_bandwidth *bw = ud;
  const odb_bw_machine *m = &bw->machine;
  char key[32];
  odb_json j;
  odb_json_init(&j, f);
  odb_json_begin_object(&j, NULL);
  odb_json_integer(&j, "version", BW_CACHE_VERSION);
  odb_json_string(&j, "host", m->host);
  odb_json_string(&j, "cpu_model", m->cpu);
  odb_json_integer(&j, "cores", m->cores);
  odb_json_integer(&j, "mem_mib", m->mem_mib);
  odb_json_string(&j, "kernel", m->kernel);
  odb_json_integer(&j, "written_at", (long long)time(NULL));
  odb_json_number(&j, "read_1t", bw->read_1t);
  odb_json_number(&j, "copy_1t", bw->copy_1t);
  odb_json_number(&j, "read_all", bw->read_all);
  odb_json_number(&j, "copy_all", bw->copy_all);
  for (int i = 0; i < bw->ncounts; ++i) {
    snprintf(key, sizeof key, "read_t%d", bw->threads[i]);
    odb_json_number(&j, key, bw->read[i]);
    snprintf(key, sizeof key, "copy_t%d", bw->threads[i]);
    odb_json_number(&j, key, bw->copy[i]);
  }
  odb_json_number(&j, "flops_1t", bw->flops_1t);
  odb_json_number(&j, "flops_all", bw->flops_all);
  odb_json_integer(&j, "threads_all", bw->threads_all);
  odb_json_number(&j, "array_bytes", bw->array_bytes);
  odb_json_string(&j, "measured_at", bw->measured_at);
  odb_json_end_object(&j);
}

odb_status odb_bandwidth_store(const odb_topo *t, const odb_bandwidth *bw) {
  char dir[PATH_MAX], path[PATH_MAX];
  odb_bandwidth keyed = *bw;
  odb_bandwidth_fingerprint(t, &keyed.machine);
  if (!odb_bwfile_path("bandwidth.json", dir, path, sizeof dir) ||
      !odb_bwfile_store(dir, path, write_cpu, &keyed))
    return ODB_FAIL(ODB_ERR_IO, "cannot write the bandwidth cache");
  return ODB_OK;
}

/* 1 when the four main figures are finite and positive. */
static int figures_positive(const odb_bandwidth *bw) {
  return isfinite(bw->read_1t) && bw->read_1t > 0 && isfinite(bw->copy_1t) &&
         bw->copy_1t > 0 && isfinite(bw->read_all) && bw->read_all > 0 &&
         isfinite(bw->copy_all) && bw->copy_all > 0;
}

/*
** Measures; a measurement with an impossible figure is taken once more.
** A measurement that will not be cached (a sanitizer or unoptimized build,
** or a busy machine) is taken as it is once its figures are finite and
** positive: such a build times its read loop with the instrumentation and
** its copy through the C library's memcpy, and a busy machine shares the
** cores unevenly, so the relations odb_bandwidth_check asks of a quiet,
** optimized measurement (copy at most 2.5 times the read, all cores at
** least half of one) need not hold. Its figures serve this run only.
*/
static odb_status measure_possible(const odb_topo *t, odb_bandwidth *bw) {
  const char *bad = NULL;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ODB_TRY(odb_bandwidth_measure(t, bw));
    if (!(bad = odb_bandwidth_check(bw))) return ODB_OK;
    if (!odb_bandwidth_cacheable(bw) && figures_positive(bw)) return ODB_OK;
  }
  return ODB_FAIL(ODB_ERR_INTERNAL, "bandwidth: two measurements gave an "
                  "impossible figure: %s", bad);
}

/* Seconds a process waits for another's measurement (a few seconds each;
   the ranks of one host in turn where none can be stored) */
#define BW_LOCK_WAIT_S 300.0

/* A cache that cannot be read or written only costs a measurement. */
odb_status odb_bandwidth_get(const odb_topo *t, int mode, odb_bandwidth *bw) {
  char dir[PATH_MAX], path[PATH_MAX], why[200];
  odb_bw_machine m;
  odb_bandwidth old;
  int have_dir, got = 0, lock;
  odb_status st;
  if (!bw) return ODB_FAIL(ODB_ERR_ARG, "bandwidth: bw must not be NULL");
  odb_bandwidth_fingerprint(t, &m);
  have_dir = odb_bwfile_path("bandwidth.json", dir, path, sizeof dir);
  why[0] = '\0';
  if (have_dir) got = load_cpu(path, &m, &old, why, sizeof why);
  if (got == 1 && mode == ODB_BW_CACHED) {
    *bw = old;
    return ODB_OK;
  }
  /* one measurement at a time on this machine (odb_bwfile_lock); a
     process that waited looks at the cache again */
  lock = have_dir ? odb_bwfile_lock(dir, "bandwidth.lock", BW_LOCK_WAIT_S) : -1;
  if (lock >= 0 && mode == ODB_BW_CACHED) {
    why[0] = '\0';
    got = load_cpu(path, &m, &old, why, sizeof why);
    if (got == 1) {
      odb_bwfile_unlock(lock);
      *bw = old;
      return ODB_OK;
    }
  }
  st = measure_possible(t, bw);
  if (st != ODB_OK) {
    odb_bwfile_unlock(lock);
    return st;
  }
  bw->from_cache = 0;
  if (got < 0)
    snprintf(bw->refused, sizeof bw->refused, "cached entry refused: "
             "%.200s; measured again", why);
  if (have_dir && odb_bandwidth_cacheable(bw) &&
      (mode == ODB_BW_REPLACE || got != 1 || old.read_1t < bw->read_1t))
    (void)odb_bwfile_store(dir, path, write_cpu, bw);
  odb_bwfile_unlock(lock);
  return ODB_OK;
}

/* Like odb_bandwidth_get without the measurement. */
odb_status odb_bandwidth_cached(const odb_topo *t, odb_bandwidth *bw) {
  char dir[PATH_MAX], path[PATH_MAX], why[200];
  odb_bw_machine m;
  int got = 0;
  if (!bw) return ODB_FAIL(ODB_ERR_ARG, "bandwidth: bw must not be NULL");
  odb_bandwidth_fingerprint(t, &m);
  if (odb_bwfile_path("bandwidth.json", dir, path, sizeof dir))
    got = load_cpu(path, &m, bw, why, sizeof why);
  if (got == 1) return ODB_OK;
  memset(bw, 0, sizeof *bw);
  if (got < 0)
    return ODB_FAIL(ODB_ERR_IO, "cached bandwidth refused: %s (run "
                    "'odebench info')", why);
  return ODB_FAIL(ODB_ERR_IO, "no cached bandwidth for this machine (run "
                  "'odebench info')");
}

/* }==================================================================== */

/* {====================================================================
** GPU figures and their cache files (one per device)
** ===================================================================== */

typedef struct gpu_entry {
  odb_gpu_bandwidth *g;
  long long version, driver;
  double written;
} gpu_entry;

/* Stores one member of a GPU cache object; unknown keys pass. */
static void gpu_member(void *ud, const char *key, const char *s, double v) {
  gpu_entry *e = ud;
  odb_gpu_bandwidth *g = e->g;
  if (s) {
    if (!strcmp(key, "device")) set_text(g->name, sizeof g->name, s);
    else if (!strcmp(key, "pci_bus_id"))
      set_text(g->pci_bus_id, sizeof g->pci_bus_id, s);
    else if (!strcmp(key, "host")) set_text(g->host, sizeof g->host, s);
    else if (!strcmp(key, "measured_at"))
      set_text(g->measured_at, sizeof g->measured_at, s);
    return;
  }
  if (!strcmp(key, "version")) e->version = odb_bwfile_count(v);
  else if (!strcmp(key, "driver_version")) e->driver = odb_bwfile_count(v);
  else if (!strcmp(key, "written_at")) e->written = v;
  else if (!strcmp(key, "read")) g->read = v;
  else if (!strcmp(key, "copy")) g->copy = v;
}

/* The identity of the device (name, PCI id, driver, host) and its peak. */
static odb_status gpu_identify(odb_backend *b, odb_gpu_bandwidth *g) {
  odb_device_info d;
  memset(g, 0, sizeof *g);
  ODB_TRY(odb_backend_query(b, &d));
  set_text(g->name, sizeof g->name, d.name);
  set_text(g->pci_bus_id, sizeof g->pci_bus_id,
           d.pci_bus_id[0] ? d.pci_bus_id : "device");
  g->driver_version = d.driver_version;
  if (gethostname(g->host, sizeof g->host - 1) != 0)
    snprintf(g->host, sizeof g->host, "unknown");
  /* double data rate: two transfers a memory clock on each bus line */
  if (d.mem_clock_mhz > 0 && d.mem_bus_bits > 0)
    g->peak = d.mem_clock_mhz * 1e6 * 2 * (d.mem_bus_bits / 8.0);
  return ODB_OK;
}

/* bandwidth-gpu-<PCI id>.json, with characters other than [0-9A-Za-z.-]
   as '_'. */
static void gpu_file_name(const odb_gpu_bandwidth *g, char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "bandwidth-gpu-%s.json",
                              g->pci_bus_id);
  for (size_t i = 14; i < n && i < cap && out[i] != '\0'; ++i) {
    char c = out[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
          (c >= 'A' && c <= 'Z') || c == '.' || c == '-'))
      out[i] = '_';
  }
}

/* As load_cpu, for the device `want` identifies (peak included). */
static int load_gpu(const char *path, const odb_gpu_bandwidth *want,
                    odb_gpu_bandwidth *g, char *why, size_t cap) {
  char *text = odb_bwfile_slurp(path);
  gpu_entry e;
  const char *bad = NULL;
  int ok;
  why[0] = '\0';
  if (!text) return 0;
  memset(g, 0, sizeof *g);
  e.g = g;
  e.version = e.driver = 0;
  e.written = NAN;
  ok = odb_bwfile_parse(text, gpu_member, &e);
  free(text);
  g->driver_version = e.driver >= 0 && e.driver <= INT_MAX ? (int)e.driver
                                                           : -1;
  g->peak = want->peak;
  if (!ok) bad = "not a flat JSON object";
  else if (e.version != BW_GPU_CACHE_VERSION) bad = "another version";
  else if (strcmp(g->host, want->host)) {
    snprintf(check_why, sizeof check_why, "measured on host '%.60s', this "
             "is '%.60s'", g->host, want->host);
    bad = check_why;
  } else if (strcmp(g->name, want->name) ||
             strcmp(g->pci_bus_id, want->pci_bus_id) ||
             g->driver_version != want->driver_version) {
    snprintf(check_why, sizeof check_why, "measured on another device "
             "('%.32s' at %.16s, driver %d; this is '%.32s' at %.16s, "
             "driver %d)", g->name, g->pci_bus_id, g->driver_version,
             want->name, want->pci_bus_id, want->driver_version);
    bad = check_why;
  } else if (!(bad = written_before_boot(e.written)))
    bad = odb_bandwidth_gpu_check(g);
  if (bad) {
    snprintf(why, cap, "%s", bad);
    return -1;
  }
  g->from_cache = 1;
  return 1;
}

static void write_gpu(FILE *f, const void *ud) {
  const odb_gpu_bandwidth *g = ud;
  odb_json j;
  odb_json_init(&j, f);
  odb_json_begin_object(&j, NULL);
  odb_json_integer(&j, "version", BW_GPU_CACHE_VERSION);
  odb_json_string(&j, "device", g->name);
  odb_json_string(&j, "pci_bus_id", g->pci_bus_id);
  odb_json_integer(&j, "driver_version", g->driver_version);
  odb_json_string(&j, "host", g->host);
  odb_json_integer(&j, "written_at", (long long)time(NULL));
  odb_json_number(&j, "read", g->read);
  odb_json_number(&j, "copy", g->copy);
  odb_json_number(&j, "peak", g->peak);
  odb_json_string(&j, "measured_at", g->measured_at);
  odb_json_end_object(&j);
}

odb_status odb_bandwidth_gpu_get(odb_backend *b, int mode,
                                 odb_gpu_bandwidth *g) {
  char dir[PATH_MAX], path[PATH_MAX], name[96], why[200];
  odb_gpu_bandwidth want, old;
  double rd = 0, cp = 0;
  const char *bad;
  int have_dir, got = 0;
  if (!b || !g)
    return ODB_FAIL(ODB_ERR_ARG, "GPU bandwidth needs a backend");
  ODB_TRY(gpu_identify(b, &want));
  gpu_file_name(&want, name, sizeof name);
  have_dir = odb_bwfile_path(name, dir, path, sizeof dir);
  why[0] = '\0';
  if (have_dir) got = load_gpu(path, &want, &old, why, sizeof why);
  if (got == 1 && mode == ODB_BW_CACHED) {
    *g = old;
    return ODB_OK;
  }
  ODB_TRY(odb_backend_read_bandwidth(b, &rd));
  ODB_TRY(odb_backend_copy_bandwidth(b, &cp));
  *g = want;
  g->read = rd * 1e9;
  g->copy = cp * 1e9;
  iso_now(g->measured_at, sizeof g->measured_at);
  if ((bad = odb_bandwidth_gpu_check(g))) {
    snprintf(g->refused, sizeof g->refused, "measured now: %.200s; used "
             "for this run, not cached", bad);
    return ODB_OK;
  }
  if (got < 0)
    snprintf(g->refused, sizeof g->refused, "cached entry refused: %.200s; "
             "measured again", why);
  if (have_dir && (mode == ODB_BW_REPLACE || got != 1 || old.copy < g->copy))
    (void)odb_bwfile_store(dir, path, write_gpu, g);
  return ODB_OK;
}

/* }==================================================================== */
