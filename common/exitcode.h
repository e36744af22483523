/*
 * Exit codes of the warren command, documented in docs/warren.1.
 * `warren sandbox exec` forwards its command's status instead, and uses
 * 125-127 for its own failures the way env(1) and timeout(1) do.
 */
#ifndef WARREN_EXITCODE_H
#define WARREN_EXITCODE_H

enum warren_exit {
	WARREN_EXIT_OK = 0,		/* the task completed */
	WARREN_EXIT_FAIL = 1,		/* the task ran and failed (fail(), limits);
					   apply found conflicts */
	WARREN_EXIT_USAGE = 2,		/* bad command line; a run with no layer
					   left to diff/apply/discard */
	WARREN_EXIT_CONFIG = 3,		/* bad configuration, profile or key file */
	WARREN_EXIT_LLM = 4,		/* the LLM endpoint failed after retries */
	WARREN_EXIT_SANDBOX = 5,	/* a required sandbox layer is unavailable */
	WARREN_EXIT_STORE = 6,		/* the database could not be used */
	WARREN_EXIT_INTERNAL = 70,	/* a bug or an unrecoverable system error */
	WARREN_EXIT_INTERRUPTED = 130,	/* cancelled by SIGINT or SIGTERM */

	/* warren-worker only, read by the supervisor: its CPU limit ran out. */
	WARREN_EXIT_WORKER_CPU = 24,

	WARREN_EXIT_EXEC_FAILED = 125,	/* sandbox exec: warren itself failed */
	WARREN_EXIT_EXEC_NOEXEC = 126,	/* sandbox exec: command not executable */
	WARREN_EXIT_EXEC_NOTFOUND = 127,/* sandbox exec: command not found */
};

#endif
