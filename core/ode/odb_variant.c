/* odb_variant.c - the variant registry and the shared explicit RK pieces. */
#include "odb_status.h"
#include "odb_param.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "erk_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "odb_config.h"

/*
** The variant registry. The CPU variants of core/ode/variants/ are always
** built and are listed here, in the order "auto" tries them (the first
** that runs on the backend and applies wins). Other families register
** theirs with odb_variant_register when they start: the GPU variants
** (gpu/ode/odb_gpu_rk.c, from odb_kernels_register in builds with CUDA).
** The ARKODE peer (variants/arkode.c) is built in with -Dpeers. A build
** without them simply lists fewer. Registration happens while a program starts,
** before variants are looked up from several threads; the table itself is
** guarded by a mutex so that a late registration is still safe.
*/
extern const odb_variant odb_variant_pirk_A;
extern const odb_variant odb_variant_pirk_E;
extern const odb_variant odb_variant_pirk_D;
extern const odb_variant odb_variant_pirk_Dblock;
extern const odb_variant odb_variant_pirk_PipeDe2m;
extern const odb_variant odb_variant_pirk_PipeDb2m;
extern const odb_variant odb_variant_pirk_PipeDb2mt;
extern const odb_variant odb_variant_pirk_PipeDb1m;
extern const odb_variant odb_variant_pirk_PipeDb1mt;
extern const odb_variant odb_variant_pirk_ppDb1m;
extern const odb_variant odb_variant_pirk_ppDb1mt;
extern const odb_variant odb_variant_par_A;
extern const odb_variant odb_variant_par_E;
extern const odb_variant odb_variant_par_EAblock;
extern const odb_variant odb_variant_par_D;
extern const odb_variant odb_variant_par_Dblock;
extern const odb_variant odb_variant_par_PipeDe2m;
extern const odb_variant odb_variant_par_PipeDb2m;
extern const odb_variant odb_variant_par_PipeDb2mt;
extern const odb_variant odb_variant_par_PipeDb1m;
extern const odb_variant odb_variant_par_PipeDb1mt;
extern const odb_variant odb_variant_par_ppDb1m;
extern const odb_variant odb_variant_par_ppDb1mt;
extern const odb_variant odb_variant_par_PipeDb1myl;
extern const odb_variant odb_variant_par_PipeDb1mtyl;
extern const odb_variant odb_variant_par_ppDb1myl;
extern const odb_variant odb_variant_par_ppDb1mtyl;
#if ODB_HAVE_PEERS
extern const odb_variant odb_variant_arkode;
#endif

static const odb_variant *const builtin[] = {
  &odb_variant_pipe,   /* first: auto's pick for explicit RK with a limited d */
  &odb_variant_fused,
  &odb_variant_plain,
  &odb_variant_pipe_threads,
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
};
#define NBUILTIN ((int)(sizeof builtin / sizeof builtin[0]))
/* Room for the built-in variants and every family that registers more. */
#define MAX_VARIANTS 96

static const odb_variant *variants[MAX_VARIANTS];
static int nvariants;
static pthread_mutex_t variants_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t variants_once = PTHREAD_ONCE_INIT;

/* Assumes the name is unique and there is room: the built-in list is. */
static void builtin_init(void) {
  for (int i = 0; i < NBUILTIN; ++i) variants[nvariants++] = builtin[i];
#if ODB_HAVE_PEERS
  variants[nvariants++] = &odb_variant_arkode;
#endif
}

odb_status odb_variant_register(const odb_variant *v) {
  odb_status st = ODB_OK;
  if (!v || !v->name || !v->name[0])
    return ODB_FAIL(ODB_ERR_ARG, "odb_variant_register: a variant needs a "
                    "name");
  pthread_once(&variants_once, builtin_init);
  pthread_mutex_lock(&variants_mu);
  for (int i = 0; i < nvariants; ++i)
    if (strcmp(variants[i]->name, v->name) == 0) {
      if (variants[i] != v)
        st = ODB_FAIL(ODB_ERR_ARG, "odb_variant_register: a variant named "
                      "'%s' is registered already", v->name);
      goto out;   /* the same variant again: nothing to do */
    }
  if (nvariants == MAX_VARIANTS)
    st = ODB_FAIL(ODB_ERR_NOMEM, "odb_variant_register: no room for '%s' "
                  "(%d variants)", v->name, MAX_VARIANTS);
  else
    variants[nvariants++] = v;
out:
  pthread_mutex_unlock(&variants_mu);
  return st;
}

int odb_variant_count(void) {
  int n;
  pthread_once(&variants_once, builtin_init);
  pthread_mutex_lock(&variants_mu);
  n = nvariants;
  pthread_mutex_unlock(&variants_mu);
  return n;
}

/* Entries are never removed, so a pointer read under the lock stays valid. */
const odb_variant *odb_variant_at(int i) {
  const odb_variant *v;
  pthread_once(&variants_once, builtin_init);
  pthread_mutex_lock(&variants_mu);
  v = i >= 0 && i < nvariants ? variants[i] : NULL;
  pthread_mutex_unlock(&variants_mu);
  return v;
}

const odb_variant *odb_variant_find(const char *name) {
  const odb_variant *v = NULL;
  pthread_once(&variants_once, builtin_init);
  pthread_mutex_lock(&variants_mu);
  for (int i = 0; name && i < nvariants && !v; ++i)
    if (strcmp(variants[i]->name, name) == 0) v = variants[i];
  pthread_mutex_unlock(&variants_mu);
  return v;
}

odb_status odb_variant_check_opts(const odb_variant *v,
                                  const odb_param_value *given, int ngiven) {
  char names[512], why[256];
  double value;
  for (int k = 0; k < ngiven; ++k) {
    const char *name = given[k].name ? given[k].name : "(null)";
    int i = odb_param_find(v->opts, v->nopts, given[k].name);
    if (v->nopts <= 0)
      return ODB_FAIL(ODB_ERR_ARG, "variant '%s' takes no option '%s' (it "
                      "declares none)", v->name, name);
    if (i < 0)
      return ODB_FAIL(ODB_ERR_ARG, "variant '%s' has no option '%s' (valid: "
                      "%s)", v->name, name,
                      odb_param_names(v->opts, v->nopts, names, sizeof names));
    if (odb_param_check(&v->opts[i], &given[k], &value, why, sizeof why) !=
        ODB_OK)
      return ODB_FAIL(ODB_ERR_ARG, "variant '%s': option '%s' %s", v->name,
                      name, why);
  }
  return ODB_OK;
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

/* See odb_solver.h. */
double *odb_doubles_alloc(long n) {
  void *p = NULL;
  if (n > 0 && (unsigned long)n > SIZE_MAX / sizeof(double)) return NULL;
  if (posix_memalign(&p, 64, (size_t)(n > 0 ? n : 1) * sizeof(double)))
    return NULL;
  return p;
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

/* See erk_common.h. */
int erk_window_applies(const char *name, const odb_problem *p,
                       const odb_method *m, char *why, size_t nwhy) {
  if (m->kind != ODB_METHOD_ERK || m->s < 2) {
    snprintf(why, nwhy, "%s needs an explicit RK method with 2 or more "
             "stages", name);
    return 0;
  }
  if (p->d >= p->n) {
    snprintf(why, nwhy, "%s needs a limited access distance (d < n); "
             "%s has d = n = %ld", name, p->label, p->n);
    return 0;
  }
  return 1;
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

/* See erk_common.h. */
void erk_plain_bytes(const erk_plan *p, double v, int stage0, double *r,
                     double *w) {
  double rd = 0, wr = 0;
  if (stage0) { rd += v; wr += v; }
  for (int l = 1; l < p->s; ++l) {
    rd += v * (1 + p->a[l].n) + v;
    wr += 2 * v;
  }
  rd += v * (1 + p->b.n);
  wr += v;
  if (p->e.n > 0) {
    rd += v * p->e.n + 3 * v;
    wr += v;
  }
  *r = rd;
  *w = wr;
}
