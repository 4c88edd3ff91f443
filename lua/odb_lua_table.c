/* odb_lua_table.c - reading option tables ({tol = 1e-6}) with uniform errors */
#include "odb_lua.h"

#include <stdio.h>
#include <string.h>

/*
** The type name of the value at idx as Lua's own argument errors print it:
** the metatable's __name for userdata of a named type, else the basic type.
** Leaves the stack as it found it.
*/
static const char *type_name(lua_State *L, int idx) {
  const char *name;
  idx = lua_absindex(L, idx);
  if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING) {
    name = lua_tostring(L, -1);   /* stays alive: the metatable holds it */
    lua_pop(L, 1);
    return name;
  }
  return luaL_typename(L, idx);
}

/* Assumes vidx is a valid index; never returns. */
int odbL_field_error(lua_State *L, int arg, const char *field,
                     const char *what, int vidx) {
  const char *got = type_name(L, vidx);
  const char *msg = lua_pushfstring(L, "field '%s': %s expected, got %s",
                                    field, what, got);
  return luaL_argerror(L, arg, msg);
}

/* Joins the NULL-terminated names into buf as "a, b, c" (truncated). */
static void join_names(const char *const *names, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; names[i] && used + 1 < len; ++i) {
    int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

/*
** Assumes the value at arg is a table. Walks it once; any key that is not
** a string from allowed raises an argument error listing the allowed keys.
*/
void odbL_check_keys(lua_State *L, int arg, const char *const *allowed) {
  char names[512];
  arg = lua_absindex(L, arg);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    int ok = 0;
    if (lua_type(L, -2) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -2);
      for (int i = 0; allowed[i] && !ok; ++i) ok = strcmp(k, allowed[i]) == 0;
    }
    if (!ok) {
      join_names(allowed, names, sizeof names);
      if (lua_type(L, -2) == LUA_TSTRING)
        lua_pushfstring(L, "unknown field '%s' (allowed: %s)",
                        lua_tostring(L, -2), names);
      else
        lua_pushfstring(L, "unexpected key of type %s (allowed: %s)",
                        luaL_typename(L, -2), names);
      luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
  }
}

/* Strict: a string that looks like a number is still a string here. */
int odbL_opt_number(lua_State *L, int arg, const char *field, double *out) {
  int t = lua_getfield(L, arg, field);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (t != LUA_TNUMBER) odbL_field_error(L, arg, field, "number", -1);
  *out = (double)lua_tonumber(L, -1);
  lua_pop(L, 1);
  return 1;
}

/* Accepts floats with an exact integer value (1e6) as well. */
int odbL_opt_integer(lua_State *L, int arg, const char *field,
                     long long *out) {
  int isint = 0;
  lua_Integer v;
  int t = lua_getfield(L, arg, field);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (t != LUA_TNUMBER) odbL_field_error(L, arg, field, "integer", -1);
  v = lua_tointegerx(L, -1, &isint);
  if (!isint) {
    const char *msg = lua_pushfstring(L, "field '%s': integer expected, got %f",
                                      field, lua_tonumber(L, -1));
    luaL_argerror(L, arg, msg);
  }
  *out = (long long)v;
  lua_pop(L, 1);
  return 1;
}

/*
** An optional integer field of the table at tidx in [lo, hi], def when
** absent; out of range raises an error on argument arg naming the field as
** shown ("tiling.threads") with the range.
*/
long long odbL_opt_int_range(lua_State *L, int arg, int tidx,
                             const char *field, const char *shown,
                             long long lo, long long hi, long long def) {
  long long v;
  if (!odbL_opt_integer(L, tidx, field, &v)) return def;
  if (v < lo || v > hi)
    luaL_argerror(L, arg, lua_pushfstring(L, "field '%s': must be in "
                  "%I..%I, got %I", shown, (lua_Integer)lo, (lua_Integer)hi,
                  (lua_Integer)v));
  return v;
}

/*
** The returned string belongs to the table at arg, so it stays valid while
** that table is on the stack and the field is not reassigned.
*/
const char *odbL_opt_string(lua_State *L, int arg, const char *field,
                            const char *def) {
  const char *s;
  int t = lua_getfield(L, arg, field);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return def;
  }
  if (t != LUA_TSTRING) odbL_field_error(L, arg, field, "string", -1);
  s = lua_tostring(L, -1);
  lua_pop(L, 1);
  return s;
}

/*
** Assumes vidx holds the value to read. A Lua integer, or a float with an
** exact integer value, within [lo, hi]; anything else (a string, 2.5, NaN,
** 2^63, a value out of range) raises an argument error on arg that names
** `shown`, the range and the value as given (never truncated).
*/
lua_Integer odbL_int_in_range(lua_State *L, int arg, int vidx,
                              const char *shown, lua_Integer lo,
                              lua_Integer hi) {
  int isint = 0;
  lua_Integer v;
  vidx = lua_absindex(L, vidx);
  if (lua_type(L, vidx) != LUA_TNUMBER)
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s: integer expected, "
                         "got %s", shown, type_name(L, vidx)));
  v = lua_tointegerx(L, vidx, &isint);
  if (!isint)
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s: must be an integer "
                         "in %I..%I, got %s", shown, lo, hi,
                         luaL_tolstring(L, vidx, NULL)));
  if (v < lo || v > hi)
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s: must be in %I..%I, "
                         "got %I", shown, lo, hi, v));
  return v;
}

/* The positional argument arg as an integer in [lo, hi]. */
lua_Integer odbL_check_int_range(lua_State *L, int arg, const char *shown,
                                 lua_Integer lo, lua_Integer hi) {
  return odbL_int_in_range(L, arg, arg, shown, lo, hi);
}
