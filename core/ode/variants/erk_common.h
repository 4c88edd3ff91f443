/* erk_common.h - pieces shared by the explicit RK variants (private). */
#ifndef ODB_ERK_COMMON_H
#define ODB_ERK_COMMON_H

#include "odb_status.h"
#include "odb_ctx.h"
#include "odb_measure.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"

#define ERK_MAX_STAGES 16
#define ERK_CHUNK 1024   /* elements per pass of the linear combinations */

/* The nonzero terms of one linear combination sum_i coef_i F_i. */
typedef struct erk_terms {
  int n;
  int idx[ERK_MAX_STAGES];
  double coef[ERK_MAX_STAGES];
} erk_terms;

/*
** The data flow of a method with zero entries dropped: a[l] builds stage
** l's argument, b the new solution, e = b - bhat the error estimate.
*/
typedef struct erk_plan {
  int s;
  erk_terms a[ERK_MAX_STAGES];
  erk_terms b;
  erk_terms e;     /* n == 0 when the method has no bhat */
} erk_plan;

/* Fills p from m; fails for methods with more than ERK_MAX_STAGES stages. */
odb_status erk_plan_make(const odb_method *m, erk_plan *p);

/*
** out[k] = yp[k] + h * sum_t coef_t Fp[idx_t][k] for k < len (yp NULL: no
** yp term). Fp[i] points at element 0 of the range in F_i. Sums the terms
** in index order, one pass per term over out, so that every variant that
** uses it computes bit-identical values whatever its blocking.
*/
void erk_lc(double *restrict out, const double *restrict yp,
            const double *const *Fp, const erk_terms *t, double h, long len);

/*
** Bytes one plain-sweep step of p reads (*r) and writes (*w) over v bytes
** of components: a sweep per stage for the argument and one for f, then
** ynew and the estimate (erk_plain.c's order). The variants that compute
** a block with these sweeps (plain; the MPI variants of dist/ode on their
** block) count with it.
*/
void erk_plain_bytes(const erk_plan *p, double v, int stage0, double *r,
                     double *w);

/*
** The fused variant's sweeps (erk_fused.c), shared with the MPI variants
** of dist/ode, which run them on a rank's interior. erk_fused_make builds
** the plan and the window from s (its method, problem, the options block
** and streaming) and sets s->block; *out is set even on failure, for
** erk_fused_free. erk_fused_stage runs stage l >= 1 over the components
** [lo, hi): Y_l is formed in the window from y and the F_i on
** [lo - d, hi + d) clipped to [0, n), so those must be current; it writes
** F_l[lo, hi) and, for the last stage, ynew[lo, hi) and adds the range's
** error-norm share to *acc (F_{s-1} stays in the window unless the method
** is FSAL). erk_fused_bytes: one fused step's bytes over v bytes of
** components, as erk_plain_bytes.
*/
typedef struct fused_data fused_data;
odb_status erk_fused_make(odb_solver *s, fused_data **out);
void erk_fused_free(fused_data *fd);
void erk_fused_stage(odb_solver *s, fused_data *fd, int l, double h, long lo,
                     long hi, double *acc);
void erk_fused_bytes(const erk_plan *p, int fsal, double v, int stage0,
                     double *r, double *w);

/*
** The pipe variant's sweep (erk_pipe.c), shared with the MPI variant
** mpi_P, which runs it on a rank's block with halos deep enough for a
** whole step. erk_pipe_make builds the plan, the rings and the windows
** from s (its method, problem and the option block) and sets s->block;
** *out is set even on failure, for erk_pipe_free. erk_pipe_sweep runs one
** attempt's stages over [a, b): stage l on [a - (s-1-l)d, b + (s-1-l)d)
** clipped to [0, n), reading y on [a - sd, b + sd) and taking F_0 as given
** on [f0a, f0b) (computed from y elsewhere, into F_0); it writes ynew[a, b)
** (under FSAL, where the last stage forms its argument in ynew, also d
** beyond, with the values whoever owns those components computes there;
** and F_{s-1}[a, b)) and adds the range's error-norm share to *acc. erk_pipe_bytes: one step's bytes over v bytes of components.
*/
typedef struct pipe_data pipe_data;
odb_status erk_pipe_make(odb_solver *s, pipe_data **out);
void erk_pipe_free(pipe_data *pd);
void erk_pipe_sweep(odb_solver *s, pipe_data *pd, double h, long a, long b,
                    long f0a, long f0b, double *acc);
void erk_pipe_bytes(int fsal, double v, int stage0, double *r, double *w);

/*
** What the window variants (fused, pipe) need: an explicit RK method of two
** or more stages and a limited access distance (d < n). 1 when p and m
** have it, else 0 with the reason, naming the variant, in why.
*/
int erk_window_applies(const char *name, const odb_problem *p,
                       const odb_method *m, char *why, size_t nwhy);

/* Adds sum_k (e_k / sk_k)^2, sk = atol + rtol max(|y|,|ynew|), to *acc. */
void erk_norm_acc(const double *e, const double *y, const double *ynew,
                  long len, double atol, double rtol, double *acc);

#endif
