/*
 * cow_pack (cow.h): a run's changes as a change set another machine can
 * apply (cow_pack_int.h has the bytes). It runs on the machine that ran
 * the job, right after the run, where the layer and the workspace are:
 * each change's new content comes from the layer (agent-written: read
 * through cow_walk_src, which follows no link), and each base's content
 * from the workspace, but only while the workspace's entry is still what
 * the run's base manifest recorded; otherwise that base is packed
 * unknown and apply elsewhere calls the path a conflict rather than guess.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "workspace/cow.h"
#include "workspace/cow_int.h"
#include "workspace/cow_pack_int.h"
#include "workspace/cow_walk.h"

struct cow_pack {
	const struct cow	*c;
	int			 rootfd;	/* the workspace */
	struct buf		 b;
	size_t			 max;
	char			*err;
	size_t			 errsz;
};

static int
cow_pack_int(struct buf *b, uint64_t v, size_t n)
{
	unsigned char	le[8];
	size_t		i;

	for (i = 0; i < n; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	return buf_add(b, le, n);
}

/* The set would be over max: 1, with err naming where it got there. */
static int
cow_pack_full(struct cow_pack *p, const char *path)
{
	char	esc[512];

	snprintf(p->err, p->errsz, "the change set is over %zu bytes at %s: "
	    "it is kept on this machine only", p->max,
	    cow_esc(esc, sizeof(esc), path));
	return 1;
}

/* How the workspace here knows the base of ch, by content. */
static void
cow_pack_base(struct cow_pack *p, const struct cow_change *ch,
    enum cow_base_by *by, unsigned char sum[COW_SUM_LEN])
{
	struct stat	sb;

	*by = COW_BASE_UNKNOWN;
	memset(sum, 0, COW_SUM_LEN);
	if (cow_walk_lstat(p->rootfd, ch->path, &sb) == -1 ||
	    cow_base_stat_diff(&sb, &ch->base) != NULL ||
	    cow_base_sum(p->rootfd, ch->path, &sb, sum) == -1)
		return;
	*by = COW_BASE_SUM;
}

/* The new file's bytes after a u32 length: 0, 1 over max, -1. */
static int
cow_pack_file(struct cow_pack *p, const struct cow_change *ch, int fd)
{
	size_t	at = p->b.len, flen, i;
	ssize_t	n;

	if (cow_pack_int(&p->b, 0, 4) == -1)
		return -1;
	for (;;) {
		if (buf_reserve(&p->b, 65536) == -1)
			return -1;
		if ((n = read(fd, p->b.data + p->b.len, 65536)) == 0)
			break;
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p->b.len += (size_t)n;
		if (p->b.len > p->max)
			return cow_pack_full(p, ch->path);
	}
	flen = p->b.len - at - 4;
	for (i = 0; i < 4; i++)
		p->b.data[at + i] = (unsigned char)(flen >> (8 * i));
	return 0;
}

/* The change's new content: a file's bytes, a link's target, or none. */
static int
cow_pack_data(struct cow_pack *p, const struct cow_change *ch)
{
	char	target[PATH_MAX];
	int	fd, rc;

	if (ch->kind == COW_DELETED || ch->kind == COW_UNSUPPORTED ||
	    (!S_ISREG(ch->new_mode) && !S_ISLNK(ch->new_mode)))
		return cow_pack_int(&p->b, 0, 4);
	if ((fd = cow_walk_src(p->c, ch, target, sizeof(target))) == -2) {
		if (p->b.len + 4 + strlen(target) > p->max)
			return cow_pack_full(p, ch->path);
		return cow_pack_int(&p->b, strlen(target), 4) == -1 ? -1 :
		    buf_add(&p->b, target, strlen(target));
	}
	if (fd == -1)
		return -1;
	rc = cow_pack_file(p, ch, fd);
	close(fd);
	return rc;
}

static int
cow_pack_one(struct cow_pack *p, const struct cow_change *ch)
{
	enum cow_base_by	by = COW_BASE_STAT;
	unsigned char		sum[COW_SUM_LEN];
	size_t			plen = strlen(ch->path);

	memset(sum, 0, sizeof(sum));
	/* An unsupported entry may have no base (a FIFO an agent made). */
	if (ch->kind != COW_ADDED && ch->base.mode != 0)
		cow_pack_base(p, ch, &by, sum);
	if (p->b.len + COW_PACK_FIXED + plen > p->max)
		return cow_pack_full(p, ch->path);
	if (cow_pack_int(&p->b, ch->kind, 1) == -1 ||
	    cow_pack_int(&p->b, by, 1) == -1 ||
	    cow_pack_int(&p->b, ch->kind == COW_ADDED ? 0 : ch->base.mode,
	    4) == -1 || buf_add(&p->b, sum, sizeof(sum)) == -1 ||
	    cow_pack_int(&p->b, ch->kind == COW_DELETED ? 0 : ch->new_mode,
	    4) == -1 || cow_pack_int(&p->b, plen, 2) == -1 ||
	    buf_add(&p->b, ch->path, plen) == -1)
		return -1;
	return cow_pack_data(p, ch);
}

int
cow_pack(const struct cow *c, const struct cow_changes *ch, size_t max,
    void **data, size_t *len, char *err, size_t errsz)
{
	struct cow_pack	p;
	char		esc[512];
	size_t		i;
	int		rc = 0;

	*data = NULL;
	*len = 0;
	memset(&p, 0, sizeof(p));
	p = (struct cow_pack){ .c = c, .max = max > UINT32_MAX ? UINT32_MAX :
	    max, .err = err, .errsz = errsz };
	buf_init(&p.b, 0);
	if ((p.rootfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "the workspace %s: %s", c->workspace,
		    strerror(errno));
		return -1;
	}
	if (COW_PACK_MAGIC_LEN + 4 > p.max)
		rc = cow_pack_full(&p, "the start");
	else if (buf_add(&p.b, COW_PACK_MAGIC, COW_PACK_MAGIC_LEN) == -1 ||
	    cow_pack_int(&p.b, ch->n, 4) == -1)
		rc = -1;
	for (i = 0; rc == 0 && i < ch->n; i++)
		if ((rc = cow_pack_one(&p, &ch->v[i])) == -1)
			snprintf(err, errsz, "packing %s: %s", cow_esc(esc,
			    sizeof(esc), ch->v[i].path), strerror(errno));
	close(p.rootfd);
	if (rc != 0) {
		buf_free(&p.b);
		return rc;
	}
	*data = buf_release(&p.b, len);
	return 0;
}
