/* follow_bench — what following a growing log costs: a log is diagnosed, ADD is appended to it,
 * and the diagnosis is brought up to date incrementally; then the whole grown log is diagnosed
 * again from scratch. Both times are printed side by side, and the two verdicts must agree.
 *   follow_bench LOG ADD          (LOG is changed: ADD is appended to it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oomfix/diag.h"
#include "oomfix/json.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *render(const struct diag_result *r)
{
	char *s = NULL;
	size_t sz = 0;
	FILE *fp = open_memstream(&s, &sz);
	struct json j;

	json_init(&j, fp, false);
	json_obj_begin(&j);
	diag_json_head(&j, r);
	diag_json_tail(&j, r);
	json_obj_end(&j);
	fprintf(fp, " lines=%llu bytes=%llu", (unsigned long long)r->lines,
		(unsigned long long)r->bytes);
	fclose(fp);
	return s;
}

static int append(const char *log, const char *add)
{
	FILE *in = fopen(add, "rb"), *out = fopen(log, "ab");
	char buf[65536];
	size_t n;

	if (!in || !out)
		return -1;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			return -1;
	fclose(in);
	return fclose(out);
}

int main(int argc, char **argv)
{
	struct diag_state *ds;
	struct diag_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	enum diag_follow w;
	struct err e;
	double t0, t_first, t_inc, t_full;
	unsigned long long before;
	char *sa, *sb;

	if (argc != 3 || !a || !b) {
		fprintf(stderr, "usage: follow_bench LOG ADD\n");
		return 64;
	}
	err_clear(&e);
	if (diag_state_new(NULL, &ds, &e) != ERR_OK) {
		err_print(&e, stderr);
		return 70;
	}
	t0 = now();
	if (diag_state_follow(ds, argv[1], 0, &w, &e) != ERR_OK || diag_state_result(ds, a, &e)) {
		err_print(&e, stderr);
		return 66;
	}
	t_first = now() - t0;
	before = (unsigned long long)diag_state_offset(ds);
	if (append(argv[1], argv[2]) != 0) {
		perror("append");
		return 74;
	}
	t0 = now();
	diag_state_follow(ds, argv[1], 0, &w, &e);
	diag_state_result(ds, a, &e);
	t_inc = now() - t0;
	t0 = now();
	if (diag_file(argv[1], NULL, b, &e) != ERR_OK) {
		err_print(&e, stderr);
		return 66;
	}
	t_full = now() - t0;
	sa = render(a);
	sb = render(b);
	printf("log: %llu bytes, then %llu bytes appended (%s)\n", before,
	       (unsigned long long)diag_state_offset(ds) - before,
	       w == DIAG_FOLLOW_GREW ? "read incrementally" : "NOT read incrementally");
	printf("  first diagnosis (diag_state_follow)     %9.3f ms\n", t_first * 1e3);
	printf("  incremental update after the append     %9.3f ms\n", t_inc * 1e3);
	printf("  full re-diagnosis of the grown log      %9.3f ms\n", t_full * 1e3);
	printf("  ratio incremental / full                %9.5f\n", t_inc / t_full);
	printf("  verdicts %s: %s %s, step %lld\n", strcmp(sa, sb) ? "DIFFER" : "agree",
	       b->oom ? "oom" : "no oom", diag_timing_name(b->timing) ? diag_timing_name(b->timing) : "-",
	       b->failed_step);
	if (strcmp(sa, sb)) {
		fprintf(stderr, "incremental: %s\nfull:        %s\n", sa, sb);
		return 1;
	}
	free(sa);
	free(sb);
	free(a);
	free(b);
	diag_state_free(&ds);
	return w == DIAG_FOLLOW_GREW ? 0 : 1;
}
