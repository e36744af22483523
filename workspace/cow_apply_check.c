/*
 * warren apply's check (cow_apply.c runs what it decides): every change
 * against the workspace as it is now, before anything is written. The
 * entry must still be the run's base, or be the layer's already (an
 * apply that was killed); else it is a conflict. What apply could not
 * carry or could not do there is refused: a FIFO or device, a directory
 * the user cannot write, a mode of a directory that is not theirs, a
 * deleted directory that still holds what is left out. So an apply
 * writes all or nothing, save for what only the write can tell (a full
 * disk). cow_apply_verdict decides each change; cow_apply_check_one
 * prints it.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/str.h"
#include "workspace/cow.h"
#include "workspace/cow_apply_int.h"
#include "workspace/cow_int.h"
#include "workspace/cow_walk.h"

static int
cow_apply_special(mode_t m)
{
	return !S_ISREG(m) && !S_ISLNK(m) && !S_ISDIR(m);
}

/* NULL if the entry is still the change's base, else what changed. */
static const char *
cow_apply_base_diff(const struct cow_apply *a, const struct cow_change *ch,
    const struct stat *sb)
{
	if (ch->base_by == COW_BASE_STAT)
		return cow_base_stat_diff(sb, &ch->base);
	return cow_base_sum_diff(a->rootfd, ch, sb);
}

/* Is a directory on path's way one that apply creates? Then the walk
 * cannot find path yet, and must not. */
static int
cow_apply_under_new(const struct cow_apply *a, const char *path)
{
	const struct cow_change	*p;
	char			 buf[PATH_MAX], *slash;
	enum cow_act		 act;

	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf))
		return 0;
	while ((slash = strrchr(buf, '/')) != NULL) {
		*slash = '\0';
		if ((p = cow_walk_find(a->ch, buf)) != NULL) {
			act = a->act[p - a->ch->v];
			return act == ACT_MKDIR || act == ACT_MKDIR_REPLACE;
		}
	}
	return 0;
}

/* The workspace's entry at the change's path: 0 there (in *sb), 1 absent,
 * 2 a directory on the way is a link or not a directory, -1 error. */
static int
cow_apply_current(struct cow_apply *a, const char *path, struct stat *sb)
{
	char	*e;

	memset(sb, 0, sizeof(*sb));
	if (cow_walk_lstat(a->rootfd, path, sb) == 0)
		return 0;
	memset(sb, 0, sizeof(*sb));
	if (errno == ENOENT || ((errno == ELOOP || errno == ENOTDIR) &&
	    cow_apply_under_new(a, path)))
		return 1;
	if (errno == ELOOP || errno == ENOTDIR)
		return 2;
	e = str_escape_dup(path, strlen(path), 0);
	snprintf(a->err, a->errsz, "cannot look at %s in the workspace: %s",
	    e != NULL ? e : "?", strerror(errno));
	free(e);
	return -1;
}

/* Two open files with the same bytes? */
static int
cow_apply_same_bytes(int fa, int fb)
{
	char	ba[65536], bb[65536];
	ssize_t	na, nb;

	for (;;) {
		if ((na = read(fa, ba, sizeof(ba))) == -1 ||
		    (nb = read(fb, bb, (size_t)na)) != na)
			return 0;
		if (na == 0)
			return 1;
		if (memcmp(ba, bb, (size_t)na) != 0)
			return 0;
	}
}

/* Is the workspace's entry (sb, there) already the layer's? */
static int
cow_apply_same_new(const struct cow_apply *a, const struct cow_change *ch,
    const struct stat *sb)
{
	struct stat	 nb;
	char		 want[PATH_MAX], have[PATH_MAX];
	int		 fn, fo, same = 0;

	if ((sb->st_mode & S_IFMT) != (ch->new_mode & S_IFMT))
		return 0;
	if (S_ISDIR(sb->st_mode) || S_ISREG(sb->st_mode))
		if ((sb->st_mode & 07777) != cow_apply_perms(a, ch))
			return 0;
	if (S_ISDIR(sb->st_mode))
		return 1;
	if ((fn = cow_walk_src(a->c, ch, want, sizeof(want))) == -1)
		return 0;
	if (fn == -2)
		return cow_walk_readlink(a->rootfd, ch->path, have,
		    sizeof(have)) == 0 && strcmp(want, have) == 0;
	if (fstat(fn, &nb) == 0 && S_ISREG(nb.st_mode) &&
	    nb.st_size == sb->st_size && (fo = cow_walk_open(a->rootfd,
	    ch->path, O_RDONLY | O_NONBLOCK)) != -1) {
		same = cow_apply_same_bytes(fo, fn);
		close(fo);
	}
	close(fn);
	return same;
}

/*
 * What the check makes of one change: what apply will do with it, or why
 * it cannot: a conflict (the workspace is not the run's base any more) or
 * a refusal (apply cannot carry it, or cannot write there). One function
 * decides (cow_apply_verdict); cow_apply_check_one prints and counts.
 */
enum cow_verdict_kind {
	VERDICT_GO = 0,
	VERDICT_CONFLICT,
	VERDICT_REFUSED,
};

struct cow_verdict {
	enum cow_verdict_kind	 kind;
	enum cow_act		 act;
	const char		*why;	/* a constant, or buf */
	char			 buf[NAME_MAX + PATH_MAX + 160];
};

static int
cow_apply_no(struct cow_verdict *v, enum cow_verdict_kind kind,
    const char *why)
{
	v->kind = kind;
	v->why = why;
	return 0;
}

/* A directory that goes must hold only what goes with it: anything else
 * in it now was not in the base (the user's, made since the run began),
 * or is left out (it runs code on the host): either would make its
 * removal fail half way, after the renames. 1 (v says why) or 0. */
static int
cow_apply_dir_extra(struct cow_apply *a, const char *path,
    struct cow_verdict *v)
{
	const struct cow_change	*p;
	struct dirent		*de;
	DIR			*d;
	char			 sub[PATH_MAX], *e;
	int			 fd, found = 0;

	if ((fd = cow_walk_open(a->rootfd, path, O_RDONLY | O_DIRECTORY)) ==
	    -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		cow_apply_no(v, VERDICT_CONFLICT, "its directory cannot be "
		    "read");
		return 1;
	}
	while (!found && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") ==
		    0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		p = cow_walk_find(a->ch, sub);
		if (p != NULL && p->kind == COW_DELETED &&
		    cow_review_held(p, a->flags) == NULL)
			continue;
		e = str_escape_dup(de->d_name, strlen(de->d_name), 0);
		snprintf(v->buf, sizeof(v->buf), "the directory holds %s, %s",
		    e != NULL ? e : "?", p == NULL || p->kind != COW_DELETED ?
		    "which the run's base did not have" : "which runs code on "
		    "the host and is left out without --include-sensitive");
		free(e);
		cow_apply_no(v, VERDICT_CONFLICT, v->buf);
		found = 1;
	}
	closedir(d);
	return found;
}

/* A file or directory made in a directory that must be there or be made
 * first; the temporary's directory must fit on a journal line. NULL, or
 * why not. */
static const char *
cow_apply_parent_bad(struct cow_apply *a, const char *path)
{
	struct stat	 sb;
	const char	*slash = strrchr(path, '/');
	char		 dir[PATH_MAX];

	if (slash == NULL)
		return NULL;
	if (memchr(path, '\n', (size_t)(slash - path)) != NULL)
		return "a directory on its path has a newline in its name: "
		    "apply cannot journal it";
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (cow_apply_under_new(a, path) || (cow_walk_lstat(a->rootfd, dir,
	    &sb) == 0 && S_ISDIR(sb.st_mode)))
		return NULL;
	return "its directory is gone from the workspace or is no longer a "
	    "directory";
}

/* The entry is still the base's: what to do with it. */
static int
cow_apply_decide(struct cow_apply *a, size_t i, int absent,
    struct cow_verdict *v)
{
	const struct cow_change	*ch = &a->ch->v[i];
	const struct stat	*sb = &a->cur[i];
	const char		*bad;

	if (ch->kind == COW_DELETED) {
		if (!absent && S_ISDIR(sb->st_mode) &&
		    cow_apply_dir_extra(a, ch->path, v))
			return 0;
		v->act = absent ? ACT_DONE : ACT_DELETE;
		return 0;
	}
	if (S_ISDIR(ch->new_mode) && !absent) {
		if (!S_ISDIR(sb->st_mode))
			v->act = ACT_MKDIR_REPLACE;
		else if ((sb->st_mode & 07777) != cow_apply_perms(a, ch))
			v->act = ACT_CHMOD;
		return 0;
	}
	if (!S_ISDIR(ch->new_mode) && !absent && S_ISDIR(sb->st_mode) &&
	    cow_apply_dir_extra(a, ch->path, v))
		return 0;
	if ((bad = cow_apply_parent_bad(a, ch->path)) != NULL)
		return cow_apply_no(v, VERDICT_CONFLICT, bad);
	v->act = S_ISDIR(ch->new_mode) ? ACT_MKDIR : !absent &&
	    S_ISDIR(sb->st_mode) ? ACT_WRITE_LATE : ACT_WRITE;
	return 0;
}

/* A file that becomes a directory, or the other way round: apply removes
 * the one before it makes the other, so a killed apply may leave neither
 * there. */
static int
cow_apply_retype(const struct cow_change *ch)
{
	return ch->kind == COW_MODIFIED &&
	    S_ISDIR(ch->base.mode) != S_ISDIR(ch->new_mode);
}

/* What the workspace's entry says when it is not the base: r from
 * cow_apply_current, why what differs. */
static void
cow_apply_not_base(struct cow_apply *a, size_t i, int r, const char *why,
    struct cow_verdict *v)
{
	const struct cow_change	*ch = &a->ch->v[i];
	const struct stat	*sb = &a->cur[i];

	if (r == 0 && ch->kind != COW_DELETED && S_ISDIR(sb->st_mode) &&
	    S_ISDIR(ch->new_mode) && (ch->kind == COW_ADDED ||
	    cow_apply_retype(ch) || (sb->st_mode & 07777) ==
	    cow_apply_perms(a, ch)))
		/* Made by an apply that was killed before its modes were
		 * set, or by the user: only its mode may be left to do. */
		v->act = (sb->st_mode & 07777) == cow_apply_perms(a, ch) ?
		    ACT_DONE : ACT_CHMOD;
	else if ((r == 1 && ch->kind == COW_DELETED) || (r == 0 &&
	    ch->kind != COW_DELETED && cow_apply_same_new(a, ch, sb)))
		v->act = ACT_DONE;
	else
		cow_apply_no(v, VERDICT_CONFLICT, why);
}

/*
 * Can apply do act in the directory of path (or, for a mode, to path)?
 * Checked here, before anything is written, so that a directory the user
 * made read-only refuses the whole apply instead of failing half way,
 * after other files were renamed. A directory apply makes is its own.
 */
static const char *
cow_apply_cannot(struct cow_apply *a, size_t i, struct cow_verdict *v)
{
	const struct cow_change	*ch = &a->ch->v[i];
	const char		*slash = strrchr(ch->path, '/');
	char			 dir[PATH_MAX], *e;
	int			 fd, rc;

	if (v->act == ACT_CHMOD && geteuid() != 0 &&
	    a->cur[i].st_uid != geteuid())
		return "its mode cannot be set: the directory is not yours";
	if (v->act == ACT_NONE || v->act == ACT_DONE || v->act == ACT_SKIP ||
	    v->act == ACT_CHMOD || cow_apply_under_new(a, ch->path))
		return NULL;
	snprintf(dir, sizeof(dir), "%.*s", slash == NULL ? 1 :
	    (int)(slash - ch->path), slash == NULL ? "." : ch->path);
	fd = slash == NULL ? dup(a->rootfd) : cow_walk_open(a->rootfd, dir,
	    O_RDONLY | O_DIRECTORY);
	rc = fd == -1 ? -1 : faccessat(fd, ".", W_OK | X_OK, AT_EACCESS);
	if (fd != -1)
		close(fd);
	if (rc == 0)
		return NULL;
	e = str_escape_dup(dir, strlen(dir), 0);
	snprintf(v->buf, sizeof(v->buf), "its directory %s cannot be written "
	    "(%s): make it writable and apply again", e != NULL ? e : "?",
	    strerror(errno));
	free(e);
	return v->buf;
}

/* The verdict on change i (v), or -1: the workspace could not be read. */
static int
cow_apply_verdict(struct cow_apply *a, size_t i, struct cow_verdict *v)
{
	const struct cow_change	*ch = &a->ch->v[i];
	const char		*why = NULL;
	int			 r;

	memset(v, 0, sizeof(*v));
	if (ch->kind == COW_UNSUPPORTED || (ch->kind != COW_DELETED &&
	    cow_apply_special(ch->new_mode)))
		return cow_apply_no(v, VERDICT_REFUSED, "a FIFO, socket, "
		    "device or overlay redirect, which apply cannot carry");
	if (cow_review_held(ch, a->flags) != NULL) {
		v->act = ACT_SKIP;
		return 0;
	}
	if ((r = cow_apply_current(a, ch->path, &a->cur[i])) == -1)
		return -1;
	if (r == 2)
		why = "a directory on its path is now a link or not a directory";
	else if (ch->kind == COW_ADDED && r == 0)
		why = "it was created in the workspace since the run started";
	else if (ch->kind != COW_ADDED && r == 1 && !cow_apply_retype(ch))
		why = "it was removed from the workspace since the run started";
	else if (ch->kind != COW_ADDED && r == 0)
		why = cow_apply_base_diff(a, ch, &a->cur[i]);
	if (why == NULL)
		cow_apply_decide(a, i, r == 1, v);
	else
		cow_apply_not_base(a, i, r, why, v);
	if (v->kind == VERDICT_GO && (why = cow_apply_cannot(a, i, v)) != NULL)
		cow_apply_no(v, VERDICT_REFUSED, why);
	return 0;
}

/* One change against the workspace: its act set, or its conflict or
 * refusal printed and counted; -1 error. */
static int
cow_apply_check_one(struct cow_apply *a, size_t i)
{
	struct cow_verdict	v;

	if (cow_apply_verdict(a, i, &v) == -1)
		return -1;
	switch (v.kind) {
	case VERDICT_GO:
		a->act[i] = v.act;
		break;
	case VERDICT_CONFLICT:
		cow_apply_say(a, "conflict:", a->ch->v[i].path, v.why);
		a->nconflicts++;
		break;
	case VERDICT_REFUSED:
		cow_apply_say(a, "refused:", a->ch->v[i].path, v.why);
		a->nrefused++;
		break;
	}
	return 0;
}

/* The paths left out, each with why: what runs it on the host, or what
 * the diff could not show (cow_review_held); a count of each. */
static void
cow_apply_left_out(struct cow_apply *a)
{
	const struct cow_change	*ch;
	char			 why[256];
	size_t			 i, nsens = 0, nunrev = 0;

	for (i = 0; i < a->ch->n; i++) {
		if (a->act[i] != ACT_SKIP)
			continue;
		ch = &a->ch->v[i];
		if (cow_review_held(ch, a->flags) == ch->sensitive) {
			snprintf(why, sizeof(why), "runs on the host: %s",
			    ch->sensitive);
			nsens++;
		} else {
			snprintf(why, sizeof(why), "unreviewed: %s",
			    ch->unreviewed);
			nunrev++;
		}
		cow_apply_say(a, "left out:", ch->path, why);
	}
	if (nsens > 0)
		fprintf(a->out, "%zu path%s that run%s code on the host left "
		    "out: review them with `warren diff`, apply them with "
		    "--include-sensitive\n", nsens, nsens == 1 ? "" : "s",
		    nsens == 1 ? "s" : "");
	if (nunrev > 0)
		fprintf(a->out, "%zu file%s the diff cannot show left out: "
		    "review %s another way, apply %s with "
		    "--include-unreviewed\n", nunrev, nunrev == 1 ? "" : "s",
		    nunrev == 1 ? "it" : "them", nunrev == 1 ? "it" : "them");
}

/* Every change checked; the paths left out named. 0 go on, 1 refused,
 * -1 error. */
int
cow_apply_check(struct cow_apply *a)
{
	size_t	 i;

	for (i = 0; i < a->ch->n; i++)
		if (cow_apply_check_one(a, i) == -1)
			return -1;
	if (cow_apply_folds(a) == -1) {
		snprintf(a->err, a->errsz, "apply: checking names the "
		    "workspace folds: %s", strerror(errno));
		return -1;
	}
	cow_apply_left_out(a);
	if (a->nconflicts == 0 && a->nrefused == 0)
		return 0;
	fprintf(a->out, "nothing applied (%zu conflict%s, %zu refused): the "
	    "workspace is unchanged\n", a->nconflicts,
	    a->nconflicts == 1 ? "" : "s", a->nrefused);
	return 1;
}
