/* medakzo.c - MEDAKZO: the Medical Akzo Nobel problem (thesis App. A.3). */
#include "odb_status.h"
#include "odb_param.h"
#include "odb_problem.h"

#include <stdio.h>

/*
** Penetration of radio-labelled antibodies into tumour tissue:
**   u_t = u_xx - k u v,  v_t = -k u v  on 0 < x < inf,  u(x,0) = 0,
**   v(x,0) = v0,  u(0,t) = phi(t),
** after the change of variable to zeta in (0, 1] and the method of lines
** with N points zeta_j = j dz, dz = 1/N (Bari IVP test set, "medakzo",
** Mazzia & Magherini; the thesis's [MM08]). 1-based, j = 1..N:
**   f_{2j-1} = alpha_j (y_{2j+1} - y_{2j-3}) / (2 dz)
**            + beta_j (y_{2j-3} - 2 y_{2j-1} + y_{2j+1}) / dz^2
**            - k y_{2j-1} y_{2j}
**   f_{2j}   = -k y_{2j} y_{2j-1}
**   alpha_j = 2 (zeta_j - 1)^3 / c^2,  beta_j = (zeta_j - 1)^4 / c^2,
**   y_{-1}(t) = phi(t),  y_{2N+1} = y_{2N-1},
**   phi(t) = 2 for t <= 5, 0 for t > 5;  k = 100, c = 4, v0 = 1,
**   y(0) = (0, v0, 0, v0, ...), t in [0, 20].
** The thesis prints the first term as alpha_j (y_{2j+1} - y_{2j} - 3)/dz, a
** garbled index "2j-3" and a lost factor 2: we use the test set's centred
** difference (y_{2j+1} - y_{2j-3}) / (2 dz) above. The thesis writes phi = 2
** on (0, 5]; the test set (and we) also use phi(0) = 2 ("t <= 5"), which
** only matters for an evaluation at exactly t = 0. At j = N alpha_N =
** beta_N = 0, so y_{2N+1} never contributes; zeta_j - 1 is computed as
** (j - N) / N so that it is exactly 0 there.
**
** Ordering as in the test set: y[2(j-1)] = u_j, y[2(j-1)+1] = v_j (0-based),
** n = 2N; f_u reads u_{j-1}, u_j, v_j, u_{j+1} (distances 2, 1, 2), f_v
** reads u_j, v_j: access distance d = 2. f is non-autonomous with a jump at
** t = 5; the problem is stiff for large N (the diffusion term's spectral
** radius is about 4 beta_1 / dz^2 ~ N^2 / 4). The jump is declared as a
** stop (odb_problem.tstops): an integration over it lands on t = 5 and
** starts again just after, as the test set's drivers do; otherwise a
** PIRK corrector's estimate (the difference of its last two iterates)
** does not see the jump and ends some 1e-4 off at t = 20. Default N = 200
** (n = 400), the test set's size, where its reference solution at t = 20
** applies.
*/
enum { P_N };

#define MED_K 100.0
#define MED_C 4.0
#define MED_V0 1.0

static const odb_param_decl medakzo_params[] = {
  { "N", ODB_PARAM_INT, 200, 2, 1e8, NULL, "grid points (n = 2N)" },
};

/* Where phi jumps (odb_problem.tstops). */
static const double medakzo_tstops[] = { 5.0 };

/* The infiltration function phi(t) = u(0, t). */
static double medakzo_phi(double t) { return t <= 5.0 ? 2.0 : 0.0; }

/*
** f_u of grid point j (1-based) whose u sits at w[q], v at w[q+1]; um and up
** are u_{j-1} and u_{j+1} (phi and the mirror at the ends).
*/
static inline double medakzo_fu(const double *w, long q, long j, long N,
                                double um, double up) {
  double z = (double)(j - N) / (double)N;   /* zeta_j - 1, exact at j = N */
  double z2 = z * z, dN = (double)N;
  double al = 2.0 * z2 * z / (MED_C * MED_C), be = z2 * z2 / (MED_C * MED_C);
  double u = w[q];
  return al * (up - um) * (0.5 * dN) + be * (um - 2.0 * u + up) * (dN * dN)
         - MED_K * u * w[q + 1];
}

/* f_q of one component near the ends (j = 1 or j = N), any parity. */
static double medakzo_edge(const double *w, long q, long N, double t) {
  long j = q / 2 + 1, qu = q & ~1L;
  double um, up;
  if (q & 1) return -MED_K * w[q] * w[q - 1];
  um = j == 1 ? medakzo_phi(t) : w[qu - 2];
  up = j == N ? w[qu] : w[qu + 2];
  return medakzo_fu(w, qu, j, N, um, up);
}

/*
** f_j for j in [j0, j1): the two edge grid points component by component,
** interior points in one loop. w[k] = y[k - yoff] is component k.
*/
static void medakzo_rhs(const odb_problem *p, double t, const double *y,
                        long yoff, double *f, long j0, long j1) {
  long N = (long)p->param[P_N], n = p->n;
  long lo = j0 > 2 ? j0 : 2, hi = j1 < n - 2 ? j1 : n - 2;
  const double *w = y - yoff;
  for (long q = j0; q < j1 && q < lo; ++q)
    f[q - j0] = medakzo_edge(w, q, N, t);
  for (long q = lo; q < hi; ++q) {
    if (q & 1)
      f[q - j0] = -MED_K * w[q] * w[q - 1];
    else
      f[q - j0] = medakzo_fu(w, q, q / 2 + 1, N, w[q - 2], w[q + 2]);
  }
  for (long q = hi > lo ? hi : lo; q < j1; ++q)
    f[q - j0] = medakzo_edge(w, q, N, t);
}

/* g = (0, v0, 0, v0, ...). */
static void medakzo_initial(const odb_problem *p, double *y0) {
  for (long q = 0; q < p->n; ++q) y0[q] = (q & 1) ? MED_V0 : 0.0;
}

static odb_status medakzo_setup(odb_problem *p) {
  long N = (long)p->param[P_N];
  p->n = 2 * N;
  p->d = 2;
  p->t0 = 0.0;
  p->t1 = 20.0;
  p->flops_per_comp = 11.0;   /* f_u about 20 (with its coefficients), f_v 2 */
  p->rhs = medakzo_rhs;
  p->initial = medakzo_initial;
  p->gpu_source = NULL;
  p->tstops = medakzo_tstops;   /* phi's jump: the solver restarts there */
  p->ntstops = 1;
  snprintf(p->label, sizeof p->label, "medakzo(N=%ld)", N);
  return ODB_OK;
}

const odb_problem_type odb_problem_medakzo = {
  .name = "medakzo",
  .doc = "Medical Akzo Nobel problem (Bari test set), interleaved u/v, "
         "n = 2N, d = 2",
  .params = medakzo_params,
  .nparams = (int)(sizeof medakzo_params / sizeof medakzo_params[0]),
  .setup = medakzo_setup,
};
