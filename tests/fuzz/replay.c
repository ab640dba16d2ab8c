/*
 * replay.c: feeds files to a fuzz target's LLVMFuzzerTestOneInput, built
 * with the normal compiler so that make check replays the regression
 * corpus (tests/fuzz/regress/<target>/) and the seeds without clang. With
 * no arguments it replays the directories compiled in (FUZZ_DIRS, colon
 * separated); else each argument, a file or a directory. A crash, a
 * sanitizer report or a fatalx fails the test.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int	replay_path(const char *, int);

/* Feed one file; -1 if unreadable. */
static int
replay_file(const char *path)
{
	FILE	*f;
	char	*data;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return (-1);
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return (-1);
	}
	/* A copy of exactly n bytes, so ASan sees any overread. */
	data = malloc(n > 0 ? (size_t)n : 1);
	if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		fclose(f);
		return (-1);
	}
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *)data, (size_t)n);
	free(data);
	return (0);
}

/* Feed a file, or every file under a directory; the number fed. */
static int
replay_path(const char *path, int depth)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 sub[4096];
	int		 n = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: not found\n", path);
		exit(1);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (replay_file(path) != 0) {
			fprintf(stderr, "replay: %s: unreadable\n", path);
			exit(1);
		}
		return (1);
	}
	if (depth > 4 || (d = opendir(path)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
		n += replay_path(sub, depth + 1);
	}
	closedir(d);
	return (n);
}

/* Replay the arguments, or the compiled-in directories. */
int
main(int argc, char **argv)
{
	char	*dirs, *p, *one;
	int	 i, n = 0;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			n += replay_path(argv[i], 0);
	} else {
		dirs = strdup(FUZZ_DIRS);
		for (p = dirs; (one = strsep(&p, ":")) != NULL;)
			if (*one != '\0')
				n += replay_path(one, 0);
		free(dirs);
	}
	printf("replayed %d input%s\n", n, n == 1 ? "" : "s");
	return (n > 0 ? 0 : 1);
}
