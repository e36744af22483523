/*
 * The wait before a failed job's next attempt: exponential, capped, with
 * jitter, so that many jobs failing together (a provider's outage) do not
 * come back together. The jitter keeps at least half of the wait: a job
 * retried at once after a failure would mostly fail again.
 */
#include "queue/queue.h"

uint64_t
queue_backoff_ms(int attempt, double r)
{
	uint64_t	wait = QUEUE_BACKOFF_BASE_MS;
	int		i;

	if (attempt < 2)
		attempt = 2;
	for (i = 2; i < attempt && wait < QUEUE_BACKOFF_MAX_MS; i++)
		wait *= 2;
	if (wait > QUEUE_BACKOFF_MAX_MS)
		wait = QUEUE_BACKOFF_MAX_MS;
	if (!(r >= 0.0))	/* NaN too */
		r = 0.0;
	if (r >= 1.0)
		r = 1.0;
	return wait / 2 + (uint64_t)((double)(wait - wait / 2) * r);
}
