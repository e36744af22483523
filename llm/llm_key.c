/*
 * The API key: read once from a key file or the environment, checked to
 * be a plausible header value, then scrubbed from the environment block.
 *
 * /proc/PID/environ shows the block the process was started with, and
 * getenv() points into it, so the value bytes are overwritten in place
 * (explicit_bzero) before the variable is unset: unsetenv() alone only
 * drops the pointer and leaves the secret readable to any same-uid process
 * (a worker) for the life of the supervisor.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "llm/llm_int.h"

#define KEY_MAX		4096

/* Every variable that may hold a key, scrubbed whichever was used. */
static const char *const key_envs[] = {
	"WARREN_API_KEY",
	"OPENAI_API_KEY",
	"ANTHROPIC_API_KEY",
	"OPENROUTER_API_KEY",
};

static void
llm_key_scrub_env(const char *name)
{
	char	*v;

	if ((v = getenv(name)) == NULL)
		return;
	explicit_bzero(v, strlen(v));
	unsetenv(name);
}

/* A key goes into an HTTP header: printable ASCII, no spaces. */
static int
llm_key_valid(const char *k, size_t len)
{
	size_t	i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		if (k[i] <= ' ' || k[i] >= 0x7f)
			return 0;
	}
	return 1;
}

static int
llm_key_file(const char *path, char **key, char *err, size_t errsz)
{
	struct stat	 st;
	char		 tmp[KEY_MAX + 2];
	ssize_t		 n;
	size_t		 len;
	int		 fd, rc = -1;

	/* O_NONBLOCK: a FIFO put there must be refused below, not block
	 * the open forever; a regular file ignores the flag. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		snprintf(err, errsz, "key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "key file %s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		log_warnx("key file %s is readable by others (mode %03o); "
		    "chmod 600 it", path, (unsigned)(st.st_mode & 0777));
	if ((n = read(fd, tmp, sizeof(tmp) - 1)) == -1) {
		snprintf(err, errsz, "key file %s: %s", path, strerror(errno));
		goto out;
	}
	len = (size_t)n;
	if (len > KEY_MAX) {
		snprintf(err, errsz, "key file %s: longer than %d bytes", path,
		    KEY_MAX);
		goto out;
	}
	while (len > 0 && (tmp[len - 1] == '\n' || tmp[len - 1] == '\r' ||
	    tmp[len - 1] == ' ' || tmp[len - 1] == '\t'))
		len--;
	if (!llm_key_valid(tmp, len)) {
		snprintf(err, errsz, "key file %s: the key must be one line of "
		    "printable characters without spaces", path);
		goto out;
	}
	if ((*key = strndup(tmp, len)) == NULL) {
		snprintf(err, errsz, "key file %s: out of memory", path);
		goto out;
	}
	rc = 0;
out:
	explicit_bzero(tmp, sizeof(tmp));
	close(fd);
	return rc;
}

int
llm_key_load(const char *keyfile, const char *envname, char **key, char *err,
    size_t errsz)
{
	const char	*v = NULL, *from = NULL;
	size_t		 i;
	int		 rc = 0;

	*key = NULL;
	if (keyfile != NULL && *keyfile != '\0')
		rc = llm_key_file(keyfile, key, err, errsz);
	else {
		if ((v = getenv("WARREN_API_KEY")) != NULL && *v != '\0')
			from = "WARREN_API_KEY";
		else if (envname != NULL && (v = getenv(envname)) != NULL &&
		    *v != '\0')
			from = envname;
		if (from != NULL && !llm_key_valid(v, strlen(v))) {
			snprintf(err, errsz, "%s: the key must be printable "
			    "characters without spaces", from);
			rc = -1;
		} else if (from != NULL && (*key = strdup(v)) == NULL) {
			snprintf(err, errsz, "%s: out of memory", from);
			rc = -1;
		}
	}
	for (i = 0; i < sizeof(key_envs) / sizeof(key_envs[0]); i++)
		llm_key_scrub_env(key_envs[i]);
	if (envname != NULL)
		llm_key_scrub_env(envname);
	return rc;
}

/*
 * Star every copy of the key in buf (an endpoint, or a gateway before it,
 * that echoes the request's headers in its answer or its error): what the
 * engine hands on goes to workers, backend programs, cassettes and logs.
 * The number of copies starred.
 */
size_t
llm_key_redact(char *buf, size_t len, const char *key)
{
	size_t	 klen, n = 0;
	char	*p, *end = buf + len;

	if (key == NULL || (klen = strlen(key)) == 0 || buf == NULL)
		return 0;
	for (p = buf; (size_t)(end - p) >= klen &&
	    (p = memmem(p, (size_t)(end - p), key, klen)) != NULL; p += klen) {
		memset(p, '*', klen);
		n++;
	}
	return n;
}

/* The longest end of buf that begins the key (shorter than the key):
 * held back from a stream's part until the next shows what it is. */
size_t
llm_key_partial(const char *buf, size_t len, const char *key)
{
	size_t	klen, n;

	if (key == NULL || (klen = strlen(key)) == 0)
		return 0;
	for (n = klen - 1 < len ? klen - 1 : len; n > 0; n--)
		if (memcmp(buf + len - n, key, n) == 0)
			return n;
	return 0;
}
