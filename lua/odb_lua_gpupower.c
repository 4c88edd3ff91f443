/* odb_lua_gpupower.c - ob.gpu_power() and ob.gpu_watch(): the GPU's
   clocks and power draw through NVML (gpu/rt/odb_gpu_power.c), read once
   or sampled by a thread while a benchmark runs. */
#include <string.h>

#include "odb_lua.h"
#include "odb_gpu_power.h"

#define ODBL_GPU_WATCH "odebench.gpu_watch"

typedef struct odbL_watch {
  odb_gpu_watch *w;              /* NULL once stopped */
  odb_gpu_watch_summary sum;     /* what stop gave */
} odbL_watch;

/*
** The PCI bus id of the "cuda" backend's device into pci, or a message
** (no GPU) pushed and 0 returned.
*/
static int gpu_pci(lua_State *L, char *pci, size_t n) {
  odbL_state *S = odbL_state_get(L);
  odb_backend *b = odb_ctx_backend(S->ctx, "cuda");
  odb_device_info d;
  memset(&d, 0, sizeof d);
  if (!b || odb_backend_query(b, &d) != ODB_OK) {
    lua_pushstring(L, "no GPU: the \"cuda\" backend is not registered");
    return 0;
  }
  snprintf(pci, n, "%s", d.pci_bus_id);
  return 1;
}

/* Pushes a number field. */
static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/*
** ob.gpu_power() -> {sm_mhz=, sm_max_mhz=, power_w=, limit_w=, reasons=
** "power cap, ...", reason_bits=}, or nil and why (no GPU, no NVML).
*/
static int l_gpu_power(lua_State *L) {
  char pci[32], names[160];
  odb_gpu_power p;
  if (!gpu_pci(L, pci, sizeof pci)) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  if (odb_gpu_power_read(pci, &p) != ODB_OK) {
    lua_pushnil(L);
    lua_pushstring(L, odb_last_error());
    return 2;
  }
  lua_createtable(L, 0, 6);
  set_num(L, "sm_mhz", p.sm_mhz);
  set_num(L, "sm_max_mhz", p.sm_max_mhz);
  set_num(L, "power_w", p.power_w);
  set_num(L, "limit_w", p.limit_w);
  lua_pushstring(L, odb_gpu_power_reasons(p.reasons, names, sizeof names));
  lua_setfield(L, -2, "reasons");
  lua_pushinteger(L, (lua_Integer)p.reasons);
  lua_setfield(L, -2, "reason_bits");
  return 1;
}

/*
** ob.gpu_watch([period]) -> a watch sampling the GPU every period seconds
** (default 0.01, 0.001..1) until watch:stop(), or nil and why (no GPU, no
** NVML). A period out of range is an error.
*/
static int l_gpu_watch(lua_State *L) {
  char pci[32];
  double period = luaL_optnumber(L, 1, 0.01);
  odbL_watch *box;
  if (!(period >= 0.001 && period <= 1.0))
    return luaL_argerror(L, 1, lua_pushfstring(L, "period must be in "
                         "0.001..1 seconds, got %f", period));
  if (!gpu_pci(L, pci, sizeof pci)) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  box = lua_newuserdatauv(L, sizeof *box, 0);
  memset(box, 0, sizeof *box);
  luaL_setmetatable(L, ODBL_GPU_WATCH);
  if (odb_gpu_watch_start(pci, period, &box->w) != ODB_OK) {
    lua_pushnil(L);
    lua_pushstring(L, odb_last_error());
    return 2;
  }
  return 1;
}

/*
** watch:stop() -> {samples=, sm_min=, sm_mean=, sm_max=, sm_max_mhz=,
** power_max=, limit_w=, capped=}: capped counts the samples in which the
** power cap or a slowdown held the clock back. A second stop gives the
** same figures.
*/
static int watch_stop(lua_State *L) {
  odbL_watch *box = luaL_checkudata(L, 1, ODBL_GPU_WATCH);
  if (box->w) {
    odb_gpu_watch_stop(box->w, &box->sum);
    box->w = NULL;
  }
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, box->sum.samples);
  lua_setfield(L, -2, "samples");
  set_num(L, "sm_min", box->sum.sm_min);
  set_num(L, "sm_mean", box->sum.sm_mean);
  set_num(L, "sm_max", box->sum.sm_max);
  set_num(L, "sm_max_mhz", box->sum.sm_max_mhz);
  set_num(L, "power_max", box->sum.power_max);
  set_num(L, "limit_w", box->sum.limit_w);
  lua_pushinteger(L, box->sum.capped);
  lua_setfield(L, -2, "capped");
  return 1;
}

/* __gc and __close: the thread stopped, the figures dropped. */
static int watch_gc(lua_State *L) {
  odbL_watch *box = luaL_checkudata(L, 1, ODBL_GPU_WATCH);
  odb_gpu_watch_stop(box->w, NULL);
  box->w = NULL;
  return 0;
}

static const luaL_Reg watch_meta[] = {
  {"__gc", watch_gc},
  {"__close", watch_gc},
  {NULL, NULL}
};

static const luaL_Reg watch_methods[] = {
  {"stop", watch_stop},
  {NULL, NULL}
};

/* The watch's metatable, and ob.gpu_power / ob.gpu_watch in table -1. */
void odbL_gpupower_register(lua_State *L) {
  if (luaL_newmetatable(L, ODBL_GPU_WATCH)) {
    luaL_setfuncs(L, watch_meta, 0);
    luaL_newlib(L, watch_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, l_gpu_power);
  lua_setfield(L, -2, "gpu_power");
  lua_pushcfunction(L, l_gpu_watch);
  lua_setfield(L, -2, "gpu_watch");
}
