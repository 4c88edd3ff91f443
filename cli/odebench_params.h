/* odebench_params.h - --params and --strict (odebench_params.c). */
#ifndef ODEBENCH_PARAMS_H
#define ODEBENCH_PARAMS_H

#include <stdio.h>

#include "odb_lua.h"

/* The parameter names a scenario's text reads with ob.param("NAME", ...). */
#define ODB_CLI_SCAN_MAX 128
typedef struct odb_cli_scan {
  char names[ODB_CLI_SCAN_MAX][64];
  int n;
  int dynamic;     /* 1: an ob.param whose name is not a string literal */
} odb_cli_scan;

/* Fills sc from the scenario's text (comment lines are skipped). */
void odb_cli_params_scan(const char *text, size_t len, odb_cli_scan *sc);

/*
** Replaces every function of the odebench table at index module that
** reaches the engine with a stop (see odebench_params.c): for --params.
*/
void odb_cli_params_arm(lua_State *L, int module);
/* 1 when a --params run was stopped at an engine call. */
int odb_cli_params_stopped(void);
/* The listing of --params: what ob.param recorded, then the names only the
   scan found. */
void odb_cli_params_print(lua_State *L, const odbL_state *S,
                          const odb_cli_scan *sc, const char *scenario,
                          FILE *f);
/*
** --strict: says on stderr which "key=value" of sets[0..nsets) names no
** parameter, judged by the scan (a scan that found a computed name judges
** nothing). Returns their number.
*/
int odb_cli_params_check_sets(const odb_cli_scan *sc, const char *const *sets,
                              int nsets, const char *prog);
/*
** --strict after a run (sc NULL) or a --params run: the --set keys of S
** that no ob.param read (and, with sc, that the scan did not find either),
** said on stderr. Returns their number.
*/
int odb_cli_params_strict(const odbL_state *S,
                          const odb_cli_scan *sc, const char *prog);

#endif
