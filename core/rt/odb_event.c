/* odb_event.c - a mutex-protected ring of progress records. */
#include "odb_event.h"
#include "odb_clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/*
** Record number s (s = 1, 2, ...) lives in slot (s - 1) & mask until record
** s + capacity overwrites it. Readers keep their own cursor (the last seq
** they saw), so any number of them read independently.
*/
struct odb_event_ring {
  pthread_mutex_t lock;
  odb_event *slots;
  uint64_t mask;       /* capacity - 1, capacity a power of two */
  uint64_t last;       /* seq of the newest record, 0 when empty */
  double t0;           /* creation time (odb_clock_now) */
};

/* Assumes n >= 1 and n <= 2^31; the smallest power of two >= n. */
static uint64_t round_pow2(unsigned n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

/* capacity 0 is taken as 1; more than 2^31 records is refused. */
odb_status odb_event_ring_create(unsigned capacity, odb_event_ring **out) {
  odb_event_ring *r = NULL;
  uint64_t cap;
  if (!out) return ODB_FAIL(ODB_ERR_ARG, "event ring: out must not be NULL");
  *out = NULL;
  if (capacity > (1u << 31))
    return ODB_FAIL(ODB_ERR_ARG, "event ring capacity %u is too large "
                    "(at most 2^31)", capacity);
  cap = round_pow2(capacity ? capacity : 1);
  r = calloc(1, sizeof *r);
  if (!r) goto nomem;
  r->slots = calloc(cap, sizeof *r->slots);
  if (!r->slots) goto nomem;
  if (pthread_mutex_init(&r->lock, NULL) != 0) {
    free(r->slots);
    free(r);
    return ODB_FAIL(ODB_ERR_INTERNAL, "event ring: cannot create mutex");
  }
  r->mask = cap - 1;
  r->t0 = odb_clock_now();
  *out = r;
  return ODB_OK;
nomem:
  if (r) free(r->slots);
  free(r);
  return ODB_FAIL(ODB_ERR_NOMEM, "event ring of %llu records: out of memory",
                  (unsigned long long)cap);
}

/* Accepts NULL; no thread may use r afterwards. */
void odb_event_ring_destroy(odb_event_ring *r) {
  if (!r) return;
  pthread_mutex_destroy(&r->lock);
  free(r->slots);
  free(r);
}

/* Copies *ev, then stamps seq and wall under the lock so both increase
   together in the order the records enter the ring. */
void odb_event_push(odb_event_ring *r, const odb_event *ev) {
  odb_event *slot;
  if (!r || !ev) return;
  pthread_mutex_lock(&r->lock);
  slot = &r->slots[r->last & r->mask];
  *slot = *ev;
  slot->seq = ++r->last;
  slot->wall = odb_clock_since(r->t0);
  slot->name[sizeof slot->name - 1] = '\0';
  slot->text[sizeof slot->text - 1] = '\0';
  pthread_mutex_unlock(&r->lock);
}

/*
** Records older than last - capacity + 1 are gone; a cursor behind that is
** moved up and the gap is reported as dropped. A cursor at or past the
** newest record reads nothing.
*/
int odb_event_poll(odb_event_ring *r, uint64_t *cursor, odb_event *out,
                   int max, uint64_t *dropped) {
  uint64_t next, oldest, cap, avail, n, i;
  if (dropped) *dropped = 0;
  if (!r || !cursor || !out || max <= 0) return 0;
  pthread_mutex_lock(&r->lock);
  cap = r->mask + 1;
  oldest = r->last > cap ? r->last - cap + 1 : 1;
  next = *cursor + 1;
  if (next < oldest) {
    if (dropped) *dropped = oldest - next;
    next = oldest;
  }
  avail = r->last >= next ? r->last - next + 1 : 0;
  n = avail < (uint64_t)max ? avail : (uint64_t)max;
  for (i = 0; i < n; ++i) out[i] = r->slots[(next + i - 1) & r->mask];
  if (n > 0 || next > *cursor + 1) *cursor = next + n - 1;
  pthread_mutex_unlock(&r->lock);
  return (int)n;
}

/* 0 before the first push. */
uint64_t odb_event_last_seq(odb_event_ring *r) {
  uint64_t s;
  if (!r) return 0;
  pthread_mutex_lock(&r->lock);
  s = r->last;
  pthread_mutex_unlock(&r->lock);
  return s;
}
