/* cusp.c - CUSP: cusp catastrophe with van der Pol and diffusion (thesis App. A.4). */
#include "odb_status.h"
#include "odb_param.h"
#include "odb_problem.h"

#include <math.h>
#include <stdio.h>

/*
** Zeeman's nerve-impulse model -eps y' = y^3 + a y + b combined with a van
** der Pol oscillator and diffusion (HNW II, IV.10, problem CUSP):
**   y_t = -(1/eps)(y^3 + a y + b) + sigma y_xx
**   a_t = b + 0.07 v + sigma a_xx
**   b_t = (1 - a^2) b - a - 0.4 y + 0.035 v + sigma b_xx
**   v = u / (u + 0.1),  u = (y - 0.7)(y - 1.3),
** on a ring of N points, sigma = 1/144, D = sigma N^2, periodic:
**   y'_i = -(1/eps)(y_i^3 + a_i y_i + b_i) + D (y_{i-1} - 2 y_i + y_{i+1})
**   a'_i = b_i + 0.07 v_i + D (a_{i-1} - 2 a_i + a_{i+1})
**   b'_i = (1 - a_i^2) b_i - a_i - 0.4 y_i + 0.035 v_i
**          + D (b_{i-1} - 2 b_i + b_{i+1}),
** with y_0 = y_N, y_{N+1} = y_1 and the same for a, b.
**
** Resolved from the literature:
** - Sign: the thesis's (A.4) prints +(1/eps)(...) in y'_i; its own (A.3),
**   HNW II and the HNW test drivers have the minus sign. We use minus (with
**   plus the fast subsystem is unstable and blows up).
** - Initial values: y_i(0) = 0, a_i(0) = -2 cos(2 pi i / N),
**   b_i(0) = +2 sin(2 pi i / N) as in HNW ("hnw", the default; it is the
**   van der Pol phase a = -2 cos s, b = da/ds). The thesis prints
**   b_i(0) = -2 sin(...) ("thesis").
** - Interval [0, 1.1] and N = 32 (n = 96) as in HNW; the thesis states
**   neither (its runs use n = 6000 and 60000: N = 2000, 20000).
** - eps = 1e-4 (stiff), a parameter for stiffness studies.
** Ordering (not stated in the thesis): interleaved y[3(i-1)] = y_i,
** y[3(i-1)+1] = a_i, y[3(i-1)+2] = b_i, as in HNW's code. Every component
** reads its point and the two neighbouring points, but the periodic wrap
** makes component 0 read component n-1: the access distance is unlimited,
** d = n, so only the general variants apply.
*/
enum { P_N, P_EPS, P_INIT };

static const odb_param_decl cusp_params[] = {
  { "N", ODB_PARAM_INT, 32, 3, 1e8, NULL, "points on the ring (n = 3N)" },
  { "eps", ODB_PARAM_REAL, 1e-4, 1e-12, 1e6, NULL,
    "time scale of the cusp part (small: stiff)" },
  { "init", ODB_PARAM_ENUM, 0, 0, 1, "hnw|thesis",
    "initial b: hnw +2 sin(2 pi i/N), thesis -2 sin(2 pi i/N)" },
};

/*
** The three derivatives of the point whose y sits at w[q] (a, b follow);
** qm, qp are the offsets of its left and right neighbours (wrapped).
*/
static inline void cusp_point(const double *w, long q, long qm, long qp,
                              double ieps, double D, double out[3]) {
  double y = w[q], a = w[q + 1], b = w[q + 2];
  double u = (y - 0.7) * (y - 1.3), v = u / (u + 0.1);
  out[0] = -ieps * (y * y * y + a * y + b)
           + D * (w[q + qm] - 2.0 * y + w[q + qp]);
  out[1] = b + 0.07 * v + D * (w[q + qm + 1] - 2.0 * a + w[q + qp + 1]);
  out[2] = (1.0 - a * a) * b - a - 0.4 * y + 0.035 * v
           + D * (w[q + qm + 2] - 2.0 * b + w[q + qp + 2]);
}

/*
** f_j for j in [j0, j1): point by point, storing only components inside
** the range. Since d = n the window is always the whole vector (yoff = 0),
** but the code only relies on w[k] = y[k - yoff] being component k.
*/
static void cusp_rhs(const odb_problem *p, double t, const double *y,
                     long yoff, double *f, long j0, long j1) {
  long N = (long)p->param[P_N], n = p->n;
  double ieps = 1.0 / p->param[P_EPS], D = (double)N * (double)N / 144.0;
  const double *w = y - yoff;
  (void)t;
  if (j0 >= j1) return;
  for (long pt = j0 / 3; pt <= (j1 - 1) / 3; ++pt) {
    long q = 3 * pt, qm = pt > 0 ? -3 : n - 3, qp = pt < N - 1 ? 3 : 3 - n;
    double out[3];
    cusp_point(w, q, qm, qp, ieps, D, out);
    if (q >= j0 && q + 3 <= j1) {
      f[q - j0] = out[0];
      f[q + 1 - j0] = out[1];
      f[q + 2 - j0] = out[2];
    } else {
      for (int c = 0; c < 3; ++c)
        if (q + c >= j0 && q + c < j1) f[q + c - j0] = out[c];
    }
  }
}

/* y_i = 0, a_i = -2 cos(2 pi i / N), b_i = +-2 sin(2 pi i / N), i = 1..N. */
static void cusp_initial(const odb_problem *p, double *y0) {
  long N = (long)p->param[P_N];
  double sb = p->param[P_INIT] == 1 ? -2.0 : 2.0;
  for (long i = 1; i <= N; ++i) {
    double s = 2.0 * M_PI * (double)i / (double)N;
    y0[3 * (i - 1)] = 0.0;
    y0[3 * (i - 1) + 1] = -2.0 * cos(s);
    y0[3 * (i - 1) + 2] = sb * sin(s);
  }
}

static odb_status cusp_setup(odb_problem *p) {
  long N = (long)p->param[P_N];
  p->n = 3 * N;
  p->d = p->n;   /* periodic wrap: unlimited */
  p->t0 = 0.0;
  p->t1 = 1.1;
  p->flops_per_comp = 12.0;
  p->rhs = cusp_rhs;
  p->initial = cusp_initial;
  p->gpu_source = NULL;
  snprintf(p->label, sizeof p->label, "cusp(N=%ld)", N);
  return ODB_OK;
}

const odb_problem_type odb_problem_cusp = {
  .name = "cusp",
  .doc = "cusp catastrophe + van der Pol + diffusion on a ring, interleaved "
         "y/a/b, n = 3N, d = n (periodic)",
  .params = cusp_params,
  .nparams = (int)(sizeof cusp_params / sizeof cusp_params[0]),
  .setup = cusp_setup,
};
