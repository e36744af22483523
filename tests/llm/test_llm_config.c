/*
 * The generic config loader (file format, errors at file:line, source
 * precedence), the LLM keys and presets on top of it, and the API key:
 * read from the environment or a key file, then scrubbed in place.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "common/config_testapi.h"
#include "llm/llm_int.h"

static char tmpdir[64];

static const char *
tmpfile_with(const char *name, const char *text, int mode)
{
	static char	path[256];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	chmod(path, (mode_t)mode);
	return path;
}

static struct config *
llm_config_new(void)
{
	struct config	*c;

	assert_non_null(c = config_new());
	assert_int_equal(llm_config_declare(c), 0);
	return c;
}

static void
test_file_format(void **state)
{
	struct config		*c = llm_config_new();
	const char		*path;
	const char *const	*v;
	char			 where[300];

	(void)state;
	path = tmpfile_with("ok.conf",
	    "# a comment\n"
	    "\n"
	    "  model = gpt-x   # trailing comment\n"
	    "base_url=\"http://127.0.0.1:9/v1\"\n"
	    "header = X-A: 1\n"
	    "header = \"X-B: has # hash\"\n"
	    "timeout = 1.5m\n"
	    "idle_timeout = 250ms\n"
	    "max_response = 2M\n"
	    "stream = no\r\n"
	    "temperature = 0.7\n", 0644);
	assert_int_equal(config_load_file(c, path, CONFIG_SRC_USER, 0), 0);
	assert_string_equal(config_str(c, "model"), "gpt-x");
	assert_string_equal(config_str(c, "base_url"), "http://127.0.0.1:9/v1");
	assert_int_equal(config_list(c, "header", &v), 2);
	assert_string_equal(v[0], "X-A: 1");
	assert_string_equal(v[1], "X-B: has # hash");
	assert_int_equal(config_ms(c, "timeout"), 90000);
	assert_int_equal(config_ms(c, "idle_timeout"), 250);
	assert_int_equal(config_bytes(c, "max_response"), 2 * 1024 * 1024);
	assert_false(config_bool(c, "stream"));
	assert_true(config_number(c, "temperature") == 0.7);
	/* Defaults hold where nothing was set. */
	assert_int_equal(config_uint(c, "retries"), 4);
	assert_string_equal(config_where(c, "retries"), "default");
	snprintf(where, sizeof(where), "%s:3", path);
	assert_string_equal(config_where(c, "model"), where);
	config_free(c);
}

static void
expect_error(const char *text, const char *needle)
{
	struct config	*c = llm_config_new();
	const char	*path;

	path = tmpfile_with("bad.conf", text, 0644);
	assert_int_equal(config_load_file(c, path, CONFIG_SRC_PROJECT, 0), -1);
	if (strstr(config_error(c), needle) == NULL)
		fail_msg("error '%s' lacks '%s'", config_error(c), needle);
	assert_non_null(strstr(config_error(c), path));
	config_free(c);
}

static void
test_file_errors(void **state)
{
	(void)state;
	expect_error("model = a\n\nmodle = b\n", "bad.conf:3: unknown key 'modle'");
	expect_error("timeout = soon\n", "bad.conf:1: timeout: 'soon' is not a "
	    "duration");
	expect_error("retries = 99\n", "outside 0..20");
	expect_error("retries = -1\n", "is not a whole number");
	expect_error("provider = gpt\n", "'gpt' is not one of: openai, anthropic");
	expect_error("just words\n", "bad.conf:1: expected 'key = value'");
	expect_error("model = \"open\n", "unterminated quote");
	expect_error("= x\n", "missing key");
	expect_error("model = \xff\xfe\n", "not valid UTF-8");
	/* A control character in the value is shown escaped. */
	expect_error("stream = \x1b[2J\n", "\\x1b[2J");
}

static void
test_precedence(void **state)
{
	struct config	*c = llm_config_new();

	(void)state;
	assert_int_equal(config_set(c, "model", "flag", CONFIG_SRC_FLAG,
	    "--model"), 0);
	assert_int_equal(config_set(c, "model", "env", CONFIG_SRC_ENV,
	    "environment WARREN_MODEL"), 0);
	assert_int_equal(config_set(c, "model", "ws", CONFIG_SRC_PROJECT,
	    "ws:1"), 0);
	assert_int_equal(config_set(c, "model", "user", CONFIG_SRC_USER,
	    "user:1"), 0);
	assert_string_equal(config_str(c, "model"), "flag");
	assert_string_equal(config_where(c, "model"), "--model");
	/* A project may lower a limit, never raise it. */
	assert_int_equal(config_set(c, "retries", "2", CONFIG_SRC_USER, "u:1"), 0);
	assert_int_equal(config_set(c, "retries", "3", CONFIG_SRC_PROJECT,
	    "w:1"), 0);
	assert_int_equal(config_uint(c, "retries"), 2);
	assert_int_equal(config_set(c, "retries", "1", CONFIG_SRC_PROJECT,
	    "w:2"), 0);
	assert_int_equal(config_uint(c, "retries"), 1);
	assert_string_equal(config_where(c, "retries"), "w:2");
	/* Against the default when the user set nothing (600s). */
	assert_int_equal(config_set(c, "timeout", "1h", CONFIG_SRC_PROJECT,
	    "w:3"), 0);
	assert_int_equal(config_ms(c, "timeout"), 600000);
	/* No default and unset: no limit to lower yet. */
	assert_int_equal(config_set(c, "max_tokens", "5000",
	    CONFIG_SRC_PROJECT, "w:4"), 0);
	assert_int_equal(config_uint(c, "max_tokens"), 5000);
	/* Where the key goes is never a project's to say. */
	assert_int_equal(config_set(c, "base_url", "http://127.0.0.1:1/v1",
	    CONFIG_SRC_PROJECT, "w:5"), -1);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(config_error(c), "never taken from a project"));
	assert_int_equal(config_set(c, "provider", "anthropic",
	    CONFIG_SRC_PROJECT, "w:6"), -1);
	assert_int_equal(config_set(c, "record", "/tmp/x", CONFIG_SRC_PROJECT,
	    "w:7"), -1);
	assert_int_equal(config_set(c, "header", "X: y", CONFIG_SRC_PROJECT,
	    "w:8"), -1);
	assert_int_equal(config_set(c, "api_key_file", "/k",
	    CONFIG_SRC_PROJECT, "w:9"), -1);
	/* The user may. */
	assert_int_equal(config_set(c, "base_url", "http://127.0.0.1:1/v1",
	    CONFIG_SRC_USER, "u:2"), 0);
	/* Lists: a stronger source replaces, the same source adds. */
	assert_int_equal(config_set(c, "header", "A: 1", CONFIG_SRC_USER, "u"), 0);
	assert_int_equal(config_set(c, "header", "B: 2", CONFIG_SRC_ENV, "e"), 0);
	assert_int_equal(config_set(c, "header", "C: 3", CONFIG_SRC_ENV, "e"), 0);
	{
		const char *const *v;

		assert_int_equal(config_list(c, "header", &v), 2);
		assert_string_equal(v[0], "B: 2");
	}
	/* The environment is read through the declared variables. */
	setenv("WARREN_TIMEOUT", "7s", 1);
	setenv("WARREN_HEADERS", "X-One: 1\nX-Two: 2\n", 1);
	assert_int_equal(config_load_env(c), 0);
	assert_int_equal(config_ms(c, "timeout"), 7000);
	assert_string_equal(config_where(c, "timeout"),
	    "environment WARREN_TIMEOUT");
	setenv("WARREN_TIMEOUT", "x", 1);
	assert_int_equal(config_load_env(c), -1);
	assert_non_null(strstr(config_error(c), "environment WARREN_TIMEOUT"));
	unsetenv("WARREN_TIMEOUT");
	unsetenv("WARREN_HEADERS");
	config_free(c);
}

/* The loader is generic: other components declare their own keys. */
static const char *const modes[] = { "fast", "safe", NULL };
static const struct config_key run_keys[] = {
	{ "max_depth", CONFIG_UINT, "WARREN_MAX_DEPTH", "3", 1, 16, NULL, 0,
	    "deepest delegation" },
	{ "mode", CONFIG_ENUM, NULL, "safe", 0, 0, modes, 0, "mode" },
	{ "token", CONFIG_STRING, "WARREN_TEST_TOKEN", NULL, 0, 0, NULL,
	    CONFIG_NOFILE | CONFIG_SECRET, "use the environment" },
};

static void
test_generic_keys(void **state)
{
	struct config	*c = llm_config_new();
	const char	*path;
	char		*buf = NULL;
	size_t		 len = 0;
	FILE		*mem;

	(void)state;
	assert_int_equal(config_declare(c, run_keys, 3), 0);
	assert_int_equal(config_declare(c, run_keys, 1), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(config_uint(c, "max_depth"), 3);
	path = tmpfile_with("run.conf", "max_depth = 5\nmode = fast\n", 0644);
	assert_int_equal(config_load_file(c, path, CONFIG_SRC_PROJECT, 0), 0);
	assert_int_equal(config_uint(c, "max_depth"), 5);
	assert_string_equal(config_str(c, "mode"), "fast");
	path = tmpfile_with("tok.conf", "token = abc\n", 0644);
	assert_int_equal(config_load_file(c, path, CONFIG_SRC_USER, 0), -1);
	assert_non_null(strstr(config_error(c), "not allowed in a config file"));
	assert_int_equal(config_set(c, "token", "s3cr3t", CONFIG_SRC_ENV, "env"),
	    0);
	/* A dump never shows a secret. */
	assert_non_null(mem = open_memstream(&buf, &len));
	config_dump(c, mem);
	fclose(mem);
	assert_null(strstr(buf, "s3cr3t"));
	assert_non_null(strstr(buf, "token = (set)"));
	assert_non_null(strstr(buf, "max_depth = 5"));
	free(buf);
	config_free(c);
}

/* --show-config names extra headers but never shows their values: they
 * are where a key for a custom gateway goes. */
static void
test_dump_headers(void **state)
{
	struct config	*c = llm_config_new();
	char		*buf = NULL;
	size_t		 len = 0;
	FILE		*mem;

	(void)state;
	assert_int_equal(config_set(c, "header", "x-api-key: sk-s3cr3t",
	    CONFIG_SRC_FLAG, "--header"), 0);
	assert_non_null(mem = open_memstream(&buf, &len));
	config_dump(c, mem);
	fclose(mem);
	assert_null(strstr(buf, "s3cr3t"));
	assert_non_null(strstr(buf, "header = x-api-key: (hidden)"));
	free(buf);
	config_free(c);
}

/* The base URL an anthropic config with base_url (NULL: none) loads. */
static void
llm_url_is(const char *provider, const char *base, const char *want)
{
	struct config		*c = llm_config_new();
	struct llm_config	 lc;
	char			 err[512];

	assert_int_equal(config_set(c, "provider", provider, CONFIG_SRC_FLAG,
	    "--provider"), 0);
	if (base != NULL)
		assert_int_equal(config_set(c, "base_url", base,
		    CONFIG_SRC_FLAG, "--base-url"), 0);
	if (llm_config_load(&lc, c, err, sizeof(err)) == -1)
		fail_msg("%s %s: %s", provider, base ? base : "-", err);
	assert_string_equal(lc.base_url, want);
	llm_config_free(&lc);
	config_free(c);
}

/* A base URL with or without /v1 (Anthropic's as its SDKs take it), and the
 * providers' own base URL variables where warren has no setting. */
static void
llm_load_urls(void)
{
	setenv("WARREN_API_KEY", "k", 1);
	llm_url_is("anthropic", "http://127.0.0.1:9", "http://127.0.0.1:9/v1");
	llm_url_is("anthropic", "http://h:9/", "http://h:9/v1");
	llm_url_is("anthropic", "http://h:9/v1/", "http://h:9/v1");
	llm_url_is("anthropic", "https://proxy/anthropic",
	    "https://proxy/anthropic/v1");
	/* Every provider: a bare host gets /v1, a path is kept as given. */
	llm_url_is("openai", "http://h:9", "http://h:9/v1");
	llm_url_is("responses", "http://h:9/", "http://h:9/v1");
	llm_url_is("ollama", "http://h:9/v1", "http://h:9/v1");
	llm_url_is("openai", "https://gw.example/v1beta/openai",
	    "https://gw.example/v1beta/openai");
	setenv("ANTHROPIC_BASE_URL", "http://a.example:1", 1);
	setenv("OPENAI_BASE_URL", "http://o.example:2/v1", 1);
	llm_url_is("anthropic", NULL, "http://a.example:1/v1");
	llm_url_is("openai", NULL, "http://o.example:2/v1");
	llm_url_is("responses", NULL, "http://o.example:2/v1");
	llm_url_is("ollama", NULL, "http://127.0.0.1:11434/v1");
	/* warren's own setting wins. */
	llm_url_is("anthropic", "http://w:3/v1", "http://w:3/v1");
	unsetenv("ANTHROPIC_BASE_URL");
	unsetenv("OPENAI_BASE_URL");
	unsetenv("WARREN_API_KEY");
}

static void
test_llm_load(void **state)
{
	struct config		*c = llm_config_new();
	struct llm_config	 lc;
	char			 err[512];
	char			*keyp;

	(void)state;
	unsetenv("WARREN_API_KEY");
	unsetenv("ANTHROPIC_API_KEY");
	assert_int_equal(config_set(c, "provider", "anthropic", CONFIG_SRC_FLAG,
	    "--provider"), 0);
	/* A hosted provider without a key is a configuration error. */
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no API key for anthropic"));
	assert_non_null(strstr(err, "ANTHROPIC_API_KEY"));

	setenv("ANTHROPIC_API_KEY", "sk-ant-abcdef", 1);
	setenv("OPENAI_API_KEY", "sk-other", 1);
	keyp = getenv("ANTHROPIC_API_KEY");
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), 0);
	assert_int_equal(lc.provider, LLM_PROVIDER_ANTHROPIC);
	assert_string_equal(lc.base_url, "https://api.anthropic.com/v1");
	assert_string_equal(lc.key, "sk-ant-abcdef");
	/* Every key variable is gone, its bytes overwritten in place. */
	assert_null(getenv("ANTHROPIC_API_KEY"));
	assert_null(getenv("OPENAI_API_KEY"));
	assert_int_equal(keyp[0], '\0');
	assert_int_equal(memcmp(keyp, "\0\0\0\0\0\0\0\0\0\0\0\0\0", 13), 0);
	llm_config_free(&lc);

	/* WARREN_API_KEY wins; a local preset needs no key. */
	config_free(c);
	c = llm_config_new();
	assert_int_equal(config_set(c, "provider", "ollama", CONFIG_SRC_ENV,
	    "environment WARREN_PROVIDER"), 0);
	assert_int_equal(config_set(c, "base_url", "http://localhost:11434/v1/",
	    CONFIG_SRC_FLAG, "--base-url"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), 0);
	assert_null(lc.key);
	assert_string_equal(lc.base_url, "http://localhost:11434/v1");
	assert_string_equal(lc.model, "llama3.1");
	llm_config_free(&lc);
	setenv("WARREN_API_KEY", "sk-w", 1);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), 0);
	assert_string_equal(lc.key, "sk-w");
	assert_null(getenv("WARREN_API_KEY"));
	llm_config_free(&lc);

	/* Bad values found at load time name where they came from. */
	assert_int_equal(config_set(c, "base_url", "ftp://x", CONFIG_SRC_FLAG,
	    "--base-url"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "base_url (--base-url)"));
	/* The URL in it masked (common/urlmask.h). */
	assert_int_equal(config_set(c, "base_url", "htps://u:p@SECRET@h/v1",
	    CONFIG_SRC_FLAG, "--base-url"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'htps://u:***@h/v1' is not an http"));
	assert_null(strstr(err, "SECRET"));
	assert_int_equal(config_set(c, "base_url", "http://x", CONFIG_SRC_FLAG,
	    "--base-url"), 0);
	assert_int_equal(config_set(c, "header", "Bad Header", CONFIG_SRC_FLAG,
	    "--header"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not 'Name: value'"));
	config_free(c);
	llm_load_urls();
	c = llm_config_new();
	assert_int_equal(config_set(c, "provider", "ollama", CONFIG_SRC_FLAG,
	    "f"), 0);
	assert_int_equal(config_set(c, "record", "a", CONFIG_SRC_FLAG,
	    "--record"), 0);
	assert_int_equal(config_set(c, "replay", "b", CONFIG_SRC_FLAG,
	    "--replay"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exclude each other"));
	config_free(c);
}

static void
test_key_file(void **state)
{
	char		*key, err[512];
	const char	*path;

	(void)state;
	path = tmpfile_with("key", "sk-from-file\n", 0600);
	setenv("WARREN_API_KEY", "sk-env", 1);
	assert_int_equal(llm_key_load(path, NULL, &key, err, sizeof(err)), 0);
	assert_string_equal(key, "sk-from-file");
	assert_null(getenv("WARREN_API_KEY"));	/* scrubbed all the same */
	freezero(key, strlen(key));

	path = tmpfile_with("key2", "sk with space\n", 0600);
	assert_int_equal(llm_key_load(path, NULL, &key, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "printable characters without spaces"));
	assert_null(strstr(err, "sk with"));	/* never echoed */

	path = tmpfile_with("key3", "line1\r\nInjected: yes\n", 0600);
	assert_int_equal(llm_key_load(path, NULL, &key, err, sizeof(err)), -1);

	assert_int_equal(llm_key_load("/nonexistent/key", NULL, &key, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/key"));

	/* A FIFO as the key file: refused at once, never waited on. */
	{
		char	fifo[300];

		snprintf(fifo, sizeof(fifo), "%s/keyfifo", tmpdir);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(llm_key_load(fifo, NULL, &key, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "not a regular file"));
		unlink(fifo);
	}

	setenv("WARREN_API_KEY", "bad\nkey", 1);
	assert_int_equal(llm_key_load(NULL, NULL, &key, err, sizeof(err)), -1);
	assert_null(getenv("WARREN_API_KEY"));
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/warren-cfgtest.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A copy owns every string: freeing both is not a double free (ASan),
 * and changing one leaves the other as it was. */
/* model_aliases: NAME=ID lines, the last for a name winning, over the
 * anthropic provider's built-in table; nothing built in for others; a
 * line that is not NAME=ID refused, naming it and where it was set; the
 * table survives llm_config_copy (the engine's copy is what maps). */
static void
test_model_aliases(void **state)
{
	struct config		*c;
	struct llm_config	 lc, cp;
	char			 err[512];

	(void)state;
	setenv("WARREN_API_KEY", "k", 1);
	c = llm_config_new();
	assert_int_equal(config_set(c, "provider", "anthropic",
	    CONFIG_SRC_FLAG, "--provider"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), 0);
	assert_string_equal(llm_alias_model(&lc, "sonnet"),
	    "claude-sonnet-4-5");
	assert_string_equal(llm_alias_model(&lc, "opus"), "claude-opus-4-5");
	assert_string_equal(llm_alias_model(&lc, "haiku"),
	    "claude-haiku-4-5");
	assert_string_equal(llm_alias_model(&lc, "claude-x-1"), "claude-x-1");
	assert_null(llm_alias_model(&lc, NULL));
	llm_config_free(&lc);
	assert_int_equal(config_load_text(c, "model_aliases = sonnet=a-1\n"
	    "model_aliases = son=b-2\nmodel_aliases = sonnet=c-3\n", 78,
	    "/u/config", CONFIG_SRC_USER), 0);
	setenv("WARREN_API_KEY", "k", 1);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), 0);
	assert_int_equal(llm_config_copy(&cp, &lc), 0);
	llm_config_free(&lc);
	assert_string_equal(llm_alias_model(&cp, "sonnet"), "c-3");
	assert_string_equal(llm_alias_model(&cp, "son"), "b-2");
	assert_string_equal(llm_alias_model(&cp, "so"), "so");
	assert_string_equal(llm_alias_model(&cp, "opus"), "claude-opus-4-5");
	llm_config_free(&cp);
	config_free(c);

	c = llm_config_new();
	assert_int_equal(config_set(c, "provider", "ollama", CONFIG_SRC_FLAG,
	    "--provider"), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), 0);
	assert_string_equal(llm_alias_model(&lc, "sonnet"), "sonnet");
	llm_config_free(&lc);
	assert_int_equal(config_load_text(c, "model_aliases = sonnet\n", 23,
	    "/u/config", CONFIG_SRC_USER), 0);
	assert_int_equal(llm_config_load(&lc, c, err, sizeof(err)), -1);
	if (strstr(err, "model_aliases (/u/config:1): 'sonnet' is not "
	    "NAME=ID") == NULL)
		fail_msg("%s", err);
	config_free(c);
	unsetenv("WARREN_API_KEY");
}

static void
test_copy(void **state)
{
	struct llm_config	 a, b;
	char			*h[] = { "X-One: 1", "Authorization: t" };

	(void)state;
	llm_config_init(&a);
	a.preset = strdup("openai");
	a.base_url = strdup("http://127.0.0.1:9/v1");
	a.model = strdup("m");
	a.summary_model = strdup("s");
	a.record = strdup("r.cassette");
	a.key = strdup("sk-copy");
	a.headers = calloc(2, sizeof(char *));
	a.headers[0] = strdup(h[0]);
	a.headers[1] = strdup(h[1]);
	a.nheaders = 2;
	a.retries = 7;
	a.temperature = 0.5;
	a.rpm = 600;
	a.tpm = 90000;
	a.rate_share = 1;
	assert_int_equal(llm_config_copy(&b, &a), 0);
	assert_int_equal(b.rpm, 600);
	assert_int_equal(b.tpm, 90000);
	assert_int_equal(b.rate_share, 1);
	assert_ptr_not_equal(b.key, a.key);
	assert_ptr_not_equal(b.headers, a.headers);
	assert_string_equal(b.key, "sk-copy");
	assert_string_equal(b.headers[1], "Authorization: t");
	assert_string_equal(b.record, "r.cassette");
	assert_null(b.replay);
	assert_int_equal(b.retries, 7);
	assert_true(b.temperature == 0.5);
	llm_config_free(&a);
	assert_string_equal(b.model, "m");
	llm_config_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_format),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_generic_keys),
		cmocka_unit_test(test_dump_headers),
		cmocka_unit_test(test_llm_load),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_model_aliases),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
