/*
 * Prices per model (common/price.h, issue 34): the user's model_prices
 * lines, the last for a model winning; bad entries refused with the file
 * and line; the cost of a run's tokens and how it is shown ("$1.23" from
 * ten cents up, "$0.0123" below).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/config.h"
#include "common/price.h"

static const struct config_key price_keys[] = {
	{ "model_prices", CONFIG_LIST, NULL, NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT, "prices" },
};

static struct config *
price_config(const char *text)
{
	struct config	*c;

	assert_non_null(c = config_new());
	assert_int_equal(config_declare(c, price_keys, 1), 0);
	assert_int_equal(config_load_text(c, text, strlen(text), "/u/config",
	    CONFIG_SRC_USER), 0);
	return c;
}

static void
test_find(void **state)
{
	struct config	*c;
	struct price	 p;
	char		 err[512];

	(void)state;
	c = price_config("model_prices = m-1=3,15\n"
	    "model_prices = m=0.25,1.25\nmodel_prices = m-1=2.5,10\n");
	assert_int_equal(price_find(c, "m-1", &p, err, sizeof(err)), 1);
	assert_true(p.in == 2.5 && p.out == 10);	/* the last line */
	assert_int_equal(price_find(c, "m", &p, err, sizeof(err)), 1);
	assert_true(p.in == 0.25 && p.out == 1.25);
	/* A prefix or another model: no price. */
	assert_int_equal(price_find(c, "m-", &p, err, sizeof(err)), 0);
	assert_int_equal(price_find(c, "other", &p, err, sizeof(err)), 0);
	assert_int_equal(price_find(c, NULL, &p, err, sizeof(err)), 0);
	config_free(c);
	c = price_config("");
	assert_int_equal(price_find(c, "m", &p, err, sizeof(err)), 0);
	config_free(c);
}

static void
test_bad(void **state)
{
	static const char *const bad[] = { "m", "m=3", "=3,15", "m=3,",
	    "m=,15", "m=3,15,1", "m=-3,15", "m=3,1e3", "m=nan,1",
	    "m=0x10,1", "m=1.2.3,1", "m=2000000,1", "m=3;15" };
	struct config	*c;
	struct price	 p;
	char		 text[128], err[512];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "\nmodel_prices = %s\n", bad[i]);
		c = price_config(text);
		assert_int_equal(price_find(c, "m", &p, err, sizeof(err)), -1);
		if (strstr(err, "model_prices (/u/config:2): '") == NULL ||
		    strstr(err, bad[i]) == NULL ||
		    strstr(err, "is not MODEL=IN,OUT") == NULL)
			fail_msg("'%s': %s", bad[i], err);
		config_free(c);
	}
}

static void
test_cost(void **state)
{
	struct price		p = { 3, 15 };
	struct msg_usage	u = { 1000, 200 };
	char			buf[32];

	(void)state;
	/* 1000 x 3 / 1e6 + 200 x 15 / 1e6 = 0.003 + 0.003 */
	assert_true(price_cost(&p, &u) > 0.005999 &&
	    price_cost(&p, &u) < 0.006001);
	price_fmt(buf, sizeof(buf), price_cost(&p, &u));
	assert_string_equal(buf, "$0.0060");
	u.input = 2000000;
	u.output = 100000;	/* 6 + 1.5 */
	price_fmt(buf, sizeof(buf), price_cost(&p, &u));
	assert_string_equal(buf, "$7.50");
	price_fmt(buf, sizeof(buf), 0.0123);
	assert_string_equal(buf, "$0.0123");
	price_fmt(buf, sizeof(buf), 1.234);
	assert_string_equal(buf, "$1.23");
	price_fmt(buf, sizeof(buf), 0.1);
	assert_string_equal(buf, "$0.10");
	price_fmt(buf, sizeof(buf), 0.0999);
	assert_string_equal(buf, "$0.0999");
	price_fmt(buf, sizeof(buf), 0.00001);
	assert_string_equal(buf, "<$0.0001");
	price_fmt(buf, sizeof(buf), 0);
	assert_string_equal(buf, "$0.00");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
