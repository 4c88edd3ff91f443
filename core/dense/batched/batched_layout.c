/* batched_layout.c - shapes of batches of small matrices and the conversion
   between the standard and the compact (interleaved) layout. */
#include <string.h>

#include "odb_batched.h"
#include "odb_size.h"

static const char *const layout_names[] = { "standard", "compact" };

/* Assumes l is one of the enum values. */
const char *odb_batched_layout_name(odb_batched_layout l) {
  return (unsigned)l < 2 ? layout_names[l] : "?";
}

/* name may be NULL (refused). */
odb_status odb_batched_layout_parse(const char *name, odb_batched_layout *out) {
  for (int i = 0; i < 2; ++i)
    if (name && strcmp(name, layout_names[i]) == 0) {
      *out = (odb_batched_layout)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown layout '%s' (known: standard, "
                  "compact)", name ? name : "(null)");
}

/* The build's vector width in doubles (from the compiler's target macros). */
int odb_batched_default_vl(void) {
#if defined(__AVX512F__)
  return 8;
#else
  return 4;
#endif
}

/* bt must not be NULL. */
odb_status odb_batch_init(odb_batch *bt, odb_batched_layout layout, long n,
                          int b, int vl) {
  if (layout != ODB_LAYOUT_STANDARD && layout != ODB_LAYOUT_COMPACT)
    return ODB_FAIL(ODB_ERR_ARG, "layout %d is neither standard nor compact",
                    (int)layout);
  if (n < 1)
    return ODB_FAIL(ODB_ERR_ARG, "batch count n = %ld must be at least 1", n);
  if (b < ODB_BATCHED_MIN_B || b > ODB_BATCHED_MAX_B)
    return ODB_FAIL(ODB_ERR_ARG, "block size %d is outside %d..%d", b,
                    ODB_BATCHED_MIN_B, ODB_BATCHED_MAX_B);
  if (vl == 0)
    vl = odb_batched_default_vl();
  if (vl != 1 && vl != 2 && vl != 4 && vl != 8 && vl != 16)
    return ODB_FAIL(ODB_ERR_ARG, "vector length %d is not one of 1, 2, 4, 8, "
                    "16 (or 0 for the default)", vl);
  if (layout == ODB_LAYOUT_STANDARD)
    vl = 1;
  /* packs * vl * b * b doubles, padding included, must have a byte count
     that fits a size_t: odb_batch_mat_len and odb_batch_rhs_len (m <= b)
     and every offset below it then need no further check */
  long packs = n / vl + (n % vl != 0);
  size_t len, bytes;
  if (odb_size_mul3(&len, (size_t)packs * (size_t)vl, (size_t)b, (size_t)b) ||
      odb_size_mul(&bytes, len, sizeof(double)))
    return ODB_FAIL(ODB_ERR_NOMEM, "a batch of n = %ld matrices of %d x %d "
                    "would need %.3g bytes, more than this machine can "
                    "address", n, b, b, 8.0 * (double)packs * vl * b * b);
  bt->layout = layout;
  bt->n = n;
  bt->b = b;
  bt->vl = vl;
  bt->packs = packs;
  return ODB_OK;
}

/* bt from odb_batch_init. */
size_t odb_batch_mat_len(const odb_batch *bt) {
  return (size_t)bt->packs * (size_t)bt->vl * (size_t)bt->b * (size_t)bt->b;
}

/* bt from odb_batch_init, m >= 1. */
size_t odb_batch_rhs_len(const odb_batch *bt, int m) {
  return (size_t)bt->packs * (size_t)bt->vl * (size_t)bt->b * (size_t)m;
}

/* 0 <= p < packs*vl, 0 <= i, j < b. */
size_t odb_batch_mat_at(const odb_batch *bt, long p, int i, int j) {
  size_t vl = (size_t)bt->vl, b = (size_t)bt->b;
  return (((size_t)p / vl * b + (size_t)i) * b + (size_t)j) * vl
         + (size_t)p % vl;
}

/* 0 <= p < packs*vl, 0 <= i < b, 0 <= c < m. */
size_t odb_batch_rhs_at(const odb_batch *bt, int m, long p, int i, int c) {
  size_t vl = (size_t)bt->vl, b = (size_t)bt->b;
  return (((size_t)p / vl * b + (size_t)i) * (size_t)m + (size_t)c) * vl
         + (size_t)p % vl;
}

/* Padding lanes (p >= n) of the last pack become identity matrices. */
void odb_batched_pack(const odb_batch *bt, const double *src, double *dst) {
  int b = bt->b;
  if (bt->vl == 1) {
    memcpy(dst, src, sizeof(double) * odb_batch_mat_len(bt));
    return;
  }
  for (long p = 0; p < bt->packs * bt->vl; ++p)
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j)
        dst[odb_batch_mat_at(bt, p, i, j)] =
          p < bt->n ? src[((size_t)p * b + i) * b + j] : (i == j ? 1.0 : 0.0);
}

/* Only the n real matrices are written to dst. */
void odb_batched_unpack(const odb_batch *bt, const double *src, double *dst) {
  int b = bt->b;
  if (bt->vl == 1) {
    memcpy(dst, src, sizeof(double) * odb_batch_mat_len(bt));
    return;
  }
  for (long p = 0; p < bt->n; ++p)
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j)
        dst[((size_t)p * b + i) * b + j] = src[odb_batch_mat_at(bt, p, i, j)];
}

/* Padding lanes of the last pack become zero. */
void odb_batched_pack_rhs(const odb_batch *bt, int m, const double *src,
                          double *dst) {
  int b = bt->b;
  if (bt->vl == 1) {
    memcpy(dst, src, sizeof(double) * odb_batch_rhs_len(bt, m));
    return;
  }
  for (long p = 0; p < bt->packs * bt->vl; ++p)
    for (int i = 0; i < b; ++i)
      for (int c = 0; c < m; ++c)
        dst[odb_batch_rhs_at(bt, m, p, i, c)] =
          p < bt->n ? src[((size_t)p * b + i) * m + c] : 0.0;
}

/* Only the n real right-hand sides are written to dst. */
void odb_batched_unpack_rhs(const odb_batch *bt, int m, const double *src,
                            double *dst) {
  int b = bt->b;
  if (bt->vl == 1) {
    memcpy(dst, src, sizeof(double) * odb_batch_rhs_len(bt, m));
    return;
  }
  for (long p = 0; p < bt->n; ++p)
    for (int i = 0; i < b; ++i)
      for (int c = 0; c < m; ++c)
        dst[((size_t)p * b + i) * m + c] = src[odb_batch_rhs_at(bt, m, p, i, c)];
}

/* Matrix p of the batch (padding lanes: identity). */
void odb_batched_random(const odb_batch *bt, uint64_t seed, double dominance,
                        double *A) {
  int b = bt->b;
  double shift = dominance * b;
  for (long p = 0; p < bt->packs * bt->vl; ++p)
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < b; ++j)
        A[odb_batch_mat_at(bt, p, i, j)] =
          p < bt->n ? odb_batched_rand_entry(seed, (uint64_t)p, b, i, j, shift)
                    : (i == j ? 1.0 : 0.0);
}

/* Padding lanes get zero. */
void odb_batched_random_rhs(const odb_batch *bt, int m, uint64_t seed,
                            double *x) {
  int b = bt->b;
  for (long p = 0; p < bt->packs * bt->vl; ++p)
    for (int i = 0; i < b; ++i)
      for (int c = 0; c < m; ++c)
        x[odb_batch_rhs_at(bt, m, p, i, c)] =
          p < bt->n ? odb_batched_unit(seed ^ ODB_BATCHED_RHS_SEED,
                                       ((uint64_t)p * b + i) * m + c)
                    : 0.0;
}
