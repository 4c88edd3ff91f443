/* par_AE.c - parallel variants par_A, par_E, par_EAblock (F scheme). */
#include "par_common.h"

/*
** Thesis Table 9.1, the vector-oriented variants: each thread keeps its
** n/p slice of F^(k-1) and F^(k) (rows of two shared s x n matrices,
** swapped by parity: F^(k) lives in mat[k & 1]); the argument vectors are
** shared. One argument vector per stage (see par_common.h): 2 barriers per
** corrector step, 2m - 1 per attempt.
**
** Per attempt, thread q on its range [a, b):
**   F^(0)_l = f(t + c_l h, eta)                        for every l
**   for k = 0..m-1:
**     build Y_l = eta + h sum_i a_li F^(k)_i  on [a, b)  for every l
**     barrier                       (f may read any component of any Y_l)
**     F^(k+1)_l = f(t + c_l h, Y_l) on [a, b)            for every l
**     barrier unless k = m-1        (the next build overwrites the Y_l)
**   dEta^(m), dEta^(m-1), ynew, error sum from F^(m), F^(m-1) on [a, b)
** The variants differ only in the loop order of the build:
**   A       k-l-i-j:    one pass over [a, b) per term (vector-oriented)
**   E       k-l-j-i:    the i sum innermost, one pass per target l
**   EAblock k-l-j-i-jj: E with j tiled (tile B): per tile, A's passes over
**                       the tile into the thread's Y_local (n/p doubles)
*/

/* F^(0)_l = f(t + c_l h, eta) on the thread's range, every l. */
static void predictor(par_data *d, long a, long b) {
  for (int l = 0; l < d->S; ++l)
    par_f(d, d->t + d->c[l] * d->h, d->eta, par_row(d->mat[0], l, d->n) + a,
          a, b);
}

/* A: Y = a_l0 F_0; Y += a_li F_i (i >= 1); Y = eta + h Y, pass by pass. */
static void build_A(par_data *d, const double *Fp, long a, long b) {
  long n = d->n;
  int S = d->S;
  for (int l = 0; l < S; ++l) {
    double *Y = par_row(d->Yarg, l, n);
    const double *al = d->A + l * S;
    const double *F0 = Fp;
    for (long j = a; j < b; ++j) Y[j] = al[0] * F0[j];
    for (int i = 1; i < S; ++i) {
      const double *Fi = Fp + i * n;
      double c = al[i];
      for (long j = a; j < b; ++j) Y[j] += c * Fi[j];
    }
    for (long j = a; j < b; ++j) Y[j] = d->eta[j] + d->h * Y[j];
  }
}

/* E: for each target l and component j the whole i sum at once. */
static void build_E(par_data *d, const double *Fp, long a, long b) {
  long n = d->n;
  int S = d->S;
  for (int l = 0; l < S; ++l) {
    double *Y = par_row(d->Yarg, l, n);
    const double *al = d->A + l * S;
    for (long j = a; j < b; ++j) {
      double acc = al[0] * Fp[j];
      for (int i = 1; i < S; ++i) acc += al[i] * Fp[i * n + j];
      Y[j] = d->eta[j] + d->h * acc;
    }
  }
}

/*
** EAblock: for each target l, tiles of B components; inside a tile the i
** sum runs pass by pass over the tile in the thread's Y_local (which stays
** in L1), then Y_l = eta + h Y_local for the tile.
*/
static void build_EAblock(par_data *d, int tid, const double *Fp, long a,
                          long b) {
  long n = d->n, B = d->B;
  int S = d->S;
  double *Yl = d->loc[tid];             /* component j at Yl[j - a] */
  for (int l = 0; l < S; ++l) {
    double *Y = par_row(d->Yarg, l, n);
    const double *al = d->A + l * S;
    for (long j0 = a; j0 < b; j0 += B) {
      long j1 = j0 + B < b ? j0 + B : b;
      for (long j = j0; j < j1; ++j) Yl[j - a] = al[0] * Fp[j];
      for (int i = 1; i < S; ++i) {
        const double *Fi = Fp + i * n;
        double c = al[i];
        for (long j = j0; j < j1; ++j) Yl[j - a] += c * Fi[j];
      }
      for (long j = j0; j < j1; ++j) Y[j] = d->eta[j] + d->h * Yl[j - a];
    }
  }
}

/* The common step; build selects the loop order of the argument vectors. */
static void fscheme_step(par_data *d, int tid, int kind) {
  long a, b, n = d->n;
  par_range(d, tid, &a, &b);
  predictor(d, a, b);
  for (int k = 0; k < d->m; ++k) {
    const double *Fp = d->mat[k & 1];
    double *Fc = d->mat[(k + 1) & 1];
    if (kind == 0)
      build_A(d, Fp, a, b);
    else if (kind == 1)
      build_E(d, Fp, a, b);
    else
      build_EAblock(d, tid, Fp, a, b);
    odb_team_barrier(d->team, tid);
    for (int l = 0; l < d->S; ++l)
      par_f(d, d->t + d->c[l] * d->h, par_row(d->Yarg, l, n),
            par_row(Fc, l, n) + a, a, b);
    if (k < d->m - 1) odb_team_barrier(d->team, tid);
  }
  par_finish_f(d, tid, d->mat[d->m & 1], d->mat[(d->m - 1) & 1]);
}

static void kernel_A(par_data *d, int tid) { fscheme_step(d, tid, 0); }
static void kernel_E(par_data *d, int tid) { fscheme_step(d, tid, 1); }
static void kernel_EAblock(par_data *d, int tid) { fscheme_step(d, tid, 2); }

static const par_spec spec_A = { "par_A", PAR_FSCHEME, 0, 0, 0, kernel_A };
static const par_spec spec_E = { "par_E", PAR_FSCHEME, 0, 0, 0, kernel_E };
static const par_spec spec_EAblock = { "par_EAblock", PAR_FSCHEME, 2, 1, 3,
                                       kernel_EAblock };

static int A_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  (void)p;
  return par_applies("par_A", m, why, nwhy);
}
static int E_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  (void)p;
  return par_applies("par_E", m, why, nwhy);
}
static int EAblock_applies(const odb_problem *p, const odb_method *m,
                           char *why, size_t nwhy) {
  (void)p;
  return par_applies("par_EAblock", m, why, nwhy);
}

static odb_status A_init(odb_solver *s) { return par_init(s, &spec_A); }
static odb_status E_init(odb_solver *s) { return par_init(s, &spec_E); }
static odb_status EAblock_init(odb_solver *s) {
  return par_init(s, &spec_EAblock);
}

/*
** Bytes per attempt (v = one vector of n doubles; f reads its argument
** vector once per sweep). Predictor: s sweeps reading eta, writing F_l.
** Per corrector step: the build (A: per l, a first pass reading F_0 and
** writing Y, s - 1 passes reading Y and F_i and writing Y, a last pass
** reading eta and Y and writing Y; E and EAblock: per l, read eta and the
** s F_i once, write Y_l once, Y_local staying in cache), then s sweeps
** reading Y_l and writing F_l. Final: read 2s F rows and eta, write ynew.
*/
static void traffic(const odb_solver *s, int kind, double *r, double *w) {
  double v = (double)s->n * sizeof(double), S = s->method->s, m = s->m;
  double br = kind == 0 ? S * (2 * S + 1) : S * (S + 1);
  double bw = kind == 0 ? S * (S + 1) : S;
  *r = S * v + m * (br + S) * v + (2 * S + 1) * v;
  *w = S * v + m * (bw + S) * v + v;
}

static void A_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  (void)stage0;
  traffic(s, 0, r, w);
}
static void E_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  (void)stage0;
  traffic(s, 1, r, w);
}

const odb_variant odb_variant_par_A = {
  .name = "par_A",
  .doc = "parallel A (thesis Table 9.1): F scheme, k-l-i-j, vector passes; "
         "2 barriers per corrector step",
  .backend = "cpu",
  .applies = A_applies,
  .init = A_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = A_traffic,
};

const odb_variant odb_variant_par_E = {
  .name = "par_E",
  .doc = "parallel E (thesis Table 9.1): F scheme, k-l-j-i, stage sum "
         "innermost; 2 barriers per corrector step",
  .backend = "cpu",
  .applies = E_applies,
  .init = E_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = E_traffic,
};

const odb_variant odb_variant_par_EAblock = {
  .name = "par_EAblock",
  .doc = "parallel EAblock (thesis Table 9.1): E with j tiled (block B, "
         "default from L1) and a per-thread Y_local; 2 barriers per "
         "corrector step",
  .backend = "cpu",
  .applies = EAblock_applies,
  .init = EAblock_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = E_traffic,
};
