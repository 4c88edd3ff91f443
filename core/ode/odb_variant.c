/* odb_variant.c - the variant registry and the shared explicit RK pieces. */
#include "odb_status.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "erk_common.h"

#include <string.h>

/*
** Variants defined outside this file: the thesis's PIRK variants
** (variants/pirk_*.c), the parallel ones (variants/par_*.c), the ARKODE peer
** (variants/arkode.c, only with -Dpeers) and the GPU variants (kernels/,
** only with CUDA). They are declared weak so that a build without the
** optional ones still links; the registry lists those present.
*/
#define ODB_PLANNED(name) extern const odb_variant name __attribute__((weak));
ODB_PLANNED(odb_variant_pirk_A)
ODB_PLANNED(odb_variant_pirk_E)
ODB_PLANNED(odb_variant_pirk_D)
ODB_PLANNED(odb_variant_pirk_Dblock)
ODB_PLANNED(odb_variant_pirk_PipeDe2m)
ODB_PLANNED(odb_variant_pirk_PipeDb2m)
ODB_PLANNED(odb_variant_pirk_PipeDb2mt)
ODB_PLANNED(odb_variant_pirk_PipeDb1m)
ODB_PLANNED(odb_variant_pirk_PipeDb1mt)
ODB_PLANNED(odb_variant_pirk_ppDb1m)
ODB_PLANNED(odb_variant_pirk_ppDb1mt)
ODB_PLANNED(odb_variant_par_A)
ODB_PLANNED(odb_variant_par_E)
ODB_PLANNED(odb_variant_par_EAblock)
ODB_PLANNED(odb_variant_par_D)
ODB_PLANNED(odb_variant_par_Dblock)
ODB_PLANNED(odb_variant_par_PipeDe2m)
ODB_PLANNED(odb_variant_par_PipeDb2m)
ODB_PLANNED(odb_variant_par_PipeDb2mt)
ODB_PLANNED(odb_variant_par_PipeDb1m)
ODB_PLANNED(odb_variant_par_PipeDb1mt)
ODB_PLANNED(odb_variant_par_ppDb1m)
ODB_PLANNED(odb_variant_par_ppDb1mt)
ODB_PLANNED(odb_variant_par_PipeDb1myl)
ODB_PLANNED(odb_variant_par_PipeDb1mtyl)
ODB_PLANNED(odb_variant_par_ppDb1myl)
ODB_PLANNED(odb_variant_par_ppDb1mtyl)
ODB_PLANNED(odb_variant_arkode)
/* The GPU variants (kernels/odb_gpu_rk.c), in builds with CUDA. */
ODB_PLANNED(odb_variant_gpu_reference)
ODB_PLANNED(odb_variant_gpu_unfused)
ODB_PLANNED(odb_variant_gpu_trapezoid)
ODB_PLANNED(odb_variant_gpu_multiblock)
ODB_PLANNED(odb_variant_gpu_stream2d)
ODB_PLANNED(odb_variant_gpu_hexagonal)
#undef ODB_PLANNED

/*
** Every variant, in the order "auto" tries them (the first that runs on the
** backend and applies wins). NULL entries are variants this build lacks.
*/
static const odb_variant *const all_variants[] = {
  &odb_variant_fused,
  &odb_variant_plain,
  &odb_variant_pirk_A,
  &odb_variant_pirk_E,
  &odb_variant_pirk_D,
  &odb_variant_pirk_Dblock,
  &odb_variant_pirk_PipeDe2m,
  &odb_variant_pirk_PipeDb2m,
  &odb_variant_pirk_PipeDb2mt,
  &odb_variant_pirk_PipeDb1m,
  &odb_variant_pirk_PipeDb1mt,
  &odb_variant_pirk_ppDb1m,
  &odb_variant_pirk_ppDb1mt,
  &odb_variant_par_A,
  &odb_variant_par_E,
  &odb_variant_par_EAblock,
  &odb_variant_par_D,
  &odb_variant_par_Dblock,
  &odb_variant_par_PipeDe2m,
  &odb_variant_par_PipeDb2m,
  &odb_variant_par_PipeDb2mt,
  &odb_variant_par_PipeDb1m,
  &odb_variant_par_PipeDb1mt,
  &odb_variant_par_ppDb1m,
  &odb_variant_par_ppDb1mt,
  &odb_variant_par_PipeDb1myl,
  &odb_variant_par_PipeDb1mtyl,
  &odb_variant_par_ppDb1myl,
  &odb_variant_par_ppDb1mtyl,
  &odb_variant_arkode,
  &odb_variant_gpu_reference,
  &odb_variant_gpu_unfused,
  &odb_variant_gpu_trapezoid,
  &odb_variant_gpu_multiblock,
  &odb_variant_gpu_stream2d,
  &odb_variant_gpu_hexagonal,
};
#define NALL ((int)(sizeof all_variants / sizeof all_variants[0]))

static const odb_variant *variants[NALL];
static int nvariants = -1;

/* Compacts the present variants once (idempotent, single-threaded init). */
static void variants_init(void) {
  if (nvariants >= 0) return;
  nvariants = 0;
  for (int i = 0; i < NALL; ++i)
    if (all_variants[i]) variants[nvariants++] = all_variants[i];
}

int odb_variant_count(void) {
  variants_init();
  return nvariants;
}

const odb_variant *odb_variant_at(int i) {
  variants_init();
  return i >= 0 && i < nvariants ? variants[i] : NULL;
}

const odb_variant *odb_variant_find(const char *name) {
  variants_init();
  for (int i = 0; name && i < nvariants; ++i)
    if (strcmp(variants[i]->name, name) == 0) return variants[i];
  return NULL;
}

/* Collects the nonzero coefficients of row[0..len) in index order. */
static void terms_from(const double *row, int len, erk_terms *t) {
  t->n = 0;
  for (int i = 0; i < len; ++i)
    if (row[i] != 0.0) {
      t->idx[t->n] = i;
      t->coef[t->n++] = row[i];
    }
}

odb_status erk_plan_make(const odb_method *m, erk_plan *p) {
  double e[ERK_MAX_STAGES];
  if (m->s > ERK_MAX_STAGES)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "method '%s' has %d stages; at most "
                    "%d are supported", m->name, m->s, ERK_MAX_STAGES);
  memset(p, 0, sizeof *p);
  p->s = m->s;
  for (int l = 0; l < m->s; ++l) terms_from(m->A + l * m->s, l, &p->a[l]);
  terms_from(m->b, m->s, &p->b);
  if (m->bhat) {
    for (int i = 0; i < m->s; ++i) e[i] = m->b[i] - m->bhat[i];
    terms_from(e, m->s, &p->e);
  }
  return ODB_OK;
}

/*
** The single-pass forms for up to 8 terms: all streams advance together, so
** the hardware prefetchers see long sequential streams. They sum in the
** same order as the multi-pass fallback ((c0 f0 + c1 f1) + c2 f2) + ...
*/
#define LC_T(q) (c[q] * F[q][k])
#define LC_LOOP(EXPR)                                                       \
  do {                                                                      \
    if (yp)                                                                 \
      for (long k = 0; k < len; ++k) out[k] = yp[k] + h * (EXPR);           \
    else                                                                    \
      for (long k = 0; k < len; ++k) out[k] = h * (EXPR);                   \
  } while (0)

/* Multi-pass form for any number of terms (n >= 1). */
static void lc_passes(double *restrict out, const double *restrict yp,
                      const double *const *Fp, const erk_terms *t, double h,
                      long len) {
  {
    const double *restrict f = Fp[t->idx[0]];
    double c = t->coef[0];
    for (long k = 0; k < len; ++k) out[k] = c * f[k];
  }
  for (int q = 1; q < t->n; ++q) {
    const double *restrict f = Fp[t->idx[q]];
    double c = t->coef[q];
    for (long k = 0; k < len; ++k) out[k] += c * f[k];
  }
  if (yp)
    for (long k = 0; k < len; ++k) out[k] = yp[k] + h * out[k];
  else
    for (long k = 0; k < len; ++k) out[k] = h * out[k];
}

void erk_lc(double *restrict out, const double *restrict yp,
            const double *const *Fp, const erk_terms *t, double h, long len) {
  const double *restrict F[8];
  double c[8];
  if (t->n == 0) {
    for (long k = 0; k < len; ++k) out[k] = yp ? yp[k] : 0.0;
    return;
  }
  if (t->n > 8) {
    lc_passes(out, yp, Fp, t, h, len);
    return;
  }
  for (int q = 0; q < t->n; ++q) {
    F[q] = Fp[t->idx[q]];
    c[q] = t->coef[q];
  }
  switch (t->n) {
  case 1: LC_LOOP(LC_T(0)); break;
  case 2: LC_LOOP(LC_T(0) + LC_T(1)); break;
  case 3: LC_LOOP(LC_T(0) + LC_T(1) + LC_T(2)); break;
  case 4: LC_LOOP(LC_T(0) + LC_T(1) + LC_T(2) + LC_T(3)); break;
  case 5: LC_LOOP(LC_T(0) + LC_T(1) + LC_T(2) + LC_T(3) + LC_T(4)); break;
  case 6:
    LC_LOOP(LC_T(0) + LC_T(1) + LC_T(2) + LC_T(3) + LC_T(4) + LC_T(5));
    break;
  case 7:
    LC_LOOP(LC_T(0) + LC_T(1) + LC_T(2) + LC_T(3) + LC_T(4) + LC_T(5) +
            LC_T(6));
    break;
  default:
    LC_LOOP(LC_T(0) + LC_T(1) + LC_T(2) + LC_T(3) + LC_T(4) + LC_T(5) +
            LC_T(6) + LC_T(7));
    break;
  }
}

void erk_norm_acc(const double *e, const double *y, const double *ynew,
                  long len, double atol, double rtol, double *acc) {
  double sum = *acc;
  for (long k = 0; k < len; ++k) {
    double a = y[k] < 0 ? -y[k] : y[k], b = ynew[k] < 0 ? -ynew[k] : ynew[k];
    double sk = atol + rtol * (a > b ? a : b), r = e[k] / sk;
    sum += r * r;
  }
  *acc = sum;
}
