/* test_sparse_gpu.c - GPU SpMV of every format (gpu/sparse/odb_sparse_gpu.cu),
   with every launch option of the tuning space, and the cuSPARSE CSR/BSR
   baselines against the CPU CSR product on fresh random vectors: GH-b and
   GH-h, with and without wells, grids with a side of 1 and odd sizes.
   Also the bad-input paths. TAP lines; exit 77 without a device.
   --quick: a few grids only (for the slower sanitizer tools);
   --no-cusparse: skips the cuSPARSE checks (racecheck reports hazards
   inside cuSPARSE's own bsrmv kernels, not ours). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "tap.h"
#include "odebench.h"
#include "odb_sparse.h"
#include "odb_sparse_gpu.h"

static odb_rng rng;
static int use_cusparse = 1;

/* max |a - b| / max |b| over n entries (NaN counts as failure). */
static double rel_err(const double *a, const double *b, long n) {
  double num = 0, den = 0;
  for (long i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]);
    if (!(d == d)) return INFINITY;
    if (d > num) num = d;
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return den > 0 ? num / den : num;
}

/* Device vectors of one grid: x (random), y, and the CPU reference. */
typedef struct vecs {
  long n;
  double *hx, *ref, *got, *nan;
  double *dx, *dy;
} vecs;

static int vecs_init(vecs *v, const odb_sparse *csr) {
  long n = csr->n;
  memset(v, 0, sizeof *v);
  v->n = n;
  v->hx = malloc(n * sizeof(double)); v->ref = malloc(n * sizeof(double));
  v->got = malloc(n * sizeof(double)); v->nan = malloc(n * sizeof(double));
  for (long i = 0; i < n; i++) { v->hx[i] = 2.0 * odb_rng_uniform(&rng) - 1.0; v->nan[i] = NAN; }
  odb_sparse_spmv(csr, v->hx, v->ref);
  return cudaMalloc((void **)&v->dx, n * sizeof(double)) == cudaSuccess &&
         cudaMalloc((void **)&v->dy, n * sizeof(double)) == cudaSuccess &&
         cudaMemcpy(v->dx, v->hx, n * sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess;
}

static void vecs_free(vecs *v) {
  free(v->hx); free(v->ref); free(v->got); free(v->nan);
  cudaFree(v->dx); cudaFree(v->dy);
}

/* Poisons y, runs (opts NULL and cs 0: g's options; cs 1: cuSPARSE),
   returns the relative error to the reference (INFINITY on failure). */
static double run_one(odb_sparse_gpu *g, vecs *v, const odb_sparse_gpu_opts *o, int cs) {
  odb_status st;
  if (cudaMemcpy(v->dy, v->nan, v->n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess)
    return INFINITY;
  st = cs ? odb_sparse_gpu_cusparse(g, v->dx, v->dy) : odb_sparse_gpu_spmv_opts(g, o, v->dx, v->dy);
  if (st != ODB_OK) {
    tap_diag("run failed: %s", odb_last_error());
    return INFINITY;
  }
  if (cudaMemcpy(v->got, v->dy, v->n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) {
    tap_diag("copy back failed: %s", cudaGetErrorString(cudaGetLastError()));
    return INFINITY;
  }
  return rel_err(v->got, v->ref, v->n);
}

typedef struct grid_case { int J, H, I, k, nw; } grid_case;

/* Every format of one grid and pattern, every option of each format's
   space, cuSPARSE for CSR and BSR. */
static void check_grid(const grid_case *c, odb_gh_pattern pat) {
  odb_reservoir *gr = NULL;
  odb_sparse *csr = NULL;
  vecs v;
  char name[96];
  snprintf(name, sizeof name, "%dx%dx%d k=%d wells=%d %s", c->J, c->H, c->I, c->k, c->nw,
           pat == ODB_GH_HALF ? "GH-h" : "GH-b");
  uint64_t seed = (uint64_t)(odb_rng_uniform(&rng) * 1e9) + 1;
  if (!tap_ok(odb_reservoir_create(&gr, c->J, c->H, c->I, c->k, c->nw, pat, seed) == ODB_OK &&
              odb_reservoir_csr(gr, &csr) == ODB_OK, "%s: grid and CSR", name)) {
    tap_diag("%s", odb_last_error());
    odb_reservoir_free(gr);
    return;
  }
  if (!tap_ok(vecs_init(&v, csr), "%s: device vectors", name)) {
    vecs_free(&v); odb_sparse_free(csr); odb_reservoir_free(gr);
    return;
  }
  for (int f = 0; f < ODB_FMT_COUNT; f++) {
    odb_sparse *A = NULL;
    odb_sparse_gpu *g = NULL;
    if (odb_reservoir_matrix(gr, (odb_sparse_format)f, 0, &A) != ODB_OK ||
        odb_sparse_gpu_upload(A, &g) != ODB_OK) {
      tap_ok(0, "%s %s: upload (%s)", name, odb_sparse_format_name(f), odb_last_error());
      odb_sparse_free(A);
      continue;
    }
    odb_sparse_gpu_opts cand[64];
    int nc = odb_sparse_gpu_space(g, cand, 64);
    double worst = run_one(g, &v, NULL, 0);
    int wi = -1;
    for (int i = 0; i < nc && i < 64; i++) {
      double e = run_one(g, &v, &cand[i], 0);
      if (!(e <= worst)) { worst = e; wi = i; }
    }
    char ob[64] = "default";
    if (wi >= 0) odb_sparse_gpu_opts_str(&cand[wi], ob, sizeof ob);
    tap_ok(worst <= 1e-13, "%s %s: %d launch options, worst rel err %.2e (%s)", name,
           odb_sparse_format_name(f), nc, worst, ob);
    tap_ok(g->n == csr->n && g->nnz == csr->nnz, "%s %s: order %ld and nonzeros %ld", name,
           odb_sparse_format_name(f), g->n, g->nnz);
    if (use_cusparse && (f == ODB_FMT_CSR || f == ODB_FMT_BSR)) {
      double e = run_one(g, &v, NULL, 1);
      tap_ok(e <= 1e-13, "%s cuSPARSE %s: rel err %.2e", name, odb_sparse_format_name(f), e);
    }
    odb_sparse_gpu_free(g);
    odb_sparse_free(A);
  }
  vecs_free(&v);
  odb_sparse_free(csr);
  odb_reservoir_free(gr);
}

/* Tuning keeps a valid option, remembers it per shape, and the BSR bench
   times the cuSPARSE variants; results stay correct. */
static void check_tune(void) {
  odb_reservoir *gr = NULL;
  odb_sparse *csr = NULL, *A = NULL;
  odb_sparse_gpu *g = NULL, *g2 = NULL;
  vecs v;
  if (odb_reservoir_create(&gr, 17, 13, 11, 3, 4, ODB_GH_HALF, 77) != ODB_OK ||
      odb_reservoir_csr(gr, &csr) != ODB_OK || !vecs_init(&v, csr)) {
    tap_ok(0, "tune: setup (%s)", odb_last_error());
    return;
  }
  odb_sparse_format fs[2] = {ODB_FMT_BDIA, ODB_FMT_BSR};
  for (int i = 0; i < 2; i++) {
    double t = 0, tc = 0;
    char b1[64], b2[64];
    odb_status st;
    if (odb_reservoir_matrix(gr, fs[i], 0, &A) != ODB_OK || odb_sparse_gpu_upload(A, &g) != ODB_OK) {
      tap_ok(0, "tune %s: upload (%s)", odb_sparse_format_name(fs[i]), odb_last_error());
      odb_sparse_free(A); A = NULL;
      continue;
    }
    st = odb_sparse_gpu_tune(g, 3, &t);
    tap_ok(st == ODB_OK && t > 0, "tune %s: %.2f us (%s)", odb_sparse_format_name(fs[i]),
           t * 1e6, st == ODB_OK ? "ok" : odb_last_error());
    odb_sparse_gpu_opts o = odb_sparse_gpu_get_opts(g);
    tap_ok(run_one(g, &v, NULL, 0) <= 1e-13, "tune %s: tuned %s correct",
           odb_sparse_format_name(fs[i]), odb_sparse_gpu_opts_str(&o, b1, sizeof b1));
    tap_ok(odb_sparse_gpu_upload(A, &g2) == ODB_OK, "tune %s: second upload",
           odb_sparse_format_name(fs[i]));
    if (g2) {
      odb_sparse_gpu_opts o2 = odb_sparse_gpu_get_opts(g2);
      tap_ok(!memcmp(&o, &o2, sizeof o), "tune %s: same shape starts tuned (%s)",
             odb_sparse_format_name(fs[i]), odb_sparse_gpu_opts_str(&o2, b2, sizeof b2));
      odb_sparse_gpu_free(g2); g2 = NULL;
    }
    if (use_cusparse && fs[i] == ODB_FMT_BSR) {
      tap_ok(odb_sparse_gpu_bench(g, ODB_SPMV_CUSPARSE, 3, &tc) == ODB_OK && tc > 0,
             "bench cuSPARSE BSR: %.2f us", tc * 1e6);
      tap_ok(run_one(g, &v, NULL, 1) <= 1e-13, "cuSPARSE BSR with the faster API correct");
    }
    odb_sparse_gpu_free(g); g = NULL;
    odb_sparse_free(A); A = NULL;
  }
  vecs_free(&v);
  odb_sparse_free(csr);
  odb_reservoir_free(gr);
}

/* Wrong lengths, equal vectors, bad options, too large a matrix. */
static void check_bad_input(void) {
  odb_reservoir *gr = NULL;
  odb_sparse *A = NULL, *E = NULL;
  odb_sparse_gpu *g = NULL, *ge = NULL;
  if (odb_reservoir_create(&gr, 3, 3, 3, 2, 1, ODB_GH_BLOCK, 5) != ODB_OK ||
      odb_reservoir_matrix(gr, ODB_FMT_CSR, 0, &A) != ODB_OK ||
      odb_sparse_gpu_upload(A, &g) != ODB_OK) {
    tap_ok(0, "bad input: setup (%s)", odb_last_error());
    return;
  }
  double hx[8] = {0}, hy[8];
  odb_status st = odb_sparse_gpu_spmv_host(g, ODB_SPMV_OURS, hx, hy, 8);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "x has 8 entries, the matrix order is 55"),
         "wrong vector length named: %s", odb_last_error());
  double *d = NULL;
  cudaMalloc((void **)&d, A->n * sizeof(double));
  st = odb_sparse_gpu_spmv(g, d, d);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "distinct"), "x == y refused: %s",
         odb_last_error());
  cudaFree(d);
  odb_sparse_gpu_opts o = {100, 4, 0, 0, 0};
  st = odb_sparse_gpu_set_opts(g, &o);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "block"), "bad block: %s", odb_last_error());
  o.block = 256; o.grain = 3;
  st = odb_sparse_gpu_set_opts(g, &o);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "grain"), "bad CSR grain: %s",
         odb_last_error());
  o.grain = 4; o.shared_x = 1;
  st = odb_sparse_gpu_set_opts(g, &o);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "shared_x"), "shared_x on CSR: %s",
         odb_last_error());
  o.shared_x = 0; o.stream = 1;
  st = odb_sparse_gpu_set_opts(g, &o);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "stream applies to bdia only"),
         "stream on CSR: %s", odb_last_error());
  o.stream = 0; o.pair = 1;
  st = odb_sparse_gpu_set_opts(g, &o);
  tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "pair applies to bdia only"),
         "pair on CSR: %s", odb_last_error());
  /* a DIA shell far larger than any device: refused before any copy */
  E = calloc(1, sizeof *E);
  E->fmt = ODB_FMT_DIA; E->n = 1L << 30; E->ndiag = 1L << 12;
  st = odb_sparse_gpu_upload(E, &ge);
  tap_ok(st == ODB_ERR_NOMEM && ge == NULL && strstr(odb_last_error(), "needs 35184372121600 bytes"),
         "too large for the device: %s", odb_last_error());
  free(E);
  odb_sparse *bd = NULL;
  odb_sparse_gpu *gb = NULL;
  if (odb_reservoir_matrix(gr, ODB_FMT_BDIA, 0, &bd) == ODB_OK &&
      odb_sparse_gpu_upload(bd, &gb) == ODB_OK) {
    odb_sparse_gpu_opts ob = {256, 4, 0, 0, 0};
    st = odb_sparse_gpu_set_opts(gb, &ob);
    tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "divide k = 2"),
           "Bdia grain must divide k: %s", odb_last_error());
    /* the pair form needs an even number of cells: this grid has 27 */
    odb_sparse_gpu_opts op = {128, 1, 0, 1, 0};
    st = odb_sparse_gpu_set_opts(gb, &op);
    tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "even number of cells (got 27)"),
           "pair on an odd number of cells refused: %s", odb_last_error());
    op.pair = 0; op.stream = 2;
    st = odb_sparse_gpu_set_opts(gb, &op);
    tap_ok(st == ODB_ERR_ARG && strstr(odb_last_error(), "stream must be 0 or 1"),
           "stream 2 refused: %s", odb_last_error());
  }
  odb_sparse_gpu_free(gb);
  odb_sparse_free(bd);
  odb_sparse *ell = NULL;
  odb_sparse_gpu *gl = NULL;
  if (odb_reservoir_matrix(gr, ODB_FMT_ELL, 0, &ell) == ODB_OK &&
      odb_sparse_gpu_upload(ell, &gl) == ODB_OK) {
    double *dx = NULL, *dy = NULL;
    cudaMalloc((void **)&dx, A->n * sizeof(double));
    cudaMalloc((void **)&dy, A->n * sizeof(double));
    st = odb_sparse_gpu_cusparse(gl, dx, dy);
    tap_ok(st == ODB_ERR_UNSUPPORTED, "cuSPARSE on ELL refused: %s", odb_last_error());
    cudaFree(dx); cudaFree(dy);
  }
  odb_sparse_gpu_free(gl);
  odb_sparse_free(ell);
  odb_sparse_gpu_free(g);
  odb_sparse_free(A);
  odb_reservoir_free(gr);
}

int main(int argc, char **argv) {
  size_t fb, tb;
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--no-cusparse")) use_cusparse = 0;
    else { fprintf(stderr, "usage: test_sparse_gpu [--quick] [--no-cusparse]\n"); return 2; }
  }
  if (odb_sparse_gpu_mem(&fb, &tb) != ODB_OK) TAP_SKIP_ALL(odb_last_error());
  odb_rng_seed(&rng, 20240611);
  static const grid_case full[] = {
    {1, 1, 1, 1, 0}, {1, 1, 1, 4, 1}, {1, 7, 5, 2, 3}, {6, 1, 5, 3, 2}, {9, 5, 1, 4, 1},
    {3, 3, 3, 16, 2}, {5, 7, 3, 5, 4}, {7, 9, 11, 2, 0}, {11, 9, 7, 4, 6}, {13, 11, 9, 8, 5},
    {33, 17, 9, 3, 7}, {41, 41, 41, 1, 0}, {21, 23, 19, 6, 3}, {2, 2, 2, 7, 4},
    /* an even number of cells: the pair form too, side-1 grids and wells */
    {8, 6, 4, 2, 3}, {1, 6, 4, 4, 2}, {10, 1, 6, 2, 1}, {4, 4, 1, 8, 2}, {2, 3, 4, 1, 1},
    {6, 5, 2, 3, 2}, {16, 12, 10, 2, 0},
  };
  static const grid_case brief[] = {
    {1, 1, 1, 4, 1}, {5, 7, 3, 5, 4}, {11, 9, 7, 4, 6}, {3, 3, 3, 16, 2}, {8, 6, 4, 2, 3},
    {1, 6, 4, 4, 2},
  };
  const grid_case *cases = quick ? brief : full;
  int nc = quick ? (int)(sizeof brief / sizeof brief[0]) : (int)(sizeof full / sizeof full[0]);
  for (int i = 0; i < nc; i++) {
    check_grid(&cases[i], ODB_GH_BLOCK);
    check_grid(&cases[i], ODB_GH_HALF);
  }
  check_tune();
  check_bad_input();
  double bw = 0;
  if (odb_sparse_gpu_copy_bandwidth(&bw) == ODB_OK) tap_diag("copy bandwidth %.1f GB/s", bw / 1e9);
  return tap_done();
}
