"""stop_runs.py - the runs of dist_sparse_stop.py and dist_ode_stop.py: a
scenario under mpirun stopped with SIGTERM inside its exchanges, and the
TAP checks that no rank crashed; signal_when, the stop itself, also serves
mpi_driver.py's SIGINT case.

A scenario for these prints "<name>: N checks passed on R rank(s)" on rank
0's stdout, then "looping" on stderr, and repeats its sequence until
stopped. mpirun runs it with the shared-memory single copy off, so that
messages travel in fragments delivered by whoever progresses MPI,
MPI_Finalize included: a buffer freed under an open request shows as a
sanitizer report (the ASan build) or a segfault.
"""
import os
import re
import signal
import subprocess
import time

CRASH = re.compile(r"AddressSanitizer|Failing at address|Segmentation fault|Signal: \d+|runtime error:")


def stop_env():
    """The ranks' environment: root allowed, a 30 s MPI timeout, rank 0's
    output only."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ODEBENCH_MPI_TIMEOUT="30")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    return env


def signal_when(p, marker, sig, delay, timeout, give_up=200):
    """Reads p's stderr (a text pipe) until a line holds marker, it ends or
    give_up s pass; waits delay s, sends sig and collects the rest (timeout
    s, then a kill). Returns (returncode, stdout, the whole stderr)."""
    err_lines = []
    t0 = time.time()
    for line in p.stderr:
        err_lines.append(line)
        if marker in line or time.time() - t0 > give_up:
            break
    time.sleep(delay)
    p.send_signal(sig)
    try:
        so, se = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate()
    return p.returncode, so, "".join(err_lines) + se


def stopped_run(mpirun, ranks, odebench, scen, out, env, delay):
    """Runs scen until rank 0 says "looping", waits delay s, sends SIGTERM."""
    cmd = [mpirun, "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none",
           "-n", ranks, odebench, "--ui", "none", "--out", out, scen]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return signal_when(p, "looping", signal.SIGTERM, delay, 120)


class Tap:
    """Numbered TAP lines; a failed one is followed by up to 40 lines of
    what the run printed."""

    def __init__(self, plan):
        self.n = 0
        self.bad = 0
        print("1..%d" % plan)

    def ok(self, good, text, dump=""):
        self.n += 1
        self.bad += not good
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, text))
        if not good and dump:
            for line in dump.splitlines()[:40]:
                print("# " + line)


def check_stops(tap, mpirun, ranks, odebench, scen, name, checks, tmp, env, delays):
    """Three checks a delay: rank 0's checks line and "stopped by SIGTERM",
    no crash in any rank's output, mpirun's status 0 or 1."""
    for i, delay in enumerate(delays):
        rc, so, se = stopped_run(mpirun, ranks, odebench, scen,
                                 os.path.join(tmp, "%s%d" % (name, i)), env, delay)
        both = so + se
        tap.ok(re.search(r"%s: %d checks passed on %s rank\(s\)" % (name, checks, ranks), so) is not None
               and "odebench: stopped by SIGTERM" in se,
               "stopped after %.1f s: rank 0's %d checks, then 'stopped by SIGTERM'" % (delay, checks),
               both)
        m = CRASH.search(both)
        tap.ok(m is None, "stopped after %.1f s: no sanitizer report, segfault or signal (%s)"
               % (delay, m.group(0) if m else "none"), both)
        tap.ok(rc in (0, 1), "stopped after %.1f s: mpirun's status %d is 0 or 1" % (delay, rc), both)
