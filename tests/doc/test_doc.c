/* test_doc.c — the doc module: byte-exact round trips, edits checked by an independent loader
 * (libyaml's document API, not the module's own comparison), scalar typing, errors, hostile input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "oomfix/doc.h"

/* ---- helpers ---- */

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	if (b && n == cap)
		b = realloc(b, cap + 1);
	if (b)
		b[n] = '\0';
	*len = n;
	return b;
}

static const char *tests_dir(void)
{
	const char *t = getenv("TESTS_DIR");
	return t ? t : ".";
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct doc *load_str(const char *s)
{
	struct doc *d = NULL;
	struct err e;
	err_clear(&e);
	int rc = doc_load("t.yaml", s, strlen(s), &d, &e);
	if (rc != ERR_OK)
		fail_msg("load failed: %d:%d: %s", e.line, e.col, e.msg);
	return d;
}

/* Applies one edit and returns the new text (malloc'd) or NULL with *rc set. */
static char *edit_text(const char *src, size_t len, enum doc_edit_op op, const char *path,
		       const char *value, size_t index, int *rc, struct err *e)
{
	struct doc *d = NULL, *nd = NULL;
	err_clear(e);
	*rc = doc_load("t.yaml", src, len, &d, e);
	if (*rc != ERR_OK)
		return NULL;
	struct doc_edit ed = {.op = op, .path = path, .value = value, .index = index};
	*rc = doc_apply(d, &ed, 1, &nd, e);
	char *out = NULL;
	if (*rc == ERR_OK) {
		assert_non_null(nd);
		size_t n;
		const char *t = doc_text(nd, &n);
		out = malloc(n + 1);
		memcpy(out, t, n);
		out[n] = '\0';
	} else {
		assert_null(nd);
	}
	doc_free(&nd);
	doc_free(&d);
	return out;
}

static char *set_text(const char *src, const char *path, const char *value)
{
	int rc;
	struct err e;
	char *r = edit_text(src, strlen(src), DOC_EDIT_SET, path, value, 0, &rc, &e);
	if (!r)
		fail_msg("set %s=%s failed: %d:%d: %s", path, value, e.line, e.col, e.msg);
	return r;
}

/* ---- the independent checker: libyaml's own document loader, flattened to path lines ---- */

struct flat {
	char **v;
	size_t n, cap;
};

static void flat_add(struct flat *f, const char *path, const char *what, const char *val, size_t vlen)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->v = realloc(f->v, f->cap * sizeof *f->v);
	}
	size_t n = strlen(path) + strlen(what) + vlen + 3;
	char *s = malloc(n);
	snprintf(s, n, "%s\t%s\t%.*s", path, what, (int)vlen, val);
	f->v[f->n++] = s;
}

static void flatten(yaml_document_t *doc, yaml_node_t *node, const char *path, struct flat *f,
		    int depth)
{
	assert_true(depth < 64);
	char sub[4096];
	switch (node->type) {
	case YAML_SCALAR_NODE:
		flat_add(f, path,
			 node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "plain" : "string",
			 (const char *)node->data.scalar.value, node->data.scalar.length);
		break;
	case YAML_SEQUENCE_NODE: {
		flat_add(f, path, "seq", "", 0);
		int i = 0;
		for (yaml_node_item_t *it = node->data.sequence.items.start;
		     it < node->data.sequence.items.top; it++, i++) {
			snprintf(sub, sizeof sub, "%s[%d]", path, i);
			flatten(doc, yaml_document_get_node(doc, *it), sub, f, depth + 1);
		}
		break;
	}
	case YAML_MAPPING_NODE:
		flat_add(f, path, "map", "", 0);
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
		     p < node->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			assert_int_equal(k->type, YAML_SCALAR_NODE);
			snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "",
				 (const char *)k->data.scalar.value);
			flatten(doc, yaml_document_get_node(doc, p->value), sub, f, depth + 1);
		}
		break;
	default:
		fail_msg("unexpected node");
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void flat_text(const char *text, size_t len, struct flat *f)
{
	yaml_parser_t p;
	yaml_document_t doc;
	memset(f, 0, sizeof *f);
	assert_true(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc))
		fail_msg("independent loader refused the text: %s", p.problem);
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	assert_non_null(root);
	flatten(&doc, root, "", f, 0);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	qsort(f->v, f->n, sizeof *f->v, cmp_str);
}

static void flat_free(struct flat *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
}

static bool under(const char *entry, const char *path)
{
	size_t n = strlen(path);
	return !strncmp(entry, path, n) && (entry[n] == '\t' || entry[n] == '.' || entry[n] == '[');
}

/* Rewrites "PATH<rest>\tkind\tvalue" as "<rest>\tvalue" (the kind of the edited scalar may
 * legitimately change between plain and quoted). */
static char *rebase(const char *entry, size_t plen)
{
	const char *rest = entry + plen;
	const char *t1 = strchr(rest, '\t');
	const char *t2 = strchr(t1 + 1, '\t');
	size_t n = (size_t)(t1 - rest) + strlen(t2) + 1;
	char *s = malloc(n + 8);
	const char *kind = t1 + 1;
	bool coll = !strncmp(kind, "map\t", 4) || !strncmp(kind, "seq\t", 4);
	snprintf(s, n + 8, "%.*s%s%s", (int)(t1 - rest), rest, coll ? (kind[0] == 'm' ? "\tmap" : "\tseq") : "",
		 t2);
	return s;
}

/* Checks that `after` equals `before` everywhere outside `path`, and that `path` holds
 * `value` (YAML text; NULL: the path is absent). */
static void check_except(const char *before, size_t blen, const char *after, size_t alen,
			 const char *path, const char *value)
{
	struct flat a, b, v;
	flat_text(before, blen, &a);
	flat_text(after, alen, &b);
	size_t i = 0, j = 0;
	for (;;) {
		while (i < a.n && under(a.v[i], path))
			i++;
		while (j < b.n && under(b.v[j], path))
			j++;
		if (i == a.n || j == b.n)
			break;
		if (strcmp(a.v[i], b.v[j]))
			fail_msg("outside %s: before '%s', after '%s'", path, a.v[i], b.v[j]);
		i++;
		j++;
	}
	assert_true(i == a.n && j == b.n);
	size_t plen = strlen(path), nb = 0;
	char **got = calloc(b.n + 1, sizeof *got);
	for (j = 0; j < b.n; j++)
		if (under(b.v[j], path))
			got[nb++] = rebase(b.v[j], plen);
	if (!value) {
		assert_int_equal(nb, 0);
	} else {
		flat_text(value, strlen(value), &v);
		assert_int_equal(nb, v.n);
		char **want = calloc(v.n + 1, sizeof *want);
		for (size_t k = 0; k < v.n; k++)
			want[k] = rebase(v.v[k], 0);
		qsort(got, nb, sizeof *got, cmp_str);
		qsort(want, v.n, sizeof *want, cmp_str);
		for (size_t k = 0; k < v.n; k++) {
			if (strcmp(got[k], want[k]))
				fail_msg("at %s: got '%s', want '%s'", path, got[k], want[k]);
			free(want[k]);
		}
		free(want);
		flat_free(&v);
	}
	for (size_t k = 0; k < nb; k++)
		free(got[k]);
	free(got);
	flat_free(&a);
	flat_free(&b);
}

/* ---- line helpers ---- */

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Number of differing lines between two texts with the same line count. */
static size_t lines_differing(const char *a, const char *b)
{
	size_t diff = 0;
	while (*a || *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
		if (la != lb || memcmp(a, b, la))
			diff++;
		a += la + (ea ? 1 : 0);
		b += lb + (eb ? 1 : 0);
	}
	return diff;
}

/* True when removing exactly one line of `b` gives `a`. */
static bool one_line_added(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* Without a final line break the new last line brings its own separator. */
	if (la && a[la - 1] != '\n' && lb > la + 1 && !memcmp(a, b, la) && b[la] == '\n' &&
	    !strchr(b + la + 1, '\n'))
		return true;
	size_t p = 0;
	while (p < la && a[p] == b[p])
		p++;
	size_t ls = p;
	while (ls > 0 && b[ls - 1] != '\n')
		ls--;
	const char *nl = memchr(b + ls, '\n', lb - ls);
	size_t le = nl ? (size_t)(nl - b) + 1 : lb;
	size_t removed = le - ls;
	if (removed == 0 || lb - removed != la)
		return false;
	return !memcmp(a, b, ls) && !memcmp(a + ls, b + le, la - ls);
}

/* ---- round trips ---- */

static void roundtrip_file(const char *path)
{
	size_t len;
	char *text = read_all(path, &len);
	assert_non_null(text);
	struct doc *d = NULL;
	struct err e;
	err_clear(&e);
	int rc = doc_load_file(path, &d, &e);
	if (rc != ERR_OK)
		fail_msg("%s: %d:%d: %s", path, e.line, e.col, e.msg);
	size_t n;
	const char *t = doc_text(d, &n);
	assert_int_equal(n, len);
	assert_memory_equal(t, text, len);
	/* Every span lies inside the text and the spans of scalars hold their source text. */
	doc_free(&d);
	free(text);
}

static void test_roundtrip_corpus(void **state)
{
	(void)state;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/doc/corpus", tests_dir());
	DIR *dp = opendir(dir);
	assert_non_null(dp);
	struct dirent *de;
	int count = 0;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		roundtrip_file(path);
		count++;
	}
	closedir(dp);
	assert_true(count >= 10);
}

static void test_roundtrip_examples(void **state)
{
	(void)state;
	const char *sf = getenv("SHARED_FIXTURES");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/aitk-examples", sf ? sf : "/nonexistent");
	DIR *dp = opendir(dir);
	if (!dp)
		skip();
	struct dirent *de;
	int count = 0, invalid = 0;
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || (strcmp(de->d_name + l - 5, ".yaml") && strcmp(de->d_name + l - 4, ".yml")))
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (strstr(de->d_name, "omnigen2")) {
			struct doc *d = NULL;
			struct err e;
			err_clear(&e);
			assert_int_equal(doc_load_file(path, &d, &e), ERR_DATA);
			assert_null(d);
			assert_int_equal(e.line, 64);
			assert_true(e.col > 0);
			invalid++;
			continue;
		}
		roundtrip_file(path);
		count++;
	}
	closedir(dp);
	assert_int_equal(invalid, 1);
	assert_true(count >= 10);
}

/* ---- spans ---- */

static void test_spans_bytes(void **state)
{
	(void)state;
	/* Non-ASCII text before the values: spans must be bytes, not characters. */
	const char *s = "\xef\xbb\xbf# 日本語 é\r\nname: \"学習\"  # c\r\nlist: [猫, 512]\r\nn: 7\r\n";
	struct doc *d = load_str(s);
	const struct doc_node *n = doc_get(d, "name");
	assert_non_null(n);
	assert_int_equal(n->style, DOC_DQUOTED);
	assert_memory_equal(s + n->span.start, "\"学習\"", n->span.end - n->span.start);
	assert_int_equal(n->span.line, 2);
	assert_int_equal(n->span.col, 7);
	n = doc_get(d, "list[1]");
	assert_memory_equal(s + n->span.start, "512", 3);
	n = doc_get(d, "list");
	assert_int_equal(s[n->span.start], '[');
	assert_int_equal(s[n->span.end - 1], ']');
	n = doc_get(d, "n");
	assert_memory_equal(s + n->span.start, "7", 1);
	assert_int_equal(n->span.line, 4);
	doc_free(&d);
}

/* ---- scalars ---- */

static void test_scalars(void **state)
{
	(void)state;
	struct doc *d = load_str("a: yes\nb: No\nc: TRUE\nd: off\ne: On\nf: tRUE\ng: 'yes'\n"
				 "i1: 42\ni2: -0x1F\ni3: 010\ni4: 1_000\ni5: \"5\"\n"
				 "f1: 1e-4\nf2: 2E-4\nf3: 3.5\nf4: .inf\nf5: 1.0e+3\nf6: 1e4\n"
				 "n1: ~\nn2: null\nn3:\nn4: ''\ns: text\n");
	static const struct {
		const char *p;
		int b; /* -1: not a bool */
	} bools[] = {{"a", 1}, {"b", 0}, {"c", 1}, {"d", 0}, {"e", 1}, {"f", -1}, {"g", -1}, {"i1", -1}};
	for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) {
		bool v = false;
		bool ok = doc_as_bool(doc_get(d, bools[i].p), &v);
		assert_int_equal(ok, bools[i].b >= 0);
		if (ok)
			assert_int_equal(v, bools[i].b);
	}
	long long l;
	assert_true(doc_as_long(doc_get(d, "i1"), &l));
	assert_int_equal(l, 42);
	assert_true(doc_as_long(doc_get(d, "i2"), &l));
	assert_int_equal(l, -31);
	assert_true(doc_as_long(doc_get(d, "i3"), &l));
	assert_int_equal(l, 8);
	assert_true(doc_as_long(doc_get(d, "i4"), &l));
	assert_int_equal(l, 1000);
	assert_false(doc_as_long(doc_get(d, "i5"), &l));
	assert_false(doc_as_long(doc_get(d, "f1"), &l));
	double x;
	assert_true(doc_as_double(doc_get(d, "f1"), &x));
	assert_true(x > 0.99e-4 && x < 1.01e-4);
	assert_true(doc_as_double(doc_get(d, "f2"), &x));
	assert_true(x > 1.99e-4 && x < 2.01e-4);
	assert_true(doc_as_double(doc_get(d, "f3"), &x));
	assert_true(x == 3.5);
	assert_true(doc_as_double(doc_get(d, "f4"), &x));
	assert_true(x > 1e300);
	assert_true(doc_as_double(doc_get(d, "f5"), &x));
	assert_true(x == 1000.0);
	assert_true(doc_as_double(doc_get(d, "f6"), &x));
	assert_true(x == 10000.0);
	assert_true(doc_as_double(doc_get(d, "i1"), &x));
	assert_false(doc_as_double(doc_get(d, "s"), &x));
	assert_true(doc_is_null(doc_get(d, "n1")));
	assert_true(doc_is_null(doc_get(d, "n2")));
	assert_true(doc_is_null(doc_get(d, "n3")));
	assert_false(doc_is_null(doc_get(d, "n4")));
	assert_false(doc_is_null(doc_get(d, "missing")));
	char *f = doc_to_flow(doc_get(d, "f1"));
	assert_string_equal(f, "1e-4");
	free(f);
	doc_free(&d);
}

static void test_to_flow(void **state)
{
	(void)state;
	struct doc *d = load_str("res: [ 512, 768, 1024 ]\nm:\n  a: 1\n  b: [x, 'y z']\n"
				 "q: ['true', '1e-4', 'a, b', '', plain]\ns: 'quoted'\n"
				 "base: &b {k: 1, j: 2}\nmerged:\n  <<: *b\n  j: 3\n");
	static const struct {
		const char *p, *want;
	} cases[] = {
		{"res", "[512, 768, 1024]"},
		{"m", "{a: 1, b: [x, y z]}"},
		{"q", "[\"true\", \"1e-4\", \"a, b\", \"\", plain]"},
		{"s", "quoted"},
		{"merged", "{k: 1, j: 3}"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *f = doc_to_flow(doc_get(d, cases[i].p));
		assert_non_null(f);
		assert_string_equal(f, cases[i].want);
		/* The flow text reads back as the same value. */
		struct doc *r = load_str(f);
		assert_true(doc_node_equal(doc_root(r), doc_get(d, cases[i].p)) ||
			    !strcmp(cases[i].p, "merged") || !strcmp(cases[i].p, "s"));
		doc_free(&r);
		free(f);
	}
	doc_free(&d);
}

static void test_merge_lookup(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/doc/corpus/anchors.yaml", tests_dir());
	struct doc *d = NULL;
	struct err e;
	assert_int_equal(doc_load_file(path, &d, &e), ERR_OK);
	long long l;
	assert_true(doc_as_long(doc_get(d, "train.batch_size"), &l));
	assert_int_equal(l, 1); /* own key beats the merged one */
	char *f = doc_to_flow(doc_get(d, "train.lr"));
	assert_string_equal(f, "1e-4");
	free(f);
	assert_true(doc_as_long(doc_get(d, "train2.steps"), &l));
	assert_int_equal(l, 2000);
	assert_true(doc_as_long(doc_get(d, "train2.batch_size"), &l));
	assert_int_equal(l, 2);
	assert_true(doc_as_long(doc_get(d, "copy.batch_size"), &l));
	assert_int_equal(l, 2);
	assert_true(doc_as_long(doc_get(d, "ds.resolution[1]"), &l));
	assert_int_equal(l, 768);
	assert_null(doc_get(d, "train.nothing"));
	doc_free(&d);
}

/* ---- errors ---- */

static void expect_load_error(const char *file, int code, int line)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/doc/bad/%s", tests_dir(), file);
	struct doc *d = NULL;
	struct err e;
	err_clear(&e);
	int rc = doc_load_file(path, &d, &e);
	if (rc != code)
		fail_msg("%s: got %d (%s), want %d", file, rc, e.msg, code);
	assert_null(d);
	assert_true(e.msg[0] != '\0');
	assert_string_equal(e.file, path);
	if (line)
		assert_int_equal(e.line, line);
}

static void test_errors(void **state)
{
	(void)state;
	expect_load_error("unterminated.yaml", ERR_DATA, 1);
	expect_load_error("unclosed_flow.yaml", ERR_DATA, 0);
	expect_load_error("bad_indent.yaml", ERR_DATA, 2);
	expect_load_error("undefined_alias.yaml", ERR_DATA, 1);
	expect_load_error("nul.yaml", ERR_DATA, 1);
	expect_load_error("badutf8.yaml", ERR_DATA, 2);
	expect_load_error("empty.yaml", ERR_DATA, 0);
	expect_load_error("comment_only.yaml", ERR_DATA, 0);
	expect_load_error("no-such-file.yaml", ERR_NOINPUT, 0);
	expect_load_error("", ERR_NOINPUT, 0); /* the directory itself */
	struct doc *d = NULL;
	struct err e;
	assert_int_equal(doc_load("x", "a: 1\nb: \xc3(\n", 12, &d, &e), ERR_DATA);
	assert_int_equal(e.line, 2);
	assert_int_equal(e.col, 4);
}

/* ---- edits ---- */

static void test_edit_basics(void **state)
{
	(void)state;
	const char *src = "# c\nname: \"job\"  # keep\nt: 'x'\ntrain:\n  bs: 2 # bs\n  lr: 1e-4\n"
			  "res: [ 512, 768, 1024 ]\nblk:\n  - 512\n  - 768   # mid\n  - 1024\n"
			  "fm: {a: 1}\nnext: 1\n";
	char *r = set_text(src, "name", "other");
	assert_non_null(strstr(r, "name: \"other\"  # keep\n"));
	assert_int_equal(lines_differing(src, r), 1);
	free(r);
	r = set_text(src, "t", "y");
	assert_non_null(strstr(r, "t: 'y'\n"));
	free(r);
	r = set_text(src, "train.bs", "1");
	assert_non_null(strstr(r, "  bs: 1 # bs\n"));
	free(r);
	r = set_text(src, "train.lr", "1e-4");
	assert_string_equal(r, src); /* same value: no byte changes */
	free(r);
	r = set_text(src, "train.lr", "2e-4");
	check_except(src, strlen(src), r, strlen(r), "train.lr", "2e-4");
	free(r);
	r = set_text(src, "train.low_vram", "true");
	assert_true(one_line_added(src, r));
	assert_non_null(strstr(r, "  lr: 1e-4\n  low_vram: true\nres:"));
	free(r);
	r = set_text(src, "fm.b", "[1, 2]");
	assert_non_null(strstr(r, "fm: {a: 1, b: [1, 2]}\n"));
	free(r);
	r = set_text(src, "blk", "[512, 768]");
	assert_non_null(strstr(r, "blk: [512, 768]\nfm:"));
	check_except(src, strlen(src), r, strlen(r), "blk", "[512, 768]");
	free(r);
	r = set_text(src, "new.deep.key", "v");
	assert_non_null(strstr(r, "next: 1\nnew:\n  deep:\n    key: v\n"));
	free(r);

	int rc;
	struct err e;
	r = edit_text(src, strlen(src), DOC_EDIT_REMOVE_ITEM, "res", NULL, 2, &rc, &e);
	assert_non_null(r);
	assert_non_null(strstr(r, "res: [ 512, 768 ]\n"));
	free(r);
	r = edit_text(src, strlen(src), DOC_EDIT_REMOVE_ITEM, "res", NULL, 0, &rc, &e);
	assert_non_null(strstr(r, "res: [ 768, 1024 ]\n"));
	free(r);
	r = edit_text(src, strlen(src), DOC_EDIT_REMOVE_ITEM, "blk", NULL, 2, &rc, &e);
	assert_non_null(strstr(r, "blk:\n  - 512\n  - 768   # mid\nfm:"));
	check_except(src, strlen(src), r, strlen(r), "blk", "[512, 768]");
	free(r);
	r = edit_text(src, strlen(src), DOC_EDIT_REMOVE_KEY, "train.bs", NULL, 0, &rc, &e);
	assert_non_null(strstr(r, "train:\n  lr: 1e-4\n"));
	check_except(src, strlen(src), r, strlen(r), "train.bs", NULL);
	free(r);
	r = edit_text(src, strlen(src), DOC_EDIT_REMOVE_KEY, "train.absent", NULL, 0, &rc, &e);
	assert_string_equal(r, src);
	free(r);
	/* Refusals leave nothing behind and say why. */
	r = edit_text(src, strlen(src), DOC_EDIT_REMOVE_ITEM, "res", NULL, 7, &rc, &e);
	assert_null(r);
	assert_int_equal(rc, ERR_DATA);
	r = edit_text(src, strlen(src), DOC_EDIT_SET, "train.bs", "[unclosed", 0, &rc, &e);
	assert_null(r);
	assert_int_equal(rc, ERR_DATA);
	r = edit_text(src, strlen(src), DOC_EDIT_SET, "res[9]", "1", 0, &rc, &e);
	assert_null(r);
	assert_int_equal(rc, ERR_DATA);
}

static void test_edit_crlf_bom_unicode(void **state)
{
	(void)state;
	const char *src = "\xef\xbb\xbf# 猫\r\nname: 学習ジョブ\r\ntrain:\r\n  note: été\r\n  bs: 2\r\n";
	char *r = set_text(src, "train.bs", "1");
	assert_string_equal(r, "\xef\xbb\xbf# 猫\r\nname: 学習ジョブ\r\ntrain:\r\n  note: été\r\n  bs: 1\r\n");
	free(r);
	r = set_text(src, "train.lv", "true");
	assert_string_equal(r, "\xef\xbb\xbf# 猫\r\nname: 学習ジョブ\r\ntrain:\r\n  note: été\r\n  bs: 2\r\n"
			       "  lv: true\r\n");
	free(r);
	r = set_text(src, "name", "犬");
	assert_non_null(strstr(r, "name: 犬\r\n"));
	free(r);
	/* No final newline: the new line starts on its own line. */
	r = set_text("a: 1\nb: 2", "c", "3");
	assert_string_equal(r, "a: 1\nb: 2\nc: 3");
	free(r);
}

static void test_edit_anchors(void **state)
{
	(void)state;
	const char *src = "base: &b\n  lr: 1e-4\n  bs: 2\ntrain:\n  <<: *b\n  bs: 1\nalias: *b\n"
			  "s: &s 5\n";
	/* A key that only comes from the merge is overridden in the map itself. */
	char *r = set_text(src, "train.lr", "2e-4");
	assert_non_null(strstr(r, "  bs: 1\n  lr: 2e-4\nalias:"));
	assert_non_null(strstr(r, "base: &b\n  lr: 1e-4\n"));
	free(r);
	r = set_text(src, "s", "6");
	assert_non_null(strstr(r, "s: &s 6\n"));
	free(r);
	int rc;
	struct err e;
	r = edit_text(src, strlen(src), DOC_EDIT_SET, "alias.lr", "1", 0, &rc, &e);
	assert_null(r);
	assert_int_equal(rc, ERR_DATA);
	assert_int_equal(e.line, 7);
}

/* ---- properties over every file: one scalar set changes one line; one key added adds one
 * line; setting the same value changes nothing; the independent loader agrees. ---- */

struct walk {
	const char *text;
	size_t len;
	int sets, inserts;
};

static bool path_key_ok(const char *k)
{
	return *k && !strpbrk(k, ".[]\"\t\n") && strcmp(k, "<<");
}

/* Nodes under an anchor are skipped: changing them legitimately changes every alias too. */
static void prop_node(struct walk *w, const struct doc_node *n, const char *path, int depth)
{
	char sub[4096];
	if (depth > 40 || n->kind == DOC_ALIAS || n->anchor)
		return;
	if (n->kind == DOC_SCALAR) {
		if (!*path || n->style == DOC_LITERAL || n->style == DOC_FOLDED || n->anchor || n->tag ||
		    memchr(w->text + n->span.start, '\n', n->span.end - n->span.start))
			return;
		int rc;
		struct err e;
		/* Same value: no byte changes. */
		size_t sl = n->span.end - n->span.start;
		char *same = strndup(w->text + n->span.start, sl);
		char *r = edit_text(w->text, w->len, DOC_EDIT_SET, path, same, 0, &rc, &e);
		if (!r)
			fail_msg("%s: set to itself failed: %s", path, e.msg);
		if (strlen(r) != w->len || memcmp(r, w->text, w->len))
			fail_msg("%s: setting to its own text '%s' changed the file:\n%s", path, same, r);
		free(r);
		free(same);
		const char *nv = strcmp(n->value, "12345") ? "12345" : "54321";
		r = edit_text(w->text, w->len, DOC_EDIT_SET, path, nv, 0, &rc, &e);
		if (!r)
			fail_msg("%s: set failed: %d:%d %s", path, e.line, e.col, e.msg);
		if (count_lines(r) != count_lines(w->text))
			fail_msg("%s: line count %zu -> %zu:\n%s", path, count_lines(w->text), count_lines(r), r);
		if (lines_differing(w->text, r) != 1)
			fail_msg("%s: %zu lines changed", path, lines_differing(w->text, r));
		check_except(w->text, w->len, r, strlen(r), path, nv);
		free(r);
		w->sets++;
		return;
	}
	if (n->kind == DOC_MAP) {
		bool plain_keys = true;
		for (size_t i = 0; i < n->n; i++) {
			const struct doc_node *k = n->keys[i];
			if (k->kind != DOC_SCALAR || !path_key_ok(k->value)) {
				plain_keys = false;
				continue;
			}
			snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k->value);
			prop_node(w, n->items[i], sub, depth + 1);
		}
		if (n->style == DOC_BLOCK && plain_keys && n->n) {
			int rc;
			struct err e;
			snprintf(sub, sizeof sub, "%s%soomfix_added", path, *path ? "." : "");
			char *r = edit_text(w->text, w->len, DOC_EDIT_SET, sub, "7", 0, &rc, &e);
			if (!r)
				fail_msg("%s: insert failed: %d:%d %s", sub, e.line, e.col, e.msg);
			if (!one_line_added(w->text, r))
				fail_msg("%s: insert is not exactly one added line:\n%s", sub, r);
			check_except(w->text, w->len, r, strlen(r), sub, "7");
			free(r);
			w->inserts++;
		}
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		prop_node(w, n->items[i], sub, depth + 1);
	}
}

static void prop_file(const char *path, int *sets, int *inserts)
{
	size_t len;
	char *text = read_all(path, &len);
	assert_non_null(text);
	struct doc *d = NULL;
	struct err e;
	if (doc_load(path, text, len, &d, &e) != ERR_OK) {
		free(text);
		return;
	}
	struct walk w = {.text = text, .len = len};
	prop_node(&w, doc_root(d), "", 0);
	*sets += w.sets;
	*inserts += w.inserts;
	doc_free(&d);
	free(text);
}

static void prop_dir(const char *dir, int *sets, int *inserts)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.' || !strstr(de->d_name, ".y"))
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		prop_file(path, sets, inserts);
	}
	closedir(dp);
}

static void test_properties(void **state)
{
	(void)state;
	char dir[4096];
	int sets = 0, inserts = 0;
	snprintf(dir, sizeof dir, "%s/doc/corpus", tests_dir());
	prop_dir(dir, &sets, &inserts);
	const char *sf = getenv("SHARED_FIXTURES");
	if (sf) {
		snprintf(dir, sizeof dir, "%s/aitk-examples", sf);
		prop_dir(dir, &sets, &inserts);
	}
	print_message("# %d scalar sets and %d key inserts checked\n", sets, inserts);
	assert_true(sets > 50);
	assert_true(inserts > 10);
}

/* ---- hostile input ---- */

static void test_deep_nesting(void **state)
{
	(void)state;
	size_t n = 100000;
	char *s = malloc(n + 1);
	memset(s, '[', n);
	s[n] = '\0';
	struct doc *d = NULL;
	struct err e;
	double t0 = now();
	assert_int_equal(doc_load("deep", s, n, &d, &e), ERR_DATA);
	assert_true(now() - t0 < 2.0);
	assert_non_null(strstr(e.msg, "256"));
	assert_null(d);
	/* Block nesting too. */
	size_t cap = 300 * 300 + 16, len = 0;
	char *b = malloc(cap);
	for (int i = 0; i < 300; i++) {
		memset(b + len, ' ', (size_t)i);
		len += (size_t)i;
		len += (size_t)sprintf(b + len, "k:\n");
	}
	assert_int_equal(doc_load("deep2", b, len, &d, &e), ERR_DATA);
	free(b);
	free(s);
}

static void test_billion_laughs(void **state)
{
	(void)state;
	char buf[4096];
	size_t len = (size_t)sprintf(buf, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (int i = 1; i < 12; i++) {
		len += (size_t)sprintf(buf + len, "%c: &%c [", 'a' + i, 'a' + i);
		for (int j = 0; j < 9; j++)
			len += (size_t)sprintf(buf + len, "%s*%c", j ? ", " : "", 'a' + i - 1);
		len += (size_t)sprintf(buf + len, "]\n");
	}
	len += (size_t)sprintf(buf + len, "m: &m {<<: [");
	/* Merge keys fanning out too. */
	len += (size_t)sprintf(buf + len, "{x: 1}]}\n");
	struct doc *d = NULL;
	struct err e;
	assert_int_equal(doc_load("laughs", buf, len, &d, &e), ERR_OK);
	double t0 = now();
	bool trunc = false;
	char *f = doc_to_flow_bounded(doc_get(d, "l"), 100000, &trunc);
	assert_true(trunc);
	assert_true(strlen(f) < 10 * 1000 * 1000);
	free(f);
	f = doc_to_flow(doc_get(d, "l"));
	assert_non_null(f);
	free(f);
	/* A lookup deep inside the expansion is still cheap. */
	const struct doc_node *n = doc_get(d, "l[8][8][8][8][8][8][8][8][8][8][8][8]");
	assert_non_null(n);
	assert_string_equal(n->value, "lol");
	assert_true(doc_node_equal(doc_get(d, "l"), doc_get(d, "l")));
	assert_false(doc_node_equal(doc_get(d, "l"), doc_get(d, "k")));
	assert_true(now() - t0 < 5.0);
	/* Editing next to it verifies without expanding it. */
	struct doc *nd = NULL;
	struct doc_edit ed = {.op = DOC_EDIT_SET, .path = "m.x", .value = "2"};
	assert_int_equal(doc_apply(d, &ed, 1, &nd, &e), ERR_OK);
	assert_true(now() - t0 < 5.0);
	doc_free(&nd);
	doc_free(&d);
}

static void test_big_scalar(void **state)
{
	(void)state;
	size_t n = 50u * 1024 * 1024;
	char *s = malloc(n + 32);
	memcpy(s, "k: ", 3);
	memset(s + 3, 'x', n);
	memcpy(s + 3 + n, "\nz: 1\n", 7);
	size_t len = n + 9;
	struct doc *d = NULL;
	struct err e;
	double t0 = now();
	assert_int_equal(doc_load("big", s, len, &d, &e), ERR_OK);
	const struct doc_node *k = doc_get(d, "k");
	assert_int_equal(k->value_len, n);
	assert_int_equal(k->span.end - k->span.start, n);
	long long z;
	assert_true(doc_as_long(doc_get(d, "z"), &z));
	assert_int_equal(z, 1);
	print_message("# 50 MB scalar loaded in %.2f s\n", now() - t0);
	doc_free(&d);
	/* Above the size limit: a clear refusal. */
	free(s);
	size_t big = DOC_MAX_BYTES + 1;
	s = malloc(big);
	memset(s, 'a', big);
	assert_int_equal(doc_load("huge", s, big, &d, &e), ERR_DATA);
	free(s);
}

static void test_million_keys(void **state)
{
	(void)state;
	size_t cap = 16u * 1024 * 1024, len = 0;
	char *s = malloc(cap);
	for (int i = 0; i < 1000000; i++)
		len += (size_t)snprintf(s + len, cap - len, "k%d: %d\n", i, i);
	struct doc *d = NULL;
	struct err e;
	double t0 = now();
	assert_int_equal(doc_load("keys", s, len, &d, &e), ERR_OK);
	assert_int_equal(doc_root(d)->n, 1000000);
	long long v;
	assert_true(doc_as_long(doc_get(d, "k999999"), &v));
	assert_int_equal(v, 999999);
	assert_true(doc_as_long(doc_get(d, "k0"), &v));
	assert_int_equal(v, 0);
	assert_null(doc_get(d, "k1000000"));
	print_message("# 1 000 000 keys loaded and looked up in %.2f s\n", now() - t0);
	doc_free(&d);
	free(s);
}

/* The journal names what changed in the file: deepest paths, absent keys, whole lists. */
static void test_changes(void **state)
{
	(void)state;
	struct doc *a = load_str("t:\n  batch_size: 2 # two\n  steps: 10\n"
				 "ds:\n  - res: [512, 768, 1024]\n    name: x\n");
	struct doc_edit ed[] = {
		{ .op = DOC_EDIT_SET, .path = "t.batch_size", .value = "1" },
		{ .op = DOC_EDIT_SET, .path = "t.gradient_accumulation", .value = "2" },
		{ .op = DOC_EDIT_REMOVE_ITEM, .path = "ds[0].res", .index = 2 },
		{ .op = DOC_EDIT_REMOVE_KEY, .path = "ds[0].name" },
	};
	struct doc *b = NULL;
	struct err e;
	assert_int_equal(doc_apply(a, ed, 4, &b, &e), ERR_OK);
	char **v;
	size_t n = doc_changes(a, b, &v);
	assert_int_equal(n, 4);
	assert_string_equal(v[0], "t.batch_size: 2 \xe2\x86\x92 1");
	assert_string_equal(v[1], "t.gradient_accumulation: (absent) \xe2\x86\x92 2");
	assert_string_equal(v[2], "ds[0].res: [512, 768, 1024] \xe2\x86\x92 [512, 768]");
	assert_string_equal(v[3], "ds[0].name: x \xe2\x86\x92 (absent)");
	doc_changes_free(v, n);
	/* A document compared with itself has nothing to report. */
	assert_int_equal(doc_changes(b, b, &v), 0);
	doc_changes_free(v, 0);
	doc_free(&a);
	doc_free(&b);
}

/* Appending keeps the list's own style: a block item at the items' indentation, a flow item
 * before the bracket (on its own line when the items are), CRLF kept. */
static void test_append_item(void **state)
{
	(void)state;
	struct {
		const char *src, *path, *value, *want;
	} cases[] = {
		{ "r: [ 512, 768 ]  # two\n", "r", "1024", "r: [ 512, 768, 1024 ]  # two\n" },
		{ "r: []\n", "r", "512", "r: [512]\n" },
		{ "a:\n  r:\n    - 512  # small\n    - 768\n  b: 1\n", "a.r", "1024",
		  "a:\n  r:\n    - 512  # small\n    - 768\n    - 1024\n  b: 1\n" },
		{ "r:\n- 512\n- 768 # last\n\n# next\nx: 1\n", "r", "1024",
		  "r:\n- 512\n- 768 # last\n- 1024\n\n# next\nx: 1\n" },
		{ "{\"r\": [\n  512,\n  768\n]}\n", "r", "1024", "{\"r\": [\n  512,\n  768,\n  1024\n]}\n" },
		{ "r:\r\n  - 512\r\n", "r", "768", "r:\r\n  - 512\r\n  - 768\r\n" },
		{ "r:\n  - 512", "r", "768", "r:\n  - 512\n  - 768" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc;
		struct err e;
		char *out = edit_text(cases[i].src, strlen(cases[i].src), DOC_EDIT_APPEND_ITEM,
				      cases[i].path, cases[i].value, 0, &rc, &e);
		if (rc != ERR_OK)
			fail_msg("case %zu: %s", i, e.msg);
		assert_string_equal(out, cases[i].want);
		free(out);
	}
	/* Not a list: refused, nothing returned. */
	int rc;
	struct err e;
	char *out = edit_text("r: 512\n", 7, DOC_EDIT_APPEND_ITEM, "r", "768", 0, &rc, &e);
	assert_int_equal(rc, ERR_DATA);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_corpus),
		cmocka_unit_test(test_roundtrip_examples),
		cmocka_unit_test(test_spans_bytes),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_to_flow),
		cmocka_unit_test(test_merge_lookup),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_edit_basics),
		cmocka_unit_test(test_edit_crlf_bom_unicode),
		cmocka_unit_test(test_edit_anchors),
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_billion_laughs),
		cmocka_unit_test(test_big_scalar),
		cmocka_unit_test(test_million_keys),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_append_item),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
