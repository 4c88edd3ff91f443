/* odb_lua_batched.h - what ob.batched (odb_lua_batched.c) and
   ob.blocktridiag (odb_lua_blocktridiag.c) share: option reading, block
   values, the bad-pivot error and the benchmark table. Private to those
   two files. */
#ifndef ODB_LUA_BATCHED_H
#define ODB_LUA_BATCHED_H

#include "odb_lua.h"
#include "odb_batched_impl.h"

/* Most repetitions a bench may ask for. */
#define BENCH_MAX_REPS 1000

/*
** The ops table (odb_batched_impl.h) named by field `backend` of the table
** at arg ("cpu" when absent), usable in this run; raises the registry's
** error (an unknown name, "cuda" in a build without CUDA) or the table's
** (no device) otherwise. who names the caller.
*/
const odb_batched_ops *odbL_bt_backend(lua_State *L, int arg,
                                       const char *who);
/* The variant field of the table at arg, parsed by ops ("auto", 0, when
   absent; the CPU has no other). */
int odbL_bt_variant(lua_State *L, int arg, const odb_batched_ops *ops,
                    const char *who);
/* Whether the table at 1 has the fields a, b and c (c may be NULL). */
int odbL_bt_has_fields(lua_State *L, const char *a, const char *b,
                       const char *c);
/*
** Reads the row-major B x B values at idx (a Vector or a table of bs*bs
** numbers) into blk. A wrong count, a value that is not a number, or NaN
** raises an argument error naming the 1-based place.
*/
void odbL_bt_read_block(lua_State *L, int idx, int bs, double *blk);
/*
** Raises "<who>: <what> N has a zero or tiny pivot <at>R (<why>); <kept>"
** for matrix or line `bad` and row `row` (both 0-based, shown from 1;
** row -1 when not known: then no row is named). Never returns.
*/
void odbL_bt_pivot_error(lua_State *L, const char *who, const char *what,
                         long bad, int row, const char *at, const char *why,
                         const char *kept);
/* How a bench repeats, from the table at arg: its reps (1..BENCH_MAX_REPS,
   exactly that many timed runs) and measure fields (odb_lua_measure.c),
   then --measure and the defaults. */
void odbL_bt_measure(lua_State *L, int arg, odb_measure_opts *o);
/* Reads {seed=, dominance=} at idx (an optional table; NaN refused). */
void odbL_bt_random_opts(lua_State *L, int idx, long long *seed,
                         double *dom);
/* Pushes the row of a benchmark that reads rbytes and writes wbytes at
   least (odb_dense_floor.h; touched: the distinct bytes): seconds (the
   median), best (the fastest run), bytes (rbytes + wbytes), gbs and
   gbs_best (from those two), median, q1, q3, spread, reps, variant, op,
   backend and the floor fields (odbL_floor_fields); records it as a
   results row of kind `kind`. */
void odbL_bt_push_bench(lua_State *L, const odb_measurement *m, double rbytes,
                        double wbytes, double touched, const char *variant,
                        const char *op, const char *backend,
                        const char *kind);

#endif
