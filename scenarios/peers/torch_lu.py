"""Batched LU of small matrices in PyTorch (torch.linalg.lu_factor, float64)
on the GPU: the library peer of scenarios/blocktridiag.lua. For each block
size B it factors N random diagonally dominant B x B matrices (the same
kind odebench draws) and prints one JSON line

    {"peer": "torch", "B": 3, "N": ..., "seconds": ..., "seconds_nopiv": ...,
     "bytes": ..., "version": "...", "device": "..."}

seconds: the median of --reps timed calls (CUDA events, after a warm-up)
with partial pivoting, PyTorch's default; seconds_nopiv: with pivot=False.
bytes: reading and writing every matrix once (2 N B^2 8), the floor odebench
counts for its own LU.

    python3 scenarios/peers/torch_lu.py --blocks 3,5,10 --bytes 536870912
    python3 scenarios/peers/torch_lu.py --blocks 5 --n 100000 --reps 5
"""
import argparse
import json
import statistics
import sys

import torch


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--blocks", default="3,5,7,9,10,15",
                   help="block sizes B, comma-separated")
    p.add_argument("--n", type=int, default=0,
                   help="matrices per batch (0: from --bytes)")
    p.add_argument("--bytes", type=int, default=512 << 20,
                   help="bytes of matrices per batch when --n is 0")
    p.add_argument("--reps", type=int, default=10, help="timed calls")
    return p.parse_args()


def matrices(n, b, dev):
    """n random B x B matrices in [-1, 1), diagonal moved away from zero by
    B with its sign (strictly diagonally dominant)."""
    a = torch.rand((n, b, b), dtype=torch.float64, device=dev) * 2 - 1
    d = torch.diagonal(a, dim1=-2, dim2=-1)
    d += torch.where(d < 0, -float(b), float(b))
    return a


def timed(fn, a, reps):
    """Median seconds of reps calls of fn(a) after one warm-up call."""
    fn(a)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        fn(a)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3)
    return statistics.median(times)


def main():
    a = args()
    if not torch.cuda.is_available():
        print("torch_lu: no CUDA device for PyTorch", file=sys.stderr)
        sys.exit(2)
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name()
    with torch.no_grad():
        for b in [int(x) for x in a.blocks.split(",") if x.strip()]:
            n = a.n if a.n > 0 else max(1, a.bytes // (8 * b * b))
            m = matrices(n, b, dev)
            sec = timed(lambda x: torch.linalg.lu_factor(x), m, a.reps)
            try:
                nopiv = timed(lambda x: torch.linalg.lu_factor(x, pivot=False),
                              m, a.reps)
            except RuntimeError:       # builds without the unpivoted path
                nopiv = -1.0
            print(json.dumps({"peer": "torch", "B": b, "N": n,
                              "seconds": sec, "seconds_nopiv": nopiv,
                              "bytes": 2 * n * b * b * 8,
                              "version": torch.__version__,
                              "device": name}), flush=True)
            del m
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
