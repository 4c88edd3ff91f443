/* odb_lua_solver.c - odebench.Solver (step, integrate) and ob.reference. */
#include "odb_lua.h"
#include "odb_kernels.h"
#include "odb_dist.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct odbL_solver {
  odb_solver *s;         /* NULL once closed */
  odbL_problem *pb;      /* the problem box (also the user value, kept alive) */
  odb_measure_opts measure;  /* ob.solver's measure = {...} (zeros: none) */
} odbL_solver;

static const char *const solver_keys[] = {
  "problem", "method", "backend", "variant", "tol", "rtol", "atol", "h",
  "h0", "safety", "fac_min", "fac_max", "max_steps", "block", "streaming",
  "m", "threads", "sync", "tiling", "measure", "restart", NULL
};

static const char *const integrate_keys[] = {
  "t0", "t1", "reference", "label", "measure", "tstops", NULL
};

static const char *const reference_keys[] = {
  "t0", "t1", "method", "tol", NULL
};

/* {====== helpers */

/* "ok", "interrupted", or the status name without its ODB_ERR_ prefix in
   lower case ("step_size"), written into buf. */
static const char *status_label(odb_status st, char *buf, size_t len) {
  const char *name = odb_status_name(st);
  size_t i;
  if (st == ODB_OK) return "ok";
  if (strncmp(name, "ODB_ERR_", 8) == 0) name += 8;
  else if (strncmp(name, "ODB_", 4) == 0) name += 4;
  for (i = 0; name[i] && i + 1 < len; ++i)
    buf[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
  buf[i] = '\0';
  return buf;
}

/*
** Raises the error of a failed engine call whose message was copied into
** msg; ODB_INTERRUPTED raises the bare string "interrupted" (no position),
** which the host recognizes.
*/
static int raise_status(lua_State *L, odb_status st, const char *msg) {
  if (st == ODB_INTERRUPTED) {
    lua_pushliteral(L, "interrupted");
    return lua_error(L);
  }
  return luaL_error(L, "%s", msg && *msg ? msg : odb_status_str(st));
}

/* A number for messages, as C's %.14g writes it ("1", "0.5", "1e-06"). */
static const char *fmt_num(double v, char *buf, size_t len) {
  snprintf(buf, len, "%.14g", v);
  return buf;
}

/* Raises "t1 (a) must be greater than <what> (b)" for argument arg. */
static int order_error(lua_State *L, int arg, double t1, const char *what,
                       double t0) {
  char a[32], b[32];
  return luaL_argerror(L, arg, lua_pushfstring(L, "t1 (%s) must be greater "
                       "than %s (%s)", fmt_num(t1, a, sizeof a), what,
                       fmt_num(t0, b, sizeof b)));
}

/*
** A fixed step h must move t all the way from start to t1: t + h must
** differ from t where t is largest in magnitude (t + h rounds to t where h
** is below half the spacing of doubles there, and t would stand still),
** and the steps it takes must not pass max_steps. Raises on argument 2.
*/
static void fixed_step_check(lua_State *L, const odb_solver *s, double start,
                             double t1) {
  double h = s->opts.h_fixed, w = fabs(start) > fabs(t1) ? start : t1;
  double steps = ceil((t1 - start) / h * (1 - 1e-12));  /* as step_toward */
  char a[32], b[32], c[32], d[32];
  if (!(w + h != w))
    luaL_argerror(L, 2, lua_pushfstring(L, "the solver's fixed step h = %s "
                  "does not advance t at t = %s (t + h rounds to t); give a "
                  "larger h", fmt_num(h, a, sizeof a), fmt_num(w, b,
                  sizeof b)));
  if (steps > (double)s->opts.max_steps)
    luaL_argerror(L, 2, lua_pushfstring(L, "the solver's fixed step h = %s "
                  "needs %s steps from %s to t1 = %s, more than max_steps = "
                  "%I", fmt_num(h, a, sizeof a), fmt_num(steps, c, sizeof c),
                  fmt_num(start, b, sizeof b), fmt_num(t1, d, sizeof d),
                  (lua_Integer)s->opts.max_steps));
}

/* Copies the detail of the last failure (or the status text) into msg. */
static void copy_error(odb_status st, char *msg, size_t len) {
  const char *e = odb_last_error();
  snprintf(msg, len, "%s", e && *e ? e : odb_status_str(st));
}

odb_solver *odbL_solver_test(lua_State *L, int idx) {
  odbL_solver *box = luaL_testudata(L, idx, ODBL_SOLVER);
  return box ? box->s : NULL;
}

/* The open solver at idx (an argument error when closed). */
static odbL_solver *check_solver(lua_State *L, int idx) {
  odbL_solver *box = luaL_checkudata(L, idx, ODBL_SOLVER);
  if (!box->s) luaL_argerror(L, idx, "the solver is closed");
  return box;
}

/* }====== */

/* {====== ob.solver */

/*
** Reads the table field tiling, the options of a tiled GPU variant
** (docs/gpu.md), into o->vopts: a value by name for each field (a number;
** a boolean as the text "true" or "false", as odb_param_value takes it; a
** string), in a list kept in a userdata that stays on the stack until
** ob.solver returns (the names and strings belong to the tiling table,
** which the argument holds). Where field variant names a registered
** variant, each value is checked here against the options that variant
** declares, so that the error names the field ('tiling.threads') and comes
** before any backend or device is looked for; with "auto" the solver
** checks them against the variant it picks (odb_variant_check_opts).
*/
static void read_tiling(lua_State *L, odb_solver_opts *o) {
  const odb_variant *v;
  odb_param_value *vals;
  char why[256], names[512];
  double x;
  int idx, n = 0;
  if (lua_getfield(L, 1, "tiling") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1))
    luaL_argerror(L, 1, "field 'tiling': must be a table");
  idx = lua_gettop(L);
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) ++n;
  vals = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *vals, 0);
  n = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1), ++n) {
    odb_param_value *g = &vals[n];
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'tiling': unknown field "
                    "'%s' (option names are strings)",
                    luaL_tolstring(L, -2, NULL)));
    g->name = lua_tostring(L, -2);
    g->num = 0.0;
    g->str = NULL;
    switch (lua_type(L, -1)) {
    case LUA_TNUMBER: g->num = (double)lua_tonumber(L, -1); break;
    case LUA_TBOOLEAN: g->str = lua_toboolean(L, -1) ? "true" : "false"; break;
    case LUA_TSTRING: g->str = lua_tostring(L, -1); break;
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'tiling.%s': must be a "
                    "number, a boolean or a string, got %s", g->name,
                    luaL_typename(L, -1)));
    }
  }
  v = odb_variant_find(odbL_opt_string(L, 1, "variant", "auto"));
  for (int i = 0; v && i < n; ++i) {
    int k = odb_param_find(v->opts, v->nopts, vals[i].name);
    if (v->nopts <= 0) {
      odb_variant_check_opts(v, &vals[i], 1);
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'tiling': %s",
                    odb_last_error()));
    }
    if (k < 0)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'tiling': unknown field "
                    "'%s' (%s takes %s)", vals[i].name, v->name,
                    odb_param_names(v->opts, v->nopts, names,
                                    sizeof names)));
    if (odb_param_check(&v->opts[k], &vals[i], &x, why, sizeof why) !=
        ODB_OK)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'tiling.%s': %s",
                    vals[i].name, why));
  }
  o->vopts = vals;
  o->nvopts = n;
}

/* Reads the numeric options of the table at 1 into o; raises on bad ones. */
static void read_opts(lua_State *L, odb_solver_opts *o) {
  double v;
  long long iv;
  memset(o, 0, sizeof *o);
  if (odbL_opt_number(L, 1, "tol", &v)) {
    if (!(v > 0)) luaL_argerror(L, 1, "field 'tol': must be positive");
    o->rtol = o->atol = v;
  }
  if (odbL_opt_number(L, 1, "rtol", &o->rtol) && !(o->rtol > 0))
    luaL_argerror(L, 1, "field 'rtol': must be positive");
  if (odbL_opt_number(L, 1, "atol", &o->atol) && !(o->atol > 0))
    luaL_argerror(L, 1, "field 'atol': must be positive");
  if (odbL_opt_number(L, 1, "h", &o->h_fixed) && !(o->h_fixed > 0))
    luaL_argerror(L, 1, "field 'h': must be positive");
  if (odbL_opt_number(L, 1, "h0", &o->h0) && !(o->h0 > 0))
    luaL_argerror(L, 1, "field 'h0': must be positive");
  if (odbL_opt_number(L, 1, "safety", &o->safety) &&
      !(o->safety > 0 && o->safety <= 1))
    luaL_argerror(L, 1, "field 'safety': must be in (0, 1]");
  if (odbL_opt_number(L, 1, "fac_min", &o->fac_min) &&
      !(o->fac_min > 0 && o->fac_min < 1))
    luaL_argerror(L, 1, "field 'fac_min': must be in (0, 1)");
  if (odbL_opt_number(L, 1, "fac_max", &o->fac_max) && !(o->fac_max > 1))
    luaL_argerror(L, 1, "field 'fac_max': must be greater than 1");
  o->max_steps = (long)odbL_opt_int_range(L, 1, 1, "max_steps", "max_steps",
                                          1, LONG_MAX, 0);
  o->block = (long)odbL_opt_int_range(L, 1, 1, "block", "block", 0,
                                      LONG_MAX, 0);
  o->m = (int)odbL_opt_int_range(L, 1, 1, "m", "m", 1, INT_MAX, 0);
  if (odbL_opt_integer(L, 1, "threads", &iv)) {
    int hw, lim = odb_team_max_threads(&hw);
    if (iv < 1 || iv > lim)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'threads': must be in "
                    "1..%d on this machine (4 x its %d hardware threads, at "
                    "least %d), got %I", lim, hw, ODB_MIN_THREAD_LIMIT,
                    (lua_Integer)iv));
    o->threads = (int)iv;
  }
  {
    const char *sv = odbL_opt_string(L, 1, "streaming", NULL);
    if (sv) {
      if (strcmp(sv, "on") == 0) o->streaming = 1;
      else if (strcmp(sv, "off") == 0) o->streaming = -1;
      else if (strcmp(sv, "auto") != 0)
        luaL_argerror(L, 1, "field 'streaming': must be 'auto', 'on' or 'off'");
    }
  }
  {   /* a device variant's host round trips: every step, or once a call
         (adaptive steps: the step controller on the device) */
    const char *sv = odbL_opt_string(L, 1, "sync", NULL);
    if (sv) {
      if (strcmp(sv, "call") == 0) o->sync = ODB_SYNC_CALL;
      else if (strcmp(sv, "step") == 0) o->sync = ODB_SYNC_STEP;
      else luaL_argerror(L, 1, "field 'sync': must be 'step' or 'call'");
    }
  }
  read_tiling(L, o);
}

/* Looks up a backend; the error lists the registered ones and the notes on
   the missing ones. Raises. */
static odb_backend *check_backend(lua_State *L, odb_ctx *ctx,
                                  const char *name) {
  odb_backend *b = NULL;
  luaL_Buffer buf;
  if (odb_ctx_lookup_backend(ctx, name, &b) == ODB_OK) return b;
  luaL_buffinit(L, &buf);
  luaL_addstring(&buf, odb_last_error());
  for (int i = 0, first = 1; i < ctx->nnotes; ++i) {
    if (strstr(odb_last_error(), ctx->backend_notes[i])) continue;
    luaL_addstring(&buf, first ? "; not available: " : "; ");
    luaL_addstring(&buf, ctx->backend_notes[i]);
    first = 0;
  }
  luaL_pushresult(&buf);
  luaL_argerror(L, 1, lua_tostring(L, -1));
  return NULL;
}

/*
** ob.solver{problem = p, method = ..., ...}. Everything that may raise
** happens before odb_solver_create; afterwards only the box is filled.
*/
int odbL_solver_new(lua_State *L) {
  odbL_state *S;
  odbL_problem *pb;
  odbL_solver *box;
  const odb_method *m;
  odb_backend *b;
  odb_solver *s = NULL;
  odb_solver_opts o;
  odb_measure_opts mopts = {0};
  const char *method, *backend, *variant, *restart;
  odb_status st;
  odbL_check_not_in_callback(L, "ob.solver");
  S = odbL_state_get(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  odbL_check_keys(L, 1, solver_keys);
  if (lua_getfield(L, 1, "problem") == LUA_TNIL)
    luaL_argerror(L, 1, "field 'problem' is required");
  pb = luaL_testudata(L, 2, ODBL_PROBLEM);
  if (!pb) odbL_field_error(L, 1, "problem", ODBL_PROBLEM, 2);
  if (pb->closed || !pb->p)
    luaL_argerror(L, 1, "field 'problem': the problem is closed");
  method = odbL_opt_string(L, 1, "method", "dopri5");
  backend = odbL_opt_string(L, 1, "backend", "auto");
  variant = odbL_opt_string(L, 1, "variant", "auto");
  restart = odbL_opt_string(L, 1, "restart", NULL);   /* a checkpoint */
  read_opts(L, &o);
  if (odb_method_lookup(method, &m) != ODB_OK)
    luaL_argerror(L, 1, odb_last_error());
  b = check_backend(L, S->ctx, backend);
  odbL_measure_opt_field(L, 1, 1, &mopts);
  odbL_gc_external(L, (double)(m->s + 2) * (double)pb->p->n *
                      sizeof(double));
  box = lua_newuserdatauv(L, sizeof *box, 1);
  memset(box, 0, sizeof *box);
  box->measure = mopts;
  luaL_setmetatable(L, ODBL_SOLVER);
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, -2, 1);
  st = odb_solver_create(S->ctx, pb->p, m, b, variant, &o, &s);
  if (st != ODB_OK) luaL_argerror(L, 1, odb_last_error());
  box->s = s;
  box->pb = pb;
  pb->refs++;
  if (restart) odbL_checkpoint_restore(L, 1, s, restart);
  return 1;
}

/* }====== */

/* {====== methods */

/* s:step([h]): one step (fixed size h, or adaptive when h is absent). */
static int solver_step(lua_State *L) {
  odbL_solver *box;
  double h;
  odb_solve_stats info;
  odb_status st;
  char msg[512];
  odbL_check_not_in_callback(L, "s:step");
  box = check_solver(L, 1);
  h = (double)luaL_optnumber(L, 2, 0.0);
  if (h < 0 || isnan(h)) luaL_argerror(L, 2, "step size must be positive");
  memset(&info, 0, sizeof info);
  st = odb_solver_step(box->s, h, &info);
  if (st != ODB_OK) {
    copy_error(st, msg, sizeof msg);
    return raise_status(L, st, msg);
  }
  lua_createtable(L, 0, 5);
  lua_pushnumber(L, info.t);
  lua_setfield(L, -2, "t");
  lua_pushnumber(L, info.h);
  lua_setfield(L, -2, "h");
  lua_pushnumber(L, info.err_last);
  lua_setfield(L, -2, "err");
  lua_pushinteger(L, info.accepted);
  lua_setfield(L, -2, "accepted");
  lua_pushinteger(L, info.rejected);
  lua_setfield(L, -2, "rejected");
  return 1;
}

/* Writes one field into the result table at tidx and into the results row. */
typedef struct row_out {
  lua_State *L;
  int tidx;
  odb_record *row;
  odb_status st;
} row_out;

/* A number field; the first record failure is kept in w->st. */
static void put_num(row_out *w, const char *k, double v) {
  lua_pushnumber(w->L, v);
  lua_setfield(w->L, w->tidx, k);
  if (w->st == ODB_OK) w->st = odb_record_set_num(w->row, k, v);
}

/* An integer field. */
static void put_int(row_out *w, const char *k, long long v) {
  lua_pushinteger(w->L, (lua_Integer)v);
  lua_setfield(w->L, w->tidx, k);
  if (w->st == ODB_OK) w->st = odb_record_set_int(w->row, k, v);
}

/* A string field (copied by both Lua and the record). */
static void put_str(row_out *w, const char *k, const char *v) {
  lua_pushstring(w->L, v);
  lua_setfield(w->L, w->tidx, k);
  if (w->st == ODB_OK) w->st = odb_record_set_str(w->row, k, v);
}

/* Appends the table at idx to the run's list of result tables. */
static void remember_row(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, ODBL_ROWS_KEY);
  lua_pushvalue(L, idx);
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
}

/* What one integrate call did, gathered before anything is pushed. */
typedef struct solve_figures {
  odb_solve_stats st;
  double t0, t1;
  const char *label;
  int have_err;
  double err;
  const odb_bandwidth *bw;
  odb_measurement m;     /* the timed runs (push_result's seconds) */
  int ranks;             /* > 1: a distributed solve under mpirun */
  double wait_max;       /* the slowest rank's wait (rank_figures) */
} solve_figures;

/* The runs of one integrate: each from the same time, state and next
   step size to t1, so that every run computes the same numbers. */
typedef struct integrate_runs {
  odb_solver *s;
  double t0, t1, h0;
  const double *y0;      /* the state at t0 (n values) */
  odb_solve_stats *stats;/* the last run's */
  const double *tstops;  /* the call's stops (tstops = {...}), ascending */
  int ntstops;
  long steps_all;        /* steps of every run (warm-up included) */
  double own_sec;        /* their seconds on this rank's clock */
} integrate_runs;

/* One sample of odb_measure_run: a whole integration, timed by the
   solver (setup excluded). */
static odb_status integrate_run(void *ud, double *sec) {
  integrate_runs *r = ud;
  const int dist = r->s->variant->gather && odb_dist_size() > 1;
  odb_status st;
  odb_solver_set_state(r->s, r->t0, r->y0);
  r->s->h_next = r->h0;
  if (dist) {
    /* the ranks start their clocks together: a rank whose state was set
       sooner (a copy to its device) would count its wait for the others
       in the first exchange */
    ODB_TRY(odb_backend_sync(r->s->backend));
    ODB_TRY(odb_dist_barrier("MPI_Barrier (before a timed run)"));
  }
  st = odb_solver_integrate_stops(r->s, r->t1, r->tstops, r->ntstops,
                                  r->stats);
  *sec = r->stats->seconds;
  r->steps_all += r->stats->steps;
  r->own_sec += r->stats->seconds;
  if (dist) {
    /* a distributed variant's run lasts as long as its slowest rank: with
       that time on every rank, measure stops after the same run on all
       (each rank's own clock would let them disagree, and one rank would
       wait in an exchange the others never start) */
    odb_status all = odb_dist_allreduce_max(sec, 1, "MPI_Allreduce (the "
                                            "run's time)");
    if (st == ODB_OK) st = all;
  }
  return st;
}

/*
** The compute roof of a GPU RK solve (docs/gpu.md, "the compute roof"):
** fp64_per_step, the FP64 instructions (DFMA, DADD, DMUL) of a step as the
** generator counted them, averaged over the run's attempts (those that
** evaluated stage 0 and those that took F_0 from memory, told apart by
** the evaluations: nfev = steps (s - 1) + the former); fp64_peak_gflops,
** the device's measured DFMA peak; fp64_floor_s, a step's instructions at
** that peak (one DFMA a thread instruction: the peak's FLOP/s over 2);
** roofline_pct, the larger of the memory floor (the row's floor_pct) and
** the FP64 floor over the measured time. Nothing for another solver or
** where the count is unknown; the count alone where the peak is.
*/
static void put_roof(row_out *w, const odb_solver *s,
                     const odb_solve_stats *st, double sec) {
  double f1 = s->variant->fp64 ? s->variant->fp64(s, 1) : 0;
  double f0 = s->variant->fp64 ? s->variant->fp64(s, 0) : 0;
  odb_fp64_peaks pk;
  double n0, per, floor_s, mem = 0;
  if (!(f1 > 0) || st->steps <= 0) return;
  n0 = (double)st->nfev - (double)st->steps * (s->method->s - 1);
  n0 = n0 < 0 ? 0 : n0 > (double)st->steps ? (double)st->steps : n0;
  per = (f1 * n0 + f0 * ((double)st->steps - n0)) / (double)st->steps;
  put_num(w, "fp64_per_step", per);
  if (!(sec > 0) || odb_backend_fp64_peak(s->backend, &pk) != ODB_OK ||
      !(pk.flops > 0))
    return;
  floor_s = per / (pk.flops / 2);
  put_num(w, "fp64_peak_gflops", pk.flops / 1e9);
  put_num(w, "fp64_floor_s", floor_s);
  if (lua_getfield(w->L, w->tidx, "floor_pct") == LUA_TNUMBER)
    mem = lua_tonumber(w->L, -1) / 100 * sec;
  lua_pop(w->L, 1);
  put_num(w, "roofline_pct", 100.0 * fmax(mem, floor_s * (double)st->steps) /
                             sec);
}

/*
** Every rank's figures of one s:integrate of a distributed variant under
** mpirun, which every rank calls together (SPMD): its steps a second on
** its own clock over the call's runs and its seconds waiting for
** communication (odb_dist_wait_seconds) during the call, gathered with
** the collectives' timeout. Rank 0 publishes one ODB_EV_RANKS record a
** rank for the dashboard and events.jsonl; every rank keeps the slowest
** wait for the row (wait_s_max). Assumes 2 R values fit MPI's int
** displacements (odb_dist_allgatherv checks them).
*/
static odb_status rank_figures(odbL_state *S, const odb_solver *s,
                               const integrate_runs *r, double waited,
                               solve_figures *f) {
  int R = odb_dist_size(), me = odb_dist_rank();
  double mine[2], *all;
  long *counts;
  odb_status st;
  mine[0] = r->own_sec > 0 ? (double)r->steps_all / r->own_sec : 0;
  mine[1] = waited;
  all = malloc(sizeof *all * 2 * (size_t)R);
  counts = malloc(sizeof *counts * 2 * (size_t)R);
  if (all == NULL || counts == NULL) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "figures of %d ranks: out of memory", R);
    goto fail;
  }
  for (int k = 0; k < R; k++) {
    counts[k] = 2;          /* counts, then displacements */
    counts[R + k] = 2L * k;
  }
  st = odb_dist_allgatherv(mine, 2, all, counts, counts + R,
                           "MPI_Allgatherv (the ranks' figures)");
  if (st != ODB_OK) goto fail;
  f->ranks = R;
  f->wait_max = 0;
  for (int k = 0; k < R; k++) {
    odb_event ev;
    if (all[2 * k + 1] > f->wait_max) f->wait_max = all[2 * k + 1];
    if (me != 0 || S->ctx == NULL) continue;
    memset(&ev, 0, sizeof ev);
    ev.kind = ODB_EV_RANKS;
    snprintf(ev.name, sizeof ev.name, "%s/%s/%s", s->problem->type->name,
             s->method->name, s->variant->name);
    ev.step = k;
    ev.accepted = R;
    ev.value = all[2 * k];
    ev.value2 = all[2 * k + 1];
    odb_ctx_publish(S->ctx, &ev);
  }
fail:
  free(all);
  free(counts);
  return st;
}

/*
** Pushes the result table and records the same fields as a results row.
** The counts are those of one run (every run does the same steps); the
** seconds and the rates are the median's, with the quartiles, spread and
** reps of f->m beside them.
*/
static void push_result(lua_State *L, odbL_state *S, const odb_solver *s,
                        const solve_figures *f) {
  const odb_solve_stats *st = &f->st;
  double bytes = st->rbytes + st->wbytes, sec = f->m.median;
  char sbuf[32];
  row_out w;
  lua_createtable(L, 0, 28);
  w.L = L;
  w.tidx = lua_gettop(L);
  w.row = odb_results_add_row(&S->results);
  w.st = w.row ? ODB_OK : ODB_FAIL(ODB_ERR_NOMEM, "results row: out of memory");
  put_str(&w, "kind", "solve");
  put_str(&w, "label", f->label);
  put_str(&w, "problem", s->problem->type->name);
  put_str(&w, "method", s->method->name);
  put_str(&w, "variant", s->variant->name);
  put_str(&w, "backend", s->backend->ops->name);
  put_int(&w, "n", s->n);
  put_int(&w, "d", s->problem->d);
  if (s->opts.threads > 0) put_int(&w, "threads", s->opts.threads);
  put_num(&w, "t0", f->t0);
  put_num(&w, "t1", f->t1);
  if (s->opts.h_fixed > 0) put_num(&w, "h_fixed", s->opts.h_fixed);
  else {
    put_num(&w, "rtol", s->opts.rtol);
    put_num(&w, "atol", s->opts.atol);
  }
  put_str(&w, "status", status_label(st->status, sbuf, sizeof sbuf));
  put_int(&w, "steps", st->steps);
  put_int(&w, "accepted", st->accepted);
  put_int(&w, "rejected", st->rejected);
  put_int(&w, "nfev", st->nfev);
  put_num(&w, "seconds", sec);
  if (w.st == ODB_OK) w.st = odbL_measure_fields(L, w.tidx, w.row, &f->m);
  if (st->steps > 0)
    put_num(&w, "time_per_step", sec / (double)st->steps);
  if (sec > 0) {
    put_num(&w, "gbs", bytes / sec / 1e9);
    put_num(&w, "gflops", st->flops / sec / 1e9);
  }
  /* the floor: the solve's fewest bytes (odb_ode_floor.h), not the
     variant's count, at the figures of its backend and thread count */
  if (f->bw && w.st == ODB_OK) {
    double mr, mw, touched;
    odb_solve_min_bytes(s->n, st, &mr, &mw, &touched);
    w.st = odbL_floor_fields(L, w.tidx, w.row, s->backend->ops->name,
                             strncmp(s->variant->name, "par_", 4) == 0
                               ? odb_solver_threads(s) : 1,
                             mr, mw, touched, sec);
  }
  put_roof(&w, s, st, sec);   /* after floor_pct, which it reads */
  put_num(&w, "bytes", bytes);
  put_num(&w, "t", st->t);
  put_num(&w, "h", st->h);
  if (f->have_err) put_num(&w, "err", f->err);
  if (f->ranks > 1) {
    put_int(&w, "ranks", f->ranks);
    put_num(&w, "wait_s_max", f->wait_max);
  }
  odbL_check_record(L, w.st);
  remember_row(L, -1);
}

/*
** s:integrate{t0 =, t1 =, reference =, label =, measure =}. The engine
** calls run with nothing Lua-side pending; the row is recorded before any
** error is raised. The integration repeats as measure says (over the
** solver's, then --measure; odb_lua_measure.c), each run from the same
** start (integrate_run); a first run that alone spends the budget is the
** only one (warmup_counts), so a long integration runs once. The context
** is not polled between runs: the solver checks the stop flag every step.
** A failed run ends it, and the row then holds that run alone.
*/
static int solver_integrate(lua_State *L) {
  odbL_solver *box;
  odbL_state *S;
  odb_solver *s;
  odbL_vector *ref = NULL, *y = NULL, *y0;
  solve_figures f;
  integrate_runs runs = {0};
  odb_measure_opts mo;
  int has_t0;
  double start, waited;
  odb_status st;
  char msg[512];
  odbL_check_not_in_callback(L, "s:integrate");
  box = check_solver(L, 1);
  S = odbL_state_get(L);
  s = box->s;
  memset(&f, 0, sizeof f);
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    lua_newtable(L);
  }
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  odbL_check_keys(L, 2, integrate_keys);
  has_t0 = odbL_opt_number(L, 2, "t0", &f.t0);
  if (!odbL_opt_number(L, 2, "t1", &f.t1)) f.t1 = s->problem->t1;
  f.label = odbL_opt_string(L, 2, "label", s->problem->label);
  mo = box->measure;
  mo.warmup_counts = 1;
  odbL_measure_opt_field(L, 2, 2, &mo);
  odbL_measure_final(L, &mo);
  if (lua_getfield(L, 2, "reference") != LUA_TNIL) {
    ref = luaL_testudata(L, -1, ODBL_VECTOR);
    if (!ref || ref->closed)
      odbL_field_error(L, 2, "reference", ODBL_VECTOR, -1);
    if (ref->n != s->n)
      luaL_argerror(L, 2, lua_pushfstring(L, "field 'reference': Vector of "
                    "length %I expected, got length %I", (lua_Integer)s->n,
                    (lua_Integer)ref->n));
    y = odbL_vector_new(L, s->n);   /* scratch for the state, made now */
  }
  if (lua_getfield(L, 2, "tstops") != LUA_TNIL) {   /* kept on the stack */
    int k = odbL_check_tstops(L, 2, -1, "tstops", NULL);
    runs.tstops = lua_newuserdatauv(L, (size_t)(k > 0 ? k : 1) *
                                    sizeof(double), 0);
    runs.ntstops = odbL_check_tstops(L, 2, -2, "tstops",
                                     (double *)runs.tstops);
  }
  start = has_t0 ? f.t0 : s->t;
  if (!(f.t1 > start))
    order_error(L, 2, f.t1, has_t0 ? "t0" : "the current time", start);
  if (s->opts.h_fixed > 0) fixed_step_check(L, s, start, f.t1);
  if (has_t0) odb_solver_reset(s, f.t0);
  f.t0 = s->t;
  y0 = odbL_vector_new(L, s->n);   /* the start of every run */
  st = odb_solver_get_state(s, y0->v);
  runs = (integrate_runs){ s, f.t0, f.t1, s->h_next, y0->v, &f.st,
                           runs.tstops, runs.ntstops, 0, 0 };
  waited = odb_dist_wait_seconds();
  if (st == ODB_OK)
    st = odb_measure_run(integrate_run, &runs, &mo, NULL, &f.m, NULL);
  /* a failed run ends the run on every rank (odb_dist_abort), so only a
     run that went well gathers */
  if (st == ODB_OK && s->variant->gather && odb_dist_size() > 1)
    st = rank_figures(S, s, &runs, odb_dist_wait_seconds() - waited, &f);
  if (st != ODB_OK) {   /* the row is the failed run's */
    double one = f.st.seconds;
    odb_measure_summarize(&one, 1, &f.m);
  }
  f.st.status = st;
  if (st != ODB_OK) copy_error(st, msg, sizeof msg);
  if (ref && st == ODB_OK && odb_solver_get_state(s, y->v) == ODB_OK) {
    f.have_err = 1;
    f.err = odbL_max_rel_err(y->v, ref->v, s->n);
  }
  f.bw = odbL_state_bandwidth(S, st == ODB_OK);
  push_result(L, S, s, &f);
  if (st != ODB_OK) return raise_status(L, st, msg);
  return 1;
}

/* s:state(): a copy of the current solution. */
static int solver_state(lua_State *L) {
  odbL_solver *box;
  odbL_vector *v;
  odb_status st;
  char msg[512];
  odbL_check_not_in_callback(L, "s:state");
  box = check_solver(L, 1);
  v = odbL_vector_new(L, box->s->n);
  st = odb_solver_get_state(box->s, v->v);
  if (st != ODB_OK) {
    copy_error(st, msg, sizeof msg);
    return raise_status(L, st, msg);
  }
  return 1;
}

/* s:set_state(vector_or_table [, t]). */
static int solver_set_state(lua_State *L) {
  odbL_solver *box;
  odb_solver *s;
  const double *y;
  double t;
  odbL_vector *v;
  odbL_check_not_in_callback(L, "s:set_state");
  box = check_solver(L, 1);
  s = box->s;
  t = (double)luaL_optnumber(L, 3, s->t);
  v = luaL_testudata(L, 2, ODBL_VECTOR);
  if (v) {
    if (v->closed) luaL_argerror(L, 2, "the vector is closed");
  } else {
    luaL_checktype(L, 2, LUA_TTABLE);
    if (luaL_len(L, 2) != s->n)
      luaL_argerror(L, 2, lua_pushfstring(L, "table of %I numbers expected, "
                    "got %I", (lua_Integer)s->n, (lua_Integer)luaL_len(L, 2)));
    lua_pushcfunction(L, odbL_vector_ctor);
    lua_pushvalue(L, 2);
    lua_call(L, 1, 1);
    v = lua_touserdata(L, -1);
  }
  if (v->n != s->n)
    luaL_argerror(L, 2, lua_pushfstring(L, "Vector of length %I expected, "
                  "got length %I", (lua_Integer)s->n, (lua_Integer)v->n));
  y = v->v;
  odb_solver_set_state(s, t, y);
  return 0;
}

/*
** __gc: idempotent. A solver being collected is used by no running call
** (a running call keeps it on the stack), so this never refuses: an error
** in a finalizer would only leak it.
*/
static int solver_gc(lua_State *L) {
  odbL_solver *box = luaL_checkudata(L, 1, ODBL_SOLVER);
  if (box->s) {
    odb_solver_destroy(box->s);
    box->s = NULL;
    odbL_problem_release(box->pb);
    box->pb = NULL;
  }
  return 0;
}

/*
** s:close() and __close: idempotent; refused inside a callback from the
** engine (f, a tuner's verify), where the solver may be the one running
** the call (its step would go on with freed vectors).
*/
static int solver_close(lua_State *L) {
  odbL_check_not_in_callback(L, "s:close");
  return solver_gc(L);
}

/* "odebench.Solver(bruss2d(N=128), dopri5, fused/cpu, t=0)". */
static int solver_tostring(lua_State *L) {
  odbL_solver *box = luaL_checkudata(L, 1, ODBL_SOLVER);
  const odb_solver *s = box->s;
  if (!s) lua_pushliteral(L, "odebench.Solver(closed)");
  else
    lua_pushfstring(L, "odebench.Solver(%s, %s, %s/%s, t=%f)",
                    s->problem->label, s->method->name, s->variant->name,
                    s->backend->ops->name, (lua_Number)s->t);
  return 1;
}

/* Methods first, then fields (t, n, method, variant, backend, h, block,
   problem). */
static int solver_index(lua_State *L) {
  odbL_solver *box = luaL_checkudata(L, 1, ODBL_SOLVER);
  const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  const odb_solver *s;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || !k) return 1;
  if (!box->s) luaL_error(L, "attempt to use a closed solver");
  s = box->s;
  if (strcmp(k, "t") == 0) lua_pushnumber(L, s->t);
  else if (strcmp(k, "n") == 0) lua_pushinteger(L, (lua_Integer)s->n);
  else if (strcmp(k, "method") == 0) lua_pushstring(L, s->method->name);
  else if (strcmp(k, "variant") == 0) lua_pushstring(L, s->variant->name);
  else if (strcmp(k, "backend") == 0) lua_pushstring(L, s->backend->ops->name);
  else if (strcmp(k, "h") == 0) lua_pushnumber(L, s->h_next);
  else if (strcmp(k, "block") == 0) lua_pushinteger(L, (lua_Integer)s->block);
  else if (strcmp(k, "problem") == 0) lua_getiuservalue(L, 1, 1);
  else lua_pushnil(L);
  return 1;
}

/* }====== */

/* {====== ob.reference */

/*
** The cache key of a reference solution; pushes it. A built-in problem's
** key holds its kind, size and every parameter (the label shows only some:
** bruss2d(N=8) for any alpha); a problem defined in the scenario is told
** apart by its cache table instead (push_ref_cache), as its f is not in any
** key.
*/
static const char *push_ref_key(lua_State *L, const odb_problem *p, double t0,
                                double t1, const char *method, double tol) {
  luaL_Buffer b;
  char num[64];
  luaL_buffinit(L, &b);
  snprintf(num, sizeof num, "%s(n=%ld,d=%ld", p->type ? p->type->name : "?",
           p->n, p->d);
  luaL_addstring(&b, num);
  for (int i = 0; p->type && i < p->type->nparams && i < 8; ++i) {
    snprintf(num, sizeof num, ",%s=%.17g", p->type->params[i].name,
             p->param[i]);
    luaL_addstring(&b, num);
  }
  snprintf(num, sizeof num, ")|%.17g|%.17g|", t0, t1);
  luaL_addstring(&b, num);
  luaL_addstring(&b, method);
  snprintf(num, sizeof num, "|%.17g", tol);
  luaL_addstring(&b, num);
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/*
** Pushes the table of cached reference solutions for the Problem at pidx:
** the run's shared one for built-in problems, and for a problem defined in
** the scenario its own, held weakly by the Problem (it goes with it).
*/
static void push_ref_cache(lua_State *L, int pidx, const odb_problem *p) {
  lua_getfield(L, LUA_REGISTRYINDEX, ODBL_REFCACHE_KEY);
  if (!p->type || strcmp(p->type->name, ODB_PROBLEM_USER) != 0)
    return;                                      /* built-in: shared */
  if (lua_getfield(L, -1, "by problem") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "by problem");
  }
  lua_remove(L, -2);
  lua_pushvalue(L, pidx);
  if (lua_rawget(L, -2) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, pidx);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_remove(L, -2);
}

/*
** ob.reference(problem, {t0 =, t1 =, method = "verner65", tol = 1e-12}):
** a high-accuracy solution at t1 on the CPU. Cached per run; callers get a
** copy so that changing it cannot spoil the cache. No results row.
*/
int odbL_reference(lua_State *L) {
  odbL_state *S;
  odbL_problem *pb;
  const odb_problem *p;
  const char *method;
  double t0, t1, tol = 1e-12;
  const odb_method *m;
  odb_solver_opts o;
  odb_solver *s = NULL;
  odb_solve_stats stats;
  odbL_vector *out, *copy;
  odb_status st;
  char msg[512];
  odbL_check_not_in_callback(L, "ob.reference");
  S = odbL_state_get(L);
  pb = odbL_problem_check(L, 1);
  p = pb->p;
  t0 = p->t0;
  t1 = p->t1;
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    lua_newtable(L);
  }
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  odbL_check_keys(L, 2, reference_keys);
  odbL_opt_number(L, 2, "t0", &t0);
  odbL_opt_number(L, 2, "t1", &t1);
  method = odbL_opt_string(L, 2, "method", "verner65");
  if (odbL_opt_number(L, 2, "tol", &tol) && !(tol > 0))
    luaL_argerror(L, 2, "field 'tol': must be positive");
  if (!(t1 > t0)) order_error(L, 2, t1, "t0", t0);
  if (odb_method_lookup(method, &m) != ODB_OK)
    luaL_argerror(L, 2, odb_last_error());
  push_ref_key(L, p, t0, t1, method, tol);                        /* 3 */
  push_ref_cache(L, 1, p);                                        /* 4 */
  lua_pushvalue(L, 3);
  if (lua_rawget(L, 4) == LUA_TUSERDATA) {                        /* 5 */
    out = lua_touserdata(L, 5);
    copy = odbL_vector_new(L, out->n);
    memcpy(copy->v, out->v, (size_t)out->n * sizeof(double));
    return 1;
  }
  lua_pop(L, 1);
  out = odbL_vector_new(L, p->n);                                 /* 5 */
  memset(&o, 0, sizeof o);
  o.rtol = o.atol = tol;
  st = odb_solver_create(S->ctx, p, m, odb_ctx_backend(S->ctx, "cpu"), "auto",
                         &o, &s);
  if (st == ODB_OK) {
    odb_solver_reset(s, t0);
    st = odb_solver_integrate(s, t1, &stats);
    if (st == ODB_OK) st = odb_solver_get_state(s, out->v);
  }
  if (st != ODB_OK) copy_error(st, msg, sizeof msg);
  if (s) odb_solver_destroy(s);
  if (st == ODB_INTERRUPTED) return raise_status(L, st, msg);
  if (st != ODB_OK) return luaL_error(L, "reference solution failed: %s", msg);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 5);
  lua_rawset(L, 4);
  copy = odbL_vector_new(L, out->n);
  memcpy(copy->v, out->v, (size_t)out->n * sizeof(double));
  return 1;
}

/* }====== */

static const luaL_Reg solver_methods[] = {
  {"step", solver_step},
  {"integrate", solver_integrate},
  {"state", solver_state},
  {"set_state", solver_set_state},
  {"close", solver_close},
  {NULL, NULL}
};

static const luaL_Reg solver_meta[] = {
  {"__gc", solver_gc},
  {"__close", solver_close},
  {"__tostring", solver_tostring},
  {NULL, NULL}
};

/* The method table is __index's upvalue; fields come after methods. */
void odbL_solver_register(lua_State *L) {
  if (luaL_newmetatable(L, ODBL_SOLVER)) {
    luaL_setfuncs(L, solver_meta, 0);
    luaL_newlib(L, solver_methods);
    lua_pushcclosure(L, solver_index, 1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
