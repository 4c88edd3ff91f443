/* batched_kernels.h - the per-pack kernels of the batched operations
   (internal). One pack = VL interleaved B x B matrices; element (i, j) of
   lane l at a[(i*B + j)*VL + l]. The standard layout is a pack of VL = 1.
   The innermost loops run over the lanes: with VL a compile-time constant
   (see BATCHED_DISPATCH) they become SIMD instructions. */
#ifndef ODB_BATCHED_KERNELS_H
#define ODB_BATCHED_KERNELS_H

#include <math.h>
#include "odb_batched.h"

#define BK_INLINE static inline __attribute__((always_inline))

/* Calls fn(VL, args...) with VL a literal for the supported widths, so that
   the always-inline kernels get a constant lane count. */
#define BATCHED_DISPATCH(vl, fn, ...)                                   \
  do {                                                                  \
    switch (vl) {                                                       \
    case 1: fn(1, __VA_ARGS__); break;                                  \
    case 2: fn(2, __VA_ARGS__); break;                                  \
    case 4: fn(4, __VA_ARGS__); break;                                  \
    case 8: fn(8, __VA_ARGS__); break;                                  \
    default: fn(16, __VA_ARGS__); break;                                \
    }                                                                   \
  } while (0)

/* Vector types of VL doubles (8-byte aligned: packs need no more). */
typedef double bk_v2 __attribute__((vector_size(16), aligned(8), may_alias));
typedef double bk_v4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef double bk_v8 __attribute__((vector_size(64), aligned(8), may_alias));
typedef double bk_v16 __attribute__((vector_size(128), aligned(8),
                                     may_alias));

#define BK_VL 1
#define BK_V double
#define BK_FN(name) bk_##name##_1
#include "batched_kernels.inc"
#undef BK_VL
#undef BK_V
#undef BK_FN
#define BK_VL 2
#define BK_V bk_v2
#define BK_FN(name) bk_##name##_2
#include "batched_kernels.inc"
#undef BK_VL
#undef BK_V
#undef BK_FN
#define BK_VL 4
#define BK_V bk_v4
#define BK_FN(name) bk_##name##_4
#include "batched_kernels.inc"
#undef BK_VL
#undef BK_V
#undef BK_FN
#define BK_VL 8
#define BK_V bk_v8
#define BK_FN(name) bk_##name##_8
#include "batched_kernels.inc"
#undef BK_VL
#undef BK_V
#undef BK_FN
#define BK_VL 16
#define BK_V bk_v16
#define BK_FN(name) bk_##name##_16
#include "batched_kernels.inc"
#undef BK_VL
#undef BK_V
#undef BK_FN

/* Picks the kernel of lane count VL (a constant once inlined: the switch
   folds away). Assumes VL is one of 1, 2, 4, 8, 16. */
#define BK_PICK(VL, name, ...)                                          \
  do {                                                                  \
    switch (VL) {                                                       \
    case 1: bk_##name##_1(__VA_ARGS__); break;                          \
    case 2: bk_##name##_2(__VA_ARGS__); break;                          \
    case 4: bk_##name##_4(__VA_ARGS__); break;                          \
    case 8: bk_##name##_8(__VA_ARGS__); break;                          \
    default: bk_##name##_16(__VA_ARGS__); break;                        \
    }                                                                   \
  } while (0)

/* LU of one pack; badrow[l] gets the first refused pivot row or -1. */
BK_INLINE void bk_lu(const int VL, int B, double *a, int *badrow) {
  BK_PICK(VL, lu, B, a, badrow);
}
/* X := L^{-1} X (unit lower), X with m columns. */
BK_INLINE void bk_trsm_llu(const int VL, int B, int m, const double *t,
                           double *x) {
  BK_PICK(VL, trsm_llu, B, m, t, x);
}
/* X := U^{-1} X, X with m columns. */
BK_INLINE void bk_trsm_lu(const int VL, int B, int m, const double *t,
                          double *x) {
  BK_PICK(VL, trsm_lu, B, m, t, x);
}
/* X := X U^{-1}, X square. */
BK_INLINE void bk_trsm_ru(const int VL, int B, const double *t, double *x) {
  BK_PICK(VL, trsm_ru, B, t, x);
}
/* C := alpha A X + beta C (X, C with m columns). */
BK_INLINE void bk_gemm(const int VL, int B, int m, double alpha,
                       const double *a, const double *x, double beta,
                       double *c) {
  BK_PICK(VL, gemm, B, m, alpha, a, x, beta, c);
}

#endif
