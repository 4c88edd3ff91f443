/* odb_tune_types.h - what the tuner and the tuning database share: the key
   a result is stored under, the target it was measured on, and one
   evaluated configuration with its status. Both odb_tuner.c and
   odb_tunedb.c include this, so neither includes the other's header for
   these types (the tuner stores into the database; the database never
   calls the tuner). */
#ifndef ODB_TUNE_TYPES_H
#define ODB_TUNE_TYPES_H

#include "odb_measure.h"
#include "odb_space.h"

struct odb_solver;

/*
** What a tuning result is valid for; the tuning database keys entries by it
** (with the machine's fingerprint and the odebench version). Empty strings
** are allowed, NULL means "".
*/
typedef struct odb_tune_key {
  const char *problem;   /* "bruss2d" (or the kernel's operation) */
  const char *size;      /* "bruss2d(N=128) n=32768" */
  const char *method;    /* "radau1a5 m=4"; "" when none */
  const char *family;    /* what is tuned: "solver/cpu", a kernel's name */
  const char *params;    /* anything else the timing depends on: "steps=3" */
  const char *code_hash; /* hash of the code under test */
} odb_tune_key;

/*
** A tuning target: a space and the functions that evaluate one valid
** configuration. A GPU kernel declares its space, a run function and a
** check, nothing else. run may be NULL for a target that is only driven
** through odb_tuner_next/odb_tuner_tell (online tuning).
**   setup    (optional) prepares c (allocates, compiles); not timed.
**   check    (optional) runs c once and compares with the reference:
**            *err is the error, *tol the tolerance; err <= tol passes.
**            A configuration that fails is rejected, logged and never
**            timed or chosen.
**   run      (required) one timed evaluation of c: *seconds it took.
**   teardown (optional) undoes setup; called whenever setup succeeded.
** A function that returns ODB_ERR_UNSUPPORTED, ODB_ERR_NOMEM,
** ODB_ERR_BACKEND, ODB_ERR_NONFINITE, ODB_ERR_STEP_SIZE or
** ODB_ERR_MAX_STEPS marks c as failed (with the message) and the search
** goes on; any other failure (ODB_ERR_ARG from a Lua callback that raised,
** ODB_INTERRUPTED, ...) ends the search with that status.
*/
typedef struct odb_tune_target {
  const odb_space *space;
  odb_tune_key key;
  void *ud;
  odb_status (*setup)(void *ud, const odb_config *c);
  odb_status (*check)(void *ud, const odb_config *c, double *err,
                      double *tol);
  odb_status (*run)(void *ud, const odb_config *c, double *seconds);
  void (*teardown)(void *ud, const odb_config *c);
  /* the solver whose implementation is tuned (n, d, stages, m for model-
     guided strategies), or NULL */
  const struct odb_solver *solver;
} odb_tune_target;

typedef enum odb_tune_status {
  ODB_TUNE_OK = 0,       /* verified (or not checked) and timed */
  ODB_TUNE_REJECTED,     /* verification failed: err > tol */
  ODB_TUNE_FAILED,       /* setup, check or run failed (msg says why) */
  ODB_TUNE_SKIPPED       /* the UI asked to skip it; not stored */
} odb_tune_status;

/* "ok", "rejected", "failed", "skipped". */
const char *odb_tune_status_name(int status);
/* The status called name, -1 when unknown. */
int odb_tune_status_parse(const char *name);

/* One evaluated configuration. */
typedef struct odb_tune_eval {
  odb_config cfg;
  int status;            /* odb_tune_status */
  odb_measurement m;     /* median, spread, reps ... (status ok only) */
  double err, tol;       /* verification; NAN when not verified */
  int cached;            /* 1: taken from the tuning database */
  double seconds;        /* wall time spent on it (0 when cached) */
  double at;             /* Unix time it completed */
  char msg[160];         /* why it was rejected or failed */
} odb_tune_eval;

#endif
