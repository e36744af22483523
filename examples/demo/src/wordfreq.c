/* A word table: linear search, good enough for small inputs. */
#include <stdlib.h>
#include <string.h>

#include "wordfreq.h"

/* TODO: a hash table; linear search is O(n^2) on large inputs. */
int
table_add(struct table *t, const char *word)
{
	size_t	i;

	for (i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].text, word) == 0) {
			t->v[i].count++;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct word *v = realloc(t->v, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	if ((t->v[t->n].text = strdup(word)) == NULL)
		return -1;
	t->v[t->n++].count = 1;
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	const struct word *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

void
table_sort(struct table *t)
{
	qsort(t->v, t->n, sizeof(*t->v), cmp);
}

void
table_free(struct table *t)
{
	size_t	i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].text);
	free(t->v);
}
