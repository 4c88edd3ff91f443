"""BRUSS2D and one explicit RK step of odebench's tableaus in JAX (jit,
float64) on the GPU: the peer of scenarios/gpu_bruss2d.lua. Prints one JSON
line (see rk_common.run).

    python3 scenarios/peers/jax_rk.py --method dopri5 --N 2896 --steps 20
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rk_common  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402


def main():
    a = rk_common.args("JAX")
    dev = jax.devices()[0]
    rhs = rk_common.bruss_rhs(
        a.N, a.alpha, lambda xs, axis: jnp.concatenate(xs, axis=axis),
        lambda xs: jnp.stack(xs, axis=-1))
    step = jax.jit(rk_common.make_step(
        a.method, rhs, jnp.maximum, lambda v: jnp.sqrt(jnp.mean(v * v)),
        a.tol, a.tol))
    u, v = rk_common.bruss_initial_lists(a.N)
    U = jnp.broadcast_to(jnp.asarray(u, dtype=jnp.float64)[None, :], (a.N, a.N))
    V = jnp.broadcast_to(jnp.asarray(v, dtype=jnp.float64)[:, None], (a.N, a.N))
    y0 = jax.device_put(jnp.stack([U, V], axis=-1).reshape(-1), dev)
    f0 = jax.jit(rhs)(y0)
    extra = adaptive(a, rhs, y0, f0) if a.t1 > 0 else {}
    rk_common.run("jax", jax.__version__, dev.device_kind, a, step, y0, f0,
                  lambda x: x.block_until_ready(),
                  lambda y: float(jnp.sum(y)), extra)


def adaptive(a, rhs, y0, f0):
    """An adaptive integration from 0 to a.t1 (first step a.h) in one
    jitted lax.while_loop: the step controller on the device, the way a JAX
    user (or diffrax) runs one. Compiled and run once, then timed over
    three runs (the best); the figures per attempt."""
    from jax import lax
    step = rk_common.make_step(a.method, rhs, jnp.maximum,
                               lambda v: jnp.sqrt(jnp.mean(v * v)), a.tol,
                               a.tol)
    body = rk_common.make_adaptive_body(a.method, step, a.t1, jnp.where,
                                        jnp.isfinite, jnp.minimum,
                                        jnp.maximum)
    run = jax.jit(lambda y, f: lax.while_loop(
        lambda st: st[0] < a.t1, body,
        (jnp.float64(0.0), jnp.float64(a.h), y, f, jnp.bool_(False),
         jnp.int64(0), jnp.int64(0))))
    out = run(y0, f0)
    out[2].block_until_ready()
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        out = run(y0, f0)
        out[2].block_until_ready()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    att = int(out[5])
    return {"adaptive_attempts": att, "adaptive_accepted": int(out[6]),
            "adaptive_time_per_attempt": best / att,
            "adaptive_checksum": float(jnp.sum(out[2]))}


if __name__ == "__main__":
    main()
