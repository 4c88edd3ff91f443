/* odb_blockmodel.c - the thesis's working-set model: candidate block sizes. */
#include "odb_blockmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {====== the working sets as data */

/* c + cs s + cm m + csm s m for a corrector of s stages and m steps. */
typedef struct bm_poly {
  short c, cs, cm, csm;
} bm_poly;

/*
** One working set: (B_ B + np_ ceil(n/p) + d_ d) s_i + once d. use_b: the
** B term uses max(B, d).
*/
struct odb_bm_ws {
  const char *name, *loop;
  bm_poly B_, np_, d_, once;
  int use_b;
};

#define P(c, s, m, sm) {c, s, m, sm}
#define Z P(0, 0, 0, 0)
#define WS(name, loop, b, np, d, once) {name, loop, b, np, d, once, 0}

/* Thesis Table 8.1 (sequential, n and d as in the table, s_i = 1). */
static const odb_bm_ws seq_Dblock[] = {
  WS("WS_ts", "time step", P(1, 0, 0, 0), P(3, 2, 0, 0), Z, Z),
  WS("WS_cs", "corrector step", P(1, 0, 0, 0), P(1, 2, 0, 0), Z, Z),
  WS("WS_1", "i iteration", P(1, 0, 0, 0), P(2, 1, 0, 0), P(2, 0, 0, 0), Z),
  WS("WS_2", "j iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_3", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
};
static const odb_bm_ws seq_PipeDb2mt[] = {
  WS("WS_ts", "time step", P(1, 0, 0, 0), P(3, 2, 0, 0), Z, Z),
  WS("WS_cs", "corrector step", P(1, 0, 0, 0), P(1, 2, 0, 0), Z, Z),
  WS("WS_1", "j iteration", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_3", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
};
static const odb_bm_ws seq_PipeDb2m[] = {
  WS("WS_1", "j iteration", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(2, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
};
static const odb_bm_ws seq_PipeDb1m[] = {
  WS("WS_ts", "time step", P(0, -2, 0, 2), P(3, 1, 0, 0), Z, Z),
  WS("WS_cs", "corrector step", P(0, 2, 0, 0), P(1, 1, 0, 0), Z, Z),
  WS("WS_1", "j iteration", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(2, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
};
static const odb_bm_ws seq_PipeDb1mt[] = {
  WS("WS_ts", "time step", P(1, -2, 0, 2), P(3, 1, 0, 0), Z, Z),
  WS("WS_cs", "corrector step", P(1, 2, 0, 0), P(1, 1, 0, 0), Z, Z),
  WS("WS_1", "j iteration", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_3", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
};
static const odb_bm_ws seq_ppDb1m[] = {
  WS("WS_ts", "time step", P(0, -2, 0, 2), P(3, 1, 0, 0), Z, Z),
  WS("WS_ps", "pipelining step", P(3, 0, 1, 3), Z, Z, Z),
  WS("WS_1", "j iteration (k < m-1)", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "j iteration (k = m-1)", P(1, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_3", "i iteration", P(2, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
};
static const odb_bm_ws seq_ppDb1mt[] = {
  WS("WS_ts", "time step", P(1, -2, 0, 2), P(3, 1, 0, 0), Z, Z),
  WS("WS_ps", "pipelining step", P(4, 0, 1, 3), Z, Z, Z),
  WS("WS_1", "j iteration (k < m-1)", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "j iteration (k = m-1)", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_3", "i iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_4", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
};

/* Thesis Table 9.3 (parallel general variants). */
static const odb_bm_ws par_Dblock[] = {
  WS("WS_ts", "time step", P(1, 0, 0, 0), P(3, 2, 0, 0), Z, P(2, 4, 0, 0)),
  WS("WS_cs", "corrector step", P(1, 0, 0, 0), P(1, 2, 0, 0), Z,
     P(2, 4, 0, 0)),
  WS("WS_1", "i iteration", P(1, 0, 0, 0), P(2, 1, 0, 0), Z, P(4, 2, 0, 0)),
  WS("WS_2", "j iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_3", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
  WS("WS_4", "l iteration [jj]", P(3, 0, 0, 0), Z, Z, Z),
};
static const odb_bm_ws par_PipeDb2mt[] = {
  WS("WS_ts", "time step", P(1, 0, 0, 0), P(3, 2, 0, 0), Z, P(2, 4, 0, 0)),
  WS("WS_cs", "corrector step", P(1, 0, 0, 0), P(1, 2, 0, 0), Z,
     P(2, 4, 0, 0)),
  WS("WS_1", "j iteration", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_3", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
  WS("WS_4", "l iteration [jj]", P(3, 0, 0, 0), Z, Z, Z),
};
static const odb_bm_ws par_PipeDb2m[] = {
  WS("WS_1", "j iteration", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(2, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
};
/* Derived from the loop nest (see the header); not in the thesis. */
static const odb_bm_ws par_EAblock[] = {
  WS("WS_1", "j tile of one target", P(3, 1, 0, 0), Z, Z, Z),
  WS("WS_2", "i pass over a tile", P(2, 0, 0, 0), Z, Z, Z),
  WS("WS_3", "final pass over a tile", P(3, 0, 0, 0), Z, Z, Z),
};

/* Thesis Table 9.4 (parallel specialized variants; pp: b = max(B, d)). */
static const odb_bm_ws par_PipeDb1m[] = {
  WS("WS_ts", "time step", P(0, -1, 0, 1), P(3, 1, 0, 0), P(0, 1, 0, 1),
     P(2, 0, 0, 0)),
  WS("WS_cs", "corrector step", P(0, 1, 0, 0), P(1, 1, 0, 0), P(0, 3, 0, 0),
     P(2, 0, 0, 0)),
  WS("WS_1", "j iteration", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(2, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
};
static const odb_bm_ws par_PipeDb1mt[] = {
  WS("WS_ts", "time step", P(1, -1, 0, 1), P(3, 1, 0, 0), P(0, 1, 0, 1),
     P(2, 0, 0, 0)),
  WS("WS_cs", "corrector step", P(1, 1, 0, 0), P(1, 1, 0, 0), P(0, 3, 0, 0),
     P(2, 0, 0, 0)),
  WS("WS_1", "j iteration", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "i iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_3", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
  WS("WS_4", "l iteration [jj]", P(3, 0, 0, 0), Z, Z, Z),
};
static const odb_bm_ws par_ppDb1m[] = {
  {"WS_ts", "time step", P(1, 1, 0, 1), P(3, 1, 0, 0), P(0, -1, 0, 1),
   P(2, 0, 0, 0), 1},
  WS("WS_ps", "pipelining step", P(2, 0, 1, 1), Z, P(3, 0, 0, 2), Z),
  WS("WS_1", "j iteration (k < m-1)", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "j iteration (k = m-1)", P(1, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_3", "i iteration", P(2, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
};
static const odb_bm_ws par_ppDb1mt[] = {
  {"WS_ts", "time step", P(1, 1, 0, 1), P(3, 1, 0, 0), P(0, -1, 0, 1),
   P(2, 0, 0, 0), 1},
  WS("WS_ps", "pipelining step", P(2, 0, 1, 1), Z, P(3, 0, 0, 2), Z),
  WS("WS_1", "j iteration (k < m-1)", P(3, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_2", "j iteration (k = m-1)", P(2, 2, 0, 0), Z, P(0, 2, 0, 0), Z),
  WS("WS_3", "i iteration", P(3, 1, 0, 0), Z, P(2, 0, 0, 0), Z),
  WS("WS_4", "l iteration [(jj)]", P(2, 0, 0, 0), Z, Z, Z),
  WS("WS_5", "l iteration [jj]", P(3, 0, 0, 0), Z, Z, Z),
};

#undef WS
#undef Z
#undef P

#define NWS(a) ((int)(sizeof a / sizeof a[0])), a
/* name, parallel, barriers, specialized, pipelined, nws, ws */
static const odb_bm_variant variants[] = {
  {"A", 0, 0, 0, 0, 0, NULL},
  {"E", 0, 0, 0, 0, 0, NULL},
  {"D", 0, 0, 0, 0, 0, NULL},
  {"PipeDe2m", 0, 0, 0, 0, 0, NULL},
  {"Dblock", 0, 0, 0, 0, NWS(seq_Dblock)},
  {"PipeDb2m", 0, 0, 0, 0, NWS(seq_PipeDb2m)},
  {"PipeDb2mt", 0, 0, 0, 0, NWS(seq_PipeDb2mt)},
  {"PipeDb1m", 0, 0, 1, 0, NWS(seq_PipeDb1m)},
  {"PipeDb1mt", 0, 0, 1, 0, NWS(seq_PipeDb1mt)},
  {"ppDb1m", 0, 0, 1, 1, NWS(seq_ppDb1m)},
  {"ppDb1mt", 0, 0, 1, 1, NWS(seq_ppDb1mt)},
  {"par_A", 1, 2, 0, 0, 0, NULL},
  {"par_E", 1, 2, 0, 0, 0, NULL},
  {"par_EAblock", 1, 2, 0, 0, NWS(par_EAblock)},
  {"par_D", 1, 1, 0, 0, 0, NULL},
  {"par_PipeDe2m", 1, 1, 0, 0, 0, NULL},
  {"par_Dblock", 1, 1, 0, 0, NWS(par_Dblock)},
  {"par_PipeDb2m", 1, 1, 0, 0, NWS(par_PipeDb2m)},
  {"par_PipeDb2mt", 1, 1, 0, 0, NWS(par_PipeDb2mt)},
  {"par_PipeDb1m", 1, 0, 1, 0, NWS(par_PipeDb1m)},
  {"par_PipeDb1mt", 1, 0, 1, 0, NWS(par_PipeDb1mt)},
  {"par_ppDb1m", 1, 0, 1, 1, NWS(par_ppDb1m)},
  {"par_ppDb1mt", 1, 0, 1, 1, NWS(par_ppDb1mt)},
  {"par_PipeDb1myl", 1, 0, 1, 0, NWS(par_PipeDb1m)},
  {"par_PipeDb1mtyl", 1, 0, 1, 0, NWS(par_PipeDb1mt)},
  {"par_ppDb1myl", 1, 0, 1, 1, NWS(par_ppDb1m)},
  {"par_ppDb1mtyl", 1, 0, 1, 1, NWS(par_ppDb1mt)},
};
#undef NWS
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

const odb_bm_variant *odb_bm_variant_find(const char *name) {
  for (int i = 0; name && i < NVARIANTS; ++i)
    if (strcmp(variants[i].name, name) == 0) return &variants[i];
  return NULL;
}

int odb_bm_variant_count(void) { return NVARIANTS; }

const odb_bm_variant *odb_bm_variant_at(int i) {
  return i >= 0 && i < NVARIANTS ? &variants[i] : NULL;
}

/* }====== */

/* {====== sizes */

/* Value of a coefficient polynomial for q's corrector. */
static double poly(bm_poly c, const odb_bm_params *q) {
  return c.c + (double)c.cs * q->s + (double)c.cm * q->m +
         (double)c.csm * q->s * q->m;
}

long odb_bm_per_thread(const odb_bm_params *q) {
  long p = q->p > 1 ? q->p : 1;
  return (q->n + p - 1) / p;
}

/* d capped at n: an unlimited access distance is n. */
static long dist(const odb_bm_params *q) {
  return q->d < q->n ? q->d : q->n;
}

/* Assumes 0 <= w < v->nws. */
const char *odb_bm_ws_name(const odb_bm_variant *v, int w) {
  return v->ws[w].name;
}

const char *odb_bm_ws_loop(const odb_bm_variant *v, int w) {
  return v->ws[w].loop;
}

double odb_bm_ws_size(const odb_bm_variant *v, int w, const odb_bm_params *q,
                      long B, int si) {
  const odb_bm_ws *x = &v->ws[w];
  double d = (double)dist(q), np = (double)odb_bm_per_thread(q);
  double b = x->use_b && (double)B < d ? d : (double)B;
  double per = poly(x->B_, q) * b + poly(x->np_, q) * np + poly(x->d_, q) * d;
  return per * (si > 1 ? si : 1) + poly(x->once, q) * d;
}

/* Assumes ws nondecreasing in B (every coefficient of B is positive). */
long odb_bm_lt(const odb_bm_variant *v, int w, const odb_bm_params *q,
               const odb_bm_level *lv, int *fits) {
  long np = odb_bm_per_thread(q), lo = 1, hi;
  double capb = floor(lv->eff);
  hi = (double)np < capb ? np : (long)capb;
  if (fits) *fits = 0;
  if (hi < 1 || odb_bm_ws_size(v, w, q, 1, lv->sharers) > lv->eff) return np;
  while (lo < hi) {                  /* largest B with ws(B) <= C_eff */
    long mid = lo + (hi - lo + 1) / 2;
    if (odb_bm_ws_size(v, w, q, mid, lv->sharers) <= lv->eff) lo = mid;
    else hi = mid - 1;
  }
  if (fits) *fits = 1;
  return lo;
}

/* }====== */

/* {====== levels and constraints */

int odb_bm_levels(const odb_topo *t, int p, double factor, odb_bm_level *lv,
                  int max) {
  int k = 0;
  if (factor <= 0) factor = ODB_BM_FACTOR;
  for (int i = 0; t && i < t->ncaches && k < max; ++i) {
    const odb_cache_level *c = &t->caches[i];
    long line = c->line / (int)sizeof(double);
    int sh = c->sharing > 1 ? c->sharing : 1;
    lv[k].level = c->level;
    lv[k].cap = (double)c->size / sizeof(double);
    lv[k].eff = factor * lv[k].cap;
    lv[k].line = line > 0 ? line : 1;
    lv[k].sharers = p > 1 ? (sh < p ? sh : p) : 1;
    ++k;
  }
  return k;
}

int odb_bm_block_ok(const odb_bm_variant *v, const odb_bm_params *q, long B) {
  long np = odb_bm_per_thread(q);
  if (B < 1 || B > np) return 0;
  if (!v || v->parallel || !v->specialized) return 1;
  if (B < dist(q)) return 0;
  return !v->pipelined || q->n / B >= q->m;
}

int odb_bm_applies(const odb_bm_variant *v, const odb_bm_params *q, char *why,
                   size_t nwhy) {
  long np = q->n / (q->p > 1 ? q->p : 1), d = dist(q);
  char none[1];
  if (!why) {
    why = none;
    nwhy = sizeof none;
  }
  why[0] = '\0';
  if (!v || !v->specialized) return 1;
  if (d >= q->n) {
    snprintf(why, nwhy, "%s needs a limited access distance", v->name);
    return 0;
  }
  if (v->parallel && !v->pipelined && np < d) {
    snprintf(why, nwhy, "%s needs n/p >= d (%ld < %ld)", v->name, np, d);
    return 0;
  }
  if (v->parallel && v->pipelined && np < (long)(q->m + 2) * d) {
    snprintf(why, nwhy, "%s needs n/p >= (m+2) d (%ld < %ld)", v->name, np,
             (long)(q->m + 2) * d);
    return 0;
  }
  if (!v->parallel && v->pipelined && q->n / (q->m > 0 ? q->m : 1) < d) {
    snprintf(why, nwhy, "%s needs d <= n/m (%ld > %ld)", v->name, d,
             q->n / (q->m > 0 ? q->m : 1));
    return 0;
  }
  return 1;
}

long odb_bm_line_min(const odb_bm_level *lv, int nlv) {
  long l = 0;
  for (int i = 0; i < nlv; ++i)
    if (lv[i].line > 0 && (l == 0 || lv[i].line < l)) l = lv[i].line;
  return l > 0 ? l : 1;
}

long odb_bm_halve(long B, long lmin) {
  if (lmin < 1) lmin = 1;
  return (B / 2) / lmin * lmin;
}

/* }====== */

/* {====== candidates */

/* Adds c unless its size is there already; returns the new count. */
static int add_cand(odb_bm_cand *out, int k, int max, const odb_bm_cand *c) {
  for (int i = 0; i < k; ++i)
    if (out[i].B == c->B) return k;
  if (k < max) out[k++] = *c;
  return k;
}

/* qsort order: ascending size. */
static int cmp_cand(const void *a, const void *b) {
  long x = ((const odb_bm_cand *)a)->B, y = ((const odb_bm_cand *)b)->B;
  return (x > y) - (x < y);
}

int odb_bm_candidates(const odb_bm_variant *v, const odb_bm_params *q,
                      const odb_bm_level *lv, int nlv, odb_bm_cand *out,
                      int max) {
  long np = odb_bm_per_thread(q);
  int k = 0;
  if (!v || v->nws == 0) {
    odb_bm_cand c = {np, np, -1, 0, 0};
    return add_cand(out, 0, max, &c);
  }
  for (int i = 0; i < nlv; ++i)
    for (int w = 0; w < v->nws; ++w) {
      odb_bm_cand c;
      c.lt = odb_bm_lt(v, w, q, &lv[i], &c.fits);
      c.B = c.lt / lv[i].line * lv[i].line;
      c.ws = w;
      c.level = lv[i].level;
      if (odb_bm_block_ok(v, q, c.B)) k = add_cand(out, k, max, &c);
    }
  if (!v->parallel && v->specialized) {
    odb_bm_cand c = {dist(q), dist(q), -1, 0, 1};
    if (odb_bm_block_ok(v, q, c.B)) k = add_cand(out, k, max, &c);
  }
  qsort(out, (size_t)k, sizeof *out, cmp_cand);
  if (!v->parallel && !v->specialized && nlv > 0) {   /* Fig. 8.4's ts_small */
    long small = (long)ODB_BM_LINES * lv[0].line;
    odb_bm_cand c = {small, small, -1, 0, 1};
    if ((k == 0 || out[0].B >= small + 100) && odb_bm_block_ok(v, q, small) &&
        k < max) {
      memmove(out + 1, out, (size_t)k * sizeof *out);
      out[0] = c;
      ++k;
    }
  }
  return k;
}

int odb_bm_minimum(const odb_bm_variant *v, const odb_bm_params *q,
                   const odb_bm_level *lv, int nlv, int lines, long out[2]) {
  long ts_min = -1, small;
  if (lines <= 0) lines = ODB_BM_LINES;
  if (!v || v->nws == 0 || nlv == 0) {
    out[0] = odb_bm_per_thread(q);
    return 1;
  }
  for (int i = 0; i < nlv; ++i)
    for (int w = 0; w < v->nws; ++w) {
      long lt = odb_bm_lt(v, w, q, &lv[i], NULL);
      if (ts_min < 0 || lt < ts_min) ts_min = lt;
    }
  out[0] = ts_min;
  small = (long)lines * lv[0].line;
  if (v->specialized) {
    long d = dist(q);
    out[1] = d >= small + 100 ? d : small;
    return out[1] == ts_min ? 1 : 2;
  }
  if (ts_min < small + 100) return 1;
  out[1] = small;
  return 2;
}

/* }====== */
