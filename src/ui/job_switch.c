/* job_switch.c — opening another job of the web UI's job list in place of the current one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
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

/* Opens the job under the job list's cursor in place of the current one. */
void ui_open_selected_job(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_env jobs = ui_env_of(a, UI_V_JOBS, c);
	const char *name = ui_jobs_selected(&jobs);
	if (!name)
		return;
	if (ui_session_dirty(&a->s)) {
		ui_status(c, true, "%s", _("There are unsaved changes: save them (s) or undo them (u) "
					  "before opening another job."));
		return;
	}
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
