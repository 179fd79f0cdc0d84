/* view_yaml.c — Advanced: the whole YAML, read-only, with keys, values and comments told apart
 * and the lines changed since the last save marked; `e` edits it in $EDITOR and reloads it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oomfix/buf.h"
#include "oomfix/diff.h"
#include "oomfix/i18n.h"
#include "search.h"
#include "view.h"

/* Marks the lines of the current text that differ from the saved one, read from the hunk
 * headers of a zero-context diff ("@@ -a,b +c,d @@": new lines c .. c+d-1). */
static void edited_lines(const struct ui_session *s, unsigned char *mark, size_t nlines)
{
	char *d = ui_session_diff(s, 0);
	const char *p = d;

	while (p && (p = strstr(p, "\n@@ -"))) {
		unsigned long c = 0, cnt = 1;
		const char *plus = strchr(p + 5, '+');
		p += 5;
		if (!plus || sscanf(plus + 1, "%lu", &c) != 1)
			continue;
		const char *comma = plus + 1;
		while (*comma >= '0' && *comma <= '9')
			comma++;
		if (*comma == ',')
			cnt = strtoul(comma + 1, NULL, 10);
		for (unsigned long k = 0; k < cnt; k++)
			if (c + k >= 1 && c + k <= nlines)
				mark[c + k - 1] = 1;
		if (cnt == 0 && c >= 1 && c <= nlines)
			mark[c - 1] = 1; /* a deletion after line c */
	}
	free(d);
}

/* Splits a YAML line into key, value and comment for highlighting (display only: the text is
 * never changed). Returns the offsets; -1 when the part is absent. */
static void yaml_parts(const char *s, size_t len, long *key_end, long *comment)
{
	size_t i = 0;
	char q = 0;

	*key_end = -1;
	*comment = -1;
	while (i < len && s[i] == ' ')
		i++;
	while (i + 1 < len && s[i] == '-' && s[i + 1] == ' ') {
		i += 2;
		while (i < len && s[i] == ' ')
			i++;
	}
	if (i < len && s[i] == '#') {
		*comment = (long)i;
		return;
	}
	for (size_t k = i; k < len; k++) {
		char c = s[k];
		if (q) {
			if (c == q)
				q = 0;
			continue;
		}
		if ((c == '"' || c == '\'') && (k == i || s[k - 1] == ' ' || s[k - 1] == '[' ||
						s[k - 1] == '{' || s[k - 1] == ','))
			q = c;
		else if (c == '#' && k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) {
			*comment = (long)k;
			return;
		} else if (c == ':' && *key_end < 0 && (k + 1 == len || s[k + 1] == ' ') &&
			   s[i] != '[' && s[i] != '{')
			*key_end = (long)k + 1;
	}
}

static void build(const struct ui_env *v, struct ui_lines *l)
{
	size_t len, nlines = 0;
	const char *t = doc_text(ui_session_cur(v->s), &len), *p = t, *end = t + len;
	unsigned char *mark;
	int numw = 1;

	for (const char *q = t; q < end; q++)
		nlines += *q == '\n';
	if (len && t[len - 1] != '\n')
		nlines++;
	for (size_t k = nlines; k >= 10; k /= 10)
		numw++;
	mark = calloc(nlines + 1, 1);
	if (mark)
		edited_lines(v->s, mark, nlines);
	for (size_t ln = 1; p < end; ln++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char num[32], *part;
		long key_end, comment;
		struct ui_line *L;

		if (n && p[n - 1] == '\r')
			n--;
		snprintf(num, sizeof num, "%*zu ", numw, ln);
		L = ui_lines_add(l, UI_R_DIM, num);
		L->gutter = mark && mark[ln - 1] ? '*' : ' ';
		L->gutter_role = UI_R_EDITED;
		yaml_parts(p, n, &key_end, &comment);
		part = malloc(n + 1);
		if (!part)
			break;
		size_t at = 0, stop = comment >= 0 ? (size_t)comment : n;
		if (key_end >= 0) {
			snprintf(part, n + 1, "%.*s", (int)key_end, p);
			ui_line_append(L, UI_R_YAML_KEY, part);
			at = (size_t)key_end;
		}
		if (stop > at) {
			snprintf(part, n + 1, "%.*s", (int)(stop - at), p + at);
			ui_line_append(L, UI_R_YAML_VALUE, part);
		}
		if (comment >= 0) {
			snprintf(part, n + 1, "%.*s", (int)(n - (size_t)comment), p + comment);
			ui_line_append(L, UI_R_YAML_COMMENT, part);
		}
		free(part);
		if (mark && mark[ln - 1])
			L->seg[0].role = UI_R_EDITED;
		p = nl ? nl + 1 : end;
	}
	free(mark);
}

static void yaml_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct ui_rect r = c->r;
	struct ui_lines l = { 0 };
	struct ui_pos *p = v->pos;

	if (!ui_session_cur(v->s)) {
		ui_put(c->win, r.y + 1, r.x + 2, r.w - 4, UI_R_DIM,
		       ui_no_job_text(v, N_("No job file is open. Start oomfix with JOB.yaml to see "
					    "it here.")));
		return;
	}
	build(v, &l);
	ui_draw_lines(c->win, r, &l, p->cursor, &p->top, true);
	ui_lines_free(&l);
}

/* The edited copy, whole; NULL with errno set when it cannot be read or is larger than a job
 * may be. */
static char *read_back(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf;
	int er = read_all(fd, DOC_MAX_BYTES, &buf, len);
	close(fd);
	if (er) {
		free(buf);
		errno = er;
		return NULL;
	}
	return buf;
}

/* Runs $EDITOR (default vi) on a temporary copy with the terminal handed over, then loads the
 * result as an unsaved edit. Invalid YAML changes nothing, and the edited copy is kept so that
 * no typing is lost. */
static void run_editor(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	char path[1024];
	size_t len, nlen = 0;
	const char *text = doc_text(ui_session_cur(v->s), &len);
	int fd, status = 0;
	pid_t pid;

	/* The copy goes beside the job (.JOB.oomfix-edit-XXXXXX.yaml), as everything oomfix
	 * writes; a folder that refuses it sends it to the state folder, as the emergency save. */
	const char *job = v->s->job_path, *slash = strrchr(job, '/');
	int dirlen = slash ? (int)(slash - job) : 1;
	snprintf(path, sizeof path, "%.*s/.%s.oomfix-edit-XXXXXX.yaml", dirlen,
		 slash ? job : ".", slash ? slash + 1 : job);
	fd = mkstemps(path, 5);
	if (fd < 0) {
		int beside = errno;
		char *state = save_state_dir();
		if (state)
			snprintf(path, sizeof path, "%s/%s.oomfix-edit-XXXXXX.yaml", state,
				 slash ? slash + 1 : job);
		free(state);
		fd = state ? mkstemps(path, 5) : -1;
		if (fd < 0) {
			ui_status(c, true, _("cannot create a temporary file beside the job (%s) or in "
					     "the state folder: %s"), strerror(beside), strerror(errno));
			return;
		}
	}
	if (write(fd, text, len) != (ssize_t)len || close(fd) != 0) {
		ui_status(c, true, _("cannot write %s: %s"), path, strerror(errno));
		unlink(path);
		return;
	}
	def_prog_mode();
	endwin();
	pid = fork();
	if (pid == 0) {
		const char *ed = getenv("EDITOR");
		signal(SIGHUP, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (!ed || !*ed)
			setenv("EDITOR", "vi", 1);
		/* Through the shell, so EDITOR may carry arguments ("code -w", "nano -R"). */
		execl("/bin/sh", "sh", "-c", "exec $EDITOR \"$1\"", "sh", path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	reset_prog_mode();
	clearok(curscr, TRUE); /* the editor drew over everything: repaint it all once */
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		ui_status(c, true, _("the editor failed (exit %d); nothing changed"),
			  pid < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		unlink(path);
		return;
	}
	char *nt = read_back(path, &nlen);
	if (!nt) {
		ui_status(c, true, _("cannot read %s back: %s"), path, strerror(errno));
		return;
	}
	if (nlen == len && !memcmp(nt, text, len)) {
		ui_status(c, false, "%s", _("No changes made in the editor."));
		unlink(path);
		free(nt);
		return;
	}
	struct err e;
	if (ui_session_replace_text(v->s, nt, nlen, &e)) {
		char where[64] = "";
		if (e.line > 0)
			snprintf(where, sizeof where, "%d:%d: ", e.line, e.col);
		ui_status(c, true, _("Not loaded: %s%s. Nothing changed; your edit is kept in %s"), where,
			  e.msg, path);
		free(nt);
		return;
	}
	unlink(path);
	free(nt);
	ui_status(c, false, "%s", _("Loaded the edited YAML as unsaved changes (d: diff, u: undo)."));
}

/* The number of lines the view shows for the current text. */
static long long text_lines(const struct ui_session *s)
{
	size_t len;
	const char *t = doc_text(ui_session_cur(s), &len);
	long long n = 0;

	for (size_t i = 0; i < len; i++)
		n += t[i] == '\n';
	return n + (len && t[len - 1] != '\n');
}

/* Search in the YAML: the cursor goes to the matching line. */
static void yaml_search(const struct ui_env *v, bool backward, bool here)
{
	struct ui_lines l = { 0 };
	long long line = v->pos->cursor;

	if (!ui_session_cur(v->s))
		return;
	build(v, &l);
	if (ui_search_lines(v, &l, &line, backward, here))
		v->pos->cursor = line;
	ui_lines_free(&l);
}

static void yaml_search_done(const struct ui_env *v)
{
	if (ui_search_compile(v))
		yaml_search(v, false, true);
}

static enum ui_req yaml_action(const struct ui_env *v, enum ui_act act)
{
	const struct ui_ctx *c = v->c;
	switch (act) {
	case UI_A_SEARCH:
		ui_search_start(v);
		return UI_REQ_DONE;
	case UI_A_SEARCH_NEXT:
	case UI_A_SEARCH_PREV:
		yaml_search(v, act == UI_A_SEARCH_PREV, false);
		return UI_REQ_DONE;
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		/* Bounded by the text, so the cursor never goes past the last line. */
		if (!ui_session_cur(v->s))
			return UI_REQ_PASS;
		ui_pos_move(v->pos, act, text_lines(v->s), c->page);
		return UI_REQ_DONE;
	default:
		break;
	}
	if (act != UI_A_EDITOR)
		return UI_REQ_PASS;
	if (!ui_session_cur(v->s)) {
		ui_status(c, true, "%s", _("No job file is open."));
		return UI_REQ_DONE;
	}
	run_editor(v);
	return UI_REQ_DONE;
}

const struct ui_view_ops ui_view_advanced = {
	.name = N_("Advanced"), .keys = UI_CTX_ADVANCED | UI_CTX_TEXT, .draw = yaml_draw,
	.action = yaml_action, .prompt_done = yaml_search_done,
};
