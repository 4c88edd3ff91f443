/* tunedb.c - odebench tunedb: list, show, export, prune. */
#include "odb_lua.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "odb_kernels.h"
#include "odebench_cli.h"

enum { OK = EXIT_OK, FAIL = EXIT_FAIL, USAGE = EXIT_USAGE };

static const char usage_text[] =
  "usage: odebench tunedb list [--db PATH]\n"
  "       odebench tunedb show ID [--db PATH]\n"
  "       odebench tunedb export --json|--csv [ID] [--db PATH]\n"
  "       odebench tunedb prune [--older-than DAYS] [--version-mismatch] "
  "[--db PATH]\n"
  "\n"
  "The tuning database holds every evaluation of ob.tune (cache = \"auto\"\n"
  "or a path), keyed by machine, odebench version, code hash, problem,\n"
  "size, method and tuned family. Default: $XDG_CACHE_HOME/odebench/tune.db\n"
  "or ~/.cache/odebench/tune.db.\n"
  "  list      one line per target (ID, version, machine, best)\n"
  "  show ID   the target's evaluations, fastest first, ties marked\n"
  "  export    all evaluations (or target ID's) as JSON or CSV on stdout\n"
  "  prune     removes targets last updated more than DAYS days ago and/or\n"
  "            those of another odebench version (a target matching any\n"
  "            given criterion goes, with its evaluations)\n"
  "\n"
  "exit status: 0 ok; 2 bad input: a bad command line, a target ID the\n"
  "database does not hold, or a database path that cannot be used (no such\n"
  "file, not a regular file, not a tuning database, not writable for prune);\n"
  "1 a failure while the database or the output is read or written.\n";

void odb_cli_tunedb_usage(FILE *f) {
  fputs(usage_text, f);
}

/* The parsed command line after "tunedb". */
typedef struct cli {
  const char *cmd, *db;
  long long id;          /* 0: none given */
  int csv, json, version_mismatch;
  double older;          /* < 0: not given */
} cli;

/* Prints "odebench tunedb: <msg>" to stderr; returns status. */
static int complain(int status, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
static int complain(int status, const char *fmt, ...) {
  va_list ap;
  fputs("odebench tunedb: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return status;
}

/* A positive target id, fully parsed. */
static int parse_id(const char *s, long long *id) {
  char *end;
  errno = 0;
  *id = strtoll(s, &end, 10);
  return *s && *end == '\0' && errno == 0 && *id > 0;
}

/* Parses one option at argv[*i]; returns OK or USAGE after a message. */
static int parse_opt(cli *c, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  char *end;
  if (strcmp(a, "--json") == 0) c->json = 1;
  else if (strcmp(a, "--csv") == 0) c->csv = 1;
  else if (strcmp(a, "--version-mismatch") == 0) c->version_mismatch = 1;
  else if (strcmp(a, "--db") == 0 || strcmp(a, "--older-than") == 0) {
    if (*i + 1 >= argc) return complain(USAGE, "%s needs a value", a);
    if (a[2] == 'd') {
      c->db = argv[++*i];
    } else {
      c->older = strtod(argv[++*i], &end);
      if (*end || !(c->older >= 0) || !isfinite(c->older))
        return complain(USAGE, "--older-than needs a number of days >= 0, "
                        "got '%s'", argv[*i]);
    }
  } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    fputs(usage_text, stdout);
    exit(OK);
  } else {
    return complain(USAGE, "unknown option '%s' (try 'odebench tunedb "
                    "--help')", a);
  }
  return OK;
}

/* Parses argv (argv[0] = "tunedb"); OK or USAGE. */
static int parse(cli *c, int argc, char **argv) {
  memset(c, 0, sizeof *c);
  c->older = -1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (a[0] == '-') {
      if (parse_opt(c, argc, argv, &i) != OK) return USAGE;
    } else if (!c->cmd) {
      c->cmd = a;
    } else if (!c->id && parse_id(a, &c->id)) {
    } else {
      return complain(USAGE, "unexpected argument '%s' (a target ID is a "
                      "positive integer from 'odebench tunedb list')", a);
    }
  }
  if (!c->cmd) {
    fputs(usage_text, stderr);
    return USAGE;
  }
  return OK;
}

/* Checks the combination of command and options. */
static int check(const cli *c) {
  static const char *const cmds[] = {"list", "show", "export", "prune", NULL};
  int known = 0;
  for (int i = 0; cmds[i]; ++i) known |= strcmp(c->cmd, cmds[i]) == 0;
  if (!known)
    return complain(USAGE, "unknown command '%s' (allowed: list, show, "
                    "export, prune)", c->cmd);
  if (strcmp(c->cmd, "show") == 0 && !c->id)
    return complain(USAGE, "show needs a target ID (see 'odebench tunedb "
                    "list')");
  if (strcmp(c->cmd, "export") == 0 && c->csv + c->json != 1)
    return complain(USAGE, "export needs exactly one of --json and --csv");
  if (strcmp(c->cmd, "prune") == 0 && c->older < 0 && !c->version_mismatch)
    return complain(USAGE, "prune needs --older-than DAYS and/or "
                    "--version-mismatch");
  if ((c->csv || c->json) && strcmp(c->cmd, "export") != 0)
    return complain(USAGE, "--json and --csv go with export");
  return OK;
}

/* This machine's fingerprint hash (for list's "(here)" mark). */
static void this_machine(char hash[17]) {
  odb_ctx_opts co;
  odb_ctx *ctx = NULL;
  odb_machine_id mid;
  memset(&co, 0, sizeof co);
  co.log_level = ODB_LOG_ERROR;
  hash[0] = '\0';
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return;
  odb_kernels_register(ctx);
  odb_machine_fingerprint(ctx, &mid);
  memcpy(hash, mid.hash, 17);
  odb_ctx_destroy(ctx);
}

/* Runs the command on the open database; ODB_ERR_ARG for a target ID it
   does not hold. */
static odb_status run(const cli *c, odb_tunedb *db) {
  char here[17];
  long t = 0, e = 0;
  odb_status st;
  if (strcmp(c->cmd, "list") == 0) {
    this_machine(here);
    return odb_tunedb_list(db, here, stdout);
  }
  if (strcmp(c->cmd, "show") == 0) return odb_tunedb_show(db, c->id, stdout);
  if (strcmp(c->cmd, "export") == 0) {
    if (c->id && (st = odb_tunedb_count(db, c->id, &e)) != ODB_OK) return st;
    if (c->id && e == 0)
      return ODB_FAIL(ODB_ERR_ARG, "no evaluations of target %lld in %s "
                      "(see 'odebench tunedb list')", c->id,
                      odb_tunedb_path(db));
    return odb_tunedb_export(db, c->id, c->csv, stdout);
  }
  st = odb_tunedb_prune(db, c->older, c->version_mismatch, &t, &e);
  if (st == ODB_OK)
    printf("removed %ld target(s) and %ld evaluation(s) from %s\n", t, e,
           odb_tunedb_path(db));
  return st;
}

int odbL_tunedb_main(int argc, char **argv) {
  cli c;
  char path[1024];
  struct stat sb;
  odb_tunedb *db = NULL;
  odb_status st;
  if (parse(&c, argc, argv) != OK || check(&c) != OK) return USAGE;
  if (!c.db) {
    if (odb_tunedb_default_path(path, sizeof path) != ODB_OK)
      return complain(FAIL, "%s", odb_last_error());
    c.db = path;
  }
  if (stat(c.db, &sb) != 0 && errno == ENOENT) {   /* prune creates none */
    if (strcmp(c.cmd, "list") != 0)
      return complain(USAGE, "no tuning database at %s", c.db);
    printf("0 target(s): no tuning database at %s yet\n", c.db);
    return OK;
  }
  /* the path given (or the default) is not a usable database: bad input */
  st = odb_tunedb_open(c.db, strcmp(c.cmd, "prune") == 0
                       ? 0 : ODB_TUNEDB_READONLY, &db);
  if (st != ODB_OK) return complain(USAGE, "%s", odb_last_error());
  st = run(&c, db);
  odb_tunedb_close(db);
  if (fflush(stdout) != 0) return complain(FAIL, "cannot write the output");
  if (st == ODB_ERR_ARG) return complain(USAGE, "%s", odb_last_error());
  return st == ODB_OK ? OK : complain(FAIL, "%s", odb_last_error());
}
