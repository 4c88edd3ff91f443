/* odb_lua_gc.c - telling Lua's collector about memory it does not see.

   A solver, a kernel or a batch of matrices is a small userdata that owns
   megabytes to gigabytes of host or device memory, allocated in C. Lua's
   collector paces itself by the memory Lua allocates, so a script that
   makes such objects in a loop without closing them would keep every one
   alive until the Lua heap grew enough to start a cycle: a sweep over
   sizes could run the machine (or the GPU) out of memory with garbage. */
#include "odb_lua.h"

#include <limits.h>

/* Below this, an object is left to the collector's own pacing. */
#define GC_MIN_BYTES (1 << 20)

/*
** Called before an object that will own about `bytes` of memory outside
** Lua is made: advances the collector as if Lua had allocated that much
** (LUA_GCSTEP), so that objects no longer reachable, and the memory their
** finalizers free, go first. Honours collectgarbage("stop"). The objects
** on the caller's stack stay reachable and are not touched.
*/
void odbL_gc_external(lua_State *L, double bytes) {
  double kb = bytes / 1024.0;
  if (!(bytes >= GC_MIN_BYTES) || !lua_gc(L, LUA_GCISRUNNING)) return;
  lua_gc(L, LUA_GCSTEP, kb < (double)(INT_MAX / 2) ? (int)kb : INT_MAX / 2);
}
