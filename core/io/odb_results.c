/* odb_results.c - records of a run and their atomic results.json/.csv files. */
#include "odb_results.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb_json.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* {====================================================================
** Records
** ===================================================================== */

/* Accepts NULL; frees the strings a record owns and zeroes it. */
static void record_free(odb_record *rec) {
  if (!rec) return;
  for (int i = 0; i < rec->n; ++i) {
    free(rec->fields[i].key);
    free(rec->fields[i].str);
  }
  free(rec->fields);
  memset(rec, 0, sizeof *rec);
}

/* Assumes r points to writable storage; the result holds no memory yet. */
void odb_results_init(odb_results *r) {
  memset(r, 0, sizeof *r);
}

/* Accepts NULL; r may be reused after odb_results_init. */
void odb_results_free(odb_results *r) {
  if (!r) return;
  record_free(&r->context);
  for (int i = 0; i < r->nrows; ++i) record_free(&r->rows[i]);
  free(r->rows);
  memset(r, 0, sizeof *r);
}

/* Assumes rec and key are valid; NULL when the key is absent. */
const odb_field *odb_record_get(const odb_record *rec, const char *key) {
  if (!rec || !key) return NULL;
  for (int i = 0; i < rec->n; ++i)
    if (strcmp(rec->fields[i].key, key) == 0) return &rec->fields[i];
  return NULL;
}

/*
** Returns the field named key, appending an empty one when absent; NULL
** (with the error recorded) on bad arguments or out of memory.
*/
static odb_field *field_slot(odb_record *rec, const char *key) {
  odb_field *f = (odb_field *)odb_record_get(rec, key);
  if (f) return f;
  if (rec->n == rec->cap) {
    int cap = rec->cap ? 2 * rec->cap : 8;
    odb_field *nf = realloc(rec->fields, (size_t)cap * sizeof *nf);
    if (!nf) {
      ODB_FAIL(ODB_ERR_NOMEM, "results: out of memory for field '%s'", key);
      return NULL;
    }
    rec->fields = nf;
    rec->cap = cap;
  }
  f = &rec->fields[rec->n];
  memset(f, 0, sizeof *f);
  f->key = strdup(key);
  if (!f->key) {
    ODB_FAIL(ODB_ERR_NOMEM, "results: out of memory for field '%s'", key);
    return NULL;
  }
  ++rec->n;
  return f;
}

/* Checks the arguments every setter shares. */
static odb_status check_key(const odb_record *rec, const char *key) {
  if (!rec) return ODB_FAIL(ODB_ERR_ARG, "results: record must not be NULL");
  if (!key || !*key)
    return ODB_FAIL(ODB_ERR_ARG, "results: field name must not be empty");
  return ODB_OK;
}

/* value is copied; a previous value of the field (any type) is replaced. */
odb_status odb_record_set_str(odb_record *rec, const char *key,
                              const char *value) {
  odb_field *f;
  char *copy;
  ODB_TRY(check_key(rec, key));
  if (!value)
    return ODB_FAIL(ODB_ERR_ARG, "results: value of '%s' must not be NULL",
                    key);
  copy = strdup(value);
  if (!copy)
    return ODB_FAIL(ODB_ERR_NOMEM, "results: out of memory for '%s'", key);
  f = field_slot(rec, key);
  if (!f) {
    free(copy);
    return ODB_ERR_NOMEM;
  }
  free(f->str);
  f->str = copy;
  f->num = 0;
  f->is_int = 0;
  return ODB_OK;
}

/* Shared by the numeric setters: replaces any previous value. */
static odb_status set_number(odb_record *rec, const char *key, double v,
                             int is_int) {
  odb_field *f;
  ODB_TRY(check_key(rec, key));
  f = field_slot(rec, key);
  if (!f) return ODB_ERR_NOMEM;
  free(f->str);
  f->str = NULL;
  f->num = v;
  f->is_int = is_int;
  return ODB_OK;
}

/* Non-finite values are kept; they are written as null (JSON) or nan/inf
   (CSV). */
odb_status odb_record_set_num(odb_record *rec, const char *key, double v) {
  return set_number(rec, key, v, 0);
}

/* Stored as a double: exact up to 2^53 in magnitude. */
odb_status odb_record_set_int(odb_record *rec, const char *key, long long v) {
  return set_number(rec, key, (double)v, 1);
}

/* The new row is empty; pointers to earlier rows may move. */
odb_record *odb_results_add_row(odb_results *r) {
  if (!r) return NULL;
  if (r->nrows == r->caprows) {
    int cap = r->caprows ? 2 * r->caprows : 16;
    odb_record *nr = realloc(r->rows, (size_t)cap * sizeof *nr);
    if (!nr) {
      ODB_FAIL(ODB_ERR_NOMEM, "results: out of memory for row %d",
               r->nrows + 1);
      return NULL;
    }
    r->rows = nr;
    r->caprows = cap;
  }
  memset(&r->rows[r->nrows], 0, sizeof r->rows[0]);
  return &r->rows[r->nrows++];
}

/* }==================================================================== */

/* {====================================================================
** Directories
** ===================================================================== */

/* Directories that mkdirs created, deepest last, so a failure can undo them. */
typedef struct created_dirs {
  char *paths[64];
  int n;
} created_dirs;

/* Removes the directories in reverse order of creation (only empty ones go). */
static void undo_dirs(created_dirs *cd) {
  while (cd && cd->n > 0) {
    char *p = cd->paths[--cd->n];
    rmdir(p);
    free(p);
  }
}

/* Forgets the list without removing anything. */
static void keep_dirs(created_dirs *cd) {
  while (cd && cd->n > 0) free(cd->paths[--cd->n]);
}

/* Remembers one created directory (silently not when the list is full). */
static void note_dir(created_dirs *cd, const char *p) {
  if (cd && cd->n < (int)(sizeof cd->paths / sizeof cd->paths[0])) {
    char *copy = strdup(p);
    if (copy) cd->paths[cd->n++] = copy;
  }
}

/*
** Makes one directory unless a directory already exists there. Returns 0 or
** an errno value; a non-directory in the way gives ENOTDIR.
*/
static int make_one(const char *p, created_dirs *cd) {
  struct stat sb;
  if (stat(p, &sb) == 0) return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
  if (mkdir(p, 0777) == 0) {
    note_dir(cd, p);
    return 0;
  }
  if (errno == EEXIST && stat(p, &sb) == 0)
    return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
  return errno;
}

/*
** mkdir -p that records what it created in cd (may be NULL) and removes it
** again when a deeper component fails, so a failure leaves nothing behind.
*/
static odb_status mkdirs_tracked(const char *path, created_dirs *cd) {
  char buf[PATH_MAX];
  size_t len;
  int err = 0;
  if (!path || !*path)
    return ODB_FAIL(ODB_ERR_ARG, "output directory name must not be empty");
  len = strlen(path);
  if (len >= sizeof buf)
    return ODB_FAIL(ODB_ERR_IO, "cannot create output directory '%.200s...': "
                    "%s", path, strerror(ENAMETOOLONG));
  memcpy(buf, path, len + 1);
  while (len > 1 && buf[len - 1] == '/') buf[--len] = '\0';
  for (char *p = buf + 1; *p && !err; ++p) {
    if (*p != '/' || p[-1] == '/') continue;
    *p = '\0';
    err = make_one(buf, cd);
    if (err) break;
    *p = '/';
  }
  if (!err) err = make_one(buf, cd);
  if (!err) return ODB_OK;
  undo_dirs(cd);
  if (strcmp(buf, path) == 0 || strlen(buf) == len)
    return ODB_FAIL(ODB_ERR_IO, "cannot create output directory '%s': %s",
                    path, strerror(err));
  return ODB_FAIL(ODB_ERR_IO, "cannot create output directory '%s': %s "
                  "(at '%s')", path, strerror(err), buf);
}

/* Assumes path is a NUL-terminated name; existing directories are fine. */
odb_status odb_mkdirs(const char *path) {
  created_dirs cd = { .n = 0 };
  odb_status st = mkdirs_tracked(path, &cd);
  keep_dirs(&cd);
  return st;
}

/* Creates and removes dir/.odebench-probe.<pid>; 0 or an errno value. */
static int probe(const char *dir) {
  char p[PATH_MAX];
  int fd, err = 0;
  if (snprintf(p, sizeof p, "%s/.odebench-probe.%ld", dir,
               (long)getpid()) >= (int)sizeof p)
    return ENAMETOOLONG;
  fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  if (write(fd, "x", 1) != 1) err = errno ? errno : EIO;
  if (close(fd) != 0 && !err) err = errno;
  unlink(p);
  return err;
}

/* On failure the directories this call created are removed again. */
odb_status odb_check_writable_dir(const char *dir) {
  created_dirs cd = { .n = 0 };
  int err;
  ODB_TRY(mkdirs_tracked(dir, &cd));
  err = probe(dir);
  if (err) {
    undo_dirs(&cd);
    return ODB_FAIL(ODB_ERR_IO, "cannot write to output directory '%s': %s",
                    dir, strerror(err));
  }
  keep_dirs(&cd);
  return ODB_OK;
}

/* }==================================================================== */

/* {====================================================================
** results.json
** ===================================================================== */

/* Writes one field's value under key (non-finite numbers become null). */
static void json_field(odb_json *j, const char *key, const odb_field *f) {
  if (f->str) odb_json_string(j, key, f->str);
  else if (f->is_int && isfinite(f->num) && fabs(f->num) < 9.2e18)
    odb_json_integer(j, key, (long long)f->num);
  else odb_json_number(j, key, f->num);
}

/* 1 when key starts with prefix (of length plen). */
static int has_prefix(const char *key, const char *prefix, size_t plen) {
  return strncmp(key, prefix, plen) == 0;
}

/* 1 when some field is exactly prefix + seg (seg of length slen). */
static int is_leaf(const odb_record *rec, const char *prefix, size_t plen,
                   const char *seg, size_t slen) {
  for (int i = 0; i < rec->n; ++i) {
    const char *k = rec->fields[i].key;
    if (has_prefix(k, prefix, plen) && strncmp(k + plen, seg, slen) == 0 &&
        k[plen + slen] == '\0')
      return 1;
  }
  return 0;
}

/* 1 when a field before index i already opened the group prefix + seg. */
static int group_seen(const odb_record *rec, int i, const char *prefix,
                      size_t plen, const char *seg, size_t slen) {
  for (int k = 0; k < i; ++k) {
    const char *key = rec->fields[k].key;
    if (has_prefix(key, prefix, plen) &&
        strncmp(key + plen, seg, slen) == 0 && key[plen + slen] == '.')
      return 1;
  }
  return 0;
}

/*
** Writes the members of rec under prefix (plen bytes, "" or ending in '.'):
** "a.b" and "a.c" become {"a": {"b", "c"}} in first-seen order. When a
** plain field "a" exists too, the "a.*" fields stay flat ("a.b") so that no
** key appears twice.
*/
static void json_group(odb_json *j, const odb_record *rec, const char *prefix,
                       size_t plen) {
  for (int i = 0; i < rec->n; ++i) {
    const char *key = rec->fields[i].key;
    const char *rest, *dot;
    size_t slen;
    char *sub;
    if (!has_prefix(key, prefix, plen)) continue;
    rest = key + plen;
    dot = strchr(rest, '.');
    if (!dot) {
      json_field(j, rest, &rec->fields[i]);
      continue;
    }
    slen = (size_t)(dot - rest);
    if (is_leaf(rec, prefix, plen, rest, slen)) {
      json_field(j, rest, &rec->fields[i]);
      continue;
    }
    if (group_seen(rec, i, prefix, plen, rest, slen)) continue;
    sub = strndup(key, plen + slen + 1);   /* prefix + seg + '.' */
    if (!sub) {                            /* degrade to a flat member */
      json_field(j, rest, &rec->fields[i]);
      continue;
    }
    sub[plen + slen] = '\0';               /* sub + plen is the name seg */
    odb_json_begin_object(j, sub + plen);
    sub[plen + slen] = '.';
    json_group(j, rec, sub, plen + slen + 1);
    odb_json_end_object(j);
    free(sub);
  }
}

/* The whole results.json document. */
static void write_json(FILE *f, const odb_results *r) {
  odb_json j;
  odb_json_init(&j, f);
  odb_json_begin_object(&j, NULL);
  odb_json_begin_object(&j, "context");
  json_group(&j, &r->context, "", 0);
  odb_json_end_object(&j);
  odb_json_begin_array(&j, "results");
  for (int i = 0; i < r->nrows; ++i) {
    odb_json_begin_object(&j, NULL);
    for (int k = 0; k < r->rows[i].n; ++k)
      json_field(&j, r->rows[i].fields[k].key, &r->rows[i].fields[k]);
    odb_json_end_object(&j);
  }
  odb_json_end_array(&j);
  odb_json_end_object(&j);
}

/* }==================================================================== */

/* {====================================================================
** results.csv
** ===================================================================== */

/* A CSV cell: quoted (quotes doubled) when it holds a comma, quote, line
   break, or starts with '#' (which readers could take for a comment). */
static void csv_string(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n") && s[0] != '#') {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A number as text: integers exactly, others round-trip, nan/inf/-inf. */
static void number_text(char *buf, size_t cap, const odb_field *fl) {
  if (isnan(fl->num)) snprintf(buf, cap, "nan");
  else if (isinf(fl->num)) snprintf(buf, cap, fl->num > 0 ? "inf" : "-inf");
  else if (fl->is_int && fabs(fl->num) < 9.2e18)
    snprintf(buf, cap, "%lld", (long long)fl->num);
  else odb_json_format_double(buf, cap, fl->num);
}

/* One cell for a field (NULL: missing, an empty cell). */
static void csv_cell(FILE *f, const odb_field *fl) {
  char buf[48];
  if (!fl) return;
  if (fl->str) {
    csv_string(f, fl->str);
    return;
  }
  number_text(buf, sizeof buf, fl);
  fputs(buf, f);
}

/* A context value on one comment line: line breaks written as \n, \r. */
static void comment_value(FILE *f, const odb_field *fl) {
  char buf[48];
  if (!fl->str) {
    number_text(buf, sizeof buf, fl);
    fputs(buf, f);
    return;
  }
  for (const char *s = fl->str; *s; ++s) {
    if (*s == '\n') fputs("\\n", f);
    else if (*s == '\r') fputs("\\r", f);
    else fputc(*s, f);
  }
}

/*
** Fills *keys with the union of row keys in first-seen order (pointers into
** the rows); returns the count, or -1 when out of memory.
*/
static int csv_columns(const odb_results *r, const char ***keys) {
  int n = 0, cap = 0;
  const char **k = NULL;
  for (int i = 0; i < r->nrows; ++i) {
    for (int f = 0; f < r->rows[i].n; ++f) {
      const char *key = r->rows[i].fields[f].key;
      int seen = 0;
      for (int c = 0; c < n && !seen; ++c) seen = strcmp(k[c], key) == 0;
      if (seen) continue;
      if (n == cap) {
        const char **nk;
        cap = cap ? 2 * cap : 16;
        nk = realloc(k, (size_t)cap * sizeof *nk);
        if (!nk) {
          free(k);
          return -1;
        }
        k = nk;
      }
      k[n++] = key;
    }
  }
  *keys = k;
  return n;
}

/* The whole results.csv; returns ENOMEM or 0 (I/O errors show in ferror). */
static int write_csv(FILE *f, const odb_results *r) {
  const char **keys = NULL;
  int ncols;
  for (int i = 0; i < r->context.n; ++i) {
    fprintf(f, "# %s=", r->context.fields[i].key);
    comment_value(f, &r->context.fields[i]);
    fputc('\n', f);
  }
  ncols = csv_columns(r, &keys);
  if (ncols < 0) return ENOMEM;
  for (int c = 0; c < ncols; ++c) {
    if (c) fputc(',', f);
    csv_string(f, keys[c]);
  }
  if (ncols > 0) fputc('\n', f);
  for (int i = 0; i < r->nrows; ++i) {
    for (int c = 0; c < ncols; ++c) {
      if (c) fputc(',', f);
      csv_cell(f, odb_record_get(&r->rows[i], keys[c]));
    }
    if (ncols > 0) fputc('\n', f);
  }
  free(keys);
  return 0;
}

/* }==================================================================== */

/* {====================================================================
** Atomic files
** ===================================================================== */

typedef enum { DOC_JSON, DOC_CSV } doc_kind;

/*
** Writes the document into tmp (created fresh), flushed and fsync'ed.
** Returns 0 or an errno value; on failure tmp is removed.
*/
static int write_temp(const char *tmp, doc_kind kind, const odb_results *r) {
  int fd, err = 0;
  FILE *f;
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  f = fdopen(fd, "w");
  if (!f) {
    err = errno;
    close(fd);
    unlink(tmp);
    return err;
  }
  errno = 0;
  if (kind == DOC_JSON) write_json(f, r);
  else err = write_csv(f, r);
  if (!err && ferror(f)) err = errno ? errno : EIO;
  if (!err && fflush(f) != 0) err = errno ? errno : EIO;
  if (!err && fsync(fileno(f)) != 0) err = errno;
  if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
  if (err) unlink(tmp);
  return err;
}

/* Makes the renames durable; failures here are not reported (best effort). */
static void sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

/* Builds dir/name, or fails when the path does not fit. */
static odb_status join(char *out, size_t cap, const char *dir,
                       const char *name) {
  if (snprintf(out, cap, "%s/%s", dir, name) >= (int)cap)
    return ODB_FAIL(ODB_ERR_IO, "cannot write '%s/%s': %s", dir, name,
                    strerror(ENAMETOOLONG));
  return ODB_OK;
}

/*
** Both temporary files are written before either is renamed into place, so
** a failure leaves the previous pair (or nothing) and no temporary file.
*/
odb_status odb_results_write(const odb_results *r, const char *dir) {
  static atomic_uint counter;
  static const char *const names[2] = { "results.json", "results.csv" };
  char final[2][PATH_MAX], tmp[2][PATH_MAX], tname[64];
  created_dirs cd = { .n = 0 };
  unsigned serial = atomic_fetch_add(&counter, 1);
  int k, err;
  odb_status st;
  if (!r) return ODB_FAIL(ODB_ERR_ARG, "results: r must not be NULL");
  ODB_TRY(mkdirs_tracked(dir, &cd));
  for (k = 0; k < 2; ++k) {
    snprintf(tname, sizeof tname, ".%s.tmp.%ld.%u", names[k], (long)getpid(),
             serial);
    if ((st = join(final[k], sizeof final[k], dir, names[k])) != ODB_OK ||
        (st = join(tmp[k], sizeof tmp[k], dir, tname)) != ODB_OK)
      goto fail;
  }
  for (k = 0; k < 2; ++k) {
    err = write_temp(tmp[k], k == 0 ? DOC_JSON : DOC_CSV, r);
    if (err) {
      st = ODB_FAIL(err == ENOMEM ? ODB_ERR_NOMEM : ODB_ERR_IO,
                    "cannot write '%s': %s", final[k], strerror(err));
      goto fail_tmp;
    }
  }
  for (k = 0; k < 2; ++k) {
    if (rename(tmp[k], final[k]) != 0) {
      st = ODB_FAIL(ODB_ERR_IO, "cannot write '%s': %s", final[k],
                    strerror(errno));
      goto fail_tmp;
    }
  }
  sync_dir(dir);
  keep_dirs(&cd);
  return ODB_OK;
fail_tmp:
  for (int i = 0; i < 2; ++i) unlink(tmp[i]);
fail:
  undo_dirs(&cd);
  return st;
}

/* }==================================================================== */
