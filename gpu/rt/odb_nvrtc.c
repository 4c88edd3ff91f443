/* odb_nvrtc.c - CUDA C compiled at run time with NVRTC, cached on disk,
   loaded and launched through the driver API. */
#include "odb_nvrtc.h"
#include "odb_cachedir.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "odb_cuda_check.h"
#include "odb_emit.h"
#include "odb_results.h"
#include "odb_sha256.h"

#ifndef ODB_CUDA_HOME
#define ODB_CUDA_HOME "/usr/local/cuda"
#endif

/*
** The driver API is reached through the runtime's entry-point query
** (cudaGetDriverEntryPointByVersion), so libodebench links only cudart and
** nvrtc and still loads on a machine without a GPU driver (CI).
*/
typedef CUresult (*pfn_load_data)(CUmodule *, const void *);
typedef CUresult (*pfn_unload)(CUmodule);
typedef CUresult (*pfn_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned,
                               unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **, void **);
typedef CUresult (*pfn_func_attr)(int *, CUfunction_attribute, CUfunction);
typedef CUresult (*pfn_func_set)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*pfn_error_str)(CUresult, const char **);
typedef CUresult (*pfn_launch_coop)(CUfunction, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void **);
typedef CUresult (*pfn_occupancy)(int *, CUfunction, int, size_t);
typedef CUresult (*pfn_launch_ex)(const CUlaunchConfig *, CUfunction,
                                  void **, void **);
typedef CUresult (*pfn_max_clusters)(int *, CUfunction,
                                     const CUlaunchConfig *);

static struct {
  pfn_load_data load_data;
  pfn_unload unload;
  pfn_get_function get_function;
  pfn_launch launch;
  pfn_func_attr func_attr;
  pfn_func_set func_set;
  pfn_error_str error_name;
  pfn_launch_coop launch_coop;
  pfn_occupancy occupancy;
  pfn_launch_ex launch_ex;
  pfn_max_clusters max_clusters;
  odb_status st;
  char msg[256];
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

struct odb_gpu_module {
  CUmodule mod;
  int cached;
  char key[17];
};

/* One driver symbol at ABI version 12.0, or NULL with the reason in drv. */
static void *driver_symbol(const char *name) {
  void *fp = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
  cudaError_t err = cudaGetDriverEntryPointByVersion(name, &fp, 12000,
                                                     cudaEnableDefault, &q);
  if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || !fp) {
    (void)cudaGetLastError();
    if (drv.st == ODB_OK) {
      drv.st = ODB_ERR_BACKEND;
      snprintf(drv.msg, sizeof drv.msg, "driver entry point %s not found "
               "(%s, query result %d)", name, cudaGetErrorString(err), (int)q);
    }
    return NULL;
  }
  return fp;
}

/* Runs once: fills drv or leaves the first failure in drv.st/msg. */
static void driver_init(void) {
  drv.load_data = (pfn_load_data)driver_symbol("cuModuleLoadData");
  drv.unload = (pfn_unload)driver_symbol("cuModuleUnload");
  drv.get_function = (pfn_get_function)driver_symbol("cuModuleGetFunction");
  drv.launch = (pfn_launch)driver_symbol("cuLaunchKernel");
  drv.func_attr = (pfn_func_attr)driver_symbol("cuFuncGetAttribute");
  drv.func_set = (pfn_func_set)driver_symbol("cuFuncSetAttribute");
  drv.error_name = (pfn_error_str)driver_symbol("cuGetErrorName");
  drv.launch_coop = (pfn_launch_coop)driver_symbol("cuLaunchCooperativeKernel");
  drv.occupancy = (pfn_occupancy)driver_symbol(
    "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  drv.launch_ex = (pfn_launch_ex)driver_symbol("cuLaunchKernelEx");
  drv.max_clusters = (pfn_max_clusters)driver_symbol(
    "cuOccupancyMaxActiveClusters");
}

/* The driver table, or the failure to get it (recorded). */
static odb_status driver(void) {
  pthread_once(&drv_once, driver_init);
  if (drv.st != ODB_OK) return ODB_FAIL(drv.st, "%s", drv.msg);
  return ODB_OK;
}

/* Records a failed driver call with its name and error. */
static odb_status drv_fail(CUresult r, const char *call, const char *what) {
  const char *name = NULL;
  if (drv.error_name) drv.error_name(r, &name);
  return ODB_FAIL(r == CUDA_ERROR_OUT_OF_MEMORY ? ODB_ERR_NOMEM
                                                : ODB_ERR_BACKEND,
                  "%s(%s) failed: %s (%d)", call, what,
                  name ? name : "unknown error", (int)r);
}

int odb_nvrtc_version(void) {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return 0;
  return major * 1000 + minor * 10;
}

/*
** The cache directory for kernels (created), or 0 when the cache is off or
** no directory can be made. A cache that cannot be used is no error.
*/
static int cache_dir(char *out, size_t cap) {
  const char *off = getenv("ODEBENCH_KERNEL_CACHE");
  int ok;
  if (off && strcmp(off, "off") == 0) return 0;
  ok = odb_cache_dir("kernels", out, cap) == ODB_OK;
  odb_clear_error();
  return ok;
}

/* Reads a whole file into a malloc'd buffer; NULL when absent or empty. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long sz;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) > 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)sz))) {
    if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
      free(buf);
      buf = NULL;
    } else {
      *len = (size_t)sz;
    }
  }
  fclose(f);
  return buf;
}

/* Writes data to path through a temporary file and a rename; best effort. */
static void write_file(const char *path, const void *data, size_t len) {
  char tmp[4200];
  FILE *f;
  static int seq;   /* threads of one process get distinct names */
  if (snprintf(tmp, sizeof tmp, "%s.tmp%ld.%d", path, (long)getpid(),
               __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED)) >=
      (int)sizeof tmp)
    return;
  f = fopen(tmp, "wb");
  if (!f) return;
  if (fwrite(data, 1, len, f) != len) {
    fclose(f);
    remove(tmp);
    return;
  }
  if (fclose(f) != 0 || rename(tmp, path) != 0) remove(tmp);
}

/* A file-name-safe copy of name ("gpu_reference-dopri5-bruss2d_N_2896_"). */
static void safe_name(const char *name, char *out, size_t cap) {
  size_t i = 0;
  for (; name[i] && i + 1 < cap; ++i) {
    char c = name[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out[i] = ok ? c : (c == ' ' ? '-' : '_');
  }
  out[i] = '\0';
}

/* Writes the source to $ODEBENCH_DUMP_KERNELS/<name>-<key>.cu if set. */
static void dump_source(const char *name, const char *key,
                        const char *source) {
  const char *dir = getenv("ODEBENCH_DUMP_KERNELS");
  char sn[128], path[4096];
  if (!dir || !*dir) return;
  if (odb_mkdirs(dir) != ODB_OK) {
    odb_clear_error();
    return;
  }
  safe_name(name, sn, sizeof sn);
  if (snprintf(path, sizeof path, "%s/%s-%s.cu", dir, sn, key) <
      (int)sizeof path)
    write_file(path, source, strlen(source));
}

/*
** Keeps the first lines of an NVRTC log that fit into cap bytes (the
** message buffer is short; the first errors are the ones that matter).
*/
static void trim_log(const char *log, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  while (*log) {
    const char *nl = strchr(log, '\n');
    size_t l = nl ? (size_t)(nl - log) + 1 : strlen(log);
    if (l > 1 && len + l + 1 < cap) {
      memcpy(out + len, log, l);
      len += l;
      out[len] = '\0';
    } else if (l > 1) {
      break;
    }
    log += l;
  }
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
    out[--len] = '\0';
}

/*
** Compiles source to a CUBIN for sm_<arch> (arch "90"). On failure records
** NVRTC's log; on success *cubin is malloc'd.
*/
static odb_status compile(const char *name, const char *source,
                          const char *arch_opt, char **cubin, size_t *len) {
  nvrtcProgram prog;
  char inc[2][320];
  const char *opts[] = { arch_opt, "--std=c++17", "--fmad=true",
                         "--extra-device-vectorization", inc[0], inc[1] };
  int nopts = 4;
  if (strstr(source, "#include <")) {   /* toolkit headers (cooperative
                                            groups): from the toolkit */
    const char *root = getenv("ODEBENCH_CUDA_HOME");
    if (!root || !*root) root = getenv("CUDA_HOME");
    if (!root || !*root) root = ODB_CUDA_HOME;
    snprintf(inc[0], sizeof inc[0], "-I%s/include", root);
    snprintf(inc[1], sizeof inc[1], "-I%s/include/cccl", root);
    nopts = 6;
  }
  nvrtcResult r = nvrtcCreateProgram(&prog, source, ODB_EMIT_SOURCE_NAME, 0, NULL,
                                     NULL);
  odb_status st = ODB_OK;
  *cubin = NULL;
  if (r != NVRTC_SUCCESS)
    return ODB_FAIL(ODB_ERR_BACKEND, "nvrtcCreateProgram(%s): %s", name,
                    nvrtcGetErrorString(r));
  r = nvrtcCompileProgram(prog, nopts, opts);
  if (r != NVRTC_SUCCESS) {
    size_t loglen = 0;
    char *log = NULL, shown[400];
    if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS &&
        (log = malloc(loglen + 1)) &&
        nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
      log[loglen] = '\0';
      trim_log(log, shown, sizeof shown);
    } else {
      snprintf(shown, sizeof shown, "(no log)");
    }
    free(log);
    nvrtcDestroyProgram(&prog);
    return ODB_FAIL(ODB_ERR_ARG, "NVRTC could not compile %s (%s):\n%s", name,
                    nvrtcGetErrorString(r), shown);
  }
  if (nvrtcGetCUBINSize(prog, len) != NVRTC_SUCCESS || *len == 0 ||
      !(*cubin = malloc(*len)) ||
      nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
    free(*cubin);
    *cubin = NULL;
    st = ODB_FAIL(ODB_ERR_BACKEND, "NVRTC gave no machine code for %s", name);
  }
  nvrtcDestroyProgram(&prog);
  return st;
}

/* Loads machine code into the current context (made current here). */
static odb_status load(const char *name, const void *cubin, CUmodule *mod) {
  CUresult r;
  ODB_CUDA_CHECK(cudaFree(NULL));   /* creates/binds the primary context */
  r = drv.load_data(mod, cubin);
  if (r != CUDA_SUCCESS) return drv_fail(r, "cuModuleLoadData", name);
  return ODB_OK;
}

/*
** The architecture option of cc_major.cc_minor into arch and the cache key
** of source (SHA-256 of the source, the options and the NVRTC version, 64
** hex digits) into hex.
*/
static odb_status cache_key(const char *source, int cc_major, int cc_minor,
                            char arch[48], char hex[65]) {
  size_t klen = strlen(source) + 128;
  char *keytext = malloc(klen);
  snprintf(arch, 48, "--gpu-architecture=sm_%d%d", cc_major, cc_minor);
  if (!keytext) return ODB_FAIL(ODB_ERR_NOMEM, "kernel cache key");
  snprintf(keytext, klen, "%s\n// %s std=c++17 fmad extra-vec nvrtc %d\n",
           source, arch, odb_nvrtc_version());
  odb_sha256_hex(keytext, strlen(keytext), hex);
  free(keytext);
  return ODB_OK;
}

/* The work of odb_nvrtc_prefetch: the next source to take, under lock. */
typedef struct prefetch_work {
  const char *const *sources;
  int n, next, cc_major, cc_minor, compiled;
  const char *dir;
  pthread_mutex_t lock;
} prefetch_work;

/* One prefetch thread: compiles sources that have no cache file yet. */
static void *prefetch_thread(void *arg) {
  prefetch_work *w = arg;
  for (;;) {
    char arch[48], hex[65], path[4200], *cubin = NULL;
    size_t len = 0;
    int i;
    pthread_mutex_lock(&w->lock);
    i = w->next++;
    pthread_mutex_unlock(&w->lock);
    if (i >= w->n) break;
    if (!w->sources[i] ||
        cache_key(w->sources[i], w->cc_major, w->cc_minor, arch, hex)
        != ODB_OK)
      continue;
    snprintf(path, sizeof path, "%s/%s.cubin", w->dir, hex);
    if (access(path, R_OK) == 0) continue;
    if (compile("prefetch", w->sources[i], arch, &cubin, &len) == ODB_OK) {
      write_file(path, cubin, len);
      pthread_mutex_lock(&w->lock);
      ++w->compiled;
      pthread_mutex_unlock(&w->lock);
    }
    free(cubin);
  }
  odb_clear_error();   /* failures are reported by odb_nvrtc_build */
  return NULL;
}

/* See the header. */
int odb_nvrtc_prefetch(const char *const *sources, int n, int cc_major,
                       int cc_minor, int threads) {
  char dir[4000];
  pthread_t tid[64];
  prefetch_work w;
  int started = 0;
  if (n < 1 || !cache_dir(dir, sizeof dir)) return 0;
  if (threads < 1) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    threads = c > 0 ? (int)c : 1;
  }
  if (threads > 64) threads = 64;
  if (threads > n) threads = n;
  memset(&w, 0, sizeof w);
  w.sources = sources;
  w.n = n;
  w.cc_major = cc_major;
  w.cc_minor = cc_minor;
  w.dir = dir;
  pthread_mutex_init(&w.lock, NULL);
  for (int t = 1; t < threads; ++t)
    if (pthread_create(&tid[started], NULL, prefetch_thread, &w) == 0)
      ++started;
  prefetch_thread(&w);   /* this thread works too */
  for (int t = 0; t < started; ++t) pthread_join(tid[t], NULL);
  pthread_mutex_destroy(&w.lock);
  return w.compiled;
}

odb_status odb_nvrtc_build(const char *name, const char *source, int cc_major,
                           int cc_minor, odb_gpu_module **out) {
  char arch[48], dir[4000], path[4200], hex[65];
  char *cubin = NULL;
  size_t len = 0;
  odb_gpu_module *m;
  odb_status st;
  int have_dir;
  *out = NULL;
  ODB_TRY(driver());
  ODB_TRY(cache_key(source, cc_major, cc_minor, arch, hex));
  m = calloc(1, sizeof *m);
  if (!m) return ODB_FAIL(ODB_ERR_NOMEM, "module");
  memcpy(m->key, hex, 16);
  dump_source(name, m->key, source);
  have_dir = cache_dir(dir, sizeof dir);
  if (have_dir) {
    snprintf(path, sizeof path, "%s/%s.cubin", dir, hex);
    cubin = read_file(path, &len);
    if (cubin && load(name, cubin, &m->mod) == ODB_OK) {
      m->cached = 1;   /* a corrupt file is compiled again below */
      free(cubin);
      *out = m;
      return ODB_OK;
    }
    odb_clear_error();
    free(cubin);
    cubin = NULL;
  }
  st = compile(name, source, arch, &cubin, &len);
  if (st == ODB_OK) st = load(name, cubin, &m->mod);
  if (st == ODB_OK && have_dir) write_file(path, cubin, len);
  free(cubin);
  if (st != ODB_OK) {
    free(m);
    return st;
  }
  *out = m;
  return ODB_OK;
}

void odb_gpu_module_free(odb_gpu_module *m) {
  if (!m) return;
  if (m->mod && drv.unload) drv.unload(m->mod);
  free(m);
}

int odb_gpu_module_cached(const odb_gpu_module *m) { return m->cached; }

const char *odb_gpu_module_key(const odb_gpu_module *m) { return m->key; }

odb_status odb_gpu_kernel_get(odb_gpu_module *m, const char *kernel,
                              odb_gpu_kernel *out) {
  CUfunction f;
  CUresult r = drv.get_function(&f, m->mod, kernel);
  memset(out, 0, sizeof *out);
  if (r != CUDA_SUCCESS) return drv_fail(r, "cuModuleGetFunction", kernel);
  out->fn = f;
  drv.func_attr(&out->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
  drv.func_attr(&out->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
  drv.func_attr(&out->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                f);
  return ODB_OK;
}

odb_status odb_gpu_kernel_smem(odb_gpu_kernel *k, size_t bytes) {
  CUresult r = drv.func_set((CUfunction)k->fn,
                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            (int)bytes);
  if (r != CUDA_SUCCESS)
    return drv_fail(r, "cuFuncSetAttribute", "max dynamic shared memory");
  return ODB_OK;
}

odb_status odb_gpu_launch(const odb_gpu_kernel *k, unsigned grid,
                          unsigned block, size_t smem, void *arg) {
  void *params[1] = { arg };
  CUresult r = drv.launch((CUfunction)k->fn, grid, 1, 1, block, 1, 1,
                          (unsigned)smem, CU_STREAM_LEGACY, params, NULL);
  if (r != CUDA_SUCCESS) return drv_fail(r, "cuLaunchKernel", "kernel");
  return ODB_OK;
}

/*
** A launch configuration on the legacy default stream with the attributes
** at[0..] that early (programmatic stream serialization) and cluster (> 1:
** blocks a cluster along x) ask for.
*/
static void launch_config(CUlaunchConfig *cfg, CUlaunchAttribute *at,
                          unsigned grid, unsigned block, size_t smem,
                          int early, int cluster) {
  memset(cfg, 0, sizeof *cfg);
  memset(at, 0, 2 * sizeof *at);
  cfg->gridDimX = grid;
  cfg->gridDimY = cfg->gridDimZ = 1;
  cfg->blockDimX = block;
  cfg->blockDimY = cfg->blockDimZ = 1;
  cfg->sharedMemBytes = (unsigned)smem;
  cfg->hStream = CU_STREAM_LEGACY;
  cfg->attrs = at;
  if (early) {
    at[cfg->numAttrs].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at[cfg->numAttrs++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    at[cfg->numAttrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[cfg->numAttrs].value.clusterDim.x = (unsigned)cluster;
    at[cfg->numAttrs].value.clusterDim.y = 1;
    at[cfg->numAttrs++].value.clusterDim.z = 1;
  }
}

odb_status odb_gpu_launch_ex(const odb_gpu_kernel *k, unsigned grid,
                             unsigned block, size_t smem, void *arg,
                             int early, int cluster) {
  void *params[1] = { arg };
  CUlaunchAttribute at[2];
  CUlaunchConfig cfg;
  CUresult r;
  launch_config(&cfg, at, grid, block, smem, early, cluster);
  ODB_TRY(driver());
  r = drv.launch_ex(&cfg, (CUfunction)k->fn, params, NULL);
  if (r != CUDA_SUCCESS)
    return drv_fail(r, "cuLaunchKernelEx", cluster > 1 ? "kernel, a cluster "
                    "of blocks" : "kernel");
  return ODB_OK;
}

odb_status odb_gpu_max_clusters(const odb_gpu_kernel *k, unsigned block,
                                size_t smem, int cluster, int *clusters) {
  CUlaunchAttribute at[2];
  CUlaunchConfig cfg;
  CUresult r;
  launch_config(&cfg, at, (unsigned)cluster, block, smem, 0, cluster);
  ODB_TRY(driver());
  r = drv.max_clusters(clusters, (CUfunction)k->fn, &cfg);
  if (r != CUDA_SUCCESS)
    return drv_fail(r, "cuOccupancyMaxActiveClusters", "kernel");
  return ODB_OK;
}

odb_status odb_gpu_launch_coop(const odb_gpu_kernel *k, unsigned grid,
                               unsigned block, size_t smem, void *arg) {
  void *params[1] = { arg };
  CUresult r;
  ODB_TRY(driver());
  r = drv.launch_coop((CUfunction)k->fn, grid, 1, 1, block, 1, 1,
                      (unsigned)smem, CU_STREAM_LEGACY, params);
  if (r != CUDA_SUCCESS)
    return drv_fail(r, "cuLaunchCooperativeKernel", "kernel");
  return ODB_OK;
}

odb_status odb_gpu_occupancy(const odb_gpu_kernel *k, unsigned block,
                             size_t smem, int *blocks_per_sm) {
  CUresult r;
  ODB_TRY(driver());
  r = drv.occupancy(blocks_per_sm, (CUfunction)k->fn, (int)block, smem);
  if (r != CUDA_SUCCESS)
    return drv_fail(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                    "kernel");
  return ODB_OK;
}
