/*
 * Generic configuration: declared keys, values from four sources.
 *
 * Each component declares its keys once (a table of struct config_key:
 * name, type, bounds, environment variable, default, help), then the
 * command loads the sources in any order; a value from a stronger source
 * is never replaced by one from a weaker source:
 *
 *	flag  >  environment  >  a resumed run's stored parameters  >
 *	a trusted project's .warren/config  >
 *	$XDG_CONFIG_HOME/warren/config  >  default
 *
 * A project file is written by whoever controls the workspace, agents
 * included: keys that decide where the API key goes or which files warren
 * reads and writes (CONFIG_NOPROJECT) are refused there, and limits
 * (CONFIG_LOWER) may only go down from the user's (project.c says when a
 * project file is read at all).
 *
 * File format (docs/configuration.md): UTF-8 text, one `key = value` per
 * line, `#` starts a comment (outside double quotes), blank lines ignored,
 * a value may be "double quoted" (\" \\ \n \t inside) to keep spaces or a
 * '#'. A list key (CONFIG_LIST) may appear several times: the values add
 * up within one source. Unknown keys, bad values and out-of-range numbers
 * are errors naming file:line and the key. Every value is checked against
 * its type when it is set, so getters cannot fail on a declared key.
 */
#ifndef WARREN_CONFIG_H
#define WARREN_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum config_type {
	CONFIG_STRING = 0,
	CONFIG_UINT,		/* decimal, within [min, max] */
	CONFIG_NUMBER,		/* floating point, within [min, max] */
	CONFIG_BOOL,		/* true/false, yes/no, on/off, 1/0 */
	CONFIG_ENUM,		/* one of choices[] */
	CONFIG_DURATION,	/* "30s", "500ms", "2m", "1h", "7d"; bare = seconds; kept in ms */
	CONFIG_SIZE,		/* "16M", "512k", bare bytes */
	CONFIG_LIST,		/* repeated key, one string per line */
};

/* Where a value came from, weakest first. */
enum config_source {
	CONFIG_SRC_DEFAULT = 0,
	CONFIG_SRC_USER,	/* $XDG_CONFIG_HOME/warren/config */
	CONFIG_SRC_PROJECT,	/* a trusted WORKSPACE/.warren/config */
	CONFIG_SRC_RUN,		/* the stored parameters of a resumed run */
	CONFIG_SRC_ENV,
	CONFIG_SRC_FLAG,
};

/* Key flags. */
#define CONFIG_NOFILE	0x01	/* refused in files (secrets: use a key file) */
#define CONFIG_SECRET	0x02	/* never printed by config_dump */
#define CONFIG_MASKHDR	0x04	/* "Name: value" list: config_dump shows
				   the name only (the value is often a
				   credential: Authorization, x-api-key) */
#define CONFIG_NOPROJECT 0x08	/* refused in a project's file: endpoint,
				   headers, key file, paths */
#define CONFIG_LOWER	0x10	/* a limit: a project's file may lower it,
				   never raise it (ignored, with a warning) */
#define CONFIG_ZEROINF	0x20	/* with CONFIG_LOWER: 0 means no limit */
#define CONFIG_URL	0x40	/* a URL: config_dump shows it masked
				   (urlmask.h) */

struct config_key {
	const char		*name;		/* "model", "max_depth" */
	enum config_type	 type;
	const char		*env;		/* "WARREN_MODEL", or NULL */
	const char		*def;		/* default as text, or NULL */
	double			 min, max;	/* numbers; both 0 = unbounded */
	const char *const	*choices;	/* CONFIG_ENUM: NULL-terminated */
	int			 flags;
	const char		*help;		/* one line for docs and --help */
};

struct config;

/* config.c */
struct config	*config_new(void);
void		 config_free(struct config *c);
/*
 * Declare keys. The table must outlive c. -1 (EEXIST) if a name is
 * already declared, (EINVAL) for a bad default.
 */
int		 config_declare(struct config *c, const struct config_key *keys,
		    size_t n);
/*
 * Set one value from a source; `where` names it in messages ("--model",
 * "file:12"). -1 with config_error() set on an unknown key or bad value.
 * A weaker source than the current value's is ignored (returns 0).
 */
int		 config_set(struct config *c, const char *name, const char *value,
		    enum config_source src, const char *where);
/* The same from a file's text already read; name names it in errors. */
int		 config_load_text(struct config *c, const char *text,
		    size_t len, const char *name, enum config_source src);
/* The user's file and the environment (a project's file, trusted, is
 * loaded between the two with config_load_text: project.c). */
int		 config_load_standard(struct config *c);
/* The last error (file:line: key: what), valid until the next call. */
const char	*config_error(const struct config *c);

/* Getters for declared keys; NULL/0 when unset without default. */
const char	*config_str(const struct config *c, const char *name);
uint64_t	 config_uint(const struct config *c, const char *name);
double		 config_number(const struct config *c, const char *name);
int		 config_bool(const struct config *c, const char *name);
/* A duration as CONFIG_DURATION reads it, in milliseconds: 0 or -1. */
int		 config_parse_duration(const char *s, double *ms);
/* CONFIG_DURATION in milliseconds, CONFIG_SIZE in bytes. */
uint64_t	 config_ms(const struct config *c, const char *name);
uint64_t	 config_bytes(const struct config *c, const char *name);
/* A size: bytes, or with K, M, G or T (KB, KiB ...: powers of 1024), at
 * most 1e15; the one parser of every size warren reads (config, --disk-max,
 * sandbox exec --rlimit). 0, or -1 if s is not one. */
int		 config_parse_size(const char *s, double *bytes);
/* CONFIG_LIST: the values, borrowed until the key is set again. */
size_t		 config_list(const struct config *c, const char *name,
		    const char *const **values);
/* Is the key set by anything but its default? */
int		 config_isset(const struct config *c, const char *name);
/* "default", "env WARREN_MODEL", "--model", "/path/config:3". Borrowed. */
const char	*config_where(const struct config *c, const char *name);
/* Print every key as `key = value  # where` (secrets shown as set/unset). */
void		 config_dump(const struct config *c, FILE *f);
/* The user file path ($XDG_CONFIG_HOME/warren/config); static buffer. */

#endif
