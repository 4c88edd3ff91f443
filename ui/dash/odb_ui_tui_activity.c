/* odb_ui_tui_activity.c - the Activity pane: the scenario's sweep, the solve
   in progress (bar, time left, steps, step size), the tuning run (i of n,
   current and best configuration) and the scenario's metrics. */
#include "odb_ui_tui_int.h"

#include <stdio.h>
#include <string.h>

static int solve_lines(odb_ui_tui *t, int y, int x, int w, int rows) {
  const odb_ui_solve *s = &t->m->solve;
  const odb_ui_done *d = odb_ui_model_done(t->m, 0);
  char buf[128];
  pen p;
  int used = 0;
  if (rows <= 0) return 0;
  p = (pen){ y, x, x + w };
  tui_penf(&p, A_BOLD, "solve ");
  tui_penf(&p, 0, "%s  n=%.0f", s->name, s->n);
  if (s->active) tui_penf(&p, tui_color(t, PAIR_GOOD), "  running");
  else if (d) tui_penf(&p, strcmp(d->status, "ok") == 0 ? tui_color(t, PAIR_GOOD)
                                                      : tui_color(t, PAIR_BAD),
                   "  %s", strcmp(d->status, "ok") == 0 ? "done" : d->status);
  if (t->m->nsolves) tui_penf(&p, 0, "  (%ld finished)", t->m->nsolves);
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  if (s->t1 > s->t0) {
    double frac = (s->t - s->t0) / (s->t1 - s->t0);
    int bw = w / 3 < 12 ? 12 : w / 3;
    if (bw > 40) bw = 40;
    tui_bar(buf, bw, frac);
    tui_penf(&p, 0, "%s %3.0f%%  t=%-10.6g of %g", buf, 100 * frac, s->t, s->t1);
    if (s->active && frac > 0.001 && frac < 1) {
      char eta[32];
      odb_ui_fmt_duration(eta, sizeof eta,
                          (s->wall - s->begin_wall) * (1 - frac) / frac);
      tui_penf(&p, 0, "  eta %s", eta);
    }
  } else {
    tui_penf(&p, 0, "t=%-10.6g", s->t);
  }
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  tui_penf(&p, 0, "steps %ld (%ld acc, %ld rej)", s->steps, s->accepted,
       s->rejected);
  if (s->steps_per_s > 0) tui_penf(&p, A_BOLD, "  %.0f steps/s", s->steps_per_s);
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  tui_penf(&p, 0, "h %-10.3g error estimate %.3g", s->h, s->err);
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
  tui_penf(&p, A_BOLD, "tuning ");
  tui_penf(&p, 0, "%ld/%ld ", m->tune_i, m->tune_n);
  if (m->tune_n > 0) {
    double frac = (double)m->tune_i / (double)m->tune_n;
    tui_bar(buf, 14, frac);
    tui_penf(&p, 0, "%s", buf);
    if (m->tune_i > 0 && m->tune_i < m->tune_n) {
      char eta[32];
      odb_ui_fmt_duration(eta, sizeof eta, (m->tune_wall - m->tune_begin_wall)
                          / (double)m->tune_i * (double)(m->tune_n - m->tune_i));
      tui_penf(&p, 0, " eta %s", eta);
    }
  }
  if (m->tune_state[0]) tui_penf(&p, tui_color(t, PAIR_DIM), "  %s", m->tune_state);
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  odb_ui_fmt_seconds(med, sizeof med, m->tune_median);
  tui_penf(&p, 0, "current %s  ", m->tune_config);
  if (m->tune_median > 0)
    tui_penf(&p, 0, "%s +- %.1f%%", med, 100 * m->tune_spread);
  else                              /* the state says why: "skipped: ..." */
    tui_penf(&p, tui_color(t, PAIR_BAD), "%s", m->tune_state[0] ? m->tune_state
                                                         : "failed");
  if (++used >= rows) return used;
  p = (pen){ y + used, x, x + w };
  if (m->have_best) {
    odb_ui_fmt_seconds(med, sizeof med, m->best_median);
    tui_penf(&p, tui_color(t, PAIR_GOOD) | A_BOLD, "best    %s  %s", m->best_config,
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
  tui_penf(&p, A_BOLD, "sweep ");
  tui_penf(&p, 0, "%ld/%ld ", s->i, s->n);
  tui_bar(buf, 14, (double)s->i / (double)s->n);
  tui_penf(&p, s->i >= s->n ? tui_color(t, PAIR_GOOD) : 0, "%s", buf);
  if (left > 0) {
    odb_ui_fmt_duration(eta, sizeof eta, left);
    tui_penf(&p, 0, " eta %s", eta);
  } else if (s->i >= s->n) {
    tui_penf(&p, tui_color(t, PAIR_GOOD), " done");
  }
  if (s->label[0]) tui_penf(&p, tui_color(t, PAIR_DIM), "  %s", s->label);
  return 1;
}

/* The scenario's metrics on the remaining rows, wrapped. */
static void metric_lines(odb_ui_tui *t, int y, int x, int w, int rows) {
  pen p = { y, x, x + w };
  int row = 0;
  if (rows <= 0 || t->m->nmetrics == 0) return;
  tui_penf(&p, A_BOLD, "metrics ");
  for (int k = 0; k < t->m->nmetrics; ++k) {
    const odb_ui_metric *mt = &t->m->metrics[k];
    char item[128];
    snprintf(item, sizeof item, "%s=%.4g%s%s  ", mt->name, mt->value,
             mt->unit[0] ? " " : "", mt->unit);
    if (p.x + (int)strlen(item) > p.end && p.x > x + 8) {
      if (++row >= rows) return;
      p = (pen){ y + row, x + 8, x + w };
    }
    tui_penf(&p, 0, "%s", item);
  }
}

void tui_draw_activity(odb_ui_tui *t, int y, int x, int h, int w) {
  int rows = h - 2, used = 0, iw = w - 4;
  tui_box(t, y, x, h, w, "Activity", t->focus == P_ACTIVITY);
  used += sweep_line(t, y + 1, x + 2, iw, rows);
  if (t->m->solve.name[0]) {
    used += solve_lines(t, y + 1 + used, x + 2, iw,
                        t->m->tuning ? 3 : rows - used);
  }
  if (t->m->tuning) used += tune_lines(t, y + 1 + used, x + 2, iw, rows - used);
  if (!t->m->solve.name[0] && !t->m->tuning && !t->m->sweep.active) {
    tui_put(y + 1, x + 2, iw, tui_color(t, PAIR_DIM),
           t->o.ctx ? "waiting for the first solve ..." : "replay starting ...");
    used = 1;
  }
  metric_lines(t, y + 1 + used, x + 2, iw, rows - used);
}


