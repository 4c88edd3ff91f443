/* test_bruss2d.c - BRUSS2D against a direct 2-D stencil formulation. */
#include "odebench.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
** Reference: U and V as N x X grids (N rows of X points) with a ring of
** mirrored ghost points, the 5-point Laplacian on the grid, then
** interleaved into f.
*/
static void direct(long N, long X, double alpha, const double *y, double *f) {
  long G = X + 2;
  double *U = malloc(sizeof(double) * (N + 2) * G);
  double *V = malloc(sizeof(double) * (N + 2) * G);
  double c = alpha * (N - 1) * (N - 1);
#define AT(A, i, j) A[((i) + 1) * G + (j) + 1]
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < X; ++j) {
      AT(U, i, j) = y[2 * (i * X + j)];
      AT(V, i, j) = y[2 * (i * X + j) + 1];
    }
  for (long k = 0; k < X; ++k) {     /* du/dn = 0: mirror across the edge */
    AT(U, -1, k) = AT(U, 1, k);  AT(U, N, k) = AT(U, N - 2, k);
    AT(V, -1, k) = AT(V, 1, k);  AT(V, N, k) = AT(V, N - 2, k);
  }
  for (long k = 0; k < N; ++k) {
    AT(U, k, -1) = AT(U, k, 1);  AT(U, k, X) = AT(U, k, X - 2);
    AT(V, k, -1) = AT(V, k, 1);  AT(V, k, X) = AT(V, k, X - 2);
  }
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < X; ++j) {
      double u = AT(U, i, j), v = AT(V, i, j);
      double lu = AT(U, i + 1, j) + AT(U, i - 1, j) + AT(U, i, j + 1) +
                  AT(U, i, j - 1) - 4 * u;
      double lv = AT(V, i + 1, j) + AT(V, i - 1, j) + AT(V, i, j + 1) +
                  AT(V, i, j - 1) - 4 * v;
      f[2 * (i * X + j)] = 1 + u * u * v - 4.4 * u + c * lu;
      f[2 * (i * X + j) + 1] = 3.4 * u - u * u * v + c * lv;
    }
#undef AT
  free(U);
  free(V);
}

/* Largest |a - b| / max(1, |b|). */
static double maxrel(const double *a, const double *b, long n) {
  double m = 0;
  for (long i = 0; i < n; ++i) {
    double r = fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i]));
    if (r > m) m = r;
  }
  return m;
}

/* f over [j0, j1) from a window copy holding only [j0 - d, j1 + d). */
static double window_check(const odb_problem *p, const double *y,
                           const double *ref, long j0, long j1) {
  long lo = j0 - p->d > 0 ? j0 - p->d : 0;
  long hi = j1 + p->d < p->n ? j1 + p->d : p->n;
  double *w = malloc(sizeof(double) * (hi - lo));
  double *f = malloc(sizeof(double) * (j1 - j0 + 1));
  double err;
  memcpy(w, y + lo, sizeof(double) * (hi - lo));
  p->rhs(p, 0.0, w, lo, f, j0, j1);
  err = maxrel(f, ref + j0, j1 - j0);
  free(w);
  free(f);
  return err;
}

/* N rows of X points (X = 0: the square grid, X = N). */
static void check_size(long N, long X, odb_rng *rng) {
  odb_param_value pv[2] = { { "N", (double)N, NULL }, { "Nx", (double)X, NULL } };
  odb_problem *p;
  double *y, *f, *ref, worst = 0;
  if (!tap_ok(odb_problem_create("bruss2d", pv, 2, &p) == ODB_OK,
              "create N=%ld Nx=%ld", N, X)) return;
  if (X == 0) X = N;
  tap_ok(p->n == 2 * N * X && p->d == 2 * X, "n = 2 N Nx = %ld, d = 2 Nx = "
         "%ld", p->n, p->d);
  y = malloc(sizeof(double) * p->n);
  f = malloc(sizeof(double) * p->n);
  ref = malloc(sizeof(double) * p->n);
  for (long i = 0; i < p->n; ++i) y[i] = 0.5 + 2.5 * odb_rng_uniform(rng);
  direct(N, X, 2e-3, y, ref);
  odb_problem_rhs_full(p, 0.0, y, f);
  tap_ok(maxrel(f, ref, p->n) <= 1e-14, "full range matches the 2-D stencil "
         "(N=%ld, err %.2e)", N, maxrel(f, ref, p->n));
  for (int k = 0; k < 200; ++k) {
    long j0 = (long)(odb_rng_uniform(rng) * p->n), j1;
    j1 = j0 + 1 + (long)(odb_rng_uniform(rng) * (p->n - j0));
    if (j1 > p->n) j1 = p->n;
    worst = fmax(worst, window_check(p, y, ref, j0, j1));
  }
  tap_ok(worst <= 1e-14, "200 random ranges from windows of +-d match "
         "(N=%ld, err %.2e)", N, worst);
  free(y);
  free(f);
  free(ref);
  odb_problem_destroy(p);
}

/* Perturbing component k changes f_j only for |j - k| <= d. */
static void check_access_distance(void) {
  odb_param_value pv = { "N", 9, NULL };
  odb_problem *p;
  double *y, *f0, *f1;
  int ok = 1, reach = 0;
  odb_problem_create("bruss2d", &pv, 1, &p);
  y = malloc(sizeof(double) * p->n);
  f0 = malloc(sizeof(double) * p->n);
  f1 = malloc(sizeof(double) * p->n);
  p->initial(p, y);
  odb_problem_rhs_full(p, 0, y, f0);
  for (long k = 0; k < p->n; k += 7) {
    y[k] += 0.125;
    odb_problem_rhs_full(p, 0, y, f1);
    for (long j = 0; j < p->n; ++j)
      if (f1[j] != f0[j]) {
        if (labs(j - k) > p->d) ok = 0;
        if (labs(j - k) == p->d) reach = 1;
      }
    y[k] -= 0.125;
  }
  tap_ok(ok, "no component depends on one farther than d = %ld", p->d);
  tap_ok(reach, "some component depends on one exactly d away");
  free(y); free(f0); free(f1);
  odb_problem_destroy(p);
}

static void check_initial(void) {
  odb_param_value pv[2] = { { "N", 5, NULL }, { "init", 0, "hnw" } };
  odb_problem *p, *q;
  double y[50], z[50];
  odb_problem_create("bruss2d", pv, 1, &p);
  odb_problem_create("bruss2d", pv, 2, &q);
  p->initial(p, y);
  q->initial(q, z);
  /* grid point (i=4, j=2): x = 1, y = 0.5 */
  tap_ok(y[2 * (4 * 5 + 2)] == 1.0 && y[2 * (4 * 5 + 2) + 1] == 1.5,
         "thesis initial values u = 0.5 + y, v = 0.5 + x");
  tap_ok(z[2 * (4 * 5 + 2) + 1] == 6.0, "HNW initial value v = 1 + 5x");
  odb_problem_destroy(p);
  odb_problem_destroy(q);
}

int main(void) {
  odb_rng rng;
  odb_problem *p;
  odb_param_value bad = { "N", 0, NULL };
  odb_rng_seed(&rng, (uint64_t)time(NULL));
  check_size(2, 0, &rng);
  check_size(7, 0, &rng);
  check_size(32, 0, &rng);
  check_size(5, 13, &rng);    /* rectangles: d = 2 Nx, not 2 N */
  check_size(19, 3, &rng);
  check_size(2, 40, &rng);
  check_access_distance();
  check_initial();
  tap_ok(odb_problem_create("bruss2d", &bad, 1, &p) == ODB_ERR_ARG,
         "N = 0 refused: %s", odb_last_error());
  bad.name = "Nx";
  bad.num = 1;
  tap_ok(odb_problem_create("bruss2d", &bad, 1, &p) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "Nx"), "Nx = 1 refused: %s",
         odb_last_error());
  tap_ok(odb_problem_create("brus", NULL, 0, &p) == ODB_ERR_NAME &&
         strstr(odb_last_error(), "valid: bruss2d"),
         "unknown problem lists valid names: %s", odb_last_error());
  return tap_done();
}
