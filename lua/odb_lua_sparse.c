/* odb_lua_sparse.c - ob.reservoir{...}, grid:matrix(fmt), A:spmv(x),
** ob.krylov{...} over odb_sparse.h, the GPU matrices and the Krylov impls
** through the ops tables of odb_sparse_impl.h ("cpu": the reference;
** "cuda" in builds with CUDA: the GPU forms).
**
** GPU matrices (the "cuda" table's device copies): A:gpu() or
** grid:matrix(fmt, {backend = "cuda"}) returns a GpuSparseMatrix D, a
** device copy in the same format; D:spmv(x [, "ours"|"cusparse"]) runs on
** the GPU (host Vector or table in, Vector out), D:tune{reps=} tunes the
** launch options (seconds, configuration), D:bench{impl="ours"|"cusparse",
** reps=} returns seconds per SpMV (median), D:set{block=, grain=,
** shared_x=, pair=, stream=} forces options, D:info() {format, n, nnz, bytes, config,
** floor_bytes}. A:spmv(x) stays on the CPU. Builds without CUDA raise
** the registry's "backend 'cuda': this build has no CUDA". */
#include "odb_lua.h"
#include "odb_sparse_file.h"
#include "odb_sparse_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ODBL_RESERVOIR "odebench.Reservoir"
#define ODBL_SPARSE    "odebench.SparseMatrix"
#define ODBL_GPUSPARSE "odebench.GpuSparseMatrix"

typedef struct { odb_reservoir *g; } odbL_res;
/* A SparseMatrix: one pointer, NULL once closed (and while the matrix is
** being made: its __gc frees whatever is stored there, so a Lua error
** between the allocation and the return leaks nothing). Only this file
** knows the layout; others go through odbL_sparse_box_new and
** odbL_sparse_check. */
typedef struct { odb_sparse *A; } odbL_mat;
/* floor_r, floor_w: the fewest bytes of one SpMV (odb_sparse_min_bytes),
   from the host matrix it was made of. */
typedef struct { const odb_sparse_ops *ops; odb_sparse_gpu *g; double floor_r, floor_w; } odbL_gmat;

/* The open grid at idx (argument error otherwise). */
static odb_reservoir *res_check(lua_State *L, int idx)
{
  odbL_res *r = luaL_checkudata(L, idx, ODBL_RESERVOIR);
  if (!r->g) luaL_argerror(L, idx, "the reservoir is closed");
  return r->g;
}

/* See odb_lua.h: the open matrix at idx (argument error otherwise). */
odb_sparse *odbL_sparse_check(lua_State *L, int idx)
{
  odbL_mat *m = luaL_checkudata(L, idx, ODBL_SPARSE);
  if (!m->A) luaL_argerror(L, idx, "the matrix is closed");
  return m->A;
}

/* See odb_lua.h. */
odb_sparse **odbL_sparse_box_new(lua_State *L)
{
  odbL_sparse_register(L);
  odbL_mat *m = lua_newuserdatauv(L, sizeof *m, 0);
  m->A = NULL;
  luaL_setmetatable(L, ODBL_SPARSE);
  return &m->A;
}

/*
** The Vector or table of n numbers at idx (argument arg in messages, named
** what) copied into a new Vector pushed on the stack (Lua frees it, also
** after an error); returns its values. A wrong count, an entry that is not
** a number, or (nan_ok 0: a right-hand side, a start) NaN raises naming
** the 1-based entry.
*/
static double *vec_arg(lua_State *L, int idx, int arg, long n,
                       const char *what, int nan_ok)
{
  odbL_vector *x = NULL;
  lua_Integer len = 0, bad;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TTABLE) len = luaL_len(L, idx);
  else if ((x = luaL_testudata(L, idx, ODBL_VECTOR)) && !x->closed) len = x->n;
  else luaL_argerror(L, arg, lua_pushfstring(L, "%s: Vector or table expected, got %s", what, luaL_typename(L, idx)));
  if (len != n)
    luaL_argerror(L, arg, lua_pushfstring(L, "%s has %I entries, the matrix order is %I", what, len, (lua_Integer)n));
  double *v = odbL_vector_new(L, n)->v;
  if (x) memcpy(v, x->v, (size_t)n * sizeof *v);
  else if ((bad = odbL_read_numbers(L, idx, v, n)) != 0)
    luaL_argerror(L, arg, lua_pushfstring(L, "%s: entry %I: number expected, got %s", what, bad, luaL_typename(L, -1)));
  for (long i = 0; i < n && !nan_ok; i++)
    if (isnan(v[i])) luaL_argerror(L, arg, lua_pushfstring(L, "%s: entry %I is NaN", what, (lua_Integer)i + 1));
  return v;
}

/* ob.reservoir{J=, H=, I=, k=, wells=, pattern="b"|"h", seed=} */
int odbL_reservoir(lua_State *L)
{
  static const char *const keys[] = {"J", "H", "I", "k", "wells", "pattern", "seed", NULL};
  odbL_sparse_register(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  /* absent sizes are 0: the engine names them (must be positive) */
  long long J = odbL_opt_int_range(L, 1, 1, "J", "J", 1, 1 << 30, 0);
  long long H = odbL_opt_int_range(L, 1, 1, "H", "H", 1, 1 << 30, 0);
  long long I = odbL_opt_int_range(L, 1, 1, "I", "I", 1, 1 << 30, 0);
  long long k = odbL_opt_int_range(L, 1, 1, "k", "k", 1, 16, 1);
  long long nw = odbL_opt_int_range(L, 1, 1, "wells", "wells", 0, 1 << 30, 0);
  long long seed = 1;
  odbL_opt_integer(L, 1, "seed", &seed);
  const char *pat = odbL_opt_string(L, 1, "pattern", "b");
  odb_gh_pattern p;
  if (!strcmp(pat, "b") || !strcmp(pat, "GH-b")) p = ODB_GH_BLOCK;
  else if (!strcmp(pat, "h") || !strcmp(pat, "GH-h")) p = ODB_GH_HALF;
  else return luaL_error(L, "ob.reservoir: pattern must be \"b\" or \"h\", got \"%s\"", pat);
  odbL_res *r = lua_newuserdatauv(L, sizeof *r, 0);
  r->g = NULL;
  luaL_setmetatable(L, ODBL_RESERVOIR);
  if (odb_reservoir_create(&r->g, (int)J, (int)H, (int)I, (int)k, (int)nw, p, (uint64_t)seed) != ODB_OK)
    return luaL_error(L, "ob.reservoir: %s", odb_last_error());
  return 1;
}

static int gmat_push(lua_State *L, const odb_sparse_ops *ops, odb_sparse *A,
                     int free_host);

/* The sparse table of backend name (the one place it is looked up);
** raises who: the registry's error. */
static const odb_sparse_ops *sparse_ops(lua_State *L, const char *name, const char *who)
{
  const odb_sparse_ops *ops;
  if (odb_sparse_impl_find(name, &ops) != ODB_OK) luaL_error(L, "%s%s", who, odb_last_error());
  return ops;
}

/* Options table at idx (or none): max_bytes (host limit), backend (its
** table into *ops). */
static size_t mat_opts(lua_State *L, int idx, const odb_sparse_ops **ops)
{
  static const char *const keys[] = {"max_bytes", "backend", NULL};
  long long mb = 0;
  *ops = &odb_sparse_cpu_ops;
  if (lua_isnoneornil(L, idx)) return 0;
  luaL_checktype(L, idx, LUA_TTABLE);
  odbL_check_keys(L, idx, keys);
  if (odbL_opt_integer(L, idx, "max_bytes", &mb) && mb <= 0)
    luaL_error(L, "max_bytes must be positive, got %I", (lua_Integer)mb);
  const char *be = odbL_opt_string(L, idx, "backend", "cpu");
  if (strcmp(be, "cpu") && strcmp(be, "cuda"))
    luaL_error(L, "backend must be \"cpu\" or \"cuda\", got \"%s\"", be);
  *ops = sparse_ops(L, be, "");
  return (size_t)mb;
}

/* grid:matrix(format [, {max_bytes=, backend="cpu"|"cuda"}]) -> SparseMatrix,
** or with backend "cuda" a GpuSparseMatrix (the host copy is dropped). */
static int res_matrix(lua_State *L)
{
  odb_reservoir *g = res_check(L, 1);
  odb_sparse_format f;
  const odb_sparse_ops *ops;
  if (odb_sparse_format_parse(luaL_optstring(L, 2, "csr"), &f) != ODB_OK)
    return luaL_error(L, "%s", odb_last_error());
  size_t mb = mat_opts(L, 3, &ops);
  if (ops->upload) {   /* a backend with device matrices */
    odb_sparse *A = NULL;
    if (odb_reservoir_matrix(g, f, mb, &A) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
    return gmat_push(L, ops, A, 1);
  }
  odb_sparse **box = odbL_sparse_box_new(L);
  if (odb_reservoir_matrix(g, f, mb, box) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  odbL_gc_external(L, (double)odb_sparse_bytes(*box));   /* for the next one */
  return 1;
}

/* grid:rhs(A) -> b, xs (Vectors): b = A xs with the grid's known solution. */
static int res_rhs(lua_State *L)
{
  odb_reservoir *g = res_check(L, 1);
  odb_sparse *A = odbL_sparse_check(L, 2);
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
  odb_sparse *A = odbL_sparse_check(L, 1);
  double *x = vec_arg(L, 2, 2, A->n, "x", 1);
  odbL_vector *y = odbL_vector_new(L, A->n);
  odb_sparse_spmv(A, x, y->v);
  return 1;
}

/* A:info() -> {format, n, nnz, bytes} */
static int mat_info(lua_State *L)
{
  odb_sparse *A = odbL_sparse_check(L, 1);
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

static int reps_arg(lua_State *L, int idx, int def);

/* A:convert(format [, {bs=, ell_width=, max_bytes=}]) -> SparseMatrix
** (A must be CSR; bs defaults to 1, ell_width to automatic). A format that
** does not apply is refused with the reason (odb_sparse_convert_to: DIA
** past its fill limit, Bdia, which only the grid builds: grid:matrix or
** ob.matrix{grid =}), so a matrix from a file never makes a DIA of n
** values for each of thousands of diagonals. */
static int mat_convert(lua_State *L)
{
  static const char *const keys[] = {"bs", "ell_width", "max_bytes", NULL};
  odb_sparse *A = odbL_sparse_check(L, 1);
  odb_sparse_format f;
  long long bs = 1, ew = 0, mb = 0;
  if (odb_sparse_format_parse(luaL_checkstring(L, 2), &f) != ODB_OK)
    return luaL_error(L, "%s", odb_last_error());
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    odbL_check_keys(L, 3, keys);
    odbL_opt_integer(L, 3, "bs", &bs); odbL_opt_integer(L, 3, "ell_width", &ew);
    odbL_opt_integer(L, 3, "max_bytes", &mb);
  }
  if (bs < 1 || bs > 64) return luaL_error(L, "bs must be in 1..64, got %I", (lua_Integer)bs);
  if (ew < 0 || ew > 1 << 20) return luaL_error(L, "ell_width must be in 0..2^20, got %I", (lua_Integer)ew);
  if (mb < 0) return luaL_error(L, "max_bytes must be positive, got %I", (lua_Integer)mb);
  odb_sparse_conv c = {(int)bs, (int)ew, (size_t)mb, NULL};
  odb_sparse **box = odbL_sparse_box_new(L);
  if (odb_sparse_convert_to(A, f, &c, box) != ODB_OK)
    return luaL_error(L, "%s", odb_last_error());
  odbL_gc_external(L, (double)odb_sparse_bytes(*box));   /* for the next one */
  return 1;
}

/* One CPU SpMV of A:bench, timed by odb_measure_run. */
typedef struct mat_run {
  const odb_sparse *A;
  odb_team *team;        /* NULL: one thread */
  const double *x;
  double *y;
} mat_run;

static odb_status mat_sample(void *ud, double *sec)
{
  mat_run *r = ud;
  double t0 = odb_clock_now();
  ODB_TRY(odb_sparse_spmv_team(r->A, r->team, r->x, r->y));
  *sec = odb_clock_now() - t0;
  return ODB_OK;
}

/*
** A:bench{threads = 1, reps =, measure = {...}} -> seconds per SpMV (the
** median), and the row {kind = "spmv", impl = "cpu", format, backend =
** "cpu", threads, n, nnz, bytes, seconds, gbs, median, q1, q3, spread,
** reps}, also a results row: the CPU's SpMV in A's own format on x = 1,
** timed by odb_measure_run (reps: exactly that many runs; else as measure
** and --measure say). threads: the members of a thread team that split the
** rows (odb_sparse_spmv_team; 0: one per online core). bytes are A's
** arrays (odb_sparse_bytes), as D:bench's are its device copy's.
*/
static int mat_bench(lua_State *L)
{
  static const char *const keys[] = {"threads", "reps", "measure", NULL};
  odb_sparse *A = odbL_sparse_check(L, 1);
  odb_measure_opts mo;
  odb_measurement m;
  int hw = 1;
  odbL_check_not_in_callback(L, "A:bench");
  if (lua_isnoneornil(L, 2)) { lua_settop(L, 1); lua_newtable(L); }
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  int max = odb_team_max_threads(&hw);
  int threads = (int)odbL_opt_int_range(L, 2, 2, "threads", "threads", 0, max, 1);
  if (threads == 0) threads = hw > 0 ? hw : 1;
  memset(&mo, 0, sizeof mo);
  mo.min_reps = mo.max_reps = reps_arg(L, 2, 0);   /* 0: not given */
  odbL_measure_opt_field(L, 2, 2, &mo);
  odbL_measure_final(L, &mo);
  odbL_state *S = odbL_state_get(L);
  odbL_vector *x = odbL_vector_new(L, A->n), *y = odbL_vector_new(L, A->n);
  for (long i = 0; i < A->n; i++) x->v[i] = 1.0;
  mat_run r = {A, NULL, x->v, y->v};
  if (threads > 1 && odb_team_create(S->ctx, NULL, threads, ODB_BARRIER_CENTRAL, &r.team) != ODB_OK)
    return luaL_error(L, "A:bench: %s", odb_last_error());
  odb_status st = odb_measure_run(mat_sample, &r, &mo, S->ctx, &m, NULL);
  odb_team_destroy(r.team);
  if (st == ODB_INTERRUPTED) { lua_pushliteral(L, "interrupted"); return lua_error(L); }
  if (st != ODB_OK) return luaL_error(L, "A:bench: %s", odb_last_error());
  size_t bytes = odb_sparse_bytes(A);
  lua_pushnumber(L, m.median);
  lua_createtable(L, 0, 15);
  lua_pushstring(L, "cpu"); lua_setfield(L, -2, "impl");
  lua_pushstring(L, odb_sparse_format_name(A->fmt)); lua_setfield(L, -2, "format");
  lua_pushstring(L, "cpu"); lua_setfield(L, -2, "backend");
  lua_pushinteger(L, threads); lua_setfield(L, -2, "threads");
  lua_pushinteger(L, A->n); lua_setfield(L, -2, "n");
  lua_pushinteger(L, A->nnz); lua_setfield(L, -2, "nnz");
  lua_pushnumber(L, (double)bytes); lua_setfield(L, -2, "bytes");
  lua_pushnumber(L, m.median); lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, (double)bytes / m.median * 1e-9); lua_setfield(L, -2, "gbs");
  odbL_measure_fields(L, -1, NULL, &m);
  double fr, fw;
  odb_sparse_min_bytes(A, &fr, &fw);
  odbL_floor_fields(L, -1, NULL, "cpu", threads, fr, fw, fr + fw, m.median);
  odbL_measure_row(L, -1, "spmv");
  return 2;
}

/* {====== GPU matrices */

/* Uploads A and pushes the GpuSparseMatrix; frees A when free_host (also
** on failure). */
static int gmat_push(lua_State *L, const odb_sparse_ops *ops, odb_sparse *A,
                     int free_host)
{
  odbL_gmat *d = lua_newuserdatauv(L, sizeof *d, 0);
  d->ops = ops;
  d->g = NULL;
  luaL_setmetatable(L, ODBL_GPUSPARSE);
  odb_status st = ops->upload(A, &d->g);
  double bytes = (double)odb_sparse_bytes(A);
  odb_sparse_min_bytes(A, &d->floor_r, &d->floor_w);
  if (free_host) odb_sparse_free(A);
  if (st != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  odbL_gc_external(L, bytes);   /* device memory, for the next one */
  return 1;
}

/* A:gpu() -> GpuSparseMatrix (A stays usable on the CPU). */
static int mat_gpu(lua_State *L)
{
  odb_sparse *A = odbL_sparse_check(L, 1);
  return gmat_push(L, sparse_ops(L, "cuda", ""), A, 0);
}

/* The open GPU matrix at idx (argument error otherwise). */
static odbL_gmat *gmat_check(lua_State *L, int idx)
{
  odbL_gmat *d = luaL_checkudata(L, idx, ODBL_GPUSPARSE);
  if (!d->g) luaL_argerror(L, idx, "the GPU matrix is closed");
  return d;
}

/* "ours" | "cusparse" at idx (default ours). */
static odb_spmv_impl impl_arg(lua_State *L, const char *name)
{
  if (!strcmp(name, "ours")) return ODB_SPMV_OURS;
  if (!strcmp(name, "cusparse")) return ODB_SPMV_CUSPARSE;
  luaL_error(L, "impl must be \"ours\" or \"cusparse\", got \"%s\"", name);
  return ODB_SPMV_OURS;
}

/* D:spmv(x [, "ours"|"cusparse"]) -> Vector y = A x computed on the GPU. */
static int gmat_spmv(lua_State *L)
{
  odbL_gmat *d = gmat_check(L, 1);
  odb_spmv_impl impl = impl_arg(L, luaL_optstring(L, 3, "ours"));
  odb_sparse_format fmt;
  long n, nnz;
  size_t bytes;
  d->ops->describe(d->g, &fmt, &n, &nnz, &bytes);
  double *x = vec_arg(L, 2, 2, n, "x", 1);
  odbL_vector *y = odbL_vector_new(L, n);
  odb_status st = d->ops->spmv_host(d->g, impl, x, y->v, n);
  if (st != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  return 1;
}

/* Reps from the options table at idx (default def, 1..200; def 0: not
   given, 0). */
static int reps_arg(lua_State *L, int idx, int def)
{
  long long r = def;
  if (!odbL_opt_integer(L, idx, "reps", &r) && def == 0) return 0;
  if (r < 1 || r > 200) luaL_error(L, "reps must be in 1..200, got %I", (lua_Integer)r);
  return (int)r;
}

/*
** D:bench{impl="ours"|"cusparse", reps=, measure={...}} -> seconds per
** SpMV (the median), and the row {kind = "spmv", impl, format, n, nnz,
** bytes, seconds, gbs, median, q1, q3, spread, reps}, also a results row.
** The GPU keeps its event timing (batches of back-to-back SpMVs between
** device events, a host clock around one SpMV would time its launch): it
** runs `reps` SpMVs if given, else max_reps of the measure options
** (odb_lua_measure.c); the batch means are the samples.
*/
static int gmat_bench(lua_State *L)
{
  static const char *const keys[] = {"impl", "reps", "measure", NULL};
  odbL_gmat *d = gmat_check(L, 1);
  odb_measure_opts mo;
  odb_measurement m;
  odb_sparse_format fmt;
  long n, nnz;
  size_t bytes;
  odbL_check_not_in_callback(L, "D:bench");
  if (lua_isnoneornil(L, 2)) { lua_settop(L, 1); lua_newtable(L); }
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  odb_spmv_impl impl = impl_arg(L, odbL_opt_string(L, 2, "impl", "ours"));
  memset(&mo, 0, sizeof mo);
  mo.min_reps = mo.max_reps = reps_arg(L, 2, 0);   /* 0: not given */
  odbL_measure_opt_field(L, 2, 2, &mo);
  odbL_measure_final(L, &mo);
  if (d->ops->bench(d->g, impl, mo.max_reps, &m) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  d->ops->describe(d->g, &fmt, &n, &nnz, &bytes);
  lua_pushnumber(L, m.median);
  lua_createtable(L, 0, 14);
  lua_pushstring(L, impl == ODB_SPMV_CUSPARSE ? "cusparse" : "ours"); lua_setfield(L, -2, "impl");
  lua_pushstring(L, odb_sparse_format_name(fmt));
  lua_setfield(L, -2, "format");
  lua_pushstring(L, d->ops->backend); lua_setfield(L, -2, "backend");
  lua_pushinteger(L, n); lua_setfield(L, -2, "n");
  lua_pushinteger(L, nnz); lua_setfield(L, -2, "nnz");
  lua_pushnumber(L, (double)bytes); lua_setfield(L, -2, "bytes");
  lua_pushnumber(L, m.median); lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, (double)bytes / m.median * 1e-9); lua_setfield(L, -2, "gbs");
  odbL_measure_fields(L, -1, NULL, &m);
  odbL_floor_fields(L, -1, NULL, d->ops->backend, 0, d->floor_r, d->floor_w,
                    d->floor_r + d->floor_w, m.median);
  odbL_measure_row(L, -1, "spmv");
  return 2;
}

/* D:tune{reps=5} -> best seconds per SpMV, configuration string. */
static int gmat_tune(lua_State *L)
{
  static const char *const keys[] = {"reps", NULL};
  odbL_gmat *d = gmat_check(L, 1);
  if (lua_isnoneornil(L, 2)) { lua_settop(L, 1); lua_newtable(L); }
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  int reps = reps_arg(L, 2, 5);
  double t = 0;
  char buf[96];
  if (d->ops->tune(d->g, reps, &t) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  odb_sparse_gpu_opts o = d->ops->get_opts(d->g);
  lua_pushnumber(L, t);
  lua_pushstring(L, d->ops->opts_str(&o, buf, sizeof buf));
  return 2;
}

/* D:set{block=, grain=, shared_x=, pair=, stream=} (missing fields keep
** their value; pair and stream are 0 or 1, Bdia only). */
static int gmat_set(lua_State *L)
{
  static const char *const keys[] = {"block", "grain", "shared_x", "pair", "stream", NULL};
  odbL_gmat *d = gmat_check(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  odb_sparse_gpu_opts o = d->ops->get_opts(d->g);
  /* the engine checks what each format allows within these */
  o.block = (int)odbL_opt_int_range(L, 2, 2, "block", "block", 1, 1 << 20, o.block);
  o.grain = (int)odbL_opt_int_range(L, 2, 2, "grain", "grain", 1, 1 << 20, o.grain);
  o.shared_x = (int)odbL_opt_int_range(L, 2, 2, "shared_x", "shared_x", 0, 1, o.shared_x);
  o.pair = (int)odbL_opt_int_range(L, 2, 2, "pair", "pair", 0, 1, o.pair);
  o.stream = (int)odbL_opt_int_range(L, 2, 2, "stream", "stream", 0, 1, o.stream);
  if (d->ops->set_opts(d->g, &o) != ODB_OK) return luaL_error(L, "%s", odb_last_error());
  return 0;
}

/* D:info() -> {format, n, nnz, bytes (device), config, floor_bytes,
** cusparse}: floor_bytes = 8 (nnz + 2 n), the values, x and y once;
** cusparse the routine of the baseline ("" for formats without one). */
static int gmat_info(lua_State *L)
{
  odbL_gmat *d = gmat_check(L, 1);
  char buf[96];
  odb_sparse_format fmt;
  long n, nnz;
  size_t bytes;
  d->ops->describe(d->g, &fmt, &n, &nnz, &bytes);
  odb_sparse_gpu_opts o = d->ops->get_opts(d->g);
  lua_createtable(L, 0, 6);
  lua_pushstring(L, odb_sparse_format_name(fmt)); lua_setfield(L, -2, "format");
  lua_pushinteger(L, n); lua_setfield(L, -2, "n");
  lua_pushinteger(L, nnz); lua_setfield(L, -2, "nnz");
  lua_pushinteger(L, (lua_Integer)bytes); lua_setfield(L, -2, "bytes");
  lua_pushstring(L, d->ops->opts_str(&o, buf, sizeof buf)); lua_setfield(L, -2, "config");
  lua_pushinteger(L, 8 * ((lua_Integer)nnz + 2 * (lua_Integer)n));
  lua_setfield(L, -2, "floor_bytes");
  lua_pushstring(L, d->ops->baseline_name(d->g)); lua_setfield(L, -2, "cusparse");
  return 1;
}

/* __gc/__close/close of a GPU matrix; closing twice is fine. */
static int gmat_close(lua_State *L)
{
  odbL_gmat *d = luaL_checkudata(L, 1, ODBL_GPUSPARSE);
  if (d->g) d->ops->free(d->g);
  d->g = NULL;
  return 0;
}

/* }====== */

/* {====== ob.krylov (the impls of odb_sparse_impl.h's tables) */

/* Options of ob.krylov from the table at 1 into o (raises on bad input). */
static void krylov_opts(lua_State *L, odb_krylov_gpu_opts *o)
{
  long long v;
  double d;
  memset(o, 0, sizeof *o);
  o->kry.tol = 1e-10; o->kry.maxit = 1000; o->kry.stag_window = 100;
  if (odb_krylov_impl_parse(odbL_opt_string(L, 1, "impl", "cpu"), &o->impl) != ODB_OK ||
      odb_krylov_sync_parse(odbL_opt_string(L, 1, "sync", "lock"), &o->sync) != ODB_OK)
    luaL_error(L, "ob.krylov: %s", odb_last_error());
  odbL_opt_number(L, 1, "tol", &o->kry.tol);
  o->kry.maxit = (int)odbL_opt_int_range(L, 1, 1, "maxit", "maxit", 1, (1 << 30) - 1, o->kry.maxit);
  o->kry.stag_window = (int)odbL_opt_int_range(L, 1, 1, "stagnation", "stagnation", 1, (1 << 30) - 1,
                                               o->kry.stag_window);
  if (!(o->kry.tol > 0))
    luaL_error(L, "ob.krylov: tol must be positive, got %f", (lua_Number)o->kry.tol);
  if (odbL_opt_integer(L, 1, "delay", &v)) {
    if (v < 0 || v > 1000000) luaL_error(L, "ob.krylov: delay must be in 0..1000000 ns, got %I", (lua_Integer)v);
    o->delay_ns = (int)v;
  }
  if (odbL_opt_integer(L, 1, "grid", &v)) {
    if (v < 1 || v > 1 << 20) luaL_error(L, "ob.krylov: grid must be in 1..1048576 blocks, got %I", (lua_Integer)v);
    o->grid = (int)v;
  }
  if (odbL_opt_integer(L, 1, "block", &v)) {
    if (v < 64 || v > 1024 || v % 32) luaL_error(L, "ob.krylov: block must be a multiple of 32 in 64..1024, got %I", (lua_Integer)v);
    o->block = (int)v;
  }
  if (odbL_opt_integer(L, 1, "grain", &v)) {
    if (v < 1 || v > 16) luaL_error(L, "ob.krylov: grain must be 1, 2, 4 or k (rows per thread), got %I", (lua_Integer)v);
    o->grain = (int)v;
  }
  {
    static const char *const tri[] = {"stream", "call", "tune", NULL};
    int *dst[] = {&o->stream, &o->call, &o->tune};
    for (int i = 0; tri[i]; ++i)
      if (odbL_opt_integer(L, 1, tri[i], &v)) {
        if (v < -1 || v > 1) luaL_error(L, "ob.krylov: %s must be -1 (off), 0 (chosen) or 1 (on), got %I", tri[i], (lua_Integer)v);
        *dst[i] = (int)v;
      }
  }
  const char *rv = odbL_opt_string(L, 1, "rv", "auto");
  if (!strcmp(rv, "auto")) o->rv = ODB_KRY_RV_AUTO;
  else if (!strcmp(rv, "shared")) o->rv = ODB_KRY_RV_SHARED;
  else if (!strcmp(rv, "global")) o->rv = ODB_KRY_RV_GLOBAL;
  else luaL_error(L, "ob.krylov: rv must be \"auto\", \"shared\" or \"global\", got \"%s\"", rv);
  if (odbL_opt_number(L, 1, "watchdog", &d)) {
    if (!(d > 0 && d <= 3600)) luaL_error(L, "ob.krylov: watchdog must be in (0, 3600] seconds, got %f", d);
    o->watchdog_s = d;
  }
}

/* Sets t[k] = v (number) for the table on top. */
static void set_num(lua_State *L, const char *k, double v) { lua_pushnumber(L, v); lua_setfield(L, -2, k); }
static void set_int(lua_State *L, const char *k, long long v) { lua_pushinteger(L, v); lua_setfield(L, -2, k); }

/* The result table of a finished solve (x at xi) on top of the stack. */
static void krylov_push(lua_State *L, int xi, odb_status st, const odb_krylov_result *res,
                        const odb_krylov_gpu_opts *o, const odb_krylov_gpu_info *in)
{
  lua_createtable(L, 0, 24);
  lua_pushvalue(L, xi); lua_setfield(L, -2, "x");
  lua_pushboolean(L, st == ODB_OK); lua_setfield(L, -2, "converged");
  lua_pushstring(L, odb_krylov_outcome_name(res->outcome)); lua_setfield(L, -2, "outcome");
  set_int(L, "iters", res->iters);
  set_int(L, "breakdown_iter", res->breakdown_iter);
  set_num(L, "relres", res->relres);
  set_num(L, "relres_true", res->relres_true);
  lua_createtable(L, res->nhist, 0);
  for (int i = 0; i < res->nhist; i++) { lua_pushnumber(L, res->history[i]); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "history");
  lua_pushstring(L, odb_krylov_impl_name(o->impl)); lua_setfield(L, -2, "impl");
  set_num(L, "seconds", in->seconds);
  set_num(L, "seconds_per_iter", in->seconds_per_iter);
  set_num(L, "bytes_per_iter", in->bytes_per_iter);
  if (o->impl == ODB_KRY_IMPL_PERSISTENT) {
    lua_pushstring(L, odb_krylov_sync_name(o->sync)); lua_setfield(L, -2, "sync");
    set_int(L, "delay", o->delay_ns);
    set_int(L, "grid", in->grid);
    set_int(L, "block", in->block);
    set_int(L, "max_grid", in->max_grid);
    set_int(L, "grain", in->grain);
    set_int(L, "stream", in->stream);
    set_int(L, "call", in->call);
    lua_pushboolean(L, in->tuned); lua_setfield(L, -2, "tuned");
    lua_pushboolean(L, in->rv_shared); lua_setfield(L, -2, "rv_shared");
    set_int(L, "shared_bytes", (long long)in->shared_bytes);
    set_int(L, "barriers_per_iter", in->barriers_per_iter);
  }
  if (st != ODB_OK) { lua_pushstring(L, odb_last_error()); lua_setfield(L, -2, "message"); }
}

/* The repeated solves of ob.krylov: each starts from x0 (zeros when none
   was given) and keeps the last run's result. */
typedef struct krylov_runs {
  const odb_sparse_ops *ops;
  const odb_sparse *A;
  odb_krylov_method km;
  const double *b, *x0;      /* x0 NULL: zeros */
  double *x;
  const odb_krylov_gpu_opts *o;
  odb_krylov_result res;
  odb_krylov_gpu_info info;
  int have_res;
  odb_status st;             /* the last solve's: ODB_OK or ODB_ERR_MAX_STEPS */
} krylov_runs;

/* One sample of odb_measure_run: a whole solve, seconds as the impl
   measures them (device events on the GPU). Not converging within maxit
   is a result, not a failure. */
static odb_status krylov_run(void *ud, double *sec)
{
  krylov_runs *r = ud;
  size_t bytes = (size_t)r->A->n * sizeof(double);
  if (r->have_res) odb_krylov_result_free(&r->res);
  r->have_res = 0;
  if (r->x0) memcpy(r->x, r->x0, bytes);
  else memset(r->x, 0, bytes);
  r->st = r->ops->krylov_solve(r->A, r->km, r->b, r->x, r->o, &r->res, &r->info);
  r->have_res = 1;
  if (r->st != ODB_OK && r->st != ODB_ERR_MAX_STEPS) return r->st;
  *sec = r->info.seconds;
  return ODB_OK;
}

/* ob.krylov{A=, b=, method="bicgstab"|"qmr",
**   impl="cpu"|"cusparse"|"fused"|"persistent", sync="lock"|"lockfree"|"wss",
**   delay=ns, grid=, block=, grain=1|k, rv="auto"|"shared"|"global", watchdog=s,
**   tol=, maxit=, stagnation=, x0=, spmv=false, measure={...}}
** -> result, x. The solve repeats from x0 as measure says (odb_lua_measure.c;
** a first solve that alone takes max_seconds is the only one), the result
** is the last solve's with seconds, seconds_per_iter and the row's median,
** q1, q3, spread, reps from the repeated solves; a results row (kind
** "krylov") records the scalar fields. result = {x=Vector, converged, outcome, iters,
**    breakdown_iter, relres, relres_true, history={...}, impl, seconds,
**    seconds_per_iter, bytes_per_iter, message; persistent: sync, delay,
**    grid, block, max_grid, grain, rv_shared, shared_bytes, barriers_per_iter;
**    spmv=true: spmv_seconds (one SpMV as the impl does it), bandwidth
**    (device copy, bytes/s)}. Breakdown, stagnation and maxit are
**    reported in the result, not raised; bad options, a format the impl
**    cannot take, no GPU (or no CUDA in the build) and GPU failures raise. */
int odbL_krylov(lua_State *L)
{
  static const char *const keys[] = {"A", "b", "method", "impl", "sync", "delay", "grid", "block", "grain", "rv",
                                     "stream", "call", "tune", "watchdog", "tol", "maxit", "x0", "stagnation", "spmv",
                                     "measure", NULL};
  odbL_check_not_in_callback(L, "ob.krylov");
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  lua_getfield(L, 1, "A");
  odb_sparse *A = odbL_sparse_check(L, -1);
  lua_pop(L, 1);
  const char *meth = odbL_opt_string(L, 1, "method", "bicgstab");
  odb_krylov_method km;
  if (!strcmp(meth, "bicgstab")) km = ODB_KRYLOV_BICGSTAB;
  else if (!strcmp(meth, "qmr")) km = ODB_KRYLOV_QMR;
  else return luaL_error(L, "ob.krylov: method must be \"bicgstab\" or \"qmr\", got \"%s\"", meth);
  odb_krylov_gpu_opts o;
  krylov_opts(L, &o);
  lua_getfield(L, 1, "spmv");
  int want_spmv = lua_toboolean(L, -1);
  lua_pop(L, 1);
  odb_measure_opts mo;
  memset(&mo, 0, sizeof mo);
  mo.warmup_counts = 1;
  odbL_measure_opt_field(L, 1, 1, &mo);
  odbL_measure_final(L, &mo);
  lua_getfield(L, 1, "b");
  double *b = vec_arg(L, -1, 1, A->n, "b", 0);   /* its copy stays on the stack */
  double *x0 = NULL;
  lua_getfield(L, 1, "x0");
  if (!lua_isnil(L, -1))
    x0 = vec_arg(L, -1, 1, A->n, "x0", 0);       /* its copy stays too */
  odbL_vector *x = odbL_vector_new(L, A->n);
  int xi = lua_gettop(L);
  krylov_runs r;
  odb_measurement m;
  memset(&r, 0, sizeof r);
  const char *be = o.impl == ODB_KRY_IMPL_CPU ? "cpu" : "cuda";
  if (odb_sparse_impl_find(be, &r.ops) != ODB_OK)
    return luaL_error(L, "ob.krylov: impl %s: %s", odb_krylov_impl_name(o.impl), odb_last_error());
  const odb_sparse_ops *ops = r.ops;
  r.A = A;
  r.km = km;
  r.b = b;
  r.x0 = x0;
  r.x = x->v;
  r.o = &o;
  odbL_state *S = odbL_state_get(L);
  odb_status st = odb_measure_run(krylov_run, &r, &mo, S->ctx, &m, NULL);
  if (st != ODB_OK || !r.have_res) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", odb_last_error());
    if (r.have_res) odb_krylov_result_free(&r.res);
    if (st == ODB_INTERRUPTED) { lua_pushliteral(L, "interrupted"); return lua_error(L); }
    return luaL_error(L, "ob.krylov: %s", msg);
  }
  r.info.seconds = m.median;
  r.info.seconds_per_iter = m.median / (r.res.iters > 0 ? r.res.iters : 1);
  krylov_push(L, xi, r.st, &r.res, &o, &r.info);
  odb_krylov_result_free(&r.res);
  odbL_measure_fields(L, -1, NULL, &m);
  if (want_spmv && ops->krylov_spmv_seconds) {
    double sec = 0, bw = 0;
    if (ops->krylov_spmv_seconds(A, o.impl, 20, &sec, &bw) != ODB_OK)
      return luaL_error(L, "ob.krylov: %s", odb_last_error());
    set_num(L, "spmv_seconds", sec);
    set_num(L, "bandwidth", bw);
  }
  lua_pushstring(L, km == ODB_KRYLOV_QMR ? "qmr" : "bicgstab");
  lua_setfield(L, -2, "method");
  set_int(L, "n", A->n);
  {   /* the floor of the iterations (the setup's residual not counted) */
    double kr, kw, it = r.res.iters > 0 ? (double)r.res.iters : 1.0;
    odb_krylov_min_bytes(A, km, &kr, &kw);
    set_num(L, "bytes_per_iter", kr + kw);
    lua_pushstring(L, be);
    lua_setfield(L, -2, "backend");
    odbL_floor_fields(L, -1, NULL, be, 1, kr * it, kw * it,
                      odb_krylov_touched_bytes(A, km), m.median);
  }
  odbL_measure_row(L, -1, "krylov");
  lua_pushvalue(L, xi);
  return 2;
}

/* }====== */

/* Registers the two metatables (idempotent). */
void odbL_sparse_register(lua_State *L)
{
  static const luaL_Reg res_methods[] = {{"matrix", res_matrix}, {"rhs", res_rhs}, {"info", res_info},
                                         {"close", res_close}, {NULL, NULL}};
  static const luaL_Reg mat_methods[] = {{"spmv", mat_spmv}, {"info", mat_info},
                                         {"convert", mat_convert}, {"gpu", mat_gpu},
                                         {"bench", mat_bench}, {"write", odbL_sparse_write},
                                         {"close", mat_close}, {NULL, NULL}};
  static const luaL_Reg gmat_methods[] = {{"spmv", gmat_spmv}, {"bench", gmat_bench},
                                          {"tune", gmat_tune}, {"set", gmat_set},
                                          {"info", gmat_info}, {"close", gmat_close},
                                          {NULL, NULL}};
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
  if (luaL_newmetatable(L, ODBL_GPUSPARSE)) {
    luaL_newlib(L, gmat_methods); lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gmat_close); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, gmat_close); lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}
