/* odb_lua_userproblem.c - ob.problem{...}: an IVP defined in a scenario,
   with f as a Lua function (CPU, for verification) and optionally as CUDA
   C of f_j with its access distance (the GPU variants compile it), and for
   a 2-D grid as CUDA C of a cell (gpu_stream2d compiles it). */
#include "odb_lua.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odb_sha256.h"
#include "odb_size.h"

/*
** The problem's private data, one block freed by odb_problem_destroy: the
** problem's own Lua thread, on which f runs (its stack holds f at index 1;
** the thread is the Problem userdata's user value, so it lives as long as
** the Problem and not as long as whichever coroutine made it), a lock that
** serialises calls into Lua (a threaded CPU variant may call f from several
** threads), the initial value, the stops (p->tstops points at them) and
** the GPU source.
*/
typedef struct user_data {
  lua_State *L;          /* the problem's thread; f at its stack index 1 */
  int failed;            /* f raised since take_failure last looked */
  char msg[384];         /* its first message then */
  char what[96];         /* "f of problem 'name'", for the callback guard */
  pthread_mutex_t mu;
  double *y0;            /* n values, after the struct */
  double *tstops;        /* the stops, ascending, after y0 */
  char *src;             /* NULL or the CUDA C, after the stops */
  char *cell;            /* NULL or the cell's CUDA C, after src */
} user_data;

static const odb_problem_type user_type = {
  .name = ODB_PROBLEM_USER,
  .doc = "an IVP defined in a scenario: ob.problem{name=, n=, d=, f=, y0=, "
         "gpu_source=, grid=, cell_source=, star=, tstops=}",
};

static const char *const user_keys[] = {
  "name", "n", "d", "f", "y0", "gpu_source", "params", "t0", "t1", "flops",
  "grid", "cell_source", "star", "tstops", NULL
};

/* One call of f, as user_rhs hands it to rhs_protected. */
typedef struct rhs_call {
  const odb_problem *p;
  double t;
  const double *y;       /* components [lo, hi) at y[k - yoff] */
  long yoff, lo, hi;
  double *f;             /* receives f_j for j in [j0, j1) */
  long j0, j1;
} rhs_call;

/*
** Runs under lua_pcall with f and the rhs_call as arguments 1 and 2, so
** that a failed allocation of the Vectors is f's failure like an error in
** f itself, and never unwinds through the engine.
*/
static int rhs_protected(lua_State *L) {
  const rhs_call *c = lua_touserdata(L, 2);
  long n = c->p->n;
  odbL_vector *fv = odbL_vector_new(L, n), *yv;            /* 3 */
  lua_pushvalue(L, 1);
  lua_pushnumber(L, c->t);
  yv = odbL_vector_new(L, n);
  memcpy(yv->v + c->lo, c->y + (c->lo - c->yoff),
         (size_t)(c->hi - c->lo) * sizeof(double));
  lua_pushvalue(L, 3);
  lua_call(L, 3, 0);
  memcpy(c->f, fv->v + c->j0, (size_t)(c->j1 - c->j0) * sizeof(double));
  return 0;
}

/*
** f_j for j in [j0, j1) through the scenario's f(t, y, f): y is the window
** [max(0, j0 - d), min(n, j1 + d)) copied into a Vector of n (zeros
** elsewhere), f a Vector of n zeros that f fills; components are 1-based
** there (y[k + 1] is component k). f runs on the problem's own thread,
** bracketed by odbL_callback_enter/leave: from inside it, entry points that
** run engine work raise instead of deadlocking on the lock held here. An
** error in f gives NaN and is kept (the first message) for
** user_take_failure: the solver reports it.
*/
static void user_rhs(const odb_problem *p, double t, const double *y,
                     long yoff, double *f, long j0, long j1) {
  user_data *u = p->data;
  lua_State *L = u->L;
  rhs_call c;
  const char *m;
  int top, rc;
  c.p = p;
  c.t = t;
  c.y = y;
  c.yoff = yoff;
  c.lo = j0 - p->d > 0 ? j0 - p->d : 0;
  c.hi = j1 + p->d < p->n ? j1 + p->d : p->n;
  c.f = f;
  c.j0 = j0;
  c.j1 = j1;
  pthread_mutex_lock(&u->mu);
  odbL_callback_enter(u->what);
  top = lua_gettop(L);
  if (lua_checkstack(L, 8)) {
    lua_pushcfunction(L, rhs_protected);
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, &c);
    rc = lua_pcall(L, 2, 0, 0);
    m = rc == LUA_OK ? NULL : lua_tostring(L, -1);
    if (rc != LUA_OK && !m) m = "(error object is not a string)";
  } else {
    m = "no Lua stack left to call f";
  }
  if (m) {
    if (!u->failed) snprintf(u->msg, sizeof u->msg, "%s", m);
    u->failed = 1;
    for (long j = j0; j < j1; ++j) f[j - j0] = 0.0 / 0.0;
  }
  lua_settop(L, top);
  odbL_callback_leave();
  pthread_mutex_unlock(&u->mu);
}

/* The problem's take_failure: f's first error since the last look. */
static int user_take_failure(const odb_problem *p, char *msg, size_t len) {
  user_data *u = p->data;
  int failed;
  pthread_mutex_lock(&u->mu);
  failed = u->failed;
  if (failed) snprintf(msg, len, "%s", u->msg);
  u->failed = 0;
  pthread_mutex_unlock(&u->mu);
  return failed;
}

/* The initial value given at creation. */
static void user_initial(const odb_problem *p, double *y0) {
  const user_data *u = p->data;
  memcpy(y0, u->y0, (size_t)p->n * sizeof(double));
}

/* Fills y0 from the list of n numbers at the top of the stack. */
static void read_y0_list(lua_State *L, long n, double *y0) {
  lua_Integer len = luaL_len(L, -1);
  if (len != n)
    luaL_error(L, "bad argument #1 to 'problem' (field 'y0': a list of %I "
               "numbers, one per component, expected; got %I entries)",
               (lua_Integer)n, len);
  lua_Integer bad = odbL_read_numbers(L, -1, y0, n);
  if (bad)
    luaL_error(L, "bad argument #1 to 'problem' (field 'y0': entry %I is "
               "%s, number expected)", bad, luaL_typename(L, -1));
}

/*
** Fills u->y0 from the table's y0: a Vector of n, a list of n numbers, or a
** function of the component index i (1..n).
*/
static void read_y0(lua_State *L, int idx, long n, double *y0) {
  int t = lua_getfield(L, idx, "y0");
  if (t == LUA_TTABLE) {
    read_y0_list(L, n, y0);
  } else if (t == LUA_TFUNCTION) {
    for (long i = 0; i < n; ++i) {
      lua_pushvalue(L, -1);
      lua_pushinteger(L, i + 1);
      lua_call(L, 1, 1);
      if (!lua_isnumber(L, -1))
        luaL_error(L, "bad argument #1 to 'problem' (field 'y0': the "
                   "function returned %s for component %I, number expected)",
                   luaL_typename(L, -1), (lua_Integer)(i + 1));
      y0[i] = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
  } else {
    odbL_vector *v = luaL_testudata(L, -1, ODBL_VECTOR);
    if (!v || v->n != n)
      luaL_argerror(L, 1, "field 'y0': a Vector or a list of n numbers, or "
                    "a function of the component index (1..n), expected");
    memcpy(y0, v->v, (size_t)n * sizeof(double));
  }
  lua_pop(L, 1);
}

/* Reads params (up to 8 numbers, ODB_P0..ODB_P7 in the GPU source). */
static void read_params(lua_State *L, int idx, double *param) {
  if (lua_getfield(L, idx, "params") != LUA_TNIL) {
    lua_Integer len;
    if (!lua_istable(L, -1))
      luaL_argerror(L, 1, "field 'params': a list of up to 8 numbers expected");
    len = luaL_len(L, -1);
    if (len > 8) luaL_argerror(L, 1, "field 'params': at most 8 numbers");
    for (lua_Integer i = 1; i <= len; ++i) {
      if (lua_geti(L, -1, i) != LUA_TNUMBER)
        luaL_argerror(L, 1, "field 'params': numbers expected");
      param[i - 1] = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

static const char *const grid_keys[] = { "rows", "cols", "comps", NULL };

/*
** The 2-D grid of a problem with a cell source: grid = {rows=, cols=,
** comps=} (rows and cols at least 2, comps 1..8, 1 by default, what
** gpu_stream2d takes) with rows cols comps = n, and d at least
** comps cols (the stencil reaches the next row); star = true declares a
** 5-point stencil. grid and cell_source come together, and star needs
** both.
*/
static void read_grid(lua_State *L, odb_problem *p, const char *cell) {
  int t = lua_getfield(L, 1, "grid");
  long long r, c, k;
  long rc, rck;
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    if (cell)
      luaL_argerror(L, 1, "field 'cell_source': needs field 'grid' = {rows=, "
                    "cols=, comps=} (the cells' layout)");
    if (lua_getfield(L, 1, "star") != LUA_TNIL)
      luaL_argerror(L, 1, "field 'star': needs fields 'grid' and "
                    "'cell_source'");
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) odbL_field_error(L, 1, "grid", "table {rows=, cols=, "
                                        "comps=}", -1);
  if (!cell)
    luaL_argerror(L, 1, "field 'grid': needs field 'cell_source' (CUDA C of "
                  "odb_rhs_cell)");
  odbL_check_keys(L, lua_gettop(L), grid_keys);
  r = odbL_opt_int_range(L, 1, lua_gettop(L), "rows", "grid.rows", 2,
                         p->n, 0);
  c = odbL_opt_int_range(L, 1, lua_gettop(L), "cols", "grid.cols", 2,
                         p->n, 0);
  k = odbL_opt_int_range(L, 1, lua_gettop(L), "comps", "grid.comps", 1, 8,
                         1);
  lua_pop(L, 1);
  if (r < 2 || c < 2)
    luaL_argerror(L, 1, "field 'grid': rows and cols are required");
  if (odb_long_mul(&rc, (long)r, (long)c) || rc > p->n ||
      odb_long_mul(&rck, rc, (long)k) || rck != p->n)
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'grid': rows x cols x "
                  "comps = %I x %I x %I must be n (%I)", (lua_Integer)r,
                  (lua_Integer)c, (lua_Integer)k, (lua_Integer)p->n));
  if (p->d < k * c)
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'd': a grid's stencil "
                  "reaches the next row: at least comps x cols = %I, got %I",
                  (lua_Integer)(k * c), (lua_Integer)p->d));
  if (lua_getfield(L, 1, "star") != LUA_TNIL && !lua_isboolean(L, -1))
    odbL_field_error(L, 1, "star", "boolean", -1);
  p->grid_star = lua_toboolean(L, -1);
  lua_pop(L, 1);
  p->grid_rows = (long)r;
  p->grid_cols = (long)c;
  p->grid_comps = (int)k;
  p->gpu_cell_source = cell;
}

/* qsort's order of doubles (the stops are finite). */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* See odb_lua.h. */
int odbL_check_tstops(lua_State *L, int arg, int idx, const char *field,
                      double *out) {
  lua_Integer len;
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    odbL_field_error(L, arg, field, "list of times", idx);
  len = (lua_Integer)lua_rawlen(L, idx);
  if (len > ODBL_MAX_TSTOPS)
    luaL_argerror(L, arg, lua_pushfstring(L, "field '%s': %I stops, at most "
                  "%d", field, len, ODBL_MAX_TSTOPS));
  for (lua_Integer i = 1; i <= len; ++i) {
    int t = lua_rawgeti(L, idx, i);
    double x = t == LUA_TNUMBER ? (double)lua_tonumber(L, -1) : 0.0;
    if (t != LUA_TNUMBER || !isfinite(x))
      luaL_argerror(L, arg, lua_pushfstring(L, "field '%s': entry %I is %s%s, "
                    "a finite number (a time) expected", field, i,
                    t == LUA_TNUMBER || t == LUA_TNIL ? "" : "a ",
                    t != LUA_TNUMBER ? luaL_typename(L, -1)
                    : isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"));
    if (out) out[i - 1] = x;
    lua_pop(L, 1);
  }
  if (out) qsort(out, (size_t)len, sizeof *out, cmp_double);
  return (int)len;
}

/* lua_dump's writer: feeds the chunk's bytes to the digest. */
static int dump_hash(lua_State *L, const void *b, size_t n, void *ud) {
  (void)L;
  odb_sha256_update(ud, b, n);
  return 0;
}

/*
** p->fkey: 12 hex digits of the SHA-256 of the code of field f of the
** table at index 1, dumped without debug information (its names do not
** count, nor do its upvalues' values: the key tells codes apart, which is
** what tuned timings depend on; the lines where it and its inner functions
** start and end stay in a dump, so the same code elsewhere in a file keys
** apart, the safe side). "" for a C function.
*/
static void f_key(lua_State *L, odb_problem *p) {
  odb_sha256_ctx c;
  uint8_t d[32];
  char hex[65];
  p->fkey[0] = '\0';
  lua_getfield(L, 1, "f");
  odb_sha256_init(&c);
  if (lua_type(L, -1) == LUA_TFUNCTION && !lua_iscfunction(L, -1) &&
      lua_dump(L, dump_hash, &c, 1) == 0 && c.len > 0) {
    odb_sha256_final(&c, d);
    odb_sha256_to_hex(d, hex);
    memcpy(p->fkey, hex, 12);
    p->fkey[12] = '\0';
  }
  lua_pop(L, 1);
}

/*
** The bytes of the private block of a problem of n components with
** `extra` bytes of source text: refused (an argument error on field 'n')
** when the count does not fit a size_t or exceeds the machine's memory,
** so that the allocation and the n calls of a y0 function are never
** attempted for a size that cannot be had.
*/
static size_t check_size(lua_State *L, lua_Integer n, size_t extra) {
  size_t vals = 0, bytes = 0;
  double mem = odb_topo_memory_bytes();
  char need[32], have[32];
  if ((unsigned long long)n > SIZE_MAX ||
      odb_size_mul(&vals, (size_t)n, sizeof(double)) ||
      odb_size_add(&bytes, vals, sizeof(user_data)) ||
      odb_size_add(&bytes, bytes, extra)) {
    snprintf(need, sizeof need, "%.3g", 8.0 * (double)n);
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'n': n = %I would need "
                  "%s bytes for the initial value, more than this machine "
                  "can address", n, need));
  }
  if (mem > 0 && (double)bytes > mem) {
    snprintf(need, sizeof need, "%.3g", (double)bytes);
    snprintf(have, sizeof have, "%.3g", mem);
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'n': n = %I would need "
                  "%s bytes for the initial value alone, more than this "
                  "machine's memory (%s bytes)", n, need, have));
  }
  return bytes;
}

/*
** ob.problem{name=, n=, d=, f=function(t, y, f), y0=, gpu_source=,
** params=, t0=, t1=, flops=, grid=, cell_source=, star=}: n >= 1, access
** distance 1 <= d <= n (d = n: unlimited, which the GPU variants refuse),
** f fills the Vector f from y, gpu_source defines `__device__ double
** odb_rhs(odb_idx j, double t, const double *y)` (y[k] is component k,
** 0-based; ODB_N, ODB_D, ODB_P0..7 defined), cell_source defines
** odb_rhs_cell for gpu_stream2d (odb_problem.h; read_grid), tstops lists
** the times where f jumps (odb_problem.tstops; sorted here). Pushes the
** Problem.
*/
int odbL_user_problem(lua_State *L) {
  lua_Integer n, d;
  size_t srclen = 0, celllen = 0, bytes;
  const char *name, *src, *cell;
  int nstops = 0;
  odbL_problem *pb;
  odb_problem *p;
  user_data *u;
  lua_State *th;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  odbL_check_keys(L, 1, user_keys);
  name = odbL_opt_string(L, 1, "name", "user");
  if (lua_getfield(L, 1, "n") == LUA_TNIL)
    return luaL_argerror(L, 1, "field 'n': a positive integer is required");
  n = odbL_int_in_range(L, 1, -1, "field 'n'", 1, LUA_MAXINTEGER);
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "d") == LUA_TNIL) d = n;
  else d = odbL_int_in_range(L, 1, -1, "field 'd' (the access distance)", 1,
                             n);
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "f") != LUA_TFUNCTION)
    return luaL_argerror(L, 1, "field 'f': function(t, y, f) expected "
                         "(fills f from y; Vectors of n, 1-based)");
  lua_pop(L, 1);
  src = odbL_opt_string(L, 1, "gpu_source", NULL);
  if (src) srclen = strlen(src) + 1;
  cell = odbL_opt_string(L, 1, "cell_source", NULL);
  if (cell) celllen = strlen(cell) + 1;
  if (lua_getfield(L, 1, "tstops") != LUA_TNIL)   /* counted and checked */
    nstops = odbL_check_tstops(L, 1, -1, "tstops", NULL);
  lua_pop(L, 1);
  bytes = check_size(L, n, srclen + celllen +
                           (size_t)nstops * sizeof(double));
  odbL_gc_external(L, (double)bytes);
  pb = lua_newuserdatauv(L, sizeof *pb, 1);                       /* 2 */
  memset(pb, 0, sizeof *pb);
  luaL_setmetatable(L, ODBL_PROBLEM);
  p = calloc(1, sizeof *p);
  u = p ? malloc(bytes) : NULL;
  if (!u) {
    free(p);
    return luaL_error(L, "ob.problem: out of memory for n = %I (%f bytes)",
                      n, (lua_Number)bytes);
  }
  memset(u, 0, sizeof *u);
  p->data = u;
  pb->p = p;                      /* freed with the userdata from now on */
  pb->closed = 0;
  u->y0 = (double *)(u + 1);
  u->tstops = u->y0 + n;
  u->src = src ? (char *)(u->tstops + nstops) : NULL;
  if (src) memcpy(u->src, src, srclen);
  u->cell = cell ? (char *)(u->tstops + nstops) + srclen : NULL;
  if (cell) memcpy(u->cell, cell, celllen);
  pthread_mutex_init(&u->mu, NULL);
  snprintf(u->what, sizeof u->what, "f of problem '%s'", name);
  p->type = &user_type;
  p->n = (long)n;
  p->d = (long)d;
  p->t0 = 0.0;
  p->t1 = 1.0;
  odbL_opt_number(L, 1, "t0", &p->t0);
  odbL_opt_number(L, 1, "t1", &p->t1);
  p->flops_per_comp = 10.0;
  odbL_opt_number(L, 1, "flops", &p->flops_per_comp);
  p->rhs = user_rhs;
  p->take_failure = user_take_failure;
  p->initial = user_initial;
  p->gpu_source = u->src;
  if (nstops > 0) {   /* read again, into their place, and sorted */
    lua_getfield(L, 1, "tstops");
    odbL_check_tstops(L, 1, -1, "tstops", u->tstops);
    lua_pop(L, 1);
    p->tstops = u->tstops;
    p->ntstops = nstops;
  }
  snprintf(p->label, sizeof p->label, "%s(n=%lld,d=%lld)", name,
           (long long)n, (long long)d);
  read_params(L, 1, p->param);
  read_grid(L, p, u->cell);
  read_y0(L, 1, p->n, u->y0);
  f_key(L, p);
  th = lua_newthread(L);                                          /* 3 */
  lua_getfield(L, 1, "f");
  lua_xmove(L, th, 1);            /* f at index 1 of the thread's stack */
  lua_setiuservalue(L, 2, 1);
  u->L = th;
  return 1;
}
