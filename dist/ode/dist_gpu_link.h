/* dist_gpu_link.h - the device side of mpi_gpu_stream2d's GPU ranks when
   each rank has a GPU of its own on one host (dist_gpu_link.cu): words
   the ranks' GPUs write into each other's memory, so that halos are
   exchanged and the error norm is summed across the GPUs with no host
   round trip. Built with MPI and CUDA; dist_gpu.c sets it up. */
#ifndef DIST_GPU_LINK_H
#define DIST_GPU_LINK_H

#include "odb_gen_ctl.h"
#include "odb_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
** A rank's mailbox, one block of device memory whose CUDA IPC handle
** every rank maps. The other ranks write norm (odb_gen_xnorm's slots) and
** the neighbours write ready and copied; the rest only this rank touches.
** Zero at start: every count begins at 0 on every rank, and every rank
** makes the same calls, so the counts agree.
*/
typedef struct dgl_box {
  odb_gen_xslot norm[2 * ODB_GEN_XNORM_MAX];   /* [parity][from rank] */
  unsigned long long ready[2];   /* [0] from the neighbour above, [1] below:
                                    the number of its last exchange whose
                                    rows are whole in its state */
  unsigned long long copied[2];  /* ... whose rows of ours it has copied */
  long long xseq;                /* odb_gen_xnorm.seq */
  unsigned long long xchg;       /* exchanges done */
  unsigned closed[ODB_GEN_XNORM_MAX];   /* from rank q: it has closed its
                                          mapping of this mailbox */
  unsigned fail;                 /* a neighbour did not answer in time */
  unsigned ticket;               /* elects the exchange's last block */
  odb_gen_xnorm xn;              /* what the step's kernels take (args.xn) */
} dgl_box;

/*
** One halo exchange on the device, launched on the legacy stream
** (dgl_xchg_launch) between attempts. The state is in y[0], or with ctl
** (the device's step controller) in y[ctl->cur], and nothing is done once
** the controller is done. This rank's state is whole (the stream's
** order), so the kernel tells the neighbours (ready_to), waits for
** theirs, copies their rows from their buffer of the same index (src,
** mapped) into its halo rows, tells them (copied_to) and waits until they
** have copied its rows, after which they may overwrite theirs.
*/
typedef struct dgl_xchg {
  const odb_gen_ctl *ctl;
  long long timeout_ns;
  double *y[2];                  /* this rank's buffers */
  const double *src[2][2];       /* [neighbour: 0 above, 1 below][buffer]:
                                    theirs, mapped (NULL: no neighbour) */
  long long dst[2], from[2], count[2];   /* doubles: where the rows go in
                                            y, where they start in src,
                                            how many */
  dgl_box *box;                  /* this rank's */
  unsigned long long *ready_to[2], *copied_to[2];   /* the neighbours'
                                                       words for this rank */
} dgl_xchg;

/* Queues the exchange kernel; ODB_ERR_BACKEND where the launch fails. */
odb_status dgl_xchg_launch(const dgl_xchg *a);

#ifdef __cplusplus
}
#endif

#endif
