/* test_batched.c - batched small matrices (standard and compact layouts)
   and the block-tridiagonal line solver: residuals, layout agreement,
   padding, zero pivots and bad input. Seed: ODB_SEED or the clock. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odebench.h"
#include "tap.h"

static odb_rng rng;
static const int blocks[] = { 2, 3, 5, 7, 9, 10, 15, 32 };
enum { NBLOCKS = sizeof blocks / sizeof blocks[0] };

/* Uniform in (-1, 1). */
static double urand(void) { return 2.0 * odb_rng_uniform(&rng) - 1.0; }

/* Fills n random B x B matrices, diagonal raised by dom*B (random sign). */
static void rand_mats(double *a, long n, int b, double dom) {
  for (long p = 0; p < n; ++p)
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j) {
        double v = urand();
        if (i == j)
          v += (v < 0 ? -dom : dom) * b;
        a[((size_t)p * b + i) * b + j] = v;
      }
}

static void rand_vec(double *x, size_t len) {
  for (size_t i = 0; i < len; ++i)
    x[i] = urand();
}

/* ||A x - rhs|| / ||rhs|| (2-norms) of matrix p, standard layout. */
static double residual(const double *a, const double *x, const double *rhs,
                       long p, int b) {
  double num = 0, den = 0;
  for (int i = 0; i < b; ++i) {
    double s = -rhs[p * b + i];
    for (int j = 0; j < b; ++j)
      s += a[((size_t)p * b + i) * b + j] * x[p * b + j];
    num += s * s;
    den += rhs[p * b + i] * rhs[p * b + i];
  }
  return sqrt(num) / sqrt(den);
}

/* Largest |u - v| / max|v| over len values. */
static double rel_diff(const double *u, const double *v, size_t len) {
  double d = 0, m = 0;
  for (size_t i = 0; i < len; ++i) {
    d = fmax(d, fabs(u[i] - v[i]));
    m = fmax(m, fabs(v[i]));
  }
  return m > 0 ? d / m : d;
}

/* Solves n systems in both layouts; checks residuals and agreement. */
static void check_solve(long n, int b, int vl) {
  odb_batch bs, bc;
  odb_batch_init(&bs, ODB_LAYOUT_STANDARD, n, b, 0);
  odb_batch_init(&bc, ODB_LAYOUT_COMPACT, n, b, vl);
  size_t ml = (size_t)n * b * b, vlen = (size_t)n * b;
  double *a = malloc(sizeof(double) * ml), *as = malloc(sizeof(double) * ml);
  double *rhs = malloc(sizeof(double) * vlen), *xs = malloc(sizeof(double) * vlen);
  double *ac = malloc(sizeof(double) * odb_batch_mat_len(&bc));
  double *xc = malloc(sizeof(double) * odb_batch_rhs_len(&bc, 1));
  double *back = malloc(sizeof(double) * ml), *xb = malloc(sizeof(double) * vlen);
  rand_mats(a, n, b, 1.0);
  rand_vec(rhs, vlen);
  memcpy(as, a, sizeof(double) * ml);
  memcpy(xs, rhs, sizeof(double) * vlen);
  long bad = 7;
  int ok = odb_batched_solve(&bs, as, xs, &bad) == ODB_OK && bad == -1;
  double worst = 0;
  for (long p = 0; p < n; ++p)
    worst = fmax(worst, residual(a, xs, rhs, p, b));
  tap_ok(ok && worst < 1e-12, "standard solve n=%ld B=%d: residual %.2e", n, b,
         worst);
  odb_batched_pack(&bc, a, ac);
  odb_batched_pack_rhs(&bc, 1, rhs, xc);
  ok = odb_batched_solve(&bc, ac, xc, &bad) == ODB_OK && bad == -1;
  odb_batched_unpack(&bc, ac, back);
  odb_batched_unpack_rhs(&bc, 1, xc, xb);
  worst = 0;
  for (long p = 0; p < n; ++p)
    worst = fmax(worst, residual(a, xb, rhs, p, b));
  double dx = rel_diff(xb, xs, vlen), dlu = rel_diff(back, as, ml);
  tap_ok(ok && worst < 1e-12 && dx < 1e-13 && dlu < 1e-13,
         "compact solve n=%ld B=%d VL=%d: residual %.2e, vs standard x %.1e "
         "LU %.1e", n, b, bc.vl, worst, dx, dlu);
  free(a); free(as); free(rhs); free(xs); free(ac); free(xc); free(back);
  free(xb);
}

/* Reference C = alpha A X + beta C (X, C with m columns), standard. */
static void ref_gemm(long n, int b, int m, double alpha, const double *a,
                     const double *x, double beta, double *c) {
  for (long p = 0; p < n; ++p)
    for (int i = 0; i < b; ++i)
      for (int col = 0; col < m; ++col) {
        double s = 0;
        for (int k = 0; k < b; ++k)
          s += a[((size_t)p * b + i) * b + k] * x[((size_t)p * b + k) * m + col];
        double *ci = c + ((size_t)p * b + i) * m + col;
        *ci = alpha * s + beta * *ci;
      }
}

/* GEMM, GEMV and the three TRSM kinds: compact against standard, and
   standard against a plain reference (TRSM: T * result = input). */
static void check_ops(long n, int b, int vl) {
  odb_batch bs, bc;
  odb_batch_init(&bs, ODB_LAYOUT_STANDARD, n, b, 0);
  odb_batch_init(&bc, ODB_LAYOUT_COMPACT, n, b, vl);
  size_t ml = (size_t)n * b * b, cl = odb_batch_mat_len(&bc);
  double *a = malloc(sizeof(double) * ml), *x = malloc(sizeof(double) * ml);
  double *c = malloc(sizeof(double) * ml), *r = malloc(sizeof(double) * ml);
  double *pa = malloc(sizeof(double) * cl), *px = malloc(sizeof(double) * cl);
  double *pc = malloc(sizeof(double) * cl), *u = malloc(sizeof(double) * ml);
  rand_mats(a, n, b, 1.0);
  rand_vec(x, ml);
  rand_vec(c, ml);
  /* GEMM */
  memcpy(r, c, sizeof(double) * ml);
  ref_gemm(n, b, b, 0.5, a, x, -2.0, r);
  odb_batched_pack(&bc, a, pa);
  odb_batched_pack(&bc, x, px);
  odb_batched_pack(&bc, c, pc);
  odb_batched_gemm(&bc, 0.5, pa, px, -2.0, pc);
  odb_batched_unpack(&bc, pc, u);
  double d1 = rel_diff(u, r, ml);
  memcpy(u, c, sizeof(double) * ml);
  odb_batched_gemm(&bs, 0.5, a, x, -2.0, u);
  double d2 = rel_diff(u, r, ml);
  tap_ok(d1 < 1e-13 && d2 < 1e-13, "gemm n=%ld B=%d VL=%d: %.1e %.1e", n, b,
         bc.vl, d1, d2);
  /* GEMV (rhs layout, m = 1) */
  size_t vlen = (size_t)n * b;
  memcpy(r, c, sizeof(double) * vlen);
  ref_gemm(n, b, 1, 1.5, a, x, 0.25, r);
  odb_batched_pack_rhs(&bc, 1, x, px);
  odb_batched_pack_rhs(&bc, 1, c, pc);
  odb_batched_gemv(&bc, 1.5, pa, px, 0.25, pc);
  odb_batched_unpack_rhs(&bc, 1, pc, u);
  d1 = rel_diff(u, r, vlen);
  memcpy(u, c, sizeof(double) * vlen);
  odb_batched_gemv(&bs, 1.5, a, x, 0.25, u);
  d2 = rel_diff(u, r, vlen);
  tap_ok(d1 < 1e-13 && d2 < 1e-13, "gemv n=%ld B=%d VL=%d: %.1e %.1e", n, b,
         bc.vl, d1, d2);
  /* TRSM: factor a, then solve each kind; rebuild the input from factors. */
  odb_batched_lu(&bs, a, NULL);
  odb_batched_pack(&bc, a, pa);
  for (int kind = 0; kind < 3; ++kind) {
    double *lo = malloc(sizeof(double) * ml), *up = malloc(sizeof(double) * ml);
    for (long p = 0; p < n; ++p)
      for (int i = 0; i < b; ++i)
        for (int j = 0; j < b; ++j) {
          size_t e = ((size_t)p * b + i) * b + j;
          lo[e] = i > j ? a[e] : (i == j ? 1.0 : 0.0);
          up[e] = i <= j ? a[e] : 0.0;
        }
    memcpy(u, x, sizeof(double) * ml);
    odb_batched_trsm(&bs, (odb_batched_trsm_kind)kind, a, u);
    /* r = T * u (left) or u * U (right) must give x back. */
    if (kind == ODB_TRSM_LEFT_LOWER_UNIT) {
      ref_gemm(n, b, b, 1.0, lo, u, 0.0, r);
    } else if (kind == ODB_TRSM_LEFT_UPPER) {
      ref_gemm(n, b, b, 1.0, up, u, 0.0, r);
    } else {
      for (size_t e = 0; e < ml; ++e)
        r[e] = 0;
      for (long p = 0; p < n; ++p)   /* r = u * up */
        for (int i = 0; i < b; ++i)
          for (int j = 0; j < b; ++j)
            for (int k = 0; k < b; ++k)
              r[((size_t)p * b + i) * b + j] += u[((size_t)p * b + i) * b + k] *
                                                up[((size_t)p * b + k) * b + j];
    }
    d2 = rel_diff(r, x, ml);
    odb_batched_pack(&bc, x, px);
    odb_batched_trsm(&bc, (odb_batched_trsm_kind)kind, pa, px);
    odb_batched_unpack(&bc, px, r);
    d1 = rel_diff(r, u, ml);
    tap_ok(d1 < 1e-13 && d2 < 1e-12, "trsm kind %d n=%ld B=%d VL=%d: compact "
           "vs standard %.1e, T*X vs input %.1e", kind, n, b, bc.vl, d1, d2);
    free(lo);
    free(up);
  }
  free(a); free(x); free(c); free(r); free(pa); free(px); free(pc); free(u);
}

/* A zero pivot in matrix 5 is reported with its index in both layouts. */
static void check_zero_pivot(int b) {
  long n = 11;
  for (int lay = 0; lay < 2; ++lay) {
    odb_batch bt;
    odb_batch_init(&bt, (odb_batched_layout)lay, n, b, 4);
    double *a = malloc(sizeof(double) * (size_t)n * b * b);
    double *p = malloc(sizeof(double) * odb_batch_mat_len(&bt));
    rand_mats(a, n, b, 1.0);
    /* second pivot of matrix 5 becomes exactly zero: a11 = a10*a01/a00 */
    double *m5 = a + (size_t)5 * b * b;
    m5[b + 1] = m5[b] * m5[1] / m5[0];
    odb_batched_pack(&bt, a, p);
    long bad = -7;
    odb_clear_error();
    odb_status st = odb_batched_lu(&bt, p, &bad);
    tap_ok(st == ODB_ERR_ARG && bad == 5 &&
           strstr(odb_last_error(), "matrix 5") != NULL,
           "%s B=%d: zero pivot reported for matrix %ld (%s)",
           odb_batched_layout_name(bt.layout), b, bad, odb_last_error());
    free(a);
    free(p);
  }
}

/* Bad shapes are refused. */
static void check_bad_input(void) {
  odb_batch bt;
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 1, 4) == ODB_ERR_ARG,
         "B=1 refused");
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 33, 4) == ODB_ERR_ARG,
         "B=33 refused");
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, 0, 3, 4) == ODB_ERR_ARG,
         "n=0 refused");
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, -4, 3, 4) == ODB_ERR_ARG,
         "n<0 refused");
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 3, 3) == ODB_ERR_ARG,
         "VL=3 refused");
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 3, 0) == ODB_OK &&
         bt.vl == odb_batched_default_vl() && bt.packs == (10 + bt.vl - 1) / bt.vl,
         "VL=0 gives the default %d", odb_batched_default_vl());
  odb_batched_layout l;
  tap_ok(odb_batched_layout_parse("compact", &l) == ODB_OK &&
         l == ODB_LAYOUT_COMPACT && odb_batched_layout_parse("x", &l) ==
         ODB_ERR_NAME, "layout names parse");
  odb_blocktridiag *t = NULL;
  tap_ok(odb_blocktridiag_new(3, 0, 3, ODB_LAYOUT_COMPACT, 4, &t) ==
         ODB_ERR_ARG && t == NULL, "blocktridiag length 0 refused");
  tap_ok(odb_blocktridiag_new(0, 3, 3, ODB_LAYOUT_COMPACT, 4, &t) ==
         ODB_ERR_ARG && t == NULL, "blocktridiag 0 lines refused");
  tap_ok(odb_blocktridiag_new(3, 3, 40, ODB_LAYOUT_COMPACT, 4, &t) ==
         ODB_ERR_ARG && t == NULL, "blocktridiag block 40 refused");
  odb_blocktridiag_new(3, 4, 3, ODB_LAYOUT_COMPACT, 4, &t);
  double x[3 * 4 * 3] = { 0 }, blk[9] = { 0 };
  tap_ok(odb_blocktridiag_solve(t, x, 36, NULL) == ODB_ERR_ARG,
         "solve before factor refused");
  tap_ok(odb_blocktridiag_set(t, 3, 0, ODB_BTD_D, blk) == ODB_ERR_ARG &&
         odb_blocktridiag_set(t, 0, 4, ODB_BTD_D, blk) == ODB_ERR_ARG,
         "block outside the object refused");
  tap_ok(odb_blocktridiag_factor(t, NULL) == ODB_OK &&
         odb_blocktridiag_solve(t, x, 35, NULL) == ODB_ERR_ARG,
         "mismatched right-hand side size refused");
  odb_blocktridiag_free(t);
}

/* Random block-diagonally dominant lines; residual of every line and the
   agreement of the compact and standard layouts. */
static void check_btd(long lines, int K, int b, int vl) {
  size_t bb = (size_t)b * b, nb = (size_t)lines * K * 3 * bb;
  size_t len = (size_t)lines * K * b;
  double *blk = malloc(sizeof(double) * nb);
  double *rhs = malloc(sizeof(double) * len);
  double *x[2] = { malloc(sizeof(double) * len), malloc(sizeof(double) * len) };
  odb_blocktridiag *t[2] = { NULL, NULL };
  rand_mats(blk, (long)lines * K * 3, b, 0.0);
  for (size_t q = 0; q < (size_t)lines * K; ++q)
    for (int i = 0; i < b; ++i) {   /* D dominant over A, D and C rows */
      double *d = blk + (q * 3 + 1) * bb + (size_t)i * b + i;
      *d += (*d < 0 ? -3.0 : 3.0) * b;
    }
  rand_vec(rhs, len);
  int ok = 1;
  for (int lay = 0; lay < 2; ++lay) {
    ok &= odb_blocktridiag_new(lines, K, b, (odb_batched_layout)lay, vl,
                               &t[lay]) == ODB_OK;
    for (long ln = 0; ln < lines && ok; ++ln)
      for (int r = 0; r < K; ++r)
        for (int w = 0; w < 3; ++w) {
          if ((w == 0 && r == 0) || (w == 2 && r == K - 1))
            continue;
          ok &= odb_blocktridiag_set(t[lay], ln, r, (odb_btd_block)w,
                blk + (((size_t)ln * K + r) * 3 + w) * bb) == ODB_OK;
        }
    long bad = 9;
    ok &= odb_blocktridiag_factor(t[lay], &bad) == ODB_OK && bad == -1;
    memcpy(x[lay], rhs, sizeof(double) * len);
    ok &= odb_blocktridiag_solve(t[lay], x[lay], len, NULL) == ODB_OK;
  }
  double worst = 0;
  for (int lay = 0; lay < 2; ++lay)
    for (long ln = 0; ln < lines; ++ln) {
      double num = 0, den = 0;
      for (int r = 0; r < K; ++r)
        for (int i = 0; i < b; ++i) {
          double s = -rhs[((size_t)ln * K + r) * b + i];
          for (int w = 0; w < 3; ++w) {
            int c = r + w - 1;
            if (c < 0 || c >= K)
              continue;
            const double *m = blk + (((size_t)ln * K + r) * 3 + w) * bb;
            for (int j = 0; j < b; ++j)
              s += m[i * b + j] * x[lay][((size_t)ln * K + c) * b + j];
          }
          num += s * s;
          den += rhs[((size_t)ln * K + r) * b + i] *
                 rhs[((size_t)ln * K + r) * b + i];
        }
      worst = fmax(worst, sqrt(num) / sqrt(den));
    }
  double d = rel_diff(x[1], x[0], len);
  tap_ok(ok && worst < 1e-12 && d < 1e-13, "blocktridiag lines=%ld K=%d B=%d "
         "VL=%d: worst line residual %.2e, compact vs standard %.1e", lines, K,
         b, odb_blocktridiag_batch(t[1])->vl, worst, d);
  odb_blocktridiag_free(t[0]);
  odb_blocktridiag_free(t[1]);
  free(blk); free(rhs); free(x[0]); free(x[1]);
}

/* A zero pivot in line 4 row 2 is reported with the line. */
static void check_btd_zero_pivot(void) {
  odb_blocktridiag *t = NULL;
  double z[9] = { 0 };
  odb_blocktridiag_new(6, 3, 3, ODB_LAYOUT_COMPACT, 4, &t);
  odb_blocktridiag_set(t, 4, 2, ODB_BTD_D, z);
  long bad = -7;
  odb_status st = odb_blocktridiag_factor(t, &bad);
  tap_ok(st == ODB_ERR_ARG && bad == 4 && strstr(odb_last_error(), "line 4"),
         "blocktridiag zero pivot reported (%s)", odb_last_error());
  odb_blocktridiag_free(t);
}

/* Factor and solve spread over a team of 2 give the serial answers; a bad
   pivot in the second member's packs is reported with its line. */
static void check_btd_team(void) {
  odb_team *team = NULL;
  if (odb_team_create(NULL, NULL, 2, ODB_BARRIER_PTHREAD, &team) != ODB_OK) {
    tap_ok(0, "team of 2 created (%s)", odb_last_error());
    return;
  }
  for (int lay = 0; lay < 2; ++lay) {
    long lines = 29;
    int K = 6, b = 5;
    size_t bb = (size_t)b * b;
    odb_blocktridiag *t[2];
    double blk[25];
    int ok = 1;
    for (int k = 0; k < 2; ++k)
      ok &= odb_blocktridiag_new(lines, K, b, (odb_batched_layout)lay, 4,
                                 &t[k]) == ODB_OK;
    for (long ln = 0; ln < lines; ++ln)
      for (int r = 0; r < K; ++r)
        for (int w = 0; w < 3; ++w) {
          rand_mats(blk, 1, b, w == 1 ? 3.0 : 0.0);
          for (int k = 0; k < 2; ++k)
            odb_blocktridiag_set(t[k], ln, r, (odb_btd_block)w, blk);
        }
    size_t wl = odb_blocktridiag_work_len(t[0]);
    double *x[2] = { malloc(sizeof(double) * wl), malloc(sizeof(double) * wl) };
    rand_vec(x[0], wl);
    memcpy(x[1], x[0], sizeof(double) * wl);
    ok &= odb_blocktridiag_factor(t[0], NULL) == ODB_OK;
    ok &= odb_blocktridiag_factor_team(t[1], team, NULL) == ODB_OK;
    ok &= odb_blocktridiag_solve_packed(t[0], x[0]) == ODB_OK;
    ok &= odb_blocktridiag_solve_packed_team(t[1], team, x[1]) == ODB_OK;
    double d = rel_diff(x[1], x[0], wl);
    tap_ok(ok && d == 0.0, "%s: team of 2 equals serial (diff %.1e)",
           odb_batched_layout_name((odb_batched_layout)lay), d);
    for (size_t e = 0; e < bb; ++e)
      blk[e] = 0.0;
    odb_blocktridiag_set(t[1], 26, 0, ODB_BTD_D, blk);
    odb_blocktridiag_set(t[1], 27, 0, ODB_BTD_D, blk);
    long bad = -7;
    odb_status st = odb_blocktridiag_factor_team(t[1], team, &bad);
    tap_ok(st == ODB_ERR_ARG && bad == 26, "%s: team reports the lowest bad "
           "line %ld", odb_batched_layout_name((odb_batched_layout)lay), bad);
    odb_blocktridiag_free(t[0]);
    odb_blocktridiag_free(t[1]);
    free(x[0]);
    free(x[1]);
  }
  odb_team_destroy(team);
}

/* Shapes whose bytes do not fit a size_t are refused before anything is
   allocated, and a block row past 2^32 is not taken for a small one. */
static void check_sizes_and_indices(void) {
  odb_batch bt;
  odb_blocktridiag *t = NULL;
  odb_clear_error();
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, LONG_MAX, 32, 16) ==
         ODB_ERR_NOMEM && strstr(odb_last_error(), "more than this machine"),
         "a batch of LONG_MAX matrices is refused: %s", odb_last_error());
  tap_ok(odb_batch_init(&bt, ODB_LAYOUT_COMPACT, LONG_MAX - 1, 2, 16) ==
         ODB_ERR_NOMEM, "n near LONG_MAX: the pack count does not wrap");
  tap_ok(odb_blocktridiag_new(1L << 33, 1 << 22, 32, ODB_LAYOUT_COMPACT, 0,
                              &t) == ODB_ERR_NOMEM && t == NULL &&
         strstr(odb_last_error(), "lines = 8589934592, length = 4194304, "
                "block = 32: the blocks would need"),
         "blocktridiag 2^33 x 2^22 x 32 refused: %s", odb_last_error());
  size_t bytes = 0;
  tap_ok(odb_blocktridiag_size(5, 3, 4, ODB_LAYOUT_COMPACT, 4, &bytes) ==
         ODB_OK && bytes == (size_t)8 * 4 * 3 * 3 * 16 * 2,
         "blocktridiag size of 5 lines (2 packs of 4): %zu bytes", bytes);
  odb_blocktridiag_new(3, 4, 2, ODB_LAYOUT_COMPACT, 4, &t);
  double blk[4] = { 5, 6, 7, 8 }, got[4];
  odb_status st = odb_blocktridiag_set(t, 0, (1L << 32) + 1, ODB_BTD_D, blk);
  odb_blocktridiag_get(t, 0, 1, ODB_BTD_D, got);
  tap_ok(st == ODB_ERR_ARG && got[0] == 1 && got[1] == 0 && got[3] == 1 &&
         strstr(odb_last_error(), "4294967297"),
         "block row 2^32 + 1 refused, row 1 untouched: %s", odb_last_error());
  tap_ok(odb_blocktridiag_get(t, 0, (1L << 32) + 1, ODB_BTD_D, got) ==
         ODB_ERR_ARG, "block row 2^32 + 1 not read");
  odb_blocktridiag_free(t);
}

/* odb_batched_lu_check refuses what odb_batched_lu refuses (matrix 5, row
   1) without writing A; on good matrices it passes and A is unchanged. */
static void check_lu_check(int b) {
  long n = 11;
  for (int lay = 0; lay < 2; ++lay) {
    odb_batch bt;
    odb_batch_init(&bt, (odb_batched_layout)lay, n, b, 4);
    size_t ml = odb_batch_mat_len(&bt);
    double *a = malloc(sizeof(double) * (size_t)n * b * b);
    double *p = malloc(sizeof(double) * ml), *q = malloc(sizeof(double) * ml);
    rand_mats(a, n, b, 1.0);
    odb_batched_pack(&bt, a, p);
    memcpy(q, p, sizeof(double) * ml);
    long bad = 7;
    int row = 7;
    int ok = odb_batched_lu_check(&bt, p, &bad, &row) == ODB_OK &&
             bad == -1 && row == -1 && !memcmp(p, q, sizeof(double) * ml);
    double *m5 = a + (size_t)5 * b * b;   /* second pivot of matrix 5: 0 */
    m5[b + 1] = m5[b] * m5[1] / m5[0];
    odb_batched_pack(&bt, a, p);
    memcpy(q, p, sizeof(double) * ml);
    odb_status st = odb_batched_lu_check(&bt, p, &bad, &row);
    ok &= st == ODB_ERR_ARG && bad == 5 && row == 1 &&
          strstr(odb_last_error(), "matrix 5 has a zero or tiny pivot at "
                 "row 1") && !memcmp(p, q, sizeof(double) * ml);
    long bad2 = -7;
    ok &= odb_batched_lu(&bt, q, &bad2) == ODB_ERR_ARG && bad2 == bad;
    tap_ok(ok, "%s B=%d: LU check finds matrix %ld row %d, A untouched",
           odb_batched_layout_name(bt.layout), b, bad, row);
    free(a);
    free(p);
    free(q);
  }
}

/* odb_blocktridiag_factor_check names the lowest bad line (line 1 failing
   at row 3 before line 2 failing at row 1, in one pack) and its row
   without writing a block; the raw factorization agrees; once the blocks
   are fixed the check passes and factor + solve is exact. */
static void check_btd_factor_check(void) {
  for (int lay = 0; lay < 2; ++lay) {
    long lines = 7;
    int K = 4, b = 3;
    odb_blocktridiag *t = NULL;
    double z[9] = { 0 }, keep[3][9];
    odb_blocktridiag_new(lines, K, b, (odb_batched_layout)lay, 4, &t);
    odb_blocktridiag_random(t, 5, 3.0);
    size_t len = odb_blocktridiag_blocks_len(t);
    double *orig = malloc(sizeof(double) * len);
    odb_blocktridiag_get(t, 1, 2, ODB_BTD_A, keep[0]);
    odb_blocktridiag_get(t, 1, 2, ODB_BTD_D, keep[1]);
    odb_blocktridiag_get(t, 2, 0, ODB_BTD_D, keep[2]);
    odb_blocktridiag_set(t, 1, 2, ODB_BTD_A, z);   /* line 1, row 2: 0 */
    odb_blocktridiag_set(t, 1, 2, ODB_BTD_D, z);
    odb_blocktridiag_set(t, 2, 0, ODB_BTD_D, z);   /* line 2, row 0: 0 */
    memcpy(orig, odb_blocktridiag_blocks(t), sizeof(double) * len);
    long bad = 9;
    int row = 9;
    odb_status st = odb_blocktridiag_factor_check(t, &bad, &row);
    int ok = st == ODB_ERR_ARG && bad == 1 && row == 2 &&
             strstr(odb_last_error(), "line 1 has a zero or tiny pivot in "
                    "the diagonal block of row 2") &&
             !memcmp(orig, odb_blocktridiag_blocks(t), sizeof(double) * len) &&
             !odb_blocktridiag_factored(t);
    long raw = -7, bad1 = bad;
    int row1 = row;
    ok &= odb_blocktridiag_factor(t, &raw) == ODB_ERR_ARG && raw == 1;
    memcpy(odb_blocktridiag_blocks(t), orig, sizeof(double) * len);
    odb_blocktridiag_mark_factored(t, 0);
    odb_blocktridiag_set(t, 1, 2, ODB_BTD_A, keep[0]);
    odb_blocktridiag_set(t, 1, 2, ODB_BTD_D, keep[1]);
    odb_blocktridiag_set(t, 2, 0, ODB_BTD_D, keep[2]);
    ok &= odb_blocktridiag_factor_check(t, &bad, &row) == ODB_OK &&
          bad == -1 && row == -1;
    /* a fresh object with the same random blocks factors to the same
       values: the check wrote nothing */
    odb_blocktridiag *u = NULL;
    odb_blocktridiag_new(lines, K, b, (odb_batched_layout)lay, 4, &u);
    odb_blocktridiag_random(u, 5, 3.0);
    ok &= odb_blocktridiag_factor(t, NULL) == ODB_OK &&
          odb_blocktridiag_factor(u, NULL) == ODB_OK &&
          !memcmp(odb_blocktridiag_blocks(t), odb_blocktridiag_blocks(u),
                  sizeof(double) * len);
    tap_ok(ok, "%s: factor check names line %ld row %d, blocks untouched",
           odb_batched_layout_name((odb_batched_layout)lay), bad1, row1);
    odb_blocktridiag_free(t);
    odb_blocktridiag_free(u);
    free(orig);
  }
}

int main(void) {
  const char *env = getenv("ODB_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  tap_diag("seed %llu (set ODB_SEED to repeat)", (unsigned long long)seed);
  odb_rng_seed(&rng, seed);
  static const int vls[] = { 2, 4, 8, 16 };
  for (int bi = 0; bi < NBLOCKS; ++bi) {
    int b = blocks[bi];
    check_solve(1, b, 0);
    check_solve(37, b, 0);
    check_solve(13, b, vls[bi % 4]);
    check_ops(11, b, 0);
    check_ops(5, b, vls[(bi + 1) % 4]);
    check_zero_pivot(b);
    check_lu_check(b);
    check_btd(11, 5, b, 0);
    check_btd(3, 1, b, vls[(bi + 2) % 4]);
    check_btd(1, 8, b, vls[bi % 4]);
  }
  check_bad_input();
  check_btd_zero_pivot();
  check_btd_team();
  check_sizes_and_indices();
  check_btd_factor_check();
  return tap_done();
}
