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


def bruss_rhs(N, alpha):
    """f(y) of BRUSS2D: y interleaved U, V with the second grid index
    fastest; Neumann boundary through mirrored neighbours."""
    c = alpha * float(N - 1) * float(N - 1)

    def mirror(X):
        X = jnp.concatenate([X[1:2], X, X[-2:-1]], axis=0)
        return jnp.concatenate([X[:, 1:2], X, X[:, -2:-1]], axis=1)

    def rhs(y):
        g = y.reshape(N, N, 2)
        U, V = g[..., 0], g[..., 1]
        Um, Vm = mirror(U), mirror(V)
        lu = Um[:-2, 1:-1] + Um[2:, 1:-1] + Um[1:-1, :-2] + Um[1:-1, 2:] - 4.0 * U
        lv = Vm[:-2, 1:-1] + Vm[2:, 1:-1] + Vm[1:-1, :-2] + Vm[1:-1, 2:] - 4.0 * V
        uuv = U * U * V
        fu = 1.0 + uuv - 4.4 * U + c * lu
        fv = 3.4 * U - uuv + c * lv
        return jnp.stack([fu, fv], axis=-1).reshape(-1)
    return rhs


def main():
    a = rk_common.args("JAX")
    dev = jax.devices()[0]
    rhs = bruss_rhs(a.N, a.alpha)
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
