/* odb_sha256.h - SHA-256 of a byte string (scenario hashes in results). */
#ifndef ODB_SHA256_H
#define ODB_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 64 hex digits and a NUL into hex[65]. */
void odb_sha256_hex(const void *data, size_t len, char hex[65]);
void odb_sha256(const void *data, size_t len, uint8_t out[32]);

#endif
