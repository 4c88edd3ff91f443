/* test_gpu_power.c - the GPU's clocks and power through NVML
   (gpu/rt/odb_gpu_power.c): the reasons' names, bad periods, and either
   readings and a watch (where the driver's NVML is present) or the error
   that names NVML (where it is not, as on the CI machine). */
#include <string.h>
#include <time.h>

#include "odb_gpu_power.h"
#include "tap.h"

/* Sleeps s seconds. */
static void nap(double s) {
  struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
  nanosleep(&t, NULL);
}

/* The names of each reason bit, several joined, none, a short buffer. */
static void test_reasons(void) {
  char buf[160], small[12];
  tap_ok(strcmp(odb_gpu_power_reasons(0, buf, sizeof buf), "none") == 0,
         "no reason reads \"none\"");
  tap_ok(strcmp(odb_gpu_power_reasons(0x4, buf, sizeof buf), "power cap") == 0,
         "0x4 is the power cap: %s", buf);
  tap_ok(strcmp(odb_gpu_power_reasons(0x4 | 0x20 | 0x80, buf, sizeof buf),
                "power cap, thermal slowdown, power brake") == 0,
         "0xa4 names three reasons in order: %s", buf);
  odb_gpu_power_reasons(0x1 | 0x4 | 0x20, small, sizeof small);
  tap_ok(strlen(small) < sizeof small && strncmp(small, "idle", 4) == 0,
         "a short buffer keeps what fits: \"%s\"", small);
}

/* Readings and a 60-ms watch at 5 ms where NVML loads, else its error. */
static void test_device(void) {
  odb_gpu_power p;
  odb_gpu_watch *w = NULL;
  odb_gpu_watch_summary s;
  odb_status st = odb_gpu_power_read(NULL, &p);
  if (st != ODB_OK) {
    const char *e = odb_last_error();
    tap_ok(st == ODB_ERR_UNSUPPORTED && strstr(e, "NVML"),
           "without NVML the reading fails naming it: %s", e);
    st = odb_gpu_watch_start(NULL, 0.01, &w);
    tap_ok(st == ODB_ERR_UNSUPPORTED && w == NULL,
           "and no watch starts: %s", odb_last_error());
    return;
  }
  tap_ok(p.sm_mhz > 0 && p.sm_max_mhz >= p.sm_mhz && p.limit_w > 0 &&
         p.power_w > 0,
         "a reading: SM %.0f of %.0f MHz, %.1f of %.0f W", p.sm_mhz,
         p.sm_max_mhz, p.power_w, p.limit_w);
  st = odb_gpu_watch_start(NULL, 0.005, &w);
  tap_ok(st == ODB_OK && w, "a watch starts");
  nap(0.06);
  odb_gpu_watch_stop(w, &s);
  tap_ok(s.samples >= 3 && s.sm_min > 0 && s.sm_min <= s.sm_mean &&
         s.sm_mean <= s.sm_max && s.capped >= 0 && s.capped <= s.samples &&
         s.limit_w > 0,
         "the watch's summary: %ld samples, SM %.0f..%.0f (mean %.0f) MHz, "
         "%ld capped, at most %.1f W", s.samples, s.sm_min, s.sm_max,
         s.sm_mean, s.capped, s.power_max);
}

int main(void) {
  odb_gpu_watch *w = NULL;
  test_reasons();
  tap_ok(odb_gpu_watch_start(NULL, 0.0, &w) == ODB_ERR_ARG && !w &&
         strstr(odb_last_error(), "0.001..1"),
         "a period of 0 is refused: %s", odb_last_error());
  tap_ok(odb_gpu_watch_start(NULL, 2.0, &w) == ODB_ERR_ARG && !w,
         "a period of 2 s is refused");
  odb_gpu_watch_stop(NULL, NULL);
  tap_ok(1, "stopping no watch does nothing");
  test_device();
  return tap_done();
}
