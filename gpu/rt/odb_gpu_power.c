/* odb_gpu_power.c - the GPU's clocks and power draw through NVML, loaded
   with dlopen so that the library needs no NVML at build time and still
   loads where no driver is installed; and a thread that samples them. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odb_gpu_power.h"

/* {====== NVML, the few calls used (nvml.h's signatures) */

typedef int nvml_ret;              /* nvmlReturn_t: 0 is success */
typedef struct nvml_dev *nvml_dev; /* nvmlDevice_t */
enum { NVML_CLOCK_SM = 1 };

static struct {
  int ok;                          /* 1 loaded and initialised, -1 failed */
  char why[256];
  nvml_ret (*init)(void);
  nvml_ret (*by_pci)(const char *, nvml_dev *);
  nvml_ret (*by_index)(unsigned, nvml_dev *);
  nvml_ret (*clock)(nvml_dev, int, unsigned *);
  nvml_ret (*max_clock)(nvml_dev, int, unsigned *);
  nvml_ret (*power)(nvml_dev, unsigned *);
  nvml_ret (*limit)(nvml_dev, unsigned *);
  nvml_ret (*reasons)(nvml_dev, unsigned long long *);
  const char *(*error)(nvml_ret);
} nvml;

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

/* A symbol of the loaded library, or NULL (the why says which). */
static void *nvml_sym(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f && !nvml.why[0])
    snprintf(nvml.why, sizeof nvml.why, "NVML lacks %s", name);
  return f;
}

/* Loads libnvidia-ml.so.1 and initialises it, once a process. */
static void nvml_load(void) {
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  nvml_ret r;
  nvml.ok = -1;
  if (!lib) {
    const char *e = dlerror();
    snprintf(nvml.why, sizeof nvml.why, "NVML (libnvidia-ml.so.1, the "
             "driver's library) cannot be loaded: %s", e ? e : "not found");
    return;
  }
  *(void **)&nvml.init = nvml_sym(lib, "nvmlInit_v2");
  *(void **)&nvml.by_pci = nvml_sym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  *(void **)&nvml.by_index = nvml_sym(lib, "nvmlDeviceGetHandleByIndex_v2");
  *(void **)&nvml.clock = nvml_sym(lib, "nvmlDeviceGetClockInfo");
  *(void **)&nvml.max_clock = nvml_sym(lib, "nvmlDeviceGetMaxClockInfo");
  *(void **)&nvml.power = nvml_sym(lib, "nvmlDeviceGetPowerUsage");
  *(void **)&nvml.limit = nvml_sym(lib, "nvmlDeviceGetEnforcedPowerLimit");
  *(void **)&nvml.error = nvml_sym(lib, "nvmlErrorString");
  /* the newer name first, then the one older drivers export */
  *(void **)&nvml.reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!nvml.reasons)
    *(void **)&nvml.reasons =
      nvml_sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (nvml.why[0]) return;
  if ((r = nvml.init()) != 0) {
    snprintf(nvml.why, sizeof nvml.why, "nvmlInit_v2 failed: %s",
             nvml.error(r));
    return;
  }
  nvml.ok = 1;
}

/* The device of PCI bus id pci (NULL or "": the first). */
static odb_status nvml_device(const char *pci, nvml_dev *d) {
  nvml_ret r;
  pthread_once(&nvml_once, nvml_load);
  if (nvml.ok != 1) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s", nvml.why);
  r = pci && pci[0] ? nvml.by_pci(pci, d) : nvml.by_index(0, d);
  if (r != 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "NVML knows no GPU %s: %s",
                    pci && pci[0] ? pci : "(index 0)", nvml.error(r));
  return ODB_OK;
}

/* }====== */

/* What changes while a card runs (clock, power, reasons) into out; a value
   NVML does not give is left as it was. */
static void read_changing(nvml_dev d, odb_gpu_power *out) {
  unsigned v = 0;
  unsigned long long rs = 0;
  if (nvml.clock(d, NVML_CLOCK_SM, &v) == 0) out->sm_mhz = v;
  if (nvml.power(d, &v) == 0) out->power_w = v / 1000.0;
  if (nvml.reasons(d, &rs) == 0) out->reasons = rs;
}

/* One whole reading of d: the fixed maxima once, then read_changing; a
   value NVML does not give stays 0. */
static void read_device(nvml_dev d, odb_gpu_power *out) {
  unsigned v = 0;
  memset(out, 0, sizeof *out);
  if (nvml.max_clock(d, NVML_CLOCK_SM, &v) == 0) out->sm_max_mhz = v;
  if (nvml.limit(d, &v) == 0) out->limit_w = v / 1000.0;
  read_changing(d, out);
}

/* See the header. */
odb_status odb_gpu_power_read(const char *pci, odb_gpu_power *out) {
  nvml_dev d;
  ODB_TRY(nvml_device(pci, &d));
  read_device(d, out);
  return ODB_OK;
}

/* See the header. */
const char *odb_gpu_power_reasons(unsigned long long reasons, char *buf,
                                  size_t n) {
  static const struct { unsigned long long bit; const char *name; } names[] = {
    { 0x1, "idle" }, { 0x2, "application clocks" }, { 0x4, "power cap" },
    { 0x8, "hardware slowdown" }, { 0x10, "sync boost" },
    { 0x20, "thermal slowdown" }, { 0x40, "hardware thermal slowdown" },
    { 0x80, "power brake" }, { 0x100, "display clocks" } };
  size_t len = 0;
  if (n == 0) return buf;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (reasons & names[i].bit) {
      int k = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                       names[i].name);
      if (k < 0 || (size_t)k >= n - len) break;
      len += (size_t)k;
    }
  if (!buf[0]) snprintf(buf, n, "none");
  return buf;
}

/* {====== the watch: a thread reading the device every period */

struct odb_gpu_watch {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  nvml_dev dev;
  odb_gpu_power first;           /* the reading at start (its maxima) */
  struct timespec period;
  odb_gpu_watch_summary sum;
  double sm_total;
};

/* Adds one reading to the summary (mu held). */
static void watch_add(odb_gpu_watch *w, const odb_gpu_power *p) {
  odb_gpu_watch_summary *s = &w->sum;
  if (s->samples == 0 || p->sm_mhz < s->sm_min) s->sm_min = p->sm_mhz;
  if (p->sm_mhz > s->sm_max) s->sm_max = p->sm_mhz;
  if (p->power_w > s->power_max) s->power_max = p->power_w;
  s->sm_max_mhz = p->sm_max_mhz;
  s->limit_w = p->limit_w;
  if (p->reasons & (ODB_GPU_POWER_CAP | ODB_GPU_SLOWDOWN_MASK)) ++s->capped;
  w->sm_total += p->sm_mhz;
  ++s->samples;
}

/* The thread: a reading, then a wait of one period or until stopped. */
static void *watch_main(void *arg) {
  odb_gpu_watch *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->stop) {
    odb_gpu_power p = w->first;   /* the maxima, read once at start */
    struct timespec until;
    pthread_mutex_unlock(&w->mu);
    read_changing(w->dev, &p);
    pthread_mutex_lock(&w->mu);
    watch_add(w, &p);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += w->period.tv_sec;
    until.tv_nsec += w->period.tv_nsec;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_nsec -= 1000000000L;
      ++until.tv_sec;
    }
    while (!w->stop &&
           pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT) {}
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* See the header. */
odb_status odb_gpu_watch_start(const char *pci, double period_s,
                               odb_gpu_watch **out) {
  odb_gpu_watch *w;
  nvml_dev d;
  *out = NULL;
  if (!(period_s >= 0.001 && period_s <= 1.0))
    return ODB_FAIL(ODB_ERR_ARG, "period (%g s) must be in 0.001..1 s",
                    period_s);
  ODB_TRY(nvml_device(pci, &d));
  w = calloc(1, sizeof *w);
  if (!w) return ODB_FAIL(ODB_ERR_NOMEM, "no memory for a GPU watch");
  w->dev = d;
  read_device(d, &w->first);
  w->period.tv_sec = (time_t)period_s;
  w->period.tv_nsec = (long)((period_s - (double)w->period.tv_sec) * 1e9);
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return ODB_FAIL(ODB_ERR_BACKEND, "cannot start the GPU watch's thread");
  }
  *out = w;
  return ODB_OK;
}

/* See the header. */
void odb_gpu_watch_stop(odb_gpu_watch *w, odb_gpu_watch_summary *sum) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  if (sum) {
    *sum = w->sum;
    sum->sm_mean = w->sum.samples ? w->sm_total / (double)w->sum.samples : 0;
  }
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
}

/* }====== */
