/* odb_lua_kernel.c - ob.kernel(name, shape): a dense kernel tuned per
   shape (the tall & skinny products of odb_tsm.h). */
#include "odb_lua.h"

#include <stdio.h>
#include <string.h>

#include "odb_tsm.h"

#define ODBL_KERNEL "odebench.Kernel"

/* One product of a shape: the tuned GPU kernel (plan) or the CPU version
   (host); exactly one is set while open. */
typedef struct odbL_tsmk {
  odb_tsm_plan *plan;     /* backend "cuda" */
  odb_tsm_host *host;     /* backend "cpu" */
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, K;
} odbL_tsmk;

/* Raises the recorded message when st is a failure. */
static void raise_on(lua_State *L, odb_status st) {
  if (st != ODB_OK) luaL_error(L, "%s", odb_last_error());
}

/* The open kernel at idx; raises when closed. */
static odbL_tsmk *kernel_check(lua_State *L, int idx) {
  odbL_tsmk *k = luaL_checkudata(L, idx, ODBL_KERNEL);
  if (!k->plan && !k->host) luaL_argerror(L, idx, "the kernel is closed");
  return k;
}

/* The optional repetition count at idx (default 9). */
static int opt_reps(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return 9;
  return (int)odbL_check_int_range(L, idx, "reps", 1, 1000);
}

/* Pushes seconds and GFLOP/s of a timed run. */
static int push_timing(lua_State *L, const odbL_tsmk *k, double sec) {
  lua_pushnumber(L, sec);
  lua_pushnumber(L, odb_tsm_flops(k->t, k->M, k->N, k->K) / sec * 1e-9);
  return 2;
}

/* k:time([reps]) -> median seconds, GFLOP/s of the kernel. */
static int kernel_time(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  int reps = opt_reps(L, 2);
  double sec = 0;
  raise_on(L, k->plan ? odb_tsm_plan_time(k->plan, reps, &sec)
                      : odb_tsm_host_time(k->host, reps, &sec));
  return push_timing(L, k, sec);
}

/* k:cublas([reps]) -> median seconds, GFLOP/s of cuBLAS on the same data. */
static int kernel_cublas(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  int reps = opt_reps(L, 2);
  double sec = 0;
  if (!k->plan)
    return luaL_error(L, "k:cublas: this kernel runs on the CPU (backend "
                      "'cpu'); k:compare times it against the plain loop");
  raise_on(L, odb_tsm_plan_cublas_time(k->plan, reps, &sec));
  return push_timing(L, k, sec);
}

/* k:compare([reps]) -> seconds, GFLOP/s of the kernel, then of its peer
   (cuBLAS on the GPU, the plain loop on the CPU), from reps rounds that
   run both in turn (same clocks for both), then {q1, median, q3} of the
   rounds' speed-ups over the peer. */
static int kernel_compare(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  int reps = opt_reps(L, 2);
  double mine = 0, peer = 0, q[3];
  raise_on(L, k->plan ? odb_tsm_plan_compare(k->plan, reps, &mine, &peer, q)
                      : odb_tsm_host_compare(k->host, reps, &mine, &peer, q));
  push_timing(L, k, mine);
  push_timing(L, k, peer);
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; ++i) {
    lua_pushnumber(L, q[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 5;
}

/* k:check() -> relative Frobenius difference from the CPU reference (and,
   on the GPU, from cuBLAS; on the CPU, of the plain loop too). */
static int kernel_checkm(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  double err = 0;
  raise_on(L, k->plan ? odb_tsm_plan_check(k->plan, &err)
                      : odb_tsm_host_check(k->host, &err));
  lua_pushnumber(L, err);
  return 1;
}

/* Sets t[key] = v for the table on top. */
static void set_int(lua_State *L, const char *key, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}

/* k:info() -> {name, dtype, M, N, K, backend, peer, config, regs, raced,
   race_changed, evals, cached, threads, flops, bytes}. */
static int kernel_info(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  long evals = 0, cached = 0;
  char cfg[32];
  lua_createtable(L, 0, 16);
  lua_pushstring(L, odb_tsm_op_name(k->op));
  lua_setfield(L, -2, "name");
  lua_pushstring(L, odb_tsm_dtype_name(k->t));
  lua_setfield(L, -2, "dtype");
  set_int(L, "M", k->M);
  set_int(L, "N", k->N);
  set_int(L, "K", k->K);
  lua_pushstring(L, k->plan ? "cuda" : "cpu");
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, k->plan ? "cuBLAS" : "plain loop");
  lua_setfield(L, -2, "peer");
  if (k->plan) {
    odb_tsm_plan_search(k->plan, &evals, &cached);
    lua_pushstring(L, odb_tsm_plan_config(k->plan));
    lua_setfield(L, -2, "config");
    set_int(L, "regs", odb_tsm_plan_regs(k->plan));
    {
      int changed = 0;
      set_int(L, "raced", odb_tsm_plan_raced(k->plan, &changed));
      lua_pushboolean(L, changed);
      lua_setfield(L, -2, "race_changed");
    }
  } else {
    int th = odb_tsm_host_threads(k->host);
    snprintf(cfg, sizeof cfg, "threads=%d", th);
    lua_pushstring(L, cfg);
    lua_setfield(L, -2, "config");
    set_int(L, "threads", th);
  }
  set_int(L, "evals", evals);
  set_int(L, "cached", cached);
  lua_pushnumber(L, odb_tsm_flops(k->t, k->M, k->N, k->K));
  lua_setfield(L, -2, "flops");
  lua_pushnumber(L, odb_tsm_bytes(k->t, k->M, k->N, k->K));
  lua_setfield(L, -2, "bytes");
  return 1;
}

/* k:close(), __gc and __close: frees the matrices. */
static int kernel_close(lua_State *L) {
  odbL_tsmk *k = luaL_checkudata(L, 1, ODBL_KERNEL);
  odb_tsm_plan_destroy(k->plan);
  odb_tsm_host_destroy(k->host);
  k->plan = NULL;
  k->host = NULL;
  return 0;
}

/* Creates the metatable once. */
static void kernel_meta(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"time", kernel_time}, {"cublas", kernel_cublas},
    {"compare", kernel_compare},
    {"check", kernel_checkm}, {"info", kernel_info},
    {"close", kernel_close}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, ODBL_KERNEL)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, kernel_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, kernel_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}

/* Whether the option table (argument 2) has field k. */
static int has_int(lua_State *L, const char *k) {
  int have = lua_getfield(L, 2, k) != LUA_TNIL;
  lua_pop(L, 1);
  return have;
}

/* backend = "auto" | "cuda" | "cpu": 1 for cuda (auto: when present). */
static int read_backend(lua_State *L, odb_ctx *ctx) {
  const char *b = odbL_opt_string(L, 2, "backend", "auto");
  int have = odb_ctx_backend(ctx, "cuda") != NULL;
  if (strcmp(b, "cpu") == 0) return 0;
  if (strcmp(b, "auto") == 0) return have;
  if (strcmp(b, "cuda") == 0) {
    if (!have)
      luaL_error(L, "ob.kernel: backend 'cuda': no cuda backend in this run "
                 "(backend 'auto' or 'cpu' runs the CPU version)");
    return 1;
  }
  return luaL_error(L, "ob.kernel: backend '%s' (expected auto, cuda or "
                    "cpu)", b);
}

/*
** ob.kernel(name, {M=, N=, K=, dtype="d"|"z", backend="auto"|"cuda"|"cpu",
** space="quick"|"full", threads=}): name is "tsmttsm" (C = A^T B) or
** "tsmm" (B = A C). On the GPU it tunes on first use (the tuning database
** keeps the result, so later runs start at once); on the CPU it runs the
** threaded CPU version (threads: 0, the default, one per core).
*/
int odbL_kernel(lua_State *L) {
  static const char *const keys[] = { "M", "N", "K", "dtype", "space",
                                      "backend", "threads", NULL };
  odbL_state *S = odbL_state_get(L);
  const char *name = luaL_checkstring(L, 1);
  long M, N, K, threads;
  size_t na, nx, nout;
  const char *dt, *space;
  odb_tsm_plan_opts o;
  odbL_tsmk *k;
  odb_tsm_op op;
  odb_tsm_dtype t;
  int cuda;
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  if (!has_int(L, "M") || !has_int(L, "N") || !has_int(L, "K"))
    return luaL_error(L, "ob.kernel: M, N and K are required");
  /* K any positive count: whether its matrices fit is odb_tsm_sizes's
     to say (with the bytes they would need) */
  M = (long)odbL_opt_int_range(L, 2, 2, "M", "M", 1, ODB_TSM_MAX_WIDTH, 1);
  N = (long)odbL_opt_int_range(L, 2, 2, "N", "N", 1, ODB_TSM_MAX_WIDTH, 1);
  K = (long)odbL_opt_int_range(L, 2, 2, "K", "K", 1, LUA_MAXINTEGER, 1);
  dt = odbL_opt_string(L, 2, "dtype", "d");
  space = odbL_opt_string(L, 2, "space", "quick");
  if (strcmp(space, "quick") != 0 && strcmp(space, "full") != 0)
    return luaL_error(L, "ob.kernel: space '%s' (expected quick or full)",
                      space);
  raise_on(L, odb_tsm_op_parse(name, &op));
  raise_on(L, odb_tsm_dtype_parse(dt, &t));
  raise_on(L, odb_tsm_check_shape(M, N, K, 1));
  if (odb_tsm_sizes(op, t, M, N, K, &na, &nx, &nout) != ODB_OK)
    return luaL_error(L, "ob.kernel: %s", odb_last_error());
  cuda = read_backend(L, S->ctx);
  if (has_int(L, "threads") && cuda)
    return luaL_error(L, "ob.kernel: threads is an option of the CPU "
                      "version (backend 'cpu')");
  threads = (long)odbL_opt_int_range(L, 2, 2, "threads", "threads", 0, 256,
                                     0);   /* 0: one per core */
  memset(&o, 0, sizeof o);
  o.full = strcmp(space, "full") == 0;
  kernel_meta(L);
  /* A, B and C (K x M, K x N, M x N entries; tsmm: A, C and B), and on
     the GPU their host copies */
  odbL_gc_external(L, (cuda ? 2.0 : 1.0) * 8.0 * (double)(na + nx + nout));
  k = lua_newuserdatauv(L, sizeof *k, 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, ODBL_KERNEL);
  k->op = op;
  k->t = t;
  k->M = M;
  k->N = N;
  k->K = K;
  if (cuda)
    raise_on(L, odb_tsm_plan_create(S->ctx, op, t, M, N, K, &o, &k->plan));
  else
    raise_on(L, odb_tsm_host_create(op, t, M, N, K, (int)threads,
                                    S->ctx->seed, &k->host));
  return 1;
}
