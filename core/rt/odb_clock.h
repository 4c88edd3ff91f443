/* odb_clock.h - the one clock: monotonic seconds. */
#ifndef ODB_CLOCK_H
#define ODB_CLOCK_H

#ifdef __cplusplus   /* included by the CUDA sources too */
extern "C" {
#endif

/*
** Seconds on CLOCK_MONOTONIC: only differences mean anything, and they
** are not changed by the wall clock being set. Every timing in odebench
** (measurements, step timers, event times, waits) reads this.
*/
double odb_clock_now(void);

/* Seconds from t0 (a value of odb_clock_now) to now. */
static inline double odb_clock_since(double t0) { return odb_clock_now() - t0; }

#ifdef __cplusplus
}
#endif

#endif
