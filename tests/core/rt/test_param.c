/* test_param.c - parameter declarations: defaults, ranges, names, enums,
   booleans, powers of two, positive numbers, and the texts of what each
   allows; a variant's options through the solver (odb_solver_opts.vopts):
   checked by name, copied, refused by a variant that declares none. */
#include "odebench.h"
#include "tap.h"

#include <math.h>
#include <string.h>

static const odb_param_decl decls[] = {
  { "N", ODB_PARAM_INT, 128, 2, 1000, NULL, "size" },
  { "alpha", ODB_PARAM_REAL, 0.5, 0, 1, NULL, "constant" },
  { "init", ODB_PARAM_ENUM, 0, 0, 1, "thesis|hnw", "initial values" },
};

/* A variant's kind of options: defaults the owner chooses (0, -1). */
static const odb_param_decl opts[] = {
  { "threads", ODB_PARAM_POW2, 0, 32, 1024, NULL, "threads a block" },
  { "cluster", ODB_PARAM_POW2, 0, 1, 8, NULL, "blocks a cluster" },
  { "stride", ODB_PARAM_ENUM, 1, 0, 2, "A|B|C", "stride" },
  { "persistent", ODB_PARAM_BOOL, 1, 0, 1, NULL, "loop over the tiles" },
  { "watchdog", ODB_PARAM_POS, 2, 0, HUGE_VAL, NULL, "seconds" },
  { "carry", ODB_PARAM_INT, -1, 0, 3, NULL, "rows kept" },
  { "rows", ODB_PARAM_INT, 0, 1, 1 << 30, NULL, "rows a block" },
};
#define NOPTS ((int)(sizeof opts / sizeof opts[0]))

/* Resolves one given value and returns the status. */
static odb_status one(const char *name, double num, const char *str,
                      double *out) {
  odb_param_value v = { name, num, str };
  return odb_param_resolve("problem 'x'", decls, 3, &v, 1, out);
}

/* The reason odb_param_check gives for option name = (num, str), or "ok
   <value>". */
static const char *why(const char *name, double num, const char *str) {
  static char buf[256];
  odb_param_value g = { name, num, str };
  double v = 0;
  int i = odb_param_find(opts, NOPTS, name);
  if (i < 0) return "unknown";
  if (odb_param_check(&opts[i], &g, &v, buf, sizeof buf) == ODB_OK)
    snprintf(buf, sizeof buf, "ok %g", v);
  return buf;
}

/* tap_ok that why(...) is exactly want. */
static void reason_is(const char *name, double num, const char *str,
                      const char *want) {
  const char *got = why(name, num, str);
  tap_ok(strcmp(got, want) == 0, "%s = %s: '%s' (want '%s')", name,
         str ? str : "(number)", got, want);
}

/*
** A CPU variant that declares two options and otherwise is plain: its init
** resolves them (as a GPU variant does) into probe_seen.
*/
static const odb_param_decl probe_opts[] = {
  { "width", ODB_PARAM_INT, 0, 1, 64, NULL, "a width" },
  { "mode", ODB_PARAM_ENUM, 0, 0, 1, "slow|fast", "a mode" },
};
static odb_variant probe;
static double probe_seen[2];
static int probe_inits;

static odb_status probe_init(odb_solver *s) {
  ++probe_inits;
  ODB_TRY(odb_param_resolve("probe", s->variant->opts, s->variant->nopts,
                            s->opts.vopts, s->opts.nvopts, probe_seen));
  return odb_variant_plain.init(s);
}

/* Creates a bs3 solver of fixed steps on p of variant with options vals[0..n). */
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

/* The solver's side: names checked, values copied, a CPU variant refuses. */
static void test_solver_opts(void) {
  odb_ctx_opts co = { .seed = 1 };
  odb_ctx *ctx = NULL;
  odb_problem *p = NULL;
  odb_param_value pv = { "N", 4, NULL };
  odb_solver *s = NULL;
  char name[8], mode[8];
  odb_param_value vals[2] = { { name, 8, NULL }, { "mode", 0, mode } };
  odb_solve_stats info;
  if (odb_ctx_create(&co, &ctx) != ODB_OK ||
      odb_problem_create("bruss2d", &pv, 1, &p) != ODB_OK) {
    tap_ok(0, "context and problem: %s", odb_last_error());
    return;
  }
  probe = odb_variant_plain;
  probe.name = "opts_probe";
  probe.doc = "plain with two options (test)";
  probe.init = probe_init;
  probe.opts = probe_opts;
  probe.nopts = 2;
  tap_ok(odb_variant_register(&probe) == ODB_OK, "probe registered");
  strcpy(name, "width");
  strcpy(mode, "fast");
  tap_ok(make(ctx, p, "plain", vals, 1, &s) == ODB_ERR_ARG && !s &&
         strcmp(odb_last_error(), "variant 'plain' takes no option 'width' "
                "(it declares none)") == 0,
         "a variant that declares none refuses an option: %s",
         odb_last_error());
  tap_ok(make(ctx, p, NULL, vals, 1, &s) == ODB_ERR_ARG && !s &&
         strstr(odb_last_error(), "variant 'pipe' takes no option 'width'"),
         "so does the variant auto picks: %s", odb_last_error());
  strcpy(name, "colour");
  tap_ok(make(ctx, p, "opts_probe", vals, 2, &s) == ODB_ERR_ARG &&
         strcmp(odb_last_error(), "variant 'opts_probe' has no option "
                "'colour' (valid: width, mode)") == 0,
         "an unknown option lists the valid ones: %s", odb_last_error());
  strcpy(name, "width");
  vals[0].num = 65;
  tap_ok(make(ctx, p, "opts_probe", vals, 2, &s) == ODB_ERR_ARG &&
         strcmp(odb_last_error(), "variant 'opts_probe': option 'width' must "
                "be in 1..64, got 65") == 0,
         "a value out of range: %s", odb_last_error());
  vals[0].num = 8;
  probe_inits = 0;
  tap_ok(make(ctx, p, "opts_probe", vals, 2, &s) == ODB_OK &&
         probe_inits == 1 && probe_seen[0] == 8 && probe_seen[1] == 1,
         "the variant resolves its options: width %g, mode %g",
         probe_seen[0], probe_seen[1]);
  if (!s) goto done;
  /* the caller's list may change or go once the solver exists */
  strcpy(name, "xxxxx");
  strcpy(mode, "slow");
  vals[0].num = 3;
  tap_ok(s->opts.vopts != vals && s->opts.nvopts == 2 &&
         strcmp(s->opts.vopts[0].name, "width") == 0 &&
         s->opts.vopts[0].num == 8 &&
         strcmp(s->opts.vopts[1].str, "fast") == 0,
         "the solver keeps its own copy of the options");
  tap_ok(odb_solver_set_variant(s, "plain", 0, 0) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "variant 'plain' takes no option 'width'")
         && s->variant == &probe && odb_solver_step(s, 1e-3, &info) == ODB_OK,
         "switching to a variant that refuses them keeps the old one: %s",
         odb_last_error());
  tap_ok(odb_solver_set_variant(s, "opts_probe", 0, 0) == ODB_OK &&
         probe_inits == 2 && probe_seen[0] == 8 && probe_seen[1] == 1,
         "a later init finds the same options");
  odb_solver_destroy(s);
  {
    odb_param_value unnamed = { NULL, 1, NULL };
    s = NULL;
    tap_ok(make(ctx, p, "opts_probe", &unnamed, 1, &s) == ODB_ERR_ARG &&
           strstr(odb_last_error(), "variant option 1 has no name"),
           "an option without a name: %s", odb_last_error());
    tap_ok(make(ctx, p, "opts_probe", NULL, 2, &s) == ODB_ERR_ARG &&
           strstr(odb_last_error(), "2 given without a list"),
           "a count without a list: %s", odb_last_error());
  }
done:
  odb_problem_destroy(p);
  odb_ctx_destroy(ctx);
}

int main(void) {
  double out[3], o[NOPTS];
  char buf[160];
  tap_ok(odb_param_resolve("p", decls, 3, NULL, 0, out) == ODB_OK &&
         out[0] == 128 && out[1] == 0.5 && out[2] == 0, "defaults");
  tap_ok(one("N", 64, NULL, out) == ODB_OK && out[0] == 64, "given int");
  tap_ok(one("init", 0, "hnw", out) == ODB_OK && out[2] == 1, "enum choice");
  tap_ok(one("N", 0, NULL, out) == ODB_ERR_ARG &&
         strcmp(odb_last_error(), "problem 'x': parameter 'N' must be in "
                "2..1000, got 0") == 0,
         "zero size refused: %s", odb_last_error());
  tap_ok(one("N", -3, NULL, out) == ODB_ERR_ARG, "negative size refused");
  tap_ok(one("N", 2.5, NULL, out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "'N' must be an integer, got 2.5"),
         "non-integer refused: %s", odb_last_error());
  tap_ok(one("N", 0, "abc", out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "must be a number, got 'abc'"),
         "string for a number: %s", odb_last_error());
  tap_ok(one("M", 3, NULL, out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "no parameter 'M' (valid: N, alpha, init)"),
         "unknown name lists valid ones: %s", odb_last_error());
  tap_ok(one("init", 0, "foo", out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "'init' must be \"thesis\" or \"hnw\", "
                "got 'foo'"), "unknown choice: %s", odb_last_error());
  tap_ok(one("alpha", 1.5, NULL, out) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "'alpha' must be in [0, 1], got 1.5"),
         "real out of range: %s", odb_last_error());

  /* the checks of one value, as a variant's options use them */
  reason_is("threads", 7, NULL, "must be in 32..1024, got 7");
  reason_is("threads", 96, NULL,
            "must be a power of two in 32..1024, got 96");
  reason_is("threads", 128, NULL, "ok 128");
  reason_is("threads", 64.5, NULL, "must be an integer, got 64.5");
  reason_is("cluster", 3, NULL, "must be 1, 2, 4 or 8, got 3");
  reason_is("cluster", 16, NULL, "must be in 1..8, got 16");
  reason_is("cluster", 8, NULL, "ok 8");
  reason_is("stride", 0, "D", "must be \"A\", \"B\" or \"C\", got 'D'");
  reason_is("stride", 2, NULL, "must be \"A\", \"B\" or \"C\", got 2");
  reason_is("stride", 0, "C", "ok 2");
  reason_is("persistent", 1, NULL,
            "must be a boolean (true or false), got 1");
  reason_is("persistent", 0, "false", "ok 0");
  reason_is("persistent", 0, "true", "ok 1");
  reason_is("watchdog", -1, NULL, "must be positive, got -1");
  reason_is("watchdog", 0, NULL, "must be positive, got 0");
  reason_is("watchdog", INFINITY, NULL, "must be a finite number, got inf");
  reason_is("watchdog", 1e-9, NULL, "ok 1e-09");
  reason_is("carry", 0, NULL, "ok 0");
  reason_is("carry", 4, NULL, "must be in 0..3, got 4");
  reason_is("rows", 0, NULL, "must be in 1..1073741824, got 0");
  reason_is("rows", 0, "many", "must be a number, got 'many'");

  /* defaults: the owner's choice where the default is not allowed */
  tap_ok(!odb_param_has_default(&opts[0]) && !odb_param_has_default(&opts[1])
         && odb_param_has_default(&opts[2]) &&
         odb_param_has_default(&opts[3]) && odb_param_has_default(&opts[4]) &&
         !odb_param_has_default(&opts[5]) && !odb_param_has_default(&opts[6])
         && odb_param_has_default(&decls[0]),
         "a default outside the allowed values is the owner's choice");
  tap_ok(odb_param_resolve("v", opts, NOPTS, NULL, 0, o) == ODB_OK &&
         o[0] == 0 && o[5] == -1 && o[4] == 2,
         "resolving nothing gives the declared defaults, chosen or not");
  tap_ok(strcmp(odb_param_allowed(&opts[4], buf, sizeof buf), "positive") ==
         0, "allowed text of a positive number: %s", buf);
  tap_ok(strcmp(odb_param_names(opts, 0, buf, sizeof buf), "none") == 0 &&
         strcmp(odb_param_names(decls, 3, buf, sizeof buf),
                "N, alpha, init") == 0, "names: %s", buf);
  tap_ok(odb_param_find(opts, NOPTS, "carry") == 5 &&
         odb_param_find(opts, NOPTS, "colour") == -1 &&
         odb_param_find(opts, NOPTS, NULL) == -1, "find by name");
  test_solver_opts();
  return tap_done();
}
