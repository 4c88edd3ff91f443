/* odb_tsm_cpu.c - the CPU versions of the tall & skinny products
   (threads over the long side, vectorizable inner loops over N). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odb_size.h"
#include "odb_tsm.h"

enum { MIN_ROWS_PER_THREAD = 4096, MAX_THREADS = 256 };

/* Names of the operations and types, indexed by their enums. */
static const char *const op_names[] = { "tsmttsm", "tsmm" };
static const char *const dtype_names[] = { "d", "z" };

/* Assumes op is one of the enum values. */
const char *odb_tsm_op_name(odb_tsm_op op) {
  return (unsigned)op < 2 ? op_names[op] : "?";
}

/* Assumes t is one of the enum values. */
const char *odb_tsm_dtype_name(odb_tsm_dtype t) {
  return (unsigned)t < 2 ? dtype_names[t] : "?";
}

/* name may be NULL (refused). */
odb_status odb_tsm_op_parse(const char *name, odb_tsm_op *out) {
  for (int i = 0; i < 2; ++i)
    if (name && strcmp(name, op_names[i]) == 0) {
      *out = (odb_tsm_op)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown tall & skinny kernel '%s' (known: "
                  "tsmttsm, tsmm)", name ? name : "(null)");
}

/* name may be NULL (refused). */
odb_status odb_tsm_dtype_parse(const char *name, odb_tsm_dtype *out) {
  for (int i = 0; i < 2; ++i)
    if (name && strcmp(name, dtype_names[i]) == 0) {
      *out = (odb_tsm_dtype)i;
      return ODB_OK;
    }
  return ODB_FAIL(ODB_ERR_NAME, "unknown dtype '%s' (known: d = real double, "
                  "z = complex double)", name ? name : "(null)");
}

/* Any long values; see the header. */
odb_status odb_tsm_check_shape(long M, long N, long K, int max_width) {
  long hi = max_width ? ODB_TSM_MAX_WIDTH : 1L << 30;
  if (M < 1 || M > hi)
    return ODB_FAIL(ODB_ERR_ARG, "M = %ld is outside the supported range "
                    "1..%ld", M, hi);
  if (N < 1 || N > hi)
    return ODB_FAIL(ODB_ERR_ARG, "N = %ld is outside the supported range "
                    "1..%ld", N, hi);
  if (K < 1)
    return ODB_FAIL(ODB_ERR_ARG, "K = %ld: the long side must be at least 1",
                    K);
  return ODB_OK;
}

/* Shapes checked (positive sides); see the header. */
odb_status odb_tsm_sizes(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                         long K, size_t *na, size_t *nx, size_t *nout) {
  size_t e = t == ODB_TSM_Z ? 2 : 1, sum;
  long wx = op == ODB_TSM_TSMTTSM ? K : M, wo = op == ODB_TSM_TSMTTSM ? M : K;
  *na = *nx = *nout = 0;
  if (odb_size_mul3(na, e, (size_t)K, (size_t)M) ||
      odb_size_mul3(nx, e, (size_t)N, (size_t)wx) ||
      odb_size_mul3(nout, e, (size_t)N, (size_t)wo) ||
      odb_size_add(&sum, *na, *nx) || odb_size_add(&sum, sum, *nout) ||
      odb_size_mul(&sum, sum, sizeof(double))) {
    *na = *nx = *nout = 0;
    return ODB_FAIL(ODB_ERR_NOMEM, "%s %s M = %ld, N = %ld, K = %ld: its "
                    "matrices would need %.3g bytes, more than this machine "
                    "can address", odb_tsm_op_name(op), odb_tsm_dtype_name(t),
                    M, N, K, odb_tsm_bytes(t, M, N, K));
  }
  return ODB_OK;
}

/* Counts as in the roofline model of Ernst, Hager, Thies and Wellein,
   "Performance engineering for real and complex tall & skinny matrix
   multiplication kernels on GPUs", section 1.3, eq. (1). */
double odb_tsm_flops(odb_tsm_dtype t, long M, long N, long K) {
  return (t == ODB_TSM_Z ? 8.0 : 2.0) * (double)M * (double)N * (double)K;
}

/* Each matrix read or written once; 16 bytes per complex entry. */
double odb_tsm_bytes(odb_tsm_dtype t, long M, long N, long K) {
  double e = t == ODB_TSM_Z ? 16.0 : 8.0;
  return e * ((double)M * K + (double)N * K + (double)M * N);
}

/* n doubles each; y may be all zero. */
double odb_tsm_relerr(const double *x, const double *y, size_t n) {
  double d = 0.0, r = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double e = x[i] - y[i];
    d += e * e;
    r += y[i] * y[i];
  }
  if (isnan(d)) return INFINITY;
  return r > 0.0 ? sqrt(d / r) : sqrt(d);
}

/* The triple loops in their textbook order; out is overwritten. */
void odb_tsm_naive(odb_tsm_op op, odb_tsm_dtype t, long M, long N, long K,
                   const double *A, const double *X, double *out) {
  int z = t == ODB_TSM_Z;
  if (op == ODB_TSM_TSMTTSM) {
    for (long m = 0; m < M; ++m)
      for (long n = 0; n < N; ++n) {
        double re = 0.0, im = 0.0;
        for (long k = 0; k < K; ++k) {
          if (z) {
            double ar = A[2 * (k * M + m)], ai = A[2 * (k * M + m) + 1];
            double br = X[2 * (k * N + n)], bi = X[2 * (k * N + n) + 1];
            re += ar * br - ai * bi;
            im += ar * bi + ai * br;
          } else {
            re += A[k * M + m] * X[k * N + n];
          }
        }
        if (z) {
          out[2 * (m * N + n)] = re;
          out[2 * (m * N + n) + 1] = im;
        } else {
          out[m * N + n] = re;
        }
      }
    return;
  }
  for (long k = 0; k < K; ++k)
    for (long n = 0; n < N; ++n) {
      double re = 0.0, im = 0.0;
      for (long m = 0; m < M; ++m) {
        if (z) {
          double ar = A[2 * (k * M + m)], ai = A[2 * (k * M + m) + 1];
          double cr = X[2 * (m * N + n)], ci = X[2 * (m * N + n) + 1];
          re += ar * cr - ai * ci;
          im += ar * ci + ai * cr;
        } else {
          re += A[k * M + m] * X[m * N + n];
        }
      }
      if (z) {
        out[2 * (k * N + n)] = re;
        out[2 * (k * N + n) + 1] = im;
      } else {
        out[k * N + n] = re;
      }
    }
}

/* One thread's share: rows [k0, k1) and, for tsmttsm, its private tile. */
typedef struct tsm_job {
  odb_tsm_op op;
  odb_tsm_dtype t;
  long M, N, k0, k1;
  const double *A, *X;
  double *out;          /* tsmm: B; tsmttsm: the private tile (the real
                           view's sums, 2M x 2N for complex data) */
  odb_status st;        /* tsmttsm: ODB_ERR_NOMEM when buffers failed */
} tsm_job;

/*
** A^T B on the CPU works on the real view: a complex K x M matrix is a real
** K x 2M one, and the real product P = A^T B (2M x 2N) holds every
** re x re, re x im, im x re and im x im sum, which combine into C at the
** end (tsm_combine). Two forms, by the size of P (Mr x Nr):
**  - at most SMALL x SMALL: the rows are read where they lie, RU rows in
**    flight, a copy of the loop per (Mr, Nr) (small_rows);
**  - wider: MR x NR register tiles of P summing each chunk's outer
**    products, the chunk read where it lies (chunks of at most
**    PREFETCH_MAX bytes, the next one prefetched; tile_chunk and the edge
**    tiles of list_tiles).
** All have fixed trip counts the compiler vectorizes without reordering
** any sum, so the result does not depend on timing.
*/
enum { KC = 64,                 /* rows a chunk (fewer where they pass
                                   PREFETCH_MAX bytes) */
       LANES = 8,                /* a shorter chunk is a multiple of it */
       MR = 4, NR = 8,           /* the register tile of P */
       SMALL = 4, RU = 4,        /* P of at most 4 x 4: RU rows in flight */
       PREFETCH_MAX = 32768,     /* bytes of a chunk prefetched (sum_chunk) */
       TSMM_AHEAD = 8,           /* rows of A prefetched ahead (tsmm_d) */
       SMALL_AHEAD = 256,        /* rows prefetched ahead (small_rows) */
       REAL_FORM_MAX_M = 4096 }; /* complex AC through the real form up to
                                   this M (the CPU versions take any width) */

/* One register tile of P read in place: rows x cols at (m0, n0); skip
   > 0: an NR tile overlapping the one before, whose first skip columns
   are not added (tile_overlap). */
typedef struct tsm_tile {
  long m0, n0;
  int rows, cols, skip;
} tsm_tile;

/* The tiles and the private sums of one thread. */
typedef struct tsm_pack {
  long Mr, Nr;          /* real columns of A and B */
  tsm_tile *tiles;      /* ntiles of them, listed once a call */
  long ntiles;
  double *p;            /* P, Mr x Nr */
} tsm_pack;

/*
** NR doubles as one vector (GCC and Clang vector extensions; any target,
** the compiler splits it where the registers are narrower). A scalar
** times a vector is a broadcast from memory, which plain arrays of sums
** turned into shuffles (measured far below the peak for B = A C; see
** BENCHMARKS.md).
** Unaligned, and allowed to alias the doubles it is loaded from.
*/
typedef double vnr __attribute__((vector_size(NR * sizeof(double)),
                                  aligned(sizeof(double)), may_alias));

typedef double v4d __attribute__((vector_size(4 * sizeof(double)),
                                  aligned(sizeof(double)), may_alias));
typedef double v2d __attribute__((vector_size(2 * sizeof(double)),
                                  aligned(sizeof(double)), may_alias));
typedef double v1d __attribute__((may_alias));

/* An R x W tile of P (W the width of the vector type V, R <= MR): the sum
   of the chunk's outer products; row kk of the tile's columns of A at
   a + kk * lda, of B at b + kk * ldb. */
#define ODB_TILE_CHUNK(name, V, R)                                           \
  static void name(const double *restrict a, long lda,                       \
                   const double *restrict b, long ldb, long kc,              \
                   double *restrict p, long ldp) {                           \
    V acc[R];                                                                \
    for (int i = 0; i < (R); ++i) acc[i] = (V){ 0 };                         \
    for (long kk = 0; kk < kc; ++kk) {                                       \
      V bv = *(const V *)(b + kk * ldb);                                     \
      for (int i = 0; i < (R); ++i) acc[i] += a[kk * lda + i] * bv;         \
    }                                                                        \
    for (int i = 0; i < (R); ++i) *(V *)(p + i * ldp) += acc[i];            \
  }
/* MR x NR, the tile of the tiled forms */
ODB_TILE_CHUNK(tile_chunk, vnr, MR)
/* the edges of a P read in place (list_tiles): the rows past the last
   whole MR in a tile of their own; the last 4 columns of a width 4 past
   a multiple of NR, and the columns of a P narrower than NR, 4, 2 and 1
   at a time */
ODB_TILE_CHUNK(tile_4x4, v4d, 4)
ODB_TILE_CHUNK(tile_4x2, v2d, 4)
ODB_TILE_CHUNK(tile_4x1, v1d, 4)
ODB_TILE_CHUNK(tile_3x8, vnr, 3)
ODB_TILE_CHUNK(tile_3x4, v4d, 3)
ODB_TILE_CHUNK(tile_3x2, v2d, 3)
ODB_TILE_CHUNK(tile_3x1, v1d, 3)
ODB_TILE_CHUNK(tile_2x8, vnr, 2)
ODB_TILE_CHUNK(tile_2x4, v4d, 2)
ODB_TILE_CHUNK(tile_2x2, v2d, 2)
ODB_TILE_CHUNK(tile_2x1, v1d, 2)
ODB_TILE_CHUNK(tile_1x8, vnr, 1)
ODB_TILE_CHUNK(tile_1x4, v4d, 1)
ODB_TILE_CHUNK(tile_1x2, v2d, 1)
ODB_TILE_CHUNK(tile_1x1, v1d, 1)
#undef ODB_TILE_CHUNK

typedef void (*tile_fn)(const double *restrict, long, const double *restrict,
                        long, long, double *restrict, long);
/* [rows - 1][w]: w 0 for NR columns, 1 for 4, 2 for 2, 3 for 1 (the
   names say 4 rows and 8 columns) */
_Static_assert(MR == 4 && NR == 8, "tile_fns is written for 4 x 8 tiles");
static const tile_fn tile_fns[MR][4] = {
  { tile_1x8, tile_1x4, tile_1x2, tile_1x1 },
  { tile_2x8, tile_2x4, tile_2x2, tile_2x1 },
  { tile_3x8, tile_3x4, tile_3x2, tile_3x1 },
  { tile_chunk, tile_4x4, tile_4x2, tile_4x1 },
};

/* tile_chunk for an MR x 2 NR tile (two vectors of B a row). */
static void tile_chunk2(const double *restrict a, long lda,
                        const double *restrict b, long ldb, long kc,
                        double *restrict p, long ldp) {
  vnr acc[MR][2] = { { { 0 } } };
  for (long kk = 0; kk < kc; ++kk) {
    vnr b0 = *(const vnr *)(b + kk * ldb), b1 = *(const vnr *)(b + kk * ldb + NR);
    for (int i = 0; i < MR; ++i) {
      acc[i][0] += a[kk * lda + i] * b0;
      acc[i][1] += a[kk * lda + i] * b1;
    }
  }
  for (int i = 0; i < MR; ++i) {
    *(vnr *)(p + i * ldp) += acc[i][0];
    *(vnr *)(p + i * ldp + NR) += acc[i][1];
  }
}

/*
** Share t of parts of the prefetch of n doubles at p, cache lines into L2
** (to_l2: prefetcht1, A^T B's chunks) or L1 (B = A C's rows ahead: into
** L2 measured slower for small B). A^T B's chunks go to L2 rather than
** L1, which measured faster on the 2-core Xeon VM of BENCHMARKS.md;
** prefetching two chunks ahead instead of one gained nothing. A chunk is
** summed from L1 several times over (once a tile); the hardware fetches
** the next chunk only once the loop reaches it, so without these the
** memory idles while a chunk is summed. Only chunks of A and B up to
** PREFETCH_MAX bytes are prefetched: larger ones evict the chunk being
** summed (measured slower for the widest shapes, see BENCHMARKS.md).
*/
static void prefetch_share(const double *p, long n, long t,
                           long parts, int to_l2) {
  const char *c = (const char *)p;
  long lines = (n * (long)sizeof(double) + 63) / 64;
  for (long l = lines * t / parts; l < lines * (t + 1) / parts; ++l) {
    if (to_l2) __builtin_prefetch(c + 64 * l, 0, 2);
    else __builtin_prefetch(c + 64 * l, 0, 3);
  }
}

/* Columns of the tile of P at column n0 (of Nr) for a row of tiles of
   rows rows: 2 NR where P is at least 4 NR wide, 2 NR columns are left
   and the rows are whole (tile_chunk2: 6 loads for 8 multiply-adds
   instead of 5 for 4, which pays off from 4 NR columns on, also where
   the width is not a multiple of 2 NR; narrower P measured slower with
   it, see BENCHMARKS.md); else the widest of NR, 4, 2 and 1 that fits. */
static int tile_cols(long Nr, long n0, int rows) {
  long left = Nr - n0;
  if (rows == MR && Nr >= 4 * NR && left >= 2 * NR) return 2 * NR;
  return left >= NR ? NR : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

/* The rows of P's row of tiles at m0 (MR, or fewer at the last). */
static int tile_rows(long Mr, long m0) {
  return Mr - m0 < MR ? (int)(Mr - m0) : MR;
}

/* One tile at (m0, n0) of rows x c (c from tile_cols) into p (leading
   dimension ldp). */
static void run_tile(const double *A, const double *B, long Mr, long Nr,
                     long kc, long m0, long n0, int rows, int c, double *p,
                     long ldp) {
  if (c == 2 * NR)
    tile_chunk2(A + m0, Mr, B + n0, Nr, kc, p, ldp);
  else if (c == NR && rows == MR)   /* the common tile, called directly
                                       (through the table measured
                                       slightly slower) */
    tile_chunk(A + m0, Mr, B + n0, Nr, kc, p, ldp);
  else
    tile_fns[rows - 1][c == NR ? 0 : c == 4 ? 1 : c == 2 ? 2 : 3](
        A + m0, Mr, B + n0, Nr, kc, p, ldp);
}

/* The NR tile at (m0, n0) of rows rows into a scratch tile, and its
   columns from skip on added to P (the others belong to the tile before;
   kept out of sum_inplace's loop, whose tiles it would slow). */
static __attribute__((noinline)) void tile_overlap(
    const double *A, const double *B, long Mr, long Nr, long kc, long m0,
    long n0, int rows, int skip, double *P) {
  double sc[MR * NR] = { 0 };
  run_tile(A, B, Mr, Nr, kc, m0, n0, rows, NR, sc, NR);
  for (int r = 0; r < rows; ++r)
    for (int q = skip; q < NR; ++q)
      P[(m0 + r) * Nr + n0 + q] += sc[r * NR + q];
}

/*
** The tiles of P (Mr x Nr, no padding) read in place, into t (NULL: only
** counted); returns how many. The rows past the last whole MR go in a
** tile of their own. Columns past the last whole NR: 4 in a tile of 4;
** other remainders of a P at least NR wide in an NR tile that overlaps
** the one before, summed into a scratch tile whose new columns are added
** (one wide tile keeps the vector width, where tiles of 4, 2 and 1
** columns measured slower; doing the same for the rows past the last MR
** gained nothing); in a narrower P, tiles of 4, 2 and 1 columns.
*/
static long list_tiles(long Mr, long Nr, tsm_tile *t) {
  long n = 0;
  for (long m0 = 0; m0 < Mr; m0 += MR) {
    int rows = tile_rows(Mr, m0);
    for (long n0 = 0; n0 < Nr;) {
      long left = Nr - n0;
      tsm_tile e = { m0, n0, rows, tile_cols(Nr, n0, rows), 0 };
      if (left < NR && left != 4 && Nr >= NR) {   /* overlapping */
        e.cols = NR;
        e.skip = NR - (int)left;
        e.n0 = Nr - NR;
      }
      if (t) t[n] = e;
      ++n;
      n0 = e.n0 + e.cols;
    }
  }
  return n;
}

/* The chunk of kc rows at A, B read in place into P: every tile, each
   after its share of the prefetch of the next nc rows at na, nb (nc 0:
   none). */
static void sum_inplace(tsm_pack *w, const double *A, const double *B,
                        long kc, const double *na, const double *nb,
                        long nc) {
  long Mr = w->Mr, Nr = w->Nr, parts = w->ntiles;
  /* whole tiles of one width (MR x NR below 4 NR columns, MR x 2 NR from
     there on a multiple of 2 NR wide): without the list, whose
     indirection measured about 3% slower for these shapes */
  if (Mr % MR == 0 && Nr % NR == 0 && (Nr < 4 * NR || Nr % (2 * NR) == 0)) {
    int c = tile_cols(Nr, 0, MR);   /* the same for every tile here */
    long t = 0;
    for (long m0 = 0; m0 < Mr; m0 += MR)
      for (long n0 = 0; n0 < Nr; n0 += c, ++t) {
        prefetch_share(na, nc * Mr, t, parts, 1);
        prefetch_share(nb, nc * Nr, t, parts, 1);
        if (c == 2 * NR)
          tile_chunk2(A + m0, Mr, B + n0, Nr, kc, w->p + m0 * Nr + n0, Nr);
        else
          tile_chunk(A + m0, Mr, B + n0, Nr, kc, w->p + m0 * Nr + n0, Nr);
      }
    return;
  }
  for (long t = 0; t < parts; ++t) {
    const tsm_tile *e = &w->tiles[t];
    prefetch_share(na, nc * Mr, t, parts, 1);
    prefetch_share(nb, nc * Nr, t, parts, 1);
    if (e->skip)
      tile_overlap(A, B, Mr, Nr, kc, e->m0, e->n0, e->rows, e->skip, w->p);
    else
      run_tile(A, B, Mr, Nr, kc, e->m0, e->n0, e->rows, e->cols,
               w->p + e->m0 * Nr + e->n0, Nr);
  }
}

/* The chunk of kc rows at A, B (real views) into the thread's sums, while
   the next nc rows (0: none) are prefetched. */
static void sum_chunk(tsm_pack *w, const double *A, const double *B, long kc,
                      long nc) {
  const double *na = A + kc * w->Mr, *nb = B + kc * w->Nr;
  if (nc * (w->Mr + w->Nr) * (long)sizeof(double) > PREFETCH_MAX) nc = 0;
  sum_inplace(w, A, B, kc, na, nb, nc);
}

/*
** A^T B for a P of at most SMALL x SMALL entries (MS x NS, constants where
** inlined), straight from the rows: each row's outer product goes into RU
** sets of sums in turn (RU rows in flight, RU independent chains per
** entry), added up in a fixed order at the end; no packing, the rows are
** read where they lie, and prefetched SMALL_AHEAD rows ahead (faster
** than no prefetch; 128 rows about as good, 512 worse for 4 x 4; see
** BENCHMARKS.md). rows [k0, k1) into out (MS x NS).
*/
/* always inlined: each (MS, NS) copy must be specialized with constant
   trip counts; GCC may otherwise move some copies out of line, which
   measured markedly slower for the smallest shapes. */
static inline __attribute__((always_inline)) void small_rows(const tsm_job *j,
                                                        int MS, int NS) {
  double acc[RU][SMALL][SMALL] = { { { 0 } } };
  const double *restrict A = j->A, *restrict B = j->X;
  long k = j->k0;
  for (; k + RU <= j->k1; k += RU) {
    /* the rows SMALL_AHEAD on, into L2 (prefetcht1; measured slightly
       faster than into L1) */
    if (k + SMALL_AHEAD + RU <= j->k1) {
      for (int o = 0; o < RU * MS; o += 8)
        __builtin_prefetch(A + (k + SMALL_AHEAD) * MS + o, 0, 2);
      for (int o = 0; o < RU * NS; o += 8)
        __builtin_prefetch(B + (k + SMALL_AHEAD) * NS + o, 0, 2);
    }
    for (int r = 0; r < RU; ++r)
      for (int m = 0; m < MS; ++m)
        for (int n = 0; n < NS; ++n)
          acc[r][m][n] += A[(k + r) * MS + m] * B[(k + r) * NS + n];
  }
  for (; k < j->k1; ++k)
    for (int m = 0; m < MS; ++m)
      for (int n = 0; n < NS; ++n) acc[0][m][n] += A[k * MS + m] * B[k * NS + n];
  for (int m = 0; m < MS; ++m)
    for (int n = 0; n < NS; ++n) {
      double t = 0.0;
      for (int r = 0; r < RU; ++r) t += acc[r][m][n];
      j->out[m * NS + n] = t;
    }
}

/* small_rows for Mr, Nr in 1..SMALL (each pair its own copy); 0 for
   other shapes. */
static int tsmttsm_small(const tsm_job *j, long Mr, long Nr) {
  if (Mr > SMALL || Nr > SMALL) return 0;
#define ODB_SMALL_CASE(a, b) case (a) * 8 + (b): small_rows(j, a, b); return 1;
#define ODB_SMALL_ROW(a) ODB_SMALL_CASE(a, 1) ODB_SMALL_CASE(a, 2) \
                         ODB_SMALL_CASE(a, 3) ODB_SMALL_CASE(a, 4)
  switch (Mr * 8 + Nr) {
  ODB_SMALL_ROW(1) ODB_SMALL_ROW(2) ODB_SMALL_ROW(3) ODB_SMALL_ROW(4)
  default: return 0;
  }
#undef ODB_SMALL_ROW
#undef ODB_SMALL_CASE
}

/*
** A^T B (real view, Mr x Nr) over rows [k0, k1) into the thread's tile
** out (Mr x Nr, overwritten). ODB_ERR_NOMEM when the buffers cannot be
** had (the tile is then left as it is).
*/
static odb_status tsmttsm_real(const tsm_job *j, long Mr, long Nr) {
  tsm_pack w;
  odb_status st = ODB_OK;
  if (tsmttsm_small(j, Mr, Nr)) return ODB_OK;
  memset(&w, 0, sizeof w);
  w.Mr = Mr;
  w.Nr = Nr;
  /* beyond small_rows every P reads the chunk where it lies, with no
     packing: whole tiles, the 4 columns past them, every other width
     (list_tiles) and a P of at most 16 entries that small_rows does not
     take. Copying chunks into zero-padded packed panels, or summing
     packed columns as dot products, measured slower for every shape
     (see BENCHMARKS.md, tall & skinny products on the CPU). */
  w.ntiles = list_tiles(Mr, Nr, NULL);
  w.tiles = malloc(sizeof *w.tiles * (size_t)w.ntiles);
  if (w.tiles) list_tiles(Mr, Nr, w.tiles);
  w.p = calloc((size_t)(Mr * Nr), sizeof(double));
  if (!w.tiles || !w.p) {
    st = ODB_ERR_NOMEM;
  } else {
    /* in place: chunks of at most PREFETCH_MAX bytes, so that the next
       one can be prefetched (sum_chunk); with it the wide shapes reach
       the FP64 peak on the machine of BENCHMARKS.md */
    long step = KC, row = (Mr + Nr) * (long)sizeof(double);
    if (step * row > PREFETCH_MAX)
      step = PREFETCH_MAX / row / LANES * LANES;
    if (step < LANES) step = LANES;
    for (long k = j->k0; k < j->k1; k += step) {
      long kc = j->k1 - k < step ? j->k1 - k : step;
      long left = j->k1 - k - kc;
      sum_chunk(&w, j->A + k * Mr, j->X + k * Nr, kc, left < step ? left : step);
    }
    memcpy(j->out, w.p, sizeof(double) * (size_t)(Mr * Nr));
  }
  free(w.tiles);
  free(w.p);
  return st;
}

/* The real-view sums P (2M x 2N) of a complex A^T B into C (M x N,
   interleaved). */
static void tsm_combine(const double *P, long M, long N, double *out) {
  long Nr = 2 * N;
  for (long m = 0; m < M; ++m)
    for (long n = 0; n < N; ++n) {
      const double *r0 = P + 2 * m * Nr, *r1 = r0 + Nr;
      out[2 * (m * N + n)] = r0[2 * n] - r1[2 * n + 1];
      out[2 * (m * N + n) + 1] = r0[2 * n + 1] + r1[2 * n];
    }
}

/*
** Real B = A C for a B of 4 columns: each row of B one vector of 4, 8 rows
** in flight, A's entries broadcast where they lie and prefetched 32 rows
** ahead; rows [k0, k1). Faster than a rows-as-lanes form (A's chunks
** packed, B stored transposed), see BENCHMARKS.md.
*/
static void tsmm_rows4(const tsm_job *j) {
  long M = j->M, k = j->k0;
  const double *restrict A = j->A;
  double *restrict B = j->out;
  for (; k + 8 <= j->k1; k += 8) {
    v4d acc[8] = { { 0 } };
    if (k + 8 + TSMM_AHEAD * 4 <= j->k1)
      prefetch_share(A + (k + TSMM_AHEAD * 4) * M, 8 * M, 0, 1, 0);
    for (long m = 0; m < M; ++m) {
      v4d c = *(const v4d *)(j->X + m * 4);
      for (int r = 0; r < 8; ++r) acc[r] += A[(k + r) * M + m] * c;
    }
    for (int r = 0; r < 8; ++r) *(v4d *)(B + (k + r) * 4) = acc[r];
  }
  for (; k < j->k1; ++k) {
    v4d acc = { 0 };
    for (long m = 0; m < M; ++m) acc += A[k * M + m] * *(const v4d *)(j->X + m * 4);
    *(v4d *)(B + k * 4) = acc;
  }
}

/*
** Real B = A C, MR rows x NR (or 2 NR) columns of B at a time in registers
** (the rows' entries of A broadcast, a row of C's tile loaded, per m), for
** rows [k, k + MR) and the tiles that fit N; the last N % NR columns and
** the last rows go the plain way (tsmm_rows).
*/
static void tsmm_tiles(const tsm_job *j, long k, double *restrict ap) {
  long M = j->M, N = j->N;
  const double *restrict A = j->A + k * M;
  double *restrict B = j->out + k * N;
  for (long m = 0; m < M; ++m)          /* the rows' A, m-major */
    for (int i = 0; i < MR; ++i) ap[m * MR + i] = A[i * M + m];
  long n0 = 0;
  /* from 32 columns on, two vectors of B a row: 6 loads for 8 multiply-adds
     instead of 5 for 4; for narrower B it measured no better or slower
     (see BENCHMARKS.md) */
  if (N >= 32)
  for (; n0 + 2 * NR <= N; n0 += 2 * NR) {
    vnr acc[MR][2] = { { { 0 } } };
    for (long m = 0; m < M; ++m) {
      vnr c0 = *(const vnr *)(j->X + m * N + n0);
      vnr c1 = *(const vnr *)(j->X + m * N + n0 + NR);
      for (int i = 0; i < MR; ++i) {
        acc[i][0] += ap[m * MR + i] * c0;
        acc[i][1] += ap[m * MR + i] * c1;
      }
    }
    for (int i = 0; i < MR; ++i) {
      *(vnr *)(B + i * N + n0) = acc[i][0];
      *(vnr *)(B + i * N + n0 + NR) = acc[i][1];
    }
  }
  /* NR columns a tile; the last N % NR columns (N >= NR) in a tile that
     ends at N and overlaps the one before, whose columns it writes again
     with the same values (the same sums in the same order); this keeps
     the remainder in registers, where one row at a time (tsmm_rows)
     measured several times slower */
  for (; n0 < N; n0 += NR) {
    long c0 = n0 + NR <= N ? n0 : N - NR;
    vnr acc[MR] = { { 0 } };
    for (long m = 0; m < M; ++m) {
      vnr cv = *(const vnr *)(j->X + m * N + c0);
      for (int i = 0; i < MR; ++i) acc[i] += ap[m * MR + i] * cv;
    }
    for (int i = 0; i < MR; ++i) *(vnr *)(B + i * N + c0) = acc[i];
  }
}

/* Real B = A C, columns [n0, N) of rows [k0, k1), one row at a time. */
static void tsmm_rows(const tsm_job *j, long k0, long k1, long n0) {
  long M = j->M, N = j->N;
  for (long k = k0; k < k1; ++k) {
    const double *restrict a = j->A + k * M;
    double *restrict b = j->out + k * N;
    for (long n = n0; n < N; ++n) b[n] = 0.0;
    for (long m = 0; m < M; ++m) {
      double am = a[m];
      const double *restrict c = j->X + m * N;
      for (long n = n0; n < N; ++n) b[n] += am * c[n];
    }
  }
}

/*
** Real B = A C for a B narrower than a register tile (N < NR, not 4): g
** consecutive rows of A and B, read as one row of A' (g M) and B' (W = g N
** columns: 4 for N = 1, 2, a multiple of NR otherwise), give B' = A' C'
** with C' the block-diagonal (g M x W) of g copies of C: g times the
** multiply-adds, most of them by zero, on shapes that wait on memory, run
** by tsmm_rows4 or the register tiles. The wasted multiply-adds cost
** less than a rows-as-lanes form (A's chunks packed, B stored
** transposed), which measured slower for every narrow shape (see
** BENCHMARKS.md). 1 when done, 0 when C' could not be had.
*/
static void tsmm_d(const tsm_job *j);

static int tsmm_grouped(const tsm_job *j) {
  long M = j->M, N = j->N, g = N <= 2 ? 4 / N : (N % 2 ? 8 : 4);
  long rows = (j->k1 - j->k0) / g, W = g * N;
  double *cg = calloc((size_t)(g * M * W), sizeof(double));
  tsm_job r = *j;
  if (!cg) return 0;
  for (long q = 0; q < g; ++q)
    for (long m = 0; m < M; ++m)
      for (long n = 0; n < N; ++n)
        cg[(q * M + m) * W + q * N + n] = j->X[m * N + n];
  r.A = j->A + j->k0 * M;
  r.out = j->out + j->k0 * N;
  r.X = cg;
  r.M = g * M;
  r.N = W;
  r.k0 = 0;
  r.k1 = rows;
  if (W == 4) tsmm_rows4(&r);
  else tsmm_d(&r);
  free(cg);
  tsmm_rows(j, j->k0 + rows * g, j->k1, 0);   /* the last k % g rows */
  return 1;
}

/*
** Real B = A C for rows [k0, k1). The tiles prefetch A's rows TSMM_AHEAD
** rows ahead: faster than none from 16 columns on, and 16 or 32 rows
** ahead were no better (see BENCHMARKS.md).
*/
static void tsmm_d(const tsm_job *j) {
  long M = j->M, N = j->N;
  double *ap = N >= NR ? malloc(sizeof(double) * (size_t)(MR * M)) : NULL;
  if (ap) {
    long k = j->k0;
    for (; k + MR <= j->k1; k += MR) {
      if (k + MR + TSMM_AHEAD <= j->k1)   /* A's rows two groups on */
        prefetch_share(j->A + (k + TSMM_AHEAD) * M, MR * M, 0, 1, 0);
      tsmm_tiles(j, k, ap);
    }
    tsmm_rows(j, k, j->k1, 0);
    free(ap);
    return;
  }
  if (N == 4) {
    tsmm_rows4(j);
    return;
  }
  if (N < NR && tsmm_grouped(j)) return;
  for (long k = j->k0; k < j->k1; ++k) {
    const double *restrict a = j->A + k * M;
    double *restrict b = j->out + k * N;
    for (long n = 0; n < N; ++n) b[n] = 0.0;
    for (long m = 0; m < M; ++m) {
      double am = a[m];
      const double *restrict c = j->X + m * N;
      for (long n = 0; n < N; ++n) b[n] += am * c[n];
    }
  }
}

/*
** Complex B = A C as the real product of A's real view (K x 2M) and C's
** real form (2M x 2N: [[re, im], [-im, re]] per entry), by tsmm_d; B's
** interleaved rows are its real view. 1 when done, 0 when out of memory
** (the caller goes the general way).
*/
static int tsmm_z_real(const tsm_job *j) {
  long M = j->M, N = j->N, Nr = 2 * N;
  double *cr = malloc(sizeof(double) * (size_t)(2 * M * Nr));
  tsm_job r = *j;
  if (!cr) return 0;
  for (long m = 0; m < M; ++m)
    for (long n = 0; n < N; ++n) {
      double re = j->X[2 * (m * N + n)], im = j->X[2 * (m * N + n) + 1];
      cr[2 * m * Nr + 2 * n] = re;
      cr[2 * m * Nr + 2 * n + 1] = im;
      cr[(2 * m + 1) * Nr + 2 * n] = -im;
      cr[(2 * m + 1) * Nr + 2 * n + 1] = re;
    }
  r.M = 2 * M;
  r.N = Nr;
  r.X = cr;
  tsmm_d(&r);
  free(cr);
  return 1;
}

/* Complex B = A C for rows [k0, k1); interleaved storage throughout. */
static void tsmm_z(const tsm_job *j) {
  long M = j->M, N = j->N;
  if (2 * M <= REAL_FORM_MAX_M && tsmm_z_real(j)) return;
  for (long k = j->k0; k < j->k1; ++k) {
    const double *restrict a = j->A + 2 * k * M;
    double *restrict b = j->out + 2 * k * N;
    for (long n = 0; n < 2 * N; ++n) b[n] = 0.0;
    for (long m = 0; m < M; ++m) {
      double ar = a[2 * m], ai = a[2 * m + 1];
      const double *restrict c = j->X + 2 * m * N;
      for (long n = 0; n < N; ++n) {
        double cr = c[2 * n], ci = c[2 * n + 1];
        b[2 * n] += ar * cr - ai * ci;
        b[2 * n + 1] += ar * ci + ai * cr;
      }
    }
  }
}

/* Thread body: dispatches on op and type. */
static void *tsm_work(void *arg) {
  tsm_job *j = arg;
  long e = j->t == ODB_TSM_Z ? 2 : 1;
  if (j->op == ODB_TSM_TSMTTSM)
    j->st = tsmttsm_real(j, e * j->M, e * j->N);
  else
    (j->t == ODB_TSM_Z ? tsmm_z : tsmm_d)(j);
  return NULL;
}

/* See the header. */
int odb_tsm_cpu_threads(long K, int want) {
  long p = want > 0 ? want : sysconf(_SC_NPROCESSORS_ONLN);
  long most = K / MIN_ROWS_PER_THREAD;
  if (p > most) p = most;
  if (p > MAX_THREADS) p = MAX_THREADS;
  return p < 1 ? 1 : (int)p;
}

/* Shapes checked, pointers non-NULL; see the header. */
odb_status odb_tsm_cpu(odb_tsm_op op, odb_tsm_dtype t, long M, long N,
                       long K, const double *A, const double *X,
                       double *out, int nthreads) {
  tsm_job jobs[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  double *tiles = NULL;
  int p, started = 0, z = t == ODB_TSM_Z;
  size_t tile, all, na, nx, nout;   /* tile: the real view's sums */
  odb_status st = ODB_OK;

  ODB_TRY(odb_tsm_check_shape(M, N, K, 0));
  ODB_TRY(odb_tsm_sizes(op, t, M, N, K, &na, &nx, &nout));
  if (!A || !X || !out)
    return ODB_FAIL(ODB_ERR_ARG, "%s: a matrix pointer is NULL",
                    odb_tsm_op_name(op));
  if ((unsigned)op > 1 || (unsigned)t > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: bad operation or dtype");
  p = odb_tsm_cpu_threads(K, nthreads);
  if (odb_size_mul3(&tile, (size_t)M, (size_t)N, z ? 4 : 1) ||
      odb_size_mul3(&all, tile, (size_t)p, sizeof(double)))
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: %d tiles of %ld x %ld do not fit a "
                    "size_t", odb_tsm_op_name(op), p, M, N);
  if (op == ODB_TSM_TSMTTSM) {
    tiles = malloc(all);
    if (!tiles) return ODB_FAIL(ODB_ERR_NOMEM, "tsmttsm: %d tiles of %zu "
                                "doubles", p, tile);
  }
  /* rows K * i / p onwards for thread i, computed as K / p * i + K % p *
     i / p so that K * i cannot overflow */
  for (int i = 0; i < p; ++i) {
    jobs[i] = (tsm_job){ op, t, M, N, K / p * i + K % p * i / p,
                         K / p * (i + 1) + K % p * (i + 1) / p, A, X,
                         tiles ? tiles + tile * (size_t)i : out, ODB_OK };
  }
  for (int i = 1; i < p; ++i) {
    if (pthread_create(&th[i], NULL, tsm_work, &jobs[i]) != 0) {
      st = ODB_FAIL(ODB_ERR_NOMEM, "tsm: cannot start thread %d of %d", i, p);
      break;
    }
    started = i;
  }
  if (st == ODB_OK) tsm_work(&jobs[0]);
  for (int i = 1; i <= started; ++i) pthread_join(th[i], NULL);
  for (int i = 0; st == ODB_OK && i < p; ++i)
    if (jobs[i].st != ODB_OK)
      st = ODB_FAIL(ODB_ERR_NOMEM, "tsmttsm: packing buffers of thread %d",
                    i);
  if (st == ODB_OK && tiles) {
    /* sum the tiles in thread order, then combine complex parts */
    for (int i = 1; i < p; ++i)
      for (size_t e = 0; e < tile; ++e) tiles[e] += tiles[tile * i + e];
    if (z) tsm_combine(tiles, M, N, out);
    else memcpy(out, tiles, sizeof(double) * tile);
  }
  free(tiles);
  return st;
}
