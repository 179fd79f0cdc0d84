/* keys.c — the one action table: it dispatches keys, writes the help screen and the footer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <curses.h>

#include "oomfix/i18n.h"
#include "keys.h"

#define V UI_CTX_VIEWS
#define S UI_CTX_SCROLL
#define F(k) UI_FKEY(k)
#define ENTER_KEYS '\n', '\r', F(KEY_ENTER)

/* Order matters twice: the first match wins in dispatch, and the footer lists hints in this
 * order, so the view-specific actions come before the global ones. */
const struct ui_action ui_actions[] = {
	/* questions and text input take the keys first */
	{ UI_A_YES, UI_CTX_CONFIRM, { 'y', 'Y' }, N_("answer yes"), N_("yes") },
	{ UI_A_NO, UI_CTX_CONFIRM, { 'n', 'N', 27, 'q' }, N_("answer no"), N_("no") },
	{ UI_A_PROMPT_OK, UI_CTX_PROMPT, { ENTER_KEYS }, N_("accept the text"), N_("accept") },
	{ UI_A_PROMPT_CANCEL, UI_CTX_PROMPT, { 27, UI_CTRL('g') }, N_("cancel the input"),
	  N_("cancel") },
	{ UI_A_PROMPT_BS, UI_CTX_PROMPT, { F(KEY_BACKSPACE), 127, 8 }, N_("delete a character"),
	  NULL },
	{ UI_A_PROMPT_CLEAR, UI_CTX_PROMPT, { UI_CTRL('u') }, N_("delete back to the start"), NULL },
	{ UI_A_PROMPT_WORD, UI_CTX_PROMPT, { UI_CTRL('w') }, N_("delete the word before the cursor"),
	  NULL },
	{ UI_A_PROMPT_DEL, UI_CTX_PROMPT, { F(KEY_DC), UI_CTRL('d') },
	  N_("delete the character under the cursor"), NULL },
	{ UI_A_PROMPT_LEFT, UI_CTX_PROMPT, { F(KEY_LEFT), UI_CTRL('b') }, N_("cursor left"), NULL },
	{ UI_A_PROMPT_RIGHT, UI_CTX_PROMPT, { F(KEY_RIGHT), UI_CTRL('f') }, N_("cursor right"),
	  NULL },
	{ UI_A_PROMPT_HOME, UI_CTX_PROMPT, { F(KEY_HOME), UI_CTRL('a') }, N_("cursor to the start"),
	  NULL },
	{ UI_A_PROMPT_END, UI_CTX_PROMPT, { F(KEY_END), UI_CTRL('e') }, N_("cursor to the end"),
	  NULL },

	/* walk-through */
	{ UI_A_WALK_APPLY, UI_CTX_WALK, { 'a', 'y' }, N_("apply this step and go on"), N_("apply") },
	{ UI_A_WALK_SKIP, UI_CTX_WALK, { 's', 'n', ' ' }, N_("skip this step"), N_("skip") },
	{ UI_A_WALK_BACK, UI_CTX_WALK, { 'b', F(KEY_LEFT) }, N_("back to the previous step"),
	  N_("back") },
	{ UI_A_WALK_MORE, UI_CTX_WALK, { 'm', 'x' }, N_("explain this step in more depth"),
	  N_("more") },
	{ UI_A_WALK_QUIT, UI_CTX_WALK, { 'q', 27 }, N_("leave the walk-through"),
	  N_("leave the walk-through") },

	/* help */
	{ UI_A_HELP_CLOSE, UI_CTX_HELP, { 'q', 27, '?' }, N_("close the help"), N_("close") },

	/* field panels */
	{ UI_A_EDIT, UI_CTX_FIELDS, { ENTER_KEYS }, N_("edit the number or text under the cursor"),
	  N_("edit") },
	{ UI_A_TOGGLE, UI_CTX_FIELDS, { ' ' }, N_("toggle a switch or a resolution bucket"),
	  N_("toggle") },

	/* the Plan view's list */
	{ UI_A_PICK, UI_CTX_PLAN, { ENTER_KEYS }, N_("apply the selected step"), NULL },

	/* advanced */
	{ UI_A_EDITOR, UI_CTX_ADVANCED, { 'e' }, N_("edit the whole YAML in $EDITOR, then reload it"),
	  N_("editor") },

	/* log */
	{ UI_A_SEARCH, UI_CTX_LOG | UI_CTX_TEXT, { '/' },
	  N_("search the log, the Plan, the Diff or the YAML (PCRE2 pattern)"), N_("search") },
	{ UI_A_SEARCH_NEXT, UI_CTX_LOG | UI_CTX_TEXT, { 'n' }, N_("next match"), NULL },
	{ UI_A_SEARCH_PREV, UI_CTX_LOG | UI_CTX_TEXT, { 'N' }, N_("previous match"), NULL },
	{ UI_A_NEXT_EVIDENCE, UI_CTX_LOG, { 'o' }, N_("jump to the next evidence line"),
	  N_("evidence") },
	{ UI_A_PREV_EVIDENCE, UI_CTX_LOG, { 'O' }, N_("jump to the previous evidence line"), NULL },
	{ UI_A_NEXT_RUN, UI_CTX_LOG, { 'R' }, N_("show the job's earlier runs, newest first, as history"),
	  NULL },
	{ UI_A_FOCUS_DIAG, UI_CTX_LOG, { F(KEY_RIGHT), 'l' }, N_("move to the diagnosis panel"),
	  NULL },
	{ UI_A_FOCUS_LOG, UI_CTX_LOG, { F(KEY_LEFT), 'h' }, N_("move back to the log"), NULL },
	{ UI_A_SCROLL_RIGHT, UI_CTX_LOG, { '>' }, N_("scroll long log lines to the right"), NULL },
	{ UI_A_SCROLL_LEFT, UI_CTX_LOG, { '<' }, N_("scroll long log lines back to the left"),
	  NULL },
	{ UI_A_WRAP, UI_CTX_LOG, { 'W' }, N_("wrap long log lines, or cut them again"), NULL },
	{ UI_A_JUMP, UI_CTX_LOG, { ENTER_KEYS }, N_("show the selected evidence line in the log"),
	  NULL },
	{ UI_A_FOLLOW, UI_CTX_LOG, { 'F' }, N_("follow the log as the run writes it, or stop"),
	  NULL },

	/* the web UI's job list */
	{ UI_A_OPEN_JOB, UI_CTX_JOBS, { ENTER_KEYS }, N_("open the job under the cursor with its log"),
	  N_("open") },

	/* the Retry view's list of tries */
	{ UI_A_SHOW_TRY, UI_CTX_RETRY, { ENTER_KEYS }, N_("show the selected try's log in the Log view"),
	  N_("show log") },

	/* moving: every view and every screen that scrolls */
	{ UI_A_UP, V | S | UI_CTX_CONFIRM, { F(KEY_UP), 'k' }, N_("move up"), NULL },
	{ UI_A_DOWN, V | S | UI_CTX_CONFIRM, { F(KEY_DOWN), 'j' }, N_("move down"), NULL },
	{ UI_A_PGUP, V | S | UI_CTX_CONFIRM, { F(KEY_PPAGE), UI_CTRL('b') }, N_("page up"), NULL },
	{ UI_A_PGDN, V | S | UI_CTX_CONFIRM, { F(KEY_NPAGE), UI_CTRL('f') }, N_("page down"), NULL },
	{ UI_A_TOP, V | S, { 'g', F(KEY_HOME) }, N_("go to the top"), NULL },
	{ UI_A_BOTTOM, V | S, { 'G', F(KEY_END) }, N_("go to the bottom"), NULL },

	/* global */
	{ UI_A_NEXT_VIEW, V, { '\t' }, N_("next view"), N_("view") },
	{ UI_A_PREV_VIEW, V, { F(KEY_BTAB) }, N_("previous view"), NULL },
	/* Every digit from 1 to the number of views (app.c maps them); the table names the first. */
	{ UI_A_GOTO_VIEW, V, { '1' }, N_("go to the view with that number (1 to 9, in tab order)"), NULL },
	{ UI_A_APPLY_FIRST, V, { 'a' }, N_("apply the recommended first fix"), N_("apply fix") },
	{ UI_A_UNDO, V, { 'u' }, N_("undo the last change"), N_("undo") },
	{ UI_A_REDO, V, { UI_CTRL('r') }, N_("redo"), NULL },
	{ UI_A_DIFF, V, { 'd' }, N_("show the unsaved changes as a diff"), N_("diff") },
	{ UI_A_SAVE, V, { 's' }, N_("save: show what will be written, then ask"), N_("save") },
	{ UI_A_WALK, V, { 'w' }, N_("walk through the rollback plan, one step per screen"),
	  N_("walk") },
	{ UI_A_RETRY, V, { 'r' }, N_("retry until the job fits: run it, and after each out-of-memory "
				     "apply the fix for it and run again (in the Retry view, r stops it)"),
	  N_("retry") },
	{ UI_A_THEME, V, { 't' }, N_("next colour theme"), NULL },
	{ UI_A_JOBS, V, { 'J' }, N_("back to the web UI's job list (with --aitk)"), NULL },
	/* In the job list, the job under the cursor; elsewhere the open web UI job. */
	{ UI_A_QUEUE_JOB, V, { 'Q' }, N_("queue the job again, as the web UI's start button (the job "
					 "under the cursor in the list, else the open one; asks first)"),
	  N_("queue") },
	{ UI_A_HELP, V, { '?', F(KEY_F(1)) }, N_("this help"), N_("help") },
	{ UI_A_REDRAW, V | S | UI_CTX_WALK | UI_CTX_CONFIRM | UI_CTX_HELP, { UI_CTRL('l') },
	  N_("redraw the screen"), NULL },
	{ UI_A_QUIT, V, { 'q' }, N_("quit (asks when there are unsaved changes)"), N_("quit") },
};

const size_t ui_nactions = sizeof ui_actions / sizeof ui_actions[0];

enum ui_act ui_action_for(unsigned ctx, int key)
{
	for (size_t i = 0; i < ui_nactions; i++) {
		if (!(ui_actions[i].ctx & ctx))
			continue;
		for (int k = 0; k < UI_MAX_KEYS && ui_actions[i].keys[k]; k++)
			if (ui_actions[i].keys[k] == key)
				return ui_actions[i].act;
	}
	return UI_A_NONE;
}

/* Names shared by the help screen and the --script parser. */
static const struct { int key; const char *name; } key_names[] = {
	{ '\t', "Tab" }, { UI_FKEY(KEY_BTAB), "S-Tab" }, { '\n', "Enter" }, { 27, "Esc" },
	{ ' ', "Space" }, { UI_FKEY(KEY_UP), "Up" }, { UI_FKEY(KEY_DOWN), "Down" },
	{ UI_FKEY(KEY_LEFT), "Left" }, { UI_FKEY(KEY_RIGHT), "Right" },
	{ UI_FKEY(KEY_PPAGE), "PgUp" }, { UI_FKEY(KEY_NPAGE), "PgDn" },
	{ UI_FKEY(KEY_HOME), "Home" }, { UI_FKEY(KEY_END), "End" },
	{ UI_FKEY(KEY_BACKSPACE), "Backspace" }, { UI_FKEY(KEY_F(1)), "F1" },
	{ UI_FKEY(KEY_ENTER), "KEnter" }, { UI_FKEY(KEY_DC), "Delete" }, { '\r', "Return" },
	{ 127, "DEL" }, { 8, "C-h" },
};

const char *ui_key_name(int key)
{
	static char buf[8];

	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
		if (key_names[i].key == key)
			return key_names[i].name;
	if (key > 0 && key < 32) {
		snprintf(buf, sizeof buf, "C-%c", key + 'a' - 1);
		return buf;
	}
	if (key >= 32 && key < 0x110000) {
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t n = wcrtomb(buf, (wchar_t)key, &st);
		buf[n == (size_t)-1 ? 0 : n] = '\0';
		return buf;
	}
	return "?";
}

int ui_key_parse(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
		if (!strcmp(key_names[i].name, name))
			return key_names[i].key;
	if (!strcmp(name, "BTab"))
		return UI_FKEY(KEY_BTAB);
	if (len == 3 && name[0] == 'C' && name[1] == '-' && name[2] >= 'a' && name[2] <= 'z')
		return UI_CTRL(name[2]);
	if (len > 0) {
		wchar_t wc;
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t n = mbrtowc(&wc, name, len, &st);
		if (n == len)
			return (int)wc;
	}
	return 0;
}

void ui_action_keys(const struct ui_action *a, char *buf, size_t bufsz)
{
	size_t w = 0;

	buf[0] = '\0';
	for (int k = 0; k < UI_MAX_KEYS && a->keys[k]; k++) {
		int key = a->keys[k];
		/* One name for Enter is enough on screen. */
		if (key == '\r' || key == UI_FKEY(KEY_ENTER))
			continue;
		int n = snprintf(buf + w, bufsz - w, "%s%s", w ? "/" : "", ui_key_name(key));
		if (n < 0 || (size_t)n >= bufsz - w)
			break;
		w += (size_t)n;
	}
}
