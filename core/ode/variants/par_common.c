/* par_common.c - team, buffers and error reduction of the parallel variants. */
#include "par_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int par_applies(const char *variant, const odb_method *m, char *why,
                size_t nwhy) {
  if (m->kind != ODB_METHOD_PIRK) {
    snprintf(why, nwhy, "%s runs PIRK correctors only; '%s' is an explicit "
             "RK method", variant, m->name);
    return 0;
  }
  if (m->s > PAR_MAX_STAGES) {
    snprintf(why, nwhy, "%s supports at most %d stages; '%s' has %d",
             variant, PAR_MAX_STAGES, m->name, m->s);
    return 0;
  }
  return 1;
}

/*
** Default tile size: the largest multiple of 8 with (s + ws_extra) B + 2d
** doubles in 90 % of L1 (the block-size model's effective cache, Ch. 8;
** the per-tile working sets WS_2 of Tables 8.1/9.3). The 2d halo counts
** only while it is small against L1 (an unlimited access distance is
** streamed, not cached). At least 8, at most ceil(n/p).
*/
static long block_default(const odb_solver *s, const par_spec *spec, int p) {
  double cap = 0.9 * odb_solver_cache_bytes(s, 1, 32768.0) / sizeof(double);
  double halo = 2.0 * (double)s->problem->d;
  long B, per = (s->n + p - 1) / p;
  if (halo > cap / 2) halo = 0;
  B = (long)((cap - halo) / (s->method->s + spec->ws_extra)) / 8 * 8;
  if (B < 8) B = 8;
  if (B > per) B = per > 0 ? per : 1;
  return B;
}

/* Zeroes [a, b) of each of the s rows of an s x n matrix. */
static void touch_rows(double *mat, int S, long n, long a, long b) {
  for (int i = 0; S > 0 && i < S && a < b; ++i)
    memset(mat + (long)i * n + a, 0, (size_t)(b - a) * sizeof(double));
}

/*
** First touch: thread tid zeroes its slices in the order the step writes
** them (F^(0)/Y^(1), the argument vectors or dEta^(m-1), the other matrix)
** and its own buffer.
*/
static void touch_fn(odb_team *team, int tid, void *arg) {
  par_data *d = arg;
  long a = d->lo[tid], b = d->lo[tid + 1];
  (void)team;
  touch_rows(d->mat[0], d->S, d->n, a, b);
  if (d->Yarg) touch_rows(d->Yarg, d->S, d->n, a, b);
  if (d->deta1) touch_rows(d->deta1, 1, d->n, a, b);
  touch_rows(d->mat[1], d->S, d->n, a, b);
  if (d->loc) memset(d->loc[tid], 0, (size_t)d->loc_len * sizeof(double));
  d->err[tid].v = 0;
}

/* Allocates every buffer of the variant (untouched). */
static odb_status alloc_buffers(par_data *d) {
  long sn = (long)d->S * d->n;
  d->lo = malloc((size_t)(d->p + 1) * sizeof *d->lo);
  d->err = NULL;
  if (posix_memalign((void **)&d->err, 64, (size_t)d->p * sizeof *d->err))
    d->err = NULL;
  d->mat[0] = odb_doubles_alloc(sn);
  d->mat[1] = odb_doubles_alloc(sn);
  if (d->spec->scheme == PAR_FSCHEME)
    d->Yarg = odb_doubles_alloc(sn);
  else
    d->deta1 = odb_doubles_alloc(d->n);
  if (!d->lo || !d->err || !d->mat[0] || !d->mat[1] ||
      !(d->Yarg || d->deta1))
    goto nomem;
  if (d->spec->local) {
    d->loc_len = d->spec->local == 1 ? d->B : (d->n + d->p - 1) / d->p;
    if (d->loc_len < 1) d->loc_len = 1;
    d->loc = calloc((size_t)d->p, sizeof *d->loc);
    if (!d->loc) goto nomem;
    for (int q = 0; q < d->p; ++q)
      if (!(d->loc[q] = odb_doubles_alloc(d->loc_len))) goto nomem;
  }
  return ODB_OK;
nomem:
  return ODB_FAIL(ODB_ERR_NOMEM, "%s: %d x %ld doubles of stage matrices "
                  "for %d threads", d->spec->name, 2 * d->S + 1, d->n, d->p);
}

odb_status par_init(odb_solver *s, const par_spec *spec) {
  par_data *d = calloc(1, sizeof *d);
  odb_status st;
  if (!d) return ODB_FAIL(ODB_ERR_NOMEM, "%s", spec->name);
  s->vdata = d;
  d->spec = spec;
  d->prob = s->problem;
  d->A = s->method->A;
  d->b = s->method->b;
  d->c = s->method->c;
  d->S = s->method->s;
  d->m = s->m;
  d->n = s->n;
  d->atol = s->opts.atol;
  d->rtol = s->opts.rtol;
  d->p = odb_solver_threads(s);
  if (d->m < 1)
    return ODB_FAIL(ODB_ERR_ARG, "%s needs at least 1 corrector step, got "
                    "m = %d", spec->name, d->m);
  if (spec->blocked)
    d->B = s->opts.block > 0 ? s->opts.block : block_default(s, spec, d->p);
  s->block = d->B;
  /* on failure the solver calls par_fini, which frees what exists */
  if ((st = alloc_buffers(d)) != ODB_OK) return st;
  for (int q = 0; q < d->p; ++q) {
    long a, b;
    odb_team_range(d->n, d->p, q, &a, &b);
    d->lo[q] = a;
  }
  d->lo[d->p] = d->n;
  ODB_TRY(odb_team_create(s->ctx, s->ctx ? &s->ctx->topo : NULL, d->p,
                          ODB_BARRIER_FLAGS, &d->team));
  return odb_team_run(d->team, touch_fn, d);
}

void par_fini(odb_solver *s) {
  par_data *d = s->vdata;
  if (!d) return;
  odb_team_destroy(d->team);
  if (d->loc)
    for (int q = 0; q < d->p; ++q) free(d->loc[q]);
  free(d->loc);
  free(d->mat[0]);
  free(d->mat[1]);
  free(d->Yarg);
  free(d->deta1);
  free(d->err);
  free(d->lo);
  free(d);
  s->vdata = NULL;
}

/* Team entry: the variant's kernel on thread tid. */
static void kernel_fn(odb_team *team, int tid, void *arg) {
  par_data *d = arg;
  (void)team;
  d->spec->kernel(d, tid);
}

odb_status par_attempt(odb_solver *s, double h, double *err) {
  par_data *d = s->vdata;
  double sum = 0;
  d->t = s->t;
  d->h = h;
  d->eta = s->y;
  d->ynew = s->ynew;
  ODB_TRY(odb_team_run(d->team, kernel_fn, d));
  for (int q = 0; q < d->p; ++q) sum += d->err[q].v;
  *err = d->n > 0 ? sqrt(sum / (double)d->n) : 0.0;
  return ODB_OK;
}

/* (e / sk)^2 with sk = atol + rtol max(|y|, |ynew|). */
static inline double err_term(const par_data *d, double e, double y,
                              double ynew) {
  double a = fabs(y), b = fabs(ynew);
  double r = e / (d->atol + d->rtol * (a > b ? a : b));
  return r * r;
}

void par_finish_y(par_data *d, int tid) {
  long a, b;
  double acc = 0;
  par_range(d, tid, &a, &b);
  for (long j = a; j < b; ++j) {
    double de = d->ynew[j], y = d->eta[j], yn = y + de;
    d->ynew[j] = yn;
    acc += err_term(d, de - d->deta1[j], y, yn);
  }
  d->err[tid].v = acc;
}

void par_finish_f(par_data *d, int tid, const double *cur,
                  const double *prev) {
  long a, b, n = d->n;
  double acc = 0, h = d->h;
  par_range(d, tid, &a, &b);
  for (long j = a; j < b; ++j) {
    double sm = 0, sm1 = 0, de, de1, y = d->eta[j], yn;
    for (int i = 0; i < d->S; ++i) {
      sm += d->b[i] * cur[i * n + j];
      sm1 += d->b[i] * prev[i * n + j];
    }
    de = h * sm;
    de1 = h * sm1;
    yn = y + de;
    d->ynew[j] = yn;
    acc += err_term(d, de - de1, y, yn);
  }
  d->err[tid].v = acc;
}

void par_yscheme_step(par_data *d, int tid, par_corr_fn corr,
                      par_final_fn fin) {
  const double *src[PAR_MAX_STAGES];
  long a, b;
  par_range(d, tid, &a, &b);
  for (int k = 0; k < d->m; ++k) {
    const double *prev = d->mat[(k + 1) & 1];
    if (k > 0) odb_team_barrier(d->team, tid);
    for (int i = 0; i < d->S; ++i)
      src[i] = k == 0 ? d->eta : par_row((double *)prev, i, d->n);
    corr(d, tid, src, d->mat[k & 1], k == d->m - 1 ? d->deta1 : NULL, a, b);
  }
  odb_team_barrier(d->team, tid);
  fin(d, tid, d->mat[(d->m - 1) & 1], a, b);
  par_finish_y(d, tid);
}
