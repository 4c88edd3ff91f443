/* odb_status.h - status codes of the odebench engine (one X-macro list). */
#ifndef ODB_STATUS_H
#define ODB_STATUS_H

/*
** Every fallible engine function returns an odb_status. The list below is
** the only place where codes and their messages are defined; the enum, the
** message table and the name table are all expanded from it.
*/
#define ODB_STATUS_LIST(X)                                              \
  X(ODB_OK,              "success")                                     \
  X(ODB_ERR_ARG,         "invalid argument")                            \
  X(ODB_ERR_NAME,        "unknown name")                                \
  X(ODB_ERR_NOMEM,       "out of memory")                               \
  X(ODB_ERR_IO,          "input/output error")                          \
  X(ODB_ERR_UNSUPPORTED, "unsupported combination")                     \
  X(ODB_ERR_BACKEND,     "backend failure")                             \
  X(ODB_ERR_NO_DEVICE,   "no GPU device present")                       \
  X(ODB_ERR_STEP_SIZE,   "step size became too small")                  \
  X(ODB_ERR_MAX_STEPS,   "maximum number of steps reached")             \
  X(ODB_ERR_NONFINITE,   "solution became non-finite")                  \
  X(ODB_INTERRUPTED,     "interrupted")                                 \
  X(ODB_ERR_INTERNAL,    "internal error")

typedef enum odb_status {
#define ODB_STATUS_ENUM(code, msg) code,
  ODB_STATUS_LIST(ODB_STATUS_ENUM)
#undef ODB_STATUS_ENUM
  ODB_STATUS_COUNT
} odb_status;

/* Fixed message of a code ("unknown name"); never NULL. */
const char *odb_status_str(odb_status st);
/* Symbolic name of a code ("ODB_ERR_NAME"); never NULL. */
const char *odb_status_name(odb_status st);

/*
** Records a detailed message for the calling thread (printf-style) together
** with file and line, and returns st so that callers can write
**   return ODB_FAIL(ODB_ERR_ARG, "N must be positive, got %ld", n);
*/
odb_status odb_fail_at(odb_status st, const char *file, int line,
                       const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
#define ODB_FAIL(st, ...) odb_fail_at((st), __FILE__, __LINE__, __VA_ARGS__)

/* Detail of the last failure in this thread ("" when none). */
const char *odb_last_error(void);
/* "file:line" where the last failure in this thread was recorded. */
const char *odb_last_error_where(void);
/* Forget the last failure of this thread. */
void odb_clear_error(void);

/* Propagate a failure: evaluate expr once, return its status if not ODB_OK. */
#define ODB_TRY(expr)                                                   \
  do { odb_status odb_try_st_ = (expr);                                 \
       if (odb_try_st_ != ODB_OK) return odb_try_st_; } while (0)

#endif
