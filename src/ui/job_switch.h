/* job_switch.h — opening another job of the web UI's list in place of the current one
 * (job_switch.c). */
#ifndef OOMFIX_UI_JOB_SWITCH_H
#define OOMFIX_UI_JOB_SWITCH_H

#include "app.h"

/* Opens the job under the job list's cursor in place of the current one: a new session, the
 * views' state reset, the log read, an emergency save of it offered. With unsaved changes it
 * asks first, naming both jobs: save them and open it, drop them and open it, or stay (E7). */
void ui_open_selected_job(struct ui_app *a, const struct ui_ctx *c);
/* Opens the web UI job NAME in place of the current one, whatever it holds unsaved (the
 * question's y and s, once saved, come here). */
void ui_open_job(struct ui_app *a, const struct ui_ctx *c, const char *name);
/* The sentence that says the open web UI job is running and cannot be saved ("" otherwise). */
const char *ui_running_note(const struct ui_app *a);

#endif
