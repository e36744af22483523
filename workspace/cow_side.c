/*
 * One side of a change as the diff reads it (the workspace's entry now,
 * or the layer's), and the one rule of what the diff cannot show: a
 * change whose new file or link is not shown in full (binary, too large,
 * unreadable) is unreviewed, and apply holds it back like a path that
 * runs code on the host (cow_review.c, cow_apply). cow_diff.c prints by
 * the same rule, so what `warren diff` calls unreviewed is what `warren
 * apply` leaves out.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workspace/cow.h"
#include "workspace/cow_int.h"
#include "workspace/cow_walk.h"

/*
 * Binary: a NUL byte anywhere, not only in the first 8 KiB as git looks.
 * A NUL past them was shown escaped, but a sparse file's holes read as
 * NULs, and apply writes them whole: review31's 8 KiB of text and a hole
 * to 8 MB was shown, and applied at 1,000 times the blocks it took.
 */
int
cow_side_binary(const struct cow_side *s)
{
	return s->present && S_ISREG(s->mode) && s->data != NULL &&
	    memchr(s->data, '\0', s->len) != NULL;
}

int
cow_side_special(mode_t m)
{
	return !S_ISREG(m) && !S_ISLNK(m) && !S_ISDIR(m);
}

/* Read a regular file's content (fd) or a link's target (fd -2) into s. */
static void
cow_side_fill(struct cow_side *s, int fd, const char *target)
{
	struct stat	sb;

	if (fd == -2) {
		if ((s->data = strdup(target)) == NULL)
			s->errnum = errno;
		s->len = strlen(target);
		return;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		s->errnum = errno != 0 ? errno : EINVAL;
		return;
	}
	s->size = sb.st_size;
	s->links = sb.st_nlink;
	if (sb.st_size > COW_FILE_MAX)
		s->big = 1;
	else if (cow_walk_read(fd, COW_FILE_MAX, &s->data, &s->len) == -1) {
		if (errno == EFBIG)
			s->big = 1;
		else
			s->errnum = errno;
	}
}

void
cow_side_old(int rootfd, const char *path, struct cow_side *s)
{
	struct stat	 sb;
	char		 target[PATH_MAX];
	const char	*name;
	ssize_t		 n;
	int		 dfd, fd;

	memset(s, 0, sizeof(*s));
	if ((dfd = cow_walk_parent(rootfd, path, &name)) == -1)
		return;
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		s->present = 1;
		s->mode = sb.st_mode;
		s->size = sb.st_size;
		if (S_ISLNK(sb.st_mode)) {
			if ((n = readlinkat(dfd, name, target,
			    sizeof(target) - 1)) == -1)
				s->errnum = errno;
			else {
				target[n] = '\0';
				cow_side_fill(s, -2, target);
			}
		} else if (S_ISREG(sb.st_mode)) {
			if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW |
			    O_NONBLOCK | O_CLOEXEC)) == -1)
				s->errnum = errno;
			else {
				cow_side_fill(s, fd, NULL);
				close(fd);
			}
		}
	}
	close(dfd);
}

void
cow_side_new(const struct cow *c, const struct cow_change *ch,
    struct cow_side *s)
{
	char	target[PATH_MAX];
	int	fd;

	memset(s, 0, sizeof(*s));
	if (ch->kind == COW_DELETED || ch->kind == COW_UNSUPPORTED)
		return;
	s->present = 1;
	s->mode = ch->new_mode;
	if (!S_ISREG(ch->new_mode) && !S_ISLNK(ch->new_mode))
		return;
	if ((fd = cow_walk_src(c, ch, target, sizeof(target))) == -1)
		s->errnum = errno;
	else {
		cow_side_fill(s, fd, target);
		if (fd >= 0)
			close(fd);
	}
}

void
cow_side_free(struct cow_side *s)
{
	free(s->data);
	memset(s, 0, sizeof(*s));
}

int
cow_side_same(const struct cow_side *old, const struct cow_side *new)
{
	return old->present && new->present && old->mode == new->mode &&
	    !old->big && !new->big && old->errnum == 0 && new->errnum == 0 &&
	    old->len == new->len && (old->len == 0 ||
	    memcmp(old->data, new->data, old->len) == 0);
}

/*
 * The diff's order of notes (cow_diff_change, cow_diff_types): unreadable,
 * too large, a special file in the workspace, then binary on either side
 * of a file-to-file change (a new file against nothing otherwise).
 */
const char *
cow_side_hidden(const struct cow_side *old, const struct cow_side *new)
{
	if (!new->present || (!S_ISREG(new->mode) && !S_ISLNK(new->mode)))
		return NULL;
	if (cow_side_same(old, new))
		return NULL;		/* nothing to review: applied already */
	if (new->errnum != 0)
		return "the run's file could not be read";
	if (old->errnum != 0)
		return "the workspace's file could not be read";
	if (old->big || new->big)
		return "too large to show (over 8 MB)";
	if (old->present && cow_side_special(old->mode))
		return "the workspace holds a fifo, device or socket there";
	if (cow_side_binary(new) || (S_ISREG(new->mode) &&
	    cow_side_binary(old)))
		return "binary: the diff does not show its content";
	/* Only a layer holds links (an agent's ln: a copy breaks the
	 * workspace's, a change set is unpacked a file a name): each is
	 * shown once per name, and apply writes each name whole, so one
	 * file linked 4,107 times in the watch's 200 ms was 28 GiB of
	 * apply from a 7 MiB layer (review31). */
	if (S_ISREG(new->mode) && new->links > 1)
		return "a hard link in the layer: apply writes each of its "
		    "names as a file of its own";
	return NULL;
}
