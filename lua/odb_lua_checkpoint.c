/* odb_lua_checkpoint.c - s:checkpoint(file) and ob.solver's restart =
   file: a solver's state and step controller in a file and back
   (core/ode/odb_checkpoint.c has the format). */
#include "odb_lua.h"
#include "odb_checkpoint.h"

#include <string.h>

/*
** s:checkpoint(file): writes the solver's state, time, next step size,
** f(t, y) where it holds it and its running totals to file, whole or not
** at all (a kill during the write leaves the file as it was). Returns
** nothing; raises with the reason (the file name shown escaped).
*/
static int solver_checkpoint(lua_State *L) {
  odb_solver *s;
  const char *file;
  char msg[512];
  odbL_check_not_in_callback(L, "s:checkpoint");
  s = odbL_solver_test(L, 1);
  if (!s) {
    luaL_checkudata(L, 1, ODBL_SOLVER);
    luaL_argerror(L, 1, "the solver is closed");
  }
  file = luaL_checkstring(L, 2);
  if (odb_solver_checkpoint_write(s, file) != ODB_OK) {
    snprintf(msg, sizeof msg, "%s", odb_last_error());
    return luaL_error(L, "%s", msg);
  }
  return 0;
}

/*
** See odb_lua.h: restores s from file for ob.solver's restart = file;
** a refusal is an argument error on arg naming field 'restart' and the
** reason (another problem, size, method, format version; truncated,
** corrupted). Returns 0 (it raises otherwise).
*/
int odbL_checkpoint_restore(lua_State *L, int arg, odb_solver *s,
                            const char *file) {
  if (odb_solver_checkpoint_read(s, file) != ODB_OK)
    luaL_argerror(L, arg, lua_pushfstring(L, "field 'restart': %s",
                  odb_last_error()));
  return 0;
}

/* Adds checkpoint to the Solver's methods (odb_lua_solver.c's metatable,
   whose __index has the method table as its upvalue). */
void odbL_checkpoint_register(lua_State *L) {
  odbL_solver_register(L);
  luaL_getmetatable(L, ODBL_SOLVER);
  if (lua_getfield(L, -1, "__index") == LUA_TFUNCTION &&
      lua_getupvalue(L, -1, 1) != NULL) {
    if (lua_istable(L, -1)) {
      lua_pushcfunction(L, solver_checkpoint);
      lua_setfield(L, -2, "checkpoint");
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}
