/* cuda_backend.h - the "cuda" backend (C interface; no CUDA types). */
#ifndef ODB_CUDA_BACKEND_H
#define ODB_CUDA_BACKEND_H

#include <stddef.h>
#include "odb_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
** Number of CUDA devices that can be used. Returns 0 when there are none
** or the runtime cannot tell (no driver, ...), with the reason in why.
*/
int odb_cuda_device_count(char *why, size_t len);

/*
** Creates the "cuda" backend on one device (0, 1, ...). Fails with
** ODB_ERR_BACKEND (message naming the CUDA call, file and line) when the
** device cannot be used. The caller owns the result (odb_backend_destroy).
*/
odb_status odb_cuda_backend_create(odb_ctx *ctx, int device,
                                   odb_backend **out);

#ifdef __cplusplus
}
#endif

#endif
