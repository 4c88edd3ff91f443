/* par.c - parallel loops over contiguous parts for the sparse assembly and
** conversions: a team of threads (core/rt/odb_team.h) made for the call and
** stopped after it, so that nothing stays spinning between matrices. */
#include <stdlib.h>
#include <unistd.h>
#include "odb_team.h"
#include "par.h"

/* n >= 0, min_per >= 1. */
int odb_sparse_par_parts(long n, long min_per)
{
  long p = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("ODEBENCH_SPARSE_THREADS");
  if (env && atoi(env) > 0) p = atoi(env);
  if (p > 64) p = 64;
  if (min_per < 1) min_per = 1;
  if (p > n / min_per) p = n / min_per;
  return p < 1 ? 1 : (int)p;
}

typedef struct par_job { long n; int parts; odb_sparse_part_fn fn; void *arg; } par_job;

/* Member tid runs part tid. */
static void par_member(odb_team *team, int tid, void *arg)
{
  par_job *j = arg;
  long lo, hi;
  (void)team;
  odb_team_range(j->n, j->parts, tid, &lo, &hi);
  j->fn(j->arg, tid, j->parts, lo, hi);
}

/* parts >= 1; fn must not fail (it reports through its arg). */
void odb_sparse_par_for(long n, int parts, odb_sparse_part_fn fn, void *arg)
{
  par_job j = {n, parts, fn, arg};
  odb_team *team = NULL;
  if (parts > 1 && odb_team_create(NULL, NULL, parts, ODB_BARRIER_CENTRAL, &team) == ODB_OK &&
      odb_team_run(team, par_member, &j) == ODB_OK) {
    odb_team_destroy(team);
    return;
  }
  if (team) odb_team_destroy(team);
  odb_clear_error();
  for (int q = 0; q < parts; q++) {   /* no team: the parts one after another */
    long lo, hi;
    odb_team_range(n, parts, q, &lo, &hi);
    fn(arg, q, parts, lo, hi);
  }
}
