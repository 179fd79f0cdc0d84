/* retry_ctl.h — retrying until the job fits (r), as the UI drives it (retry_ctl.c): the
 * questions before the loop starts, following its tries, stopping it. The loop itself is
 * `oomfix retry` run as a child (retry.c). */
#ifndef OOMFIX_UI_RETRY_CTL_H
#define OOMFIX_UI_RETRY_CTL_H

#include "app.h"

/* r: stop a loop that runs (asked first, in the Retry view), or set one up. */
void ui_retryctl_key(struct ui_app *a, const struct ui_ctx *c);
/* Takes what the loop did since the last turn; true when the screen changed. */
bool ui_retryctl_tick(struct ui_app *a);
/* Shows try i's log in the Log view (later, when the log on screen is still being read). */
bool ui_retryctl_show_try(struct ui_app *a, long long i, bool switch_view);
/* Actions that change or save the job, or replace it: the loop's while it runs. */
bool ui_retryctl_locks(enum ui_act act);
/* q or Ctrl-C while the loop runs: asks to stop it and quit. */
void ui_retryctl_ask_quit(struct ui_app *a);

#endif
