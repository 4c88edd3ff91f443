/*
** odebench_help.c - the program's own documentation: --help and
** `odebench help TOPIC`. docs/cli.md says the same at length (and is the
** source of the man page, odebench.1); tests/lua/cli_help_spec.lua checks
** that every topic prints and that the two name the same options.
*/
#include "odebench_cli.h"

#include <string.h>

#define PROG "odebench"

static const char usage_text[] =
"usage: " PROG " SCENARIO.lua [options] [-- args...]\n"
"       " PROG " SCENARIO.lua --params [--set KEY=VALUE ...] [--strict]\n"
"       " PROG " replay RUN_DIR [--speed X] [--ui MODE]\n"
"       " PROG " plot RUN_DIR [--out DIR] [--x COLUMN]\n"
"       " PROG " tunedb list|show|export|prune ...\n"
"       " PROG " info [--remeasure] | --list | --version | --help\n"
"       " PROG " help [TOPIC]\n"
"\n"
"Runs a Lua scenario against the odebench engine and writes results.json,\n"
"results.csv and events.jsonl (every progress event) into the output\n"
"directory.\n"
"\n"
"options:\n"
"  --set KEY=VALUE  override ob.param(\"KEY\", default) (repeatable); the\n"
"                   value takes the type of the default; a number may be\n"
"                   written 2^18, 16*2^20 or 1e6\n"
"  --strict         a --set that the scenario never reads is an error\n"
"                   (exit 2, nothing written)\n"
"  --params         list the scenario's parameters (name, default,\n"
"                   description) without running its work\n"
"  --measure K=V[,K=V...]  how every timing of the run repeats, over the\n"
"                   scenario's measure = {...}: warmup, min_reps, max_reps,\n"
"                   max_seconds, target_spread (e.g. min_reps=10,max_seconds=5)\n"
"  --out DIR        output directory (default runs/<date>-<time>-<scenario>)\n"
"  --ui MODE        auto, tui, plain or none (default auto); tui is the live\n"
"                   dashboard (keys: q stop and write results, p pause,\n"
"                   s skip a tuning configuration, tab, arrows, ? help;\n"
"                   NO_COLOR=1 turns colours off); plain prints a few\n"
"                   progress lines a second on stderr; none only errors and\n"
"                   the final line; auto is tui when stdin and stdout are\n"
"                   terminals and TERM is set and not dumb, else plain\n"
"  --quiet, -q      no ob.report tables and no final \"results in\" line\n"
"  --seed N         seed of ob.random and of randomized tuners (default 42)\n"
"  --dump-kernels DIR  write the CUDA C of every generated GPU kernel there\n"
"  --               the arguments after it go to the scenario (arg[1], ...)\n"
"\n"
"commands:\n"
"  replay RUN_DIR   shows a finished run (its events.jsonl) in the dashboard,\n"
"                   or as plain lines when not on a terminal\n"
"  plot RUN_DIR     PNG and SVG plots of the run with gnuplot\n"
"  tunedb           list, show, export and prune the tuning database\n"
"  info             CPU, caches, NUMA, GPU and memory bandwidth of this\n"
"                   machine (--remeasure measures the bandwidth again)\n"
"  --list           problems, methods, variants, kernels and backends\n"
"  help [TOPIC]     more on one thing; topics: run, list, info, replay,\n"
"                   plot, tunedb, params, env, exit\n"
"  --version        version, revision and compiler\n"
"  --help, -h       this text\n"
"\n"
"exit status: 0 ok, 1 failure, 2 bad input or scenario error,\n"
"130 interrupted (Ctrl-C or q in the dashboard), 143 SIGTERM, 129 SIGHUP:\n"
"the results finished so far are written (a second signal kills); a\n"
"scenario's os.exit(status) writes them too and exits with that status\n"
"('" PROG " help exit').\n";

static const char help_run[] =
PROG " SCENARIO.lua [options] [-- args...]\n"
"\n"
"Loads the scenario, runs it against the engine and writes results.json,\n"
"results.csv and events.jsonl into the output directory: at the end of a\n"
"successful run or after an interrupt, never after an error.\n"
"\n"
"  --set KEY=VALUE  overrides ob.param(\"KEY\", default); repeatable. The\n"
"                   value takes the type of the default: an integer default\n"
"                   takes whole numbers only (1e3 is 1000, 2.5 is refused),\n"
"                   a number may be a product of powers (2^18, 16*2^20,\n"
"                   3*1e6), a boolean default takes true, false, 1, 0. A\n"
"                   --set the scenario never reads is reported at the end\n"
"  --strict         ... and is an error: exit 2, nothing written\n"
"  --params         the parameters instead of a run ('" PROG " help params')\n"
"  --measure K=V[,K=V...]  how every timed row (s:integrate, the benches)\n"
"                   repeats, overriding the scenario's measure = {...}:\n"
"                   warmup (0..100 untimed runs first, default 1), min_reps\n"
"                   and max_reps (1..1000, default 3 and 25), max_seconds\n"
"                   (the budget, default 1), target_spread (stop once\n"
"                   (q3-q1)/median is at most this, default 0.02); rows get\n"
"                   median, q1, q3, reps, spread; repeatable\n"
"  --out DIR        the output directory (default\n"
"                   runs/<date>-<time>-<scenario>/); it must be writable\n"
"  --ui MODE        auto (default), tui, plain or none\n"
"  --quiet, -q      no ob.report tables and no final \"results in\" line\n"
"  --seed N         the seed of ob.random and of the randomized tuners\n"
"                   (default 42)\n"
"  --dump-kernels DIR  writes the CUDA C of every generated GPU kernel there\n"
"  --               the arguments after it go to the scenario as arg[1], ...\n"
"\n"
"Options may come before or after the scenario, written --set K=V or\n"
"--set=K=V; a long option may be shortened to a prefix that names only it.\n";

static const char help_list[] =
PROG " --list\n"
"\n"
"Prints the problems with their parameters (type, default, range, meaning),\n"
"the methods, the variants with their backend, the kernels of ob.kernel and\n"
"the backends, with a note on each backend that is not available and why.\n"
"The same is ob.list() in Lua.\n";

static const char help_info[] =
PROG " info [--remeasure]\n"
"\n"
"Prints the CPU, caches, NUMA nodes and GPU (or \"no GPU visible\" and the\n"
"driver's reason on the next line), the CPU's read and copy bandwidth for\n"
"1, 2, 4, ... threads and all cores (lines 'cpu bw'), the GPU's (lines\n"
"'gpu bw'), one core's FP64 multiply-add peak and the barrier costs per\n"
"thread count. The bandwidth is measured once per machine and device and\n"
"cached in $XDG_CACHE_HOME/odebench/bandwidth*.json (or ~/.cache/odebench/)\n"
"with the machine's fingerprint; a cached figure of another machine or\n"
"device, from before the last boot, or impossible (not finite, above a\n"
"bound or the GPU's peak) is refused with a warning and measured again.\n"
"--remeasure measures again and replaces the cached figures.\n";

static const char help_replay[] =
PROG " replay RUN_DIR [--speed X] [--ui MODE]\n"
"\n"
"Replays a finished run's events.jsonl in the dashboard, or as plain lines\n"
"when not on a terminal. --speed X plays X recorded seconds per second\n"
"(default 1 in the dashboard, no waiting as lines); s jumps ahead.\n";

static const char help_plot[] =
PROG " plot RUN_DIR [--out DIR] [--x COLUMN]\n"
"\n"
"Writes PNG and SVG plots with gnuplot into RUN_DIR/plots (or --out DIR):\n"
"first the plots the scenario named with ob.plot, then time per step, GB/s\n"
"and a roofline against the swept column (--x COLUMN, default n), the\n"
"tuning curve and a heatmap of the first two tuning parameters.\n";

static const char help_params[] =
PROG " SCENARIO.lua --params [--set KEY=VALUE ...] [--strict]\n"
"\n"
"Lists the parameters the scenario reads with ob.param(name, default,\n"
"\"description\"): name, default and description, and the value a --set\n"
"gives it. The scenario runs until its first call into the engine (anything\n"
"but ob.param, ob.list, ob.seed, ob.random and ob.outdir), which stops it:\n"
"no work is done and nothing is written. A parameter the scenario reads only\n"
"after that call is found in its text and listed without a default. With\n"
"--strict a --set that names no parameter is an error (exit 2): the way to\n"
"check a command line before a long run.\n";

static const char help_env[] =
"Environment variables odebench reads:\n"
"\n"
"  ODEBENCH_OUT, ODEBENCH_SET=\"k=v,k2=v2\", ODEBENCH_SEED, ODEBENCH_QUIET\n"
"                     the output directory, the --set values, the seed and\n"
"                     --quiet for a script under plain lua5.4\n"
"  ODEBENCH_DUMP_KERNELS=DIR  the same as --dump-kernels DIR\n"
"  ODEBENCH_KERNEL_CACHE=off  no disk cache of compiled GPU kernels\n"
"  ODEBENCH_CUDA_HOME  the CUDA toolkit whose headers generated kernels may\n"
"                     include (else CUDA_HOME)\n"
"  ODEBENCH_SPARSE_THREADS=N  threads of the sparse matrix assembly and\n"
"                     conversions (default: the online cores)\n"
"  ODEBENCH_PDL=0     no early launch of GPU steps, for every solver\n"
"  ODEBENCH_NORM_COPY=1  the GPU error norm comes back by a copy instead of\n"
"                     a note in mapped memory\n"
"  ODEBENCH_S2D_CLUSTER=N  the blocks of a gpu_stream2d cluster where\n"
"                     tiling.cluster is not given (compute capability 9.0+)\n"
"  ODEBENCH_S2D_PLAN=1  prints the gpu_stream2d layout picked\n"
"  ODEBENCH_ONCHIP_PLAN=1  prints the gpu_onchip layout picked (blocks, band\n"
"                     height, where the stages live)\n"
"  ODEBENCH_S2D_SYNC_EACH=1  a barrier every pass in gpu_stream2d's skew-2\n"
"                     kernels at lag 2, also on a star stencil (comparisons)\n"
"  ODEBENCH_TSM_NOFLUSH=1  no L2 flush before each timed run of a tall &\n"
"                     skinny race\n"
"  ODEBENCH_TSM_NORACE=1  the tall & skinny plan keeps the tuner's pick\n"
"                     without a race\n"
"  ODEBENCH_GEN_LINES=1  generated GPU kernels carry #line directives to the\n"
"                     generator's source lines, so that NVRTC's errors\n"
"                     point into gpu/ (changes every kernel's cache key)\n"
"  ODEBENCH_MPI=1     start MPI without mpirun (one rank); under mpirun it\n"
"                     starts by itself (docs/mpi.md)\n"
"  ODEBENCH_MPI_TIMEOUT=S  seconds a collective waits for the other ranks\n"
"                     before the run ends with an error (default 60)\n"
"  ODEBENCH_MPI_ALL_OUTPUT=1  every rank's stdout is shown, not rank 0's\n"
"                     only\n"
"  ODEBENCH_DEVICE=K  every rank uses GPU K (default: the rank's number\n"
"                     among its host's ranks, modulo the host's GPUs)\n"
"  ODEBENCH_GPU_HALO=mpi  mpi_gpu_stream2d sends its halos through MPI,\n"
"                     never by CUDA IPC peer copies\n"
"  ODEBENCH_GPU_LINK=off  GPU ranks of one host wait for each other through\n"
"                     their hosts, not on the devices (mpi_gpu_stream2d,\n"
"                     distributed matrices and their Krylov solvers)\n"
"  ODEBENCH_MPI_CUDA_AWARE=0  distributed matrices on GPU ranks exchange\n"
"                     through host buffers even with a CUDA-aware MPI\n"
"  ODEBENCH_DSPARSE_WHOLE=1  every rank builds the whole GH matrix before it\n"
"                     keeps its planes (default: its planes and their\n"
"                     neighbours only)\n"
"\n"
"and the common ones: XDG_CACHE_HOME and HOME (where the bandwidth cache,\n"
"the tuning database and the GPU kernel cache live), CUDA_HOME, TERM and\n"
"NO_COLOR (no colours in the dashboard).\n";

static const char help_exit[] =
"exit status:\n"
"  0    success\n"
"  1    a failure that is not the input's fault (results that cannot be\n"
"       written after the run, a machine that cannot be measured)\n"
"  2    bad input of any kind: an unknown option, name or value, a syntax\n"
"       or runtime error in the scenario, a missing file, an unwritable\n"
"       --out, an unused --set under --strict; no result file is written\n"
"  130  interrupted by Ctrl-C or q in the dashboard: the finished rows are\n"
"       written (a second Ctrl-C kills at once)\n"
"  143  SIGTERM, with the finished rows written\n"
"  129  SIGHUP, with the finished rows written\n"
"A scenario that calls os.exit(status) has its finished rows written and\n"
"exits with that status.\n";

const char odb_cli_help_topics[] =
  "run, list, info, replay, plot, tunedb, params, env, exit";

void odb_cli_usage(FILE *f) {
  fputs(usage_text, f);
}

int odb_cli_help(const char *topic) {
  static const struct { const char *name, *text; } topics[] = {
    {"run", help_run}, {"list", help_list}, {"info", help_info},
    {"replay", help_replay}, {"plot", help_plot}, {"params", help_params},
    {"env", help_env}, {"exit", help_exit},
  };
  if (!topic) {
    odb_cli_usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(topic, "tunedb") == 0) {
    odb_cli_tunedb_usage(stdout);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof topics / sizeof topics[0]; ++i) {
    if (strcmp(topic, topics[i].name) == 0) {
      fputs(topics[i].text, stdout);
      return EXIT_OK;
    }
  }
  fprintf(stderr, PROG ": no help topic '%s' (topics: %s)\n", topic,
          odb_cli_help_topics);
  return EXIT_USAGE;
}
