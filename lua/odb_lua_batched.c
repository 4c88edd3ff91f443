/* odb_lua_batched.c - ob.batched{...} (many small B x B matrices: LU,
   solve, GEMM, GEMV, TRSM, benchmarks) through the ops table of the
   backend asked for (odb_batched_impl.h: "cpu", or "cuda" in builds with
   CUDA), and the helpers it shares with ob.blocktridiag
   (odb_lua_blocktridiag.c, odb_lua_batched.h).

   Indices are 1-based in Lua, and so is every index in the messages here:
   the layer checks indices itself (odbL_int_in_range, values in full) and
   words the bad-pivot errors itself, so no 0-based engine message reaches
   the user. lu() and factor() are all or nothing: the pivots are checked
   first or a copy is restored (the table's lu_safe and btd_factor), so
   that a failure leaves every matrix and block as it was.

   A user's matrices (ob.batched{data = ...}) come as one 2-D array of
   shape (batch*B, B): the B rows of matrix 1, then those of matrix 2, and
   so on, in C order. That is byte for byte NumPy's (batch, B, B) in C
   order (np.save("a.npy", A.reshape(-1, B)) costs no copy), it is the
   standard layout the engine packs from (odb_batched_pack), and it is 2-D,
   which is what the .npy and Matrix Market readers and a Vector's shape
   hold. Right-hand sides and solutions are (batch, B). */
#include "odb_lua.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched.h"
#include "odb_lua_batched.h"

#define ODBL_BAT "odebench.Batched"

/* Raises the recorded message when st is a failure. */
static void raise_on(lua_State *L, odb_status st) {
  if (st != ODB_OK) luaL_error(L, "%s", odb_last_error());
}

/* See odb_lua_batched.h. The one place a batched backend is looked up. */
const odb_batched_ops *odbL_bt_backend(lua_State *L, int arg,
                                       const char *who) {
  const char *b = odbL_opt_string(L, arg, "backend", "cpu");
  const odb_batched_ops *ops;
  if (odb_batched_impl_find(b, &ops) != ODB_OK ||
      ops->ready(odbL_state_get(L)->ctx) != ODB_OK)
    luaL_error(L, "%s: %s", who, odb_last_error());
  return ops;
}

/* NaN is refused: no factorization or product means anything then. */
void odbL_bt_read_block(lua_State *L, int idx, int bs, double *blk) {
  lua_Integer n = (lua_Integer)bs * bs, bad;
  if (lua_istable(L, idx)) {
    lua_Integer len = luaL_len(L, idx);
    if (len != n)
      luaL_argerror(L, idx, lua_pushfstring(L, "expected block*block = %I "
                    "values, got %I", n, len));
    if ((bad = odbL_read_numbers(L, idx, blk, n)) != 0)
      luaL_argerror(L, idx, lua_pushfstring(L, "value %I: number expected, "
                    "got %s", bad, luaL_typename(L, -1)));
  } else {
    odbL_vector *v = odbL_vector_check(L, idx);
    if (v->n != n)
      luaL_argerror(L, idx, lua_pushfstring(L, "expected block*block = %I "
                    "values, got %I", n, (lua_Integer)v->n));
    memcpy(blk, v->v, sizeof(double) * (size_t)n);
  }
  for (lua_Integer e = 0; e < n; ++e)
    if (isnan(blk[e]))
      luaL_argerror(L, idx, lua_pushfstring(L, "value %I is NaN", e + 1));
}

/* See odb_lua_batched.h. */
void odbL_bt_pivot_error(lua_State *L, const char *who, const char *what,
                         long bad, int row, const char *at, const char *why,
                         const char *kept) {
  if (row >= 0)
    luaL_error(L, "%s: %s %I has a zero or tiny pivot %s%d (%s); %s", who,
               what, (lua_Integer)bad + 1, at, row + 1, why, kept);
  luaL_error(L, "%s: %s %I has a zero or tiny pivot (%s); %s", who, what,
             (lua_Integer)bad + 1, why, kept);
}

/* See odb_lua_batched.h. */
void odbL_bt_measure(lua_State *L, int arg, odb_measure_opts *o) {
  int reps = (int)odbL_opt_int_range(L, arg, arg, "reps", "reps", 1,
                                     BENCH_MAX_REPS, 0);
  memset(o, 0, sizeof *o);
  o->min_reps = o->max_reps = reps;   /* 0: not given */
  odbL_measure_opt_field(L, arg, arg, o);
  odbL_measure_final(L, o);
}

/* See odb_lua_batched.h. */
void odbL_bt_random_opts(lua_State *L, int idx, long long *seed,
                         double *dom) {
  static const char *const keys[] = { "seed", "dominance", NULL };
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  odbL_check_keys(L, idx, keys);
  odbL_opt_integer(L, idx, "seed", seed);
  if (odbL_opt_number(L, idx, "dominance", dom) && isnan(*dom))
    luaL_argerror(L, idx, "field 'dominance': a number expected, got NaN");
}

/* See odb_lua_batched.h. */
void odbL_bt_push_bench(lua_State *L, const odb_measurement *m, double rbytes,
                        double wbytes, double touched, const char *variant,
                        const char *op, const char *backend,
                        const char *kind) {
  double med = m->median, best = m->min, bytes = rbytes + wbytes;
  lua_createtable(L, 0, 14);
  lua_pushstring(L, op);
  lua_setfield(L, -2, "op");
  lua_pushstring(L, backend);
  lua_setfield(L, -2, "backend");
  lua_pushnumber(L, med);
  lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, best);
  lua_setfield(L, -2, "best");
  lua_pushnumber(L, bytes);
  lua_setfield(L, -2, "bytes");
  lua_pushnumber(L, med > 0 ? bytes / med * 1e-9 : 0.0);
  lua_setfield(L, -2, "gbs");
  lua_pushnumber(L, best > 0 ? bytes / best * 1e-9 : 0.0);
  lua_setfield(L, -2, "gbs_best");
  lua_pushstring(L, variant);
  lua_setfield(L, -2, "variant");
  odbL_measure_fields(L, -1, NULL, m);
  odbL_floor_fields(L, -1, NULL, backend, 1, rbytes, wbytes, touched, med);
  odbL_measure_row(L, -1, kind);
}

/* See odb_lua_batched.h. */
int odbL_bt_has_fields(lua_State *L, const char *a, const char *b,
                       const char *c) {
  int have = 1;
  const char *names[3] = { a, b, c };
  for (int i = 0; i < 3; ++i)
    if (names[i]) {
      have &= lua_getfield(L, 1, names[i]) != LUA_TNIL;
      lua_pop(L, 1);
    }
  return have;
}

/* See odb_lua_batched.h. */
int odbL_bt_variant(lua_State *L, int arg, const odb_batched_ops *ops,
                    const char *who) {
  int out = 0;
  if (ops->variant_parse(odbL_opt_string(L, arg, "variant", "auto"), &out)
      != ODB_OK)
    luaL_error(L, "%s: %s", who, odb_last_error());
  return out;
}

/* {====== ob.batched */

typedef struct odbL_bat {
  int open;
  const odb_batched_ops *ops;   /* the backend: a lives in its memory */
  odb_batch bt;
  double *a;             /* the matrices (bt's layout) */
  int factored;          /* a holds LU factors */
  int variant;           /* the backend's variant (0: auto) */
} odbL_bat;

/* The open object at idx; raises when closed. */
static odbL_bat *bat_check(lua_State *L, int idx) {
  odbL_bat *m = luaL_checkudata(L, idx, ODBL_BAT);
  if (!m->open) luaL_argerror(L, idx, "the batch is closed");
  return m;
}

/* 1-based matrix index at idx, as 0-based; raises when out of range. */
static long bat_index(lua_State *L, const odbL_bat *m, int idx) {
  return (long)odbL_check_int_range(L, idx, "matrix", 1, m->bt.n) - 1;
}

/* m:random{seed=1, dominance=1}: matrices of odb_batched_random (the same
   on either backend); dominance >= 1: diagonally dominant. */
static int bat_random(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long long seed = 1;
  double dom = 1.0;
  odbL_bt_random_opts(L, 2, &seed, &dom);
  raise_on(L, m->ops->random(&m->bt, (uint64_t)seed, dom, m->a));
  m->factored = 0;
  return 0;
}

/* m:set(p, values): matrix p (1-based), row-major B*B values. */
static int bat_set(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long p = bat_index(L, m, 2);
  double blk[ODB_BATCHED_MAX_B * ODB_BATCHED_MAX_B];
  odbL_bt_read_block(L, 3, m->bt.b, blk);
  raise_on(L, m->ops->set_matrix(&m->bt, m->a, p, blk));
  m->factored = 0;
  return 0;
}

/* m:get(p) -> Vector of B*B values (the LU factors once factored). */
static int bat_get(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long p = bat_index(L, m, 2);
  odbL_vector *v = odbL_vector_new(L, (long)m->bt.b * m->bt.b);
  raise_on(L, m->ops->get_matrix(&m->bt, m->a, p, v->v));
  return 1;
}

/* Raises the bad-pivot error of an LU (bad, row 0-based; row -1 when not
   known) counting from 1. */
static void lu_raise(lua_State *L, odb_status st, long bad, int row) {
  if (st == ODB_ERR_ARG && bad >= 0)
    odbL_bt_pivot_error(L, "ob.batched lu", "matrix", bad, row, "at row ",
                "LU without pivoting needs diagonally dominant matrices",
                "every matrix is left as it was");
  raise_on(L, st);
}

/* m:lu() -> seconds: LU without pivoting in place (cuda: device time,
   the pivot check included). All or nothing: a zero or tiny pivot raises
   naming the matrix (from 1) and leaves every matrix as it was (the CPU
   checks the pivots first, not timed; cuda restores a device copy). */
static int bat_lu(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long bad = -1;
  int row = -1;
  double sec = 0;
  if (m->factored)
    return luaL_error(L, "ob.batched lu: already factored (random or set "
                      "first)");
  odb_status st = m->ops->lu_safe(&m->bt, m->variant, m->a, &bad, &row,
                                  &sec);
  lu_raise(L, st, bad, row);
  m->factored = 1;
  lua_pushnumber(L, sec);
  return 1;
}

/* m:matrices() -> Vector of shape (n*B, B): every matrix, row-major, one
   after the other (the LU factors once factored; L unit lower below the
   diagonal, U on and above it), the layout ob.batched{data =} takes. */
static int bat_matrices(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  size_t ml = odb_batch_mat_len(&m->bt);
  long dims[2] = { m->bt.n * m->bt.b, m->bt.b };
  odbL_vector *v = odbL_vector_new(L, dims[0] * dims[1]);
  double *host = lua_newuserdatauv(L, ml * sizeof *host, 0);
  raise_on(L, m->ops->download(host, m->a, ml));
  odb_batched_unpack(&m->bt, host, v->v);
  lua_pop(L, 1);
  odbL_vector_set_shape(L, -1, 2, dims, 0);
  return 1;
}

/* Checks a Vector of n*B*cols values at idx (who names the op). */
static odbL_vector *bat_vec(lua_State *L, const odbL_bat *m, int idx,
                            int cols, const char *who) {
  odbL_vector *v = odbL_vector_check(L, idx);
  long need = m->bt.n * m->bt.b * cols;
  if (v->n != need)
    luaL_error(L, "ob.batched %s: vector has %I values, expected n*block = "
               "%I", who, (lua_Integer)v->n, (lua_Integer)need);
  return v;
}

/* Moves the standard-order vectors `in` (n*B values each, or NULL) into
   bt's rhs layout at d[k] (the backend's memory), runs fn, and brings
   d[out] back into x. A little engine for solve and gemv. */
typedef odb_status (*bat_vec_fn)(odbL_bat *m, double **d, double *sec,
                                 void *arg);
static odb_status bat_with_vectors(odbL_bat *m, const double *const *in,
                                   int nin, int out, double *x,
                                   bat_vec_fn fn, void *arg, double *sec) {
  const odb_batched_ops *ops = m->ops;
  size_t rl = odb_batch_rhs_len(&m->bt, 1);
  double *d[3] = { NULL, NULL, NULL };
  odb_status st = ODB_OK;
  for (int k = 0; k < nin && st == ODB_OK; ++k)
    st = ops->alloc(rl, &d[k]);
  for (int k = 0; k < nin && st == ODB_OK; ++k)
    if (in[k]) st = ops->rhs_in(&m->bt, in[k], d[k]);
  if (st == ODB_OK) st = fn(m, d, sec, arg);
  if (st == ODB_OK) st = ops->rhs_out(&m->bt, d[out], x);
  for (int k = 0; k < nin; ++k) ops->free(d[k]);
  return st;
}

/* d[0] := (LU)^{-1} d[0]. */
static odb_status run_solve(odbL_bat *m, double **d, double *sec, void *arg) {
  double t0 = 0;
  (void)arg;
  ODB_TRY(m->ops->tic(&t0));
  ODB_TRY(m->ops->lu_solve(&m->bt, m->variant, m->a, d[0]));
  return m->ops->toc(t0, sec);
}

/* m:solve(b) -> x (a new Vector of shape (n, B)), seconds: with the
   factors of lu(); b holds n*B values, b[(p-1)*B + i] for matrix p: a
   Vector (any shape holding n*B real numbers) or a file ob.load reads. */
static int bat_solve(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long dims[2] = { m->bt.n, m->bt.b };
  int cx = 0;
  odbL_array_arg(L, 2, "ob.batched solve", "b", 0, dims, &cx);
  if (cx)
    return luaL_error(L, "ob.batched solve: b: complex ('<c16') values are "
                      "not taken (real float64 only)");
  lua_replace(L, 2);
  odbL_vector *b = bat_vec(L, m, 2, 1, "solve");
  if (!m->factored)
    return luaL_error(L, "ob.batched solve: call lu() first");
  odbL_vector *x = odbL_vector_new(L, b->n);
  dims[0] = m->bt.n;
  dims[1] = m->bt.b;
  odbL_vector_set_shape(L, -1, 2, dims, 0);
  const double *in[1] = { b->v };
  double sec = 0;
  raise_on(L, bat_with_vectors(m, in, 1, 0, x->v, run_solve, NULL, &sec));
  lua_pushnumber(L, sec);
  return 2;
}

typedef struct gemv_arg { double alpha, beta; } gemv_arg;

/* d[1] := alpha A d[0] + beta d[1]. */
static odb_status run_gemv(odbL_bat *m, double **d, double *sec, void *arg) {
  gemv_arg *g = arg;
  double t0 = 0;
  ODB_TRY(m->ops->tic(&t0));
  ODB_TRY(m->ops->gemv(&m->bt, m->variant, g->alpha, m->a, d[0], g->beta,
                       d[1]));
  return m->ops->toc(t0, sec);
}

/* m:gemv(x [, {alpha=1, beta=0, y=Vector}]) -> y (a new Vector), seconds:
   y = alpha A x + beta y for every matrix (x, y: n*B values). */
static int bat_gemv(lua_State *L) {
  static const char *const keys[] = { "alpha", "beta", "y", NULL };
  odbL_bat *m = bat_check(L, 1);
  odbL_vector *x = bat_vec(L, m, 2, 1, "gemv"), *y0 = NULL;
  gemv_arg g = { 1.0, 0.0 };
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    odbL_check_keys(L, 3, keys);
    odbL_opt_number(L, 3, "alpha", &g.alpha);
    odbL_opt_number(L, 3, "beta", &g.beta);
    if (lua_getfield(L, 3, "y") != LUA_TNIL)
      y0 = bat_vec(L, m, lua_gettop(L), 1, "gemv (y)");
    lua_pop(L, 1);
  }
  if (m->factored)
    return luaL_error(L, "ob.batched gemv: the matrices hold LU factors");
  odbL_vector *y = odbL_vector_new(L, x->n);
  const double *in[2] = { x->v, y0 ? y0->v : y->v };
  double sec = 0;
  raise_on(L, bat_with_vectors(m, in, 2, 1, y->v, run_gemv, &g, &sec));
  lua_pushnumber(L, sec);
  return 2;
}

/* Refuses a second batch that differs in shape, layout or backend. */
static void bat_same(lua_State *L, const odbL_bat *m, const odbL_bat *o,
                     const char *who) {
  if (o->bt.n != m->bt.n || o->bt.b != m->bt.b || o->bt.vl != m->bt.vl ||
      o->bt.layout != m->bt.layout || o->ops != m->ops)
    luaL_error(L, "ob.batched %s: the batches differ (n %I/%I, block %d/%d, "
               "layout %s/%s, VL %d/%d, backend %s/%s)", who,
               (lua_Integer)m->bt.n, (lua_Integer)o->bt.n, m->bt.b, o->bt.b,
               odb_batched_layout_name(m->bt.layout),
               odb_batched_layout_name(o->bt.layout), m->bt.vl, o->bt.vl,
               m->ops->backend, o->ops->backend);
}

/* m:gemm(X, C [, {alpha=1, beta=0}]) -> seconds: C := alpha A X + beta C
   for every matrix (X and C batches like m; C neither m nor X). */
static int bat_gemm(lua_State *L) {
  static const char *const keys[] = { "alpha", "beta", NULL };
  odbL_bat *m = bat_check(L, 1), *x = bat_check(L, 2), *c = bat_check(L, 3);
  double alpha = 1.0, beta = 0.0, sec = 0, t0 = 0;
  if (!lua_isnoneornil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    odbL_check_keys(L, 4, keys);
    odbL_opt_number(L, 4, "alpha", &alpha);
    odbL_opt_number(L, 4, "beta", &beta);
  }
  bat_same(L, m, x, "gemm");
  bat_same(L, m, c, "gemm");
  if (c == m || c == x)
    return luaL_error(L, "ob.batched gemm: C must not be A or X");
  raise_on(L, m->ops->tic(&t0));
  raise_on(L, m->ops->gemm(&m->bt, m->variant, alpha, m->a, x->a, beta,
                           c->a));
  raise_on(L, m->ops->toc(t0, &sec));
  c->factored = 0;
  lua_pushnumber(L, sec);
  return 1;
}

/* "lower" / "upper" / "right" at idx. */
static odb_batched_trsm_kind trsm_kind(lua_State *L, int idx) {
  const char *k = luaL_optstring(L, idx, "lower");
  if (strcmp(k, "lower") == 0) return ODB_TRSM_LEFT_LOWER_UNIT;
  if (strcmp(k, "upper") == 0) return ODB_TRSM_LEFT_UPPER;
  if (strcmp(k, "right") == 0) return ODB_TRSM_RIGHT_UPPER;
  return (odb_batched_trsm_kind)luaL_argerror(L, idx, "kind must be "
                                              "\"lower\", \"upper\" or "
                                              "\"right\"");
}

/* m:trsm(X [, "lower"|"upper"|"right"]) -> seconds: with m's LU factors,
   X := L^{-1} X (unit lower), U^{-1} X, or X U^{-1}, for every matrix. */
static int bat_trsm(lua_State *L) {
  odbL_bat *m = bat_check(L, 1), *x = bat_check(L, 2);
  odb_batched_trsm_kind kind = trsm_kind(L, 3);
  double sec = 0, t0 = 0;
  bat_same(L, m, x, "trsm");
  if (!m->factored)
    return luaL_error(L, "ob.batched trsm: call lu() first");
  if (x == m) return luaL_error(L, "ob.batched trsm: X must not be A");
  raise_on(L, m->ops->tic(&t0));
  raise_on(L, m->ops->trsm(&m->bt, m->variant, kind, m->a, x->a));
  raise_on(L, m->ops->toc(t0, &sec));
  x->factored = 0;
  lua_pushnumber(L, sec);
  return 1;
}

/* Buffers of a batched benchmark (in the backend's memory). */
typedef struct bat_bufs {
  double *orig, *work, *x0, *x, *y;
} bat_bufs;

static void bat_bench_free(const odbL_bat *m, bat_bufs *w) {
  m->ops->free(w->orig);
  m->ops->free(w->work);
  m->ops->free(w->x0);
  m->ops->free(w->x);
  m->ops->free(w->y);
}

/* One rep of op on our kernels (variant v; CPU: the one kernel). */
static odb_status bench_ours(odbL_bat *m, odb_batched_op op, int v,
                             bat_bufs *w, double *sec) {
  const odb_batched_ops *ops = m->ops;
  size_t ml = odb_batch_mat_len(&m->bt), rl = odb_batch_rhs_len(&m->bt, 1);
  double t0 = 0;
  switch (op) {
  case ODB_BATCHED_OP_LU:
    ODB_TRY(ops->copy(w->work, w->orig, ml));
    ODB_TRY(ops->tic(&t0));
    ODB_TRY(ops->lu_launch(&m->bt, v, w->work));
    break;
  case ODB_BATCHED_OP_SOLVE:
    ODB_TRY(ops->copy(w->x, w->x0, rl));
    ODB_TRY(ops->tic(&t0));
    ODB_TRY(ops->lu_solve(&m->bt, v, w->work, w->x));
    break;
  case ODB_BATCHED_OP_TRSM:
    ODB_TRY(ops->copy(w->x, w->x0, ml));
    ODB_TRY(ops->tic(&t0));
    ODB_TRY(ops->trsm(&m->bt, v, ODB_TRSM_LEFT_LOWER_UNIT, w->work, w->x));
    break;
  case ODB_BATCHED_OP_GEMM:
    ODB_TRY(ops->tic(&t0));
    ODB_TRY(ops->gemm(&m->bt, v, 1.0, w->orig, w->x0, 0.0, w->y));
    break;
  default:   /* GEMV */
    ODB_TRY(ops->tic(&t0));
    ODB_TRY(ops->gemv(&m->bt, v, 1.0, w->orig, w->x0, 0.0, w->y));
    break;
  }
  return ops->toc(t0, sec);
}

/* One timed run of a bench for odb_measure_run. */
typedef struct bat_run {
  odbL_bat *m;
  odb_batched_op op;
  int v;
  bat_bufs *w;
} bat_run;

static odb_status bench_sample(void *ud, double *sec) {
  bat_run *r = ud;
  return bench_ours(r->m, r->op, r->v, r->w, sec);
}

/* Prepares the buffers of op: orig = the matrices, work = their factors
   where the op needs them, x0 random operands, x and y outputs. */
static odb_status bench_prepare(odbL_bat *m, odb_batched_op op, bat_bufs *w) {
  const odb_batched_ops *ops = m->ops;
  size_t ml = odb_batch_mat_len(&m->bt), rl = odb_batch_rhs_len(&m->bt, 1);
  size_t xl = op == ODB_BATCHED_OP_TRSM || op == ODB_BATCHED_OP_GEMM ? ml
                                                                     : rl;
  int cols = xl == ml ? m->bt.b : 1;
  ODB_TRY(ops->alloc(ml, &w->orig));
  ODB_TRY(ops->copy(w->orig, m->a, ml));
  if (op == ODB_BATCHED_OP_LU || op == ODB_BATCHED_OP_SOLVE ||
      op == ODB_BATCHED_OP_TRSM) {
    ODB_TRY(ops->alloc(ml, &w->work));
    ODB_TRY(ops->copy(w->work, w->orig, ml));
  }
  if (op == ODB_BATCHED_OP_LU) return ODB_OK;
  ODB_TRY(ops->alloc(xl, &w->x0));
  ODB_TRY(ops->random_rhs(&m->bt, cols, 7, w->x0));
  if (op == ODB_BATCHED_OP_SOLVE || op == ODB_BATCHED_OP_TRSM) {
    ODB_TRY(ops->alloc(xl, &w->x));
    return ops->lu(&m->bt, 0, w->work);
  }
  return ops->alloc(xl, &w->y);
}

/*
** m:bench{op="lu"|"solve"|"trsm"|"gemm"|"gemv", reps=, measure=, variant=}
** -> {seconds (the median), best, bytes, gbs, gbs_best, median, q1, q3,
** spread, reps, variant, op, backend}, also a results row (kind
** "batched"). reps: exactly that many timed runs; else as measure and
** --measure say (odb_lua_measure.c: a warm-up, 3 to 25 runs). The
** matrices are left as they are (they must not be factored): lu factors a
** copy each rep (the copy not timed); solve and trsm use the factors of a
** copy and a random operand reset each rep; gemm and gemv write a separate
** output. cuda: device event times; variant auto|serial|serial2|team, or
** "cublas" / "cublas_nopiv" (lu and solve: the backend's baseline_bench,
** cublasDgetrfBatched / getrsBatched on column-major copies, with /
** without partial pivoting). bytes: the fewest the op moves
** (odb_batched_min_bytes: each operand read once, what changes written
** once), with the row's floor fields (odbL_floor_fields).
*/
static int bat_bench(lua_State *L) {
  static const char *const keys[] = { "op", "reps", "variant", "measure",
                                      NULL };
  odbL_bat *m = bat_check(L, 1);
  const odb_batched_ops *ops = m->ops;
  odbL_state *S;
  odb_measure_opts mo;
  odb_measurement meas;
  bat_bufs w;
  odb_batched_op op;
  int v = m->variant;
  odb_status st = ODB_OK;
  int blas = 0, pivot = 0;
  memset(&w, 0, sizeof w);
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  raise_on(L, odb_batched_op_parse(odbL_opt_string(L, 2, "op", "lu"), &op));
  odbL_check_not_in_callback(L, "m:bench");
  S = odbL_state_get(L);
  odbL_bt_measure(L, 2, &mo);
  const char *vn = odbL_opt_string(L, 2, "variant", NULL);
  if (m->factored)
    return luaL_error(L, "ob.batched bench: the matrices hold LU factors "
                      "(random or set first)");
  if (vn && (strcmp(vn, "cublas") == 0 || strcmp(vn, "cublas_nopiv") == 0)) {
    if (!ops->baseline_bench)
      return luaL_error(L, "ob.batched bench: variant %s needs backend "
                        "\"cuda\"", vn);
    if (op != ODB_BATCHED_OP_LU && op != ODB_BATCHED_OP_SOLVE)
      return luaL_error(L, "ob.batched bench: cuBLAS is measured for lu and "
                        "solve only");
    blas = 1;
    pivot = strcmp(vn, "cublas") == 0;
  } else if (vn) {
    v = odbL_bt_variant(L, 2, ops, "ob.batched bench");
  }
  const char *name;
  if (blas) {
    /* the vendor's batch: max_reps runs timed inside, summarized */
    double *times = malloc((size_t)mo.max_reps * sizeof *times);
    name = pivot ? "cublas" : "cublas_nopiv";
    st = times ? ops->baseline_bench(&m->bt, m->a, op, pivot, mo.max_reps,
                                     times)
               : ODB_FAIL(ODB_ERR_NOMEM, "ob.batched bench: timing samples");
    if (st == ODB_OK) odb_measure_summarize(times, mo.max_reps, &meas);
    free(times);
  } else {
    bat_run run;
    raise_on(L, ops->resolve(&m->bt, op, v, &v));
    name = ops->variant_name(v);
    st = bench_prepare(m, op, &w);
    run = (bat_run){ m, op, v, &w };
    if (st == ODB_OK)
      st = odb_measure_run(bench_sample, &run, &mo, S->ctx, &meas, NULL);
    bat_bench_free(m, &w);
  }
  raise_on(L, st);
  {
    double r, w, touched;
    odb_batched_min_bytes(&m->bt, op, pivot, &r, &w, &touched);
    odbL_bt_push_bench(L, &meas, r, w, touched, name, odb_batched_op_name(op),
                       ops->backend, "batched");
  }
  return 1;
}

/* m:info() -> {n, block, layout, vl, packs, backend, variant, factored,
   bytes (of the matrices, padding included)}. */
static int bat_info(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  lua_createtable(L, 0, 9);
  lua_pushinteger(L, m->bt.n);
  lua_setfield(L, -2, "n");
  lua_pushinteger(L, m->bt.b);
  lua_setfield(L, -2, "block");
  lua_pushstring(L, odb_batched_layout_name(m->bt.layout));
  lua_setfield(L, -2, "layout");
  lua_pushinteger(L, m->bt.vl);
  lua_setfield(L, -2, "vl");
  lua_pushinteger(L, m->bt.packs);
  lua_setfield(L, -2, "packs");
  lua_pushstring(L, m->ops->backend);
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, m->ops->variant_name(m->variant));
  lua_setfield(L, -2, "variant");
  lua_pushboolean(L, m->factored);
  lua_setfield(L, -2, "factored");
  lua_pushnumber(L, 8.0 * (double)odb_batch_mat_len(&m->bt));
  lua_setfield(L, -2, "bytes");
  return 1;
}

/* m:close(), __gc and __close. */
static int bat_close(lua_State *L) {
  odbL_bat *m = luaL_checkudata(L, 1, ODBL_BAT);
  if (m->open) m->ops->free(m->a);
  m->a = NULL;
  m->open = 0;
  return 0;
}

static void bat_meta(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"random", bat_random}, {"set", bat_set}, {"get", bat_get},
    {"lu", bat_lu}, {"solve", bat_solve}, {"gemv", bat_gemv},
    {"gemm", bat_gemm}, {"trsm", bat_trsm}, {"bench", bat_bench},
    {"info", bat_info}, {"matrices", bat_matrices}, {"close", bat_close},
    {NULL, NULL}
  };
  if (luaL_newmetatable(L, ODBL_BAT)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, bat_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, bat_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}

/*
** The user's matrices of ob.batched{data = ...} (see the top of the file):
** the array at the top of the stack as n matrices of block x block, into
** *n and *block; refused with the reason (complex, a shape that is not a
** stack of square blocks, n or block given and different, NaN).
*/
static void data_shape(lua_State *L, const odbL_vector *v, const long *dims,
                       int cx, long *n, int *block) {
  long r = dims[0], c = dims[1];
  if (cx)
    luaL_error(L, "ob.batched: data: complex ('<c16') matrices are not taken "
               "(real float64 only)");
  if (c < ODB_BATCHED_MIN_B || c > ODB_BATCHED_MAX_B || r < c || r % c)
    luaL_error(L, "ob.batched: data: shape {%I, %I} is not a stack of B x B "
               "matrices (batch*B, B) with B (the columns) in %d..%d and "
               "the rows a multiple of B", (lua_Integer)r, (lua_Integer)c,
               ODB_BATCHED_MIN_B, ODB_BATCHED_MAX_B);
  if (odbL_bt_has_fields(L, "n", NULL, NULL) &&
      odbL_opt_int_range(L, 1, 1, "n", "n", 1, (lua_Integer)1 << 40, 1) !=
          r / c)
    luaL_error(L, "ob.batched: n = %I but data holds %I matrices of %I x %I "
               "(shape {%I, %I})", (lua_Integer)odbL_opt_int_range(L, 1, 1,
               "n", "n", 1, (lua_Integer)1 << 40, 1), (lua_Integer)(r / c),
               (lua_Integer)c, (lua_Integer)c, (lua_Integer)r,
               (lua_Integer)c);
  if (odbL_bt_has_fields(L, "block", NULL, NULL) &&
      odbL_opt_int_range(L, 1, 1, "block", "block", ODB_BATCHED_MIN_B,
                         ODB_BATCHED_MAX_B, ODB_BATCHED_MIN_B) != c)
    luaL_error(L, "ob.batched: block = %I but data holds %I x %I matrices "
               "(shape {%I, %I})", (lua_Integer)odbL_opt_int_range(L, 1, 1,
               "block", "block", ODB_BATCHED_MIN_B, ODB_BATCHED_MAX_B,
               ODB_BATCHED_MIN_B), (lua_Integer)c, (lua_Integer)c,
               (lua_Integer)r, (lua_Integer)c);
  for (long e = 0; e < v->n; ++e)
    if (isnan(v->v[e]))
      luaL_error(L, "ob.batched: data: matrix %I, row %I, column %I is NaN",
                 (lua_Integer)(e / (c * c) + 1),
                 (lua_Integer)(e / c % c + 1), (lua_Integer)(e % c + 1));
  *n = r / c;
  *block = (int)c;
}

/*
** ob.batched{n=, block=, data=, layout="compact"|"standard", vl=0,
** backend="cpu"|"cuda", variant="auto"}: n matrices block x block (block
** 2..32), identity until random or set; or the user's matrices, data: a
** Vector of shape (n*block, block) or a file ob.load reads (n and block
** then come from it). vl: lanes per pack (CPU: 1, 2, 4, 8, 16, 0 = the
** SIMD width; cuda: also 32, 0 = 16). variant (cuda): the thread mapping
** of the kernels (odb_batched_gpu.h).
*/
int odbL_batched(lua_State *L) {
  static const char *const keys[] = { "n", "block", "layout", "vl",
                                      "backend", "variant", "data", NULL };
  odb_batched_layout layout;
  odbL_vector *data = NULL;
  long n;
  int block;
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  if (lua_getfield(L, 1, "data") != LUA_TNIL) {
    long dims[2];
    int cx = 0;
    data = odbL_array_arg(L, -1, "ob.batched", "data", 1, dims, &cx);
    data_shape(L, data, dims, cx, &n, &block);
  } else {
    if (!odbL_bt_has_fields(L, "n", "block", NULL))
      return luaL_error(L, "ob.batched: n and block are required (or "
                        "data)");
    n = (long)odbL_opt_int_range(L, 1, 1, "n", "n", 1,
                                 (lua_Integer)1 << 40, 1);
    block = (int)odbL_opt_int_range(L, 1, 1, "block", "block",
                                    ODB_BATCHED_MIN_B, ODB_BATCHED_MAX_B,
                                    ODB_BATCHED_MIN_B);
  }
  int vl = (int)odbL_opt_int_range(L, 1, 1, "vl", "vl", 0, 64, 0);
  raise_on(L, odb_batched_layout_parse(
                odbL_opt_string(L, 1, "layout", "compact"), &layout));
  const odb_batched_ops *ops = odbL_bt_backend(L, 1, "ob.batched");
  int var = odbL_bt_variant(L, 1, ops, "ob.batched");
  odb_batch bt;
  char what[96];
  if (ops->batch_init(&bt, layout, n, block, vl) != ODB_OK)
    return luaL_error(L, "ob.batched: %s", odb_last_error());
  if (var != 0) {
    int r;
    raise_on(L, ops->resolve(&bt, ODB_BATCHED_OP_LU, var, &r));
  }
  snprintf(what, sizeof what, "n = %ld matrices of %d x %d", (long)n, block,
           block);
  if (ops->check_memory(8.0 * (double)odb_batch_mat_len(&bt), what) !=
      ODB_OK)
    return luaL_error(L, "ob.batched: %s", odb_last_error());
  bat_meta(L);
  odbL_gc_external(L, sizeof(double) * (double)odb_batch_mat_len(&bt));
  odbL_bat *m = lua_newuserdatauv(L, sizeof *m, 0);
  memset(m, 0, sizeof *m);
  m->bt = bt;
  m->ops = ops;
  m->variant = var;
  luaL_setmetatable(L, ODBL_BAT);
  size_t ml = odb_batch_mat_len(&bt);
  if (ops->alloc(ml, &m->a) != ODB_OK) {
    char size[32];
    return luaL_error(L, "ob.batched: out of %s memory: n = %I matrices of "
                      "%d x %d need %s (%I bytes)%s%s", ops->memory,
                      (lua_Integer)n, block, block,
                      odbL_format_bytes(8.0 * (double)ml, size, sizeof size),
                      (lua_Integer)(ml * sizeof(double)),
                      ops->says_why ? "; " : "",
                      ops->says_why ? odb_last_error() : "");
  }
  m->open = 1;
  if (!data) {
    raise_on(L, ops->identity(&bt, m->a));   /* padding included */
  } else if (strcmp(ops->memory, "host") == 0) {
    odb_batched_pack(&bt, data->v, m->a);    /* padding: identity */
  } else {                                   /* packed on the host, copied */
    double *host = lua_newuserdatauv(L, ml * sizeof *host, 0);
    odb_batched_pack(&bt, data->v, host);
    raise_on(L, ops->upload(m->a, host, ml));
    lua_pop(L, 1);
  }
  return 1;
}

/* }====== */
