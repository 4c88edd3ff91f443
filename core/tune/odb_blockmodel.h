/* odb_blockmodel.h - the thesis's working-set model: candidate block sizes. */
#ifndef ODB_BLOCKMODEL_H
#define ODB_BLOCKMODEL_H

#include "odb_status.h"
#include "odb_topo.h"

/*
** Kalinnik's working-set model of the tiled PIRK variants (N. Kalinnik,
** "Effizientes Lösen von Anfangswertproblemen gewöhnlicher
** Differentialgleichungssysteme mithilfe von Autotuning-Techniken", PhD
** thesis, University of Bayreuth: Ch. 8.4.2 with Table 8.1 for the
** sequential variants, Ch. 9.4.2 with Tables 9.3/9.4 for the parallel
** ones). A working set is the data one loop iteration references;
** those whose size depends on the block size B are listed per variant as
** linear functions of B, counted in doubles:
**   ws(B, s_i) = (a B + b ceil(n/p) + c d) s_i + e d,
** where s_i is the number of the team's threads sharing one instance of
** cache level Li (the per-thread part is accumulated over them, the halo
** of neighbouring threads in one cache counts once) and a, b, c, e are
** small polynomials in the stages s and corrector steps m. The working set
** of a time step of ppDb1m* uses b = max(B, d) instead of B.
**
** The model assumes inclusive, fully associative LRU caches and uses 90%
** of each (C_eff = 0.9 C) for what it does not count (coefficients,
** scalars, the stack). For every working set w and cache level Li it
** computes LT(w, Li), the largest B whose working set fits C_eff(Li)
** (eqs. 8.1/9.1: ceil(n/p) when none fits), rounds it down to a whole
** cache line of Li, and offers all of them as candidates (Fig. 9.11). The
** sequential "minimum strategy" of Fig. 8.4 (at most two candidates) is
** there too, for comparison with the thesis's Chapter 8 figures.
**
** Choices where the thesis is silent or contradicts itself:
**  - d is the problem's access distance as it reports it, capped at n: a
**    problem with unlimited access distance (CUSP, STARS) has d = n, so no
**    working set with a halo term fits a cache and only the pure tile sets
**    (2B, 3B) place B.
**  - Sequential specialized variants need B >= d and the pipelined ones at
**    least m blocks (B <= floor(n/m)): candidates outside are dropped and d
**    itself is added (the smallest legal size, the thesis's second
**    proposal). Parallel PipeDb1m* store each iterate B + d to the left, so
**    B < d is legal there; parallel pp* use max(B, d) and need B <= n/p.
**  - The candidate set of Fig. 9.11 is the parallel solver's; for the
**    sequential general variants it also gets Fig. 8.4's ts_small = 16 L1
**    lines (128 doubles for 64-byte lines) when the smallest candidate is
**    at least ts_small + 100, the thesis's own heuristic for its sequential
**    solver (small tiles often won there; here on CUSP, where d = n leaves
**    only the 2B set in L1, the best tiles are about 100 components).
**  - Table 9.3 prints (2s + 3) B for PipeDb2m's WS_1 where Table 8.1 has
**    (2s + 2) B: each table is used as printed.
**  - The thesis gives no working sets for parallel EAblock; they are
**    derived from its loop nest (k-l-j-i-jj, a per-thread Y_local): one
**    tile of one target, (s + 3) B; one source pass over a tile, 2B; the
**    final pass eta + h Y_local, 3B. The *yl variants use the sets of the
**    variant without the suffix.
*/

#define ODB_BM_FACTOR    0.9   /* C_eff = 0.9 C */
#define ODB_BM_LINES     16    /* Fig. 8.4's #lines */
#define ODB_BM_MAX_WS    8     /* working sets per variant */
#define ODB_BM_MAX_CANDS 64    /* candidates of one variant */

/* What the working sets depend on. */
typedef struct odb_bm_params {
  long n;        /* system size */
  long d;        /* access distance d(f); n (or more) when unlimited */
  int s;         /* stages of the corrector */
  int m;         /* corrector steps */
  int p;         /* threads of the team (1 for sequential variants) */
} odb_bm_params;

/* One cache level as the model sees it, sizes in doubles. */
typedef struct odb_bm_level {
  int level;     /* 1, 2, 3, ... */
  double cap;    /* C(Li), one instance */
  double eff;    /* C_eff(Li) = factor C(Li) */
  long line;     /* l_i */
  int sharers;   /* s_i: threads of the team under one instance */
} odb_bm_level;

/* What the model knows of one variant. */
typedef struct odb_bm_ws odb_bm_ws;
typedef struct odb_bm_variant {
  const char *name;      /* registry name ("PipeDb2mt", "par_ppDb1mt") */
  int parallel;          /* 1: a par_* variant (Tables 9.3/9.4) */
  int barriers;          /* barriers per corrector step: 0, 1 or 2 */
  int specialized;       /* needs a limited access distance */
  int pipelined;         /* pp*: the corrector steps pipelined over blocks */
  int nws;               /* block-dependent working sets; 0: not tiled */
  const odb_bm_ws *ws;
} odb_bm_variant;

/* The variants the model knows; NULL for any other name. */
const odb_bm_variant *odb_bm_variant_find(const char *name);
int odb_bm_variant_count(void);
const odb_bm_variant *odb_bm_variant_at(int i);

/*
** The cache levels of t (data and unified caches, L1 first) for a team of
** p threads pinned one per core in hwloc's order: s_i = min(cores sharing
** an instance, p), 1 for p = 1. factor 0 means ODB_BM_FACTOR. Returns the
** number written (at most max).
*/
int odb_bm_levels(const odb_topo *t, int p, double factor, odb_bm_level *lv,
                  int max);

/* ceil(n/p): the components of one thread. */
long odb_bm_per_thread(const odb_bm_params *q);
/* Name ("WS_ts", "WS_1") and loop ("time step") of working set w. */
const char *odb_bm_ws_name(const odb_bm_variant *v, int w);
const char *odb_bm_ws_loop(const odb_bm_variant *v, int w);
/* Size in doubles of working set w with block B and s_i sharers. */
double odb_bm_ws_size(const odb_bm_variant *v, int w, const odb_bm_params *q,
                      long B, int si);
/*
** LT(w, C_eff(Li), s_i) of eqs. 8.1/9.1: the largest B in 1..min(n/p,
** C_eff) whose working set fits C_eff(Li); *fits = 0 and ceil(n/p) when
** none does. fits may be NULL.
*/
long odb_bm_lt(const odb_bm_variant *v, int w, const odb_bm_params *q,
               const odb_bm_level *lv, int *fits);
/* 1 when B is a legal block size of v (see the choices above). */
int odb_bm_block_ok(const odb_bm_variant *v, const odb_bm_params *q, long B);
/*
** 1 when v can run the problem at all (thesis 9.3 pre-selection):
** specialized variants need d < n; parallel PipeDb1m* n/p >= d, parallel
** pp* n/p >= (m + 2) d; sequential pp* a legal B with d <= floor(n/m).
** why (may be NULL) receives the reason when 0.
*/
int odb_bm_applies(const odb_bm_variant *v, const odb_bm_params *q, char *why,
                   size_t nwhy);

/* One candidate block size and where it came from. */
typedef struct odb_bm_cand {
  long B;        /* rounded down to a line of its level, legal */
  long lt;       /* LT before rounding */
  int ws;        /* working set index; -1: added by a rule (d, n/p) */
  int level;     /* cache level; 0 for rule candidates */
  int fits;      /* 0: LT's fallback n/p (the set fits nowhere) */
} odb_bm_cand;

/*
** The pre-selected candidates of v (Fig. 9.11): LT rounded down to the
** line of its level for every working set and level, legal ones only,
** each size once (the first origin kept), ascending. An untiled variant
** gets {ceil(n/p)}. Returns the count (at most max).
*/
int odb_bm_candidates(const odb_bm_variant *v, const odb_bm_params *q,
                      const odb_bm_level *lv, int nlv, odb_bm_cand *out,
                      int max);
/*
** The sequential minimum strategy of Fig. 8.4, literally: ts_min = min of
** LT over all working sets and levels (not rounded); add lines C_b(L1)
** (C_b the L1 line in doubles) when ts_min >= lines C_b(L1) + 100; for
** specialized variants add d instead when d >= lines C_b(L1) + 100.
** lines 0 means ODB_BM_LINES. Writes at most 2 sizes (ts_min first);
** returns the count.
*/
int odb_bm_minimum(const odb_bm_variant *v, const odb_bm_params *q,
                   const odb_bm_level *lv, int nlv, int lines, long out[2]);
/* l_min: the smallest line length of the levels, in doubles (>= 1). */
long odb_bm_line_min(const odb_bm_level *lv, int nlv);
/* The halving of Fig. 9.12: floor((B / 2) / lmin) lmin. */
long odb_bm_halve(long B, long lmin);

/* {====== the strategies "model" and "online" (odb_strategy_model.c) */

/*
** Strategy options of "model" and "online" (odb_tune_opts.strategy_opts;
** NULL: all defaults). The space's parameter `block` is searched per
** group of configurations that agree on every other parameter (variant,
** threads): the model's candidates of the group's variant mapped to the
** largest valid block value not above each (the smallest when none is),
** ascending, stopping at the first one slower than the group's best; when
** the smallest candidate was the best, halving it (down to l_min) while
** that keeps winning (Figs. 9.12, 9.13). A variant the model does not
** know with several valid blocks searches all of them ascending the same
** way. "Faster" is the thesis's majority vote: each timed run of a
** configuration is one voter (the thesis's threads each time the same
** step; here one process times repeated runs, or, online, one step), and
** B wins when more than half of its runs beat the group's best median,
** which is exactly its median being lower. Failed and rejected
** configurations are passed over, not taken as a slowdown.
**
** "online" orders the groups by barriers per corrector step, the
** barrier-free ones (specialized first, then tiled, then untiled) before
** the 1-barrier and the 2-barrier ones, and prunes (thesis Fig. 9.6): a
** group of c barriers per corrector step runs only while c m T_bar(p) <
** T_best (the best seconds per step so far; T_bar from `barrier`, else
** measured once per p with the flag barrier). Unlike the thesis it first
** screens every group with its smallest candidate (the one its search
** starts with anyway) and then searches the groups in the same order,
** passing over a tiled group whose screening took more than `hopeless`
** times the best: the thesis's variants were within 45% of each other,
** while here the scalar-f variants (D, PipeDe2m, PipeDb2m) take about
** ten times as long as the best, and each of their steps is paid for.
*/
typedef struct odb_model_report {
  long groups;           /* groups in the space */
  long preselected_out;  /* groups the pre-selection dropped */
  long pruned;           /* groups pruned by the barrier bound */
  long pruned_configs;   /* their valid configurations */
  long hopeless;         /* groups cut short by the hopeless rule */
} odb_model_report;

typedef struct odb_model_opts {
  const odb_topo *topo;  /* NULL: the context's */
  odb_bm_params params;  /* n > 0: these (p per group) instead of the
                            target's solver (tests, synthetic targets) */
  double factor;         /* C_eff factor; 0: ODB_BM_FACTOR */
  int threads;           /* p of parallel variants when the space has no
                            threads parameter; 0: the solver's, else all
                            cores */
  double steps_per_eval; /* time steps one evaluation times; 0: 1 */
  /* online: seconds per barrier episode with p threads; NULL: measured */
  double (*barrier)(void *ud, int p);
  void *barrier_ud;
  double hopeless;       /* online: factor; 0: 2; < 0: off */
  odb_model_report *report;   /* filled when not NULL */
} odb_model_opts;

/* }====== */

#endif
