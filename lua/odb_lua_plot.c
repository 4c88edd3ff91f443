/* odb_lua_plot.c - ob.plot{...}: a plot the scenario wants, checked here
   and recorded in the results context (plots.<name>.*) for odebench plot. */
#include "odb_lua.h"

#include <stdio.h>
#include <string.h>

#define MAX_GROUP 4       /* grouping columns of one plot */
#define MAX_WHERE 8       /* filter columns of one plot */
#define NAME_MAX_LEN 40

static const char *const plot_keys[] = {
  "name", "kind", "x", "y", "z", "group", "rows", "where", "logx", "logy",
  "title", NULL
};

static const char *const kinds[] = { "lines", "roofline", "heatmap", NULL };
static const char *const row_kinds[] = { "solve", "tune", NULL };

/* Columns of the solve rows (s:integrate), numbers then text; keep them in
   step with push_result in odb_lua_solver.c: the repeated measurement
   (median, q1, q3, reps, spread) and the GPU rows' compute roof
   (fp64_floor_s, fp64_peak_gflops, roofline_pct) included. A column
   missing here is still accepted once a row of that kind holds it. */
static const char *const solve_num[] = {
  "n", "d", "t0", "t1", "h_fixed", "rtol", "atol", "steps", "accepted",
  "rejected", "nfev", "seconds", "time_per_step", "gbs", "gflops",
  "floor_pct", "bytes", "t", "h", "err", "threads", "median", "q1", "q3",
  "reps", "spread", "fp64_floor_s", "fp64_peak_gflops", "roofline_pct",
  NULL
};
static const char *const solve_text[] = {
  "label", "problem", "method", "variant", "backend", "status", NULL
};
/* What odebench plot derives from the solve rows. */
static const char *const derived[] = {
  "speedup", "time_per_component", "flop_per_byte", NULL
};
/* Columns of the tuning rows (ob.tune, on_eval in odb_lua_tune.c) besides
   cfg.<parameter>. */
static const char *const tune_num[] = {
  "n", "steps", "h", "eval", "median", "q1", "q3", "spread", "reps",
  "time_per_step", "err", "tol", "cached", "seconds", NULL
};
static const char *const tune_text[] = {
  "label", "strategy", "target", "problem", "method", "config", "status",
  "message", NULL
};

/* 1 when s is in the NULL-terminated list. */
static int in_list(const char *const *list, const char *s) {
  for (; *list; ++list)
    if (strcmp(*list, s) == 0) return 1;
  return 0;
}

/* Appends the list to b as "a, b, c" (after what b holds, comma first). */
static void add_list(luaL_Buffer *b, const char *const *list, int *first) {
  for (; *list; ++list) {
    if (!*first) luaL_addstring(b, ", ");
    luaL_addstring(b, *list);
    *first = 0;
  }
}

/* 1 when col names a tuning parameter: "cfg.<something>". */
static int is_cfg(const char *col) {
  return strncmp(col, "cfg.", 4) == 0 && col[4] != '\0';
}

/* 1 when col exists only in tuning rows. */
static int tune_only(const char *col) {
  return is_cfg(col) || ((in_list(tune_num, col) || in_list(tune_text, col))
                         && !in_list(solve_num, col)
                         && !in_list(solve_text, col));
}

/* 1 when a results row of that kind so far has the column (columns that
   a later odebench may add are accepted that way). */
static int seen_in_rows(const odbL_state *S, const char *kind,
                        const char *col) {
  for (int i = 0; i < S->results.nrows; ++i) {
    const odb_field *k = odb_record_get(&S->results.rows[i], "kind");
    if (k && k->str && strcmp(k->str, kind) == 0 &&
        odb_record_get(&S->results.rows[i], col))
      return 1;
  }
  return 0;
}

/* What one plot request reads from its table. */
typedef struct plot_req {
  const char *name, *kind, *rows, *x, *y, *z, *title;
  const char *group[MAX_GROUP];
  int ngroup;
  const char *wkey[MAX_WHERE], *wval[MAX_WHERE];
  int nwhere;
  int logx, logy;
} plot_req;

/*
** Raises "field 'f': unknown column 'c' for <rows> rows (allowed: ...)"
** or, with numeric, the same for a text column.
*/
static int column_error(lua_State *L, const char *field, const char *col,
                        const char *rows, int text_column) {
  luaL_Buffer b;
  int first = 1, tune = strcmp(rows, "tune") == 0;
  luaL_buffinit(L, &b);
  if (text_column)
    lua_pushfstring(L, "field '%s': column '%s' holds text, a number column "
                    "is needed here (allowed: ", field, col);
  else
    lua_pushfstring(L, "field '%s': unknown column '%s' for %s rows "
                    "(allowed: ", field, col, rows);
  luaL_addvalue(&b);
  add_list(&b, tune ? tune_num : solve_num, &first);
  if (!tune) add_list(&b, derived, &first);
  if (tune) luaL_addstring(&b, ", cfg.<parameter>");
  if (!text_column) add_list(&b, tune ? tune_text : solve_text, &first);
  luaL_addstring(&b, ")");
  luaL_pushresult(&b);
  return luaL_argerror(L, 1, lua_tostring(L, -1));
}

/* Checks that col is a column of the request's rows (numeric when asked). */
static void check_column(lua_State *L, const odbL_state *S,
                         const plot_req *q, const char *field,
                         const char *col, int numeric) {
  int tune = strcmp(q->rows, "tune") == 0;
  const char *const *num = tune ? tune_num : solve_num;
  const char *const *text = tune ? tune_text : solve_text;
  if (in_list(num, col) || (!tune && in_list(derived, col)) ||
      (tune && is_cfg(col)))
    return;
  if (in_list(text, col)) {
    if (numeric) column_error(L, field, col, q->rows, 1);
    return;
  }
  if (seen_in_rows(S, q->rows, col)) return;
  column_error(L, field, col, q->rows, 0);
}

/* An optional string field that must be one of allowed (def if absent). */
static const char *opt_choice(lua_State *L, const char *field,
                              const char *const *allowed, const char *def) {
  const char *v = odbL_opt_string(L, 1, field, NULL);
  luaL_Buffer b;
  int first = 1;
  if (!v) return def;
  if (in_list(allowed, v)) return v;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "field '%s': unknown %s '%s' (allowed: ", field,
                  strcmp(field, "kind") == 0 ? "kind" : "value", v);
  luaL_addvalue(&b);
  add_list(&b, allowed, &first);
  luaL_addstring(&b, ")");
  luaL_pushresult(&b);
  luaL_argerror(L, 1, lua_tostring(L, -1));
  return def;
}

/* An optional boolean field. */
static int opt_bool(lua_State *L, const char *field) {
  int t = lua_getfield(L, 1, field), v;
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    odbL_field_error(L, 1, field, "boolean", -1);
  v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* name: 1 to NAME_MAX_LEN of [A-Za-z0-9_-] (it becomes a file name). */
static const char *check_name(lua_State *L) {
  const char *name = odbL_opt_string(L, 1, "name", NULL);
  size_t len;
  if (!name)
    luaL_argerror(L, 1, "field 'name' is required (a file name for the "
                  "plot: letters, digits, '_' and '-')");
  len = strlen(name);
  if (len == 0 || len > NAME_MAX_LEN ||
      strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789_-") != len)
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'name': '%s' is not a "
                  "plot name (1 to %d letters, digits, '_' and '-')", name,
                  NAME_MAX_LEN));
  return name;
}

/* group = "col" or {"col", ...}: the columns kept alive by the table. */
static void read_group(lua_State *L, plot_req *q) {
  int t = lua_getfield(L, 1, "group");
  if (t == LUA_TSTRING) {
    q->group[q->ngroup++] = lua_tostring(L, -1);
  } else if (t == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n > MAX_GROUP)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'group': at most %d "
                    "columns", MAX_GROUP));
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, -1, i) != LUA_TSTRING)
        odbL_field_error(L, 1, "group", "list of column names", -1);
      q->group[q->ngroup++] = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
  } else if (t != LUA_TNIL) {
    odbL_field_error(L, 1, "group", "column name or list of column names",
                     -1);
  }
  lua_pop(L, 1);   /* the strings stay alive in the argument table */
}

/*
** where = {col = value, ...}: values as text (numbers, strings, booleans).
** The converted strings go into the table at index 2, which keeps them
** alive for the call.
*/
static void read_where(lua_State *L, plot_req *q) {
  int t = lua_getfield(L, 1, "where"), w = lua_gettop(L);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) odbL_field_error(L, 1, "where", "table", -1);
  lua_pushnil(L);
  while (lua_next(L, w)) {
    int vt = lua_type(L, -1);
    if (lua_type(L, -2) != LUA_TSTRING ||
        (vt != LUA_TSTRING && vt != LUA_TNUMBER && vt != LUA_TBOOLEAN))
      luaL_argerror(L, 1, "field 'where': {column = string, number or "
                    "boolean, ...} expected");
    if (q->nwhere == MAX_WHERE)
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'where': at most %d "
                    "columns", MAX_WHERE));
    q->wkey[q->nwhere] = lua_tostring(L, -2);   /* a key of the table */
    q->wval[q->nwhere] = luaL_tolstring(L, -1, NULL);
    lua_rawseti(L, 2, q->nwhere + 1);
    q->nwhere++;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Which rows: the field, else tune when a named column exists only there. */
static const char *choose_rows(lua_State *L, const plot_req *q) {
  const char *rows = opt_choice(L, "rows", row_kinds, NULL);
  if (rows) return rows;
  if ((q->x && tune_only(q->x)) || (q->y && tune_only(q->y)) ||
      (q->z && tune_only(q->z)))
    return "tune";
  for (int i = 0; i < q->ngroup; ++i)
    if (tune_only(q->group[i])) return "tune";
  for (int i = 0; i < q->nwhere; ++i)
    if (tune_only(q->wkey[i])) return "tune";
  return "solve";
}

/* What each kind needs: lines x and y, heatmap x and y (z optional),
   roofline none of them (it plots GFLOP/s against flop/byte). */
static void check_kind_fields(lua_State *L, const odbL_state *S,
                              plot_req *q) {
  int roof = strcmp(q->kind, "roofline") == 0;
  int heat = strcmp(q->kind, "heatmap") == 0;
  if (roof) {
    if (q->x || q->y || q->z)
      luaL_argerror(L, 1, "a roofline plots GFLOP/s against flop/byte: "
                    "leave out fields 'x', 'y' and 'z'");
    if (strcmp(q->rows, "solve") != 0)
      luaL_argerror(L, 1, "a roofline needs solve rows (rows = \"solve\")");
  } else {
    if (!q->x || !q->y)
      luaL_argerror(L, 1, lua_pushfstring(L, "a %s plot needs fields 'x' "
                    "and 'y' (column names)", q->kind));
    check_column(L, S, q, "x", q->x, !heat);
    check_column(L, S, q, "y", q->y, !heat);
  }
  if (!heat && q->z)
    luaL_argerror(L, 1, "field 'z' (the colour) belongs to a heatmap only");
  if (heat && q->ngroup)
    luaL_argerror(L, 1, "field 'group' does not apply to a heatmap (each "
                  "cell shows the smallest z; choose rows with 'where')");
  if (heat && !q->z)
    q->z = strcmp(q->rows, "tune") == 0 ? "median" : "time_per_step";
  if (heat) check_column(L, S, q, "z", q->z, 1);
  for (int i = 0; i < q->ngroup; ++i)
    check_column(L, S, q, "group", q->group[i], 0);
  for (int i = 0; i < q->nwhere; ++i)
    check_column(L, S, q, "where", q->wkey[i], 0);
}

/* Sets plots.<name>.<field> = v in the context block (v may be NULL). */
static void put(lua_State *L, odbL_state *S, const char *name,
                const char *field, const char *v) {
  char key[160];
  if (!v) return;
  snprintf(key, sizeof key, "plots.%s.%s", name, field);
  odbL_check_record(L, odb_record_set_str(&S->results.context, key, v));
}

/* Records the checked request in the context block, in a fixed order. */
static void record(lua_State *L, odbL_state *S, const plot_req *q) {
  luaL_Buffer b;
  put(L, S, q->name, "kind", q->kind);
  put(L, S, q->name, "rows", q->rows);
  put(L, S, q->name, "x", q->x);
  put(L, S, q->name, "y", q->y);
  put(L, S, q->name, "z", q->z);
  if (q->ngroup) {
    luaL_buffinit(L, &b);
    for (int i = 0; i < q->ngroup; ++i) {
      if (i) luaL_addchar(&b, ',');
      luaL_addstring(&b, q->group[i]);
    }
    luaL_pushresult(&b);
    put(L, S, q->name, "group", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  if (q->logx) put(L, S, q->name, "logx", "true");
  if (q->logy) put(L, S, q->name, "logy", "true");
  put(L, S, q->name, "title", q->title);
  for (int i = 0; i < q->nwhere; ++i) {
    char field[120];
    snprintf(field, sizeof field, "where.%s", q->wkey[i]);
    put(L, S, q->name, field, q->wval[i]);
  }
}

/*
** ob.plot{name =, kind = "lines" | "roofline" | "heatmap", x =, y =, z =,
** group =, rows = "solve" | "tune", where = {}, logx =, logy =, title =}:
** checks the columns against what the rows hold and records the request;
** odebench plot RUN_DIR draws it as <name>.png and <name>.svg.
*/
int odbL_plot(lua_State *L) {
  odbL_state *S = odbL_state_get(L);
  plot_req q;
  char key[160];
  memset(&q, 0, sizeof q);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_newtable(L);                 /* 2: keeps the where values alive */
  odbL_check_keys(L, 1, plot_keys);
  q.name = check_name(L);
  snprintf(key, sizeof key, "plots.%s.kind", q.name);
  if (odb_record_get(&S->results.context, key))
    luaL_argerror(L, 1, lua_pushfstring(L, "field 'name': a plot named '%s' "
                  "was requested already", q.name));
  q.kind = opt_choice(L, "kind", kinds, "lines");
  q.x = odbL_opt_string(L, 1, "x", NULL);
  q.y = odbL_opt_string(L, 1, "y", NULL);
  q.z = odbL_opt_string(L, 1, "z", NULL);
  q.title = odbL_opt_string(L, 1, "title", NULL);
  read_group(L, &q);
  read_where(L, &q);
  q.logx = opt_bool(L, "logx");
  q.logy = opt_bool(L, "logy");
  q.rows = choose_rows(L, &q);
  check_kind_fields(L, S, &q);
  record(L, S, &q);
  return 0;
}
