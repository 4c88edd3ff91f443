/* par_spec_plan.c - ranges, blocks and per-thread programs of the
   specialized parallel PIRK variants (see par_spec.h). */
#include "par_spec.h"

#include <stdlib.h>
#include <string.h>

/* What the program generator tracks for one thread. */
typedef struct gen {
  const psp_data *D;
  const psp_thr *T;
  int q;
  long *f;                 /* rows 1..m+1: computed up to f[r] */
  char *fillL, *fillR, *pubL, *pubR;
  int fillS, pubS;
  long ev;                 /* next event number */
  psp_sink sink;
  void *arg;
} gen;

/* The smaller / larger of two longs. */
static long lmin(long a, long b) { return a < b ? a : b; }
static long lmax(long a, long b) { return a > b ? a : b; }

/*
** Row ranges of thread q (par_spec.h, Ownership): rows 1..m+1, skewed by
** w per row and centred by sigma, thread 0 from 0, thread p-1 to n.
*/
static odb_status plan_ranges(psp_data *D, int q) {
  psp_thr *T = &D->thr[q];
  long a, b, sigma = D->spec->pipelined ? (long)D->m * D->d / 2 : 0;
  odb_team_range(D->n, D->p, q, &a, &b);
  for (int r = 1; r <= D->m + 1; ++r) {
    long sh = (long)(r - 1) * D->w - sigma;
    T->lo[r] = q == 0 ? 0 : a + sh;
    T->hi[r] = q == D->p - 1 ? D->n : b + sh;
    if (T->lo[r] < 0 || T->hi[r] > D->n || T->lo[r] >= T->hi[r])
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: "
                      "thread %d's row %d would be [%ld, %ld) of n = %ld "
                      "(%d threads)", D->spec->name, q, r, T->lo[r],
                      T->hi[r], D->n, D->p);
  }
  for (int r = 1; r <= D->m; ++r) {
    T->elo[r] = lmax(0, T->lo[r] - D->hl);
    T->ehi[r] = lmin(D->n, T->hi[r] + D->hr);
  }
  return ODB_OK;
}

/*
** End of the block of row r that starts at x. PipeDb1m: blocks of B from
** lo_r. pp: the first and the last m blocks of the row have length d (as
** many as fit), the sweep between them blocks of B, its last one short.
*/
static long block_end(const psp_data *D, const psp_thr *T, int r, long x) {
  long lo = T->lo[r], len = T->hi[r] - lo, off = x - lo, d = D->d;
  long head, tail;
  if (!D->spec->pipelined) return lmin(T->hi[r], x + D->B);
  head = lmin(D->m, len / d) * d;
  tail = len - lmin(D->m, (len - head) / d) * d;
  if (off < head || off >= tail) return x + d;
  return lo + lmin(tail, off + D->B);
}

/* Hands one operation to the sink. */
static void emit(gen *g, int kind, int r, long x0, long x1) {
  g->sink(g->arg, kind, r, x0, x1);
}

/* 1 when the next block of row r may be computed (row r-1 far enough). */
static int ready(const gen *g, int r) {
  const psp_thr *T = g->T;
  long x1, need;
  if (g->f[r] >= T->hi[r]) return 0;
  if (r == 1) return 1;
  x1 = block_end(g->D, T, r, g->f[r]);
  need = lmin(T->hi[r - 1], lmin(g->D->n, x1 + g->D->d));
  return g->f[r - 1] >= need;
}

/* Emits a publication of event kind for row r (x0: its number). */
static void publish(gen *g, int kind, int r) {
  emit(g, kind, r, g->ev++, 0);
}

/*
** The fills the next block [x0, x1) of row r needs first: the halos of row
** r-1 it reads (left: from thread q-1, right: from q+1) and, for the new
** solution, s1 past hi_m. Each fill is emitted once, lazily.
*/
static void fills_before(gen *g, int r, long x0, long x1) {
  const psp_data *D = g->D;
  const psp_thr *T = g->T;
  int m = D->m;
  if (r >= 2) {
    long wl = lmax(0, x0 - D->d), wh = lmin(D->n, x1 + D->d);
    if (wl < T->lo[r - 1] && !g->fillL[r - 1]) {
      g->fillL[r - 1] = 1;
      emit(g, PSP_FILL_L, r - 1, 0, 0);
    }
    if (wh > T->hi[r - 1] && !g->fillR[r - 1]) {
      g->fillR[r - 1] = 1;
      emit(g, PSP_FILL_R, r - 1, 0, 0);
    }
  }
  if (r == m + 1 && x1 > T->hi[m] && !g->fillS) {
    g->fillS = 1;
    emit(g, PSP_FILL_S, m, 0, 0);
  }
}

/*
** The publications due after row r reached f[r]: the left edge (first hr
** components) once complete, the right edge (last hl) when the row is, and
** (pp) the first w components of s1 of row m. Emitted at once, before any
** later block can overwrite the edge in Ybar.
*/
static void pubs_after(gen *g, int r) {
  const psp_data *D = g->D;
  const psp_thr *T = g->T;
  long f = g->f[r];
  if (r > D->m) return;
  if (g->q > 0 && !g->pubL[r] && f >= lmin(T->hi[r], T->lo[r] + D->hr)) {
    g->pubL[r] = 1;
    publish(g, PSP_PUB_L, r);
  }
  if (g->q < D->p - 1 && D->hl > 0 && !g->pubR[r] && f == T->hi[r]) {
    g->pubR[r] = 1;
    publish(g, PSP_PUB_R, r);
  }
  if (r == D->m && D->w > 0 && g->q > 0 && !g->pubS &&
      f >= lmin(T->hi[r], T->lo[r] + D->w)) {
    g->pubS = 1;
    publish(g, PSP_PUB_S, r);
  }
}

/* Emits the next block of row r with its fills before and PUBs after. */
static void step(gen *g, int r) {
  long x0 = g->f[r], x1 = block_end(g->D, g->T, r, x0);
  fills_before(g, r, x0, x1);
  emit(g, PSP_COMPUTE, r, x0, x1);
  g->f[r] = x1;
  pubs_after(g, r);
}

/*
** The program: row-major (PipeDb1m) or diagonal passes (pp). Returns 0 when
** no row can advance (cannot happen: row 1 always can, and the first
** unfinished row can once the row above is complete).
*/
static int generate(gen *g) {
  int m = g->D->m;
  if (!g->D->spec->pipelined) {
    for (int r = 1; r <= m + 1; ++r)
      while (g->f[r] < g->T->hi[r]) {
        if (!ready(g, r)) return 0;
        step(g, r);
      }
    return 1;
  }
  for (;;) {
    int moved = 0, done = 1;
    for (int r = 1; r <= m + 1; ++r) {
      if (ready(g, r)) {
        step(g, r);
        moved = 1;
      }
      if (g->f[r] < g->T->hi[r]) done = 0;
    }
    if (done) return 1;
    if (!moved) return 0;
  }
}

/* Assumes psp_plan set thread q's ranges and scratch. */
int psp_program(const psp_data *D, int q, psp_sink sink, void *arg) {
  const psp_thr *T = &D->thr[q];
  size_t rows = (size_t)D->m + 2;
  gen g = { D, T, q, T->gf, T->gflags, T->gflags + rows, T->gflags + 2 * rows,
            T->gflags + 3 * rows, 0, 0, 2, sink, arg };
  memset(T->gflags, 0, 4 * rows);
  for (int r = 1; r <= D->m + 1; ++r) g.f[r] = T->lo[r];
  return generate(&g);
}

/*
** The dry run at init: records the longest block and the event numbers of
** the PUBs (which the neighbours' FILLs wait for).
*/
static void dry_sink(void *arg, int kind, int r, long x0, long x1) {
  psp_thr *T = arg;
  switch (kind) {
  case PSP_COMPUTE:
    if (x1 - x0 > T->Bmax) T->Bmax = x1 - x0;
    break;
  case PSP_PUB_L: T->evL[r] = x0; break;
  case PSP_PUB_R: T->evR[r] = x0; break;
  case PSP_PUB_S: T->evS = x0; break;
  default: break;
  }
  if (x0 + 1 > T->nev && kind >= PSP_PUB_L && kind <= PSP_PUB_S)
    T->nev = x0 + 1;
}

/* Ybar layout, s1 and y_local ranges of thread T (after generate). */
static void plan_layout(psp_data *D, psp_thr *T) {
  int m = D->m;
  long lo = 0, hi = 0;
  T->S = T->Bmax + D->d;
  for (int r = 1; r <= m; ++r) {
    long c0 = (long)(m - r) * T->S + T->elo[r];
    long c1 = (long)(m - r) * T->S + T->ehi[r];
    if (r == 1 || c0 < lo) lo = c0;
    if (r == 1 || c1 > hi) hi = c1;
  }
  T->X0 = lo;
  T->L = hi - lo;
  T->stride = (T->L + 7) / 8 * 8;
  T->s1_lo = T->lo[m];
  T->s1_hi = lmax(T->hi[m], T->hi[m + 1]);
  T->yl_lo = lmin(lmax(0, T->lo[1] - D->d), T->lo[m + 1]);
  T->yl_hi = lmax(lmin(D->n, T->hi[1] + D->d), T->hi[m + 1]);
}

/* Assumes D's sizes, w, hl, hr and B are set and D->thr[q] is zeroed. */
odb_status psp_plan(psp_data *D, int q) {
  psp_thr *T = &D->thr[q];
  size_t rows = (size_t)D->m + 2;
  T->lo = calloc(rows, sizeof *T->lo);
  T->hi = calloc(rows, sizeof *T->hi);
  T->elo = calloc(rows, sizeof *T->elo);
  T->ehi = calloc(rows, sizeof *T->ehi);
  T->evL = calloc(rows, sizeof *T->evL);
  T->evR = calloc(rows, sizeof *T->evR);
  T->gf = calloc(rows, sizeof *T->gf);
  T->gflags = calloc(4 * rows, 1);
  if (!T->lo || !T->hi || !T->elo || !T->ehi || !T->evL || !T->evR ||
      !T->gf || !T->gflags)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: plan of thread %d", D->spec->name,
                    q);
  ODB_TRY(plan_ranges(D, q));
  T->nev = 2;                     /* event 1: y_local ready (yl) */
  T->Bmax = 0;
  if (!psp_program(D, q, dry_sink, T))
    return ODB_FAIL(ODB_ERR_INTERNAL, "%s: thread %d's pipeline cannot "
                    "advance", D->spec->name, q);
  plan_layout(D, T);
  return ODB_OK;
}

/* The message of a halo that the neighbour cannot supply. */
static odb_status too_short(const psp_data *D, int q, int r) {
  return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: thread "
                  "%d's row %d needs more of its neighbour's components "
                  "than the neighbour has (n = %ld, %d threads, d = %ld)",
                  D->spec->name, q, r, D->n, D->p, D->d);
}

/*
** Checks that every halo a thread may fill lies inside the neighbour's row
** and that the neighbour publishes it (a PUB event exists), likewise s1 and
** the y_local halos, and sets E, the events per attempt.
*/
odb_status psp_plan_link(psp_data *D) {
  int m = D->m;
  D->E = 2;
  for (int q = 0; q < D->p; ++q) {
    const psp_thr *T = &D->thr[q], *L = q > 0 ? &D->thr[q - 1] : NULL;
    const psp_thr *R = q < D->p - 1 ? &D->thr[q + 1] : NULL;
    if (T->nev > D->E) D->E = T->nev;
    for (int r = 1; r <= m; ++r) {
      if (L && D->hl > 0 &&
          (!L->evR[r] || lmax(0, T->lo[r] - D->hl) < L->lo[r]))
        return too_short(D, q, r);
      if (R && (!R->evL[r] || T->ehi[r] > R->hi[r] ||
                T->ehi[r] > R->lo[r] + D->hr))
        return too_short(D, q, r);
    }
    if (R && D->w > 0 &&
        (!R->evS || T->hi[m + 1] > R->hi[m] ||
         T->hi[m + 1] > R->lo[m] + D->w))
      return too_short(D, q, m + 1);
    if (D->spec->yl && ((L && T->yl_lo < L->lo[m + 1]) ||
                        (R && T->yl_hi > R->hi[m + 1])))
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant '%s' does not apply: "
                      "thread %d's eta halo reaches past its neighbours (n = "
                      "%ld, %d threads, d = %ld)", D->spec->name, q, D->n,
                      D->p, D->d);
  }
  return ODB_OK;
}

/* Frees a thread record's arrays and buffers (any of them may be NULL). */
void psp_thr_free(psp_thr *T) {
  free(T->lo);
  free(T->hi);
  free(T->elo);
  free(T->ehi);
  free(T->evL);
  free(T->evR);
  free(T->gf);
  free(T->gflags);
  free(T->ybar);
  free(T->edges);
  free(T->s1);
  free(T->Fb);
  free(T->yl[0]);
  free(T->yl[1]);
  memset(T, 0, sizeof *T);
}
