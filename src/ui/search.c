/* search.c — the one search of the UI: the pattern typed after '/' compiled once (PCRE2, smart
 * case), and finding it in a text screen's display lines (Plan, Diff, Advanced); the Log view
 * searches the file itself with the same compiled pattern. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>

#include "oomfix/i18n.h"
#include "prompt.h"
#include "search.h"

void ui_search_start(const struct ui_env *v)
{
	ui_prompt_open(v->host, UI_P_SEARCH, "/", "", NULL, 0);
	ui_status(v->c, false, "%s", "");
}

bool ui_search_compile(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	int errcode;
	PCRE2_SIZE erroff;
	uint32_t opts = PCRE2_MATCH_INVALID_UTF | PCRE2_UTF;
	bool upper = false;

	if (v->prompt->len == 0)
		return false;
	snprintf(v->search->text, sizeof v->search->text, "%.*s", (int)v->prompt->len,
		 v->prompt->buf);
	/* Smart case, as in less and vim: lower-case patterns ignore case. */
	for (const char *p = v->search->text; *p; p++)
		upper |= *p >= 'A' && *p <= 'Z';
	if (!upper)
		opts |= PCRE2_CASELESS;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)v->search->text, PCRE2_ZERO_TERMINATED, opts,
				       &errcode, &erroff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(errcode, msg, sizeof msg);
		ui_status(c, true, _("Bad pattern at offset %zu: %s"), (size_t)erroff, (char *)msg);
		return false;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	if (v->search->md)
		pcre2_match_data_free(v->search->md);
	if (v->search->re)
		pcre2_code_free(v->search->re);
	v->search->re = re;
	v->search->md = pcre2_match_data_create_from_pattern(re, NULL);
	return true;
}

void ui_search_free(struct ui_search *s)
{
	if (s->md)
		pcre2_match_data_free(s->md);
	if (s->re)
		pcre2_code_free(s->re);
	s->md = s->re = NULL;
}

bool ui_search_lines(const struct ui_env *v, const struct ui_lines *l, long long *line,
		     bool backward, bool here)
{
	const struct ui_ctx *c = v->c;
	long long first = -1, last = -1, hit = -1, at = 0, count = 0;

	if (!v->search->re) {
		ui_status(c, false, "%s", _("No search yet: press / to search."));
		return false;
	}
	for (long long i = 0; i < (long long)l->n; i++) {
		if (pcre2_match(v->search->re, (PCRE2_SPTR)l->v[i].text, l->v[i].len, 0, 0,
				v->search->md, NULL) < 0)
			continue;
		count++;
		if (first < 0)
			first = i;
		last = i;
		if (!backward && hit < 0 && (here ? i >= *line : i > *line)) {
			hit = i;
			at = count;
		}
		if (backward && i < *line) {
			hit = i;
			at = count;
		}
	}
	if (!count) {
		ui_status(c, false, _("Pattern not found: %s"), v->search->text);
		return false;
	}
	if (hit < 0) { /* wrap around */
		hit = backward ? last : first;
		at = backward ? count : 1;
	}
	*line = hit;
	ui_status(c, false, _("Match %lld of %lld (n next, N previous)"), at, count);
	return true;
}

/* Search in a text screen whose display lines `lines` builds: the match becomes the line *at
 * (the top line; the Plan's cursor is its selected step, so there the top line is moved). */
static void text_search(const struct ui_env *v, ui_lines_fn lines, long long *at, bool backward,
			bool here)
{
	struct ui_lines l = { 0 };
	long long line = *at;

	lines(v, &l);
	if (ui_search_lines(v, &l, &line, backward, here))
		*at = line;
	ui_lines_free(&l);
}

enum ui_req ui_text_search_action(const struct ui_env *v, enum ui_act act, ui_lines_fn lines,
				  long long *at)
{
	switch (act) {
	case UI_A_SEARCH: ui_search_start(v); return UI_REQ_DONE;
	case UI_A_SEARCH_NEXT: text_search(v, lines, at, false, false); return UI_REQ_DONE;
	case UI_A_SEARCH_PREV: text_search(v, lines, at, true, false); return UI_REQ_DONE;
	default: return UI_REQ_PASS;
	}
}

void ui_text_search_done(const struct ui_env *v, ui_lines_fn lines, long long *at)
{
	if (ui_search_compile(v))
		text_search(v, lines, at, false, true);
}
