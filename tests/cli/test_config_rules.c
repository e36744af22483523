/*
 * What a project's .warren/config may set, over the real key tables
 * (issue 31): every key `warren run` declares (its own, the LLM's, the
 * queue's: cmd_run_declare), read back with config_key_at, never a list
 * kept here.
 *
 * - CONFIG_NOPROJECT: a project file setting it is refused (the load
 *   fails, naming the key) and the user's value stands.
 * - CONFIG_LOWER: above the user's value (or the default) it is ignored;
 *   below, taken; 0 where 0 means "no limit" (CONFIG_ZEROINF) over a
 *   user's nonzero limit is ignored, and where it does not, 0 is the
 *   lowest and taken; a key whose help says 0 is "no limit" must be
 *   CONFIG_ZEROINF.
 * - Any other key must be one a project may set, named below with why,
 *   so that a key added later is classified before this passes.
 * Values go in as project.c puts them: config_load_text of the file's
 * text, "key = value" lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "common/config_testapi.h"

/* Keys that are neither limits nor where the key or files go: a project
 * may set them to anything. */
static const char *const free_keys[][2] = {
	{ "model", "which model the project's tasks need" },
	{ "summary_model", "likewise for summaries" },
	{ "temperature", "sampling, not a limit" },
	{ "backoff", "the first wait; backoff_max bounds every wait" },
	{ "stream", "how answers arrive" },
	{ "tool_mode", "how tools are called" },
	{ "summary_result_max", "when a result is summarised, not a limit" },
	{ "summary_transcript_max", "likewise for transcripts" },
	{ "cow", "how the layer is made; workspace_mode decides whether" },
};

static struct config *
rules_config(void)
{
	struct config	*c;

	assert_non_null(c = config_new());
	if (cmd_run_declare(c) == -1)
		fail_msg("cmd_run_declare: %s", config_error(c));
	return c;
}

/* "key = value\n" as a file of src; config_load_text's result. */
static int
rules_load(struct config *c, const char *key, const char *value,
    enum config_source src)
{
	char	text[512];

	snprintf(text, sizeof(text), "%s = %s\n", key, value);
	return config_load_text(c, text, strlen(text), src ==
	    CONFIG_SRC_PROJECT ? "/ws/.warren/config" : "/home/u/config", src);
}

/* Where a key's value came from, by the file rules_load named. */
static enum config_source
rules_source(const struct config *c, const char *name)
{
	const char	*w = config_where(c, name);

	if (strncmp(w, "/ws/.warren/config", 18) == 0)
		return CONFIG_SRC_PROJECT;
	if (strncmp(w, "/home/u/config", 14) == 0)
		return CONFIG_SRC_USER;
	return CONFIG_SRC_DEFAULT;
}

/* A limit's value in the key's unit (count, ms, bytes) as file text. */
static void
rules_text(const struct config_key *k, double num, char *buf, size_t sz)
{
	snprintf(buf, sz, k->type == CONFIG_DURATION ? "%.0fms" : "%.0f", num);
}

/* The value a run reads, in the key's unit. */
static double
rules_num(const struct config *c, const struct config_key *k)
{
	switch (k->type) {
	case CONFIG_DURATION:
		return (double)config_ms(c, k->name);
	case CONFIG_SIZE:
		return (double)config_bytes(c, k->name);
	case CONFIG_UINT:
		return (double)config_uint(c, k->name);
	case CONFIG_NUMBER:
		return config_number(c, k->name);
	case CONFIG_STRING:
	case CONFIG_BOOL:
	case CONFIG_ENUM:
	case CONFIG_LIST:
		break;
	}
	fail_msg("%s: a limit that is not a number", k->name);
	return 0;
}

/* Any value the key takes, as text. */
static const char *
rules_any(const struct config_key *k, char *buf, size_t sz)
{
	switch (k->type) {
	case CONFIG_STRING:
		return "https://elsewhere.example/v1";
	case CONFIG_LIST:
		return "X-Project: 1";
	case CONFIG_BOOL:
		return "true";
	case CONFIG_ENUM:
		return k->choices[1] != NULL ? k->choices[1] : k->choices[0];
	case CONFIG_UINT:
	case CONFIG_NUMBER:
	case CONFIG_DURATION:
	case CONFIG_SIZE:
		rules_text(k, k->max != 0 ? k->max : k->min + 1, buf, sz);
		return buf;
	}
	return "x";
}

/* A project file setting k is refused, and the user's value stands. */
static void
rules_noproject(const struct config_key *k)
{
	struct config	*c = rules_config();
	char		 buf[64], before[600];
	const char	*s;

	s = config_str(c, k->name);
	snprintf(before, sizeof(before), "%s", s != NULL ? s : "(none)");
	if (rules_load(c, k->name, rules_any(k, buf, sizeof(buf)),
	    CONFIG_SRC_PROJECT) != -1)
		fail_msg("%s: a project file set it", k->name);
	if (strstr(config_error(c), "never taken from a project's config") ==
	    NULL || strstr(config_error(c), k->name) == NULL)
		fail_msg("%s: refused with \"%s\"", k->name, config_error(c));
	assert_int_not_equal(rules_source(c, k->name), CONFIG_SRC_PROJECT);
	s = config_str(c, k->name);
	assert_string_equal(s != NULL ? s : "(none)", before);
	config_free(c);
}

/* User sets user_v (NULL: not at all), the project proj_v: the value a
 * run reads. */
static double
rules_after(const struct config_key *k, const char *user_v,
    const char *proj_v, enum config_source *src)
{
	struct config	*c = rules_config();
	double		 num;

	if (user_v != NULL && rules_load(c, k->name, user_v,
	    CONFIG_SRC_USER) == -1)
		fail_msg("%s = %s in the user's file: %s", k->name, user_v,
		    config_error(c));
	if (rules_load(c, k->name, proj_v, CONFIG_SRC_PROJECT) == -1)
		fail_msg("%s = %s in a project file: %s", k->name, proj_v,
		    config_error(c));
	num = rules_num(c, k);
	*src = rules_source(c, k->name);
	config_free(c);
	return num;
}

/* Does the help say 0 is no limit? */
static int
rules_zero_is_none(const struct config_key *k)
{
	return k->help != NULL && (strstr(k->help, "0 = no") != NULL ||
	    strstr(k->help, "0: no") != NULL || strstr(k->help, "0 = none") !=
	    NULL);
}

/* Over the user's value and the default, a project only lowers k. */
static void
rules_lower(const struct config_key *k)
{
	enum config_source	 src;
	double			 lo, hi, mid, def;
	char			 tlo[64], thi[64], tmid[64], tup[64];
	struct config		*c = rules_config();

	def = rules_num(c, k);
	config_free(c);
	lo = k->min > 1 ? k->min : 1;
	hi = k->max != 0 ? k->max : lo * 1e6;
	mid = lo + (double)(uint64_t)((hi - lo) / 2);
	assert_true(lo < mid && mid < hi);
	rules_text(k, lo, tlo, sizeof(tlo));
	rules_text(k, mid, tmid, sizeof(tmid));
	rules_text(k, hi, thi, sizeof(thi));
	rules_text(k, mid + 1, tup, sizeof(tup));

	if (rules_after(k, tmid, thi, &src) != mid || src != CONFIG_SRC_USER)
		fail_msg("%s: the user's %s raised to the project's %s",
		    k->name, tmid, thi);
	if (rules_after(k, tmid, tup, &src) != mid || src != CONFIG_SRC_USER)
		fail_msg("%s: the user's %s raised by one to %s", k->name, tmid,
		    tup);
	/* The boundary: the same value is no raise, and the project's. */
	if (rules_after(k, tmid, tmid, &src) != mid || src !=
	    CONFIG_SRC_PROJECT)
		fail_msg("%s: the project's %s, the user's own value, not "
		    "taken (ignored as a raise)", k->name, tmid);
	if (rules_after(k, tmid, tlo, &src) != lo || src != CONFIG_SRC_PROJECT)
		fail_msg("%s: the project's %s did not lower the user's %s",
		    k->name, tlo, tmid);
	/* No user value: the default is the limit. */
	if (k->def != NULL && !(def == 0 && (k->flags & CONFIG_ZEROINF)) &&
	    def < hi && rules_after(k, NULL, thi, &src) != def)
		fail_msg("%s: the project's %s raised the default %s", k->name,
		    thi, k->def);
	if (rules_zero_is_none(k) != !!(k->flags & CONFIG_ZEROINF))
		fail_msg("%s: its help (\"%s\") and CONFIG_ZEROINF disagree on "
		    "whether 0 is no limit", k->name, k->help);
	if (k->flags & CONFIG_ZEROINF) {
		if (rules_after(k, tmid, "0", &src) != mid)
			fail_msg("%s: a project's 0 (no limit) lifted the "
			    "user's %s", k->name, tmid);
		if (def != 0 && rules_after(k, NULL, "0", &src) != def)
			fail_msg("%s: a project's 0 (no limit) lifted the "
			    "default %s", k->name, k->def);
		if (rules_after(k, "0", tmid, &src) != mid)
			fail_msg("%s: the project's %s did not limit the "
			    "user's none", k->name, tmid);
	} else if (k->min == 0 && rules_after(k, tmid, "0", &src) != 0)
		fail_msg("%s: 0, the lowest, not taken", k->name);
}

static int
rules_is_free(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof(free_keys) / sizeof(free_keys[0]); i++)
		if (strcmp(free_keys[i][0], name) == 0)
			return 1;
	return 0;
}

/* A free key: a project sets it. */
static void
rules_free(const struct config_key *k)
{
	enum config_source	 src;
	struct config		*c = rules_config();
	char			 buf[64];

	if (rules_load(c, k->name, rules_any(k, buf, sizeof(buf)),
	    CONFIG_SRC_PROJECT) == -1)
		fail_msg("%s: %s", k->name, config_error(c));
	src = rules_source(c, k->name);
	assert_int_equal(src, CONFIG_SRC_PROJECT);
	config_free(c);
}

static void
test_every_key(void **state)
{
	const struct config_key	*k;
	struct config		*c = rules_config();
	size_t			 i, noproj = 0, lower = 0, zeroinf = 0;

	(void)state;
	for (i = 0; (k = config_key_at(c, i)) != NULL; i++) {
		if (k->flags & CONFIG_NOPROJECT) {
			rules_noproject(k);
			noproj++;
		} else if (k->flags & CONFIG_LOWER) {
			rules_lower(k);
			lower++;
			zeroinf += (k->flags & CONFIG_ZEROINF) != 0;
		} else if (rules_is_free(k->name))
			rules_free(k);
		else
			fail_msg("%s is neither CONFIG_NOPROJECT nor CONFIG_LOWER:"
			    " say in free_keys why a project may set it, or "
			    "flag it", k->name);
	}
	print_message("%zu keys: %zu a project may not set, %zu it may only "
	    "lower (%zu where 0 is no limit)\n", i, noproj, lower, zeroinf);
	/* The tables as they are (a test over no keys passes nothing). */
	assert_true(noproj >= 10);
	assert_true(lower >= 15);
	assert_true(zeroinf >= 2);
	config_free(c);
}

/*
 * Precedence, which the rules above rest on: within one source the later
 * value is the one taken (a file naming a key twice, a flag given twice),
 * a stronger source replaces a weaker one and a weaker one never replaces
 * a stronger. Fails with config_set's `src < v->src` made `<=` (the first
 * of two values kept) or `>` (a file over a flag).
 */
static void
test_precedence(void **state)
{
	static const char	 twice[] = "model = first\nmodel = second\n";
	struct config		*c = rules_config();

	(void)state;
	assert_int_equal(config_load_text(c, twice, strlen(twice),
	    "/home/u/config", CONFIG_SRC_USER), 0);
	assert_string_equal(config_str(c, "model"), "second");
	assert_string_equal(config_where(c, "model"), "/home/u/config:2");
	assert_int_equal(config_set(c, "model", "flag1", CONFIG_SRC_FLAG,
	    "--model"), 0);
	assert_int_equal(config_set(c, "model", "flag2", CONFIG_SRC_FLAG,
	    "--model"), 0);
	assert_string_equal(config_str(c, "model"), "flag2");
	assert_int_equal(config_set(c, "model", "env", CONFIG_SRC_ENV,
	    "env WARREN_MODEL"), 0);
	assert_string_equal(config_str(c, "model"), "flag2");
	assert_string_equal(config_where(c, "model"), "--model");
	config_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_precedence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
