"""dist_driver.py - what the drivers of the distributed scenarios share.

Not a driver itself (meson runs none of it alone): dist_variants.py,
dist_ranks.py, dist_tune_ranks.py, dist_sparse.py and dist_sparse_gpu.py
import it from their own folder and hand their checks to main():

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dist_driver as D
    ...
    if __name__ == "__main__":
        sys.exit(D.main(checks, "odb_dsparse_"))

Each of those drivers takes ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
[ITS OWN...] (tests/mpi/meson.build), runs `mpirun --oversubscribe -n
RANKS odebench --ui none --out DIR scenario.lua`, reads the scenario's line
"<stem>: N checks passed on R rank(s)" and prints TAP; meson reads only the
exit status: 0, 1 when a check failed, 77 (skipped).
"""
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77


def skip_without_mpi(have_mpi, mpirun, why="built without MPI"):
    """SKIP when the build has no MPI (HAVE_MPI 0) or there is no mpirun:
    prints the TAP plan of a skip and returns 77; None otherwise."""
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP " + why)
        return SKIP
    return None


def mpi_env(**extra):
    """This environment for mpirun: Open MPI allowed to run as root (the CI
    runs as root), ODEBENCH_MPI_ALL_OUTPUT unset (stdout is then rank 0's
    only, which the drivers read), and extra on top."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **extra)
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    return env


def temp_dir(prefix):
    """A with-block's new temporary folder (prefix odb_...), removed with
    all it holds when the block ends, however it ends."""
    return tempfile.TemporaryDirectory(prefix=prefix,
                                       ignore_cleanup_errors=True)


class Run:
    """What meson passed the driver, and where its runs write.

    odebench, mpirun, ranks (a string, as mpirun and the scenarios' lines
    write it), sdir (this folder), more (the driver's own arguments after
    SCENARIO_DIR); tmp, the temporary folder of the driver's runs; env,
    the environment of its runs."""

    def __init__(self, argv, tmp, env):
        self.odebench, self.mpirun, _, self.ranks, self.sdir = argv[1:6]
        self.more = argv[6:]
        self.tmp = tmp
        self.env = env

    def scenario(self, name):
        """The path of scenario name in this folder."""
        return os.path.join(self.sdir, name)

    def out(self, name):
        """The output folder name under tmp (--out)."""
        return os.path.join(self.tmp, name)

    def run(self, out, scenario, extra=(), env=None, timeout=300, tries=1,
            ranks=None):
        """mpirun() of scenario on the ranks (or ranks), its output folder
        self.out(out), in self.env (or env)."""
        return mpirun(self.mpirun, self.ranks if ranks is None else ranks,
                      self.odebench, self.out(out), scenario,
                      self.env if env is None else env, extra, timeout, tries)


def main(checks, prefix, why="built without MPI", **env):
    """A driver's exit status: 77 and the TAP skip in a build without MPI
    or without mpirun (why says so), else checks(Run) in a new temporary
    folder (prefix), removed when checks returns or raises; env: more
    variables for mpirun (mpi_env)."""
    argv = sys.argv
    skip = skip_without_mpi(argv[3], argv[2], why)
    if skip:
        return skip
    with temp_dir(prefix) as tmp:
        return checks(Run(argv, tmp, mpi_env(**env)))


def mpirun(mpirun_path, ranks, odebench, out, scenario, env, extra=(),
           timeout=300, tries=1):
    """The CompletedProcess of `mpirun --oversubscribe -n RANKS odebench
    --ui none --out OUT SCENARIO EXTRA...` (text stdout and stderr).

    tries > 1: a run that mpirun itself ended by a signal (negative status)
    is run again, up to tries runs in all: Open MPI 4.1.4's mpirun now and
    then dies of SIGSEGV after an MPI_Abort (docs/mpi.md)."""
    cmd = [mpirun_path, "--oversubscribe", "-n", str(ranks), odebench,
           "--ui", "none", "--out", out, scenario] + list(extra)
    for _ in range(tries):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=timeout)
        if p.returncode >= 0:
            break
    return p


def passed(stem, text, more=""):
    """The match of the scenario's line "<stem>: N checks passed on R
    rank(s)<more>" in text (group 1: N, group 2: R, then more's groups), or
    None."""
    return re.search(re.escape(stem) +
                     r": (\d+) checks passed on (\d+) rank\(s\)" + more, text)


class Tap:
    """TAP lines numbered in order: ok(good, what) prints "ok N - what" or
    "not ok N - what" and counts the failures; status() is the exit status
    (1 when one failed, else 0)."""

    def __init__(self, plan=None):
        self.n = 0
        self.failed = 0
        if plan is not None:
            print("1..%d" % plan)

    def ok(self, good, what):
        self.n += 1
        self.failed += 0 if good else 1
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, what))
        return good

    def status(self):
        return 1 if self.failed else 0


def diag(text, most=None):
    """text as TAP comment lines ("# " each), the first most of them."""
    for line in text.splitlines()[:most]:
        print("# " + line)
