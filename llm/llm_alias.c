/*
 * Model aliases: the short names Claude Code's agent files use (`model:
 * sonnet`) and the ids the endpoint takes. The user's model_aliases list
 * ("NAME=ID" lines, docs/configuration.md) comes first; under it, for the
 * anthropic provider only, the built-in table below. A name in neither is
 * sent as written. A project's .warren/config may not set the list
 * (CONFIG_NOPROJECT): an agent could otherwise send every turn to a model
 * of its choosing under a name the user reads as another.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "llm/llm_int.h"

/*
 * Claude Code's aliases and the Anthropic API's ids they stand for, from
 * Anthropic's models overview and Claude Code's model configuration page
 * (November 2025: Sonnet 4.5, Opus 4.5, Haiku 4.5). These undated ids
 * follow the newest snapshot of each version; a newer version needs a
 * line in the user's model_aliases, which overrides these.
 */
static const char *const llm_alias_anthropic[][2] = {
	{ "sonnet", "claude-sonnet-4-5" },
	{ "opus", "claude-opus-4-5" },
	{ "haiku", "claude-haiku-4-5" },
};

#define LLM_ALIAS_MAX	128	/* bytes of a name or an id */

/* NAME=ID: both non-empty, printable, without blanks. */
static int
llm_alias_ok(const char *s)
{
	const char	*eq = strchr(s, '='), *p;

	if (eq == NULL || eq == s || eq[1] == '\0' ||
	    strlen(s) > 2 * LLM_ALIAS_MAX)
		return 0;
	for (p = s; *p != '\0'; p++)
		if (!isgraph((unsigned char)*p) || (*p == '=' && p != eq))
			return 0;
	return 1;
}

int
llm_alias_load(struct llm_config *lc, const struct config *c, char *err,
    size_t errsz)
{
	const char *const	*v;
	size_t			 n, i;

	if ((n = config_list(c, "model_aliases", &v)) == 0)
		return 0;
	if ((lc->aliases = calloc(n, sizeof(*lc->aliases))) == NULL) {
		snprintf(err, errsz, "model_aliases: out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (!llm_alias_ok(v[i])) {
			snprintf(err, errsz, "model_aliases (%s): '%.100s' is "
			    "not NAME=ID (a model name, '=', the id to send "
			    "for it: sonnet=claude-sonnet-4-5)",
			    config_where(c, "model_aliases"), v[i]);
			return -1;
		}
		if ((lc->aliases[i] = strdup(v[i])) == NULL) {
			snprintf(err, errsz, "model_aliases: out of memory");
			return -1;
		}
		lc->naliases++;
	}
	return 0;
}

const char *
llm_alias_model(const struct llm_config *lc, const char *model)
{
	size_t	i, len;

	if (model == NULL)
		return NULL;
	len = strlen(model);
	for (i = lc->naliases; i > 0; i--)	/* the last line wins */
		if (strncmp(lc->aliases[i - 1], model, len) == 0 &&
		    lc->aliases[i - 1][len] == '=')
			return lc->aliases[i - 1] + len + 1;
	if (lc->provider != LLM_PROVIDER_ANTHROPIC)
		return model;
	for (i = 0; i < sizeof(llm_alias_anthropic) /
	    sizeof(llm_alias_anthropic[0]); i++)
		if (strcmp(llm_alias_anthropic[i][0], model) == 0)
			return llm_alias_anthropic[i][1];
	return model;
}
