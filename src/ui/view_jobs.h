/* view_jobs.h — the web UI's job list (view_jobs.c), as the app uses it. */
#ifndef OOMFIX_UI_VIEW_JOBS_H
#define OOMFIX_UI_VIEW_JOBS_H

#include <stdbool.h>

#include "view.h"

/* The job under the cursor of the list (its view's state, priv), NULL when none; a reload of the
 * list on its next draw. */
const char *ui_jobs_selected(const struct ui_env *v);
void ui_jobs_reload(const struct ui_env *v);
/* Q on a web UI job (the list's cursor, or the open job): refused while it runs, said when it is
 * queued, else asked (with s = save and queue when it is the open job and has unsaved changes). */
void ui_jobs_ask_queue(const struct ui_env *v, const char *name, const char *status);
/* The keys the list refuses (and its footer does not offer): they act on the open job. */
bool ui_jobs_refuses(enum ui_act act);

#endif
