/* odebench.h - the public C interface of libodebench (no Lua, CUDA or curses). */
#ifndef ODEBENCH_H
#define ODEBENCH_H

#include "odb_status.h"
#include "odb_version.h"
#include "odb_size.h"
#include "odb_rng.h"
#include "odb_event.h"
#include "odb_topo.h"
#include "odb_backend.h"
#include "odb_ctx.h"
#include "odb_param.h"
#include "odb_problem.h"
#include "odb_method.h"
#include "odb_solver.h"
#include "odb_json.h"
#include "odb_results.h"
#include "odb_sha256.h"
#include "odb_bandwidth.h"
#include "odb_team.h"
#include "odb_space.h"
#include "odb_measure.h"
#include "odb_tune_types.h"
#include "odb_tuner.h"
#include "odb_tunedb.h"
#include "odb_tune_solver.h"
#include "odb_blockmodel.h"
#include "odb_online.h"
#include "odb_stepcheck.h"
#include "odb_sparse.h"
#include "odb_batched.h"

#endif
