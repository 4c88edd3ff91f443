/* odb_dist_petsc.c - the PETSc peer (odb_dist_petsc.h): PETSc's MPIAIJ of
** the same rows on the same ranks, and KSPBCGS / KSPQMRCGS on it.
**
** Assumes: MPI is up (odb_dist_init) and every rank calls each function at
** the same point with the same whole CSR, owners and right-hand side, as
** the binding's ob.matrix does. PETSc starts at the first matrix, on
** odebench's communicator, and ends in odb_dist_finalize just before MPI
** (odb_dist_at_finalize). PETSc's own collectives wait without
** ODEBENCH_MPI_TIMEOUT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_dist.h"
#include "odb_dist_petsc.h"

/* after odebench's headers: PETSc's <complex.h> defines I, a field name
   of odb_reservoir */
#include <petscksp.h>

struct odb_dpetsc {
  Mat A;
  Vec b, x, r;
  long n;
  PetscInt rstart, nloc;
  PetscInt *rows;        /* nloc: the global row of each PETSc row here */
};

static int petsc_up;     /* PetscInitialize ran (ended at finalize) */

static void petsc_end(void)
{
  if (petsc_up) PetscFinalize();
  petsc_up = 0;
}

int odb_dpetsc_available(void) { return 1; }

/* A PETSc error code as odebench's error, naming the call. */
static odb_status petsc_fail(PetscErrorCode e, const char *call)
{
  const char *text = NULL;
  PetscErrorMessage(e, &text, NULL);
  return ODB_FAIL(ODB_ERR_BACKEND, "PETSc peer: %s: %s (error %d)", call, text ? text : "?", (int)e);
}
#define PTRY(call) do { PetscErrorCode e_ = (call); if (e_) { st = petsc_fail(e_, #call); goto fail; } } while (0)

static odb_status petsc_start(void)
{
  PetscErrorCode e;
  if (petsc_up) return ODB_OK;
  if (!odb_dist_active())
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "PETSc peer: needs MPI (run under mpirun, or ODEBENCH_MPI=1)");
  PETSC_COMM_WORLD = odb_dist_comm();
  /* no signal handlers of PETSc's: odebench's stop signals stay ours */
  e = PetscOptionsSetValue(NULL, "-no_signal_handler", "true");
  if (!e) e = PetscInitializeNoArguments();
  if (e) return petsc_fail(e, "PetscInitializeNoArguments");
  petsc_up = 1;
  /* PETSc's errors come back as codes, reported once by petsc_fail,
     not also printed as PETSc's traceback */
  e = PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  if (e) return petsc_fail(e, "PetscPushErrorHandler");
  return odb_dist_at_finalize(petsc_end);
}

void odb_dpetsc_free(odb_dpetsc *P)
{
  if (!P) return;
  if (petsc_up) {
    MatDestroy(&P->A);
    VecDestroy(&P->b);
    VecDestroy(&P->x);
    VecDestroy(&P->r);
  }
  free(P->rows);
  free(P);
}

odb_status odb_dpetsc_create(const odb_sparse *csr, const int *own, int rank, int size,
                             odb_dpetsc **out)
{
  odb_status st = ODB_OK;
  long n = csr->n;
  PetscInt *pos = NULL, *dnz = NULL, *onz = NULL, *cols = NULL, *start = NULL;
  odb_dpetsc *P = NULL;
  *out = NULL;
  if (csr->fmt != ODB_FMT_CSR) return ODB_FAIL(ODB_ERR_ARG, "PETSc peer: the whole matrix must be CSR");
  ODB_TRY(petsc_start());
  P = calloc(1, sizeof *P);
  pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
  start = calloc((size_t)size + 1, sizeof *start);
  if (!P || !pos || !start) goto nomem;
  P->n = n;
  /* PETSc's numbering: rank 0's rows, then rank 1's, ..., each ascending */
  for (long r = 0; r < n; r++) start[own[r] + 1]++;
  for (int q = 0; q < size; q++) start[q + 1] += start[q];
  {
    PetscInt *next = malloc((size_t)size * sizeof *next);
    if (!next) goto nomem;
    memcpy(next, start, (size_t)size * sizeof *next);
    for (long r = 0; r < n; r++) pos[r] = next[own[r]]++;
    free(next);
  }
  P->rstart = start[rank];
  P->nloc = start[rank + 1] - start[rank];
  P->rows = malloc((size_t)(P->nloc ? P->nloc : 1) * sizeof *P->rows);
  dnz = calloc((size_t)(P->nloc ? P->nloc : 1), sizeof *dnz);
  onz = calloc((size_t)(P->nloc ? P->nloc : 1), sizeof *onz);
  if (!P->rows || !dnz || !onz) goto nomem;
  long maxrow = 0;
  for (long r = 0; r < n; r++) {
    if (own[r] != rank) continue;
    PetscInt i = pos[r] - P->rstart;
    P->rows[i] = (PetscInt)r;
    for (int64_t e = csr->rowptr[r]; e < csr->rowptr[r + 1]; e++) {
      PetscInt c = pos[csr->col[e]];
      if (c >= P->rstart && c < P->rstart + P->nloc) dnz[i]++;
      else onz[i]++;
    }
    if (csr->rowptr[r + 1] - csr->rowptr[r] > maxrow) maxrow = (long)(csr->rowptr[r + 1] - csr->rowptr[r]);
  }
  cols = malloc((size_t)(maxrow ? maxrow : 1) * sizeof *cols);
  if (!cols) goto nomem;
  PTRY(MatCreateAIJ(PETSC_COMM_WORLD, P->nloc, P->nloc, (PetscInt)n, (PetscInt)n, 0, dnz, 0, onz, &P->A));
  for (PetscInt i = 0; i < P->nloc; i++) {
    long r = (long)P->rows[i];
    PetscInt row = P->rstart + i, len = (PetscInt)(csr->rowptr[r + 1] - csr->rowptr[r]);
    for (PetscInt j = 0; j < len; j++) cols[j] = pos[csr->col[csr->rowptr[r] + j]];
    PTRY(MatSetValues(P->A, 1, &row, len, cols, csr->val + csr->rowptr[r], INSERT_VALUES));
  }
  PTRY(MatAssemblyBegin(P->A, MAT_FINAL_ASSEMBLY));
  PTRY(MatAssemblyEnd(P->A, MAT_FINAL_ASSEMBLY));
  PTRY(MatCreateVecs(P->A, &P->x, &P->b));
  PTRY(VecDuplicate(P->b, &P->r));
  *out = P;
  P = NULL;
  goto done;
nomem:
  st = ODB_FAIL(ODB_ERR_NOMEM, "PETSc peer: the matrix of order %ld on rank %d", n, rank);
fail:
done:
  odb_dpetsc_free(P);
  free(pos); free(start); free(dnz); free(onz); free(cols);
  return st;
}

odb_status odb_dpetsc_solve(odb_dpetsc *P, const double *b, const char *method, double tol,
                            long maxit, odb_dpetsc_result *out)
{
  odb_status st = ODB_OK;
  KSP ksp = NULL;
  PC pc;
  PetscScalar *bv;
  PetscInt its = 0;
  PetscReal rnorm = 0, bnorm = 0, tnorm = 0;
  KSPConvergedReason why;
  KSPType type;
  double t0, sec;
  memset(out, 0, sizeof *out);
  if (!strcmp(method, "bicgstab")) type = KSPBCGS;
  else if (!strcmp(method, "qmrcgs")) type = KSPQMRCGS;
  else return ODB_FAIL(ODB_ERR_ARG, "PETSc peer: method must be \"bicgstab\" or \"qmrcgs\", got \"%s\"",
                       method);
  if (!(tol > 0 && tol < 1)) return ODB_FAIL(ODB_ERR_ARG, "PETSc peer: tol must be in (0, 1), got %g", tol);
  if (maxit < 1 || maxit > 1000000000L)
    return ODB_FAIL(ODB_ERR_ARG, "PETSc peer: maxit must be in 1..1e9, got %ld", maxit);
  PTRY(VecGetArray(P->b, &bv));
  for (PetscInt i = 0; i < P->nloc; i++) bv[i] = b[P->rows[i]];
  PTRY(VecRestoreArray(P->b, &bv));
  PTRY(VecSet(P->x, 0.0));
  PTRY(VecNorm(P->b, NORM_2, &bnorm));
  PTRY(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PTRY(KSPSetOperators(ksp, P->A, P->A));
  PTRY(KSPSetType(ksp, type));
  PTRY(KSPGetPC(ksp, &pc));
  PTRY(PCSetType(pc, PCNONE));
  /* ||r|| <= tol ||b||: relative only (PETSc's absolute floor 0) */
  PTRY(KSPSetTolerances(ksp, (PetscReal)tol, 0.0, PETSC_DEFAULT, (PetscInt)maxit));
  PTRY(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PTRY(KSPSetUp(ksp));
  ODB_TRY(odb_dist_barrier("MPI_Barrier (before the PETSc solve)"));
  t0 = MPI_Wtime();
  PTRY(KSPSolve(ksp, P->b, P->x));
  sec = MPI_Wtime() - t0;
  ODB_TRY(odb_dist_allreduce_max(&sec, 1, "MPI_Allreduce (PETSc solve time)"));
  PTRY(KSPGetIterationNumber(ksp, &its));
  PTRY(KSPGetResidualNorm(ksp, &rnorm));
  PTRY(KSPGetConvergedReason(ksp, &why));
  PTRY(MatMult(P->A, P->x, P->r));
  PTRY(VecAYPX(P->r, -1.0, P->b));
  PTRY(VecNorm(P->r, NORM_2, &tnorm));
  out->converged = why > 0;
  out->iters = (long)its;
  out->seconds = sec;
  out->relres = bnorm > 0 ? (double)(rnorm / bnorm) : (double)rnorm;
  out->relres_true = bnorm > 0 ? (double)(tnorm / bnorm) : (double)tnorm;
  snprintf(out->reason, sizeof out->reason, "%s", KSPConvergedReasons[why]);
  snprintf(out->method, sizeof out->method, "%s", type);
fail:
  if (ksp) KSPDestroy(&ksp);
  return st;
}
