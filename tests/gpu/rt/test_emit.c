/* test_emit.c - the generators' text buffer (odb_emit, TAP): appends,
   indentation, problem sources under #line, .cuh files with substituted
   names, a failed allocation, and with ODEBENCH_GEN_LINES the #line
   directives to the generator, with which NVRTC still compiles the
   kernels of every RK layout and of the tall & skinny products. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "odebench.h"
#include "odb_config.h"
#if ODB_HAVE_CUDA
#include "odb_emit.h"
#include "odb_gen_rk.h"
#include "odb_gen_tsm.h"
#include "odb_nvrtc.h"
#include "tmp_cache.h"

/* The text of e (then empty), "" when it failed; free() it. */
static char *take(odb_emit *e) {
  char *t = odb_emit_take(e);
  return t ? t : calloc(1, 1);
}

/* Appends, line counting, indentation (blank lines stay empty). */
static void check_text(void) {
  odb_emit e;
  char *t;
  int lines;
  odb_emit_init(&e);
  odb_emitf(&e, "int %s = %d;\n", "x", 42);
  odb_emit_indent(&e, 4);
  odb_emits(&e, "a\n\nb");
  odb_emits(&e, " c\n");
  odb_emit_indent(&e, -2);
  odb_emitf(&e, "d\n");
  odb_emit_indent(&e, -10);   /* clamped at 0 */
  odb_emitf(&e, "%%e\n");
  lines = e.lines;
  t = take(&e);
  tap_ok(strcmp(t, "int x = 42;\n    a\n\n    b c\n  d\n%e\n") == 0 &&
         lines == 6, "appends and indents: \"%s\", %d lines", t, lines);
  free(t);
}

/* A problem's source: #line 1 into it, a newline added, #line back. */
static void check_foreign(void) {
  odb_emit e;
  char *t;
  odb_emit_init(&e);
  odb_emitf(&e, "a\nb\n");
  odb_emit_foreign(&e, "p(N=3)", "gpu_source", "f1\nf2");
  odb_emitf(&e, "c\n");
  t = take(&e);
  /* "c" is physical line 7 of the text */
  tap_ok(strcmp(t, "a\nb\n#line 1 \"p(N=3):gpu_source\"\nf1\nf2\n"
                   "#line 7 \"" ODB_EMIT_SOURCE_NAME "\"\nc\n") == 0,
         "a problem's source under #line, and back: %s", t);
  free(t);
}

/* A .cuh file: names replaced as identifiers (not inside longer ones or
   numbers), a name alone on its line replacing the line. */
static void check_cuh(void) {
  static const odb_cuh_line lines[] = { { 0, "x.cuh", 5 }, { 0, NULL, 0 } };
  static const odb_cuh c = {
    "double F[NS]; // NS_X 0x1NS NS\n"
    "  DONE\n"
    "}\n", lines
  };
  static const char *const with[] = { "NS", "16", "DONE", "  go();\n",
                                      NULL };
  static const char *const without[] = { "NS", "16", "DONE", "", NULL };
  odb_emit e;
  char *t, *u;
  odb_emit_init(&e);
  odb_emit_cuh(&e, &c, with);
  t = take(&e);
  odb_emit_init(&e);
  odb_emit_cuh(&e, &c, without);
  u = take(&e);
  tap_ok(strcmp(t, "double F[16]; // NS_X 0x1NS 16\n  go();\n}\n") == 0 &&
         strcmp(u, "double F[16]; // NS_X 0x1NS 16\n}\n") == 0,
         "a .cuh file with its names replaced: \"%s\", \"%s\"", t, u);
  free(t);
  free(u);
  odb_emit_init(&e);
  odb_emit_cuh(&e, &c, NULL);
  t = take(&e);
  tap_ok(strcmp(t, c.text) == 0, "a .cuh file without names: as it is");
  free(t);
}

/* The text of a failed allocation is NULL. */
static void check_oom(void) {
  odb_emit e;
  odb_emit_init(&e);
  odb_emitf(&e, "x\n");
  e.oom = 1;
  odb_emitf(&e, "y\n");
  tap_ok(odb_emit_take(&e) == NULL && e.buf == NULL,
         "a failed allocation gives no text");
}

/*
** ODEBENCH_GEN_LINES: a directive before the first line of a call, none
** where NVRTC counts right already, none inside a macro's continuation,
** and a .cuh file's lines under its own name.
*/
static void check_map(void) {
  static const odb_cuh_line lines[] = { { 0, "x.cuh", 5 }, { 0, NULL, 0 } };
  static const odb_cuh c = { "int y;\nint z;\n", lines };
  char want[512];
  odb_emit e;
  char *t;
  int l0;
  setenv("ODEBENCH_GEN_LINES", "1", 1);
  odb_emit_init(&e);
  unsetenv("ODEBENCH_GEN_LINES");
  l0 = __LINE__ + 1;
  odb_emitf(&e, "a\nb\n");
  odb_emitf(&e, "#define M \\\n");
  odb_emitf(&e, "  1\n");
  odb_emit_cuh(&e, &c, NULL);
  t = take(&e);
  snprintf(want, sizeof want,
           "#line %d \"test_emit.c\"\na\nb\n#line %d \"test_emit.c\"\n"
           "#define M \\\n  1\n#line 5 \"x.cuh\"\nint y;\nint z;\n", l0,
           l0 + 1);
  tap_ok(strcmp(t, want) == 0, "ODEBENCH_GEN_LINES: #line to the "
         "generator's lines: %s", t);
  free(t);
}

/*
** With ODEBENCH_GEN_LINES, NVRTC compiles a kernel of every RK layout and
** an FMA and a tensor-core tall & skinny kernel (sm_90, an empty
** temporary cache), and their directives name the generator's files.
*/
static void check_map_compiles(void) {
  enum { N = 9 };
  static const odb_gen_kind kinds[6] = {
    ODB_GEN_UNFUSED, ODB_GEN_REFERENCE, ODB_GEN_TRAPEZOID, ODB_GEN_HEXAGON,
    ODB_GEN_MULTIBLOCK, ODB_GEN_STREAM2D
  };
  odb_param_value v[2] = { { .name = "N", .num = 37 },
                           { .name = "Nx", .num = 8 } };
  odb_problem *p = NULL;
  char *src[N] = { NULL };
  int n = 0, named = 0, compiled = -1;
  setenv("ODEBENCH_GEN_LINES", "1", 1);
  if (odb_problem_create("bruss2d", v, 2, &p) == ODB_OK)
    for (int i = 0; i < 6; ++i) {
      odb_gen_opts o;
      odb_gen_plan pl;
      memset(&o, 0, sizeof o);
      o.threads = 128;
      o.smem_max = 96 * 1024;
      o.tile_w = kinds[i] == ODB_GEN_HEXAGON ? 256 : 0;
      o.tile_h = kinds[i] == ODB_GEN_HEXAGON ? 2 : 0;
      o.comps = 2;
      o.blocks = 2;
      o.wg_per_tile = 2;
      o.groups = 1;
      o.skew = 2;
      o.devctl = kinds[i] != ODB_GEN_MULTIBLOCK;
      if (odb_gen_rk(p, odb_method_find("dopri5"), kinds[i], &o, &src[n],
                     &pl) == ODB_OK)
        named += strstr(src[n++], "#line") != NULL;
      else
        tap_diag("layout %d: %s", (int)kinds[i], odb_last_error());
    }
  for (int k = 0; k < 2; ++k) {   /* real 4 x 4: FMA; complex 16 x 16: mma */
    odb_tsm_cfg list[1];
    if (odb_tsm_space_list(ODB_TSM_TSMTTSM, k ? ODB_TSM_Z : ODB_TSM_D,
                           k ? 16 : 4, k ? 16 : 4, 0, 90, list, 1) == 0 ||
        odb_gen_tsm(&list[0], &src[n]) != ODB_OK)
      continue;
    named += strstr(src[n++], "#line") != NULL;
  }
  unsetenv("ODEBENCH_GEN_LINES");
  if (n == 8 && (!getenv("ODEBENCH_KERNEL_CACHE") ||
                 strcmp(getenv("ODEBENCH_KERNEL_CACHE"), "off") != 0)) {
    tmp_cache tc;
    tmp_cache_open(&tc);
    if (tc.ok)
      compiled = odb_nvrtc_prefetch((const char *const *)src, n, 9, 0, 2);
    tmp_cache_close(&tc);
  }
  tap_ok(n == 8 && named == n && strstr(src[0], "gen_rk_common.c") &&
         strstr(src[5], "gen_rk_stream2d.c") && strstr(src[5], ".cuh\"") &&
         strstr(src[6], "gen_tsm_"), "ODEBENCH_GEN_LINES: %d of 8 "
         "sources generated, %d with directives to the generator", n,
         named);
  if (getenv("ODEBENCH_KERNEL_CACHE") &&
      strcmp(getenv("ODEBENCH_KERNEL_CACHE"), "off") == 0)
    tap_ok(1, "NVRTC compiles them # SKIP the kernel cache is off");
  else
    tap_ok(compiled == n, "NVRTC compiles %d of %d of them for sm_90",
           compiled, n);
  for (int i = 0; i < N; ++i) free(src[i]);
  odb_problem_destroy(p);
}
#endif

int main(void) {
#if ODB_HAVE_CUDA
  check_text();
  check_foreign();
  check_cuh();
  check_oom();
  check_map();
  check_map_compiles();
#else
  tap_ok(1, "the generators' text buffer # SKIP built without CUDA");
#endif
  return tap_done();
}
