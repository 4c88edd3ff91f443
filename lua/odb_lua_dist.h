/* odb_lua_dist.h - the run across ranks seen from a scenario
   (odb_lua_dist.c): ob.allreduce, ob.bcast, ob.barrier. */
#ifndef ODB_LUA_DIST_H
#define ODB_LUA_DIST_H

#include "lua.h"

int odbL_allreduce(lua_State *L);
int odbL_bcast(lua_State *L);
int odbL_barrier(lua_State *L);
int odbL_gpu_halo_path(lua_State *L);

#endif
