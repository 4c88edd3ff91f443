/* test_rng_event.c - the seeded RNG and the event ring. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "odb_event.h"
#include "odb_rng.h"
#include "tap.h"

/* Same seed, same stream; different seeds, different streams; uniform. */
static void test_rng(void) {
  odb_rng a, b, c;
  int same = 1, differ = 0, in_range = 1;
  double sum = 0;
  odb_rng_seed(&a, 42);
  odb_rng_seed(&b, 42);
  odb_rng_seed(&c, 43);
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = odb_rng_next(&a), y = odb_rng_next(&b), z = odb_rng_next(&c);
    same &= x == y;
    differ += x != z;
  }
  tap_ok(same, "same seed gives the same stream");
  tap_ok(differ > 990, "different seeds give different streams (%d/1000)",
         differ);
  odb_rng_seed(&a, 0);
  tap_ok(a.s[0] == 0xe220a8397b1dcdafULL,
         "seed 0: first splitmix64 word is the published e220a8397b1dcdaf");
  tap_ok(odb_rng_next(&a) == 0x99ec5f36cb75f2b4ULL &&
         odb_rng_next(&a) == 0xbf6e1f784956452aULL &&
         odb_rng_next(&a) == 0x1a5f849d4933e6e0ULL,
         "seed 0: first xoshiro256** outputs match a reference model");
  odb_rng_seed(&a, 7);
  for (int i = 0; i < 100000; ++i) {
    double u = odb_rng_uniform(&a);
    in_range &= u >= 0.0 && u < 1.0;
    sum += u;
  }
  tap_ok(in_range, "uniform draws lie in [0, 1)");
  tap_ok(sum / 1e5 > 0.495 && sum / 1e5 < 0.505,
         "mean of 1e5 uniform draws is %.4f (about 0.5)", sum / 1e5);
}

/* Pushes one STEP event whose step field is v. */
static void push_step(odb_event_ring *r, long v) {
  odb_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = ODB_EV_STEP;
  ev.step = v;
  odb_event_push(r, &ev);
}

/* Order, seq, wall clock, wraparound with dropped records, two readers. */
static void test_ring_basic(void) {
  odb_event_ring *r = NULL;
  odb_event out[16];
  uint64_t c1 = 0, c2 = 0, dropped = 99;
  int n, ok;
  tap_ok(odb_event_ring_create(5, &r) == ODB_OK && r, "ring created");
  if (!r) return;
  tap_ok(odb_event_last_seq(r) == 0, "empty ring: last seq 0");
  n = odb_event_poll(r, &c1, out, 16, &dropped);
  tap_ok(n == 0 && dropped == 0 && c1 == 0, "empty ring polls nothing");
  for (long i = 1; i <= 3; ++i) push_step(r, 10 * i);
  n = odb_event_poll(r, &c1, out, 16, &dropped);
  ok = n == 3 && dropped == 0 && c1 == 3;
  for (int i = 0; ok && i < 3; ++i)
    ok = out[i].seq == (uint64_t)i + 1 && out[i].step == 10 * (i + 1) &&
         out[i].kind == ODB_EV_STEP && out[i].wall >= 0 &&
         (i == 0 || out[i].wall >= out[i - 1].wall);
  tap_ok(ok, "three records in order with seq 1..3 and rising wall");
  n = odb_event_poll(r, &c1, out, 16, &dropped);
  tap_ok(n == 0, "nothing new after reading all");
  /* capacity 5 rounds up to 8; push 10 more: seq 4..13, 6..13 kept */
  for (long i = 4; i <= 13; ++i) push_step(r, 10 * i);
  tap_ok(odb_event_last_seq(r) == 13, "last seq is 13");
  n = odb_event_poll(r, &c1, out, 2, &dropped);
  tap_ok(n == 2 && dropped == 2 && out[0].seq == 6 && out[1].seq == 7 &&
         c1 == 7, "reader 1 after wraparound: 2 dropped, gets 6, 7 (max 2)");
  n = odb_event_poll(r, &c1, out, 16, &dropped);
  tap_ok(n == 6 && dropped == 0 && out[0].seq == 8 && out[5].seq == 13 &&
         out[5].step == 130, "reader 1 reads the rest 8..13");
  n = odb_event_poll(r, &c2, out, 16, &dropped);
  tap_ok(n == 8 && dropped == 5 && out[0].seq == 6 && out[7].seq == 13 &&
         c2 == 13, "reader 2 independently: 5 dropped, gets 6..13");
  tap_ok(odb_event_poll(r, &c2, out, 16, NULL) == 0,
         "dropped may be NULL");
  odb_event_ring_destroy(r);
  odb_event_ring_destroy(NULL);
}

#define NPUSHERS 4
#define PER_THREAD 10000
#define CAPACITY 1024

typedef struct pusher { odb_event_ring *r; int id; } pusher;

/* Pushes PER_THREAD events tagged with the thread id (in accepted). */
static void *push_many(void *arg) {
  pusher *p = arg;
  odb_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = ODB_EV_METRIC;
  ev.accepted = p->id;
  for (long i = 0; i < PER_THREAD; ++i) {
    ev.step = i;
    odb_event_push(p->r, &ev);
  }
  return NULL;
}

typedef struct reader {
  odb_event_ring *r;
  int stop;
  uint64_t seen, dropped;
  int ordered;
} reader;

/* Polls while the pushers run; seq must rise strictly, nothing lost
   silently (seen + dropped accounts for every seq). */
static void *read_many(void *arg) {
  reader *rd = arg;
  odb_event buf[64];
  uint64_t cursor = 0, last = 0, d;
  int done = 0;
  while (!done) {
    int n;
    done = __atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE);
    while ((n = odb_event_poll(rd->r, &cursor, buf, 64, &d)) > 0) {
      rd->dropped += d;
      for (int i = 0; i < n; ++i) {
        if (buf[i].seq <= last) rd->ordered = 0;
        last = buf[i].seq;
      }
      rd->seen += (uint64_t)n;
    }
  }
  return NULL;
}

/* Four pushers and a concurrent reader; then a late reader. */
static void test_ring_threads(void) {
  odb_event_ring *r = NULL;
  pthread_t th[NPUSHERS], rt;
  pusher p[NPUSHERS];
  reader rd = { .ordered = 1 };
  static odb_event out[CAPACITY + 8];
  uint64_t cursor = 0, dropped = 0;
  long lastc[NPUSHERS];
  int n, ok = 1, per_thread_ok = 1;
  if (odb_event_ring_create(CAPACITY, &r) != ODB_OK) {
    tap_ok(0, "ring for threads created");
    return;
  }
  rd.r = r;
  pthread_create(&rt, NULL, read_many, &rd);
  for (int i = 0; i < NPUSHERS; ++i) {
    p[i].r = r;
    p[i].id = i;
    pthread_create(&th[i], NULL, push_many, &p[i]);
  }
  for (int i = 0; i < NPUSHERS; ++i) pthread_join(th[i], NULL);
  __atomic_store_n(&rd.stop, 1, __ATOMIC_RELEASE);
  pthread_join(rt, NULL);
  tap_ok(odb_event_last_seq(r) == NPUSHERS * PER_THREAD,
         "last seq is %d", NPUSHERS * PER_THREAD);
  tap_ok(rd.ordered, "concurrent reader saw strictly rising seq");
  tap_ok(rd.seen + rd.dropped == NPUSHERS * PER_THREAD,
         "concurrent reader: seen %llu + dropped %llu = all",
         (unsigned long long)rd.seen, (unsigned long long)rd.dropped);
  n = odb_event_poll(r, &cursor, out, CAPACITY + 8, &dropped);
  tap_ok(n == CAPACITY && dropped == NPUSHERS * PER_THREAD - CAPACITY,
         "late reader gets the last %d records, %llu dropped", n,
         (unsigned long long)dropped);
  for (int i = 0; i < NPUSHERS; ++i) lastc[i] = -1;
  for (int i = 0; i < n; ++i) {
    int id = (int)out[i].accepted;
    if (i > 0 && out[i].seq != out[i - 1].seq + 1) ok = 0;
    if (id < 0 || id >= NPUSHERS || out[i].step <= lastc[id])
      per_thread_ok = 0;
    else lastc[id] = out[i].step;
  }
  tap_ok(ok && n > 0 && out[n - 1].seq == NPUSHERS * PER_THREAD,
         "late reader: seq consecutive and strictly increasing");
  tap_ok(per_thread_ok, "each pusher's records keep their order");
  odb_event_ring_destroy(r);
}

int main(void) {
  test_rng();
  test_ring_basic();
  test_ring_threads();
  return tap_done();
}
