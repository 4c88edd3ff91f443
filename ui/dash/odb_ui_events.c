/* odb_ui_events.c - recording events to events.jsonl and reading them back. */
#include "odb_ui_events.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RECORD_POLL 0.025  /* seconds between reads of the ring */
#define BATCH 512

static const char *const kind_names[] = {
  "log", "solve_begin", "step", "solve_end", "metric", "tune_eval",
  "tune_best", "progress", "solve_row", "ranks"
};
#define NKINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

static const char *const level_names[] = { "error", "warn", "info", "debug" };

const char *odb_ui_event_kind_name(int kind) {
  return kind >= 0 && kind < NKINDS ? kind_names[kind] : "?";
}

/* {====== writing */

struct odb_ui_recorder {
  odb_ctx *ctx;
  FILE *f;
  char path[4096], part[4112];
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stop;             /* under lock */
  int io_error;         /* a write failed (errno) */
  int rank;             /* the recording rank (odb_ui_info) */
  uint64_t cursor;
};

/* ,"key":<number>; non-finite numbers are written as null. */
static void put_num(FILE *f, const char *key, double v) {
  char buf[40];
  if (!isfinite(v)) {
    fprintf(f, ",\"%s\":null", key);
    return;
  }
  odb_json_format_double(buf, sizeof buf, v);
  fprintf(f, ",\"%s\":%s", key, buf);
}

/* ,"key":"escaped" */
static void put_str(FILE *f, const char *key, const char *s) {
  fprintf(f, ",\"%s\":", key);
  odb_json_write_string(f, s);
}

/* A RANKS record's own names for its figures (odb_event.h), written
   always, zeros too: a rank's index 0 and a wait of 0 s are figures. */
static void write_ranks(FILE *f, const odb_event *e) {
  fprintf(f, ",\"of_rank\":%ld,\"ranks\":%ld", e->step, e->accepted);
  put_num(f, "steps_per_s", e->value);
  put_num(f, "wait_s", e->value2);
  if (e->name[0]) put_str(f, "name", e->name);
}

/* One event as one line; zero numbers and empty strings are left out.
   rank: the rank that records (only rank 0 does under mpirun). */
static void write_event(FILE *f, const odb_event *e, int rank) {
  fprintf(f, "{\"kind\":\"%s\",\"seq\":%llu,\"rank\":%d",
          odb_ui_event_kind_name(e->kind), (unsigned long long)e->seq, rank);
  put_num(f, "wall", e->wall);
  if (e->kind == ODB_EV_RANKS) {
    write_ranks(f, e);
    fputs("}\n", f);
    return;
  }
  if (e->kind == ODB_EV_LOG && e->level >= 0 && e->level < 4)
    fprintf(f, ",\"level\":\"%s\"", level_names[e->level]);
  if (e->t != 0) put_num(f, "t", e->t);
  if (e->h != 0) put_num(f, "h", e->h);
  if (e->err != 0) put_num(f, "err", e->err);
  if (e->step) fprintf(f, ",\"step\":%ld", e->step);
  if (e->accepted) fprintf(f, ",\"accepted\":%ld", e->accepted);
  if (e->rejected) fprintf(f, ",\"rejected\":%ld", e->rejected);
  if (e->value != 0) put_num(f, "value", e->value);
  if (e->value2 != 0) put_num(f, "value2", e->value2);
  if (e->name[0]) put_str(f, "name", e->name);
  if (e->text[0]) put_str(f, "text", e->text);
  fputs("}\n", f);
}

/* The first line: what replay shows in its header. */
static void write_header(FILE *f, const odb_ui_info *info) {
  fprintf(f, "{\"kind\":\"run\",\"format\":1,\"rank\":%d", info->rank);
  put_str(f, "scenario", info->scenario);
  put_str(f, "machine", info->machine);
  put_str(f, "gpu", info->gpu);
  put_num(f, "floor_read", info->floor_read);
  put_num(f, "floor_copy", info->floor_copy);
  fputs("}\n", f);
}

/* Writes every queued event (and a "dropped" line for a gap). */
static void drain(odb_ui_recorder *r) {
  odb_event batch[BATCH];
  uint64_t dropped;
  int n;
  do {
    n = odb_event_poll(r->ctx->events, &r->cursor, batch, BATCH, &dropped);
    if (dropped)
      fprintf(r->f, "{\"kind\":\"dropped\",\"rank\":%d,\"count\":%llu}\n",
              r->rank, (unsigned long long)dropped);
    for (int i = 0; i < n; ++i) write_event(r->f, &batch[i], r->rank);
  } while (n == BATCH);
  if (fflush(r->f) != 0 && !r->io_error) r->io_error = errno ? errno : EIO;
}

/* Adds s seconds to a CLOCK_MONOTONIC timespec. */
static void add_seconds(struct timespec *ts, double s) {
  long ns = ts->tv_nsec + (long)(s * 1e9);
  ts->tv_sec += ns / 1000000000L;
  ts->tv_nsec = ns % 1000000000L;
}

/* The thread: drain, wait RECORD_POLL (or for stop); drain once more. */
static void *record_main(void *arg) {
  odb_ui_recorder *r = arg;
  int stop = 0;
  pthread_setname_np(pthread_self(), "odb-record");   /* for top -H */
  while (!stop) {
    struct timespec until;
    drain(r);
    clock_gettime(CLOCK_MONOTONIC, &until);
    add_seconds(&until, RECORD_POLL);
    pthread_mutex_lock(&r->lock);
    while (!r->stop &&
           pthread_cond_timedwait(&r->cond, &r->lock, &until) != ETIMEDOUT) {
    }
    stop = r->stop;
    pthread_mutex_unlock(&r->lock);
  }
  drain(r);
  return NULL;
}

odb_status odb_ui_record_start(odb_ctx *ctx, const char *path,
                               const odb_ui_info *info,
                               odb_ui_recorder **out) {
  odb_ui_recorder *r;
  pthread_condattr_t ca;
  odb_ui_info none;
  if (!ctx || !ctx->events || !path || !out)
    return ODB_FAIL(ODB_ERR_ARG, "recorder: context, events and path needed");
  *out = NULL;
  memset(&none, 0, sizeof none);
  r = calloc(1, sizeof *r);
  if (!r) return ODB_FAIL(ODB_ERR_NOMEM, "recorder: out of memory");
  r->ctx = ctx;
  r->rank = info ? info->rank : 0;
  snprintf(r->path, sizeof r->path, "%s", path);
  snprintf(r->part, sizeof r->part, "%s.part", path);
  r->f = fopen(r->part, "w");
  if (!r->f) {
    odb_status st = ODB_FAIL(ODB_ERR_IO, "cannot create %s: %s", r->part,
                             strerror(errno));
    free(r);
    return st;
  }
  write_header(r->f, info ? info : &none);
  r->cursor = odb_event_last_seq(ctx->events);
  pthread_mutex_init(&r->lock, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&r->cond, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&r->thread, NULL, record_main, r) != 0) {
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    fclose(r->f);
    unlink(r->part);
    free(r);
    return ODB_FAIL(ODB_ERR_INTERNAL, "recorder: cannot start its thread");
  }
  *out = r;
  return ODB_OK;
}

/* The file is closed before the rename, so the renamed file is complete. */
odb_status odb_ui_record_finish(odb_ui_recorder *r, int keep) {
  odb_status st = ODB_OK;
  if (!r) return ODB_OK;
  pthread_mutex_lock(&r->lock);
  r->stop = 1;
  pthread_cond_signal(&r->cond);
  pthread_mutex_unlock(&r->lock);
  pthread_join(r->thread, NULL);
  pthread_cond_destroy(&r->cond);
  pthread_mutex_destroy(&r->lock);
  if (fclose(r->f) != 0 && !r->io_error) r->io_error = errno ? errno : EIO;
  if (keep && r->io_error)
    st = ODB_FAIL(ODB_ERR_IO, "cannot write %s: %s", r->part,
                  strerror(r->io_error));
  else if (keep && rename(r->part, r->path) != 0)
    st = ODB_FAIL(ODB_ERR_IO, "cannot rename %s to %s: %s", r->part, r->path,
                  strerror(errno));
  if (!keep || st != ODB_OK) unlink(r->part);
  free(r);
  return st;
}

/* }====== */

/* {====== reading: a flat JSON object per line */

/* One parsed member value. */
typedef struct jvalue {
  int is_str;
  double num;
  char str[256];
} jvalue;

typedef struct jparser {
  const char *p;
  const char *why;      /* first error, NULL while fine */
} jparser;

static void skip_ws(jparser *j) {
  while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n')
    ++j->p;
}

/* Appends code point c as UTF-8 while it fits. */
static void put_utf8(char *out, size_t *n, size_t cap, unsigned c) {
  char b[4];
  int len;
  if (c < 0x80) { b[0] = (char)c; len = 1; }
  else if (c < 0x800) {
    b[0] = (char)(0xC0 | (c >> 6)); b[1] = (char)(0x80 | (c & 0x3F)); len = 2;
  } else if (c < 0x10000) {
    b[0] = (char)(0xE0 | (c >> 12)); b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    b[2] = (char)(0x80 | (c & 0x3F)); len = 3;
  } else {
    b[0] = (char)(0xF0 | (c >> 18)); b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3F)); b[3] = (char)(0x80 | (c & 0x3F));
    len = 4;
  }
  if (*n + (size_t)len < cap) {
    memcpy(out + *n, b, (size_t)len);
    *n += (size_t)len;
  }
}

/* Four hex digits at p; -1 when they are not. */
static long hex4(const char *p) {
  long v = 0;
  for (int i = 0; i < 4; ++i) {
    int c = p[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return -1;
    v = v * 16 + d;
  }
  return v;
}

/* A string literal at j->p (on its opening quote); truncated to cap - 1. */
static int parse_string(jparser *j, char *out, size_t cap) {
  size_t n = 0;
  if (*j->p != '"') return j->why = "string expected", 0;
  ++j->p;
  for (;;) {
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') break;
    if (c < 0x20) return j->why = "unterminated string", 0;
    if (c != '\\') {
      if (n + 1 < cap) out[n++] = (char)c;
      continue;
    }
    c = (unsigned char)*j->p++;
    switch (c) {
    case '"': case '\\': case '/': if (n + 1 < cap) out[n++] = (char)c; break;
    case 'b': if (n + 1 < cap) out[n++] = '\b'; break;
    case 'f': if (n + 1 < cap) out[n++] = '\f'; break;
    case 'n': if (n + 1 < cap) out[n++] = '\n'; break;
    case 'r': if (n + 1 < cap) out[n++] = '\r'; break;
    case 't': if (n + 1 < cap) out[n++] = '\t'; break;
    case 'u': {
      long cp = hex4(j->p);
      if (cp < 0) return j->why = "bad \\u escape", 0;
      j->p += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && j->p[0] == '\\' && j->p[1] == 'u') {
        long lo = hex4(j->p + 2);
        if (lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          j->p += 6;
        }
      }
      put_utf8(out, &n, cap, (unsigned)cp);
      break;
    }
    default: return j->why = "bad escape in string", 0;
    }
  }
  out[n] = '\0';
  return 1;
}

/* A JSON number (strict grammar) or true/false/null (as 1/0/NAN). */
static int parse_scalar(jparser *j, double *v) {
  const char *s = j->p;
  char *end;
  if (strncmp(s, "true", 4) == 0) { *v = 1; j->p += 4; return 1; }
  if (strncmp(s, "false", 5) == 0) { *v = 0; j->p += 5; return 1; }
  if (strncmp(s, "null", 4) == 0) { *v = NAN; j->p += 4; return 1; }
  if (*s == '-') ++s;
  if (!(*s >= '0' && *s <= '9')) return j->why = "value expected", 0;
  *v = strtod(j->p, &end);
  if (end == j->p) return j->why = "bad number", 0;
  j->p = end;
  return 1;
}

/* Calls fn(key, value, arg) for every member of the object on line;
   nested objects and arrays are refused. Returns 0 with j->why set. */
static int parse_line(jparser *j, const char *line,
                      void (*fn)(const char *, const jvalue *, void *),
                      void *arg) {
  char key[64];
  jvalue v;
  j->p = line;
  j->why = NULL;
  skip_ws(j);
  if (*j->p != '{') return j->why = "a JSON object expected", 0;
  ++j->p;
  skip_ws(j);
  if (*j->p == '}') ++j->p;
  else
    for (;;) {
      skip_ws(j);
      if (!parse_string(j, key, sizeof key)) return 0;
      skip_ws(j);
      if (*j->p++ != ':') return j->why = "':' expected", 0;
      skip_ws(j);
      memset(&v, 0, sizeof v);
      if (*j->p == '"') {
        v.is_str = 1;
        if (!parse_string(j, v.str, sizeof v.str)) return 0;
      } else if (!parse_scalar(j, &v.num)) {
        return 0;
      }
      fn(key, &v, arg);
      skip_ws(j);
      if (*j->p == ',') { ++j->p; continue; }
      if (*j->p == '}') { ++j->p; break; }
      return j->why = "',' or '}' expected", 0;
    }
  skip_ws(j);
  if (*j->p) return j->why = "text after the object", 0;
  return 1;
}

/* What one line holds while it is read. */
typedef struct line_rec {
  char kind[24];
  odb_event ev;
  odb_ui_info *info;
  double count;
} line_rec;

/* Numbers and strings of an event line or of the header; the strings
   through odb_ui_clean (they are shown on terminals). */
static void on_member(const char *key, const jvalue *v, void *arg) {
  line_rec *r = arg;
  odb_event *e = &r->ev;
  double x = v->is_str ? 0 : (isnan(v->num) ? 0 : v->num);
  if (strcmp(key, "kind") == 0 && v->is_str)
    snprintf(r->kind, sizeof r->kind, "%.23s", v->str);
  else if (strcmp(key, "seq") == 0) e->seq = (uint64_t)x;
  else if (strcmp(key, "wall") == 0) e->wall = x;
  else if (strcmp(key, "t") == 0) e->t = v->is_str ? 0 : v->num;
  else if (strcmp(key, "h") == 0) e->h = v->is_str ? 0 : v->num;
  else if (strcmp(key, "err") == 0) e->err = v->is_str ? 0 : v->num;
  else if (strcmp(key, "step") == 0) e->step = (long)x;
  else if (strcmp(key, "accepted") == 0) e->accepted = (long)x;
  else if (strcmp(key, "rejected") == 0) e->rejected = (long)x;
  else if (strcmp(key, "value") == 0) e->value = v->is_str ? 0 : v->num;
  else if (strcmp(key, "value2") == 0) e->value2 = v->is_str ? 0 : v->num;
  else if (strcmp(key, "count") == 0) r->count = x;
  else if (strcmp(key, "of_rank") == 0) e->step = (long)x;
  else if (strcmp(key, "ranks") == 0) e->accepted = (long)x;
  else if (strcmp(key, "steps_per_s") == 0) e->value = x;
  else if (strcmp(key, "wait_s") == 0) e->value2 = x;
  else if (strcmp(key, "name") == 0 && v->is_str)
    odb_ui_clean(e->name, sizeof e->name, v->str);
  else if (strcmp(key, "text") == 0 && v->is_str)
    odb_ui_clean(e->text, sizeof e->text, v->str);
  else if (strcmp(key, "level") == 0 && v->is_str) {
    for (int k = 0; k < 4; ++k)
      if (strcmp(v->str, level_names[k]) == 0) e->level = k;
  } else if (r->info && v->is_str && strcmp(key, "scenario") == 0)
    odb_ui_clean(r->info->scenario, sizeof r->info->scenario, v->str);
  else if (r->info && v->is_str && strcmp(key, "machine") == 0)
    odb_ui_clean(r->info->machine, sizeof r->info->machine, v->str);
  else if (r->info && v->is_str && strcmp(key, "gpu") == 0)
    odb_ui_clean(r->info->gpu, sizeof r->info->gpu, v->str);
  else if (r->info && strcmp(key, "floor_read") == 0) r->info->floor_read = x;
  else if (r->info && strcmp(key, "floor_copy") == 0) r->info->floor_copy = x;
}

/* The kind named s; -1 for "dropped" and unknown kinds (skipped). */
static int kind_of(const char *s) {
  for (int k = 0; k < NKINDS; ++k)
    if (strcmp(s, kind_names[k]) == 0) return k;
  return -1;
}

/* Appends e to the growing array. */
static int append(odb_event **evs, int *n, int *cap, const odb_event *e) {
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 1024;
    odb_event *g = realloc(*evs, (size_t)nc * sizeof *g);
    if (!g) return 0;
    *evs = g;
    *cap = nc;
  }
  (*evs)[(*n)++] = *e;
  return 1;
}

/* Reads one line of any length into *buf (grown); 0 at end of file. */
static int read_line(FILE *f, char **buf, size_t *cap) {
  return getline(buf, cap, f) > 0;
}

odb_status odb_ui_events_read(const char *path, odb_ui_info *info,
                              odb_event **evs, int *n) {
  FILE *f;
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, count = 0, capev = 0, header = 0;
  odb_event *list = NULL;
  odb_status st = ODB_OK;
  jparser j;
  *evs = NULL;
  *n = 0;
  memset(info, 0, sizeof *info);
  f = fopen(path, "r");
  if (!f) return ODB_FAIL(ODB_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
  while (read_line(f, &line, &cap)) {
    line_rec r;
    int kind;
    ++lineno;
    if (line[strspn(line, " \t\r\n")] == '\0') continue;
    memset(&r, 0, sizeof r);
    r.info = header ? NULL : info;
    if (!parse_line(&j, line, on_member, &r)) {
      st = ODB_FAIL(ODB_ERR_ARG, "%s:%d: not valid JSON (%s)", path, lineno,
                    j.why);
      break;
    }
    if (!header) {
      if (strcmp(r.kind, "run") != 0) {
        st = ODB_FAIL(ODB_ERR_ARG, "%s:%d: not an odebench events file (the "
                      "first line is not a \"run\" header)", path, lineno);
        break;
      }
      header = 1;
      continue;
    }
    if (!r.kind[0]) {
      st = ODB_FAIL(ODB_ERR_ARG, "%s:%d: event without a \"kind\"", path,
                    lineno);
      break;
    }
    kind = kind_of(r.kind);
    if (kind < 0) continue;
    r.ev.kind = kind;
    if (!append(&list, &count, &capev, &r.ev)) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "%s: out of memory", path);
      break;
    }
  }
  if (st == ODB_OK && ferror(f))
    st = ODB_FAIL(ODB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  if (st == ODB_OK && !header)
    st = ODB_FAIL(ODB_ERR_ARG, "%s is empty (not an odebench events file)",
                  path);
  fclose(f);
  free(line);
  if (st != ODB_OK) {
    free(list);
    return st;
  }
  *evs = list;
  *n = count;
  return ODB_OK;
}

/* }====== */
