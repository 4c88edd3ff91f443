/* odb_ui.h - reporters that show a run's events while it goes (tui, plain,
   none), and the replay of a recorded run. */
#ifndef ODB_UI_H
#define ODB_UI_H

#include <signal.h>
#include <stdio.h>

#include "odebench.h"
#include "odb_ui_model.h"

/*
** The reporter kinds of --ui. AUTO resolves to TUI when stdin and stdout
** are terminals and TERM is set and not "dumb", else to PLAIN; a TUI that
** curses cannot start falls back to PLAIN.
*/
typedef enum odb_ui_kind { ODB_UI_AUTO = 0, ODB_UI_PLAIN, ODB_UI_NONE,
                           ODB_UI_TUI } odb_ui_kind;

#define ODB_UI_CHOICES "auto, tui, plain, none"

/* The kind named s ("auto", "tui", "plain", "none"), or -1 when unknown. */
int odb_ui_parse(const char *s);
const char *odb_ui_name(int kind);
/* Resolves ODB_UI_AUTO to the kind this terminal gets. */
int odb_ui_resolve(int kind);

typedef struct odb_ui odb_ui;

typedef struct odb_ui_opts {
  int kind;                 /* odb_ui_kind; AUTO is resolved here */
  FILE *out;                /* plain lines and warnings (stderr) */
  odb_ui_info info;         /* header of the dashboard */
  void (*on_quit)(void *);  /* dashboard key q (see odb_ui_tui_opts) */
  void *quit_arg;
} odb_ui_opts;

/*
** Starts the reporter on ctx's event ring. PLAIN runs its own thread, TUI
** the dashboard's thread, NONE shows nothing. An explicit TUI that cannot
** start says why on out and runs PLAIN.
*/
odb_status odb_ui_start(odb_ctx *ctx, const odb_ui_opts *o, odb_ui **ui);
/* The kind that actually runs. */
int odb_ui_kind_of(const odb_ui *ui);
/* Shows what is still queued, stops and joins the thread, restores the
   terminal, frees ui. NULL is allowed. */
void odb_ui_stop(odb_ui *ui);
/* Async-signal-safe: restores the terminal if a dashboard runs. */
void odb_ui_emergency_restore(void);

/*
** Replays recorded events: in the dashboard when kind resolves to TUI
** (until the user quits; speed: recorded seconds per second, 0: 1), else
** as plain lines on out (paced by speed when speed > 0, at once otherwise).
*/
odb_status odb_ui_replay(const odb_event *evs, int n, const odb_ui_info *info,
                         int kind, double speed, FILE *out);
/* Async-signal-safe: ends a running replay (Ctrl-C). */
void odb_ui_interrupt(void);

/* {====== the plain line reporter (odb_ui_plain.c) */

typedef struct odb_ui_plain odb_ui_plain;

/* Starts the thread that polls ctx's events ~10 times a second. */
odb_status odb_ui_plain_start(odb_ctx *ctx, FILE *out, odb_ui_plain **p);
void odb_ui_plain_stop(odb_ui_plain *p);
/*
** Prints recorded events as the plain reporter would have printed them
** during the run (its rate limit runs on the recorded clock). speed > 0
** sleeps between events; *interrupt (may be NULL) set ends it early.
*/
void odb_ui_plain_replay(const odb_event *evs, int n, double speed,
                         FILE *out, volatile sig_atomic_t *interrupt);

/* }====== */

#endif
