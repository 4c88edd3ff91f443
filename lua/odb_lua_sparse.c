/* odb_lua_sparse.c - ob.reservoir{...}, grid:matrix(fmt), A:spmv(x),
** ob.krylov{...} (CPU reference) over odb_sparse.h. */
#include "odb_lua.h"

#include <stdlib.h>
#include <string.h>

#define ODBL_RESERVOIR "odebench.Reservoir"
#define ODBL_SPARSE    "odebench.SparseMatrix"

void odbL_sparse_register(lua_State *L);
int odbL_reservoir(lua_State *L);
int odbL_krylov(lua_State *L);

typedef struct { odb_reservoir *g; } odbL_res;
typedef struct { odb_sparse *A; } odbL_mat;

/* The open grid at idx (argument error otherwise). */
static odb_reservoir *res_check(lua_State *L, int idx)
{
  odbL_res *r = luaL_checkudata(L, idx, ODBL_RESERVOIR);
  if (!r->g) luaL_argerror(L, idx, "the reservoir is closed");
  return r->g;
}

/* The open matrix at idx (argument error otherwise). */
static odb_sparse *mat_check(lua_State *L, int idx)
{
  odbL_mat *m = luaL_checkudata(L, idx, ODBL_SPARSE);
  if (!m->A) luaL_argerror(L, idx, "the matrix is closed");
  return m->A;
}

/* Vector or table of n numbers at idx into a fresh malloc'd array. */
static double *vec_arg(lua_State *L, int idx, long n, const char *what)
{
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) luaL_error(L, "out of memory for %s", what);
  if (lua_type(L, idx) == LUA_TTABLE) {
    if ((long)luaL_len(L, idx) != n) { free(v); luaL_error(L, "%s has %I entries, the matrix order is %I", what, (lua_Integer)luaL_len(L, idx), (lua_Integer)n); }
    for (long i = 0; i < n; i++) { lua_geti(L, idx, i + 1); v[i] = lua_tonumber(L, -1); lua_pop(L, 1); }
    return v;
  }
  odbL_vector *x = luaL_testudata(L, idx, ODBL_VECTOR);
  if (!x || x->closed) { free(v); luaL_error(L, "%s: Vector or table expected", what); }
  if (x->n != n) { free(v); luaL_error(L, "%s has %I entries, the matrix order is %I", what, (lua_Integer)x->n, (lua_Integer)n); }
  memcpy(v, x->v, (size_t)n * sizeof *v);
  return v;
}

/* ob.reservoir{J=, H=, I=, k=, wells=, pattern="b"|"h", seed=} */
int odbL_reservoir(lua_State *L)
{
  static const char *const keys[] = {"J", "H", "I", "k", "wells", "pattern", "seed", NULL};
  odbL_sparse_register(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  long long J = 0, H = 0, I = 0, k = 1, nw = 0, seed = 1;
  odbL_opt_integer(L, 1, "J", &J); odbL_opt_integer(L, 1, "H", &H); odbL_opt_integer(L, 1, "I", &I);
  odbL_opt_integer(L, 1, "k", &k); odbL_opt_integer(L, 1, "wells", &nw); odbL_opt_integer(L, 1, "seed", &seed);
  const char *pat = odbL_opt_string(L, 1, "pattern", "b");
  odb_gh_pattern p;
  if (!strcmp(pat, "b") || !strcmp(pat, "GH-b")) p = ODB_GH_BLOCK;
  else if (!strcmp(pat, "h") || !strcmp(pat, "GH-h")) p = ODB_GH_HALF;
  else return luaL_error(L, "ob.reservoir: pattern must be \"b\" or \"h\", got \"%s\"", pat);
  if (J > 1 << 30 || H > 1 << 30 || I > 1 << 30 || k > 1 << 30 || nw > 1 << 30 || J < -1 || H < -1 || I < -1 || k < -1 || nw < -1)
    return luaL_error(L, "ob.reservoir: sizes out of range");
  odbL_res *r = lua_newuserdatauv(L, sizeof *r, 0);
  r->g = NULL;
  luaL_setmetatable(L, ODBL_RESERVOIR);
  if (odb_reservoir_create(&r->g, (int)J, (int)H, (int)I, (int)k, (int)nw, p, (uint64_t)seed) != ODB_OK)
    return luaL_error(L, "ob.reservoir: %s", odb_last_error());
  return 1;
}

/* grid:matrix(format) -> SparseMatrix */
static int res_matrix(lua_State *L)
{
  odb_reservoir *g = res_check(L, 1);
  odb_sparse_format f;
  if (odb_sparse_format_parse(luaL_optstring(L, 2, "csr"), &f) != ODB_OK)
    return luaL_error(L, "%s", odb_last_error());
  odbL_mat *m = lua_newuserdatauv(L, sizeof *m, 0);
  m->A = NULL;
  luaL_setmetatable(L, ODBL_SPARSE);
  if (odb_reservoir_matrix(g, f, 0, &m->A) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  return 1;
}

/* grid:rhs(A) -> b, xs (Vectors): b = A xs with the grid's known solution. */
static int res_rhs(lua_State *L)
{
  odb_reservoir *g = res_check(L, 1);
  odb_sparse *A = mat_check(L, 2);
  odbL_vector *b = odbL_vector_new(L, g->n);
  odbL_vector *xs = odbL_vector_new(L, g->n);
  if (odb_reservoir_rhs(g, A, xs->v, b->v) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  return 2;
}

/* grid:info() -> {J, H, I, k, wells, cells, n, pattern, pu, pv} */
static int res_info(lua_State *L)
{
  odb_reservoir *g = res_check(L, 1);
  lua_createtable(L, 0, 10);
  lua_pushinteger(L, g->J); lua_setfield(L, -2, "J");
  lua_pushinteger(L, g->H); lua_setfield(L, -2, "H");
  lua_pushinteger(L, g->I); lua_setfield(L, -2, "I");
  lua_pushinteger(L, g->k); lua_setfield(L, -2, "k");
  lua_pushinteger(L, g->nw); lua_setfield(L, -2, "wells");
  lua_pushinteger(L, g->M); lua_setfield(L, -2, "cells");
  lua_pushinteger(L, g->n); lua_setfield(L, -2, "n");
  lua_pushinteger(L, g->pu); lua_setfield(L, -2, "pu");
  lua_pushinteger(L, g->pv); lua_setfield(L, -2, "pv");
  lua_pushstring(L, g->pattern == ODB_GH_HALF ? "h" : "b"); lua_setfield(L, -2, "pattern");
  return 1;
}

/* __gc/__close/close of a grid; closing twice is fine. */
static int res_close(lua_State *L)
{
  odbL_res *r = luaL_checkudata(L, 1, ODBL_RESERVOIR);
  odb_reservoir_free(r->g);
  r->g = NULL;
  return 0;
}

/* A:spmv(x) -> Vector y = A x */
static int mat_spmv(lua_State *L)
{
  odb_sparse *A = mat_check(L, 1);
  double *x = vec_arg(L, 2, A->n, "x");
  odbL_vector *y = odbL_vector_new(L, A->n);
  odb_sparse_spmv(A, x, y->v);
  free(x);
  return 1;
}

/* A:info() -> {format, n, nnz, bytes} */
static int mat_info(lua_State *L)
{
  odb_sparse *A = mat_check(L, 1);
  lua_createtable(L, 0, 4);
  lua_pushstring(L, odb_sparse_format_name(A->fmt)); lua_setfield(L, -2, "format");
  lua_pushinteger(L, A->n); lua_setfield(L, -2, "n");
  lua_pushinteger(L, A->nnz); lua_setfield(L, -2, "nnz");
  lua_pushinteger(L, (lua_Integer)odb_sparse_bytes(A)); lua_setfield(L, -2, "bytes");
  return 1;
}

/* __gc/__close/close of a matrix; closing twice is fine. */
static int mat_close(lua_State *L)
{
  odbL_mat *m = luaL_checkudata(L, 1, ODBL_SPARSE);
  odb_sparse_free(m->A);
  m->A = NULL;
  return 0;
}

/* ob.krylov{A=, b=, method="bicgstab"|"qmr", impl="cpu", tol=, maxit=, x0=}
** -> {x=Vector, converged, outcome, iters, breakdown_iter, relres,
**     relres_true, history={...}, message} ; breakdowns are reported, not raised. */
int odbL_krylov(lua_State *L)
{
  static const char *const keys[] = {"A", "b", "method", "impl", "tol", "maxit", "x0", "stagnation", NULL};
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  lua_getfield(L, 1, "A");
  odb_sparse *A = mat_check(L, -1);
  lua_pop(L, 1);
  const char *meth = odbL_opt_string(L, 1, "method", "bicgstab");
  const char *impl = odbL_opt_string(L, 1, "impl", "cpu");
  odb_krylov_method km;
  if (!strcmp(meth, "bicgstab")) km = ODB_KRYLOV_BICGSTAB;
  else if (!strcmp(meth, "qmr")) km = ODB_KRYLOV_QMR;
  else return luaL_error(L, "ob.krylov: method must be \"bicgstab\" or \"qmr\", got \"%s\"", meth);
  if (strcmp(impl, "cpu"))
    return luaL_error(L, "ob.krylov: impl \"%s\" is not available (only \"cpu\" so far)", impl);
  odb_krylov_opts o = {1e-10, 1000, 100};
  long long it;
  odbL_opt_number(L, 1, "tol", &o.tol);
  if (odbL_opt_integer(L, 1, "maxit", &it)) o.maxit = it > 0 && it < 1 << 30 ? (int)it : 0;
  if (odbL_opt_integer(L, 1, "stagnation", &it)) o.stag_window = it > 0 && it < 1 << 30 ? (int)it : 0;
  if (!(o.tol > 0) || o.maxit <= 0) return luaL_error(L, "ob.krylov: tol and maxit must be positive");
  lua_getfield(L, 1, "b");
  double *b = vec_arg(L, lua_gettop(L), A->n, "b");
  lua_pop(L, 1);
  odbL_vector *x = odbL_vector_new(L, A->n);
  int xi = lua_gettop(L);
  lua_getfield(L, 1, "x0");
  if (!lua_isnil(L, -1)) {
    double *x0 = vec_arg(L, lua_gettop(L), A->n, "x0");
    memcpy(x->v, x0, (size_t)A->n * sizeof *x0);
    free(x0);
  }
  lua_pop(L, 1);
  odb_krylov_result res;
  odb_status st = odb_krylov_solve(A, km, b, x->v, &o, &res);
  free(b);
  if (st != ODB_OK && st != ODB_ERR_MAX_STEPS) return luaL_error(L, "ob.krylov: %s", odb_last_error());
  lua_createtable(L, 0, 9);
  lua_pushvalue(L, xi); lua_setfield(L, -2, "x");
  lua_pushboolean(L, st == ODB_OK); lua_setfield(L, -2, "converged");
  lua_pushstring(L, odb_krylov_outcome_name(res.outcome)); lua_setfield(L, -2, "outcome");
  lua_pushinteger(L, res.iters); lua_setfield(L, -2, "iters");
  lua_pushinteger(L, res.breakdown_iter); lua_setfield(L, -2, "breakdown_iter");
  lua_pushnumber(L, res.relres); lua_setfield(L, -2, "relres");
  lua_pushnumber(L, res.relres_true); lua_setfield(L, -2, "relres_true");
  lua_createtable(L, res.nhist, 0);
  for (int i = 0; i < res.nhist; i++) { lua_pushnumber(L, res.history[i]); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "history");
  if (st != ODB_OK) { lua_pushstring(L, odb_last_error()); lua_setfield(L, -2, "message"); }
  odb_krylov_result_free(&res);
  return 1;
}

/* Registers the two metatables (idempotent). */
void odbL_sparse_register(lua_State *L)
{
  static const luaL_Reg res_methods[] = {{"matrix", res_matrix}, {"rhs", res_rhs}, {"info", res_info},
                                         {"close", res_close}, {NULL, NULL}};
  static const luaL_Reg mat_methods[] = {{"spmv", mat_spmv}, {"info", mat_info},
                                         {"close", mat_close}, {NULL, NULL}};
  if (luaL_newmetatable(L, ODBL_RESERVOIR)) {
    luaL_newlib(L, res_methods); lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, res_close); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, res_close); lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, ODBL_SPARSE)) {
    luaL_newlib(L, mat_methods); lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, mat_close); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, mat_close); lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}
