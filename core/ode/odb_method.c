/* odb_method.c - the registry of Runge-Kutta tableaus: explicit RK methods
   and the implicit correctors of PIRK methods. */
#include "odb_method.h"

#include <stdio.h>
#include <string.h>

/*
** Every explicit RK coefficient is written as the exact rational a/b, so
** the compiler rounds each one once to the nearest double. A is s x s,
** row-major; the zero upper triangle is spelled out so that rows read like
** the tableau.
** tests/core/ode/test_methods.c checks the row sums, all order conditions up to
** the claimed orders and that the next order fails, for every entry here.
*/

/* {====== Heun-Euler 2(1): explicit trapezoidal rule with Euler embedded. */
static const double heun_euler_c[2] = {0.0, 1.0};
static const double heun_euler_A[2 * 2] = {
  0.0,     0.0,
  1.0 / 1, 0.0,
};
static const double heun_euler_b[2] = {1.0 / 2, 1.0 / 2};
static const double heun_euler_bhat[2] = {1.0 / 1, 0.0};
/* }====== */

/*
** {====== Bogacki-Shampine 3(2): P. Bogacki, L. F. Shampine, "A 3(2) pair of
** Runge-Kutta formulas", Appl. Math. Lett. 2(4), 1989, 321-325. FSAL.
*/
static const double bs3_c[4] = {0.0, 1.0 / 2, 3.0 / 4, 1.0};
static const double bs3_A[4 * 4] = {
  0.0,     0.0,     0.0,     0.0,
  1.0 / 2, 0.0,     0.0,     0.0,
  0.0,     3.0 / 4, 0.0,     0.0,
  2.0 / 9, 1.0 / 3, 4.0 / 9, 0.0,
};
static const double bs3_b[4] = {2.0 / 9, 1.0 / 3, 4.0 / 9, 0.0};
static const double bs3_bhat[4] = {7.0 / 24, 1.0 / 4, 1.0 / 3, 1.0 / 8};
/* }====== */

/*
** {====== Classic Runge-Kutta of order 4 (Kutta 1901); see E. Hairer,
** S. P. Norsett, G. Wanner, "Solving ODEs I", Table II.1.2. No error estimate.
*/
static const double rk4_c[4] = {0.0, 1.0 / 2, 1.0 / 2, 1.0};
static const double rk4_A[4 * 4] = {
  0.0,     0.0,     0.0,     0.0,
  1.0 / 2, 0.0,     0.0,     0.0,
  0.0,     1.0 / 2, 0.0,     0.0,
  0.0,     0.0,     1.0 / 1, 0.0,
};
static const double rk4_b[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
/* }====== */

/*
** {====== Dormand-Prince 5(4): J. R. Dormand, P. J. Prince, "A family of
** embedded Runge-Kutta formulae", J. Comput. Appl. Math. 6(1), 1980, 19-26;
** Hairer-Norsett-Wanner Table II.5.2 (DOPRI5). FSAL, b propagates.
*/
static const double dopri5_c[7] = {
  0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0,
};
static const double dopri5_A[7 * 7] = {
  0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
  1.0 / 5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
  3.0 / 40, 9.0 / 40, 0.0, 0.0, 0.0, 0.0, 0.0,
  44.0 / 45, -56.0 / 15, 32.0 / 9, 0.0, 0.0, 0.0, 0.0,
  19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729,
    0.0, 0.0, 0.0,
  9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656,
    0.0, 0.0,
  35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84,
    0.0,
};
static const double dopri5_b[7] = {
  35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0.0,
};
static const double dopri5_bhat[7] = {
  5179.0 / 57600, 0.0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200,
  187.0 / 2100, 1.0 / 40,
};
/* }====== */

/*
** {====== Verner 6(5) with eight stages: J. H. Verner, "Explicit Runge-Kutta
** methods with estimates of the local truncation error", SIAM J. Numer.
** Anal. 15(4), 1978, 772-790; the pair of IMSL's DVERK (T. E. Hull,
** W. H. Enright, K. R. Jackson, 1976). b (order 6) propagates; bhat
** (order 5) uses only the first six stages. c_6 = c_8 = 1 but A's last row
** differs from b, so it is not FSAL.
*/
static const double verner65_c[8] = {
  0.0, 1.0 / 6, 4.0 / 15, 2.0 / 3, 5.0 / 6, 1.0, 1.0 / 15, 1.0,
};
static const double verner65_A[8 * 8] = {
  0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
  1.0 / 6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
  4.0 / 75, 16.0 / 75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
  5.0 / 6, -8.0 / 3, 5.0 / 2, 0.0, 0.0, 0.0, 0.0, 0.0,
  -165.0 / 64, 55.0 / 6, -425.0 / 64, 85.0 / 96, 0.0, 0.0, 0.0, 0.0,
  12.0 / 5, -8.0 / 1, 4015.0 / 612, -11.0 / 36, 88.0 / 255, 0.0, 0.0, 0.0,
  -8263.0 / 15000, 124.0 / 75, -643.0 / 680, -81.0 / 250, 2484.0 / 10625,
    0.0, 0.0, 0.0,
  3501.0 / 1720, -300.0 / 43, 297275.0 / 52632, -319.0 / 2322,
    24068.0 / 84065, 0.0, 3850.0 / 26703, 0.0,
};
static const double verner65_b[8] = {
  3.0 / 40, 0.0, 875.0 / 2244, 23.0 / 72, 264.0 / 1955, 0.0, 125.0 / 11592,
  43.0 / 616,
};
static const double verner65_bhat[8] = {
  13.0 / 160, 0.0, 2375.0 / 5984, 5.0 / 16, 12.0 / 85, 3.0 / 44, 0.0, 0.0,
};
/* }====== */

/*
** PIRK correctors (kind ODB_METHOD_PIRK): implicit RK tableaus with A full,
** iterated m = p - 1 times by default (Kalinnik's thesis, (3.26)-(3.29)).
** Coefficients with square roots cannot be written as a/b, and a static
** initializer cannot call sqrt, so they are decimal literals: the shortest
** decimal that reads back as the double nearest to the exact value (found
** offline with sympy/mpmath at 60 digits; the exact expression is in the
** comment beside each tableau). Rational entries stay a/b.
** tests/core/ode/test_methods.c checks the order conditions up to p (and that
** p + 1 fails) and the simplifying assumptions B(p), C(q), D(r).
*/

/*
** {====== Radau IA(5): s = 3, p = 5, C(2), D(3); r = sqrt(6):
** c = (0, (6-r)/10, (6+r)/10), b = (1/9, (16+r)/36, (16-r)/36),
** A = [1/9, (-1-r)/18, (-1+r)/18; 1/9, (88+7r)/360, (88-43r)/360;
**      1/9, (88+43r)/360, (88-7r)/360] (HNW II, Sect. IV.5). The thesis's
** corrector for Ch. 7-9 (with m = 4).
*/
static const double radau1a5_c[3] = {
  0.0, 0.3550510257216822, 0.8449489742783178,
};
static const double radau1a5_A[3 * 3] = {
  1.0 / 9, -0.1916383190435099, 0.08052720793239879,
  1.0 / 9, 0.2920734116652285, -0.04813349705465739,
  1.0 / 9, 0.5370223859435462, 0.1968154772236604,
};
static const double radau1a5_b[3] = {
  1.0 / 9, 0.5124858261884216, 0.37640306270046725,
};
/* }====== */

/*
** {====== Radau IIA(5): s = 3, p = 5, C(3), D(2); r = sqrt(6):
** c = ((4-r)/10, (4+r)/10, 1),
** A = [(88-7r)/360, (296-169r)/1800, (-2+3r)/225;
**      (296+169r)/1800, (88+7r)/360, (-2-3r)/225;
**      (16-r)/36, (16+r)/36, 1/9], b = A's last row (HNW II, Sect. IV.5).
*/
static const double radau2a5_c[3] = {
  0.1550510257216822, 0.6449489742783178, 1.0,
};
static const double radau2a5_A[3 * 3] = {
  0.1968154772236604, -0.06553542585019839, 0.02377097434822015,
  0.3944243147390873, 0.2920734116652285, -0.04154875212599793,
  0.37640306270046725, 0.5124858261884216, 1.0 / 9,
};
static const double radau2a5_b[3] = {
  0.37640306270046725, 0.5124858261884216, 1.0 / 9,
};
/* }====== */

/*
** {====== Lobatto IIIC(8): s = 5, p = 8, C(4), D(4); q = sqrt(21):
** c = (0, (7-q)/14, 1/2, (7+q)/14, 1), b = (1/20, 49/180, 16/45, 49/180,
** 1/20), a_i1 = 1/20 for every row,
** A = [1/20, -7/60, 2/15, -7/60, 1/20;
**      1/20, 29/180, (47-15q)/315, (203-30q)/1260, -3/140;
**      1/20, (329+105q)/2880, 73/360, (329-105q)/2880, 3/160;
**      1/20, (203+30q)/1260, (47+15q)/315, 29/180, -3/140;
**      1/20, 49/180, 16/45, 49/180, 1/20]
** (as in the seasite-project Offsite tableau the thesis group used; m = 7).
*/
static const double lobatto3c8_c[5] = {
  0.0, 0.17267316464601143, 1.0 / 2, 0.8273268353539885, 1.0,
};
static const double lobatto3c8_A[5 * 5] = {
  1.0 / 20, -7.0 / 60, 2.0 / 15, -7.0 / 60, 1.0 / 20,
  1.0 / 20, 29.0 / 180, -0.06901154102964317, 0.05200216599311492,
    -3.0 / 140,
  1.0 / 20, 0.2813091833230428, 73.0 / 360, -0.052836961100820555,
    3.0 / 160,
  1.0 / 20, 0.2702200562291073, 0.3674242394423416, 29.0 / 180, -3.0 / 140,
  1.0 / 20, 49.0 / 180, 16.0 / 45, 49.0 / 180, 1.0 / 20,
};
static const double lobatto3c8_b[5] = {
  1.0 / 20, 49.0 / 180, 16.0 / 45, 49.0 / 180, 1.0 / 20,
};
/* }====== */

/*
** {====== Gauss-Legendre(4): s = 2, p = 4, C(2), D(2); r = sqrt(3):
** c = (1/2 - r/6, 1/2 + r/6), A = [1/4, 1/4 - r/6; 1/4 + r/6, 1/4],
** b = (1/2, 1/2) (HNW II, Sect. IV.5).
*/
static const double gauss4_c[2] = {0.2113248654051871, 0.7886751345948129};
static const double gauss4_A[2 * 2] = {
  1.0 / 4, -0.03867513459481288,
  0.5386751345948129, 1.0 / 4,
};
static const double gauss4_b[2] = {1.0 / 2, 1.0 / 2};
/* }====== */

/*
** {====== Gauss-Legendre(6): s = 3, p = 6, C(3), D(3); r = sqrt(15):
** c = (1/2 - r/10, 1/2, 1/2 + r/10), b = (5/18, 4/9, 5/18),
** A = [5/36, 2/9 - r/15, 5/36 - r/30; 5/36 + r/24, 2/9, 5/36 - r/24;
**      5/36 + r/30, 2/9 + r/15, 5/36] (HNW II, Sect. IV.5).
*/
static const double gauss6_c[3] = {
  0.11270166537925831, 1.0 / 2, 0.8872983346207417,
};
static const double gauss6_A[3 * 3] = {
  5.0 / 36, -0.0359766675249389, 0.009789444015308325,
  0.30026319498086457, 2.0 / 9, -0.022485417203086815,
  0.26798833376246944, 0.48042111196938336, 5.0 / 36,
};
static const double gauss6_b[3] = {5.0 / 18, 4.0 / 9, 5.0 / 18};
/* }====== */

#define ERK(nm, ttl, stages, ord, ord_emb, fs, pre, bh)                    \
  { .name = nm, .title = ttl, .kind = ODB_METHOD_ERK, .s = stages,         \
    .order = ord, .order_emb = ord_emb, .fsal = fs, .A = pre##_A,          \
    .b = pre##_b, .bhat = bh, .c = pre##_c }

/* A PIRK corrector of order ord: m = ord - 1 corrector steps by default. */
#define PIRK(nm, ttl, stages, ord, pre)                                     \
  { .name = nm, .title = ttl, .kind = ODB_METHOD_PIRK, .s = stages,        \
    .order = ord, .order_emb = 0, .fsal = 0, .A = pre##_A, .b = pre##_b,   \
    .bhat = NULL, .c = pre##_c, .m_default = ord - 1 }

static const odb_method methods[] = {
  ERK("heun_euler", "Heun-Euler 2(1)", 2, 2, 1, 0, heun_euler, heun_euler_bhat),
  ERK("bs3", "Bogacki-Shampine 3(2)", 4, 3, 2, 1, bs3, bs3_bhat),
  ERK("rk4", "Classic Runge-Kutta 4", 4, 4, 0, 0, rk4, NULL),
  ERK("dopri5", "Dormand-Prince 5(4)", 7, 5, 4, 1, dopri5, dopri5_bhat),
  ERK("verner65", "Verner 6(5)", 8, 6, 5, 0, verner65, verner65_bhat),
  PIRK("radau1a5", "Radau IA(5)", 3, 5, radau1a5),
  PIRK("radau2a5", "Radau IIA(5)", 3, 5, radau2a5),
  PIRK("lobatto3c8", "Lobatto IIIC(8)", 5, 8, lobatto3c8),
  PIRK("gauss4", "Gauss-Legendre(4)", 2, 4, gauss4),
  PIRK("gauss6", "Gauss-Legendre(6)", 3, 6, gauss6),
};

#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

int odb_method_count(void) { return NMETHODS; }

/* NULL when i is out of range. */
const odb_method *odb_method_at(int i) {
  return (i >= 0 && i < NMETHODS) ? &methods[i] : NULL;
}

/* Exact, case-sensitive match; NULL name or unknown name gives NULL. */
const odb_method *odb_method_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < NMETHODS; ++i)
    if (strcmp(methods[i].name, name) == 0) return &methods[i];
  return NULL;
}

/*
** Writes "a, b, c" into buf (truncated to size). The list is built from the
** table so that the message never goes stale when a method is added.
*/
static void list_names(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < NMETHODS && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     methods[i].name);
    if (n < 0) break;
    used += (size_t)n;
  }
}

/* *out is set to NULL on failure, so a caller never keeps a stale method. */
odb_status odb_method_lookup(const char *name, const odb_method **out) {
  char valid[256];
  if (!out) return ODB_FAIL(ODB_ERR_ARG, "method lookup: out must not be NULL");
  *out = odb_method_find(name);
  if (*out) return ODB_OK;
  list_names(valid, sizeof valid);
  if (!name)
    return ODB_FAIL(ODB_ERR_ARG, "method name missing (valid: %s)", valid);
  return ODB_FAIL(ODB_ERR_NAME, "unknown method '%s' (valid: %s)", name, valid);
}

/* Assumes m is a registered method; a method without bhat uses its order. */
int odb_method_err_order(const odb_method *m) {
  if (!m->bhat) return m->order;
  return m->order_emb < m->order ? m->order_emb : m->order;
}
