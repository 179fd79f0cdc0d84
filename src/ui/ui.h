/* ui.h — the terminal UI's private interface (src/ui only).
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
 *   view_table.c the view table (tab order)
 *   views.c      the context given to views, the status line
 *   session.c    the job being edited: load, undo/redo history, apply a fix, save (session.h)
 *   session_log.c  the session's log and verdict: the worker thread, following, closing
 *   keys.c       the action table (dispatch, help screen, footer) and key names (keys.h)
 *   theme.c      colour roles, theme files, the compiled-in default (theme.h)
 *   draw.c       drawing helpers measured in cells, screen dumps (draw.h)
 *   lines.c      display lines (text + role segments) shared by the text views (lines.h)
 *   view_*.c     one file per view (its ops are a row of UI_VIEWS)
 *   screen_*.c   the help and save screens
 *   walk.c       the walk-through
 *   search.c     the '/' search shared by the text views
 *
 * ui.h itself holds what the views and the loop share: the view table, the context a view is
 * given, struct ui_app, and the retry's child (retry.c). The models below the views (session,
 * keys, theme, lines, draw) have headers of their own and do not include this one.
 *
 * Nothing here re-implements the model: values, fixes, plans, diffs and saving come from
 * include/oomfix/.
 */
#ifndef OOMFIX_UI_H
#define OOMFIX_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <curses.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/retry.h"
#include "oomfix/job.h"
#include "oomfix/logidx.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "draw.h"
#include "keys.h"
#include "lines.h"
#include "session.h"
#include "theme.h"
#include "ui_main.h"

/* ---- the views ------------------------------------------------------------------------------ */

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

/* ---- the retry loop run from the UI (retry.c) ---------------------------------------------- */

/* One try of the loop, as its events told it. */
struct ui_try {
	int n;                      /* the number of its log (N.log); 0: the log the loop started from */
	int index;                  /* 1 for the first run of this loop, 0 for the log started from */
	char *log;                  /* its log, as the retry named it (relative to the working dir) */
	char *taken;                /* a web UI job: the status the worker gave it; NULL while queued */
	char *waiting;              /* ... still queued after a while: what the worker needs */
	bool judged;                /* its verdict came */
	bool oom;
	char timing[4];             /* "A".."E", "" when no OOM */
	char *summary;              /* the verdict in a few words */
	char *fix, *title, *note, *lesson; /* the fix applied after it (fix NULL when none) */
	char **changes;             /* "path: old → new" */
	size_t nchanges;
};

struct ui_retry {
	pid_t pid;                  /* the `oomfix retry` process, 0 when none runs */
	int ev_fd, err_fd;          /* its events and what it prints for people; -1 once at their end */
	bool started;               /* a loop was started in this session: the Retry tab is shown */
	bool stopping;              /* the user asked it to stop */
	char *cmd;                  /* the shell command of a file job, NULL for a web UI job */
	long long probe;
	int max_tries;
	struct ui_try *tries;
	size_t ntries;
	bool ended;                 /* the end event came, or the process is gone */
	int status;                 /* its exit status */
	enum retry_outcome outcome; /* how it ended (retry_events.h), once `ended` */
	char *text;                 /* the end in a sentence (NULL: see ui_retry_last_error) */
	char *line;                 /* an event line still being read */
	size_t len, cap;
	char err[2048];             /* the tail of what it printed for people */
	size_t errlen;
};

/* What ui_retry_poll saw. */
enum {
	UI_RT_TRY = 1u << 0,        /* a try started: its log is the last try's */
	UI_RT_FIX = 1u << 1,        /* a fix was saved: the job changed on disk */
	UI_RT_END = 1u << 2,        /* the process is gone (ended and outcome are set) */
	UI_RT_CHANGED = 1u << 3,    /* anything new to draw */
};

/* Starts `oomfix retry --events 3` for JOB (a path or aitk:NAME) as a child: with `log` it starts
 * from that failed run (--log), `cmd` is the shell command of a file job (NULL for a web UI job),
 * probe 0 for none. The results of an earlier loop are forgotten. */
int ui_retry_start(struct ui_retry *r, const char *job, const char *log, const char *cmd,
		   long long probe, int max_tries, struct err *e);
/* Reads what the child wrote since the last call, without waiting; reaps it when it is gone.
 * Returns UI_RT_* bits. */
unsigned ui_retry_poll(struct ui_retry *r);
bool ui_retry_running(const struct ui_retry *r);
/* Asks the loop to stop (SIGINT): it stops its run first; asking again skips the grace period. */
void ui_retry_stop(struct ui_retry *r);
/* The last line the retry printed for people (its error, when it ended without an outcome). */
void ui_retry_last_error(const struct ui_retry *r, char *buf, size_t sz);
/* Frees what the loop's results hold (the process must be gone). */
void ui_retry_free(struct ui_retry *r);
/* The shell command last used for this job file, or a guess (`cd TOOLKIT && python run.py JOB`
 * when run.py is found in or above the job's folder); malloc'd. */
char *ui_retry_guess_command(const char *job_path);
/* Keeps `cmd` for the next time (JOB.oomfix-runs/command, replaced whole). */
void ui_retry_remember_command(const char *job_path, const char *cmd);

/* ---- what a view is given: the context (views.c) ----------------------------------------- */

/* A position in a list or text screen: the cursor row and the first row shown. */
struct ui_pos { long long cursor, top; };

/* "As far as it goes": a bound for moves in a list whose length is not known here, and a
 * position past any end (a screen clamps it to its last row when it draws). */
#define UI_POS_END (1LL << 40)

/* The one status line: a message, and the position in a scrolled screen shown at its right. */
struct ui_msg {
	char text[512];
	bool error;
	char scroll_info[64];       /* "1-21/86" of a scrolled text screen */
};

/* What a view receives each turn, as a value: where it draws and the status line it talks to.
 * No view calls back into app.c; what it wants of the app it returns as a request, or asks
 * itself (ui_ask). tests/ui/call_graph.py checks that no file of src/ui uses one that uses it
 * back. */
struct ui_ctx {
	WINDOW *win;
	struct ui_rect r;           /* the content area: between the tab bar and the status line */
	int rows, cols;             /* the whole screen */
	int page;                   /* the rows a page key moves */
	struct ui_msg *msg;
};

/* A view's answer to an action (tig's "request"): not its own, handled, or a request the app
 * carries out. */
enum ui_req { UI_REQ_PASS = 0, UI_REQ_DONE, UI_REQ_SAVE,
	      UI_REQ_APPLY,   /* apply the fix in ui_app.pick_fix, asking first when the last change
			       * has not been tried */
	      UI_REQ_OPEN_JOB, /* open the job selected in the job list */
	      UI_REQ_SHOW_TRY /* show the log of the try in ui_app.retry_show */ };

struct ui_app;
/* The context given to the views this turn: the content area, the page and the status line. */
struct ui_ctx ui_ctx_of(struct ui_app *a);

/* Sets the one-line status message (printf format; already translated). */
void ui_status(const struct ui_ctx *c, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Shows an err as file:line:col: message in the status line. */
void ui_status_err(const struct ui_ctx *c, const struct err *e);

/* Scrolling for list-like views: moves p within [0, n). */
void ui_pos_move(struct ui_pos *p, enum ui_act act, long long n, int page);

/* ---- the application state (app.c) ------------------------------------------------------- */

enum ui_mode { UI_M_NORMAL, UI_M_HELP, UI_M_WALK, UI_M_PROMPT, UI_M_CONFIRM };

/* The prompt in a field's row, the search's, or a line asked for by ui_prompt_start. */
enum ui_prompt_kind { UI_P_FIELD, UI_P_SEARCH, UI_P_LINE };
struct ui_question; /* prompt.h */

/* One row of a field panel. */
struct ui_frow {
	const struct job_field *f;  /* NULL for a heading or a bucket row */
	size_t ds;
	int bucket;                 /* resolution bucket value for a bucket toggle, 0 otherwise */
	bool heading;
	const char *text;           /* heading text (translated) */
};

/* Following a log that grows (follow.c; the Log view's F key and moves set it). */
struct ui_follow {
	bool off;                   /* F: the Log view does not follow the log as it grows */
	bool moved;                 /* the user moved in the log before the verdict came */
	bool bell_done;             /* the bell rang for this run's OOM or end */
};

struct ui_app {
	struct ui_session s;
	enum ui_view view;
	enum ui_mode mode;
	struct ui_pos pos[UI_V_COUNT];
	void *priv[UI_V_COUNT];     /* each view's own state (ui_view_priv) */

	/* text prompt */
	enum ui_prompt_kind prompt_kind;
	char prompt_label[128];
	char prompt_buf[512];
	size_t prompt_len;
	size_t prompt_cur;          /* the cursor, a byte offset in prompt_buf (a start sets it) */
	const struct job_field *prompt_field;
	size_t prompt_ds;
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
	bool log_job_asked;         /* the offer to open the log's echo of the job was made */

	/* help */
	struct ui_pos help_pos;

	enum fix_id pick_fix;       /* the fix of a UI_REQ_APPLY or of the untried-change question */

	/* walk-through */
	size_t walk_step;
	bool walk_more;
	struct ui_pos walk_pos;

	/* log search */
	void *re;                   /* pcre2_code_8 * */
	void *md;                   /* pcre2_match_data_8 * */
	char search[256];

	/* theme */
	struct ui_theme theme;
	char **themes;
	size_t nthemes;

	struct ui_msg msg;          /* the status line */
	bool quit;
	bool script;
	bool jobs_on;               /* a web UI database is in use: the Jobs tab is shown */
	int rows, cols;
	struct ui_follow follow;    /* following the log as it grows (follow.c) */

	/* the retry loop (r): the child and its tries, and the questions before it starts */
	struct ui_retry retry;
	bool retry_asking;          /* r was pressed: the command or the question is being asked */
	char *retry_cmd;            /* the command typed for a file job */
	bool retry_picked;          /* the user moved in the list: it no longer follows the newest */
	long long retry_show;       /* the try of a UI_REQ_SHOW_TRY */
	long long retry_log_due;    /* a try whose log is to be shown once the log is read, or -1 */
	bool quit_after_retry;      /* quit once the stopped loop has ended */
};

/* Minimum usable terminal. */
#define UI_MIN_COLS 60
#define UI_MIN_ROWS 20

/* ---- the views (one file each; the table in views.c) ------------------------------------- */

/* One view's operations, in the style of tig's view ops. Only draw and name are required.
 *
 * A view keeps its state in its own private data, not in struct ui_app and not in file statics
 * (tig's private_size, NeoMutt's wdata): priv_size bytes, allocated zeroed once for the run and
 * given their first values by init; the view reaches them with ui_view_priv(a, UI_V_x), and fini
 * frees what they hold. */
struct ui_view_ops {
	const char *name;           /* N_(): the tab label */
	size_t priv_size;           /* bytes of the view's own state (0: none) */
	void (*init)(void *priv);   /* its first values (NULL: all zero) */
	unsigned keys;              /* the view's own key contexts (UI_CTX_*), beside UI_CTX_VIEWS */
	bool sub;                   /* looked at on the way (Plan, Diff): Esc and q go back to the
				     * view the user came from, and never quit */
	/* Draws the view into c->r. */
	void (*draw)(struct ui_app *a, const struct ui_ctx *c);
	/* The view's own handling of an action, first: UI_REQ_PASS leaves it to the app. */
	enum ui_req (*action)(struct ui_app *a, const struct ui_ctx *c, enum ui_act act);
	/* A line typed at the view's prompt was confirmed (a->prompt_buf). */
	void (*prompt_done)(struct ui_app *a, const struct ui_ctx *c);
	/* Frees what the view keeps between turns (at exit, and when another job is opened: its
	 * caches belong to the job that was open). */
	void (*fini)(struct ui_app *a);
	/* Whether the view has a tab now (NULL: always). */
	bool (*shown)(const struct ui_app *a);
	/* Background work of the view (a worker thread): takes what it did since the last turn;
	 * true when the screen must be redrawn. Called every turn, whichever view is on screen. */
	bool (*tick)(struct ui_app *a);
	/* The view's background work is still going: the loop waits for keys briefly, to take it. */
	bool (*busy)(const struct ui_app *a);
};

#define UI_VIEW_DECL(id, ops) extern const struct ui_view_ops ops;
UI_VIEWS(UI_VIEW_DECL)
#undef UI_VIEW_DECL

/* The views in tab order, indexed by enum ui_view (view_table.c: only the loop and the screen
 * use it, never a view). */
extern const struct ui_view_ops *const ui_views[UI_V_COUNT];

/* Allocates each view's private data (at start; out of memory ends the program) and frees it
 * after the views' fini (at exit). */
void ui_views_start(struct ui_app *a);
void ui_views_end(struct ui_app *a);
/* Every view's tick (true: redraw), and whether any view is busy. */
bool ui_views_tick(struct ui_app *a);
bool ui_views_busy(const struct ui_app *a);

/* A view's own state (its ops' priv_size bytes). */
static inline void *ui_view_priv(const struct ui_app *a, enum ui_view v)
{
	return a->priv[v];
}

/* The field panels' rows (view_fields.c); v is one of the four field views. */
size_t ui_fields_rows(struct ui_app *a, enum ui_view v, struct ui_frow *rows, size_t max);

/* The job list (view_jobs.c): the job under the cursor (NULL when none), and a reload of the list
 * on its next draw. */
const char *ui_jobs_selected(struct ui_app *a);
void ui_jobs_reload(struct ui_app *a);
/* Q on a web UI job (the list's cursor, or the open job): refused while it runs, said when it is
 * queued, else asked (with s = save and queue when it is the open job and has unsaved changes). */
void ui_jobs_ask_queue(struct ui_app *a, const struct ui_ctx *c, const char *name,
		       const char *status);
/* The keys the list refuses (and its footer does not offer): they act on the open job. */
bool ui_jobs_refuses(enum ui_act act);

/* The sentence shown while the job given could not be loaded (views.c): where and why, and what
 * to do. */
void ui_job_error_text(const struct ui_session *s, char *buf, size_t size);
/* What a view says when no job is open: file_text (N_()) translated, or, with the web UI's job
 * list, to pick a job there. */
const char *ui_no_job_text(const struct ui_app *a, const char *file_text);


/* Builds the diagnosis panel's lines (view_diag.c; the Log view draws them). */
struct ui_diag_layout {
	bool stacked;       /* drawn below the log (few rows) rather than beside it */
	/* How much the panel is squeezed so the marked timing row fits a short pane, a step at a
	 * time: 0 not at all; 1 the table shows only its header and the marked row; 2 the
	 * out-of-date sentence takes its short form too; 3 the table's header goes as well. */
	int compact;
	long long mark_end; /* set: the line after the marked timing row, -1 when none */
};
void ui_diag_lines(const struct ui_session *s, struct ui_diag_layout *lay, struct ui_lines *l,
		   int width);
/* The memory account of the OOM message as a stacked bar with its legend (membar.c); adds
 * nothing when the message gave no numbers. */
void ui_membar_lines(struct ui_lines *l, const struct diag_result *d, int width);

/* The fit line (fitline.c, SPEC §12). ui_fit_start: the card from --vram (bytes; 0: ask
 * nvidia-smi once in a worker thread). ui_fit_draw draws the estimate of the job being edited at
 * the bottom of r and returns the rows it took (0 when r is too low to give any). tick/busy:
 * nvidia-smi's answer arrived (redraw) / is awaited. ui_fit_change_lines: the estimate before →
 * after the unsaved change. */
void ui_fit_start(int64_t vram_bytes);
int ui_fit_draw(const struct ui_app *a, WINDOW *win, struct ui_rect r);
bool ui_fit_tick(struct ui_app *a);
bool ui_fit_busy(const struct ui_app *a);
void ui_fit_change_lines(const struct ui_session *s, struct ui_lines *l, int width);

/* The search (search.c). ui_search_start opens the '/' prompt; ui_search_compile compiles what
 * was typed into a->re (false, with the reason in the status line, when it is not a pattern);
 * ui_search_lines finds the pattern in display lines from *line (the next after it, the one
 * before it when backward, or *line itself when `here`), wrapping around, moves *line there and
 * says "Match i of n". ui_search_free frees the pattern at exit. */
void ui_search_start(struct ui_app *a, const struct ui_ctx *c);
bool ui_search_compile(struct ui_app *a, const struct ui_ctx *c);
bool ui_search_lines(struct ui_app *a, const struct ui_ctx *c, const struct ui_lines *l,
		     long long *line, bool backward, bool here);
void ui_search_free(struct ui_app *a);

/* The search of a text screen (Plan, Diff): `lines` builds the screen's display lines as drawn,
 * and the match becomes the line *at. ui_text_search_action takes / n N (UI_REQ_PASS for
 * other actions); ui_text_search_done is the view's prompt_done. */
typedef void (*ui_lines_fn)(struct ui_app *a, const struct ui_ctx *c, struct ui_lines *l);
void ui_text_search(struct ui_app *a, const struct ui_ctx *c, ui_lines_fn lines, long long *at,
		    bool backward, bool here);
enum ui_req ui_text_search_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act,
				  ui_lines_fn lines, long long *at);
void ui_text_search_done(struct ui_app *a, const struct ui_ctx *c, ui_lines_fn lines,
			 long long *at);

/* The screens that are modes rather than tabs: the walk-through (walk.c), the help
 * (screen_help.c) and the save screen behind the save question (screen_save.c). */
enum ui_req ui_walk_start(struct ui_app *a, const struct ui_ctx *c);
void ui_walk_draw(struct ui_app *a, const struct ui_ctx *c);
enum ui_req ui_walk_action(struct ui_app *a, const struct ui_ctx *c, enum ui_act act);
void ui_help_draw(struct ui_app *a, const struct ui_ctx *c);
void ui_save_draw(struct ui_app *a, const struct ui_ctx *c);

/* Draws a list of display lines scrolled as a text screen (the top line is the position), and
 * says the position in the status line when it does not all fit (views.c). */
void ui_draw_scrolled(const struct ui_ctx *c, struct ui_lines *l, struct ui_pos *p);

#endif
