"""Shared pieces of the peer scripts (jax_rk.py, torch_rk.py): the Butcher
tableaus of odebench's core/ode/odb_method.c, BRUSS2D's layout and initial
value as core/ode/problems/bruss2d.c has them, the command line and the one-line
JSON result that scenarios/gpu_bruss2d.lua reads."""
import argparse
import json
import math
import statistics
import sys
import time
from fractions import Fraction as Fr

# Exact rationals, rounded once to the nearest double: the same doubles as
# the C initializers a/b in core/ode/odb_method.c.
TABLEAUS = {
    "heun_euler": dict(
        c=[0, 1], A=[[], [1]], b=[Fr(1, 2), Fr(1, 2)], bhat=[1, 0], fsal=False),
    "bs3": dict(
        c=[0, Fr(1, 2), Fr(3, 4), 1],
        A=[[], [Fr(1, 2)], [0, Fr(3, 4)], [Fr(2, 9), Fr(1, 3), Fr(4, 9)]],
        b=[Fr(2, 9), Fr(1, 3), Fr(4, 9), 0],
        bhat=[Fr(7, 24), Fr(1, 4), Fr(1, 3), Fr(1, 8)], fsal=True, q=2),
    "rk4": dict(
        c=[0, Fr(1, 2), Fr(1, 2), 1],
        A=[[], [Fr(1, 2)], [0, Fr(1, 2)], [0, 0, 1]],
        b=[Fr(1, 6), Fr(1, 3), Fr(1, 3), Fr(1, 6)], bhat=None, fsal=False),
    "dopri5": dict(
        c=[0, Fr(1, 5), Fr(3, 10), Fr(4, 5), Fr(8, 9), 1, 1],
        A=[[], [Fr(1, 5)], [Fr(3, 40), Fr(9, 40)],
           [Fr(44, 45), Fr(-56, 15), Fr(32, 9)],
           [Fr(19372, 6561), Fr(-25360, 2187), Fr(64448, 6561), Fr(-212, 729)],
           [Fr(9017, 3168), Fr(-355, 33), Fr(46732, 5247), Fr(49, 176),
            Fr(-5103, 18656)],
           [Fr(35, 384), 0, Fr(500, 1113), Fr(125, 192), Fr(-2187, 6784),
            Fr(11, 84)]],
        b=[Fr(35, 384), 0, Fr(500, 1113), Fr(125, 192), Fr(-2187, 6784),
           Fr(11, 84), 0],
        bhat=[Fr(5179, 57600), 0, Fr(7571, 16695), Fr(393, 640),
              Fr(-92097, 339200), Fr(187, 2100), Fr(1, 40)], fsal=True, q=4),
    "verner65": dict(
        c=[0, Fr(1, 6), Fr(4, 15), Fr(2, 3), Fr(5, 6), 1, Fr(1, 15), 1],
        A=[[], [Fr(1, 6)], [Fr(4, 75), Fr(16, 75)],
           [Fr(5, 6), Fr(-8, 3), Fr(5, 2)],
           [Fr(-165, 64), Fr(55, 6), Fr(-425, 64), Fr(85, 96)],
           [Fr(12, 5), -8, Fr(4015, 612), Fr(-11, 36), Fr(88, 255)],
           [Fr(-8263, 15000), Fr(124, 75), Fr(-643, 680), Fr(-81, 250),
            Fr(2484, 10625), 0],
           [Fr(3501, 1720), Fr(-300, 43), Fr(297275, 52632), Fr(-319, 2322),
            Fr(24068, 84065), 0, Fr(3850, 26703)]],
        b=[Fr(3, 40), 0, Fr(875, 2244), Fr(23, 72), Fr(264, 1955), 0,
           Fr(125, 11592), Fr(43, 616)],
        bhat=[Fr(13, 160), 0, Fr(2375, 5984), Fr(5, 16), Fr(12, 85),
              Fr(3, 44), 0, 0], fsal=False, q=5),
}


def terms(row):
    """The nonzero (index, coefficient) pairs of a row, as doubles."""
    return [(q, float(Fr(v)) if not isinstance(v, float) else v)
            for q, v in enumerate(row) if v != 0]


def plan(method):
    """Per stage the terms of its argument, then those of ynew and of the
    estimate b - bhat (None without bhat), and whether F_last is F_0 of the
    next step."""
    t = TABLEAUS[method]
    a = [terms(row) for row in t["A"]]
    b = terms(t["b"])
    e = None
    if t["bhat"] is not None:
        # b_q - bhat_q in double, as erk_plan_make forms it
        e = terms([float(Fr(x)) - float(Fr(y))
                   for x, y in zip(t["b"], t["bhat"])])
    return a, b, e, t["fsal"]


def lc(terms_, F):
    """sum c_q F_q in index order, as the CPU's erk_lc sums."""
    acc = None
    for q, c in terms_:
        acc = c * F[q] if acc is None else acc + c * F[q]
    return acc


def make_step(method, rhs, maximum, sqrt_mean_sq, atol, rtol):
    """One RK step (y, f0, h) -> (ynew, f0_next, err) in any array library.
    FSAL methods take f0 = f(y) from the last step (its F_last), like the
    engine's drivers; the others evaluate it. err is the weighted RMS norm."""
    a, b, e, fsal = plan(method)
    s = len(a)

    def step(y, f0, h):
        F = [f0 if fsal else rhs(y)]
        for l in range(1, s):
            F.append(rhs(y + h * lc(a[l], F) if a[l] else y))
        ynew = y + h * lc(b, F)
        fnext = F[-1] if fsal else f0
        if e is None:
            return ynew, fnext, ynew[0] * 0.0
        E = h * lc(e, F)
        sk = atol + rtol * maximum(abs(y), abs(ynew))
        return ynew, fnext, sqrt_mean_sq(E / sk)
    return step


def make_adaptive_body(method, step, t1, where, isfinite, minimum, maximum,
                       safety=0.9, fac_min=0.2, fac_max=5.0):
    """The loop body of an adaptive integration from 0 to t1 with the
    engine's I controller (core/ode/odb_solver.c: adaptive_step, step_factor;
    the same defaults), written with array selects so that the whole loop
    stays on the device (lax.while_loop): state (t, h_next, y, f, capped,
    attempts, accepted). A rejection keeps y and caps the next factor at 1
    until an attempt is accepted; a rest below 1e-14 t1 merges."""
    expo = -1.0 / (TABLEAUS[method]["q"] + 1)
    eps = 1e-14 * abs(t1)

    def body(st):
        t, hn, y, f, capped, att, acc = st
        h = minimum(hn, t1 - t)
        yn, fn, err = step(y, f, h)
        fin = isfinite(err)
        ok = fin & (err <= 1.0)
        cap = where(ok, where(capped, 1.0, fac_max), 1.0)
        fac = where(err > 0, minimum(cap, maximum(fac_min,
                                                  safety * err ** expo)), cap)
        fac = where(fin, fac, fac_min)
        tn = where(ok, t + h, t)
        tn = where(ok & (t1 - tn < eps), t1, tn)
        return (tn, h * fac, where(ok, yn, y), where(ok, fn, f), ~ok,
                att + 1, acc + ok.astype(att.dtype))
    return body


def bruss_rhs(N, alpha, cat, stack):
    """f(y) of BRUSS2D for any array framework: y interleaved U, V with the
    second grid index fastest; Neumann boundary through mirrored
    neighbours. cat(arrays, axis) joins along an axis, stack(arrays) along
    a new last one (jnp.concatenate / torch.cat, jnp.stack / torch.stack)."""
    c = alpha * float(N - 1) * float(N - 1)

    def mirror(X):
        X = cat([X[1:2], X, X[-2:-1]], 0)
        return cat([X[:, 1:2], X, X[:, -2:-1]], 1)

    def rhs(y):
        g = y.reshape(N, N, 2)
        U, V = g[..., 0], g[..., 1]
        Um, Vm = mirror(U), mirror(V)
        lu = Um[:-2, 1:-1] + Um[2:, 1:-1] + Um[1:-1, :-2] + Um[1:-1, 2:] - 4.0 * U
        lv = Vm[:-2, 1:-1] + Vm[2:, 1:-1] + Vm[1:-1, :-2] + Vm[1:-1, 2:] - 4.0 * V
        uuv = U * U * V
        fu = 1.0 + uuv - 4.4 * U + c * lu
        fv = 3.4 * U - uuv + c * lv
        return stack([fu, fv]).reshape(-1)
    return rhs


def bruss_initial_lists(N):
    """U_ij = 0.5 + j h, V_ij = 0.5 + i h with h = 1/(N-1), as rows."""
    hg = 1.0 / (N - 1)
    return [0.5 + j * hg for j in range(N)], [0.5 + i * hg for i in range(N)]


def args(name):
    p = argparse.ArgumentParser(description=f"BRUSS2D RK step with {name}")
    p.add_argument("--method", default="dopri5", choices=sorted(TABLEAUS))
    p.add_argument("--N", type=int, default=2896)
    p.add_argument("--alpha", type=float, default=2e-3)
    p.add_argument("--h", type=float, default=0.0,
                   help="step size (default 1/(8 c + 10), c = alpha (N-1)^2)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--t1", type=float, default=0.0,
                   help="also integrate adaptively from 0 to t1 (first step "
                        "h) with the controller on the device (0: not)")
    a = p.parse_args()
    if a.h <= 0:
        a.h = 1.0 / (8 * a.alpha * (a.N - 1) ** 2 + 10)
    return a


def run(name, version, device, a, step, y0, f0, sync, total, extra=None):
    """Warm-up steps, then a.steps steps from y0 each timed with a device
    synchronisation, then a.steps steps timed with one at the end; prints
    one JSON line (with extra's fields). total(y) gives sum(y) for the
    checksum."""
    y, f = y0, f0
    for _ in range(a.warmup):
        y, f, err = step(y, f, a.h)
    sync(err)
    y, f = y0, f0
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        y, f, err = step(y, f, a.h)
        sync(err)
        times.append(time.perf_counter() - t0)
    checksum = total(y)
    y, f = y0, f0
    t0 = time.perf_counter()
    for _ in range(a.steps):
        y, f, err = step(y, f, a.h)
    sync(err)
    t_async = (time.perf_counter() - t0) / a.steps
    print(json.dumps({
        "peer": name, "version": version, "device": device,
        "method": a.method, "N": a.N, "n": 2 * a.N * a.N, "h": a.h,
        "steps": a.steps, "time_per_step": statistics.median(times),
        "time_per_step_min": min(times), "time_per_step_async": t_async,
        "checksum": checksum, "err_last": float(err), **(extra or {})}))
    sys.stdout.flush()
