/* par_pp.c - variants "par_ppDb1m", "par_ppDb1mt", "par_ppDb1myl" and
   "par_ppDb1mtyl" (thesis Table 9.2): the corrector steps pipelined over
   the blocks of each thread's range, neighbour locks instead of barriers. */
#include "par_spec.h"

/*
** Each thread runs the pipeline of the sequential ppDb1m (j-k-i-jj-l; the t
** variants j-k-i-(jj)-l-jj with an F buffer) on its own overlapped Ybar:
** diagonal by diagonal, every row (corrector iterate, then the new
** solution) one block behind the row above. The first and the last m
** blocks of each row have the minimal size d (the initialization and
** finalization phases, thesis 9.2.2), the sweep between them the tuned
** block B; Bmax = max(B, d) is the thesis's b. To keep the threads from
** waiting for each other along the whole pipeline, row r of a thread is its
** range shifted right by (r-1) d (centred): a thread then needs only the
** first 2d components of its right neighbour's rows, which that neighbour
** computes first, and nothing from its left one. This needs n/p >= (m+2) d
** (the thesis's pre-selection rule). The yl variants keep eta per thread
** (its own part plus (m+1) d components from the left neighbour). The
** protocol and why it is race-free: par_spec.h.
*/

PSP_VARIANT(par_ppDb1m, 0, 1, 0,
            "parallel ppDb1m (thesis Table 9.2), limited access distance: the "
            "corrector steps pipelined over each thread's blocks (j-k-i-jj-l), "
            "per-thread overlapped iterates, blocks of d in the "
            "initialization/finalization phases, neighbour progress counters "
            "instead of barriers; needs n/p >= (m+2) d; parameter block (the "
            "sweep block; default: a pipeline step's working set fills half an "
            "L2)");

PSP_VARIANT(par_ppDb1mt, 1, 1, 0,
            "parallel ppDb1mt (thesis Table 9.2): par_ppDb1m with an F buffer "
            "and the target loop tiled (j-k-i-(jj)-l-jj)");

PSP_VARIANT(par_ppDb1myl, 0, 1, 1,
            "parallel ppDb1myl (thesis Table 9.2): par_ppDb1m with eta kept "
            "per thread (y_local)");

PSP_VARIANT(par_ppDb1mtyl, 1, 1, 1,
            "parallel ppDb1mtyl (thesis Table 9.2): par_ppDb1mt with eta kept "
            "per thread (y_local)");
