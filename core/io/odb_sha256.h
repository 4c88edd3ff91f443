/* odb_sha256.h - SHA-256 of a byte string (scenario hashes in results). */
#ifndef ODB_SHA256_H
#define ODB_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 64 hex digits and a NUL into hex[65]. */
void odb_sha256_hex(const void *data, size_t len, char hex[65]);
void odb_sha256(const void *data, size_t len, uint8_t out[32]);

/* A digest fed in pieces (init, any number of updates, final): the same
   bytes in any split give the same digest as odb_sha256. */
typedef struct odb_sha256_ctx {
  uint32_t h[8];
  uint8_t buf[64];     /* the bytes of an unfinished block */
  size_t nbuf;
  uint64_t len;        /* bytes so far */
} odb_sha256_ctx;
void odb_sha256_init(odb_sha256_ctx *c);
void odb_sha256_update(odb_sha256_ctx *c, const void *data, size_t len);
void odb_sha256_final(odb_sha256_ctx *c, uint8_t out[32]);
/* The 64 lower-case hex digits of a digest and a NUL. */
void odb_sha256_to_hex(const uint8_t d[32], char hex[65]);

#endif
