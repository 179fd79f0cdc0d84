/* test_session.c — the UI's session, without a terminal: what it says about the log it shows
 * follows that log, not the one it showed before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../src/ui/session.h"

static char dir[512];

static void put(const char *name, const char *mode, const char *text)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, mode);
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A try's log grew while it was shown (the run went on); then an earlier, finished log is
 * opened in its place. That one is not growing: the Log view's header must not say it is
 * followed, nor take its phase and step from the run. */
static void test_another_log_is_not_growing(void **state)
{
	struct ui_session s;
	struct err e;
	char job[600], run[600], old[600];

	(void)state;
	snprintf(job, sizeof job, "%s/job.yaml", dir);
	snprintf(run, sizeof run, "%s/run.log", dir);
	snprintf(old, sizeof old, "%s/old.log", dir);
	put("job.yaml", "w", "job: extension\nconfig:\n  name: t\n  process:\n    - type: sd_trainer\n");
	put("old.log", "w", "Loading Flux model\nRunning 1 process\n");
	put("run.log", "w", "Running 1 process\n");
	assert_int_equal(ui_session_open(&s, job, run, &e), ERR_OK);
	ui_session_diag_start(&s);
	assert_true(ui_session_diag_poll(&s, true));
	assert_false(s.growing);

	put("run.log", "a", "t:   5%|5         | 5/100 [00:05<01:35,  1.00s/it, lr: 1e-04 loss: 0.1]\n");
	unsigned grew = 0;
	for (int i = 0; i < 50 && !(grew & UI_F_GREW); i++) {
		grew |= ui_session_follow(&s);
		if (!(grew & UI_F_GREW))
			usleep(10000);
	}
	assert_true(grew & UI_F_GREW);
	assert_true(s.growing);

	assert_int_equal(ui_session_set_log(&s, old, &e), ERR_OK);
	assert_true(ui_session_diag_poll(&s, true));
	assert_false(s.growing);
	ui_session_close(&s);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	(void)state;
	snprintf(dir, sizeof dir, "%s/oomfix-session-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[600];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_another_log_is_not_growing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
