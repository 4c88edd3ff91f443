/* rk_loop.cuh - what every generated RK kernel uses: the grid-stride
   loop ODB_LOOP(j) over the n components (ODB_N, ODB_T threads a block)
   and the square of an error component over its scale. */
#define ODB_LOOP(j) \
  for (odb_idx j = (odb_idx)blockIdx.x * ODB_T + (odb_idx)threadIdx.x; \
       j < ODB_N; j += (odb_idx)gridDim.x * ODB_T)
// (e / s)^2, s = atol + rtol max(|y|, |yn|): the reciprocal's estimate,
// refined to 2^-60 (two fused steps), times e; a division would add
// a check for the rare operands and its slow path (a call) to every row
static __device__ __forceinline__ double odb_sq_scaled(double e, double y, double yn,
    double atol, double rtol) {
  const double s = atol + rtol * fmax(fabs(y), fabs(yn));
  double x;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(x) : "d"(s));
  const double d = fma(-s, x, 1.0);
  const double r = e * fma(x, fma(d, d, d), x);
  return r * r;
}
