/*
 * User profiles: agents/NAME.md in the user's config directory or a
 * trusted project's .warren/, a small "---" header and a body
 * (the role prompt), the shape Claude Code users already write. The file is
 * user input: sizes are bounded, every error names the file and the line,
 * and an unknown key is an error rather than a silent default (a typo must
 * not widen or narrow what an agent may do unnoticed). An unknown tool is
 * a warning naming file and line, and the file's other tools load: files
 * written for Claude Code name tools warren lacks (WebFetch), and one such
 * file must not stop every command. Leaving a tool out only narrows.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/str.h"
#include "agent/profile.h"
#include "agent/profile_testapi.h"
#include "agent/tooldef.h"

#define PF_MAX_LINE	4096
#define PF_MAX_FILES	256

struct pf {
	const char	*file;
	const char	*text;		/* the whole file, for pf_warn_fn */
	size_t		 len;
	const char	*p, *end;	/* unread text */
	unsigned	 line;		/* of the last line read */
	char		*err;
	size_t		 errlen;
	int		 saw_tools;
	int		 saw_args;
};

/*
 * The error names the file and quotes the text at fault: both come from the
 * workspace (an agent may have written them), so both are escaped here, for
 * every caller that prints the message.
 */
static int
pf_error(struct pf *pf, const char *fmt, const char *arg)
{
	char	what[512], earg[256], efile[512];

	str_escape(efile, sizeof(efile), pf->file, strlen(pf->file));
	if (arg != NULL) {
		str_escape(earg, sizeof(earg), arg, strlen(arg));
		snprintf(what, sizeof(what), fmt, earg);
	} else
		strlcpy(what, fmt, sizeof(what));	/* a plain message */
	snprintf(pf->err, pf->errlen, "%s:%u: %s", efile, pf->line, what);
	return -1;
}

/* Who is told of a file's warnings (profile_warn_hook); NULL: the log. */
static profile_warn_fn	 pf_warn_fn;
static void		*pf_warn_arg;

void
profile_warn_hook(profile_warn_fn fn, void *arg)
{
	pf_warn_fn = fn;
	pf_warn_arg = arg;
}

/* A tool warren lacks: said (the name escaped, as pf_error does), and
 * left out; the file's other tools load. */
static int
pf_warn_tool(struct pf *pf, const char *name)
{
	char	efile[512], ename[256], msg[1024];

	str_escape(efile, sizeof(efile), pf->file, strlen(pf->file));
	str_escape(ename, sizeof(ename), name, strlen(name));
	snprintf(msg, sizeof(msg), "%s:%u: unknown tool \"%s\" left out "
	    "(tools: read, write, edit, list, glob, grep, bash, todo, note, "
	    "delegate, or Read, Write, Edit, LS, Glob, Grep, Bash, TodoWrite, "
	    "Task)", efile, pf->line, ename);
	if (pf_warn_fn != NULL)
		pf_warn_fn(pf_warn_arg, pf->file, pf->text, pf->len, msg);
	else
		log_warnx("%s", msg);
	return 0;
}

/* Next line without its newline (and \r); NULL at the end. */
static int
pf_line(struct pf *pf, const char **s, size_t *len)
{
	const char	*nl;

	if (pf->p >= pf->end)
		return 0;
	pf->line++;
	*s = pf->p;
	if ((nl = memchr(pf->p, '\n', pf->end - pf->p)) == NULL)
		nl = pf->end;
	*len = nl - pf->p;
	pf->p = nl < pf->end ? nl + 1 : nl;
	if (*len > 0 && (*s)[*len - 1] == '\r')
		(*len)--;
	return 1;
}

static void
pf_trim(const char **s, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

/* A value, unquoted: "x", 'x' or x. */
static char *
pf_value(const char *s, size_t len)
{
	pf_trim(&s, &len);
	if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
		s++;
		len -= 2;
	}
	return strndup(s, len);
}

static int
pf_add_tool(struct pf *pf, struct profile *p, const char *s, size_t len)
{
	const char	*canon;
	char		 name[64];
	size_t		 i;

	pf_trim(&s, &len);
	if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
		s++;
		len -= 2;
	}
	if (len == 0)
		return 0;
	if (len >= sizeof(name))
		return pf_error(pf, "tool name too long", NULL);
	memcpy(name, s, len);
	name[len] = '\0';
	if ((canon = tooldef_canonical(name)) == NULL)
		return pf_warn_tool(pf, name);
	if (strcmp(canon, "complete") == 0 || strcmp(canon, "fail") == 0)
		return 0;	/* always given */
	for (i = 0; i < p->ntools; i++)
		if (strcmp(p->tools[i], canon) == 0)
			return 0;
	if (p->ntools == PROFILE_MAX_TOOLS)
		return pf_error(pf, "too many tools", NULL);
	p->tools[p->ntools++] = canon;
	return 0;
}

/* "Read, Grep", "[Read, Grep]" or "" (a YAML list follows). */
static int
pf_tools(struct pf *pf, struct profile *p, const char *s, size_t len)
{
	const char	*comma;

	pf->saw_tools = 1;
	pf_trim(&s, &len);
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	while (len > 0) {
		if ((comma = memchr(s, ',', len)) == NULL)
			comma = s + len;
		if (pf_add_tool(pf, p, s, comma - s) == -1)
			return -1;
		len -= comma - s;
		s = comma;
		if (len > 0) {
			s++;
			len--;
		}
	}
	return 0;
}

static int
pf_number(struct pf *pf, const char *v, long long lo, long long hi,
    unsigned long long *out)
{
	const char	*errstr;
	long long	 n;

	n = strtonum(v, lo, hi, &errstr);
	if (errstr != NULL) {
		char	range[96];

		snprintf(range, sizeof(range), "number %s (%lld to %lld)",
		    errstr, lo, hi);
		return pf_error(pf, "%s", range);
	}
	*out = (unsigned long long)n;
	return 0;
}

static int
pf_valid_name(const char *s)
{
	size_t	i;

	if (*s == '\0' || strlen(s) > 64)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

/* Cut a YAML comment: '#' after a blank, outside quotes. */
static size_t
pf_uncomment(const char *s, size_t len)
{
	size_t	i;
	char	q = 0;

	for (i = 0; i < len; i++) {
		if (q != 0) {
			if (s[i] == q)
				q = 0;
		} else if (s[i] == '"' || s[i] == '\'')
			q = s[i];
		else if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' ||
		    s[i - 1] == '\t'))
			return i;
	}
	return len;
}

/* One argument of args:, unquoted; empty ones are kept ("" is an
 * argument a program may want). */
static int
pf_add_arg(struct pf *pf, struct profile *p, const char *s, size_t len)
{
	char	*v;

	if (p->nargs == BACKEND_ARGV_MAX - 1)
		return pf_error(pf, "too many args (at most 63)", NULL);
	if ((v = pf_value(s, len)) == NULL)
		return pf_error(pf, "out of memory", NULL);
	if (strlen(v) > 4096) {
		free(v);
		return pf_error(pf, "an argument longer than 4096 bytes",
		    NULL);
	}
	p->args[p->nargs++] = v;
	return 0;
}

/* "[a, "b c"]", "a b" (split at blanks) or "" (a YAML list follows). */
static int
pf_args(struct pf *pf, struct profile *p, const char *s, size_t len)
{
	const char	*e, *end;
	char		 q;
	int		 list = 0;

	pf->saw_args = 1;
	pf_trim(&s, &len);
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
		list = 1;
	}
	end = s + len;
	while (s < end) {
		while (s < end && (*s == ' ' || *s == '\t' ||
		    (list && *s == ',')))
			s++;
		if (s == end)
			break;
		q = (*s == '"' || *s == '\'') ? *s : 0;
		for (e = s + (q != 0); e < end; e++) {
			if (q != 0 ? *e == q : list ? *e == ',' :
			    (*e == ' ' || *e == '\t'))
				break;
		}
		if (q != 0 && e == end)
			return pf_error(pf, "args: a quote is not closed",
			    NULL);
		if (q != 0)
			e++;
		if (pf_add_arg(pf, p, s, (size_t)(e - s)) == -1)
			return -1;
		s = e;
	}
	return 0;
}

/* backend: and command:, checked as far as a file can be. */
static int
pf_backend_key(struct pf *pf, struct profile *p, const char *key, char **v)
{
	if (strcmp(key, "backend") == 0) {
		if (backend_parse(*v, &p->backend) == -1)
			return pf_error(pf, "backend \"%.32s\" must be "
			    "claude-code, codex, command or loop", *v);
		return 0;
	}
	if (strcmp(key, "command") == 0) {
		/* A relative path would be the workspace's: an agent's. */
		if (**v == '\0' || (strchr(*v, '/') != NULL && **v != '/'))
			return pf_error(pf, "command \"%.64s\" must be an "
			    "absolute path or a program name found in PATH",
			    *v);
		free(p->command);
		p->command = *v;
		*v = NULL;
		return 0;
	}
	if (strcmp(*v, "anthropic") != 0 && strcmp(*v, "responses") != 0 &&
	    strcmp(*v, "openai") != 0)
		return pf_error(pf, "wire \"%.32s\" must be anthropic, "
		    "responses or openai", *v);
	free(p->wire);
	p->wire = *v;
	*v = NULL;
	return 0;
}

static int
pf_key(struct pf *pf, struct profile *p, const char *key, const char *s,
    size_t len)
{
	unsigned long long	 n;
	char			*v;
	int			 rc = 0;

	len = pf_uncomment(s, len);

	if (strcmp(key, "tools") == 0)
		return pf_tools(pf, p, s, len);
	if (strcmp(key, "args") == 0)
		return pf_args(pf, p, s, len);
	if ((v = pf_value(s, len)) == NULL)
		return pf_error(pf, "out of memory", NULL);
	if (strcmp(key, "backend") == 0 || strcmp(key, "command") == 0 ||
	    strcmp(key, "wire") == 0)
		rc = pf_backend_key(pf, p, key, &v);
	else if (strcmp(key, "name") == 0) {
		if (!pf_valid_name(v))
			rc = pf_error(pf, "name \"%.64s\" must be 1-64 of "
			    "a-z, 0-9, - and _", v);
		else {
			free(p->name);
			p->name = v;
			v = NULL;
		}
	} else if (strcmp(key, "description") == 0) {
		free(p->description);
		p->description = v;
		v = NULL;
	} else if (strcmp(key, "model") == 0) {
		free(p->model);
		p->model = *v != '\0' && strcmp(v, "inherit") != 0 ? v : NULL;
		if (p->model != NULL)
			v = NULL;
	} else if (strcmp(key, "context") == 0) {
		if (strcmp(v, "append") == 0)
			p->context.strategy = AGENT_CTX_APPEND;
		else if (strcmp(v, "hierarchical") == 0)
			p->context.strategy = AGENT_CTX_HIERARCHICAL;
		else if (strcmp(v, "none") == 0)
			p->context.strategy = AGENT_CTX_NONE;
		else
			rc = pf_error(pf, "context \"%.32s\" must be append, "
			    "hierarchical or none", v);
	} else if (strcmp(key, "keep") == 0) {
		if ((rc = pf_number(pf, v, 1, 1000, &n)) == 0)
			p->context.keep_recent = p->context.keep_exchanges = n;
	} else if (strcmp(key, "compact") == 0) {
		if ((rc = pf_number(pf, v, 10, 100, &n)) == 0)
			p->context.compact_pct = n;
	} else if (strcmp(key, "budget") == 0) {
		if ((rc = pf_number(pf, v, 1000, 10000000, &n)) == 0)
			p->context.budget_tokens = n;
	} else if (strcmp(key, "color") != 0)
		rc = pf_error(pf, "unknown key \"%.64s\" (keys: name, "
		    "description, tools, model, context, keep, compact, budget, "
		    "backend, command, args, wire)", key);
	free(v);
	return rc;
}

static int
pf_header(struct pf *pf, struct profile *p)
{
	const char	*s, *colon;
	size_t		 len, klen;
	char		 key[32];
	int		 in_tools = 0, in_args = 0;

	for (;;) {
		if (!pf_line(pf, &s, &len))
			return pf_error(pf, "the header has no closing \"---\" "
			    "line", NULL);
		if (len > PF_MAX_LINE)
			return pf_error(pf, "line too long", NULL);
		if (len >= 3 && memcmp(s, "---", 3) == 0) {
			pf_trim(&s, &len);
			if (len == 3)
				return 0;
		}
		pf_trim(&s, &len);
		if (len == 0 || s[0] == '#')
			continue;
		if (s[0] == '-' && in_tools) {	/* "  - Read" */
			if (pf_add_tool(pf, p, s + 1,
			    pf_uncomment(s + 1, len - 1)) == -1)
				return -1;
			continue;
		}
		if (s[0] == '-' && in_args) {	/* "  - --print" */
			if (len < 2 || s[1] != ' ')
				return pf_error(pf, "args: expected \"- "
				    "ARGUMENT\"", NULL);
			if (pf_add_arg(pf, p, s + 2,
			    pf_uncomment(s + 2, len - 2)) == -1)
				return -1;
			continue;
		}
		in_tools = in_args = 0;
		if ((colon = memchr(s, ':', len)) == NULL)
			return pf_error(pf, "expected \"key: value\"", NULL);
		klen = colon - s;
		while (klen > 0 && isspace((unsigned char)s[klen - 1]))
			klen--;
		if (klen == 0 || klen >= sizeof(key))
			return pf_error(pf, "bad key", NULL);
		memcpy(key, s, klen);
		key[klen] = '\0';
		if (pf_key(pf, p, key, colon + 1, len - (colon + 1 - s)) == -1)
			return -1;
		in_tools = strcmp(key, "tools") == 0;
		in_args = strcmp(key, "args") == 0 && p->nargs == 0;
	}
}

/* The backend keys together: what each backend needs and allows. */
static int
pf_backend_check(struct pf *pf, struct profile *p)
{
	if (p->backend == BACKEND_LOOP) {
		if (p->command != NULL || pf->saw_args || p->wire != NULL)
			return pf_error(pf, "command, args and wire are for "
			    "\"backend: command\"", NULL);
		return 0;
	}
	if (pf->saw_tools)
		return pf_error(pf, "tools: does not apply to a backend (its "
		    "program has its own tools): leave it out", NULL);
	if (p->backend == BACKEND_COMMAND && p->command == NULL)
		return pf_error(pf, "backend: command needs \"command: "
		    "PROGRAM\"", NULL);
	if (p->backend != BACKEND_COMMAND && (pf->saw_args || p->wire != NULL))
		return pf_error(pf, "args and wire are for \"backend: "
		    "command\" (a preset knows its own)", NULL);
	pf->saw_tools = 1;	/* no explore tools by default */
	return 0;
}

int
profile_parse(const char *text, size_t len, const char *filename,
    const char *name_hint, struct profile **out, char *err, size_t errlen)
{
	const struct profile	*explore;
	struct profile		*p;
	struct pf		 pf;
	const char		*s, *body;
	size_t			 l, blen, i;

	*out = NULL;
	memset(&pf, 0, sizeof(pf));
	pf.file = filename != NULL ? filename : "(profile)";
	pf.text = text;
	pf.len = len;
	pf.p = text;
	pf.end = text + len;
	pf.err = err;
	pf.errlen = errlen;
	if (len > PROFILE_MAX_FILE)
		return pf_error(&pf, "file too large (limit 256 KiB)", NULL);
	if (memchr(text, '\0', len) != NULL)
		return pf_error(&pf, "file contains a NUL byte", NULL);
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		pf.p += 3;
	do {
		if (!pf_line(&pf, &s, &l))
			return pf_error(&pf, "empty file: expected a \"---\" "
			    "header", NULL);
		pf_trim(&s, &l);
	} while (l == 0);
	if (l != 3 || memcmp(s, "---", 3) != 0)
		return pf_error(&pf, "expected a \"---\" line opening the "
		    "header (name, description, tools, model)", NULL);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return pf_error(&pf, "out of memory", NULL);
	if (pf_header(&pf, p) == -1 || pf_backend_check(&pf, p) == -1)
		goto fail;
	body = pf.p;
	blen = pf.end - pf.p;
	pf_trim(&body, &blen);
	if (p->name == NULL) {
		if (name_hint == NULL || !pf_valid_name(name_hint)) {
			pf.line = 1;
			pf_error(&pf, "no \"name:\" in the header", NULL);
			goto fail;
		}
		p->name = strdup(name_hint);
	}
	if (!pf.saw_tools) {
		explore = profile_builtin("explore");
		for (i = 0; i < explore->ntools; i++)
			p->tools[i] = explore->tools[i];
		p->ntools = explore->ntools;
	}
	if (p->description == NULL)
		p->description = strdup("");
	p->prompt = strndup(body, blen);
	p->source = strdup(pf.file);
	if (p->name == NULL || p->description == NULL || p->prompt == NULL ||
	    p->source == NULL) {
		pf_error(&pf, "out of memory", NULL);
		goto fail;
	}
	profile_derive(p);
	*out = p;
	return 0;
 fail:
	profile_free(p);
	return -1;
}

/* The profile name a file gives when its header has none: NAME of NAME.md. */
static void
pf_hint(const char *path, char *hint, size_t hintsz)
{
	const char	*base;
	char		*dot;

	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	strlcpy(hint, base, hintsz);
	if ((dot = strrchr(hint, '.')) != NULL)
		*dot = '\0';
}

static int
profile_load_file(const char *path, struct profile **out, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*text = NULL, hint[80], epath[1024];
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd, rc = -1;

	*out = NULL;
	/* A workspace file name may hold control bytes: quote it escaped. */
	str_escape(epath, sizeof(epath), path, strlen(path));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		snprintf(err, errlen, "%s: %s", epath, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", epath);
		goto out;
	}
	if (st.st_size > PROFILE_MAX_FILE) {
		snprintf(err, errlen, "%s:1: file too large (%lld bytes, limit "
		    "256 KiB)", epath, (long long)st.st_size);
		goto out;
	}
	if ((text = malloc(st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", epath);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		if ((n = read(fd, text + got, st.st_size - got)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", epath, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += n;
	}
	pf_hint(path, hint, sizeof(hint));
	rc = profile_parse(text, got, path, hint, out, err, errlen);
 out:
	free(text);
	close(fd);
	return rc;
}

static int
pf_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
pf_set_add(struct profile_set *set, struct profile *p, char *err,
    size_t errlen)
{
	const struct profile	**nv;
	struct profile		**no;
	size_t			  i;

	for (i = set->layer; i < set->nowned; i++)
		if (strcmp(set->owned[i]->name, p->name) == 0) {
			char	e1[512], e2[512];

			str_escape(e1, sizeof(e1), p->source,
			    strlen(p->source));
			str_escape(e2, sizeof(e2), set->owned[i]->source,
			    strlen(set->owned[i]->source));
			snprintf(err, errlen, "%s:1: profile \"%s\" is also "
			    "defined in %s", e1, p->name, e2);
			profile_free(p);
			return -1;
		}
	no = reallocarray(set->owned, set->nowned + 1, sizeof(*no));
	if (no == NULL)
		goto nomem;
	set->owned = no;
	set->owned[set->nowned++] = p;
	for (i = 0; i < set->n; i++)
		if (strcmp(set->v[i]->name, p->name) == 0) {
			set->v[i] = p;	/* replaces an earlier layer's */
			return 0;
		}
	if ((nv = reallocarray(set->v, set->n + 1, sizeof(*nv))) == NULL)
		goto nomem;
	set->v = nv;
	set->v[set->n++] = p;
	return 0;
 nomem:
	snprintf(err, errlen, "profiles: out of memory");
	if (no == NULL)
		profile_free(p);
	return -1;
}

static int
pf_set_dir(struct profile_set *set, const char *dir, char *err,
    size_t errlen)
{
	struct dirent	 *de;
	struct profile	 *p;
	DIR		 *d;
	char		 *names[PF_MAX_FILES], path[4096];
	size_t		  n = 0, i, l;
	int		  rc = -1;

	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 3, ".md") != 0 ||
		    de->d_name[0] == '.')
			continue;
		if (n == PF_MAX_FILES) {
			snprintf(err, errlen, "%s: more than %d profiles", dir,
			    PF_MAX_FILES);
			goto out;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			snprintf(err, errlen, "profiles: out of memory");
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(names[0]), pf_cmp);
	for (i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    names[i]) >= sizeof(path)) {
			snprintf(err, errlen, "%s: a profile file name there "
			    "is too long", dir);
			goto out;
		}
		if (profile_load_file(path, &p, err, errlen) == -1 ||
		    pf_set_add(set, p, err, errlen) == -1)
			goto out;
	}
	rc = 0;
 out:
	for (i = 0; i < n; i++)
		free(names[i]);
	closedir(d);
	return rc;
}

int
profile_set_load(struct profile_set *set, const char *dir, char *err,
    size_t errlen)
{
	const struct profile	*b;
	size_t			 i;

	memset(set, 0, sizeof(*set));
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++)
		;
	if ((set->v = calloc(i, sizeof(*set->v))) == NULL) {
		snprintf(err, errlen, "profiles: out of memory");
		return -1;
	}
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++)
		set->v[set->n++] = b;
	if (dir == NULL)
		return 0;
	if (pf_set_dir(set, dir, err, errlen) == -1) {
		profile_set_free(set);
		return -1;
	}
	return 0;
}

void
profile_set_layer(struct profile_set *set)
{
	set->layer = set->nowned;
}

int
profile_set_add_text(struct profile_set *set, const char *text, size_t len,
    const char *filename, char *err, size_t errlen)
{
	struct profile	*p;
	char		 hint[80];

	pf_hint(filename, hint, sizeof(hint));
	if (profile_parse(text, len, filename, hint, &p, err, errlen) == -1)
		return -1;
	return pf_set_add(set, p, err, errlen);
}

const struct profile *
profile_set_find(const struct profile_set *set, const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && i < set->n; i++)
		if (strcmp(set->v[i]->name, name) == 0)
			return set->v[i];
	return NULL;
}

void
profile_set_free(struct profile_set *set)
{
	size_t	i;

	for (i = 0; i < set->nowned; i++)
		profile_free(set->owned[i]);
	free(set->owned);
	free(set->v);
	memset(set, 0, sizeof(*set));
}
