/* env.c — what a view is given each turn (view.h): the context of the screen, and the view's
 * environment made from the application's state. A view's question finds its environment here
 * again, so this file uses no view: views and the table of views both depend on it. */
#include <curses.h>

#include "app.h"

/* The context the views are given this turn: the content area, the page and the status line. */
struct ui_ctx ui_ctx_of(struct ui_app *a)
{
	int page = a->rows - 4;

	return (struct ui_ctx){ .win = stdscr, .r = { 1, 0, a->rows - 3, a->cols }, .rows = a->rows,
				.cols = a->cols, .page = page > 1 ? page : 1, .msg = &a->msg };
}

struct ui_env ui_env_of(struct ui_app *a, enum ui_view v, const struct ui_ctx *c)
{
	return (struct ui_env){
		.c = c, .view = v, .pos = &a->pos[v], .priv = a->priv[v], .s = &a->s,
		.follow = &a->follow, .retry = &a->retry, .retry_asking = a->retry_asking,
		.mode = a->mode, .prompt = &a->prompt, .search = &a->search, .arg = &a->req_arg,
		.jobs_on = a->jobs_on, .script = a->script, .host = a,
	};
}
