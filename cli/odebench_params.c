/*
** odebench_params.c - `odebench SCENARIO --params` and --strict.
**
** How the parameters are found: a scenario reads them with ob.param at its
** top, before its work, and its defaults may be computed (2^19, a size
** from arg[1]), so reading its text cannot give them. --params runs the
** scenario in a state where every function of the odebench table that
** reaches the engine (ob.problem, ob.solver, ob.tune, ob.info, ob.metric,
** ...) is replaced by a stop: the first call of one ends the scenario,
** before any work, any output file or any measurement. ob.param records
** what it reads (name, default, value, description) in the registry
** (ODBL_PARAMS_KEY), and that list is printed. ob.list, ob.seed,
** ob.random and ob.outdir stay: they only answer, and scenarios use ob.list
** to pick defaults. The stop sets a hook that raises at every following
** instruction, so a pcall in the scenario cannot swallow it.
**
** A parameter read only after the first engine call is not reached that
** way. The scenario's text is scanned as well for ob.param("NAME" (and
** param('NAME'), outside comment lines; such a name is listed without a
** default, and --strict accepts it. A name the text gives only through a
** variable cannot be found by the scan; then the scan says so and --strict
** judges by the run alone.
*/
#include "odebench_params.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "odebench_cli.h"

/* The functions of the odebench table that only answer (kept). */
static const char *const kept[] = {
  "param", "list", "seed", "random", "outdir", NULL
};

static volatile int g_params_stopped;

/* The hook of a stopped --params run: raises at every instruction. */
static void lparams_stop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, lparams_stop, LUA_MASKCOUNT, 1);
  lua_pushliteral(L, "odebench --params: stopped at the first engine call");
  lua_error(L);
}

/* What replaces an engine function: stops the scenario. */
static int params_stop(lua_State *L) {
  g_params_stopped = 1;
  lua_sethook(L, lparams_stop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE |
              LUA_MASKCOUNT, 1);
  lua_pushliteral(L, "odebench --params: stopped at the first engine call");
  return lua_error(L);
}

void odb_cli_params_arm(lua_State *L, int module) {
  module = lua_absindex(L, module);
  g_params_stopped = 0;
  lua_pushnil(L);
  while (lua_next(L, module)) {
    int keep = lua_type(L, -1) != LUA_TFUNCTION ||
               lua_type(L, -2) != LUA_TSTRING;
    for (int i = 0; !keep && kept[i]; ++i)
      keep = strcmp(lua_tostring(L, -2), kept[i]) == 0;
    lua_pop(L, 1);
    if (!keep) {
      lua_pushvalue(L, -1);
      lua_pushcfunction(L, params_stop);
      lua_rawset(L, module);   /* an existing key: next() stays valid */
    }
  }
}

int odb_cli_params_stopped(void) {
  return g_params_stopped;
}

/* {====== the scan of the scenario's text */

/* 1 when name (len bytes) is in the list. */
static int listed(const odb_cli_scan *sc, const char *name, size_t len) {
  for (int i = 0; i < sc->n; ++i)
    if (strlen(sc->names[i]) == len && memcmp(sc->names[i], name, len) == 0)
      return 1;
  return 0;
}

void odb_cli_params_scan(const char *text, size_t len, odb_cli_scan *sc) {
  const char *end = text + len;
  memset(sc, 0, sizeof *sc);
  for (const char *line = text; line < end;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    const char *stop = nl ? nl : end, *p = line;
    while (p < stop && isspace((unsigned char)*p)) ++p;
    if (!(stop - p >= 2 && p[0] == '-' && p[1] == '-')) {
      for (; (p = memmem(p, (size_t)(stop - p), "param(", 6)); ) {
        const char *q, *name;
        char quote;
        if (p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
          p += 6;   /* "myparam(" */
          continue;
        }
        q = p + 6;
        while (q < stop && isspace((unsigned char)*q)) ++q;
        p += 6;
        if (q >= stop || (*q != '"' && *q != '\'')) {
          sc->dynamic = 1;
          continue;
        }
        quote = *q++;
        name = q;
        while (q < stop && *q != quote) ++q;
        if (q == stop || q == name || (size_t)(q - name) >= sizeof sc->names[0])
          continue;
        if (!listed(sc, name, (size_t)(q - name)) && sc->n < ODB_CLI_SCAN_MAX) {
          memcpy(sc->names[sc->n], name, (size_t)(q - name));
          sc->names[sc->n++][q - name] = '\0';
        }
      }
    }
    line = nl ? nl + 1 : end;
  }
}

/* }====== */

/* The record of the parameter read as name (pushed), or nil; 1 if found. */
static int push_record(lua_State *L, const char *name) {
  lua_Integer n;
  if (lua_getfield(L, LUA_REGISTRYINDEX, ODBL_PARAMS_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return 0;
  }
  n = luaL_len(L, -1);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    lua_getfield(L, -1, "name");
    if (strcmp(lua_tostring(L, -1), name) == 0) {
      lua_pop(L, 1);
      lua_remove(L, -2);
      return 1;
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  lua_pushnil(L);
  return 0;
}

/* A value as --set writes it: 524288 for 2^19, "" for an empty string. */
static const char *value_text(lua_State *L, int idx, char *buf, size_t len) {
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx))
      snprintf(buf, len, "%lld", (long long)lua_tointeger(L, idx));
    else
      snprintf(buf, len, "%.15g", (double)lua_tonumber(L, idx));
    return buf;
  case LUA_TBOOLEAN: return lua_toboolean(L, idx) ? "true" : "false";
  case LUA_TSTRING:
    if (*lua_tostring(L, idx) == '\0') return "\"\"";
    snprintf(buf, len, "%s", lua_tostring(L, idx));
    return buf;
  default: return "?";
  }
}

void odb_cli_params_print(lua_State *L, const odbL_state *S,
                          const odb_cli_scan *sc, const char *scenario,
                          FILE *f) {
  lua_Integer n = 0;
  int width = 4, later = 0;
  char def[64], val[64];
  if (lua_getfield(L, LUA_REGISTRYINDEX, ODBL_PARAMS_KEY) == LUA_TTABLE)
    n = luaL_len(L, -1);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    lua_getfield(L, -1, "name");
    if ((int)lua_rawlen(L, -1) > width) width = (int)lua_rawlen(L, -1);
    lua_pop(L, 2);
  }
  for (int i = 0; i < sc->n; ++i)
    if ((int)strlen(sc->names[i]) > width) width = (int)strlen(sc->names[i]);
  fprintf(f, "parameters of %s (--set NAME=VALUE):\n", scenario);
  if (n == 0 && sc->n == 0) fprintf(f, "  none\n");
  for (lua_Integer i = 1; i <= n; ++i) {
    const char *name, *desc, *set = NULL, *dflt;
    lua_rawgeti(L, -1, i);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "default");
    lua_getfield(L, -3, "value");
    lua_getfield(L, -4, "description");
    name = lua_tostring(L, -4);
    desc = lua_tostring(L, -1);
    for (int k = 0; k < S->nsets; ++k)
      if (strcmp(S->sets[k].key, name) == 0) set = S->sets[k].key;
    dflt = value_text(L, -3, def, sizeof def);
    if (!(desc && *desc) && !set) {
      fprintf(f, "  %-*s  %s\n", width, name, dflt);
    } else {
      fprintf(f, "  %-*s  %-12s", width, name, dflt);
      if (desc && *desc) fprintf(f, "  %s", desc);
      if (set) fprintf(f, "  [--set: %s]", value_text(L, -2, val, sizeof val));
      fputc('\n', f);
    }
    lua_pop(L, 5);
  }
  lua_pop(L, 1);
  for (int i = 0; i < sc->n; ++i) {
    int found = push_record(L, sc->names[i]);
    lua_pop(L, 1);
    if (found) continue;
    fprintf(f, "  %-*s  %-12s  (read after the first engine call)\n", width,
            sc->names[i], "?");
    later = 1;
  }
  if (later)
    fprintf(f, "A parameter shown with ? is read after the scenario's first "
            "call into the engine, where --params stops; its default is in "
            "the scenario's text.\n");
  if (sc->dynamic)
    fprintf(f, "The scenario also reads parameters whose names it computes; "
            "they are listed only if read before its first engine call.\n");
}

/* The --strict message for one key. */
static void unknown_key(const char *prog, const char *key, size_t keylen,
                        const char *value) {
  fprintf(stderr, "%s: --set %.*s=%s names no parameter of the scenario "
          "(--strict; '%s SCENARIO.lua --params' lists them)\n", prog,
          (int)keylen, key, value, prog);
}

int odb_cli_params_check_sets(const odb_cli_scan *sc, const char *const *sets,
                              int nsets, const char *prog) {
  int bad = 0;
  if (sc->dynamic) return 0;
  for (int i = 0; i < nsets; ++i) {
    const char *eq = strchr(sets[i], '=');
    if (!eq || listed(sc, sets[i], (size_t)(eq - sets[i]))) continue;
    unknown_key(prog, sets[i], (size_t)(eq - sets[i]), eq + 1);
    ++bad;
  }
  return bad;
}

int odb_cli_params_strict(const odbL_state *S,
                          const odb_cli_scan *sc, const char *prog) {
  int bad = 0;
  for (int i = 0; i < S->nsets; ++i) {
    const char *key = S->sets[i].key;
    int known = S->sets[i].used;
    if (!known && sc) known = listed(sc, key, strlen(key));
    if (known) continue;
    if (sc)
      unknown_key(prog, key, strlen(key), S->sets[i].value);
    else
      fprintf(stderr, "%s: --set %s=%s was never used by the scenario "
              "(--strict: nothing written)\n", prog, key, S->sets[i].value);
    ++bad;
  }
  return bad;
}
