/* odb_lua_dsparse.c - ob.matrix{..., dist = "rows" | "planes"}: a
** DistMatrix, a sparse matrix split over the ranks of the run
** (dist/sparse/odb_dist_sparse.h, docs/mpi.md), with D:spmv, D:bicgstab,
** D:qmr, D:pbicgstab, D:bench, D:info and D:close.
**
** Every rank runs the same scenario: each builds the matrix (the GH grid
** of `grid = {...}` or the Matrix Market `file`), keeps its rows and
** frees the rest. Vectors cross the binding whole (n entries, the same on
** every rank): D:spmv and the solvers scatter them to the rank's rows and
** gather the result to every rank. Every method but D:info and D:close is
** a collective: call it on every rank in the same order. On one rank (or
** in a build without MPI) a DistMatrix is the whole matrix in any format
** and gives the one-process results.
**
** petsc = true (builds with the PETSc peer): the same rows on the same
** ranks also as PETSc's matrix, for D:petsc, PETSc's BiCGStab or QMRCGStab
** on it (dist/sparse/odb_dist_petsc.h).
**
** backend = "cuda": every rank computes on the GPU the context's "cuda"
** backend drives (the local rank's, odb_kernels_register_on): its parts
** are device copies, SpMV and solvers run there (odb_dist_gpu.h). Refused,
** naming the argument and the reason, on a rank without that backend. */
#include "odb_lua.h"
#include "odb_clock.h"
#include "odb_dist.h"
#include "odb_dist_gpu.h"
#include "odb_dist_petsc.h"
#include "odb_dist_sparse.h"
#include "odb_measure.h"
#include "odb_sparse_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ODBL_DSPARSE "odebench.DistMatrix"
#define DSPARSE_TAG 7201             /* A's halo messages; A^T's the next */

typedef struct { odb_dsparse *A, *At; int gpu; odb_dpetsc *petsc; } odbL_dmat;
static void dmat_register(lua_State *L);

static int dmat_gc(lua_State *L)
{
  odbL_dmat *m = luaL_checkudata(L, 1, ODBL_DSPARSE);
  odb_dsparse_free(m->A); odb_dsparse_free(m->At); odb_dpetsc_free(m->petsc);
  m->A = m->At = NULL;
  m->petsc = NULL;
  return 0;
}

static odbL_dmat *dmat_check(lua_State *L, int idx)
{
  odbL_dmat *m = luaL_checkudata(L, idx, ODBL_DSPARSE);
  if (!m->A) luaL_argerror(L, idx, "the matrix is closed");
  return m;
}

/* A box freeing a global CSR and a reservoir should an error come. */
#define ODBL_DBUILD "odebench.DistBuild"
typedef struct { odb_sparse *csr, *T; odb_reservoir *g; int *own; } dbuild;
static void dbuild_free(dbuild *b)
{
  odb_sparse_free(b->csr); odb_sparse_free(b->T); odb_reservoir_free(b->g); free(b->own);
  memset(b, 0, sizeof *b);
}
static int dbuild_gc(lua_State *L)
{
  dbuild_free(luaL_checkudata(L, 1, ODBL_DBUILD));
  return 0;
}

/* grid = {J, H, I, k, wells, pattern, seed} at idx as a reservoir. */
static odb_reservoir *grid_arg(lua_State *L, int idx)
{
  static const char *const keys[] = {"J", "H", "I", "k", "wells", "pattern", "seed", NULL};
  odb_reservoir *g = NULL;
  if (lua_type(L, idx) != LUA_TTABLE)
    { odbL_field_error(L, 1, "grid", "table {J=, H=, I=, k=, wells=, pattern=, seed=}", idx); return NULL; }
  odbL_check_keys(L, idx, keys);
  long long J = odbL_opt_int_range(L, 1, idx, "J", "grid.J", 1, 1 << 30, 0);
  long long H = odbL_opt_int_range(L, 1, idx, "H", "grid.H", 1, 1 << 30, 0);
  long long I = odbL_opt_int_range(L, 1, idx, "I", "grid.I", 1, 1 << 30, 0);
  long long k = odbL_opt_int_range(L, 1, idx, "k", "grid.k", 1, 16, 1);
  long long nw = odbL_opt_int_range(L, 1, idx, "wells", "grid.wells", 0, 1 << 30, 0);
  long long seed = odbL_opt_int_range(L, 1, idx, "seed", "grid.seed", 0, (long long)1 << 62, 1);
  lua_getfield(L, idx, "pattern");
  const char *pat = lua_isnil(L, -1) ? "b" : lua_tostring(L, -1);
  if (!pat || (strcmp(pat, "b") && strcmp(pat, "h")))
    luaL_error(L, "ob.matrix: grid.pattern must be \"b\" or \"h\", got %s", luaL_tolstring(L, -1, NULL));
  odb_gh_pattern p = strcmp(pat, "h") ? ODB_GH_BLOCK : ODB_GH_HALF;
  lua_pop(L, 1);
  if (odb_reservoir_create(&g, (int)J, (int)H, (int)I, (int)k, (int)nw, p, (uint64_t)seed) != ODB_OK)
    luaL_error(L, "ob.matrix: grid: %s", odb_last_error());
  return g;
}

/* backend = "cuda" at table 1: raises unless this rank's context has the
   "cuda" backend (a device made current for this rank), with the note
   that says why not (no CUDA in the build, no device). */
static void need_cuda(lua_State *L)
{
  odb_ctx *c = odbL_state_get(L)->ctx;
  if (odb_ctx_backend(c, "cuda")) return;
  const char *why = "no CUDA backend";
  for (int i = 0; i < c->nnotes; i++)
    if (!strncmp(c->backend_notes[i], "cuda:", 5)) why = c->backend_notes[i];
  luaL_error(L, "ob.matrix: backend = \"cuda\" is not available on rank %d (%s)", odb_dist_rank(), why);
}

/* The planes on either side of a rank's own that its rows and those of
   A^T read, and that read its values, on a GH grid split by planes: the
   stencil reaches one plane, GH-h's shifted blocks a second (the last
   cell of a plane, shifted by k/2 rows, reads into the plane after the
   next), and A^T's rows there are made from A's rows one reach further. */
#define PLANE_REACH 4

/* See odb_lua.h: ob.matrix{dist =, grid = | file =, format =, ell_width =,
   backend =, petsc =, transpose =}. */
int odbL_dmatrix(lua_State *L)
{
  static const char *const keys[] = {"dist", "grid", "file", "format", "ell_width", "backend", "petsc",
                                     "transpose", NULL};
  odbL_check_not_in_callback(L, "ob.matrix");
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  const char *dist = odbL_opt_string(L, 1, "dist", "rows");
  odb_dsparse_split split;
  if (!strcmp(dist, "rows")) split = ODB_DSPLIT_ROWS;
  else if (!strcmp(dist, "planes")) split = ODB_DSPLIT_PLANES;
  else return luaL_error(L, "ob.matrix: dist must be \"rows\" or \"planes\", got \"%s\"", dist);
  odb_sparse_format f;
  if (odb_sparse_format_parse(odbL_opt_string(L, 1, "format", "csr"), &f) != ODB_OK)
    return luaL_error(L, "ob.matrix: %s", odb_last_error());
  int ell_width = (int)odbL_opt_int_range(L, 1, 1, "ell_width", "ell_width", 0, 1 << 20, 0);
  const char *be = odbL_opt_string(L, 1, "backend", "cpu");
  int gpu = !strcmp(be, "cuda");
  if (!gpu && strcmp(be, "cpu"))
    return luaL_error(L, "ob.matrix: backend must be \"cpu\" or \"cuda\", got \"%s\"", be);
  if (gpu) need_cuda(L);
  lua_getfield(L, 1, "petsc");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1)) return odbL_field_error(L, 1, "petsc", "boolean", -1);
  int want_petsc = lua_toboolean(L, -1);
  lua_pop(L, 1);
  /* transpose = false: no A^T (no D:qmr), so that a rank never holds the
     whole matrix's transpose beside the matrix while it builds */
  lua_getfield(L, 1, "transpose");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1)) return odbL_field_error(L, 1, "transpose", "boolean", -1);
  int want_t = lua_isnil(L, -1) || lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (want_petsc && !odb_dpetsc_available())
    return luaL_error(L, "ob.matrix: petsc = true: the PETSc peer is not in this build (configure with "
                      "-Dpeers=enabled, MPI and libpetsc-real-dev)");
  dbuild *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  if (luaL_newmetatable(L, ODBL_DBUILD)) { lua_pushcfunction(L, dbuild_gc); lua_setfield(L, -2, "__gc"); }
  lua_setmetatable(L, -2);
  lua_getfield(L, 1, "grid");
  if (!lua_isnil(L, -1)) b->g = grid_arg(L, lua_gettop(L));
  lua_pop(L, 1);
  lua_getfield(L, 1, "file");
  int has_file = !lua_isnil(L, -1);
  if (has_file && lua_type(L, -1) != LUA_TSTRING)
    return odbL_field_error(L, 1, "file", "string (a .mtx file name)", -1);
  if (!has_file && !b->g)
    return luaL_error(L, "ob.matrix: dist = \"%s\" needs grid = {J=, H=, I=, k=, ...} or file = \"a.mtx\"", dist);
  int size = odb_dist_size(), rank = odb_dist_rank();
  /* A GH grid on slabs of planes: each rank generates only its planes and
     the PLANE_REACH planes on either side (odb_reservoir_csr_planes), all
     that its part, its A^T and their plans read (odb_dsparse_create_ordered's
     partial; Bdia's slab is then built from the grid for its cells); else
     every rank builds or reads the whole matrix and keeps its rows.
     ODEBENCH_DSPARSE_WHOLE=1 asks for the whole matrix always (to compare). */
  const char *whole_env = getenv("ODEBENCH_DSPARSE_WHOLE");
  const int whole = whole_env && *whole_env && strcmp(whole_env, "0");
  const int local = !has_file && b->g && split == ODB_DSPLIT_PLANES && size > 1 && !whole;
  long n = b->g && !has_file ? b->g->n : 0;
  odb_status st = ODB_OK;
  if (local) {
    b->own = malloc((size_t)n * sizeof *b->own);
    if (!b->own) return luaL_error(L, "ob.matrix: row owners of order %I: out of memory", (lua_Integer)n);
    odb_dsparse_owner_planes(b->g, size, b->own);
    long plane = (long)b->g->J * b->g->H * b->g->k;
    int i0 = b->g->I, i1 = 0;
    for (int i = 0; i < b->g->I; i++)
      if (b->own[(long)i * plane] == rank) { if (i < i0) i0 = i; i1 = i + 1; }
    if (i0 >= i1) i0 = i1 = 0;   /* no planes: no rows, and none read this rank's */
    else { i0 -= PLANE_REACH; i1 += PLANE_REACH; }
    st = odb_reservoir_csr_planes(b->g, i0, i1, &b->csr);
  } else {
    st = has_file ? odb_sparse_read_mtx(lua_tostring(L, -1), NULL, &b->csr) : odb_reservoir_csr(b->g, &b->csr);
  }
  if (st != ODB_OK) return luaL_error(L, "ob.matrix: %s", odb_last_error());
  lua_pop(L, 1);
  n = b->csr->n;
  if (split == ODB_DSPLIT_PLANES && (!b->g || b->g->n != n))
    return luaL_error(L, "ob.matrix: dist = \"planes\" needs the grid of the matrix (grid = {...}%s)",
                      b->g ? lua_pushfstring(L, " of order %I, the file's is %I", (lua_Integer)b->g->n,
                                             (lua_Integer)n) : "");
  if (!b->own) {
    b->own = malloc((size_t)n * sizeof *b->own);
    if (!b->own) return luaL_error(L, "ob.matrix: row owners of order %I: out of memory", (lua_Integer)n);
    if (split == ODB_DSPLIT_PLANES) odb_dsparse_owner_planes(b->g, size, b->own);
    else odb_dsparse_owner_rows(b->csr, size, b->own);
  }
  /* a file's matrix on several ranks: every rank read it whole; it keeps
     only the rows its part and plan read (not for Bdia on slabs, which
     the partial path would build from the grid rather than the file) */
  int partial = local;
  if (has_file && size > 1 && f != ODB_FMT_BDIA && !whole) {
    odb_dsparse_trim(b->csr, b->own, rank);
    partial = 1;
  }
  odbL_gc_external(L, 2.0 * (double)odb_sparse_bytes(b->csr) / (partial ? 1 : size));
  odbL_dmat *m = lua_newuserdatauv(L, sizeof *m, 0);
  m->A = m->At = NULL;
  m->petsc = NULL;
  m->gpu = gpu;
  dmat_register(L);
  luaL_setmetatable(L, ODBL_DSPARSE);
  /* Bdia on slabs reads no A^T: made before the transpose, so that a
     rank never holds the transpose beside a Bdia of the whole order
     where it converts one (a file's matrix, ODEBENCH_DSPARSE_WHOLE); the
     other formats sort their rows by A's and A^T's columns
     (odb_dsparse_create's also) */
  const int slab_first = f == ODB_FMT_BDIA && size > 1;
  st = slab_first ? odb_dsparse_create_ordered(b->csr, NULL, b->own, rank, size, f, ell_width, b->g, split,
                                               DSPARSE_TAG, 0, partial, &m->A)
                  : ODB_OK;
  if (st == ODB_OK && want_t) st = odb_sparse_transpose(b->csr, &b->T);
  if (st == ODB_OK && !slab_first)
    st = odb_dsparse_create_ordered(b->csr, b->T, b->own, rank, size, f, ell_width, b->g, split, DSPARSE_TAG,
                                    0, partial, &m->A);
  if (st == ODB_OK && want_t) {
    /* A^T keeps CSR where A's format applies to A only (Bdia, DIA), in
       the grid order of A's rows when A is a Bdia on slabs */
    odb_sparse_format ft = f == ODB_FMT_BDIA || f == ODB_FMT_DIA ? ODB_FMT_CSR : f;
    st = odb_dsparse_create_ordered(b->T, b->csr, b->own, rank, size, ft, ell_width, NULL, split,
                                    DSPARSE_TAG + 1, m->A->slab != NULL, partial, &m->At);
  }
  if (st == ODB_OK && gpu) st = odb_dgpu_attach(m->A);   /* A^T at its first D:qmr */
  if (st == ODB_OK && want_petsc) st = odb_dpetsc_create(b->csr, b->own, rank, size, &m->petsc);
  if (st != ODB_OK) return luaL_error(L, "ob.matrix: %s", odb_last_error());
  dbuild_free(b);                        /* the whole matrix is not needed now */
  return 1;
}

/* The whole vector (n entries) at idx, named what, copied into a new
   Vector (pushed); its values, every one finite. */
static double *whole_arg(lua_State *L, int idx, const odb_dsparse *A, const char *what)
{
  idx = lua_absindex(L, idx);
  odbL_vector *v = luaL_testudata(L, idx, ODBL_VECTOR);
  lua_Integer len = v && !v->closed ? v->n : lua_type(L, idx) == LUA_TTABLE ? (lua_Integer)luaL_len(L, idx) : -1;
  if (len < 0) luaL_error(L, "%s: Vector or table expected, got %s", what, luaL_typename(L, idx));
  if (len != A->n) luaL_error(L, "%s has %I entries, the matrix order is %I", what, len, (lua_Integer)A->n);
  odbL_vector *whole = odbL_vector_new(L, A->n);
  if (v) memcpy(whole->v, v->v, (size_t)A->n * sizeof *whole->v);
  else {
    lua_Integer bad = odbL_read_numbers(L, idx, whole->v, A->n);
    if (bad) luaL_error(L, "%s: entry %I: number expected, got %s", what, bad, luaL_typename(L, -1));
  }
  for (long i = 0; i < A->n; i++)
    if (!isfinite(whole->v[i])) luaL_error(L, "%s: entry %I is not finite", what, (lua_Integer)i + 1);
  return whole->v;
}

/* The whole vector (n entries) at idx, named what: scattered into a new
   Vector of ext entries (pushed) holding the rank's rows; its values. */
static double *dvec_arg(lua_State *L, int idx, const odb_dsparse *A, long ext, const char *what)
{
  const double *whole = whole_arg(L, idx, A, what);
  double *loc = odbL_vector_new(L, ext > 0 ? ext : 1)->v;
  odb_dsparse_scatter(A, whole, loc);
  lua_remove(L, -2);
  return loc;
}

/* Pushes the whole vector gathered from the rank's entries loc. No Lua
   vector is ever under an MPI request: the exchanges and reductions go
   through the matrix's own buffers (odb_dist_sparse.h, "Buffers under a
   request"), as Lua frees its vectors, at the latest in lua_close,
   before MPI_Finalize. */
static void push_whole(lua_State *L, odb_dsparse *A, const double *loc, const char *who)
{
  double *whole = odbL_vector_new(L, A->n)->v;
  if (odb_dsparse_gather(A, loc, whole) != ODB_OK) luaL_error(L, "%s: %s", who, odb_last_error());
}

/* D:spmv(x) -> the whole y = A x on every rank. */
static int dmat_spmv(lua_State *L)
{
  odbL_dmat *m = dmat_check(L, 1);
  odbL_check_not_in_callback(L, "D:spmv");
  double *x = dvec_arg(L, 2, m->A, m->A->nloc + m->A->nghost, "D:spmv: x");
  double *y = odbL_vector_new(L, m->A->nloc ? m->A->nloc : 1)->v;
  odb_status st = m->A->gpu ? odb_dgpu_spmv_host(m->A, x, y) : odb_dsparse_spmv(m->A, x, y);
  if (st != ODB_OK) return luaL_error(L, "D:spmv: %s", odb_last_error());
  push_whole(L, m->A, y, "D:spmv");
  return 1;
}

static void set_num(lua_State *L, const char *k, double v) { lua_pushnumber(L, v); lua_setfield(L, -2, k); }
static void set_int(lua_State *L, const char *k, long long v) { lua_pushinteger(L, v); lua_setfield(L, -2, k); }

/* The slowest rank's seconds (a collective). */
static double slowest(lua_State *L, odb_dsparse *A, double sec, const char *who)
{
  if (odb_dsparse_allreduce(A, &sec, 1, "MPI_Allreduce (DistMatrix seconds)") != ODB_OK)
    luaL_error(L, "%s: %s", who, odb_last_error());
  return sec;
}

/* D:bicgstab / D:qmr / D:pbicgstab {b =, x0 =, tol =, maxit =,
   stagnation =, replace = (pbicgstab), impl = (bicgstab: "fused" or
   "persistent")} -> result, x (whole). */
static int dmat_solve(lua_State *L, odb_dkrylov_method meth, const char *who)
{
  static const char *const keys[] = {"b", "x0", "tol", "maxit", "stagnation", NULL};
  static const char *const bkeys[] = {"b", "x0", "tol", "maxit", "stagnation", "impl", NULL};
  static const char *const pkeys[] = {"b", "x0", "tol", "maxit", "stagnation", "replace", NULL};
  odbL_dmat *m = dmat_check(L, 1);
  odbL_check_not_in_callback(L, who);
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, meth == ODB_DKRY_PBICGSTAB ? pkeys : meth == ODB_DKRY_BICGSTAB ? bkeys : keys);
  odb_dkrylov_opts o = {{1e-10, 1000, 100}, 0, 0};
  if (meth == ODB_DKRY_BICGSTAB) {
    const char *impl = odbL_opt_string(L, 2, "impl", "fused");
    if (strcmp(impl, "persistent") == 0) o.persistent = 1;
    else if (strcmp(impl, "fused") != 0)
      return luaL_error(L, "%s: impl must be \"fused\" (the default: kernels a step, or the host's loop "
                        "where the ranks have no link) or \"persistent\" (GPU ranks: the whole solve in "
                        "one kernel a rank), got \"%s\"", who, impl);
  }
  double tol = 1e-10;
  odbL_opt_number(L, 2, "tol", &tol);
  if (!(tol > 0 && tol < 1)) return luaL_error(L, "%s: tol must be in (0, 1), got %f", who, tol);
  o.k.tol = tol;
  o.k.maxit = (int)odbL_opt_int_range(L, 2, 2, "maxit", "maxit", 1, 1 << 24, 1000);
  o.k.stag_window = (int)odbL_opt_int_range(L, 2, 2, "stagnation", "stagnation", 1, 1 << 24, 100);
  o.replace = (int)odbL_opt_int_range(L, 2, 2, "replace", "replace", 0, 1 << 24, 0);
  odb_dsparse *A = m->A;
  const char *bname = lua_pushfstring(L, "%s: b", who);
  const char *xname = lua_pushfstring(L, "%s: x0", who);
  lua_getfield(L, 2, "b");
  if (lua_isnil(L, -1)) return luaL_error(L, "%s: b (the right-hand side) is required", who);
  long ext = A->nloc > 0 ? A->nloc : 1;
  double *b = dvec_arg(L, -1, A, ext, bname);
  lua_getfield(L, 2, "x0");
  if (meth == ODB_DKRY_QMR && !m->At)
    return luaL_error(L, "%s: the matrix was made with transpose = false (no A^T, which QMR multiplies by); "
                      "make it without that to use QMR", who);
  long tg = m->At ? m->At->nghost : 0;
  long xext = A->nloc + (A->nghost > tg ? A->nghost : tg) + 1;
  double *x = lua_isnil(L, -1) ? odbL_vector_new(L, xext)->v : dvec_arg(L, -1, A, xext, xname);
  odb_krylov_result res;
  double sec = 0.0;
  if (m->gpu && meth == ODB_DKRY_QMR && !m->At->gpu && odb_dgpu_attach(m->At) != ODB_OK)
    return luaL_error(L, "%s: A^T on the GPU: %s", who, odb_last_error());
  odb_status st = odb_dkrylov_solve(A, m->At, meth, b, x, &o, &res, &sec);
  if (st != ODB_OK && st != ODB_ERR_MAX_STEPS) return luaL_error(L, "%s: %s", who, odb_last_error());
  const char *msg = st == ODB_OK ? NULL : lua_pushstring(L, odb_last_error());
  lua_newtable(L);
  lua_pushboolean(L, st == ODB_OK); lua_setfield(L, -2, "converged");
  lua_pushstring(L, odb_krylov_outcome_name(res.outcome)); lua_setfield(L, -2, "outcome");
  if (msg) { lua_pushstring(L, msg); lua_setfield(L, -2, "message"); }
  lua_pushstring(L, odb_dkrylov_method_name(meth)); lua_setfield(L, -2, "method");
  set_int(L, "iters", res.iters);
  set_int(L, "breakdown_iter", res.breakdown_iter);
  set_num(L, "relres", res.relres);
  set_num(L, "relres_true", res.relres_true);
  lua_createtable(L, res.nhist, 0);
  for (int i = 0; i < res.nhist; i++) { lua_pushnumber(L, res.history[i]); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "history");
  odb_krylov_result_free(&res);
  sec = slowest(L, A, sec, who);
  set_num(L, "seconds", sec);
  set_num(L, "seconds_per_iter", res.iters > 0 ? sec / res.iters : 0.0);
  set_int(L, "ranks", A->size);
  lua_pushstring(L, m->gpu ? "cuda" : "cpu"); lua_setfield(L, -2, "backend");
  if (m->gpu) {
    lua_pushstring(L, odb_dgpu_halo_path(A)); lua_setfield(L, -2, "halo");
    const char *ctl = o.persistent ? "device" : odb_dgpu_krylov_control(A, m->At, (int)meth);
    lua_pushstring(L, ctl); lua_setfield(L, -2, "control");
    if (meth == ODB_DKRY_BICGSTAB) {
      lua_pushstring(L, o.persistent ? "persistent" : strcmp(ctl, "device") == 0 ? "fused" : "kernels");
      lua_setfield(L, -2, "impl");
    }
  }
  push_whole(L, A, x, who);                /* the result and x on top */
  return 2;
}

static int dmat_bicgstab(lua_State *L) { return dmat_solve(L, ODB_DKRY_BICGSTAB, "D:bicgstab"); }
static int dmat_qmr(lua_State *L) { return dmat_solve(L, ODB_DKRY_QMR, "D:qmr"); }
static int dmat_pbicgstab(lua_State *L) { return dmat_solve(L, ODB_DKRY_PBICGSTAB, "D:pbicgstab"); }

/* D:petsc{b =, method = "bicgstab" | "qmrcgs", tol =, maxit =}: PETSc's
   solver on the matrix made with petsc = true (a collective). */
static int dmat_petsc(lua_State *L)
{
  static const char *const keys[] = {"b", "method", "tol", "maxit", NULL};
  odbL_dmat *m = dmat_check(L, 1);
  odbL_check_not_in_callback(L, "D:petsc");
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  if (!m->petsc)
    return luaL_error(L, "D:petsc: the matrix was made without petsc = true%s", odb_dpetsc_available() ? ""
                      : " (and this build has no PETSc peer)");
  double tol = 1e-10;
  odbL_opt_number(L, 2, "tol", &tol);
  if (!(tol > 0 && tol < 1)) return luaL_error(L, "D:petsc: tol must be in (0, 1), got %f", tol);
  long maxit = (long)odbL_opt_int_range(L, 2, 2, "maxit", "maxit", 1, 1 << 24, 1000);
  const char *meth = odbL_opt_string(L, 2, "method", "bicgstab");
  if (strcmp(meth, "bicgstab") && strcmp(meth, "qmrcgs"))
    return luaL_error(L, "D:petsc: method must be \"bicgstab\" or \"qmrcgs\", got \"%s\"", meth);
  lua_getfield(L, 2, "b");
  if (lua_isnil(L, -1)) return luaL_error(L, "D:petsc: b (the right-hand side) is required");
  const double *b = whole_arg(L, -1, m->A, "D:petsc: b");
  odb_dpetsc_result r;
  if (odb_dpetsc_solve(m->petsc, b, meth, tol, maxit, &r) != ODB_OK)
    return luaL_error(L, "D:petsc: %s", odb_last_error());
  lua_newtable(L);
  lua_pushboolean(L, r.converged); lua_setfield(L, -2, "converged");
  lua_pushstring(L, r.reason); lua_setfield(L, -2, "outcome");
  lua_pushstring(L, r.method); lua_setfield(L, -2, "method");
  set_int(L, "iters", r.iters);
  set_num(L, "relres", r.relres);
  set_num(L, "relres_true", r.relres_true);
  set_num(L, "seconds", r.seconds);
  set_num(L, "seconds_per_iter", r.iters > 0 ? r.seconds / r.iters : 0.0);
  set_int(L, "ranks", m->A->size);
  return 1;
}

typedef struct { lua_State *L; odb_dsparse *A; double *x, *y; } bench_ud;

/* One SpMV, timed as its slowest rank; on a GPU rank on the matrix's
   device vectors, waited for. */
static odb_status bench_one(void *ud, double *sec)
{
  bench_ud *u = ud;
  double t0 = odb_clock_now();
  odb_status st = u->A->gpu ? odb_dgpu_bench_run(u->A) : odb_dsparse_spmv(u->A, u->x, u->y);
  if (st != ODB_OK) return st;
  *sec = odb_clock_since(t0);
  return odb_dsparse_allreduce(u->A, sec, 1, "MPI_Allreduce (D:bench seconds)");
}

/* D:bench{reps = 20} -> median seconds of one SpMV (the slowest rank's),
   {median, p25, p75, spread, reps, floor_bytes (this rank's),
   floor_bytes_sum (all ranks'); on GPU ranks also copy_bw_sum and
   read_bw_sum, the GPUs' copy and read bandwidth in bytes/s (each GPU
   once, odb_dgpu_copy_share and odb_dgpu_read_share), and halo}. The same number of runs on every rank:
   a measure that stops by the time it sees would differ from rank to
   rank, and its collectives with it. */
static int dmat_bench(lua_State *L)
{
  static const char *const keys[] = {"reps", NULL};
  odbL_dmat *m = dmat_check(L, 1);
  odbL_check_not_in_callback(L, "D:bench");
  int reps = 20;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    odbL_check_keys(L, 2, keys);
    reps = (int)odbL_opt_int_range(L, 2, 2, "reps", "reps", 1, 100000, 20);
  }
  odb_dsparse *A = m->A;
  double *x = odbL_vector_new(L, A->nloc + A->nghost + 1)->v;
  double *y = odbL_vector_new(L, A->nloc + 1)->v;
  for (long i = 0; i < A->nloc; i++) x[i] = 1.0 + 1e-3 * (double)(A->glob[i] % 7);
  if (A->gpu && odb_dgpu_bench_put(A, x) != ODB_OK) return luaL_error(L, "D:bench: %s", odb_last_error());
  bench_ud u = {L, A, x, y};
  odb_measure_opts mo = {1, reps, reps, 1e30, 1e-300, 0};
  odb_measurement me;
  if (odb_measure_run(bench_one, &u, &mo, NULL, &me, NULL) != ODB_OK)
    return luaL_error(L, "D:bench: %s", odb_last_error());
  double fb = odb_dsparse_min_bytes(A), fsum = fb;
  if (odb_dsparse_allreduce(A, &fsum, 0, "MPI_Allreduce (D:bench bytes)") != ODB_OK)
    return luaL_error(L, "D:bench: %s", odb_last_error());
  lua_pushnumber(L, me.median);
  lua_newtable(L);
  set_num(L, "median", me.median); set_num(L, "p25", me.p25); set_num(L, "p75", me.p75);
  set_num(L, "spread", me.spread); set_int(L, "reps", me.reps);
  set_num(L, "floor_bytes", fb); set_num(L, "floor_bytes_sum", fsum);
  if (A->gpu) {
    double bw = 0.0;
    odb_status bst = odb_dgpu_copy_share(odb_dist_local_size(), &bw);
    /* every rank joins the sum, a rank that cannot tell with 0 */
    if (bst != ODB_OK) bw = 0.0;
    if (odb_dsparse_allreduce(A, &bw, 0, "MPI_Allreduce (D:bench GPU bandwidth)") != ODB_OK)
      return luaL_error(L, "D:bench: %s", odb_last_error());
    set_num(L, "copy_bw_sum", bw);
    bst = odb_dgpu_read_share(odb_dist_local_size(), &bw);
    if (bst != ODB_OK) bw = 0.0;
    if (odb_dsparse_allreduce(A, &bw, 0, "MPI_Allreduce (D:bench GPU read bandwidth)") != ODB_OK)
      return luaL_error(L, "D:bench: %s", odb_last_error());
    set_num(L, "read_bw_sum", bw);
    lua_pushstring(L, odb_dgpu_halo_path(A)); lua_setfield(L, -2, "halo");
  }
  return 2;
}

/* D:info() -> this rank's view (no communication). */
static int dmat_info(lua_State *L)
{
  odbL_dmat *m = dmat_check(L, 1);
  odb_dsparse *A = m->A;
  lua_newtable(L);
  lua_pushstring(L, m->gpu ? "cuda" : "cpu"); lua_setfield(L, -2, "backend");
  if (m->gpu) {
    lua_pushstring(L, odb_dgpu_halo_path(A)); lua_setfield(L, -2, "halo");
    set_num(L, "device_bytes", odb_dgpu_bytes(A) + (m->At ? odb_dgpu_bytes(m->At) : 0.0));
  }
  lua_pushstring(L, odb_sparse_format_name(A->fmt)); lua_setfield(L, -2, "format");
  lua_pushstring(L, A->split == ODB_DSPLIT_PLANES ? "planes" : "rows"); lua_setfield(L, -2, "dist");
  set_int(L, "n", A->n); set_int(L, "nnz", A->nnz);
  set_int(L, "rank", A->rank); set_int(L, "ranks", A->size);
  set_int(L, "nloc", A->nloc); set_int(L, "interior", A->nint); set_int(L, "ghosts", A->nghost);
  set_int(L, "nnz_local", A->lnnz); set_int(L, "sends", A->nsend); set_int(L, "recvs", A->nrecv);
  set_int(L, "sent_values", A->send_off[A->nsend]);
  set_num(L, "bytes", (double)((A->Ai ? odb_sparse_bytes(A->Ai) : 0) + (A->Ab ? odb_sparse_bytes(A->Ab) : 0))
                      + (A->slab ? odb_dslab_bytes(A) : 0.0));
  set_num(L, "floor_bytes", odb_dsparse_min_bytes(A));
  return 1;
}

static int dmat_close(lua_State *L)
{
  luaL_checkudata(L, 1, ODBL_DSPARSE);
  return dmat_gc(L);
}

/* The DistMatrix metatable (idempotent). */
static void dmat_register(lua_State *L)
{
  static const luaL_Reg meths[] = {
    {"spmv", dmat_spmv}, {"bicgstab", dmat_bicgstab}, {"qmr", dmat_qmr},
    {"pbicgstab", dmat_pbicgstab}, {"bench", dmat_bench}, {"info", dmat_info},
    {"petsc", dmat_petsc}, {"close", dmat_close}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, ODBL_DSPARSE)) {
    lua_pushcfunction(L, dmat_gc); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, dmat_gc); lua_setfield(L, -2, "__close");
    lua_newtable(L);
    luaL_setfuncs(L, meths, 0);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
