/*
 * Linked into the PostgreSQL module only (queue_load.c loads it): its
 * build, which the loader checks before it takes the module's
 * queue_pg_ops, since the table and struct queue are laid out as the
 * build that compiled them laid them out.
 */
#include "queue/queue_int.h"

extern const struct queue_module_abi queue_module_abi;
const struct queue_module_abi queue_module_abi = QUEUE_MODULE_ABI_INIT;
