/* odb_lua_blocktridiag.c - ob.blocktridiag{...}: many block-tridiagonal
   lines (factor, solve, benchmarks) on the CPU (odb_batched.h) or on the
   GPU (odb_batched_gpu.h, backend = "cuda").

   Lines and rows are 1-based in Lua, and so is every index in the
   messages here (odbL_int_in_range; the bad-pivot error is worded here).
   factor() is all or nothing: the CPU checks every pivot before it writes
   a block (odb_blocktridiag_factor_check), the GPU restores a device copy,
   so that a failure leaves every block as it was. */
#include "odb_lua.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odb_batched.h"
#include "odb_batched_gpu.h"
#include "odb_lua_batched.h"

#define ODBL_BTD "odebench.BlockTridiag"

/* Raises the recorded message when st is a failure. */
static void raise_on(lua_State *L, odb_status st) {
  if (st != ODB_OK) luaL_error(L, "%s", odb_last_error());
}

/* Monotonic seconds. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* {====== ob.blocktridiag */

typedef struct odbL_btd {
  odb_blocktridiag *t;   /* NULL once closed; the host blocks and the shape */
  int gpu;               /* backend "cuda" */
  double *dm;            /* cuda: device blocks */
  int host_fresh;        /* cuda: the host blocks are current */
  int dev_fresh;         /* cuda: the device blocks are current */
  int factored;          /* cuda: the device blocks hold factors */
  odb_bgpu_variant variant;
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

/* cuda: brings the device blocks (and their factored state) to the host. */
static void btd_to_host(lua_State *L, odbL_btd *b) {
  if (!b->gpu || b->host_fresh) return;
  if (!b->dev_fresh)
    luaL_error(L, "blocktridiag: the blocks were lost by a failed "
               "factorization; set them again (set or random)");
  raise_on(L, odb_bgpu_download(odb_blocktridiag_blocks(b->t), b->dm,
                                odb_blocktridiag_blocks_len(b->t)));
  odb_blocktridiag_mark_factored(b->t, b->factored);
  b->host_fresh = 1;
}

/* cuda: brings the host blocks to the device when it is behind. */
static void btd_to_device(lua_State *L, odbL_btd *b) {
  if (b->dev_fresh) return;
  if (!b->host_fresh)
    luaL_error(L, "blocktridiag: the blocks were lost by a failed "
               "factorization; set them again (set or random)");
  raise_on(L, odb_bgpu_upload(b->dm, odb_blocktridiag_blocks(b->t),
                              odb_blocktridiag_blocks_len(b->t)));
  b->factored = odb_blocktridiag_factored(b->t);
  b->dev_fresh = 1;
}

/* The blocks changed on the host: the device copy is stale. */
static void btd_host_changed(odbL_btd *b) {
  b->dev_fresh = 0;
  b->factored = 0;
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
  btd_to_host(L, b);
  raise_on(L, odb_blocktridiag_set(b->t, line, row, w, blk));
  btd_host_changed(b);
  return 0;
}

/* t:get(line, row, "A"|"D"|"C") -> Vector of B*B values (the factors once
   factored). */
static int btd_get(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long line = btd_line(L, b, 2), row = btd_row(L, b, 3);
  odb_btd_block w = block_kind(L, 4);
  int bs = odb_blocktridiag_batch(b->t)->b;
  btd_to_host(L, b);
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
  if (b->gpu) {
    raise_on(L, odb_bgpu_btd_random(b->t, (uint64_t)seed, dom, b->dm));
    raise_on(L, odb_bgpu_sync());
    b->dev_fresh = 1;
    b->host_fresh = 0;
    b->factored = 0;
    odb_blocktridiag_mark_factored(b->t, 0);
  } else {
    odb_blocktridiag_random(b->t, (uint64_t)seed, dom);
  }
  return 0;
}

#define BTD_PIVOT(L, bad, row)                                          \
  odbL_bt_pivot_error(L, "blocktridiag factor", "line", bad, row,      \
                      "in the diagonal block of row ", "block LU without " \
                      "pivoting needs block diagonally dominant lines",  \
                      "the blocks are left as they were")

/* cuda: factors the device blocks, a device copy of them kept until the
   pivots passed (restored when not); *sec gets the kernel's seconds. */
static void btd_factor_gpu(lua_State *L, odbL_btd *b, double *sec) {
  long bad = -1;
  size_t len = odb_blocktridiag_blocks_len(b->t);
  double *keep = NULL;
  if (b->factored || (b->host_fresh && !b->dev_fresh &&
                      odb_blocktridiag_factored(b->t)))
    luaL_error(L, "blocktridiag: already factored (set the blocks again "
               "first)");
  btd_to_device(L, b);
  raise_on(L, odb_bgpu_alloc(len, &keep));
  odb_status st = odb_bgpu_copy(keep, b->dm, len);
  if (st == ODB_OK) st = odb_bgpu_mark();
  if (st == ODB_OK) st = odb_bgpu_btd_factor(b->t, b->variant, b->dm, &bad);
  if (st == ODB_ERR_ARG && bad >= 0) {
    odb_status back = odb_bgpu_copy(b->dm, keep, len);
    odb_bgpu_free(keep);
    b->factored = 0;
    if (back != ODB_OK) {
      b->dev_fresh = 0;    /* the host copy, when fresh, is what is left */
      raise_on(L, back);
    }
    BTD_PIVOT(L, bad, -1);
  }
  odb_bgpu_free(keep);
  raise_on(L, st);
  raise_on(L, odb_bgpu_elapsed(sec));
  b->factored = 1;
  b->host_fresh = 0;
}

/* t:factor() -> seconds (cuda: of the kernel on the device). All or
   nothing: a refused pivot raises naming the line (from 1) and leaves
   every block as it was. The CPU checks the pivots first (not timed). */
static int btd_factor(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  double sec = 0;
  if (b->gpu) {
    btd_factor_gpu(L, b, &sec);
  } else {
    long bad = -1;
    int row = -1;
    odb_status st = odb_blocktridiag_factor_check(b->t, &bad, &row);
    if (st == ODB_ERR_ARG && bad >= 0) BTD_PIVOT(L, bad, row);
    raise_on(L, st);
    double t0 = now_s();
    raise_on(L, odb_blocktridiag_factor(b->t, NULL));
    sec = now_s() - t0;
  }
  lua_pushnumber(L, sec);
  return 1;
}

/* cuda: solves x (standard order, len values) on the device. */
static void btd_solve_gpu(lua_State *L, odbL_btd *b, double *x, size_t len,
                          double *sec) {
  const odb_batch *bt = odb_blocktridiag_batch(b->t);
  size_t need = (size_t)bt->n * odb_blocktridiag_length(b->t) * bt->b;
  size_t wl = odb_blocktridiag_work_len(b->t);
  double *dx = NULL, *hx = NULL;
  odb_status st;
  if (len != need)
    luaL_error(L, "blocktridiag solve: right-hand side has %I values, "
               "expected lines*length*block = %I", (lua_Integer)len,
               (lua_Integer)need);
  if (!b->factored)
    luaL_error(L, "blocktridiag: solve before factor");
  hx = malloc(sizeof(double) * wl);
  if (!hx) luaL_error(L, "blocktridiag solve: no memory");
  odb_blocktridiag_pack_rhs(b->t, x, hx);
  st = odb_bgpu_alloc(wl, &dx);
  if (st == ODB_OK) st = odb_bgpu_upload(dx, hx, wl);
  if (st == ODB_OK) st = odb_bgpu_mark();
  if (st == ODB_OK) st = odb_bgpu_btd_solve(b->t, b->variant, b->dm, dx);
  if (st == ODB_OK) st = odb_bgpu_elapsed(sec);
  if (st == ODB_OK) st = odb_bgpu_download(hx, dx, wl);
  if (st == ODB_OK) odb_blocktridiag_unpack_rhs(b->t, hx, x);
  odb_bgpu_free(dx);
  free(hx);
  raise_on(L, st);
}

/* t:solve(b) -> x (a new Vector), seconds; b: lines*length*block values in
   the order ((line*length + row)*block + i). cuda: seconds of the kernel. */
static int btd_solve(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  odbL_vector *rhs = odbL_vector_check(L, 2);
  odbL_vector *x = odbL_vector_new(L, rhs->n);
  memcpy(x->v, rhs->v, sizeof(double) * (size_t)rhs->n);
  double sec = 0;
  if (b->gpu) {
    btd_solve_gpu(L, b, x->v, (size_t)rhs->n, &sec);
  } else {
    double t0 = now_s();
    raise_on(L, odb_blocktridiag_solve(b->t, x->v, (size_t)rhs->n, NULL));
    sec = now_s() - t0;
  }
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

/* Benchmark state of a blocktridiag (host and device buffers). */
typedef struct btd_bufs {
  double *orig, *work;    /* packed rhs: host (cpu) or device (cuda) */
  double *host;           /* cuda: host staging */
} btd_bufs;

static void btd_bench_free(odbL_btd *b, btd_bufs *w) {
  if (b->gpu) {
    odb_bgpu_free(w->orig);
    odb_bgpu_free(w->work);
  } else {
    free(w->orig);
    free(w->work);
  }
  free(w->host);
}

/* One timed factorization on fresh random blocks (seed). */
static odb_status btd_bench_factor(odbL_btd *b, uint64_t seed, double dom,
                                   double *sec) {
  if (b->gpu) {
    ODB_TRY(odb_bgpu_btd_random(b->t, seed, dom, b->dm));
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(odb_bgpu_btd_factor_launch(b->t, b->variant, b->dm));
    ODB_TRY(odb_bgpu_elapsed(sec));
    b->dev_fresh = 1;
    b->host_fresh = 0;
    b->factored = 1;
    return ODB_OK;
  }
  odb_blocktridiag_random(b->t, seed, dom);
  double t0 = now_s();
  ODB_TRY(odb_blocktridiag_factor(b->t, NULL));
  *sec = now_s() - t0;
  return ODB_OK;
}

/* A stream solve's plan (stages, y_on_chip, threads per line); plain:
   none given (the variant's own choice). */
typedef struct btd_plan { long long stages, y_on_chip, threads; int plain; }
  btd_plan;

/* The solve of b's variant, with plan pl where it is not plain. */
static odb_status btd_solve_dev(odbL_btd *b, const btd_plan *pl, double *dx) {
  if (pl->plain) return odb_bgpu_btd_solve(b->t, b->variant, b->dm, dx);
  return odb_bgpu_btd_solve_stream(b->t, (int)pl->stages, (int)pl->y_on_chip,
                                   (int)pl->threads, b->dm, dx);
}

/* One timed solve of the packed rhs (reset from orig first). */
static odb_status btd_bench_solve(odbL_btd *b, const btd_plan *pl,
                                  btd_bufs *w, size_t wl, double *sec) {
  if (b->gpu) {
    ODB_TRY(odb_bgpu_copy(w->work, w->orig, wl));
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(btd_solve_dev(b, pl, w->work));
    return odb_bgpu_elapsed(sec);
  }
  memcpy(w->work, w->orig, sizeof(double) * wl);
  double t0 = now_s();
  ODB_TRY(odb_blocktridiag_solve_packed(b->t, w->work));
  *sec = now_s() - t0;
  return ODB_OK;
}

/*
** t:bench{op="factor"|"solve", reps=5, seed=1, dominance=3} -> {seconds
** (median), best, bytes, gbs, gbs_best, reps, variant}. factor: each rep
** factors fresh random blocks (seed + rep; not timed), leaving the object
** factored. solve: factors first when needed (not timed), then solves a
** random right-hand side already in the internal layout (the layout change
** is not timed). cuda: device event times of the kernels; variant stream
** takes a plan for the solve: stages (2..16), y_on_chip (0 or 1) and
** threads (per line: 1, 2 or 4), each 0 (-1 for y_on_chip) or absent for
** automatic (odb_bgpu_btd_solve_stream).
*/
static int btd_bench(lua_State *L) {
  static const char *const keys[] = { "op", "reps", "seed", "dominance",
                                      "stages", "y_on_chip", "threads",
                                      NULL };
  btd_plan pl = { 0, -1, 0, 1 };
  odbL_btd *b = btd_check(L, 1);
  long long seed = 1;
  int reps;
  double dom = 3.0, times[BENCH_MAX_REPS];
  btd_bufs w = { NULL, NULL, NULL };
  odb_status st = ODB_OK;
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  const char *op = odbL_opt_string(L, 2, "op", "factor");
  reps = odbL_bt_reps(L, 2, 5);
  odbL_opt_integer(L, 2, "seed", &seed);
  if (odbL_opt_number(L, 2, "dominance", &dom) && isnan(dom))
    return luaL_argerror(L, 2, "field 'dominance': a number expected, got "
                         "NaN");
  int given = odbL_opt_integer(L, 2, "stages", &pl.stages);
  given |= odbL_opt_integer(L, 2, "y_on_chip", &pl.y_on_chip);
  given |= odbL_opt_integer(L, 2, "threads", &pl.threads);
  int solve = strcmp(op, "solve") == 0;
  if (given) {
    if (!b->gpu || b->variant != ODB_BGPU_STREAM || !solve)
      return luaL_error(L, "blocktridiag bench: stages, y_on_chip and "
                        "threads are for op \"solve\" of variant \"stream\" "
                        "(backend \"cuda\")");
    if (pl.stages < 0 || pl.stages > 64 || pl.y_on_chip < -1 ||
        pl.y_on_chip > 1 || pl.threads < 0 || pl.threads > 64)
      return luaL_error(L, "blocktridiag bench: stages %I, y_on_chip %I or "
                        "threads %I out of range", (lua_Integer)pl.stages,
                        (lua_Integer)pl.y_on_chip, (lua_Integer)pl.threads);
    pl.plain = 0;
  }
  if (!solve && strcmp(op, "factor") != 0)
    return luaL_error(L, "blocktridiag bench: op '%s' is unknown (allowed: "
                      "factor, solve)", op);
  odb_bgpu_variant var = ODB_BGPU_AUTO;
  if (b->gpu) raise_on(L, odb_bgpu_btd_resolve(b->t, b->variant, solve, &var));
  const char *vname = b->gpu ? odb_bgpu_variant_name(var) : "cpu";
  if (!solve) {
    for (int r = 0; r < reps && st == ODB_OK; ++r)
      st = btd_bench_factor(b, (uint64_t)(seed + r), dom, &times[r]);
    raise_on(L, st);
    odbL_bt_push_bench(L, times, reps, odb_blocktridiag_factor_bytes(b->t),
                       vname);
    return 1;
  }
  if (b->gpu ? !b->factored : !odb_blocktridiag_factored(b->t)) {
    double s;
    raise_on(L, btd_bench_factor(b, (uint64_t)seed, dom, &s));
  }
  size_t wl = odb_blocktridiag_work_len(b->t);
  if (b->gpu) {
    w.host = malloc(sizeof(double) * wl);
    if (!w.host) st = ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag bench: no memory");
    if (st == ODB_OK) st = odb_bgpu_alloc(wl, &w.orig);
    if (st == ODB_OK) st = odb_bgpu_alloc(wl, &w.work);
    if (st == ODB_OK) btd_fill_rhs(b->t, (uint64_t)seed, w.host);
    if (st == ODB_OK) st = odb_bgpu_upload(w.orig, w.host, wl);
  } else {
    w.orig = malloc(sizeof(double) * wl);
    w.work = malloc(sizeof(double) * wl);
    if (!w.orig || !w.work)
      st = ODB_FAIL(ODB_ERR_NOMEM, "blocktridiag bench: no memory");
    else
      btd_fill_rhs(b->t, (uint64_t)seed, w.orig);
  }
  for (int r = 0; r < reps && st == ODB_OK; ++r)
    st = btd_bench_solve(b, &pl, &w, wl, &times[r]);
  btd_bench_free(b, &w);
  raise_on(L, st);
  odbL_bt_push_bench(L, times, reps, odb_blocktridiag_solve_bytes(b->t),
                     vname);
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
  lua_pushstring(L, b->gpu ? "cuda" : "cpu");
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, b->gpu ? odb_bgpu_variant_name(b->variant) : "cpu");
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
  odb_bgpu_free(b->dm);
  b->dm = NULL;
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
** factor and solve there (variant: serial, serial2, team, stream (the
** solve; its factor as auto) or auto).
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
  int gpu = odbL_bt_backend(L, 1, "ob.blocktridiag");
  odb_bgpu_variant var = odbL_bt_variant(L, 1, gpu, "ob.blocktridiag");
  if (odb_blocktridiag_size(lines, length, block, layout, vl, &bytes) !=
      ODB_OK)
    return luaL_error(L, "ob.blocktridiag: %s", odb_last_error());
  btd_meta(L);
  odbL_gc_external(L, (double)bytes);
  odbL_btd *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, ODBL_BTD);
  if (odb_blocktridiag_new(lines, length, block, layout, vl, &b->t) != ODB_OK)
    return luaL_error(L, "ob.blocktridiag: %s", odb_last_error());
  b->gpu = gpu;
  b->variant = var;
  b->host_fresh = 1;
  if (gpu) {
    odb_bgpu_variant r;   /* the variant must run both factor and solve */
    raise_on(L, odb_bgpu_btd_resolve(b->t, var, 0, &r));
    raise_on(L, odb_bgpu_btd_resolve(b->t, var, 1, &r));
    raise_on(L, odb_bgpu_alloc(odb_blocktridiag_blocks_len(b->t), &b->dm));
  }
  return 1;
}

/* }====== */
