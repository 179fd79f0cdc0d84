/* replay_main.c — main() for the fuzz targets without libFuzzer: runs the target once over
 * every regular file in each directory (and each file) named on the command line, in name
 * order, so the seed corpora run as ordinary regression tests with any compiler.
 *
 * Exit status: 0 when every input ran, 1 when an argument or a file could not be read or no
 * input was found (an empty corpus tests nothing). A broken invariant aborts.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!fp) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (!nb) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(fp);
				return -1;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, fp);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		fclose(fp);
		return -1;
	}
	fclose(fp);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/* an exact-size copy, so ASan sees a read past the end of the input */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact) {
			free(buf);
			return -1;
		}
		if (len)
			memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir; returns how many ran, or -1 on an error. */
static long run_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	long ran = 0;

	if (!dp) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);

			if (!nn)
				break;
			names = nn;
		}
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n])
			break;
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(dp);
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (ran >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
			ran = run_file(names[i]) == 0 ? ran + 1 : -1;
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long ran;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : (run_file(argv[i]) == 0 ? 1 : -1);
		if (ran < 0)
			return 1;
		total += ran;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input found\n");
		return 1;
	}
	fprintf(stderr, "replay: %ld input(s) ran\n", total);
	return 0;
}
