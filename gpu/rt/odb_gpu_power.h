/* odb_gpu_power.h - the GPU's clocks and power draw, read through NVML
   (libnvidia-ml.so.1, the driver's library, loaded at run time), and a
   thread that samples them while a benchmark runs. */
#ifndef ODB_GPU_POWER_H
#define ODB_GPU_POWER_H

#include "odebench.h"

/* NVML's clock event reasons (nvmlClocksEventReason*) that slow a card
   down on its own: the power cap, a thermal or power-brake slowdown. */
#define ODB_GPU_SLOWDOWN_MASK 0xE8ULL   /* 0x8 | 0x20 | 0x40 | 0x80 */
#define ODB_GPU_POWER_CAP     0x4ULL

/* One reading of a GPU. */
typedef struct odb_gpu_power {
  double sm_mhz;                 /* SM clock now */
  double sm_max_mhz;             /* the SM clock's maximum */
  double power_w;                /* board power draw */
  double limit_w;                /* the enforced power limit */
  unsigned long long reasons;    /* NVML clock event reasons (bits) */
} odb_gpu_power;

/* What a watch saw between its start and its stop. */
typedef struct odb_gpu_watch_summary {
  long samples;
  double sm_min, sm_max, sm_mean;   /* MHz over the samples */
  double sm_max_mhz;                /* the card's maximum SM clock */
  double power_max, limit_w;        /* W */
  long capped;   /* samples with the power cap or a slowdown reason */
} odb_gpu_watch_summary;

typedef struct odb_gpu_watch odb_gpu_watch;

/*
** Reads the GPU with PCI bus id pci (as cudaDeviceGetPCIBusId gives it;
** NULL or "": NVML's first device). ODB_ERR_UNSUPPORTED when NVML cannot
** be loaded or does not know the device.
*/
odb_status odb_gpu_power_read(const char *pci, odb_gpu_power *out);

/* The reasons' names, comma-separated ("none" without any), into buf. */
const char *odb_gpu_power_reasons(unsigned long long reasons, char *buf,
                                  size_t n);

/*
** Starts a thread that reads the GPU every period_s seconds (0.001..1)
** until odb_gpu_watch_stop. Fails as odb_gpu_power_read does, before any
** thread starts.
*/
odb_status odb_gpu_watch_start(const char *pci, double period_s,
                               odb_gpu_watch **w);

/* Stops and frees w (NULL: nothing); the summary when sum is not NULL. */
void odb_gpu_watch_stop(odb_gpu_watch *w, odb_gpu_watch_summary *sum);

#endif
