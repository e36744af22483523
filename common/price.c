/*
 * Prices per model from the user's model_prices list, and what a run's
 * tokens cost at them (price.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/price.h"

#define PRICE_MAX	1e6	/* USD per million tokens, at most */

/* A decimal number of dollars: digits with at most one '.', no sign, no
 * exponent, none of strtod's nan or hex; len bytes of s. */
static int
price_number(const char *s, size_t len, double *v)
{
	char	buf[32], *end;
	size_t	i, dots = 0, digits = 0;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] == '.')
			dots++;
		else if (s[i] >= '0' && s[i] <= '9')
			digits++;
		else
			return -1;
	}
	if (dots > 1 || digits == 0)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*v = strtod(buf, &end);
	if (*end != '\0' || !isfinite(*v) || *v > PRICE_MAX)
		return -1;
	return 0;
}

/* "MODEL=IN,OUT": the model's name length, and its prices; -1 if not. */
static int
price_entry(const char *s, size_t *namelen, struct price *p)
{
	const char	*eq = strrchr(s, '='), *comma;

	if (eq == NULL || eq == s || (comma = strchr(eq, ',')) == NULL)
		return -1;
	if (price_number(eq + 1, (size_t)(comma - eq - 1), &p->in) == -1 ||
	    price_number(comma + 1, strlen(comma + 1), &p->out) == -1)
		return -1;
	*namelen = (size_t)(eq - s);
	return 0;
}

int
price_find(const struct config *c, const char *model, struct price *p,
    char *err, size_t errsz)
{
	const char *const	*v;
	struct price		 q;
	size_t			 n, i, len;
	int			 found = 0;

	n = config_list(c, "model_prices", &v);
	for (i = 0; i < n; i++) {
		if (price_entry(v[i], &len, &q) == -1) {
			snprintf(err, errsz, "model_prices (%s): '%.100s' is "
			    "not MODEL=IN,OUT (a model name, '=', US dollars "
			    "per million input tokens, ',', per million output "
			    "tokens: claude-sonnet-4-5=3,15)",
			    config_where(c, "model_prices"), v[i]);
			return -1;
		}
		if (model != NULL && strlen(model) == len &&
		    strncmp(v[i], model, len) == 0) {
			*p = q;		/* the last line wins */
			found = 1;
		}
	}
	return found;
}

double
price_cost(const struct price *p, const struct msg_usage *u)
{
	return ((double)u->input * p->in + (double)u->output * p->out) / 1e6;
}

double
price_usd(double usd)
{
	if (!(usd > 0))
		return 0;
	return (double)(long long)(usd * 1e6 + 0.5) / 1e6;
}

void
price_fmt(char *buf, size_t sz, double usd)
{
	if (usd <= 0)
		snprintf(buf, sz, "$0.00");
	else if (usd >= 0.1)	/* cents say it within 5 % */
		snprintf(buf, sz, "$%.2f", usd);
	else if (usd >= 0.00005)
		snprintf(buf, sz, "$%.4f", usd);
	else
		snprintf(buf, sz, "<$0.0001");
}
