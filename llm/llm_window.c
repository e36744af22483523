/*
 * The adaptive cap on LLM requests on the wire (llm_concurrency is its
 * ceiling): additive increase, multiplicative decrease, as TCP's window.
 * It starts at the ceiling, so agents that wait on the model run at once;
 * a 429 from the endpoint halves it (to half of what was on the wire, if
 * fewer), and every `limit` answers in a row without one raise it by one
 * again. A 429 from a request sent before the last decrease says nothing
 * new (it was sent under the old cap) and does not halve it twice.
 */
#include "llm/llm_int.h"

void
llm_window_init(struct llm_window *w, unsigned ceiling)
{
	w->ceiling = ceiling != 0 ? ceiling : 1;
	w->limit = w->ceiling;
	w->credit = 0;
	w->epoch = 0;
}

int
llm_window_throttled(struct llm_window *w, uint64_t sent_epoch,
    size_t on_wire)
{
	unsigned	 base = w->limit;

	if (sent_epoch != w->epoch)
		return 0;
	if (on_wire < base)
		base = (unsigned)on_wire;
	w->limit = base / 2 > 0 ? base / 2 : 1;
	w->credit = 0;
	w->epoch++;
	return 1;
}

void
llm_window_answered(struct llm_window *w)
{
	if (w->limit >= w->ceiling)
		return;
	if (++w->credit >= w->limit) {
		w->limit++;
		w->credit = 0;
	}
}
