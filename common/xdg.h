/*
 * Where warren keeps what it owns, outside every workspace:
 *
 *	state	$XDG_STATE_HOME/warren	(default ~/.local/state/warren):
 *		the run database, recorded cassettes, later the queue
 *	config	$XDG_CONFIG_HOME/warren	(default ~/.config/warren):
 *		the user's config file and agents/NAME.md
 *
 * An XDG variable that is not an absolute path is ignored, as the XDG base
 * directory spec says. Both return -1 (ENOENT) when neither the variable nor
 * $HOME gives a directory, (ENAMETOOLONG) when out is too small.
 */
#ifndef WARREN_XDG_H
#define WARREN_XDG_H

#include <stddef.h>

/* xdg.c */
int	xdg_state_dir(char *out, size_t outsz);
int	xdg_config_dir(char *out, size_t outsz);

#endif
