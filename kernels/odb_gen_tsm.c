/* odb_gen_tsm.c - generates readable CUDA C for the tall & skinny
   products: every index that the shape and configuration fix is a
   literal, loops over the tile are written out, and guards appear only
   where the thread mapping does not divide M or N. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odb_gen_tsm.h"

/* A growing string; a failed allocation sets oom and drops the rest. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
  int oom;
} sbuf;

/* Appends printf-style text. */
static void out(sbuf *b, const char *fmt, ...) {
  va_list ap;
  int len;
  if (b->oom) return;
  va_start(ap, fmt);
  len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)len + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap * 2 : 8192) + (size_t)len;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)len;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* Tiles of C per row (tsmttsm) or threads per row (tsmm). */
int odb_tsm_cfg_group(const odb_tsm_cfg *c) {
  if (c->op == ODB_TSM_TSMTTSM) return cdiv(c->M, c->tm) * cdiv(c->N, c->tn);
  return c->tpr;
}

/* At least one group even when it exceeds block (checked elsewhere). */
int odb_tsm_cfg_block(const odb_tsm_cfg *c) {
  int g = odb_tsm_cfg_group(c);
  int r = c->block / g;
  return (r < 1 ? 1 : r) * g;
}

/* The block-local sums of C (tsmttsm, local) or the copy of C (tsmm). */
size_t odb_tsm_cfg_smem(const odb_tsm_cfg *c) {
  size_t e = c->t == ODB_TSM_Z ? 16 : 8;
  if (c->op == ODB_TSM_TSMTTSM)
    return (c->reduce == ODB_TSM_REDUCE_LOCAL ? e * c->M * c->N : 0) +
           (c->stage ? e * (size_t)c->chunk * (c->M + c->N) : 0);
  return c->csrc == ODB_TSM_C_SHARED ? e * c->M * c->N : 0;
}

/* See the header. */
int odb_tsm_cfg_regs(const odb_tsm_cfg *c) {
  int e = c->t == ODB_TSM_Z ? 2 : 1;
  if (c->op == ODB_TSM_TSMTTSM && c->stage)
    return 2 * (e * c->tm * c->tn + e * (c->tm + c->tn) + 16);
  if (c->op == ODB_TSM_TSMTTSM) {
    int loads = (c->leapfrog ? 2 : 1) * c->unroll * (c->tm + c->tn);
    return 2 * (e * c->tm * c->tn + e * loads + 8);
  }
  int J = cdiv(c->N, c->tpr);
  int keep = c->csrc == ODB_TSM_C_REGS ? c->M * J : 0;
  return 2 * (e * (c->unroll * J + keep + c->unroll + 1) + 8);
}

/* See the header. */
odb_status odb_tsm_cfg_check(const odb_tsm_cfg *c) {
  ODB_TRY(odb_tsm_check_shape(c->M, c->N, 1, 1));
  if ((unsigned)c->op > 1 || (unsigned)c->t > 1)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: bad operation or dtype");
  if (c->unroll < 1 || c->unroll > 4)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: unroll = %d, expected 1..4",
                    c->unroll);
  if (c->block < 32 || c->block > 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: block = %d, expected 32..1024",
                    c->block);
  if (c->blocks_per_sm < 1 || c->blocks_per_sm > 32)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: blocks_per_sm = %d, expected 1..32",
                    c->blocks_per_sm);
  if (c->op == ODB_TSM_TSMTTSM) {
    if (c->tm < 1 || c->tm > c->M || c->tn < 1 || c->tn > c->N)
      return ODB_FAIL(ODB_ERR_ARG, "tsmttsm: tile %dx%d does not fit "
                      "M=%d N=%d", c->tm, c->tn, c->M, c->N);
    if ((unsigned)c->reduce > 1)
      return ODB_FAIL(ODB_ERR_ARG, "tsmttsm: bad reduction %d", c->reduce);
    if (c->stage && (c->chunk < 1 || c->chunk > 256 || c->leapfrog ||
                     c->unroll != 1))
      return ODB_FAIL(ODB_ERR_ARG, "tsmttsm: staging takes a chunk of "
                      "1..256 rows, no leap frogging, unroll 1");
  } else {
    if (c->tpr < 1 || c->tpr > c->N)
      return ODB_FAIL(ODB_ERR_ARG, "tsmm: %d threads per row for N=%d",
                      c->tpr, c->N);
    if ((unsigned)c->csrc > 2)
      return ODB_FAIL(ODB_ERR_ARG, "tsmm: bad source of C %d", c->csrc);
  }
  if (odb_tsm_cfg_group(c) > 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: %d threads per row exceed a block",
                    odb_tsm_cfg_group(c));
  if (odb_tsm_cfg_smem(c) > 200 * 1024)
    return ODB_FAIL(ODB_ERR_ARG, "tsm: too much shared memory");
  return ODB_OK;
}

/* See the header. */
const char *odb_tsm_cfg_text(const odb_tsm_cfg *c, char *buf, size_t len) {
  static const char *const red[] = { "global", "local" };
  static const char *const src[] = { "l1", "shared", "regs" };
  if (c->op == ODB_TSM_TSMTTSM && c->stage)
    snprintf(buf, len, "tm=%d tn=%d trans=%d stage=%d reduce=%s "
             "block=%d bps=%d", c->tm, c->tn, c->transposed, c->chunk,
             red[c->reduce & 1], c->block, c->blocks_per_sm);
  else if (c->op == ODB_TSM_TSMTTSM)
    snprintf(buf, len, "tm=%d tn=%d trans=%d lf=%d unroll=%d reduce=%s "
             "block=%d bps=%d", c->tm, c->tn, c->transposed, c->leapfrog,
             c->unroll, red[c->reduce & 1], c->block, c->blocks_per_sm);
  else
    snprintf(buf, len, "tpr=%d csrc=%s unroll=%d block=%d bps=%d", c->tpr,
             src[c->csrc % 3], c->unroll, c->block, c->blocks_per_sm);
  return buf;
}

/* The file header: what it is, the argument struct, complex helpers. */
static void gen_head(sbuf *b, const odb_tsm_cfg *c) {
  char cfg[160];
  out(b, "// odebench %s %s M=%d N=%d: %s\n", odb_tsm_op_name(c->op),
      odb_tsm_dtype_name(c->t), c->M, c->N,
      odb_tsm_cfg_text(c, cfg, sizeof cfg));
  out(b, "// generated by kernels/odb_gen_tsm.c; row-major, complex "
      "entries as double2 (re, im)\n");
  out(b, "struct tsm_args { const double *A; const double *X; double *out; "
      "long long K; };\n\n");
}

/* Element type and the multiply-add of the type. */
static const char *ety(const odb_tsm_cfg *c) {
  return c->t == ODB_TSM_Z ? "double2" : "double";
}

/* acc += x * y for the type (real or complex). */
static void gen_fma(sbuf *b, const odb_tsm_cfg *c, const char *acc,
                    const char *x, const char *y) {
  if (c->t == ODB_TSM_Z)
    out(b, "      %s.x = fma(%s.x, %s.x, %s.x); %s.x = fma(-%s.y, %s.y, %s.x);"
        " %s.y = fma(%s.x, %s.y, %s.y); %s.y = fma(%s.y, %s.x, %s.y);\n",
        acc, x, y, acc, acc, x, y, acc, acc, x, y, acc, acc, x, y, acc);
  else
    out(b, "      %s = fma(%s, %s, %s);\n", acc, x, y, acc);
}

/* Column of tile entry i for a thread at tile index idx (an expression). */
static void col_expr(char *buf, size_t len, int transposed, int tiles,
                     int tile, int i, const char *idx) {
  if (transposed) snprintf(buf, len, "%s + %d", idx, i * tiles);
  else snprintf(buf, len, "%s * %d + %d", idx, tile, i);
}

/* 1 when entry i of a tile can fall outside a side of width w. */
static int may_exceed(int transposed, int tiles, int tile, int i, int w) {
  int last = transposed ? (tiles - 1) + i * tiles : (tiles - 1) * tile + i;
  return last >= w;
}

/* Loads of one row group (rows k + u*ks) into <pre><u>_<i>. */
static void gen_tsmttsm_loads(sbuf *b, const odb_tsm_cfg *c, int U,
                              const char *pre, const char *k) {
  const char *T = ety(c);
  for (int u = 0; u < U; ++u) {
    out(b, "      { const long long r = %s + %d * ks;\n", k, u);
    for (int i = 0; i < c->tm; ++i)
      out(b, "        %sa%d_%d = A[r * %d + ma%d];\n", pre, u, i, c->M, i);
    for (int j = 0; j < c->tn; ++j)
      out(b, "        %sb%d_%d = B[r * %d + nb%d];\n", pre, u, j, c->N, j);
    out(b, "      }\n");
  }
  (void)T;
}

/* The multiply-adds of one row group from <pre> registers. */
static void gen_tsmttsm_fmas(sbuf *b, const odb_tsm_cfg *c, int U,
                             const char *pre) {
  char x[32], y[32], acc[32];
  for (int u = 0; u < U; ++u)
    for (int i = 0; i < c->tm; ++i)
      for (int j = 0; j < c->tn; ++j) {
        snprintf(acc, sizeof acc, "c%d_%d", i, j);
        snprintf(x, sizeof x, "%sa%d_%d", pre, u, i);
        snprintf(y, sizeof y, "%sb%d_%d", pre, u, j);
        gen_fma(b, c, acc, x, y);
      }
}

/* Declares the load registers <pre><u>_<i> for U rows. */
static void gen_tsmttsm_decl(sbuf *b, const odb_tsm_cfg *c, int U,
                             const char *pre) {
  for (int u = 0; u < U; ++u) {
    out(b, "  %s", ety(c));
    for (int i = 0; i < c->tm; ++i) out(b, "%s %sa%d_%d", i ? "," : "", pre,
                                        u, i);
    for (int j = 0; j < c->tn; ++j) out(b, ", %sb%d_%d", pre, u, j);
    out(b, ";\n");
  }
}

/* The copy of n elements from g (row-major rows from k0) to shared sh by
   all BS threads; rows past K read as zero when guard is set. */
static void gen_stage_copy(sbuf *b, const odb_tsm_cfg *c, int BS, int n,
                           int width, const char *g, const char *sh,
                           int guard) {
  int q = cdiv(n, BS);
  out(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {\n", q);
  out(b, "      const int i = threadIdx.x + q * %d;\n", BS);
  if (n % BS) out(b, "      if (i < %d)\n", n);
  if (guard)
    out(b, "      %s[i] = k0 + i / %d < K ? %s[k0 * %d + i] : %s;\n", sh,
        width, g, width, c->t == ODB_TSM_Z ? "make_double2(0.0, 0.0)"
                                           : "0.0");
  else
    out(b, "      %s[i] = %s[k0 * %d + i];\n", sh, g, width);
  out(b, "    }\n");
}

/* Staged main loop: chunks of rows through shared memory, then the tile
   sums from there; row group rg of the block takes rows rg, rg + RG, ... */
static void gen_tsmttsm_staged(sbuf *b, const odb_tsm_cfg *c, int G,
                               int RG) {
  int M = c->M, N = c->N, R = c->chunk, BS = G * RG;
  const char *T = ety(c);
  out(b, "  // staged: chunks of %d rows of A and B in shared memory\n", R);
  out(b, "  %s *sA = (%s *)smem, *sB = sA + %d;\n", T, T, R * M);
  out(b, "  const int rg = threadIdx.x / %d;\n", G);
  out(b, "  for (long long k0 = (long long)blockIdx.x * %d; k0 < K; "
      "k0 += (long long)gridDim.x * %d) {\n", R, R);
  out(b, "    __syncthreads();  // the last chunk is used up\n");
  out(b, "    if (k0 + %d <= K) {\n", R);
  gen_stage_copy(b, c, BS, R * M, M, "A", "sA", 0);
  gen_stage_copy(b, c, BS, R * N, N, "B", "sB", 0);
  out(b, "    } else {\n");
  gen_stage_copy(b, c, BS, R * M, M, "A", "sA", 1);
  gen_stage_copy(b, c, BS, R * N, N, "B", "sB", 1);
  out(b, "    }\n    __syncthreads();\n");
  out(b, "#pragma unroll 4\n    for (int r = rg; r < %d; r += %d) {\n", R,
      RG);
  for (int i = 0; i < c->tm; ++i)
    out(b, "      a0_%d = sA[r * %d + ma%d];\n", i, M, i);
  for (int j = 0; j < c->tn; ++j)
    out(b, "      b0_%d = sB[r * %d + nb%d];\n", j, N, j);
  gen_tsmttsm_fmas(b, c, 1, "");
  out(b, "    }\n  }\n");
}

/* C = A^T B: tiles of C per thread, rows of A and B in a grid-stride loop,
   then the global reduction. */
static void gen_tsmttsm(sbuf *b, const odb_tsm_cfg *c) {
  int M = c->M, N = c->N, mt = cdiv(M, c->tm), nt = cdiv(N, c->tn);
  int G = mt * nt, U = c->unroll, z = c->t == ODB_TSM_Z;
  int RPB = odb_tsm_cfg_block(c) / G;
  const char *T = ety(c);
  char e[64];

  out(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
      "tsm_kernel(tsm_args p) {\n", RPB * G);
  out(b, "  const %s *__restrict__ A = (const %s *)p.A;\n", T, T);
  out(b, "  const %s *__restrict__ B = (const %s *)p.X;\n", T, T);
  out(b, "  const long long K = p.K;\n");
  out(b, "  extern __shared__ double smem[];\n");
  out(b, "  // %d x %d tiles of %d x %d per row, %d rows per block\n", mt, nt,
      c->tm, c->tn, RPB);
  if (G > 1) {
    out(b, "  const int slot = threadIdx.x %% %d;\n", G);
    out(b, "  const int midx = slot %% %d, nidx = slot / %d;\n", mt, mt);
  } else {
    out(b, "  const int midx = 0, nidx = 0;\n");
  }
  out(b, "  const long long ks = (long long)gridDim.x * %d;\n", RPB);
  out(b, "  long long k = (long long)blockIdx.x * %d + threadIdx.x / %d;\n",
      RPB, G);
  /* columns, clamped where the mapping does not divide the side */
  for (int i = 0; i < c->tm; ++i) {
    col_expr(e, sizeof e, c->transposed, mt, c->tm, i, "midx");
    if (may_exceed(c->transposed, mt, c->tm, i, M))
      out(b, "  const int m%d = %s, ma%d = min(m%d, %d);  // guarded\n", i, e,
          i, i, M - 1);
    else
      out(b, "  const int m%d = %s, ma%d = m%d;\n", i, e, i, i);
  }
  for (int j = 0; j < c->tn; ++j) {
    col_expr(e, sizeof e, c->transposed, nt, c->tn, j, "nidx");
    if (may_exceed(c->transposed, nt, c->tn, j, N))
      out(b, "  const int n%d = %s, nb%d = min(n%d, %d);  // guarded\n", j, e,
          j, j, N - 1);
    else
      out(b, "  const int n%d = %s, nb%d = n%d;\n", j, e, j, j);
  }
  for (int i = 0; i < c->tm; ++i)
    for (int j = 0; j < c->tn; ++j)
      out(b, "  %s c%d_%d = %s;\n", T, i, j,
          z ? "make_double2(0.0, 0.0)" : "0.0");
  gen_tsmttsm_decl(b, c, U, "");
  if (c->stage) {
    gen_tsmttsm_staged(b, c, G, RPB);
  } else if (c->leapfrog) {
    gen_tsmttsm_decl(b, c, U, "n");
    out(b, "  // leap frogging: the next row group loads while this one "
        "computes\n");
    out(b, "  if (k + %d * ks < K) {\n", U - 1);
    gen_tsmttsm_loads(b, c, U, "", "k");
    out(b, "    for (;;) {\n");
    out(b, "      const long long kn = k + %d * ks;\n", U);
    out(b, "      const bool more = kn + %d * ks < K;\n", U - 1);
    out(b, "      const long long kl = more ? kn : k;\n");
    gen_tsmttsm_loads(b, c, U, "n", "kl");
    gen_tsmttsm_fmas(b, c, U, "");
    for (int u = 0; u < U; ++u) {
      for (int i = 0; i < c->tm; ++i) out(b, "      a%d_%d = na%d_%d;\n", u,
                                          i, u, i);
      for (int j = 0; j < c->tn; ++j) out(b, "      b%d_%d = nb%d_%d;\n", u,
                                          j, u, j);
    }
    out(b, "      k = kn;\n      if (!more) break;\n    }\n  }\n");
  } else {
    out(b, "  for (; k + %d * ks < K; k += %d * ks) {\n", U - 1, U);
    gen_tsmttsm_loads(b, c, U, "", "k");
    gen_tsmttsm_fmas(b, c, U, "");
    out(b, "  }\n");
  }
  if (!c->stage && (U > 1 || c->leapfrog)) {
    out(b, "  for (; k < K; k += ks) {  // the rows left over\n");
    gen_tsmttsm_loads(b, c, 1, "", "k");
    gen_tsmttsm_fmas(b, c, 1, "");
    out(b, "  }\n");
  }
  /* the global reduction */
  if (c->reduce == ODB_TSM_REDUCE_LOCAL) {
    out(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    out(b, "  double *s = smem + %d;\n",
        c->stage ? c->chunk * (M + N) * (z ? 2 : 1) : 0);
    out(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) s[i] = 0.0;"
        "\n  __syncthreads();\n", M * N * (z ? 2 : 1));
  } else {
    out(b, "  // every thread adds its tile to C\n");
    if (!c->stage)
      out(b, "  if (blockIdx.x * %d + threadIdx.x / %d >= K) return;\n", RPB,
          G);
  }
  for (int i = 0; i < c->tm; ++i)
    for (int j = 0; j < c->tn; ++j) {
      int gm = may_exceed(c->transposed, mt, c->tm, i, M);
      int gn = may_exceed(c->transposed, nt, c->tn, j, N);
      const char *dst = c->reduce == ODB_TSM_REDUCE_LOCAL ? "s" : "p.out";
      out(b, "  ");
      if (gm && gn) out(b, "if (m%d < %d && n%d < %d) ", i, M, j, N);
      else if (gm) out(b, "if (m%d < %d) ", i, M);
      else if (gn) out(b, "if (n%d < %d) ", j, N);
      if (z)
        out(b, "{ atomicAdd(&%s[2 * (m%d * %d + n%d)], c%d_%d.x); "
            "atomicAdd(&%s[2 * (m%d * %d + n%d) + 1], c%d_%d.y); }\n", dst,
            i, N, j, i, j, dst, i, N, j, i, j);
      else
        out(b, "atomicAdd(&%s[m%d * %d + n%d], c%d_%d);\n", dst, i, N, j, i,
            j);
    }
  if (c->reduce == ODB_TSM_REDUCE_LOCAL)
    out(b, "  __syncthreads();\n  for (int i = threadIdx.x; i < %d; i += "
        "blockDim.x) atomicAdd(&p.out[i], s[i]);\n", M * N * (z ? 2 : 1));
  out(b, "}\n");
}

/* C entry (m, column j of this thread) as an expression. */
static void c_expr(char *buf, size_t len, const odb_tsm_cfg *c, const char *m,
                   int j) {
  if (c->csrc == ODB_TSM_C_REGS) snprintf(buf, len, "cr[%s][%d]", m, j);
  else if (c->csrc == ODB_TSM_C_SHARED)
    snprintf(buf, len, "sc[%s * %d + nc%d]", m, c->N, j);
  else snprintf(buf, len, "__ldg(&C[%s * %d + nc%d])", m, c->N, j);
}

/* One group of U rows of B = A C: acc, the m loop, the stores. */
static void gen_tsmm_rows(sbuf *b, const odb_tsm_cfg *c, int U, int J,
                          const char *guardj) {
  int z = c->t == ODB_TSM_Z;
  char acc[32], x[32], y[64];
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j)
      out(b, "    %s s%d_%d = %s;\n", ety(c), u, j,
          z ? "make_double2(0.0, 0.0)" : "0.0");
  out(b, "#pragma unroll %s\n", c->csrc == ODB_TSM_C_REGS ? "" : "4");
  out(b, "    for (int m = 0; m < %d; ++m) {\n", c->M);
  for (int u = 0; u < U; ++u)
    out(b, "      const %s a%d = A[(k + %d * ks) * %d + m];\n", ety(c), u, u,
        c->M);
  for (int j = 0; j < J; ++j) {
    c_expr(y, sizeof y, c, "m", j);
    out(b, "      const %s c%d = %s;\n", ety(c), j, y);
  }
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j) {
      snprintf(acc, sizeof acc, "s%d_%d", u, j);
      snprintf(x, sizeof x, "a%d", u);
      snprintf(y, sizeof y, "c%d", j);
      gen_fma(b, c, acc, x, y);
    }
  out(b, "    }\n");
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j)
      out(b, "    %sB[(k + %d * ks) * %d + n%d] = s%d_%d;\n",
          j == J - 1 ? guardj : "", u, c->N, j, u, j);
}

/* B = A C: tpr threads per row of B, columns interleaved, rows in a
   grid-stride loop; C from registers, shared memory or L1. */
static void gen_tsmm(sbuf *b, const odb_tsm_cfg *c) {
  int M = c->M, N = c->N, T = c->tpr, J = cdiv(N, T), U = c->unroll;
  int RPB = odb_tsm_cfg_block(c) / T, z = c->t == ODB_TSM_Z;
  int guard = N % T != 0;
  const char *E = ety(c);
  char gj[64] = "";

  out(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
      "tsm_kernel(tsm_args p) {\n", RPB * T);
  out(b, "  const %s *__restrict__ A = (const %s *)p.A;\n", E, E);
  out(b, "  const %s *__restrict__ C = (const %s *)p.X;\n", E, E);
  out(b, "  %s *__restrict__ B = (%s *)p.out;\n", E, E);
  out(b, "  const long long K = p.K;\n");
  out(b, "  // %d threads per row, %d columns each, %d rows per block\n", T,
      J, RPB);
  out(b, "  const int slot = threadIdx.x %% %d;\n", T);
  out(b, "  const long long ks = (long long)gridDim.x * %d;\n", RPB);
  out(b, "  long long k = (long long)blockIdx.x * %d + threadIdx.x / %d;\n",
      RPB, T);
  for (int j = 0; j < J; ++j) {
    if (guard && j == J - 1)
      out(b, "  const int n%d = slot + %d, nc%d = min(n%d, %d);  // guarded"
          "\n", j, j * T, j, j, N - 1);
    else
      out(b, "  const int n%d = slot + %d, nc%d = n%d;\n", j, j * T, j, j);
  }
  if (guard) snprintf(gj, sizeof gj, "if (n%d < %d) ", J - 1, N);
  if (c->csrc == ODB_TSM_C_SHARED) {
    out(b, "  extern __shared__ %s sc[];\n", E);
    out(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) sc[i] = "
        "C[i];\n  __syncthreads();\n", M * N);
  } else if (c->csrc == ODB_TSM_C_REGS) {
    out(b, "  %s cr[%d][%d];\n#pragma unroll\n  for (int m = 0; m < %d; ++m)"
        " {\n", E, M, J, M);
    for (int j = 0; j < J; ++j)
      out(b, "    cr[m][%d] = C[m * %d + nc%d];\n", j, N, j);
    out(b, "  }\n");
  }
  out(b, "  for (; k + %d * ks < K; k += %d * ks) {\n", U - 1, U);
  gen_tsmm_rows(b, c, U, J, gj);
  out(b, "  }\n");
  if (U > 1) {
    out(b, "  for (; k < K; k += ks) {  // the rows left over\n");
    gen_tsmm_rows(b, c, 1, J, gj);
    out(b, "  }\n");
  }
  (void)z;
  out(b, "}\n");
}

/* See the header. */
odb_status odb_gen_tsm(const odb_tsm_cfg *c, char **source) {
  sbuf b = { 0 };
  *source = NULL;
  ODB_TRY(odb_tsm_cfg_check(c));
  gen_head(&b, c);
  if (c->op == ODB_TSM_TSMTTSM) gen_tsmttsm(&b, c);
  else gen_tsmm(&b, c);
  if (b.oom) {
    free(b.s);
    return ODB_FAIL(ODB_ERR_NOMEM, "tsm: no memory for the kernel source");
  }
  *source = b.s;
  return ODB_OK;
}

/* See the header; sets no error message. */
int odb_tsm_cfg_allowed(const odb_tsm_cfg *c) {
  if (c->op == ODB_TSM_TSMTTSM) {
    if (c->tm < 1 || c->tm > c->M || c->tn < 1 || c->tn > c->N) return 0;
    if (c->stage && (c->leapfrog || c->unroll != 1)) return 0;
    if (odb_tsm_cfg_smem(c) > 200 * 1024) return 0;
  } else if (c->tpr < 1 || c->tpr > c->N) {
    return 0;
  }
  if (odb_tsm_cfg_regs(c) > 255 || odb_tsm_cfg_group(c) > 1024) return 0;
  if (c->op == ODB_TSM_TSMM && c->csrc == ODB_TSM_C_REGS &&
      c->M * cdiv(c->N, c->tpr) > 64)
    return 0;
  return 1;
}

/* Appends c to list when it is valid and its estimate fits. */
static void space_add(const odb_tsm_cfg *c, odb_tsm_cfg *list, int max,
                      int *n) {
  if (!odb_tsm_cfg_allowed(c)) return;
  if (list && *n < max) list[*n] = *c;
  ++*n;
}

/* See the header. */
int odb_tsm_space_list(odb_tsm_op op, odb_tsm_dtype t, int M, int N,
                       int full, odb_tsm_cfg *list, int max) {
  static const int tiles[] = { 1, 2, 4, 8, 16 };
  static const int tprs[] = { 1, 2, 4, 8, 16, 32 };
  static const int bpss[] = { 2, 4, 8 };
  odb_tsm_cfg c;
  int n = 0;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.t = t;
  c.M = M;
  c.N = N;
  c.block = 256;
  if (op == ODB_TSM_TSMTTSM) {
    for (int a = 0; a < 5; ++a)
      for (int b = 0; b < 5; ++b) {
        if (tiles[a] > M || tiles[b] > N) continue;
        /* the quick space skips tiles thinner than 2 where the side allows */
        if (!full && (tiles[a] < (M < 2 ? M : 2) || tiles[b] < (N < 2 ? N : 2)))
          continue;
        c.tm = tiles[a];
        c.tn = tiles[b];
        for (int tr = full ? 0 : 1; tr <= 1; ++tr)
          for (int lf = 0; lf <= 1; ++lf)
            for (int u = 1; u <= (full ? 2 : 1); ++u)
              for (int r = full ? 0 : 1; r <= 1; ++r)
                for (int st = 0; st <= 64; st += 32)
                  for (int q = 0; q < 3; ++q) {
                    c.transposed = tr;
                    c.leapfrog = lf;
                    c.unroll = u;
                    c.reduce = r;
                    c.stage = st > 0;
                    c.chunk = st;
                    c.blocks_per_sm = bpss[q];
                    space_add(&c, list, max, &n);
                  }
      }
    return n;
  }
  for (int a = 0; a < 6; ++a) {
    if (tprs[a] > N) continue;
    c.tpr = tprs[a];
    for (int s = full ? 0 : 0; s <= (full ? 2 : 1); ++s)
      for (int u = full ? 1 : 2; u <= 4; u += full ? 1 : 2)
        for (int q = 0; q < 3; ++q) {
          c.csrc = s;
          c.unroll = u;
          c.blocks_per_sm = bpss[q];
          space_add(&c, list, max, &n);
        }
  }
  return n;
}
