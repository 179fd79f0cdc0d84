/* views.c — what every view may call: the status line it writes to, the moves in a list, a
 * scrolled text screen. (The table of views and their environment are view_table.c's.) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "view.h"

void ui_status(const struct ui_ctx *c, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg->text, sizeof c->msg->text, fmt, ap);
	va_end(ap);
	/* 「。 」 where a message was joined from sentences ("%s %s") */
	c->msg->text[text_tidy_spaces(c->msg->text, strlen(c->msg->text))] = '\0';
	c->msg->error = error;
}

void ui_status_err(const struct ui_ctx *c, const struct err *e)
{
	if (e->file[0] && e->line > 0)
		ui_status(c, true, "%s:%d:%d: %s", e->file, e->line, e->col, e->msg);
	else if (e->file[0])
		ui_status(c, true, "%s: %s", e->file, e->msg);
	else
		ui_status(c, true, "%s", e->msg);
}

const char *ui_no_job_text(const struct ui_env *v, const char *file_text)
{
	/* With the web UI's job list there is no file to start with: a job is picked there. */
	return v->jobs_on ? _("No job is open: pick one in the Jobs tab (J) and press Enter.")
			  : _(file_text);
}

void ui_job_error_text(const struct ui_session *s, char *buf, size_t size)
{
	const struct err *e = &s->job_err;
	char where[700];

	if (e->file[0] && e->line > 0)
		snprintf(where, sizeof where, "%s:%d:%d", e->file, e->line, e->col);
	else
		snprintf(where, sizeof where, "%s", e->file[0] ? e->file : "?");
	snprintf(buf, size, _("The job could not be loaded, so only its log is open. %s: %s. Fix "
			      "the file (in any editor) and start oomfix again."), where, e->msg);
}

void ui_pos_move(struct ui_pos *p, enum ui_act act, long long n, int page)
{
	switch (act) {
	case UI_A_UP: p->cursor--; break;
	case UI_A_DOWN: p->cursor++; break;
	case UI_A_PGUP: p->cursor -= page; p->top -= page; break;
	case UI_A_PGDN: p->cursor += page; p->top += page; break;
	case UI_A_TOP: p->cursor = 0; break;
	case UI_A_BOTTOM: p->cursor = n - 1; break;
	default: break;
	}
	if (p->cursor >= n)
		p->cursor = n - 1;
	if (p->cursor < 0)
		p->cursor = 0;
	if (p->top < 0)
		p->top = 0;
}

/* Scrolling a text screen: the cursor is the top line, so every key moves the view. */
void ui_draw_scrolled(const struct ui_ctx *c, struct ui_lines *l, struct ui_pos *p)
{
	struct ui_rect r = c->r;
	long long max = (long long)l->n - r.h;

	if (max < 0)
		max = 0;
	if (p->cursor > max)
		p->cursor = max;
	if (p->cursor < 0)
		p->cursor = 0;
	p->top = p->cursor;
	for (int i = 0; i < r.h && p->top + i < (long long)l->n; i++)
		ui_draw_line(c->win, r.y + i, r.x, r.w, &l->v[p->top + i], false);
	if ((long long)l->n > r.h)
		snprintf(c->msg->scroll_info, sizeof c->msg->scroll_info, "%lld-%lld/%zu", p->top + 1,
			 p->top + r.h < (long long)l->n ? p->top + r.h : (long long)l->n, l->n);
}
