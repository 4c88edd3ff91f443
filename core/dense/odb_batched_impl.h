/* odb_batched_impl.h - the implementations of the batched family
   (ob.batched and ob.blocktridiag) as ops tables registered by backend
   name: "cpu" (batched/batched_impl_cpu.c, built in) and, in builds with
   CUDA, "cuda" (gpu/dense/odb_batched_cuda.c, registered by
   odb_kernels_register). Callers pick a table once, by name, and call
   through it; every pointer given to an op is memory of that backend
   unless its name says host. */
#ifndef ODB_BATCHED_IMPL_H
#define ODB_BATCHED_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "odb_batched.h"

struct odb_ctx;

/* The operations, for variant choice, applicability and byte counts. */
typedef enum odb_batched_op {
  ODB_BATCHED_OP_LU = 0,      /* LU in place */
  ODB_BATCHED_OP_SOLVE = 1,   /* x := (LU)^{-1} x with given factors */
  ODB_BATCHED_OP_TRSM = 2,    /* X := L^{-1} X (unit lower, X B x B) */
  ODB_BATCHED_OP_GEMM = 3,    /* C := A X (B x B) */
  ODB_BATCHED_OP_GEMV = 4     /* y := A x */
} odb_batched_op;

/* "lu", "solve", "trsm", "gemm", "gemv"; ODB_ERR_NAME for others. */
const char *odb_batched_op_name(odb_batched_op op);
odb_status odb_batched_op_parse(const char *name, odb_batched_op *out);
/* Bytes an op must move at least, read + written, without pivoting:
   odb_batched_min_bytes (odb_dense_floor.h has the count per op). */
double odb_batched_op_bytes(const odb_batch *bt, odb_batched_op op);

/* The kernels of the stream factor (odb_bgpu_btd_factor_stream): the
   row kernel (a warp per pack, 1..8 threads a line), the tile kernel (a
   line's 16 or 32 threads across the pack's warps) and the warp kernel (a
   line's 8, 16 or 32 threads within one warp); AUTO lets the plan choose.
   Names "auto", "row", "tile", "warp". */
typedef enum odb_btd_kernel {
  ODB_BTD_KERNEL_AUTO = 0,
  ODB_BTD_KERNEL_ROW,
  ODB_BTD_KERNEL_TILE,
  ODB_BTD_KERNEL_WARP
} odb_btd_kernel;
const char *odb_btd_kernel_name(odb_btd_kernel k);
odb_status odb_btd_kernel_parse(const char *name, odb_btd_kernel *out);

/* A stream plan (odb_bgpu_btd_solve_stream; for the factor, stages,
   threads and kernel: odb_bgpu_btd_factor_stream); plain: none given. */
typedef struct odb_btd_plan {
  int stages, y_on_chip, threads;
  odb_btd_kernel kernel;
  int plain;
} odb_btd_plan;

/* An implementation's state of one block-tridiagonal object (the device
   copy of its blocks); NULL where the host blocks are all there is. */
typedef struct odb_btd_state odb_btd_state;

typedef struct odb_batched_ops {
  const char *backend;   /* "cpu", "cuda" */
  const char *memory;    /* where the data lives: "host", "device" */
  int says_why;          /* 1: a failed alloc records a reason worth showing */

  /* ODB_OK when this run can use the backend; else why not. */
  odb_status (*ready)(struct odb_ctx *ctx);
  /* Variants (0 is "auto" everywhere): parse a name; the name of one;
     what variant v runs and the file of its code, for odebench --list
     (NULL past the last; the CPU lists its one, v = 0). */
  odb_status (*variant_parse)(const char *name, int *out);
  const char *(*variant_name)(int v);
  const char *(*variant_doc)(int v);

  /* {====== batches of matrices */
  odb_status (*batch_init)(odb_batch *bt, odb_batched_layout layout, long n,
                           int b, int vl);
  /* The variant that runs op on bt for v (auto resolved), or why none. */
  odb_status (*resolve)(const odb_batch *bt, odb_batched_op op, int v,
                        int *out);
  /* Refuses, before allocating, bytes the memory cannot hold. */
  odb_status (*check_memory)(double bytes, const char *what);
  odb_status (*alloc)(size_t doubles, double **out);
  void (*free)(double *p);
  odb_status (*copy)(double *dst, const double *src, size_t doubles);
  odb_status (*upload)(double *dst, const double *host, size_t doubles);
  odb_status (*download)(double *host, const double *src, size_t doubles);
  /* Identity matrices in every lane, padding included. */
  odb_status (*identity)(const odb_batch *bt, double *A);
  /* odb_batched_random / odb_batched_random_rhs (the same values). */
  odb_status (*random)(const odb_batch *bt, uint64_t seed, double dominance,
                       double *A);
  odb_status (*random_rhs)(const odb_batch *bt, int m, uint64_t seed,
                           double *x);
  /* Matrix p, row-major B x B on the host. */
  odb_status (*get_matrix)(const odb_batch *bt, const double *A, long p,
                           double *host);
  odb_status (*set_matrix)(const odb_batch *bt, double *A, long p,
                           const double *host);
  /* One vector per matrix: host, standard order <-> bt's rhs layout. */
  odb_status (*rhs_in)(const odb_batch *bt, const double *host, double *x);
  odb_status (*rhs_out)(const odb_batch *bt, const double *x, double *host);
  /* A timed region: tic's token to toc, which gives the seconds. */
  odb_status (*tic)(double *t0);
  odb_status (*toc)(double t0, double *seconds);
  /* LU all or nothing: a zero or tiny pivot gives ODB_ERR_ARG with *bad
     (and *row, -1 when not known) set and every matrix as it was;
     *seconds of the factorization. */
  odb_status (*lu_safe)(const odb_batch *bt, int v, double *A, long *bad,
                        int *row, double *seconds);
  /* LU with the pivot check (factored all the same) / without it and
     without waiting (for timing). */
  odb_status (*lu)(const odb_batch *bt, int v, double *A);
  odb_status (*lu_launch)(const odb_batch *bt, int v, double *A);
  odb_status (*trsm)(const odb_batch *bt, int v, odb_batched_trsm_kind kind,
                     const double *T, double *X);
  odb_status (*gemm)(const odb_batch *bt, int v, double alpha,
                     const double *A, const double *X, double beta,
                     double *C);
  odb_status (*gemv)(const odb_batch *bt, int v, double alpha,
                     const double *A, const double *x, double beta,
                     double *y);
  odb_status (*lu_solve)(const odb_batch *bt, int v, const double *LU,
                         double *x);
  /* A vendor library's batched LU (op lu) or solve (op solve) on copies of
     A, with (pivot 1) or without partial pivoting: reps times into times.
     NULL where the backend has none. */
  odb_status (*baseline_bench)(const odb_batch *bt, const double *A,
                               odb_batched_op op, int pivot, int reps,
                               double *times);
  /* }====== */

  /* {====== block-tridiagonal objects (the host object t holds the shape
     and the host blocks; s the backend's state) */
  odb_status (*btd_resolve)(const odb_blocktridiag *t, int v, int solve,
                            int *out);
  /* The state of a new object with variant v (it must run both factor and
     solve); *out may be NULL. */
  odb_status (*btd_open)(odb_blocktridiag *t, int v, odb_btd_state **out);
  void (*btd_close)(odb_btd_state *s);
  /* Makes the host blocks current before they are read or written. */
  odb_status (*btd_host)(odb_blocktridiag *t, odb_btd_state *s);
  /* The host blocks were written. */
  void (*btd_host_changed)(odb_btd_state *s);
  int (*btd_factored)(const odb_blocktridiag *t, const odb_btd_state *s);
  odb_status (*btd_random)(odb_blocktridiag *t, odb_btd_state *s,
                           uint64_t seed, double dominance);
  /* Factors all or nothing: a refused pivot gives ODB_ERR_ARG with *bad
     (and *row, -1 when not known) set and the blocks as they were. */
  odb_status (*btd_factor)(odb_blocktridiag *t, odb_btd_state *s, int v,
                           long *bad, int *row, double *seconds);
  /* Random blocks (seed, not timed), then one timed factorization, with
     plan pl where it is given and not plain (NULL: none). */
  odb_status (*btd_factor_fresh)(odb_blocktridiag *t, odb_btd_state *s,
                                 int v, const odb_btd_plan *pl, uint64_t seed,
                                 double dominance, double *seconds);
  /* Solves x (host, standard order, len values) in place. */
  odb_status (*btd_solve)(odb_blocktridiag *t, odb_btd_state *s, int v,
                          double *x, size_t len, double *seconds);
  /* Whether variant v takes a stream plan. */
  int (*btd_plan_ok)(int v);
  /* One timed solve of xp (the internal layout, this backend's memory)
     with plan pl where it is not plain. */
  odb_status (*btd_solve_packed)(odb_blocktridiag *t, odb_btd_state *s,
                                 int v, const odb_btd_plan *pl, double *xp,
                                 double *seconds);
  /* }====== */
} odb_batched_ops;

/* The CPU table (always registered). */
extern const odb_batched_ops odb_batched_cpu_ops;

/* Registers ops under its backend name. */
odb_status odb_batched_impl_register(const odb_batched_ops *ops);
/* The table of backend name; the registry's error otherwise. */
odb_status odb_batched_impl_find(const char *name,
                                 const odb_batched_ops **out);
/* The registered names ("cpu, cuda") into buf. */
const char *odb_batched_impl_list(char *buf, size_t len);

#endif
