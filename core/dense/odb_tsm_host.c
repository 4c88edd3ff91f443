/* odb_tsm_host.c - a tall & skinny product of one shape on the CPU: its
   own random matrices, odb_tsm_cpu timed, and the plain loop (one thread,
   rows streamed in order: what one writes without thinking of the
   machine) as the peer, in turn on the same data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odb_clock.h"
#include "odb_measure.h"
#include "odb_rng.h"
#include "odb_topo.h"
#include "odb_tsm.h"

enum { CHECK_ROWS = 20011, MAX_REPS = 1000 };

struct odb_tsm_host {
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, K;
  int threads;        /* asked for (<= 0: one per online core) */
  double *A, *X;      /* A (K x M) and B (K x N, tsmttsm) or C (M x N) */
  double *out;        /* C (M x N) or B (K x N) */
  size_t nout;        /* doubles of out */
};

/* See the header. */
odb_status odb_tsm_host_create(odb_tsm_op op, odb_tsm_dtype t, long M,
                               long N, long K, int threads, uint64_t seed,
                               odb_tsm_host **out) {
  odb_tsm_host *h;
  odb_rng r;
  size_t na, nx, nout;
  *out = NULL;
  ODB_TRY(odb_tsm_check_shape(M, N, K, 1));
  if ((unsigned)op > 1 || (unsigned)t > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: bad operation or dtype");
  if (threads < 0 || threads > 256)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: threads = %d, expected 0 (one per "
                    "core) to 256", threads);
  ODB_TRY(odb_tsm_sizes(op, t, M, N, K, &na, &nx, &nout));
  {
    char what[96];
    snprintf(what, sizeof what, "%s %s M = %ld, N = %ld, K = %ld",
             odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N, K);
    ODB_TRY(odb_topo_check_memory(8.0 * ((double)na + (double)nx +
                                         (double)nout), what));
  }
  h = calloc(1, sizeof *h);
  if (!h) return ODB_FAIL(ODB_ERR_NOMEM, "tsm: out of memory");
  h->op = op;
  h->t = t;
  h->M = M;
  h->N = N;
  h->K = K;
  h->threads = threads;
  h->nout = nout;
  h->A = malloc(na * sizeof(double));
  h->X = malloc(nx * sizeof(double));
  h->out = malloc(h->nout * sizeof(double));
  if (!h->A || !h->X || !h->out) {
    double gb = (double)(na + nx + h->nout) * sizeof(double) * 1e-9;
    odb_tsm_host_destroy(h);
    return ODB_FAIL(ODB_ERR_NOMEM, "%s %s M=%ld N=%ld K=%ld: out of host "
                    "memory for its matrices (%.2f GB)", odb_tsm_op_name(op),
                    odb_tsm_dtype_name(t), M, N, K, gb);
  }
  odb_rng_seed(&r, seed);
  odb_rng_fill(&r, h->A, na);
  odb_rng_fill(&r, h->X, nx);
  memset(h->out, 0, h->nout * sizeof(double));
  *out = h;
  return ODB_OK;
}

void odb_tsm_host_destroy(odb_tsm_host *h) {
  if (!h) return;
  free(h->A);
  free(h->X);
  free(h->out);
  free(h);
}

/* See the header: the threads odb_tsm_cpu uses for this K. */
int odb_tsm_host_threads(const odb_tsm_host *h) {
  return odb_tsm_cpu_threads(h->K, h->threads);
}

/*
** The plain loop over the first K rows, one thread: C += A[k]^T B[k] row
** after row (C zeroed first), or B[k] = A[k] C, which is odb_tsm_naive's
** order for B = A C already. Assumes the shapes of h.
*/
static void plain(const odb_tsm_host *h, long K, double *out) {
  long M = h->M, N = h->N;
  const double *A = h->A, *X = h->X;
  if (h->op == ODB_TSM_TSMM) {
    odb_tsm_naive(h->op, h->t, M, N, K, A, X, out);
    return;
  }
  memset(out, 0, (h->t == ODB_TSM_Z ? 2 : 1) * (size_t)(M * N) *
                     sizeof(double));
  for (long k = 0; k < K; ++k)
    for (long m = 0; m < M; ++m)
      for (long n = 0; n < N; ++n) {
        if (h->t == ODB_TSM_Z) {
          double ar = A[2 * (k * M + m)], ai = A[2 * (k * M + m) + 1];
          double br = X[2 * (k * N + n)], bi = X[2 * (k * N + n) + 1];
          out[2 * (m * N + n)] += ar * br - ai * bi;
          out[2 * (m * N + n) + 1] += ar * bi + ai * br;
        } else {
          out[m * N + n] += A[k * M + m] * X[k * N + n];
        }
      }
}

/* One timed run of ours (which = 0) or of the plain loop (1). */
static odb_status run_one(odb_tsm_host *h, int which, double *sec) {
  double t0 = odb_clock_now();
  if (which == 0)
    ODB_TRY(odb_tsm_cpu(h->op, h->t, h->M, h->N, h->K, h->A, h->X, h->out,
                        h->threads));
  else
    plain(h, h->K, h->out);
  *sec = odb_clock_now() - t0;
  return ODB_OK;
}

/* reps in 1..MAX_REPS, else ODB_ERR_ARG. */
static odb_status check_reps(int reps) {
  if (reps < 1 || reps > MAX_REPS)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: reps = %d, expected 1..%d", reps,
                    MAX_REPS);
  return ODB_OK;
}

/* See the header. */
odb_status odb_tsm_host_time(odb_tsm_host *h, int reps, double *seconds) {
  double s[MAX_REPS], warm;
  odb_measurement m;
  ODB_TRY(check_reps(reps));
  ODB_TRY(run_one(h, 0, &warm));
  for (int i = 0; i < reps; ++i) ODB_TRY(run_one(h, 0, &s[i]));
  odb_measure_summarize(s, reps, &m);
  *seconds = m.median;
  return ODB_OK;
}

/* See the header. */
odb_status odb_tsm_host_compare(odb_tsm_host *h, int reps, double *mine,
                                double *plain_s, double q[3]) {
  double a[MAX_REPS], b[MAX_REPS], sp[MAX_REPS], warm;
  odb_measurement ma, mb, ms;
  ODB_TRY(check_reps(reps));
  ODB_TRY(run_one(h, 0, &warm));
  ODB_TRY(run_one(h, 1, &warm));
  for (int i = 0; i < reps; ++i) {
    ODB_TRY(run_one(h, 0, &a[i]));
    ODB_TRY(run_one(h, 1, &b[i]));
    sp[i] = b[i] / a[i];
  }
  odb_measure_summarize(a, reps, &ma);
  odb_measure_summarize(b, reps, &mb);
  odb_measure_summarize(sp, reps, &ms);
  *mine = ma.median;
  *plain_s = mb.median;
  if (q) {
    q[0] = ms.p25;
    q[1] = ms.median;
    q[2] = ms.p75;
  }
  return ODB_OK;
}

/* See the header. */
odb_status odb_tsm_host_check(odb_tsm_host *h, double *err) {
  long K = h->K < CHECK_ROWS ? h->K : CHECK_ROWS;
  size_t na, nx, n;               /* n: the output of K rows */
  double *ref, *mine, *loop;
  odb_status st = ODB_OK;
  ODB_TRY(odb_tsm_sizes(h->op, h->t, h->M, h->N, K, &na, &nx, &n));
  ref = malloc(n * sizeof(double));
  mine = malloc(n * sizeof(double));
  loop = malloc(n * sizeof(double));
  if (!ref || !mine || !loop) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "tsm check: out of memory");
  } else {
    /* the first K rows of A and B (or B's first K rows) are a product of
       their own: row-major matrices begin with them */
    for (size_t i = 0; i < n; ++i) mine[i] = loop[i] = NAN;   /* poison */
    odb_tsm_naive(h->op, h->t, h->M, h->N, K, h->A, h->X, ref);
    st = odb_tsm_cpu(h->op, h->t, h->M, h->N, K, h->A, h->X, mine,
                     h->threads);
    if (st == ODB_OK) {
      plain(h, K, loop);
      *err = fmax(odb_tsm_relerr(mine, ref, n), odb_tsm_relerr(loop, ref, n));
      if (!isfinite(*err)) *err = INFINITY;
    }
  }
  free(ref);
  free(mine);
  free(loop);
  return st;
}
