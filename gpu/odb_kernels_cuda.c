/* odb_kernels_cuda.c - registers the "cuda" backend when a device is there. */
#include "odb_kernels.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cuda_backend.h"
#include "odb_barrier_impl.h"
#include "odb_batched_gpu.h"
#include "odb_gpu_barrier.h"
#include "odb_krylov_gpu.h"
#include "odb_tsm_gpu.h"

/* The "cuda" table of odb_barrier_impl.h over odb_gpu_barrier_bench. */
static odb_status barrier_bench(char kind, int wg_per_barrier, int concurrent,
                                int threads, int iters, int reps,
                                double watchdog, odb_barrier_figures *out) {
  odb_barrier_result r;
  odb_status st = odb_gpu_barrier_bench(kind, wg_per_barrier, concurrent,
                                        threads, iters, reps, watchdog, &r);
  out->seconds = r.seconds;
  out->per_second = r.per_second;
  out->us_per_barrier = r.us_per_barrier;
  out->blocks_per_sm = r.blocks_per_sm;
  return st;
}

static const odb_barrier_ops barrier_cuda_ops = { "cuda", barrier_bench };

static int kernels_device = -1;

/*
** The device of local rank r: ODEBENCH_DEVICE when set (a number below
** the count; else ODB_ERR_ARG), else r modulo the count.
*/
static odb_status pick_device(int r, int count, int *out) {
  const char *e = getenv("ODEBENCH_DEVICE");
  if (e && *e) {
    char *end = NULL;
    long v = strtol(e, &end, 10);
    if (*end != '\0' || v < 0 || v >= count)
      return ODB_FAIL(ODB_ERR_ARG, "ODEBENCH_DEVICE: expected a device "
                      "number in 0..%d, got '%.40s'", count - 1, e);
    *out = (int)v;
    return ODB_OK;
  }
  *out = (r < 0 ? 0 : r) % count;
  return ODB_OK;
}

/*
** Registers the GPU variants and the "cuda" ops tables of the families
** (listed whether or not a device is there, so --list and error messages
** name them; each table's ready op says whether the run can use it) and
** uses the device of the local rank (odb_kernels.h). No device,
** no driver or a device that cannot be opened is not an error for the
** run: the reason goes to the context's notes.
*/
odb_status odb_kernels_register_on(odb_ctx *ctx, int local_rank) {
  char why[128], note[200];
  odb_backend *b = NULL;
  int count, device = 0;
  odb_status st = odb_gpu_rk_register();
  if (st == ODB_OK) st = odb_batched_impl_register(&odb_batched_cuda_ops);
  if (st == ODB_OK) st = odb_sparse_impl_register(&odb_sparse_cuda_ops);
  if (st == ODB_OK) st = odb_tsm_impl_register(&odb_tsm_cuda_ops);
  if (st == ODB_OK) st = odb_barrier_impl_register(&barrier_cuda_ops);
  if (st != ODB_OK) return st;
  count = odb_cuda_device_count(why, sizeof why);
  if (count == 0) {
    snprintf(note, sizeof note, "cuda: no device (%s)", why);
    odb_ctx_note_backend(ctx, note);
    return ODB_OK;
  }
  ODB_TRY(pick_device(local_rank, count, &device));
  if (odb_cuda_backend_create(ctx, device, &b) != ODB_OK) {
    snprintf(note, sizeof note, "cuda: device %d unusable (%s)", device,
             odb_last_error());
    odb_ctx_note_backend(ctx, note);
    return ODB_OK;
  }
  kernels_device = device;
  return odb_ctx_add_backend(ctx, b);
}

odb_status odb_kernels_register(odb_ctx *ctx) {
  return odb_kernels_register_on(ctx, 0);
}

int odb_kernels_device(void) { return kernels_device; }

int odb_kernels_have_cuda(void) { return 1; }
