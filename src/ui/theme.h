/* theme.h — colour roles and theme files (theme.c). */
#ifndef OOMFIX_UI_THEME_H
#define OOMFIX_UI_THEME_H

#include <stdbool.h>
#include <curses.h>

#include "oomfix/err.h"

/* ---- colour roles (theme.c) ---------------------------------------------------------------- */

#define UI_ROLES(X) \
	X(NORMAL, "normal") X(TABBAR, "tabbar") X(TAB_ACTIVE, "tab-active") \
	X(STATUS, "status") X(ERROR, "error") X(FOOTER, "footer") X(FOOTER_KEY, "footer-key") \
	X(CURSOR, "cursor") X(HEADING, "heading") X(LABEL, "label") X(VALUE, "value") \
	X(DEFAULT, "default") X(CHANGED, "changed") X(DIM, "dim") X(OOM, "oom") \
	X(EVIDENCE, "evidence") X(MATCH, "match") X(DIFF_ADD, "diff-add") X(DIFF_DEL, "diff-del") \
	X(DIFF_HUNK, "diff-hunk") X(DIFF_HEAD, "diff-header") X(YAML_KEY, "yaml-key") \
	X(YAML_VALUE, "yaml-value") X(YAML_COMMENT, "yaml-comment") X(EDITED, "edited") \
	X(DONE, "done") X(TODO, "todo") X(NA, "na") X(MARK, "mark") X(DIALOG, "dialog")

#define UI_ROLE_ENUM(id, name) UI_R_##id,
enum ui_role { UI_ROLES(UI_ROLE_ENUM) UI_R_COUNT };
#undef UI_ROLE_ENUM

struct ui_style {
	short fg, bg;     /* colour numbers; -1 = the terminal's default */
	attr_t attrs;     /* attributes used with colour */
	attr_t mono;      /* attributes used without colour: meaning must survive on their own */
};

struct ui_theme {
	char name[64];
	struct ui_style role[UI_R_COUNT];
};

/* The compiled-in default theme (default-dark). */
void ui_theme_default(struct ui_theme *t);

/* Parses a theme file. On error fills e (file:line:col) and leaves *t as the default. */
int ui_theme_load_file(const char *path, struct ui_theme *t, struct err *e);

/* Finds NAME (a path when it contains '/') in the user, installed and source theme dirs and
 * loads it. ERR_NOINPUT when not found. */
int ui_theme_load(const char *name, struct ui_theme *t, struct err *e);

/* The theme names available (sorted, default-dark first); caller frees with ui_theme_names_free. */
char **ui_theme_names(size_t *n);
void ui_theme_names_free(char **names, size_t n);

/* Decides colour once (has_colors, --no-color, NO_COLOR) and installs the theme's pairs. */
void ui_theme_init_colors(bool allow_color);
void ui_theme_apply(const struct ui_theme *t);
bool ui_theme_color_on(void);

/* The attributes (colour pair included) to draw `role` with under the applied theme. */
attr_t ui_attr(enum ui_role role);

#endif
