/* test_session.c — the UI's session, without a terminal: what it says about the log it shows
 * follows that log, not the one it showed before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "session.h"

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

/* Writes job.yaml and opens it with run.log (the caller wrote it; its path goes to run), the log
 * read. */
static void open_job(struct ui_session *s, char *run, size_t runsize)
{
	char job[600];
	struct err e;

	snprintf(job, sizeof job, "%s/job.yaml", dir);
	snprintf(run, runsize, "%s/run.log", dir);
	put("job.yaml", "w", "job: extension\nconfig:\n  name: t\n  process:\n    - type: sd_trainer\n");
	assert_int_equal(ui_session_open(s, job, run, &e), ERR_OK);
	ui_session_diag_start(s);
	assert_true(ui_session_diag_poll(s, true));
}

/* A try's log grew while it was shown (the run went on); then an earlier, finished log is
 * opened in its place. That one is not growing: the Log view's header must not say it is
 * followed, nor take its phase and step from the run. */
static void test_another_log_is_not_growing(void **state)
{
	struct ui_session s;
	struct err e;
	char run[600], old[600];

	(void)state;
	snprintf(old, sizeof old, "%s/old.log", dir);
	put("old.log", "w", "Loading Flux model\nRunning 1 process\n");
	put("run.log", "w", "Running 1 process\n");
	open_job(&s, run, sizeof run);
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

/* Sets a file's modification time to a fixed second, so that only what a check changes differs. */
static void set_mtime(const char *name)
{
	char path[600];
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* The log on disk is newer than the verdict when it grew or was replaced by another file (a new
 * run's), even one of the same size and time; not when it is gone. */
static void test_log_newer(void **state)
{
	struct ui_session s;
	char run[600], other[600];

	(void)state;
	snprintf(other, sizeof other, "%s/other.log", dir);
	put("run.log", "w", "Running 1 process\n");
	set_mtime("run.log");
	open_job(&s, run, sizeof run);
	assert_false(ui_session_log_newer(&s));

	put("run.log", "a", "Loading Flux model\n"); /* grown, its time set back */
	set_mtime("run.log");
	assert_true(ui_session_log_newer(&s));

	ui_session_diag_start(&s); /* read again: the stamp is the grown log's */
	assert_true(ui_session_diag_poll(&s, true));
	assert_false(ui_session_log_newer(&s));

	put("other.log", "w", "Running 2 process\nLoading Flux model\n"); /* same size and time */
	set_mtime("other.log");
	assert_int_equal(rename(other, run), 0);
	assert_true(ui_session_log_newer(&s));

	assert_int_equal(unlink(run), 0);
	assert_false(ui_session_log_newer(&s));
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
		cmocka_unit_test(test_log_newer),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
