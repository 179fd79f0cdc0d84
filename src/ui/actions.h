/* actions.h — what the keys do to the job (actions.c): apply a fix, save, reload what changed
 * on disk, quit, the next theme. */
#ifndef OOMFIX_UI_ACTIONS_H
#define OOMFIX_UI_ACTIONS_H

#include "ui.h"

/* When the job changed on disk and the user has not chosen to keep this version of it, asks
 * whether to reload. True when it asked. */
bool ui_check_disk(struct ui_app *a, const struct ui_ctx *c);
/* Asks to save (the save screen); its answer returns to mode `back`. */
void ui_ask_save(struct ui_app *a, const struct ui_ctx *c, enum ui_mode back);
/* Applies `id`; while an applied change has not been tried, another one is only made after a
 * yes (`confirmed`). */
void ui_apply_fix(struct ui_app *a, enum fix_id id, bool confirmed);
/* a: the first fix of the plan for the verdict. */
void ui_apply_first_fix(struct ui_app *a);
/* q: quit, asking first when there are unsaved changes or a retry runs. */
void ui_quit(struct ui_app *a);
/* Ctrl-C: quit at once when nothing is unsaved, else ask as q does. */
void ui_interrupted(struct ui_app *a);
/* T: the next theme. */
void ui_next_theme(struct ui_app *a);

#endif
