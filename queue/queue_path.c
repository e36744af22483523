/*
 * Where the queue lives by default: queue.db, a SQLite file of its own
 * beside the state database (the same directory, found as store_path()
 * finds warren.db: WARREN_DB, else $XDG_STATE_HOME/warren). docs/queue.md
 * "Where the queue lives" says why it is not the state database itself:
 * SQLite has one write lock a file, and the queue's and the rate gate's
 * small writes must not wait behind every run's transcripts.
 *
 * An older warren kept the queue in the state database. queue_legacy()
 * finds such a queue, so that the commands can say where it is rather
 * than show an empty one.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "queue/queue.h"
#include "store/store.h"

#define QUEUE_FILE	"queue.db"

int
queue_url_default(const char *url)
{
	return url == NULL || *url == '\0';
}

int
queue_path(char *out, size_t outsz, const char *url)
{
	char	db[PATH_MAX], *slash;
	int	n;

	if (!queue_url_default(url))
		n = snprintf(out, outsz, "%s", url);
	else {
		if (store_path(db, sizeof(db), NULL) == -1)
			return -1;
		if ((slash = strrchr(db, '/')) == NULL)
			n = snprintf(out, outsz, "%s", QUEUE_FILE);
		else
			n = snprintf(out, outsz, "%.*s/%s",
			    (int)(slash - db), db, QUEUE_FILE);
	}
	if (n < 0 || (size_t)n >= outsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* One integer from a query on h; -1 if it fails. */
static int
queue_legacy_int(sqlite3 *h, const char *sql, int64_t *v)
{
	sqlite3_stmt	*s;
	int		 rc;

	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
queue_legacy(const char *statedb, int64_t *jobs, int64_t *open)
{
	struct stat	 sb;
	sqlite3		*h = NULL;
	int64_t		 tables = 0;
	int		 found = 0;

	*jobs = *open = 0;
	if (stat(statedb, &sb) == -1 || !S_ISREG(sb.st_mode))
		return 0;
	if (sqlite3_open_v2(statedb, &h, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK) {
		sqlite3_busy_timeout(h, 5000);
		found = queue_legacy_int(h, "SELECT count(*) FROM sqlite_master"
		    " WHERE type = 'table' AND name = 'queue_jobs'",
		    &tables) == 0 && tables > 0 &&
		    queue_legacy_int(h, "SELECT count(*) FROM queue_jobs",
		    jobs) == 0 && *jobs > 0 &&
		    queue_legacy_int(h, "SELECT count(*) FROM queue_jobs WHERE"
		    " status IN ('queued', 'running', 'retrying')", open) == 0;
	}
	sqlite3_close(h);
	return found;
}
