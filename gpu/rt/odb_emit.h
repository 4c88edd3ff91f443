/* odb_emit.h - the text buffer that the kernel generators write CUDA C
   into: printf-style appends, indentation, line counting, #line
   directives, and fixed device code (.cuh files embedded at build time)
   spliced in. */
#ifndef ODB_EMIT_H
#define ODB_EMIT_H

#include <stddef.h>

/*
** The name NVRTC gives every generated source (nvrtcCreateProgram in
** odb_nvrtc.c): its messages say "odb_gen_rk.cu(LINE): error ...", and a
** #line directive that returns from foreign text (odb_emit_foreign) names
** it again.
*/
#define ODB_EMIT_SOURCE_NAME "odb_gen_rk.cu"

/*
** A .cuh file of fixed device code, embedded by gpu/embed_cuh.py: its text
** as it is on disk, except that a leading block comment (the file's
** description) is dropped and each `#include "x.cuh"` line is replaced by
** that file's text, and where its lines come from: from offset at of the
** text on, up to the next entry, the lines are those of file from line
** on (the list ends with file NULL).
**
** The text is spliced into the generated source (odb_emit_cuh) rather
** than handed to NVRTC as a header (nvrtcCreateProgram's includeNames):
** so a generated source stays one self-contained text, which is what the
** kernel cache keys by its SHA-256 and what ODEBENCH_DUMP_KERNELS writes
** out (a dump compiles on its own), and a .cuh file may hold the value
** of a host constant (odb_emit_cuh's subst) that a header could not.
*/
typedef struct odb_cuh_line {
  size_t at;
  const char *file;
  int line;
} odb_cuh_line;

typedef struct odb_cuh {
  const char *text;
  const odb_cuh_line *lines;
} odb_cuh;

/*
** A buffer being written, set up by odb_emit_init. The generators read
** its fields but write them only through the functions below, except
** oom, which they may set to make the result fail.
*/
typedef struct odb_emit {
  char *buf;             /* the text, NUL-terminated once written */
  size_t len, cap;
  int lines;             /* newlines written so far */
  int indent;            /* spaces put before every line begun */
  int oom;               /* an allocation failed: the text is incomplete */
  int map;               /* ODEBENCH_GEN_LINES: #line to the generator */
  const char *at_file;   /* the file and line NVRTC gives the line being */
  int at_line;           /* written (map only) */
} odb_emit;

/*
** Starts an empty text. When the environment variable ODEBENCH_GEN_LINES
** is set to anything but "" or "0", a line that a generator's call begins
** is preceded by a #line directive naming the generator's source file and
** the line of the call (a line of a spliced .cuh file by that file and
** its line) wherever NVRTC would count it otherwise. NVRTC's messages
** then read "gen_rk_stream2d.c(754): error ..." and point at the code
** that wrote the faulty text: the call's first line, and the lines after
** it for the lines of a string literal written one a line. #line is what
** NVRTC honours in its messages (it keeps no other map of the source).
** The directives are off by default: they are part of the text, so with
** them every edit of a generator would change every kernel's text (its
** cache key, its dump) where the kernel itself stays the same. Without
** ODEBENCH_GEN_LINES the only directives are those of odb_emit_foreign.
*/
void odb_emit_init(odb_emit *e);

/*
** Appends printf-style text; call through odb_emitf, which passes the
** caller's file and line for the #line directives of ODEBENCH_GEN_LINES.
** A directive goes only before a line that the call begins (at column 0)
** and not after a line ending in a backslash (a macro's continuation).
*/
void odb_emit_at(odb_emit *e, const char *file, int line, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));
#define odb_emitf(e, ...) odb_emit_at((e), __FILE__, __LINE__, __VA_ARGS__)

/* Appends text as it is (no format); call through odb_emits. */
void odb_emit_text_at(odb_emit *e, const char *file, int line,
                      const char *text);
#define odb_emits(e, text) odb_emit_text_at((e), __FILE__, __LINE__, (text))

/*
** Splices in the fixed device code of a .cuh file. subst is NULL or a
** NULL-terminated list of pairs { name, value, name, value, ..., NULL }:
** each identifier of the text that is one of the names is replaced by its
** value, so a .cuh file can name a constant of the host code
** (ODB_GEN_MAX_STAGES) whose value the generated source holds. A name
** that stands alone on its line (with only blanks around it) replaces
** the whole line, its newline included, by the value: "" removes the
** line, and a value ending in a newline puts lines of code there.
** Identifiers are replaced wherever they occur, in comments and strings
** too. With ODEBENCH_GEN_LINES the text maps to the .cuh file's lines.
*/
void odb_emit_cuh(odb_emit *e, const odb_cuh *c, const char *const *subst);

/*
** Appends text from elsewhere (a problem's CUDA source) under
** `#line 1 "label:what"`, a newline after it if it has none, then
** `#line N "odb_gen_rk.cu"` so that the lines after it count on from the
** physical line N of the generated source and NVRTC's messages name the
** problem's source where it is at fault.
*/
void odb_emit_foreign(odb_emit *e, const char *label, const char *what,
                      const char *text);

/* Adds delta (may be negative) to the spaces put before each line the
   text begins from now on; blank lines stay empty. */
void odb_emit_indent(odb_emit *e, int delta);

/*
** The text, which the caller then owns (free()), or NULL, the buffer
** freed, when an allocation failed along the way. e is empty afterwards.
*/
char *odb_emit_take(odb_emit *e);

/* Frees the text (after a failure of the generator). */
void odb_emit_free(odb_emit *e);

#endif
