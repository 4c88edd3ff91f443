/* gen_rk_trapezoid.c - gpu_trapezoid with the whole step as the tile
   height: one row of single-block trapezoidal tiles across all stages and
   the inverted trapezoids between them. Rows of a lower height are
   gen_rk_hexagonal.c's. */
#include "gen_rk_int.h"

/*
** The step is one row of trapezoids of height s (every stage) over tiles
** of width W (the single-workgroup trapezoidal tiling that Korch and Werner
** review as related work, §3, with the whole step as the tile
** height). Kernel A, one block per tile [ta, tb), keeps every F_q of its
** tile in shared memory: F_0 on the whole tile, Y_l on the range of
** F_{l-1}, F_l on a range d narrower on each side with a neighbour (the
** trapezoid shrinks), and forms ynew, the estimate and the norm on the top
** range [ta + (s-1)d, tb - (s-1)d). It writes to memory only y's
** successors and, for kernel B, the F_p (p <= s-2) in bands of s d at its
** edges. Kernel B, one block per inner boundary x, fills the inverted
** trapezoid [x - l d, x + l d) of every level from those bands, y and its
** own levels, and forms the rest of ynew. So the argument vectors never
** reach memory, and F only at the tile edges. W >= (2s - 2) d keeps a
** band inside the valid range of its tile; both kernels' tiles live in
** shared memory, which bounds W and d.
*/

/* Shared-memory loads of the stages of t not yet in registers. */
static void put_loads_sm(odb_emit *b, const erk_terms *t, int *loaded,
                         const char *stride) {
  for (int i = 0; i < t->n; ++i) {
    int q = t->idx[i];
    if (loaded[q]) continue;
    put(b, "      const double f%d = Fs[%d * %s + k];\n", q, q, stride);
    loaded[q] = 1;
  }
}

/*
** The levels of one trapezoid (A: base [ta, tb) shrinking where lft/rgt;
** B: window around x growing). lo(l)/hi(l) are C expressions of the range
** of F_l; base is the index of component j in the shared arrays. fp[l]
** gets the FP64 instructions of Y_l's LC a component (l >= 1).
*/
static void put_levels(gen *g, int isB, int *fp) {
  odb_emit *b = &g->b;
  const char *st = isB ? "ODB_WIN" : "ODB_W";
  for (int l = 1; l < g->S; ++l) {
    int loaded[ODB_GEN_MAX_STAGES] = {0};
    if (isB)
      put(b, "  lo = x - %d * ODB_D; hi = x + %d * ODB_D < ODB_N ? "
             "x + %d * ODB_D : ODB_N;\n", l + 1, l + 1, l + 1);
    else
      put(b, "  lo = lft ? ta + %d * ODB_D : ta; hi = rgt ? tb - %d * ODB_D "
             ": tb;\n", l - 1, l - 1);
    put(b, "  for (odb_idx j = lo + (odb_idx)threadIdx.x; j < hi; j += ODB_T) "
           "{\n      const odb_idx k = j - base;\n");
    put_loads_sm(b, &g->e.a[l], loaded, st);
    put(b, "      Ys[k] = ");
    fp[l] = rkg_put_lc(b, "__ldg(a.y + j)", &g->e.a[l]);
    put(b, ";\n  }\n  __syncthreads();\n");
    if (isB)
      put(b, "  lo = x - %d * ODB_D; hi = x + %d * ODB_D < ODB_N ? "
             "x + %d * ODB_D : ODB_N;\n", l, l, l);
    else
      put(b, "  lo = lft ? ta + %d * ODB_D : ta; hi = rgt ? tb - %d * ODB_D "
             ": tb;\n", l, l);
    put(b, "  for (odb_idx j = lo + (odb_idx)threadIdx.x; j < hi; j += ODB_T)\n"
           "    Fs[%d * %s + (j - base)] = odb_rhs(j, a.tl[%d], Ys - base);\n"
           "  __syncthreads();\n", l, st, l);
  }
}

/* ynew, F_{s-1} (FSAL), the estimate and the norm on [lo, hi); returns
   their FP64 instructions a component. */
static int put_top(gen *g, const char *stride, const char *slot) {
  odb_emit *b = &g->b;
  int loaded[ODB_GEN_MAX_STAGES] = {0}, fp;
  put(b, "  double acc = 0.0;\n"
         "  for (odb_idx j = lo + (odb_idx)threadIdx.x; j < hi; j += ODB_T) {\n"
         "      const odb_idx k = j - base;\n"
         "      const double yj = __ldg(a.y + j);\n");
  put_loads_sm(b, &g->e.b, loaded, stride);
  put(b, "      const double yn = ");
  fp = rkg_put_lc(b, "yj", &g->e.b);
  put(b, ";\n      a.ynew[j] = yn;\n");
  if (g->m->fsal) {
    put_loads_sm(b, &(erk_terms){ .n = 1, .idx = { g->S - 1 } }, loaded,
                 stride);
    put(b, "      a.F[%d][j] = f%d;\n", g->S - 1, g->S - 1);
  }
  if (g->plan->has_err) {
    put_loads_sm(b, &g->e.e, loaded, stride);
    put(b, "      const double ej = ");
    fp += rkg_put_lc(b, NULL, &g->e.e) + RKG_FP64_NORM;
    put(b, ";\n      acc += odb_sq_scaled(ej, yj, yn, a.atol, a.rtol);\n");
  }
  put(b, "  }\n");
  if (g->plan->has_err)
    put(b, "  odb_reduce(a, acc, %s, 2u * (unsigned)ODB_NT - 1u);\n", slot);
  else
    put(b, "  (void)acc;\n");
  return fp;
}

/* Kernel A (fsal_load: F_0 from memory instead of f(y)); fp as
   put_levels, fp[S] the top's. */
static void gen_trap_a(gen *g, int fsal_load, int *fp) {
  odb_emit *b = &g->b;
  rkg_put_kernel_head(g, fsal_load ? "k_trapAf" : "k_trapA");
  put(b, "  extern __shared__ double sm[];\n"
         "  double *const Fs = sm;\n"
         "  double *const Ys = sm + ODB_S * ODB_W;\n"
         "  const odb_idx ta = (odb_idx)blockIdx.x * ODB_W, base = ta;\n"
         "  const odb_idx tb = ta + ODB_W < ODB_N ? ta + ODB_W : ODB_N;\n"
         "  const bool lft = ta > 0, rgt = tb < ODB_N;\n"
         "  odb_idx lo, hi;\n"
         "  for (odb_idx j = ta + (odb_idx)threadIdx.x; j < tb; j += ODB_T)\n"
         "    Fs[j - ta] = %s;\n"
         "  __syncthreads();\n",
      fsal_load ? "__ldg(a.F[0] + j)" : "odb_rhs(j, a.tl[0], a.y)");
  put_levels(g, 0, fp);
  /* the bands of F_p that kernel B needs, at both edges */
  put(b, "  for (int p = 0; p < ODB_S - 1; ++p) {\n"
         "    if (rgt) {\n"
         "      double *X = a.Y[0] + ((odb_idx)blockIdx.x * (ODB_S - 1) + p) "
         "* ODB_WIN - (tb - ODB_SD);\n"
         "      const odb_idx b0 = tb - ODB_SD > ta ? tb - ODB_SD : ta;\n"
         "      for (odb_idx j = b0 + (odb_idx)threadIdx.x; j < tb - p * "
         "ODB_D; j += ODB_T)\n"
         "        X[j] = Fs[p * ODB_W + (j - ta)];\n"
         "    }\n"
         "    if (lft) {\n"
         "      double *X = a.Y[0] + (((odb_idx)blockIdx.x - 1) * (ODB_S - 1) "
         "+ p) * ODB_WIN - (ta - ODB_SD);\n"
         "      const odb_idx b1 = ta + ODB_SD < tb ? ta + ODB_SD : tb;\n"
         "      for (odb_idx j = ta + p * ODB_D + (odb_idx)threadIdx.x; j < b1;"
         " j += ODB_T)\n"
         "        X[j] = Fs[p * ODB_W + (j - ta)];\n"
         "    }\n"
         "  }\n");
  put(b, "  lo = lft ? ta + (ODB_S - 1) * ODB_D : ta;\n"
         "  hi = rgt ? tb - (ODB_S - 1) * ODB_D : tb;\n");
  fp[g->S] = put_top(g, "ODB_W", "blockIdx.x");
  put(b, "}\n");
}

/* Kernel B: the inverted trapezoid around boundary x = (blockIdx + 1) W;
   fp as gen_trap_a's. */
static void gen_trap_b(gen *g, int *fp) {
  odb_emit *b = &g->b;
  rkg_put_kernel_head(g, "k_trapB");
  put(b, "  extern __shared__ double sm[];\n"
         "  double *const Fs = sm;\n"
         "  double *const Ys = sm + ODB_S * ODB_WIN;\n"
         "  const odb_idx x = ((odb_idx)blockIdx.x + 1) * ODB_W;\n"
         "  const odb_idx base = x - ODB_SD;\n"
         "  const odb_idx wb = x + ODB_SD < ODB_N ? x + ODB_SD : ODB_N;\n"
         "  odb_idx lo, hi;\n"
         "  for (int p = 0; p < ODB_S - 1; ++p) {\n"
         "    const double *X = a.Y[0] + ((odb_idx)blockIdx.x * (ODB_S - 1) + "
         "p) * ODB_WIN - base;\n"
         "    for (odb_idx j = base + (odb_idx)threadIdx.x; j < wb; j += ODB_T)"
         "\n"
         "      if (j < x - p * ODB_D || j >= x + p * ODB_D)\n"
         "        Fs[p * ODB_WIN + (j - base)] = __ldcg(X + j);\n"
         "  }\n"
         "  __syncthreads();\n");
  put_levels(g, 1, fp);
  put(b, "  lo = x - (ODB_S - 1) * ODB_D;\n"
         "  hi = x + (ODB_S - 1) * ODB_D < ODB_N ? x + (ODB_S - 1) * ODB_D "
         ": ODB_N;\n");
  fp[g->S] = put_top(g, "ODB_WIN", "(unsigned)ODB_NT + blockIdx.x");
  put(b, "}\n");
}

/*
** The FP64 instructions of kernel A (stage0: f of stage 0 too) over all
** tiles and of kernel B over all boundaries, from the counts a component
** fp[] (put_levels, put_top) and the ranges of the levels: tile [ta, tb)
** computes F_l on its range less l d at each side with a neighbour, Y_l
** on F_{l-1}'s and the top on F_{s-1}'s; boundary x computes Y_l on
** [x - (l + 1) d, x + (l + 1) d), F_l on [x - l d, x + l d) and the top
** on [x - (s - 1) d, x + (s - 1) d), all clipped to n.
*/
static void trap_fp64(gen *g, long W, long nt, const int *fp, double *a,
                      double *a_f0, double *bnd) {
  long S = g->S, d = g->p->d, n = g->p->n;
  double rhs = rkg_rhs_fp64(g);
  *a = *a_f0 = *bnd = 0;
  for (long i = 0; i < nt; ++i) {
    long ta = i * W, tb = ta + W < n ? ta + W : n;
    long sides = (ta > 0) + (tb < n);
    *a_f0 += rhs * (double)(tb - ta);
    for (long l = 1; l < S; ++l)
      *a += fp[l] * (double)(tb - ta - sides * (l - 1) * d) +
            rhs * (double)(tb - ta - sides * l * d);
    *a += fp[S] * (double)(tb - ta - sides * (S - 1) * d);
    if (i + 1 < nt) {   /* boundary x = tb */
      long x = tb;
      for (long l = 1; l < S; ++l) {
        long hy = x + (l + 1) * d < n ? x + (l + 1) * d : n;
        long hf = x + l * d < n ? x + l * d : n;
        *bnd += fp[l] * (double)(hy - (x - (l + 1) * d)) +
                rhs * (double)(hf - (x - l * d));
      }
      *bnd += fp[S] * (double)((x + (S - 1) * d < n ? x + (S - 1) * d : n) -
                               (x - (S - 1) * d));
    }
  }
  *a_f0 += *a;
}

/*
** Checks the tile against d and shared memory and generates both kernels.
** Traffic: y once (A; B reads its windows of 2 s d), ynew and F_{s-1}
** once, F_0 once after an FSAL step, the bands written by A and read by B.
*/
odb_status rkg_trapezoid(gen *g, const odb_gen_opts *o) {
  odb_gen_plan *pl = g->plan;
  long S = g->S, d = g->p->d, n = g->p->n, W = o->tile_w, nt;
  size_t smA, smB, per = (size_t)(S + 1) * sizeof(double);
  double xch = 0, v, fa, fa0, fb;
  int fp[ODB_GEN_MAX_STAGES + 1] = {0};
  if (W <= 0) W = (o->smem_max / (long)per) / 32 * 32;
  if (W > n) W = n;
  nt = (n + W - 1) / W;
  smA = per * (size_t)W;
  smB = per * (size_t)(2 * S * d);
  if (nt > 1 && W < (2 * S - 2) * d)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_trapezoid: tile width W = %ld "
                    "is smaller than (2s - 2) d = %ld (s = %ld, d = %ld); %s",
                    W, (2 * S - 2) * d, S, d, o->tile_w > 0 ? "give a wider "
                    "tile (block)" : "no tile that wide fits shared memory");
  if ((long)smA > o->smem_max || (nt > 1 && (long)smB > o->smem_max))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_trapezoid: the tiles need %zu "
                    "and %zu bytes of shared memory (W = %ld, d = %ld, s = "
                    "%ld); a block may have %ld", smA, nt > 1 ? smB : 0, W, d,
                    S, o->smem_max);
  pl->tile_w = W;
  pl->tile_h = S;
  pl->ntiles = nt;
  pl->nparts = 2 * nt - 1;
  pl->scratch[0] = nt > 1 ? (nt - 1) * (S - 1) * 2 * S * d : 1;
  pl->scratch[1] = 0;
  put(&g->b, "#define ODB_S %ld\n#define ODB_W ((odb_idx)%ld)\n"
             "#define ODB_NT ((odb_idx)%ld)\n#define ODB_SD (ODB_S * ODB_D)\n"
             "#define ODB_WIN (2 * ODB_SD)\n", S, W, nt);
  gen_trap_a(g, 0, fp);
  gen_trap_a(g, 1, fp);
  gen_trap_b(g, fp);
  trap_fp64(g, W, nt, fp, &fa, &fa0, &fb);
  for (long p = 0; p + 1 < S; ++p) xch += 2.0 * (double)((S - p) * d);
  v = nt > 1 ? (double)(nt - 1) / (double)n : 0;   /* per boundary */
  {
    double rA = 1, wA = 1 + (g->m->fsal ? 1 : 0) + xch * v;
    odb_gen_launch *l = rkg_add_launch(g, "k_trapA", ODB_GEN_IF_STAGE0, 1,
                                       rA, wA);
    if (l) { l->grid = ODB_GEN_GRID_TILES; l->smem = smA; l->fp64 = fa0; }
    l = rkg_add_launch(g, "k_trapAf", ODB_GEN_IF_FSAL, 1, rA + 1, wA);
    if (l) { l->grid = ODB_GEN_GRID_TILES; l->smem = smA; l->fp64 = fa; }
    if (nt > 1) {
      l = rkg_add_launch(g, "k_trapB", ODB_GEN_ALWAYS, 1,
                         xch * v + 2.0 * S * d * v, 0);
      if (l) { l->grid = ODB_GEN_GRID_BOUNDS; l->smem = smB; l->fp64 = fb; }
    }
  }
  return ODB_OK;
}
