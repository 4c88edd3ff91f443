/* test_tsm.c - the CPU tall & skinny products against the naive triple
   loop (TAP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "odebench.h"
#include "odb_config.h"
#include "odb_tsm.h"
#if ODB_HAVE_CUDA
#include "odb_gen_tsm.h"
#include "odb_nvrtc.h"
#include "tmp_cache.h"
#endif

/* Fills v with uniform values in [-1, 1). */
static void fill(odb_rng *r, double *v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = 2.0 * odb_rng_uniform(r) - 1.0;
}

/* One shape, op and type with nthreads threads; fresh data, poisoned out. */
static void check(odb_rng *r, odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                  long K, int nthreads) {
  size_t e = t == ODB_TSM_Z ? 2 : 1;
  size_t na = e * (size_t)(K * M);
  size_t nx = e * (size_t)(op == ODB_TSM_TSMTTSM ? K * N : M * N);
  size_t no = e * (size_t)(op == ODB_TSM_TSMTTSM ? M * N : K * N);
  double *A = malloc(na * sizeof *A), *X = malloc(nx * sizeof *X);
  double *out = malloc(no * sizeof *out), *ref = malloc(no * sizeof *ref);
  fill(r, A, na);
  fill(r, X, nx);
  for (size_t i = 0; i < no; ++i) out[i] = NAN;
  odb_tsm_naive(op, t, M, N, K, A, X, ref);
  odb_status st = odb_tsm_cpu(op, t, M, N, K, A, X, out, nthreads);
  double err = odb_tsm_relerr(out, ref, no);
  tap_ok(st == ODB_OK && err <= 1e-12, "%s %s M=%ld N=%ld K=%ld threads=%d: "
         "rel err %.2e", odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N, K,
         nthreads, err);
  free(A); free(X); free(out); free(ref);
}

#if ODB_HAVE_CUDA
/*
** The generator needs no device: every configuration of a space has a
** token that parses back to the same configuration, passes the check and
** generates a kernel; the tensor-core ones use the mma of their option.
*/
static const char *const mma_ptx[] = {
  "-", "mma.sync.aligned.m8n8k4.", "mma.sync.aligned.m16n8k4.",
  "mma.sync.aligned.m16n8k8.", "mma.sync.aligned.m16n8k16."
};

static void check_space(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                        int full, int stride) {
  int n = odb_tsm_space_list(op, t, M, N, full, 90, NULL, 0), bad = 0;
  int nmma = 0, seen = 0;
  odb_tsm_cfg *l = malloc(sizeof *l * (size_t)(n > 0 ? n : 1));
  char tok[64], tok2[64], a[160], b[160], why[200] = "";
  odb_tsm_space_list(op, t, M, N, full, 90, l, n);
  for (int i = 0; i < n; i += stride) {
    odb_tsm_cfg c;
    char *src = NULL;
    ++seen;
    odb_tsm_cfg_token(&l[i], tok, sizeof tok);
    if (odb_tsm_cfg_parse(op, t, M, N, tok, &c) != ODB_OK ||
        strcmp(odb_tsm_cfg_token(&c, tok2, sizeof tok2), tok) != 0 ||
        strcmp(odb_tsm_cfg_text(&c, a, sizeof a),
               odb_tsm_cfg_text(&l[i], b, sizeof b)) != 0 ||
        !odb_tsm_cfg_allowed(&c) || odb_gen_tsm(&c, &src) != ODB_OK ||
        !strstr(src, "tsm_kernel") ||
        (c.mma && !strstr(src, mma_ptx[c.mma % 5]))) {
      if (!bad++) snprintf(why, sizeof why, "%s: %s", tok, odb_last_error());
    }
    nmma += l[i].mma != 0;
    free(src);
    for (int j = i + stride; j < n && stride == 1; ++j)   /* no twice */
      if (strcmp(odb_tsm_cfg_token(&l[j], tok2, sizeof tok2), tok) == 0 &&
          !bad++)
        snprintf(why, sizeof why, "%s listed twice", tok);
  }
  tap_ok(bad == 0 && n > 0, "%s %s M=%d N=%d %s space: %d of %d "
         "configurations (%d on the tensor cores) round-trip, generate and "
         "are listed once %s",
         odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N,
         full ? "full" : "quick", seen - bad, seen, nmma, why);
  free(l);
}

/* Source of the configuration token (NULL when refused). */
static char *source_of(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                       const char *tok) {
  odb_tsm_cfg c;
  char *src = NULL;
  if (odb_tsm_cfg_parse(op, t, M, N, tok, &c) != ODB_OK) return NULL;
  if (odb_gen_tsm(&c, &src) != ODB_OK) return NULL;
  return src;
}

/* 1 when tok is refused for the shape with ODB_ERR_ARG and a message
   holding want ("" for any message). */
static int refused(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                   const char *tok, const char *want) {
  odb_tsm_cfg c;
  return odb_tsm_cfg_parse(op, t, M, N, tok, &c) == ODB_ERR_ARG &&
         strstr(odb_last_error(), want) != NULL;
}

/* A valid real 8 x 8 AtB configuration on the FMA units. */
static odb_tsm_cfg fma_8x8(void) {
  odb_tsm_cfg c;
  memset(&c, 0, sizeof c);
  c.op = ODB_TSM_TSMTTSM;
  c.t = ODB_TSM_D;
  c.M = c.N = 8;
  c.tm = c.tn = c.unroll = 1;
  c.block = 256;
  c.blocks_per_sm = 4;
  return c;
}

/*
** The L2 prefetch hint (tokens only): each suffix round-trips and puts its
** hint on the 16-byte copies (none for pn); the default keeps 128 bytes;
** other values and FMA kernels are refused.
*/
static void check_pf(void) {
  static const char *const base = "m2w1x2g1r32s3lb0z3";
  static const char *const sfx[4] = { "", "p64", "p256", "pn" };
  static const char *const hint[4] = {
    "cp.async.cg.shared.global.L2::128B [", "cp.async.cg.shared.global.L2::64B [",
    "cp.async.cg.shared.global.L2::256B [", "cp.async.cg.shared.global ["
  };
  odb_tsm_cfg c;
  char tok[64], tok2[64], txt[160];
  int good = 0;
  for (int i = 0; i < 4; ++i) {
    char *s;
    snprintf(tok, sizeof tok, "%s%s", base, sfx[i]);
    s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, tok);
    good += s && strstr(s, hint[i]) &&
            odb_tsm_cfg_parse(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, tok, &c)
            == ODB_OK &&
            strcmp(odb_tsm_cfg_token(&c, tok2, sizeof tok2), tok) == 0 &&
            (i == 0) == !strstr(odb_tsm_cfg_text(&c, txt, sizeof txt),
                                "pf=");
    free(s);
  }
  tap_ok(good == 4, "L2 prefetch suffixes '', p64, p256, pn: %d of 4 "
         "round-trip and emit their hint", good);
  tap_ok(odb_tsm_cfg_parse(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16,
                           "m2w1x2g1r32s3lb0z3p128", &c) == ODB_ERR_ARG &&
         odb_tsm_cfg_parse(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16,
                           "m2w1x2g1r32s3lb0z3p256x", &c) == ODB_ERR_ARG,
         "p128 (the default has no suffix) and p256x refused");
  c = fma_8x8();
  c.pf = 256;
  tap_ok(odb_tsm_cfg_check(&c) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "pf"), "pf on an FMA kernel refused: %s",
         odb_last_error());
  c.pf = 0;
  c.mma = ODB_TSM_MMA_M16N8K4;
  c.wm = c.wn = c.rg = 1;
  c.chunk = 32;
  c.stages = 3;
  c.pf = 512;
  tap_ok(odb_tsm_cfg_check(&c) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "pf = 512"), "pf = 512 refused: %s",
         odb_last_error());
}

/*
** Chunks from a counter (sched=dyn, suffix d): round-trips (before a
** prefetch suffix too), takes its chunks from odb_tsm_next, which the last
** block resets; refused for AC, C in bands, a block per chunk and the FMA
** kernels.
*/
static void check_dyn(void) {
  static const char *const ok[3] = { "m3w1x2g2r64s3lb0d",
    "m3w2x4g2r32s4lb0dp256", "m4w1x2g1r32s3lb0z3d" };
  odb_tsm_cfg c;
  char tok[64], txt[160];
  int good = 0;
  for (int i = 0; i < 3; ++i) {
    char *s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, ok[i]);
    good += s && strstr(s, "atomicAdd(&odb_tsm_next, 1ull)") &&
            strstr(s, "odb_tsm_next = 0ull;") &&
            odb_tsm_cfg_parse(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, ok[i], &c)
            == ODB_OK &&
            strcmp(odb_tsm_cfg_token(&c, tok, sizeof tok), ok[i]) == 0 &&
            strstr(odb_tsm_cfg_text(&c, txt, sizeof txt), "sched=dyn");
    free(s);
  }
  tap_ok(good == 3, "sched=dyn: %d of 3 tokens round-trip, say sched=dyn "
         "and take their chunks from the counter", good);
  tap_ok(refused(ODB_TSM_TSMM, ODB_TSM_D, 16, 16, "m2w1x2g1r32s3Rb0d",
                 "dyn") &&
         refused(ODB_TSM_TSMTTSM, ODB_TSM_Z, 64, 64, "m3w2x2g1r16s4lb0z3h2d",
                 "dyn") &&
         refused(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, "m3w1x2g2r64s3lb-1d",
                 "dyn"),
         "sched=dyn refused for AC, C in bands and a block per chunk: %s",
         odb_last_error());
  c = fma_8x8();
  c.dyn = 1;
  tap_ok(odb_tsm_cfg_check(&c) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "dyn"), "sched=dyn on an FMA kernel "
         "refused: %s", odb_last_error());
}

/* The quick space of a shape (sm_90) has tensor-core configurations
   exactly when mma, and staged-store ones exactly when staged. */
static void check_narrow(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                         int mma, int staged) {
  int n = odb_tsm_space_list(op, t, M, N, 0, 90, NULL, 0), nm = 0, ns = 0;
  odb_tsm_cfg *l = malloc(sizeof *l * (size_t)(n > 0 ? n : 1));
  odb_tsm_space_list(op, t, M, N, 0, 90, l, n);
  for (int i = 0; i < n; ++i) {
    nm += l[i].mma != 0;
    ns += l[i].ostage != 0;
  }
  tap_ok((nm > 0) == mma && (ns > 0) == staged, "quick %s %s %ld x %ld: %d "
         "tensor-core configurations (%s), %d with staged stores (%s)",
         odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N, nm,
         mma ? "some" : "none", ns, staged ? "some" : "none");
  free(l);
}

/* Options, devices and guards of the generated kernels. */
static void check_generator(void) {
  char *s;
  check_space(ODB_TSM_TSMTTSM, ODB_TSM_D, 13, 11, 0, 1);
  check_space(ODB_TSM_TSMTTSM, ODB_TSM_Z, 64, 64, 0, 1);
  check_space(ODB_TSM_TSMM, ODB_TSM_D, 33, 17, 0, 1);
  check_space(ODB_TSM_TSMM, ODB_TSM_Z, 24, 40, 0, 1);
  check_space(ODB_TSM_TSMTTSM, ODB_TSM_Z, 7, 5, 1, 7);
  check_space(ODB_TSM_TSMM, ODB_TSM_D, 3, 64, 1, 7);
  check_space(ODB_TSM_TSMM, ODB_TSM_D, 16, 4, 0, 1);
  check_space(ODB_TSM_TSMM, ODB_TSM_D, 64, 1, 0, 1);
  check_space(ODB_TSM_TSMM, ODB_TSM_Z, 1, 64, 0, 1);
  check_space(ODB_TSM_TSMTTSM, ODB_TSM_D, 5, 37, 0, 1);
  /* narrow sides beside a side of 16: quick AC takes the tensor cores at
     any width, with staged stores where B is 4 times as wide as A; quick
     AtB from 4 */
  check_narrow(ODB_TSM_TSMM, ODB_TSM_D, 64, 1, 1, 0);
  check_narrow(ODB_TSM_TSMM, ODB_TSM_Z, 1, 64, 1, 1);
  check_narrow(ODB_TSM_TSMTTSM, ODB_TSM_D, 5, 37, 1, 0);
  check_narrow(ODB_TSM_TSMTTSM, ODB_TSM_D, 8, 4, 0, 0);
  check_narrow(ODB_TSM_TSMM, ODB_TSM_D, 2, 8, 0, 0);
  /* quick AC takes the tensor cores from a real view 4 wide, quick AtB
     from 8 */
  {
    odb_tsm_cfg l[2048];
    int n = odb_tsm_space_list(ODB_TSM_TSMM, ODB_TSM_D, 16, 4, 0, 90, l,
                               2048), mac = 0, matb = 0;
    for (int i = 0; i < n && i < 2048; ++i) mac += l[i].mma != 0;
    n = odb_tsm_space_list(ODB_TSM_TSMTTSM, ODB_TSM_D, 16, 4, 0, 90, l,
                           2048);
    for (int i = 0; i < n && i < 2048; ++i) matb += l[i].mma != 0;
    tap_ok(mac > 0 && matb == 0, "quick spaces of real 16 x 4: AC %d "
           "tensor-core configurations, AtB %d", mac, matb);
  }
  /* devices: no m16n8k4 before sm_90, no mma before sm_80 */
  {
    int n80 = odb_tsm_space_list(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, 1, 80,
                                 NULL, 0);
    int n70 = odb_tsm_space_list(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, 1, 70,
                                 NULL, 0);
    odb_tsm_cfg *l = malloc(sizeof *l * (size_t)n80);
    int m16 = 0, m8 = 0, mma70 = 0;
    odb_tsm_space_list(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, 1, 80, l, n80);
    for (int i = 0; i < n80; ++i) {
      m16 += l[i].mma == 2;
      m8 += l[i].mma == 1;
    }
    odb_tsm_space_list(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, 1, 70, l, n70);
    for (int i = 0; i < n70; ++i) mma70 += l[i].mma != 0;
    tap_ok(m16 == 0 && m8 > 0 && mma70 == 0, "sm_80 gets m8n8k4 alone (%d), "
           "sm_70 no tensor-core kernel", m8);
    free(l);
  }
  /* guards only where the mapping does not divide the shape */
  s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_D, 16, 16, "m1w2x2g1r32s3lb0");
  tap_ok(s && !strstr(s, "if (r <") && !strstr(s, "if (c <") &&
         strstr(s, "cp16("), "16 x 16 on 16 x 16 warp tiles: no guard, "
         "16-byte copies");
  free(s);
  s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_D, 13, 11, "m1w2x2g1r32s3gb0");
  tap_ok(s && strstr(s, "if (r < 13)") && strstr(s, "if (c < N_)") &&
         strstr(s, "cp8("), "13 x 11: guarded rows and columns, 8-byte "
         "copies");
  free(s);
  s = source_of(ODB_TSM_TSMM, ODB_TSM_Z, 8, 8, "m2w1x1g1r32s3Rb0");
  tap_ok(s && strstr(s, "cval(C, 4 * kk + t") && strstr(s, "-v[1]"),
         "complex tsmm: C's fragments from its real 2M x 2N form");
  free(s);
  /* Gauss's three products (complex): 16-byte pair loads, guards */
  check_space(ODB_TSM_TSMM, ODB_TSM_Z, 64, 64, 0, 1);
  check_space(ODB_TSM_TSMM, ODB_TSM_Z, 8, 8, 0, 1);   /* Gauss twins */
  check_space(ODB_TSM_TSMTTSM, ODB_TSM_Z, 33, 17, 1, 3);
  check_space(ODB_TSM_TSMM, ODB_TSM_Z, 33, 17, 1, 3);
  check_space(ODB_TSM_TSMTTSM, ODB_TSM_Z, 48, 40, 1, 5);
  s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_Z, 33, 17, "m2w1x2g1r32s3lb0z3");
  tap_ok(s && strstr(s, "split3(sa +") && strstr(s, "if (m < 33 && n < 17)")
         && strstr(s, "acc[2][i][j][e] - p1 - p2"), "Gauss tsmttsm 33 x 17: "
         "pair loads, three products, guarded rows and columns");
  free(s);
  s = source_of(ODB_TSM_TSMM, ODB_TSM_Z, 64, 64, "m3w1x1g1r32s3Rb0z3");
  tap_ok(s && strstr(s, "cpair(C, 8 * kk + t") && !strstr(s, "if (n <"),
         "Gauss tsmm 64 x 64: C's operands in registers, no column guard");
  free(s);
  tap_ok(refused(ODB_TSM_TSMTTSM, ODB_TSM_D, 32, 32, "m2w1x2g1r32s3lb0z3",
                 "complex"), "Gauss on real data refused: %s",
         odb_last_error());
  tap_ok(refused(ODB_TSM_TSMTTSM, ODB_TSM_Z, 32, 32, "m1w2x2g1r32s3lb0z3",
                 ""), "Gauss with m8n8k4 refused: %s", odb_last_error());
  tap_ok(refused(ODB_TSM_TSMTTSM, ODB_TSM_Z, 32, 32, "m2w1x2g1r32s3lb0z4",
                 ""), "a bad suffix refused: %s", odb_last_error());
  /* C split into bands (Gauss tsmttsm) */
  s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_Z, 48, 48, "m3w2x2g1r16s4lb0z3h2");
  tap_ok(s && strstr(s, "const int band = blockIdx.x % 2;") &&
         strstr(s, "A + 48 * band") && strstr(s, "if (m < 24)") &&
         strstr(s, "p.out + 2304 * band") &&
         strstr(s, "__launch_bounds__(96, 2)"), "Gauss tsmttsm 48 x 48 in 2 "
         "bands of 24 rows: the band's columns of A, guarded rows");
  free(s);
  /* 33 rows: bands of 17 and 16, the last band's columns of A guarded */
  s = source_of(ODB_TSM_TSMTTSM, ODB_TSM_Z, 33, 32, "m3w1x2g1r16s4lb0z3h2");
  tap_ok(s && strstr(s, "A + 34 * band") &&
         strstr(s, "const int mb = band == 1 ? 16 : 17, aw = 2 * mb;") &&
         strstr(s, "const bool ok = k0 + r < K && c < aw;") &&
         strstr(s, "if (m < mb") && strstr(s, "i < 64 * mb;"),
         "Gauss tsmttsm 33 x 32 in bands of 17 and 16 rows: the last band's "
         "width at run time");
  free(s);
  tap_ok(refused(ODB_TSM_TSMTTSM, ODB_TSM_Z, 9, 32, "m3w1x2g1r16s4lb0z3h4",
                 "bands"), "4 bands of 9 rows (the last empty) refused: %s",
         odb_last_error());
  tap_ok(refused(ODB_TSM_TSMM, ODB_TSM_Z, 32, 32, "m3w1x1g1r16s4Rb0z3h2", ""),
         "bands on tsmm refused: %s", odb_last_error());
  /* bad options */
  tap_ok(refused(ODB_TSM_TSMTTSM, ODB_TSM_D, 32, 32, "m1w2x2g3r32s3lb0",
                 "row groups"), "3 row groups on a chunk of 32 rows refused: "
         "%s", odb_last_error());
  tap_ok(refused(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, "m1w1x1g1r32s3Lb0",
                 "not L1"), "tsmm mma with C from L1 refused: %s",
         odb_last_error());
  tap_ok(refused(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, "m1w1x1", "token"),
         "a cut token refused: %s", odb_last_error());
  tap_ok(refused(ODB_TSM_TSMM, ODB_TSM_D, 32, 32, "m5w1x1g1r32s3Sb0",
                 "mma = 5"), "mma = 5 refused: %s", odb_last_error());
  tap_ok(refused(ODB_TSM_TSMTTSM, ODB_TSM_D, 32, 32, "m1w2x2g1r32s5lb0",
                 "stages"), "5 stages refused: %s", odb_last_error());
  check_pf();
  check_dyn();
}
#endif

#if ODB_HAVE_CUDA
/*
** odb_nvrtc_prefetch needs NVRTC but no device: three generated kernels
** compiled by two threads into an empty disk cache; a second call finds
** them all there and compiles none.
*/
static void check_prefetch(void) {
  static const char *const toks[3] = { "p2Su2b4", "p4Su2b4", "p8Lu2b4" };
  char *src[3] = { NULL, NULL, NULL };
  tmp_cache tc;
  int ok = 1, first = -1, second = -1, files = -1;
  for (int i = 0; ok && i < 3; ++i) {
    odb_tsm_cfg c;
    ok = odb_tsm_cfg_parse(ODB_TSM_TSMM, ODB_TSM_D, 8, 8, toks[i], &c)
         == ODB_OK && odb_gen_tsm(&c, &src[i]) == ODB_OK;
  }
  tmp_cache_open(&tc);
  if (ok && tc.ok) {
    first = odb_nvrtc_prefetch((const char *const *)src, 3, 9, 0, 2);
    second = odb_nvrtc_prefetch((const char *const *)src, 3, 9, 0, 2);
    files = tmp_cache_cubins(&tc, 0);
  }
  tmp_cache_close(&tc);
  tap_ok(ok && first == 3 && second == 0 && files == 3, "odb_nvrtc_prefetch "
         "compiled %d of 3 kernels into an empty cache with 2 threads, then "
         "%d; %d cache files", first, second, files);
  for (int i = 0; i < 3; ++i) free(src[i]);
}

/* Compiles three kernel sources with NVRTC for sm_90 into an empty
   temporary cache; returns how many compiled (-1: no cache directory). */
static int compile_three(char *src[3]) {
  tmp_cache tc;
  int done = -1;
  tmp_cache_open(&tc);
  if (tc.ok) done = odb_nvrtc_prefetch((const char *const *)src, 3, 9, 0, 2);
  tmp_cache_close(&tc);
  return done;
}

/* These shapes pass NVRTC and ptxas for sm_90 (no device
   needed): a GEMV-like AC on the tensor cores (real 64 x 1), an outer
   product with B staged (complex 1 x 64), and Gauss's AtB with C in bands
   of 16 and 15 rows (complex 31 x 31). */
static void check_narrow_compiles(void) {
  static const struct { odb_tsm_op op; odb_tsm_dtype t; int M, N;
                        const char *tok; } k[3] = {
    { ODB_TSM_TSMM, ODB_TSM_D, 64, 1, "m3w1x1g1r32s3Rb0" },
    { ODB_TSM_TSMM, ODB_TSM_Z, 1, 64, "m2w1x1g1r32s2Rb-1o" },
    { ODB_TSM_TSMTTSM, ODB_TSM_Z, 31, 31, "m3w1x2g1r16s4lb0z3h2" } };
  char *src[3] = { NULL, NULL, NULL };
  int ok = 1, done = -1;
  for (int i = 0; ok && i < 3; ++i)
    ok = (src[i] = source_of(k[i].op, k[i].t, k[i].M, k[i].N, k[i].tok))
         != NULL;
  if (ok) done = compile_three(src);
  tap_ok(ok && done == 3, "AC 64 x 1 and 1 x 64 on the tensor cores and "
         "AtB 31 x 31 in unequal bands compile for sm_90 (%d of 3)", done);
  for (int i = 0; i < 3; ++i) free(src[i]);
}

/* The prefetch hints pass NVRTC and ptxas for sm_90 (no device needed). */
static void check_pf_compiles(void) {
  static const char *const toks[3] = { "m2w1x2g1r32s3lb0z3p64",
                                       "m2w1x2g1r32s3lb0z3p256",
                                       "m2w1x2g1r32s3lb0z3pn" };
  char *src[3] = { NULL, NULL, NULL };
  int ok = 1, done = -1;
  for (int i = 0; ok && i < 3; ++i)
    ok = (src[i] = source_of(ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, toks[i]))
         != NULL;
  if (ok) done = compile_three(src);
  tap_ok(ok && done == 3, "the p64, p256 and pn kernels compile for sm_90 "
         "(%d of 3)", done);
  for (int i = 0; i < 3; ++i) free(src[i]);
}
#endif

int main(void) {
  odb_rng r;
  odb_rng_seed(&r, 20261122);
  static const long shapes[][3] = {
    {1, 1, 1}, {1, 1, 9973}, {3, 5, 10007}, {7, 7, 20011}, {13, 4, 33331},
    {17, 31, 12289}, {64, 64, 5003}, {33, 1, 40009}, {1, 47, 8191},
    /* the narrow paths (rows as lanes, dot products) and chunk edges: K
       one past a chunk of 64, a multiple of it, below the 8 lanes; widths
       past 64 (the CPU versions take any) */
    {2, 2, 65}, {5, 3, 1031}, {3, 2, 128}, {2, 4, 7}, {100, 2, 999},
    {9, 70, 4099}, {5000, 3, 50},
    /* whole register tiles read in place in chunks shorter than 64 rows
       (at most 32 KB of A and B), K not a multiple of them */
    {48, 40, 3001}, {24, 32, 777},
    /* B = A C with 16-column tiles, one of 8 and 3 plain columns left */
    {7, 91, 1001},
    /* B = A C, 6 columns: 4 rows a group of 24 */
    {11, 6, 2049},
    /* A^T B in place with 4 columns past a multiple of 8 (real view) */
    {12, 12, 3001}, {8, 20, 1999}, {6, 6, 2001}, {4, 10, 999},
    /* every other width in place (edge rows, overlapping column tiles);
       B = A C with an overlapping last tile, after 16-column tiles */
    {9, 13, 1003}, {5, 36, 777}, {31, 9, 517},
  };
  int threads[] = { 1, 3 };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
    for (int op = 0; op < 2; ++op)
      for (int t = 0; t < 2; ++t)
        check(&r, (odb_tsm_op)op, (odb_tsm_dtype)t, shapes[s][0],
              shapes[s][1], shapes[s][2], threads[s % 2]);
  /* bad input */
  double x = 0;
  tap_ok(odb_tsm_cpu(ODB_TSM_TSMTTSM, ODB_TSM_D, 0, 1, 5, &x, &x, &x, 1)
         == ODB_ERR_ARG && strstr(odb_last_error(), "M = 0"),
         "M = 0 refused: %s", odb_last_error());
  tap_ok(odb_tsm_cpu(ODB_TSM_TSMM, ODB_TSM_D, 1, 1, 0, &x, &x, &x, 1)
         == ODB_ERR_ARG, "K = 0 refused: %s", odb_last_error());
  tap_ok(odb_tsm_check_shape(65, 3, 10, 1) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "1..64"), "M = 65 on the GPU path names "
         "the range: %s", odb_last_error());
  odb_tsm_dtype dt;
  tap_ok(odb_tsm_dtype_parse("s", &dt) == ODB_ERR_NAME, "dtype 's' refused");
  /* shapes whose matrices cannot be addressed: refused with the bytes,
     before anything is allocated or run */
  size_t na = 1, nx = 1, no = 1;
  tap_ok(odb_tsm_sizes(ODB_TSM_TSMM, ODB_TSM_D, 64, 64, 1L << 55, &na, &nx,
                       &no) == ODB_ERR_NOMEM && na == 0 && nx == 0 &&
         no == 0 && strstr(odb_last_error(), "K = 36028797018963968: its "
                           "matrices would need"),
         "tsmm 64 x 64 x 2^55 refused: %s", odb_last_error());
  tap_ok(odb_tsm_sizes(ODB_TSM_TSMTTSM, ODB_TSM_Z, 3, 5, 7, &na, &nx, &no)
         == ODB_OK && na == 42 && nx == 70 && no == 30,
         "complex tsmttsm 3 x 5 x 7: %zu, %zu, %zu doubles", na, nx, no);
  odb_tsm_host *h = NULL;
  tap_ok(odb_tsm_host_create(ODB_TSM_TSMM, ODB_TSM_D, 64, 64, 1L << 55, 1,
                             1, &h) == ODB_ERR_NOMEM && h == NULL,
         "a host product of K = 2^55 is refused: %s", odb_last_error());
  tap_ok(odb_tsm_cpu(ODB_TSM_TSMM, ODB_TSM_D, 64, 64, 1L << 55, &x, &x, &x,
                     1) == ODB_ERR_NOMEM, "odb_tsm_cpu refuses K = 2^55 "
         "before reading a row");
  /* the matrices' bytes fit (2^63 + 2^44), two threads' tiles do not */
  tap_ok(odb_tsm_cpu(ODB_TSM_TSMTTSM, ODB_TSM_D, 1L << 30, 1L << 30, 8192,
                     &x, &x, &x, 2) == ODB_ERR_NOMEM &&
         strstr(odb_last_error(), "2 tiles of 1073741824 x 1073741824"),
         "two 2^30 x 2^30 tiles are refused: %s", odb_last_error());
#if ODB_HAVE_CUDA
  check_generator();
  if (getenv("ODEBENCH_KERNEL_CACHE") &&
      strcmp(getenv("ODEBENCH_KERNEL_CACHE"), "off") == 0)
    tap_ok(1, "odb_nvrtc_prefetch # SKIP the kernel cache is off");
  else {
    check_prefetch();
    check_pf_compiles();
    check_narrow_compiles();
  }
#endif
  return tap_done();
}
