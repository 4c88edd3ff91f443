/* odb_ui_fold.c - repeated warnings folded into one line with a count: the
   dashboard's log and the plain reporter share it (odb_ui_fold.h says
   which warnings are repeats). */
#include "odb_ui_fold.h"

#include <stdio.h>
#include <string.h>

#define WORD_MAX 64   /* words of a head compared; the rest is one word */

/* Copies at most cap - 1 bytes of s and terminates. */
static void copy_str(char *dst, size_t cap, const char *s) {
  snprintf(dst, cap, "%s", s);
}

/* Letters, digits and '_': a word is not cut inside a run of them. */
static int is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

/* Splits text at its last ": " into head and detail; 0 when it has none
   (then head is the whole text). */
static int split(const char *text, char *head, char *detail) {
  const char *last = NULL;
  for (const char *p = strstr(text, ": "); p; p = strstr(p + 1, ": "))
    last = p;
  if (!last) {
    copy_str(head, ODB_UI_FOLD_LEN, text);
    detail[0] = '\0';
    return 0;
  }
  snprintf(head, ODB_UI_FOLD_LEN, "%.*s", (int)(last - text), text);
  copy_str(detail, ODB_UI_FOLD_LEN, last + 2);
  return 1;
}

/* Splits s (modified) into at most WORD_MAX words at runs of spaces; the
   last word takes the rest. */
static int words(char *s, char **w) {
  int n = 0;
  while (*s) {
    while (*s == ' ') *s++ = '\0';
    if (!*s) break;
    w[n++] = s;
    if (n == WORD_MAX) break;
    while (*s && *s != ' ') ++s;
  }
  return n;
}

/* 1 when a word varies between repeats: it holds a digit, a quote or '='. */
static int varies(const char *w) {
  return strpbrk(w, "0123456789'\"=") != NULL;
}

/* The shape of a head: each varying word as "#" ("key=#" for k=v). */
static void shape(const char *head, int has_detail, char *key) {
  char buf[ODB_UI_FOLD_LEN], *w[WORD_MAX];
  size_t n = 0;
  int nw;
  copy_str(buf, sizeof buf, head);
  nw = words(buf, w);
  key[0] = '\0';
  for (int k = 0; k < nw; ++k) {
    const char *eq = strchr(w[k], '=');
    int len = !varies(w[k]) ? (int)strlen(w[k])
              : eq ? (int)(eq - w[k]) + 1 : 0;
    int m = snprintf(key + n, ODB_UI_FOLD_LEN - n, "%s%.*s%s", k ? " " : "",
                     len, w[k], varies(w[k]) ? "#" : "");
    if (m < 0 || (size_t)m >= ODB_UI_FOLD_LEN - n) break;
    n += (size_t)m;
  }
  if (n + 3 < ODB_UI_FOLD_LEN) memcpy(key + n, has_detail ? "|d" : "|-", 3);
}

/*
** a (which may hold one '*' from an earlier merge) and b as one word: the
** prefix and suffix they share, cut at a non-word character, around '*':
** "block=16" and "block=32" give "block=*", "'PipeDb1m'" and "'ppDb1m'"
** give "'*'".
*/
static void merge_word(const char *a, const char *b, char *out, size_t cap) {
  const char *star = strchr(a, '*');
  const char *tail = star ? star + 1 : a;
  size_t apre = star ? (size_t)(star - a) : strlen(a);
  size_t la = strlen(tail), lb = strlen(b), n = 0, m = 0;
  if (strcmp(a, b) == 0) {
    copy_str(out, cap, a);
    return;
  }
  while (n < apre && a[n] == b[n]) ++n;
  while (n > 0 && is_alnum(a[n - 1])) --n;
  while (m < la && m + n < lb && (star || m + n < la) &&
         tail[la - 1 - m] == b[lb - 1 - m])
    ++m;
  while (m > 0 && is_alnum(tail[la - m])) --m;
  snprintf(out, cap, "%.*s*%s", (int)n, a, tail + la - m);
}

/* Merges head into the group's head word by word (equal shapes: equal
   word counts). */
static void merge_head(odb_ui_fold_group *g, const char *head) {
  char a[ODB_UI_FOLD_LEN], b[ODB_UI_FOLD_LEN], out[ODB_UI_FOLD_LEN];
  char *wa[WORD_MAX], *wb[WORD_MAX];
  size_t n = 0;
  int na, nb;
  copy_str(a, sizeof a, g->head);
  copy_str(b, sizeof b, head);
  na = words(a, wa);
  nb = words(b, wb);
  out[0] = '\0';
  for (int k = 0; k < na && k < nb; ++k) {
    char word[ODB_UI_FOLD_LEN];
    int m;
    merge_word(wa[k], wb[k], word, sizeof word);
    m = snprintf(out + n, sizeof out - n, "%s%s", k ? " " : "", word);
    if (m < 0 || (size_t)m >= sizeof out - n) break;
    n += (size_t)m;
  }
  copy_str(g->head, sizeof g->head, out);
}

void odb_ui_fold_init(odb_ui_fold *f) { memset(f, 0, sizeof *f); }

int odb_ui_fold_add(odb_ui_fold *f, const char *text, int *evicted) {
  char head[ODB_UI_FOLD_LEN], detail[ODB_UI_FOLD_LEN], key[ODB_UI_FOLD_LEN];
  int has_detail = split(text ? text : "", head, detail), k;
  odb_ui_fold_group *g;
  shape(head, has_detail, key);
  if (evicted) *evicted = 0;
  f->clock++;
  for (k = 0; k < f->n; ++k) {
    g = &f->g[k];
    if (strcmp(g->key, key) != 0) continue;
    merge_head(g, head);
    if (strcmp(g->detail, detail) != 0) g->details_vary = 1;
    g->count++;
    g->used = f->clock;
    return k;
  }
  if (f->n < ODB_UI_FOLD_MAX) {
    k = f->n++;
  } else {                        /* the least recently used makes way */
    k = 0;
    for (int i = 1; i < f->n; ++i)
      if (f->g[i].used < f->g[k].used) k = i;
    if (evicted) *evicted = 1;
  }
  g = &f->g[k];
  memset(g, 0, sizeof *g);
  copy_str(g->key, sizeof g->key, key);
  copy_str(g->head, sizeof g->head, head);
  copy_str(g->detail, sizeof g->detail, detail);
  g->has_detail = has_detail;
  g->count = 1;
  g->used = f->clock;
  return k;
}

void odb_ui_fold_line(const odb_ui_fold *f, int k, char *buf, size_t cap) {
  const odb_ui_fold_group *g;
  if (cap == 0) return;
  buf[0] = '\0';
  if (k < 0 || k >= f->n) return;
  g = &f->g[k];
  if (g->count == 1)
    snprintf(buf, cap, "warning: %s%s%s", g->head, g->has_detail ? ": " : "",
             g->detail);
  else if (!g->has_detail)
    snprintf(buf, cap, "warning (x%ld): %s", g->count, g->head);
  else if (!g->details_vary)
    snprintf(buf, cap, "warning (x%ld): %s: %s", g->count, g->head, g->detail);
  else
    snprintf(buf, cap, "warning (x%ld): %s: ... (first: %s)", g->count,
             g->head, g->detail);
}
