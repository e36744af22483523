/* Progress held back for a while (hold.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "common/clock.h"
#include "worker/hold.h"
#include "worker/hold_testapi.h"

void
hold_init(struct hold *h, void (*release)(void *), void *arg)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	atomic_init(&h->armed, 0);
	h->release = release;
	h->arg = arg;
}

void
hold_free(struct hold *h)
{
	pthread_mutex_destroy(&h->lock);
}

void
hold_arm(struct hold *h, uint64_t now, uint64_t ms)
{
	h->until = now + ms;
	/* Release order: a tick that sees armed sees until. */
	atomic_store_explicit(&h->armed, 1, memory_order_release);
}

void
hold_tick(struct hold *h, uint64_t now)
{
	if (!atomic_load_explicit(&h->armed, memory_order_acquire) ||
	    now < h->until)
		return;
	pthread_mutex_lock(&h->lock);
	/* Another thread may have released while we waited for the lock. */
	if (atomic_load_explicit(&h->armed, memory_order_relaxed)) {
		h->release(h->arg);
		atomic_store_explicit(&h->armed, 0, memory_order_relaxed);
	}
	pthread_mutex_unlock(&h->lock);
}

void
hold_progress(void *arg)
{
	struct hold	*h = arg;

	if (atomic_load_explicit(&h->armed, memory_order_relaxed))
		hold_tick(h, clock_mono_ms());
}

void
hold_disarm(struct hold *h)
{
	atomic_store_explicit(&h->armed, 0, memory_order_relaxed);
}
