/* fuzz_readers.c - mutation fuzzing of every file odebench reads back:
   events.jsonl, results.csv (odebench plot), the bandwidth cache, the
   tuning database (SQLite), and the user's own data: Matrix Market files
   (ob.matrix) and NumPy .npy files (ob.load). Self-contained: gcc and the
   sanitizers, no libFuzzer.

     fuzz_readers [--seed S] [--seconds T] [--iterations N] [--target NAME]
                  [--replay I] [--keep]

   Each iteration takes a valid file of one reader (generated here, so the
   corpus follows the writers), applies 1 to 4 mutations drawn from a
   generator seeded by (S, iteration), writes the mutant to a temporary file
   and feeds it to the real reader API. A sanitizer report or a status
   other than OK or a clean error (with a message) aborts; the line before
   the report says how to replay that one iteration. The seed defaults to
   $ODEBENCH_FUZZ_SEED, else the clock, the time budget to
   $ODEBENCH_FUZZ_SECONDS, else 10 s; the seed is printed at start and end
   as "seed=S iterations=N". */
#include "odebench.h"
#include "odb_mtx.h"
#include "odb_npy.h"
#include "odb_sparse_file.h"
#include "odb_plot.h"
#include "odb_plot_int.h"
#include "odb_ui_events.h"
#include "odb_ui_model.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

/* The sanitizer runtime calls this before it exits (weak: none without). */
extern void __sanitizer_set_death_callback(void (*cb)(void))
  __attribute__((weak));

/* {====== generator and buffers */

typedef struct rng { uint64_t s; } rng;

static uint64_t next(rng *r) {               /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 when n is 0. */
static size_t below(rng *r, size_t n) { return n ? (size_t)(next(r) % n) : 0; }

typedef struct buf { unsigned char *p; size_t n, cap; } buf;

static void need(buf *b, size_t n) {
  if (n <= b->cap) return;
  b->cap = n * 2 + 64;
  b->p = realloc(b->p, b->cap);
  if (!b->p) {
    fprintf(stderr, "fuzz_readers: out of memory\n");
    exit(1);
  }
}

static void set(buf *b, const void *p, size_t n) {
  need(b, n + 1);
  memcpy(b->p, p, n);
  b->n = n;
}

static void insert(buf *b, size_t at, const void *p, size_t n) {
  need(b, b->n + n + 1);
  memmove(b->p + at + n, b->p + at, b->n - at);
  memcpy(b->p + at, p, n);
  b->n += n;
}

static void erase(buf *b, size_t at, size_t n) {
  if (at >= b->n) return;
  if (n > b->n - at) n = b->n - at;
  memmove(b->p + at, b->p + at + n, b->n - at - n);
  b->n -= n;
}

static int slurp(const char *path, buf *b) {
  FILE *f = fopen(path, "rb");
  unsigned char chunk[65536];
  size_t got;
  b->n = 0;
  if (!f) return 0;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    need(b, b->n + got + 1);
    memcpy(b->p + b->n, chunk, got);
    b->n += got;
  }
  fclose(f);
  return 1;
}

static void spit(const char *path, const buf *b) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f) != 0) {
    fprintf(stderr, "fuzz_readers: cannot write %s: %s\n", path,
            strerror(errno));
    exit(1);
  }
}

/* }====== */

/* {====== mutations */

static const char *const tokens[] = {
  "nan", "-nan", "inf", "-inf", "infinity", "1e308", "1e309", "-1e309",
  "4.9e-324", "0", "-0", "-1", "2.5", "0x1p1023", "2147483647", "2147483648",
  "-2147483649", "4294967297", "9007199254740993", "4611686018427387904",
  "9223372036854775807", "9223372036854775808", "-9223372036854775809",
  "18446744073709551616", "1" "000000000000000000000000000000000000000000",
  "\"", "\"\"", "\\", "\\\"", "\\u0000", "\\ud800", "\\udfff\\ud800", "\\u12",
  "\\u", "\\x", "\\n", "'", "''", ",", ",,", "\n", "\r\n", "\r", "\t", "#",
  "# ", "{", "}", "[", "]", ":", "null", "true", "false", "\x1b[2J",
  "\x1b]0;title\x07", "\xc2\x9b", "\xff\xfe", "\xf4\x90\x80\x80", "\x7f",
  "=", "plots.", "plots.p.", "plots.p.kind=heatmap", "plots.p.x=",
  "where.", "group=", ".", "..", "%s%n%d",
};

/* One random byte value with the ones readers care about favoured. */
static unsigned char some_byte(rng *r) {
  static const unsigned char special[] = {
    0, 0xff, 0x7f, 0x80, 0x9b, '\n', '\r', '"', '\\', ',', '#', '{', '}',
    ':', '=', '.', '-', '+', 'e', '0', '9', 0x1b, ' ', '\t'
  };
  return below(r, 2) ? special[below(r, sizeof special)]
                     : (unsigned char)next(r);
}

/* Where a number starts near a random place, or -1. */
static long number_at(rng *r, const buf *b) {
  size_t start = below(r, b->n);
  for (size_t k = 0; k < b->n; ++k) {
    size_t i = (start + k) % b->n;
    if ((b->p[i] >= '0' && b->p[i] <= '9') &&
        (i == 0 || !(b->p[i - 1] >= '0' && b->p[i - 1] <= '9')))
      return (long)i;
  }
  return -1;
}

/* Applies one mutation; other is a second seed for splices. */
static void mutate_once(rng *r, buf *b, const buf *other) {
  size_t at = b->n ? below(r, b->n) : 0, len;
  switch (below(r, 12)) {
  case 0:                                    /* bit flips */
    for (int k = 1 + (int)below(r, 4); k > 0 && b->n; --k)
      b->p[below(r, b->n)] ^= (unsigned char)(1u << below(r, 8));
    break;
  case 1:                                    /* an interesting byte */
    if (b->n) b->p[at] = some_byte(r);
    break;
  case 2: {                                  /* insert bytes */
    unsigned char tmp[16];
    len = 1 + below(r, sizeof tmp);
    for (size_t k = 0; k < len; ++k) tmp[k] = some_byte(r);
    insert(b, at, tmp, len);
    break;
  }
  case 3:                                    /* delete a range */
    erase(b, at, 1 + below(r, 1 + (below(r, 4) ? 8 : b->n / 2)));
    break;
  case 4: {                                  /* duplicate a range */
    buf tmp = {0};
    len = 1 + below(r, 1 + (b->n - at < 256 ? b->n - at : 256));
    if (!b->n) break;
    set(&tmp, b->p + at, len > b->n - at ? b->n - at : len);
    insert(b, below(r, b->n + 1), tmp.p, tmp.n);
    free(tmp.p);
    break;
  }
  case 5: {                                  /* splice with another seed */
    size_t from = other->n ? below(r, other->n) : 0;
    b->n = at;
    insert(b, b->n, other->p + from, other->n - from);
    break;
  }
  case 6:                                    /* truncate */
    b->n = at;
    break;
  case 7:
  case 8: {                                  /* a token */
    const char *t = tokens[below(r, sizeof tokens / sizeof tokens[0])];
    insert(b, below(r, b->n + 1), t, strlen(t));
    break;
  }
  case 9: {                                  /* a number replaced */
    long i = number_at(r, b);
    const char *t = tokens[below(r, 25)];    /* the numeric tokens */
    size_t e;
    if (i < 0) break;
    for (e = (size_t)i; e < b->n && strchr("0123456789.eE+-", b->p[e]); ++e) {}
    erase(b, (size_t)i, e - (size_t)i);
    insert(b, (size_t)i, t, strlen(t));
    break;
  }
  case 10: {                                 /* a long run of one byte */
    static unsigned char run[70000];
    unsigned char c = below(r, 2) ? 'a' : some_byte(r);
    len = below(r, 2) ? 64 + below(r, 1024) : below(r, sizeof run);
    memset(run, c, len);
    insert(b, below(r, b->n + 1), run, len);
    break;
  }
  default: {                                 /* grown to a buffer size */
    static const size_t sizes[] = {4095, 4096, 4097, 16383, 16384, 16385,
                                   65535, 65536, 65537};
    size_t want = sizes[below(r, sizeof sizes / sizeof sizes[0])];
    if (!b->n) break;
    need(b, want + 1);
    for (size_t k = b->n; k < want; ++k) b->p[k] = b->p[k % b->n];
    b->n = want;
    break;
  }
  }
}

static void mutate(rng *r, buf *b, const buf *other) {
  for (int k = 1 + (int)below(r, 4); k > 0; --k) mutate_once(r, b, other);
}

/* }====== */

/* {====== checks */

static char where_text[512];   /* the replay line, ready for a crash */
static size_t where_len;
static const char *tmp_dir;     /* the mutant files of the iteration */
static const char *target_arg = "";  /* " --target NAME" when given */

static void print_where(void) {
  size_t n = where_len;
  where_len = 0;                 /* once, from the sanitizer or a signal */
  if (n && write(2, where_text, n) < 0) return;
}

static void on_signal(int sig) {
  print_where();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Aborts (a fuzzing failure) with the message and the replay line. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  fputs("fuzz_readers: FAIL: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

/* st must be OK or one of the clean errors in allowed (a bit per code),
   an error with a message. */
static void expect(const char *what, odb_status st, unsigned allowed) {
  if (st == ODB_OK) return;
  if (st < 0 || st >= ODB_STATUS_COUNT || !(allowed & (1u << st)))
    fail("%s returned %s: %s", what, odb_status_name(st), odb_last_error());
  if (!*odb_last_error())
    fail("%s returned %s without a message", what, odb_status_name(st));
  odb_clear_error();
}
#define BIT(code) (1u << (code))

static FILE *devnull;
static odb_ctx *log_ctx;       /* the tuning database's warnings go here */
static uint64_t log_cursor;

/* The warnings of the tuning database: file text shown escaped. */
static void check_warnings(void) {
  odb_event ev;
  while (odb_event_poll(log_ctx->events, &log_cursor, &ev, 1, NULL) == 1)
    for (const char *s = ev.text; *s; ++s)
      if ((unsigned char)*s < 0x20 || *s == 0x7f)
        fail("a warning with control character 0x%02x: %s", *s, ev.text);
}

/* }====== */

/* {====== seeds */

static buf seed_events[2], seed_csv[2], seed_bw[2], seed_db[2], seed_mtx[2],
           seed_npy[2];

static void seed_text(buf *b, const char *text) { set(b, text, strlen(text)); }

static void make_seeds(const char *dir) {
  char host[256] = "unknown", text[2048], path[1024];
  seed_text(&seed_events[0],
    "{\"kind\":\"run\",\"format\":1,\"scenario\":\"s.lua\",\"machine\":\"m\","
    "\"gpu\":\"\",\"floor_read\":1.2e10,\"floor_copy\":9.5e9}\n"
    "{\"kind\":\"log\",\"seq\":1,\"wall\":0.01,\"text\":\"hello \\\"x\\\" "
    "\\u00e9\\n\",\"level\":\"warn\"}\n"
    "{\"kind\":\"solve_begin\",\"seq\":2,\"wall\":0.02,\"name\":\"bruss2d\","
    "\"text\":\"rk4 n=64\",\"value\":1}\n"
    "{\"kind\":\"step\",\"seq\":3,\"wall\":0.03,\"t\":0.5,\"h\":0.01,"
    "\"err\":1e-7,\"step\":50,\"accepted\":50,\"rejected\":2}\n"
    "{\"kind\":\"solve_end\",\"seq\":4,\"wall\":0.04,\"t\":1,\"step\":100,"
    "\"value\":0.002,\"value2\":3.5}\n"
    "{\"kind\":\"metric\",\"seq\":5,\"wall\":0.05,\"name\":\"gbs\","
    "\"value\":12.5,\"text\":\"GB/s\"}\n"
    "{\"kind\":\"progress\",\"seq\":6,\"wall\":0.06,\"step\":1,"
    "\"accepted\":4,\"name\":\"sweep\"}\n"
    "{\"kind\":\"dropped\",\"count\":3}\n");
  seed_text(&seed_events[1],
    "{\"kind\":\"run\",\"format\":1,\"scenario\":\"t.lua\",\"machine\":\"m\"}\n"
    "{\"kind\":\"tune_eval\",\"seq\":1,\"wall\":0.1,\"name\":\"a=1 k=p\","
    "\"value\":0.001,\"value2\":0.02,\"step\":1,\"text\":\"ok\"}\n"
    "{\"kind\":\"tune_eval\",\"seq\":2,\"wall\":0.2,\"name\":\"a=2 k=q\","
    "\"value\":0.0005,\"value2\":0.01,\"step\":2,\"text\":\"ok\"}\n"
    "{\"kind\":\"tune_eval\",\"seq\":3,\"wall\":0.3,\"name\":\"a=1 k=q\","
    "\"value\":0.002,\"step\":3,\"text\":\"rejected: err\"}\n"
    "{\"kind\":\"tune_best\",\"seq\":4,\"wall\":0.4,\"name\":\"a=2 k=q\","
    "\"value\":0.0005,\"value2\":0.01,\"step\":2}\n");
  seed_text(&seed_csv[0],
    "# scenario.path=scenarios/x.lua\n"
    "# bandwidth.read_1t=12.5\n# bandwidth.peak_gflops_1t=8\n"
    "# note=line one\\nline two\n"
    "# plots.speed.kind=lines\n# plots.speed.x=n\n"
    "# plots.speed.y=time_per_step\n# plots.speed.group=method,variant\n"
    "# plots.speed.where.backend=cpu\n# plots.speed.logx=true\n"
    "# plots.speed.title=Speed \"quoted\"\n"
    "# plots.roof.kind=roofline\n# plots.roof.x=n\n"
    "# plots.heat.kind=heatmap\n# plots.heat.x=n\n# plots.heat.y=threads\n"
    "# plots.heat.z=time_per_step\n"
    "kind,problem,method,variant,backend,n,threads,status,time_per_step,"
    "gbs,gflops,note\n"
    "solve,bruss2d,rk4,plain,cpu,64,1,ok,1.5e-5,10.5,2.5,\"a,b\"\n"
    "solve,bruss2d,rk4,plain,cpu,128,1,ok,6.1e-5,10.1,2.4,\"say \"\"hi\"\"\"\n"
    "solve,bruss2d,rk4,omp,cpu,64,2,ok,8.0e-6,19.5,4.5,\n"
    "solve,bruss2d,rk4,omp,cpu,128,2,ok,3.2e-5,19.0,4.4,\n"
    "solve,bruss2d,dopri5,plain,cpu,64,1,failed,,,,\n"
    "metric,,,,,,,,,,,x\n");
  seed_text(&seed_csv[1],
    "# scenario.path=t.lua\n"
    "# plots.t.kind=heatmap\n# plots.t.rows=tune\n# plots.t.x=cfg.a\n"
    "# plots.t.y=cfg.k\n# plots.t.z=median\n"
    "kind,config,status,median,spread,eval,cfg.a,cfg.k\r\n"
    "tune_eval,a=1 k=p,ok,0.001,0.02,1,1,p\r\n"
    "tune_eval,a=2 k=q,ok,0.0005,0.01,2,2,q\r\n"
    "tune_eval,a=1 k=q,rejected,,,3,1,q\r\n"
    "tune_best,a=2 k=q,ok,0.0005,0.01,2,2,q\r\n");
  gethostname(host, sizeof host - 1);
  snprintf(text, sizeof text, "{\"version\": 5, \"host\": \"%s\", "
           "\"cpu_model\": \"unknown\", \"cores\": %ld, \"read_1t\": 1.2e10, "
           "\"copy_1t\": 9e9, \"read_all\": 4.5e10, \"copy_all\": 3e10, "
           "\"flops_1t\": 8e9, \"threads_all\": 4, \"array_bytes\": 1.6e8, "
           "\"measured_at\": \"2024-05-01T12:00:00Z\"}\n", host,
           sysconf(_SC_NPROCESSORS_ONLN));
  seed_text(&seed_bw[0], text);
  seed_text(&seed_bw[1], "{\"version\":5,\"host\":\"h\\u00e9\\\"\","
            "\"cpu_model\":\"x\",\"cores\":1,\"read_1t\":1,\"copy_1t\":1,"
            "\"read_all\":1,\"copy_all\":1}");
  /* two tuning databases written by odb_tunedb itself */
  for (int k = 0; k < 2; ++k) {
    odb_tunedb *db = NULL;
    odb_machine_id mid;
    odb_tune_key key = {"bruss2d", "n=64", "rk4", "plain", "steps=10",
                        "abc"};
    long long id = 0;
    snprintf(path, sizeof path, "%s/seed%d.db", dir, k);
    memset(&mid, 0, sizeof mid);
    snprintf(mid.hash, sizeof mid.hash, "0123456789abcdef");
    snprintf(mid.desc, sizeof mid.desc, "cpu=x; cores=4");
    if (odb_tunedb_open(path, 0, &db) != ODB_OK) fail("seed database: %s",
                                                      odb_last_error());
    for (int t = 0; t < 1 + k; ++t) {
      key.size = t ? "n=128" : "n=64";
      odb_tunedb_target(db, &mid, &key, t ? "0.0.0-old" : odb_version(), 1,
                        &id);
      for (int i = 0; i < 6; ++i) {
        odb_tune_eval ev;
        char cfg[32];
        memset(&ev, 0, sizeof ev);
        ev.status = i == 4 ? ODB_TUNE_REJECTED : i == 5 ? ODB_TUNE_FAILED
                                                        : ODB_TUNE_OK;
        ev.m.median = 1e-3 * (1 + i);
        ev.m.spread = 0.01;
        ev.m.p25 = ev.m.min = 0.9e-3 * (1 + i);
        ev.m.p75 = ev.m.max = 1.1e-3 * (1 + i);
        ev.m.reps = 5;
        ev.err = i == 4 ? 0.5 : 1e-15;
        ev.tol = 1e-12;
        ev.seconds = 0.01;
        ev.at = 1700000000 + i;
        snprintf(ev.msg, sizeof ev.msg, i >= 4 ? "it went wrong" : "");
        snprintf(cfg, sizeof cfg, "a=%d k=%c", i, "pq"[k]);
        odb_tunedb_put(db, id, cfg, &ev);
      }
    }
    odb_tunedb_close(db);
    if (!slurp(path, &seed_db[k])) fail("cannot read %s", path);
  }
  /* Matrix Market: GH written by odb_sparse_write_mtx, and a symmetric
     file with comments; .npy: a Fortran-order float64 matrix and a
     complex128 vector written by odb_npy_write */
  {
    odb_reservoir *g = NULL;
    odb_sparse *A = NULL;
    double v[12];
    odb_npy a = {ODB_NPY_F8, 2, {3, 4}, 1, 12, v, 1};
    for (int i = 0; i < 12; ++i) v[i] = i * 0.75 - 2;
    if (odb_reservoir_create(&g, 2, 2, 2, 2, 1, ODB_GH_HALF, 3) != ODB_OK ||
        odb_reservoir_matrix(g, ODB_FMT_CSR, 0, &A) != ODB_OK)
      fail("seed matrix: %s", odb_last_error());
    snprintf(path, sizeof path, "%s/seed0.mtx", dir);
    if (odb_sparse_write_mtx(A, path) != ODB_OK || !slurp(path, &seed_mtx[0]))
      fail("seed matrix file: %s", odb_last_error());
    odb_sparse_free(A);
    odb_reservoir_free(g);
    seed_text(&seed_mtx[1], "%%MatrixMarket matrix coordinate real symmetric\n"
              "% comment\n4 4 6\n1 1 2.5\n2 1 -1\n3 2 1e-3\n3 3 4\n"
              "4 1 0.5\n4 4 1\n");
    snprintf(path, sizeof path, "%s/seed0.npy", dir);
    if (odb_npy_write(path, &a) != ODB_OK || !slurp(path, &seed_npy[0]))
      fail("seed npy: %s", odb_last_error());
    a.dtype = ODB_NPY_C16; a.ndim = 1; a.shape[0] = 6; a.shape[1] = 1;
    a.fortran = 0; a.count = 6;
    snprintf(path, sizeof path, "%s/seed1.npy", dir);
    if (odb_npy_write(path, &a) != ODB_OK || !slurp(path, &seed_npy[1]))
      fail("seed npy: %s", odb_last_error());
  }
}

/* }====== */

/* {====== the readers */

/* events.jsonl: read, then folded into the dashboard's model (replay). */
static void run_events(const char *path) {
  odb_ui_info info;
  odb_event *evs = NULL;
  odb_ui_model m;
  int n = 0;
  odb_status st = odb_ui_events_read(path, &info, &evs, &n);
  expect("odb_ui_events_read", st, BIT(ODB_ERR_ARG) | BIT(ODB_ERR_IO) |
         BIT(ODB_ERR_NOMEM));
  if (st != ODB_OK) return;
  if (n < 0 || (n > 0 && !evs)) fail("events: %d events at %p", n,
                                     (void *)evs);
  odb_ui_model_init(&m, &info);
  for (int i = 0; i < n; ++i) odb_ui_model_apply(&m, &evs[i]);
  odb_ui_model_free(&m);
  free(evs);
}

/* results.csv as odebench plot reads it, the scenario's plots included. */
static void run_csv(const char *path, const char *outdir) {
  odb_csv c;
  odb_plot_named *named = NULL;
  double sum = 0;
  if (!odb_csv_read(path, &c)) {
    odb_csv_free(&c);
    return;
  }
  for (int r = 0; r < c.nrows; ++r)
    for (int k = -1; k < c.ncols; ++k) {
      sum += strlen(odb_csv_cell(&c, r, k));
      if (k >= 0) (void)odb_csv_num(&c, r, k);
    }
  (void)odb_csv_ctx(&c, "bandwidth.read_1t");
  (void)odb_csv_col(&c, "time_per_step");
  expect("odb_plot_named_load", odb_plot_named_load(&c, devnull, &named),
         BIT(ODB_ERR_NOMEM));
  if (named) {
    for (int i = 0; i < odb_plot_named_count(named); ++i)
      sum += strlen(odb_plot_named_name(named, i));
    (void)odb_plot_named_write(named, outdir, devnull, 12.5, 8, "s.lua");
    odb_plot_named_free(named);
  }
  odb_csv_free(&c);
  (void)sum;
}

/* The whole of odebench plot over a run directory (gnuplot is kept off
   PATH: everything but the drawing runs). */
static void run_plot(const char *rundir, const char *outdir) {
  odb_plot_opts o;
  memset(&o, 0, sizeof o);
  o.run_dir = rundir;
  o.out_dir = outdir;
  o.log = devnull;
  o.warn = devnull;
  expect("odb_plot_run", odb_plot_run(&o), BIT(ODB_ERR_ARG) |
         BIT(ODB_ERR_IO) | BIT(ODB_ERR_NOMEM) | BIT(ODB_ERR_UNSUPPORTED));
}

/* The bandwidth cache ($XDG_CACHE_HOME/odebench/bandwidth.json). */
static void run_bandwidth(void) {
  odb_bandwidth bw;
  odb_status st = odb_bandwidth_cached(NULL, &bw);
  expect("odb_bandwidth_cached", st, BIT(ODB_ERR_IO));
  if (st == ODB_OK &&
      !(bw.read_1t > 0 && bw.copy_1t > 0 && bw.read_all > 0 &&
        bw.copy_all > 0 && isfinite(bw.read_1t) && isfinite(bw.copy_1t) &&
        isfinite(bw.read_all) && isfinite(bw.copy_all)))
    fail("bandwidth cache accepted with read_1t=%g copy_1t=%g read_all=%g "
         "copy_all=%g", bw.read_1t, bw.copy_1t, bw.read_all, bw.copy_all);
}

/* What odb_tunedb_each hands out must be what odb_tunedb_put writes. */
static int check_eval(void *ud, const char *config, const odb_tune_eval *ev) {
  const odb_measurement *m = &ev->m;
  (void)ud;
  if (!config || !*config) fail("tunedb: an evaluation without a config");
  for (const char *s = ev->msg; *s; ++s)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      fail("tunedb: a message with control character 0x%02x", *s);
  if (ev->status != ODB_TUNE_OK && ev->status != ODB_TUNE_REJECTED &&
      ev->status != ODB_TUNE_FAILED)
    fail("tunedb: status %d", ev->status);
  if (ev->status == ODB_TUNE_OK &&
      !(isfinite(m->median) && m->median > 0 && isfinite(m->spread) &&
        m->spread >= 0 && m->reps >= 1 && isfinite(m->min) &&
        isfinite(m->max) && isfinite(m->p25) && isfinite(m->p75)))
    fail("tunedb: '%s' trusted with median %g spread %g reps %d", config,
         m->median, m->spread, m->reps);
  return 0;
}

/* Every reader of the tuning database, read-only then as the tuner opens
   it (read-write: find or add the target, load, store one evaluation). */
static void run_tunedb(const char *path, rng *r) {
  static const long long ids[] = {1, 2, 3, 0, -1, 9223372036854775807LL};
  const unsigned io = BIT(ODB_ERR_IO) | BIT(ODB_ERR_NOMEM);
  odb_tunedb *db = NULL;
  odb_status st = odb_tunedb_open(path, ODB_TUNEDB_READONLY, &db);
  long n = 0;
  expect("odb_tunedb_open(read-only)", st, io);
  if (db) {
    odb_tunedb_set_log(db, log_ctx);
    expect("odb_tunedb_list", odb_tunedb_list(db, "0123456789abcdef",
                                              devnull), io);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; ++i) {
      expect("odb_tunedb_show", odb_tunedb_show(db, ids[i], devnull),
             io | BIT(ODB_ERR_ARG));
      expect("odb_tunedb_each", odb_tunedb_each(db, ids[i], check_eval,
                                                NULL), io);
    }
    expect("odb_tunedb_export", odb_tunedb_export(db, 0, (int)below(r, 2),
                                                  devnull), io);
    expect("odb_tunedb_count", odb_tunedb_count(db, 0, &n), io);
    odb_tunedb_close(db);
    db = NULL;
  }
  st = odb_tunedb_open(path, 0, &db);
  expect("odb_tunedb_open", st, io);
  if (db) {
    odb_machine_id mid;
    odb_tune_key key = {"bruss2d", "n=64", "rk4", "plain", "steps=10",
                        "abc"};
    odb_tune_eval ev;
    long long id = 0;
    odb_tunedb_set_log(db, log_ctx);
    memset(&mid, 0, sizeof mid);
    snprintf(mid.hash, sizeof mid.hash, "0123456789abcdef");
    st = odb_tunedb_target(db, &mid, &key, odb_version(), 1, &id);
    expect("odb_tunedb_target", st, io);
    if (st == ODB_OK) {
      expect("odb_tunedb_each", odb_tunedb_each(db, id, check_eval, NULL),
             io);
      memset(&ev, 0, sizeof ev);
      ev.status = ODB_TUNE_OK;
      ev.m.median = ev.m.min = ev.m.max = ev.m.p25 = ev.m.p75 = 1e-3;
      ev.m.reps = 3;
      ev.err = ev.tol = NAN;
      expect("odb_tunedb_put", odb_tunedb_put(db, id, "a=9 k=z", &ev), io);
    }
    odb_tunedb_close(db);
  }
  check_warnings();
}

/* A value-level mutant: one cell of a valid database set to a planted
   value through SQL (the file stays a healthy database). */
static void plant_sql(rng *r, const char *path) {
  static const char *const cols[] = {
    "config", "status", "median", "spread", "p25", "p75", "min", "max",
    "reps", "err", "tol", "seconds", "message", "at", "target"
  };
  static const char *const tcols[] = {
    "problem", "size", "method", "family", "params", "machine",
    "machine_desc", "version", "code_hash", "created", "updated", "id"
  };
  static const char *const values[] = {
    "NULL", "-1", "0", "9e999", "-9e999", "0.0/0.0", "'fast'", "''",
    "x'00ff'", "2.5", "4294967297", "9223372036854775807", "-1e-300",
    "1e-300", "'ok'", "'rejected'", "'skipped'", "'a=1' || char(27) || "
    "'[2J'", "char(10) || char(13) || char(0)", "randomblob(300)",
    "zeroblob(100000)", "'k=' || hex(randomblob(500))", "'a=0 k=p'",
  };
  char sql[512];
  sqlite3 *h = NULL;
  int which = (int)below(r, 4);
  const char *v = values[below(r, sizeof values / sizeof values[0])];
  if (which == 0)
    snprintf(sql, sizeof sql, "UPDATE targets SET %s = %s WHERE id = %d;",
             tcols[below(r, sizeof tcols / sizeof tcols[0])], v,
             1 + (int)below(r, 2));
  else if (which == 1)
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO evals SELECT target, "
             "'a=' || %s, status, median, spread, p25, p75, min, max, reps, "
             "err, tol, seconds, message, at FROM evals LIMIT 1;", v);
  else
    snprintf(sql, sizeof sql, "UPDATE OR IGNORE evals SET %s = %s WHERE "
             "rowid = %d;", cols[below(r, sizeof cols / sizeof cols[0])], v,
             1 + (int)below(r, 8));
  if (sqlite3_open(path, &h) == SQLITE_OK) {
    sqlite3_exec(h, "PRAGMA ignore_check_constraints = 1;", NULL, NULL,
                 NULL);
    sqlite3_exec(h, sql, NULL, NULL, NULL);
  }
  sqlite3_close(h);
}

/* A message must show file text escaped: no control character. */
static void check_message(const char *what) {
  for (const char *s = odb_last_error(); *s; ++s)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      fail("%s: a message with control character 0x%02x: %s", what, *s,
           odb_last_error());
}

/* Arrays the fuzzed readers may allocate (a mutated size line asks for
   any size; the readers refuse more than this before allocating). */
#define FUZZ_MAX_BYTES (64.0 * 1024 * 1024)

/* A Matrix Market file: read raw, then as a sparse matrix converted to
   every format that applies, SpMV'd, and written back. */
static void run_mtx(const char *path, const char *out) {
  odb_mtx m;
  odb_mtx_opts o = {1, NULL, NULL, FUZZ_MAX_BYTES};
  odb_sparse *A = NULL;
  unsigned ok = BIT(ODB_ERR_IO) | BIT(ODB_ERR_NOMEM) | BIT(ODB_ERR_ARG);
  odb_status st = odb_mtx_read(path, &o, &m);
  if (st != ODB_OK) check_message("odb_mtx_read");
  expect("odb_mtx_read", st, ok);
  if (st == ODB_OK) odb_mtx_free(&m);
  st = odb_sparse_read_mtx(path, &o, &A);
  if (st != ODB_OK) check_message("odb_sparse_read_mtx");
  expect("odb_sparse_read_mtx", st, ok);
  if (st != ODB_OK) return;
  double *x = calloc((size_t)A->n, sizeof *x), *y = calloc((size_t)A->n, sizeof *y);
  if (!x || !y) fail("out of memory");
  for (long i = 0; i < A->n; ++i) x[i] = 1.0 / (double)(i + 1);
  for (int f = 1; f < ODB_FMT_COUNT; ++f) {
    odb_sparse *B = NULL;
    odb_sparse_conv c = {2, 0, (size_t)FUZZ_MAX_BYTES, NULL};
    st = odb_sparse_convert_to(A, (odb_sparse_format)f, &c, &B);
    expect("odb_sparse_convert_to", st, BIT(ODB_ERR_UNSUPPORTED) | BIT(ODB_ERR_NOMEM));
    if (st == ODB_OK) odb_sparse_spmv(B, x, y);
    odb_sparse_free(B);
  }
  odb_sparse_spmv(A, x, y);
  expect("odb_sparse_write_mtx", odb_sparse_write_mtx(A, out), BIT(ODB_ERR_ARG));
  free(x);
  free(y);
  odb_sparse_free(A);
}

/* A .npy file: read, written back, read again: the same array. */
static void run_npy(const char *path, const char *out) {
  odb_npy a, b;
  odb_status st = odb_npy_read(path, &a);
  if (st != ODB_OK) check_message("odb_npy_read");
  expect("odb_npy_read", st, BIT(ODB_ERR_IO) | BIT(ODB_ERR_NOMEM));
  if (st != ODB_OK) return;
  if (odb_npy_write(out, &a) != ODB_OK) fail("odb_npy_write: %s", odb_last_error());
  if (odb_npy_read(out, &b) != ODB_OK) fail("reading back: %s", odb_last_error());
  size_t n = a.count * (a.dtype == ODB_NPY_C16 ? 2 : 1) * sizeof(double);
  if (b.count != a.count || b.dtype != a.dtype || b.fortran != a.fortran ||
      b.shape[0] != a.shape[0] || b.shape[1] != a.shape[1] || memcmp(a.data, b.data, n))
    fail("a .npy file read back differs from the one written");
  odb_npy_free(&a);
  odb_npy_free(&b);
}

/* }====== */

/* {====== the loop */

enum { T_EVENTS, T_CSV, T_PLOT, T_BANDWIDTH, T_TUNEDB, T_MTX, T_NPY,
       NTARGETS };
static const char *const target_names[NTARGETS] = {
  "events", "csv", "plot", "bandwidth", "tunedb", "mtx", "npy"
};

typedef struct paths {
  char events[1024], csv[1024], rundir[1024], run_events[1024],
       run_csv[1024], plots[1024], bw[1024], db[1024], mtx[1024],
       npy[1024], out[1024];
} paths;

/* Removes the files SQLite keeps beside a database. */
static void remove_db(const char *path) {
  char side[1100];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-journal", path);
  unlink(side);
}

/* Iteration i of the run seeded by seed on target t. */
static void iterate(uint64_t seed, long i, int t, const paths *p) {
  rng r = {seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1))};
  static buf b;
  int k = (int)below(&r, 2);
  int n = snprintf(where_text, sizeof where_text, "fuzz_readers: failing "
                   "input: seed=%llu iteration=%ld target=%s (files in %s); "
                   "replay with: fuzz_readers --seed %llu --replay %ld%s "
                   "--keep\n", (unsigned long long)seed, i, target_names[t],
                   tmp_dir, (unsigned long long)seed, i, target_arg);
  where_len = n > 0 && (size_t)n < sizeof where_text ? (size_t)n : 0;
  switch (t) {
  case T_EVENTS:
    set(&b, seed_events[k].p, seed_events[k].n);
    mutate(&r, &b, &seed_events[!k]);
    spit(p->events, &b);
    run_events(p->events);
    break;
  case T_CSV:
    set(&b, seed_csv[k].p, seed_csv[k].n);
    mutate(&r, &b, &seed_csv[!k]);
    spit(p->csv, &b);
    run_csv(p->csv, p->plots);
    break;
  case T_PLOT: {
    int which = (int)below(&r, 3);   /* the csv, the events, or both */
    set(&b, seed_csv[k].p, seed_csv[k].n);
    if (which != 1) mutate(&r, &b, &seed_csv[!k]);
    spit(p->run_csv, &b);
    set(&b, seed_events[k].p, seed_events[k].n);
    if (which != 0) mutate(&r, &b, &seed_events[!k]);
    spit(p->run_events, &b);
    run_plot(p->rundir, p->plots);
    break;
  }
  case T_BANDWIDTH:
    set(&b, seed_bw[k].p, seed_bw[k].n);
    mutate(&r, &b, &seed_bw[!k]);
    spit(p->bw, &b);
    run_bandwidth();
    break;
  case T_MTX:
    set(&b, seed_mtx[k].p, seed_mtx[k].n);
    mutate(&r, &b, &seed_mtx[!k]);
    spit(p->mtx, &b);
    run_mtx(p->mtx, p->out);
    break;
  case T_NPY:
    set(&b, seed_npy[k].p, seed_npy[k].n);
    mutate(&r, &b, &seed_npy[!k]);
    spit(p->npy, &b);
    run_npy(p->npy, p->out);
    break;
  default:
    remove_db(p->db);
    set(&b, seed_db[k].p, seed_db[k].n);
    if (below(&r, 2)) {
      spit(p->db, &b);
      plant_sql(&r, p->db);
    } else {
      mutate(&r, &b, &seed_db[!k]);
      spit(p->db, &b);
    }
    run_tunedb(p->db, &r);
    break;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(void) {
  fprintf(stderr, "usage: fuzz_readers [--seed S] [--seconds T] "
          "[--iterations N] [--target events|csv|plot|bandwidth|tunedb|mtx|npy] "
          "[--replay I] [--keep]\n");
  exit(2);
}

/* An unsigned number of the command line, whole. */
static unsigned long long arg_num(const char *s) {
  char *end;
  unsigned long long v;
  errno = 0;
  v = strtoull(s ? s : "", &end, 10);
  if (!s || !*s || *end || errno || *s == '-') usage();
  return v;
}

int main(int argc, char **argv) {
  static char dir[] = "/tmp/odb-fuzz-XXXXXX";
  const char *env = getenv("ODEBENCH_FUZZ_SEED");
  uint64_t seed = env && *env ? arg_num(env) : (uint64_t)time(NULL);
  const char *env_s = getenv("ODEBENCH_FUZZ_SECONDS");
  double seconds = env_s && *env_s ? (double)arg_num(env_s) : 10, t0;
  long iterations = 0, replay = -1, i, counts[NTARGETS] = {0};
  int only = -1, keep = 0;
  char cmd[1200], empty[1100], cache[1100], targ[64];
  const char *path_env = getenv("PATH");
  char *old_path = strdup(path_env ? path_env : "/usr/bin:/bin");
  paths p;
  for (int a = 1; a < argc; ++a) {
    const char *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (strcmp(argv[a], "--seed") == 0) seed = arg_num(v), ++a;
    else if (strcmp(argv[a], "--seconds") == 0) seconds = (double)arg_num(v),
                                                ++a;
    else if (strcmp(argv[a], "--iterations") == 0)
      iterations = (long)arg_num(v), ++a;
    else if (strcmp(argv[a], "--replay") == 0) replay = (long)arg_num(v), ++a;
    else if (strcmp(argv[a], "--keep") == 0) keep = 1;
    else if (strcmp(argv[a], "--target") == 0 && v) {
      for (int t = 0; t < NTARGETS; ++t)
        if (strcmp(v, target_names[t]) == 0) only = t;
      if (only < 0) usage();
      snprintf(targ, sizeof targ, " --target %s", target_names[only]);
      target_arg = targ;
      ++a;
    } else {
      usage();
    }
  }
  if (!mkdtemp(dir)) {
    perror("fuzz_readers: mkdtemp");
    return 1;
  }
  tmp_dir = dir;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(print_where);
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGABRT, on_signal);
  devnull = fopen("/dev/null", "w");
  {
    odb_ctx_opts co;
    memset(&co, 0, sizeof co);
    co.log_level = ODB_LOG_WARN;
    if (odb_ctx_create(&co, &log_ctx) != ODB_OK) fail("no context: %s",
                                                      odb_last_error());
  }
  snprintf(p.events, sizeof p.events, "%s/events.jsonl", dir);
  snprintf(p.csv, sizeof p.csv, "%s/results.csv", dir);
  snprintf(p.rundir, sizeof p.rundir, "%s/run", dir);
  snprintf(p.run_events, sizeof p.run_events, "%s/run/events.jsonl", dir);
  snprintf(p.run_csv, sizeof p.run_csv, "%s/run/results.csv", dir);
  snprintf(p.plots, sizeof p.plots, "%s/plots", dir);
  snprintf(p.bw, sizeof p.bw, "%s/cache/odebench/bandwidth.json", dir);
  snprintf(p.db, sizeof p.db, "%s/tune.db", dir);
  snprintf(p.mtx, sizeof p.mtx, "%s/a.mtx", dir);
  snprintf(p.npy, sizeof p.npy, "%s/a.npy", dir);
  snprintf(p.out, sizeof p.out, "%s/out", dir);
  snprintf(empty, sizeof empty, "%s/bin", dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  mkdir(p.rundir, 0755);
  mkdir(p.plots, 0755);
  mkdir(empty, 0755);
  mkdir(cache, 0755);
  snprintf(cmd, sizeof cmd, "%s/odebench", cache);
  mkdir(cmd, 0755);
  setenv("XDG_CACHE_HOME", cache, 1);
  setenv("PATH", empty, 1);            /* no gnuplot: plots are not drawn */
  make_seeds(dir);
  printf("fuzz_readers: seed=%llu iterations=0 (budget %g s%s%s)\n",
         (unsigned long long)seed, seconds, only >= 0 ? ", target " : "",
         only >= 0 ? target_names[only] : "");
  t0 = now();
  for (i = replay >= 0 ? replay : 0;; ++i) {
    int t = only >= 0 ? only : (int)(i % NTARGETS);
    if (replay >= 0 && i > replay) break;
    if (replay < 0 && ((iterations && i >= iterations) ||
                       (!iterations && now() - t0 >= seconds)))
      break;
    iterate(seed, i, t, &p);
    counts[t]++;
  }
  where_len = 0;
  printf("fuzz_readers: seed=%llu iterations=%ld (", (unsigned long long)seed,
         replay >= 0 ? 1 : i);
  for (int t = 0; t < NTARGETS; ++t)
    printf("%s%s %ld", t ? ", " : "", target_names[t], counts[t]);
  printf(") in %.1f s: no failure\n", now() - t0);
  fclose(devnull);
  odb_ctx_destroy(log_ctx);
  for (int k = 0; k < 2; ++k) {
    free(seed_events[k].p);
    free(seed_csv[k].p);
    free(seed_bw[k].p);
    free(seed_db[k].p);
    free(seed_mtx[k].p);
    free(seed_npy[k].p);
  }
  setenv("PATH", old_path, 1);
  free(old_path);
  if (keep) {
    printf("fuzz_readers: the files are kept in %s\n", dir);
  } else {
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  return 0;
}

/* }====== */
