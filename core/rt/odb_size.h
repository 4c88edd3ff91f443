/* odb_size.h - checked size arithmetic, the one home for it.

   Every constructor that multiplies counts given by a user (rows x columns,
   lines x length x block^2, matrices x bytes) computes the product here, so
   that a product that does not fit is refused instead of wrapping around
   to a small allocation that is then written past. Each returns 0 when the
   result fits (and stores it) and nonzero when it does not;
   callers turn that into their own "too large" error. */
#ifndef ODB_SIZE_H
#define ODB_SIZE_H

#include <stddef.h>

/* *out = a * b; nonzero when the product does not fit a size_t. */
static inline int odb_size_mul(size_t *out, size_t a, size_t b) {
  return __builtin_mul_overflow(a, b, out);
}

/* *out = a * b * c; nonzero when any partial product does not fit. */
static inline int odb_size_mul3(size_t *out, size_t a, size_t b, size_t c) {
  size_t ab;
  return __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, out);
}

/* *out = a + b; nonzero when the sum does not fit a size_t. */
static inline int odb_size_add(size_t *out, size_t a, size_t b) {
  return __builtin_add_overflow(a, b, out);
}

/* *out = a * b for signed counts (long); nonzero on overflow. Negative
   operands are the caller's to refuse before. */
static inline int odb_long_mul(long *out, long a, long b) {
  return __builtin_mul_overflow(a, b, out);
}

#endif
