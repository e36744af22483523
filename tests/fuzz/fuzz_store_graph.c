/*
 * Fuzz the memory graph against a model of it kept in memory: the input
 * is a program of operations (add an agent, add an edge, merge, summarise,
 * append a message of arbitrary bytes, assemble a context, flush). The
 * store must agree with the model on every answer: an edge is refused
 * exactly when it would close a cycle or exists already, messages read
 * back byte for byte, a context holds one message per summarised ancestor
 * (parents before children) followed by the node's own messages.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "store/store.h"

#define MAXN	48

struct model {
	int64_t	 id[MAXN];		/* store node ids */
	char	 path[MAXN][64];	/* "" for merge nodes */
	int	 nkids[MAXN];
	int	 summarised[MAXN];
	int	 nmsgs[MAXN];
	char	 edge[MAXN][MAXN];	/* edge[p][c] */
	int	 n;
};

struct input {
	const uint8_t	*p;
	size_t		 left;
};

static int
in_byte(struct input *in)
{
	if (in->left == 0)
		return -1;
	in->left--;
	return *in->p++;
}

/* A NUL-free string of up to 64 input bytes (malloc'd). */
static char *
in_str(struct input *in)
{
	char	*s;
	int	 len = in_byte(in), i, c;

	if (len < 0)
		len = 0;
	len %= 65;
	if ((s = malloc((size_t)len + 1)) == NULL)
		abort();
	for (i = 0; i < len && (c = in_byte(in)) >= 0; i++)
		s[i] = c == 0 ? 'z' : (char)c;
	s[i] = '\0';
	return s;
}

/* Does a reach b through edges (a == b counts)? */
static int
reaches(const struct model *m, int a, int b)
{
	int	stack[MAXN], seen[MAXN] = { 0 }, sp = 0, x, y;

	stack[sp++] = a;
	seen[a] = 1;
	while (sp > 0) {
		if ((x = stack[--sp]) == b)
			return 1;
		for (y = 0; y < m->n; y++)
			if (m->edge[x][y] && !seen[y]) {
				seen[y] = 1;
				stack[sp++] = y;
			}
	}
	return 0;
}

static void
op_agent(struct store *st, int64_t run, struct model *m, struct input *in)
{
	struct store_agent_new	a = { .task = "t" };
	char			path[sizeof(m->path[0]) + 16];
	int			p, b = in_byte(in);

	if (m->n >= MAXN || b < 0)
		return;
	p = b % m->n;
	if (m->path[p][0] == '\0' || strlen(m->path[p]) > 40)
		return;
	/* Through a copy, gcc cannot tell p < m->n (-Werror=restrict); at
	 * most 40 + 12 bytes, but gcc sees up to 76 (format-truncation). */
	snprintf(path, sizeof(path), "%s.%d", m->path[p], m->nkids[p] + 1);
	strlcpy(m->path[m->n], path, sizeof(m->path[m->n]));
	a.path = m->path[m->n];
	if (store_agent_add(st, run, &a, NULL, &m->id[m->n]) == -1)
		abort();
	m->nkids[p]++;
	m->edge[p][m->n] = 1;
	m->n++;
}

static void
op_edge(struct store *st, struct model *m, struct input *in)
{
	int	a = in_byte(in), b = in_byte(in), rc, want;

	if (a < 0 || b < 0)
		return;
	a %= m->n;
	b %= m->n;
	want = !(m->edge[a][b] || reaches(m, b, a));
	rc = store_edge_add(st, m->id[a], m->id[b]);
	if ((rc == 0) != want)
		abort();
	if (rc == -1 && store_errcode(st) != (m->edge[a][b] ? STORE_EEXIST :
	    STORE_ECYCLE))
		abort();
	if (rc == 0)
		m->edge[a][b] = 1;
}

static void
op_merge(struct store *st, int64_t run, struct model *m, struct input *in)
{
	int64_t	ids[4];
	int	idx[4], k = in_byte(in), i, j, b;

	if (k < 0 || m->n >= MAXN)
		return;
	k = k % 4 + 1;
	for (i = 0; i < k; i++) {
		if ((b = in_byte(in)) < 0)
			return;
		idx[i] = b % m->n;
		for (j = 0; j < i; j++)
			if (idx[j] == idx[i])
				return;
		ids[i] = m->id[idx[i]];
	}
	if (store_node_merge(st, run, ids, (size_t)k, "merge",
	    &m->id[m->n]) == -1)
		abort();
	m->path[m->n][0] = '\0';
	for (i = 0; i < k; i++)
		m->edge[idx[i]][m->n] = 1;
	m->n++;
}

static void
op_summary(struct store *st, struct model *m, struct input *in)
{
	int	b = in_byte(in);
	char	*s;

	if (b < 0)
		return;
	s = in_str(in);
	if (store_node_set_summary(st, m->id[b % m->n], s, STORE_SUMMARY_LLM,
	    NULL) == -1)
		abort();
	m->summarised[b % m->n] = 1;
	free(s);
}

static void
op_message(struct store *st, struct model *m, struct input *in)
{
	struct msg	 w;
	struct msg_list	 l;
	char		*a, *b2;
	int		 b = in_byte(in), i, ncalls;

	if (b < 0)
		return;
	b %= m->n;
	memset(&w, 0, sizeof(w));
	w.role = (enum msg_role)(in_byte(in) & 3);
	w.text = in_str(in);
	ncalls = in_byte(in) & 3;
	for (i = 0; i < ncalls; i++) {
		a = in_str(in);
		b2 = in_str(in);
		if (msg_add_call(&w, a, "tool", b2) == -1)
			abort();
		free(a);
		free(b2);
	}
	if (store_msg_append(st, m->id[b], &w, NULL) == -1)
		abort();
	m->nmsgs[b]++;
	msg_list_init(&l);
	if (store_node_messages(st, m->id[b], &l, NULL) == -1 ||
	    l.n != (size_t)m->nmsgs[b])
		abort();
	{
		struct msg	*r = &l.v[l.n - 1];

		if (r->role != w.role || strcmp(r->text, w.text) != 0 ||
		    r->ncalls != w.ncalls)
			abort();
		for (i = 0; i < (int)w.ncalls; i++)
			if (strcmp(r->calls[i].id, w.calls[i].id) != 0 ||
			    strcmp(r->calls[i].args, w.calls[i].args) != 0)
				abort();
	}
	msg_list_free(&l);
	msg_free(&w);
}

static void
op_context(struct store *st, struct model *m, struct input *in)
{
	struct msg_list	l;
	int		b = in_byte(in), x, want = 0;

	if (b < 0)
		return;
	b %= m->n;
	for (x = 0; x < m->n; x++)
		if (x != b && m->summarised[x] && reaches(m, x, b))
			want++;
	msg_list_init(&l);
	if (store_context(st, m->id[b], 0, &l) == -1 ||
	    l.n != (size_t)(want + m->nmsgs[b]))
		abort();
	msg_list_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model	 m;
	static struct store	*st;
	static int		 uses;
	struct store_run_params	 p = { .task = "fuzz" };
	struct store_agent_new	 a = { .path = "0", .task = "root" };
	struct input		 in = { data, size };
	char			 err[STORE_ERRMSG_MAX];
	int64_t			 run;
	int			 op, steps = 0;

	/* One in-memory database for many inputs (a run each): creating the
	 * schema costs more than most inputs. */
	if (st != NULL && ++uses % 500 == 0) {
		store_close(st);
		st = NULL;
	}
	memset(&m, 0, sizeof(m));
	if (st == NULL && (st = store_open(":memory:", STORE_CREATE, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	if (store_run_begin(st, &p, &run) == -1 ||
	    store_agent_add(st, run, &a, NULL, &m.id[0]) == -1)
		abort();
	strlcpy(m.path[0], "0", sizeof(m.path[0]));
	m.n = 1;
	while ((op = in_byte(&in)) >= 0 && steps++ < 200) {
		switch (op % 7) {
		case 0:
			op_agent(st, run, &m, &in);
			break;
		case 1:
			op_edge(st, &m, &in);
			break;
		case 2:
			op_merge(st, run, &m, &in);
			break;
		case 3:
			op_summary(st, &m, &in);
			break;
		case 4:
			op_message(st, &m, &in);
			break;
		case 5:
			op_context(st, &m, &in);
			break;
		default:
			if (store_flush(st) == -1)
				abort();
			break;
		}
	}
	if (store_flush(st) == -1)
		abort();
	return 0;
}
