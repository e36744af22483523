/*
 * What tests call directly of the option tables: production reaches each
 * only through the --help and man page writers and each command's
 * getopt. Only tests and the files defining these include this
 * (scripts/check-exports.py).
 */

#ifndef WARREN_OPTTAB_TESTAPI_H
#define WARREN_OPTTAB_TESTAPI_H

#include "cli/opttab.h"

/* The getopt options of run (and resume) and of ask, for test_cli_help. */
const struct option *cmd_run_options(void);
const struct option *cmd_ask_options(void);

#endif
