/*
 * The LLM client's configuration keys, provider presets, and the step
 * from a loaded generic config (common/config.h) to struct llm_config.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "llm/llm_int.h"

/* Names users type; each maps to a wire format and sensible defaults. */
struct llm_preset {
	const char		*name;
	enum llm_provider	 provider;
	const char		*base_url;
	const char		*model;
	const char		*keyenv;	/* provider's own key variable */
	int			 need_key;	/* at its default base URL */
	const char		*urlenv;	/* its SDKs' base URL variable */
};

static const struct llm_preset llm_presets[] = {
	{ "openai", LLM_PROVIDER_OPENAI, "https://api.openai.com/v1",
	    "gpt-4o-mini", "OPENAI_API_KEY", 1, "OPENAI_BASE_URL" },
	{ "anthropic", LLM_PROVIDER_ANTHROPIC, "https://api.anthropic.com/v1",
	    "claude-3-5-haiku-latest", "ANTHROPIC_API_KEY", 1,
	    "ANTHROPIC_BASE_URL" },
	{ "responses", LLM_PROVIDER_RESPONSES, "https://api.openai.com/v1",
	    "gpt-4o-mini", "OPENAI_API_KEY", 1, "OPENAI_BASE_URL" },
	{ "openrouter", LLM_PROVIDER_OPENAI, "https://openrouter.ai/api/v1",
	    "openai/gpt-4o-mini", "OPENROUTER_API_KEY", 1, NULL },
	{ "ollama", LLM_PROVIDER_OPENAI, "http://127.0.0.1:11434/v1",
	    "llama3.1", NULL, 0, NULL },
	{ "vllm", LLM_PROVIDER_OPENAI, "http://127.0.0.1:8000/v1",
	    "default", NULL, 0, NULL },
	{ "llamacpp", LLM_PROVIDER_OPENAI, "http://127.0.0.1:8080/v1",
	    "default", NULL, 0, NULL },
	{ "lmstudio", LLM_PROVIDER_OPENAI, "http://127.0.0.1:1234/v1",
	    "default", NULL, 0, NULL },
};

#define NPRESETS (sizeof(llm_presets) / sizeof(llm_presets[0]))

const char *
llm_preset_at(size_t i)
{
	return i < NPRESETS ? llm_presets[i].name : NULL;
}

static const char *const preset_names[] = {
	"openai", "anthropic", "responses", "openrouter", "ollama", "vllm",
	"llamacpp", "lmstudio", NULL
};

static const char *const tool_modes[] = { "native", "text", NULL };

static const struct config_key llm_keys[] = {
	{ "provider", CONFIG_ENUM, "WARREN_PROVIDER", "openai", 0, 0,
	    preset_names, CONFIG_NOPROJECT,
	    "wire format or preset of the LLM endpoint" },
	{ "base_url", CONFIG_STRING, "WARREN_BASE_URL", NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT | CONFIG_URL,
	    "endpoint URL without the API path (default: the provider's)" },
	{ "model", CONFIG_STRING, "WARREN_MODEL", NULL, 0, 0, NULL, 0,
	    "model name (default: the provider's)" },
	{ "summary_model", CONFIG_STRING, "WARREN_SUMMARY_MODEL", NULL, 0, 0,
	    NULL, 0, "model for summaries (default: model)" },
	{ "temperature", CONFIG_NUMBER, "WARREN_TEMPERATURE", NULL, 0, 2,
	    NULL, 0, "sampling temperature 0..2 (default: not sent)" },
	{ "max_tokens", CONFIG_UINT, "WARREN_MAX_TOKENS", NULL, 1, 1000000,
	    NULL, CONFIG_LOWER, "output token cap per answer (default: not "
	    "sent; anthropic 4096)" },
	{ "connect_timeout", CONFIG_DURATION, "WARREN_CONNECT_TIMEOUT", "10s",
	    100, 600000, NULL, CONFIG_LOWER, "TCP+TLS connect timeout" },
	{ "timeout", CONFIG_DURATION, "WARREN_TIMEOUT", "600s", 100, 86400000,
	    NULL, CONFIG_LOWER, "whole-attempt timeout" },
	{ "idle_timeout", CONFIG_DURATION, "WARREN_IDLE_TIMEOUT", "120s", 100,
	    86400000, NULL, CONFIG_LOWER,
	    "silence allowed once an answer has begun" },
	{ "retries", CONFIG_UINT, "WARREN_RETRIES", "4", 0, 20, NULL,
	    CONFIG_LOWER, "further attempts after a retryable failure" },
	{ "backoff", CONFIG_DURATION, "WARREN_BACKOFF", "500ms", 1, 600000,
	    NULL, 0, "first backoff; doubles per retry, with jitter" },
	{ "backoff_max", CONFIG_DURATION, "WARREN_BACKOFF_MAX", "60s", 1,
	    3600000, NULL, CONFIG_LOWER,
	    "longest single wait, Retry-After included" },
	/* Twice the default --jobs: every working agent may have a turn on
	 * the wire, plus the summaries of those that just finished (64
	 * agents under a cap of 32 took 2.56 times one agent's time). It is
	 * a ceiling: an endpoint's 429 halves the cap and its answers raise
	 * it again (llm_window.c), and its Retry-After is waited for. */
	{ "llm_concurrency", CONFIG_UINT, "WARREN_LLM_CONCURRENCY", "128", 1,
	    1024, NULL, CONFIG_LOWER, "LLM requests on the wire at once, at "
	    "most (a 429 lowers it for a while)" },
	{ "llm_rpm", CONFIG_UINT, "WARREN_LLM_RPM", "0", 0, 1000000, NULL,
	    CONFIG_NOPROJECT, "LLM requests a minute, shared by every run on "
	    "the queue's database (0: no limit)" },
	{ "llm_tpm", CONFIG_UINT, "WARREN_LLM_TPM", "0", 0, 1000000000,
	    NULL, CONFIG_NOPROJECT, "LLM tokens a minute, shared likewise "
	    "(0: no limit)" },
	{ "llm_rate_share", CONFIG_BOOL, "WARREN_LLM_RATE_SHARE", "false", 0,
	    0, NULL, CONFIG_NOPROJECT, "share 429 pauses with every run on "
	    "the queue's database (on with llm_rpm, llm_tpm, and in queue "
	    "jobs)" },
	{ "stream", CONFIG_BOOL, "WARREN_STREAM", "true", 0, 0, NULL, 0,
	    "ask for streamed (SSE) answers" },
	{ "tool_mode", CONFIG_ENUM, "WARREN_TOOL_MODE", "native", 0, 0,
	    tool_modes, 0, "native tool calling, or text for models without" },
	{ "max_response", CONFIG_SIZE, "WARREN_MAX_RESPONSE", "32M", 1024,
	    1073741824, NULL, CONFIG_LOWER,
	    "largest answer accepted, in bytes" },
	{ "header", CONFIG_LIST, "WARREN_HEADERS", NULL, 0, 0, NULL,
	    CONFIG_MASKHDR | CONFIG_NOPROJECT,
	    "extra HTTP header 'Name: value' (repeatable)" },
	{ "model_aliases", CONFIG_LIST, NULL, NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT, "a model name and the id sent for it, "
	    "'sonnet=claude-sonnet-4-5' (repeatable; over the built-in table)"
	    },
	{ "model_prices", CONFIG_LIST, NULL, NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT, "a model's price in US dollars per million "
	    "input and output tokens, 'claude-sonnet-4-5=3,15' (repeatable): "
	    "runs of it show their cost" },
	{ "api_key_file", CONFIG_STRING, "WARREN_API_KEY_FILE", NULL, 0, 0,
	    NULL, CONFIG_NOPROJECT, "file holding the API key" },
	{ "record", CONFIG_STRING, "WARREN_RECORD", NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT, "write every LLM exchange to this cassette" },
	{ "replay", CONFIG_STRING, "WARREN_REPLAY", NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT, "answer from this cassette, without network" },
};

void
llm_config_init(struct llm_config *lc)
{
	memset(lc, 0, sizeof(*lc));
	lc->provider = LLM_PROVIDER_OPENAI;
	lc->temperature = -1;
	lc->connect_timeout_ms = 10000;
	lc->timeout_ms = 600000;
	lc->idle_timeout_ms = 120000;
	lc->retries = 4;
	lc->backoff_ms = 500;
	lc->backoff_max_ms = 60000;
	lc->concurrency = 128;	/* the llm_concurrency default */
	lc->stream = 1;
	lc->tool_mode = LLM_TOOLS_NATIVE;
	lc->max_response = 32u * 1024 * 1024;
}

int
llm_config_declare(struct config *c)
{
	return config_declare(c, llm_keys, sizeof(llm_keys) /
	    sizeof(llm_keys[0]));
}

/*
 * Every field by name, never by a struct assignment: a pointer copied
 * with the struct would be freed twice. The size check stops a new field
 * from going uncopied (add it here and to llm_config_free).
 */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct llm_config) == 168,
    "a field was added to struct llm_config: copy it in llm_config_copy "
    "and free it in llm_config_free, then update this size");
#endif

static int
llm_config_dup(char **dst, const char *src)
{
	*dst = NULL;
	return src != NULL && (*dst = strdup(src)) == NULL ? -1 : 0;
}

int
llm_config_copy(struct llm_config *dst, const struct llm_config *src)
{
	size_t	i;

	memset(dst, 0, sizeof(*dst));
	dst->provider = src->provider;
	dst->temperature = src->temperature;
	dst->max_tokens = src->max_tokens;
	dst->connect_timeout_ms = src->connect_timeout_ms;
	dst->timeout_ms = src->timeout_ms;
	dst->idle_timeout_ms = src->idle_timeout_ms;
	dst->retries = src->retries;
	dst->backoff_ms = src->backoff_ms;
	dst->backoff_max_ms = src->backoff_max_ms;
	dst->concurrency = src->concurrency;
	dst->rpm = src->rpm;
	dst->tpm = src->tpm;
	dst->rate_share = src->rate_share;
	dst->stream = src->stream;
	dst->tool_mode = src->tool_mode;
	dst->max_response = src->max_response;
	if (llm_config_dup(&dst->preset, src->preset) == -1 ||
	    llm_config_dup(&dst->base_url, src->base_url) == -1 ||
	    llm_config_dup(&dst->model, src->model) == -1 ||
	    llm_config_dup(&dst->summary_model, src->summary_model) == -1 ||
	    llm_config_dup(&dst->record, src->record) == -1 ||
	    llm_config_dup(&dst->replay, src->replay) == -1 ||
	    llm_config_dup(&dst->key, src->key) == -1)
		goto nomem;
	if (src->nheaders > 0 && (dst->headers = calloc(src->nheaders,
	    sizeof(char *))) == NULL)
		goto nomem;
	for (i = 0; i < src->nheaders; i++) {
		if ((dst->headers[i] = strdup(src->headers[i])) == NULL)
			goto nomem;
		dst->nheaders++;
	}
	if (src->naliases > 0 && (dst->aliases = calloc(src->naliases,
	    sizeof(char *))) == NULL)
		goto nomem;
	for (i = 0; i < src->naliases; i++) {
		if ((dst->aliases[i] = strdup(src->aliases[i])) == NULL)
			goto nomem;
		dst->naliases++;
	}
	return 0;
nomem:
	llm_config_free(dst);
	return -1;
}

void
llm_config_free(struct llm_config *lc)
{
	size_t	i;

	free(lc->preset);
	free(lc->base_url);
	free(lc->model);
	free(lc->summary_model);
	/* A header may hold a credential (Authorization, x-api-key). */
	for (i = 0; i < lc->nheaders; i++)
		freezero(lc->headers[i], strlen(lc->headers[i]));
	free(lc->headers);
	for (i = 0; i < lc->naliases; i++)
		free(lc->aliases[i]);
	free(lc->aliases);
	free(lc->record);
	free(lc->replay);
	if (lc->key != NULL)
		freezero(lc->key, strlen(lc->key));
	memset(lc, 0, sizeof(*lc));
}

static const struct llm_preset *
llm_config_preset(const char *name)
{
	size_t	i;

	for (i = 0; i < NPRESETS; i++) {
		if (strcmp(name, llm_presets[i].name) == 0)
			return &llm_presets[i];
	}
	return &llm_presets[0];
}

/* "Name: value", a token name and a value without line breaks. */
static int
llm_config_header_ok(const char *h)
{
	const char	*p;

	for (p = h; *p != ':' && *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("!#$%&'*+-.^_`|~",
		    *p) == NULL)
			return 0;
	}
	if (*p != ':' || p == h)
		return 0;
	return strpbrk(h, "\r\n") == NULL;
}

static int
llm_config_strdup(char **dst, const char *s)
{
	if (s == NULL)
		return 0;
	return (*dst = strdup(s)) == NULL ? -1 : 0;
}

/*
 * Every provider's paths sit under /v1 (BASE/v1/chat/completions,
 * BASE/v1/messages, BASE/v1/responses). A base URL that is only a host
 * (http://host:port) gets the /v1, as its --help says; one with a path
 * is taken as given (a proxy's /openai/v1, a gateway's /v1beta/openai).
 * Anthropic's SDKs and Claude Code post to BASE/v1/messages, and their
 * base URLs (ANTHROPIC_BASE_URL) have no /v1 even under a path: there
 * it is added to any URL that does not end in /v1.
 */
static int
llm_config_url_v1(struct llm_config *lc)
{
	const char	*host = strstr(lc->base_url, "://") + 3;
	size_t		 len = strlen(lc->base_url);
	char		*v1;

	if (len >= 3 && strcmp(lc->base_url + len - 3, "/v1") == 0)
		return 0;
	if (lc->provider != LLM_PROVIDER_ANTHROPIC && strchr(host, '/') != NULL)
		return 0;
	if (asprintf(&v1, "%s/v1", lc->base_url) == -1)
		return -1;
	free(lc->base_url);
	lc->base_url = v1;
	return 0;
}

/* The base URL: warren's setting, else the provider's own variable
 * (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), else the preset's. */
static int
llm_config_url(struct llm_config *lc, const struct config *c,
    const struct llm_preset *pr, int *from_env, char *err, size_t errsz)
{
	const char	*url = config_str(c, "base_url");
	const char	*env = pr->urlenv != NULL ? getenv(pr->urlenv) : NULL;
	char		 where[96], shown[256];
	size_t		 len;

	snprintf(where, sizeof(where), "%s", config_where(c, "base_url"));
	if (url == NULL && env != NULL && *env != '\0') {
		url = env;
		snprintf(where, sizeof(where), "environment %s", pr->urlenv);
		*from_env = 1;
	} else if (url == NULL)
		url = pr->base_url;
	if (!str_has_prefix(url, "http://") && !str_has_prefix(url, "https://")) {
		urlmask(url, shown, sizeof(shown));
		snprintf(err, errsz, "base_url (%s): '%s' is not an http:// "
		    "or https:// URL", where, shown);
		return -1;
	}
	if (strpbrk(url, " \t\r\n") != NULL) {
		snprintf(err, errsz, "base_url (%s): spaces in the URL", where);
		return -1;
	}
	if ((lc->base_url = strdup(url)) == NULL)
		return -1;
	len = strlen(lc->base_url);
	while (len > 0 && lc->base_url[len - 1] == '/')
		lc->base_url[--len] = '\0';
	return llm_config_url_v1(lc);
}

static int
llm_config_headers(struct llm_config *lc, const struct config *c, char *err,
    size_t errsz)
{
	const char *const	*v;
	size_t			 n, i;

	n = config_list(c, "header", &v);
	if (n == 0)
		return 0;
	if ((lc->headers = calloc(n, sizeof(*lc->headers))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (!llm_config_header_ok(v[i])) {
			snprintf(err, errsz, "header (%s): '%.100s' is not "
			    "'Name: value'", config_where(c, "header"), v[i]);
			return -1;
		}
		if ((lc->headers[i] = strdup(v[i])) == NULL)
			return -1;
		lc->nheaders++;
	}
	return 0;
}

int
llm_config_load(struct llm_config *lc, const struct config *c, char *err,
    size_t errsz)
{
	const struct llm_preset	*pr;
	const char		*model;
	int			 url_env = 0;

	if (errsz > 0)
		err[0] = '\0';
	llm_config_init(lc);
	pr = llm_config_preset(config_str(c, "provider"));
	lc->provider = pr->provider;
	if (llm_config_strdup(&lc->preset, pr->name) == -1 ||
	    llm_config_url(lc, c, pr, &url_env, err, errsz) == -1)
		goto fail;
	model = config_str(c, "model");
	if (llm_config_strdup(&lc->model, model != NULL ? model :
	    pr->model) == -1 ||
	    llm_config_strdup(&lc->summary_model,
	    config_str(c, "summary_model")) == -1 ||
	    llm_config_strdup(&lc->record, config_str(c, "record")) == -1 ||
	    llm_config_strdup(&lc->replay, config_str(c, "replay")) == -1)
		goto nomem;
	if (config_isset(c, "temperature"))
		lc->temperature = config_number(c, "temperature");
	lc->max_tokens = (unsigned)config_uint(c, "max_tokens");
	lc->connect_timeout_ms = (unsigned)config_ms(c, "connect_timeout");
	lc->timeout_ms = (unsigned)config_ms(c, "timeout");
	lc->idle_timeout_ms = (unsigned)config_ms(c, "idle_timeout");
	lc->retries = (unsigned)config_uint(c, "retries");
	lc->backoff_ms = (unsigned)config_ms(c, "backoff");
	lc->backoff_max_ms = (unsigned)config_ms(c, "backoff_max");
	lc->concurrency = (unsigned)config_uint(c, "llm_concurrency");
	lc->rpm = (unsigned)config_uint(c, "llm_rpm");
	lc->tpm = config_uint(c, "llm_tpm");
	lc->rate_share = config_bool(c, "llm_rate_share") || lc->rpm > 0 ||
	    lc->tpm > 0;
	lc->stream = config_bool(c, "stream");
	lc->tool_mode = strcmp(config_str(c, "tool_mode"), "text") == 0 ?
	    LLM_TOOLS_TEXT : LLM_TOOLS_NATIVE;
	lc->max_response = (size_t)config_bytes(c, "max_response");
	if (llm_config_headers(lc, c, err, errsz) == -1 ||
	    llm_alias_load(lc, c, err, errsz) == -1)
		goto fail;
	if (lc->record != NULL && lc->replay != NULL) {
		snprintf(err, errsz, "record (%s) and replay (%s) exclude each "
		    "other", config_where(c, "record"),
		    config_where(c, "replay"));
		goto fail;
	}
	if (llm_key_load(config_str(c, "api_key_file"), pr->keyenv, &lc->key,
	    err, errsz) == -1)
		goto fail;
	if (lc->key == NULL && pr->need_key && lc->replay == NULL &&
	    !config_isset(c, "base_url") && !url_env) {
		snprintf(err, errsz, "no API key for %s: set WARREN_API_KEY%s%s "
		    "or api_key_file (WARREN_API_KEY_FILE)", pr->name,
		    pr->keyenv != NULL ? " or " : "",
		    pr->keyenv != NULL ? pr->keyenv : "");
		goto fail;
	}
	return 0;
nomem:
	snprintf(err, errsz, "LLM configuration: out of memory");
fail:
	if (err[0] == '\0')
		snprintf(err, errsz, "LLM configuration: out of memory");
	llm_config_free(lc);
	return -1;
}
