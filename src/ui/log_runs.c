/* log_runs.c — the trail of runs in the Log view (R): an earlier run's log in place of the one on
 * screen, named as history, with what was saved after it. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "oomfix/i18n.h"
#include "oomfix/trail.h"
#include "view_log.h"

/* A run of the trail in words, numbered like its file: "Run 3", or "The current run (log.txt)". */
static void run_name(const struct trail_run *r, char *buf, size_t size)
{
	if (r->number == TRAIL_CURRENT)
		snprintf(buf, size, "%s", _("The current run (log.txt)"));
	else
		snprintf(buf, size, _("Run %ld"), r->number);
}

static void run_time(time_t t, char *buf, size_t size)
{
	struct tm tm;
	if (t <= 0 || !localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "?");
}

/* The trail of tries: R shows the job's next earlier run (a web UI job's logs/<n>_log.txt, a job
 * file's JOB.oomfix-runs/<n>.log), newest first, and comes back to the newest after the oldest.
 * Each run is history: its own verdict, and what was saved after it (from the journal), not the
 * fix the job would get now. */
bool ui_log_next_run(const struct ui_env *v)
{
	struct trail t;
	struct err e;

	err_clear(&e);
	if (!v->s->src) {
		ui_status(v->c, false, "%s", _("No job is open: the trail of runs belongs to a job."));
		return false;
	}
	if (trail_build(v->s->src, &t, &e)) {
		ui_status_err(v->c, &e);
		return false;
	}
	if (t.n < 2 && !(t.n == 1 && (!v->s->log_path || strcmp(t.runs[0].log, v->s->log_path)))) {
		ui_status(v->c, false, _("This job has no earlier runs (run logs are looked for in %s)."),
			  t.where ? t.where : "?");
		trail_free(&t);
		return false;
	}
	size_t cur = t.n - 1; /* a log from elsewhere: R starts at the newest run */
	for (size_t i = 0; v->s->log_path && i < t.n; i++)
		if (!strcmp(t.runs[i].log, v->s->log_path))
			cur = i;
	size_t next = (cur + 1) % t.n;
	const struct trail_run *r = &t.runs[next];
	if (ui_session_set_log(v->s, r->log, &e)) {
		ui_status_err(v->c, &e);
		trail_free(&t);
		return false;
	}
	v->follow->moved = false;
	if (v->script)
		ui_session_diag_poll(v->s, true);
	char name[80], when[40], verdict[200], fixes[400], saved[40] = "";
	run_name(r, name, sizeof name);
	run_time(r->when, when, sizeof when);
	trail_verdict_words(r, verdict, sizeof verdict);
	trail_fixes_words(r, fixes, sizeof fixes);
	if (r->nafter)
		run_time(r->after[r->nafter - 1]->when, saved, sizeof saved);
	if (next > 0) {
		/* History: the header names the run, the diagnosis says what followed it. */
		char label[64], note[512];
		if (r->number == TRAIL_CURRENT)
			snprintf(label, sizeof label, "%s", _("earlier run"));
		else
			snprintf(label, sizeof label, _("run %ld, earlier"), r->number);
		if (r->nafter)
			snprintf(note, sizeof note,
				 _("History: %s, log written %s. Saved after it: %s (%s)."), name, when,
				 fixes, saved);
		else
			snprintf(note, sizeof note,
				 _("History: %s, log written %s. Nothing was saved after it."), name,
				 when);
		ui_session_name_run(v->s, label, note);
	}
	char after[512];
	if (r->nafter)
		snprintf(after, sizeof after, _("saved after it: %s (%s)"), fixes, saved);
	else
		snprintf(after, sizeof after, "%s", next == 0 && r->number != TRAIL_CURRENT
			 ? _("nothing saved after it yet") : _("nothing saved after it"));
	if (next == 0)
		ui_status(v->c, false, _("%s (the newest of %zu runs), log written %s: %s; %s. R shows the "
				       "one before."), name, t.n, when, verdict, after);
	else if ((size_t)next + 1 >= t.n) /* the oldest: R wraps to the newest (E19) */
		ui_status(v->c, false, _("%s (the oldest, %zu before the newest), log written %s: %s; "
				       "%s. R goes back to the newest."), name, next, when, verdict,
			  after);
	else
		ui_status(v->c, false, _("%s (%zu before the newest), log written %s: %s; %s. R shows the "
				       "one before."), name, next, when, verdict, after);
	trail_free(&t);
	return true;
}
