/* odb_ui_fold.h - repeated warnings folded into one line with a count. */
#ifndef ODB_UI_FOLD_H
#define ODB_UI_FOLD_H

#include <stddef.h>

#define ODB_UI_FOLD_MAX 32     /* distinct warnings kept */
#define ODB_UI_FOLD_LEN 200    /* bytes of a warning's text kept */

/*
** Warnings are repeats of each other when they have the same shape: the
** same words but for those that hold a digit, a quote or a '=' (a
** configuration "block=16", a name 'PipeDb1m', a count), up to their last
** ": " (what follows, the detail, may differ: a long message is cut there
** with "..."). A tuning run that rejects 22 configurations for one reason
** gives 22 warnings of one shape.
*/
typedef struct odb_ui_fold_group {
  char key[ODB_UI_FOLD_LEN];     /* the shape */
  char head[ODB_UI_FOLD_LEN];    /* the words before the detail, with a
                                    word that differs between repeats
                                    shown as '*' ("block=*", "'*'") */
  char detail[ODB_UI_FOLD_LEN];  /* the first repeat's detail */
  int has_detail, details_vary;
  long count;
  unsigned long used;            /* when last added to (for eviction) */
} odb_ui_fold_group;

typedef struct odb_ui_fold {
  odb_ui_fold_group g[ODB_UI_FOLD_MAX];
  int n;
  unsigned long clock;
} odb_ui_fold;

void odb_ui_fold_init(odb_ui_fold *f);
/*
** Adds a warning; returns the index of its group (a new group when none
** has its shape; with ODB_UI_FOLD_MAX groups the least recently used one
** makes way). *evicted (may be NULL) gets 1 when the index belonged to
** another group before.
*/
int odb_ui_fold_add(odb_ui_fold *f, const char *text, int *evicted);
/*
** The line of group k into buf: "warning (x22): <head>: <detail>" (the
** detail "... (first: <detail>)" when the repeats' details differ); for a
** group of one warning, "warning: <text>". Truncated to cap - 1 bytes.
*/
void odb_ui_fold_line(const odb_ui_fold *f, int k, char *buf, size_t cap);

#endif
