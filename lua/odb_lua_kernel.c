/* odb_lua_kernel.c - ob.kernel(name, shape): a dense kernel tuned per
   shape (the tall & skinny products of odb_tsm.h). */
#include "odb_lua.h"

#include <string.h>

#include "odb_tsm.h"

#define ODBL_KERNEL "odebench.Kernel"

typedef struct odbL_tsmk {
  odb_tsm_plan *plan;     /* NULL once closed */
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
  if (!k->plan) luaL_argerror(L, idx, "the kernel is closed");
  return k;
}

/* Pushes seconds and GFLOP/s of a timed run. */
static int push_timing(lua_State *L, const odbL_tsmk *k, double sec) {
  lua_pushnumber(L, sec);
  lua_pushnumber(L, odb_tsm_flops(k->t, k->M, k->N, k->K) / sec * 1e-9);
  return 2;
}

/* k:time([reps]) -> median seconds, GFLOP/s of the tuned kernel. */
static int kernel_time(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  double sec = 0;
  raise_on(L, odb_tsm_plan_time(k->plan,
                                         (int)luaL_optinteger(L, 2, 9),
                                         &sec));
  return push_timing(L, k, sec);
}

/* k:cublas([reps]) -> median seconds, GFLOP/s of cuBLAS on the same data. */
static int kernel_cublas(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  double sec = 0;
  raise_on(L, odb_tsm_plan_cublas_time(
                           k->plan, (int)luaL_optinteger(L, 2, 9), &sec));
  return push_timing(L, k, sec);
}

/* k:compare([reps]) -> seconds, GFLOP/s of the tuned kernel, then of
   cuBLAS, from reps rounds that run both in turn (same clocks for both),
   then {q1, median, q3} of the rounds' speed-ups over cuBLAS. */
static int kernel_compare(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  double mine = 0, blas = 0, q[3];
  raise_on(L, odb_tsm_plan_compare(k->plan, (int)luaL_optinteger(L, 2, 9),
                                   &mine, &blas, q));
  push_timing(L, k, mine);
  push_timing(L, k, blas);
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; ++i) {
    lua_pushnumber(L, q[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 5;
}

/* k:check() -> relative Frobenius difference to cuBLAS. */
static int kernel_checkm(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  double err = 0;
  raise_on(L, odb_tsm_plan_check(k->plan, &err));
  lua_pushnumber(L, err);
  return 1;
}

/* k:info() -> {config, regs, evals, cached, flops, bytes, M, N, K, ...}. */
static int kernel_info(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  long evals, cached;
  odb_tsm_plan_search(k->plan, &evals, &cached);
  lua_createtable(L, 0, 10);
  lua_pushstring(L, odb_tsm_op_name(k->op));
  lua_setfield(L, -2, "name");
  lua_pushstring(L, odb_tsm_dtype_name(k->t));
  lua_setfield(L, -2, "dtype");
  lua_pushinteger(L, k->M);
  lua_setfield(L, -2, "M");
  lua_pushinteger(L, k->N);
  lua_setfield(L, -2, "N");
  lua_pushinteger(L, k->K);
  lua_setfield(L, -2, "K");
  lua_pushstring(L, odb_tsm_plan_config(k->plan));
  lua_setfield(L, -2, "config");
  lua_pushinteger(L, odb_tsm_plan_regs(k->plan));
  lua_setfield(L, -2, "regs");
  lua_pushinteger(L, evals);
  lua_setfield(L, -2, "evals");
  lua_pushinteger(L, cached);
  lua_setfield(L, -2, "cached");
  lua_pushnumber(L, odb_tsm_flops(k->t, k->M, k->N, k->K));
  lua_setfield(L, -2, "flops");
  lua_pushnumber(L, odb_tsm_bytes(k->t, k->M, k->N, k->K));
  lua_setfield(L, -2, "bytes");
  return 1;
}

/* k:close(), __gc and __close: frees the device matrices. */
static int kernel_close(lua_State *L) {
  odbL_tsmk *k = luaL_checkudata(L, 1, ODBL_KERNEL);
  odb_tsm_plan_destroy(k->plan);
  k->plan = NULL;
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

/*
** ob.kernel(name, {M=, N=, K=, dtype="d"|"z", space="quick"|"full"}):
** name is "tsmttsm" (C = A^T B) or "tsmm" (B = A C). Tunes on first use
** (the tuning database keeps the result, so later runs start at once).
*/
int odbL_kernel(lua_State *L) {
  static const char *const keys[] = { "M", "N", "K", "dtype", "space",
                                      NULL };
  odbL_state *S = odbL_state_get(L);
  const char *name = luaL_checkstring(L, 1);
  long long M = 0, N = 0, K = 0;
  const char *dt, *space;
  odb_tsm_plan_opts o;
  odbL_tsmk *k;
  odb_tsm_op op;
  odb_tsm_dtype t;
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  if (!odbL_opt_integer(L, 2, "M", &M) || !odbL_opt_integer(L, 2, "N", &N)
      || !odbL_opt_integer(L, 2, "K", &K))
    return luaL_error(L, "ob.kernel: M, N and K are required");
  dt = odbL_opt_string(L, 2, "dtype", "d");
  space = odbL_opt_string(L, 2, "space", "quick");
  if (strcmp(space, "quick") != 0 && strcmp(space, "full") != 0)
    return luaL_error(L, "ob.kernel: space '%s' (expected quick or full)",
                      space);
  raise_on(L, odb_tsm_op_parse(name, &op));
  raise_on(L, odb_tsm_dtype_parse(dt, &t));
  raise_on(L, odb_tsm_check_shape((long)M, (long)N, (long)K, 1));
  memset(&o, 0, sizeof o);
  o.full = strcmp(space, "full") == 0;
  kernel_meta(L);
  /* A, B and C (K x M, K x N, M x N entries; tsmm: A, C and B), device
     and host copies */
  odbL_gc_external(L, 2.0 * (t == ODB_TSM_Z ? 16.0 : 8.0) *
                      ((double)K * (double)(M + N) + (double)M * (double)N));
  k = lua_newuserdatauv(L, sizeof *k, 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, ODBL_KERNEL);
  k->op = op;
  k->t = t;
  k->M = (long)M;
  k->N = (long)N;
  k->K = (long)K;
  raise_on(L, odb_tsm_plan_create(S->ctx, op, t, (long)M, (long)N,
                                           (long)K, &o, &k->plan));
  return 1;
}
