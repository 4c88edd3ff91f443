/* rk_xnorm.cuh - the error norm's sum of squares summed over the GPU
   ranks of one host, on the device (kernels built with xnorm): the
   protocol of odb_gen_xnorm in odb_gen_rk.h. odb_xslot and odb_xnorm
   repeat odb_gen_xslot and odb_gen_xnorm member for member; the generator
   puts the values of ODB_GEN_XNORM_MAX and ODB_GEN_CTL_HMIN in their
   places. Called by the one thread that finishes a rank's sum
   (rk_reduce.cuh), after the controller (rk_ctl.cuh). */
struct odb_xslot {
  double v;
  long long seq;
};
struct odb_xnorm {
  odb_xslot *box[ODB_GEN_XNORM_MAX];
  odb_xslot *mine;
  long long *seq;
  unsigned int *fail;
  long long timeout_ns;
  long long rank, size;
};
static __device__ __forceinline__ unsigned long long odb_xnorm_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// The sum of x[0..n) rounded once (correctly, half to even): Shewchuk's
// non-overlapping partials, then their sum from the top with the
// correction of the last rounding; the algorithm of dist_norm
// (dist/ode/dist_halo.c) for the host, here for at most
// ODB_GEN_XNORM_MAX finite summands.
static __device__ double odb_xnorm_fsum(const double *x, int n) {
  double p[ODB_GEN_XNORM_MAX];
  int np = 0;
  for (int k = 0; k < n; ++k) {
    double v = x[k];
    int i = 0;
    for (int j = 0; j < np; ++j) {
      double y = p[j];
      if (fabs(v) < fabs(y)) { const double t = v; v = y; y = t; }
      const double hi = __dadd_rn(v, y);
      const double lo = __dsub_rn(y, __dsub_rn(hi, v));
      if (lo != 0.0) p[i++] = lo;
      v = hi;
    }
    p[i++] = v;
    np = i;
  }
  if (np == 0) return 0.0;
  double hi = p[--np], lo = 0.0;
  while (np > 0) {
    const double v = hi, y = p[--np];
    hi = __dadd_rn(v, y);
    lo = __dsub_rn(y, __dsub_rn(hi, v));
    if (lo != 0.0) break;
  }
  if (np > 0 && ((lo < 0.0 && p[np - 1] < 0.0) ||
                 (lo > 0.0 && p[np - 1] > 0.0))) {
    const double y = lo * 2.0, v = __dadd_rn(hi, y);
    if (y == __dsub_rn(v, hi)) hi = v;
  }
  return hi;
}
// This rank's sum v to every other rank, theirs back, and the exact sum
// of all in rank order. Where a rank did not answer in time (now or
// before): NaN, and the controller c done, so that the launches after
// return at once.
static __device__ double odb_xnorm_sum(const odb_xnorm *x, double v,
                                       odb_ctl *c) {
  if (!x) return v;
  if (*(volatile unsigned int *)x->fail) {
    c->done = ODB_GEN_CTL_HMIN;
    return __longlong_as_double(0x7ff8000000000000LL);
  }
  const long long seq = *x->seq + 1;
  const int par = (int)(seq & 1), me = (int)x->rank, R = (int)x->size;
  double all[ODB_GEN_XNORM_MAX];
  int finite = 1;
  *x->seq = seq;
  for (int q = 0; q < R; ++q)
    if (q != me) x->box[q][par * ODB_GEN_XNORM_MAX + me].v = v;
  __threadfence_system();
  for (int q = 0; q < R; ++q)
    if (q != me)
      *(volatile long long *)&x->box[q][par * ODB_GEN_XNORM_MAX + me].seq =
          seq;
  const unsigned long long t0 = odb_xnorm_now();
  for (int q = 0; q < R; ++q) {
    if (q == me) {
      all[q] = v;
    } else {
      const odb_xslot *s = x->mine + par * ODB_GEN_XNORM_MAX + q;
      while (*(const volatile long long *)&s->seq != seq)
        if ((long long)(odb_xnorm_now() - t0) > x->timeout_ns) {
          atomicOr(x->fail, 1u);
          c->done = ODB_GEN_CTL_HMIN;
          return __longlong_as_double(0x7ff8000000000000LL);
        }
      __threadfence_system();
      all[q] = *(const volatile double *)&s->v;
    }
    if (!isfinite(all[q])) finite = 0;
  }
  if (!finite) {   // NaN or inf, as a running sum would give
    double s = 0.0;
    for (int q = 0; q < R; ++q) s += all[q];
    return s;
  }
  return odb_xnorm_fsum(all, R);
}
