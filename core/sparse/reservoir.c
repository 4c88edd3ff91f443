/* reservoir.c - structured reservoir grid, wells and the GH matrix
** (Al-Mouhamed and Khan, "SpMV and BiCG-Stab optimization for a class of
** hepta-diagonal-sparse matrices on GPU", sections 5.2-5.3) assembled in
** CSR and built directly in Bdia. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "odb_sparse.h"
#include "odb_rng.h"
#include "odb_size.h"
#include "par.h"

/* Picks pu x pv >= nw partitions (pu <= H, pv <= I) with the least waste,
** then the most square partitions.  Assumes 1 <= nw <= H*I. */
static void choose_partitions(int H, int I, int nw, int *pu, int *pv)
{
  long best_waste = -1; double best_sq = 0;
  for (int u = 1; u <= H; u++) {
    int v = (nw + u - 1) / u;
    if (v > I) continue;
    long waste = (long)u * v - nw;
    double sq = fabs(log(((double)H / u) / ((double)I / v)));
    if (best_waste < 0 || waste < best_waste || (waste == best_waste && sq < best_sq)) {
      best_waste = waste; best_sq = sq; *pu = u; *pv = v;
    }
  }
}

/* Assumes out is non-NULL; every argument is checked here. */
odb_status odb_reservoir_create(odb_reservoir **out, int J, int H, int I, int k,
                                int nw, odb_gh_pattern pattern, uint64_t seed)
{
  *out = NULL;
  if (J <= 0 || H <= 0 || I <= 0)
    return ODB_FAIL(ODB_ERR_ARG, "reservoir grid sizes must be positive, got %d x %d x %d", J, H, I);
  if (k < 1 || k > 16)
    return ODB_FAIL(ODB_ERR_ARG, "reservoir components k must be in 1..16, got %d", k);
  if (pattern != ODB_GH_BLOCK && pattern != ODB_GH_HALF)
    return ODB_FAIL(ODB_ERR_ARG, "unknown GH pattern %d", (int)pattern);
  if (nw < 0 || (long)nw > (long)H * I)
    return ODB_FAIL(ODB_ERR_ARG, "%d wells do not fit: at most %ld partitions of the %d x %d top plane",
                    nw, (long)H * I, H, I);
  /* the order M k + nw must fit the int32 columns of every format */
  long M, Mk;
  if (odb_long_mul(&M, J, H) || odb_long_mul(&M, M, I) || odb_long_mul(&Mk, M, k) ||
      Mk > (long)INT32_MAX - nw)
    return ODB_FAIL(ODB_ERR_ARG, "reservoir of %d x %d x %d cells, k = %d and %d wells has order %.4g, "
                    "more than the 32-bit indices allow (%ld)", J, H, I, k, nw,
                    (double)J * H * I * k + nw, (long)INT32_MAX);
  odb_reservoir *g = calloc(1, sizeof *g);
  if (!g) return ODB_FAIL(ODB_ERR_NOMEM, "reservoir");
  g->J = J; g->H = H; g->I = I; g->k = k; g->nw = nw; g->pattern = pattern;
  g->seed = seed; g->M = M; g->n = M * k + nw; g->pu = 1; g->pv = 1;
  if (nw > 0) choose_partitions(H, I, nw, &g->pu, &g->pv);
  g->well_h = calloc(nw ? nw : 1, sizeof(int));
  g->well_i = calloc(nw ? nw : 1, sizeof(int));
  g->part_well = calloc((size_t)g->pu * g->pv, sizeof(int));
  if (!g->well_h || !g->well_i || !g->part_well) goto fail;
  for (int w = 0; w < nw; w++) {
    int ph = w / g->pv, pi = w % g->pv;
    int h0 = (int)((long)ph * H / g->pu), h1 = (int)((long)(ph + 1) * H / g->pu);
    int i0 = (int)((long)pi * I / g->pv), i1 = (int)((long)(pi + 1) * I / g->pv);
    g->well_h[w] = (h0 + h1 - 1) / 2;
    g->well_i[w] = (i0 + i1 - 1) / 2;
    g->part_well[w] = w + 1;
  }
  *out = g;
  return ODB_OK;
fail:
  odb_reservoir_free(g);
  return ODB_FAIL(ODB_ERR_NOMEM, "reservoir wells");
}

/* Accepts NULL. */
void odb_reservoir_free(odb_reservoir *g)
{
  if (!g) return;
  free(g->well_h); free(g->well_i); free(g->part_well); free(g);
}

/* splitmix64 finaliser; any input. */
static uint64_t mix64(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Deterministic value in [-1, 1) of entry (row, col). */
double odb_gh_offdiag(uint64_t seed, long row, long col)
{
  uint64_t h = mix64(mix64(mix64(seed) ^ (uint64_t)row) ^ ((uint64_t)col * 0x632be59bd9b4e019ULL));
  return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* u in 0..6. */
long odb_gh_offset(const odb_reservoir *g, int u)
{
  long JH = (long)g->J * g->H;
  static const int sign[7] = {-1, -1, -1, 0, 1, 1, 1};
  long mag[7] = {JH, g->J, 1, 0, 1, g->J, JH};
  return sign[u] * mag[u];
}

/* m a cell, u in 0..6. */
int odb_gh_bias(const odb_reservoir *g, long m, int u)
{
  if (g->pattern != ODB_GH_HALF || u == 3 || (m & 1) == 0) return 0;
  return u < 3 ? -(g->k / 2) : g->k / 2;
}

/* (h, i) inside the top plane. */
int odb_gh_partition(const odb_reservoir *g, int h, int i)
{
  /* partition ph holds h in [ph*H/pu, (ph+1)*H/pu) */
  int ph = (int)(((long)h * g->pu + g->pu - 1) / g->H);
  while (ph > 0 && (long)ph * g->H / g->pu > h) ph--;
  while ((long)(ph + 1) * g->H / g->pu <= h) ph++;
  int pi = (int)(((long)i * g->pv) / g->I);
  while (pi > 0 && (long)pi * g->I / g->pv > i) pi--;
  while ((long)(pi + 1) * g->I / g->pv <= i) pi++;
  return ph * g->pv + pi;
}

/* See odb_sparse.h. */
int odb_gh_slot_inside(const odb_reservoir *g, int j, int h, int i, int u)
{
  switch (u) {
  case 0: return i > 0;
  case 1: return h > 0;
  case 2: return j > 0;
  case 4: return j < g->J - 1;
  case 5: return h < g->H - 1;
  case 6: return i < g->I - 1;
  default: return 1;
  }
}

/* Well of cell (h, i) (its column in the top plane) or -1. */
static int well_at(const odb_reservoir *g, int h, int i)
{
  if (g->nw == 0) return -1;
  int w = g->part_well[odb_gh_partition(g, h, i)] - 1;
  return (w >= 0 && g->well_h[w] == h && g->well_i[w] == i) ? w : -1;
}

/* Writes row `row` of GH into col/val (capacity 7k + 1 for cell rows,
** J + 1 for well rows), sorted, diagonal made dominant; returns the count. */
static int gh_row(const odb_reservoir *g, long row, int32_t *col, double *val)
{
  long Mk = g->M * g->k;
  int cnt = 0, diag = -1;
  if (row < Mk) {
    long m = row / g->k; int r = (int)(row % g->k);
    int j = (int)(m % g->J), h = (int)((m / g->J) % g->H), i = (int)(m / ((long)g->J * g->H));
    for (int u = 0; u < 7; u++) {
      if (!odb_gh_slot_inside(g, j, h, i, u)) continue;
      long c0 = (m + odb_gh_offset(g, u)) * g->k + odb_gh_bias(g, m, u);
      for (int c = 0; c < g->k; c++) {
        long cc = c0 + c;
        if (cc < 0 || cc >= Mk) continue;
        if (cc == row) diag = cnt;
        col[cnt] = (int32_t)cc;
        val[cnt++] = cc == row ? 0.0 : odb_gh_offdiag(g->seed, row, cc);
      }
    }
    int w = r == 0 ? well_at(g, h, i) : -1;
    if (w >= 0) { col[cnt] = (int32_t)(Mk + w); val[cnt] = odb_gh_offdiag(g->seed, row, Mk + w); cnt++; }
  } else {
    int w = (int)(row - Mk);
    long m0 = (long)g->J * (g->well_h[w] + (long)g->H * g->well_i[w]);
    for (int t = 0; t < g->J; t++) {
      long cc = (m0 + t) * g->k;
      col[cnt] = (int32_t)cc; val[cnt++] = odb_gh_offdiag(g->seed, row, cc);
    }
    diag = cnt; col[cnt] = (int32_t)row; val[cnt++] = 0.0;
  }
  double s = 1.0;
  for (int e = 0; e < cnt; e++) s += fabs(val[e]);
  val[diag] = s;
  return cnt;
}

/* Zeroed matrix shell of format f. */
static odb_sparse *shell(odb_sparse_format f, long n)
{
  odb_sparse *A = calloc(1, sizeof *A);
  if (A) { A->fmt = f; A->n = n; }
  return A;
}

/* Entries of row `row` of GH (what gh_row writes), from the structure only. */
static int gh_row_count(const odb_reservoir *g, long row)
{
  long Mk = g->M * g->k;
  if (row >= Mk) return g->J + 1;
  long m = row / g->k; int r = (int)(row % g->k);
  int j = (int)(m % g->J), h = (int)((m / g->J) % g->H), i = (int)(m / ((long)g->J * g->H));
  int cnt = 0;
  for (int u = 0; u < 7; u++) {
    if (!odb_gh_slot_inside(g, j, h, i, u)) continue;
    long c0 = (m + odb_gh_offset(g, u)) * g->k + odb_gh_bias(g, m, u);
    long lo = c0 < 0 ? 0 : c0, hi = c0 + g->k > Mk ? Mk : c0 + g->k;
    if (hi > lo) cnt += (int)(hi - lo);
  }
  if (r == 0 && well_at(g, h, i) >= 0) cnt++;
  return cnt;
}

/* The plane of row r: its cell's i, or a well's i_w. */
static int row_plane(const odb_reservoir *g, long r)
{
  long Mk = g->M * g->k;
  if (r >= Mk) return g->well_i[r - Mk];
  return (int)((r / g->k) / ((long)g->J * g->H));
}

/* The rows of planes [i0, i1) of GH into A (the others empty). */
typedef struct csr_job { const odb_reservoir *g; odb_sparse *A; int i0, i1; } csr_job;

/* Row counts of rows [lo, hi) into rowptr[r + 1]. */
static void csr_count_part(void *arg, int q, int parts, long lo, long hi)
{
  csr_job *j = arg;
  (void)q; (void)parts;
  for (long r = lo; r < hi; r++) {
    int i = row_plane(j->g, r);
    j->A->rowptr[r + 1] = i >= j->i0 && i < j->i1 ? gh_row_count(j->g, r) : 0;
  }
}

/* Rows [lo, hi) written in place (rowptr complete). */
static void csr_fill_part(void *arg, int q, int parts, long lo, long hi)
{
  csr_job *j = arg;
  (void)q; (void)parts;
  for (long r = lo; r < hi; r++)
    if (j->A->rowptr[r + 1] > j->A->rowptr[r])
      gh_row(j->g, r, j->A->col + j->A->rowptr[r], j->A->val + j->A->rowptr[r]);
}

/* See odb_sparse.h. Counts rows, then fills them in parallel (each
** thread first touches the pages of its rows). */
odb_status odb_reservoir_csr_planes(const odb_reservoir *g, int i0, int i1, odb_sparse **out)
{
  *out = NULL;
  long n = g->n;
  odb_sparse *A = shell(ODB_FMT_CSR, n);
  if (!A) goto fail;
  A->rowptr = malloc((n + 1) * sizeof *A->rowptr);
  if (!A->rowptr) goto fail;
  csr_job job = {g, A, i0, i1};
  int parts = odb_sparse_par_parts(n, 4096);
  A->rowptr[0] = 0;
  odb_sparse_par_for(n, parts, csr_count_part, &job);
  for (long r = 0; r < n; r++) A->rowptr[r + 1] += A->rowptr[r];
  long nnz = A->rowptr[n];
  A->col = malloc((nnz ? nnz : 1) * sizeof *A->col);
  A->val = malloc((nnz ? nnz : 1) * sizeof *A->val);
  if (!A->col || !A->val) goto fail;
  odb_sparse_par_for(n, parts, csr_fill_part, &job);
  A->nnz = nnz;
  *out = A;
  return ODB_OK;
fail:
  odb_sparse_free(A);
  if (i0 <= 0 && i1 >= g->I) return ODB_FAIL(ODB_ERR_NOMEM, "CSR of order %ld", n);
  return ODB_FAIL(ODB_ERR_NOMEM, "CSR of planes %d..%d of order %ld", i0, i1 - 1, n);
}

/* g valid: every plane's rows. */
odb_status odb_reservoir_csr(const odb_reservoir *g, odb_sparse **out)
{
  return odb_reservoir_csr_planes(g, 0, g->I, out);
}

typedef struct bdia_job { const odb_reservoir *g; odb_bdia *b; long m0; long nnz[64]; } bdia_job;

/* Cells [lo, hi) of the Bdia values (every stored word written, zeros
** included) and the W^T entries of well cells; nnz[q] counts the part's
** structural entries (CSR's count of its rows). Values and the diagonal's
** sum in the order of gh_row, so both builds agree bit for bit. */
static void bdia_cells_part(void *arg, int q, int parts, long lo, long hi)
{
  bdia_job *jb = arg;
  const odb_reservoir *g = jb->g;
  odb_bdia *b = jb->b;
  int k = g->k;
  long M = g->M, Mk = M * k, JH = (long)g->J * g->H, m0 = jb->m0;
  long off[7], cnt = 0;
  (void)parts;
  for (int u = 0; u < 7; u++) off[u] = odb_gh_offset(g, u);
  /* [lo, hi) count the part's cells from m0 (b holds cells m0 ..) */
  lo += m0;
  hi += m0;
  for (long m = lo; m < hi; m++) {
    int j = (int)(m % g->J), h = (int)((m / g->J) % g->H), i = (int)(m / JH);
    int in[7];
    long c0[7];
    for (int u = 0; u < 7; u++) {
      in[u] = odb_gh_slot_inside(g, j, h, i, u);
      c0[u] = (m + off[u]) * k + odb_gh_bias(g, m, u);
    }
    for (int r = 0; r < k; r++) {
      long row = m * k + r;
      double s = 1.0;
      for (int u = 0; u < 7; u++)
        for (int c = 0; c < k; c++) {
          long cc = c0[u] + c;
          double v = 0.0;
          int inside = in[u] && cc >= 0 && cc < Mk;
          cnt += inside;
          if (inside && cc != row) v = odb_gh_offdiag(g->seed, row, cc);
          s += fabs(v);
          b->val[((size_t)(u * k + r) * k + c) * b->ldv + (m - m0)] = v;
        }
      int w = r == 0 ? well_at(g, h, i) : -1;
      if (w >= 0) {
        double v = odb_gh_offdiag(g->seed, row, Mk + w);
        s += fabs(v);
        b->WTa[b->a[w] + (m - b->b[w])] = v;
        cnt++;
      }
      b->val[((size_t)(3 * k + r) * k + r) * b->ldv + (m - m0)] = s;
    }
  }
  jb->nnz[q] = cnt;
}

/* g valid; values identical to the CSR assembly: the cells are built
** directly (in parallel), the well rows through the row generator. */
odb_status odb_reservoir_bdia(const odb_reservoir *g, odb_sparse **out)
{
  return odb_reservoir_bdia_cells(g, 0, g->M, out);
}

/* See odb_sparse.h. */
odb_status odb_reservoir_bdia_cells(const odb_reservoir *g, long m0, long m1, odb_sparse **out)
{
  *out = NULL;
  if (m0 < 0 || m1 > g->M || m1 < m0)
    return ODB_FAIL(ODB_ERR_ARG, "Bdia cells %ld..%ld of a grid of %ld", m0, m1, g->M);
  long M = m1 - m0, Mk = g->M * g->k; int k = g->k, nw = g->nw, J = g->J;
  odb_sparse *A = shell(ODB_FMT_BDIA, g->n);
  odb_bdia *b = calloc(1, sizeof *b);
  int32_t *tc = malloc((J + 1) * sizeof *tc); double *tv = malloc((J + 1) * sizeof *tv);
  if (!A || !b || !tc || !tv) goto fail;
  A->bd = b;
  b->J = J; b->H = g->H; b->I = g->I; b->k = k; b->nw = nw; b->pu = g->pu; b->pv = g->pv;
  b->pattern = g->pattern; b->M = M; b->ldv = odb_bdia_ldv(M ? M : 1);
  int nw1 = nw ? nw : 1;
  size_t nval;
  /* zeroed: the padding after each stream is never read, but defined */
  if (!odb_size_mul3(&nval, (size_t)7 * k * k, (size_t)b->ldv, sizeof *b->val)) b->val = calloc(nval, 1);
  b->Wa = calloc((size_t)nw1 * J, sizeof *b->Wa); b->WTa = calloc((size_t)nw1 * J, sizeof *b->WTa);
  b->a = calloc(nw1, sizeof(int)); b->b = calloc(nw1, sizeof(int)); b->c = calloc(nw1, sizeof(int));
  b->d = calloc((size_t)g->pu * g->pv, sizeof(int));
  b->well_h = calloc(nw1, sizeof(int)); b->well_i = calloc(nw1, sizeof(int));
  b->D = calloc(nw1, sizeof(double));
  if (!b->val || !b->Wa || !b->WTa || !b->a || !b->b || !b->c || !b->d || !b->well_h || !b->well_i || !b->D)
    goto fail;
  memcpy(b->d, g->part_well, (size_t)g->pu * g->pv * sizeof(int));
  for (int w = 0; w < nw; w++) {
    b->well_h[w] = g->well_h[w]; b->well_i[w] = g->well_i[w];
    b->a[w] = w * J; b->c[w] = J;
    b->b[w] = (int)((long)J * (g->well_h[w] + (long)g->H * g->well_i[w]));
  }
  bdia_job job = {g, b, m0, {0}};
  int parts = odb_sparse_par_parts(M, 1024);
  if (M > 0) odb_sparse_par_for(M, parts, bdia_cells_part, &job);
  A->nnz = (long)nw * (J + 1);                  /* the well rows */
  for (int q = 0; q < parts; q++) A->nnz += job.nnz[q];
  for (int w = 0; w < nw; w++) {
    gh_row(g, Mk + w, tc, tv);
    for (int t = 0; t < J; t++) b->Wa[b->a[w] + t] = tv[t];
    b->D[w] = tv[J];
  }
  free(tc); free(tv);
  *out = A;
  return ODB_OK;
fail:
  free(tc); free(tv);
  if (A && !A->bd) free(b);
  odb_sparse_free(A);
  return ODB_FAIL(ODB_ERR_NOMEM, "Bdia of order %ld", g->n);
}

/* g valid; f any format. */
odb_status odb_reservoir_matrix(const odb_reservoir *g, odb_sparse_format f,
                                size_t max_bytes, odb_sparse **out)
{
  *out = NULL;
  odb_status st;
  if (f == ODB_FMT_BDIA) {
    size_t need;
    if (odb_size_mul3(&need, (size_t)7 * g->k * g->k, (size_t)g->M, sizeof(double)))
      return ODB_FAIL(ODB_ERR_NOMEM, "Bdia of order %ld needs more bytes than a size_t holds", g->n);
    if (max_bytes && need > max_bytes)
      return ODB_FAIL(ODB_ERR_NOMEM, "Bdia needs %zu bytes, limit %zu", need, max_bytes);
    return odb_reservoir_bdia(g, out);
  }
  odb_sparse *csr;
  if ((st = odb_reservoir_csr(g, &csr)) != ODB_OK) return st;
  if (f == ODB_FMT_CSR) {
    if (max_bytes && odb_sparse_bytes(csr) > max_bytes) {
      size_t need = odb_sparse_bytes(csr);
      odb_sparse_free(csr);
      return ODB_FAIL(ODB_ERR_NOMEM, "CSR needs %zu bytes, limit %zu", need, max_bytes);
    }
    *out = csr;
    return ODB_OK;
  }
  st = odb_sparse_convert(csr, f, g->k, 0, max_bytes, out);
  odb_sparse_free(csr);
  return st;
}

/* A is GH of g in any format; xs and b hold n entries. */
odb_status odb_reservoir_rhs(const odb_reservoir *g, const odb_sparse *A,
                             double *xs, double *b)
{
  if (A->n != g->n) return ODB_FAIL(ODB_ERR_ARG, "matrix order %ld is not the grid's %ld", A->n, g->n);
  odb_rng r;
  odb_rng_seed(&r, g->seed ^ 0x5eed5eedULL);
  for (long i = 0; i < g->n; i++) xs[i] = 2.0 * odb_rng_uniform(&r) - 1.0;
  odb_sparse_spmv_par(A, xs, b);
  return ODB_OK;
}
