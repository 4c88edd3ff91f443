/* gen_rk_stream2d.c - gpu_stream2d: for problems on a 2-D grid, strips of
   the grid streamed row by row through all stages in one kernel, with
   skew 1 (a barrier a stage) or skew 2 (a barrier a pass). One cohesive
   generator of some 900 lines: the two skews share the kernel's head,
   tail and plan, and skew 2's register states, partial sums and cluster
   exchange only make sense together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_rk_int.h"

/*
** For problems on a 2-D grid with a radius-1 stencil (gpu_cell_source),
** the access distance d is one grid row, so the 1-D tiles of Korch and
** Werner need a halo of (s-1) rows on each side and grow to hundreds of
** thousands of components. Tiling in two dimensions needs far less: a block owns a strip
** of W = threads - 2s columns (plus s halo columns on each side, computed
** redundantly) and streams down a chunk of rows, R rows a pass (the band).
** In the pass at row `it` stage l forms its argument Y_l at rows it - l ..
** it - l + R - 1 and evaluates F_l one row behind (F_l(q) needs Y_l at rows
** q-1, q, q+1 and columns j-1, j, j+1); rows it - s .. it - s + R - 1 are
** then complete and their new solution and estimate are written.
** y arrives by cp.async ODB_PF passes ahead into a ring of rows in shared
** memory (so no pass waits for DRAM), which is also stage 0's argument;
** every later Y_l goes through a ring of R + 2 rows (one barrier per stage
** and pass). F_q of the rows in flight stay in registers, named by row
** modulo a multiple of R, which the unrolled loop makes compile-time.
** DRAM traffic is one read of y (plus the halos) and one write of ynew;
** every stage is computed on chip.
*/

#define S2_PF 2   /* passes of y loaded ahead */

/* A row's register slot: offset off from the pass's first row, phase u. */
static int s2_slot(int u, int R, int off, int P) {
  return ((u * R + off) % P + P) % P;
}

/*
** "ysm(q, c) + a.h * (coef * k<q>_<slot>_<c> + ...)" (with_y 0: no y term;
** no terms: y alone or 0.0), in the order of put_lc; q the row variable.
** Returns its FP64 instructions.
*/
static int put_s2_lc(odb_emit *b, int with_y, int slot, int c,
                     const erk_terms *t) {
  if (with_y) put(b, "odb_ysm[(odb_yslot(q) * ODB_K + %d) * ODB_TP + t + 1]",
                  c);
  if (t->n == 0) {
    if (!with_y) put(b, "0.0");
    return 0;
  }
  if (with_y) put(b, " + ");
  put(b, "a.h * (");
  for (int i = 0; i < t->n; ++i) {
    if (i) put(b, " + ");
    rkg_put_num(b, t->coef[i]);
    put(b, " * k%d_%d_%d", t->idx[i], slot, c);
  }
  put(b, ")");
  return rkg_lc_fp64(t, with_y, 1);
}

/* Stage l of phase u: Y_l at rows ip - l + r (l > 0), F_l one row behind.
   Returns its FP64 instructions a thread. */
static double put_s2_stage(gen *g, int u, int l, int R, int P, int K) {
  odb_emit *b = &g->b;
  double fp = 0;
  if (l == 0) {
    put(b, "      for (int r = 0; r < ODB_R; ++r)\n"
           "        odb_fetch(a.y, odb_ysm, ip + ODB_PF * ODB_R + r, it0, "
           "colc, t);\n"
           "      asm volatile(\"cp.async.commit_group;\" ::);\n"
           "      asm volatile(\"cp.async.wait_group %%0;\" :: \"n\"(ODB_PF));\n");
  } else {
    for (int r = 0; r < R; ++r) {
      int sf = s2_slot(u, R, r - l, P);
      put(b, "      {  // Y_%d at row ip - %d\n", l, l - r);
      put(b, "        const odb_idx q = ip - %d;\n", l - r);
      put(b, "        double *w = odb_ring + (%d * ODB_D3 + odb_mod(q)) * "
             "ODB_K * ODB_TP + t + 1;\n", l - 1);
      for (int c = 0; c < K; ++c) {
        put(b, "        w[%d * ODB_TP] = ", c);
        fp += put_s2_lc(b, 1, sf, c, &g->e.a[l]);
        put(b, ";\n");
      }
      put(b, "      }\n");
    }
  }
  put(b, "      __syncthreads();\n");
  for (int r = 0; r < R; ++r) {
    int sr = s2_slot(u, R, r - l - 1, P);
    put(b, "      {  // F_%d at row ip - %d\n", l, l + 1 - r);
    put(b, "        const odb_idx q = ip - %d;\n", l + 1 - r);
    if (l == 0)
      put(b, "        const odb_cell_in in = odb_rows(odb_ysm, odb_yslot(q), "
             "ODB_YR, t);\n");
    else
      put(b, "        const odb_cell_in in = odb_rows(odb_ring + %d * ODB_D3 * "
             "ODB_K * ODB_TP, odb_mod(q), ODB_D3, t);\n", l - 1);
    put(b, "        double f[ODB_K];\n");
    put(b, "        odb_rhs_cell(q, col, a.tl[%d], in, f);\n", l);
    fp += rkg_cell_fp64(g, 0);   /* ODB_LAG is not defined at skew 1 */
    for (int c = 0; c < K; ++c)
      put(b, "        k%d_%d_%d = f[%d];\n", l, sr, c, c);
    put(b, "      }\n");
  }
  return fp;
}

/*
** Phase u of the unrolled loop: every stage, then the finished rows.
** Returns the stages' FP64 instructions a thread, which every thread runs
** (halo columns and rows included); *own gets those of a finished cell
** (ynew, the estimate and the norm), which its owner alone runs.
*/
static double put_s2_phase(gen *g, int u, int R, int P, int K,
                           double *own) {
  odb_emit *b = &g->b;
  int S = g->S;
  double fp = 0;
  *own = 0;
  put(b, "    {  // phase %d\n      const odb_idx ip = it + %d;\n"
         "      if (ip >= it1) break;\n", u, u * R);
  for (int l = 0; l < S; ++l) fp += put_s2_stage(g, u, l, R, P, K);
  for (int r = 0; r < R; ++r) {
    int sl = s2_slot(u, R, r - S, P);
    put(b, "      {  // row ip - %d is complete\n", S - r);
    put(b, "        const odb_idx q = ip - %d;\n", S - r);
    put(b, "        if (own && q >= r0 && q < r1) {\n");
    put(b, "          double *dst = a.ynew + (q * ODB_NC + col) * ODB_K;\n");
    for (int c = 0; c < K; ++c) {
      put(b, "          const double y%d = odb_ysm[(odb_yslot(q) * ODB_K + %d) "
             "* ODB_TP + t + 1];\n", c, c);
      put(b, "          const double yn%d = ", c);
      *own += put_s2_lc(b, 1, sl, c, &g->e.b);
      put(b, ";\n          dst[%d] = yn%d;\n", c, c);
      if (g->plan->has_err) {
        put(b, "          if (ODB_IN_NORM(q)) acc += odb_sq_scaled(");
        *own += put_s2_lc(b, 0, sl, c, &g->e.e) + RKG_FP64_NORM;
        put(b, ", y%d, yn%d, a.atol, a.rtol);\n", c, c);
      }
    }
    put(b, "        }\n      }\n");
  }
  put(b, "    }\n");
  *own /= R;   /* the R rows' cells */
  return fp;
}

/*
** A kernel launched early (odb_gpu_launch_ex: its blocks may start while
** the step before ends) waits for that step before it reads anything, then
** lets the next step's launch start early too; without such a launch both
** are no-ops.
*/
static void put_early_wait(odb_emit *b) {
  put(b, "#if __CUDA_ARCH__ >= 900\n"
         "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // the "
         "step before\n"
         "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: "
         "\"memory\");\n"
         "#endif\n");
}

/*
** The problem's cell source and the head of k_s2d: launch bounds (with
** min_blocks resident blocks when positive), the shared memory (layout
** says how the rings lie in it), the block's strip, chunk and rows.
*/
static void put_s2_head(gen *g, int min_blocks, const char *layout) {
  odb_emit *b = &g->b;
  odb_emit_foreign(b, g->p->label, "gpu_cell_source",
                   g->p->gpu_cell_source);
  if (min_blocks > 0)
    put(b, "extern \"C\" __global__ void __launch_bounds__(ODB_T, %d)\n",
        min_blocks);
  else
    put(b, "extern \"C\" __global__ void __launch_bounds__(ODB_T)\n");
  if (g->devctl) {
    put(b, "k_s2d(const odb_args odb_a0) {\n  // %s\n", layout);
    put_early_wait(b);
    rkg_put_ctl_prologue(g);
  } else {
    put(b, "k_s2d(const odb_args a) {\n  // %s\n", layout);
    put_early_wait(b);
  }
  put(b, "  extern __shared__ __align__(16) double odb_ysm[];\n"
         "  double *const odb_ring = odb_ysm + ODB_YR * ODB_K * ODB_TP;\n"
         "  const int t = (int)threadIdx.x;\n");
  if (g->whole)
    put(b, "  // whole rows: the block's ODB_G sub-strips, side by side, each "
           "stream a\n  // chunk of rows of the grid's full width (no halo "
           "columns; the cell\n  // function stays inside the grid)\n"
           "  const odb_idx sub = (odb_idx)t / ODB_NC;\n"
           "  const odb_idx col = (odb_idx)t - sub * ODB_NC, colc = col;\n"
           "  const odb_idx chunk = (odb_idx)blockIdx.x * ODB_G + sub;\n"
           "  const bool own = sub < ODB_G;\n"
           "  const odb_idx hc = (ODB_NR + (odb_idx)gridDim.x * ODB_G - 1) /\n"
           "                     ((odb_idx)gridDim.x * ODB_G);\n");
  else
    put(b, "  // a cluster of ODB_CL blocks side by side computes ODB_CL * ODB_T\n"
           "  // columns from column cl * ODB_WC on and owns all but ODB_S halo\n"
           "  // columns at either end; the first owns from column 0 and the last\n"
           "  // to the grid's edge (the cell function mirrors there)\n"
           "  const odb_idx strip = (odb_idx)blockIdx.x %% ODB_STRIPS;\n"
           "  const odb_idx chunk = (odb_idx)blockIdx.x / ODB_STRIPS;\n"
           "  const odb_idx cl = strip / ODB_CL, c0 = cl * ODB_WC;\n"
           "  const int rank = (int)(strip - cl * ODB_CL);\n"
           "  const odb_idx col = c0 + rank * ODB_T + t;\n"
           "  const odb_idx colc = odb_clamp(col, ODB_NC);\n"
           "  const bool own = col < ODB_NC && (cl == 0 || col >= c0 + ODB_S) &&\n"
           "                   (col < c0 + ODB_CL * ODB_T - ODB_S ||\n"
           "                    cl == ODB_STRIPS / ODB_CL - 1);\n"
           "  (void)rank;\n"
           "  // rows a chunk, from the grid: one build serves any rows a "
           "block\n"
           "  const odb_idx hc = (ODB_NR + (odb_idx)gridDim.x / ODB_STRIPS - 1) "
           "/\n                     ((odb_idx)gridDim.x / ODB_STRIPS);\n");
  put(b, "  const odb_idx r0 = chunk * hc;\n"
         "  const odb_idx r1 = r0 + hc < ODB_NR ? r0 + hc : ODB_NR;\n");
  if (g->whole)
    put(b, "  // the same passes for every sub-strip (they share the barriers)\n"
           "  const odb_idx it0 = r0 - ODB_S, it1 = r0 + hc + ODB_S;\n");
  else
    put(b, "  const odb_idx it0 = r0 - ODB_S, it1 = r1 + ODB_S;\n");
  put(b, "  double acc = 0.0;\n");
}

/* The end of k_s2d: the loop closed, copies drained, the norm reduced. */
static void put_s2_tail(gen *g) {
  odb_emit *b = &g->b;
  put(b, "  }\n  asm volatile(\"cp.async.wait_group 0;\" ::);\n");
  if (g->cluster > 1)   /* the neighbour's last rows in, before either exits */
    put(b, "  if (odb_side && ipe > it0 + 2) odb_xwait(odb_mine, ipe - it0 - 3);"
           "\n  odb_cluster_sync();\n");
  if (g->plan->has_err)
    put(b, "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n");
  else
    put(b, "  (void)acc;\n");
  put(b, "}\n");
}

/*
** The helpers, the problem's cell source and the kernel k_s2d. *pass gets
** the FP64 instructions of a thread's phase, *own those of an owned cell
** (put_s2_phase).
*/
static void gen_s2_kernel(gen *g, int K, int R, int min_blocks, double *pass,
                          double *own) {
  odb_emit *b = &g->b;
  int S = g->S, P = R * ((S + R - 1 + R - 1) / R), U = P / R;
  odb_emit_cuh(b, &odb_cuh_s2d_skew1, NULL);
  put_s2_head(g, min_blocks, "[ODB_YR rows][ODB_K][ODB_TP] of y, then "
              "[stage 1..s-1][ODB_D3][ODB_K][ODB_TP]");
  for (int p = 0; p < P; ++p) {
    put(b, "  double");
    for (int l = 0; l < S; ++l)
      for (int c = 0; c < K; ++c)
        put(b, "%s k%d_%d_%d = 0.0", l || c ? "," : "", l, p, c);
    put(b, ";\n");
  }
  put(b, "  for (int i = 0; i < ODB_PF; ++i) {\n"
         "    for (int r = 0; r < ODB_R; ++r)\n"
         "      odb_fetch(a.y, odb_ysm, it0 + i * ODB_R + r, it0, colc, t);\n"
         "    asm volatile(\"cp.async.commit_group;\" ::);\n  }\n");
  put(b, "  for (odb_idx it = it0; it < it1; it += %d) {\n", P);
  for (int u = 0; u < U; ++u) {   /* every phase the same arithmetic */
    double f = put_s2_phase(g, u, R, P, K, own);
    if (u == 0) *pass = f;
  }
  put_s2_tail(g);
}

/*
** Skew 2: stage l evaluates F_l two rows behind stage l-1 (in the pass at
** row ip, at row ip - 1 - 2l), so every row of Y_l that F_l reads was
** written in an earlier pass. A pass then needs one __syncthreads instead
** of one a stage, and its s stages are independent work. Y_l (l >= 1)
** lives in a ring of 4 rows, y in a ring of ODB_YR >= 2 s + ODB_PF + 1.
** What a row carries from stage l to stage l+1 (two passes later) stays in
** registers named by stage and the pass's parity: the F_q still needed or
** the partial sums of the linear combinations still to come, whichever are
** fewer (partial sums add the terms in the order of put_lc). The loop is
** unrolled by four passes, so the stage rings' slots are constants. Every
** stage runs in every pass, also on the rows of the pipeline's start and
** end whose results are unused: a branch per stage would cut the pass
** into blocks that the compiler cannot interleave (measured slower on an
** H100), and the completed row is stored at the end of the pass.
** A grid no wider than the block (NC <= threads) needs no halo columns:
** the block holds G = threads / NC sub-strips of whole rows side by side,
** each streaming its own chunk of rows (the cell function mirrors at the
** grid's edges, so no cell reads past its own sub-strip). All sub-strips
** run the same passes, as they share the barriers. At d = 32 (16 columns)
** a strip with halos would compute each column twice.
*/

/*
** Lag 1 (star stencils, a centre row or more kept): stage l one row
** behind stage l-1, at row ip - 1 - l, the stages in order within a pass.
** Row q+1 of Y_l, formed by stage l-1 in the same pass, is read only at
** the thread's own column, from stage l-1's register; the side cells of
** row q were stored at the end of the pass before, so a barrier ends every
** pass. What a thread stores at a pass's end (row q of ring l-1) is no
** row that a slower thread still reads in that pass (rows q-1 and q-2 of
** the 4-row ring), and the y ring's next row overwrites row ip - s - 1,
** last read by this thread's last stage a pass before. The state a row
** carries from stage l to l+1 is used one pass later, so one register set
** a boundary holds it: each stage keeps its F_l to the pass's end, and the
** states are formed after all stages, from the last boundary down.
*/

#define S2W_MAXV (ODB_GEN_MAX_STAGES + 2)

/* A row's values between stage l-1 and stage l. */
typedef struct s2w_state {
  int acc;               /* 1: partial sums of LCs, 0: F_q */
  int n;
  int item[S2W_MAXV];    /* F form: stage q; sums: the LC's id */
} s2w_state;

/* LC id: 0..S-1 the argument Y_id, S the new solution, S+1 the estimate. */
static const erk_terms *s2w_lc(const gen *g, int id) {
  if (id < g->S) return &g->ra[id];
  return id == g->S ? &g->e.b : &g->e.e;
}

/* The terms of x - y (both sorted by stage), exact zeros dropped. */
static void terms_minus(const erk_terms *x, const erk_terms *y,
                        erk_terms *d) {
  int i = 0, j = 0;
  d->n = 0;
  while (i < x->n || j < y->n) {
    int q;
    double c;
    if (j == y->n || (i < x->n && x->idx[i] < y->idx[j])) {
      q = x->idx[i];
      c = x->coef[i++];
    } else if (i == x->n || y->idx[j] < x->idx[i]) {
      q = y->idx[j];
      c = -y->coef[j++];
    } else {
      q = x->idx[i];
      c = x->coef[i++] - y->coef[j++];
    }
    if (c != 0.0) {
      d->idx[d->n] = q;
      d->coef[d->n++] = c;
    }
  }
}

/* The relative arguments: Y_1 from y as before, Y_l from Y_{l-1}. */
static void s2w_relative(gen *g) {
  g->ra[0] = g->e.a[0];
  if (g->S > 1) g->ra[1] = g->e.a[1];
  for (int l = 2; l < g->S; ++l) terms_minus(&g->e.a[l], &g->e.a[l - 1],
                                             &g->ra[l]);
}

/* 1 when LC id is still to be formed after stage l-1 (Y_l is formed by
   stage l-1; ynew is Y_{S-1} when they alias; no estimate without bhat). */
static int s2w_pending(const gen *g, int id, int l) {
  if (id < g->S) return id > l;
  if (id == g->S) return !g->alias;
  return g->plan->has_err;
}

/* 1 when some LC still pending after stage l uses F_l. */
static int s2w_need_f(const gen *g, int l) {
  for (int id = l + 1; id < g->S + 2; ++id)
    if (s2w_pending(g, id, l) && rkg_uses(s2w_lc(g, id), l)) return 1;
  return 0;
}

/* The states entering stages 1..S-1: partial sums once they are fewer. */
static void s2w_states(const gen *g, s2w_state *st) {
  memset(st, 0, sizeof *st * (size_t)g->S);
  for (int l = 1; l < g->S; ++l) {
    s2w_state f = { 0, 0, { 0 } }, a = { 1, 0, { 0 } };
    for (int q = 0; q < l; ++q)
      for (int id = l + 1; id < g->S + 2; ++id)
        if (s2w_pending(g, id, l) && rkg_uses(s2w_lc(g, id), q)) {
          f.item[f.n++] = q;
          break;
        }
    for (int id = l + 1; id < g->S + 2; ++id) {
      const erk_terms *t = s2w_lc(g, id);
      if (s2w_pending(g, id, l) && t->n > 0 && t->idx[0] < l)
        a.item[a.n++] = id;
    }
    st[l] = st[l - 1].acc || a.n < f.n ? a : f;
  }
}

/* The index of v in st's items, or -1. */
static int s2w_find(const s2w_state *st, int v) {
  for (int j = 0; j < st->n; ++j)
    if (st->item[j] == v) return j;
  return -1;
}

/* The index of LC id's term i in the kernel's table odb_cf. */
static int s2w_cf(const gen *g, int id, int i) {
  int k = 0;
  for (int x = 0; x < id; ++x) k += s2w_lc(g, x)->n;
  return k + i;
}

/* The table odb_cf of every coefficient (constant memory, so that a fused
   multiply-add reads it as an operand). */
static void put_s2w_coefs(gen *g) {
  odb_emit *b = &g->b;
  int n = 0;
  put(b, "static __constant__ double odb_cf[] = {");
  for (int id = 0; id < g->S + 2; ++id)
    for (int i = 0; i < s2w_lc(g, id)->n; ++i) {
      put(b, "%s", n == 0 ? "\n  " : n % 4 ? ", " : ",\n  ");
      ++n;
      rkg_put_num(b, s2w_lc(g, id)->coef[i]);
    }
  if (n == 0) put(b, "0.0");
  put(b, " };\n");
}

/*
** The terms of LC id with stages up to l, from the state st entering
** stage l (parity par, component c) and F_l in fl<c> (defer: in
** odb_f<l>_<c>, kept to the pass's end with lag 1), all but F_l where but
** is set; "0.0" when none. Returns its FP64 instructions: one a product
** (the first a DMUL, the others DFMA), the coefficients being odb_cf's.
*/
static int s2w_partial_but(gen *g, const s2w_state *st, int l, int par,
                           int c, int id, int defer, int but) {
  odb_emit *b = &g->b;
  const erk_terms *t = s2w_lc(g, id);
  int any = 0, fp = 0;
  if (st->acc) {
    int j = s2w_find(st, id);
    if (j >= 0) {
      put(b, "s%d_%d_%d_%d", l, par, c, j);
      any = 1;
    }
  }
  for (int i = 0; i < t->n; ++i) {
    int q = t->idx[i];
    if (q > l || (st->acc && q < l) || (but && q == l)) continue;
    if (any) put(b, " + ");
    put(b, "odb_cf[%d]", s2w_cf(g, id, i));
    if (q == l && defer) put(b, " * odb_f%d_%d", l, c);
    else if (q == l) put(b, " * fl%d", c);
    else put(b, " * s%d_%d_%d_%d", l, par, c, s2w_find(st, q));
    any = 1;
    ++fp;
  }
  if (!any) put(b, "0.0");
  return fp;
}

/* s2w_partial_but with every term */
static int s2w_partial(gen *g, const s2w_state *st, int l, int par, int c,
                       int id, int defer) {
  return s2w_partial_but(g, st, l, par, c, id, defer, 0);
}

/*
** The index in odb_cf of F_l's coefficient in LC id, or -1 where F_l is not
** in it.
*/
static int s2w_own_cf(const gen *g, int l, int id) {
  const erk_terms *t = s2w_lc(g, id);
  for (int i = 0; i < t->n; ++i)
    if (t->idx[i] == l) return s2w_cf(g, id, i);
  return -1;
}

/* Whether LC id has terms besides F_l in the state entering stage l. */
static int s2w_has_other(const gen *g, const s2w_state *st, int l, int id) {
  const erk_terms *t = s2w_lc(g, id);
  if (st->acc && s2w_find(st, id) >= 0) return 1;
  for (int i = 0; i < t->n; ++i)
    if (t->idx[i] < l && !st->acc) return 1;
  return 0;
}

/*
** Y_{l+1}, ynew or the error of stage l's row: "yexpr + a.h * (LC id)"
** (yexpr NULL: no y term). At lag 1, where each stage waits for the one
** before, F_l (just formed) enters last instead: "yexpr + a.h * (terms but
** F_l) + (a.h * odb_cf[k]) * fl<c>", one fused multiply-add from Y_{l+1}
** instead of two, whose factor is the same in every pass (the compiler
** keeps it in registers). Lag 2 keeps one product by h: its stages do not
** wait for each other within a pass, and the factors would take registers
** (DOPRI5 already spills at lag 2).
** Returns its FP64 instructions: the partial sum's, one for h times it
** (a DFMA with y, a DMUL without) and one for the F_l term at lag 1 (its
** factor a.h * odb_cf[k] is the same in every pass, computed once a
** thread, not counted).
*/
static int s2w_lc_term(gen *g, const s2w_state *st, int l, int par, int c,
                       int id, const char *yexpr) {
  odb_emit *b = &g->b;
  int k = g->lag == 1 ? s2w_own_cf(g, l, id) : -1, fp = 0;
  if (yexpr) put(b, "%s + ", yexpr);
  if (k < 0) {
    put(b, "a.h * (");
    fp = s2w_partial(g, st, l, par, c, id, 0) + 1;
    put(b, ")");
    return fp;
  }
  if (s2w_has_other(g, st, l, id)) {
    put(b, "a.h * (");
    fp = s2w_partial_but(g, st, l, par, c, id, 0, 1) + 1;
    put(b, ") + ");
  }
  put(b, "(a.h * odb_cf[%d]) * fl%d", k, c);
  return fp + 1;
}

/*
** A cluster's set-up in k_s2d: the barriers ([left pad, right pad][a
** pass's parity]) initialised and seen by the whole cluster before any
** block sends; the edge thread's side (odb_side: false for none), its own
** barriers, the neighbour's barriers and pad cell (of stage ring 0, slot 0).
*/
static void put_s2w_cluster_setup(gen *g) {
  if (g->cluster <= 1) return;
  put(&g->b, "  __shared__ __align__(8) unsigned long long odb_mb[4];\n"
             "  if (t < 4)\n"
             "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\" :: "
             "\"r\"(odb_smem(odb_mb + t)));\n"
             "  asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: "
             "\"memory\");\n"
             "  odb_cluster_sync();\n"
             "  const bool odb_side = (t == 0 && rank > 0) ||\n"
             "                        (t == ODB_T - 1 && rank < ODB_CL - 1);\n"
             "  const int odb_nb = odb_side ? rank + (t == 0 ? -1 : 1) : rank;\n"
             "  const unsigned odb_mine = odb_smem(odb_mb + (t == 0 ? 0 : 2));\n"
             "  const unsigned odb_xmb = odb_mapa(odb_smem(odb_mb + (t == 0 ? "
             "2 : 0)), odb_nb);\n"
             "  const unsigned odb_xpad = odb_mapa(odb_smem(odb_ring + (t == 0 "
             "? ODB_T + 1 : 0) *\n                                       ODB_K),"
             " odb_nb);\n");
}

/* Before stage 1 of a pass in a cluster: the edge thread waits for the rows
   its neighbour sent at the end of the pass before (none before the
   first pass). */
static void put_s2w_cluster_wait(gen *g) {
  if (g->cluster <= 1) return;
  put(&g->b, "      if (odb_side && ip > it0 + 2) odb_xwait(odb_mine, ip - it0 "
             "- 3);\n");
}

/* The stage rings' slot of the row of Y_{l+1} that pass u stores. */
static int s2w_store_slot(const gen *g, int u, int l) {
  return s2_slot(u, 1, -1 - g->lag * l, 4);
}

/* The end of pass u in a cluster: the rows just stored in the stage rings
   sent to the neighbour's pad cells of the same rows. */
static void put_s2w_cluster_send(gen *g, int u) {
  if (g->cluster <= 1) return;
  put(&g->b, "      if (odb_side) {\n"
             "        const unsigned mb = odb_xmb + 8u * (unsigned)((ip - it0 - 2)"
             " & 1);\n");
  for (int l = 0; l < g->S - 1; ++l) {
    int sl = s2w_store_slot(g, u, l);
    put(&g->b, "        {\n          const double v[ODB_K] = {");
    for (int c = 0; c < g->p->grid_comps; ++c)
      put(&g->b, "%sodb_w%d_%d", c ? ", " : "", l, c);
    put(&g->b, "};\n          odb_xsend(odb_xpad + %d * ODB_TP * ODB_K * 8, "
               "mb, v);\n        }\n", l * 4 + sl);
  }
  put(&g->b, "      }\n");
}

/*
** The stencil of stage l (pass u, ring slot sl of its row): the rows'
** pointers, and the centre column's values: with carry c, the newest c
** rows from registers (the newest is what stage l-1 formed in the last
** pass, the others this stage's own from earlier passes), the rest loaded.
*/
static void put_s2w_in(gen *g, int l, int sl, int K) {
  odb_emit *b = &g->b;
  int carry = g->carry;
  if (l == 0)
    put(b, "          odb_cell_in in = odb_in3(odb_ysm, odb_ysub(ys, 2), "
           "ysl, ys, t);\n");
  else
    put(b, "          odb_cell_in in = odb_in3(odb_ring + %d * 4 * ODB_K * "
           "ODB_TP, %d, %d, %d, t);\n", l - 1, (sl + 3) % 4, sl, (sl + 1) % 4);
  for (int c = 0; c < K; ++c) {
    if (carry >= 1 && l > 0)
      put(b, "          in.vp[%d] = odb_w%d_%d;\n", c, l - 1, c);
    else if (carry >= 1)
      put(b, "          in.vp[%d] = in.pp[%d];\n", c, c);
    if (carry >= 2) put(b, "          in.v0[%d] = odb_k%d_0_%d;\n", c, l, c);
    else put(b, "          in.v0[%d] = in.p0[%d];\n", c, c);
    if (carry >= 3) put(b, "          in.vm[%d] = odb_k%d_m_%d;\n", c, l, c);
    else if (carry >= 1)
      put(b, "          in.vm[%d] = in.pm[%d];\n", c, c);
  }
}

/*
** The state a row carries into stage l+1 (parity par, indented by ind
** spaces), from stage l's state and F_l: fl<c> in the stage (lag 2),
** odb_f<l>_<c> kept to the pass's end (defer, lag 1). Returns its FP64
** instructions (partial sums; copies of F_q cost none).
*/
static int put_s2w_next(gen *g, const s2w_state *st, int l, int par, int K,
                        int defer, int ind) {
  odb_emit *b = &g->b;
  const s2w_state *nx = &st[l + 1];
  int fp = 0;
  odb_emit_indent(b, ind);
  for (int c = 0; c < K; ++c)
    for (int j = 0; j < nx->n; ++j) {
      put(b, "s%d_%d_%d_%d = ", l + 1, par, c, j);
      if (nx->acc) fp += s2w_partial(g, &st[l], l, par, c, nx->item[j], defer);
      else if (nx->item[j] == l && defer) put(b, "odb_f%d_%d", l, c);
      else if (nx->item[j] == l) put(b, "fl%d", c);
      else put(b, "s%d_%d_%d_%d", l, par, c, s2w_find(&st[l], nx->item[j]));
      put(b, ";\n");
    }
  odb_emit_indent(b, -ind);
  return fp;
}

/*
** Stage l of phase u: F_l at row ip - 1 - 2l, then Y_{l+1} there (from
** Y_l's centre and the relative LC ra[l+1], into odb_w<l>, stored at the
** pass's end) and the row's state for stage l+1, or (last stage) its new
** solution. Returns its FP64 instructions a thread (lag 1 without the
** state for stage l+1, put_s2w_defer's).
*/
static double put_s2w_stage(gen *g, const s2w_state *st, int u, int l,
                            int K) {
  odb_emit *b = &g->b;
  double fp = 0;
  int S = g->S, par = g->lag == 2 ? u & 1 : 0, back = 1 + g->lag * l;
  int sl = s2_slot(u, 1, -back, 4);   /* the stage rings' slot of its row */
  put(b, "      {  // stage %d at row ip - %d\n", l, back);
  put(b, "        const odb_idx q = ip - %d;\n", back);
  if (l == 0 || l == S - 1)
    put(b, "        const int ysl = odb_ysub(ys, %d);\n", back);
  put(b, "        {\n");
  put(b, "          double fl[ODB_K];\n");
  put_s2w_in(g, l, sl, K);
  if (s2w_need_f(g, l)) {
    put(b, "          odb_rhs_cell(q, col, a.tl[%d], in, fl);\n", l);
    fp += rkg_cell_fp64(g, g->lag);   /* the cell source sees ODB_LAG */
  }
  else
    put(b, "          for (int c = 0; c < ODB_K; ++c) fl[c] = 0.0;\n");
  for (int c = 0; c < K; ++c) {   /* the centres' rows move on a pass */
    put(b, "          const double fl%d = fl[%d];\n", c, c);
    if (g->carry >= 3)
      put(b, "          odb_k%d_m_%d = in.v0[%d];\n", l, c, c);
    if (g->carry >= 2)
      put(b, "          odb_k%d_0_%d = in.vp[%d];\n", l, c, c);
  }
  if (l < S - 1) {
    for (int c = 0; c < K; ++c) {
      char y0[32];
      snprintf(y0, sizeof y0, "in.v0[%d]", c);
      put(b, "          odb_w%d_%d = ", l, c);
      fp += s2w_lc_term(g, &st[l], l, par, c, l + 1, y0);
      put(b, ";\n");
    }
    if (g->lag == 1)   /* the state for stage l+1 after it has run */
      for (int c = 0; c < K; ++c)
        put(b, "          odb_f%d_%d = fl%d;\n", l, c, c);
    else
      fp += put_s2w_next(g, st, l, par, K, 0, 10);
  } else {   /* the row's results; put_s2w_done stores them */
    put(b, "          const double *yr = odb_ysm + (ysl * ODB_TP + t + 1) * "
           "ODB_K;\n");
    for (int c = 0; c < K; ++c) {
      put(b, "          odb_yv[%d] = yr[%d];\n", c, c);
      if (g->alias)
        put(b, "          odb_yo[%d] = in.v0[%d];\n", c, c);
      else {
        char yv[32];
        snprintf(yv, sizeof yv, "odb_yv[%d]", c);
        put(b, "          odb_yo[%d] = ", c);
        fp += s2w_lc_term(g, &st[l], l, par, c, S, yv);
        put(b, ";\n");
      }
      if (g->plan->has_err) {
        put(b, "          odb_eo[%d] = ", c);
        fp += s2w_lc_term(g, &st[l], l, par, c, S + 1, NULL);
        put(b, ";\n");
      }
    }
    if (g->plan->has_err) {   /* the row's share of the norm, here: fewer
                                 registers live to the pass's end than yv,
                                 yo and eo (measured faster on an H100) */
      put(b, "          odb_nv = 0.0;\n"
             "          for (int c = 0; c < ODB_K; ++c)\n"
             "            odb_nv += odb_sq_scaled(odb_eo[c], odb_yv[c], "
             "odb_yo[c], a.atol, a.rtol);\n");
      fp += K * RKG_FP64_NORM;
    }
    if (g->early_store)   /* ynew's row now (st.global.cs: no alias of
                             the rings, so the loads that follow may pass it) */
      put(b, "          if (own && q >= r0 && q < r1) {\n"
             "            double *dst = a.ynew + (q * ODB_NC + col) * ODB_K;\n"
             "#if ODB_K %% 2 == 0\n"
             "            for (int c = 0; c < ODB_K; c += 2)\n"
             "              __stcs(reinterpret_cast<double2 *>(dst + c), "
             "make_double2(odb_yo[c], odb_yo[c + 1]));\n"
             "#else\n"
             "            for (int c = 0; c < ODB_K; ++c) __stcs(dst + c, "
             "odb_yo[c]);\n"
             "#endif\n%s"
             "          }\n", g->plan->has_err && !g->late_norm
                                    ? "            if (ODB_IN_NORM(q)) "
                                      "acc += odb_nv;\n"
                                    : "");
  }
  put(b, "        }\n      }\n");
  return fp;
}

/*
** Lag 1: the state a row carries from stage l to stage l+1, formed after
** stage l+1 has used the one of the row before (one register set a
** boundary instead of one a pass's parity); for l = S-2 down to 0, so
** that each reads stage l's state before it is replaced. Returns their
** FP64 instructions.
*/
static int put_s2w_defer(gen *g, const s2w_state *st, int K) {
  int fp = 0;
  for (int l = g->S - 2; l >= 0; --l)
    fp += put_s2w_next(g, st, l, 0, K, 1, 6);
  return fp;
}

/*
** The stores of pass u, after all its loads: each stage's row of Y_{l+1}
** (odb_w<l>) into its ring. The compiler cannot tell the y ring's run-time
** slots from the stage rings, so a store among the stages would hold every
** later load of y behind it.
*/
static void put_s2w_stores(gen *g, int u, int K) {
  odb_emit *b = &g->b;
  for (int l = 0; l < g->S - 1; ++l) {
    int sl = s2w_store_slot(g, u, l);
    put(b, "      {\n        double *w = odb_ring + ((%d * 4 + %d) * ODB_TP "
           "+ t + 1) * ODB_K;\n", l, sl);
    for (int c = 0; c < K; ++c)
      put(b, "        w[%d] = odb_w%d_%d;\n", c, l, c);
    put(b, "      }\n");
  }
}

/* The end of a pass: the completed row's new solution and its share of
   the norm (computed by the last stage), after every stage (so that the
   stages form one block for the scheduler). */
static void put_s2w_done(gen *g) {
  odb_emit *b = &g->b;
  if (g->early_store && g->late_norm && g->plan->has_err)
    put(b, "      {\n        const odb_idx q = ip - %d;\n"
           "        if (own && q >= r0 && q < r1 && ODB_IN_NORM(q)) "
           "acc += odb_nv;\n      }\n", 1 + g->lag * (g->S - 1));
  if (g->early_store) return;   /* the last stage stored it */
  put(b, "      {\n        const odb_idx q = ip - %d;\n"
         "        if (own && q >= r0 && q < r1) {\n"
         "          double *dst = a.ynew + (q * ODB_NC + col) * ODB_K;\n"
         "          for (int c = 0; c < ODB_K; ++c) {\n"
         "            dst[c] = odb_yo[c];\n", 1 + g->lag * (g->S - 1));
  put(b, "          }\n");
  if (g->plan->has_err)
    put(b, "          if (ODB_IN_NORM(q)) acc += odb_nv;\n");
  put(b, "        }\n      }\n");
}

/* The kernel k_s2d with skew 2 (its helpers, device/s2d_skew2.cuh, first);
   *pass gets the FP64 instructions of a thread's pass. */
static void gen_s2w_kernel(gen *g, int K, int min_blocks, double *pass) {
  odb_emit *b = &g->b;
  int S = g->S;
  double fp = 0;
  s2w_state st[ODB_GEN_MAX_STAGES];
  s2w_relative(g);
  s2w_states(g, st);
  put(b, "#define ODB_CARRY %d\n#define ODB_STAR %d\n#define ODB_LAG %d\n",
      g->carry, g->star, g->lag);
  odb_emit_cuh(b, &odb_cuh_s2d_skew2, NULL);
  put_s2w_coefs(g);
  put_s2_head(g, min_blocks, "[ODB_YR rows][ODB_TP][ODB_K] of y, then "
              "[stage 1..s-1][4][ODB_TP][ODB_K]");
  put_s2w_cluster_setup(g);
  for (int l = 1; l < S; ++l)
    for (int p = 0; p < g->lag; ++p)
      for (int c = 0; c < K; ++c)
        for (int j = 0; j < st[l].n; ++j)
          put(b, "  double s%d_%d_%d_%d = 0.0;\n", l, p, c, j);
  for (int l = 0; l < S; ++l)
    for (int c = 0; c < K; ++c) {
      if (l < S - 1) put(b, "  double odb_w%d_%d = 0.0;\n", l, c);
      if (g->carry >= 2) put(b, "  double odb_k%d_0_%d = 0.0;\n", l, c);
      if (g->carry >= 3) put(b, "  double odb_k%d_m_%d = 0.0;\n", l, c);
    }
  put(b, "  for (int i = 0; i <= 2 + ODB_PF; ++i) {\n"
         "    odb_fetch_at(a.y, odb_ysm, it0 + i, i, colc, t);\n"
         "    asm volatile(\"cp.async.commit_group;\" ::);\n  }\n"
         "  asm volatile(\"cp.async.wait_group %%0;\" :: \"n\"(ODB_PF));\n"
         "  __syncthreads();\n");
  for (int c = 0; c < K && g->carry >= 2; ++c) {   /* stage 0's first rows */
    put(b, "  odb_k0_0_%d = odb_ysm[(ODB_TP + t + 1) * ODB_K + %d];\n", c, c);
    if (g->carry >= 3)
      put(b, "  odb_k0_m_%d = odb_ysm[(t + 1) * ODB_K + %d];\n", c, c);
  }
  put(b, "  int ys = 2;   // the y ring's slot of row ip\n"
         "  const odb_idx ipe = it1 + %d;\n"
         "  for (odb_idx i0 = it0 + 2; i0 < ipe; i0 += 4) {\n",
      (g->lag - 1) * (S - 1));
  for (int u = 0; u < 4; ++u) {
    put(b, "    {  // pass %d of 4\n      const odb_idx ip = i0 + %d;\n"
           "      if (ip >= ipe) break;\n", u, u);
    put(b, "      double odb_yv[ODB_K], odb_yo[ODB_K], odb_eo[ODB_K], "
           "odb_nv;\n");
    if (g->lag == 1) {   /* stage l uses the row stage l-1 formed now */
      for (int l = 0; l < S - 1; ++l) {
        put(b, "      double");
        for (int c = 0; c < K; ++c)
          put(b, "%s odb_f%d_%d", c ? "," : "", l, c);
        put(b, ";   // F_%d, for stage %d's state\n", l, l + 1);
      }
      for (int l = 0; l < S; ++l) {
        if (l == 1) put_s2w_cluster_wait(g);
        fp += put_s2w_stage(g, st, u, l, K);
      }
      fp += put_s2w_defer(g, st, K);
    } else {   /* stage l uses rows formed in earlier passes */
      for (int l = S - 1; l >= 0; --l) fp += put_s2w_stage(g, st, u, l, K);
    }
    if (u == 0) *pass = fp;   /* every pass the same arithmetic */
    put_s2w_stores(g, u, K);
    put_s2w_cluster_send(g, u);
    put_s2w_done(g);
    put(b, "      {\n        const int yf = ys + ODB_PF + 1 >= ODB_YR ? ys + "
           "ODB_PF + 1 - ODB_YR : ys + ODB_PF + 1;\n"
           "        odb_fetch_at(a.y, odb_ysm, ip + ODB_PF + 1, yf, colc, t);\n"
           "      }\n"
           "      asm volatile(\"cp.async.commit_group;\" ::);\n"
           "      asm volatile(\"cp.async.wait_group %%0;\" :: \"n\"(ODB_PF) : "
           "\"memory\");\n");
    if (g->lag == 1 || !g->star || u % 2 == 1)
      put(b, "      __syncthreads();\n");
    put(b, "      ys = ys + 1 == ODB_YR ? 0 : ys + 1;\n    }\n");
  }
  put_s2_tail(g);
}

/*
** The passes (skew 2; skew 1: phases of R rows) that all threads of the
** grid run, summed over the threads: a block of the chunk [r0, r1) runs
** the rows r0 - s .. r1 + s (whole rows: every sub-strip r0 + hc + s,
** hc the rows a chunk), at skew 2 from row r0 - s + 2 on and (lag - 1)
** (s - 1) rows on, every thread every pass, halo columns and rows, and
** chunks past the grid's end, included.
*/
static double s2_thread_passes(const odb_gen_plan *pl, long NR, long T,
                               long S, long R, long skew, long lag,
                               int whole) {
  long hc = pl->rows;
  double sum = 0;
  if (whole) {
    long p = hc + 2 * S - 2 + (lag - 1) * (S - 1);
    return (double)pl->ntiles * (double)T * (double)(p > 0 ? p : 0);
  }
  for (long c = 0; c < pl->chunks; ++c) {
    long r0 = c * hc, r1 = r0 + hc < NR ? r0 + hc : NR, span = r1 - r0 + 2 * S;
    long p = skew == 2 ? span - 2 + (lag - 1) * (S - 1) : (span + R - 1) / R;
    if (span > 0 && p > 0) sum += (double)pl->strips * (double)T * (double)p;
  }
  return sum;
}

/* See the header. */
long odb_gen_s2d_strips(long NC, long T, long S, long C) {
  long wc = C * T - 2 * S;   /* the columns an inner cluster owns */
  if (NC <= C * T) return C;
  if (wc < 1) return -1;
  return C * (1 + (NC - C * T + wc - 1) / wc);
}

/* See gen_rk_int.h. */
odb_status rkg_stream2d(gen *g, const odb_gen_opts *o) {
  const odb_problem *p = g->p;
  odb_gen_plan *pl = g->plan;
  long S = g->S, T = o->threads, W = T - 2 * S, NR = p->grid_rows;
  long NC = p->grid_cols, K = p->grid_comps, HC, strips, chunks, blocks;
  long R = o->band > 0 ? o->band : 1, skew = o->skew > 0 ? o->skew : 1;
  long C = o->cluster > 0 ? o->cluster : 1;
  /* whole rows: sub-strips (a problem without a grid has NC = 0, refused
     below) */
  long G = skew == 2 && NC > 0 && NC <= T ? T / NC : 0;
  long D3 = skew == 2 ? 4 : R + 2;   /* rings' rows */
  /* star: f reads no diagonal neighbour, so at lag 2 a barrier every
     second pass suffices; ODEBENCH_S2D_SYNC_EACH turns that off (a barrier
     every pass, for comparisons). It takes one more row of y, so that no
     barrier-free pass overwrites by cp.async a row the thread read in the
     pass before */
  int star = skew == 2 && p->grid_star && !getenv("ODEBENCH_S2D_SYNC_EACH");
  long lag = o->lag > 0 ? o->lag : 2;
  /* lag 1: rows ip - S .. ip + ODB_PF + 1, a barrier every pass */
  long YR = skew != 2 ? S + R * (S2_PF + 1) + 2
            : lag == 1 ? S + S2_PF + 2 : 2 * S + S2_PF + 1 + star;
  if (!p->gpu_cell_source || K < 1 || K > 8 || NR < 2 || NC < 2 ||
      NR * NC * K != p->n)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_stream2d: %s is not a 2-D "
                    "grid problem with a cell source (gpu_cell_source, "
                    "rows x cols x comps = n, 1..8 comps)", p->label);
  if (G > 0) W = NC;   /* no halo columns */
  if (W < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: %ld threads per block leave "
                    "no column of their own: a strip needs more than 2 s = "
                    "%ld threads", T, 2 * S);
  if (o->rows < 0 || R > 4)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: rows (%ld) must be positive "
                    "(0: all rows) and the band (%ld) 1..4 rows", o->rows, R);
  if (skew < 1 || skew > 2)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: skew (%ld) must be 1 (a "
                    "barrier a stage) or 2 (a barrier a pass)", skew);
  if (o->carry < 0 || o->carry > 3)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: carry (%d) must be 0..3: "
                    "the stencil's centre rows kept in registers", o->carry);
  if (skew == 1 && o->carry > 0)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: carry %d needs skew 2 (skew "
                    "1 loads every row)", o->carry);
  if (lag < 1 || lag > 2)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: lag (%ld) must be 1 or 2: "
                    "the rows stage l runs behind stage l-1", lag);
  if (lag == 1 && (skew != 2 || !p->grid_star || o->carry < 1))
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: lag 1 needs skew 2, a star "
                    "stencil (grid_star: no diagonal neighbour read) and "
                    "carry 1..3 (the row stage l-1 forms in the same pass "
                    "comes from registers); here skew %ld, %s, carry %d",
                    skew, p->grid_star ? "a star stencil" : "no star stencil",
                    o->carry);
  g->lag = (int)lag;
  g->carry = o->carry;
  g->whole = G > 0;
  g->star = star;
  g->early_store = skew == 2 && o->early_store;
  if (skew == 2 && R != 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: skew 2 takes a band of 1 row "
                    "(band %ld); a band above 1 needs skew 1", R);
  if (C != 1 && C != 2 && C != 4 && C != 8)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: cluster (%ld) must be 1, 2, 4 "
                    "or 8 blocks", C);
  if (C > 1 && (skew != 2 || lag != 1 || G > 0))
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: a cluster of %ld blocks needs "
                    "skew 2 and lag 1 on a grid wider than the block (here "
                    "skew %ld, lag %ld, %ld columns, %ld threads)", C, skew,
                    lag, NC, T);
  g->cluster = (int)C;
  HC = o->rows > 0 && o->rows < NR ? o->rows : NR;
  strips = G > 0 ? 1 : odb_gen_s2d_strips(NC, T, S, C);
  chunks = (NR + HC - 1) / HC;
  blocks = G > 0 ? (chunks + G - 1) / G : strips * chunks;
  if (blocks > 2147483647L)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: %ld blocks are too many; "
                    "give more rows per block", blocks);
  if (G > 0) chunks = blocks * G;   /* the kernel's: every sub-strip one */
  pl->strips = strips;
  pl->cluster = (int)C;
  pl->subs = G > 0 ? (int)G : 1;
  pl->chunks = chunks;
  pl->rows = (NR + chunks - 1) / chunks;   /* the kernel's split: even */
  pl->ntiles = blocks;
  pl->nparts = pl->ntiles;
  pl->tile_w = W;
  pl->tile_h = S;
  pl->scratch[0] = pl->scratch[1] = 0;
  put(&g->b, "#define ODB_S %ld\n#define ODB_K %ld\n"
             "#define ODB_W ((odb_idx)%ld)\n#define ODB_NR ((odb_idx)%ld)\n"
             "#define ODB_NC ((odb_idx)%ld)\n"
             "#define ODB_STRIPS ((odb_idx)%ld)\n#define ODB_PF %d\n"
             "#define ODB_R %ld\n#define ODB_D3 %ld\n#define ODB_YR %ld\n"
             "#define ODB_TP (ODB_T + 2)\n", S, K, W, NR, NC, strips,
      S2_PF, R, D3, YR);
  put(&g->b, "#define ODB_CL %ld\n#define ODB_WC ((odb_idx)%ld)\n", C,
      C * T - 2 * S);
  if (G > 0) put(&g->b, "#define ODB_G ((odb_idx)%ld)\n", G);
  /* the rows whose cells count in the error norm: all of them, or a slab's
     own rows (odb_problem.grid_own0/1: its halo rows are recomputed and
     left out) */
  {
    /* a bound at the grid's edge is no bound: a compare only where a
       slab has halo rows */
    const long o0 = g->p->grid_own0, o1 = g->p->grid_own1;
    const int lo = o1 > o0 && o0 > 0, hi = o1 > o0 && o1 < NR;
    /* with the last stage storing its row (early_store), the compare
       beside that store measured 3% slower for bs3 on the slabs of two
       ranks than the add at the pass's end, after every stage (120.4
       against 116.9 µs a step, BRUSS2D N = 4096 on two H200s; BENCHMARKS.md,
       "Two GPUs: where a BRUSS2D step of the GPU ranks goes"); the add
       order is the same, so the norm is too */
    g->late_norm = (lo || hi) && g->early_store;
    if (lo && hi)
      put(&g->b, "#define ODB_IN_NORM(q) ((q) >= (odb_idx)%ld && (q) < "
                 "(odb_idx)%ld)\n", o0, o1);
    else if (lo || hi)
      put(&g->b, "#define ODB_IN_NORM(q) ((q) %s (odb_idx)%ld)\n",
          lo ? ">=" : "<", lo ? o0 : o1);
    else
      put(&g->b, "#define ODB_IN_NORM(q) true\n");
  }
  double pass = 0, own = 0, fp64;
  if (skew == 2) {
    gen_s2w_kernel(g, (int)K, o->min_blocks, &pass);
    own = pl->has_err ? 1 : 0;   /* acc += the cell's share of the norm */
  } else {
    gen_s2_kernel(g, (int)K, (int)R, o->min_blocks, &pass, &own);
  }
  fp64 = pass * s2_thread_passes(pl, NR, T, S, R, skew, lag, g->whole) +
         own * (double)(NR * NC);
  {
    /* y is read by every block over its strip and rows with their halos
       (whole rows: by each sub-strip over its rows and halo rows) */
    double rv = G > 0 ? (double)(chunks * NC) * (double)(pl->rows + 2 * S) /
                        ((double)NR * (double)NC)
                      : (double)(strips * T) * (double)(NR + chunks * 2 * S) /
                        ((double)NR * (double)NC);
    odb_gen_launch *l = rkg_add_launch(g, "k_s2d", ODB_GEN_ALWAYS,
                                       pl->has_err, rv, 1);
    if (l) {
      l->grid = ODB_GEN_GRID_TILES;
      l->smem = (size_t)((YR + (S - 1) * D3) * K * (T + 2)) * sizeof(double);
      l->fp64 = fp64;
    }
  }
  return ODB_OK;
}
