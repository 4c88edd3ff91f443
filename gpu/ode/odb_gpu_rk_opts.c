/* odb_gpu_rk_opts.c - the options the tiled GPU RK variants declare (their
   tile configurations) and their resolution into odb_tiling_opts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "odb_gen_rk.h"
#include "odebench.h"
#include "odb_gpu_rk_opts.h"

/*
** Each variant declares the options it reads, so that a misspelt or
** foreign one is refused by name rather than ignored, and odebench --list
** shows them with their ranges. A default of 0 (-1 for carry) lies outside
** its range: the variant chooses, as the doc says. The ranges are those
** every generator takes: threads a power of two from a warp to the most a
** block has (1024), heights up to 2 s of the largest method, widths and
** rows up to 2^30, counts of blocks up to 2^20.
*/
#define BIG (1 << 30)
#define MANY (1 << 20)

const odb_param_decl odb_gpu_multiblock_opts[] = {
  { "threads", ODB_PARAM_POW2, 256, 32, 1024, NULL, "threads per block" },
  { "comps", ODB_PARAM_INT, 1, 1, 8, NULL,
    "consecutive components per block, n_comp (Korch and Werner, §4.5)" },
  { "blocks", ODB_PARAM_INT, 2, 1, 8, NULL,
    "blocks per thread, n_blocks (§4.5)" },
  { "stride", ODB_PARAM_ENUM, 1, 0, 2, "A|B|C",
    "how a tile's components are strided over its blocks (§4.5)" },
  { "barrier", ODB_PARAM_ENUM, 0, 0, 2, "A|B|C",
    "the inter-block barrier between stages (§4.3); C: the cooperative "
    "grid barrier, one tile of every resident block" },
  { "wg_per_tile", ODB_PARAM_INT, 0, 1, MANY, NULL,
    "blocks per tile (default: the resident blocks over the tiles)" },
  { "tiles", ODB_PARAM_INT, 0, 1, MANY, NULL,
    "concurrent tiles (default: equation (8), the most that leave each "
    "tile three times its halo)" },
  { "wg_per_sm", ODB_PARAM_INT, 0, 1, 64, NULL,
    "resident blocks per multiprocessor, n_wgcore (default: the kernel's "
    "occupancy)" },
  { "persistent", ODB_PARAM_BOOL, 1, 0, 1, NULL,
    "true: a resident grid loops over the tiles; false: a group of blocks "
    "per tile" },
  { "watchdog", ODB_PARAM_POS, 2, 0, HUGE_VAL, NULL,
    "seconds a barrier may wait before the step fails" },
};

const odb_param_decl odb_gpu_stream2d_opts[] = {
  { "skew", ODB_PARAM_INT, 0, 1, 2, NULL,
    "rows between stages: 1 (a barrier a stage) or 2 (one barrier a pass; "
    "the default unless band > 1)" },
  { "threads", ODB_PARAM_POW2, 0, 32, 1024, NULL,
    "threads per block (default: 128 at skew 1; at skew 2 by the stages "
    "and the grid's width)" },
  { "rows", ODB_PARAM_INT, 0, 1, BIG, NULL,
    "grid rows per block (default: skew 2 cuts the rows for whole waves "
    "of blocks; skew 1 takes 48 or 6 s)" },
  { "band", ODB_PARAM_INT, 0, 1, 4, NULL, "skew 1: rows a pass (default 2)" },
  { "carry", ODB_PARAM_INT, -1, 0, 3, NULL,
    "skew 2: the stencil's centre rows kept in registers (default 3, 1 "
    "above 7 stages at lag 2)" },
  { "lag", ODB_PARAM_INT, 0, 1, 2, NULL,
    "skew 2: rows stage l runs behind stage l-1 (default 1 on a star "
    "stencil, else 2)" },
  { "wg_per_sm", ODB_PARAM_INT, 0, 1, 64, NULL,
    "the kernel's minimum resident blocks per multiprocessor" },
  { "early", ODB_PARAM_BOOL, 1, 0, 1, NULL,
    "true: each step launched while the one before ends (compute "
    "capability 9.0 on); false: after it" },
  { "cluster", ODB_PARAM_POW2, 0, 1, 8, NULL,
    "blocks side by side that hand each other their edge columns each "
    "pass (compute capability 9.0; default 1, or ODEBENCH_S2D_CLUSTER)" },
};

const odb_param_decl odb_gpu_trapezoid_opts[] = {
  { "height", ODB_PARAM_INT, 0, 1, 2 * ODB_GEN_MAX_STAGES, NULL,
    "stages a tile spans; below s: rows of that height (default: one row "
    "of s)" },
  { "width", ODB_PARAM_INT, 0, 1, BIG, NULL,
    "tile width (default: the option block, else the widest that fits "
    "shared memory for one row, a window of 1024 or more for rows)" },
  { "width2", ODB_PARAM_INT, 0, 1, BIG, NULL,
    "rows: the width of the even tiles (default: width)" },
  { "threads", ODB_PARAM_POW2, 0, 32, 1024, NULL,
    "rows: threads per tile (default: at most four window components "
    "each)" },
};

const odb_param_decl odb_gpu_hexagonal_opts[] = {
  { "height", ODB_PARAM_INT, 0, 1, 2 * ODB_GEN_MAX_STAGES, NULL,
    "hexagon height in stages, even, 2..2 s (default 4, at most 2 s)" },
  { "width", ODB_PARAM_INT, 0, 1, BIG, NULL,
    "widest width of the odd hexagons (default: the option block, else a "
    "window of 1024 or more)" },
  { "width2", ODB_PARAM_INT, 0, 1, BIG, NULL,
    "widest width of the even hexagons (default: width)" },
  { "threads", ODB_PARAM_POW2, 0, 32, 1024, NULL,
    "threads per tile (default: at most four window components each)" },
};

const odb_param_decl odb_gpu_onchip_opts[] = {
  { "threads", ODB_PARAM_POW2, 1024, 32, 1024, NULL,
    "threads per block (one block a multiprocessor)" },
  { "place", ODB_PARAM_ENUM, 0, 0, 2, "auto|shared|global",
    "where the stage argument and the stage vectors live: shared memory "
    "beside y, or global memory (auto: shared where a band's fit)" },
  { "watchdog", ODB_PARAM_POS, 2, 0, HUGE_VAL, NULL,
    "seconds a barrier between the blocks may wait before the run fails" },
};

/* Puts the resolved value v of option name into its field of t. */
static void set_field(odb_tiling_opts *t, const char *name, double v) {
  if (strcmp(name, "threads") == 0) t->threads = (int)v;
  else if (strcmp(name, "comps") == 0) t->comps = (int)v;
  else if (strcmp(name, "blocks") == 0) t->blocks = (int)v;
  else if (strcmp(name, "stride") == 0) t->stride = (char)('A' + (int)v);
  else if (strcmp(name, "barrier") == 0) t->barrier = (char)('A' + (int)v);
  else if (strcmp(name, "wg_per_tile") == 0) t->wg_per_tile = (int)v;
  else if (strcmp(name, "tiles") == 0) t->tiles = (int)v;
  else if (strcmp(name, "wg_per_sm") == 0) t->wg_per_sm = (int)v;
  else if (strcmp(name, "persistent") == 0) t->persistent = v != 0;
  else if (strcmp(name, "watchdog") == 0) t->watchdog = v;
  else if (strcmp(name, "rows") == 0) t->rows = (long)v;
  else if (strcmp(name, "band") == 0) t->band = (int)v;
  else if (strcmp(name, "skew") == 0) t->skew = (int)v;
  else if (strcmp(name, "carry") == 0) t->carry = (int)v;
  else if (strcmp(name, "lag") == 0) t->lag = (int)v;
  else if (strcmp(name, "width") == 0) t->width = (long)v;
  else if (strcmp(name, "width2") == 0) t->width2 = (long)v;
  else if (strcmp(name, "height") == 0) t->height = (int)v;
  else if (strcmp(name, "cluster") == 0) t->cluster = (int)v;
  else if (strcmp(name, "early") == 0) t->early = v != 0;
  else if (strcmp(name, "place") == 0) t->place = (int)v;
}

odb_status odb_gpu_tiling_resolve(const odb_solver *s, odb_tiling_opts *t) {
  const odb_variant *v = s->variant;
  double val[ODB_GPU_MULTIBLOCK_NOPTS > ODB_GPU_STREAM2D_NOPTS
             ? ODB_GPU_MULTIBLOCK_NOPTS : ODB_GPU_STREAM2D_NOPTS];
  char what[96];
  memset(t, 0, sizeof *t);
  /* what a variant that does not declare an option reads */
  t->carry = -1;
  t->persistent = t->early = 1;
  if (v->nopts > (int)(sizeof val / sizeof val[0]))
    return ODB_FAIL(ODB_ERR_INTERNAL, "%s declares %d options, more than "
                    "%zu", v->name, v->nopts, sizeof val / sizeof val[0]);
  snprintf(what, sizeof what, "variant '%s'", v->name);
  ODB_TRY(odb_param_resolve(what, v->opts, v->nopts, s->opts.vopts,
                            s->opts.nvopts, val));
  for (int i = 0; i < v->nopts; ++i) set_field(t, v->opts[i].name, val[i]);
  return ODB_OK;
}
