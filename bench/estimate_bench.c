/* estimate_bench JOB [N]: the time of one memory estimate (estimate_job) against the time of
 * reading the job (doc_load + job_from_doc: what `oomfix get` does before it prints), in the same
 * process, best of 5 rounds of N each. Prints both in microseconds and their ratio. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "oomfix/doc.h"
#include "oomfix/estimate.h"
#include "oomfix/job.h"

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: estimate_bench JOB [N]\n");
		return 64;
	}
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	if (n < 1)
		n = 1;
	struct err e;
	struct doc *d = NULL;
	struct job *j = NULL;
	if (doc_load_file(argv[1], &d, &e) || job_from_doc(d, &j, &e)) {
		err_print(&e, stderr);
		return 65;
	}
	double best_est = 1e18, best_read = 1e18;
	struct estimate est;
	volatile int64_t sink = 0;
	for (int round = 0; round < 5; round++) {
		double t0 = now_us();
		for (int i = 0; i < n; i++) {
			estimate_job(j, &est);
			sink += est.phase[est.peak].bytes;
		}
		double t1 = now_us();
		for (int i = 0; i < n; i++) {
			struct doc *d2 = NULL;
			struct job *j2 = NULL;
			if (doc_load_file(argv[1], &d2, &e) || job_from_doc(d2, &j2, &e))
				return 65;
			sink += j2->batch_size;
			job_free(&j2);
			doc_free(&d2);
		}
		double t2 = now_us();
		if ((t1 - t0) / n < best_est)
			best_est = (t1 - t0) / n;
		if ((t2 - t1) / n < best_read)
			best_read = (t2 - t1) / n;
	}
	printf("estimate %.2f us, read the job %.2f us, estimate / read %.3f\n", best_est, best_read,
	       best_est / best_read);
	job_free(&j);
	doc_free(&d);
	return sink == 42 ? 1 : 0;
}
