/* follow.c — the verdict arriving from the worker, and the log followed as it grows (tail -f,
 * the diagnosis brought up to date, the bell once for an OOM or the end of the run).
 */
#include <sys/stat.h>

#include "oomfix/i18n.h"
#include "follow.h"
#include "prompt.h"

/* ---- the verdict arrives ------------------------------------------------------------------------ */

/* Opens the log at the line that decided the verdict, unless the user has moved already. */
static void place_log_cursor(struct ui_app *a)
{
	if (a->follow.moved || !a->s.have_diag || a->s.diag.nevidence == 0)
		return;
	uint64_t ln = a->s.diag.evidence[0].line;
	a->pos[UI_V_LOG].cursor = ln ? (long long)ln - 1 : 0;
	a->pos[UI_V_LOG].top = a->pos[UI_V_LOG].cursor - 3;
	if (a->pos[UI_V_LOG].top < 0)
		a->pos[UI_V_LOG].top = 0;
}

static void answer_log_job(struct ui_app *a, const struct ui_ctx *c, int key)
{
	struct err e;

	if (key != 'y')
		return;
	if (ui_session_open_log_job(&a->s, false, &e))
		ui_status_err(c, &e);
	else
		ui_status(c, false, "%s", _("Opened the settings from the log, read-only: the panels and "
					   "the Plan show them; nothing can be saved."));
}

static const struct ui_question ask_log_job = {
	.text = N_("The log holds the job's settings as the trainer printed them. Open them "
		   "read-only, so the panels and the plan work? y = open, n = log only"),
	.answer = answer_log_job,
};

/* Takes the worker's result when it is ready (or waits for it); true when the screen changed. */
bool ui_take_verdict(struct ui_app *a, bool wait)
{
	struct ui_ctx c = ui_ctx_of(a);
	if (!ui_session_diag_poll(&a->s, wait))
		return false;
	if (a->s.diag_rc != ERR_OK)
		ui_status_err(&c, &a->s.diag_err);
	place_log_cursor(a);
	/* A log without its job: when the trainer's echo of the settings is in it, offer them. */
	struct err e;
	if (!a->s.job_path && !a->s.job && a->s.log && !a->log_job_asked &&
	    a->mode == UI_M_NORMAL && ui_session_open_log_job(&a->s, true, &e) == ERR_OK) {
		a->log_job_asked = true;
		ui_ask(a, &ask_log_job, UI_M_NORMAL);
	}
	return true;
}

/* ---- following a log that grows ------------------------------------------------------------------ */

/* A web UI job opened before its first run has no log: once the worker has started a run, its
 * log.txt is opened and read like any other (a stat per tick until then). */
static bool pick_up_first_log(struct ui_app *a)
{
	struct stat st;
	struct err e;
	const char *log = a->s.src ? source_log(a->s.src) : NULL;
	if (a->s.log_path || !a->s.job_status[0] || !log || stat(log, &st) != 0 ||
	    ui_session_set_log(&a->s, log, &e) != ERR_OK)
		return false;
	struct ui_ctx c = ui_ctx_of(a);
	a->pos[UI_V_LOG] = (struct ui_pos){ 0, 0 };
	ui_status(&c, false, "%s", _("The job's run has started: its log is in the Log view."));
	return true;
}

/* Brings the diagnosis up to date with what the run appended; moves the Log view to the end when
 * it follows (the cursor was at the end, or never moved by hand); rings the bell once when an
 * OOM or the end of the run appears. True when the screen changed. */
bool ui_follow_tick(struct ui_app *a)
{
	struct ui_pos *p = &a->pos[UI_V_LOG];
	struct ui_ctx c = ui_ctx_of(a);
	bool following = ui_follow_on(&a->follow, &a->s, a->pos[UI_V_LOG].cursor);
	bool was_oom = a->s.have_diag && a->s.diag.oom && !a->s.diag.survived;
	bool was_ended = a->s.have_diag && a->s.diag.run_ended;
	unsigned f = ui_session_follow(&a->s);
	bool status = ui_session_job_status(&a->s); /* a web UI job's status, at the same pace */
	ui_session_watch(&a->s); /* what the run holds on the card, after the log's new lines */

	status |= pick_up_first_log(a);
	if (!f)
		return status;
	if (f & UI_F_RESTARTED) {
		*p = (struct ui_pos){ 0, 0 };
		a->follow.bell_done = false; /* a new run: its end rings again */
		was_oom = was_ended = false;
		ui_status(&c, false, "%s", _("The log was replaced or truncated: reading it again."));
	}
	if ((following || (!a->follow.off && (f & UI_F_RESTARTED))) && a->s.lines_known)
		p->cursor = a->s.log_lines ? (long long)a->s.log_lines - 1 : 0;
	/* During a retry each try's end is the loop's business: it rings once, at its own end. */
	if (!a->follow.bell_done && !ui_retry_running(&a->retry) &&
	    ((a->s.diag.oom && !a->s.diag.survived && !was_oom) ||
	     (a->s.diag.run_ended && !was_ended))) {
		char buf[1024];
		a->follow.bell_done = true;
		beep(); /* the bell, and nothing else: no flash, no other escape sequence */
		diag_sentence(&a->s.diag, buf, sizeof buf);
		/* E18: said over the job list (or any view but the job's), it names its job */
		if (a->view == UI_V_JOBS && a->s.src)
			ui_status(&c, false, _("%s: %s (Tab or 1 shows it)"), source_label(a->s.src),
				  buf);
		else
			ui_status(&c, false, "%s", buf);
	}
	return true;
}
