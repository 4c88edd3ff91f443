/* par_pipe.c - par_PipeDe2m, par_PipeDb2m, par_PipeDb2mt (Y scheme, j outer). */
#include "par_common.h"

/*
** Thesis Table 9.1 and Fig. 9.1: the D variants with the component loop
** pulled outside the stage loops, so all s function values of a component
** (or tile) are used while its s target rows are in cache. Shared Y^(k-1),
** Y^(k), one barrier per corrector step (par_common.h). On [a, b):
**   PipeDe2m  k-j-i-l:         per component j, per source stage i:
**                              F = h f_j(Y_i), into all s target rows
**   PipeDb2m  k-j-i-jj-l:      tiles of B; per tile and source stage, the
**                              components one by one (scalar F)
**   PipeDb2mt k-j-i-(jj)-l-jj: tiles of B; per tile and source stage, F for
**                              the tile into the thread's F in R^B, then
**                              the target rows tile-wise (Fig. 9.1)
** The final sweep (dEta^(m) into ynew) has the same loop order.
*/

/* F = h f_j(src) of one component. */
static inline double hf(par_data *d, double tc, const double *src, long j) {
  double F;
  par_f(d, tc, src, &F, j, j + 1);
  return d->h * F;
}

/* PipeDe2m: component outer, stage inner, scalar F. */
static void corr_De2m(par_data *d, int tid, const double *const *src,
                      double *cur, double *deta1, long a, long b) {
  (void)tid;
  for (long j = a; j < b; ++j)
    for (int i = 0; i < d->S; ++i)
      par_scatter(d, cur, i, j, hf(d, d->t + d->c[i] * d->h, src[i], j),
                  deta1);
}

static void final_De2m(par_data *d, int tid, const double *Ym, long a,
                       long b) {
  (void)tid;
  for (long j = a; j < b; ++j)
    for (int i = 0; i < d->S; ++i) {
      double F = d->b[i] * hf(d, d->t + d->c[i] * d->h, Ym + i * d->n, j);
      d->ynew[j] = i == 0 ? F : d->ynew[j] + F;
    }
}

/* PipeDb2m: tile outer, stage, then the tile's components (scalar F). */
static void corr_Db2m(par_data *d, int tid, const double *const *src,
                      double *cur, double *deta1, long a, long b) {
  (void)tid;
  for (long j0 = a; j0 < b; j0 += d->B) {
    long j1 = j0 + d->B < b ? j0 + d->B : b;
    for (int i = 0; i < d->S; ++i) {
      double tc = d->t + d->c[i] * d->h;
      for (long j = j0; j < j1; ++j)
        par_scatter(d, cur, i, j, hf(d, tc, src[i], j), deta1);
    }
  }
}

static void final_Db2m(par_data *d, int tid, const double *Ym, long a,
                       long b) {
  (void)tid;
  for (long j0 = a; j0 < b; j0 += d->B) {
    long j1 = j0 + d->B < b ? j0 + d->B : b;
    for (int i = 0; i < d->S; ++i) {
      double tc = d->t + d->c[i] * d->h;
      for (long j = j0; j < j1; ++j) {
        double F = d->b[i] * hf(d, tc, Ym + i * d->n, j);
        d->ynew[j] = i == 0 ? F : d->ynew[j] + F;
      }
    }
  }
}

/* PipeDb2mt: tile outer, stage, F for the tile, target rows tile-wise. */
static void corr_Db2mt(par_data *d, int tid, const double *const *src,
                       double *cur, double *deta1, long a, long b) {
  double *Fb = d->loc[tid];
  for (long j0 = a; j0 < b; j0 += d->B) {
    long j1 = j0 + d->B < b ? j0 + d->B : b;
    for (int i = 0; i < d->S; ++i) {
      par_f(d, d->t + d->c[i] * d->h, src[i], Fb, j0, j1);
      for (long q = 0; q < j1 - j0; ++q) Fb[q] *= d->h;
      par_scatter_tile(d, cur, i, j0, j1, Fb, deta1);
    }
  }
}

static void final_Db2mt(par_data *d, int tid, const double *Ym, long a,
                        long b) {
  double *Fb = d->loc[tid];
  for (long j0 = a; j0 < b; j0 += d->B) {
    long j1 = j0 + d->B < b ? j0 + d->B : b;
    double *yn = d->ynew + j0;
    for (int i = 0; i < d->S; ++i) {
      double bi = d->b[i];
      par_f(d, d->t + d->c[i] * d->h, Ym + i * d->n, Fb, j0, j1);
      for (long q = 0; q < j1 - j0; ++q) {
        double F = bi * (d->h * Fb[q]);
        yn[q] = i == 0 ? F : yn[q] + F;
      }
    }
  }
}

static void kernel_De2m(par_data *d, int tid) {
  par_yscheme_step(d, tid, corr_De2m, final_De2m);
}
static void kernel_Db2m(par_data *d, int tid) {
  par_yscheme_step(d, tid, corr_Db2m, final_Db2m);
}
static void kernel_Db2mt(par_data *d, int tid) {
  par_yscheme_step(d, tid, corr_Db2mt, final_Db2mt);
}

static const par_spec spec_De2m = { "par_PipeDe2m", PAR_YSCHEME, 0, 0, 0,
                                    kernel_De2m };
static const par_spec spec_Db2m = { "par_PipeDb2m", PAR_YSCHEME, 0, 1, 2,
                                    kernel_Db2m };
static const par_spec spec_Db2mt = { "par_PipeDb2mt", PAR_YSCHEME, 1, 1, 3,
                                     kernel_Db2mt };

static int De2m_applies(const odb_problem *p, const odb_method *m, char *why,
                        size_t nwhy) {
  (void)p;
  return par_applies("par_PipeDe2m", m, why, nwhy);
}
static int Db2m_applies(const odb_problem *p, const odb_method *m, char *why,
                        size_t nwhy) {
  (void)p;
  return par_applies("par_PipeDb2m", m, why, nwhy);
}
static int Db2mt_applies(const odb_problem *p, const odb_method *m,
                         char *why, size_t nwhy) {
  (void)p;
  return par_applies("par_PipeDb2mt", m, why, nwhy);
}
static odb_status De2m_init(odb_solver *s) { return par_init(s, &spec_De2m); }
static odb_status Db2m_init(odb_solver *s) { return par_init(s, &spec_Db2m); }
static odb_status Db2mt_init(odb_solver *s) {
  return par_init(s, &spec_Db2mt);
}

/*
** Bytes per attempt (v = n doubles). Per corrector step: every Y_i (or
** eta) read once and eta once, the s target rows written once (they stay
** in cache across the stage loop of a component or tile); the last step
** writes dEta^(m-1). Final sweep: read each Y^(m)_i, write ynew; finish:
** read ynew, dEta^(m-1) and eta, write ynew.
*/
static void pipe_traffic(const odb_solver *s, int stage0, double *r,
                         double *w) {
  double v = (double)s->n * sizeof(double), S = s->method->s, m = s->m;
  (void)stage0;
  *r = (m * (S + 1) + S + 3) * v;
  *w = (m * S + 1 + 1 + 1) * v;
}

const odb_variant odb_variant_par_PipeDe2m = {
  .name = "par_PipeDe2m",
  .doc = "parallel PipeDe2m (thesis Table 9.1): Y scheme, k-j-i-l, one "
         "component per RHS call; 1 barrier per corrector step",
  .backend = "cpu",
  .applies = De2m_applies,
  .init = De2m_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = pipe_traffic,
};

const odb_variant odb_variant_par_PipeDb2m = {
  .name = "par_PipeDb2m",
  .doc = "parallel PipeDb2m (thesis Table 9.1): PipeDe2m with j tiled "
         "(block B, default from L1), scalar F; 1 barrier per corrector step",
  .backend = "cpu",
  .applies = Db2m_applies,
  .init = Db2m_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = pipe_traffic,
};

const odb_variant odb_variant_par_PipeDb2mt = {
  .name = "par_PipeDb2mt",
  .doc = "parallel PipeDb2mt (thesis Table 9.1, Fig. 9.1): tiles of B "
         "(default from L1), F for a tile in a per-thread buffer, target "
         "rows tile-wise; 1 barrier per corrector step",
  .backend = "cpu",
  .applies = Db2mt_applies,
  .init = Db2mt_init,
  .fini = par_fini,
  .attempt = par_attempt,
  .traffic = pipe_traffic,
};
