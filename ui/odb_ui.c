/* odb_ui.c - choosing and running a reporter by kind. */
#include "odb_ui.h"

#include <stdlib.h>
#include <string.h>

struct odb_ui {
  int kind;
  odb_ui_plain *plain;   /* ODB_UI_PLAIN only */
};

static const char *const kind_names[] = {"auto", "plain", "none"};

/* NULL and unknown names give -1. */
int odb_ui_parse(const char *s) {
  for (int i = 0; s && i < 3; ++i)
    if (strcmp(s, kind_names[i]) == 0) return i;
  return -1;
}

/* "?" for a kind outside the enum. */
const char *odb_ui_name(int kind) {
  return kind >= 0 && kind < 3 ? kind_names[kind] : "?";
}

/* AUTO is PLAIN whether or not stderr is a terminal, until the TUI exists. */
int odb_ui_resolve(int kind) {
  return kind == ODB_UI_AUTO ? ODB_UI_PLAIN : kind;
}

/* AUTO is resolved here; NONE starts no thread. */
odb_status odb_ui_start(odb_ctx *ctx, int kind, FILE *out, odb_ui **ui) {
  odb_ui *u;
  odb_status st;
  if (!ui) return ODB_FAIL(ODB_ERR_ARG, "ui: out must not be NULL");
  *ui = NULL;
  kind = odb_ui_resolve(kind);
  if (kind != ODB_UI_PLAIN && kind != ODB_UI_NONE)
    return ODB_FAIL(ODB_ERR_ARG, "unknown ui kind %d (allowed: %s)", kind,
                    ODB_UI_CHOICES);
  u = calloc(1, sizeof *u);
  if (!u) return ODB_FAIL(ODB_ERR_NOMEM, "ui: out of memory");
  u->kind = kind;
  if (kind == ODB_UI_PLAIN) {
    st = odb_ui_plain_start(ctx, out, &u->plain);
    if (st != ODB_OK) {
      free(u);
      return st;
    }
  }
  *ui = u;
  return ODB_OK;
}

/* Joins the reporter thread (it flushes first); NULL is allowed. */
void odb_ui_stop(odb_ui *ui) {
  if (!ui) return;
  if (ui->plain) odb_ui_plain_stop(ui->plain);
  free(ui);
}
