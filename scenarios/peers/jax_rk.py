"""BRUSS2D and one explicit RK step of odebench's tableaus in JAX (jit,
float64) on the GPU: the peer of scenarios/gpu_bruss2d.lua. Prints one JSON
line (see rk_common.run).

    python3 scenarios/peers/jax_rk.py --method dopri5 --N 2896 --steps 20
"""
import os
import sys

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
    rk_common.run("jax", jax.__version__, dev.device_kind, a, step, y0, f0,
                  lambda x: x.block_until_ready(),
                  lambda y: float(jnp.sum(y)))


if __name__ == "__main__":
    main()
