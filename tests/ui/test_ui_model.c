/* test_ui_model.c - the dashboard's model (rates, finished solves from
   their results rows, tuning table, heatmap, tuning throughput, folded
   warnings, the ranks' lines), the plain reporter's folded warnings and
   the events.jsonl recorder and reader. Links ui_dep. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odebench.h"
#include "odb_ui.h"
#include "odb_ui_events.h"
#include "odb_ui_model.h"
#include "tap.h"

/* An event of kind k at wall w (other fields zero). */
static odb_event ev(int k, double w) {
  odb_event e;
  memset(&e, 0, sizeof e);
  e.kind = k;
  e.wall = w;
  return e;
}

/* A TUNE_EVAL of configuration name: i of n, median, relative spread. */
static odb_event tune(const char *name, long i, long n, double med,
                      double spread) {
  odb_event e = ev(ODB_EV_TUNE_EVAL, 1.0 + 0.1 * (double)i);
  snprintf(e.name, sizeof e.name, "%s", name);
  e.step = i;
  e.accepted = n;
  e.value = med;
  e.value2 = spread;
  snprintf(e.text, sizeof e.text, "exhaustive %ld/%ld", i, n);
  return e;
}

/* A SOLVE_ROW of name with its row's figures. */
static odb_event solve_row(double w, const char *name, long steps, long n,
                           double sec, double gbs, double floor_pct) {
  odb_event e = ev(ODB_EV_SOLVE_ROW, w);
  snprintf(e.name, sizeof e.name, "%.*s", (int)sizeof e.name - 1, name);
  snprintf(e.text, sizeof e.text, "ok");
  e.step = steps;
  e.accepted = n;
  e.value = sec;
  e.value2 = gbs;
  e.t = floor_pct;
  return e;
}

static void test_parse_config(void) {
  char k[ODB_UI_PARAM_MAX][ODB_UI_KEY_LEN], v[ODB_UI_PARAM_MAX][ODB_UI_VAL_LEN];
  int n = odb_ui_parse_config("tile=4, stride=A;x y=", k, v, ODB_UI_PARAM_MAX);
  tap_ok(n == 3 && strcmp(k[0], "tile") == 0 && strcmp(v[0], "4") == 0 &&
         strcmp(k[1], "stride") == 0 && strcmp(v[1], "A") == 0 &&
         strcmp(k[2], "y") == 0 && v[2][0] == '\0',
         "parse_config splits k=v pairs, skips items without '=' (%d)", n);
}

/* Rates from STEP records: bytes over the wall time between them. */
static void test_solve_rates(void) {
  odb_ui_info info;
  odb_ui_model *m = malloc(sizeof *m);
  odb_event e;
  memset(&info, 0, sizeof info);
  info.floor_read = 10e9;
  info.floor_copy = 10e9;
  odb_ui_model_init(m, &info);
  e = ev(ODB_EV_SOLVE_BEGIN, 0.0);
  snprintf(e.name, sizeof e.name, "p/m/v");
  e.value = 1000;
  e.value2 = 2.0;
  odb_ui_model_apply(m, &e);
  e = ev(ODB_EV_STEP, 0.5);
  snprintf(e.name, sizeof e.name, "p/m/v");
  e.step = 100;
  e.t = 1.0;
  e.value = 4e9;          /* read 4 GB, wrote 1 GB in 0.5 s: 10 GB/s */
  e.value2 = 1e9;
  snprintf(e.text, sizeof e.text, "flops=%e", 2e9);
  odb_ui_model_apply(m, &e);
  tap_ok(fabs(m->gbs - 10.0) < 1e-9, "GB/s from STEP bytes (%g)", m->gbs);
  tap_ok(fabs(m->gflops - 4.0) < 1e-9, "GFLOP/s from STEP flops (%g)",
         m->gflops);
  tap_ok(fabs(m->floor_pct - 100.0) < 1e-6, "%% of the floor (%g)",
         m->floor_pct);
  tap_ok(fabs(m->solve.steps_per_s - 200) < 1e-9 && m->solve.t1 == 2.0,
         "steps per second and t1 from SOLVE_BEGIN");
  e = ev(ODB_EV_SOLVE_END, 0.6);
  snprintf(e.name, sizeof e.name, "p/m/v");
  snprintf(e.text, sizeof e.text, "ok");
  e.step = 120;
  e.value = 0.6;
  e.value2 = 9.0;
  odb_ui_model_apply(m, &e);
  tap_ok(!m->solve.active && m->nsolves == 1 &&
         odb_ui_model_done(m, 0)->gbs == 9.0 && m->gbs == 9.0,
         "SOLVE_END finishes the solve with its GB/s");
  tap_ok(odb_ui_model_nspark(m) >= 1 && m->peak_gbs >= 10.0,
         "throughput history and peak");
  odb_ui_model_free(m);
  free(m);
}

/* The best table, ties and the heatmap over two of three parameters. */
static void test_tuning(void) {
  odb_ui_model *m = malloc(sizeof *m);
  double cells[ODB_UI_VALUE_MAX * ODB_UI_VALUE_MAX];
  odb_event e;
  int tile = -1, stride = -1;
  odb_ui_model_init(m, NULL);
  e = tune("tile=8 stride=B u=1", 1, 5, 2e-3, 0.01);
  odb_ui_model_apply(m, &e);
  e = tune("tile=2 stride=A u=1", 2, 5, 5e-3, 0.01);
  odb_ui_model_apply(m, &e);
  e = tune("tile=16 stride=A u=2", 3, 5, 1e-3, 0.05);
  odb_ui_model_apply(m, &e);
  e = tune("tile=16 stride=A u=1", 4, 5, 1.04e-3, 0.01);
  odb_ui_model_apply(m, &e);
  e = tune("tile=2 stride=B u=1", 5, 5, NAN, NAN);     /* failed: skipped */
  odb_ui_model_apply(m, &e);
  tap_ok(m->nevals == 4 && m->tune_i == 5 && m->tune_n == 5,
         "failed evaluations count but do not rank (%d kept)", m->nevals);
  tap_ok(m->nbest == 4 && strcmp(m->evals[m->best[0]].config,
                                 "tile=16 stride=A u=2") == 0 &&
         strcmp(m->evals[m->best[3]].config, "tile=2 stride=A u=1") == 0,
         "best configurations sorted by median");
  tap_ok(odb_ui_tied(&m->evals[m->best[1]], &m->evals[m->best[0]]) &&
         !odb_ui_tied(&m->evals[m->best[2]], &m->evals[m->best[0]]),
         "ties within the spread");
  tap_ok(m->have_best && m->best_median == 1e-3, "best so far");
  for (int k = 0; k < m->nparams; ++k) {
    if (strcmp(m->params[k].name, "tile") == 0) tile = k;
    if (strcmp(m->params[k].name, "stride") == 0) stride = k;
  }
  tap_ok(m->nparams == 3 && tile >= 0 && stride >= 0 &&
         m->params[tile].numeric && m->params[tile].nvalues == 3,
         "parameters and their values from the configurations");
  /* tile in numeric order 2, 8, 16 on the columns; stride A, B rows */
  tap_ok(strcmp(m->params[tile].values[m->params[tile].order[2]], "16") == 0,
         "numeric values in numeric order");
  odb_ui_model_heat(m, tile, stride, cells);
  tap_ok(cells[0 * 3 + 0] == 5e-3 && isnan(cells[0 * 3 + 1]) &&
         cells[0 * 3 + 2] == 1e-3 && cells[1 * 3 + 1] == 2e-3 &&
         isnan(cells[1 * 3 + 0]),
         "heat cells: the smallest median per pair, NAN where none");
  e = tune("a=1", 1, 2, 3e-3, 0.0);     /* a new run starts over */
  odb_ui_model_apply(m, &e);
  tap_ok(m->nevals == 1 && m->nparams == 1, "a new tuning run resets");
  odb_ui_model_free(m);
  free(m);
}

/* Events pushed to a context come back from events.jsonl unchanged. */
/* A PROGRESS of a sweep: i of n done at wall w. */
static odb_event progress(long i, long n, double w, const char *label) {
  odb_event e = ev(ODB_EV_PROGRESS, w);
  e.step = i;
  e.accepted = n;
  snprintf(e.name, sizeof e.name, "%s", label);
  return e;
}

/* ob.progress folded into the model: i of n, label, estimate, restarts. */
static void test_sweep(void) {
  odb_ui_model *m = malloc(sizeof *m);
  odb_event e;
  odb_ui_model_init(m, NULL);
  tap_ok(!m->sweep.active && odb_ui_sweep_eta(&m->sweep) < 0,
         "no sweep before the first report");
  e = progress(0, 10, 1.0, "");
  odb_ui_model_apply(m, &e);
  tap_ok(m->sweep.active && m->sweep.i == 0 && m->sweep.n == 10 &&
         odb_ui_sweep_eta(&m->sweep) < 0, "0 of 10: started, no estimate");
  e = progress(2, 10, 5.0, "N=64 fused");
  odb_ui_model_apply(m, &e);
  tap_ok(fabs(odb_ui_sweep_eta(&m->sweep) - 16.0) < 1e-12 &&
         strcmp(m->sweep.label, "N=64 fused") == 0,
         "2 of 10 after 4 s: 16 s left (%g)", odb_ui_sweep_eta(&m->sweep));
  e = progress(10, 10, 21.0, "last");
  odb_ui_model_apply(m, &e);
  tap_ok(odb_ui_sweep_eta(&m->sweep) == 0, "10 of 10: done");
  e = progress(1, 4, 30.0, "again");                /* a new sweep */
  odb_ui_model_apply(m, &e);
  tap_ok(m->sweep.begin_i == 1 && m->sweep.begin_wall == 30.0 &&
         odb_ui_sweep_eta(&m->sweep) < 0, "a new n restarts the clock");
  e = progress(3, 4, 34.0, "");
  odb_ui_model_apply(m, &e);
  tap_ok(fabs(odb_ui_sweep_eta(&m->sweep) - 2.0) < 1e-12,
         "the clock of a sweep without a 0 report starts at its first (%g)",
         odb_ui_sweep_eta(&m->sweep));
  odb_ui_model_free(m);
  free(m);
}

static void test_record_read(void) {
  odb_ctx_opts co;
  odb_ctx *c = NULL;
  odb_ui_recorder *r = NULL;
  odb_ui_info info, back;
  odb_event e, *evs = NULL;
  char dir[] = "/tmp/odb-ui-test.XXXXXX", path[64], part[80];
  int n = 0, ok;
  memset(&co, 0, sizeof co);
  memset(&info, 0, sizeof info);
  snprintf(info.scenario, sizeof info.scenario, "s\"q\\uote.lua");
  info.floor_read = 1.5e10;
  if (!mkdtemp(dir) || odb_ctx_create(&co, &c) != ODB_OK) {
    tap_ok(0, "setup: %s", odb_last_error());
    return;
  }
  snprintf(path, sizeof path, "%s/events.jsonl", dir);
  snprintf(part, sizeof part, "%s.part", path);
  tap_ok(odb_ui_record_start(c, path, &info, &r) == ODB_OK,
         "recorder starts");
  e = ev(ODB_EV_LOG, 0);
  e.level = ODB_LOG_WARN;
  snprintf(e.text, sizeof e.text, "tab\there \xc3\xa9 \"quoted\"\n");
  odb_ctx_publish(c, &e);
  e = tune("tile=4 stride=A", 3, 9, 1.25e-3, 0.02);
  odb_ctx_publish(c, &e);
  e = tune("tile=8 stride=A", 4, 9, NAN, NAN);
  odb_ctx_publish(c, &e);
  e = progress(3, 12, 0, "N=128 dopri5/fused");
  odb_ctx_publish(c, &e);
  e = solve_row(0, "bruss2d/radau1a5/PipeDb1mt", 10, 8192, 0.061, 22.9,
                229.5);
  odb_ctx_publish(c, &e);
  tap_ok(access(path, F_OK) != 0, "no events.jsonl while the run goes");
  tap_ok(odb_ui_record_finish(r, 1) == ODB_OK && access(part, F_OK) != 0,
         "finish renames the .part file");
  ok = odb_ui_events_read(path, &back, &evs, &n) == ODB_OK;
  tap_ok(ok && n == 5, "read back: %d events (%s)", n, odb_last_error());
  if (ok && n == 5) {
    tap_ok(strcmp(back.scenario, info.scenario) == 0 &&
           back.floor_read == 1.5e10, "header round trip");
    tap_ok(evs[0].kind == ODB_EV_LOG && evs[0].level == ODB_LOG_WARN &&
           strcmp(evs[0].text, "tab\\x09here \xc3\xa9 \"quoted\"\\x0a") == 0,
           "log text with escapes reads back, its control characters "
           "escaped for a terminal");
    tap_ok(evs[1].kind == ODB_EV_TUNE_EVAL && evs[1].step == 3 &&
           evs[1].accepted == 9 && evs[1].value == 1.25e-3 &&
           evs[1].value2 == 0.02 && strcmp(evs[1].name, "tile=4 stride=A") == 0
           && evs[1].seq == evs[0].seq + 1 && evs[1].wall >= evs[0].wall,
           "numbers, names, seq and wall round trip");
    tap_ok(isnan(evs[2].value), "NAN is written as null and read as NAN");
    tap_ok(evs[3].kind == ODB_EV_PROGRESS && evs[3].step == 3 &&
           evs[3].accepted == 12 &&
           strcmp(evs[3].name, "N=128 dopri5/fused") == 0 &&
           strcmp(odb_ui_event_kind_name(evs[3].kind), "progress") == 0,
           "a sweep's progress round trip");
    tap_ok(evs[4].kind == ODB_EV_SOLVE_ROW && evs[4].t == 229.5 &&
           evs[4].accepted == 8192 && evs[4].step == 10 &&
           evs[4].value == 0.061 &&
           strcmp(evs[4].name, "bruss2d/radau1a5/PipeDb1mt") == 0 &&
           strcmp(odb_ui_event_kind_name(evs[4].kind), "solve_row") == 0,
           "a solve row's figures round trip");
  }
  free(evs);
  r = NULL;
  tap_ok(odb_ui_record_start(c, path, &info, &r) == ODB_OK &&
         odb_ui_record_finish(r, 0) == ODB_OK && access(part, F_OK) != 0,
         "finish without keep removes the file");
  /* corrupt files: a clear message with the line */
  {
    FILE *f = fopen(path, "w");
    fputs("{\"kind\":\"run\"}\n{\"kind\":\"step\",\"t\":}\n", f);
    fclose(f);
    tap_ok(odb_ui_events_read(path, &back, &evs, &n) == ODB_ERR_ARG &&
           strstr(odb_last_error(), ":2: not valid JSON") != NULL,
           "a bad line is named (%s)", odb_last_error());
    f = fopen(path, "w");
    fputs("{\"kind\":\"step\"}\n", f);
    fclose(f);
    tap_ok(odb_ui_events_read(path, &back, &evs, &n) == ODB_ERR_ARG &&
           strstr(odb_last_error(), "not an odebench events file") != NULL,
           "a file without the run header is refused");
    f = fopen(path, "w");
    fclose(f);
    tap_ok(odb_ui_events_read(path, &back, &evs, &n) == ODB_ERR_ARG,
           "an empty file is refused");
  }
  unlink(path);
  rmdir(dir);
  odb_ctx_destroy(c);
}


/* A SOLVE_END of name. */
static odb_event solve_end(double w, const char *name, long steps,
                           double sec, double gbs) {
  odb_event e = ev(ODB_EV_SOLVE_END, w);
  snprintf(e.name, sizeof e.name, "%.*s", (int)sizeof e.name - 1, name);
  snprintf(e.text, sizeof e.text, "ok");
  e.step = steps;
  e.value = sec;
  e.value2 = gbs;
  return e;
}

/*
** The floor % of a finished solve is its results row's, never one the
** model computes from the header's figures (a cached bandwidth the row
** did not divide by); the timed runs of one row become one entry.
*/
static void test_row_floor(void) {
  odb_ui_info info;
  odb_ui_model *m = malloc(sizeof *m);
  const char *name = "bruss2d/radau1a5/PipeDb1m";
  odb_event e;
  memset(&info, 0, sizeof info);
  info.floor_read = 10e9;      /* would give 140% for these bytes */
  info.floor_copy = 10e9;
  odb_ui_model_init(m, &info);
  e = ev(ODB_EV_SOLVE_BEGIN, 0.0);
  snprintf(e.name, sizeof e.name, "%s", name);
  e.value = 8192;
  e.value2 = 1.0;
  odb_ui_model_apply(m, &e);
  e = ev(ODB_EV_STEP, 0.1);
  snprintf(e.name, sizeof e.name, "%s", name);
  e.step = 10;
  e.value = 1.4e9;
  e.value2 = 0;
  odb_ui_model_apply(m, &e);
  e = solve_end(0.2, name, 10, 0.1, 14.0);
  odb_ui_model_apply(m, &e);
  tap_ok(m->nsolves == 1 && odb_ui_model_done(m, 0)->floor_pct < 0 &&
         m->floor_pct < 0,
         "SOLVE_END alone: the floor is unknown (%g), not computed from the "
         "header's figures", odb_ui_model_done(m, 0)->floor_pct);
  tap_ok(odb_ui_model_done(m, 0)->n == 8192, "n from SOLVE_BEGIN (%g)",
         odb_ui_model_done(m, 0)->n);
  e = solve_row(0.21, name, 10, 8192, 0.061, 22.9, 229.5);
  odb_ui_model_apply(m, &e);
  tap_ok(m->nsolves == 1 && odb_ui_model_done(m, 0)->from_row &&
         odb_ui_model_done(m, 0)->floor_pct == 229.5 && m->floor_pct == 229.5,
         "SOLVE_ROW: the row's floor 229.5%% in the table and the pane "
         "(%ld entries, %g, %g)", m->nsolves,
         odb_ui_model_done(m, 0)->floor_pct, m->floor_pct);
  tap_ok(odb_ui_model_done(m, 0)->seconds == 0.061 &&
         odb_ui_model_done(m, 0)->gbs == 22.9 && m->gbs == 22.9 &&
         odb_ui_model_done(m, 0)->n == 8192 &&
         odb_ui_model_done(m, 0)->steps == 10,
         "SOLVE_ROW: the row's seconds, GB/s, n and steps");
  /* a repeated measurement: three timed runs, one row */
  for (int k = 0; k < 3; ++k) {
    e = solve_end(1.0 + k, "bruss2d/radau1a5/PipeDb1mt", 10, 0.05, 20);
    odb_ui_model_apply(m, &e);
  }
  tap_ok(m->nsolves == 4, "three SOLVE_ENDs: three entries until the row");
  e = solve_row(4.0, "bruss2d/radau1a5/PipeDb1mt", 10, 8192, 0.05, 20, -1);
  odb_ui_model_apply(m, &e);
  tap_ok(m->nsolves == 2 && odb_ui_model_done(m, 0)->from_row &&
         odb_ui_model_done(m, 0)->floor_pct < 0 &&
         odb_ui_model_done(m, 1)->floor_pct == 229.5,
         "their row replaces them; a row without floor_pct shows none "
         "(%ld entries)", m->nsolves);
  /* a row without SOLVE_END (dropped events) is an entry of its own */
  e = solve_row(5.0, name, 10, 8192, 0.06, 23, 231.25);
  odb_ui_model_apply(m, &e);
  tap_ok(m->nsolves == 3 && odb_ui_model_done(m, 0)->floor_pct == 231.25 &&
         odb_ui_model_done(m, 1)->from_row,
         "a row without SOLVE_END adds one entry and keeps the others");
  odb_ui_model_free(m);
  free(m);
}

/* Names are kept whole: five variants that share a prefix stay apart. */
static void test_full_names(void) {
  static const char *const v[] = { "PipeDe2m", "PipeDb2m", "PipeDb2mt",
                                   "PipeDb1m", "PipeDb1mt" };
  odb_ui_model *m = malloc(sizeof *m);
  char want[64];
  int ok = 1;
  odb_ui_model_init(m, NULL);
  for (int k = 0; k < 5; ++k) {
    odb_event e;
    snprintf(want, sizeof want, "bruss2d/radau1a5/%s", v[k]);
    e = solve_row(k, want, 10, 2048, 1e-3, 1, 50);
    odb_ui_model_apply(m, &e);
  }
  for (int k = 0; k < 5; ++k) {
    snprintf(want, sizeof want, "bruss2d/radau1a5/%s", v[4 - k]);
    ok &= strcmp(odb_ui_model_done(m, k)->name, want) == 0 &&
          odb_ui_model_done(m, k)->n == 2048;
  }
  tap_ok(ok, "finished solves keep problem/method/variant whole, with n");
  odb_ui_model_free(m);
  free(m);
}

/* A tuning run's throughput: runs a second of each configuration. */
static void test_tune_throughput(void) {
  odb_ui_model *m = malloc(sizeof *m);
  odb_event e;
  odb_ui_model_init(m, NULL);
  e = tune("block=16", 1, 3, 2e-3, 0.01);
  odb_ui_model_apply(m, &e);
  e = tune("block=32", 2, 3, NAN, NAN);          /* failed: no sample */
  odb_ui_model_apply(m, &e);
  e = tune("block=64", 3, 3, 5e-4, 0.01);
  odb_ui_model_apply(m, &e);
  tap_ok(odb_ui_model_ntune_rate(m) == 2 &&
         fabs(odb_ui_model_tune_rate(m, 0) - 2000) < 1e-9 &&
         fabs(odb_ui_model_tune_rate(m, 1) - 500) < 1e-9 &&
         fabs(m->tune_rate_peak - 2000) < 1e-9,
         "TUNE_EVAL gives runs/s = 1 / median, newest first, and the peak "
         "(%d samples)", odb_ui_model_ntune_rate(m));
  e = tune("block=16", 1, 2, 1e-3, 0.01);        /* a new tuning run */
  odb_ui_model_apply(m, &e);
  tap_ok(odb_ui_model_ntune_rate(m) == 1 && m->tune_rate_peak == 1000,
         "a new tuning run starts its throughput anew");
  odb_ui_model_free(m);
  free(m);
}

/* The tuner's rejection of configuration (variant, block), cut at 128
   bytes as odb_ctx_log cuts it. */
static void rejection(char *buf, const char *variant, int block) {
  char full[256];
  snprintf(full, sizeof full, "tune strategies bruss2d(N=64): variant=%s "
           "block=%d failed: setup: variant '%s' does not apply: block %d is "
           "smaller than the access distance 128", variant, block, variant,
           block);
  snprintf(buf, 128, "%.127s", full);   /* cut as the log cuts it */
  if (strlen(full) > 127) memcpy(buf + 124, "...", 4);
}

static const char *const fold_variants[] = { "PipeDb1m", "PipeDb1mt",
                                             "ppDb1m", "ppDb1mt" };

/* Warnings of one shape fold into one line with their count. */
static void test_fold(void) {
  odb_ui_fold f;
  char text[160], line[512];
  int k = -1, evicted = 0;
  odb_ui_fold_init(&f);
  for (int i = 0; i < 22; ++i) {
    rejection(text, fold_variants[i % 4], 16 << (i % 3));
    k = odb_ui_fold_add(&f, text, NULL);
  }
  odb_ui_fold_line(&f, k, line, sizeof line);
  tap_ok(f.n == 1 && f.g[0].count == 22 &&
         strcmp(line, "warning (x22): tune strategies bruss2d(N=64): "
                "variant=* block=* failed: setup: variant '*' does not apply: "
                "... (first: block 16 is small...)") == 0,
         "22 rejections fold into one line (%s)", line);
  k = odb_ui_fold_add(&f, "memory bandwidth unknown: no cache", NULL);
  odb_ui_fold_add(&f, "memory bandwidth unknown: no cache", NULL);
  odb_ui_fold_add(&f, "memory bandwidth unknown: no cache", NULL);
  odb_ui_fold_line(&f, k, line, sizeof line);
  tap_ok(f.n == 2 && strcmp(line, "warning (x3): memory bandwidth unknown: "
                            "no cache") == 0,
         "the same warning three times: its detail kept (%s)", line);
  k = odb_ui_fold_add(&f, "team of 4 threads on 2 cores", NULL);
  odb_ui_fold_line(&f, k, line, sizeof line);
  tap_ok(f.n == 3 && strcmp(line, "warning: team of 4 threads on 2 cores")
                     == 0, "a warning of another shape stands alone (%s)",
         line);
  k = odb_ui_fold_add(&f, "team of 8 threads on 2 cores", NULL);
  odb_ui_fold_line(&f, k, line, sizeof line);
  tap_ok(f.n == 3 && strcmp(line, "warning (x2): team of * threads on 2 "
                            "cores") == 0, "words with digits may differ (%s)",
         line);
  for (int i = 0; i < ODB_UI_FOLD_MAX; ++i) {
    snprintf(text, sizeof text, "%c%c only", 'a' + i / 26, 'a' + i % 26);
    k = odb_ui_fold_add(&f, text, &evicted);
  }
  tap_ok(f.n == ODB_UI_FOLD_MAX && evicted,
         "past %d shapes the least recently used one makes way",
         ODB_UI_FOLD_MAX);
}

/* The dashboard's log: a repeated warning is one line, the newest. */
static void test_log_fold(void) {
  odb_ui_model *m = malloc(sizeof *m);
  char text[160];
  int warnings = 0;
  odb_ui_model_init(m, NULL);
  for (int i = 0; i < 22; ++i) {
    rejection(text, fold_variants[i % 4], 16 << (i % 3));
    odb_ui_model_log(m, i, ODB_LOG_WARN, text);
    if (i == 10) odb_ui_model_log(m, i, ODB_LOG_INFO, "an info line");
  }
  for (long k = 0; odb_ui_model_logline(m, k); ++k)
    warnings += odb_ui_model_logline(m, k)->level == ODB_LOG_WARN;
  tap_ok(warnings == 1 && m->nlog == 2 &&
         strncmp(odb_ui_model_logline(m, 0)->text, "warning (x22): tune "
                 "strategies bruss2d(N=64): variant=* block=* failed", 50)
         == 0 && strcmp(odb_ui_model_logline(m, 1)->text, "an info line") == 0,
         "22 warnings are one log line, after the info line (%s)",
         odb_ui_model_logline(m, 0)->text);
  odb_ui_model_free(m);
  free(m);
}

/* The plain reporter: the first warning at once, the count at the end. */
static void test_plain_fold(void) {
  odb_event evs[24];
  char *buf = NULL, text[160];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int n = 0, lines = 0;
  for (int i = 0; i < 22; ++i) {
    evs[n] = ev(ODB_EV_LOG, 0.1 * i);
    evs[n].level = ODB_LOG_WARN;
    rejection(text, fold_variants[i % 4], 16 << (i % 3));
    snprintf(evs[n].text, sizeof evs[n].text, "%.*s",
             (int)sizeof evs[n].text - 1, text);
    n++;
  }
  evs[n] = ev(ODB_EV_LOG, 3.0);
  evs[n].level = ODB_LOG_WARN;
  snprintf(evs[n++].text, sizeof evs[0].text, "another warning");
  odb_ui_plain_replay(evs, n, 0, f, NULL);
  fclose(f);
  for (char *p = buf; (p = strstr(p, "odebench: warning")); ++p) ++lines;
  tap_ok(lines == 3 &&
         strstr(buf, "odebench: warning: tune strategies bruss2d(N=64): "
                "variant=PipeDb1m block=16 failed") != NULL &&
         strstr(buf, "odebench: warning: another warning\n") != NULL &&
         strstr(buf, "odebench: warning (x22): tune strategies "
                "bruss2d(N=64): variant=* block=* failed: setup: variant '*' "
                "does not apply: ... (first: block 16 is small...)\n") != NULL,
         "plain: 23 warnings in 3 lines:\n%s", buf);
  free(buf);
}

static void test_format(void) {
  char b[32];
  odb_ui_fmt_seconds(b, sizeof b, 1.234e-3);
  tap_ok(strcmp(b, "1.23 ms") == 0, "fmt_seconds ms (%s)", b);
  odb_ui_fmt_seconds(b, sizeof b, 4.5e-7);
  tap_ok(strcmp(b, "450 ns") == 0, "fmt_seconds ns (%s)", b);
  odb_ui_fmt_duration(b, sizeof b, 3725);
  tap_ok(strcmp(b, "1:02:05") == 0, "fmt_duration h:mm:ss (%s)", b);
  odb_ui_fmt_duration(b, sizeof b, 75);
  tap_ok(strcmp(b, "1:15") == 0, "fmt_duration m:ss (%s)", b);
  odb_ui_fmt_duration(b, sizeof b, 1e308);
  tap_ok(strcmp(b, "277777777:46:39") == 0,
         "fmt_duration caps a huge time (%s)", b);
}

/* Text from a file, made safe for a terminal. */
static void test_clean(void) {
  char b[64];
  size_t n;
  n = odb_ui_clean(b, sizeof b, "a\x1b]0;pwn\x07" "b");
  tap_ok(strcmp(b, "a\\x1b]0;pwn\\x07b") == 0 && n == strlen(b),
         "clean escapes C0 controls (%s)", b);
  odb_ui_clean(b, sizeof b, "del\x7f nl\n tab\t");
  tap_ok(strcmp(b, "del\\x7f nl\\x0a tab\\x09") == 0,
         "clean escapes DEL, newline and tab (%s)", b);
  odb_ui_clean(b, sizeof b, "c1 \xc2\x9b" "31m \xc2\x85 e\xcc\x81 \xc3\xa9 "
               "\xe2\x82\xac \xf0\x9f\x98\x80");
  tap_ok(strcmp(b, "c1 \\u009b31m \\u0085 e\xcc\x81 \xc3\xa9 \xe2\x82\xac "
                "\xf0\x9f\x98\x80") == 0,
         "clean escapes C1 controls and keeps other UTF-8 (%s)", b);
  odb_ui_clean(b, sizeof b, "raw \x9b \xff \xc3 \xe2\x82 \xc0\x80 \xed\xa0\x80");
  tap_ok(strcmp(b, "raw \\x9b \\xff \\xc3 \\xe2\\x82 \\xc0\\x80 "
                "\\xed\\xa0\\x80") == 0,
         "clean escapes bytes outside valid UTF-8 (%s)", b);
  n = odb_ui_clean(b, 8, "abcd\x1b");
  tap_ok(strcmp(b, "abcd") == 0 && n == 4,
         "clean leaves out an escape that does not fit whole (%s)", b);
  n = odb_ui_clean(b, 6, "abcd\xc3\xa9");
  tap_ok(strcmp(b, "abcd") == 0 && n == 4,
         "clean leaves out a character that does not fit whole (%s)", b);
  n = odb_ui_clean(b, 1, "abc");
  tap_ok(b[0] == '\0' && n == 0, "clean into one byte gives \"\"");
}

/* The clock of a replay: walls as recorded, gaps clamped. */
static void test_replay_times(void) {
  double walls[] = { 0.5, 1.0, 1e308, -5, NAN, INFINITY, 2.0, 2.5 };
  double want[] = { 0.5, 1.0, 4.0, 4.0, 4.0, 4.0, 7.0, 7.5 };
  double normal[] = { 0.1, 0.2, 2.7, 2.7, 3.0 }, at[8];
  odb_event evs[8];
  int ok = 1;
  for (int i = 0; i < 8; ++i) evs[i] = ev(ODB_EV_METRIC, walls[i]);
  odb_ui_replay_times(evs, 8, 3.0, at);
  for (int i = 0; i < 8; ++i) ok &= fabs(at[i] - want[i]) < 1e-12;
  tap_ok(ok, "replay_times clamps gaps to 0..3 s and skips non-finite walls "
         "(%g %g %g %g %g %g %g %g)", at[0], at[1], at[2], at[3], at[4],
         at[5], at[6], at[7]);
  for (int i = 0; i < 5; ++i) evs[i] = ev(ODB_EV_METRIC, normal[i]);
  odb_ui_replay_times(evs, 5, 3.0, at);
  ok = 1;
  for (int i = 0; i < 5; ++i) ok &= at[i] == normal[i];
  tap_ok(ok, "replay_times keeps the walls of a normal recording");
}

/* Rank r of R: steps a second and seconds waiting (ODB_EV_RANKS). */
static odb_event rank_ev(const char *name, long r, long R, double sps,
                         double wait) {
  odb_event e = ev(ODB_EV_RANKS, 1.0);
  snprintf(e.name, sizeof e.name, "%s", name);
  e.step = r;
  e.accepted = R;
  e.value = sps;
  e.value2 = wait;
  return e;
}

/* The ranks' lines: one a rank, a new solve replacing the set, more than
   ODB_UI_RANK_LINES ranks folded into "... N more", and a RANKS record
   through events.jsonl (of_rank 0 and wait 0 kept, "rank" on every line). */
static void test_ranks(void) {
  odb_ui_model *m = calloc(1, sizeof *m);
  char line[96], path[] = "/tmp/odb_ranks_XXXXXX", buf[4096];
  odb_event e, *evs = NULL;
  odb_ui_info info;
  int fd, n = 0, lines = 0, ranked = 0;
  FILE *f;
  odb_ui_model_init(m, NULL);
  tap_ok(odb_ui_model_rank_lines(m) == 0 &&
         !odb_ui_model_rank_line(m, 0, line, sizeof line),
         "ranks: no lines before a distributed solve");
  e = rank_ev("bruss2d/rk4/mpi_N", 0, 2, 12500, 0.0012);
  odb_ui_model_apply(m, &e);
  e = rank_ev("bruss2d/rk4/mpi_N", 1, 2, 9870, 0.25);
  odb_ui_model_apply(m, &e);
  tap_ok(odb_ui_model_rank_lines(m) == 2 && m->rank_wait_max == 0.25,
         "ranks: two lines, slowest wait 0.25 s");
  odb_ui_model_rank_line(m, 0, line, sizeof line);
  tap_ok(strcmp(line, "rank 0     1.25e+04 steps/s  wait 1.2 ms") == 0,
         "ranks: line 0 '%s'", line);
  odb_ui_model_rank_line(m, 1, line, sizeof line);
  tap_ok(strcmp(line, "rank 1         9870 steps/s  wait 250 ms") == 0,
         "ranks: line 1 '%s'", line);
  for (long r = 0; r < 40; ++r) {
    e = rank_ev("string/dopri5/mpi_X", r, 40, 1000 + (double)r, 0.001);
    odb_ui_model_apply(m, &e);
  }
  odb_ui_model_rank_line(m, 14, line, sizeof line);
  tap_ok(odb_ui_model_rank_lines(m) == ODB_UI_RANK_LINES && m->ranks == 40 &&
         m->nrank_seen == 40 && strcmp(m->ranks_name,
                                       "string/dopri5/mpi_X") == 0 &&
         strcmp(line, "rank 14        1014 steps/s  wait 1 ms") == 0,
         "ranks: a new solve of 40 ranks replaces the set (line 14 '%s')",
         line);
  odb_ui_model_rank_line(m, 15, line, sizeof line);
  tap_ok(strcmp(line, "... 25 more") == 0 &&
         !odb_ui_model_rank_line(m, 16, line, sizeof line),
         "ranks: 40 ranks fold into 15 lines and '... 25 more'");
  e = rank_ev("bruss2d/rk4/mpi_N", 5, 2, 1, 1);   /* r >= R: ignored */
  odb_ui_model_apply(m, &e);
  tap_ok(m->ranks == 40 && m->nrank_seen == 40,
         "ranks: a record with rank >= ranks is ignored");
  odb_ui_model_free(m);
  free(m);

  /* through events.jsonl */
  {
    odb_ctx *ctx = NULL;
    odb_ctx_opts co;
    odb_ui_recorder *rec = NULL;
    fd = mkstemp(path);
    if (fd >= 0) close(fd);
    memset(&co, 0, sizeof co);
    memset(&info, 0, sizeof info);
    tap_ok(odb_ctx_create(&co, &ctx) == ODB_OK &&
           odb_ui_record_start(ctx, path, &info, &rec) == ODB_OK,
           "ranks: recorder started");
    e = rank_ev("bruss2d/rk4/mpi_N", 0, 2, 12500, 0);
    odb_ctx_publish(ctx, &e);
    e = rank_ev("bruss2d/rk4/mpi_N", 1, 2, 9870, 0.25);
    odb_ctx_publish(ctx, &e);
    tap_ok(odb_ui_record_finish(rec, 1) == ODB_OK, "ranks: recorded");
    odb_ctx_destroy(ctx);
  }
  f = fopen(path, "r");
  while (f && fgets(buf, sizeof buf, f)) {
    ++lines;
    ranked += strstr(buf, "\"rank\":0") != NULL;
  }
  if (f) fclose(f);
  tap_ok(lines == 3 && ranked == 3, "ranks: every line has \"rank\":0 (%d "
         "of %d)", ranked, lines);
  tap_ok(odb_ui_events_read(path, &info, &evs, &n) == ODB_OK && n == 2 &&
         evs[0].kind == ODB_EV_RANKS && evs[0].step == 0 &&
         evs[0].accepted == 2 && evs[0].value == 12500 &&
         evs[0].value2 == 0 && evs[1].step == 1 && evs[1].value2 == 0.25 &&
         strcmp(evs[1].name, "bruss2d/rk4/mpi_N") == 0 &&
         strcmp(odb_ui_event_kind_name(evs[1].kind), "ranks") == 0,
         "ranks: records read back with their figures");
  free(evs);
  unlink(path);
}

int main(void) {
  test_clean();
  test_replay_times();
  test_parse_config();
  test_solve_rates();
  test_tuning();
  test_sweep();
  test_row_floor();
  test_full_names();
  test_tune_throughput();
  test_fold();
  test_log_fold();
  test_plain_fold();
  test_record_read();
  test_ranks();
  test_format();
  return tap_done();
}
