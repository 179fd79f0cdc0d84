/* display.h — the screen (display.c): the tab bar, the footer, the status line, the view or
 * screen in between, drawn each turn with werase + wnoutrefresh and one doupdate; and the
 * terminal's start. */
#ifndef OOMFIX_UI_DISPLAY_H
#define OOMFIX_UI_DISPLAY_H

#include <stdio.h>

#include "app.h"

/* The key contexts (UI_CTX_*) of the mode and view on screen. */
unsigned ui_current_ctx(const struct ui_app *a);
/* Whether view v has a tab now. */
bool ui_view_shown(struct ui_app *a, enum ui_view v);
/* Draws the whole screen. */
void ui_draw(struct ui_app *a);

/* Starts curses on the terminal, or headless at cols x rows for a script (script true); dies
 * with a clear message when there is no usable terminal. */
SCREEN *ui_start_terminal(bool script, int cols, int rows, FILE **outp, FILE **inp);
/* NO_COLOR is set and not empty (no-color.org). */
bool ui_no_color_env(void);

#endif
