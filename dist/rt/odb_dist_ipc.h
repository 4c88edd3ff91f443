/* odb_dist_ipc.h - freeing device memory that other ranks of the host map
   by CUDA IPC (odb_dist_ipc.c): the links between the GPUs of one host
   (dist/ode/dist_gpu.c, dist/sparse/odb_dist_link.cu) share it. Built
   with CUDA. */
#ifndef ODB_DIST_IPC_H
#define ODB_DIST_IPC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** CUDA leaves undefined a cudaFree of an allocation whose IPC handle
** another process has opened and not closed yet, and the ranks free their
** solvers and matrices when their own code gets there, not together (a
** collective at every free could hang on a rank that stopped). So each
** rank that mapped memory closes its mapping and then sets a word that
** the owner keeps for it in device memory; the owner hands its exported
** allocations here with the words of every rank that maps them, and they
** are freed once all those words are non-zero. What is still waiting is
** looked at again on every later call (and goes with the process).
**
** odb_dist_ipc_release: the nptrs allocations of ptrs (cudaMalloc'ed;
** NULL entries are skipped) wait for words[0..nwords) (device memory,
** inside one of ptrs or living as long) to be non-zero; the caller sets
** beforehand the words of the ranks that map nothing (its own). The
** allocations no one maps any more are freed at once, with those waiting
** from before. ptrs is copied; at most ODB_DIST_IPC_PTRS of them.
*/
#define ODB_DIST_IPC_PTRS 4
void odb_dist_ipc_release(void *const *ptrs, int nptrs, const unsigned *words,
                          int nwords);

/* Frees what waits and no rank maps any more (odb_dist_ipc_release). */
void odb_dist_ipc_reap(void);

/*
** Closes this rank's mapping mapped (bytes long, from
** cudaIpcOpenMemHandle; NULL: none) and says so in the owner's word
** *closed (its device memory, mapped; NULL: none): after the close where
** the word lies in another mapping, before it where the word lies in
** mapped itself (the owner may then see the word a moment before the
** mapping is gone; a mailbox's own words have no other place). Errors
** are dropped: the owner then waits on, which costs memory, not
** correctness.
*/
void odb_dist_ipc_close(void *mapped, size_t bytes, unsigned *closed);

#ifdef __cplusplus
}
#endif
#endif
