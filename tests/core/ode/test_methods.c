/* test_methods.c - every registered tableau meets its claimed order exactly
   (explicit RK methods and PIRK correctors). */
#include "odb_method.h"
#include "tap.h"

#include <math.h>
#include <string.h>

#define MAX_ORDER 9     /* highest order whose trees are built (p + 1 of
                           Lobatto IIIC(8)) */
#define MAX_TREES 512   /* 486 trees of order <= 9 */
#define MAX_KIDS 8      /* the bushy tree of order 9 */
#define MAX_STAGES 16

#define TOL_ROW 1e-15   /* c_i = sum_j a_ij */
#define TOL_COND 1e-13  /* b . Phi(t) = 1 / gamma(t) */
#define TOL_FAIL 1e-10  /* an order+1 residual must exceed this */

/*
** A rooted tree is a root with a multiset of subtrees. Kids hold indices of
** earlier trees, in nondecreasing order, so each multiset appears once and
** every kid is built before its parent.
*/
typedef struct tree {
  int order, nkids, kids[MAX_KIDS];
  double gamma;  /* density: order * product of the kids' densities */
  double sigma;  /* symmetry: product of kids' sigma and multiplicity! */
  char label[40];
} tree;

static tree trees[MAX_TREES];
static int ntrees;
static int first[MAX_ORDER + 2];  /* trees of order n: [first[n], first[n+1]) */

/* Fills density, symmetry and the bracket label ("t", "[t t]") of tree t. */
static void finish_tree(tree *t) {
  char label[sizeof t->label];
  int run = 1, len = snprintf(label, sizeof label, "%s", t->nkids ? "[" : "t");
  t->gamma = t->order;
  t->sigma = 1.0;
  for (int k = 0; k < t->nkids; ++k) {
    const tree *u = &trees[t->kids[k]];
    t->gamma *= u->gamma;
    t->sigma *= u->sigma;
    run = (k > 0 && t->kids[k] == t->kids[k - 1]) ? run + 1 : 1;
    t->sigma *= run;  /* builds multiplicity! one factor at a time */
    len += snprintf(label + len, sizeof label - (size_t)len, "%s%s",
                    k ? " " : "", u->label);
  }
  if (t->nkids) snprintf(label + len, sizeof label - (size_t)len, "]");
  memcpy(t->label, label, sizeof label);
}

/*
** Adds every tree of order n whose kids so far are kids[0..nk) and whose
** remaining kids have ids >= min_id (below limit = first[n]) and orders
** summing to rem.
*/
static void grow(int n, int rem, int min_id, int limit, int *kids, int nk) {
  if (rem == 0) {
    tree *t = &trees[ntrees++];
    t->order = n;
    t->nkids = nk;
    memcpy(t->kids, kids, (size_t)nk * sizeof *kids);
    finish_tree(t);
    return;
  }
  for (int id = min_id; id < limit; ++id) {
    if (trees[id].order > rem) break;  /* ids are sorted by order */
    kids[nk] = id;
    grow(n, rem - trees[id].order, id, limit, kids, nk + 1);
  }
}

/* Builds all rooted trees of order 1..MAX_ORDER, grouped by order. */
static void build_trees(void) {
  int kids[MAX_KIDS];
  ntrees = 0;
  for (int n = 1; n <= MAX_ORDER; ++n) {
    first[n] = ntrees;
    grow(n, n - 1, 0, ntrees, kids, 0);
  }
  first[MAX_ORDER + 1] = ntrees;
}

/*
** Checks the tree set itself: counts per order (OEIS A000081) and
** sum over |t| = n of n!/(gamma sigma) = (n-1)!, the number of monotone
** labellings, which ties gamma and sigma together independently.
*/
static void test_trees(void) {
  static const int expect[MAX_ORDER + 1] = {0, 1, 1, 2, 4, 9, 20, 48, 115,
                                            286};
  double fact = 1.0;  /* (n-1)! */
  build_trees();
  for (int n = 1; n <= MAX_ORDER; ++n) {
    double sum = 0.0, nfact = fact * n;
    int count = first[n + 1] - first[n];
    for (int i = first[n]; i < first[n + 1]; ++i)
      sum += nfact / (trees[i].gamma * trees[i].sigma);
    tap_ok(count == expect[n], "%d rooted trees of order %d (expected %d)",
           count, n, expect[n]);
    tap_ok(fabs(sum - fact) < 1e-9 * fact,
           "order %d: sum n!/(gamma sigma) = %.0f = (n-1)!", n, sum);
    fact = nfact;
  }
}

/*
** phi[t][i] = Phi_i(t), the stage weight of tree t: 1 for the single node,
** otherwise the product over kids u of (A Phi(u))_i.
*/
static void stage_weights(const odb_method *m, double phi[][MAX_STAGES]) {
  int s = m->s;
  for (int t = 0; t < ntrees; ++t)
    for (int i = 0; i < s; ++i) {
      double v = 1.0;
      for (int k = 0; k < trees[t].nkids; ++k) {
        double ap = 0.0;
        for (int j = 0; j < s; ++j) ap += m->A[i * s + j] * phi[trees[t].kids[k]][j];
        v *= ap;
      }
      phi[t][i] = v;
    }
}

/* Residual of the order condition of tree t for weights w: w.Phi(t) - 1/gamma. */
static double residual(const double *w, int s, const double phi[][MAX_STAGES],
                       int t) {
  double sum = 0.0;
  for (int i = 0; i < s; ++i) sum += w[i] * phi[t][i];
  return sum - 1.0 / trees[t].gamma;
}

/*
** One test point per order 1..p: all conditions hold to TOL_COND (each
** failing tree is printed), then one that order p+1 does not all hold.
*/
static void test_order(const odb_method *m, const char *wname, const double *w,
                       int p, const double phi[][MAX_STAGES]) {
  for (int n = 1; n <= p && n <= MAX_ORDER; ++n) {
    double worst = 0.0;
    int bad = 0;
    for (int t = first[n]; t < first[n + 1]; ++t) {
      double r = residual(w, m->s, phi, t);
      if (fabs(r) > worst) worst = fabs(r);
      if (!(fabs(r) <= TOL_COND)) {
        ++bad;
        tap_diag("%s %s: tree #%d %s (order %d, gamma %g): residual %.3e",
                 m->name, wname, t, trees[t].label, n, trees[t].gamma, r);
      }
    }
    tap_ok(bad == 0, "%s %s: %d conditions of order %d hold (max |res| %.1e)",
           m->name, wname, first[n + 1] - first[n], n, worst);
  }
  if (p + 1 <= MAX_ORDER) {
    double worst = 0.0;
    for (int t = first[p + 1]; t < first[p + 2]; ++t) {
      double r = fabs(residual(w, m->s, phi, t));
      if (r > worst) worst = r;
    }
    tap_ok(worst > TOL_FAIL, "%s %s: order is exactly %d (max |res| at order %d: %.3e)",
           m->name, wname, p, p + 1, worst);
  } else {
    tap_ok(0, "%s %s: order %d needs trees beyond MAX_ORDER %d", m->name,
           wname, p + 1, MAX_ORDER);
  }
}

/*
** c_i = sum_j a_ij for every method; an explicit method has A strictly
** lower triangular, a PIRK corrector is implicit (some a_ij != 0, j >= i).
*/
static void test_shape(const odb_method *m) {
  int s = m->s, upper = 0, rows = 0;
  for (int i = 0; i < s; ++i) {
    long double sum = 0.0L;
    for (int j = 0; j < s; ++j) {
      if (j >= i && m->A[i * s + j] != 0.0) {
        ++upper;
        if (m->kind == ODB_METHOD_ERK)
          tap_diag("%s: a[%d][%d] = %g above the subdiagonal", m->name, i + 1,
                 j + 1, m->A[i * s + j]);
      }
      sum += m->A[i * s + j];
    }
    if (!(fabsl(sum - m->c[i]) <= TOL_ROW)) {
      ++rows;
      tap_diag("%s: row %d: sum a = %.17Lg, c = %.17g, diff %.3Le", m->name,
               i + 1, sum, m->c[i], sum - m->c[i]);
    }
  }
  if (m->kind == ODB_METHOD_PIRK)
    tap_ok(upper > 0, "%s: A is implicit (%d entries on or above the "
           "diagonal)", m->name, upper);
  else
    tap_ok(upper == 0, "%s: A is strictly lower triangular", m->name);
  tap_ok(rows == 0, "%s: c_i = sum_j a_ij for all %d rows", m->name, s);
}

/*
** fsal is 1 exactly when A's last row equals b and c_last = 1; for a PIRK
** corrector it is always 0 (the next step starts from the trivial predictor,
** even where the tableau is stiffly accurate as Radau IIA, Lobatto IIIC).
*/
static void test_fsal(const odb_method *m) {
  int s = m->s, same = m->c[s - 1] == 1.0;
  for (int j = 0; j < s; ++j)
    if (m->A[(s - 1) * s + j] != m->b[j]) same = 0;
  if (m->kind == ODB_METHOD_PIRK) {
    tap_ok(m->fsal == 0, "%s: fsal = 0 for a PIRK corrector (last row %s b)",
           m->name, same ? "equals" : "differs from");
    return;
  }
  tap_ok(m->fsal == same, "%s: fsal = %d (last row %s b, c_last = %g)",
         m->name, m->fsal, same ? "equals" : "differs from", m->c[s - 1]);
}

/*
** The simplifying assumptions of an implicit tableau (HNW II, IV.5):
**   B(q): sum_i b_i c_i^(k-1) = 1/k,                      k <= q
**   C(q): sum_j a_ij c_j^(k-1) = c_i^k / k,                k <= q, every i
**   D(q): sum_i b_i c_i^(k-1) a_ij = b_j (1 - c_j^k) / k,  k <= q, every j
** Worst residual of condition X at k (X = 'B', 'C' or 'D').
*/
static double simplifying_residual(const odb_method *m, char X, int k) {
  int s = m->s;
  double worst = 0.0;
  for (int r = 0; r < (X == 'B' ? 1 : s); ++r) {
    double sum = 0.0, want;
    for (int q = 0; q < s; ++q) {
      if (X == 'B') sum += m->b[q] * pow(m->c[q], k - 1);
      else if (X == 'C') sum += m->A[r * s + q] * pow(m->c[q], k - 1);
      else sum += m->b[q] * pow(m->c[q], k - 1) * m->A[q * s + r];
    }
    want = X == 'B' ? 1.0 / k
         : X == 'C' ? pow(m->c[r], k) / k
                    : m->b[r] * (1.0 - pow(m->c[r], k)) / k;
    if (fabs(sum - want) > worst) worst = fabs(sum - want);
  }
  return worst;
}

/*
** The assumptions each corrector is known to satisfy (HNW II, Sect. IV.5:
** Gauss B(2s) C(s) D(s); Radau IA B(2s-1) C(s-1) D(s); Radau IIA
** B(2s-1) C(s) D(s-1); Lobatto IIIC B(2s-2) C(s-1) D(s-1)): each holds up
** to its q and fails at q + 1, so the tableau is the named one and not a
** neighbour of it.
*/
static void test_simplifying(const odb_method *m) {
  static const struct { const char *name; int B, C, D; } known[] = {
    { "radau1a5", 5, 2, 3 }, { "radau2a5", 5, 3, 2 },
    { "lobatto3c8", 8, 4, 4 }, { "gauss4", 4, 2, 2 }, { "gauss6", 6, 3, 3 },
  };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
    int q[3] = { known[i].B, known[i].C, known[i].D };
    if (strcmp(known[i].name, m->name) != 0) continue;
    for (int x = 0; x < 3; ++x) {
      char X = "BCD"[x];
      double held = 0.0, next = simplifying_residual(m, X, q[x] + 1);
      for (int k = 1; k <= q[x]; ++k)
        held = fmax(held, simplifying_residual(m, X, k));
      tap_ok(held <= TOL_COND && next > TOL_FAIL, "%s: %c(%d) holds (max "
             "|res| %.1e), %c(%d) does not (%.1e)", m->name, X, q[x], held, X,
             q[x] + 1, next);
    }
    return;
  }
  tap_ok(0, "%s: no simplifying assumptions known for this corrector",
         m->name);
}

/* Fields, orders, then the order conditions of b and bhat. */
static void test_method(const odb_method *m) {
  static double phi[MAX_TREES][MAX_STAGES];
  int pirk = m->kind == ODB_METHOD_PIRK;
  int err = m->bhat ? (m->order_emb < m->order ? m->order_emb : m->order)
                    : m->order;
  tap_diag("%s (%s): s = %d, order %d, embedded %d", m->name, m->title, m->s,
           m->order, m->order_emb);
  tap_ok(m->title && *m->title &&
         (m->kind == ODB_METHOD_ERK || m->kind == ODB_METHOD_PIRK) &&
         m->s >= 1 && m->s <= MAX_STAGES && m->A && m->b && m->c,
         "%s: fields are filled", m->name);
  tap_ok(pirk ? m->m_default == m->order - 1 && m->bhat == NULL
              : m->m_default == 0,
         "%s: m_default = %d%s", m->name, m->m_default,
         pirk ? " = p - 1, no bhat (PIRK)" : " (explicit RK)");
  if (m->s < 1 || m->s > MAX_STAGES) return;
  tap_ok((m->bhat == NULL) == (m->order_emb == 0),
         "%s: order_emb is 0 exactly when bhat is NULL", m->name);
  tap_ok(odb_method_err_order(m) == err, "%s: err_order %d", m->name, err);
  test_shape(m);
  test_fsal(m);
  stage_weights(m, phi);
  test_order(m, "b", m->b, m->order, (const double (*)[MAX_STAGES])phi);
  if (m->bhat)
    test_order(m, "bhat", m->bhat, m->order_emb,
               (const double (*)[MAX_STAGES])phi);
  if (pirk) test_simplifying(m);
}

/* count/at/find/lookup agree, and a bad name lists every valid one. */
static void test_registry(void) {
  static const char *const names[] = {"heun_euler", "bs3", "rk4", "dopri5",
                                      "verner65", "radau1a5", "radau2a5",
                                      "lobatto3c8", "gauss4", "gauss6"};
  const int nnames = (int)(sizeof names / sizeof names[0]);
  const odb_method *m = NULL;
  odb_status st;
  int listed = 1;

  tap_ok(odb_method_count() == nnames, "%d methods registered",
         odb_method_count());
  tap_ok(odb_method_at(-1) == NULL && odb_method_at(odb_method_count()) == NULL,
         "odb_method_at out of range gives NULL");
  for (int i = 0; i < nnames; ++i) {
    const odb_method *f = odb_method_find(names[i]);
    st = odb_method_lookup(names[i], &m);
    tap_ok(f && st == ODB_OK && m == f && strcmp(f->name, names[i]) == 0 &&
           f == odb_method_at(i), "'%s' found, looked up, at index %d",
           names[i], i);
  }
  tap_ok(odb_method_find("nope") == NULL && odb_method_find(NULL) == NULL,
         "find of unknown or NULL name gives NULL");

  odb_clear_error();
  m = odb_method_at(0);
  st = odb_method_lookup("nope", &m);
  tap_ok(st == ODB_ERR_NAME && m == NULL, "lookup('nope') fails with %s",
         odb_status_name(st));
  for (int i = 0; i < nnames; ++i)
    if (!strstr(odb_last_error(), names[i])) listed = 0;
  tap_ok(listed && strstr(odb_last_error(), "'nope'"),
         "message names the bad name and all valid ones: %s", odb_last_error());
  tap_ok(odb_method_lookup(NULL, &m) == ODB_ERR_ARG &&
         odb_method_lookup("rk4", NULL) == ODB_ERR_ARG,
         "NULL name or NULL out is an argument error");
}

int main(void) {
  test_trees();
  test_registry();
  for (int i = 0; i < odb_method_count(); ++i) test_method(odb_method_at(i));
  return tap_done();
}
