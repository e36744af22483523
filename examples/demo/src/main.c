/* wordfreq: print each word of stdin with its count, most frequent first. */
#include <ctype.h>
#include <stdio.h>

#include "wordfreq.h"

#define WORD_MAX 64

int
main(void)
{
	struct table	t = { 0 };
	char		w[WORD_MAX];
	size_t		n = 0, i;
	int		c;

	while ((c = getchar()) != EOF) {
		if (isalpha(c) && n < sizeof(w) - 1) {
			/* FIXME: words longer than WORD_MAX are silently cut. */
			w[n++] = (char)tolower(c);
			continue;
		}
		if (n > 0) {
			w[n] = '\0';
			if (table_add(&t, w) == -1)
				return 1;
			n = 0;
		}
	}
	if (n > 0) {
		w[n] = '\0';
		if (table_add(&t, w) == -1)
			return 1;
	}
	table_sort(&t);
	for (i = 0; i < t.n; i++)
		printf("%7u %s\n", t.v[i].count, t.v[i].text);
	table_free(&t);
	return 0;
}
