/* odb_ui_tui.h - the ncurses dashboard of a run (live or replayed). */
#ifndef ODB_UI_TUI_H
#define ODB_UI_TUI_H

#include "odb_ui_model.h"

typedef struct odb_ui_tui odb_ui_tui;

typedef struct odb_ui_tui_opts {
  odb_ctx *ctx;               /* a live run: its events, pause and skip flags;
                                 NULL for a replay */
  const odb_event *replay;    /* a replay: the recorded events (wall as
                                 recorded), nreplay of them */
  int nreplay;
  double speed;               /* replay: recorded seconds per second (> 0) */
  odb_ui_info info;
  /* Key q in a live run; NULL: odb_ctx_request_stop(ctx). Called on the
     dashboard's thread. */
  void (*on_quit)(void *arg);
  void *quit_arg;
} odb_ui_tui_opts;

/*
** Why no dashboard can run here ("stdout is not a terminal", "TERM is not
** set", ...), or NULL when it may (curses may still refuse the terminal).
*/
const char *odb_ui_tui_unavailable(void);

/*
** Starts the dashboard thread, which alone calls curses. Fails, changing
** nothing, when curses cannot start on this terminal. While it runs,
** stdout (and stderr when it is the terminal) go to the log pane; they are
** written out again after the terminal is restored.
*/
odb_status odb_ui_tui_start(const odb_ui_tui_opts *o, odb_ui_tui **out);
/* Replay: returns when the user quits (q, or odb_ui_tui_interrupt). */
void odb_ui_tui_wait(odb_ui_tui *t);
/* Async-signal-safe: asks the dashboard to end (Ctrl-C in a replay). */
void odb_ui_tui_interrupt(odb_ui_tui *t);
/* Ends the thread, restores the terminal, prints the captured output and
   frees t. NULL is allowed. */
void odb_ui_tui_stop(odb_ui_tui *t);
/*
** Async-signal-safe: puts the terminal back (normal screen, cursor, saved
** modes) while a dashboard runs; for a handler that is about to kill the
** process. Does nothing when no dashboard runs.
*/
void odb_ui_tui_emergency_restore(void);

#endif
