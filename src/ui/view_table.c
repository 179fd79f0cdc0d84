/* view_table.c — the views in tab order, one row of UI_VIEWS each (each view's ops live in its
 * own file, tig-style). Only the loop and the screen use the table: a view never does, so views
 * do not depend on one another. */
#include <stdio.h>
#include <stdlib.h>

#include "oomfix/err.h"
#include "oomfix/i18n.h"
#include "app.h"

#define UI_VIEW_ROW(id, ops) [UI_V_##id] = &ops,
const struct ui_view_ops *const ui_views[UI_V_COUNT] = { UI_VIEWS(UI_VIEW_ROW) };
#undef UI_VIEW_ROW

void ui_views_start(struct ui_app *a)
{
	for (int v = 0; v < UI_V_COUNT; v++) {
		const struct ui_view_ops *ops = ui_views[v];
		if (!ops->priv_size)
			continue;
		if (!(a->priv[v] = calloc(1, ops->priv_size))) {
			fprintf(stderr, "oomfix: %s\n", _("out of memory"));
			exit(ERR_SOFTWARE);
		}
		if (ops->init)
			ops->init(a->priv[v]);
	}
}

void ui_views_end(struct ui_app *a)
{
	for (int v = 0; v < UI_V_COUNT; v++)
		if (ui_views[v]->fini && a->priv[v])
			ui_views[v]->fini(a->priv[v]);
	for (int v = 0; v < UI_V_COUNT; v++) {
		free(a->priv[v]);
		a->priv[v] = NULL;
	}
}

void ui_views_forget_job(struct ui_app *a)
{
	for (int v = 0; v < UI_V_COUNT; v++) {
		if (v == UI_V_JOBS)
			continue;
		if (ui_views[v]->fini && a->priv[v])
			ui_views[v]->fini(a->priv[v]);
		a->pos[v] = (struct ui_pos){ 0, 0 };
	}
}

bool ui_views_tick(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	bool redraw = false;
	for (int v = 0; v < UI_V_COUNT; v++)
		if (ui_views[v]->tick) {
			struct ui_env env = ui_env_of(a, (enum ui_view)v, &c);
			redraw |= ui_views[v]->tick(&env);
		}
	return redraw;
}

bool ui_views_busy(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	for (int v = 0; v < UI_V_COUNT; v++)
		if (ui_views[v]->busy) {
			struct ui_env env = ui_env_of(a, (enum ui_view)v, &c);
			if (ui_views[v]->busy(&env))
				return true;
		}
	return false;
}

const char *ui_view_name(enum ui_view v)
{
	return _(ui_views[v]->name);
}
