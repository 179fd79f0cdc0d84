/* input.c — keys from the terminal (wide characters and function keys) or from a --script file
 * (key names, `text:`, and the commands resize, dump, sleep and wait), the headless mode the
 * screen goldens and behaviour tests run in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "oomfix/i18n.h"
#include "display.h"
#include "emergency.h"
#include "follow.h"
#include "input.h"

int ui_read_terminal_key(void)
{
	wint_t wc;
	int r = wget_wch(stdscr, &wc);

	if (r == ERR)
		return -1;
	if (r == KEY_CODE_YES)
		return UI_FKEY((int)wc);
	return (int)wc;
}

/* Returns the next key from the script, running the commands that are not keys (resize, dump,
 * sleep) on the way; 0 at the end. */
int ui_read_script_key(struct ui_app *a, struct ui_script *sc)
{
	char line[1024];

	for (;;) {
		if (sc->pend_off < sc->pend_len) {
			wchar_t wc;
			mbstate_t st;
			memset(&st, 0, sizeof st);
			size_t n = mbrtowc(&wc, sc->pending + sc->pend_off, sc->pend_len - sc->pend_off,
					   &st);
			if (n == 0 || n == (size_t)-1 || n == (size_t)-2) {
				sc->pend_off++;
				continue;
			}
			sc->pend_off += n;
			return (int)wc;
		}
		if (!fgets(line, sizeof line, sc->fp))
			return 0;
		sc->lineno++;
		size_t len = strlen(line);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!strncmp(line, "text:", 5)) {
			snprintf(sc->pending, sizeof sc->pending, "%s", line + 5);
			sc->pend_off = 0;
			sc->pend_len = strlen(sc->pending);
			continue;
		}
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		len = strlen(p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			p[--len] = '\0';
		if (!*p || *p == '#')
			continue;
		/* A script runs on the verdict, as a person would after a moment: it waits for the
		 * worker before its first command, so dumps never depend on timing. `async` as the
		 * first command skips that (to see the screen while the log is read); `wait` waits
		 * later. */
		bool first = !sc->started;
		sc->started = true;
		if (!strcmp(p, "async") && first)
			continue;
		if (first || !strcmp(p, "wait")) {
			if (ui_take_verdict(a, true))
				ui_draw(a);
			if (!strcmp(p, "wait"))
				continue;
		}
		if (!strncmp(p, "resize ", 7)) {
			int c, r;
			if (sscanf(p + 7, "%dx%d", &c, &r) != 2 || c < 1 || r < 1 || c > 1000 || r > 1000)
				ui_die(ERR_USAGE, _("%s:%d: resize wants COLSxROWS"), sc->path, sc->lineno);
			resizeterm(r, c);
			return UI_FKEY(KEY_RESIZE);
		}
		if (!strncmp(p, "dump ", 5)) {
			if (ui_dump_screen(p + 5))
				ui_die(ERR_CANTCREAT, _("%s:%d: cannot write %s: %s"), sc->path, sc->lineno,
				    p + 5, strerror(errno));
			continue;
		}
		if (!strcmp(p, "sleep") || !strncmp(p, "sleep ", 6)) {
			double s = p[5] ? strtod(p + 6, NULL) : 0.1;
			struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
			nanosleep(&ts, NULL);
			continue;
		}
		int key = ui_key_parse(p);
		if (!key)
			ui_die(ERR_USAGE, _("%s:%d: unknown key or command '%s'"), sc->path, sc->lineno, p);
		return key;
	}
}
