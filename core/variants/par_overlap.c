/* par_overlap.c - variants "par_PipeDb1m", "par_PipeDb1mt", "par_PipeDb1myl"
   and "par_PipeDb1mtyl" (thesis Table 9.2): the overlapped iterates per
   thread, one sweep per corrector step, neighbour locks instead of barriers. */
#include "par_spec.h"

/*
** Each thread keeps its own overlapped Ybar of (m-1)(B+d) + 2d + n/p
** columns (Table 9.2) over its range [a, b) with a halo of d on each side,
** and runs the corrector steps one sweep after the other (k-j-i-jj-l; the t
** variants k-j-i-(jj)-l-jj with an F buffer of B). Before the first block of
** row r+1 it waits for its left neighbour to publish the last d components
** of its Y^(r); before the first block that reads past b, for its right
** neighbour's first d. Requires n/p >= d; B < d is allowed. The yl variants
** keep eta in a per-thread y_local with a d halo on each side. The protocol
** and why it is race-free: par_spec.h.
*/

static const psp_spec SPEC_M = { "par_PipeDb1m", 0, 0, 0 };
static const psp_spec SPEC_MT = { "par_PipeDb1mt", 1, 0, 0 };
static const psp_spec SPEC_MYL = { "par_PipeDb1myl", 0, 0, 1 };
static const psp_spec SPEC_MTYL = { "par_PipeDb1mtyl", 1, 0, 1 };

static int m_applies(const odb_problem *p, const odb_method *m, char *why,
                     size_t nwhy) {
  return psp_applies(&SPEC_M, p, m, why, nwhy);
}
static int mt_applies(const odb_problem *p, const odb_method *m, char *why,
                      size_t nwhy) {
  return psp_applies(&SPEC_MT, p, m, why, nwhy);
}
static int myl_applies(const odb_problem *p, const odb_method *m, char *why,
                       size_t nwhy) {
  return psp_applies(&SPEC_MYL, p, m, why, nwhy);
}
static int mtyl_applies(const odb_problem *p, const odb_method *m, char *why,
                        size_t nwhy) {
  return psp_applies(&SPEC_MTYL, p, m, why, nwhy);
}

static odb_status m_init(odb_solver *s) { return psp_init(s, &SPEC_M); }
static odb_status mt_init(odb_solver *s) { return psp_init(s, &SPEC_MT); }
static odb_status myl_init(odb_solver *s) { return psp_init(s, &SPEC_MYL); }
static odb_status mtyl_init(odb_solver *s) { return psp_init(s, &SPEC_MTYL); }

/* Bytes per attempt: psp_traffic (every attempt evaluates all stages). */
static void traffic(const odb_solver *s, int stage0, double *r, double *w) {
  (void)stage0;
  psp_traffic(s, r, w);
}

const odb_variant odb_variant_par_PipeDb1m = {
  .name = "par_PipeDb1m",
  .doc = "parallel PipeDb1m (thesis Table 9.2), limited access distance: "
         "per-thread overlapped iterates (shift B+d, so B < d is allowed), "
         "k-j-i-jj-l, neighbour progress counters instead of barriers; "
         "needs n/p >= d; parameter block (default: a block iteration's "
         "working set fills half an L2)",
  .backend = "cpu",
  .applies = m_applies,
  .init = m_init,
  .fini = psp_fini,
  .attempt = psp_attempt,
  .traffic = traffic,
};

const odb_variant odb_variant_par_PipeDb1mt = {
  .name = "par_PipeDb1mt",
  .doc = "parallel PipeDb1mt (thesis Table 9.2): par_PipeDb1m with an F "
         "buffer of B and the target loop tiled (k-j-i-(jj)-l-jj)",
  .backend = "cpu",
  .applies = mt_applies,
  .init = mt_init,
  .fini = psp_fini,
  .attempt = psp_attempt,
  .traffic = traffic,
};

const odb_variant odb_variant_par_PipeDb1myl = {
  .name = "par_PipeDb1myl",
  .doc = "parallel PipeDb1myl (thesis Table 9.2): par_PipeDb1m with eta "
         "kept per thread (y_local, d halo from each neighbour)",
  .backend = "cpu",
  .applies = myl_applies,
  .init = myl_init,
  .fini = psp_fini,
  .attempt = psp_attempt,
  .traffic = traffic,
};

const odb_variant odb_variant_par_PipeDb1mtyl = {
  .name = "par_PipeDb1mtyl",
  .doc = "parallel PipeDb1mtyl (thesis Table 9.2): par_PipeDb1mt with eta "
         "kept per thread (y_local, d halo from each neighbour)",
  .backend = "cpu",
  .applies = mtyl_applies,
  .init = mtyl_init,
  .fini = psp_fini,
  .attempt = psp_attempt,
  .traffic = traffic,
};
