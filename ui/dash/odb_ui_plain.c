/* odb_ui_plain.c - the plain reporter: a few status lines a second, stderr. */
#include "odb_ui.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_SECONDS 0.1   /* how often the ring is read */
#define LINES_PER_SEC 2.0  /* rate of progress/begin/end lines */
#define BURST 2.0          /* lines that may come at once */
#define BATCH 256          /* events read per poll call */

/*
** Only this thread writes progress lines. It keeps the newest STEP record
** of the running solve and prints it at most every 1/LINES_PER_SEC seconds;
** begin, end, metric and info lines share that budget (a token bucket), so
** a scenario that runs a thousand short solves still gets a few lines a
** second plus "N more solves finished". Warnings and errors bypass it.
*/
struct odb_ui_plain {
  odb_ctx *ctx;
  FILE *out;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stop;              /* under lock */
  uint64_t cursor;       /* last event seq read */
  double tokens, refilled_at, last_line;
  int in_solve;
  char solve[48];
  int have_step;
  odb_event step;        /* newest STEP of the running solve */
  uint64_t shown_step;   /* seq of the STEP last printed */
  long rate_step;        /* step count and time of the previous progress */
  double rate_wall;
  int skipped_ends;      /* SOLVE_END records not printed yet */
  int metric_pending;    /* last_metric was not printed yet */
  odb_event last_metric;
  odb_event last_end;
  long tune_i;           /* newest TUNE_EVAL: i, and wall of the first */
  double tune_begin;
  odb_ui_sweep sweep;    /* the scenario's sweep (ob.progress) */
  int sweep_pending;     /* its newest PROGRESS was not printed yet */
  int offline;           /* a replay: the clock is the recorded one */
  double offline_now;
  odb_ui_fold fold;      /* the warnings so far, folded */
};

/* Seconds on the monotonic clock. */
static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The reporter's clock: monotonic, or the recorded one in a replay. */
static double clock_now(const odb_ui_plain *p) {
  return p->offline ? p->offline_now : now_seconds();
}

/* 1 when a rate-limited line may be printed now (and takes its token). */
static int take_token(odb_ui_plain *p) {
  double now = clock_now(p);
  p->tokens += (now - p->refilled_at) * LINES_PER_SEC;
  p->refilled_at = now;
  if (p->tokens > BURST) p->tokens = BURST;
  if (p->tokens < 1.0) return 0;
  p->tokens -= 1.0;
  p->last_line = now;
  return 1;
}

/* "[   12.3s] " from an event's wall time ("[      ?s] " for one that a
   damaged recording holds: not finite, or beyond a hundred days). */
static void stamp(odb_ui_plain *p, double wall) {
  if (wall > -1e7 && wall < 1e7) fprintf(p->out, "[%7.1fs] ", wall);
  else fputs("[      ?s] ", p->out);
}

/* "<name>: done, ..." for a SOLVE_END record (no newline). */
static void print_end_text(odb_ui_plain *p, const odb_event *e) {
  int ok = strcmp(e->text, "ok") == 0 || e->text[0] == '\0';
  fprintf(p->out, "%s: %s, t=%.6g, %ld steps (%ld acc, %ld rej), %.3g s",
          e->name, ok ? "done" : "stopped", e->t, e->step, e->accepted,
          e->rejected, e->value);
  if (e->value2 > 0) fprintf(p->out, ", %.2f GB/s", e->value2);
  if (!ok) fprintf(p->out, " (%s)", e->text);
}

/* Prints the pending "N more solves finished" line. */
static void print_skipped(odb_ui_plain *p) {
  stamp(p, p->last_end.wall);
  if (p->skipped_ends > 1)
    fprintf(p->out, "%d more solves finished; last: ", p->skipped_ends - 1);
  print_end_text(p, &p->last_end);
  fputc('\n', p->out);
  p->skipped_ends = 0;
}

/* The progress line of the running solve from its newest STEP record. */
static void print_progress(odb_ui_plain *p) {
  const odb_event *e = &p->step;
  double dt = e->wall - p->rate_wall;
  stamp(p, e->wall);
  fprintf(p->out, "  t=%-11.6g h=%-10.3g err=%-9.3g steps=%ld (%ld acc, "
          "%ld rej)", e->t, e->h, e->err, e->step, e->accepted, e->rejected);
  if (dt > 0 && e->step >= p->rate_step)
    fprintf(p->out, "  %.0f steps/s", (double)(e->step - p->rate_step) / dt);
  fputc('\n', p->out);
  p->rate_step = e->step;
  p->rate_wall = e->wall;
  p->shown_step = e->seq;
}

/* The newest metric not shown yet (older ones in a burst are skipped). */
static void print_metric(odb_ui_plain *p) {
  const odb_event *e = &p->last_metric;
  stamp(p, e->wall);
  fprintf(p->out, "metric %s = %.6g%s%s\n", e->name, e->value,
          e->text[0] ? " " : "", e->text);
  p->metric_pending = 0;
}

/*
** ERROR at once; WARN at once the first time, its repeats (odb_ui_fold.h)
** only counted: print_folded gives each repeated one line at the end;
** INFO within the budget; DEBUG never.
*/
static void on_log(odb_ui_plain *p, const odb_event *e) {
  if (e->level == ODB_LOG_ERROR) {
    fprintf(p->out, "odebench: error: %s\n", e->text);
  } else if (e->level == ODB_LOG_WARN) {
    int k = odb_ui_fold_add(&p->fold, e->text, NULL);
    if (p->fold.g[k].count == 1)
      fprintf(p->out, "odebench: warning: %s\n", e->text);
  } else if (e->level == ODB_LOG_INFO && take_token(p)) {
    stamp(p, e->wall);
    fprintf(p->out, "%s\n", e->text);
  }
}

/* "odebench: warning (x22): ..." for every warning that repeated. */
static void print_folded(odb_ui_plain *p) {
  char line[2 * ODB_UI_FOLD_LEN + 64];
  for (int k = 0; k < p->fold.n; ++k) {
    if (p->fold.g[k].count < 2) continue;
    odb_ui_fold_line(&p->fold, k, line, sizeof line);
    fprintf(p->out, "odebench: %s\n", line);
  }
}

/* 1 while a sweep of the scenario (ob.progress) is under way: its bar
   then has the line budget before begin and end lines. */
static int in_sweep(const odb_ui_plain *p) {
  return p->sweep.active && p->sweep.i < p->sweep.n;
}

/* A solve starts: its progress is tracked from here. */
static void on_begin(odb_ui_plain *p, const odb_event *e) {
  p->in_solve = 1;
  p->have_step = 0;
  snprintf(p->solve, sizeof p->solve, "%s", e->name);
  p->rate_step = 0;
  p->rate_wall = e->wall;
  if (!in_sweep(p) && take_token(p)) {
    stamp(p, e->wall);
    fprintf(p->out, "%s: n=%.0f, from t=%.6g\n", e->name, e->value, e->t);
  }
}

/* A solve ends: printed now or summed into "N more solves finished". */
static void on_end(odb_ui_plain *p, const odb_event *e) {
  p->in_solve = 0;
  p->have_step = 0;
  p->last_end = *e;
  p->skipped_ends++;
  if (!in_sweep(p) && take_token(p)) print_skipped(p);
}

/* A 20-character bar "#####---------------" of i out of n into bar[21]. */
static void make_bar(char *bar, long i, long n) {
  int full = n > 0 ? (int)(20.0 * (double)i / (double)n + 0.5) : 0;
  if (full > 20) full = 20;
  for (int k = 0; k < 20; ++k) bar[k] = k < full ? '#' : '-';
  bar[20] = '\0';
}

/* "sweep [#####-----] 3/12 eta 0:42  N=128 fused" for the newest report. */
static void print_sweep(odb_ui_plain *p) {
  const odb_ui_sweep *w = &p->sweep;
  char bar[24], eta[32] = "";
  double left = odb_ui_sweep_eta(w);
  make_bar(bar, w->i, w->n);
  if (left > 0) odb_ui_fmt_duration(eta, sizeof eta, left);
  stamp(p, w->wall);
  fprintf(p->out, "sweep [%s] %ld/%ld%s%s%s%s\n", bar, w->i, w->n,
          eta[0] ? " eta " : "", eta, w->label[0] ? "  " : "", w->label);
  p->sweep_pending = 0;
}

/* ob.progress: a bar within the line budget; otherwise the newest report
   waits for the next token (a burst of reports shows only the newest). */
static void on_progress(odb_ui_plain *p, const odb_event *e) {
  odb_ui_sweep_apply(&p->sweep, e);
  p->sweep_pending = 1;
  if (take_token(p)) print_sweep(p);
}

/*
** "tune [#####-----] 12/40 eta 1:02  tile=4 stride=A: 1.23 ms (spread 2.1%)"
** within the line budget; the last configuration is always shown.
*/
static void on_tune_eval(odb_ui_plain *p, const odb_event *e) {
  char bar[24], eta[32] = "", med[32];
  long i = e->step, n = e->accepted;
  if (i <= 1 || i < p->tune_i) p->tune_begin = e->wall;
  p->tune_i = i;
  if (p->skipped_ends > 0 && take_token(p)) print_skipped(p);  /* in order */
  if (p->metric_pending && take_token(p)) print_metric(p);
  if (!(n > 0 && i >= n) && !take_token(p)) return;
  make_bar(bar, i, n);
  if (i > 1 && n > i)
    odb_ui_fmt_duration(eta, sizeof eta, (e->wall - p->tune_begin) /
                        (double)(i - 1) * (double)(n - i));
  if (e->value > 0) odb_ui_fmt_seconds(med, sizeof med, e->value);
  else snprintf(med, sizeof med, "failed");
  stamp(p, e->wall);
  fprintf(p->out, "tune [%s] %ld/%ld%s%s  %s: %s", bar, i, n,
          eta[0] ? " eta " : "", eta, e->name, med);
  if (e->value > 0) fprintf(p->out, " (spread %.1f%%)", 100 * e->value2);
  fputc('\n', p->out);
}

/* One record; STEP records are only remembered. */
static void handle(odb_ui_plain *p, const odb_event *e) {
  switch (e->kind) {
  case ODB_EV_LOG: on_log(p, e); break;
  case ODB_EV_SOLVE_BEGIN: on_begin(p, e); break;
  case ODB_EV_STEP:
    p->step = *e;
    p->have_step = 1;
    break;
  case ODB_EV_SOLVE_END: on_end(p, e); break;
  case ODB_EV_METRIC:
    p->last_metric = *e;
    p->metric_pending = 1;
    if (take_token(p)) print_metric(p);
    break;
  case ODB_EV_TUNE_EVAL: on_tune_eval(p, e); break;
  case ODB_EV_PROGRESS: on_progress(p, e); break;
  case ODB_EV_TUNE_BEST: {
    char med[32];
    odb_ui_fmt_seconds(med, sizeof med, e->value);
    stamp(p, e->wall);
    fprintf(p->out, "best so far %s: %s\n", e->name, med);
    break;
  }
  default:
    break;
  }
}

/* Prints the pending lines the budget allows, the sweep's bar first. */
static void flush_pending(odb_ui_plain *p) {
  if (p->sweep_pending && take_token(p)) print_sweep(p);
  if (p->skipped_ends > 0 && take_token(p)) print_skipped(p);
  if (p->metric_pending && take_token(p)) print_metric(p);
  if (p->in_solve && p->have_step && p->step.seq != p->shown_step &&
      clock_now(p) - p->last_line >= 1.0 / LINES_PER_SEC && take_token(p))
    print_progress(p);
  fflush(p->out);
}

/* Reads everything queued; then prints what the budget allows. */
static void drain(odb_ui_plain *p) {
  odb_event batch[BATCH];
  int n;
  do {
    n = odb_event_poll(p->ctx->events, &p->cursor, batch, BATCH, NULL);
    for (int i = 0; i < n; ++i) handle(p, &batch[i]);
  } while (n == BATCH);
  flush_pending(p);
}

/* Adds s seconds to a CLOCK_MONOTONIC timespec. */
static void add_seconds(struct timespec *ts, double s) {
  long ns = ts->tv_nsec + (long)(s * 1e9);
  ts->tv_sec += ns / 1000000000L;
  ts->tv_nsec = ns % 1000000000L;
}

/* The thread: drain, wait POLL_SECONDS (or for stop), repeat; flush at end. */
static void *plain_main(void *arg) {
  odb_ui_plain *p = arg;
  int stop = 0;
  pthread_setname_np(pthread_self(), "odb-plain");   /* for top -H */
  while (!stop) {
    struct timespec until;
    drain(p);
    clock_gettime(CLOCK_MONOTONIC, &until);
    add_seconds(&until, POLL_SECONDS);
    pthread_mutex_lock(&p->lock);
    while (!p->stop &&
           pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT) {
    }
    stop = p->stop;
    pthread_mutex_unlock(&p->lock);
  }
  drain(p);
  if (p->skipped_ends > 0) print_skipped(p);
  if (p->metric_pending) print_metric(p);
  if (p->sweep_pending) print_sweep(p);
  if (p->in_solve && p->have_step && p->step.seq != p->shown_step)
    print_progress(p);
  print_folded(p);
  fflush(p->out);
  return NULL;
}

/* Starts reading from the newest event on: older ones are not shown. */
odb_status odb_ui_plain_start(odb_ctx *ctx, FILE *out, odb_ui_plain **pp) {
  odb_ui_plain *p;
  pthread_condattr_t ca;
  if (!ctx || !ctx->events || !out || !pp)
    return ODB_FAIL(ODB_ERR_ARG, "plain ui: context, events and out needed");
  *pp = NULL;
  p = calloc(1, sizeof *p);
  if (!p) return ODB_FAIL(ODB_ERR_NOMEM, "plain ui: out of memory");
  p->ctx = ctx;
  p->out = out;
  p->tokens = BURST;
  p->refilled_at = now_seconds();
  p->last_line = p->refilled_at;
  p->cursor = odb_event_last_seq(ctx->events);
  pthread_mutex_init(&p->lock, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&p->cond, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&p->thread, NULL, plain_main, p) != 0) {
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return ODB_FAIL(ODB_ERR_INTERNAL, "plain ui: cannot start its thread");
  }
  *pp = p;
  return ODB_OK;
}

/* The thread prints what is left before it ends; then everything goes. */
void odb_ui_plain_stop(odb_ui_plain *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_signal(&p->cond);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cond);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

/* Sleeps until the recorded time wall (scaled by speed) has come. */
static void pace(double t0, double wall, double speed) {
  double due = t0 + wall / speed, left = due - now_seconds();
  if (left > 0) {
    struct timespec ts;
    if (left > 0.2) left = 0.2;          /* stay responsive to interrupts */
    ts.tv_sec = (time_t)left;
    ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
  }
}

/* The live reporter's drain, fed from memory: the clock advances with the
   recorded walls (odb_ui_replay_times: at most ODB_UI_REPLAY_MAX_WAIT
   seconds of waiting between two events) and the pending lines go out
   every POLL_SECONDS of it. */
void odb_ui_plain_replay(const odb_event *evs, int n, double speed,
                         FILE *out, volatile sig_atomic_t *interrupt) {
  odb_ui_plain *p = calloc(1, sizeof *p);
  double *at = malloc((size_t)(n + 1) * sizeof *at);
  double t0 = now_seconds(), next_poll = POLL_SECONDS;
  if (!p || !at) {
    free(p);
    free(at);
    fprintf(out, "odebench: replay: out of memory\n");
    return;
  }
  odb_ui_replay_times(evs, n, ODB_UI_REPLAY_MAX_WAIT * (speed > 0 ? speed : 1),
                      at);
  p->out = out;
  p->offline = 1;
  p->tokens = BURST;
  for (int i = 0; i < n && !(interrupt && *interrupt); ++i) {
    while (speed > 0 && now_seconds() < t0 + at[i] / speed &&
           !(interrupt && *interrupt))
      pace(t0, at[i], speed);
    p->offline_now = at[i];
    handle(p, &evs[i]);
    if (at[i] >= next_poll) {
      flush_pending(p);
      next_poll = at[i] + POLL_SECONDS;
    }
  }
  if (p->skipped_ends > 0) print_skipped(p);
  if (p->metric_pending) print_metric(p);
  if (p->sweep_pending) print_sweep(p);
  if (p->in_solve && p->have_step && p->step.seq != p->shown_step)
    print_progress(p);
  print_folded(p);
  fflush(out);
  free(at);
  free(p);
}
