/* odb_method.c - the registry of explicit Runge-Kutta tableaus. */
#include "odb_method.h"

#include <stdio.h>
#include <string.h>

/*
** Every coefficient is written as the exact rational a/b, so the compiler
** rounds each one once to the nearest double. A is s x s, row-major; the
** zero upper triangle is spelled out so that rows read like the tableau.
** tests/unit/test_methods.c checks the row sums, all order conditions up to
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

#define ERK(nm, ttl, stages, ord, ord_emb, fs, pre, bh)                    \
  { .name = nm, .title = ttl, .kind = ODB_METHOD_ERK, .s = stages,         \
    .order = ord, .order_emb = ord_emb, .fsal = fs, .A = pre##_A,          \
    .b = pre##_b, .bhat = bh, .c = pre##_c }

static const odb_method methods[] = {
  ERK("heun_euler", "Heun-Euler 2(1)", 2, 2, 1, 0, heun_euler, heun_euler_bhat),
  ERK("bs3", "Bogacki-Shampine 3(2)", 4, 3, 2, 1, bs3, bs3_bhat),
  ERK("rk4", "Classic Runge-Kutta 4", 4, 4, 0, 0, rk4, NULL),
  ERK("dopri5", "Dormand-Prince 5(4)", 7, 5, 4, 1, dopri5, dopri5_bhat),
  ERK("verner65", "Verner 6(5)", 8, 6, 5, 0, verner65, verner65_bhat),
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
