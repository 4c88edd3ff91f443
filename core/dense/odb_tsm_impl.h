/* odb_tsm_impl.h - the implementations of the tall & skinny products of
   one shape (ob.kernel) as ops tables registered by backend name: "cpu"
   (odb_tsm_impl_cpu.c, built in: odb_tsm_host) and, in builds with CUDA,
   "cuda" (gpu/dense/odb_tsm_cuda.c: the tuned plans, registered by
   odb_kernels_register). */
#ifndef ODB_TSM_IMPL_H
#define ODB_TSM_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "odb_measure.h"
#include "odb_tsm.h"

struct odb_ctx;

/* One product of a shape with its own matrices (the backend's). */
typedef struct odb_tsm_run odb_tsm_run;

/* What a product says about itself. */
typedef struct odb_tsm_desc {
  char config[160];    /* "tm=4 tn=8 ..." or "threads=8" */
  int tuned;           /* 1: regs, raced and race_changed mean something */
  int regs, raced, race_changed;
  long evals, cached;  /* the search: configurations, of them cached */
  int threads;         /* the CPU's threads (0 where none) */
} odb_tsm_desc;

typedef struct odb_tsm_ops {
  const char *backend;   /* "cpu", "cuda" */
  const char *peer;      /* what compare times against */
  double copies;         /* copies of the matrices held (device and host) */
  int takes_threads;     /* 1: create uses threads */
  /* ODB_OK when this run can use the backend; else why not. */
  odb_status (*ready)(struct odb_ctx *ctx);
  /* A product of the shape (full: the full tuning space; threads: 0 one
     per core; seed: the entries). */
  odb_status (*create)(struct odb_ctx *ctx, odb_tsm_op op, odb_tsm_dtype t,
                       long M, long N, long K, int full, int threads,
                       uint64_t seed, odb_tsm_run **out);
  void (*destroy)(odb_tsm_run *r);
  /* Times the product as o says (odb_measure.h; the context may be
     NULL) into m: median, quartiles, spread and reps. */
  odb_status (*time)(odb_tsm_run *r, const odb_measure_opts *o,
                     struct odb_ctx *ctx, odb_measurement *m);
  /* The same of the vendor library (cuBLAS); NULL where there is none. */
  odb_status (*peer_time)(odb_tsm_run *r, const odb_measure_opts *o,
                          struct odb_ctx *ctx, odb_measurement *m);
  /* Both in turn, rounds of one run of ours and one of the peer (both see
     the same clocks): the summaries of ours and of the peer's runs. */
  odb_status (*compare)(odb_tsm_run *r, const odb_measure_opts *o,
                        struct odb_ctx *ctx, odb_measurement *mine,
                        odb_measurement *peer);
  /* The relative difference from the reference. */
  odb_status (*check)(odb_tsm_run *r, double *err);
  /* The caller's inputs in place of the random ones (host arrays of the
     shape: A K x M, then B K x N or, for tsmm, C M x N), for time,
     check and result from then on; the GPU copies them to the device. */
  odb_status (*load)(odb_tsm_run *r, const double *A, const double *X);
  /* One product of the current inputs into out (host: C M x N, or B
     K x N). */
  odb_status (*result)(odb_tsm_run *r, double *out);
  void (*describe)(const odb_tsm_run *r, odb_tsm_desc *d);
} odb_tsm_ops;

/* The CPU table (always registered). */
extern const odb_tsm_ops odb_tsm_cpu_ops;

/* Registers ops under its backend name. */
odb_status odb_tsm_impl_register(const odb_tsm_ops *ops);
/* The table of backend name; the registry's error otherwise. */
odb_status odb_tsm_impl_find(const char *name, const odb_tsm_ops **out);
/* The table of backend name or NULL, without an error. */
const odb_tsm_ops *odb_tsm_impl_get(const char *name);
/* The registered names ("cpu, cuda") into buf. */
const char *odb_tsm_impl_list(char *buf, size_t len);

#endif
