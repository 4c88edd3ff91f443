/* odb_ui_tui_tables.c - the table panes: the finished solves and the
   scenario's metrics (without tuning), the best configurations (tuning). */
#include "odb_ui_tui_int.h"

#include <stdio.h>
#include <string.h>

void tui_draw_best(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  int rows = h - 3, iw = w - 4, cw = iw - 32;
  char title[64];
  snprintf(title, sizeof title, "Best configurations (%d evaluated)",
           m->nevals);
  tui_box(t, y, x, h, w, title, t->focus == P_TABLE);
  if (cw < 12) cw = 12;
  tui_putf(y + 1, x + 2, iw, A_BOLD | A_UNDERLINE, "%3s  %-*s %10s %7s %5s",
          "#", cw, "configuration", "median", "spread", "i");
  if (t->table_scroll > m->nbest - rows) t->table_scroll = m->nbest - rows;
  if (t->table_scroll < 0) t->table_scroll = 0;
  for (int r = 0; r < rows && r + t->table_scroll < m->nbest; ++r) {
    int k = r + t->table_scroll;
    const odb_ui_eval *e = &m->evals[m->best[k]];
    const odb_ui_eval *b = &m->evals[m->best[0]];
    char med[32];
    int tied = k > 0 && odb_ui_tied(e, b);
    attr_t a = k == 0 ? (A_BOLD | tui_color(t, PAIR_GOOD))
                      : tied ? tui_color(t, PAIR_GOOD) : 0;
    odb_ui_fmt_seconds(med, sizeof med, e->median);
    tui_putf(y + 2 + r, x + 2, iw, a, "%3d%c %-*.*s %10s %6.1f%% %5ld", k + 1,
            tied ? '=' : ' ', cw, cw, e->config, med, 100 * e->spread, e->i);
  }
}

/* {====== the finished solves */

/* The columns of the finished solves, left to right. */
enum { C_NAME, C_N, C_STEPS, C_TIME, C_GBS, C_FLOOR, C_STATUS, NCOLS };

static const char *const col_head[NCOLS] = { "solve", "n", "steps", "time",
                                              "GB/s", "floor", "" };
/* The columns that give way, first to last, when the names need the room:
   a name is never cut (five variants may share all but their last
   letters), n and floor stay. */
static const int give_way[] = { C_STEPS, C_GBS, C_TIME, C_STATUS };

typedef struct solve_cells {
  char c[NCOLS][48];
} solve_cells;

/* The text of each column for d. The floor is the row's, to 0.1 as
   ob.report prints it. */
static void cells_of(const odb_ui_done *d, solve_cells *s) {
  snprintf(s->c[C_NAME], sizeof s->c[C_NAME], "%s", d->name);
  if (d->n > 0) snprintf(s->c[C_N], sizeof s->c[C_N], "%.0f", d->n);
  else snprintf(s->c[C_N], sizeof s->c[C_N], "-");
  snprintf(s->c[C_STEPS], sizeof s->c[C_STEPS], "%ld", d->steps);
  odb_ui_fmt_seconds(s->c[C_TIME], sizeof s->c[C_TIME], d->seconds);
  snprintf(s->c[C_GBS], sizeof s->c[C_GBS], "%.2f", d->gbs);
  if (d->floor_pct >= 0)
    snprintf(s->c[C_FLOOR], sizeof s->c[C_FLOOR], "%.1f%%", d->floor_pct);
  else snprintf(s->c[C_FLOOR], sizeof s->c[C_FLOOR], "-");
  snprintf(s->c[C_STATUS], sizeof s->c[C_STATUS], "%s",
           strcmp(d->status, "ok") ? d->status : "");
}

/* Width of the columns shown (0: hidden) for the entries from first on:
   each as wide as its widest cell; columns give way while the line is
   wider than iw. Returns 1 when the names still do not fit beside n and
   floor: each entry then takes a line for its name. */
static int solve_widths(const odb_ui_tui *t, long first, int entries, int iw,
                        int *cw) {
  int any_status = 0, total = 0;
  for (int k = 0; k < NCOLS; ++k) cw[k] = (int)strlen(col_head[k]);
  for (int r = 0; r < entries; ++r) {
    const odb_ui_done *d = odb_ui_model_done(t->m, first + r);
    solve_cells s;
    if (!d) break;
    cells_of(d, &s);
    for (int k = 0; k < NCOLS; ++k)
      if ((int)strlen(s.c[k]) > cw[k]) cw[k] = (int)strlen(s.c[k]);
    any_status |= s.c[C_STATUS][0] != '\0';
  }
  if (!any_status) cw[C_STATUS] = 0;
  for (int k = 0; k < NCOLS; ++k) total += cw[k] ? cw[k] + 1 : 0;
  for (int g = 0; g < (int)(sizeof give_way / sizeof give_way[0]) &&
                  total - 1 > iw; ++g) {
    total -= cw[give_way[g]] ? cw[give_way[g]] + 1 : 0;
    cw[give_way[g]] = 0;
  }
  return total - 1 > iw;
}

/* One line of cells (or of the headers) from column `from` on. */
static void solve_line(int y, int x, int iw, attr_t a, const int *cw,
                       char cells[][48], int from) {
  pen p = { y, x, x + iw };
  for (int k = from; k < NCOLS; ++k) {
    if (!cw[k]) continue;
    if (p.x > x) p.x += 1;
    if (k == C_NAME || k == C_STATUS)
      tui_penf(&p, a, "%-*s", cw[k], cells[k]);
    else
      tui_penf(&p, a, "%*s", cw[k], cells[k]);
  }
}

/*
** Without tuning: the finished solves, newest first, with their whole
** problem/method/variant names. When the names do not fit beside n and
** floor, each entry takes a line for its name (more when it is wider than
** the pane), then one for its figures.
*/
void tui_draw_solves(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 3, iw = w - 4, cw[NCOLS], wrap, per;   /* per: lines an
                                                          entry takes, at least */
  long kept = t->m->nsolves < ODB_UI_DONE_MAX ? t->m->nsolves
                                              : ODB_UI_DONE_MAX;
  char heads[NCOLS][48];
  tui_box(t, y, x, h, w, "Finished solves", t->focus == P_TABLE);
  if (t->table_scroll > kept - 1) t->table_scroll = (int)(kept - 1);
  if (t->table_scroll < 0) t->table_scroll = 0;
  wrap = solve_widths(t, t->table_scroll, rows, iw, cw);
  per = wrap ? 2 : 1;
  if (t->table_scroll > kept - rows / per)
    t->table_scroll = (int)(kept - rows / per);
  if (t->table_scroll < 0) t->table_scroll = 0;
  wrap = solve_widths(t, t->table_scroll, rows / per, iw, cw);
  for (int k = 0; k < NCOLS; ++k)
    snprintf(heads[k], sizeof heads[k], "%s", col_head[k]);
  if (wrap) cw[C_NAME] = 0;
  solve_line(y + 1, x + 2, iw, A_BOLD | A_UNDERLINE, cw, heads, 0);
  if (t->m->nsolves == 0)
    tui_put(y + 2, x + 2, iw, tui_color(t, PAIR_DIM), "none yet");
  for (int r = 0, k = 0; r < rows; ++k) {
    const odb_ui_done *d = odb_ui_model_done(t->m, t->table_scroll + k);
    int len, lines;
    attr_t a;
    solve_cells s;
    if (!d) break;
    a = strcmp(d->status, "ok") ? tui_color(t, PAIR_BAD) : 0;
    cells_of(d, &s);
    len = (int)strlen(s.c[C_NAME]);
    lines = wrap ? (len + iw - 1) / iw + 1 : 1;   /* a long name wraps */
    if (r + lines > rows) break;
    for (int l = 0; wrap && l < lines - 1; ++l)
      tui_put(y + 2 + r + l, x + 2, iw, a | A_BOLD, s.c[C_NAME] + l * iw);
    solve_line(y + 2 + r + lines - 1, x + 2, iw, a, cw, s.c, 0);
    r += lines;
  }
}

/* }====== */

/* Without tuning: the scenario's metrics. */
void tui_draw_metrics(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 2, iw = w - 4;
  tui_box(t, y, x, h, w, "Metrics", t->focus == P_HEAT);
  if (t->m->nmetrics == 0)
    tui_put(y + 1, x + 2, iw, tui_color(t, PAIR_DIM),
           "none yet (ob.metric(name, value) in a scenario)");
  for (int r = 0; r < rows && r < t->m->nmetrics; ++r) {
    const odb_ui_metric *mt = &t->m->metrics[t->m->nmetrics - 1 - r];
    tui_putf(y + 1 + r, x + 2, iw, 0, "%-24.24s %14.6g %s", mt->name, mt->value,
            mt->unit);
  }
}

