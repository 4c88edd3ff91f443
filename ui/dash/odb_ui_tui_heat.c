/* odb_ui_tui_heat.c - the tuning heatmap: the smallest median over two
   tuning parameters, coloured on a log scale, and the automatic choice of
   which parameter goes on the columns. */
#include "odb_ui_tui_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    tui_putf(y, x, cw, tui_color(t, PAIR_DIM), "%*s", cw - 1, ".");
    return;
  }
  compact_seconds(text, sizeof text, v, tw);
  snprintf(cell, sizeof cell, "%*s%c", tw, text, best ? '*' : ' ');
  if (t->colors) {
    lvl = heat_level(v, lo, hi, t->heat_levels);
    tui_put(y, x, cw, COLOR_PAIR(PAIR_HEAT + lvl) | (best ? A_BOLD : 0), cell);
    return;
  }
  lvl = heat_level(v, lo, hi, 4);     /* the shade takes the last column */
  tui_put(y, x, cw - 1, best ? A_BOLD : 0, cell);
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
  tui_penf(&p, 0, "fast %s ", a);
  if (t->colors)
    for (int k = 0; k < t->heat_levels && p.x < p.end; ++k)
      p.x += tui_put(y, p.x, 1, COLOR_PAIR(PAIR_HEAT + k), " ");
  else
    tui_penf(&p, 0, t->utf8 ? "" : ".:+#");
  if (!t->colors && t->utf8 && p.x + 4 <= p.end) {
    mvaddstr(y, p.x, "\u2591\u2592\u2593\u2588");
    p.x += 4;
  }
  tui_penf(&p, 0, " %s slow   * best", b);
}

/* The longest value of a parameter. */
static int longest(const odb_ui_param *p) {
  int n = 0;
  for (int k = 0; k < p->nvalues; ++k)
    if ((int)strlen(p->values[k]) > n) n = (int)strlen(p->values[k]);
  return n;
}

/* Width of the row labels and of a cell for Y on the rows and X on the
   columns in iw columns. A row label is as wide as the longest value (a
   value is never cut) while a cell of 6 columns still fits beside it. */
static void heat_widths(const odb_ui_param *X, const odb_ui_param *Y, int one,
                        int iw, int *lw, int *cw) {
  *lw = one ? 1 : (int)strlen(Y->name);
  if (!one && longest(Y) > *lw) *lw = longest(Y);
  if (*lw > iw - 7) *lw = iw - 7 > 1 ? iw - 7 : 1;
  *cw = (iw - *lw - 1) / (X->nvalues > 0 ? X->nvalues : 1);
  if (*cw > 9) *cw = 9;
  if (*cw < 3) *cw = 3;
}

/* The key of column c when the values do not fit as column labels: "a" to
   "z", then "A" to "Z". */
static char column_key(int c) {
  return (char)(c < 26 ? 'a' + c : 'A' + (c - 26) % 26);
}

/*
** The legend of the column keys, "a=PipeDb1m  b=PipeDb1mt ...", wrapped
** into iw columns from line y on (at most max lines, cols keys); returns
** the lines it takes. With draw 0 it only counts them.
*/
static int key_legend(const odb_ui_param *X, int cols, int y, int x, int iw,
                      int max, int draw) {
  int line = 0, at = 0;
  for (int c = 0; c < cols; ++c) {
    char item[64];
    int len = snprintf(item, sizeof item, "%c=%s", column_key(c),
                       X->values[X->order[c]]);
    if (at > 0 && at + 2 + len > iw) {
      line++;
      at = 0;
    }
    if (line >= max) return max;
    if (at > 0) at += 2;
    if (draw) tui_put(y + line, x + at, iw - at, 0, item);
    at += len;
  }
  return line + 1;
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

/*
** Values are shown whole: a row label as wide as the longest value, and
** column labels that do not fit a cell become keys (a, b, ...) with a
** legend under the map.
*/
void tui_draw_heat(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  const odb_ui_param *X, *Y;
  double cells[ODB_UI_VALUE_MAX * ODB_UI_VALUE_MAX], lo = INFINITY, hi = 0;
  int iw = w - 4, nx, ny, lw, cw, rows, cols, keyed, legend = 0;
  char title[96];
  if (t->px >= m->nparams) t->px = 0;
  if (t->py >= m->nparams || (t->py == t->px && m->nparams > 1))
    t->py = t->px == 0 && m->nparams > 1 ? 1 : 0;
  auto_axes(t, iw);
  if (m->nparams == 0) {
    tui_box(t, y, x, h, w, "Heatmap", t->focus == P_HEAT);
    tui_put(y + 1, x + 2, iw, tui_color(t, PAIR_DIM),
           "no k=v parameters in the configurations");
    return;
  }
  X = &m->params[t->px];
  Y = &m->params[t->py];
  if (t->px == t->py) snprintf(title, sizeof title, "Heatmap: %s", X->name);
  else snprintf(title, sizeof title, "Heatmap: %s (rows) x %s (columns)",
                Y->name, X->name);
  tui_box(t, y, x, h, w, title, t->focus == P_HEAT);
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
  keyed = longest(X) > cw - 1;
  if (keyed && h > 5) legend = key_legend(X, cols, 0, 0, iw, h - 5, 0);
  rows = h - 4 - legend;
  if (rows > ny) rows = ny;
  tui_putf(y + 1, x + 2, lw, A_BOLD, "%-*.*s", lw, lw,
          t->px == t->py ? "" : Y->name);
  for (int c = 0; c < cols; ++c) {
    char key[2] = { column_key(c), '\0' };
    tui_putf(y + 1, x + 3 + lw + c * cw, cw, A_BOLD | A_UNDERLINE, "%*s",
             cw - 1, keyed ? key : X->values[X->order[c]]);
  }
  if (cols < nx) tui_put(y + 1, x + 2 + iw - 1, 1, A_BOLD, ">");
  for (int r = 0; r < rows; ++r) {
    tui_putf(y + 2 + r, x + 2, lw, A_BOLD, "%*s", lw,
             t->px == t->py ? "" : Y->values[Y->order[r]]);
    for (int c = 0; c < cols; ++c) {
      double v = cells[r * nx + c];
      heat_cell(t, y + 2 + r, x + 3 + lw + c * cw, cw, v, lo, hi,
                !isnan(v) && v == lo);
    }
  }
  if (legend > 0) key_legend(X, cols, y + 2 + rows, x + 2, iw, legend, 1);
  heat_legend(t, y + h - 2, x + 2, iw, lo, hi);
}
