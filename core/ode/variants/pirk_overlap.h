/* pirk_overlap.h - the overlapped iterate matrix Ybar of the specialized
   PIRK variants PipeDb1m, PipeDb1mt, ppDb1m, ppDb1mt (private). */
#ifndef ODB_PIRK_OVERLAP_H
#define ODB_PIRK_OVERLAP_H

#include "odb_status.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"

/*
** Storage (thesis Ch. 7.2.2, Fig. 7.6). The m corrector iterates
** Y^(1..m) (each s x n) share one matrix Ybar of s rows of
** L = (m-1) 2B + n doubles: component j of Y_l^(k) is rows[l][off(k) + j]
** with off(k) = (m - k) 2B, so every iterate sits two blocks to the left of
** the one it is computed from (Y^(m) at column 0). Y^(0) = eta is the
** solver's y and is not stored. Blocks are walked in ascending order, so
** writing block J of Y^(k) lands on block J-2 of Y^(k-1), which no later
** computation reads: block J reads Y^(k-1) only on [JB - d, (J+1)B + d),
** which lies right of the written range exactly when B >= d. (The thesis
** says block J's results go "into block J+2": the same scheme counted from
** the other end; the shift must point away from the traversal direction.
** Shift B + d would also do, and is what the parallel variants use; 2B is
** the thesis's choice for the sequential ones.)
**
** Blocks: J = 0 .. nb-1 cover [JB, min((J+1)B, n)); when B does not
** divide n the last block is the short remainder. It must not be merged
** into the block before it: a last block of B + r would write up to
** (J-1)B + r in Y^(k-1) coordinates, past its own read window's start
** JB - d whenever r > B - d. A short last block keeps every block's writes
** and reads apart, because the shift is counted from the block start.
**
** Arithmetic: the target rows accumulate sum_i a_li F_i in index order and
** the last source stage turns the sum into eta + h * sum (the thesis's
** Fig. 7.3 folds h into F and starts from eta instead). This is the order
** of the literal corrector formula (3.27), Y = eta + h sum_i a_li F_i, so
** these variants agree with variant A up to contraction differences.
** Likewise Delta eta^(m-1) and Delta eta^(m) are h * sum_i b_i F_i.
*/
typedef struct pirk_ov {
  const char *name;   /* variant name for messages */
  long n, d;
  long B;             /* block size, d <= B <= n */
  long nb;            /* blocks, ceil(n / B) */
  long L;             /* row length of Ybar, (m-1) 2B + n */
  int s, m;
  int tiled;          /* 1: ...t variants, F buffer of B, l-loop over jj */
  double **rows;      /* s rows of Ybar, allocated one by one */
  double *Fb;         /* F buffer, B doubles (the "t" variants) */
  double *ring;       /* two blocks of sum_i b_i F_i^(m-1) (pp variants) */
} pirk_ov;

/*
** Components per RHS call in the untiled variants (PipeDb1m, ppDb1m). The
** thesis evaluates f_j one component at a time and applies it to all s
** target rows at once (loop order ..-jj-l); our RHS works on a component
** range and costs a call (and for BRUSS2D a grid-point lookup) per range,
** so f is evaluated for a short run of this many components, and each value
** is then applied to all s rows in jj-l order. The F buffer stays one cache
** line, not a block: that is what tells them apart from the t variants.
*/
#define PIRK_OV_RUN 8

/*
** applies() shared by the four variants: PIRK correctors only, and a
** limited access distance d < n. pipelined picks the wording.
*/
int pirk_ov_applies(const char *name, int pipelined, const odb_problem *p,
                    const odb_method *m, char *why, size_t nwhy);

/*
** Picks the block size (opts.block or the default), checks B >= d and, for
** the pipelined variants, at least m whole blocks (ODB_ERR_UNSUPPORTED with
** the numbers), and allocates Ybar and the buffers into s->vdata.
*/
odb_status pirk_ov_init(odb_solver *s, const char *name, int tiled,
                        int pipelined);
void pirk_ov_fini(odb_solver *s);

/*
** Block J of the corrector iterate Y^(r), r = 1..m, from Y^(r-1) (eta for
** r = 1). When r == m it also stores sum_i b_i F_i^(m-1) for the block into
** s1[0 .. len) (block-relative). Assumes blocks J-1, J, J+1 of Y^(r-1) are
** complete and that block J-2 of Y^(r-1) is no longer needed.
*/
void pirk_ov_corrector(odb_solver *s, pirk_ov *ov, int r, long J, double h,
                       double *s1);

/*
** Block J of the new solution: sums b_i F_i^(m) from Y^(m) in ynew, then
** ynew = eta + h sum, e = h sum - h s1, and adds sum (e/sk)^2 to *acc.
** Assumes blocks J-1, J, J+1 of Y^(m) are complete.
*/
void pirk_ov_finish(odb_solver *s, pirk_ov *ov, long J, double h,
                    const double *s1, double *acc);

#define PIRK_OV_MAX_STAGES 16   /* stages of the correctors supported */

/*
** Block kernels shared by the sequential (pirk_overlap.c, pirk_pp.c) and
** the parallel (par_spec.c) overlapped variants, so both compute the same
** arithmetic.
**
** pirk_ov_row_update: adds a * F[0..len) into dst for source stage i of S:
** assigns for the first stage, adds for the middle ones, and for the last
** one finishes dst = eta + h * (dst + a F).
*/
static inline void pirk_ov_row_update(double *restrict dst,
                                      const double *restrict F,
                                      const double *restrict eta, double a,
                                      double h, int i, int S, long len) {
  if (i == 0 && S == 1)
    for (long k = 0; k < len; ++k) dst[k] = eta[k] + h * (a * F[k]);
  else if (i == 0)
    for (long k = 0; k < len; ++k) dst[k] = a * F[k];
  else if (i < S - 1)
    for (long k = 0; k < len; ++k) dst[k] += a * F[k];
  else
    for (long k = 0; k < len; ++k) dst[k] = eta[k] + h * (dst[k] + a * F[k]);
}

/* acc[0..len) (= | +=) b F[0..len): the first stage assigns. */
static inline void pirk_ov_sum_update(double *restrict acc,
                                      const double *restrict F, double b,
                                      int i, long len) {
  if (i == 0)
    for (long k = 0; k < len; ++k) acc[k] = b * F[k];
  else
    for (long k = 0; k < len; ++k) acc[k] += b * F[k];
}

/*
** The untiled variants' jj-l order: each f value F[jj] goes into all S
** target rows at once (dst[l][jj]), with pirk_ov_row_update's arithmetic.
** dst[l], F and eta point at the run's first component.
*/
static inline void pirk_ov_apply_run(double *const *dst, const double *A,
                                     const double *F, const double *eta,
                                     double h, int i, int S, long len) {
  for (long jj = 0; jj < len; ++jj) {
    double f = F[jj], e = eta[jj];
    if (i == 0 && S == 1)
      dst[0][jj] = e + h * (A[0] * f);
    else if (i == 0)
      for (int l = 0; l < S; ++l) dst[l][jj] = A[l * S] * f;
    else if (i < S - 1)
      for (int l = 0; l < S; ++l) dst[l][jj] += A[l * S + i] * f;
    else
      for (int l = 0; l < S; ++l)
        dst[l][jj] = e + h * (dst[l][jj] + A[l * S + i] * f);
  }
}

#endif
