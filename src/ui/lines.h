/* lines.h — display lines: text with role segments, shared by the text views (lines.c). */
#ifndef OOMFIX_UI_LINES_H
#define OOMFIX_UI_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "theme.h"

/* ---- display lines (lines.c) -------------------------------------------------------------- */

#define UI_LINE_SEGS 6
struct ui_line {
	char *text;                 /* UTF-8, terminal-safe (sanitised) */
	size_t len;
	struct { size_t off; enum ui_role role; } seg[UI_LINE_SEGS]; /* role from off to next seg */
	int nseg;
	enum ui_role gutter_role;   /* the one-cell mark at the left */
	char gutter;                /* 0: no gutter column; else the mark (' ' for none) */
	int indent;                 /* cells of indentation for continuation lines */
	long long target;           /* a jump target (log line) or a row tag; -1 none */
	bool selectable;
};

struct ui_lines {
	struct ui_line *v;
	size_t n, cap;
};

/* Without a UTF-8 locale the terminal shows only ASCII: set once at start-up (app.c). */
void ui_set_ascii(bool on);
bool ui_ascii(void);
/* Makes sanitised text what the terminal can show, in place (ASCII stand-ins without UTF-8:
 * text_ascii); s must have room for the terminating NUL. Returns the new length. */
size_t ui_for_terminal(char *s, size_t len);

void ui_lines_clear(struct ui_lines *l);
void ui_lines_free(struct ui_lines *l);
/* Appends a line (the text is sanitised and copied); returns it for more segments. */
struct ui_line *ui_lines_add(struct ui_lines *l, enum ui_role role, const char *text);
struct ui_line *ui_lines_addf(struct ui_lines *l, enum ui_role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds a segment starting at byte `off` of the line's text. */
void ui_line_seg(struct ui_line *ln, size_t off, enum ui_role role);
/* Appends text to the last line with a role of its own. */
void ui_line_append(struct ui_line *ln, enum ui_role role, const char *text);
/* Word-wraps a paragraph into lines of at most `width` cells, each indented by `indent`. */
void ui_lines_wrap(struct ui_lines *l, enum ui_role role, const char *text, int width, int indent);
/* Adds a unified diff, one line per diff line, coloured by role. */
void ui_lines_diff(struct ui_lines *l, const char *diff);

#endif
