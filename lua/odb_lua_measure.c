/*
** odb_lua_measure.c - how the binding times things: the `measure = {...}`
** option of ob.solver, s:integrate and the bench calls, the run-wide
** override of `odebench --measure`, the fields every timed row carries,
** and ob.tied.
**
** Every timing of the binding goes through odb_measure_run
** (core/rt/odb_measure.c): warm-up, repetitions until the spread is small
** or the budget is spent, median and quartiles. A row then carries
**   median, q1, q3 (seconds), reps (timed runs), spread ((q3 - q1) / median)
** and its seconds and rates are computed from the median. One timed run
** of a scenario's step varied by 20% within minutes on a quiet machine, so
** a single sample is not a figure to rank by.
**
** Where options come from, later ones winning field by field: the
** odb_measure defaults (warm-up 1, 3 to 25 runs, 1 s, 2% spread), the
** call's legacy `reps` (exactly that many runs), ob.solver's measure,
** the call's measure, and last the command line's --measure, which is
** meant to trade time for confidence without editing the scenario. A zero
** field of an odb_measure_opts means "not given" throughout.
*/
#include "odb_lua.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bounds of the fields (the same from Lua and from --measure). */
#define MAX_WARMUP   100
#define MAX_REPS     1000
#define MAX_SECONDS  86400.0

static const char *const measure_keys[] = {
  "warmup", "min_reps", "max_reps", "max_seconds", "target_spread", NULL
};

#define ALLOWED "warmup, min_reps, max_reps, max_seconds, target_spread"

/* {====== one field, from Lua or from text */

/*
** Stores value v of field k into o; NULL when it is in range, else what is
** allowed ("an integer in 1..1000"). warmup 0 is stored as -1 (no
** warm-up), since a zero field means "not given".
*/
static const char *store(odb_measure_opts *o, const char *k, double v) {
  int integral = v == floor(v) && isfinite(v);
  if (strcmp(k, "warmup") == 0) {
    if (!integral || v < 0 || v > MAX_WARMUP) return "an integer in 0..100";
    o->warmup = v == 0 ? -1 : (int)v;
  } else if (strcmp(k, "min_reps") == 0 || strcmp(k, "max_reps") == 0) {
    if (!integral || v < 1 || v > MAX_REPS) return "an integer in 1..1000";
    if (k[1] == 'i') o->min_reps = (int)v;
    else o->max_reps = (int)v;
  } else if (strcmp(k, "max_seconds") == 0) {
    if (!(v > 0 && v <= MAX_SECONDS)) return "a number in (0, 86400]";
    o->max_seconds = v;
  } else {   /* target_spread */
    if (!(v > 0 && v <= 1)) return "a number in (0, 1]";
    o->target_spread = v;
  }
  return NULL;
}

/* "field 'measure': min_reps (10) must be at most max_reps (3)" or NULL. */
static const char *check_order(const odb_measure_opts *o, char *buf,
                               size_t len) {
  if (o->min_reps > 0 && o->max_reps > 0 && o->min_reps > o->max_reps) {
    snprintf(buf, len, "min_reps (%d) must be at most max_reps (%d)",
             o->min_reps, o->max_reps);
    return buf;
  }
  return NULL;
}

/* }====== */

/* {====== reading */

/* See odb_lua.h. */
void odbL_measure_read(lua_State *L, int arg, int vidx, odb_measure_opts *o) {
  odb_measure_opts got = {0};
  char buf[128];
  const char *bad;
  vidx = lua_absindex(L, vidx);
  if (lua_type(L, vidx) != LUA_TTABLE)
    odbL_field_error(L, arg, "measure", "table", vidx);
  lua_pushnil(L);
  while (lua_next(L, vidx)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    int known = 0;
    for (int i = 0; k && measure_keys[i] && !known; ++i)
      known = strcmp(k, measure_keys[i]) == 0;
    if (!known)
      luaL_argerror(L, arg, lua_pushfstring(L, "field 'measure': unknown "
                    "field '%s' (allowed: " ALLOWED ")",
                    k ? k : luaL_typename(L, -2)));
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_argerror(L, arg, lua_pushfstring(L, "field 'measure.%s': number "
                    "expected, got %s", k, luaL_typename(L, -1)));
    bad = store(&got, k, (double)lua_tonumber(L, -1));
    if (bad)
      luaL_argerror(L, arg, lua_pushfstring(L, "field 'measure.%s': must be "
                    "%s, got %s", k, bad, luaL_tolstring(L, -1, NULL)));
    lua_pop(L, 1);
  }
  if ((bad = check_order(&got, buf, sizeof buf)) != NULL)
    luaL_argerror(L, arg, lua_pushfstring(L, "field 'measure': %s", bad));
  odbL_measure_merge(o, &got);
}

/* See odb_lua.h. */
void odbL_measure_opt_field(lua_State *L, int arg, int tidx,
                            odb_measure_opts *o) {
  tidx = lua_absindex(L, tidx);
  if (lua_getfield(L, tidx, "measure") != LUA_TNIL)
    odbL_measure_read(L, arg, -1, o);
  lua_pop(L, 1);
}

/* See odb_lua.h. */
odb_status odbL_measure_parse(const char *spec, odb_measure_opts *o) {
  odb_measure_opts got = {0};
  char buf[128];
  const char *p = spec, *bad;
  if (!spec || !*spec)
    return ODB_FAIL(ODB_ERR_ARG, "--measure expects KEY=VALUE[,KEY=VALUE...] "
                    "with keys " ALLOWED);
  while (*p) {
    const char *comma = strchr(p, ','), *eq;
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char key[32], *end;
    double v;
    eq = memchr(p, '=', len);
    if (!eq || eq == p || (size_t)(eq - p) >= sizeof key)
      return ODB_FAIL(ODB_ERR_ARG, "--measure: '%.*s' is not KEY=VALUE "
                      "(keys: " ALLOWED ")", (int)len, p);
    memcpy(key, p, (size_t)(eq - p));
    key[eq - p] = '\0';
    bad = "known";
    for (int i = 0; measure_keys[i]; ++i)
      if (strcmp(key, measure_keys[i]) == 0) bad = NULL;
    if (bad)
      return ODB_FAIL(ODB_ERR_ARG, "--measure: unknown key '%s' (allowed: "
                      ALLOWED ")", key);
    errno = 0;
    v = strtod(eq + 1, &end);
    if (end == eq + 1 || end != p + len || errno == ERANGE)
      return ODB_FAIL(ODB_ERR_ARG, "--measure: %s must be a number, got "
                      "'%.*s'", key, (int)(p + len - eq - 1), eq + 1);
    if ((bad = store(&got, key, v)) != NULL)
      return ODB_FAIL(ODB_ERR_ARG, "--measure: %s must be %s, got %.*s", key,
                      bad, (int)(p + len - eq - 1), eq + 1);
    p += len;
    if (*p == ',') ++p;
  }
  if ((bad = check_order(&got, buf, sizeof buf)) != NULL)
    return ODB_FAIL(ODB_ERR_ARG, "--measure: %s", bad);
  odbL_measure_merge(o, &got);
  return ODB_OK;
}

/*
** See odb_lua.h. A later source that bounds the runs from one side moves
** the other bound where they would cross: --measure max_reps=2 over a
** scenario's min_reps = 5 runs 2, and min_reps=10 over reps = 3 runs 10.
*/
void odbL_measure_merge(odb_measure_opts *dst, const odb_measure_opts *src) {
  if (src->warmup) dst->warmup = src->warmup;
  if (src->max_seconds > 0) dst->max_seconds = src->max_seconds;
  if (src->target_spread > 0) dst->target_spread = src->target_spread;
  if (src->warmup_counts) dst->warmup_counts = src->warmup_counts;
  if (src->min_reps > 0) {
    dst->min_reps = src->min_reps;
    if (!src->max_reps && dst->max_reps > 0 && dst->max_reps < src->min_reps)
      dst->max_reps = src->min_reps;
  }
  if (src->max_reps > 0) {
    dst->max_reps = src->max_reps;
    if (!src->min_reps && dst->min_reps > src->max_reps)
      dst->min_reps = src->max_reps;
  }
}

/* See odb_lua.h. */
void odbL_measure_final(lua_State *L, odb_measure_opts *o) {
  odbL_state *S = odbL_state_get(L);
  odbL_measure_merge(o, &S->measure);
  /* max_reps alone below the default min_reps: that many runs */
  if (!o->min_reps && o->max_reps > 0 && o->max_reps < 3)
    o->min_reps = o->max_reps;
  odb_measure_defaults(o);
}

/* }====== */

/* {====== results */

/* See odb_lua.h. */
odb_status odbL_measure_fields(lua_State *L, int tidx, odb_record *row,
                               const odb_measurement *m) {
  static const char *const keys[] = { "median", "q1", "q3", "spread" };
  double v[4];
  odb_status st = ODB_OK;
  tidx = lua_absindex(L, tidx);
  v[0] = m->median;
  v[1] = m->p25;
  v[2] = m->p75;
  v[3] = m->spread;
  for (int i = 0; i < 4; ++i) {
    lua_pushnumber(L, v[i]);
    lua_setfield(L, tidx, keys[i]);
    if (row && st == ODB_OK) st = odb_record_set_num(row, keys[i], v[i]);
  }
  lua_pushinteger(L, m->reps);
  lua_setfield(L, tidx, "reps");
  if (row && st == ODB_OK) st = odb_record_set_int(row, "reps", m->reps);
  return st;
}

/* See odb_lua.h. */
void odbL_measure_push(lua_State *L, const odb_measurement *m) {
  lua_createtable(L, 0, 6);
  lua_pushnumber(L, m->median);
  lua_setfield(L, -2, "seconds");
  odbL_measure_fields(L, -1, NULL, m);
}

/* See odb_lua.h. */
void odbL_measure_row(lua_State *L, int tidx, const char *kind) {
  odbL_state *S = odbL_state_get(L);
  odb_record *row;
  odb_status st = ODB_OK;
  tidx = lua_absindex(L, tidx);
  row = odb_results_add_row(&S->results);
  if (!row) st = ODB_FAIL(ODB_ERR_NOMEM, "results row: out of memory");
  if (st == ODB_OK) st = odb_record_set_str(row, "kind", kind);
  lua_pushstring(L, kind);
  lua_setfield(L, tidx, "kind");
  lua_pushnil(L);
  while (st == ODB_OK && lua_next(L, tidx)) {
    if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "kind")) {
      const char *k = lua_tostring(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING)
        st = odb_record_set_str(row, k, lua_tostring(L, -1));
      else if (lua_isinteger(L, -1))
        st = odb_record_set_int(row, k, (long long)lua_tointeger(L, -1));
      else if (lua_type(L, -1) == LUA_TNUMBER)
        st = odb_record_set_num(row, k, (double)lua_tonumber(L, -1));
      else if (lua_type(L, -1) == LUA_TBOOLEAN)
        st = odb_record_set_int(row, k, lua_toboolean(L, -1));
    }
    lua_pop(L, 1);
  }
  odbL_check_record(L, st);
  lua_getfield(L, LUA_REGISTRYINDEX, ODBL_ROWS_KEY);
  lua_pushvalue(L, tidx);
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
}

/* }====== */

/* {====== floors: every timed row's share of its floor (odb_floor.h) */

/* The GPU's L2 bytes, asked once a run (0 unknown). */
static double gpu_l2(odbL_state *S, odb_backend *b) {
  odb_device_info info;
  if (S->gpu_l2 == 0) {
    S->gpu_l2 = -1;
    if (odb_backend_query(b, &info) == ODB_OK && info.l2_bytes > 0)
      S->gpu_l2 = (double)info.l2_bytes;
  }
  return S->gpu_l2 > 0 ? S->gpu_l2 : 0;
}

/* See odb_lua.h. */
int odbL_floor_bw(lua_State *L, const char *backend, int threads,
                  odb_floor_bw *fb) {
  odbL_state *S = odbL_state_get(L);
  memset(fb, 0, sizeof *fb);
  if (backend && strcmp(backend, "cpu") != 0) {
    const odb_gpu_bandwidth *g = odbL_state_gpu_bandwidth(S);
    odb_backend *b = odb_ctx_backend(S->ctx, backend);
    if (!g || !b) return 0;
    return odb_floor_bw_gpu(g->read, g->copy, gpu_l2(S, b), fb);
  }
  return odb_bandwidth_floor_bw(odbL_state_bandwidth(S, 1), &S->ctx->topo,
                                threads, fb);
}

/* t[key] = v and, with a row, the same field there. */
static odb_status set_num(lua_State *L, int tidx, odb_record *row,
                          const char *key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, tidx, key);
  return row ? odb_record_set_num(row, key, v) : ODB_OK;
}

static odb_status set_str(lua_State *L, int tidx, odb_record *row,
                          const char *key, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, tidx, key);
  return row ? odb_record_set_str(row, key, v) : ODB_OK;
}

/*
** See odb_lua.h. The warning names the first such row's kind of figure
** and working set; the row's own fields say the rest. Assumes the row
** has its label fields (kind is set later by odbL_measure_row for the
** tables of the bench calls).
*/
odb_status odbL_floor_fields(lua_State *L, int tidx, odb_record *row,
                             const char *backend, int threads, double rbytes,
                             double wbytes, double touched, double median) {
  odbL_state *S = odbL_state_get(L);
  odb_floor_bw fb;
  double fs, pct;
  const char *note;
  char name[48];
  odb_status st;
  tidx = lua_absindex(L, tidx);
  st = set_num(L, tidx, row, "floor_bytes", rbytes + wbytes);
  if (st != ODB_OK || !(median > 0) || !odbL_floor_bw(L, backend, threads, &fb))
    return st;
  fs = odb_floor_seconds(&fb, rbytes, wbytes);
  if (!(fs > 0)) return st;
  pct = 100.0 * fs / median;
  st = set_num(L, tidx, row, "floor_pct", pct);
  if (st == ODB_OK)
    st = set_str(L, tidx, row, "floor_bw",
                 odb_floor_name(&fb, rbytes, wbytes, name, sizeof name));
  note = odb_floor_note(&fb, pct, touched);
  if (note && st == ODB_OK) st = set_str(L, tidx, row, "floor_note", note);
  if (note && strcmp(note, ODB_FLOOR_TO_FIX) == 0 && !S->floor_warned) {
    char msg[200];
    S->floor_warned = 1;
    snprintf(msg, sizeof msg, "a row at %.1f%% of its floor (%s) with %.3g MB "
             "beyond the cache: floor to fix", pct, name, touched / 1e6);
    odbL_state_warn(S, msg);
  }
  return st;
}

/* }====== */

/* {====== ob.tied */

/*
** ob.tied(m1, s1, m2, s2) -> true when medians m1 and m2 with relative
** spreads s1 and s2 are within each other's spread (odb_measure_tied):
** neither is then faster. ob.tied(r1, r2) takes two rows (their median
** and spread).
*/
int odbL_tied(lua_State *L) {
  double m[2], s[2];
  if (lua_type(L, 1) == LUA_TTABLE) {
    for (int i = 0; i < 2; ++i) {
      luaL_checktype(L, i + 1, LUA_TTABLE);
      if (!odbL_opt_number(L, i + 1, "median", &m[i]))
        luaL_argerror(L, i + 1, "field 'median': number expected, got nil");
      if (!odbL_opt_number(L, i + 1, "spread", &s[i])) s[i] = 0;
    }
  } else {
    m[0] = (double)luaL_checknumber(L, 1);
    s[0] = (double)luaL_checknumber(L, 2);
    m[1] = (double)luaL_checknumber(L, 3);
    s[1] = (double)luaL_checknumber(L, 4);
  }
  lua_pushboolean(L, odb_measure_tied(m[0], s[0], m[1], s[1]));
  return 1;
}

/* }====== */
