/* odb_ui_tui_throughput.c - the Throughput pane: for solves the newest
   rate, its share of the bandwidth floor and a bar graph of the history,
   under it a line a rank of the newest distributed solve (mpirun); during
   a tuning run the runs a second of each configuration measured. */
#include "odb_ui_tui_int.h"

#include <math.h>

/* A column bar graph of the newest n samples (sample(m, 0) the newest, on
   the right), scaled to top. */
static void draw_graph(odb_ui_tui *t, int y, int x, int h, int w, double top,
                       int n, double (*sample)(const odb_ui_model *, int)) {
  static const char *const eighths[] = { " ", "\u2581", "\u2582", "\u2583",
                                         "\u2584", "\u2585", "\u2586",
                                         "\u2587", "\u2588" };
  static const char ascii[] = " ..--==+#";
  attr_t a = tui_color(t, PAIR_GOOD);
  if (!(top > 0) || h <= 0) return;
  attron(a);
  for (int c = 0; c < w && c < n; ++c) {
    double v = sample(t->m, c);
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

/*
** A tuning run: each configuration measured gives runs a second, 1 / its
** median (the tuner's TUNE_EVAL events carry no bytes: the objective may
** be anything). A solve that runs meanwhile has the pane back.
*/
static void draw_tuning(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  int iw = w - 4, rows = h - 2, n = odb_ui_model_ntune_rate(m);
  double elapsed = m->tune_wall - m->tune_begin_wall;
  char med[32];
  pen p = { y + 1, x + 2, x + 2 + iw };
  tui_box(t, y, x, h, w, "Throughput (tuning)", t->focus == P_THROUGHPUT);
  if (n == 0) {
    tui_put(y + 1, x + 2, iw, tui_color(t, PAIR_DIM),
            "no configuration measured yet");
  } else {
    odb_ui_fmt_seconds(med, sizeof med, 1 / odb_ui_model_tune_rate(m, 0));
    tui_penf(&p, A_BOLD, "%.4g runs/s", odb_ui_model_tune_rate(m, 0));
    tui_penf(&p, 0, " (%s a run, newest configuration)", med);
    draw_graph(t, y + 2, x + 2, rows - 2, iw, m->tune_rate_peak * 1.05, n,
               odb_ui_model_tune_rate);
  }
  p = (pen){ y + h - 2, x + 2, x + 2 + iw };
  if (m->tune_rate_peak > 0) {
    odb_ui_fmt_seconds(med, sizeof med, 1 / m->tune_rate_peak);
    tui_penf(&p, 0, "best %.4g runs/s (%s)  ", m->tune_rate_peak, med);
  }
  if (m->tune_i > 0 && elapsed > 0)
    tui_penf(&p, tui_color(t, PAIR_DIM), "%.3g configurations/s",
             (double)m->tune_i / elapsed);
}

/* The ranks' lines (odb_ui_model_rank_line) on the n rows from y. */
static void draw_ranks(odb_ui_tui *t, int y, int x, int n, int w) {
  char line[96];
  for (int k = 0; k < n; ++k)
    if (odb_ui_model_rank_line(t->m, k, line, sizeof line))
      tui_put(y + k, x, w, 0, line);
}

void tui_draw_throughput(odb_ui_tui *t, int y, int x, int h, int w) {
  const odb_ui_model *m = t->m;
  int iw = w - 4, rows = h - 2, nr = odb_ui_model_rank_lines(m);
  double floor_gbs = m->info.floor_read * 1e-9;
  pen p = { y + 1, x + 2, x + 2 + iw };
  if (m->tuning && !m->solve.active) {
    draw_tuning(t, y, x, h, w);
    return;
  }
  tui_box(t, y, x, h, w, "Throughput", t->focus == P_THROUGHPUT);
  if (odb_ui_model_nspark(m) == 0) {
    tui_put(y + 1, x + 2, iw, tui_color(t, PAIR_DIM),
           m->solve.active ? "measuring ..." : "no throughput yet");
  } else {
    tui_penf(&p, A_BOLD, "%.2f GB/s", m->gbs);
    if (m->floor_pct >= 0)
      tui_penf(&p, m->floor_pct >= 80 ? tui_color(t, PAIR_GOOD)
               : m->floor_pct >= 50 ? tui_color(t, PAIR_WARN)
                                    : tui_color(t, PAIR_BAD),
           "  %.1f%% of floor", m->floor_pct);
    tui_penf(&p, 0, "  %.2f GFLOP/s", m->gflops);
    /* the ranks take the graph's lower rows, leaving it at least one */
    if (nr > rows - 3) nr = rows - 3 > 0 ? rows - 3 : 0;
    draw_ranks(t, y + rows - nr, x + 2, nr, iw);
    draw_graph(t, y + 2, x + 2, rows - 2 - nr, iw,
               fmax(m->peak_gbs, floor_gbs) * 1.05, odb_ui_model_nspark(m),
               odb_ui_model_spark);
  }
  p = (pen){ y + h - 2, x + 2, x + 2 + iw };
  if (m->peak_gbs > 0) tui_penf(&p, 0, "peak %.2f GB/s  ", m->peak_gbs);
  if (floor_gbs > 0)
    tui_penf(&p, tui_color(t, PAIR_DIM), "floor (1 thread): read %.1f, copy "
             "%.1f GB/s", floor_gbs, m->info.floor_copy * 1e-9);
  else
    tui_penf(&p, tui_color(t, PAIR_DIM), "floor unknown (odebench info)");
}
