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

PSP_VARIANT(par_PipeDb1m, 0, 0, 0,
            "parallel PipeDb1m (thesis Table 9.2), limited access distance: "
            "per-thread overlapped iterates (shift B+d, so B < d is allowed), "
            "k-j-i-jj-l, neighbour progress counters instead of barriers; "
            "needs n/p >= d; parameter block (default: a block iteration's "
            "working set fills half an L2)");

PSP_VARIANT(par_PipeDb1mt, 1, 0, 0,
            "parallel PipeDb1mt (thesis Table 9.2): par_PipeDb1m with an F "
            "buffer of B and the target loop tiled (k-j-i-(jj)-l-jj)");

PSP_VARIANT(par_PipeDb1myl, 0, 0, 1,
            "parallel PipeDb1myl (thesis Table 9.2): par_PipeDb1m with eta "
            "kept per thread (y_local, d halo from each neighbour)");

PSP_VARIANT(par_PipeDb1mtyl, 1, 0, 1,
            "parallel PipeDb1mtyl (thesis Table 9.2): par_PipeDb1mt with eta "
            "kept per thread (y_local, d halo from each neighbour)");
