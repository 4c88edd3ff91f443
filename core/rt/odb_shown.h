/* odb_shown.h - text from outside (a file name, a line of a file) made safe
** to print on a terminal. */
#ifndef ODB_SHOWN_H
#define ODB_SHOWN_H

#include <stddef.h>

/*
** s as it may be shown on a terminal, into out[cap]: control characters
** (C0, DEL, and C1 in UTF-8), bytes that are not UTF-8 and backslashes are
** written \xNN (\\ for the backslash), so a planted escape sequence cannot
** drive the terminal. Truncated to cap - 1 bytes, never within an escape
** or a UTF-8 sequence; a truncated text ends in "..." when cap allows.
** Returns out. s NULL shows as "(null)".
*/
const char *odb_shown(const char *s, char *out, size_t cap);

/* The same for the n bytes at s (which may hold NUL bytes, shown \x00). */
const char *odb_shown_n(const char *s, size_t n, char *out, size_t cap);

/* Room for a file name in an error message (ODB_FAIL keeps 512 bytes). */
#define ODB_SHOWN_NAME 160

#endif
