/* batched_impl_cpu.c - the "cpu" table of odb_batched_impl.h over the CPU
   kernels of odb_batched.h, the family's registry, and the op names, the
   stream factor's kernel names and the byte counts every backend
   shares. */
#include "odb_batched_impl.h"

#include <stdlib.h>
#include <string.h>

#include "odb_clock.h"
#include "odb_dense_floor.h"
#include "odb_registry.h"
#include "odb_topo.h"

static const char *const op_names[] = { "lu", "solve", "trsm", "gemm",
                                        "gemv" };

const char *odb_batched_op_name(odb_batched_op op) {
  return (unsigned)op < 5 ? op_names[op] : "?";
}

odb_status odb_batched_op_parse(const char *name, odb_batched_op *out) {
  for (int i = 0; i < 5; ++i)
    if (name && strcmp(name, op_names[i]) == 0) {
      *out = (odb_batched_op)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown batched op '%s' (known: lu, solve, "
                  "trsm, gemm, gemv)", name ? name : "(null)");
}

static const char *const kernel_names[] = { "auto", "row", "tile", "warp" };

const char *odb_btd_kernel_name(odb_btd_kernel k) {
  return (unsigned)k < 4 ? kernel_names[k] : "?";
}

odb_status odb_btd_kernel_parse(const char *name, odb_btd_kernel *out) {
  for (int i = 0; i < 4; ++i)
    if (name && strcmp(name, kernel_names[i]) == 0) {
      *out = (odb_btd_kernel)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown stream factor kernel '%s' "
                  "(known: auto, row, tile, warp)", name ? name : "(null)");
}

/* The fewest bytes of op without pivoting, read + written
   (odb_batched_min_bytes, odb_dense_floor.h). */
double odb_batched_op_bytes(const odb_batch *bt, odb_batched_op op) {
  double r, w;
  odb_batched_min_bytes(bt, op, 0, &r, &w, NULL);
  return r + w;
}

/* {====== the "cpu" table */

static odb_status cpu_ready(struct odb_ctx *ctx) {
  (void)ctx;
  return ODB_OK;
}

/* The CPU has one kernel per layout: "auto" only. */
static odb_status cpu_variant_parse(const char *name, int *out) {
  *out = 0;
  if (name && strcmp(name, "auto") == 0) return ODB_OK;
  return ODB_FAIL(ODB_ERR_ARG, "variant '%s' needs backend \"cuda\" (the CPU "
                  "has one kernel per layout)", name ? name : "(null)");
}

static const char *cpu_variant_name(int v) {
  (void)v;
  return "cpu";
}

static const char *cpu_variant_doc(int v) {
  return v == 0 ? "one kernel per layout on the host: batched LU, solve, "
                  "TRSM/TRSV and GEMM/GEMV of B x B matrices, a pack of VL "
                  "at a time (core/dense/batched/batched_ops.c, "
                  "batched_kernels.inc); the block-tridiagonal lines' block "
                  "LU and solve (core/dense/batched/blocktridiag.c)"
                : NULL;
}

static odb_status cpu_resolve(const odb_batch *bt, odb_batched_op op, int v,
                              int *out) {
  (void)bt; (void)op;
  *out = v;
  return ODB_OK;
}

static odb_status cpu_alloc(size_t doubles, double **out) {
  *out = malloc(sizeof(double) * (doubles ? doubles : 1));
  if (!*out)
    return ODB_FAIL(ODB_ERR_NOMEM, "no host memory for %zu doubles",
                    doubles);
  return ODB_OK;
}

static void cpu_free(double *p) { free(p); }

static odb_status cpu_copy(double *dst, const double *src, size_t doubles) {
  memcpy(dst, src, sizeof(double) * doubles);
  return ODB_OK;
}

static odb_status cpu_identity(const odb_batch *bt, double *A) {
  memset(A, 0, sizeof(double) * odb_batch_mat_len(bt));
  for (long p = 0; p < bt->packs * bt->vl; ++p)
    for (int i = 0; i < bt->b; ++i)
      A[odb_batch_mat_at(bt, p, i, i)] = 1.0;
  return ODB_OK;
}

static odb_status cpu_random(const odb_batch *bt, uint64_t seed,
                             double dominance, double *A) {
  odb_batched_random(bt, seed, dominance, A);
  return ODB_OK;
}

static odb_status cpu_random_rhs(const odb_batch *bt, int m, uint64_t seed,
                                 double *x) {
  odb_batched_random_rhs(bt, m, seed, x);
  return ODB_OK;
}

static odb_status cpu_get_matrix(const odb_batch *bt, const double *A, long p,
                                 double *h) {
  for (int i = 0; i < bt->b; ++i)
    for (int j = 0; j < bt->b; ++j)
      h[i * bt->b + j] = A[odb_batch_mat_at(bt, p, i, j)];
  return ODB_OK;
}

static odb_status cpu_set_matrix(const odb_batch *bt, double *A, long p,
                                 const double *h) {
  for (int i = 0; i < bt->b; ++i)
    for (int j = 0; j < bt->b; ++j)
      A[odb_batch_mat_at(bt, p, i, j)] = h[i * bt->b + j];
  return ODB_OK;
}

static odb_status cpu_rhs_in(const odb_batch *bt, const double *h,
                             double *x) {
  odb_batched_pack_rhs(bt, 1, h, x);
  return ODB_OK;
}

static odb_status cpu_rhs_out(const odb_batch *bt, const double *x,
                              double *h) {
  odb_batched_unpack_rhs(bt, 1, x, h);
  return ODB_OK;
}

static odb_status cpu_tic(double *t0) {
  *t0 = odb_clock_now();
  return ODB_OK;
}

static odb_status cpu_toc(double t0, double *seconds) {
  *seconds = odb_clock_since(t0);
  return ODB_OK;
}

/* The pivots are checked first (odb_batched_lu_check, not timed). */
static odb_status cpu_lu_safe(const odb_batch *bt, int v, double *A,
                              long *bad, int *row, double *seconds) {
  (void)v;
  ODB_TRY(odb_batched_lu_check(bt, A, bad, row));
  double t0 = odb_clock_now();
  odb_status st = odb_batched_lu(bt, A, bad);
  *seconds = odb_clock_since(t0);
  return st;
}

static odb_status cpu_lu(const odb_batch *bt, int v, double *A) {
  (void)v;
  return odb_batched_lu(bt, A, NULL);
}

static odb_status cpu_trsm(const odb_batch *bt, int v,
                           odb_batched_trsm_kind kind, const double *T,
                           double *X) {
  (void)v;
  return odb_batched_trsm(bt, kind, T, X);
}

static odb_status cpu_gemm(const odb_batch *bt, int v, double alpha,
                           const double *A, const double *X, double beta,
                           double *C) {
  (void)v;
  return odb_batched_gemm(bt, alpha, A, X, beta, C);
}

static odb_status cpu_gemv(const odb_batch *bt, int v, double alpha,
                           const double *A, const double *x, double beta,
                           double *y) {
  (void)v;
  return odb_batched_gemv(bt, alpha, A, x, beta, y);
}

static odb_status cpu_lu_solve(const odb_batch *bt, int v, const double *LU,
                               double *x) {
  (void)v;
  return odb_batched_lu_solve(bt, LU, x);
}

static odb_status cpu_btd_resolve(const odb_blocktridiag *t, int v,
                                  int solve, int *out) {
  (void)t; (void)solve;
  *out = v;
  return ODB_OK;
}

/* The host object is all there is. */
static odb_status cpu_btd_open(odb_blocktridiag *t, int v,
                               odb_btd_state **out) {
  (void)t; (void)v;
  *out = NULL;
  return ODB_OK;
}

static void cpu_btd_close(odb_btd_state *s) { (void)s; }

static odb_status cpu_btd_host(odb_blocktridiag *t, odb_btd_state *s) {
  (void)t; (void)s;
  return ODB_OK;
}

static void cpu_btd_host_changed(odb_btd_state *s) { (void)s; }

static int cpu_btd_factored(const odb_blocktridiag *t,
                            const odb_btd_state *s) {
  (void)s;
  return odb_blocktridiag_factored(t);
}

static odb_status cpu_btd_random(odb_blocktridiag *t, odb_btd_state *s,
                                 uint64_t seed, double dominance) {
  (void)s;
  odb_blocktridiag_random(t, seed, dominance);
  return ODB_OK;
}

/* The pivots are checked first (not timed). */
static odb_status cpu_btd_factor(odb_blocktridiag *t, odb_btd_state *s,
                                 int v, long *bad, int *row,
                                 double *seconds) {
  (void)s; (void)v;
  ODB_TRY(odb_blocktridiag_factor_check(t, bad, row));
  double t0 = odb_clock_now();
  ODB_TRY(odb_blocktridiag_factor(t, NULL));
  *seconds = odb_clock_since(t0);
  return ODB_OK;
}

static odb_status cpu_btd_factor_fresh(odb_blocktridiag *t, odb_btd_state *s,
                                       int v, const odb_btd_plan *pl,
                                       uint64_t seed, double dominance,
                                       double *seconds) {
  (void)s; (void)v; (void)pl;
  odb_blocktridiag_random(t, seed, dominance);
  double t0 = odb_clock_now();
  ODB_TRY(odb_blocktridiag_factor(t, NULL));
  *seconds = odb_clock_since(t0);
  return ODB_OK;
}

static odb_status cpu_btd_solve(odb_blocktridiag *t, odb_btd_state *s, int v,
                                double *x, size_t len, double *seconds) {
  (void)s; (void)v;
  double t0 = odb_clock_now();
  ODB_TRY(odb_blocktridiag_solve(t, x, len, NULL));
  *seconds = odb_clock_since(t0);
  return ODB_OK;
}

static int cpu_btd_plan_ok(int v) {
  (void)v;
  return 0;
}

static odb_status cpu_btd_solve_packed(odb_blocktridiag *t, odb_btd_state *s,
                                       int v, const odb_btd_plan *pl,
                                       double *xp, double *seconds) {
  (void)s; (void)v; (void)pl;
  double t0 = odb_clock_now();
  ODB_TRY(odb_blocktridiag_solve_packed(t, xp));
  *seconds = odb_clock_since(t0);
  return ODB_OK;
}

const odb_batched_ops odb_batched_cpu_ops = {
  .backend = "cpu", .memory = "host", .says_why = 0,
  .ready = cpu_ready,
  .variant_parse = cpu_variant_parse, .variant_name = cpu_variant_name,
  .variant_doc = cpu_variant_doc,
  .batch_init = odb_batch_init, .resolve = cpu_resolve,
  .check_memory = odb_topo_check_memory,
  .alloc = cpu_alloc, .free = cpu_free, .copy = cpu_copy,
  .upload = cpu_copy, .download = cpu_copy,
  .identity = cpu_identity, .random = cpu_random,
  .random_rhs = cpu_random_rhs,
  .get_matrix = cpu_get_matrix, .set_matrix = cpu_set_matrix,
  .rhs_in = cpu_rhs_in, .rhs_out = cpu_rhs_out,
  .tic = cpu_tic, .toc = cpu_toc,
  .lu_safe = cpu_lu_safe, .lu = cpu_lu, .lu_launch = cpu_lu,
  .trsm = cpu_trsm, .gemm = cpu_gemm, .gemv = cpu_gemv,
  .lu_solve = cpu_lu_solve, .baseline_bench = NULL,
  .btd_resolve = cpu_btd_resolve, .btd_open = cpu_btd_open,
  .btd_close = cpu_btd_close, .btd_host = cpu_btd_host,
  .btd_host_changed = cpu_btd_host_changed,
  .btd_factored = cpu_btd_factored, .btd_random = cpu_btd_random,
  .btd_factor = cpu_btd_factor, .btd_factor_fresh = cpu_btd_factor_fresh,
  .btd_solve = cpu_btd_solve, .btd_plan_ok = cpu_btd_plan_ok,
  .btd_solve_packed = cpu_btd_solve_packed,
};

/* }====== */

static odb_registry registry = {
  "batched", 1, { "cpu" }, { &odb_batched_cpu_ops }
};

odb_status odb_batched_impl_register(const odb_batched_ops *ops) {
  return odb_registry_add(&registry, ops->backend, ops);
}

odb_status odb_batched_impl_find(const char *name,
                                 const odb_batched_ops **out) {
  const void *p;
  odb_status st = odb_registry_find(&registry, name, &p);
  *out = p;
  return st;
}

const char *odb_batched_impl_list(char *buf, size_t len) {
  return odb_registry_list(&registry, buf, len);
}
