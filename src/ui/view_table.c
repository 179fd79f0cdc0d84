/* view_table.c — the views in tab order, one row of UI_VIEWS each (each view's ops live in its
 * own file, tig-style). Only the loop and the screen use the table: a view never does, so views
 * do not depend on one another. */
#include "oomfix/i18n.h"
#include "ui.h"

#define UI_VIEW_ROW(id, ops) [UI_V_##id] = &ops,
const struct ui_view_ops *const ui_views[UI_V_COUNT] = { UI_VIEWS(UI_VIEW_ROW) };
#undef UI_VIEW_ROW

const char *ui_view_name(enum ui_view v)
{
	return _(ui_views[v]->name);
}
