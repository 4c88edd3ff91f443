/* odb_bandwidth.c - read and copy bandwidth of main memory, and its cache. */
#include "odb_bandwidth.h"
#include "odb_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "odb_cachedir.h"
#include "odb_json.h"
#include "odb_results.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define BW_REPS 5
#define BW_MIN_REPS 3
#define BW_SERIES_S 1.2
#define BW_MIN_ARRAY (64 * MIB)
#define BW_CACHE_VERSION 4   /* 2: four read streams; 3: flops_1t;
                                4: stored only when measured quiet by an
                                optimized build without sanitizers */

/* Eight doubles: 64 bytes, the unit of every slice. */
typedef double v4d __attribute__((vector_size(32)));

/* Written once per measurement so the sums cannot be optimized away. */
static volatile double bw_sink;

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
** A team of threads, one slice each, released together by a barrier
** ===================================================================== */

enum { OP_TOUCH, OP_READ, OP_COPY, OP_QUIT };

typedef struct team {
  pthread_barrier_t start, end;
  pthread_mutex_t gate;     /* held by the creator until the team is whole */
  int abort;                /* set under gate when creation failed */
  int nthreads;
  int op;
  double *a, *b;
  size_t n;                 /* doubles per array, a multiple of 32*nthreads */
  hwloc_topology_t topo;    /* NULL: do not pin */
  double *sums;             /* one per thread */
  double *cpu;              /* one per thread: CPU seconds of the last op */
} team;

typedef struct worker {
  team *tm;
  int idx;
} worker;

/* Binds the calling thread to core idx (modulo cores); errors are ignored. */
static void pin_to_core(hwloc_topology_t topo, int idx) {
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_obj_t core;
  hwloc_bitmap_t set;
  if (ncores <= 0) return;
  core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(idx % ncores));
  if (!core || !core->cpuset) return;
  set = hwloc_bitmap_dup(core->cpuset);
  if (!set) return;
  hwloc_bitmap_singlify(set);
  (void)hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
}

/* CPU seconds this thread has run (only differences mean anything). */
static double thread_cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs ops on this thread's slice between the start and end barriers. */
static void *worker_main(void *arg) {
  worker *w = arg;
  team *tm = w->tm;
  size_t chunk = tm->n / (size_t)tm->nthreads;
  size_t lo = chunk * (size_t)w->idx;
  int quit;
  pthread_mutex_lock(&tm->gate);
  quit = tm->abort;
  pthread_mutex_unlock(&tm->gate);
  if (quit) return NULL;
  if (tm->topo) pin_to_core(tm->topo, w->idx);
  for (;;) {
    double c0;
    pthread_barrier_wait(&tm->start);
    if (tm->op == OP_QUIT) break;
    c0 = thread_cpu_seconds();
    if (tm->op == OP_TOUCH) touch_kernel(tm->a + lo, tm->b + lo, chunk);
    else if (tm->op == OP_READ)
      tm->sums[w->idx] = read_kernel(tm->a + lo, chunk);
    else copy_kernel(tm->b + lo, tm->a + lo, chunk);
    tm->cpu[w->idx] = thread_cpu_seconds() - c0;
    pthread_barrier_wait(&tm->end);
  }
  return NULL;
}

/* The share of wall seconds a thread that ran cpu seconds was on a core
   (at most 1; 0 for no wall time). */
static double cpu_share(double cpu, double wall) {
  if (!(wall > 0)) return 0;
  return cpu >= wall ? 1 : cpu / wall;
}

/*
** Releases the team for one op and returns the seconds until all are done;
** *share: the smallest share of them a thread of the team ran on a core.
*/
static double team_run(team *tm, int op, double *share) {
  double t0, t1, s = 0, least = 1;
  tm->op = op;
  pthread_barrier_wait(&tm->start);
  t0 = odb_clock_now();
  pthread_barrier_wait(&tm->end);
  t1 = odb_clock_now();
  if (op == OP_READ) {
    for (int i = 0; i < tm->nthreads; ++i) s += tm->sums[i];
    bw_sink = s;
  }
  for (int i = 0; i < tm->nthreads; ++i) {
    double c = cpu_share(tm->cpu[i], t1 - t0);
    if (c < least) least = c;
  }
  *share = least;
  return t1 - t0;
}

/*
** Starts nthreads workers (th and ws hold nthreads entries). On failure no
** thread is left running and the team's resources are released.
*/
static odb_status team_start(team *tm, pthread_t *th, worker *ws) {
  int k;
  if (pthread_barrier_init(&tm->start, NULL, (unsigned)tm->nthreads + 1) ||
      pthread_barrier_init(&tm->end, NULL, (unsigned)tm->nthreads + 1) ||
      pthread_mutex_init(&tm->gate, NULL))
    return ODB_FAIL(ODB_ERR_INTERNAL, "bandwidth: cannot create barriers");
  pthread_mutex_lock(&tm->gate);
  for (k = 0; k < tm->nthreads; ++k) {
    ws[k].tm = tm;
    ws[k].idx = k;
    if (pthread_create(&th[k], NULL, worker_main, &ws[k]) != 0) break;
  }
  if (k < tm->nthreads) tm->abort = 1;
  pthread_mutex_unlock(&tm->gate);
  if (!tm->abort) return ODB_OK;
  for (int i = 0; i < k; ++i) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&tm->start);
  pthread_barrier_destroy(&tm->end);
  pthread_mutex_destroy(&tm->gate);
  return ODB_FAIL(ODB_ERR_INTERNAL, "bandwidth: cannot start %d threads",
                  tm->nthreads);
}

/* Stops and joins a started team. */
static void team_stop(team *tm, pthread_t *th) {
  tm->op = OP_QUIT;
  pthread_barrier_wait(&tm->start);
  for (int i = 0; i < tm->nthreads; ++i) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&tm->start);
  pthread_barrier_destroy(&tm->end);
  pthread_mutex_destroy(&tm->gate);
}

/*
** Best (shortest) of up to BW_REPS timings of op: at least BW_MIN_REPS,
** further ones only while the series has taken less than BW_SERIES_S, so
** a slow machine still finishes in a few seconds. *share: that of the
** best timing (team_run).
*/
static double best_time(team *tm, int op, double *share) {
  double best = INFINITY, spent = 0;
  *share = 0;
  for (int r = 0; r < BW_REPS; ++r) {
    double s, c;
    if (r >= BW_MIN_REPS && spent > BW_SERIES_S) break;
    s = team_run(tm, op, &c);
    spent += s;
    if (s < best) {
      best = s;
      *share = c;
    }
  }
  return best;
}

/*
** With a started team: read and copy bandwidth in bytes per second (copy
** counts the bytes read and written); touches the arrays first when asked.
** *share (share may be NULL): the smaller of the two best timings'
** shares.
*/
static void team_measure(team *tm, int touch, double *read_bw,
                         double *copy_bw, double *share) {
  double bytes = (double)tm->n * sizeof(double), s, c_read, c_copy;
  if (touch) team_run(tm, OP_TOUCH, &c_read);
  s = best_time(tm, OP_READ, &c_read);
  *read_bw = s > 0 && isfinite(s) ? bytes / s : 0;
  s = best_time(tm, OP_COPY, &c_copy);
  *copy_bw = s > 0 && isfinite(s) ? 2 * bytes / s : 0;
  if (share) *share = c_read < c_copy ? c_read : c_copy;
}

/* Measures with nthreads threads on the arrays of tm (*share: as
   team_measure's). */
static odb_status measure_with(team *tm, int nthreads, int touch,
                               double *read_bw, double *copy_bw,
                               double *share) {
  pthread_t *th = calloc((size_t)nthreads, sizeof *th);
  worker *ws = calloc((size_t)nthreads, sizeof *ws);
  double *sums = calloc((size_t)nthreads, sizeof *sums);
  double *cpu = calloc((size_t)nthreads, sizeof *cpu);
  odb_status st = ODB_OK;
  if (!th || !ws || !sums || !cpu) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "bandwidth: out of memory for %d threads",
                  nthreads);
    goto done;
  }
  tm->nthreads = nthreads;
  tm->sums = sums;
  tm->cpu = cpu;
  tm->abort = 0;
  if ((st = team_start(tm, th, ws)) != ODB_OK) goto done;
  team_measure(tm, touch, read_bw, copy_bw, share);
  team_stop(tm, th);
done:
  free(th);
  free(ws);
  free(sums);
  free(cpu);
  tm->sums = NULL;
  tm->cpu = NULL;
  return st;
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
  size_t want = 4 * odb_topo_llc_total(t);
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

/*
** t may be NULL (one thread per online CPU, no pinning). Pins only when
** t->hwloc describes this machine (not a synthetic topology).
*/
odb_status odb_bandwidth_measure(const odb_topo *t, odb_bandwidth *bw) {
  team tm;
  size_t bytes;
  int nall;
  double share_1t = 0, share_flops = 0;
  odb_status st;
  if (!bw) return ODB_FAIL(ODB_ERR_ARG, "bandwidth: bw must not be NULL");
  memset(bw, 0, sizeof *bw);
  memset(&tm, 0, sizeof tm);
  nall = t && t->cores > 0 ? t->cores : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nall < 1) nall = 1;
  if (t && t->hwloc &&
      hwloc_topology_is_thissystem((hwloc_topology_t)t->hwloc))
    tm.topo = (hwloc_topology_t)t->hwloc;
  bytes = array_bytes(t);
  for (;;) {   /* halve the size until both arrays fit */
    bytes -= bytes % (256 * (size_t)nall);   /* chunks: multiples of 32 */
    tm.a = map_array(bytes);
    tm.b = tm.a ? map_array(bytes) : NULL;
    if (tm.b) break;
    if (tm.a) munmap(tm.a, bytes);
    if (bytes / 2 < BW_MIN_ARRAY / 4)
      return ODB_FAIL(ODB_ERR_NOMEM, "bandwidth: cannot map two arrays of "
                      "%zu MiB", bytes / MIB);
    bytes /= 2;
  }
  tm.n = bytes / sizeof(double);
  st = measure_with(&tm, nall, 1, &bw->read_all, &bw->copy_all, NULL);
  if (st == ODB_OK)
    st = measure_with(&tm, 1, 0, &bw->read_1t, &bw->copy_1t, &share_1t);
  munmap(tm.a, bytes);
  munmap(tm.b, bytes);
  if (st != ODB_OK) return st;
  bw->threads_all = nall;
  bw->array_bytes = (double)bytes;
  bw->flops_1t = measure_flops(&share_flops);
  /* the one-thread timings decide: with all cores, a CPU quota below the
     cores (a container's) would read as busy on every run */
  bw->cpu_share = share_1t < share_flops ? share_1t : share_flops;
  bw->slow_build = slow_build();
  iso_now(bw->measured_at, sizeof bw->measured_at);
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

/* Assumes a finite, positive read_1t for a meaningful floor; else 0. */
double odb_bandwidth_floor_seconds(const odb_bandwidth *bw, double rbytes,
                                   double wbytes) {
  double rd, wr, inv_w;
  if (!bw || !(bw->read_1t > 0)) return 0;
  rd = bw->read_1t;
  inv_w = bw->copy_1t > 0 ? 2 / bw->copy_1t - 1 / rd : 0;
  wr = inv_w > 0 ? 1 / inv_w : bw->copy_1t;
  if (!(wr > 0)) wr = rd;
  return rbytes / rd + wbytes / wr;
}

/* }==================================================================== */

/* {====================================================================
** Cache file
** ===================================================================== */

/* Copies src into dst[cap], truncated. */
static void set_text(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* What identifies the machine a cache entry belongs to. */
typedef struct bw_key {
  char host[256];
  char cpu[128];
  int cores;
} bw_key;

/* Fills the key of this machine from t (NULL: online CPUs, unknown model). */
static void machine_key(const odb_topo *t, bw_key *k) {
  memset(k, 0, sizeof *k);
  if (gethostname(k->host, sizeof k->host - 1) != 0)
    snprintf(k->host, sizeof k->host, "unknown");
  set_text(k->cpu, sizeof k->cpu,
           t && t->cpu_model[0] ? t->cpu_model : "unknown");
  k->cores = t && t->cores > 0 ? t->cores
                               : (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* The cache directory (created), or 0 when there is none: a cache that
   cannot be used is no error, the figures are then measured each run. */
static int cache_dir(char *out, size_t cap) {
  int ok = odb_cache_dir("", out, cap) == ODB_OK;
  odb_clear_error();
  return ok;
}

/* ---- a minimal reader for the flat object this file writes ---- */

/* Skips JSON white space. */
static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
  return p;
}

/* Appends code point c (< 0x10000) to out as UTF-8 if it fits. */
static void put_utf8(char *out, size_t cap, size_t *len, unsigned c) {
  char tmp[3];
  size_t n;
  if (c < 0x80) { tmp[0] = (char)c; n = 1; }
  else if (c < 0x800) {
    tmp[0] = (char)(0xc0 | (c >> 6)); tmp[1] = (char)(0x80 | (c & 0x3f));
    n = 2;
  } else {
    tmp[0] = (char)(0xe0 | (c >> 12));
    tmp[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    tmp[2] = (char)(0x80 | (c & 0x3f));
    n = 3;
  }
  if (*len + n < cap) {
    memcpy(out + *len, tmp, n);
    *len += n;
  }
}

/* The value of hex digit c, -1 for anything else (also '\0'). */
static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/*
** Reads a string literal at p (which must point at '"') into out (truncated
** to cap-1 bytes). Returns the position after the closing quote, or NULL.
*/
static const char *read_string(const char *p, char *out, size_t cap) {
  size_t len = 0;
  if (*p != '"') return NULL;
  for (++p; *p && *p != '"'; ++p) {
    char c = *p;
    if (c == '\\') {
      unsigned u;
      switch (*++p) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'u':   /* exactly four hex digits, all before the string ends */
        u = 0;
        for (int i = 1; i <= 4; ++i) {
          int d = hex_digit(p[i]);
          if (d < 0) return NULL;
          u = u * 16 + (unsigned)d;
        }
        if (u == 0) return NULL;   /* no NUL inside a C string */
        put_utf8(out, cap, &len, u);
        p += 4;
        continue;
      case '\0': return NULL;
      default: c = *p;   /* \" \\ \/ */
      }
    }
    if (len + 1 < cap) out[len++] = c;
  }
  if (*p != '"') return NULL;
  out[len] = '\0';
  return p + 1;
}

/* Stores one member of the cache object into bw or k; unknown keys pass. */
static void take_member(const char *key, const char *s, double v, int is_str,
                        odb_bandwidth *bw, bw_key *k, int *version) {
  if (is_str) {
    if (!strcmp(key, "host")) set_text(k->host, sizeof k->host, s);
    else if (!strcmp(key, "cpu_model")) set_text(k->cpu, sizeof k->cpu, s);
    else if (!strcmp(key, "measured_at"))
      set_text(bw->measured_at, sizeof bw->measured_at, s);
    return;
  }
  /* Counts outside 0..2^20 (or not integers) are kept as -1, which no
     check below accepts; converting them to int would be undefined. */
  int count = isfinite(v) && v >= 0 && v <= (double)(1 << 20) &&
              v == floor(v) ? (int)v : -1;
  if (!strcmp(key, "version")) *version = count;
  else if (!strcmp(key, "cores")) k->cores = count;
  else if (!strcmp(key, "threads_all")) bw->threads_all = count;
  else if (!strcmp(key, "read_1t")) bw->read_1t = v;
  else if (!strcmp(key, "copy_1t")) bw->copy_1t = v;
  else if (!strcmp(key, "read_all")) bw->read_all = v;
  else if (!strcmp(key, "copy_all")) bw->copy_all = v;
  else if (!strcmp(key, "flops_1t")) bw->flops_1t = v;
  else if (!strcmp(key, "array_bytes")) bw->array_bytes = v;
}

/*
** Parses {"key": string-or-number, ...}; returns 1 when the text is such an
** object of the current version with positive bandwidths.
*/
static int parse_cache(const char *p, odb_bandwidth *bw, bw_key *k) {
  char key[64], s[256];
  int version = 0;
  memset(bw, 0, sizeof *bw);
  memset(k, 0, sizeof *k);
  p = skip_ws(p);
  if (*p++ != '{') return 0;
  for (;;) {
    p = skip_ws(p);
    if (*p == '}') break;
    if (!(p = read_string(p, key, sizeof key))) return 0;
    p = skip_ws(p);
    if (*p++ != ':') return 0;
    p = skip_ws(p);
    if (*p == '"') {
      if (!(p = read_string(p, s, sizeof s))) return 0;
      take_member(key, s, 0, 1, bw, k, &version);
    } else {
      char *end;
      double v = strtod(p, &end);
      if (end == p) return 0;
      take_member(key, NULL, v, 0, bw, k, &version);
      p = end;
    }
    p = skip_ws(p);
    if (*p == ',') ++p;
    else if (*p != '}') return 0;
  }
  /* Every figure a floor or a roof is computed from must be finite and
     positive (flops_1t may be 0: an older measurement without it). */
  return version == BW_CACHE_VERSION && bw->read_1t > 0 && bw->copy_1t > 0 &&
         bw->read_all > 0 && bw->copy_all > 0 && isfinite(bw->read_1t) &&
         isfinite(bw->copy_1t) && isfinite(bw->read_all) &&
         isfinite(bw->copy_all) && bw->threads_all >= 1 &&
         isfinite(bw->flops_1t) && bw->flops_1t >= 0 &&
         isfinite(bw->array_bytes) && bw->array_bytes > 0 && k->cores >= 0;
}

/* Reads the whole (small) file at path; NULL when absent or too large. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf;
  size_t n;
  if (!f) return NULL;
  buf = malloc(16384);
  if (!buf) {
    fclose(f);
    return NULL;
  }
  n = fread(buf, 1, 16383, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* 1 when path holds figures for machine k. */
static int load_cache(const char *path, const bw_key *k, odb_bandwidth *bw) {
  char *text = slurp(path);
  bw_key got;
  int ok;
  if (!text) return 0;
  ok = parse_cache(text, bw, &got) && !strcmp(got.host, k->host) &&
       !strcmp(got.cpu, k->cpu) && got.cores == k->cores;
  free(text);
  return ok;
}

/* The cache object; the field names are the ones parse_cache knows. */
static void write_cache_json(FILE *f, const odb_bandwidth *bw,
                             const bw_key *k) {
  odb_json j;
  odb_json_init(&j, f);
  odb_json_begin_object(&j, NULL);
  odb_json_integer(&j, "version", BW_CACHE_VERSION);
  odb_json_string(&j, "host", k->host);
  odb_json_string(&j, "cpu_model", k->cpu);
  odb_json_integer(&j, "cores", k->cores);
  odb_json_number(&j, "read_1t", bw->read_1t);
  odb_json_number(&j, "copy_1t", bw->copy_1t);
  odb_json_number(&j, "read_all", bw->read_all);
  odb_json_number(&j, "copy_all", bw->copy_all);
  odb_json_number(&j, "flops_1t", bw->flops_1t);
  odb_json_integer(&j, "threads_all", bw->threads_all);
  odb_json_number(&j, "array_bytes", bw->array_bytes);
  odb_json_string(&j, "measured_at", bw->measured_at);
  odb_json_end_object(&j);
}

/* Writes path through a temporary file and rename(); 0 on failure (the
   temporary file is removed), 1 on success. */
static int store_cache(const char *dir, const char *path,
                       const odb_bandwidth *bw, const bw_key *k) {
  char tmp[PATH_MAX];
  FILE *f;
  int fd, ok;
  if (snprintf(tmp, sizeof tmp, "%s/.bandwidth.json.tmp.%ld", dir,
               (long)getpid()) >= (int)sizeof tmp)
    return 0;
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    return 0;
  }
  write_cache_json(f, bw, k);
  ok = !ferror(f) && fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = (fclose(f) == 0) && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  return ok;
}

/* A cache that cannot be read or written only costs a measurement. */
odb_status odb_bandwidth_get(const odb_topo *t, int remeasure,
                             odb_bandwidth *bw) {
  char dir[PATH_MAX], path[PATH_MAX];
  bw_key k;
  int have_dir;
  if (!bw) return ODB_FAIL(ODB_ERR_ARG, "bandwidth: bw must not be NULL");
  machine_key(t, &k);
  have_dir = cache_dir(dir, sizeof dir) &&
             snprintf(path, sizeof path, "%s/bandwidth.json", dir) <
                 (int)sizeof path;
  if (have_dir && !remeasure && load_cache(path, &k, bw)) {
    bw->from_cache = 1;
    return ODB_OK;
  }
  ODB_TRY(odb_bandwidth_measure(t, bw));
  bw->from_cache = 0;
  if (have_dir && odb_bandwidth_cacheable(bw))
    (void)store_cache(dir, path, bw, &k);
  return ODB_OK;
}

/* Like odb_bandwidth_get without the measurement. */
odb_status odb_bandwidth_cached(const odb_topo *t, odb_bandwidth *bw) {
  char dir[PATH_MAX], path[PATH_MAX];
  bw_key k;
  if (!bw) return ODB_FAIL(ODB_ERR_ARG, "bandwidth: bw must not be NULL");
  machine_key(t, &k);
  if (cache_dir(dir, sizeof dir) &&
      snprintf(path, sizeof path, "%s/bandwidth.json", dir) <
          (int)sizeof path &&
      load_cache(path, &k, bw)) {
    bw->from_cache = 1;
    return ODB_OK;
  }
  return ODB_FAIL(ODB_ERR_IO, "no cached bandwidth for this machine (run "
                  "'odebench info')");
}

/* }==================================================================== */
