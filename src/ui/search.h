/* search.h — the one search of the UI (search.c): the pattern typed after '/' compiled once
 * (PCRE2, smart case), found in a text screen's display lines (Plan, Diff, Advanced); the Log
 * view searches the file itself with the same compiled pattern. */
#ifndef OOMFIX_UI_SEARCH_H
#define OOMFIX_UI_SEARCH_H

#include <stdbool.h>

#include "lines.h"
#include "view.h"

struct ui_search {
	void *re;                   /* pcre2_code_8 *, NULL before the first search */
	void *md;                   /* pcre2_match_data_8 * */
	char text[256];             /* the pattern as typed */
};

/* ui_search_start opens the '/' prompt; ui_search_compile compiles the line typed into
 * v->search (false, with the reason in the status line, when it is not a pattern);
 * ui_search_lines finds the pattern in display lines from *line (the next after it, the one
 * before it when backward, or *line itself when `here`), wrapping around, moves *line there and
 * says "Match i of n". ui_search_free frees the pattern at exit. */
void ui_search_start(const struct ui_env *v);
bool ui_search_compile(const struct ui_env *v);
bool ui_search_lines(const struct ui_env *v, const struct ui_lines *l, long long *line,
		     bool backward, bool here);
void ui_search_free(struct ui_search *s);

/* The search of a text screen (Plan, Diff): `lines` builds the screen's display lines as drawn,
 * and the match becomes the line *at. ui_text_search_action takes / n N (UI_REQ_PASS for
 * other actions); ui_text_search_done is the view's prompt_done. */
typedef void (*ui_lines_fn)(const struct ui_env *v, struct ui_lines *l);
enum ui_req ui_text_search_action(const struct ui_env *v, enum ui_act act, ui_lines_fn lines,
				  long long *at);
void ui_text_search_done(const struct ui_env *v, ui_lines_fn lines, long long *at);

#endif
