/* odb_problem.h - registered initial value problems y' = f(t, y). */
#ifndef ODB_PROBLEM_H
#define ODB_PROBLEM_H

#include <stddef.h>

#include "odb_param.h"

typedef struct odb_problem odb_problem;

/*
** Evaluates f_j(t, y) for components j in [j0, j1) into f[j - j0].
** y holds the argument vector from component yoff on: y[k] is component
** yoff + k, and it is valid for every component in
** [max(0, j0 - d), min(n, j1 + d)), d the access distance. This lets a
** fused variant pass a small window instead of the whole vector.
*/
typedef void (*odb_rhs_fn)(const odb_problem *p, double t, const double *y,
                           long yoff, double *f, long j0, long j1);

struct odb_problem {
  const struct odb_problem_type *type;
  long n;                 /* system size */
  long d;                 /* access distance; n means unlimited */
  double t0, t1;          /* the problem's usual interval */
  double flops_per_comp;  /* flops of one f_j, for GFLOP/s figures */
  /*
  ** The times where f jumps, ascending and finite (filled by setup; NULL
  ** and 0: none). f at a stop belongs to the piece before it (MEDAKZO's
  ** phi(t) = 2 for t <= 5): the solver steps exactly onto each stop and
  ** starts again just after it with a fresh step-size choice
  ** (odb_solver_integrate), so that no error estimate is asked to see
  ** the jump. The array outlives the problem's use (static, or in data).
  */
  const double *tstops;
  int ntstops;
  odb_rhs_fn rhs;
  void (*initial)(const odb_problem *p, double *y0);   /* y0[0..n) */
  const char *gpu_source; /* CUDA C of f_j for runtime compilation, or NULL */
  /*
  ** The FP64 instructions (DFMA, DADD, DMUL, one each) of one f_j of
  ** gpu_source and of one cell of gpu_cell_source (all grid_comps
  ** components of the cell; _lag1: compiled with ODB_LAG 1, where a source
  ** may take another form, 0 there: the same as gpu_fp64_cell), counted by
  ** hand from the source as NVRTC compiles it: a * b + c contracted into
  ** one fused multiply-add (--fmad=true), expressions of the constants
  ** ODB_P0..7 folded, a branch counting its own path. The GPU generator
  ** counts a step's FP64 instructions from them (gpu/ode/gen_rk_*.c,
  ** docs/gpu.md "the compute roof"); 0: unknown, and no FP64 floor is
  ** claimed for a kernel that evaluates that source.
  */
  double gpu_fp64_per_comp;
  double gpu_fp64_cell, gpu_fp64_cell_lag1;
  /*
  ** Problems on a 2-D grid with a radius-1 stencil (5 or 9 points): component c
  ** of cell (i, j) is y[K (i cols + j) + c], i < rows, j < cols, K comps.
  ** gpu_cell_source defines odb_rhs_cell (see gpu/ode/odb_gen_rk.c,
  ** gpu_stream2d); NULL: the problem offers no cell form. It reads only
  ** cells inside the grid (ODB_Y(di, dj, c) with i + di and j + dj in
  ** range: it handles its edges itself, as BRUSS2D mirrors them). It sees
  ** ODB_NR, ODB_NC and ODB_K (rows, cols, comps), ODB_P0..7 (param) and
  ** ODB_LAG (1: each stage reads the row below, di = +1, as the stage
  ** before has just formed it; a cell may take that row last). 2 <= rows,
  ** 2 <= cols, 1 <= K <= 8.
  */
  const char *gpu_cell_source;
  long grid_rows, grid_cols;
  int grid_comps;
  /*
  ** A slab of a larger grid (the GPU ranks, dist/ode/dist_gpu.c): rows
  ** [grid_own0, grid_own1) are this process's own and the only ones whose
  ** cells count in a step's error norm; the rows around them are halo
  ** rows that a step recomputes and the caller discards. 0 and 0: every
  ** row is the problem's own.
  */
  long grid_own0, grid_own1;
  /* 1: odb_rhs_cell reads no diagonal neighbour (ODB_Y(di, dj, c) with di
     or dj 0, a 5-point star), which lets gpu_stream2d run a stage one row
     behind the one before (lag 1) or synchronise a block every second pass
     (lag 2); 0: it may read all 9 cells */
  int grid_star;
  /*
  ** NULL, or: 1 with the message in msg[0..len) when an evaluation of f
  ** failed since the last call (a scenario's f raised an error; that
  ** evaluation gave NaN), and the failure is then cleared; 0 otherwise.
  ** The solver asks after every step attempt and reports the failure
  ** instead of a non-finite state or a step size that shrank away.
  */
  int (*take_failure)(const odb_problem *p, char *msg, size_t len);
  double param[8];        /* resolved parameter values, in decl order */
  char fkey[13];          /* problems defined in a scenario: 12 hex digits
                             of the SHA-256 of f's code (its label does not
                             change with f), or "" */
  void *data;             /* problem-private data, freed with free() */
  char label[96];         /* "bruss2d(N=128)" */
};

/* The kind name of problems defined in a scenario (ob.problem{...}): their
   label does not tell their f, y0 or source apart. */
#define ODB_PROBLEM_USER "user"

/* A problem kind in the registry. */
typedef struct odb_problem_type {
  const char *name;
  const char *doc;
  const odb_param_decl *params;
  int nparams;
  /* fills p from the resolved parameter values (p->param is already set) */
  odb_status (*setup)(odb_problem *p);
} odb_problem_type;

/* Registry: the built-in problems. */
int odb_problem_type_count(void);
const odb_problem_type *odb_problem_type_at(int i);
const odb_problem_type *odb_problem_type_find(const char *name);

/*
** Creates a problem by name with the given parameter values. Unknown names
** fail with ODB_ERR_NAME and a message listing the valid names; bad
** parameters fail with ODB_ERR_ARG.
*/
odb_status odb_problem_create(const char *name, const odb_param_value *given,
                              int ngiven, odb_problem **out);
void odb_problem_destroy(odb_problem *p);
/*
** The problem's part of a tuning-database key: "<label> n=<n>", and for a
** problem defined in a scenario " f=<fkey>" when its f's code could be
** read and " src=<12 hex digits of its SHA-256>" with a GPU source (its
** label changes with neither).
*/
void odb_problem_key(const odb_problem *p, char *buf, size_t len);
/* Evaluates f over all components: y and f are full vectors of length n. */
void odb_problem_rhs_full(const odb_problem *p, double t, const double *y,
                          double *f);

/* The built-in problem kinds (one file each under core/problems/). */
extern const odb_problem_type odb_problem_bruss2d;

#endif
