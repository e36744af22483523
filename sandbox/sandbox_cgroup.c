/*
 * A pids cgroup per sandboxed child: the fork-bomb bound that works for
 * uid 0, where RLIMIT_NPROC is not enforced.
 *
 * cgroup v2 is used when the pids controller is enabled below our own
 * group, v1 when a "pids" hierarchy is mounted; both need write access to
 * the parent group (root, or a delegated subtree). The parent creates the
 * group before fork, the child joins it first thing, and the parent kills
 * what is left and removes it after the child is reaped.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#define CGROUP_RETRIES	200

static int
sandbox_cgroup_write(const char *dir, const char *file, const char *val)
{
	char	 path[PATH_MAX];
	int	 fd, saved;
	ssize_t	 n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, val, strlen(val));
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static ssize_t
sandbox_cgroup_read(const char *path, char *buf, size_t len)
{
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* 1 if a comma-separated option list holds opt. */
static int
sandbox_cgroup_has_opt(char *opts, const char *opt)
{
	char	*s, *save;

	for (s = strtok_r(opts, ",", &save); s != NULL;
	    s = strtok_r(NULL, ",", &save))
		if (strcmp(s, opt) == 0)
			return 1;
	return 0;
}

/*
 * Where the cgroup2 hierarchy (v2) and the v1 hierarchy holding the pids
 * controller (v1) are mounted, "" if not: one pass over mountinfo, which
 * the kernel generates afresh on every read. A mountinfo line is "id
 * parent dev root mnt opts [tags...] - fstype source superopts".
 */
static void
sandbox_cgroup_mounts(char *v2, char *v1, size_t len)
{
	char	*line = NULL, *p, *save, *f[32];
	size_t	 cap = 0;
	FILE	*fp;
	int	 nf, i, sep;

	v2[0] = v1[0] = '\0';
	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return;
	while ((v2[0] == '\0' || v1[0] == '\0') &&
	    getline(&line, &cap, fp) != -1) {
		nf = 0;
		for (p = strtok_r(line, " \n", &save); p != NULL && nf < 32;
		    p = strtok_r(NULL, " \n", &save))
			f[nf++] = p;
		for (sep = -1, i = 6; i < nf; i++)
			if (strcmp(f[i], "-") == 0) {
				sep = i;
				break;
			}
		if (sep == -1 || sep + 3 >= nf || strlen(f[4]) >= len)
			continue;
		if (v2[0] == '\0' && strcmp(f[sep + 1], "cgroup2") == 0)
			strlcpy(v2, f[4], len);
		else if (v1[0] == '\0' && strcmp(f[sep + 1], "cgroup") == 0 &&
		    sandbox_cgroup_has_opt(f[sep + 3], "pids"))
			strlcpy(v1, f[4], len);
	}
	free(line);
	fclose(fp);
}

/* Our own group in the hierarchy named by ctl ("" = v2, "pids" = v1). */
static int
sandbox_cgroup_self(const char *ctl, char *out, size_t len)
{
	char	 buf[4096], *line, *save, *c1, *c2;

	if (sandbox_cgroup_read("/proc/self/cgroup", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((c1 = strchr(line, ':')) == NULL ||
		    (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		if ((*ctl == '\0' && strcmp(line, "0") == 0 &&
		    c1[1] == '\0') || (*ctl != '\0' &&
		    sandbox_cgroup_has_opt(c1 + 1, ctl))) {
			if (strlcpy(out, c2 + 1, len) >= len)
				return -1;
			return 0;
		}
	}
	return -1;
}

static int
sandbox_cgroup_has_word(const char *path, const char *word)
{
	char	 buf[1024], *w, *save;

	if (sandbox_cgroup_read(path, buf, sizeof(buf)) < 0)
		return 0;
	for (w = strtok_r(buf, " \n", &save); w != NULL;
	    w = strtok_r(NULL, " \n", &save))
		if (strcmp(w, word) == 0)
			return 1;
	return 0;
}

/* Fills c->cgroup and c->cgroup_path with a group we may create under. */
int
sandbox_cgroup_find(struct sandbox_caps *c)
{
	char	 mnt[PATH_MAX], v1[PATH_MAX], self[PATH_MAX], dir[PATH_MAX];
	char	 f[PATH_MAX];

	c->cgroup = 0;
	c->cgroup_path[0] = '\0';
	sandbox_cgroup_mounts(mnt, v1, sizeof(mnt));
	if (mnt[0] != '\0' &&
	    sandbox_cgroup_self("", self, sizeof(self)) == 0 &&
	    (size_t)snprintf(dir, sizeof(dir), "%s%s", mnt,
	    strcmp(self, "/") == 0 ? "" : self) < sizeof(dir) &&
	    access(dir, W_OK) == 0) {
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
		if (sandbox_cgroup_has_word(f, "pids")) {
			strlcpy(c->cgroup_path, dir, sizeof(c->cgroup_path));
			c->cgroup = 2;
			return 0;
		}
	}
	/* Our own group is a leaf (a systemd scope): root may still create
	 * groups under the hierarchy's root, exempt from the rule that only
	 * leaves hold processes. */
	if (geteuid() == 0 && mnt[0] != '\0' && access(mnt, W_OK) == 0) {
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", mnt);
		if (sandbox_cgroup_has_word(f, "pids")) {
			strlcpy(c->cgroup_path, mnt, sizeof(c->cgroup_path));
			c->cgroup = 2;
			return 0;
		}
	}
	if (v1[0] != '\0' &&
	    sandbox_cgroup_self("pids", self, sizeof(self)) == 0 &&
	    (size_t)snprintf(dir, sizeof(dir), "%s%s", v1,
	    strcmp(self, "/") == 0 ? "" : self) < sizeof(dir) &&
	    access(dir, W_OK) == 0) {
		strlcpy(c->cgroup_path, dir, sizeof(c->cgroup_path));
		c->cgroup = 1;
		return 0;
	}
	return -1;
}

int
sandbox_cgroup_create(struct sandbox *sb, struct sandbox_error *e)
{
	static unsigned	 seq;
	char		 val[32];

	if ((size_t)snprintf(sb->cgroup, sizeof(sb->cgroup),
	    "%s/warren-%ld-%u", sb->caps.cgroup_path, (long)getpid(),
	    seq++) >= sizeof(sb->cgroup))
		return sandbox_fail(e, SANDBOX_PIDS, ENAMETOOLONG,
		    "cgroup path under %s", sb->caps.cgroup_path);
	if (mkdir(sb->cgroup, 0755) == -1) {
		sb->cgroup[0] = '\0';
		return sandbox_fail(e, SANDBOX_PIDS, errno, "mkdir %s",
		    sb->cgroup);
	}
	snprintf(val, sizeof(val), "%llu",
	    (unsigned long long)sb->policy.limits.nproc);
	if (sb->policy.limits.nproc != 0 &&
	    sandbox_cgroup_write(sb->cgroup, "pids.max", val) == -1) {
		sandbox_fail(e, SANDBOX_PIDS, errno, "write %s/pids.max",
		    sb->cgroup);
		rmdir(sb->cgroup);
		sb->cgroup[0] = '\0';
		return -1;
	}
	sb->cgroup_version = sb->caps.cgroup;
	return 0;
}

/* In the child: move ourselves in (pid 0 means the writer). */
int
sandbox_cgroup_join(const char *path, struct sandbox_error *e)
{
	if (sandbox_cgroup_write(path, "cgroup.procs", "0") == -1)
		return sandbox_fail(e, SANDBOX_PIDS, errno,
		    "join %s/cgroup.procs", path);
	return 0;
}

/* Kill every process in the group; returns how many were signalled. */
int
sandbox_cgroup_kill(const char *path, int version)
{
	char	 f[PATH_MAX], buf[8192], *p, *end;
	long	 pid;
	int	 n = 0;

	if (path[0] == '\0')
		return 0;
	if (version == 2 && sandbox_cgroup_write(path, "cgroup.kill",
	    "1") == 0)
		return 1;
	snprintf(f, sizeof(f), "%s/cgroup.procs", path);
	if (sandbox_cgroup_read(f, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; *p != '\0'; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
		while (*end == '\n')
			end++;
	}
	return n;
}

void
sandbox_cgroup_remove(const char *path, int version)
{
	struct timespec	 ts = { 0, 5 * 1000 * 1000 };
	int		 i;

	if (path[0] == '\0')
		return;
	for (i = 0; i < CGROUP_RETRIES; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			return;
		sandbox_cgroup_kill(path, version);
		nanosleep(&ts, NULL);
	}
}

/*
 * The groups a spawner killed by SIGKILL could not remove: "warren-PID-N"
 * under base whose PID is gone, or is ours (we have made none yet, and a
 * dead spawner's group under our reused PID would collide with ours).
 * Only empty groups go (rmdir refuses the others), and nothing is killed:
 * another live PID, even a reused one, keeps its groups.
 */
int
sandbox_cgroup_sweep_dir(const char *base)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], *end;
	long		 pid;
	int		 n = 0;

	if (base[0] == '\0' || (d = opendir(base)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "warren-", 7) != 0)
			continue;
		errno = 0;
		pid = strtol(de->d_name + 7, &end, 10);
		if (errno != 0 || end == de->d_name + 7 || *end != '-' ||
		    pid <= 0 || strspn(end + 1, "0123456789") == 0 ||
		    end[1 + strspn(end + 1, "0123456789")] != '\0')
			continue;
		if ((pid_t)pid != getpid() &&
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", base,
		    de->d_name) < sizeof(path) && rmdir(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}
