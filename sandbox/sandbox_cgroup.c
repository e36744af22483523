/*
 * A pids and a memory cgroup per sandboxed child: the fork-bomb bound that
 * works for uid 0, where RLIMIT_NPROC is not enforced, and the memory
 * bound that counts what RLIMIT_AS does not (memfd and tmpfs pages, page
 * cache, pipe buffers).
 *
 * For each controller cgroup v2 is used when it is enabled below our own
 * group (or, for root, at the hierarchy's root), v1 when a hierarchy with
 * it is mounted; both need write access to the parent group (root, or a
 * delegated subtree). Under v2 one group holds both limits; under v1 each
 * hierarchy has its own group. The parent creates the groups before fork,
 * the child joins them first thing, and the parent kills what is left and
 * removes them after the child is reaped.
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

/* 1 if a comma-separated option list holds opt (opts is not changed). */
static int
sandbox_cgroup_has_opt(const char *opts, const char *opt)
{
	const char	*s, *end;
	size_t		 n = strlen(opt);

	for (s = opts; *s != '\0'; s = *end != '\0' ? end + 1 : end) {
		end = strchrnul(s, ',');
		if ((size_t)(end - s) == n && strncmp(s, opt, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * Where the cgroup2 hierarchy (v2) and the v1 hierarchies holding the pids
 * (v1) and memory (v1m) controllers are mounted, "" if not: one pass over
 * mountinfo, which the kernel generates afresh on every read. A mountinfo
 * line is "id parent dev root mnt opts [tags...] - fstype source
 * superopts".
 */
static void
sandbox_cgroup_mounts(char *v2, char *v1, char *v1m, size_t len)
{
	char	*line = NULL, *p, *save, *f[32];
	size_t	 cap = 0;
	FILE	*fp;
	int	 nf, i, sep;

	v2[0] = v1[0] = v1m[0] = '\0';
	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return;
	while ((v2[0] == '\0' || v1[0] == '\0' || v1m[0] == '\0') &&
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
		else if (strcmp(f[sep + 1], "cgroup") != 0)
			continue;
		else if (v1[0] == '\0' && sandbox_cgroup_has_opt(f[sep + 3],
		    "pids"))
			strlcpy(v1, f[4], len);
		else if (v1m[0] == '\0' && sandbox_cgroup_has_opt(f[sep + 3],
		    "memory"))
			strlcpy(v1m, f[4], len);
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

/*
 * The v2 group we may create groups with controller ctl under: our own if
 * it delegates ctl to its children, else (root) the hierarchy's root,
 * exempt from the rule that only leaves hold processes (our own group is
 * then a leaf, a systemd scope). 0 and out filled, or -1.
 */
static int
sandbox_cgroup_find_v2(const char *mnt, const char *ctl, char *out,
    size_t len)
{
	char	 self[PATH_MAX], dir[PATH_MAX], f[PATH_MAX];

	if (mnt[0] == '\0')
		return -1;
	if (sandbox_cgroup_self("", self, sizeof(self)) == 0 &&
	    (size_t)snprintf(dir, sizeof(dir), "%s%s", mnt,
	    strcmp(self, "/") == 0 ? "" : self) < sizeof(dir) &&
	    access(dir, W_OK) == 0) {
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
		if (sandbox_cgroup_has_word(f, ctl))
			return strlcpy(out, dir, len) < len ? 0 : -1;
	}
	if (geteuid() == 0 && access(mnt, W_OK) == 0) {
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", mnt);
		if (sandbox_cgroup_has_word(f, ctl))
			return strlcpy(out, mnt, len) < len ? 0 : -1;
	}
	return -1;
}

/* Our own group in the v1 hierarchy of ctl mounted at mnt, if writable. */
static int
sandbox_cgroup_find_v1(const char *mnt, const char *ctl, char *out,
    size_t len)
{
	char	 self[PATH_MAX];

	if (mnt[0] == '\0' || sandbox_cgroup_self(ctl, self,
	    sizeof(self)) == -1 || (size_t)snprintf(out, len, "%s%s", mnt,
	    strcmp(self, "/") == 0 ? "" : self) >= len ||
	    access(out, W_OK) == -1) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

/* Fills c->cgroup and c->cgroup_path with a group we may create pids
 * groups under, c->memcg and c->memcg_path for memory groups. */
int
sandbox_cgroup_find(struct sandbox_caps *c)
{
	char	 mnt[PATH_MAX], v1[PATH_MAX], v1m[PATH_MAX], f[PATH_MAX];

	c->cgroup = c->memcg = c->memsw = 0;
	c->cgroup_path[0] = c->memcg_path[0] = '\0';
	sandbox_cgroup_mounts(mnt, v1, v1m, sizeof(mnt));
	if (sandbox_cgroup_find_v2(mnt, "pids", c->cgroup_path,
	    sizeof(c->cgroup_path)) == 0)
		c->cgroup = 2;
	else if (sandbox_cgroup_find_v1(v1, "pids", c->cgroup_path,
	    sizeof(c->cgroup_path)) == 0)
		c->cgroup = 1;
	if (sandbox_cgroup_find_v2(mnt, "memory", c->memcg_path,
	    sizeof(c->memcg_path)) == 0) {
		c->memcg = 2;
		/* memory.swap.max comes with swap accounting; the root
		 * group has none of its own, so under it this says 0 even
		 * where a child's would be there (it is written if so). */
		snprintf(f, sizeof(f), "%s/memory.swap.max", c->memcg_path);
		c->memsw = access(f, F_OK) == 0;
	} else if (sandbox_cgroup_find_v1(v1m, "memory", c->memcg_path,
	    sizeof(c->memcg_path)) == 0) {
		c->memcg = 1;
		snprintf(f, sizeof(f), "%s/memory.memsw.limit_in_bytes",
		    c->memcg_path);
		c->memsw = access(f, F_OK) == 0;
	}
	return c->cgroup != 0 ? 0 : -1;
}

/* A new group "warren-PID-N" under parent, its path in out. */
static int
sandbox_cgroup_mkdir(char *out, size_t len, const char *parent,
    unsigned layer, struct sandbox_error *e)
{
	static unsigned	 seq;

	if ((size_t)snprintf(out, len, "%s/warren-%ld-%u", parent,
	    (long)getpid(), seq++) >= len) {
		out[0] = '\0';
		return sandbox_fail(e, layer, ENAMETOOLONG,
		    "cgroup path under %s", parent);
	}
	if (mkdir(out, 0755) == -1) {
		sandbox_fail(e, layer, errno, "mkdir %s", out);
		out[0] = '\0';
		return -1;
	}
	return 0;
}

int
sandbox_cgroup_create(struct sandbox *sb, struct sandbox_error *e)
{
	char		 val[32];

	if (sandbox_cgroup_mkdir(sb->cgroup, sizeof(sb->cgroup),
	    sb->caps.cgroup_path, SANDBOX_PIDS, e) == -1)
		return -1;
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

/* Write file of group dir, or say which; ENOENT is fine if optional. */
static int
sandbox_cgroup_set(const char *dir, const char *file, const char *val,
    int optional, struct sandbox_error *e)
{
	if (sandbox_cgroup_write(dir, file, val) == 0 ||
	    (optional && errno == ENOENT))
		return 0;
	return sandbox_fail(e, SANDBOX_MEMORY, errno, "write %s to %s/%s",
	    val, dir, file);
}

/*
 * The memory limit of group dir, swap included: v2 memory.max and
 * memory.swap.max 0; v1 memory.limit_in_bytes and, where swap is
 * accounted, memory.memsw.limit_in_bytes (the two together: memory plus
 * swap), else swappiness 0. v1 copies oom_kill_disable from the parent
 * group: set it to 0 so that a process at the limit is killed, not
 * left waiting for memory forever.
 */
static int
sandbox_cgroup_mem_limits(const char *dir, int version, rlim_t bytes,
    struct sandbox_error *e)
{
	char	 val[32];

	snprintf(val, sizeof(val), "%llu", (unsigned long long)bytes);
	if (version == 2)
		return sandbox_cgroup_set(dir, "memory.max", val, 0, e) == -1 ||
		    sandbox_cgroup_set(dir, "memory.swap.max", "0", 1,
		    e) == -1 ? -1 : 0;
	if (sandbox_cgroup_set(dir, "memory.limit_in_bytes", val, 0,
	    e) == -1 || sandbox_cgroup_set(dir, "memory.oom_control", "0", 0,
	    e) == -1)
		return -1;
	if (sandbox_cgroup_write(dir, "memory.memsw.limit_in_bytes",
	    val) == 0)
		return 0;
	if (errno != ENOENT)
		return sandbox_fail(e, SANDBOX_MEMORY, errno, "write %s to "
		    "%s/memory.memsw.limit_in_bytes", val, dir);
	return sandbox_cgroup_set(dir, "memory.swappiness", "0", 1, e);
}

int
sandbox_cgroup_create_mem(struct sandbox *sb, struct sandbox_error *e)
{
	rlim_t	 bytes = sb->policy.limits.mem_bytes;

	/* v2 with both controllers in one place: the pids group is it. */
	if (sb->caps.memcg == 2 && sb->cgroup[0] != '\0' &&
	    sb->cgroup_version == 2 &&
	    strcmp(sb->caps.memcg_path, sb->caps.cgroup_path) == 0) {
		if (sandbox_cgroup_mem_limits(sb->cgroup, 2, bytes, e) == -1)
			return -1;
		sb->memory = 1;
		return 0;
	}
	if (sandbox_cgroup_mkdir(sb->memcg, sizeof(sb->memcg),
	    sb->caps.memcg_path, SANDBOX_MEMORY, e) == -1)
		return -1;
	if (sandbox_cgroup_mem_limits(sb->memcg, sb->caps.memcg, bytes,
	    e) == -1) {
		rmdir(sb->memcg);
		sb->memcg[0] = '\0';
		return -1;
	}
	sb->memory = 1;
	return 0;
}

/*
 * In the child: move ourselves in (pid 0 means the writer). A write to
 * cgroup.procs moves a whole thread group, so the kernel takes the global
 * cgroup_threadgroup_rwsem for writing, and the first writer after a
 * quiet spell waits for an RCU grace period (rcu_sync_enter): 10-13 ms
 * here, paid by every `sandbox exec` (docs/benchmarks.md, "cgroup join").
 * Under v1 the child, single-threaded, writes its own thread to "tasks"
 * instead: the same move for a process of one thread, without that lock
 * (so on 6.18; a kernel that takes it for one thread as well costs what
 * cgroup.procs does, no more). v2 has no such file for a domain group
 * (cgroup.threads moves only within one).
 */
int
sandbox_cgroup_join(const char *path, int version, unsigned layer,
    struct sandbox_error *e)
{
	const char	*file = version == 1 ? "tasks" : "cgroup.procs";

	if (sandbox_cgroup_write(path, file, "0") == -1)
		return sandbox_fail(e, layer, errno, "join %s/%s", path, file);
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
 * The "oom_kill N" line of the memory group's events: v2 memory.events,
 * v1 memory.oom_control (kernels since 4.13). Under v2 the pids group may
 * be the memory group (sandbox_cgroup_create_mem).
 */
int
sandbox_oom_killed(const struct sandbox *sb)
{
	char		 f[PATH_MAX], buf[1024], *p;
	const char	*dir = sb->memcg;
	int		 v2 = sb->caps.memcg == 2;

	if (!sb->memory)
		return 0;
	if (dir[0] == '\0' && sb->cgroup_version == 2) {
		dir = sb->cgroup;
		v2 = 1;
	}
	if (dir[0] == '\0' || (size_t)snprintf(f, sizeof(f), "%s/%s", dir,
	    v2 ? "memory.events" : "memory.oom_control") >= sizeof(f) ||
	    sandbox_cgroup_read(f, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, "oom_kill ", 9) == 0)
			return strtoull(p + 9, NULL, 10) > 0;
	}
	return 0;
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
