/* erk_fused.c - variant "fused": each stage's linear combination fused
   into the RHS sweep through a sliding window; the new solution and the
   error estimate fused into the last sweep. */
#include "erk_common.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#endif

/*
** For stage l the sweep walks the components in blocks [j0, j1) of B. f on
** a block needs the argument Y_l on [j0 - d, j1 + d), so the window buffer W
** (2d + 4B doubles, cache resident) holds Y_l there: each block computes
** only the components the previous one did not, from y and the F_i. Y_l never goes to memory. The last stage also writes the new
** solution and adds the block's share of the error norm while the block's
** F values are still in cache; for non-FSAL methods F_{s-1} lives only in
** the block buffer fb.
** Assumes a limited access distance d < n and an even block size, so block
** edges fall between grid points.
*/
#define WIN_BLOCKS 4

struct fused_data {
  erk_plan plan;
  long B, d;
  double *W;      /* window buffer, wcap = 2d + WIN_BLOCKS * B */
  long wcap;
  double *fb;     /* last stage's F block (non-FSAL), B */
  double *eb;     /* error estimate block, B */
  double *yb;     /* new-solution block (non-FSAL with streaming stores), B */
  int nt;         /* 1: write F and ynew with non-temporal stores */
};

/*
** dst[0..len) = src[0..len) with non-temporal stores where the CPU has
** them: results that are read again only in a later sweep bypass the caches
** and skip the read-for-ownership of ordinary stores. Callers fence with
** stream_fence() before the data is read again.
*/
static void stream_copy(double *restrict dst, const double *restrict src,
                        long len) {
  long k = 0;
#if defined(__x86_64__) && defined(__AVX512F__)
  for (; k < len && ((uintptr_t)(dst + k) & 63); ++k) dst[k] = src[k];
  for (; k + 8 <= len; k += 8)
    _mm512_stream_pd(dst + k, _mm512_loadu_pd(src + k));
#elif defined(__x86_64__) && defined(__AVX__)
  for (; k < len && ((uintptr_t)(dst + k) & 31); ++k) dst[k] = src[k];
  for (; k + 4 <= len; k += 4)
    _mm256_stream_pd(dst + k, _mm256_loadu_pd(src + k));
#elif defined(__x86_64__) && defined(__SSE2__)
  for (; k < len && ((uintptr_t)(dst + k) & 15); ++k) dst[k] = src[k];
  for (; k + 2 <= len; k += 2) _mm_stream_pd(dst + k, _mm_loadu_pd(src + k));
#endif
  for (; k < len; ++k) dst[k] = src[k];
}

static void stream_fence(void) {
#if defined(__x86_64__) && defined(__SSE2__)
  _mm_sfence();
#endif
}

static int fused_applies(const odb_problem *p, const odb_method *m, char *why,
                         size_t nwhy) {
  return erk_window_applies("fused", p, m, why, nwhy);
}

/* Default block: 4096 components (tuned on BRUSS2D); always even. */
static long fused_block(const odb_solver *s, long d) {
  long B = s->opts.block > 0 ? s->opts.block : 4096;
  (void)d;
  if (B > s->n) B = s->n;
  B = (B + 7) & ~7L;     /* a multiple of 8: 64-byte aligned blocks */
  return B;
}

/* See erk_common.h. */
void erk_fused_free(fused_data *fd) {
  if (!fd) return;
  free(fd->W);
  free(fd->fb);
  free(fd->eb);
  free(fd->yb);
  free(fd);
}

static void fused_fini(odb_solver *s) {
  erk_fused_free(s->vdata);
  s->vdata = NULL;
}

/*
** Streaming stores pay off once the vectors no longer fit in the caches
** (the stage vectors, y and ynew beyond the total last-level cache); below
** that they would push data out that the next sweep reads. The solver
** option streaming (1 on, -1 off) overrides the choice.
*/
static int use_streaming(const odb_solver *s) {
  double ws = (double)(s->method->s + 2) * (double)s->n * sizeof(double);
  size_t llc = s->ctx ? odb_topo_llc_total(&s->ctx->topo) : 0;
  if (s->opts.streaming) return s->opts.streaming > 0;
  return llc > 0 && ws > (double)llc;
}

/* See erk_common.h. */
odb_status erk_fused_make(odb_solver *s, fused_data **out) {
  fused_data *fd = calloc(1, sizeof *fd);
  *out = fd;
  if (!fd) return ODB_FAIL(ODB_ERR_NOMEM, "%s: data", s->variant->name);
  ODB_TRY(erk_plan_make(s->method, &fd->plan));
  fd->d = s->problem->d;
  fd->B = fused_block(s, fd->d);
  s->block = fd->B;
  fd->wcap = 2 * fd->d + WIN_BLOCKS * fd->B;
  fd->W = odb_doubles_alloc(fd->wcap);
  fd->fb = odb_doubles_alloc(fd->B);
  fd->eb = odb_doubles_alloc(fd->B);
  fd->yb = odb_doubles_alloc(fd->B);
  fd->nt = use_streaming(s);
  if (!fd->W || !fd->fb || !fd->eb || !fd->yb)
    return ODB_FAIL(ODB_ERR_NOMEM, "%s: window of %ld doubles",
                    s->variant->name, fd->wcap);
  return ODB_OK;
}

static odb_status fused_init(odb_solver *s) {
  fused_data *fd;
  odb_status st = erk_fused_make(s, &fd);
  s->vdata = fd;
  return st;
}

/*
** New solution and error-norm share of block [j0, j0+len) of the last
** stage. fl holds the block's F_{s-1} values (fb, or F_{s-1} + j0).
*/
static void finish_block(odb_solver *s, fused_data *fd, const double *Wj,
                         const double *fl, long j0, long len, double h,
                         double *acc) {
  const odb_method *m = s->method;
  const double *Fp[ERK_MAX_STAGES], *yn;
  for (int i = 0; i < m->s - 1; ++i) Fp[i] = s->F[i] + j0;
  Fp[m->s - 1] = fl;
  if (m->fsal) {  /* Y_{s-1} = y + h sum b_i F_i is the new solution */
    yn = Wj;
    if (fd->nt) stream_copy(s->ynew + j0, Wj, len);
    else memcpy(s->ynew + j0, Wj, (size_t)len * sizeof(double));
  } else if (fd->nt) {
    erk_lc(fd->yb, s->y + j0, Fp, &fd->plan.b, h, len);
    stream_copy(s->ynew + j0, fd->yb, len);
    yn = fd->yb;
  } else {
    erk_lc(s->ynew + j0, s->y + j0, Fp, &fd->plan.b, h, len);
    yn = s->ynew + j0;
  }
  if (fd->plan.e.n > 0) {
    erk_lc(fd->eb, NULL, Fp, &fd->plan.e, h, len);
    erk_norm_acc(fd->eb, s->y + j0, yn, len, s->opts.atol, s->opts.rtol,
                 acc);
  }
}

/*
** One stage sweep (l >= 1) over the components [lo, hi) with the sliding
** window (the whole vector for this variant; a rank's interior for the
** MPI variants, see erk_common.h). W holds Y_l for the components
** [wbase, whi); the window only moves (the shared 2d components to the
** front of W) when the next block would run past W's end, so the move
** costs 2d per WIN_BLOCKS blocks.
*/
void erk_fused_stage(odb_solver *s, fused_data *fd, int l, double h, long lo,
                     long hi, double *acc) {
  const odb_problem *p = s->problem;
  const odb_method *m = s->method;
  const double *Fp[ERK_MAX_STAGES];
  int last = l == m->s - 1;
  long n = s->n, d = fd->d, B = fd->B;
  long wbase = lo - d > 0 ? lo - d : 0, whi = wbase;
  double tl = s->t + m->c[l] * h;
  for (long j0 = lo; j0 < hi; j0 += B) {
    long j1 = j0 + B < hi ? j0 + B : hi;
    long nlo = j0 - d > 0 ? j0 - d : 0, nhi = j1 + d < n ? j1 + d : n, a;
    double *dst;
    if (nhi - wbase > fd->wcap) {
      memmove(fd->W, fd->W + (nlo - wbase), (size_t)(whi - nlo) * sizeof(double));
      wbase = nlo;
    }
    a = whi > nlo ? whi : nlo;
    for (int i = 0; i < l; ++i) Fp[i] = s->F[i] + a;
    erk_lc(fd->W + (a - wbase), s->y + a, Fp, &fd->plan.a[l], h, nhi - a);
    whi = nhi;
    dst = fd->nt || (last && !m->fsal) ? fd->fb : s->F[l] + j0;
    p->rhs(p, tl, fd->W, wbase, dst, j0, j1);
    if (fd->nt && !(last && !m->fsal)) stream_copy(s->F[l] + j0, dst, j1 - j0);
    if (last) finish_block(s, fd, fd->W + (j0 - wbase), dst, j0, j1 - j0, h, acc);
  }
  stream_fence();
}

static odb_status fused_attempt(odb_solver *s, double h, double *err) {
  fused_data *fd = s->vdata;
  const odb_problem *p = s->problem;
  double acc = 0.0;
  if (!s->fsal_ready) p->rhs(p, s->t, s->y, 0, s->F[0], 0, s->n);
  for (int l = 1; l < s->method->s; ++l)
    erk_fused_stage(s, fd, l, h, 0, s->n, &acc);
  *err = fd->plan.e.n > 0 ? __builtin_sqrt(acc / (double)s->n) : 0.0;
  return ODB_OK;
}

/*
** Stage l in 1..s-2 reads y and the F_i with a_li != 0 and writes F_l. The
** last sweep reads y and every F_i (i < s-1) that its argument, the new
** solution or the estimate needs, and writes ynew (and F_{s-1} under FSAL).
*/
void erk_fused_bytes(const erk_plan *pl, int fsal, double v, int stage0,
                     double *r, double *w) {
  int S = pl->s, need[ERK_MAX_STAGES] = {0}, nneed = 0;
  double rd = 0, wr = 0;
  if (stage0) { rd += v; wr += v; }
  for (int l = 1; l < S - 1; ++l) {
    rd += v * (1 + pl->a[l].n);
    wr += v;
  }
  for (int q = 0; q < pl->a[S - 1].n; ++q) need[pl->a[S - 1].idx[q]] = 1;
  if (!fsal)
    for (int q = 0; q < pl->b.n; ++q) need[pl->b.idx[q]] = 1;
  for (int q = 0; q < pl->e.n; ++q) need[pl->e.idx[q]] = 1;
  for (int i = 0; i < S - 1; ++i) nneed += need[i];
  rd += v * (1 + nneed);
  wr += v * (fsal ? 2 : 1);
  *r = rd;
  *w = wr;
}

static void fused_traffic(const odb_solver *s, int stage0, double *r,
                          double *w) {
  const fused_data *fd = s->vdata;
  erk_fused_bytes(&fd->plan, s->method->fsal, (double)s->n * sizeof(double),
                  stage0, r, w);
}

const odb_variant odb_variant_fused = {
  .name = "fused",
  .doc = "each stage's linear combination fused into the RHS sweep (sliding "
         "window of 2d + 4 blocks), new solution and error estimate fused into "
         "the last sweep; parameter block",
  .backend = "cpu",
  .applies = fused_applies,
  .init = fused_init,
  .fini = fused_fini,
  .attempt = fused_attempt,
  .traffic = fused_traffic,
};
