/* odb_lua_files.c - a user's own data in and out: ob.matrix{file = ...}
** (Matrix Market -> a SparseMatrix of any format that applies), A:write
** (any SparseMatrix -> Matrix Market), ob.load (NumPy .npy, or a Matrix
** Market array, -> a Vector and its shape) and v:save (Vector -> .npy).
** The formats are core/io/odb_mtx.h and odb_npy.h; the sparse side is
** core/sparse/odb_sparse_file.h.
**
** A 2-D array loads as a Vector of its values in C (row-major) order,
** with the shape in a second result, {shape = {rows, cols}, dtype =,
** order = (the file's)}: a Vector is the one array type the binding has,
** and every function that takes one keeps working. complex128 loads as
** interleaved real and imaginary parts (2 numbers an element).
*/
#include "odb_lua.h"
#include "odb_mtx.h"
#include "odb_npy.h"
#include "odb_shown.h"
#include "odb_sparse_file.h"
#include "odb_sparse_impl.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A block of malloc'd memory owned by a userdata, so that a Lua error
** between the reader's allocation and its copy into a Vector frees it. */
#define ODBL_FILEBUF "odebench.FileBuffer"
typedef struct { void *p; } odbL_buf;

static int buf_gc(lua_State *L)
{
  odbL_buf *b = luaL_checkudata(L, 1, ODBL_FILEBUF);
  free(b->p);
  b->p = NULL;
  return 0;
}

/* Pushes an empty buffer box. */
static odbL_buf *buf_new(lua_State *L)
{
  odbL_buf *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->p = NULL;
  if (luaL_newmetatable(L, ODBL_FILEBUF)) {
    lua_pushcfunction(L, buf_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

/* {====== ob.matrix */

typedef struct progress_ud { lua_State *L; int fn; int failed; } progress_ud;

/* The reader's progress, shown through the scenario's function; an error
** in it stops the read (and is raised once the reader has returned). */
static int progress_cb(void *ud, double done, double total)
{
  progress_ud *p = ud;
  lua_pushvalue(p->L, p->fn);
  lua_pushnumber(p->L, done);
  lua_pushnumber(p->L, total);
  odbL_callback_enter("the progress function of ob.matrix");
  int st = lua_pcall(p->L, 2, 0, 0);
  odbL_callback_leave();
  if (st != LUA_OK) { p->failed = 1; return 1; }   /* message left on the stack */
  return 0;
}

/* The grid table at idx (J, H, I, k, wells, pattern) as a reservoir. */
static odb_reservoir *grid_arg(lua_State *L, int idx)
{
  static const char *const keys[] = {"J", "H", "I", "k", "wells", "pattern", NULL};
  odb_reservoir *g = NULL;
  odb_gh_pattern p = ODB_GH_BLOCK;
  if (lua_type(L, idx) != LUA_TTABLE) { odbL_field_error(L, 1, "grid", "table {J=, H=, I=, k=, wells=, pattern=}", idx); return NULL; }
  odbL_check_keys(L, idx, keys);
  long long J = odbL_opt_int_range(L, 1, idx, "J", "grid.J", 1, 1 << 30, 0);
  long long H = odbL_opt_int_range(L, 1, idx, "H", "grid.H", 1, 1 << 30, 0);
  long long I = odbL_opt_int_range(L, 1, idx, "I", "grid.I", 1, 1 << 30, 0);
  long long k = odbL_opt_int_range(L, 1, idx, "k", "grid.k", 1, 16, 1);
  long long nw = odbL_opt_int_range(L, 1, idx, "wells", "grid.wells", 0, 1 << 30, 0);
  lua_getfield(L, idx, "pattern");
  const char *pat = lua_isnil(L, -1) ? "b" : lua_tostring(L, -1);
  if (!pat || (strcmp(pat, "b") && strcmp(pat, "h")))
    luaL_error(L, "ob.matrix: grid.pattern must be \"b\" or \"h\", got %s", luaL_tolstring(L, -1, NULL));
  if (!strcmp(pat, "h")) p = ODB_GH_HALF;
  lua_pop(L, 1);
  if (odb_reservoir_create(&g, (int)J, (int)H, (int)I, (int)k, (int)nw, p, 1) != ODB_OK)
    luaL_error(L, "ob.matrix: grid: %s", odb_last_error());
  return g;
}

/* Frees the reservoir a grid box holds (a Lua error may come after it). */
#define ODBL_GRIDBOX "odebench.FileGrid"
static int grid_gc(lua_State *L)
{
  odb_reservoir **g = luaL_checkudata(L, 1, ODBL_GRIDBOX);
  odb_reservoir_free(*g);
  *g = NULL;
  return 0;
}

/* ob.matrix{file =, format =, bs =, ell_width =, max_bytes =, grid =,
** backend =, threads =, progress =} -> SparseMatrix (GpuSparseMatrix
** with backend "cuda"). */
int odbL_matrix(lua_State *L)
{
  static const char *const keys[] = {"file", "format", "bs", "ell_width", "max_bytes", "grid",
                                     "backend", "threads", "progress", NULL};
  odb_sparse_format f;
  odb_sparse_conv conv = {1, 0, 0, NULL};
  odb_mtx_opts o = {0, NULL, NULL, 0};
  progress_ud pu = {L, 0, 0};
  odbL_check_not_in_callback(L, "ob.matrix");
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_getfield(L, 1, "dist") != LUA_TNIL) return odbL_dmatrix(L);   /* split over ranks */
  lua_pop(L, 1);
  odbL_check_keys(L, 1, keys);
  lua_getfield(L, 1, "file");
  if (lua_type(L, -1) != LUA_TSTRING) return odbL_field_error(L, 1, "file", "string (a .mtx file name)", -1);
  const char *file = lua_tostring(L, -1);
  if (odb_sparse_format_parse(odbL_opt_string(L, 1, "format", "csr"), &f) != ODB_OK)
    return luaL_error(L, "ob.matrix: %s", odb_last_error());
  conv.bs = (int)odbL_opt_int_range(L, 1, 1, "bs", "bs", 1, 64, 1);
  conv.ell_width = (int)odbL_opt_int_range(L, 1, 1, "ell_width", "ell_width", 0, 1 << 20, 0);
  conv.max_bytes = (size_t)odbL_opt_int_range(L, 1, 1, "max_bytes", "max_bytes", 1, (long long)1 << 60, 0);
  o.threads = (int)odbL_opt_int_range(L, 1, 1, "threads", "threads", 1, 64, 0);
  o.max_bytes = (double)conv.max_bytes;
  const char *be = odbL_opt_string(L, 1, "backend", "cpu");
  if (strcmp(be, "cpu") && strcmp(be, "cuda"))
    return luaL_error(L, "ob.matrix: backend must be \"cpu\" or \"cuda\", got \"%s\"", be);
  lua_getfield(L, 1, "progress");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TFUNCTION) return odbL_field_error(L, 1, "progress", "function(done, total)", -1);
    pu.fn = lua_gettop(L);
    o.progress = progress_cb;
    o.ud = &pu;
  }
  lua_getfield(L, 1, "grid");
  if (!lua_isnil(L, -1)) {
    odb_reservoir **gb = lua_newuserdatauv(L, sizeof *gb, 0);
    *gb = NULL;
    if (luaL_newmetatable(L, ODBL_GRIDBOX)) { lua_pushcfunction(L, grid_gc); lua_setfield(L, -2, "__gc"); }
    lua_setmetatable(L, -2);
    *gb = grid_arg(L, lua_gettop(L) - 1);
    conv.grid = *gb;
  }
  odb_sparse **loaded = odbL_sparse_box_new(L), **top = loaded;
  odb_status st = odb_sparse_read_mtx(file, &o, loaded);
  if (pu.failed) return lua_error(L);        /* the progress function's error */
  if (st != ODB_OK) return luaL_error(L, "ob.matrix: %s", odb_last_error());
  if (f != ODB_FMT_CSR) {
    top = odbL_sparse_box_new(L);
    if (odb_sparse_convert_to(*loaded, f, &conv, top) != ODB_OK)
      return luaL_error(L, "ob.matrix: %s", odb_last_error());
    odb_sparse_free(*loaded);                /* the CSR is not needed now */
    *loaded = NULL;
  } else if (conv.max_bytes && odb_sparse_bytes(*loaded) > conv.max_bytes) {
    return luaL_error(L, "ob.matrix: CSR needs %zu bytes, limit %zu", odb_sparse_bytes(*loaded), conv.max_bytes);
  }
  odb_sparse *A = *top;                      /* the SparseMatrix on top */
  odbL_gc_external(L, (double)odb_sparse_bytes(A));
  if (!strcmp(be, "cuda")) {                 /* A:gpu(), the binding's one upload */
    lua_getfield(L, -1, "gpu");
    lua_pushvalue(L, -2);
    lua_call(L, 1, 1);
  }
  return 1;
}

/* See odb_lua.h: A:write(file), Matrix Market coordinate real general,
** %.17g. */
int odbL_sparse_write(lua_State *L)
{
  odb_sparse *A = odbL_sparse_check(L, 1);
  const char *file = luaL_checkstring(L, 2);
  odbL_check_not_in_callback(L, "A:write");
  if (odb_sparse_write_mtx(A, file) != ODB_OK) return luaL_error(L, "A:write: %s", odb_last_error());
  return 0;
}

/* }====== */

/* {====== ob.load, v:save */

/* Pushes the info table of a loaded array. */
static void push_info(lua_State *L, int ndim, long r, long c, const char *dtype, int fortran)
{
  lua_createtable(L, 0, 3);
  lua_createtable(L, ndim, 0);
  lua_pushinteger(L, r); lua_rawseti(L, -2, 1);
  if (ndim == 2) { lua_pushinteger(L, c); lua_rawseti(L, -2, 2); }
  lua_setfield(L, -2, "shape");
  lua_pushstring(L, dtype); lua_setfield(L, -2, "dtype");
  lua_pushstring(L, fortran ? "F" : "C"); lua_setfield(L, -2, "order");
}

/* Copies an r x c array of w-double elements from src in Fortran
** (column-major) order, or C order when !fortran, to dst in C order. */
static void to_c_order(double *dst, const double *src, long r, long c, int w, int fortran)
{
  if (!fortran) { memcpy(dst, src, (size_t)r * c * w * sizeof *dst); return; }
  for (long i = 0; i < r; i++)
    for (long j = 0; j < c; j++)
      memcpy(dst + ((size_t)i * c + j) * w, src + ((size_t)j * r + i) * w, (size_t)w * sizeof *dst);
}

/* ob.load(file) -> Vector, {shape =, dtype =, order =}: a .npy file, or a
** Matrix Market array (told apart by their first bytes). */
int odbL_load(lua_State *L)
{
  const char *file = luaL_checkstring(L, 1);
  char head[16] = {0};
  odbL_check_not_in_callback(L, "ob.load");
  FILE *f = fopen(file, "rb");
  if (f) { if (fread(head, 1, sizeof head - 1, f)) {} fclose(f); }
  odbL_buf *box = buf_new(L);
  if (!strncasecmp(head, "%%MatrixMarket", 14)) {
    odb_mtx m;
    if (odb_mtx_read(file, NULL, &m) != ODB_OK) return luaL_error(L, "ob.load: %s", odb_last_error());
    if (!m.array) {
      odb_mtx_free(&m);
      char sh[ODB_SHOWN_NAME];
      return luaL_error(L, "ob.load: %s: a coordinate Matrix Market file is a sparse matrix: read it with "
                        "ob.matrix{file = ...}", odb_shown(file, sh, sizeof sh));
    }
    box->p = m.dense;
    odbL_vector *v = odbL_vector_new(L, m.nrows * m.ncols);
    to_c_order(v->v, m.dense, m.nrows, m.ncols, 1, 1);
    odbL_vector_set_shape(L, -1, 2, (long[2]){m.nrows, m.ncols}, 0);
    push_info(L, 2, m.nrows, m.ncols, "<f8", 1);
    return 2;
  }
  odb_npy a;
  if (odb_npy_read(file, &a) != ODB_OK) return luaL_error(L, "ob.load: %s", odb_last_error());
  box->p = a.data;
  int w = a.dtype == ODB_NPY_C16 ? 2 : 1;
  odbL_vector *v = odbL_vector_new(L, (long)a.count * w);
  to_c_order(v->v, a.data, a.shape[0], a.shape[1], w, a.fortran && a.ndim == 2);
  odbL_vector_set_shape(L, -1, a.ndim, (long[2]){a.shape[0], a.shape[1]}, w == 2);
  push_info(L, a.ndim, a.shape[0], a.shape[1], odb_npy_dtype_name(a.dtype), a.fortran);
  return 2;
}

/* See odb_lua.h. */
odbL_vector *odbL_array_arg(lua_State *L, int vidx, const char *who,
                            const char *field, int need2d, long dims[2],
                            int *complex)
{
  vidx = lua_absindex(L, vidx);
  if (lua_type(L, vidx) == LUA_TSTRING) {
    lua_pushcfunction(L, odbL_load);
    lua_pushvalue(L, vidx);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
      luaL_error(L, "%s: %s: %s", who, field, lua_tostring(L, -1));
  } else {
    lua_pushvalue(L, vidx);
  }
  odbL_vector *v = luaL_testudata(L, -1, ODBL_VECTOR);
  if (!v || v->closed)
    luaL_error(L, "%s: %s: a %s expected (a Vector%s, or a .npy file name), got %s", who, field,
               need2d ? "matrix" : "Vector", need2d ? " with a 2-D shape" : "",
               v ? "a closed Vector" : luaL_typename(L, -1));
  int nd = odbL_vector_shape(L, -1, dims, complex);
  if (need2d && nd != 2) {
    if (nd == 1) lua_pushfstring(L, "shape {%I}", (lua_Integer)dims[0]);
    else lua_pushfstring(L, "%I numbers without a shape", (lua_Integer)v->n);
    luaL_error(L, "%s: %s: a 2-D matrix expected (a Vector with a shape {rows, cols}: ob.load's, or v:reshape's), got %s",
               who, field, lua_tostring(L, -1));
  }
  if (nd == 0) dims[0] = v->n;               /* a plain list: 1-D */
  return v;
}

/* v:save(file [, {shape = {r [, c]}, dtype = "<f8"|"<c16", order =
** "C"|"F"}]): the Vector's values (C order; complex: interleaved) as .npy.
** shape and dtype default to the ones the Vector carries (ob.load's,
** k:result()'s, v:reshape's; none: 1-D float64). */
int odbL_vector_save(lua_State *L)
{
  static const char *const keys[] = {"shape", "dtype", "order", NULL};
  odbL_vector *v = odbL_vector_check(L, 1);
  const char *file = luaL_checkstring(L, 2);
  long dims[2];
  int cx, nd = odbL_vector_shape(L, 1, dims, &cx);
  odb_npy a = {cx ? ODB_NPY_C16 : ODB_NPY_F8, nd ? nd : 1, {nd ? dims[0] : v->n, dims[1]}, 0, 0, v->v, 1};
  odbL_check_not_in_callback(L, "v:save");
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    odbL_check_keys(L, 3, keys);
    const char *dt = odbL_opt_string(L, 3, "dtype", cx ? "<c16" : "<f8"), *ord = odbL_opt_string(L, 3, "order", "C");
    if (strcmp(dt, "<c16") && strcmp(dt, "<f8")) return luaL_error(L, "v:save: dtype must be \"<f8\" or \"<c16\", got \"%s\"", dt);
    if (strcmp(ord, "C") && strcmp(ord, "F")) return luaL_error(L, "v:save: order must be \"C\" or \"F\", got \"%s\"", ord);
    a.fortran = !strcmp(ord, "F");
    int w = !strcmp(dt, "<c16") ? 2 : 1;
    a.dtype = w == 2 ? ODB_NPY_C16 : ODB_NPY_F8;
    if (w == 2 && v->n % 2) return luaL_error(L, "v:save: dtype \"<c16\" takes pairs (re, im); the Vector has %I numbers", (lua_Integer)v->n);
    lua_getfield(L, 3, "shape");
    if (!lua_isnil(L, -1)) {
      if (lua_type(L, -1) != LUA_TTABLE) return odbL_field_error(L, 3, "shape", "table {rows [, cols]}", -1);
      a.ndim = odbL_vector_read_shape(L, 3, -1, "v:save", v->n, w == 2, dims);
      a.shape[0] = dims[0];
      a.shape[1] = dims[1];
    } else if (w != (cx ? 2 : 1) || !nd) {   /* the dtype given changes the count */
      a.ndim = 1;
      a.shape[0] = v->n / w;
      a.shape[1] = 1;
    }
    if (a.fortran && a.ndim == 2) {          /* C-order values -> Fortran order */
      double *t = lua_newuserdatauv(L, (size_t)v->n * sizeof *t + 1, 0);
      for (long i = 0; i < a.shape[0]; i++)
        for (long j = 0; j < a.shape[1]; j++)
          memcpy(t + ((size_t)j * a.shape[0] + i) * w, v->v + ((size_t)i * a.shape[1] + j) * w, (size_t)w * sizeof *t);
      a.data = t;
    }
  }
  if (a.ndim == 1) a.shape[1] = 1;
  if (odb_npy_write(file, &a) != ODB_OK) return luaL_error(L, "v:save: %s", odb_last_error());
  return 0;
}

/* }====== */

/* See odb_lua.h: ob.matrix and ob.load into the module table at -1
** (A:write and v:save are methods of their types, registered with them). */
void odbL_files_register(lua_State *L)
{
  lua_pushcfunction(L, odbL_matrix);
  lua_setfield(L, -2, "matrix");
  lua_pushcfunction(L, odbL_load);
  lua_setfield(L, -2, "load");
}
