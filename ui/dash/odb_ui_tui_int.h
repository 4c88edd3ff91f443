/* odb_ui_tui_int.h - what the dashboard's files share: its state, the
   layout constants, the drawing helpers and one entry per pane. Only the
   dashboard's thread calls these (it alone calls curses). */
#ifndef ODB_UI_TUI_INT_H
#define ODB_UI_TUI_INT_H

#include <curses.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "odb_ui_tui.h"

#define MIN_W 72           /* smallest terminal the layout fits */
#define MIN_H 22
#define TOP_H 9            /* activity and throughput panels */

/* The panels in focus order (tab). P_TABLE is the finished solves or the
   best configurations, P_HEAT the metrics or the heatmap. */
enum { P_ACTIVITY, P_THROUGHPUT, P_TABLE, P_HEAT, P_LOG, NPANELS };

enum { PAIR_FOCUS = 1, PAIR_GOOD, PAIR_WARN, PAIR_BAD, PAIR_DIM, PAIR_HEAT };

/* A growing byte buffer of captured output. */
typedef struct capbuf {
  char *data;
  size_t len, cap;
  size_t dropped;
  char line[200];       /* the line being assembled for the log pane */
  size_t linelen;
} capbuf;

struct odb_ui_tui {
  odb_ui_tui_opts o;
  odb_ui_model *m;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int started;            /* under lock: 0 waiting, 1 running, -1 failed */
  int finished;           /* under lock: the loop ended (user quit) */
  char why[160];          /* why curses did not start */
  volatile sig_atomic_t stop, quit;
  int wake[2];            /* self-pipe that wakes the thread's poll */
  /* the terminal and the captured streams */
  int term_fd;
  FILE *term_out;
  SCREEN *scr;
  int cap_fd[2][2];       /* [stream][pipe end]; stream 0 stdout, 1 stderr */
  int saved_fd[2];        /* the original fds 1 and 2, -1 when not captured */
  capbuf cap[2];
  char old_ctype[64];
  /* state of the dashboard thread */
  int colors, heat_levels, utf8;
  int focus, help, paused, stopping;
  int px, py;             /* heatmap axes (parameter indexes) */
  int axes_chosen;        /* the user moved them: no automatic swap */
  int log_scroll, table_scroll;
  uint64_t cursor;
  double start;
  int redraw;
  /* replay */
  int rp_next;
  double rp_clock, rp_last;
  double *rp_at;          /* when each event is shown (odb_ui_replay_times) */
  int rp_done;
};

/* {====== drawing helpers (odb_ui_tui_draw.c) */

/* Seconds on the monotonic clock. */
double tui_now(void);
/* Attribute of a colour pair, or 0 without colours. */
attr_t tui_color(const odb_ui_tui *t, int pair);
/* Writes s at (y, x), clipped to w columns; returns the columns used.
   Control characters show as spaces. Assumes ASCII-width text. */
int tui_put(int y, int x, int w, attr_t a, const char *s);
/* printf form of tui_put. */
int tui_putf(int y, int x, int w, attr_t a, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));

/* A pen writes segments of one line left to right within [x, end). */
typedef struct pen {
  int y, x, end;
} pen;

void tui_penf(pen *p, attr_t a, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
/* "[#####-----]" of width w (w >= 3) for a fraction in [0, 1]. */
void tui_bar(char *buf, int w, double frac);
/* A frame around a panel, its title on the top edge. */
void tui_box(const odb_ui_tui *t, int y, int x, int h, int w,
             const char *title, int focused);
/* The whole screen, drawn into curses' buffer and sent as one update. */
void tui_draw(odb_ui_tui *t);

/* }====== */

/* {====== the panes: each draws into the box (y, x, h, w) */

void tui_draw_activity(odb_ui_tui *t, int y, int x, int h, int w);
void tui_draw_throughput(odb_ui_tui *t, int y, int x, int h, int w);
void tui_draw_solves(odb_ui_tui *t, int y, int x, int h, int w);
void tui_draw_metrics(odb_ui_tui *t, int y, int x, int h, int w);
void tui_draw_best(odb_ui_tui *t, int y, int x, int h, int w);
void tui_draw_heat(odb_ui_tui *t, int y, int x, int h, int w);

/* }====== */

/* Handles one key (odb_ui_tui_keys.c). */
void tui_on_key(odb_ui_tui *t, int ch);
/* Replay key s: on to the next solve or configuration (odb_ui_tui_thread.c). */
void tui_replay_skip(odb_ui_tui *t);

#endif
