/* odb_ui_tui_draw.c - the dashboard's layout: where each pane goes on the
   screen, the header and footer, the log pane, the help, and the small
   drawing helpers every pane uses (clipped text, a pen, bars, boxes). */
#include "odb_ui_tui_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* {====== helpers */

/* Seconds on the monotonic clock. */
double tui_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Attribute of a colour pair, or 0 without colours. */
attr_t tui_color(const odb_ui_tui *t, int pair) {
  return t->colors ? COLOR_PAIR(pair) : 0;
}

/* Writes s at (y, x), clipped to w columns; returns the columns used.
   Control characters show as spaces. Assumes ASCII-width text. */
int tui_put(int y, int x, int w, attr_t a, const char *s) {
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

/* printf form of tui_put. */
int tui_putf(int y, int x, int w, attr_t a, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return tui_put(y, x, w, a, buf);
}

void tui_penf(pen *p, attr_t a, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  p->x += tui_put(p->y, p->x, p->end - p->x, a, buf);
}

/* "[#####-----]" of width w (w >= 3) for a fraction in [0, 1]. */
void tui_bar(char *buf, int w, double frac) {
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
void tui_box(const odb_ui_tui *t, int y, int x, int h, int w,
                     const char *title, int focused) {
  attr_t a = focused ? (A_BOLD | tui_color(t, PAIR_FOCUS)) : A_NORMAL;
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
  tui_putf(y, x + 2, w - 4, focused ? (A_BOLD | A_REVERSE) : A_BOLD, " %s ",
          title);
}

/* }====== */

/* {====== layout: header, footer, log, help */

/* Header: scenario, machine, GPU, elapsed time, state. */
static void draw_header(odb_ui_tui *t, int w) {
  char el[32];
  pen p = { 0, 0, w };
  double elapsed = t->o.ctx ? tui_now() - t->start : t->rp_clock;
  attron(A_REVERSE);
  mvhline(0, 0, ' ', w);
  attroff(A_REVERSE);
  odb_ui_fmt_duration(el, sizeof el, elapsed);
  tui_penf(&p, A_REVERSE | A_BOLD, " odebench ");
  tui_penf(&p, A_REVERSE, " %s ", t->m->info.scenario[0] ? t->m->info.scenario
                                                      : "(scenario)");
  if (t->stopping) tui_penf(&p, A_REVERSE | A_BOLD, " STOPPING ");
  else if (t->paused) tui_penf(&p, A_REVERSE | A_BOLD, " PAUSED ");
  if (!t->o.ctx)
    tui_penf(&p, A_REVERSE | A_BOLD, " REPLAY x%g%s ", t->o.speed,
         t->rp_done ? " (finished)" : "");
  tui_penf(&p, A_REVERSE, "| elapsed %s | %s", el, t->m->info.machine);
  if (t->m->info.gpu[0]) tui_penf(&p, A_REVERSE, " | %s", t->m->info.gpu);
}

/* Footer: the keys, and counters on the right. */
static void draw_footer(odb_ui_tui *t, int y, int w) {
  char right[96];
  pen p = { y, 0, w };
  tui_penf(&p, A_BOLD, " q");
  tui_penf(&p, 0, " quit ");
  tui_penf(&p, A_BOLD, " p");
  tui_penf(&p, 0, " pause ");
  tui_penf(&p, A_BOLD, " s");
  tui_penf(&p, 0, t->o.ctx ? " skip " : " next ");
  tui_penf(&p, A_BOLD, " tab");
  tui_penf(&p, 0, " focus ");
  tui_penf(&p, A_BOLD, " arrows");
  tui_penf(&p, 0, " axes/scroll ");
  tui_penf(&p, A_BOLD, " ?");
  tui_penf(&p, 0, " help");
  if (t->m->dropped)
    snprintf(right, sizeof right, "events %llu (%llu missed) ",
             (unsigned long long)t->m->events,
             (unsigned long long)t->m->dropped);
  else
    snprintf(right, sizeof right, "events %llu ",
             (unsigned long long)t->m->events);
  if ((int)strlen(right) < w - p.x)
    tui_put(y, w - (int)strlen(right), (int)strlen(right), tui_color(t, PAIR_DIM),
           right);
}

/* Lines of the running (or last) solve. */

static void draw_log(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 2, iw = w - 4;
  long avail = t->m->nlog < ODB_UI_LOG_MAX ? t->m->nlog : ODB_UI_LOG_MAX;
  char title[48];
  if (t->log_scroll > avail - rows) t->log_scroll = (int)(avail - rows);
  if (t->log_scroll < 0) t->log_scroll = 0;
  if (t->log_scroll) snprintf(title, sizeof title, "Log (%d lines up; End: "
                              "newest)", t->log_scroll);
  else snprintf(title, sizeof title, "Log");
  tui_box(t, y, x, h, w, title, t->focus == P_LOG);
  for (int r = 0; r < rows; ++r) {
    const odb_ui_logline *l = odb_ui_model_logline(t->m, r + t->log_scroll);
    attr_t a = 0;
    if (!l) break;
    if (l->level == ODB_LOG_ERROR) a = tui_color(t, PAIR_BAD) | A_BOLD;
    else if (l->level == ODB_LOG_WARN) a = tui_color(t, PAIR_WARN);
    if (l->wall > -1e7 && l->wall < 1e7)   /* else a damaged recording's */
      tui_putf(y + h - 2 - r, x + 2, iw, a, "[%7.1fs] %s", l->wall, l->text);
    else tui_putf(y + h - 2 - r, x + 2, iw, a, "[      ?s] %s", l->text);
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
  tui_box(t, y, x, bh, bw, "Keys", 1);
  for (int k = 0; k < n; ++k) tui_put(y + 2 + k, x + 2, bw - 4, 0, lines[k]);
}

static void draw_too_small(odb_ui_tui *t, int H, int W) {
  char a[96], b[96];
  const char *c = t->o.ctx ? "the run goes on; q stops it" : "q quits";
  snprintf(a, sizeof a, "terminal too small (%dx%d)", W, H);
  snprintf(b, sizeof b, "the dashboard needs at least %dx%d", MIN_W, MIN_H);
  tui_put(H / 2 - 1, (W - (int)strlen(a)) / 2 > 0 ? (W - (int)strlen(a)) / 2 : 0,
         W, A_BOLD, a);
  tui_put(H / 2, (W - (int)strlen(b)) / 2 > 0 ? (W - (int)strlen(b)) / 2 : 0, W,
         0, b);
  tui_put(H / 2 + 1, (W - (int)strlen(c)) / 2 > 0 ? (W - (int)strlen(c)) / 2 : 0,
         W, 0, c);
}

/* The whole screen, drawn into curses' buffer and sent as one update. */
void tui_draw(odb_ui_tui *t) {
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
  tui_draw_activity(t, y, 0, TOP_H, left_w);
  tui_draw_throughput(t, y, left_w, TOP_H, W - left_w);
  y += TOP_H;
  if (t->m->tuning) {
    tui_draw_best(t, y, 0, mid_h, left_w);
    tui_draw_heat(t, y, left_w, mid_h, W - left_w);
  } else {
    tui_draw_solves(t, y, 0, mid_h, left_w);
    tui_draw_metrics(t, y, left_w, mid_h, W - left_w);
  }
  y += mid_h;
  draw_log(t, y, 0, log_h, W);
  draw_footer(t, H - 1, W);
  if (t->help) draw_help(t, H, W);
  refresh();
}

/* }====== */

