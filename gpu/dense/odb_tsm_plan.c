/* odb_tsm_plan.c - a tall & skinny product tuned per shape through the
   tuner, its evaluations kept in the tuning database. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "odb_cuda_check.h"
#include "odb_gpu_power.h"
#include "odb_measure.h"
#include "odb_tsm_gpu.h"
#include "odebench.h"

enum { CHECK_ROWS = 20011 };

struct odb_tsm_plan {
  odb_ctx *ctx;
  odb_backend *b;
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, K;
  size_t na, nx, no;             /* doubles of A, X, out at K rows */
  double *A, *X, *out;           /* device, K rows */
  /* verification: CHECK_ROWS rows at most, with the CPU reference */
  long Kc;
  size_t nac, nxc, noc;
  double *Ac, *Xc, *outc, *ref, *got, *poison;
  /* the search */
  odb_space *space;
  odb_tsm_kernel *cur;           /* the configuration being evaluated */
  odb_tsm_kernel *best;
  odb_tsm_cfg *list;             /* the space's configurations */
  int nlist;
  int prefetched;                /* their kernels were compiled */
  /* compute-bound shapes: each timed run follows a cuBLAS run, and its
     time is scaled by blas_ref / that run's (the first cuBLAS time), so
     that configurations timed while the card is at its power cap and
     clocked down compete fairly with those timed while it was cool */
  int paired;
  double blas_ref;
  /* the final race (plan_race): candidates raced, and 1 when its winner
     is not the tuner's fastest */
  int raced, race_changed;
  char cfg_text[240];            /* the chosen one's text, " [token]" */
  char size[96], family[32], params[48];
  long evals, cached;
};

/* n random doubles at device d: one host block, then doubling copies. */
static odb_status fill_device(odb_tsm_plan *p, double *d, size_t n) {
  size_t blk = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20), done;
  double *h = calloc(blk, 8);
  odb_status st;
  if (!h) return ODB_FAIL(ODB_ERR_NOMEM, "tsm: host block");
  odb_rng_fill(&p->ctx->rng, h, blk);
  st = p->b->ops->to_device(p->b, d, h, 8 * blk);
  free(h);
  for (done = blk; st == ODB_OK && done < n;) {
    size_t c = done < n - done ? done : n - done;
    st = odb_backend_copy(p->b, d + done, d, 8 * c);
    done += c;
  }
  return st;
}

/* The kernel configuration of a tuner configuration: its token. */
static odb_tsm_cfg to_cfg(const odb_tsm_plan *p, const odb_config *c) {
  odb_tsm_cfg k;
  const char *tok = odb_config_str(p->space, c, "kernel", "");
  if (odb_tsm_cfg_parse(p->op, p->t, (int)p->M, (int)p->N, tok, &k)
      != ODB_OK) {
    odb_clear_error();
    memset(&k, 0, sizeof k);   /* refused by allowed() */
    k.op = p->op;
    k.t = p->t;
    k.M = (int)p->M;
    k.N = (int)p->N;
  }
  return k;
}

/* The space's constraint: odb_tsm_cfg_allowed. */
static int allowed(const odb_space *s, const odb_config *c, void *ud) {
  odb_tsm_plan *p = ud;
  odb_tsm_cfg k;
  (void)s;
  k = to_cfg(p, c);
  return odb_tsm_cfg_allowed(&k);
}

/*
** The space of odb_tsm_space_list for this shape and device as one tuner
** parameter, "kernel", whose values are the configurations' tokens
** (odb_tsm_cfg_token: "f4x8t1l1u2lb4", "m1w4x4g1r32s3lb0", ...).
*/
static odb_status make_space(odb_tsm_plan *p, int full) {
  int cc = odb_tsm_device_cc();
  int n = odb_tsm_space_list(p->op, p->t, (int)p->M, (int)p->N, full, cc,
                             NULL, 0);
  odb_tsm_cfg *list = calloc((size_t)(n > 0 ? n : 1), sizeof *list);
  char (*tok)[64] = calloc((size_t)(n > 0 ? n : 1), sizeof *tok);
  const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
  odb_status st = ODB_OK;
  if (!list || !tok || !names)
    st = ODB_FAIL(ODB_ERR_NOMEM, "tsm: tuning space");
  if (st == ODB_OK && n < 1)
    st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "tsm: no kernel configuration for "
                  "this shape and device");
  if (st == ODB_OK) {
    odb_tsm_space_list(p->op, p->t, (int)p->M, (int)p->N, full, cc, list, n);
    for (int i = 0; i < n; ++i) {
      odb_tsm_cfg_token(&list[i], tok[i], sizeof tok[i]);
      names[i] = tok[i];
    }
    st = odb_space_create(&p->space);
  }
  if (st == ODB_OK) st = odb_space_add_enum(p->space, "kernel", names, n);
  if (st == ODB_OK)
    st = odb_space_add_constraint(p->space, allowed, p, NULL,
                                  "register estimate of Ernst et al., §5.2, "
                                  "at most 255, a row's threads fit a "
                                  "block");
  free(tok);
  free(names);
  if (st == ODB_OK) {
    p->list = list;   /* kept for prefetch_space */
    p->nlist = n;
  } else {
    free(list);
  }
  return st;
}

/* Compiles every kernel of the space that the disk cache lacks, in
   parallel (odb_tsm_prefetch), before the first one is evaluated. */
static void prefetch_space(odb_tsm_plan *p) {
  p->prefetched = 1;
  odb_tsm_prefetch(p->list, p->nlist);
}

/* Compiles c (tuner setup); the first call compiles the whole space. */
static odb_status t_setup(void *ud, const odb_config *c) {
  odb_tsm_plan *p = ud;
  odb_tsm_cfg k = to_cfg(p, c);
  if (!p->prefetched) prefetch_space(p);
  odb_tsm_kernel_free(p->cur);
  p->cur = NULL;
  return odb_tsm_kernel_create(&k, &p->cur);
}

/* Frees the kernel of the configuration (tuner teardown). */
static void t_teardown(void *ud, const odb_config *c) {
  odb_tsm_plan *p = ud;
  (void)c;
  odb_tsm_kernel_free(p->cur);
  p->cur = NULL;
}

/* Runs k on the verification rows; *err against the CPU reference. */
static odb_status verify(odb_tsm_plan *p, odb_tsm_kernel *k, double *err) {
  odb_backend *b = p->b;
  ODB_TRY(b->ops->to_device(b, p->outc, p->poison, 8 * p->noc));
  if (k) ODB_TRY(odb_tsm_kernel_run(k, p->Ac, p->Xc, p->outc, p->Kc));
  else ODB_TRY(odb_tsm_cublas(p->op, p->t, p->M, p->N, p->Kc, p->Ac, p->Xc,
                              p->outc));
  ODB_TRY(odb_backend_sync(b));
  ODB_TRY(b->ops->to_host(b, p->got, p->outc, 8 * p->noc));
  *err = odb_tsm_relerr(p->got, p->ref, p->noc);
  return ODB_OK;
}

/* Tuner check: the verification rows against the CPU reference. */
static odb_status t_check(void *ud, const odb_config *c, double *err,
                          double *tol) {
  odb_tsm_plan *p = ud;
  (void)c;
  *tol = 1e-12;
  return verify(p, p->cur, err);
}

/* One product over K rows with k (NULL: cuBLAS), timed with device
   events. */
static odb_status timed_run(odb_tsm_plan *p, odb_tsm_kernel *k,
                            double *seconds) {
  cudaEvent_t e0, e1;
  float ms = 0;
  odb_status st;
  ODB_CUDA_CHECK(cudaEventCreate(&e0));
  ODB_CUDA_CHECK(cudaEventCreate(&e1));
  cudaEventRecord(e0, 0);
  if (k) st = odb_tsm_kernel_run(k, p->A, p->X, p->out, p->K);
  else st = odb_tsm_cublas(p->op, p->t, p->M, p->N, p->K, p->A, p->X,
                           p->out);
  cudaEventRecord(e1, 0);
  if (st == ODB_OK) {
    cudaError_t e = cudaEventSynchronize(e1);
    if (e != cudaSuccess)
      st = odb_cuda_fail(e, "cudaEventSynchronize", __FILE__, __LINE__);
    else cudaEventElapsedTime(&ms, e0, e1);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  *seconds = ms * 1e-3;
  return st;
}

/* Tuner run: one product over K rows; on a compute-bound shape after a
   cuBLAS run, and scaled to the clocks of the first (see paired). */
static odb_status t_run(void *ud, const odb_config *c, double *seconds) {
  odb_tsm_plan *p = ud;
  double blas;
  (void)c;
  if (!p->paired) return timed_run(p, p->cur, seconds);
  ODB_TRY(timed_run(p, NULL, &blas));
  ODB_TRY(timed_run(p, p->cur, seconds));
  if (!(p->blas_ref > 0)) p->blas_ref = blas;
  if (blas > 0) *seconds *= p->blas_ref / blas;
  return ODB_OK;
}

/* 1 when the shape's roofline on this card is at least a quarter of the
   FP64 tensor-core peak (256 flops a cycle and SM), where the kernels
   draw enough power that the clock moves with the load (with half as
   the threshold, the tuner's pick for complex A^T B 31 x 31 fell behind
   cuBLAS on two of three H100s). */
static int compute_bound(odb_tsm_plan *p) {
  odb_device_info info;
  double bw = 0, peak;
  if (odb_backend_query(p->b, &info) != ODB_OK ||
      odb_backend_copy_bandwidth(p->b, &bw) != ODB_OK)
    return 0;
  peak = info.sm_count * info.clock_mhz * 1e6 * 256.0;
  return odb_tsm_flops(p->t, p->M, p->N, p->K) /
         odb_tsm_bytes(p->t, p->M, p->N, p->K) * bw * 1e9 >= 0.25 * peak;
}

/* Allocates and fills the matrices, and the verification set. */
static odb_status plan_data(odb_tsm_plan *p) {
  odb_backend *b = p->b;
  ODB_TRY(odb_tsm_sizes(p->op, p->t, p->M, p->N, p->K, &p->na, &p->nx,
                        &p->no));
  p->Kc = p->K < CHECK_ROWS ? p->K : CHECK_ROWS;
  ODB_TRY(odb_tsm_sizes(p->op, p->t, p->M, p->N, p->Kc, &p->nac, &p->nxc,
                        &p->noc));
  ODB_TRY(b->ops->alloc(b, 8 * p->na, (void **)&p->A));
  ODB_TRY(b->ops->alloc(b, 8 * p->nx, (void **)&p->X));
  ODB_TRY(b->ops->alloc(b, 8 * p->no, (void **)&p->out));
  ODB_TRY(fill_device(p, p->A, p->na));
  ODB_TRY(fill_device(p, p->X, p->nx));
  ODB_TRY(b->ops->alloc(b, 8 * p->nac, (void **)&p->Ac));
  ODB_TRY(b->ops->alloc(b, 8 * p->nxc, (void **)&p->Xc));
  ODB_TRY(b->ops->alloc(b, 8 * p->noc, (void **)&p->outc));
  double *hA = malloc(8 * p->nac), *hX = malloc(8 * p->nxc);
  p->ref = malloc(8 * p->noc);
  p->got = malloc(8 * p->noc);
  p->poison = malloc(8 * p->noc);
  odb_status st = ODB_OK;
  if (!hA || !hX || !p->ref || !p->got || !p->poison) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "tsm: verification data");
  } else {
    odb_rng_fill(&p->ctx->rng, hA, p->nac);
    odb_rng_fill(&p->ctx->rng, hX, p->nxc);
    for (size_t i = 0; i < p->noc; ++i) p->poison[i] = NAN;
    st = odb_tsm_cpu(p->op, p->t, p->M, p->N, p->Kc, hA, hX, p->ref, 0);
    if (st == ODB_OK) st = b->ops->to_device(b, p->Ac, hA, 8 * p->nac);
    if (st == ODB_OK) st = b->ops->to_device(b, p->Xc, hX, 8 * p->nxc);
  }
  free(hA);
  free(hX);
  return st;
}

enum { RACE_MAX = 3, RACE_REPS = 9 };

/* Indices of the tuner's ok evaluations, fastest first, at most max. */
static int race_candidates(const odb_tuner *tu, long *idx, int max) {
  int n = 0;
  for (long i = 0; i < odb_tuner_nevals(tu); ++i) {
    const odb_tune_eval *e = odb_tuner_eval_at(tu, i);
    int j;
    if (e->status != ODB_TUNE_OK || !(e->m.median > 0)) continue;
    for (j = n; j > 0; --j) {
      if (odb_tuner_eval_at(tu, idx[j - 1])->m.median <= e->m.median) break;
      if (j < max) idx[j] = idx[j - 1];
    }
    if (j < max) idx[j] = i;
    if (n < max) ++n;
  }
  return n;
}

/*
** The final race: the tuner's RACE_MAX fastest configurations run in turn
** with cuBLAS, RACE_REPS rounds (odb_tsm_time_race: every kernel once a
** round, so all see the same clocks), and the one with the highest median
** speed-up over cuBLAS within a round wins. The tuner timed each alone,
** at whatever clock the card had then; the race ranks the close ones at
** one clock. ODEBENCH_TSM_NORACE=1 keeps the tuner's pick. *pick gets the
** winner's evaluation (the tuner's fastest when there is no race).
*/
static odb_status plan_race(odb_tsm_plan *p, const odb_tuner *tu,
                            const odb_tune_eval **pick) {
  long idx[RACE_MAX];
  odb_tsm_kernel *ks[RACE_MAX + 1] = { NULL };
  double med[RACE_MAX + 1], each[RACE_REPS * (RACE_MAX + 1)], sp[RACE_REPS];
  double best = 0;
  int n = race_candidates(tu, idx, RACE_MAX), win = 0;
  const char *off = getenv("ODEBENCH_TSM_NORACE");
  odb_status st = ODB_OK;
  *pick = odb_tuner_best(tu);
  if (n < 2 || (off && *off && strcmp(off, "0") != 0)) return ODB_OK;
  for (int j = 0; j < n && st == ODB_OK; ++j) {
    odb_tsm_cfg k = to_cfg(p, &odb_tuner_eval_at(tu, idx[j])->cfg);
    st = odb_tsm_kernel_create(&k, &ks[j]);
  }
  if (st == ODB_OK)   /* ks[n] is NULL: cuBLAS */
    st = odb_tsm_time_race(ks, n + 1, p->op, p->t, p->M, p->N, p->K, p->A,
                           p->X, p->out, RACE_REPS, med, each);
  for (int j = 0; j < n && st == ODB_OK; ++j) {
    odb_measurement m;
    for (int i = 0; i < RACE_REPS; ++i)
      sp[i] = each[i * (n + 1) + n] / each[i * (n + 1) + j];
    odb_measure_summarize(sp, RACE_REPS, &m);
    if (m.median > best) {
      best = m.median;
      win = j;
    }
  }
  for (int j = 0; j < n; ++j) odb_tsm_kernel_free(ks[j]);
  if (st != ODB_OK) return st;
  p->raced = n;
  *pick = odb_tuner_eval_at(tu, idx[win]);
  p->race_changed = *pick != odb_tuner_best(tu);
  return ODB_OK;
}

/*
** The tuning key's params: the card's enforced power limit ("power_limit=
** 700W"; "" where NVML cannot say). The machine's fingerprint names the
** GPU model, its SMs and the driver, not the limit; on a compute-bound
** shape the card runs at that cap, and which configuration is fastest
** moves with it (a card capped lower keeps its own evaluations).
*/
static void plan_params(odb_tsm_plan *p) {
  odb_device_info info;
  odb_gpu_power pw;
  p->params[0] = '\0';
  memset(&info, 0, sizeof info);
  if (odb_backend_query(p->b, &info) == ODB_OK &&
      odb_gpu_power_read(info.pci_bus_id, &pw) == ODB_OK && pw.limit_w > 0)
    snprintf(p->params, sizeof p->params, "power_limit=%.0fW", pw.limit_w);
  else
    odb_clear_error();
}

/* Runs the search and builds the best kernel. */
static odb_status plan_tune(odb_tsm_plan *p, const odb_tsm_plan_opts *o) {
  odb_tune_target tg;
  odb_tune_opts to;
  odb_tuner *tu = NULL;
  odb_tunedb *own = NULL;
  odb_tune_stats ts;
  odb_status st;
  char path[1024];
  memset(&tg, 0, sizeof tg);
  memset(&to, 0, sizeof to);
  tg.space = p->space;
  snprintf(p->size, sizeof p->size, "M=%ld N=%ld K=%ld dtype=%s", p->M,
           p->N, p->K, odb_tsm_dtype_name(p->t));
  snprintf(p->family, sizeof p->family, "tsm/cuda %s",
           o && o->full ? "full" : "quick");
  tg.key.problem = odb_tsm_op_name(p->op);
  tg.key.size = p->size;
  tg.key.method = "";
  tg.key.family = p->family;
  plan_params(p);
  tg.key.params = p->params;
  tg.key.code_hash = odb_engine_code_hash();
  tg.ud = p;
  tg.setup = t_setup;
  tg.check = t_check;
  tg.run = t_run;
  tg.teardown = t_teardown;
  p->paired = compute_bound(p);
  to.verify = 1;
  to.measure.max_reps = 9;
  to.measure.max_seconds = 0.3;
  to.label = p->size;
  if (o && o->db) {
    to.db = o->db;
  } else if (!(o && o->no_db) &&
             odb_tunedb_default_path(path, sizeof path) == ODB_OK &&
             odb_tunedb_open(path, 0, &own) == ODB_OK) {
    to.db = own;
  }
  st = odb_tuner_create(p->ctx, &tg, &to, &tu);
  if (st == ODB_OK) st = odb_tuner_run(tu);
  if (st == ODB_OK) {
    const odb_tune_eval *best = NULL;
    odb_tuner_stats(tu, &ts);
    st = plan_race(p, tu, &best);
    p->evals = ts.evals;
    p->cached = ts.cached;
    if (st == ODB_OK && !best) {
      st = ODB_FAIL(ODB_ERR_BACKEND, "tsm %s %s: no configuration passed "
                    "(%ld rejected, %ld failed)", odb_tsm_op_name(p->op),
                    p->size, ts.rejected, ts.failed);
    } else if (st == ODB_OK) {
      odb_tsm_cfg k = to_cfg(p, &best->cfg);
      char tok[64];
      size_t used;
      odb_tsm_cfg_text(&k, p->cfg_text, sizeof p->cfg_text);
      used = strlen(p->cfg_text);
      /* the token too: what ODB_TSM_TOKENS, test_tsm and
         scenarios/tools/ncu_tsm.py take to build this kernel again */
      snprintf(p->cfg_text + used, sizeof p->cfg_text - used, " [%s]",
               odb_tsm_cfg_token(&k, tok, sizeof tok));
      st = odb_tsm_kernel_create(&k, &p->best);
    }
  }
  odb_tuner_destroy(tu);
  odb_tunedb_close(own);
  return st;
}

/* See odb_tsm.h. */
odb_status odb_tsm_plan_create(odb_ctx *ctx, odb_tsm_op op, odb_tsm_dtype t,
                               long M, long N, long K,
                               const odb_tsm_plan_opts *o,
                               odb_tsm_plan **out) {
  odb_tsm_plan *p;
  odb_backend *b;
  odb_status st;
  *out = NULL;
  ODB_TRY(odb_tsm_check_shape(M, N, K, 1));
  if ((unsigned)op > 1 || (unsigned)t > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: bad operation or dtype");
  b = odb_ctx_backend(ctx, "cuda");
  if (!b)
    return ODB_FAIL(ODB_ERR_NO_DEVICE, "%s: no cuda backend in this run",
                    odb_tsm_op_name(op));
  p = calloc(1, sizeof *p);
  if (!p) return ODB_FAIL(ODB_ERR_NOMEM, "tsm: plan");
  p->ctx = ctx;
  p->b = b;
  p->op = op;
  p->t = t;
  p->M = M;
  p->N = N;
  p->K = K;
  st = plan_data(p);
  if (st == ODB_OK) st = make_space(p, o && o->full);
  if (st == ODB_OK) st = plan_tune(p, o);
  if (st != ODB_OK) {
    odb_tsm_plan_destroy(p);
    return st;
  }
  *out = p;
  return ODB_OK;
}

/* NULL is allowed. */
void odb_tsm_plan_destroy(odb_tsm_plan *p) {
  if (!p) return;
  odb_tsm_kernel_free(p->cur);
  odb_tsm_kernel_free(p->best);
  if (p->b) {
    p->b->ops->free(p->b, p->A);
    p->b->ops->free(p->b, p->X);
    p->b->ops->free(p->b, p->out);
    p->b->ops->free(p->b, p->Ac);
    p->b->ops->free(p->b, p->Xc);
    p->b->ops->free(p->b, p->outc);
  }
  free(p->ref);
  free(p->got);
  free(p->poison);
  odb_space_destroy(p->space);
  free(p->list);
  free(p);
}

const char *odb_tsm_plan_config(const odb_tsm_plan *p) { return p->cfg_text; }

int odb_tsm_plan_regs(const odb_tsm_plan *p) {
  return p->best ? odb_tsm_kernel_regs(p->best) : 0;
}

void odb_tsm_plan_search(const odb_tsm_plan *p, long *evals, long *cached) {
  *evals = p->evals;
  *cached = p->cached;
}

int odb_tsm_plan_raced(const odb_tsm_plan *p, int *changed) {
  if (changed) *changed = p->race_changed;
  return p->raced;
}

/* reps runs of kernel k (NULL: cuBLAS) between events, summarized. */
static odb_status time_one(odb_tsm_plan *p, odb_tsm_kernel *k, int reps,
                           odb_measurement *m) {
  double med, each[201];
  if (reps < 1) reps = 1;
  if (reps > 201) reps = 201;
  ODB_TRY(odb_tsm_time_race(&k, 1, p->op, p->t, p->M, p->N, p->K, p->A,
                            p->X, p->out, reps, &med, each));
  odb_measure_summarize(each, reps, m);
  return ODB_OK;
}

odb_status odb_tsm_plan_time(odb_tsm_plan *p, int reps, odb_measurement *m) {
  return time_one(p, p->best, reps, m);
}

odb_status odb_tsm_plan_cublas_time(odb_tsm_plan *p, int reps,
                                    odb_measurement *m) {
  return time_one(p, NULL, reps, m);
}

/* See odb_tsm_gpu.h; reps is clamped to 1..201. */
odb_status odb_tsm_plan_compare(odb_tsm_plan *p, int reps,
                                odb_measurement *mine,
                                odb_measurement *cublas) {
  odb_tsm_kernel *ks[2] = { p->best, NULL };
  double med[2], each[2 * 201], a[201], b[201];
  if (reps < 1) reps = 1;
  if (reps > 201) reps = 201;
  ODB_TRY(odb_tsm_time_race(ks, 2, p->op, p->t, p->M, p->N, p->K, p->A,
                            p->X, p->out, reps, med, each));
  for (int i = 0; i < reps; ++i) {
    a[i] = each[2 * i];
    b[i] = each[2 * i + 1];
  }
  odb_measure_summarize(a, reps, mine);
  odb_measure_summarize(b, reps, cublas);
  return ODB_OK;
}

/* See odb_tsm_gpu.h: A and X to the device, and their first Kc rows (a
   product of their own: row-major matrices begin with them; tsmm's C is
   whole in Xc) as the verification rows with the CPU reference of them. */
odb_status odb_tsm_plan_load(odb_tsm_plan *p, const double *A,
                             const double *X) {
  odb_backend *b = p->b;
  ODB_TRY(b->ops->to_device(b, p->A, A, 8 * p->na));
  ODB_TRY(b->ops->to_device(b, p->X, X, 8 * p->nx));
  ODB_TRY(b->ops->to_device(b, p->Ac, A, 8 * p->nac));
  ODB_TRY(b->ops->to_device(b, p->Xc, X, 8 * p->nxc));
  return odb_tsm_cpu(p->op, p->t, p->M, p->N, p->Kc, A, X, p->ref, 0);
}

/* See odb_tsm_gpu.h. */
odb_status odb_tsm_plan_result(odb_tsm_plan *p, double *out) {
  ODB_TRY(odb_tsm_kernel_run(p->best, p->A, p->X, p->out, p->K));
  ODB_TRY(odb_backend_sync(p->b));
  return p->b->ops->to_host(p->b, out, p->out, 8 * p->no);
}

/* The verification rows: the chosen kernel against the CPU reference and
   against cuBLAS; the larger difference. */
odb_status odb_tsm_plan_check(odb_tsm_plan *p, double *err) {
  double e1, e2, *mine = malloc(8 * p->noc);
  odb_status st = mine ? ODB_OK : ODB_FAIL(ODB_ERR_NOMEM, "tsm: check");
  if (st == ODB_OK) st = verify(p, p->best, &e1);
  if (st == ODB_OK) {
    memcpy(mine, p->got, 8 * p->noc);
    st = verify(p, NULL, &e2);
  }
  if (st == ODB_OK) {
    e2 = odb_tsm_relerr(mine, p->got, p->noc);
    *err = e1 > e2 ? e1 : e2;
    if (isnan(*err)) *err = INFINITY;
  }
  free(mine);
  return st;
}
