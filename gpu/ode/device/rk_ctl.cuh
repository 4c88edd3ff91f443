/* rk_ctl.cuh - the step controller of a devctl kernel: after the norm's
   sum of squares v of an attempt of h, the host's I controller
   (odb_solver.c) on the device. odb_ctl repeats odb_gen_ctl of
   odb_gen_rk.h (doubles, then 8-byte integers, then ints); the generator
   puts the values of ODB_GEN_CTL_END, _STEPS and _HMIN in their places.
   Needs ODB_NORM_N (the size of the system whose norm it is). */
struct odb_ctl {
  double t, h, h_next, t1, t_eps, hmin, safety, fac_min, fac_max, expo;
  double err, h_last;
  long long attempts, accepted, rejected, max_attempts;
  int cur, done, capped, pad;
};
// the factor of h after an attempt with norm err (cap: its largest)
static __device__ double odb_ctl_factor(const odb_ctl *c, double err,
                                        double cap) {
  if (!(err > 0.0)) return cap;
  return fmin(cap, fmax(c->fac_min, c->safety * pow(err, c->expo)));
}
// accept (t += h, the other buffer holds the state) or reject, the
// next h capped at t1 - t, and whether stepping is done
static __device__ void odb_ctl_after(odb_ctl *c, double v, double h) {
  const double err = sqrt(v / (double)ODB_NORM_N);
  c->err = err;
  c->h_last = h;
  c->attempts += 1;
  if (isfinite(err) && err <= 1.0) {
    c->t += h;
    c->cur ^= 1;
    c->accepted += 1;
    c->h_next = h * odb_ctl_factor(c, err, c->capped ? 1.0 : c->fac_max);
    c->capped = 0;
    if (c->t1 - c->t < c->t_eps) {
      c->t = c->t1;
      c->done = ODB_GEN_CTL_END;
      return;
    }
    if (c->attempts >= c->max_attempts) {
      c->done = ODB_GEN_CTL_STEPS;
      return;
    }
  } else {
    c->rejected += 1;
    c->h_next = h * (isfinite(err) ? odb_ctl_factor(c, err, 1.0)
                                   : c->fac_min);
    c->capped = 1;
  }
  c->h = fmin(c->h_next, c->t1 - c->t);
  if (c->h < c->hmin) c->done = ODB_GEN_CTL_HMIN;
}
