/*
 * Map at once the pages a worker is sure to write. A page fault is the
 * dearest thing a short-lived worker does on a paravirtualised VM: about
 * 9 us for a zero page and 13 us for a copy-on-write of .data, against
 * about 1.6 us a page when one madvise(MADV_POPULATE_WRITE) maps a range
 * (docs/benchmarks.md, "Kept"). An explore worker of
 * five steps took about 17 such faults in these ranges: the start of its
 * heap and the stack below main; 2 are left. (Its 10 in .data and .bss
 * come earlier, in glibc's start-up, before main can do anything.)
 *
 * Best effort: before Linux 5.14 madvise says EINVAL and the pages fault
 * one by one, as before.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "worker/worker.h"

#define PREFAULT_HEAP	(96u * 1024)	/* of the first sbrk's 132 KiB */
#define PREFAULT_STACK	(64u * 1024)

static void
prefault_range(uintptr_t lo, uintptr_t hi)
{
	uintptr_t	pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	lo &= ~(pg - 1);
	hi = (hi + pg - 1) & ~(pg - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

void
worker_prefault(void)
{
	char		 here;
	uintptr_t	 sp = (uintptr_t)&here, heap, brk;
	void		*p;

	/* malloc's first sbrk: the heap the worker's small blocks come from. */
	if ((p = malloc(1)) != NULL) {
		heap = (uintptr_t)p;
		brk = (uintptr_t)sbrk(0);
		if (brk > heap && brk - heap <= 4 * PREFAULT_HEAP)
			prefault_range(heap, brk - heap > PREFAULT_HEAP ?
			    heap + PREFAULT_HEAP : brk);
		free(p);
	}
	/* Below us, within the stack the kernel mapped at exec. */
	prefault_range(sp - PREFAULT_STACK, sp - 256);
}
