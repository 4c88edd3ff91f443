/* odb_lua_tune.c - ob.tune: tuning a solver or a Lua function from Lua. */
#include "odb_lua.h"
#include "odb_dist.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ODBL_TUNERUN "odebench.TuneRun"

/*
** Everything one ob.tune call holds in C lives in a userdata box on the
** Lua stack, so that a Lua error at any point frees it (__gc). Lua
** callbacks (target, where, verify) run under lua_pcall from trampolines;
** their errors come back to the engine as statuses and are raised again
** at the boundary, never through engine frames.
*/
typedef struct tune_box {
  lua_State *L;
  odbL_state *S;
  odb_space *space;
  odb_tune_solver *ts;       /* solver target */
  odb_tune_target ftarget;   /* function target */
  odb_tuner *tuner;          /* owned, or borrowed from online */
  odb_online *online;        /* strategy "online": owns its tuner */
  odb_tunedb *db;
  odb_solver *solver;        /* NULL for a function target */
  int target_ref, where_ref, verify_ref;
  odb_status row_st;         /* first failure recording a results row */
  int interrupted;           /* a Lua callback was interrupted */
  int online_timed;          /* online: timed steps per candidate */
  int is_online;             /* strategy "online" */
  int verify_full;           /* online: verify = "full" */
  int verify_off;            /* verify = false */
  char label[96], strategy[32], kind[16], code[160];
} tune_box;

static const char *const tune_keys[] = {
  "target", "space", "where", "strategy", "budget", "verify", "cache",
  "steps", "h", "seed", "measure", "label", "t1", "barrier", "hopeless",
  "objective", NULL
};

/* {====== the box */

static int box_gc(lua_State *L) {
  tune_box *b = luaL_checkudata(L, 1, ODBL_TUNERUN);
  if (b->online) {
    odb_online_destroy(b->online);   /* and the tuner it lent */
    b->online = NULL;
    b->tuner = NULL;
  }
  odb_tuner_destroy(b->tuner);
  odb_tune_solver_destroy(b->ts);
  odb_space_destroy(b->space);
  odb_tunedb_close(b->db);
  b->tuner = NULL;
  b->ts = NULL;
  b->space = NULL;
  b->db = NULL;
  luaL_unref(L, LUA_REGISTRYINDEX, b->target_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, b->where_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, b->verify_ref);
  b->target_ref = b->where_ref = b->verify_ref = LUA_NOREF;
  return 0;
}

/* Pushes a new box (owning nothing yet). */
static tune_box *new_box(lua_State *L, odbL_state *S) {
  tune_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  b->L = L;
  b->S = S;
  b->target_ref = b->where_ref = b->verify_ref = LUA_NOREF;
  if (luaL_newmetatable(L, ODBL_TUNERUN)) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  return b;
}

/* Raises "bad argument #1 to 'tune' (field 'f': <engine message>)". */
static int field_fail(lua_State *L, const char *field) {
  return luaL_argerror(L, 1, lua_pushfstring(L, "field '%s': %s", field,
                       odb_last_error()));
}

/* }====== */

/* {====== reading the space */

/* 1 when the table at idx is a non-empty sequence. */
static int is_list(lua_State *L, int idx) {
  return lua_rawlen(L, idx) > 0;
}

/* A list of integers or of strings as a parameter. */
static void add_list(lua_State *L, tune_box *b, const char *name, int idx) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  int ints = 0, strs = 0;
  odb_status st = ODB_OK;
  long *iv;
  const char **sv;
  if (n > INT_MAX)   /* the space counts values in an int */
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': parameter '%s' "
                  "has %I values", name, n));
  iv = lua_newuserdatauv(L, (size_t)n * sizeof(long), 0);
  sv = lua_newuserdatauv(L, (size_t)n * sizeof(char *), 0);
  for (lua_Integer k = 1; k <= n; ++k) {
    int isint = 0, t = lua_rawgeti(L, idx, k);
    if (t == LUA_TNUMBER) {
      iv[k - 1] = (long)lua_tointegerx(L, -1, &isint);
      ints += isint;
    } else if (t == LUA_TSTRING) {
      sv[k - 1] = lua_tostring(L, -1);   /* kept alive by the table */
      strs++;
    }
    lua_pop(L, 1);
  }
  if (ints == n) st = odb_space_add_ints(b->space, name, iv, (int)n);
  else if (strs == n)
    st = odb_space_add_enum(b->space, name, sv, (int)n);
  else
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': parameter '%s': "
                  "the values must be all integers or all strings", name));
  if (st != ODB_OK) field_fail(L, "space");
  lua_pop(L, 2);
}

/* An integer field of the table at idx; def when absent. */
static long int_field(lua_State *L, int idx, const char *name,
                      const char *key, long def) {
  int isint = 0;
  long v = def;
  if (lua_getfield(L, idx, key) != LUA_TNIL) {
    v = (long)lua_tointegerx(L, -1, &isint);
    if (!isint)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': parameter "
                    "'%s': %s must be an integer", name, key));
  }
  lua_pop(L, 1);
  return v;
}

/* Raises the error of a parameter whose table has no usable shape. */
static int shape_error(lua_State *L, const char *name) {
  return luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': parameter "
                       "'%s' needs a list of values, {min =, max = [, step "
                       "=]} or {pow2 = {lo, hi}}", name));
}

/* {pow2 = {lo, hi}} as a parameter (the table at idx). */
static void add_pow2(lua_State *L, tune_box *b, const char *name, int idx) {
  static const char *const keys[] = {"pow2", NULL};
  int top = lua_gettop(L), ok;
  long lo, hi;
  odbL_check_keys(L, idx, keys);
  lua_getfield(L, idx, "pow2");
  ok = lua_istable(L, -1) && lua_rawlen(L, -1) == 2;
  if (ok) {
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    ok = lua_isinteger(L, -2) && lua_isinteger(L, -1);
  }
  if (!ok)
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': parameter '%s': "
                  "pow2 = {lo, hi} takes two integers", name));
  lo = (long)lua_tointeger(L, -2);
  hi = (long)lua_tointeger(L, -1);
  if (odb_space_add_pow2(b->space, name, lo, hi) != ODB_OK)
    field_fail(L, "space");
  lua_settop(L, top);
}

/* {min=, max=, step=} or {pow2 = {lo, hi}} as a parameter. */
static void add_shape(lua_State *L, tune_box *b, const char *name, int idx) {
  static const char *const range_keys[] = {"min", "max", "step", NULL};
  int has_pow2 = lua_getfield(L, idx, "pow2") != LUA_TNIL;
  int has_min = lua_getfield(L, idx, "min") != LUA_TNIL;
  int has_max = lua_getfield(L, idx, "max") != LUA_TNIL;
  lua_pop(L, 3);
  if (has_pow2) {
    add_pow2(L, b, name, idx);
    return;
  }
  if (!has_min || !has_max) shape_error(L, name);
  odbL_check_keys(L, idx, range_keys);
  if (odb_space_add_range(b->space, name, int_field(L, idx, name, "min", 0),
                          int_field(L, idx, name, "max", 0),
                          int_field(L, idx, name, "step", 1)) != ODB_OK)
    field_fail(L, "space");
}

/* Solver targets list their parameters in this order. */
static const char *const solver_order[] = {"variant", "block", "threads"};

/* qsort order of names. */
static int cmp_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rank of a name: solver targets put variant, block, threads first. */
static void order_names(const char **names, int n, int solver) {
  qsort(names, (size_t)n, sizeof *names, cmp_name);
  if (!solver) return;
  for (int r = 2; r >= 0; --r)
    for (int i = 0; i < n; ++i)
      if (strcmp(names[i], solver_order[r]) == 0) {
        const char *t = names[i];
        memmove(names + 1, names, (size_t)i * sizeof *names);
        names[0] = t;
        break;
      }
}

/* Builds b->space from the table at idx (names kept alive by it). */
static void read_space(lua_State *L, tune_box *b, int idx) {
  const char *names[ODB_SPACE_MAX_PARAMS + 1];
  int n = 0;
  if (odb_space_create(&b->space) != ODB_OK) field_fail(L, "space");
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_argerror(L, 1, "field 'space': parameter names must be strings");
    if (lua_type(L, -1) != LUA_TTABLE)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': parameter '%s' "
                    "needs a table of values, got %s", lua_tostring(L, -2),
                    luaL_typename(L, -1)));
    if (n == ODB_SPACE_MAX_PARAMS)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'space': more than %d "
                    "parameters", ODB_SPACE_MAX_PARAMS));
    names[n++] = lua_tostring(L, -2);
    lua_pop(L, 1);
  }
  if (n == 0)
    luaL_argerror(L, 1, "field 'space': the space is empty (give at least "
                  "one parameter: name = {values...} | {min =, max =, step "
                  "=} | {pow2 = {lo, hi}})");
  order_names(names, n, b->solver != NULL);
  for (int i = 0; i < n; ++i) {
    lua_getfield(L, idx, names[i]);
    if (is_list(L, -1)) add_list(L, b, names[i], lua_gettop(L));
    else add_shape(L, b, names[i], lua_gettop(L));
    lua_pop(L, 1);
  }
}

/* }====== */

/* {====== Lua callbacks */

/* Pushes the configuration as {name = value, ...}. */
static void push_config(lua_State *L, const odb_space *sp,
                        const odb_config *c) {
  lua_createtable(L, 0, odb_space_nparams(sp));
  for (int i = 0; i < odb_space_nparams(sp); ++i) {
    if (odb_space_is_enum(sp, i))
      lua_pushstring(L, odb_space_str(sp, i, c->idx[i]));
    else
      lua_pushinteger(L, (lua_Integer)odb_space_int(sp, i, c->idx[i]));
    lua_setfield(L, -2, odb_space_name(sp, i));
  }
}

/* What a protected callback gets and gives back. */
typedef struct lcall {
  tune_box *b;
  int ref;
  const odb_config *c;
  const double *y, *yref;    /* verify of a solver target */
  long n;
  int nres;                  /* results the Lua function returned */
  int truth;
  double num[3];             /* numbers returned (NaN when absent) */
  int isnum[3];
  const char *msg;           /* a string returned second (target) */
  char text[160];
} lcall;

/* Pushes a copy of n values as a Vector. */
static void push_vector(lua_State *L, const double *v, long n) {
  odbL_vector *vec = odbL_vector_new(L, n);
  memcpy(vec->v, v, (size_t)n * sizeof(double));
}

/* Runs under lua_pcall: calls the function at ref with the config (and the
   states for a solver verify) and stores up to three results. */
static int protected_call(lua_State *L) {
  lcall *a = lua_touserdata(L, 1);
  int top, nargs = 1;
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
  push_config(L, a->b->space, a->c);
  if (a->y) {
    push_vector(L, a->y, a->n);
    push_vector(L, a->yref, a->n);
    nargs = 3;
  }
  lua_call(L, nargs, LUA_MULTRET);
  top = lua_gettop(L);
  a->nres = top;
  a->truth = top >= 1 && lua_toboolean(L, 1);
  for (int i = 0; i < 3; ++i) {
    a->isnum[i] = i < top && lua_type(L, i + 1) == LUA_TNUMBER;
    a->num[i] = a->isnum[i] ? (double)lua_tonumber(L, i + 1) : NAN;
  }
  if (top >= 2 && lua_type(L, 2) == LUA_TSTRING)
    snprintf(a->text, sizeof a->text, "%s", lua_tostring(L, 2));
  a->msg = top >= 2 && lua_type(L, 2) == LUA_TSTRING ? a->text : NULL;
  if (top >= 1 && lua_type(L, 1) != LUA_TNUMBER &&
      lua_type(L, 1) != LUA_TBOOLEAN && lua_type(L, 1) != LUA_TNIL)
    snprintf(a->text, sizeof a->text, "%s", luaL_typename(L, 1));
  return 0;
}

/*
** Per thread, the function target's callback of a running ob.tune (or
** NULL): ob.tune refuses to start inside it (tune_guard). Only ob.tune: a
** function target times Lua code, which may make and run solvers of its
** own (scenarios/gpu_access_distance.lua does), so it is not an engine
** callback for odbL_check_not_in_callback; a tuning run nested in it
** would share the tuning database and the run's rows with the outer one.
*/
static _Thread_local const char *tune_target_cb;

/* The name a callback is shown by in the guards' errors. */
static const char *callback_name(const tune_box *b, const lcall *a) {
  if (a->ref == b->where_ref) return "the 'where' of ob.tune";
  if (a->ref == b->verify_ref) return "the 'verify' of ob.tune";
  return "the target of ob.tune";
}

/*
** Calls a callback; on a Lua error records "<what>: <message>". The
** callbacks of a solver target and every 'where' run bracketed by
** odbL_callback_enter/leave (the solver is in the middle of an
** evaluation, or the space of an enumeration); a function target's
** target and verify only refuse ob.tune (tune_target_cb).
*/
static odb_status call_lua(tune_box *b, lcall *a, const char *what) {
  lua_State *L = b->L;
  int top = lua_gettop(L), rc;
  int engine = b->solver != NULL || a->ref == b->where_ref;
  const char *outer = tune_target_cb;
  if (!lua_checkstack(L, 8))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: Lua stack overflow", what);
  lua_pushcfunction(L, protected_call);
  lua_pushlightuserdata(L, a);
  if (engine) odbL_callback_enter(callback_name(b, a));
  else if (!outer) tune_target_cb = callback_name(b, a);
  rc = lua_pcall(L, 1, 0, 0);
  if (engine) odbL_callback_leave();
  else tune_target_cb = outer;
  if (rc == LUA_OK) return ODB_OK;
  {
    const char *msg = lua_tostring(L, -1);
    odb_status st;
    if ((msg && strcmp(msg, "interrupted") == 0) ||
        odb_ctx_stop_requested(b->S->ctx)) {
      b->interrupted = 1;
      st = ODB_FAIL(ODB_INTERRUPTED, "interrupted");
    } else {
      st = ODB_FAIL(ODB_ERR_ARG, "%s: %s", what, msg ? msg
                    : "(error object is not a string)");
    }
    lua_settop(L, top);
    return st;
  }
}

/* The `where` constraint. */
static int where_pred(const odb_space *sp, const odb_config *c, void *ud) {
  tune_box *b = ud;
  lcall a;
  (void)sp;
  memset(&a, 0, sizeof a);
  a.b = b;
  a.ref = b->where_ref;
  a.c = c;
  if (call_lua(b, &a, "where") != ODB_OK) return -1;
  return a.truth;
}

/*
** A function target: target(c) returns its seconds; no result at all
** means "time the call"; nil, message marks the configuration failed.
*/
static odb_status fn_run(void *ud, const odb_config *c, double *seconds) {
  tune_box *b = ud;
  lcall a;
  double t0 = odb_clock_now();
  memset(&a, 0, sizeof a);
  a.b = b;
  a.ref = b->target_ref;
  a.c = c;
  ODB_TRY(call_lua(b, &a, "target"));
  if (a.nres == 0) {
    *seconds = odb_clock_now() - t0;
    return ODB_OK;
  }
  if (a.isnum[0]) {
    *seconds = a.num[0];
    if (!(*seconds >= 0) || !isfinite(*seconds))
      return ODB_FAIL(ODB_ERR_ARG, "target: returned %g seconds", *seconds);
    return ODB_OK;
  }
  if (a.nres >= 1 && !a.truth && a.msg)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s", a.msg);
  return ODB_FAIL(ODB_ERR_ARG, "target: must return seconds (a number), "
                  "nothing, or nil and a message; got %s",
                  a.nres >= 1 && !a.truth ? "nil" : a.text);
}

/* Turns verify's (ok [, err [, tol]]) into err and tol for the tuner. */
static void verdict(const lcall *a, double *err, double *tol) {
  *err = a->isnum[1] ? a->num[1] : (a->truth ? 0 : INFINITY);
  *tol = a->isnum[2] ? a->num[2] : (a->truth ? INFINITY : 0);
  if (a->truth && !(*err <= *tol)) *tol = INFINITY;
  if (!a->truth && *err <= *tol) *err = INFINITY;
}

/* verify(c) of a function target. */
static odb_status fn_check(void *ud, const odb_config *c, double *err,
                           double *tol) {
  tune_box *b = ud;
  lcall a;
  memset(&a, 0, sizeof a);
  a.b = b;
  a.ref = b->verify_ref;
  a.c = c;
  ODB_TRY(call_lua(b, &a, "verify"));
  verdict(&a, err, tol);
  return ODB_OK;
}

/* verify(c, y, ref) of a solver target. */
static odb_status solver_verify(void *ud, const odb_config *c,
                                const double *y, const double *yref, long n,
                                double *err, double *tol) {
  tune_box *b = ud;
  lcall a;
  memset(&a, 0, sizeof a);
  a.b = b;
  a.ref = b->verify_ref;
  a.c = c;
  a.y = y;
  a.yref = yref;
  a.n = n;
  ODB_TRY(call_lua(b, &a, "verify"));
  verdict(&a, err, tol);
  return ODB_OK;
}

/* }====== */

/* {====== results rows */

/* Adds one field to a row, keeping the first failure. */
static void row_str(tune_box *b, odb_record *r, const char *k, const char *v) {
  if (b->row_st == ODB_OK) b->row_st = odb_record_set_str(r, k, v);
}

static void row_num(tune_box *b, odb_record *r, const char *k, double v) {
  if (b->row_st == ODB_OK) b->row_st = odb_record_set_num(r, k, v);
}

static void row_int(tune_box *b, odb_record *r, const char *k, long long v) {
  if (b->row_st == ODB_OK) b->row_st = odb_record_set_int(r, k, v);
}

/* The configuration's parameters as cfg.<name> fields. */
static void row_config(tune_box *b, odb_record *r, const odb_config *c) {
  const odb_space *sp = b->space;
  char key[48];
  for (int i = 0; i < odb_space_nparams(sp); ++i) {
    snprintf(key, sizeof key, "cfg.%s", odb_space_name(sp, i));
    if (odb_space_is_enum(sp, i))
      row_str(b, r, key, odb_space_str(sp, i, c->idx[i]));
    else
      row_int(b, r, key, odb_space_int(sp, i, c->idx[i]));
  }
}

/* on_eval: one results row per evaluation (kind "tune"). Never raises. */
static void on_eval(void *ud, odb_tuner *t, const odb_tune_eval *ev) {
  tune_box *b = ud;
  odb_record *r = odb_results_add_row(&b->S->results);
  char text[512];
  int ok = ev->status == ODB_TUNE_OK;
  if (!r) {
    if (b->row_st == ODB_OK)
      b->row_st = ODB_FAIL(ODB_ERR_NOMEM, "results row: out of memory");
    return;
  }
  row_str(b, r, "kind", "tune");
  row_str(b, r, "label", b->label);
  row_str(b, r, "strategy", b->strategy);
  row_str(b, r, "target", b->kind);
  if (b->solver) {
    row_str(b, r, "problem", b->solver->problem->type->name);
    row_str(b, r, "method", b->solver->method->name);
    row_int(b, r, "n", b->solver->n);
  }
  if (b->ts) {
    row_int(b, r, "steps", odb_tune_solver_steps(b->ts));
    row_num(b, r, "h", odb_tune_solver_h(b->ts));
  }
  if (b->online) row_int(b, r, "steps", b->online_timed);
  row_int(b, r, "eval", odb_tuner_nevals(t));
  row_str(b, r, "config", odb_tuner_config_text(t, &ev->cfg, text,
                                                  sizeof text));
  row_config(b, r, &ev->cfg);
  row_str(b, r, "status", odb_tune_status_name(ev->status));
  if (ok) {
    row_num(b, r, "median", ev->m.median);
    row_num(b, r, "spread", ev->m.spread);
    row_int(b, r, "reps", ev->m.reps);
    if (b->ts)
      row_num(b, r, "time_per_step",
              ev->m.median / odb_tune_solver_steps(b->ts));
    if (b->online) row_num(b, r, "time_per_step", ev->m.median);
  }
  if (!isnan(ev->err)) row_num(b, r, "err", ev->err);
  if (!isnan(ev->tol)) row_num(b, r, "tol", ev->tol);
  row_int(b, r, "cached", ev->cached);
  row_num(b, r, "seconds", ev->seconds);
  if (!ok) row_str(b, r, "message", ev->msg);
}

/* }====== */

/* {====== options */

/* budget = {evals =, seconds =}; zero or negative values are refused. */
static void read_budget(lua_State *L, odb_tune_budget *bu) {
  static const char *const keys[] = {"evals", "seconds", NULL};
  long long ev = 0;
  int has_e, has_s;
  memset(bu, 0, sizeof *bu);
  if (lua_getfield(L, 1, "budget") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1)) odbL_field_error(L, 1, "budget", "table", -1);
  odbL_check_keys(L, -1, keys);
  has_e = odbL_opt_integer(L, lua_gettop(L), "evals", &ev);
  has_s = odbL_opt_number(L, lua_gettop(L), "seconds", &bu->seconds);
  if (!has_e && !has_s)
    luaL_argerror(L, 1, "field 'budget': give evals and/or seconds (allowed: "
                  "evals = a positive integer, seconds = a positive number)");
  if (has_e && ev <= 0)
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'budget': evals must be a "
                  "positive integer, got %I", (lua_Integer)ev));
  if (has_s && !(bu->seconds > 0))
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'budget': seconds must be "
                  "positive, got %f", (lua_Number)bu->seconds));
  bu->evals = (long)ev;
  lua_pop(L, 1);
}

/* An integer field of the measure table at idx in lo..INT_MAX (the
   measurement counts in an int); def when absent. */
static int measure_int(lua_State *L, int idx, const char *k, int lo,
                       int def) {
  long long v;
  if (!odbL_opt_integer(L, idx, k, &v)) return def;
  if (v < lo || v > INT_MAX)
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'measure': %s must be >= "
                  "%d and at most %d, got %I", k, lo, INT_MAX,
                  (lua_Integer)v));
  return (int)v;
}

/* measure = {warmup =, min_reps =, max_reps =, max_seconds =, spread =}. */
static void read_measure(lua_State *L, odb_measure_opts *m) {
  static const char *const keys[] = {"warmup", "min_reps", "max_reps",
                                     "max_seconds", "spread", NULL};
  long long v;
  int idx;
  memset(m, 0, sizeof *m);
  if (lua_getfield(L, 1, "measure") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1)) odbL_field_error(L, 1, "measure", "table", -1);
  idx = lua_gettop(L);
  odbL_check_keys(L, idx, keys);
  v = measure_int(L, idx, "warmup", 0, -1);
  if (v >= 0) m->warmup = v == 0 ? -1 : (int)v;
  m->min_reps = measure_int(L, idx, "min_reps", 1, 0);
  m->max_reps = measure_int(L, idx, "max_reps", 1, 0);
  if (odbL_opt_number(L, idx, "max_seconds", &m->max_seconds) &&
      !(m->max_seconds > 0))
    luaL_argerror(L, 1, "field 'measure': max_seconds must be positive");
  if (odbL_opt_number(L, idx, "spread", &m->target_spread) &&
      !(m->target_spread > 0))
    luaL_argerror(L, 1, "field 'measure': spread must be positive");
  lua_pop(L, 1);
}

/* strategy = "exhaustive" | "random" | "anneal" | ... */
static void read_strategy(lua_State *L, tune_box *b, odb_tune_opts *o) {
  const char *s = odbL_opt_string(L, 1, "strategy", "exhaustive");
  char names[128];
  if (!odb_strategy_find(s))
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'strategy': unknown "
                  "strategy '%s' (allowed: %s)", s,
                  odb_strategy_names(names, sizeof names)));
  snprintf(b->strategy, sizeof b->strategy, "%s", s);
  o->strategy = b->strategy;
  b->is_online = strcmp(s, "online") == 0;
}

/* verify = true | false | function; returns 1 when checks are wanted. */
static int read_verify(lua_State *L, tune_box *b) {
  int t = lua_getfield(L, 1, "verify");
  if (t == LUA_TFUNCTION) {
    b->verify_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
  }
  if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "full") == 0) {
    if (!b->is_online)
      luaL_argerror(L, 1, "field 'verify': \"full\" applies to strategy "
                    "'online' (offline checks are always full)");
    b->verify_full = 1;
    lua_pop(L, 1);
    return 1;
  }
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    odbL_field_error(L, 1, "verify", b->is_online
                     ? "boolean, \"full\" or function"
                     : "boolean or function", -1);
  if (t == LUA_TBOOLEAN && lua_toboolean(L, -1) && !b->solver)
    luaL_argerror(L, 1, "field 'verify': a function target has no reference "
                  "to compare with; give verify = function(c) return ok "
                  "[, err [, tol]] end");
  t = t == LUA_TNIL ? b->solver != NULL : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return t;
}

/*
** cache = "auto" | "off" | path; opens the database when not "off". The
** default is "auto" for offline solver targets, "off" otherwise (online
** tuning measures the run at hand). Under mpirun the database belongs to
** rank 0: the other ranks tune as with "off" (docs/mpi.md).
*/
static void read_cache(lua_State *L, tune_box *b) {
  const char *c = odbL_opt_string(L, 1, "cache", b->solver && !b->is_online
                                                 ? "auto" : "off");
  char path[1024];
  if (strcmp(c, "off") == 0 || odb_dist_rank() != 0) return;
  if (strcmp(c, "auto") == 0) {
    if (odb_tunedb_default_path(path, sizeof path) != ODB_OK)
      field_fail(L, "cache");
    c = path;
  }
  if (odb_tunedb_open(c, 0, &b->db) != ODB_OK) field_fail(L, "cache");
}

/* }====== */

/* {====== targets */

/* A solver target: its space, steps and h, and the verify callback. */
static void make_solver_target(lua_State *L, tune_box *b, int verify) {
  odb_tune_solver_opts so;
  long long steps = 3;
  memset(&so, 0, sizeof so);
  if (odbL_opt_integer(L, 1, "steps", &steps) && (steps < 1 ||
                                                  steps > INT_MAX))
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'steps': must be at least "
                  "1 and at most %d, got %I", INT_MAX, (lua_Integer)steps));
  so.steps = (int)steps;
  if (odbL_opt_number(L, 1, "h", &so.h) && !(so.h > 0))
    luaL_argerror(L, 1, "field 'h': must be positive");
  if (verify && b->verify_ref != LUA_NOREF) {
    so.verify = solver_verify;
    so.verify_ud = b;
  }
  if (odb_tune_solver_create(b->solver, b->space, &so, &b->ts) != ODB_OK)
    field_fail(L, "space");
  snprintf(b->kind, sizeof b->kind, "solver");
}

/* A function target: key from the label and where it was defined. */
static void make_function_target(lua_State *L, tune_box *b) {
  lua_Debug ar;
  odb_tune_target *t = &b->ftarget;
  int has_steps = lua_getfield(L, 1, "steps") != LUA_TNIL;
  int has_h = lua_getfield(L, 1, "h") != LUA_TNIL;
  lua_pop(L, 2);
  if (has_steps || has_h)
    luaL_argerror(L, 1, "fields 'steps' and 'h' apply to solver targets "
                  "only");
  lua_getfield(L, 1, "target");
  lua_getinfo(L, ">S", &ar);
  snprintf(b->code, sizeof b->code, "lua:%s:%d", ar.short_src,
           ar.linedefined);
  t->space = b->space;
  t->ud = b;
  t->run = fn_run;
  t->check = b->verify_ref != LUA_NOREF ? fn_check : NULL;
  t->key.problem = b->label;
  t->key.size = "";
  t->key.method = "";
  t->key.family = "lua";
  t->key.params = "";
  t->key.code_hash = b->code;
  snprintf(b->kind, sizeof b->kind, "function");
}

/* Reads target: a Solver or a function; keeps a reference to it. */
static void read_target(lua_State *L, tune_box *b) {
  int t = lua_getfield(L, 1, "target");
  if (t == LUA_TNIL) luaL_argerror(L, 1, "field 'target' is required (a "
                                   "Solver or a function(config))");
  if (t != LUA_TFUNCTION) {
    b->solver = odbL_solver_test(L, -1);
    if (!b->solver && luaL_testudata(L, -1, ODBL_SOLVER))
      luaL_argerror(L, 1, "field 'target': the solver is closed");
    if (!b->solver)
      odbL_field_error(L, 1, "target", "Solver or function", -1);
  }
  b->target_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* }====== */

/* {====== strategy online */

/* Refuses the online-only fields for the other strategies. */
static void refuse_online_keys(lua_State *L) {
  static const char *const keys[] = {"t1", "barrier", "hopeless", NULL};
  for (int i = 0; keys[i]; ++i) {
    int t = lua_getfield(L, 1, keys[i]);
    lua_pop(L, 1);
    if (t != LUA_TNIL)
      luaL_argerror(L, 1, lua_pushfstring(L, "field '%s' applies to strategy "
                    "'online' only", keys[i]));
  }
}

/* hopeless = false | a factor > 1: the online hopeless rule. */
static double read_hopeless(lua_State *L) {
  double v = 0;
  int t = lua_getfield(L, 1, "hopeless");
  if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) v = -1;
  else if (t == LUA_TNUMBER && lua_tonumber(L, -1) > 1) v = lua_tonumber(L, -1);
  else if (t != LUA_TNIL)
    luaL_argerror(L, 1, "field 'hopeless': false or a factor greater than 1");
  lua_pop(L, 1);
  return v;
}

/* The options of strategy "online" and t1; raises on bad ones. */
static void read_online(lua_State *L, tune_box *b, const odb_tune_opts *o,
                        odb_online_opts *oo, double *t1) {
  const odb_measure_opts *m = &o->measure;
  long long steps = 1;
  memset(oo, 0, sizeof *oo);
  if (!b->solver)
    luaL_argerror(L, 1, "field 'strategy': 'online' tunes a solver during "
                  "its integration; the target must be a Solver");
  if (lua_getfield(L, 1, "h") != LUA_TNIL)
    luaL_argerror(L, 1, "field 'h': strategy 'online' takes the "
                  "integration's own steps (give the solver h= for fixed "
                  "steps)");
  lua_pop(L, 1);
  if (odbL_opt_integer(L, 1, "steps", &steps) && (steps < 1 || steps > 64))
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'steps': timed steps per "
                  "candidate, 1 to 64, got %I", (lua_Integer)steps));
  if (m->min_reps || m->max_reps || m->max_seconds > 0 ||
      m->target_spread > 0)
    luaL_argerror(L, 1, "field 'measure': only warmup (untimed steps per "
                  "candidate) applies to strategy 'online'");
  oo->timed = b->online_timed = (int)steps;
  oo->warmup = m->warmup;
  *t1 = b->solver->problem->t1;
  if (odbL_opt_number(L, 1, "t1", t1) && !(*t1 > b->solver->t))
    luaL_argerror(L, 1, lua_pushfstring(L, "field 't1': must be greater "
                  "than the solver's time (%f)", (lua_Number)b->solver->t));
  if (!(*t1 > b->solver->t))
    luaL_argerror(L, 1, lua_pushfstring(L, "the solver's time (%f) is past "
                  "the problem's t1; give t1 =", (lua_Number)b->solver->t));
  if (odbL_opt_number(L, 1, "barrier", &oo->barrier) && !(oo->barrier > 0))
    luaL_argerror(L, 1, "field 'barrier': seconds per barrier, positive");
  oo->hopeless = read_hopeless(L);
  oo->budget = o->budget;
  oo->has_seed = o->has_seed;
  oo->seed = o->seed;
  oo->verify = o->verify < 0 ? -1 : b->verify_full ? 1 : 0;
  if (o->verify >= 0 && b->verify_ref != LUA_NOREF) {
    oo->verify_fn = solver_verify;
    oo->verify_ud = b;
  }
  oo->on_eval = on_eval;
  oo->on_eval_ud = b;
  oo->label = b->label;
  snprintf(b->kind, sizeof b->kind, "solver");
}

/*
** The variant options the solver runs after the tuning phase (the
** winner's, e.g. the active ranks of a distributed variant) as a table by
** name on the stack, and as fields "opt.<name>" of the phase's row.
*/
static void push_online_options(lua_State *L, tune_box *b, odb_record *row) {
  const odb_solver *s = b->solver;
  char key[80];
  lua_createtable(L, 0, s->opts.nvopts);
  for (int i = 0; i < s->opts.nvopts; ++i) {
    const odb_param_value *g = &s->opts.vopts[i];
    int integral = !g->str && g->num == floor(g->num) && fabs(g->num) < 1e15;
    snprintf(key, sizeof key, "opt.%s", g->name);
    if (g->str) {
      lua_pushstring(L, g->str);
      if (row) row_str(b, row, key, g->str);
    } else if (integral) {
      lua_pushinteger(L, (lua_Integer)g->num);
      if (row) row_int(b, row, key, (long long)g->num);
    } else {
      lua_pushnumber(L, g->num);
      if (row) row_num(b, row, key, g->num);
    }
    lua_setfield(L, -2, g->name);
  }
}

/* The figures of the online tuning phase as a table (top) and a row. */
static void push_online(lua_State *L, tune_box *b) {
  odb_online_report r;
  odb_record *row = odb_results_add_row(&b->S->results);
  const odb_solver *s = b->solver;
  struct { const char *k; double v; } nums[] = {
    {"tuning_steps", (double)0}, {"attempts", 0}, {"warmup_steps", 0},
    {"seconds", 0}, {"step_seconds", 0}, {"switch_seconds", 0},
    {"verify_seconds", 0}, {"profile_seconds", 0}, {"best_step", 0},
    {"overhead_steps", 0}, {"t", 0}, {"candidates", 0}, {"evaluated", 0},
    {"rejected", 0}, {"failed", 0}, {"groups", 0}, {"pruned", 0},
    {"pruned_configs", 0}, {"hopeless", 0}, {"second_looks", 0},
  };
  odb_online_get_report(b->online, &r);
  nums[0].v = (double)r.steps;
  nums[1].v = (double)r.attempts;
  nums[2].v = (double)r.warmup_steps;
  nums[3].v = r.seconds;
  nums[4].v = r.step_seconds;
  nums[5].v = r.switch_seconds;
  nums[6].v = r.verify_seconds;
  nums[7].v = r.profile_seconds;
  nums[8].v = r.best_step;
  nums[9].v = r.overhead_steps;
  nums[10].v = r.t;
  nums[11].v = (double)r.candidates;
  nums[12].v = (double)r.evaluated;
  nums[13].v = (double)r.rejected;
  nums[14].v = (double)r.failed;
  nums[15].v = (double)r.model.groups;
  nums[16].v = (double)r.model.pruned;
  nums[17].v = (double)r.model.pruned_configs;
  nums[18].v = (double)r.model.hopeless;
  nums[19].v = (double)r.second_looks;
  if (!row && b->row_st == ODB_OK)
    b->row_st = ODB_FAIL(ODB_ERR_NOMEM, "results row: out of memory");
  if (row) {
    row_str(b, row, "kind", "online");
    row_str(b, row, "label", b->label);
    row_str(b, row, "problem", s->problem->type->name);
    row_str(b, row, "method", s->method->name);
    row_int(b, row, "n", s->n);
    row_str(b, row, "winner", r.winner);
    row_str(b, row, "finalists", r.finalists);
    row_str(b, row, "checks", odb_online_windowed(b->online) ? "windows"
            : b->verify_off ? "none" : "full");
    row_str(b, row, "variant", s->variant->name);
    row_int(b, row, "block", s->block);
    row_int(b, row, "finished", r.finished);
  }
  lua_createtable(L, 0, 24);
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; ++i) {
    if (isnan(nums[i].v)) continue;
    lua_pushnumber(L, nums[i].v);
    lua_setfield(L, -2, nums[i].k);
    if (row) row_num(b, row, nums[i].k, nums[i].v);
  }
  lua_pushstring(L, r.winner);
  lua_setfield(L, -2, "winner");
  lua_pushstring(L, r.finalists);
  lua_setfield(L, -2, "finalists");
  lua_pushboolean(L, odb_online_windowed(b->online));
  lua_setfield(L, -2, "windowed");
  lua_pushstring(L, s->variant->name);
  lua_setfield(L, -2, "variant");
  lua_pushinteger(L, (lua_Integer)s->block);
  lua_setfield(L, -2, "block");
  lua_pushboolean(L, r.finished);
  lua_setfield(L, -2, "finished");
  push_online_options(L, b, row);
  lua_setfield(L, -2, "options");
}

/* }====== */

/* {====== the result table */

/* Sets t[k] = number / integer at the top table. */
static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, long long v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* Pushes the table of one evaluation. */
static void push_eval(lua_State *L, tune_box *b, const odb_tune_eval *ev) {
  char text[512];
  lua_createtable(L, 0, 12);
  push_config(L, b->space, &ev->cfg);
  lua_setfield(L, -2, "config");
  lua_pushstring(L, odb_tuner_config_text(b->tuner, &ev->cfg, text,
                                          sizeof text));
  lua_setfield(L, -2, "config_str");
  lua_pushstring(L, odb_tune_status_name(ev->status));
  lua_setfield(L, -2, "status");
  if (ev->status == ODB_TUNE_OK) {
    set_num(L, "median", ev->m.median);
    set_num(L, "spread", ev->m.spread);
    set_int(L, "reps", ev->m.reps);
  }
  if (!isnan(ev->err)) set_num(L, "err", ev->err);
  if (!isnan(ev->tol)) set_num(L, "tol", ev->tol);
  lua_pushboolean(L, ev->cached);
  lua_setfield(L, -2, "cached");
  set_num(L, "seconds", ev->seconds);
  if (ev->msg[0]) {
    lua_pushstring(L, ev->msg);
    lua_setfield(L, -2, "message");
  }
}

/* Pushes the statistics table. */
static void push_stats(lua_State *L, const odb_tune_stats *s) {
  lua_createtable(L, 0, 11);
  set_int(L, "evals", s->evals);
  set_int(L, "measured", s->measured);
  set_int(L, "cached", s->cached);
  set_int(L, "rejected", s->rejected);
  set_int(L, "failed", s->failed);
  set_int(L, "skipped", s->skipped);
  set_int(L, "valid", s->valid);
  set_num(L, "raw", s->raw);
  set_int(L, "planned", s->planned);
  set_num(L, "seconds", s->seconds);
  set_int(L, "seed", (long long)s->seed);
}

/* Pushes best/tied fields into the result table at the top. */
static void push_best(lua_State *L, tune_box *b) {
  const odb_tune_eval *best = odb_tuner_best(b->tuner);
  long n = odb_tuner_tied(b->tuner, NULL, 0), *idx;
  char text[512];
  if (best) {
    push_config(L, b->space, &best->cfg);
    lua_setfield(L, -2, "best");
    lua_pushstring(L, odb_tuner_config_text(b->tuner, &best->cfg, text,
                                            sizeof text));
    lua_setfield(L, -2, "best_config");
    set_num(L, "best_median", best->m.median);
    set_num(L, "best_spread", best->m.spread);
  }
  idx = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *idx, 0);
  odb_tuner_tied(b->tuner, idx, n);
  lua_createtable(L, (int)n, 0);
  lua_createtable(L, (int)n, 0);
  for (long i = 0; i < n; ++i) {
    const odb_tune_eval *e = odb_tuner_eval_at(b->tuner, idx[i]);
    push_config(L, b->space, &e->cfg);
    lua_rawseti(L, -3, i + 1);
    lua_pushstring(L, odb_tuner_config_text(b->tuner, &e->cfg, text,
                                            sizeof text));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -4, "tied_configs");
  lua_setfield(L, -3, "tied");
  lua_pop(L, 1);
}

/* Pushes the whole result of ob.tune. */
static void push_result(lua_State *L, tune_box *b) {
  odb_tune_stats s;
  long n = odb_tuner_nevals(b->tuner);
  odb_tuner_stats(b->tuner, &s);
  lua_createtable(L, 0, 12);
  lua_pushliteral(L, "tune");
  lua_setfield(L, -2, "kind");
  lua_pushstring(L, b->label);
  lua_setfield(L, -2, "label");
  lua_pushstring(L, b->strategy);
  lua_setfield(L, -2, "strategy");
  push_best(L, b);
  lua_createtable(L, (int)n, 0);
  for (long i = 0; i < n; ++i) {
    push_eval(L, b, odb_tuner_eval_at(b->tuner, i));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "evaluations");
  push_stats(L, &s);
  lua_setfield(L, -2, "stats");
  if (b->ts) {
    set_num(L, "h", odb_tune_solver_h(b->ts));
    set_int(L, "steps", odb_tune_solver_steps(b->ts));
  }
  if (b->db) {
    lua_pushstring(L, odb_tunedb_path(b->db));
    lua_setfield(L, -2, "cache");
  }
}

/* }====== */

/*
** Closes the tuning database as soon as the run is over, so that its file
** is complete and unlocked when ob.tune returns or raises (the box itself
** is freed only when the collector gets to it). The tuner is not used
** after this.
*/
static void close_cache(tune_box *b) {
  odb_tunedb_close(b->db);
  b->db = NULL;
}

/* Raises the failure of the tuner (bare "interrupted" for a stop). */
static int raise_tune_error(lua_State *L, tune_box *b, odb_status st) {
  close_cache(b);
  if (st == ODB_INTERRUPTED || b->interrupted ||
      odb_ctx_stop_requested(b->S->ctx)) {
    lua_pushliteral(L, "interrupted");
    return lua_error(L);
  }
  return luaL_error(L, "tune: %s", odb_last_error());
}

/* Raises the failure to make the tuner as a bad argument. */
static void creation_error(lua_State *L, tune_box *b, odb_status st) {
  if (b->interrupted || odb_ctx_stop_requested(b->S->ctx))
    raise_tune_error(L, b, ODB_INTERRUPTED);
  if (st == ODB_ERR_IO) field_fail(L, "cache");
  if (strncmp(odb_last_error(), "objective '", 11) == 0)
    field_fail(L, "objective");
  if (strncmp(odb_last_error(), "where:", 6) == 0)
    luaL_error(L, "%s", odb_last_error());
  if (b->where_ref != LUA_NOREF && strstr(odb_last_error(), "no valid"))
    field_fail(L, "where");
  field_fail(L, "space");
}

/* Creates the tuner; errors in the space or the options are bad arguments. */
static void create_tuner(lua_State *L, tune_box *b, odb_tune_opts *o) {
  const odb_tune_target *tg = b->ts ? odb_tune_solver_target(b->ts)
                                    : &b->ftarget;
  odb_status st = odb_tuner_create(b->S->ctx, tg, o, &b->tuner);
  if (st != ODB_OK) creation_error(L, b, st);
}

/* Strategy online: makes the tuner and runs the tuning phase to t1. */
static odb_status run_online(lua_State *L, tune_box *b, odb_online_opts *oo,
                             double t1) {
  odb_status st;
  oo->db = b->db;
  st = odb_online_create(b->solver, b->space, oo, &b->online);
  if (st != ODB_OK) creation_error(L, b, st);
  b->tuner = odb_online_tuner(b->online);
  return odb_online_tune(b->online, t1);
}

/*
** ob.tune{target =, space =, where =, strategy =, budget =, verify =,
** cache =, steps =, h =, seed =, measure =, label =}: see README.
*/
int odbL_tune(lua_State *L) {
  odbL_state *S;
  odb_tune_opts o;
  odb_online_opts oo;
  double t1 = 0;
  tune_box *b;
  long long seed;
  int verify, sidx;
  odb_status st;
  odbL_check_not_in_callback(L, "ob.tune");
  if (tune_target_cb)
    luaL_error(L, "ob.tune cannot be called from inside %s: the tuning run "
               "is in the middle of the call that runs it (tune before the "
               "call or after it)", tune_target_cb);
  S = odbL_state_get(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  odbL_check_keys(L, 1, tune_keys);
  b = new_box(L, S);                                          /* 2 */
  memset(&o, 0, sizeof o);
  read_target(L, b);
  if (lua_getfield(L, 1, "space") != LUA_TTABLE)              /* 3 */
    odbL_field_error(L, 1, "space", "table", -1);
  sidx = lua_gettop(L);
  snprintf(b->label, sizeof b->label, "%s", odbL_opt_string(L, 1, "label",
           b->solver ? b->solver->problem->label : "function"));
  read_space(L, b, sidx);
  if (lua_getfield(L, 1, "where") == LUA_TFUNCTION) {
    b->where_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    odb_space_add_constraint(b->space, where_pred, b, NULL, "where");
  } else if (!lua_isnil(L, -1)) {
    odbL_field_error(L, 1, "where", "function", -1);
  } else {
    lua_pop(L, 1);
  }
  read_strategy(L, b, &o);
  read_budget(L, &o.budget);
  read_measure(L, &o.measure);
  if (odbL_opt_integer(L, 1, "seed", &seed)) {
    o.has_seed = 1;
    o.seed = (uint64_t)seed;
  }
  {
    const char *obj = odbL_opt_string(L, 1, "objective", "time");
    if (odb_tune_objective_parse(obj, &o.objective) != ODB_OK)
      return luaL_argerror(L, 1, lua_pushfstring(L, "field 'objective': "
                           "'%s' is not allowed (time, energy, edp)", obj));
    if (b->is_online && o.objective != ODB_TUNE_TIME)
      return luaL_argerror(L, 1, lua_pushfstring(L, "field 'objective': "
                           "'%s' is for the offline strategies (online "
                           "tuning times steps inside the run)", obj));
  }
  verify = read_verify(L, b);
  o.verify = verify ? 0 : -1;
  b->verify_off = !verify;
  if (b->is_online) {
    read_online(L, b, &o, &oo, &t1);
  } else {
    refuse_online_keys(L);
    if (b->solver) make_solver_target(L, b, verify);
    else make_function_target(L, b);
  }
  read_cache(L, b);
  o.db = b->db;
  o.on_eval = on_eval;
  o.on_eval_ud = b;
  o.label = b->label;
  if (b->is_online) {
    st = run_online(L, b, &oo, t1);
  } else {
    create_tuner(L, b, &o);
    st = odb_tuner_run(b->tuner);
  }
  if (b->row_st != ODB_OK) odbL_check_record(L, b->row_st);
  if (st != ODB_OK) return raise_tune_error(L, b, st);
  push_result(L, b);
  if (b->is_online) {
    push_online(L, b);
    lua_setfield(L, -2, "online");
    if (b->row_st != ODB_OK) odbL_check_record(L, b->row_st);
  }
  close_cache(b);
  return 1;
}
