/*
 * The overlay probe's answer, kept (cow.h: cow_probe_cached). A probe
 * makes a scratch layer, forks a child that mounts an overlay over it and
 * cleans up: 14 ms, paid by every run and every queue job before this.
 * What it finds depends on the kernel, the user and the filesystem under
 * the state directory (where layers live), so the answer is kept per
 * kernel release, effective uid, state directory path and that
 * directory's device, in a file of the state directory: never in the
 * workspace, which is the agents' (and a job's submitter's) to write.
 *
 * The file is believed only when every line is as this process would
 * write it: owned by us, a regular file not writable by others, the
 * format's first line, each key in order. Anything else (another uid's,
 * another kernel's, a torn or hostile write) is ignored, and the probe
 * runs and writes it again, whole, by rename.
 *
 * Only an answer that holds for the next runs is kept: a "no" is the
 * kernel's refusal (cow_mount.c), never a probe that failed (-1), and
 * nothing a non-dumpable process probed: its child may not write its own
 * uid_map, so for an ordinary user it always says no.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "common/xdg.h"
#include "workspace/cow.h"

#define COW_PROBE_CACHE_MAGIC	"warren-overlay-probe 1"
#define COW_PROBE_CACHE_MAX	4096

/* What the answer holds for. */
struct cow_probe_key {
	char		 kernel[65];
	unsigned long	 uid;
	unsigned long	 dev;
	const char	*statedir;
};

static int
cow_probe_cache_key(const char *statedir, struct cow_probe_key *k)
{
	struct utsname	 u;
	struct stat	 st;

	if (uname(&u) == -1 || stat(statedir, &st) == -1)
		return -1;
	snprintf(k->kernel, sizeof(k->kernel), "%s", u.release);
	k->uid = (unsigned long)geteuid();
	k->dev = (unsigned long)st.st_dev;
	k->statedir = statedir;
	return 0;
}

/* The file's text for key and answer (why: a "no"'s reason, one line). */
static int
cow_probe_cache_text(const struct cow_probe_key *k, int yes,
    const char *why, char *buf, size_t sz)
{
	size_t	 i, n;

	n = (size_t)snprintf(buf, sz, COW_PROBE_CACHE_MAGIC "\nkernel %s\n"
	    "uid %lu\ndev %lu\nstate %s\nanswer %s\nwhy ", k->kernel, k->uid,
	    k->dev, k->statedir, yes ? "yes" : "no");
	if (n + 2 >= sz)
		return -1;
	/* One line of text, cut to fit. */
	for (i = 0; !yes && why[i] != '\0' && n + 2 < sz; i++)
		buf[n++] = (unsigned char)why[i] < 0x20 || why[i] == 0x7f ?
		    ' ' : why[i];
	buf[n++] = '\n';
	buf[n] = '\0';
	return 0;
}

/* The file's bytes, if it is ours to believe; -1 otherwise. */
static ssize_t
cow_probe_cache_load(const char *path, char *buf, size_t sz)
{
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	/* O_NONBLOCK: a FIFO put there must not hold the command. */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022) != 0 ||
	    st.st_size <= 0 || (size_t)st.st_size >= sz) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, sz - 1);
	close(fd);
	if (n != st.st_size)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * The kept answer for k: 1 yes, 0 no (why filled), -1 none to believe.
 * The file must read exactly as this process would write it, why aside.
 */
static int
cow_probe_cache_read(const char *path, const struct cow_probe_key *k,
    char *why, size_t whysz)
{
	char	 buf[COW_PROBE_CACHE_MAX], want[COW_PROBE_CACHE_MAX];
	char	*p, *end;
	size_t	 head;
	int	 yes;

	if (cow_probe_cache_load(path, buf, sizeof(buf)) == -1)
		return -1;
	for (yes = 1; yes >= 0; yes--) {
		if (cow_probe_cache_text(k, yes, "", want, sizeof(want)) == -1)
			return -1;
		head = strlen(want) - 1;	/* up to "why " */
		if (strncmp(buf, want, head) == 0)
			break;
	}
	if (yes < 0)
		return -1;
	p = buf + head;
	if ((end = strchr(p, '\n')) == NULL || end[1] != '\0' ||
	    (yes && end != p))
		return -1;
	*end = '\0';
	for (end = p; *end != '\0'; end++)
		if ((unsigned char)*end < 0x20 || *end == 0x7f)
			return -1;
	if (!yes)
		snprintf(why, whysz, "%s", *p != '\0' ? p : "the kept answer "
		    "gives no reason");
	return yes;
}

/* Keep the answer: a new file renamed over the old one. */
static int
cow_probe_cache_write(const char *path, const struct cow_probe_key *k,
    int yes, const char *why)
{
	char	 buf[COW_PROBE_CACHE_MAX], tmp[PATH_MAX + 16];
	size_t	 len;
	int	 fd, e;

	if (cow_probe_cache_text(k, yes, why, buf, sizeof(buf)) == -1 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	len = strlen(buf);
	if (write(fd, buf, len) != (ssize_t)len || fchmod(fd, 0600) == -1 ||
	    close(fd) == -1 || rename(tmp, path) == -1) {
		e = errno != 0 ? errno : EIO;
		(void)unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

int
cow_probe_cached(const char *statedir, unsigned flags, int *probed,
    char *why, size_t whysz)
{
	struct cow_probe_key	 k;
	char			 sd[PATH_MAX], path[PATH_MAX + 32];
	int			 rc;

	*probed = 0;
	if (statedir == NULL) {
		if (xdg_state_dir(sd, sizeof(sd)) == -1) {
			snprintf(why, whysz, "no state directory (set HOME "
			    "or XDG_STATE_HOME): %s", strerror(errno));
			return -1;
		}
		statedir = sd;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/" COW_PROBE_CACHE,
	    statedir) >= sizeof(path) || path_mkdirs(statedir, 0700, 0) ==
	    -1 || cow_probe_cache_key(statedir, &k) == -1) {
		*probed = COW_PROBED_UNKEPT;
		return cow_probe_overlay(statedir, why, whysz);
	}
	if (!(flags & COW_PROBE_AGAIN) &&
	    (rc = cow_probe_cache_read(path, &k, why, whysz)) != -1)
		return rc;
	*probed = COW_PROBED;
	if ((rc = cow_probe_overlay(statedir, why, whysz)) == -1)
		return rc;
	if (prctl(PR_GET_DUMPABLE) != 1) {
		*probed = COW_PROBED_UNKEPT;
		errno = EPERM;
	} else if (cow_probe_cache_write(path, &k, rc, why) == -1)
		*probed = COW_PROBED_UNKEPT;
	return rc;
}

int
cow_probe_forget(const char *statedir)
{
	char	 path[PATH_MAX + 32];

	if ((size_t)snprintf(path, sizeof(path), "%s/" COW_PROBE_CACHE,
	    statedir) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (unlink(path) == -1 && errno != ENOENT)
		return -1;
	return 0;
}
