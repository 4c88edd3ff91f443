/* odb_gpu_rk_opts.h - the options of the tiled GPU RK variants
   (odb_gpu_rk_opts.c): what each declares, and the tile configuration
   odb_gpu_rk.c resolves from them. Internal to gpu/ode. */
#ifndef ODB_GPU_RK_OPTS_H
#define ODB_GPU_RK_OPTS_H

#include "odb_solver.h"

/*
** The tile configuration of a solver, resolved from its variant options
** (odb_solver_opts.vopts) against the variant's declarations: each field
** holds the declared default where the option is not given, and that
** default is 0 (or -1 for carry) where the variant chooses. Multi-block
** tiling follows M. Korch and T. Werner, "An in-depth introduction of
** multi-workgroup tiling for improving the locality of explicit one-step
** methods for ODE systems with limited access distance on GPUs", sections
** 4.5-4.6 (0 in wg_per_tile or tiles: their choice by that paper's
** equation (8)).
*/
typedef struct odb_tiling_opts {
  int threads;           /* threads per block (0: the variant's choice) */
  int comps;             /* consecutive components per block, n_comp */
  int blocks;            /* blocks per thread, n_blocks */
  char stride;           /* 'A', 'B' or 'C' */
  char barrier;          /* 'A', 'B' or 'C' */
  int wg_per_tile;       /* thread blocks per tile */
  int tiles;             /* concurrent tiles */
  int wg_per_sm;         /* thread blocks per multiprocessor, n_wgcore */
  int persistent;        /* 1: a resident grid loops over the tiles; 0: one
                            group of blocks per tile */
  double watchdog;       /* seconds a barrier may wait */
  long rows;             /* gpu_stream2d: grid rows per block */
  int band;              /* gpu_stream2d: rows a pass (1..4) */
  int skew;              /* gpu_stream2d: rows between stages, 1 or 2 */
  int carry;             /* gpu_stream2d (skew 2): the stencil's centre
                            rows kept in registers, 0..3 (-1: chosen) */
  int lag;               /* gpu_stream2d (skew 2): rows stage l runs behind
                            stage l-1, 1 or 2 */
  long width, width2;    /* gpu_hexagonal / gpu_trapezoid: widest width of
                            the odd and the even tiles (width2 0: same) */
  int height;            /* gpu_hexagonal (even, 2..2s) / gpu_trapezoid
                            (1..s): tile height in stages */
  int cluster;           /* gpu_stream2d: blocks of a cluster, 1, 2, 4 or 8 */
  int early;             /* gpu_stream2d: 1 launches each step early where
                            the device can (compute capability 9.0 on);
                            0: after the step before */
  int place;             /* gpu_onchip: 0 chosen by size, 1 the stages in
                            shared memory, 2 in global memory */
} odb_tiling_opts;

/* The declared options of each tiled variant (the counts are checked
   against the tables where they are defined). */
enum { ODB_GPU_MULTIBLOCK_NOPTS = 10, ODB_GPU_STREAM2D_NOPTS = 9,
       ODB_GPU_TRAPEZOID_NOPTS = 4, ODB_GPU_HEXAGONAL_NOPTS = 4,
       ODB_GPU_ONCHIP_NOPTS = 3 };
extern const odb_param_decl odb_gpu_multiblock_opts[ODB_GPU_MULTIBLOCK_NOPTS];
extern const odb_param_decl odb_gpu_stream2d_opts[ODB_GPU_STREAM2D_NOPTS];
extern const odb_param_decl odb_gpu_trapezoid_opts[ODB_GPU_TRAPEZOID_NOPTS];
extern const odb_param_decl odb_gpu_hexagonal_opts[ODB_GPU_HEXAGONAL_NOPTS];
extern const odb_param_decl odb_gpu_onchip_opts[ODB_GPU_ONCHIP_NOPTS];

/*
** Resolves s->opts.vopts against the options s->variant declares into t
** (odb_param_resolve: every range, integer, choice and power-of-two check,
** with the variant and the option named in the message). ODB_ERR_ARG on a
** value the declarations refuse.
*/
odb_status odb_gpu_tiling_resolve(const odb_solver *s, odb_tiling_opts *t);

#endif
