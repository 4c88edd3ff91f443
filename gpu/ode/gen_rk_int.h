/* gen_rk_int.h - what the files of the RK kernel generator share: the
   state of generation, the data flow of a step, the common text, the
   fixed device code (the .cuh files of device/) and one entry per family
   of kernels.
   odb_gen_rk.h is the generator's interface; this header is for
   gen_rk_*.c and odb_gpu_barrier.c only. */
#ifndef GEN_RK_INT_H
#define GEN_RK_INT_H

#include "erk_common.h"
#include "odb_emit.h"
#include "odb_gen_rk.h"

/*
** The state of generation: the plan of the method, whether the last
** argument is ynew itself (FSAL methods whose last row of A is b), which
** F_l the reference variant must keep in memory, the options of
** gpu_stream2d's kernels, and the text being written.
*/
typedef struct gen {
  const odb_problem *p;
  const odb_method *m;
  erk_plan e;
  int S;
  int alias;             /* Y_{S-1} == ynew */
  int need_mem[ODB_GEN_MAX_STAGES];
  erk_terms ra[ODB_GEN_MAX_STAGES];   /* skew 2: Y_l's LC relative to
                                         Y_{l-1} (ra[l] = a[l] - a[l-1]) */
  int carry;             /* skew 2: stencil centre rows kept in registers */
  int whole;             /* skew 2: sub-strips of whole rows a block (0: a
                            strip with halo columns) */
  int star;              /* skew 2: f reads no diagonal neighbour, so a
                            barrier every second pass suffices */
  int early_store;       /* skew 2: the last stage stores its row of ynew */
  int late_norm;         /* skew 2 with early_store on a slab (own rows
                            bounded): the row's share of the norm is added
                            at the pass's end, not beside the store */
  int devctl;            /* the kernel runs the step controller (args.ctl) */
  int lag;               /* skew 2: rows stage l runs behind stage l-1 (1:
                            stages in order, a barrier every pass) */
  int cluster;           /* stream2d: blocks of a cluster side by side along
                            a row, exchanging edge columns (1: none) */
  int fp64_unknown;      /* a kernel evaluates an f whose FP64 count the
                            problem does not declare: every launch's fp64
                            is 0 */
  odb_gen_plan *plan;
  odb_emit b;
} gen;

/* The generator's shorthand for odb_emitf (printf-style text into e). */
#define put(e, ...) odb_emitf((e), __VA_ARGS__)

/* {====== the data flow and the common text (gen_rk_common.c) */

/* 1 when t uses stage q. */
int rkg_uses(const erk_terms *t, int q);
/* Adds a launch to the plan; NULL (and the text fails) past
   ODB_GEN_MAX_LAUNCH. */
odb_gen_launch *rkg_add_launch(gen *g, const char *kernel, int when,
                               int reduce, double rvec, double wvec);
/* A double as an exact C literal in parentheses ("(-0x1.8p+1)"). */
void rkg_put_num(odb_emit *b, double v);
/*
** Opens a kernel: extern "C", bounded block size, one by-value argument
** (devctl: the controller's prologue, rkg_put_ctl_prologue).
*/
void rkg_put_kernel_head(gen *g, const char *name);
/*
** A devctl kernel's prologue: returns at once unless the controller holds
** the state in this launch's y, else takes h and t + c_l h from it.
*/
void rkg_put_ctl_prologue(gen *g);
/*
** "yexpr + a.h * (c0 * f<i0> + c1 * f<i1> + ...)" (yexpr NULL: no y term),
** the order of erk_lc. Stage values are the registers f<q>. Returns its
** FP64 instructions (rkg_lc_fp64 with literal coefficients).
*/
int rkg_put_lc(odb_emit *b, const char *yexpr, const erk_terms *t);

/* }====== */

/* {====== the FP64 count: DFMA, DADD and DMUL (one thread instruction
   each; compares, conversions and MUFU are not counted, nor are they in
   ncu's dfma/dadd/dmul metrics), summed where the text is written */

/*
** acc += odb_sq_scaled(e, y, yn, atol, rtol) (device/rk_loop.cuh) per
** component: atol + rtol max(...) 1 DFMA, the reciprocal's two refining
** steps 3 DFMA (d = 1 - s x, then x + x (d + d d) in two), e times it 1
** DMUL, acc + r r 1 DFMA.
*/
#define RKG_FP64_NORM 6

/*
** The FP64 instructions of "[y +] h * (c0 F0 + c1 F1 + ...)": the first
** product a DMUL, each further term a DFMA, h times the sum one DFMA with
** y (a DMUL without): n + 1; none for no terms. literal: the coefficients
** are literals in the text, and a first one of +-1 costs nothing (NVVM
** folds x * 1 and x * -1; a later one makes a DADD, still 1); from a
** table (stream2d's odb_cf) every product counts.
*/
int rkg_lc_fp64(const erk_terms *t, int with_y, int literal);
/* f_j of the problem's gpu_source; marks the count unknown when it is 0. */
double rkg_rhs_fp64(gen *g);
/* One cell of gpu_cell_source compiled with ODB_LAG lag (0: undefined);
   marks the count unknown when it is 0. */
double rkg_cell_fp64(gen *g, int lag);
/*
** Loads into registers f<q> the stages of t that are not in register yet
** (loaded[q] == 0), and marks them. Returns the number of loads.
*/
int rkg_put_loads(odb_emit *b, const erk_terms *t, int *loaded);

/* }====== */

/* {====== the families, one file each (gen_rk_<family>.c): the kernels
   of a step and their launches in g->plan, after the prelude */

void rkg_unfused(gen *g);
void rkg_reference(gen *g);
/* the whole step as one row of trapezoids */
odb_status rkg_trapezoid(gen *g, const odb_gen_opts *o);
/* gen_rk_hexagonal.c: hexagons (hex), or trapezoids in rows of tile_h */
odb_status rkg_levels(gen *g, const odb_gen_opts *o, int hex);
odb_status rkg_multiblock(gen *g, const odb_gen_opts *o);
odb_status rkg_stream2d(gen *g, const odb_gen_opts *o);
/* gen_rk_onchip.c: the persistent kernel of gpu_onchip */
odb_status rkg_onchip(gen *g, const odb_gen_opts *o);

/* }====== */

/* {====== the fixed device code: device/<name>.cuh, embedded by the build
   (gpu/embed_cuh.py) as odb_cuh_<name> */

extern const odb_cuh odb_cuh_rk_args;      /* struct odb_args */
extern const odb_cuh odb_cuh_rk_ctl;       /* the step controller */
extern const odb_cuh odb_cuh_rk_xnorm;     /* the norm summed over ranks */
extern const odb_cuh odb_cuh_rk_loop;      /* ODB_LOOP, odb_sq_scaled */
extern const odb_cuh odb_cuh_rk_reduce;    /* the norm over the blocks */
extern const odb_cuh odb_cuh_rk_barrier;   /* multi-block barriers */
extern const odb_cuh odb_cuh_s2d_skew1;    /* gpu_stream2d's helpers, */
extern const odb_cuh odb_cuh_s2d_skew2;    /* by skew */
extern const odb_cuh odb_cuh_onchip;       /* gpu_onchip's bands */

/* }====== */

#endif
