/* odb_tune_solver.h - a tuning target made of a solver's variants. */
#ifndef ODB_TUNE_SOLVER_H
#define ODB_TUNE_SOLVER_H

#include "odb_solver.h"
#include "odb_tuner.h"

/*
** Tunes the implementation of a solver: its space may hold the parameters
**   variant  (an enumeration of variant names),
**   block    (block sizes of blocked variants, >= 1),
**   threads  (threads of parallel variants, >= 1),
**   and integer options that variants declare (odb_variant.opts), by the
**   option's name: `ranks`, the active ranks of the distributed variants.
**   Every value must be one each variant of the space that declares the
**   option allows; a configuration whose variant does not declare it runs
**   only with its first value (the others would repeat it), and a variant
**   gets the option only when it declares it. Without a variant parameter
**   the solver's own variant must declare it.
** The method's corrector steps m change its order and are not a tuning
** parameter. One evaluation runs `steps` fixed steps of size h from the
** state the solver had when the target was made, in a solver created for
** the configuration (setup, not timed). Verification runs the same steps
** once and compares the state with the reference variant's (A for PIRK
** methods, plain for explicit RK) from the same state: relative max-norm
** error against odb_tune_ode_tolerance(steps, s, m).
*/
typedef struct odb_tune_solver odb_tune_solver;

/* Custom comparison of a configuration's state y with the reference. */
typedef odb_status (*odb_tune_solver_verify_fn)(void *ud, const odb_config *c,
                                                const double *y,
                                                const double *yref, long n,
                                                double *err, double *tol);

typedef struct odb_tune_solver_opts {
  int steps;             /* fixed steps per evaluation; 0: 3 */
  double h;              /* 0: the solver's fixed h, else the step it
                            proposes, else the step an adaptive step of the
                            reference variant takes from the state */
  const char *reference; /* NULL: "A" for PIRK, "plain" for ERK */
  odb_tune_solver_verify_fn verify;   /* NULL: max-norm comparison */
  void *verify_ud;
} odb_tune_solver_opts;

/* Where the parameters of a solver's tuning space are (-1: absent). */
#define ODB_SOLVER_MAX_VOPTS 4
typedef struct odb_solver_space {
  int ivariant, iblock, ithreads;
  int nvopt;                          /* variant options tuned */
  int ivopt[ODB_SOLVER_MAX_VOPTS];    /* their parameter indices */
} odb_solver_space;

/*
** Checks that every parameter of sp is one a solver can take (variant: a
** list of names that lookup knows (NULL: the registry); block, threads:
** integers >= 1; an integer option a variant of the space declares, or
** base where the space has no variant parameter (base may be NULL), each
** value allowed by every variant that declares it), naming m specially,
** and notes where they are.
*/
odb_status odb_solver_space_check(const odb_space *sp,
                                  const odb_variant *(*lookup)(void *ud,
                                                               const char *name),
                                  void *ud, const odb_variant *base,
                                  odb_solver_space *where);

/*
** Makes the target. Fails with ODB_ERR_ARG for a parameter other than
** variant, block, threads and the variants' options (naming m specially)
** or values they do not allow,
** ODB_ERR_NAME for an unknown variant name. Adds to space a constraint
** that the variant applies to the problem and method and runs on the
** solver's backend, so such variants are never counted or run. Computes
** the reference state now. base, space and o's callback data must outlive
** the target; base's state is read, never changed.
*/
odb_status odb_tune_solver_create(odb_solver *base, odb_space *space,
                                  const odb_tune_solver_opts *o,
                                  odb_tune_solver **out);
void odb_tune_solver_destroy(odb_tune_solver *ts);
/* The target to hand to odb_tuner_create (owned by ts). */
const odb_tune_target *odb_tune_solver_target(const odb_tune_solver *ts);
/* The step size and step count one evaluation uses. */
double odb_tune_solver_h(const odb_tune_solver *ts);
int odb_tune_solver_steps(const odb_tune_solver *ts);
/*
** Appends to a key's params (used of len bytes taken) the solver options
** o that the space sp does not tune (parameters ivopt[0..nvopt)) and, in
** a run across more than one rank, " mpi=R": the tuning database keeps the
** timings of different run sizes apart.
*/
void odb_tune_key_extras(char *params, size_t len, size_t used,
                         const odb_solver_opts *o, const odb_space *sp,
                         const int *ivopt, int nvopt);
/*
** The constraint both solver tunings put on variant options: 1 unless c
** sets one of the option parameters ivopt[0..nvopt) of sp away from its
** first value while c's variant v (NULL: unknown) does not declare that
** option (the other values would run the same configuration again).
*/
int odb_tune_vopts_apply(const odb_space *sp, const odb_config *c,
                         const odb_variant *v, const int *ivopt, int nvopt);
/* The solver of the configuration being evaluated (between setup and
   teardown), or NULL. */
odb_solver *odb_tune_solver_current(const odb_tune_solver *ts);

#endif
