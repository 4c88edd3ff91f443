"""BRUSS2D and one explicit RK step of odebench's tableaus in PyTorch
(torch.compile, float64) on the GPU: the peer of scenarios/gpu_bruss2d.lua.
Prints one JSON line (see rk_common.run).

    python3 scenarios/peers/torch_rk.py --method dopri5 --N 2896 --steps 20
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rk_common  # noqa: E402

import torch  # noqa: E402


def main():
    a = rk_common.args("PyTorch")
    dev = torch.device("cuda")
    rhs = rk_common.bruss_rhs(
        a.N, a.alpha, lambda xs, axis: torch.cat(xs, dim=axis),
        lambda xs: torch.stack(xs, dim=-1))
    step = torch.compile(rk_common.make_step(
        a.method, rhs, torch.maximum, lambda v: torch.sqrt(torch.mean(v * v)),
        a.tol, a.tol))
    u, v = rk_common.bruss_initial_lists(a.N)
    U = torch.tensor(u, dtype=torch.float64, device=dev)[None, :].expand(a.N, a.N)
    V = torch.tensor(v, dtype=torch.float64, device=dev)[:, None].expand(a.N, a.N)
    y0 = torch.stack([U, V], dim=-1).reshape(-1).contiguous()
    with torch.no_grad():
        f0 = rhs(y0)
        rk_common.run("torch", torch.__version__, torch.cuda.get_device_name(),
                      a, step, y0, f0, lambda x: torch.cuda.synchronize(),
                      lambda y: float(torch.sum(y)))


if __name__ == "__main__":
    main()
