/* odb_lua_state.c - the run state of a lua_State: context, results, --set. */
#include "odb_lua.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "odb_kernels.h"
#include "odb_dist.h"
#include "odb_config.h"
#ifdef ODB_HAVE_MPI
#include "odb_dist_ode.h"
#endif

/* Frees everything the state owns; safe to call twice. */
static void state_free(odbL_state *S) {
  if (S->ctx) odb_ctx_destroy(S->ctx);
  S->ctx = NULL;
  odb_results_free(&S->results);
  odb_results_init(&S->results);
  for (int i = 0; i < S->nsets; ++i) {
    free(S->sets[i].key);
    free(S->sets[i].value);
  }
  free(S->sets);
  S->sets = NULL;
  S->nsets = 0;
}

/*
** __gc of the state userdata: runs at lua_close, after every solver's.
** Under plain lua5.4 nothing writes the results but ob.finish(); a script
** that recorded rows and ends without it is told so here, the last moment
** anything sees the rows (lua5.4 closes the state at the end of a script,
** and at os.exit(status, true); a plain os.exit skips __gc).
*/
static int state_gc(lua_State *L) {
  odbL_state *S = luaL_checkudata(L, 1, ODBL_STATE);
  if (!S->hosted && !S->results_written && S->results.nrows > 0 && S->ctx)
    fprintf(stderr, "odebench: warning: %d result row%s recorded but never "
            "written: call ob.finish() at the end of the script to write "
            "them to %s\n", S->results.nrows,
            S->results.nrows == 1 ? "" : "s", S->ctx->outdir);
  state_free(S);
  return 0;
}

/* Never raises: a plain registry lookup with a type test. */
odbL_state *odbL_state_peek(lua_State *L) {
  odbL_state *S;
  lua_getfield(L, LUA_REGISTRYINDEX, ODBL_STATE_KEY);
  S = luaL_testudata(L, -1, ODBL_STATE);
  lua_pop(L, 1);
  return S;
}

/*
** Adds "key=value" to S->sets (a later key replaces an earlier one).
** Raises for an item without '=' or with an empty key.
*/
static void add_set(lua_State *L, odbL_state *S, const char *item) {
  const char *eq = strchr(item, '=');
  char *key, *value;
  odbL_set *grown;
  if (!eq || eq == item)
    luaL_error(L, "%s item '%s': key=value expected", S->set_origin, item);
  key = strndup(item, (size_t)(eq - item));
  value = strdup(eq + 1);
  if (!key || !value) goto nomem;
  for (int i = 0; i < S->nsets; ++i) {
    if (strcmp(S->sets[i].key, key) == 0) {
      free(S->sets[i].value);
      S->sets[i].value = value;
      free(key);
      return;
    }
  }
  grown = realloc(S->sets, (size_t)(S->nsets + 1) * sizeof *grown);
  if (!grown) goto nomem;
  S->sets = grown;
  S->sets[S->nsets].key = key;
  S->sets[S->nsets].value = value;
  S->sets[S->nsets].used = 0;
  S->nsets++;
  return;
nomem:
  free(key);
  free(value);
  luaL_error(L, "out of memory");
}

/* Stores an empty table in the registry under key. */
static void new_registry_table(lua_State *L, const char *key) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, key);
}

/*
** The state userdata is anchored in the registry before anything that can
** fail, so a raised error leaves it for __gc to clean up.
*/
odbL_state *odbL_state_open(lua_State *L, const odbL_config *cfg) {
  odbL_state *S;
  odb_ctx_opts o;
  odb_status st;
  if (odbL_state_peek(L))
    luaL_error(L, "odebench: the run state exists already");
  S = lua_newuserdatauv(L, sizeof *S, 0);
  memset(S, 0, sizeof *S);
  odb_results_init(&S->results);
  if (luaL_newmetatable(L, ODBL_STATE)) {
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, ODBL_STATE_KEY);
  S->hosted = cfg->hosted;
  S->quiet = cfg->quiet;
  S->measure = cfg->measure;
  S->set_origin = cfg->set_origin ? cfg->set_origin : "--set";
  for (int i = 0; i < cfg->nsets; ++i) add_set(L, S, cfg->sets[i]);
  memset(&o, 0, sizeof o);
  o.seed = cfg->seed;
  o.outdir = cfg->outdir;
  o.log_level = ODB_LOG_INFO;
  st = odb_ctx_create(&o, &S->ctx);
  if (st != ODB_OK)
    luaL_error(L, "cannot create the odebench context: %s", odb_last_error());
  if (odb_kernels_register_on(S->ctx, odb_dist_local_rank()) != ODB_OK)
    odb_ctx_log(S->ctx, ODB_LOG_WARN, "GPU backends: %s", odb_last_error());
#ifdef ODB_HAVE_MPI
  if (odb_dist_ode_register() != ODB_OK ||  /* mpi_A, mpi_S, mpi_N, mpi_X */
      odb_dist_pirk_register() != ODB_OK)   /* mpi_pirk_A, _S, _N, _X */
    odb_ctx_log(S->ctx, ODB_LOG_WARN, "MPI variants: %s", odb_last_error());
#if ODB_HAVE_CUDA
  if (odb_dist_gpu_register() != ODB_OK)    /* mpi_gpu_stream2d */
    odb_ctx_log(S->ctx, ODB_LOG_WARN, "MPI GPU variant: %s", odb_last_error());
#endif
#endif
  odbL_check_record(L, odbL_context_fill(S));
  new_registry_table(L, ODBL_ROWS_KEY);
  new_registry_table(L, ODBL_REFCACHE_KEY);
  return S;
}

/* Basename of the global arg[0] without ".lua", or "lua"; pushes it. */
static const char *push_script_name(lua_State *L) {
  const char *s = NULL, *base, *dot;
  int top = lua_gettop(L);
  if (lua_getglobal(L, "arg") == LUA_TTABLE &&
      lua_rawgeti(L, -1, 0) == LUA_TSTRING)
    s = lua_tostring(L, -1);
  if (!s || !*s) {
    lua_pushliteral(L, "lua");
  } else {
    base = strrchr(s, '/');
    base = base ? base + 1 : s;
    dot = strrchr(base, '.');
    if (dot && dot > base && strcmp(dot, ".lua") == 0)
      lua_pushlstring(L, base, (size_t)(dot - base));
    else
      lua_pushstring(L, base);
  }
  lua_replace(L, top + 1);   /* the name replaces arg; drop arg[0] */
  lua_settop(L, top + 1);
  return lua_tostring(L, -1);
}

/* "runs/<YYYYmmdd-HHMMSS>-<name>" in local time; pushes it. */
static const char *push_default_outdir(lua_State *L, const char *name) {
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return lua_pushfstring(L, "runs/%s-%s", stamp, name);
}

/* Parses ODEBENCH_SEED; raises for anything but a non-negative integer. */
static uint64_t env_seed(lua_State *L) {
  const char *s = getenv("ODEBENCH_SEED");
  char *end;
  unsigned long long v;
  if (!s || !*s) return 42;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (*s == '-' || *end != '\0' || errno != 0)
    luaL_error(L, "ODEBENCH_SEED=%s: non-negative integer expected", s);
  return (uint64_t)v;
}

/*
** Splits ODEBENCH_SET ("k=v,k2=v2", empty items skipped) into strings kept
** on the Lua stack; fills items[] with pointers to them. Returns the count.
*/
static int push_env_sets(lua_State *L, const char **items, int max) {
  const char *s = getenv("ODEBENCH_SET");
  int n = 0;
  if (!s) return 0;
  while (*s) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (len > 0) {
      if (n == max) luaL_error(L, "ODEBENCH_SET: more than %d items", max);
      luaL_checkstack(L, 2, "ODEBENCH_SET");
      items[n++] = lua_pushlstring(L, s, len);
    }
    s += len;
    if (*s == ',') ++s;
  }
  return n;
}

/* Lazy creation for plain lua5.4 (no host): everything from the environment. */
odbL_state *odbL_state_get(lua_State *L) {
  odbL_state *S = odbL_state_peek(L);
  const char *items[64];
  const char *outdir;
  odbL_config cfg;
  int top;
  if (S) return S;
  top = lua_gettop(L);
  memset(&cfg, 0, sizeof cfg);
  cfg.seed = env_seed(L);
  outdir = getenv("ODEBENCH_OUT");
  if (!outdir || !*outdir) outdir = push_default_outdir(L, push_script_name(L));
  cfg.outdir = outdir;
  cfg.set_origin = "ODEBENCH_SET";
  cfg.nsets = push_env_sets(L, items, 64);
  cfg.sets = items;
  S = odbL_state_open(L, &cfg);
  if (getenv("ODEBENCH_QUIET")) S->quiet = 1;
  lua_settop(L, top);
  return S;
}

/* One warning line: in the log, and on stderr under plain lua5.4. */
static void state_warn(odbL_state *S, const char *msg) {
  odb_ctx_log(S->ctx, ODB_LOG_WARN, "%s", msg);
  if (!S->hosted) fprintf(stderr, "odebench: warning: %s\n", msg);
}

/* See odb_lua.h. */
void odbL_state_warn(odbL_state *S, const char *msg) {
  state_warn(S, msg);
}

/* Says that S->bw was measured while other work shared the cores. */
static void busy_warning(odbL_state *S) {
  char msg[200];
  /* under the 127 characters of an event's text */
  snprintf(msg, sizeof msg, "bandwidth measured on a busy machine (thread on a "
           "core %.0f%% of the time): this run's floors are low; not cached",
           100 * S->bw.cpu_share);
  state_warn(S, msg);
}

/* Says why figures were refused (why: their refused field). */
static void refused_warning(odbL_state *S, const char *what, const char *why) {
  char msg[360];
  snprintf(msg, sizeof msg, "%s bandwidth: %s", what, why);
  state_warn(S, msg);
}

/*
** The context fields of the CPU figures the floors of this run use:
** where they come from (cache or measured now, and when), the machine
** they belong to, and each figure in GB/s (per thread count as
** bandwidth.read_t<k>, bandwidth.copy_t<k>).
*/
static void record_cpu(odbL_state *S) {
  odb_record *c = &S->results.context;
  const odb_bandwidth *bw = &S->bw;
  char key[48], dev[300];
  snprintf(dev, sizeof dev, "%.120s, %d cores, host %.120s",
           bw->machine.cpu, bw->machine.cores, bw->machine.host);
  odb_record_set_str(c, "bandwidth.source",
                     bw->from_cache ? "cache" : "measured now");
  odb_record_set_str(c, "bandwidth.measured_at", bw->measured_at);
  odb_record_set_str(c, "bandwidth.device", dev);
  odb_record_set_num(c, "bandwidth.read_1t", bw->read_1t / 1e9);
  odb_record_set_num(c, "bandwidth.copy_1t", bw->copy_1t / 1e9);
  odb_record_set_num(c, "bandwidth.read_all", bw->read_all / 1e9);
  odb_record_set_num(c, "bandwidth.copy_all", bw->copy_all / 1e9);
  odb_record_set_int(c, "bandwidth.threads_all", bw->threads_all);
  for (int i = 0; i < bw->ncounts; ++i) {
    snprintf(key, sizeof key, "bandwidth.read_t%d", bw->threads[i]);
    odb_record_set_num(c, key, bw->read[i] / 1e9);
    snprintf(key, sizeof key, "bandwidth.copy_t%d", bw->threads[i]);
    odb_record_set_num(c, key, bw->copy[i] / 1e9);
  }
  odb_record_set_num(c, "bandwidth.peak_gflops_1t", bw->flops_1t / 1e9);
  odb_record_set_num(c, "bandwidth.peak_gflops_all", bw->flops_all / 1e9);
  odb_record_set_num(c, "bandwidth.array_bytes", bw->array_bytes);
  odb_record_set_int(c, "bandwidth.from_cache", bw->from_cache);
  if (!bw->from_cache) {
    odb_record_set_num(c, "bandwidth.cpu_share", bw->cpu_share);
    odb_record_set_int(c, "bandwidth.slow_build", bw->slow_build);
  }
}

/* Assumes S->ctx is set. Records bandwidth.* each time it succeeds. */
const odb_bandwidth *odbL_state_bandwidth(odbL_state *S, int allow_measure) {
  int now = allow_measure == ODBL_BW_NOW;
  if (S->have_bw && !now) return &S->bw;
  if ((S->bw_failed && !now) || !allow_measure) return NULL;
  if (odb_bandwidth_get(&S->ctx->topo, now ? ODB_BW_NOW : ODB_BW_CACHED,
                        &S->bw) != ODB_OK) {
    char msg[300];
    S->bw_failed = 1;
    snprintf(msg, sizeof msg, "memory bandwidth unknown: %s",
             odb_last_error());
    state_warn(S, msg);
    return NULL;
  }
  S->have_bw = 1;
  if (S->bw.refused[0]) refused_warning(S, "CPU", S->bw.refused);
  if (!odb_bandwidth_quiet(&S->bw)) busy_warning(S);
  record_cpu(S);
  return &S->bw;
}

/*
** Assumes S->ctx is set. Measured in this process (ODB_BW_NOW): the GPU
** families take their floors from this process's figures, which a cached
** one from another run need not equal; the cache keeps them for
** 'odebench info'.
*/
const odb_gpu_bandwidth *odbL_state_gpu_bandwidth(odbL_state *S) {
  odb_record *c = &S->results.context;
  odb_backend *b;
  const odb_gpu_bandwidth *g = &S->gbw;
  if (S->have_gbw) return S->have_gbw > 0 ? g : NULL;
  if (!(b = odb_ctx_backend(S->ctx, "cuda"))) return NULL;
  if (odb_bandwidth_gpu_get(b, ODB_BW_NOW, &S->gbw) != ODB_OK) {
    char msg[300];
    S->have_gbw = -1;
    snprintf(msg, sizeof msg, "GPU memory bandwidth unknown: %s",
             odb_last_error());
    state_warn(S, msg);
    return NULL;
  }
  S->have_gbw = 1;
  if (g->refused[0]) refused_warning(S, "GPU", g->refused);
  odb_record_set_str(c, "gpu_bandwidth.source",
                     g->from_cache ? "cache" : "measured now");
  odb_record_set_str(c, "gpu_bandwidth.measured_at", g->measured_at);
  odb_record_set_str(c, "gpu_bandwidth.device", g->name);
  odb_record_set_str(c, "gpu_bandwidth.pci_bus_id", g->pci_bus_id);
  odb_record_set_int(c, "gpu_bandwidth.driver_version", g->driver_version);
  odb_record_set_num(c, "gpu_bandwidth.read", g->read / 1e9);
  odb_record_set_num(c, "gpu_bandwidth.copy", g->copy / 1e9);
  if (g->peak > 0) odb_record_set_num(c, "gpu_bandwidth.peak", g->peak / 1e9);
  return g;
}

/* The number of field key of row, or dflt when it has none. */
static double row_num(const odb_record *row, const char *key, double dflt) {
  const odb_field *f = odb_record_get(row, key);
  return f && !f->str ? f->num : dflt;
}

/* The string field key of row, or "". */
static const char *row_str(const odb_record *row, const char *key) {
  const odb_field *f = odb_record_get(row, key);
  return f && f->str ? f->str : "";
}

/*
** Publishes the solve rows recorded since the last call (ODB_EV_SOLVE_ROW):
** a reporter shows the figures the row holds (floor_pct above all) rather
** than computing its own from other bandwidth figures or other timings.
** Assumes the rows before nrows are complete: each builder fills its row
** before it calls odbL_check_record.
*/
static void announce_rows(odbL_state *S) {
  for (; S->rows_announced < S->results.nrows; ++S->rows_announced) {
    const odb_record *row = &S->results.rows[S->rows_announced];
    odb_event ev;
    if (strcmp(row_str(row, "kind"), "solve") != 0) continue;
    memset(&ev, 0, sizeof ev);
    ev.kind = ODB_EV_SOLVE_ROW;
    snprintf(ev.name, sizeof ev.name, "%s/%s/%s", row_str(row, "problem"),
             row_str(row, "method"), row_str(row, "variant"));
    snprintf(ev.text, sizeof ev.text, "%s", row_str(row, "status"));
    ev.step = (long)row_num(row, "steps", 0);
    ev.accepted = (long)row_num(row, "n", 0);
    ev.value = row_num(row, "seconds", 0);
    ev.value2 = row_num(row, "gbs", 0);
    ev.t = row_num(row, "floor_pct", -1);
    odb_ctx_publish(S->ctx, &ev);
  }
}

/* Raises with the recorded detail when st is not ODB_OK; else announces
   the rows recorded since the last call. */
void odbL_check_record(lua_State *L, odb_status st) {
  odbL_state *S;
  if (st != ODB_OK)
    luaL_error(L, "cannot record results: %s", odb_last_error());
  S = odbL_state_peek(L);
  if (S && S->ctx) announce_rows(S);
}

/* Atomic files through odb_results_write; creates the directory. Under
   mpirun the results belong to rank 0 (docs/mpi.md): the other ranks run
   the same scenario and write nothing. */
odb_status odbL_state_write(odbL_state *S) {
  if (odb_dist_rank() != 0) return ODB_OK;
  return odb_results_write(&S->results, S->ctx->outdir);
}

/* One line per unused key, so a typo in --set does not go unnoticed. */
void odbL_warn_unused_sets(const odbL_state *S, FILE *f, const char *prog) {
  for (int i = 0; i < S->nsets; ++i) {
    if (S->sets[i].used) continue;
    fprintf(f, "%s: warning: %s %s=%s was never used by the scenario "
            "(no ob.param(\"%s\", ...))\n", prog, S->set_origin,
            S->sets[i].key, S->sets[i].value, S->sets[i].key);
  }
}
