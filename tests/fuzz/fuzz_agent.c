/*
 * Fuzz the agent core's hostile inputs. The first byte picks the target:
 *   0: a profile file (.warren/agents/NAME.md) through profile_parse
 *   1: tool arguments through tooldef_validate for every tool
 *   2: a model reply: lines "name<TAB>args" become the calls of one turn,
 *      fed to an agent of the general profile, then results and a second
 *      turn; the context must keep every call paired with its result.
 *   3: "pattern<TAB>path" through the glob matcher of glob and grep.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "agent/profile_testapi.h"
#include "agent/tooldef.h"
#include "agent/tooldef_testapi.h"
#include "worker/tool_int.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_profile(const char *s, size_t len)
{
	struct profile	*p;
	char		 err[512];

	if (profile_parse(s, len, "fuzz.md", "fuzz", &p, err, sizeof(err)) ==
	    0) {
		profile_schema_tokens(p);
		profile_free(p);
	}
}

static void
fuzz_args(const char *s)
{
	const struct tooldef	*t;
	char			 err[512];
	size_t			 i;

	for (i = 0; (t = tooldef_at(i)) != NULL; i++)
		tooldef_validate(t, s, err, sizeof(err));
}

static void
fuzz_reply(char *s)
{
	struct agent_config	 cfg;
	struct agent_action	 act;
	struct agent_result	 res[64];
	struct msg_reply	 r;
	struct agent		*a;
	char			 err[256], *line, *tab, *save = NULL, id[16];
	size_t			 i, n = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("general");
	cfg.task = "fuzz";
	if ((a = agent_new(&cfg, err, sizeof(err))) == NULL)
		return;
	memset(&r, 0, sizeof(r));
	r.msg.role = MSG_ASSISTANT;
	for (line = strtok_r(s, "\n", &save); line != NULL && n < 80;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((tab = strchr(line, '\t')) == NULL)
			continue;
		*tab = '\0';
		snprintf(id, sizeof(id), "c%zu", n++);
		msg_add_call(&r.msg, n % 7 ? id : "", line, tab + 1);
	}
	agent_next(a, 0, &act);
	agent_feed_llm(a, &r);
	if (agent_next(a, 0, &act) == AGENT_NEED_TOOLS) {
		for (i = 0; i < act.ncalls && i < 64; i++) {
			res[i].text = act.calls[i].args;
			res[i].is_error = (int)(i & 1);
		}
		agent_feed_results(a, res, act.ncalls);
	}
	agent_next(a, 0, &act);
	msg_free(&r.msg);
	agent_free(a);
}

static void
fuzz_glob(char *s)
{
	char	*tab;

	if ((tab = strchr(s, '\t')) == NULL || strlen(s) > 2048)
		return;
	*tab = '\0';
	(void)tool_glob_match(s, tab + 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*s;

	if (size < 1 || size > 65536)
		return 0;
	if ((s = malloc(size)) == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 4) {
	case 0:
		fuzz_profile((const char *)data + 1, size - 1);
		break;
	case 1:
		fuzz_args(s);
		break;
	case 2:
		fuzz_reply(s);
		break;
	default:
		fuzz_glob(s);
		break;
	}
	free(s);
	return 0;
}
