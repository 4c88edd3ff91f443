/* cuda_backend.h - the "cuda" backend (C interface; no CUDA types). */
#ifndef ODB_CUDA_BACKEND_H
#define ODB_CUDA_BACKEND_H

#include <stddef.h>
#include "odb_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
** Number of CUDA devices that can be used. Returns 0 when there are none
** or the runtime cannot tell (no driver, ...), with the reason in why.
*/
int odb_cuda_device_count(char *why, size_t len);

/*
** Creates the "cuda" backend on one device (0, 1, ...). Fails with
** ODB_ERR_BACKEND (message naming the CUDA call, file and line) when the
** device cannot be used. The caller owns the result (odb_backend_destroy).
*/
odb_status odb_cuda_backend_create(odb_ctx *ctx, int device,
                                   odb_backend **out);

/*
** Device-to-device copy bandwidth of the current device, in bytes read +
** written per second: the median of 9 copies (after a warm-up) between two
** buffers of 8 times the L2 cache, 256 MiB to 1 GiB each (smaller only
** where the device lacks the room). Measured once per device and process
** and cached; every GPU family reports this figure as the copy bandwidth
** of the run and computes its floors from it (the backend's copy_bandwidth,
** odb_bgpu_copy_bandwidth, odb_sparse_gpu_copy_bandwidth,
** odb_krylov_gpu_spmv_seconds). Thread-safe.
*/
odb_status odb_cuda_copy_bandwidth(double *bytes_per_s);
/*
** Read bandwidth of the current device in bytes per second, with the same
** statistics (median of 9 after a warm-up, a buffer of 8 times the L2):
** a grid-stride sum of the buffer that writes nothing. Measured once per
** device and process; the backend's read_bandwidth, which
** odb_bandwidth_gpu_get (core/io/odb_bandwidth.h) records beside the
** copy figure. Thread-safe.
*/
odb_status odb_cuda_read_bandwidth(double *bytes_per_s);

/*
** FP64 peaks of the current device in FLOP/s (a fused multiply-add counts
** 2) and their SM clocks, measured (gpu/rt/odb_fp64_peak.cu): flops
** through the FP64 pipes, independent DFMA chains on every thread of 64
** warps an SM; tensor_flops through the tensor cores, chains of DMMA
** (mma.sync m16n8k16 f64 from 9.0, m8n8k4 on 8.x) on every warp, 0 below
** compute capability 8.0. The median of 9 timed launches each, after a
** warm-up. Measured once per device and process (about 0.25 s on an H200)
** and cached; thread-safe. The compute roof of the GPU RK kernels
** (docs/gpu.md, "the compute roof") and of the tall & skinny products.
*/
odb_status odb_cuda_fp64_peak(odb_fp64_peaks *out);

#ifdef __cplusplus
}
#endif

#endif
