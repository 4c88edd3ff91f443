/* test_pirk_pipelined.c - the overlapped and pipelined PIRK variants
   (PipeDb1m, PipeDb1mt, ppDb1m, ppDb1mt) against a literal PIRK step. */
#include "solver_util.h"
#include "tap.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const VARIANTS[] = { "PipeDb1m", "PipeDb1mt", "ppDb1m",
                                        "ppDb1mt" };
#define NVAR 4

/* {====== the reference: (3.26)-(3.29) on full vectors */

/* Workspace of the reference step: Y, F, Fold (s x n each), e (n). */
typedef struct ref_ws {
  long n;
  int S;
  double *Y, *F, *Fold, *e;
} ref_ws;

static int ref_ws_make(ref_ws *w, long n, int S) {
  w->n = n;
  w->S = S;
  w->Y = malloc(sizeof(double) * (size_t)(n * S));
  w->F = malloc(sizeof(double) * (size_t)(n * S));
  w->Fold = malloc(sizeof(double) * (size_t)(n * S));
  w->e = malloc(sizeof(double) * (size_t)n);
  return w->Y && w->F && w->Fold && w->e;
}

static void ref_ws_free(ref_ws *w) {
  free(w->Y);
  free(w->F);
  free(w->Fold);
  free(w->e);
}

/*
** One PIRK step, written as the formulas read: trivial predictor
** Y_l^(0) = eta; m corrector steps Y_l^(k) = eta + h sum_i a_li
** f(t + c_i h, Y_i^(k-1)); eta_new = eta + h sum_i b_i F_i^(m); the estimate
** e = h sum b_i F_i^(m) - h sum b_i F_i^(m-1) in the weighted RMS norm.
*/
static double ref_step(const odb_problem *p, const odb_method *me, int m,
                       double t, double h, const double *eta, double *ynew,
                       double atol, double rtol, ref_ws *w) {
  long n = p->n;
  int S = me->s;
  for (int i = 0; i < S; ++i)
    odb_problem_rhs_full(p, t + me->c[i] * h, eta, w->F + i * n);
  for (int k = 1; k <= m; ++k) {
    double *tmp;
    for (int l = 0; l < S; ++l)
      for (long j = 0; j < n; ++j) {
        double sum = me->A[l * S] * w->F[j];
        for (int i = 1; i < S; ++i) sum += me->A[l * S + i] * w->F[i * n + j];
        w->Y[l * n + j] = eta[j] + h * sum;
      }
    tmp = w->Fold;
    w->Fold = w->F;
    w->F = tmp;
    for (int i = 0; i < S; ++i)
      odb_problem_rhs_full(p, t + me->c[i] * h, w->Y + i * n, w->F + i * n);
  }
  for (long j = 0; j < n; ++j) {
    double sm = me->b[0] * w->F[j], sm1 = me->b[0] * w->Fold[j];
    for (int i = 1; i < S; ++i) {
      sm += me->b[i] * w->F[i * n + j];
      sm1 += me->b[i] * w->Fold[i * n + j];
    }
    w->e[j] = h * sm - h * sm1;
    ynew[j] = eta[j] + h * sm;
  }
  return odb_err_norm(w->e, eta, ynew, n, atol, rtol);
}

/* The reference as a variant, so that the solver's driver can run it. */
static odb_status ref_init(odb_solver *s) {
  ref_ws *w = calloc(1, sizeof *w);
  s->vdata = w;
  if (!w || !ref_ws_make(w, s->n, s->method->s))
    return ODB_FAIL(ODB_ERR_NOMEM, "reference workspace");
  return ODB_OK;
}

static void ref_fini(odb_solver *s) {
  if (s->vdata) ref_ws_free(s->vdata);
  free(s->vdata);
  s->vdata = NULL;
}

static odb_status ref_attempt(odb_solver *s, double h, double *err) {
  *err = ref_step(s->problem, s->method, s->m, s->t, h, s->y, s->ynew,
                  s->opts.atol, s->opts.rtol, s->vdata);
  return ODB_OK;
}

static void ref_traffic(const odb_solver *s, int stage0, double *r,
                        double *w) {
  (void)s; (void)stage0;
  *r = *w = 0;
}

static const odb_variant ref_variant = {
  .name = "reference", .doc = "literal (3.26)-(3.29)", .backend = "cpu",
  .init = ref_init, .fini = ref_fini, .attempt = ref_attempt,
  .traffic = ref_traffic,
};

/*
** A solver that runs the reference: created with a variant that applies,
** whose data is then swapped for the reference's (test only: the registry
** holds no test variants).
*/
static odb_solver *make_ref_solver(odb_ctx *ctx, const odb_problem *p,
                                   const odb_method *me,
                                   const odb_solver_opts *o) {
  odb_solver_opts oo = *o;
  odb_solver *s = NULL;
  oo.block = 0;
  if (odb_solver_create(ctx, p, me, odb_ctx_backend(ctx, "cpu"), "PipeDb1mt",
                        &oo, &s) != ODB_OK)
    return NULL;
  s->variant->fini(s);
  s->variant = &ref_variant;
  if (ref_variant.init(s) != ODB_OK) {
    odb_solver_destroy(s);
    return NULL;
  }
  return s;
}

/* }====== */

/* A random state near bruss2d's initial value (seeded by the run). */
static double *random_state(const odb_problem *p, odb_rng *rng) {
  double *y = malloc(sizeof(double) * (size_t)p->n);
  p->initial(p, y);
  for (long j = 0; j < p->n; ++j) y[j] += 0.2 * (odb_rng_uniform(rng) - 0.5);
  return y;
}

/*
** Allowance for the error estimate besides 1e-13 relative. The estimate
** e = Delta eta^(m) - Delta eta^(m-1) cancels: a one-ulp change of an f
** value (the RHS may round a component differently when it starts a range,
** and A sums h sum b_i (F_i^(m) - F_i^(m-1)) instead) moves e by about
** eps |Delta eta|, so the norm by about eps ||Delta eta / sk||. Returns
** 8 eps ||(yref - y0) / sk||. ynew itself must agree to 1e-13 relative.
*/
static double err_allowance(const double *y0, const double *yref, long n) {
  double *de = malloc(sizeof(double) * (size_t)n), r;
  for (long j = 0; j < n; ++j) de[j] = yref[j] - y0[j];
  r = 8 * DBL_EPSILON * odb_err_norm(de, y0, yref, n, 1e-6, 1e-6);
  free(de);
  return r;
}

/* Smallest B > d with a last block shorter than d (B does not divide n). */
static long partial_block(long n, long d) {
  for (long B = d + 1; B < n; ++B)
    if (n % B != 0 && n % B < d) return B;
  return d + 1;
}

/*
** Variant v with block B and m corrector steps (0: default) from state y0:
** one attempt of 2h (thrown away, as after a rejection), then one of h,
** must equal the reference's step of h in ynew and err, leave s->y as it
** was, and agree with variant A when that is registered. A pipelined
** variant with too few blocks must refuse with the numbers instead.
*/
static void one_case(odb_ctx *ctx, const odb_problem *p, const odb_method *me,
                     const char *v, long B, int m, const double *y0,
                     double t0, double h) {
  odb_solver_opts o = { .rtol = 1e-6, .atol = 1e-6, .block = B, .m = m };
  odb_solver *s = NULL, *a = NULL;
  int mm = m > 0 ? m : me->m_default, pp = v[0] == 'p' && v[1] == 'p';
  long n = p->n;
  double *yref = malloc(sizeof(double) * (size_t)n), eref, e, dy, da = 0;
  double tol_e;
  int ea_ok = 1, e_ok;
  ref_ws w;
  odb_status st;
  st = odb_solver_create(ctx, p, me, odb_ctx_backend(ctx, "cpu"), v, &o, &s);
  if (pp && n / B < mm) {
    char want[96];
    snprintf(want, sizeof want, "needs at least m = %d blocks; n/B = %ld/%ld "
             "= %ld", mm, n, B, n / B);
    tap_ok(st == ODB_ERR_UNSUPPORTED && strstr(odb_last_error(), want),
           "%s %s %s B=%ld m=%d: refused (%s)", p->label, me->name, v, B, mm,
           odb_last_error());
    odb_solver_destroy(s);
    free(yref);
    return;
  }
  if (st != ODB_OK) {
    tap_ok(0, "%s %s %s B=%ld m=%d: created (%s)", p->label, me->name, v, B,
           mm, odb_last_error());
    free(yref);
    return;
  }
  ref_ws_make(&w, n, me->s);
  eref = ref_step(p, me, mm, t0, h, y0, yref, 1e-6, 1e-6, &w);
  odb_solver_set_state(s, t0, y0);
  s->variant->attempt(s, 2 * h, &e);
  s->variant->attempt(s, h, &e);
  dy = rel_maxnorm(s->ynew, yref, n);
  tol_e = err_allowance(y0, yref, n);
  e_ok = fabs(e - eref) <= 1e-13 * fabs(eref) + tol_e;
  if (odb_variant_find("A")) {
    a = make_solver(ctx, p, me->name, "A", &o);
    if (a) {
      double ea;
      odb_solver_set_state(a, t0, y0);
      a->variant->attempt(a, h, &ea);
      da = rel_maxnorm(s->ynew, a->ynew, n);
      ea_ok = fabs(e - ea) <= 1e-13 * fabs(ea) + tol_e;
    } else {
      da = 1;
    }
  }
  tap_ok(dy <= 1e-13 && e_ok && da <= 1e-13 && ea_ok &&
             s->block == B && memcmp(s->y, y0, sizeof(double) * n) == 0,
         "%s %s %s B=%ld m=%d: one step = reference (ynew %.1e, err %.6e vs "
         "%.6e, diff %.1e <= %.1e), = A (ynew %.1e, err %s), y untouched",
         p->label, me->name, v, s->block, mm, dy, e, eref, fabs(e - eref),
         1e-13 * fabs(eref) + tol_e, da, ea_ok ? "ok" : "differs");
  ref_ws_free(&w);
  odb_solver_destroy(a);
  odb_solver_destroy(s);
  free(yref);
}

/*
** Adaptive integration to t = 0.2 from a random state with tolerance tol
** and block B (0: the variants' defaults): the same accepted and rejected
** steps as the reference driven by the same controller, and the same
** solution to 1e-12 (also ppDb1mt against A when that is registered).
*/
static void integrate_case(odb_ctx *ctx, const odb_problem *p,
                           const odb_method *me, const double *y0, double tol,
                           long B) {
  odb_solver_opts o = { .rtol = tol, .atol = tol, .block = B };
  odb_solver *ref = make_ref_solver(ctx, p, me, &o);
  odb_solve_stats a, b;
  if (!ref) {
    tap_ok(0, "%s %s: reference solver (%s)", p->label, me->name,
           odb_last_error());
    return;
  }
  odb_solver_set_state(ref, 0.0, y0);
  odb_solver_integrate(ref, 0.2, &a);
  for (int k = 0; k < NVAR; ++k) {
    odb_solver *s = make_solver(ctx, p, me->name, VARIANTS[k], &o);
    double diff;
    if (!s) {
      tap_ok(B > 0 && VARIANTS[k][0] == 'p' && VARIANTS[k][1] == 'p' &&
                 p->n / B < me->m_default,
             "%s %s %s B=%ld: not created (%s)", p->label, me->name,
             VARIANTS[k], B, odb_last_error());
      continue;
    }
    odb_solver_set_state(s, 0.0, y0);
    odb_solver_integrate(s, 0.2, &b);
    diff = rel_maxnorm(s->y, ref->y, p->n);
    tap_ok(b.status == ODB_OK && a.accepted == b.accepted &&
               a.rejected == b.rejected && diff <= 1e-12 && s->t == ref->t &&
               b.rbytes > 0 && b.wbytes > 0,
           "%s %s %s (B=%ld, tol %g): integrate to 0.2 = reference (%ld/%ld "
           "steps, diff %.1e, %.0f+%.0f bytes)", p->label, me->name,
           VARIANTS[k], s->block, tol, b.accepted, b.rejected, diff, b.rbytes,
           b.wbytes);
    odb_solver_destroy(s);
  }
  if (odb_variant_find("A") && B == 0) {
    odb_solver *s = make_solver(ctx, p, me->name, "A", &o);
    odb_solver *t = make_solver(ctx, p, me->name, "ppDb1mt", &o);
    if (s && t) {
      odb_solver_set_state(s, 0.0, y0);
      odb_solver_set_state(t, 0.0, y0);
      odb_solver_integrate(s, 0.2, &a);
      odb_solver_integrate(t, 0.2, &b);
    }
    tap_ok(s && t && a.accepted == b.accepted && a.rejected == b.rejected &&
               rel_maxnorm(s->y, t->y, p->n) <= 1e-12,
           "%s %s (tol %g): ppDb1mt integrates like A (%ld/%ld steps, diff "
           "%.1e)", p->label, me->name, tol, b.accepted, b.rejected,
           s && t ? rel_maxnorm(s->y, t->y, p->n) : -1.0);
    odb_solver_destroy(s);
    odb_solver_destroy(t);
  }
  odb_solver_destroy(ref);
}

/* Every variant, block size and m for one method on bruss2d(N). */
static void one_method(odb_ctx *ctx, const odb_method *me, long N,
                       odb_rng *rng) {
  odb_problem *p = make_bruss(N);
  long d = p->d, blocks[4] = { d, d + 3, 2 * d, partial_block(p->n, d) };
  int ms[3] = { 0, 2, 3 };
  double *y0 = random_state(p, rng);
  for (int v = 0; v < NVAR; ++v)
    for (int b = 0; b < 4; ++b)
      for (int k = 0; k < 3; ++k)
        one_case(ctx, p, me, VARIANTS[v], blocks[b], ms[k], y0, 0.25,
                 0.05);
  integrate_case(ctx, p, me, y0, 1e-6, 0);
  integrate_case(ctx, p, me, y0, 1e-9, blocks[3]);
  free(y0);
  odb_problem_destroy(p);
}

/*
** bruss2d is autonomous, so it cannot tell whether stage i is evaluated at
** t + c_i h. MEDAKZO (when registered) is not: its boundary value jumps at
** t = 5, and a step from 5 - h/2 puts some stages before and some after
** the jump. Blocks 2 = d, 3 and 7 (short last blocks) on n = 40.
*/
static void nonautonomous(odb_ctx *ctx, const odb_method *me, odb_rng *rng) {
  odb_param_value pv = { "N", 20, NULL };
  odb_problem *p = NULL;
  long blocks[3] = { 2, 3, 7 };
  double *y0, h = 1e-4;
  if (!odb_problem_type_find("medakzo")) return;
  if (odb_problem_create("medakzo", &pv, 1, &p) != ODB_OK) {
    tap_ok(0, "medakzo(N=20) created: %s", odb_last_error());
    return;
  }
  y0 = malloc(sizeof(double) * (size_t)p->n);
  p->initial(p, y0);
  for (long j = 0; j < p->n; ++j) y0[j] += 0.5 * odb_rng_uniform(rng);
  for (int v = 0; v < NVAR; ++v)
    for (int b = 0; b < 3; ++b)
      one_case(ctx, p, me, VARIANTS[v], blocks[b], 0, y0, 5.0 - 0.5 * h, h);
  free(y0);
  odb_problem_destroy(p);
}

/* Refusals: B < d, too few blocks, an explicit RK method, d = n. */
static void refusals(odb_ctx *ctx, const odb_method *me) {
  odb_problem *p = make_bruss(8);
  odb_backend *cpu = odb_ctx_backend(ctx, "cpu");
  odb_solver *s = NULL;
  for (int v = 0; v < NVAR; ++v) {
    odb_solver_opts o = { .block = 15 };
    char want[128];
    odb_status st = odb_solver_create(ctx, p, me, cpu, VARIANTS[v], &o, &s);
    snprintf(want, sizeof want, "block 15 is smaller than the access distance "
             "16; %s needs B >= d", VARIANTS[v]);
    tap_ok(st == ODB_ERR_UNSUPPORTED && strstr(odb_last_error(), want),
           "%s B=15 < d=16 refused: %s", VARIANTS[v], odb_last_error());
    st = odb_solver_create(ctx, p, odb_method_find("dopri5"), cpu,
                           VARIANTS[v], NULL, &s);
    tap_ok(st == ODB_ERR_UNSUPPORTED &&
               strstr(odb_last_error(), "explicit RK method"),
           "%s refuses dopri5: %s", VARIANTS[v], odb_last_error());
    if (odb_problem_type_find("stars")) {
      odb_problem *q = NULL;
      if (odb_problem_create("stars", NULL, 0, &q) == ODB_OK) {
        st = odb_solver_create(ctx, q, me, cpu, VARIANTS[v], NULL, &s);
        tap_ok(st == ODB_ERR_UNSUPPORTED &&
                   strstr(odb_last_error(), "limited access distance (d < n)"),
               "%s refuses stars: %s", VARIANTS[v], odb_last_error());
        odb_problem_destroy(q);
      }
    }
  }
  {
    /* m = 9 on n = 128, d = 16: n/m = 14 < d, no block size can work */
    odb_solver_opts o = { .m = 9 };
    odb_status st = odb_solver_create(ctx, p, me, cpu, "ppDb1m", &o, &s);
    tap_ok(st == ODB_ERR_UNSUPPORTED &&
               strstr(odb_last_error(), "needs at least m = 9 blocks; n/B = "
                      "128/16 = 8 (no block size works"),
           "ppDb1m with m = 9 on n = 128, d = 16 refused: %s",
           odb_last_error());
    o.m = 4;
    o.block = 40;
    st = odb_solver_create(ctx, p, me, cpu, "ppDb1mt", &o, &s);
    tap_ok(st == ODB_ERR_UNSUPPORTED &&
               strstr(odb_last_error(), "ppDb1mt needs at least m = 4 blocks; "
                      "n/B = 128/40 = 3"),
           "ppDb1mt with 3 blocks and m = 4 refused: %s", odb_last_error());
  }
  odb_problem_destroy(p);
}

/*
** Edge cases on one method: m = 1 (no overlap at all), a block of n (one
** block, PipeDb1m only), a block above n (clamped), and the traffic ranking
** (the pipelined variants move fewer bytes than the sweeping ones).
*/
static void edges(odb_ctx *ctx, const odb_method *me, odb_rng *rng) {
  odb_problem *p = make_bruss(8);
  double *y0 = random_state(p, rng), r1, w1, r2, w2;
  odb_solver_opts o = { .block = 1000 };
  odb_solver *s1, *s2;
  for (int v = 0; v < NVAR; ++v)
    one_case(ctx, p, me, VARIANTS[v], 16, 1, y0, 0.25, 0.01);
  one_case(ctx, p, me, "PipeDb1m", 128, 0, y0, 0.25, 0.02);
  one_case(ctx, p, me, "PipeDb1mt", 127, 0, y0, 0.25, 0.02);
  s1 = make_solver(ctx, p, me->name, "PipeDb1mt", &o);
  tap_ok(s1 && s1->block == p->n, "block 1000 > n is clamped to n = %ld",
         s1 ? s1->block : -1L);
  odb_solver_destroy(s1);
  o.block = 16;
  s1 = make_solver(ctx, p, me->name, "PipeDb1m", &o);
  s2 = make_solver(ctx, p, me->name, "ppDb1m", &o);
  if (s1 && s2) {
    s1->variant->traffic(s1, 1, &r1, &w1);
    s2->variant->traffic(s2, 1, &r2, &w2);
    tap_ok(r2 + w2 < r1 + w1 && r2 == p->n * 8.0,
           "traffic: ppDb1m %.0f+%.0f < PipeDb1m %.0f+%.0f bytes", r2, w2, r1,
           w1);
  }
  odb_solver_destroy(s1);
  odb_solver_destroy(s2);
  free(y0);
  odb_problem_destroy(p);
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  odb_ctx *ctx;
  odb_rng rng;
  const odb_method *first = NULL;
  int npirk = 0;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  odb_rng_seed(&rng, co.seed);
  tap_diag("seed %llu", (unsigned long long)co.seed);
  for (int i = 0; i < odb_method_count(); ++i) {
    const odb_method *me = odb_method_at(i);
    if (me->kind != ODB_METHOD_PIRK) continue;
    if (!first) first = me;
    ++npirk;
    one_method(ctx, me, 8, &rng);
    one_method(ctx, me, 13, &rng);
    nonautonomous(ctx, me, &rng);
  }
  tap_ok(npirk > 0, "the method registry holds %d PIRK correctors", npirk);
  if (first) {
    refusals(ctx, first);
    edges(ctx, first, &rng);
  }
  odb_ctx_destroy(ctx);
  return tap_done();
}
