/* actions.h — what the keys do to the job (actions.c): apply a fix, save, reload what changed
 * on disk, quit, the next theme. */
#ifndef OOMFIX_UI_ACTIONS_H
#define OOMFIX_UI_ACTIONS_H

#include "app.h"

/* When the job changed on disk and the user has not chosen to keep this version of it, asks
 * whether to reload. True when it asked. */
bool ui_check_disk(struct ui_app *a, const struct ui_ctx *c);
/* Asks to save (the save screen); its answer returns to mode `back`. */
void ui_ask_save(struct ui_app *a, const struct ui_ctx *c, enum ui_mode back);
/* Applies `id`, picked by hand (the Plan view's Enter): at once where the one decision
 * (ui_session_decide) would apply a fix and the step acts on the phase that failed, else after
 * a yes to a question led by the decision's words (`confirmed`: the yes was given). */
void ui_apply_fix(struct ui_app *a, enum fix_id id, bool confirmed);
/* A hand-picked fix `id` (Plan Enter, the walk-through's a) must be asked about first: `lead`
 * receives the decision's words, and says when the step does not act on the phase that failed.
 * False when it is applied at once. */
bool ui_pick_asks(const struct ui_app *a, enum fix_id id, char *lead, size_t sz);
/* a: what the one decision says (plan_decide), in its words. */
void ui_apply_first_fix(struct ui_app *a);
/* q: quit, asking first when there are unsaved changes or a retry runs. */
void ui_quit(struct ui_app *a);
/* Ctrl-C: quit at once when nothing is unsaved, else ask as q does. */
void ui_interrupted(struct ui_app *a);
/* T: the next theme. */
void ui_next_theme(struct ui_app *a);

#endif
