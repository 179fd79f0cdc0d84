/* view_diff.c — the Diff view: the unified diff of the unsaved edits, searched with /. */
#include <stdlib.h>

#include "oomfix/i18n.h"
#include "ui.h"

/* What the change does to the estimate (SPEC §12), then the change. */
static void change_lines(struct ui_app *a, const struct ui_ctx *c, struct ui_lines *l,
			 const char *d)
{
	ui_fit_change_lines(&a->s, l, c->r.w - 2);
	if (l->n)
		ui_lines_add(l, UI_R_NORMAL, "");
	ui_lines_diff(l, d);
}

static void diff_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	char *d = ui_session_diff(&a->s, 3);

	if (!a->s.job_path)
		ui_lines_add(&l, UI_R_DIM, _(" No job file is open."));
	else if (!d || !*d)
		ui_lines_add(&l, UI_R_DIM, _(" No unsaved changes. a applies the first fix; the "
					     "panels edit values."));
	else
		change_lines(a, c, &l, d);
	free(d);
	ui_draw_scrolled(c, &l, &a->pos[UI_V_DIFF]);
	ui_lines_free(&l);
}

/* The Diff's lines as they are drawn (for the search). */
static void diff_search_lines(struct ui_app *a, const struct ui_ctx *c, struct ui_lines *l)
{
	char *d = ui_session_diff(&a->s, 3);
	if (d && *d)
		change_lines(a, c, l, d);
	free(d);
}

static enum ui_req diff_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act)
{
	return ui_text_search_action(a, c, act, diff_search_lines, &a->pos[UI_V_DIFF].cursor);
}

static void diff_search_done(struct ui_app *a, const struct ui_ctx *c)
{
	ui_text_search_done(a, c, diff_search_lines, &a->pos[UI_V_DIFF].cursor);
}

const struct ui_view_ops ui_view_diff = { .name = N_("Diff"), .keys = UI_CTX_TEXT,
					  .draw = diff_draw, .action = diff_action,
					  .prompt_done = diff_search_done, .sub = true };
