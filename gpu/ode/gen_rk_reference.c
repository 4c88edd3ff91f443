/* gen_rk_reference.c - gpu_reference: all basic operations fused but the
   dependencies LC -> RHS, one kernel a stage, the stage value F_l passed
   on in a register to the LC that follows it. */
#include <stdio.h>

#include "gen_rk_int.h"

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
  odb_emit *b = &g->b;
  int S = g->S, last = l == S - 1, loaded[ODB_GEN_MAX_STAGES] = {0};
  int rv = 1, wv = 0;   /* the argument (or F_0) and y */
  double fp = 0;        /* FP64 instructions per component */
  odb_gen_launch *ln;
  char name[24], arg[16], out[16];
  snprintf(name, sizeof name, fsal_load ? "k_ref%df" : "k_ref%d", l);
  arg_name(g, l, arg, sizeof arg);
  rkg_put_kernel_head(g, name);
  if (!fsal_load) put(b, "  const double *__restrict__ arg = %s;\n", arg);
  if (last && g->plan->has_err) put(b, "  double acc = 0.0;\n");
  put(b, "  ODB_LOOP(j) {\n");
  if (fsal_load) {
    put(b, "    const double f0 = __ldg(a.F[0] + j);\n");
  } else {
    put(b, "    const double f%d = odb_rhs(j, a.tl[%d], arg);\n", l, l);
    fp += rkg_rhs_fp64(g);
    if (g->need_mem[l]) {
      put(b, "    a.F[%d][j] = f%d;\n", l, l);
      ++wv;
    }
  }
  loaded[l] = 1;
  if (l > 0 || fsal_load) ++rv;   /* y besides the argument (or F_0) */
  put(b, "    const double yj = __ldg(a.y + j);\n");
  if (!last) {
    rv += rkg_put_loads(b, &g->e.a[l + 1], loaded);
    arg_name(g, l + 1, out, sizeof out);
    put(b, "    %s[j] = ", out);
    fp += rkg_put_lc(b, "yj", &g->e.a[l + 1]);
    put(b, ";\n  }\n}\n");
    ++wv;
  } else {
    if (g->alias) {
      put(b, "    const double yn = __ldcg(a.ynew + j);\n");
    } else {
      rv += rkg_put_loads(b, &g->e.b, loaded);
      put(b, "    const double yn = ");
      fp += rkg_put_lc(b, "yj", &g->e.b);
      put(b, ";\n    a.ynew[j] = yn;\n");
      ++wv;
    }
    if (g->plan->has_err) {
      rv += rkg_put_loads(b, &g->e.e, loaded);
      put(b, "    const double ej = ");
      fp += rkg_put_lc(b, NULL, &g->e.e) + RKG_FP64_NORM;
      put(b, ";\n    acc += odb_sq_scaled(ej, yj, yn, a.atol, a.rtol);\n");
    }
    put(b, "  }\n");
    if (g->plan->has_err)
      put(b, "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n");
    put(b, "}\n");
  }
  ln = rkg_add_launch(g, name, l > 0 ? ODB_GEN_ALWAYS
                                 : fsal_load ? ODB_GEN_IF_FSAL
                                             : ODB_GEN_IF_STAGE0,
                      last && g->plan->has_err, rv, wv);
  if (ln) ln->fp64 = fp * (double)g->p->n;   /* every component once */
}

/* See gen_rk_int.h. */
void rkg_reference(gen *g) {
  gen_ref_kernel(g, 0, 0);
  gen_ref_kernel(g, 0, 1);
  for (int l = 1; l < g->S; ++l) gen_ref_kernel(g, l, 0);
}
