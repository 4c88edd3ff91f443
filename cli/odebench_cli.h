/* odebench_cli.h - what the files of the odebench program share. */
#ifndef ODEBENCH_CLI_H
#define ODEBENCH_CLI_H

#include <stdio.h>

/* Exit statuses of the program (docs/cli.md, "Exit status"). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INTERRUPT = 130 };

/* {====== odebench_help.c: --help and `odebench help TOPIC` */

/* The text of --help (and of `odebench help`). */
void odb_cli_usage(FILE *f);
/*
** `odebench help [TOPIC]`: prints the topic (NULL: the --help text) on
** stdout and returns EXIT_OK, or says which topics there are on stderr and
** returns EXIT_USAGE for an unknown one.
*/
int odb_cli_help(const char *topic);
/* "run, list, ...": the topics, for messages. */
extern const char odb_cli_help_topics[];

/* }====== */

/* {====== tunedb.c */

/* The text of `odebench tunedb --help`. */
void odb_cli_tunedb_usage(FILE *f);

/* }====== */

#endif
