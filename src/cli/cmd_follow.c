/* cmd_follow.c — `oomfix diagnose --follow LOG`: follows a log as the run writes it, bringing the
 * diagnosis up to date from the appended bytes only, and prints the verdict each time it changes.
 * Ends when the run has printed its summary and the log is quiet, or on Ctrl-C. For a web UI job
 * the job's status in the database is followed too (one indexed SELECT per poll): a change is
 * printed, and the end is when the status says the run ended and the log has gone quiet. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oomfix/aitkdb.h"
#include "oomfix/diag.h"
#include "oomfix/gpuwatch.h"
#include "oomfix/measure.h"
#include "oomfix/i18n.h"
#include "oomfix/source.h"
#include "oomfix/json.h"
#include "cli.h"

#define FOLLOW_POLL_MS 200

static volatile sig_atomic_t stop_now;

static void on_sigint(int sig)
{
	(void)sig;
	stop_now = 1;
}

/* What a change is: the members a person reads, not the evidence lines. */
static bool same(const struct diag_result *a, const struct diag_result *b)
{
	return a->oom == b->oom && a->timing == b->timing && a->phase == b->phase &&
	       a->failed_step == b->failed_step && a->total_steps == b->total_steps &&
	       a->other == b->other && a->run_ended == b->run_ended && a->survived == b->survived;
}

static void print_change(const struct diag_result *r, bool as_json, const char *status)
{
	if (as_json) {
		struct json j;
		json_init(&j, stdout, false);
		json_obj_begin(&j);
		json_key(&j, "lines");
		json_int(&j, (long long)r->lines);
		json_key(&j, "bytes");
		json_int(&j, (long long)r->bytes);
		json_key(&j, "run_ended");
		json_bool(&j, r->run_ended);
		if (status) { /* a web UI job: its status in the database */
			json_key(&j, "status");
			json_str(&j, status);
		}
		diag_json_head(&j, r);
		diag_json_tail(&j, r);
		json_obj_end(&j);
		json_finish(&j);
	} else {
		char buf[1024];
		diag_sentence(r, buf, sizeof buf);
		printf(_("line %llu: %s\n"), (unsigned long long)r->lines, buf);
		if (r->run_ended)
			printf("%s\n", _("The run has ended."));
	}
	fflush(stdout);
}

static bool status_ended(const char *s)
{
	return s[0] && strcmp(s, "queued") != 0 && strcmp(s, "running") != 0;
}

int cli_follow_status(const struct diag_result *r)
{
	if (!r->oom)
		return 0;
	if (r->timing >= DIAG_T_BEFORE_TRAINING && r->timing < DIAG_T_COUNT)
		return 10 + (int)(r->timing - DIAG_T_BEFORE_TRAINING);
	return 15;
}

int cli_diagnose_follow(const char *log, const struct diag_job_info *job, struct source *src,
			const struct job *j, bool as_json)
{
	char status[sizeof ((struct aitk_status *)0)->status] = "";
	struct diag_state *ds;
	struct diag_result *r = malloc(sizeof *r), *last = malloc(sizeof *last);
	struct sigaction sa;
	bool have_last = false;
	unsigned quiet = 0;
	struct err e;
	int rc;

	err_clear(&e);
	if (!r || !last) {
		free(r);
		free(last);
		err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		err_print(&e, stderr);
		return ERR_SOFTWARE;
	}
	if (!strcmp(log, "-")) {
		fprintf(stderr, "%s\n", _("oomfix: diagnose: --follow needs a log file, not '-'"));
		free(r);
		free(last);
		return ERR_USAGE;
	}
	rc = diag_state_new(job, &ds, &e);
	/* what the trainer holds on the card, phase by phase: only for a job it can be kept for */
	struct gpuwatch *gw = j ? gpuwatch_new(log, 0, job) : NULL;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (rc == ERR_OK && !stop_now) {
		enum diag_follow what;
		struct timespec ts = { 0, FOLLOW_POLL_MS * 1000000L };

		rc = diag_state_follow(ds, log, 0, &what, &e);
		if (rc)
			break;
		gpuwatch_tick(gw);
		struct aitk_status as;
		bool moved = false;
		if (src && source_status(src, &as) && strcmp(as.status, status) != 0) {
			snprintf(status, sizeof status, "%s", as.status);
			moved = true;
			if (!as_json)
				printf(_("web UI status: %s\n"), status);
		}
		if (what != DIAG_FOLLOW_SAME || !have_last || moved) {
			quiet = 0;
			if (what == DIAG_FOLLOW_RESTARTED && !as_json)
				printf("%s\n", _("The log was replaced or truncated: reading it again."));
			rc = diag_state_result(ds, r, &e);
			if (rc)
				break;
			if (!have_last || !same(r, last) || what == DIAG_FOLLOW_RESTARTED ||
			    (moved && as_json))
				print_change(r, as_json, src ? status : NULL);
			fflush(stdout);
			*last = *r;
			have_last = true;
		} else if (src && status[0]) {
			/* the trainer writes its status before its last lines: wait for the log to
			 * finish (its summary) or to stay quiet for a while */
			if (status_ended(status) && ++quiet >= (last->run_ended ? 2u : 10u))
				break;
		} else if (last->run_ended && ++quiet >= 2) {
			break; /* the run printed its summary and nothing came after it */
		}
		nanosleep(&ts, NULL);
	}
	diag_state_free(&ds);
	free(r);
	if (rc) {
		gpuwatch_free(&gw);
		free(last);
		err_print(&e, stderr);
		return rc;
	}
	if (j && have_last) {
		/* what the run measured: its OOM's lower bound, and each phase's peak */
		cli_measure(src, j, last, log);
		if (!src || !source_log_untried(src, log, NULL))
			gpuwatch_record(gw, j, src && !strcmp(status, "completed"));
		const char *n = measure_note();
		if (n)
			fprintf(stderr, "oomfix: %s\n", n);
	}
	gpuwatch_free(&gw);
	int status_code = stop_now ? 130 : have_last ? cli_follow_status(last) : 0;
	free(last);
	return status_code;
}
