/* odb_lua_vector.c - odebench.Vector: a fixed-length array of doubles,
** and the shape it may carry.
**
** The shape is kept in the userdata's one user value: nil (a plain list of
** numbers) or {rows [, cols], complex = true|nil}, set by ob.load, by the
** functions that return a matrix (k:result(), m:solve() and others) and by
** v:reshape. It says how the values, in C (row-major) order, form a 1-D
** or 2-D array; complex (NumPy's '<c16') holds interleaved (re, im)
** pairs, two numbers an element. The values never move: a shape is only
** a reading of them, so every function taking a Vector keeps working. */
#include "odb_lua.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Largest length a Vector may have (keeps the byte count far from overflow). */
#define VECTOR_MAX_N ((long)(((size_t)1 << 40) / sizeof(double)))

/* Assumes 0 <= n <= VECTOR_MAX_N (callers check). Values start at zero. */
/*
** Refuses (a Lua error) a length whose bytes do not fit a size_t or are
** more than the machine's memory: such a vector could only end with the
** process killed for memory, after the user waited for it.
*/
odbL_vector *odbL_vector_new(lua_State *L, long n) {
  size_t bytes = 0;
  double mem = odb_topo_memory_bytes();
  odbL_vector *v;
  if (n < 0 || odb_size_mul(&bytes, (size_t)n, sizeof(double)) ||
      odb_size_add(&bytes, bytes, sizeof(odbL_vector)))
    luaL_error(L, "a vector of %I numbers cannot be addressed",
               (lua_Integer)n);
  if (mem > 0 && (double)bytes > mem) {
    char need[32], have[32];
    snprintf(need, sizeof need, "%.3g", (double)bytes);
    snprintf(have, sizeof have, "%.3g", mem);
    luaL_error(L, "a vector of %I numbers would need %s bytes, more than "
               "this machine's memory (%s bytes)", (lua_Integer)n, need, have);
  }
  v = lua_newuserdatauv(L, bytes, 1);   /* the user value: the shape */
  v->n = n;
  v->closed = 0;
  memset(v->v, 0, (size_t)n * sizeof(double));
  luaL_setmetatable(L, ODBL_VECTOR);
  return v;
}

/* See odb_lua.h. */
int odbL_vector_shape(lua_State *L, int idx, long dims[2], int *complex) {
  int nd = 0;
  dims[0] = dims[1] = 1;
  *complex = 0;
  if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE) {
    nd = (int)luaL_len(L, -1);
    for (int d = 0; d < nd && d < 2; ++d) {
      lua_geti(L, -1, d + 1);
      dims[d] = (long)lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    lua_getfield(L, -1, "complex");
    *complex = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return nd;
}

/* See odb_lua.h. */
void odbL_vector_set_shape(lua_State *L, int idx, int ndim, const long *dims,
                           int complex) {
  idx = lua_absindex(L, idx);
  if (ndim == 0) {
    lua_pushnil(L);
  } else {
    lua_createtable(L, ndim, 1);
    for (int d = 0; d < ndim; ++d) {
      lua_pushinteger(L, dims[d]);
      lua_rawseti(L, -2, d + 1);
    }
    if (complex) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "complex");
    }
  }
  lua_setiuservalue(L, idx, 1);
}

/* A closed vector is an argument error, like a wrong type. */
odbL_vector *odbL_vector_check(lua_State *L, int idx) {
  odbL_vector *v = luaL_checkudata(L, idx, ODBL_VECTOR);
  if (v->closed) luaL_argerror(L, idx, "the vector is closed");
  return v;
}

/* A zero b gives the absolute error, so the result is always finite for
   finite inputs. */
double odbL_max_rel_err(const double *a, const double *b, long n) {
  double num = 0.0, den = 0.0;
  for (long i = 0; i < n; ++i) {
    double d = fabs(a[i] - b[i]), m = fabs(b[i]);
    if (d > num || isnan(d)) num = d;
    if (m > den) den = m;
  }
  return den > 0.0 ? num / den : num;
}

/*
** 1-based index at idx converted to 0-based; raises when it is not an
** exact integer (2.0 is taken) or out of range, with the value in full.
*/
static long check_index(lua_State *L, const odbL_vector *v, int idx) {
  int isint = 0;
  lua_Integer i = 0;
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "Vector index must be an integer, got %s",
               luaL_typename(L, idx));
  i = lua_tointegerx(L, idx, &isint);
  if (!isint)
    luaL_error(L, "Vector index must be an integer in [1, %I], got %s",
               (lua_Integer)v->n, luaL_tolstring(L, idx, NULL));
  if (i < 1 || i > v->n)
    luaL_error(L, "Vector index %I out of range [1, %I]", i,
               (lua_Integer)v->n);
  return (long)(i - 1);
}

/* v[i] for integers, methods for strings. */
static int vector_index(lua_State *L) {
  odbL_vector *v = luaL_checkudata(L, 1, ODBL_VECTOR);
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
  }
  if (v->closed) luaL_error(L, "attempt to use a closed Vector");
  lua_pushnumber(L, v->v[check_index(L, v, 2)]);
  return 1;
}

/* v[i] = x for 1 <= i <= #v; x must be a number. */
static int vector_newindex(lua_State *L) {
  odbL_vector *v = luaL_checkudata(L, 1, ODBL_VECTOR);
  long i;
  if (v->closed) luaL_error(L, "attempt to use a closed Vector");
  i = check_index(L, v, 2);
  v->v[i] = (double)luaL_checknumber(L, 3);
  return 0;
}

/* #v; 0 once closed. */
static int vector_len(lua_State *L) {
  odbL_vector *v = luaL_checkudata(L, 1, ODBL_VECTOR);
  lua_pushinteger(L, v->closed ? 0 : v->n);
  return 1;
}

/* Shows the length and up to the first four values. */
static int vector_tostring(lua_State *L) {
  odbL_vector *v = luaL_checkudata(L, 1, ODBL_VECTOR);
  luaL_Buffer b;
  if (v->closed) {
    lua_pushliteral(L, "odebench.Vector(closed)");
    return 1;
  }
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "odebench.Vector(n=%I", (lua_Integer)v->n);
  luaL_addvalue(&b);
  for (long i = 0; i < v->n && i < 4; ++i) {
    lua_pushfstring(L, "%s%f", i ? ", " : ": ", (lua_Number)v->v[i]);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, v->n > 4 ? ", ...)" : ")");
  luaL_pushresult(&b);
  return 1;
}

/* __close and __gc: the memory is Lua's; closing only forbids further use. */
static int vector_close(lua_State *L) {
  odbL_vector *v = luaL_checkudata(L, 1, ODBL_VECTOR);
  v->closed = 1;
  return 0;
}

/* v:max_rel_err(ref): max |v - ref| / max |ref|. */
static int vector_max_rel_err(lua_State *L) {
  odbL_vector *a = odbL_vector_check(L, 1);
  odbL_vector *b = odbL_vector_check(L, 2);
  if (a->n != b->n)
    return luaL_argerror(L, 2, lua_pushfstring(L,
                         "Vector of length %I expected, got length %I",
                         (lua_Integer)a->n, (lua_Integer)b->n));
  lua_pushnumber(L, odbL_max_rel_err(a->v, b->v, a->n));
  return 1;
}

/* v:norm_inf(): max |v_i| (NaN wins, so it is not hidden). */
static int vector_norm_inf(lua_State *L) {
  odbL_vector *v = odbL_vector_check(L, 1);
  double m = 0.0;
  for (long i = 0; i < v->n; ++i)
    if (fabs(v->v[i]) > m || isnan(v->v[i])) m = fabs(v->v[i]);
  lua_pushnumber(L, m);
  return 1;
}

/* v:totable(): a plain Lua list of the values. */
static int vector_totable(lua_State *L) {
  odbL_vector *v = odbL_vector_check(L, 1);
  lua_createtable(L, v->n < INT32_MAX ? (int)v->n : 0, 0);
  for (long i = 0; i < v->n; ++i) {
    lua_pushnumber(L, v->v[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* v:copy(): a new Vector with the same values. */
static int vector_copy(lua_State *L) {
  odbL_vector *v = odbL_vector_check(L, 1);
  odbL_vector *w = odbL_vector_new(L, v->n);
  memcpy(w->v, v->v, (size_t)v->n * sizeof(double));
  lua_getiuservalue(L, 1, 1);          /* the same shape (a table no one */
  lua_setiuservalue(L, -2, 1);         /* changes: v:reshape makes a new one) */
  return 1;
}

/* v:shape() -> {rows [, cols]}, dtype ("<f8" or "<c16"): the shape the
   Vector carries, or {#v}, "<f8" when it has none. */
static int vector_shape(lua_State *L) {
  odbL_vector *v = odbL_vector_check(L, 1);
  long dims[2];
  int cx, nd = odbL_vector_shape(L, 1, dims, &cx);
  if (nd == 0) {
    nd = 1;
    dims[0] = v->n;
  }
  lua_createtable(L, nd, 0);
  for (int d = 0; d < nd; ++d) {
    lua_pushinteger(L, dims[d]);
    lua_rawseti(L, -2, d + 1);
  }
  lua_pushstring(L, cx ? "<c16" : "<f8");
  return 2;
}

/* See odb_lua.h. */
int odbL_vector_read_shape(lua_State *L, int arg, int sidx, const char *who,
                           long n, int complex, long dims[2]) {
  int w = complex ? 2 : 1;
  lua_Integer nd;
  sidx = lua_absindex(L, sidx);
  if (lua_type(L, sidx) != LUA_TTABLE)
    luaL_argerror(L, arg, lua_pushfstring(L, "shape: table {rows [, cols]} "
                  "expected, got %s", luaL_typename(L, sidx)));
  nd = luaL_len(L, sidx);
  if (nd != 1 && nd != 2)
    luaL_error(L, "%s: shape must have 1 or 2 dimensions, got %I", who, nd);
  dims[1] = 1;
  for (int d = 0; d < nd; ++d) {
    lua_geti(L, sidx, d + 1);
    dims[d] = (long)odbL_int_in_range(L, arg, -1, d ? "shape[2]" : "shape[1]",
                                      0, (lua_Integer)1 << 40);
    lua_pop(L, 1);
  }
  if ((double)dims[0] * (double)dims[1] * w != (double)n) {
    if (nd == 2)
      lua_pushfstring(L, "{%I, %I}", (lua_Integer)dims[0], (lua_Integer)dims[1]);
    else
      lua_pushfstring(L, "{%I}", (lua_Integer)dims[0]);
    double held = (double)dims[0] * (double)dims[1] * w;   /* < 2^81 */
    char cnt[32];
    snprintf(cnt, sizeof cnt, "%.0f", held);
    luaL_error(L, "%s: shape %s holds %s numbers%s, the Vector has %I", who,
               lua_tostring(L, -1), cnt, w == 2 ? " (re, im pairs)" : "",
               (lua_Integer)n);
  }
  return (int)nd;
}

/* v:reshape({rows [, cols]} [, dtype "<f8"|"<c16"]) -> v: the shape the
   Vector carries from now on (its values stay as they are). */
static int vector_reshape(lua_State *L) {
  odbL_vector *v = odbL_vector_check(L, 1);
  const char *dt = luaL_optstring(L, 3, "<f8");
  long dims[2];
  int cx = strcmp(dt, "<c16") == 0;
  if (!cx && strcmp(dt, "<f8") != 0)
    return luaL_error(L, "v:reshape: dtype must be \"<f8\" or \"<c16\", "
                      "got \"%s\"", dt);
  int nd = odbL_vector_read_shape(L, 2, 2, "v:reshape", v->n, cx, dims);
  odbL_vector_set_shape(L, 1, nd, dims, cx);
  lua_settop(L, 1);
  return 1;
}

/* ob.vector(n) gives n zeros; ob.vector{...} copies a list of numbers. */
/* See odb_lua.h. */
lua_Integer odbL_read_numbers(lua_State *L, int idx, double *out,
                              lua_Integer n) {
  idx = lua_absindex(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, idx, i);
    if (lua_type(L, -1) != LUA_TNUMBER) return i;   /* left on the stack */
    out[i - 1] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return 0;
}

int odbL_vector_ctor(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, 1), bad;
    odbL_vector *v;
    if (n > VECTOR_MAX_N) return luaL_argerror(L, 1, "table too long");
    v = odbL_vector_new(L, (long)n);
    if ((bad = odbL_read_numbers(L, 1, v->v, n)) != 0)
      return luaL_argerror(L, 1, lua_pushfstring(L,
                           "element %I: number expected, got %s", bad,
                           luaL_typename(L, -1)));
    return 1;
  }
  odbL_vector_new(L, (long)odbL_check_int_range(L, 1, "length", 0,
                                                VECTOR_MAX_N));
  return 1;
}

static const luaL_Reg vector_methods[] = {
  {"max_rel_err", vector_max_rel_err},
  {"norm_inf", vector_norm_inf},
  {"totable", vector_totable},
  {"copy", vector_copy},
  {"shape", vector_shape},
  {"reshape", vector_reshape},
  {"save", odbL_vector_save},          /* odb_lua_files.c */
  {"close", vector_close},
  {NULL, NULL}
};

static const luaL_Reg vector_meta[] = {
  {"__newindex", vector_newindex},
  {"__len", vector_len},
  {"__tostring", vector_tostring},
  {"__close", vector_close},
  {"__gc", vector_close},
  {NULL, NULL}
};

/* The method table is __index's upvalue, so v.norm_inf finds methods. */
void odbL_vector_register(lua_State *L) {
  if (luaL_newmetatable(L, ODBL_VECTOR)) {
    luaL_setfuncs(L, vector_meta, 0);
    luaL_newlib(L, vector_methods);
    lua_pushcclosure(L, vector_index, 1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
