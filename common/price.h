/*
 * What a run's tokens cost, where the user gives prices: the model_prices
 * list of the user's own config ("MODEL=IN,OUT" lines, US dollars per
 * million input and output tokens; docs/configuration.md). A project's
 * .warren/config may not set it (CONFIG_NOPROJECT): a workspace could
 * otherwise make a run look cheap. A model without a price shows tokens
 * only.
 */
#ifndef WARREN_PRICE_H
#define WARREN_PRICE_H

#include <stddef.h>

#include "common/msg.h"

struct config;

struct price {
	double	in, out;	/* USD per million tokens */
};

/*
 * The price of model in c's model_prices (the last line for it wins):
 * 1 with *p set, 0 if none is given (or model is NULL), -1 with err
 * naming the bad entry and where it was set.
 */
int	price_find(const struct config *c, const char *model, struct price *p,
	    char *err, size_t errsz);
/* Input tokens x IN + output tokens x OUT, in US dollars. */
double	price_cost(const struct price *p, const struct msg_usage *u);
/* usd rounded to the micro-dollar: the "cost_usd" of --json output
 * (printed with at most 6 decimals, so a cost reads as it was counted). */
double	price_usd(double usd);
/* "$1.23" from ten cents up, "$0.0123" (4 decimals) below, "$0.00"
 * for nothing. */
void	price_fmt(char *buf, size_t sz, double usd);

#endif
