/* odb_checkpoint.h - a solver's state and step controller in a file, to
   continue an integration later exactly where it stopped. */
#ifndef ODB_CHECKPOINT_H
#define ODB_CHECKPOINT_H

#include "odb_status.h"
#include "odb_solver.h"

/*
** What a solver keeps between steps, and so what a checkpoint holds: the
** state y and its time t; the proposed next step h_next (0: the first
** step is still to be chosen), which is the whole memory of the I
** controller (a rejection's cap of the next factor lives within one step;
** the device controller's within one integrate call); f(t, y) in F[0]
** when the solver has it (fsal_ready: FSAL or the first-step algorithm
** left it), since a restarted solver that evaluated it again could differ
** in the last bits; and the running totals (steps, accepted, rejected,
** evaluations, last h and error norm). No variant keeps anything else
** from one step to the next: a PIRK step starts its corrector from the
** predictor f(t + c_i h, y) (core/ode/variants/pirk_*.c), not from the
** step before. So a solver restored from a checkpoint on the same variant
** and machine takes the same steps with the same numbers, bit for bit, as
** the one that wrote it.
**
** Format, version 1: little-endian throughout, doubles as their IEEE-754
** binary64 bits.
**
**   offset  bytes  field
**        0      8  magic "ODBCKPT\n"
**        8      4  format version (1)
**       12      4  flags: bit 0 set when F0 follows y
**       16      8  n, the state's length
**       24      4  m, PIRK corrector steps (0 for an explicit method)
**       28      4  0
**       32    256  the problem's key (odb_problem_key: label, n, and for a
**                  problem defined in a scenario the hash of its f)
**      288     64  the problem's kind ("medakzo", "user")
**      352     64  the problem's parameters, 8 doubles (param[])
**      416     64  method name
**      480     64  variant name (the writer's; not checked)
**      544     64  backend name (the writer's; not checked)
**      608      8  t
**      616      8  h_next
**      624      8  h, the last step size used
**      632      8  err_last
**      640     32  steps, accepted, rejected, nfev (8 bytes each)
**      672    8 n  y
**        .    8 n  F0 = f(t, y) (when flags bit 0)
**        .     32  SHA-256 of every byte before it
**
** The text fields are NUL-padded (a longer name is refused on writing).
** Byte order and float format are spelled out, so a file moves between
** machines; only the same variant on the same machine promises the same
** bits after it.
*/
#define ODB_CHECKPOINT_VERSION 1

/*
** Writes s's state and controller to path, whole or not at all
** (core/io/odb_wfile.h: a temporary file renamed over path once complete
** and synced, so that a crash or a kill during the write leaves the
** previous file as it was). ODB_ERR_IO naming the file (shown escaped)
** and the reason.
*/
odb_status odb_solver_checkpoint_write(odb_solver *s, const char *path);

/*
** Restores s from a checkpoint written by odb_solver_checkpoint_write: the
** state and t (as odb_solver_set_state), h_next, F[0] and the running
** totals. Refused with ODB_ERR_ARG and the reason, naming the file shown
** escaped, when the file is not a checkpoint, has another format
** version, is truncated, longer than its header says, or corrupted (its
** SHA-256), or holds another problem (kind, key or parameters), another
** size n, another method or another m; ODB_ERR_IO when it cannot be read.
** s is changed only on success. The variant and backend may differ from
** the writer's (every variant computes the same steps up to rounding).
*/
odb_status odb_solver_checkpoint_read(odb_solver *s, const char *path);

#endif
