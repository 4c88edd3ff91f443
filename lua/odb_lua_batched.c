/* odb_lua_batched.c - ob.batched{...} (many small B x B matrices: LU,
   solve, GEMM, GEMV, TRSM, benchmarks) and ob.blocktridiag{...} (many
   block-tridiagonal lines: factor, solve), on the CPU (odb_batched.h) or
   on the GPU (odb_batched_gpu.h, backend = "cuda").

   Indices are 1-based in Lua. Error messages of the engine count matrices
   and lines from 0; the Lua layer adds the 1-based index where it names a
   matrix with a bad pivot. */
#include "odb_lua.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odb_batched.h"
#include "odb_batched_gpu.h"
#include "odb_kernels.h"

#define ODBL_BTD "odebench.BlockTridiag"
#define ODBL_BAT "odebench.Batched"
#define BENCH_MAX_REPS 1000

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

/* Sorts v[0..n) ascending (insertion sort; n is small). */
static void sort_doubles(double *v, int n) {
  for (int i = 1; i < n; ++i)
    for (int k = i; k > 0 && v[k - 1] > v[k]; --k) {
      double t = v[k];
      v[k] = v[k - 1];
      v[k - 1] = t;
    }
}

/*
** "cpu" (0) or "cuda" (1) from field `backend` of the table at arg; for
** "cuda" checks that this build has CUDA and the run has the "cuda"
** backend (a GPU), raising a clear error otherwise. who names the caller.
*/
static int opt_backend(lua_State *L, int arg, const char *who) {
  const char *b = odbL_opt_string(L, arg, "backend", "cpu");
  if (strcmp(b, "cpu") == 0) return 0;
  if (strcmp(b, "cuda") != 0)
    luaL_error(L, "%s: backend '%s' is unknown (allowed: cpu, cuda)", who, b);
  if (!odb_kernels_have_cuda())
    luaL_error(L, "%s: backend \"cuda\": this build has no CUDA (configure "
               "with -Dcuda=enabled)", who);
  if (!odb_ctx_backend(odbL_state_get(L)->ctx, "cuda"))
    luaL_error(L, "%s: backend \"cuda\": no CUDA device is usable here (see "
               "odebench --list)", who);
  if (odb_bgpu_ready() != ODB_OK)
    luaL_error(L, "%s: backend \"cuda\": %s", who, odb_last_error());
  return 1;
}

/* Reads the row-major B x B values at idx (a Vector or a table) into blk. */
static void read_block(lua_State *L, int idx, int bs, double *blk) {
  if (lua_istable(L, idx)) {
    if ((long)luaL_len(L, idx) != (long)bs * bs)
      luaL_argerror(L, idx, "expected block*block values");
    for (int e = 0; e < bs * bs; ++e) {
      lua_geti(L, idx, e + 1);
      blk[e] = luaL_checknumber(L, -1);
      lua_pop(L, 1);
    }
  } else {
    odbL_vector *v = odbL_vector_check(L, idx);
    if (v->n != (long)bs * bs)
      luaL_argerror(L, idx, "expected block*block values");
    memcpy(blk, v->v, sizeof(double) * (size_t)bs * bs);
  }
}

/* Reads {seed=, dominance=} at idx (optional table). */
static void opt_random(lua_State *L, int idx, long long *seed, double *dom) {
  static const char *const keys[] = { "seed", "dominance", NULL };
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  odbL_check_keys(L, idx, keys);
  odbL_opt_integer(L, idx, "seed", seed);
  odbL_opt_number(L, idx, "dominance", dom);
}

/* Pushes the table of a benchmark: times[] (reps), bytes, variant. */
static void push_bench(lua_State *L, double *times, int reps, double bytes,
                       const char *variant) {
  sort_doubles(times, reps);
  double med = times[reps / 2];
  lua_createtable(L, 0, 7);
  lua_pushnumber(L, med);
  lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, times[0]);
  lua_setfield(L, -2, "best");
  lua_pushnumber(L, bytes);
  lua_setfield(L, -2, "bytes");
  lua_pushnumber(L, med > 0 ? bytes / med * 1e-9 : 0.0);
  lua_setfield(L, -2, "gbs");
  lua_pushnumber(L, times[0] > 0 ? bytes / times[0] * 1e-9 : 0.0);
  lua_setfield(L, -2, "gbs_best");
  lua_pushinteger(L, reps);
  lua_setfield(L, -2, "reps");
  lua_pushstring(L, variant);
  lua_setfield(L, -2, "variant");
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

/* t:set(line, row, "A"|"D"|"C", values): 1-based line and row; values a
   Vector or a table of B*B numbers, row-major. */
static int btd_set(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long line = (long)luaL_checkinteger(L, 2) - 1;
  int row = (int)luaL_checkinteger(L, 3) - 1;
  odb_btd_block w = block_kind(L, 4);
  int bs = odb_blocktridiag_batch(b->t)->b;
  double blk[ODB_BATCHED_MAX_B * ODB_BATCHED_MAX_B];
  read_block(L, 5, bs, blk);
  btd_to_host(L, b);
  raise_on(L, odb_blocktridiag_set(b->t, line, row, w, blk));
  btd_host_changed(b);
  return 0;
}

/* t:get(line, row, "A"|"D"|"C") -> Vector of B*B values (the factors once
   factored). */
static int btd_get(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long line = (long)luaL_checkinteger(L, 2) - 1;
  int row = (int)luaL_checkinteger(L, 3) - 1;
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
  opt_random(L, 2, &seed, &dom);
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

/* cuda: factors the device blocks; *sec gets the kernel's seconds. */
static void btd_factor_gpu(lua_State *L, odbL_btd *b, double *sec) {
  long bad = -1;
  if (b->factored || (b->host_fresh && !b->dev_fresh &&
                      odb_blocktridiag_factored(b->t)))
    luaL_error(L, "blocktridiag: already factored (set the blocks again "
               "first)");
  btd_to_device(L, b);
  raise_on(L, odb_bgpu_mark());
  odb_status st = odb_bgpu_btd_factor(b->t, b->variant, b->dm, &bad);
  if (st == ODB_ERR_ARG && bad >= 0) {
    b->dev_fresh = 0;    /* partly factored: keep only a fresh host copy */
    b->factored = 0;
    luaL_error(L, "%s [line %d counting from 1]", odb_last_error(),
               (int)(bad + 1));
  }
  raise_on(L, st);
  raise_on(L, odb_bgpu_elapsed(sec));
  b->factored = 1;
  b->host_fresh = 0;
}

/* t:factor() -> seconds (cuda: of the kernel on the device). */
static int btd_factor(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  double sec = 0;
  if (b->gpu) {
    btd_factor_gpu(L, b, &sec);
  } else {
    long bad = -1;
    double t0 = now_s();
    odb_status st = odb_blocktridiag_factor(b->t, &bad);
    if (st == ODB_ERR_ARG && bad >= 0)
      luaL_error(L, "%s [line %d counting from 1]", odb_last_error(),
                 (int)(bad + 1));
    raise_on(L, st);
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
    luaL_error(L, "blocktridiag solve: right-hand side has %d values, "
               "expected lines*length*block = %d", (int)len, (int)need);
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
  long long reps = 5, seed = 1;
  double dom = 3.0, times[BENCH_MAX_REPS];
  btd_bufs w = { NULL, NULL, NULL };
  odb_status st = ODB_OK;
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  const char *op = odbL_opt_string(L, 2, "op", "factor");
  odbL_opt_integer(L, 2, "reps", &reps);
  odbL_opt_integer(L, 2, "seed", &seed);
  odbL_opt_number(L, 2, "dominance", &dom);
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
  if (reps < 1 || reps > BENCH_MAX_REPS)
    return luaL_error(L, "blocktridiag bench: reps = %d, allowed 1..%d",
                      (int)reps, BENCH_MAX_REPS);
  odb_bgpu_variant var = ODB_BGPU_AUTO;
  if (b->gpu) raise_on(L, odb_bgpu_btd_resolve(b->t, b->variant, solve, &var));
  const char *vname = b->gpu ? odb_bgpu_variant_name(var) : "cpu";
  if (!solve) {
    for (int r = 0; r < reps && st == ODB_OK; ++r)
      st = btd_bench_factor(b, (uint64_t)(seed + r), dom, &times[r]);
    raise_on(L, st);
    push_bench(L, times, (int)reps, odb_blocktridiag_factor_bytes(b->t),
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
  push_bench(L, times, (int)reps, odb_blocktridiag_solve_bytes(b->t), vname);
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

/* The variant field (cuda only; "auto" on the CPU). */
static odb_bgpu_variant opt_variant(lua_State *L, int arg, int gpu,
                                    const char *who) {
  const char *v = odbL_opt_string(L, arg, "variant", "auto");
  odb_bgpu_variant out = ODB_BGPU_AUTO;
  if (!gpu) {
    if (strcmp(v, "auto") != 0)
      luaL_error(L, "%s: variant '%s' needs backend \"cuda\" (the CPU has "
                 "one kernel per layout)", who, v);
    return out;
  }
  raise_on(L, odb_bgpu_variant_parse(v, &out));
  return out;
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
  long long lines = 0, length = 0, block = 0, vl = 0;
  odb_batched_layout layout;
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  if (!odbL_opt_integer(L, 1, "lines", &lines) ||
      !odbL_opt_integer(L, 1, "length", &length) ||
      !odbL_opt_integer(L, 1, "block", &block))
    return luaL_error(L, "ob.blocktridiag: lines, length and block are "
                      "required");
  odbL_opt_integer(L, 1, "vl", &vl);
  raise_on(L, odb_batched_layout_parse(
                odbL_opt_string(L, 1, "layout", "compact"), &layout));
  if (length < 1 || length > (1 << 30) || block < 0 || block > 1000 ||
      vl < 0 || vl > 1000 || lines > ((long long)1 << 40))
    return luaL_error(L, "ob.blocktridiag: lines %I, length %I, block %I "
                      "or vl %I out of range", (lua_Integer)lines,
                      (lua_Integer)length, (lua_Integer)block,
                      (lua_Integer)vl);
  int gpu = opt_backend(L, 1, "ob.blocktridiag");
  odb_bgpu_variant var = opt_variant(L, 1, gpu, "ob.blocktridiag");
  btd_meta(L);
  /* the blocks of the three diagonals, about 3 lines x length x block^2 */
  odbL_gc_external(L, 3.0 * sizeof(double) * (double)lines *
                      (double)length * (double)block * (double)block);
  odbL_btd *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, ODBL_BTD);
  raise_on(L, odb_blocktridiag_new((long)lines, (int)length, (int)block,
                                   layout, (int)vl, &b->t));
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

/* {====== ob.batched */

typedef struct odbL_bat {
  int open;
  int gpu;               /* backend "cuda": a lives on the device */
  odb_batch bt;
  double *a;             /* the matrices (bt's layout) */
  int factored;          /* a holds LU factors */
  odb_bgpu_variant variant;
} odbL_bat;

/* The open object at idx; raises when closed. */
static odbL_bat *bat_check(lua_State *L, int idx) {
  odbL_bat *m = luaL_checkudata(L, idx, ODBL_BAT);
  if (!m->open) luaL_argerror(L, idx, "the batch is closed");
  return m;
}

/* Allocates len doubles where the batch lives (host or device). */
static odb_status bat_alloc(const odbL_bat *m, size_t len, double **out) {
  if (m->gpu) return odb_bgpu_alloc(len, out);
  *out = malloc(sizeof(double) * (len ? len : 1));
  if (!*out)
    return ODB_FAIL(ODB_ERR_NOMEM, "ob.batched: no memory for %zu doubles",
                    len);
  return ODB_OK;
}

static void bat_free(const odbL_bat *m, double *p) {
  if (m->gpu) odb_bgpu_free(p);
  else free(p);
}

/* 1-based matrix index at idx, as 0-based; raises when out of range. */
static long bat_index(lua_State *L, const odbL_bat *m, int idx) {
  lua_Integer p = luaL_checkinteger(L, idx);
  if (p < 1 || p > m->bt.n)
    luaL_error(L, "ob.batched: matrix %d is outside 1..%d", (int)p,
               (int)m->bt.n);
  return (long)(p - 1);
}

/* m:random{seed=1, dominance=1}: matrices of odb_batched_random (the same
   on either backend); dominance >= 1: diagonally dominant. */
static int bat_random(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long long seed = 1;
  double dom = 1.0;
  opt_random(L, 2, &seed, &dom);
  if (m->gpu) {
    raise_on(L, odb_bgpu_random(&m->bt, (uint64_t)seed, dom, m->a));
    raise_on(L, odb_bgpu_sync());
  } else {
    odb_batched_random(&m->bt, (uint64_t)seed, dom, m->a);
  }
  m->factored = 0;
  return 0;
}

/* m:set(p, values): matrix p (1-based), row-major B*B values. */
static int bat_set(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long p = bat_index(L, m, 2);
  int b = m->bt.b;
  double blk[ODB_BATCHED_MAX_B * ODB_BATCHED_MAX_B];
  read_block(L, 3, b, blk);
  if (m->gpu) {
    raise_on(L, odb_bgpu_set_matrix(&m->bt, m->a, p, blk));
  } else {
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j)
        m->a[odb_batch_mat_at(&m->bt, p, i, j)] = blk[i * b + j];
  }
  m->factored = 0;
  return 0;
}

/* m:get(p) -> Vector of B*B values (the LU factors once factored). */
static int bat_get(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long p = bat_index(L, m, 2);
  int b = m->bt.b;
  odbL_vector *v = odbL_vector_new(L, (long)b * b);
  if (m->gpu) {
    raise_on(L, odb_bgpu_get_matrix(&m->bt, m->a, p, v->v));
  } else {
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j)
        v->v[i * b + j] = m->a[odb_batch_mat_at(&m->bt, p, i, j)];
  }
  return 1;
}

/* Raises the bad-pivot error of an LU with the 1-based index added. */
static void lu_raise(lua_State *L, odb_status st, long bad) {
  if (st == ODB_ERR_ARG && bad >= 0)
    luaL_error(L, "%s [matrix %d counting from 1]", odb_last_error(),
               (int)(bad + 1));
  raise_on(L, st);
}

/* m:lu() -> seconds: LU without pivoting in place (cuda: device time,
   the pivot check included). A zero or tiny pivot raises naming the
   matrix; the object then counts as unfactored. */
static int bat_lu(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  long bad = -1;
  double sec = 0;
  odb_status st;
  if (m->factored)
    return luaL_error(L, "ob.batched lu: already factored (random or set "
                      "first)");
  if (m->gpu) {
    raise_on(L, odb_bgpu_mark());
    st = odb_bgpu_lu(&m->bt, m->variant, m->a, &bad);
    if (st == ODB_OK) st = odb_bgpu_elapsed(&sec);
  } else {
    double t0 = now_s();
    st = odb_batched_lu(&m->bt, m->a, &bad);
    sec = now_s() - t0;
  }
  lu_raise(L, st, bad);
  m->factored = 1;
  lua_pushnumber(L, sec);
  return 1;
}

/* Checks a Vector of n*B*cols values at idx (who names the op). */
static odbL_vector *bat_vec(lua_State *L, const odbL_bat *m, int idx,
                            int cols, const char *who) {
  odbL_vector *v = odbL_vector_check(L, idx);
  long need = m->bt.n * m->bt.b * cols;
  if (v->n != need)
    luaL_error(L, "ob.batched %s: vector has %d values, expected n*block = "
               "%d", who, (int)v->n, (int)need);
  return v;
}

/* Moves the standard-order vectors `in` (n*B values each, or NULL) into
   bt's rhs layout at d[k] (host or device), runs fn, and brings d[out]
   back into x. A little engine for solve and gemv. */
typedef odb_status (*bat_vec_fn)(odbL_bat *m, double **d, double *sec,
                                 void *arg);
static odb_status bat_with_vectors(odbL_bat *m, const double *const *in,
                                   int nin, int out, double *x,
                                   bat_vec_fn fn, void *arg, double *sec) {
  size_t rl = odb_batch_rhs_len(&m->bt, 1);
  size_t sl = (size_t)m->bt.n * m->bt.b;
  double *d[3] = { NULL, NULL, NULL }, *stage = NULL;
  odb_status st = ODB_OK;
  for (int k = 0; k < nin && st == ODB_OK; ++k)
    st = bat_alloc(m, rl, &d[k]);
  if (st == ODB_OK && m->gpu) st = odb_bgpu_alloc(sl, &stage);
  for (int k = 0; k < nin && st == ODB_OK; ++k) {
    if (!in[k]) continue;
    if (m->gpu) {
      st = odb_bgpu_upload(stage, in[k], sl);
      if (st == ODB_OK) st = odb_bgpu_pack_rhs(&m->bt, 1, stage, d[k]);
    } else {
      odb_batched_pack_rhs(&m->bt, 1, in[k], d[k]);
    }
  }
  if (st == ODB_OK) st = fn(m, d, sec, arg);
  if (st == ODB_OK) {
    if (m->gpu) {
      st = odb_bgpu_unpack_rhs(&m->bt, 1, d[out], stage);
      if (st == ODB_OK) st = odb_bgpu_download(x, stage, sl);
    } else {
      odb_batched_unpack_rhs(&m->bt, 1, d[out], x);
    }
  }
  for (int k = 0; k < nin; ++k) bat_free(m, d[k]);
  odb_bgpu_free(stage);
  return st;
}

/* d[0] := (LU)^{-1} d[0]. */
static odb_status run_solve(odbL_bat *m, double **d, double *sec, void *arg) {
  (void)arg;
  if (m->gpu) {
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(odb_bgpu_lu_solve(&m->bt, m->variant, m->a, d[0]));
    return odb_bgpu_elapsed(sec);
  }
  double t0 = now_s();
  ODB_TRY(odb_batched_lu_solve(&m->bt, m->a, d[0]));
  *sec = now_s() - t0;
  return ODB_OK;
}

/* m:solve(b) -> x (a new Vector), seconds: with the factors of lu(); b
   holds n*B values, b[(p-1)*B + i] for matrix p. */
static int bat_solve(lua_State *L) {
  odbL_bat *m = bat_check(L, 1);
  odbL_vector *b = bat_vec(L, m, 2, 1, "solve");
  if (!m->factored)
    return luaL_error(L, "ob.batched solve: call lu() first");
  odbL_vector *x = odbL_vector_new(L, b->n);
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
  if (m->gpu) {
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(odb_bgpu_gemv(&m->bt, m->variant, g->alpha, m->a, d[0], g->beta,
                          d[1]));
    return odb_bgpu_elapsed(sec);
  }
  double t0 = now_s();
  ODB_TRY(odb_batched_gemv(&m->bt, g->alpha, m->a, d[0], g->beta, d[1]));
  *sec = now_s() - t0;
  return ODB_OK;
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
      o->bt.layout != m->bt.layout || o->gpu != m->gpu)
    luaL_error(L, "ob.batched %s: the batches differ (n %d/%d, block %d/%d, "
               "layout %s/%s, VL %d/%d, backend %s/%s)", who, (int)m->bt.n,
               (int)o->bt.n, m->bt.b, o->bt.b,
               odb_batched_layout_name(m->bt.layout),
               odb_batched_layout_name(o->bt.layout), m->bt.vl, o->bt.vl,
               m->gpu ? "cuda" : "cpu", o->gpu ? "cuda" : "cpu");
}

/* m:gemm(X, C [, {alpha=1, beta=0}]) -> seconds: C := alpha A X + beta C
   for every matrix (X and C batches like m; C neither m nor X). */
static int bat_gemm(lua_State *L) {
  static const char *const keys[] = { "alpha", "beta", NULL };
  odbL_bat *m = bat_check(L, 1), *x = bat_check(L, 2), *c = bat_check(L, 3);
  double alpha = 1.0, beta = 0.0, sec = 0;
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
  if (m->gpu) {
    raise_on(L, odb_bgpu_mark());
    raise_on(L, odb_bgpu_gemm(&m->bt, m->variant, alpha, m->a, x->a, beta,
                              c->a));
    raise_on(L, odb_bgpu_elapsed(&sec));
  } else {
    double t0 = now_s();
    raise_on(L, odb_batched_gemm(&m->bt, alpha, m->a, x->a, beta, c->a));
    sec = now_s() - t0;
  }
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
  double sec = 0;
  bat_same(L, m, x, "trsm");
  if (!m->factored)
    return luaL_error(L, "ob.batched trsm: call lu() first");
  if (x == m) return luaL_error(L, "ob.batched trsm: X must not be A");
  if (m->gpu) {
    raise_on(L, odb_bgpu_mark());
    raise_on(L, odb_bgpu_trsm(&m->bt, m->variant, kind, m->a, x->a));
    raise_on(L, odb_bgpu_elapsed(&sec));
  } else {
    double t0 = now_s();
    raise_on(L, odb_batched_trsm(&m->bt, kind, m->a, x->a));
    sec = now_s() - t0;
  }
  x->factored = 0;
  lua_pushnumber(L, sec);
  return 1;
}

/* Buffers of a batched benchmark (where the batch lives). */
typedef struct bat_bufs {
  double *orig, *work, *x0, *x, *y, *col, *rhs;
  odb_bgpu_blas *blas;
} bat_bufs;

static void bat_bench_free(const odbL_bat *m, bat_bufs *w) {
  odb_bgpu_blas_free(w->blas);
  bat_free(m, w->orig);
  bat_free(m, w->work);
  bat_free(m, w->x0);
  bat_free(m, w->x);
  bat_free(m, w->y);
  odb_bgpu_free(w->col);
  odb_bgpu_free(w->rhs);
}

/* Timed region start / end on the batch's backend. */
static odb_status tic(const odbL_bat *m, double *t0) {
  if (m->gpu) return odb_bgpu_mark();
  *t0 = now_s();
  return ODB_OK;
}
static odb_status toc(const odbL_bat *m, double t0, double *sec) {
  if (m->gpu) return odb_bgpu_elapsed(sec);
  *sec = now_s() - t0;
  return ODB_OK;
}

/* Copies n doubles where the batch lives. */
static odb_status bat_copy(const odbL_bat *m, double *dst, const double *src,
                           size_t n) {
  if (m->gpu) return odb_bgpu_copy(dst, src, n);
  memcpy(dst, src, sizeof(double) * n);
  return ODB_OK;
}

/* Random vectors (rhs layout, m columns) where the batch lives. */
static odb_status bat_rand_rhs(const odbL_bat *m, int cols, uint64_t seed,
                               double *x) {
  if (m->gpu) return odb_bgpu_random_rhs(&m->bt, cols, seed, x);
  odb_batched_random_rhs(&m->bt, cols, seed, x);
  return ODB_OK;
}

/* One rep of op on our kernels (variant v; CPU: the one kernel). */
static odb_status bench_ours(odbL_bat *m, odb_bgpu_op op, odb_bgpu_variant v,
                             bat_bufs *w, double *sec) {
  size_t ml = odb_batch_mat_len(&m->bt), rl = odb_batch_rhs_len(&m->bt, 1);
  double t0 = 0;
  switch (op) {
  case ODB_BGPU_OP_LU:
    ODB_TRY(bat_copy(m, w->work, w->orig, ml));
    ODB_TRY(tic(m, &t0));
    if (m->gpu) ODB_TRY(odb_bgpu_lu_launch(&m->bt, v, w->work));
    else ODB_TRY(odb_batched_lu(&m->bt, w->work, NULL));
    return toc(m, t0, sec);
  case ODB_BGPU_OP_SOLVE:
    ODB_TRY(bat_copy(m, w->x, w->x0, rl));
    ODB_TRY(tic(m, &t0));
    if (m->gpu) ODB_TRY(odb_bgpu_lu_solve(&m->bt, v, w->work, w->x));
    else ODB_TRY(odb_batched_lu_solve(&m->bt, w->work, w->x));
    return toc(m, t0, sec);
  case ODB_BGPU_OP_TRSM:
    ODB_TRY(bat_copy(m, w->x, w->x0, ml));
    ODB_TRY(tic(m, &t0));
    if (m->gpu)
      ODB_TRY(odb_bgpu_trsm(&m->bt, v, ODB_TRSM_LEFT_LOWER_UNIT, w->work,
                            w->x));
    else
      ODB_TRY(odb_batched_trsm(&m->bt, ODB_TRSM_LEFT_LOWER_UNIT, w->work,
                               w->x));
    return toc(m, t0, sec);
  case ODB_BGPU_OP_GEMM:
    ODB_TRY(tic(m, &t0));
    if (m->gpu)
      ODB_TRY(odb_bgpu_gemm(&m->bt, v, 1.0, w->orig, w->x0, 0.0, w->y));
    else ODB_TRY(odb_batched_gemm(&m->bt, 1.0, w->orig, w->x0, 0.0, w->y));
    return toc(m, t0, sec);
  default:   /* GEMV */
    ODB_TRY(tic(m, &t0));
    if (m->gpu)
      ODB_TRY(odb_bgpu_gemv(&m->bt, v, 1.0, w->orig, w->x0, 0.0, w->y));
    else ODB_TRY(odb_batched_gemv(&m->bt, 1.0, w->orig, w->x0, 0.0, w->y));
    return toc(m, t0, sec);
  }
}

/* Prepares the buffers of op: orig = the matrices, work = their factors
   where the op needs them, x0 random operands, x and y outputs. */
static odb_status bench_prepare(odbL_bat *m, odb_bgpu_op op, bat_bufs *w) {
  size_t ml = odb_batch_mat_len(&m->bt), rl = odb_batch_rhs_len(&m->bt, 1);
  size_t xl = op == ODB_BGPU_OP_TRSM || op == ODB_BGPU_OP_GEMM ? ml : rl;
  int cols = xl == ml ? m->bt.b : 1;
  ODB_TRY(bat_alloc(m, ml, &w->orig));
  ODB_TRY(bat_copy(m, w->orig, m->a, ml));
  if (op == ODB_BGPU_OP_LU || op == ODB_BGPU_OP_SOLVE ||
      op == ODB_BGPU_OP_TRSM) {
    ODB_TRY(bat_alloc(m, ml, &w->work));
    ODB_TRY(bat_copy(m, w->work, w->orig, ml));
  }
  if (op == ODB_BGPU_OP_LU) return ODB_OK;
  ODB_TRY(bat_alloc(m, xl, &w->x0));
  ODB_TRY(bat_rand_rhs(m, cols, 7, w->x0));
  if (op == ODB_BGPU_OP_SOLVE || op == ODB_BGPU_OP_TRSM) {
    ODB_TRY(bat_alloc(m, xl, &w->x));
    if (m->gpu) return odb_bgpu_lu(&m->bt, ODB_BGPU_AUTO, w->work, NULL);
    return odb_batched_lu(&m->bt, w->work, NULL);
  }
  return bat_alloc(m, xl, &w->y);
}

/* cuBLAS: column-major copies of the matrices (col) and of a random rhs;
   one rep of getrf (lu) or getrs (solve). */
static odb_status bench_blas_prepare(odbL_bat *m, odb_bgpu_op op, int pivot,
                                     bat_bufs *w) {
  size_t sl = (size_t)m->bt.n * m->bt.b * m->bt.b;
  size_t vl = (size_t)m->bt.n * m->bt.b;
  ODB_TRY(odb_bgpu_alloc(sl, &w->orig));
  ODB_TRY(odb_bgpu_alloc(sl, &w->col));
  ODB_TRY(odb_bgpu_alloc(vl, &w->rhs));
  ODB_TRY(odb_bgpu_alloc(vl, &w->x0));
  ODB_TRY(odb_bgpu_unpack(&m->bt, m->a, w->orig, 1));
  ODB_TRY(odb_bgpu_copy(w->col, w->orig, sl));
  odb_batch std1;
  ODB_TRY(odb_batch_init(&std1, ODB_LAYOUT_STANDARD, m->bt.n, m->bt.b, 1));
  ODB_TRY(odb_bgpu_random_rhs(&std1, 1, 7, w->x0));
  ODB_TRY(odb_bgpu_blas_new(m->bt.n, m->bt.b, w->col, w->rhs, pivot,
                            &w->blas));
  if (op == ODB_BGPU_OP_SOLVE) ODB_TRY(odb_bgpu_blas_lu(w->blas, NULL));
  return ODB_OK;
}

static odb_status bench_blas(odbL_bat *m, odb_bgpu_op op, bat_bufs *w,
                             double *sec) {
  size_t sl = (size_t)m->bt.n * m->bt.b * m->bt.b;
  size_t vl = (size_t)m->bt.n * m->bt.b;
  if (op == ODB_BGPU_OP_LU) {
    ODB_TRY(odb_bgpu_copy(w->col, w->orig, sl));
    ODB_TRY(odb_bgpu_mark());
    ODB_TRY(odb_bgpu_blas_lu(w->blas, NULL));
    return odb_bgpu_elapsed(sec);
  }
  ODB_TRY(odb_bgpu_copy(w->rhs, w->x0, vl));
  ODB_TRY(odb_bgpu_mark());
  ODB_TRY(odb_bgpu_blas_solve(w->blas));
  return odb_bgpu_elapsed(sec);
}

/*
** m:bench{op="lu"|"solve"|"trsm"|"gemm"|"gemv", reps=5, variant=} ->
** {seconds (median), best, bytes, gbs, gbs_best, reps, variant}. The
** matrices are left as they are (they must not be factored): lu factors a
** copy each rep (the copy not timed); solve and trsm use the factors of a
** copy and a random operand reset each rep; gemm and gemv write a separate
** output. cuda: device event times; variant auto|serial|serial2|team, or
** "cublas" / "cublas_nopiv" (lu and solve: cublasDgetrfBatched /
** getrsBatched on column-major copies, with / without partial pivoting).
** bytes: odb_bgpu_op_bytes (each operand read once, results written once).
*/
static int bat_bench(lua_State *L) {
  static const char *const keys[] = { "op", "reps", "variant", NULL };
  odbL_bat *m = bat_check(L, 1);
  long long reps = 5;
  double times[BENCH_MAX_REPS];
  bat_bufs w;
  odb_bgpu_op op;
  odb_bgpu_variant v = m->variant;
  odb_status st;
  int blas = 0, pivot = 0;
  memset(&w, 0, sizeof w);
  luaL_checktype(L, 2, LUA_TTABLE);
  odbL_check_keys(L, 2, keys);
  raise_on(L, odb_bgpu_op_parse(odbL_opt_string(L, 2, "op", "lu"), &op));
  odbL_opt_integer(L, 2, "reps", &reps);
  const char *vn = odbL_opt_string(L, 2, "variant", NULL);
  if (reps < 1 || reps > BENCH_MAX_REPS)
    return luaL_error(L, "ob.batched bench: reps = %d, allowed 1..%d",
                      (int)reps, BENCH_MAX_REPS);
  if (m->factored)
    return luaL_error(L, "ob.batched bench: the matrices hold LU factors "
                      "(random or set first)");
  if (vn && (strcmp(vn, "cublas") == 0 || strcmp(vn, "cublas_nopiv") == 0)) {
    if (!m->gpu)
      return luaL_error(L, "ob.batched bench: variant %s needs backend "
                        "\"cuda\"", vn);
    if (op != ODB_BGPU_OP_LU && op != ODB_BGPU_OP_SOLVE)
      return luaL_error(L, "ob.batched bench: cuBLAS is measured for lu and "
                        "solve only");
    blas = 1;
    pivot = strcmp(vn, "cublas") == 0;
  } else if (vn) {
    if (!m->gpu && strcmp(vn, "auto") != 0)
      return luaL_error(L, "ob.batched bench: variant '%s' needs backend "
                        "\"cuda\"", vn);
    raise_on(L, odb_bgpu_variant_parse(vn, &v));
  }
  const char *name = "cpu";
  if (blas) {
    name = pivot ? "cublas" : "cublas_nopiv";
    st = bench_blas_prepare(m, op, pivot, &w);
  } else {
    if (m->gpu) {
      raise_on(L, odb_bgpu_resolve(&m->bt, op, v, &v));
      name = odb_bgpu_variant_name(v);
    }
    st = bench_prepare(m, op, &w);
  }
  for (int r = 0; r < reps && st == ODB_OK; ++r)
    st = blas ? bench_blas(m, op, &w, &times[r])
              : bench_ours(m, op, v, &w, &times[r]);
  bat_bench_free(m, &w);
  raise_on(L, st);
  push_bench(L, times, (int)reps, odb_bgpu_op_bytes(&m->bt, op), name);
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
  lua_pushstring(L, m->gpu ? "cuda" : "cpu");
  lua_setfield(L, -2, "backend");
  lua_pushstring(L, m->gpu ? odb_bgpu_variant_name(m->variant) : "cpu");
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
  if (m->open) bat_free(m, m->a);
  m->a = NULL;
  m->open = 0;
  return 0;
}

static void bat_meta(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"random", bat_random}, {"set", bat_set}, {"get", bat_get},
    {"lu", bat_lu}, {"solve", bat_solve}, {"gemv", bat_gemv},
    {"gemm", bat_gemm}, {"trsm", bat_trsm}, {"bench", bat_bench},
    {"info", bat_info}, {"close", bat_close}, {NULL, NULL}
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
** ob.batched{n=, block=, layout="compact"|"standard", vl=0,
** backend="cpu"|"cuda", variant="auto"}: n matrices block x block (block
** 2..32), identity until random or set. vl: lanes per pack (CPU: 1, 2, 4,
** 8, 16, 0 = the SIMD width; cuda: also 32, 0 = 16). variant (cuda): the
** thread mapping of the kernels (odb_batched_gpu.h).
*/
int odbL_batched(lua_State *L) {
  static const char *const keys[] = { "n", "block", "layout", "vl",
                                      "backend", "variant", NULL };
  long long n = 0, block = 0, vl = 0;
  odb_batched_layout layout;
  luaL_checktype(L, 1, LUA_TTABLE);
  odbL_check_keys(L, 1, keys);
  if (!odbL_opt_integer(L, 1, "n", &n) ||
      !odbL_opt_integer(L, 1, "block", &block))
    return luaL_error(L, "ob.batched: n and block are required");
  odbL_opt_integer(L, 1, "vl", &vl);
  raise_on(L, odb_batched_layout_parse(
                odbL_opt_string(L, 1, "layout", "compact"), &layout));
  if (n < 1 || n > ((long long)1 << 40))
    return luaL_error(L, "ob.batched: n = %I, allowed 1..2^40",
                      (lua_Integer)n);
  if (block < ODB_BATCHED_MIN_B || block > ODB_BATCHED_MAX_B)
    return luaL_error(L, "ob.batched: block = %I, allowed %d..%d",
                      (lua_Integer)block,
                      ODB_BATCHED_MIN_B, ODB_BATCHED_MAX_B);
  if (vl < 0 || vl > 64)
    return luaL_error(L, "ob.batched: vl = %I, allowed 0 (default), 1, 2, "
                      "4, 8, 16 (and 32 on cuda)", (lua_Integer)vl);
  int gpu = opt_backend(L, 1, "ob.batched");
  odb_bgpu_variant var = opt_variant(L, 1, gpu, "ob.batched");
  odb_batch bt;
  if (gpu)
    raise_on(L, odb_bgpu_batch_init(&bt, layout, (long)n, (int)block,
                                    (int)vl));
  else
    raise_on(L, odb_batch_init(&bt, layout, (long)n, (int)block, (int)vl));
  if (gpu && var != ODB_BGPU_AUTO) {
    odb_bgpu_variant r;
    raise_on(L, odb_bgpu_resolve(&bt, ODB_BGPU_OP_LU, var, &r));
  }
  bat_meta(L);
  odbL_gc_external(L, sizeof(double) * (double)odb_batch_mat_len(&bt));
  odbL_bat *m = lua_newuserdatauv(L, sizeof *m, 0);
  memset(m, 0, sizeof *m);
  m->bt = bt;
  m->gpu = gpu;
  m->variant = var;
  luaL_setmetatable(L, ODBL_BAT);
  size_t ml = odb_batch_mat_len(&bt);
  raise_on(L, bat_alloc(m, ml, &m->a));
  m->open = 1;
  /* identity matrices (padding included) */
  if (gpu) {
    odb_batch none = bt;   /* every lane counts as padding: identity */
    none.n = 0;
    raise_on(L, odb_bgpu_random(&none, 0, 0.0, m->a));
    raise_on(L, odb_bgpu_sync());
  } else {
    memset(m->a, 0, sizeof(double) * ml);
    for (long p = 0; p < bt.packs * bt.vl; ++p)
      for (int i = 0; i < bt.b; ++i)
        m->a[odb_batch_mat_at(&bt, p, i, i)] = 1.0;
  }
  return 1;
}

/* }====== */
