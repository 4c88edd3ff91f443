/* odb_lua_module.c - luaopen_odebench: the functions of the odebench table. */
#include "odb_lua.h"
#include "odb_kernels.h"
#include "odb_dist.h"
#include "odb_lua_dist.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* {====== ob.param */

/* The --set entry for name, or NULL. */
static odbL_set *find_set(odbL_state *S, const char *name) {
  for (int i = 0; i < S->nsets; ++i)
    if (strcmp(S->sets[i].key, name) == 0) return &S->sets[i];
  return NULL;
}

/*
** A --set value written as a product of powers of plain numbers, such as
** 2^18, 16*2^20 or 3*1e6 (what a scenario's header or a shell user writes
** for a size): '^' binds tighter than '*' and is right-associative; no
** spaces, signs only as strtod takes them. 1 with *out set, 0 otherwise.
*/
static int eval_product(const char *s, double *out) {
  double prod = 1;
  if (!strpbrk(s, "^*")) return 0;
  for (;;) {
    double stack[16], x;
    int n = 0;
    char *end;
    for (;;) {                      /* number ('^' number)* */
      x = strtod(s, &end);
      if (end == s || n == 16 || isspace((unsigned char)*s)) return 0;
      stack[n++] = x;
      s = end;
      if (*s != '^') break;
      ++s;
    }
    x = stack[--n];
    while (n > 0) x = pow(stack[--n], x);
    prod *= x;
    if (*s == '\0') break;
    if (*s != '*') return 0;
    ++s;
  }
  if (!isfinite(prod)) return 0;
  *out = prod;
  return 1;
}

/* Pushes the number that the text v stands for (a numeral as Lua reads it,
   or eval_product's form); 0 with nothing pushed when it is neither. */
static int push_number_text(lua_State *L, const char *v) {
  double x;
  if (*v != '\0' && lua_stringtonumber(L, v) != 0) return 1;
  if (!eval_product(v, &x)) return 0;
  lua_pushnumber(L, x);
  return 1;
}

/*
** Pushes the text of a --set value converted to the type of the default at
** index 2; raises an argument error naming the --set item otherwise.
*/
static void push_converted(lua_State *L, odbL_state *S, const odbL_set *set) {
  const char *v = set->value;
  switch (lua_type(L, 2)) {
  case LUA_TNUMBER:
    if (!push_number_text(L, v))
      luaL_argerror(L, 1, lua_pushfstring(L, "%s %s=%s: number expected for "
                    "parameter '%s'", S->set_origin, set->key, v, set->key));
    if (lua_isinteger(L, 2) && !lua_isinteger(L, -1)) {
      /* an integer default takes whole numbers only (1e3 is 1000) */
      lua_Integer i = 0;
      if (!lua_numbertointeger(lua_tonumber(L, -1), &i) ||
          (lua_Number)i != lua_tonumber(L, -1))
        luaL_argerror(L, 1, lua_pushfstring(L, "%s %s=%s: integer expected "
                      "for parameter '%s' (its default, %I, is an integer; a "
                      "scenario that takes fractions writes it as %I.0)",
                      S->set_origin, set->key, v, set->key,
                      lua_tointeger(L, 2), lua_tointeger(L, 2)));
      lua_pop(L, 1);
      lua_pushinteger(L, i);
    } else if (!lua_isinteger(L, 2) && lua_isinteger(L, -1)) {
      lua_Number x = (lua_Number)lua_tointeger(L, -1);
      lua_pop(L, 1);
      lua_pushnumber(L, x);
    }
    break;
  case LUA_TBOOLEAN:
    if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0) lua_pushboolean(L, 1);
    else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
      lua_pushboolean(L, 0);
    else
      luaL_argerror(L, 1, lua_pushfstring(L, "%s %s=%s: boolean expected "
                    "(true, false, 1, 0) for parameter '%s'", S->set_origin,
                    set->key, v, set->key));
    break;
  default:
    lua_pushstring(L, v);
  }
}

/* Records params.<name> = the value at the top of the stack. */
static void record_param(lua_State *L, odbL_state *S, const char *name) {
  char key[160];
  odb_record *c = &S->results.context;
  odb_status st;
  snprintf(key, sizeof key, "params.%s", name);
  if (lua_isinteger(L, -1))
    st = odb_record_set_int(c, key, (long long)lua_tointeger(L, -1));
  else if (lua_type(L, -1) == LUA_TNUMBER)
    st = odb_record_set_num(c, key, (double)lua_tonumber(L, -1));
  else if (lua_type(L, -1) == LUA_TBOOLEAN)
    st = odb_record_set_str(c, key, lua_toboolean(L, -1) ? "true" : "false");
  else
    st = odb_record_set_str(c, key, lua_tostring(L, -1));
  odbL_check_record(L, st);
}

/*
** Appends {name, default, value, description} to the registry's list of
** parameters read (ODBL_PARAMS_KEY) the first time name is read; value is
** at the top of the stack, default at index 2, description at 3 (or nil).
*/
static void note_param(lua_State *L, const char *name) {
  lua_Integer n;
  int list = lua_gettop(L) + 1;
  if (lua_getfield(L, LUA_REGISTRYINDEX, ODBL_PARAMS_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, ODBL_PARAMS_KEY);
  }
  n = luaL_len(L, list);
  for (lua_Integer i = 1; i <= n; ++i) {
    int seen;
    lua_rawgeti(L, list, i);
    lua_getfield(L, -1, "name");
    seen = strcmp(lua_tostring(L, -1), name) == 0;
    lua_pop(L, 2);
    if (seen) {
      lua_pop(L, 1);
      return;
    }
  }
  lua_createtable(L, 0, 4);
  lua_pushstring(L, name);
  lua_setfield(L, -2, "name");
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "default");
  lua_pushvalue(L, list - 1);
  lua_setfield(L, -2, "value");
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, "description");
  lua_rawseti(L, list, n + 1);
  lua_pop(L, 1);
}

/*
** ob.param(name, default [, description]): the --set value (typed like
** default) or default. The description, one line, is what
** `odebench SCENARIO --params` shows beside the name.
*/
static int l_param(lua_State *L) {
  odbL_state *S = odbL_state_get(L);
  const char *name = luaL_checkstring(L, 1);
  int t = lua_type(L, 2);
  odbL_set *set;
  if (t != LUA_TNUMBER && t != LUA_TBOOLEAN && t != LUA_TSTRING)
    return luaL_argerror(L, 2, lua_pushfstring(L, "default value (number, "
                         "boolean or string) expected, got %s",
                         luaL_typename(L, 2)));
  if (!lua_isnoneornil(L, 3) && lua_type(L, 3) != LUA_TSTRING)
    return luaL_argerror(L, 3, lua_pushfstring(L, "description (string) "
                         "expected, got %s", luaL_typename(L, 3)));
  lua_settop(L, 3);
  set = find_set(S, name);
  if (set) {
    set->used = 1;
    push_converted(L, S, set);
  } else {
    lua_pushvalue(L, 2);
  }
  record_param(L, S, name);
  note_param(L, name);
  return 1;
}

/* }====== */

/* {====== reporting */

/* Pushes require("odebench.report").format. */
static void push_report_format(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "odebench.report");
  lua_call(L, 1, 1);
  if (lua_getfield(L, -1, "format") != LUA_TFUNCTION)
    luaL_error(L, "odebench.report has no function 'format'");
  lua_remove(L, -2);
}

/*
** ob.report(r1, r2, ...) prints a table of the given results to stdout, or
** of every result so far when called without arguments. --quiet mutes it.
*/
static int l_report(lua_State *L) {
  odbL_state *S = odbL_state_get(L);
  int n = lua_gettop(L);
  size_t len;
  const char *text;
  for (int i = 1; i <= n; ++i) luaL_checktype(L, i, LUA_TTABLE);
  if (S->quiet) return 0;
  push_report_format(L);
  if (n == 0) {
    lua_getfield(L, LUA_REGISTRYINDEX, ODBL_ROWS_KEY);
  } else {
    lua_createtable(L, n, 0);
    for (int i = 1; i <= n; ++i) {
      lua_pushvalue(L, i);
      lua_rawseti(L, -2, i);
    }
  }
  lua_call(L, 1, 1);
  text = lua_tolstring(L, -1, &len);
  if (text) {
    fwrite(text, 1, len, stdout);
    fflush(stdout);
  }
  return 0;
}

/* ob.metric(name, value [, unit]): an event for the UI and a results row. */
static int l_metric(lua_State *L) {
  odbL_state *S = odbL_state_get(L);
  const char *name = luaL_checkstring(L, 1);
  double value = (double)luaL_checknumber(L, 2);
  const char *unit = luaL_optstring(L, 3, NULL);
  odb_record *row;
  odb_status st = ODB_OK;
  odb_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = ODB_EV_METRIC;
  snprintf(ev.name, sizeof ev.name, "%s", name);
  snprintf(ev.text, sizeof ev.text, "%s", unit ? unit : "");
  ev.value = value;
  odb_ctx_publish(S->ctx, &ev);
  row = odb_results_add_row(&S->results);
  if (!row) st = ODB_FAIL(ODB_ERR_NOMEM, "results row: out of memory");
  if (st == ODB_OK) st = odb_record_set_str(row, "kind", "metric");
  if (st == ODB_OK) st = odb_record_set_str(row, "name", name);
  if (st == ODB_OK) st = odb_record_set_num(row, "value", value);
  if (st == ODB_OK && unit) st = odb_record_set_str(row, "unit", unit);
  odbL_check_record(L, st);
  lua_createtable(L, 0, 4);
  lua_pushliteral(L, "metric");
  lua_setfield(L, -2, "kind");
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "name");
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "value");
  if (unit) {
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "unit");
  }
  lua_getfield(L, LUA_REGISTRYINDEX, ODBL_ROWS_KEY);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
  return 1;
}

/* Seconds on the monotonic clock. */
static double mono_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
** ob.progress(i, n [, label]): i of the n steps of the scenario's sweep are
** done (0 <= i <= n; 0 starts the clock of the estimate). An event for the
** progress bar of plain mode and the dashboard; no results row. Like the
** solver's STEP records at most 20 a second: a report within 50 ms of the
** previous one is dropped unless it starts a sweep (i = 0, another n, i
** going back) or ends it (i = n), so a tight loop cannot flood the ring.
*/
static int l_progress(lua_State *L) {
  odbL_state *S = odbL_state_get(L);
  lua_Integer i = luaL_checkinteger(L, 1), n = luaL_checkinteger(L, 2);
  const char *label = luaL_optstring(L, 3, "");
  double now = mono_seconds();
  odb_event ev;
  if (n < 1)
    return luaL_argerror(L, 2, lua_pushfstring(L, "number of steps >= 1 "
                         "expected, got %I", n));
  if (i < 0 || i > n)
    return luaL_argerror(L, 1, lua_pushfstring(L, "steps done between 0 and "
                         "n = %I expected, got %I", n, i));
  if (i != 0 && i != n && n == S->progress_n && i >= S->progress_i &&
      now - S->progress_wall < 0.05)
    return 0;
  S->progress_i = (long)i;
  S->progress_n = (long)n;
  S->progress_wall = now;
  memset(&ev, 0, sizeof ev);
  ev.kind = ODB_EV_PROGRESS;
  ev.step = (long)i;
  ev.accepted = (long)n;
  snprintf(ev.name, sizeof ev.name, "%s", label);
  odb_ctx_publish(S->ctx, &ev);
  return 0;
}

/* }====== */

/* {====== machine and run */

static int l_list(lua_State *L) {
  odbL_push_list(L, odbL_state_get(L)->ctx);
  return 1;
}

/* Sets t[k] = v for an integer v (t at the top). */
static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

/* Pushes {read_1t = GB/s, ...} of the bandwidth figures. */
static void push_bandwidth(lua_State *L, const odb_bandwidth *bw) {
  lua_createtable(L, 0, 8);
  lua_pushnumber(L, bw->read_1t / 1e9);
  lua_setfield(L, -2, "read_1t");
  lua_pushnumber(L, bw->copy_1t / 1e9);
  lua_setfield(L, -2, "copy_1t");
  lua_pushnumber(L, bw->read_all / 1e9);
  lua_setfield(L, -2, "read_all");
  lua_pushnumber(L, bw->copy_all / 1e9);
  lua_setfield(L, -2, "copy_all");
  set_int(L, "threads_all", bw->threads_all);
  lua_pushnumber(L, bw->flops_1t / 1e9);   /* FP64 multiply-add peak */
  lua_setfield(L, -2, "peak_gflops_1t");
  lua_pushnumber(L, bw->flops_all / 1e9);  /* all cores at once */
  lua_setfield(L, -2, "peak_gflops_all");
  lua_pushstring(L, bw->measured_at);
  lua_setfield(L, -2, "measured_at");
  lua_pushboolean(L, bw->from_cache);
  lua_setfield(L, -2, "from_cache");
}

/*
** Pushes the gpu table of the "cuda" backend, or nil; with bw also its
** read and device-to-device copy bandwidth (read_gbs, copy_gbs: this
** process's figures, odbL_state_gpu_bandwidth) and its FP64 peaks in
** GFLOP/s (fp64_gflops through DFMA, fp64_tensor_gflops through DMMA,
** where the device has it: odb_cuda_fp64_peak, measured once a process)
** with the SM clocks in MHz they ran at (fp64_mhz, fp64_tensor_mhz).
*/
static void push_gpu(lua_State *L, odbL_state *S, int bw) {
  const odb_gpu_bandwidth *g;
  odb_backend *b = odb_ctx_backend(S->ctx, "cuda");
  odb_device_info d;
  memset(&d, 0, sizeof d);
  if (!b || odb_backend_query(b, &d) != ODB_OK) {
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, 0, 7);
  lua_pushstring(L, d.name);
  lua_setfield(L, -2, "name");
  lua_pushfstring(L, "%d.%d", d.cc_major, d.cc_minor);
  lua_setfield(L, -2, "cc");
  set_int(L, "sm_count", d.sm_count);
  set_int(L, "mem_bytes", (lua_Integer)d.mem_bytes);
  set_int(L, "mem_free_bytes", (lua_Integer)d.mem_free_bytes);
  set_int(L, "runtime_version", d.runtime_version);
  set_int(L, "driver_version", d.driver_version);
  if (bw && (g = odbL_state_gpu_bandwidth(S))) {
    lua_pushnumber(L, g->copy / 1e9);
    lua_setfield(L, -2, "copy_gbs");
    lua_pushnumber(L, g->read / 1e9);
    lua_setfield(L, -2, "read_gbs");
  }
  if (bw) {
    odb_fp64_peaks pk;
    if (odb_backend_fp64_peak(b, &pk) == ODB_OK && pk.flops > 0) {
      lua_pushnumber(L, pk.flops / 1e9);
      lua_setfield(L, -2, "fp64_gflops");
      if (pk.mhz > 0) {
        lua_pushnumber(L, pk.mhz);
        lua_setfield(L, -2, "fp64_mhz");
      }
      if (pk.tensor_flops > 0) {
        lua_pushnumber(L, pk.tensor_flops / 1e9);
        lua_setfield(L, -2, "fp64_tensor_gflops");
      }
      if (pk.tensor_flops > 0 && pk.tensor_mhz > 0) {
        lua_pushnumber(L, pk.tensor_mhz);
        lua_setfield(L, -2, "fp64_tensor_mhz");
      }
    }
  }
}

/*
** ob.info([{bandwidth = false | true | "now"}]): CPU, caches, NUMA, GPU and
** bandwidth (which may take a measurement of a few seconds the first time;
** "now" measures again in this run, for floors taken in the same run).
*/
static int l_info(lua_State *L) {
  odbL_state *S;
  const odb_topo *t;
  const odb_bandwidth *bw = NULL;
  int want_bw = 1;
  odbL_check_not_in_callback(L, "ob.info");   /* may measure, threaded */
  S = odbL_state_get(L);
  t = &S->ctx->topo;
  if (lua_type(L, 1) == LUA_TTABLE) {
    static const char *const keys[] = {"bandwidth", NULL};
    odbL_check_keys(L, 1, keys);
    int ty = lua_getfield(L, 1, "bandwidth");
    if (ty == LUA_TSTRING && strcmp(lua_tostring(L, -1), "now") == 0)
      want_bw = ODBL_BW_NOW;
    else if (ty == LUA_TBOOLEAN)
      want_bw = lua_toboolean(L, -1);
    else if (ty != LUA_TNIL)
      luaL_argerror(L, 1, "field 'bandwidth': true, false or \"now\" (measure "
                    "again in this run) expected");
    lua_pop(L, 1);
  }
  if (want_bw) bw = odbL_state_bandwidth(S, want_bw);
  lua_createtable(L, 0, 8);
  set_int(L, "rank", odb_dist_rank());     /* 0 of 1 without mpirun */
  set_int(L, "ranks", odb_dist_size());
  lua_createtable(L, 0, 5);
  lua_pushstring(L, t->cpu_model);
  lua_setfield(L, -2, "model");
  set_int(L, "packages", t->packages);
  set_int(L, "cores", t->cores);
  set_int(L, "pus", t->pus);
  set_int(L, "numa_nodes", t->numa_nodes);
  lua_setfield(L, -2, "cpu");
  lua_createtable(L, t->ncaches, 0);
  for (int i = 0; i < t->ncaches && i < ODB_TOPO_MAX_CACHES; ++i) {
    lua_createtable(L, 0, 5);
    set_int(L, "level", t->caches[i].level);
    set_int(L, "size", (lua_Integer)t->caches[i].size);
    set_int(L, "line", t->caches[i].line);
    set_int(L, "count", t->caches[i].count);
    set_int(L, "sharing", t->caches[i].sharing);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "caches");
  set_int(L, "numa_nodes", t->numa_nodes);
  push_gpu(L, S, want_bw);
  lua_setfield(L, -2, "gpu");
  if (bw) {
    push_bandwidth(L, bw);
    lua_setfield(L, -2, "bandwidth");
  }
  return 1;
}

/* ob.seed(): the seed of the run (--seed or ODEBENCH_SEED, default 42). */
static int l_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)odbL_state_get(L)->ctx->seed);
  return 1;
}

/* ob.random(): uniform in [0, 1) from the context's seeded generator. */
static int l_random(lua_State *L) {
  lua_pushnumber(L, odb_rng_uniform(&odbL_state_get(L)->ctx->rng));
  return 1;
}

/*
** ob.finish(): under plain lua writes results.json/results.csv now and
** returns the output directory; under the host (which writes at the end)
** it only returns the directory.
*/
static int l_finish(lua_State *L) {
  odbL_state *S;
  odbL_check_not_in_callback(L, "ob.finish");   /* results half recorded */
  S = odbL_state_get(L);
  if (!S->hosted) {
    if (odbL_state_write(S) != ODB_OK)
      return luaL_error(L, "cannot write results: %s", odb_last_error());
    if (!S->results_written) odbL_warn_unused_sets(S, stderr, "odebench");
    S->results_written = 1;
  }
  lua_pushstring(L, S->ctx->outdir);
  return 1;
}

/* ob.outdir(): where results go. */
static int l_outdir(lua_State *L) {
  lua_pushstring(L, odbL_state_get(L)->ctx->outdir);
  return 1;
}

/* }====== */

static const luaL_Reg odb_funcs[] = {
  {"param", l_param},
  {"problem", odbL_problem_new},
  {"solver", odbL_solver_new},
  {"vector", odbL_vector_ctor},
  {"reference", odbL_reference},
  {"tune", odbL_tune},
  {"reservoir", odbL_reservoir},
  {"krylov", odbL_krylov},
  {"blocktridiag", odbL_blocktridiag},
  {"batched", odbL_batched},
  {"kernel", odbL_kernel},
  {"gpu_barrier", odbL_gpu_barrier},
  {"report", l_report},
  {"metric", l_metric},
  {"tied", odbL_tied},
  {"progress", l_progress},
  {"plot", odbL_plot},
  {"list", l_list},
  {"info", l_info},
  {"seed", l_seed},
  {"random", l_random},
  {"finish", l_finish},
  {"outdir", l_outdir},
  {"allreduce", odbL_allreduce},
  {"bcast", odbL_bcast},
  {"barrier", odbL_barrier},
  {"gpu_halo_path", odbL_gpu_halo_path},
  {NULL, NULL}
};

/*
** Appends the directories of the pure-Lua helpers (source tree, then the
** install location, both fixed at build time) to package.path, so that
** require "odebench.report" works without LUA_PATH.
*/
static void add_helper_path(lua_State *L) {
#if defined(ODBL_LUA_SRCDIR) && defined(ODBL_LUA_INSTDIR)
  static const char extra[] =
    ODBL_LUA_SRCDIR "/?.lua;" ODBL_LUA_INSTDIR "/?.lua";
  const char *path;
  if (lua_getglobal(L, "package") != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  lua_getfield(L, -1, "path");
  path = lua_tostring(L, -1);
  if (path && !strstr(path, extra)) {
    lua_pushfstring(L, "%s;%s", path, extra);
    lua_setfield(L, -3, "path");
  }
  lua_pop(L, 2);
#else
  (void)L;
#endif
}

/* Creates no run state: that happens on first use (or by the host). */
int luaopen_odebench(lua_State *L) {
  luaL_checkversion(L);
  odbL_vector_register(L);
  odbL_problem_register(L);
  odbL_solver_register(L);
  add_helper_path(L);
  luaL_newlib(L, odb_funcs);
  odbL_gpupower_register(L);
  odbL_files_register(L);
  odbL_checkpoint_register(L);
  lua_pushstring(L, odb_version());
  lua_setfield(L, -2, "_VERSION");
  return 1;
}
