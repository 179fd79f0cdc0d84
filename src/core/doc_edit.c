/* doc_edit.c — edits as splices of the original text, each one re-parsed and verified.
 *
 * What an edit writes:
 *  - SET on a scalar replaces only the scalar's bytes (after any &anchor or !tag); a quoted
 *    string stays quoted in the same style when the new value is a plain string; the rest of the
 *    line (the comment) is kept; SET_MARKED (a fix's edit) makes it "# oomfix: was OLD;
 *    comment", so it cannot lie about the new value (REMOVE_ITEM_MARKED does the same for a
 *    one-line flow list, OLD being the whole list). A block scalar (| or >) is replaced by a one-line value; blank
 *    lines after it are kept.
 *  - SET on a flow collection replaces the brackets and what is inside them.
 *  - SET on a block collection that is a mapping value writes the new value in flow form on the
 *    key's line (before the key line's comment) and removes the block's lines; comments inside
 *    the block and on its last line go with it, comment lines after the block stay.
 *  - SET of a missing key appends a line with the siblings' indentation after the last sibling
 *    (and after comment lines indented deeper than the siblings, which belong to that sibling's
 *    content), before blank lines and comments that belong to what follows. Missing
 *    intermediate mappings are created as nested lines two spaces deeper. In a flow mapping the
 *    pair is added before the closing brace.
 *  - APPEND_ITEM adds "- value" after a block sequence's last item at its indentation, or
 *    ", value" before a flow sequence's closing bracket.
 *  - REMOVE_KEY / REMOVE_ITEM remove the pair's or item's lines in block style, or the entry
 *    and its comma in flow style. Removing the last entry of a block collection is refused
 *    because the key would become null.
 * New lines use the file's line break (CRLF when its first line break is CRLF). Anything that
 * does not fit these shapes (tabs in an indentation, an item on a line after its dash, editing
 * through an alias) is refused with a message rather than guessed. */
#include <stdlib.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/i18n.h"
#include "doc_priv.h"

#define NOPOS ((size_t)-1)

enum change_kind { CH_NONE, CH_REPLACE, CH_INSERT, CH_REMOVE };

/* What the edit is supposed to change, in raw tree positions (pair or item indices). */
struct change {
	enum change_kind kind;
	size_t steps[DOC_MAX_DEPTH + 1];
	size_t nsteps; /* steps to the replaced node, or to the container for insert/remove */
	size_t index;  /* the removed entry for CH_REMOVE */
};

struct splice {
	size_t a, b;         /* replace text[a, b) */
	struct strbuf ins;  /* with this */
};

/* ---- text helpers ---- */

static size_t line_start(const struct doc *d, size_t p)
{
	while (p > d->bom && d->text[p - 1] != '\n')
		p--;
	return p;
}

/* Position of the line break that ends the line holding p (or the end of the text). */
static size_t eol(const struct doc *d, size_t p)
{
	const char *nl = memchr(d->text + p, '\n', d->len - p);
	if (!nl)
		return d->len;
	size_t q = (size_t)(nl - d->text);
	return q > p && d->text[q - 1] == '\r' ? q - 1 : q;
}

/* Start of the next line after the one holding p (or the end of the text). */
static size_t next_line(const struct doc *d, size_t p)
{
	const char *nl = memchr(d->text + p, '\n', d->len - p);
	return nl ? (size_t)(nl - d->text) + 1 : d->len;
}

/* True when only blanks and perhaps a comment follow p on its line. */
static bool rest_is_comment(const struct doc *d, size_t p)
{
	size_t e = eol(d, p);
	while (p < e && (d->text[p] == ' ' || d->text[p] == '\t'))
		p++;
	return p == e || d->text[p] == '#';
}

static bool all_spaces(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ')
			return false;
	return true;
}

/* Where a node's content really ends: a block scalar ends at the start of the line after it. */
static size_t content_end(const struct doc_node *n)
{
	return n->span.end;
}

/* The position after the line that holds the end of node n's content, or NOPOS when something
 * other than a comment follows it on that line. */
static size_t after_content_line(const struct doc *d, const struct doc_node *n)
{
	size_t ce = content_end(n);
	if (ce > d->bom && d->text[ce - 1] == '\n')
		return ce;
	if (!rest_is_comment(d, ce))
		return NOPOS;
	return next_line(d, ce);
}

static const char *nl_of(const struct doc *d)
{
	return d->crlf ? "\r\n" : "\n";
}

static int err_at(struct err *e, const struct doc *d, const struct doc_node *n, int code,
		  const char *path, const char *what)
{
	return err_set(e, code, doc_name(d), n ? n->span.line : 0, n ? n->span.col : 0, "%s: %s",
		       path, what);
}

/* ---- values ---- */

struct value {
	struct doc *vdoc;
	const struct doc_node *root;
	struct strbuf text; /* one line of YAML to write */
};

static void value_free(struct value *v)
{
	doc_free(&v->vdoc);
	free(v->text.p);
	memset(v, 0, sizeof *v);
}

static int value_parse(const char *path, const char *src, struct value *v, struct err *e)
{
	memset(v, 0, sizeof *v);
	if (!src || !*src)
		src = "null";
	struct err ve;
	err_clear(&ve);
	if (doc_load("value", src, strlen(src), &v->vdoc, &ve) != ERR_OK)
		return err_set(e, ERR_DATA, NULL, 0, 0, _("%s: the value is not valid YAML: %s"), path,
			       ve.msg);
	v->root = doc_root(v->vdoc);
	const struct doc_node *r = v->root;
	size_t tl;
	const char *t = doc_text(v->vdoc, &tl);
	if (r->kind == DOC_SCALAR && r->style != DOC_LITERAL && r->style != DOC_FOLDED &&
	    !memchr(t + r->span.start, '\n', r->span.end - r->span.start) &&
	    !memchr(t + r->span.start, '\r', r->span.end - r->span.start) &&
	    r->span.end > r->span.start) {
		/* Write what the caller wrote (keeps `1e-4` as `1e-4`), without a comment. */
		strbuf_add(&v->text, t + r->span.start, r->span.end - r->span.start);
	} else if (r->kind == DOC_SCALAR && doc_scalar_type(r) == DOC_T_STR) {
		doc_buf_dquote(&v->text, r->value, r->value_len);
	} else if (r->kind == DOC_SCALAR && doc_scalar_type(r) == DOC_T_NULL) {
		strbuf_adds(&v->text, "null");
	} else {
		bool trunc = false;
		char *f = doc_to_flow_bounded(r, 100000, &trunc);
		if (!f || trunc) {
			free(f);
			value_free(v);
			return err_set(e, ERR_DATA, NULL, 0, 0, _("%s: the value is too large"), path);
		}
		strbuf_adds(&v->text, f);
		free(f);
	}
	if (v->text.oom) {
		value_free(v);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	return ERR_OK;
}

static void put_key(struct strbuf *b, const char *k, size_t n, bool flow)
{
	if (doc_plain_ok(k, n, flow))
		strbuf_add(b, k, n);
	else
		doc_buf_dquote(b, k, n);
}

static void put_squote(struct strbuf *b, const char *s, size_t n)
{
	strbuf_add(b, "'", 1);
	for (size_t i = 0; i < n; i++)
		strbuf_add(b, s[i] == '\'' ? "''" : s + i, s[i] == '\'' ? 2 : 1);
	strbuf_add(b, "'", 1);
}

static bool has_ctl(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

/* The text to put where the old scalar or flow collection was. */
static void scalar_text(struct strbuf *b, const struct doc_node *old, const struct value *v)
{
	const struct doc_node *r = v->root;
	const struct dnode *xo = (const struct dnode *)old;
	bool plain_str = r->kind == DOC_SCALAR && r->style == DOC_PLAIN && !r->tag &&
			 doc_scalar_type(r) == DOC_T_STR;
	if (plain_str && old->kind == DOC_SCALAR && old->style == DOC_SQUOTED &&
	    !has_ctl(r->value, r->value_len))
		put_squote(b, r->value, r->value_len);
	else if (plain_str && old->kind == DOC_SCALAR && old->style == DOC_DQUOTED)
		doc_buf_dquote(b, r->value, r->value_len);
	else if (plain_str && xo->flow_ctx && !doc_plain_ok(r->value, r->value_len, true))
		doc_buf_dquote(b, r->value, r->value_len);
	else
		strbuf_add(b, v->text.p, v->text.len);
}

/* ---- the edits ---- */

/* Replaces the value of an existing node (pair or item). */
/* A comment after a value that changes may now say something false ("# all three buckets"):
 * it gets "oomfix: was OLD; " in front, OLD being the value as it was written. Only for a value
 * on one line followed by its comment; a comment that already says so is left alone, so it
 * keeps the value from before oomfix first changed it. */
static void annotate_comment(const struct doc *d, struct splice *sp)
{
	static const char mark[] = "oomfix: was ";
	size_t a = sp->a, b = sp->b, le = eol(d, b), c = b;
	if (a >= b || memchr(d->text + a, '\n', b - a))
		return;
	while (c < le && (d->text[c] == ' ' || d->text[c] == '\t'))
		c++;
	if (c == b || c >= le || d->text[c] != '#')
		return;
	size_t t = c + 1;
	while (t < le && d->text[t] == ' ')
		t++;
	if (le - t >= sizeof mark - 1 && !memcmp(d->text + t, mark, sizeof mark - 1))
		return;
	sp->b = le;
	strbuf_add(&sp->ins, d->text + b, c - b);
	strbuf_adds(&sp->ins, "# ");
	strbuf_adds(&sp->ins, mark);
	strbuf_add(&sp->ins, d->text + a, b - a);
	strbuf_adds(&sp->ins, "; ");
	strbuf_add(&sp->ins, d->text + t, le - t);
}

static int edit_replace(const struct doc *d, const struct doc_node *parent, size_t idx,
			const struct doc_node *old, const struct value *v, const char *path, bool mark,
			struct splice *sp, struct err *e)
{
	const struct dnode *xo = (const struct dnode *)old;
	if (old->kind == DOC_SCALAR || old->kind == DOC_ALIAS ||
	    (old->style == DOC_FLOW && old->kind != DOC_SCALAR)) {
		size_t a = old->kind == DOC_ALIAS ? old->span.start : xo->vstart;
		size_t b = old->span.end;
		if (old->kind == DOC_SCALAR && (old->style == DOC_LITERAL || old->style == DOC_FOLDED)) {
			/* Keep the blank lines after the block, drop its content lines. */
			bool nl_end = b > a && d->text[b - 1] == '\n';
			while (nl_end && b > a) {
				size_t ls = line_start(d, b - 1);
				if (ls <= a || !all_spaces(d->text + ls, eol(d, ls) - ls))
					break;
				b = ls;
			}
			if (b > a && d->text[b - 1] == '\n')
				b -= b - 1 > a && d->text[b - 2] == '\r' ? 2 : 1;
		}
		sp->a = a;
		sp->b = b;
		if (old->kind == DOC_SCALAR && a == b) {
			/* An empty value ("key:"): libyaml puts it right after the colon. */
			if (a == 0 || d->text[a - 1] != ':')
				return err_at(e, d, old, ERR_DATA, path,
					      _("cannot place a value here; write it by hand"));
			strbuf_adds(&sp->ins, " ");
		}
		scalar_text(&sp->ins, old, v);
		if (mark)
			annotate_comment(d, sp);
		return ERR_OK;
	}
	/* A block collection: only as a value in a block mapping. */
	if (!parent || parent->kind != DOC_MAP || parent->style != DOC_BLOCK)
		return err_at(e, d, old, ERR_DATA, path,
			      _("cannot replace a block collection that is not a mapping value"));
	const struct doc_node *key = parent->keys[idx];
	size_t p = key->span.end;
	while (p < d->len && d->text[p] == ' ')
		p++;
	if (p >= d->len || d->text[p] != ':')
		return err_at(e, d, key, ERR_DATA, path, _("cannot find the colon after this key"));
	p++;
	size_t le = eol(d, p), q = p;
	/* Keep an &anchor or !tag written after the colon. */
	for (size_t r = p;;) {
		while (r < le && d->text[r] == ' ')
			r++;
		if (r < le && (d->text[r] == '&' || d->text[r] == '!')) {
			while (r < le && d->text[r] != ' ')
				r++;
			q = r;
			continue;
		}
		if (r < le && d->text[r] != '#')
			return err_at(e, d, key, ERR_DATA, path,
				      _("unexpected text after this key; edit it by hand"));
		break;
	}
	size_t after = after_content_line(d, old);
	if (after == NOPOS)
		return err_at(e, d, old, ERR_DATA, path, _("text follows this value on its line"));
	/* Remove from the key line's break to the break that ends the block's last line. */
	size_t last_break = after;
	if (last_break > 0 && d->text[last_break - 1] == '\n') {
		last_break--;
		if (last_break > 0 && d->text[last_break - 1] == '\r')
			last_break--;
	}
	if (last_break < le)
		return err_at(e, d, old, ERR_DATA, path, _("unexpected layout; edit it by hand"));
	sp->a = q;
	sp->b = last_break;
	strbuf_adds(&sp->ins, " ");
	strbuf_add(&sp->ins, v->text.p, v->text.len);
	strbuf_add(&sp->ins, d->text + q, le - q);
	return ERR_OK;
}

/* Adds key path comps[0..nc) with the value to a flow mapping ({...}, or JSON). */
static int insert_flow(const struct doc *d, const struct doc_node *map, const struct doc_pcomp *c,
		       size_t nc, const struct value *v, const char *path, struct splice *sp,
		       struct err *e)
{
	const struct dnode *xm = (const struct dnode *)map;
	size_t at;
	/* Keys in double quotes are JSON (the trainer also reads .json jobs, with a JSON
	 * parser): new keys follow suit so the file stays JSON. */
	bool dq = map->n > 0 && map->keys[map->n - 1]->style == DOC_DQUOTED;
	/* Compact JSON (the web UI's job_config: `"key":value` with no spaces) stays compact. */
	bool compact = dq && map->keys[map->n - 1]->span.end + 1 ==
				     map->items[map->n - 1]->span.start &&
		       d->text[map->keys[map->n - 1]->span.end] == ':';
	if (map->n == 0) {
		at = xm->vstart + 1;
		if (at > map->span.end || d->text[at - 1] != '{')
			return err_at(e, d, map, ERR_DATA, path, _("unexpected layout; edit it by hand"));
	} else {
		at = map->items[map->n - 1]->span.end;
		/* One pair per line (pretty-printed JSON): a new line at the siblings' column. */
		size_t ks = map->keys[map->n - 1]->span.start, ls = line_start(d, ks);
		if (all_spaces(d->text + ls, ks - ls)) {
			strbuf_adds(&sp->ins, ",");
			strbuf_adds(&sp->ins, nl_of(d));
			strbuf_add(&sp->ins, d->text + ls, ks - ls);
		} else {
			strbuf_adds(&sp->ins, compact ? "," : ", ");
		}
	}
	for (size_t i = 0; i < nc; i++) {
		if (dq)
			doc_buf_dquote(&sp->ins, c[i].key, c[i].klen);
		else
			put_key(&sp->ins, c[i].key, c[i].klen, true);
		strbuf_adds(&sp->ins, i + 1 < nc ? (compact ? ":{" : ": {")
						  : (compact ? ":" : ": "));
	}
	if (dq && v->root->kind == DOC_SCALAR && doc_scalar_type(v->root) == DOC_T_STR)
		doc_buf_dquote(&sp->ins, v->root->value, v->root->value_len); /* JSON strings */
	else
		strbuf_add(&sp->ins, v->text.p, v->text.len);
	for (size_t i = 1; i < nc; i++)
		strbuf_adds(&sp->ins, "}");
	sp->a = sp->b = at;
	return ERR_OK;
}

/* The siblings' indentation, from the last key that starts its line plainly (a "- " before the
 * first key of a list item counts as indentation; "? " or a tab does not); NOPOS when none
 * does. */
static size_t keys_indent(const struct doc *d, const struct doc_node *map)
{
	size_t indent = NOPOS;
	for (size_t k = map->n; k-- > 0 && indent == NOPOS;) {
		size_t ks = map->keys[k]->span.start, ls = line_start(d, ks), i;
		for (i = ls; i < ks && (d->text[i] == ' ' || d->text[i] == '-'); i++)
			;
		if (i == ks)
			indent = ks - ls;
	}
	return indent;
}

/* Where a new key goes, from `at`, the line after the mapping's last value. */
static size_t insert_point(const struct doc *d, const struct doc_node *map, size_t at,
			   size_t indent)
{
	/* Blank lines that end a clipped or stripped block scalar are not its value: insert
	 * before them, so they keep separating the mapping from what follows. */
	const struct doc_node *lv = map->items[map->n - 1];
	if (lv->kind == DOC_SCALAR && (lv->style == DOC_LITERAL || lv->style == DOC_FOLDED)) {
		const struct dnode *xl = (const struct dnode *)lv;
		size_t h = xl->vstart + 1, he = eol(d, xl->vstart);
		bool keep = false;
		for (; h < he && d->text[h] != ' ' && d->text[h] != '#'; h++)
			keep = keep || d->text[h] == '+';
		while (!keep && at > he) {
			size_t pls = line_start(d, at - 1);
			if (pls <= he || !all_spaces(d->text + pls, eol(d, pls) - pls))
				break;
			at = pls;
		}
	}
	/* Comment lines indented deeper than the siblings belong to the last sibling's content. */
	while (at < d->len) {
		size_t p = at, le = eol(d, at);
		while (p < le && d->text[p] == ' ')
			p++;
		if (p < le && d->text[p] == '#' && p - at > indent)
			at = next_line(d, at);
		else
			break;
	}
	return at;
}

/* Adds key path comps[0..nc) with the value to a mapping that lacks comps[0]. */
static int edit_insert(const struct doc *d, const struct doc_node *map, const struct doc_pcomp *c,
		       size_t nc, const struct value *v, const char *path, struct splice *sp,
		       struct err *e)
{
	for (size_t i = 0; i < nc; i++)
		if (c[i].is_index)
			return err_at(e, d, map, ERR_DATA, path,
				      _("cannot create a list item; only missing keys can be added"));
	if (map->style == DOC_FLOW)
		return insert_flow(d, map, c, nc, v, path, sp, e);
	if (map->n == 0)
		return err_at(e, d, map, ERR_DATA, path, _("unexpected layout; edit it by hand"));
	size_t indent = keys_indent(d, map);
	if (indent == NOPOS)
		return err_at(e, d, map->keys[map->n - 1], ERR_DATA, path,
			      _("cannot tell the indentation of this mapping's keys (tabs or other "
				"text before them); edit it by hand"));
	size_t at = after_content_line(d, map->items[map->n - 1]);
	if (at == NOPOS)
		return err_at(e, d, map->items[map->n - 1], ERR_DATA, path,
			      _("text follows this value on its line"));
	at = insert_point(d, map, at, indent);
	const char *nl = nl_of(d);
	if (at == d->len && d->len > d->bom && d->text[d->len - 1] != '\n')
		strbuf_adds(&sp->ins, nl);
	for (size_t i = 0; i < nc; i++) {
		for (size_t k = 0; k < indent + 2 * i; k++)
			strbuf_add(&sp->ins, " ", 1);
		put_key(&sp->ins, c[i].key, c[i].klen, false);
		strbuf_adds(&sp->ins, ":");
		if (i + 1 == nc) {
			strbuf_adds(&sp->ins, " ");
			strbuf_add(&sp->ins, v->text.p, v->text.len);
		}
		if (!(at == d->len && d->len > d->bom && d->text[d->len - 1] != '\n' && i + 1 == nc))
			strbuf_adds(&sp->ins, nl);
	}
	sp->a = sp->b = at;
	return ERR_OK;
}

/* Appends an item to a sequence: "- value" on a new line at the items' indentation (block), or
 * ", value" before the closing bracket (flow; on a line of its own when the items are). */
static int edit_append(const struct doc *d, const struct doc_node *seq, const struct value *v,
		       const char *path, struct splice *sp, struct err *e)
{
	const struct dnode *xs = (const struct dnode *)seq;
	if (seq->style == DOC_FLOW) {
		if (seq->n == 0) {
			size_t at = xs->vstart + 1;
			if (at > seq->span.end || d->text[at - 1] != '[')
				return err_at(e, d, seq, ERR_DATA, path, _("unexpected layout; edit it by hand"));
			sp->a = sp->b = at;
			strbuf_add(&sp->ins, v->text.p, v->text.len);
			return ERR_OK;
		}
		const struct doc_node *last = seq->items[seq->n - 1];
		size_t ls = line_start(d, last->span.start);
		strbuf_adds(&sp->ins, ",");
		if (all_spaces(d->text + ls, last->span.start - ls)) {
			strbuf_adds(&sp->ins, nl_of(d));
			strbuf_add(&sp->ins, d->text + ls, last->span.start - ls);
		} else if (!(seq->n > 1 && last->span.start > 0 && d->text[last->span.start - 1] == ',')) {
			strbuf_adds(&sp->ins, " "); /* compact "[1,2]" stays compact */
		}
		strbuf_add(&sp->ins, v->text.p, v->text.len);
		sp->a = sp->b = last->span.end;
		return ERR_OK;
	}
	/* Block: copy the last item's "  - " prefix; its dash must start its line. */
	const struct doc_node *last = seq->items[seq->n - 1];
	size_t p = last->span.start;
	while (p > d->bom && d->text[p - 1] == ' ')
		p--;
	size_t ls = line_start(d, p ? p - 1 : 0);
	if (p == d->bom || d->text[p - 1] != '-' || !all_spaces(d->text + ls, p - 1 - ls))
		return err_at(e, d, last, ERR_DATA, path,
			      _("cannot find this item's dash on its line; edit it by hand"));
	size_t at = after_content_line(d, last);
	if (at == NOPOS)
		return err_at(e, d, last, ERR_DATA, path, _("text follows this value on its line"));
	bool no_final_nl = at == d->len && d->len > d->bom && d->text[d->len - 1] != '\n';
	if (no_final_nl)
		strbuf_adds(&sp->ins, nl_of(d));
	strbuf_add(&sp->ins, d->text + ls, last->span.start - ls); /* "    - " */
	strbuf_add(&sp->ins, v->text.p, v->text.len);
	if (!no_final_nl)
		strbuf_adds(&sp->ins, nl_of(d));
	sp->a = sp->b = at;
	return ERR_OK;
}

/* Removes entry i of a collection (a pair of a mapping or an item of a sequence). */
static int edit_remove(const struct doc *d, const struct doc_node *coll, size_t i, const char *path,
		       bool mark, struct splice *sp, struct err *e)
{
	const struct doc_node *first = coll->kind == DOC_MAP ? coll->keys[i] : coll->items[i];
	const struct doc_node *val = coll->items[i];
	if (coll->style == DOC_FLOW) {
		if (coll->n == 1) {
			sp->a = first->span.start;
			sp->b = val->span.end;
		} else if (i + 1 < coll->n) {
			sp->a = first->span.start;
			sp->b = coll->kind == DOC_MAP ? coll->keys[i + 1]->span.start
						      : coll->items[i + 1]->span.start;
		} else {
			sp->a = coll->items[i - 1]->span.end;
			sp->b = val->span.end;
		}
		if (mark) {
			/* The whole list becomes the splice, so that the comment after it can say
			 * what it was. */
			size_t ca = ((const struct dnode *)coll)->vstart, cb = coll->span.end;
			if (ca <= sp->a && sp->b <= cb) {
				strbuf_add(&sp->ins, d->text + ca, sp->a - ca);
				strbuf_add(&sp->ins, d->text + sp->b, cb - sp->b);
				sp->a = ca;
				sp->b = cb;
				annotate_comment(d, sp);
			}
		}
		return ERR_OK;
	}
	if (coll->n == 1)
		return err_at(e, d, first, ERR_DATA, path,
			      _("this is the only entry of a block collection; removing it would leave "
				"an empty value"));
	size_t start = first->span.start;
	if (coll->kind == DOC_SEQ) {
		/* The item's dash must be on the item's own line. */
		size_t p = start;
		while (p > d->bom && d->text[p - 1] == ' ')
			p--;
		if (p == d->bom || d->text[p - 1] != '-')
			return err_at(e, d, first, ERR_DATA, path,
				      _("cannot find this item's dash on its line; edit it by hand"));
		start = p - 1;
	}
	size_t ls = line_start(d, start);
	size_t after = after_content_line(d, val);
	if (after == NOPOS)
		return err_at(e, d, val, ERR_DATA, path, _("text follows this value on its line"));
	if (all_spaces(d->text + ls, start - ls)) {
		sp->a = ls;
		sp->b = after;
		return ERR_OK;
	}
	/* The first pair of a list item ("- a: 1"): the next pair moves up behind the dash. */
	if (coll->kind == DOC_MAP && i + 1 < coll->n) {
		const struct doc_node *nk = coll->keys[i + 1];
		size_t nls = line_start(d, nk->span.start);
		if (all_spaces(d->text + nls, nk->span.start - nls)) {
			sp->a = first->span.start;
			sp->b = nk->span.start;
			return ERR_OK;
		}
	}
	return err_at(e, d, first, ERR_DATA, path,
		      _("other text shares this entry's line; edit it by hand"));
}

/* ---- verification ---- */

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Structural equality without following aliases: linear in the tree size, so an alias bomb
 * costs nothing. */
static bool raw_equal(const struct doc_node *a, const struct doc_node *b, int depth)
{
	if (!a || !b || a->kind != b->kind || depth > DOC_MAX_DEPTH + 1 || a->n != b->n)
		return false;
	if (!str_eq(a->anchor, b->anchor) || !str_eq(a->tag, b->tag))
		return false;
	if (a->kind == DOC_ALIAS)
		return true;
	if (a->kind == DOC_SCALAR)
		return doc_node_equal(a, b);
	for (size_t i = 0; i < a->n; i++) {
		if (a->kind == DOC_MAP && !raw_equal(a->keys[i], b->keys[i], depth + 1))
			return false;
		if (!raw_equal(a->items[i], b->items[i], depth + 1))
			return false;
	}
	return true;
}

/* Everything equal except what the change describes; *edited gets the new tree's node at the
 * change (the replaced node, or the container). */
static bool same_except(const struct doc_node *a, const struct doc_node *b, const struct change *ch,
			size_t step, const struct doc_node **edited)
{
	if (!a || !b)
		return false;
	if (step == ch->nsteps) {
		*edited = b;
		if (ch->kind == CH_REPLACE)
			return a->kind == DOC_ALIAS || str_eq(a->anchor, b->anchor);
		if (a->kind != b->kind || !str_eq(a->anchor, b->anchor) || !str_eq(a->tag, b->tag))
			return false;
		if (ch->kind == CH_INSERT) {
			if (b->n != a->n + 1)
				return false;
			for (size_t i = 0; i < a->n; i++)
				if ((a->kind == DOC_MAP && !raw_equal(a->keys[i], b->keys[i], 0)) ||
				    !raw_equal(a->items[i], b->items[i], 0))
					return false;
			return true;
		}
		if (b->n + 1 != a->n)
			return false;
		for (size_t i = 0, j = 0; i < a->n; i++) {
			if (i == ch->index)
				continue;
			if ((a->kind == DOC_MAP && !raw_equal(a->keys[i], b->keys[j], 0)) ||
			    !raw_equal(a->items[i], b->items[j], 0))
				return false;
			j++;
		}
		return true;
	}
	if (a->kind != b->kind || a->n != b->n || !str_eq(a->anchor, b->anchor) ||
	    !str_eq(a->tag, b->tag) || a->kind == DOC_SCALAR || a->kind == DOC_ALIAS)
		return false;
	size_t k = ch->steps[step];
	for (size_t i = 0; i < a->n; i++) {
		if (a->kind == DOC_MAP && !raw_equal(a->keys[i], b->keys[i], 0))
			return false;
		if (i == k) {
			if (!same_except(a->items[i], b->items[i], ch, step + 1, edited))
				return false;
		} else if (!raw_equal(a->items[i], b->items[i], 0)) {
			return false;
		}
	}
	return true;
}

static bool key_matches(const struct doc_node *k, const struct doc_pcomp *c)
{
	k = doc_deref(k);
	return k && k->kind == DOC_SCALAR && k->value_len == c->klen && !memcmp(k->value, c->key, c->klen);
}

/* An item edit needs the path to exist and to name a sequence. */
static int need_list(const struct doc *d, const struct doc_node *cur, bool absent, const char *path,
		     struct err *e)
{
	if (absent)
		return err_set(e, ERR_DATA, doc_name(d), 0, 0, _("%s: no such key"), path);
	if (cur->kind != DOC_SEQ)
		return err_at(e, d, cur, ERR_DATA, path, _("not a list"));
	return ERR_OK;
}

/* ---- one edit ---- */

/* One edit under way (apply_one): its path, parsed, and its value; where the path leads — the
 * deepest node that exists (cur), its parent and index there (pidx), how many components exist
 * (level); the change and the splice of the text that makes it. */
struct edit_run {
	const struct doc *d;
	const char *path;
	struct doc_pcomp *c;
	size_t nc;
	struct value v;
	const struct doc_node *cur, *parent;
	size_t pidx, level;
	struct change ch;
	struct splice sp;
};

/* Follows the path as far as it exists. */
static int walk_path(struct edit_run *r, struct err *e)
{
	const struct doc *d = r->d;
	for (r->level = 0; r->level < r->nc; r->level++) {
		const struct doc_node *cur = r->cur;
		if (cur->kind == DOC_ALIAS)
			return err_at(e, d, cur, ERR_DATA, r->path,
				      _("this part is an alias; changing it would change every place "
					"that uses the anchor, so edit the anchored value instead"));
		const struct doc_pcomp *k = &r->c[r->level];
		size_t i;
		if (k->is_index) {
			if (cur->kind != DOC_SEQ)
				return err_at(e, d, cur, ERR_DATA, r->path, _("not a list here"));
			if (k->index >= cur->n)
				return err_at(e, d, cur, ERR_DATA, r->path, _("the list has no such item"));
			i = k->index;
		} else {
			if (cur->kind != DOC_MAP)
				return err_at(e, d, cur, ERR_DATA, r->path, _("not a mapping here"));
			i = doc_own_index(cur, k->key, k->klen);
			if (i == (size_t)-1)
				break;
		}
		r->ch.steps[r->ch.nsteps++] = i;
		r->parent = cur;
		r->pidx = i;
		r->cur = cur->items[i];
	}
	return ERR_OK;
}

/* True when the node holds the value already (a SET that changes nothing). */
static bool holds_value(const struct doc_node *cur, const struct doc_node *val)
{
	const struct doc_node *dv = doc_deref(cur);
	return cur->kind != DOC_ALIAS && dv->kind == val->kind &&
	       (dv->kind == DOC_SCALAR
			? doc_scalar_type(dv) == doc_scalar_type(val) &&
				  (doc_scalar_type(dv) == DOC_T_NULL ||
				   (dv->value_len == val->value_len &&
				    !memcmp(dv->value, val->value, dv->value_len)))
			: doc_node_equal(dv, val));
}

/* The change the edit makes (r->ch; CH_NONE when none) and the splice of the text for it. */
static int plan_splice(struct edit_run *r, const struct doc_edit *ed, bool mark, struct err *e)
{
	const struct doc *d = r->d;
	bool absent = r->level < r->nc;
	switch (ed->op) {
	case DOC_EDIT_SET:
	case DOC_EDIT_SET_MARKED: /* made a SET by apply_one */
		if (absent) {
			r->ch.kind = CH_INSERT;
			return edit_insert(d, r->cur, r->c + r->level, r->nc - r->level, &r->v, r->path,
					   &r->sp, e);
		}
		if (holds_value(r->cur, r->v.root))
			return ERR_OK;
		r->ch.kind = CH_REPLACE;
		return edit_replace(d, r->parent, r->pidx, r->cur, &r->v, r->path, mark, &r->sp, e);
	case DOC_EDIT_REMOVE_KEY:
		if (absent)
			return ERR_OK; /* absent: nothing to do */
		if (r->c[r->nc - 1].is_index)
			return err_set(e, ERR_USAGE, NULL, 0, 0, _("%s: names a list item, not a key"),
				       r->path);
		r->ch.kind = CH_REMOVE;
		r->ch.nsteps--;
		r->ch.index = r->pidx;
		return edit_remove(d, r->parent, r->pidx, r->path, false, &r->sp, e);
	case DOC_EDIT_APPEND_ITEM: {
		int rc = need_list(d, r->cur, absent, r->path, e);
		if (rc != ERR_OK)
			return rc;
		r->ch.kind = CH_INSERT;
		return edit_append(d, r->cur, &r->v, r->path, &r->sp, e);
	}
	case DOC_EDIT_REMOVE_ITEM:
	case DOC_EDIT_REMOVE_ITEM_MARKED: /* made a REMOVE_ITEM by apply_one */ {
		int rc = need_list(d, r->cur, absent, r->path, e);
		if (rc != ERR_OK)
			return rc;
		if (ed->index >= r->cur->n)
			return err_at(e, d, r->cur, ERR_DATA, r->path, _("the list has no such item"));
		r->ch.kind = CH_REMOVE;
		r->ch.index = ed->index;
		return edit_remove(d, r->cur, ed->index, r->path, mark, &r->sp, e);
	}
	}
	return ERR_OK;
}

/* The document's text with the splice made, loaded into *out. */
static int splice_text(const struct edit_run *r, struct doc **out, struct err *e)
{
	const struct doc *d = r->d;
	size_t len;
	const char *t = doc_text(d, &len);
	struct strbuf nb = {0};
	if (r->ch.kind == CH_NONE) {
		strbuf_add(&nb, t, len);
	} else {
		strbuf_add(&nb, t, r->sp.a);
		strbuf_add(&nb, r->sp.ins.p ? r->sp.ins.p : "", r->sp.ins.len);
		strbuf_add(&nb, t + r->sp.b, len - r->sp.b);
	}
	if (nb.oom || r->sp.ins.oom) {
		free(nb.p);
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	}
	struct err pe;
	err_clear(&pe);
	int rc = doc_load(doc_name(d), nb.p ? nb.p : "", nb.len, out, &pe);
	free(nb.p);
	if (rc != ERR_OK)
		rc = err_set(e, ERR_SOFTWARE, doc_name(d), 0, 0,
			     _("%s: the edited text would not parse (%d:%d: %s); nothing was changed"),
			     r->path, pe.line, pe.col, pe.msg);
	return rc;
}

/* Everything else unchanged in `out`, and the edited place holds exactly the value. */
static bool verify_edit(const struct edit_run *r, const struct doc *out, enum doc_edit_op op)
{
	const struct doc_node *edited = NULL;
	bool ok = same_except(doc_root(r->d), doc_root(out), &r->ch, 0, &edited);
	if (ok && r->ch.kind == CH_REPLACE) {
		ok = doc_node_equal(edited, r->v.root);
	} else if (ok && r->ch.kind == CH_INSERT && edited->kind == DOC_SEQ) {
		ok = doc_node_equal(edited->items[edited->n - 1], r->v.root);
	} else if (ok && r->ch.kind == CH_INSERT) {
		const struct doc_node *m = edited;
		ok = key_matches(m->keys[m->n - 1], &r->c[r->level]);
		const struct doc_node *x = m->items[m->n - 1];
		for (size_t i = r->level + 1; ok && i < r->nc; i++) {
			ok = x->kind == DOC_MAP && x->n == 1 && key_matches(x->keys[0], &r->c[i]);
			x = ok ? x->items[0] : x;
		}
		ok = ok && doc_node_equal(x, r->v.root);
	}
	if (ok && op == DOC_EDIT_SET)
		ok = doc_node_equal(doc_get(out, r->path), r->v.root);
	return ok;
}

static int apply_one(const struct doc *d, const struct doc_edit *edit, struct doc **out,
		     struct err *e)
{
	/* A marked SET is a SET that also marks the comment beside the value it replaces. */
	struct doc_edit plain = *edit;
	const struct doc_edit *ed = &plain;
	bool mark = plain.op == DOC_EDIT_SET_MARKED || plain.op == DOC_EDIT_REMOVE_ITEM_MARKED;
	if (plain.op == DOC_EDIT_SET_MARKED)
		plain.op = DOC_EDIT_SET;
	else if (plain.op == DOC_EDIT_REMOVE_ITEM_MARKED)
		plain.op = DOC_EDIT_REMOVE_ITEM;
	*out = NULL;
	struct edit_run r = { .d = d, .path = ed->path ? ed->path : "", .cur = doc_root(d),
			      .ch = { .kind = CH_NONE } };
	int rc = doc_path_parse(r.path, &r.c, &r.nc, e);
	if (rc != ERR_OK)
		goto done;
	if (r.nc > DOC_MAX_DEPTH) {
		rc = err_set(e, ERR_USAGE, NULL, 0, 0, _("%s: path too long"), r.path);
		goto done;
	}
	if ((ed->op == DOC_EDIT_SET || ed->op == DOC_EDIT_APPEND_ITEM) &&
	    (rc = value_parse(r.path, ed->value, &r.v, e)) != ERR_OK)
		goto done;
	if ((rc = walk_path(&r, e)) != ERR_OK || (rc = plan_splice(&r, ed, mark, e)) != ERR_OK ||
	    (rc = splice_text(&r, out, e)) != ERR_OK || r.ch.kind == CH_NONE)
		goto done;
	if (!verify_edit(&r, *out, ed->op)) {
		doc_free(out);
		rc = err_set(e, ERR_SOFTWARE, doc_name(d), 0, 0,
			     _("%s: the edit did not verify (the result would differ from the intended "
			       "change); nothing was changed"),
			     r.path);
	}
done:
	free(r.sp.ins.p);
	value_free(&r.v);
	doc_path_free(r.c, r.nc);
	return rc;
}

int doc_apply(const struct doc *d, const struct doc_edit *edits, size_t n, struct doc **out,
	      struct err *e)
{
	*out = NULL;
	size_t len;
	const char *t = doc_text(d, &len);
	struct doc *cur = NULL;
	int rc = doc_load(doc_name(d), t, len, &cur, e);
	for (size_t i = 0; rc == ERR_OK && i < n; i++) {
		struct doc *next = NULL;
		rc = apply_one(cur, &edits[i], &next, e);
		doc_free(&cur);
		cur = next;
	}
	if (rc != ERR_OK) {
		doc_free(&cur);
		return rc;
	}
	*out = cur;
	return ERR_OK;
}

int doc_parse_assignment(const char *arg, char **path, char **value, struct err *e)
{
	*path = *value = NULL;
	bool quoted = false;
	const char *eq = NULL;
	for (const char *p = arg; *p; p++) {
		if (*p == '\\' && quoted && p[1])
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (*p == '=' && !quoted) {
			eq = p;
			break;
		}
	}
	if (!eq || eq == arg)
		return err_set(e, ERR_USAGE, NULL, 0, 0,
			       _("'%s': expected PATH=VALUE, e.g. config.process[0].train.batch_size=1"),
			       arg);
	char *copy = strdup(arg);
	if (!copy)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", _("out of memory"));
	copy[eq - arg] = '\0';
	*path = copy;
	*value = copy + (eq - arg) + 1;
	return ERR_OK;
}
