/* odb_lua_dist.c - ob.allreduce, ob.bcast and ob.barrier: the collectives
   a scenario needs when `mpirun -n R odebench scenario.lua` runs it on R
   ranks (docs/mpi.md). Each goes through dist/rt/odb_dist.h, so each
   waits at most ODEBENCH_MPI_TIMEOUT seconds and then raises an error
   naming the call; with one rank (no mpirun) each returns its own
   argument. Every rank must make the same calls in the same order with
   the same shapes (as in MPI); a count that differs between ranks is
   caught by the reduction of the count itself, not by MPI. And
   ob.gpu_halo_path, how the GPU ranks' halos travel. */
#include <string.h>

#include "lauxlib.h"
#include "odb_dist.h"
#include "odb_lua.h"
#include "odb_lua_dist.h"
#include "odb_config.h"
#if defined(ODB_HAVE_MPI) && ODB_HAVE_CUDA
#include "odb_dist_ode.h"
#endif

#define ALLREDUCE_MAX 1000000     /* values of one ob.allreduce */

/* Raises the recorded failure of a collective. */
static int dist_error(lua_State *L) {
  return luaL_error(L, "%s", odb_last_error());
}

/*
** ob.allreduce(x [, op]) -> the same shape as x reduced over the ranks:
** x a number or a list of numbers, op "sum" (default), "max" or "min".
** Integers stay integers only in the sense of Lua's number: the
** reduction is over doubles (exact for integers up to 2^53).
*/
int odbL_allreduce(lua_State *L) {
  static const char *const ops[] = { "sum", "max", "min", NULL };
  int op, scalar, i;
  lua_Integer n;
  double *v, cnt[2];
  odb_status st;
  odbL_check_not_in_callback(L, "ob.allreduce");
  op = luaL_checkoption(L, 2, "sum", ops);
  scalar = lua_type(L, 1) == LUA_TNUMBER;
  if (scalar) {
    n = 1;
  } else {
    luaL_argexpected(L, lua_type(L, 1) == LUA_TTABLE, 1,
                     "number or list of numbers");
    n = (lua_Integer)lua_rawlen(L, 1);
    if (n > ALLREDUCE_MAX)
      return luaL_argerror(L, 1, lua_pushfstring(L, "at most %d values, got %I",
                           ALLREDUCE_MAX, n));
  }
  v = lua_newuserdatauv(L, sizeof *v * (size_t)(n > 0 ? n : 1), 0);
  if (scalar) {
    v[0] = lua_tonumber(L, 1);
  } else {
    for (i = 0; i < n; i++) {
      int isnum;
      lua_rawgeti(L, 1, i + 1);
      v[i] = lua_tonumberx(L, -1, &isnum);
      if (!isnum || lua_type(L, -1) != LUA_TNUMBER)
        return luaL_argerror(L, 1, lua_pushfstring(L, "item %d is a %s, "
                             "expected a number", i + 1, luaL_typename(L, -1)));
      lua_pop(L, 1);
    }
  }
  /* The same count on every rank: its max and min must agree. */
  cnt[0] = (double)n;
  cnt[1] = -(double)n;
  if (odb_dist_allreduce_max(cnt, 2, "MPI_Allreduce (ob.allreduce)") !=
      ODB_OK)
    return dist_error(L);
  if (cnt[0] != -cnt[1])
    return luaL_error(L, "ob.allreduce: ranks give different counts (%d to %d "
                      "values; rank %d gives %d)", (int)-cnt[1], (int)cnt[0],
                      odb_dist_rank(), (int)n);
  if (op == 2)
    for (i = 0; i < n; i++) v[i] = -v[i];
  st = op == 0 ? odb_dist_allreduce_sum(v, (int)n, "MPI_Allreduce (ob.allreduce)")
               : odb_dist_allreduce_max(v, (int)n, "MPI_Allreduce (ob.allreduce)");
  if (st != ODB_OK) return dist_error(L);
  if (op == 2)
    for (i = 0; i < n; i++) v[i] = -v[i];
  if (scalar) {
    lua_pushnumber(L, v[0]);
    return 1;
  }
  lua_createtable(L, (int)n, 0);
  for (i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* What ob.bcast sends first: the kind of value and the bytes after it. */
enum { BC_NIL, BC_FALSE, BC_TRUE, BC_INT, BC_FLOAT, BC_STRING };
typedef struct bc_head { long long kind, len; } bc_head;

/*
** ob.bcast(value [, root]) -> root's value on every rank: nil, a boolean,
** a number (integer or float kept) or a string; root defaults to 0. Other
** ranks' value is ignored (any of those kinds).
*/
int odbL_bcast(lua_State *L) {
  int root, me = odb_dist_rank();
  bc_head h = { BC_NIL, 0 };
  union { lua_Integer i; lua_Number f; } num;
  const char *s = NULL;
  size_t len = 0;
  char *buf;
  odbL_check_not_in_callback(L, "ob.bcast");
  root = lua_isnoneornil(L, 2) ? 0 :
         (int)odbL_check_int_range(L, 2, "root", 0, odb_dist_size() - 1);
  switch (lua_type(L, 1)) {
  case LUA_TNONE: case LUA_TNIL: break;
  case LUA_TBOOLEAN: h.kind = lua_toboolean(L, 1) ? BC_TRUE : BC_FALSE; break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, 1)) { h.kind = BC_INT; num.i = lua_tointeger(L, 1); }
    else { h.kind = BC_FLOAT; num.f = lua_tonumber(L, 1); }
    h.len = sizeof num;
    break;
  case LUA_TSTRING:
    s = lua_tolstring(L, 1, &len);
    h.kind = BC_STRING;
    h.len = (long long)len;
    break;
  default:
    return luaL_typeerror(L, 1, "nil, boolean, number or string");
  }
  if (odb_dist_bcast(&h, sizeof h, root, "MPI_Bcast (ob.bcast)") != ODB_OK)
    return dist_error(L);
  if (h.kind == BC_INT || h.kind == BC_FLOAT) {
    if (odb_dist_bcast(&num, sizeof num, root, "MPI_Bcast (ob.bcast)") != ODB_OK)
      return dist_error(L);
    if (h.kind == BC_INT) lua_pushinteger(L, num.i);
    else lua_pushnumber(L, num.f);
    return 1;
  }
  if (h.kind == BC_STRING) {
    buf = lua_newuserdatauv(L, (size_t)h.len + 1, 0);
    if (me == root && h.len > 0) memcpy(buf, s, (size_t)h.len);
    if (odb_dist_bcast(buf, (size_t)h.len, root, "MPI_Bcast (ob.bcast)") !=
        ODB_OK)
      return dist_error(L);
    lua_pushlstring(L, buf, (size_t)h.len);
    return 1;
  }
  if (h.kind == BC_NIL) lua_pushnil(L);
  else lua_pushboolean(L, h.kind == BC_TRUE);
  return 1;
}

/* ob.barrier(): returns when every rank has called it. */
int odbL_barrier(lua_State *L) {
  odbL_check_not_in_callback(L, "ob.barrier");
  if (odb_dist_barrier("MPI_Barrier (ob.barrier)") != ODB_OK)
    return dist_error(L);
  return 0;
}

/*
** ob.gpu_halo_path() -> how the GPU ranks' halos travelled in the last
** mpi_gpu_stream2d solver made on this rank (dist/ode/dist_gpu.c): "CUDA-
** aware MPI (device buffers)", "host buffers (...)" or "none (one rank)";
** nil before any, or in a build without MPI and CUDA.
*/
int odbL_gpu_halo_path(lua_State *L) {
#if defined(ODB_HAVE_MPI) && ODB_HAVE_CUDA
  const char *p = odb_dist_gpu_halo_path();
  if (p && *p) {
    lua_pushstring(L, p);
    return 1;
  }
#endif
  lua_pushnil(L);
  return 1;
}
