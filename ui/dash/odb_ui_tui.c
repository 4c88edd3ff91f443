/* odb_ui_tui.c - the ncurses dashboard: one thread owns curses and draws
   what the model folds from the event ring (or from a recording). */
#include "odb_ui_tui.h"

#include <curses.h>

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define FRAME 0.1          /* seconds between redraws (10 Hz) */
#define MIN_W 72           /* smallest terminal the layout fits */
#define MIN_H 22
#define TOP_H 9            /* activity and throughput panels */
#define CAPTURE_MAX (8u << 20)  /* bytes of captured output kept */
#define BATCH 256

enum { P_ACTIVITY, P_THROUGHPUT, P_TABLE, P_HEAT, P_LOG, NPANELS };

enum { PAIR_FOCUS = 1, PAIR_GOOD, PAIR_WARN, PAIR_BAD, PAIR_DIM, PAIR_HEAT };

/* The heat gradient, fast to slow: 256-colour and 8-colour versions. */
static const short heat256[] = { 46, 82, 118, 154, 190, 226, 220, 214, 208,
                                 202, 196 };
static const short heat8[] = { COLOR_GREEN, COLOR_CYAN, COLOR_YELLOW,
                               COLOR_MAGENTA, COLOR_RED };

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

/* {====== emergency restore (async-signal-safe) */

static volatile sig_atomic_t g_active;
static int g_tty = -1;
static struct termios g_termios;
static char g_leave[128];
static size_t g_leave_len;

void odb_ui_tui_emergency_restore(void) {
  if (!g_active || g_tty < 0) return;
  if (g_leave_len) {
    ssize_t w = write(g_tty, g_leave, g_leave_len);
    (void)w;
  }
  tcsetattr(g_tty, TCSANOW, &g_termios);
  g_active = 0;
}

/* Appends terminfo capability cap (if the terminal has it) to g_leave. */
static void add_leave_cap(const char *cap) {
  char *s = tigetstr((char *)cap);
  size_t n;
  if (!s || s == (char *)-1) return;
  n = strlen(s);
  if (g_leave_len + n >= sizeof g_leave) return;
  memcpy(g_leave + g_leave_len, s, n);
  g_leave_len += n;
}

/* }====== */

/* {====== small helpers */

/* Seconds on the monotonic clock. */
static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Attribute of a colour pair, or 0 without colours. */
static attr_t color(const odb_ui_tui *t, int pair) {
  return t->colors ? COLOR_PAIR(pair) : 0;
}

/* Writes s at (y, x), clipped to w columns; returns the columns used.
   Control characters show as spaces. Assumes ASCII-width text. */
static int put_at(int y, int x, int w, attr_t a, const char *s) {
  char buf[512];
  int n = 0;
  if (w <= 0) return 0;
  for (; s[n] && n < w && n < (int)sizeof buf - 1; ++n)
    buf[n] = (unsigned char)s[n] < 0x20 ? ' ' : s[n];
  buf[n] = '\0';
  attron(a);
  mvaddstr(y, x, buf);
  attroff(a);
  return n;
}

/* printf form of put_at. */
static int putf_at(int y, int x, int w, attr_t a, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));
static int putf_at(int y, int x, int w, attr_t a, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return put_at(y, x, w, a, buf);
}

/* A pen writes segments of one line left to right within [x, end). */
typedef struct pen {
  int y, x, end;
} pen;

static void penf(pen *p, attr_t a, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void penf(pen *p, attr_t a, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  p->x += put_at(p->y, p->x, p->end - p->x, a, buf);
}

/* "[#####-----]" of width w (w >= 3) for a fraction in [0, 1]. */
static void bar(char *buf, int w, double frac) {
  int inner = w - 2, full;
  if (!(frac >= 0)) frac = 0;
  if (frac > 1) frac = 1;
  full = (int)(frac * inner + 0.5);
  buf[0] = '[';
  for (int i = 0; i < inner; ++i) buf[1 + i] = i < full ? '#' : '-';
  buf[w - 1] = ']';
  buf[w] = '\0';
}

/* A frame around a panel, its title on the top edge. */
static void draw_box(const odb_ui_tui *t, int y, int x, int h, int w,
                     const char *title, int focused) {
  attr_t a = focused ? (A_BOLD | color(t, PAIR_FOCUS)) : A_NORMAL;
  attron(a);
  mvaddch(y, x, ACS_ULCORNER);
  mvhline(y, x + 1, ACS_HLINE, w - 2);
  mvaddch(y, x + w - 1, ACS_URCORNER);
  mvvline(y + 1, x, ACS_VLINE, h - 2);
  mvvline(y + 1, x + w - 1, ACS_VLINE, h - 2);
  mvaddch(y + h - 1, x, ACS_LLCORNER);
  mvhline(y + h - 1, x + 1, ACS_HLINE, w - 2);
  mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER);
  attroff(a);
  putf_at(y, x + 2, w - 4, focused ? (A_BOLD | A_REVERSE) : A_BOLD, " %s ",
          title);
}

/* }====== */

/* {====== captured output */

/* Finishes the log line being assembled from a stream. */
static void cap_flush_line(odb_ui_tui *t, int stream) {
  capbuf *c = &t->cap[stream];
  if (c->linelen == 0) return;
  c->line[c->linelen] = '\0';
  odb_ui_model_log(t->m, t->m->wall, stream ? ODB_LOG_WARN : ODB_LOG_INFO,
                   c->line);
  c->linelen = 0;
}

/* Keeps bytes for printing later and feeds complete lines to the log. */
static void cap_add(odb_ui_tui *t, int stream, const char *b, size_t n) {
  capbuf *c = &t->cap[stream];
  if (c->len + n > CAPTURE_MAX) {
    c->dropped += n;
  } else {
    if (c->len + n > c->cap) {
      size_t nc = c->cap ? c->cap : 65536;
      char *g;
      while (nc < c->len + n) nc *= 2;
      g = realloc(c->data, nc);
      if (!g) {
        c->dropped += n;
        goto lines;
      }
      c->data = g;
      c->cap = nc;
    }
    memcpy(c->data + c->len, b, n);
    c->len += n;
  }
lines:
  for (size_t i = 0; i < n; ++i) {
    if (b[i] == '\n') cap_flush_line(t, stream);
    else if (b[i] != '\r' && c->linelen < sizeof c->line - 1)
      c->line[c->linelen++] = b[i];
  }
}

/* Reads what a capture pipe holds now (its read end is non-blocking). */
static void cap_read(odb_ui_tui *t, int stream) {
  char buf[4096];
  ssize_t n;
  if (t->cap_fd[stream][0] < 0) return;
  while ((n = read(t->cap_fd[stream][0], buf, sizeof buf)) > 0)
    cap_add(t, stream, buf, (size_t)n);
}

/* Writes all of buf to fd (restarting after signals). */
static void write_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    buf += w;
    n -= (size_t)w;
  }
}

/* }====== */

/* {====== event sources */

/* A live run: everything new in the ring. */
static void feed_live(odb_ui_tui *t) {
  odb_event batch[BATCH];
  uint64_t dropped;
  int n;
  do {
    n = odb_event_poll(t->o.ctx->events, &t->cursor, batch, BATCH, &dropped);
    t->m->dropped += dropped;
    for (int i = 0; i < n; ++i) odb_ui_model_apply(t->m, &batch[i]);
  } while (n == BATCH);
}

/* A replay: the recorded events up to the replay clock. */
static void feed_replay(odb_ui_tui *t) {
  double now = now_seconds();
  if (!t->paused && !t->rp_done) t->rp_clock += (now - t->rp_last) * t->o.speed;
  t->rp_last = now;
  while (t->rp_next < t->o.nreplay && t->rp_at[t->rp_next] <= t->rp_clock)
    odb_ui_model_apply(t->m, &t->o.replay[t->rp_next++]);
  if (t->rp_next == t->o.nreplay && !t->rp_done) {
    t->rp_done = 1;
    odb_ui_model_log(t->m, t->m->wall, ODB_LOG_INFO,
                     "replay finished; q quits");
  }
}

/* Replay key s: on to the next solve or configuration. */
static void replay_skip(odb_ui_tui *t) {
  int k = t->rp_next;
  while (k < t->o.nreplay && t->o.replay[k].kind != ODB_EV_SOLVE_BEGIN &&
         t->o.replay[k].kind != ODB_EV_TUNE_EVAL)
    ++k;
  if (k < t->o.nreplay && k == t->rp_next) ++k;   /* past the current one */
  while (k < t->o.nreplay && t->o.replay[k].kind != ODB_EV_SOLVE_BEGIN &&
         t->o.replay[k].kind != ODB_EV_TUNE_EVAL)
    ++k;
  if (k < t->o.nreplay) t->rp_clock = t->rp_at[k];
  else if (t->o.nreplay > 0) t->rp_clock = t->rp_at[t->o.nreplay - 1];
}

/* }====== */

/* {====== keys */

/* Moves the heatmap axis *axis by dir over the parameters, skipping other;
   with two parameters the axes swap. */
static void turn_axis(const odb_ui_tui *t, int *axis, int *other, int dir) {
  int n = t->m->nparams;
  if (n < 2) return;
  if (n == 2) {
    int k = *axis;
    *axis = *other;
    *other = k;
    return;
  }
  for (int k = 0; k < n; ++k) {
    *axis = ((*axis + dir) % n + n) % n;
    if (*axis != *other) return;
  }
}

/* p: the engine waits at its next step (a replay stops its clock). */
static void toggle_pause(odb_ui_tui *t) {
  t->paused = !t->paused;
  if (t->o.ctx) t->o.ctx->pause = t->paused;
  if (!t->paused) odb_ui_model_resync(t->m);
  odb_ui_model_log(t->m, t->m->wall, ODB_LOG_INFO,
                   t->paused ? "paused (p resumes)" : "resumed");
}

/* s: the tuner drops its current configuration; a replay jumps ahead. */
static void skip(odb_ui_tui *t) {
  char msg[160];
  if (!t->o.ctx) {
    replay_skip(t);
    return;
  }
  if (!t->m->tuning || (t->m->tune_n > 0 && t->m->tune_i >= t->m->tune_n)) {
    odb_ui_model_log(t->m, t->m->wall, ODB_LOG_INFO, "nothing to skip: s "
                     "skips the configuration a tuning run is measuring");
    return;
  }
  t->o.ctx->skip = 1;
  snprintf(msg, sizeof msg, "skip requested: the tuner drops the "
           "configuration it measures now (or the next one after %.60s)",
           t->m->tune_config);
  odb_ui_model_log(t->m, t->m->wall, ODB_LOG_INFO, msg);
}

/* q: a live run stops after its current step; a replay ends. */
static void quit(odb_ui_tui *t) {
  if (!t->o.ctx) {
    t->quit = 1;
    return;
  }
  if (t->stopping) return;
  t->stopping = 1;
  if (t->paused) toggle_pause(t);
  odb_ui_model_log(t->m, t->m->wall, ODB_LOG_INFO, "stopping after the "
                   "current step; the results so far will be written");
  if (t->o.on_quit) t->o.on_quit(t->o.quit_arg);
  else odb_ctx_request_stop(t->o.ctx);
}

/* Arrows: scroll the focused table or log; otherwise heatmap axes. */
static void arrow(odb_ui_tui *t, int ch) {
  int vertical = ch == KEY_UP || ch == KEY_DOWN;
  int dir = ch == KEY_UP || ch == KEY_LEFT ? -1 : 1;
  if (vertical && t->focus == P_LOG) {
    t->log_scroll -= dir;
    if (t->log_scroll < 0) t->log_scroll = 0;
  } else if (vertical && t->focus == P_TABLE) {
    t->table_scroll += dir;
    if (t->table_scroll < 0) t->table_scroll = 0;
  } else if (vertical) {
    turn_axis(t, &t->py, &t->px, dir);
    t->axes_chosen = 1;
  } else {
    turn_axis(t, &t->px, &t->py, dir);
    t->axes_chosen = 1;
  }
}

static void on_key(odb_ui_tui *t, int ch) {
  t->redraw = 1;
  if (t->help && ch != 'q' && ch != KEY_RESIZE) {
    t->help = 0;
    return;
  }
  switch (ch) {
  case 'q': case 'Q': quit(t); break;
  case 'p': case 'P': case ' ': toggle_pause(t); break;
  case 's': case 'S': skip(t); break;
  case '?': case 'h': case KEY_F(1): t->help = 1; break;
  case '\t': t->focus = (t->focus + 1) % NPANELS; break;
  case KEY_BTAB: t->focus = (t->focus + NPANELS - 1) % NPANELS; break;
  case KEY_UP: case KEY_DOWN: case KEY_LEFT: case KEY_RIGHT: arrow(t, ch); break;
  case KEY_PPAGE: t->log_scroll += 5; break;
  case KEY_NPAGE:
    t->log_scroll -= 5;
    if (t->log_scroll < 0) t->log_scroll = 0;
    break;
  case KEY_END: t->log_scroll = 0; t->table_scroll = 0; break;
  case KEY_RESIZE: break;
  default: t->redraw = 0; break;
  }
}

/* }====== */

/* {====== panels */

/* Header: scenario, machine, GPU, elapsed time, state. */
static void draw_header(odb_ui_tui *t, int w) {
  char el[32];
  pen p = { 0, 0, w };
  double elapsed = t->o.ctx ? now_seconds() - t->start : t->rp_clock;
  attron(A_REVERSE);
  mvhline(0, 0, ' ', w);
  attroff(A_REVERSE);
  odb_ui_fmt_duration(el, sizeof el, elapsed);
  penf(&p, A_REVERSE | A_BOLD, " odebench ");
  penf(&p, A_REVERSE, " %s ", t->m->info.scenario[0] ? t->m->info.scenario
                                                      : "(scenario)");
  if (t->stopping) penf(&p, A_REVERSE | A_BOLD, " STOPPING ");
  else if (t->paused) penf(&p, A_REVERSE | A_BOLD, " PAUSED ");
  if (!t->o.ctx)
    penf(&p, A_REVERSE | A_BOLD, " REPLAY x%g%s ", t->o.speed,
         t->rp_done ? " (finished)" : "");
  penf(&p, A_REVERSE, "| elapsed %s | %s", el, t->m->info.machine);
  if (t->m->info.gpu[0]) penf(&p, A_REVERSE, " | %s", t->m->info.gpu);
}

/* Footer: the keys, and counters on the right. */
static void draw_footer(odb_ui_tui *t, int y, int w) {
  char right[96];
  pen p = { y, 0, w };
  penf(&p, A_BOLD, " q");
  penf(&p, 0, " quit ");
  penf(&p, A_BOLD, " p");
  penf(&p, 0, " pause ");
  penf(&p, A_BOLD, " s");
  penf(&p, 0, t->o.ctx ? " skip " : " next ");
  penf(&p, A_BOLD, " tab");
  penf(&p, 0, " focus ");
  penf(&p, A_BOLD, " arrows");
  penf(&p, 0, " axes/scroll ");
  penf(&p, A_BOLD, " ?");
  penf(&p, 0, " help");
  if (t->m->dropped)
    snprintf(right, sizeof right, "events %llu (%llu missed) ",
             (unsigned long long)t->m->events,
             (unsigned long long)t->m->dropped);
  else
    snprintf(right, sizeof right, "events %llu ",
             (unsigned long long)t->m->events);
  if ((int)strlen(right) < w - p.x)
    put_at(y, w - (int)strlen(right), (int)strlen(right), color(t, PAIR_DIM),
           right);
}

/* Lines of the running (or last) solve. */
static int solve_lines(odb_ui_tui *t, int y, int x, int w, int rows) {
  const odb_ui_solve *s = &t->m->solve;
  const odb_ui_done *d = odb_ui_model_done(t->m, 0);
  char buf[128];
  pen p;
  int used = 0;
  if (rows <= 0) return 0;
  p = (pen){ y, x, x + w };
  penf(&p, A_BOLD, "solve ");
  penf(&p, 0, "%s  n=%.0f", s->name, s->n);
  if (s->active) penf(&p, color(t, PAIR_GOOD), "  running");
  else if (d) penf(&p, strcmp(d->status, "ok") == 0 ? color(t, PAIR_GOOD)
                                                      : color(t, PAIR_BAD),
                   "  %s", strcmp(d->status, "ok") == 0 ? "done" : d->status);
  if (t->m->nsolves) penf(&p, 0, "  (%ld finished)", t->m->nsolves);
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  if (s->t1 > s->t0) {
    double frac = (s->t - s->t0) / (s->t1 - s->t0);
    int bw = w / 3 < 12 ? 12 : w / 3;
    if (bw > 40) bw = 40;
    bar(buf, bw, frac);
    penf(&p, 0, "%s %3.0f%%  t=%-10.6g of %g", buf, 100 * frac, s->t, s->t1);
    if (s->active && frac > 0.001 && frac < 1) {
      char eta[32];
      odb_ui_fmt_duration(eta, sizeof eta,
                          (s->wall - s->begin_wall) * (1 - frac) / frac);
      penf(&p, 0, "  eta %s", eta);
    }
  } else {
    penf(&p, 0, "t=%-10.6g", s->t);
  }
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  penf(&p, 0, "steps %ld (%ld acc, %ld rej)", s->steps, s->accepted,
       s->rejected);
  if (s->steps_per_s > 0) penf(&p, A_BOLD, "  %.0f steps/s", s->steps_per_s);
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  penf(&p, 0, "h %-10.3g error estimate %.3g", s->h, s->err);
  return ++used;
}

/* Lines of the tuning run: configuration i of n, current, best, state. */
static int tune_lines(odb_ui_tui *t, int y, int x, int w, int rows) {
  const odb_ui_model *m = t->m;
  char buf[64], med[32];
  pen p;
  int used = 0;
  if (rows <= 0) return 0;
  p = (pen){ y, x, x + w };
  penf(&p, A_BOLD, "tuning ");
  penf(&p, 0, "%ld/%ld ", m->tune_i, m->tune_n);
  if (m->tune_n > 0) {
    double frac = (double)m->tune_i / (double)m->tune_n;
    bar(buf, 14, frac);
    penf(&p, 0, "%s", buf);
    if (m->tune_i > 0 && m->tune_i < m->tune_n) {
      char eta[32];
      odb_ui_fmt_duration(eta, sizeof eta, (m->tune_wall - m->tune_begin_wall)
                          / (double)m->tune_i * (double)(m->tune_n - m->tune_i));
      penf(&p, 0, " eta %s", eta);
    }
  }
  if (m->tune_state[0]) penf(&p, color(t, PAIR_DIM), "  %s", m->tune_state);
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  odb_ui_fmt_seconds(med, sizeof med, m->tune_median);
  penf(&p, 0, "current %s  ", m->tune_config);
  if (m->tune_median > 0)
    penf(&p, 0, "%s +- %.1f%%", med, 100 * m->tune_spread);
  else                              /* the state says why: "skipped: ..." */
    penf(&p, color(t, PAIR_BAD), "%s", m->tune_state[0] ? m->tune_state
                                                         : "failed");
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  if (m->have_best) {
    odb_ui_fmt_seconds(med, sizeof med, m->best_median);
    penf(&p, color(t, PAIR_GOOD) | A_BOLD, "best    %s  %s", m->best_config,
         med);
  }
  return ++used;
}

/* The scenario's sweep (ob.progress): "sweep 3/12 [####----] eta 0:42
   label" on one line. */
static int sweep_line(odb_ui_tui *t, int y, int x, int w, int rows) {
  const odb_ui_sweep *s = &t->m->sweep;
  char buf[64], eta[32];
  double left = odb_ui_sweep_eta(s);
  pen p = { y, x, x + w };
  if (rows <= 0 || !s->active) return 0;
  penf(&p, A_BOLD, "sweep ");
  penf(&p, 0, "%ld/%ld ", s->i, s->n);
  bar(buf, 14, (double)s->i / (double)s->n);
  penf(&p, s->i >= s->n ? color(t, PAIR_GOOD) : 0, "%s", buf);
  if (left > 0) {
    odb_ui_fmt_duration(eta, sizeof eta, left);
    penf(&p, 0, " eta %s", eta);
  } else if (s->i >= s->n) {
    penf(&p, color(t, PAIR_GOOD), " done");
  }
  if (s->label[0]) penf(&p, color(t, PAIR_DIM), "  %s", s->label);
  return 1;
}

/* The scenario's metrics on the remaining rows, wrapped. */
static void metric_lines(odb_ui_tui *t, int y, int x, int w, int rows) {
  pen p = { y, x, x + w };
  int row = 0;
  if (rows <= 0 || t->m->nmetrics == 0) return;
  penf(&p, A_BOLD, "metrics ");
  for (int k = 0; k < t->m->nmetrics; ++k) {
    const odb_ui_metric *mt = &t->m->metrics[k];
    char item[128];
    snprintf(item, sizeof item, "%s=%.4g%s%s  ", mt->name, mt->value,
             mt->unit[0] ? " " : "", mt->unit);
    if (p.x + (int)strlen(item) > p.end && p.x > x + 8) {
      if (++row >= rows) return;
      p = (pen){ y + row, x + 8, x + w };
    }
    penf(&p, 0, "%s", item);
  }
}

static void draw_activity(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 2, used = 0, iw = w - 4;
  draw_box(t, y, x, h, w, "Activity", t->focus == P_ACTIVITY);
  used += sweep_line(t, y + 1, x + 2, iw, rows);
  if (t->m->solve.name[0]) {
    used += solve_lines(t, y + 1 + used, x + 2, iw,
                        t->m->tuning ? 3 : rows - used);
  }
  if (t->m->tuning) used += tune_lines(t, y + 1 + used, x + 2, iw, rows - used);
  if (!t->m->solve.name[0] && !t->m->tuning && !t->m->sweep.active) {
    put_at(y + 1, x + 2, iw, color(t, PAIR_DIM),
           t->o.ctx ? "waiting for the first solve ..." : "replay starting ...");
    used = 1;
  }
  metric_lines(t, y + 1 + used, x + 2, iw, rows - used);
}

/* A column bar graph of the newest samples, scaled to top. */
static void draw_graph(odb_ui_tui *t, int y, int x, int h, int w, double top) {
  static const char *const eighths[] = { " ", "\u2581", "\u2582", "\u2583",
                                         "\u2584", "\u2585", "\u2586",
                                         "\u2587", "\u2588" };
  static const char ascii[] = " ..--==+#";
  int n = odb_ui_model_nspark(t->m);
  attr_t a = color(t, PAIR_GOOD);
  if (!(top > 0) || h <= 0) return;
  attron(a);
  for (int c = 0; c < w && c < n; ++c) {
    double v = odb_ui_model_spark(t->m, c);
    int level = (int)(v / top * h * 8 + 0.5), col = x + w - 1 - c;
    for (int r = 0; r < h; ++r) {
      int cell = level - r * 8;
      if (cell <= 0) break;
      if (cell > 8) cell = 8;
      if (t->utf8) mvaddstr(y + h - 1 - r, col, eighths[cell]);
      else mvaddch(y + h - 1 - r, col, (chtype)ascii[cell]);
    }
  }
  attroff(a);
}

static void draw_throughput(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  int iw = w - 4, rows = h - 2;
  double floor_gbs = m->info.floor_read * 1e-9;
  pen p = { y + 1, x + 2, x + 2 + iw };
  draw_box(t, y, x, h, w, "Throughput", t->focus == P_THROUGHPUT);
  if (odb_ui_model_nspark(m) == 0) {
    put_at(y + 1, x + 2, iw, color(t, PAIR_DIM),
           m->solve.active ? "measuring ..." : "no throughput yet");
  } else {
    penf(&p, A_BOLD, "%.2f GB/s", m->gbs);
    if (m->floor_pct >= 0)
      penf(&p, m->floor_pct >= 80 ? color(t, PAIR_GOOD)
               : m->floor_pct >= 50 ? color(t, PAIR_WARN) : color(t, PAIR_BAD),
           "  %.0f%% of floor", m->floor_pct);
    penf(&p, 0, "  %.2f GFLOP/s", m->gflops);
    draw_graph(t, y + 2, x + 2, rows - 2, iw,
               fmax(m->peak_gbs, floor_gbs) * 1.05);
  }
  p = (pen){ y + h - 2, x + 2, x + 2 + iw };
  if (m->peak_gbs > 0) penf(&p, 0, "peak %.2f GB/s  ", m->peak_gbs);
  if (floor_gbs > 0)
    penf(&p, color(t, PAIR_DIM), "floor (1 thread): read %.1f, copy %.1f GB/s",
         floor_gbs, m->info.floor_copy * 1e-9);
  else
    penf(&p, color(t, PAIR_DIM), "floor unknown (odebench info)");
}

/* The best configurations by median; ties within the spread marked '='. */
static void draw_best(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  int rows = h - 3, iw = w - 4, cw = iw - 32;
  char title[64];
  snprintf(title, sizeof title, "Best configurations (%d evaluated)",
           m->nevals);
  draw_box(t, y, x, h, w, title, t->focus == P_TABLE);
  if (cw < 12) cw = 12;
  putf_at(y + 1, x + 2, iw, A_BOLD | A_UNDERLINE, "%3s  %-*s %10s %7s %5s",
          "#", cw, "configuration", "median", "spread", "i");
  if (t->table_scroll > m->nbest - rows) t->table_scroll = m->nbest - rows;
  if (t->table_scroll < 0) t->table_scroll = 0;
  for (int r = 0; r < rows && r + t->table_scroll < m->nbest; ++r) {
    int k = r + t->table_scroll;
    const odb_ui_eval *e = &m->evals[m->best[k]];
    const odb_ui_eval *b = &m->evals[m->best[0]];
    char med[32];
    int tied = k > 0 && odb_ui_tied(e, b);
    attr_t a = k == 0 ? (A_BOLD | color(t, PAIR_GOOD))
                      : tied ? color(t, PAIR_GOOD) : 0;
    odb_ui_fmt_seconds(med, sizeof med, e->median);
    putf_at(y + 2 + r, x + 2, iw, a, "%3d%c %-*.*s %10s %6.1f%% %5ld", k + 1,
            tied ? '=' : ' ', cw, cw, e->config, med, 100 * e->spread, e->i);
  }
}

/* Without tuning: the finished solves, newest first. */
static void draw_solves(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 3, iw = w - 4, cw = iw - 40;
  draw_box(t, y, x, h, w, "Finished solves", t->focus == P_TABLE);
  if (cw < 12) cw = 12;
  putf_at(y + 1, x + 2, iw, A_BOLD | A_UNDERLINE, "%-*s %8s %10s %7s %6s %5s",
          cw, "solve", "steps", "time", "GB/s", "floor", "");
  long kept = t->m->nsolves < ODB_UI_DONE_MAX ? t->m->nsolves
                                              : ODB_UI_DONE_MAX;
  if (t->table_scroll > kept - rows) t->table_scroll = (int)(kept - rows);
  if (t->table_scroll < 0) t->table_scroll = 0;
  if (t->m->nsolves == 0)
    put_at(y + 2, x + 2, iw, color(t, PAIR_DIM), "none yet");
  for (int r = 0; r < rows; ++r) {
    const odb_ui_done *d = odb_ui_model_done(t->m, r + t->table_scroll);
    char sec[32], fl[16];
    if (!d) break;
    odb_ui_fmt_seconds(sec, sizeof sec, d->seconds);
    if (d->floor_pct >= 0) snprintf(fl, sizeof fl, "%.0f%%", d->floor_pct);
    else snprintf(fl, sizeof fl, "-");
    putf_at(y + 2 + r, x + 2, iw, strcmp(d->status, "ok") ? color(t, PAIR_BAD)
                                                          : 0,
            "%-*.*s %8ld %10s %7.2f %6s %5.5s", cw, cw, d->name, d->steps, sec,
            d->gbs, fl, strcmp(d->status, "ok") ? d->status : "");
  }
}

/* Without tuning: the scenario's metrics. */
static void draw_metrics(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 2, iw = w - 4;
  draw_box(t, y, x, h, w, "Metrics", t->focus == P_HEAT);
  if (t->m->nmetrics == 0)
    put_at(y + 1, x + 2, iw, color(t, PAIR_DIM),
           "none yet (ob.metric(name, value) in a scenario)");
  for (int r = 0; r < rows && r < t->m->nmetrics; ++r) {
    const odb_ui_metric *mt = &t->m->metrics[t->m->nmetrics - 1 - r];
    putf_at(y + 1 + r, x + 2, iw, 0, "%-24.24s %14.6g %s", mt->name, mt->value,
            mt->unit);
  }
}

/* Colour level of v in [lo, hi] on a log scale: 0 fast .. levels-1 slow. */
static int heat_level(double v, double lo, double hi, int levels) {
  double f;
  if (!(hi > lo) || !(v > 0)) return 0;
  f = (log(v) - log(lo)) / (log(hi) - log(lo));
  if (f < 0) f = 0;
  if (f > 1) f = 1;
  return (int)(f * (levels - 1) + 0.5);
}

/* v in at most room columns: "1.23 ms", "1.23ms", "1.2ms", "1ms" or "". */
static void compact_seconds(char *buf, int cap, double v, int room) {
  static const char *const units[] = { "ns", "us", "ms", "s" };
  double scaled = v * 1e9;
  int u = 0;
  odb_ui_fmt_seconds(buf, cap, v);
  if ((int)strlen(buf) <= room) return;
  while (u < 3 && scaled >= 1000) {
    scaled /= 1000;
    ++u;
  }
  for (int prec = 3; prec >= 1; --prec) {
    snprintf(buf, (size_t)cap, "%.*g%s", prec, scaled, units[u]);
    if ((int)strlen(buf) <= room) return;
  }
  buf[0] = '\0';
}

/* One heatmap cell: its time, coloured (or shaded without colour). */
static void heat_cell(odb_ui_tui *t, int y, int x, int cw, double v,
                      double lo, double hi, int best) {
  static const char *const shades[] = { "\u2591", "\u2592", "\u2593",
                                        "\u2588" };
  static const char ascii_shades[] = ".:+#";
  char text[32], cell[40];
  int lvl, tw = t->colors ? cw - 1 : cw - 2;   /* room for the time */
  if (isnan(v)) {
    putf_at(y, x, cw, color(t, PAIR_DIM), "%*s", cw - 1, ".");
    return;
  }
  compact_seconds(text, sizeof text, v, tw);
  snprintf(cell, sizeof cell, "%*s%c", tw, text, best ? '*' : ' ');
  if (t->colors) {
    lvl = heat_level(v, lo, hi, t->heat_levels);
    put_at(y, x, cw, COLOR_PAIR(PAIR_HEAT + lvl) | (best ? A_BOLD : 0), cell);
    return;
  }
  lvl = heat_level(v, lo, hi, 4);     /* the shade takes the last column */
  put_at(y, x, cw - 1, best ? A_BOLD : 0, cell);
  if (t->utf8) mvaddstr(y, x + cw - 1, shades[lvl]);
  else mvaddch(y, x + cw - 1, (chtype)ascii_shades[lvl]);
}

/* The legend under the heatmap: the gradient from fast to slow. */
static void heat_legend(odb_ui_tui *t, int y, int x, int w, double lo,
                        double hi) {
  char a[32], b[32];
  pen p = { y, x, x + w };
  odb_ui_fmt_seconds(a, sizeof a, lo);
  odb_ui_fmt_seconds(b, sizeof b, hi);
  penf(&p, 0, "fast %s ", a);
  if (t->colors)
    for (int k = 0; k < t->heat_levels && p.x < p.end; ++k)
      p.x += put_at(y, p.x, 1, COLOR_PAIR(PAIR_HEAT + k), " ");
  else
    penf(&p, 0, t->utf8 ? "" : ".:+#");
  if (!t->colors && t->utf8 && p.x + 4 <= p.end) {
    mvaddstr(y, p.x, "\u2591\u2592\u2593\u2588");
    p.x += 4;
  }
  penf(&p, 0, " %s slow   * best", b);
}

/* The longest value of a parameter. */
static int longest(const odb_ui_param *p) {
  int n = 0;
  for (int k = 0; k < p->nvalues; ++k)
    if ((int)strlen(p->values[k]) > n) n = (int)strlen(p->values[k]);
  return n;
}

/* Width of the row labels and of a cell for Y on the rows and X on the
   columns in iw columns. */
static void heat_widths(const odb_ui_param *X, const odb_ui_param *Y, int one,
                        int iw, int *lw, int *cw) {
  *lw = one ? 1 : (int)strlen(Y->name);
  if (!one && longest(Y) > *lw) *lw = longest(Y);
  if (*lw > 10) *lw = 10;
  *cw = (iw - *lw - 1) / (X->nvalues > 0 ? X->nvalues : 1);
  if (*cw > 9) *cw = 9;
  if (*cw < 3) *cw = 3;
}

/* "PipeDb1mt" in 5 columns: "P~1mt" (the ends tell values apart). */
static void elide(char *dst, size_t cap, const char *src, int room) {
  int n = (int)strlen(src);
  if (n <= room || room < 3) snprintf(dst, cap, "%.*s", room, src);
  else snprintf(dst, cap, "%c~%s", src[0], src + n - (room - 2));
}

/* Until the user picks axes: the parameter whose values fit as column
   labels goes on the columns. */
static void auto_axes(odb_ui_tui *t, int iw) {
  const odb_ui_model *m = t->m;
  int lw, cw;
  if (t->axes_chosen || m->nparams < 2 || t->px == t->py) return;
  heat_widths(&m->params[t->px], &m->params[t->py], 0, iw, &lw, &cw);
  if (longest(&m->params[t->px]) <= cw - 1) return;
  heat_widths(&m->params[t->py], &m->params[t->px], 0, iw, &lw, &cw);
  if (longest(&m->params[t->py]) <= cw - 1) {
    int k = t->px;
    t->px = t->py;
    t->py = k;
  }
}

static void draw_heat(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  const odb_ui_param *X, *Y;
  double cells[ODB_UI_VALUE_MAX * ODB_UI_VALUE_MAX], lo = INFINITY, hi = 0;
  int iw = w - 4, nx, ny, lw, cw, rows, cols;
  char title[96], label[32];
  if (t->px >= m->nparams) t->px = 0;
  if (t->py >= m->nparams || (t->py == t->px && m->nparams > 1))
    t->py = t->px == 0 && m->nparams > 1 ? 1 : 0;
  auto_axes(t, iw);
  if (m->nparams == 0) {
    draw_box(t, y, x, h, w, "Heatmap", t->focus == P_HEAT);
    put_at(y + 1, x + 2, iw, color(t, PAIR_DIM),
           "no k=v parameters in the configurations");
    return;
  }
  X = &m->params[t->px];
  Y = &m->params[t->py];
  if (t->px == t->py) snprintf(title, sizeof title, "Heatmap: %s", X->name);
  else snprintf(title, sizeof title, "Heatmap: %s (rows) x %s (columns)",
                Y->name, X->name);
  draw_box(t, y, x, h, w, title, t->focus == P_HEAT);
  odb_ui_model_heat(m, t->px, t->py, cells);
  nx = X->nvalues;
  ny = t->px == t->py ? 1 : Y->nvalues;
  for (int k = 0; k < nx * ny; ++k)
    if (!isnan(cells[k])) {
      lo = fmin(lo, cells[k]);
      hi = fmax(hi, cells[k]);
    }
  heat_widths(X, Y, t->px == t->py, iw, &lw, &cw);
  cols = (iw - lw - 1) / cw;
  if (cols > nx) cols = nx;
  rows = h - 4;
  if (rows > ny) rows = ny;
  putf_at(y + 1, x + 2, lw, A_BOLD, "%-*.*s", lw, lw,
          t->px == t->py ? "" : Y->name);
  for (int c = 0; c < cols; ++c) {
    elide(label, sizeof label, X->values[X->order[c]], cw - 1);
    putf_at(y + 1, x + 3 + lw + c * cw, cw, A_BOLD | A_UNDERLINE, "%*s",
            cw - 1, label);
  }
  if (cols < nx) put_at(y + 1, x + 2 + iw - 1, 1, A_BOLD, ">");
  for (int r = 0; r < rows; ++r) {
    elide(label, sizeof label, t->px == t->py ? "" : Y->values[Y->order[r]],
          lw);
    putf_at(y + 2 + r, x + 2, lw, A_BOLD, "%*s", lw, label);
    for (int c = 0; c < cols; ++c) {
      double v = cells[r * nx + c];
      heat_cell(t, y + 2 + r, x + 3 + lw + c * cw, cw, v, lo, hi,
                !isnan(v) && v == lo);
    }
  }
  heat_legend(t, y + h - 2, x + 2, iw, lo, hi);
}

static void draw_log(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 2, iw = w - 4;
  long avail = t->m->nlog < ODB_UI_LOG_MAX ? t->m->nlog : ODB_UI_LOG_MAX;
  char title[48];
  if (t->log_scroll > avail - rows) t->log_scroll = (int)(avail - rows);
  if (t->log_scroll < 0) t->log_scroll = 0;
  if (t->log_scroll) snprintf(title, sizeof title, "Log (%d lines up; End: "
                              "newest)", t->log_scroll);
  else snprintf(title, sizeof title, "Log");
  draw_box(t, y, x, h, w, title, t->focus == P_LOG);
  for (int r = 0; r < rows; ++r) {
    const odb_ui_logline *l = odb_ui_model_logline(t->m, r + t->log_scroll);
    attr_t a = 0;
    if (!l) break;
    if (l->level == ODB_LOG_ERROR) a = color(t, PAIR_BAD) | A_BOLD;
    else if (l->level == ODB_LOG_WARN) a = color(t, PAIR_WARN);
    if (l->wall > -1e7 && l->wall < 1e7)   /* else a damaged recording's */
      putf_at(y + h - 2 - r, x + 2, iw, a, "[%7.1fs] %s", l->wall, l->text);
    else putf_at(y + h - 2 - r, x + 2, iw, a, "[      ?s] %s", l->text);
  }
}

static void draw_help(odb_ui_tui *t, int H, int W) {
  static const char *const lines[] = {
    "q          stop the run after its current step and write the results",
    "           (a replay: quit); Ctrl-C does the same",
    "p, space   pause / resume (the engine waits at its next step)",
    "s          skip the configuration the tuner is measuring",
    "           (a replay: jump to the next solve or configuration)",
    "tab        focus the next panel (shift-tab: the previous one)",
    "left/right heatmap: parameter on the columns",
    "up/down    heatmap: parameter on the rows;",
    "           focused log or table: scroll",
    "PgUp/PgDn  scroll the log a page; End: back to the newest",
    "?          this help (any key closes it)",
    "",
    "colours: NO_COLOR=1 turns them off; --ui plain gives lines instead",
  };
  int n = (int)(sizeof lines / sizeof lines[0]), bw = 74, bh = n + 4;
  int y = (H - bh) / 2, x = (W - bw) / 2;
  if (x < 0) x = 0;
  if (y < 0) y = 0;
  for (int r = 0; r < bh; ++r) mvhline(y + r, x, ' ', bw);
  draw_box(t, y, x, bh, bw, "Keys", 1);
  for (int k = 0; k < n; ++k) put_at(y + 2 + k, x + 2, bw - 4, 0, lines[k]);
}

static void draw_too_small(odb_ui_tui *t, int H, int W) {
  char a[96], b[96];
  const char *c = t->o.ctx ? "the run goes on; q stops it" : "q quits";
  snprintf(a, sizeof a, "terminal too small (%dx%d)", W, H);
  snprintf(b, sizeof b, "the dashboard needs at least %dx%d", MIN_W, MIN_H);
  put_at(H / 2 - 1, (W - (int)strlen(a)) / 2 > 0 ? (W - (int)strlen(a)) / 2 : 0,
         W, A_BOLD, a);
  put_at(H / 2, (W - (int)strlen(b)) / 2 > 0 ? (W - (int)strlen(b)) / 2 : 0, W,
         0, b);
  put_at(H / 2 + 1, (W - (int)strlen(c)) / 2 > 0 ? (W - (int)strlen(c)) / 2 : 0,
         W, 0, c);
}

/* The whole screen, drawn into curses' buffer and sent as one update. */
static void draw(odb_ui_tui *t) {
  int H = LINES, W = COLS, log_h, mid_h, left_w, y;
  erase();
  if (W < MIN_W || H < MIN_H) {
    draw_too_small(t, H, W);
    refresh();
    return;
  }
  log_h = (H - 2 - TOP_H) / 4;
  if (log_h < 5) log_h = 5;
  mid_h = H - 2 - TOP_H - log_h;
  left_w = W * 11 / 20;
  draw_header(t, W);
  y = 1;
  draw_activity(t, y, 0, TOP_H, left_w);
  draw_throughput(t, y, left_w, TOP_H, W - left_w);
  y += TOP_H;
  if (t->m->tuning) {
    draw_best(t, y, 0, mid_h, left_w);
    draw_heat(t, y, left_w, mid_h, W - left_w);
  } else {
    draw_solves(t, y, 0, mid_h, left_w);
    draw_metrics(t, y, left_w, mid_h, W - left_w);
  }
  y += mid_h;
  draw_log(t, y, 0, log_h, W);
  draw_footer(t, H - 1, W);
  if (t->help) draw_help(t, H, W);
  refresh();
}

/* }====== */

/* {====== the thread */

/* Colours unless NO_COLOR is set (non-empty) or the terminal has none. */
static void setup_colors(odb_ui_tui *t) {
  const char *nc = getenv("NO_COLOR");
  const short *grad;
  t->colors = has_colors() && !(nc && *nc);
  if (!t->colors) return;
  start_color();
  use_default_colors();
  init_pair(PAIR_FOCUS, COLOR_CYAN, -1);
  init_pair(PAIR_GOOD, COLOR_GREEN, -1);
  init_pair(PAIR_WARN, COLOR_YELLOW, -1);
  init_pair(PAIR_BAD, COLOR_RED, -1);
  init_pair(PAIR_DIM, COLOR_BLUE, -1);
  if (COLORS >= 256 && COLOR_PAIRS > PAIR_HEAT + 11) {
    grad = heat256;
    t->heat_levels = (int)(sizeof heat256 / sizeof heat256[0]);
  } else {
    grad = heat8;
    t->heat_levels = (int)(sizeof heat8 / sizeof heat8[0]);
  }
  for (int k = 0; k < t->heat_levels; ++k)
    init_pair((short)(PAIR_HEAT + k), COLOR_BLACK, grad[k]);
}

/* newterm and the modes of htop/nvtop: cbreak (Ctrl-C still signals),
   no echo, keypad, hidden cursor, short ESC delay, non-blocking getch. */
static int start_curses(odb_ui_tui *t) {
  t->scr = newterm(NULL, t->term_out, stdin);
  if (!t->scr) {
    snprintf(t->why, sizeof t->why, "curses cannot use terminal '%s'",
             getenv("TERM") ? getenv("TERM") : "");
    return 0;
  }
  set_term(t->scr);
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  nodelay(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  setup_colors(t);
  g_leave_len = 0;
  add_leave_cap("sgr0");
  add_leave_cap("cnorm");
  add_leave_cap("rmcup");
  return 1;
}

/* Tells the starting thread whether curses came up. */
static void report_start(odb_ui_tui *t, int ok) {
  pthread_mutex_lock(&t->lock);
  t->started = ok ? 1 : -1;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
}

/* Waits for input, captured output or the next frame; reads what came. */
static void wait_input(odb_ui_tui *t, double next_frame) {
  struct pollfd fds[4];
  int nfds = 0, ms = (int)((next_frame - now_seconds()) * 1000) + 1;
  char junk[64];
  if (ms < 0) ms = 0;
  fds[nfds++] = (struct pollfd){ .fd = 0, .events = POLLIN };
  fds[nfds++] = (struct pollfd){ .fd = t->wake[0], .events = POLLIN };
  for (int s = 0; s < 2; ++s)
    if (t->cap_fd[s][0] >= 0)
      fds[nfds++] = (struct pollfd){ .fd = t->cap_fd[s][0], .events = POLLIN };
  if (poll(fds, (nfds_t)nfds, ms) > 0 && (fds[1].revents & POLLIN))
    while (read(t->wake[0], junk, sizeof junk) > 0) {
    }
  cap_read(t, 0);
  cap_read(t, 1);
}

static void *tui_main(void *arg) {
  odb_ui_tui *t = arg;
  double next_frame;
  int ch;
  pthread_setname_np(pthread_self(), "odb-tui");   /* for top -H */
  if (!start_curses(t)) {
    report_start(t, 0);
    return NULL;
  }
  report_start(t, 1);
  t->start = t->rp_last = now_seconds();
  next_frame = t->start;
  while (!t->stop && !t->quit) {
    wait_input(t, next_frame);
    while ((ch = getch()) != ERR) on_key(t, ch);
    if (t->redraw || now_seconds() >= next_frame) {
      if (t->o.ctx) feed_live(t);
      else feed_replay(t);
      draw(t);
      t->redraw = 0;
      if (now_seconds() >= next_frame) next_frame = now_seconds() + FRAME;
    }
  }
  cap_flush_line(t, 0);
  cap_flush_line(t, 1);
  g_active = 0;
  endwin();
  delscreen(t->scr);
  t->scr = NULL;
  pthread_mutex_lock(&t->lock);
  t->finished = 1;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

/* }====== */

/* {====== start and stop */

const char *odb_ui_tui_unavailable(void) {
  const char *term = getenv("TERM");
  if (!isatty(STDIN_FILENO)) return "stdin is not a terminal";
  if (!isatty(STDOUT_FILENO)) return "stdout is not a terminal";
  if (!term || !*term) return "TERM is not set";
  if (strcmp(term, "dumb") == 0) return "TERM is dumb";
  return NULL;
}

/* Closes fd if it is open and marks it closed. */
static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* A pipe whose read end does not block; both ends close on exec. */
static int make_pipe(int fd[2]) {
  if (pipe2(fd, O_CLOEXEC) != 0) {
    fd[0] = fd[1] = -1;
    return 0;
  }
  fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) | O_NONBLOCK);
  return 1;
}

/* Frees what start set up (the thread is not running). */
static void release(odb_ui_tui *t) {
  for (int s = 0; s < 2; ++s) {
    close_fd(&t->cap_fd[s][0]);
    close_fd(&t->cap_fd[s][1]);
    free(t->cap[s].data);
  }
  close_fd(&t->wake[0]);
  close_fd(&t->wake[1]);
  if (t->term_out) fclose(t->term_out);   /* closes term_fd */
  else close_fd(&t->term_fd);
  if (t->old_ctype[0]) setlocale(LC_CTYPE, t->old_ctype);
  pthread_cond_destroy(&t->cond);
  pthread_mutex_destroy(&t->lock);
  if (t->m) odb_ui_model_free(t->m);
  free(t->m);
  free(t->rp_at);
  free(t);
}

/* Sends fd 1 (and fd 2 when it is the terminal) into the capture pipes. */
static void begin_capture(odb_ui_tui *t) {
  fflush(stdout);
  fflush(stderr);
  setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
  for (int s = 0; s < 2; ++s) {
    int fd = s ? STDERR_FILENO : STDOUT_FILENO;
    t->saved_fd[s] = -1;
    if (s == 1 && !isatty(fd)) {
      close_fd(&t->cap_fd[s][0]);
      close_fd(&t->cap_fd[s][1]);
      continue;
    }
    t->saved_fd[s] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (t->saved_fd[s] < 0 || dup2(t->cap_fd[s][1], fd) < 0) {
      close_fd(&t->saved_fd[s]);
      continue;
    }
    close_fd(&t->cap_fd[s][1]);
  }
}

/* Puts fds 1 and 2 back and collects what is still in the pipes. */
static void end_capture(odb_ui_tui *t) {
  fflush(stdout);
  fflush(stderr);
  for (int s = 0; s < 2; ++s) {
    int fd = s ? STDERR_FILENO : STDOUT_FILENO;
    if (t->saved_fd[s] < 0) continue;
    dup2(t->saved_fd[s], fd);
    close_fd(&t->saved_fd[s]);
    cap_read(t, s);
  }
}

odb_status odb_ui_tui_start(const odb_ui_tui_opts *o, odb_ui_tui **out) {
  odb_ui_tui *t;
  const char *why = odb_ui_tui_unavailable(), *loc;
  pthread_condattr_t ca;
  if (!o || !out || (!o->ctx && (!o->replay || o->nreplay < 0)))
    return ODB_FAIL(ODB_ERR_ARG, "dashboard: a context or a replay needed");
  *out = NULL;
  if (why) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s", why);
  t = calloc(1, sizeof *t);
  if (!t) return ODB_FAIL(ODB_ERR_NOMEM, "dashboard: out of memory");
  t->o = *o;
  if (!(t->o.speed > 0)) t->o.speed = 1;
  t->term_fd = t->wake[0] = t->wake[1] = -1;
  for (int s = 0; s < 2; ++s) t->cap_fd[s][0] = t->cap_fd[s][1] = -1;
  pthread_mutex_init(&t->lock, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&t->cond, &ca);
  pthread_condattr_destroy(&ca);
  t->m = malloc(sizeof *t->m);
  t->rp_at = malloc((size_t)(o->ctx ? 1 : o->nreplay + 1) * sizeof *t->rp_at);
  if (t->rp_at && !o->ctx)
    odb_ui_replay_times(o->replay, o->nreplay,
                        ODB_UI_REPLAY_MAX_WAIT * t->o.speed, t->rp_at);
  t->term_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (!t->m || !t->rp_at || t->term_fd < 0 || !make_pipe(t->wake) ||
      !make_pipe(t->cap_fd[0]) || !make_pipe(t->cap_fd[1]) ||
      !(t->term_out = fdopen(t->term_fd, "w"))) {
    release(t);
    return ODB_FAIL(ODB_ERR_IO, "dashboard: cannot set up the terminal: %s",
                    strerror(errno));
  }
  fcntl(t->wake[1], F_SETFL, fcntl(t->wake[1], F_GETFL) | O_NONBLOCK);
  odb_ui_model_init(t->m, &o->info);
  if (o->ctx) t->cursor = odb_event_last_seq(o->ctx->events);
  loc = setlocale(LC_CTYPE, NULL);
  snprintf(t->old_ctype, sizeof t->old_ctype, "%s", loc ? loc : "C");
  setlocale(LC_CTYPE, "");      /* LC_CTYPE only: numbers keep '.' */
  t->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  tcgetattr(t->term_fd, &g_termios);
  if (pthread_create(&t->thread, NULL, tui_main, t) != 0) {
    release(t);
    return ODB_FAIL(ODB_ERR_INTERNAL, "dashboard: cannot start its thread");
  }
  pthread_mutex_lock(&t->lock);
  while (t->started == 0) pthread_cond_wait(&t->cond, &t->lock);
  pthread_mutex_unlock(&t->lock);
  if (t->started < 0) {
    odb_status st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s", t->why);
    pthread_join(t->thread, NULL);
    release(t);
    return st;
  }
  g_tty = t->term_fd;
  g_active = 1;
  begin_capture(t);
  *out = t;
  return ODB_OK;
}

void odb_ui_tui_wait(odb_ui_tui *t) {
  if (!t) return;
  pthread_mutex_lock(&t->lock);
  while (!t->finished) pthread_cond_wait(&t->cond, &t->lock);
  pthread_mutex_unlock(&t->lock);
}

/* Only a store and a write(2): safe in a signal handler. */
void odb_ui_tui_interrupt(odb_ui_tui *t) {
  ssize_t w;
  if (!t) return;
  t->quit = 1;
  w = write(t->wake[1], "q", 1);
  (void)w;
}

/* The captured output goes to where it was meant to go, then a note of
   what did not fit. */
void odb_ui_tui_stop(odb_ui_tui *t) {
  ssize_t w;
  if (!t) return;
  fflush(stdout);
  fflush(stderr);
  t->stop = 1;
  w = write(t->wake[1], "x", 1);
  (void)w;
  pthread_join(t->thread, NULL);
  g_active = 0;
  g_tty = -1;
  end_capture(t);
  for (int s = 0; s < 2; ++s) {
    int fd = s ? STDERR_FILENO : STDOUT_FILENO;
    write_all(fd, t->cap[s].data, t->cap[s].len);
    if (t->cap[s].dropped)
      fprintf(stderr, "odebench: %zu bytes of %s output were dropped while "
              "the dashboard ran\n", t->cap[s].dropped, s ? "error" : "");
  }
  release(t);
}

/* }====== */
