/* odb_lua_batched.c - ob.blocktridiag{...}: many block-tridiagonal lines
   (odb_batched.h) with factor() and solve(b), for the CPU scenarios. */
#include "odb_lua.h"

#include <string.h>
#include <time.h>

#include "odb_batched.h"

#define ODBL_BTD "odebench.BlockTridiag"

typedef struct odbL_btd {
  odb_blocktridiag *t;   /* NULL once closed */
} odbL_btd;

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

/* t:set(line, row, "A"|"D"|"C", values): 1-based line and row; values a
   Vector or a table of B*B numbers, row-major. */
static int btd_set(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  long line = (long)luaL_checkinteger(L, 2) - 1;
  int row = (int)luaL_checkinteger(L, 3) - 1;
  odb_btd_block w = block_kind(L, 4);
  int bs = odb_blocktridiag_batch(b->t)->b;
  double blk[ODB_BATCHED_MAX_B * ODB_BATCHED_MAX_B];
  if (lua_istable(L, 5)) {
    if ((long)luaL_len(L, 5) != (long)bs * bs)
      return luaL_argerror(L, 5, "expected block*block values");
    for (int e = 0; e < bs * bs; ++e) {
      lua_geti(L, 5, e + 1);
      blk[e] = luaL_checknumber(L, -1);
      lua_pop(L, 1);
    }
  } else {
    odbL_vector *v = odbL_vector_check(L, 5);
    if (v->n != (long)bs * bs)
      return luaL_argerror(L, 5, "expected block*block values");
    memcpy(blk, v->v, sizeof(double) * (size_t)bs * bs);
  }
  raise_on(L, odb_blocktridiag_set(b->t, line, row, w, blk));
  return 0;
}

/* t:random{seed=1, dominance=3}: random blocks in (-1, 1), D's diagonal
   raised by dominance*B (block diagonally dominant for dominance > 2). */
static int btd_random(lua_State *L) {
  static const char *const keys[] = { "seed", "dominance", NULL };
  odbL_btd *b = btd_check(L, 1);
  long long seed = 1;
  double dom = 3.0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    odbL_check_keys(L, 2, keys);
    odbL_opt_integer(L, 2, "seed", &seed);
    odbL_opt_number(L, 2, "dominance", &dom);
  }
  const odb_batch *bt = odb_blocktridiag_batch(b->t);
  int K = odb_blocktridiag_length(b->t), bs = bt->b;
  double blk[ODB_BATCHED_MAX_B * ODB_BATCHED_MAX_B];
  odb_rng r;
  odb_rng_seed(&r, (uint64_t)seed);
  for (long ln = 0; ln < bt->n; ++ln)
    for (int row = 0; row < K; ++row)
      for (int w = 0; w < 3; ++w) {
        if ((w == 0 && row == 0) || (w == 2 && row == K - 1))
          continue;
        for (int e = 0; e < bs * bs; ++e)
          blk[e] = 2.0 * odb_rng_uniform(&r) - 1.0;
        if (w == ODB_BTD_D)
          for (int i = 0; i < bs; ++i)
            blk[i * bs + i] += (blk[i * bs + i] < 0 ? -dom : dom) * bs;
        raise_on(L, odb_blocktridiag_set(b->t, ln, row, (odb_btd_block)w,
                                         blk));
      }
  return 0;
}

/* t:factor() -> seconds. */
static int btd_factor(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  double t0 = now_s();
  raise_on(L, odb_blocktridiag_factor(b->t, NULL));
  lua_pushnumber(L, now_s() - t0);
  return 1;
}

/* t:solve(b) -> x (a new Vector), seconds; b: lines*length*block values in
   the order ((line*length + row)*block + i). */
static int btd_solve(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  odbL_vector *rhs = odbL_vector_check(L, 2);
  odbL_vector *x = odbL_vector_new(L, rhs->n);
  memcpy(x->v, rhs->v, sizeof(double) * (size_t)rhs->n);
  double t0 = now_s();
  raise_on(L, odb_blocktridiag_solve(b->t, x->v, (size_t)rhs->n, NULL));
  lua_pushnumber(L, now_s() - t0);
  return 2;
}

/* t:info() -> {lines, length, block, layout, vl, factor_bytes, solve_bytes,
   size}. */
static int btd_info(lua_State *L) {
  odbL_btd *b = btd_check(L, 1);
  const odb_batch *bt = odb_blocktridiag_batch(b->t);
  int K = odb_blocktridiag_length(b->t);
  lua_createtable(L, 0, 8);
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
  odb_blocktridiag_free(b->t);
  b->t = NULL;
  return 0;
}

/* Creates the metatable once. */
static void btd_meta(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"set", btd_set}, {"random", btd_random}, {"factor", btd_factor},
    {"solve", btd_solve}, {"info", btd_info}, {"close", btd_close},
    {NULL, NULL}
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
** vl=0}: lines independent lines of length block rows of block x block
** blocks (A = C = 0, D = I until set or random).
*/
int odbL_blocktridiag(lua_State *L) {
  static const char *const keys[] = { "lines", "length", "block", "layout",
                                      "vl", NULL };
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
      vl < 0 || vl > 1000)
    return luaL_error(L, "ob.blocktridiag: length %lld, block %lld or vl "
                      "%lld out of range", length, block, vl);
  btd_meta(L);
  odbL_btd *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->t = NULL;
  luaL_setmetatable(L, ODBL_BTD);
  raise_on(L, odb_blocktridiag_new((long)lines, (int)length, (int)block,
                                   layout, (int)vl, &b->t));
  return 1;
}
