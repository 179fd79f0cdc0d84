/* app.h — the application: its state and the modules that act on it (the app's side of the
 * UI). The views do not include this header: they see view.h's environment only.
 *
 *   ui_main.h    the entry point, the one thing the rest of the program sees
 *   app.c        ui_main and the one loop: read a key, dispatch it, tick the background work, draw
 *   display.c    the screen: tabs, footer, status line, the view or screen between (display.h)
 *   input.c      keys from the terminal or a --script file (input.h)
 *   prompt.c     questions (ui_ask) and the status-line editor (prompt.h)
 *   actions.c    what keys do to the job: apply a fix, save, reload, quit, theme (actions.h)
 *   follow.c     the verdict arriving and the log followed as it grows (follow.h)
 *   retry_ctl.c  the retry (r) as the UI drives it; retry.c runs the child (retry_ctl.h)
 *   job_switch.c opening another job of the web UI's list (job_switch.h)
 *   emergency.c  signals, the emergency save, die(), recovering a save (emergency.h)
 *   args.c       the UI's command line (args.h)
 *   view_table.c the view table (tab order) and the environment each view is given (view.h)
 *   views.c      what every view may call: the status line, moves, scrolled text
 *   session.c    the job being edited: load, undo/redo history, apply a fix, save (session.h)
 *   session_log.c  the session's log and verdict: the worker thread, following, closing
 *   keys.c       the action table (dispatch, help screen, footer) and key names (keys.h)
 *   theme.c      colour roles, theme files, the compiled-in default (theme.h)
 *   draw.c       drawing helpers measured in cells, screen dumps (draw.h)
 *   lines.c      display lines (text + role segments) shared by the text views (lines.h)
 *   view_*.c     one file per view (its ops are a row of UI_VIEWS; view.h is the contract)
 *   retry.c      the retry loop run as a child, and its tries (retry.h)
 *   screen_*.c   the help and save screens; walk.c the walk-through (screens.h)
 *   search.c     the '/' search shared by the text views (search.h)
 *   view_diag.c, membar.c, fitline.c  the diagnosis panel, memory bar, fit line (view_diag.h)
 *
 * Nothing here re-implements the model: values, fixes, plans, diffs and saving come from
 * include/oomfix/.
 */
#ifndef OOMFIX_UI_APP_H
#define OOMFIX_UI_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "prompt.h"
#include "retry.h"
#include "search.h"
#include "session.h"
#include "theme.h"
#include "ui_main.h"
#include "view.h"

struct ui_app {
	struct ui_session s;
	enum ui_view view;
	enum ui_mode mode;
	struct ui_pos pos[UI_V_COUNT];
	void *priv[UI_V_COUNT];     /* each view's own state (ui_env.priv) */

	/* the status-line prompt */
	struct ui_prompt prompt;
	/* who takes the line (ui_prompt_start); NULL: the view on screen, its prompt_done */
	void (*prompt_done)(struct ui_app *a, const struct ui_ctx *c, bool ok);

	/* question (prompt.h: ui_ask) */
	const struct ui_question *ask;
	enum ui_mode ask_return;
	struct ui_pos save_pos;     /* scrolling of the save screen's diff */
	struct save_stamp declined; /* the disk version the user chose not to reload */
	bool have_declined;
	enum ui_view back_view;     /* where Esc or q in a sub-view returns to */
	int tab_x0[UI_V_COUNT], tab_x1[UI_V_COUNT]; /* the tabs' columns as drawn, for the mouse */
	bool quit_after_save;       /* the quit question's s: quit once the save succeeded */
	bool open_after_save;       /* the switch question's s: open switch_to once saved */
	char said_on_quit[1024];    /* the save that quit said, for the terminal after the screen */
	char switch_to[256];        /* the web UI job the switch question was asked for */
	bool log_job_asked;         /* the offer to open the log's echo of the job was made */

	/* help */
	struct ui_pos help_pos;

	enum fix_id pick_fix;       /* the fix of the untried-change question */
	long long req_arg;          /* the argument of the request a view returned (ui_env.arg) */

	/* walk-through */
	size_t walk_step;
	bool walk_more;
	struct ui_pos walk_pos;

	struct ui_search search;    /* the '/' search the text views share */

	/* theme */
	struct ui_theme theme;
	char **themes;
	size_t nthemes;

	struct ui_msg msg;          /* the status line */
	bool quit;
	bool script;
	bool jobs_on;               /* a web UI database is in use: the Jobs tab is shown */
	const char *vram_arg;       /* --vram as given (NULL when not): a retry passes it on */
	int rows, cols;
	struct ui_follow follow;    /* following the log as it grows (follow.c) */

	/* the retry loop (r): the child and its tries, and the questions before it starts */
	struct ui_retry retry;
	bool retry_asking;          /* r was pressed: the command or the question is being asked */
	char *retry_cmd;            /* the command typed for a file job */
	long long retry_log_due;    /* a try whose log is to be shown once the log is read, or -1 */
	bool quit_after_retry;      /* quit once the stopped loop has ended */
};

/* Minimum usable terminal. */
#define UI_MIN_COLS 60
#define UI_MIN_ROWS 20

/* The views in tab order, indexed by enum ui_view (view_table.c: only the loop and the screen
 * use it, never a view). */
extern const struct ui_view_ops *const ui_views[UI_V_COUNT];

/* Allocates each view's private data (at start; out of memory ends the program) and frees it
 * after the views' fini (at exit). */
void ui_views_start(struct ui_app *a);
void ui_views_end(struct ui_app *a);
/* Every view's tick (true: redraw), and whether any view is busy. */
bool ui_views_tick(struct ui_app *a);
/* Another job was opened: every view but the job list forgets what it kept of the one before
 * (its fini), and is back at its start. */
void ui_views_forget_job(struct ui_app *a);
bool ui_views_busy(struct ui_app *a);

/* The context of this turn: the content area, the page and the status line (views.c). */
struct ui_ctx ui_ctx_of(struct ui_app *a);

#endif
