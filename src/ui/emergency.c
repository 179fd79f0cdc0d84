/* emergency.c — the emergency save on SIGHUP/SIGTERM (and a third Ctrl-C), the one die() path,
 * and the offer to recover an emergency save when the UI starts.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/i18n.h"
#include "emergency.h"
#include "prompt.h"

/* ---- emergency save -----------------------------------------------------------------------
 *
 * The handler may run at any moment, so it only reads these, written with the signals blocked.
 * save_emergency is async-signal-safe (open/write/fsync). endwin is not, so the handler restores
 * the terminal itself: the termios saved before curses started (tcsetattr is async-signal-safe)
 * and the terminal's own reset strings (rmcup, cnorm, sgr0, rmkx) taken from terminfo at start,
 * written with write(2). Then the signal is re-raised with its default action, so the exit
 * status says how the process ended.
 */
static struct {
	const char *volatile path;
	const char *volatile text;
	volatile size_t len;
	volatile sig_atomic_t dirty;
	volatile sig_atomic_t tty_ok;
	int tty_fd;
	struct termios tios;
	char reset[256];
	size_t reset_len;
} emerg;

static void on_fatal_signal(int sig)
{
	/* The terminal first: the line save_emergency may write on stderr (where the edits went,
	 * when the job's folder refused them) must land on the normal screen, not on the UI's
	 * alternate screen that the reset clears. */
	if (emerg.tty_ok) {
		ssize_t w = write(emerg.tty_fd, emerg.reset, emerg.reset_len);
		(void)w;
		tcsetattr(emerg.tty_fd, TCSANOW, &emerg.tios);
	}
	if (emerg.dirty && emerg.path && emerg.text)
		save_emergency(emerg.path, emerg.text, emerg.len);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Ctrl-C is a request to quit, asked like q when there are unsaved edits; the loop takes it. A
 * UI that does not answer two more is stuck: the third ends it as SIGTERM would, saving first. */
static volatile sig_atomic_t interrupts;
static bool curses_on;

static void on_interrupt(int sig)
{
	if (++interrupts >= 3)
		on_fatal_signal(sig);
}

void ui_emergency_track(const struct ui_session *s)
{
	sigset_t block, old;
	size_t len = 0;
	const char *text = ui_session_cur(s) ? doc_text(ui_session_cur(s), &len) : NULL;

	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	/* The open job's fallback in the state folder is made ready here, outside the handler,
	 * for a folder that refuses the emergency save (the job may have changed: J, Enter). */
	if (s->job_path)
		save_emergency_prepare(s->job_path);
	emerg.path = s->job_path;
	emerg.text = text;
	emerg.len = len;
	emerg.dirty = ui_session_dirty(s);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void ui_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGINT);
	/* Installed before newterm, so ncurses leaves SIGINT and SIGTERM to us. */
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_interrupt; /* no SA_RESTART: the wait for a key returns at once */
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file-size limit must become EFBIG, not death */
}

/* Remembers how to put the terminal back without curses (for the signal handler). */
static void remember_reset(int fd)
{
	static const char *const caps[] = { "rmcup", "cnorm", "sgr0", "rmkx" };

	emerg.reset_len = 0;
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		char *s = tigetstr((char *)caps[i]);
		if (!s || s == (char *)-1)
			continue;
		size_t n = strlen(s);
		if (emerg.reset_len + n < sizeof emerg.reset) {
			memcpy(emerg.reset + emerg.reset_len, s, n);
			emerg.reset_len += n;
		}
	}
	emerg.tty_fd = fd;
}

/* Ctrl-C is counted by the handler; the loop takes the count. */
int ui_interrupts_take(void)
{
	int n = interrupts;
	interrupts = 0;
	return n;
}

void ui_emergency_tty(int in_fd, int out_fd)
{
	emerg.tty_fd = out_fd;
	if (tcgetattr(in_fd, &emerg.tios) == 0)
		emerg.tty_ok = 0; /* set once curses is up and the reset strings are known */
}

void ui_emergency_curses(bool on, bool tty)
{
	curses_on = on;
	if (on && tty) {
		remember_reset(STDOUT_FILENO);
		emerg.tty_ok = 1;
	} else if (!on) {
		emerg.tty_ok = 0;
	}
}

void ui_emergency_forget(void)
{
	emerg.dirty = 0;
	emerg.text = NULL;
}

/* ---- the one die() path ---------------------------------------------------------------------- */

void ui_die(int code, const char *fmt, ...)
{
	va_list ap;

	if (curses_on) {
		endwin();
		curses_on = false;
	}
	fputs("oomfix: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* ---- recovery of an emergency save ------------------------------------------------------------ */

static char *recover_text;
static size_t recover_len;
static char *recover_name;   /* the emergency save offered */
static char *recovered_name; /* ... and taken as unsaved changes (y) */

static void answer_recover(struct ui_app *a, const struct ui_ctx *c, int key)
{
	struct err e;

	if (key == 'd') {
		if (recover_name && unlink(recover_name) != 0 && errno != ENOENT)
			ui_status(c, false, _("Could not remove %s (%s): it will be offered again."),
				  recover_name, strerror(errno));
		else
			ui_status(c, false, _("Discarded %s: it will not be offered again."),
				  recover_name ? recover_name : "");
	} else if (key != 'y') {
		ui_status(c, false, "%s", _("The recovery file was left where it is."));
	} else if (ui_session_replace_text(&a->s, recover_text, recover_len, &e)) {
		ui_status_err(c, &e);
	} else {
		ui_status(c, false, "%s", _("Recovered the edits as unsaved changes: d shows them, s "
					   "saves them."));
		free(recovered_name);
		recovered_name = recover_name;
		recover_name = NULL;
	}
	free(recover_text);
	recover_text = NULL;
	free(recover_name);
	recover_name = NULL;
}

static const struct ui_question ask_recover = {
	.text = N_("Recover the unsaved edits from the last session? y = load them as unsaved "
		   "changes, d = discard them (the file is removed), n = leave them"),
	.keys = "d",
	.key_words = { N_("discard") },
	.answer = answer_recover,
	.named = true,
};

void ui_recovery_dropped(void)
{
	/* The recovered edits were the unsaved changes the user chose to drop: the emergency
	 * save goes too, or it would be offered again at every start. */
	if (recovered_name)
		unlink(recovered_name);
	free(recovered_name);
	recovered_name = NULL;
}

void ui_recovery_free(void)
{
	free(recover_text);
	recover_text = NULL;
	free(recover_name);
	recover_name = NULL;
	free(recovered_name);
	recovered_name = NULL;
}

void ui_offer_recovery(struct ui_app *a)
{
	struct ui_ctx c = ui_ctx_of(a);
	struct stat js, ss;
	char *name;

	if (!a->s.job_path || !(name = save_emergency_name(a->s.job_path)))
		return;
	bool newer = false;
	if (stat(name, &ss) == 0 && source_row(a->s.src)) {
		/* A web UI job has no file: compare with the row's last change. */
		long long ms = (long long)ss.st_mtim.tv_sec * 1000 + ss.st_mtim.tv_nsec / 1000000;
		newer = ms > source_row(a->s.src)->updated_ms;
	} else if (stat(name, &ss) == 0 && stat(a->s.job_path, &js) == 0) {
		newer = ss.st_mtim.tv_sec > js.st_mtim.tv_sec ||
			(ss.st_mtim.tv_sec == js.st_mtim.tv_sec && ss.st_mtim.tv_nsec > js.st_mtim.tv_nsec);
	}
	if (newer) {
		FILE *fp = fopen(name, "rb");
		if (fp) {
			size_t cap = (size_t)ss.st_size + 1;
			recover_text = malloc(cap);
			recover_len = recover_text ? fread(recover_text, 1, cap - 1, fp) : 0;
			fclose(fp);
		}
		if (recover_text) {
			free(recover_name);
			recover_name = strdup(name);
			ui_ask(a, &ask_recover, UI_M_NORMAL);
			ui_status(&c, false, _("Found %s, newer than the job."), name);
		}
	}
	free(name);
}
