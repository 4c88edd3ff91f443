/* odb_dist_ipc.c - freeing device memory that other ranks of the host map
   by CUDA IPC (odb_dist_ipc.h). Built with CUDA.

   Assumes one thread of a process calls it (the ranks' solvers and
   matrices are made and freed on the thread that runs the scenario). */
#include "odb_dist_ipc.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

typedef struct ipc_owned {
  void *ptr[ODB_DIST_IPC_PTRS];
  int nptrs;
  const unsigned *words;   /* device memory: one word a mapping rank */
  int nwords;
  struct ipc_owned *next;
} ipc_owned;

static ipc_owned *waiting;

/* 1 when every word of o is set (or they cannot be read: nothing more
   can be learnt then, and the memory goes). */
static int all_closed(const ipc_owned *o) {
  unsigned w[64];
  for (int i = 0; i < o->nwords; i += 64) {
    const int n = o->nwords - i < 64 ? o->nwords - i : 64;
    if (cudaMemcpy(w, o->words + i, (size_t)n * sizeof *w,
                   cudaMemcpyDeviceToHost) != cudaSuccess) {
      (void)cudaGetLastError();
      return 1;
    }
    for (int k = 0; k < n; ++k)
      if (!w[k]) return 0;
  }
  return 1;
}

/* See odb_dist_ipc.h. */
void odb_dist_ipc_reap(void) {
  for (ipc_owned **pp = &waiting; *pp;) {
    ipc_owned *o = *pp;
    if (!all_closed(o)) {
      pp = &o->next;
      continue;
    }
    *pp = o->next;
    for (int i = 0; i < o->nptrs; ++i)
      if (o->ptr[i] && cudaFree(o->ptr[i]) != cudaSuccess)
        (void)cudaGetLastError();
    free(o);
  }
}

/* See odb_dist_ipc.h. */
void odb_dist_ipc_release(void *const *ptrs, int nptrs, const unsigned *words,
                          int nwords) {
  ipc_owned *o = calloc(1, sizeof *o);
  if (o && nptrs <= ODB_DIST_IPC_PTRS) {
    memcpy(o->ptr, ptrs, (size_t)nptrs * sizeof *ptrs);
    o->nptrs = nptrs;
    o->words = words;
    o->nwords = words ? nwords : 0;
    o->next = waiting;
    waiting = o;
  } else {
    free(o);   /* kept for the life of the process */
  }
  odb_dist_ipc_reap();
}

/* See odb_dist_ipc.h. */
void odb_dist_ipc_close(void *mapped, size_t bytes, unsigned *closed) {
  static const unsigned one = 1;
  const int inside = mapped && closed && (char *)closed >= (char *)mapped &&
                     (char *)closed < (char *)mapped + bytes;
  if (inside && cudaMemcpy(closed, &one, sizeof one,
                           cudaMemcpyHostToDevice) != cudaSuccess)
    (void)cudaGetLastError();
  if (mapped && cudaIpcCloseMemHandle(mapped) != cudaSuccess)
    (void)cudaGetLastError();
  if (!inside && closed && cudaMemcpy(closed, &one, sizeof one,
                                      cudaMemcpyHostToDevice) != cudaSuccess)
    (void)cudaGetLastError();
}
