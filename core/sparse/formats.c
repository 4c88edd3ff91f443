/* formats.c - CSR, BSR, ELL, HYB, DIA and Bdia: conversions from CSR,
** memory footprints and SpMV (plain loops).
**
** Footprints (bytes; int64 row pointers and offsets, int32 columns, doubles):
**   CSR  12 nnz + 8 (n + 1)
**   BSR  8 bs^2 nblocks + 4 nblocks + 8 (nbr + 1),  nbr = ceil(n / bs)
**   ELL  12 n width
**   HYB  12 n width + 16 ncoo
**   DIA  8 n ndiag + 8 ndiag
**   Bdia 8 (7 k^2 M) + 16 nw J (Wa, WTa) + 12 nw (a, b, c) + 4 pu pv (d)
**        + 8 nw (well positions) + 8 nw (D)
*/
#include <stdlib.h>
#include <string.h>
#include "odb_size.h"
#include "odb_sparse.h"
#include "odb_team.h"
#include "par.h"

static const char *fmt_names[ODB_FMT_COUNT] = {"csr", "bsr", "ell", "hyb", "dia", "bdia"};

/* Any value. */
const char *odb_sparse_format_name(odb_sparse_format f)
{
  return (unsigned)f < ODB_FMT_COUNT ? fmt_names[f] : "unknown";
}

/* name may be NULL. */
odb_status odb_sparse_format_parse(const char *name, odb_sparse_format *out)
{
  for (int f = 0; name && f < ODB_FMT_COUNT; f++)
    if (!strcmp(name, fmt_names[f])) { *out = (odb_sparse_format)f; return ODB_OK; }
  return ODB_FAIL(ODB_ERR_NAME, "unknown sparse format '%s' (csr, bsr, ell, hyb, dia, bdia)",
                  name ? name : "(null)");
}

/* Accepts NULL. */
static void bdia_free(odb_bdia *b)
{
  if (!b) return;
  free(b->val); free(b->Wa); free(b->WTa); free(b->a); free(b->b); free(b->c);
  free(b->d); free(b->well_h); free(b->well_i); free(b->D); free(b);
}

/* Accepts NULL. */
void odb_sparse_free(odb_sparse *A)
{
  if (!A) return;
  free(A->rowptr); free(A->col); free(A->val);
  free(A->browptr); free(A->bcol); free(A->bval);
  free(A->ecol); free(A->eval);
  free(A->crow); free(A->ccol); free(A->cval);
  free(A->doff); free(A->dval);
  bdia_free(A->bd);
  free(A);
}

/* a * b * c + d, or SIZE_MAX when that does not fit a size_t. */
static size_t sat(size_t a, size_t b, size_t c, size_t d)
{
  size_t p;
  return odb_size_mul3(&p, a, b, c) || odb_size_add(&p, p, d) ? SIZE_MAX : p;
}

/* A valid. A count that does not fit a size_t gives SIZE_MAX (more than
** any limit), so that a limit check never passes a wrapped size. */
size_t odb_sparse_bytes(const odb_sparse *A)
{
  size_t n = (size_t)A->n;
  switch (A->fmt) {
  case ODB_FMT_CSR: return 12 * (size_t)A->nnz + 8 * (n + 1);
  case ODB_FMT_BSR:
    return sat(8 * (size_t)A->bs * A->bs, (size_t)A->nblocks, 1,
               4 * (size_t)A->nblocks + 8 * ((size_t)A->nbr + 1));
  case ODB_FMT_ELL: return sat(12, n, (size_t)A->width, 0);
  case ODB_FMT_HYB: return sat(12, n, (size_t)A->width, 16 * (size_t)A->ncoo);
  case ODB_FMT_DIA: return sat(8, n, (size_t)A->ndiag, 8 * (size_t)A->ndiag);
  case ODB_FMT_BDIA: {
    const odb_bdia *b = A->bd;
    size_t nw = b->nw;
    return sat(8 * (size_t)7 * b->k * b->k, (size_t)b->M, 1,
               16 * nw * b->J + 12 * nw + 4 * (size_t)b->pu * b->pv + 8 * nw + 8 * nw);
  }
  default: return 0;
  }
}

/* malloc of a * b * c bytes (at least 1); NULL, as when memory is short,
** when the product does not fit a size_t. */
static void *malloc3(size_t a, size_t b, size_t c)
{
  size_t n;
  return odb_size_mul3(&n, a, b, c) ? NULL : malloc(n ? n : 1);
}

/* Arrays valid for n rows. */
odb_status odb_sparse_csr_from(long n, const int64_t *rowptr, const int32_t *col,
                               const double *val, odb_sparse **out)
{
  *out = NULL;
  if (n <= 0) return ODB_FAIL(ODB_ERR_ARG, "matrix order must be positive, got %ld", n);
  long nnz = rowptr[n];
  odb_sparse *A = calloc(1, sizeof *A);
  if (!A) return ODB_FAIL(ODB_ERR_NOMEM, "CSR");
  A->fmt = ODB_FMT_CSR; A->n = n; A->nnz = nnz;
  A->rowptr = malloc((n + 1) * sizeof *A->rowptr);
  A->col = malloc((nnz ? nnz : 1) * sizeof *A->col);
  A->val = malloc((nnz ? nnz : 1) * sizeof *A->val);
  if (!A->rowptr || !A->col || !A->val) {
    odb_sparse_free(A);
    return ODB_FAIL(ODB_ERR_NOMEM, "CSR with %ld nonzeros", nnz);
  }
  memcpy(A->rowptr, rowptr, (n + 1) * sizeof *rowptr);
  memcpy(A->col, col, nnz * sizeof *col);
  memcpy(A->val, val, nnz * sizeof *val);
  *out = A;
  return ODB_OK;
}

typedef struct bsr_job {
  const odb_sparse *s; odb_sparse *A; int bs; int32_t **mark;
} bsr_job;

/* Distinct block columns of block rows [b0, b1) into browptr[br + 1]
** (the part's own mark array, set to -1 here). */
static void bsr_count_part(void *arg, int q, int parts, long b0, long b1)
{
  bsr_job *j = arg;
  const odb_sparse *s = j->s;
  int bs = j->bs;
  int32_t *mark = j->mark[q];
  (void)parts;
  for (long c = 0; c < j->A->nbr; c++) mark[c] = -1;
  for (long br = b0; br < b1; br++) {
    long nb = 0;
    for (long r = br * bs; r < (br + 1) * bs && r < s->n; r++)
      for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++) {
        long bc = s->col[p] / bs;
        if (mark[bc] != (int32_t)br) { mark[bc] = (int32_t)br; nb++; }
      }
    j->A->browptr[br + 1] = nb;
  }
}

/* Block columns (ascending) and values of block rows [b0, b1); the part's
** blocks are zeroed here first. mark[bc] holds the block's position. */
static void bsr_fill_part(void *arg, int q, int parts, long b0, long b1)
{
  bsr_job *j = arg;
  const odb_sparse *s = j->s;
  odb_sparse *A = j->A;
  int bs = j->bs;
  long n = s->n;
  int32_t *mark = j->mark[q];
  (void)parts;
  if (b1 > b0)
    memset(A->bval + (size_t)A->browptr[b0] * bs * bs, 0,
           (size_t)(A->browptr[b1] - A->browptr[b0]) * bs * bs * sizeof *A->bval);
  for (long c = 0; c < A->nbr; c++) mark[c] = -1;
  for (long br = b0; br < b1; br++) {
    /* block columns in ascending order: collect, then sort small list */
    int64_t q0 = A->browptr[br], e = q0;
    for (long r = br * bs; r < (br + 1) * bs && r < n; r++)
      for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++) {
        long bc = s->col[p] / bs;
        if (mark[bc] < 0 || mark[bc] < q0) { mark[bc] = (int32_t)e; A->bcol[e++] = (int32_t)bc; }
      }
    for (int64_t a = q0 + 1; a < e; a++) {      /* insertion sort */
      int32_t v = A->bcol[a]; int64_t b = a;
      while (b > q0 && A->bcol[b - 1] > v) { A->bcol[b] = A->bcol[b - 1]; b--; }
      A->bcol[b] = v;
    }
    for (int64_t a = q0; a < e; a++) mark[A->bcol[a]] = (int32_t)a;
    for (long r = br * bs; r < (br + 1) * bs && r < n; r++)
      for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++) {
        long bc = s->col[p] / bs;
        A->bval[((size_t)mark[bc] * bs + (r - br * bs)) * bs + (s->col[p] - bc * bs)] = s->val[p];
      }
  }
}

/* csr sorted columns per row; fills the BSR fields of A. Block rows are
** split over threads, each with its own mark array over block columns. */
static odb_status to_bsr(const odb_sparse *s, int bs, size_t max_bytes, odb_sparse *A)
{
  long n = s->n, nbr = (n + bs - 1) / bs;
  int parts = odb_sparse_par_parts(nbr, 1024);
  int32_t *marks[64] = {0};
  bsr_job job = {s, A, bs, marks};
  odb_status st = ODB_OK;
  A->bs = bs; A->nbr = nbr;
  A->browptr = malloc((nbr + 1) * sizeof *A->browptr);
  if (!A->browptr) return ODB_FAIL(ODB_ERR_NOMEM, "BSR row pointers");
  for (int q = 0; q < parts; q++)
    if (!(marks[q] = malloc(nbr * sizeof *marks[q]))) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "BSR block column marks");
      goto done;
    }
  A->browptr[0] = 0;
  odb_sparse_par_for(nbr, parts, bsr_count_part, &job);
  for (long br = 0; br < nbr; br++) A->browptr[br + 1] += A->browptr[br];
  long nb = A->browptr[nbr];
  A->nblocks = nb;
  size_t need = odb_sparse_bytes(A);
  if (max_bytes && need > max_bytes) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "BSR needs %zu bytes, limit %zu", need, max_bytes);
    goto done;
  }
  A->bcol = malloc((nb ? nb : 1) * sizeof *A->bcol);
  A->bval = malloc3((size_t)(nb ? nb : 1), (size_t)bs * bs, sizeof *A->bval);
  if (!A->bcol || !A->bval) { st = ODB_FAIL(ODB_ERR_NOMEM, "BSR needs %zu bytes", need); goto done; }
  odb_sparse_par_for(nbr, parts, bsr_fill_part, &job);
done:
  for (int q = 0; q < parts; q++) free(marks[q]);
  return st;
}

typedef struct ell_job {
  const odb_sparse *s; odb_sparse *A; int w; long coo0[65];
} ell_job;

/* Overflow entries of rows [lo, hi) into coo0[q + 1]. */
static void ell_count_part(void *arg, int q, int parts, long lo, long hi)
{
  ell_job *j = arg;
  long nc = 0;
  (void)parts;
  for (long r = lo; r < hi; r++) {
    long len = j->s->rowptr[r + 1] - j->s->rowptr[r];
    if (len > j->w) nc += len - j->w;
  }
  j->coo0[q + 1] = nc;
}

/* Rows [lo, hi): ELL slots (padding column 0, value 0) and their COO
** overflow from position coo0[q]. */
static void ell_fill_part(void *arg, int q, int parts, long lo, long hi)
{
  ell_job *j = arg;
  const odb_sparse *s = j->s;
  odb_sparse *A = j->A;
  long n = s->n, c = j->coo0[q];
  int w = j->w;
  (void)parts;
  for (long r = lo; r < hi; r++) {
    int e = 0;
    for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++, e++) {
      if (e < w) { A->ecol[(size_t)e * n + r] = s->col[p]; A->eval[(size_t)e * n + r] = s->val[p]; }
      else { A->crow[c] = (int32_t)r; A->ccol[c] = s->col[p]; A->cval[c++] = s->val[p]; }
    }
    for (; e < w; e++) { A->ecol[(size_t)e * n + r] = 0; A->eval[(size_t)e * n + r] = 0.0; }
  }
}

/* Fills ELL (width w) and, when hyb, COO overflow (rows split over threads). */
static odb_status to_ell(const odb_sparse *s, int w, int hyb, size_t max_bytes, odb_sparse *A)
{
  long n = s->n;
  int parts = odb_sparse_par_parts(n, 4096);
  ell_job *job = calloc(1, sizeof *job);
  if (!job) return ODB_FAIL(ODB_ERR_NOMEM, "ELL conversion");
  job->s = s; job->A = A; job->w = w;
  odb_sparse_par_for(n, parts, ell_count_part, job);
  for (int q = 0; q < parts; q++) job->coo0[q + 1] += job->coo0[q];
  long nc = job->coo0[parts];
  A->width = w; A->ncoo = nc;
  size_t need = odb_sparse_bytes(A);
  if (max_bytes && need > max_bytes) {
    free(job);
    return ODB_FAIL(ODB_ERR_NOMEM, "%s needs %zu bytes, limit %zu", hyb ? "HYB" : "ELL", need, max_bytes);
  }
  A->ecol = malloc3((size_t)n, (size_t)(w ? w : 1), sizeof *A->ecol);
  A->eval = malloc3((size_t)n, (size_t)(w ? w : 1), sizeof *A->eval);
  if (hyb) {
    A->crow = malloc((nc ? nc : 1) * sizeof *A->crow);
    A->ccol = malloc((nc ? nc : 1) * sizeof *A->ccol);
    A->cval = malloc((nc ? nc : 1) * sizeof *A->cval);
  }
  if (!A->ecol || !A->eval || (hyb && (!A->crow || !A->ccol || !A->cval))) {
    free(job);
    return ODB_FAIL(ODB_ERR_NOMEM, "%s needs %zu bytes", hyb ? "HYB" : "ELL", need);
  }
  odb_sparse_par_for(n, parts, ell_fill_part, job);
  free(job);
  return ODB_OK;
}

/* Width for HYB: the most frequent row length (ties: the larger one). */
static int hyb_width(const odb_sparse *s)
{
  long maxlen = 0;
  for (long r = 0; r < s->n; r++)
    if (s->rowptr[r + 1] - s->rowptr[r] > maxlen) maxlen = s->rowptr[r + 1] - s->rowptr[r];
  long *h = calloc(maxlen + 1, sizeof *h);
  if (!h) return (int)maxlen;
  for (long r = 0; r < s->n; r++) h[s->rowptr[r + 1] - s->rowptr[r]]++;
  long best = 0;
  for (long l = 0; l <= maxlen; l++) if (h[l] >= h[best]) best = l;
  free(h);
  return (int)best;
}

typedef struct dia_job {
  const odb_sparse *s; odb_sparse *A; uint64_t *seen[64]; long words; int32_t *slot;
} dia_job;

/* Marks the offsets (col - row + n - 1) of rows [lo, hi) in the part's
** bitmap (zeroed here). */
static void dia_seen_part(void *arg, int q, int parts, long lo, long hi)
{
  dia_job *j = arg;
  const odb_sparse *s = j->s;
  uint64_t *seen = j->seen[q];
  long n = s->n;
  (void)parts;
  memset(seen, 0, (size_t)j->words * sizeof *seen);
  for (long r = lo; r < hi; r++)
    for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++) {
      long o = s->col[p] - r + n - 1;
      seen[o >> 6] |= 1ULL << (o & 63);
    }
}

/* Rows [lo, hi) of every diagonal: zeros, then the entries. */
static void dia_fill_part(void *arg, int q, int parts, long lo, long hi)
{
  dia_job *j = arg;
  const odb_sparse *s = j->s;
  odb_sparse *A = j->A;
  long n = s->n;
  (void)q; (void)parts;
  if (hi <= lo) return;
  for (long d = 0; d < A->ndiag; d++)
    memset(A->dval + (size_t)d * n + lo, 0, (size_t)(hi - lo) * sizeof *A->dval);
  for (long r = lo; r < hi; r++)
    for (int64_t p = s->rowptr[r]; p < s->rowptr[r + 1]; p++)
      A->dval[(size_t)j->slot[s->col[p] - r + n - 1] * n + r] = s->val[p];
}

/* Fills the DIA fields: offsets from per-thread bitmaps of the rows,
** values row-parallel. */
static odb_status to_dia(const odb_sparse *s, size_t max_bytes, odb_sparse *A)
{
  long n = s->n;
  int parts = odb_sparse_par_parts(n, 4096);
  dia_job *j = calloc(1, sizeof *j);
  odb_status st = ODB_OK;
  if (!j) return ODB_FAIL(ODB_ERR_NOMEM, "DIA conversion");
  j->s = s; j->A = A; j->words = (2 * n + 63) / 64;
  for (int q = 0; q < parts; q++)
    if (!(j->seen[q] = malloc((size_t)j->words * sizeof *j->seen[q]))) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "DIA offsets");
      goto done;
    }
  odb_sparse_par_for(n, parts, dia_seen_part, j);
  for (int q = 1; q < parts; q++)
    for (long w = 0; w < j->words; w++) j->seen[0][w] |= j->seen[q][w];
  long nd = 0;
  for (long w = 0; w < j->words; w++) nd += __builtin_popcountll(j->seen[0][w]);
  A->ndiag = nd;
  size_t need = odb_sparse_bytes(A);
  if (max_bytes && need > max_bytes) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "DIA needs %zu bytes (%ld diagonals), limit %zu", need, nd, max_bytes);
    goto done;
  }
  A->doff = malloc((nd ? nd : 1) * sizeof *A->doff);
  A->dval = malloc3((size_t)n, (size_t)(nd ? nd : 1), sizeof *A->dval);
  j->slot = malloc(2 * n * sizeof *j->slot);
  if (!A->doff || !A->dval || !j->slot) {
    st = ODB_FAIL(ODB_ERR_NOMEM, "DIA needs %zu bytes (%ld diagonals)", need, nd);
    goto done;
  }
  long d = 0;   /* ascending offsets */
  for (long o = 0; o < 2 * n - 1; o++)
    if (j->seen[0][o >> 6] >> (o & 63) & 1) { A->doff[d] = o - (n - 1); j->slot[o] = (int32_t)d; d++; }
  odb_sparse_par_for(n, parts, dia_fill_part, j);
done:
  for (int q = 0; q < parts; q++) free(j->seen[q]);
  free(j->slot);
  free(j);
  return st;
}

/* s is CSR with sorted columns. */
odb_status odb_sparse_convert(const odb_sparse *s, odb_sparse_format f, int bs,
                              int ell_width, size_t max_bytes, odb_sparse **out)
{
  *out = NULL;
  if (s->fmt != ODB_FMT_CSR) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "conversion needs a CSR source");
  if (f == ODB_FMT_CSR) return odb_sparse_csr_from(s->n, s->rowptr, s->col, s->val, out);
  if (f == ODB_FMT_BDIA)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "Bdia is built from the grid (odb_reservoir_matrix)");
  if (f == ODB_FMT_BSR && (bs < 1 || bs > 64))
    return ODB_FAIL(ODB_ERR_ARG, "BSR block size must be in 1..64, got %d", bs);
  if ((unsigned)f >= ODB_FMT_COUNT) return ODB_FAIL(ODB_ERR_ARG, "unknown format %d", (int)f);
  odb_sparse *A = calloc(1, sizeof *A);
  if (!A) return ODB_FAIL(ODB_ERR_NOMEM, "matrix");
  A->fmt = f; A->n = s->n; A->nnz = s->nnz;
  odb_status st = ODB_OK;
  switch (f) {
  case ODB_FMT_BSR: st = to_bsr(s, bs, max_bytes, A); break;
  case ODB_FMT_ELL: {
    int w = 0;
    for (long r = 0; r < s->n; r++)
      if (s->rowptr[r + 1] - s->rowptr[r] > w) w = (int)(s->rowptr[r + 1] - s->rowptr[r]);
    st = to_ell(s, w, 0, max_bytes, A);
    break;
  }
  case ODB_FMT_HYB: st = to_ell(s, ell_width > 0 ? ell_width : hyb_width(s), 1, max_bytes, A); break;
  case ODB_FMT_DIA: st = to_dia(s, max_bytes, A); break;
  default: break;
  }
  if (st != ODB_OK) { odb_sparse_free(A); return st; }
  *out = A;
  return ODB_OK;
}

enum { BDIA_TILE = 512 };   /* cells a tile of bdia_tile */

/*
** The cell rows of cells [m, m + T) (T <= BDIA_TILE, k <= 16) whose blocks
** all read columns of x itself (none outside the grid, none in xlo or
** xhi): the terms of bdia_rows's loop in the same order for each y entry
** (blocks u, then columns c, from 0.0), with the cells innermost, so that
** each of the 7 k k value streams is read in runs of T consecutive
** doubles. A loop over cells outermost reads each cell's values 7 k k
** streams apart, more than the prefetchers follow (BENCHMARKS.md, "Bdia
** on the CPU").
*/
static inline __attribute__((always_inline)) void
bdia_tile(const odb_bdia *b, long first, const double *x, double *y, long m, long T,
          const long *off, const long *shift)
{
  int k = b->k, half = b->pattern == ODB_GH_HALF;
  long L = b->ldv, lo = first * k, odd0 = (first + m) & 1;   /* the tile's first cell odd */
  double acc[BDIA_TILE * 16];   /* [r][cell] */
  double xv[BDIA_TILE];         /* column c of block u, cell by cell */
  for (long i = 0; i < T * k; i++) acc[i] = 0.0;
  for (int u = 0; u < 7; u++)
    for (int c = 0; c < k; c++) {
      const double *xe = x + ((first + m + off[u]) * k + c - lo);
      if (!half || u == 3) {
        for (long i = 0; i < T; i++) xv[i] = xe[i * k];
      } else {   /* odd cells read these neighbours shifted by k/2 */
        const double *xo = xe + shift[u];
        for (long i = 0; i < T; i++) xv[i] = ((i & 1) != odd0 ? xo : xe)[i * k];
      }
      /* four rows' value streams side by side: their first lines are
         fetched together */
      int r = 0;
      for (; r + 4 <= k; r += 4) {
        const double *v0 = b->val + ((size_t)(u * k + r) * k + c) * L + m;
        const double *v1 = v0 + (size_t)k * L, *v2 = v1 + (size_t)k * L, *v3 = v2 + (size_t)k * L;
        double *a0 = acc + (size_t)r * T, *a1 = a0 + T, *a2 = a1 + T, *a3 = a2 + T;
        for (long i = 0; i < T; i++) {
          double xi = xv[i];
          a0[i] += v0[i] * xi;
          a1[i] += v1[i] * xi;
          a2[i] += v2[i] * xi;
          a3[i] += v3[i] * xi;
        }
      }
      for (; r < k; r++) {
        const double *v = b->val + ((size_t)(u * k + r) * k + c) * L + m;
        double *a = acc + (size_t)r * T;
        for (long i = 0; i < T; i++) a[i] += v[i] * xv[i];
      }
    }
  for (long i = 0; i < T; i++)
    for (int r = 0; r < k; r++) y[(m + i) * k + r] = acc[(size_t)r * T + i];
}

/* See odb_sparse.h. */
long odb_bdia_ldv(long M)
{
  long lines = (M + 7) / 8;
  if (lines % 2 == 0) lines++;
  return lines * 8;
}

/* Bdia SpMV (Al-Mouhamed and Khan, sections 6.1-6.2), cells [m0, m1) and
** wells [w0, w1) of b, which holds cells first..first + b->M - 1 of the
** grid b->J x b->H x b->I: block row m reads its seven blocks and x at the
** regenerated columns (below the cells from xlo, whose last entry is
** column first*k - 1; above them from xhi, whose first is column
** (first + M)*k), then adds each well's W^T terms to its cells' rows; the
** well rows use Wa, a, b, c, D. Tiles of cells whose columns all lie in x
** go through bdia_tile, the cells near the grid's or the slab's ends one
** at a time. Inlined into both callers: for the whole matrix (first 0, no
** column outside x) the compiler drops the choice of piece, which the
** checks of the column range already decide. */
static inline __attribute__((always_inline)) void
bdia_rows(const odb_bdia *b, long first, const double *xlo, const double *x,
          const double *xhi, double *y, long m0, long m1, int w0, int w1)
{
  int k = b->k; long M = b->M, Mk = M * k, JH = (long)b->J * b->H;
  long gMk = JH * b->I * k, lo = first * k, hi = lo + Mk;
  long off[7] = {-JH, -b->J, -1, 0, 1, b->J, JH};
  long sh = b->pattern == ODB_GH_HALF ? k / 2 : 0;
  long shift[7] = {-sh, -sh, -sh, 0, sh, sh, sh};
  for (long m = m0; m < m1;) {
    long mg = first + m, t1 = m + BDIA_TILE < m1 ? m + BDIA_TILE : m1;
    if (k <= 16 && (mg - JH) * k - sh >= lo && (first + t1 - 1 + JH) * k + k - 1 + sh < hi) {
      bdia_tile(b, first, x, y, m, t1 - m, off, shift);
    } else {   /* one cell, its columns checked one by one */
      int odd = b->pattern == ODB_GH_HALF && (mg & 1);
      t1 = m + 1;
      for (int r = 0; r < k; r++) {
        double s = 0.0;
        for (int u = 0; u < 7; u++) {
          long c0 = (mg + off[u]) * k + (odd && u != 3 ? (u < 3 ? -(k / 2) : k / 2) : 0);
          const double *v = b->val + (size_t)(u * k + r) * k * b->ldv + m;
          for (int c = 0; c < k; c++) {
            long cc = c0 + c;
            if (cc < 0 || cc >= gMk) continue;
            double xv = cc < lo ? xlo[cc - lo] : cc < hi ? x[cc - lo] : xhi[cc - hi];
            s += v[(size_t)c * b->ldv] * xv;
          }
        }
        y[m * k + r] = s;
      }
    }
    m = t1;
  }
  /* the W^T terms: the first row of each of well w's cells b[w] ..
     b[w] + c[w] - 1 (its column of cells) reads the well's value */
  for (int w = 0; w < b->nw; w++) {
    long c0 = b->b[w] > m0 ? b->b[w] : m0;
    long c1 = b->b[w] + b->c[w] < m1 ? b->b[w] + b->c[w] : m1;
    for (long m = c0; m < c1; m++) y[m * k] += b->WTa[b->a[w] + (m - b->b[w])] * x[Mk + w];
  }
  for (int w = w0; w < w1; w++) {
    double s = b->D[w] * x[Mk + w];
    for (int t = 0; t < b->c[w]; t++) s += b->Wa[b->a[w] + t] * x[((long)b->b[w] + t) * k];
    y[Mk + w] = s;
  }
}

/* The whole matrix: b holds every cell. */
static void spmv_bdia(const odb_bdia *b, const double *x, double *y,
                      long m0, long m1, int w0, int w1)
{
  bdia_rows(b, 0, x, x, x, y, m0, m1, w0, w1);
}

/* Bdia SpMV on a slab (see odb_sparse.h): the loop of spmv_bdia term for
** term, so that each y entry gets the same bits; columns below and above
** the slab from the caller's buffers xlo and xhi, so that its own values
** are never copied next to its ghosts. Assumes xlo and xhi hold every
** column in [0, n) that the slab's blocks reach (truncated blocks
** included: they are zeros, read as 0 * x). */
void odb_bdia_spmv_slab(const odb_bdia *b, long first, const double *xlo, const double *x,
                        const double *xhi, double *y, long m0, long m1, int w0, int w1)
{
  bdia_rows(b, first, xlo, x, xhi, y, m0, m1, w0, w1);
}

/* First COO entry with row >= r (entries are in row order). */
static long coo_lower(const odb_sparse *A, long r)
{
  long lo = 0, hi = A->ncoo;
  while (lo < hi) { long mid = (lo + hi) / 2; if (A->crow[mid] < r) lo = mid + 1; else hi = mid; }
  return lo;
}

/* y = A x on part q of p (rows, block rows or cells split in contiguous
** ranges); the parts together write every y entry once. */
static void spmv_part(const odb_sparse *A, const double *x, double *y, int q, int p)
{
  long n = A->n;
#define PART(total, lo, hi) long lo = (long)((total) * (double)q / p), hi = (long)((total) * (double)(q + 1) / p); \
  if (q == p - 1) hi = (total)
  switch (A->fmt) {
  case ODB_FMT_CSR: {
    PART(n, r0, r1);
    for (long r = r0; r < r1; r++) {
      double s = 0.0;
      for (int64_t e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) s += A->val[e] * x[A->col[e]];
      y[r] = s;
    }
    break;
  }
  case ODB_FMT_BSR: {
    int bs = A->bs;
    PART(A->nbr, b0, b1);
    for (long br = b0; br < b1; br++) {
      double acc[64] = {0};
      for (int64_t e = A->browptr[br]; e < A->browptr[br + 1]; e++) {
        const double *blk = A->bval + (size_t)e * bs * bs;
        long c0 = (long)A->bcol[e] * bs;
        for (int r = 0; r < bs; r++)
          for (int c = 0; c < bs && c0 + c < n; c++) acc[r] += blk[r * bs + c] * x[c0 + c];
      }
      for (int r = 0; r < bs && br * bs + r < n; r++) y[br * bs + r] = acc[r];
    }
    break;
  }
  case ODB_FMT_ELL:
  case ODB_FMT_HYB: {
    PART(n, r0, r1);
    for (long r = r0; r < r1; r++) {
      double s = 0.0;
      for (int e = 0; e < A->width; e++) s += A->eval[(size_t)e * n + r] * x[A->ecol[(size_t)e * n + r]];
      y[r] = s;
    }
    for (long e = A->ncoo ? coo_lower(A, r0) : 0; e < A->ncoo && A->crow[e] < r1; e++)
      y[A->crow[e]] += A->cval[e] * x[A->ccol[e]];
    break;
  }
  case ODB_FMT_DIA: {
    PART(n, r0, r1);
    for (long r = r0; r < r1; r++) y[r] = 0.0;
    for (long d = 0; d < A->ndiag; d++) {
      long o = A->doff[d];
      long lo = o < 0 ? -o : 0, hi = o > 0 ? n - o : n;
      if (lo < r0) lo = r0;
      if (hi > r1) hi = r1;
      const double *v = A->dval + (size_t)d * n;
      for (long r = lo; r < hi; r++) y[r] += v[r] * x[r + o];
    }
    break;
  }
  case ODB_FMT_BDIA: {
    PART(A->bd->M, m0, m1);
    PART(A->bd->nw, w0, w1);
    spmv_bdia(A->bd, x, y, m0, m1, (int)w0, (int)w1);
    break;
  }
  default: break;
  }
#undef PART
}

/* A valid, x and y of length n and distinct. */
void odb_sparse_spmv(const odb_sparse *A, const double *x, double *y)
{
  spmv_part(A, x, y, 0, 1);
}

typedef struct spmv_job { const odb_sparse *A; const double *x; double *y; } spmv_job;

/* Part q of parts of y = A x (a sparse par_for body; [lo, hi) unused: the
** format decides what a part is). */
static void spmv_par_part(void *arg, int q, int parts, long lo, long hi)
{
  spmv_job *j = arg;
  (void)lo; (void)hi;
  spmv_part(j->A, j->x, j->y, q, parts);
}

/* A valid, x and y of length n and distinct; threads of a temporary team. */
void odb_sparse_spmv_par(const odb_sparse *A, const double *x, double *y)
{
  spmv_job j = {A, x, y};
  int parts = odb_sparse_par_parts(A->n, 65536);
  odb_sparse_par_for(parts, parts, spmv_par_part, &j);
}

/* Team member tid's share. */
static void spmv_member(odb_team *team, int tid, void *arg)
{
  spmv_job *j = arg;
  spmv_part(j->A, j->x, j->y, tid, odb_team_size(team));
}

/* A valid, x and y of length n and distinct; team NULL runs serially. */
odb_status odb_sparse_spmv_team(const odb_sparse *A, odb_team *team, const double *x, double *y)
{
  if (!team) { spmv_part(A, x, y, 0, 1); return ODB_OK; }
  spmv_job j = {A, x, y};
  return odb_team_run(team, spmv_member, &j);
}

typedef struct tr_job {
  const odb_sparse *A; odb_sparse *T; int32_t *cnt[64];
} tr_job;

/* Entries per column of rows [lo, hi) into the part's counts (zeroed here). */
static void tr_count_part(void *arg, int q, int parts, long lo, long hi)
{
  tr_job *j = arg;
  int32_t *c = j->cnt[q];
  (void)parts;
  memset(c, 0, (size_t)j->A->n * sizeof *c);
  for (int64_t e = j->A->rowptr[lo]; e < j->A->rowptr[hi]; e++) c[j->A->col[e]]++;
}

/* Columns [lo, hi) of A: each part's counts become its first slot in T. */
static void tr_offsets_part(void *arg, int q, int parts, long lo, long hi)
{
  tr_job *j = arg;
  (void)q;
  for (long c = lo; c < hi; c++) {
    int64_t p = j->T->rowptr[c];
    for (int r = 0; r < parts; r++) { int32_t v = j->cnt[r][c]; j->cnt[r][c] = (int32_t)(p - j->T->rowptr[c]); p += v; }
  }
}

/* Rows [lo, hi) of A scattered into T (rows of T get ascending columns:
** the parts are in row order and fill their own slots). */
static void tr_scatter_part(void *arg, int q, int parts, long lo, long hi)
{
  tr_job *j = arg;
  int32_t *c = j->cnt[q];
  (void)parts;
  for (long r = lo; r < hi; r++)
    for (int64_t e = j->A->rowptr[r]; e < j->A->rowptr[r + 1]; e++) {
      int32_t col = j->A->col[e];
      int64_t d = j->T->rowptr[col] + c[col]++;
      j->T->col[d] = (int32_t)r;
      j->T->val[d] = j->A->val[e];
    }
}

/* A CSR (square). Per-part column counts, then a scatter in row order. */
odb_status odb_sparse_transpose(const odb_sparse *A, odb_sparse **out)
{
  *out = NULL;
  if (A->fmt != ODB_FMT_CSR) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "transpose needs CSR, got %s",
                                             odb_sparse_format_name(A->fmt));
  long n = A->n, nnz = A->rowptr[n];
  int parts = odb_sparse_par_parts(n, 16384);
  tr_job j;
  odb_status st = ODB_OK;
  memset(&j, 0, sizeof j);
  j.A = A;
  odb_sparse *T = calloc(1, sizeof *T);
  if (!T) return ODB_FAIL(ODB_ERR_NOMEM, "transpose");
  T->fmt = ODB_FMT_CSR; T->n = n; T->nnz = nnz;
  j.T = T;
  T->rowptr = malloc((n + 1) * sizeof *T->rowptr);
  T->col = malloc((nnz ? nnz : 1) * sizeof *T->col);
  T->val = malloc((nnz ? nnz : 1) * sizeof *T->val);
  if (!T->rowptr || !T->col || !T->val) { st = ODB_FAIL(ODB_ERR_NOMEM, "CSR of A^T of order %ld (%ld entries)", n, nnz); goto done; }
  for (int q = 0; q < parts; q++)
    if (!(j.cnt[q] = malloc((size_t)n * sizeof *j.cnt[q]))) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "transpose column counts");
      goto done;
    }
  odb_sparse_par_for(n, parts, tr_count_part, &j);
  T->rowptr[0] = 0;
  for (long c = 0; c < n; c++) {
    int64_t t = 0;
    for (int q = 0; q < parts; q++) t += j.cnt[q][c];
    T->rowptr[c + 1] = T->rowptr[c] + t;
  }
  odb_sparse_par_for(n, parts, tr_offsets_part, &j);
  odb_sparse_par_for(n, parts, tr_scatter_part, &j);
done:
  for (int q = 0; q < parts; q++) free(j.cnt[q]);
  if (st != ODB_OK) { odb_sparse_free(T); return st; }
  *out = T;
  return ODB_OK;
}

/* A CSR. */
odb_status odb_sparse_spmv_t(const odb_sparse *A, const double *x, double *y)
{
  if (A->fmt != ODB_FMT_CSR) return ODB_FAIL(ODB_ERR_UNSUPPORTED, "A^T x needs CSR, got %s",
                                             odb_sparse_format_name(A->fmt));
  for (long r = 0; r < A->n; r++) y[r] = 0.0;
  for (long r = 0; r < A->n; r++)
    for (int64_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) y[A->col[p]] += A->val[p] * x[r];
  return ODB_OK;
}
