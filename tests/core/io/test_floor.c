/* test_floor.c - floors (odb_floor.h): the routine on fixed bandwidth
** figures, the figure of a thread count, the note of a result above its
** floor, and each family's fewest bytes against a count by hand. */
#include "solver_util.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odb_dense_floor.h"
#include "odb_floor.h"
#include "odb_ode_floor.h"
#include "odb_sparse_floor.h"

static int near(double a, double b) {
  return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

/* read 10 GB/s, copy 8 GB/s: reads alone at 10, any mix at the faster
   figure, 10. */
static void test_routine(void) {
  odb_floor_bw f;
  char name[48];
  odb_floor_bw_gpu(10e9, 8e9, 0, &f);
  tap_ok(near(odb_floor_seconds(&f, 2e9, 0), 0.2),
         "read only: 2 GB at the read bandwidth is 0.2 s");
  tap_ok(near(odb_floor_seconds(&f, 0, 2e9), 0.2),
         "write only: 2 GB at the faster figure (read, 10 GB/s) is 0.2 s");
  tap_ok(near(odb_floor_seconds(&f, 1e9, 1e9), 0.2),
         "an array read and written (1 GB each): 2 GB at 10 GB/s, 0.2 s");
  tap_ok(near(odb_floor_seconds(&f, 3e9, 1e9), 0.4),
         "mixed: 3 GB read + 1 GB written = 4 GB at 10 GB/s");
  tap_ok(!strcmp(odb_floor_name(&f, 1, 0, name, sizeof name), "gpu read"),
         "a read-only floor names the read figure (%s)", name);
  tap_ok(!strcmp(odb_floor_name(&f, 1, 1, name, sizeof name),
                 "gpu read+copy"), "a floor with writes names read+copy (%s)",
         name);
  odb_floor_bw_gpu(10e9, 25e9, 0, &f);   /* copy faster than the read */
  tap_ok(near(odb_floor_seconds(&f, 1e9, 1e9), 2e9 / 25e9),
         "a mix at the copy figure when it is the faster");
  tap_ok(!odb_floor_bw_gpu(0, 8e9, 0, &f) &&
         odb_floor_seconds(&f, 1e9, 1e9) == 0, "no read figure: no floor");
}

/* The CPU figure of a thread count: the smallest count measured at least
   that many, the best of the counts up to it; the cache of one or all. */
static void test_cpu_figures(void) {
  odb_bandwidth bw;
  odb_floor_bw f;
  odb_topo t;
  char name[48];
  int ok;
  memset(&bw, 0, sizeof bw);
  bw.ncounts = 3;
  bw.threads[0] = 1; bw.read[0] = 10e9; bw.copy[0] = 8e9;
  bw.threads[1] = 2; bw.read[1] = 18e9; bw.copy[1] = 14e9;
  bw.threads[2] = 4; bw.read[2] = 17e9; bw.copy[2] = 20e9;   /* read dips */
  bw.read_1t = 10e9; bw.copy_1t = 8e9; bw.threads_all = 4;
  memset(&t, 0, sizeof t);
  t.ncaches = 2;
  t.caches[0] = (odb_cache_level){ 2, 1 << 20, 64, 4, 1 };
  t.caches[1] = (odb_cache_level){ 3, 8 << 20, 64, 2, 2 };
  ok = odb_bandwidth_floor_bw(&bw, &t, 1, &f);
  tap_ok(ok && f.read == 10e9 && f.copy == 8e9
         && f.threads == 1 && f.cache_bytes == 8 << 20,
         "1 thread: the one-thread figures and one LLC instance (%g, %g)",
         f.read, f.cache_bytes);
  tap_ok(!strcmp(odb_floor_name(&f, 1, 0, name, sizeof name), "cpu read 1t"),
         "named 'cpu read 1t' (%s)", name);
  ok = odb_bandwidth_floor_bw(&bw, &t, 3, &f);
  tap_ok(ok && f.threads == 4 &&
         f.read == 18e9 && f.copy == 20e9 && f.cache_bytes == 16 << 20,
         "3 threads: the 4-thread count, the best read up to it (18), the "
         "machine's LLC (%g, %g, %g)", f.read, f.copy, f.cache_bytes);
  tap_ok(!strcmp(odb_floor_name(&f, 1, 1, name, sizeof name),
                 "cpu read+copy 4t"), "named 'cpu read+copy 4t' (%s)", name);
  tap_ok(odb_bandwidth_floor_bw(&bw, &t, 64, &f) && f.threads == 4,
         "more threads than measured: the all-core figures");
  bw.read_1t = 0;
  tap_ok(!odb_bandwidth_floor_bw(&bw, &t, 1, &f), "no one-thread read: no figures");
}

/* Above 100% of the floor: in cache when the working set fits, else the
   floor is to fix; unknown cache sizes never claim a cache. */
static void test_note(void) {
  odb_floor_bw f;
  odb_floor_bw_gpu(4e12, 3.5e12, 50e6, &f);
  tap_ok(odb_floor_note(&f, 99.9, 1e9) == NULL &&
         odb_floor_note(&f, 100, 1e3) == NULL, "at or below 100%%: no note");
  tap_ok(odb_floor_note(&f, NAN, 1e3) == NULL, "no number: no note");
  tap_ok(!strcmp(odb_floor_note(&f, 118.6, 40e6), "in cache"),
         "118.6%% with 40 MB in a 50 MB L2: in cache");
  tap_ok(!strcmp(odb_floor_note(&f, 118.6, 500e6), "floor to fix"),
         "118.6%% with 500 MB beyond a 50 MB L2: floor to fix");
  f.cache_bytes = 0;
  tap_ok(!strcmp(odb_floor_note(&f, 150, 1e3), "floor to fix"),
         "unknown cache: floor to fix");
}

/*
** CSR, n = 5, nnz = 13 (a tridiagonal band of 13 entries):
**   matrix 13*8 (values) + 13*4 (int32 columns) + 6*8 (int64 row
**   pointers) = 104 + 52 + 48 = 204; x 5*8 = 40 read; y 5*8 = 40 written.
** The same as DIA: offsets -1, 0, 1 hold 4 + 5 + 4 = 13 entries in the
** matrix (8 each) + 3 offsets (8 each) = 128; ELL width 3: 12*5*3 = 180.
*/
static void test_sparse(void) {
  int64_t rp[6] = { 0, 2, 5, 8, 11, 13 };
  int32_t col[13] = { 0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4 };
  double val[13], r, w;
  odb_sparse *A = NULL, *D = NULL, *E = NULL, *B = NULL;
  odb_reservoir *g = NULL;
  for (int i = 0; i < 13; ++i) val[i] = 1 + i;
  odb_sparse_csr_from(5, rp, col, val, &A);
  odb_sparse_min_bytes(A, &r, &w);
  tap_ok(r == 204 + 40 && w == 40, "CSR n = 5, nnz = 13: read 244, write 40 "
         "(got %g, %g)", r, w);
  odb_sparse_convert(A, ODB_FMT_DIA, 0, 0, 0, &D);
  odb_sparse_min_bytes(D, &r, &w);
  tap_ok(D && r == 128 + 40 && w == 40, "DIA of it: the 13 entries inside "
         "the matrix and 3 offsets, read 168 (got %g)", r);
  odb_sparse_convert(A, ODB_FMT_ELL, 0, 3, 0, &E);
  odb_sparse_min_bytes(E, &r, &w);
  tap_ok(E && r == 180 + 40 && w == 40, "ELL width 3: padding read too, "
         "read 220 (got %g)", r);
  odb_krylov_min_bytes(A, ODB_KRYLOV_BICGSTAB, &r, &w);
  tap_ok(r == 2 * 204 + 11 * 40 && w == 6 * 40, "BiCGStab iteration: A "
         "twice + 11 vectors read, 6 written (got %g, %g)", r, w);
  odb_krylov_min_bytes(A, ODB_KRYLOV_QMR, &r, &w);
  tap_ok(r == 2 * 204 + 13 * 40 && w == 9 * 40, "QMR iteration: A and A^T "
         "+ 13 vectors read, 9 written (got %g, %g)", r, w);
  /* Bdia, 2 x 2 x 2 cells, k = 1, no wells: 7 * 8 = 56 stored entries; the
     columns outside 0..7 are those of cells m with m + off < 0 or >= 8
     for off = -4, -2, -1, 1, 2, 4: 4 + 2 + 1 + 1 + 2 + 4 = 14; 42 left */
  if (odb_reservoir_create(&g, 2, 2, 2, 1, 0, ODB_GH_BLOCK, 1) == ODB_OK &&
      odb_reservoir_bdia(g, &B) == ODB_OK) {
    double want = 8.0 * 42 + 4.0 * B->bd->pu * B->bd->pv;
    tap_ok(odb_sparse_matrix_min_bytes(B) == want, "Bdia 2x2x2, k = 1: the "
           "42 entries with columns inside the matrix (got %g, want %g)",
           odb_sparse_matrix_min_bytes(B), want);
  } else {
    tap_ok(0, "Bdia 2x2x2: %s", odb_last_error());
  }
  odb_sparse_free(B);
  odb_reservoir_free(g);
  g = NULL;
  B = NULL;
  /* k = 2, half-block bias, 3 x 3 x 3 cells, 1 well: the count by brute
     force over every stored entry against the function */
  if (odb_reservoir_create(&g, 3, 3, 3, 2, 1, ODB_GH_HALF, 7) == ODB_OK &&
      odb_reservoir_bdia(g, &B) == ODB_OK) {
    const odb_bdia *b = B->bd;
    long M = b->M, Mk = M * b->k, JH = (long)b->J * b->H;
    long off[7] = { -JH, -b->J, -1, 0, 1, b->J, JH };
    double in = 0, cw = 0;
    for (long m = 0; m < M; ++m)
      for (int u = 0; u < 7; ++u) {
        int odd = (m & 1) && u != 3;
        long c0 = (m + off[u]) * b->k + (odd ? (u < 3 ? -1 : 1) : 0);
        for (int c = 0; c < b->k; ++c)
          in += (c0 + c >= 0 && c0 + c < Mk) ? b->k : 0;
      }
    for (int q = 0; q < b->nw; ++q) cw += b->c[q];
    double want = 8 * in + 16 * cw + 12.0 * b->nw + 4.0 * b->pu * b->pv
                  + 8.0 * b->nw;
    tap_ok(odb_sparse_matrix_min_bytes(B) == want, "Bdia 3x3x3, k = 2, "
           "half bias, one well: equals the count over every entry (%g, %g)",
           odb_sparse_matrix_min_bytes(B), want);
  } else {
    tap_ok(0, "Bdia 3x3x3: %s", odb_last_error());
  }
  odb_sparse_free(B);
  odb_reservoir_free(g);
  odb_sparse_free(E);
  odb_sparse_free(D);
  odb_sparse_free(A);
}

/*
** Batched, B = 3, 100 matrices (compact, 8 lanes: the 4 padding lanes of
** the last pack do not count): LU reads 100*9*8 = 7200 and writes
** 100*(9-3)*8 = 4800 (the first row of U is A's); solve 100*(9+3)*8 =
** 9600 read, 100*3*8 = 2400 written; TRSM reads L's 3 + X's 9 = 12
** doubles, writes 6; GEMM 18 read, 9 written; GEMV 12 read, 3 written.
** Block tridiagonal, 10 lines of K = 4 blocks of 2: 10 blocks a line,
** 10*10*4 = 400 doubles; factor reads 400*8 = 3200, writes all but the
** first rows of D_0 and C_0..C_2 (4 rows of 2): (400 - 80)*8 = 2560.
*/
static void test_dense(void) {
  odb_batch bt;
  odb_blocktridiag *t = NULL;
  double r, w, tc;
  odb_batch_init(&bt, ODB_LAYOUT_COMPACT, 100, 3, 8);
  odb_batched_min_bytes(&bt, ODB_BATCHED_OP_LU, 0, &r, &w, &tc);
  tap_ok(r == 7200 && w == 4800 && tc == 7200, "batched LU B = 3, 100 "
         "matrices: read 7200, write 4800 (got %g, %g)", r, w);
  odb_batched_min_bytes(&bt, ODB_BATCHED_OP_LU, 1, &r, &w, &tc);
  tap_ok(r == 7200 && w == 4800 + 1200, "with pivoting, 3 int pivots a "
         "matrix written more (got %g)", w);
  odb_batched_min_bytes(&bt, ODB_BATCHED_OP_SOLVE, 0, &r, &w, NULL);
  tap_ok(r == 9600 && w == 2400, "batched solve: read 9600, write 2400");
  odb_batched_min_bytes(&bt, ODB_BATCHED_OP_TRSM, 0, &r, &w, NULL);
  tap_ok(r == 100 * 12 * 8 && w == 100 * 6 * 8, "batched TRSM: read 9600, "
         "write 4800 (got %g, %g)", r, w);
  odb_batched_min_bytes(&bt, ODB_BATCHED_OP_GEMM, 0, &r, &w, NULL);
  tap_ok(r == 100 * 18 * 8 && w == 100 * 9 * 8, "batched GEMM");
  odb_batched_min_bytes(&bt, ODB_BATCHED_OP_GEMV, 0, &r, &w, NULL);
  tap_ok(r == 100 * 12 * 8 && w == 100 * 3 * 8, "batched GEMV");
  tap_ok(odb_batched_op_bytes(&bt, ODB_BATCHED_OP_LU) == 12000,
         "odb_batched_op_bytes is the same count (read + written)");
  if (odb_blocktridiag_new(10, 4, 2, ODB_LAYOUT_STANDARD, 1, &t) == ODB_OK) {
    odb_blocktridiag_min_bytes(t, 0, &r, &w, &tc);
    tap_ok(r == 3200 && w == 2560 && tc == 3200, "block tridiagonal factor: "
           "read 3200, write 2560 (got %g, %g)", r, w);
    tap_ok(odb_blocktridiag_factor_bytes(t) == r + w,
           "odb_blocktridiag_factor_bytes agrees");
    odb_blocktridiag_min_bytes(t, 1, &r, &w, NULL);
    tap_ok(r == 8 * (400 + 80) && w == 8 * 80 &&
           odb_blocktridiag_solve_bytes(t) == r + w, "block tridiagonal "
           "solve: factors and right-hand side read, solution written");
  } else {
    tap_ok(0, "blocktridiag: %s", odb_last_error());
  }
  odb_blocktridiag_free(t);
  /* A^T B with M = 4, N = 2, K = 1000: reads 8 (4000 + 2000), writes C's
     8 doubles; A C (tsmm) reads A and C, writes the 2000 of B */
  odb_tsm_min_bytes(ODB_TSM_TSMTTSM, ODB_TSM_D, 4, 2, 1000, &r, &w);
  tap_ok(r == 48000 && w == 64, "tsmttsm 4x2, K = 1000: read 48000, write "
         "64 (got %g, %g)", r, w);
  odb_tsm_min_bytes(ODB_TSM_TSMM, ODB_TSM_Z, 4, 2, 1000, &r, &w);
  tap_ok(r == 16 * (4000 + 8) && w == 16 * 2000, "tsmm complex: 16 bytes an "
         "entry");
}

/*
** A solve of n = 1000 with 10 attempts, 8 accepted: y read each attempt
** (80000 bytes), ynew written each accepted step (64000). Every CPU
** variant that takes bruss2d counts at least that in its stats.
*/
static void test_ode(odb_ctx *ctx) {
  odb_solve_stats st;
  double r, w, tc;
  const char *methods[] = { "dopri5", "radau2a5" };
  odb_problem *p = make_bruss(16);
  memset(&st, 0, sizeof st);
  st.steps = 10;
  st.accepted = 8;
  odb_solve_min_bytes(1000, &st, &r, &w, &tc);
  tap_ok(r == 80000 && w == 64000 && tc == 16000, "solve n = 1000, 10 "
         "attempts, 8 accepted: read 80000, write 64000 (got %g, %g)", r, w);
  for (int k = 0; k < 2; ++k) {
    const odb_method *m = odb_method_find(methods[k]);
    if (!m) continue;
    for (int i = 0; i < odb_variant_count(); ++i) {
      const odb_variant *v = odb_variant_at(i);
      odb_solver_opts o = { .h_fixed = 1e-4, .threads = 2 };
      odb_solver *s = NULL;
      char why[200];
      if (strcmp(v->backend, "cpu") != 0 || !v->applies(p, m, why, sizeof why)
          || odb_solver_create(ctx, p, m, odb_ctx_backend(ctx, "cpu"),
                               v->name, &o, &s) != ODB_OK)
        continue;
      if (odb_solver_integrate(s, 5e-4, &st) == ODB_OK) {
        odb_solve_min_bytes(p->n, &st, &r, &w, NULL);
        tap_ok(st.rbytes >= r && st.wbytes >= w, "%s/%s counts at least "
               "the floor's bytes (read %g >= %g, write %g >= %g)", m->name,
               v->name, st.rbytes, r, st.wbytes, w);
      }
      odb_solver_destroy(s);
    }
  }
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts co = { .seed = 1 };
  odb_ctx *ctx;
  test_routine();
  test_cpu_figures();
  test_note();
  test_sparse();
  test_dense();
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  test_ode(ctx);
  odb_ctx_destroy(ctx);
  return tap_done();
}
