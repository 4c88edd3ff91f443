/* odb_backend.h - compute backends as ops tables, and buffers they own. */
#ifndef ODB_BACKEND_H
#define ODB_BACKEND_H

#include <stddef.h>
#include "odb_status.h"

typedef struct odb_ctx odb_ctx;
typedef struct odb_backend odb_backend;

/* A device's measured FP64 peaks in FLOP/s (a fused multiply-add counts
   2): through the vector pipes (flops) and the tensor cores (tensor_flops,
   0 where it has none), each with the SM clock in MHz it ran at (0: not
   known). A kernel that runs at another clock has the peak times its clock
   over this one as its roof: the pipes' rate a cycle is fixed. */
typedef struct odb_fp64_peaks {
  double flops, mhz;
  double tensor_flops, tensor_mhz;
} odb_fp64_peaks;

/* What a backend says about the device behind it (GPU name, memory, ...). */
typedef struct odb_device_info {
  char name[128];        /* "cpu" or the GPU's product name */
  int cc_major, cc_minor; /* compute capability, 0 for the CPU */
  int sm_count;          /* streaming multiprocessors, 0 for the CPU */
  size_t mem_bytes;      /* device memory, 0 where not known */
  size_t mem_free_bytes; /* device memory free at the query, 0 where not
                            known */
  int runtime_version;   /* CUDA runtime version (e.g. 13000), 0 otherwise */
  int driver_version;    /* CUDA driver version, 0 otherwise */
  double clock_mhz;      /* SM clock, 0 where not known */
  double mem_clock_mhz;  /* memory clock, 0 where not known */
  int mem_bus_bits;      /* memory bus width, 0 where not known */
  char pci_bus_id[32];   /* "0000:1b:00.0" for a GPU, "" otherwise */
  size_t l2_bytes;       /* a GPU's L2 cache, 0 where not known (the CPU's
                            caches are in odb_topo) */
} odb_device_info;

/*
** The ops table of a backend (SUNDIALS/ggml style). Required ops must be
** set; optional ops may be NULL and then get the default named beside them.
** All pointers given to ops are the backend's own memory unless the name
** says "host".
*/
typedef struct odb_backend_ops {
  const char *name;                     /* "cpu", "cuda" */
  /* required */
  odb_status (*alloc)(odb_backend *b, size_t bytes, void **ptr);
  void (*free)(odb_backend *b, void *ptr);
  odb_status (*to_device)(odb_backend *b, void *dst, const void *host_src,
                          size_t bytes);
  odb_status (*to_host)(odb_backend *b, void *host_dst, const void *src,
                        size_t bytes);
  odb_status (*query)(odb_backend *b, odb_device_info *info);
  /* optional */
  odb_status (*copy)(odb_backend *b, void *dst, const void *src,
                     size_t bytes);     /* NULL: through a host bounce buffer */
  odb_status (*sync)(odb_backend *b);   /* NULL: nothing to wait for */
  /* y[i] += a * x[i] for i < n, doubles in backend memory (a smoke kernel
     that every backend test compares with the CPU). NULL: unsupported. */
  odb_status (*axpy)(odb_backend *b, size_t n, double a, const double *x,
                     double *y);
  void (*destroy)(odb_backend *b);      /* NULL: nothing to free */
  /* Copy bandwidth of the device's memory in GB/s (bytes read + written
     over the time of a large device-to-device copy). NULL: not measured. */
  odb_status (*copy_bandwidth)(odb_backend *b, double *gbs);
  /* Read bandwidth of the device's memory in GB/s (a streaming sum of a
     large buffer). NULL: not measured. */
  odb_status (*read_bandwidth)(odb_backend *b, double *gbs);
  /* Measured FP64 peaks of the device and the clocks they ran at
     (odb_fp64_peaks). NULL: not measured (the CPU's compute roof is
     flops_1t in odb_bandwidth.h). */
  odb_status (*fp64_peak)(odb_backend *b, odb_fp64_peaks *out);
} odb_backend_ops;

struct odb_backend {
  const odb_backend_ops *ops;
  void *impl;        /* backend-private state */
  odb_ctx *ctx;      /* the context the backend is registered in */
  int host_memory;   /* 1 when buffers are plain host memory */
  double copy_gbs;   /* copy bandwidth once measured (GB/s), else 0 */
  double read_gbs;   /* read bandwidth once measured (GB/s), else 0 */
};

/* A block of memory owned by a backend. */
typedef struct odb_buffer {
  odb_backend *backend;
  void *data;
  size_t bytes;
} odb_buffer;

/* The always-present CPU backend (statically allocated ops, new impl). */
odb_status odb_backend_cpu_create(odb_ctx *ctx, odb_backend **out);
/* Calls ops->destroy and frees the struct; NULL is allowed. */
void odb_backend_destroy(odb_backend *b);

/* Generic wrappers that apply the defaults of optional ops. */
odb_status odb_backend_copy(odb_backend *b, void *dst, const void *src,
                            size_t bytes);
odb_status odb_backend_sync(odb_backend *b);
odb_status odb_backend_query(odb_backend *b, odb_device_info *info);
/*
** The backend's copy bandwidth (GB/s, bytes read + written per second),
** measured on the first call and kept in b->copy_gbs. ODB_ERR_UNSUPPORTED
** for backends that do not measure it (the CPU's is in odb_bandwidth.h).
*/
odb_status odb_backend_copy_bandwidth(odb_backend *b, double *gbs);
/* The same for the read bandwidth (b->read_gbs). */
odb_status odb_backend_read_bandwidth(odb_backend *b, double *gbs);
/* The backend's FP64 peaks (ops->fp64_peak; the backend keeps them once
   measured); ODB_ERR_UNSUPPORTED for a backend that does not measure them. */
odb_status odb_backend_fp64_peak(odb_backend *b, odb_fp64_peaks *out);

/* Buffers: created zeroed? No: contents are undefined after create. */
odb_status odb_buffer_create(odb_backend *b, size_t bytes, odb_buffer **out);
void odb_buffer_destroy(odb_buffer *buf);
odb_status odb_buffer_write(odb_buffer *buf, size_t offset, const void *src,
                            size_t bytes);
odb_status odb_buffer_read(const odb_buffer *buf, size_t offset, void *dst,
                           size_t bytes);

#endif
