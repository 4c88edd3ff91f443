/* odb_lua_problem.c - odebench.Problem: a registered IVP made by ob.problem. */
#include "odb_lua.h"

#include <string.h>

#define MAX_PARAMS 16

/* Destroys p once nobody can use it any more: closed and no solver left. */
static void problem_maybe_destroy(odbL_problem *pb) {
  if (pb->closed && pb->refs == 0 && pb->p) {
    odb_problem_destroy(pb->p);
    pb->p = NULL;
  }
}

/* NULL is allowed (a solver whose create failed has no problem). */
void odbL_problem_release(odbL_problem *pb) {
  if (!pb) return;
  if (pb->refs > 0) pb->refs--;
  problem_maybe_destroy(pb);
}

/* A closed problem is an argument error, like a wrong type. */
odbL_problem *odbL_problem_check(lua_State *L, int idx) {
  odbL_problem *pb = luaL_checkudata(L, idx, ODBL_PROBLEM);
  if (pb->closed || !pb->p) luaL_argerror(L, idx, "the problem is closed");
  return pb;
}

/* The declaration of parameter name in type t, or NULL. */
static const odb_param_decl *find_decl(const odb_problem_type *t,
                                       const char *name) {
  for (int i = 0; t && i < t->nparams; ++i)
    if (strcmp(t->params[i].name, name) == 0) return &t->params[i];
  return NULL;
}

/*
** Converts the table at idx into vals[] (names and strings stay owned by
** the table). Numbers and booleans fill num; strings fill str and are only
** accepted for enum parameters (or unknown names: the engine then reports
** the name with the allowed ones).
*/
static int collect_params(lua_State *L, int idx, const odb_problem_type *t,
                          odb_param_value *vals) {
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const odb_param_decl *d;
    const char *name;
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_argerror(L, idx, lua_pushfstring(L,
                    "parameter names must be strings, got %s",
                    luaL_typename(L, -2)));
    if (n == MAX_PARAMS) luaL_argerror(L, idx, "too many parameters");
    name = lua_tostring(L, -2);
    d = find_decl(t, name);
    vals[n].name = name;
    vals[n].num = 0.0;
    vals[n].str = NULL;
    switch (lua_type(L, -1)) {
    case LUA_TNUMBER:
      vals[n].num = (double)lua_tonumber(L, -1);
      break;
    case LUA_TBOOLEAN:
      vals[n].num = lua_toboolean(L, -1) ? 1.0 : 0.0;
      break;
    case LUA_TSTRING:
      if (d && d->type != ODB_PARAM_ENUM)
        luaL_argerror(L, idx, lua_pushfstring(L,
                      "parameter '%s': number expected, got string", name));
      vals[n].str = lua_tostring(L, -1);
      break;
    default:
      luaL_argerror(L, idx, lua_pushfstring(L,
                    "parameter '%s': number or string expected, got %s",
                    name, luaL_typename(L, -1)));
    }
    n++;
    lua_pop(L, 1);
  }
  return n;
}

/* ob.problem(name [, params]): the userdata exists before the engine object,
   so a failed create leaves nothing to leak. */
int odbL_problem_new(lua_State *L) {
  const char *name;
  if (lua_istable(L, 1)) return odbL_user_problem(L);
  name = luaL_checkstring(L, 1);
  odb_param_value vals[MAX_PARAMS];
  int nv = 0;
  odbL_problem *pb;
  odb_problem *p = NULL;
  odb_status st;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    nv = collect_params(L, 2, odb_problem_type_find(name), vals);
  }
  pb = lua_newuserdatauv(L, sizeof *pb, 0);
  memset(pb, 0, sizeof *pb);
  luaL_setmetatable(L, ODBL_PROBLEM);
  st = odb_problem_create(name, vals, nv, &p);
  if (st == ODB_ERR_NAME) return luaL_argerror(L, 1, odb_last_error());
  if (st != ODB_OK) return luaL_argerror(L, 2, odb_last_error());
  pb->p = p;
  return 1;
}

/* p:initial(): the initial value as a new Vector. */
static int problem_initial(lua_State *L) {
  odbL_problem *pb = odbL_problem_check(L, 1);
  odbL_vector *v = odbL_vector_new(L, pb->p->n);
  pb->p->initial(pb->p, v->v);
  return 1;
}

/* __gc: idempotent; p stays while a solver still uses it. Never refuses
   (see solver_gc in odb_lua_solver.c). */
static int problem_gc(lua_State *L) {
  odbL_problem *pb = luaL_checkudata(L, 1, ODBL_PROBLEM);
  pb->closed = 1;
  problem_maybe_destroy(pb);
  return 0;
}

/*
** p:close() and __close: as __gc, but refused inside a callback from the
** engine (f, a tuner's verify), where p may be the problem of the running
** call: ob.reference holds no solver reference on it.
*/
static int problem_close(lua_State *L) {
  odbL_check_not_in_callback(L, "p:close");
  return problem_gc(L);
}

/* "odebench.Problem(bruss2d(N=128), n=32768)". */
static int problem_tostring(lua_State *L) {
  odbL_problem *pb = luaL_checkudata(L, 1, ODBL_PROBLEM);
  if (pb->closed || !pb->p)
    lua_pushliteral(L, "odebench.Problem(closed)");
  else
    lua_pushfstring(L, "odebench.Problem(%s, n=%I)", pb->p->label,
                    (lua_Integer)pb->p->n);
  return 1;
}

/* Pushes {name = value, ...} of the resolved parameters. */
static void push_params(lua_State *L, const odb_problem *p) {
  const odb_problem_type *t = p->type;
  lua_newtable(L);
  for (int i = 0; t && i < t->nparams && i < 8; ++i) {
    const odb_param_decl *d = &t->params[i];
    if (d->type == ODB_PARAM_INT)
      lua_pushinteger(L, (lua_Integer)p->param[i]);
    else
      lua_pushnumber(L, p->param[i]);
    lua_setfield(L, -2, d->name);
  }
}

/* Methods first (from the upvalue), then the fields of the problem. */
static int problem_index(lua_State *L) {
  odbL_problem *pb = luaL_checkudata(L, 1, ODBL_PROBLEM);
  const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  const odb_problem *p;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || !k) return 1;
  if (pb->closed || !pb->p) luaL_error(L, "attempt to use a closed problem");
  p = pb->p;
  if (strcmp(k, "n") == 0) lua_pushinteger(L, (lua_Integer)p->n);
  else if (strcmp(k, "d") == 0) lua_pushinteger(L, (lua_Integer)p->d);
  else if (strcmp(k, "name") == 0) lua_pushstring(L, p->type->name);
  else if (strcmp(k, "label") == 0) lua_pushstring(L, p->label);
  else if (strcmp(k, "t0") == 0) lua_pushnumber(L, p->t0);
  else if (strcmp(k, "t1") == 0) lua_pushnumber(L, p->t1);
  else if (strcmp(k, "params") == 0) push_params(L, p);
  else if (strcmp(k, "key") == 0) {   /* its part of a tuning key */
    char key[256];
    odb_problem_key(p, key, sizeof key);
    lua_pushstring(L, key);
  }
  else lua_pushnil(L);
  return 1;
}

static const luaL_Reg problem_methods[] = {
  {"initial", problem_initial},
  {"close", problem_close},
  {NULL, NULL}
};

static const luaL_Reg problem_meta[] = {
  {"__gc", problem_gc},
  {"__close", problem_close},
  {"__tostring", problem_tostring},
  {NULL, NULL}
};

/* The method table is __index's upvalue; fields come after methods. */
void odbL_problem_register(lua_State *L) {
  if (luaL_newmetatable(L, ODBL_PROBLEM)) {
    luaL_setfuncs(L, problem_meta, 0);
    luaL_newlib(L, problem_methods);
    lua_pushcclosure(L, problem_index, 1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
