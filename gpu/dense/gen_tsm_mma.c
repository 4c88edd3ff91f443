/* gen_tsm_mma.c - the tall & skinny kernels on the FP64 tensor cores
   (mma.sync), on the real view of the data: chunks of rows staged in
   shared memory by cp.async, `stages` chunks in flight, warp tiles of C
   (tsmttsm) or of B (tsmm); and for complex data Gauss's three real
   products instead of four. */
#include <stdio.h>

#include "gen_tsm_int.h"

static void gen_mma_fn(odb_emit *b, const mma_geom *g);

/* cp.async and the mma of the configuration, as device functions. */
static void gen_mma_helpers(odb_emit *b, const odb_tsm_cfg *c,
                            const mma_geom *g) {
  const char *hint = c->pf == -1 ? "" : c->pf == 64 ? ".L2::64B"
                     : c->pf == 256 ? ".L2::256B" : ".L2::128B";
  odb_emits(b,
    "// cp.async: 16 or 8 bytes from global to shared memory; with n = 0\n"
    "// nothing is read and zeros are written (rows past K)\n"
    "__device__ __forceinline__ void cp16(double *s, const double *g, int n) {\n");
  put(b,
    "  asm volatile(\"cp.async.cg.shared.global%s [%%0], [%%1], 16, %%2;\\n\"\n",
    hint);
  odb_emits(b,
    "               :: \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(g),\n"
    "                  \"r\"(n) : \"memory\");\n"
    "}\n");
  odb_emit_cuh(b, &odb_cuh_tsm_cp_async, NULL);
  gen_mma_fn(b, g);
}

/* "{%first, ..., %(first + n - 1)}" into buf. */
static void operands(char *buf, size_t len, int first, int n) {
  size_t u = 0;
  for (int i = 0; i < n && u + 8 < len; ++i)
    u += (size_t)snprintf(buf + u, len - u, "%s%%%d", i ? ", " : "{",
                          first + i);
  snprintf(buf + u, len - u, "}");
}

/* mma(d, a, b): d += a b, one mma.sync of the configuration's shape. */
static void gen_mma_fn(odb_emit *b, const mma_geom *g) {
  char od[64], oa[96], ob[64];
  int E = g->E, AR = g->AR, BR = g->BR;
  if (g->mr == 8)
    odb_emits(b, "// d += a b on the FP64 tensor cores, an 8x4 by 4x8 "
              "product per warp:\n// lane (g, t) = (lane / 4, lane % 4) "
              "holds a = A[g][t], b = B[t][g]\n// and d = D[g][2t], "
              "D[g][2t + 1]\n");
  else
    put(b, "// d += a b on the FP64 tensor cores, a 16x%d by %dx8 product per "
        "warp:\n// lane (g, t) = (lane / 4, lane %% 4) holds a[v + 2 i] = "
        "A[g + 8 v][t + 4 i],\n// b[i] = B[t + 4 i][g] (i < %d) and d = "
        "D[g][2t], D[g][2t + 1], D[g + 8][2t],\n// D[g + 8][2t + 1]\n",
        g->KS, g->KS, g->KS / 4);
  operands(od, sizeof od, 0, E);
  operands(oa, sizeof oa, E, AR);
  operands(ob, sizeof ob, E + AR, BR);
  put(b, "__device__ __forceinline__ void mma(double (&d)[%d], const double "
      "(&a)[%d],\n                                    const double (&b)[%d]) "
      "{\n", E, AR, BR);
  put(b, "  asm volatile(\"mma.sync.aligned.m%dn8k%d.row.col.f64.f64.f64.f64 "
      "\"\n               \"%s, %s, %s, %s;\\n\"\n               : ", g->mr,
      g->KS, od, oa, ob, od);
  for (int i = 0; i < E; ++i) put(b, "%s\"+d\"(d[%d])", i ? ", " : "", i);
  put(b, "\n               : ");
  for (int i = 0; i < AR; ++i) put(b, "%s\"d\"(a[%d])", i ? ", " : "", i);
  for (int i = 0; i < BR; ++i) put(b, ", \"d\"(b[%d])", i);
  put(b, ");\n}\n\n");
}

/* The copy of rows k0 .. k0 + R - 1 of one operand (w doubles a row) to
   offset off of the stage st, row stride S, by all BS threads; wvar names
   a run-time width below w past which the copies fill zeros (NULL: none;
   w and it even where the copies take 16 bytes). */
static void gen_mma_copy(odb_emit *b, const char *src, int R, int w, int gw,
                         int S, int off, int BS, const char *wvar) {
  int wide = w % 2 == 0, per = wide ? w / 2 : w, n = R * per;
  put(b, "  // %s: %d rows of %d doubles in %d-byte copies\n", src, R, w,
      wide ? 16 : 8);
  put(b, "#pragma unroll\n  for (int q = 0; q < %d; ++q) {\n", cdiv(n, BS));
  put(b, "    const int u = threadIdx.x + q * %d;\n", BS);
  if (n % BS) put(b, "    if (u >= %d) break;\n", n);
  put(b, "    const int r = u / %d, c = %s(u %% %d);\n", per,
      wide ? "2 * " : "", per);
  put(b, "    const bool ok = k0 + r < K%s%s;\n", wvar ? " && c < " : "",
      wvar ? wvar : "");
  put(b, "    %s(st + ", wide ? "cp16" : "cp8");
  if (off) put(b, "%d + ", off);
  put(b, "r * %d + c, ok ? %s + (k0 + r) * %d + c : %s, ok ? %d : 0);\n"
      "  }\n", S, src, gw, src, wide ? 16 : 8);
}

/* 1 when c splits C into bands whose last one is shorter (M not a
   multiple of split): load_chunk then takes the band's width aw. */
static int uneven_bands(const odb_tsm_cfg *c) {
  return c->split > 1 && c->M % c->split != 0;
}

/* load_chunk(): chunk ch of A (and of B for tsmttsm) into a stage. */
static void gen_mma_load(odb_emit *b, const odb_tsm_cfg *c, const mma_geom *g) {
  int two = c->op == ODB_TSM_TSMTTSM;
  put(b, "// copies rows ch * %d .. ch * %d + %d of A%s into the stage st;\n"
      "// a chunk past the end copies nothing\n", c->chunk, c->chunk,
      c->chunk - 1, two ? " and B" : "");
  put(b, "__device__ __forceinline__ void load_chunk(double *st, "
      "const double *__restrict__ A,\n");
  if (two) put(b, "    const double *__restrict__ B,");
  put(b, "    long long ch, long long K%s) {\n",
      uneven_bands(c) ? ", int aw" : "");
  put(b, "  const long long k0 = ch * %d;\n  if (k0 >= K) return;\n",
      c->chunk);
  if (c->split > 1)   /* this block's band of columns of A (aw of them
                         valid where the last band is shorter) */
    gen_mma_copy(b, "A", c->chunk, 2 * cdiv(c->M, c->split), g->Mr, g->SA, 0,
                 g->BS, uneven_bands(c) ? "aw" : NULL);
  else
    gen_mma_copy(b, "A", c->chunk, g->Mr, g->Mr, g->SA, 0, g->BS, NULL);
  if (two) gen_mma_copy(b, "B", c->chunk, g->Nr, g->Nr, g->SB,
                        c->chunk * g->SA, g->BS, NULL);
  put(b, "}\n\n");
}

/* Kernel entry, pointers, lane indices and the zeroed stages. */
static void gen_mma_entry(odb_emit *b, const odb_tsm_cfg *c,
                          const mma_geom *g) {
  int tsmm = c->op == ODB_TSM_TSMM;
  /* min 1 block: the registers are not capped below 65536 / threads */
  put(b, "extern \"C\" __global__ void __launch_bounds__(%d, %d)\n"
      "tsm_kernel(tsm_args p) {\n", g->BS, c->split > 1 ? 2 : 1);
  if (g->z)
    put(b, "  // the real view: complex K x %d is K x %d doubles ((re, im) "
        "pairs)\n", c->M, g->Mr);
  put(b, "  const double *__restrict__ A = p.A;\n");
  put(b, "  const double *__restrict__ %s = p.X;\n", tsmm ? "C" : "B");
  if (tsmm) put(b, "  double *__restrict__ Bo = p.out;\n");
  put(b, "  const long long K = p.K;\n");
  put(b, "  extern __shared__ __align__(16) double smem[];\n");
  put(b, "  // %d stages of %d rows: A (row stride %d)%s\n", c->stages,
      c->chunk, g->SA, tsmm ? "" : ", then B");
  if (!tsmm) put(b, "  //   (row stride %d)\n", g->SB);
  put(b, "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n");
  put(b, "  const int g = lane >> 2, t = lane & 3;\n");
}

static void gen_mma_prologue_dyn(odb_emit *b, const odb_tsm_cfg *c,
                                 const mma_geom *g);

/* The prologue: the first stages - 1 chunks start to load. */
static void gen_mma_prologue_x(odb_emit *b, const odb_tsm_cfg *c,
                               const mma_geom *g, const char *a,
                               const char *first, const char *stride) {
  if (c->dyn) {
    gen_mma_prologue_dyn(b, c, g);
    return;
  }
  put(b, "  // the first %d chunks of this block start to load\n",
      c->stages - 1);
  put(b, "#pragma unroll\n  for (int s = 0; s < %d; ++s) {\n", c->stages - 1);
  put(b, "    load_chunk(smem + s * %d, %s, %s%s + (long long)s * "
      "%s, K%s);\n    cp_commit();\n  }\n", g->stage, a,
      c->op == ODB_TSM_TSMTTSM ? "B, " : "", first, stride,
      uneven_bands(c) ? ", aw" : "");
  put(b, "  int cur = 0;  // the stage of chunk ch\n");
  put(b, "  for (long long ch = %s; ch < nch; ch += %s) {\n", first, stride);
  put(b, "    asm volatile(\"cp.async.wait_group %d;\\n\" ::: \"memory\");\n",
      c->stages - 2);
  put(b, "    __syncthreads();  // chunk ch is in; the stage before is used "
      "up\n");
  put(b, "    load_chunk(smem + (cur == 0 ? %d : cur - 1) * %d, %s, %sch + "
      "%d * (long long)%s, K%s);\n    cp_commit();\n", c->stages - 1,
      g->stage, a, c->op == ODB_TSM_TSMTTSM ? "B, " : "", c->stages - 1,
      stride, uneven_bands(c) ? ", aw" : "");
}

/*
** The prologue of sched=dyn (tsmttsm, A and B, the whole width): the
** first stages - 1 chunks of a block are blockIdx.x + s gridDim.x, the
** later ones come from the counter odb_tsm_next, so a block on an SM that
** reads faster takes more of them and the SMs finish together. Thread 0
** asks for the chunk of the next iteration while this one computes and
** puts it in the ring odb_chq (slot it & 7 holds the chunk of load number
** it; a slot is written again only after the barrier that follows its
** last read), 64 bytes of the dynamic shared memory after the stages
** (dyn_smem; the local reduction may reuse them after the loop). The
** chunks a block takes grow, so the first one past the end ends its loop.
*/
static void gen_mma_prologue_dyn(odb_emit *b, const odb_tsm_cfg *c,
                                 const mma_geom *g) {
  int S1 = c->stages - 1;
  put(b, "  // sched=dyn: the first %d chunks of this block start to load; "
      "the later\n  // ones come from the counter odb_tsm_next\n", S1);
  put(b, "  long long *const odb_chq = (long long *)(smem + %d);  // after "
      "the stages\n", c->stages * g->stage);
  put(b, "#pragma unroll\n  for (int s = 0; s < %d; ++s) {\n", S1);
  put(b, "    const long long c0 = blockIdx.x + (long long)s * gridDim.x;\n"
      "    load_chunk(smem + s * %d, A, B, c0, K);\n    cp_commit();\n"
      "    if (threadIdx.x == 0) odb_chq[s] = c0;\n  }\n", g->stage);
  put(b, "  const long long base = %d * (long long)gridDim.x;\n", S1);
  put(b, "  long long nx = 0;  // thread 0: the chunk of the next load\n"
      "  if (threadIdx.x == 0) nx = base + (long long)atomicAdd("
      "&odb_tsm_next, 1ull);\n");
  put(b, "  int cur = 0;  // the stage of load it\n");
  put(b, "  for (unsigned it = 0;; ++it) {\n");
  put(b, "    asm volatile(\"cp.async.wait_group %d;\\n\" ::: \"memory\");\n",
      c->stages - 2);
  put(b, "    if (threadIdx.x == 0) odb_chq[(it + %d) & 7] = nx;\n", S1);
  put(b, "    __syncthreads();  // load it is in; the stage before is used "
      "up\n");
  put(b, "    if (odb_chq[it & 7] >= nch) break;  // the same for the whole "
      "block\n");
  put(b, "    load_chunk(smem + (cur == 0 ? %d : cur - 1) * %d, A, B, "
      "odb_chq[(it + %d) & 7], K);\n    cp_commit();\n", S1, g->stage, S1);
  put(b, "    if (threadIdx.x == 0) nx = base + (long long)atomicAdd("
      "&odb_tsm_next, 1ull);\n");
}

/* The prologue of a block that walks every gridDim.x-th chunk. */
static void gen_mma_prologue(odb_emit *b, const odb_tsm_cfg *c,
                             const mma_geom *g) {
  gen_mma_prologue_x(b, c, g, "A", "blockIdx.x", "gridDim.x");
}

/*
** AtB kernels: ends the caller's comment line (with the row groups, if
** any), then each warp's tile of C (m0, n0) and row group, the number of
** chunks of R rows, and the zeroed shared memory.
*/
static void gen_mma_warps_atb(odb_emit *b, const odb_tsm_cfg *c,
                              const mma_geom *g, int tmw, int tnw, int R) {
  if (c->rg > 1)
    put(b, ";\n  // %d row groups of warps split each chunk's rows\n", c->rg);
  else
    put(b, "\n");
  if (c->rg > 1)
    put(b, "  const int tile = warp %% %d, rg = warp / %d;\n", g->G, g->G);
  else
    put(b, "  const int tile = warp, rg = 0;\n");
  put(b, "  const int m0 = tile %% %d * %d, n0 = tile / %d * %d;\n", g->TMt,
      tmw, g->TMt, tnw);
  put(b, "  const long long nch = (K + %d) / %d;  // chunks of %d rows\n",
      R - 1, R, R);
  put(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;  "
      "// padding stays 0\n  __syncthreads();\n", c->stages * g->stage,
      g->BS);
}

/*
** AC kernels: ends the caller's comment line (with the row groups, if
** any), then each warp's first column n0 and row group, the number of
** chunks of R rows, and the zeroed shared memory (no barrier).
*/
static void gen_mma_warps_ac(odb_emit *b, const odb_tsm_cfg *c,
                             const mma_geom *g, int R) {
  if (c->rg > 1)
    put(b, ";\n  // %d row groups of warps split each chunk's rows\n", c->rg);
  else
    put(b, "\n");
  if (c->rg > 1)
    put(b, "  const int n0 = warp %% %d * %d, rg = warp / %d;\n", g->G,
        8 * c->wn, g->G);
  else
    put(b, "  const int n0 = warp * %d, rg = 0;\n", 8 * c->wn);
  put(b, "  const long long nch = (K + %d) / %d;  // chunks of %d rows\n",
      R - 1, R, R);
  /* zeroed only where the mma steps read columns past A's (complex ck
     counts entries with Gauss's products) */
  if (g->ck > (c->gauss ? c->M : g->Mr))
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;  "
        "// padding stays 0\n", c->stages * g->stage, g->BS);
}

/* Declares and zeroes acc[wm][wn][E]. */
static void gen_mma_acc(odb_emit *b, const odb_tsm_cfg *c, const mma_geom *g,
                        const char *ind) {
  put(b, "%sdouble acc[%d][%d][%d];\n", ind, c->wm, c->wn, g->E);
  put(b, "#pragma unroll\n%sfor (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "%s  for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "%s    for (int e = 0; e < %d; ++e) acc[i][j][e] = 0.0;\n", ind, c->wm,
      ind, c->wn, ind, g->E);
}

/* C = A^T B on the tensor cores: each warp sums its tile of C over the
   rows of the chunks, then adds it to C (through shared memory with the
   local reduction). Complex: the real 2M x 2N sums combine in pairs of
   lanes (rows 2m and 2m + 1 of a tile sit in lanes 4 apart). */
static void gen_mma_tsmttsm(odb_emit *b, const odb_tsm_cfg *c,
                            const mma_geom *g) {
  int R = c->chunk, mr = g->mr, tmw = mr * c->wm, tnw = 8 * c->wn;
  int rowg = g->cm > g->Mr, colg = g->cn > g->Nr, local = c->reduce;
  const char *sum = local ? "smem" : "p.out";
  gen_mma_helpers(b, c, g);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  tsmg_c_zero(b, g->e * c->M * c->N);
  put(b, "  // %d x %d warp tiles of %d x %d entries cover C (%d x %d real)",
      g->TMt, g->TNt, tmw, tnw, g->Mr, g->Nr);
  gen_mma_warps_atb(b, c, g, tmw, tnw, R);
  gen_mma_acc(b, c, g, "  ");
  gen_mma_prologue(b, c, g);
  put(b, "    const double *sa = smem + cur * %d + m0 + g;\n", g->stage);
  put(b, "    const double *sb = smem + cur * %d + %d + n0 + g;\n", g->stage,
      R * g->SA);
  put(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // %d rows a "
      "step\n", g->steps, g->KS);
  put(b, "      const int r = %d * (rg + q * %d) + t;\n", g->KS, c->rg);
  put(b, "      double a[%d][%d], bf[%d][%d];\n", c->wm, g->AR, c->wn, g->BR);
  put(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n", c->wm);
  if (mr == 8)
    put(b, "        a[i][0] = sa[r * %d + i * 8];\n", g->SA);
  else
    put(b, "#pragma unroll\n        for (int v = 0; v < %d; ++v)\n"
        "          a[i][v] = sa[(r + 4 * (v / 2)) * %d + i * 16 + 8 * (v %% 2)];"
        "\n", g->AR, g->SA);
  put(b, "#pragma unroll\n      for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "        for (int v = 0; v < %d; ++v) bf[j][v] = sb[(r + 4 * v) * %d + "
      "8 * j];\n", c->wn, g->BR, g->SB);
  put(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "        for (int j = 0; j < %d; ++j) mma(acc[i][j], a[i], bf[j]);\n",
      c->wm, c->wn);
  put(b, "    }\n    cur = cur == %d ? 0 : cur + 1;\n  }\n", c->stages - 1);
  /* the reduction */
  if (local) {
    put(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    put(b, "  asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n");
    put(b, "  __syncthreads();  // the stages are free\n");
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;\n"
        "  __syncthreads();\n", g->e * c->M * c->N, g->BS);
  } else {
    put(b, "  // each warp adds its tile to C\n");
    tsmg_c_ready(b);
  }
  put(b, "#pragma unroll\n  for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "      for (int h = 0; h < %d; ++h) {\n", c->wm, c->wn, g->E / 2);
  put(b, "        const int r = m0 + i * %d + 8 * h + g, c = n0 + 8 * j + "
      "2 * t;\n", mr);
  if (g->z) {
    put(b, "        // lanes g, g ^ 1 hold rows 2m, 2m + 1 (re, im of A); "
        "columns 2t, 2t + 1\n        // are re, im of B: even lanes add "
        "re = ar br - ai bi, odd ones im = ai br + ar bi\n");
    put(b, "        const double y = __shfl_xor_sync(0xffffffffu, "
        "acc[i][j][2 * h + 1], 4);\n");
    put(b, "        const int m = r >> 1, n = c >> 1;\n");
    put(b, "        ");
    if (rowg && colg) put(b, "if (m < %d && n < %d) ", c->M, c->N);
    else if (rowg) put(b, "if (m < %d) ", c->M);
    else if (colg) put(b, "if (n < %d) ", c->N);
    put(b, "atomicAdd(&%s[2 * (m * %d + n) + (g & 1)],\n"
        "                  (g & 1) ? acc[i][j][2 * h] + y : acc[i][j][2 * h] "
        "- y);\n", sum, c->N);
  } else {
    put(b, "        ");
    if (rowg) put(b, "if (r < %d) ", c->M);
    put(b, "{\n");
    put(b, "          %satomicAdd(&%s[r * %d + c], acc[i][j][2 * h]);\n",
        colg ? "if (c < N_) " : "", sum, c->N);
    put(b, "          %satomicAdd(&%s[r * %d + c + 1], acc[i][j][2 * h + 1]);"
        "\n        }\n", colg || c->N % 2 ? "if (c + 1 < N_) " : "", sum,
        c->N);
  }
  put(b, "      }\n");
  if (local) {
    put(b, "  __syncthreads();\n");
    tsmg_c_ready(b);
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d) "
        "atomicAdd(&p.out[i], smem[i]);\n", g->e * c->M * c->N, g->BS);
  }
  tsmg_c_done(b);
  put(b, "}\n");
}

/* B = A C on the tensor cores: each warp computes wm blocks of 8 or 16
   rows times wn blocks of 8 columns of B per step, the A fragments from
   the staged chunk, the C fragments from registers or shared memory. */
/*
** The tail of the ostage tsmm loop: the tiles' fragments go to the
** staging buffer so (after the stages and C's copy), then, after a
** barrier, the whole block writes the chunk's rows of B, one contiguous
** run of memory, in 16-byte (8-byte for an odd width) stores. The next
** chunk's barrier keeps so from being overwritten before it is read.
*/
static void gen_mma_tsmm_ostage(odb_emit *b, const odb_tsm_cfg *c,
                                const mma_geom *g) {
  int R = c->chunk, pair = g->Nr % 2 == 0, per = pair ? g->Nr / 2 : g->Nr;
  put(b, "      // the tile's rows of B into the staging buffer\n");
  put(b, "#pragma unroll\n      for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "        for (int h = 0; h < %d; ++h) {\n", c->wm, g->E / 2);
  put(b, "          double *o = so + (r0 + w * %d + 8 * h + g) * %d + n0 + "
      "2 * t;\n", g->mr, g->SO);
  put(b, "#pragma unroll\n          for (int j = 0; j < %d; ++j)\n"
      "            *(double2 *)(o + 8 * j) = make_double2(acc[w][j][2 * h], "
      "acc[w][j][2 * h + 1]);\n        }\n    }\n", c->wn);
  put(b, "    __syncthreads();  // the chunk's rows of B are staged\n");
  put(b, "    // rows k0 .. k0 + %d of B are one run of %d doubles\n", R - 1,
      R * g->Nr);
  put(b, "    const int nu = (K - k0 < %d ? (int)(K - k0) : %d) * %d;\n", R, R,
      per);
  put(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {\n",
      cdiv(R * per, g->BS));
  put(b, "      const int u = threadIdx.x + q * %d;\n", g->BS);
  put(b, "      if (u < nu) {\n");
  put(b, "        const int r = u / %d, cc = %s(u %% %d);\n", per,
      pair ? "2 * " : "", per);
  if (pair)
    put(b, "        *(double2 *)(Bo + k0 * %d + 2 * u) = *(const double2 *)"
        "(so + r * %d + cc);\n", g->Nr, g->SO);
  else
    put(b, "        Bo[k0 * %d + u] = so[r * %d + cc];\n", g->Nr, g->SO);
  put(b, "      }\n    }\n");
  put(b, "    cur = cur == %d ? 0 : cur + 1;\n  }\n}\n", c->stages - 1);
}

static void gen_mma_tsmm(odb_emit *b, const odb_tsm_cfg *c, const mma_geom *g) {
  int R = c->chunk, mr = g->mr, regs = c->csrc == ODB_TSM_C_REGS;
  int colg = g->cn > g->Nr, rowsw = c->wm * mr;
  gen_mma_helpers(b, c, g);
  if (g->z)
    put(b, "// entry (r, c) of the real %d x %d form of C: [re, im; -im, re] "
        "per complex entry\n__device__ __forceinline__ double "
        "cval(const double *__restrict__ C, int r, int c) {\n"
        "  if (r >= %d || c >= %d) return 0.0;\n"
        "  const double *v = C + 2 * ((r >> 1) * %d + (c >> 1));\n"
        "  return (r & 1) == (c & 1) ? v[0] : (r & 1) ? -v[1] : v[1];\n}\n\n",
        g->Mr, g->Nr, g->Mr, g->Nr, c->N);
  else
    put(b, "// entry (r, c) of C, zero outside\n__device__ __forceinline__ "
        "double cval(const double *__restrict__ C, int r, int c) {\n"
        "  return r < %d && c < %d ? C[r * %d + c] : 0.0;\n}\n\n", c->M,
        c->N, c->N);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  put(b, "  // %d warps cover the %d columns (%d blocks of 8 each)", g->G,
      g->Nr, c->wn);
  gen_mma_warps_ac(b, c, g, R);
  if (regs) {
    put(b, "  double f[%d][%d][%d];  // this lane's fragments of C\n", g->Kt,
        c->wn, g->BR);
    put(b, "#pragma unroll\n  for (int kk = 0; kk < %d; ++kk)\n#pragma unroll\n"
        "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
        "      for (int v = 0; v < %d; ++v)\n"
        "        f[kk][j][v] = cval(C, %d * kk + t + 4 * v, n0 + 8 * j + g);\n",
        g->Kt, c->wn, g->BR, g->KS);
  } else {
    put(b, "  // C (%d x %d with zeros around it) after the stages, row "
        "stride %d\n", g->ck, g->cn, g->SC);
    put(b, "  double *sc = smem + %d;\n", c->stages * g->stage);
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d)\n"
        "    sc[i / %d * %d + i %% %d] = cval(C, i / %d, i %% %d);\n",
        g->ck * g->cn, g->BS, g->cn, g->SC, g->cn, g->cn, g->cn);
    put(b, "  const double *scl = sc + t * %d + n0 + g;\n", g->SC);
  }
  if (c->ostage)
    put(b, "  // the chunk's rows of B before they are stored, row stride %d\n"
        "  double *so = smem + %d;\n", g->SO, c->stages * g->stage +
        (regs ? 0 : g->ck * g->SC));
  put(b, "  __syncthreads();\n");
  gen_mma_prologue(b, c, g);
  put(b, "    const long long k0 = ch * %d;\n", R);
  put(b, "    const double *sa = smem + cur * %d + g * %d + t;\n", g->stage,
      g->SA);
  put(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // tiles of "
      "%d rows\n", g->tiles, rowsw);
  put(b, "      const int r0 = (rg + q * %d) * %d;\n", c->rg, rowsw);
  gen_mma_acc(b, c, g, "      ");
  put(b, "#pragma unroll\n      for (int kk = 0; kk < %d; ++kk) {  // %d "
      "columns of A a step\n", g->Kt, g->KS);
  put(b, "        double a[%d][%d], bf[%d][%d];\n", c->wm, g->AR, c->wn,
      g->BR);
  put(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n", c->wm);
  if (mr == 8)
    put(b, "          a[w][0] = sa[(r0 + w * 8) * %d + 4 * kk];\n", g->SA);
  else
    put(b, "#pragma unroll\n          for (int v = 0; v < %d; ++v)\n"
        "            a[w][v] = sa[(r0 + w * 16 + 8 * (v %% 2)) * %d + %d * kk "
        "+ 4 * (v / 2)];\n", g->AR, g->SA, g->KS);
  put(b, "#pragma unroll\n        for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "          for (int v = 0; v < %d; ++v) ", c->wn, g->BR);
  if (regs) put(b, "bf[j][v] = f[kk][j][v];\n");
  else put(b, "bf[j][v] = scl[(%d * kk + 4 * v) * %d + 8 * j];\n", g->KS,
           g->SC);
  put(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n"
      "#pragma unroll\n          for (int j = 0; j < %d; ++j) "
      "mma(acc[w][j], a[w], bf[j]);\n      }\n", c->wm, c->wn);
  if (c->ostage) {
    gen_mma_tsmm_ostage(b, c, g);
    return;
  }
  /* stores */
  put(b, "#pragma unroll\n      for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "        for (int h = 0; h < %d; ++h) {\n", c->wm, g->E / 2);
  put(b, "          const long long row = k0 + r0 + w * %d + 8 * h + g;\n",
      mr);
  put(b, "          if (row < K) {\n#pragma unroll\n"
      "            for (int j = 0; j < %d; ++j) {\n", c->wn);
  put(b, "              const int c = n0 + 8 * j + 2 * t;\n");
  if (g->Nr % 2 == 0)
    put(b, "              %s*(double2 *)(Bo + row * %d + c) = "
        "make_double2(acc[w][j][2 * h], acc[w][j][2 * h + 1]);\n",
        colg ? "if (c < N_) " : "", g->Nr);
  else
    put(b, "              if (c < N_) Bo[row * %d + c] = acc[w][j][2 * h];\n"
        "              if (c + 1 < N_) Bo[row * %d + c + 1] = "
        "acc[w][j][2 * h + 1];\n", g->Nr, g->Nr);
  put(b, "            }\n          }\n        }\n    }\n");
  put(b, "    cur = cur == %d ? 0 : cur + 1;\n  }\n}\n", c->stages - 1);
}

/* {====== Gauss's three products on the tensor cores (complex) */

/* C = A^T B with Gauss's products: lane (g, t) loads (re, im) of column
   m0 + g (+ 8, + 16 i) of A and n0 + g (+ 8 j) of B in row t (+ 4 v) of
   a step; each warp sums its three tiles, then they combine into C. */
static void gen_gauss_tsmttsm(odb_emit *b, const odb_tsm_cfg *c,
                              const mma_geom *g) {
  int R = c->chunk, tmw = 16 * c->wm, tnw = 8 * c->wn;
  int S = c->split > 1 ? c->split : 1, Mb = cdiv(c->M, S);
  int uneven = uneven_bands(c), rowg = g->cm > Mb || uneven;
  int colg = g->cn > c->N, local = c->reduce;
  const char *sum = local ? "smem" : "p.out";
  char mlim[32];   /* the rows of this block's band */
  if (uneven) snprintf(mlim, sizeof mlim, "mb");
  else snprintf(mlim, sizeof mlim, "%d", Mb);
  gen_mma_helpers(b, c, g);
  odb_emit_cuh(b, &odb_cuh_tsm_split3, NULL);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  tsmg_c_zero(b, 2 * c->M * c->N);
  if (S > 1) {
    put(b, "  // C in %d bands of %d rows: block b sums band b %% %d over "
        "every\n  // (gridDim.x / %d)-th chunk, from chunk b / %d on, and "
        "stages its columns of A\n", S, Mb, S, S, S);
    put(b, "  const int band = blockIdx.x %% %d;\n", S);
    put(b, "  const long long cb = blockIdx.x / %d, gs = gridDim.x / %d;\n",
        S, S);
    put(b, "  const double *__restrict__ Ab = A + %d * band;\n", 2 * Mb);
    if (uneven)
      put(b, "  // the last band holds %d rows, the others %d\n"
          "  const int mb = band == %d ? %d : %d, aw = 2 * mb;\n",
          c->M - (S - 1) * Mb, Mb, S - 1, c->M - (S - 1) * Mb, Mb);
  }
  put(b, "  // Gauss: P1 = Re A^T Re B, P2 = Im A^T Im B, P3 = (Re A + Im A)^T "
      "(Re B + Im B),\n  // C = P1 - P2 + i (P3 - P1 - P2); %d x %d warp "
      "tiles of %d x %d complex entries\n  // cover %s (%d x %d)", g->TMt,
      g->TNt, tmw, tnw, S > 1 ? "a band" : "C", Mb, c->N);
  gen_mma_warps_atb(b, c, g, tmw, tnw, R);
  put(b, "  double acc[3][%d][%d][4];  // P1, P2, P3\n", c->wm, c->wn);
  put(b, "#pragma unroll\n  for (int p = 0; p < 3; ++p)\n#pragma unroll\n"
      "    for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "      for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "        for (int e = 0; e < 4; ++e) acc[p][i][j][e] = 0.0;\n", c->wm,
      c->wn);
  if (S > 1) gen_mma_prologue_x(b, c, g, "Ab", "cb", "gs");
  else gen_mma_prologue(b, c, g);
  put(b, "    const double *sa = smem + cur * %d + 2 * (m0 + g);\n", g->stage);
  put(b, "    const double *sb = smem + cur * %d + %d + 2 * (n0 + g);\n",
      g->stage, R * g->SA);
  put(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // %d rows a "
      "step\n", g->steps, g->KS);
  put(b, "      const int r = %d * (rg + q * %d) + t;\n", g->KS, c->rg);
  put(b, "      double a[3][%d][%d], bf[3][%d][%d];\n", c->wm, g->AR, c->wn,
      g->BR);
  put(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "        for (int v = 0; v < %d; ++v)\n"
      "          split3(sa + (r + 4 * (v / 2)) * %d + 2 * (i * 16 + 8 * "
      "(v %% 2)),\n                 a[0][i][v], a[1][i][v], a[2][i][v]);\n",
      c->wm, g->AR, g->SA);
  put(b, "#pragma unroll\n      for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "        for (int v = 0; v < %d; ++v)\n"
      "          split3(sb + (r + 4 * v) * %d + 16 * j, bf[0][j][v], "
      "bf[1][j][v],\n                 bf[2][j][v]);\n", c->wn, g->BR, g->SB);
  put(b, "#pragma unroll\n      for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "        for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "          for (int p = 0; p < 3; ++p) mma(acc[p][i][j], a[p][i], "
      "bf[p][j]);\n", c->wm, c->wn);
  put(b, "    }\n    cur = cur == %d ? 0 : cur + 1;\n  }\n", c->stages - 1);
  if (local) {
    put(b, "  // block-local sums in shared memory, then one global atomic "
        "per entry\n");
    put(b, "  asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n");
    put(b, "  __syncthreads();  // the stages are free\n");
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d) smem[i] = 0.0;\n"
        "  __syncthreads();\n", 2 * Mb * c->N, g->BS);
  } else {
    put(b, "  // each warp adds its tiles to C\n");
    tsmg_c_ready(b);
  }
  put(b, "#pragma unroll\n  for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "      for (int e = 0; e < 4; ++e) {\n", c->wm, c->wn);
  put(b, "        const int m = m0 + 16 * i + 8 * (e / 2) + g, "
      "n = n0 + 8 * j + 2 * t + e %% 2;\n");
  put(b, "        const double p1 = acc[0][i][j][e], p2 = acc[1][i][j][e];\n");
  put(b, "        ");
  if (rowg && colg) put(b, "if (m < %s && n < %d) ", mlim, c->N);
  else if (rowg) put(b, "if (m < %s) ", mlim);
  else if (colg) put(b, "if (n < %d) ", c->N);
  if (S > 1 && !local)   /* m counts rows of the band */
    put(b, "{\n          atomicAdd(&%s[2 * ((m + %d * band) * %d + n)], "
        "p1 - p2);\n          atomicAdd(&%s[2 * ((m + %d * band) * %d + n) "
        "+ 1], acc[2][i][j][e] - p1 - p2);\n        }\n      }\n", sum, Mb,
        c->N, sum, Mb, c->N);
  else
    put(b, "{\n          atomicAdd(&%s[2 * (m * %d + n)], p1 - p2);\n"
        "          atomicAdd(&%s[2 * (m * %d + n) + 1], acc[2][i][j][e] - p1 - "
        "p2);\n        }\n      }\n", sum, c->N, sum, c->N);
  if (local) {
    put(b, "  __syncthreads();\n");
    tsmg_c_ready(b);
  }
  if (local && S > 1 && uneven)   /* the band's rows of C are contiguous */
    put(b, "  double *ob = p.out + %d * band;\n"
        "  for (int i = threadIdx.x; i < %d * mb; i += %d) "
        "atomicAdd(&ob[i], smem[i]);\n", 2 * Mb * c->N, 2 * c->N, g->BS);
  else if (local && S > 1)
    put(b, "  double *ob = p.out + %d * band;\n"
        "  for (int i = threadIdx.x; i < %d; i += %d) atomicAdd(&ob[i], "
        "smem[i]);\n", 2 * Mb * c->N, 2 * Mb * c->N, g->BS);
  else if (local)
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d)"
        " atomicAdd(&p.out[i], smem[i]);\n", 2 * c->M * c->N, g->BS);
  tsmg_c_done(b);
  put(b, "}\n");
}

/* B = A C with Gauss's products: each warp computes wm blocks of 16 rows
   times wn blocks of 8 complex columns of B per tile of rows; lane (g, t)
   loads (re, im) of A's column t (+ 4 i) of rows g, g + 8; C's three
   operands come from registers or from (re, im) pairs in shared memory. */
static void gen_gauss_tsmm(odb_emit *b, const odb_tsm_cfg *c,
                           const mma_geom *g) {
  int R = c->chunk, regs = c->csrc == ODB_TSM_C_REGS, rowsw = 16 * c->wm;
  int colg = g->cn > c->N;
  gen_mma_helpers(b, c, g);
  odb_emit_cuh(b, &odb_cuh_tsm_split3, NULL);
  put(b, "// (re, im) of C's entry (k, n), zero outside C\n"
      "__device__ __forceinline__ double2 cpair(const double *__restrict__ C,"
      " int k, int n) {\n  return k < %d && n < %d ? *(const double2 *)(C + "
      "2 * (k * %d + n))\n                          : make_double2(0.0, 0.0);"
      "\n}\n\n", c->M, c->N, c->N);
  gen_mma_load(b, c, g);
  gen_mma_entry(b, c, g);
  put(b, "  // Gauss: P1 = Re A Re C, P2 = Im A Im C, P3 = (Re A + Im A) "
      "(Re C + Im C),\n  // B = P1 - P2 + i (P3 - P1 - P2); %d warps cover "
      "the %d columns (%d blocks of 8 each)", g->G, c->N, c->wn);
  gen_mma_warps_ac(b, c, g, R);
  if (regs) {
    put(b, "  double f[3][%d][%d][%d];  // this lane's operands of C\n",
        g->Kt, c->wn, g->BR);
    put(b, "#pragma unroll\n  for (int kk = 0; kk < %d; ++kk)\n#pragma unroll\n"
        "    for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
        "      for (int v = 0; v < %d; ++v) {\n"
        "        const double2 y = cpair(C, %d * kk + t + 4 * v, n0 + 8 * j + "
        "g);\n        f[0][kk][j][v] = y.x;\n        f[1][kk][j][v] = y.y;\n"
        "        f[2][kk][j][v] = y.x + y.y;\n      }\n", g->Kt, c->wn, g->BR,
        g->KS);
  } else {
    put(b, "  // C (%d x %d complex with zeros around it) after the stages, "
        "row stride %d\n", g->ck, g->cn, g->SC);
    put(b, "  double *sc = smem + %d;\n", c->stages * g->stage);
    put(b, "  for (int i = threadIdx.x; i < %d; i += %d)\n"
        "    *(double2 *)(sc + i / %d * %d + 2 * (i %% %d)) = cpair(C, i / %d, "
        "i %% %d);\n", g->ck * g->cn, g->BS, g->cn, g->SC, g->cn, g->cn,
        g->cn);
    put(b, "  const double *scl = sc + t * %d + 2 * (n0 + g);\n", g->SC);
  }
  put(b, "  __syncthreads();\n");
  gen_mma_prologue(b, c, g);
  put(b, "    const long long k0 = ch * %d;\n", R);
  put(b, "    const double *sa = smem + cur * %d + g * %d + 2 * t;\n",
      g->stage, g->SA);
  put(b, "#pragma unroll\n    for (int q = 0; q < %d; ++q) {  // tiles of "
      "%d rows\n", g->tiles, rowsw);
  put(b, "      const int r0 = (rg + q * %d) * %d;\n", c->rg, rowsw);
  put(b, "      double acc[3][%d][%d][4];  // P1, P2, P3\n", c->wm, c->wn);
  put(b, "#pragma unroll\n      for (int p = 0; p < 3; ++p)\n#pragma unroll\n"
      "        for (int i = 0; i < %d; ++i)\n#pragma unroll\n"
      "          for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "            for (int e = 0; e < 4; ++e) acc[p][i][j][e] = 0.0;\n",
      c->wm, c->wn);
  put(b, "#pragma unroll\n      for (int kk = 0; kk < %d; ++kk) {  // %d "
      "columns of A a step\n", g->Kt, g->KS);
  put(b, "        double a[3][%d][%d], bf[3][%d][%d];\n", c->wm, g->AR,
      c->wn, g->BR);
  put(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "          for (int v = 0; v < %d; ++v)\n"
      "            split3(sa + (r0 + w * 16 + 8 * (v %% 2)) * %d + 2 * (%d * kk "
      "+ 4 * (v / 2)),\n                   a[0][w][v], a[1][w][v], "
      "a[2][w][v]);\n", c->wm, g->AR, g->SA, g->KS);
  put(b, "#pragma unroll\n        for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "          for (int v = 0; v < %d; ++v)", c->wn, g->BR);
  if (regs)
    put(b, "\n#pragma unroll\n            for (int p = 0; p < 3; ++p) "
        "bf[p][j][v] = f[p][kk][j][v];\n");
  else
    put(b, "\n            split3(scl + (%d * kk + 4 * v) * %d + 16 * j, "
        "bf[0][j][v], bf[1][j][v],\n                   bf[2][j][v]);\n",
        g->KS, g->SC);
  put(b, "#pragma unroll\n        for (int w = 0; w < %d; ++w)\n"
      "#pragma unroll\n          for (int j = 0; j < %d; ++j)\n"
      "#pragma unroll\n            for (int p = 0; p < 3; ++p) "
      "mma(acc[p][w][j], a[p][w], bf[p][j]);\n      }\n", c->wm, c->wn);
  /* stores: B = P1 - P2 + i (P3 - P1 - P2) */
  put(b, "#pragma unroll\n      for (int w = 0; w < %d; ++w)\n#pragma unroll\n"
      "        for (int h = 0; h < 2; ++h) {\n", c->wm);
  put(b, "          const long long row = k0 + r0 + w * 16 + 8 * h + g;\n");
  put(b, "          if (row < K) {\n#pragma unroll\n"
      "            for (int j = 0; j < %d; ++j)\n#pragma unroll\n"
      "              for (int e = 0; e < 2; ++e) {\n", c->wn);
  put(b, "                const int n = n0 + 8 * j + 2 * t + e;\n");
  put(b, "                const double p1 = acc[0][w][j][2 * h + e], "
      "p2 = acc[1][w][j][2 * h + e];\n");
  put(b, "                ");
  if (colg) put(b, "if (n < %d) ", c->N);
  put(b, "*(double2 *)(Bo + row * %d + 2 * n) =\n"
      "                    make_double2(p1 - p2, acc[2][w][j][2 * h + e] - p1 "
      "- p2);\n", 2 * c->N);
  put(b, "              }\n          }\n        }\n    }\n");
  put(b, "    cur = cur == %d ? 0 : cur + 1;\n  }\n}\n", c->stages - 1);
}

/* }====== */

/* See gen_tsm_int.h. */
void tsmg_mma(odb_emit *b, const odb_tsm_cfg *c) {
  mma_geom g;
  tsmg_mma_geom_of(c, &g);
  if (c->gauss) {
    if (c->op == ODB_TSM_TSMTTSM) gen_gauss_tsmttsm(b, c, &g);
    else gen_gauss_tsmm(b, c, &g);
    return;
  }
  put(b, "#define N_ %d  // columns of %s (real view)\n\n",
      c->op == ODB_TSM_TSMTTSM ? c->N : g.Nr,
      c->op == ODB_TSM_TSMTTSM ? "C" : "B");
  if (c->op == ODB_TSM_TSMTTSM) gen_mma_tsmttsm(b, c, &g);
  else gen_mma_tsmm(b, c, &g);
}
