/* rk_args.cuh - the one by-value parameter of every generated RK kernel.
   It repeats odb_gen_args of odb_gen_rk.h member for member (every
   member is 8 bytes, so the layouts agree); the generator puts the value
   of ODB_GEN_MAX_STAGES in its place. odb_ctl is defined only in kernels
   that run the step controller (rk_ctl.cuh), odb_xnorm only in those
   that sum the norm over ranks (rk_xnorm.cuh). */
struct odb_ctl;
struct odb_xnorm;
struct odb_args {
  const double *y;
  double *ynew;
  double *F[ODB_GEN_MAX_STAGES];
  double *Y[2];
  double *part;
  unsigned int *ticket;
  double *err2;
  double tl[ODB_GEN_MAX_STAGES];
  double h, atol, rtol;
  unsigned int *bar;
  unsigned int *fail;
  struct odb_ctl *ctl;
  long long par;
  double *note;
  long long seq;
  struct odb_xnorm *xn;
};
