/* doc.c — loading a YAML document into a node tree with byte spans, lookups, scalar typing and
 * the flow writer. Edits live in doc_edit.c. */
#include "oomfix/doc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "oomfix/buf.h"
#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "doc_priv.h"

/* ---- arena: nodes and strings live until doc_free ---- */

struct doc_chunk {
	struct doc_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

static void *arena_alloc(struct doc *d, size_t n)
{
	const size_t align = sizeof(max_align_t);
	n = (n + align - 1) / align * align;
	struct doc_chunk *c = d->chunks;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > (1u << 20) ? n : (1u << 20);
		c = malloc(sizeof *c + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = d->chunks;
		d->chunks = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static char *arena_strndup(struct doc *d, const char *s, size_t n)
{
	char *p = arena_alloc(d, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* ---- quoting ---- */

void doc_buf_dquote(struct strbuf *b, const char *s, size_t n)
{
	strbuf_add(b, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char hex[8];
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\t': esc = "\\t"; break;
		case '\r': esc = "\\r"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(hex, sizeof hex, "\\x%02x", c);
				esc = hex;
			}
		}
		if (esc) {
			strbuf_add(b, s + run, i - run);
			strbuf_adds(b, esc);
			run = i + 1;
		}
	}
	strbuf_add(b, s + run, n - run);
	strbuf_add(b, "\"", 1);
}

/* ---- positions ---- */

/* libyaml marks count characters (after the BOM); walking a cursor keeps the conversion linear
 * because marks arrive nearly in order. */
struct cursor {
	const unsigned char *t;
	size_t len, ci, bi;
	bool ascii;
	size_t bom;
};

static size_t to_byte(struct cursor *c, size_t idx)
{
	if (c->ascii)
		return c->bom + idx < c->len ? c->bom + idx : c->len;
	while (c->ci < idx && c->bi < c->len) {
		c->bi++;
		while (c->bi < c->len && (c->t[c->bi] & 0xC0) == 0x80)
			c->bi++;
		c->ci++;
	}
	while (c->ci > idx && c->bi > c->bom) {
		c->bi--;
		while (c->bi > c->bom && (c->t[c->bi] & 0xC0) == 0x80)
			c->bi--;
		c->ci--;
	}
	return c->bi;
}

void doc_linecol(const struct doc *d, size_t off, int *line, int *col)
{
	int l = 1, k = 1;
	if (off > d->len)
		off = d->len;
	for (size_t i = d->bom; i < off; i++) {
		unsigned char c = (unsigned char)d->text[i];
		if (c == '\n') {
			l++;
			k = 1;
		} else if (c == '\r') {
			if (i + 1 < off && d->text[i + 1] == '\n')
				continue;
			l++;
			k = 1;
		} else if ((c & 0xC0) != 0x80) {
			k++;
		}
	}
	*line = l;
	*col = k;
}

/* Checks the bytes before libyaml sees them, so binary data gets a position and UTF-16 (which
 * would break the character-to-byte conversion) is refused. */
static int check_bytes(const char *name, const unsigned char *t, size_t len, bool *ascii,
		       size_t *bom, struct err *e)
{
	int line = 1, col = 1;
	bool all_ascii = true;
	*bom = 0;
	if (len >= 2 && ((t[0] == 0xFE && t[1] == 0xFF) || (t[0] == 0xFF && t[1] == 0xFE)))
		return err_set(e, ERR_DATA, name, 1, 1, "%s",
			       _("the file is UTF-16; only UTF-8 is supported"));
	if (len >= 3 && t[0] == 0xEF && t[1] == 0xBB && t[2] == 0xBF)
		*bom = 3;
	for (size_t i = *bom; i < len;) {
		unsigned char c = t[i];
		if (c == 0)
			return err_set(e, ERR_DATA, name, line, col, "%s",
				       _("NUL byte: this is binary data, not YAML"));
		if (c < 0x80) {
			if (c == '\n' || (c == '\r' && !(i + 1 < len && t[i + 1] == '\n'))) {
				line++;
				col = 1;
			} else if (c != '\r') {
				col++;
			}
			i++;
			continue;
		}
		all_ascii = false;
		uint32_t cp;
		size_t n = text_utf8_decode(t + i, len - i, &cp);
		bool ok = n > 0;
		if (!ok)
			return err_set(e, ERR_DATA, name, line, col,
				       _("invalid UTF-8 byte 0x%02x: this is not a text file"), c);
		i += n;
		col++;
	}
	*ascii = all_ascii;
	return ERR_OK;
}

/* ---- loading ---- */

struct vec {
	struct doc_node **p;
	size_t n, cap;
};

static bool vec_push(struct vec *v, struct doc_node *x)
{
	if (!ARRAY_GROW(v->p, v->n + 1, v->cap))
		return false;
	v->p[v->n++] = x;
	return true;
}

struct frame {
	struct dnode *node;
	struct vec keys, items;
	bool want_key;
};

struct anchor_tab {
	const char **names;
	struct doc_node **nodes;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static bool anchor_put(struct anchor_tab *t, const char *name, struct doc_node *n)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		const char **names = calloc(cap, sizeof *names);
		struct doc_node **nodes = calloc(cap, sizeof *nodes);
		if (!names || !nodes) {
			free(names);
			free(nodes);
			return false;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->names[i])
				continue;
			size_t j = hash_str(t->names[i]) & (cap - 1);
			while (names[j])
				j = (j + 1) & (cap - 1);
			names[j] = t->names[i];
			nodes[j] = t->nodes[i];
		}
		free(t->names);
		free(t->nodes);
		t->names = names;
		t->nodes = nodes;
		t->cap = cap;
	}
	size_t j = hash_str(name) & (t->cap - 1);
	while (t->names[j] && strcmp(t->names[j], name))
		j = (j + 1) & (t->cap - 1);
	if (!t->names[j])
		t->n++;
	t->names[j] = name;
	t->nodes[j] = n;
	return true;
}

static struct doc_node *anchor_get(const struct anchor_tab *t, const char *name)
{
	if (!t->cap)
		return NULL;
	size_t j = hash_str(name) & (t->cap - 1);
	while (t->names[j]) {
		if (!strcmp(t->names[j], name))
			return t->nodes[j];
		j = (j + 1) & (t->cap - 1);
	}
	return NULL;
}

static void anchor_clear(struct anchor_tab *t)
{
	free(t->names);
	free(t->nodes);
	memset(t, 0, sizeof *t);
}

struct loader {
	struct doc *d;
	struct cursor cur;
	struct frame *stack;
	size_t depth, stack_cap;
	struct anchor_tab anchors;
	int docno;
	struct err *e;
};

static int oom(struct loader *L)
{
	return err_set(L->e, ERR_SOFTWARE, L->d->name, 0, 0, "%s", _("out of memory"));
}

/* Byte where a node's content starts: after `&anchor` and `!tag` tokens and the blanks after them. */
static size_t skip_props(const struct doc *d, size_t p, size_t end, bool has_props)
{
	if (!has_props)
		return p;
	while (p < end && (d->text[p] == '&' || d->text[p] == '!')) {
		while (p < end && !strchr(" \t\r\n", d->text[p]))
			p++;
		while (p < end && strchr(" \t\r\n", d->text[p]))
			p++;
	}
	return p;
}

static struct dnode *new_node(struct loader *L, enum doc_kind kind, const yaml_event_t *ev,
			      const yaml_char_t *anchor, const yaml_char_t *tag)
{
	struct doc *d = L->d;
	if (d->nnodes >= DOC_MAX_NODES) {
		err_set(L->e, ERR_DATA, d->name, (int)ev->start_mark.line + 1,
			(int)ev->start_mark.column + 1, _("more than %d nodes: refusing this document"),
			DOC_MAX_NODES);
		return NULL;
	}
	struct dnode *x = arena_alloc(d, sizeof *x);
	if (!x) {
		oom(L);
		return NULL;
	}
	memset(x, 0, sizeof *x);
	d->nnodes++;
	struct doc_node *n = &x->pub;
	n->kind = kind;
	n->span.start = to_byte(&L->cur, ev->start_mark.index);
	n->span.end = to_byte(&L->cur, ev->end_mark.index);
	n->span.line = (int)ev->start_mark.line + 1;
	n->span.col = (int)ev->start_mark.column + 1;
	if (anchor && !(n->anchor = arena_strndup(d, (const char *)anchor, strlen((const char *)anchor)))) {
		oom(L);
		return NULL;
	}
	if (tag && !(n->tag = arena_strndup(d, (const char *)tag, strlen((const char *)tag)))) {
		oom(L);
		return NULL;
	}
	x->vstart = skip_props(d, n->span.start, n->span.end, anchor || tag);
	if (L->depth) {
		struct frame *f = &L->stack[L->depth - 1];
		n->parent = &f->node->pub;
		x->flow_ctx = f->node->pub.style == DOC_FLOW || f->node->flow_ctx;
	}
	if (anchor && !anchor_put(&L->anchors, n->anchor, n)) {
		oom(L);
		return NULL;
	}
	return x;
}

/* Hangs a finished node on the open collection (or makes it the root). */
static int attach(struct loader *L, struct doc_node *n)
{
	if (!L->depth) {
		L->d->root = n;
		return ERR_OK;
	}
	struct frame *f = &L->stack[L->depth - 1];
	bool ok;
	if (f->node->pub.kind == DOC_MAP && f->want_key)
		ok = vec_push(&f->keys, n);
	else
		ok = vec_push(&f->items, n);
	if (f->node->pub.kind == DOC_MAP)
		f->want_key = !f->want_key;
	return ok ? ERR_OK : oom(L);
}

static int push(struct loader *L, const yaml_event_t *ev)
{
	if (L->depth >= DOC_MAX_DEPTH)
		return err_set(L->e, ERR_DATA, L->d->name, (int)ev->start_mark.line + 1,
			       (int)ev->start_mark.column + 1,
			       _("nesting deeper than %d levels: refusing this document"), DOC_MAX_DEPTH);
	if (!ARRAY_GROW(L->stack, L->depth + 1, L->stack_cap))
		return oom(L);
	struct frame *f = &L->stack[L->depth];
	memset(f, 0, sizeof *f);
	if (L->docno == 1) {
		bool map = ev->type == YAML_MAPPING_START_EVENT;
		const yaml_char_t *anchor = map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
		const yaml_char_t *tag = map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
		bool flow = map ? ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
				: ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
		struct dnode *x = new_node(L, map ? DOC_MAP : DOC_SEQ, ev, anchor, tag);
		if (!x)
			return L->e ? L->e->code : ERR_SOFTWARE;
		x->pub.style = flow ? DOC_FLOW : DOC_BLOCK;
		f->node = x;
		f->want_key = true;
	}
	L->depth++;
	return ERR_OK;
}

static int pop(struct loader *L, const yaml_event_t *ev)
{
	struct frame *f = &L->stack[--L->depth];
	if (L->docno != 1)
		return ERR_OK;
	struct doc_node *n = &f->node->pub;
	int rc = ERR_OK;
	size_t cnt = f->items.n;
	if (n->kind == DOC_MAP) {
		n->keys = arena_alloc(L->d, (cnt ? cnt : 1) * sizeof *n->keys);
		if (!n->keys)
			rc = oom(L);
		else if (cnt) /* an empty collection has no key buffer to copy from */
			memcpy(n->keys, f->keys.p, cnt * sizeof *n->keys);
	}
	n->items = arena_alloc(L->d, (cnt ? cnt : 1) * sizeof *n->items);
	if (n->items && cnt) /* an empty collection has no item buffer to copy from */
		memcpy(n->items, f->items.p, cnt * sizeof *n->items);
	else if (!n->items && rc == ERR_OK)
		rc = oom(L);
	n->n = cnt;
	/* A flow collection ends at its closing bracket; a block one where its last child ends
	 * (libyaml puts the block end at the next token, past comments that belong elsewhere). */
	if (n->style == DOC_FLOW)
		n->span.end = to_byte(&L->cur, ev->end_mark.index);
	else if (cnt)
		n->span.end = n->items[cnt - 1]->span.end;
	free(f->keys.p);
	free(f->items.p);
	if (rc == ERR_OK)
		rc = attach(L, n);
	return rc;
}

struct qmark {
	bool valid;
	size_t start_line, start_col, end_line, end_index;
};

/* The column (1-based, in bytes) of a tab in the indentation of line `line` (1-based), or 0. */
static int indent_tab(const struct doc *d, int line)
{
	const char *t = d->text, *end = d->text + d->len;
	for (int l = 1; l < line && t < end; l++) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));
		if (!nl)
			return 0;
		t = nl + 1;
	}
	for (const char *c = t; c < end && (*c == ' ' || *c == '\t'); c++)
		if (*c == '\t')
			return (int)(c - t) + 1;
	return 0;
}

static int parse_error(struct loader *L, yaml_parser_t *p, const struct qmark *q)
{
	const char *name = L->d->name;
	const char *problem = p->problem ? p->problem : _("invalid YAML");
	int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
	if (p->error == YAML_MEMORY_ERROR)
		return oom(L);
	/* libyaml's words for a tab in the indentation do not say "tab". */
	int tab = indent_tab(L->d, line);
	if (tab)
		return err_set(L->e, ERR_DATA, name, line, tab, "%s",
			       _("a tab in the indentation: YAML indents with spaces only (replace the "
				 "tab with spaces)"));
	/* A quoted string whose closing quote is missing swallows the following lines until the next
	 * quote; libyaml then complains after it. Point at where the string opened. */
	if (q->valid && q->start_line != q->end_line && p->problem_mark.index >= q->end_index &&
	    p->problem_mark.line <= q->end_line + 1)
		return err_set(L->e, ERR_DATA, name, (int)q->start_line + 1, (int)q->start_col + 1,
			       _("this quoted string runs on to line %d, then: %s (line %d, column %d); "
				 "is its closing quote missing?"),
			       (int)q->end_line + 1, problem, line, col);
	if (p->context && p->context_mark.line != p->problem_mark.line &&
	    strstr(p->context, "quoted scalar"))
		return err_set(L->e, ERR_DATA, name, (int)p->context_mark.line + 1,
			       (int)p->context_mark.column + 1,
			       _("%s %s (line %d, column %d); is its closing quote missing?"),
			       p->context, problem, line, col);
	if (p->context)
		return err_set(L->e, ERR_DATA, name, line, col, _("%s (%s at line %d, column %d)"),
			       problem, p->context, (int)p->context_mark.line + 1,
			       (int)p->context_mark.column + 1);
	return err_set(L->e, ERR_DATA, name, line, col, "%s", problem);
}

static int scalar_event(struct loader *L, const yaml_event_t *ev)
{
	const yaml_char_t *anchor = ev->data.scalar.anchor, *tag = ev->data.scalar.tag;
	struct dnode *x = new_node(L, DOC_SCALAR, ev, anchor, tag);
	if (!x)
		return L->e ? L->e->code : ERR_SOFTWARE;
	struct doc_node *n = &x->pub;
	switch (ev->data.scalar.style) {
	case YAML_SINGLE_QUOTED_SCALAR_STYLE: n->style = DOC_SQUOTED; break;
	case YAML_DOUBLE_QUOTED_SCALAR_STYLE: n->style = DOC_DQUOTED; break;
	case YAML_LITERAL_SCALAR_STYLE: n->style = DOC_LITERAL; break;
	case YAML_FOLDED_SCALAR_STYLE: n->style = DOC_FOLDED; break;
	default: n->style = DOC_PLAIN; break;
	}
	/* libyaml reports "!" for a quoted scalar without a tag: that is no explicit tag. */
	if (n->tag && !strcmp(n->tag, "!") && n->style != DOC_PLAIN)
		n->tag = NULL;
	n->value = arena_strndup(L->d, (const char *)ev->data.scalar.value, ev->data.scalar.length);
	if (!n->value)
		return oom(L);
	n->value_len = ev->data.scalar.length;
	return attach(L, n);
}

static int alias_event(struct loader *L, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	struct doc_node *t = anchor_get(&L->anchors, name);
	if (!t)
		return err_set(L->e, ERR_DATA, L->d->name, (int)ev->start_mark.line + 1,
			       (int)ev->start_mark.column + 1, _("alias *%s names no anchor before it"),
			       name);
	struct dnode *x = new_node(L, DOC_ALIAS, ev, NULL, NULL);
	if (!x)
		return L->e ? L->e->code : ERR_SOFTWARE;
	x->pub.target = t;
	x->pub.anchor = t->anchor;
	return attach(L, &x->pub);
}

static int run_parser(struct loader *L)
{
	yaml_parser_t p;
	struct qmark q = {0};
	int rc = ERR_OK;
	bool done = false;
	if (!yaml_parser_initialize(&p))
		return oom(L);
	yaml_parser_set_input_string(&p, (const unsigned char *)L->d->text, L->d->len);
	while (!done && rc == ERR_OK) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = parse_error(L, &p, &q);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			L->docno++;
			anchor_clear(&L->anchors);
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			rc = push(L, &ev);
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			rc = pop(L, &ev);
			break;
		case YAML_SCALAR_EVENT:
			if (ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
			    ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
				q.valid = true;
				q.start_line = ev.start_mark.line;
				q.start_col = ev.start_mark.column;
				q.end_line = ev.end_mark.line;
				q.end_index = ev.end_mark.index;
			} else {
				q.valid = false;
			}
			if (L->docno == 1)
				rc = scalar_event(L, &ev);
			break;
		case YAML_ALIAS_EVENT:
			if (L->docno == 1)
				rc = alias_event(L, &ev);
			else if (!anchor_get(&L->anchors, (const char *)ev.data.alias.anchor))
				rc = err_set(L->e, ERR_DATA, L->d->name, (int)ev.start_mark.line + 1,
					     (int)ev.start_mark.column + 1,
					     _("alias *%s names no anchor before it"),
					     (const char *)ev.data.alias.anchor);
			break;
		default:
			break;
		}
		/* Later documents are checked but not kept; their anchors still count for aliases. */
		if (L->docno > 1 && rc == ERR_OK) {
			const yaml_char_t *a = NULL;
			if (ev.type == YAML_SCALAR_EVENT)
				a = ev.data.scalar.anchor;
			else if (ev.type == YAML_MAPPING_START_EVENT)
				a = ev.data.mapping_start.anchor;
			else if (ev.type == YAML_SEQUENCE_START_EVENT)
				a = ev.data.sequence_start.anchor;
			if (a) {
				char *nm = arena_strndup(L->d, (const char *)a, strlen((const char *)a));
				if (!nm || !anchor_put(&L->anchors, nm, L->d->root))
					rc = oom(L);
			}
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

static bool detect_crlf(const char *t, size_t len)
{
	const char *nl = memchr(t, '\n', len);
	return nl && nl > t && nl[-1] == '\r';
}

int doc_load(const char *name, const char *text, size_t len, struct doc **out, struct err *e)
{
	*out = NULL;
	if (!name)
		name = "-";
	if (len > DOC_MAX_BYTES)
		return err_set(e, ERR_DATA, name, 0, 0,
			       _("the file is %zu bytes; more than %u bytes is refused"), len,
			       (unsigned)DOC_MAX_BYTES);
	struct doc *d = calloc(1, sizeof *d);
	if (!d)
		return err_set(e, ERR_SOFTWARE, name, 0, 0, "%s", _("out of memory"));
	d->name = strdup(name);
	d->text = malloc(len + 1);
	if (!d->name || !d->text) {
		doc_free(&d);
		return err_set(e, ERR_SOFTWARE, name, 0, 0, "%s", _("out of memory"));
	}
	memcpy(d->text, text, len);
	d->text[len] = '\0';
	d->len = len;
	d->crlf = detect_crlf(text, len);

	struct loader L = {.d = d, .e = e};
	bool ascii = false;
	int rc = check_bytes(name, (const unsigned char *)d->text, len, &ascii, &d->bom, e);
	if (rc == ERR_OK) {
		L.cur = (struct cursor){.t = (const unsigned char *)d->text, .len = len,
					.ascii = ascii, .bom = d->bom, .bi = d->bom};
		rc = run_parser(&L);
	}
	for (size_t i = 0; i < L.depth; i++) {
		free(L.stack[i].keys.p);
		free(L.stack[i].items.p);
	}
	free(L.stack);
	anchor_clear(&L.anchors);
	if (rc == ERR_OK && !d->root)
		rc = err_set(e, ERR_DATA, name, 0, 0, "%s",
			     _("empty file: there is no YAML document in it"));
	if (rc != ERR_OK) {
		doc_free(&d);
		return rc;
	}
	*out = d;
	return ERR_OK;
}

int doc_load_file(const char *path, struct doc **out, struct err *e)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open: %s"), strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int saved = errno;
		close(fd);
		return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open: %s"), strerror(saved));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return err_set(e, ERR_NOINPUT, path, 0, 0, "%s", _("is a directory, not a YAML file"));
	}
	char *buf;
	size_t len;
	int rc = ERR_OK, er = read_all(fd, DOC_MAX_BYTES, &buf, &len);
	if (er == EFBIG)
		rc = err_set(e, ERR_DATA, path, 0, 0, _("the file is larger than %u bytes: refused"),
			     (unsigned)DOC_MAX_BYTES);
	else if (er == ENOMEM)
		rc = err_set(e, ERR_SOFTWARE, path, 0, 0, "%s", _("out of memory"));
	else if (er)
		rc = err_set(e, er == EISDIR ? ERR_NOINPUT : ERR_IOERR, path, 0, 0,
			     _("cannot read: %s"), strerror(er));
	close(fd);
	if (rc == ERR_OK)
		rc = doc_load(path, buf, len, out, e);
	free(buf);
	return rc;
}

void doc_free(struct doc **dp)
{
	if (!dp || !*dp)
		return;
	struct doc *d = *dp;
	while (d->chunks) {
		struct doc_chunk *c = d->chunks;
		d->chunks = c->next;
		free(c);
	}
	free(d->name);
	free(d->text);
	free(d);
	*dp = NULL;
}

const char *doc_text(const struct doc *d, size_t *len)
{
	if (len)
		*len = d->len;
	return d->text;
}

const char *doc_name(const struct doc *d)
{
	return d->name;
}

const struct doc_node *doc_root(const struct doc *d)
{
	return d ? d->root : NULL;
}

const struct doc_node *doc_deref(const struct doc_node *n)
{
	return n && n->kind == DOC_ALIAS ? n->target : n;
}

/* ---- lookups ---- */

static bool key_is(const struct doc_node *k, const char *key, size_t klen)
{
	k = doc_deref(k);
	return k && k->kind == DOC_SCALAR && k->value_len == klen && !memcmp(k->value, key, klen);
}

static bool is_merge_key(const struct doc_node *k)
{
	return k && k->kind == DOC_SCALAR && k->style == DOC_PLAIN && k->value_len == 2 &&
	       !memcmp(k->value, "<<", 2) &&
	       (!k->tag || !strcmp(k->tag, "tag:yaml.org,2002:merge"));
}

size_t doc_own_index(const struct doc_node *map, const char *key, size_t klen)
{
	map = doc_deref(map);
	if (!map || map->kind != DOC_MAP)
		return (size_t)-1;
	for (size_t i = map->n; i-- > 0;)
		if (!is_merge_key(map->keys[i]) && key_is(map->keys[i], key, klen))
			return i;
	return (size_t)-1;
}

/* Merge lookups can fan out through aliases (a "billion laughs" of merge keys); the budget
 * bounds the number of maps visited, the depth bounds the recursion. */
static const struct doc_node *map_find(const struct doc_node *map, const char *key, size_t klen,
				       size_t *budget, int depth)
{
	map = doc_deref(map);
	if (!map || map->kind != DOC_MAP || depth > DOC_MAX_DEPTH || *budget == 0)
		return NULL;
	(*budget)--;
	size_t i = doc_own_index(map, key, klen);
	if (i != (size_t)-1)
		return map->items[i];
	/* Earlier merge sources win over later ones, as in PyYAML. */
	for (size_t k = 0; k < map->n; k++) {
		if (!is_merge_key(map->keys[k]))
			continue;
		const struct doc_node *v = doc_deref(map->items[k]);
		if (!v)
			continue;
		if (v->kind == DOC_MAP) {
			const struct doc_node *r = map_find(v, key, klen, budget, depth + 1);
			if (r)
				return r;
		} else if (v->kind == DOC_SEQ) {
			for (size_t j = 0; j < v->n; j++) {
				const struct doc_node *r = map_find(v->items[j], key, klen, budget,
								    depth + 1);
				if (r)
					return r;
			}
		}
	}
	return NULL;
}

const struct doc_node *doc_map_getn(const struct doc_node *map, const char *key, size_t klen)
{
	size_t budget = 100000;
	return map_find(map, key, klen, &budget, 0);
}

const struct doc_node *doc_map_get(const struct doc_node *map, const char *key)
{
	return key ? doc_map_getn(map, key, strlen(key)) : NULL;
}

void doc_path_free(struct doc_pcomp *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].key);
	free(c);
}

int doc_path_parse(const char *path, struct doc_pcomp **out, size_t *nout, struct err *e)
{
	size_t n = 0, cap = 0;
	struct doc_pcomp *c = NULL;
	const char *p = path;
	*out = NULL;
	*nout = 0;
	if (!path || !*path)
		return err_set(e, ERR_USAGE, NULL, 0, 0, "%s", _("empty path"));
	while (*p) {
		if (!ARRAY_GROW(c, n + 1, cap)) {
			doc_path_free(c, n);
			return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
		}
		struct doc_pcomp *k = &c[n];
		memset(k, 0, sizeof *k);
		if (*p == '[') {
			char *end;
			errno = 0;
			if (p[1] < '0' || p[1] > '9')
				goto bad;
			unsigned long long v = strtoull(p + 1, &end, 10);
			if (errno || *end != ']')
				goto bad;
			k->is_index = true;
			k->index = (size_t)v;
			p = end + 1;
		} else {
			size_t cap2 = strlen(p) + 1, len = 0;
			k->key = malloc(cap2);
			if (!k->key) {
				doc_path_free(c, n);
				return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
			}
			if (*p == '"') {
				p++;
				while (*p && *p != '"') {
					if (*p == '\\' && p[1])
						p++;
					k->key[len++] = *p++;
				}
				if (*p != '"') {
					n++;
					goto bad;
				}
				p++;
			} else {
				while (*p && *p != '.' && *p != '[')
					k->key[len++] = *p++;
			}
			k->key[len] = '\0';
			k->klen = len;
			if (!len) {
				n++;
				goto bad;
			}
		}
		k->end = (size_t)(p - path);
		n++;
		if (*p == '.') {
			p++;
			if (!*p || *p == '.' || *p == '[')
				goto bad;
		} else if (*p && *p != '[') {
			goto bad;
		}
	}
	*out = c;
	*nout = n;
	return ERR_OK;
bad:
	doc_path_free(c, n);
	return err_set(e, ERR_USAGE, NULL, 0, 0, _("bad path '%s': use keys separated by dots and [N] "
						   "indices, e.g. config.process[0].train.lr"), path);
}

const struct doc_node *doc_get(const struct doc *d, const char *path)
{
	struct doc_pcomp *c;
	size_t n;
	if (!d || doc_path_parse(path, &c, &n, NULL) != ERR_OK)
		return NULL;
	const struct doc_node *cur = d->root;
	for (size_t i = 0; i < n && cur; i++) {
		cur = doc_deref(cur);
		if (c[i].is_index)
			cur = cur->kind == DOC_SEQ && c[i].index < cur->n ? cur->items[c[i].index] : NULL;
		else
			cur = doc_map_getn(cur, c[i].key, c[i].klen);
	}
	doc_path_free(c, n);
	return cur;
}

const struct doc_node *doc_get_nearest(const struct doc *d, const char *path, size_t *prefix_len)
{
	struct doc_pcomp *c;
	size_t n;
	*prefix_len = 0;
	if (!d || doc_path_parse(path, &c, &n, NULL) != ERR_OK)
		return NULL;
	const struct doc_node *cur = d->root;
	for (size_t i = 0; i < n; i++) {
		const struct doc_node *m = doc_deref(cur), *next;
		if (c[i].is_index)
			next = m->kind == DOC_SEQ && c[i].index < m->n ? m->items[c[i].index] : NULL;
		else
			next = doc_map_getn(m, c[i].key, c[i].klen);
		if (!next)
			break;
		cur = next;
		*prefix_len = c[i].end;
	}
	doc_path_free(c, n);
	return cur;
}

/* ---- scalar typing (YAML 1.1 as PyYAML, plus the trainer's float resolver) ---- */

static bool one_of(const char *s, size_t n, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == n && !memcmp(s, *words, n))
			return true;
	return false;
}

static const char *const true_words[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
static const char *const false_words[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const null_words[] = {"~", "null", "Null", "NULL", "", NULL};

static bool all_of(const char *s, size_t n, const char *set)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr(set, s[i]) || !s[i])
			return false;
	return true;
}

static bool match_int(const char *s, size_t n)
{
	size_t i = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	if (i >= n)
		return false;
	if (n - i > 2 && s[i] == '0' && s[i + 1] == 'b')
		return all_of(s + i + 2, n - i - 2, "01_");
	if (n - i > 2 && s[i] == '0' && s[i + 1] == 'x')
		return all_of(s + i + 2, n - i - 2, "0123456789abcdefABCDEF_");
	if (s[i] == '0')
		return n - i == 1 || all_of(s + i + 1, n - i - 1, "01234567_");
	return s[i] >= '1' && s[i] <= '9' && (n - i == 1 || all_of(s + i + 1, n - i - 1, "0123456789_"));
}

static size_t digits(const char *s, size_t n, size_t i, const char *set)
{
	while (i < n && s[i] && strchr(set, s[i]))
		i++;
	return i;
}

static bool match_float(const char *s, size_t n)
{
	size_t i = 0;
	if (n >= 4 && (one_of(s, n, (const char *const[]){".nan", ".NaN", ".NAN", NULL})))
		return true;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	if (one_of(s + i, n - i, (const char *const[]){".inf", ".Inf", ".INF", NULL}))
		return true;
	bool lead = i < n && s[i] >= '0' && s[i] <= '9';
	if (lead) {
		i = digits(s, n, i, "0123456789_");
		bool dot = i < n && s[i] == '.';
		if (dot)
			i = digits(s, n, i + 1, "0123456789_");
		if (i == n)
			return dot;
		if (s[i] != 'e' && s[i] != 'E')
			return false;
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		size_t j = digits(s, n, i, "0123456789");
		return j > i && j == n;
	}
	/* ".5" form: PyYAML allows no sign here and wants a signed exponent. */
	if (i != 0 || i >= n || s[i] != '.')
		return false;
	size_t j = digits(s, n, i + 1, "0123456789_");
	if (j == i + 1)
		return false;
	if (j == n)
		return true;
	if ((s[j] != 'e' && s[j] != 'E') || j + 1 >= n || (s[j + 1] != '-' && s[j + 1] != '+'))
		return false;
	size_t k = digits(s, n, j + 2, "0123456789");
	return k > j + 2 && k == n;
}

static enum doc_stype tag_type(const char *tag)
{
	static const char p[] = "tag:yaml.org,2002:";
	if (strncmp(tag, p, sizeof p - 1))
		return DOC_T_STR;
	tag += sizeof p - 1;
	if (!strcmp(tag, "null"))
		return DOC_T_NULL;
	if (!strcmp(tag, "bool"))
		return DOC_T_BOOL;
	if (!strcmp(tag, "int"))
		return DOC_T_INT;
	if (!strcmp(tag, "float"))
		return DOC_T_FLOAT;
	return DOC_T_STR;
}

enum doc_stype doc_scalar_type(const struct doc_node *n)
{
	n = doc_deref(n);
	if (!n || n->kind != DOC_SCALAR)
		return DOC_T_STR;
	if (n->tag)
		return tag_type(n->tag);
	if (n->style != DOC_PLAIN)
		return DOC_T_STR;
	const char *s = n->value;
	size_t len = n->value_len;
	if (one_of(s, len, null_words))
		return DOC_T_NULL;
	if (one_of(s, len, true_words) || one_of(s, len, false_words))
		return DOC_T_BOOL;
	if (match_int(s, len))
		return DOC_T_INT;
	if (match_float(s, len))
		return DOC_T_FLOAT;
	return DOC_T_STR;
}

bool doc_as_bool(const struct doc_node *n, bool *out)
{
	n = doc_deref(n);
	if (!n || n->kind != DOC_SCALAR || doc_scalar_type(n) != DOC_T_BOOL)
		return false;
	bool v = one_of(n->value, n->value_len, true_words);
	if (!v && !one_of(n->value, n->value_len, false_words))
		return false;
	if (out)
		*out = v;
	return true;
}

/* Copies the digits without underscores; false when they do not fit. */
static bool strip_us(const char *s, size_t n, char *buf, size_t cap)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_')
			continue;
		if (j + 1 >= cap)
			return false;
		buf[j++] = s[i];
	}
	buf[j] = '\0';
	return true;
}

bool doc_as_long(const struct doc_node *n, long long *out)
{
	n = doc_deref(n);
	if (!n || n->kind != DOC_SCALAR || doc_scalar_type(n) != DOC_T_INT)
		return false;
	char buf[128];
	if (!strip_us(n->value, n->value_len, buf, sizeof buf))
		return false;
	const char *p = buf;
	bool neg = false;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	int base = 10;
	if (p[0] == '0' && p[1] == 'x') {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && p[1] == 'b') {
		base = 2;
		p += 2;
	} else if (p[0] == '0' && p[1]) {
		base = 8;
		p += 1;
	}
	if (!*p)
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, base);
	if (errno || *end || (v > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u)))
		return false;
	if (out)
		*out = neg ? (long long)(0 - v) : (long long)v;
	return true;
}

bool doc_as_double(const struct doc_node *n, double *out)
{
	n = doc_deref(n);
	if (!n || n->kind != DOC_SCALAR)
		return false;
	enum doc_stype t = doc_scalar_type(n);
	if (t == DOC_T_INT) {
		long long v;
		if (!doc_as_long(n, &v))
			return false;
		if (out)
			*out = (double)v;
		return true;
	}
	if (t != DOC_T_FLOAT)
		return false;
	char buf[128];
	if (!strip_us(n->value, n->value_len, buf, sizeof buf))
		return false;
	const char *p = buf;
	double sign = 1;
	if (*p == '-' || *p == '+')
		sign = *p++ == '-' ? -1 : 1;
	double v;
	if (!strcasecmp(p, ".inf")) {
		v = INFINITY;
	} else if (!strcasecmp(p, ".nan")) {
		v = NAN;
	} else {
		char *end;
		errno = 0;
		v = strtod(p, &end);
		if (*end || end == p)
			return false;
	}
	if (out)
		*out = sign * v;
	return true;
}

bool doc_is_null(const struct doc_node *n)
{
	n = doc_deref(n);
	return n && n->kind == DOC_SCALAR && doc_scalar_type(n) == DOC_T_NULL;
}

/* ---- flow writer ---- */

static bool plain_type_is_str(const char *s, size_t len)
{
	struct doc_node tmp = {.kind = DOC_SCALAR, .style = DOC_PLAIN, .value = s, .value_len = len};
	return doc_scalar_type(&tmp) == DOC_T_STR;
}

bool doc_plain_ok(const char *s, size_t len, bool flow)
{
	if (!len || s[0] == ' ' || s[len - 1] == ' ')
		return false;
	if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) && s[0]) {
		/* "-x", "?x" and ":x" are plain when followed by a non-space (not in flow for ':'). */
		if (!(strchr("-?:", s[0]) && len > 1 && s[1] != ' ' && !(flow && strchr(",[]{}", s[1]))))
			return false;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			return false;
		if (c == ':' && (i + 1 == len || s[i + 1] == ' ' || (flow && strchr(",[]{}", s[i + 1]))))
			return false;
		if (c == '#' && i > 0 && s[i - 1] == ' ')
			return false;
		if (flow && strchr(",[]{}", c))
			return false;
		/* U+0085, U+2028, U+2029 and the BOM read as breaks or get dropped. */
		if (c == 0xC2 && i + 1 < len && (unsigned char)s[i + 1] == 0x85)
			return false;
		if (c == 0xE2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
		    ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9))
			return false;
		if (c == 0xEF && i + 2 < len && (unsigned char)s[i + 1] == 0xBB &&
		    (unsigned char)s[i + 2] == 0xBF)
			return false;
	}
	return plain_type_is_str(s, len) && strncmp(s, "---", 3) && strncmp(s, "...", 3);
}

struct flow_ctx {
	struct strbuf b;
	size_t budget;
	bool truncated;
};

static void flow_scalar(struct flow_ctx *f, const struct doc_node *n)
{
	enum doc_stype t = doc_scalar_type(n);
	if (t == DOC_T_NULL && !(n->style == DOC_PLAIN && !n->tag && n->value_len))
		strbuf_adds(&f->b, "null");
	else if (t != DOC_T_STR && n->style == DOC_PLAIN && !n->tag)
		strbuf_add(&f->b, n->value, n->value_len);
	else if (t == DOC_T_STR && doc_plain_ok(n->value, n->value_len, true))
		strbuf_add(&f->b, n->value, n->value_len);
	else if (t == DOC_T_STR)
		doc_buf_dquote(&f->b, n->value, n->value_len);
	else if (t == DOC_T_NULL)
		strbuf_adds(&f->b, "null");
	else
		strbuf_add(&f->b, n->value, n->value_len); /* a tagged number or boolean */
}

static void flow_node(struct flow_ctx *f, const struct doc_node *n, int depth);

static void flow_pair(struct flow_ctx *f, const struct doc_node *k, const struct doc_node *v,
		      bool *first, int depth)
{
	if (!*first)
		strbuf_adds(&f->b, ", ");
	*first = false;
	flow_node(f, k, depth + 1);
	strbuf_adds(&f->b, ": ");
	flow_node(f, v, depth + 1);
}

/* Collects a map's pairs as the trainer sees them: merged pairs first (earlier sources win),
 * then the map's own, a later duplicate replacing an earlier value in its first position. */
struct pairs {
	const struct doc_node **k, **v;
	size_t n, cap;
};

static bool pairs_add(struct flow_ctx *f, struct pairs *p, const struct doc_node *k,
		      const struct doc_node *v)
{
	const struct doc_node *kd = doc_deref(k);
	for (size_t i = 0; kd && kd->kind == DOC_SCALAR && i < p->n; i++) {
		if (!f->budget) {
			f->truncated = true;
			return false;
		}
		f->budget--;
		const struct doc_node *o = doc_deref(p->k[i]);
		if (o && o->kind == DOC_SCALAR && o->value_len == kd->value_len &&
		    !memcmp(o->value, kd->value, kd->value_len)) {
			p->v[i] = v;
			return true;
		}
	}
	size_t ck = p->cap, cv = p->cap; /* two arrays, one length: both grow alike */
	if (!ARRAY_GROW(p->k, p->n + 1, ck) || !ARRAY_GROW(p->v, p->n + 1, cv))
		return false;
	p->cap = ck;
	p->k[p->n] = k;
	p->v[p->n++] = v;
	return true;
}

static bool collect_pairs(struct flow_ctx *f, struct pairs *p, const struct doc_node *m, int depth)
{
	m = doc_deref(m);
	if (!m || m->kind != DOC_MAP || depth > DOC_MAX_DEPTH) {
		f->truncated = f->truncated || (m && depth > DOC_MAX_DEPTH);
		return !f->truncated;
	}
	/* PyYAML applies merge sources last-listed first, so the first listed wins. */
	for (size_t i = 0; i < m->n; i++) {
		if (!is_merge_key(m->keys[i]))
			continue;
		const struct doc_node *v = doc_deref(m->items[i]);
		if (v && v->kind == DOC_SEQ) {
			for (size_t j = v->n; j-- > 0;)
				if (!collect_pairs(f, p, v->items[j], depth + 1))
					return false;
		} else if (!collect_pairs(f, p, v, depth + 1)) {
			return false;
		}
	}
	for (size_t i = 0; i < m->n; i++)
		if (!is_merge_key(m->keys[i]) && !pairs_add(f, p, m->keys[i], m->items[i]))
			return false;
	return true;
}

static bool has_merge(const struct doc_node *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (is_merge_key(m->keys[i]))
			return true;
	return false;
}

static void flow_node(struct flow_ctx *f, const struct doc_node *n, int depth)
{
	if (f->truncated)
		return;
	if (!f->budget || depth > DOC_MAX_DEPTH || f->b.len > DOC_MAX_BYTES) {
		f->truncated = true;
		return;
	}
	f->budget--;
	n = doc_deref(n);
	if (!n) {
		strbuf_adds(&f->b, "null");
		return;
	}
	bool first = true;
	switch (n->kind) {
	case DOC_SCALAR:
		flow_scalar(f, n);
		break;
	case DOC_SEQ:
		strbuf_adds(&f->b, "[");
		for (size_t i = 0; i < n->n && !f->truncated; i++) {
			if (i)
				strbuf_adds(&f->b, ", ");
			flow_node(f, n->items[i], depth + 1);
		}
		strbuf_adds(&f->b, "]");
		break;
	case DOC_MAP:
		strbuf_adds(&f->b, "{");
		if (has_merge(n)) {
			struct pairs p = {0};
			if (collect_pairs(f, &p, n, depth))
				for (size_t i = 0; i < p.n && !f->truncated; i++)
					flow_pair(f, p.k[i], p.v[i], &first, depth);
			free(p.k);
			free(p.v);
		} else {
			for (size_t i = 0; i < n->n && !f->truncated; i++)
				flow_pair(f, n->keys[i], n->items[i], &first, depth);
		}
		strbuf_adds(&f->b, "}");
		break;
	case DOC_ALIAS:
		break;
	}
}

char *doc_to_flow_bounded(const struct doc_node *n, size_t max_nodes, bool *truncated)
{
	struct flow_ctx f = {.budget = max_nodes};
	const struct doc_node *d = doc_deref(n);
	if (d && d->kind == DOC_SCALAR) {
		/* At the top the trainer sees the decoded string itself. */
		if (doc_scalar_type(d) == DOC_T_NULL)
			strbuf_adds(&f.b, "null");
		else
			strbuf_add(&f.b, d->value, d->value_len);
	} else {
		flow_node(&f, n, 0);
	}
	if (f.truncated)
		strbuf_adds(&f.b, " ...");
	if (truncated)
		*truncated = f.truncated;
	return strbuf_steal(&f.b, NULL);
}

char *doc_to_flow(const struct doc_node *n)
{
	return doc_to_flow_bounded(n, 1000000, NULL);
}

/* ---- equality ---- */

struct eq_ctx {
	size_t budget;
};

static bool scalar_equal(const struct doc_node *a, const struct doc_node *b)
{
	enum doc_stype ta = doc_scalar_type(a), tb = doc_scalar_type(b);
	if (ta != tb)
		return false;
	switch (ta) {
	case DOC_T_NULL:
		return true;
	case DOC_T_BOOL: {
		bool x = false, y = false;
		doc_as_bool(a, &x);
		doc_as_bool(b, &y);
		return x == y;
	}
	case DOC_T_INT: {
		long long x, y;
		if (doc_as_long(a, &x) && doc_as_long(b, &y))
			return x == y;
		break;
	}
	case DOC_T_FLOAT: {
		double x, y;
		if (doc_as_double(a, &x) && doc_as_double(b, &y))
			return x == y || (isnan(x) && isnan(y));
		break;
	}
	case DOC_T_STR:
		break;
	}
	return a->value_len == b->value_len && !memcmp(a->value, b->value, a->value_len);
}

static bool node_eq(struct eq_ctx *c, const struct doc_node *a, const struct doc_node *b, int depth)
{
	a = doc_deref(a);
	b = doc_deref(b);
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || !c->budget || depth > DOC_MAX_DEPTH)
		return false;
	c->budget--;
	if (a->kind == DOC_SCALAR)
		return scalar_equal(a, b);
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		if (a->kind == DOC_MAP && !node_eq(c, a->keys[i], b->keys[i], depth + 1))
			goto unordered;
		if (!node_eq(c, a->items[i], b->items[i], depth + 1))
			return false;
	}
	return true;
unordered:
	/* Maps with the same pairs in another order are equal too. */
	for (size_t i = 0; i < a->n; i++) {
		size_t j;
		for (j = 0; j < b->n; j++) {
			if (!c->budget)
				return false;
			if (node_eq(c, a->keys[i], b->keys[j], depth + 1))
				break;
		}
		if (j == b->n || !node_eq(c, a->items[i], b->items[j], depth + 1))
			return false;
	}
	return true;
}

bool doc_node_equal(const struct doc_node *a, const struct doc_node *b)
{
	struct eq_ctx c = {.budget = 4000000};
	return node_eq(&c, a, b, 0);
}
