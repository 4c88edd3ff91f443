/* odb_lua_blocktridiag.c - ob.blocktridiag{...}: many block-tridiagonal
   lines (factor, solve, benchmarks) through the ops table of the backend
   asked for (odb_batched_impl.h: "cpu", or "cuda" in builds with CUDA,
   which keeps a device copy of the blocks in step with the host ones).

   Lines and rows are 1-based in Lua, and so is every index in the
   messages here (odbL_int_in_range; the bad-pivot error is worded here).
   factor() is all or nothing (the table's btd_factor: the CPU checks every
   pivot before it writes a block, the GPU restores a device copy), so that
   a failure leaves every block as it was. */
#include "odb_lua.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odb_batched.h"
#include "odb_lua_batched.h"

#define ODBL_BTD "odebench.BlockTridiag"

/* Raises the recorded message when st is a failure. */
static void raise_on(lua_State *L, odb_status st) {
  if (st != ODB_OK) luaL_error(L, "%s", odb_last_error());
}

/* {====== ob.blocktridiag */

typedef struct odbL_btd {
  odb_blocktridiag *t;   /* NULL once closed; the host blocks and the shape */
  const odb_batched_ops *ops;   /* the backend */
  odb_btd_state *s;      /* the backend's state (cuda: the device blocks) */
  int variant;           /* the backend's variant (0: auto) */
} odbL_btd;

/* The open object at idx; raises when closed. */
static odbL_btd *btd_check(lua_State *L, int idx) {
  odbL_btd *b = luaL_checkudata(L, idx, ODBL_BTD);
  if (!b->t) luaL_argerror(L, idx, "the block-tridiagonal system is closed");
  return b;
}

/* "A", "D" or "C" at idx. */
static odb_btd_block block_kind(lua_State *L, int idx) {
  const char *w = luaL_checkstring(L, idx);
  if (strcmp(w, "A") == 0) return ODB_BTD_A;
  if (strcmp(w, "D") == 0) return ODB_BTD_D;
  if (strcmp(w, "C") == 0) return ODB_BTD_C;
  return (odb_btd_block)luaL_argerror(L, idx, "block must be \"A\", \"D\" "
                                      "or \"C\"");
}

/* The 1-based line at arg (1..lines) as 0-based. */
static long btd_line(lua_State *L, const odbL_btd *b, int arg) {
  return (long)odbL_check_int_range(L, arg, "line", 1,
                                    odb_blocktridiag_batch(b->t)->n) - 1;
}

/* The 1-based block row at arg (1..length) as 0-based. */
static long btd_row(lua_State *L, const odbL_btd *b, int arg) {
  return (long)odbL_check_int_range(L, arg, "row", 1,
                                    odb_blocktridiag_length(b->t)) - 1;
}

/* t:set(line, row, "A"|"D"|"C", values): 1-based line and row; values a
   Vector or a table of B*B numbers, row-major. */
static int btd_set(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long line = btd_line(L, b, 2), row = btd_row(L, b, 3);
  odb_btd_block w = block_kind(L, 4);
  int bs = odb_blocktridiag_batch(b->t)->b;
  double blk[ODB_BATCHED_MAX_B * ODB_BATCHED_MAX_B];
  odbL_bt_read_block(L, 5, bs, blk);
  raise_on(L, b->ops->btd_host(b->t, b->s));
  raise_on(L, odb_blocktridiag_set(b->t, line, row, w, blk));
  b->ops->btd_host_changed(b->s);
  return 0;
}

/* t:get(line, row, "A"|"D"|"C") -> Vector of B*B values (the factors once
   factored). */
static int btd_get(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long line = btd_line(L, b, 2), row = btd_row(L, b, 3);
  odb_btd_block w = block_kind(L, 4);
  int bs = odb_blocktridiag_batch(b->t)->b;
  raise_on(L, b->ops->btd_host(b->t, b->s));
  odbL_vector *v = odbL_vector_new(L, (long)bs * bs);
  raise_on(L, odb_blocktridiag_get(b->t, line, row, w, v->v));
  return 1;
}

/* t:random{seed=1, dominance=3}: blocks of odb_blocktridiag_random (the
   same values on either backend); dominance > 2 makes every line block
   diagonally dominant. */
static int btd_random(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long long seed = 1;
  double dom = 3.0;
  odbL_bt_random_opts(L, 2, &seed, &dom);
  raise_on(L, b->ops->btd_random(b->t, b->s, (uint64_t)seed, dom));
  return 0;
}

/* t:factor() -> seconds (cuda: of the kernel on the device). All or
   nothing: a refused pivot raises naming the line (from 1) and leaves
   every block as it was. */
static int btd_factor(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  double sec = 0;
  long bad = -1;
  int row = -1;
  odb_status st = b->ops->btd_factor(b->t, b->s, b->variant, &bad, &row,
                                     &sec);
  if (st == ODB_ERR_ARG && bad >= 0)
    odbL_bt_pivot_error(L, "blocktridiag factor", "line", bad, row,
                        "in the diagonal block of row ", "block LU without "
                        "pivoting needs block diagonally dominant lines",
                        "the blocks are left as they were");
  raise_on(L, st);
  lua_pushnumber(L, sec);
  return 1;
}

/* t:solve(b) -> x (a new Vector of shape (lines*length, block)), seconds;
   b: lines*length*block values in the order ((line*length + row)*block +
   i), a Vector or a file ob.load reads. cuda: seconds of the kernel. */
static int btd_solve(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long dims[2];
  int cx = 0;
  odbL_vector *rhs = odbL_array_arg(L, 2, "blocktridiag solve", "b", 0, dims,
                                    &cx);
  if (cx)
    return luaL_error(L, "blocktridiag solve: b: complex ('<c16') values "
                      "are not taken (real float64 only)");
  odbL_vector *x = odbL_vector_new(L, rhs->n);
  const odb_batch *bt = odb_blocktridiag_batch(b->t);
  dims[0] = bt->n * odb_blocktridiag_length(b->t);
  dims[1] = bt->b;
  if ((double)dims[0] * dims[1] == (double)rhs->n)
    odbL_vector_set_shape(L, -1, 2, dims, 0);
  memcpy(x->v, rhs->v, sizeof(double) * (size_t)rhs->n);
  double sec = 0;
  raise_on(L, b->ops->btd_solve(b->t, b->s, b->variant, x->v,
                                (size_t)rhs->n, &sec));
  lua_pushnumber(L, sec);
  return 2;
}

/* Fills the packed rhs xp (work_len doubles) with reproducible values. */
static void btd_fill_rhs(const odb_blocktridiag *t, uint64_t seed,
                         double *xp) {
  size_t wl = odb_blocktridiag_work_len(t);
  for (size_t e = 0; e < wl; ++e)
    xp[e] = odb_batched_unit(seed ^ ODB_BATCHED_RHS_SEED, e);
}

/* Benchmark buffers of a blocktridiag: the packed rhs in the backend's
   memory (orig, and work reset from it each rep) and its host values. */
typedef struct btd_bufs {
  double *orig, *work;
  double *host;
} btd_bufs;

static void btd_bench_free(odbL_btd *b, btd_bufs *w) {
  b->ops->free(w->orig);
  b->ops->free(w->work);
  free(w->host);
}

/* The solve buffers of a bench (seed: the rhs values). */
static odb_status btd_bench_bufs(odbL_btd *b, uint64_t seed, btd_bufs *w) {
  size_t wl = odb_blocktridiag_work_len(b->t);
  w->host = malloc(sizeof(double) * wl);
  if (!w->host)
    return ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag bench: no memory");
  btd_fill_rhs(b->t, seed, w->host);
  ODB_TRY(b->ops->alloc(wl, &w->orig));
  ODB_TRY(b->ops->alloc(wl, &w->work));
  return b->ops->upload(w->orig, w->host, wl);
}

/* The runs of a bench for odb_measure_run: run i (warm-up included)
   factors fresh blocks of seed + i, or solves the packed rhs again. */
typedef struct btd_run {
  odbL_btd *b;
  int solve;
  long long seed;
  double dom;
  long i;
  const odb_btd_plan *pl;
  btd_bufs *w;
} btd_run;

static odb_status btd_sample(void *ud, double *sec) {
  btd_run *r = ud;
  odbL_btd *b = r->b;
  if (!r->solve)
    return b->ops->btd_factor_fresh(b->t, b->s, b->variant, r->pl,
                                    (uint64_t)(r->seed + r->i++), r->dom,
                                    sec);
  ODB_TRY(b->ops->copy(r->w->work, r->w->orig,
                       odb_blocktridiag_work_len(b->t)));
  return b->ops->btd_solve_packed(b->t, b->s, b->variant, r->pl, r->w->work,
                                  sec);
}

/*
** t:bench{op="factor"|"solve", reps=, measure=, seed=1, dominance=3} ->
** {seconds (the median), best, bytes (the fewest: odb_dense_floor.h), gbs,
** gbs_best, median, q1, q3, spread, reps, variant, op, backend, floor_bytes,
** floor_pct, floor_bw[, floor_note]}, also a results row (kind
** "blocktridiag"). reps: exactly that many timed runs; else as measure
** and --measure say (odb_lua_measure.c). factor: each run (the warm-up
** too) factors fresh random blocks (seed + run; not timed), leaving the
** object factored. solve: factors first when needed (not timed), then solves a
** random right-hand side already in the internal layout (the layout change
** is not timed). cuda: device event times of the kernels (variant cublas:
** of its cuBLAS calls, the copies to and from its column-major blocks and
** right-hand side not timed); variant stream
** takes a plan: for the solve stages (2..16), y_on_chip (0 or 1) and
** threads (per line: 1, 2, 4 or 8), each 0 (-1 for y_on_chip) or absent for
** automatic (odb_bgpu_btd_solve_stream); for the factor stages (1..4),
** kernel ("row", "tile", "warp"; absent or "auto": chosen with threads)
** and threads (row: 1, 2, 4 or 8 with VL*threads <= 32; tile: 16 or 32,
** warp: 8 (B <= 12), 16 or 32, with VL*threads <= 256;
** odb_bgpu_btd_factor_stream).
*/
static int btd_bench(lua_State *L) {
  static const char *const keys[] = { "op", "reps", "seed", "dominance",
                                      "stages", "y_on_chip", "threads",
                                      "kernel", "measure", NULL };
  long long stages = 0, y_on_chip = -1, threads = 0;
  odb_btd_plan pl = { 0, -1, 0, ODB_BTD_KERNEL_AUTO, 1 };
  odbL_btd *b = btd_check(L, 1);
  const odb_batched_ops *ops = b->ops;
  long long seed = 1;
  double dom = 3.0;
  odb_measure_opts mo;
  odb_measurement meas;
  btd_bufs w = { NULL, NULL, NULL };
  btd_run run;
  odbL_state *S;
  odb_status st = ODB_OK;
  double r, wr, touched;   /* the fewest bytes (odb_dense_floor.h) */
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  odbL_check_not_in_callback(L, "t:bench");
  S = odbL_state_get(L);
  const char *op = odbL_opt_string(L, 2, "op", "factor");
  odbL_bt_measure(L, 2, &mo);
  odbL_opt_integer(L, 2, "seed", &seed);
  if (odbL_opt_number(L, 2, "dominance", &dom) && isnan(dom))
    return luaL_argerror(L, 2, "field 'dominance': a number expected, got "
                         "NaN");
  int given = odbL_opt_integer(L, 2, "stages", &stages);
  given |= odbL_opt_integer(L, 2, "y_on_chip", &y_on_chip);
  given |= odbL_opt_integer(L, 2, "threads", &threads);
  const char *kname = odbL_opt_string(L, 2, "kernel", NULL);
  int solve = strcmp(op, "solve") == 0;
  if (kname) {
    if (solve)
      return luaL_error(L, "blocktridiag bench: kernel is for op \"factor\" "
                        "(the solve takes stages, y_on_chip and threads)");
    raise_on(L, odb_btd_kernel_parse(kname, &pl.kernel));
    given = 1;
  }
  if (given) {
    if (!ops->btd_plan_ok(b->variant))
      return luaL_error(L, "blocktridiag bench: stages, y_on_chip, threads "
                        "and kernel are for variant \"stream\" (backend "
                        "\"cuda\")");
    if (!solve && y_on_chip != -1)
      return luaL_error(L, "blocktridiag bench: y_on_chip is for op "
                        "\"solve\" (the factor takes stages, threads and "
                        "kernel)");
    if (stages < 0 || stages > 64 || y_on_chip < -1 || y_on_chip > 1 ||
        threads < 0 || threads > 64)
      return luaL_error(L, "blocktridiag bench: stages %I, y_on_chip %I or "
                        "threads %I out of range", (lua_Integer)stages,
                        (lua_Integer)y_on_chip, (lua_Integer)threads);
    pl.stages = (int)stages;
    pl.y_on_chip = (int)y_on_chip;
    pl.threads = (int)threads;
    pl.plain = 0;
  }
  if (!solve && strcmp(op, "factor") != 0)
    return luaL_error(L, "blocktridiag bench: op '%s' is unknown (allowed: "
                      "factor, solve)", op);
  int var = 0;
  raise_on(L, ops->btd_resolve(b->t, b->variant, solve, &var));
  const char *vname = ops->variant_name(var);
  run = (btd_run){ b, solve, seed, dom, 0, &pl, &w };
  if (!solve) {
    st = odb_measure_run(btd_sample, &run, &mo, S->ctx, &meas, NULL);
    raise_on(L, st);
    odb_blocktridiag_min_bytes(b->t, 0, &r, &wr, &touched);
    odbL_bt_push_bench(L, &meas, r, wr, touched, vname, "factor",
                       ops->backend, "blocktridiag");
    return 1;
  }
  if (!ops->btd_factored(b->t, b->s)) {
    double s;
    raise_on(L, ops->btd_factor_fresh(b->t, b->s, b->variant, NULL,
                                      (uint64_t)seed, dom, &s));
  }
  st = btd_bench_bufs(b, (uint64_t)seed, &w);
  if (st == ODB_OK)
    st = odb_measure_run(btd_sample, &run, &mo, S->ctx, &meas, NULL);
  btd_bench_free(b, &w);
  raise_on(L, st);
  odb_blocktridiag_min_bytes(b->t, 1, &r, &wr, &touched);
  odbL_bt_push_bench(L, &meas, r, wr, touched, vname, "solve", ops->backend,
                     "blocktridiag");
  return 1;
}

/* t:info() -> {lines, length, block, layout, vl, backend, variant,
   factor_bytes, solve_bytes, size}. */
static int btd_info(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  const odb_batch *bt = odb_blocktridiag_batch(b->t);
  int K = odb_blocktridiag_length(b->t);
  lua_createtable(L, 0, 10);
  lua_pushinteger(L, bt->n);
  lua_setfield(L, -2, "lines");
  lua_pushinteger(L, K);
  lua_setfield(L, -2, "length");
  lua_pushinteger(L, bt->b);
  lua_setfield(L, -2, "block");
  lua_pushstring(L, odb_batched_layout_name(bt->layout));
  lua_setfield(L, -2, "layout");
  lua_pushinteger(L, bt->vl);
  lua_setfield(L, -2, "vl");
  lua_pushstring(L, b->ops->backend);
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, b->ops->variant_name(b->variant));
  lua_setfield(L, -2, "variant");
  lua_pushinteger(L, (lua_Integer)bt->n * K * bt->b);
  lua_setfield(L, -2, "size");
  lua_pushnumber(L, odb_blocktridiag_factor_bytes(b->t));
  lua_setfield(L, -2, "factor_bytes");
  lua_pushnumber(L, odb_blocktridiag_solve_bytes(b->t));
  lua_setfield(L, -2, "solve_bytes");
  return 1;
}

/* t:close(), __gc and __close. */
static int btd_close(lua_State *L) {
  odbL_btd *b = luaL_checkudata(L, 1, ODBL_BTD);
  if (b->ops) b->ops->btd_close(b->s);
  b->s = NULL;
  odb_blocktridiag_free(b->t);
  b->t = NULL;
  return 0;
}

/* Creates the metatable once. */
static void btd_meta(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"set", btd_set}, {"get", btd_get}, {"random", btd_random},
    {"factor", btd_factor}, {"solve", btd_solve}, {"bench", btd_bench},
    {"info", btd_info}, {"close", btd_close}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, ODBL_BTD)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, btd_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, btd_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}

/*
** ob.blocktridiag{lines=, length=, block=, layout="compact"|"standard",
** vl=0, backend="cpu"|"cuda", variant="auto"}: lines independent lines of
** length block rows of block x block blocks (A = C = 0, D = I until set or
** random). backend "cuda" keeps a copy of the blocks on the GPU and runs
** factor and solve there (variant: serial, serial2, team, stream, auto,
** or cublas: the same block LU and solve as cuBLAS batched calls per block
** row, the peer the kernels are measured against; odb_batched_gpu.h).
*/
int odbL_blocktridiag(lua_State *L) {
  static const char *const keys[] = { "lines", "length", "block", "layout",
                                      "vl", "backend", "variant", NULL };
  odb_batched_layout layout;
  size_t bytes;
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  if (!odbL_bt_has_fields(L, "lines", "length", "block"))
    return luaL_error(L, "ob.blocktridiag: lines, length and block are "
                      "required");
  long lines = (long)odbL_opt_int_range(L, 1, 1, "lines", "lines", 1,
                                        (lua_Integer)1 << 40, 1);
  int length = (int)odbL_opt_int_range(L, 1, 1, "length", "length", 1,
                                       (lua_Integer)1 << 30, 1);
  int block = (int)odbL_opt_int_range(L, 1, 1, "block", "block",
                                      ODB_BATCHED_MIN_B, ODB_BATCHED_MAX_B,
                                      ODB_BATCHED_MIN_B);
  int vl = (int)odbL_opt_int_range(L, 1, 1, "vl", "vl", 0, 64, 0);
  raise_on(L, odb_batched_layout_parse(
                odbL_opt_string(L, 1, "layout", "compact"), &layout));
  const odb_batched_ops *ops = odbL_bt_backend(L, 1, "ob.blocktridiag");
  int var = odbL_bt_variant(L, 1, ops, "ob.blocktridiag");
  if (odb_blocktridiag_size(lines, length, block, layout, vl, &bytes) !=
      ODB_OK)
    return luaL_error(L, "ob.blocktridiag: %s", odb_last_error());
  btd_meta(L);
  odbL_gc_external(L, (double)bytes);
  odbL_btd *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  b->ops = ops;
  b->variant = var;
  luaL_setmetatable(L, ODBL_BTD);
  if (odb_blocktridiag_new(lines, length, block, layout, vl, &b->t) != ODB_OK)
    return luaL_error(L, "ob.blocktridiag: %s", odb_last_error());
  raise_on(L, ops->btd_open(b->t, var, &b->s));
  return 1;
}

/* }====== */
