/* odb_gpulib_check.h - one check for cuBLAS and cuSPARSE calls, as
   odb_cuda_check.h is for the runtime's (gpu/ only). The cuSPARSE
   checks exist where <cusparse.h> came first: that header is not pulled
   into files that do not use it (under GCC its deprecated types warn). */
#ifndef ODB_GPULIB_CHECK_H
#define ODB_GPULIB_CHECK_H

#include <cublas_v2.h>

#include "odb_cuda_check.h"

/*
** ODB_OK for a successful cuBLAS status; otherwise records the call's
** text, the status's name and number and where the call is (the macros
** below pass the caller's file and line). Out of memory has its own code.
*/
static inline odb_status odb_cublas_check(cublasStatus_t s, const char *call,
                                          const char *file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return ODB_OK;
  return odb_fail_at(s == CUBLAS_STATUS_ALLOC_FAILED ? ODB_ERR_NOMEM
                                                     : ODB_ERR_BACKEND,
                     file, line, "%s failed: %s (cuBLAS status %d)", call,
                     cublasGetStatusName(s), (int)s);
}

#ifdef CUSPARSE_VER_MAJOR
/* The same for a cuSPARSE status. */
static inline odb_status odb_cusparse_check(cusparseStatus_t s,
                                            const char *call,
                                            const char *file, int line) {
  if (s == CUSPARSE_STATUS_SUCCESS) return ODB_OK;
  return odb_fail_at(s == CUSPARSE_STATUS_ALLOC_FAILED ? ODB_ERR_NOMEM
                                                       : ODB_ERR_BACKEND,
                     file, line, "%s failed: %s (%s)", call,
                     cusparseGetErrorName(s), cusparseGetErrorString(s));
}

#define ODB_CUSPARSE_STATUS(s, call) \
  odb_cusparse_check((s), (call), __FILE__, __LINE__)
#define ODB_CUSPARSE_CHECK(call) ODB_TRY(ODB_CUSPARSE_STATUS((call), #call))
#endif

/* Status s of the call named call (a string), checked at this line. */
#define ODB_CUBLAS_STATUS(s, call) \
  odb_cublas_check((s), (call), __FILE__, __LINE__)

/* Evaluates a cuBLAS (or cuSPARSE: ODB_CUSPARSE_CHECK) call once; on
   failure returns its status from the enclosing function, which must
   return odb_status. */
#define ODB_CUBLAS_CHECK(call) ODB_TRY(ODB_CUBLAS_STATUS((call), #call))

#endif
