/* odb_rng.c - xoshiro256** seeded through splitmix64. */
#include "odb_rng.h"

/* Advances a splitmix64 state and returns its next output; any state works. */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Assumes 0 < k < 64. */
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* Fills all four words from splitmix64, so the state is never all zero. */
void odb_rng_seed(odb_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; ++i) r->s[i] = splitmix64(&x);
}

/* Assumes r was seeded; one step of xoshiro256**. */
uint64_t odb_rng_next(odb_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* The top 53 bits scaled by 2^-53: exactly representable, never 1.0. */
double odb_rng_uniform(odb_rng *r) {
  return (double)(odb_rng_next(r) >> 11) * 0x1.0p-53;
}

/* See the header. */
void odb_rng_fill(odb_rng *r, double *v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = 2.0 * odb_rng_uniform(r) - 1.0;
}
