/* job_switch.c — opening another job of the web UI's job list in place of the current one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "actions.h"
#include "emergency.h"
#include "follow.h"
#include "job_switch.h"
#include "view_jobs.h"

const char *ui_running_note(const struct ui_app *a)
{
	/* Said before any edit rather than at the save: the save is refused while it runs. */
	return !strcmp(a->s.job_status, "running")
		       ? _("It is running in the web UI: it cannot be saved until it stops.")
		       : "";
}

/* E7: the choice in place, naming the job that holds the changes and the one asked for (by
 * name: a save moves the rows of the list). */
static void answer_switch(struct ui_app *a, const struct ui_ctx *c, int key)
{
	a->open_after_save = false;
	if (key == 's') {
		a->open_after_save = true;
		ui_ask_save(a, c, UI_M_NORMAL);
	} else if (key == 'y') {
		ui_open_job(a, c, a->switch_to); /* the edits go with the session that held them */
	} else {
		ui_status(c, false, _("Stayed: %s still has its unsaved changes (Tab or 1 shows "
				      "them, s saves them, u undoes them)."),
			  source_label(a->s.src));
	}
}

static const struct ui_question ask_switch = {
	.text = N_("s = save them and open it, y = drop them and open it, n = stay"),
	.keys = "s",
	.key_words = { N_("save+open") },
	.answer = answer_switch,
	.named = true,
};

/* Opens the job under the job list's cursor in place of the current one. */
void ui_open_selected_job(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_env jobs = ui_env_of(a, UI_V_JOBS, c);
	const char *name = ui_jobs_selected(&jobs);
	if (!name)
		return;
	if (ui_session_dirty(&a->s)) {
		snprintf(a->switch_to, sizeof a->switch_to, "%s", name);
		ui_status(c, false, _("%s has unsaved changes; you asked to open %s%s."),
			  source_label(a->s.src), SOURCE_AITK_PREFIX, name);
		ui_ask(a, &ask_switch, UI_M_NORMAL);
		return;
	}
	ui_open_job(a, c, name);
}

void ui_open_job(struct ui_app *a, const struct ui_ctx *c, const char *name)
{
	char *arg = NULL;
	if (asprintf(&arg, "%s%s", SOURCE_AITK_PREFIX, name) < 0)
		return;
	struct ui_session ns, old;
	struct err e;
	if (ui_session_open(&ns, arg, NULL, &e)) {
		ui_status_err(c, &e);
		free(arg);
		return;
	}
	old = a->s;
	a->s = ns;
	ui_emergency_track(&a->s);
	ui_session_close(&old);
	/* The views' caches belong to the job that was open. */
	ui_views_forget_job(a);
	a->follow.moved = false;
	a->view = a->s.log ? UI_V_LOG : UI_V_TRAINING;
	/* The tries of a loop on the job that was open are not this job's (none runs: opening
	 * another job is refused while one does). */
	ui_retry_free(&a->retry);
	free(a->retry_cmd);
	a->retry_cmd = NULL;
	ui_session_diag_start(&a->s);
	if (a->script)
		ui_take_verdict(a, true);
	if (*ui_running_note(a))
		ui_status(c, false, _("Opened %s; J goes back to the job list. %s"), arg,
			  ui_running_note(a));
	else
		ui_status(c, false, _("Opened %s; J goes back to the job list."), arg);
	free(arg);
	ui_offer_recovery(a);
}
