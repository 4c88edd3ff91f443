/* odb_gen_rk.h - CUDA C for explicit RK steps, generated from the tableau
   and the problem's f_j source (gpu/ only), in the layouts of Korch and
   Werner, "An in-depth introduction of multi-workgroup tiling for
   improving the locality of explicit one-step methods for ODE systems
   with limited access distance on GPUs", and gpu_stream2d's. The
   generator is gen_rk_common.c with a file per family of kernels
   (gen_rk_<family>.c) and its fixed device code in .cuh files under
   device/. */
#ifndef ODB_GEN_RK_H
#define ODB_GEN_RK_H

#include "odebench.h"
#include "odb_gen_ctl.h"

#define ODB_GEN_MAX_STAGES 16
#define ODB_GEN_MAX_LAUNCH 48

/* How the step's basic operations (RHS, LC, RED) map onto kernels. */
typedef enum odb_gen_kind {
  ODB_GEN_UNFUSED = 0,   /* one kernel per RHS, per LC and for the norm */
  ODB_GEN_REFERENCE,     /* Korch and Werner's reference: all fused but
                            LC->RHS */
  ODB_GEN_TRAPEZOID,     /* single-block trapezoidal tiles across stages */
  ODB_GEN_MULTIBLOCK,    /* multi-block (multi-workgroup) tiles, Korch and
                            Werner §4 */
  ODB_GEN_STREAM2D,      /* 2-D grid problems: strips streamed row by row
                            through all stages in one kernel */
  ODB_GEN_HEXAGON,       /* single-block hexagonal tiles across stages */
  ODB_GEN_ONCHIP         /* 2-D grid problems: a persistent grid, each
                            block's band of y in shared memory for a batch
                            of attempts, a barrier a stage */
} odb_gen_kind;

/*
** The one by-value parameter of every generated kernel; the generated
** source declares the same struct (every member is 8 bytes, so the two
** layouts agree). F, Y and tl are indexed by stage; Y are the argument
** (or tile) buffers, part the per-block partial sums of the norm, ticket
** the counter that elects the block that finishes it into *err2 (the sum
** of squares; the host takes sqrt(err2 / n)).
*/
typedef struct odb_gen_args {
  const double *y;
  double *ynew;
  double *F[ODB_GEN_MAX_STAGES];
  double *Y[2];
  double *part;
  unsigned *ticket;
  double *err2;
  double tl[ODB_GEN_MAX_STAGES];   /* t + c_l h, computed on the host */
  double h, atol, rtol;
  unsigned *bar;         /* multi-block: barrier counters and flags */
  unsigned *fail;        /* multi-block: set by a barrier's watchdog */
  struct odb_gen_ctl *ctl;   /* the step controller (devctl kernels only) */
  long long par;         /* devctl: the launch runs only when the controller
                            holds the state in this launch's y (cur == par) */
  double *note;          /* NULL, or pinned host memory the block that
                            finishes the norm writes: note[0] the sum of
                            squares, then (a system fence between) the
                            long long at note + 1 = seq */
  long long seq;
  struct odb_gen_xnorm *xn;  /* NULL, or (kernels built with xnorm) the
                                norm's sum over the GPU ranks of a host */
} odb_gen_args;

/* When a launch of a step runs. */
enum {
  ODB_GEN_ALWAYS = 0,
  ODB_GEN_IF_STAGE0,     /* only when F_0 = f(t, y) must be computed */
  ODB_GEN_IF_FSAL        /* only when F_0 is already there */
};

/* The grid a launch takes. */
enum {
  ODB_GEN_GRID_STRIDE = 0,   /* grid-stride loop over n, any grid size */
  ODB_GEN_GRID_TILES,        /* one block per tile (plan.ntiles) */
  ODB_GEN_GRID_BOUNDS,       /* one block per inner tile boundary */
  ODB_GEN_GRID_GROUPS,       /* plan.grid blocks (multi-block tiles) */
  ODB_GEN_GRID_COUNT         /* the launch's own count (blocks) */
};

/* One kernel launch of a step, with the vectors it moves (for traffic). */
typedef struct odb_gen_launch {
  char kernel[24];       /* extern "C" name in the module */
  int when;              /* ODB_GEN_ALWAYS / _IF_STAGE0 / _IF_FSAL */
  int reduce;            /* takes part in the error norm */
  double rvec, wvec;     /* full vectors' worth read and written */
  int grid;              /* ODB_GEN_GRID_* */
  size_t smem;           /* dynamic shared memory in bytes */
  long blocks;           /* ODB_GEN_GRID_COUNT: blocks launched */
  /* FP64 instructions (DFMA, DADD, DMUL; one a thread each) the launch
     executes over the whole system, halos and a layout's recomputed
     components included, counted by the generator where it writes the
     code (gen_rk_int.h); 0 where the problem's f has no count */
  double fp64;
} odb_gen_launch;

/* 1 when launch l runs in a step that evaluates stage 0 (stage0), else in
   one that takes F_0 from memory (ODB_GEN_IF_STAGE0 / _IF_FSAL). */
int odb_gen_launch_runs(const odb_gen_launch *l, int stage0);

/* Tuning parameters of the generated code. */
typedef struct odb_gen_opts {
  int threads;           /* threads per block (power of two, 32..1024) */
  long tile_w;           /* trapezoid: components per tile at its base
                            (0: the largest that fits shared memory) */
  long smem_max;         /* trapezoid: shared memory a block may have */
  /* gpu_hexagonal, and gpu_trapezoid with tile_h < s: the widest width
     of the odd (tile_w) and even (tile_w2, 0: the same) tiles and the
     tile height in stages (hexagons: even, 2..2s) */
  long tile_w2;
  int tile_h;
  /* multi-block tiles (Korch and Werner, §4.5-4.6; the tile width is
     comps * blocks * threads * wg_per_tile, equation (7)) */
  int comps;             /* consecutive components per block, n_comp */
  int blocks;            /* blocks per thread, n_blocks */
  char stride;           /* 'A', 'B' or 'C': stride between those blocks */
  int wg_per_tile;       /* workgroups (thread blocks) per tile */
  int groups;            /* tile groups launched (persistent: concurrent
                            tiles; otherwise one per tile) */
  char barrier;          /* 'A' atomic counter, 'B' master block and flags,
                            'C' cooperative groups' grid sync */
  double watchdog;       /* seconds a barrier may wait before failing */
  /* gpu_stream2d: a block streams `rows` grid rows of a strip of
     threads - 2 s columns (0: all rows), `band` rows a pass; min_blocks
     (0: none) asks the compiler for that many resident blocks per
     multiprocessor */
  long rows;
  int min_blocks;
  int band;              /* gpu_stream2d: rows a pass, 1..4 (0: 1) */
  int skew;              /* gpu_stream2d: rows stage l runs behind stage
                            l-1: 1 (a barrier a stage, the default) or 2
                            (a barrier a pass; band 1) */
  int carry;             /* gpu_stream2d, skew 2: rows of a stencil's centre
                            column kept in registers from earlier passes
                            instead of loaded, 0..3 (newest row first) */
  int lag;               /* gpu_stream2d, skew 2: rows stage l runs behind
                            stage l-1 (0: 2; 1 needs a star stencil and
                            takes a barrier every pass) */
  int early_store;       /* gpu_stream2d, skew 2: 1 stores each completed
                            row of ynew in the last stage (fewer registers
                            held to the pass's end), 0 after all stages */
  int cluster;           /* gpu_stream2d, skew 2, lag 1: blocks of a thread
                            block cluster (1, 2, 4 or 8; 0: 1) side by side
                            along a row, which hand each other their edge
                            columns through distributed shared memory, so
                            only the cluster's ends carry halo columns */
  int devctl;            /* a method with an error estimate, any layout but
                            multi-block: 1 builds kernels that take their
                            step from args.ctl and run the step controller
                            (odb_gen_ctl) */
  int xnorm;             /* devctl kernels: the norm's sum of squares
                            summed over the ranks (args.xn, odb_gen_xnorm)
                            before the controller takes it */
  long norm_n;           /* the n of the norm sqrt(sum / n) the device's
                            controller takes (0: the problem's n; a slab
                            of a system split over ranks: the whole n) */
  int place;             /* gpu_onchip: where the stage argument and the
                            stage vectors live, 1 shared memory, 2 global
                            (odb_gen_onchip_fit); its blocks are groups
                            and its barriers' watchdog watchdog */
} odb_gen_opts;

/* What the host needs to run the generated step. */
typedef struct odb_gen_plan {
  odb_gen_kind kind;
  int s;
  int nlaunch;
  odb_gen_launch launch[ODB_GEN_MAX_LAUNCH];
  long scratch[2];       /* doubles of the buffers Y[0], Y[1] (0: none) */
  int has_err;           /* the method has bhat: the norm is reduced */
  int threads;
  long tile_w, tile_h;   /* trapezoid: tile width and height (stages) */
  long ntiles;           /* trapezoid: tiles (blocks of the first kernel) */
  long nparts;           /* trapezoid: partial sums of the norm (0: grid) */
  /* multi-block: extended tile width (top width tile_w plus 2 (s-1) d),
     blocks per tile, blocks launched, unsigned words of the barriers */
  long tile_we;
  int wg_per_tile;
  long grid;
  long nbar;
  /* gpu_stream2d: strips across the columns, row chunks, rows per chunk,
     and subs, a block's sub-strips of whole rows, each its own chunk (a
     grid no wider than the block, skew 2; else 1). The grid, in ntiles:
     strips x chunks blocks, or chunks / subs with whole rows */
  long strips, chunks, rows;
  int subs;
  int cluster;           /* blocks a cluster (launched as such when > 1) */
} odb_gen_plan;

/*
** The FP64 instructions of one step of plan (the launches that run in a
** step that evaluates stage 0, or in one that takes F_0 from memory);
** 0 when the problem declares no count of its f (gpu_fp64_per_comp,
** gpu_fp64_cell). What is left out, per thread or block rather than per
** component: the norm's sum over a block and the blocks, the step
** controller's t + c_l h, products of loop constants that the compiler
** hoists. docs/gpu.md ("the compute roof") says how to check the count
** against ncu.
*/
double odb_gen_plan_fp64(const odb_gen_plan *plan, int stage0);

/*
** The strips of gpu_stream2d across a row of NC columns with T threads a
** block, S stages and clusters of C blocks: a multiple of C, each cluster
** computing C T columns, every one after the first C T - 2 S further on;
** -1 when C T <= 2 S.
*/
long odb_gen_s2d_strips(long NC, long T, long S, long C);

/*
** gpu_onchip's layout of p for an S-stage method on a device of sms
** multiprocessors with smem bytes of shared memory a block (the opt-in
** maximum): one block a multiprocessor (at most one a grid row), bands of
** at most rows rows, place 1 (the argument and the S stage vectors beside
** y in shared memory) where it fits and place (given: 1 or 2; 0 chooses)
** allows, else 2 (in global memory), and the dynamic shared memory a
** block takes. Needs no device. ODB_ERR_UNSUPPORTED where p is not a 2-D
** grid problem with a cell source, or y alone does not fit, with the
** sizes ("y needs X MB of shared memory over B blocks ...; the device has
** Y MB ...: N <= Z"), or place 1 was asked for and does not fit.
*/
typedef struct odb_gen_onchip_layout {
  long blocks, rows;
  int place;
  size_t smem;
} odb_gen_onchip_layout;
odb_status odb_gen_onchip_fit(const odb_problem *p, int S, long sms,
                                 long smem, int place,
                                 odb_gen_onchip_layout *out);

/*
** Generates the CUDA C of one step of method m on problem p (which must
** have gpu_source and d < n) as the given kind. *source is malloc'd; plan
** says which kernels a step launches in which order. Fails with
** ODB_ERR_UNSUPPORTED for methods other than explicit RK, more than
** ODB_GEN_MAX_STAGES stages, or options out of range.
*/
odb_status odb_gen_rk(const odb_problem *p, const odb_method *m,
                      odb_gen_kind kind, const odb_gen_opts *o, char **source,
                      odb_gen_plan *plan);

#endif
