/* odb_ui_tui_keys.c - what each key does: quit, pause, skip, help, focus,
   scrolling and the heatmap's axes. */
#include "odb_ui_tui_int.h"

#include <stdio.h>

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
    tui_replay_skip(t);
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

void tui_on_key(odb_ui_tui *t, int ch) {
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

