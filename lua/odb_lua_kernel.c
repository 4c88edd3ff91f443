/* odb_lua_kernel.c - ob.kernel(name, shape): a dense kernel tuned per
   shape (the tall & skinny products of odb_tsm.h), through the ops table
   of its backend (odb_tsm_impl.h: "cpu", or "cuda" in builds with CUDA).

   The inputs are random (seeded by the run) unless the user gives them:
   A and the op's second input (B for tsmttsm, C for tsmm), each a Vector
   with a 2-D shape (ob.load's, or v:reshape's) or the name of a file
   ob.load reads. The shape M, N, K then comes from them, checked against
   the op here (the engine assumes it), and the backend's load copies them
   in place of the random ones, so time, compare and check run on them;
   k:result() hands the product back as a Vector with its shape. */
#include "odb_lua.h"

#include <string.h>

#include "odb_tsm_impl.h"

#define ODBL_KERNEL "odebench.Kernel"

/* One product of a shape on its backend; run is NULL once closed. */
typedef struct odbL_tsmk {
  const odb_tsm_ops *ops;
  odb_tsm_run *run;
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, K;
  int user;              /* 1: the inputs are the user's */
} odbL_tsmk;

/* Raises the recorded message when st is a failure. */
static void raise_on(lua_State *L, odb_status st) {
  if (st != ODB_OK) luaL_error(L, "%s", odb_last_error());
}

/* The open kernel at idx; raises when closed. */
static odbL_tsmk *kernel_check(lua_State *L, int idx) {
  odbL_tsmk *k = luaL_checkudata(L, idx, ODBL_KERNEL);
  if (!k->run) luaL_argerror(L, idx, "the kernel is closed");
  return k;
}

/*
** How a timing call runs, from its optional argument at idx: a count is
** exactly that many timed runs (min_reps = max_reps = reps, as before
** measure existed), a table is a measure table (odb_lua_measure.c),
** nothing is odb_measure's defaults; --measure applies over each.
*/
static void opt_measure(lua_State *L, int idx, odb_measure_opts *o) {
  memset(o, 0, sizeof *o);
  if (lua_type(L, idx) == LUA_TTABLE) {
    odbL_measure_read(L, idx, idx, o);
  } else if (!lua_isnoneornil(L, idx)) {
    int reps = (int)odbL_check_int_range(L, idx, "reps", 1, 1000);
    o->min_reps = o->max_reps = reps;
  }
  odbL_measure_final(L, o);
}

/* GFLOP/s of the kernel at sec seconds a run. */
static double gflops(const odbL_tsmk *k, double sec) {
  return odb_tsm_flops(k->t, k->M, k->N, k->K) / sec * 1e-9;
}

/*
** The floor fields of the row on top (odbL_floor_fields): A and the
** second input read once, the output written once (odb_tsm_min_bytes).
** A^T B writes only its M x N C, so its floor is nearly all at the read
** bandwidth: the roofline of Ernst et al. is min(I b_read, P) for it.
*/
static void kernel_floor(lua_State *L, const odbL_tsmk *k, double median) {
  odb_tsm_desc d;
  double r, w;
  k->ops->describe(k->run, &d);
  odb_tsm_min_bytes(k->op, k->t, k->M, k->N, k->K, &r, &w);
  odbL_floor_fields(L, -1, NULL, k->ops->backend, d.threads, r, w, r + w,
                    median);
}

/* Pushes the row of a timing {kind = "kernel", name, dtype, M, N, K,
   backend, timed, seconds, gflops, median, q1, q3, spread, reps,
   floor_bytes, floor_pct, floor_bw[, floor_note]} and records it as a
   results row; leaves it on the stack. */
static void push_row(lua_State *L, const odbL_tsmk *k, const char *timed,
                     const odb_measurement *m) {
  lua_createtable(L, 0, 16);
  lua_pushstring(L, odb_tsm_op_name(k->op));
  lua_setfield(L, -2, "name");
  lua_pushstring(L, odb_tsm_dtype_name(k->t));
  lua_setfield(L, -2, "dtype");
  lua_pushinteger(L, k->M);
  lua_setfield(L, -2, "M");
  lua_pushinteger(L, k->N);
  lua_setfield(L, -2, "N");
  lua_pushinteger(L, k->K);
  lua_setfield(L, -2, "K");
  lua_pushstring(L, k->ops->backend);
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, timed);
  lua_setfield(L, -2, "timed");
  lua_pushstring(L, k->user ? "user" : "random");
  lua_setfield(L, -2, "data");
  lua_pushnumber(L, m->median);
  lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, gflops(k, m->median));
  lua_setfield(L, -2, "gflops");
  odbL_measure_fields(L, -1, NULL, m);
  kernel_floor(L, k, m->median);
}

/* seconds (the median), GFLOP/s and the row of one timing. */
static int push_timing(lua_State *L, const odbL_tsmk *k, const char *timed,
                       const odb_measurement *m) {
  lua_pushnumber(L, m->median);
  lua_pushnumber(L, gflops(k, m->median));
  push_row(L, k, timed, m);
  odbL_measure_row(L, -1, "kernel");
  return 3;
}

/* k:time([reps | measure]) -> median seconds, GFLOP/s of the kernel, and
   the row (median, q1, q3, spread, reps, ...). */
static int kernel_time(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  odbL_state *S = odbL_state_get(L);
  odb_measure_opts o;
  odb_measurement m;
  odbL_check_not_in_callback(L, "k:time");
  opt_measure(L, 2, &o);
  raise_on(L, k->ops->time(k->run, &o, S->ctx, &m));
  return push_timing(L, k, k->ops->backend, &m);
}

/* k:cublas([reps | measure]) -> the same for cuBLAS on the same data. */
static int kernel_cublas(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  odbL_state *S = odbL_state_get(L);
  odb_measure_opts o;
  odb_measurement m;
  odbL_check_not_in_callback(L, "k:cublas");
  if (!k->ops->peer_time)
    return luaL_error(L, "k:cublas: this kernel runs on the CPU (backend "
                      "'cpu'); k:compare times it against the plain loop");
  opt_measure(L, 2, &o);
  raise_on(L, k->ops->peer_time(k->run, &o, S->ctx, &m));
  return push_timing(L, k, k->ops->peer, &m);
}

/*
** k:compare([reps | measure]) -> seconds, GFLOP/s of the kernel, then of
** its peer (cuBLAS on the GPU, the plain loop on the CPU), from rounds
** that run both in turn (same clocks for both), then the speed-up over
** the peer as {q1, median, q3}: the ratio of the medians (peer over ours)
** with the range from the quartiles, peer q1 / our q3 to peer q3 / our q1
** (odb_measure_ratio), which holds it; then the row (ours, with the
** peer's median, q1, q3, spread and the speed-up as peer_* and speedup*).
*/
static int kernel_compare(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  odbL_state *S = odbL_state_get(L);
  odb_measure_opts o;
  odb_measurement mine, peer;
  double q[3];
  odbL_check_not_in_callback(L, "k:compare");
  opt_measure(L, 2, &o);
  raise_on(L, k->ops->compare(k->run, &o, S->ctx, &mine, &peer));
  odb_measure_ratio(&peer, &mine, q);
  lua_pushnumber(L, mine.median);
  lua_pushnumber(L, gflops(k, mine.median));
  lua_pushnumber(L, peer.median);
  lua_pushnumber(L, gflops(k, peer.median));
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; ++i) {
    lua_pushnumber(L, q[i]);
    lua_rawseti(L, -2, i + 1);
  }
  push_row(L, k, k->ops->backend, &mine);
  lua_pushstring(L, k->ops->peer);
  lua_setfield(L, -2, "peer");
  lua_pushnumber(L, peer.median);
  lua_setfield(L, -2, "peer_median");
  lua_pushnumber(L, peer.p25);
  lua_setfield(L, -2, "peer_q1");
  lua_pushnumber(L, peer.p75);
  lua_setfield(L, -2, "peer_q3");
  lua_pushnumber(L, peer.spread);
  lua_setfield(L, -2, "peer_spread");
  lua_pushnumber(L, q[1]);
  lua_setfield(L, -2, "speedup");
  lua_pushnumber(L, q[0]);
  lua_setfield(L, -2, "speedup_q1");
  lua_pushnumber(L, q[2]);
  lua_setfield(L, -2, "speedup_q3");
  odbL_measure_row(L, -1, "kernel");
  return 6;
}

/* k:check() -> relative Frobenius difference from the CPU reference (and,
   on the GPU, from cuBLAS; on the CPU, of the plain loop too). */
static int kernel_checkm(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  double err = 0;
  raise_on(L, k->ops->check(k->run, &err));
  lua_pushnumber(L, err);
  return 1;
}

/* k:result() -> Vector: one product of the inputs (the user's or the
   random ones), C (M x N) for tsmttsm or B (K x N) for tsmm, with that
   shape (complex: '<c16', interleaved pairs); v:save writes it. */
static int kernel_result(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  size_t na, nx, nout;
  long dims[2] = { k->op == ODB_TSM_TSMTTSM ? k->M : k->K, k->N };
  odbL_check_not_in_callback(L, "k:result");
  raise_on(L, odb_tsm_sizes(k->op, k->t, k->M, k->N, k->K, &na, &nx, &nout));
  odbL_vector *v = odbL_vector_new(L, (long)nout);
  raise_on(L, k->ops->result(k->run, v->v));
  odbL_vector_set_shape(L, -1, 2, dims, k->t == ODB_TSM_Z);
  return 1;
}

/* Sets t[key] = v for the table on top. */
static void set_int(lua_State *L, const char *key, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}

/* k:info() -> {name, dtype, M, N, K, backend, peer, config, regs, raced,
   race_changed, evals, cached, threads, flops, bytes}. */
static int kernel_info(lua_State *L) {
  odbL_tsmk *k = kernel_check(L, 1);
  odb_tsm_desc d;
  k->ops->describe(k->run, &d);
  lua_createtable(L, 0, 16);
  lua_pushstring(L, odb_tsm_op_name(k->op));
  lua_setfield(L, -2, "name");
  lua_pushstring(L, odb_tsm_dtype_name(k->t));
  lua_setfield(L, -2, "dtype");
  set_int(L, "M", k->M);
  set_int(L, "N", k->N);
  set_int(L, "K", k->K);
  lua_pushstring(L, k->ops->backend);
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, k->ops->peer);
  lua_setfield(L, -2, "peer");
  lua_pushstring(L, d.config);
  lua_setfield(L, -2, "config");
  if (d.tuned) {
    set_int(L, "regs", d.regs);
    set_int(L, "raced", d.raced);
    lua_pushboolean(L, d.race_changed);
    lua_setfield(L, -2, "race_changed");
  } else {
    set_int(L, "threads", d.threads);
  }
  lua_pushstring(L, k->user ? "user" : "random");
  lua_setfield(L, -2, "data");
  set_int(L, "evals", d.evals);
  set_int(L, "cached", d.cached);
  lua_pushnumber(L, odb_tsm_flops(k->t, k->M, k->N, k->K));
  lua_setfield(L, -2, "flops");
  lua_pushnumber(L, odb_tsm_bytes(k->t, k->M, k->N, k->K));
  lua_setfield(L, -2, "bytes");
  return 1;
}

/* k:close(), __gc and __close: frees the matrices. */
static int kernel_close(lua_State *L) {
  odbL_tsmk *k = luaL_checkudata(L, 1, ODBL_KERNEL);
  if (k->run) k->ops->destroy(k->run);
  k->run = NULL;
  return 0;
}

/* Creates the metatable once. */
static void kernel_meta(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"time", kernel_time}, {"cublas", kernel_cublas},
    {"compare", kernel_compare},
    {"check", kernel_checkm}, {"info", kernel_info},
    {"result", kernel_result},
    {"close", kernel_close}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, ODBL_KERNEL)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, kernel_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, kernel_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}

/* Whether the option table (argument 2) has field k. */
static int has_int(lua_State *L, const char *k) {
  int have = lua_getfield(L, 2, k) != LUA_TNIL;
  lua_pop(L, 1);
  return have;
}

/* backend = "auto" | "cuda" | "cpu": its table, the one place it is
   looked up (auto: cuda where this run can use it, else cpu). */
static const odb_tsm_ops *read_backend(lua_State *L, odb_ctx *ctx) {
  const char *b = odbL_opt_string(L, 2, "backend", "auto");
  const odb_tsm_ops *ops;
  if (strcmp(b, "auto") == 0) {
    ops = odb_tsm_impl_get("cuda");
    return ops && ops->ready(ctx) == ODB_OK ? ops : &odb_tsm_cpu_ops;
  }
  if (strcmp(b, "cpu") != 0 && strcmp(b, "cuda") != 0)
    luaL_error(L, "ob.kernel: backend '%s' (expected auto, cuda or cpu)", b);
  if (odb_tsm_impl_find(b, &ops) != ODB_OK || ops->ready(ctx) != ODB_OK)
    luaL_error(L, "ob.kernel: %s", odb_last_error());
  return ops;
}

/*
** The user's matrix in field `name` of the options (argument 2) pushed as
** a Vector (odbL_array_arg: a Vector with a 2-D shape, or a file), with
** its rows, columns and whether it is complex; NULL, with nothing pushed,
** when the field is absent.
*/
static odbL_vector *user_matrix(lua_State *L, const char *name, long *rows,
                                long *cols, int *cx) {
  long d[2];
  odbL_vector *v;
  if (lua_getfield(L, 2, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  v = odbL_array_arg(L, -1, "ob.kernel", name, 1, d, cx);
  lua_remove(L, -2);                 /* the field's value */
  *rows = d[0];
  *cols = d[1];
  return v;
}

/* The dtype name of a user matrix. */
static const char *npy_dtype(int cx) { return cx ? "'<c16'" : "'<f8'"; }

/*
** The shape of the user's inputs A (ar x ac) and X (xr x xc, named xn):
** *M, *N, *K and *t, checked against the op and against M, N, K and dtype
** when the options give them too. Raises naming the matrix, the shape
** expected and the one given.
*/
static void user_shape(lua_State *L, odb_tsm_op op, const char *xn, long ar,
                       long ac, int acx, long xr, long xc, int xcx, long *M,
                       long *N, long *K, odb_tsm_dtype *t) {
  static const char *const dims[] = { "M", "N", "K" };
  long got[3], *want[3] = { M, N, K };
  if (op == ODB_TSM_TSMTTSM && xr != ar)
    luaL_error(L, "ob.kernel: tsmttsm (C = A^T B): B must be K x N with "
               "K = %I, the rows of A (%I x %I), got %I x %I",
               (lua_Integer)ar, (lua_Integer)ar, (lua_Integer)ac,
               (lua_Integer)xr, (lua_Integer)xc);
  if (op == ODB_TSM_TSMM && xr != ac)
    luaL_error(L, "ob.kernel: tsmm (B = A C): C must be M x N with M = %I, "
               "the columns of A (%I x %I), got %I x %I", (lua_Integer)ac,
               (lua_Integer)ar, (lua_Integer)ac, (lua_Integer)xr,
               (lua_Integer)xc);
  if (acx != xcx)
    luaL_error(L, "ob.kernel: A is %s and %s %s: both real ('<f8') or both "
               "complex ('<c16')", npy_dtype(acx), xn, npy_dtype(xcx));
  if (has_int(L, "dtype") && (*t == ODB_TSM_Z) != acx)
    luaL_error(L, "ob.kernel: dtype '%s' but A and %s are %s",
               odb_tsm_dtype_name(*t), xn, npy_dtype(acx));
  *t = acx ? ODB_TSM_Z : ODB_TSM_D;
  got[0] = ac;
  got[1] = xc;
  got[2] = ar;
  for (int i = 0; i < 3; ++i) {
    if (has_int(L, dims[i]) && *want[i] != got[i])
      luaL_error(L, "ob.kernel: %s = %I but A is %I x %I and %s %I x %I",
                 dims[i], (lua_Integer)*want[i], (lua_Integer)ar,
                 (lua_Integer)ac, xn, (lua_Integer)xr, (lua_Integer)xc);
    *want[i] = got[i];
  }
  if (*M < 1 || *M > ODB_TSM_MAX_WIDTH || *N < 1 || *N > ODB_TSM_MAX_WIDTH ||
      *K < 1)
    luaL_error(L, "ob.kernel: A is %I x %I and %s %I x %I: K (the rows of "
               "A) must be at least 1, M and N (the columns) in 1..%d",
               (lua_Integer)ar, (lua_Integer)ac, xn, (lua_Integer)xr,
               (lua_Integer)xc, ODB_TSM_MAX_WIDTH);
}

/*
** ob.kernel(name, {M=, N=, K=, A=, B= | C=, dtype="d"|"z",
** backend="auto"|"cuda"|"cpu", space="quick"|"full", threads=}): name is
** "tsmttsm" (C = A^T B) or "tsmm" (B = A C). On the GPU it tunes on first
** use (the tuning database keeps the result, so later runs start at once);
** on the CPU it runs the threaded CPU version (threads: 0, the default,
** one per core). A with B (tsmttsm) or C (tsmm): the user's inputs (see
** the top of the file), which give M, N, K and the dtype; without them
** M, N and K are required and the inputs are random.
*/
int odbL_kernel(lua_State *L) {
  static const char *const keys[] = { "M", "N", "K", "dtype", "space",
                                      "backend", "threads", "A", "B", "C",
                                      NULL };
  odbL_state *S = odbL_state_get(L);
  const char *name = luaL_checkstring(L, 1);
  long M, N, K, threads, ar = 0, ac = 0, xr = 0, xc = 0;
  size_t na, nx, nout;
  const char *dt, *space, *xn, *other;
  const odb_tsm_ops *ops;
  odbL_vector *ua, *ux;
  odbL_tsmk *k;
  odb_tsm_op op;
  odb_tsm_dtype t;
  int acx = 0, xcx = 0;
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  raise_on(L, odb_tsm_op_parse(name, &op));
  xn = op == ODB_TSM_TSMM ? "C" : "B";
  other = op == ODB_TSM_TSMM ? "B" : "C";
  if (has_int(L, other))
    return luaL_error(L, "ob.kernel: %s takes A and %s; %s is its output",
                      op == ODB_TSM_TSMM ? "tsmm (B = A C)"
                                         : "tsmttsm (C = A^T B)", xn, other);
  if (!has_int(L, "A") && !has_int(L, xn) &&
      (!has_int(L, "M") || !has_int(L, "N") || !has_int(L, "K")))
    return luaL_error(L, "ob.kernel: M, N and K are required (or the "
                      "matrices A and %s)", xn);
  /* K any positive count: whether its matrices fit is odb_tsm_sizes's
     to say (with the bytes they would need) */
  M = (long)odbL_opt_int_range(L, 2, 2, "M", "M", 1, ODB_TSM_MAX_WIDTH, 1);
  N = (long)odbL_opt_int_range(L, 2, 2, "N", "N", 1, ODB_TSM_MAX_WIDTH, 1);
  K = (long)odbL_opt_int_range(L, 2, 2, "K", "K", 1, LUA_MAXINTEGER, 1);
  dt = odbL_opt_string(L, 2, "dtype", "d");
  space = odbL_opt_string(L, 2, "space", "quick");
  if (strcmp(space, "quick") != 0 && strcmp(space, "full") != 0)
    return luaL_error(L, "ob.kernel: space '%s' (expected quick or full)",
                      space);
  raise_on(L, odb_tsm_dtype_parse(dt, &t));
  ua = user_matrix(L, "A", &ar, &ac, &acx);      /* pushed: stays alive */
  ux = user_matrix(L, xn, &xr, &xc, &xcx);
  if (!ua != !ux)
    return luaL_error(L, "ob.kernel: %s takes A and %s together (the "
                      "inputs to use), or neither (random inputs)", name,
                      xn);
  if (ua)
    user_shape(L, op, xn, ar, ac, acx, xr, xc, xcx, &M, &N, &K, &t);
  raise_on(L, odb_tsm_check_shape(M, N, K, 1));
  if (odb_tsm_sizes(op, t, M, N, K, &na, &nx, &nout) != ODB_OK)
    return luaL_error(L, "ob.kernel: %s", odb_last_error());
  ops = read_backend(L, S->ctx);
  if (has_int(L, "threads") && !ops->takes_threads)
    return luaL_error(L, "ob.kernel: threads is an option of the CPU "
                      "version (backend 'cpu')");
  threads = (long)odbL_opt_int_range(L, 2, 2, "threads", "threads", 0, 256,
                                     0);   /* 0: one per core */
  kernel_meta(L);
  /* A, B and C (K x M, K x N, M x N entries; tsmm: A, C and B), and on
     the GPU their host copies */
  odbL_gc_external(L, ops->copies * 8.0 * (double)(na + nx + nout));
  k = lua_newuserdatauv(L, sizeof *k, 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, ODBL_KERNEL);
  k->ops = ops;
  k->op = op;
  k->t = t;
  k->M = M;
  k->N = N;
  k->K = K;
  raise_on(L, ops->create(S->ctx, op, t, M, N, K,
                          strcmp(space, "full") == 0, (int)threads,
                          S->ctx->seed, &k->run));
  if (ua) {
    raise_on(L, ops->load(k->run, ua->v, ux->v));
    k->user = 1;
  }
  return 1;
}
