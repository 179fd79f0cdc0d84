/* screens.h — the screens that are modes rather than tabs: the walk-through (walk.c), the help
 * (screen_help.c) and the save screen behind the save question (screen_save.c). They belong to
 * the app's side: the walk-through applies fixes and asks questions as the app's keys do. */
#ifndef OOMFIX_UI_SCREENS_H
#define OOMFIX_UI_SCREENS_H

#include "app.h"

enum ui_req ui_walk_start(struct ui_app *a, const struct ui_ctx *c);
void ui_walk_draw(struct ui_app *a, const struct ui_ctx *c);
enum ui_req ui_walk_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act);
void ui_help_draw(struct ui_app *a, const struct ui_ctx *c);
void ui_save_draw(struct ui_app *a, const struct ui_ctx *c);

#endif
