/*
 * A conversation's turns (warren chat, cli/cmd_chat.c): each turn is a
 * run that continues the turn before it. A turn's root starts from the
 * earlier turns in full, each turn's user message (its task) and final
 * answer (its result), oldest first, as the conversation the model had,
 * not as memory summaries (store_context.c). Read on the connection's
 * owner (store_call): the run's writer thread may be running.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/str.h"
#include "store/store_int.h"

struct store_turns_arg {
	int64_t		 run;
	size_t		 max, textmax;
	struct msg_list	*out;
};

/* One message, cut to max bytes, not inside a UTF-8 sequence. */
static int
store_turns_add(struct msg_list *out, enum msg_role role, const char *text,
    size_t max)
{
	size_t	 len = strlen(text);
	char	*cut;
	int	 rc;

	if (len <= max)
		return msg_list_add_text(out, role, text);
	len = max;
	while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
		len--;
	if ((cut = strndup(text, len)) == NULL)
		return -1;
	rc = msg_list_add_text(out, role, cut);
	free(cut);
	return rc;
}

/* The run continued by id, or 0; -1 on error. */
static int64_t
store_turns_prev(struct store *st, int64_t id)
{
	struct store_run	sr;

	if (store_run_get(st, id, &sr) == -1)
		return -1;
	id = sr.continues;
	store_run_free(&sr);
	return id;
}

static int
store_turns_on(struct store *st, void *arg)
{
	struct store_turns_arg	*a = arg;
	struct store_run	 sr;
	int64_t			*ids, id;
	size_t			 n = 0;
	int			 ok = 1;

	if ((ids = calloc(a->max + 1, sizeof(*ids))) == NULL)
		return store_seterr(st, STORE_ENOMEM, "reading the turns");
	/* Newest first; a loop (a hand-edited database) ends at max. */
	id = store_turns_prev(st, a->run);
	while (id > 0 && n < a->max) {
		ids[n++] = id;
		id = store_turns_prev(st, id);
	}
	while (ok && id != -1 && n-- > 0) {
		if (store_run_get(st, ids[n], &sr) == -1) {
			id = -1;
			break;
		}
		ok = store_turns_add(a->out, MSG_USER, sr.task ? sr.task : "",
		    a->textmax) == 0 && store_turns_add(a->out, MSG_ASSISTANT,
		    sr.result && *sr.result ? sr.result :
		    "(this turn ended without an answer)", a->textmax) == 0;
		store_run_free(&sr);
	}
	free(ids);
	if (!ok)
		return store_seterr(st, STORE_ENOMEM, "reading the turns");
	return id == -1 ? -1 : 0;
}

int
store_turns(struct store *st, int64_t run, size_t max, size_t textmax,
    struct msg_list *out)
{
	struct store_turns_arg	a = { run, max, textmax, out };

	return store_call(st, store_turns_on, &a);
}
