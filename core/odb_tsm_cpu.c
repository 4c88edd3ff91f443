/* odb_tsm_cpu.c - the CPU versions of the tall & skinny products
   (threads over the long side, vectorizable inner loops over N). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odb_tsm.h"

enum { MIN_ROWS_PER_THREAD = 4096, MAX_THREADS = 256 };

/* Names of the operations and types, indexed by their enums. */
static const char *const op_names[] = { "tsmttsm", "tsmm" };
static const char *const dtype_names[] = { "d", "z" };

/* Assumes op is one of the enum values. */
const char *odb_tsm_op_name(odb_tsm_op op) {
  return (unsigned)op < 2 ? op_names[op] : "?";
}

/* Assumes t is one of the enum values. */
const char *odb_tsm_dtype_name(odb_tsm_dtype t) {
  return (unsigned)t < 2 ? dtype_names[t] : "?";
}

/* name may be NULL (refused). */
odb_status odb_tsm_op_parse(const char *name, odb_tsm_op *out) {
  for (int i = 0; i < 2; ++i)
    if (name && strcmp(name, op_names[i]) == 0) {
      *out = (odb_tsm_op)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown tall & skinny kernel '%s' (known: "
                  "tsmttsm, tsmm)", name ? name : "(null)");
}

/* name may be NULL (refused). */
odb_status odb_tsm_dtype_parse(const char *name, odb_tsm_dtype *out) {
  for (int i = 0; i < 2; ++i)
    if (name && strcmp(name, dtype_names[i]) == 0) {
      *out = (odb_tsm_dtype)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown dtype '%s' (known: d = real double, "
                  "z = complex double)", name ? name : "(null)");
}

/* Any long values; see the header. */
odb_status odb_tsm_check_shape(long M, long N, long K, int max_width) {
  long hi = max_width ? ODB_TSM_MAX_WIDTH : 1L << 30;
  if (M < 1 || M > hi)
    return ODB_FAIL(ODB_ERR_ARG, "M = %ld is outside the supported range "
                    "1..%ld", M, hi);
  if (N < 1 || N > hi)
    return ODB_FAIL(ODB_ERR_ARG, "N = %ld is outside the supported range "
                    "1..%ld", N, hi);
  if (K < 1)
    return ODB_FAIL(ODB_ERR_ARG, "K = %ld: the long side must be at least 1",
                    K);
  return ODB_OK;
}

/* Counts as in the seed's roofline model (eq. 1). */
double odb_tsm_flops(odb_tsm_dtype t, long M, long N, long K) {
  return (t == ODB_TSM_Z ? 8.0 : 2.0) * (double)M * (double)N * (double)K;
}

/* Each matrix read or written once; 16 bytes per complex entry. */
double odb_tsm_bytes(odb_tsm_dtype t, long M, long N, long K) {
  double e = t == ODB_TSM_Z ? 16.0 : 8.0;
  return e * ((double)M * K + (double)N * K + (double)M * N);
}

/* n doubles each; y may be all zero. */
double odb_tsm_relerr(const double *x, const double *y, size_t n) {
  double d = 0.0, r = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double e = x[i] - y[i];
    d += e * e;
    r += y[i] * y[i];
  }
  if (isnan(d)) return INFINITY;
  return r > 0.0 ? sqrt(d / r) : sqrt(d);
}

/* The triple loops in their textbook order; out is overwritten. */
void odb_tsm_naive(odb_tsm_op op, odb_tsm_dtype t, long M, long N, long K,
                   const double *A, const double *X, double *out) {
  int z = t == ODB_TSM_Z;
  if (op == ODB_TSM_TSMTTSM) {
    for (long m = 0; m < M; ++m)
      for (long n = 0; n < N; ++n) {
        double re = 0.0, im = 0.0;
        for (long k = 0; k < K; ++k) {
          if (z) {
            double ar = A[2 * (k * M + m)], ai = A[2 * (k * M + m) + 1];
            double br = X[2 * (k * N + n)], bi = X[2 * (k * N + n) + 1];
            re += ar * br - ai * bi;
            im += ar * bi + ai * br;
          } else {
            re += A[k * M + m] * X[k * N + n];
          }
        }
        if (z) {
          out[2 * (m * N + n)] = re;
          out[2 * (m * N + n) + 1] = im;
        } else {
          out[m * N + n] = re;
        }
      }
    return;
  }
  for (long k = 0; k < K; ++k)
    for (long n = 0; n < N; ++n) {
      double re = 0.0, im = 0.0;
      for (long m = 0; m < M; ++m) {
        if (z) {
          double ar = A[2 * (k * M + m)], ai = A[2 * (k * M + m) + 1];
          double cr = X[2 * (m * N + n)], ci = X[2 * (m * N + n) + 1];
          re += ar * cr - ai * ci;
          im += ar * ci + ai * cr;
        } else {
          re += A[k * M + m] * X[m * N + n];
        }
      }
      if (z) {
        out[2 * (k * N + n)] = re;
        out[2 * (k * N + n) + 1] = im;
      } else {
        out[k * N + n] = re;
      }
    }
}

/* One thread's share: rows [k0, k1) and, for tsmttsm, its private tile. */
typedef struct tsm_job {
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, k0, k1;
  const double *A, *X;
  double *out;          /* tsmm: B; tsmttsm: the private tile (re, im) */
} tsm_job;

/* Real A^T B over rows [k0, k1) into c (M x N, zeroed here). */
static void tsmttsm_d(const tsm_job *j) {
  long M = j->M, N = j->N;
  double *restrict c = j->out;
  memset(c, 0, sizeof(double) * (size_t)(M * N));
  for (long k = j->k0; k < j->k1; ++k) {
    const double *restrict a = j->A + k * M;
    const double *restrict b = j->X + k * N;
    for (long m = 0; m < M; ++m) {
      double am = a[m];
      double *restrict cm = c + m * N;
      for (long n = 0; n < N; ++n) cm[n] += am * b[n];
    }
  }
}

/* Complex A^T B; c holds M*N real parts, then M*N imaginary parts. */
static void tsmttsm_z(const tsm_job *j) {
  long M = j->M, N = j->N;
  double *restrict cr = j->out, *restrict ci = j->out + M * N;
  memset(cr, 0, sizeof(double) * (size_t)(2 * M * N));
  for (long k = j->k0; k < j->k1; ++k) {
    const double *restrict a = j->A + 2 * k * M;
    const double *restrict b = j->X + 2 * k * N;
    for (long m = 0; m < M; ++m) {
      double ar = a[2 * m], ai = a[2 * m + 1];
      double *restrict r = cr + m * N, *restrict i = ci + m * N;
      for (long n = 0; n < N; ++n) {
        double br = b[2 * n], bi = b[2 * n + 1];
        r[n] += ar * br - ai * bi;
        i[n] += ar * bi + ai * br;
      }
    }
  }
}

/* Real B = A C for rows [k0, k1). */
static void tsmm_d(const tsm_job *j) {
  long M = j->M, N = j->N;
  for (long k = j->k0; k < j->k1; ++k) {
    const double *restrict a = j->A + k * M;
    double *restrict b = j->out + k * N;
    for (long n = 0; n < N; ++n) b[n] = 0.0;
    for (long m = 0; m < M; ++m) {
      double am = a[m];
      const double *restrict c = j->X + m * N;
      for (long n = 0; n < N; ++n) b[n] += am * c[n];
    }
  }
}

/* Complex B = A C for rows [k0, k1); interleaved storage throughout. */
static void tsmm_z(const tsm_job *j) {
  long M = j->M, N = j->N;
  for (long k = j->k0; k < j->k1; ++k) {
    const double *restrict a = j->A + 2 * k * M;
    double *restrict b = j->out + 2 * k * N;
    for (long n = 0; n < 2 * N; ++n) b[n] = 0.0;
    for (long m = 0; m < M; ++m) {
      double ar = a[2 * m], ai = a[2 * m + 1];
      const double *restrict c = j->X + 2 * m * N;
      for (long n = 0; n < N; ++n) {
        double cr = c[2 * n], ci = c[2 * n + 1];
        b[2 * n] += ar * cr - ai * ci;
        b[2 * n + 1] += ar * ci + ai * cr;
      }
    }
  }
}

/* Thread body: dispatches on op and type. */
static void *tsm_work(void *arg) {
  const tsm_job *j = arg;
  if (j->op == ODB_TSM_TSMTTSM)
    (j->t == ODB_TSM_Z ? tsmttsm_z : tsmttsm_d)(j);
  else
    (j->t == ODB_TSM_Z ? tsmm_z : tsmm_d)(j);
  return NULL;
}

/* Threads to use for K rows when asked for want (<= 0: all cores). */
static int tsm_threads(long K, int want) {
  long p = want > 0 ? want : sysconf(_SC_NPROCESSORS_ONLN);
  long most = K / MIN_ROWS_PER_THREAD;
  if (p > most) p = most;
  if (p > MAX_THREADS) p = MAX_THREADS;
  return p < 1 ? 1 : (int)p;
}

/* Shapes checked, pointers non-NULL; see the header. */
odb_status odb_tsm_cpu(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                       long K, const double *A, const double *X,
                       double *out, int nthreads) {
  tsm_job jobs[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  double *tiles = NULL;
  int p, started = 0, z = t == ODB_TSM_Z;
  size_t tile = (size_t)(M * N) * (z ? 2 : 1);
  odb_status st = ODB_OK;

  ODB_TRY(odb_tsm_check_shape(M, N, K, 0));
  if (!A || !X || !out)
    return ODB_FAIL(ODB_ERR_ARG, "%s: a matrix pointer is NULL",
                    odb_tsm_op_name(op));
  if ((unsigned)op > 1 || (unsigned)t > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: bad operation or dtype");
  p = tsm_threads(K, nthreads);
  if (op == ODB_TSM_TSMTTSM) {
    tiles = malloc(sizeof(double) * tile * (size_t)p);
    if (!tiles) return ODB_FAIL(ODB_ERR_NOMEM, "tsmttsm: %d tiles of %zu "
                                "doubles", p, tile);
  }
  for (int i = 0; i < p; ++i) {
    jobs[i] = (tsm_job){ op, t, M, N, K * i / p, K * (i + 1) / p, A, X,
                         tiles ? tiles + tile * (size_t)i : out };
  }
  for (int i = 1; i < p; ++i) {
    if (pthread_create(&th[i], NULL, tsm_work, &jobs[i]) != 0) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "tsm: cannot start thread %d of %d", i, p);
      break;
    }
    started = i;
  }
  if (st == ODB_OK) tsm_work(&jobs[0]);
  for (int i = 1; i <= started; ++i) pthread_join(th[i], NULL);
  if (st == ODB_OK && tiles) {
    /* sum the tiles in thread order, then interleave complex parts */
    for (int i = 1; i < p; ++i)
      for (size_t e = 0; e < tile; ++e) tiles[e] += tiles[tile * i + e];
    if (z) {
      size_t mn = (size_t)(M * N);
      for (size_t e = 0; e < mn; ++e) {
        out[2 * e] = tiles[e];
        out[2 * e + 1] = tiles[mn + e];
      }
    } else {
      memcpy(out, tiles, sizeof(double) * tile);
    }
  }
  free(tiles);
  return st;
}
