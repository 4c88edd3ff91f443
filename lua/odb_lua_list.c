/* odb_lua_list.c - what is registered (ob.list, --list); the machine (info). */
#include "odb_lua.h"

#include <stdio.h>
#include <string.h>

#include "odb_batched_impl.h"
#include "odb_kernels.h"
#include "odb_tsm.h"

static const char *param_type_name(odb_param_type t) {
  switch (t) {
  case ODB_PARAM_INT: return "int";
  case ODB_PARAM_REAL: return "real";
  case ODB_PARAM_ENUM: return "enum";
  case ODB_PARAM_BOOL: return "bool";
  case ODB_PARAM_POW2: return "int";
  case ODB_PARAM_POS: return "real";
  }
  return "?";
}

/* Binary units; whole numbers without decimals ("48 KiB"). Returns buf. */
const char *odbL_format_bytes(double bytes, char *buf, size_t len) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  if (bytes == (double)(long long)bytes)
    snprintf(buf, len, "%lld %s", (long long)bytes, units[u]);
  else
    snprintf(buf, len, "%.3g %s", bytes, units[u]);
  return buf;
}

/* The idx-th choice of a '|'-separated list into buf ("?" if none). */
static const char *enum_choice(const char *choices, int idx, char *buf,
                               size_t len) {
  const char *p = choices ? choices : "";
  for (int i = 0; i < idx && p; ++i) {
    p = strchr(p, '|');
    if (p) ++p;
  }
  if (!p || !*p) {
    snprintf(buf, len, "?");
    return buf;
  }
  snprintf(buf, len, "%.*s", (int)strcspn(p, "|"), p);
  return buf;
}

/*
** The default of d as text: the choice name for enums, true or false, a
** number otherwise; "auto" where the owner chooses (the doc says how).
*/
static const char *default_text(const odb_param_decl *d, char *buf,
                                size_t len) {
  if (!odb_param_has_default(d)) snprintf(buf, len, "auto");
  else if (d->type == ODB_PARAM_ENUM)
    return enum_choice(d->choices, (int)d->def, buf, len);
  else if (d->type == ODB_PARAM_BOOL)
    snprintf(buf, len, "%s", d->def != 0 ? "true" : "false");
  else snprintf(buf, len, "%.10g", d->def);
  return buf;
}

/* {====== ob.list() */

/* Sets t[k] = s (t at the top). */
static void set_str(lua_State *L, const char *k, const char *s) {
  lua_pushstring(L, s ? s : "");
  lua_setfield(L, -2, k);
}

/* Sets t[k] = v (t at the top). */
static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* Sets t[k] = v as an integer (t at the top). */
static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

/*
** Pushes {{name, type, default, min, max, [choices], allowed, doc}...} of
** decls[0..n): default is a number, a choice's name, a boolean, or
** "auto" where the owner chooses; allowed is what the error messages say
** (odb_param_allowed).
*/
static void push_params(lua_State *L, const odb_param_decl *decls, int n) {
  char buf[160];
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    const odb_param_decl *d = &decls[i];
    lua_createtable(L, 0, 8);
    set_str(L, "name", d->name);
    set_str(L, "type", param_type_name(d->type));
    if (!odb_param_has_default(d) || d->type == ODB_PARAM_ENUM) {
      set_str(L, "default", default_text(d, buf, sizeof buf));
    } else if (d->type == ODB_PARAM_BOOL) {
      lua_pushboolean(L, d->def != 0);
      lua_setfield(L, -2, "default");
    } else if (d->type == ODB_PARAM_INT || d->type == ODB_PARAM_POW2) {
      set_int(L, "default", (lua_Integer)d->def);
    } else {
      set_num(L, "default", d->def);
    }
    set_num(L, "min", d->min);
    set_num(L, "max", d->max);
    if (d->choices) set_str(L, "choices", d->choices);
    set_str(L, "allowed", odb_param_allowed(d, buf, sizeof buf));
    set_str(L, "doc", d->doc);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Pushes {name, doc, params = push_params}. */
static void push_problem_type(lua_State *L, const odb_problem_type *t) {
  lua_createtable(L, 0, 3);
  set_str(L, "name", t->name);
  set_str(L, "doc", t->doc);
  push_params(L, t->params, t->nparams);
  lua_setfield(L, -2, "params");
}

/* Pushes {name, title, stages, order, order_emb, fsal}. */
static void push_method(lua_State *L, const odb_method *m) {
  lua_createtable(L, 0, 6);
  set_str(L, "name", m->name);
  set_str(L, "title", m->title);
  set_int(L, "stages", m->s);
  set_int(L, "order", m->order);
  set_int(L, "order_emb", m->order_emb);
  lua_pushboolean(L, m->fsal);
  lua_setfield(L, -2, "fsal");
}

/* The dense kernels of ob.kernel: name (odb_tsm_op_name), what they do. */
static const struct { odb_tsm_op op; const char *doc; } kernels[] = {
  { ODB_TSM_TSMTTSM, "C = A^T B, A: K x M, B: K x N row-major, M, N in 1..64, "
                     "dtype d or z; backends cuda (generated, tuned per "
                     "shape, against cuBLAS; tensor-core kernels may take "
                     "their chunks of rows from a counter, sched=dyn) and "
                     "cpu (threads, against the plain loop)" },
  { ODB_TSM_TSMM, "B = A C, A: K x M, C: M x N row-major, the same shapes, "
                  "dtypes and backends" },
};

/* Calls fn for every variant of the batched dense family (ob.batched,
   ob.blocktridiag), backend by backend ("cpu", then "cuda" where this
   build registers it): its name ("auto" for the CPU's one), backend and
   what it runs with the file of its code. */
static void each_dense(void (*fn)(void *ud, const char *name,
                                  const char *backend, const char *doc),
                       void *ud) {
  static const char *const backends[] = { "cpu", "cuda" };
  for (int b = 0; b < 2; ++b) {
    const odb_batched_ops *ops = NULL;
    if (odb_batched_impl_find(backends[b], &ops) != ODB_OK || !ops) {
      odb_clear_error();
      continue;
    }
    for (int v = 0; ops->variant_doc && ops->variant_doc(v); ++v)
      fn(ud, b == 0 ? "auto" : ops->variant_name(v), ops->backend,
         ops->variant_doc(v));
  }
}

/* each_dense's rows into the table at the top of L. */
static void push_dense_row(void *ud, const char *name, const char *backend,
                           const char *doc) {
  lua_State *L = ud;
  lua_createtable(L, 0, 3);
  set_str(L, "name", name);
  set_str(L, "backend", backend);
  set_str(L, "doc", doc);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

/* problems, methods, variants, kernels, dense (the batched family's
   variants), backends (registered) and notes (missing). */
void odbL_push_list(lua_State *L, odb_ctx *c) {
  int n;
  lua_createtable(L, 0, 7);
  n = odb_problem_type_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    push_problem_type(L, odb_problem_type_at(i));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "problems");
  n = odb_method_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    push_method(L, odb_method_at(i));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "methods");
  n = odb_variant_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    const odb_variant *v = odb_variant_at(i);
    lua_createtable(L, 0, 4);
    set_str(L, "name", v->name);
    set_str(L, "backend", v->backend);
    set_str(L, "doc", v->doc);
    push_params(L, v->opts, v->nopts);   /* the options it takes (tiling) */
    lua_setfield(L, -2, "options");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "variants");
  lua_createtable(L, 2, 0);
  for (int i = 0; i < 2; ++i) {
    lua_createtable(L, 0, 2);
    set_str(L, "name", odb_tsm_op_name(kernels[i].op));
    set_str(L, "doc", kernels[i].doc);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "kernels");
  lua_newtable(L);
  each_dense(push_dense_row, L);
  lua_setfield(L, -2, "dense");
  lua_createtable(L, c->nbackends, 0);
  for (int i = 0; i < c->nbackends; ++i) {
    odb_device_info d;
    memset(&d, 0, sizeof d);
    lua_createtable(L, 0, 2);
    set_str(L, "name", c->backends[i]->ops->name);
    if (odb_backend_query(c->backends[i], &d) == ODB_OK)
      set_str(L, "device", d.name);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "backends");
  lua_createtable(L, c->nnotes, 0);
  for (int i = 0; i < c->nnotes; ++i) {
    lua_pushstring(L, c->backend_notes[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "notes");
}

/* }====== */

/* {====== odebench --list */

/*
** One line a declared parameter under its owner: name, type, default, what
** it allows (as the error messages say it), doc.
*/
static void print_param(FILE *f, const odb_param_decl *d) {
  char allowed[160], def[64];
  fprintf(f, "  %-12s   %-11s %-4s default %-8s %-22s %s\n", "", d->name,
          param_type_name(d->type), default_text(d, def, sizeof def),
          odb_param_allowed(d, allowed, sizeof allowed), d->doc ? d->doc : "");
}

static void print_problems(FILE *f) {
  fprintf(f, "problems\n");
  for (int i = 0; i < odb_problem_type_count(); ++i) {
    const odb_problem_type *t = odb_problem_type_at(i);
    fprintf(f, "  %-12s %s\n", t->name, t->doc ? t->doc : "");
    for (int j = 0; j < t->nparams; ++j) print_param(f, &t->params[j]);
  }
}

/* One line per method: name, title, stages, order(embedded), kind. */
static void print_methods(FILE *f) {
  fprintf(f, "\nmethods\n  %-12s %-28s %6s %6s  %s\n", "name", "title",
          "stages", "order", "kind");
  for (int i = 0; i < odb_method_count(); ++i) {
    const odb_method *m = odb_method_at(i);
    char order[16];
    if (m->order_emb > 0) snprintf(order, sizeof order, "%d(%d)", m->order,
                                   m->order_emb);
    else snprintf(order, sizeof order, "%d", m->order);
    if (m->kind == ODB_METHOD_PIRK)
      fprintf(f, "  %-12s %-28s %6d %6s  PIRK corrector, m = %d corrector "
              "steps by default (order min(p, m+1))\n", m->name, m->title,
              m->s, order, m->m_default);
    else
      fprintf(f, "  %-12s %-28s %6d %6s  explicit RK%s\n", m->name, m->title,
              m->s, order, m->fsal ? ", FSAL" : "");
  }
}

/*
** One line per variant: name, backend, what it does; under a variant that
** takes options (a tiled GPU variant's tiling = {...}), one line each.
*/
static void print_variants(FILE *f) {
  fprintf(f, "\nvariants\n  %-12s %-8s %s\n", "name", "backend",
          "what it does");
  for (int i = 0; i < odb_variant_count(); ++i) {
    const odb_variant *v = odb_variant_at(i);
    fprintf(f, "  %-12s %-8s %s\n", v->name, v->backend, v->doc ? v->doc : "");
    if (v->nopts > 0) fprintf(f, "  %-12s   options (tiling = {...}):\n", "");
    for (int j = 0; j < v->nopts; ++j) print_param(f, &v->opts[j]);
  }
}

/* One line per dense kernel of ob.kernel: name, what it does. */
static void print_kernels(FILE *f) {
  fprintf(f, "\nkernels (ob.kernel)\n");
  for (int i = 0; i < 2; ++i)
    fprintf(f, "  %-12s %s\n", odb_tsm_op_name(kernels[i].op),
            kernels[i].doc);
}

/* each_dense's rows as lines of f. */
static void print_dense_row(void *ud, const char *name, const char *backend,
                            const char *doc) {
  fprintf((FILE *)ud, "  %-12s %-8s %s\n", name, backend, doc);
}

/* One line per variant of the batched dense family (ob.batched,
   ob.blocktridiag): name, backend, what it runs and where. */
static void print_dense(FILE *f) {
  fprintf(f, "\ndense variants (ob.batched, ob.blocktridiag)\n  %-12s %-8s "
          "%s\n", "name", "backend", "what it does");
  each_dense(print_dense_row, f);
}

/* Registered backends with their device, then the notes on missing ones. */
static void print_backends(odb_ctx *c, FILE *f) {
  fprintf(f, "\nbackends\n");
  for (int i = 0; i < c->nbackends; ++i) {
    odb_device_info d;
    memset(&d, 0, sizeof d);
    if (odb_backend_query(c->backends[i], &d) != ODB_OK) d.name[0] = '\0';
    fprintf(f, "  %-12s %s\n", c->backends[i]->ops->name, d.name);
  }
  for (int i = 0; i < c->nnotes; ++i)
    fprintf(f, "  %-12s not available: %s\n", "-", c->backend_notes[i]);
}

/* Assumes c has its backends registered (odb_kernels_register). */
void odbL_print_list(odb_ctx *c, FILE *f) {
  print_problems(f);
  print_methods(f);
  print_variants(f);
  print_kernels(f);
  print_dense(f);
  print_backends(c, f);
}

/* }====== */

/* {====== odebench info */

static void print_caches(const odb_topo *t, FILE *f) {
  char size[32];
  for (int i = 0; i < t->ncaches && i < ODB_TOPO_MAX_CACHES; ++i) {
    const odb_cache_level *cl = &t->caches[i];
    fprintf(f, "%-10s L%d  %-10s x %-3d line %d B, shared by %d core%s\n",
            i == 0 ? "caches" : "", cl->level,
            odbL_format_bytes((double)cl->size, size, sizeof size), cl->count,
            cl->line, cl->sharing, cl->sharing == 1 ? "" : "s");
  }
  if (t->ncaches == 0) fprintf(f, "%-10s none reported\n", "caches");
}

/*
** The second line of "no GPU visible": why, from the "cuda" backend's note
** (gpu/odb_kernels_*.c writes "cuda: no device (REASON)", "cuda: device 0
** unusable (REASON)" or "cuda: not built (HOW)"). The note's "cuda: no
** device (...)" wrapper is left out, so the line is the driver's reason.
*/
static void print_gpu_reason(const odb_ctx *c, FILE *f) {
  static const char wrap[] = "cuda: no device (";
  const char *note = NULL;
  size_t n;
  for (int i = 0; i < c->nnotes && !note; ++i)
    if (strncmp(c->backend_notes[i], "cuda:", 5) == 0)
      note = c->backend_notes[i];
  if (!note) return;
  n = strlen(note);
  if (strncmp(note, wrap, sizeof wrap - 1) == 0 && note[n - 1] == ')')
    fprintf(f, "%-10s %.*s\n", "", (int)(n - sizeof wrap), note + sizeof wrap - 1);
  else if (strncmp(note, "cuda: not built", 15) == 0)
    fprintf(f, "%-10s this build has no CUDA%s\n", "", note + 15);
  else
    fprintf(f, "%-10s %s\n", "", note);
}

/*
** The device's FP64 peaks, measured now (odb_backend_fp64_peak): DFMA on the
** FP64 pipes, the compute roof of the GPU RK kernels, and DMMA on the
** tensor cores where the device has them.
*/
static void print_gpu_peak(odb_backend *b, FILE *f) {
  odb_fp64_peaks pk;
  char clk[32] = "";
  if (odb_backend_fp64_peak(b, &pk) != ODB_OK) {
    fprintf(f, "%-10s FP64 peak unknown: %s\n", "", odb_last_error());
    return;
  }
  if (pk.mhz > 0) snprintf(clk, sizeof clk, " at %.0f MHz", pk.mhz);
  fprintf(f, "%-10s %-5s %-12s %8.0f GFLOP/s  (FP64 multiply-add peak%s, "
          "measured now)\n", "compute", "peak", "gpu DFMA", pk.flops / 1e9,
          clk);
  if (pk.tensor_flops > 0) {
    clk[0] = '\0';
    if (pk.tensor_mhz > 0)
      snprintf(clk, sizeof clk, " at %.0f MHz", pk.tensor_mhz);
    fprintf(f, "%-10s %-5s %-12s %8.0f GFLOP/s  (tensor cores%s)\n", "",
            "peak", "gpu DMMA", pk.tensor_flops / 1e9, clk);
  }
}

/* The "cuda" backend's device, or why there is none. */
static void print_gpu(odb_ctx *c, FILE *f) {
  odb_backend *b = odb_ctx_backend(c, "cuda");
  odb_device_info d;
  char mem[32];
  memset(&d, 0, sizeof d);
  if (b && odb_backend_query(b, &d) == ODB_OK) {
    fprintf(f, "%-10s %s, %d SMs, %s, compute capability %d.%d\n", "gpu",
            d.name, d.sm_count,
            odbL_format_bytes((double)d.mem_bytes, mem, sizeof mem),
            d.cc_major, d.cc_minor);
    print_gpu_peak(b, f);
    return;
  }
  fprintf(f, "%-10s no GPU visible\n", "gpu");
  print_gpu_reason(c, f);
}

/* One line "read  2 threads   31.81 GB/s". */
static void print_bw_line(FILE *f, const char *head, const char *what,
                          int threads, double bytes_per_s, const char *tail) {
  char who[32];
  snprintf(who, sizeof who, "%d thread%s", threads, threads == 1 ? "" : "s");
  fprintf(f, "%-10s %-5s %-12s %8.2f GB/s%s%s\n", head, what, who,
          bytes_per_s / 1e9, tail ? "  " : "", tail ? tail : "");
}

/* bw NULL: the reason is the last recorded error. CPU figures only, on
   lines headed "cpu bw" (a GPU's are print_gpu_bandwidth's). */
static void print_bandwidth(const odb_bandwidth *bw, FILE *f) {
  char when[64];
  if (!bw) {
    fprintf(f, "%-10s unknown: %s\n", "cpu bw", odb_last_error());
    return;
  }
  if (bw->from_cache) snprintf(when, sizeof when, "(cached from %s)",
                               bw->measured_at);
  else if (!odb_bandwidth_quiet(bw))
    snprintf(when, sizeof when, "(measured now, machine busy: not cached)");
  else if (bw->slow_build)
    snprintf(when, sizeof when, "(measured now by a debug or sanitizer "
             "build: not cached)");
  else snprintf(when, sizeof when, "(measured now)");
  print_bw_line(f, "cpu bw", "read", 1, bw->read_1t, when);
  print_bw_line(f, "", "copy", 1, bw->copy_1t, NULL);
  for (int i = 1; i < bw->ncounts; ++i) {
    print_bw_line(f, "", "read", bw->threads[i], bw->read[i], NULL);
    print_bw_line(f, "", "copy", bw->threads[i], bw->copy[i], NULL);
  }
  if (bw->ncounts < 2) {   /* figures without the per-count list */
    print_bw_line(f, "", "read", bw->threads_all, bw->read_all, NULL);
    print_bw_line(f, "", "copy", bw->threads_all, bw->copy_all, NULL);
  }
  if (bw->flops_1t > 0)
    fprintf(f, "%-10s %-5s %-12s %8.2f GFLOP/s  (FP64 multiply-add peak)\n",
            "compute", "peak", "1 core", bw->flops_1t / 1e9);
  if (bw->flops_all > 0)
    fprintf(f, "%-10s %-5s %-12s %8.2f GFLOP/s  (all %d cores at once)\n",
            "", "peak", "all cores", bw->flops_all / 1e9, bw->threads_all);
  if (!odb_bandwidth_quiet(bw))
    fprintf(f, "%-10s the measuring thread ran %.0f%% of the time: other "
            "work shared the cores, so these figures are low; run 'odebench "
            "info --remeasure' on a quiet machine\n", "", 100 * bw->cpu_share);
}

/* A GPU's figures on lines headed "gpu bw"; nothing without a GPU. */
static void print_gpu_bandwidth(const odb_gpu_bandwidth *g, FILE *f) {
  char when[96];
  if (!g) return;
  snprintf(when, sizeof when, "(%s %s)", g->from_cache ? "cached from"
           : "measured now", g->measured_at);
  fprintf(f, "%-10s %-5s %-12.12s %8.2f GB/s  %s\n", "gpu bw", "read",
          g->name, g->read / 1e9, when);
  fprintf(f, "%-10s %-5s %-12.12s %8.2f GB/s\n", "", "copy", g->name,
          g->copy / 1e9);
  if (g->peak > 0)
    fprintf(f, "%-10s %-5s %-12.12s %8.2f GB/s  (memory clock x 2 x bus "
            "width)\n", "", "peak", g->name, g->peak / 1e9);
}

/*
** Seconds per barrier episode of our barriers for p = 1, 2, 4, ... cores
** (the support points of the offline profiling in Kalinnik's thesis,
** §9.3.3); measured now, about 0.7 s per row.
*/
static void print_barriers(const odb_topo *t, FILE *f) {
  odb_barrier_cost_row rows[16];
  int n = odb_barrier_cost_table(t, rows, 16);
  if (n < 0) {
    fprintf(f, "%-10s unknown: %s\n", "barriers", odb_last_error());
    return;
  }
  fprintf(f, "%-10s %-8s", "barriers", "threads");
  for (int k = 0; k < ODB_BARRIER_KIND_COUNT; ++k)
    fprintf(f, " %10s", odb_barrier_kind_name((odb_barrier_kind)k));
  fprintf(f, "   (microseconds per barrier, measured now)\n");
  for (int i = 0; i < n; ++i) {
    fprintf(f, "%-10s %-8d", "", rows[i].p);
    for (int k = 0; k < ODB_BARRIER_KIND_COUNT; ++k)
      fprintf(f, " %10.3f", rows[i].seconds[k] * 1e6);
    fputc('\n', f);
  }
}

/* CPU, caches, GPU, bandwidth, barrier costs; bw, gbw may be NULL. */
void odbL_print_info(odb_ctx *c, const odb_bandwidth *bw,
                     const odb_gpu_bandwidth *gbw, FILE *f) {
  const odb_topo *t = &c->topo;
  fprintf(f, "%-10s %s\n", "cpu", t->cpu_model);
  fprintf(f, "%-10s %d package%s, %d cores, %d PUs, %d NUMA node%s\n", "",
          t->packages, t->packages == 1 ? "" : "s", t->cores, t->pus,
          t->numa_nodes, t->numa_nodes == 1 ? "" : "s");
  print_caches(t, f);
  print_gpu(c, f);
  print_bandwidth(bw, f);
  print_gpu_bandwidth(gbw, f);
  print_barriers(t, f);
}

/* }====== */
