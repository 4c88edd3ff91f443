/* odb_backend.c - generic backend wrappers and buffers owned by a backend. */
#include "odb_status.h"
#include "odb_backend.h"

#include <stdlib.h>
#include <string.h>

/* Assumes b was made by a backend constructor (malloc'd struct). */
void odb_backend_destroy(odb_backend *b) {
  if (!b) return;
  if (b->ops && b->ops->destroy) b->ops->destroy(b);
  free(b);
}

/*
** Device-to-device copy; backends without a copy op go through a host
** bounce buffer (slow, but correct).
*/
odb_status odb_backend_copy(odb_backend *b, void *dst, const void *src,
                            size_t bytes) {
  void *tmp;
  odb_status st;
  if (bytes == 0) return ODB_OK;
  if (b->ops->copy) return b->ops->copy(b, dst, src, bytes);
  tmp = malloc(bytes);
  if (!tmp) return ODB_FAIL(ODB_ERR_NOMEM, "bounce buffer of %zu bytes", bytes);
  st = b->ops->to_host(b, tmp, src, bytes);
  if (st == ODB_OK) st = b->ops->to_device(b, dst, tmp, bytes);
  free(tmp);
  return st;
}

/* Backends without a sync op have nothing in flight. */
odb_status odb_backend_sync(odb_backend *b) {
  return b->ops->sync ? b->ops->sync(b) : ODB_OK;
}

/* Fills info with zeros first, so a backend sets only what it knows. */
odb_status odb_backend_query(odb_backend *b, odb_device_info *info) {
  memset(info, 0, sizeof *info);
  return b->ops->query(b, info);
}

/* Measures once; later calls return the cached figure. */
odb_status odb_backend_copy_bandwidth(odb_backend *b, double *gbs) {
  *gbs = 0;
  if (!b->ops->copy_bandwidth)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "backend '%s' does not measure its "
                    "copy bandwidth", b->ops->name);
  if (!(b->copy_gbs > 0)) ODB_TRY(b->ops->copy_bandwidth(b, &b->copy_gbs));
  *gbs = b->copy_gbs;
  return ODB_OK;
}

/* Measures once; later calls return the cached figure. */
odb_status odb_backend_read_bandwidth(odb_backend *b, double *gbs) {
  *gbs = 0;
  if (!b->ops->read_bandwidth)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "backend '%s' does not measure its "
                    "read bandwidth", b->ops->name);
  if (!(b->read_gbs > 0)) ODB_TRY(b->ops->read_bandwidth(b, &b->read_gbs));
  *gbs = b->read_gbs;
  return ODB_OK;
}

/* The backend measures once and keeps the figures (see ops->fp64_peak). */
odb_status odb_backend_fp64_peak(odb_backend *b, odb_fp64_peaks *out) {
  memset(out, 0, sizeof *out);
  if (!b->ops->fp64_peak)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "backend '%s' does not measure its "
                    "FP64 peak", b->ops->name);
  return b->ops->fp64_peak(b, out);
}

/* Allocates the struct and the backend memory; contents are undefined. */
odb_status odb_buffer_create(odb_backend *b, size_t bytes, odb_buffer **out) {
  odb_buffer *buf;
  odb_status st;
  *out = NULL;
  if (!b) return ODB_FAIL(ODB_ERR_ARG, "buffer without a backend");
  buf = calloc(1, sizeof *buf);
  if (!buf) return ODB_FAIL(ODB_ERR_NOMEM, "buffer header");
  st = b->ops->alloc(b, bytes ? bytes : 1, &buf->data);
  if (st != ODB_OK) {
    free(buf);
    return st;
  }
  buf->backend = b;
  buf->bytes = bytes;
  *out = buf;
  return ODB_OK;
}

void odb_buffer_destroy(odb_buffer *buf) {
  if (!buf) return;
  buf->backend->ops->free(buf->backend, buf->data);
  free(buf);
}

/* Range-checked host-to-buffer copy. */
odb_status odb_buffer_write(odb_buffer *buf, size_t offset, const void *src,
                            size_t bytes) {
  if (offset > buf->bytes || bytes > buf->bytes - offset)
    return ODB_FAIL(ODB_ERR_ARG, "write of %zu bytes at %zu past the end of a "
                    "%zu-byte buffer", bytes, offset, buf->bytes);
  return buf->backend->ops->to_device(buf->backend, (char *)buf->data + offset,
                                      src, bytes);
}

/* Range-checked buffer-to-host copy. */
odb_status odb_buffer_read(const odb_buffer *buf, size_t offset, void *dst,
                           size_t bytes) {
  if (offset > buf->bytes || bytes > buf->bytes - offset)
    return ODB_FAIL(ODB_ERR_ARG, "read of %zu bytes at %zu past the end of a "
                    "%zu-byte buffer", bytes, offset, buf->bytes);
  return buf->backend->ops->to_host(buf->backend, dst,
                                    (const char *)buf->data + offset, bytes);
}
