/* follow.h — the verdict arriving and the log followed as it grows (follow.c). */
#ifndef OOMFIX_UI_FOLLOW_H
#define OOMFIX_UI_FOLLOW_H

#include "app.h"

/* How often the input loop looks at the log while it waits for a key. */
#define UI_FOLLOW_POLL_MS 250

/* Takes the worker's result when it is ready (or waits for it); true when the screen changed. */
bool ui_take_verdict(struct ui_app *a, bool wait);
/* Brings the diagnosis up to date with what the run appended; true when the screen changed. */
bool ui_follow_tick(struct ui_app *a);

#endif
