/* draw.h — drawing measured in cells, and screen dumps (draw.c). */
#ifndef OOMFIX_UI_DRAW_H
#define OOMFIX_UI_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <curses.h>

#include "lines.h"
#include "theme.h"

/* ---- drawing (draw.c) --------------------------------------------------------------------- */

struct ui_rect { int y, x, h, w; };

/* Writes trusted UTF-8 at (y, x), at most `cells` cells; returns cells used. */
int ui_put(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s);
int ui_putn(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s, size_t len);
/* Draws text being typed in a field of `cells` cells, scrolled so that the cursor (byte `cur`)
 * is visible, a '<' when its start is out of view. Returns the cell the cursor is in. */
int ui_put_input(WINDOW *w, int y, int x, int cells, enum ui_role role, const char *s, size_t len,
		 size_t cur);
/* Fills `cells` cells with spaces in role. */
void ui_fill(WINDOW *w, int y, int x, int cells, enum ui_role role);
/* Draws one display line in a row of the rect; `cursor` draws it as the selection. */
void ui_draw_line(WINDOW *w, int y, int x, int width, const struct ui_line *ln, bool cursor);
/* Draws a list of lines with a cursor row, keeping it visible (adjusts *top). */
void ui_draw_lines(WINDOW *w, struct ui_rect r, const struct ui_lines *l, long long cursor,
		   long long *top, bool show_cursor);

/* Writes the screen as plain text (one line per row, trailing spaces trimmed) to path. */
int ui_dump_screen(const char *path);

#endif
