/* odb_rng.h - a small seeded random number generator (xoshiro256**). */
#ifndef ODB_RNG_H
#define ODB_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct odb_rng { uint64_t s[4]; } odb_rng;

/* Seeds the state through splitmix64, so any seed (0 too) is fine. */
void odb_rng_seed(odb_rng *r, uint64_t seed);
uint64_t odb_rng_next(odb_rng *r);
/* Uniform double in [0, 1) with 53 random bits. */
double odb_rng_uniform(odb_rng *r);
/* v[0..n) uniform in [-1, 1), drawn in order (the test matrices' entries). */
void odb_rng_fill(odb_rng *r, double *v, size_t n);

#endif
