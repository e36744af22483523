/*
 * What tests call directly of the store: production reaches each only
 * through store_run_finish and the writer thread's own batches. Only
 * tests and the files defining these include this
 * (scripts/check-exports.py).
 */

#ifndef WARREN_STORE_TESTAPI_H
#define WARREN_STORE_TESTAPI_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/store.h"

/* Before store_writer_start(); ignored after. */
void		 store_set_batch_max(struct store *st, size_t rows);
/* Commit everything written so far and wait for it: 0, or -1 when a
 * write was lost (store_lost says what). */
int		 store_sync(struct store *st);
int		 store_run_end(struct store *st, int64_t run,
		    enum store_run_status status, const char *result);

/* A new file's schema at exactly this version, in its own transaction
 * (tests build old files with it). */
int		 store_schema_create(sqlite3 *db, int version, char **errmsg);

#endif
