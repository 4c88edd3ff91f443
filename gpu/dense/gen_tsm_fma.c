/* gen_tsm_fma.c - the tall & skinny kernels on the FMA units (Ernst,
   Hager, Thies and Wellein, "Performance engineering for real and complex
   tall & skinny matrix multiplication kernels on GPUs"): tsmttsm with
   tiles of C per thread, leap frogging or chunks staged in shared memory;
   tsmm with threads per row of B and C from registers, shared memory or
   L1. */
#include <stdio.h>

#include "gen_tsm_int.h"

/* Element type and the multiply-add of the type. */
static const char *ety(const odb_tsm_cfg *c) {
  return c->t == ODB_TSM_Z ? "double2" : "double";
}

/* acc += x * y for the type (real or complex). */
static void gen_fma(odb_emit *b, const odb_tsm_cfg *c, const char *acc,
                    const char *x, const char *y) {
  if (c->t == ODB_TSM_Z)
    put(b, "      %s.x = fma(%s.x, %s.x, %s.x); %s.x = fma(-%s.y, %s.y, %s.x);"
        " %s.y = fma(%s.x, %s.y, %s.y); %s.y = fma(%s.y, %s.x, %s.y);\n",
        acc, x, y, acc, acc, x, y, acc, acc, x, y, acc, acc, x, y, acc);
  else
    put(b, "      %s = fma(%s, %s, %s);\n", acc, x, y, acc);
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
static void gen_tsmttsm_loads(odb_emit *b, const odb_tsm_cfg *c, int U,
                              const char *pre, const char *k) {
  const char *T = ety(c);
  for (int u = 0; u < U; ++u) {
    put(b, "      { const long long r = %s + %d * ks;\n", k, u);
    for (int i = 0; i < c->tm; ++i)
      put(b, "        %sa%d_%d = A[r * %d + ma%d];\n", pre, u, i, c->M, i);
    for (int j = 0; j < c->tn; ++j)
      put(b, "        %sb%d_%d = B[r * %d + nb%d];\n", pre, u, j, c->N, j);
    put(b, "      }\n");
  }
  (void)T;
}

/* The multiply-adds of one row group from <pre> registers. */
static void gen_tsmttsm_fmas(odb_emit *b, const odb_tsm_cfg *c, int U,
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
static void gen_tsmttsm_decl(odb_emit *b, const odb_tsm_cfg *c, int U,
                             const char *pre) {
  for (int u = 0; u < U; ++u) {
    put(b, "  %s", ety(c));
    for (int i = 0; i < c->tm; ++i) put(b, "%s %sa%d_%d", i ? "," : "", pre,
                                        u, i);
    for (int j = 0; j < c->tn; ++j) put(b, ", %sb%d_%d", pre, u, j);
    put(b, ";\n");
  }
}

/* The copy of n elements from g (row-major rows from k0) to shared sh by
   all BS threads; rows past K read as zero when guard is set. */
static void gen_stage_copy(odb_emit *b, const odb_tsm_cfg *c, int BS, int n,
                           int width, const char *g, const char *sh,
                           int guard) {
  int q = cdiv(n, BS);
  put(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {\n", q);
  put(b, "      const int i = threadIdx.x + q * %d;\n", BS);
  if (n % BS) put(b, "      if (i < %d)\n", n);
  if (guard)
    put(b, "      %s[i] = k0 + i / %d < K ? %s[k0 * %d + i] : %s;\n", sh,
        width, g, width, c->t == ODB_TSM_Z ? "make_double2(0.0, 0.0)"
                                           : "0.0");
  else
    put(b, "      %s[i] = %s[k0 * %d + i];\n", sh, g, width);
  put(b, "    }\n");
}

/* Staged main loop: chunks of rows through shared memory, then the tile
   sums from there; row group rg of the block takes rows rg, rg + RG, ... */
static void gen_tsmttsm_staged(odb_emit *b, const odb_tsm_cfg *c, int G,
                               int RG) {
  int M = c->M, N = c->N, R = c->chunk, BS = G * RG;
  const char *T = ety(c);
  put(b, "  // staged: chunks of %d rows of A and B in shared memory\n", R);
  put(b, "  %s *sA = (%s *)smem, *sB = sA + %d;\n", T, T, R * M);
  put(b, "  const int rg = threadIdx.x / %d;\n", G);
  put(b, "  for (long long k0 = (long long)blockIdx.x * %d; k0 < K; "
      "k0 += (long long)gridDim.x * %d) {\n", R, R);
  put(b, "    __syncthreads();  // the last chunk is used up\n");
  put(b, "    if (k0 + %d <= K) {\n", R);
  gen_stage_copy(b, c, BS, R * M, M, "A", "sA", 0);
  gen_stage_copy(b, c, BS, R * N, N, "B", "sB", 0);
  put(b, "    } else {\n");
  gen_stage_copy(b, c, BS, R * M, M, "A", "sA", 1);
  gen_stage_copy(b, c, BS, R * N, N, "B", "sB", 1);
  put(b, "    }\n    __syncthreads();\n");
  put(b, "#pragma unroll 4\n    for (int r = rg; r < %d; r += %d) {\n", R,
      RG);
  for (int i = 0; i < c->tm; ++i)
    put(b, "      a0_%d = sA[r * %d + ma%d];\n", i, M, i);
  for (int j = 0; j < c->tn; ++j)
    put(b, "      b0_%d = sB[r * %d + nb%d];\n", j, N, j);
  gen_tsmttsm_fmas(b, c, 1, "");
  put(b, "    }\n  }\n");
}

/* C = A^T B: tiles of C per thread, rows of A and B in a grid-stride loop,
   then the global reduction. */
static void gen_tsmttsm(odb_emit *b, const odb_tsm_cfg *c) {
  int M = c->M, N = c->N, mt = cdiv(M, c->tm), nt = cdiv(N, c->tn);
  int G = mt * nt, U = c->unroll, z = c->t == ODB_TSM_Z;
  int RPB = odb_tsm_cfg_block(c) / G;
  const char *T = ety(c);
  char e[64];

  put(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
      "tsm_kernel(tsm_args p) {\n", RPB * G);
  put(b, "  const %s *__restrict__ A = (const %s *)p.A;\n", T, T);
  put(b, "  const %s *__restrict__ B = (const %s *)p.X;\n", T, T);
  put(b, "  const long long K = p.K;\n");
  put(b, "  extern __shared__ double smem[];\n");
  tsmg_c_zero(b, M * N * (z ? 2 : 1));
  put(b, "  // %d x %d tiles of %d x %d per row, %d rows per block\n", mt, nt,
      c->tm, c->tn, RPB);
  if (G > 1) {
    put(b, "  const int slot = threadIdx.x %% %d;\n", G);
    put(b, "  const int midx = slot %% %d, nidx = slot / %d;\n", mt, mt);
  } else {
    put(b, "  const int midx = 0, nidx = 0;\n");
  }
  put(b, "  const long long ks = (long long)gridDim.x * %d;\n", RPB);
  put(b, "  long long k = (long long)blockIdx.x * %d + threadIdx.x / %d;\n",
      RPB, G);
  /* columns, clamped where the mapping does not divide the side */
  for (int i = 0; i < c->tm; ++i) {
    col_expr(e, sizeof e, c->transposed, mt, c->tm, i, "midx");
    if (may_exceed(c->transposed, mt, c->tm, i, M))
      put(b, "  const int m%d = %s, ma%d = min(m%d, %d);  // guarded\n", i, e,
          i, i, M - 1);
    else
      put(b, "  const int m%d = %s, ma%d = m%d;\n", i, e, i, i);
  }
  for (int j = 0; j < c->tn; ++j) {
    col_expr(e, sizeof e, c->transposed, nt, c->tn, j, "nidx");
    if (may_exceed(c->transposed, nt, c->tn, j, N))
      put(b, "  const int n%d = %s, nb%d = min(n%d, %d);  // guarded\n", j, e,
          j, j, N - 1);
    else
      put(b, "  const int n%d = %s, nb%d = n%d;\n", j, e, j, j);
  }
  for (int i = 0; i < c->tm; ++i)
    for (int j = 0; j < c->tn; ++j)
      put(b, "  %s c%d_%d = %s;\n", T, i, j,
          z ? "make_double2(0.0, 0.0)" : "0.0");
  gen_tsmttsm_decl(b, c, U, "");
  if (c->stage) {
    gen_tsmttsm_staged(b, c, G, RPB);
  } else if (c->leapfrog) {
    gen_tsmttsm_decl(b, c, U, "n");
    put(b, "  // leap frogging: the next row group loads while this one "
        "computes\n");
    put(b, "  if (k + %d * ks < K) {\n", U - 1);
    gen_tsmttsm_loads(b, c, U, "", "k");
    put(b, "    for (;;) {\n");
    put(b, "      const long long kn = k + %d * ks;\n", U);
    put(b, "      const bool more = kn + %d * ks < K;\n", U - 1);
    put(b, "      const long long kl = more ? kn : k;\n");
    gen_tsmttsm_loads(b, c, U, "n", "kl");
    gen_tsmttsm_fmas(b, c, U, "");
    for (int u = 0; u < U; ++u) {
      for (int i = 0; i < c->tm; ++i) put(b, "      a%d_%d = na%d_%d;\n", u,
                                          i, u, i);
      for (int j = 0; j < c->tn; ++j) put(b, "      b%d_%d = nb%d_%d;\n", u,
                                          j, u, j);
    }
    put(b, "      k = kn;\n      if (!more) break;\n    }\n  }\n");
  } else {
    put(b, "  for (; k + %d * ks < K; k += %d * ks) {\n", U - 1, U);
    gen_tsmttsm_loads(b, c, U, "", "k");
    gen_tsmttsm_fmas(b, c, U, "");
    put(b, "  }\n");
  }
  if (!c->stage && (U > 1 || c->leapfrog)) {
    put(b, "  for (; k < K; k += ks) {  // the rows left over\n");
    gen_tsmttsm_loads(b, c, 1, "", "k");
    gen_tsmttsm_fmas(b, c, 1, "");
    put(b, "  }\n");
  }
  /* the global reduction */
  if (c->reduce == ODB_TSM_REDUCE_LOCAL) {
    put(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    put(b, "  double *s = smem + %d;\n",
        c->stage ? c->chunk * (M + N) * (z ? 2 : 1) : 0);
    put(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) s[i] = 0.0;"
        "\n  __syncthreads();\n", M * N * (z ? 2 : 1));
  } else {
    put(b, "  // every thread adds its tile to C\n");
    tsmg_c_ready(b);
    if (!c->stage)
      put(b, "  if (blockIdx.x * %d + threadIdx.x / %d < K) {\n", RPB, G);
  }
  for (int i = 0; i < c->tm; ++i)
    for (int j = 0; j < c->tn; ++j) {
      int gm = may_exceed(c->transposed, mt, c->tm, i, M);
      int gn = may_exceed(c->transposed, nt, c->tn, j, N);
      const char *dst = c->reduce == ODB_TSM_REDUCE_LOCAL ? "s" : "p.out";
      put(b, "  ");
      if (gm && gn) put(b, "if (m%d < %d && n%d < %d) ", i, M, j, N);
      else if (gm) put(b, "if (m%d < %d) ", i, M);
      else if (gn) put(b, "if (n%d < %d) ", j, N);
      if (z)
        put(b, "{ atomicAdd(&%s[2 * (m%d * %d + n%d)], c%d_%d.x); "
            "atomicAdd(&%s[2 * (m%d * %d + n%d) + 1], c%d_%d.y); }\n", dst,
            i, N, j, i, j, dst, i, N, j, i, j);
      else
        put(b, "atomicAdd(&%s[m%d * %d + n%d], c%d_%d);\n", dst, i, N, j, i,
            j);
    }
  if (c->reduce == ODB_TSM_REDUCE_LOCAL) {
    put(b, "  __syncthreads();\n");
    tsmg_c_ready(b);
    put(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) "
        "atomicAdd(&p.out[i], s[i]);\n", M * N * (z ? 2 : 1));
  } else if (!c->stage) {
    put(b, "  }\n");
  }
  tsmg_c_done(b);
  put(b, "}\n");
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
static void gen_tsmm_rows(odb_emit *b, const odb_tsm_cfg *c, int U, int J,
                          const char *guardj) {
  int z = c->t == ODB_TSM_Z;
  char acc[32], x[32], y[64];
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j)
      put(b, "    %s s%d_%d = %s;\n", ety(c), u, j,
          z ? "make_double2(0.0, 0.0)" : "0.0");
  put(b, "#pragma unroll %s\n", c->csrc == ODB_TSM_C_REGS ? "" : "4");
  put(b, "    for (int m = 0; m < %d; ++m) {\n", c->M);
  for (int u = 0; u < U; ++u)
    put(b, "      const %s a%d = A[(k + %d * ks) * %d + m];\n", ety(c), u, u,
        c->M);
  for (int j = 0; j < J; ++j) {
    c_expr(y, sizeof y, c, "m", j);
    put(b, "      const %s c%d = %s;\n", ety(c), j, y);
  }
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j) {
      snprintf(acc, sizeof acc, "s%d_%d", u, j);
      snprintf(x, sizeof x, "a%d", u);
      snprintf(y, sizeof y, "c%d", j);
      gen_fma(b, c, acc, x, y);
    }
  put(b, "    }\n");
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < J; ++j)
      put(b, "    %sB[(k + %d * ks) * %d + n%d] = s%d_%d;\n",
          j == J - 1 ? guardj : "", u, c->N, j, u, j);
}

/* B = A C: tpr threads per row of B, columns interleaved, rows in a
   grid-stride loop; C from registers, shared memory or L1. */
static void gen_tsmm(odb_emit *b, const odb_tsm_cfg *c) {
  int M = c->M, N = c->N, T = c->tpr, J = cdiv(N, T), U = c->unroll;
  int RPB = odb_tsm_cfg_block(c) / T, z = c->t == ODB_TSM_Z;
  int guard = N % T != 0;
  const char *E = ety(c);
  char gj[64] = "";

  put(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
      "tsm_kernel(tsm_args p) {\n", RPB * T);
  put(b, "  const %s *__restrict__ A = (const %s *)p.A;\n", E, E);
  put(b, "  const %s *__restrict__ C = (const %s *)p.X;\n", E, E);
  put(b, "  %s *__restrict__ B = (%s *)p.out;\n", E, E);
  put(b, "  const long long K = p.K;\n");
  put(b, "  // %d threads per row, %d columns each, %d rows per block\n", T,
      J, RPB);
  put(b, "  const int slot = threadIdx.x %% %d;\n", T);
  put(b, "  const long long ks = (long long)gridDim.x * %d;\n", RPB);
  put(b, "  long long k = (long long)blockIdx.x * %d + threadIdx.x / %d;\n",
      RPB, T);
  for (int j = 0; j < J; ++j) {
    if (guard && j == J - 1)
      put(b, "  const int n%d = slot + %d, nc%d = min(n%d, %d);  // guarded"
          "\n", j, j * T, j, j, N - 1);
    else
      put(b, "  const int n%d = slot + %d, nc%d = n%d;\n", j, j * T, j, j);
  }
  if (guard) snprintf(gj, sizeof gj, "if (n%d < %d) ", J - 1, N);
  if (c->csrc == ODB_TSM_C_SHARED) {
    put(b, "  extern __shared__ %s sc[];\n", E);
    put(b, "  for (int i = threadIdx.x; i < %d; i += blockDim.x) sc[i] = "
        "C[i];\n  __syncthreads();\n", M * N);
  } else if (c->csrc == ODB_TSM_C_REGS) {
    put(b, "  %s cr[%d][%d];\n#pragma unroll\n  for (int m = 0; m < %d; ++m)"
        " {\n", E, M, J, M);
    for (int j = 0; j < J; ++j)
      put(b, "    cr[m][%d] = C[m * %d + nc%d];\n", j, N, j);
    put(b, "  }\n");
  }
  put(b, "  for (; k + %d * ks < K; k += %d * ks) {\n", U - 1, U);
  gen_tsmm_rows(b, c, U, J, gj);
  put(b, "  }\n");
  if (U > 1) {
    put(b, "  for (; k < K; k += ks) {  // the rows left over\n");
    gen_tsmm_rows(b, c, 1, J, gj);
    put(b, "  }\n");
  }
  (void)z;
  put(b, "}\n");
}

/* See gen_tsm_int.h. */
void tsmg_fma(odb_emit *b, const odb_tsm_cfg *c) {
  if (c->op == ODB_TSM_TSMTTSM) gen_tsmttsm(b, c);
  else gen_tsmm(b, c);
}
