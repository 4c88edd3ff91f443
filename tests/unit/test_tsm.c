/* test_tsm.c - the CPU tall & skinny products against the naive triple
   loop (TAP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "odebench.h"
#include "odb_tsm.h"

/* Fills v with uniform values in [-1, 1). */
static void fill(odb_rng *r, double *v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = 2.0 * odb_rng_uniform(r) - 1.0;
}

/* One shape, op and type with nthreads threads; fresh data, poisoned out. */
static void check(odb_rng *r, odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                  long K, int nthreads) {
  size_t e = t == ODB_TSM_Z ? 2 : 1;
  size_t na = e * (size_t)(K * M);
  size_t nx = e * (size_t)(op == ODB_TSM_TSMTTSM ? K * N : M * N);
  size_t no = e * (size_t)(op == ODB_TSM_TSMTTSM ? M * N : K * N);
  double *A = malloc(na * sizeof *A), *X = malloc(nx * sizeof *X);
  double *out = malloc(no * sizeof *out), *ref = malloc(no * sizeof *ref);
  fill(r, A, na);
  fill(r, X, nx);
  for (size_t i = 0; i < no; ++i) out[i] = NAN;
  odb_tsm_naive(op, t, M, N, K, A, X, ref);
  odb_status st = odb_tsm_cpu(op, t, M, N, K, A, X, out, nthreads);
  double err = odb_tsm_relerr(out, ref, no);
  tap_ok(st == ODB_OK && err <= 1e-12, "%s %s M=%ld N=%ld K=%ld threads=%d: "
         "rel err %.2e", odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N, K,
         nthreads, err);
  free(A); free(X); free(out); free(ref);
}

int main(void) {
  odb_rng r;
  odb_rng_seed(&r, 20261122);
  static const long shapes[][3] = {
    {1, 1, 1}, {1, 1, 9973}, {3, 5, 10007}, {7, 7, 20011}, {13, 4, 33331},
    {17, 31, 12289}, {64, 64, 5003}, {33, 1, 40009}, {1, 47, 8191},
  };
  int threads[] = { 1, 3 };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
    for (int op = 0; op < 2; ++op)
      for (int t = 0; t < 2; ++t)
        check(&r, (odb_tsm_op)op, (odb_tsm_dtype)t, shapes[s][0],
              shapes[s][1], shapes[s][2], threads[s % 2]);
  /* bad input */
  double x = 0;
  tap_ok(odb_tsm_cpu(ODB_TSM_TSMTTSM, ODB_TSM_D, 0, 1, 5, &x, &x, &x, 1)
         == ODB_ERR_ARG && strstr(odb_last_error(), "M = 0"),
         "M = 0 refused: %s", odb_last_error());
  tap_ok(odb_tsm_cpu(ODB_TSM_TSMM, ODB_TSM_D, 1, 1, 0, &x, &x, &x, 1)
         == ODB_ERR_ARG, "K = 0 refused: %s", odb_last_error());
  tap_ok(odb_tsm_check_shape(65, 3, 10, 1) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "1..64"), "M = 65 on the GPU path names "
         "the range: %s", odb_last_error());
  odb_tsm_dtype dt;
  tap_ok(odb_tsm_dtype_parse("s", &dt) == ODB_ERR_NAME, "dtype 's' refused");
  return tap_done();
}
