/* pirk_common.h - pieces shared by the PIRK variants (private). */
#ifndef ODB_PIRK_COMMON_H
#define ODB_PIRK_COMMON_H

#include "erk_common.h"

/*
** Notation of N. Kalinnik, "Effizientes Lösen von Anfangswertproblemen
** gewöhnlicher Differentialgleichungssysteme mithilfe von
** Autotuning-Techniken" (PhD thesis, University of Bayreuth; "the thesis"
** in the variants' comments), Ch. 3, (3.26)-(3.29) and Ch. 7.2: one step
** from eta = s->y with m corrector steps of an s-stage corrector (A, b, c):
**   Y_l^(0) = eta,  Y_l^(k) = eta + h sum_i a_li f(t + c_i h, Y_i^(k-1)),
**   eta_new = eta + dEta^(m),  dEta^(k) = h sum_i b_i f(t + c_i h, Y_i^(k)),
**   e = dEta^(m) - dEta^(m-1),  err = sqrt(mean((e_j / sk_j)^2)),
**   sk_j = atol + rtol max(|eta_j|, |eta_new_j|).
** Index names used by all variants (0-based, where the thesis counts from
** 1): l the target (argument vector being built), i the source stage, j
** the component, k the corrector step.
** Every variant keeps s->y unchanged, writes eta_new into s->ynew and may
** use s->ynew as the dEta^(m) vector before the final update.
*/

#define PIRK_MAX_STAGES ERK_MAX_STAGES
/*
** Default tile B of the tiled general variants (Dblock, PipeDb2m,
** PipeDb2mt) when opts.block is 0: 1024 components. The tile's working set
** (s + 3) B doubles (thesis Table 8.1, WS_2 without the 2d halo) is 64 KB
** for Lobatto IIIC(8), inside every current core's L2; the tuner searches B
** anyway. Clamped to n.
*/
#define PIRK_BLOCK_DEFAULT 1024

/*
** An s x n matrix: rows row[0..s) of n doubles each in one allocation; each
** row starts on a 64-byte boundary (the row pitch is n rounded up to 8).
*/
typedef struct pirk_mat {
  int s;
  long n;
  double *base;
  double *row[PIRK_MAX_STAGES];
} pirk_mat;

/* Allocates M (what names it in the out-of-memory message). */
odb_status pirk_mat_alloc(pirk_mat *M, int s, long n, const char *what);
/* Frees M's storage; M may be zeroed or already freed. */
void pirk_mat_free(pirk_mat *M);

/*
** applies() of a variant that runs PIRK correctors and explicit RK methods
** (A, E, D, Dblock): 1 unless the method has more than PIRK_MAX_STAGES
** stages.
*/
int pirk_applies_any(const char *variant, const odb_method *m, char *why,
                     size_t nwhy);
/*
** applies() of a variant that pipelines corrector steps (the Pipe* and pp*
** variants): refuses explicit RK methods, naming the variants that run them.
*/
int pirk_applies_corrector(const char *variant, const odb_method *m,
                           char *why, size_t nwhy);

/*
** Checks at init: a PIRK method needs s->m >= 1 corrector steps. Fails with
** ODB_ERR_ARG naming the variant.
*/
odb_status pirk_check(const odb_solver *s, const char *variant);

/*
** The tile size of a tiled variant: opts.block, or PIRK_BLOCK_DEFAULT when
** 0, clamped to [1, n]. Stores it in s->block.
*/
long pirk_block(odb_solver *s);

/* Swaps the pointer tables a[0..S) and b[0..S) (cur/prev after a step k). */
static inline void pirk_swap_rows(double **a, double **b, int S) {
  for (int i = 0; i < S; ++i) {
    double *t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
}

/* f_j(tc, src) of one component j; src is a full argument vector. */
static inline double pirk_fj(const odb_problem *p, double tc,
                             const double *src, long j) {
  double f;
  p->rhs(p, tc, src, 0, &f, j, j + 1);
  return f;
}

/* out[0..j1-j0) = h f_j(tc, src) for j in [j0, j1); src a full vector. */
void pirk_hf(const odb_problem *p, double tc, const double *src, double h,
             double *out, long j0, long j1);

/* (e / sk)^2 with sk = atol + rtol max(|y|, |yn|), the norm's summand. */
static inline double pirk_sq(double e, double y, double yn, double atol,
                             double rtol) {
  double a = y < 0 ? -y : y, b = yn < 0 ? -yn : yn;
  double r = e / (atol + rtol * (a > b ? a : b));
  return r * r;
}

/*
** The end of a step of the Y-scheme variants (D family) on [j0, j1):
** s->ynew holds dEta^(m) there and deta1 (a full vector) dEta^(m-1);
** writes eta_new = eta + dEta^(m) into s->ynew and returns the sum of the
** norm's summands of e = dEta^(m) - dEta^(m-1) over the range.
*/
double pirk_finish(odb_solver *s, const double *deta1, long j0, long j1);

/* Bytes of one n-vector of doubles. */
static inline double pirk_vbytes(const odb_solver *s) {
  return (double)s->n * (double)sizeof(double);
}

/* {====== Y-scheme storage (D, Dblock, PipeDe2m, PipeDb2m, PipeDb2mt) */

/*
** Thesis Ch. 7.2.2: the argument vectors Y^(cur) and Y^(prev) (two s x n
** matrices: s->F and Y, swapped as pointer tables after every corrector
** step), dEta^(m-1) (deta1) and dEta^(m) (held in s->ynew), plus a tile
** buffer Fb of B doubles in the tiled variants. Working set (2s + 3) n
** (+ B). For an explicit RK method (D, Dblock) Y holds the stage arguments
** Y_1..Y_{s-1} (row 0 unused), deta1 the error vector h sum (b - bhat) F,
** and tgt[i] the targets l > i with a_li != 0 of source stage i (at i = 0
** every l >= 1, so that each Y_l starts from eta).
*/
typedef struct pirk_ydata {
  pirk_mat Y;
  double *deta1;
  double *Fb;                       /* tiled variants only */
  long B;                           /* tile; 0 in untiled variants */
  erk_plan plan;                    /* explicit RK only */
  erk_terms tgt[PIRK_MAX_STAGES];   /* explicit RK only */
} pirk_ydata;

/*
** Allocates the Y-scheme storage into s->vdata (tiled: with Fb of B =
** pirk_block(s) doubles; untiled: s->block = 0). Explicit RK methods are
** accepted only when erk_ok (D, Dblock).
*/
odb_status pirk_y_init(odb_solver *s, const char *variant, int tiled,
                       int erk_ok);
void pirk_y_fini(odb_solver *s);

/*
** Component j of source stage i's contribution F = h f_j to every target:
** Yc[l][j] = eta_j + a_li F when i == 0, Yc[l][j] += a_li F otherwise
** (the corrected loop of thesis Fig. 7.3: all s targets).
*/
static inline void pirk_scatter1(double *const *Yc, const double *A, int S,
                                 int i, long j, double F, double eta_j) {
  if (i == 0)
    for (int l = 0; l < S; ++l) Yc[l][j] = eta_j + A[l * S] * F;
  else
    for (int l = 0; l < S; ++l) Yc[l][j] += A[l * S + i] * F;
}

/* pirk_scatter1 for the tile [j0, j0 + len) with F values Fb[0..len). */
static inline void pirk_scatter_tile(double *const *Yc, const double *A,
                                     int S, int i, long j0, long len,
                                     const double *restrict Fb,
                                     const double *restrict eta) {
  for (int l = 0; l < S; ++l) {
    double a = A[l * S + i], *restrict y = Yc[l] + j0;
    if (i == 0)
      for (long jj = 0; jj < len; ++jj) y[jj] = eta[j0 + jj] + a * Fb[jj];
    else
      for (long jj = 0; jj < len; ++jj) y[jj] += a * Fb[jj];
  }
}

/* v[j0 + jj] = b Fb[jj] when i == 0, += otherwise (dEta sums). */
static inline void pirk_acc_tile(double *restrict v, double b, int i, long j0,
                                 long len, const double *restrict Fb) {
  if (i == 0)
    for (long jj = 0; jj < len; ++jj) v[j0 + jj] = b * Fb[jj];
  else
    for (long jj = 0; jj < len; ++jj) v[j0 + jj] += b * Fb[jj];
}

/*
** Bytes of one PIRK step of the k-outer Y-scheme variants, counted from
** the loop structure. source_outer (D, Dblock: k-i-j-l): every source sweep
** reads its argument (eta or Y_i^(prev)) and writes the s target rows,
** which it also reads for i >= 1; dEta^(m-1) likewise in the last step; the
** end has one sweep per source (reads Y_i^(m), writes dEta^(m), reading it
** for i >= 1) and the update (reads dEta^(m), dEta^(m-1), eta; writes
** ynew). Otherwise (Pipe*: k-j-i-l): one sweep per corrector step reads all
** s arguments (once eta at k = 0) and eta and writes the s target rows
** (and dEta^(m-1)); the end is one sweep reading Y^(m), eta and
** dEta^(m-1) and writing ynew.
*/
void pirk_y_traffic(const odb_solver *s, int source_outer, double *r,
                    double *w);

/* }====== */

#endif
