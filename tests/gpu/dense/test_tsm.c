/* test_tsm.c - the generated tall & skinny kernels and the cuBLAS baseline
   against the CPU reference (TAP; exit 77 without a GPU). With --roofline
   it instead tunes each shape over the quick space and prints GFLOP/s,
   the percentage of the roofline and the ratio to cuBLAS; with --space it
   checks the tuning spaces alone (no device needed). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "odebench.h"
#include "odb_kernels.h"
#include "odb_tsm.h"
#include "odb_tsm_gpu.h"

static odb_backend *gpu;

/* Fills v with uniform values in [-1, 1). */
static void fill(odb_rng *r, double *v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = 2.0 * odb_rng_uniform(r) - 1.0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Device buffers and host data of one shape, op and type. */
typedef struct shape_data {
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, K;
  size_t na, nx, no;          /* doubles */
  double *hA, *hX, *ref, *got, *poison;
  void *dA, *dX, *dout;
} shape_data;

/* Fresh random inputs on host and device, the CPU reference. */
static int shape_init(shape_data *s, odb_rng *r, odb_tsm_op op,
                      odb_tsm_dtype t, long M, long N, long K) {
  size_t e = t == ODB_TSM_Z ? 2 : 1;
  memset(s, 0, sizeof *s);
  s->op = op; s->t = t; s->M = M; s->N = N; s->K = K;
  s->na = e * K * M;
  s->nx = e * (op == ODB_TSM_TSMTTSM ? K * N : M * N);
  s->no = e * (op == ODB_TSM_TSMTTSM ? M * N : K * N);
  s->hA = malloc(8 * s->na); s->hX = malloc(8 * s->nx);
  s->ref = malloc(8 * s->no); s->got = malloc(8 * s->no);
  s->poison = malloc(8 * s->no);
  fill(r, s->hA, s->na);
  fill(r, s->hX, s->nx);
  for (size_t i = 0; i < s->no; ++i) s->poison[i] = NAN;
  if (odb_tsm_cpu(op, t, M, N, K, s->hA, s->hX, s->ref, 0) != ODB_OK)
    return 0;
  return gpu->ops->alloc(gpu, 8 * s->na, &s->dA) == ODB_OK &&
         gpu->ops->alloc(gpu, 8 * s->nx, &s->dX) == ODB_OK &&
         gpu->ops->alloc(gpu, 8 * s->no, &s->dout) == ODB_OK &&
         gpu->ops->to_device(gpu, s->dA, s->hA, 8 * s->na) == ODB_OK &&
         gpu->ops->to_device(gpu, s->dX, s->hX, 8 * s->nx) == ODB_OK;
}

static void shape_free(shape_data *s) {
  gpu->ops->free(gpu, s->dA); gpu->ops->free(gpu, s->dX);
  gpu->ops->free(gpu, s->dout);
  free(s->hA); free(s->hX); free(s->ref); free(s->got); free(s->poison);
}

/* Poisons the output, runs k (NULL: cuBLAS), returns the relative error
   (INFINITY on failure, with the message in why). */
static double shape_run(shape_data *s, odb_tsm_kernel *k, char *why,
                        size_t len) {
  odb_status st = gpu->ops->to_device(gpu, s->dout, s->poison, 8 * s->no);
  if (st == ODB_OK)
    st = k ? odb_tsm_kernel_run(k, s->dA, s->dX, s->dout, s->K)
           : odb_tsm_cublas(s->op, s->t, s->M, s->N, s->K, s->dA, s->dX,
                            s->dout);
  if (st == ODB_OK) st = odb_backend_sync(gpu);
  if (st == ODB_OK) st = gpu->ops->to_host(gpu, s->got, s->dout, 8 * s->no);
  if (st != ODB_OK) {
    snprintf(why, len, "%s", odb_last_error());
    return INFINITY;
  }
  why[0] = 0;
  return odb_tsm_relerr(s->got, s->ref, s->no);
}

/* ODB_TSM_ONLY_MMA=1: check the tensor-core configurations alone. */
static int only_mma(void) {
  const char *v = getenv("ODB_TSM_ONLY_MMA");
  return v && atoi(v);
}

/* Every configuration of the quick space (every qstride-th) and every
   stride-th of the full one on one shape, and cuBLAS. */
static void check_shape(odb_rng *r, odb_tsm_op op, odb_tsm_dtype t, long M,
                        long N, long K, int stride, int qstride) {
  shape_data s;
  char why[256], txt[160];
  int cc = odb_tsm_device_cc();
  int nq = odb_tsm_space_list(op, t, M, N, 0, cc, NULL, 0);
  int nf = odb_tsm_space_list(op, t, M, N, 1, cc, NULL, 0);
  odb_tsm_cfg *list = malloc(sizeof *list * (size_t)(nq + nf));
  int bad = 0, n = 0, nmma = 0;
  double worst = 0.0, t0 = now(), tc = 0.0;
  odb_tsm_space_list(op, t, M, N, 0, cc, list, nq);
  odb_tsm_space_list(op, t, M, N, 1, cc, list + nq, nf);
  if (!shape_init(&s, r, op, t, M, N, K)) {
    tap_ok(0, "%s %s M=%ld N=%ld: setup: %s", odb_tsm_op_name(op),
           odb_tsm_dtype_name(t), M, N, odb_last_error());
    free(list);
    return;
  }
  double e = shape_run(&s, NULL, why, sizeof why);
  tap_ok(e <= 1e-12, "cublas %s %s M=%ld N=%ld K=%ld: rel err %.2e %s",
         odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N, K, e, why);
  for (int i = 0; i < nq + nf; ++i) {
    odb_tsm_kernel *k = NULL;
    if (i >= nq && (i - nq) % stride) continue;
    if (i < nq && qstride > 1 && i % qstride) continue;
    if (only_mma() && !list[i].mma) continue;
    ++n;
    nmma += list[i].mma != 0;
    double c0 = now();
    odb_status cs = odb_tsm_kernel_create(&list[i], &k);
    tc += now() - c0;
    if (cs != ODB_OK) {
      e = INFINITY;
      snprintf(why, sizeof why, "%s", odb_last_error());
    } else {
      e = shape_run(&s, k, why, sizeof why);
      /* a second fresh run: atomics must not leave stale sums */
      if (e <= 1e-12) {
        double e2 = shape_run(&s, k, why, sizeof why);
        if (e2 > e) e = e2;
      }
    }
    odb_tsm_kernel_free(k);
    if (!(e <= 1e-12)) {
      if (++bad <= 5)
        tap_diag("FAIL %s %s M=%ld N=%ld %s: err %.2e %s",
                 odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N,
                 odb_tsm_cfg_text(&list[i], txt, sizeof txt), e, why);
    }
    if (e > worst) worst = e;
  }
  tap_ok(bad == 0, "%s %s M=%ld N=%ld K=%ld: %d of %d configurations (%d "
         "on the tensor cores) match the CPU reference (worst %.2e; %.1f s, "
         "%.1f s of it loading kernels)", odb_tsm_op_name(op),
         odb_tsm_dtype_name(t), M, N, K, n - bad, n, nmma, worst, now() - t0,
         tc);
  shape_free(&s);
  free(list);
}

/* The configurations named by tokens (NULL-terminated) on one shape,
   each run twice on poisoned output against the CPU reference. */
static void check_tokens(odb_rng *r, odb_tsm_op op, odb_tsm_dtype t, long M,
                         long N, long K, const char *const *toks) {
  shape_data s;
  char why[256];
  int bad = 0, n = 0;
  double worst = 0.0;
  if (!shape_init(&s, r, op, t, M, N, K)) {
    tap_ok(0, "%s %s M=%ld N=%ld: setup: %s", odb_tsm_op_name(op),
           odb_tsm_dtype_name(t), M, N, odb_last_error());
    return;
  }
  for (; toks[n]; ++n) {
    odb_tsm_cfg c;
    odb_tsm_kernel *k = NULL;
    double e = INFINITY;
    if (odb_tsm_cfg_parse(op, t, (int)M, (int)N, toks[n], &c) != ODB_OK ||
        odb_tsm_kernel_create(&c, &k) != ODB_OK) {
      snprintf(why, sizeof why, "%s", odb_last_error());
    } else {
      e = shape_run(&s, k, why, sizeof why);
      if (e <= 1e-12) {
        double e2 = shape_run(&s, k, why, sizeof why);
        if (e2 > e) e = e2;
      }
    }
    odb_tsm_kernel_free(k);
    if (!(e <= 1e-12) && ++bad <= 5)
      tap_diag("FAIL %s %s M=%ld N=%ld %s: err %.2e %s", odb_tsm_op_name(op),
               odb_tsm_dtype_name(t), M, N, toks[n], e, why);
    if (e > worst) worst = e;
  }
  tap_ok(bad == 0, "%s %s M=%ld N=%ld K=%ld: %d of %d named configurations "
         "match the CPU reference (worst %.2e)", odb_tsm_op_name(op),
         odb_tsm_dtype_name(t), M, N, K, n - bad, n, worst);
  shape_free(&s);
}

/* Gauss's products and C in bands, on shapes that the mappings do not
   divide and K no multiple of the chunk. */
static void check_gauss(odb_rng *r, long K) {
  static const char *const t64[] = { "m2w1x2g1r16s4lb0z3h2",
    "m3w2x2g1r16s4lb0z3h2", "m3w1x4g1r16s4gb0z3h4", "m3w2x2g1r16s4lb0z3",
    NULL };
  static const char *const t48[] = { "m3w2x2g1r16s4lb0z3h2",
    "m3w1x2g1r32s2gb0z3h2", "m4w1x2g1r32s3lb0z3", NULL };
  static const char *const m40[] = { "m3w1x1g1r16s4Rb0z3",
    "m4w1x1g1r32s3Rb0z3", "m3w1x2g2r32s2Sb0z3", "m2w2x1g1r32s3Sb0z3",
    NULL };
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 64, 64, K, t64);
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 48, 40, K, t48);
  check_tokens(r, ODB_TSM_TSMM, ODB_TSM_Z, 33, 40, K, m40);
}

/*
** Chunks from the counter (sched=dyn), each kernel run twice (the second
** run needs the counter reset by the first's last block): shapes that the
** mappings do not divide, K no multiple of the chunk, and a K of fewer
** chunks than blocks (most blocks find theirs past the end at once).
*/
static void check_dyn(odb_rng *r, long K) {
  static const char *const z16[] = { "m3w2x4g2r32s4lb0d",
    "m3w1x2g2r64s3lb0d", "m3w2x4g2r32s4lb0dp256", NULL };
  static const char *const z13[] = { "m2w1x2g1r32s3lb0d", NULL };
  static const char *const d24[] = { "m3w1x4g2r32s3gb0d",
    "m2w1x1g1r64s3lb2d", NULL };
  static const char *const z48[] = { "m4w1x2g1r32s3lb0z3d", NULL };
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, K, z16);
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 13, 11, K, z13);
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_D, 24, 40, K, d24);
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 48, 40, K, z48);
  check_tokens(r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 16, 16, 1031, z16);
}

/* {====== the quick space of wide complex shapes */

/* Index of token tok in the n tokens of toks, -1 when absent. */
static int token_at(char (*toks)[64], int n, const char *tok) {
  for (int i = 0; i < n; ++i)
    if (strcmp(toks[i], tok) == 0) return i;
  return -1;
}

/* The tokens of a space (at most max) into toks; how many there are. */
static int space_tokens(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                        int full, int cc, char (*toks)[64], int max) {
  odb_tsm_cfg *list = malloc(sizeof *list * (size_t)max);
  int n = list ? odb_tsm_space_list(op, t, M, N, full, cc, list, max) : 0;
  for (int i = 0; i < n && i < max; ++i)
    odb_tsm_cfg_token(&list[i], toks[i], sizeof toks[i]);
  free(list);
  return n;
}

/*
** The spaces themselves, on sm_90, without a device: exact sizes of the
** quick space (complex 64 x 64 widened, the others as they were), no
** token twice, each token read back to itself, the quick space within
** the full one, the quick configurations of narrower shapes kept, and
** every kind of the widened space present.
*/
static void check_space(void) {
  static const struct { odb_tsm_op op; odb_tsm_dtype t; int M, N, n; }
  sizes[] = {
    { ODB_TSM_TSMTTSM, ODB_TSM_Z, 64, 64, 206 },
    { ODB_TSM_TSMM, ODB_TSM_Z, 64, 64, 187 },
    { ODB_TSM_TSMTTSM, ODB_TSM_Z, 48, 48, 317 },
    { ODB_TSM_TSMM, ODB_TSM_Z, 48, 48, 398 },
    { ODB_TSM_TSMTTSM, ODB_TSM_Z, 32, 32, 671 },
    { ODB_TSM_TSMM, ODB_TSM_Z, 32, 32, 623 },
    { ODB_TSM_TSMTTSM, ODB_TSM_Z, 31, 31, 136 },   /* not wide */
    { ODB_TSM_TSMTTSM, ODB_TSM_Z, 32, 8, 249 },    /* not wide */
    { ODB_TSM_TSMTTSM, ODB_TSM_D, 64, 64, 128 },   /* real: as it was */
    { ODB_TSM_TSMM, ODB_TSM_D, 64, 64, 204 },
  };
  /* the quick space of complex A^T B 64 x 64 before it was widened */
  static const char *const old64[] = { "m2w2x4g1r32s3lb0",
    "m3w2x4g1r32s3lb0", "m2w2x4g1r32s3lb0d", "m3w2x4g1r32s3lb0d",
    "m3w2x2g1r16s4lb0z3", "m3w2x2g1r16s4lb0z3d", "m3w1x4g1r32s3lb0z3",
    "m3w1x4g1r32s3lb0z3d", "m2w1x2g1r16s4lb0z3h2", "m3w1x2g1r16s4lb0z3h2",
    "m3w2x2g1r16s4lb0z3h2", "m3w1x4g1r16s4lb0z3h2", "m3w2x2g1r32s2lb0z3h2",
    "m3w1x2g1r32s2lb0z3h2" };
  enum { MAXT = 12000 };
  char (*q)[64] = malloc(sizeof *q * MAXT), (*f)[64] = malloc(sizeof *f * MAXT);
  for (int i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); ++i) {
    int nq = space_tokens(sizes[i].op, sizes[i].t, sizes[i].M, sizes[i].N, 0,
                          90, q, MAXT);
    int nf = space_tokens(sizes[i].op, sizes[i].t, sizes[i].M, sizes[i].N, 1,
                          90, f, MAXT);
    int dup = 0, bad = 0, outside = 0;
    for (int j = 0; j < nq && j < MAXT; ++j) {
      odb_tsm_cfg c;
      char back[64];
      dup += token_at(q, j, q[j]) >= 0;
      if (odb_tsm_cfg_parse(sizes[i].op, sizes[i].t, sizes[i].M, sizes[i].N,
                            q[j], &c) != ODB_OK ||
          strcmp(odb_tsm_cfg_token(&c, back, sizeof back), q[j]) != 0)
        ++bad;
      outside += token_at(f, nf < MAXT ? nf : MAXT, q[j]) < 0;
    }
    tap_ok(nq == sizes[i].n && !dup && !bad && !outside,
           "quick space %s %s %d x %d: %d configurations (expected %d), %d "
           "twice, %d not read back, %d outside the full space (%d)",
           odb_tsm_op_name(sizes[i].op), odb_tsm_dtype_name(sizes[i].t),
           sizes[i].M, sizes[i].N, nq, sizes[i].n, dup, bad, outside, nf);
  }
  int nq = space_tokens(ODB_TSM_TSMTTSM, ODB_TSM_Z, 64, 64, 0, 90, q, MAXT);
  int kept = 0;
  for (int j = 0; j < (int)(sizeof old64 / sizeof old64[0]); ++j)
    kept += token_at(q, nq, old64[j]) >= 0;
  tap_ok(kept == (int)(sizeof old64 / sizeof old64[0]), "complex A^T B "
         "64 x 64: %d of the %d configurations of the narrower quick space "
         "kept", kept, (int)(sizeof old64 / sizeof old64[0]));
  /* every kind of the widened space: each form, mma shape, tile, row
     groups, chunk, stages, bands, schedule, source of C and grid */
  /* form: 0 four products, 1 Gauss's three, -1 either */
  static const struct { odb_tsm_op op; int form; const char *what, *sub; }
  kinds[] = {
    { ODB_TSM_TSMTTSM, 0, "m16n8k8", "m3w" },
    { ODB_TSM_TSMTTSM, 0, "warp tiles 8 x 2", "w8x2" },
    { ODB_TSM_TSMTTSM, 0, "chunks of 16 rows", "r16" },
    { ODB_TSM_TSMTTSM, 0, "2 stages", "s2l" },
    { ODB_TSM_TSMTTSM, 0, "4 stages", "s4l" },
    { ODB_TSM_TSMTTSM, 0, "chunks from the counter", "d" },
    { ODB_TSM_TSMTTSM, 1, "m16n8k8", "m3w" },
    { ODB_TSM_TSMTTSM, 1, "m16n8k16", "m4w" },
    { ODB_TSM_TSMTTSM, 1, "2 stages", "s2l" },
    { ODB_TSM_TSMTTSM, 1, "chunks of 64 rows", "r64" },
    { ODB_TSM_TSMTTSM, 1, "2 row groups", "g2" },
    { ODB_TSM_TSMTTSM, 1, "C in 2 bands", "z3h2" },
    { ODB_TSM_TSMTTSM, 1, "C in 4 bands", "z3h4" },
    { ODB_TSM_TSMTTSM, 1, "chunks from the counter", "d" },
    { ODB_TSM_TSMM, 0, "m16n8k16", "m4w" },
    { ODB_TSM_TSMM, 0, "2 row groups", "g2" },
    { ODB_TSM_TSMM, 0, "chunks of 16 rows", "r16" },
    { ODB_TSM_TSMM, 0, "C in shared memory", "Sb" },
    { ODB_TSM_TSMM, 0, "a block per chunk", "b-1" },
    { ODB_TSM_TSMM, 1, "m16n8k16", "m4w" },
    { ODB_TSM_TSMM, 1, "4 stages", "s4" },
    { ODB_TSM_TSMM, 1, "C in shared memory", "Sb" },
    { ODB_TSM_TSMM, 1, "a block per chunk", "b-1" },
  };
  for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); ++k) {
    int n = space_tokens(kinds[k].op, ODB_TSM_Z, 64, 64, 0, 90, q, MAXT), m = 0;
    for (int j = 0; j < n && j < MAXT; ++j) {
      const char *hit = strstr(q[j], kinds[k].sub);
      if (kinds[k].form >= 0 && (strstr(q[j], "z3") != NULL) != kinds[k].form)
        continue;
      /* "d" names the schedule only as a suffix */
      if (hit && (strcmp(kinds[k].sub, "d") != 0 || hit[1] == 0)) ++m;
    }
    tap_ok(m > 0, "quick space %s z 64 x 64 has %s with %s (%d)",
           odb_tsm_op_name(kinds[k].op),
           kinds[k].form ? "Gauss's three products" : "four products",
           kinds[k].what, m);
  }
  /* the narrower quick space on an older device: no sm_90 shape */
  nq = space_tokens(ODB_TSM_TSMTTSM, ODB_TSM_Z, 64, 64, 0, 80, q, MAXT);
  int new90 = 0;
  for (int j = 0; j < nq && j < MAXT; ++j) new90 += q[j][1] != '1';
  tap_ok(nq > 0 && new90 == 0, "quick space on sm_80: %d configurations, "
         "%d of them sm_90 mma shapes", nq, new90);
  free(q);
  free(f);
}

/*
** The widened quick space on shapes its mappings do not divide (complex
** 40 x 33 and 33 x 40, K no multiple of a chunk): a sample that holds
** every value of every option at least once, and every pair of the form
** (four products or Gauss's three) with another option, each run twice
** against the CPU reference. The 64 x 64 of test_shapes runs all of it.
*/
static void check_wide(odb_rng *r, long K) {
  static const long shapes[][2] = { { 40, 33 }, { 33, 40 } };
  enum { MAXC = 4000, NF = 12 };
  odb_tsm_cfg *list = malloc(sizeof *list * MAXC);
  for (int s = 0; s < 2; ++s)
    for (int op = 0; op < 2; ++op) {
      int cc = odb_tsm_device_cc();
      int n = odb_tsm_space_list((odb_tsm_op)op, ODB_TSM_Z, (int)shapes[s][0],
                                 (int)shapes[s][1], 0, cc, list, MAXC);
      static char seen[NF][2][64];   /* option, form, value + 1 */
      const char *toks[MAXC + 1];
      static char buf[MAXC][64];
      int m = 0;
      memset(seen, 0, sizeof seen);
      if (n > MAXC) n = MAXC;
      for (int i = 0; i < n; ++i) {
        const odb_tsm_cfg *c = &list[i];
        int v[NF] = { c->mma, c->wm, c->wn, c->rg, c->chunk / 16,
                      c->stages, c->split, c->dyn, c->csrc,
                      c->blocks_per_sm + 1, c->ostage, c->reduce };
        int g = c->gauss != 0, fresh = 0;
        for (int a = 0; a < NF; ++a) {
          int x = v[a] & 63;
          if (!seen[a][g][x]) fresh = seen[a][g][x] = 1;
        }
        if (fresh) {
          odb_tsm_cfg_token(c, buf[m], sizeof buf[m]);
          list[m] = *c;
          toks[m] = buf[m];
          ++m;
        }
      }
      toks[m] = NULL;
      odb_tsm_prefetch(list, m);
      tap_diag("wide complex %s %ld x %ld: %d of the %d quick configurations "
               "cover every option's values", odb_tsm_op_name((odb_tsm_op)op),
               shapes[s][0], shapes[s][1], m, n);
      check_tokens(r, (odb_tsm_op)op, ODB_TSM_Z, shapes[s][0], shapes[s][1],
                   K, toks);
    }
  free(list);
}

/* }====== */

/* Bad input is refused with a message. */
static void check_bad(void) {
  odb_tsm_cfg c;
  odb_tsm_kernel *k = NULL;
  double x;
  memset(&c, 0, sizeof c);
  c.op = ODB_TSM_TSMTTSM; c.M = 65; c.N = 4; c.tm = c.tn = 1; c.unroll = 1;
  c.block = 256; c.blocks_per_sm = 2;
  tap_ok(odb_tsm_kernel_create(&c, &k) == ODB_ERR_ARG &&
         strstr(odb_last_error(), "1..64"), "M = 65 refused: %s",
         odb_last_error());
  c.M = 8; c.tm = 16;
  tap_ok(odb_tsm_kernel_create(&c, &k) == ODB_ERR_ARG, "tile larger than M "
         "refused: %s", odb_last_error());
  tap_ok(odb_tsm_cublas(ODB_TSM_TSMM, ODB_TSM_D, 4, 4, 0, &x, &x, &x)
         == ODB_ERR_ARG, "cublas K = 0 refused: %s", odb_last_error());
}

/* qsort order of seconds, ascending. */
static int cmp_sec(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* odb_tsm_time_race on a small complex A^T B: a kernel of the quick space
   in turn with cuBLAS. Each median is the middle of its own runs, every
   run took time, the output of the last round (cuBLAS) matches the CPU
   reference, and 0 or 5 kernels are refused. */
static void check_race(odb_rng *r) {
  shape_data sd;
  odb_tsm_cfg cfg;
  odb_tsm_kernel *ks[2] = { NULL, NULL };
  double med[2], each[10], one[5], err;
  int ok = shape_init(&sd, r, ODB_TSM_TSMTTSM, ODB_TSM_Z, 13, 11, 3001) &&
           odb_tsm_space_list(ODB_TSM_TSMTTSM, ODB_TSM_Z, 13, 11, 0,
                              odb_tsm_device_cc(), &cfg, 1) > 0 &&
           odb_tsm_kernel_create(&cfg, &ks[0]) == ODB_OK;
  odb_status st = ok ? odb_tsm_time_race(ks, 2, ODB_TSM_TSMTTSM, ODB_TSM_Z,
                                         13, 11, 3001, sd.dA, sd.dX,
                                         sd.dout, 5, med, each)
                     : ODB_ERR_BACKEND;
  tap_ok(st == ODB_OK, "race of a kernel and cuBLAS ran: %s",
         st == ODB_OK ? "" : odb_last_error());
  if (st == ODB_OK) {
    int mid = 1, pos = 1;
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 5; ++i) {
        one[i] = each[2 * i + j];
        pos &= one[i] > 0;
      }
      qsort(one, 5, sizeof one[0], cmp_sec);
      mid &= one[2] == med[j];
    }
    tap_ok(pos && mid, "race: every run timed (%d), each median the middle "
           "of its runs (%d): %.3g and %.3g s", pos, mid, med[0], med[1]);
    err = odb_backend_sync(gpu) == ODB_OK &&
          gpu->ops->to_host(gpu, sd.got, sd.dout, 8 * sd.no) == ODB_OK
            ? odb_tsm_relerr(sd.got, sd.ref, sd.no) : INFINITY;
    tap_ok(err <= 1e-12, "race: the last round's product matches the CPU "
           "reference (%.2e)", err);
  }
  tap_ok(odb_tsm_time_race(ks, 0, ODB_TSM_TSMTTSM, ODB_TSM_Z, 13, 11, 3001,
                           sd.dA, sd.dX, sd.dout, 5, med, NULL)
         == ODB_ERR_ARG &&
         odb_tsm_time_race(ks, 5, ODB_TSM_TSMTTSM, ODB_TSM_Z, 13, 11, 3001,
                           sd.dA, sd.dX, sd.dout, 5, med, NULL)
         == ODB_ERR_ARG, "race of 0 or 5 kernels refused: %s",
         odb_last_error());
  odb_tsm_kernel_free(ks[0]);
  shape_free(&sd);
}

static const long test_shapes[][3] = {
  { 7, 5, 100003 }, { 13, 11, 65537 }, { 1, 1, 100003 },
  { 64, 64, 20011 }, { 3, 64, 30011 }, { 33, 17, 40009 },
  { 24, 40, 50021 }, { 64, 1, 30011 }, { 2, 61, 20011 },
};
#define NTEST ((int)(sizeof test_shapes / sizeof test_shapes[0]))
static const long sanitize_shapes[][3] = { { 13, 11, 3001 },
                                           { 32, 24, 2053 } };
static const long roof_sq[] = { 1, 2, 4, 8, 16, 32, 64, 3, 12, 24, 48 };
static const long roof_ne[][2] = { { 4, 16 }, { 16, 4 }, { 32, 8 } };

/* ODB_TSM_CASES="tsmttsm:z,tsmm:z": only these operations and types in
   --roofline (all when unset). */
static int case_on(int op, int t) {
  const char *cs = getenv("ODB_TSM_CASES");
  char key[16];
  if (!cs || !*cs) return 1;
  snprintf(key, sizeof key, "%s:%s", odb_tsm_op_name((odb_tsm_op)op),
           odb_tsm_dtype_name((odb_tsm_dtype)t));
  for (const char *q = strstr(cs, key); q; q = strstr(q + 1, key))
    if ((q == cs || q[-1] == ',') && (q[strlen(key)] == ',' ||
                                      q[strlen(key)] == '\0'))
      return 1;
  return 0;
}

/* The shapes of --roofline: ODB_TSM_WIDTHS="16,32x8" gives these (M = N,
   or M x N), else roof_sq and roof_ne. Returns how many (at most 32). */
static int roof_shapes(long (*ms)[2]) {
  const char *ws = getenv("ODB_TSM_WIDTHS");
  int n = 0;
  if (!ws) {
    for (int s = 0; s < 14; ++s) {
      ms[n][0] = s < 11 ? roof_sq[s] : roof_ne[s - 11][0];
      ms[n][1] = s < 11 ? roof_sq[s] : roof_ne[s - 11][1];
      ++n;
    }
    return n;
  }
  for (const char *q = ws; *q && n < 32;) {   /* "16" or "32x8" */
    char *end;
    long w = strtol(q, &end, 10), w2 = w;
    if (end == q) break;
    if (*end == 'x') w2 = strtol(end + 1, &end, 10);
    if (w >= 1 && w <= 64 && w2 >= 1 && w2 <= 64) {
      ms[n][0] = w;
      ms[n][1] = w2;
      ++n;
    }
    q = *end ? end + 1 : end;
  }
  return n;
}

/* Full-space stride of test shape i. */
static int test_stride(int i) {
  const char *full = getenv("ODB_TSM_FULL");
  if (full && atoi(full)) return 1;
  return i == 0 ? 16 : 61;
}

/* {====== the kernel cache filled first, in parallel (odb_tsm_prefetch) */

static int roof_list(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                     odb_tsm_cfg *list, int max);

/* Compiles, a thread per CPU, the configurations the test (roof = 0) or
   the roofline table (1) will use; returns how many were compiled. */
static int precompile(int roof) {
  static odb_tsm_cfg list[1024];
  long rs[32][2];
  int nrs = roof ? roof_shapes(rs) : 0, done = 0;
  for (int s = 0; s < (roof ? nrs : NTEST); ++s) {
    long M = roof ? rs[s][0] : test_shapes[s][0];
    long N = roof ? rs[s][1] : test_shapes[s][1];
    for (int op = 0; op < 2; ++op)
      for (int t = 0; t < 2; ++t) {
        if (roof && !case_on(op, t)) continue;
        int cc = odb_tsm_device_cc();
        int nq = roof ? roof_list(op, t, M, N, list, 1024)
                      : odb_tsm_space_list(op, t, M, N, 0, cc, NULL, 0);
        int nf = roof ? 0 : odb_tsm_space_list(op, t, M, N, 1, cc, NULL, 0);
        odb_tsm_cfg *all = roof ? list : malloc(sizeof *all *
                                                (size_t)(nq + nf + 1));
        int n = 0;
        if (!all) return done;
        if (!roof) {
          odb_tsm_space_list(op, t, M, N, 0, cc, all, nq);
          odb_tsm_space_list(op, t, M, N, 1, cc, all + nq, nf);
        }
        if (nq > 1024) nq = 1024;
        for (int i = 0; i < nq + nf; ++i) {   /* those the test runs */
          if (i >= nq && (i - nq) % test_stride(s)) continue;
          if (only_mma() && !all[i].mma) continue;
          all[n++] = all[i];
        }
        done += odb_tsm_prefetch(all, n);
        if (!roof) free(all);
      }
  }
  return done;
}

/* }====== */

/* {====== --roofline */

/* Fills n doubles of device memory d with random data: one random host
   block, then doubling device copies. */
static int big_fill(odb_rng *r, double *d, size_t n) {
  size_t blk = (size_t)1 << 22, done;
  double *h = malloc(8 * blk);
  fill(r, h, blk);
  if (blk > n) blk = n;
  if (gpu->ops->to_device(gpu, d, h, 8 * blk) != ODB_OK) return 0;
  free(h);
  for (done = blk; done < n;) {
    size_t c = done < n - done ? done : n - done;
    if (gpu->ops->copy(gpu, d + done, d, 8 * c) != ODB_OK) return 0;
    done += c;
  }
  return odb_backend_sync(gpu) == ODB_OK;
}

static odb_rng *roof_rng;   /* the generator of --roofline */

/* Timed runs per configuration: ODB_TSM_REPS, else 5. */
static int roof_reps(void) {
  const char *r = getenv("ODB_TSM_REPS");
  return r && atoi(r) > 0 ? atoi(r) : 5;
}

/* With ODB_TSM_DYN=1, each of the n configurations of list that may hand
   out its chunks from a counter (sched=dyn) is followed at the end by
   that twin, for races of the two schedules; returns the new count. */
static int roof_dyn(int n, odb_tsm_cfg *list, int max) {
  const char *dv = getenv("ODB_TSM_DYN");
  int m = n;
  if (!dv || atoi(dv) == 0) return n;
  for (int i = 0; i < n && m < max; ++i) {
    odb_tsm_cfg c = list[i];
    c.dyn = 1;
    if (!list[i].dyn && odb_tsm_cfg_check(&c) == ODB_OK) list[m++] = c;
  }
  return m;
}

/* The configurations --roofline races on a shape: the tokens of
   ODB_TSM_TOKENS ("m2w1x2g1r64s3Rb0o,m2w1x2g1r64s3Rb0"; those that do not
   fit the shape are left out), else the quick space. */
static int roof_list(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                     odb_tsm_cfg *list, int max) {
  const char *ts = getenv("ODB_TSM_TOKENS");
  char tok[64];
  int n = 0;
  if (!ts || !*ts)
    return roof_dyn(odb_tsm_space_list(op, t, M, N, 0, odb_tsm_device_cc(),
                                       list, max), list, max);
  while (*ts && n < max) {
    size_t l = strcspn(ts, ",");
    if (l < sizeof tok) {
      memcpy(tok, ts, l);
      tok[l] = 0;
      if (odb_tsm_cfg_parse(op, t, (int)M, (int)N, tok, &list[n]) == ODB_OK &&
          odb_tsm_cfg_min_cc(&list[n]) <= odb_tsm_device_cc())
        ++n;
    }
    ts += l + (ts[l] == ',');
  }
  return n;
}

/*
** Times k for the race of --roofline: its median seconds, and ratio 0.
** With ODB_TSM_PAIRED=1 it runs in turn with cuBLAS instead (the same
** clocks for both: at the power cap the clock follows the load), *ratio
** is cuBLAS's time over k's, and *sec k's time scaled to the clocks of
** the shape's first such pair (cuBLAS's median then over cuBLAS's now).
*/
static odb_status time_cfg(odb_tsm_kernel *k, odb_tsm_op op, odb_tsm_dtype t,
                           long M, long N, long K, const double *A,
                           const double *X, double *out, double *sec,
                           double *ratio) {
  static double ref;   /* cuBLAS in the shape's first pair */
  static long ref_key = -1;
  const char *pv = getenv("ODB_TSM_PAIRED");
  long key = ((long)op * 2 + t) * 100000 + M * 100 + N;
  *ratio = 0;
  if (!pv || atoi(pv) == 0)
    return odb_tsm_time(k, op, t, M, N, K, A, X, out, roof_reps(), sec);
  odb_tsm_kernel *ks[2] = { k, NULL };
  double med[2];
  ODB_TRY(odb_tsm_time_race(ks, 2, op, t, M, N, K, A, X, out, roof_reps(),
                            med, NULL));
  if (key != ref_key) {
    ref_key = key;
    ref = med[1];
  }
  *ratio = med[1] / med[0];
  *sec = med[0] * ref / med[1];
  return ODB_OK;
}

/* Tunes one shape over the quick space and prints one table row; with
   ODB_TSM_VERBOSE=1 also a line for every configuration. */
static void roof_shape(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                       long K, double *A, double *X, double *out, double bw,
                       double peak, double *stat) {
  static odb_tsm_cfg list[1024];
  odb_tsm_cfg best, bestf;
  char txt[160];
  const char *verb = getenv("ODB_TSM_VERBOSE");
  int n = roof_list(op, t, M, N, list, 1024), bregs = 0, nm = 0;
  double bt = INFINITY, bf = INFINITY, tb = INFINITY, t0 = now(), tc = 0;
  double fl = odb_tsm_flops(t, M, N, K), by = odb_tsm_bytes(t, M, N, K);
  double roof = fmin(fl / by * bw * 1e9, peak);
  /* each configuration runs on fresh small matrices against the CPU
     reference first; one that does not match is left out of the race */
  shape_data chk;
  char why[256];
  int have_chk = shape_init(&chk, roof_rng, op, t, M, N, 4099);
  if (n > 1024) n = 1024;
  for (int i = 0; i < n; ++i) {
    odb_tsm_kernel *k = NULL;
    double sec, c0 = now(), err, ratio;
    if (odb_tsm_kernel_create(&list[i], &k) != ODB_OK) {
      printf("# %s\n", odb_last_error());
      continue;
    }
    tc += now() - c0;
    nm += list[i].mma != 0;
    if (have_chk && !((err = shape_run(&chk, k, why, sizeof why)) <= 1e-12)) {
      printf("# WRONG (left out): %s: err %.2e %s\n",
             odb_tsm_cfg_text(&list[i], txt, sizeof txt), err, why);
      odb_tsm_kernel_free(k);
      continue;
    }
    if (time_cfg(k, op, t, M, N, K, A, X, out, &sec, &ratio) == ODB_OK) {
      if (verb && atoi(verb))
        printf("#   %-7s %s %3ld %3ld %8.1f GF/s %5.1f%% x%.3f regs=%d "
               "spill=%d fit=%d  %s\n", odb_tsm_op_name(op),
               odb_tsm_dtype_name(t), M, N, fl / sec * 1e-9,
               100 * fl / sec / roof, ratio, odb_tsm_kernel_regs(k),
               odb_tsm_kernel_spill(k), odb_tsm_kernel_fit(k),
               odb_tsm_cfg_text(&list[i], txt, sizeof txt));
      if (sec < bt) {
        bt = sec;
        best = list[i];
        bregs = odb_tsm_kernel_regs(k);
      }
      if (!list[i].mma && sec < bf) {
        bf = sec;
        bestf = list[i];
      }
    }
    odb_tsm_kernel_free(k);
  }
  /* the winner again, in turn with cuBLAS: both see the same clocks */
  if (bt < INFINITY) {
    odb_tsm_kernel *ks[2] = { NULL, NULL };
    double med[2];
    if (odb_tsm_kernel_create(&best, &ks[0]) == ODB_OK &&
        odb_tsm_time_race(ks, 2, op, t, M, N, K, A, X, out,
                          2 * roof_reps() + 1, med, NULL) == ODB_OK) {
      bt = med[0];
      tb = med[1];
    } else {
      printf("# cublas: %s\n", odb_last_error());
    }
    odb_tsm_kernel_free(ks[0]);
  }
  double g = fl / bt, gb = fl / tb;
  char tok[64] = "-";
  if (bt < INFINITY) odb_tsm_cfg_token(&best, tok, sizeof tok);
  printf("%-7s %s %3ld %3ld %10ld %9.1f %6.1f%% %9.1f %6.1f%% %5.2f  "
         "%s [%s] regs=%d (%d cfgs, %d mma, compile %.1fs, all %.1fs)\n",
         odb_tsm_op_name(op), odb_tsm_dtype_name(t), M, N, K, g * 1e-9,
         100 * g / roof, gb * 1e-9, 100 * gb / roof, tb / bt,
         bt < INFINITY ? odb_tsm_cfg_text(&best, txt, sizeof txt) : "-",
         tok, bregs, n, nm, tc, now() - t0);
  if (have_chk) shape_free(&chk);
  if (best.mma && bf < INFINITY)
    printf("#   best on the FMA units: %.1f GF/s %.1f%% %s\n", fl / bf * 1e-9,
           100 * fl / bf / roof, odb_tsm_cfg_text(&bestf, txt, sizeof txt));
  fflush(stdout);
  stat[0] = 100 * g / roof;
  stat[1] = tb / bt;
}

/* The roofline table: M = N and a few M != N, both ops and types. */
static int roofline(odb_rng *r, double limit) {
  odb_device_info info;
  double bw = 0, peak, stat[2], t0 = now();
  int nsq = 0, below = 0, slower = 0;
  size_t cap = (size_t)1 << 30;   /* doubles: 2^29 complex entries */
  void *A = NULL, *X = NULL, *out = NULL;
  if (odb_backend_query(gpu, &info) != ODB_OK ||
      odb_backend_copy_bandwidth(gpu, &bw) != ODB_OK) {
    printf("Bail out! %s\n", odb_last_error());
    return 1;
  }
  /* FP64 peak: the tensor cores' rate, twice that of the FMA units */
  peak = info.sm_count * info.clock_mhz * 1e6 * 256.0;
  if (!(peak > 0)) peak = INFINITY;
  printf("# %s: %d SMs, %.0f MHz, copy bandwidth %.1f GB/s, FP64 peak "
         "%.1f GFLOP/s (tensor cores; FMA units half)\n", info.name, info.sm_count, info.clock_mhz, bw,
         peak * 1e-9);
  while (cap >= ((size_t)1 << 24)) {
    if (gpu->ops->alloc(gpu, 8 * cap, &A) == ODB_OK &&
        gpu->ops->alloc(gpu, 8 * cap, &X) == ODB_OK &&
        gpu->ops->alloc(gpu, 8 * cap, &out) == ODB_OK)
      break;
    gpu->ops->free(gpu, A); gpu->ops->free(gpu, X); gpu->ops->free(gpu, out);
    A = X = out = NULL;
    cap /= 2;
  }
  if (!A || !big_fill(r, A, cap) || !big_fill(r, X, cap)) {
    printf("Bail out! device memory: %s\n", odb_last_error());
    return 1;
  }
  printf("%-7s %s %3s %3s %10s %9s %7s %9s %7s %5s  best\n", "op", "t", "M",
         "N", "K", "GF/s", "roof", "cublasGF", "roof", "ratio");
  long rs[32][2];
  int ns = roof_shapes(rs);
  for (int s = 0; s < ns; ++s) {
    long M = rs[s][0], N = rs[s][1];
    for (int op = 0; op < 2; ++op)
      for (int t = 0; t < 2; ++t) {
        size_t e = t ? 2 : 1;
        if (!case_on(op, t)) continue;
        long K = ((long)1 << 29) / M;
        long wide = M > N ? M : N;
        if ((size_t)K * wide * e > cap) K = (long)(cap / (wide * e));
        if (now() - t0 > limit) {
          printf("# time limit reached\n");
          return 0;
        }
        roof_shape((odb_tsm_op)op, (odb_tsm_dtype)t, M, N, K, A, X, out, bw,
                   peak, stat);
        if (M == N) {
          ++nsq;
          if (stat[0] < (M <= 32 ? 90.0 : 75.0)) {
            ++below;
            printf("#   below the target of %d%%\n", M <= 32 ? 90 : 75);
          }
        }
        if (stat[1] < 1.0) {
          ++slower;
          printf("#   slower than cuBLAS\n");
        }
      }
  }
  printf("# targets: %d of %d square shapes below their roofline target "
         "(90%% up to 32, 75%% up to 64); %d shapes slower than cuBLAS\n",
         below, nsq, slower);
  return 0;
}

/* }====== */

int main(int argc, char **argv) {
  odb_ctx_opts o = {0};
  odb_ctx *ctx = NULL;
  odb_rng r;
  uint64_t seed = (uint64_t)time(NULL);
  odb_status st;
  if (argc > 1 && strcmp(argv[1], "--space") == 0) {
    /* the tuning spaces alone: no device needed */
    check_space();
    return tap_done();
  }
  o.seed = seed;
  o.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&o, &ctx) != ODB_OK) {
    printf("Bail out! odb_ctx_create: %s\n", odb_last_error());
    return 1;
  }
  st = odb_kernels_register(ctx);
  gpu = odb_ctx_backend(ctx, "cuda");
  if (st != ODB_OK || !gpu) {
    odb_ctx_destroy(ctx);
    printf("1..0 # SKIP no GPU\n");
    return 77;
  }
  odb_rng_seed(&r, seed);
  if (argc == 1 || (argc > 1 && (strcmp(argv[1], "--roofline") == 0 ||
                                   strcmp(argv[1], "--fill-cache") == 0))) {
    /* the kernels compiled first, in parallel (ODB_TSM_PRECOMPILE=0: not;
       --sanitize's shapes are others) */
    const char *pc = getenv("ODB_TSM_PRECOMPILE");
    if (!pc || atoi(pc) != 0) {
      double t0 = now();
      int n;
      /* said first: on an empty kernel cache this takes minutes, with no
         other output */
      printf("# compiling the kernels first, in parallel (minutes on an "
             "empty kernel cache)\n");
      fflush(stdout);
      n = precompile(argc > 1);
      printf("# precompiled %d kernels in %.1f s\n", n, now() - t0);
      fflush(stdout);
    }
  }
  if (argc > 1 && strcmp(argv[1], "--fill-cache") == 0) {
    /* the roofline scenario's quick space, compiled into the disk cache */
    odb_ctx_destroy(ctx);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "--roofline") == 0) {
    roof_rng = &r;
    int rc = roofline(&r, argc > 2 ? atof(argv[2]) : 1e9);
    odb_ctx_destroy(ctx);
    return rc;
  }
  tap_diag("seed %llu", (unsigned long long)seed);
  if (argc > 1 && strcmp(argv[1], "--sanitize") == 0) {
    /* for compute-sanitizer: short matrices, a sample of each space;
       `--sanitize shapes` or `--sanitize race` runs one half (each half
       takes minutes under racecheck), `--sanitize dyn` the sched=dyn
       kernels alone */
    const char *part = argc > 2 ? argv[2] : "all";
    if (strcmp(part, "dyn") == 0) {   /* the counter's kernels alone */
      check_dyn(&r, 3001);
      odb_ctx_destroy(ctx);
      return tap_done();
    }
    if (strcmp(part, "race") != 0)
      for (int i = 0; i < 2; ++i)
        for (int op = 0; op < 2; ++op)
          for (int t = 0; t < 2; ++t)
            check_shape(&r, (odb_tsm_op)op, (odb_tsm_dtype)t,
                        sanitize_shapes[i][0], sanitize_shapes[i][1],
                        sanitize_shapes[i][2], 97, 5);
    if (strcmp(part, "shapes") != 0) {
      check_wide(&r, 1037);
      check_gauss(&r, 1037);
      check_dyn(&r, 3001);
      check_race(&r);
    }
    odb_ctx_destroy(ctx);
    return tap_done();
  }
  for (int i = 0; i < NTEST; ++i)
    for (int op = 0; op < 2; ++op)
      for (int t = 0; t < 2; ++t)
        check_shape(&r, (odb_tsm_op)op, (odb_tsm_dtype)t, test_shapes[i][0],
                    test_shapes[i][1], test_shapes[i][2], test_stride(i), 1);
  check_space();
  check_wide(&r, 5003);
  check_gauss(&r, 30011);
  check_dyn(&r, 200003);
  check_race(&r);
  check_bad();
  odb_ctx_destroy(ctx);
  return tap_done();
}
