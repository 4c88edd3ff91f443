/* par_D.c - parallel variants par_D and par_Dblock (Y scheme, i outer). */
#include "par_common.h"

/*
** Thesis Table 9.1, the variants derived from D: shared Y^(k-1), Y^(k)
** (two s x n matrices), one barrier per corrector step (par_common.h).
** Inside a corrector step thread q loops over its range [a, b):
**   D       k-i-j-l:    for each source stage i, for each component j:
**                       F = h f_j(Y_i) (one component per RHS call), added
**                       at once into all s target rows (l innermost)
**   Dblock  k-i-j-l-jj: j tiled (tile B): F for a whole tile in the
**                       thread's buffer F in R^B, then the s target rows
**                       updated tile-wise
** The final sweep (dEta^(m) into ynew) has the same loop order.
*/

/* D: one component at a time, the target loop innermost. */
static void corr_D(par_data *d, int tid, const double *const *src,
                   double *cur, double *deta1, long a, long b) {
  (void)tid;
  for (int i = 0; i < d->S; ++i) {
    double tc = d->t + d->c[i] * d->h;
    for (long j = a; j < b; ++j) {
      double F;
      par_f(d, tc, src[i], &F, j, j + 1);
      par_scatter(d, cur, i, j, d->h * F, deta1);
    }
  }
}

static void final_D(par_data *d, int tid, const double *Ym, long a, long b) {
  (void)tid;
  for (int i = 0; i < d->S; ++i) {
    double tc = d->t + d->c[i] * d->h, bi = d->b[i];
    const double *Yi = Ym + (long)i * d->n;
    for (long j = a; j < b; ++j) {
      double F;
      par_f(d, tc, Yi, &F, j, j + 1);
      F = bi * (d->h * F);
      d->ynew[j] = i == 0 ? F : d->ynew[j] + F;
    }
  }
}

/* Dblock: per source stage, tile by tile through the F buffer. */
static void corr_Dblock(par_data *d, int tid, const double *const *src,
                        double *cur, double *deta1, long a, long b) {
  double *Fb = d->loc[tid];
  for (int i = 0; i < d->S; ++i) {
    double tc = d->t + d->c[i] * d->h;
    for (long j0 = a; j0 < b; j0 += d->B) {
      long j1 = j0 + d->B < b ? j0 + d->B : b;
      par_f(d, tc, src[i], Fb, j0, j1);
      for (long q = 0; q < j1 - j0; ++q) Fb[q] *= d->h;
      par_scatter_tile(d, cur, i, j0, j1, Fb, deta1);
    }
  }
}

static void final_Dblock(par_data *d, int tid, const double *Ym, long a,
                         long b) {
  double *Fb = d->loc[tid];
  for (int i = 0; i < d->S; ++i) {
    double tc = d->t + d->c[i] * d->h, bi = d->b[i];
    const double *Yi = Ym + (long)i * d->n;
    for (long j0 = a; j0 < b; j0 += d->B) {
      long j1 = j0 + d->B < b ? j0 + d->B : b;
      double *yn = d->ynew + j0;
      par_f(d, tc, Yi, Fb, j0, j1);
      for (long q = 0; q < j1 - j0; ++q) {
        double F = bi * (d->h * Fb[q]);
        yn[q] = i == 0 ? F : yn[q] + F;
      }
    }
  }
}

static void kernel_D(par_data *d, int tid) {
  par_yscheme_step(d, tid, corr_D, final_D);
}
static void kernel_Dblock(par_data *d, int tid) {
  par_yscheme_step(d, tid, corr_Dblock, final_Dblock);
}

static const par_spec spec_D = { "par_D", PAR_YSCHEME, 0, 0, 0, kernel_D };
static const par_spec spec_Dblock = { "par_Dblock", PAR_YSCHEME, 1, 1, 3,
                                      kernel_Dblock };

static int D_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  (void)p;
  return par_applies("par_D", m, why, nwhy);
}
static int Dblock_applies(const odb_problem *p, const odb_method *m,
                          char *why, size_t nwhy) {
  (void)p;
  return par_applies("par_Dblock", m, why, nwhy);
}
static odb_status D_init(odb_solver *s) { return par_init(s, &spec_D); }
static odb_status Dblock_init(odb_solver *s) {
  return par_init(s, &spec_Dblock);
}

/*
** Bytes per attempt (v = n doubles). Per corrector step, for each source
** stage i: read Y_i (or eta) once, and the s target rows make a round trip
** (i = 0: read eta, write the rows; i > 0: read and write them); the last
** step also writes dEta^(m-1) (and reads it for i > 0). Final sweep: read
** each Y^(m)_i, ynew round trip per stage; finish: read ynew, dEta^(m-1)
** and eta, write ynew.
*/
static void D_traffic(const odb_solver *s, int stage0, double *r, double *w) {
  double v = (double)s->n * sizeof(double), S = s->method->s, m = s->m;
  double step_r = 2 + (S - 1) * (1 + S), step_w = S * S;
  (void)stage0;
  /* corrector steps, dEta^(m-1), final sweep, finish */
  *r = (m * step_r + (S - 1) + (2 * S - 1) + 3) * v;
  *w = (m * step_w + S + S + 1) * v;
}

const odb_variant odb_variant_par_D = {
  .name = "par_D",
  .doc = "parallel D (thesis Table 9.1): Y scheme, k-i-j-l, one component "
         "per RHS call; 1 barrier per corrector step",
  .backend = "cpu",
  .applies = D_applies,
  .init = D_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = D_traffic,
};

const odb_variant odb_variant_par_Dblock = {
  .name = "par_Dblock",
  .doc = "parallel Dblock (thesis Table 9.1): D with j tiled (block B, "
         "default from L1) through a per-thread F buffer; 1 barrier per "
         "corrector step",
  .backend = "cpu",
  .applies = Dblock_applies,
  .init = Dblock_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = D_traffic,
};
