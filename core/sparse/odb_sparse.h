/* odb_sparse.h - reservoir grids, the generalized hepta-diagonal matrix GH,
** its storage formats, SpMV and the Krylov solvers (CPU reference).
** The matrix class and the Bdia storage follow M. A. Al-Mouhamed and
** A. H. Khan, "SpMV and BiCG-Stab optimization for a class of
** hepta-diagonal-sparse matrices on GPU" (J. Supercomputing, 2017);
** section numbers below are that paper's.
**
** Grid: J x H x I cells, cell m = j + J*h + J*H*i (j vertical, fastest),
** k components per cell, M = J*H*I cells, matrix order n = M*k + nw.
** GH = [H W^T; W D]: H is the block hepta-diagonal cell-cell part (k x k
** blocks at block offsets -JH, -J, -1, 0, +1, +J, +JH, truncated at the six
** grid faces); well w is a vertical column of J cells at (h_w, i_w), one well
** per partition of the top plane (pu x pv partitions, well at the centre of
** partition w, row-major); row M*k+w of W couples the well to component 0
** of each of its cells, W^T couples those component-0 rows back to unknown
** M*k+w, D is diagonal.
** Patterns (Al-Mouhamed and Khan, section 7.2): ODB_GH_BLOCK (GH-b): every
** block starts on a block boundary.  ODB_GH_HALF (GH-h): on odd cells m the six neighbour
** blocks are biased by half a block (k/2 columns) away from the centre
** (negative offsets to the left, positive to the right), so block rows
** alternate between a block and a half-block bias; columns that fall
** outside [0, M*k) are dropped.  For k = 1 both patterns coincide.
** Values: every structural off-diagonal entry (r, c) is
** odb_gh_offdiag(seed, r, c) in [-1, 1); the diagonal is 1 + the sum of
** the row's off-diagonal magnitudes (strict diagonal dominance).
*/
#ifndef ODB_SPARSE_H
#define ODB_SPARSE_H

#include <stddef.h>
#include <stdint.h>
#include "odb_status.h"

typedef enum odb_gh_pattern { ODB_GH_BLOCK = 0, ODB_GH_HALF = 1 } odb_gh_pattern;

typedef struct odb_reservoir {
  int J, H, I, k, nw;
  odb_gh_pattern pattern;
  uint64_t seed;
  long M;            /* cells */
  long n;            /* matrix order M*k + nw */
  int pu, pv;        /* partitions of the top plane along H and I */
  int *well_h, *well_i;  /* nw positions */
  int *part_well;    /* pu*pv: well number + 1, or 0 */
} odb_reservoir;

/* Checks sizes (positive, k in 1..16, 0 <= nw <= H*I) and places the wells. */
odb_status odb_reservoir_create(odb_reservoir **out, int J, int H, int I, int k,
                                int nw, odb_gh_pattern pattern, uint64_t seed);
void odb_reservoir_free(odb_reservoir *g);
/* Value of a structural off-diagonal entry (deterministic hash). */
double odb_gh_offdiag(uint64_t seed, long row, long col);
/* Block shift (in columns) of neighbour block u (0..6, 3 = centre) of cell m. */
int odb_gh_bias(const odb_reservoir *g, long m, int u);
/* 1 when stencil slot u (0..6) of cell (j, h, i) lies inside the grid:
   the truncation at the six faces that the generator makes. */
int odb_gh_slot_inside(const odb_reservoir *g, int j, int h, int i, int u);
/* Block offset in cells of stencil slot u (0..6): -JH,-J,-1,0,1,J,JH. */
long odb_gh_offset(const odb_reservoir *g, int u);
/* Partition index of a top-plane position (h, i). */
int odb_gh_partition(const odb_reservoir *g, int h, int i);

typedef enum odb_sparse_format {
  ODB_FMT_CSR = 0, ODB_FMT_BSR, ODB_FMT_ELL, ODB_FMT_HYB, ODB_FMT_DIA,
  ODB_FMT_BDIA, ODB_FMT_COUNT
} odb_sparse_format;

const char *odb_sparse_format_name(odb_sparse_format f);
/* Parses "csr", "bsr", ...; ODB_ERR_NAME otherwise. */
odb_status odb_sparse_format_parse(const char *name, odb_sparse_format *out);

/* Bdia (Al-Mouhamed and Khan, sections 6.1-6.2): per cell m and slot u a
** k x k block, stored "column-major over cells":
** val[((u*k + r)*k + c)*M + m], so that threads on consecutive cells read
** consecutive words.  Truncated blocks are zeros.
** Block (m, u) starts at column (m + offset(u))*k + bias(m, u).
** Wells: Wa[a[w] + t] is W(w, (b[w]+t)*k) for t < c[w] (the J cells of the
** well are consecutive cells b[w]..b[w]+J-1), WTa[a[w] + t] the matching
** W^T entry, d = part_well (partition -> well + 1), D[w] the diagonal. */
typedef struct odb_bdia {
  int J, H, I, k, nw, pu, pv;
  odb_gh_pattern pattern;
  long M;
  long ldv;               /* doubles from one value stream to the next:
                             odb_bdia_ldv(M) */
  double *val;            /* 7*k*k streams (block u, row r, column c: stream
                             (u*k + r)*k + c) of M cells each, ldv apart */
  double *Wa, *WTa;       /* nw*J each */
  int *a, *b, *c;         /* nw each */
  int *d;                 /* pu*pv */
  int *well_h, *well_i;   /* nw each */
  double *D;              /* nw */
} odb_bdia;

/*
** The distance of Bdia's value streams for M cells: M rounded up to an odd
** number of 64-byte lines. The CPU SpMV reads the 7 k k streams side by
** side; with M a multiple of a large power of two (a 64^3 grid: 2^18
** cells) they would start on the same cache sets. The GPU gets the streams
** back to back (odb_sparse_gpu_bdia_values).
*/
long odb_bdia_ldv(long M);

typedef struct odb_sparse {
  odb_sparse_format fmt;
  long n;                 /* order */
  long nnz;               /* structural nonzeros (of the CSR it came from) */
  /* CSR */
  int64_t *rowptr; int32_t *col; double *val;
  /* BSR: bs x bs blocks, nbr block rows (last one padded), row-major blocks */
  int bs; long nbr, nblocks; int64_t *browptr; int32_t *bcol; double *bval;
  /* ELL (and HYB's ELL part): width per row, column-major, padding col 0 val 0 */
  int width; int32_t *ecol; double *eval;
  /* HYB overflow in COO */
  long ncoo; int32_t *crow, *ccol; double *cval;
  /* DIA: ndiag offsets, dval[d*n + row] */
  long ndiag; int64_t *doff; double *dval;
  /* Bdia */
  odb_bdia *bd;
} odb_sparse;

/* Assembles GH in CSR (sorted columns). */
odb_status odb_reservoir_csr(const odb_reservoir *g, odb_sparse **out);
/* GH of order n with only the rows of planes [i0, i1) (cells of those
** i, and the wells that lie in them) and every other row empty: what a
** rank of a run split by planes needs of the whole matrix (its planes and
** those next to them, whose rows read its values). */
odb_status odb_reservoir_csr_planes(const odb_reservoir *g, int i0, int i1, odb_sparse **out);
/* Builds GH directly in Bdia. */
odb_status odb_reservoir_bdia(const odb_reservoir *g, odb_sparse **out);
/* The same for cells [m0, m1) only: a Bdia whose M = m1 - m0 value
** streams hold those cells (cell m at m - m0), with every well's layout
** (a, b, c, d, W, D) and the W^T entries of the wells whose cells lie in
** the range (the others 0): a rank's slab of planes, built from the grid
** (dist/sparse/odb_dist_bdia.c). Its n is the grid's order. */
odb_status odb_reservoir_bdia_cells(const odb_reservoir *g, long m0, long m1, odb_sparse **out);
/* Any format of GH: CSR assembled, Bdia built, others converted from CSR.
** max_bytes > 0 refuses a result larger than that (ODB_ERR_NOMEM, size). */
odb_status odb_reservoir_matrix(const odb_reservoir *g, odb_sparse_format f,
                                size_t max_bytes, odb_sparse **out);
/* Known solution xs (seeded, in [-1, 1)) and b = A xs; n entries each. */
odb_status odb_reservoir_rhs(const odb_reservoir *g, const odb_sparse *A,
                             double *xs, double *b);
/* CSR -> BSR (block size bs) / ELL / HYB (ell_width <= 0: automatic) / DIA. */
odb_status odb_sparse_convert(const odb_sparse *csr, odb_sparse_format f, int bs,
                              int ell_width, size_t max_bytes, odb_sparse **out);
/* Builds a CSR matrix from triplet-free arrays (copies them). */
odb_status odb_sparse_csr_from(long n, const int64_t *rowptr, const int32_t *col,
                               const double *val, odb_sparse **out);
void odb_sparse_free(odb_sparse *A);
/* Bytes held by the format's arrays (see formulas in sparse/formats.c). */
size_t odb_sparse_bytes(const odb_sparse *A);
/* y = A x for any format (y and x of length n, distinct). */
void odb_sparse_spmv(const odb_sparse *A, const double *x, double *y);
/* y = A x on a slab of whole cells of a GH grid (a rank's planes, see
** formats.c): b's cells are the grid's first .. first + b->M - 1 (its M,
** val and wells the slab's; J, H, I the whole grid's; b[w] counts cells
** from first and d maps a partition to a slab's well + 1), x its own values
** (cells, then wells), xlo ends at the column just below the slab, xhi
** starts at the one just above it. Cells [m0, m1) and wells [w0, w1) of
** the slab; the values of spmv on the whole matrix, bit for bit. */
void odb_bdia_spmv_slab(const odb_bdia *b, long first, const double *xlo, const double *x,
                        const double *xhi, double *y, long m0, long m1, int w0, int w1);
/* y = A x split over the members of a team (contiguous row, block-row or
** cell ranges; NULL team: serial).  Errors only from odb_team_run. */
struct odb_team;
odb_status odb_sparse_spmv_team(const odb_sparse *A, struct odb_team *team,
                                const double *x, double *y);
/* A^T of a square CSR matrix as CSR (sorted columns); threaded. */
odb_status odb_sparse_transpose(const odb_sparse *A, odb_sparse **out);
/* y = A^T x, CSR only. */
odb_status odb_sparse_spmv_t(const odb_sparse *A, const double *x, double *y);

typedef enum odb_krylov_method { ODB_KRYLOV_BICGSTAB = 0, ODB_KRYLOV_QMR } odb_krylov_method;
typedef enum odb_krylov_outcome {
  ODB_KRY_CONVERGED = 0, ODB_KRY_MAXIT, ODB_KRY_BREAKDOWN_RHO,
  ODB_KRY_BREAKDOWN_OMEGA, ODB_KRY_BREAKDOWN_OTHER, ODB_KRY_STAGNATED
} odb_krylov_outcome;
const char *odb_krylov_outcome_name(odb_krylov_outcome o);

typedef struct odb_krylov_opts {
  double tol;            /* relative residual ||b - Ax|| / ||b|| (default 1e-10) */
  int maxit;             /* default 1000 */
  int stag_window;       /* iterations without 1% progress (default 100) */
} odb_krylov_opts;

typedef struct odb_krylov_result {
  odb_krylov_outcome outcome;
  int iters;             /* iterations done */
  int breakdown_iter;    /* iteration of the breakdown, -1 if none */
  double relres;         /* last recursive relative residual */
  double relres_true;    /* ||b - A x|| / ||b|| recomputed at the end */
  double *history;       /* relres per iteration, history[0] initial */
  int nhist;
} odb_krylov_result;

/* Solves A x = b from the x given (any format for BiCGStab; QMR needs A^T
** and so CSR).  ODB_OK when converged; otherwise ODB_ERR_MAX_STEPS with the
** reason (breakdown and its iteration, stagnation, maxit) recorded, and the
** result filled in either case.  Free the result with the function below. */
odb_status odb_krylov_solve(const odb_sparse *A, odb_krylov_method method,
                            const double *b, double *x,
                            const odb_krylov_opts *opts, odb_krylov_result *res);
void odb_krylov_result_free(odb_krylov_result *res);

#endif
