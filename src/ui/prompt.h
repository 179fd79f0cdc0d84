/* prompt.h — questions and the line editor (prompt.c).
 *
 * A question is asked without blocking (the log is followed while it waits): ui_ask puts the
 * screen in UI_M_CONFIRM with the question in the status line, and the key that answers it
 * calls the question's own handler. A feature defines its questions next to its code:
 *
 *	static void answer_queue(struct ui_app *host, const struct ui_ctx *c, int key)
 *	{
 *		if (key == 'y') ...;
 *	}
 *	static const struct ui_question ask_queue = {
 *		.text = N_("Queue it again? y = queue, n = leave it"), .answer = answer_queue,
 *	};
 *	...
 *	ui_ask(v->host, &ask_queue, UI_M_NORMAL);
 *
 * Nothing else is needed: the status line, the footer (y, n) and the keys come from here. A view
 * answering its own question finds its state again with ui_env_of(host, UI_V_x, c).
 */
#ifndef OOMFIX_UI_PROMPT_H
#define OOMFIX_UI_PROMPT_H

#include "oomfix/job.h"
#include "view.h"

/* The status-line prompt: a field's value typed in its row, the search's pattern, or a line asked
 * for by ui_prompt_start. */
enum ui_prompt_kind { UI_P_FIELD, UI_P_SEARCH, UI_P_LINE };
struct ui_prompt {
	enum ui_prompt_kind kind;
	char label[128];
	char buf[512];
	size_t len;
	size_t cur;                 /* the cursor, a byte offset in buf (an open sets it) */
	const struct job_field *field; /* UI_P_FIELD: the field typed, in data set ds */
	size_t ds;
};

struct ui_question {
	const char *text;   /* N_(): the question, saying what each key does */
	const char *keys;   /* the keys it takes beside y and n, lower case ("s", "p"), or NULL */
	const char *key_words[4]; /* N_(): the footer's word for each of keys ("probe") */
	/* The answer: 'y', 'n' or one of keys. The mode is back to the one it was asked from. */
	void (*answer)(struct ui_app *a, const struct ui_ctx *c, int key);
	bool named;         /* the status message (naming the file or the job) leads the question */
	/* What is shown behind the question (the save screen's diff); NULL: the view. */
	void (*draw_behind)(struct ui_app *a, const struct ui_ctx *c);
};

/* Asks q; its answer returns the screen to mode `back`. */
void ui_ask(struct ui_app *a, const struct ui_question *q, enum ui_mode back);
/* True while q is the question on screen. */
bool ui_asking(const struct ui_app *a, const struct ui_question *q);
/* The question on screen, translated. */
const char *ui_question_text(const struct ui_app *a);
/* A key while a question is asked: its answer, or a move in what is shown behind it. */
void ui_question_key(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key);

/* Opens the status-line prompt of a kind for the view on screen, with its label and start text
 * (translated already); a field's prompt names the field (f, ds), NULL and 0 otherwise. The
 * view's prompt_done gets the line when it is confirmed. */
void ui_prompt_open(struct ui_app *host, enum ui_prompt_kind kind, const char *label,
		    const char *text, const struct job_field *f, size_t ds);
/* The line just confirmed was refused (the status line says why): the prompt opens again with
 * it, to be corrected. */
void ui_prompt_keep(struct ui_app *host);
/* Opens the status-line prompt for a line of text (label and start text translated already);
 * done gets the line (ui_prompt_line) when it is confirmed (ok) or cancelled. */
void ui_prompt_start(struct ui_app *a, const char *label, const char *text,
		     void (*done)(struct ui_app *a, const struct ui_ctx *c, bool ok));
/* The line editor: typing goes in at the cursor; the keys move and delete as in a shell.
 * Returns true when the line was confirmed for the view on screen (its prompt_done). */
bool ui_prompt_key(struct ui_app *a, const struct ui_ctx *c, enum ui_act act, int key);

#endif
