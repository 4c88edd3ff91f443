/* odb_solver.h - problem + method + backend + variant: stepping and integration. */
#ifndef ODB_SOLVER_H
#define ODB_SOLVER_H

#include "odb_backend.h"
#include "odb_method.h"
#include "odb_problem.h"

typedef struct odb_solver odb_solver;
typedef struct odb_variant odb_variant;

/* Options of a solver. Zero means "the default" for every number. */
typedef struct odb_solver_opts {
  double rtol, atol;     /* default 1e-6 both */
  double safety;         /* default 0.9 */
  double fac_min;        /* smallest step ratio, default 0.2 */
  double fac_max;        /* largest step ratio, default 5 */
  double h0;             /* first step; 0: chosen by Hairer's algorithm */
  double h_fixed;        /* > 0: fixed-step integration with this h */
  double hmin;           /* smallest step before ODB_ERR_STEP_SIZE; default
                            1e-14 * |t1 - t0| */
  long max_steps;        /* attempted steps per integrate; default 10^8 */
  long block;            /* block size of blocked variants; 0: variant's own */
  int streaming;         /* non-temporal stores: 0 auto, 1 on, -1 off */
  int m;                 /* PIRK corrector steps; 0: the method's default */
  int threads;           /* threads of parallel variants; 0: all cores */
  int sync;              /* fixed steps on a device: 0 (the default) or
                            ODB_SYNC_STEP reads the error norm back and
                            checks the state after every step;
                            ODB_SYNC_CALL only after the last
                            step of each integrate call (no host round trip
                            between steps; a non-finite state is found then).
                            Adaptive steps: ODB_SYNC_STEP keeps the step
                            controller on the host (the norm comes back
                            every attempt); 0 puts it on the device where
                            the variant has one by default (advance,
                            advance_default), ODB_SYNC_CALL asks for it
                            (an error where there is none) */
  /*
  ** Options of the variant, by name: those it declares (odb_variant.opts,
  ** e.g. the tile configuration of a tiled GPU variant), checked against
  ** its declarations when the solver is made and handed to it untouched;
  ** a variant that declares none refuses any. The solver keeps its own
  ** copy (s->opts.vopts points at it), so the caller's list need only
  ** last through odb_solver_create.
  */
  const odb_param_value *vopts;
  int nvopts;
} odb_solver_opts;

#define ODB_SYNC_STEP 1
#define ODB_SYNC_CALL 2

/* Figures of one integrate call (or of the steps since the last reset). */
typedef struct odb_solve_stats {
  long steps;            /* attempted steps */
  long accepted, rejected;
  long nfev;             /* full RHS evaluations (stage sweeps) */
  double seconds;        /* wall time of the stepping, setup excluded */
  double rbytes, wbytes; /* bytes the variant must read / write, summed */
  double flops;          /* flops of RHS and linear combinations, summed */
  double t, h;           /* time reached, last step size used */
  double err_last;       /* last weighted error norm (0 for fixed steps) */
  odb_status status;     /* ODB_OK, ODB_INTERRUPTED, ODB_ERR_STEP_SIZE, ... */
} odb_solve_stats;

/* d = b - a for the counters (steps, evaluations, bytes, flops) of two
   running totals of the same solver, a taken before b; the rest of d
   (time reached, step size, status, ...) is b's. */
void odb_solve_stats_delta(const odb_solve_stats *a, const odb_solve_stats *b,
                           odb_solve_stats *d);

/*
** One batch of adaptive attempts with the step controller on the device
** (odb_variant.advance). In: the integration's end t1 (a rest below t_eps
** merges into the step that reaches it), hmin, the attempts allowed, the
** attempts to queue (the variant may queue fewer), and capped (an attempt
** of the current step was rejected: the next factor stays at most 1).
** Out: the counts, the time reached, the proposed next h, the last
** attempt's h and norm, capped, swapped (the state is now in s->ynew: the
** caller swaps y and ynew, and under fsal_ready F[0] and F[s-1]),
** fsal_ready (F[0] holds f(t, y) then) and first_stage0 (for the counts).
** Why the device stopped needs no word: the caller's loop finds t1, hmin
** and max_steps from t, h_next and the counts.
*/
typedef struct odb_advance {
  double t1, t_eps, hmin;
  long max_attempts;
  int launches;
  int capped;
  long attempts, accepted, rejected;
  double t, h_next, h_last, err;
  int swapped;
  int fsal_ready;
  int first_stage0;      /* the first attempt evaluated stage 0 (the later
                            ones do unless fsal_ready) */
} odb_advance;

/*
** An implementation variant of a step (CPU, or GPU for backend "cuda").
** Variants are registered by name; every variant computes the same
** arithmetic (up to rounding order), so the driver may switch between them
** at any step. A variant works on the solver's vectors where its backend
** keeps them (see struct odb_solver).
*/
struct odb_variant {
  const char *name;
  const char *doc;
  const char *backend;   /* backend name the variant runs on */
  /* 1 when the variant applies; otherwise writes the reason into why */
  int (*applies)(const odb_problem *p, const odb_method *m, char *why,
                 size_t nwhy);
  odb_status (*init)(odb_solver *s);   /* allocate workspace */
  void (*fini)(odb_solver *s);
  /*
  ** One step of size h from (s->t, s->y): writes s->ynew and, for methods
  ** with bhat, the weighted RMS error norm into *err (0 otherwise). Uses and
  ** maintains s->F[0] under FSAL (s->fsal_ready). Never changes s->y.
  */
  odb_status (*attempt)(odb_solver *s, double h, double *err);
  /*
  ** Bytes one attempted step must read and write between memory and core,
  ** counting each vector once per sweep that needs it. stage0 says whether
  ** the step evaluates stage 0 (not when F[0] is reused). attempt() adds
  ** these to s->stats itself.
  */
  void (*traffic)(const odb_solver *s, int stage0, double *rbytes,
                  double *wbytes);
  /*
  ** Optional (NULL: the host controls every adaptive step): queues
  ** a->launches launches, attempts from (s->t, s->y) (a rejection may cost
  ** the launch after it) with h = min(s->h_next,
  ** t1 - t), each deciding accept or reject and the next h on the device
  ** by the same I controller as the host (s->opts), and reports as
  ** odb_advance says. Changes only the contents of s->y, s->ynew and
  ** s->F; under FSAL (s->fsal_ready) an attempt after the first takes
  ** F_0 from the one before.
  */
  odb_status (*advance)(odb_solver *s, odb_advance *a);
  /* 1: adaptive steps use advance unless sync = step asks for the host's
     controller; 0: only when sync = call asks for it (where it measured
     slower than the host's: each launch waits for the controller) */
  int advance_default;
  /*
  ** The options the variant takes (odb_solver_opts.vopts) with their
  ** ranges and docs, as odebench --list shows them; NULL and 0: none. The
  ** core checks given options against them (odb_variant_check_opts) and
  ** init resolves them (odb_param_resolve) for its own use.
  */
  const odb_param_decl *opts;
  int nopts;
  /*
  ** Optional (NULL: y and F hold every component): a variant whose
  ** processes each compute only their own block of the components (the
  ** MPI variants of dist/ode) makes s->y whole on this process again, and
  ** F[0] too under FSAL (s->fsal_ready). A collective: every process calls
  ** it at the same point of the same run. Called by odb_solver_get_state,
  ** before the first-step guess (it reads all of y) and before
  ** odb_solver_set_variant_to leaves the variant.
  */
  odb_status (*gather)(odb_solver *s);
  /*
  ** Optional (NULL: not counted): the FP64 instructions (an FMA, an add, a
  ** multiply count one each) one attempted step of this solver executes
  ** over all components, stage 0 evaluated or not (stage0), as the code
  ** that runs it was generated. Divided by the device's measured FP64
  ** peak it gives the step's compute floor (docs/gpu.md, "the compute
  ** roof"). 0 where the problem declares no count for its f.
  */
  double (*fp64)(const odb_solver *s, int stage0);
};

struct odb_solver {
  odb_ctx *ctx;
  const odb_problem *problem;
  const odb_method *method;
  odb_backend *backend;
  const odb_variant *variant;
  odb_solver_opts opts;
  long n;
  int m;                 /* PIRK corrector steps (0 for ERK) */
  int order;             /* order of the step: ERK p, PIRK min(p, m + 1) */
  int err_order;         /* order of the error estimate (0: none); the
                            controller uses the exponent 1/(err_order + 1) */
  double t;              /* time of y */
  double h_next;         /* proposed next step (0: not yet chosen) */
  /*
  ** y, ynew and F[i] are in the backend's memory: host memory for "cpu",
  ** device memory for a backend without host_memory. The driver then
  ** copies at set_state and reset (host to device) and for the first step
  ** guess (y to the host, F[0] back); accept only swaps pointers, and the
  ** state reaches the host only when asked for (to_host of y).
  */
  double *y, *ynew;      /* current and candidate solution */
  double **F;            /* s stage vectors */
  double *work;          /* variant scratch (window buffers), may be NULL */
  void *vdata;           /* variant-private data (freed by fini) */
  size_t work_len;
  int fsal_ready;        /* F[0] holds f(t, y) */
  int defer_norm;        /* this attempt need not bring its error norm to
                            the host (sync = call, not the call's last
                            step): a device variant may skip the copy and
                            report 0 */
  long block;            /* effective block size for blocked variants */
  int advance_off;       /* set by the variant's init: this solver cannot
                            use its variant's advance (the variant says
                            why in its doc), so the host controls adaptive
                            steps */
  odb_solve_stats stats; /* running totals since create */
};

/*
** Variant registry (core/ode/odb_variant.c): the CPU variants are built
** in; a family with more (the GPU one, the ARKODE peer) registers each at
** start. Registering the same variant again is a no-op; another variant
** of a registered name is refused (ODB_ERR_ARG).
*/
odb_status odb_variant_register(const odb_variant *v);
int odb_variant_count(void);
const odb_variant *odb_variant_at(int i);
const odb_variant *odb_variant_find(const char *name);
/*
** ODB_OK when every one of given[0..ngiven) names an option v declares,
** with a value it allows; else ODB_ERR_ARG naming the variant, the option
** and what is allowed ("variant 'plain' takes no option 'threads' (it
** declares none)", "variant 'gpu_stream2d': option 'band' must be in
** 1..4, got 5").
*/
odb_status odb_variant_check_opts(const odb_variant *v,
                                  const odb_param_value *given, int ngiven);
/* n doubles (at least one), 64-byte aligned, untouched; NULL when out of
   memory or when n doubles do not fit a size_t: the variants' buffers
   (odb_variant.c), freed with free. */
double *odb_doubles_alloc(long n);

extern const odb_variant odb_variant_plain;
extern const odb_variant odb_variant_fused;
extern const odb_variant odb_variant_pipe;
extern const odb_variant odb_variant_pipe_threads;

/*
** Creates a solver. variant may be NULL or "auto" (the fastest applicable
** CPU variant). Fails with ODB_ERR_NAME listing valid names, or
** ODB_ERR_UNSUPPORTED saying why a variant does not apply. The state is the
** problem's initial value at the problem's t0.
*/
odb_status odb_solver_create(odb_ctx *ctx, const odb_problem *p,
                             const odb_method *m, odb_backend *b,
                             const char *variant, const odb_solver_opts *o,
                             odb_solver **out);
void odb_solver_destroy(odb_solver *s);

/* Sets the state (y has n components) and forgets FSAL data and h_next. */
void odb_solver_set_state(odb_solver *s, double t, const double *y);
/* Copies the current state (n doubles) into the host array y, waiting for
   the backend first when the state lives in device memory. */
odb_status odb_solver_get_state(odb_solver *s, double *y);
/* Threads a parallel variant uses: opts.threads, else every core hwloc
   reports, else the OS's count of online CPUs. */
int odb_solver_threads(const odb_solver *s);
/* Bytes of one instance of the cache of the given level, or fallback when
   the context's topology does not know it. */
double odb_solver_cache_bytes(const odb_solver *s, int level, double fallback);
/* Resets to the problem's initial value at time t0. */
void odb_solver_reset(odb_solver *s, double t0);

/*
** One step. h > 0: a step of exactly h, always accepted (fixed step).
** h == 0: one adaptive step: retries rejected attempts with smaller h until
** one is accepted (or hmin/max steps is hit); it ends on the problem's next
** stop rather than pass it, and a step from a stop starts just after it
** with a fresh step size (odb_solver_integrate_stops). info receives the
** step's figures (t after the step, h used, err).
*/
odb_status odb_solver_step(odb_solver *s, double h, odb_solve_stats *info);

/*
** Integrates from the current state to t1 (> s->t), adaptive unless
** opts.h_fixed > 0 (then the last step is shortened to hit t1). stats gets
** the figures of this call only. Checks the context's stop flag after every
** step and returns ODB_INTERRUPTED (with stats filled) when it is set.
** The problem's stops (odb_problem.tstops) are honoured as
** odb_solver_integrate_stops says.
*/
odb_status odb_solver_integrate(odb_solver *s, double t1,
                                odb_solve_stats *stats);

/*
** odb_solver_integrate with the call's own stops x[0..nx) (ascending,
** finite; else ODB_ERR_ARG naming the first bad one) beside the problem's.
** The integration runs segment by segment: every stop inside (t, t1) ends
** a segment, which a step lands on exactly, and the next segment starts
** just after it (the next double up: f at a stop belongs to the piece
** before it) with the step size chosen again as at a fresh start
** (h_next = 0, FSAL data dropped) on every variant and backend. A call
** that starts on a stop starts just after it in the same way; stops
** before the start or past t1 play no part, and one at t1 ends the call
** there (the next call then starts just after it). stats sum the
** segments.
*/
odb_status odb_solver_integrate_stops(odb_solver *s, double t1,
                                      const double *x, int nx,
                                      odb_solve_stats *stats);

/*
** One step toward t1 (> s->t) as odb_solver_integrate takes it: adaptive
** unless opts.h_fixed > 0, never past t1 nor past the problem's next stop
** (a step that would end within a sliver of either lands on it). info as
** for odb_solver_step. Does not check the stop flag or publish events.
*/
odb_status odb_solver_step_to(odb_solver *s, double t1,
                              odb_solve_stats *info);

/*
** Switches s to another variant, block size and thread count between
** steps (online tuning): the old variant's workspace is freed and the new
** one's allocated (variant->init); the state (t, y), the proposed next
** step and the running statistics stay; FSAL data is dropped. variant is
** a registered name ("auto" is refused); block and threads as in
** odb_solver_opts (0: the variant's default, all cores). The variant
** options (opts.vopts) stay with the solver, so v must take them. On
** failure (an unknown name, a variant that does not apply, runs on another
** backend or refuses the variant options, init failing) s goes back to its
** old variant and settings and the error is returned; ODB_ERR_INTERNAL if
** even that fails (s then has no usable variant and must be destroyed).
*/
odb_status odb_solver_set_variant(odb_solver *s, const char *variant,
                                  long block, int threads);
/* The same with a variant given directly (it need not be registered). */
odb_status odb_solver_set_variant_to(odb_solver *s, const odb_variant *v,
                                     long block, int threads);
/*
** odb_solver_set_variant_to that also replaces the variant options: s
** takes its own copy of vopts[0..nvopts) (vopts may point into
** s->opts.vopts; NULL and 0: none) as opts.vopts, checked against v's
** declarations (odb_variant_check_opts) before anything changes, and v's
** init resolves them. On failure (the causes above, an option v refuses
** or its init refusing a value, e.g. a distributed variant whose layout
** does not fit on the active ranks it is given) s runs its old variant,
** block and threads with its old options again, and the error is
** returned; ODB_ERR_INTERNAL as above. The online tuner switches with it
** when its space tunes a variant option (the active ranks, `ranks`).
*/
odb_status odb_solver_set_variant_opts(odb_solver *s, const odb_variant *v,
                                       long block, int threads,
                                       const odb_param_value *vopts,
                                       int nvopts);

/* Weighted RMS norm of e with sk = atol + rtol * max(|y|, |ynew|). */
double odb_err_norm(const double *e, const double *y, const double *ynew,
                    long n, double atol, double rtol);

#endif
