/* odb_ui_model.h - what the dashboard shows, folded from a run's events. */
#ifndef ODB_UI_MODEL_H
#define ODB_UI_MODEL_H

#include <stdint.h>

#include "odebench.h"
#include "odb_ui_fold.h"

#define ODB_UI_SPARK_MAX 512   /* throughput samples kept */
#define ODB_UI_LOG_MAX 512     /* log lines kept */
#define ODB_UI_DONE_MAX 64     /* finished solves kept */
#define ODB_UI_METRIC_MAX 32   /* distinct metric names kept */
#define ODB_UI_BEST_MAX 100    /* best configurations kept in order */
#define ODB_UI_PARAM_MAX 8     /* tuning parameters of a configuration */
#define ODB_UI_VALUE_MAX 48    /* distinct values per parameter */
#define ODB_UI_KEY_LEN 24
#define ODB_UI_VAL_LEN 32    /* a value longer than 31 bytes is cut */
#define ODB_UI_RANK_LINES 16 /* lines of the ranks; more ranks are folded */

/* What a reporter shows about the run besides its events. */
typedef struct odb_ui_info {
  char scenario[256];
  char machine[160];
  char gpu[160];
  double floor_read, floor_copy;  /* bytes/s of one thread; 0: unknown */
  int rank;                /* the rank that shows and records: under
                              mpirun only rank 0 does (cli/odebench.c) */
} odb_ui_info;

typedef struct odb_ui_logline {
  double wall;
  int level;               /* odb_log_level */
  int fold;                /* warning group (odb_ui_fold) + 1; 0: none */
  char text[160];
} odb_ui_logline;

/*
** A finished solve: its results row (ODB_EV_SOLVE_ROW) when one came, the
** figures the row records; else its SOLVE_END (a recording without rows,
** a solve whose row was not recorded), with no floor.
*/
typedef struct odb_ui_done {
  char name[48];           /* problem/method/variant, whole */
  char status[32];
  long steps;
  double n;                /* 0: unknown */
  double seconds, gbs, floor_pct;   /* floor_pct < 0: unknown */
  int from_row;
} odb_ui_done;

typedef struct odb_ui_metric {
  char name[48];
  char unit[32];
  double value, wall;
} odb_ui_metric;

/* One evaluated configuration; vals[k] indexes params[k].values (-1: the
   configuration does not name parameter k). */
typedef struct odb_ui_eval {
  char config[48];
  double median, spread;
  long i;
  int vals[ODB_UI_PARAM_MAX];
} odb_ui_eval;

/* A tuning parameter seen in the configurations, with its values. */
typedef struct odb_ui_param {
  char name[ODB_UI_KEY_LEN];
  int nvalues;
  char values[ODB_UI_VALUE_MAX][ODB_UI_VAL_LEN];
  int numeric;             /* every value reads as a number */
  int order[ODB_UI_VALUE_MAX];  /* display order (sorted when numeric) */
} odb_ui_param;

/* One rank's figures of the newest distributed solve (ODB_EV_RANKS). */
typedef struct odb_ui_rank {
  double steps_per_s, wait_s;
} odb_ui_rank;

/* The running solve and the rates measured between its STEP records. */
typedef struct odb_ui_solve {
  int active;
  char name[48];
  double n, t0, t1, t, h, err;
  long steps, accepted, rejected;
  double begin_wall, wall;
  double rbytes, wbytes, flops;      /* so far */
  int have_base;                     /* rate baseline valid */
  double base_wall, base_r, base_w, base_flops;
  long base_steps;
  double steps_per_s;
} odb_ui_solve;

/*
** A scenario's sweep as ob.progress reports it: i of n steps done. A new
** sweep starts when n changes, i goes back or i is 0; its clock starts at
** the first report (begin_i, begin_wall), so the estimate of the time left
** is (wall - begin_wall) / (i - begin_i) * (n - i).
*/
typedef struct odb_ui_sweep {
  int active;              /* a PROGRESS was seen */
  long i, n, begin_i;
  double begin_wall, wall;
  char label[48];
} odb_ui_sweep;

/* Folds a PROGRESS record into s. */
void odb_ui_sweep_apply(odb_ui_sweep *s, const odb_event *e);
/* Seconds left (0 when done); < 0 while unknown (fewer than one step
   timed). */
double odb_ui_sweep_eta(const odb_ui_sweep *s);

typedef struct odb_ui_model {
  odb_ui_info info;
  double wall;             /* wall of the newest event */
  uint64_t events, dropped;
  odb_ui_solve solve;
  /* throughput: current rates and history */
  double gbs, gflops, floor_pct;     /* newest figures; floor_pct < 0: none */
  double peak_gbs;
  double spark[ODB_UI_SPARK_MAX];    /* ring of GB/s samples */
  int nspark;                        /* samples pushed (ring holds the last) */
  double spark_wall;                 /* wall of the newest sample */
  /* finished solves (ring) */
  long nsolves;
  long nsolves_rowed;      /* nsolves at the newest SOLVE_ROW */
  odb_ui_done done[ODB_UI_DONE_MAX];
  /* metrics, by name */
  odb_ui_metric metrics[ODB_UI_METRIC_MAX];
  int nmetrics;
  /* tuning */
  int tuning;              /* a TUNE_EVAL was seen */
  long tune_i, tune_n;
  double tune_begin_wall, tune_wall;
  char tune_config[48], tune_state[128];
  double tune_median, tune_spread;
  int have_best;
  char best_config[48];
  double best_median;
  odb_ui_eval *evals;
  int nevals, capevals;
  int best[ODB_UI_BEST_MAX];         /* indexes into evals, by median */
  int nbest;
  odb_ui_param params[ODB_UI_PARAM_MAX];
  int nparams;
  /* the tuning run's throughput: runs a second (1 / median) of each
     configuration measured, in order (ring) */
  double tune_rate[ODB_UI_SPARK_MAX];
  int ntune_rate;
  double tune_rate_peak;
  /* the scenario's sweep (ob.progress) */
  odb_ui_sweep sweep;
  /* the newest distributed solve's ranks (ODB_EV_RANKS): ranks of them,
     nrank_seen of whose records have come, the first ODB_UI_RANK_LINES
     kept; the slowest wait over all of them */
  char ranks_name[48];
  long ranks, nrank_seen;
  odb_ui_rank rank[ODB_UI_RANK_LINES];
  double rank_wait_max;
  /* log (ring); a repeated warning is one line, moved to the newest */
  odb_ui_logline log[ODB_UI_LOG_MAX];
  long nlog;
  odb_ui_fold fold;
} odb_ui_model;

/* info may be NULL. The model is large: allocate it on the heap. */
void odb_ui_model_init(odb_ui_model *m, const odb_ui_info *info);
void odb_ui_model_free(odb_ui_model *m);
/* Folds one event in; events come in seq order. */
void odb_ui_model_apply(odb_ui_model *m, const odb_event *e);
/* Adds a line to the log (captured output, notes of the dashboard). A
   warning (ODB_LOG_WARN) that repeats one already in the log replaces it
   as "warning (xN): ..." (odb_ui_fold.h) at the newest place. */
void odb_ui_model_log(odb_ui_model *m, double wall, int level,
                      const char *text);
/* Forgets the rate baseline (after a pause the next STEP starts anew). */
void odb_ui_model_resync(odb_ui_model *m);
/* The k-th newest log line (k = 0 newest), or NULL. */
const odb_ui_logline *odb_ui_model_logline(const odb_ui_model *m, long k);
/* The k-th newest finished solve, or NULL. */
const odb_ui_done *odb_ui_model_done(const odb_ui_model *m, long k);
/*
** The dashboard's lines of the ranks: one a rank of the newest distributed
** solve ("rank 3  1.25e+04 steps/s  wait 1.20 ms"), at most
** ODB_UI_RANK_LINES; with more ranks the last line is "... N more" (N: the
** ranks not shown). odb_ui_model_rank_lines gives their number (0: no
** distributed solve yet); odb_ui_model_rank_line writes line k (0-based)
** into buf and returns 0 when k is out of range.
*/
int odb_ui_model_rank_lines(const odb_ui_model *m);
int odb_ui_model_rank_line(const odb_ui_model *m, int k, char *buf, int cap);

/* The k-th newest throughput sample (k = 0 newest); k < number kept. */
double odb_ui_model_spark(const odb_ui_model *m, int k);
int odb_ui_model_nspark(const odb_ui_model *m);
/* The same for the tuning run's runs a second. */
double odb_ui_model_tune_rate(const odb_ui_model *m, int k);
int odb_ui_model_ntune_rate(const odb_ui_model *m);

/*
** Splits "k=v k=v" (separators: spaces, commas, semicolons) into at most
** max pairs; returns their number. Items without '=' are skipped.
*/
int odb_ui_parse_config(const char *config, char keys[][ODB_UI_KEY_LEN],
                        char vals[][ODB_UI_VAL_LEN], int max);
/*
** The heatmap of parameters px (columns) and py (rows): cells[r * nx + c]
** is the smallest median over the evaluations whose px value is the c-th
** and py value the r-th in display order (NAN when none). px == py gives
** one row. Returns 0 when px or py is out of range.
*/
int odb_ui_model_heat(const odb_ui_model *m, int px, int py, double *cells);
/* 1 when the two evaluations' medians differ by less than their spread. */
int odb_ui_tied(const odb_ui_eval *a, const odb_ui_eval *b);

/*
** src made safe for a terminal, into dst (cap bytes, terminated; cap >= 1):
** the only way text read from a file (events.jsonl, results.csv) reaches
** the screen. Control characters C0 and DEL become "\x1b" style escapes,
** C1 ones (U+0080 to U+009F, ESC's 8-bit forms) "\u009b", a byte that is
** not part of valid UTF-8 "\xff"; everything else is kept. An escape or
** a character that does not fit whole is left out with the rest. Returns
** the length written.
*/
size_t odb_ui_clean(char *dst, size_t cap, const char *src);

/*
** When a replay shows each of the n events: at[i] on the recorded clock,
** the recorded walls with every gap between events clamped to 0..max_gap
** (a wall that goes back, is not finite or jumps ahead, as an edited or
** damaged events.jsonl may hold, does not stall the replay). Equals the
** walls for a normal recording (increasing from >= 0, gaps up to max_gap).
*/
void odb_ui_replay_times(const odb_event *evs, int n, double max_gap,
                         double *at);
/* The longest a replay waits between two events, in real seconds. */
#define ODB_UI_REPLAY_MAX_WAIT 3.0

/* Compact time: "812 ns", "3.41 us", "1.20 ms", "4.56 s", "12.3 min". */
void odb_ui_fmt_seconds(char *buf, int cap, double s);
/* "1:02:03", "12:34" or "45s" for an elapsed time or an estimate. */
void odb_ui_fmt_duration(char *buf, int cap, double s);

#endif
