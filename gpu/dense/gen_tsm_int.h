/* gen_tsm_int.h - what the files of the tall & skinny kernel generator
   share: the geometry of the tensor-core kernels, the text of C's zeroing
   and the counters, and one entry per family of kernels. odb_gen_tsm.h is
   the generator's interface; this header is for gen_tsm_*.c only. */
#ifndef GEN_TSM_INT_H
#define GEN_TSM_INT_H

#include "odb_emit.h"
#include "odb_gen_tsm.h"

/* The generator's shorthand for odb_emitf (printf-style text into e). */
#define put(e, ...) odb_emitf((e), __VA_ARGS__)

static inline int cdiv(int a, int b) { return (a + b - 1) / b; }

/* 1 when M rows split into S bands of cdiv(M, S) rows (the last one may
   be shorter), none of them empty. */
static inline int bands_fit(int M, int S) {
  return S >= 1 && (S - 1) * cdiv(M, S) < M;
}

/*
** Derived sizes of an mma configuration (see odb_tsm_cfg). Shared memory
** holds `stages` chunks; a chunk is `chunk` rows of A (and of B for
** tsmttsm), each row padded to a stride of 4 or 12 modulo 16 doubles so
** that a warp's fragment loads (4 rows x 8 columns, or 8 rows x 4) hit
** distinct banks in each half warp.
*/
typedef struct mma_geom {
  int z, e;            /* complex; doubles per entry */
  int Mr, Nr;          /* widths of the real view */
  int mr, E;           /* rows of one mma tile (8, 16); accumulators per tile */
  int KS;              /* k of one mma: 4, 8 or 16 */
  int AR, BR;          /* A and B registers of one mma per lane */
  int G, W, BS;        /* warps per row group, warps, threads per block */
  int SA, SB;          /* row strides in a stage (doubles) */
  int stage;           /* doubles per stage */
  /* tsmttsm */
  int TMt, TNt;        /* warp tiles of C down and across */
  int cm, cn;          /* columns of A and B the warp tiles cover */
  int steps;           /* KS-row steps per chunk and row group */
  /* tsmm */
  int Kt;              /* KS-column steps over the Mr columns of A */
  int ck;              /* KS Kt */
  int SC;              /* row stride of C's copy in shared memory */
  int SO;              /* row stride of B's staged rows (ostage) */
  int tiles;           /* row tiles (wm mr rows) per chunk and row group */
  size_t smem;         /* bytes of dynamic shared memory */
} mma_geom;

/* Fills g; 0 when the options do not map onto the shape (a row group's
   share of a chunk is not whole, or a field is out of range). */
int tsmg_mma_geom_of(const odb_tsm_cfg *c, mma_geom *g);

/*
** The text shared by the FMA and the tensor-core tsmttsm kernels
** (gen_tsm_common.c): the first block to start zeroes C (tsmg_c_zero, of
** elems doubles), a thread waits for that before its first atomic on C
** (tsmg_c_ready), and the last block to finish resets the counters
** (tsmg_c_done).
*/
void tsmg_c_zero(odb_emit *b, int elems);
void tsmg_c_ready(odb_emit *b);
void tsmg_c_done(odb_emit *b);

/* The kernel of a checked configuration, after the file header. */
void tsmg_fma(odb_emit *b, const odb_tsm_cfg *c);   /* gen_tsm_fma.c */
void tsmg_mma(odb_emit *b, const odb_tsm_cfg *c);   /* gen_tsm_mma.c */

/* The fixed device code of the tensor-core kernels (device/<name>.cuh,
   embedded by the build as odb_cuh_<name>). */
extern const odb_cuh odb_cuh_tsm_cp_async;   /* cp8, cp_commit */
extern const odb_cuh odb_cuh_tsm_split3;     /* Gauss's operands */

#endif
