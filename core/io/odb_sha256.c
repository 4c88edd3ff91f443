/* odb_sha256.c - SHA-256 as specified in FIPS 180-4. */
#include "odb_sha256.h"

#include <string.h>

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
  0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* Assumes 0 < n < 32. */
static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* Big-endian load of 4 bytes. */
static uint32_t load_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

/* Big-endian store of 4 bytes. */
static void store_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Processes one 64-byte block into the eight working words h (FIPS 6.2.2). */
static void compress(uint32_t h[8], const uint8_t block[64]) {
  uint32_t w[64], a, b, c, d, e, f, g, hh;
  for (int t = 0; t < 16; ++t) w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  a = h[0]; b = h[1]; c = h[2]; d = h[3];
  e = h[4]; f = h[5]; g = h[6]; hh = h[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = hh + S1 + ch + K[t] + w[t];
    uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = S0 + maj;
    hh = g; g = f; f = e; e = d + t1;
    d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d;
  h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* Starts a digest. */
void odb_sha256_init(odb_sha256_ctx *c) {
  static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                  0xa54ff53a, 0x510e527f, 0x9b05688c,
                                  0x1f83d9ab, 0x5be0cd19 };
  memcpy(c->h, h0, sizeof h0);
  c->nbuf = 0;
  c->len = 0;
}

/* Adds len bytes (data may be NULL when len is 0): whole blocks straight
   from data, the rest kept in c->buf. */
void odb_sha256_update(odb_sha256_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->len += len;
  if (c->nbuf) {
    size_t take = 64 - c->nbuf < len ? 64 - c->nbuf : len;
    memcpy(c->buf + c->nbuf, p, take);
    c->nbuf += take;
    p += take;
    len -= take;
    if (c->nbuf < 64) return;
    compress(c->h, c->buf);
    c->nbuf = 0;
  }
  for (; len >= 64; p += 64, len -= 64) compress(c->h, p);
  if (len) memcpy(c->buf, p, len);
  c->nbuf = len;
}

/* The padding (0x80, zeros, the 64-bit big-endian length in bits; one or
   two blocks) and the digest. */
void odb_sha256_final(odb_sha256_ctx *c, uint8_t out[32]) {
  uint8_t tail[128];
  size_t ntail = c->nbuf < 56 ? 64 : 128;
  uint64_t bits = c->len * 8;
  memset(tail, 0, sizeof tail);
  memcpy(tail, c->buf, c->nbuf);
  tail[c->nbuf] = 0x80;
  store_be32(tail + ntail - 8, (uint32_t)(bits >> 32));
  store_be32(tail + ntail - 4, (uint32_t)bits);
  compress(c->h, tail);
  if (ntail == 128) compress(c->h, tail + 64);
  for (int i = 0; i < 8; ++i) store_be32(out + 4 * i, c->h[i]);
}

/* hex gets the 64 lower-case digits of d and a NUL. */
void odb_sha256_to_hex(const uint8_t d[32], char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[64] = '\0';
}

/* data may be NULL when len is 0. */
void odb_sha256(const void *data, size_t len, uint8_t out[32]) {
  odb_sha256_ctx c;
  odb_sha256_init(&c);
  odb_sha256_update(&c, data, len);
  odb_sha256_final(&c, out);
}

/* hex gets 64 lower-case digits and a NUL. */
void odb_sha256_hex(const void *data, size_t len, char hex[65]) {
  uint8_t d[32];
  odb_sha256(data, len, d);
  odb_sha256_to_hex(d, hex);
}
