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

enum { CHECK_ROWS = 20011 };

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

/* See the header: the sizes are the shape's, which h was made with. */
void odb_tsm_host_load(odb_tsm_host *h, const double *A, const double *X) {
  size_t na, nx, nout;
  if (odb_tsm_sizes(h->op, h->t, h->M, h->N, h->K, &na, &nx, &nout) != ODB_OK)
    return;                         /* cannot be: create checked them */
  memcpy(h->A, A, na * sizeof(double));
  memcpy(h->X, X, nx * sizeof(double));
}

/* See the header. */
odb_status odb_tsm_host_result(odb_tsm_host *h, double *out) {
  return odb_tsm_cpu(h->op, h->t, h->M, h->N, h->K, h->A, h->X, out,
                     h->threads);
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

/* One sample of odb_measure_run: a run of ours. */
static odb_status time_ours(void *ud, double *sec) {
  return run_one(ud, 0, sec);
}

/* See the header. */
odb_status odb_tsm_host_time(odb_tsm_host *h, const odb_measure_opts *o,
                             struct odb_ctx *ctx, odb_measurement *m) {
  return odb_measure_run(time_ours, h, o, ctx, m, NULL);
}

/* The rounds of a comparison: each run's seconds, by round. */
typedef struct rounds {
  odb_tsm_host *h;
  double *mine, *plain;
  int n, cap;
} rounds;

/* One sample of odb_measure_run: a round, ours then the plain loop; the
   warm-up round is not kept (odb_measure_run calls it first). */
static odb_status time_round(void *ud, double *sec) {
  rounds *r = ud;
  double a, b;
  ODB_TRY(run_one(r->h, 0, &a));
  ODB_TRY(run_one(r->h, 1, &b));
  if (r->n < r->cap) {
    r->mine[r->n] = a;
    r->plain[r->n] = b;
  }
  r->n++;
  *sec = a + b;
  return ODB_OK;
}

/* See the header. */
odb_status odb_tsm_host_compare(odb_tsm_host *h, const odb_measure_opts *o,
                                struct odb_ctx *ctx, odb_measurement *mine,
                                odb_measurement *plain_m) {
  odb_measure_opts d = o ? *o : (odb_measure_opts){0};
  odb_measurement whole;
  odb_status st;
  rounds r;
  int warm;
  odb_measure_defaults(&d);
  warm = d.warmup > 0 ? d.warmup : 0;
  memset(&r, 0, sizeof r);
  r.h = h;
  r.cap = warm + d.max_reps;
  r.mine = malloc((size_t)r.cap * sizeof *r.mine);
  r.plain = malloc((size_t)r.cap * sizeof *r.plain);
  if (!r.mine || !r.plain) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "tsm compare: timing samples");
  } else {
    st = odb_measure_run(time_round, &r, &d, ctx, &whole, NULL);
    /* the rounds odb_measure_run kept are the last whole.reps ones */
    if (whole.reps > 0 && r.n >= whole.reps) {
      odb_measure_summarize(r.mine + r.n - whole.reps, whole.reps, mine);
      odb_measure_summarize(r.plain + r.n - whole.reps, whole.reps, plain_m);
    } else {
      odb_measure_summarize(NULL, 0, mine);
      odb_measure_summarize(NULL, 0, plain_m);
    }
  }
  free(r.mine);
  free(r.plain);
  return st;
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
