/* par_common.h - pieces shared by the general parallel PIRK variants. */
#ifndef ODB_PAR_COMMON_H
#define ODB_PAR_COMMON_H

#include "odb_status.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_team.h"

/*
** The general parallel variants of the thesis (Table 9.1): parallelism
** across the system only. A persistent team (odb_team, one pinned thread per
** core) splits the n components block-wise (the first n mod p threads get
** ceil(n/p)); thread q computes every vector only on its own range
** [lo[q], lo[q+1]) and may read any component of the shared argument
** vectors, because f is arbitrary. Notation as in pirk_common.h: l the
** target stage, i the source stage, j the component, k the corrector step:
**   Y_l^(0) = eta,  Y_l^(k) = eta + h sum_i a_li f(t + c_i h, Y_i^(k-1)),
**   eta_new = eta + dEta^(m),  dEta^(k) = h sum_i b_i f(t + c_i h, Y_i^(k)),
**   e = dEta^(m) - dEta^(m-1),  err = sqrt(mean((e_j / sk_j)^2)).
**
** Two storage schemes:
**  - F scheme (A, E, EAblock): F^(k-1) and F^(k) (two s x n matrices) and
**    the argument vectors Y_0..Y_{s-1} (s x n). The thesis keeps one shared
**    Y in R^n, which taken literally needs a barrier after building each Y_l
**    and another after evaluating f(Y_l): 2s barriers per corrector step.
**    We keep one argument vector per stage instead (s - 1 extra vectors),
**    which gives the 2 barriers per corrector step of the thesis's Table
**    9.1 and of its pruning rule (m * 2 T_bar): one after all Y_l are built
**    (f reads any component of them), one after all f(Y_l) are evaluated
**    (the next step overwrites the Y_l). The last corrector step needs no
**    second barrier (the final sums read only the thread's own F slices):
**    2m - 1 barriers per attempt.
**  - Y scheme (D and everything derived from it): Y^(k-1) and Y^(k) (two
**    s x n matrices, swapped per step by parity) and dEta^(m-1); one
**    barrier at the start of every corrector step k >= 1 and one before the
**    final evaluation on Y^(m): m barriers per attempt.
** The barrier is the flag barrier after Cheng & Carter (the thesis's).
**
** Error norm: each thread sums (e_j / sk_j)^2 over its own range into its
** own padded slot; the caller adds the slots in thread order 0..p-1 after
** the run, so the result is deterministic for a given p (it differs from a
** single-thread sum only by rounding).
**
** First touch: every matrix and per-thread buffer is allocated in init and
** first written inside the team by the thread that owns the slice (in the
** order the step uses them), so on ccNUMA machines the pages lie on the
** owner's node. s->y and s->ynew belong to the solver and were touched
** serially already (initial value, first-step guess).
*/

#define PAR_MAX_STAGES 16

typedef struct par_data par_data;

/* The work of thread tid in one attempt. */
typedef void (*par_kernel)(par_data *d, int tid);

typedef enum par_scheme { PAR_FSCHEME, PAR_YSCHEME } par_scheme;

/* What distinguishes one parallel variant from the others. */
typedef struct par_spec {
  const char *name;          /* registry name, "par_A" */
  par_scheme scheme;
  int local;                 /* per-thread buffer: 0 none, 1 B doubles (the
                                F tile), 2 ceil(n/p) doubles (Y_local) */
  int blocked;               /* 1: tiles of B components */
  int ws_extra;              /* tile working set (s + ws_extra) B + 2d */
  par_kernel kernel;
} par_spec;

/* A double alone on its cache line. */
typedef struct par_slot {
  _Alignas(64) double v;
} par_slot;

struct par_data {
  const par_spec *spec;
  odb_team *team;
  const odb_problem *prob;
  const double *A, *b, *c;   /* the corrector's tableau */
  int p, S, m;
  long n, B;                 /* B: tile size (0 for untiled variants) */
  long *lo;                  /* p + 1 range boundaries */
  double *mat[2];            /* two s x n matrices; row i at mat[x] + i n */
  double *Yarg;              /* F scheme: the s argument vectors (s x n) */
  double *deta1;             /* Y scheme: dEta^(m-1) (n) */
  double **loc;              /* p per-thread buffers of loc_len doubles */
  long loc_len;
  par_slot *err;             /* p partial sums of (e/sk)^2 */
  double atol, rtol;
  /* the attempt in progress */
  double t, h;
  const double *eta;
  double *ynew;
};

/* applies(): PIRK correctors with at most PAR_MAX_STAGES stages. */
int par_applies(const char *variant, const odb_method *m, char *why,
                size_t nwhy);
/* init(): threads, team, block size, buffers, parallel first touch. */
odb_status par_init(odb_solver *s, const par_spec *spec);
void par_fini(odb_solver *s);
/* attempt(): runs spec->kernel on the team, then reduces the error. */
odb_status par_attempt(odb_solver *s, double h, double *err);

/* Row i (n doubles) of an s x n matrix. */
static inline double *par_row(double *mat, int i, long n) {
  return mat + (long)i * n;
}

/* Thread tid's range [*a, *b). */
static inline void par_range(const par_data *d, int tid, long *a, long *b) {
  *a = d->lo[tid];
  *b = d->lo[tid + 1];
}

/*
** f_j(tc, src) for j in [j0, j1) into out[0..j1-j0), src a full argument
** vector. Does nothing for an empty range.
*/
static inline void par_f(const par_data *d, double tc, const double *src,
                         double *out, long j0, long j1) {
  if (j0 < j1) d->prob->rhs(d->prob, tc, src, 0, out, j0, j1);
}

/*
** Y scheme, one source value F = h f_j(Y_i) of component j: adds a_li F to
** every target row l of cur (i == 0: sets them to eta_j + a_l0 F), and at
** the last corrector step (deta1 != NULL) to dEta^(m-1)_j.
*/
static inline void par_scatter(const par_data *d, double *cur, int i, long j,
                               double F, double *deta1) {
  const double *a = d->A + i;
  long n = d->n;
  int S = d->S;
  if (i == 0) {
    double e = d->eta[j];
    for (int l = 0; l < S; ++l) cur[l * n + j] = e + a[l * S] * F;
    if (deta1) deta1[j] = d->b[0] * F;
  } else {
    for (int l = 0; l < S; ++l) cur[l * n + j] += a[l * S] * F;
    if (deta1) deta1[j] += d->b[i] * F;
  }
}

/*
** Y scheme, a tile of source values Fb[0..j1-j0) = h f_j(Y_i), j in
** [j0, j1): the l loop outside, the tile loop inside (k-...-l-jj), with
** the same per-element arithmetic as par_scatter.
*/
static inline void par_scatter_tile(const par_data *d, double *cur, int i,
                                    long j0, long j1, const double *Fb,
                                    double *deta1) {
  long n = d->n, len = j1 - j0;
  int S = d->S;
  for (int l = 0; l < S; ++l) {
    double c = d->A[l * S + i], *row = cur + l * n + j0;
    if (i == 0) {
      const double *e = d->eta + j0;
      for (long q = 0; q < len; ++q) row[q] = e[q] + c * Fb[q];
    } else {
      for (long q = 0; q < len; ++q) row[q] += c * Fb[q];
    }
  }
  if (deta1) {
    double c = d->b[i], *r = deta1 + j0;
    if (i == 0)
      for (long q = 0; q < len; ++q) r[q] = c * Fb[q];
    else
      for (long q = 0; q < len; ++q) r[q] += c * Fb[q];
  }
}

/*
** One corrector step of a Y-scheme variant on thread tid's range [a, b):
** src[i] is the argument vector of source stage i (eta at k = 0, else row
** i of Y^(k)), cur the matrix Y^(k+1) to build, deta1 the dEta^(m-1)
** vector at the last step (NULL before).
*/
typedef void (*par_corr_fn)(par_data *d, int tid, const double *const *src,
                            double *cur, double *deta1, long a, long b);
/* The final sweep: ynew[a, b) = dEta^(m) = sum_i b_i h f(Y^(m)_i). */
typedef void (*par_final_fn)(par_data *d, int tid, const double *Ym, long a,
                             long b);

/*
** The Y-scheme step (D family): m corrector steps with a barrier before
** every one but the first, a barrier, the final sweep, par_finish_y. Y^(k)
** lives in mat[(k - 1) & 1] (Y^(1) in mat[0]).
*/
void par_yscheme_step(par_data *d, int tid, par_corr_fn corr,
                      par_final_fn fin);

/*
** Y scheme, end of the step on thread tid's range: ynew holds dEta^(m);
** computes e = dEta^(m) - dEta^(m-1), ynew = eta + dEta^(m) and the
** thread's sum of (e_j / sk_j)^2.
*/
void par_finish_y(par_data *d, int tid);

/*
** F scheme, end of the step on thread tid's range from F^(m) (cur) and
** F^(m-1) (prev): dEta^(m), dEta^(m-1), ynew and the error sum.
*/
void par_finish_f(par_data *d, int tid, const double *cur,
                  const double *prev);

#endif
