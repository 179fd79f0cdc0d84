/* draw.c — putting text on the screen measured in cells, and reading the screen back.
 *
 * Every string drawn here is either chrome (translated, trusted) or already sanitised by
 * lines.c / text_sanitize; the width of a string is always measured with text_width/text_fit,
 * never assumed to be one cell per byte or per character.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "oomfix/text.h"
#include "draw.h"

/* One ASCII cell for the few symbols the chrome uses, so a UI in a non-UTF-8 locale still reads
 * ("batch size 4 > 1"); '?' for anything else. */
static wchar_t ascii_stand_in(uint32_t cp)
{
	if (cp >= 0x2580 && cp <= 0x259F)
		return L'#'; /* block elements: the progress bars of tqdm in every training log */
	switch (cp) {
	case 0x2192: return L'>';  /* → */
	case 0x2190: return L'<';  /* ← */
	case 0x2014: case 0x2013: case 0x2212: return L'-'; /* — – − */
	case 0x00D7: return L'x';  /* × */
	case 0x2026: case 0x00B7: return L'.'; /* … · */
	case 0x2713: case 0x2714: return L'*'; /* ✓ ✔ */
	case 0x2018: case 0x2019: return L'\'';
	case 0x201C: case 0x201D: return L'"';
	default: return L'?';
	}
}

int ui_putn(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s, size_t len)
{
	wchar_t wbuf[512];
	size_t nw = 0, i = 0;
	int used = 0;
	mbstate_t st;

	char abuf[2048];

	if (cells <= 0 || !s)
		return 0;
	/* Without UTF-8, chrome and messages are drawn with ASCII stand-ins, measured as drawn. */
	if (ui_ascii()) {
		if (len >= sizeof abuf)
			len = sizeof abuf - 1;
		memcpy(abuf, s, len);
		len = ui_for_terminal(abuf, len);
		s = abuf;
	}
	len = text_fit(s, len, cells, &used);
	memset(&st, 0, sizeof st);
	wattrset(w, ui_attr(role));
	wmove(w, y, x);
	while (i < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + i, len - i, &st);
		if (n == 0 || n == (size_t)-1 || n == (size_t)-2) {
			/* Not a character in this locale: a non-ASCII one when the locale is not UTF-8
			 * (the UI then draws plain ASCII), never after text_sanitize otherwise. One '?'
			 * per character, as text_fit counted it, never the bytes. */
			uint32_t cp;
			n = text_utf8_decode((const unsigned char *)s + i, len - i, &cp);
			wc = n ? ascii_stand_in(cp) : L'?';
			if (n == 0)
				n = 1;
			memset(&st, 0, sizeof st);
		}
		if (wc == L'\t')
			wc = L' '; /* curses would expand it to a tab stop; text_width counted one cell */
		wbuf[nw++] = wc;
		i += n;
		if (nw == sizeof wbuf / sizeof wbuf[0]) {
			waddnwstr(w, wbuf, (int)nw);
			nw = 0;
		}
	}
	if (nw)
		waddnwstr(w, wbuf, (int)nw);
	wattrset(w, A_NORMAL);
	return used;
}

int ui_put(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s)
{
	return ui_putn(w, y, x, cells, role, s, s ? strlen(s) : 0);
}

int ui_put_input(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s, size_t len,
		 size_t cur)
{
	size_t off = 0;

	if (cells <= 1)
		return 0;
	if (cur > len)
		cur = len;
	/* When the text up to the cursor does not fit, its start scrolls out of view behind a '<'
	 * (one cell stays free for the cursor at the end). */
	if (text_width(s, cur) > cells - 1) {
		ui_put(w, y, x, 1, role, "<");
		while (off < cur && text_width(s + off, cur - off) > cells - 2) {
			off++;
			while (off < cur && ((unsigned char)s[off] & 0xC0) == 0x80)
				off++;
		}
		ui_putn(w, y, x + 1, cells - 2, role, s + off, len - off);
		return 1 + text_width(s + off, cur - off);
	}
	ui_putn(w, y, x, cells - 1, role, s, len);
	return text_width(s, cur);
}

void ui_fill(WINDOW *w, int y, int x, int cells, enum ui_role role)
{
	if (cells <= 0)
		return;
	wattrset(w, ui_attr(role));
	mvwhline(w, y, x, ' ', cells);
	wattrset(w, A_NORMAL);
}

void ui_draw_line(WINDOW *w, int y, int x, int width, const struct ui_line *ln, bool cursor)
{
	int col = 0;

	if (width <= 0)
		return;
	if (cursor)
		ui_fill(w, y, x, width, UI_R_CURSOR);
	if (ln->gutter) {
		char g[2] = { ln->gutter, 0 };
		ui_put(w, y, x, 1, cursor ? UI_R_CURSOR : ln->gutter_role, g);
		col = 1;
	}
	int avail = width - col;
	bool clipped = text_width(ln->text, ln->len) > avail;
	if (clipped)
		avail--; /* room for the '>' that says the line goes on */
	for (int i = 0; i < ln->nseg && avail > 0; i++) {
		size_t off = ln->seg[i].off;
		size_t end = i + 1 < ln->nseg ? ln->seg[i + 1].off : ln->len;
		if (end <= off || off >= ln->len)
			continue;
		int used = ui_putn(w, y, x + col, avail, cursor ? UI_R_CURSOR : ln->seg[i].role,
				   ln->text + off, end - off);
		col += used;
		avail -= used;
		if (used == 0)
			break;
	}
	if (clipped)
		ui_put(w, y, x + width - 1, 1, cursor ? UI_R_CURSOR : UI_R_DIM, ">");
}

void ui_draw_lines(WINDOW *w, struct ui_rect r, const struct ui_lines *l, long long cursor,
		   long long *top, bool show_cursor)
{
	long long n = (long long)l->n;

	if (r.h <= 0)
		return;
	if (cursor >= n)
		cursor = n - 1;
	if (cursor < 0)
		cursor = 0;
	if (*top > cursor)
		*top = cursor;
	if (cursor >= *top + r.h)
		*top = cursor - r.h + 1;
	if (*top > n - r.h)
		*top = n - r.h;
	if (*top < 0)
		*top = 0;
	for (int i = 0; i < r.h && *top + i < n; i++) {
		long long k = *top + i;
		ui_draw_line(w, r.y + i, r.x, r.w, &l->v[k], show_cursor && k == cursor);
	}
}

int ui_dump_screen(const char *path)
{
	FILE *fp = fopen(path, "w");
	wchar_t row[1024];

	if (!fp)
		return -1;
	for (int y = 0; y < LINES; y++) {
		int n = COLS < 1023 ? COLS : 1023;
		char out[4096];
		size_t w = 0;
		mbstate_t st;

		memset(&st, 0, sizeof st);
		/* winnwstr skips the second cell of a double-width character, so a row reads as the
		 * text a person sees. */
		if (mvwinnwstr(curscr, y, 0, row, n) == ERR)
			row[0] = L'\0';
		for (int i = 0; row[i] && w + MB_CUR_MAX < sizeof out; i++) {
			size_t k = wcrtomb(out + w, row[i], &st);
			if (k != (size_t)-1)
				w += k;
		}
		while (w > 0 && out[w - 1] == ' ')
			w--;
		fprintf(fp, "%.*s\n", (int)w, out);
	}
	return fclose(fp) == 0 ? 0 : -1;
}
