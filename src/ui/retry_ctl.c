/* retry_ctl.c — retrying until the job fits (r), as the UI drives it.
 *
 * The loop is `oomfix retry` run as a child (retry.c); here it is started after a question, its
 * tries are followed (each try's log is shown in the Log view as it is written, and the job is
 * reloaded after each fix the loop saves), and it is stopped. While it runs, the job is the
 * loop's: nothing that would change or save it is allowed here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "prompt.h"
#include "retry_ctl.h"


#define RETRY_PROBE_STEPS 20

static void retry_begin(struct ui_app *a, long long probe);
static void retry_cancelled(struct ui_app *a, const char *why);

static void answer_retry(struct ui_app *a, const struct ui_ctx *c, int key)
{
	(void)c;
	if (key == 'y' || key == 'p')
		retry_begin(a, key == 'p' ? RETRY_PROBE_STEPS : 0);
	else
		retry_cancelled(a, _("No retry."));
}

/* The probe's 20 steps are RETRY_PROBE_STEPS. */
static const struct ui_question ask_retry = {
	.text = N_("Retry until the job fits? y = yes, each run goes to its end; p = probe: stop a "
		   "run once it is 20 steps past the last failure and through a preview sampling "
		   "round during training; n = no"),
	.keys = "p",
	.key_words = { N_("probe") },
	.answer = answer_retry,
};

static void answer_stop(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key != 'y')
		return;
	ui_retry_stop(&a->retry);
	ui_status(c, false, "%s", _("Stopping the retry: its run is being stopped."));
}

static const struct ui_question ask_stop = {
	.text = N_("Stop the retry? Its run is stopped first (Ctrl-C, then SIGTERM); the job stays "
		   "as the last try left it. y = stop, n = let it go on"),
	.answer = answer_stop,
};

static void answer_quit(struct ui_app *a, const struct ui_ctx *c, int key)
{
	if (key != 'y')
		return;
	ui_retry_stop(&a->retry);
	a->quit_after_retry = true;
	ui_status(c, false, "%s", _("Stopping the retry's run; oomfix quits once it has stopped."));
}

static const struct ui_question ask_quit = {
	.text = N_("A retry is running. Stop it and quit? y = stop its run and quit once it has "
		   "stopped, n = stay"),
	.answer = answer_quit,
};

void ui_retryctl_ask_quit(struct ui_app *a)
{
	ui_ask(a, &ask_quit, UI_M_NORMAL);
}

/* Actions that change or save the job, or replace it: the loop's while it runs. */
bool ui_retryctl_locks(enum ui_act act)
{
	switch (act) {
	case UI_A_APPLY_FIRST: case UI_A_UNDO: case UI_A_REDO: case UI_A_EDIT: case UI_A_TOGGLE:
	case UI_A_EDITOR: case UI_A_SAVE: case UI_A_WALK: case UI_A_PICK: case UI_A_OPEN_JOB:
	case UI_A_QUEUE_JOB:
		return true;
	default:
		return false;
	}
}


static void retry_cancelled(struct ui_app *a, const char *why)
{
	struct ui_ctx c = ui_ctx_of(a);
	a->retry_asking = false;
	if (a->view == UI_V_RETRY && !a->retry.started)
		a->view = a->s.log ? UI_V_LOG : UI_V_TRAINING;
	ui_status(&c, false, "%s", why);
}

static void retry_cmd_done(struct ui_app *a, const struct ui_ctx *c, bool ok);

/* r: stop a loop that runs (asked first, in the Retry view), or set one up. */
void ui_retryctl_key(struct ui_app *a, const struct ui_ctx *c)
{
	if (ui_retry_running(&a->retry)) {
		if (a->view != UI_V_RETRY) {
			a->view = UI_V_RETRY;
			ui_status(c, false, "%s", _("The retry is running; r here stops it."));
			return;
		}
		ui_ask(a, &ask_stop, UI_M_NORMAL);
		return;
	}
	if (!a->s.job || a->s.read_only || a->s.job_bad || !a->s.src) {
		ui_status(c, true, "%s", _("No job file is open: the retry changes a job, so start "
					   "oomfix with JOB.yaml (or aitk:NAME)."));
		return;
	}
	if (ui_session_dirty(&a->s)) {
		ui_status(c, false, "%s", _("There are unsaved changes: save them (s) or undo them (u) "
					    "first; the retry saves the job itself after each run."));
		return;
	}
	if (source_running(a->s.src)) {
		ui_status(c, false, _("%s is running in the web UI: the retry starts the runs itself, "
				      "so stop it there (or let it end) first."), source_label(a->s.src));
		return;
	}
	a->retry_asking = true;
	a->view = UI_V_RETRY;
	a->pos[UI_V_RETRY] = (struct ui_pos){ 0, 0 };
	if (source_row(a->s.src)) { /* the web UI's worker runs it: nothing to type */
		ui_ask(a, &ask_retry, UI_M_NORMAL);
		return;
	}
	char *cmd = a->retry_cmd ? strdup(a->retry_cmd) : ui_retry_guess_command(a->s.job_path);
	ui_prompt_start(a, _("Run the job with: "), cmd, retry_cmd_done);
	free(cmd);
	ui_status(c, false, "%s", "");
}

/* The command was typed: ask before the first run. */
static void retry_cmd_done(struct ui_app *a, const struct ui_ctx *c, bool ok)
{
	size_t k = 0;

	(void)c;
	if (!ok) {
		retry_cancelled(a, _("Cancelled."));
		return;
	}
	while (k < a->prompt.len && (a->prompt.buf[k] == ' ' || a->prompt.buf[k] == '\t'))
		k++;
	if (k == a->prompt.len) {
		retry_cancelled(a, _("No command: no retry."));
		return;
	}
	free(a->retry_cmd);
	a->retry_cmd = strndup(a->prompt.buf, a->prompt.len);
	ui_ask(a, &ask_retry, UI_M_NORMAL);
}

static void retry_begin(struct ui_app *a, long long probe)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;
	const char *from = ui_session_retry_log(&a->s, NULL);
	bool web = source_row(a->s.src) != NULL;
	const char *cmd = web ? NULL : a->retry_cmd;

	a->retry_asking = false;
	if (!web && !cmd) {
		retry_cancelled(a, _("No command: no retry."));
		return;
	}
	if (ui_retry_start(&a->retry, source_label(a->s.src), from, cmd, probe, RETRY_DEFAULT_TRIES,
			   a->vram_arg, &e)) {
		a->view = a->retry.started ? UI_V_RETRY : a->s.log ? UI_V_LOG : UI_V_TRAINING;
		ui_status_err(&c, &e);
		return;
	}
	if (cmd)
		ui_retry_remember_command(a->s.job_path, cmd);
	a->view = UI_V_RETRY;
	a->retry_log_due = -1;
	a->pos[UI_V_RETRY] = (struct ui_pos){ 0, 0 };
	ui_status(&c, false, "%s",
		  from ? _("Retry started from the log on screen: its fix first, then a run.")
		       : web ? _("Retry started: the job is queued in the web UI.")
			     : _("Retry started: the first run is of the job as it is."));
}

/* Shows try i's log in the Log view (later, when the log on screen is still being read). */
bool ui_retryctl_show_try(struct ui_app *a, long long i, bool switch_view)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;
	const struct ui_try *t = &a->retry.tries[i];

	if (!a->s.log_path || strcmp(a->s.log_path, t->log) != 0) {
		int rc = ui_session_set_log(&a->s, t->log, &e);
		if (rc == ERR_TEMPFAIL) {
			a->retry_log_due = i;
			return false;
		}
		if (rc) {
			ui_status_err(&c, &e);
			return false;
		}
		a->pos[UI_V_LOG] = (struct ui_pos){ 0, 0 };
		a->follow.moved = false;
		a->follow.off = false;
		a->follow.bell_done = false;
		if (i + 1 < (long long)a->retry.ntries) /* an earlier try is history (D10) */
			ui_session_mark_history(&a->s, t->n, t->fix);
	}
	a->retry_log_due = -1;
	if (switch_view)
		a->view = UI_V_LOG;
	return true;
}

/* The loop saved the job: take the new text (no edits can be pending, they are refused). A job
 * file that did not change keeps its history; a web UI job's row is read again. */
static void retry_reload(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct err e;
	struct save_stamp now;
	size_t kept, lost;
	if (!source_row(a->s.src) && !ui_session_changed_on_disk(&a->s, &now))
		return;
	if (ui_session_reload(&a->s, &kept, &lost, &e))
		ui_status_err(&c, &e);
	a->have_declined = false;
}

/* Takes what the loop did since the last turn; true when the screen changed. */
bool ui_retryctl_tick(struct ui_app *a)
{
	if (a->retry_log_due >= 0 && (size_t)a->retry_log_due < a->retry.ntries)
		ui_retryctl_show_try(a, a->retry_log_due, false);
	unsigned b = ui_retry_poll(&a->retry);
	if (!b)
		return false;
	struct ui_ctx c = ui_ctx_of(a);
	const struct ui_retry *r = &a->retry;
	if (b & UI_RT_FIX) {
		retry_reload(a);
		for (size_t i = r->ntries; i-- > 0;)
			if (r->tries[i].fix) {
				ui_status(&c, false, _("%s → %s: saved; the next run tries it."),
					  r->tries[i].summary ? r->tries[i].summary : "",
					  r->tries[i].fix);
				break;
			}
	}
	if ((b & UI_RT_TRY) && r->ntries && r->tries[r->ntries - 1].n > 0)
		ui_retryctl_show_try(a, (long long)r->ntries - 1, false);
	if (b & UI_RT_END) {
		char buf[700];
		retry_reload(a);
		beep(); /* once, for the whole loop: the tries on the way do not ring */
		a->follow.bell_done = true;
		ui_retry_last_error(r, buf, sizeof buf);
		if (r->text)
			ui_status(&c, r->outcome == RETRY_OUT_ERROR, _("Retry: %s"), r->text);
		else if (buf[0])
			ui_status(&c, true, _("Retry: %s"), buf);
		else
			ui_status(&c, true, _("Retry: it ended with status %d."), r->status);
		if (a->quit_after_retry)
			a->quit = true;
	}
	return true;
}
