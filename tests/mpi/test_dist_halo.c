/* test_dist_halo.c - the exchange plans of the distributed variants
   (dist/ode/dist_halo.c), checked without running MPI: the plans of every
   rank are built side by side and their messages played round by round;
   and the error norm's exact sum on one rank. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "dist_halo.h"

#define MAXR 8
#define MAXN 48

/*
** Plays the plans h[0..R) (one per rank) and returns NULL when, round by
** round, every send has its matching receive (same round, pair, range),
** every rank sends only components it holds before the round, and at the
** end every rank holds [lo - d, hi + d) clipped to [0, n). Otherwise a
** static message saying what went wrong.
*/
static const char *play(dist_halo *h, int R, long n, long d) {
  static char why[256];
  unsigned char have[MAXR][MAXN], next[MAXR][MAXN];
  int rounds = h[0].nrounds;
  memset(have, 0, sizeof have);
  for (int r = 0; r < R; ++r)
    for (long j = h[r].a; j < h[r].b; ++j) have[r][j] = 1;
  for (int r = 1; r < R; ++r)
    if (h[r].nrounds != rounds && h[r].nrounds != 0 && rounds != 0) {
      snprintf(why, sizeof why, "rank %d has %d rounds, rank 0 %d", r,
               h[r].nrounds, rounds);
      return why;
    }
  for (int r = 0; r < R; ++r)
    if (h[r].nrounds > rounds) rounds = h[r].nrounds;
  for (int k = 0; k < rounds; ++k) {
    memcpy(next, have, sizeof have);
    for (int r = 0; r < R; ++r) {
      if (k >= h[r].nrounds) continue;
      for (int i = h[r].round[k]; i < h[r].round[k + 1]; ++i) {
        const dist_msg *m = &h[r].msg[i];
        const dist_halo *o = &h[m->peer];
        int match = 0;
        if (k < o->nrounds)
          for (int q = o->round[k]; q < o->round[k + 1]; ++q)
            match |= o->msg[q].peer == r && o->msg[q].send != m->send &&
                     o->msg[q].at == m->at && o->msg[q].count == m->count;
        if (!match) {
          snprintf(why, sizeof why, "round %d: rank %d %s [%ld, %ld) %s rank "
                   "%d has no match", k + 1, r, m->send ? "sends" : "receives",
                   m->at, m->at + m->count, m->send ? "to" : "from", m->peer);
          return why;
        }
        for (long j = m->at; j < m->at + m->count; ++j) {
          if (m->send && !have[r][j]) {
            snprintf(why, sizeof why, "round %d: rank %d sends component "
                     "%ld before it has it", k + 1, r, j);
            return why;
          }
          if (!m->send) next[r][j] = 1;
        }
      }
    }
    memcpy(have, next, sizeof have);
  }
  for (int r = 0; r < R; ++r) {
    long lo = h[r].a - d > 0 ? h[r].a - d : 0;
    long hi = h[r].b + d < n ? h[r].b + d : n;
    if (h[r].a == h[r].b) {   /* an inactive rank: it reads nothing */
      if (h[r].nmsg > 0) {
        snprintf(why, sizeof why, "rank %d holds no component but has %d "
                 "messages", r, h[r].nmsg);
        return why;
      }
      continue;
    }
    for (long j = lo; j < hi; ++j)
      if (!have[r][j]) {
        snprintf(why, sizeof why, "rank %d lacks component %ld of its halo",
                 r, j);
        return why;
      }
  }
  return NULL;
}

/* Every rank's interior [ia, ib): f there reads only the rank's block. */
static const char *interior(const dist_halo *h, int R, long n, long d) {
  static char why[160];
  for (int r = 0; r < R; ++r) {
    const dist_halo *x = &h[r];
    if (x->ia == x->ib) continue;
    if (x->ia < x->a || x->ib > x->b ||
        (x->ia - d < x->a && x->ia - d >= 0) ||
        (x->ib + d > x->b && x->ib + d <= n)) {
      snprintf(why, sizeof why, "rank %d: interior [%ld, %ld) of block "
               "[%ld, %ld) with d = %ld", r, x->ia, x->ib, x->a, x->b, d);
      return why;
    }
  }
  return NULL;
}

/*
** Plans of every (n, d, R) for kind, played, with every rank active
** (active 0) or with P active ranks of every R >= P (active 1: the
** option ranks); counts the failures.
*/
static void sweep(dist_kind kind, const char *name, int active) {
  int bad = 0, cases = 0, maxrounds = 0;
  char first[320] = "";
  for (int R = 1; R <= MAXR; ++R)
    for (int P = active ? 1 : R; P <= R; ++P)
      for (long n = P; n <= MAXN; ++n)
        for (long d = 1; d <= n; ++d) {
          dist_halo h[MAXR];
          memset(h, 0, sizeof h);
          const char *why = NULL;
          if (active && P == R) continue;   /* the sweep with active 0 */
          if (kind == DIST_NEIGHBOUR && n / P < d) continue;   /* applies */
          if (kind == DIST_FORWARD && d >= n) continue;
          for (int r = 0; r < R; ++r)
            if (dist_halo_plan_active(&h[r], kind, MPI_COMM_NULL, r, R, P, n,
                                      d, name) != ODB_OK)
              why = "the plan failed";
          for (int r = P; r < R && !why; ++r)
            if (h[r].a != n || h[r].b != n || h[r].in != 0 || h[r].out != 0)
              why = "an inactive rank holds, sends or receives components";
          if (!why) why = play(h, R, n, d);
          if (!why) why = interior(h, R, n, d);
          for (int r = 0; r < R && kind == DIST_NEIGHBOUR && !why; ++r)
            for (int i = 0; i < h[r].nmsg; ++i)
              if (abs(h[r].msg[i].peer - r) != 1)
                why = "a message skips a rank";
          for (int r = 0; r < R; ++r) {
            if (h[r].nrounds > maxrounds) maxrounds = h[r].nrounds;
            dist_halo_free(&h[r]);
          }
          cases++;
          if (why && !bad++)
            snprintf(first, sizeof first, "n = %ld, d = %ld, R = %d, %d "
                     "active: %s", n, d, R, P, why);
        }
  tap_ok(bad == 0, "%s: %d plans (n <= %d, R <= %d%s) bring every rank its "
         "halo, sends only held data and match every receive%s%s", name,
         cases, MAXN, MAXR, active ? ", P < R active ranks" : "",
         bad ? "; first failure: " : "", first);
  if (active) return;
  if (kind == DIST_FORWARD)
    tap_ok(maxrounds > 2, "mpi_X forwards over several ranks (%d rounds at "
           "most)", maxrounds);
  if (kind == DIST_SPARSE || kind == DIST_NEIGHBOUR)
    tap_ok(maxrounds == 1, "%s exchanges in one round", name);
}

/*
** The error norm's exact sum (dist_norm_all) on one rank, where the
** gather is a copy: summands a running sum loses, a sum just above a tie,
** and non-finite summands. n = 1, so the norm is sqrt of the sum.
*/
static void norm_checks(void) {
  dist_norm nm;
  double err = 0.0;
  int ok = dist_norm_init(&nm, 1, "test") == ODB_OK;
  /* 1 + 1024 x 2^-60: a running sum stays 1, the exact sum is 1 + 2^-50 */
  dist_norm_reset(&nm);
  dist_norm_add(&nm, 1.0);
  for (int k = 0; k < 1024; ++k) dist_norm_add(&nm, ldexp(1.0, -60));
  ok = ok && dist_norm_all(&nm, 1, &err) == ODB_OK;
  tap_ok(ok && err == sqrt(1.0 + ldexp(1.0, -50)),
         "norm: 1 + 1024 x 2^-60 is summed exactly (err %.17g)", err);
  /* 2 + 2^-50 + 2^-52 + 2^-72 lies just above the tie between 2 + 2^-50
     (even, where a sum that drops 2^-72 goes) and 2 + 2^-50 + 2^-51,
     whose square roots differ */
  dist_norm_reset(&nm);
  dist_norm_add(&nm, 2.0);
  dist_norm_add(&nm, ldexp(1.0, -50));
  dist_norm_add(&nm, ldexp(1.0, -52));
  dist_norm_add(&nm, ldexp(1.0, -72));
  ok = dist_norm_all(&nm, 1, &err) == ODB_OK;
  tap_ok(ok && err == sqrt(2.0 + ldexp(1.0, -50) + ldexp(1.0, -51)) &&
         err != sqrt(2.0 + ldexp(1.0, -50)),
         "norm: 2 + 2^-50 + 2^-52 + 2^-72 rounds up to 2 + 2^-50 + 2^-51 "
         "(err %.17g)", err);
  dist_norm_reset(&nm);
  dist_norm_add(&nm, 2.0);
  dist_norm_add(&nm, INFINITY);
  ok = dist_norm_all(&nm, 1, &err) == ODB_OK && isinf(err);
  dist_norm_add(&nm, NAN);
  ok = ok && dist_norm_all(&nm, 1, &err) == ODB_OK && isnan(err);
  dist_norm_reset(&nm);
  dist_norm_add(&nm, DBL_MAX);
  dist_norm_add(&nm, DBL_MAX);
  ok = ok && dist_norm_all(&nm, 1, &err) == ODB_OK && isinf(err);
  tap_ok(ok, "norm: an inf summand or an overflowing sum gives inf, a NaN "
         "NaN");
  dist_norm_free(&nm);
}

int main(void) {
  dist_halo h;
  long lo[6];
  printf("1..18\n");
  norm_checks();
  dist_blocks(10, 4, lo);
  tap_ok(lo[0] == 0 && lo[1] == 3 && lo[2] == 6 && lo[3] == 8 && lo[4] == 10,
         "10 components over 4 ranks: blocks of 3, 3, 2, 2");
  sweep(DIST_SPARSE, "mpi_S", 0);
  sweep(DIST_NEIGHBOUR, "mpi_N", 0);
  sweep(DIST_FORWARD, "mpi_X", 0);
  sweep(DIST_SPARSE, "mpi_S", 1);
  sweep(DIST_NEIGHBOUR, "mpi_N", 1);
  sweep(DIST_FORWARD, "mpi_X", 1);
  dist_blocks_over(10, 3, 5, lo);
  tap_ok(lo[0] == 0 && lo[1] == 4 && lo[2] == 7 && lo[3] == 10 &&
         lo[4] == 10 && lo[5] == 10,
         "10 components over 3 active ranks of 5: blocks of 4, 3, 3, 0, 0");
  /* BRUSS2D N = 3 (n = 18, d = 6) on 4 ranks: rank 2 holds [10, 14) and
     gets [4, 5) from rank 0 through rank 1 in the second round */
  dist_halo_plan(&h, DIST_FORWARD, MPI_COMM_NULL, 2, 4, 18, 6, "mpi_X");
  tap_ok(h.nrounds == 2 && h.msg[h.round[1]].peer == 1 &&
         h.msg[h.round[1]].send == 0 && h.msg[h.round[1]].at == 4 &&
         h.msg[h.round[1]].count == 1,
         "mpi_X, n = 18, d = 6, rank 2 of 4: component 4 arrives from rank 1 "
         "in round 2");
  dist_halo_free(&h);
  /* A: every other block in, the own block out */
  dist_halo_plan(&h, DIST_ALL, MPI_COMM_NULL, 1, 3, 10, 10, "mpi_A");
  tap_ok(h.a == 4 && h.b == 7 && h.in == 7 && h.out == 3 && h.ia == h.ib,
         "mpi_A, n = 10 on 3 ranks, rank 1: block [4, 7), receives 7, sends "
         "3, no interior with d = n");
  dist_halo_free(&h);
  /* A on 2 active ranks of 4: the active ones gather among themselves,
     the others take no part */
  dist_halo_plan_active(&h, DIST_ALL, MPI_COMM_NULL, 1, 4, 2, 10, 10, "mpi_A");
  tap_ok(h.a == 5 && h.b == 10 && h.in == 5 && h.out == 5 && h.nrounds == 1,
         "mpi_A, n = 10 on 2 active ranks of 4, rank 1: block [5, 10), "
         "receives 5, sends 5");
  dist_halo_free(&h);
  dist_halo_plan_active(&h, DIST_ALL, MPI_COMM_NULL, 3, 4, 2, 10, 10, "mpi_A");
  tap_ok(h.a == 10 && h.b == 10 && h.in == 0 && h.out == 0 &&
         h.nrounds == 0 && h.ia == h.ib,
         "mpi_A, rank 3 of 4 with 2 active: the empty block [10, 10), no "
         "exchange");
  dist_halo_free(&h);
  return tap_failed ? 1 : 0;
}
