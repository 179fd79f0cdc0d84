/* theme.c — colour roles and theme files (themes/NAME.yaml).
 *
 * A theme maps each role to {fg, bg, attrs} for colour terminals and to a `mono` set of
 * attributes for terminals without colour (or NO_COLOR / --no-color). Meaning never rests on a
 * colour alone: every role that matters also has a marker character where it is drawn, and a
 * mono form. Colour is decided once at start-up; switching themes only re-installs the pairs.
 * Theme files are read with the document model (doc.h), the program's one YAML reader, so their
 * errors point at file:line:col as a job's do.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "oomfix/buf.h"
#include "oomfix/doc.h"
#include "oomfix/i18n.h"
#include "oomfix/paths.h"
#include "theme.h"

#define ROLE_NAME(id, name) name,
static const char *const role_names[UI_R_COUNT] = { UI_ROLES(ROLE_NAME) };
#undef ROLE_NAME

/* The compiled-in default, identical to themes/default-dark.yaml (a test checks it). */
static const struct { enum ui_role r; short fg, bg; attr_t attrs, mono; } dark[] = {
	{ UI_R_NORMAL, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_TABBAR, COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_REVERSE },
	{ UI_R_TAB_ACTIVE, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_BOLD },
	{ UI_R_STATUS, COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	{ UI_R_ERROR, COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_FOOTER, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_FOOTER_KEY, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_R_CURSOR, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	{ UI_R_HEADING, COLOR_CYAN, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_LABEL, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_VALUE, COLOR_WHITE, -1, A_BOLD, A_BOLD },
	{ UI_R_DEFAULT, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_CHANGED, COLOR_YELLOW, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_DIM, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_OOM, COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_EVIDENCE, COLOR_MAGENTA, -1, A_BOLD, A_BOLD },
	{ UI_R_MATCH, COLOR_BLACK, COLOR_YELLOW, A_NORMAL, A_STANDOUT },
	{ UI_R_DIFF_ADD, COLOR_GREEN, -1, A_NORMAL, A_BOLD },
	{ UI_R_DIFF_DEL, COLOR_RED, -1, A_NORMAL, A_DIM },
	{ UI_R_DIFF_HUNK, COLOR_CYAN, -1, A_NORMAL, A_UNDERLINE },
	{ UI_R_DIFF_HEAD, -1, -1, A_BOLD, A_BOLD },
	{ UI_R_YAML_KEY, COLOR_CYAN, -1, A_NORMAL, A_BOLD },
	{ UI_R_YAML_VALUE, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_YAML_COMMENT, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_EDITED, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_R_DONE, COLOR_GREEN, -1, A_BOLD, A_BOLD },
	{ UI_R_TODO, COLOR_YELLOW, -1, A_NORMAL, A_NORMAL },
	{ UI_R_NA, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_MARK, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_R_DIALOG, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_REVERSE | A_BOLD },
};

void ui_theme_default(struct ui_theme *t)
{
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "default-dark");
	for (int i = 0; i < UI_R_COUNT; i++)
		t->role[i] = (struct ui_style){ -1, -1, A_NORMAL, A_NORMAL };
	for (size_t i = 0; i < sizeof dark / sizeof dark[0]; i++)
		t->role[dark[i].r] = (struct ui_style){ dark[i].fg, dark[i].bg, dark[i].attrs,
							dark[i].mono };
}

/* ---- parsing -------------------------------------------------------------------------------- */

static const struct { const char *name; short n; } color_names[] = {
	{ "default", -1 }, { "black", 0 }, { "red", 1 }, { "green", 2 }, { "yellow", 3 },
	{ "blue", 4 }, { "magenta", 5 }, { "cyan", 6 }, { "white", 7 }, { "grey", 8 },
	{ "gray", 8 }, { "bright-black", 8 }, { "bright-red", 9 }, { "bright-green", 10 },
	{ "bright-yellow", 11 }, { "bright-blue", 12 }, { "bright-magenta", 13 },
	{ "bright-cyan", 14 }, { "bright-white", 15 },
};

static const struct { const char *name; attr_t a; } attr_names[] = {
	{ "normal", A_NORMAL }, { "bold", A_BOLD }, { "dim", A_DIM }, { "underline", A_UNDERLINE },
	{ "reverse", A_REVERSE }, { "standout", A_STANDOUT }, { "italic", A_ITALIC },
	{ "blink", A_BLINK },
};

/* The file being read, for errors that say where. */
struct tload {
	const char *path;
	struct err *e;
};

static int fail(const struct tload *L, const struct doc_node *n, const char *msg, const char *what)
{
	return err_set(L->e, ERR_DATA, L->path, n->span.line, n->span.col, "%s%s%s%s", msg,
		       what ? " '" : "", what ? what : "", what ? "'" : "");
}

/* Aliases and merge keys are not followed below: a theme is small and flat, so an alias where a
 * value belongs is reported as the wrong kind of node and `<<` as an unknown key or role. */

static int parse_color(const struct tload *L, const struct doc_node *n, short *out)
{
	char *end;

	if (n->kind != DOC_SCALAR)
		return fail(L, n, _("expected a colour"), NULL);
	for (size_t i = 0; i < sizeof color_names / sizeof color_names[0]; i++)
		if (!strcmp(color_names[i].name, n->value)) {
			*out = color_names[i].n;
			return ERR_OK;
		}
	long v = strtol(n->value, &end, 10);
	if (*n->value && !*end && v >= 0 && v <= 255) {
		*out = (short)v;
		return ERR_OK;
	}
	return fail(L, n, _("unknown colour"), n->value);
}

static bool attr_word(const char *w, attr_t *out)
{
	for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
		if (!strcmp(attr_names[i].name, w)) {
			*out |= attr_names[i].a;
			return true;
		}
	return false;
}

/* attrs: a word, a list of words, or words separated by spaces/commas in one scalar. */
static int parse_attrs(const struct tload *L, const struct doc_node *n, attr_t *out)
{
	*out = A_NORMAL;
	if (n->kind == DOC_SCALAR) {
		char buf[256];
		snprintf(buf, sizeof buf, "%s", n->value);
		for (char *sp = NULL, *w = strtok_r(buf, " ,|+", &sp); w; w = strtok_r(NULL, " ,|+", &sp))
			if (!attr_word(w, out))
				return fail(L, n, _("unknown attribute"), w);
		return ERR_OK;
	}
	if (n->kind != DOC_SEQ)
		return fail(L, n, _("expected an attribute or a list of them"), NULL);
	/* In a list each item is one word: "bold,dim" as an item is a mistake worth reporting. */
	for (size_t i = 0; i < n->n; i++) {
		const struct doc_node *w = n->items[i];
		if (w->kind != DOC_SCALAR)
			return fail(L, w, _("expected an attribute"), NULL);
		if (!attr_word(w->value, out))
			return fail(L, w, _("unknown attribute"), w->value);
	}
	return ERR_OK;
}

static int parse_role(const struct tload *L, const struct doc_node *n, struct ui_style *st)
{
	int rc = ERR_OK;

	if (n->kind != DOC_MAP)
		return fail(L, n, _("expected a mapping of fg, bg, attrs, mono"), NULL);
	/* Pairs in file order, so the first mistake in the file is the one reported. */
	for (size_t i = 0; i < n->n && rc == ERR_OK; i++) {
		const struct doc_node *k = n->keys[i], *v = n->items[i];
		if (k->kind != DOC_SCALAR)
			rc = fail(L, k, _("expected a key"), NULL);
		else if (!strcmp(k->value, "fg"))
			rc = parse_color(L, v, &st->fg);
		else if (!strcmp(k->value, "bg"))
			rc = parse_color(L, v, &st->bg);
		else if (!strcmp(k->value, "attrs"))
			rc = parse_attrs(L, v, &st->attrs);
		else if (!strcmp(k->value, "mono"))
			rc = parse_attrs(L, v, &st->mono);
		else
			rc = fail(L, k, _("unknown key"), k->value);
	}
	return rc;
}

static int parse_roles(const struct tload *L, const struct doc_node *n, struct ui_theme *t)
{
	int rc = ERR_OK;

	if (n->kind != DOC_MAP)
		return fail(L, n, _("roles must be a mapping"), NULL);
	for (size_t i = 0; i < n->n && rc == ERR_OK; i++) {
		const struct doc_node *k = n->keys[i];
		int r = -1;
		if (k->kind != DOC_SCALAR)
			return fail(L, k, _("expected a role name"), NULL);
		for (int j = 0; j < UI_R_COUNT; j++)
			if (!strcmp(role_names[j], k->value))
				r = j;
		if (r < 0)
			return fail(L, k, _("unknown role"), k->value);
		/* A role written in the file starts blank: no colour unless given. */
		t->role[r] = (struct ui_style){ -1, -1, A_NORMAL, A_NORMAL };
		rc = parse_role(L, n->items[i], &t->role[r]);
	}
	return rc;
}

static int parse_theme(const struct tload *L, const struct doc_node *root, struct ui_theme *t)
{
	int rc = ERR_OK;

	if (root->kind != DOC_MAP)
		return fail(L, root, _("a theme is a mapping with name and roles"), NULL);
	for (size_t i = 0; i < root->n && rc == ERR_OK; i++) {
		const struct doc_node *k = root->keys[i], *v = root->items[i];
		if (k->kind != DOC_SCALAR)
			rc = fail(L, k, _("expected a key"), NULL);
		else if (!strcmp(k->value, "name") && v->kind != DOC_SCALAR)
			rc = fail(L, v, _("expected a name"), NULL);
		else if (!strcmp(k->value, "name"))
			snprintf(t->name, sizeof t->name, "%s", v->value);
		else if (!strcmp(k->value, "roles"))
			rc = parse_roles(L, v, t);
		else if (strcmp(k->value, "description")) /* free text for people, not read */
			rc = fail(L, k, _("unknown key"), k->value);
	}
	return rc;
}

int ui_theme_load_file(const char *path, struct ui_theme *t, struct err *e)
{
	struct tload L = { path, e };
	struct doc *d = NULL;
	int rc = doc_load_file(path, &d, e);

	/* Roles the file leaves out keep the default's style. */
	ui_theme_default(t);
	if (rc == ERR_OK && (rc = parse_theme(&L, doc_root(d), t)))
		ui_theme_default(t); /* never half a theme */
	doc_free(&d);
	return rc;
}

/* ---- finding theme files --------------------------------------------------------------------- */

static bool valid_name(const char *name)
{
	if (!*name || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

/* The theme directories in lookup order; returns how many were written. */
static size_t theme_dirs(char dirs[4][1024])
{
	size_t n = 0;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		snprintf(dirs[n++], 1024, "%s/oomfix/themes", xdg);
	else if (home && *home)
		snprintf(dirs[n++], 1024, "%s/.config/oomfix/themes", home);
	/* Beside the binary (a release, a relocated install), then where it was installed, then
	 * the source tree (development builds only). */
	if (paths_share_file("oomfix/themes", dirs[n], 1024) && strcmp(dirs[n], OOMFIX_THEMEDIR))
		n++;
	snprintf(dirs[n++], 1024, "%s", OOMFIX_THEMEDIR);
#ifdef OOMFIX_SOURCE_THEMEDIR
	snprintf(dirs[n++], 1024, "%s", OOMFIX_SOURCE_THEMEDIR);
#endif
	return n;
}

int ui_theme_load(const char *name, struct ui_theme *t, struct err *e)
{
	char dirs[4][1024], path[1200];
	struct stat st;

	if (strchr(name, '/'))
		return ui_theme_load_file(name, t, e);
	if (!valid_name(name))
		return err_set(e, ERR_USAGE, NULL, 0, 0, _("invalid theme name '%s'"), name);
	size_t nd = theme_dirs(dirs);
	for (size_t i = 0; i < nd; i++) {
		snprintf(path, sizeof path, "%s/%s.yaml", dirs[i], name);
		if (stat(path, &st) == 0)
			return ui_theme_load_file(path, t, e);
	}
	if (!strcmp(name, "default-dark") || !strcmp(name, "default")) {
		ui_theme_default(t);
		return ERR_OK;
	}
	ui_theme_default(t);
	return err_set(e, ERR_NOINPUT, NULL, 0, 0, _("theme '%s' not found"), name);
}

static int cmp_names(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	/* The default comes first so that `t` starts the cycle from it. */
	if (!strcmp(x, "default-dark"))
		return strcmp(y, "default-dark") ? -1 : 0;
	if (!strcmp(y, "default-dark"))
		return 1;
	return strcmp(x, y);
}

char **ui_theme_names(size_t *n)
{
	char dirs[4][1024];
	size_t nd = theme_dirs(dirs), cnt = 0, cap = 0;
	char **v = NULL;

	if (!ARRAY_GROW(v, 1, cap)) {
		*n = 0;
		return NULL;
	}
	v[cnt++] = strdup("default-dark");
	for (size_t i = 0; i < nd; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
				continue;
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)(len - 5), de->d_name);
			if (!valid_name(name))
				continue;
			bool dup = false;
			for (size_t k = 0; k < cnt; k++)
				if (v[k] && !strcmp(v[k], name))
					dup = true;
			if (dup)
				continue;
			if (!ARRAY_GROW(v, cnt + 1, cap))
				break;
			v[cnt++] = strdup(name);
		}
		closedir(d);
	}
	qsort(v, cnt, sizeof *v, cmp_names);
	*n = cnt;
	return v;
}

void ui_theme_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---- installing -------------------------------------------------------------------------------- */

static bool color_on;
static attr_t role_attr[UI_R_COUNT];

void ui_theme_init_colors(bool allow_color)
{
	color_on = false;
	if (!allow_color || !has_colors())
		return;
	if (start_color() == ERR)
		return;
	use_default_colors();
	/* One pair per role; a terminal that cannot hold them all gets the mono forms. */
	color_on = COLORS >= 8 && COLOR_PAIRS > UI_R_COUNT;
}

bool ui_theme_color_on(void)
{
	return color_on;
}

/* Maps a theme colour onto what the terminal has: bright colours fall back to their base
 * colour plus bold on 8-colour terminals, anything beyond that to the default. */
static short fit_color(short c, attr_t *extra)
{
	if (c < 0)
		return -1;
	if (c < COLORS)
		return c;
	if (c < 16) {
		*extra |= A_BOLD;
		return (short)(c & 7);
	}
	return -1;
}

void ui_theme_apply(const struct ui_theme *t)
{
	for (int i = 0; i < UI_R_COUNT; i++) {
		const struct ui_style *st = &t->role[i];
		if (!color_on) {
			role_attr[i] = st->mono;
			continue;
		}
		attr_t extra = A_NORMAL;
		short fg = fit_color(st->fg, &extra), bg = fit_color(st->bg, &extra);
		if (init_pair((short)(i + 1), fg, bg) == ERR) {
			/* No default colours (use_default_colors failed): white on black instead. */
			init_pair((short)(i + 1), fg < 0 ? COLOR_WHITE : fg, bg < 0 ? COLOR_BLACK : bg);
		}
		role_attr[i] = st->attrs | extra | COLOR_PAIR(i + 1);
	}
}

attr_t ui_attr(enum ui_role role)
{
	return role_attr[role];
}
