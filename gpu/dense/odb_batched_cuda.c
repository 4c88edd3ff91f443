/* odb_batched_cuda.c - the "cuda" table of odb_batched_impl.h over the
   kernels of odb_batched_gpu.h: batches in device memory, device event
   times, all-or-nothing LU and block factorization through a device copy
   restored on a refused pivot, the cuBLAS baseline, the device copy of a
   block-tridiagonal object kept in step with its host blocks, and the
   cuBLAS line factor and solve of such objects (variant cublas). Registered
   by odb_kernels_register (gpu/odb_kernels_cuda.c). */
#include "odb_batched_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched_gpu.h"
#include "odb_ctx.h"

/* The op numbers of both headers are the same. */
_Static_assert((int)ODB_BGPU_OP_LU == (int)ODB_BATCHED_OP_LU &&
               (int)ODB_BGPU_OP_SOLVE == (int)ODB_BATCHED_OP_SOLVE &&
               (int)ODB_BGPU_OP_TRSM == (int)ODB_BATCHED_OP_TRSM &&
               (int)ODB_BGPU_OP_GEMM == (int)ODB_BATCHED_OP_GEMM &&
               (int)ODB_BGPU_OP_GEMV == (int)ODB_BATCHED_OP_GEMV &&
               ODB_BGPU_AUTO == 0, "odb_bgpu_op matches odb_batched_op");

/* Records msg (a copy: it may be the last error itself) under st. */
static odb_status fail_again(odb_status st, const char *msg) {
  char keep[512];
  snprintf(keep, sizeof keep, "%s", msg);
  return ODB_FAIL(st, "%s", keep);
}

/* A run without the "cuda" backend (no device, no driver) cannot use it. */
static odb_status cuda_ready(struct odb_ctx *ctx) {
  if (!odb_ctx_backend(ctx, "cuda"))
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "backend \"cuda\": no CUDA device is "
                    "usable here (see odebench --list)");
  if (odb_bgpu_ready() != ODB_OK) {
    char why[400];
    snprintf(why, sizeof why, "%s", odb_last_error());
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "backend \"cuda\": %s", why);
  }
  return ODB_OK;
}

/* The kernels' names (odb_bgpu_variant_parse) and "cublas", the cuBLAS
   line factor and solve this table runs for block-tridiagonal objects. */
static odb_status cuda_variant_parse(const char *name, int *out) {
  odb_bgpu_variant v = ODB_BGPU_AUTO;
  if (name && strcmp(name, "cublas") == 0) {
    *out = ODB_BGPU_CUBLAS;
    return ODB_OK;
  }
  odb_status st = odb_bgpu_variant_parse(name, &v);
  *out = (int)v;
  if (st != ODB_OK)
    return ODB_FAIL(st, "unknown GPU variant '%s' (known: auto, serial, "
                    "serial2, team, stream, and cublas for block-tridiagonal "
                    "lines)", name ? name : "(null)");
  return ODB_OK;
}

static const char *cuda_variant_name(int v) {
  if (v == ODB_BGPU_CUBLAS) return "cublas";
  return odb_bgpu_variant_name((odb_bgpu_variant)v);
}

/* What each variant runs and where, for odebench --list. */
static const char *cuda_variant_doc(int v) {
  static const char *const docs[] = {
    "the one picked for the op, layout and B: stream for the lines where it "
    "runs (gpu/dense/odb_batched_gpu.cu, odb_bgpu_pick; lines: "
    "gpu/dense/odb_batched_btd.cu, odb_bgpu_btd_pick)",
    "a thread per matrix, or per line (gpu/dense/odb_batched_compact.cu; "
    "lines: gpu/dense/odb_batched_btd.cu)",
    "a thread per two adjacent lanes, 16-byte accesses (compact layout, "
    "even VL; LU and solve: gpu/dense/odb_batched_compact.cu; lines: "
    "gpu/dense/odb_batched_btd.cu)",
    "B threads per matrix, thread i owning row i (gpu/dense/"
    "odb_batched_compact.cu; lines, B <= 16: gpu/dense/odb_batched_btd.cu)",
    "lines only (compact, VL 4, 8 or 16, B <= 16, compute capability 9.0): "
    "a block of threads per pack fed by bulk copies into shared memory; the "
    "factor's row, tile and warp kernels (t:bench{kernel = ...}: "
    "gpu/dense/odb_btd_factor_stream.cu), the solve "
    "(gpu/dense/odb_batched_btd.cu)",
    "lines only: the same block LU and solve as cuBLAS batched calls per "
    "block row, the peer (gpu/dense/odb_batched_cublas.cu)",
  };
  return v >= 0 && v < (int)(sizeof docs / sizeof docs[0]) ? docs[v] : NULL;
}

static odb_status cuda_resolve(const odb_batch *bt, odb_batched_op op, int v,
                               int *out) {
  odb_bgpu_variant r = ODB_BGPU_AUTO;
  if (v == ODB_BGPU_CUBLAS)
    return ODB_FAIL(ODB_ERR_ARG, "GPU variant cublas is the line factor and "
                    "solve of ob.blocktridiag; ob.batched times cuBLAS with "
                    "bench{variant = \"cublas\" or \"cublas_nopiv\"} "
                    "(op lu or solve)");
  odb_status st = odb_bgpu_resolve(bt, (odb_bgpu_op)op, (odb_bgpu_variant)v,
                                   &r);
  *out = (int)r;
  return st;
}

/* The device allocation says itself when the bytes do not fit. */
static odb_status cuda_check_memory(double bytes, const char *what) {
  (void)bytes; (void)what;
  return ODB_OK;
}

static void cuda_free(double *p) { odb_bgpu_free(p); }

static odb_status cuda_identity(const odb_batch *bt, double *A) {
  odb_batch none = *bt;   /* every lane counts as padding: identity */
  none.n = 0;
  ODB_TRY(odb_bgpu_random(&none, 0, 0.0, A));
  return odb_bgpu_sync();
}

static odb_status cuda_random(const odb_batch *bt, uint64_t seed,
                              double dominance, double *A) {
  ODB_TRY(odb_bgpu_random(bt, seed, dominance, A));
  return odb_bgpu_sync();
}

/* Through a device staging copy of the standard order. */
static odb_status cuda_rhs_in(const odb_batch *bt, const double *h,
                              double *x) {
  size_t sl = (size_t)bt->n * bt->b;
  double *stage = NULL;
  ODB_TRY(odb_bgpu_alloc(sl, &stage));
  odb_status st = odb_bgpu_upload(stage, h, sl);
  if (st == ODB_OK) st = odb_bgpu_pack_rhs(bt, 1, stage, x);
  odb_bgpu_free(stage);
  return st;
}

static odb_status cuda_rhs_out(const odb_batch *bt, const double *x,
                               double *h) {
  size_t sl = (size_t)bt->n * bt->b;
  double *stage = NULL;
  ODB_TRY(odb_bgpu_alloc(sl, &stage));
  odb_status st = odb_bgpu_unpack_rhs(bt, 1, x, stage);
  if (st == ODB_OK) st = odb_bgpu_download(h, stage, sl);
  odb_bgpu_free(stage);
  return st;
}

static odb_status cuda_tic(double *t0) {
  *t0 = 0;
  return odb_bgpu_mark();
}

static odb_status cuda_toc(double t0, double *seconds) {
  (void)t0;
  return odb_bgpu_elapsed(seconds);
}

/* A device copy of the matrices is kept until the pivots passed and
   restored when not; the seconds include the pivot check. */
static odb_status cuda_lu_safe(const odb_batch *bt, int v, double *A,
                               long *bad, int *row, double *seconds) {
  size_t ml = odb_batch_mat_len(bt);
  double *keep = NULL;
  *row = -1;
  ODB_TRY(odb_bgpu_alloc(ml, &keep));
  odb_status st = odb_bgpu_copy(keep, A, ml);
  if (st == ODB_OK) st = odb_bgpu_mark();
  if (st == ODB_OK) st = odb_bgpu_lu(bt, (odb_bgpu_variant)v, A, bad);
  if (st == ODB_OK) {
    st = odb_bgpu_elapsed(seconds);
  } else if (st == ODB_ERR_ARG && *bad >= 0) {
    char msg[512];   /* the copy back must not replace the pivot's error */
    snprintf(msg, sizeof msg, "%s", odb_last_error());
    if (odb_bgpu_copy(A, keep, ml) != ODB_OK) st = ODB_ERR_INTERNAL;
    else fail_again(st, msg);
  }
  odb_bgpu_free(keep);
  return st;
}

static odb_status cuda_lu(const odb_batch *bt, int v, double *A) {
  return odb_bgpu_lu(bt, (odb_bgpu_variant)v, A, NULL);
}

static odb_status cuda_lu_launch(const odb_batch *bt, int v, double *A) {
  return odb_bgpu_lu_launch(bt, (odb_bgpu_variant)v, A);
}

static odb_status cuda_trsm(const odb_batch *bt, int v,
                            odb_batched_trsm_kind kind, const double *T,
                            double *X) {
  return odb_bgpu_trsm(bt, (odb_bgpu_variant)v, kind, T, X);
}

static odb_status cuda_gemm(const odb_batch *bt, int v, double alpha,
                            const double *A, const double *X, double beta,
                            double *C) {
  return odb_bgpu_gemm(bt, (odb_bgpu_variant)v, alpha, A, X, beta, C);
}

static odb_status cuda_gemv(const odb_batch *bt, int v, double alpha,
                            const double *A, const double *x, double beta,
                            double *y) {
  return odb_bgpu_gemv(bt, (odb_bgpu_variant)v, alpha, A, x, beta, y);
}

static odb_status cuda_lu_solve(const odb_batch *bt, int v, const double *LU,
                                double *x) {
  return odb_bgpu_lu_solve(bt, (odb_bgpu_variant)v, LU, x);
}

/* {====== the cuBLAS baseline: getrfBatched / getrsBatched */

typedef struct blas_bufs {
  double *orig, *col, *rhs, *x0;
  odb_bgpu_blas *blas;
} blas_bufs;

/* Column-major copies of the matrices (col) and of a random rhs. */
static odb_status blas_prepare(const odb_batch *bt, const double *A,
                               odb_batched_op op, int pivot, blas_bufs *w) {
  size_t sl = (size_t)bt->n * bt->b * bt->b;
  size_t vl = (size_t)bt->n * bt->b;
  odb_batch std1;
  ODB_TRY(odb_bgpu_alloc(sl, &w->orig));
  ODB_TRY(odb_bgpu_alloc(sl, &w->col));
  ODB_TRY(odb_bgpu_alloc(vl, &w->rhs));
  ODB_TRY(odb_bgpu_alloc(vl, &w->x0));
  ODB_TRY(odb_bgpu_unpack(bt, A, w->orig, 1));
  ODB_TRY(odb_bgpu_copy(w->col, w->orig, sl));
  ODB_TRY(odb_batch_init(&std1, ODB_LAYOUT_STANDARD, bt->n, bt->b, 1));
  ODB_TRY(odb_bgpu_random_rhs(&std1, 1, 7, w->x0));
  ODB_TRY(odb_bgpu_blas_new(bt->n, bt->b, w->col, w->rhs, pivot, &w->blas));
  if (op == ODB_BATCHED_OP_SOLVE) ODB_TRY(odb_bgpu_blas_lu(w->blas, NULL));
  return ODB_OK;
}

/* One rep of getrf (lu) or getrs (solve). */
static odb_status blas_rep(const odb_batch *bt, odb_batched_op op,
                           blas_bufs *w, double *sec) {
  size_t sl = (size_t)bt->n * bt->b * bt->b;
  size_t vl = (size_t)bt->n * bt->b;
  if (op == ODB_BATCHED_OP_LU) {
    ODB_TRY(odb_bgpu_copy(w->col, w->orig, sl));
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(odb_bgpu_blas_lu(w->blas, NULL));
    return odb_bgpu_elapsed(sec);
  }
  ODB_TRY(odb_bgpu_copy(w->rhs, w->x0, vl));
  ODB_TRY(odb_bgpu_mark());
  ODB_TRY(odb_bgpu_blas_solve(w->blas));
  return odb_bgpu_elapsed(sec);
}

static odb_status cuda_baseline_bench(const odb_batch *bt, const double *A,
                                      odb_batched_op op, int pivot, int reps,
                                      double *times) {
  blas_bufs w;
  memset(&w, 0, sizeof w);
  odb_status st = blas_prepare(bt, A, op, pivot, &w);
  for (int r = 0; r < reps && st == ODB_OK; ++r)
    st = blas_rep(bt, op, &w, &times[r]);
  odb_bgpu_blas_free(w.blas);
  odb_bgpu_free(w.orig);
  odb_bgpu_free(w.col);
  odb_bgpu_free(w.rhs);
  odb_bgpu_free(w.x0);
  return st;
}

/* }====== */

/* {====== block-tridiagonal objects: a device copy of the blocks */

struct odb_btd_state {
  double *dm;         /* the device blocks (the host layout) */
  int host_fresh;     /* the host blocks are current */
  int dev_fresh;      /* the device blocks are current */
  int factored;       /* the device blocks hold factors */
  /* variant cublas: the column-major copy of the blocks cuBLAS works on
     (odb_bgpu_btd_blas_*), and whether it holds dm's factors */
  odb_bgpu_btd_blas *blas;
  int blas_fresh;
};

static odb_status lost(void) {
  return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: the blocks were lost by a "
                  "failed factorization; set them again (set or random)");
}

static odb_status cuda_btd_resolve(const odb_blocktridiag *t, int v,
                                   int solve, int *out) {
  odb_bgpu_variant r = ODB_BGPU_AUTO;
  if (v == ODB_BGPU_CUBLAS) {   /* any layout and B; lines checked by open */
    *out = v;
    return ODB_OK;
  }
  odb_status st = odb_bgpu_btd_resolve(t, (odb_bgpu_variant)v, solve, &r);
  *out = (int)r;
  return st;
}

static void cuda_btd_close(odb_btd_state *s) {
  if (!s) return;
  odb_bgpu_btd_blas_free(s->blas);
  odb_bgpu_free(s->dm);
  free(s);
}

/* The variant must run both factor and solve. */
static odb_status cuda_btd_open(odb_blocktridiag *t, int v,
                                odb_btd_state **out) {
  int r;
  *out = NULL;
  ODB_TRY(cuda_btd_resolve(t, v, 0, &r));
  ODB_TRY(cuda_btd_resolve(t, v, 1, &r));
  odb_btd_state *s = calloc(1, sizeof *s);
  if (!s) return ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag: no memory");
  s->host_fresh = 1;
  odb_status st = odb_bgpu_alloc(odb_blocktridiag_blocks_len(t), &s->dm);
  if (st == ODB_OK && v == ODB_BGPU_CUBLAS)
    st = odb_bgpu_btd_blas_new(t, &s->blas);
  if (st != ODB_OK) {
    cuda_btd_close(s);
    return st;
  }
  *out = s;
  return ODB_OK;
}

/* Brings the device blocks (and their factored state) to the host. */
static odb_status cuda_btd_host(odb_blocktridiag *t, odb_btd_state *s) {
  if (s->host_fresh) return ODB_OK;
  if (!s->dev_fresh) return lost();
  ODB_TRY(odb_bgpu_download(odb_blocktridiag_blocks(t), s->dm,
                            odb_blocktridiag_blocks_len(t)));
  odb_blocktridiag_mark_factored(t, s->factored);
  s->host_fresh = 1;
  return ODB_OK;
}

/* Brings the host blocks to the device when it is behind. */
static odb_status btd_device(odb_blocktridiag *t, odb_btd_state *s) {
  if (s->dev_fresh) return ODB_OK;
  if (!s->host_fresh) return lost();
  ODB_TRY(odb_bgpu_upload(s->dm, odb_blocktridiag_blocks(t),
                          odb_blocktridiag_blocks_len(t)));
  s->factored = odb_blocktridiag_factored(t);
  s->dev_fresh = 1;
  return ODB_OK;
}

/* The device copy is stale. */
static void cuda_btd_host_changed(odb_btd_state *s) {
  s->dev_fresh = 0;
  s->factored = 0;
  s->blas_fresh = 0;
}

static int cuda_btd_factored(const odb_blocktridiag *t,
                             const odb_btd_state *s) {
  (void)t;
  return s->factored;
}

static odb_status cuda_btd_random(odb_blocktridiag *t, odb_btd_state *s,
                                  uint64_t seed, double dominance) {
  ODB_TRY(odb_bgpu_btd_random(t, seed, dominance, s->dm));
  ODB_TRY(odb_bgpu_sync());
  s->dev_fresh = 1;
  s->host_fresh = 0;
  s->factored = 0;
  s->blas_fresh = 0;
  odb_blocktridiag_mark_factored(t, 0);
  return ODB_OK;
}

/* Variant cublas: the copy is factored, and written back to dm only when
   every pivot passed, so a refused one leaves the blocks as they were; the
   seconds are the cuBLAS calls' and the pivot checks' (the copies in and
   out are not timed, as ours time the kernel alone). */
static odb_status blas_btd_factor(odb_btd_state *s, long *bad,
                                  double *seconds) {
  s->blas_fresh = 0;
  ODB_TRY(odb_bgpu_btd_blas_load(s->blas, s->dm));
  ODB_TRY(odb_bgpu_mark());
  ODB_TRY(odb_bgpu_btd_blas_factor(s->blas, bad));
  ODB_TRY(odb_bgpu_elapsed(seconds));
  ODB_TRY(odb_bgpu_btd_blas_store(s->blas, s->dm));
  ODB_TRY(odb_bgpu_sync());
  s->blas_fresh = 1;
  s->factored = 1;
  s->host_fresh = 0;
  return ODB_OK;
}

/* The copy cuBLAS solves with holds dm's factors. */
static odb_status blas_current(odb_btd_state *s) {
  if (s->blas_fresh) return ODB_OK;
  ODB_TRY(odb_bgpu_btd_blas_load(s->blas, s->dm));
  s->blas_fresh = 1;
  return ODB_OK;
}

/* A device copy of the blocks is kept until the pivots passed (restored
   when not); the seconds are the kernel's. */
static odb_status cuda_btd_factor(odb_blocktridiag *t, odb_btd_state *s,
                                  int v, long *bad, int *row,
                                  double *seconds) {
  size_t len = odb_blocktridiag_blocks_len(t);
  double *keep = NULL;
  *bad = -1;
  *row = -1;
  if (s->factored || (s->host_fresh && !s->dev_fresh &&
                      odb_blocktridiag_factored(t)))
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: already factored (set the "
                    "blocks again first)");
  ODB_TRY(btd_device(t, s));
  if (v == ODB_BGPU_CUBLAS) return blas_btd_factor(s, bad, seconds);
  ODB_TRY(odb_bgpu_alloc(len, &keep));
  odb_status st = odb_bgpu_copy(keep, s->dm, len);
  if (st == ODB_OK) st = odb_bgpu_mark();
  if (st == ODB_OK)
    st = odb_bgpu_btd_factor(t, (odb_bgpu_variant)v, s->dm, bad);
  if (st == ODB_ERR_ARG && *bad >= 0) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", odb_last_error());
    odb_status back = odb_bgpu_copy(s->dm, keep, len);
    odb_bgpu_free(keep);
    s->factored = 0;
    if (back != ODB_OK) {
      s->dev_fresh = 0;    /* the host copy, when fresh, is what is left */
      *bad = -1;
      return back;
    }
    return fail_again(st, msg);
  }
  odb_bgpu_free(keep);
  ODB_TRY(st);
  ODB_TRY(odb_bgpu_elapsed(seconds));
  s->factored = 1;
  s->host_fresh = 0;
  return ODB_OK;
}

/* A plan that is given (not plain) runs the stream factor with its stages
   and threads per line. */
static odb_status cuda_btd_factor_fresh(odb_blocktridiag *t, odb_btd_state *s,
                                        int v, const odb_btd_plan *pl,
                                        uint64_t seed, double dominance,
                                        double *seconds) {
  ODB_TRY(odb_bgpu_btd_random(t, seed, dominance, s->dm));
  if (v == ODB_BGPU_CUBLAS) {   /* the copies in and out are not timed */
    s->blas_fresh = 0;
    ODB_TRY(odb_bgpu_btd_blas_load(s->blas, s->dm));
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(odb_bgpu_btd_blas_factor(s->blas, NULL));
    ODB_TRY(odb_bgpu_elapsed(seconds));
    ODB_TRY(odb_bgpu_btd_blas_store(s->blas, s->dm));
    s->blas_fresh = 1;
    s->dev_fresh = 1;
    s->host_fresh = 0;
    s->factored = 1;
    return ODB_OK;
  }
  ODB_TRY(odb_bgpu_mark());
  if (pl && !pl->plain)
    ODB_TRY(odb_bgpu_btd_factor_stream(t, pl->stages, pl->threads,
                                       pl->kernel, s->dm, NULL));
  else
    ODB_TRY(odb_bgpu_btd_factor_launch(t, (odb_bgpu_variant)v, s->dm));
  ODB_TRY(odb_bgpu_elapsed(seconds));
  s->dev_fresh = 1;
  s->host_fresh = 0;
  s->factored = 1;
  return ODB_OK;
}

/* Variant cublas: xp (the internal layout) through the column-major copy;
   the seconds are the cuBLAS calls' (the copies are not timed, as ours
   time solves of a right-hand side already in their layout). */
static odb_status blas_solve(odb_btd_state *s, double *xp, double *seconds) {
  ODB_TRY(blas_current(s));
  ODB_TRY(odb_bgpu_btd_blas_rhs_load(s->blas, xp));
  ODB_TRY(odb_bgpu_mark());
  ODB_TRY(odb_bgpu_btd_blas_solve(s->blas));
  ODB_TRY(odb_bgpu_elapsed(seconds));
  return odb_bgpu_btd_blas_rhs_store(s->blas, xp);
}

/* Packs x on the host, solves on the device (the kernel's seconds). */
static odb_status cuda_btd_solve(odb_blocktridiag *t, odb_btd_state *s, int v,
                                 double *x, size_t len, double *seconds) {
  const odb_batch *bt = odb_blocktridiag_batch(t);
  size_t need = (size_t)bt->n * odb_blocktridiag_length(t) * bt->b;
  size_t wl = odb_blocktridiag_work_len(t);
  double *dx = NULL, *hx = NULL;
  odb_status st;
  if (len != need)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag solve: right-hand side has "
                    "%zu values, expected lines*length*block = %zu", len,
                    need);
  if (!s->factored)
    return ODB_FAIL(ODB_ERR_ARG, "blocktridiag: solve before factor");
  hx = malloc(sizeof(double) * wl);
  if (!hx) return ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag solve: no memory");
  odb_blocktridiag_pack_rhs(t, x, hx);
  st = odb_bgpu_alloc(wl, &dx);
  if (st == ODB_OK) st = odb_bgpu_upload(dx, hx, wl);
  if (st == ODB_OK && v == ODB_BGPU_CUBLAS) {
    st = blas_solve(s, dx, seconds);
  } else {
    if (st == ODB_OK) st = odb_bgpu_mark();
    if (st == ODB_OK)
      st = odb_bgpu_btd_solve(t, (odb_bgpu_variant)v, s->dm, dx);
    if (st == ODB_OK) st = odb_bgpu_elapsed(seconds);
  }
  if (st == ODB_OK) st = odb_bgpu_download(hx, dx, wl);
  if (st == ODB_OK) odb_blocktridiag_unpack_rhs(t, hx, x);
  odb_bgpu_free(dx);
  free(hx);
  return st;
}

static int cuda_btd_plan_ok(int v) { return v == ODB_BGPU_STREAM; }

static odb_status cuda_btd_solve_packed(odb_blocktridiag *t, odb_btd_state *s,
                                        int v, const odb_btd_plan *pl,
                                        double *xp, double *seconds) {
  if (v == ODB_BGPU_CUBLAS) return blas_solve(s, xp, seconds);
  ODB_TRY(odb_bgpu_mark());
  if (pl->plain)
    ODB_TRY(odb_bgpu_btd_solve(t, (odb_bgpu_variant)v, s->dm, xp));
  else
    ODB_TRY(odb_bgpu_btd_solve_stream(t, pl->stages, pl->y_on_chip,
                                      pl->threads, s->dm, xp));
  return odb_bgpu_elapsed(seconds);
}

/* }====== */

const odb_batched_ops odb_batched_cuda_ops = {
  .backend = "cuda", .memory = "device", .says_why = 1,
  .ready = cuda_ready,
  .variant_parse = cuda_variant_parse, .variant_name = cuda_variant_name,
  .variant_doc = cuda_variant_doc,
  .batch_init = odb_bgpu_batch_init, .resolve = cuda_resolve,
  .check_memory = cuda_check_memory,
  .alloc = odb_bgpu_alloc, .free = cuda_free, .copy = odb_bgpu_copy,
  .upload = odb_bgpu_upload, .download = odb_bgpu_download,
  .identity = cuda_identity, .random = cuda_random,
  .random_rhs = odb_bgpu_random_rhs,
  .get_matrix = odb_bgpu_get_matrix, .set_matrix = odb_bgpu_set_matrix,
  .rhs_in = cuda_rhs_in, .rhs_out = cuda_rhs_out,
  .tic = cuda_tic, .toc = cuda_toc,
  .lu_safe = cuda_lu_safe, .lu = cuda_lu, .lu_launch = cuda_lu_launch,
  .trsm = cuda_trsm, .gemm = cuda_gemm, .gemv = cuda_gemv,
  .lu_solve = cuda_lu_solve, .baseline_bench = cuda_baseline_bench,
  .btd_resolve = cuda_btd_resolve, .btd_open = cuda_btd_open,
  .btd_close = cuda_btd_close, .btd_host = cuda_btd_host,
  .btd_host_changed = cuda_btd_host_changed,
  .btd_factored = cuda_btd_factored, .btd_random = cuda_btd_random,
  .btd_factor = cuda_btd_factor, .btd_factor_fresh = cuda_btd_factor_fresh,
  .btd_solve = cuda_btd_solve, .btd_plan_ok = cuda_btd_plan_ok,
  .btd_solve_packed = cuda_btd_solve_packed,
};
