/* pirk_common.c - storage, checks and the step end shared by the PIRK
   implementation variants. */
#include "pirk_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows are padded to a multiple of 8 doubles so that each is aligned. */
odb_status pirk_mat_alloc(pirk_mat *M, int s, long n, const char *what) {
  long pitch = (n + 7) & ~7L;
  memset(M, 0, sizeof *M);
  if (s < 1 || s > PIRK_MAX_STAGES)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: %d stages; at most %d are "
                    "supported", what, s, PIRK_MAX_STAGES);
  M->base = odb_doubles_alloc(pitch * s);
  if (!M->base)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: %d x %ld doubles", what, s, n);
  M->s = s;
  M->n = n;
  for (int i = 0; i < s; ++i) M->row[i] = M->base + (size_t)i * pitch;
  return ODB_OK;
}

void pirk_mat_free(pirk_mat *M) {
  free(M->base);
  memset(M, 0, sizeof *M);
}

int pirk_applies_any(const char *variant, const odb_method *m, char *why,
                     size_t nwhy) {
  if (m->s > PIRK_MAX_STAGES) {
    snprintf(why, nwhy, "%s supports at most %d stages; %s has %d", variant,
             PIRK_MAX_STAGES, m->name, m->s);
    return 0;
  }
  return 1;
}

int pirk_applies_corrector(const char *variant, const odb_method *m,
                           char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_PIRK) {
    snprintf(why, nwhy, "%s pipelines corrector steps; an explicit RK method "
             "(%s) has none - use A, E, D, Dblock or fused", variant,
             m->name);
    return 0;
  }
  return pirk_applies_any(variant, m, why, nwhy);
}

odb_status pirk_check(const odb_solver *s, const char *variant) {
  if (s->method->kind == ODB_METHOD_PIRK && s->m < 1)
    return ODB_FAIL(ODB_ERR_ARG, "%s: m (corrector steps) must be at least "
                    "1, got %d", variant, s->m);
  if (s->method->s > PIRK_MAX_STAGES)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: %d stages; at most %d are "
                    "supported", variant, s->method->s, PIRK_MAX_STAGES);
  return ODB_OK;
}

long pirk_block(odb_solver *s) {
  long B = s->opts.block > 0 ? s->opts.block : PIRK_BLOCK_DEFAULT;
  if (B > s->n) B = s->n;
  if (B < 1) B = 1;
  s->block = B;
  return B;
}

void pirk_hf(const odb_problem *p, double tc, const double *src, double h,
             double *out, long j0, long j1) {
  p->rhs(p, tc, src, 0, out, j0, j1);
  for (long j = 0; j < j1 - j0; ++j) out[j] = h * out[j];
}

double pirk_finish(odb_solver *s, const double *deta1, long j0, long j1) {
  const double *eta = s->y;
  double *yn = s->ynew, atol = s->opts.atol, rtol = s->opts.rtol, acc = 0.0;
  for (long j = j0; j < j1; ++j) {
    double de = yn[j], e = de - deta1[j];
    yn[j] = eta[j] + de;
    acc += pirk_sq(e, eta[j], yn[j], atol, rtol);
  }
  return acc;
}

void pirk_y_fini(odb_solver *s) {
  pirk_ydata *d = s->vdata;
  if (!d) return;
  pirk_mat_free(&d->Y);
  free(d->deta1);
  free(d->Fb);
  free(d);
  s->vdata = NULL;
}

/* tgt[i]: the targets of source stage i of an explicit method. */
static void erk_targets(const odb_method *m, pirk_ydata *d) {
  int S = m->s;
  for (int i = 0; i < S; ++i) {
    erk_terms *t = &d->tgt[i];
    t->n = 0;
    for (int l = i + 1; l < S; ++l)
      if (i == 0 || m->A[l * S + i] != 0.0) {
        t->idx[t->n] = l;
        t->coef[t->n++] = m->A[l * S + i];
      }
  }
}

odb_status pirk_y_init(odb_solver *s, const char *variant, int tiled,
                       int erk_ok) {
  pirk_ydata *d = calloc(1, sizeof *d);
  if (!d) return ODB_FAIL(ODB_ERR_NOMEM, "%s: data", variant);
  s->vdata = d;
  s->block = 0;
  if (s->method->kind == ODB_METHOD_ERK && !erk_ok)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s pipelines corrector steps; an "
                    "explicit RK method (%s) has none", variant,
                    s->method->name);
  ODB_TRY(pirk_check(s, variant));
  if (s->method->kind == ODB_METHOD_ERK) {
    ODB_TRY(erk_plan_make(s->method, &d->plan));
    erk_targets(s->method, d);
  }
  ODB_TRY(pirk_mat_alloc(&d->Y, s->method->s, s->n, "Y-scheme matrix"));
  d->deta1 = odb_doubles_alloc(s->n);
  if (!d->deta1) return ODB_FAIL(ODB_ERR_NOMEM, "%s: dEta^(m-1)", variant);
  if (tiled) {
    d->B = pirk_block(s);
    d->Fb = odb_doubles_alloc(d->B);
    if (!d->Fb)
      return ODB_FAIL(ODB_ERR_NOMEM, "%s: F tile of %ld doubles", variant,
                      d->B);
  }
  return ODB_OK;
}

void pirk_y_traffic(const odb_solver *s, int source_outer, double *r,
                    double *w) {
  int S = s->method->s, m = s->m;
  double v = pirk_vbytes(s), rd = 0, wr = 0;
  for (int k = 0; k < m; ++k) {
    int last = k == m - 1;
    if (source_outer) {
      for (int i = 0; i < S; ++i) {
        rd += v * (1 + (i ? S : (k ? 1 : 0)) + (last && i ? 1 : 0));
        wr += v * (S + last);
      }
    } else {
      rd += v * ((k ? S : 1) + (k ? 1 : 0));
      wr += v * (S + last);
    }
  }
  if (source_outer) {
    rd += v * (2.0 * S - 1 + 3);
    wr += v * (S + 1);
  } else {
    rd += v * (S + 2);
    wr += v;
  }
  *r = rd;
  *w = wr;
}
