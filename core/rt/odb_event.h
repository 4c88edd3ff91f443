/* odb_event.h - fixed-size progress records in a ring buffer. */
#ifndef ODB_EVENT_H
#define ODB_EVENT_H

#include <stdint.h>
#include "odb_status.h"

typedef enum odb_event_kind {
  ODB_EV_LOG = 0,     /* text: a log line at level */
  ODB_EV_SOLVE_BEGIN, /* name: problem/method/variant, value: n,
                         t: start time, value2: end time t1 */
  ODB_EV_STEP,        /* t, h, err, step, accepted, rejected; value, value2:
                         bytes read, written so far; text: "flops=<so far>";
                         the last one before SOLVE_END holds the totals */
  ODB_EV_SOLVE_END,   /* like STEP, value: seconds, value2: GB/s,
                         text: "ok" or the status */
  ODB_EV_METRIC,      /* name, value, text: unit; published by a scenario */
  ODB_EV_TUNE_EVAL,   /* name: configuration "k=v k=v", value: median
                         seconds, value2: spread relative to the median
                         (0.02 = 2%), step: i (1-based), accepted: n
                         (configurations in all), text: strategy state */
  ODB_EV_TUNE_BEST,   /* name: configuration, value: median seconds */
  ODB_EV_PROGRESS,    /* a scenario's sweep: step: i of accepted: n steps
                         done (0 <= i <= n; i = 0 starts the clock), name:
                         its label; published by ob.progress */
  ODB_EV_SOLVE_ROW,   /* a results row of kind "solve" was recorded, with
                         its own figures: name: problem/method/variant,
                         text: status, step: steps, accepted: n, value:
                         seconds, value2: GB/s (0: none), t: floor_pct
                         (< 0: none); published by the Lua binding
                         (odbL_check_record) so that a reporter shows the
                         row's figures instead of computing its own */
  ODB_EV_RANKS        /* one rank's figures of a distributed solve, one
                         record per rank in rank order after every
                         s:integrate of a distributed variant under
                         mpirun: name: problem/method/variant, step: the
                         rank r, accepted: the ranks R, value: rank r's
                         steps a second in that call, value2: its seconds
                         waiting for communication in that call;
                         published by rank 0, which gathers them */
} odb_event_kind;

typedef enum odb_log_level {
  ODB_LOG_ERROR = 0, ODB_LOG_WARN, ODB_LOG_INFO, ODB_LOG_DEBUG
} odb_log_level;

typedef struct odb_event {
  uint64_t seq;      /* set by the ring: 1, 2, 3, ... */
  double wall;       /* seconds since the ring was created, set by the ring */
  int kind;          /* odb_event_kind */
  int level;         /* odb_log_level for ODB_EV_LOG */
  double t, h, err;
  long step, accepted, rejected;
  double value, value2;
  char name[48];
  char text[128];
} odb_event;

typedef struct odb_event_ring odb_event_ring;

/* capacity: number of records kept (rounded up to a power of two). */
odb_status odb_event_ring_create(unsigned capacity, odb_event_ring **out);
void odb_event_ring_destroy(odb_event_ring *r);
/* Thread-safe; overwrites the oldest record when full. */
void odb_event_push(odb_event_ring *r, const odb_event *ev);
/*
** Copies up to max records with seq > *cursor into out, oldest first, and
** advances *cursor. Returns the number copied; *dropped (if not NULL) gets
** the number of records the reader missed because they were overwritten.
*/
int odb_event_poll(odb_event_ring *r, uint64_t *cursor, odb_event *out,
                   int max, uint64_t *dropped);
/* Sequence number of the newest record (0 when empty). */
uint64_t odb_event_last_seq(odb_event_ring *r);

#endif
