/* string.c - STRING: the vibrating string, a 1-D wave equation (thesis App. A.2). */
#include "odb_status.h"
#include "odb_param.h"
#include "odb_problem.h"

#include <math.h>
#include <stdio.h>

/*
** u_tt = c^2 u_xx on [0, L], fixed ends u(0,t) = u(L,t) = 0.
**
** The thesis prints the semi-discrete system garbled as
** "U'_i = K^2 + (U_{i-1} - 2U_i + U_{i+1})", n = 2N, access distance 3, and
** gives no constants, initial data or interval. We use the standard
** method-of-lines form (Lagrange's discrete string, HNW I, I.6):
**   U''_i = K^2 (U_{i-1} - 2U_i + U_{i+1}),  i = 1..N,  U_0 = U_{N+1} = 0,
** with N interior points x_i = i L / (N+1) and K = c (N+1) / L (wave speed
** over grid spacing), written as a first-order system with V_i = U'_i.
** Ordering: (U_1, V_1, U_2, V_2, ...), y[2i] = U_{i+1}, y[2i+1] = V_{i+1},
** so n = 2N and
**   f(U_i) = V_i                 reads the next component (distance 1),
**   f(V_i) = K^2 (U_{i-1} - 2U_i + U_{i+1})  reads distances 3, 1, 1,
** which gives exactly the thesis's access distance d = 3.
**
** Our choices where the thesis is silent (all documented in the params):
**   c = 1, L = 1 by default; initial data "sine": U_i = sin(pi x_i / L),
**   V_i = 0 (the fundamental mode; the semi-discrete solution is known in
**   closed form: U_i(t) = sin(pi x_i / L) cos(w t), w = 2K sin(pi/(2(N+1))));
**   "pluck": a string plucked at its middle, U_i = 1 - |2 x_i / L - 1|,
**   V_i = 0 (d'Alembert's classic example; mirror-symmetric about L/2).
**   Interval [0, L/c], half a period of the continuous fundamental mode,
**   after which the continuous solution is u(x, L/c) = -f(L - x).
** The system conserves the discrete energy
**   E = 1/2 sum V_i^2 + K^2/2 sum_{i=0..N} (U_{i+1} - U_i)^2.
** Default N = 3000 gives n = 6000, the thesis's Ch. 7 size.
*/
enum { P_N, P_C, P_L, P_INIT };

static const odb_param_decl string_params[] = {
  { "N", ODB_PARAM_INT, 3000, 2, 1e8, NULL, "interior grid points" },
  { "c", ODB_PARAM_REAL, 1.0, 1e-6, 1e6, NULL, "wave speed sqrt(T/mu)" },
  { "L", ODB_PARAM_REAL, 1.0, 1e-6, 1e6, NULL, "length of the string" },
  { "init", ODB_PARAM_ENUM, 0, 0, 1, "sine|pluck",
    "initial shape: sine = fundamental mode, pluck = plucked at L/2" },
};

/* K^2 = (c (N+1) / L)^2, the stiffness of the discrete string. */
static double string_k2(const odb_problem *p) {
  double K = p->param[P_C] * (p->param[P_N] + 1.0) / p->param[P_L];
  return K * K;
}

/*
** f_q for one component q (any parity) near the ends, reading the window y
** (component k at y[k - yoff]); U_0 and U_{N+1} are 0.
*/
static double string_edge(const double *y, long yoff, long n, long q,
                          double k2) {
  double um, up;
  if ((q & 1) == 0) return y[q + 1 - yoff];
  um = q >= 3 ? y[q - 3 - yoff] : 0.0;
  up = q + 1 < n ? y[q + 1 - yoff] : 0.0;
  return k2 * (um - 2.0 * y[q - 1 - yoff] + up);
}

/*
** f_j for j in [j0, j1): the first and last grid points (which see the
** fixed ends) one component at a time, the interior in a tight loop.
*/
static void string_rhs(const odb_problem *p, double t, const double *y,
                       long yoff, double *f, long j0, long j1) {
  long n = p->n, lo = j0 > 2 ? j0 : 2, hi = j1 < n - 2 ? j1 : n - 2;
  double k2 = string_k2(p);
  const double *w = y - yoff;   /* w[k] is component k */
  (void)t;
  for (long q = j0; q < j1 && q < lo; ++q)
    f[q - j0] = string_edge(y, yoff, n, q, k2);
  for (long q = lo; q < hi; ++q)
    f[q - j0] = (q & 1) ? k2 * (w[q - 3] - 2.0 * w[q - 1] + w[q + 1])
                        : w[q + 1];
  for (long q = hi > lo ? hi : lo; q < j1; ++q)
    f[q - j0] = string_edge(y, yoff, n, q, k2);
}

/* U_i = sin(pi x_i / L) ("sine") or 1 - |2 x_i / L - 1| ("pluck"), V_i = 0. */
static void string_initial(const odb_problem *p, double *y0) {
  long N = (long)p->param[P_N];
  int pluck = p->param[P_INIT] == 1;
  for (long i = 1; i <= N; ++i) {
    double s = (double)i / (double)(N + 1);   /* x_i / L */
    y0[2 * (i - 1)] = pluck ? 1.0 - fabs(2.0 * s - 1.0) : sin(M_PI * s);
    y0[2 * (i - 1) + 1] = 0.0;
  }
}

static odb_status string_setup(odb_problem *p) {
  long N = (long)p->param[P_N];
  p->n = 2 * N;
  p->d = 3;
  p->t0 = 0.0;
  p->t1 = p->param[P_L] / p->param[P_C];
  p->flops_per_comp = 2.0;   /* f(V): 2 adds, 1 sub, 2 muls; f(U): a copy */
  p->rhs = string_rhs;
  p->initial = string_initial;
  p->gpu_source = NULL;
  snprintf(p->label, sizeof p->label, "string(N=%ld)", N);
  return ODB_OK;
}

const odb_problem_type odb_problem_string = {
  .name = "string",
  .doc = "vibrating string (1-D wave equation), interleaved U/U', n = 2N, "
         "d = 3",
  .params = string_params,
  .nparams = (int)(sizeof string_params / sizeof string_params[0]),
  .setup = string_setup,
};
