/* follow.h — the verdict arriving and the log followed as it grows (follow.c). */
#ifndef OOMFIX_UI_FOLLOW_H
#define OOMFIX_UI_FOLLOW_H

#include "ui.h"

/* How often the input loop looks at the log while it waits for a key. */
#define UI_FOLLOW_POLL_MS 250

/* Whether the Log view follows a growing log now: following is on and the view is at the end
 * (or was never moved from it). */
bool ui_log_following(const struct ui_app *a);
/* Takes the worker's result when it is ready (or waits for it); true when the screen changed. */
bool ui_take_verdict(struct ui_app *a, bool wait);
/* Brings the diagnosis up to date with what the run appended; true when the screen changed. */
bool ui_follow_tick(struct ui_app *a);

#endif
