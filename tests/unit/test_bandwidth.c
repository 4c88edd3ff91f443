/* test_bandwidth.c - the bandwidth cache keeps only figures measured on a
   quiet machine by an optimized build: a measurement while spinning
   threads hold every core is seen as busy and not stored. Timings are not
   asserted. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  st = odb_bandwidth_get(NULL, 1, &bw);
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
  odb_status st = odb_bandwidth_get(NULL, 1, &bw);
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

int main(void) {
  tmp_cache c;
  tmp_cache_open(&c);
  if (!tap_ok(c.ok, "temporary cache directory")) return tap_done();
  test_busy(&c);
  test_store_iff_cacheable(&c);
  test_damaged_cache(&c);
  tmp_cache_close(&c);
  return tap_done();
}
