/* odb_ui_model.c - folding a run's events into what the dashboard shows. */
#include "odb_ui_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPARK_EVERY 0.2   /* seconds between throughput samples */
#define RATE_MIN_DT 0.02  /* shortest interval a rate is measured over */

/* Copies at most cap - 1 bytes of s and terminates (s may be NULL). */
static void copy_str(char *dst, size_t cap, const char *s) {
  size_t n = 0;
  if (s)
    while (n + 1 < cap && s[n]) {
      dst[n] = s[n];
      ++n;
    }
  dst[n] = '\0';
}

void odb_ui_model_init(odb_ui_model *m, const odb_ui_info *info) {
  memset(m, 0, sizeof *m);
  if (info) m->info = *info;
  m->floor_pct = -1;
  odb_ui_fold_init(&m->fold);
}

void odb_ui_model_free(odb_ui_model *m) {
  if (!m) return;
  free(m->evals);
  m->evals = NULL;
  m->nevals = m->capevals = 0;
}

/* {====== log, finished solves, metrics */

/* The line k places back from the newest; assumes k < the lines kept. */
static odb_ui_logline *line_at(odb_ui_model *m, long k) {
  return &m->log[(m->nlog - 1 - k) % ODB_UI_LOG_MAX];
}

/* Takes the kept line k places back from the newest out of the ring: the
   newer ones move back one place. */
static void remove_line(odb_ui_model *m, long k) {
  for (; k > 0; --k) *line_at(m, k) = *line_at(m, k - 1);
  m->nlog--;
}

/* Lines kept in the ring. */
static long kept_lines(const odb_ui_model *m) {
  return m->nlog < ODB_UI_LOG_MAX ? m->nlog : ODB_UI_LOG_MAX;
}

/*
** A warning goes through the fold: a repeat takes the line of its group
** out and comes back as the newest line, "warning (xN): ..." A group that
** made way for a new one leaves its lines as they are.
*/
void odb_ui_model_log(odb_ui_model *m, double wall, int level,
                      const char *text) {
  odb_ui_logline *l;
  char folded[sizeof m->log[0].text];
  int group = -1, evicted = 0;
  if (level == ODB_LOG_WARN) {
    group = odb_ui_fold_add(&m->fold, text, &evicted);
    for (long k = 0; k < kept_lines(m); ++k) {
      if (line_at(m, k)->fold != group + 1) continue;
      if (evicted) line_at(m, k)->fold = 0;
      else remove_line(m, k);
      break;
    }
    if (m->fold.g[group].count > 1) {
      odb_ui_fold_line(&m->fold, group, folded, sizeof folded);
      text = folded;
    }
  }
  l = &m->log[m->nlog % ODB_UI_LOG_MAX];
  l->wall = wall;
  l->level = level;
  l->fold = group + 1;
  copy_str(l->text, sizeof l->text, text);
  m->nlog++;
}

/* k counts back from the newest; NULL past the lines kept. */
const odb_ui_logline *odb_ui_model_logline(const odb_ui_model *m, long k) {
  if (k < 0 || k >= m->nlog || k >= ODB_UI_LOG_MAX) return NULL;
  return &m->log[(m->nlog - 1 - k) % ODB_UI_LOG_MAX];
}

const odb_ui_done *odb_ui_model_done(const odb_ui_model *m, long k) {
  if (k < 0 || k >= m->nsolves || k >= ODB_UI_DONE_MAX) return NULL;
  return &m->done[(m->nsolves - 1 - k) % ODB_UI_DONE_MAX];
}

int odb_ui_model_nspark(const odb_ui_model *m) {
  return m->nspark < ODB_UI_SPARK_MAX ? m->nspark : ODB_UI_SPARK_MAX;
}

/* Assumes 0 <= k < odb_ui_model_nspark(m). */
double odb_ui_model_spark(const odb_ui_model *m, int k) {
  return m->spark[(m->nspark - 1 - k) % ODB_UI_SPARK_MAX];
}

int odb_ui_model_ntune_rate(const odb_ui_model *m) {
  return m->ntune_rate < ODB_UI_SPARK_MAX ? m->ntune_rate : ODB_UI_SPARK_MAX;
}

/* Assumes 0 <= k < odb_ui_model_ntune_rate(m). */
double odb_ui_model_tune_rate(const odb_ui_model *m, int k) {
  return m->tune_rate[(m->ntune_rate - 1 - k) % ODB_UI_SPARK_MAX];
}

/* A throughput sample; at most one per SPARK_EVERY seconds unless forced. */
static void push_spark(odb_ui_model *m, double wall, double gbs, int force) {
  if (!(gbs >= 0) || !isfinite(gbs)) return;
  if (!force && m->nspark > 0 && wall - m->spark_wall < SPARK_EVERY) return;
  m->spark[m->nspark % ODB_UI_SPARK_MAX] = gbs;
  m->nspark++;
  m->spark_wall = wall;
  if (gbs > m->peak_gbs) m->peak_gbs = gbs;
}

/* Updates the metric of that name in place, or adds it (the oldest goes
   when the table is full). */
static void set_metric(odb_ui_model *m, const odb_event *e) {
  int k;
  for (k = 0; k < m->nmetrics; ++k)
    if (strcmp(m->metrics[k].name, e->name) == 0) break;
  if (k == m->nmetrics) {
    if (m->nmetrics == ODB_UI_METRIC_MAX) {
      memmove(m->metrics, m->metrics + 1,
              (ODB_UI_METRIC_MAX - 1) * sizeof m->metrics[0]);
      k = ODB_UI_METRIC_MAX - 1;
    } else {
      k = m->nmetrics++;
    }
  }
  copy_str(m->metrics[k].name, sizeof m->metrics[k].name, e->name);
  copy_str(m->metrics[k].unit, sizeof m->metrics[k].unit, e->text);
  m->metrics[k].value = e->value;
  m->metrics[k].wall = e->wall;
}

/* }====== */

/* {====== solves and throughput */

/* Percentage of the bandwidth floor for r and w bytes moved in dt seconds;
   -1 when the floor is unknown. */
static double floor_pct(const odb_ui_model *m, double r, double w, double dt) {
  odb_bandwidth bw;
  if (!(m->info.floor_read > 0) || !(dt > 0) || !(r + w > 0)) return -1;
  memset(&bw, 0, sizeof bw);
  bw.read_1t = m->info.floor_read;
  bw.copy_1t = m->info.floor_copy;
  return 100.0 * odb_bandwidth_floor_seconds(&bw, r, w) / dt;
}

/* "flops=<number>" in a STEP record's text; 0 when absent. */
static double step_flops(const odb_event *e) {
  if (strncmp(e->text, "flops=", 6) != 0) return 0;
  return strtod(e->text + 6, NULL);
}

static void on_begin(odb_ui_model *m, const odb_event *e) {
  odb_ui_solve *s = &m->solve;
  memset(s, 0, sizeof *s);
  s->active = 1;
  copy_str(s->name, sizeof s->name, e->name);
  s->n = e->value;
  s->t0 = s->t = e->t;
  s->t1 = e->value2;
  s->begin_wall = s->wall = e->wall;
  s->have_base = 1;
  s->base_wall = e->wall;
}

/* Rates over the interval since the baseline, once it is long enough. */
static void measure_rates(odb_ui_model *m, const odb_event *e) {
  odb_ui_solve *s = &m->solve;
  double dt = e->wall - s->base_wall;
  double dr = s->rbytes - s->base_r, dw = s->wbytes - s->base_w;
  if (s->have_base && dt < RATE_MIN_DT) return;
  if (s->have_base && e->step >= s->base_steps && dr + dw >= 0) {
    s->steps_per_s = (double)(e->step - s->base_steps) / dt;
    m->gbs = (dr + dw) / dt * 1e-9;
    m->gflops = (s->flops - s->base_flops) / dt * 1e-9;
    m->floor_pct = floor_pct(m, dr, dw, dt);
    if (m->gbs > m->peak_gbs) m->peak_gbs = m->gbs;
    push_spark(m, e->wall, m->gbs, 0);
  }
  s->have_base = 1;
  s->base_wall = e->wall;
  s->base_r = s->rbytes;
  s->base_w = s->wbytes;
  s->base_flops = s->flops;
  s->base_steps = e->step;
}

static void on_step(odb_ui_model *m, const odb_event *e) {
  odb_ui_solve *s = &m->solve;
  if (!s->active) {               /* its SOLVE_BEGIN was dropped */
    copy_str(s->name, sizeof s->name, e->name);
    s->active = 1;
  }
  s->t = e->t;
  s->h = e->h;
  s->err = e->err;
  s->steps = e->step;
  s->accepted = e->accepted;
  s->rejected = e->rejected;
  s->wall = e->wall;
  s->rbytes = e->value;
  s->wbytes = e->value2;
  s->flops = step_flops(e);
  measure_rates(m, e);
}

/*
** The whole solve's figures become the newest ones, and it is a finished
** solve until its row comes (on_row). Its floor is left unknown: the row
** has the one figure (its bandwidth figures, its timing), and the header's
** cached figures may differ from those the row was divided by.
*/
static void on_end(odb_ui_model *m, const odb_event *e) {
  odb_ui_solve *s = &m->solve;
  odb_ui_done *d = &m->done[m->nsolves % ODB_UI_DONE_MAX];
  int same = s->active && strcmp(s->name, e->name) == 0;
  memset(d, 0, sizeof *d);
  copy_str(d->name, sizeof d->name, e->name);
  copy_str(d->status, sizeof d->status, e->text[0] ? e->text : "ok");
  d->steps = e->step;
  d->n = same ? s->n : 0;
  d->seconds = e->value;
  d->gbs = e->value2;
  d->floor_pct = -1;
  m->nsolves++;
  if (e->value > 0 && e->value2 > 0) {
    m->gbs = e->value2;
    m->floor_pct = -1;
    if (same) m->gflops = s->flops / e->value * 1e-9;
    if (same) s->steps_per_s = (double)e->step / e->value;
    if (m->gbs > m->peak_gbs) m->peak_gbs = m->gbs;
    push_spark(m, e->wall, e->value2, 0);
  }
  s->t = e->t;
  s->steps = e->step;
  s->accepted = e->accepted;
  s->rejected = e->rejected;
  s->active = 0;
}

/*
** A solve's results row: the finished solves its integrate call timed
** (the newest ones of its name since the previous row: one, or one per
** repetition) give way to one entry with the row's figures, and the
** row's GB/s and floor % become the newest.
*/
static void on_row(odb_ui_model *m, const odb_event *e) {
  odb_ui_done *d;
  long popped = 0;
  while (m->nsolves > m->nsolves_rowed && popped < ODB_UI_DONE_MAX) {
    const odb_ui_done *top = odb_ui_model_done(m, 0);
    if (!top || top->from_row || strcmp(top->name, e->name) != 0) break;
    m->nsolves--;
    popped++;
  }
  d = &m->done[m->nsolves % ODB_UI_DONE_MAX];
  memset(d, 0, sizeof *d);
  copy_str(d->name, sizeof d->name, e->name);
  copy_str(d->status, sizeof d->status, e->text[0] ? e->text : "ok");
  d->steps = e->step;
  d->n = (double)e->accepted;
  d->seconds = e->value;
  d->gbs = e->value2;
  d->floor_pct = e->t >= 0 && isfinite(e->t) ? e->t : -1;
  d->from_row = 1;
  m->nsolves++;
  m->nsolves_rowed = m->nsolves;
  if (e->value2 > 0) m->gbs = e->value2;
  m->floor_pct = d->floor_pct;
}

void odb_ui_model_resync(odb_ui_model *m) { m->solve.have_base = 0; }

/* }====== */

/* {====== tuning */

int odb_ui_parse_config(const char *config, char keys[][ODB_UI_KEY_LEN],
                        char vals[][ODB_UI_VAL_LEN], int max) {
  int n = 0;
  const char *p = config;
  while (p && *p && n < max) {
    size_t len;
    const char *eq;
    while (*p == ' ' || *p == ',' || *p == ';' || *p == '\t') ++p;
    len = strcspn(p, " ,;\t");
    if (len == 0) break;
    eq = memchr(p, '=', len);
    if (eq && eq > p) {
      snprintf(keys[n], ODB_UI_KEY_LEN, "%.*s", (int)(eq - p), p);
      snprintf(vals[n], ODB_UI_VAL_LEN, "%.*s", (int)(len - (size_t)(eq - p) - 1),
               eq + 1);
      ++n;
    }
    p += len;
  }
  return n;
}

/* 1 when s reads fully as a number. */
static int is_number(const char *s, double *v) {
  char *end;
  if (!*s) return 0;
  *v = strtod(s, &end);
  return *end == '\0';
}

/* 1 when value a of p comes after value b in display order. */
static int after(const odb_ui_param *p, const double *num, int a, int b) {
  if (p->numeric) return num[a] > num[b];
  return strcmp(p->values[a], p->values[b]) > 0;
}

/* Display order of a parameter's values: numeric ascending when every
   value is a number, else alphabetical. */
static void order_values(odb_ui_param *p) {
  double num[ODB_UI_VALUE_MAX];
  p->numeric = 1;
  for (int k = 0; k < p->nvalues; ++k) {
    p->order[k] = k;
    if (!is_number(p->values[k], &num[k])) p->numeric = 0;
  }
  for (int i = 1; i < p->nvalues; ++i) {     /* insertion sort, tiny lists */
    int v = p->order[i], j = i;
    while (j > 0 && after(p, num, p->order[j - 1], v)) {
      p->order[j] = p->order[j - 1];
      --j;
    }
    p->order[j] = v;
  }
}

/* Index of value v of parameter key (added when new); -1 when the tables
   are full. */
static int value_index(odb_ui_model *m, const char *key, const char *v,
                       int *param) {
  odb_ui_param *p = NULL;
  int k;
  for (k = 0; k < m->nparams; ++k)
    if (strcmp(m->params[k].name, key) == 0) break;
  if (k == m->nparams) {
    if (m->nparams == ODB_UI_PARAM_MAX) return -1;
    copy_str(m->params[k].name, ODB_UI_KEY_LEN, key);
    m->nparams++;
  }
  *param = k;
  p = &m->params[k];
  for (int i = 0; i < p->nvalues; ++i)
    if (strcmp(p->values[i], v) == 0) return i;
  if (p->nvalues == ODB_UI_VALUE_MAX) return -1;
  copy_str(p->values[p->nvalues], ODB_UI_VAL_LEN, v);
  p->nvalues++;
  order_values(p);
  return p->nvalues - 1;
}

/* Keeps best[] sorted by median: inserts eval idx if it belongs there. */
static void rank_eval(odb_ui_model *m, int idx) {
  double med = m->evals[idx].median;
  int pos = m->nbest;
  while (pos > 0 && m->evals[m->best[pos - 1]].median > med) --pos;
  if (pos >= ODB_UI_BEST_MAX) return;
  if (m->nbest < ODB_UI_BEST_MAX) m->nbest++;
  memmove(m->best + pos + 1, m->best + pos,
          (size_t)(m->nbest - 1 - pos) * sizeof m->best[0]);
  m->best[pos] = idx;
}

/* A new tuning run (i restarts) forgets the previous one's space. */
static void reset_tuning(odb_ui_model *m, double wall) {
  m->nevals = 0;
  m->nbest = 0;
  m->nparams = 0;
  memset(m->params, 0, sizeof m->params);
  m->have_best = 0;
  m->tune_begin_wall = wall;
  m->ntune_rate = 0;
  m->tune_rate_peak = 0;
}

/* A measured configuration's runs a second joins the tuning throughput. */
static void push_tune_rate(odb_ui_model *m, double median) {
  double rate = 1.0 / median;
  m->tune_rate[m->ntune_rate % ODB_UI_SPARK_MAX] = rate;
  m->ntune_rate++;
  if (rate > m->tune_rate_peak) m->tune_rate_peak = rate;
}

static void on_tune_eval(odb_ui_model *m, const odb_event *e) {
  char keys[ODB_UI_PARAM_MAX][ODB_UI_KEY_LEN];
  char vals[ODB_UI_PARAM_MAX][ODB_UI_VAL_LEN];
  odb_ui_eval *ev;
  int n;
  if (!m->tuning || e->step < m->tune_i) reset_tuning(m, e->wall);
  m->tuning = 1;
  m->tune_i = e->step;
  m->tune_n = e->accepted;
  m->tune_wall = e->wall;
  copy_str(m->tune_config, sizeof m->tune_config, e->name);
  copy_str(m->tune_state, sizeof m->tune_state, e->text);
  m->tune_median = e->value;
  m->tune_spread = e->value2;
  if (!(e->value > 0) || !isfinite(e->value)) return;   /* failed config */
  push_tune_rate(m, e->value);
  if (!m->have_best || e->value < m->best_median) {
    m->have_best = 1;
    m->best_median = e->value;
    copy_str(m->best_config, sizeof m->best_config, e->name);
  }
  if (m->nevals == m->capevals) {
    int cap = m->capevals ? 2 * m->capevals : 256;
    odb_ui_eval *grown = realloc(m->evals, (size_t)cap * sizeof *grown);
    if (!grown) return;
    m->evals = grown;
    m->capevals = cap;
  }
  ev = &m->evals[m->nevals];
  memset(ev, 0, sizeof *ev);
  copy_str(ev->config, sizeof ev->config, e->name);
  ev->median = e->value;
  ev->spread = e->value2;
  ev->i = e->step;
  for (int k = 0; k < ODB_UI_PARAM_MAX; ++k) ev->vals[k] = -1;
  n = odb_ui_parse_config(e->name, keys, vals, ODB_UI_PARAM_MAX);
  for (int k = 0; k < n; ++k) {
    int param, v = value_index(m, keys[k], vals[k], &param);
    if (v >= 0) ev->vals[param] = v;
  }
  rank_eval(m, m->nevals++);
}

static void on_tune_best(odb_ui_model *m, const odb_event *e) {
  m->have_best = 1;
  m->best_median = e->value;
  copy_str(m->best_config, sizeof m->best_config, e->name);
}

int odb_ui_model_heat(const odb_ui_model *m, int px, int py, double *cells) {
  const odb_ui_param *X, *Y;
  int rank_x[ODB_UI_VALUE_MAX], rank_y[ODB_UI_VALUE_MAX];
  if (px < 0 || py < 0 || px >= m->nparams || py >= m->nparams) return 0;
  X = &m->params[px];
  Y = &m->params[py];
  for (int k = 0; k < X->nvalues; ++k) rank_x[X->order[k]] = k;
  for (int k = 0; k < Y->nvalues; ++k) rank_y[Y->order[k]] = k;
  for (int k = 0; k < X->nvalues * (px == py ? 1 : Y->nvalues); ++k)
    cells[k] = NAN;
  for (int i = 0; i < m->nevals; ++i) {
    const odb_ui_eval *ev = &m->evals[i];
    int c, r;
    if (ev->vals[px] < 0 || ev->vals[py] < 0) continue;
    c = rank_x[ev->vals[px]];
    r = px == py ? 0 : rank_y[ev->vals[py]];
    if (isnan(cells[r * X->nvalues + c]) ||
        ev->median < cells[r * X->nvalues + c])
      cells[r * X->nvalues + c] = ev->median;
  }
  return 1;
}

int odb_ui_tied(const odb_ui_eval *a, const odb_ui_eval *b) {
  double tol = fmax(a->spread * a->median, b->spread * b->median);
  return fabs(a->median - b->median) <= tol;
}

/* }====== */

/* {====== ranks */

/* A record of rank 0, another solve or another number of ranks starts
   the set; records come in rank order (lua/odb_lua_solver.c). */
static void on_ranks(odb_ui_model *m, const odb_event *e) {
  if (e->accepted < 1 || e->step < 0 || e->step >= e->accepted) return;
  if (e->step == 0 || e->accepted != m->ranks ||
      strcmp(e->name, m->ranks_name) != 0) {
    copy_str(m->ranks_name, sizeof m->ranks_name, e->name);
    m->ranks = e->accepted;
    m->nrank_seen = 0;
    m->rank_wait_max = 0;
    memset(m->rank, 0, sizeof m->rank);
  }
  if (e->step < ODB_UI_RANK_LINES) {
    m->rank[e->step].steps_per_s = e->value;
    m->rank[e->step].wait_s = e->value2;
  }
  if (e->value2 > m->rank_wait_max) m->rank_wait_max = e->value2;
  m->nrank_seen++;
}

int odb_ui_model_rank_lines(const odb_ui_model *m) {
  return m->ranks < ODB_UI_RANK_LINES ? (int)m->ranks : ODB_UI_RANK_LINES;
}

/* With more than ODB_UI_RANK_LINES ranks the last line counts the rest. */
int odb_ui_model_rank_line(const odb_ui_model *m, int k, char *buf, int cap) {
  char wait[32];
  int n = odb_ui_model_rank_lines(m);
  if (k < 0 || k >= n || cap <= 0) return 0;
  if (m->ranks > ODB_UI_RANK_LINES && k == n - 1) {
    snprintf(buf, (size_t)cap, "... %ld more", m->ranks - k);
    return 1;
  }
  odb_ui_fmt_seconds(wait, sizeof wait, m->rank[k].wait_s);
  snprintf(buf, (size_t)cap, "rank %-3d %10.4g steps/s  wait %s", k,
           m->rank[k].steps_per_s, wait);
  return 1;
}

/* }====== */

void odb_ui_model_apply(odb_ui_model *m, const odb_event *e) {
  m->events++;
  if (e->wall > m->wall) m->wall = e->wall;
  switch (e->kind) {
  case ODB_EV_LOG: odb_ui_model_log(m, e->wall, e->level, e->text); break;
  case ODB_EV_SOLVE_BEGIN: on_begin(m, e); break;
  case ODB_EV_STEP: on_step(m, e); break;
  case ODB_EV_SOLVE_END: on_end(m, e); break;
  case ODB_EV_METRIC: set_metric(m, e); break;
  case ODB_EV_TUNE_EVAL: on_tune_eval(m, e); break;
  case ODB_EV_TUNE_BEST: on_tune_best(m, e); break;
  case ODB_EV_PROGRESS: odb_ui_sweep_apply(&m->sweep, e); break;
  case ODB_EV_SOLVE_ROW: on_row(m, e); break;
  case ODB_EV_RANKS: on_ranks(m, e); break;
  default: break;
  }
}

/* {====== sweeps */

void odb_ui_sweep_apply(odb_ui_sweep *s, const odb_event *e) {
  if (!s->active || e->accepted != s->n || e->step < s->i || e->step == 0) {
    s->begin_i = e->step;
    s->begin_wall = e->wall;
  }
  s->active = 1;
  s->i = e->step;
  s->n = e->accepted;
  s->wall = e->wall;
  copy_str(s->label, sizeof s->label, e->name);
}

double odb_ui_sweep_eta(const odb_ui_sweep *s) {
  if (!s->active) return -1;
  if (s->i >= s->n) return 0;
  if (s->i <= s->begin_i) return -1;
  return (s->wall - s->begin_wall) / (double)(s->i - s->begin_i) *
         (double)(s->n - s->i);
}

/* }====== */

/* {====== formatting */

/* Appends the len bytes of s to dst when they fit with the terminator;
   returns 0 (nothing appended) otherwise. */
static int put_bytes(char *dst, size_t cap, size_t *n, const char *s,
                     size_t len) {
  if (*n + len + 1 > cap) return 0;
  memcpy(dst + *n, s, len);
  *n += len;
  return 1;
}

/* The length of the valid UTF-8 sequence at s (2 to 4; no overlong forms,
   no surrogates, nothing above U+10FFFF), 0 when there is none; *cp gets
   its code point. */
static int utf8_len(const unsigned char *s, unsigned *cp) {
  unsigned c = s[0], lo = 0x80, hi = 0xBF;
  int len;
  if (c >= 0xC2 && c <= 0xDF) len = 2, *cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, *cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, *cp = c & 0x07;
  else return 0;
  if (c == 0xE0) lo = 0xA0;
  else if (c == 0xED) hi = 0x9F;
  else if (c == 0xF0) lo = 0x90;
  else if (c == 0xF4) hi = 0x8F;
  for (int k = 1; k < len; ++k) {
    if (s[k] < (k == 1 ? lo : 0x80) || s[k] > (k == 1 ? hi : 0xBF)) return 0;
    *cp = (*cp << 6) | (s[k] & 0x3F);
  }
  return len;
}

size_t odb_ui_clean(char *dst, size_t cap, const char *src) {
  const unsigned char *s = (const unsigned char *)(src ? src : "");
  size_t n = 0;
  char esc[8];
  while (*s) {
    unsigned cp;
    int len, ok;
    if (*s < 0x20 || *s == 0x7F) {
      snprintf(esc, sizeof esc, "\\x%02x", *s);
      ok = put_bytes(dst, cap, &n, esc, 4);
      len = 1;
    } else if (*s < 0x80) {
      ok = put_bytes(dst, cap, &n, (const char *)s, 1);
      len = 1;
    } else if ((len = utf8_len(s, &cp)) == 0) {
      snprintf(esc, sizeof esc, "\\x%02x", *s);
      ok = put_bytes(dst, cap, &n, esc, 4);
      len = 1;
    } else if (cp <= 0x9F) {
      snprintf(esc, sizeof esc, "\\u%04x", cp);
      ok = put_bytes(dst, cap, &n, esc, 6);
    } else {
      ok = put_bytes(dst, cap, &n, (const char *)s, (size_t)len);
    }
    if (!ok) break;
    s += len;
  }
  if (cap > 0) dst[n] = '\0';
  return n;
}

void odb_ui_replay_times(const odb_event *evs, int n, double max_gap,
                         double *at) {
  double last = 0, clock = 0;   /* the newest usable wall; the clock */
  for (int i = 0; i < n; ++i) {
    double w = evs[i].wall, gap = w - last;
    if (isfinite(w)) {
      if (!(gap > 0)) gap = 0;
      else if (gap > max_gap) gap = max_gap;
      clock += gap;
      last = w;
    }
    at[i] = clock;
  }
}

void odb_ui_fmt_seconds(char *buf, int cap, double s) {
  if (!isfinite(s)) snprintf(buf, (size_t)cap, "-");
  else if (s < 1e-6) snprintf(buf, (size_t)cap, "%.3g ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, (size_t)cap, "%.3g us", s * 1e6);
  else if (s < 1) snprintf(buf, (size_t)cap, "%.3g ms", s * 1e3);
  else if (s < 600) snprintf(buf, (size_t)cap, "%.3g s", s);
  else snprintf(buf, (size_t)cap, "%.3g min", s / 60);
}

void odb_ui_fmt_duration(char *buf, int cap, double s) {
  /* under 1e12 s: the cast to long stays defined */
  long t = s > 0 && s < 1e12 ? (long)(s + 0.5) : s >= 1e12 ? 999999999999L : 0;
  if (t >= 3600)
    snprintf(buf, (size_t)cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else if (t >= 60)
    snprintf(buf, (size_t)cap, "%ld:%02ld", t / 60, t % 60);
  else
    snprintf(buf, (size_t)cap, "%lds", t);
}

/* }====== */
