/* odb_lua_barrier.c - ob.gpu_barrier{...}: the multi-block barrier
   microbenchmark of Korch and Werner (§4.3, Figure 6), through the
   "cuda" table of odb_barrier_impl.h (gpu/ode/odb_gpu_barrier.c in
   builds with CUDA). */
#include <string.h>

#include "odb_lua.h"
#include "odb_barrier_impl.h"

static const char *const barrier_keys[] = {
  "kind", "wg_per_barrier", "concurrent", "threads", "iters", "reps",
  "watchdog", NULL
};

/* An integer field of the options in [lo, hi] with a default. */
static int int_field(lua_State *L, const char *k, int def, int lo, int hi) {
  return (int)odbL_opt_int_range(L, 1, 1, k, k, lo, hi, def);
}

/*
** ob.gpu_barrier{kind="A"|"B"|"C", wg_per_barrier=, concurrent=1,
** threads=256, iters=1000, reps=5, watchdog=2} -> {seconds=,
** per_second=, us_per_barrier=, blocks_per_sm=}: iters barriers of
** wg_per_barrier blocks, concurrent of them at once. Errors (no GPU, a
** grid that cannot be co-resident) are raised.
*/
int odbL_gpu_barrier(lua_State *L) {
  const char *kind;
  const odb_barrier_ops *ops;
  odb_barrier_figures r;
  double wd = 2.0;
  int m, n, th, it, reps;
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, barrier_keys);
  kind = odbL_opt_string(L, 1, "kind", "A");
  if (strlen(kind) != 1 || (kind[0] != 'A' && kind[0] != 'B' &&
                            kind[0] != 'C'))
    return luaL_error(L, "bad argument #1 to 'gpu_barrier' (field 'kind': "
                      "must be \"A\", \"B\" or \"C\", got \"%s\")", kind);
  m = int_field(L, "wg_per_barrier", 2, 1, 1 << 20);
  n = int_field(L, "concurrent", 1, 1, 1 << 20);
  th = int_field(L, "threads", 256, 32, 1024);
  it = int_field(L, "iters", 1000, 1, 1 << 30);
  reps = int_field(L, "reps", 5, 1, 64);
  if (odbL_opt_number(L, 1, "watchdog", &wd) && !(wd > 0))
    return luaL_error(L, "bad argument #1 to 'gpu_barrier' (field "
                      "'watchdog': must be positive seconds)");
  if (odb_barrier_impl_find("cuda", &ops) != ODB_OK ||
      ops->bench(kind[0], m, n, th, it, reps, wd, &r) != ODB_OK)
    return luaL_error(L, "gpu_barrier: %s", odb_last_error());
  lua_createtable(L, 0, 4);
  lua_pushnumber(L, r.seconds);
  lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, r.per_second);
  lua_setfield(L, -2, "per_second");
  lua_pushnumber(L, r.us_per_barrier);
  lua_setfield(L, -2, "us_per_barrier");
  lua_pushinteger(L, r.blocks_per_sm);
  lua_setfield(L, -2, "blocks_per_sm");
  return 1;
}
