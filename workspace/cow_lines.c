/*
 * A line diff for `warren diff`: Myers' O(ND) greedy algorithm on the
 * lines between the common head and tail, with its trace kept (D^2 ints)
 * up to COW_LINES_DMAX differences; past that the middle is given as
 * deleted and inserted whole, still a correct script, only not minimal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/cow_walk.h"

int
cow_lines_split(struct cow_lines *l, const char *data, size_t len)
{
	const char	*p, *nl;
	size_t		 n = 0, i, k;
	uint32_t	 h;

	memset(l, 0, sizeof(*l));
	for (p = data; p < data + len; p = nl + 1, n++)
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL)
			nl = data + len - 1;
	if ((l->off = calloc(n + 1, sizeof(*l->off))) == NULL ||
	    (l->hash = calloc(n + 1, sizeof(*l->hash))) == NULL) {
		cow_lines_free(l);
		return -1;
	}
	l->data = data;
	l->n = n;
	for (i = 0, p = data; i < n; i++, p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL)
			nl = data + len - 1;
		l->off[i] = (size_t)(p - data);
		for (h = 2166136261u, k = 0; p + k <= nl; k++)
			h = (h ^ (unsigned char)p[k]) * 16777619u;
		l->hash[i] = h;
	}
	l->off[n] = len;
	return 0;
}

void
cow_lines_free(struct cow_lines *l)
{
	free(l->off);
	free(l->hash);
	memset(l, 0, sizeof(*l));
}

static int
cow_lines_eq(const struct cow_lines *a, size_t i, const struct cow_lines *b,
    size_t j)
{
	size_t	la = a->off[i + 1] - a->off[i], lb = b->off[j + 1] - b->off[j];

	return a->hash[i] == b->hash[j] && la == lb &&
	    memcmp(a->data + a->off[i], b->data + b->off[j], la) == 0;
}

/* The diff's work: lines [a0, a1) of a against [b0, b1) of b. */
struct cow_myers {
	const struct cow_lines	*a, *b;
	size_t			 a0, a1, b0, b1;
	char			*adel, *bins;	/* per line: deleted, inserted */
	long			*trace;		/* V of round d at d * d */
};

/* The forward pass: the number of differences, or -1 past the bound. */
static long
cow_myers_forward(struct cow_myers *m, long *v, long dmax)
{
	long	n = (long)(m->a1 - m->a0), mm = (long)(m->b1 - m->b0);
	long	d, k, x, y;

	v[dmax + 1 + 1] = 0;
	for (d = 0; d <= dmax; d++) {
		for (k = -d; k <= d; k += 2) {
			if (k == -d || (k != d && v[dmax + 1 + k - 1] <
			    v[dmax + 1 + k + 1]))
				x = v[dmax + 1 + k + 1];
			else
				x = v[dmax + 1 + k - 1] + 1;
			y = x - k;
			while (x < n && y < mm && cow_lines_eq(m->a,
			    m->a0 + (size_t)x, m->b, m->b0 + (size_t)y)) {
				x++;
				y++;
			}
			v[dmax + 1 + k] = x;
		}
		memcpy(m->trace + d * d, v + dmax + 1 - d,
		    (size_t)(2 * d + 1) * sizeof(long));
		for (k = -d; k <= d; k += 2)
			if (v[dmax + 1 + k] >= n && v[dmax + 1 + k] - k >= mm)
				return d;
	}
	return -1;
}

/* Walk the trace back from the end, marking what was deleted and
 * inserted. */
static void
cow_myers_back(struct cow_myers *m, long dend)
{
	long	x = (long)(m->a1 - m->a0), y = (long)(m->b1 - m->b0);
	long	d, k, pk, px, py;
	long	*vp;

	for (d = dend; d > 0; d--) {
		vp = m->trace + (d - 1) * (d - 1) + (d - 1);	/* vp[k] */
		k = x - y;
		if (k == -d || (k != d && vp[k - 1] < vp[k + 1]))
			pk = k + 1;
		else
			pk = k - 1;
		px = vp[pk];
		py = px - pk;
		while (x > px && y > py) {
			x--;
			y--;
		}
		if (x == px)
			m->bins[m->b0 + (size_t)--y] = 1;
		else
			m->adel[m->a0 + (size_t)--x] = 1;
	}
}

static void
cow_myers_middle(struct cow_myers *m)
{
	long	*v, dmax, d;
	size_t	 i;

	dmax = (long)(m->a1 - m->a0 + m->b1 - m->b0);
	if (dmax > COW_LINES_DMAX)
		dmax = COW_LINES_DMAX;
	v = calloc((size_t)(2 * dmax + 3), sizeof(long));
	m->trace = calloc((size_t)((dmax + 1) * (dmax + 1)), sizeof(long));
	d = v != NULL && m->trace != NULL ? cow_myers_forward(m, v, dmax) : -1;
	if (d >= 0)
		cow_myers_back(m, d);
	else {
		for (i = m->a0; i < m->a1; i++)
			m->adel[i] = 1;
		for (i = m->b0; i < m->b1; i++)
			m->bins[i] = 1;
	}
	free(v);
	free(m->trace);
}

/* The script from the marks: deletions of a block before its insertions. */
static int
cow_lines_script(const struct cow_myers *m, struct cow_op **ops,
    size_t *nops)
{
	struct cow_op	*v;
	size_t		 i = 0, j = 0, n = 0;

	if ((v = calloc(m->a->n + m->b->n + 1, sizeof(*v))) == NULL)
		return -1;
	while (i < m->a->n || j < m->b->n) {
		if (i < m->a->n && m->adel[i])
			v[n++] = (struct cow_op){ '-', i++, j };
		else if (j < m->b->n && m->bins[j])
			v[n++] = (struct cow_op){ '+', i, j++ };
		else
			v[n++] = (struct cow_op){ '=', i++, j++ };
	}
	*ops = v;
	*nops = n;
	return 0;
}

int
cow_lines_diff(const struct cow_lines *a, const struct cow_lines *b,
    struct cow_op **ops, size_t *nops)
{
	struct cow_myers	m;
	int			rc = -1;

	memset(&m, 0, sizeof(m));
	m.a = a;
	m.b = b;
	m.a1 = a->n;
	m.b1 = b->n;
	while (m.a0 < m.a1 && m.b0 < m.b1 && cow_lines_eq(a, m.a0, b, m.b0)) {
		m.a0++;
		m.b0++;
	}
	while (m.a1 > m.a0 && m.b1 > m.b0 &&
	    cow_lines_eq(a, m.a1 - 1, b, m.b1 - 1)) {
		m.a1--;
		m.b1--;
	}
	if ((m.adel = calloc(a->n + 1, 1)) == NULL ||
	    (m.bins = calloc(b->n + 1, 1)) == NULL)
		goto out;
	cow_myers_middle(&m);
	rc = cow_lines_script(&m, ops, nops);
out:
	free(m.adel);
	free(m.bins);
	return rc;
}
