-- tsm_pick.lua: the kernel tsm_roofline.lua picks for one tall & skinny
-- shape on this card (tuned over the quick space, or taken from the tuning
-- database when that run stored it), printed as one line for
-- ncu_tsm.py (beside this file):
--
--   tsm_pick op=tsmttsm dtype=z M=64 N=64 K=8388608 token=m3w2x4g1r32s3lb0
--     config=mma=m16n8k8 ... evals=206 cached=206
--
-- K is tsm_roofline.lua's (rows / max(M, N)), so that both look up the
-- same entry of the tuning database.
--
--   odebench scenarios/tools/tsm_pick.lua --ui none --set M=64 --set N=64
local ob = require "odebench"

local op    = ob.param("op", "tsmttsm", "tsmttsm (C = A^T B) or tsmm (B = A C)")
local dtype = ob.param("dtype", "z", "d (real) or z (complex)")
local M     = ob.param("M", 64, "columns of A (1..64)")
local N     = ob.param("N", 64, "columns of B (1..64)")
local rows  = ob.param("rows", 2^29, "K = rows / max(M, N), as tsm_roofline.lua")
local space = ob.param("space", "quick", "quick or full")

if not ob.info().gpu then
  print("tsm_pick: no GPU in this run")
  return
end
local K = math.floor(rows / math.max(M, N))
local k <close> = ob.kernel(op, { M = M, N = N, K = K, dtype = dtype,
                                  space = space })
local info = k:info()
local token = info.config:match("%[([^%]]+)%]$")
if not token then
  error("tsm_pick: the configuration names no token: " .. info.config, 0)
end
print(string.format("tsm_pick op=%s dtype=%s M=%d N=%d K=%d token=%s "
                    .. "config=%s evals=%d cached=%d", op, dtype, M, N, K,
                    token, info.config:gsub(" %[[^%]]+%]$", ""):gsub(" ", "_"),
                    info.evals, info.cached))
ob.metric("evals", info.evals, "")
