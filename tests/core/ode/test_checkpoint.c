/* test_checkpoint.c - odb_solver_checkpoint_write/read: a restored solver
   continues bit for bit, every refusal with its text, and a write killed
   halfway leaves the previous file whole. */
#include "solver_util.h"
#include "tap.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/odb-ckpt-XXXXXX";

/* dir/name in a static buffer (one at a time). */
static const char *at(const char *name) {
  static char buf[2][256];
  static int k;
  k ^= 1;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static odb_problem *make(const char *name, const char *pname, double v,
                         const char *p2, double v2) {
  odb_param_value pv[2] = { { pname, v, NULL }, { p2, v2, NULL } };
  odb_problem *p = NULL;
  if (odb_problem_create(name, pv, p2 ? 2 : 1, &p) != ODB_OK)
    fprintf(stderr, "%s: %s\n", name, odb_last_error());
  return p;
}

/*
** A runs 0 -> T in one call. B takes adaptive steps until a third of
** the way (as A's first ones: none is cut short by T) and writes a
** checkpoint; C, a new solver,
** restores it and runs to T. C must end with A's state, bit for bit, and
** with A's running totals (C's include B's k steps from the file).
*/
static void test_bitwise(odb_ctx *ctx, const char *method,
                         const char *variant) {
  odb_problem *p = make_bruss(16);
  odb_solver_opts o = { .rtol = 1e-8, .atol = 1e-8 };
  odb_solver *a = make_solver(ctx, p, method, variant, &o);
  odb_solver *b = make_solver(ctx, p, method, variant, &o);
  odb_solver *c = make_solver(ctx, p, method, variant, &o);
  odb_solve_stats st;
  const double T = 10.0;
  long k = 0;
  int fsal;
  if (!a || !b || !c) {
    tap_ok(0, "%s/%s: solvers created", method, variant);
    goto done;
  }
  odb_solver_integrate(a, T, &st);
  while (b->t < T / 3 && odb_solver_step(b, 0, &st) == ODB_OK) ++k;
  fsal = b->fsal_ready;
  if (!tap_ok(b->t < T && odb_solver_checkpoint_write(b, at("run.ckpt"))
              == ODB_OK, "%s/%s: checkpoint written at t = %g after %ld "
              "steps%s", method, variant, b->t, k,
              fsal ? " (with f(t, y))" : ""))
    goto done;
  if (!tap_ok(odb_solver_checkpoint_read(c, at("run.ckpt")) == ODB_OK,
              "%s/%s: restored (%s)", method, variant, odb_last_error()))
    goto done;
  tap_ok(c->t == b->t && c->h_next == b->h_next &&
         c->fsal_ready == b->fsal_ready &&
         memcmp(c->y, b->y, (size_t)p->n * sizeof(double)) == 0,
         "%s/%s: the restored t, h, state and F0 flag are the written ones",
         method, variant);
  odb_solver_integrate(c, T, &st);
  tap_ok(c->t == a->t && memcmp(c->y, a->y, (size_t)p->n * sizeof(double))
             == 0 && c->stats.steps == a->stats.steps &&
         c->stats.accepted == a->stats.accepted &&
         c->stats.rejected == a->stats.rejected &&
         c->stats.nfev == a->stats.nfev,
         "%s/%s: restarted at t = %g, it ends at T with the state of the "
         "run 0 -> T bit for bit, and the same steps (%ld: %ld accepted, "
         "%ld rejected; %ld evaluations)", method, variant, b->t,
         c->stats.steps, c->stats.accepted, c->stats.rejected,
         c->stats.nfev);
done:
  odb_solver_destroy(a);
  odb_solver_destroy(b);
  odb_solver_destroy(c);
  odb_problem_destroy(p);
}

/* s refuses file with exactly the text want (%s in it: the path), and
   stays at t = 0 with its initial state. */
static void refused(odb_solver *s, const char *file, const char *want,
                    const char *what) {
  char exp[1024], *y0 = malloc((size_t)s->n * sizeof(double));
  odb_status st;
  snprintf(exp, sizeof exp, want, file);
  st = odb_solver_checkpoint_read(s, file);
  s->problem->initial(s->problem, (double *)y0);
  tap_ok(st == ODB_ERR_ARG && strcmp(odb_last_error(), exp) == 0 &&
         s->t == 0 && memcmp(s->y, y0, (size_t)s->n * sizeof(double)) == 0,
         "refused, %s: '%s'", what, odb_last_error());
  if (strcmp(odb_last_error(), exp) != 0) tap_diag("expected '%s'", exp);
  free(y0);
}

/* Copies src to dst with at most len bytes (len < 0: all), the byte at
   flip (>= 0) xor-ed with 0x20, and extra bytes appended. */
static void copy_file(const char *src, const char *dst, long len, long flip,
                      int extra) {
  FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
  int ch;
  long i = 0;
  while (in && out && (len < 0 || i < len) && (ch = fgetc(in)) != EOF) {
    fputc(i == flip ? ch ^ 0x20 : ch, out);
    ++i;
  }
  while (out && extra-- > 0) fputc(0, out);
  if (in) fclose(in);
  if (out) fclose(out);
}

static void test_refusals(odb_ctx *ctx) {
  odb_problem *p = make_bruss(16), *med = make("medakzo", "N", 256, NULL, 0);
  odb_problem *small = make_bruss(8);
  odb_problem *alpha = make("bruss2d", "N", 16, "alpha", 0.01);
  odb_solver_opts o = { .rtol = 1e-8, .atol = 1e-8 }, om = o;
  odb_solver *w = make_solver(ctx, p, "dopri5", "plain", &o), *s;
  char good[256];
  FILE *f;
  char name[64];
  snprintf(good, sizeof good, "%s", at("good.ckpt"));
  if (!tap_ok(w && odb_solver_checkpoint_write(w, good) == ODB_OK,
              "a checkpoint of bruss2d(N=16) with dopri5 at t = 0 (4800 "
              "bytes: 672 of header, 512 doubles, 32 of digest)"))
    return;
  s = make_solver(ctx, med, "dopri5", "plain", &o);
  refused(s, good, "checkpoint '%s' is of another problem: bruss2d(N=16) "
          "n=512, not medakzo(N=256) n=512", "another problem");
  odb_solver_destroy(s);
  s = make_solver(ctx, small, "dopri5", "plain", &o);
  refused(s, good, "checkpoint '%s' is of another size: n = 512 (bruss2d("
          "N=16) n=512), not n = 128 (bruss2d(N=8) n=128)", "another size");
  odb_solver_destroy(s);
  s = make_solver(ctx, alpha, "dopri5", "plain", &o);
  refused(s, good, "checkpoint '%s' is of another problem: bruss2d(N=16) "
          "n=512 with parameter alpha = 0.002, not 0.01",
          "another parameter value");
  odb_solver_destroy(s);
  s = make_solver(ctx, p, "verner65", "plain", &o);
  refused(s, good, "checkpoint '%s' is of another method: dopri5, not "
          "verner65", "another method");
  odb_solver_destroy(s);
  /* the same PIRK method with another number of corrector steps */
  s = make_solver(ctx, p, "radau2a5", "A", &o);
  odb_solver_checkpoint_write(s, at("radau.ckpt"));
  odb_solver_destroy(s);
  om.m = 2;
  s = make_solver(ctx, p, "radau2a5", "A", &om);
  refused(s, at("radau.ckpt"), "checkpoint '%s' is of radau2a5 with m = 4 "
          "corrector steps, not m = 2", "another m");
  odb_solver_destroy(s);
  /* damaged files, read by a solver that matches the file */
  s = make_solver(ctx, p, "dopri5", "plain", &o);
  copy_file(good, at("v2.ckpt"), -1, 8, 0);   /* version 1 -> 0x21 */
  refused(s, at("v2.ckpt"), "checkpoint '%s' has format version 33; this "
          "build reads version 1", "another format version");
  copy_file(good, at("short.ckpt"), 1000, -1, 0);
  refused(s, at("short.ckpt"), "checkpoint '%s' is truncated: 1000 bytes, "
          "its header (n = 512) says 4800", "truncated");
  copy_file(good, at("stub.ckpt"), 100, -1, 0);
  refused(s, at("stub.ckpt"), "checkpoint '%s' is truncated: 100 bytes, "
          "shorter than the 672 of a header", "truncated in the header");
  copy_file(good, at("long.ckpt"), -1, -1, 3);
  refused(s, at("long.ckpt"), "checkpoint '%s' is too long: 4803 bytes, "
          "its header (n = 512) says 4800", "bytes after its end");
  copy_file(good, at("flip.ckpt"), -1, 2000, 0);   /* a byte of y */
  refused(s, at("flip.ckpt"), "checkpoint '%s' is corrupted: its contents "
          "do not match its SHA-256", "a byte of the state changed");
  copy_file(good, at("flipt.ckpt"), -1, 609, 0);   /* a byte of t */
  refused(s, at("flipt.ckpt"), "checkpoint '%s' is corrupted: its contents "
          "do not match its SHA-256", "a byte of t changed");
  f = fopen(at("text.ckpt"), "w");
  if (f) { fputs("t = 0\nh = 1e-3\n", f); fclose(f); }
  refused(s, at("text.ckpt"), "checkpoint '%s' is truncated: 15 bytes, "
          "shorter than the 672 of a header", "a short text file");
  copy_file("/dev/zero", at("zero.ckpt"), 4800, -1, 0);
  refused(s, at("zero.ckpt"), "'%s' is not an odebench checkpoint (it "
          "does not begin with ODBCKPT)", "not a checkpoint");
  tap_ok(odb_solver_checkpoint_read(s, at("none.ckpt")) == ODB_ERR_IO &&
         strstr(odb_last_error(), "none.ckpt': cannot open it: No such "
                "file or directory") != NULL,
         "a missing file: '%s'", odb_last_error());
  /* the name is shown escaped: a planted escape sequence cannot reach
     the terminal */
  snprintf(name, sizeof name, "esc\033[2J.ckpt");
  odb_solver_checkpoint_read(s, at(name));
  tap_ok(strstr(odb_last_error(), "esc\\x1b[2J.ckpt") != NULL &&
         strchr(odb_last_error(), '\033') == NULL,
         "the file name is shown escaped: '%s'", odb_last_error());
  /* a write that cannot happen says where and why, and leaves no file */
  tap_ok(odb_solver_checkpoint_write(s, at("no/such/dir.ckpt")) ==
             ODB_ERR_IO &&
         strstr(odb_last_error(), "checkpoint '") == odb_last_error() &&
         strstr(odb_last_error(), "/no/such/dir.ckpt': cannot create the "
                "file: No such file or directory") != NULL,
         "an impossible write: '%s'", odb_last_error());
  odb_solver_destroy(s);
  odb_solver_destroy(w);
  odb_problem_destroy(p);
  odb_problem_destroy(med);
  odb_problem_destroy(small);
  odb_problem_destroy(alpha);
}

/* A big problem for the kill test: f = 0, y0 = 0 (only its size counts). */
static void zero_rhs(const odb_problem *p, double t, const double *y,
                     long yoff, double *f, long j0, long j1) {
  (void)p; (void)t; (void)y; (void)yoff;
  for (long j = j0; j < j1; ++j) f[j - j0] = 0.0;
}

static void zero_initial(const odb_problem *p, double *y) {
  memset(y, 0, (size_t)p->n * sizeof(double));
}

/*
** A child writes a checkpoint of 4M doubles (32 MB) over and over, each
** with another t; the parent kills it (SIGKILL) at a time of its choice.
** The file must then read back whole: the parent's own first one or one
** the child completed. Several delays, so that kills land in every phase
** of a write (encoding, writing, syncing); a temporary file left beside it
** shows a kill landed during one.
*/
static void test_kill(odb_ctx *ctx) {
  static const odb_problem_type zero_type = { .name = "zero" };
  static const int delay_ms[] = { 5, 40, 90, 170, 260, 400 };
  odb_problem p;
  odb_solver_opts o = { .h_fixed = 1.0 };
  odb_solver *s;
  const char *file = at("big.ckpt");
  int ok = 1, midway = 0, replaced = 0;
  memset(&p, 0, sizeof p);
  p.type = &zero_type;
  p.n = 4L << 20;
  p.d = 1;
  p.rhs = zero_rhs;
  p.initial = zero_initial;
  snprintf(p.label, sizeof p.label, "zero(n=%ld)", p.n);
  s = make_solver(ctx, &p, "bs3", "plain", &o);
  if (!tap_ok(s && odb_solver_checkpoint_write(s, file) == ODB_OK,
              "a first checkpoint of n = %ld (t = 0)", p.n))
    return;
  for (size_t r = 0; r < sizeof delay_ms / sizeof delay_ms[0]; ++r) {
    char tmp[320];
    struct stat sb;
    pid_t pid = fork();
    if (pid == 0) {   /* the writer: t = 1, 2, 3, ... until killed */
      for (long i = 1;; ++i) {
        odb_solver_set_state(s, (double)(100 * r + i), s->y);
        odb_solver_checkpoint_write(s, file);
      }
    }
    if (pid < 0) { ok = 0; break; }
    usleep((useconds_t)delay_ms[r] * 1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", file, (long)pid);
    if (stat(tmp, &sb) == 0) {
      ++midway;
      unlink(tmp);
    }
    if (odb_solver_checkpoint_read(s, file) != ODB_OK) {
      tap_diag("after a kill at %d ms: %s", delay_ms[r], odb_last_error());
      ok = 0;
    } else if (s->t != 0) {
      replaced++;
    }
  }
  tap_ok(ok, "after each of %d kills the file reads back whole (%d killed "
         "during a write, %d after the child had replaced the file)",
         (int)(sizeof delay_ms / sizeof delay_ms[0]), midway, replaced);
  tap_ok(midway > 0, "some kill landed during a write (%d)", midway);
  odb_solver_destroy(s);
}

int main(void) {
  odb_ctx_opts co = { .seed = (uint64_t)time(NULL) };
  odb_ctx *ctx;
  if (!mkdtemp(dir)) {
    tap_ok(0, "a scratch directory");
    return tap_done();
  }
  if (odb_ctx_create(&co, &ctx) != ODB_OK) return 1;
  test_bitwise(ctx, "dopri5", "fused");
  test_bitwise(ctx, "dopri5", "plain");
  test_bitwise(ctx, "radau2a5", "A");
  test_bitwise(ctx, "lobatto3c8", "ppDb1m");
  test_bitwise(ctx, "radau2a5", "D");
  test_refusals(ctx);
  test_kill(ctx);
  odb_ctx_destroy(ctx);
  {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", dir);
  }
  return tap_done();
}
