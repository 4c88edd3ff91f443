/* test_sparse.c - reservoir GH generator, formats, SpMV and Krylov (CPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "tap.h"
#include "odebench.h"
#include "odb_krylov_state.h"

/* Dense GH of g built straight from the stencil definition by coordinates. */
static double *dense_gh(const odb_reservoir *g)
{
  long n = g->n, Mk = g->M * g->k; int k = g->k;
  double *D = calloc((size_t)n * n, sizeof *D);
  char *S = calloc((size_t)n * n, 1);
  static const int dj[7] = {0, 0, -1, 0, 1, 0, 0}, dh[7] = {0, -1, 0, 0, 0, 1, 0},
                   di[7] = {-1, 0, 0, 0, 0, 0, 1};
  for (int i = 0; i < g->I; i++)
    for (int h = 0; h < g->H; h++)
      for (int j = 0; j < g->J; j++) {
        long m = j + (long)g->J * h + (long)g->J * g->H * i;
        for (int s = 0; s < 7; s++) {
          int jj = j + dj[s], hh = h + dh[s], ii = i + di[s];
          if (jj < 0 || jj >= g->J || hh < 0 || hh >= g->H || ii < 0 || ii >= g->I) continue;
          long nb = jj + (long)g->J * hh + (long)g->J * g->H * ii;
          long bias = 0;
          if (g->pattern == ODB_GH_HALF && (m % 2 == 1) && nb != m) bias = nb < m ? -(k / 2) : k / 2;
          for (int r = 0; r < k; r++)
            for (int c = 0; c < k; c++) {
              long row = m * k + r, col = nb * k + bias + c;
              if (col < 0 || col >= Mk) continue;
              S[row * n + col] = 1;
            }
        }
      }
  for (int w = 0; w < g->nw; w++)
    for (int j = 0; j < g->J; j++) {
      long m = j + (long)g->J * g->well_h[w] + (long)g->J * g->H * g->well_i[w];
      S[(Mk + w) * n + m * k] = 1;
      S[(m * k) * n + Mk + w] = 1;
    }
  for (long r = 0; r < n; r++) {
    double sum = 1.0;
    for (long c = 0; c < n; c++)
      if (S[r * n + c] && c != r) { D[r * n + c] = odb_gh_offdiag(g->seed, r, c); sum += fabs(D[r * n + c]); }
    D[r * n + r] = sum;
  }
  free(S);
  return D;
}

static void test_generator(int J, int H, int I, int k, int nw, odb_gh_pattern pat)
{
  odb_reservoir *g; odb_sparse *A;
  if (odb_reservoir_create(&g, J, H, I, k, nw, pat, 42) != ODB_OK) { tap_ok(0, "create: %s", odb_last_error()); return; }
  odb_reservoir_csr(g, &A);
  double *D = dense_gh(g);
  long n = g->n, bad = 0, unsorted = 0;
  double *row = calloc(n, sizeof *row);
  for (long r = 0; r < n; r++) {
    memset(row, 0, n * sizeof *row);
    for (int64_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
      if (p > A->rowptr[r] && A->col[p] <= A->col[p - 1]) unsorted++;
      row[A->col[p]] = A->val[p];
    }
    for (long c = 0; c < n; c++) if (row[c] != D[r * n + c]) bad++;
  }
  tap_ok(bad == 0 && unsorted == 0, "GH %dx%dx%d k=%d wells=%d %s equals the direct stencil entry by entry (%ld bad, %ld unsorted)",
         J, H, I, k, nw, pat == ODB_GH_HALF ? "GH-h" : "GH-b", bad, unsorted);
  free(row); free(D); odb_sparse_free(A); odb_reservoir_free(g);
}

static void test_wells_placed(void)
{
  odb_reservoir *g;
  odb_reservoir_create(&g, 4, 9, 11, 2, 6, ODB_GH_BLOCK, 1);
  int ok = 1;
  for (int w = 0; w < g->nw; w++) {
    if (odb_gh_partition(g, g->well_h[w], g->well_i[w]) != w) ok = 0;
    for (int v = 0; v < w; v++)
      if (abs(g->well_h[w] - g->well_h[v]) + abs(g->well_i[w] - g->well_i[v]) < 2) ok = 0;
  }
  tap_ok(ok && g->pu * g->pv >= 6, "6 wells one per partition (%d x %d), apart", g->pu, g->pv);
  odb_reservoir_free(g);
}

static double rel_diff(long n, const double *a, const double *b)
{
  double num = 0, den = 0;
  for (long i = 0; i < n; i++) {
    if (fabs(a[i] - b[i]) > num) num = fabs(a[i] - b[i]);
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return den > 0 ? num / den : num;
}

static void test_spmv_all(uint64_t xseed)
{
  static const int grids[][3] = {{3, 5, 7}, {1, 3, 5}, {5, 1, 3}, {3, 3, 1}, {1, 1, 3}};
  static const int ks[] = {1, 2, 3}, wells[] = {0, 1, 3};
  odb_rng rng; odb_rng_seed(&rng, xseed);
  int fails = 0, cases = 0;
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++)
    for (int pat = 0; pat < 2; pat++)
      for (int ki = 0; ki < 3; ki++)
        for (int wi = 0; wi < 3; wi++) {
          const int *s = grids[gi];
          if (wells[wi] > s[1] * s[2]) continue;
          odb_reservoir *g; odb_sparse *csr;
          if (odb_reservoir_create(&g, s[0], s[1], s[2], ks[ki], wells[wi], (odb_gh_pattern)pat, 7 + gi) != ODB_OK) { fails++; continue; }
          odb_reservoir_csr(g, &csr);
          long n = g->n;
          double *x = malloc(n * sizeof *x), *y0 = malloc(n * sizeof *x), *y = malloc(n * sizeof *x);
          for (long i = 0; i < n; i++) x[i] = 2 * odb_rng_uniform(&rng) - 1;
          odb_sparse_spmv(csr, x, y0);
          for (int f = ODB_FMT_BSR; f < ODB_FMT_COUNT; f++) {
            odb_sparse *A;
            cases++;
            if (odb_reservoir_matrix(g, (odb_sparse_format)f, 0, &A) != ODB_OK) { fails++; continue; }
            for (long i = 0; i < n; i++) y[i] = NAN;
            odb_sparse_spmv(A, x, y);
            double e = rel_diff(n, y, y0);
            if (!(e <= 1e-14)) {
              fails++;
              tap_diag("%s on %dx%dx%d k=%d wells=%d pat=%d: rel err %.3g", odb_sparse_format_name(f),
                       s[0], s[1], s[2], ks[ki], wells[wi], pat, e);
            }
            odb_sparse_free(A);
          }
          free(x); free(y0); free(y); odb_sparse_free(csr); odb_reservoir_free(g);
        }
  tap_ok(fails == 0, "every format's SpMV equals CSR to 1e-14 (%d cases, %d failed, x seed %llu)",
         cases, fails, (unsigned long long)xseed);
}

/*
** Bdia's tiles (cells whose blocks all lie inside the grid, 512 at a time)
** on grids large enough for them: the whole SpMV equals CSR's to 1e-14 and,
** bit for bit, the same rows computed a cell at a time (odb_bdia_spmv_slab
** of one cell, whose tile is the cell itself or the per-cell loop), for
** k = 1..5 (four rows a pass, then the rest), both patterns (GH-h's odd
** cells shifted), with wells.
*/
static void test_bdia_tiles(uint64_t xseed)
{
  odb_rng rng; odb_rng_seed(&rng, xseed);
  int fails = 0, cases = 0;
  for (int k = 1; k <= 5; k++)
    for (int pat = 0; pat < 2; pat++) {
      odb_reservoir *g; odb_sparse *csr, *B;
      if (odb_reservoir_create(&g, 13, 12, 9, k, 3, (odb_gh_pattern)pat, 5 + k) != ODB_OK) { fails++; continue; }
      odb_reservoir_csr(g, &csr);
      odb_reservoir_matrix(g, ODB_FMT_BDIA, 0, &B);
      long n = g->n, M = B->bd->M;
      double *x = malloc(n * sizeof *x), *y0 = malloc(n * sizeof *x), *y = malloc(n * sizeof *x),
             *y1 = malloc(n * sizeof *x);
      for (long i = 0; i < n; i++) x[i] = 2 * odb_rng_uniform(&rng) - 1;
      odb_sparse_spmv(csr, x, y0);
      odb_sparse_spmv(B, x, y);
      for (long i = 0; i < n; i++) y1[i] = NAN;
      for (long m = 0; m < M; m++) odb_bdia_spmv_slab(B->bd, 0, x, x, x, y1, m, m + 1, 0, 0);
      odb_bdia_spmv_slab(B->bd, 0, x, x, x, y1, 0, 0, 0, B->bd->nw);
      cases++;
      double e = rel_diff(n, y, y0);
      int same = 1;
      for (long i = 0; i < n; i++) same = same && y[i] == y1[i];
      if (!(e <= 1e-14) || !same) {
        fails++;
        tap_diag("Bdia k=%d pat=%d: %.3g from CSR, cell by cell %s", k, pat, e, same ? "equal" : "differs");
      }
      free(x); free(y0); free(y); free(y1); odb_sparse_free(csr); odb_sparse_free(B); odb_reservoir_free(g);
    }
  tap_ok(fails == 0, "Bdia's tiles on 13x12x9 grids equal CSR to 1e-14 and the cell-by-cell rows bit for "
         "bit (%d cases, %d failed)", cases, fails);
}

/* The team SpMV (3 members, uneven ranges) equals the serial one. */
static void test_spmv_team(uint64_t xseed)
{
  odb_team *team;
  if (odb_team_create(NULL, NULL, 3, ODB_BARRIER_CENTRAL, &team) != ODB_OK) {
    tap_ok(0, "team: %s", odb_last_error());
    return;
  }
  odb_reservoir *g;
  odb_reservoir_create(&g, 5, 7, 3, 3, 3, ODB_GH_HALF, 8);
  long n = g->n;
  odb_rng rng; odb_rng_seed(&rng, xseed + 1);
  double *x = malloc(n * sizeof *x), *y0 = malloc(n * sizeof *x), *y = malloc(n * sizeof *x);
  for (long i = 0; i < n; i++) x[i] = 2 * odb_rng_uniform(&rng) - 1;
  int fails = 0;
  for (int f = 0; f < ODB_FMT_COUNT; f++) {
    odb_sparse *A;
    odb_reservoir_matrix(g, (odb_sparse_format)f, 0, &A);
    odb_sparse_spmv(A, x, y0);
    for (long i = 0; i < n; i++) y[i] = NAN;
    if (odb_sparse_spmv_team(A, team, x, y) != ODB_OK || !(rel_diff(n, y, y0) == 0.0)) {
      fails++;
      tap_diag("team %s differs", odb_sparse_format_name(f));
    }
    odb_sparse_free(A);
  }
  tap_ok(fails == 0, "SpMV on a team of 3 equals the serial SpMV bit for bit, every format");
  free(x); free(y0); free(y); odb_reservoir_free(g); odb_team_destroy(team);
}

/* Wrong entry in a converted matrix must show. */
static void test_spmv_detects_damage(void)
{
  odb_reservoir *g; odb_sparse *csr, *b;
  odb_reservoir_create(&g, 3, 3, 3, 2, 1, ODB_GH_BLOCK, 5);
  odb_reservoir_csr(g, &csr);
  odb_reservoir_matrix(g, ODB_FMT_BDIA, 0, &b);
  b->bd->WTa[1] += 0.5;                   /* one W^T entry of the well */
  long n = g->n;
  double *x = malloc(n * sizeof *x), *y0 = malloc(n * sizeof *x), *y = malloc(n * sizeof *x);
  for (long i = 0; i < n; i++) x[i] = 1.0 + i % 3;
  odb_sparse_spmv(csr, x, y0); odb_sparse_spmv(b, x, y);
  tap_ok(rel_diff(n, y, y0) > 1e-6, "a damaged well entry in Bdia is caught by the comparison");
  free(x); free(y0); free(y); odb_sparse_free(csr); odb_sparse_free(b); odb_reservoir_free(g);
}

static void test_footprints(void)
{
  int J = 3, H = 5, I = 7, k = 2, nw = 3;
  odb_reservoir *g;
  odb_reservoir_create(&g, J, H, I, k, nw, ODB_GH_BLOCK, 3);
  long M = (long)J * H * I, n = M * k + nw;
  long blocks = 7 * M - 2L * H * I - 2L * J * I - 2L * J * H;
  long nnz = blocks * k * k + 2L * nw * J + nw;
  odb_sparse *A[ODB_FMT_COUNT];
  for (int f = 0; f < ODB_FMT_COUNT; f++) odb_reservoir_matrix(g, (odb_sparse_format)f, 0, &A[f]);
  tap_ok(A[0]->nnz == nnz && odb_sparse_bytes(A[0]) == (size_t)(12 * nnz + 8 * (n + 1)),
         "CSR nnz = (7JHI-2HI-2JI-2JH)k^2 + 2 nw J + nw = %ld, bytes 12 nnz + 8(n+1)", nnz);
  /* BSR: H blocks + one block per well cell in W and in W^T + the well corner */
  long nbr = (n + k - 1) / k;
  tap_ok(odb_sparse_bytes(A[1]) == (size_t)(8 * k * k * A[1]->nblocks + 4 * A[1]->nblocks + 8 * (nbr + 1))
         && A[1]->nblocks >= blocks, "BSR bytes 8 k^2 nb + 4 nb + 8 (nbr+1), nb = %ld", A[1]->nblocks);
  int width = 7 * k + 1 > J + 1 ? 7 * k + 1 : J + 1;
  tap_ok(A[2]->width == width && odb_sparse_bytes(A[2]) == (size_t)(12 * n * width),
         "ELL width max(7k+1, J+1) = %d, bytes 12 n width", width);
  long stored = A[3]->ncoo;
  for (long r = 0; r < n; r++) { long len = A[0]->rowptr[r + 1] - A[0]->rowptr[r]; stored += len < A[3]->width ? len : A[3]->width; }
  tap_ok(stored == nnz && odb_sparse_bytes(A[3]) == (size_t)(12 * n * A[3]->width + 16 * A[3]->ncoo),
         "HYB width %d + %ld COO holds every nonzero, bytes 12 n w + 16 ncoo", A[3]->width, A[3]->ncoo);
  tap_ok(odb_sparse_bytes(A[4]) == (size_t)(8 * n * A[4]->ndiag + 8 * A[4]->ndiag),
         "DIA bytes 8 n ndiag + 8 ndiag (%ld diagonals)", A[4]->ndiag);
  size_t bd = 8 * 7 * (size_t)k * k * M + 16 * nw * J + 12 * nw + 4 * g->pu * g->pv + 16 * nw;
  tap_ok(odb_sparse_bytes(A[5]) == bd, "Bdia bytes 56 k^2 M + 16 nw J + 28 nw + 4 pu pv = %zu", bd);
  tap_ok(A[5]->nnz == nnz, "Bdia built from the grid counts the CSR's %ld structural nonzeros (%ld)",
         nnz, A[5]->nnz);
  for (int f = 0; f < ODB_FMT_COUNT; f++) odb_sparse_free(A[f]);
  odb_reservoir_free(g);
  /* DIA of a scalar 7-point stencil: exactly 7 diagonals */
  odb_sparse *dia;
  odb_reservoir_create(&g, 3, 4, 5, 1, 0, ODB_GH_BLOCK, 3);
  odb_reservoir_matrix(g, ODB_FMT_DIA, 0, &dia);
  tap_ok(dia->ndiag == 7, "DIA of k=1 without wells has 7 diagonals (%ld)", dia->ndiag);
  odb_sparse_free(dia); odb_reservoir_free(g);
}

static void test_krylov(odb_krylov_method meth, odb_sparse_format fmt, odb_gh_pattern pat)
{
  odb_reservoir *g; odb_sparse *A;
  odb_reservoir_create(&g, 5, 7, 6, 2, 3, pat, 11);
  odb_reservoir_matrix(g, fmt, 0, &A);
  long n = g->n;
  double *xs = malloc(n * sizeof *xs), *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
  odb_reservoir_rhs(g, A, xs, b);
  odb_krylov_opts o = {1e-10, 500, 100};
  odb_krylov_result res;
  odb_status st = odb_krylov_solve(A, meth, b, x, &o, &res);
  double err = rel_diff(n, x, xs);
  tap_ok(st == ODB_OK && res.outcome == ODB_KRY_CONVERGED && err <= 1e-8 && res.relres_true <= o.tol
         && res.nhist == res.iters + 1,
         "%s on %s %s: %d iterations, error %.2g, true residual %.2g",
         meth == ODB_KRYLOV_QMR ? "QMR" : "BiCGStab", odb_sparse_format_name(fmt),
         pat == ODB_GH_HALF ? "GH-h" : "GH-b", res.iters, err, res.relres_true);
  odb_krylov_result_free(&res);
  free(xs); free(b); free(x); odb_sparse_free(A); odb_reservoir_free(g);
}

/* Skew-symmetric A: r0 . A r0 = 0, so BiCGStab's rhat.v and QMR's q.Ap vanish. */
static void test_breakdown(void)
{
  int64_t rp[] = {0, 1, 2, 3, 4};
  int32_t cl[] = {1, 0, 3, 2};
  double vl[] = {1.0, -1.0, 2.0, -2.0};
  odb_sparse *A;
  odb_sparse_csr_from(4, rp, cl, vl, &A);
  double b[4] = {1, 1, 1, 1}, x[4] = {0};
  odb_krylov_result res;
  odb_status st = odb_krylov_solve(A, ODB_KRYLOV_BICGSTAB, b, x, NULL, &res);
  tap_ok(st == ODB_ERR_MAX_STEPS && res.outcome == ODB_KRY_BREAKDOWN_RHO && res.breakdown_iter == 1
         && strstr(odb_last_error(), "breakdown") && strstr(odb_last_error(), "iteration 1"),
         "BiCGStab breakdown reported: %s", odb_last_error());
  odb_krylov_result_free(&res);
  memset(x, 0, sizeof x);
  st = odb_krylov_solve(A, ODB_KRYLOV_QMR, b, x, NULL, &res);
  tap_ok(st == ODB_ERR_MAX_STEPS && res.outcome == ODB_KRY_BREAKDOWN_OTHER && res.breakdown_iter == 1
         && strstr(odb_last_error(), "breakdown"),
         "QMR breakdown (q.Ap = 0) reported: %s", odb_last_error());
  odb_krylov_result_free(&res);
  odb_sparse_free(A);
}

/* A = [1 1; 1 0], b = e1: alpha = 1, s = (0, -1), t = A s = (-1, 0), t.s = 0. */
static void test_omega_breakdown(void)
{
  int64_t rp[] = {0, 2, 3};
  int32_t cl[] = {0, 1, 0};
  double vl[] = {1.0, 1.0, 1.0};
  odb_sparse *A;
  odb_sparse_csr_from(2, rp, cl, vl, &A);
  double b[2] = {1, 0}, x[2] = {0};
  odb_krylov_result res;
  odb_status st = odb_krylov_solve(A, ODB_KRYLOV_BICGSTAB, b, x, NULL, &res);
  tap_ok(st == ODB_ERR_MAX_STEPS && res.outcome == ODB_KRY_BREAKDOWN_OMEGA && res.breakdown_iter == 1,
         "BiCGStab omega breakdown reported: %s", odb_last_error());
  odb_krylov_result_free(&res);
  odb_sparse_free(A);
}

/* Cyclic shift with a tiny random diagonal (n = 60): eigenvalues surround
** the origin; b random. Neither method makes 1% progress for long. */
enum { NCYC = 60 };
static void cyclic_system(odb_sparse **A, double *b)
{
  int64_t rp[NCYC + 1]; int32_t cl[2 * NCYC]; double vl[2 * NCYC];
  odb_rng r; odb_rng_seed(&r, 3);
  int p = 0;
  for (int i = 0; i < NCYC; i++) {
    int c1 = i, c2 = (i + 1) % NCYC;
    if (c2 < c1) { int t = c1; c1 = c2; c2 = t; }
    rp[i] = p;
    cl[p] = c1; vl[p++] = c1 == i ? 0.05 * (odb_rng_uniform(&r) - 0.5) : 1.0;
    cl[p] = c2; vl[p++] = c2 == i ? 0.05 * (odb_rng_uniform(&r) - 0.5) : 1.0;
  }
  rp[NCYC] = p;
  odb_sparse_csr_from(NCYC, rp, cl, vl, A);
  for (int i = 0; i < NCYC; i++) b[i] = odb_rng_uniform(&r) - 0.5;
}

/* The stagnation rule replayed on a history, written out here apart from
** the solver: the best residual moves only on a 1% fall; returns the
** index of the entry after which `window` entries passed without one,
** or -1. */
static long stag_replay(const double *h, long nh, int window)
{
  double best = h[0];
  int since = 0;
  for (long i = 1; i < nh; i++) {
    if (h[i] < 0.99 * best) { best = h[i]; since = 0; }
    else if (++since >= window) return i;
  }
  return -1;
}

/* Both methods stagnate on the cyclic system (window 10): the outcome, no
** breakdown iteration, one history entry per iteration plus the first, the
** rule firing exactly at the last entry, the message in full. */
static void test_stagnation_and_maxit(void)
{
  odb_sparse *A;
  double b[NCYC];
  cyclic_system(&A, b);
  for (int m = 0; m < 2; m++) {
    odb_krylov_method meth = m ? ODB_KRYLOV_QMR : ODB_KRYLOV_BICGSTAB;
    const char *name = m ? "QMR" : "BiCGStab";
    double x[NCYC] = {0};
    odb_krylov_opts o = {1e-10, 300, 10};
    odb_krylov_result res;
    odb_status st = odb_krylov_solve(A, meth, b, x, &o, &res);
    char want[160];
    snprintf(want, sizeof want, "%s stagnated at iteration %d (relative residual %.3g, no 1%% progress in 10)",
             name, res.iters, res.relres);
    tap_ok(st == ODB_ERR_MAX_STEPS && res.outcome == ODB_KRY_STAGNATED && res.breakdown_iter == -1
           && res.nhist == res.iters + 1 && res.iters < 300 && res.relres == res.history[res.nhist - 1]
           && stag_replay(res.history, res.nhist, 10) == res.nhist - 1 && strcmp(odb_last_error(), want) == 0,
           "%s stagnation reported at the iteration the rule fires: %s", name, odb_last_error());
    odb_krylov_result_free(&res);
  }
  odb_sparse_free(A);
  odb_reservoir *g; odb_sparse *B;
  odb_reservoir_create(&g, 4, 4, 4, 2, 1, ODB_GH_BLOCK, 2);
  odb_reservoir_matrix(g, ODB_FMT_CSR, 0, &B);
  double *bb = malloc(g->n * sizeof *bb), *xs = malloc(g->n * sizeof *xs), *xx = calloc(g->n, sizeof *xx);
  odb_reservoir_rhs(g, B, xs, bb);
  odb_krylov_opts o2 = {1e-12, 2, 100};
  odb_krylov_result res;
  odb_status st = odb_krylov_solve(B, ODB_KRYLOV_BICGSTAB, bb, xx, &o2, &res);
  tap_ok(st == ODB_ERR_MAX_STEPS && res.outcome == ODB_KRY_MAXIT && res.iters == 2 && res.relres_true > 1e-12
         && res.breakdown_iter == -1 && res.nhist == 3,
         "maxit reported: %s", odb_last_error());
  odb_krylov_result_free(&res);
  free(bb); free(xs); free(xx); odb_sparse_free(B); odb_reservoir_free(g);
}

/* A = [1 1; 0 1], b = e2: e2 is an eigenvector of A^T but not of A, so
** QMR's first step leaves wt = A^T q - beta w = 0 while vt = (1, 0): x =
** (0, 1/2), r = (-1/2, 1/2), relative residual sqrt(1/2); the second
** iteration stops on xi = 0 (breakdown_rho). */
static void test_qmr_rho_breakdown(void)
{
  int64_t rp[] = {0, 2, 3};
  int32_t cl[] = {0, 1, 1};
  double vl[] = {1.0, 1.0, 1.0};
  odb_sparse *A;
  odb_sparse_csr_from(2, rp, cl, vl, &A);
  double b[2] = {0, 1}, x[2] = {0};
  odb_krylov_result res;
  odb_status st = odb_krylov_solve(A, ODB_KRYLOV_QMR, b, x, NULL, &res);
  tap_ok(st == ODB_ERR_MAX_STEPS && res.outcome == ODB_KRY_BREAKDOWN_RHO && res.breakdown_iter == 2
         && res.iters == 2 && res.nhist == 2 && res.history[0] == 1.0
         && fabs(res.history[1] - sqrt(0.5)) <= 1e-15 && x[0] == 0.0 && fabs(x[1] - 0.5) <= 1e-15
         && strcmp(odb_last_error(), "QMR breakdown (breakdown_rho) at iteration 2 (relative residual 0.707)") == 0,
         "QMR breakdown on xi = 0 at iteration 2: %s", odb_last_error());
  odb_krylov_result_free(&res);
  odb_sparse_free(A);
}

/* ||b - A x|| / ||b|| from the CSR arrays, apart from the library's SpMV. */
static double direct_relres(const odb_sparse *A, const double *b, const double *x)
{
  double rr = 0.0, bb = 0.0;
  for (long i = 0; i < A->n; i++) {
    double y = 0.0;
    for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) y += A->val[j] * x[A->col[j]];
    rr += (b[i] - y) * (b[i] - y);
    bb += b[i] * b[i];
  }
  return sqrt(rr) / sqrt(bb);
}

/* A fresh reservoir matrix (strictly diagonally dominant by construction:
** diagonal 1 + the row's absolute sum) of random shape, pattern and seed,
** b random: BiCGStab (CSR, Bdia) and QMR (CSR) converge to tol, checked
** by the residual computed here. */
static void test_krylov_random_dd(uint64_t xseed)
{
  odb_rng r; odb_rng_seed(&r, xseed);
  int J = 2 + (int)(5 * odb_rng_uniform(&r)), H = 2 + (int)(5 * odb_rng_uniform(&r));
  int I = 2 + (int)(5 * odb_rng_uniform(&r)), k = 1 + (int)(4 * odb_rng_uniform(&r));
  int nw = (int)(4 * odb_rng_uniform(&r));
  odb_gh_pattern pat = odb_rng_uniform(&r) < 0.5 ? ODB_GH_BLOCK : ODB_GH_HALF;
  odb_reservoir *g;
  odb_sparse *A, *Ab;
  if (odb_reservoir_create(&g, J, H, I, k, nw, pat, xseed) != ODB_OK
      || odb_reservoir_matrix(g, ODB_FMT_CSR, 0, &A) != ODB_OK
      || odb_reservoir_matrix(g, ODB_FMT_BDIA, 0, &Ab) != ODB_OK) {
    tap_ok(0, "random reservoir %dx%dx%d k %d: %s", J, H, I, k, odb_last_error());
    return;
  }
  long n = g->n;
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
  for (long i = 0; i < n; i++) b[i] = 2.0 * odb_rng_uniform(&r) - 1.0;
  for (int c = 0; c < 3; c++) {
    odb_krylov_method meth = c == 2 ? ODB_KRYLOV_QMR : ODB_KRYLOV_BICGSTAB;
    const odb_sparse *M = c == 1 ? Ab : A;
    odb_krylov_opts o = {1e-10, 1000, 100};
    odb_krylov_result res;
    memset(x, 0, n * sizeof *x);
    odb_status st = odb_krylov_solve(M, meth, b, x, &o, &res);
    double dr = direct_relres(A, b, x);
    tap_ok(st == ODB_OK && res.outcome == ODB_KRY_CONVERGED && res.breakdown_iter == -1
           && res.nhist == res.iters + 1 && res.relres == res.history[res.nhist - 1] && res.relres <= o.tol
           && dr <= 2 * o.tol && fabs(dr - res.relres_true) <= 1e-3 * dr,
           "%s on a random %s reservoir %dx%dx%d k %d, %d wells (%s): %d iterations, ||b - Ax||/||b|| %.2g",
           meth == ODB_KRYLOV_QMR ? "QMR" : "BiCGStab", odb_sparse_format_name(M->fmt), J, H, I, k, nw,
           pat == ODB_GH_HALF ? "GH-h" : "GH-b", res.iters, dr);
    odb_krylov_result_free(&res);
  }
  free(b); free(x);
  odb_sparse_free(A); odb_sparse_free(Ab); odb_reservoir_free(g);
}

/* The decisions of the shared state machine (odb_krylov_state.h) in their
** order: convergence at tol, a non-finite residual as a breakdown at its
** iteration, stagnation before maxit when both hold, maxit. */
static void test_state_judge(void)
{
  odb_krylov_opts o = {1e-3, 4, 2};
  double h[8];
  kstate s = ks_new(1.0, &o);
  int stop0 = ks_first(&s, h, 1.0);
  s.it = 1; int stop1 = ks_judge(&s, 0.995);      /* no 1% fall: since 1 */
  s.it = 2; int stop2 = ks_judge(&s, 0.5);        /* new best */
  s.it = 3; int stop3 = ks_judge(&s, 0.499);      /* since 1 */
  s.it = 4; int stop4 = ks_judge(&s, 0.498);      /* since 2 = window, and it = maxit */
  tap_ok(!stop0 && !stop1 && !stop2 && !stop3 && stop4 && s.outcome == ODB_KRY_STAGNATED && s.bditer == -1
         && s.nhist == 1 && h[0] == 1.0 && s.best == 0.5,
         "state: stagnation is judged before maxit");
  s = ks_new(1.0, &o);
  ks_first(&s, h, 1.0);
  for (s.it = 1; s.it <= 4 && !ks_judge(&s, 0.5 / s.it);) s.it++;
  tap_ok(s.outcome == ODB_KRY_MAXIT && s.it == 4, "state: maxit after the 4th residual");
  s = ks_new(1.0, &o);
  ks_first(&s, h, 1.0);
  s.it = 2;
  tap_ok(ks_judge(&s, NAN) && s.outcome == ODB_KRY_BREAKDOWN_OTHER && s.bditer == 2,
         "state: a NaN residual is a breakdown at its iteration");
  s = ks_new(1.0, &o);
  tap_ok(ks_first(&s, h, 1e-3) && s.outcome == ODB_KRY_CONVERGED && s.nhist == 1,
         "state: a first residual at tol converges with no iteration");
  s = ks_new(4.0, &o);
  ks_first(&s, h, 4.0);
  s.it = 1;
  tap_ok(ks_judge(&s, 1e-3) && s.outcome == ODB_KRY_CONVERGED, "state: relative residual equal to tol converges");
}

static void test_bad_input(void)
{
  odb_reservoir *g; odb_sparse *A;
  tap_ok(odb_reservoir_create(&g, 0, 3, 3, 2, 0, ODB_GH_BLOCK, 1) == ODB_ERR_ARG, "J = 0 refused: %s", odb_last_error());
  tap_ok(odb_reservoir_create(&g, 3, 3, 3, 17, 0, ODB_GH_BLOCK, 1) == ODB_ERR_ARG, "k = 17 refused: %s", odb_last_error());
  tap_ok(odb_reservoir_create(&g, 3, 2, 2, 2, 5, ODB_GH_BLOCK, 1) == ODB_ERR_ARG, "5 wells on 2x2 refused: %s", odb_last_error());
  tap_ok(odb_reservoir_create(&g, 1 << 30, 1 << 30, 1 << 30, 1, 0, ODB_GH_BLOCK, 1) == ODB_ERR_ARG
         && g == NULL && strstr(odb_last_error(), "1073741824 x 1073741824 x 1073741824 cells"),
         "2^90 cells refused (the product does not wrap): %s", odb_last_error());
  tap_ok(odb_reservoir_create(&g, 1 << 16, 1 << 15, 1, 1, 1, ODB_GH_BLOCK, 1) == ODB_ERR_ARG
         && strstr(odb_last_error(), "order 2.147e+09"),
         "order 2^31 + 1 refused: %s", odb_last_error());
  tap_ok(odb_reservoir_create(&g, 1 << 16, 1 << 15, 1, 1, 0, ODB_GH_BLOCK, 1) == ODB_ERR_ARG,
         "order 2^31 refused");
  odb_reservoir_create(&g, 3, 3, 3, 2, 1, ODB_GH_BLOCK, 1);
  tap_ok(odb_reservoir_matrix(g, ODB_FMT_DIA, 1000, &A) == ODB_ERR_NOMEM && strstr(odb_last_error(), "bytes"),
         "DIA over a memory limit refused with its size: %s", odb_last_error());
  odb_sparse_format f;
  tap_ok(odb_sparse_format_parse("bdia", &f) == ODB_OK && f == ODB_FMT_BDIA
         && odb_sparse_format_parse("coo", &f) == ODB_ERR_NAME, "format names parse");
  odb_reservoir_free(g);
}

/* Whether two matrices of one format hold the same arrays bit for bit. */
static int same_arrays(const odb_sparse *a, const odb_sparse *b)
{
#define SAME(f, cnt) ((cnt) == 0 || !memcmp(a->f, b->f, (size_t)(cnt) * sizeof *a->f))
  long n = a->n;
  if (a->fmt != b->fmt || a->n != b->n || a->nnz != b->nnz) return 0;
  switch (a->fmt) {
  case ODB_FMT_CSR: return SAME(rowptr, n + 1) && SAME(col, a->nnz) && SAME(val, a->nnz);
  case ODB_FMT_BSR:
    return a->nblocks == b->nblocks && SAME(browptr, a->nbr + 1) && SAME(bcol, a->nblocks)
           && SAME(bval, a->nblocks * a->bs * a->bs);
  case ODB_FMT_ELL: case ODB_FMT_HYB:
    return a->width == b->width && a->ncoo == b->ncoo && SAME(ecol, n * a->width)
           && SAME(eval, n * a->width) && SAME(crow, a->ncoo) && SAME(ccol, a->ncoo) && SAME(cval, a->ncoo);
  case ODB_FMT_DIA: return a->ndiag == b->ndiag && SAME(doff, a->ndiag) && SAME(dval, n * a->ndiag);
  case ODB_FMT_BDIA: {
    const odb_bdia *x = a->bd, *y = b->bd;
    long nv = 7L * x->k * x->k * x->M, nw = (long)x->nw * x->J;
    return !memcmp(x->val, y->val, nv * sizeof *x->val) && !memcmp(x->Wa, y->Wa, nw * sizeof *x->Wa)
           && !memcmp(x->WTa, y->WTa, nw * sizeof *x->WTa) && !memcmp(x->D, y->D, x->nw * sizeof *x->D);
  }
  default: return 0;
  }
#undef SAME
}

/* The threaded assembly and conversions (ODEBENCH_SPARSE_THREADS=5, grids large
** enough for 5 parts) give the same arrays as one thread, every format,
** both patterns, with wells and an odd k. */
static void test_parallel_assembly(void)
{
  int fails = 0, cases = 0;
  for (int pat = 0; pat < 2; pat++) {
    odb_reservoir *g;
    if (odb_reservoir_create(&g, 24, 20, 18, 3, 5, (odb_gh_pattern)pat, 7) != ODB_OK) { fails++; continue; }
    for (int f = 0; f < ODB_FMT_COUNT; f++) {
      odb_sparse *A[2] = {NULL, NULL};
      for (int t = 0; t < 2; t++) {
        setenv("ODEBENCH_SPARSE_THREADS", t ? "5" : "1", 1);
        if (odb_reservoir_matrix(g, (odb_sparse_format)f, 0, &A[t]) != ODB_OK) fails++;
      }
      cases++;
      if (A[0] && A[1] && !same_arrays(A[0], A[1])) {
        fails++;
        tap_diag("%s GH-%s: 5 threads differ from 1", odb_sparse_format_name((odb_sparse_format)f),
                 pat ? "h" : "b");
      }
      odb_sparse_free(A[0]); odb_sparse_free(A[1]);
    }
    odb_reservoir_free(g);
  }
  unsetenv("ODEBENCH_SPARSE_THREADS");
  tap_ok(fails == 0, "assembly and conversions on 5 threads equal 1 thread bit for bit (%d cases, %d failed)",
         cases, fails);
}

/* A^T from odb_sparse_transpose on 3 threads: equal to 1 thread bit for
** bit, sorted rows, and (A^T) x equals the CSR's own A^T x. */
/*
** A Bdia of a range of cells (odb_reservoir_bdia_cells, a rank's slab)
** holds the whole Bdia's values of those cells bit for bit, every well's
** layout, W and D, and W^T of the wells whose cells lie in the range;
** an empty range and the whole range; a range past the grid refused.
*/
static void test_bdia_cells(void)
{
  odb_reservoir *g;
  odb_sparse *W = NULL;
  int bad = 0, cases = 0;
  if (odb_reservoir_create(&g, 5, 3, 6, 3, 4, ODB_GH_HALF, 5) != ODB_OK || odb_reservoir_bdia(g, &W) != ODB_OK) {
    tap_ok(0, "Bdia of a range of cells: the grid");
    return;
  }
  const odb_bdia *w = W->bd;
  long JH = (long)g->J * g->H, ranges[][2] = {{0, 0}, {0, g->M}, {JH, 3 * JH}, {2 * JH, 2 * JH + 1}, {4 * JH, g->M}};
  int k = g->k;
  for (size_t t = 0; t < sizeof ranges / sizeof ranges[0]; t++) {
    long m0 = ranges[t][0], m1 = ranges[t][1];
    odb_sparse *P = NULL;
    cases++;
    if (odb_reservoir_bdia_cells(g, m0, m1, &P) != ODB_OK) { bad++; continue; }
    const odb_bdia *p = P->bd;
    if (p->M != m1 - m0 || p->nw != w->nw) bad++;
    for (long q = 0; q < 7L * k * k; q++)
      for (long m = m0; m < m1; m++)
        if (memcmp(&p->val[q * p->ldv + (m - m0)], &w->val[q * w->ldv + m], sizeof(double))) { bad++; q = 7L * k * k; break; }
    for (int v = 0; v < w->nw; v++) {
      int inside = w->b[v] >= m0 && w->b[v] + w->c[v] <= m1;
      if (p->a[v] != w->a[v] || p->b[v] != w->b[v] || p->c[v] != w->c[v] || p->D[v] != w->D[v]) bad++;
      for (int i = 0; i < w->c[v]; i++) {
        if (p->Wa[w->a[v] + i] != w->Wa[w->a[v] + i]) bad++;
        if (inside && p->WTa[w->a[v] + i] != w->WTa[w->a[v] + i]) bad++;
      }
    }
    odb_sparse_free(P);
  }
  odb_sparse *P = NULL;
  int refused = odb_reservoir_bdia_cells(g, 2, g->M + 1, &P) == ODB_ERR_ARG && !P;
  tap_ok(bad == 0 && refused, "Bdia of a range of cells equals the whole Bdia's there, bit for bit (%d ranges, "
         "%d differences); a range past the grid refused", cases, bad);
  odb_sparse_free(W);
  odb_reservoir_free(g);
}

static void test_transpose(uint64_t xseed)
{
  odb_reservoir *g;
  odb_sparse *A = NULL, *T[2] = {NULL, NULL};
  int ok = odb_reservoir_create(&g, 32, 32, 24, 2, 4, ODB_GH_HALF, 9) == ODB_OK
           && odb_reservoir_csr(g, &A) == ODB_OK;
  for (int t = 0; ok && t < 2; t++) {
    setenv("ODEBENCH_SPARSE_THREADS", t ? "3" : "1", 1);
    ok = odb_sparse_transpose(A, &T[t]) == ODB_OK;
  }
  unsetenv("ODEBENCH_SPARSE_THREADS");
  long n = ok ? A->n : 0, unsorted = 0;
  for (long r = 0; r < n; r++)
    for (int64_t e = T[1]->rowptr[r] + 1; e < T[1]->rowptr[r + 1]; e++) unsorted += T[1]->col[e] <= T[1]->col[e - 1];
  double *x = malloc((n ? n : 1) * sizeof *x), *y1 = malloc((n ? n : 1) * sizeof *y1), *y2 = malloc((n ? n : 1) * sizeof *y2);
  odb_rng r;
  odb_rng_seed(&r, xseed);
  for (long i = 0; i < n; i++) x[i] = 2.0 * odb_rng_uniform(&r) - 1.0;
  if (ok) { odb_sparse_spmv(T[1], x, y1); odb_sparse_spmv_t(A, x, y2); }
  tap_ok(ok && same_arrays(T[0], T[1]) && unsorted == 0 && T[1]->nnz == A->nnz && rel_diff(n, y1, y2) <= 1e-14,
         "transpose on 3 threads equals 1 thread, rows sorted (%ld unsorted), A^T x agrees", unsorted);
  free(x); free(y1); free(y2);
  odb_sparse_free(T[0]); odb_sparse_free(T[1]); odb_sparse_free(A); odb_reservoir_free(g);
}

int main(void)
{
  const char *env = getenv("ODB_TEST_SEED");
  uint64_t xseed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  tap_diag("random x seed %llu (set ODB_TEST_SEED to repeat)", (unsigned long long)xseed);
  test_generator(3, 2, 3, 2, 2, ODB_GH_BLOCK);
  test_generator(3, 2, 3, 2, 2, ODB_GH_HALF);
  test_generator(2, 3, 3, 3, 3, ODB_GH_HALF);
  test_generator(1, 3, 1, 3, 1, ODB_GH_HALF);
  test_wells_placed();
  test_spmv_all(xseed);
  test_spmv_team(xseed);
  test_bdia_tiles(xseed);
  test_spmv_detects_damage();
  test_parallel_assembly();
  test_transpose(xseed);
  test_bdia_cells();
  test_footprints();
  for (int pat = 0; pat < 2; pat++) {
    test_krylov(ODB_KRYLOV_BICGSTAB, ODB_FMT_CSR, (odb_gh_pattern)pat);
    test_krylov(ODB_KRYLOV_QMR, ODB_FMT_CSR, (odb_gh_pattern)pat);
  }
  test_krylov(ODB_KRYLOV_BICGSTAB, ODB_FMT_BDIA, ODB_GH_HALF);
  test_breakdown();
  test_omega_breakdown();
  test_stagnation_and_maxit();
  test_qmr_rho_breakdown();
  test_state_judge();
  for (int rep = 0; rep < 3; rep++) test_krylov_random_dd(xseed + (uint64_t)rep);
  test_bad_input();
  return tap_done();
}
