/* prompt.c — questions (ui_ask: a question is its own text, keys and answer, defined by the
 * feature that asks it) and the line editor of the status-line prompt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "oomfix/i18n.h"
#include "app.h"
#include "prompt.h"

/* ---- questions ------------------------------------------------------------------------------- */

void ui_ask(struct ui_app *a, const struct ui_question *q, enum ui_mode back)
{
	a->ask = q;
	a->ask_return = back;
	a->mode = UI_M_CONFIRM;
}

bool ui_asking(const struct ui_app *a, const struct ui_question *q)
{
	return a->mode == UI_M_CONFIRM && a->ask == q;
}

const char *ui_question_text(const struct ui_app *a)
{
	return a->ask ? _(a->ask->text) : "";
}

void ui_question_key(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key)
{
	const struct ui_question *q = a->ask;
	int k = key >= 'A' && key <= 'Z' ? key - 'A' + 'a' : key;

	if (q->keys && k > 0 && k < 0x80 && strchr(q->keys, k)) {
		a->mode = a->ask_return;
		q->answer(a, c, k);
		return;
	}
	/* A no anywhere on the way cancels a pending "save, then quit". */
	if (act == UI_A_NO)
		a->quit_after_save = a->open_after_save = false;
	if (act == UI_A_YES || act == UI_A_NO) {
		a->mode = a->ask_return;
		q->answer(a, c, act == UI_A_YES ? 'y' : 'n');
	} else if (act != UI_A_NONE) {
		ui_pos_move(&a->save_pos, act, UI_POS_END, c->page);
	}
}

/* ---- the line editor ------------------------------------------------------------------------- */

void ui_prompt_open(struct ui_app *a, enum ui_prompt_kind kind, const char *label,
		    const char *text, const struct job_field *f, size_t ds)
{
	a->mode = UI_M_PROMPT;
	a->prompt.kind = kind;
	a->prompt.field = f;
	a->prompt.ds = ds;
	a->prompt_done = NULL;
	snprintf(a->prompt.label, sizeof a->prompt.label, "%s", label);
	snprintf(a->prompt.buf, sizeof a->prompt.buf, "%s", text ? text : "");
	a->prompt.len = a->prompt.cur = strlen(a->prompt.buf);
}

void ui_prompt_keep(struct ui_app *a)
{
	a->mode = UI_M_PROMPT;
}

void ui_prompt_start(struct ui_app *a, const char *label, const char *text,
		     void (*done)(struct ui_app *a, const struct ui_ctx *c, bool ok))
{
	ui_prompt_open(a, UI_P_LINE, label, text, NULL, 0);
	a->prompt_done = done;
}

/* The start of the UTF-8 character before byte p, and the end of the one at p. */
static size_t utf8_back(const char *s, size_t p)
{
	while (p > 0 && ((unsigned char)s[--p] & 0xC0) == 0x80)
		;
	return p;
}

static size_t utf8_fwd(const char *s, size_t len, size_t p)
{
	if (p < len)
		p++;
	while (p < len && ((unsigned char)s[p] & 0xC0) == 0x80)
		p++;
	return p;
}

/* The line editor: typing goes in at the cursor; the keys move and delete as in a shell. */
bool ui_prompt_key(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key)
{
	if (a->prompt.cur > a->prompt.len)
		a->prompt.cur = a->prompt.len;
	size_t p = a->prompt.cur;

	switch (act) {
	case UI_A_PROMPT_OK:
	case UI_A_PROMPT_CANCEL: {
		void (*done)(struct ui_app *, const struct ui_ctx *, bool) = a->prompt_done;
		a->mode = UI_M_NORMAL;
		a->prompt_done = NULL;
		if (done)
			done(a, c, act == UI_A_PROMPT_OK);
		else if (act == UI_A_PROMPT_CANCEL)
			ui_status(c, false, "%s", _("Cancelled."));
		/* Otherwise the prompt was opened by the view on screen: the line is its to take. */
		return !done && act == UI_A_PROMPT_OK;
	}
	case UI_A_PROMPT_BS:
		/* Back over one whole UTF-8 character, before the cursor. */
		if (p > 0) {
			size_t q = utf8_back(a->prompt.buf, p);
			memmove(a->prompt.buf + q, a->prompt.buf + p, a->prompt.len - p + 1);
			a->prompt.len -= p - q;
			a->prompt.cur = q;
		}
		return false;
	case UI_A_PROMPT_DEL:
		if (p < a->prompt.len) {
			size_t q = utf8_fwd(a->prompt.buf, a->prompt.len, p);
			memmove(a->prompt.buf + p, a->prompt.buf + q, a->prompt.len - q + 1);
			a->prompt.len -= q - p;
		}
		return false;
	case UI_A_PROMPT_CLEAR: /* C-u: everything before the cursor, as in a shell */
		memmove(a->prompt.buf, a->prompt.buf + p, a->prompt.len - p + 1);
		a->prompt.len -= p;
		a->prompt.cur = 0;
		return false;
	case UI_A_PROMPT_WORD: { /* C-w: the word before the cursor and the spaces after it */
		size_t q = p;
		while (q > 0 && a->prompt.buf[q - 1] == ' ')
			q--;
		while (q > 0 && a->prompt.buf[q - 1] != ' ')
			q--;
		memmove(a->prompt.buf + q, a->prompt.buf + p, a->prompt.len - p + 1);
		a->prompt.len -= p - q;
		a->prompt.cur = q;
		return false;
	}
	case UI_A_PROMPT_LEFT:
		a->prompt.cur = utf8_back(a->prompt.buf, p);
		return false;
	case UI_A_PROMPT_RIGHT:
		a->prompt.cur = utf8_fwd(a->prompt.buf, a->prompt.len, p);
		return false;
	case UI_A_PROMPT_HOME:
		a->prompt.cur = 0;
		return false;
	case UI_A_PROMPT_END:
		a->prompt.cur = a->prompt.len;
		return false;
	default:
		break;
	}
	if (key >= 0x20 && key < 0x110000 && key != 0x7F && !(key >= 0x80 && key < 0xA0)) {
		char mb[8];
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t n = wcrtomb(mb, (wchar_t)key, &st);
		if (n != (size_t)-1 && a->prompt.len + n < sizeof a->prompt.buf) {
			memmove(a->prompt.buf + p + n, a->prompt.buf + p, a->prompt.len - p + 1);
			memcpy(a->prompt.buf + p, mb, n);
			a->prompt.len += n;
			a->prompt.cur = p + n;
		}
	}
	return false;
}
