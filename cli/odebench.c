/*
** odebench.c - the odebench program: the command line, running a Lua
** scenario against the engine (or listing its parameters), replay, plot,
** info and --list. Its help texts are in odebench_help.c, tunedb in
** tunedb.c.
*/
#include "odb_lua.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lualib.h"

#include "odb_config.h"
#include "odb_kernels.h"
#ifdef ODB_HAVE_MPI
#include "odb_dist_ode.h"
#endif
#include "odb_plot.h"
#include "odb_ui.h"
#include "odb_ui_events.h"
#include "odebench_cli.h"
#include "odebench_params.h"
#include "odb_dist.h"

#define PROG "odebench"

typedef enum host_mode { MODE_RUN, MODE_LIST, MODE_INFO, MODE_VERSION,
                         MODE_HELP, MODE_REPLAY, MODE_PLOT } host_mode;

/* The command line, parsed. */
typedef struct host_opts {
  host_mode mode;
  const char *scenario;
  const char **sets;
  int nsets;
  const char *outdir;
  int ui;                /* odb_ui_kind as given (AUTO resolved later) */
  int quiet;
  uint64_t seed;
  int remeasure;
  char **script_args;    /* after "--" */
  int nscript_args;
  const char *rundir;    /* replay and plot */
  double speed;          /* replay --speed; 0: not given */
  const char *xcol;      /* plot --x */
  int params;            /* --params: list the parameters, run nothing */
  int strict;            /* --strict: an unused --set is an error */
  int have_measure;      /* --measure given */
  odb_measure_opts measure; /* --measure, parsed (odbL_measure_parse) */
  const char *command;   /* "info", "replay", "plot", "help" or NULL */
  const char *topic;     /* help TOPIC */
} host_opts;

/* Everything a run needs inside the protected setup call. */
typedef struct host_run {
  const host_opts *o;
  int argc;
  char **argv;
  const char *outdir;
  const char *chunk;     /* the scenario's bytes */
  size_t len;
  char sha[65];
  odbL_state *S;
  odb_ui_recorder *rec; /* events.jsonl while the scenario runs */
  char *fail_msg;       /* an error that ends every rank (report_all) */
} host_run;

/* {====== messages */

/* Prints "odebench: <message>" to stderr (lua.c's l_message). */
static void message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Assumes stderr is usable; one line, flushed, after what the scenario
   printed so far (stdout is flushed first: through a pipe it is buffered,
   and the line would land in the middle of a table). */
static void message(const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "%s: ", PROG);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
}

/* Prints the error object at the top of L, assumed to be a string or
   something msghandler turned into one (lua.c's report). */
static void report(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  message("%s", msg ? msg : "(error object is not a string)");
  lua_pop(L, 1);
}


/* }====== */

/* {====== command line */

/* getopt_long's codes of the options that have no short form. */
enum { OPT_SET = 256, OPT_OUT, OPT_UI, OPT_SPEED, OPT_X, OPT_DUMP, OPT_SEED,
       OPT_LIST, OPT_VERSION, OPT_REMEASURE, OPT_PARAMS, OPT_STRICT,
       OPT_MEASURE };

static const struct option long_opts[] = {
  {"set", required_argument, NULL, OPT_SET},
  {"out", required_argument, NULL, OPT_OUT},
  {"ui", required_argument, NULL, OPT_UI},
  {"seed", required_argument, NULL, OPT_SEED},
  {"dump-kernels", required_argument, NULL, OPT_DUMP},
  {"speed", required_argument, NULL, OPT_SPEED},
  {"x", required_argument, NULL, OPT_X},
  {"quiet", no_argument, NULL, 'q'},
  {"params", no_argument, NULL, OPT_PARAMS},
  {"strict", no_argument, NULL, OPT_STRICT},
  {"measure", required_argument, NULL, OPT_MEASURE},
  {"remeasure", no_argument, NULL, OPT_REMEASURE},
  {"list", no_argument, NULL, OPT_LIST},
  {"version", no_argument, NULL, OPT_VERSION},
  {"help", no_argument, NULL, 'h'},
  {NULL, 0, NULL, 0}
};

#define SHORT_OPTS ":hq"
#define OPTIONS_ALLOWED "--set, --strict, --params, --measure, --out, " \
  "--ui, --quiet " \
  "(-q), --seed, --dump-kernels, --speed, --x, --remeasure, --list, " \
  "--version, --help (-h)"

/*
** The long option that arg ("--name" or "--name=value") names, as
** getopt_long matches it: the exact name, else the one option the name is
** a prefix of. NULL when none is; *nmatch is the number of options it is a
** prefix of (2 or more: ambiguous).
*/
static const struct option *match_long(const char *arg, int *nmatch) {
  const char *name = arg + 2, *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  const struct option *hit = NULL;
  *nmatch = 0;
  if (strncmp(arg, "--", 2) != 0 || len == 0) return NULL;
  for (const struct option *p = long_opts; p->name; ++p) {
    if (strncmp(p->name, name, len) != 0) continue;
    if (p->name[len] == '\0') {
      *nmatch = 1;
      return p;
    }
    hit = p;
    ++*nmatch;
  }
  return *nmatch == 1 ? hit : NULL;
}

/*
** The index of the "--" that ends the options (argc when there is none):
** the first one that is not the value of an option before it (--out --
** names a directory "--").
*/
static int find_dashdash(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const struct option *p;
    int n;
    if (strcmp(argv[i], "--") == 0) return i;
    p = match_long(argv[i], &n);
    if (p && p->has_arg == required_argument && !strchr(argv[i], '=')) ++i;
  }
  return argc;
}

/* The message for what getopt_long refused at bad (an unknown, ambiguous
   or misused option, or one without its value). */
static void option_error(int code, const char *bad, int optopt_char) {
  int n;
  const struct option *p = match_long(bad, &n);
  if (code == ':' && p) {
    message("option '--%s' needs a value (try '" PROG " help run')", p->name);
  } else if (code == ':') {
    message("option '%s' needs a value (try '" PROG " help run')", bad);
  } else if (strncmp(bad, "--", 2) != 0) {
    message("unknown option '-%c' (allowed: " OPTIONS_ALLOWED ")",
            optopt_char ? optopt_char : '?');
  } else if (n > 1) {
    char names[256] = "";
    size_t len = strcspn(bad + 2, "=");
    for (const struct option *q = long_opts; q->name; ++q)
      if (strncmp(q->name, bad + 2, len) == 0)
        snprintf(names + strlen(names), sizeof names - strlen(names),
                 "%s--%s", names[0] ? ", " : "", q->name);
    message("ambiguous option '%.*s' (could be %s)", (int)len + 2, bad,
            names);
  } else if (p && p->has_arg == no_argument) {
    message("option '--%s' takes no value (got '%s')", p->name, bad);
  } else {
    message("unknown option '%s' (allowed: " OPTIONS_ALLOWED ")", bad);
  }
}

/* Parses a non-negative decimal integer fully. */
static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  unsigned long long v;
  if (!*s || *s == '-' || *s == '+') return 0;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (*end != '\0' || errno != 0) return 0;
  *out = (uint64_t)v;
  return 1;
}

/* One option getopt_long returned, with its value v; 0 after a message. */
static int take_option(host_opts *o, int code, const char *v) {
  switch (code) {
  case 'h': o->mode = MODE_HELP; break;
  case 'q': o->quiet = 1; break;
  case OPT_VERSION: o->mode = MODE_VERSION; break;
  case OPT_LIST: o->mode = MODE_LIST; break;
  case OPT_REMEASURE: o->remeasure = 1; break;
  case OPT_PARAMS: o->params = 1; break;
  case OPT_STRICT: o->strict = 1; break;
  case OPT_MEASURE:   /* repeatable: later keys win */
    if (odbL_measure_parse(v, &o->measure) != ODB_OK) {
      message("%s", odb_last_error());
      return 0;
    }
    o->have_measure = 1;
    break;
  case OPT_SET:
    if (!strchr(v, '=') || *v == '=') {
      message("--set expects KEY=VALUE, got '%s'", v);
      return 0;
    }
    o->sets[o->nsets++] = v;
    break;
  case OPT_OUT:
    if (!*v) {
      message("--out needs a directory name");
      return 0;
    }
    o->outdir = v;
    break;
  case OPT_UI:
    if ((o->ui = odb_ui_parse(v)) < 0) {
      message("bad --ui value '%s' (allowed: %s)", v, ODB_UI_CHOICES);
      return 0;
    }
    break;
  case OPT_SPEED: {
    char *end;
    o->speed = strtod(v, &end);
    if (!*v || *end || !(o->speed > 0) || o->speed > 1e9) {
      message("bad --speed value '%s' (a positive number expected)", v);
      return 0;
    }
    break;
  }
  case OPT_X: o->xcol = v; break;
  case OPT_DUMP:   /* read by gpu/rt/odb_nvrtc.c */
    setenv("ODEBENCH_DUMP_KERNELS", v, 1);
    break;
  case OPT_SEED:
    if (!parse_u64(v, &o->seed)) {
      message("bad --seed value '%s' (non-negative integer expected)", v);
      return 0;
    }
    break;
  }
  return 1;
}

/*
** One argument that is not an option, in order: the first names the
** command (info, replay, plot, help) or the scenario; replay and plot take
** a run directory, help a topic. 0 after a message.
*/
static int take_positional(host_opts *o, const char *a) {
  int first = !o->scenario && !o->command;
  if (first && o->mode == MODE_RUN) {
    static const struct { const char *name; host_mode mode; } cmds[] = {
      {"info", MODE_INFO}, {"replay", MODE_REPLAY}, {"plot", MODE_PLOT},
      {"help", MODE_HELP},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; ++i) {
      if (strcmp(a, cmds[i].name) == 0) {
        o->mode = cmds[i].mode;
        o->command = cmds[i].name;
        return 1;
      }
    }
  }
  if ((o->mode == MODE_REPLAY || o->mode == MODE_PLOT) && !o->rundir) {
    o->rundir = a;
  } else if (o->command && strcmp(o->command, "help") == 0 && !o->topic) {
    o->topic = a;
  } else if (first && o->mode != MODE_INFO) {
    o->scenario = a;
  } else {
    message("unexpected argument '%s' (arguments for the scenario go "
            "after '--')", a);
    return 0;
  }
  return 1;
}

/* An option given to a command that does not take it; 0 after a message. */
static int misplaced(const host_opts *o) {
  static const struct { const char *opt; host_mode mode; const char *where; }
  only[] = {
    {"--remeasure", MODE_INFO, "'" PROG " info'"},
    {"--speed", MODE_REPLAY, "'" PROG " replay'"},
    {"--x", MODE_PLOT, "'" PROG " plot'"},
    {"--params", MODE_RUN, "a scenario ('" PROG " SCENARIO.lua --params')"},
    {"--strict", MODE_RUN, "a scenario"},
    {"--measure", MODE_RUN, "a scenario"},
  };
  int given[] = { o->remeasure, o->speed > 0, o->xcol != NULL, o->params,
                  o->strict, o->have_measure };
  for (size_t i = 0; i < sizeof only / sizeof only[0]; ++i) {
    if (given[i] && o->mode != only[i].mode) {
      message("%s only applies to %s", only[i].opt, only[i].where);
      return 1;
    }
  }
  return 0;
}

/*
** getopt_long over a copy of argv (it reorders what it parses, and the
** results record the command line as given), up to the "--" after which
** everything belongs to the scenario. Options may come before or after
** the scenario. Returns 0 after a message on bad input.
*/
static int parse_args(host_opts *o, int argc, char **argv) {
  int dd = find_dashdash(argc, argv), code, ok = 1;
  char **args;
  memset(o, 0, sizeof *o);
  o->ui = ODB_UI_AUTO;
  o->seed = 42;
  o->sets = calloc((size_t)argc + 1, sizeof *o->sets);
  args = calloc((size_t)dd + 1, sizeof *args);
  if (!o->sets || !args) {
    free(args);
    message("out of memory");
    return 0;
  }
  memcpy(args, argv, (size_t)dd * sizeof *args);
  if (dd < argc) {
    o->script_args = argv + dd + 1;
    o->nscript_args = argc - dd - 1;
  }
  opterr = 0;
  optind = 1;
  while (ok && (code = getopt_long(dd, args, SHORT_OPTS, long_opts, NULL)) != -1) {
    if (code == '?' || code == ':')
      option_error(code, optind > 1 && optind <= dd ? args[optind - 1] : "?",
                   optopt);
    ok = code != '?' && code != ':' && take_option(o, code, optarg);
  }
  for (int i = optind; ok && i < dd; ++i) ok = take_positional(o, args[i]);
  free(args);
  if (!ok || misplaced(o)) return 0;
  if ((o->mode == MODE_REPLAY || o->mode == MODE_PLOT) && !o->rundir) {
    message("'%s' needs a run directory (try '" PROG " help %s')",
            o->command, o->command);
    return 0;
  }
  if (o->mode == MODE_RUN && !o->scenario) {
    odb_cli_usage(stderr);
    return 0;
  }
  return 1;
}

/* }====== */

/* {====== output directory */

/* 1 when path exists (as anything). */
static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/*
** runs/<YYYYmmdd-HHMMSS>-<scenario basename without .lua>, with -2, -3 ...
** appended when a run in the same second took the name already.
*/
static void default_outdir(const char *scenario, char *buf, size_t len) {
  char stamp[32], name[256];
  const char *base = strrchr(scenario, '/');
  size_t n;
  time_t now = time(NULL);
  struct tm tm;
  base = base ? base + 1 : scenario;
  snprintf(name, sizeof name, "%s", base);
  n = strlen(name);
  if (n > 4 && strcmp(name + n - 4, ".lua") == 0) name[n - 4] = '\0';
  localtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  snprintf(buf, len, "runs/%s-%s", stamp, name);
  for (int k = 2; exists(buf) && k < 1000; ++k)
    snprintf(buf, len, "runs/%s-%s-%d", stamp, name, k);
}

/*
** The directories of path that do not exist yet, outermost first, are the
** ones a failed run must remove again. Fills created[] (each malloc'd) and
** returns their number.
*/
static int missing_dirs(const char *path, char **created, int max) {
  char buf[PATH_MAX];
  int n = 0;
  snprintf(buf, sizeof buf, "%s", path);
  for (size_t len = strlen(buf); len > 0 && n < max;) {
    while (len > 1 && buf[len - 1] == '/') buf[--len] = '\0';
    if (exists(buf)) break;
    created[n++] = strdup(buf);
    while (len > 0 && buf[len - 1] != '/') --len;
    buf[len] = '\0';
  }
  /* reverse into outermost-first order */
  for (int i = 0; i < n / 2; ++i) {
    char *t = created[i];
    created[i] = created[n - 1 - i];
    created[n - 1 - i] = t;
  }
  return n;
}

/* Removes the directories a failed run created, innermost first; rmdir
   leaves any that are not empty. Frees the list. */
static void remove_created(char **created, int n) {
  for (int i = n - 1; i >= 0; --i) {
    if (created[i]) rmdir(created[i]);
    free(created[i]);
  }
}

/* }====== */

/* {====== scenario file */

/* Reads the whole file; NULL (errno set) when it cannot be opened/read. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  struct stat st;
  if (!f) return NULL;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    errno = EISDIR;
    return NULL;
  }
  for (;;) {
    if (n == cap) {
      char *grown = realloc(buf, cap ? cap * 2 : 65536);
      if (!grown) {
        free(buf);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      buf = grown;
      cap = cap ? cap * 2 : 65536;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    errno = EIO;
    return NULL;
  }
  fclose(f);
  *len = n;
  return buf;
}

/*
** Loads the chunk as luaL_loadfile would: named "@path" (so messages read
** "path:LINE:"), a first line starting with '#' skipped but still counted.
*/
static int load_scenario(lua_State *L, const host_run *r) {
  const char *chunk = r->chunk;
  size_t len = r->len;
  int st;
  if (len > 0 && chunk[0] == '#') {
    const char *nl = memchr(chunk, '\n', len);
    size_t skip = nl ? (size_t)(nl - chunk) : len;
    chunk += skip;
    len -= skip;
  }
  lua_pushfstring(L, "@%s", r->o->scenario);
  st = luaL_loadbufferx(L, chunk, len, lua_tostring(L, -1), "t");
  lua_remove(L, -2);
  return st;
}

/* }====== */

/* {====== stopping a run: signals, the dashboard's q, os.exit */

/*
** A run stops for one reason, the first that comes: SIGINT, SIGTERM or
** SIGHUP (g_stop holds the signal number), q in the dashboard (STOP_QUIT)
** or os.exit of the scenario (STOP_EXIT, its status in g_exit_status).
** The engine is asked to stop after its current step, and Lua raises at
** its next call, return, line or instruction; from then on the hook
** raises at every instruction, so a pcall in the scenario cannot swallow
** the stop: the error reaches run_chunk, which writes the rows finished
** so far as for any stop.
*/
enum { STOP_QUIT = -1, STOP_EXIT = -2 };

static lua_State *volatile g_L;
static odb_ctx *volatile g_ctx;
static volatile sig_atomic_t g_stop;
static volatile sig_atomic_t g_exit_status;

/* The signals that stop a run (and a replay). */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP_SIGNALS ((int)(sizeof stop_signals / sizeof stop_signals[0]))

/* The hook of a stopped run: raises, and stays set to raise again at the
   very next instruction (only Lua code counts instructions, so the message
   handler and the __close and __gc methods written in C still run). */
static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, lstop, LUA_MASKCOUNT, 1);
  lua_pushliteral(L, "interrupted");
  lua_error(L);
}

/* Records why the run stops (the first reason wins) and sets the hook;
   async-signal-safe. */
static void stop_lua(int why) {
  int flags = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
  if (!g_stop) g_stop = why;
  if (g_L) lua_sethook(g_L, lstop, flags, 1);
}

/* Asks the engine to stop after its current step and Lua to stop at its
   next instruction (from a signal handler or the dashboard's q). */
static void interrupt_run(int why) {
  if (g_ctx) odb_ctx_request_stop(g_ctx);
  stop_lua(why);
}

/* A second stop signal: the terminal back to normal, then the default
   action (it kills, once this handler returns and unblocks the signal). */
static void on_second_signal(int sig) {
  struct sigaction sa;
  odb_ui_emergency_restore();
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
  raise(sig);
}

/*
** SIGINT, SIGTERM, SIGHUP: stop the run (and a replay). A second one of
** them restores the terminal if a dashboard runs and kills the process.
*/
static void on_stop_signal(int sig) {
  struct sigaction sa;
  interrupt_run(sig);
  odb_ui_interrupt();
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_second_signal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NSTOP_SIGNALS; ++i)
    sigaction(stop_signals[i], &sa, NULL);
}

/* The dashboard's q stops the run the way Ctrl-C does. */
static void quit_from_ui(void *arg) {
  (void)arg;
  interrupt_run(STOP_QUIT);
}

/* on: install on_stop_signal for the stop signals (each blocking the
   others while it runs); off: back to the default actions. */
static void catch_signals(int on) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NSTOP_SIGNALS; ++i) sigaddset(&sa.sa_mask, stop_signals[i]);
  sa.sa_handler = on ? on_stop_signal : SIG_DFL;
  for (int i = 0; i < NSTOP_SIGNALS; ++i)
    sigaction(stop_signals[i], &sa, NULL);
}

/*
** os.exit of a hosted scenario: the run stops like an interrupted one (a
** pcall cannot catch it), its rows are written, and the program exits
** with the status asked for (true 0, false 1, an integer as exit(3) takes
** it; the second argument, close, changes nothing: the state is always
** closed).
*/
static int host_os_exit(lua_State *L) {
  lua_Integer status;
  if (lua_isboolean(L, 1)) status = lua_toboolean(L, 1) ? EXIT_OK : EXIT_FAIL;
  else status = luaL_optinteger(L, 1, EXIT_OK);
  if (!g_stop) g_exit_status = (int)(status & 0xff);
  stop_lua(STOP_EXIT);
  lua_pushliteral(L, "interrupted");
  return lua_error(L);
}

/* Replaces os.exit with host_os_exit. */
static void override_os_exit(lua_State *L) {
  if (lua_getglobal(L, "os") == LUA_TTABLE) {
    lua_pushcfunction(L, host_os_exit);
    lua_setfield(L, -2, "exit");
  }
  lua_pop(L, 1);
}

/* }====== */

/* {====== running a scenario */

/* Message handler: adds a traceback to string errors (lua.c's msghandler). */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  if (strcmp(msg, "interrupted") == 0 || g_stop) return 1;
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Calls the function under the message handler (lua.c's docall). */
static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  int st;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  st = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  return st;
}

/* The context fields only the host knows: scenario, --set, argv, ui. */
static void fill_host_context(lua_State *L, host_run *r) {
  odb_record *c = &r->S->results.context;
  const host_opts *o = r->o;
  luaL_Buffer b;
  odbL_check_record(L, odb_record_set_str(c, "scenario.path", o->scenario));
  odbL_check_record(L, odb_record_set_str(c, "scenario.sha256", r->sha));
  odbL_check_record(L, odb_record_set_str(c, "ui",
                    odb_ui_name(odb_ui_resolve(o->ui))));
  odbL_check_record(L, odb_record_set_str(c, "outdir", r->outdir));
  if (odb_dist_active())                    /* under mpirun: docs/mpi.md */
    odbL_check_record(L, odb_record_set_int(c, "mpi.ranks", odb_dist_size()));
  luaL_buffinit(L, &b);
  for (int i = 0; i < r->argc; ++i) {
    if (i) luaL_addchar(&b, ' ');
    luaL_addstring(&b, r->argv[i]);
  }
  luaL_pushresult(&b);
  odbL_check_record(L, odb_record_set_str(c, "argv", lua_tostring(L, -1)));
  lua_pop(L, 1);
}

/* arg = {[0] = scenario, [-1] = program, [1..] = arguments after --}. */
static void create_arg_table(lua_State *L, const host_run *r) {
  const host_opts *o = r->o;
  lua_createtable(L, o->nscript_args, 2);
  lua_pushstring(L, r->argv[0]);
  lua_rawseti(L, -2, -1);
  lua_pushstring(L, o->scenario);
  lua_rawseti(L, -2, 0);
  for (int i = 0; i < o->nscript_args; ++i) {
    lua_pushstring(L, o->script_args[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setglobal(L, "arg");
}

/* Protected setup: libraries, run state, context block, module, arg. */
static int psetup(lua_State *L) {
  host_run *r = lua_touserdata(L, 1);
  const host_opts *o = r->o;
  odbL_config cfg;
  luaL_openlibs(L);
  override_os_exit(L);
  memset(&cfg, 0, sizeof cfg);
  cfg.seed = o->seed;
  cfg.outdir = r->outdir;
  cfg.hosted = 1;
  cfg.quiet = o->quiet;
  cfg.set_origin = "--set";
  cfg.sets = o->sets;
  cfg.nsets = o->nsets;
  cfg.measure = o->measure;
  r->S = odbL_state_open(L, &cfg);
  fill_host_context(L, r);
  luaL_requiref(L, "odebench", luaopen_odebench, 0);
  if (o->params) odb_cli_params_arm(L, -1);
  lua_pop(L, 1);
  create_arg_table(L, r);
  return 0;
}

/*
** Runs the loaded chunk with the script arguments. Returns the Lua status;
** the error message (if any) is left on the stack.
*/
static int run_chunk(lua_State *L, const host_run *r) {
  int st = load_scenario(L, r);
  if (st != LUA_OK) return st;
  for (int i = 0; i < r->o->nscript_args; ++i)
    lua_pushstring(L, r->o->script_args[i]);
  return docall(L, r->o->nscript_args, 0);
}

/* What the dashboard and events.jsonl show of the run besides its events:
   scenario, CPU, GPU, the cached bandwidth floor (never measured here). */
static void ui_info(const host_run *r, odb_ui_info *info) {
  const odb_record *c = &r->S->results.context;
  const odb_field *model = odb_record_get(c, "cpu.model");
  const odb_field *cores = odb_record_get(c, "cpu.cores");
  const odb_field *gpu = odb_record_get(c, "gpu.name");
  odb_bandwidth bw;
  memset(info, 0, sizeof *info);
  snprintf(info->scenario, sizeof info->scenario, "%s", r->o->scenario);
  info->rank = odb_dist_rank();
  snprintf(info->machine, sizeof info->machine, "%.120s, %d cores",
           model && model->str ? model->str : "CPU",
           cores && !cores->str ? (int)cores->num : 0);
  snprintf(info->gpu, sizeof info->gpu, "%.150s",
           gpu && gpu->str ? gpu->str : "no GPU");
  if (odb_bandwidth_cached(&r->S->ctx->topo, &bw) == ODB_OK) {
    info->floor_read = bw.read_1t;
    info->floor_copy = bw.copy_1t;
  }
}

/* Starts recording the events to <outdir>/events.jsonl (a warning only
   when it cannot). */
static void start_recorder(host_run *r, const odb_ui_info *info) {
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/events.jsonl", r->outdir);
  if (odb_ui_record_start(r->S->ctx, path, info, &r->rec) != ODB_OK)
    message("warning: no events.jsonl: %s", odb_last_error());
}

/*
** Runs the scenario with the recorder and the reporter threads going and
** the stop signals caught; the reporter is gone again when it returns, the
** recorder and the signal handlers stay until the results are written (a
** signal then only marks the run stopped). Returns the Lua status.
*/
static int run_watched(lua_State *L, host_run *r) {
  odb_ui *ui = NULL;
  odb_ui_opts uo;
  int st;
  memset(&uo, 0, sizeof uo);
  uo.kind = r->o->ui;
  uo.out = stderr;
  uo.on_quit = quit_from_ui;
  ui_info(r, &uo.info);
  /* Under mpirun the display and events.jsonl belong to rank 0. */
  if (odb_dist_rank() == 0) start_recorder(r, &uo.info);
  else uo.kind = ODB_UI_NONE;
  if (odb_ui_start(r->S->ctx, &uo, &ui) != ODB_OK)
    message("warning: no progress display: %s", odb_last_error());
  odb_record_set_str(&r->S->results.context, "ui",
                     odb_ui_name(odb_ui_kind_of(ui)));
  g_ctx = r->S->ctx;
  g_L = L;
  if (g_stop) interrupt_run(g_stop);   /* a signal came during the setup */
  st = run_chunk(L, r);
  g_L = NULL;
  g_ctx = NULL;
  lua_sethook(L, NULL, 0, 0);     /* lua_close may still run Lua code */
  odb_ui_stop(ui);
  return st;
}

/* The name of a stop signal, for the final line. */
static const char *signal_name(int sig) {
  switch (sig) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  default: return "a signal";
  }
}

/*
** Writes the results of a run that ended (stop 0), was stopped (a signal
** number or STOP_QUIT) or called os.exit (STOP_EXIT); returns the exit
** status: os.exit's status, 128 + the signal number, 130 for q; with
** --strict, 2 and nothing written when a --set was never read (a stopped
** run is not judged: it may not have reached the ob.param). Sets *written
** when the files are in place.
*/
static int write_results(host_run *r, int stop, int *written) {
  int failed;
  *written = 0;
  if (stop <= 0 && r->o->strict &&
      odb_cli_params_strict(r->S, NULL, PROG) > 0)
    return EXIT_USAGE;
  if (odb_dist_rank() != 0) {       /* rank 0 writes and reports */
    *written = 1;
    return stop == STOP_EXIT ? (int)g_exit_status : stop > 0 ? 128 + stop
           : stop == STOP_QUIT ? EXIT_INTERRUPT : EXIT_OK;
  }
  /* mpirun stops every rank with SIGTERM when one aborts, as on Ctrl-C:
     the rows of a run in which a rank failed are not written. The
     failing rank's word is on its way before its abort; 0.2 s covers it. */
  if (stop > 0 && (failed = odb_dist_failed_rank(0.2)) >= 0) {
    message("rank %d failed; no results written", failed);
    return EXIT_USAGE;
  }
  if (stop <= 0) odbL_warn_unused_sets(r->S, stderr, PROG);
  *written = odbL_state_write(r->S) == ODB_OK;
  if (!*written) {
    message("cannot write results: %s", odb_last_error());
    return EXIT_FAIL;
  }
  if (stop == STOP_QUIT || stop == SIGINT) {
    message("interrupted; results so far in %s", r->outdir);
    return EXIT_INTERRUPT;
  }
  if (stop > 0) {
    message("stopped by %s; results so far in %s", signal_name(stop),
            r->outdir);
    return 128 + stop;
  }
  if (!r->o->quiet) message("results in %s", r->outdir);
  return stop == STOP_EXIT ? (int)g_exit_status : EXIT_OK;
}

/*
** --params: the scenario runs until its first engine call (see
** odebench_params.c) with no output directory made and nothing written;
** prints what ob.param read. sc is the scan of its text (NULL: none).
** Returns the exit status: 2 for an error before that call (a bad --set
** value among them) or an unused --set under --strict.
*/
static int run_params(host_run *r, const odb_cli_scan *sc) {
  static const odb_cli_scan none;
  lua_State *L = luaL_newstate();
  int st, code = EXIT_OK;
  if (!sc) sc = &none;
  if (!L) {
    message("cannot create the Lua state: not enough memory");
    return EXIT_FAIL;
  }
  lua_pushcfunction(L, psetup);
  lua_pushlightuserdata(L, r);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    report(L);
    lua_close(L);
    return EXIT_FAIL;
  }
  g_L = L;                    /* os.exit stops it as any engine call does */
  st = run_chunk(L, r);
  g_L = NULL;
  lua_sethook(L, NULL, 0, 0);
  if (st != LUA_OK && !odb_cli_params_stopped() && !g_stop) {
    report(L);
    code = EXIT_USAGE;
  } else {
    lua_settop(L, 0);
    odb_cli_params_print(L, r->S, sc, r->o->scenario, stdout);
    fflush(stdout);
    if (r->o->strict && odb_cli_params_strict(r->S, sc, PROG) > 0)
      code = EXIT_USAGE;
  }
  lua_close(L);
  return code;
}

/*
** Reports the error at the top of L (popping it). With more than one rank
** the message is kept for odb_dist_abort at the end of run(): the other
** ranks would otherwise wait in their next collective, and rank 0 must
** not write the results of a run in which a rank failed.
*/
static void report_all(lua_State *L, host_run *r) {
  const char *msg;
  if (odb_dist_size() == 1) {
    report(L);
    return;
  }
  msg = lua_tostring(L, -1);
  r->fail_msg = strdup(msg ? msg : "(error object is not a string)");
  if (!r->fail_msg) report(L);
  else lua_pop(L, 1);
}

/* Reads, checks and runs the scenario; returns the exit status. */
static int run(const host_opts *o, int argc, char **argv) {
  host_run r;
  char outdir[PATH_MAX];
  char *created[64];
  int ncreated, st, code, stop, written = 0;
  lua_State *L;
  memset(&r, 0, sizeof r);
  r.o = o;
  r.argc = argc;
  r.argv = argv;
  r.chunk = read_file(o->scenario, &r.len);
  if (!r.chunk) {
    message("cannot open scenario '%s': %s", o->scenario, strerror(errno));
    return EXIT_USAGE;
  }
  odb_sha256_hex(r.chunk, r.len, r.sha);
  if (o->outdir) snprintf(outdir, sizeof outdir, "%s", o->outdir);
  else default_outdir(o->scenario, outdir, sizeof outdir);
  r.outdir = outdir;
  if (o->params || o->strict) {
    odb_cli_scan *sc = malloc(sizeof *sc);
    if (sc) odb_cli_params_scan(r.chunk, r.len, sc);
    if (o->params) code = run_params(&r, sc);
    else code = sc && odb_cli_params_check_sets(sc, o->sets, o->nsets, PROG)
                ? EXIT_USAGE : EXIT_OK;
    free(sc);
    if (o->params || code != EXIT_OK) {
      free((char *)r.chunk);
      return code;
    }
  }
  /* The stop signals are caught from before the output directory exists
     until it is written or removed: mpirun sends SIGTERM as soon as
     another rank fails, and its default action would leave the directory
     behind. */
  catch_signals(1);
  ncreated = odb_dist_rank() == 0 ? missing_dirs(outdir, created, 64) : 0;
  if (odb_dist_rank() == 0 && odb_check_writable_dir(outdir) != ODB_OK) {
    message("cannot write to output directory '%s': %s", outdir,
            odb_last_error());
    remove_created(created, ncreated);
    catch_signals(0);
    free((char *)r.chunk);
    return EXIT_USAGE;
  }
  L = luaL_newstate();
  if (!L) {
    message("cannot create the Lua state: not enough memory");
    remove_created(created, ncreated);
    catch_signals(0);
    free((char *)r.chunk);
    return EXIT_FAIL;
  }
  lua_pushcfunction(L, psetup);
  lua_pushlightuserdata(L, &r);
  st = lua_pcall(L, 1, 0, 0);
  if (st != LUA_OK) {
    report_all(L, &r);
    code = EXIT_FAIL;
    goto done;
  }
  st = run_watched(L, &r);
  if (st == LUA_OK && !g_stop &&
      odb_dist_done("MPI_Barrier (end of the run)") != ODB_OK && !g_stop) {
    lua_pushstring(L, odb_last_error());
    st = LUA_ERRRUN;
  }
  stop = g_stop;           /* a signal from here on changes nothing */
  if (stop) {
    lua_settop(L, 0);
    code = write_results(&r, stop, &written);
  } else if (st != LUA_OK) {
    report_all(L, &r);
    code = EXIT_USAGE;
  } else {
    code = write_results(&r, 0, &written);
  }
  if (odb_ui_record_finish(r.rec, written) != ODB_OK)
    message("warning: %s", odb_last_error());
  r.rec = NULL;
done:
  if (written) {
    for (int i = 0; i < ncreated; ++i) free(created[i]);
  } else {
    remove_created(created, ncreated);
  }
  catch_signals(0);
  /* a wait that a stop or the timeout cut short left MPI requests open on
     buffers of the scenario's objects: MPI ends first, while they live
     (MPI_Finalize's progress may still complete those requests) */
  if (!r.fail_msg && odb_dist_requests_open()) odb_dist_finalize();
  lua_close(L);
  free((char *)r.chunk);
  if (r.fail_msg) odb_dist_abort(code, r.fail_msg);   /* ends every rank */
  return code;
}

/* }====== */

/* {====== commands without a scenario */

/* A context for --list and info (no output directory). */
static odb_ctx *plain_ctx(void) {
  odb_ctx_opts co;
  odb_ctx *c = NULL;
  memset(&co, 0, sizeof co);
  co.seed = 42;
  co.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&co, &c) != ODB_OK) {
    message("cannot create the context: %s", odb_last_error());
    return NULL;
  }
  odb_kernels_register(c);
#ifdef ODB_HAVE_MPI
  odb_dist_ode_register();   /* --list shows mpi_A, mpi_S, mpi_N, mpi_X */
  odb_dist_pirk_register();  /* and mpi_pirk_A, _S, _N, _X */
#if ODB_HAVE_CUDA
  odb_dist_gpu_register();   /* and the GPU ranks, mpi_gpu_stream2d */
#endif
#endif
  return c;
}

/* odebench --list: what is registered, to stdout. */
static int cmd_list(void) {
  odb_ctx *c = plain_ctx();
  if (!c) return EXIT_FAIL;
  odbL_print_list(c, stdout);
  odb_ctx_destroy(c);
  return EXIT_OK;
}

/* Refused figures (a cache entry, a GPU figure above its peak): one
   warning line naming why. */
static void warn_refused(const char *what, const char *why) {
  if (why[0]) message("warning: %s bandwidth: %s", what, why);
}

/*
** odebench info: the machine and its CPU and GPU bandwidth, cached unless
** remeasure (which replaces the cached figures with the new ones).
*/
static int cmd_info(int remeasure) {
  odb_ctx *c = plain_ctx();
  int mode = remeasure ? ODB_BW_REPLACE : ODB_BW_CACHED;
  odb_bandwidth bw;
  odb_gpu_bandwidth g;
  odb_backend *gpu;
  int have, have_gpu = 0;
  if (!c) return EXIT_FAIL;
  if (remeasure) message("measuring memory bandwidth (a few seconds) ...");
  have = odb_bandwidth_get(&c->topo, mode, &bw) == ODB_OK;
  if (have) warn_refused("CPU", bw.refused);
  else message("warning: CPU memory bandwidth unknown: %s", odb_last_error());
  if ((gpu = odb_ctx_backend(c, "cuda"))) {
    have_gpu = odb_bandwidth_gpu_get(gpu, mode, &g) == ODB_OK;
    if (have_gpu) warn_refused("GPU", g.refused);
    else message("warning: GPU memory bandwidth unknown: %s",
                 odb_last_error());
  }
  odbL_print_info(c, have ? &bw : NULL, have_gpu ? &g : NULL, stdout);
  odb_ctx_destroy(c);
  return have ? EXIT_OK : EXIT_FAIL;
}

/* odebench replay RUN_DIR: its events.jsonl in the dashboard or as lines. */
static int cmd_replay(const host_opts *o) {
  char path[PATH_MAX + 16];
  struct stat st;
  odb_ui_info info;
  odb_event *evs = NULL;
  int n = 0;
  if (stat(o->rundir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    message("cannot replay '%s': no such run directory", o->rundir);
    return EXIT_USAGE;
  }
  snprintf(path, sizeof path, "%s/events.jsonl", o->rundir);
  if (access(path, F_OK) != 0) {
    message("cannot replay '%s': it holds no events.jsonl (not a run "
            "directory, or a run that failed)", o->rundir);
    return EXIT_USAGE;
  }
  if (odb_ui_events_read(path, &info, &evs, &n) != ODB_OK) {
    message("cannot replay '%s': %s", o->rundir, odb_last_error());
    return EXIT_USAGE;
  }
  catch_signals(1);
  odb_ui_replay(evs, n, &info, o->ui, o->speed, stderr);
  catch_signals(0);
  free(evs);
  if (g_stop == SIGINT) return EXIT_INTERRUPT;
  return g_stop > 0 ? 128 + g_stop : EXIT_OK;
}

/* odebench plot RUN_DIR: gnuplot's PNG and SVG files. */
static int cmd_plot(const host_opts *o) {
  odb_plot_opts po;
  odb_status st;
  memset(&po, 0, sizeof po);
  po.run_dir = o->rundir;
  po.out_dir = o->outdir;
  po.x = o->xcol;
  po.log = o->quiet ? NULL : stdout;
  po.warn = stderr;
  st = odb_plot_run(&po);
  if (st == ODB_OK) return EXIT_OK;
  message("cannot plot: %s", odb_last_error());
  return st == ODB_ERR_ARG ? EXIT_USAGE : EXIT_FAIL;
}

/* odebench --version: one line on stdout. */
static int cmd_version(void) {
  printf("%s %s (revision %s, %s, %s build, %s, CUDA %s)\n", PROG,
         odb_version(), odb_revision(), odb_compiler(), ODB_BUILD_TYPE,
         LUA_RELEASE, odb_kernels_have_cuda() ? "built in" : "not built");
  return EXIT_OK;
}

/* }====== */

/*
** Large blocks (solver vectors, workspaces, matrices) are mapped for
** themselves and go back to the system when freed. glibc's default raises
** its mapping threshold to the size of each large block freed, after which
** such blocks come from the heap; a sweep that makes and drops solvers of
** some size then grew the process by about a solver each iteration (a loop
** of BRUSS2D N = 1000 DOPRI5 solvers, closed after one integrate each:
** 215, 352, 490, ... MB), where a fixed threshold holds it at 2 solvers.
** glibc only; elsewhere nothing changes.
*/
static void fix_mmap_threshold(void) {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

/*
** Under mpirun every rank runs the scenario (SPMD) and rank 0 owns what
** the run leaves behind: stdout, the display, results, events.jsonl, the
** tuning database (docs/mpi.md). The other ranks' stdout goes to
** /dev/null unless ODEBENCH_MPI_ALL_OUTPUT=1; stderr stays, for errors.
*/
static void quiet_other_ranks(void) {
  const char *all = getenv("ODEBENCH_MPI_ALL_OUTPUT");
  if (odb_dist_rank() == 0 || (all && strcmp(all, "1") == 0)) return;
  fflush(stdout);
  if (!freopen("/dev/null", "w", stdout))
    message("warning: rank %d: stdout stays open: %s", odb_dist_rank(),
            strerror(errno));
}

/* The program without the run across ranks: the command line and what it
   asks for. Commands other than a scenario run on rank 0 alone (they
   measure into caches, draw, or write files). */
static int odebench_main(int argc, char **argv) {
  host_opts o;
  int code;
  if (argc > 1 && strcmp(argv[1], "tunedb") == 0)   /* cli/tunedb.c */
    return odb_dist_rank() == 0 ? odbL_tunedb_main(argc - 1, argv + 1)
                                : EXIT_OK;
  if (!parse_args(&o, argc, argv)) {
    free(o.sets);
    return EXIT_USAGE;
  }
  if (odb_dist_rank() != 0 && o.mode != MODE_RUN) {
    free(o.sets);
    return EXIT_OK;
  }
  switch (o.mode) {
  case MODE_HELP: code = odb_cli_help(o.topic); break;
  case MODE_VERSION: code = cmd_version(); break;
  case MODE_LIST: code = cmd_list(); break;
  case MODE_INFO: code = cmd_info(o.remeasure); break;
  case MODE_REPLAY: code = cmd_replay(&o); break;
  case MODE_PLOT: code = cmd_plot(&o); break;
  default: code = run(&o, argc, argv); break;
  }
  free(o.sets);
  return code;
}

/* odb_dist_init first (MPI may rewrite argv), odb_dist_finalize on every
   way out: main returns on each of them (a stop signal, os.exit and an
   error all come back here; odb_dist_abort ends every rank itself). */
int main(int argc, char **argv) {
  int code;
  _Static_assert(sizeof(sig_atomic_t) == sizeof(int),
                 "odb_dist_set_stop_flag reads the stop flag as an int");
  fix_mmap_threshold();
  if (odb_dist_init(&argc, &argv) != ODB_OK) {
    message("%s", odb_last_error());
    return EXIT_USAGE;
  }
  odb_dist_set_stop_flag((const volatile int *)&g_stop);
  quiet_other_ranks();
  code = odebench_main(argc, argv);
  odb_dist_finalize();
  return code;
}
