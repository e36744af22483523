/*
 * A fuzzer's corpus as a quick regression test: every file in the
 * directories given (or each file given) goes once through the harness's
 * LLVMFuzzerTestOneInput, in name order. Linked with one fuzz_*.c instead
 * of libFuzzer, so the gcc and the ASan builds run the seeds and every
 * crash input once kept there under ctest; the timed fuzzing stays in
 * scripts/fuzz.sh. A harness signals a bug by crashing or abort(); a
 * missing or empty corpus fails too, or the test could pass having run
 * nothing.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs over this are no seeds of ours (libFuzzer's -max_len is 4096). */
#define REPLAY_MAX	(16u * 1024 * 1024)

static int
replay_file(const char *path)
{
	struct stat	 st;
	uint8_t		*data;
	FILE		*f;
	size_t		 n;

	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &st) == -1) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	if (st.st_size < 0 || (uintmax_t)st.st_size > REPLAY_MAX) {
		fprintf(stderr, "replay: %s: %jd bytes, at most %u\n", path,
		    (intmax_t)st.st_size, REPLAY_MAX);
		fclose(f);
		return -1;
	}
	/* An exact-size copy: ASan sees a read past the input's end. */
	n = (size_t)st.st_size;
	if ((data = malloc(n ? n : 1)) == NULL || fread(data, 1, n, f) != n) {
		fprintf(stderr, "replay: %s: cannot read it\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	(void)LLVMFuzzerTestOneInput(data, n);
	free(data);
	return 0;
}

static int
replay_skip(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Every file of dir; the count replayed, -1 on an error. */
static int
replay_dir(const char *dir)
{
	struct dirent	**v;
	char		  path[PATH_MAX];
	int		  n, i, done = 0, rc = 0;

	if ((n = scandir(dir, &v, replay_skip, alphasort)) == -1) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, v[i]->d_name);
		if (rc == 0 && replay_file(path) == -1)
			rc = -1;
		else
			done++;
		free(v[i]);
	}
	free(v);
	return rc == -1 ? -1 : done;
}

int
main(int argc, char **argv)
{
	struct stat	st;
	int		i, n, total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE ...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == -1) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
			    strerror(errno));
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) :
		    replay_file(argv[i]) == 0 ? 1 : -1;
		if (n == -1)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input in %s\n", argv[1]);
		return 1;
	}
	printf("replay: %d inputs, no crash\n", total);
	return 0;
}
