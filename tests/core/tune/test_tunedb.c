/* test_tunedb.c - the tuning database: store, reuse, versions, bad files,
   rows with planted values, and resuming a tuning run killed with SIGKILL. */
#include "odebench.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

static char dir[256];

/* path of name inside the test's directory (a static buffer per slot). */
static const char *in_dir(const char *name, int slot) {
  static char buf[4][512];
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", dir, name);
  return buf[slot];
}

/* The bytes of a file (malloc'ed, *len set); NULL when unreadable. */
static char *slurp(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  *len = -1;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0) *len = ftell(f);
  if (*len >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)*len + 1)) != NULL)
    *len = (long)fread(buf, 1, (size_t)*len, f);
  fclose(f);
  return buf;
}

static int exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* {====== a synthetic target: 40 configurations, cost known */

typedef struct synth {
  odb_space *sp;
  long runs;
  double sleep_s;        /* real time per run (for the kill test) */
  int log_fd;            /* configurations run are appended here, or -1 */
  long last_logged;      /* valid index logged last (once per config) */
  char last[64];
} synth;

static double cost(const odb_space *sp, const odb_config *c) {
  long a = odb_space_int(sp, 0, c->idx[0]);
  return 1e-3 * (1 + 0.01 * (double)((a - 7) * (a - 7)) +
                 0.05 * c->idx[1]);
}

static odb_status synth_run(void *ud, const odb_config *c, double *secs) {
  synth *s = ud;
  char text[64];
  s->runs++;
  odb_config_format(s->sp, c, text, sizeof text);
  if (s->log_fd >= 0 && strcmp(text, s->last) != 0) {
    char line[80];
    int n = snprintf(line, sizeof line, "%s\n", text);
    if (write(s->log_fd, line, (size_t)n) != n) return ODB_ERR_IO;
    snprintf(s->last, sizeof s->last, "%s", text);
  }
  if (s->sleep_s > 0) {
    struct timespec ts = {0, (long)(s->sleep_s * 1e9)};
    nanosleep(&ts, NULL);
  }
  *secs = cost(s->sp, c);
  return ODB_OK;
}

static void synth_init(synth *s) {
  static const char *const kinds[] = {"p", "q", "r", "s"};
  memset(s, 0, sizeof *s);
  s->log_fd = -1;
  odb_space_create(&s->sp);
  odb_space_add_range(s->sp, "a", 0, 9, 1);
  odb_space_add_enum(s->sp, "k", kinds, 4);
}

static odb_tune_target synth_target(synth *s) {
  odb_tune_target t;
  memset(&t, 0, sizeof t);
  t.space = s->sp;
  t.ud = s;
  t.run = synth_run;
  t.key.problem = "synthetic";
  t.key.size = "40";
  t.key.method = "none";
  t.key.family = "test";
  t.key.params = "";
  t.key.code_hash = "abc123";
  return t;
}

static odb_tune_opts opts_for(odb_tunedb *db) {
  odb_tune_opts o;
  memset(&o, 0, sizeof o);
  o.strategy = "exhaustive";
  o.has_seed = 1;
  o.seed = 5;
  o.db = db;
  o.measure.warmup = -1;
  o.measure.min_reps = 2;
  o.measure.max_reps = 2;
  return o;
}

/* Runs a full search with db; returns its stats in *stats. The tuner is
   kept in *keep when asked (the target must then outlive it: static). */
static odb_status tune(odb_ctx *ctx, synth *s, odb_tunedb *db,
                       odb_tune_stats *stats, odb_tuner **keep) {
  static odb_tune_target tg;
  odb_tune_opts o = opts_for(db);
  odb_tuner *t = NULL;
  odb_status st;
  tg = synth_target(s);
  st = odb_tuner_create(ctx, &tg, &o, &t);
  memset(stats, 0, sizeof *stats);
  if (st != ODB_OK) return st;
  st = odb_tuner_run(t);
  odb_tuner_stats(t, stats);
  if (keep) *keep = t;
  else odb_tuner_destroy(t);
  return st;
}

/* }====== */

/* {====== store and load */

typedef struct loaded { int n; char cfg[8][64]; odb_tune_eval ev[8]; } loaded;

static int collect(void *ud, const char *config, const odb_tune_eval *ev) {
  loaded *l = ud;
  if (l->n < 8) {
    snprintf(l->cfg[l->n], sizeof l->cfg[0], "%s", config);
    l->ev[l->n++] = *ev;
  }
  return 0;
}

static void test_store_load(odb_ctx *ctx) {
  odb_tunedb *db = NULL;
  odb_machine_id mid;
  odb_tune_key k = {"p", "n=10", "m", "f", "steps=1", "h"};
  odb_tune_eval ok, rej;
  long long id = 0, id2 = 0;
  loaded l = {0};
  long n = 0;
  odb_status st = odb_tunedb_open(in_dir("sub/dir/tune.db", 0), 0, &db);
  tap_ok(st == ODB_OK && exists(in_dir("sub/dir/tune.db", 0)),
         "open creates the file and its directories");
  if (!db) return;
  odb_machine_fingerprint(ctx, &mid);
  tap_ok(strlen(mid.hash) == 16 && strstr(mid.desc, "cpu=") &&
         strstr(mid.desc, "caches="), "fingerprint %s: %.60s...", mid.hash,
         mid.desc);
  tap_ok(odb_tunedb_target(db, &mid, &k, "9.9", 0, &id) == ODB_OK && id == 0,
         "an unknown target is absent without create");
  odb_tunedb_target(db, &mid, &k, "9.9", 1, &id);
  odb_tunedb_target(db, &mid, &k, "9.9", 1, &id2);
  tap_ok(id > 0 && id == id2, "create, then find the same target");
  memset(&ok, 0, sizeof ok);
  ok.status = ODB_TUNE_OK;
  ok.m.median = 1.5e-3;
  ok.m.spread = 0.01;
  ok.m.reps = 7;
  ok.err = 1e-15;
  ok.tol = 1e-13;
  ok.at = 1700000000;
  rej = ok;
  rej.status = ODB_TUNE_REJECTED;
  rej.err = 0.25;
  snprintf(rej.msg, sizeof rej.msg, "error 0.25 exceeds the tolerance");
  odb_tunedb_put(db, id, "v=a", &ok);
  odb_tunedb_put(db, id, "v=b", &rej);
  ok.m.median = 1.25e-3;
  odb_tunedb_put(db, id, "v=a", &ok);      /* replaces */
  rej.status = ODB_TUNE_SKIPPED;
  tap_ok(odb_tunedb_put(db, id, "v=c", &rej) == ODB_ERR_ARG,
         "skipped evaluations are not stored");
  odb_tunedb_each(db, id, collect, &l);
  odb_tunedb_count(db, id, &n);
  tap_ok(l.n == 2 && n == 2 && strcmp(l.cfg[0], "v=b") == 0 &&
         strcmp(l.cfg[1], "v=a") == 0, "two rows, the replaced one last");
  tap_ok(l.ev[1].m.median == 1.25e-3 && l.ev[1].m.reps == 7 &&
         l.ev[1].err == 1e-15 && l.ev[1].at == 1700000000,
         "values read back exactly");
  tap_ok(l.ev[0].status == ODB_TUNE_REJECTED && l.ev[0].err == 0.25 &&
         isnan(l.ev[0].m.median) && strstr(l.ev[0].msg, "exceeds"),
         "a rejected one keeps its error and message, no timing");
  odb_tunedb_close(db);
}

/* }====== */

/* {====== reuse and versions */

static void test_reuse_and_versions(odb_ctx *ctx) {
  synth s;
  odb_tunedb *db = NULL;
  odb_tune_stats st1, st2;
  odb_machine_id mid;
  odb_tune_target tg;
  long long old_id = 0;
  long n_old = 0;
  odb_tune_eval ev;
  synth_init(&s);
  odb_tunedb_open(in_dir("reuse.db", 0), 0, &db);
  /* an entry of another version for the same target: kept, not reused */
  tg = synth_target(&s);
  odb_machine_fingerprint(ctx, &mid);
  odb_tunedb_target(db, &mid, &tg.key, "0.0.0-old", 1, &old_id);
  memset(&ev, 0, sizeof ev);
  ev.status = ODB_TUNE_OK;
  ev.m.median = 1e-9;              /* would win if it were reused */
  ev.m.reps = 1;
  ev.err = ev.tol = NAN;
  odb_tunedb_put(db, old_id, "a=0 k=p", &ev);
  tap_ok(tune(ctx, &s, db, &st1, NULL) == ODB_OK && st1.evals == 40 &&
         st1.cached == 0 && st1.measured == 40,
         "first run measures all 40 (the other version's entry unused)");
  odb_tunedb_count(db, old_id, &n_old);
  tap_ok(n_old == 1, "the other version's entry is kept");
  s.runs = 0;
  tap_ok(tune(ctx, &s, db, &st2, NULL) == ODB_OK && st2.evals == 40 &&
         st2.cached == 40 && st2.measured == 0 && s.runs == 0,
         "second run reuses all 40 from the database, runs nothing");
  {
    long pruned_t = 0, pruned_e = 0, left = 0;
    odb_tunedb_prune(db, -1, 1, &pruned_t, &pruned_e);
    odb_tunedb_count(db, 0, &left);
    tap_ok(pruned_t == 1 && pruned_e == 1 && left == 40,
           "prune --version-mismatch removes only the other version");
    odb_tunedb_prune(db, 1, 0, &pruned_t, &pruned_e);
    tap_ok(pruned_t == 0 && pruned_e == 0, "prune --older-than 1 keeps "
           "today's entries");
  }
  odb_tunedb_close(db);
  odb_space_destroy(s.sp);
}

/* Output of the command functions, through a memory stream. */
static void test_commands(void) {
  odb_tunedb *db = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f;
  odb_tunedb_open(in_dir("reuse.db", 0), ODB_TUNEDB_READONLY, &db);
  if (!db) {
    tap_ok(0, "read-only open of a database: %s", odb_last_error());
    return;
  }
  f = open_memstream(&buf, &len);
  odb_tunedb_list(db, NULL, f);
  fclose(f);
  tap_ok(strstr(buf, "synthetic | 40 | none | test") &&
         strstr(buf, "a=7 k=p") && strstr(buf, "1 target(s)"),
         "list shows the target and its best configuration");
  free(buf);
  f = open_memstream(&buf, &len);
  odb_tunedb_show(db, 2, f);
  fclose(f);
  tap_ok(strstr(buf, "target 2: synthetic") && strstr(buf, "best") &&
         strstr(buf, "a=7 k=p"), "show ranks the evaluations");
  free(buf);
  f = open_memstream(&buf, &len);
  tap_ok(odb_tunedb_show(db, 99, f) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "no target 99"), "show of an unknown id");
  fclose(f);
  free(buf);
  f = open_memstream(&buf, &len);
  odb_tunedb_export(db, 0, 0, f);
  fclose(f);
  tap_ok(strstr(buf, "\"targets\": [") && strstr(buf, "\"config\": \"a=7 "
         "k=p\"") && strstr(buf, "\"median\": 0.001,"),
         "export --json");
  free(buf);
  f = open_memstream(&buf, &len);
  odb_tunedb_export(db, 0, 1, f);
  fclose(f);
  {
    int lines = 0;
    for (char *p = buf; *p; ++p) lines += *p == '\n';
    tap_ok(strncmp(buf, "target,machine,", 15) == 0 && lines == 41,
           "export --csv: a header and 40 rows (%d lines)", lines);
  }
  free(buf);
  odb_tunedb_close(db);
}

/* }====== */

/* {====== bad files */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void test_bad_files(void) {
  const char *junk = in_dir("junk.db", 0);
  const char *ro = in_dir("ro.db", 1);
  odb_tunedb *db = NULL;
  char *before, *after;
  long lb, la;
  static const char text[] = "this is not a database, it is a text file "
                             "that someone saved under the cache path\n";
  write_file(junk, text);
  tap_ok(odb_tunedb_open(junk, 0, &db) == ODB_ERR_IO && !db &&
         strstr(odb_last_error(), "corrupt or not a database") &&
         strstr(odb_last_error(), "left as it is"),
         "a corrupt file is refused: %s", odb_last_error());
  after = slurp(junk, &la);
  tap_ok(after && la == (long)strlen(text) && memcmp(after, text, la) == 0 &&
         !exists(in_dir("junk.db-wal", 2)), "and never written to");
  free(after);
  /* a valid SQLite file of another program */
  {
    const char *other = in_dir("other.db", 2);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'CREATE TABLE songs(t TEXT); "
             "INSERT INTO songs VALUES (1)' 2>/dev/null", other);
    if (system(cmd) == 0) {
      before = slurp(other, &lb);
      tap_ok(odb_tunedb_open(other, 0, &db) == ODB_ERR_IO &&
             strstr(odb_last_error(), "not an odebench tuning database"),
             "another program's database is refused: %s", odb_last_error());
      after = slurp(other, &la);
      tap_ok(before && after && la == lb && memcmp(before, after, la) == 0,
             "and left unchanged");
      free(before);
      free(after);
    } else {
      tap_ok(1, "# SKIP no sqlite3 program");
      tap_ok(1, "# SKIP no sqlite3 program");
    }
  }
  /* a write-protected database: refused for writing, fine for reading */
  odb_tunedb_open(ro, 0, &db);
  odb_tunedb_close(db);
  db = NULL;
  chmod(ro, 0444);
  before = slurp(ro, &lb);
  tap_ok(odb_tunedb_open(ro, 0, &db) == ODB_ERR_IO && !db &&
         strstr(odb_last_error(), "write-protected"),
         "a read-only file is refused for tuning: %s", odb_last_error());
  after = slurp(ro, &la);
  tap_ok(before && after && la == lb && memcmp(before, after, la) == 0,
         "and not modified");
  free(before);
  free(after);
  tap_ok(odb_tunedb_open(ro, ODB_TUNEDB_READONLY, &db) == ODB_OK && db,
         "it still opens read-only (list, show, export)");
  odb_tunedb_close(db);
  db = NULL;
  tap_ok(odb_tunedb_open(in_dir("absent.db", 3), ODB_TUNEDB_READONLY, &db) ==
         ODB_ERR_IO && strstr(odb_last_error(), "does not exist"),
         "read-only open of a missing file fails");
}

static void test_paths(void) {
  char path[512];
  const char *hash = odb_engine_code_hash();
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  odb_tunedb_default_path(path, sizeof path);
  tap_ok(strcmp(path, "/x/cache/odebench/tune.db") == 0, "XDG path: %s",
         path);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  odb_tunedb_default_path(path, sizeof path);
  tap_ok(strcmp(path, "/home/u/.cache/odebench/tune.db") == 0,
         "HOME path: %s", path);
  tap_ok(strlen(hash) == 64 && strcmp(hash, odb_engine_code_hash()) == 0,
         "engine code hash %.12s... is stable", hash);
}

/* }====== */

/* {====== sets of lines: configurations run or stored */

/* Lines of a file as a set of strings (at most 64). */
typedef struct lines { int n; char s[64][128]; } lines;

static void read_lines(const char *path, lines *l) {
  FILE *f = fopen(path, "r");
  char buf[128];
  l->n = 0;
  while (f && l->n < 64 && fgets(buf, sizeof buf, f)) {
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(l->s[l->n++], sizeof l->s[0], "%s", buf);
  }
  if (f) fclose(f);
}

static int has_line(const lines *l, const char *s) {
  for (int i = 0; i < l->n; ++i)
    if (strcmp(l->s[i], s) == 0) return 1;
  return 0;
}

static int collect_cfg(void *ud, const char *config, const odb_tune_eval *ev) {
  lines *l = ud;
  (void)ev;
  if (l->n < 64) snprintf(l->s[l->n++], sizeof l->s[0], "%s", config);
  return 0;
}

/* }====== */

/* {====== rows with planted values */

/*
** SQL on a database file through the SQLite library that libodebench
** loaded (this test is not linked with it: its functions are looked up).
** 0 on success.
*/
static int sql(const char *path, const char *text) {
  int (*open_fn)(const char *, void **) =
    (int (*)(const char *, void **))dlsym(RTLD_DEFAULT, "sqlite3_open");
  int (*exec_fn)(void *, const char *, void *, void *, char **) =
    (int (*)(void *, const char *, void *, void *, char **))dlsym(
      RTLD_DEFAULT, "sqlite3_exec");
  int (*close_fn)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT,
                                                   "sqlite3_close");
  void *h = NULL;
  int rc;
  if (!open_fn || !exec_fn || !close_fn) return -1;
  if (open_fn(path, &h) != 0) {
    close_fn(h);
    return -1;
  }
  rc = exec_fn(h, text, NULL, NULL, NULL);
  close_fn(h);
  return rc;
}

/* The log lines of ctx published after *cursor that contain all of a, b
   and c (c may be NULL); the last one into last. */
static int count_warnings(odb_ctx *ctx, uint64_t *cursor, const char *a,
                          const char *b, const char *c, char *last,
                          size_t cap) {
  odb_event ev;
  int n = 0;
  while (odb_event_poll(ctx->events, cursor, &ev, 1, NULL) == 1)
    if (ev.kind == ODB_EV_LOG && ev.level == ODB_LOG_WARN &&
        strstr(ev.text, a) && strstr(ev.text, b) &&
        (!c || strstr(ev.text, c))) {
      snprintf(last, cap, "%s", ev.text);
      n++;
    }
  return n;
}

/* One planted row: the worst configuration made to look fastest (median
   1e-9) where the value is not the median itself, plus the bad value. */
typedef struct planted { const char *set, *why; } planted;

static void test_planted_values(odb_ctx *ctx) {
  static const planted cases[] = {
    {"median = -1", "median is -1"},
    {"median = NULL", "median is NULL"},
    {"median = 0.0 / 0.0", "median is NULL"},     /* NaN is stored NULL */
    {"median = 9e999", "median is inf"},
    {"median = -9e999", "median is -inf"},
    {"median = 'fast'", "median is text 'fast'"},
    {"median = 0", "median is 0"},
    {"median = x'00ff'", "median is a blob"},
    {"spread = -1", "spread is -1"},
    {"p25 = 9e999", "p25 is inf"},
    {"max = 'x'", "max is text 'x'"},
    {"reps = 0", "reps is 0"},
    {"reps = 'many'", "reps is text 'many'"},
    {"reps = 2.5", "reps is a real '2.5'"},
    {"reps = 4294967297", "reps is 4294967297"},
    {"err = 'tiny'", "err is text 'tiny'"},
    {"err = -1e-9", "err is -1e-09"},
    {"tol = 9e999", "tol is inf"},
    {"seconds = -5", "seconds is -5"},
    {"at = 'yesterday'", "at is text 'yesterday'"},
    {"status = 'great'", "unknown status 'great'"},
    {"status = 'skipped'", "unknown status 'skipped'"},
  };
  const char *path = in_dir("planted.db", 0);
  odb_tunedb *db = NULL;
  odb_tune_stats st;
  odb_tuner *t = NULL;
  odb_machine_id mid;
  odb_tune_target tg;
  long long id = 0;
  uint64_t cursor;
  char cmd[256], last[160] = "", text[64];
  synth s;
  synth_init(&s);
  if (odb_tunedb_open(path, 0, &db) != ODB_OK ||
      tune(ctx, &s, db, &st, NULL) != ODB_OK || st.measured != 40) {
    tap_ok(0, "a database of 40 evaluations: %s", odb_last_error());
    return;
  }
  odb_tunedb_close(db);
  db = NULL;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const planted *c = &cases[i];
    int ok, nwarn;
    snprintf(cmd, sizeof cmd, "UPDATE evals SET median = 1e-9, %s WHERE "
             "config = 'a=0 k=s'", c->set);
    if (sql(path, cmd) != 0) {
      tap_ok(0, "planting %s", c->set);
      continue;
    }
    odb_tunedb_open(path, 0, &db);
    cursor = odb_event_last_seq(ctx->events);
    s.runs = 0;
    t = NULL;
    if (!db || tune(ctx, &s, db, &st, &t) != ODB_OK || !t) {
      tap_ok(0, "tuning over %s: %s", c->set, odb_last_error());
      odb_tuner_destroy(t);
      odb_tunedb_close(db);
      db = NULL;
      continue;
    }
    odb_tuner_config_text(t, &odb_tuner_best(t)->cfg, text, sizeof text);
    nwarn = count_warnings(ctx, &cursor, path, "'a=0 k=s'", c->why, last,
                           sizeof last);
    ok = strcmp(text, "a=7 k=p") == 0 && st.cached == 39 &&
         st.measured == 1 && nwarn == 1 && strstr(last, "ignored");
    tap_ok(ok, "%s: ignored and measured again, the best is the true one "
           "(%s; %ld cached, %ld measured; %d warning(s): %s)", c->set,
           text, st.cached, st.measured, nwarn, last);
    odb_tuner_destroy(t);
    odb_tunedb_close(db);
    db = NULL;
  }
  /* once per row: read twice through one handle */
  sql(path, "UPDATE evals SET median = -1 WHERE config = 'a=0 k=s'");
  odb_tunedb_open(path, 0, &db);
  if (!db) return;
  odb_tunedb_set_log(db, ctx);
  tg = synth_target(&s);
  odb_machine_fingerprint(ctx, &mid);
  odb_tunedb_target(db, &mid, &tg.key, odb_version(), 0, &id);
  {
    lines got;
    int nwarn;
    cursor = odb_event_last_seq(ctx->events);
    got.n = 0;
    odb_tunedb_each(db, id, collect_cfg, &got);
    got.n = 0;
    odb_tunedb_each(db, id, collect_cfg, &got);
    nwarn = count_warnings(ctx, &cursor, path, "'a=0 k=s'", "median is -1",
                           last, sizeof last);
    tap_ok(got.n == 39 && !has_line(&got, "a=0 k=s") && nwarn == 1,
           "a bad row is skipped by every read and reported once per row "
           "(%d rows, %d warning(s))", got.n, nwarn);
  }
  odb_tunedb_close(db);
  odb_space_destroy(s.sp);
}

/* list and show: the planted row is not the best, text is escaped. */
static void test_planted_commands(void) {
  const char *path = in_dir("planted.db", 0);
  odb_tunedb *db = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f, *err;
  sql(path, "INSERT INTO evals SELECT target, 'a=1' || char(27) || '[2J' ||"
      " char(7) || ' k=p', status, 5e-3, spread, p25, p75, min, max, reps,"
      " err, tol, seconds, 'x' || char(27) || ']0;title' || char(10), at"
      " FROM evals WHERE config = 'a=7 k=p';"
      "UPDATE targets SET params = 'p' || char(27) || '[31m';");
  /* the warnings of the reads go to stderr: kept out of the TAP output */
  err = freopen("/dev/null", "w", stderr);
  (void)err;
  odb_tunedb_open(path, ODB_TUNEDB_READONLY, &db);
  if (!db) {
    tap_ok(0, "read-only open: %s", odb_last_error());
    return;
  }
  f = open_memstream(&buf, &len);
  odb_tunedb_list(db, NULL, f);
  fclose(f);
  tap_ok(strstr(buf, "1 ms") && strstr(buf, "a=7 k=p") &&
         !strstr(buf, "a=0 k=s") && !strchr(buf, 27) &&
         strstr(buf, "p\\x1b[31m"), "list: the best is the true one (the "
         "row with median -1 is ignored), the escape shown as \\x1b");
  free(buf);
  f = open_memstream(&buf, &len);
  odb_tunedb_show(db, 1, f);
  fclose(f);
  tap_ok(strstr(buf, "a=0 k=s") && strstr(buf, "ignored: median is -1") &&
         strstr(buf, "   1  a=7 k=p") && !strchr(buf, 27) && !strchr(buf, 7) &&
         strstr(buf, "a=1\\x1b[2J\\x07 k=p"),
         "show: the planted row is listed as ignored, control characters "
         "escaped");
  free(buf);
  odb_tunedb_close(db);
}

/* }====== */

/* {====== killed with SIGKILL, then resumed */

/* The child: tunes with 30 ms per configuration until it is killed. */
static void child_tune(odb_ctx *ctx, const char *dbpath, const char *log) {
  synth s;
  odb_tunedb *db = NULL;
  odb_tune_stats st;
  synth_init(&s);
  s.sleep_s = 0.015;
  s.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (odb_tunedb_open(dbpath, 0, &db) != ODB_OK) _exit(3);
  tune(ctx, &s, db, &st, NULL);
  _exit(0);       /* not reached in the test: it is killed first */
}

static void test_sigkill_resume(odb_ctx *ctx) {
  const char *dbpath = in_dir("kill.db", 0), *log1 = in_dir("run1.log", 1);
  const char *log2 = in_dir("run2.log", 2);
  lines ran1, done1, ran2, final;
  odb_tunedb *db = NULL;
  odb_tune_stats st;
  odb_tuner *t = NULL;
  synth s;
  long n = 0;
  int status = 0, lost = 0, repeated = 0;
  pid_t pid = fork();
  if (pid == 0) child_tune(ctx, dbpath, log1);
  /* wait until about a third of the 40 are done, then SIGKILL */
  for (int i = 0; i < 2000; ++i) {      /* up to 20 s on a slow machine */
    struct timespec ts = {0, 10 * 1000 * 1000};
    read_lines(log1, &ran1);
    if (ran1.n >= 14) break;
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
         "the tuning child was killed with SIGKILL mid-run (%d configs "
         "started)", ran1.n);
  read_lines(log1, &ran1);
  done1.n = 0;
  if (odb_tunedb_open(dbpath, 0, &db) != ODB_OK) {
    tap_ok(0, "reopen after the kill: %s", odb_last_error());
    return;
  }
  {
    odb_tune_target tg;
    odb_machine_id mid;
    long long id = 0;
    synth_init(&s);
    tg = synth_target(&s);
    odb_machine_fingerprint(ctx, &mid);
    odb_tunedb_target(db, &mid, &tg.key, odb_version(), 0, &id);
    odb_tunedb_each(db, id, collect_cfg, &done1);
    odb_space_destroy(s.sp);
  }
  tap_ok(done1.n >= 10 && done1.n < 40 && done1.n >= ran1.n - 1,
         "%d evaluations were committed before the kill (%d started)",
         done1.n, ran1.n);
  /* resume in this process */
  synth_init(&s);
  s.log_fd = open(log2, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (tune(ctx, &s, db, &st, &t) != ODB_OK) tap_diag("%s", odb_last_error());
  tap_ok(t && st.evals == 40 && st.cached == done1.n &&
         st.measured == 40 - done1.n,
         "resume: %ld cached + %ld measured = 40", st.cached, st.measured);
  if (!t) return;
  close(s.log_fd);
  read_lines(log2, &ran2);
  for (int i = 0; i < done1.n; ++i) repeated += has_line(&ran2, done1.s[i]);
  tap_ok(repeated == 0 && ran2.n == 40 - done1.n,
         "no finished evaluation was run again (%d repeated)", repeated);
  final.n = 0;
  for (long i = 0; t && i < odb_tuner_nevals(t); ++i) {
    char text[64];
    odb_tuner_config_text(t, &odb_tuner_eval_at(t, i)->cfg, text,
                          sizeof text);
    snprintf(final.s[final.n++], sizeof final.s[0], "%s", text);
  }
  for (int i = 0; i < done1.n; ++i) lost += !has_line(&final, done1.s[i]);
  odb_tunedb_count(db, 0, &n);
  tap_ok(lost == 0 && final.n == 40 && n == 40,
         "none was lost: 40 distinct evaluations in the result and the "
         "database");
  {
    char text[64];
    odb_tuner_config_text(t, &odb_tuner_best(t)->cfg, text, sizeof text);
    tap_ok(strcmp(text, "a=7 k=p") == 0, "the resumed search finds the "
           "optimum (%s)", text);
  }
  odb_tuner_destroy(t);
  odb_tunedb_close(db);
  odb_space_destroy(s.sp);
}

/* }====== */

int main(void) {
  odb_ctx_opts co;
  odb_ctx *ctx = NULL;
  char cmd[300];
  snprintf(dir, sizeof dir, "/tmp/odb-tunedb-XXXXXX");
  if (!mkdtemp(dir)) TAP_SKIP_ALL("no temporary directory");
  memset(&co, 0, sizeof co);
  co.seed = 3;
  co.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) TAP_SKIP_ALL("no context");
  test_store_load(ctx);
  test_reuse_and_versions(ctx);
  test_commands();
  test_bad_files();
  test_sigkill_resume(ctx);
  test_planted_values(ctx);
  test_planted_commands();
  test_paths();
  odb_ctx_destroy(ctx);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) tap_diag("could not remove %s", dir);
  return tap_done();
}
