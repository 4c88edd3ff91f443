/* odb_ui.h - reporters that show a run's events while it goes (plain, none). */
#ifndef ODB_UI_H
#define ODB_UI_H

#include <stdio.h>

#include "odebench.h"

/*
** The reporter kinds of --ui. AUTO resolves to PLAIN for now (the ncurses
** dashboard comes later and will take AUTO on a terminal).
*/
typedef enum odb_ui_kind { ODB_UI_AUTO = 0, ODB_UI_PLAIN, ODB_UI_NONE }
  odb_ui_kind;

#define ODB_UI_CHOICES "auto, plain, none"

/* The kind named s ("auto", "plain", "none"), or -1 when unknown. */
int odb_ui_parse(const char *s);
const char *odb_ui_name(int kind);
/* Resolves ODB_UI_AUTO to the kind this terminal gets. */
int odb_ui_resolve(int kind);

typedef struct odb_ui odb_ui;

/*
** Starts the reporter of the given (resolved) kind on ctx's event ring,
** writing to out. PLAIN runs its own thread; NONE shows nothing.
*/
odb_status odb_ui_start(odb_ctx *ctx, int kind, FILE *out, odb_ui **ui);
/* Shows what is still queued, stops and joins the thread, frees ui.
   NULL is allowed. */
void odb_ui_stop(odb_ui *ui);

/* {====== the plain line reporter (odb_ui_plain.c) */

typedef struct odb_ui_plain odb_ui_plain;

/* Starts the thread that polls ctx's events ~10 times a second. */
odb_status odb_ui_plain_start(odb_ctx *ctx, FILE *out, odb_ui_plain **p);
void odb_ui_plain_stop(odb_ui_plain *p);

/* }====== */

#endif
