/* test_gpulib_check.c - gpu/rt/odb_gpulib_check.h: a failing cuBLAS or
   cuSPARSE status is reported with the call, the status's name, and the
   caller's file and line (no device needed: suite 'unit'). */
#include <stdio.h>
#include <string.h>

/* cuSPARSE's header declares deprecated types, which GCC warns about */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cusparse.h>
#pragma GCC diagnostic pop

#include "odb_gpulib_check.h"
#include "tap.h"

static int check_line;   /* the line of the failing check below */

/* Stand-ins for library calls that fail. */
static cublasStatus_t blas_call(void) {
  return CUBLAS_STATUS_EXECUTION_FAILED;
}
static cusparseStatus_t sparse_call(void) {
  return CUSPARSE_STATUS_INVALID_VALUE;
}

/* A function that checks a failing cuBLAS call the way kernels/ does. */
static odb_status fails_in_blas(void) {
  check_line = __LINE__ + 1;
  ODB_CUBLAS_CHECK(blas_call());
  return ODB_OK;
}

/* The same for cuSPARSE. */
static odb_status fails_in_sparse(void) {
  check_line = __LINE__ + 1;
  ODB_CUSPARSE_CHECK(sparse_call());
  return ODB_OK;
}

/* 1 when odb_last_error_where() is this file at line. */
static int where_is(int line) {
  char want[64];
  const char *w = odb_last_error_where();
  const char *base = strrchr(w, '/');
  snprintf(want, sizeof want, "test_gpulib_check.c:%d", line);
  return strcmp(base ? base + 1 : w, want) == 0;
}

/* One failure: status want, the message contains text, and it happened
   at line of this file (0: not checked). */
static void expect(const char *what, odb_status st, odb_status want,
                   const char *text, int line) {
  tap_ok(st == want && strstr(odb_last_error(), text) &&
         (line == 0 || where_is(line)), "%s: '%s' at %s", what,
         odb_last_error(), odb_last_error_where());
}

int main(void) {
  odb_status st;
  tap_ok(ODB_CUBLAS_STATUS(CUBLAS_STATUS_SUCCESS, "cublasX") == ODB_OK &&
         ODB_CUSPARSE_STATUS(CUSPARSE_STATUS_SUCCESS, "cusparseX") == ODB_OK,
         "success is ODB_OK");
  st = fails_in_blas();   /* sets check_line */
  expect("a failing cuBLAS call", st, ODB_ERR_BACKEND,
         "blas_call() failed: CUBLAS_STATUS_EXECUTION_FAILED", check_line);
  st = ODB_CUBLAS_STATUS(CUBLAS_STATUS_ALLOC_FAILED, "cublasCreate");
  expect("cuBLAS out of memory is ODB_ERR_NOMEM", st, ODB_ERR_NOMEM,
         "cublasCreate failed: CUBLAS_STATUS_ALLOC_FAILED", __LINE__ - 2);
  st = fails_in_sparse();
  expect("a failing cuSPARSE call", st, ODB_ERR_BACKEND,
         "sparse_call() failed: CUSPARSE_STATUS_INVALID_VALUE", check_line);
  st = ODB_CUSPARSE_STATUS(CUSPARSE_STATUS_ALLOC_FAILED, "cusparseCreate");
  expect("cuSPARSE out of memory is ODB_ERR_NOMEM", st, ODB_ERR_NOMEM,
         "cusparseCreate failed: CUSPARSE_STATUS_ALLOC_FAILED", 0);
  return tap_done();
}
