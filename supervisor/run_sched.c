/*
 * The --jobs scheduler: the queue of agents waiting for a worker slot,
 * their start when one is free, and the slot and worker counts.
 */
#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/run.h"

void
run_enqueue(struct run *r, struct node *n)
{
	n->state = NODE_QUEUED;
	n->qnext = NULL;
	if (r->qtail != NULL)
		r->qtail->qnext = n;
	else
		r->qhead = n;
	r->qtail = n;
	ui_queued(n);
}

void
run_schedule(struct run *r)
{
	struct node	*n;

	while (r->qhead != NULL && (limits_slot_free(r) || r->cancelling)) {
		if (!r->cancelling && !proc_can_start(r))
			break;	/* the spawn server's answers come first */
		n = r->qhead;
		r->qhead = n->qnext;
		if (r->qhead == NULL)
			r->qtail = NULL;
		n->qnext = NULL;
		n->started_ms = clock_mono_ms();
		if (r->cancelling) {
			n->end = NODE_END_CANCELLED;
			n->error = xstrdup("the run was cancelled before it "
			    "started");
			run_node_done(r, n);
			continue;
		}
		n->state = NODE_RUNNING;
		if (proc_start(r, n) == -1) {
			run_node_done(r, n);
			continue;
		}
		r->nactive++;
	}
}

/*
 * The two counters below 0 are a bug in the bookkeeping, never something
 * a worker can cause (w->parked keeps a worker from parking twice). They
 * fail loudly, in release builds too: clamped at 0 they went wrong
 * silently, a lost slot letting --jobs start one agent too many, a lost
 * worker ending the run before its last exit.
 */
void
run_slot_park(struct run *r, struct node *n, int parked)
{
	if (!parked)
		r->nactive++;
	else if (r->nactive == 0)
		WARREN_BUG("agent %s parks with no --jobs slot taken", n->path);
	else
		r->nactive--;
}

void
run_worker_gone(struct run *r, struct node *n)
{
	if (r->nlive == 0 || r->nactive == 0)
		WARREN_BUG("agent %s gone with %u workers alive and %u slots "
		    "taken", n->path, r->nlive, r->nactive);
	r->nlive--;
	r->nactive--;
}

/* Remove a queued node from the queue. */
void
run_unqueue(struct run *r, struct node *n)
{
	struct node	**pp;

	for (pp = &r->qhead; *pp != NULL; pp = &(*pp)->qnext) {
		if (*pp == n) {
			*pp = n->qnext;
			break;
		}
	}
	r->qtail = NULL;
	for (pp = &r->qhead; *pp != NULL; pp = &(*pp)->qnext)
		r->qtail = *pp;
	n->qnext = NULL;
}
