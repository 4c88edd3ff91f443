/* odb_dist_bdia.c - Bdia on slabs of GH planes (odb_dist_sparse.h, "Bdia
** on slabs of GH planes"): the slab's storage, its plan and its SpMV.
**
** Assumes, as odb_dist_sparse.c: every rank has the same global CSR and
** the same owners, so each rank computes every rank's slab and windows
** and the plan needs no message; owners give whole planes to ranks in
** ascending order (odb_dsparse_owner_planes), which create checks. */
#include <stdlib.h>
#include <string.h>

#include "odb_dist_sparse.h"
#include "odb_sparse_file.h"

/* A rank's slab. */
typedef struct odb_dslab {
  long first, ncell;     /* the slab's global cells first .. + ncell - 1 */
  long nlo, nhi;         /* ghosts below and above (nlo + nhi = nghost) */
  long blo, bhi;         /* its first blo cells read ghosts below, its last
                            bhi above; the cells between read none */
  int nwl;               /* its wells */
  odb_sparse *B;         /* the slab's Bdia (fmt Bdia, order nloc) */
} odb_dslab;

/* Columns in [0, n) that cell m's blocks read, as the Bdia loop computes
   them (odb_bdia_spmv_slab: the bias of GH-h moves a neighbour block by
   k/2 columns): *cmin, *cmax; 0 when none. */
static int cell_cols(const odb_reservoir *g, long m, long *cmin, long *cmax)
{
  int k = g->k, odd = g->pattern == ODB_GH_HALF && (m & 1), any = 0;
  long JH = (long)g->J * g->H, n = g->M * k;
  long off[7] = {-JH, -g->J, -1, 0, 1, g->J, JH};
  for (int u = 0; u < 7; u++) {
    long c0 = (m + off[u]) * k + (odd && u != 3 ? (u < 3 ? -(k / 2) : k / 2) : 0);
    long a = c0 < 0 ? 0 : c0, b = c0 + k - 1 >= n ? n - 1 : c0 + k - 1;
    if (a > b) continue;
    if (!any || a < *cmin) *cmin = a;
    if (!any || b > *cmax) *cmax = b;
    any = 1;
  }
  return any;
}

/* The windows of cells [lo, hi): ghosts below are columns [*wlo, lo*k),
   above [hi*k, *whi); *blo, *bhi the cells at each end that read them.
   A cell more than JH + 1 cells inside the slab reads neither (a block
   reaches JH cells and less than one more), so only the ends are
   visited. */
static void window(const odb_reservoir *g, long lo, long hi, long *wlo, long *whi,
                   long *blo, long *bhi)
{
  long JH = (long)g->J * g->H, k = g->k, a, b;
  *wlo = lo * k; *whi = hi * k; *blo = *bhi = 0;
  for (long m = lo; m < hi && m < lo + JH + 2; m++)
    if (cell_cols(g, m, &a, &b) && a < lo * k) {
      if (a < *wlo) *wlo = a;
      *blo = m - lo + 1;
    }
  for (long m = hi - 1; m >= lo && m >= hi - JH - 2; m--)
    if (cell_cols(g, m, &a, &b) && b >= hi * k) {
      if (b + 1 > *whi) *whi = b + 1;
      if (hi - m > *bhi) *bhi = hi - m;
    }
}

void odb_dslab_free(odb_dslab *s)
{
  if (!s) return;
  odb_sparse_free(s->B);
  free(s);
}

/* The slab [lo, lo + nc) of the Bdia w (whose streams hold cells w0 ..,
   every well's layout) with the nwl wells in wl[] (ascending), as a Bdia
   of its own cells (odb_bdia_spmv_slab's layout) hung on B, whose
   odb_sparse_free frees it whole; 0 when memory is short. */
static int slab_bdia(odb_sparse *B, const odb_bdia *w, long w0, long lo, long nc, const int *wl, int nwl)
{
  odb_bdia *s = B->bd = calloc(1, sizeof *s);
  if (!s) return 0;
  int k = w->k;
  long cw = 0;
  for (int i = 0; i < nwl; i++) cw += w->c[wl[i]];
  s->J = w->J; s->H = w->H; s->I = w->I; s->k = k; s->nw = nwl; s->pu = w->pu; s->pv = w->pv;
  s->pattern = w->pattern; s->M = nc; s->ldv = odb_bdia_ldv(nc ? nc : 1);
  s->val = calloc((size_t)7 * k * k * (size_t)s->ldv, sizeof *s->val);
  s->Wa = malloc((size_t)(cw ? cw : 1) * sizeof *s->Wa);
  s->WTa = malloc((size_t)(cw ? cw : 1) * sizeof *s->WTa);
  s->a = malloc((size_t)(nwl ? nwl : 1) * sizeof *s->a);
  s->b = malloc((size_t)(nwl ? nwl : 1) * sizeof *s->b);
  s->c = malloc((size_t)(nwl ? nwl : 1) * sizeof *s->c);
  s->d = calloc((size_t)w->pu * w->pv, sizeof *s->d);
  s->well_h = malloc((size_t)(nwl ? nwl : 1) * sizeof *s->well_h);
  s->well_i = malloc((size_t)(nwl ? nwl : 1) * sizeof *s->well_i);
  s->D = malloc((size_t)(nwl ? nwl : 1) * sizeof *s->D);
  if (!s->val || !s->Wa || !s->WTa || !s->a || !s->b || !s->c || !s->d || !s->well_h || !s->well_i || !s->D)
    return 0;
  for (long q = 0; q < (long)7 * k * k; q++)
    memcpy(s->val + (size_t)q * s->ldv, w->val + (size_t)q * w->ldv + (lo - w0), (size_t)nc * sizeof *s->val);
  long at = 0;
  for (int i = 0; i < nwl; i++) {
    int v = wl[i];
    s->a[i] = (int)at; s->b[i] = (int)(w->b[v] - lo); s->c[i] = w->c[v];
    memcpy(s->Wa + at, w->Wa + w->a[v], (size_t)w->c[v] * sizeof *s->Wa);
    memcpy(s->WTa + at, w->WTa + w->a[v], (size_t)w->c[v] * sizeof *s->WTa);
    s->well_h[i] = w->well_h[v]; s->well_i[i] = w->well_i[v]; s->D[i] = w->D[v];
    at += w->c[v];
  }
  for (int p = 0; p < w->pu * w->pv; p++)
    for (int i = 0; i < nwl; i++)
      if (w->d[p] == wl[i] + 1) s->d[p] = i + 1;
  return 1;
}

odb_status odb_dslab_create(const odb_sparse *csr, const int *own, const odb_reservoir *g,
                            int from_grid, odb_dsparse *D)
{
  odb_status st = ODB_OK;
  int size = D->size, rank = D->rank, k = g->k;
  long JH = (long)g->J * g->H, M = g->M, Mk = M * k, n = csr->n;
  long *clo = NULL, *chi = NULL, *wlo = NULL, *whi = NULL, *pos = NULL;
  int *wl = NULL;
  odb_sparse *whole = NULL;
  odb_dslab *s = NULL;
  if (!g || g->n != n)
    return ODB_FAIL(ODB_ERR_ARG, "format 'bdia' on %d ranks: needs the grid of the matrix", size);
  clo = calloc((size_t)size, sizeof *clo);
  chi = calloc((size_t)size, sizeof *chi);
  wlo = calloc((size_t)size, sizeof *wlo);
  whi = calloc((size_t)size, sizeof *whi);
  pos = calloc((size_t)size, sizeof *pos);
  wl = malloc((size_t)(g->nw ? g->nw : 1) * sizeof *wl);
  s = calloc(1, sizeof *s);
  if (!clo || !chi || !wlo || !whi || !pos || !wl || !s) goto nomem;

  /* every rank's cells: whole planes, ranks ascending */
  int last = -1;
  for (long i = 0; i < g->I; i++) {
    int q = own[i * JH * k];
    if (q != last && q < last)
      { st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "format 'bdia' on %d ranks: the planes are not given to ranks in "
                      "ascending slabs", size); goto fail; }
    if (q != last) clo[q] = i * JH;
    chi[q] = (i + 1) * JH;
    last = q;
  }
  for (long r = 0; r < Mk; r++) {
    int q = own[r];
    if (r / k < clo[q] || r / k >= chi[q])
      { st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "format 'bdia' on %d ranks: needs dist = \"planes\" (slabs of whole "
                      "grid planes: Bdia addresses x by grid cell); row %ld is split from its plane", size, r + 1);
        goto fail; }
  }
  for (int q = 0; q < size; q++) {
    long ends[2];
    window(g, clo[q], chi[q], &wlo[q], &whi[q], &ends[0], &ends[1]);
  }

  /* the whole matrix in Bdia (refused with the core's reason when the
     CSR does not fit the grid's structure), restricted to the slab; from
     the grid (the CSR is the grid's): the slab's cells only */
  odb_sparse_conv conv = {1, 0, 0, g};
  long w0 = from_grid ? clo[rank] : 0;
  st = from_grid ? odb_reservoir_bdia_cells(g, clo[rank], chi[rank], &whole)
                 : odb_sparse_convert_to(csr, ODB_FMT_BDIA, &conv, &whole);
  if (st != ODB_OK) goto fail;
  const odb_bdia *wb = whole->bd;
  int nwl = 0;
  for (int w = 0; w < g->nw; w++) {
    int q = own[Mk + w], qc = own[(long)wb->b[w] * k];
    if (q != qc)
      { st = ODB_FAIL(ODB_ERR_UNSUPPORTED, "format 'bdia' on %d ranks: well %d goes with rank %d, its cells with "
                      "rank %d", size, w + 1, q, qc); goto fail; }
    if (q == rank) wl[nwl++] = w;
  }
  long lo = clo[rank], hi = chi[rank];
  s->first = lo; s->ncell = hi - lo; s->nwl = nwl;
  window(g, lo, hi, &wlo[rank], &whi[rank], &s->blo, &s->bhi);
  if (s->blo + s->bhi > s->ncell) s->bhi = s->ncell - s->blo;
  s->nlo = lo * k - wlo[rank]; s->nhi = whi[rank] - hi * k;
  D->nloc = s->ncell * k + nwl;
  D->nint = (s->ncell - s->blo - s->bhi) * k + nwl;
  D->nghost = s->nlo + s->nhi;
  if (D->nloc + D->nghost > INT32_MAX)
    { st = ODB_FAIL(ODB_ERR_ARG, "rank %d holds more than 2^31 values", rank); goto fail; }

  /* own rows in grid order (cells, then wells), ghosts below then above */
  D->glob = malloc((size_t)(D->nloc ? D->nloc : 1) * sizeof *D->glob);
  D->ghost = malloc((size_t)(D->nghost ? D->nghost : 1) * sizeof *D->ghost);
  D->recv_rank = malloc((size_t)size * sizeof *D->recv_rank);
  D->recv_off = malloc((size_t)(size + 1) * sizeof *D->recv_off);
  D->send_rank = malloc((size_t)size * sizeof *D->send_rank);
  D->send_off = malloc((size_t)(size + 1) * sizeof *D->send_off);
  if (!D->glob || !D->ghost || !D->recv_rank || !D->recv_off || !D->send_rank || !D->send_off) goto nomem;
  for (long r = 0; r < s->ncell * k; r++) D->glob[r] = lo * k + r;
  for (int i = 0; i < nwl; i++) D->glob[s->ncell * k + i] = Mk + wl[i];
  for (long r = 0; r < D->nloc; r++)
    D->lnnz += (long)(csr->rowptr[D->glob[r] + 1] - csr->rowptr[D->glob[r]]);
  long ng = 0;
  for (long c = wlo[rank]; c < lo * k; c++) D->ghost[ng++] = c;
  for (long c = hi * k; c < whi[rank]; c++) D->ghost[ng++] = c;
  D->recv_off[0] = 0;
  for (long j = 0; j < ng; j++)
    if (j == 0 || own[D->ghost[j]] != own[D->ghost[j - 1]]) {
      if (D->nrecv) D->recv_off[D->nrecv] = j;
      D->recv_rank[D->nrecv++] = own[D->ghost[j]];
    }
  D->recv_off[D->nrecv] = ng;

  /* what rank q reads of ours: its windows met with our columns, in
     ascending order (the order of its ghosts from us); our cells lie on
     one side of q's, so at most one window meets them */
  long ns = 0;
  D->send_off[0] = 0;
  for (int q = 0; q < size; q++) {
    if (q == rank || clo[q] == chi[q]) continue;
    long a0 = wlo[q] > lo * k ? wlo[q] : lo * k, a1 = clo[q] * k < hi * k ? clo[q] * k : hi * k;
    long b0 = chi[q] * k > lo * k ? chi[q] * k : lo * k, b1 = whi[q] < hi * k ? whi[q] : hi * k;
    long cnt = (a1 > a0 ? a1 - a0 : 0) + (b1 > b0 ? b1 - b0 : 0);
    if (!cnt) continue;
    pos[q] = a1 > a0 ? a0 : b0;
    D->send_rank[D->nsend++] = q;
    ns += cnt;
    D->send_off[D->nsend] = ns;
  }
  if (odb_dsparse_plan_buffers(D, ns, ng) != ODB_OK) goto nomem;
  for (int j = 0; j < D->nsend; j++)
    for (long i = D->send_off[j]; i < D->send_off[j + 1]; i++)
      D->send_idx[i] = (int32_t)(pos[D->send_rank[j]] + (i - D->send_off[j]) - lo * k);

  /* the gathered order: each rank's rows ascending, ranks in turn */
  D->counts = calloc((size_t)size, sizeof *D->counts);
  D->displs = calloc((size_t)size, sizeof *D->displs);
  D->all_glob = malloc((size_t)(n ? n : 1) * sizeof *D->all_glob);
  if (!D->counts || !D->displs || !D->all_glob) goto nomem;
  for (long r = 0; r < n; r++) D->counts[own[r]]++;
  for (int q = 1; q < size; q++) D->displs[q] = D->displs[q - 1] + D->counts[q - 1];
  memset(pos, 0, (size_t)size * sizeof *pos);
  for (long r = 0; r < n; r++) D->all_glob[D->displs[own[r]] + pos[own[r]]++] = r;

  if (!(s->B = calloc(1, sizeof *s->B))) goto nomem;
  s->B->fmt = ODB_FMT_BDIA; s->B->n = D->nloc; s->B->nnz = D->lnnz;
  if (!slab_bdia(s->B, wb, w0, lo, s->ncell, wl, nwl)) goto nomem;
  D->slab = s;
  s = NULL;
  goto done;
nomem:
  st = ODB_FAIL(ODB_ERR_NOMEM, "Bdia slab of order %ld on rank %d", n, rank);
fail:
done:
  odb_sparse_free(whole);
  odb_dslab_free(s);
  free(clo); free(chi); free(wlo); free(whi); free(pos); free(wl);
  return st;
}

void odb_dslab_spmv(const odb_dsparse *A, const double *x, double *y, int interior)
{
  const odb_dslab *s = A->slab;
  const odb_bdia *b = s->B->bd;
  const double *xlo = A->recv_buf + s->nlo, *xhi = A->recv_buf + s->nlo;
  long top = s->ncell - s->bhi;
  if (interior) {
    odb_bdia_spmv_slab(b, s->first, xlo, x, xhi, y, s->blo, top, 0, s->nwl);
    return;
  }
  odb_bdia_spmv_slab(b, s->first, xlo, x, xhi, y, 0, s->blo, 0, 0);
  odb_bdia_spmv_slab(b, s->first, xlo, x, xhi, y, top, s->ncell, 0, 0);
}

void odb_dslab_geometry(const odb_dsparse *A, odb_dslab_geo *g)
{
  const odb_dslab *s = A->slab;
  g->B = s->B; g->first = s->first; g->ncell = s->ncell; g->nlo = s->nlo;
  g->blo = s->blo; g->bhi = s->bhi; g->nwl = s->nwl;
}

double odb_dslab_bytes(const odb_dsparse *A)
{
  return (double)odb_sparse_bytes(A->slab->B);
}

/* The slab's stored words that the loop reads (those of columns outside
   [0, n), at the grid's two ends, are skipped), its wells, x and y once,
   the ghosts written on arrival and read, the sent values read and
   packed. */
double odb_dslab_min_bytes(const odb_dsparse *A)
{
  const odb_dslab *s = A->slab;
  const odb_bdia *b = s->B->bd;
  int k = b->k;
  long JH = (long)b->J * b->H, gM = JH * b->I, n = gM * k;
  long off[7] = {-JH, -b->J, -1, 0, 1, b->J, JH};
  double words = 7.0 * k * k * (double)s->ncell, cw = 0;
  for (long m = s->first; m < s->first + s->ncell; m++) {
    /* only cells within JH + 1 of the grid's ends reach outside it */
    if (m >= JH + 2 && m < gM - JH - 2) continue;
    int odd = b->pattern == ODB_GH_HALF && (m & 1);
    for (int u = 0; u < 7; u++) {
      long c0 = (m + off[u]) * k + (odd && u != 3 ? (u < 3 ? -(k / 2) : k / 2) : 0);
      for (int c = 0; c < k; c++)
        if (c0 + c < 0 || c0 + c >= n) words -= k;
    }
  }
  for (int w = 0; w < b->nw; w++) cw += b->c[w];
  return 8.0 * words + 16.0 * cw + 12.0 * b->nw + 4.0 * b->pu * b->pv + 8.0 * b->nw
         + 16.0 * (double)A->nloc + 16.0 * (double)A->nghost + 16.0 * (double)A->send_off[A->nsend];
}
