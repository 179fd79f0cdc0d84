/* view_diff.c — the Diff view: the unified diff of the unsaved edits, searched with /. */
#include <stdlib.h>

#include "oomfix/i18n.h"
#include "search.h"
#include "view.h"
#include "view_diag.h"

/* What the change does to the estimate (SPEC §12), then the change. */
static void change_lines(const struct ui_env *v, struct ui_lines *l,
			 const char *d)
{
	const struct ui_ctx *c = v->c;
	ui_fit_change_lines(v->s, l, c->r.w - 2);
	if (l->n)
		ui_lines_add(l, UI_R_NORMAL, "");
	ui_lines_diff(l, d);
}

static void diff_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct ui_lines l = { 0 };
	char *d = ui_session_diff(v->s, 3);

	if (!v->s->job_path)
		ui_lines_add(&l, UI_R_DIM, _(" No job file is open."));
	else if (!d || !*d)
		ui_lines_add(&l, UI_R_DIM, _(" No unsaved changes. a applies the first fix; the "
					     "panels edit values."));
	else
		change_lines(v, &l, d);
	free(d);
	ui_draw_scrolled(c, &l, v->pos);
	ui_lines_free(&l);
}

/* The Diff's lines as they are drawn (for the search). */
static void diff_search_lines(const struct ui_env *v, struct ui_lines *l)
{
	char *d = ui_session_diff(v->s, 3);
	if (d && *d)
		change_lines(v, l, d);
	free(d);
}

static enum ui_req diff_action(const struct ui_env *v, enum ui_act act)
{
	return ui_text_search_action(v, act, diff_search_lines, &v->pos->cursor);
}

static void diff_search_done(const struct ui_env *v)
{
	ui_text_search_done(v, diff_search_lines, &v->pos->cursor);
}

const struct ui_view_ops ui_view_diff = { .name = N_("Diff"), .keys = UI_CTX_TEXT,
					  .draw = diff_draw, .action = diff_action,
					  .prompt_done = diff_search_done, .sub = true };
