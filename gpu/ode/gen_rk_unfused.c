/* gen_rk_unfused.c - gpu_unfused: one kernel per basic operation of a step
   (an RHS or an LC per stage, the LCs of the new solution and the
   estimate, the norm), every vector through memory. */
#include <stdio.h>

#include "gen_rk_int.h"

/* Sets the FP64 count of the launch just added: per component times n. */
static void count(gen *g, double per_comp) {
  if (g->plan->nlaunch > 0)
    g->plan->launch[g->plan->nlaunch - 1].fp64 = per_comp * (double)g->p->n;
}

/* See gen_rk_int.h. */
void rkg_unfused(gen *g) {
  odb_emit *b = &g->b;
  int S = g->S;
  char name[24];
  for (int l = 0; l < S; ++l) {
    int loaded[ODB_GEN_MAX_STAGES] = {0}, nl, fp;
    if (l > 0) {
      snprintf(name, sizeof name, "k_lc%d", l);
      rkg_put_kernel_head(g, name);
      put(b, "  ODB_LOOP(j) {\n");
      nl = rkg_put_loads(b, &g->e.a[l], loaded);
      put(b, "    a.Y[0][j] = ");
      fp = rkg_put_lc(b, "__ldg(a.y + j)", &g->e.a[l]);
      put(b, ";\n  }\n}\n");
      rkg_add_launch(g, name, ODB_GEN_ALWAYS, 0, 1 + nl, 1);
      count(g, fp);
    }
    snprintf(name, sizeof name, "k_rhs%d", l);
    rkg_put_kernel_head(g, name);
    put(b, "  const double *__restrict__ arg = %s;\n",
        l == 0 ? "a.y" : "a.Y[0]");
    put(b, "  ODB_LOOP(j) a.F[%d][j] = odb_rhs(j, a.tl[%d], arg);\n}\n", l, l);
    rkg_add_launch(g, name, l == 0 ? ODB_GEN_IF_STAGE0 : ODB_GEN_ALWAYS, 0, 1,
                   1);
    count(g, rkg_rhs_fp64(g));
  }
  {
    int loaded[ODB_GEN_MAX_STAGES] = {0}, nl, fp;
    rkg_put_kernel_head(g, "k_lcb");
    put(b, "  ODB_LOOP(j) {\n");
    nl = rkg_put_loads(b, &g->e.b, loaded);
    put(b, "    a.ynew[j] = ");
    fp = rkg_put_lc(b, "__ldg(a.y + j)", &g->e.b);
    put(b, ";\n  }\n}\n");
    rkg_add_launch(g, "k_lcb", ODB_GEN_ALWAYS, 0, 1 + nl, 1);
    count(g, fp);
  }
  if (!g->plan->has_err) return;
  {
    int loaded[ODB_GEN_MAX_STAGES] = {0}, nl, fp;
    rkg_put_kernel_head(g, "k_lce");
    put(b, "  ODB_LOOP(j) {\n");
    nl = rkg_put_loads(b, &g->e.e, loaded);
    put(b, "    a.Y[0][j] = ");
    fp = rkg_put_lc(b, NULL, &g->e.e);
    put(b, ";\n  }\n}\n");
    rkg_add_launch(g, "k_lce", ODB_GEN_ALWAYS, 0, nl, 1);
    count(g, fp);
  }
  rkg_put_kernel_head(g, "k_red");
  put(b, "  double acc = 0.0;\n"
         "  ODB_LOOP(j) acc += odb_sq_scaled(__ldg(a.Y[0] + j), "
         "__ldg(a.y + j),\n"
         "                                   __ldg(a.ynew + j), a.atol, "
         "a.rtol);\n"
         "  odb_reduce(a, acc, blockIdx.x, gridDim.x);\n}\n");
  rkg_add_launch(g, "k_red", ODB_GEN_ALWAYS, 1, 3, 0);
  count(g, RKG_FP64_NORM);
}
