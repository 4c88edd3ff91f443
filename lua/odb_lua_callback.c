/* odb_lua_callback.c - the guard against re-entering the engine from a
   callback (f, a tuner objective, a plot callback). See odb_lua.h. */
#include "odb_lua.h"

/*
** Per thread: a threaded CPU variant calls f from its workers, and the
** Lua code of f then runs on that worker, so the depth must be the
** worker's own. Only the outermost callback's name is kept.
*/
static _Thread_local int depth;
static _Thread_local const char *outer;

void odbL_callback_enter(const char *what) {
  if (depth++ == 0) outer = what;
}

void odbL_callback_leave(void) {
  if (depth > 0 && --depth == 0) outer = NULL;
}

const char *odbL_in_callback(void) {
  return depth > 0 ? (outer ? outer : "a callback") : NULL;
}

void odbL_check_not_in_callback(lua_State *L, const char *what) {
  const char *cb = odbL_in_callback();
  if (cb)
    luaL_error(L, "%s cannot be called from inside %s: the engine is in "
               "the middle of the call that runs it (compute what is "
               "needed before the call or after it)", what, cb);
}
