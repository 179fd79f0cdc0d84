/* diag_run — test driver: diagnoses LOG with job facts given on the command line (so the diag
 * module is tested without the YAML modules) and prints the verdict as JSON.
 *   diag_run [--name NAME] [--kind 0|1|2] [--conservative -1|0|1] [--cap BYTES] LOG|-
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/diag.h"
#include "oomfix/json.h"
#include "oomfix/logidx.h"

int main(int argc, char **argv)
{
	struct diag_job_info job = { NULL, 0, -1 };
	bool have_job = false;
	size_t cap = 0;
	const char *path = NULL;
	struct diag_result r;
	struct err e;
	struct logidx *li;
	struct json j;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			job.name = argv[++i];
			have_job = true;
		} else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
			job.kind = atoi(argv[++i]);
			have_job = true;
		} else if (!strcmp(argv[i], "--conservative") && i + 1 < argc) {
			job.conservative = atoi(argv[++i]);
			have_job = true;
		} else if (!strcmp(argv[i], "--cap") && i + 1 < argc) {
			cap = (size_t)strtoul(argv[++i], NULL, 10);
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fprintf(stderr, "usage: diag_run [--name N] [--kind K] [--conservative C] [--cap B] LOG\n");
		return 64;
	}
	err_clear(&e);
	rc = logidx_open(path, &li, &e);
	if (rc) {
		err_print(&e, stderr);
		return rc;
	}
	if (cap)
		logidx_set_seg_cap(li, cap);
	rc = diag_logidx(li, have_job ? &job : NULL, &r, &e);
	logidx_close(&li);
	if (rc) {
		err_print(&e, stderr);
		return rc;
	}
	json_init(&j, stdout, true);
	json_obj_begin(&j);
	diag_json_head(&j, &r);
	diag_json_tail(&j, &r);
	json_key(&j, "lines");
	json_int(&j, (long long)r.lines);
	json_key(&j, "warnings");
	json_int(&j, (long long)r.warnings);
	json_obj_end(&j);
	json_finish(&j);
	return 0;
}
