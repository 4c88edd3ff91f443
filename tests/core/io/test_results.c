/* test_results.c - the JSON writer, results files, output dirs, the floor. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb_bandwidth.h"
#include "odb_json.h"
#include "odb_results.h"
#include "tap.h"

/* Reads a whole file into a NUL-terminated buffer (NULL when absent). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
  }
  fclose(f);
  return buf;
}

/* Names in dir other than . and .., joined by spaces, sorted as read. */
static int list_dir(const char *dir, char *out, size_t cap) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  out[0] = '\0';
  if (!d) return -1;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    ++n;
    if (strlen(out) + strlen(e->d_name) + 2 < cap) {
      strcat(out, e->d_name);
      strcat(out, " ");
    }
  }
  closedir(d);
  return n;
}

/* 1 when braces and brackets balance outside string literals. */
static int balanced(const char *s) {
  int depth = 0, in_str = 0;
  for (; *s; ++s) {
    if (in_str) {
      if (*s == '\\' && s[1]) ++s;
      else if (*s == '"') in_str = 0;
      else if ((unsigned char)*s < 0x20) return 0;   /* raw control char */
    } else if (*s == '"') in_str = 1;
    else if (*s == '{' || *s == '[') ++depth;
    else if (*s == '}' || *s == ']') {
      if (--depth < 0) return 0;
    }
  }
  return depth == 0 && !in_str;
}

/* Writes a file with the given text; 1 on success. */
static int put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fputs(text, f);
  return fclose(f) == 0;
}

/* Removes dir and everything below it (rm -r). */
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[4096];
  if (!d) return;
  while ((e = readdir(d))) {
    struct stat sb;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) remove_tree(p);
    else unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

/* ---- the JSON writer ---- */

/* Writes a small document into memory and compares it exactly. */
static void test_json_writer(void) {
  char *buf = NULL, num[40];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  odb_json j;
  const char *expect =
    "{\n"
    "  \"s\": \"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9\",\n"
    "  \"x\": 0.1,\n"
    "  \"i\": -7,\n"
    "  \"nan\": null,\n"
    "  \"inf\": null,\n"
    "  \"e\": {},\n"
    "  \"a\": [\n"
    "    true,\n"
    "    null,\n"
    "    3,\n"
    "    []\n"
    "  ]\n"
    "}\n";
  odb_json_init(&j, f);
  odb_json_begin_object(&j, NULL);
  odb_json_string(&j, "s", "a\"b\\c\n\t\x01\xc3\xa9");
  odb_json_number(&j, "x", 0.1);
  odb_json_integer(&j, "i", -7);
  odb_json_number(&j, "nan", NAN);
  odb_json_number(&j, "inf", -INFINITY);
  odb_json_begin_object(&j, "e");
  odb_json_end_object(&j);
  odb_json_begin_array(&j, "a");
  odb_json_bool(&j, NULL, 1);
  odb_json_null(&j, NULL);
  odb_json_number(&j, NULL, 3.0);
  odb_json_begin_array(&j, NULL);
  odb_json_end_array(&j);
  odb_json_end_array(&j);
  odb_json_end_object(&j);
  fclose(f);
  if (!tap_ok(buf && strcmp(buf, expect) == 0,
              "JSON writer: indentation, escapes, null for non-finite"))
    tap_diag("got:\n%s", buf ? buf : "(null)");
  free(buf);

  {
    static const double v[] = { 0.1, 1.0 / 3, 2.0 / 3, 1e300, 5e-324,
                                -123456789.125, 0.30000000000000004,
                                9007199254740993.0, 1e21, 123.0 };
    int ok = 1;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
      odb_json_format_double(num, sizeof num, v[i]);
      if (strtod(num, NULL) != v[i]) ok = 0;
    }
    tap_ok(ok, "numbers round-trip exactly through text");
    odb_json_format_double(num, sizeof num, 0.1);
    tap_ok(!strcmp(num, "0.1"), "0.1 prints as 0.1 (got %s)", num);
    odb_json_format_double(num, sizeof num, 123.0);
    tap_ok(!strcmp(num, "123"), "123.0 prints as 123 (got %s)", num);
  }
}

/* ---- records ---- */

/* Setting a key twice replaces it, also across types. */
static void test_records(void) {
  odb_results r;
  odb_record *row;
  const odb_field *f;
  odb_results_init(&r);
  tap_ok(odb_record_set_int(&r.context, "seed", 1) == ODB_OK &&
         odb_record_set_int(&r.context, "seed", 2) == ODB_OK &&
         r.context.n == 1 && odb_record_get(&r.context, "seed")->num == 2,
         "setting a key again replaces the value");
  odb_record_set_str(&r.context, "seed", "x");
  f = odb_record_get(&r.context, "seed");
  tap_ok(f && f->str && !strcmp(f->str, "x") && r.context.n == 1,
         "a number can be replaced by a string");
  odb_record_set_num(&r.context, "seed", 2.5);
  f = odb_record_get(&r.context, "seed");
  tap_ok(f && !f->str && f->num == 2.5 && !f->is_int,
         "and a string by a number");
  tap_ok(odb_record_set_num(&r.context, "", 1) == ODB_ERR_ARG &&
         odb_record_set_str(&r.context, "k", NULL) == ODB_ERR_ARG,
         "empty key and NULL string are refused");
  tap_ok(odb_record_get(&r.context, "missing") == NULL, "missing key: NULL");
  for (int i = 0; i < 100; ++i) {
    row = odb_results_add_row(&r);
    if (!row || odb_record_set_int(row, "i", i) != ODB_OK) break;
  }
  tap_ok(r.nrows == 100 && r.rows[99].fields[0].num == 99,
         "100 rows added");
  odb_results_free(&r);
  tap_ok(r.nrows == 0 && r.rows == NULL, "free empties the results");
}

/* ---- results files ---- */

/* A python3 script that checks the files strictly (argv[1] = dir). */
static const char *py_check =
  "import csv, json, math, sys\n"
  "d = sys.argv[1]\n"
  "j = json.load(open(d + '/results.json', encoding='utf-8'))\n"
  "c = j['context']\n"
  "assert c['machine']['cpu']['model'] == "
  "'Xeon \"X\", rev 2\\nline2 \\u00b5 \\u2211 \\U0001F600', c\n"
  "assert c['machine']['cores'] == 2 and c['seed'] == 42\n"
  "assert c['git'] == {'revision': 'abc123', 'dirty': 0}\n"
  "assert c['pi'] == math.pi and c['third'] == 1/3 and c['bad'] is None\n"
  "assert c['a'] == 1 and c['a.b'] == 2\n"
  "rs = j['results']\n"
  "assert [r['name'] for r in rs] == ['r1', 'r, 2', 'q\"uote\\nnl']\n"
  "assert rs[0] == {'name': 'r1', 'n': 100, 'seconds': 0.5}\n"
  "assert rs[2]['err'] is None and rs[2]['extra'] == '#hash'\n"
  "lines = [l for l in open(d + '/results.csv', encoding='utf-8',"
  " newline='') if not l.startswith('#')]\n"
  "rows = list(csv.DictReader(lines))\n"
  "assert [r['name'] for r in rows] == ['r1', 'r, 2', 'q\"uote\\nnl'], rows\n"
  "assert rows[1]['gbs'] == '12.5' and rows[1]['seconds'] == ''\n"
  "assert rows[2]['err'] == 'inf' and rows[2]['extra'] == '#hash'\n";

/* Context with nested keys and an awkward string; three uneven rows. */
static void fill_results(odb_results *r) {
  odb_record *row;
  odb_record_set_str(&r->context, "machine.cpu.model",
                     "Xeon \"X\", rev 2\nline2 \xc2\xb5 \xe2\x88\x91 "
                     "\xf0\x9f\x98\x80");
  odb_record_set_int(&r->context, "seed", 42);
  odb_record_set_str(&r->context, "git.revision", "abc123");
  odb_record_set_int(&r->context, "machine.cores", 2);
  odb_record_set_int(&r->context, "git.dirty", 0);
  odb_record_set_num(&r->context, "pi", 3.141592653589793);
  odb_record_set_num(&r->context, "third", 1.0 / 3);
  odb_record_set_num(&r->context, "bad", NAN);
  odb_record_set_int(&r->context, "a", 1);
  odb_record_set_int(&r->context, "a.b", 2);
  row = odb_results_add_row(r);
  odb_record_set_str(row, "name", "r1");
  odb_record_set_int(row, "n", 100);
  odb_record_set_num(row, "seconds", 0.5);
  row = odb_results_add_row(r);
  odb_record_set_str(row, "name", "r, 2");
  odb_record_set_num(row, "gbs", 12.5);
  odb_record_set_int(row, "n", 200);
  row = odb_results_add_row(r);
  odb_record_set_str(row, "name", "q\"uote\nnl");
  odb_record_set_num(row, "err", INFINITY);
  odb_record_set_str(row, "extra", "#hash");
}

/* Writes the files and checks them loosely, exactly (CSV) and with python. */
static void test_write(const char *base) {
  odb_results r;
  char dir[512], path[600], names[1024];
  char *json, *csv;
  const char *csv_expect =
    "# machine.cpu.model=Xeon \"X\", rev 2\\nline2 \xc2\xb5 \xe2\x88\x91 "
    "\xf0\x9f\x98\x80\n"
    "# seed=42\n"
    "# git.revision=abc123\n"
    "# machine.cores=2\n"
    "# git.dirty=0\n"
    "# pi=3.141592653589793\n"
    "# third=0.3333333333333333\n"
    "# bad=nan\n"
    "# a=1\n"
    "# a.b=2\n"
    "name,n,seconds,gbs,err,extra\n"
    "r1,100,0.5,,,\n"
    "\"r, 2\",200,,12.5,,\n"
    "\"q\"\"uote\nnl\",,,,inf,\"#hash\"\n";
  odb_results_init(&r);
  fill_results(&r);
  odb_clear_error();
  snprintf(dir, sizeof dir, "%s/out/run1", base);
  tap_ok(odb_results_write(&r, dir) == ODB_OK,
         "results written into a new nested dir (%s)", odb_last_error());
  snprintf(path, sizeof path, "%s/results.json", dir);
  json = slurp(path);
  snprintf(path, sizeof path, "%s/results.csv", dir);
  csv = slurp(path);
  tap_ok(json && balanced(json), "results.json: braces balance");
  tap_ok(json && strstr(json, "{\n  \"context\": {\n    \"machine\": {\n"
                              "      \"cpu\": {\n        \"model\": "
                              "\"Xeon \\\"X\\\", rev 2\\nline2 \xc2\xb5"),
         "context keys nest by '.', string escaped, UTF-8 kept");
  tap_ok(json && strstr(json, "\"cores\": 2") && strstr(json, "\"seed\": 42")
         && strstr(json, "\"git\": {\n      \"revision\": \"abc123\",\n"
                         "      \"dirty\": 0\n    }"),
         "nested groups collect keys given apart");
  tap_ok(json && strstr(json, "\"bad\": null") &&
         strstr(json, "\"err\": null"), "non-finite numbers become null");
  tap_ok(json && strstr(json, "\"pi\": 3.141592653589793,") &&
         strstr(json, "\"a\": 1,\n    \"a.b\": 2\n"),
         "numbers exact; 'a' and 'a.b' both kept without duplicate keys");
  tap_ok(json && strstr(json, "\"results\": [\n    {\n      \"name\": \"r1\""),
         "results is an array of row objects");
  if (!tap_ok(csv && strcmp(csv, csv_expect) == 0,
              "results.csv: context comments, union header, quoting"))
    tap_diag("got:\n%s", csv ? csv : "(null)");
  free(json);
  free(csv);

  if (system("command -v python3 >/dev/null 2>&1") == 0) {
    char script[600], cmd[1400];
    snprintf(script, sizeof script, "%s/check.py", base);
    put_file(script, py_check);
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s'", script, dir);
    tap_ok(system(cmd) == 0, "python3 json/csv modules read the files back");
    unlink(script);
  } else {
    tap_ok(1, "python3 check # SKIP python3 not found");
  }

  tap_ok(list_dir(dir, names, sizeof names) == 2 &&
         strstr(names, "results.json ") && strstr(names, "results.csv "),
         "only results.json and results.csv in the dir (%s)", names);
  /* a second write replaces both files */
  odb_record_set_int(odb_results_add_row(&r), "n", 4);
  tap_ok(odb_results_write(&r, dir) == ODB_OK, "second write succeeds");
  snprintf(path, sizeof path, "%s/results.csv", dir);
  csv = slurp(path);
  tap_ok(csv && strstr(csv, "\n,4,,,,\n") &&
         list_dir(dir, names, sizeof names) == 2,
         "second write replaced the files, no temporary left");
  free(csv);
  odb_results_free(&r);
}

/* Failures: a file in the way, a name too long; nothing is left behind. */
static void test_failures(const char *base) {
  odb_results r;
  char file[512], dir[800], names[1024], before[1024], longname[400];
  odb_status st;
  odb_results_init(&r);
  fill_results(&r);
  snprintf(file, sizeof file, "%s/plainfile", base);
  put_file(file, "x");
  list_dir(base, before, sizeof before);

  snprintf(dir, sizeof dir, "%s/sub/deeper", file);
  st = odb_results_write(&r, dir);
  tap_ok(st == ODB_ERR_IO, "writing below a regular file fails (%s)",
         odb_status_name(st));
  tap_ok(strstr(odb_last_error(), dir) &&
         strstr(odb_last_error(), strerror(ENOTDIR)),
         "message names the path and the reason: %s", odb_last_error());
  list_dir(base, names, sizeof names);
  tap_ok(!strcmp(names, before), "nothing left behind");

  st = odb_check_writable_dir(dir);
  tap_ok(st == ODB_ERR_IO && strstr(odb_last_error(), "cannot create "
                                    "output directory '") &&
         strstr(odb_last_error(), "Not a directory"),
         "check_writable_dir fails: %s", odb_last_error());
  st = odb_check_writable_dir(file);
  tap_ok(st == ODB_ERR_IO, "check_writable_dir on a regular file fails");
  tap_ok(odb_mkdirs(file) == ODB_ERR_IO, "mkdirs on a regular file fails");

  /* new parent created, then the last component fails: parent removed */
  memset(longname, 'n', 300);
  longname[300] = '\0';
  snprintf(dir, sizeof dir, "%s/newparent/%s", base, longname);
  st = odb_results_write(&r, dir);
  list_dir(base, names, sizeof names);
  tap_ok(st == ODB_ERR_IO && !strcmp(names, before),
         "a failure after creating parents removes them (%s)",
         odb_last_error());
  st = odb_check_writable_dir(dir);
  list_dir(base, names, sizeof names);
  tap_ok(st == ODB_ERR_IO && !strcmp(names, before),
         "so does check_writable_dir");

  /* rename fails (a directory named results.json is in the way): both
     temporary files must go */
  snprintf(dir, sizeof dir, "%s/blocked/results.json/x", base);
  odb_mkdirs(dir);
  snprintf(dir, sizeof dir, "%s/blocked", base);
  st = odb_results_write(&r, dir);
  tap_ok(st == ODB_ERR_IO && strstr(odb_last_error(), "results.json"),
         "a failed rename is reported: %s", odb_last_error());
  tap_ok(list_dir(dir, names, sizeof names) == 1 &&
         !strcmp(names, "results.json "),
         "and no temporary file remains (%s)", names);

  snprintf(dir, sizeof dir, "%s/ok/a/b/", base);
  tap_ok(odb_check_writable_dir(dir) == ODB_OK,
         "check_writable_dir creates a writable nested dir");
  snprintf(dir, sizeof dir, "%s/ok/a/b", base);
  tap_ok(list_dir(dir, names, sizeof names) == 0, "and leaves no probe file");
  tap_ok(odb_mkdirs(dir) == ODB_OK, "mkdirs of an existing dir succeeds");
  tap_ok(odb_mkdirs("") == ODB_ERR_ARG, "mkdirs of \"\" is refused");
  unlink(file);
  odb_results_free(&r);
}

/* ---- the bandwidth floor (arithmetic only, nothing timed) ---- */

/* Known figures give known floors; degenerate ones never divide by 0. */
static void test_floor(void) {
  odb_bandwidth bw;
  double s;
  memset(&bw, 0, sizeof bw);
  bw.read_1t = 10e9;
  bw.copy_1t = 8e9;    /* a mix goes at the faster figure, the read */
  s = odb_bandwidth_floor_seconds(&bw, 1e9, 1e9);
  tap_ok(fabs(s - 0.2) < 1e-12, "floor: 1 GB read + 1 GB written at 10 GB/s "
         "= 0.2 s (got %.15g)", s);
  s = odb_bandwidth_floor_seconds(&bw, 2e9, 0);
  tap_ok(fabs(s - 0.2) < 1e-12, "floor: read only");
  bw.copy_1t = 25e9;   /* the copy figure the faster */
  s = odb_bandwidth_floor_seconds(&bw, 1e9, 1e9);
  tap_ok(fabs(s - 0.08) < 1e-12 && isfinite(s),
         "floor: a mix at the copy figure when it is the faster (got %g)", s);
  bw.copy_1t = 20e9;
  s = odb_bandwidth_floor_seconds(&bw, 1e9, 1e9);
  tap_ok(isfinite(s) && s > 0, "floor: no division by zero (got %g)", s);
  memset(&bw, 0, sizeof bw);
  tap_ok(odb_bandwidth_floor_seconds(&bw, 1e9, 1e9) == 0,
         "floor: unknown bandwidth gives 0");
}

int main(void) {
  char base[] = "/tmp/odb-test-results-XXXXXX";
  if (!mkdtemp(base)) {
    printf("Bail out! mkdtemp failed: %s\n", strerror(errno));
    return 1;
  }
  test_json_writer();
  test_records();
  test_write(base);
  test_failures(base);
  test_floor();
  remove_tree(base);
  return tap_done();
}
