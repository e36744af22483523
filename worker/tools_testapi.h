/*
 * What tests call directly of the tools: production reaches each only
 * through tools_run_batch and tool_open. Only tests and the files
 * defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_TOOLS_TESTAPI_H
#define WARREN_TOOLS_TESTAPI_H

#include <sys/types.h>

#include "worker/tools.h"

/* tools.c */
/* Run one tool. Returns 0 with res filled (a tool failure is a result
 * with is_error set, text saying what failed), -1 only on ENOMEM. */
int	tools_run(const struct tool_ctx *ctx, const char *name,
	    const char *args, struct tool_result *res);
/* Whether name may run concurrently with other parallel calls. */
int	tools_parallel_safe(const char *name);

/* tool_path.c */
/* The fallback of tool_open (exposed for its tests). */
int	tool_open_walk(const struct tool_ctx *ctx, const char *rel, int flags,
	    mode_t mode);
/* Tests: make tool_open always take the fallback. */
void	tool_path_force_fallback(int on);

/* tool_file.c */
/* Tests: skip the look before the open, as when the file is swapped
 * between the two (the check on the opened descriptor must hold alone). */
void	tool_file_skip_look(int on);

#endif
