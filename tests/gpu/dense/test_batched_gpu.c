/* test_batched_gpu.c - the batched GPU kernels (gpu/dense/odb_batched_gpu.cu)
   against the CPU (core/batched): LU, solves, TRSM/TRSV, GEMM/GEMV in every
   variant and layout, the block-tridiagonal factor and solve, cuBLAS, zero
   pivots and bad input, on fresh random diagonally dominant systems (TAP;
   exit 77 without a GPU). Seed: ODB_SEED or the clock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odebench.h"
#include "odb_batched_gpu.h"
#include "tap.h"

static odb_rng rng;
static const int blocks[] = { 2, 3, 4, 5, 7, 8, 9, 10, 11, 15, 16, 17, 24,
                              32 };
enum { NBLOCKS = sizeof blocks / sizeof blocks[0] };
static const int vls[] = { 1, 2, 4, 8, 16, 32 };   /* 1: standard layout */
enum { NVLS = sizeof vls / sizeof vls[0] };
static const odb_bgpu_variant variants[] = { ODB_BGPU_SERIAL,
                                             ODB_BGPU_SERIAL2, ODB_BGPU_TEAM };
/* GPU results against the CPU's: rounding differs in order only. */
#define AGREE 1e-12

static double urand(void) { return 2.0 * odb_rng_uniform(&rng) - 1.0; }

/* n random B x B matrices (standard layout), diagonal raised by dom*B. */
static void rand_mats(double *a, long n, int b, double dom) {
  for (long p = 0; p < n; ++p)
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j) {
        double v = urand();
        if (i == j) v += (v < 0 ? -dom : dom) * b;
        a[((size_t)p * b + i) * b + j] = v;
      }
}

static void rand_vec(double *x, size_t len) {
  for (size_t i = 0; i < len; ++i) x[i] = urand();
}

/* max |u - v| / max |v| (NaN counts as infinitely wrong). */
static double rel_diff(const double *u, const double *v, size_t len) {
  double d = 0, m = 0;
  for (size_t i = 0; i < len; ++i) {
    double e = fabs(u[i] - v[i]);
    if (!(e <= d)) d = isnan(e) ? INFINITY : e;
    m = fmax(m, fabs(v[i]));
  }
  return m > 0 ? d / m : d;
}

/* Worst ||A_p x_p - b_p|| / ||b_p|| (standard layouts). */
static double worst_residual(const double *a, const double *x,
                             const double *rhs, long n, int b) {
  double worst = 0;
  for (long p = 0; p < n; ++p) {
    double num = 0, den = 0;
    for (int i = 0; i < b; ++i) {
      double s = -rhs[p * b + i];
      for (int j = 0; j < b; ++j)
        s += a[((size_t)p * b + i) * b + j] * x[p * b + j];
      num += s * s;
      den += rhs[p * b + i] * rhs[p * b + i];
    }
    double r = sqrt(num) / sqrt(den);
    if (!(r <= worst)) worst = isnan(r) ? INFINITY : r;
  }
  return worst;
}

static void *xmalloc(size_t doubles) {
  void *p = malloc(sizeof(double) * (doubles ? doubles : 1));
  if (!p) {
    printf("Bail out! no memory\n");
    exit(1);
  }
  return p;
}

/* Device copy of a host array (NULL on failure, reported). */
static double *to_dev(const double *h, size_t len) {
  double *d = NULL;
  if (odb_bgpu_alloc(len, &d) != ODB_OK ||
      odb_bgpu_upload(d, h, len) != ODB_OK) {
    tap_diag("device copy: %s", odb_last_error());
    odb_bgpu_free(d);
    return NULL;
  }
  return d;
}

/* The batch of layout vl (1: standard). */
static int batch_of(odb_batch *bt, long n, int b, int vl) {
  return odb_bgpu_batch_init(bt, vl == 1 ? ODB_LAYOUT_STANDARD
                             : ODB_LAYOUT_COMPACT, n, b, vl) == ODB_OK;
}

/* Host data of one batch test and the CPU reference results. */
typedef struct ref_data {
  long n;
  int b;
  size_t ml, vlen;
  double *a, *rhs, *lu, *x;        /* input, CPU factors, CPU solution */
  double *xm, *c, *gemm, *gemv;    /* B x B operand, C, CPU results */
  double *trsm[3], *trsv[2];
} ref_data;

/* Fresh random data and the CPU results in the standard layout. */
static int ref_init(ref_data *r, long n, int b) {
  odb_batch s;
  memset(r, 0, sizeof *r);
  r->n = n;
  r->b = b;
  r->ml = (size_t)n * b * b;
  r->vlen = (size_t)n * b;
  if (odb_batch_init(&s, ODB_LAYOUT_STANDARD, n, b, 1) != ODB_OK) return 0;
  r->a = xmalloc(r->ml); r->lu = xmalloc(r->ml);
  r->rhs = xmalloc(r->vlen); r->x = xmalloc(r->vlen);
  r->xm = xmalloc(r->ml); r->c = xmalloc(r->ml); r->gemm = xmalloc(r->ml);
  r->gemv = xmalloc(r->vlen);
  rand_mats(r->a, n, b, 1.0);
  rand_vec(r->rhs, r->vlen);
  rand_vec(r->xm, r->ml);
  rand_vec(r->c, r->ml);
  memcpy(r->lu, r->a, sizeof(double) * r->ml);
  memcpy(r->x, r->rhs, sizeof(double) * r->vlen);
  int ok = odb_batched_solve(&s, r->lu, r->x, NULL) == ODB_OK;
  memcpy(r->gemm, r->c, sizeof(double) * r->ml);
  ok &= odb_batched_gemm(&s, 0.5, r->a, r->xm, -2.0, r->gemm) == ODB_OK;
  memcpy(r->gemv, r->c, sizeof(double) * r->vlen);
  ok &= odb_batched_gemv(&s, 1.5, r->a, r->rhs, 0.25, r->gemv) == ODB_OK;
  for (int k = 0; k < 3; ++k) {
    r->trsm[k] = xmalloc(r->ml);
    memcpy(r->trsm[k], r->xm, sizeof(double) * r->ml);
    ok &= odb_batched_trsm(&s, (odb_batched_trsm_kind)k, r->lu,
                           r->trsm[k]) == ODB_OK;
  }
  for (int k = 0; k < 2; ++k) {
    r->trsv[k] = xmalloc(r->vlen);
    memcpy(r->trsv[k], r->rhs, sizeof(double) * r->vlen);
    ok &= odb_batched_trsv(&s, (odb_batched_trsm_kind)k, r->lu,
                           r->trsv[k]) == ODB_OK;
  }
  return ok;
}

static void ref_free(ref_data *r) {
  free(r->a); free(r->lu); free(r->rhs); free(r->x); free(r->xm); free(r->c);
  free(r->gemm); free(r->gemv);
  for (int k = 0; k < 3; ++k) free(r->trsm[k]);
  for (int k = 0; k < 2; ++k) free(r->trsv[k]);
}

/* Packs standard host data into bt's layout on the device (m: 0 for
   matrices, else rhs columns). NULL on failure. */
static double *dev_packed(const odb_batch *bt, const double *h, int m) {
  size_t sl = (size_t)bt->n * bt->b * (m ? m : bt->b);
  size_t pl = m ? odb_batch_rhs_len(bt, m) : odb_batch_mat_len(bt);
  double *ds = to_dev(h, sl), *dp = NULL;
  odb_status st = ds ? odb_bgpu_alloc(pl, &dp) : ODB_ERR_NOMEM;
  if (st == ODB_OK)
    st = m ? odb_bgpu_pack_rhs(bt, m, ds, dp) : odb_bgpu_pack(bt, ds, dp, 0);
  odb_bgpu_free(ds);
  if (st != ODB_OK) {
    tap_diag("pack: %s", odb_last_error());
    odb_bgpu_free(dp);
    return NULL;
  }
  return dp;
}

/* Unpacks a device batch into host standard data h (m as above). */
static int host_unpacked(const odb_batch *bt, const double *dp, int m,
                         double *h) {
  size_t sl = (size_t)bt->n * bt->b * (m ? m : bt->b);
  double *ds = NULL;
  odb_status st = odb_bgpu_alloc(sl, &ds);
  if (st == ODB_OK)
    st = m ? odb_bgpu_unpack_rhs(bt, m, dp, ds) : odb_bgpu_unpack(bt, dp, ds,
                                                                   0);
  if (st == ODB_OK) st = odb_bgpu_download(h, ds, sl);
  odb_bgpu_free(ds);
  if (st != ODB_OK) tap_diag("unpack: %s", odb_last_error());
  return st == ODB_OK;
}

/* The device pack equals the host pack exactly, padding included. */
static int check_pack(const odb_batch *bt, const ref_data *r) {
  size_t pl = odb_batch_mat_len(bt);
  double *h = xmalloc(pl), *g = xmalloc(pl);
  double *dp = dev_packed(bt, r->a, 0);
  int ok = dp && odb_bgpu_download(g, dp, pl) == ODB_OK;
  odb_batched_pack(bt, r->a, h);
  ok = ok && memcmp(h, g, sizeof(double) * pl) == 0;
  odb_bgpu_free(dp);
  free(h);
  free(g);
  return ok;
}

/*
** LU, solve, TRSM x3, TRSV x2, GEMM, GEMV of variant v on layout vl
** against the CPU; one TAP line. Returns 0 when v does not apply.
*/
static void check_variant(const ref_data *r, int vl, odb_bgpu_variant v) {
  odb_batch bt;
  odb_bgpu_variant res;
  if (!batch_of(&bt, r->n, r->b, vl)) {
    tap_ok(0, "batch n=%ld B=%d VL=%d: %s", r->n, r->b, vl, odb_last_error());
    return;
  }
  if (odb_bgpu_resolve(&bt, ODB_BGPU_OP_LU, v, &res) != ODB_OK) return;
  int other_ops = odb_bgpu_resolve(&bt, ODB_BGPU_OP_GEMM, v, &res) == ODB_OK;
  double *h = xmalloc(r->ml), *hv = xmalloc(r->vlen);
  double *dA = dev_packed(&bt, r->a, 0), *dx = dev_packed(&bt, r->rhs, 1);
  double dlu = INFINITY, dxs = INFINITY, resid = INFINITY, worst = 0;
  long bad = 7;
  int ok = dA && dx;
  /* LU twice on fresh copies: no state may leak between calls */
  for (int rep = 0; rep < 2 && ok; ++rep) {
    if (rep == 1) {
      odb_bgpu_free(dA);
      dA = dev_packed(&bt, r->a, 0);
      ok = dA != NULL;
    }
    ok = ok && odb_bgpu_lu(&bt, v, dA, &bad) == ODB_OK && bad == -1;
  }
  if (ok && host_unpacked(&bt, dA, 0, h)) dlu = rel_diff(h, r->lu, r->ml);
  ok = ok && odb_bgpu_lu_solve(&bt, v, dA, dx) == ODB_OK &&
       host_unpacked(&bt, dx, 1, hv);
  if (ok) {
    dxs = rel_diff(hv, r->x, r->vlen);
    resid = worst_residual(r->a, hv, r->rhs, r->n, r->b);
  }
  worst = fmax(dlu, dxs);
  if (other_ops && ok) {
    const double *want;
    double *dX = NULL, *dC = NULL;
    for (int k = 0; k < 3 && ok; ++k) {           /* TRSM */
      dX = dev_packed(&bt, r->xm, 0);
      ok = dX && odb_bgpu_trsm(&bt, v, (odb_batched_trsm_kind)k, dA, dX) ==
           ODB_OK && host_unpacked(&bt, dX, 0, h);
      if (ok) worst = fmax(worst, rel_diff(h, r->trsm[k], r->ml));
      odb_bgpu_free(dX);
    }
    for (int k = 0; k < 2 && ok; ++k) {           /* TRSV */
      dX = dev_packed(&bt, r->rhs, 1);
      ok = dX && odb_bgpu_trsv(&bt, v, (odb_batched_trsm_kind)k, dA, dX) ==
           ODB_OK && host_unpacked(&bt, dX, 1, hv);
      if (ok) worst = fmax(worst, rel_diff(hv, r->trsv[k], r->vlen));
      odb_bgpu_free(dX);
    }
    odb_bgpu_free(dA);                            /* GEMM, GEMV on A */
    dA = dev_packed(&bt, r->a, 0);
    dX = dev_packed(&bt, r->xm, 0);
    dC = dev_packed(&bt, r->c, 0);
    ok = ok && dA && dX && dC &&
         odb_bgpu_gemm(&bt, v, 0.5, dA, dX, -2.0, dC) == ODB_OK &&
         host_unpacked(&bt, dC, 0, h);
    want = r->gemm;
    if (ok) worst = fmax(worst, rel_diff(h, want, r->ml));
    odb_bgpu_free(dX);
    odb_bgpu_free(dC);
    dX = dev_packed(&bt, r->rhs, 1);
    dC = dev_packed(&bt, r->c, 1);
    ok = ok && dX && dC &&
         odb_bgpu_gemv(&bt, v, 1.5, dA, dX, 0.25, dC) == ODB_OK &&
         host_unpacked(&bt, dC, 1, hv);
    if (ok) worst = fmax(worst, rel_diff(hv, r->gemv, r->vlen));
    odb_bgpu_free(dX);
    odb_bgpu_free(dC);
  }
  if (!ok) tap_diag("failed: %s", odb_last_error());
  tap_ok(ok && resid < 1e-12 && worst < AGREE,
         "%s n=%ld B=%d VL=%d %s: residual %.2e, vs CPU: LU %.1e x %.1e, "
         "all ops %.1e%s", vl == 1 ? "standard" : "compact", r->n, r->b,
         bt.vl, odb_bgpu_variant_name(v), resid, dlu, dxs, worst,
         other_ops ? "" : " (lu/solve only)");
  odb_bgpu_free(dA);
  odb_bgpu_free(dx);
  free(h);
  free(hv);
}

/* A zero pivot in matrix 5 (of 13) is reported with its index. */
static void check_zero_pivot(int b, int vl, odb_bgpu_variant v) {
  odb_batch bt;
  odb_bgpu_variant res;
  long n = 13;
  if (!batch_of(&bt, n, b, vl) ||
      odb_bgpu_resolve(&bt, ODB_BGPU_OP_LU, v, &res) != ODB_OK)
    return;
  double *a = xmalloc((size_t)n * b * b);
  rand_mats(a, n, b, 1.0);
  double *m5 = a + (size_t)5 * b * b, *m9 = a + (size_t)9 * b * b;
  m5[b + 1] = m5[b] * m5[1] / m5[0];   /* second pivot exactly zero */
  m9[0] = 0.0;                         /* first pivot zero (a later one) */
  double *dA = dev_packed(&bt, a, 0);
  long bad = -7;
  odb_clear_error();
  odb_status st = dA ? odb_bgpu_lu(&bt, v, dA, &bad) : ODB_ERR_NOMEM;
  tap_ok(st == ODB_ERR_ARG && bad == 5 &&
         strstr(odb_last_error(), "matrix 5 has a zero or tiny pivot at row "
                "1") != NULL,
         "zero pivot B=%d VL=%d %s: matrix %ld reported (%s)", b, bt.vl,
         odb_bgpu_variant_name(v), bad, odb_last_error());
  odb_bgpu_free(dA);
  free(a);
}

/* Device random data equals the host's (matrices and rhs). */
static void check_random(int b, int vl) {
  odb_batch bt;
  if (!batch_of(&bt, 29, b, vl)) return;
  size_t ml = odb_batch_mat_len(&bt), rl = odb_batch_rhs_len(&bt, 3);
  double *h = xmalloc(ml), *g = xmalloc(ml), *d = NULL;
  double *hr = xmalloc(rl), *gr = xmalloc(rl), *dr = NULL;
  odb_batched_random(&bt, 99, 2.0, h);
  odb_batched_random_rhs(&bt, 3, 99, hr);
  int ok = odb_bgpu_alloc(ml, &d) == ODB_OK &&
           odb_bgpu_random(&bt, 99, 2.0, d) == ODB_OK &&
           odb_bgpu_download(g, d, ml) == ODB_OK &&
           odb_bgpu_alloc(rl, &dr) == ODB_OK &&
           odb_bgpu_random_rhs(&bt, 3, 99, dr) == ODB_OK &&
           odb_bgpu_download(gr, dr, rl) == ODB_OK;
  tap_ok(ok && memcmp(h, g, sizeof(double) * ml) == 0 &&
         memcmp(hr, gr, sizeof(double) * rl) == 0,
         "random B=%d VL=%d: device values equal the host's", b, bt.vl);
  odb_bgpu_free(d);
  odb_bgpu_free(dr);
  free(h); free(g); free(hr); free(gr);
}

/* get/set of one matrix through the device. */
static void check_get_set(void) {
  odb_batch bt;
  double m[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, back[9], *d = NULL;
  int ok = batch_of(&bt, 21, 3, 8) && odb_bgpu_alloc(odb_batch_mat_len(&bt),
                                                     &d) == ODB_OK &&
           odb_bgpu_random(&bt, 1, 1.0, d) == ODB_OK &&
           odb_bgpu_set_matrix(&bt, d, 19, m) == ODB_OK &&
           odb_bgpu_get_matrix(&bt, d, 19, back) == ODB_OK &&
           memcmp(m, back, sizeof m) == 0;
  ok = ok && odb_bgpu_get_matrix(&bt, d, 21, back) == ODB_ERR_ARG;
  tap_ok(ok, "set/get matrix 19 of 21 (VL 8); index 21 refused");
  odb_bgpu_free(d);
}

/* cuBLAS with and without pivoting on the same matrices. */
static void check_cublas(const ref_data *r) {
  odb_batch bt;
  size_t ml = r->ml, vlen = r->vlen;
  double *h = xmalloc(ml), *hv = xmalloc(vlen), *hl = xmalloc(ml);
  for (int pivot = 0; pivot < 2; ++pivot) {
    odb_bgpu_blas *blas = NULL;
    double *dp = NULL, *col = NULL, *dx = NULL, dl = 0, dx_ = INFINITY,
           res = INFINITY;
    long bad = 3;
    int ok = batch_of(&bt, r->n, r->b, 16) &&
             (dp = dev_packed(&bt, r->a, 0)) != NULL &&
             odb_bgpu_alloc(ml, &col) == ODB_OK &&
             odb_bgpu_unpack(&bt, dp, col, 1) == ODB_OK &&
             (dx = to_dev(r->rhs, vlen)) != NULL &&
             odb_bgpu_blas_new(r->n, r->b, col, dx, pivot, &blas) == ODB_OK &&
             odb_bgpu_blas_lu(blas, &bad) == ODB_OK && bad == -1 &&
             odb_bgpu_blas_solve(blas) == ODB_OK &&
             odb_bgpu_download(hv, dx, vlen) == ODB_OK &&
             odb_bgpu_download(h, col, ml) == ODB_OK;
    if (ok) {
      dx_ = rel_diff(hv, r->x, vlen);
      res = worst_residual(r->a, hv, r->rhs, r->n, r->b);
      if (!pivot) {        /* no pivoting: the factors are unique */
        for (long p = 0; p < r->n; ++p)
          for (int i = 0; i < r->b; ++i)
            for (int j = 0; j < r->b; ++j)
              hl[((size_t)p * r->b + i) * r->b + j] =
                h[((size_t)p * r->b + j) * r->b + i];
        dl = rel_diff(hl, r->lu, ml);
      }
    } else {
      tap_diag("cuBLAS: %s", odb_last_error());
    }
    tap_ok(ok && res < 1e-12 && dx_ < AGREE && dl < AGREE,
           "cuBLAS %s n=%ld B=%d: residual %.2e, x vs CPU %.1e, LU vs CPU "
           "%.1e", pivot ? "getrf/getrs (pivoting)" : "getrf/getrs (no "
           "pivoting)", r->n, r->b, res, dx_, dl);
    odb_bgpu_blas_free(blas);
    odb_bgpu_free(dp);
    odb_bgpu_free(col);
    odb_bgpu_free(dx);
  }
  free(h); free(hv); free(hl);
}

/* A stream plan: stages, y_on_chip, threads per line (0, -1, 0: auto). */
typedef struct splan { int st, y, tpl; } splan;
static const splan AUTO_PLAN = { 0, -1, 0 };

/* The solve of variant v; stream with an explicit plan where pl says so
   (AUTO_PLAN: the plain call). */
static odb_status btd_solve_with(const odb_blocktridiag *t,
                                 odb_bgpu_variant v, splan pl,
                                 const double *dm, double *dx) {
  if (v == ODB_BGPU_STREAM && (pl.st != 0 || pl.y >= 0 || pl.tpl != 0))
    return odb_bgpu_btd_solve_stream(t, pl.st, pl.y, pl.tpl, dm, dx);
  return odb_bgpu_btd_solve(t, v, dm, dx);
}

/* Block-tridiagonal lines: GPU against CPU factors and solution, the
   residual of every line, in layout vl (1: standard) and variant v (stream:
   with plan stages / y_on_chip). */
static void check_btd_plan(long lines, int K, int b, int vl,
                           odb_bgpu_variant v, splan pl) {
  odb_blocktridiag *t = NULL, *tc = NULL;
  odb_batched_layout lay = vl == 1 ? ODB_LAYOUT_STANDARD : ODB_LAYOUT_COMPACT;
  if (odb_blocktridiag_new(lines, K, b, lay, vl, &t) != ODB_OK ||
      odb_blocktridiag_new(lines, K, b, lay, vl, &tc) != ODB_OK) {
    tap_ok(0, "blocktridiag new: %s", odb_last_error());
    odb_blocktridiag_free(t);
    return;
  }
  const odb_batch *bt = odb_blocktridiag_batch(t);
  if ((v == ODB_BGPU_SERIAL2 && (bt->layout != ODB_LAYOUT_COMPACT ||
                                 bt->vl % 2)) ||
      (v == ODB_BGPU_TEAM && b > 16) ||
      (v == ODB_BGPU_STREAM && (bt->layout != ODB_LAYOUT_COMPACT ||
                                bt->vl < 4 || b > 16))) {
    odb_blocktridiag_free(t);
    odb_blocktridiag_free(tc);
    return;
  }
  size_t bl = odb_blocktridiag_blocks_len(t), wl = odb_blocktridiag_work_len(t);
  size_t bb = (size_t)b * b, len = (size_t)lines * K * b;
  double *blk = xmalloc((size_t)lines * K * 3 * bb);
  double *rhs = xmalloc(len), *x = xmalloc(len), *xg = xmalloc(len);
  double *xp = xmalloc(wl), *hb = xmalloc(bl), *dm = NULL, *dx = NULL;
  uint64_t seed = odb_rng_next(&rng);
  odb_blocktridiag_random(t, seed, 3.0);
  odb_blocktridiag_random(tc, seed, 3.0);
  for (long ln = 0; ln < lines; ++ln)     /* the original blocks */
    for (int r = 0; r < K; ++r)
      for (int w = 0; w < 3; ++w)
        odb_blocktridiag_get(t, ln, r, (odb_btd_block)w,
                             blk + (((size_t)ln * K + r) * 3 + w) * bb);
  rand_vec(rhs, len);
  memcpy(x, rhs, sizeof(double) * len);
  long bad = 5;
  int ok = odb_blocktridiag_factor(tc, NULL) == ODB_OK &&
           odb_blocktridiag_solve(tc, x, len, NULL) == ODB_OK;
  /* device random equals host random */
  ok = ok && odb_bgpu_alloc(bl, &dm) == ODB_OK &&
       odb_bgpu_btd_random(t, seed, 3.0, dm) == ODB_OK &&
       odb_bgpu_download(hb, dm, bl) == ODB_OK;
  int same = ok && memcmp(hb, odb_blocktridiag_blocks(t),
                          sizeof(double) * bl) == 0;
  ok = ok && odb_bgpu_btd_factor(t, v, dm, &bad) == ODB_OK && bad == -1 &&
       odb_bgpu_download(odb_blocktridiag_blocks(t), dm, bl) == ODB_OK;
  odb_blocktridiag_mark_factored(t, 1);
  double dfac = ok ? rel_diff(odb_blocktridiag_blocks(t),
                              odb_blocktridiag_blocks(tc), bl) : INFINITY;
  odb_blocktridiag_pack_rhs(t, rhs, xp);
  ok = ok && (dx = to_dev(xp, wl)) != NULL &&
       btd_solve_with(t, v, pl, dm, dx) == ODB_OK &&
       odb_bgpu_download(xp, dx, wl) == ODB_OK;
  odb_blocktridiag_unpack_rhs(t, xp, xg);
  double worst = 0;
  for (long ln = 0; ln < lines && ok; ++ln) {
    double num = 0, den = 0;
    for (int r = 0; r < K; ++r)
      for (int i = 0; i < b; ++i) {
        double s = -rhs[((size_t)ln * K + r) * b + i];
        for (int w = 0; w < 3; ++w) {
          int c = r + w - 1;
          if (c < 0 || c >= K) continue;
          const double *m = blk + (((size_t)ln * K + r) * 3 + w) * bb;
          for (int j = 0; j < b; ++j)
            s += m[i * b + j] * xg[((size_t)ln * K + c) * b + j];
        }
        num += s * s;
        den += rhs[((size_t)ln * K + r) * b + i] *
               rhs[((size_t)ln * K + r) * b + i];
      }
    double rr = sqrt(num) / sqrt(den);
    if (!(rr <= worst)) worst = isnan(rr) ? INFINITY : rr;
  }
  double dsol = ok ? rel_diff(xg, x, len) : INFINITY;
  char plan[64] = "";
  if (v == ODB_BGPU_STREAM && (pl.st != 0 || pl.y >= 0 || pl.tpl != 0))
    snprintf(plan, sizeof plan, " (stages %d, y %s, %d threads per line)",
             pl.st, pl.y < 0 ? "auto" : pl.y ? "on chip" : "in X", pl.tpl);
  if (!ok) tap_diag("failed: %s", odb_last_error());
  tap_ok(ok && same && worst < 1e-12 && dfac < AGREE && dsol < AGREE,
         "blocktridiag %s lines=%ld K=%d B=%d VL=%d %s%s: worst line "
         "residual %.2e, vs CPU factors %.1e x %.1e, random %s",
         vl == 1 ? "standard" : "compact", lines, K, b, bt->vl,
         odb_bgpu_variant_name(v), plan, worst, dfac, dsol,
         same ? "equal" : "DIFFERENT");
  odb_bgpu_free(dm);
  odb_bgpu_free(dx);
  odb_blocktridiag_free(t);
  odb_blocktridiag_free(tc);
  free(blk); free(rhs); free(x); free(xg); free(xp); free(hb);
}

static void check_btd(long lines, int K, int b, int vl, odb_bgpu_variant v) {
  check_btd_plan(lines, K, b, vl, v, AUTO_PLAN);
}

/* A zero diagonal block in line 4, row 2 is reported with its line. */
static void check_btd_zero_pivot(odb_bgpu_variant v) {
  odb_blocktridiag *t = NULL;
  double z[25] = { 0 }, *dm = NULL;
  long bad = -7;
  odb_blocktridiag_new(11, 3, 5, ODB_LAYOUT_COMPACT, 4, &t);
  odb_blocktridiag_set(t, 4, 2, ODB_BTD_D, z);   /* A = C = 0: no update */
  odb_blocktridiag_set(t, 9, 1, ODB_BTD_D, z);
  size_t bl = odb_blocktridiag_blocks_len(t);
  odb_clear_error();
  int ok = (dm = to_dev(odb_blocktridiag_blocks(t), bl)) != NULL;
  odb_status st = ok ? odb_bgpu_btd_factor(t, v, dm, &bad) : ODB_ERR_NOMEM;
  tap_ok(st == ODB_ERR_ARG && bad == 4 &&
         strstr(odb_last_error(), "line 4 has a zero or tiny pivot in the "
                "diagonal block of row 2") != NULL,
         "blocktridiag zero pivot %s: line %ld reported (%s)",
         odb_bgpu_variant_name(v), bad, odb_last_error());
  odb_bgpu_free(dm);
  odb_blocktridiag_free(t);
}

/*
** The stream factor with plan (stages, threads per line; 0: automatic)
** against the CPU's factors (1e-13 relative over all blocks) on lines
** whose count is no multiple of VL, then the solves of the stream-factored
** lines (stream and team) against the CPU's solution. Plans the device
** cannot hold (B 16 at VL 16 with many stages) are refused, not tested.
*/
static void check_btd_factor_stream(long lines, int K, int b, int vl,
                                    int stages, int tpl,
                                    odb_btd_kernel kern) {
  odb_blocktridiag *t = NULL, *tc = NULL;
  if (odb_blocktridiag_new(lines, K, b, ODB_LAYOUT_COMPACT, vl, &t) !=
      ODB_OK ||
      odb_blocktridiag_new(lines, K, b, ODB_LAYOUT_COMPACT, vl, &tc) !=
      ODB_OK) {
    tap_ok(0, "blocktridiag new: %s", odb_last_error());
    odb_blocktridiag_free(t);
    return;
  }
  size_t bl = odb_blocktridiag_blocks_len(t), wl = odb_blocktridiag_work_len(t);
  size_t len = (size_t)lines * K * b;
  double *rhs = xmalloc(len), *x = xmalloc(len), *xg = xmalloc(len);
  double *xp = xmalloc(wl), *dm = NULL, *dx = NULL;
  uint64_t seed = odb_rng_next(&rng);
  odb_blocktridiag_random(t, seed, 3.0);
  odb_blocktridiag_random(tc, seed, 3.0);
  rand_vec(rhs, len);
  memcpy(x, rhs, sizeof(double) * len);
  long bad = 5;
  int ok = odb_blocktridiag_factor(tc, NULL) == ODB_OK &&
           odb_blocktridiag_solve(tc, x, len, NULL) == ODB_OK &&
           (dm = to_dev(odb_blocktridiag_blocks(t), bl)) != NULL;
  odb_status st = ok ? odb_bgpu_btd_factor_stream(t, stages, tpl, kern, dm,
                                                  &bad)
                     : ODB_ERR_NOMEM;
  if (st == ODB_ERR_ARG && strstr(odb_last_error(), "shared memory")) {
    tap_diag("stream factor (%s) B=%d VL=%d stages %d: %s",
             odb_btd_kernel_name(kern), b, vl, stages, odb_last_error());
    goto done;
  }
  ok = ok && st == ODB_OK && bad == -1 &&
       odb_bgpu_download(odb_blocktridiag_blocks(t), dm, bl) == ODB_OK;
  odb_blocktridiag_mark_factored(t, 1);
  double dfac = ok ? rel_diff(odb_blocktridiag_blocks(t),
                              odb_blocktridiag_blocks(tc), bl) : INFINITY;
  double dsol[2] = { INFINITY, INFINITY };
  for (int k = 0; k < 2 && ok; ++k) {
    odb_blocktridiag_pack_rhs(t, rhs, xp);
    odb_bgpu_free(dx);
    ok = (dx = to_dev(xp, wl)) != NULL &&
         odb_bgpu_btd_solve(t, k ? ODB_BGPU_TEAM : ODB_BGPU_STREAM, dm, dx) ==
         ODB_OK && odb_bgpu_download(xp, dx, wl) == ODB_OK;
    odb_blocktridiag_unpack_rhs(t, xp, xg);
    if (ok) dsol[k] = rel_diff(xg, x, len);
  }
  if (!ok) tap_diag("failed: %s", odb_last_error());
  tap_ok(ok && dfac < 1e-13 && dsol[0] < AGREE && dsol[1] < AGREE,
         "blocktridiag stream factor (%s) lines=%ld K=%d B=%d VL=%d stages "
         "%d, %d threads per line: vs CPU factors %.1e; solves (stream, "
         "team) vs CPU %.1e %.1e", odb_btd_kernel_name(kern), lines, K, b,
         vl, stages, tpl, dfac, dsol[0], dsol[1]);
done:
  odb_bgpu_free(dm);
  odb_bgpu_free(dx);
  odb_blocktridiag_free(t);
  odb_blocktridiag_free(tc);
  free(rhs); free(x); free(xg); free(xp);
}

/* The stream factor's explicit plans report a zero pivot as the others:
   line 4 (row 2) before line 9 (row 1), whatever the kernel and threads
   per line. */
static void check_btd_stream_zero_pivot(int b, int vl, int tpl,
                                        odb_btd_kernel kern) {
  odb_blocktridiag *t = NULL;
  double z[16 * 16] = { 0 }, *dm = NULL;
  long bad = -7;
  odb_blocktridiag_new(11, 3, b, ODB_LAYOUT_COMPACT, vl, &t);
  odb_blocktridiag_set(t, 4, 2, ODB_BTD_D, z);
  odb_blocktridiag_set(t, 9, 1, ODB_BTD_D, z);
  size_t bl = odb_blocktridiag_blocks_len(t);
  odb_clear_error();
  int ok = (dm = to_dev(odb_blocktridiag_blocks(t), bl)) != NULL;
  odb_status st = ok ? odb_bgpu_btd_factor_stream(t, 0, tpl, kern, dm, &bad)
                     : ODB_ERR_NOMEM;
  tap_ok(st == ODB_ERR_ARG && bad == 4 &&
         strstr(odb_last_error(), "line 4 has a zero or tiny pivot in the "
                "diagonal block of row 2") != NULL,
         "blocktridiag zero pivot stream factor (%s) B=%d VL=%d %d threads "
         "per line: line %ld reported (%s)", odb_btd_kernel_name(kern), b, vl,
         tpl, bad, odb_last_error());
  odb_bgpu_free(dm);
  odb_blocktridiag_free(t);
}

/* The stream variant refuses what it cannot run (before touching device
   memory): batched ops, the standard layout, B > 16, bad stage counts, a
   plan larger than shared memory; its factor runs the auto kernel. */
static void check_stream_refusals(const odb_batch *bt) {
  odb_blocktridiag *ts = NULL, *tc = NULL, *tb = NULL, *t13 = NULL;
  odb_bgpu_variant r = ODB_BGPU_AUTO, rf = ODB_BGPU_AUTO;
  const odb_btd_kernel A = ODB_BTD_KERNEL_AUTO;
  odb_blocktridiag_new(5, 4, 3, ODB_LAYOUT_STANDARD, 1, &ts);
  odb_blocktridiag_new(5, 4, 13, ODB_LAYOUT_COMPACT, 4, &t13);
  odb_blocktridiag_new(5, 4, 3, ODB_LAYOUT_COMPACT, 4, &tc);
  odb_blocktridiag_new(5, 4, 17, ODB_LAYOUT_COMPACT, 4, &tb);
  int ok = ts && tc && tb;
  tap_ok(ok && odb_bgpu_resolve(bt, ODB_BGPU_OP_LU, ODB_BGPU_STREAM, &r) ==
         ODB_ERR_ARG && strstr(odb_last_error(), "block-tridiagonal") &&
         odb_bgpu_btd_solve(ts, ODB_BGPU_STREAM, NULL, NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "compact layout") &&
         odb_bgpu_btd_solve(tb, ODB_BGPU_STREAM, NULL, NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "B <= 16") &&
         odb_bgpu_btd_solve_stream(tc, 1, -1, 0, NULL, NULL) == ODB_ERR_ARG &&
         odb_bgpu_btd_solve_stream(tc, 17, -1, 0, NULL, NULL) ==
         ODB_ERR_ARG && strstr(odb_last_error(), "stages") &&
         odb_bgpu_btd_solve_stream(tc, 0, -1, 2, NULL, NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "threads per line") &&
         odb_bgpu_btd_solve_stream(tc, 0, -1, 3, NULL, NULL) == ODB_ERR_ARG,
         "stream refused for batched LU, the standard layout, B 17, stages "
         "1 and 17, 2 threads per line for B 3 and VL 4, 3 threads per "
         "line");
  odb_blocktridiag *tl = NULL;   /* a line whose y alone overflows smem */
  odb_blocktridiag_new(3, 1 << 12, 4, ODB_LAYOUT_COMPACT, 16, &tl);
  tap_ok(tl && odb_bgpu_btd_solve_stream(tl, 2, 1, 0, NULL, NULL) ==
         ODB_ERR_ARG && strstr(odb_last_error(), "shared memory"),
         "stream plan larger than shared memory refused (%s)",
         odb_last_error());
  tap_ok(ok && odb_bgpu_btd_resolve(tc, ODB_BGPU_STREAM, 0, &rf) == ODB_OK &&
         rf == ODB_BGPU_STREAM && odb_bgpu_btd_resolve(tc, ODB_BGPU_AUTO, 1,
                                                       &r) == ODB_OK &&
         r == ODB_BGPU_STREAM && odb_bgpu_btd_resolve(tc, ODB_BGPU_AUTO, 0,
                                                      &rf) == ODB_OK &&
         rf == ODB_BGPU_STREAM,
         "stream's factor resolves to stream, auto's solve and factor to %s",
         odb_bgpu_variant_name(r));
  tap_ok(ok && odb_bgpu_btd_factor(ts, ODB_BGPU_STREAM, NULL, NULL) ==
         ODB_ERR_ARG && strstr(odb_last_error(), "GPU factor: variant stream "
                               "needs the compact layout") &&
         odb_bgpu_btd_factor_stream(tc, 5, 0, A, NULL, NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "stages = 5, allowed 1..4") &&
         odb_bgpu_btd_factor_stream(tc, 0, 3, A, NULL, NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "3 threads per line for the row kernel") &&
         odb_bgpu_btd_factor_stream(tc, 0, 64, A, NULL, NULL) ==
         ODB_ERR_ARG &&
         strstr(odb_last_error(), "64 threads per line for the warp kernel "
                "with VL 4 and B 3; allowed: row 1, 2, 4 or 8 with "
                "VL*threads <= 32; tile 16 or 32, warp 8 (B <= 12), 16 or "
                "32, with VL*threads <= 256") &&
         odb_bgpu_btd_factor_stream(tc, 0, 16, ODB_BTD_KERNEL_ROW, NULL,
                                    NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "16 threads per line for the row kernel") &&
         odb_bgpu_btd_factor_stream(tc, 0, 8, ODB_BTD_KERNEL_TILE, NULL,
                                    NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "8 threads per line for the tile kernel") &&
         odb_bgpu_btd_factor_stream(t13, 0, 8, ODB_BTD_KERNEL_WARP, NULL,
                                    NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "8 threads per line for the warp kernel "
                "with VL 4 and B 13") &&
         odb_bgpu_btd_factor_stream(tc, 0, 0, (odb_btd_kernel)9, NULL,
                                    NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "kernel 9 unknown") &&
         odb_bgpu_btd_factor_stream(tb, 0, 0, A, NULL, NULL) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "B <= 16"),
         "stream factor refused for the standard layout, stages 5, 3 and 64 "
         "threads per line at VL 4, the row kernel with 16 threads, the "
         "tile kernel with 8, the warp kernel with 8 at B 13, an unknown "
         "kernel, B 17");
  odb_blocktridiag_free(t13);
  odb_blocktridiag_free(tl);
  odb_blocktridiag_free(ts);
  odb_blocktridiag_free(tc);
  odb_blocktridiag_free(tb);
}

/* max relative difference of the real lines' blocks of t and tc (get:
   padding lanes, which the cuBLAS copy leaves alone, are not compared). */
static double btd_lines_diff(const odb_blocktridiag *t,
                             const odb_blocktridiag *tc) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  int b = bt->b, K = odb_blocktridiag_length(t);
  double u[32 * 32], v[32 * 32], d = 0, m = 0;
  for (long ln = 0; ln < bt->n; ++ln)
    for (int r = 0; r < K; ++r)
      for (int w = 0; w < 3; ++w) {
        if ((r == 0 && w == 0) || (r == K - 1 && w == 2)) continue;
        odb_blocktridiag_get(t, ln, r, (odb_btd_block)w, u);
        odb_blocktridiag_get(tc, ln, r, (odb_btd_block)w, v);
        for (int e = 0; e < b * b; ++e) {
          double x = fabs(u[e] - v[e]);
          if (!(x <= d)) d = isnan(x) ? INFINITY : x;
          m = fmax(m, fabs(v[e]));
        }
      }
  return m > 0 ? d / m : d;
}

/*
** The cuBLAS line factor and solve (variant cublas) through the "cuda"
** table, as ob.blocktridiag runs it: device random blocks, factor
** (checked, the copy written back), the host blocks against the CPU's
** factors and a solve against the CPU's solution (1e-12 relative); then
** the bench paths: a fresh factorization of other blocks (factor_fresh)
** and a solve of a right-hand side in the internal layout (solve_packed).
*/
static void check_btd_cublas(long lines, int K, int b, int vl) {
  const odb_batched_ops *ops = &odb_batched_cuda_ops;
  odb_blocktridiag *t = NULL, *tc = NULL;
  odb_btd_state *s = NULL;
  odb_batched_layout lay = vl == 1 ? ODB_LAYOUT_STANDARD : ODB_LAYOUT_COMPACT;
  size_t len = (size_t)lines * K * b;
  double *rhs = xmalloc(len), *x = xmalloc(len), *xg = xmalloc(len);
  double *xp = NULL, *dx = NULL, sec = -1, sec2 = -1, sec3 = -1;
  uint64_t seed = odb_rng_next(&rng) >> 1;
  long bad = 5;
  int row = 5, v = 0;
  int ok = odb_blocktridiag_new(lines, K, b, lay, vl, &t) == ODB_OK &&
           odb_blocktridiag_new(lines, K, b, lay, vl, &tc) == ODB_OK &&
           ops->variant_parse("cublas", &v) == ODB_OK &&
           v == ODB_BGPU_CUBLAS &&
           strcmp(ops->variant_name(v), "cublas") == 0 &&
           ops->btd_open(t, v, &s) == ODB_OK;
  rand_vec(rhs, len);
  memcpy(x, rhs, sizeof(double) * len);
  memcpy(xg, rhs, sizeof(double) * len);
  if (ok) {
    odb_blocktridiag_random(tc, seed, 3.0);
    ok = odb_blocktridiag_factor(tc, NULL) == ODB_OK &&
         odb_blocktridiag_solve(tc, x, len, NULL) == ODB_OK;
  }
  ok = ok && ops->btd_random(t, s, seed, 3.0) == ODB_OK &&
       ops->btd_factor(t, s, v, &bad, &row, &sec) == ODB_OK && bad == -1 &&
       ops->btd_factored(t, s) && ops->btd_host(t, s) == ODB_OK;
  double dfac = ok ? btd_lines_diff(t, tc) : INFINITY;
  ok = ok && ops->btd_solve(t, s, v, xg, len, &sec2) == ODB_OK;
  double dsol = ok ? rel_diff(xg, x, len) : INFINITY;
  /* the bench paths: fresh blocks of seed + 1, a packed right-hand side */
  size_t wl = odb_blocktridiag_work_len(t);
  if (ok) {
    odb_blocktridiag_free(tc);
    tc = NULL;
    ok = odb_blocktridiag_new(lines, K, b, lay, vl, &tc) == ODB_OK;
  }
  if (ok) {
    odb_blocktridiag_random(tc, seed + 1, 3.0);
    memcpy(x, rhs, sizeof(double) * len);
    ok = odb_blocktridiag_factor(tc, NULL) == ODB_OK &&
         odb_blocktridiag_solve(tc, x, len, NULL) == ODB_OK;
  }
  ok = ok && ops->btd_factor_fresh(t, s, v, NULL, seed + 1, 3.0, &sec3) ==
       ODB_OK && ops->btd_host(t, s) == ODB_OK;
  double dfresh = ok ? btd_lines_diff(t, tc) : INFINITY;
  xp = xmalloc(wl);
  odb_blocktridiag_pack_rhs(t, rhs, xp);
  odb_btd_plan plain = { 0, -1, 0, ODB_BTD_KERNEL_AUTO, 1 };
  ok = ok && (dx = to_dev(xp, wl)) != NULL &&
       ops->btd_solve_packed(t, s, v, &plain, dx, &sec2) == ODB_OK &&
       odb_bgpu_download(xp, dx, wl) == ODB_OK;
  odb_blocktridiag_unpack_rhs(t, xp, xg);
  double dpacked = ok ? rel_diff(xg, x, len) : INFINITY;
  if (!ok) tap_diag("failed: %s", odb_last_error());
  tap_ok(ok && dfac < AGREE && dsol < AGREE && dfresh < AGREE &&
         dpacked < AGREE && sec > 0 && sec3 > 0,
         "blocktridiag cublas lines=%ld K=%d B=%d VL=%d: vs CPU factors "
         "%.1e, x %.1e; bench factor %.1e, packed x %.1e", lines, K, b, vl,
         dfac, dsol, dfresh, dpacked);
  odb_bgpu_free(dx);
  ops->btd_close(s);
  odb_blocktridiag_free(t);
  odb_blocktridiag_free(tc);
  free(rhs); free(x); free(xg); free(xp);
}

/* The cuBLAS line factor all or nothing: zero D blocks in line 4 row 2
   and line 9 row 1 name line 4, row 2 (the CPU's message), and the blocks
   stay as they were; ob.batched refuses the variant. */
static void check_btd_cublas_zero_pivot(int b, int vl) {
  const odb_batched_ops *ops = &odb_batched_cuda_ops;
  odb_blocktridiag *t = NULL;
  odb_btd_state *s = NULL;
  double z[32 * 32] = { 0 }, sec = 0;
  long bad = -7;
  int row = 0;
  odb_blocktridiag_new(11, 3, b, vl == 1 ? ODB_LAYOUT_STANDARD
                                         : ODB_LAYOUT_COMPACT, vl, &t);
  if (!t || ops->btd_open(t, ODB_BGPU_CUBLAS, &s) != ODB_OK) {
    tap_ok(0, "cublas zero pivot: %s", odb_last_error());
    odb_blocktridiag_free(t);
    return;
  }
  odb_blocktridiag_set(t, 4, 2, ODB_BTD_D, z);   /* A = C = 0: no update */
  odb_blocktridiag_set(t, 9, 1, ODB_BTD_D, z);
  ops->btd_host_changed(s);
  size_t bl = odb_blocktridiag_blocks_len(t);
  double *keep = xmalloc(bl);
  memcpy(keep, odb_blocktridiag_blocks(t), sizeof(double) * bl);
  odb_clear_error();
  odb_status st = ops->btd_factor(t, s, ODB_BGPU_CUBLAS, &bad, &row, &sec);
  int msg = st == ODB_ERR_ARG && strstr(odb_last_error(), "line 4 has a zero "
                                        "or tiny pivot in the diagonal block "
                                        "of row 2") != NULL;
  char why[256];
  snprintf(why, sizeof why, "%s", odb_last_error());
  int same = ops->btd_host(t, s) == ODB_OK && !ops->btd_factored(t, s) &&
             memcmp(keep, odb_blocktridiag_blocks(t),
                    sizeof(double) * bl) == 0;
  odb_batch bt;
  int r = 0, refused = odb_batch_init(&bt, ODB_LAYOUT_STANDARD, 3, b, 1) ==
          ODB_OK && ops->resolve(&bt, ODB_BATCHED_OP_LU, ODB_BGPU_CUBLAS, &r)
          == ODB_ERR_ARG && strstr(odb_last_error(), "ob.blocktridiag");
  tap_ok(msg && bad == 4 && same && refused,
         "blocktridiag cublas zero pivot B=%d VL=%d: line %ld reported (%s), "
         "blocks %s, ob.batched %s", b, vl, bad, why,
         same ? "as they were" : "CHANGED", refused ? "refuses" : "ACCEPTS");
  ops->btd_close(s);
  odb_blocktridiag_free(t);
  free(keep);
}

/* Bad input is refused with ODB_ERR_ARG. */
static void check_bad_input(void) {
  odb_batch bt, bs;
  odb_bgpu_variant r;
  double *d = NULL;
  tap_ok(odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 1, 16) ==
         ODB_ERR_ARG && odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 33,
                                            16) == ODB_ERR_ARG &&
         odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, 0, 3, 16) ==
         ODB_ERR_ARG && odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, -2, 3,
                                            16) == ODB_ERR_ARG &&
         odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 3, 3) ==
         ODB_ERR_ARG && odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 3,
                                            64) == ODB_ERR_ARG,
         "B 1 and 33, n 0 and -2, VL 3 and 64 refused");
  odb_bgpu_batch_init(&bt, ODB_LAYOUT_COMPACT, 10, 3, 0);
  odb_bgpu_batch_init(&bs, ODB_LAYOUT_STANDARD, 10, 3, 0);
  tap_ok(bt.vl == ODB_BGPU_DEFAULT_VL && bs.vl == 1 &&
         odb_bgpu_resolve(&bs, ODB_BGPU_OP_LU, ODB_BGPU_SERIAL2, &r) ==
         ODB_ERR_ARG && odb_bgpu_resolve(&bt, ODB_BGPU_OP_GEMM,
                                         ODB_BGPU_SERIAL2, &r) == ODB_ERR_ARG &&
         odb_bgpu_resolve(&bt, ODB_BGPU_OP_LU, ODB_BGPU_AUTO, &r) == ODB_OK &&
         r != ODB_BGPU_AUTO,
         "serial2 refused for the standard layout and for gemm; auto resolves "
         "to %s", odb_bgpu_variant_name(r));
  int ok = odb_bgpu_alloc(odb_batch_mat_len(&bt), &d) == ODB_OK;
  tap_ok(ok && odb_bgpu_trsm(&bt, ODB_BGPU_AUTO, (odb_batched_trsm_kind)7, d,
                             d + 1) == ODB_ERR_ARG &&
         odb_bgpu_trsv(&bt, ODB_BGPU_AUTO, ODB_TRSM_RIGHT_UPPER, d, d) ==
         ODB_ERR_ARG &&
         odb_bgpu_gemm(&bt, ODB_BGPU_AUTO, 1, d, d, 0, d) == ODB_ERR_ARG,
         "bad TRSM kinds and an aliased GEMM output refused");
  check_stream_refusals(&bt);
  odb_bgpu_variant v;
  odb_bgpu_op op;
  tap_ok(odb_bgpu_variant_parse("stream", &v) == ODB_OK &&
         v == ODB_BGPU_STREAM &&
         strcmp(odb_bgpu_variant_name(ODB_BGPU_STREAM), "stream") == 0,
         "variant stream parses and names itself");
  tap_ok(odb_bgpu_variant_parse("team", &v) == ODB_OK &&
         v == ODB_BGPU_TEAM && odb_bgpu_variant_parse("x", &v) ==
         ODB_ERR_NAME && odb_bgpu_op_parse("gemv", &op) == ODB_OK &&
         op == ODB_BGPU_OP_GEMV, "variant and op names parse");
  odb_bgpu_free(d);
}

/* {====== --bench: the block-tridiagonal solve's variants and stream plans
   (a tuning aid, not a test: the scenario reports the figures) */

/* Median seconds of 7 solves of orig (copied into work first); 0 on
   failure (reported). */
static double bench_solve(const odb_blocktridiag *t, odb_bgpu_variant v,
                          splan pl, const double *dm, const double *orig,
                          double *work, size_t wl) {
  double ts[7];
  int reps = 7;
  for (int r = -1; r < reps; ++r) {
    double sec = 0;
    if (odb_bgpu_copy(work, orig, wl) != ODB_OK || odb_bgpu_mark() != ODB_OK ||
        btd_solve_with(t, v, pl, dm, work) != ODB_OK ||
        odb_bgpu_elapsed(&sec) != ODB_OK) {
      tap_diag("bench solve %s: %s", odb_bgpu_variant_name(v),
               odb_last_error());
      return 0;
    }
    if (r >= 0) ts[r] = sec;
  }
  for (int i = 1; i < reps; ++i)
    for (int k = i; k > 0 && ts[k - 1] > ts[k]; --k) {
      double x = ts[k];
      ts[k] = ts[k - 1];
      ts[k - 1] = x;
    }
  return ts[reps / 2];
}

/* Lines of length 64 in 2^29 bytes of blocks (the scenario's sizes) for
   each B of the comma list, VL 4, 8, 16: team, serial, stream with its
   automatic plan and with stages x threads per line x {y in X, y on
   chip}; GB/s of the solve bytes and their share of the copy bandwidth,
   results against team's. */
static int bench_btd(const char *list) {
  static const int stage_set[] = { 2, 3, 4 };
  double bw = 0;
  if (odb_bgpu_copy_bandwidth(0, &bw) != ODB_OK) {
    printf("bench: copy bandwidth: %s\n", odb_last_error());
    return 1;
  }
  printf("bench: copy bandwidth %.0f GB/s\n", bw);
  for (const char *c = list; *c; ) {
    int b = (int)strtol(c, (char **)&c, 10), K = 64;
    while (*c == ',') ++c;
    if (b < 2 || b > 16) continue;
    long lines = (long)((1L << 29) / (64L * 3 * b * b * 8));
    for (int vl = 4; vl <= 16; vl *= 2) {
      odb_blocktridiag *t = NULL;
      double *dm = NULL, *orig = NULL, *work = NULL, *ref = NULL, *got = NULL;
      if (odb_blocktridiag_new(lines, K, b, ODB_LAYOUT_COMPACT, vl, &t) !=
          ODB_OK) {
        printf("bench: %s\n", odb_last_error());
        return 1;
      }
      size_t bl = odb_blocktridiag_blocks_len(t);
      size_t wl = odb_blocktridiag_work_len(t);
      double bytes = odb_blocktridiag_solve_bytes(t);
      double *h = xmalloc(wl);
      ref = xmalloc(wl);
      got = xmalloc(wl);
      for (size_t e = 0; e < wl; ++e) h[e] = urand();
      int ok = odb_bgpu_alloc(bl, &dm) == ODB_OK &&
               odb_bgpu_btd_random(t, 1, 3.0, dm) == ODB_OK &&
               odb_bgpu_btd_factor(t, ODB_BGPU_AUTO, dm, NULL) == ODB_OK &&
               (orig = to_dev(h, wl)) != NULL &&
               odb_bgpu_alloc(wl, &work) == ODB_OK;
      struct { odb_bgpu_variant v; splan pl; } cf[40];
      int nc = 0;
      cf[nc].v = ODB_BGPU_TEAM; cf[nc++].pl = AUTO_PLAN;
      cf[nc].v = ODB_BGPU_STREAM; cf[nc++].pl = AUTO_PLAN;
      for (int tpl = 1; tpl <= 4; tpl *= 2) {
        if (tpl > 1 && (b < 5 || vl < 8 || (tpl == 4 && vl != 8))) continue;
        for (int k = 0; k < 3; ++k)
          for (int y = 0; y < 2; ++y) {
            cf[nc].v = ODB_BGPU_STREAM;
            cf[nc++].pl = (splan){ stage_set[k], y, tpl };
          }
      }
      for (int i = 0; i < nc && ok; ++i) {
        double sec = bench_solve(t, cf[i].v, cf[i].pl, dm, orig, work, wl);
        if (sec <= 0) continue;
        double diff = 0;
        if (odb_bgpu_download(i ? got : ref, work, wl) == ODB_OK && i)
          diff = rel_diff(got, ref, wl);
        double gbs = bytes / sec * 1e-9;
        printf("bench B=%-2d VL=%-2d lines=%-6ld %-7s st=%d y=%-4s T=%d "
               "%8.1f GB/s %6.1f%%  vs team %.1e\n", b, vl, lines,
               odb_bgpu_variant_name(cf[i].v), cf[i].pl.st,
               cf[i].pl.y < 0 ? "auto" : cf[i].pl.y ? "chip" : "X",
               cf[i].pl.tpl, gbs, 100 * gbs / bw, diff);
      }
      if (!ok) printf("bench B=%d VL=%d: %s\n", b, vl, odb_last_error());
      fflush(stdout);
      odb_bgpu_free(dm);
      odb_bgpu_free(orig);
      odb_bgpu_free(work);
      odb_blocktridiag_free(t);
      free(h);
      free(ref);
      free(got);
    }
  }
  return 0;
}

/* }====== */

/* With --quick (for compute-sanitizer): fewer block sizes and layouts.
   With --bench [B,B,...]: the solve benchmark above instead of tests. */
int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const char *env = getenv("ODB_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  if (odb_bgpu_ready() != ODB_OK) {
    printf("1..0 # SKIP no GPU (%s)\n", odb_last_error());
    return 77;
  }
  tap_diag("seed %llu (set ODB_SEED to repeat)", (unsigned long long)seed);
  odb_rng_seed(&rng, seed);
  if (argc > 1 && strcmp(argv[1], "--bench") == 0)
    return bench_btd(argc > 2 ? argv[2] : "3,5,7,9,10");
  for (int bi = 0; bi < NBLOCKS; ++bi) {
    int b = blocks[bi];
    ref_data r;
    if (quick && b != 3 && b != 5 && b != 10 && b != 16 && b != 17) continue;
    long n = b <= 16 ? 101 : 37;     /* no multiple of any VL */
    if (!ref_init(&r, n, b)) {
      tap_ok(0, "CPU reference B=%d: %s", b, odb_last_error());
      ref_free(&r);
      continue;
    }
    for (int k = 0; k < (quick ? 2 : NVLS); ++k) {
      int vl = quick ? (k ? 16 : 1) : vls[(k + bi) % NVLS];
      odb_batch bt;
      if (batch_of(&bt, n, b, vl))
        tap_ok(check_pack(&bt, &r), "pack B=%d VL=%d: device equals host",
               b, bt.vl);
      for (int v = 0; v < 3; ++v) check_variant(&r, vl, variants[v]);
    }
    if (bi % 3 == 0 && !quick) check_cublas(&r);
    ref_free(&r);
    check_zero_pivot(b, vls[bi % NVLS], ODB_BGPU_SERIAL);
    check_zero_pivot(b, 16, ODB_BGPU_SERIAL2);
    check_zero_pivot(b, vls[(bi + 3) % NVLS], ODB_BGPU_TEAM);
    check_random(b, vls[bi % NVLS]);
    int bvl = bi % 2 ? 16 : 4;        /* CPU blocktridiag VL: 1..16 */
    check_btd(37, 5, b, bvl, ODB_BGPU_SERIAL);
    check_btd(13, quick ? 3 : 1, b, 8, ODB_BGPU_SERIAL2);
    check_btd(29, 6, b, bvl, ODB_BGPU_TEAM);
    check_btd(37, 5, b, bvl, ODB_BGPU_STREAM);
    if (!quick) {
      check_btd(11, 4, b, 1, ODB_BGPU_SERIAL);
      check_btd(7, 1, b, 1, ODB_BGPU_TEAM);
      check_btd_plan(13, 9, b, 4, ODB_BGPU_STREAM, (splan){ 2, 0, 1 });
      check_btd_plan(19, 7, b, 8, ODB_BGPU_STREAM,
                     (splan){ b <= 10 ? 16 : 4, 1, 1 });
      check_btd_plan(5, 1, b, 16, ODB_BGPU_STREAM, (splan){ 3, 1, 0 });
      check_btd_plan(21, 3, b, 4, ODB_BGPU_STREAM, (splan){ 5, -1, 1 });
    }
    if (b >= 5 && b <= 16) {       /* threads per line 2, 4 and 8 */
      check_btd_plan(37, 5, b, 8, ODB_BGPU_STREAM, (splan){ 0, -1, 2 });
      check_btd_plan(29, 6, b, 8, ODB_BGPU_STREAM, (splan){ 3, 0, 4 });
      check_btd_plan(23, 6, b, 4, ODB_BGPU_STREAM,
                     (splan){ 0, -1, 2 << b % 3 });
      if (!quick) {
        check_btd_plan(9, 7, b, 4, ODB_BGPU_STREAM, (splan){ 3, 1, 2 });
        check_btd_plan(14, 3, b, 4, ODB_BGPU_STREAM, (splan){ 2, 0, 4 });
        check_btd_plan(30, 1, b, 4, ODB_BGPU_STREAM, (splan){ 0, 0, 8 });
      }
      if (!quick) {
        check_btd_plan(35, 4, b, 16, ODB_BGPU_STREAM, (splan){ 2, 1, 2 });
        check_btd_plan(11, 1, b, 8, ODB_BGPU_STREAM, (splan){ 0, 1, 4 });
        check_btd_plan(17, 9, b, 16, ODB_BGPU_STREAM,
                       (splan){ b <= 14 ? 4 : 3, 0, 1 });
      }
    }
  }
  /* the stream factor's row kernel: B 2..16, every VL and threads per
     line, stages 1..4, K 1 and 2 and longer lines, line counts no multiple
     of VL; the automatic plan */
  const odb_btd_kernel KR = ODB_BTD_KERNEL_ROW, KT = ODB_BTD_KERNEL_TILE,
                       KW = ODB_BTD_KERNEL_WARP, KA = ODB_BTD_KERNEL_AUTO;
  for (int b = 2; b <= 16; ++b) {
    static const int vl_t[][2] = { { 4, 1 }, { 4, 2 }, { 4, 4 }, { 4, 8 },
                                   { 8, 1 }, { 8, 2 }, { 8, 4 },
                                   { 16, 1 }, { 16, 2 } };
    for (int k = 0; k < 9; ++k) {
      if (quick && k % 3 != (b % 3)) continue;
      int vl = vl_t[k][0], tpl = vl_t[k][1];
      check_btd_factor_stream(vl + 3 + k, 1 + (k + b) % 2, b, vl,
                              k % 5, tpl, KR);
      if (!quick)
        check_btd_factor_stream(2 * vl + 1, 7 + b % 3, b, vl,
                                1 + (k + b) % 4, tpl, KR);
    }
    for (int vl = 4; vl <= 16; vl *= 2)
      if (!quick || vl == 4 << b % 3)
        check_btd_factor_stream(37, 5, b, vl, 0, 0, KA);
    if (b == 3 || b == 10 || b == 16)
      for (int k = 0; k < 4; ++k)
        check_btd_stream_zero_pivot(b, 4, 1 << k, KR);
  }
  /* the tile and warp kernels (16 and 32 threads per line, and the warp
     kernel's 8 up to B 12, VL*threads <= 256): B 9..16 and a few small
     B, every VL, stages 1..4 (0: automatic), K 1, 2 and longer lines,
     line counts no multiple of VL; their zero pivot report */
  for (int kk = 0; kk < 2; ++kk) {
    const odb_btd_kernel kern = kk ? KW : KT;
    static const int vl_t[][2] = { { 4, 16 }, { 4, 32 }, { 8, 16 },
                                   { 8, 32 }, { 16, 16 }, { 4, 8 },
                                   { 8, 8 }, { 16, 8 } };
    static const int bs[] = { 2, 3, 5, 9, 10, 11, 12, 13, 14, 15, 16 };
    for (int i = 0; i < 11; ++i) {
      int b = bs[i];
      for (int k = 0; k < (kk ? 8 : 5); ++k) {
        if (quick && k % 2 != b % 2) continue;
        int vl = vl_t[k][0], tpl = vl_t[k][1];
        if (tpl == 8 && b > 12) continue;
        check_btd_factor_stream(vl + 3 + k, 1 + (k + b) % 2, b, vl,
                                (k + b) % 5, tpl, kern);
        check_btd_factor_stream(2 * vl + 1, 7 + b % 3, b, vl,
                                1 + (k + b) % 4, tpl, kern);
      }
      if (b == 3 || b == 10 || b == 16) {
        check_btd_stream_zero_pivot(b, 4, 16, kern);
        check_btd_stream_zero_pivot(b, 4, 32, kern);
        check_btd_stream_zero_pivot(b, 8, 32, kern);
        check_btd_stream_zero_pivot(b, 16, 16, kern);
        if (kk && b <= 12) check_btd_stream_zero_pivot(b, 8, 8, kern);
      }
    }
  }
  check_btd_factor_stream(45, 64, 10, 8, 0, 0, KA);
  check_btd_factor_stream(45, 64, 15, 4, 0, 8, KR);
  check_btd_factor_stream(45, 64, 15, 4, 0, 32, KT);
  check_btd_factor_stream(45, 64, 15, 4, 1, 32, KT);
  check_btd_factor_stream(61, 33, 12, 8, 2, 16, KT);
  check_btd_factor_stream(45, 64, 15, 4, 0, 16, KW);
  check_btd_factor_stream(45, 64, 14, 4, 3, 32, KW);
  check_btd_factor_stream(61, 33, 11, 4, 2, 8, KW);
  check_btd_factor_stream(61, 33, 13, 8, 0, 0, KA);
  check_btd_zero_pivot(ODB_BGPU_STREAM);
  check_btd(9, 33, 3, 16, ODB_BGPU_SERIAL2);
  check_btd(21, 17, 7, 16, ODB_BGPU_TEAM);
  check_btd(21, 64, 10, 8, ODB_BGPU_STREAM);
  check_btd(9, 33, 9, 16, ODB_BGPU_AUTO);
  check_btd_plan(35, 40, 5, 16, ODB_BGPU_STREAM, (splan){ 3, 0, 0 });
  check_btd_plan(45, 64, 10, 16, ODB_BGPU_STREAM, (splan){ 0, -1, 2 });
  check_btd_plan(45, 64, 9, 8, ODB_BGPU_STREAM, (splan){ 0, -1, 4 });
  check_btd_zero_pivot(ODB_BGPU_SERIAL);
  check_btd_zero_pivot(ODB_BGPU_SERIAL2);
  check_btd_zero_pivot(ODB_BGPU_TEAM);
  /* the cuBLAS peer of the lines: B 2..16 and 32, K 1, 2, 9, odd line
     counts, both layouts */
  {
    static const int cb[] = { 2, 3, 5, 10, 16, 32 };
    static const int ck[] = { 1, 2, 9 };
    for (int i = 0; i < 6; ++i)
      for (int k = 0; k < 3; ++k)
        check_btd_cublas(2 * (i + k) + 7, ck[k], cb[i],
                         k == 1 ? 1 : (i % 2 ? 16 : 4));
    check_btd_cublas(33, 64, 10, 16);
    check_btd_cublas_zero_pivot(5, 4);
    check_btd_cublas_zero_pivot(3, 1);
  }
  check_get_set();
  check_bad_input();
  return tap_done();
}
