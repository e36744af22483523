/*
 * One log API for every warren process, tagged per process (ntpd log.h).
 *
 * Messages go to stderr as "warren[tag]: text". Every message is escaped
 * before it is written (control characters become \ooo), because log lines
 * carry text that came from an LLM, a tool or a file, and a terminal must
 * never see its escape sequences.
 */
#ifndef WARREN_LOG_H
#define WARREN_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* log.c */
void	log_init(const char *tag, enum log_level level);
void	log_procinit(const char *tag);
void	log_setlevel(enum log_level level);
enum log_level log_getlevel(void);
/* Where records go instead of stderr (a worker forwards them over IPC). */
void	log_sethook(void (*hook)(enum log_level, const char *line, void *arg),
	    void *arg);

void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print, then exit(WARREN_EXIT_INTERNAL): fatal appends strerror(errno). */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

/*
 * An invariant of warren's own broken: a bug in this code, never bad
 * input (that is an error with a message). It logs where and what, straight
 * to stderr, then abort()s for a core, in every build: assert() is gone
 * under NDEBUG, and carrying on (a counter clamped at 0, say) would turn
 * the bug into wrong behaviour nobody sees.
 */
#define WARREN_BUG(...)	log_bug(__FILE__, __LINE__, __VA_ARGS__)
void	log_bug(const char *file, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4), noreturn));

/* Longest record written; longer ones are cut and marked. */
#define LOG_MAX_RECORD 8192

#endif
