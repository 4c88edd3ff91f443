/* odb_gen_ctl.h - the structs that the generated RK kernels share with
   the host beyond their argument (odb_gen_rk.h): the step controller on
   the device and the norm summed over GPU ranks. Plain C types only, so
   that CUDA sources above gpu/ (dist/ode/dist_gpu_link.cu) can take them
   without the rest of odebench.h. */
#ifndef ODB_GEN_CTL_H
#define ODB_GEN_CTL_H

/*
** The step controller of kernels built with devctl: each launch takes h,
** t and which of the two buffers holds the state (against its args.par)
** from it, and the block that finishes the error norm in the step's last
** launch decides accept or reject and the next h there (the host's I
** controller, the same formulas), so that a stream of launches integrates
** adaptively with no host round trip. The generated source declares the
** same struct (doubles, then 8-byte integers, then ints).
*/
typedef struct odb_gen_ctl {
  double t, h;           /* time of the current state; next attempt's h
                            (already capped at t1 - t) */
  double h_next;         /* the controller's proposal (h before the cap) */
  double t1, t_eps;      /* end of the integration; a rest below t_eps
                            merges into the step that reaches it */
  double hmin;           /* below it: done with ODB_GEN_CTL_HMIN */
  double safety, fac_min, fac_max, expo;   /* expo: -1 / (q + 1) */
  double err, h_last;    /* the last attempt's norm and h */
  long long attempts, accepted, rejected;  /* since the host set them */
  long long max_attempts;   /* attempts allowed; then ODB_GEN_CTL_STEPS */
  int cur;               /* which of the batch's two buffers holds the state
                            (0: the first launch's y) */
  int done;              /* ODB_GEN_CTL_*: not 0 makes launches return */
  int capped;            /* an attempt of this step was rejected: the
                            factor stays at most 1 until one is accepted */
  int pad;
} odb_gen_ctl;

enum {
  ODB_GEN_CTL_RUN = 0,   /* stepping on */
  ODB_GEN_CTL_END,       /* t1 reached */
  ODB_GEN_CTL_HMIN,      /* the next h fell below hmin */
  ODB_GEN_CTL_STEPS      /* max_attempts attempts made */
};

/*
** The error norm of a step summed over the GPU ranks of one host on the
** device (kernels built with xnorm), so that the step controller on the
** device (devctl) decides on the whole system's norm with no host round
** trip. Every rank keeps a mailbox of slots, one per rank and parity of
** the attempt's number; the block that finishes a rank's own sum of
** squares writes it into its slot of every other rank's mailbox (mapped
** by CUDA IPC), then the number, then waits for theirs and adds the
** ranks' sums exactly, rounding once (as dist_norm on the host does), in
** the same order on every rank: every rank takes the same decision. Two
** parities: a rank writes attempt k + 2 into a slot only after every
** rank has sent attempt k + 1, which each sends after reading attempt k.
** A rank that does not answer within timeout_ns makes the sum NaN and
** sets *fail (the attempt is then rejected, and the caller reports it).
** The generated source declares the same structs.
*/
#define ODB_GEN_XNORM_MAX 8
typedef struct odb_gen_xslot {
  double v;              /* a rank's sum of squares */
  long long seq;         /* the attempt's number, written after v */
} odb_gen_xslot;

typedef struct odb_gen_xnorm {
  odb_gen_xslot *box[ODB_GEN_XNORM_MAX];   /* rank q's mailbox, mapped:
                                              [parity][from rank] */
  odb_gen_xslot *mine;   /* this rank's mailbox (box[rank]) */
  long long *seq;        /* attempts summed so far (device memory) */
  unsigned *fail;        /* set when a rank did not answer in time */
  long long timeout_ns;
  long long rank, size;
} odb_gen_xnorm;

#endif
