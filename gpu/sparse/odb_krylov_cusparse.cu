/* odb_krylov_cusparse.cu - the "cusparse" Krylov implementation: one
** cuSPARSE or cuBLAS call per operation of BiCGStab and QMR, the scalar
** recurrences on the host (core/sparse/odb_krylov_state.h). The library
** baseline of the other two.
*/
#include "odb_krylov_gpu.cuh"

/* {====== impl "cusparse": one library call per operation */

#define BL(call) ODB_CUBLAS_CHECK(call)
#define SP(call) ODB_CUSPARSE_CHECK(call)

void cs_free(cs_ws *w) {
  for (int i = 0; i < 14; i++) {
    if (w->dv[i]) cusparseDestroyDnVec(w->dv[i]);
    dfree(w->v[i]);
  }
  if (w->mat) cusparseDestroySpMat(w->mat);
  if (w->sp) cusparseDestroy(w->sp);
  if (w->blas) cublasDestroy(w->blas);
  dfree(w->rp); dfree(w->col); dfree(w->val); dfree(w->buf); dfree(w->dots);
  red_free(&w->red);
  memset(w, 0, sizeof *w);
}

/* CSR with 32-bit indices on the device, nv vectors with descriptors, the
** SpMV work buffer (for A^T too when trans). */
odb_status cs_setup(cs_ws *w, const odb_sparse *A, int nv, int trans) {
  long n = A->n, nnz = A->rowptr[n];
  size_t bsz = 0, bsz2 = 0;
  double one = 1.0, zero = 0.0;
  if (n >= INT32_MAX || nnz >= INT32_MAX)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "impl cusparse: order %ld / %ld nonzeros need 64-bit indices", n, nnz);
  w->n = n;
  int32_t *rp32 = (int32_t *)malloc(((size_t)n + 1) * sizeof *rp32);
  if (!rp32) return ODB_FAIL(ODB_ERR_NOMEM, "row pointers of order %ld", n);
  for (long i = 0; i <= n; i++) rp32[i] = (int32_t)A->rowptr[i];
  odb_status st = dupload(&w->rp, rp32, ((size_t)n + 1) * sizeof *rp32, "CSR row pointers");
  free(rp32);
  ODB_TRY(st);
  ODB_TRY(dupload(&w->col, A->col, (size_t)(nnz ? nnz : 1) * sizeof(int32_t), "CSR columns"));
  ODB_TRY(dupload(&w->val, A->val, (size_t)(nnz ? nnz : 1) * sizeof(double), "CSR values"));
  BL(cublasCreate(&w->blas));
  SP(cusparseCreate(&w->sp));
  SP(cusparseCreateCsr(&w->mat, n, n, nnz, w->rp, w->col, w->val, CUSPARSE_INDEX_32I,
                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  for (int i = 0; i < nv; i++) {
    ODB_TRY(dalloc(&w->v[i], (size_t)n * sizeof(double), "Krylov vectors"));
    ODB_CUDA_CHECK(cudaMemset(w->v[i], 0, (size_t)n * sizeof(double)));
    SP(cusparseCreateDnVec(&w->dv[i], n, w->v[i], CUDA_R_64F));
  }
  SP(cusparseSpMV_bufferSize(w->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, w->mat, w->dv[0], &zero,
                             w->dv[1], CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bsz));
  if (trans)
    SP(cusparseSpMV_bufferSize(w->sp, CUSPARSE_OPERATION_TRANSPOSE, &one, w->mat, w->dv[0], &zero,
                               w->dv[1], CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bsz2));
  ODB_TRY(dalloc(&w->buf, bsz > bsz2 ? bsz : bsz2, "cuSPARSE SpMV buffer"));
  ODB_TRY(dalloc(&w->dots, 4 * sizeof(double), "dot results"));
  ODB_TRY(red_alloc(&w->red, n, sm_count()));
  return ODB_OK;
}

/* v[y] = op(A) v[x]. */
odb_status cs_spmv(cs_ws *w, int trans, int x, int y) {
  double one = 1.0, zero = 0.0;
  SP(cusparseSpMV(w->sp, trans ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                  w->mat, w->dv[x], &zero, w->dv[y], CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, w->buf));
  return ODB_OK;
}

/* v[r] = v[b] - A v[x]. */
static odb_status cs_residual(cs_ws *w, int b, int x, int r) {
  double m1 = -1.0, one = 1.0;
  ODB_TRY(cs_spmv(w, 0, x, r));
  BL(cublasDscal(w->blas, (int)w->n, &m1, w->v[r], 1));
  BL(cublasDaxpy(w->blas, (int)w->n, &one, w->v[b], 1, w->v[r], 1));
  return ODB_OK;
}

/* The nd dot products v[p[2j]].v[p[2j+1]] of one step: one cuBLAS call
** each (device pointer mode), then one copy to the host that waits. */
static odb_status cs_dots(cs_ws *w, int nd, const int *p, double *out) {
  BL(cublasSetPointerMode(w->blas, CUBLAS_POINTER_MODE_DEVICE));
  for (int j = 0; j < nd; j++) {
    cublasStatus_t s = cublasDdot(w->blas, (int)w->n, w->v[p[2 * j]], 1, w->v[p[2 * j + 1]], 1, w->dots + j);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasSetPointerMode(w->blas, CUBLAS_POINTER_MODE_HOST);
      return ODB_CUBLAS_STATUS(s, "cublasDdot");
    }
  }
  BL(cublasSetPointerMode(w->blas, CUBLAS_POINTER_MODE_HOST));
  ODB_CUDA_CHECK(cudaMemcpy(out, w->dots, (size_t)nd * sizeof *out, cudaMemcpyDeviceToHost));
  return ODB_OK;
}

/* One dot product (waits). */
static odb_status cs_dot(cs_ws *w, int a, int b, double *out) {
  int p[2] = {a, b};
  return cs_dots(w, 1, p, out);
}

/* Two dot products (one wait). */
static odb_status cs_dot2(cs_ws *w, int a, int b, int c, int d, double *o1, double *o2) {
  int p[4] = {a, b, c, d};
  double o[2];
  ODB_TRY(cs_dots(w, 2, p, o));
  *o1 = o[0]; *o2 = o[1];
  return ODB_OK;
}

/* Three dot products (one wait). */
static odb_status cs_dot3(cs_ws *w, const int *p, double *o1, double *o2, double *o3) {
  double o[3];
  ODB_TRY(cs_dots(w, 3, p, o));
  *o1 = o[0]; *o2 = o[1]; *o3 = o[2];
  return ODB_OK;
}

/* v[y] += alpha v[x]. */
static odb_status cs_axpy(cs_ws *w, double alpha, int x, int y) {
  BL(cublasDaxpy(w->blas, (int)w->n, &alpha, w->v[x], 1, w->v[y], 1));
  return ODB_OK;
}

static odb_status cs_scal(cs_ws *w, double alpha, int x) {
  BL(cublasDscal(w->blas, (int)w->n, &alpha, w->v[x], 1));
  return ODB_OK;
}

static odb_status cs_copy(cs_ws *w, int x, int y) {
  BL(cublasDcopy(w->blas, (int)w->n, w->v[x], 1, w->v[y], 1));
  return ODB_OK;
}

/* BiCGStab by library calls. Vectors: 0 r, 1 rhat, 2 p, 3 v, 4 s, 5 t, 6 x,
** 7 b. The dots that one step needs go out together and are read back
** with one wait (4 waits per iteration). */
static odb_status cs_bicg(cs_ws *w, kstate *s, double *hist) {
  enum { R, RH, P, V, S, T, X, B };
  double rr, rhr, rhv, vv, ss, tt, ts;
  ODB_TRY(cs_residual(w, B, X, R));
  ODB_TRY(cs_copy(w, R, RH));
  ODB_TRY(cs_dot(w, R, R, &rr));
  bicg_init(s, hist, rr);
  while (s->outcome == KS_RUN) {
    ODB_TRY(cs_axpy(w, -s->omega, V, P));
    ODB_TRY(cs_scal(w, s->beta, P));
    ODB_TRY(cs_axpy(w, 1.0, R, P));
    ODB_TRY(cs_spmv(w, 0, P, V));
    ODB_TRY(cs_dot2(w, RH, V, V, V, &rhv, &vv));
    bicg_after_v(s, rhv, vv);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_copy(w, R, S));
    ODB_TRY(cs_axpy(w, -s->alpha, V, S));
    ODB_TRY(cs_dot(w, S, S, &ss));
    bicg_after_s(s, hist, ss);
    if (s->half) { ODB_TRY(cs_axpy(w, s->alpha, P, X)); break; }
    ODB_TRY(cs_spmv(w, 0, S, T));
    ODB_TRY(cs_dot2(w, T, T, T, S, &tt, &ts));
    bicg_after_t(s, tt, ts);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_axpy(w, s->alpha, P, X));
    ODB_TRY(cs_axpy(w, s->omega, S, X));
    ODB_TRY(cs_copy(w, S, R));
    ODB_TRY(cs_axpy(w, -s->omega, T, R));
    ODB_TRY(cs_dot2(w, R, R, RH, R, &rr, &rhr));
    bicg_end(s, hist, rr, rhr);
  }
  return ODB_OK;
}

/* QMR by library calls, A^T x through the transpose op. Vectors: 0 r,
** 1 vt, 2 wt, 3 v, 4 w, 5 p, 6 q, 7 pt, 8 d, 9 s, 10 x, 11 b. */
static odb_status cs_qmr(cs_ws *w, kstate *s, double *hist) {
  enum { R, VT, WT, V, W, P, Q, PT, D, S, X, B };
  double rr, qpt, qq, ptpt, vv, ww, wv;
  ODB_TRY(cs_residual(w, B, X, R));
  ODB_TRY(cs_copy(w, R, VT));
  ODB_TRY(cs_copy(w, R, WT));
  ODB_TRY(cs_dot(w, R, R, &rr));
  qmr_init(s, hist, rr);
  while (s->outcome == KS_RUN) {
    ODB_TRY(cs_copy(w, VT, V));
    ODB_TRY(cs_scal(w, 1.0 / s->qrho, V));
    ODB_TRY(cs_copy(w, WT, W));
    ODB_TRY(cs_scal(w, 1.0 / s->xi, W));
    ODB_TRY(cs_scal(w, -s->cp, P));
    ODB_TRY(cs_axpy(w, 1.0, V, P));
    ODB_TRY(cs_scal(w, -s->cq, Q));
    ODB_TRY(cs_axpy(w, 1.0, W, Q));
    ODB_TRY(cs_spmv(w, 0, P, PT));
    {
      const int p3[6] = {Q, PT, Q, Q, PT, PT};
      ODB_TRY(cs_dot3(w, p3, &qpt, &qq, &ptpt));
    }
    qmr_after_pt(s, qpt, qq, ptpt);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_copy(w, PT, VT));
    ODB_TRY(cs_axpy(w, -s->qbeta, V, VT));
    ODB_TRY(cs_spmv(w, 1, Q, WT));
    ODB_TRY(cs_axpy(w, -s->qbeta, W, WT));
    {
      const int p3[6] = {VT, VT, WT, WT, WT, VT};
      ODB_TRY(cs_dot3(w, p3, &vv, &ww, &wv));
    }
    qmr_after_vw(s, vv, ww, wv);
    if (s->outcome != KS_RUN) break;
    ODB_TRY(cs_scal(w, s->c, D));
    ODB_TRY(cs_axpy(w, s->eta, P, D));
    ODB_TRY(cs_scal(w, s->c, S));
    ODB_TRY(cs_axpy(w, s->eta, PT, S));
    ODB_TRY(cs_axpy(w, 1.0, D, X));
    ODB_TRY(cs_axpy(w, -1.0, S, R));
    ODB_TRY(cs_dot(w, R, R, &rr));
    qmr_end(s, hist, rr);
  }
  return ODB_OK;
}

/* The whole cusparse solve on workspace w (set up by the caller). */
odb_status cs_run(cs_ws *w, const odb_sparse *A, odb_krylov_method m, const double *b, double *x,
                         kout *o) {
  int X = m == ODB_KRYLOV_QMR ? 10 : 6, B = X + 1, Y = X + 2;
  long n = A->n;
  ktimer t = {NULL, NULL};
  odb_status st;
  ODB_TRY(cs_setup(w, A, Y + 1, m == ODB_KRYLOV_QMR));
  ODB_CUDA_CHECK(cudaMemcpy(w->v[X], x, (size_t)n * sizeof *x, cudaMemcpyHostToDevice));
  ODB_CUDA_CHECK(cudaMemcpy(w->v[B], b, (size_t)n * sizeof *b, cudaMemcpyHostToDevice));
  st = timer_start(&t);
  if (st == ODB_OK) st = m == ODB_KRYLOV_QMR ? cs_qmr(w, &o->st, o->hist) : cs_bicg(w, &o->st, o->hist);
  if (st == ODB_OK) st = timer_stop(&t, &o->seconds);
  timer_free(&t);
  ODB_TRY(st);
  ODB_CUDA_CHECK(cudaMemcpy(x, w->v[X], (size_t)n * sizeof *x, cudaMemcpyDeviceToHost));
  ODB_TRY(cs_spmv(w, 0, X, Y));
  return diff_norm(&w->red, n, w->v[B], w->v[Y], &o->rtrue);
}

/* }====== */
