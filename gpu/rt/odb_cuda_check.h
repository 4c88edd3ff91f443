/* odb_cuda_check.h - one check for every CUDA runtime call (included by
   gpu/ only: it needs the CUDA headers). */
#ifndef ODB_CUDA_CHECK_H
#define ODB_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "odb_status.h"
#ifdef __cplusplus
}
#endif

/*
** The odb_status a CUDA error maps to: out of memory and a missing device
** or driver have their own codes, everything else is a backend failure.
*/
static inline odb_status odb_cuda_status(cudaError_t err) {
  switch (err) {
  case cudaErrorMemoryAllocation: return ODB_ERR_NOMEM;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver: return ODB_ERR_NO_DEVICE;
  default: return ODB_ERR_BACKEND;
  }
}

/*
** Records a failed CUDA call: its source text, the error's name and
** message, and where it happened. Also clears the runtime's last-error
** state, so that a later launch check does not report this error again
** (sticky errors stay: every later call reports them itself).
*/
static inline odb_status odb_cuda_fail(cudaError_t err, const char *call,
                                       const char *file, int line) {
  (void)cudaGetLastError();
  return odb_fail_at(odb_cuda_status(err), file, line, "%s failed: %s (%s)",
                     call, cudaGetErrorName(err), cudaGetErrorString(err));
}

/*
** Evaluates a CUDA runtime call once; on failure records it (call, file,
** line) and returns the status from the enclosing function, which must
** return odb_status.
*/
#define ODB_CUDA_CHECK(call)                                              \
  do {                                                                    \
    cudaError_t odb_cuda_err_ = (call);                                   \
    if (odb_cuda_err_ != cudaSuccess)                                     \
      return odb_cuda_fail(odb_cuda_err_, #call, __FILE__, __LINE__);     \
  } while (0)

#endif
