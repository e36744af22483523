/*
 * What tests call directly of the spawnd client: production reaches each
 * only through its own flush. Only tests and the files defining these
 * include this (scripts/check-exports.py).
 */

#ifndef WARREN_SPAWND_CLIENT_TESTAPI_H
#define WARREN_SPAWND_CLIENT_TESTAPI_H

#include <stddef.h>

#include "supervisor/spawnd_client.h"

/* Packets the socket did not take yet (they wait, in order, in the
 * client; no call blocks). */
size_t		 spawnd_client_queued(const struct spawnd_client *);

#endif
