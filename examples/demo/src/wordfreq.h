#ifndef WORDFREQ_H
#define WORDFREQ_H

#include <stddef.h>

struct word {
	char		*text;
	unsigned	 count;
};

struct table {
	struct word	*v;
	size_t		 n, cap;
};

int	table_add(struct table *t, const char *word);
void	table_sort(struct table *t);
void	table_free(struct table *t);

#endif
