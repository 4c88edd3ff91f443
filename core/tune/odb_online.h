/* odb_online.h - online tuning during the first steps of a real integration. */
#ifndef ODB_ONLINE_H
#define ODB_ONLINE_H

#include "odb_blockmodel.h"
#include "odb_solver.h"
#include "odb_tune_solver.h"
#include "odb_tuner.h"

/*
** The thesis's self-adaptive solver (Ch. 7.5, 8.4, 9.3): the first time
** steps of a real integration are computed by the candidate
** configurations (variant x block x threads x the integer variant options
** of a space, as for odb_tune_solver) one after the other, each step
** advancing the solution; then the fastest runs the rest.
**
** Switching: the solver itself changes variant between steps with
** odb_solver_set_variant_opts (its state y, t, the proposed step and its
** statistics stay; the variant's workspace is made anew), so no state is
** ever copied to switch. A configuration's variant options are, as for
** odb_tune_solver, the solver's starting options that its variant declares
** and the space does not tune, then the tuned ones its variant declares; a
** variant that does not declare a tuned option runs only with its first
** value. A switch the variant refuses (a distributed variant whose layout
** does not fit on the active ranks given) leaves the solver on the
** settings it ran, and the candidate failed.
**
** Across ranks (odb_tune_ranks set, more than one rank): the tuner runs on
** every rank of an SPMD run, and each step's seconds, each check's error
** and each barrier cost are the maximum over the ranks, so that every rank
** sees the slowest rank's figures, makes the same choices and switches at
** the same step (the distributed variants' exchanges, error norm and
** gather are collectives). The choice of the active ranks (the option
** `ranks`) is so the self-adaptive solver of the thesis's §10.3 choosing
** the number of processes. The tuning database is written, not read, as
** for offline tuning across ranks. The tuner's ask/tell interface proposes the
** candidates with the strategy "online" (odb_blockmodel.h: model-guided
** block sizes, barrier-free variants first, barrier-cost pruning) or any
** other strategy.
**
** The first step of an adaptive integration (it picks the initial step
** size, and may land near the stability limit) is taken by the solver's
** own variant, untimed, as in the thesis (8.4.3).
**
** One candidate: switch (not timed); `warmup` steps that are not timed
** (the workspace is new, its pages are touched for the first time); then
** `timed` steps, each timed alone over all its attempts (rejections
** included, thesis 8.4.3) and divided by the attempts: the median is the
** candidate's seconds per step (one "step" below is one attempt). A
** candidate whose warm-up step already took more than `hopeless` times the
** best seconds per step is recorded from that step alone (a cold step
** after a switch measured 1.0-1.65 times a warm one here, so 2 spares
** every candidate within 20% of the best). The steps stop at t1; the
** search ends early when t1 is reached.
**
** Verification: the first step of every candidate is compared with the
** same step (same state, same h) computed by a reference, after the
** candidate's timed steps (so that the reference does not stir the caches
** in between), relative max-norm error against odb_tune_ode_tolerance(1,
** s, m). Two ways:
**  - windows (the default where the access distance is limited: four
**    windows with their reach cover at most an eighth of n): the new
**    solution on both ends, around a tile boundary of the candidate's
**    block and, for a thread team, around a thread boundary (the interior
**    positions move from candidate to candidate), computed from the
**    formulas by odb_stepcheck; a small part of a step.
**  - full: a reference solver takes the whole step: the reference variant
**    (A for PIRK methods, plain for explicit RK) at first, later the
**    fastest candidate that passed (trust passes on: each link is checked
**    against the tolerance, far below the differences a wrong variant
**    makes). When that reference runs a thread team, the driver waits
**    until the team has parked (about 1 ms) before going on, so that its
**    spinning workers do not slow the next candidate.
** A candidate that fails is rejected, never chosen, and its step is redone
** by the reference variant (the candidate's later steps are dropped), so
** the solution never keeps a wrong step.
**
** Second look (not in the thesis): single-step timings on a busy machine
** differ by 10% and more from run to run, so when the search has ended the
** `finalists` best candidates within 10% of the best run again (a warm-up
** step after the switch, then `timed` steps; real steps), the worst first,
** so that the likely winner needs no switch afterwards; each one's first
** median counts as one more sample, and the lowest merged median wins.
**
** Overhead (thesis eq. 9.4): the tuning phase took `seconds` for
** `attempts` attempted steps; the winner takes best_step per attempt, so
** the phase cost overhead_steps = seconds / best_step - attempts more
** steps' worth of time than running the winner all along would have
** (rejected attempts are work any run does). Barrier profiling (done
** offline at install time in the thesis) is reported apart.
*/
typedef struct odb_online odb_online;

typedef struct odb_online_opts {
  const char *strategy;  /* NULL: "online" */
  int warmup;            /* untimed steps per candidate; 0: 1; < 0: none */
  int timed;             /* timed steps per candidate; 0: 1 */
  double hopeless;       /* factor; 0: 2; < 0: off */
  int finalists;         /* second look at the best within 10%; 0: 3;
                            < 2: none */
  int verify;            /* 0: verify, windows where cheap (default);
                            1: verify in full; -1: never */
  odb_tune_solver_verify_fn verify_fn;  /* replaces the comparison (full) */
  void *verify_ud;
  const char *reference; /* NULL: "A" for PIRK, "plain" for explicit RK */
  double barrier;        /* > 0: seconds per barrier for every p; 0:
                            measured once per team size */
  odb_tune_budget budget;
  int has_seed;
  uint64_t seed;
  odb_tunedb *db;        /* NULL: nothing stored or reused */
  odb_tune_eval_fn on_eval;
  void *on_eval_ud;
  const char *label;
  /* resolves the space's variant names; NULL: odb_variant_find */
  const odb_variant *(*lookup)(void *ud, const char *name);
  void *lookup_ud;
} odb_online_opts;

/* Figures of the tuning phase. */
typedef struct odb_online_report {
  long steps;            /* S_at: steps taken while tuning (accepted) */
  long attempts;         /* attempted steps (rejections included) */
  long warmup_steps;     /* of the steps: warm-up steps */
  double seconds;        /* T_at: wall time of the tuning phase: switching,
                            steps, verification; profiling excluded */
  double step_seconds;   /* of it: inside the candidates' steps */
  double switch_seconds; /* of it: odb_solver_set_variant */
  double verify_seconds; /* of it: reference steps, comparisons, waits */
  double profile_seconds;/* barrier profiling (not in seconds) */
  double best_step;      /* the winner's seconds per step */
  double overhead_steps; /* seconds / best_step - attempts */
  double t;              /* time reached at the end of the phase */
  int finished;          /* 1: the search ended; 0: t1 came first */
  long candidates;       /* valid configurations of the space */
  long evaluated, rejected, failed;
  odb_model_report model;   /* groups, pruned, hopeless (strategy online) */
  int second_looks;      /* finalists run again */
  char winner[256];      /* "variant=ppDb1mt block=512" or "" */
  char finalists[512];   /* "config first>merged; ..." (seconds per step) */
} odb_online_report;

/*
** Makes the tuner for solver s over space (parameters variant, block,
** threads and integer variant options, checked by odb_solver_space_check;
** the applicability constraints are added to space, which must outlive
** ol; s too). Fails like odb_tune_solver_create and odb_tuner_create
** (empty space, a value of an option a variant does not allow, nothing
** valid, unknown strategy).
*/
odb_status odb_online_create(odb_solver *s, odb_space *space,
                             const odb_online_opts *o, odb_online **out);
void odb_online_destroy(odb_online *ol);

/*
** The tuning phase: real steps of s toward t1 (> s->t) by the candidates,
** then s switched to the winner (to its starting variant when none
** passed). Returns ODB_INTERRUPTED on a stop request (s then runs the
** best so far). Call once.
*/
odb_status odb_online_tune(odb_online *ol, double t1);
/* odb_online_tune, then the rest of [t, t1] with the winner; stats covers
   the whole interval (steps, seconds, ...). */
odb_status odb_online_integrate(odb_online *ol, double t1,
                                odb_solve_stats *stats);

odb_tuner *odb_online_tuner(const odb_online *ol);
/* 1 when candidates are checked on windows, 0 in full or not at all. */
int odb_online_windowed(const odb_online *ol);
void odb_online_get_report(const odb_online *ol, odb_online_report *out);

#endif
