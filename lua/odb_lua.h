/* odb_lua.h - internals shared by the Lua module and the odebench host. */
#ifndef ODB_LUA_H
#define ODB_LUA_H

#include <stdint.h>
#include <stdio.h>

#include "lua.h"
#include "lauxlib.h"

#include "odebench.h"

/* Metatable names of the userdata types the module hands out. */
#define ODBL_PROBLEM "odebench.Problem"
#define ODBL_SOLVER  "odebench.Solver"
#define ODBL_VECTOR  "odebench.Vector"
#define ODBL_STATE   "odebench.State"

/* Registry keys of the run state and of the Lua-side lists it keeps. */
#define ODBL_STATE_KEY    "odebench.state"
#define ODBL_ROWS_KEY     "odebench.rows"      /* result tables, in order */
#define ODBL_REFCACHE_KEY "odebench.refcache"  /* reference vectors by key */
/* ob.param's record of the parameters read, in order: {name, default,
   value, description} each (the odebench program's --params lists it). */
#define ODBL_PARAMS_KEY   "odebench.params"

/* One --set k=v (or ODEBENCH_SET item) and whether ob.param used it. */
typedef struct odbL_set {
  char *key, *value;
  int used;
} odbL_set;

/*
** The state of a run inside one lua_State: the engine context, the results
** collected so far, the --set values, and the bandwidth figures once they
** were needed. It lives in a userdata in the registry (ODBL_STATE_KEY); its
** __gc destroys the context, so it must be created before any solver.
*/
typedef struct odbL_state {
  odb_ctx *ctx;
  odb_results results;
  int hosted;            /* 1 under the odebench host: it writes results */
  int quiet;             /* 1: ob.report prints nothing */
  const char *set_origin;/* "--set" or "ODEBENCH_SET", for messages */
  odbL_set *sets;
  int nsets;
  int have_bw;           /* bw holds figures (measured or cached) */
  int bw_failed;         /* they could not be had; do not try again */
  odb_bandwidth bw;
  int have_gbw;          /* gbw holds the GPU's figures of this run */
  odb_gpu_bandwidth gbw;
  int results_written;   /* ob.finish wrote the files (plain lua) */
  long progress_i, progress_n;   /* the last ob.progress published (n 0:
                                    none yet) and when (monotonic s) */
  double progress_wall;
  int rows_announced;    /* rows told to the reporters (odbL_check_record) */
  odb_measure_opts measure;      /* --measure: the run-wide override of
                                    every timing (zero fields: none) */
  int floor_warned;      /* a row's floor_note "floor to fix" was warned */
  double gpu_l2;         /* the GPU's L2 bytes (0: not asked, -1 unknown) */
} odbL_state;

/* What the host (or the lazy plain-lua path) wants the run state to be. */
typedef struct odbL_config {
  uint64_t seed;
  const char *outdir;      /* output directory; must not be NULL */
  int hosted, quiet;
  const char *set_origin;  /* "--set" or "ODEBENCH_SET" */
  const char *const *sets; /* nsets strings "key=value" */
  int nsets;
  odb_measure_opts measure; /* --measure (odbL_measure_parse); zeros: none */
} odbL_config;

/* {====== odb_lua_state.c: the run state. */

/*
** Creates the run state of L from cfg (context with the GPU backends
** registered, the common context block of the results) and stores it in
** the registry. Raises a Lua error on failure, so call it in protected
** mode. Returns the state; it stays valid until lua_close(L).
*/
odbL_state *odbL_state_open(lua_State *L, const odbL_config *cfg);
/*
** The run state of L; creates it on first use from the environment
** (ODEBENCH_SEED, ODEBENCH_OUT, ODEBENCH_SET, the global arg[0]) when no
** host has opened one. Raises Lua errors.
*/
odbL_state *odbL_state_get(lua_State *L);
/* The run state of L, or NULL when none was created yet. Never raises. */
odbL_state *odbL_state_peek(lua_State *L);
/*
** The machine's bandwidth figures, obtained once per run (cache file or a
** measurement), recorded as bandwidth.* in the context block. NULL when
** they cannot be had (the reason is logged once). allow_measure 0 returns
** NULL instead of starting a measurement that takes seconds.
*/
/* allow_measure ODBL_BW_NOW measures again now (and updates the cache and
   the results' context) even when the figures are known. */
#define ODBL_BW_NOW 2
const odb_bandwidth *odbL_state_bandwidth(odbL_state *S, int allow_measure);
/*
** The figures of the "cuda" backend's device in this run (the ones the GPU
** families compute their floors from), obtained once and recorded as
** gpu_bandwidth.* in the context block; NULL without a GPU or when they
** cannot be had (the reason is logged once).
*/
const odb_gpu_bandwidth *odbL_state_gpu_bandwidth(odbL_state *S);
/*
** Raises "out of memory" style errors for a failed record operation;
** otherwise publishes an ODB_EV_SOLVE_ROW event for each solve row
** recorded since the last call, with the row's own figures (every row
** builder ends with this call), for the dashboard and events.jsonl.
*/
void odbL_check_record(lua_State *L, odb_status st);
/* One warning line: in the run's log, and on stderr under plain lua5.4. */
void odbL_state_warn(odbL_state *S, const char *msg);
/* Writes S->results to the context's output directory; 0 on success, with
   the reason in odb_last_error() otherwise. */
odb_status odbL_state_write(odbL_state *S);
/* Prints a warning for every --set key that ob.param never read. */
void odbL_warn_unused_sets(const odbL_state *S, FILE *f, const char *prog);

/* }====== */

/* {====== odb_lua_context.c: the context block of results.json. */

/* Fills the parts every run has: versions, date, host, CPU, GPU, seed. */
odb_status odbL_context_fill(odbL_state *S);
/* Current UTC time as ISO-8601 ("2024-05-01T12:00:00Z") into buf[32]. */
void odbL_utc_now(char buf[32]);

/* }====== */

/* {====== odb_lua_vector.c, odb_lua_problem.c, odb_lua_solver.c. */

typedef struct odbL_vector {
  long n;
  int closed;
  double v[];            /* n values, stored inline */
} odbL_vector;

typedef struct odbL_problem {
  odb_problem *p;        /* NULL once destroyed */
  int refs;              /* solvers that still use p */
  int closed;            /* closed by __close/__gc; p goes with the last ref */
} odbL_problem;

/* Registers the metatables of the three types (idempotent). */
void odbL_vector_register(lua_State *L);
void odbL_problem_register(lua_State *L);
void odbL_solver_register(lua_State *L);

/* Pushes a new Vector of n zeros and returns it. */
odbL_vector *odbL_vector_new(lua_State *L, long n);
/* The open Vector at idx, or a "Vector expected" argument error. */
odbL_vector *odbL_vector_check(lua_State *L, int idx);
/* The shape the Vector at idx carries (odb_lua_vector.c): its number of
   dimensions (0: none, a plain list), dims[0..1] (1 past ndim) and
   whether it is complex ('<c16': two numbers an element). */
int odbL_vector_shape(lua_State *L, int idx, long dims[2], int *complex);
/* Gives the Vector at idx the shape (ndim 0 drops it). Assumes the
   elements (times 2 when complex) are its length. */
void odbL_vector_set_shape(lua_State *L, int idx, int ndim, const long *dims,
                           int complex);
/* Reads the shape table {rows [, cols]} at sidx for a Vector of n numbers
   into dims (1 past the dimensions given); raises, naming who and the
   numbers the shape holds, when it does not hold exactly n. The number of
   dimensions. */
int odbL_vector_read_shape(lua_State *L, int arg, int sidx, const char *who,
                           long n, int complex, long dims[2]);
/* max_i |a_i - b_i| / max_i |b_i| (absolute when b is all zeros). */
double odbL_max_rel_err(const double *a, const double *b, long n);

/* The open Problem at idx (argument error otherwise). */
odbL_problem *odbL_problem_check(lua_State *L, int idx);
/* Drops one solver reference; destroys p when closed and unused. */
void odbL_problem_release(odbL_problem *pb);

/* Lua functions of the module table. */
/* Before making an object that owns about `bytes` of host or device
   memory Lua does not see: a collector step of that size (odb_lua_gc.c). */
void odbL_gc_external(lua_State *L, double bytes);

int odbL_problem_new(lua_State *L);   /* ob.problem(name, params) */
int odbL_solver_new(lua_State *L);    /* ob.solver{...} */
int odbL_vector_ctor(lua_State *L);   /* ob.vector(n or table) */
/* Reads the numbers t[1..n] of the table at idx into out[0..n); 0 when all
   are numbers, else the index of the first that is not, with that value
   pushed (for the caller's message). */
lua_Integer odbL_read_numbers(lua_State *L, int idx, double *out,
                              lua_Integer n);
int odbL_reference(lua_State *L);     /* ob.reference(problem, opts) */

/* }====== */

/* {====== odb_lua_table.c: reading option tables with uniform errors. */

/*
** Raises "bad argument #arg to 'f' (unknown field 'k' (allowed: a, b))"
** for any key of the table at arg that is not in allowed (NULL-terminated).
*/
void odbL_check_keys(lua_State *L, int arg, const char *const *allowed);
/* Reads an optional number field; 1 when present. Raises on a wrong type. */
int odbL_opt_number(lua_State *L, int arg, const char *field, double *out);
/* Reads an optional integer field; 1 when present. */
int odbL_opt_integer(lua_State *L, int arg, const char *field,
                     long long *out);
/* An optional integer field of the table at tidx within [lo, hi] (def when
   absent); errors name `shown` and blame argument arg. */
long long odbL_opt_int_range(lua_State *L, int arg, int tidx,
                             const char *field, const char *shown,
                             long long lo, long long hi, long long def);
/* Reads an optional string field (kept alive by the table); NULL if absent. */
const char *odbL_opt_string(lua_State *L, int arg, const char *field,
                            const char *def);
/* Raises "field 'f': <what> expected, got <type of value at vidx>". */
int odbL_field_error(lua_State *L, int arg, const char *field,
                     const char *what, int vidx);
/*
** The value at vidx as an exact integer in [lo, hi]: floats with an
** integer value are taken, anything else (2.5, NaN, 2^63, a string, out of
** range) raises an argument error on arg naming `shown`, the range and the
** value in full. Use it for every index and size a user gives.
*/
lua_Integer odbL_int_in_range(lua_State *L, int arg, int vidx,
                              const char *shown, lua_Integer lo,
                              lua_Integer hi);
/* The same for the positional argument arg. */
lua_Integer odbL_check_int_range(lua_State *L, int arg, const char *shown,
                                 lua_Integer lo, lua_Integer hi);

/* }====== */

/* {====== odb_lua_callback.c: calls from the engine back into Lua. */

/*
** The engine calls Lua back (a problem's f, a tuner objective, a plot
** callback) with a lock held and a solve, a tuning run or a plot half
** done. While such a callback runs on a thread, that thread must not
** enter the engine again: the lock would deadlock and the half-done call
** would be changed under itself. odbL_callback_enter/leave bracket every
** such callback (they nest; the depth is per thread); every Lua entry
** point that runs engine work, or frees an object a running call may use,
** calls odbL_check_not_in_callback first, which raises
** "<what> cannot be called from inside <callback> ..." there.
*/
void odbL_callback_enter(const char *what);
void odbL_callback_leave(void);
/* The callback now running on this thread ("f of problem 'x'"), or NULL. */
const char *odbL_in_callback(void);
void odbL_check_not_in_callback(lua_State *L, const char *what);

/* }====== */

/* {====== odb_lua_list.c: --list and info, shared by ob.list and the host. */

/* Pushes the table of ob.list() for the context c. */
void odbL_push_list(lua_State *L, odb_ctx *c);
/* Prints odebench --list to f. */
void odbL_print_list(odb_ctx *c, FILE *f);
/* Prints odebench info to f (bw, gbw may be NULL when they could not be
   had or there is no GPU). */
void odbL_print_info(odb_ctx *c, const odb_bandwidth *bw,
                     const odb_gpu_bandwidth *gbw, FILE *f);
/* Formats a byte count as "48 KiB", "1.25 MiB"... into buf. */
const char *odbL_format_bytes(double bytes, char *buf, size_t len);

/* }====== */

/* {====== ob.* functions of the concept files (odb_lua_tune.c and the
   others named below); the tunedb command. */

/* ob.tune{target =, space =, where =, strategy =, budget =, ...}. */
int odbL_tune(lua_State *L);
/* ob.kernel(name, {M=, N=, K=, dtype=}) (odb_lua_kernel.c). */
int odbL_kernel(lua_State *L);
/* ob.gpu_barrier{...} (odb_lua_barrier.c) */
int odbL_gpu_barrier(lua_State *L);
/* ob.gpu_power() and ob.gpu_watch() into table -1, and the watch's
   metatable (odb_lua_gpupower.c) */
void odbL_gpupower_register(lua_State *L);
/* ob.problem{...}: a problem defined in a scenario (odb_lua_userproblem.c) */
int odbL_user_problem(lua_State *L);
/*
** The list of stops (times where f jumps) in field `field` of argument arg,
** whose value is at idx: a list of finite numbers (raw entries 1..#list),
** at most ODBL_MAX_TSTOPS, else an argument error naming the field and
** the entry. Returns the count; with out (room for that count) also
** writes them there, ascending (odb_lua_userproblem.c; ob.problem's
** tstops and s:integrate's).
*/
#define ODBL_MAX_TSTOPS 10000000
int odbL_check_tstops(lua_State *L, int arg, int idx, const char *field,
                      double *out);
/* s:checkpoint(file) into the Solver's methods, at module open, and
   ob.solver's restart = file (odb_lua_checkpoint.c). */
void odbL_checkpoint_register(lua_State *L);
int odbL_checkpoint_restore(lua_State *L, int arg, odb_solver *s,
                            const char *file);
/* ob.reservoir and ob.krylov (lua/odb_lua_sparse.c). */
int odbL_reservoir(lua_State *L);
int odbL_krylov(lua_State *L);
/* ob.matrix{file = ...}, ob.load(file), v:save(file [, opts]),
   A:write(file) (odb_lua_files.c); ob.matrix and ob.load into the module
   table at -1 (odbL_files_register). */
int odbL_matrix(lua_State *L);
int odbL_load(lua_State *L);
int odbL_vector_save(lua_State *L);
int odbL_sparse_write(lua_State *L);
/* ob.matrix{dist = "rows" | "planes", grid = | file =, format =}: a
   DistMatrix, split over the ranks (odb_lua_dsparse.c); odbL_matrix
   hands every call with a dist field to it. */
int odbL_dmatrix(lua_State *L);
void odbL_files_register(lua_State *L);
/* A user's array: the value at vidx, a Vector or a file name ob.load
   reads, pushed as a Vector (one value pushed, whatever it was) with its
   shape in dims and whether it is complex; dims[0] = its length when it
   carries no shape. need2d: a 2-D shape required. Errors begin with
   "<who>: <field>: " and say what was expected and what was given. */
odbL_vector *odbL_array_arg(lua_State *L, int vidx, const char *who,
                            const char *field, int need2d, long dims[2],
                            int *complex);
/* The SparseMatrix type (odb_lua_sparse.c, which alone knows its layout):
   its metatables (idempotent); a new empty one pushed, its __gc freeing
   what is stored through the pointer returned; the open one at idx (an
   argument error otherwise). */
void odbL_sparse_register(lua_State *L);
odb_sparse **odbL_sparse_box_new(lua_State *L);
odb_sparse *odbL_sparse_check(lua_State *L, int idx);
/* ob.blocktridiag (odb_lua_blocktridiag.c) and ob.batched
   (odb_lua_batched.c). */
int odbL_blocktridiag(lua_State *L);
int odbL_batched(lua_State *L);
/* The engine solver of the open Solver at idx; NULL for anything else and
   for a closed one (odb_lua_solver.c). Never raises. */
odb_solver *odbL_solver_test(lua_State *L, int idx);
/* odebench tunedb list|show|export|prune (argv[0] is "tunedb"); returns
   the exit status. Defined by the program, in cli/tunedb.c. */
int odbL_tunedb_main(int argc, char **argv);

/* }====== */

/* {====== odb_lua_plot.c */

/* ob.plot{name =, kind =, x =, y =, ...}: records plots.<name>.* in the
   context block for odebench plot. */
int odbL_plot(lua_State *L);

/* }====== */

/* {====== odb_lua_measure.c: how the binding times things (measure =,
   --measure, the fields of a timed row, ob.tied). */

/* Reads the measure table at vidx ({warmup=, min_reps=, max_reps=,
   max_seconds=, target_spread=}) into o, its fields winning; errors name
   'measure.<field>', what is allowed and blame argument arg. */
void odbL_measure_read(lua_State *L, int arg, int vidx, odb_measure_opts *o);
/* The same for the optional field `measure` of the table at tidx. */
void odbL_measure_opt_field(lua_State *L, int arg, int tidx,
                            odb_measure_opts *o);
/* Parses --measure's "key=value,..." into o (ODB_ERR_ARG saying why). */
odb_status odbL_measure_parse(const char *spec, odb_measure_opts *o);
/* Copies the given (nonzero) fields of src over dst; a bound of the runs
   given alone moves the other where they would cross. */
void odbL_measure_merge(odb_measure_opts *dst, const odb_measure_opts *src);
/* Applies the run's --measure over o and fills the defaults: the options
   a timing runs with. */
void odbL_measure_final(lua_State *L, odb_measure_opts *o);
/* Sets median, q1, q3, spread and reps of m into the table at tidx and,
   when row is not NULL, into the results row; the record's status. */
odb_status odbL_measure_fields(lua_State *L, int tidx, odb_record *row,
                               const odb_measurement *m);
/* Pushes {seconds = median, median, q1, q3, spread, reps}. */
void odbL_measure_push(lua_State *L, const odb_measurement *m);
/* Sets t.kind = kind for the table at tidx, records its string, number
   and boolean fields as a results row and appends it to the run's list
   of result tables (ob.report's). */
void odbL_measure_row(lua_State *L, int tidx, const char *kind);
/* ob.tied(m1, s1, m2, s2) or ob.tied(row1, row2). */
int odbL_tied(lua_State *L);
/*
** The figures the floor of a row on backend ("cpu", "cuda") with threads
** threads (CPU; below 1: one) is taken from (odb_floor.h): the run's CPU
** figures (measured when none are cached) or the GPU's of this process,
** with the cache size of the machine. 0 when there are none.
*/
int odbL_floor_bw(lua_State *L, const char *backend, int threads,
                  odb_floor_bw *fb);
/*
** Sets the floor fields of a row that read rbytes and wrote wbytes at
** least (the family's min_bytes) in median seconds, into the table at
** tidx and, when row is not NULL, into the results row: floor_bytes (r +
** w), floor_pct (100 floor / median), floor_bw (the figure used, e.g.
** "cpu read 1t") and, above 100, floor_note: "in cache" when touched
** (the distinct bytes) fits the cache, else "floor to fix" with one
** warning line a run. Nothing but floor_bytes without figures. The
** record's status.
*/
odb_status odbL_floor_fields(lua_State *L, int tidx, odb_record *row,
                             const char *backend, int threads, double rbytes,
                             double wbytes, double touched, double median);

/* }====== */

/* The module opener (lua/odb_lua_module.c). */
int luaopen_odebench(lua_State *L);

#endif
