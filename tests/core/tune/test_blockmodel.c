/* test_blockmodel.c - the working-set model and the "model" strategy. */
#include "odebench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/*
** Test vectors are the worked examples of N. Kalinnik, "Effizientes Lösen
** von Anfangswertproblemen gewöhnlicher Differentialgleichungssysteme
** mithilfe von Autotuning-Techniken" (PhD thesis, Bayreuth, 2015), Ch.
** 8.4.2, 8.5.1, 9.4.2 and 9.5.1, on synthetic hwloc topologies of the
** machines of its Appendix B.
*/

/* Opteron 6172 "Leo": 4 packages of 2 dies with 6 cores, 6 MiB L3 per die. */
#define LEO "pack:4 l3:2(size=6MiB) l2:6(size=512KiB) l1d:1(size=64KiB) " \
            "core:1 pu:1"
/* Westmere-EX in the SGI UV: 16 packages of 10 cores, 30 MiB L3 each. */
#define UV "pack:16 l3:1(size=30MiB) l2:10(size=256KiB) l1d:1(size=32KiB) " \
           "core:1 pu:1"
/* The same with the appendix's (mistyped) 64 KiB L2. */
#define UV64 "pack:16 l3:1(size=30MiB) l2:10(size=64KiB) " \
             "l1d:1(size=32KiB) core:1 pu:1"
/* Opteron DP 246: 2 sockets of one core, 1 MiB L2, 64 KiB L1. */
#define OPT246 "pack:2 l2:1(size=1MiB) l1d:1(size=64KiB) core:1 pu:1"

/* BRUSS2D with N = 2000 (n = 8e6, d = 4000), Lobatto IIIC(8). */
static const odb_bm_params leo_bruss = {8000000, 4000, 5, 7, 48};
/* STRING with n = 8e6 (d = 3), Lobatto IIIC(8), 160 threads. */
static const odb_bm_params uv_string = {8000000, 3, 5, 7, 160};
/* BRUSS2D with N = 1500 (n = 4.5e6, d = 3000), Lobatto IIIC(8). */
static const odb_bm_params seq_bruss = {4500000, 3000, 5, 7, 1};

/* Levels of a synthetic topology for p threads (factor 0: 0.9). */
static int levels(const char *desc, int p, double factor, odb_bm_level *lv) {
  odb_topo t;
  int n;
  if (odb_topo_load_synthetic(&t, desc) != ODB_OK) {
    tap_diag("synthetic topology failed: %s", odb_last_error());
    return 0;
  }
  n = odb_bm_levels(&t, p, factor, lv, ODB_TOPO_MAX_CACHES);
  odb_topo_free(&t);
  return n;
}

/* "1456 2456 ..." of the first k candidates into buf. */
static const char *cand_text(const odb_bm_cand *c, int n, int k, char *buf,
                             size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && i < k && used + 16 < len; ++i)
    used += (size_t)snprintf(buf + used, len - used, "%s%ld", i ? " " : "",
                             c[i].B);
  return buf;
}

/* 1 when the first k candidates are exactly want[0..k). */
static int starts_with(const odb_bm_cand *c, int n, const long *want, int k) {
  if (n < k) return 0;
  for (int i = 0; i < k; ++i)
    if (c[i].B != want[i]) return 0;
  return 1;
}

/* {====== the model */

static void test_levels(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  int n = levels(LEO, 48, 0, lv);
  tap_ok(n == 3 && lv[0].level == 1 && lv[0].cap == 8192 &&
         lv[0].line == 8 && lv[0].sharers == 1 && lv[1].cap == 65536 &&
         lv[2].cap == 786432 && lv[2].sharers == 6,
         "Leo in doubles: L1 8192, L2 65536, L3 786432 shared by 6 (%d "
         "levels, L3 s_i = %d)", n, n == 3 ? lv[2].sharers : -1);
  tap_ok(n == 3 && fabs(lv[0].eff - 0.9 * 8192) < 1e-9,
         "C_eff = 0.9 C (%g)", lv[0].eff);
  n = levels(LEO, 4, 0, lv);
  tap_ok(n == 3 && lv[2].sharers == 4, "4 threads: s_3 = 4 (min(sharing, "
         "p))");
  n = levels(LEO, 1, 1.0, lv);
  tap_ok(n == 3 && lv[2].sharers == 1 && lv[0].eff == 8192,
         "one thread: s_i = 1; factor 1 uses the whole cache");
  tap_ok(odb_bm_line_min(lv, n) == 8, "l_min = 8 doubles (64-byte lines)");
  tap_ok(odb_bm_halve(1456, 8) == 728 && odb_bm_halve(728, 8) == 360 &&
         odb_bm_halve(360, 8) == 176 && odb_bm_halve(12, 8) == 0,
         "halving rounds down to lines: 1456 728 360 176, 12 -> 0");
}

static void test_formulas(void) {
  const odb_bm_variant *pp = odb_bm_variant_find("ppDb1mt");
  const odb_bm_variant *p1 = odb_bm_variant_find("PipeDb1m");
  const odb_bm_variant *pd = odb_bm_variant_find("par_Dblock");
  const odb_bm_variant *ppp = odb_bm_variant_find("par_ppDb1m");
  odb_bm_params q = {1000000, 100, 5, 7, 1};
  tap_ok(pp && p1 && pd && ppp && !odb_bm_variant_find("plain") &&
         odb_bm_variant_find("A")->nws == 0, "variant table: tiled ones have "
         "working sets, A none, plain unknown");
  tap_ok(pp && strcmp(odb_bm_ws_name(pp, 1), "WS_ps") == 0 &&
         odb_bm_ws_size(pp, 1, &q, 100, 1) == 116 * 100,
         "Table 8.1 ppDb1mt WS_ps = ((3s+1)m + 4) ts = 11600 at ts = 100");
  tap_ok(p1 && odb_bm_ws_size(p1, 0, &q, 100, 1) == 60.0 * 100 + 8e6,
         "Table 8.1 PipeDb1m WS_ts = s(2m-2) ts + (s+3) n");
  q.p = 4;
  tap_ok(pd && odb_bm_ws_size(pd, 2, &q, 64, 2) ==
               (7.0 * 250000 + 64) * 2 + 7 * 200,
         "Table 9.3 Dblock WS_1 = [(s+2) n/p + B] s_i + (s+2) 2d");
  tap_ok(ppp && odb_bm_ws_size(ppp, 0, &q, 10, 1) ==
               odb_bm_ws_size(ppp, 0, &q, 100, 1) &&
         odb_bm_ws_size(ppp, 0, &q, 200, 1) > odb_bm_ws_size(ppp, 0, &q, 100,
                                                              1),
         "Table 9.4 ppDb1m WS_ts uses b = max(B, d)");
  tap_ok(ppp && odb_bm_ws_size(ppp, 1, &q, 10, 3) ==
               (35.0 * 210 + 9 * 10 + 300) * 3,
         "Table 9.4 WS_ps = [ms(B + 2d) + (m+2) B + 3d] s_i");
}

/* Leo, PipeDb2mt, BRUSS2D n = 8e6 with 48 threads (thesis 9.5.1). */
static void test_leo_candidates(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  odb_bm_cand c[ODB_BM_MAX_CANDS];
  const odb_bm_variant *v = odb_bm_variant_find("par_PipeDb2mt");
  static const long want[] = {1456, 2456, 3680, 5992, 6368};
  char buf[256];
  int nlv = levels(LEO, 48, 0, lv);
  int n = odb_bm_candidates(v, &leo_bruss, lv, nlv, c, ODB_BM_MAX_CANDS);
  tap_ok(starts_with(c, n, want, 5), "Leo PipeDb2mt: T = 1456 2456 3680 "
         "5992 6368 ... (got %s)", cand_text(c, n, 8, buf, sizeof buf));
  tap_ok(n >= 5 && c[0].ws == 2 && c[0].level == 2 && c[1].ws == 5 &&
         c[1].level == 1 && c[2].ws == 4 && c[2].level == 1 &&
         c[3].level == 3,
         "origins: 1456 WS_1 in L2, 2456 WS_4 and 3680 WS_3 in L1, 5992 "
         "WS_1 in L3 (shared by 6)");
  {
    int lines = 1, ascending = 1;
    for (int i = 0; i < n; ++i) {
      lines &= c[i].B % 8 == 0;
      if (i) ascending &= c[i - 1].B < c[i].B;
    }
    tap_ok(lines && ascending, "every candidate a whole number of lines, "
           "ascending, each once (%d)", n);
  }
  tap_ok(n > 0 && c[n - 1].B == 166664 && !c[n - 1].fits,
         "the fallback n/p (rounded to 166664) is the largest");
}

/* SGI UV, PipeDb2mt, STRING n = 8e6 with 160 threads (thesis 9.5.1). */
static void test_uv_candidates(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  odb_bm_cand c[ODB_BM_MAX_CANDS];
  const odb_bm_variant *v = odb_bm_variant_find("par_PipeDb2mt");
  static const long want[] = {280, 456, 1224, 1840};
  static const long want64[] = {280, 456, 560, 920, 1224, 1840};
  char buf[256];
  int nlv = levels(UV, 160, 0, lv);
  int n = odb_bm_candidates(v, &uv_string, lv, nlv, c, ODB_BM_MAX_CANDS);
  tap_ok(starts_with(c, n, want, 4) && (n == 4 || c[4].B > 1840),
         "SGI UV (256 KiB L2): T starts 280 456 1224 1840, the sizes the "
         "thesis evaluated (got %s)", cand_text(c, n, 6, buf, sizeof buf));
  nlv = levels(UV64, 160, 0, lv);
  n = odb_bm_candidates(v, &uv_string, lv, nlv, c, ODB_BM_MAX_CANDS);
  tap_ok(starts_with(c, n, want64, 6), "with the appendix's 64 KiB L2, 560 "
         "and 920 would join (got %s): the appendix is mistyped",
         cand_text(c, n, 6, buf, sizeof buf));
}

/* Fig. 8.4 on the Opteron DP 246, PipeDb2mt, BRUSS2D n = 4.5e6 (8.5.1). */
static void test_minimum_strategy(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  const odb_bm_variant *v = odb_bm_variant_find("PipeDb2mt");
  long ts[2] = {0, 0};
  int nlv = levels(OPT246, 1, 1.0, lv);
  int n = odb_bm_minimum(v, &seq_bruss, lv, nlv, 0, ts);
  tap_ok(n == 2 && ts[0] == 274 && ts[1] == 128,
         "with the full L1 the thesis's pair: ts_min = 274 (WS_2 = 8 ts + "
         "6000 <= 8192), ts_small = 16 x 8 = 128 (got %ld %ld)", ts[0],
         n == 2 ? ts[1] : -1L);
  nlv = levels(OPT246, 1, 0, lv);
  n = odb_bm_minimum(v, &seq_bruss, lv, nlv, 0, ts);
  tap_ok(n == 1 && ts[0] == 171, "with C_eff = 0.9 C: ts_min = 171 < 228, "
         "no second size (got %d: %ld)", n, ts[0]);
}

/* Specialized sequential variants: B >= d, at most n/m (8.4.2, 8.5.1). */
static void test_specialized(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  odb_bm_cand c[ODB_BM_MAX_CANDS];
  const odb_bm_variant *v = odb_bm_variant_find("ppDb1mt");
  long ts[2];
  int nlv = levels(LEO, 1, 0, lv), ok = 1;
  int n = odb_bm_candidates(v, &seq_bruss, lv, nlv, c, ODB_BM_MAX_CANDS);
  for (int i = 0; i < n; ++i)
    ok &= c[i].B >= 3000 && c[i].B <= 4500000 / 7;
  tap_ok(n > 1 && c[0].B == 3000 && ok, "ppDb1mt on Leo (one thread): d = "
         "3000 is the smallest candidate, all in [d, n/m] (%d, next %ld)", n,
         n > 1 ? c[1].B : -1L);
  tap_ok(odb_bm_minimum(v, &seq_bruss, lv, nlv, 0, ts) == 2 &&
         ts[1] == 3000, "Fig. 8.4 for specialized variants offers d = 3000 "
         "(>= 228) as the second size");
  {
    odb_bm_params q = {1000, 200, 5, 7, 1};
    char why[128];
    tap_ok(!odb_bm_applies(v, &q, why, sizeof why) && strstr(why, "n/m"),
           "sequential pp with d > n/m does not apply: %s", why);
    q.d = 1000;
    tap_ok(!odb_bm_applies(odb_bm_variant_find("PipeDb1m"), &q, why,
                           sizeof why) &&
           strstr(why, "limited access distance"),
           "unlimited access distance (d = n): %s", why);
    q = (odb_bm_params){100000, 1000, 5, 7, 16};
    tap_ok(!odb_bm_applies(odb_bm_variant_find("par_ppDb1mt"), &q, why,
                           sizeof why) &&
           odb_bm_applies(odb_bm_variant_find("par_PipeDb1mt"), &q, NULL, 0),
           "16 threads: par pp needs n/p >= (m+2) d: %s; PipeDb1m only "
           "n/p >= d", why);
    tap_ok(odb_bm_block_ok(odb_bm_variant_find("par_PipeDb1m"), &q, 100) &&
           !odb_bm_block_ok(odb_bm_variant_find("PipeDb1m"), &q, 100) &&
           !odb_bm_block_ok(v, &q, 100000 / 6),
           "B < d legal in parallel PipeDb1m (shift B + d), not in the "
           "sequential one; sequential pp needs m blocks");
  }
}

/* Untiled variants and unlimited access distance. */
static void test_untiled_unbounded(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  odb_bm_cand c[ODB_BM_MAX_CANDS];
  odb_bm_params cusp = {300000, 300000, 3, 4, 2};
  int nlv = levels(LEO, 2, 0, lv), n, halo_free = 1;
  n = odb_bm_candidates(odb_bm_variant_find("par_E"), &cusp, lv, nlv, c,
                        ODB_BM_MAX_CANDS);
  tap_ok(n == 1 && c[0].B == 150000, "untiled: T = {n/p} (%ld)",
         n ? c[0].B : -1L);
  n = odb_bm_candidates(odb_bm_variant_find("par_Dblock"), &cusp, lv, nlv,
                        c, ODB_BM_MAX_CANDS);
  for (int i = 0; i < n; ++i)
    if (c[i].fits && c[i].ws >= 0 && c[i].ws < 4) halo_free = 0;
  tap_ok(n > 1 && halo_free && c[0].B == 2456,
         "d = n (CUSP): only the tile sets 2B, 3B place B (first %ld)",
         n ? c[0].B : -1L);
}

/* Fig. 8.4's ts_small joins the sequential general candidates. */
static void test_ts_small(void) {
  odb_bm_level lv[ODB_TOPO_MAX_CACHES];
  odb_bm_cand c[ODB_BM_MAX_CANDS];
  odb_bm_params cusp = {300000, 300000, 3, 4, 1};
  int nlv = levels(OPT246, 1, 0, lv), n;
  n = odb_bm_candidates(odb_bm_variant_find("PipeDb2mt"), &cusp, lv, nlv, c,
                        ODB_BM_MAX_CANDS);
  tap_ok(n > 1 && c[0].B == 128 && c[0].ws == -1 && c[1].B == 3680,
         "sequential PipeDb2mt, d = n: 2B in L1 gives 3680 >= 228, so "
         "ts_small = 128 leads (%ld, %ld)", n ? c[0].B : -1L,
         n > 1 ? c[1].B : -1L);
  n = odb_bm_candidates(odb_bm_variant_find("PipeDb2mt"), &seq_bruss, lv,
                        nlv, c, ODB_BM_MAX_CANDS);
  tap_ok(n > 0 && c[0].B == 168, "BRUSS2D n = 4.5e6: WS_2 in L1 gives 168 "
         "< 228, no ts_small (%ld)", n ? c[0].B : -1L);
}

/* }====== */

/* {====== the strategy on synthetic objectives */

/*
** A target with one variant and block = 8, 16, ..., 16384: the "time" of
** block B is 1 + k (log2 B - log2 opt)^2, so the thesis's search meets
** exactly the sizes it reported.
*/
typedef struct synth {
  odb_space *sp;
  double opt, k;
  long seen[64];
  int nseen;
  long fail_at;          /* a block that fails (0: none) */
} synth;

static odb_status synth_run(void *ud, const odb_config *c, double *sec) {
  synth *s = ud;
  long B = odb_config_int(s->sp, c, "block", 0);
  double x = log2((double)B) - log2(s->opt);
  if (s->nseen == 0 || s->seen[s->nseen - 1] != B)
    if (s->nseen < 64) s->seen[s->nseen++] = B;
  if (B == s->fail_at)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "block %ld does not apply", B);
  *sec = 1e-3 * (1 + s->k * x * x);
  return ODB_OK;
}

/* Runs the model strategy over the synthetic target; the tuner is left. */
static odb_tuner *run_model(synth *s, const char *variant, const char *topo,
                            const odb_bm_params *q, odb_ctx *ctx) {
  static odb_topo t;
  odb_tune_target tg;
  odb_tune_opts o;
  odb_model_opts mo;
  odb_tuner *tu = NULL;
  const char *vals[1] = {variant};
  odb_space_create(&s->sp);
  odb_space_add_enum(s->sp, "variant", vals, 1);
  odb_space_add_range(s->sp, "block", 8, 16384, 8);
  memset(&tg, 0, sizeof tg);
  tg.space = s->sp;
  tg.ud = s;
  tg.run = synth_run;
  tg.key.problem = "synthetic";
  memset(&mo, 0, sizeof mo);
  odb_topo_load_synthetic(&t, topo);
  mo.topo = &t;
  mo.params = *q;
  mo.threads = q->p;
  memset(&o, 0, sizeof o);
  o.strategy = "model";
  o.strategy_opts = &mo;
  o.measure.warmup = -1;
  o.measure.min_reps = 1;
  o.measure.max_reps = 1;
  if (odb_tuner_create(ctx, &tg, &o, &tu) != ODB_OK ||
      odb_tuner_run(tu) != ODB_OK)
    tap_diag("model run failed: %s", odb_last_error());
  odb_topo_free(&t);
  return tu;
}

/* The block of the best evaluation. */
static long best_block(const synth *s, const odb_tuner *t) {
  const odb_tune_eval *b = odb_tuner_best(t);
  return b ? odb_config_int(s->sp, &b->cfg, "block", 0) : -1;
}

static const char *seen_text(const synth *s, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < s->nseen && used + 16 < len; ++i)
    used += (size_t)snprintf(buf + used, len - used, "%s%ld", i ? " " : "",
                             s->seen[i]);
  return buf;
}

static void test_search_leo(odb_ctx *ctx) {
  synth s;
  odb_tuner *t;
  char buf[256];
  memset(&s, 0, sizeof s);
  s.opt = 360;
  s.k = 0.01;
  t = run_model(&s, "par_PipeDb2mt", LEO, &leo_bruss, ctx);
  tap_ok(t && strcmp(seen_text(&s, buf, sizeof buf),
                     "1456 2456 728 360 176") == 0 && best_block(&s, t) == 360,
         "Leo: evaluates 1456 2456 (slower: stop) then halves 728 360 176 "
         "and picks 360, as in the thesis (got %s -> %ld)", buf,
         t ? best_block(&s, t) : -1L);
  tap_ok(t && odb_tuner_nevals(t) == 5 && odb_tuner_nvalid(t) == 2048,
         "5 of 2048 valid configurations evaluated");
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

static void test_search_uv(odb_ctx *ctx) {
  synth s;
  odb_tuner *t;
  char buf[256];
  memset(&s, 0, sizeof s);
  s.opt = 1224;
  s.k = 0.1;
  t = run_model(&s, "par_PipeDb2mt", UV, &uv_string, ctx);
  tap_ok(t && strcmp(seen_text(&s, buf, sizeof buf),
                     "280 456 1224 1840") == 0 && best_block(&s, t) == 1224,
         "SGI UV: 280 456 1224 1840 (slower: stop), 1224 chosen; the "
         "smallest did not win, so no halving (got %s)", buf);
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
  /* an optimum far below a winning smallest candidate */
  memset(&s, 0, sizeof s);
  s.opt = 16;
  s.k = 0.1;
  t = run_model(&s, "par_PipeDb2mt", UV, &uv_string, ctx);
  tap_ok(t && best_block(&s, t) == 16 &&
         strcmp(seen_text(&s, buf, sizeof buf),
                "280 456 136 64 32 16 8") == 0,
         "an optimum at 16 below the winning smallest candidate: halving "
         "280 -> 136 64 32 16, 8 slower (%s -> %ld)", buf,
         t ? best_block(&s, t) : -1L);
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

static void test_search_rules(odb_ctx *ctx) {
  synth s;
  odb_tuner *t;
  char buf[256];
  /* a failing candidate is passed over, not taken as a slowdown */
  memset(&s, 0, sizeof s);
  s.opt = 1224;
  s.k = 0.1;
  s.fail_at = 456;
  t = run_model(&s, "par_PipeDb2mt", UV, &uv_string, ctx);
  tap_ok(t && best_block(&s, t) == 1224 &&
         strcmp(seen_text(&s, buf, sizeof buf), "280 456 1224 1840") == 0,
         "a failing 456 is passed over (%s)", buf);
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
  /* a variant the model does not know: all blocks ascending, first
     slowdown stops */
  memset(&s, 0, sizeof s);
  s.opt = 40;
  s.k = 0.1;
  t = run_model(&s, "fused", UV, &uv_string, ctx);
  tap_ok(t && best_block(&s, t) == 40 && s.nseen == 6,
         "unknown variant: 8 16 24 32 40 48 (stop), best 40 (%s)",
         seen_text(&s, buf, sizeof buf));
  odb_tuner_destroy(t);
  odb_space_destroy(s.sp);
}

/* }====== */

int main(void) {
  odb_ctx *ctx = NULL;
  odb_ctx_opts co;
  memset(&co, 0, sizeof co);
  co.log_level = ODB_LOG_WARN;
  if (odb_ctx_create(&co, &ctx) != ODB_OK) {
    printf("Bail out! context: %s\n", odb_last_error());
    return 1;
  }
  test_levels();
  test_formulas();
  test_leo_candidates();
  test_uv_candidates();
  test_minimum_strategy();
  test_specialized();
  test_untiled_unbounded();
  test_ts_small();
  test_search_leo(ctx);
  test_search_uv(ctx);
  test_search_rules(ctx);
  odb_ctx_destroy(ctx);
  return tap_done();
}
