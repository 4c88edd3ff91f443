/* odb_tunedb.c - the tuning database: SQLite, one commit per evaluation. */
#include "odb_status.h"
#include "odb_topo.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_cachedir.h"
#include "odb_json.h"
#include "odb_results.h"
#include "odb_sha256.h"
#include "odb_measure.h"
#include "odb_version.h"
#include "odb_tune_types.h"
#include "odb_tunedb.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#define SCHEMA_ID "odebench-tunedb 1"

struct odb_tunedb {
  sqlite3 *h;
  int readonly;
  char path[1024];
  sqlite3_stmt *put, *touch;
  odb_ctx *log;            /* warnings go to its log; NULL: stderr */
  long long *warned;       /* evals rowids already reported as ignored */
  int nwarned, capwarned;
};

static const char schema_sql[] =
  "CREATE TABLE IF NOT EXISTS odb_meta("
  " key TEXT PRIMARY KEY, value TEXT NOT NULL);"
  "INSERT OR IGNORE INTO odb_meta VALUES('schema', '" SCHEMA_ID "');"
  "CREATE TABLE IF NOT EXISTS targets("
  " id INTEGER PRIMARY KEY,"
  " machine TEXT NOT NULL, machine_desc TEXT NOT NULL,"
  " version TEXT NOT NULL, code_hash TEXT NOT NULL,"
  " problem TEXT NOT NULL, size TEXT NOT NULL, method TEXT NOT NULL,"
  " family TEXT NOT NULL, params TEXT NOT NULL,"
  " created REAL NOT NULL, updated REAL NOT NULL,"
  " UNIQUE(machine, version, code_hash, problem, size, method, family,"
  "        params));"
  "CREATE TABLE IF NOT EXISTS evals("
  " target INTEGER NOT NULL REFERENCES targets(id) ON DELETE CASCADE,"
  " config TEXT NOT NULL, status TEXT NOT NULL,"
  " median REAL, spread REAL, p25 REAL, p75 REAL, min REAL, max REAL,"
  " reps INTEGER NOT NULL, err REAL, tol REAL, seconds REAL,"
  " message TEXT NOT NULL, at REAL NOT NULL,"
  " PRIMARY KEY(target, config));";

/* {====== machine and code */

/* Appends printf-style text to buf (used bytes in *used), truncating. */
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *used, const char *fmt,
                   ...) {
  va_list ap;
  int n;
  if (*used + 1 >= len) return;
  va_start(ap, fmt);
  n = vsnprintf(buf + *used, len - *used, fmt, ap);
  va_end(ap);
  if (n > 0) *used += (size_t)n < len - *used ? (size_t)n : len - *used - 1;
}

void odb_machine_fingerprint(odb_ctx *ctx, odb_machine_id *out) {
  const odb_topo *t = &ctx->topo;
  odb_backend *gpu = odb_ctx_backend(ctx, "cuda");
  odb_device_info d;
  char hex[65];
  size_t used = 0;
  memset(out, 0, sizeof *out);
  append(out->desc, sizeof out->desc, &used, "cpu=%s; packages=%d; cores=%d; "
         "pus=%d; caches=", t->cpu_model, t->packages, t->cores, t->pus);
  for (int i = 0; i < t->ncaches; ++i)
    append(out->desc, sizeof out->desc, &used, "%sL%d:%zuB/%d", i ? "," : "",
           t->caches[i].level, t->caches[i].size, t->caches[i].sharing);
  memset(&d, 0, sizeof d);
  if (gpu && odb_backend_query(gpu, &d) == ODB_OK)
    append(out->desc, sizeof out->desc, &used, "; gpu=%s; sm=%d; cc=%d.%d; "
           "driver=%d", d.name, d.sm_count, d.cc_major, d.cc_minor,
           d.driver_version);
  odb_sha256_hex(out->desc, strlen(out->desc), hex);
  memcpy(out->hash, hex, 16);
  out->hash[16] = '\0';
}

static char code_hash[80];
static pthread_once_t code_once = PTHREAD_ONCE_INIT;

/* Hashes the file that holds this function's code. */
static void code_hash_init(void) {
  Dl_info info;
  FILE *f = NULL;
  char *buf = NULL;
  long len = -1;
  snprintf(code_hash, sizeof code_hash, "unknown-%s", odb_revision());
  if (!dladdr((void *)code_hash_init, &info) || !info.dli_fname) return;
  f = fopen(info.dli_fname, "rb");
  if (f && fseek(f, 0, SEEK_END) == 0) len = ftell(f);
  if (f && len > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)len)) != NULL &&
      fread(buf, 1, (size_t)len, f) == (size_t)len)
    odb_sha256_hex(buf, (size_t)len, code_hash);
  free(buf);
  if (f) fclose(f);
}

const char *odb_engine_code_hash(void) {
  pthread_once(&code_once, code_hash_init);
  return code_hash;
}

/* }====== */

/* {====== opening */

odb_status odb_tunedb_default_path(char *buf, size_t len) {
  return odb_cache_path("tune.db", buf, len);
}

/* Fails with the SQLite message of the handle, naming the path. */
static odb_status db_fail(odb_tunedb *db, const char *what) {
  return ODB_FAIL(ODB_ERR_IO, "tuning database %s: %s: %s", db->path, what,
                  db->h ? sqlite3_errmsg(db->h) : "cannot open");
}

/* Checks that the file may be opened as asked; creates its directory. */
static odb_status check_file(const char *path, int ro) {
  struct stat sb;
  char dir[1024];
  if (stat(path, &sb) != 0) {
    if (errno != ENOENT)
      return ODB_FAIL(ODB_ERR_IO, "tuning database %s: %s", path,
                      strerror(errno));
    if (ro)
      return ODB_FAIL(ODB_ERR_IO, "tuning database %s does not exist", path);
    snprintf(dir, sizeof dir, "%s", path);
    return odb_mkdirs(dirname(dir));
  }
  if (!S_ISREG(sb.st_mode))
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is not a regular file",
                    path);
  if (!ro && (!(sb.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) ||
              access(path, W_OK) != 0))
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is write-protected; it "
                    "was left as it is (make it writable, or give another "
                    "cache path, or cache = \"off\")", path);
  snprintf(dir, sizeof dir, "%s", path);
  if (!ro && access(dirname(dir), W_OK) != 0)
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s: its directory is not "
                    "writable (the write-ahead log lives there)", path);
  return ODB_OK;
}

/* Runs one query returning a single text or number into buf. */
static int query_text(sqlite3 *h, const char *sql, char *buf, size_t len) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
  buf[0] = '\0';
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const unsigned char *v = sqlite3_column_text(st, 0);
    snprintf(buf, len, "%s", v ? (const char *)v : "");
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

/*
** Makes sure the file is a healthy odebench tuning database (or an empty
** one) before anything is written. *fresh = 1 when it has no table yet.
*/
static odb_status validate(odb_tunedb *db, int *fresh) {
  char v[128];
  *fresh = 0;
  if (query_text(db->h, "SELECT count(*) FROM sqlite_master", v, sizeof v))
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is corrupt or not a "
                    "database (%s); it was left as it is: remove it or give "
                    "another cache path", db->path, sqlite3_errmsg(db->h));
  if (strcmp(v, "0") == 0) {
    *fresh = 1;
    return ODB_OK;
  }
  if (query_text(db->h, "PRAGMA quick_check(1)", v, sizeof v) ||
      strcmp(v, "ok") != 0)
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is corrupt (%s); it was "
                    "left as it is: remove it or give another cache path",
                    db->path, *v ? v : sqlite3_errmsg(db->h));
  if (query_text(db->h, "SELECT value FROM odb_meta WHERE key = 'schema'", v,
                 sizeof v) || strcmp(v, SCHEMA_ID) != 0)
    return ODB_FAIL(ODB_ERR_IO, "%s is not an odebench tuning database "
                    "(schema '%s', expected '" SCHEMA_ID "'); it was left as "
                    "it is", db->path, *v ? v : "none");
  return ODB_OK;
}

/* Write-ahead log, schema, statements: only for a writable database. */
static odb_status prepare_writes(odb_tunedb *db) {
  char mode[32];
  if (query_text(db->h, "PRAGMA journal_mode=WAL", mode, sizeof mode) ||
      strcmp(mode, "wal") != 0)
    return db_fail(db, "cannot use a write-ahead log");
  if (sqlite3_exec(db->h, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) ||
      sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL))
    return db_fail(db, "begin");
  if (sqlite3_exec(db->h, schema_sql, NULL, NULL, NULL)) {
    odb_status st = db_fail(db, "creating tables");
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return st;
  }
  if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL))
    return db_fail(db, "commit");
  if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO evals(target, config,"
        " status, median, spread, p25, p75, min, max, reps, err, tol, seconds,"
        " message, at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &db->put,
        NULL) ||
      sqlite3_prepare_v2(db->h, "UPDATE targets SET updated = ? WHERE id = ?",
                         -1, &db->touch, NULL))
    return db_fail(db, "preparing statements");
  return ODB_OK;
}

odb_status odb_tunedb_open(const char *path, int flags, odb_tunedb **out) {
  odb_tunedb *db;
  odb_status st;
  int ro = (flags & ODB_TUNEDB_READONLY) != 0, fresh;
  *out = NULL;
  if (!path || !*path)
    return ODB_FAIL(ODB_ERR_ARG, "tuning database: empty path");
  ODB_TRY(check_file(path, ro));
  db = calloc(1, sizeof *db);
  if (!db) return ODB_FAIL(ODB_ERR_NOMEM, "tuning database");
  snprintf(db->path, sizeof db->path, "%s", path);
  db->readonly = ro;
  if (sqlite3_open_v2(path, &db->h, ro ? SQLITE_OPEN_READONLY
                      : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)) {
    st = db_fail(db, "open");
    goto fail;
  }
  sqlite3_busy_timeout(db->h, 10000);
  st = validate(db, &fresh);
  if (st == ODB_OK && fresh && ro)
    st = ODB_FAIL(ODB_ERR_IO, "tuning database %s is empty", path);
  if (st == ODB_OK && !ro) st = prepare_writes(db);
  if (st != ODB_OK) goto fail;
  *out = db;
  return ODB_OK;
fail:
  odb_tunedb_close(db);
  return st;
}

void odb_tunedb_close(odb_tunedb *db) {
  if (!db) return;
  sqlite3_finalize(db->put);
  sqlite3_finalize(db->touch);
  sqlite3_close(db->h);
  free(db->warned);
  free(db);
}

const char *odb_tunedb_path(const odb_tunedb *db) { return db->path; }

void odb_tunedb_set_log(odb_tunedb *db, odb_ctx *ctx) { db->log = ctx; }

/* }====== */

/* {====== targets and evaluations */

/* Binds a C string (NULL as "") to parameter i. */
static int bind_text(sqlite3_stmt *st, int i, const char *s) {
  return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

/* Binds a double; NaN becomes NULL. */
static int bind_num(sqlite3_stmt *st, int i, double v) {
  return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

/* A REAL column, NULL read as NaN. */
static double col_num(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL
             ? NAN : sqlite3_column_double(st, i);
}

/* A TEXT column, NULL read as "". */
static const char *col_text(sqlite3_stmt *st, int i) {
  const unsigned char *v = sqlite3_column_text(st, i);
  return v ? (const char *)v : "";
}

/* Binds the key columns (machine .. params) from index 1 on. */
static void bind_key(sqlite3_stmt *st, const odb_machine_id *m,
                     const odb_tune_key *k, const char *version) {
  bind_text(st, 1, m->hash);
  bind_text(st, 2, version);
  bind_text(st, 3, k->code_hash);
  bind_text(st, 4, k->problem);
  bind_text(st, 5, k->size);
  bind_text(st, 6, k->method);
  bind_text(st, 7, k->family);
  bind_text(st, 8, k->params);
}

/* Looks up the id of a target; 0 when absent. */
static odb_status find_target(odb_tunedb *db, const odb_machine_id *m,
                              const odb_tune_key *k, const char *version,
                              long long *id) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db->h, "SELECT id FROM targets WHERE machine=?"
             " AND version=? AND code_hash=? AND problem=? AND size=? AND"
             " method=? AND family=? AND params=?", -1, &st, NULL);
  *id = 0;
  if (rc != SQLITE_OK) return db_fail(db, "looking up a target");
  bind_key(st, m, k, version);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE
             ? ODB_OK : db_fail(db, "looking up a target");
}

odb_status odb_tunedb_target(odb_tunedb *db, const odb_machine_id *m,
                             const odb_tune_key *k, const char *version,
                             int create, long long *id) {
  sqlite3_stmt *st = NULL;
  double now = (double)time(NULL);
  int rc;
  ODB_TRY(find_target(db, m, k, version, id));
  if (*id || !create) return ODB_OK;
  if (db->readonly)
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is open read-only",
                    db->path);
  rc = sqlite3_prepare_v2(db->h, "INSERT INTO targets(machine, version,"
         " code_hash, problem, size, method, family, params, machine_desc,"
         " created, updated) VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(db, "adding a target");
  bind_key(st, m, k, version);
  bind_text(st, 9, m->desc);
  sqlite3_bind_double(st, 10, now);
  sqlite3_bind_double(st, 11, now);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc == SQLITE_CONSTRAINT) {   /* another process added it meanwhile */
    ODB_TRY(find_target(db, m, k, version, id));
    if (*id) return ODB_OK;
  }
  if (rc != SQLITE_DONE) return db_fail(db, "adding a target");
  *id = sqlite3_last_insert_rowid(db->h);
  return ODB_OK;
}

/* Binds the columns of one evaluation to the insert statement. */
static void bind_eval(sqlite3_stmt *st, long long target, const char *config,
                      const odb_tune_eval *ev) {
  int ok = ev->status == ODB_TUNE_OK;
  sqlite3_bind_int64(st, 1, target);
  bind_text(st, 2, config);
  bind_text(st, 3, odb_tune_status_name(ev->status));
  bind_num(st, 4, ok ? ev->m.median : NAN);
  bind_num(st, 5, ok ? ev->m.spread : NAN);
  bind_num(st, 6, ok ? ev->m.p25 : NAN);
  bind_num(st, 7, ok ? ev->m.p75 : NAN);
  bind_num(st, 8, ok ? ev->m.min : NAN);
  bind_num(st, 9, ok ? ev->m.max : NAN);
  sqlite3_bind_int(st, 10, ok ? ev->m.reps : 0);
  bind_num(st, 11, ev->err);
  bind_num(st, 12, ev->tol);
  bind_num(st, 13, ev->seconds);
  bind_text(st, 14, ev->msg);
  sqlite3_bind_double(st, 15, ev->at > 0 ? ev->at : (double)time(NULL));
}

/* Runs a prepared statement to completion and resets it. */
static int step_reset(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

odb_status odb_tunedb_put(odb_tunedb *db, long long target,
                          const char *config, const odb_tune_eval *ev) {
  if (db->readonly)
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is open read-only",
                    db->path);
  if (ev->status == ODB_TUNE_SKIPPED)
    return ODB_FAIL(ODB_ERR_ARG, "skipped evaluations are not stored");
  if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL))
    return db_fail(db, "begin");
  bind_eval(db->put, target, config, ev);
  sqlite3_bind_double(db->touch, 1, (double)time(NULL));
  sqlite3_bind_int64(db->touch, 2, target);
  if (step_reset(db->put) || step_reset(db->touch)) {
    odb_status st = db_fail(db, "storing an evaluation");
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return st;
  }
  if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL))
    return db_fail(db, "commit");
  return ODB_OK;
}

/* {====== reading evaluations back: what the tuner trusts is checked */

/*
** Text from the file as it may be shown on a terminal: control characters
** (C0, DEL, and C1 in UTF-8), bytes that are not UTF-8 and backslashes are
** written \xNN (\\ for the backslash), so a planted escape sequence cannot
** drive the terminal. Truncated to cap - 1 bytes, never within an escape.
*/
static const char *shown(const char *s, char *out, size_t cap) {
  size_t len = 0;
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = 1, ok = 1;
    if (*p >= 0x80) {        /* the length of a well-formed UTF-8 sequence */
      n = *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
        : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
      for (int k = 1; k < n && ok; ++k) ok = (p[k] & 0xc0) == 0x80;
      ok = ok && n > 0 && !(*p == 0xc2 && p[1] < 0xa0);    /* C1 */
    } else {
      ok = *p >= 0x20 && *p != 0x7f && *p != '\\';
    }
    if (!ok) n = 1;
    if (len + (ok ? (size_t)n : 4) >= cap) break;
    if (ok) {
      memcpy(out + len, p, (size_t)n);
      len += (size_t)n;
    } else if (*p == '\\') {
      memcpy(out + len, "\\\\", 2);
      len += 2;
    } else {
      snprintf(out + len, cap - len, "\\x%02x", *p);
      len += 4;
    }
    p += n;
  }
  if (cap) out[len] = '\0';
  return out;
}

/* Columns of an evaluation as read back (EVAL_COLS from index i0). */
#define EVAL_COLS "config, status, median, spread, p25, p75, min, max, " \
                  "reps, err, tol, seconds, message, at, rowid"
enum { C_CONFIG, C_STATUS, C_MEDIAN, C_SPREAD, C_P25, C_P75, C_MIN, C_MAX,
       C_REPS, C_ERR, C_TOL, C_SECONDS, C_MESSAGE, C_AT, C_ROWID };
static const char *const eval_names[] = {
  "config", "status", "median", "spread", "p25", "p75", "min", "max",
  "reps", "err", "tol", "seconds", "message", "at"
};

/* What a numeric column may hold (flags of check_num). */
enum { N_NULL = 1,         /* NULL (not measured, not verified) */
       N_POS = 2,          /* > 0, else >= 0 */
       N_INF = 4,          /* +inf (an error that overflowed) */
       N_INT = 8 };        /* an integer that fits an int */

/* 1 when column i holds what flags allow; else 0 and why says what not. */
static int check_num(sqlite3_stmt *st, int i, const char *name, int flags,
                     char *why, size_t cap) {
  char txt[48];
  int type = sqlite3_column_type(st, i);
  double v;
  if (type == SQLITE_NULL) {
    if (flags & N_NULL) return 1;
    snprintf(why, cap, "%s is NULL", name);
    return 0;
  }
  if (type == SQLITE_BLOB) {
    snprintf(why, cap, "%s is a blob", name);
    return 0;
  }
  if (type == SQLITE_TEXT || ((flags & N_INT) && type != SQLITE_INTEGER)) {
    snprintf(why, cap, "%s is %s '%s'", name, type == SQLITE_TEXT ? "text"
             : "a real", shown(col_text(st, i), txt, sizeof txt));
    return 0;
  }
  if (flags & N_INT) {
    long long k = sqlite3_column_int64(st, i);
    if (k >= ((flags & N_POS) ? 1 : 0) && k <= INT_MAX) return 1;
    snprintf(why, cap, "%s is %lld", name, k);
    return 0;
  }
  v = sqlite3_column_double(st, i);
  if ((isfinite(v) || (isinf(v) && v > 0 && (flags & N_INF))) &&
      ((flags & N_POS) ? v > 0 : v >= 0))
    return 1;
  snprintf(why, cap, "%s is %g", name, v);
  return 0;
}

/*
** 1 when an evaluation row holds what odb_tunedb_put writes: a stored
** status; for an ok one finite timings (median > 0, the others >= 0) and
** at least one repetition; NULL or non-negative numbers elsewhere (a
** rejected one may have err = inf). Else 0 with the reason in why.
*/
static int eval_valid(sqlite3_stmt *st, int i0, char *why, size_t cap) {
  int status, ok, timing;
  if (sqlite3_column_type(st, i0 + C_CONFIG) != SQLITE_TEXT ||
      !*col_text(st, i0 + C_CONFIG)) {
    snprintf(why, cap, "the configuration is not text");
    return 0;
  }
  status = sqlite3_column_type(st, i0 + C_STATUS) == SQLITE_TEXT
           ? odb_tune_status_parse(col_text(st, i0 + C_STATUS)) : -1;
  if (status < 0 || status == ODB_TUNE_SKIPPED) {
    char txt[48];
    snprintf(why, cap, "unknown status '%s'",
             shown(col_text(st, i0 + C_STATUS), txt, sizeof txt));
    return 0;
  }
  ok = status == ODB_TUNE_OK;
  timing = ok ? 0 : N_NULL;
  if (!check_num(st, i0 + C_MEDIAN, "median", timing | N_POS, why, cap))
    return 0;
  for (int i = C_SPREAD; i <= C_MAX; ++i)
    if (!check_num(st, i0 + i, eval_names[i], timing, why, cap)) return 0;
  if (!check_num(st, i0 + C_REPS, "reps", N_INT | (ok ? N_POS : 0), why,
                 cap) ||
      !check_num(st, i0 + C_ERR, "err", N_NULL | (ok ? 0 : N_INF), why,
                 cap) ||
      !check_num(st, i0 + C_TOL, "tol", N_NULL, why, cap) ||
      !check_num(st, i0 + C_SECONDS, "seconds", N_NULL, why, cap) ||
      !check_num(st, i0 + C_AT, "at", 0, why, cap))
    return 0;
  if (sqlite3_column_type(st, i0 + C_MESSAGE) != SQLITE_TEXT) {
    snprintf(why, cap, "the message is not text");
    return 0;
  }
  return 1;
}

/*
** 1 when the row is valid; otherwise warns once per row (and database
** handle) naming the file, the target and the configuration, and returns
** 0: the row is then ignored by every reader.
*/
static int eval_trusted(odb_tunedb *db, sqlite3_stmt *st, int i0,
                        long long target) {
  char why[160], cfg[96];
  long long rowid = sqlite3_column_int64(st, i0 + C_ROWID);
  if (eval_valid(st, i0, why, sizeof why)) return 1;
  for (int i = 0; i < db->nwarned; ++i)
    if (db->warned[i] == rowid) return 0;
  if (db->nwarned == db->capwarned) {
    int cap = db->capwarned ? 2 * db->capwarned : 16;
    long long *w = realloc(db->warned, (size_t)cap * sizeof *w);
    if (!w) return 0;      /* warned again next time: harmless */
    db->warned = w;
    db->capwarned = cap;
  }
  db->warned[db->nwarned++] = rowid;
  shown(col_text(st, i0 + C_CONFIG), cfg, sizeof cfg);
  if (db->log)
    odb_ctx_log(db->log, ODB_LOG_WARN, "tuning database %s: evaluation "
                "'%s' of target %lld ignored: %s", db->path, cfg, target,
                why);
  else
    fprintf(stderr, "odebench: warning: tuning database %s: evaluation "
            "'%s' of target %lld ignored: %s\n", db->path, cfg, target, why);
  return 0;
}

/* Reads one evaluation row (checked by eval_trusted) from index i0. */
static void read_eval(sqlite3_stmt *st, int i0, odb_tune_eval *ev) {
  memset(ev, 0, sizeof *ev);
  ev->status = odb_tune_status_parse(col_text(st, i0 + C_STATUS));
  if (ev->status < 0) ev->status = ODB_TUNE_FAILED;
  ev->m.median = col_num(st, i0 + C_MEDIAN);
  ev->m.spread = col_num(st, i0 + C_SPREAD);
  ev->m.p25 = col_num(st, i0 + C_P25);
  ev->m.p75 = col_num(st, i0 + C_P75);
  ev->m.min = col_num(st, i0 + C_MIN);
  ev->m.max = col_num(st, i0 + C_MAX);
  ev->m.reps = sqlite3_column_int(st, i0 + C_REPS);
  ev->err = col_num(st, i0 + C_ERR);
  ev->tol = col_num(st, i0 + C_TOL);
  ev->seconds = col_num(st, i0 + C_SECONDS);
  shown(col_text(st, i0 + C_MESSAGE), ev->msg, sizeof ev->msg);
  ev->at = col_num(st, i0 + C_AT);
}

odb_status odb_tunedb_each(odb_tunedb *db, long long target,
                           odb_tunedb_each_fn fn, void *ud) {
  sqlite3_stmt *st = NULL;
  odb_tune_eval ev;
  int rc = sqlite3_prepare_v2(db->h, "SELECT " EVAL_COLS " FROM evals WHERE "
                              "target = ? ORDER BY rowid", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(db, "reading evaluations");
  sqlite3_bind_int64(st, 1, target);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!eval_trusted(db, st, 0, target)) continue;
    read_eval(st, 0, &ev);
    if (fn(ud, col_text(st, C_CONFIG), &ev)) {
      rc = SQLITE_DONE;
      break;
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? ODB_OK : db_fail(db, "reading evaluations");
}

odb_status odb_tunedb_count(odb_tunedb *db, long long target, long *n) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db->h, target > 0
             ? "SELECT count(*) FROM evals WHERE target = ?"
             : "SELECT count(*) FROM evals", -1, &st, NULL);
  *n = 0;
  if (rc != SQLITE_OK) return db_fail(db, "counting");
  if (target > 0) sqlite3_bind_int64(st, 1, target);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *n = (long)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? ODB_OK : db_fail(db, "counting");
}

/* }====== */

/* {====== the odebench tunedb command */

/* Seconds as "1.23 ms" (or "-" for NaN) into buf. */
static const char *fmt_secs(double s, char *buf, size_t len) {
  if (isnan(s)) snprintf(buf, len, "-");
  else if (s >= 1) snprintf(buf, len, "%.3g s", s);
  else if (s >= 1e-3) snprintf(buf, len, "%.3g ms", s * 1e3);
  else if (s >= 1e-6) snprintf(buf, len, "%.3g us", s * 1e6);
  else snprintf(buf, len, "%.3g ns", s * 1e9);
  return buf;
}

/* A Unix time as "2024-05-01 12:00:00Z" into buf[32]. */
static const char *fmt_time(double t, char buf[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  if (isnan(t) || !gmtime_r(&tt, &tm)) snprintf(buf, 32, "-");
  else strftime(buf, 32, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

/* Column i's text, shown escaped (see shown). */
static void put_shown(FILE *out, sqlite3_stmt *st, int i) {
  char buf[1024];
  fputs(shown(col_text(st, i), buf, sizeof buf), out);
}

/* "problem | size | method | family | params" of columns i0..i0+4. */
static void print_key(FILE *out, sqlite3_stmt *st, int i0) {
  for (int i = 0; i < 5; ++i) {
    if (i) fputs(" | ", out);
    put_shown(out, st, i0 + i);
  }
}

/* The fastest ok evaluation of a target among the rows that are trusted. */
typedef struct best_eval { char config[256]; double median; } best_eval;

static int take_best(void *ud, const char *config, const odb_tune_eval *ev) {
  best_eval *b = ud;
  if (ev->status == ODB_TUNE_OK &&
      (isnan(b->median) || ev->m.median < b->median)) {
    b->median = ev->m.median;
    shown(config, b->config, sizeof b->config);
  }
  return 0;
}

odb_status odb_tunedb_list(odb_tunedb *db, const char *this_machine,
                           FILE *out) {
  sqlite3_stmt *st = NULL;
  char v[48], m[40], secs[32], txt[40];
  int rc, rows = 0;
  rc = sqlite3_prepare_v2(db->h, "SELECT t.id, t.version, t.machine,"
         " t.problem, t.size, t.method, t.family, t.params,"
         " (SELECT count(*) FROM evals e WHERE e.target = t.id)"
         " FROM targets t ORDER BY t.id", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(db, "listing");
  fprintf(out, "%-4s %-16s %-23s %5s %10s  %-34s %s\n", "id", "version",
          "machine", "evals", "best", "best configuration",
          "problem | size | method | family | params");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    long long id = sqlite3_column_int64(st, 0);
    int cur = strcmp(col_text(st, 1), odb_version()) == 0;
    int here = this_machine && strcmp(col_text(st, 2), this_machine) == 0;
    best_eval best = {"", NAN};
    odb_status bs = odb_tunedb_each(db, id, take_best, &best);
    if (bs != ODB_OK) {
      sqlite3_finalize(st);
      return bs;
    }
    snprintf(v, sizeof v, "%s%s", shown(col_text(st, 1), txt, sizeof txt),
             cur ? "" : " (other)");
    snprintf(m, sizeof m, "%s%s", shown(col_text(st, 2), txt, sizeof txt),
             here ? " (here)" : "");
    fprintf(out, "%-4lld %-16s %-23s %5lld %10s  %-34s ", id, v, m,
            (long long)sqlite3_column_int64(st, 8),
            fmt_secs(best.median, secs, sizeof secs),
            *best.config ? best.config : "-");
    print_key(out, st, 3);
    fputc('\n', out);
    rows++;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(db, "listing");
  fprintf(out, "%d target(s) in %s; entries of other versions are kept but "
          "not reused\n", rows, db->path);
  return ODB_OK;
}

/* Prints the header of target id; ODB_ERR_ARG when there is none. */
static odb_status show_target(odb_tunedb *db, long long id, FILE *out) {
  sqlite3_stmt *st = NULL;
  char c[32], u[32];
  int rc = sqlite3_prepare_v2(db->h, "SELECT problem, size, method, family,"
             " params, machine, machine_desc, version, code_hash, created,"
             " updated FROM targets WHERE id = ?", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(db, "reading a target");
  sqlite3_bind_int64(st, 1, id);
  rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(db, "reading a target");
    return ODB_FAIL(ODB_ERR_ARG, "no target %lld in %s (see 'odebench "
                    "tunedb list')", id, db->path);
  }
  fprintf(out, "target %lld: ", id);
  print_key(out, st, 0);
  fputs("\n  machine  ", out);
  put_shown(out, st, 5);
  fputs("  ", out);
  put_shown(out, st, 6);
  fputs("\n  version  ", out);
  put_shown(out, st, 7);
  fprintf(out, "%s\n  code     ", strcmp(col_text(st, 7), odb_version()) == 0
          ? " (current)" : " (other version: kept, not reused)");
  put_shown(out, st, 8);
  fprintf(out, "\n  created  %s, updated %s\n", fmt_time(col_num(st, 9), c),
          fmt_time(col_num(st, 10), u));
  sqlite3_finalize(st);
  return ODB_OK;
}

/* One line of the evaluation table of show; rank 0: an ignored row. */
static void show_eval(FILE *out, sqlite3_stmt *st, int rank,
                      const odb_tune_eval *best, const char *ignored) {
  odb_tune_eval ev;
  char med[32], vs[48] = "", rk[16] = "-", cfg[256];
  read_eval(st, 0, &ev);
  shown(col_text(st, C_CONFIG), cfg, sizeof cfg);
  if (ignored) {
    fprintf(out, "%4s  %-40s %-8s %10s %8s %5s %9s %9s  ignored: %s\n", rk,
            cfg, "-", "-", "-", "-", "-", "-", ignored);
    return;
  }
  if (ev.status == ODB_TUNE_OK) snprintf(rk, sizeof rk, "%d", rank);
  if (ev.status == ODB_TUNE_OK && best) {
    if (best->m.median == ev.m.median && rank == 1)
      snprintf(vs, sizeof vs, "best");
    else
      snprintf(vs, sizeof vs, "%+.1f%%%s", 100 * (ev.m.median /
               best->m.median - 1), odb_measure_tied(best->m.median,
               best->m.spread, ev.m.median, ev.m.spread) ? " tied" : "");
  } else if (ev.status != ODB_TUNE_OK) {
    snprintf(vs, sizeof vs, "%.40s", ev.msg);
  }
  fprintf(out, "%4s  %-40s %-8s %10s %7.2f%% %5d %9.2e %9.2e  %s\n",
          rk, cfg, odb_tune_status_name(ev.status),
          fmt_secs(ev.m.median, med, sizeof med),
          isnan(ev.m.spread) ? 0.0 : 100 * ev.m.spread, ev.m.reps, ev.err,
          ev.tol, vs);
}

odb_status odb_tunedb_show(odb_tunedb *db, long long target, FILE *out) {
  sqlite3_stmt *st = NULL;
  odb_tune_eval best;
  int rc, rank = 0, rows = 0, have_best = 0;
  ODB_TRY(show_target(db, target, out));
  rc = sqlite3_prepare_v2(db->h, "SELECT " EVAL_COLS " FROM evals WHERE "
         "target = ? ORDER BY status != 'ok', median, config", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(db, "reading evaluations");
  sqlite3_bind_int64(st, 1, target);
  fprintf(out, "%4s  %-40s %-8s %10s %8s %5s %9s %9s  %s\n", "rank",
          "configuration", "status", "median", "spread", "reps", "err",
          "tol", "vs best");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    char why[160];
    rows++;
    if (!eval_valid(st, 0, why, sizeof why)) {
      eval_trusted(db, st, 0, target);          /* the warning */
      show_eval(out, st, 0, NULL, why);
      continue;
    }
    if (!have_best) {
      read_eval(st, 0, &best);
      have_best = best.status == ODB_TUNE_OK;
    }
    show_eval(out, st, ++rank, have_best ? &best : NULL, NULL);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(db, "reading evaluations");
  if (rows == 0) fprintf(out, "  (no evaluations)\n");
  return ODB_OK;
}

/* Text of a CSV cell, quoted when needed. */
static void csv_cell(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\r\n") && s[0] != '#') {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; ++s) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

#define TARGET_COLS "t.id, t.machine, t.machine_desc, t.version, " \
                    "t.code_hash, t.problem, t.size, t.method, t.family, " \
                    "t.params, t.created, t.updated"
static const char *const target_names[] = {
  "target", "machine", "machine_desc", "version", "code_hash", "problem",
  "size", "method", "family", "params", "created", "updated"
};
/* One row of the CSV export (12 target columns, then 14 eval columns). */
static void csv_row(FILE *out, sqlite3_stmt *st) {
  char buf[48];
  for (int i = 0; i < 26; ++i) {
    int type = sqlite3_column_type(st, i);
    if (i) fputc(',', out);
    if (type == SQLITE_NULL) continue;
    if (type == SQLITE_FLOAT) {
      odb_json_format_double(buf, sizeof buf, sqlite3_column_double(st, i));
      fputs(buf, out);
    } else {
      csv_cell(out, col_text(st, i));
    }
  }
  fputc('\n', out);
}

/* One column value as JSON (numbers, null, or strings). */
static void json_col(odb_json *j, const char *key, sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL: odb_json_null(j, key); break;
  case SQLITE_INTEGER:
    odb_json_integer(j, key, (long long)sqlite3_column_int64(st, i));
    break;
  case SQLITE_FLOAT: odb_json_number(j, key, sqlite3_column_double(st, i));
    break;
  default: odb_json_string(j, key, col_text(st, i)); break;
  }
}

/* Streams the joined rows as JSON: targets with their evaluations. */
static void json_rows(odb_json *j, sqlite3_stmt *st, int *rc) {
  long long cur = 0;
  while ((*rc = sqlite3_step(st)) == SQLITE_ROW) {
    long long id = sqlite3_column_int64(st, 0);
    if (id != cur) {
      if (cur) {
        odb_json_end_array(j);
        odb_json_end_object(j);
      }
      cur = id;
      odb_json_begin_object(j, NULL);
      for (int i = 0; i < 12; ++i) json_col(j, target_names[i], st, i);
      odb_json_begin_array(j, "evaluations");
    }
    if (sqlite3_column_type(st, 12) == SQLITE_NULL) continue;
    odb_json_begin_object(j, NULL);
    for (int i = 0; i < 14; ++i) json_col(j, eval_names[i], st, 12 + i);
    odb_json_end_object(j);
  }
  if (cur) {
    odb_json_end_array(j);
    odb_json_end_object(j);
  }
}

odb_status odb_tunedb_export(odb_tunedb *db, long long target, int csv,
                             FILE *out) {
  sqlite3_stmt *st = NULL;
  odb_json j;
  int rc = sqlite3_prepare_v2(db->h, "SELECT " TARGET_COLS ", e.config,"
             " e.status, e.median, e.spread, e.p25, e.p75, e.min, e.max,"
             " e.reps, e.err, e.tol, e.seconds, e.message, e.at FROM targets t"
             " LEFT JOIN evals e ON e.target = t.id WHERE ?1 = 0 OR t.id = ?1"
             " ORDER BY t.id, e.rowid", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(db, "exporting");
  sqlite3_bind_int64(st, 1, target > 0 ? target : 0);
  if (csv) {
    for (int i = 0; i < 26; ++i)
      fprintf(out, "%s%s", i ? "," : "",
              i < 12 ? target_names[i] : eval_names[i - 12]);
    fputc('\n', out);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      if (sqlite3_column_type(st, 12) != SQLITE_NULL) csv_row(out, st);
  } else {
    odb_json_init(&j, out);
    odb_json_begin_object(&j, NULL);
    odb_json_string(&j, "schema", SCHEMA_ID);
    odb_json_string(&j, "path", db->path);
    odb_json_string(&j, "odebench_version", odb_version());
    odb_json_begin_array(&j, "targets");
    json_rows(&j, st, &rc);
    odb_json_end_array(&j);
    odb_json_end_object(&j);
    fputc('\n', out);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? ODB_OK : db_fail(db, "exporting");
}

/* Runs a delete with the prune condition bound; adds the changes to *n. */
static int prune_exec(odb_tunedb *db, const char *sql, double cutoff,
                      int vm, long *n) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) return rc;
  sqlite3_bind_double(st, 1, cutoff);
  sqlite3_bind_int(st, 2, vm);
  bind_text(st, 3, odb_version());
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return rc;
  *n += sqlite3_changes(db->h);
  return SQLITE_OK;
}

#define PRUNE_COND "(updated < ?1 OR (?2 AND version != ?3))"

odb_status odb_tunedb_prune(odb_tunedb *db, double older_days,
                            int version_mismatch, long *targets,
                            long *evals) {
  double cutoff = older_days >= 0 ? (double)time(NULL) - older_days * 86400.0
                                  : -1.0;
  *targets = *evals = 0;
  if (db->readonly)
    return ODB_FAIL(ODB_ERR_IO, "tuning database %s is open read-only",
                    db->path);
  if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL))
    return db_fail(db, "begin");
  if (prune_exec(db, "DELETE FROM evals WHERE target IN (SELECT id FROM "
                 "targets WHERE " PRUNE_COND ")", cutoff, version_mismatch,
                 evals) ||
      prune_exec(db, "DELETE FROM targets WHERE " PRUNE_COND, cutoff,
                 version_mismatch, targets)) {
    odb_status st = db_fail(db, "pruning");
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return st;
  }
  if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL))
    return db_fail(db, "commit");
  return ODB_OK;
}

/* }====== */
