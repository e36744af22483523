/*
 * The XDG base directories warren uses (common/xdg.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/xdg.h"

/* $VAR/warren if VAR is absolute, else $HOME/fallback/warren. */
static int
xdg_dir(const char *var, const char *fallback, char *out, size_t outsz)
{
	const char	*xdg, *home;
	int		 n;

	if ((xdg = getenv(var)) != NULL && *xdg == '/')
		n = snprintf(out, outsz, "%s/warren", xdg);
	else if ((home = getenv("HOME")) != NULL && *home == '/')
		n = snprintf(out, outsz, "%s/%s/warren", home, fallback);
	else {
		errno = ENOENT;
		return -1;
	}
	if (n < 0 || (size_t)n >= outsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
xdg_state_dir(char *out, size_t outsz)
{
	return xdg_dir("XDG_STATE_HOME", ".local/state", out, outsz);
}

int
xdg_config_dir(char *out, size_t outsz)
{
	return xdg_dir("XDG_CONFIG_HOME", ".config", out, outsz);
}
