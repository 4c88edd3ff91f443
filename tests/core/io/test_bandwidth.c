/* test_bandwidth.c - the bandwidth figures and their cache: the thread
   team's measurement gives possible figures; the cache keeps only figures
   measured on a quiet machine by an optimized build (a measurement while
   spinning threads hold every core is seen as busy and not stored); an
   impossible cached entry (a GPU-sized figure in a CPU field, another
   machine's, a non-finite one, one from before the boot, a GPU figure
   above its device's peak or of another device) is refused and measured
   again; the fingerprint survives a round trip. Timings are not asserted,
   only that figures are finite, positive and consistent. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <math.h>
#include <time.h>

#include "odb_bandwidth.h"
#include "odb_results.h"   /* odb_mkdirs */
#include "tap.h"
#include "tmp_cache.h"

static atomic_int spin_stop;

/* Burns a core until spin_stop is set. */
static void *spin_main(void *arg) {
  volatile unsigned long x = 0;
  (void)arg;
  while (!atomic_load_explicit(&spin_stop, memory_order_relaxed)) ++x;
  return NULL;
}

/* 1 when the temporary cache holds a bandwidth file. */
static int cache_file_exists(const tmp_cache *c) {
  char path[160];
  snprintf(path, sizeof path, "%s/odebench/bandwidth.json", c->base);
  return access(path, F_OK) == 0;
}

/* Removes the bandwidth file (if any) of the temporary cache. */
static void cache_file_remove(const tmp_cache *c) {
  char path[160];
  snprintf(path, sizeof path, "%s/odebench/bandwidth.json", c->base);
  remove(path);
}

/* Measures with three spinning threads a core: the measuring threads get
   about a quarter of their cores, which must read as busy. */
static void test_busy(const tmp_cache *c) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nspin = (int)(ncpu > 0 ? 3 * ncpu : 6), started = 0;
  pthread_t *th = calloc((size_t)nspin, sizeof *th);
  odb_bandwidth bw;
  odb_status st;
  atomic_store(&spin_stop, 0);
  for (int i = 0; th && i < nspin; ++i)
    if (pthread_create(&th[started], NULL, spin_main, NULL) == 0) ++started;
  st = odb_bandwidth_get(NULL, ODB_BW_REPLACE, &bw);
  atomic_store(&spin_stop, 1);
  for (int i = 0; i < started; ++i) pthread_join(th[i], NULL);
  free(th);
  tap_ok(started == nspin, "busy: %d spinning threads started", nspin);
  tap_ok(st == ODB_OK && bw.read_1t > 0, "busy: measured (read %.2f GB/s)",
         bw.read_1t / 1e9);
  tap_ok(!bw.from_cache && bw.cpu_share < ODB_BW_QUIET_SHARE,
         "busy: the threads ran %.0f%% of the time (below %.0f%%)",
         100 * bw.cpu_share, 100 * ODB_BW_QUIET_SHARE);
  tap_ok(!odb_bandwidth_quiet(&bw) && !odb_bandwidth_cacheable(&bw) &&
         !cache_file_exists(c), "busy: not quiet, and nothing cached");
}

/* Without spinners: stored exactly when the measurement was quiet and this
   build optimized without sanitizers (the test machine may be busy with
   other tests, and the CI runs this test in a sanitizer build too, so
   either outcome is allowed), and a stored figure comes back. */
static void test_store_iff_cacheable(const tmp_cache *c) {
  odb_bandwidth bw, again;
  odb_status st = odb_bandwidth_get(NULL, ODB_BW_REPLACE, &bw);
  int keep = st == ODB_OK && odb_bandwidth_cacheable(&bw);
  tap_ok(st == ODB_OK, "measured (threads ran %.0f%% of the time; %s build)",
         100 * bw.cpu_share, bw.slow_build ? "a debug or sanitizer"
                                           : "an optimized");
  tap_ok(cache_file_exists(c) == keep &&
         keep == (odb_bandwidth_quiet(&bw) && !bw.slow_build),
         "cached exactly when quiet and optimized (%s)",
         keep ? "cached" : "not cached");
  if (keep) {
    st = odb_bandwidth_cached(NULL, &again);
    tap_ok(st == ODB_OK && again.from_cache && odb_bandwidth_quiet(&again) &&
           again.read_1t == bw.read_1t,
           "the cached figures come back (read %.2f GB/s)", again.read_1t / 1e9);
  }
  cache_file_remove(c);
}

/* Writes text (len bytes) as the cache file. */
static void write_cache(const tmp_cache *c, const char *text, size_t len) {
  char dir[128], path[192];
  FILE *f;
  snprintf(dir, sizeof dir, "%s/odebench", c->base);
  odb_mkdirs(dir);
  snprintf(path, sizeof path, "%s/bandwidth.json", dir);
  if ((f = fopen(path, "wb"))) {
    fwrite(text, 1, len, f);
    fclose(f);
  }
}

/*
** Damaged cache files are refused, never read past their end: a file as
** long as the reader takes (16383 bytes) that ends inside a \u escape,
** escapes with fewer than four hex digits or a NUL, and counts and figures
** that are not finite or out of range. Under AddressSanitizer a read past
** the buffer aborts the test.
*/
static void test_damaged_cache(const tmp_cache *c) {
  static const char *const bad[] = {
    "{\"host\": \"\\u1",
    "{\"host\": \"\\u12\"}",
    "{\"host\": \"\\u0000\"}",
    "{\"version\": 1e300, \"cores\": -5, \"threads_all\": 1e300}",
    "{\"version\": 5, \"read_1t\": 1, \"copy_1t\": 1, \"read_all\": 1, "
    "\"copy_all\": 1, \"threads_all\": 2, \"array_bytes\": -1}",
  };
  size_t big = 16383;
  char *text = malloc(big + 1);
  odb_bandwidth bw;
  int refused = 0;
  if (!text) return;
  memset(text, ' ', big);
  memcpy(text, "{\"host\": \"", 10);
  memcpy(text + big - 4, "\\u1", 3);
  text[big - 1] = '1';
  write_cache(c, text, big);
  refused += odb_bandwidth_cached(NULL, &bw) != ODB_OK;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    write_cache(c, bad[i], strlen(bad[i]));
    refused += odb_bandwidth_cached(NULL, &bw) != ODB_OK;
  }
  odb_clear_error();
  tap_ok(refused == 1 + (int)(sizeof bad / sizeof bad[0]),
         "damaged cache files are refused (%d of %d)", refused,
         1 + (int)(sizeof bad / sizeof bad[0]));
  free(text);
  cache_file_remove(c);
}

/* {====== planted entries */

/* Sane figures of a 2-core machine (GB/s: read 10, copy 8 per thread). */
static void sane_figures(odb_bandwidth *bw) {
  memset(bw, 0, sizeof *bw);
  bw->ncounts = 2;
  bw->threads[0] = 1;
  bw->threads[1] = 2;
  bw->read[0] = bw->read_1t = 10e9;
  bw->copy[0] = bw->copy_1t = 8e9;
  bw->read[1] = bw->read_all = 18e9;
  bw->copy[1] = bw->copy_all = 14e9;
  bw->threads_all = 2;
  bw->flops_1t = 8e9;
  bw->array_bytes = 268435456;
  snprintf(bw->measured_at, sizeof bw->measured_at, "2024-05-01T12:00:00Z");
}

/*
** A cache entry of machine m written at `written` with read_t2 (and
** read_all) set to read2 and read_1t given as text (so that 1e999, an
** infinite figure, can be planted).
*/
static void plant_cpu(const tmp_cache *c, const odb_bw_machine *m,
                      double written, const char *read1, double read2) {
  char text[2048];
  int n = snprintf(text, sizeof text,
    "{\"version\": 5, \"host\": \"%s\", \"cpu_model\": \"%s\", \"cores\": "
    "%d, \"mem_mib\": %lld, \"kernel\": \"%s\", \"written_at\": %.0f, "
    "\"read_1t\": %s, \"copy_1t\": 8e9, \"read_all\": %.17g, \"copy_all\": "
    "1.4e10, \"read_t1\": %s, \"copy_t1\": 8e9, \"read_t2\": %.17g, "
    "\"copy_t2\": 1.4e10, \"flops_1t\": 8e9, \"threads_all\": 2, "
    "\"array_bytes\": 268435456, \"measured_at\": "
    "\"2024-05-01T12:00:00Z\"}\n", m->host, m->cpu, m->cores, m->mem_mib,
    m->kernel, written, read1, read2, read1, read2);
  write_cache(c, text, (size_t)n);
}

/* 1 when s contains sub. */
static int has(const char *s, const char *sub) {
  return s && strstr(s, sub) != NULL;
}

/*
** Each planted impossible entry: odb_bandwidth_cached refuses it with a
** message naming why, and odb_bandwidth_get measures again, says so in
** bw.refused, and gives possible figures.
*/
static void test_refused(const tmp_cache *c) {
  static const struct {
    const char *what, *read1;
    double read2;
    int other_kernel, other_host, before_boot;
    const char *why;
  } cases[] = {
    { "a GPU-sized figure in a 2-thread CPU field", "1e10", 4189.39e9,
      0, 0, 0, "read with 2 threads is 4189.39 GB/s, above 512 GB/s" },
    { "a non-finite figure", "1e999", 18e9, 0, 0, 0,
      "read with 1 thread is inf GB/s (not a finite positive figure)" },
    { "a figure of another kernel release", "1e10", 18e9, 1, 0, 0,
      "measured under kernel 'other-kernel'" },
    { "a figure of another host", "1e10", 18e9, 0, 1, 0,
      "measured on host 'another-host'" },
    { "a figure written before the last boot", "1e10", 18e9, 0, 0, 1,
      "written before the last boot" },
  };
  odb_bw_machine me;
  odb_bandwidth_fingerprint(NULL, &me);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    odb_bw_machine m = me;
    odb_bandwidth bw;
    odb_status st;
    if (cases[i].other_kernel) snprintf(m.kernel, sizeof m.kernel,
                                        "other-kernel");
    if (cases[i].other_host) snprintf(m.host, sizeof m.host, "another-host");
    plant_cpu(c, &m, cases[i].before_boot ? 1000.0 : (double)time(NULL),
              cases[i].read1, cases[i].read2);
    st = odb_bandwidth_cached(NULL, &bw);
    tap_ok(st == ODB_ERR_IO && has(odb_last_error(), cases[i].why),
           "%s: the cached entry is refused (%s)", cases[i].what,
           odb_last_error());
    odb_clear_error();
    st = odb_bandwidth_get(NULL, ODB_BW_CACHED, &bw);
    tap_ok(st == ODB_OK && !bw.from_cache &&
           has(bw.refused, "cached entry refused: ") &&
           has(bw.refused, cases[i].why) &&
           (odb_bandwidth_check(&bw) == NULL || !odb_bandwidth_cacheable(&bw)),
           "%s: measured again (read %.2f GB/s with 1 thread, %.2f with "
           "%d; %s)", cases[i].what, bw.read_1t / 1e9, bw.read_all / 1e9,
           bw.threads_all, bw.refused);
    cache_file_remove(c);
  }
  /* the same entry with possible figures is taken: the refusals above
     were for the planted figure, not the planting */
  plant_cpu(c, &me, (double)time(NULL), "1e10", 18e9);
  {
    odb_bandwidth bw;
    odb_status st = odb_bandwidth_cached(NULL, &bw);
    tap_ok(st == ODB_OK && bw.from_cache && bw.read_all == 18e9 &&
           bw.ncounts == 2 && bw.threads[1] == 2 && bw.read[1] == 18e9,
           "a possible planted entry is taken (read_all %.2f GB/s)",
           bw.read_all / 1e9);
    odb_clear_error();
  }
  cache_file_remove(c);
}

/* odb_bandwidth_store writes this machine's fingerprint, and the cached
   figures and fingerprint come back unchanged. */
static void test_round_trip(const tmp_cache *c) {
  odb_bandwidth bw, back;
  odb_bw_machine me;
  odb_status st;
  sane_figures(&bw);
  snprintf(bw.machine.host, sizeof bw.machine.host, "not-this-one");
  odb_bandwidth_fingerprint(NULL, &me);
  st = odb_bandwidth_store(NULL, &bw);
  tap_ok(st == ODB_OK, "stored");
  st = odb_bandwidth_cached(NULL, &back);
  tap_ok(st == ODB_OK && back.from_cache &&
         !strcmp(back.machine.host, me.host) &&
         !strcmp(back.machine.cpu, me.cpu) &&
         back.machine.cores == me.cores &&
         back.machine.mem_mib == me.mem_mib &&
         !strcmp(back.machine.kernel, me.kernel),
         "the fingerprint comes back (host %s, %d cores, %lld MiB, kernel "
         "%s)", back.machine.host, back.machine.cores, back.machine.mem_mib,
         back.machine.kernel);
  tap_ok(back.read_1t == bw.read_1t && back.copy_1t == bw.copy_1t &&
         back.read_all == bw.read_all && back.copy_all == bw.copy_all &&
         back.threads_all == 2 && back.ncounts == 2 &&
         back.threads[0] == 1 && back.threads[1] == 2 &&
         back.read[1] == 18e9 && back.copy[1] == 14e9 &&
         back.flops_1t == 8e9 &&
         !strcmp(back.measured_at, "2024-05-01T12:00:00Z"),
         "the figures come back unchanged");
  cache_file_remove(c);
}

/* The thread team's figures: finite, positive, ordered counts from 1 to
   all cores, all cores reading at least half of what one thread reads. */
static void test_team_figures(void) {
  odb_bandwidth bw;
  odb_status st = odb_bandwidth_measure(NULL, &bw);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int ordered = bw.ncounts >= 1 && bw.threads[0] == 1 &&
                bw.threads[bw.ncounts - 1] == bw.threads_all;
  for (int i = 1; i < bw.ncounts; ++i)
    ordered = ordered && bw.threads[i] > bw.threads[i - 1];
  tap_ok(st == ODB_OK && bw.threads_all == (int)ncpu && ordered,
         "measured with 1..%d threads in %d counts", bw.threads_all,
         bw.ncounts);
  tap_ok(isfinite(bw.read_1t) && bw.read_1t > 0 && isfinite(bw.copy_1t) &&
         bw.copy_1t > 0 && isfinite(bw.read_all) && bw.read_all > 0 &&
         isfinite(bw.copy_all) && bw.copy_all > 0 &&
         (odb_bandwidth_check(&bw) == NULL || !odb_bandwidth_cacheable(&bw)),
         "finite positive figures, consistent where they may be cached "
         "(read_all %.2f, read_1t %.2f GB/s)",
         bw.read_all / 1e9, bw.read_1t / 1e9);
  /* a quarter: the members share cores with whatever else runs (CI runs
     suites side by side), which only a busy machine's figure shows */
  tap_ok(isfinite(bw.flops_all) && bw.flops_all > 0.25 * bw.flops_1t,
         "all cores' FP64 rate %.2f GFLOP/s, one core's %.2f GFLOP/s",
         bw.flops_all / 1e9, bw.flops_1t / 1e9);
}

/* {====== a GPU without a GPU: a backend whose figures the test sets */

static double fake_read_gbs, fake_copy_gbs;
static int fake_driver = 12080;

/* A device of 1000 MHz memory on a 1024-bit bus: peak 256 GB/s. */
static odb_status fake_query(odb_backend *b, odb_device_info *d) {
  (void)b;
  snprintf(d->name, sizeof d->name, "Fake GPU");
  snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:01:00.0");
  d->driver_version = fake_driver;
  d->mem_clock_mhz = 1000;
  d->mem_bus_bits = 1024;
  return ODB_OK;
}

static odb_status fake_read(odb_backend *b, double *gbs) {
  (void)b;
  *gbs = fake_read_gbs;
  return ODB_OK;
}

static odb_status fake_copy(odb_backend *b, double *gbs) {
  (void)b;
  *gbs = fake_copy_gbs;
  return ODB_OK;
}

/* Plants a GPU entry for the fake device with the given figures. */
static void plant_gpu(const tmp_cache *c, int driver, double read,
                      double copy) {
  char dir[128], path[192], host[256] = "";
  FILE *f;
  snprintf(dir, sizeof dir, "%s/odebench", c->base);
  odb_mkdirs(dir);
  snprintf(path, sizeof path, "%s/bandwidth-gpu-0000_01_00.0.json", dir);
  gethostname(host, sizeof host - 1);
  if ((f = fopen(path, "w"))) {
    fprintf(f, "{\"version\": 1, \"device\": \"Fake GPU\", \"pci_bus_id\": "
            "\"0000:01:00.0\", \"driver_version\": %d, \"host\": \"%s\", "
            "\"written_at\": %lld, \"read\": %.17g, \"copy\": %.17g, "
            "\"measured_at\": \"2024-05-01T12:00:00Z\"}\n", driver, host,
            (long long)time(NULL), read, copy);
    fclose(f);
  }
}

static void test_gpu(const tmp_cache *c) {
  static const odb_backend_ops ops = {
    .name = "fake", .query = fake_query, .copy_bandwidth = fake_copy,
    .read_bandwidth = fake_read,
  };
  odb_backend b;
  odb_gpu_bandwidth g;
  odb_status st;
  memset(&b, 0, sizeof b);
  b.ops = &ops;
  fake_read_gbs = 200;
  fake_copy_gbs = 180;
  plant_gpu(c, fake_driver, 150e9, 4189.39e9);
  st = odb_bandwidth_gpu_get(&b, ODB_BW_CACHED, &g);
  tap_ok(st == ODB_OK && !g.from_cache && g.peak == 256e9 &&
         g.read == 200e9 && g.copy == 180e9 &&
         has(g.refused, "GPU copy is 4189.39 GB/s, above the device's peak "
             "of 256.00 GB/s"),
         "GPU: a copy figure above the peak is refused and measured again "
         "(%s)", g.refused);
  st = odb_bandwidth_gpu_get(&b, ODB_BW_CACHED, &g);
  tap_ok(st == ODB_OK && g.from_cache && g.copy == 180e9 && !g.refused[0],
         "GPU: the figure measured again is cached for the device");
  plant_gpu(c, fake_driver + 1, 150e9, 140e9);
  b.read_gbs = b.copy_gbs = 0;
  st = odb_bandwidth_gpu_get(&b, ODB_BW_CACHED, &g);
  tap_ok(st == ODB_OK && !g.from_cache && g.copy == 180e9 &&
         has(g.refused, "measured on another device ('Fake GPU' at "
             "0000:01:00.0, driver 12081; this is 'Fake GPU' at "
             "0000:01:00.0, driver 12080)"),
         "GPU: a figure of another driver is refused (%s)", g.refused);
  fake_copy_gbs = 300;   /* above the 256 GB/s peak: used, not stored */
  b.read_gbs = b.copy_gbs = 0;
  st = odb_bandwidth_gpu_get(&b, ODB_BW_REPLACE, &g);
  tap_ok(st == ODB_OK && g.copy == 300e9 &&
         has(g.refused, "measured now: GPU copy is 300.00 GB/s, above the "
             "device's peak of 256.00 GB/s; used for this run, not cached"),
         "GPU: a measurement above the peak is not cached (%s)", g.refused);
  st = odb_bandwidth_gpu_get(&b, ODB_BW_CACHED, &g);
  tap_ok(st == ODB_OK && g.from_cache && g.copy == 180e9,
         "GPU: the cache keeps the possible figure (%.0f GB/s)", g.copy / 1e9);
  {
    char path[192];
    snprintf(path, sizeof path,
             "%s/odebench/bandwidth-gpu-0000_01_00.0.json", c->base);
    remove(path);
  }
}

/* }====== */

/*
** Two processes asking for the figure at once with no cache (the ranks of
** mpirun on one host): they measure one at a time (odb_bwfile_lock), so
** where the first one's figure was stored the second takes it from the
** cache instead of measuring a machine the first keeps busy. Where it
** could not be stored (a busy test machine, a sanitizer build) both
** measured, one after the other; either way both have figures.
*/
static void test_together(const tmp_cache *c) {
  int fds[2], go[2];
  pid_t pid;
  odb_bandwidth a, b;
  odb_status sa = ODB_ERR_INTERNAL;
  ssize_t got = 0;
  cache_file_remove(c);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  if (pipe(fds) != 0 || pipe(go) != 0) {
    tap_ok(0, "together: pipes");
    return;
  }
  fflush(NULL);
  pid = fork();
  if (pid == 0) {   /* the other process: waits for go, then asks */
    char ch;
    odb_bandwidth bw;
    close(fds[0]);
    close(go[1]);
    memset(&bw, 0, sizeof bw);
    if (read(go[0], &ch, 1) == 1 &&
        odb_bandwidth_get(NULL, ODB_BW_CACHED, &bw) != ODB_OK)
      bw.read_1t = -1;
    if (write(fds[1], &bw, sizeof bw) != (ssize_t)sizeof bw) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  close(go[0]);
  if (pid > 0) {
    if (write(go[1], "g", 1) == 1) sa = odb_bandwidth_get(NULL, ODB_BW_CACHED, &a);
    got = read(fds[0], &b, sizeof b);
    waitpid(pid, NULL, 0);
  }
  close(go[1]);
  close(fds[0]);
  {
    const odb_bandwidth *first = a.from_cache ? &b : &a, *second = a.from_cache ? &a : &b;
    int stored = odb_bandwidth_cacheable(first) && !first->from_cache;
    tap_ok(pid > 0 && sa == ODB_OK && got == (ssize_t)sizeof b && a.read_1t > 0 && b.read_1t > 0,
           "together: both processes have figures (read %.2f and %.2f GB/s)", a.read_1t / 1e9,
           b.read_1t / 1e9);
    tap_ok(!(a.from_cache && b.from_cache) &&
           (!stored || (second->from_cache && second->read_1t == first->read_1t)),
           "together: one measured%s", stored ? ", the other took its figure from the cache"
                                              : " (not stored: the other measured after it)");
  }
  cache_file_remove(c);
}

int main(void) {
  tmp_cache c;
  tmp_cache_open(&c);
  if (!tap_ok(c.ok, "temporary cache directory")) return tap_done();
  test_team_figures();
  test_busy(&c);
  test_store_iff_cacheable(&c);
  test_together(&c);
  test_damaged_cache(&c);
  test_refused(&c);
  test_round_trip(&c);
  test_gpu(&c);
  tmp_cache_close(&c);
  return tap_done();
}
