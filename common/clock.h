/* Monotonic and wall clocks in the units warren's timers use. */
#ifndef WARREN_CLOCK_H
#define WARREN_CLOCK_H

#include <stdint.h>

/* clock.c */
uint64_t	clock_mono_ms(void);	/* CLOCK_MONOTONIC, milliseconds */
uint64_t	clock_mono_ns(void);	/* CLOCK_MONOTONIC, nanoseconds */
int64_t		clock_wall_ms(void);	/* CLOCK_REALTIME, ms since the epoch */

#endif
