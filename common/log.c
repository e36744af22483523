/*
 * Logging: tagged, levelled, escaped records on stderr (or a hook).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "common/str.h"

static char		 log_tag[32] = "warren";
static enum log_level	 log_level = LOG_LEVEL_INFO;
static void		(*log_hook)(enum log_level, const char *, void *);
static void		*log_hook_arg;

void
log_init(const char *tag, enum log_level level)
{
	log_procinit(tag);
	log_level = level;
}

void
log_procinit(const char *tag)
{
	if (tag != NULL)
		strlcpy(log_tag, tag, sizeof(log_tag));
}

void
log_setlevel(enum log_level level)
{
	log_level = level;
}

enum log_level
log_getlevel(void)
{
	return log_level;
}

void
log_sethook(void (*hook)(enum log_level, const char *, void *), void *arg)
{
	log_hook = hook;
	log_hook_arg = arg;
}

/* Format, escape and emit one record; errnum >= 0 appends its text. */
static void
log_emit(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	char	raw[LOG_MAX_RECORD], esc[LOG_MAX_RECORD], line[LOG_MAX_RECORD + 64];
	int	n;

	if (level > log_level)
		return;
	n = vsnprintf(raw, sizeof(raw), fmt, ap);
	if (n < 0)
		strlcpy(raw, "(unformattable log record)", sizeof(raw));
	str_escape(esc, sizeof(esc), raw, strlen(raw));
	if (errnum >= 0)
		snprintf(line, sizeof(line), "%s: %s", esc, strerror(errnum));
	else
		snprintf(line, sizeof(line), "%s", esc);
	if (log_hook != NULL) {
		log_hook(level, line, log_hook_arg);
		return;
	}
	/* One write(2): a whole line even when processes share stderr, and
	   none of the fstat, isatty and lseek dprintf's stream starts with. */
	n = snprintf(raw, sizeof(raw), "%s: %s\n", log_tag, line);
	if (n >= (int)sizeof(raw)) {
		n = (int)sizeof(raw) - 1;
		raw[n - 1] = '\n';
	}
	if (n > 0)
		(void)!write(STDERR_FILENO, raw, (size_t)n);
}

#define LOG_FN(name, level, with_errno)					\
void									\
name(const char *fmt, ...)						\
{									\
	int	saved = errno;						\
	va_list	ap;							\
									\
	va_start(ap, fmt);						\
	log_emit(level, (with_errno) ? saved : -1, fmt, ap);		\
	va_end(ap);							\
	errno = saved;							\
}

LOG_FN(log_warn, LOG_LEVEL_WARN, 1)
LOG_FN(log_warnx, LOG_LEVEL_WARN, 0)
LOG_FN(log_info, LOG_LEVEL_INFO, 0)
LOG_FN(log_debug, LOG_LEVEL_DEBUG, 0)

void
fatal(const char *fmt, ...)
{
	int	saved = errno;
	va_list	ap;

	va_start(ap, fmt);
	log_emit(LOG_LEVEL_ERROR, saved, fmt, ap);
	va_end(ap);
	exit(WARREN_EXIT_INTERNAL);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_emit(LOG_LEVEL_ERROR, -1, fmt, ap);
	va_end(ap);
	exit(WARREN_EXIT_INTERNAL);
}

static void
log_emitf(enum log_level level, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_emit(level, -1, fmt, ap);
	va_end(ap);
}

void
log_bug(const char *file, int line, const char *fmt, ...)
{
	char	what[LOG_MAX_RECORD / 2];
	va_list	ap;

	va_start(ap, fmt);
	if (vsnprintf(what, sizeof(what), fmt, ap) < 0)
		strlcpy(what, "(unformattable)", sizeof(what));
	va_end(ap);
	/* Not through a worker's hook: abort() would never flush its queue. */
	log_hook = NULL;
	log_emitf(LOG_LEVEL_ERROR, "internal error at %s:%d: %s (a bug in "
	    "warren: please report it)", file, line, what);
	abort();
}
