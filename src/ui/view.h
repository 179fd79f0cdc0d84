/* view.h — the contract between the loop and the views: the table of views, what a view is given
 * each turn (struct ui_env) and what it answers (enum ui_req).
 *
 * A view sees the job being edited, its own position and its own state, and the few shared
 * things it draws or changes (following the log, the search, the status line); it never sees the
 * application (struct ui_app is app.h's, which no view includes). What it wants of the app it
 * returns as a request, or asks itself through the services that take the opaque `host`
 * (prompt.h's ui_ask and ui_prompt_start, ui_env_of). htop's State, tig's view ops, NeoMutt's
 * wdata. */
#ifndef OOMFIX_UI_VIEW_H
#define OOMFIX_UI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <curses.h>

#include "oomfix/err.h"
#include "draw.h"
#include "keys.h"
#include "session.h"

/* The views, in tab order: one row each, naming the view's ops (defined in its own file,
 * tig-style). Adding a view is one row here and one file. */
#define UI_VIEWS(X) \
	X(TRAINING, ui_view_training) X(DATASETS, ui_view_datasets) X(SAMPLE, ui_view_sample) \
	X(MODEL, ui_view_model) X(ADVANCED, ui_view_advanced) X(LOG, ui_view_log) \
	X(PLAN, ui_view_plan) X(DIFF, ui_view_diff) X(JOBS, ui_view_jobs) X(RETRY, ui_view_retry)

#define UI_VIEW_ENUM(id, ops) UI_V_##id,
enum ui_view { UI_VIEWS(UI_VIEW_ENUM) UI_V_COUNT };
#undef UI_VIEW_ENUM

const char *ui_view_name(enum ui_view v); /* translated tab label (view_table.c) */

/* What the screen is doing: a view, the help, the walk-through, a prompt, a question. */
enum ui_mode { UI_M_NORMAL, UI_M_HELP, UI_M_WALK, UI_M_PROMPT, UI_M_CONFIRM };

/* A position in a list or text screen: the cursor row and the first row shown. */
struct ui_pos { long long cursor, top; };

/* "As far as it goes": a bound for moves in a list whose length is not known here, and a
 * position past any end (a screen clamps it to its last row when it draws). */
#define UI_POS_END (1LL << 40)

/* The one status line: a message, and the position in a scrolled screen shown at its right. */
struct ui_msg {
	char text[1024];            /* a web UI save names three long paths and what comes next (E15) */
	bool error;
	char scroll_info[64];       /* "1-21/86" of a scrolled text screen */
};

/* Where a view or a screen draws this turn, and the status line it talks to. */
struct ui_ctx {
	WINDOW *win;
	struct ui_rect r;           /* the content area: between the tab bar and the status line */
	int rows, cols;             /* the whole screen */
	int page;                   /* the rows a page key moves */
	struct ui_msg *msg;
};

/* Following a log that grows (follow.c; the Log view's F key and moves set it). */
struct ui_follow {
	bool off;                   /* F: the Log view does not follow the log as it grows */
	bool moved;                 /* the user moved in the log before the verdict came */
	bool bell_done;             /* the bell rang for this run's OOM or end */
};

/* Whether the Log view follows a growing log now: following is on and the view is at the end
 * (its cursor on the last line), or was never moved from it. */
static inline bool ui_follow_on(const struct ui_follow *f, const struct ui_session *s,
				long long cursor)
{
	bool at_end = s->lines_known && cursor + 1 >= (long long)s->log_lines;
	return !f->off && (at_end || !f->moved);
}

struct ui_app;       /* app.h: opaque to the views */
struct ui_retry;     /* retry.h */
struct ui_prompt;    /* prompt.h */
struct ui_search;    /* search.h */

/* What a view is given each turn, as a value made by the loop (ui_env_of). */
struct ui_env {
	const struct ui_ctx *c;     /* where it draws, the page, the status line */
	enum ui_view view;          /* which view this is (the four field panels share their ops) */
	struct ui_pos *pos;         /* its position */
	void *priv;                 /* its own state (its ops' priv_size bytes), NULL when none */
	struct ui_session *s;       /* the job being edited and its log */
	struct ui_follow *follow;   /* following the log (the Log view moves and toggles it) */
	const struct ui_retry *retry; /* the retry loop's tries (r) */
	bool retry_asking;          /* r was pressed: its command or question is being asked */
	enum ui_mode mode;          /* what the screen is doing (a prompt open in a field's row) */
	const struct ui_prompt *prompt; /* the status-line prompt: the line typed or confirmed */
	struct ui_search *search;   /* the '/' search the text views share */
	long long *arg;             /* the argument of the request returned: UI_REQ_APPLY's fix,
				     * UI_REQ_SHOW_TRY's try */
	bool jobs_on;               /* a web UI database is in use: the Jobs tab is shown */
	bool script;                /* a --script run: background work is waited for */
	struct ui_app *host;        /* for ui_ask, ui_prompt_start and ui_env_of only */
};

/* The environment of view v this turn (view_table.c). For a question's answer, which is given
 * the host: the view that asked finds its own state again. */
struct ui_env ui_env_of(struct ui_app *host, enum ui_view v, const struct ui_ctx *c);

/* A view's answer to an action (tig's "request"): not its own, handled, or a request the app
 * carries out. */
enum ui_req { UI_REQ_PASS = 0, UI_REQ_DONE, UI_REQ_SAVE,
	      UI_REQ_APPLY,   /* apply the fix *env->arg, asking first when the last change has
			       * not been tried */
	      UI_REQ_OPEN_JOB, /* open the job selected in the job list */
	      UI_REQ_SHOW_TRY /* show the log of the try *env->arg */ };

/* One view's operations, in the style of tig's view ops. Only draw and name are required.
 *
 * A view keeps its state in its own private data, not in the app and not in file statics
 * (tig's private_size, NeoMutt's wdata): priv_size bytes, allocated zeroed once for the run and
 * given their first values by init; the view finds them in env->priv, and fini frees what they
 * hold. */
struct ui_view_ops {
	const char *name;           /* N_(): the tab label */
	size_t priv_size;           /* bytes of the view's own state (0: none) */
	void (*init)(void *priv);   /* its first values (NULL: all zero) */
	unsigned keys;              /* the view's own key contexts (UI_CTX_*), beside UI_CTX_VIEWS */
	bool sub;                   /* looked at on the way (Plan, Diff): Esc and q go back to the
				     * view the user came from, and never quit */
	/* Draws the view into env->c->r. */
	void (*draw)(const struct ui_env *v);
	/* The view's own handling of an action, first: UI_REQ_PASS leaves it to the app. */
	enum ui_req (*action)(const struct ui_env *v, enum ui_act act);
	/* A line typed at the view's prompt was confirmed (env->prompt holds it). */
	void (*prompt_done)(const struct ui_env *v);
	/* Frees what the view keeps between turns (at exit, and when another job is opened: its
	 * caches belong to the job that was open). */
	void (*fini)(void *priv);
	/* Whether the view has a tab now (NULL: always). */
	bool (*shown)(const struct ui_env *v);
	/* Background work of the view (a worker thread): takes what it did since the last turn;
	 * true when the screen must be redrawn. Called every turn, whichever view is on screen. */
	bool (*tick)(const struct ui_env *v);
	/* The view's background work is still going: the loop waits for keys briefly, to take it. */
	bool (*busy)(const struct ui_env *v);
};

#define UI_VIEW_DECL(id, ops) extern const struct ui_view_ops ops;
UI_VIEWS(UI_VIEW_DECL)
#undef UI_VIEW_DECL

/* Sets the one-line status message (printf format; already translated). */
void ui_status(const struct ui_ctx *c, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Shows an err as file:line:col: message in the status line. */
void ui_status_err(const struct ui_ctx *c, const struct err *e);

/* Scrolling for list-like views: moves p within [0, n). */
void ui_pos_move(struct ui_pos *p, enum ui_act act, long long n, int page);

/* Draws a list of display lines scrolled as a text screen (the top line is the position), and
 * says the position in the status line when it does not all fit (views.c). */
void ui_draw_scrolled(const struct ui_ctx *c, struct ui_lines *l, struct ui_pos *p);

/* The sentence shown while the job given could not be loaded (views.c): where and why, and what
 * to do. */
void ui_job_error_text(const struct ui_session *s, char *buf, size_t size);
/* What a view says when no job is open: file_text (N_()) translated, or, with the web UI's job
 * list, to pick a job there. */
const char *ui_no_job_text(const struct ui_env *v, const char *file_text);

#endif
