/* par_spec.h - the specialized parallel PIRK variants of thesis Table 9.2
   (neighbour synchronization, no global barriers) (private). */
#ifndef ODB_PAR_SPEC_H
#define ODB_PAR_SPEC_H

#include "odb_status.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_team.h"

/*
** par_PipeDb1m(t)(yl) and par_ppDb1m(t)(yl) for a limited access distance
** d < n. Notation as in pirk_common.h: l the target stage, i the source
** stage, x a component, r the row of the step's grid: rows r = 1..m are the
** corrector iterates Y^(r) (Y^(0) = eta), row m+1 the new solution
**   Y_l^(r) = eta + h sum_i a_li f(t + c_i h, Y_i^(r-1)),
**   s1 = sum_i b_i f(Y_i^(m-1)) (made by row m),
**   eta_new = eta + h sum_i b_i f(Y_i^(m)),  e = h sum b_i f(Y^(m)) - h s1.
** Component x of row r reads row r-1 only on [x - d, x + d].
**
** ---- Ownership ----------------------------------------------------------
** A persistent team (odb_team, one pinned thread per core; opts.threads,
** 0 = all cores) splits the n components block-wise (odb_team_range: the
** first n mod p threads get ceil(n/p)); thread q owns [a, b). Row r of
** thread q covers [lo_r, hi_r) = [a + (r-1) w - sigma, b + (r-1) w - sigma),
** except that thread 0 starts at 0 and thread p-1 ends at n, so the rows of
** all threads tile [0, n) for every r.
**  - PipeDb1m*: w = 0, sigma = 0: every row is [a, b). Row r needs d
**    components of row r-1 from each neighbour.
**  - ppDb1m*: w = d (the ranges are skewed right by d per row, sigma =
**    floor(m d / 2) centres the skew so that thread 0 and thread p-1 do as
**    much work as the others). Row r on [lo_r, hi_r) needs row r-1 on
**    [lo_r - d, hi_r + d) = [lo_{r-1}, hi_{r-1} + 2d): nothing from the left
**    neighbour and the first 2d components of the right neighbour's row
**    r-1, which that neighbour computes at the start of its pipeline. So a
**    thread never waits for its left neighbour and almost never for its
**    right one. Without the skew, block 0 of row r would need the left
**    neighbour's *last* block of row r-1, which a diagonal schedule
**    computes at its very end: the threads would run one after the other.
**    The skew needs every row of a thread to keep at least 2d components
**    for its left neighbour, also in thread p-1, whose rows shrink by d per
**    row; the thesis's pre-selection rule for the pp variants (9.3),
**    n/p >= (m+2) d, guarantees that (init checks it, and the plan checks
**    every halo against the neighbour's range).
** Every thread computes the new solution (row m+1) on its [lo_{m+1},
** hi_{m+1}), writes it to s->ynew there, and sums (e_x / sk_x)^2 over it;
** the caller adds the p partial sums in thread order after the run (the
** team is idle when attempt returns), so the norm is deterministic for p.
**
** ---- Storage (per thread, first-touched by its thread) -------------------
** One overlapped matrix Ybar of s rows (thesis Table 9.2). Row r's own part
** is stored together with its halo: the extended range [lo_r - hl, hi_r +
** hr) clipped to [0, n), hl = d - w, hr = d + w (for PipeDb1m d on each
** side; for pp 0 and 2d). Component x of Y^(r) lies in column
**   col_r(x) = (m - r) S + x - X0,   S = Bmax + d,
** Bmax the longest block of the thread, X0 the smallest (m - r) S +
** (extended start) over r. So Y^(r) position x shares its column with
** Y^(r-1) position x - S: every iterate is stored S = B + d further left
** than its predecessor instead of the sequential 2B, which is why B < d is
** allowed (thesis 9.2.2). The same argument as in pirk_overlap.h, on the
** extended range: a block [x0, x1) of row r reads row r-1 on
** [x0 - d, x1 + d) and overwrites row r-1 on [x0 - S, x1 - S), which lies
** left of the read window (x1 - x0 <= Bmax), was computed earlier and is
** read by no later block of row r. Left halos of row r only share columns
** with later rows' components that are written after row r+1 has read the
** halo; a right halo of row r overwrites row r-1 on [hi_r - S, hi_r + hr -
** S), so it is filled only after row r is complete (rules below).
** Further: s1 (positions [lo_m, hi_{m+1}), written once per attempt), an F
** buffer of Bmax doubles (the t variants) and small edge buffers.
**
** ---- Synchronization: progress counters, no barriers --------------------
** Each thread runs a fixed program, a sequence of operations produced by a
** generator on the fly (the same at every attempt; a dry run at init
** numbers the events and finds the longest block):
**   COMPUTE r [x0, x1)  one block of row r (rows <= m into Ybar; m+1 the
**                       new solution);
**   PUB_L r / PUB_R r   copy my first hr / last hl components of row r (all
**                       s stages) into my edge buffer of row r, then
**                       publish the event (odb_team_progress_set, release);
**   FILL_L r / FILL_R r wait until the left / right neighbour published its
**                       right / left edge of row r (odb_team_progress_wait,
**                       acquire), then copy it into my Ybar halo of row r;
**   PUB_S / FILL_S      (pp) the first w components of s1 of row m, read in
**                       place from the neighbour's s1 (written once per
**                       attempt).
** Events are numbered per thread in program order; the counter of thread q
** holds epoch * E + (number of its last published event), epoch counting
** the attempts, so counters only grow and need no reset.
** Forward dependency: a block of row r reading row r-1 outside [lo_{r-1},
** hi_{r-1}) comes after the matching FILL, which waits for the neighbour's
** PUB, which comes right after the neighbour's block that completed the
** edge.
** Reverse dependency (the neighbour must not overwrite what I still need):
** I never read the neighbour's Ybar. Its boundary values are copied into an
** edge buffer per row, which is written once per attempt, immediately
** after the block that completes them and therefore before any later block
** of the neighbour overwrites those Ybar columns (such a block needs the
** neighbour's row r-1 computed further than the edge). The only reuse of
** an edge buffer, s1 or y_local is in the next attempt, and odb_team_run
** returns only when every member is done (all reads happened) and starts
** the next run with a release. So no consumer-to-producer lock is needed,
** and a producer never waits for a consumer.
** Local order: a FILL_L of row r comes before the first block of row r+1
** (it may be done at any time: its columns hold nothing live); a FILL_R of
** row r comes after the last block of row r and before the first block of
** row r+1 that reads past hi_r.
** Deadlock freedom: PipeDb1m (row-major program): a thread's waits for row
** r only need the neighbours' PUBs of row r, which need only waits for rows
** < r (induction on r). pp: a thread waits only for its right neighbour,
** and thread p-1 never waits.
**
** ---- Schedules ------------------------------------------------------------
** PipeDb1m(t): row-major (k-j-i-jj-l), blocks of B from lo_r, the last one
** possibly short. ppDb1m(t): a diagonal wavefront (j-k-i-jj-l) built
** greedily: in every pass over the rows r = 1..m+1, each row computes its
** next block if row r-1 is computed far enough (up to the block end + d or
** complete). Blocks: the first and the last m blocks of each row have the
** minimal size d (thesis 9.2.2: B_i/f = d in the initialization and
** finalization phases), the sweep between them uses B (the tuned
** parameter); B < d is allowed, Bmax = max(B, d) (the thesis's b).
**
** ---- yl variants: distributed eta ------------------------------------------
** Each thread keeps y_local, two buffers of its eta window [min(lo_1 - d,
** lo_{m+1}), max(hi_1 + d, hi_{m+1})) clipped to [0, n): its own part
** [lo_{m+1}, hi_{m+1}) (where it writes eta_new) and halos copied from the
** neighbours' own parts (d on each side for PipeDb1m*, thesis Table 9.2;
** (m+1) d from the left for pp*, because of the skew). The solver's y stays
** the authority: the driver accepts a step by swapping s->y and s->ynew
** after attempt returned, and set_state/reset may change s->y at any time.
** So at the start of an attempt every thread compares its own part of s->y
** with its own part of the current buffer (rejected step: equal), then of
** the other buffer (accepted step: it holds eta_new; flip), and copies
** s->y otherwise (new state); then it publishes event 1 and copies its
** halos from the neighbours' own parts after their event 1 (so after their
** own parts are right). The copy of 2d (pp: (m+1) d) components is the
** halo exchange of the thesis; the comparison reads the own part of s->y
** once per attempt (a solver state counter would make it unnecessary).
*/

#define PSP_MAX_STAGES 16
/* components per RHS call in the untiled variants (as in pirk_overlap.h) */
#define PSP_RUN 8

/* What distinguishes the eight variants. */
typedef struct psp_spec {
  const char *name;   /* "par_PipeDb1m" */
  int tiled;          /* t: F buffer of a block, l loop outside jj */
  int pipelined;      /* pp: skewed ranges, diagonal schedule */
  int yl;             /* distributed eta */
} psp_spec;

typedef enum psp_opkind {
  PSP_COMPUTE = 0, PSP_PUB_L, PSP_PUB_R, PSP_PUB_S, PSP_FILL_L, PSP_FILL_R,
  PSP_FILL_S
} psp_opkind;

/*
** Receives the operations of a thread's program in order. COMPUTE: row r
** on [x0, x1). PUB_*: x0 = the event number published. FILL_*: the
** neighbour's event number is in its evL / evR / evS.
*/
typedef void (*psp_sink)(void *arg, int kind, int r, long x0, long x1);

/* Everything of one thread (own cache lines). */
typedef struct psp_thr {
  _Alignas(64) long *lo, *hi;   /* rows 1..m+1 */
  long *elo, *ehi;              /* extended (halo) ranges, rows 1..m */
  long S, X0, L, stride;        /* Ybar layout: col_r(x) = (m-r)S + x - X0 */
  long Bmax;
  double *ybar;                 /* s rows of stride doubles */
  double *edges;                /* rows 1..m: s x hr left, s x hl right */
  double *s1;                   /* positions [s1_lo, s1_hi) */
  long s1_lo, s1_hi;
  double *Fb;                   /* Bmax doubles (t variants) */
  double *yl[2];                /* y_local buffers, positions [yl_lo, yl_hi) */
  long yl_lo, yl_hi;
  int cur;                      /* y_local buffer holding eta */
  long *gf;                     /* generator scratch: rows' progress */
  char *gflags;                 /* generator scratch: 4 (m+2) flags */
  long *evL, *evR, evS;         /* event numbers of the PUBs (0: none) */
  long nev;                     /* events of the program, + 1 */
  double err;                   /* partial sum of (e / sk)^2 */
} psp_thr;

typedef struct psp_data {
  const psp_spec *spec;
  odb_team *team;
  const odb_problem *prob;
  const double *A, *b, *c;
  int S, m, p;
  long n, d, w, hl, hr, B;
  psp_thr *thr;                 /* p */
  double atol, rtol;
  long epoch, E;                /* event base of the attempt: epoch * E */
  /* the attempt in progress */
  double t, h;
  const double *eta;
  double *ynew;
} psp_data;

/* applies(): PIRK correctors with at most PSP_MAX_STAGES stages and d < n. */
int psp_applies(const psp_spec *spec, const odb_problem *p,
                const odb_method *m, char *why, size_t nwhy);
/*
** init(): threads, the n/p conditions (ODB_ERR_UNSUPPORTED with the
** numbers), block size, ranges, programs, buffers, team, first touch.
*/
odb_status psp_init(odb_solver *s, const psp_spec *spec);
void psp_fini(odb_solver *s);
/* attempt(): runs the programs on the team, then adds the error sums. */
odb_status psp_attempt(odb_solver *s, double h, double *err);
/* Bytes per attempt (see par_spec.c); every attempt evaluates all stages,
   so stage0 does not matter. */
void psp_traffic(const odb_solver *s, int stage0, double *rbytes,
                 double *wbytes);

/*
** Defines the variant odb_variant_<NAME> of the spec {TILED, PIPELINED,
** YL}: the variant table has no user data, so applies() and init() are
** small functions that pass the spec on.
*/
#define PSP_VARIANT(NAME, TILED, PIPELINED, YL, DOC)                       \
  static const psp_spec spec_##NAME = { #NAME, TILED, PIPELINED, YL };     \
  static int applies_##NAME(const odb_problem *p, const odb_method *m,     \
                            char *why, size_t nwhy) {                      \
    return psp_applies(&spec_##NAME, p, m, why, nwhy);                     \
  }                                                                        \
  static odb_status init_##NAME(odb_solver *s) {                           \
    return psp_init(s, &spec_##NAME);                                      \
  }                                                                        \
  const odb_variant odb_variant_##NAME = {                                 \
    .name = #NAME, .doc = DOC, .backend = "cpu",                           \
    .applies = applies_##NAME, .init = init_##NAME, .fini = psp_fini,      \
    .attempt = psp_attempt, .traffic = psp_traffic,                        \
  }

/*
** Plans thread q's geometry (par_spec_plan.c): lo/hi, the extended ranges,
** a dry run of its program (Bmax, the event numbers of its PUBs), the Ybar
** layout, the s1 and y_local ranges. Allocates lo..gflags (freed by
** psp_thr_free), not the buffers.
*/
odb_status psp_plan(psp_data *D, int q);
/* Checks the neighbours' halos and events once all threads are planned. */
odb_status psp_plan_link(psp_data *D);
/*
** Runs thread q's program generator, handing every operation to sink (the
** same sequence every time; uses the thread's scratch). Returns 0 when the
** pipeline cannot advance (a bug).
*/
int psp_program(const psp_data *D, int q, psp_sink sink, void *arg);
/* Frees what psp_plan and psp_init allocated for one thread. */
void psp_thr_free(psp_thr *T);

/* Column of component x of row r (1..m) in Ybar. */
static inline long psp_col(const psp_data *D, const psp_thr *T, int r,
                           long x) {
  return (long)(D->m - r) * T->S + x - T->X0;
}

#endif
