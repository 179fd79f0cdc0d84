/* job_switch.h — opening another job of the web UI's list in place of the current one
 * (job_switch.c). */
#ifndef OOMFIX_UI_JOB_SWITCH_H
#define OOMFIX_UI_JOB_SWITCH_H

#include "app.h"

/* Opens the job under the job list's cursor in place of the current one: a new session, the
 * views' state reset, the log read, an emergency save of it offered. Refused (said in the
 * status line) while there are unsaved changes. */
void ui_open_selected_job(struct ui_app *a, const struct ui_ctx *c);
/* The sentence that says the open web UI job is running and cannot be saved ("" otherwise). */
const char *ui_running_note(const struct ui_app *a);

#endif
