/* test_retry_events.c — the UI's side of the retry loop (src/ui/retry.c) against a real child.
 *
 * ui_retry_start runs /proc/self/exe, which here is this test program: started with `retry` in
 * its arguments it plays `oomfix retry --events 3`, writing what FAKE_EVENTS asks for — events
 * cut mid-line across writes, a line that is not JSON, a line longer than the reader keeps, a
 * loop that dies without its end event, one that waits for SIGINT — and the tests read it back
 * through ui_retry_poll as the UI does. So the arguments, descriptor 3, the pipes, the process
 * group and the reaping are the real ones. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "retry.h"
#include "args.h"

/* ---- the fake loop -------------------------------------------------------------------------- */

static void put(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(3, s, n);
		if (w <= 0)
			_exit(9);
		s += w;
		n -= (size_t)w;
	}
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static volatile sig_atomic_t got_int;
static void on_int(int sig)
{
	(void)sig;
	got_int = 1;
}

static int fake_retry(int argc, char **argv)
{
	const char *mode = getenv("FAKE_EVENTS");
	if (!mode)
		return 70;
	if (!strcmp(mode, "normal")) {
		put("{\"event\":\"try\",\"try\":0,\"index\":0,\"max_tries\":6,\"log\":\"first.log\"}\n");
		put("{\"event\":\"verdict\",\"try\":0,\"oom\":true,\"timing\":\"before_training\",\"timing_letter\":\"A\",\"phase\":\"model_load\","
		    "\"step\":null,\"summary\":\"A: out of memory before training\"}\n{\"event\":\"fi");
		nap(50); /* the rest of the line comes in another write */
		put("x\",\"try\":0,\"fix\":\"low_vram\",\"title\":\"Use the model's low-memory path\","
		    "\"changes\":[\"config.process[0].model.low_vram: false \u2192 true\",\"a: 1 \u2192 2\"],"
		    "\"note\":\"\",\"lesson\":\"Low VRAM keeps \\\"parts\\\" on the CPU.\\nSecond line.\"}\n");
		put("{\"event\":\"try\",\"try\":1,\"index\":1,\"max_tries\":6,\"log\":\"runs/1.log\","
		    "\"estimate\":{\"known\":true,\"peak_phase\":\"sampling\",\"bytes\":21474836480,"
		    "\"high\":23622320128,\"card\":25769803776,\"verdict\":\"tight\","
		    "\"verdict_phase\":\"sampling\"}}\n");
		nap(50);
		put("{\"event\":\"taken\",\"try\":1,\"status\":\"running\"}\n");
		put("{\"event\":\"verdict\",\"try\":1,\"oom\":false,\"timing\":null,\"timing_letter\":null,\"phase\":null,"
		    "\"step\":null,\"summary\":\"the run finished\"}\n");
		put("{\"event\":\"end\",\"try\":1,\"status\":0,\"outcome\":\"fits\",\"text\":\"The run "
		    "finished: the job fits.\"}\n");
		return 0;
	}
	if (!strcmp(mode, "garbage")) {
		put("this is not an event\n{\"event\":\n[1,2,3]\n{\"no_event\":1}\n");
		/* a valid event longer than the reader keeps: dropped at its newline */
		size_t n = 3u << 20;
		char *big = malloc(n + 1);
		if (!big)
			return 71;
		memset(big, 'x', n);
		static const char head[] = "{\"event\":\"try\",\"try\":5,\"log\":\"";
		memcpy(big, head, sizeof head - 1);
		memcpy(big + n - 2, "\"}", 2);
		big[n] = '\0';
		put(big);
		free(big);
		put("\n{\"event\":\"try\",\"try\":7,\"index\":1,\"max_tries\":6,\"log\":\"7.log\","
		    "\"estimate\":{\"known\":false}}\n");
		put("{\"event\":\"try\",\"try\":8,\"index\":2,\"log\":\"8.log\",\"estimate\":[1,2]}\n");
		put("{\"event\":\"try\",\"try\":9,\"index\":3,\"log\":\"9.log\",\"estimate\":"
		    "{\"known\":true,\"peak_phase\":\"nowhere\",\"bytes\":1}}\n");
		put("{\"event\":\"try\",\"try\":10,\"index\":4,\"log\":\"10.log\",\"estimate\":"
		    "{\"known\":true,\"peak_phase\":\"training\",\"bytes\":1073741824,\"card\":null,"
		    "\"verdict\":\"fits\",\"verdict_phase\":\"training\"}}\n");
		put("{\"event\":\"fix\",\"try\":99,\"fix\":\"orphan\"}\n"); /* no such try: ignored */
		put("{\"event\":\"end\",\"try\":7,\"status\":69,\"outcome\":\"exhausted\",\"text\":null}\n");
		return 69;
	}
	if (!strcmp(mode, "die")) {
		put("{\"event\":\"try\",\"try\":1,\"index\":1,\"max_tries\":6,\"log\":\"1.log\"}\n");
		fputs("oomfix retry: try 1 (1 of at most 6), log 1.log\n", stderr);
		fputs("oomfix retry: cannot create runs/2.log: Permission denied\n\n", stderr);
		return 73;
	}
	if (!strcmp(mode, "argv")) {
		/* says what it was given, as the end's text */
		char text[4096] = "";
		for (int i = 1; i < argc; i++) {
			strncat(text, argv[i], sizeof text - strlen(text) - 2);
			strcat(text, "|");
		}
		char line[8192];
		snprintf(line, sizeof line, "{\"event\":\"end\",\"status\":0,\"outcome\":\"fits\","
			 "\"text\":\"%s\"}\n", text);
		put(line);
		return 0;
	}
	if (!strcmp(mode, "unknown")) {
		/* names outside retry_events.h's tables: an event no reader knows, an outcome no
		 * build knows */
		put("{\"event\":\"tries\",\"try\":3,\"index\":1,\"max_tries\":6,\"log\":\"3.log\"}\n");
		put("{\"event\":\"end\",\"try\":3,\"status\":0,\"outcome\":\"fit\",\"text\":\"?\"}\n");
		return 0;
	}
	if (!strcmp(mode, "hang")) {
		signal(SIGINT, on_int);
		put("{\"event\":\"try\",\"try\":1,\"index\":1,\"max_tries\":6,\"log\":\"1.log\"}\n");
		for (int i = 0; i < 500 && !got_int; i++)
			nap(10);
		put(got_int ? "{\"event\":\"end\",\"try\":1,\"status\":130,\"outcome\":\"interrupted\","
			      "\"text\":\"Interrupted.\"}\n"
			    : "{\"event\":\"end\",\"try\":1,\"status\":1,\"outcome\":\"error\"}\n");
		return got_int ? 130 : 1;
	}
	return 70;
}

/* ---- reading it back ------------------------------------------------------------------------- */

/* Polls until the loop is over (at most 10 s); returns every bit seen. */
static unsigned run_to_end(struct ui_retry *r)
{
	unsigned all = 0;
	for (int i = 0; i < 1000; i++) {
		all |= ui_retry_poll(r);
		if (!ui_retry_running(r))
			return all;
		nap(10);
	}
	fail_msg("the loop did not end");
	return all;
}

/* The UI's --vram as its arguments gave it (struct ui_opts.vram_arg), passed on as retry_ctl.c
 * does. */
static const char *ui_vram;

/* Starts the fake loop in r (zeroed, or holding an earlier loop's results, as in the UI). */
static void start(struct ui_retry *r, const char *mode, const char *log, const char *cmd,
		  long long probe)
{
	struct err e;
	setenv("FAKE_EVENTS", mode, 1);
	/* as retry_ctl.c starts it: with the UI's --vram, when it was given one */
	assert_int_equal(ui_retry_start(r, "job.yaml", log, cmd, probe, 6, ui_vram, &e),
			 ERR_OK);
	assert_true(ui_retry_running(r));
	assert_true(r->started);
}

static void test_events_read_as_they_come(void **state)
{
	(void)state;
	struct ui_retry r = { 0 };
	start(&r, "normal", "first.log", "python run.py job.yaml", 0);
	unsigned bits = run_to_end(&r);
	assert_true(bits & UI_RT_TRY);
	assert_true(bits & UI_RT_FIX);
	assert_true(bits & UI_RT_END);
	assert_int_equal(r.ntries, 2);
	assert_int_equal(r.tries[0].n, 0);
	assert_string_equal(r.tries[0].log, "first.log");
	assert_null(r.tries[0].estimate); /* its event has none */
	assert_true(r.tries[0].judged && r.tries[0].oom);
	assert_string_equal(r.tries[0].timing, "A");
	assert_string_equal(r.tries[0].fix, "low_vram");
	assert_int_equal(r.tries[0].nchanges, 2);
	assert_string_equal(r.tries[0].changes[0], "config.process[0].model.low_vram: false \u2192 true");
	assert_string_equal(r.tries[0].lesson, "Low VRAM keeps \"parts\" on the CPU.\nSecond line.");
	assert_int_equal(r.tries[1].n, 1);
	assert_int_equal(r.tries[1].index, 1);
	/* the estimate in the words the CLI prints for the try */
	assert_string_equal(r.tries[1].estimate,
			    "peak 20.0 GiB at sampling, 24.0 GiB card: tight at sampling");
	assert_string_equal(r.tries[1].taken, "running");
	assert_false(r.tries[1].oom);
	assert_null(r.tries[1].fix);
	assert_true(r.ended);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.outcome, RETRY_OUT_FITS);
	assert_string_equal(r.text, "The run finished: the job fits.");
	assert_string_equal(r.cmd, "python run.py job.yaml");
	ui_retry_free(&r);
}

static void test_bad_lines_are_skipped(void **state)
{
	(void)state;
	struct ui_retry r = { 0 };
	start(&r, "garbage", NULL, "true", 0);
	run_to_end(&r);
	assert_int_equal(r.ntries, 4);
	assert_int_equal(r.tries[0].n, 7);
	assert_null(r.tries[0].fix);
	/* estimates: none for the arch, not an object, a phase of no name, no card */
	assert_string_equal(r.tries[0].estimate, "no estimate for this arch (no memory table)");
	assert_null(r.tries[1].estimate);
	assert_null(r.tries[2].estimate);
	assert_string_equal(r.tries[3].estimate, "peak 1.0 GiB at training (--vram gives a verdict)");
	assert_int_equal(r.status, 69);
	assert_int_equal(r.outcome, RETRY_OUT_EXHAUSTED);
	assert_null(r.text);
	ui_retry_free(&r);
}

static void test_death_without_end(void **state)
{
	(void)state;
	struct ui_retry r = { 0 };
	char last[256];
	start(&r, "die", NULL, "true", 0);
	unsigned bits = run_to_end(&r);
	assert_true(bits & UI_RT_END);
	assert_true(r.ended);
	assert_int_equal(r.status, 73);
	assert_int_equal(r.outcome, RETRY_OUT_ERROR);
	ui_retry_last_error(&r, last, sizeof last);
	assert_string_equal(last, "oomfix retry: cannot create runs/2.log: Permission denied");
	ui_retry_free(&r);
}

static void test_arguments(void **state)
{
	(void)state;
	struct ui_retry r = { 0 };
	start(&r, "argv", "the log.txt", "cd '/a b' && python run.py x.yaml", 20);
	run_to_end(&r);
	assert_non_null(r.text);
	assert_string_equal(r.text, "retry|--events|3|--max-tries|6|--probe|20|--log|the log.txt|"
				    "job.yaml|--|/bin/sh|-c|cd '/a b' && python run.py x.yaml|");
	ui_retry_free(&r);
	/* a web UI job: no command, no probe, no log */
	start(&r, "argv", NULL, NULL, 0);
	run_to_end(&r);
	assert_string_equal(r.text, "retry|--events|3|--max-tries|6|job.yaml|");
	ui_retry_free(&r);
	/* the UI started with --vram: the loop estimates each try for the card of the fit line */
	struct ui_opts o;
	char *with[] = { "oomfix", "--vram=24", "job.yaml", NULL };
	ui_parse_args(3, with, &o);
	ui_vram = o.vram_arg;
	start(&r, "argv", NULL, NULL, 0);
	run_to_end(&r);
	assert_string_equal(r.text, "retry|--events|3|--max-tries|6|--vram|24|job.yaml|");
	ui_retry_free(&r);
	/* without it the loop asks nvidia-smi itself */
	char *without[] = { "oomfix", "job.yaml", NULL };
	ui_parse_args(2, without, &o);
	ui_vram = o.vram_arg;
	start(&r, "argv", NULL, NULL, 0);
	run_to_end(&r);
	assert_string_equal(r.text, "retry|--events|3|--max-tries|6|job.yaml|");
	ui_retry_free(&r);
}

static void test_stop(void **state)
{
	(void)state;
	struct ui_retry r = { 0 };
	struct err e;
	start(&r, "hang", NULL, "true", 0);
	for (int i = 0; i < 200 && !r.ntries; i++) {
		ui_retry_poll(&r);
		nap(10);
	}
	assert_int_equal(r.ntries, 1);
	/* a second loop is refused while one runs */
	assert_int_equal(ui_retry_start(&r, "job.yaml", NULL, "true", 0, 6, NULL, &e), ERR_TEMPFAIL);
	ui_retry_stop(&r);
	assert_true(r.stopping);
	run_to_end(&r);
	assert_int_equal(r.status, 130);
	assert_int_equal(r.outcome, RETRY_OUT_INTERRUPTED);
	/* the results of the last loop go when a new one starts */
	start(&r, "normal", NULL, "true", 0);
	assert_int_equal(r.ntries, 0);
	assert_false(r.ended);
	run_to_end(&r);
	assert_int_equal(r.ntries, 2);
	ui_retry_free(&r);
}

/* The reader goes through the protocol's tables: an unknown event is skipped, and an outcome
 * that is not in RETRY_OUTCOMES is an error, never taken for a success the view would show. */
static void test_unknown_names(void **state)
{
	(void)state;
	struct ui_retry r = { 0 };
	start(&r, "unknown", NULL, "true", 0);
	run_to_end(&r);
	assert_int_equal(r.ntries, 0);
	assert_true(r.ended);
	assert_int_equal(r.outcome, RETRY_OUT_ERROR);
	ui_retry_free(&r);
}

static void test_guess_and_remember(void **state)
{
	(void)state;
	char dir[] = "/tmp/oomfix-retry-XXXXXX", path[256], *cmd;
	assert_non_null(mkdtemp(dir));
	/* no run.py around: "python run.py JOB" could not work, nothing is proposed (D21) */
	snprintf(path, sizeof path, "%s/my job.yaml", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	cmd = ui_retry_guess_command(path);
	assert_string_equal(cmd, "");
	free(cmd);
	/* ... but the command typed for another job of the folder is */
	char other[300];
	snprintf(other, sizeof other, "%s/other.yaml", dir);
	ui_retry_remember_command(other, "python3 trainer.py other.yaml");
	cmd = ui_retry_guess_command(path);
	assert_string_equal(cmd, "python3 trainer.py other.yaml");
	free(cmd);
	/* remembered: proposed the next time, as typed */
	ui_retry_remember_command(path, "python3 x.py 'my job.yaml'");
	cmd = ui_retry_guess_command(path);
	assert_string_equal(cmd, "python3 x.py 'my job.yaml'");
	free(cmd);
	char cleanup[600];
	snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
	assert_int_equal(system(cleanup), 0);
}

int main(int argc, char **argv)
{
	/* The UI starts /proc/self/exe [--aitk DIR] retry ...: here that is this program. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "retry"))
			return fake_retry(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_read_as_they_come),
		cmocka_unit_test(test_bad_lines_are_skipped),
		cmocka_unit_test(test_death_without_end),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_guess_and_remember),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
