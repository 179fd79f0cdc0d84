/* screen_help.c — the help screen, generated from the action table that dispatches the keys,
 * with the one-cell marks explained under the view that shows them. */
#include <stdio.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "screens.h"
#include "view_diag.h"

/* Groups of the help screen, in order; an action is listed under the first group it has. */
static const struct { unsigned ctx; const char *title; } help_groups[] = {
	{ UI_CTX_VIEWS, N_("Everywhere") },
	{ UI_CTX_FIELDS, N_("Training, Datasets, Sample, Model") },
	{ UI_CTX_ADVANCED, N_("Advanced (the whole YAML)") },
	{ UI_CTX_LOG, N_("Log and diagnosis") },
	{ UI_CTX_PLAN, N_("Plan") },
	{ UI_CTX_JOBS, N_("Jobs of the web UI") },
	{ UI_CTX_RETRY, N_("Retry") },
	{ UI_CTX_SCROLL, N_("Scrolling screens") },
	{ UI_CTX_WALK, N_("Walk-through") },
	{ UI_CTX_CONFIRM, N_("Questions") },
	{ UI_CTX_PROMPT, N_("Typing a value or a search") },
	{ UI_CTX_HELP, N_("This help") },
};

/* What the one-cell marks mean, listed under the group of the view that shows them: the marks
 * carry the meaning without colour, so they must be explained somewhere. */
static const struct { unsigned ctx; const char *mark, *text; } help_marks[] = {
	{ UI_CTX_FIELDS, "*", N_("changed since the file was loaded or saved") },
	{ UI_CTX_FIELDS, "[x]", N_("a switch or a resolution bucket that is on") },
	/* the fit line under the panels (review 4: it had no help row) */
	{ UI_CTX_FIELDS, N_("Estimate:"), N_("the fit line: the estimate of the job as it is edited, its "
					  "peak and phase, the card (--vram, else nvidia-smi, else "
					  "the log's OOM message) and the verdict: fits, tight (the "
					  "band straddles the card) or will not fit") },
	{ UI_CTX_FIELDS, "[###...]", N_("a phase of the fit line, filled by its share of the card") },
	{ UI_CTX_FIELDS, "]!", N_("a phase whose estimate is over the card") },
	{ UI_CTX_LOG, ">", N_("evidence: a line the verdict rests on") },
	{ UI_CTX_PLAN, ">", N_("the selected step: Enter applies it, j/k pick another") },
	{ UI_CTX_LOG, "!", N_("an out-of-memory error line") },
	{ UI_CTX_LOG, "~", N_("a progress line redrawn with \\r; its last frame is shown") },
	{ UI_CTX_LOG, "^[", N_("an escape character in the log, shown as text") },
};

/* Keys the action table does not list on their own: the answers a question takes beside y and n
 * (prompt.h), and r where it stops a retry. Listed under their group as the actions are. */
static const struct { unsigned ctx; const char *keys, *text; } help_extra[] = {
	{ UI_CTX_RETRY, "r", N_("stop the retry that runs (its run is stopped first); once it has "
				"ended, start another") },
	{ UI_CTX_RETRY, "p", N_("answer to r's question: retry with the probe, which stops a run "
				"once it is 20 steps past the last failure and through a preview "
				"sampling round during training") },
	{ UI_CTX_CONFIRM, "s", N_("answer to q's question: save the changes, then quit") },
	{ UI_CTX_CONFIRM, "p", N_("answer to r's question: retry with the probe") },
};

/* A key line: the keys in a column, the text beside them wrapped under itself, never cut. */
static void key_line(struct ui_lines *l, const char *keys, const char *text, int width)
{
	char col[128];
	int w = text_width(keys, strlen(keys));
	snprintf(col, sizeof col, "  %s%*s", keys, w < 18 ? 18 - w : 1, "");
	struct ui_line *ln = ui_lines_add(l, UI_R_FOOTER_KEY, col);
	int cw = text_width(col, strlen(col)), room = width - cw;
	size_t len = strlen(text), next = len;
	size_t cut = room > 10 ? text_wrap_next(text, len, room, &next) : len;
	char first[512];
	snprintf(first, sizeof first, "%.*s", (int)cut, text);
	ui_line_append(ln, UI_R_NORMAL, first);
	if (next < len && room > 10)
		ui_lines_wrap(l, UI_R_NORMAL, text + next, width, cw);
}

void ui_help_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	char keys[64];
	int width = c->r.w - 1;

	ui_lines_add(&l, UI_R_HEADING, _("oomfix keys"));
	for (size_t g = 0; g < sizeof help_groups / sizeof help_groups[0]; g++) {
		bool any = false;
		for (size_t i = 0; i < ui_nactions; i++) {
			const struct ui_action *act = &ui_actions[i];
			unsigned lowest = act->ctx & -act->ctx;
			if (lowest != help_groups[g].ctx)
				continue;
			if (!any) {
				ui_lines_add(&l, UI_R_NORMAL, "");
				ui_lines_add(&l, UI_R_HEADING, _(help_groups[g].title));
				any = true;
			}
			ui_action_keys(act, keys, sizeof keys);
			if (act->act == UI_A_GOTO_VIEW) /* the table holds 1; every digit works */
				snprintf(keys, sizeof keys, "%s", "1-9");
			key_line(&l, keys, _(act->help), width);
		}
		for (size_t i = 0; i < sizeof help_extra / sizeof help_extra[0]; i++)
			if (help_extra[i].ctx == help_groups[g].ctx)
				key_line(&l, help_extra[i].keys, _(help_extra[i].text), width);
		bool marks = false;
		for (size_t i = 0; i < sizeof help_marks / sizeof help_marks[0]; i++) {
			if (help_marks[i].ctx != help_groups[g].ctx)
				continue;
			if (!marks) {
				ui_lines_add(&l, UI_R_DIM, _("  Marks:"));
				marks = true;
			}
			/* the text wrapped under itself, as a key's: a long one is never cut */
			key_line(&l, _(help_marks[i].mark), _(help_marks[i].text), width);
		}
	}
	ui_draw_scrolled(c, &l, &a->help_pos);
	ui_lines_free(&l);
}
