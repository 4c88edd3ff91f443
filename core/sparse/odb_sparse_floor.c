/* odb_sparse_floor.c - the fewest bytes of an SpMV per format and of a
** Krylov iteration per method (odb_sparse_floor.h). */
#include "odb_sparse_floor.h"

/* Columns of cell m's block in slot u (0..6) outside 0..Mk-1, times the
   k rows of the block. */
static double bdia_cell_out(const odb_bdia *b, long m, int u) {
  int k = b->k, odd = b->pattern == ODB_GH_HALF && (m & 1);
  long JH = (long)b->J * b->H, Mk = b->M * k;
  long off[7] = {-JH, -b->J, -1, 0, 1, b->J, JH};
  long c0 = (m + off[u]) * k + (odd && u != 3 ? (u < 3 ? -(k / 2) : k / 2) : 0);
  long lo = -c0, hi = c0 + k - Mk, out = 0;
  out += lo > 0 ? (lo < k ? lo : k) : 0;
  out += hi > 0 ? (hi < k ? hi : k) : 0;
  return (double)(out > k ? k : out) * k;
}

/* Stored Bdia entries whose column lies outside the matrix: only cells
   within JH + 1 of either end of the grid can have one (the bias moves a
   block by less than a cell), so only those are visited. */
static double bdia_out_of_range(const odb_bdia *b) {
  long M = b->M, edge = (long)b->J * b->H + 2, hi0 = M - edge;
  double out = 0;
  if (hi0 < edge) hi0 = edge;
  for (long m = 0; m < M && m < edge; ++m)
    for (int u = 0; u < 7; ++u) out += bdia_cell_out(b, m, u);
  for (long m = hi0; m < M; ++m)
    for (int u = 0; u < 7; ++u) out += bdia_cell_out(b, m, u);
  return out;
}

/* See the header; A valid. */
double odb_sparse_matrix_min_bytes(const odb_sparse *A) {
  double n = (double)A->n;
  switch (A->fmt) {
  case ODB_FMT_CSR: return 12.0 * (double)A->nnz + 8.0 * (n + 1);
  case ODB_FMT_BSR:
    return 8.0 * A->bs * A->bs * (double)A->nblocks + 4.0 * (double)A->nblocks
           + 8.0 * ((double)A->nbr + 1);
  case ODB_FMT_ELL: return 12.0 * n * A->width;
  case ODB_FMT_HYB: return 12.0 * n * A->width + 16.0 * (double)A->ncoo;
  case ODB_FMT_DIA: {
    double v = 0;
    for (long d = 0; d < A->ndiag; ++d) {
      long o = A->doff[d] < 0 ? -A->doff[d] : A->doff[d];
      if (o < A->n) v += (double)(A->n - o);
    }
    return 8.0 * v + 8.0 * (double)A->ndiag;
  }
  case ODB_FMT_BDIA: {
    const odb_bdia *b = A->bd;
    double cw = 0;
    for (int w = 0; w < b->nw; ++w) cw += b->c[w];
    return 8.0 * (7.0 * b->k * b->k * (double)b->M - bdia_out_of_range(b))
           + 16.0 * cw + 12.0 * b->nw + 4.0 * b->pu * b->pv + 8.0 * b->nw;
  }
  default: return 0;
  }
}

/* See the header. */
void odb_sparse_min_bytes(const odb_sparse *A, double *r, double *w) {
  *r = odb_sparse_matrix_min_bytes(A) + 8.0 * (double)A->n;
  *w = 8.0 * (double)A->n;
}

/*
** The phases of one iteration (krylov.c has the recurrences; a global dot
** product ends a phase, since what follows needs its value everywhere):
**
** BiCGStab (r^ the shadow residual, read-only):
**   1. p = r + beta (p - omega v); v = A p (p made on the fly); r^.v
**      read r, p, v, r^ (4); write p, v (2)
**   2. s = r - alpha v; t = A s (s on the fly); s.s, t.t, t.s
**      read r, v (2); write s, t (2)
**   3. x += alpha p + omega s; r = s - omega t; r.r, r^.r
**      read x, p, s, t, r^ (5); write x, r (2)
**   phase 3 cannot join the next phase 1: beta needs r^.r of phase 3.
** QMR (Barrett et al., Templates, no look-ahead):
**   1. v~ = p~ - beta v, w~ = A^T q - beta w (v = v~/rho and w = w~/xi of
**      the last phase made again from the old v~ and w~); their norms and
**      w~.v~: read p~, v~, w~, q (4); write v~, w~ (2)
**   2. d = eta p + c d; s = eta p~ + c s; x += d; r -= s; then
**      v = v~/rho, w = w~/xi, p = v - cp p, q = w - cq q, p~ = A p (p on
**      the fly): both need only phase 1's products, so they are one phase;
**      read p, d, p~, s, x, r, v~, w~, q (9); write d, s, x, r, p, q, p~ (7)
*/
void odb_krylov_min_vectors(odb_krylov_method m, int *vr, int *vw) {
  if (m == ODB_KRYLOV_QMR) { *vr = 13; *vw = 9; }
  else { *vr = 11; *vw = 6; }
}

/* See the header. */
void odb_krylov_min_bytes(const odb_sparse *A, odb_krylov_method m,
                          double *r, double *w) {
  int vr, vw;
  odb_krylov_min_vectors(m, &vr, &vw);
  *r = 2.0 * odb_sparse_matrix_min_bytes(A) + vr * 8.0 * (double)A->n;
  *w = vw * 8.0 * (double)A->n;
}

/* See the header. */
double odb_krylov_touched_bytes(const odb_sparse *A, odb_krylov_method m) {
  return odb_sparse_matrix_min_bytes(A)
         + (m == ODB_KRYLOV_QMR ? 11.0 : 7.0) * 8.0 * (double)A->n;
}
