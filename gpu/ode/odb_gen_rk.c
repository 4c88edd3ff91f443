/* odb_gen_rk.c - generates the CUDA C of explicit RK steps from the
   method's tableau and the problem's f_j source. */
#include "odb_gen_rk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erk_common.h"

/*
** The data flow of a step (seeds/000, Sect. 2.1): per stage an LC builds
** the argument Y_l = y + h sum_q a_lq F_q and an RHS evaluates
** F_l = f(t_l, Y_l); then LCs build ynew = y + h sum b_q F_q and the
** estimate E = h sum (b_q - bhat_q) F_q, and a reduction (RED) forms
** sum (E_j / sk_j)^2. Zero coefficients drop their terms (erk_plan), so a
** kernel loads only the F_q it needs. Coefficients are written as exact
** hexadecimal literals and summed in the order of the CPU variants
** (erk_lc), so the GPU computes the same arithmetic up to contraction into
** fused multiply-adds.
*/

/* {====== a text buffer that counts its lines */

typedef struct sbuf {
  char *buf;
  size_t len, cap;
  int lines;             /* newlines written so far */
  int oom;
} sbuf;

/* Appends printf-style text; remembers running out of memory. */
static void put(sbuf *b, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  if (b->oom) return;
  for (;;) {
    va_start(ap, fmt);
    n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = 1;
      return;
    }
    if ((size_t)n < b->cap - b->len) break;
    {
      size_t cap = (b->cap + (size_t)n + 1) * 2;
      char *nb = realloc(b->buf, cap);
      if (!nb) {
        b->oom = 1;
        return;
      }
      b->buf = nb;
      b->cap = cap;
    }
  }
  for (const char *c = b->buf + b->len; *c; ++c) b->lines += *c == '\n';
  b->len += (size_t)n;
}

/* }====== */

/* {====== the data flow */

/* 1 when t uses stage q. */
static int uses(const erk_terms *t, int q) {
  for (int i = 0; i < t->n; ++i)
    if (t->idx[i] == q) return 1;
  return 0;
}

/* 1 when two linear combinations have the same terms and coefficients. */
static int same_terms(const erk_terms *x, const erk_terms *y) {
  if (x->n != y->n) return 0;
  for (int i = 0; i < x->n; ++i)
    if (x->idx[i] != y->idx[i] || x->coef[i] != y->coef[i]) return 0;
  return 1;
}

/*
** The state of generation: the plan of the method, whether the last
** argument is ynew itself (FSAL methods whose last row of A is b), and
** which F_l the reference variant must keep in memory.
*/
typedef struct gen {
  const odb_problem *p;
  const odb_method *m;
  erk_plan e;
  int S;
  int alias;             /* Y_{S-1} == ynew */
  int need_mem[ODB_GEN_MAX_STAGES];
  erk_terms ra[ODB_GEN_MAX_STAGES];   /* skew 2: Y_l's LC relative to
                                         Y_{l-1} (ra[l] = a[l] - a[l-1]) */
  int carry;             /* skew 2: stencil centre rows kept in registers */
  int whole;             /* skew 2: sub-strips of whole rows a block (0: a
                            strip with halo columns) */
  int star;              /* skew 2: f reads no diagonal neighbour, so a
                            barrier every second pass suffices */
  int early_store;       /* skew 2: the last stage stores its row of ynew */
  int devctl;            /* the kernel runs the step controller (args.ctl) */
  int lag;               /* skew 2: rows stage l runs behind stage l-1 (1:
                            stages in order, a barrier every pass) */
  int cluster;           /* stream2d: blocks of a cluster side by side along
                            a row, exchanging edge columns (1: none) */
  odb_gen_plan *plan;
  sbuf b;
} gen;

/*
** F_l must be written to memory when a later kernel reads it: an LC two or
** more stages on (the next one gets it in a register), the new solution or
** the estimate when another kernel forms them, or the next step's F_0
** (FSAL).
*/
static void find_need_mem(gen *g) {
  int S = g->S;
  for (int l = 0; l < S; ++l) {
    int need = l == S - 1 && g->m->fsal;
    for (int k = l + 2; k < S; ++k) need |= uses(&g->e.a[k], l);
    if (g->alias) need |= l < S - 2 && uses(&g->e.b, l);
    else need |= l < S - 1 && uses(&g->e.b, l);
    need |= l < S - 1 && uses(&g->e.e, l);
    g->need_mem[l] = need;
  }
}

/* Adds a launch to the plan. */
static odb_gen_launch *add_launch(gen *g, const char *kernel, int when,
                                  int reduce, double rvec, double wvec) {
  odb_gen_launch *l;
  if (g->plan->nlaunch >= ODB_GEN_MAX_LAUNCH) {
    g->b.oom = 1;   /* cannot happen for ODB_GEN_MAX_STAGES stages */
    return NULL;
  }
  l = &g->plan->launch[g->plan->nlaunch++];
  memset(l, 0, sizeof *l);
  snprintf(l->kernel, sizeof l->kernel, "%s", kernel);
  l->when = when;
  l->reduce = reduce;
  l->rvec = rvec;
  l->wvec = wvec;
  return l;
}

/* }====== */

/* {====== common text */

/* A double as an exact C literal in parentheses ("(-0x1.8p+1)"). */
static void put_num(sbuf *b, double v) { put(b, "(%a)", v); }

/*
** The problem's source text (what names gpu_source or gpu_cell_source)
** under #line directives, so that NVRTC's messages point into it and the
** generated lines after it count on.
*/
static void put_source(sbuf *b, const char *label, const char *what,
                       const char *text) {
  put(b, "#line 1 \"%s:%s\"\n", label, what);
  put(b, "%s", text);
  if (b->len > 0 && b->buf[b->len - 1] != '\n') put(b, "\n");
  put(b, "#line %d \"odb_gen_rk.cu\"\n", b->lines + 2);
}

/*
** The step controller of a devctl kernel (see odb_gen_ctl in the header,
** whose layout the struct repeats): after the norm's sum of squares v of
** an attempt of h, the host's I controller (odb_solver.c) on the device.
*/
static void put_ctl(gen *g) {
  put(&g->b,
    "struct odb_ctl {\n"
    "  double t, h, h_next, t1, t_eps, hmin, safety, fac_min, fac_max, expo;\n"
    "  double err, h_last;\n"
    "  long long attempts, accepted, rejected, max_attempts;\n"
    "  int cur, done, capped, pad;\n"
    "};\n"
    "// the factor of h after an attempt with norm err (cap: its largest)\n"
    "static __device__ double odb_ctl_factor(const odb_ctl *c, double err,\n"
    "                                        double cap) {\n"
    "  if (!(err > 0.0)) return cap;\n"
    "  return fmin(cap, fmax(c->fac_min, c->safety * pow(err, c->expo)));\n"
    "}\n"
    "// accept (t += h, the other buffer holds the state) or reject, the\n"
    "// next h capped at t1 - t, and whether stepping is done\n"
    "static __device__ void odb_ctl_after(odb_ctl *c, double v, double h) {\n"
    "  const double err = sqrt(v / (double)ODB_N);\n"
    "  c->err = err;\n"
    "  c->h_last = h;\n"
    "  c->attempts += 1;\n"
    "  if (isfinite(err) && err <= 1.0) {\n"
    "    c->t += h;\n"
    "    c->cur ^= 1;\n"
    "    c->accepted += 1;\n"
    "    c->h_next = h * odb_ctl_factor(c, err, c->capped ? 1.0 : c->fac_max);\n"
    "    c->capped = 0;\n"
    "    if (c->t1 - c->t < c->t_eps) {\n"
    "      c->t = c->t1;\n"
    "      c->done = %d;\n"
    "      return;\n"
    "    }\n"
    "    if (c->attempts >= c->max_attempts) {\n"
    "      c->done = %d;\n"
    "      return;\n"
    "    }\n"
    "  } else {\n"
    "    c->rejected += 1;\n"
    "    c->h_next = h * (isfinite(err) ? odb_ctl_factor(c, err, 1.0)\n"
    "                                   : c->fac_min);\n"
    "    c->capped = 1;\n"
    "  }\n"
    "  c->h = fmin(c->h_next, c->t1 - c->t);\n"
    "  if (c->h < c->hmin) c->done = %d;\n"
    "}\n", ODB_GEN_CTL_END, ODB_GEN_CTL_STEPS, ODB_GEN_CTL_HMIN);
}

/*
** The prelude: index type, sizes, parameters, the argument struct, the
** problem's f_j (with #line so that compile errors point into it), the
** grid-stride loop and the block reduction.
*/
static void put_prelude(gen *g, const char *variant, const odb_gen_opts *o) {
  sbuf *b = &g->b;
  const odb_problem *p = g->p;
  put(b, "// generated by odebench (kernels/odb_gen_rk.c): %s, %s (%s) on %s\n",
      variant, g->m->name, g->m->title, p->label);
  put(b, "// n = %ld, d = %ld, %d threads per block; do not edit\n", p->n,
      p->d, o->threads);
  /* a grid-stride index stays below 2 n + one grid of threads; the
     trapezoid's exchange buffer holds under 2 s n doubles */
  put(b, "typedef %s odb_idx;\n",
      (g->plan->kind == ODB_GEN_TRAPEZOID ? 2L * g->S : 2L) * p->n +
      2L * o->threads * 65536L < 2147483647L ? "int" : "long long");
  put(b, "#define ODB_N ((odb_idx)%ld)\n#define ODB_D ((odb_idx)%ld)\n", p->n,
      p->d);
  put(b, "#define ODB_T %d\n", o->threads);
  for (int i = 0; i < 8; ++i) {
    put(b, "#define ODB_P%d ", i);
    put_num(b, p->param[i]);   /* unused ones are 0 */
    put(b, "\n");
  }
  put(b, "struct odb_ctl;\n"
         "struct odb_args {\n"
         "  const double *y;\n  double *ynew;\n  double *F[%d];\n"
         "  double *Y[2];\n  double *part;\n  unsigned int *ticket;\n"
         "  double *err2;\n  double tl[%d];\n  double h, atol, rtol;\n"
         "  unsigned int *bar;\n  unsigned int *fail;\n"
         "  struct odb_ctl *ctl;\n  long long par;\n"
         "  double *note;\n  long long seq;\n};\n",
      ODB_GEN_MAX_STAGES, ODB_GEN_MAX_STAGES);
  if (g->devctl) put_ctl(g);
  if (p->gpu_source)   /* NULL: a grid problem with only a cell source */
    put_source(b, p->label, "gpu_source", p->gpu_source);
  put(b, "#define ODB_LOOP(j) \\\n"
         "  for (odb_idx j = (odb_idx)blockIdx.x * ODB_T + "
         "(odb_idx)threadIdx.x; \\\n"
         "       j < ODB_N; j += (odb_idx)gridDim.x * ODB_T)\n");
  put(b, "// (e / s)^2, s = atol + rtol max(|y|, |yn|): the reciprocal's "
         "estimate,\n// refined to 2^-60 (two fused steps), times e; a "
         "division would add\n// a check for the rare operands and its "
         "slow path (a call) to every row\n"
         "static __device__ __forceinline__ double odb_sq_scaled(double e, "
         "double y, double yn,\n"
         "    double atol, double rtol) {\n"
         "  const double s = atol + rtol * fmax(fabs(y), fabs(yn));\n"
         "  double x;\n"
         "  asm(\"rcp.approx.ftz.f64 %%0, %%1;\" : \"=d\"(x) : \"d\"(s));\n"
         "  const double d = fma(-s, x, 1.0);\n"
         "  const double r = e * fma(x, fma(d, d, d), x);\n"
         "  return r * r;\n}\n");
  if (!g->plan->has_err) return;
  put(b,
    "// Sums acc over the blocks in a fixed order: a tree per block, its sum\n"
    "// in a.part[slot], and the last of the total blocks to finish (elected\n"
    "// by a.ticket; they may span kernels of one stream) adds the partial\n"
    "// sums up in index order into *a.err2 and resets the ticket. The tree\n"
    "// is warp shuffles, then the warps' sums (two barriers, not log2 T).\n"
    "static __device__ __forceinline__ double odb_block_sum(double v,\n"
    "                                                       double *sh) {\n"
    "#if ODB_T %% 32 == 0\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
    "  if ((threadIdx.x & 31u) == 0) sh[threadIdx.x >> 5] = v;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x < 32) {\n"
    "    v = threadIdx.x < ODB_T / 32 ? sh[threadIdx.x] : 0.0;\n"
    "    for (int o = 16; o > 0; o >>= 1)\n"
    "      v += __shfl_down_sync(0xffffffffu, v, o);\n"
    "  }\n"
    "  return v;   // in thread 0\n"
    "#else\n"
    "  sh[threadIdx.x] = v;\n"
    "  __syncthreads();\n"
    "  for (int s = ODB_T / 2; s > 0; s >>= 1) {\n"
    "    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  return sh[0];\n"
    "#endif\n"
    "}\n"
    "static __device__ void odb_reduce(const odb_args &a, double acc,\n"
    "                                  unsigned slot, unsigned total) {\n"
    "  __shared__ double sh[ODB_T %% 32 == 0 ? ODB_T / 32 : ODB_T];\n"
    "  __shared__ bool last;\n"
    "  acc = odb_block_sum(acc, sh);\n"
    "  if (threadIdx.x == 0) {\n"
    "    a.part[slot] = acc;\n"
    "    __threadfence();\n"
    "    last = atomicAdd(a.ticket, 1u) == total - 1;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  if (!last) return;\n"
    "  __threadfence();\n"
    "  double v = 0.0;\n"
    "  for (unsigned i = threadIdx.x; i < total; i += ODB_T)\n"
    "    v += __ldcg(a.part + i);\n"
    "  v = odb_block_sum(v, sh);\n"
    "  if (threadIdx.x == 0) {\n"
    "    *a.err2 = v;\n"
    "    if (a.note) {   // the host waits on it: the sum, then its number\n"
    "      a.note[0] = v;\n"
    "      __threadfence_system();\n"
    "      *(volatile long long *)(a.note + 1) = a.seq;\n"
    "    }\n"
    "    *a.ticket = 0u;\n"
    "%s"
    "  }\n"
    "}\n", g->devctl ? "    odb_ctl_after(a.ctl, v, a.h);\n" : "");
}

static void put_ctl_prologue(gen *g);

/*
** Opens a kernel: extern "C", bounded block size, one by-value argument
** (devctl: the controller's prologue, put_ctl_prologue).
*/
static void put_kernel_head(gen *g, const char *name) {
  sbuf *b = &g->b;
  put(b, "extern \"C\" __global__ void __launch_bounds__(ODB_T)\n");
  if (!g->devctl) {
    put(b, "%s(const odb_args a) {\n", name);
    return;
  }
  put(b, "%s(const odb_args odb_a0) {\n", name);
  put_ctl_prologue(g);
}

/*
** "yexpr + a.h * (c0 * f<i0> + c1 * f<i1> + ...)" (yexpr NULL: no y term),
** the order of erk_lc. Stage values are the registers f<q>.
*/
static void put_lc(sbuf *b, const char *yexpr, const erk_terms *t) {
  if (t->n == 0) {
    put(b, "%s", yexpr ? yexpr : "0.0");
    return;
  }
  if (yexpr) put(b, "%s + ", yexpr);
  put(b, "a.h * (");
  for (int i = 0; i < t->n; ++i) {
    if (i) put(b, " + ");
    put_num(b, t->coef[i]);
    put(b, " * f%d", t->idx[i]);
  }
  put(b, ")");
}

/*
** Loads into registers f<q> the stages of t that are not in register yet
** (loaded[q] == 0), and marks them. Returns the number of loads.
*/
static int put_loads(sbuf *b, const erk_terms *t, int *loaded) {
  int n = 0;
  for (int i = 0; i < t->n; ++i) {
    int q = t->idx[i];
    if (loaded[q]) continue;
    put(b, "    const double f%d = __ldg(a.F[%d] + j);\n", q, q);
    loaded[q] = 1;
    ++n;
  }
  return n;
}

/* }====== */

/* {====== gpu_unfused: one kernel per basic operation */

static void gen_unfused(gen *g) {
  sbuf *b = &g->b;
  int S = g->S;
  char name[24];
  for (int l = 0; l < S; ++l) {
    int loaded[ODB_GEN_MAX_STAGES] = {0}, nl;
    if (l > 0) {
      snprintf(name, sizeof name, "k_lc%d", l);
      put_kernel_head(g, name);
      put(b, "  ODB_LOOP(j) {\n");
      nl = put_loads(b, &g->e.a[l], loaded);
      put(b, "    a.Y[0][j] = ");
      put_lc(b, "__ldg(a.y + j)", &g->e.a[l]);
      put(b, ";\n  }\n}\n");
      add_launch(g, name, ODB_GEN_ALWAYS, 0, 1 + nl, 1);
    }
    snprintf(name, sizeof name, "k_rhs%d", l);
    put_kernel_head(g, name);
    put(b, "  const double *__restrict__ arg = %s;\n",
        l == 0 ? "a.y" : "a.Y[0]");
    put(b, "  ODB_LOOP(j) a.F[%d][j] = odb_rhs(j, a.tl[%d], arg);\n}\n", l, l);
    add_launch(g, name, l == 0 ? ODB_GEN_IF_STAGE0 : ODB_GEN_ALWAYS, 0, 1, 1);
  }
  {
    int loaded[ODB_GEN_MAX_STAGES] = {0}, nl;
    put_kernel_head(g, "k_lcb");
    put(b, "  ODB_LOOP(j) {\n");
    nl = put_loads(b, &g->e.b, loaded);
    put(b, "    a.ynew[j] = ");
    put_lc(b, "__ldg(a.y + j)", &g->e.b);
    put(b, ";\n  }\n}\n");
    add_launch(g, "k_lcb", ODB_GEN_ALWAYS, 0, 1 + nl, 1);
  }
  if (!g->plan->has_err) return;
  {
    int loaded[ODB_GEN_MAX_STAGES] = {0}, nl;
    put_kernel_head(g, "k_lce");
    put(b, "  ODB_LOOP(j) {\n");
    nl = put_loads(b, &g->e.e, loaded);
    put(b, "    a.Y[0][j] = ");
    put_lc(b, NULL, &g->e.e);
    put(b, ";\n  }\n}\n");
    add_launch(g, "k_lce", ODB_GEN_ALWAYS, 0, nl, 1);
  }
  put_kernel_head(g, "k_red");
  put(b, "  double acc = 0.0;\n"
         "  ODB_LOOP(j) acc += odb_sq_scaled(__ldg(a.Y[0] + j), "
         "__ldg(a.y + j),\n"
         "                                   __ldg(a.ynew + j), a.atol, "
         "a.rtol);\n"
         "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n}\n");
  add_launch(g, "k_red", ODB_GEN_ALWAYS, 1, 3, 0);
}

/* }====== */

/* {====== gpu_reference: all fused but the LC -> RHS dependencies */

/* The vector that holds stage l's argument in the reference variant. */
static void arg_name(const gen *g, int l, char *out, size_t len) {
  if (l == 0) snprintf(out, len, "a.y");
  else if (l == g->S - 1 && g->alias) snprintf(out, len, "a.ynew");
  else snprintf(out, len, "a.Y[%d]", l % 2);
}

/*
** Kernel l: F_l = f(Y_l) (or, for l = 0 after an FSAL step, F_0 loaded),
** then the LC of Y_{l+1} with F_l from the register; the last kernel forms
** ynew (unless Y_{S-1} is ynew), the estimate and the norm instead.
*/
static void gen_ref_kernel(gen *g, int l, int fsal_load) {
  sbuf *b = &g->b;
  int S = g->S, last = l == S - 1, loaded[ODB_GEN_MAX_STAGES] = {0};
  int rv = 1, wv = 0;   /* the argument (or F_0) and y */
  char name[24], arg[16], out[16];
  snprintf(name, sizeof name, fsal_load ? "k_ref%df" : "k_ref%d", l);
  arg_name(g, l, arg, sizeof arg);
  put_kernel_head(g, name);
  if (!fsal_load) put(b, "  const double *__restrict__ arg = %s;\n", arg);
  if (last && g->plan->has_err) put(b, "  double acc = 0.0;\n");
  put(b, "  ODB_LOOP(j) {\n");
  if (fsal_load) {
    put(b, "    const double f0 = __ldg(a.F[0] + j);\n");
  } else {
    put(b, "    const double f%d = odb_rhs(j, a.tl[%d], arg);\n", l, l);
    if (g->need_mem[l]) {
      put(b, "    a.F[%d][j] = f%d;\n", l, l);
      ++wv;
    }
  }
  loaded[l] = 1;
  if (l > 0 || fsal_load) ++rv;   /* y besides the argument (or F_0) */
  put(b, "    const double yj = __ldg(a.y + j);\n");
  if (!last) {
    rv += put_loads(b, &g->e.a[l + 1], loaded);
    arg_name(g, l + 1, out, sizeof out);
    put(b, "    %s[j] = ", out);
    put_lc(b, "yj", &g->e.a[l + 1]);
    put(b, ";\n  }\n}\n");
    ++wv;
  } else {
    if (g->alias) {
      put(b, "    const double yn = __ldcg(a.ynew + j);\n");
    } else {
      rv += put_loads(b, &g->e.b, loaded);
      put(b, "    const double yn = ");
      put_lc(b, "yj", &g->e.b);
      put(b, ";\n    a.ynew[j] = yn;\n");
      ++wv;
    }
    if (g->plan->has_err) {
      rv += put_loads(b, &g->e.e, loaded);
      put(b, "    const double ej = ");
      put_lc(b, NULL, &g->e.e);
      put(b, ";\n    acc += odb_sq_scaled(ej, yj, yn, a.atol, a.rtol);\n");
    }
    put(b, "  }\n");
    if (g->plan->has_err)
      put(b, "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n");
    put(b, "}\n");
  }
  add_launch(g, name, l > 0 ? ODB_GEN_ALWAYS
                            : fsal_load ? ODB_GEN_IF_FSAL : ODB_GEN_IF_STAGE0,
             last && g->plan->has_err, rv, wv);
}

static void gen_reference(gen *g) {
  gen_ref_kernel(g, 0, 0);
  gen_ref_kernel(g, 0, 1);
  for (int l = 1; l < g->S; ++l) gen_ref_kernel(g, l, 0);
}

/* }====== */

/* {====== gpu_trapezoid: single-block trapezoidal tiles across the stages */

/*
** The step is one row of trapezoids of height s (every stage) over tiles
** of width W (Korch & Werner's single-workgroup trapezoidal tiling, the
** related work of seeds/000 Sect. 3, with the whole step as the tile
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
static void put_loads_sm(sbuf *b, const erk_terms *t, int *loaded,
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
** of F_l; base is the index of component j in the shared arrays.
*/
static void put_levels(gen *g, int isB) {
  sbuf *b = &g->b;
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
    put_lc(b, "__ldg(a.y + j)", &g->e.a[l]);
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

/* ynew, F_{s-1} (FSAL), the estimate and the norm on [lo, hi). */
static void put_top(gen *g, const char *stride, const char *slot) {
  sbuf *b = &g->b;
  int loaded[ODB_GEN_MAX_STAGES] = {0};
  put(b, "  double acc = 0.0;\n"
         "  for (odb_idx j = lo + (odb_idx)threadIdx.x; j < hi; j += ODB_T) {\n"
         "      const odb_idx k = j - base;\n"
         "      const double yj = __ldg(a.y + j);\n");
  put_loads_sm(b, &g->e.b, loaded, stride);
  put(b, "      const double yn = ");
  put_lc(b, "yj", &g->e.b);
  put(b, ";\n      a.ynew[j] = yn;\n");
  if (g->m->fsal) {
    put_loads_sm(b, &(erk_terms){ .n = 1, .idx = { g->S - 1 } }, loaded,
                 stride);
    put(b, "      a.F[%d][j] = f%d;\n", g->S - 1, g->S - 1);
  }
  if (g->plan->has_err) {
    put_loads_sm(b, &g->e.e, loaded, stride);
    put(b, "      const double ej = ");
    put_lc(b, NULL, &g->e.e);
    put(b, ";\n      acc += odb_sq_scaled(ej, yj, yn, a.atol, a.rtol);\n");
  }
  put(b, "  }\n");
  if (g->plan->has_err)
    put(b, "  odb_reduce(a, acc, %s, 2u * (unsigned)ODB_NT - 1u);\n", slot);
  else
    put(b, "  (void)acc;\n");
}

/* Kernel A (fsal_load: F_0 from memory instead of f(y)). */
static void gen_trap_a(gen *g, int fsal_load) {
  sbuf *b = &g->b;
  put_kernel_head(g, fsal_load ? "k_trapAf" : "k_trapA");
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
  put_levels(g, 0);
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
  put_top(g, "ODB_W", "blockIdx.x");
  put(b, "}\n");
}

/* Kernel B: the inverted trapezoid around boundary x = (blockIdx + 1) W. */
static void gen_trap_b(gen *g) {
  sbuf *b = &g->b;
  put_kernel_head(g, "k_trapB");
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
  put_levels(g, 1);
  put(b, "  lo = x - (ODB_S - 1) * ODB_D;\n"
         "  hi = x + (ODB_S - 1) * ODB_D < ODB_N ? x + (ODB_S - 1) * ODB_D "
         ": ODB_N;\n");
  put_top(g, "ODB_WIN", "(unsigned)ODB_NT + blockIdx.x");
  put(b, "}\n");
}

/*
** Checks the tile against d and shared memory and generates both kernels.
** Traffic: y once (A; B reads its windows of 2 s d), ynew and F_{s-1}
** once, F_0 once after an FSAL step, the bands written by A and read by B.
*/
static odb_status gen_trapezoid(gen *g, const odb_gen_opts *o) {
  odb_gen_plan *pl = g->plan;
  long S = g->S, d = g->p->d, n = g->p->n, W = o->tile_w, nt;
  size_t smA, smB, per = (size_t)(S + 1) * sizeof(double);
  double xch = 0, v;
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
  gen_trap_a(g, 0);
  gen_trap_a(g, 1);
  gen_trap_b(g);
  for (long p = 0; p + 1 < S; ++p) xch += 2.0 * (double)((S - p) * d);
  v = nt > 1 ? (double)(nt - 1) / (double)n : 0;   /* per boundary */
  {
    double rA = 1, wA = 1 + (g->m->fsal ? 1 : 0) + xch * v;
    odb_gen_launch *l = add_launch(g, "k_trapA", ODB_GEN_IF_STAGE0, 1, rA, wA);
    if (l) { l->grid = ODB_GEN_GRID_TILES; l->smem = smA; }
    l = add_launch(g, "k_trapAf", ODB_GEN_IF_FSAL, 1, rA + 1, wA);
    if (l) { l->grid = ODB_GEN_GRID_TILES; l->smem = smA; }
    if (nt > 1) {
      l = add_launch(g, "k_trapB", ODB_GEN_ALWAYS, 1,
                     xch * v + 2.0 * S * d * v, 0);
      if (l) { l->grid = ODB_GEN_GRID_BOUNDS; l->smem = smB; }
    }
  }
  return ODB_OK;
}

/* }====== */

/* {====== gpu_hexagonal and trapezoid rows: tiles of a height across the
   stages */

/*
** Tiling across the stages with a tile height (seeds/000 Sect. 4.1 and
** 4.6, Figure 4), single-block tiles. A level l computes F_l = f(Y_l); the
** step's levels are covered by a sequence of kernels, each over levels
** [L0, L1) with a middle M: at level l its tile has u(l) = l - M (l >= M)
** or M - 1 - l (l < M) and spans [org + u d, org + w - u d), so it grows
** by d a side per level below M and shrinks by d above. Tiles of the two
** parities alternate along the system and partition every level (period
** P = w0 + w1 - 2 (G - 1) d, G the levels of a half). Hexagonal: kernel k
** has levels [(k-1) H, (k+1) H), M = k H, parity k mod 2 (H half the
** height). Trapezoidal rows of height h: per row a shrinking kernel
** (parity 0, M = L0) and a growing one (parity 1, M = L0 + h).
**
** A tile keeps its own levels over the window [org - d, org + w + d),
** each thread the same components at every level, in registers (only the
** argument Y_l, which f reads within d, goes through shared memory): below
** M it first loads from F (memory) what the tiles of the other parity
** computed in an earlier kernel; above M it needs only its own values. Levels below L0 come from memory, written in full by
** earlier kernels; otherwise a kernel writes F_l only in the band at its
** tile's edges that the next kernel loads (lv_band), and the last kernel
** none. A tile of width w needs
** w - 2 (G - 1) d >= d at its narrowest so that what it loads lies in its
** neighbours. The tile that computes level s-1 at j also forms ynew, the
** estimate and the norm there.
*/

/* Window components a thread may own (each keeps its stages in
   registers). */
#define LV_MAX_PER_THREAD 8

typedef struct lv_kernel {
  int L0, L1, M;         /* levels [L0, L1), the middle */
  long i0, count;        /* tiles i0 .. i0 + count - 1 */
  long off, w;           /* tile i's widest range: [i P + off, + w) */
} lv_kernel;

/* u(l) of kernel k: levels from the tile's widest one. */
static long lv_u(const lv_kernel *k, int l) {
  return l >= k->M ? l - k->M : k->M - 1 - l;
}

/* lo/hi = the tile's range at level l, clipped to [0, n). */
static void put_lv_range(sbuf *b, const lv_kernel *k, int l) {
  long u = lv_u(k, l);
  put(b, "  lo = org + %ld * ODB_D; if (lo < 0) lo = 0;\n"
         "  hi = org + %ld - %ld * ODB_D; if (hi > ODB_N) hi = ODB_N;\n",
      u, k->w, u);
}

/*
** The edge band (in units of d) of level l that the next kernel loads: it
** covers l in its growing half with middle M + G, and reaches (M + G - l) d
** into this tile. Levels below M are read later only in full (from
** full_below), and nothing follows the last kernel: 0.
*/
static long lv_band(const lv_kernel *k, int l, long G, int last) {
  return last || l < k->M ? 0 : k->M + G - l;
}

/* 1 when F_l is read after its level: by a later stage, ynew or E. */
static int lv_used_later(const gen *g, int l) {
  for (int k = l + 1; k < g->S; ++k)
    if (uses(&g->e.a[k], l)) return 1;
  return uses(&g->e.b, l) || uses(&g->e.e, l);
}

/* Loads into f<q> the stages of t at component c of the thread's unit i:
   own levels from registers F<q>_<i>_<c>, levels below L0 from memory. */
static void put_lv_loads(sbuf *b, const erk_terms *t, int L0, int i, int c) {
  for (int k = 0; k < t->n; ++k) {
    int q = t->idx[k];
    if (q >= L0) put(b, "      const double f%d = F%d_%d_%d;\n", q, q, i, c);
    else put(b, "      const double f%d = __ldg(a.F[%d] + j%d + %d);\n", q, q,
             i, c);
  }
}

/* f of unit i at level l into F<l>_<i>_<c> (c < K), reading the argument
   at ya: the cell form (K > 1) or f_j. */
static void put_lv_rhs(sbuf *b, int K, int i, int l, const char *ya) {
  if (K == 1) {
    put(b, "      F%d_%d_0 = odb_rhs(j%d, a.tl[%d], %s);\n", l, i, i, l, ya);
    return;
  }
  put(b, "      {\n        const odb_idx ci = j%d / %d / ODB_GX, cj = j%d / %d - "
         "ci * ODB_GX;\n        const odb_cell_in in = { %s + j%d };\n"
         "        double f[%d];\n"
         "        odb_rhs_cell(ci, cj, a.tl[%d], in, f);\n",
      i, K, i, K, ya, i, K, l);
  for (int c = 0; c < K; ++c) put(b, "        F%d_%d_%d = f[%d];\n", l, i, c, c);
  put(b, "      }\n");
}

/*
** One kernel (fsal_load: F_0 from memory). full_below: levels below it are
** written in full; G: levels a half tile; last: no kernel follows; slot0:
** its first partial sum of the norm, total: the partial sums of a step;
** np units a thread, K components a unit (K > 1: the cells of a 2-D grid
** problem, f in its cell form). Thread x owns the window's units x + i T
** through every level: their stage values stay in registers F<q>_<i>_<c>,
** y in y_<i>_<c>; only the argument Y_l, which f reads within d, goes
** through shared memory, double-buffered so that one barrier a level
** suffices. Ranges are multiples of K, so a unit is in or out whole.
*/
static void gen_lv_kernel(gen *g, const lv_kernel *k, int idx, int fsal_load,
                          int full_below, long G, int last, long slot0,
                          long total, int np, int K) {
  sbuf *b = &g->b;
  long win = k->w + 2 * g->p->d;
  int S = g->S, T = g->plan->threads;
  char name[24];
  snprintf(name, sizeof name, "k_lv%d%s", idx, fsal_load ? "f" : "");
  put_kernel_head(g, name);
  put(b, "  extern __shared__ double sm[];\n"
         "  const odb_idx org = ((odb_idx)blockIdx.x + (%ld)) * ODB_HP + "
         "(%ld);\n"
         "  const odb_idx wlo = org - ODB_D;\n"
         "  odb_idx lo, hi;\n", k->i0, k->off);
  for (int i = 0; i < np; ++i) {
    put(b, "  const odb_idx j%d = wlo + ((odb_idx)threadIdx.x + %ld) * %d;\n"
           "  const bool v%d = ((odb_idx)threadIdx.x + %ld) * %d < %ld && "
           "j%d >= 0 && j%d < ODB_N;\n",
        i, (long)i * T, K, i, (long)i * T, K, win, i, i);
    for (int c = 0; c < K; ++c) {
      put(b, "  const double y_%d_%d = v%d ? __ldg(a.y + j%d + %d) : 0.0;\n",
          i, c, i, i, c);
      for (int q = k->L0; q < k->L1; ++q)
        put(b, "  double F%d_%d_%d = 0.0;\n", q, i, c);
    }
  }
  /* what the other parity computed beside the growing half */
  for (int q = k->L0; q < k->L1 && q < k->M; ++q) {
    put_lv_range(b, k, q);
    for (int i = 0; i < np; ++i) {
      put(b, "  if (v%d && (j%d < lo || j%d >= hi)) {\n", i, i, i);
      for (int c = 0; c < K; ++c)
        put(b, "    F%d_%d_%d = __ldg(a.F[%d] + j%d + %d);\n", q, i, c, q, i,
            c);
      put(b, "  }\n");
    }
  }
  for (int l = k->L0; l < k->L1; ++l) {
    int full = (l < full_below) || (l == S - 1 && g->m->fsal);
    long bw = lv_band(k, l, G, last) * g->p->d;
    int write = full || (bw > 0 && lv_used_later(g, l));
    put(b, "  // level %d\n", l);
    put_lv_range(b, k, l);
    if (l > 0) {
      put(b, "  {\n    double *const Yb = sm + %ld - wlo;\n"
             "    const odb_idx y0 = lo - ODB_D, y1 = hi + ODB_D;\n",
          (long)(l % 2) * win);
      for (int i = 0; i < np; ++i) {
        put(b, "    if (v%d && j%d >= y0 && j%d < y1) {\n", i, i, i);
        for (int c = 0; c < K; ++c) {
          char ye[24];
          put(b, "     {\n");
          put_lv_loads(b, &g->e.a[l], k->L0, i, c);
          put(b, "      Yb[j%d + %d] = ", i, c);
          snprintf(ye, sizeof ye, "y_%d_%d", i, c);
          put_lc(b, ye, &g->e.a[l]);
          put(b, ";\n     }\n");
        }
        put(b, "    }\n");
      }
      put(b, "    __syncthreads();\n");
    } else {
      put(b, "  {\n");
    }
    for (int i = 0; i < np; ++i) {
      put(b, "    if (v%d && j%d >= lo && j%d < hi) {\n", i, i, i);
      if (l == 0 && fsal_load) {
        for (int c = 0; c < K; ++c)
          put(b, "      F0_%d_%d = __ldg(a.F[0] + j%d + %d);\n", i, c, i, c);
      } else {
        put_lv_rhs(b, K, i, l, l == 0 ? "a.y" : "Yb");
        if (write)
          for (int c = 0; c < K; ++c) {
            if (full) put(b, "      ");
            else put(b, "      if (j%d < lo + %ld || j%d >= hi - %ld) ", i, bw,
                     i, bw);
            put(b, "a.F[%d][j%d + %d] = F%d_%d_%d;\n", l, i, c, l, i, c);
          }
      }
      put(b, "    }\n");
    }
    put(b, "  }\n");
  }
  if (k->L1 == S) {   /* ynew, the estimate and the norm at level s-1 */
    erk_terms both = g->e.b;   /* the loads of b and e together */
    for (int q = 0; q < g->e.e.n; ++q)
      if (!uses(&both, g->e.e.idx[q]) && both.n < ERK_MAX_STAGES) {
        both.idx[both.n] = g->e.e.idx[q];
        both.coef[both.n++] = 0;
      }
    put(b, "  double acc = 0.0;\n");
    for (int i = 0; i < np; ++i) {
      put(b, "  if (v%d && j%d >= lo && j%d < hi) {\n", i, i, i);
      for (int c = 0; c < K; ++c) {
        char ye[24];
        snprintf(ye, sizeof ye, "y_%d_%d", i, c);
        put(b, "   {\n");
        put_lv_loads(b, &both, k->L0, i, c);
        put(b, "      const double yn = ");
        put_lc(b, ye, &g->e.b);
        put(b, ";\n      a.ynew[j%d + %d] = yn;\n", i, c);
        if (g->plan->has_err) {
          put(b, "      const double ej = ");
          put_lc(b, NULL, &g->e.e);
          put(b, ";\n      acc += odb_sq_scaled(ej, %s, yn, a.atol, "
                 "a.rtol);\n", ye);
        }
        put(b, "   }\n");
      }
      put(b, "  }\n");
    }
    if (g->plan->has_err)
      put(b, "  odb_reduce(a, acc, %ldu + blockIdx.x, %ldu);\n", slot0,
          total);
    else
      put(b, "  (void)acc;\n");
  }
  put(b, "}\n");
}

/* floor(a / b) for b > 0. */
static long floor_div(long a, long b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The tiles i whose widest range [i P + off, + w) meets [0, n). */
static void lv_tiles(lv_kernel *k, long P, long n) {
  long i0 = floor_div(-k->off - k->w, P) + 1;
  long i1 = floor_div(n - 1 - k->off, P);
  k->i0 = i0;
  k->count = i1 >= i0 ? i1 - i0 + 1 : 0;
}

/*
** Builds the kernel sequence of the scheme (hex: hexagons of height
** h = 2 H; else trapezoid rows of height h), checks widths and shared
** memory, generates the kernels and their launches.
*/
static odb_status gen_levels(gen *g, const odb_gen_opts *o, int hex) {
  odb_gen_plan *pl = g->plan;
  const char *vn = hex ? "gpu_hexagonal" : "gpu_trapezoid";
  long S = g->S, d = g->p->d, n = g->p->n, h = o->tile_h, G, P;
  long w[2] = { o->tile_w, o->tile_w2 > 0 ? o->tile_w2 : o->tile_w };
  lv_kernel ks[ODB_GEN_MAX_LAUNCH];   /* s <= 16: at most 2 s kernels */
  int nk = 0, full_below = 0, np = 1;
  long total = 0, slot = 0;
  /* a 2-D grid problem whose d is one grid row: f in its cell form */
  const odb_problem *pb = g->p;
  int cu = pb->gpu_cell_source && pb->grid_comps >= 1 &&
           pb->grid_rows * pb->grid_cols * pb->grid_comps == n &&
           d == pb->grid_comps * pb->grid_cols ? pb->grid_comps : 1;
  if (h < 1 || (hex && (h % 2 || h > 2 * S)) || (!hex && h > S))
    return ODB_FAIL(ODB_ERR_ARG, "%s: tile height %ld must be %s", vn, h,
                    hex ? "even, from 2 to 2 s" : "from 1 to s");
  G = hex ? h / 2 : h;
  for (int p = 0; p < 2; ++p) {
    if (w[p] % cu) w[p] += cu - w[p] % cu;   /* whole cells */
    if (w[p] > n)   /* one tile spans the system */
      w[p] = n > (2 * G - 1) * d ? n : (2 * G - 1) * d;
    if (w[p] - 2 * (G - 1) * d < d)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: tile width %ld is narrower "
                      "than (2 G - 1) d = %ld (d = %ld, %ld levels a half "
                      "tile) so a tile would reach past its neighbour; widen "
                      "the tiles or lower the height", vn, w[p],
                      (2 * G - 1) * d, d, G);
  }
  P = w[0] + w[1] - 2 * (G - 1) * d;
  if (hex) {
    int K = (int)((S - 1) / G) + 2;
    for (int k = 0; k < K; ++k) {
      lv_kernel *x = &ks[nk++];
      x->L0 = (int)((k - 1) * G > 0 ? (k - 1) * G : 0);
      x->L1 = (int)((k + 1) * G < S ? (k + 1) * G : S);
      x->M = (int)(k * G);
      x->w = w[k % 2];
      x->off = k % 2 ? w[0] - (G - 1) * d : 0;
    }
  } else {
    for (long r = 0; r * h < S; ++r)
      for (int p = 0; p < 2; ++p) {
        lv_kernel *x = &ks[nk++];
        x->L0 = (int)(r * h);
        x->L1 = (int)((r + 1) * h < S ? (r + 1) * h : S);
        x->M = (int)(p ? r * h + h : r * h);
        x->w = w[p];
        x->off = p ? w[0] - (G - 1) * d : 0;
      }
  }
  for (int k = 0; k < nk; ++k) {
    size_t sm = 2 * (size_t)(ks[k].w + 2 * d) * sizeof(double);
    long per = (ks[k].w + 2 * d + (long)cu * o->threads - 1) /
               ((long)cu * o->threads);   /* units (cells) a thread */
    lv_tiles(&ks[k], P, n);
    if (ks[k].L0 > full_below) full_below = ks[k].L0;
    if ((long)sm > o->smem_max)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: a tile of width %ld needs "
                      "its argument twice over w + 2 d, %zu bytes of shared "
                      "memory (d = %ld); a block may have %ld; narrow the "
                      "tiles", vn, ks[k].w, sm, d, o->smem_max);
    if (per * cu > LV_MAX_PER_THREAD)
      return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s: a tile of width %ld gives "
                      "each of %d threads %ld components (w + 2 d over the "
                      "threads; at most %d keep their stages in registers); "
                      "raise threads or narrow the tiles", vn, ks[k].w,
                      o->threads, per * cu, LV_MAX_PER_THREAD);
    if (per > np) np = (int)per;
    if (ks[k].L1 == S) total += ks[k].count;
  }
  pl->tile_w = w[0];
  pl->tile_h = h;
  pl->nparts = total;
  pl->scratch[0] = pl->scratch[1] = 0;
  put(&g->b, "#define ODB_HP ((odb_idx)%ld)\n", P);
  if (pb->gpu_cell_source && cu == pb->grid_comps) {
    /* ODB_Y(di, dj, c): component c of the argument at cell (i + di,
       j + dj), cells row-major with their components interleaved */
    put(&g->b, "#define ODB_GX ((odb_idx)%ld)\n"
               "struct odb_cell_in {\n  const double *p;\n};\n"
               "#define ODB_Y(di, dj, c) in.p[((di) * ODB_GX + (dj)) * %d + "
               "(c)]\n", pb->grid_cols, cu);
    put_source(&g->b, pb->label, "gpu_cell_source", pb->gpu_cell_source);
  }
  for (int k = 0; k < nk; ++k) {
    const lv_kernel *x = &ks[k];
    int has0 = x->L0 == 0 && g->m->fsal;
    size_t sm = 2 * (size_t)(x->w + 2 * d) * sizeof(double);
    /* traffic per step in vectors: y and the levels below L0 over the
       windows, the bands of the growing half; F_l written in full or in
       bands; ynew on top */
    double cover = (double)x->count * (double)(x->w + 2 * d) / (double)n;
    double per_d = (double)x->count * 2.0 * (double)d / (double)n;
    double rv = cover * (1 + x->L0), wv = 0;
    for (int l = x->L0; l < x->L1; ++l) {
      int full = l < full_below || (l == S - 1 && g->m->fsal);
      double e = per_d * (double)lv_band(x, l, G, k == nk - 1);
      if (l < x->M) rv += per_d * (double)(x->M - l);   /* loads */
      if (full) wv += 0.5;   /* each level: two kernels of tiles */
      else if (lv_used_later(g, l)) wv += e < 0.5 ? e : 0.5;
    }
    if (x->L1 == S) wv += 0.5;
    gen_lv_kernel(g, x, k, 0, full_below, G, k == nk - 1, slot, total, np,
                  cu);
    if (has0)
      gen_lv_kernel(g, x, k, 1, full_below, G, k == nk - 1, slot, total, np,
                    cu);
    {
      char kn[24];
      odb_gen_launch *l;
      snprintf(kn, sizeof kn, "k_lv%d", k);
      l = add_launch(g, kn, has0 ? ODB_GEN_IF_STAGE0 : ODB_GEN_ALWAYS,
                     x->L1 == S, rv, wv);
      if (l) { l->grid = ODB_GEN_GRID_COUNT; l->blocks = x->count;
               l->smem = sm; }
      if (has0) {
        snprintf(kn, sizeof kn, "k_lv%df", k);
        l = add_launch(g, kn, ODB_GEN_IF_FSAL, x->L1 == S, rv + cover, wv);
        if (l) { l->grid = ODB_GEN_GRID_COUNT; l->blocks = x->count;
                 l->smem = sm; }
      }
    }
    if (x->L1 == S) slot += x->count;
  }
  return ODB_OK;
}

/* }====== */

/* {====== gpu_multiblock: multi-block tiles across the stages */

/*
** The multi-block barriers of seeds/000 4.3 as CUDA C. Words of bar:
** [0] counts the blocks leaving the kernel (the last one resets the rest
** for the next launch), [32 (1 + g)] is barrier A's counter of group g (a
** line of its own), from ODB_BARB on barrier B's entered flags, one per
** block, then its exit flags. Counters and flags only grow during a
** launch, so barrier k waits for k G arrivals (A) or for flags >= k (B).
** Every wait polls *fail and a clock: past ODB_WATCHDOG ns it sets *fail
** and returns 0, and so does every other waiting block, so a barrier that
** cannot complete ends the kernel with an error instead of hanging it.
*/
const char odb_gen_barrier_src[] =
  "static __device__ __forceinline__ unsigned long long odb_clock_ns() {\n"
  "  unsigned long long t;\n"
  "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
  "  return t;\n"
  "}\n"
  "static __device__ __forceinline__ unsigned odb_ld(const unsigned *p) {\n"
  "  return *(const volatile unsigned *)p;\n"
  "}\n"
  "// Waits until *p >= k; 0 when the watchdog fired or *fail was set.\n"
  "static __device__ int odb_wait_ge(const unsigned *p, unsigned k,\n"
  "                                  unsigned *fail) {\n"
  "  unsigned long long t0 = 0ull;\n"
  "  while (odb_ld(p) < k) {\n"
  "    {\n"
  "      const unsigned long long t = odb_clock_ns();\n"
  "      if (odb_ld(fail)) return 0;\n"
  "      if (t0 == 0ull) t0 = t;\n"
  "      else if (t - t0 > (unsigned long long)ODB_WATCHDOG) {\n"
  "        atomicExch(fail, 1u);\n"
  "        return 0;\n"
  "      }\n"
  "    }\n"
  "  }\n"
  "  return 1;\n"
  "}\n"
  "// Barrier A: one thread per block adds to the group's counter and waits\n"
  "// for k G arrivals; the block's other threads wait at __syncthreads.\n"
  "static __device__ int odb_bar_a(unsigned *bar, unsigned *fail,\n"
  "                                unsigned grp, unsigned mem, unsigned k) {\n"
  "  __shared__ int ok;\n"
  "  (void)mem;\n"
  "  __syncthreads();\n"
  "  if (threadIdx.x == 0) {\n"
  "    unsigned *const c = bar + 32u * (1u + grp);\n"
  "    __threadfence();\n"
  "    atomicAdd(c, 1u);\n"
  "    ok = odb_wait_ge(c, k * (unsigned)ODB_G, fail);\n"
  "    __threadfence();\n"
  "  }\n"
  "  __syncthreads();\n"
  "  return ok;\n"
  "}\n"
  "// Barrier B: every block sets its entered flag; the group's master block\n"
  "// (member 0) waits for all of them, its threads in parallel, then sets\n"
  "// every exit flag, on which the other blocks wait.\n"
  "static __device__ int odb_bar_b(unsigned *bar, unsigned *fail,\n"
  "                                unsigned grp, unsigned mem, unsigned k) {\n"
  "  __shared__ int okb;\n"
  "  unsigned *const in = bar + ODB_BARB + grp * (unsigned)ODB_G;\n"
  "  unsigned *const ex = in + ODB_GRID;\n"
  "  int ok = 1;\n"
  "  __syncthreads();\n"
  "  if (mem == 0u) {\n"
  "    for (unsigned i = 1u + threadIdx.x; i < (unsigned)ODB_G; i += ODB_T)\n"
  "      ok &= odb_wait_ge(in + i, k, fail);\n"
  "    ok = __syncthreads_and(ok);\n"
  "    if (!ok) return 0;\n"
  "    __threadfence();\n"
  "    for (unsigned i = 1u + threadIdx.x; i < (unsigned)ODB_G; i += ODB_T)\n"
  "      *(volatile unsigned *)(ex + i) = k;\n"
  "    return 1;\n"
  "  }\n"
  "  if (threadIdx.x == 0) {\n"
  "    __threadfence();\n"
  "    *(volatile unsigned *)(in + mem) = k;\n"
  "    okb = odb_wait_ge(ex + mem, k, fail);\n"
  "    __threadfence();\n"
  "  }\n"
  "  __syncthreads();\n"
  "  return okb;\n"
  "}\n"
  "// A tile of one block: __syncthreads orders the block's global writes\n"
  "// for its own threads, so no atomics are needed (single-block tiling).\n"
  "static __device__ __forceinline__ int odb_bar_1(unsigned *bar,\n"
  "    unsigned *fail, unsigned grp, unsigned mem, unsigned k) {\n"
  "  (void)bar; (void)fail; (void)grp; (void)mem; (void)k;\n"
  "  __syncthreads();\n"
  "  return 1;\n"
  "}\n"
  "#ifdef ODB_BAR_C\n"
  "// Barrier C: cooperative groups' grid sync (one group, cooperative\n"
  "// launch; co-residency is guaranteed by the launch, no watchdog).\n"
  "static __device__ int odb_bar_c(unsigned *bar, unsigned *fail,\n"
  "                                unsigned grp, unsigned mem, unsigned k) {\n"
  "  (void)bar; (void)fail; (void)grp; (void)mem; (void)k;\n"
  "  cooperative_groups::this_grid().sync();\n"
  "  return 1;\n"
  "}\n"
  "#endif\n"
  "// The last block to leave resets the barrier words for the next launch.\n"
  "static __device__ void odb_bar_exit(unsigned *bar, unsigned nwords) {\n"
  "  __shared__ int last;\n"
  "  __syncthreads();\n"
  "  if (threadIdx.x == 0) {\n"
  "    __threadfence();\n"
  "    last = atomicAdd(bar, 1u) == gridDim.x - 1u;\n"
  "  }\n"
  "  __syncthreads();\n"
  "  if (!last) return;\n"
  "  for (unsigned i = 1u + threadIdx.x; i < nwords; i += ODB_T) bar[i] = 0u;\n"
  "  __threadfence();\n"
  "  __syncthreads();\n"
  "  if (threadIdx.x == 0) bar[0] = 0u;\n"
  "}\n";

/*
** The components of a thread: q = i * NC + c for its block i < NB and
** component c < NC of that block, at an offset from the extended tile's
** start that depends on the stride kind (seeds/000 Figure 9): A, the
** thread's blocks one after the other; B, blocks a workgroup's threads
** apart; C, blocks a tile's threads apart.
*/
static void put_mb_mapping(sbuf *b, char stride) {
  put(b, "#define ODB_I(q) ((q) / ODB_NC)\n#define ODB_C(q) ((q) %% ODB_NC)\n");
  if (stride == 'A')
    put(b, "#define ODB_LOC(q) ((((odb_idx)gb * ODB_T + threadIdx.x) * ODB_NB "
           "+ ODB_I(q)) * ODB_NC + ODB_C(q))\n");
  else if (stride == 'B')
    put(b, "#define ODB_LOC(q) (((odb_idx)gb * ODB_NB * ODB_T + ODB_I(q) * "
           "ODB_T + threadIdx.x) * ODB_NC + ODB_C(q))\n");
  else
    put(b, "#define ODB_LOC(q) ((ODB_I(q) * (odb_idx)ODB_G * ODB_T + "
           "(odb_idx)gb * ODB_T + threadIdx.x) * ODB_NC + ODB_C(q))\n");
}

/* The loop over a thread's components, with j its index in [lo, hi). */
static void put_mb_for(sbuf *b, const char *lo, const char *hi) {
  put(b, "    #pragma unroll\n"
         "    for (int q = 0; q < ODB_K; ++q) {\n"
         "      const odb_idx j = e0 + ODB_LOC(q);\n"
         "      if (j < %s || j >= %s) continue;\n", lo, hi);
}

/* "y<q> + h (sum a F)" with registers fl[q]. */
static void put_mb_lc(sbuf *b, const erk_terms *t) {
  put(b, "yv[q]");
  if (t->n == 0) return;
  put(b, " + a.h * (");
  for (int i = 0; i < t->n; ++i) {
    if (i) put(b, " + ");
    put_num(b, t->coef[i]);
    put(b, " * f%d[q]", t->idx[i]);
  }
  put(b, ")");
}

/*
** The kernel (fsal_load: F_0 from memory). A group of ODB_G blocks owns
** one tile at a time (persistent: tiles grp, grp + groups, ...): the top
** range [ta, tb) of width ODB_W, extended by ODB_H = (s-1) d on each side
** so that stage l is computed on [ta - (s-1-l) d, tb + (s-1-l) d), the
** trapezoid narrowing by d per stage (seeds/000 4.1, with the overlap
** computed redundantly instead of by a second kernel). Each thread keeps
** y and every F_q of its components in registers (the same mapping for
** all stages, 4.2/4.4); only the argument Y_l goes through the group's
** double buffer in global memory (L2-resident), one barrier per stage.
*/
static void gen_mb_kernel(gen *g, int fsal_load, char barrier) {
  sbuf *b = &g->b;
  int S = g->S;
  put_kernel_head(g, fsal_load ? "k_mbtf" : "k_mbt");
  put(b, "  const unsigned grp = blockIdx.x / ODB_G, gb = blockIdx.x %% ODB_G;\n"
         "  const unsigned ngrp = gridDim.x / ODB_G;\n"
         "  double *const buf = a.Y[0] + (odb_idx)grp * (2 * ODB_WE);\n"
         "  unsigned k = 0u;\n  double acc = 0.0;\n"
         "  for (odb_idx tile = grp; tile < ODB_NTILES; tile += ngrp) {\n"
         "    const odb_idx ta = tile * ODB_W;\n"
         "    const odb_idx tb = ta + ODB_W < ODB_N ? ta + ODB_W : ODB_N;\n"
         "    const odb_idx e0 = ta - ODB_H;\n"
         "    const odb_idx lo0 = e0 > 0 ? e0 : 0;\n"
         "    const odb_idx hi0 = tb + ODB_H < ODB_N ? tb + ODB_H : ODB_N;\n"
         "    double yv[ODB_K]");
  for (int l = 0; l < S; ++l) put(b, ", f%d[ODB_K]", l);
  put(b, ";\n");
  put_mb_for(b, "lo0", "hi0");
  put(b, "      yv[q] = __ldg(a.y + j);\n      f0[q] = %s;\n    }\n",
      fsal_load ? "__ldg(a.F[0] + j)" : "odb_rhs(j, a.tl[0], a.y)");
  for (int l = 1; l < S; ++l) {
    put(b, "    {  // stage %d: Y_%d to the buffer, barrier, F_%d\n", l, l, l);
    put(b, "    double *const B = buf + (odb_idx)(k & 1u) * ODB_WE;\n"
           "    odb_idx lo = ta - %d * ODB_D, hi = tb + %d * ODB_D;\n"
           "    lo = lo > 0 ? lo : 0;\n    hi = hi < ODB_N ? hi : ODB_N;\n",
        S - l, S - l);
    put_mb_for(b, "lo", "hi");
    put(b, "      B[j - e0] = ");
    put_mb_lc(b, &g->e.a[l]);
    put(b, ";\n    }\n    ++k;\n"
           "    if (!odb_bar_%c(a.bar, a.fail, grp, gb, k)) return;\n",
        g->plan->wg_per_tile == 1 ? '1'
        : barrier == 'A' ? 'a' : barrier == 'B' ? 'b' : 'c');
    put(b, "    lo = ta - %d * ODB_D; hi = tb + %d * ODB_D;\n"
           "    lo = lo > 0 ? lo : 0;\n    hi = hi < ODB_N ? hi : ODB_N;\n"
           "    const double *const arg = B - e0;\n", S - 1 - l, S - 1 - l);
    put_mb_for(b, "lo", "hi");
    put(b, "      f%d[q] = odb_rhs(j, a.tl[%d], arg);\n    }\n    }\n", l, l);
  }
  put_mb_for(b, "ta", "tb");
  put(b, "      const double yn = ");
  put_mb_lc(b, &g->e.b);
  put(b, ";\n      a.ynew[j] = yn;\n");
  if (g->m->fsal) put(b, "      a.F[%d][j] = f%d[q];\n", S - 1, S - 1);
  if (g->plan->has_err) {
    put(b, "      const double ej = ");
    if (g->e.e.n == 0) {
      put(b, "0.0");
    } else {
      put(b, "a.h * (");
      for (int i = 0; i < g->e.e.n; ++i) {
        if (i) put(b, " + ");
        put_num(b, g->e.e.coef[i]);
        put(b, " * f%d[q]", g->e.e.idx[i]);
      }
      put(b, ")");
    }
    put(b, ";\n      acc += odb_sq_scaled(ej, yv[q], yn, a.atol, a.rtol);\n");
  }
  put(b, "    }\n  }\n");
  if (g->plan->has_err) put(b, "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n");
  else put(b, "  (void)acc;\n");
  put(b, "  odb_bar_exit(a.bar, ODB_NBAR);\n}\n");
}

/*
** Checks the tile width configuration (equation (7): W_ext = n_comp
** n_blocks threads wg_per_tile must exceed the 2 (s-1) d of redundant
** halo) and generates both kernels. The buffers hold 2 W_ext doubles per
** group. Traffic per step: y once (plus the halos of neighbouring tiles,
** which the L2 usually serves), ynew and, FSAL, F_{s-1} once.
*/
static odb_status gen_multiblock(gen *g, const odb_gen_opts *o) {
  odb_gen_plan *pl = g->plan;
  long S = g->S, d = g->p->d, n = g->p->n, halo = (S - 1) * d;
  long G = o->wg_per_tile, K = (long)o->comps * o->blocks, we, w, nt, ngrp;
  char bar = o->barrier ? o->barrier : 'A', stride = o->stride ? o->stride : 'B';
  if (o->comps < 1 || o->comps > 8 || o->blocks < 1 || o->blocks > 8 ||
      K > 16)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: comps (%d) and blocks (%d) "
                    "per thread must be 1..8 with comps * blocks <= 16",
                    o->comps, o->blocks);
  if (stride != 'A' && stride != 'B' && stride != 'C')
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: stride must be A, B or C");
  if (bar != 'A' && bar != 'B' && bar != 'C')
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: barrier must be A, B or C");
  if (G < 1 || o->groups < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: wg_per_tile (%ld) and "
                    "groups (%d) must be positive", G, o->groups);
  we = K * o->threads * G;
  w = we - 2 * halo;
  if (w <= 0)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_multiblock: tile width %ld "
                    "(comps %d x blocks %d x threads %d x wg_per_tile %ld) "
                    "does not exceed the halo 2 (s-1) d = %ld (s = %ld, d = "
                    "%ld); give more blocks per tile or components per "
                    "thread", we, o->comps, o->blocks, o->threads, G,
                    2 * halo, S, d);
  nt = (n + w - 1) / w;
  ngrp = o->groups < nt ? o->groups : nt;
  if (bar == 'C' && ngrp != 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_multiblock: barrier C (grid sync) "
                    "spans the whole grid, so it takes one tile group, not "
                    "%ld", ngrp);
  pl->tile_w = w;
  pl->tile_we = we;
  pl->tile_h = S;
  pl->ntiles = nt;
  pl->wg_per_tile = (int)G;
  pl->grid = ngrp * G;
  pl->nbar = 32 * (1 + ngrp) + 2 * pl->grid;
  pl->scratch[0] = ngrp * 2 * we;
  pl->scratch[1] = 0;
  if (bar == 'C') put(&g->b, "#define ODB_BAR_C 1\n#include <cooperative_groups.h>\n");
  put(&g->b, "#define ODB_S %ld\n#define ODB_NC %d\n#define ODB_NB %d\n"
             "#define ODB_K %ld\n#define ODB_G %ld\n#define ODB_GRID %ldu\n"
             "#define ODB_WE ((odb_idx)%ld)\n#define ODB_W ((odb_idx)%ld)\n"
             "#define ODB_H ((odb_idx)%ld)\n#define ODB_NTILES ((odb_idx)%ld)\n"
             "#define ODB_BARB %ldu\n#define ODB_NBAR %ldu\n"
             "#define ODB_WATCHDOG %.0f\n",
      S, o->comps, o->blocks, K, G, pl->grid, we, w, halo, nt, 32 * (1 + ngrp),
      pl->nbar, (o->watchdog > 0 ? o->watchdog : 2.0) * 1e9);
  put(&g->b, "%s", odb_gen_barrier_src);
  put_mb_mapping(&g->b, stride);
  gen_mb_kernel(g, 0, bar);
  gen_mb_kernel(g, 1, bar);
  {
    double halo_v = (double)nt * 2.0 * (double)halo / (double)n;
    double wv = 1 + (g->m->fsal ? 1 : 0);
    odb_gen_launch *l = add_launch(g, "k_mbt", ODB_GEN_IF_STAGE0,
                                   g->plan->has_err, 1 + halo_v, wv);
    if (l) l->grid = ODB_GEN_GRID_GROUPS;
    l = add_launch(g, "k_mbtf", ODB_GEN_IF_FSAL, g->plan->has_err,
                   2 + 2 * halo_v, wv);
    if (l) l->grid = ODB_GEN_GRID_GROUPS;
  }
  return ODB_OK;
}

/* }====== */

/* {====== gpu_stream2d: strips of a 2-D grid streamed through all stages */

/*
** For problems on a 2-D grid with a radius-1 stencil (gpu_cell_source),
** the access distance d is one grid row, so seeds/000's 1-D tiles need a
** halo of (s-1) rows on each side and grow to hundreds of thousands of
** components. Tiling in two dimensions needs far less: a block owns a strip
** of W = threads - 2s columns (plus s halo columns on each side, computed
** redundantly) and streams down a chunk of rows, R rows a pass (the band).
** In the pass at row `it` stage l forms its argument Y_l at rows it - l ..
** it - l + R - 1 and evaluates F_l one row behind (F_l(q) needs Y_l at rows
** q-1, q, q+1 and columns j-1, j, j+1); rows it - s .. it - s + R - 1 are
** then complete and their new solution and estimate are written.
** y arrives by cp.async ODB_PF passes ahead into a ring of rows in shared
** memory (so no pass waits for DRAM), which is also stage 0's argument;
** every later Y_l goes through a ring of R + 2 rows (one barrier per stage
** and pass). F_q of the rows in flight stay in registers, named by row
** modulo a multiple of R, which the unrolled loop makes compile-time.
** DRAM traffic is one read of y (plus the halos) and one write of ynew;
** every stage is computed on chip.
*/

#define S2_PF 2   /* passes of y loaded ahead */

/* A row's register slot: offset off from the pass's first row, phase u. */
static int s2_slot(int u, int R, int off, int P) {
  return ((u * R + off) % P + P) % P;
}

/*
** "ysm(q, c) + a.h * (coef * k<q>_<slot>_<c> + ...)" (with_y 0: no y term;
** no terms: y alone or 0.0), in the order of put_lc; q the row variable.
*/
static void put_s2_lc(sbuf *b, int with_y, int slot, int c,
                      const erk_terms *t) {
  if (with_y) put(b, "odb_ysm[(odb_yslot(q) * ODB_K + %d) * ODB_TP + t + 1]",
                  c);
  if (t->n == 0) {
    if (!with_y) put(b, "0.0");
    return;
  }
  if (with_y) put(b, " + ");
  put(b, "a.h * (");
  for (int i = 0; i < t->n; ++i) {
    if (i) put(b, " + ");
    put_num(b, t->coef[i]);
    put(b, " * k%d_%d_%d", t->idx[i], slot, c);
  }
  put(b, ")");
}

/* Stage l of phase u: Y_l at rows ip - l + r (l > 0), F_l one row behind. */
static void put_s2_stage(gen *g, int u, int l, int R, int P, int K) {
  sbuf *b = &g->b;
  if (l == 0) {
    put(b, "      for (int r = 0; r < ODB_R; ++r)\n"
           "        odb_fetch(a.y, odb_ysm, ip + ODB_PF * ODB_R + r, it0, "
           "colc, t);\n"
           "      asm volatile(\"cp.async.commit_group;\" ::);\n"
           "      asm volatile(\"cp.async.wait_group %%0;\" :: \"n\"(ODB_PF));\n");
  } else {
    for (int r = 0; r < R; ++r) {
      int sf = s2_slot(u, R, r - l, P);
      put(b, "      {  // Y_%d at row ip - %d\n", l, l - r);
      put(b, "        const odb_idx q = ip - %d;\n", l - r);
      put(b, "        double *w = odb_ring + (%d * ODB_D3 + odb_mod(q)) * "
             "ODB_K * ODB_TP + t + 1;\n", l - 1);
      for (int c = 0; c < K; ++c) {
        put(b, "        w[%d * ODB_TP] = ", c);
        put_s2_lc(b, 1, sf, c, &g->e.a[l]);
        put(b, ";\n");
      }
      put(b, "      }\n");
    }
  }
  put(b, "      __syncthreads();\n");
  for (int r = 0; r < R; ++r) {
    int sr = s2_slot(u, R, r - l - 1, P);
    put(b, "      {  // F_%d at row ip - %d\n", l, l + 1 - r);
    put(b, "        const odb_idx q = ip - %d;\n", l + 1 - r);
    if (l == 0)
      put(b, "        const odb_cell_in in = odb_rows(odb_ysm, odb_yslot(q), "
             "ODB_YR, t);\n");
    else
      put(b, "        const odb_cell_in in = odb_rows(odb_ring + %d * ODB_D3 * "
             "ODB_K * ODB_TP, odb_mod(q), ODB_D3, t);\n", l - 1);
    put(b, "        double f[ODB_K];\n");
    put(b, "        odb_rhs_cell(q, col, a.tl[%d], in, f);\n", l);
    for (int c = 0; c < K; ++c)
      put(b, "        k%d_%d_%d = f[%d];\n", l, sr, c, c);
    put(b, "      }\n");
  }
}

/* Phase u of the unrolled loop: every stage, then the finished rows. */
static void put_s2_phase(gen *g, int u, int R, int P, int K) {
  sbuf *b = &g->b;
  int S = g->S;
  put(b, "    {  // phase %d\n      const odb_idx ip = it + %d;\n"
         "      if (ip >= it1) break;\n", u, u * R);
  for (int l = 0; l < S; ++l) put_s2_stage(g, u, l, R, P, K);
  for (int r = 0; r < R; ++r) {
    int sl = s2_slot(u, R, r - S, P);
    put(b, "      {  // row ip - %d is complete\n", S - r);
    put(b, "        const odb_idx q = ip - %d;\n", S - r);
    put(b, "        if (own && q >= r0 && q < r1) {\n");
    put(b, "          double *dst = a.ynew + (q * ODB_NC + col) * ODB_K;\n");
    for (int c = 0; c < K; ++c) {
      put(b, "          const double y%d = odb_ysm[(odb_yslot(q) * ODB_K + %d) "
             "* ODB_TP + t + 1];\n", c, c);
      put(b, "          const double yn%d = ", c);
      put_s2_lc(b, 1, sl, c, &g->e.b);
      put(b, ";\n          dst[%d] = yn%d;\n", c, c);
      if (g->plan->has_err) {
        put(b, "          acc += odb_sq_scaled(");
        put_s2_lc(b, 0, sl, c, &g->e.e);
        put(b, ", y%d, yn%d, a.atol, a.rtol);\n", c, c);
      }
    }
    put(b, "        }\n      }\n");
  }
  put(b, "    }\n");
}

/* odb_clamp: a row or column index clamped into 0..n-1 (both skews). */
static void put_s2_clamp(sbuf *b) {
  put(b, "static __device__ __forceinline__ odb_idx odb_clamp(odb_idx q, "
         "odb_idx n) {\n  return q < 0 ? 0 : q >= n ? n - 1 : q;\n}\n");
}

/* The helpers: rows modulo the rings, clamping, cp.async of a row. */
static void put_s2_helpers(sbuf *b) {
  put(b, "static __device__ __forceinline__ int odb_mod(odb_idx q) {\n"
         "  const int r = (int)(q %% ODB_D3);\n"
         "  return r < 0 ? r + ODB_D3 : r;\n}\n");
  put_s2_clamp(b);
  put(b, "// the y ring's slot of row q (rows from it0 - 2 on)\n"
         "#define odb_yslot(q) ((int)(((q) - it0 + ODB_YR) %% ODB_YR))\n");
  put(b, "// this thread's column of row q into the y ring, by cp.async (rows\n"
         "// outside the grid repeat an edge row; their results are unused)\n"
         "static __device__ __forceinline__ void odb_fetch(const double *y,\n"
         "    double *ysm, odb_idx q, odb_idx it0, odb_idx colc, int t) {\n"
         "  const double *src = y + (odb_clamp(q, ODB_NR) * ODB_NC + colc) * "
         "ODB_K;\n"
         "  const int sl = (int)((q - it0 + ODB_YR) %% ODB_YR);\n"
         "  for (int c = 0; c < ODB_K; ++c) {\n"
         "    const unsigned d = (unsigned)__cvta_generic_to_shared(\n"
         "        ysm + (sl * ODB_K + c) * ODB_TP + t + 1);\n"
         "    asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 8;\" ::\n"
         "                 \"r\"(d), \"l\"(src + c));\n"
         "  }\n"
         "}\n");
  put(b, "// a stage argument's rows q-1, q, q+1 at this thread's column in a\n"
         "// ring [row mod depth][c][ODB_TP] of shared memory; each row has a\n"
         "// pad column on both sides, so that j-1 and j+1 need no clamping\n"
         "// (the pads hold garbage that only reaches halo columns)\n"
         "struct odb_cell_in {\n  const double *pm, *p0, *pp;\n};\n");
  put(b, "static __device__ __forceinline__ odb_cell_in odb_rows(const double "
         "*r, int s,\n    int depth, int t) {\n"
         "  const int sm = s == 0 ? depth - 1 : s - 1;\n"
         "  const int sp = s == depth - 1 ? 0 : s + 1;\n"
         "  const double *c = r + t + 1;\n"
         "  return {c + sm * ODB_K * ODB_TP, c + s * ODB_K * ODB_TP,\n"
         "          c + sp * ODB_K * ODB_TP};\n}\n");
  put(b, "static __device__ __forceinline__ double odb_cell_y(const "
         "odb_cell_in &in, int di,\n    int dj, int c) {\n"
         "  const double *r = di < 0 ? in.pm : di > 0 ? in.pp : in.p0;\n"
         "  return r[c * ODB_TP + dj];\n}\n");
  put(b, "#define ODB_Y(di, dj, c) odb_cell_y(in, (di), (dj), (c))\n");
}

/*
** The problem's cell source and the head of k_s2d: launch bounds (with
** min_blocks resident blocks when positive), the shared memory (layout
** says how the rings lie in it), the block's strip, chunk and rows.
*/
/*
** A devctl kernel's prologue: the kernel returns at once when the
** controller is done or holds the state in the other buffer than the
** launch's args.y (args.par: the host queues a step's launches with y and
** ynew, and FSAL's F_0 and F_s-1, in turns, so a rejected attempt skips
** the step after it), else takes h and t + c_l h from the controller. The
** buffers stay the kernel's parameters: a pointer picked at run time would
** hold registers through the body (Verner's stream2d spilled), and
** stream2d's body inlined once per order cost Verner 3%.
*/
static void put_ctl_prologue(gen *g) {
  sbuf *b = &g->b;
  put(b, "  const odb_ctl *const odb_c = odb_a0.ctl;\n"
         "  const int odb_done = *(volatile const int *)&odb_c->done;\n"
         "  const int odb_cur = odb_c->cur;\n"
         "  const double odb_h = odb_c->h, odb_t = odb_c->t;\n"
         "  if (odb_done || odb_cur != (int)odb_a0.par) return;\n"
         "  odb_args a = odb_a0;\n"
         "  a.h = odb_h;\n");
  for (int l = 0; l < g->S; ++l) {
    put(b, "  a.tl[%d] = __dadd_rn(odb_t, __dmul_rn(", l);
    put_num(b, g->m->c[l]);
    put(b, ", a.h));   // as the host rounds it\n");
  }
}

/*
** A kernel launched early (odb_gpu_launch_ex: its blocks may start while
** the step before ends) waits for that step before it reads anything, then
** lets the next step's launch start early too; without such a launch both
** are no-ops.
*/
static void put_early_wait(sbuf *b) {
  put(b, "#if __CUDA_ARCH__ >= 900\n"
         "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");  // the "
         "step before\n"
         "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: "
         "\"memory\");\n"
         "#endif\n");
}

static void put_s2_head(gen *g, int min_blocks, const char *layout) {
  sbuf *b = &g->b;
  put_source(b, g->p->label, "gpu_cell_source", g->p->gpu_cell_source);
  if (min_blocks > 0)
    put(b, "extern \"C\" __global__ void __launch_bounds__(ODB_T, %d)\n",
        min_blocks);
  else
    put(b, "extern \"C\" __global__ void __launch_bounds__(ODB_T)\n");
  if (g->devctl) {
    put(b, "k_s2d(const odb_args odb_a0) {\n  // %s\n", layout);
    put_early_wait(b);
    put_ctl_prologue(g);
  } else {
    put(b, "k_s2d(const odb_args a) {\n  // %s\n", layout);
    put_early_wait(b);
  }
  put(b, "  extern __shared__ __align__(16) double odb_ysm[];\n"
         "  double *const odb_ring = odb_ysm + ODB_YR * ODB_K * ODB_TP;\n"
         "  const int t = (int)threadIdx.x;\n");
  if (g->whole)
    put(b, "  // whole rows: the block's ODB_G sub-strips, side by side, each "
           "stream a\n  // chunk of rows of the grid's full width (no halo "
           "columns; the cell\n  // function stays inside the grid)\n"
           "  const odb_idx sub = (odb_idx)t / ODB_NC;\n"
           "  const odb_idx col = (odb_idx)t - sub * ODB_NC, colc = col;\n"
           "  const odb_idx chunk = (odb_idx)blockIdx.x * ODB_G + sub;\n"
           "  const bool own = sub < ODB_G;\n"
           "  const odb_idx hc = (ODB_NR + (odb_idx)gridDim.x * ODB_G - 1) /\n"
           "                     ((odb_idx)gridDim.x * ODB_G);\n");
  else
    put(b, "  // a cluster of ODB_CL blocks side by side computes ODB_CL * ODB_T\n"
           "  // columns from column cl * ODB_WC on and owns all but ODB_S halo\n"
           "  // columns at either end; the first owns from column 0 and the last\n"
           "  // to the grid's edge (the cell function mirrors there)\n"
           "  const odb_idx strip = (odb_idx)blockIdx.x %% ODB_STRIPS;\n"
           "  const odb_idx chunk = (odb_idx)blockIdx.x / ODB_STRIPS;\n"
           "  const odb_idx cl = strip / ODB_CL, c0 = cl * ODB_WC;\n"
           "  const int rank = (int)(strip - cl * ODB_CL);\n"
           "  const odb_idx col = c0 + rank * ODB_T + t;\n"
           "  const odb_idx colc = odb_clamp(col, ODB_NC);\n"
           "  const bool own = col < ODB_NC && (cl == 0 || col >= c0 + ODB_S) &&\n"
           "                   (col < c0 + ODB_CL * ODB_T - ODB_S ||\n"
           "                    cl == ODB_STRIPS / ODB_CL - 1);\n"
           "  (void)rank;\n"
           "  // rows a chunk, from the grid: one build serves any rows a "
           "block\n"
           "  const odb_idx hc = (ODB_NR + (odb_idx)gridDim.x / ODB_STRIPS - 1) "
           "/\n                     ((odb_idx)gridDim.x / ODB_STRIPS);\n");
  put(b, "  const odb_idx r0 = chunk * hc;\n"
         "  const odb_idx r1 = r0 + hc < ODB_NR ? r0 + hc : ODB_NR;\n");
  if (g->whole)
    put(b, "  // the same passes for every sub-strip (they share the barriers)\n"
           "  const odb_idx it0 = r0 - ODB_S, it1 = r0 + hc + ODB_S;\n");
  else
    put(b, "  const odb_idx it0 = r0 - ODB_S, it1 = r1 + ODB_S;\n");
  put(b, "  double acc = 0.0;\n");
}

/* The end of k_s2d: the loop closed, copies drained, the norm reduced. */
static void put_s2_tail(gen *g) {
  sbuf *b = &g->b;
  put(b, "  }\n  asm volatile(\"cp.async.wait_group 0;\" ::);\n");
  if (g->cluster > 1)   /* the neighbour's last rows in, before either exits */
    put(b, "  if (odb_side && ipe > it0 + 2) odb_xwait(odb_mine, ipe - it0 - 3);"
           "\n  odb_cluster_sync();\n");
  if (g->plan->has_err)
    put(b, "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n");
  else
    put(b, "  (void)acc;\n");
  put(b, "}\n");
}

/* The helpers, the problem's cell source and the kernel k_s2d. */
static void gen_s2_kernel(gen *g, int K, int R, int min_blocks) {
  sbuf *b = &g->b;
  int S = g->S, P = R * ((S + R - 1 + R - 1) / R), U = P / R;
  put_s2_helpers(b);
  put_s2_head(g, min_blocks, "[ODB_YR rows][ODB_K][ODB_TP] of y, then "
              "[stage 1..s-1][ODB_D3][ODB_K][ODB_TP]");
  for (int p = 0; p < P; ++p) {
    put(b, "  double");
    for (int l = 0; l < S; ++l)
      for (int c = 0; c < K; ++c)
        put(b, "%s k%d_%d_%d = 0.0", l || c ? "," : "", l, p, c);
    put(b, ";\n");
  }
  put(b, "  for (int i = 0; i < ODB_PF; ++i) {\n"
         "    for (int r = 0; r < ODB_R; ++r)\n"
         "      odb_fetch(a.y, odb_ysm, it0 + i * ODB_R + r, it0, colc, t);\n"
         "    asm volatile(\"cp.async.commit_group;\" ::);\n  }\n");
  put(b, "  for (odb_idx it = it0; it < it1; it += %d) {\n", P);
  for (int u = 0; u < U; ++u) put_s2_phase(g, u, R, P, K);
  put_s2_tail(g);
}

/*
** Skew 2: stage l evaluates F_l two rows behind stage l-1 (in the pass at
** row ip, at row ip - 1 - 2l), so every row of Y_l that F_l reads was
** written in an earlier pass. A pass then needs one __syncthreads instead
** of one a stage, and its s stages are independent work. Y_l (l >= 1)
** lives in a ring of 4 rows, y in a ring of ODB_YR >= 2 s + ODB_PF + 1.
** What a row carries from stage l to stage l+1 (two passes later) stays in
** registers named by stage and the pass's parity: the F_q still needed or
** the partial sums of the linear combinations still to come, whichever are
** fewer (partial sums add the terms in the order of put_lc). The loop is
** unrolled by four passes, so the stage rings' slots are constants. Every
** stage runs in every pass, also on the rows of the pipeline's start and
** end whose results are unused: a branch per stage would cut the pass
** into blocks that the compiler cannot interleave (on an H100 that cost
** 3-6%), and the completed row is stored at the end of the pass.
** A grid no wider than the block (NC <= threads) needs no halo columns:
** the block holds G = threads / NC sub-strips of whole rows side by side,
** each streaming its own chunk of rows (the cell function mirrors at the
** grid's edges, so no cell reads past its own sub-strip). All sub-strips
** run the same passes, as they share the barriers. At d = 32 (16 columns)
** a strip with halos had computed each column twice.
*/

/*
** Lag 1 (star stencils, a centre row or more kept): stage l one row
** behind stage l-1, at row ip - 1 - l, the stages in order within a pass.
** Row q+1 of Y_l, formed by stage l-1 in the same pass, is read only at
** the thread's own column, from stage l-1's register; the side cells of
** row q were stored at the end of the pass before, so a barrier ends every
** pass. What a thread stores at a pass's end (row q of ring l-1) is no
** row that a slower thread still reads in that pass (rows q-1 and q-2 of
** the 4-row ring), and the y ring's next row overwrites row ip - s - 1,
** last read by this thread's last stage a pass before. The state a row
** carries from stage l to l+1 is used one pass later, so one register set
** a boundary holds it: each stage keeps its F_l to the pass's end, and the
** states are formed after all stages, from the last boundary down.
*/

#define S2W_MAXV (ODB_GEN_MAX_STAGES + 2)

/* A row's values between stage l-1 and stage l. */
typedef struct s2w_state {
  int acc;               /* 1: partial sums of LCs, 0: F_q */
  int n;
  int item[S2W_MAXV];    /* F form: stage q; sums: the LC's id */
} s2w_state;

/* LC id: 0..S-1 the argument Y_id, S the new solution, S+1 the estimate. */
static const erk_terms *s2w_lc(const gen *g, int id) {
  if (id < g->S) return &g->ra[id];
  return id == g->S ? &g->e.b : &g->e.e;
}

/* The terms of x - y (both sorted by stage), exact zeros dropped. */
static void terms_minus(const erk_terms *x, const erk_terms *y,
                        erk_terms *d) {
  int i = 0, j = 0;
  d->n = 0;
  while (i < x->n || j < y->n) {
    int q;
    double c;
    if (j == y->n || (i < x->n && x->idx[i] < y->idx[j])) {
      q = x->idx[i];
      c = x->coef[i++];
    } else if (i == x->n || y->idx[j] < x->idx[i]) {
      q = y->idx[j];
      c = -y->coef[j++];
    } else {
      q = x->idx[i];
      c = x->coef[i++] - y->coef[j++];
    }
    if (c != 0.0) {
      d->idx[d->n] = q;
      d->coef[d->n++] = c;
    }
  }
}

/* The relative arguments: Y_1 from y as before, Y_l from Y_{l-1}. */
static void s2w_relative(gen *g) {
  g->ra[0] = g->e.a[0];
  if (g->S > 1) g->ra[1] = g->e.a[1];
  for (int l = 2; l < g->S; ++l) terms_minus(&g->e.a[l], &g->e.a[l - 1],
                                             &g->ra[l]);
}

/* 1 when LC id is still to be formed after stage l-1 (Y_l is formed by
   stage l-1; ynew is Y_{S-1} when they alias; no estimate without bhat). */
static int s2w_pending(const gen *g, int id, int l) {
  if (id < g->S) return id > l;
  if (id == g->S) return !g->alias;
  return g->plan->has_err;
}

/* 1 when some LC still pending after stage l uses F_l. */
static int s2w_need_f(const gen *g, int l) {
  for (int id = l + 1; id < g->S + 2; ++id)
    if (s2w_pending(g, id, l) && uses(s2w_lc(g, id), l)) return 1;
  return 0;
}

/* The states entering stages 1..S-1: partial sums once they are fewer. */
static void s2w_states(const gen *g, s2w_state *st) {
  memset(st, 0, sizeof *st * (size_t)g->S);
  for (int l = 1; l < g->S; ++l) {
    s2w_state f = { 0, 0, { 0 } }, a = { 1, 0, { 0 } };
    for (int q = 0; q < l; ++q)
      for (int id = l + 1; id < g->S + 2; ++id)
        if (s2w_pending(g, id, l) && uses(s2w_lc(g, id), q)) {
          f.item[f.n++] = q;
          break;
        }
    for (int id = l + 1; id < g->S + 2; ++id) {
      const erk_terms *t = s2w_lc(g, id);
      if (s2w_pending(g, id, l) && t->n > 0 && t->idx[0] < l)
        a.item[a.n++] = id;
    }
    st[l] = st[l - 1].acc || a.n < f.n ? a : f;
  }
}

/* The index of v in st's items, or -1. */
static int s2w_find(const s2w_state *st, int v) {
  for (int j = 0; j < st->n; ++j)
    if (st->item[j] == v) return j;
  return -1;
}

/* The index of LC id's term i in the kernel's table odb_cf. */
static int s2w_cf(const gen *g, int id, int i) {
  int k = 0;
  for (int x = 0; x < id; ++x) k += s2w_lc(g, x)->n;
  return k + i;
}

/* The table odb_cf of every coefficient (constant memory, so that a fused
   multiply-add reads it as an operand). */
static void put_s2w_coefs(gen *g) {
  sbuf *b = &g->b;
  int n = 0;
  put(b, "static __constant__ double odb_cf[] = {");
  for (int id = 0; id < g->S + 2; ++id)
    for (int i = 0; i < s2w_lc(g, id)->n; ++i) {
      put(b, "%s", n == 0 ? "\n  " : n % 4 ? ", " : ",\n  ");
      ++n;
      put_num(b, s2w_lc(g, id)->coef[i]);
    }
  if (n == 0) put(b, "0.0");
  put(b, " };\n");
}

/*
** The terms of LC id with stages up to l, from the state st entering
** stage l (parity par, component c) and F_l in fl<c> (defer: in
** odb_f<l>_<c>, kept to the pass's end with lag 1), all but F_l where but
** is set; "0.0" when none.
*/
static void s2w_partial_but(gen *g, const s2w_state *st, int l, int par,
                            int c, int id, int defer, int but) {
  sbuf *b = &g->b;
  const erk_terms *t = s2w_lc(g, id);
  int any = 0;
  if (st->acc) {
    int j = s2w_find(st, id);
    if (j >= 0) {
      put(b, "s%d_%d_%d_%d", l, par, c, j);
      any = 1;
    }
  }
  for (int i = 0; i < t->n; ++i) {
    int q = t->idx[i];
    if (q > l || (st->acc && q < l) || (but && q == l)) continue;
    if (any) put(b, " + ");
    put(b, "odb_cf[%d]", s2w_cf(g, id, i));
    if (q == l && defer) put(b, " * odb_f%d_%d", l, c);
    else if (q == l) put(b, " * fl%d", c);
    else put(b, " * s%d_%d_%d_%d", l, par, c, s2w_find(st, q));
    any = 1;
  }
  if (!any) put(b, "0.0");
}

/* s2w_partial_but with every term */
static void s2w_partial(gen *g, const s2w_state *st, int l, int par, int c,
                        int id, int defer) {
  s2w_partial_but(g, st, l, par, c, id, defer, 0);
}

/*
** The index in odb_cf of F_l's coefficient in LC id, or -1 where F_l is not
** in it.
*/
static int s2w_own_cf(const gen *g, int l, int id) {
  const erk_terms *t = s2w_lc(g, id);
  for (int i = 0; i < t->n; ++i)
    if (t->idx[i] == l) return s2w_cf(g, id, i);
  return -1;
}

/* Whether LC id has terms besides F_l in the state entering stage l. */
static int s2w_has_other(const gen *g, const s2w_state *st, int l, int id) {
  const erk_terms *t = s2w_lc(g, id);
  if (st->acc && s2w_find(st, id) >= 0) return 1;
  for (int i = 0; i < t->n; ++i)
    if (t->idx[i] < l && !st->acc) return 1;
  return 0;
}

/*
** Y_{l+1}, ynew or the error of stage l's row: "yexpr + a.h * (LC id)"
** (yexpr NULL: no y term). At lag 1, where each stage waits for the one
** before, F_l (just formed) enters last instead: "yexpr + a.h * (terms but
** F_l) + (a.h * odb_cf[k]) * fl<c>", one fused multiply-add from Y_{l+1}
** instead of two, whose factor is the same in every pass (the compiler
** keeps it in registers). Lag 2 keeps one product by h: its stages do not
** wait for each other within a pass, and the factors would take registers
** (DOPRI5 already spills at lag 2).
*/
static void s2w_lc_term(gen *g, const s2w_state *st, int l, int par, int c,
                        int id, const char *yexpr) {
  sbuf *b = &g->b;
  int k = g->lag == 1 ? s2w_own_cf(g, l, id) : -1;
  if (yexpr) put(b, "%s + ", yexpr);
  if (k < 0) {
    put(b, "a.h * (");
    s2w_partial(g, st, l, par, c, id, 0);
    put(b, ")");
    return;
  }
  if (s2w_has_other(g, st, l, id)) {
    put(b, "a.h * (");
    s2w_partial_but(g, st, l, par, c, id, 0, 1);
    put(b, ") + ");
  }
  put(b, "(a.h * odb_cf[%d]) * fl%d", k, c);
}

/*
** The helpers of a cluster (ODB_CL > 1, lag 1): at a pass's end each
** block's edge thread (t = 0 with a block on its left, t = ODB_T - 1 with
** one on its right) sends the rows of Y_1..Y_{s-1} it has just stored in
** the stage rings to the neighbour's pad cells of the same rows, by
** st.async, which completes their bytes on the neighbour's mbarrier for
** that side and the pass's parity. The neighbour's edge thread arms that
** barrier and waits for it before stage 1 of its next pass (stage 0 reads
** y, whose pads the edge threads fetch themselves). A block sends pass k
** only after it has received its neighbour's pass k-1, and the neighbour
** receives pass k-1 before it sends pass k, so neither runs more than a
** pass ahead: two barriers a side and the 4-row rings suffice, as for the
** threads of one block. A wait longer than 2 s traps (a launch failure
** with the call and line) instead of hanging.
** Measured slower than strips with halo columns (README, gpu_stream2d:
** clusters), so only tiling.cluster asks for it.
*/
static void put_s2w_cluster_helpers(sbuf *b) {
  put(b, "#if ODB_CL > 1\n"
         "#if __CUDA_ARCH__ < 900\n"
         "#error a cluster of blocks needs compute capability 9.0\n"
         "#endif\n"
         "#define ODB_XBYTES ((ODB_S - 1) * ODB_K * 8)   // a side's cells a "
         "pass\n"
         "static __device__ __forceinline__ unsigned odb_smem(const void *p) {\n"
         "  return (unsigned)__cvta_generic_to_shared(p);\n}\n"
         "// shared address a in the block of cluster rank r\n"
         "static __device__ __forceinline__ unsigned odb_mapa(unsigned a, int r) "
         "{\n  unsigned x;\n"
         "  asm volatile(\"mapa.shared::cluster.u32 %%0, %%1, %%2;\" : \"=r\"(x) :"
         "\n               \"r\"(a), \"r\"(r));\n  return x;\n}\n"
         "static __device__ __forceinline__ void odb_cluster_sync(void) {\n"
         "  asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\t\"\n"
         "               \"barrier.cluster.wait.acquire.aligned;\" ::: "
         "\"memory\");\n}\n"
         "// waits for the neighbour's cells of pass k (barrier mb + 8 (k & 1))\n"
         "static __device__ __forceinline__ void odb_xwait(unsigned mb, "
         "odb_idx k) {\n"
         "  const unsigned bar = mb + 8u * (unsigned)(k & 1);\n"
         "  const unsigned par = (unsigned)((k >> 1) & 1);\n"
         "  unsigned done = 0;\n"
         "  unsigned long long t0 = 0;\n"
         "  asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], "
         "%%1;\" ::\n               \"r\"(bar), \"n\"(ODB_XBYTES) : \"memory\");"
         "\n  do {\n"
         "    asm volatile(\"{\\n\\t.reg .pred p;\\n\\t\"\n"
         "                 \"mbarrier.try_wait.parity.acquire.cluster.shared::"
         "cta.b64 \"\n                 \"p, [%%1], %%2;\\n\\t\"\n"
         "                 \"selp.u32 %%0, 1, 0, p;\\n\\t}\" : \"=r\"(done) :\n"
         "                 \"r\"(bar), \"r\"(par) : \"memory\");\n"
         "    if (!done) {   // a watchdog: 2 s without the cells is a fault\n"
         "      unsigned long long now;\n"
         "      asm volatile(\"mov.u64 %%0, %%%%globaltimer;\" : \"=l\"(now));\n"
         "      if (!t0) t0 = now;\n"
         "      else if (now - t0 > 2000000000ull) __trap();\n"
         "    }\n"
         "  } while (!done);\n}\n"
         "// a cell (ODB_K doubles) to the neighbour's shared address x, its bytes\n"
         "// completing on the neighbour's barrier mb\n"
         "static __device__ __forceinline__ void odb_xsend(unsigned x, "
         "unsigned mb,\n    const double *v) {\n"
         "#if ODB_K %% 2 == 0\n"
         "  for (int c = 0; c < ODB_K; c += 2)\n"
         "    asm volatile(\"st.async.shared::cluster.mbarrier::complete_tx::"
         "bytes.v2.f64 \"\n                 \"[%%0], {%%1, %%2}, [%%3];\" :: "
         "\"r\"(x + 8 * c), \"d\"(v[c]),\n"
         "                 \"d\"(v[c + 1]), \"r\"(mb) : \"memory\");\n"
         "#else\n"
         "  for (int c = 0; c < ODB_K; ++c)\n"
         "    asm volatile(\"st.async.shared::cluster.mbarrier::complete_tx::"
         "bytes.f64 \"\n                 \"[%%0], %%1, [%%2];\" :: "
         "\"r\"(x + 8 * c), \"d\"(v[c]),\n                 \"r\"(mb) : "
         "\"memory\");\n"
         "#endif\n}\n"
         "#endif\n");
}

/*
** A cluster's set-up in k_s2d: the barriers ([left pad, right pad][a
** pass's parity]) initialised and seen by the whole cluster before any
** block sends; the edge thread's side (odb_side: false for none), its own
** barriers, the neighbour's barriers and pad cell (of stage ring 0, slot 0).
*/
static void put_s2w_cluster_setup(gen *g) {
  if (g->cluster <= 1) return;
  put(&g->b, "  __shared__ __align__(8) unsigned long long odb_mb[4];\n"
             "  if (t < 4)\n"
             "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\" :: "
             "\"r\"(odb_smem(odb_mb + t)));\n"
             "  asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: "
             "\"memory\");\n"
             "  odb_cluster_sync();\n"
             "  const bool odb_side = (t == 0 && rank > 0) ||\n"
             "                        (t == ODB_T - 1 && rank < ODB_CL - 1);\n"
             "  const int odb_nb = odb_side ? rank + (t == 0 ? -1 : 1) : rank;\n"
             "  const unsigned odb_mine = odb_smem(odb_mb + (t == 0 ? 0 : 2));\n"
             "  const unsigned odb_xmb = odb_mapa(odb_smem(odb_mb + (t == 0 ? "
             "2 : 0)), odb_nb);\n"
             "  const unsigned odb_xpad = odb_mapa(odb_smem(odb_ring + (t == 0 "
             "? ODB_T + 1 : 0) *\n                                       ODB_K),"
             " odb_nb);\n");
}

/* Before stage 1 of a pass in a cluster: the edge thread waits for the rows
   its neighbour sent at the end of the pass before (none before the
   first pass). */
static void put_s2w_cluster_wait(gen *g) {
  if (g->cluster <= 1) return;
  put(&g->b, "      if (odb_side && ip > it0 + 2) odb_xwait(odb_mine, ip - it0 "
             "- 3);\n");
}

/* The stage rings' slot of the row of Y_{l+1} that pass u stores. */
static int s2w_store_slot(const gen *g, int u, int l) {
  return s2_slot(u, 1, -1 - g->lag * l, 4);
}

/* The end of pass u in a cluster: the rows just stored in the stage rings
   sent to the neighbour's pad cells of the same rows. */
static void put_s2w_cluster_send(gen *g, int u) {
  if (g->cluster <= 1) return;
  put(&g->b, "      if (odb_side) {\n"
             "        const unsigned mb = odb_xmb + 8u * (unsigned)((ip - it0 - 2)"
             " & 1);\n");
  for (int l = 0; l < g->S - 1; ++l) {
    int sl = s2w_store_slot(g, u, l);
    put(&g->b, "        {\n          const double v[ODB_K] = {");
    for (int c = 0; c < g->p->grid_comps; ++c)
      put(&g->b, "%sodb_w%d_%d", c ? ", " : "", l, c);
    put(&g->b, "};\n          odb_xsend(odb_xpad + %d * ODB_TP * ODB_K * 8, "
               "mb, v);\n        }\n", l * 4 + sl);
  }
  put(&g->b, "      }\n");
}

/*
** The stencil of stage l (pass u, ring slot sl of its row): the rows'
** pointers, and the centre column's values: with carry c, the newest c
** rows from registers (the newest is what stage l-1 formed in the last
** pass, the others this stage's own from earlier passes), the rest loaded.
*/
static void put_s2w_in(gen *g, int l, int sl, int K) {
  sbuf *b = &g->b;
  int carry = g->carry;
  if (l == 0)
    put(b, "          odb_cell_in in = odb_in3(odb_ysm, odb_ysub(ys, 2), "
           "ysl, ys, t);\n");
  else
    put(b, "          odb_cell_in in = odb_in3(odb_ring + %d * 4 * ODB_K * "
           "ODB_TP, %d, %d, %d, t);\n", l - 1, (sl + 3) % 4, sl, (sl + 1) % 4);
  for (int c = 0; c < K; ++c) {
    if (carry >= 1 && l > 0)
      put(b, "          in.vp[%d] = odb_w%d_%d;\n", c, l - 1, c);
    else if (carry >= 1)
      put(b, "          in.vp[%d] = in.pp[%d];\n", c, c);
    if (carry >= 2) put(b, "          in.v0[%d] = odb_k%d_0_%d;\n", c, l, c);
    else put(b, "          in.v0[%d] = in.p0[%d];\n", c, c);
    if (carry >= 3) put(b, "          in.vm[%d] = odb_k%d_m_%d;\n", c, l, c);
    else if (carry >= 1)
      put(b, "          in.vm[%d] = in.pm[%d];\n", c, c);
  }
}

/*
** The state a row carries into stage l+1 (parity par, indented by ind),
** from stage l's state and F_l: fl<c> in the stage (lag 2), odb_f<l>_<c>
** kept to the pass's end (defer, lag 1).
*/
static void put_s2w_next(gen *g, const s2w_state *st, int l, int par, int K,
                         int defer, const char *ind) {
  sbuf *b = &g->b;
  const s2w_state *nx = &st[l + 1];
  for (int c = 0; c < K; ++c)
    for (int j = 0; j < nx->n; ++j) {
      put(b, "%ss%d_%d_%d_%d = ", ind, l + 1, par, c, j);
      if (nx->acc) s2w_partial(g, &st[l], l, par, c, nx->item[j], defer);
      else if (nx->item[j] == l && defer) put(b, "odb_f%d_%d", l, c);
      else if (nx->item[j] == l) put(b, "fl%d", c);
      else put(b, "s%d_%d_%d_%d", l, par, c, s2w_find(&st[l], nx->item[j]));
      put(b, ";\n");
    }
}

/*
** Stage l of phase u: F_l at row ip - 1 - 2l, then Y_{l+1} there (from
** Y_l's centre and the relative LC ra[l+1], into odb_w<l>, stored at the
** pass's end) and the row's state for stage l+1, or (last stage) its new
** solution.
*/
static void put_s2w_stage(gen *g, const s2w_state *st, int u, int l, int K) {
  sbuf *b = &g->b;
  int S = g->S, par = g->lag == 2 ? u & 1 : 0, back = 1 + g->lag * l;
  int sl = s2_slot(u, 1, -back, 4);   /* the stage rings' slot of its row */
  put(b, "      {  // stage %d at row ip - %d\n", l, back);
  put(b, "        const odb_idx q = ip - %d;\n", back);
  if (l == 0 || l == S - 1)
    put(b, "        const int ysl = odb_ysub(ys, %d);\n", back);
  put(b, "        {\n");
  put(b, "          double fl[ODB_K];\n");
  put_s2w_in(g, l, sl, K);
  if (s2w_need_f(g, l))
    put(b, "          odb_rhs_cell(q, col, a.tl[%d], in, fl);\n", l);
  else
    put(b, "          for (int c = 0; c < ODB_K; ++c) fl[c] = 0.0;\n");
  for (int c = 0; c < K; ++c) {   /* the centres' rows move on a pass */
    put(b, "          const double fl%d = fl[%d];\n", c, c);
    if (g->carry >= 3)
      put(b, "          odb_k%d_m_%d = in.v0[%d];\n", l, c, c);
    if (g->carry >= 2)
      put(b, "          odb_k%d_0_%d = in.vp[%d];\n", l, c, c);
  }
  if (l < S - 1) {
    for (int c = 0; c < K; ++c) {
      char y0[32];
      snprintf(y0, sizeof y0, "in.v0[%d]", c);
      put(b, "          odb_w%d_%d = ", l, c);
      s2w_lc_term(g, &st[l], l, par, c, l + 1, y0);
      put(b, ";\n");
    }
    if (g->lag == 1)   /* the state for stage l+1 after it has run */
      for (int c = 0; c < K; ++c)
        put(b, "          odb_f%d_%d = fl%d;\n", l, c, c);
    else
      put_s2w_next(g, st, l, par, K, 0, "          ");
  } else {   /* the row's results; put_s2w_done stores them */
    put(b, "          const double *yr = odb_ysm + (ysl * ODB_TP + t + 1) * "
           "ODB_K;\n");
    for (int c = 0; c < K; ++c) {
      put(b, "          odb_yv[%d] = yr[%d];\n", c, c);
      if (g->alias)
        put(b, "          odb_yo[%d] = in.v0[%d];\n", c, c);
      else {
        char yv[32];
        snprintf(yv, sizeof yv, "odb_yv[%d]", c);
        put(b, "          odb_yo[%d] = ", c);
        s2w_lc_term(g, &st[l], l, par, c, S, yv);
        put(b, ";\n");
      }
      if (g->plan->has_err) {
        put(b, "          odb_eo[%d] = ", c);
        s2w_lc_term(g, &st[l], l, par, c, S + 1, NULL);
        put(b, ";\n");
      }
    }
    if (g->plan->has_err) {   /* the row's share of the norm, here: fewer
                                 registers live to the pass's end than yv,
                                 yo and eo (H100, N = 2896: bs3 146 -> 140
                                 us, Verner 358 -> 353 us) */
      put(b, "          odb_nv = 0.0;\n"
             "          for (int c = 0; c < ODB_K; ++c)\n"
             "            odb_nv += odb_sq_scaled(odb_eo[c], odb_yv[c], "
             "odb_yo[c], a.atol, a.rtol);\n");
    }
    if (g->early_store)   /* ynew's row now (st.global.cs: no alias of
                             the rings, so the loads that follow may pass it) */
      put(b, "          if (own && q >= r0 && q < r1) {\n"
             "            double *dst = a.ynew + (q * ODB_NC + col) * ODB_K;\n"
             "#if ODB_K %% 2 == 0\n"
             "            for (int c = 0; c < ODB_K; c += 2)\n"
             "              __stcs(reinterpret_cast<double2 *>(dst + c), "
             "make_double2(odb_yo[c], odb_yo[c + 1]));\n"
             "#else\n"
             "            for (int c = 0; c < ODB_K; ++c) __stcs(dst + c, "
             "odb_yo[c]);\n"
             "#endif\n%s"
             "          }\n", g->plan->has_err ? "            acc += odb_nv;\n"
                                                : "");
  }
  put(b, "        }\n      }\n");
}

/*
** Lag 1: the state a row carries from stage l to stage l+1, formed after
** stage l+1 has used the one of the row before (one register set a
** boundary instead of one a pass's parity); for l = S-2 down to 0, so
** that each reads stage l's state before it is replaced.
*/
static void put_s2w_defer(gen *g, const s2w_state *st, int K) {
  for (int l = g->S - 2; l >= 0; --l)
    put_s2w_next(g, st, l, 0, K, 1, "      ");
}

/*
** The stores of pass u, after all its loads: each stage's row of Y_{l+1}
** (odb_w<l>) into its ring. The compiler cannot tell the y ring's run-time
** slots from the stage rings, so a store among the stages would hold every
** later load of y behind it.
*/
static void put_s2w_stores(gen *g, int u, int K) {
  sbuf *b = &g->b;
  for (int l = 0; l < g->S - 1; ++l) {
    int sl = s2w_store_slot(g, u, l);
    put(b, "      {\n        double *w = odb_ring + ((%d * 4 + %d) * ODB_TP "
           "+ t + 1) * ODB_K;\n", l, sl);
    for (int c = 0; c < K; ++c)
      put(b, "        w[%d] = odb_w%d_%d;\n", c, l, c);
    put(b, "      }\n");
  }
}

/* The end of a pass: the completed row's new solution and its share of
   the norm (computed by the last stage), after every stage (so that the
   stages form one block for the scheduler). */
static void put_s2w_done(gen *g) {
  sbuf *b = &g->b;
  if (g->early_store) return;   /* the last stage stored it */
  put(b, "      {\n        const odb_idx q = ip - %d;\n"
         "        if (own && q >= r0 && q < r1) {\n"
         "          double *dst = a.ynew + (q * ODB_NC + col) * ODB_K;\n"
         "          for (int c = 0; c < ODB_K; ++c) {\n"
         "            dst[c] = odb_yo[c];\n", 1 + g->lag * (g->S - 1));
  put(b, "          }\n");
  if (g->plan->has_err) put(b, "          acc += odb_nv;\n");
  put(b, "        }\n      }\n");
}

/*
** The helpers of skew 2: rows of the rings are [ODB_TP][ODB_K], a cell's
** components side by side (one 16-byte access for two), with a pad cell
** on both sides; the y ring's slots, a stencil's three rows, a row's
** cell fetched by cp.async.
*/
static void put_s2w_helpers(sbuf *b) {
  put_s2_clamp(b);
  put(b, "struct odb_cell_in {\n  const double *pm, *p0, *pp;\n"
         "  double vm[ODB_K], v0[ODB_K], vp[ODB_K];   // the column's centres\n"
         "};\n");
  put(b, "static __device__ __forceinline__ double odb_cell_y(const "
         "odb_cell_in &in, int di,\n    int dj, int c) {\n"
         "  const double *r = di < 0 ? in.pm : di > 0 ? in.pp : in.p0;\n"
         "#if ODB_K %% 2 == 0   // the pair of components in one 16-byte load\n"
         "  const double2 v = *reinterpret_cast<const double2 *>(r + dj * ODB_K +"
         " (c & ~1));\n"
         "  return c & 1 ? v.y : v.x;\n"
         "#else\n"
         "  return r[dj * ODB_K + c];\n"
         "#endif\n}\n");
  put(b, "static __device__ __forceinline__ double odb_cell_yc(const "
         "odb_cell_in &in, int di,\n    int c) {\n"
         "  return di < 0 ? in.vm[c] : di > 0 ? in.vp[c] : in.v0[c];\n}\n");
  put(b, "// a star stencil (ODB_STAR: a barrier every second pass) reads no\n"
         "// diagonal neighbour; where one is read, the call below stays and\n"
         "// the build fails naming it (it is defined nowhere)\n"
         "extern \"C\" __device__ void "
         "odb_grid_star_problem_reads_a_diagonal_neighbour(void);\n");
  put(b, "// column offset 0 reads the centres (registers; the test folds away\n"
         "// where the compiler knows the offset)\n"
         "static __device__ __forceinline__ double odb_cell_get(const "
         "odb_cell_in &in, int di,\n    int dj, int c) {\n"
         "  if (ODB_STAR && di != 0 && dj != 0)\n"
         "    odb_grid_star_problem_reads_a_diagonal_neighbour();\n"
         "  return ODB_CARRY > 0 && dj == 0 ? odb_cell_yc(in, di, c)\n"
         "                                  : odb_cell_y(in, di, dj, c);\n"
         "}\n"
         "#define ODB_Y(di, dj, c) odb_cell_get(in, (di), (dj), (c))\n");
  put(b, "// slot of row ip - c in the y ring, ys the slot of row ip\n"
         "#define odb_ysub(ys, c) ((ys) >= (c) ? (ys) - (c) : (ys) - (c) + "
         "ODB_YR)\n");
  put(b, "static __device__ __forceinline__ odb_cell_in odb_in3(const double "
         "*r, int sm,\n    int s0, int sp, int t) {\n"
         "  const double *c = r + (t + 1) * ODB_K;\n"
         "  odb_cell_in in = {c + sm * ODB_TP * ODB_K, c + s0 * ODB_TP * ODB_K,\n"
         "                    c + sp * ODB_TP * ODB_K};\n"
         "  return in;\n}\n");
  put(b, "// this thread's cell of row q into slot sl of the y ring (16 bytes\n"
         "// a copy when the components pair up)\n"
         "static __device__ __forceinline__ void odb_fetch_at(const double "
         "*y,\n    double *ysm, odb_idx q, int sl, odb_idx colc, int t) {\n"
         "  const double *src = y + (odb_clamp(q, ODB_NR) * ODB_NC + colc) * "
         "ODB_K;\n"
         "  const unsigned d = (unsigned)__cvta_generic_to_shared(\n"
         "      ysm + (sl * ODB_TP + t + 1) * ODB_K);\n"
         "#if ODB_K %% 2 == 0\n"
         "  for (int c = 0; c < ODB_K; c += 2)\n"
         "    asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 16;\" ::\n"
         "                 \"r\"(d + 8 * c), \"l\"(src + c));\n"
         "#else\n"
         "  for (int c = 0; c < ODB_K; ++c)\n"
         "    asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 8;\" ::\n"
         "                 \"r\"(d + 8 * c), \"l\"(src + c));\n"
         "#endif\n"
         "#if ODB_CL > 1   // the edge threads fetch the pad cell beside too\n"
         "  if (t == 0 || t == ODB_T - 1) {\n"
         "    const int e = t == 0 ? -1 : 1;\n"
         "    const double *ps = y + (odb_clamp(q, ODB_NR) * ODB_NC +\n"
         "                            odb_clamp(colc + e, ODB_NC)) * ODB_K;\n"
         "    for (int c = 0; c < ODB_K; ++c)\n"
         "      asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 8;\" ::\n"
         "                   \"r\"(d + 8 * (c + e * ODB_K)), \"l\"(ps + c));\n"
         "  }\n"
         "#endif\n"
         "}\n");
  put_s2w_cluster_helpers(b);
}

/* The kernel k_s2d with skew 2 (the helpers of put_s2w_helpers first). */
static void gen_s2w_kernel(gen *g, int K, int min_blocks) {
  sbuf *b = &g->b;
  int S = g->S;
  s2w_state st[ODB_GEN_MAX_STAGES];
  s2w_relative(g);
  s2w_states(g, st);
  put(b, "#define ODB_CARRY %d\n#define ODB_STAR %d\n#define ODB_LAG %d\n",
      g->carry, g->star, g->lag);
  put_s2w_helpers(b);
  put_s2w_coefs(g);
  put_s2_head(g, min_blocks, "[ODB_YR rows][ODB_TP][ODB_K] of y, then "
              "[stage 1..s-1][4][ODB_TP][ODB_K]");
  put_s2w_cluster_setup(g);
  for (int l = 1; l < S; ++l)
    for (int p = 0; p < g->lag; ++p)
      for (int c = 0; c < K; ++c)
        for (int j = 0; j < st[l].n; ++j)
          put(b, "  double s%d_%d_%d_%d = 0.0;\n", l, p, c, j);
  for (int l = 0; l < S; ++l)
    for (int c = 0; c < K; ++c) {
      if (l < S - 1) put(b, "  double odb_w%d_%d = 0.0;\n", l, c);
      if (g->carry >= 2) put(b, "  double odb_k%d_0_%d = 0.0;\n", l, c);
      if (g->carry >= 3) put(b, "  double odb_k%d_m_%d = 0.0;\n", l, c);
    }
  put(b, "  for (int i = 0; i <= 2 + ODB_PF; ++i) {\n"
         "    odb_fetch_at(a.y, odb_ysm, it0 + i, i, colc, t);\n"
         "    asm volatile(\"cp.async.commit_group;\" ::);\n  }\n"
         "  asm volatile(\"cp.async.wait_group %%0;\" :: \"n\"(ODB_PF));\n"
         "  __syncthreads();\n");
  for (int c = 0; c < K && g->carry >= 2; ++c) {   /* stage 0's first rows */
    put(b, "  odb_k0_0_%d = odb_ysm[(ODB_TP + t + 1) * ODB_K + %d];\n", c, c);
    if (g->carry >= 3)
      put(b, "  odb_k0_m_%d = odb_ysm[(t + 1) * ODB_K + %d];\n", c, c);
  }
  put(b, "  int ys = 2;   // the y ring's slot of row ip\n"
         "  const odb_idx ipe = it1 + %d;\n"
         "  for (odb_idx i0 = it0 + 2; i0 < ipe; i0 += 4) {\n",
      (g->lag - 1) * (S - 1));
  for (int u = 0; u < 4; ++u) {
    put(b, "    {  // pass %d of 4\n      const odb_idx ip = i0 + %d;\n"
           "      if (ip >= ipe) break;\n", u, u);
    put(b, "      double odb_yv[ODB_K], odb_yo[ODB_K], odb_eo[ODB_K], "
           "odb_nv;\n");
    if (g->lag == 1) {   /* stage l uses the row stage l-1 formed now */
      for (int l = 0; l < S - 1; ++l) {
        put(b, "      double");
        for (int c = 0; c < K; ++c)
          put(b, "%s odb_f%d_%d", c ? "," : "", l, c);
        put(b, ";   // F_%d, for stage %d's state\n", l, l + 1);
      }
      for (int l = 0; l < S; ++l) {
        if (l == 1) put_s2w_cluster_wait(g);
        put_s2w_stage(g, st, u, l, K);
      }
      put_s2w_defer(g, st, K);
    } else {   /* stage l uses rows formed in earlier passes */
      for (int l = S - 1; l >= 0; --l) put_s2w_stage(g, st, u, l, K);
    }
    put_s2w_stores(g, u, K);
    put_s2w_cluster_send(g, u);
    put_s2w_done(g);
    put(b, "      {\n        const int yf = ys + ODB_PF + 1 >= ODB_YR ? ys + "
           "ODB_PF + 1 - ODB_YR : ys + ODB_PF + 1;\n"
           "        odb_fetch_at(a.y, odb_ysm, ip + ODB_PF + 1, yf, colc, t);\n"
           "      }\n"
           "      asm volatile(\"cp.async.commit_group;\" ::);\n"
           "      asm volatile(\"cp.async.wait_group %%0;\" :: \"n\"(ODB_PF) : "
           "\"memory\");\n");
    if (g->lag == 1 || !g->star || u % 2 == 1)
      put(b, "      __syncthreads();\n");
    put(b, "      ys = ys + 1 == ODB_YR ? 0 : ys + 1;\n    }\n");
  }
  put_s2_tail(g);
}

/* See the header. */
long odb_gen_s2d_strips(long NC, long T, long S, long C) {
  long wc = C * T - 2 * S;   /* the columns an inner cluster owns */
  if (NC <= C * T) return C;
  if (wc < 1) return -1;
  return C * (1 + (NC - C * T + wc - 1) / wc);
}

static odb_status gen_stream2d(gen *g, const odb_gen_opts *o) {
  const odb_problem *p = g->p;
  odb_gen_plan *pl = g->plan;
  long S = g->S, T = o->threads, W = T - 2 * S, NR = p->grid_rows;
  long NC = p->grid_cols, K = p->grid_comps, HC, strips, chunks, blocks;
  long R = o->band > 0 ? o->band : 1, skew = o->skew > 0 ? o->skew : 1;
  long C = o->cluster > 0 ? o->cluster : 1;
  long G = skew == 2 && NC <= T ? T / NC : 0;   /* whole rows: sub-strips */
  long D3 = skew == 2 ? 4 : R + 2;   /* rings' rows */
  int star = skew == 2 && p->grid_star && !getenv("ODB_S2D_SYNC_EACH");
  /* star: one more row of y, so that no barrier-free pass overwrites by
     cp.async a row the thread read in the pass before */
  long lag = o->lag > 0 ? o->lag : 2;
  /* lag 1: rows ip - S .. ip + ODB_PF + 1, a barrier every pass */
  long YR = skew != 2 ? S + R * (S2_PF + 1) + 2
            : lag == 1 ? S + S2_PF + 2 : 2 * S + S2_PF + 1 + star;
  if (!p->gpu_cell_source || K < 1 || K > 8 || NR < 2 || NC < 2 ||
      NR * NC * K != p->n)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "gpu_stream2d: %s is not a 2-D "
                    "grid problem with a cell source (gpu_cell_source, "
                    "rows x cols x comps = n, 1..8 comps)", p->label);
  if (G > 0) W = NC;   /* no halo columns */
  if (W < 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: %ld threads per block leave "
                    "no column of their own: a strip needs more than 2 s = "
                    "%ld threads", T, 2 * S);
  if (o->rows < 0 || R > 4)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: rows (%ld) must be positive "
                    "(0: all rows) and the band (%ld) 1..4 rows", o->rows, R);
  if (skew < 1 || skew > 2)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: skew (%ld) must be 1 (a "
                    "barrier a stage) or 2 (a barrier a pass)", skew);
  if (o->carry < 0 || o->carry > 3)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: carry (%d) must be 0..3: "
                    "the stencil's centre rows kept in registers", o->carry);
  if (skew == 1 && o->carry > 0)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: carry %d needs skew 2 (skew "
                    "1 loads every row)", o->carry);
  if (lag < 1 || lag > 2)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: lag (%ld) must be 1 or 2: "
                    "the rows stage l runs behind stage l-1", lag);
  if (lag == 1 && (skew != 2 || !p->grid_star || o->carry < 1))
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: lag 1 needs skew 2, a star "
                    "stencil (grid_star: no diagonal neighbour read) and "
                    "carry 1..3 (the row stage l-1 forms in the same pass "
                    "comes from registers); here skew %ld, %s, carry %d",
                    skew, p->grid_star ? "a star stencil" : "no star stencil",
                    o->carry);
  g->lag = (int)lag;
  g->carry = o->carry;
  g->whole = G > 0;
  g->star = star;
  g->early_store = skew == 2 && o->early_store;
  if (skew == 2 && R != 1)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: skew 2 takes a band of 1 row "
                    "(band %ld); a band above 1 needs skew 1", R);
  if (C != 1 && C != 2 && C != 4 && C != 8)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: cluster (%ld) must be 1, 2, 4 "
                    "or 8 blocks", C);
  if (C > 1 && (skew != 2 || lag != 1 || G > 0))
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: a cluster of %ld blocks needs "
                    "skew 2 and lag 1 on a grid wider than the block (here "
                    "skew %ld, lag %ld, %ld columns, %ld threads)", C, skew,
                    lag, NC, T);
  g->cluster = (int)C;
  HC = o->rows > 0 && o->rows < NR ? o->rows : NR;
  strips = G > 0 ? 1 : odb_gen_s2d_strips(NC, T, S, C);
  chunks = (NR + HC - 1) / HC;
  blocks = G > 0 ? (chunks + G - 1) / G : strips * chunks;
  if (blocks > 2147483647L)
    return ODB_FAIL(ODB_ERR_ARG, "gpu_stream2d: %ld blocks are too many; "
                    "give more rows per block", blocks);
  if (G > 0) chunks = blocks * G;   /* the kernel's: every sub-strip one */
  pl->strips = strips;
  pl->cluster = (int)C;
  pl->subs = G > 0 ? (int)G : 1;
  pl->chunks = chunks;
  pl->rows = (NR + chunks - 1) / chunks;   /* the kernel's split: even */
  pl->ntiles = blocks;
  pl->nparts = pl->ntiles;
  pl->tile_w = W;
  pl->tile_h = S;
  pl->scratch[0] = pl->scratch[1] = 0;
  put(&g->b, "#define ODB_S %ld\n#define ODB_K %ld\n"
             "#define ODB_W ((odb_idx)%ld)\n#define ODB_NR ((odb_idx)%ld)\n"
             "#define ODB_NC ((odb_idx)%ld)\n"
             "#define ODB_STRIPS ((odb_idx)%ld)\n#define ODB_PF %d\n"
             "#define ODB_R %ld\n#define ODB_D3 %ld\n#define ODB_YR %ld\n"
             "#define ODB_TP (ODB_T + 2)\n", S, K, W, NR, NC, strips,
      S2_PF, R, D3, YR);
  put(&g->b, "#define ODB_CL %ld\n#define ODB_WC ((odb_idx)%ld)\n", C,
      C * T - 2 * S);
  if (G > 0) put(&g->b, "#define ODB_G ((odb_idx)%ld)\n", G);
  if (skew == 2) gen_s2w_kernel(g, (int)K, o->min_blocks);
  else gen_s2_kernel(g, (int)K, (int)R, o->min_blocks);
  {
    /* y is read by every block over its strip and rows with their halos
       (whole rows: by each sub-strip over its rows and halo rows) */
    double rv = G > 0 ? (double)(chunks * NC) * (double)(pl->rows + 2 * S) /
                        ((double)NR * (double)NC)
                      : (double)(strips * T) * (double)(NR + chunks * 2 * S) /
                        ((double)NR * (double)NC);
    odb_gen_launch *l = add_launch(g, "k_s2d", ODB_GEN_ALWAYS,
                                   pl->has_err, rv, 1);
    if (l) {
      l->grid = ODB_GEN_GRID_TILES;
      l->smem = (size_t)((YR + (S - 1) * D3) * K * (T + 2)) * sizeof(double);
    }
  }
  return ODB_OK;
}

/* }====== */

/*
** Whether the last launch of a step finishes the norm, both in a step that
** evaluates stage 0 and in one that takes F_0 from memory.
*/
static int last_launch_reduces(const odb_gen_plan *pl) {
  for (int stage0 = 0; stage0 < 2; ++stage0)
    for (int i = pl->nlaunch - 1; i >= 0; --i) {
      if (!odb_gen_launch_runs(&pl->launch[i], stage0)) continue;
      if (!pl->launch[i].reduce) return 0;
      break;
    }
  return 1;
}

/* See the header. */
int odb_gen_launch_runs(const odb_gen_launch *l, int stage0) {
  return !(l->when == ODB_GEN_IF_STAGE0 && !stage0) &&
         !(l->when == ODB_GEN_IF_FSAL && stage0);
}

odb_status odb_gen_rk(const odb_problem *p, const odb_method *m,
                      odb_gen_kind kind, const odb_gen_opts *o, char **source,
                      odb_gen_plan *plan) {
  static const char *const kinds[] = { "gpu_unfused", "gpu_reference",
                                       "gpu_trapezoid", "gpu_multiblock",
                                       "gpu_stream2d", "gpu_hexagonal" };
  gen g;
  *source = NULL;
  memset(plan, 0, sizeof *plan);
  memset(&g, 0, sizeof g);
  if (m->kind != ODB_METHOD_ERK)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s is not an explicit RK method",
                    m->name);
  if (m->s > ODB_GEN_MAX_STAGES)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s has %d stages; the GPU "
                    "generator takes at most %d", m->name, m->s,
                    ODB_GEN_MAX_STAGES);
  if (!p->gpu_source && !(kind == ODB_GEN_STREAM2D && p->gpu_cell_source))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "%s has no GPU source of f_j%s",
                    p->label, kind == ODB_GEN_STREAM2D ? " or of a cell" : "");
  if (p->d >= p->n)
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "access distance d = %ld is not "
                    "smaller than n = %ld", p->d, p->n);
  if (o->threads < 32 || o->threads > 1024 ||
      (o->threads & (o->threads - 1)))
    return ODB_FAIL(ODB_ERR_ARG, "threads per block must be a power of two "
                    "in [32, 1024], got %d", o->threads);
  ODB_TRY(erk_plan_make(m, &g.e));
  g.p = p;
  g.m = m;
  g.S = m->s;
  g.plan = plan;
  g.alias = m->fsal && same_terms(&g.e.a[m->s - 1], &g.e.b);
  plan->kind = kind;
  plan->s = m->s;
  plan->has_err = g.e.e.n > 0;
  plan->threads = o->threads;
  if (o->devctl && (kind == ODB_GEN_MULTIBLOCK || !plan->has_err))
    return ODB_FAIL(ODB_ERR_UNSUPPORTED, "the step controller on the device "
                    "(devctl) needs a variant without barriers (not "
                    "gpu_multiblock) and a method with an error estimate; "
                    "here %s and %s", kinds[kind], m->name);
  g.devctl = o->devctl;
  plan->scratch[0] = p->n;
  plan->scratch[1] = kind == ODB_GEN_UNFUSED ? 0 : p->n;
  find_need_mem(&g);
  put_prelude(&g, kinds[kind], o);
  if (kind == ODB_GEN_UNFUSED) {
    gen_unfused(&g);
  } else if (kind == ODB_GEN_REFERENCE) {
    gen_reference(&g);
  } else {
    odb_status st =
        kind == ODB_GEN_TRAPEZOID
            ? (o->tile_h > 0 && o->tile_h < g.S ? gen_levels(&g, o, 0)
                                                : gen_trapezoid(&g, o))
        : kind == ODB_GEN_HEXAGON  ? gen_levels(&g, o, 1)
        : kind == ODB_GEN_STREAM2D ? gen_stream2d(&g, o)
                                   : gen_multiblock(&g, o);
    if (st != ODB_OK) {
      free(g.b.buf);
      return st;
    }
  }
  if (g.b.oom) {
    free(g.b.buf);
    return ODB_FAIL(ODB_ERR_NOMEM, "generated source");
  }
  if (g.devctl && !last_launch_reduces(plan)) {
    free(g.b.buf);   /* the controller must run in the step's last launch */
    return ODB_FAIL(ODB_ERR_INTERNAL, "devctl: the last launch of a %s "
                    "step does not finish the norm", kinds[kind]);
  }
  *source = g.b.buf;
  return ODB_OK;
}
