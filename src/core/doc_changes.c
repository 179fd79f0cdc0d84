/* doc_changes.c — what differs between two versions of a document, as journal lines.
 *
 * The journal must say what really changed in the file, not what a view derived from it, so
 * this walks the two trees side by side and names the deepest paths that differ.
 */
#include "oomfix/doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/buf.h"
#include "oomfix/i18n.h"

#define MAX_LINES 1000       /* a journal entry longer than this is not read by anyone */
#define MAX_FLOW_NODES 4096  /* bound on the text of one value (alias bombs stay small) */
#define MAX_PATH 1024

struct walk {
	char **v;
	size_t n, cap;
	size_t budget; /* node visits left: the walk is bounded like every other tree walk */
};

static char *flow(const struct doc_node *n)
{
	bool trunc = false;
	return n ? doc_to_flow_bounded(n, MAX_FLOW_NODES, &trunc) : NULL;
}

static void emit(struct walk *w, const char *path, const struct doc_node *a,
		 const struct doc_node *b)
{
	if (w->n >= MAX_LINES)
		return;
	if (!ARRAY_GROW(w->v, w->n + 1, w->cap))
		return;
	char *sa = flow(a), *sb = flow(b);
	const char *absent = _("(absent)");
	const char *ta = sa ? sa : absent, *tb = sb ? sb : absent;
	size_t len = strlen(path) + strlen(ta) + strlen(tb) + 16;
	char *line = malloc(len);
	if (line) {
		snprintf(line, len, "%s: %s \xe2\x86\x92 %s", path, ta, tb);
		w->v[w->n++] = line;
	}
	free(sa);
	free(sb);
}

/* Appends ".key" (quoted when the key has path syntax in it) or "[i]" to path. */
static void child_path(char *dst, size_t dstsz, const char *path, const char *key, size_t idx)
{
	if (!key)
		snprintf(dst, dstsz, "%s[%zu]", path, idx);
	else if (strpbrk(key, ".[]\""))
		snprintf(dst, dstsz, "%s%s\"%s\"", path, *path ? "." : "", key);
	else
		snprintf(dst, dstsz, "%s%s%s", path, *path ? "." : "", key);
}

static const struct doc_node *map_find(const struct doc_node *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++)
		if (map->keys[i] && map->keys[i]->value && !strcmp(map->keys[i]->value, key))
			return map->items[i];
	return NULL;
}

static void walk(struct walk *w, const char *path, const struct doc_node *a,
		 const struct doc_node *b)
{
	char sub[MAX_PATH];

	a = a ? doc_deref(a) : NULL;
	b = b ? doc_deref(b) : NULL;
	if ((!a && !b) || w->n >= MAX_LINES)
		return;
	if (w->budget == 0 || !a || !b || a->kind != b->kind || a->kind == DOC_SCALAR) {
		if (!a || !b || !doc_node_equal(a, b))
			emit(w, *path ? path : "(root)", a, b);
		return;
	}
	w->budget--;
	if (a->kind == DOC_SEQ) {
		if (a->n != b->n) { /* an item added or removed: the whole list reads best */
			emit(w, path, a, b);
			return;
		}
		for (size_t i = 0; i < a->n; i++) {
			child_path(sub, sizeof sub, path, NULL, i);
			walk(w, sub, a->items[i], b->items[i]);
		}
		return;
	}
	for (size_t i = 0; i < a->n; i++) {
		const char *key = a->keys[i] ? a->keys[i]->value : NULL;
		if (!key)
			continue;
		child_path(sub, sizeof sub, path, key, 0);
		walk(w, sub, a->items[i], map_find(b, key));
	}
	for (size_t i = 0; i < b->n; i++) {
		const char *key = b->keys[i] ? b->keys[i]->value : NULL;
		if (!key || map_find(a, key))
			continue;
		child_path(sub, sizeof sub, path, key, 0);
		walk(w, sub, NULL, b->items[i]);
	}
}

size_t doc_changes(const struct doc *a, const struct doc *b, char ***out)
{
	struct walk w = { .budget = 4000000 };
	walk(&w, "", doc_root(a), doc_root(b));
	*out = w.v;
	return w.n;
}

void doc_changes_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
