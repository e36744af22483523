/* The overlay probe's kept answer, for the tests (harness_probe.h). */
#include <sys/stat.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/e2e/harness.h"
#include "tests/e2e/harness_probe.h"

char *
h_probe_read(const char *path, struct stat *st)
{
	struct stat	 sb;
	char		*s;

	if (stat(path, st != NULL ? st : &sb) == -1)
		fail_msg("the kept answer %s: %s", path, strerror(errno));
	assert_non_null(s = h_read_file(path));
	return s;
}

void
h_probe_put(const char *path, const char *text)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL)
		fail_msg("write %s: %s", path, strerror(errno));
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0600), 0);
}

void
h_probe_same(const char *a, const char *b)
{
	const char	*wa = strstr(a, "\nwhy "), *wb = strstr(b, "\nwhy ");

	assert_non_null(wa);
	assert_non_null(wb);
	assert_int_equal(wa - a, wb - b);
	assert_memory_equal(a, b, (size_t)(wa - a));
}

const char *
h_probe_kind(const char *kept)
{
	if (strstr(kept, "\nanswer yes\nwhy \n") != NULL)
		return "upper";
	assert_non_null(strstr(kept, "\nanswer no\nwhy "));
	return "tree";
}

char *
h_probe_edit(const char *kept, const char *key, const char *line)
{
	const char	*at, *end;
	char		*out;

	assert_non_null(at = strstr(kept, key));
	assert_non_null(end = strchr(at + 1, '\n'));
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - kept), kept, line,
	    end) > 0);
	return out;
}

char *
h_probe_flip(const char *kept)
{
	int	 yes = strcmp(h_probe_kind(kept), "upper") == 0;
	char	*a, *b;

	a = yes ? h_probe_edit(kept, "answer yes", "answer no") :
	    h_probe_edit(kept, "answer no", "answer yes");
	b = h_probe_edit(a, "\nwhy ", yes ? "\nwhy " H_PROBE_WHY : "\nwhy ");
	assert_string_not_equal(h_probe_kind(b), h_probe_kind(kept));
	free(a);
	return b;
}
