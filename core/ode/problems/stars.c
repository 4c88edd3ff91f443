/* stars.c - STARS: the gravitational N-body problem of a star cluster (thesis App. A.5). */
#include "odb_status.h"
#include "odb_rng.h"
#include "odb_param.h"
#include "odb_problem.h"

#include <math.h>
#include <stdio.h>

/*
** N point masses under mutual gravity:
**   r_i' = v_i,  v_i' = sum_{j != i} G m (r_j - r_i) / (|r_j - r_i|^2 + s^2)^(3/2)
** with equal masses m and v_i(0) = 0 (thesis A.5). n = 6N.
**
** Ordering: interleaved (position, velocity) pairs per coordinate,
** y[2q] = position coordinate q, y[2q+1] = velocity coordinate q,
** q = 3 body + dim, i.e. body b occupies y[6b .. 6b+6) as
** (x, vx, y, vy, z, vz). The thesis notes that the odd components (0-based)
** read n/2 components, all positions: this layout. The access distance is
** unlimited (d = n), so only the general variants apply.
**
** The thesis gives neither G, m, the initial positions, the interval nor a
** softening. Our choices (parameters where it makes sense):
** - G = 1 and m = 1/N by default (total mass 1, Henon units); "m" sets the
**   mass of one body (0 means 1/N), as in the thesis "chosen by the user".
** - Initial positions: uniformly distributed in the unit ball, drawn by
**   rejection from the cube [-1, 1]^3 with odb_rng seeded by "seed" (the
**   same seed gives the same cluster on every machine), then shifted so
**   that the centre of mass is at the origin. Velocities 0 (thesis).
** - Plummer softening s ("soft", default 0.01): r^2 is replaced by
**   r^2 + s^2, so that close pairs of a random draw do not force tiny
**   steps; soft = 0 gives the unsoftened law of the thesis (coincident
**   bodies then divide by zero). Energy
**   E = sum m |v_i|^2 / 2 - sum_{i<j} G m^2 / sqrt(|r_i - r_j|^2 + s^2)
**   and total momentum are conserved.
** - Interval [0, t_ff / 2], t_ff = (pi/2) sqrt(1 / (2 G M)), M = N m, the
**   free-fall time of the cold homogeneous unit ball: the cluster contracts
**   smoothly and is far from the core collapse at t_ff (0.555 for M = G = 1).
** Default N = 1000 (n = 6000, the thesis's Ch. 7 size of STRING and CUSP).
*/
enum { P_N, P_M, P_G, P_SOFT, P_SEED };

static const odb_param_decl stars_params[] = {
  { "N", ODB_PARAM_INT, 1000, 2, 1e5, NULL, "number of bodies (n = 6N)" },
  { "m", ODB_PARAM_REAL, 0, 0, 1e12, NULL, "mass of each body; 0: 1/N" },
  { "G", ODB_PARAM_REAL, 1.0, 1e-12, 1e12, NULL, "gravitational constant" },
  { "soft", ODB_PARAM_REAL, 0.01, 0, 1e6, NULL,
    "Plummer softening length (0: none)" },
  { "seed", ODB_PARAM_INT, 1, 0, 4294967295.0, NULL,
    "seed of the initial positions" },
};

/* Mass of one body. */
static double stars_mass(const odb_problem *p) {
  return p->param[P_M] > 0 ? p->param[P_M] : 1.0 / p->param[P_N];
}

/*
** Acceleration of body b into acc[3]: positions of body k at w[6k],
** w[6k+2], w[6k+4]. Two loops skip k = b without a branch inside.
*/
static void stars_accel(const double *w, long N, long b, double gm,
                        double s2, double acc[3]) {
  double xb = w[6 * b], yb = w[6 * b + 2], zb = w[6 * b + 4];
  double ax = 0, ay = 0, az = 0;
  for (int part = 0; part < 2; ++part) {
    long k0 = part ? b + 1 : 0, k1 = part ? N : b;
    for (long k = k0; k < k1; ++k) {
      double dx = w[6 * k] - xb, dy = w[6 * k + 2] - yb, dz = w[6 * k + 4] - zb;
      double r2 = dx * dx + dy * dy + dz * dz + s2;
      double inv = 1.0 / (r2 * sqrt(r2));
      ax += dx * inv;
      ay += dy * inv;
      az += dz * inv;
    }
  }
  acc[0] = gm * ax;
  acc[1] = gm * ay;
  acc[2] = gm * az;
}

/*
** f_j for j in [j0, j1), body by body: even components copy the velocity,
** odd ones need the body's acceleration (computed once per body, only when
** one of its odd components is in the range). Since d = n the window is
** always the whole vector, but w[k] = y[k - yoff] is all the code assumes.
*/
static void stars_rhs(const odb_problem *p, double t, const double *y,
                      long yoff, double *f, long j0, long j1) {
  long N = (long)p->param[P_N];
  double gm = p->param[P_G] * stars_mass(p);
  double s2 = p->param[P_SOFT] * p->param[P_SOFT];
  const double *w = y - yoff;
  (void)t;
  if (j0 >= j1) return;
  for (long b = j0 / 6; b <= (j1 - 1) / 6; ++b) {
    long q0 = 6 * b, lo = q0 > j0 ? q0 : j0, hi = q0 + 6 < j1 ? q0 + 6 : j1;
    double acc[3] = { 0, 0, 0 };
    if (hi - lo > 1 || (lo & 1)) stars_accel(w, N, b, gm, s2, acc);
    for (long q = lo; q < hi; ++q)
      f[q - j0] = (q & 1) ? acc[(q - q0) >> 1] : w[q + 1];
  }
}

/* Uniform in the unit ball (seeded rejection), centre of mass at 0, v = 0. */
static void stars_initial(const odb_problem *p, double *y0) {
  long N = (long)p->param[P_N];
  double cm[3] = { 0, 0, 0 };
  odb_rng rng;
  odb_rng_seed(&rng, (uint64_t)p->param[P_SEED]);
  for (long b = 0; b < N; ++b) {
    double x[3], r2;
    do {
      for (int k = 0; k < 3; ++k) x[k] = 2.0 * odb_rng_uniform(&rng) - 1.0;
      r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    } while (r2 > 1.0);
    for (int k = 0; k < 3; ++k) {
      y0[6 * b + 2 * k] = x[k];
      y0[6 * b + 2 * k + 1] = 0.0;
      cm[k] += x[k];
    }
  }
  for (long b = 0; b < N; ++b)
    for (int k = 0; k < 3; ++k) y0[6 * b + 2 * k] -= cm[k] / (double)N;
}

static odb_status stars_setup(odb_problem *p) {
  long N = (long)p->param[P_N];
  double M = stars_mass(p) * (double)N;
  p->n = 6 * N;
  p->d = p->n;   /* every acceleration reads every position */
  p->t0 = 0.0;
  p->t1 = 0.5 * (M_PI / 2.0) * sqrt(1.0 / (2.0 * p->param[P_G] * M));
  p->flops_per_comp = 20.0 * (double)(N - 1) / 6.0;   /* 20 per pair */
  p->rhs = stars_rhs;
  p->initial = stars_initial;
  p->gpu_source = NULL;
  snprintf(p->label, sizeof p->label, "stars(N=%ld)", N);
  return ODB_OK;
}

const odb_problem_type odb_problem_stars = {
  .name = "stars",
  .doc = "N-body star cluster (cold uniform ball, softened gravity), "
         "(pos, vel) pairs, n = 6N, d = n",
  .params = stars_params,
  .nparams = (int)(sizeof stars_params / sizeof stars_params[0]),
  .setup = stars_setup,
};
