/* odb_json.h - a small streaming JSON writer. */
#ifndef ODB_JSON_H
#define ODB_JSON_H

#include <stdio.h>

/*
** Writes JSON to a FILE with indentation. The caller nests begin/end calls
** correctly; keys are given for members of objects and NULL inside arrays.
** Non-finite numbers are written as null.
*/
typedef struct odb_json {
  FILE *f;
  int depth;
  int first[32];   /* 1 while no member has been written at that depth */
} odb_json;

void odb_json_init(odb_json *j, FILE *f);
void odb_json_begin_object(odb_json *j, const char *key);
void odb_json_end_object(odb_json *j);
void odb_json_begin_array(odb_json *j, const char *key);
void odb_json_end_array(odb_json *j);
void odb_json_string(odb_json *j, const char *key, const char *value);
void odb_json_number(odb_json *j, const char *key, double value);
void odb_json_integer(odb_json *j, const char *key, long long value);
void odb_json_bool(odb_json *j, const char *key, int value);
void odb_json_null(odb_json *j, const char *key);
/* Formats a finite double in the fewest of 15..17 significant digits that
   read back as the same value ("0.1", "3", "1e+300"); cap >= 32. */
void odb_json_format_double(char *buf, size_t cap, double v);
/* Writes s as a JSON string literal (quotes and escapes) to f. */
void odb_json_write_string(FILE *f, const char *s);

#endif
