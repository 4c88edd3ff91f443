/* pirk_pipe.c - variants "PipeDe2m", "PipeDb2m" and "PipeDb2mt": the
   Y-scheme of D with the component loop outside the stage loops (thesis
   Table 7.1, Fig. 9.1), for PIRK correctors only. */
#include "pirk_common.h"

#include <math.h>
#include <stdlib.h>

/*
** Inside each corrector step k (still the outer loop, so any f works):
** PipeDe2m (k-j-i-l): for each component j, all s sources F = h f_j(Y_i)
**   and their contributions to all s targets; Y^(cur)[.][j] is finished
**   while it is in cache.
** PipeDb2m (k-j-i-jj-l): j tiled by B; inside a tile the source loop, then
**   the components of the tile one by one (scalar F) into all targets.
** PipeDb2mt (k-j-i-(jj)-l-jj): as PipeDb2m, but f is evaluated over the
**   tile into a buffer of B values and each target row takes the tile
**   (thesis Fig. 9.1 with first = 0, last = n - 1, and one correction to
**   the figure: the targets start from eta once, at source 0).
** Two s x n matrices Y^(cur), Y^(prev) (s->F and the variant's Y), swapped
** per corrector step: Y^(cur) is written while any f_j may still read any
** component of Y^(prev). The end of the step (dEta^(m), e, the update and
** the norm) runs per component or per tile right after its dEta^(m) sum,
** with j still outermost; the arithmetic is the same as D's.
** An explicit RK method has no corrector steps to pipeline: refused.
*/

/* PIRK correctors only (explicit RK methods have no corrector steps). */
static int PipeDe2m_applies(const odb_problem *p, const odb_method *m,
                            char *why, size_t nwhy) {
  (void)p;
  return pirk_applies_corrector("PipeDe2m", m, why, nwhy);
}

static int PipeDb2m_applies(const odb_problem *p, const odb_method *m,
                            char *why, size_t nwhy) {
  (void)p;
  return pirk_applies_corrector("PipeDb2m", m, why, nwhy);
}

static int PipeDb2mt_applies(const odb_problem *p, const odb_method *m,
                             char *why, size_t nwhy) {
  (void)p;
  return pirk_applies_corrector("PipeDb2mt", m, why, nwhy);
}

/* Y-scheme storage; the tiled ones with the F tile of B = opts.block. */
static odb_status PipeDe2m_init(odb_solver *s) {
  return pirk_y_init(s, "PipeDe2m", 0, 0);
}

static odb_status PipeDb2m_init(odb_solver *s) {
  return pirk_y_init(s, "PipeDb2m", 1, 0);
}

static odb_status PipeDb2mt_init(odb_solver *s) {
  return pirk_y_init(s, "PipeDb2mt", 1, 0);
}

/*
** Components [j0, j1) of one corrector step k with scalar F (PipeDe2m:
** one component, PipeDb2m: a tile): for each j in the range, or for each
** source and then each j of the tile (tile_i_outer).
*/
static void corrector_scalar(odb_solver *s, pirk_ydata *d, double *const *Yc,
                             double *const *Yp, int k, double h, long j0,
                             long j1, int tile_i_outer) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  const double *eta = s->y;
  int S = me->s, last = k == s->m - 1;
  double *de1 = d->deta1;
  if (!tile_i_outer) {
    for (long j = j0; j < j1; ++j)
      for (int i = 0; i < S; ++i) {
        double F = h * pirk_fj(p, s->t + me->c[i] * h, k ? Yp[i] : eta, j);
        pirk_scatter1(Yc, me->A, S, i, j, F, eta[j]);
        if (last) de1[j] = i ? de1[j] + me->b[i] * F : me->b[i] * F;
      }
    return;
  }
  for (int i = 0; i < S; ++i) {
    const double *src = k ? Yp[i] : eta;
    double tc = s->t + me->c[i] * h, b = me->b[i];
    for (long j = j0; j < j1; ++j) {
      double F = h * pirk_fj(p, tc, src, j);
      pirk_scatter1(Yc, me->A, S, i, j, F, eta[j]);
      if (last) de1[j] = i ? de1[j] + b * F : b * F;
    }
  }
}

/* PipeDb2mt's tile [j0, j0 + len) of corrector step k (F tile buffer). */
static void corrector_tile(odb_solver *s, pirk_ydata *d, double *const *Yc,
                           double *const *Yp, int k, double h, long j0,
                           long len) {
  const odb_method *me = s->method;
  int S = me->s, last = k == s->m - 1;
  for (int i = 0; i < S; ++i) {
    pirk_hf(s->problem, s->t + me->c[i] * h, k ? Yp[i] : s->y, h, d->Fb, j0,
            j0 + len);
    pirk_scatter_tile(Yc, me->A, S, i, j0, len, d->Fb, s->y);
    if (last) pirk_acc_tile(d->deta1, me->b[i], i, j0, len, d->Fb);
  }
}

/*
** The end of the step on [j0, j1) from Y^(m) = Ym: dEta^(m) into ynew
** (source outer over the range, scalar F or the F tile), then the update.
** Returns the norm's summands over the range.
*/
static double finish_range(odb_solver *s, pirk_ydata *d, double *const *Ym,
                           double h, long j0, long j1, int tiled) {
  const odb_method *me = s->method;
  const odb_problem *p = s->problem;
  for (int i = 0; i < me->s; ++i) {
    double tc = s->t + me->c[i] * h, b = me->b[i];
    if (tiled) {
      pirk_hf(p, tc, Ym[i], h, d->Fb, j0, j1);
      pirk_acc_tile(s->ynew, b, i, j0, j1 - j0, d->Fb);
    } else {
      for (long j = j0; j < j1; ++j) {
        double F = h * pirk_fj(p, tc, Ym[i], j);
        s->ynew[j] = i ? s->ynew[j] + b * F : b * F;
      }
    }
  }
  return pirk_finish(s, d->deta1, j0, j1);
}

/*
** One step of the three variants: kind 0 PipeDe2m (B = 1, no tiles), 1
** PipeDb2m (scalar F in tiles), 2 PipeDb2mt (F tile buffer).
*/
static double pipe_step(odb_solver *s, double h, int kind) {
  pirk_ydata *d = s->vdata;
  int S = s->method->s;
  long n = s->n, B = kind ? d->B : 1;
  double *cur[PIRK_MAX_STAGES], *prev[PIRK_MAX_STAGES], acc = 0.0;
  for (int l = 0; l < S; ++l) {
    cur[l] = s->F[l];
    prev[l] = d->Y.row[l];
  }
  for (int k = 0; k < s->m; ++k) {
    pirk_swap_rows(cur, prev, S);
    if (kind == 0) {
      corrector_scalar(s, d, cur, prev, k, h, 0, n, 0);
      continue;
    }
    for (long j0 = 0; j0 < n; j0 += B) {
      long len = n - j0 < B ? n - j0 : B;
      if (kind == 1) corrector_scalar(s, d, cur, prev, k, h, j0, j0 + len, 1);
      else corrector_tile(s, d, cur, prev, k, h, j0, len);
    }
  }
  for (long j0 = 0; j0 < n; j0 += B) {   /* cur holds Y^(m) */
    long len = n - j0 < B ? n - j0 : B;
    acc += finish_range(s, d, cur, h, j0, j0 + len, kind == 2);
  }
  return acc;
}

/* The weighted RMS norm of e from pipe_step's sum of squares. */
static odb_status PipeDe2m_attempt(odb_solver *s, double h, double *err) {
  *err = sqrt(pipe_step(s, h, 0) / (double)s->n);
  return ODB_OK;
}

static odb_status PipeDb2m_attempt(odb_solver *s, double h, double *err) {
  *err = sqrt(pipe_step(s, h, 1) / (double)s->n);
  return ODB_OK;
}

static odb_status PipeDb2mt_attempt(odb_solver *s, double h, double *err) {
  *err = sqrt(pipe_step(s, h, 2) / (double)s->n);
  return ODB_OK;
}

/* One sweep per corrector step and one for the end (pirk_y_traffic). */
static void pipe_traffic(const odb_solver *s, int stage0, double *r,
                         double *w) {
  (void)stage0;
  pirk_y_traffic(s, 0, r, w);
}

const odb_variant odb_variant_pirk_PipeDe2m = {
  .name = "PipeDe2m",
  .doc = "thesis variant PipeDe2m (k-j-i-l): D with the component loop "
         "outside the stage loops; PIRK only",
  .backend = "cpu",
  .applies = PipeDe2m_applies,
  .init = PipeDe2m_init,
  .fini = pirk_y_fini,
  .attempt = PipeDe2m_attempt,
  .traffic = pipe_traffic,
};

const odb_variant odb_variant_pirk_PipeDb2m = {
  .name = "PipeDb2m",
  .doc = "thesis variant PipeDb2m (k-j-i-jj-l): PipeDe2m with the component "
         "loop tiled, scalar F; parameter block (default 1024); PIRK only",
  .backend = "cpu",
  .applies = PipeDb2m_applies,
  .init = PipeDb2m_init,
  .fini = pirk_y_fini,
  .attempt = PipeDb2m_attempt,
  .traffic = pipe_traffic,
};

const odb_variant odb_variant_pirk_PipeDb2mt = {
  .name = "PipeDb2mt",
  .doc = "thesis variant PipeDb2mt (k-j-i-(jj)-l-jj): PipeDb2m with f over "
         "a tile into a buffer of B; parameter block (default 1024); PIRK "
         "only",
  .backend = "cpu",
  .applies = PipeDb2mt_applies,
  .init = PipeDb2mt_init,
  .fini = pirk_y_fini,
  .attempt = PipeDb2mt_attempt,
  .traffic = pipe_traffic,
};
