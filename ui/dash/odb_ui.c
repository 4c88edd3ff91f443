/* odb_ui.c - choosing and running a reporter by kind; replays. */
#include "odb_ui.h"

#include <stdlib.h>
#include <string.h>

#include "odb_ui_tui.h"

struct odb_ui {
  int kind;
  odb_ui_plain *plain;   /* ODB_UI_PLAIN only */
  odb_ui_tui *tui;       /* ODB_UI_TUI only */
};

static const char *const kind_names[] = {"auto", "plain", "none", "tui"};
#define NKINDS 4

/* A replay in progress, for odb_ui_interrupt. */
static odb_ui_tui *volatile g_replay_tui;
static volatile sig_atomic_t g_replay_stop;

/* NULL and unknown names give -1. */
int odb_ui_parse(const char *s) {
  for (int i = 0; s && i < NKINDS; ++i)
    if (strcmp(s, kind_names[i]) == 0) return i;
  return -1;
}

/* "?" for a kind outside the enum. */
const char *odb_ui_name(int kind) {
  return kind >= 0 && kind < NKINDS ? kind_names[kind] : "?";
}

/* AUTO is TUI on a terminal (stdin and stdout, TERM usable), else PLAIN. */
int odb_ui_resolve(int kind) {
  if (kind != ODB_UI_AUTO) return kind;
  return odb_ui_tui_unavailable() ? ODB_UI_PLAIN : ODB_UI_TUI;
}

/* The dashboard; NULL (after a note on out when it was asked for by name)
   when it cannot start. */
static odb_ui_tui *try_tui(odb_ctx *ctx, const odb_ui_opts *o) {
  odb_ui_tui_opts to;
  odb_ui_tui *t = NULL;
  memset(&to, 0, sizeof to);
  to.ctx = ctx;
  to.info = o->info;
  to.on_quit = o->on_quit;
  to.quit_arg = o->quit_arg;
  if (odb_ui_tui_start(&to, &t) != ODB_OK) {
    if (o->kind == ODB_UI_TUI && o->out)
      fprintf(o->out, "odebench: warning: no dashboard (%s); plain progress "
              "lines instead\n", odb_last_error());
    return NULL;
  }
  return t;
}

/* AUTO is resolved here; NONE starts no thread. */
odb_status odb_ui_start(odb_ctx *ctx, const odb_ui_opts *o, odb_ui **ui) {
  odb_ui *u;
  odb_status st;
  int kind;
  if (!ui || !o) return ODB_FAIL(ODB_ERR_ARG, "ui: options and out needed");
  *ui = NULL;
  kind = o->kind == ODB_UI_AUTO && odb_ui_tui_unavailable() ? ODB_UI_PLAIN
         : o->kind == ODB_UI_AUTO ? ODB_UI_TUI : o->kind;
  if (kind != ODB_UI_PLAIN && kind != ODB_UI_NONE && kind != ODB_UI_TUI)
    return ODB_FAIL(ODB_ERR_ARG, "unknown ui kind %d (allowed: %s)", kind,
                    ODB_UI_CHOICES);
  u = calloc(1, sizeof *u);
  if (!u) return ODB_FAIL(ODB_ERR_NOMEM, "ui: out of memory");
  if (kind == ODB_UI_TUI) {
    u->tui = try_tui(ctx, o);
    if (!u->tui) kind = ODB_UI_PLAIN;
  }
  u->kind = kind;
  if (kind == ODB_UI_PLAIN) {
    st = odb_ui_plain_start(ctx, o->out ? o->out : stderr, &u->plain);
    if (st != ODB_OK) {
      free(u);
      return st;
    }
  }
  *ui = u;
  return ODB_OK;
}

int odb_ui_kind_of(const odb_ui *ui) { return ui ? ui->kind : ODB_UI_NONE; }

/* Joins the reporter thread (it flushes first); NULL is allowed. */
void odb_ui_stop(odb_ui *ui) {
  if (!ui) return;
  if (ui->plain) odb_ui_plain_stop(ui->plain);
  if (ui->tui) odb_ui_tui_stop(ui->tui);
  free(ui);
}

void odb_ui_emergency_restore(void) { odb_ui_tui_emergency_restore(); }

/* Only stores and a write(2): safe in a signal handler. */
void odb_ui_interrupt(void) {
  odb_ui_tui *t = g_replay_tui;
  g_replay_stop = 1;
  if (t) odb_ui_tui_interrupt(t);
}

odb_status odb_ui_replay(const odb_event *evs, int n, const odb_ui_info *info,
                         int kind, double speed, FILE *out) {
  odb_ui_tui_opts to;
  odb_ui_tui *t = NULL;
  g_replay_stop = 0;
  kind = odb_ui_resolve(kind);
  if (kind == ODB_UI_TUI) {
    memset(&to, 0, sizeof to);
    to.replay = evs;
    to.nreplay = n;
    to.speed = speed > 0 ? speed : 1;
    if (info) to.info = *info;
    if (odb_ui_tui_start(&to, &t) == ODB_OK) {
      g_replay_tui = t;
      if (g_replay_stop) odb_ui_tui_interrupt(t);
      odb_ui_tui_wait(t);
      g_replay_tui = NULL;
      odb_ui_tui_stop(t);
      return ODB_OK;
    }
    fprintf(out, "odebench: warning: no dashboard (%s); plain lines "
            "instead\n", odb_last_error());
  }
  if (kind != ODB_UI_NONE) odb_ui_plain_replay(evs, n, speed, out,
                                               &g_replay_stop);
  return ODB_OK;
}
