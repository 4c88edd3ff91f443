/* odb_sparse_file.c - Matrix Market in and out, any format back to CSR,
** and CSR to the formats that apply to a matrix from a file (see
** odb_sparse_file.h). The CSR -> BSR/ELL/HYB/DIA conversions themselves
** are formats.c's; this file decides whether they apply and builds Bdia
** from CSR over a grid's structure.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "odb_shown.h"
#include "odb_size.h"
#include "odb_sparse_file.h"
#include "odb_topo.h"

/* {====== reading and writing */

/* The nonzeros of a dense column-major n x n array as CSR. */
static odb_status csr_of_dense(const odb_mtx *m, odb_sparse *A)
{
  long n = m->nrows;
  int64_t nnz = 0;
  if (!(A->rowptr = malloc((size_t)(n + 1) * sizeof *A->rowptr)))
    return ODB_FAIL(ODB_ERR_NOMEM, "CSR of a %ld x %ld array", n, n);
  A->rowptr[0] = 0;
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++) nnz += m->dense[(size_t)j * n + i] != 0.0;
    A->rowptr[i + 1] = nnz;
  }
  A->col = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->col);
  A->val = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->val);
  if (!A->col || !A->val) return ODB_FAIL(ODB_ERR_NOMEM, "CSR of %lld nonzeros", (long long)nnz);
  for (long i = 0, p = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      double v = m->dense[(size_t)j * n + i];
      if (v != 0.0) { A->col[p] = (int32_t)j; A->val[p++] = v; }
    }
  A->nnz = (long)nnz;
  return ODB_OK;
}

odb_status odb_sparse_read_mtx(const char *path, const odb_mtx_opts *opts, odb_sparse **out)
{
  odb_mtx m;
  char sh[ODB_SHOWN_NAME];
  odb_status st;
  *out = NULL;
  ODB_TRY(odb_mtx_read(path, opts, &m));
  odb_shown(path, sh, sizeof sh);
  if (m.nrows != m.ncols || m.nrows == 0) {
    st = ODB_FAIL(ODB_ERR_ARG, "%s: the matrix is %ld x %ld; odebench's sparse matrices are square and not empty "
                  "(SpMV and the Krylov solvers take an order n >= 1)", sh, m.nrows, m.ncols);
    odb_mtx_free(&m);
    return st;
  }
  odb_sparse *A = calloc(1, sizeof *A);
  if (!A) { odb_mtx_free(&m); return ODB_FAIL(ODB_ERR_NOMEM, "matrix"); }
  A->fmt = ODB_FMT_CSR; A->n = m.nrows;
  if (m.array) {
    st = csr_of_dense(&m, A);
    odb_mtx_free(&m);
    if (st != ODB_OK) { odb_sparse_free(A); return st; }
  } else {                       /* the arrays change hands */
    A->rowptr = m.rowptr; A->col = m.col; A->val = m.val; A->nnz = m.nnz;
    m.rowptr = NULL; m.col = NULL; m.val = NULL;
  }
  *out = A;
  return ODB_OK;
}

odb_status odb_sparse_write_mtx(const odb_sparse *A, const char *path)
{
  odb_sparse *c = NULL;
  if (A->fmt != ODB_FMT_CSR) ODB_TRY(odb_sparse_to_csr(A, &c));
  const odb_sparse *s = c ? c : A;
  odb_status st = odb_mtx_write_csr(path, s->n, s->n, s->rowptr, s->col, s->val);
  odb_sparse_free(c);
  return st;
}

/* }====== */

/* {====== any format -> CSR */

/* The partition of top-plane position (h, i) in a Bdia's pu x pv map
** (the split odb_gh_partition makes). */
static int bdia_part(const odb_bdia *b, int h, int i)
{
  int ph = 0, pi = 0;
  while ((long)(ph + 1) * b->H / b->pu <= h) ph++;
  while ((long)(pi + 1) * b->I / b->pv <= i) pi++;
  return ph * b->pv + pi;
}

/* Appends (c, v) to the row being built when v is not zero; cols NULL
** only counts. */
#define PUT(c, v) do { double v_ = (v); if (v_ != 0.0) { if (cols) { cols[k] = (int32_t)(c); vals[k] = v_; } k++; } } while (0)

/* Row r of A (a padded format) into cols/vals (NULL: count only), in
** ascending column order; returns the count. */
static long row_of(const odb_sparse *A, long r, int32_t *cols, double *vals)
{
  long k = 0, n = A->n;
  switch (A->fmt) {
  case ODB_FMT_BSR: {
    long br = r / A->bs, rr = r % A->bs;
    for (int64_t e = A->browptr[br]; e < A->browptr[br + 1]; e++)
      for (int c = 0; c < A->bs && (long)A->bcol[e] * A->bs + c < n; c++)
        PUT((long)A->bcol[e] * A->bs + c, A->bval[((size_t)e * A->bs + rr) * A->bs + c]);
    break;
  }
  case ODB_FMT_ELL:
  case ODB_FMT_HYB:
    for (int e = 0; e < A->width; e++) PUT(A->ecol[(size_t)e * n + r], A->eval[(size_t)e * n + r]);
    if (A->fmt == ODB_FMT_HYB && A->ncoo) {    /* the overflow is in row order */
      long lo = 0, hi = A->ncoo;
      while (lo < hi) { long mid = lo + (hi - lo) / 2; if (A->crow[mid] < r) lo = mid + 1; else hi = mid; }
      for (long e = lo; e < A->ncoo && A->crow[e] == r; e++) PUT(A->ccol[e], A->cval[e]);
    }
    break;
  case ODB_FMT_DIA:
    for (long d = 0; d < A->ndiag; d++) {
      long c = r + A->doff[d];
      if (c >= 0 && c < n) PUT(c, A->dval[(size_t)d * n + r]);
    }
    break;
  case ODB_FMT_BDIA: {
    const odb_bdia *b = A->bd;
    long M = b->M, Mk = M * b->k, JH = (long)b->J * b->H;
    int kk = b->k;
    if (r >= Mk) {                            /* well row */
      int w = (int)(r - Mk);
      for (int t = 0; t < b->c[w]; t++) PUT(((long)b->b[w] + t) * kk, b->Wa[b->a[w] + t]);
      PUT(r, b->D[w]);
      break;
    }
    long m = r / kk, off[7] = {-JH, -b->J, -1, 0, 1, b->J, JH};
    int rr = (int)(r % kk), odd = b->pattern == ODB_GH_HALF && (m & 1);
    for (int u = 0; u < 7; u++) {
      long c0 = (m + off[u]) * kk + (odd && u != 3 ? (u < 3 ? -(kk / 2) : kk / 2) : 0);
      for (int c = 0; c < kk; c++)
        if (c0 + c >= 0 && c0 + c < Mk) PUT(c0 + c, b->val[((size_t)(u * kk + rr) * kk + c) * b->ldv + m]);
    }
    if (b->nw && rr == 0) {
      int h = (int)((m / b->J) % b->H), i = (int)(m / JH), w = b->d[bdia_part(b, h, i)] - 1;
      if (w >= 0 && b->well_h[w] == h && b->well_i[w] == i) PUT(Mk + w, b->WTa[b->a[w] + (m - b->b[w])]);
    }
    break;
  }
  default: break;
  }
  return k;
}
#undef PUT

/* Sorts row [a, b) by column and sums equal columns; returns its new end. */
static int64_t tidy_row(int32_t *col, double *val, int64_t a, int64_t b)
{
  for (int64_t p = a + 1; p < b; p++) {       /* insertion sort: rows come sorted */
    int32_t c = col[p]; double v = val[p]; int64_t q = p;
    while (q > a && col[q - 1] > c) { col[q] = col[q - 1]; val[q] = val[q - 1]; q--; }
    col[q] = c; val[q] = v;
  }
  int64_t w = a;
  for (int64_t p = a; p < b; p++)
    if (w > a && col[w - 1] == col[p]) val[w - 1] += val[p];
    else { col[w] = col[p]; val[w] = val[p]; w++; }
  return w;
}

odb_status odb_sparse_to_csr(const odb_sparse *A, odb_sparse **out)
{
  *out = NULL;
  if (A->fmt == ODB_FMT_CSR) return odb_sparse_csr_from(A->n, A->rowptr, A->col, A->val, out);
  if ((unsigned)A->fmt >= ODB_FMT_COUNT) return ODB_FAIL(ODB_ERR_ARG, "unknown format %d", (int)A->fmt);
  long n = A->n;
  odb_sparse *C = calloc(1, sizeof *C);
  if (!C) return ODB_FAIL(ODB_ERR_NOMEM, "CSR");
  C->fmt = ODB_FMT_CSR; C->n = n;
  if (!(C->rowptr = malloc((size_t)(n + 1) * sizeof *C->rowptr))) goto nomem;
  C->rowptr[0] = 0;
  for (long r = 0; r < n; r++) C->rowptr[r + 1] = C->rowptr[r] + row_of(A, r, NULL, NULL);
  int64_t nnz = C->rowptr[n];
  C->col = malloc((size_t)(nnz ? nnz : 1) * sizeof *C->col);
  C->val = malloc((size_t)(nnz ? nnz : 1) * sizeof *C->val);
  if (!C->col || !C->val) goto nomem;
  int64_t w = 0;
  for (long r = 0; r < n; r++) {
    int64_t a = C->rowptr[r];
    long k = row_of(A, r, C->col + a, C->val + a);
    C->rowptr[r] = w;
    if (a != w) {                              /* a summed duplicate shifted the rest */
      memmove(C->col + w, C->col + a, (size_t)k * sizeof *C->col);
      memmove(C->val + w, C->val + a, (size_t)k * sizeof *C->val);
    }
    w = tidy_row(C->col, C->val, w, w + k);
  }
  C->rowptr[n] = w;
  C->nnz = (long)w;
  *out = C;
  return ODB_OK;
nomem:
  odb_sparse_free(C);
  return ODB_FAIL(ODB_ERR_NOMEM, "CSR of a %s matrix of order %ld", odb_sparse_format_name(A->fmt), n);
}

/* }====== */

/* {====== CSR -> the formats that apply */

/* Index of entry (r, c) in csr (ascending columns), or -1. */
static int64_t find(const odb_sparse *s, long r, long c)
{
  int64_t lo = s->rowptr[r], hi = s->rowptr[r + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (s->col[mid] < c) lo = mid + 1; else hi = mid;
  }
  return lo < s->rowptr[r + 1] && s->col[lo] == c ? lo : -1;
}

/* Takes value (r, c) of s into *dst when s has it (marking it used). */
static void take(const odb_sparse *s, unsigned char *used, long r, long c, double *dst)
{
  int64_t e = find(s, r, c);
  *dst = 0.0;
  if (e >= 0 && !used[e]) { *dst = s->val[e]; used[e] = 1; }
}

/* Bdia with g's structure and s's values; refused when s has a nonzero
** that structure cannot hold. */
static odb_status bdia_from_csr(const odb_sparse *s, const odb_reservoir *g, size_t max_bytes, odb_sparse **out)
{
  odb_sparse *B = NULL;
  unsigned char *used = NULL;
  odb_status st;
  size_t need;
  *out = NULL;
  if (s->n != g->n)
    return ODB_FAIL(ODB_ERR_ARG, "the matrix has order %ld, the grid's GH has order %ld (J*H*I*k + wells = %d*%d*%d*%d + %d)",
                    s->n, g->n, g->J, g->H, g->I, g->k, g->nw);
  if (odb_size_mul3(&need, (size_t)7 * g->k * g->k, (size_t)g->M, sizeof(double)))
    return ODB_FAIL(ODB_ERR_NOMEM, "Bdia of order %ld needs more bytes than a size_t holds", g->n);
  if (max_bytes && need > max_bytes) return ODB_FAIL(ODB_ERR_NOMEM, "Bdia needs %zu bytes, limit %zu", need, max_bytes);
  ODB_TRY(odb_topo_check_memory((double)need, "Bdia"));
  if ((st = odb_reservoir_bdia(g, &B)) != ODB_OK) return st;
  if (!(used = calloc((size_t)(s->nnz ? s->nnz : 1), 1))) { st = ODB_FAIL(ODB_ERR_NOMEM, "Bdia marks"); goto fail; }
  odb_bdia *b = B->bd;
  long M = g->M, Mk = M * g->k;
  int k = g->k;
  for (long m = 0; m < M; m++) {
    int j = (int)(m % g->J), h = (int)((m / g->J) % g->H), i = (int)(m / ((long)g->J * g->H));
    for (int u = 0; u < 7; u++) {
      long c0 = (m + odb_gh_offset(g, u)) * k + odb_gh_bias(g, m, u);
      int in = odb_gh_slot_inside(g, j, h, i, u);
      for (int r = 0; r < k; r++)
        for (int c = 0; c < k; c++) {
          double *dst = &b->val[((size_t)(u * k + r) * k + c) * b->ldv + m];
          *dst = 0.0;
          if (in && c0 + c >= 0 && c0 + c < Mk) take(s, used, m * k + r, c0 + c, dst);
        }
    }
  }
  for (int w = 0; w < g->nw; w++) {
    for (int t = 0; t < b->c[w]; t++) {
      long row = ((long)b->b[w] + t) * k;
      take(s, used, Mk + w, row, &b->Wa[b->a[w] + t]);
      take(s, used, row, Mk + w, &b->WTa[b->a[w] + t]);
    }
    take(s, used, Mk + w, Mk + w, &b->D[w]);
  }
  for (long r = 0; r < s->n; r++)
    for (int64_t e = s->rowptr[r]; e < s->rowptr[r + 1]; e++)
      if (!used[e] && s->val[e] != 0.0) {
        st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "bdia does not apply: entry (%ld, %d) lies outside the GH structure of the "
                      "grid J=%d H=%d I=%d k=%d wells=%d pattern %s (Bdia holds the seven k x k block diagonals and the "
                      "well couplings only, Al-Mouhamed and Khan, section 6.1)", r + 1, s->col[e] + 1, g->J, g->H,
                      g->I, g->k, g->nw, g->pattern == ODB_GH_HALF ? "h" : "b");
        goto fail;
      }
  free(used);
  B->nnz = s->nnz;
  *out = B;
  return ODB_OK;
fail:
  free(used);
  odb_sparse_free(B);
  return st;
}

/* Distinct diagonals of s (serial: one pass, a bitmap of 2n - 1 bits). */
static odb_status count_diagonals(const odb_sparse *s, long *nd)
{
  long n = s->n, words = (2 * n + 63) / 64;
  uint64_t *seen = calloc((size_t)words, sizeof *seen);
  if (!seen) return ODB_FAIL(ODB_ERR_NOMEM, "DIA offsets");
  for (long r = 0; r < n; r++)
    for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++) {
      long o = s->col[p] - r + n - 1;
      seen[o >> 6] |= 1ULL << (o & 63);
    }
  *nd = 0;
  for (long w = 0; w < words; w++) *nd += __builtin_popcountll(seen[w]);
  free(seen);
  return ODB_OK;
}

odb_status odb_sparse_convert_to(const odb_sparse *s, odb_sparse_format f,
                                 const odb_sparse_conv *c, odb_sparse **out)
{
  static const odb_sparse_conv none = {1, 0, 0, NULL};
  *out = NULL;
  if (!c) c = &none;
  if (s->fmt != ODB_FMT_CSR) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "conversion needs a CSR source");
  if (f == ODB_FMT_BDIA) {
    if (!c->grid)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "bdia does not apply without the grid the matrix comes from (grid = {J=, H=, "
                      "I=, k=, wells=, pattern=}): Bdia stores the seven k x k block diagonals of a reservoir grid and "
                      "its wells (Al-Mouhamed and Khan, section 6.1), which a matrix file does not describe");
    return bdia_from_csr(s, c->grid, c->max_bytes, out);
  }
  double n = (double)s->n, need = 0.0;
  if (f == ODB_FMT_DIA) {
    long nd = 0;
    ODB_TRY(count_diagonals(s, &nd));
    if ((double)nd * n > (double)ODB_DIA_MAX_FILL * (double)(s->nnz ? s->nnz : 1))
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "dia does not apply: the %ld nonzeros lie on %ld diagonals, which DIA stores "
                      "in full (%.3g values, more than %d per nonzero); the matrix is not banded enough: use csr, ell or hyb",
                      s->nnz, nd, (double)nd * n, ODB_DIA_MAX_FILL);
    need = 8.0 * nd * n;
  } else if (f == ODB_FMT_ELL) {
    long w = 0;
    for (long r = 0; r < s->n; r++)
      if (s->rowptr[r + 1] - s->rowptr[r] > w) w = (long)(s->rowptr[r + 1] - s->rowptr[r]);
    need = 12.0 * w * n;
  }
  if (need > 0) ODB_TRY(odb_topo_check_memory(need, odb_sparse_format_name(f)));
  return odb_sparse_convert(s, f, c->bs > 0 ? c->bs : 1, c->ell_width, c->max_bytes, out);
}

/* }====== */
