/* tsm_split3.cuh - the operands of Gauss's three real products (complex
   tensor-core kernels): P1 = Re X Re Y, P2 = Im X Im Y and
   P3 = (Re X + Im X)(Re Y + Im Y) give Re = P1 - P2 and
   Im = P3 - P1 - P2, so a lane loads each entry once and derives the
   three operands from it. */
// one 16-byte load of an entry (re, im): the operands of the three
// products P1 (re), P2 (im) and P3 (re + im)
__device__ __forceinline__ void split3(const double *p, double &r, double &i,
                                       double &s) {
  const double2 v = *(const double2 *)p;
  r = v.x;
  i = v.y;
  s = v.x + v.y;
}

