/* pirk_pp.c - variants "ppDb1m" and "ppDb1mt": the corrector steps of a
   PIRK step pipelined over the blocks (thesis Ch. 7.2.3, Fig. 7.7). */
#include "pirk_overlap.h"

#include <math.h>

/*
** With a limited access distance, block J of Y^(k) needs only blocks J-1,
** J, J+1 of Y^(k-1), so the block loop can move outside the corrector loop.
** The rows r = 1..m (iterates Y^(r), row m also the estimate sum) and row
** m+1 (the new solution) form a grid over the blocks, computed diagonal by
** diagonal: diagonal D holds block D - (r-1) of row r, rows from top to
** bottom (Fig. 7.7: Y^(1) block 1, 2, Y^(2) block 1, Y^(1) block 3, ...).
** The first m diagonals fill the pipeline (initialization), then every
** diagonal is complete (sweep), and the last m shrink again
** (finalization); one loop with bounds checks covers all three phases.
**
** Why the order is legal on the overlapped Ybar (pirk_overlap.h): block J
** of row r (diagonal D) reads row r-1's blocks J-1, J, J+1, computed on
** diagonals D-2, D-1 and D (the last one earlier in this diagonal, since
** its row is above); it overwrites row r-1's block J-2, whose last reader,
** block J-1 of row r, ran on diagonal D-1. Every Ybar column is thus
** written in increasing row order and read before it is overwritten. A
** short last block changes nothing: positions are counted from block
** starts, and the short block is simply the last one of each row.
**
** The thesis requires at least m blocks (a full pipeline); the bounds
** checks would also cope with fewer, but the variants keep the thesis's
** precondition (checked in pirk_ov_init) so that the block-size model's
** working sets hold.
**
** sum_i b_i F_i^(m-1) of block J is produced by row m on diagonal J+m-1 and
** consumed by row m+1 on diagonal J+m, so two blocks of storage (a ring,
** slot J mod 2) replace the thesis's n-vector Delta eta^(m-1); eta_{k+1}
** goes to s->ynew block by block, and s->y is never written.
*/

/* applies(): PIRK correctors on problems with d < n (blocks checked at init). */
static int pp_applies(const odb_problem *p, const odb_method *m, char *why,
                      size_t nwhy) {
  return pirk_ov_applies("ppDb1m", 1, p, m, why, nwhy);
}

static int ppt_applies(const odb_problem *p, const odb_method *m, char *why,
                       size_t nwhy) {
  return pirk_ov_applies("ppDb1mt", 1, p, m, why, nwhy);
}

/* init(): Ybar and the estimate ring; untiled / tiled (F buffer of B). */
static odb_status pp_init(odb_solver *s) {
  return pirk_ov_init(s, "ppDb1m", 0, 1);
}

static odb_status ppt_init(odb_solver *s) {
  return pirk_ov_init(s, "ppDb1mt", 1, 1);
}

/*
** The diagonal schedule: rows r = 1..m+1 of diagonal D hold blocks
** D, D-1, ..., so once a block index falls below 0 the rest of the
** diagonal is empty. New-solution blocks come in ascending order, so the
** error norm sums in component order like the other variants.
*/
static odb_status pp_attempt(odb_solver *s, double h, double *err) {
  pirk_ov *ov = s->vdata;
  long nb = ov->nb, B = ov->B;
  int m = ov->m;
  double acc = 0.0;
  for (long D = 0; D < nb + m; ++D)
    for (int r = 1; r <= m + 1; ++r) {
      long J = D - (r - 1);
      if (J < 0) break;
      if (J >= nb) continue;
      if (r <= m)
        pirk_ov_corrector(s, ov, r, J, h, r == m ? ov->ring + (J & 1) * B
                                                 : NULL);
      else
        pirk_ov_finish(s, ov, J, h, ov->ring + (J & 1) * B, &acc);
    }
  *err = sqrt(acc / (double)ov->n);
  return ODB_OK;
}

/*
** Bytes per step: one pass over the system. eta is read once (the m+1
** blocks of it a pipeline step uses stay in cache), ynew written once;
** Ybar (s rows of (m-1) 2B + n) is written once and read only from cache
** (the 3m blocks of a pipeline step), but its dirty lines go back to memory.
*/
static void pp_traffic(const odb_solver *s, int stage0, double *r,
                       double *w) {
  const pirk_ov *ov = s->vdata;
  double v = (double)s->n * sizeof(double);
  (void)stage0;
  *r = v;
  *w = v + (double)ov->s * (double)ov->L * sizeof(double);
}

const odb_variant odb_variant_pirk_ppDb1m = {
  .name = "ppDb1m",
  .doc = "thesis variant ppDb1m (j-k-i-jj-l): PipeDb1m with the block loop "
         "outermost, the corrector steps pipelined along diagonals; parameter "
         "block (B >= d, at least m blocks; default: a pipeline step's "
         "working set fills half an L2); PIRK, limited access distance only",
  .backend = "cpu",
  .applies = pp_applies,
  .init = pp_init,
  .fini = pirk_ov_fini,
  .attempt = pp_attempt,
  .traffic = pp_traffic,
};

const odb_variant odb_variant_pirk_ppDb1mt = {
  .name = "ppDb1mt",
  .doc = "thesis variant ppDb1mt (j-k-i-(jj)-l-jj): ppDb1m with f over a "
         "block into a buffer of B and the target rows updated block-wise; "
         "parameter block (B >= d, at least m blocks; default: a pipeline "
         "step's working set fills half an L2); PIRK, limited access distance "
         "only",
  .backend = "cpu",
  .applies = ppt_applies,
  .init = ppt_init,
  .fini = pirk_ov_fini,
  .attempt = pp_attempt,
  .traffic = pp_traffic,
};
