/* odb_ui_tui_thread.c - the ncurses dashboard (odb_ui_tui.h): its thread
   alone calls curses and feeds the model from the event ring (or a
   recording); it captures stdout and stderr into the log pane and
   restores the terminal, also from a signal handler. The panes are drawn by odb_ui_tui_draw.c and the
   odb_ui_tui_<pane>.c files; keys by odb_ui_tui_keys.c. */
#include "odb_ui_tui_int.h"

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
#define CAPTURE_MAX (8u << 20)  /* bytes of captured output kept */
#define BATCH 256

/* The heat gradient, fast to slow: 256-colour and 8-colour versions. */
static const short heat256[] = { 46, 82, 118, 154, 190, 226, 220, 214, 208,
                                 202, 196 };
static const short heat8[] = { COLOR_GREEN, COLOR_CYAN, COLOR_YELLOW,
                               COLOR_MAGENTA, COLOR_RED };

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
  double now = tui_now();
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
void tui_replay_skip(odb_ui_tui *t) {
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
  int nfds = 0, ms = (int)((next_frame - tui_now()) * 1000) + 1;
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

void *tui_main(void *arg) {
  odb_ui_tui *t = arg;
  double next_frame;
  int ch;
  pthread_setname_np(pthread_self(), "odb-tui");   /* for top -H */
  if (!start_curses(t)) {
    report_start(t, 0);
    return NULL;
  }
  report_start(t, 1);
  t->start = t->rp_last = tui_now();
  next_frame = t->start;
  while (!t->stop && !t->quit) {
    wait_input(t, next_frame);
    while ((ch = getch()) != ERR) tui_on_key(t, ch);
    if (t->redraw || tui_now() >= next_frame) {
      if (t->o.ctx) feed_live(t);
      else feed_replay(t);
      tui_draw(t);
      t->redraw = 0;
      if (tui_now() >= next_frame) next_frame = tui_now() + FRAME;
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

