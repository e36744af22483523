/*
 * What tests call directly of `warren mcp list`'s talk with a server:
 * production reaches each only through cmd_mcp_list. Only tests and the
 * file defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_CMD_MCP_LIST_TESTAPI_H
#define WARREN_CMD_MCP_LIST_TESTAPI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/buf.h"
#include "supervisor/mcp.h"

/* Write all of out to fd before end (clock_mono_ms); -1 with err. */
int	 mcp_list_write(int fd, struct buf *out, long long end, char *err,
	    size_t errsz);
/* The answer to request want read from fd before end: its result (the
 * caller frees *msgp), or NULL with err. */
json_t	*mcp_list_answer(int fd, struct mcp_lines *l, uint64_t want,
	    long long end, json_t **msgp, char *err, size_t errsz);

#endif
