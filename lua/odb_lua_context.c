/* odb_lua_context.c - the context block every results.json starts with. */
#include "odb_lua.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "odb_config.h"

/* Assumes buf holds 32 bytes; the wall clock in UTC, second resolution. */
void odbL_utc_now(char buf[32]) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Versions of odebench, its build and Lua. */
static odb_status fill_versions(odb_record *c) {
  ODB_TRY(odb_record_set_str(c, "odebench.version", odb_version()));
  ODB_TRY(odb_record_set_str(c, "odebench.revision", odb_revision()));
  ODB_TRY(odb_record_set_str(c, "odebench.compiler", odb_compiler()));
  ODB_TRY(odb_record_set_str(c, "odebench.build_type", ODB_BUILD_TYPE));
  ODB_TRY(odb_record_set_int(c, "odebench.cuda_built", ODB_HAVE_CUDA));
  ODB_TRY(odb_record_set_str(c, "lua.version", LUA_RELEASE));
  return ODB_OK;
}

/* Date, host name and kernel. */
static odb_status fill_host(odb_record *c) {
  char buf[256];
  struct utsname u;
  odbL_utc_now(buf);
  ODB_TRY(odb_record_set_str(c, "date_utc", buf));
  if (gethostname(buf, sizeof buf) != 0) strcpy(buf, "unknown");
  buf[sizeof buf - 1] = '\0';
  ODB_TRY(odb_record_set_str(c, "host.name", buf));
  if (uname(&u) == 0) {
    snprintf(buf, sizeof buf, "%s %s", u.sysname, u.release);
    ODB_TRY(odb_record_set_str(c, "host.kernel", buf));
    ODB_TRY(odb_record_set_str(c, "host.machine", u.machine));
  }
  return ODB_OK;
}

/* CPU model, counts and one group of keys per cache level (cpu.L2.size). */
static odb_status fill_cpu(odb_record *c, const odb_topo *t) {
  char key[64];
  ODB_TRY(odb_record_set_str(c, "cpu.model", t->cpu_model));
  ODB_TRY(odb_record_set_int(c, "cpu.packages", t->packages));
  ODB_TRY(odb_record_set_int(c, "cpu.cores", t->cores));
  ODB_TRY(odb_record_set_int(c, "cpu.pus", t->pus));
  ODB_TRY(odb_record_set_int(c, "cpu.numa_nodes", t->numa_nodes));
  for (int i = 0; i < t->ncaches && i < ODB_TOPO_MAX_CACHES; ++i) {
    const odb_cache_level *cl = &t->caches[i];
    snprintf(key, sizeof key, "cpu.L%d.size", cl->level);
    ODB_TRY(odb_record_set_int(c, key, (long long)cl->size));
    snprintf(key, sizeof key, "cpu.L%d.line", cl->level);
    ODB_TRY(odb_record_set_int(c, key, cl->line));
    snprintf(key, sizeof key, "cpu.L%d.count", cl->level);
    ODB_TRY(odb_record_set_int(c, key, cl->count));
    snprintf(key, sizeof key, "cpu.L%d.sharing", cl->level);
    ODB_TRY(odb_record_set_int(c, key, cl->sharing));
  }
  return ODB_OK;
}

/* gpu.present and the device figures of the "cuda" backend, if any. */
static odb_status fill_gpu(odb_record *c, odb_ctx *ctx) {
  odb_backend *b = odb_ctx_backend(ctx, "cuda");
  odb_device_info d;
  char buf[32];
  memset(&d, 0, sizeof d);
  if (!b || odb_backend_query(b, &d) != ODB_OK) {
    ODB_TRY(odb_record_set_int(c, "gpu.present", 0));
    if (ctx->nnotes > 0)
      ODB_TRY(odb_record_set_str(c, "gpu.note", ctx->backend_notes[0]));
    return ODB_OK;
  }
  ODB_TRY(odb_record_set_int(c, "gpu.present", 1));
  ODB_TRY(odb_record_set_str(c, "gpu.name", d.name));
  snprintf(buf, sizeof buf, "%d.%d", d.cc_major, d.cc_minor);
  ODB_TRY(odb_record_set_str(c, "gpu.cc", buf));
  ODB_TRY(odb_record_set_int(c, "gpu.sm_count", d.sm_count));
  ODB_TRY(odb_record_set_int(c, "gpu.mem_bytes", (long long)d.mem_bytes));
  ODB_TRY(odb_record_set_int(c, "gpu.runtime_version", d.runtime_version));
  ODB_TRY(odb_record_set_int(c, "gpu.driver_version", d.driver_version));
  ODB_TRY(odb_record_set_num(c, "gpu.clock_mhz", d.clock_mhz));
  ODB_TRY(odb_record_set_num(c, "gpu.mem_clock_mhz", d.mem_clock_mhz));
  ODB_TRY(odb_record_set_int(c, "gpu.mem_bus_bits", d.mem_bus_bits));
  return ODB_OK;
}

/* The registered backends as "cpu,cuda". */
static odb_status fill_backends(odb_record *c, odb_ctx *ctx) {
  char buf[256];
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < ctx->nbackends && used + 1 < sizeof buf; ++i) {
    int n = snprintf(buf + used, sizeof buf - used, "%s%s", i ? "," : "",
                     ctx->backends[i]->ops->name);
    if (n < 0) break;
    used += (size_t)n;
  }
  return odb_record_set_str(c, "backends", buf);
}

/*
** Assumes S->ctx exists. The seed is written as an integer while it fits a
** double exactly, as a decimal string beyond 2^53.
*/
odb_status odbL_context_fill(odbL_state *S) {
  odb_record *c = &S->results.context;
  ODB_TRY(fill_versions(c));
  ODB_TRY(fill_host(c));
  ODB_TRY(fill_cpu(c, &S->ctx->topo));
  ODB_TRY(fill_gpu(c, S->ctx));
  ODB_TRY(fill_backends(c, S->ctx));
  if (S->ctx->seed <= (1ull << 53)) {
    ODB_TRY(odb_record_set_int(c, "seed", (long long)S->ctx->seed));
  } else {
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)S->ctx->seed);
    ODB_TRY(odb_record_set_str(c, "seed", buf));
  }
  for (int i = 0; i < S->nsets; ++i) {
    char key[160];
    snprintf(key, sizeof key, "sets.%s", S->sets[i].key);
    ODB_TRY(odb_record_set_str(c, key, S->sets[i].value));
  }
  return ODB_OK;
}
