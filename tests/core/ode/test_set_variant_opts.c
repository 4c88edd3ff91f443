/* test_set_variant_opts.c - odb_solver_set_variant_opts: a solver switched
   between steps to a variant with new variant options (the online tuner's
   switch when its space tunes an option such as the distributed variants'
   active ranks): the options checked against the new variant's
   declarations before anything changes, copied, resolved by its init; on
   a refusal the old variant, settings and options come back and the
   integration goes on as if nothing had been tried. The probe variants
   compute plain's step, so every state is compared bit for bit with a
   plain solver's. */
#include "odebench.h"
#include "tap.h"

#include <string.h>

/*
** Two CPU variants that are plain with options: vo_probe declares width
** and mode, and its init refuses width 13 (as a distributed variant's init
** refuses active ranks its problem's layout does not fit); vo_other
** declares depth only.
*/
static const odb_param_decl probe_opts[] = {
  { "width", ODB_PARAM_INT, 0, 1, 64, NULL, "a width" },
  { "mode", ODB_PARAM_ENUM, 0, 0, 1, "slow|fast", "a mode" },
};
static const odb_param_decl other_opts[] = {
  { "depth", ODB_PARAM_INT, 0, 0, 4, NULL, "a depth" },
};
static odb_variant probe, other;
static double seen[2];          /* vo_probe's last resolved width, mode */
static int inits;               /* vo_probe's init calls */

static odb_status probe_init(odb_solver *s) {
  ++inits;
  ODB_TRY(odb_param_resolve("vo_probe", s->variant->opts, s->variant->nopts,
                            s->opts.vopts, s->opts.nvopts, seen));
  if (seen[0] == 13)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "variant 'vo_probe' does not "
                    "apply: width 13 does not fit");
  return odb_variant_plain.init(s);
}

static odb_status other_init(odb_solver *s) {
  double d;
  ODB_TRY(odb_param_resolve("vo_other", s->variant->opts, s->variant->nopts,
                            s->opts.vopts, s->opts.nvopts, &d));
  return odb_variant_plain.init(s);
}

static void register_probes(void) {
  probe = odb_variant_plain;
  probe.name = "vo_probe";
  probe.doc = "plain with two options (test)";
  probe.init = probe_init;
  probe.opts = probe_opts;
  probe.nopts = 2;
  other = odb_variant_plain;
  other.name = "vo_other";
  other.doc = "plain with one option (test)";
  other.init = other_init;
  other.opts = other_opts;
  other.nopts = 1;
  tap_ok(odb_variant_register(&probe) == ODB_OK &&
         odb_variant_register(&other) == ODB_OK, "probes registered");
}

/* A bs3 solver of fixed steps on p of variant with options vals[0..n). */
static odb_status make(odb_ctx *ctx, const odb_problem *p,
                       const char *variant, const odb_param_value *vals,
                       int n, odb_solver **s) {
  odb_solver_opts o;
  memset(&o, 0, sizeof o);
  o.h_fixed = 1e-3;
  o.vopts = vals;
  o.nvopts = n;
  return odb_solver_create(ctx, p, odb_method_find("bs3"),
                           odb_ctx_backend(ctx, "cpu"), variant, &o, s);
}

/* 1 when s's state is ref's bit for bit (both on the host). */
static int same_state(const odb_solver *s, const odb_solver *ref) {
  return s->t == ref->t &&
         memcmp(s->y, ref->y, (size_t)s->n * sizeof(double)) == 0;
}

/* A step of both solvers; 1 when both succeed and agree bit for bit. */
static int step_both(odb_solver *s, odb_solver *ref) {
  odb_solve_stats a, b;
  return odb_solver_step(s, 1e-3, &a) == ODB_OK &&
         odb_solver_step(ref, 1e-3, &b) == ODB_OK && same_state(s, ref);
}

/* The value of option name in s's options, or -1 when absent. */
static double opt_of(const odb_solver *s, const char *name) {
  for (int i = 0; i < s->opts.nvopts; ++i)
    if (strcmp(s->opts.vopts[i].name, name) == 0) return s->opts.vopts[i].num;
  return -1;
}

static void test_switches(odb_ctx *ctx, const odb_problem *p) {
  odb_solver *s = NULL, *ref = NULL;
  char name[8];
  odb_param_value vals[2] = { { name, 8, NULL }, { "mode", 0, "fast" } };
  odb_param_value w16 = { "width", 16, NULL }, w13 = { "width", 13, NULL };
  odb_param_value w65 = { "width", 65, NULL }, d2 = { "depth", 2, NULL };
  const odb_param_value *kept;
  double hn;
  int n0;
  strcpy(name, "width");
  if (make(ctx, p, "vo_probe", vals, 2, &s) != ODB_OK ||
      make(ctx, p, "plain", NULL, 0, &ref) != ODB_OK) {
    tap_ok(0, "solvers: %s", odb_last_error());
    goto done;
  }
  tap_ok(step_both(s, ref) && seen[0] == 8 && seen[1] == 1,
         "vo_probe width 8 mode fast takes plain's step");

  /* the same variant with new options: init resolves them */
  n0 = inits;
  s->h_next = 0.25;
  tap_ok(odb_solver_set_variant_opts(s, &probe, 32, 0, &w16, 1) == ODB_OK &&
         s->variant == &probe && s->opts.block == 32 && inits == n0 + 1 &&
         seen[0] == 16 && seen[1] == 0 && s->opts.nvopts == 1 &&
         opt_of(s, "width") == 16 && s->h_next == 0.25 && same_state(s, ref),
         "new options on the same variant: width 16, mode slow (the "
         "default); state, time and proposed step kept");
  tap_ok(s->opts.vopts != &w16 && step_both(s, ref),
         "the solver keeps its own copy; the next step is plain's");

  /* s's own list given back (the copy is made before the old one goes) */
  kept = s->opts.vopts;
  tap_ok(odb_solver_set_variant_opts(s, &probe, 0, 0, s->opts.vopts,
                                     s->opts.nvopts) == ODB_OK &&
         s->opts.vopts != kept && opt_of(s, "width") == 16 &&
         seen[0] == 16 && s->opts.block == 0,
         "s's own options given again: copied, then the old block freed");

  /* refused before anything changes: the init is not even called */
  n0 = inits;
  kept = s->opts.vopts;
  tap_ok(odb_solver_set_variant_opts(s, &probe, 64, 2, &w65, 1) ==
         ODB_ERR_ARG && strcmp(odb_last_error(), "variant 'vo_probe': "
         "option 'width' must be in 1..64, got 65") == 0 && inits == n0 &&
         s->opts.vopts == kept && s->opts.block == 0 && s->opts.threads == 0,
         "a value out of range: %s; nothing changed", odb_last_error());
  tap_ok(odb_solver_set_variant_opts(s, &odb_variant_plain, 0, 0, &w16, 1) ==
         ODB_ERR_ARG && strcmp(odb_last_error(), "variant 'plain' takes no "
         "option 'width' (it declares none)") == 0 && s->variant == &probe &&
         s->opts.vopts == kept,
         "an option the new variant does not declare: %s", odb_last_error());
  tap_ok(odb_solver_set_variant_opts(s, &other, 0, 0, &w16, 1) ==
         ODB_ERR_ARG && strcmp(odb_last_error(), "variant 'vo_other' has no "
         "option 'width' (valid: depth)") == 0 && s->variant == &probe,
         "an option another variant declares: %s", odb_last_error());
  tap_ok(odb_solver_set_variant_opts(s, &probe, 0, 0, NULL, 2) ==
         ODB_ERR_ARG && strstr(odb_last_error(), "2 given without a list") &&
         s->opts.vopts == kept,
         "a count without a list: %s", odb_last_error());
  tap_ok(odb_solver_set_variant_opts(s, NULL, 0, 0, NULL, 0) == ODB_ERR_ARG &&
         odb_solver_set_variant_opts(s, &probe, -1, 0, NULL, 0) ==
         ODB_ERR_ARG && s->variant == &probe && s->opts.vopts == kept,
         "no variant, a negative block: refused");
  tap_ok(step_both(s, ref), "after the refusals the step is plain's");

  /* the new variant's init refuses: the old one comes back, options too */
  n0 = inits;
  tap_ok(odb_solver_set_variant_opts(s, &probe, 128, 0, &w13, 1) ==
         ODB_ERR_UNSUPPORTED && strcmp(odb_last_error(), "variant 'vo_probe' "
         "does not apply: width 13 does not fit") == 0 &&
         inits == n0 + 2 && s->variant == &probe && s->opts.block == 0 &&
         s->opts.vopts == kept && opt_of(s, "width") == 16 && seen[0] == 16,
         "an init refusal rolls back: %s; width 16 and block 0 again "
         "(init called for 13, then for 16)", odb_last_error());
  tap_ok(step_both(s, ref), "the rolled-back solver steps as plain");

  /* to another variant with its own option, then to none */
  hn = s->h_next;
  tap_ok(odb_solver_set_variant_opts(s, &other, 0, 0, &d2, 1) == ODB_OK &&
         s->variant == &other && s->opts.nvopts == 1 &&
         opt_of(s, "depth") == 2 && opt_of(s, "width") == -1 &&
         s->h_next == hn && step_both(s, ref),
         "vo_other depth 2: its options replace vo_probe's");
  tap_ok(odb_solver_set_variant_opts(s, &odb_variant_plain, 0, 0, NULL, 0) ==
         ODB_OK && s->variant == &odb_variant_plain && s->opts.nvopts == 0 &&
         s->opts.vopts == NULL && step_both(s, ref),
         "plain with none: no options left");

  /* a rollback onto a variant without options keeps none */
  tap_ok(odb_solver_set_variant_opts(s, &probe, 0, 0, &w13, 1) ==
         ODB_ERR_UNSUPPORTED && s->variant == &odb_variant_plain &&
         s->opts.nvopts == 0 && s->opts.vopts == NULL && step_both(s, ref),
         "refused from plain: plain again with no options");

  /* set_variant_to keeps the options: vo_probe must take them */
  tap_ok(odb_solver_set_variant_opts(s, &probe, 0, 0, vals, 2) == ODB_OK &&
         odb_solver_set_variant_to(s, &other, 0, 0) == ODB_ERR_ARG &&
         strcmp(odb_last_error(), "variant 'vo_other' has no option 'width' "
         "(valid: depth)") == 0 && s->variant == &probe &&
         opt_of(s, "width") == 8 && step_both(s, ref),
         "set_variant_to keeps the options and refuses a variant that does "
         "not take them: %s", odb_last_error());
done:
  odb_solver_destroy(s);
  odb_solver_destroy(ref);
}

int main(void) {
  odb_ctx_opts co = { .seed = 1 };
  odb_ctx *ctx = NULL;
  odb_problem *p = NULL;
  odb_param_value pv = { "N", 4, NULL };
  if (odb_ctx_create(&co, &ctx) != ODB_OK ||
      odb_problem_create("bruss2d", &pv, 1, &p) != ODB_OK) {
    tap_ok(0, "context and problem: %s", odb_last_error());
    return tap_done();
  }
  register_probes();
  test_switches(ctx, p);
  odb_problem_destroy(p);
  odb_ctx_destroy(ctx);
  return tap_done();
}
