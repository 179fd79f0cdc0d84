/* keys.h — the action table: dispatch, help screen and footer, and key names (keys.c). */
#ifndef OOMFIX_UI_KEYS_H
#define OOMFIX_UI_KEYS_H

#include <stdbool.h>
#include <stddef.h>

/* ---- contexts and actions (keys.c) ---------------------------------------------------------- */

/* Where an action applies (bit mask). */
enum {
	UI_CTX_VIEWS = 1u << 0,    /* every view, normal mode */
	UI_CTX_FIELDS = 1u << 1,   /* Training, Datasets, Sample, Model */
	UI_CTX_ADVANCED = 1u << 2,
	UI_CTX_LOG = 1u << 3,
	UI_CTX_SCROLL = 1u << 4,   /* anything that scrolls: views, help, walk-through, save screen */
	UI_CTX_WALK = 1u << 5,
	UI_CTX_CONFIRM = 1u << 6,  /* a yes/no question */
	UI_CTX_PROMPT = 1u << 7,   /* a line of text being typed */
	UI_CTX_HELP = 1u << 8,
	UI_CTX_PLAN = 1u << 9,     /* the Plan view's list of steps */
	UI_CTX_JOBS = 1u << 10,    /* the web UI's job list */
	UI_CTX_TEXT = 1u << 11,    /* text screens searched with / (Plan, Diff, Advanced) */
	UI_CTX_RETRY = 1u << 12,   /* the Retry view's list of tries */
};

#define UI_ACTIONS(X) \
	X(NEXT_VIEW) X(PREV_VIEW) X(UP) X(DOWN) X(PGUP) X(PGDN) X(TOP) X(BOTTOM) \
	X(APPLY_FIRST) X(UNDO) X(REDO) X(DIFF) X(SAVE) X(WALK) X(THEME) X(HELP) X(REDRAW) X(QUIT) \
	X(EDIT) X(TOGGLE) X(EDITOR) X(SEARCH) X(SEARCH_NEXT) X(SEARCH_PREV) X(FOCUS_DIAG) \
	X(FOCUS_LOG) X(JUMP) X(NEXT_EVIDENCE) X(WALK_APPLY) X(WALK_SKIP) X(WALK_BACK) \
	X(WALK_MORE) X(WALK_QUIT) X(YES) X(NO) X(PROMPT_OK) X(PROMPT_CANCEL) X(PROMPT_BS) \
	X(PROMPT_CLEAR) X(HELP_CLOSE) X(FOLLOW) X(PICK) X(JOBS) X(OPEN_JOB) X(QUEUE_JOB) \
	X(NEXT_RUN) X(SCROLL_LEFT) X(SCROLL_RIGHT) X(WRAP) X(GOTO_VIEW) X(PROMPT_LEFT) \
	X(PROMPT_RIGHT) X(PROMPT_HOME) X(PROMPT_END) X(PROMPT_WORD) X(PROMPT_DEL) X(PREV_EVIDENCE) \
	X(RETRY) X(SHOW_TRY)

#define UI_ACT_ENUM(id) UI_A_##id,
enum ui_act { UI_A_NONE = 0, UI_ACTIONS(UI_ACT_ENUM) UI_A_COUNT };
#undef UI_ACT_ENUM

/* Keys: a character is its code point; a curses function key is UI_FKEY(KEY_x). */
#define UI_FKEY(k) ((k) | 0x1000000)
#define UI_CTRL(c) ((c) & 0x1f)
#define UI_MAX_KEYS 4

struct ui_action {
	enum ui_act act;
	unsigned ctx;
	int keys[UI_MAX_KEYS]; /* 0-terminated */
	const char *help;      /* N_(): the help screen's sentence */
	const char *footer;    /* N_(): the footer's word, or NULL */
};

extern const struct ui_action ui_actions[];
extern const size_t ui_nactions;

/* The action bound to `key` in contexts `ctx` (UI_A_NONE when none). */
enum ui_act ui_action_for(unsigned ctx, int key);

/* The display/script name of a key ("Tab", "C-r", "a"); static or thread-unsafe storage. */
const char *ui_key_name(int key);
/* Parses a key name; returns 0 when unknown. */
int ui_key_parse(const char *name);

/* The keys of an action as shown in help and footer ("j/Down"), into buf. */
void ui_action_keys(const struct ui_action *a, char *buf, size_t bufsz);

#endif
