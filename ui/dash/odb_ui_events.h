/* odb_ui_events.h - events.jsonl: a run's events recorded and read back. */
#ifndef ODB_UI_EVENTS_H
#define ODB_UI_EVENTS_H

#include "odb_ui_model.h"

/*
** events.jsonl holds one JSON object per line. The first is the header
**   {"kind":"run","format":1,"scenario":...,"machine":...,"gpu":...,
**    "floor_read":<bytes/s>,"floor_copy":<bytes/s>}
** and each further line one event:
**   {"kind":"step","seq":12,"rank":0,"wall":0.25,"t":...,"h":...,"err":...,
**    "step":...,"accepted":...,"rejected":...,"value":...,"value2":...,
**    "name":"...","text":"...","level":"info"}
** with zero numbers and empty strings left out; "rank" is the recording
** rank (odb_ui_info.rank), on every line. Kinds: log, solve_begin, step,
** solve_end, metric, tune_eval, tune_best, progress, solve_row, ranks and
** {"kind":"dropped","count":N} where the recorder fell behind the ring.
** A ranks line names its figures (ODB_EV_RANKS), every one written:
**   {"kind":"ranks","seq":..,"rank":0,"wall":..,"of_rank":1,"ranks":2,
**    "steps_per_s":...,"wait_s":...,"name":"problem/method/variant"}
*/

typedef struct odb_ui_recorder odb_ui_recorder;

/*
** Starts a thread that appends every event of ctx published from now on to
** "<path>.part" (the header first), flushing about 40 times a second.
*/
odb_status odb_ui_record_start(odb_ctx *ctx, const char *path,
                               const odb_ui_info *info,
                               odb_ui_recorder **out);
/*
** Writes what is still queued and stops the thread. keep = 1 renames the
** file to path (a reader never sees a partial events.jsonl); keep = 0
** removes it. NULL is allowed.
*/
odb_status odb_ui_record_finish(odb_ui_recorder *r, int keep);

/*
** Reads an events.jsonl: the header into info, the events into *evs
** (malloc'd, *n of them, wall and seq as recorded; the strings made safe
** for a terminal by odb_ui_clean). ODB_ERR_IO when the
** file cannot be read, ODB_ERR_ARG when it is not a valid events file (the
** message names the line).
*/
odb_status odb_ui_events_read(const char *path, odb_ui_info *info,
                              odb_event **evs, int *n);

/* "step", "tune_eval", ...; "?" for an unknown kind. */
const char *odb_ui_event_kind_name(int kind);

#endif
