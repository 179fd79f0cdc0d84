/* fuzz_doc.c — doc_load and everything that reads or edits the loaded tree, then job_from_doc.
 *
 * The input is the YAML text itself, so any YAML file is a seed. The edits are derived from the
 * input's bytes: a scalar set to a value from a fixed list or to a slice of the input, a key
 * inserted under a mapping, an item or a key removed, and all of them at once.
 *
 * What must hold for any input:
 *  - doc_load either refuses the text as invalid (ERR_DATA, with a message) or gives a document
 *    that holds exactly the input bytes;
 *  - doc_apply either fails (no document out, an error with a message) or gives a document whose
 *    text loads again; setting a value that is already there changes no byte;
 *  - the bounded flow text and the job's displayed values are NUL-terminated within their buffers.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/job.h"

#include "fuzz.h"
#include "fuzz_job.h"

#define MAX_PATHS 64
#define MAX_PATH_LEN 256

struct walk {
	char paths[MAX_PATHS][MAX_PATH_LEN];
	const struct doc_node *nodes[MAX_PATHS];
	size_t n;
};

/* A tiny deterministic generator seeded from the input, so a crash replays exactly. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t seed_of(const uint8_t *data, size_t size)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < size; i++) {
		h ^= data[i];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

/* Records the path of every node (not through aliases), in document order, up to MAX_PATHS. */
static void walk(struct walk *w, const struct doc_node *n, const char *path, int depth)
{
	if (!n || w->n >= MAX_PATHS || depth > DOC_MAX_DEPTH + 1)
		return;
	snprintf(w->paths[w->n], MAX_PATH_LEN, "%s", path);
	w->nodes[w->n++] = n;
	if (n->kind != DOC_MAP && n->kind != DOC_SEQ)
		return;
	for (size_t i = 0; i < n->n && w->n < MAX_PATHS; i++) {
		char sub[MAX_PATH_LEN];
		int len;

		if (n->kind == DOC_SEQ) {
			len = snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		} else {
			const struct doc_node *k = n->keys[i];
			const char *key = k && k->kind == DOC_SCALAR && k->value ? k->value : "";
			bool quote = strpbrk(key, ".[]") != NULL;

			(void)doc_map_get(n, key);
			len = snprintf(sub, sizeof sub, "%s%s%s%s%s", path, *path ? "." : "",
				       quote ? "\"" : "", key, quote ? "\"" : "");
		}
		if (len < 0 || (size_t)len >= sizeof sub)
			continue;
		walk(w, n->items[i], sub, depth + 1);
	}
}

static void read_node(const struct doc_node *n)
{
	bool b;
	long long l;
	double x;
	bool truncated = false;
	char *s;

	if (!n)
		return;
	(void)doc_as_bool(n, &b);
	(void)doc_as_long(n, &l);
	(void)doc_as_double(n, &x);
	(void)doc_is_null(n);
	(void)doc_deref(n);
	s = doc_to_flow_bounded(n, 512, &truncated);
	if (s) {
		FUZZ_CHECK(strlen(s) < (size_t)1 << 30);
		free(s);
	}
	if (doc_deref(n)->kind == DOC_SCALAR) {
		s = doc_to_flow(n);
		free(s);
	}
}

static void read_paths(const struct doc *d, const struct walk *w)
{
	static const char *const fixed[] = {
		"", "config", "config.process[0]", "config.process[0].train.batch_size",
		"config.process[0].datasets[0].resolution", "job", "a.b.c", "[0]", "a[0][1]",
		"\"a.b\".c", "a..b", "a[", "a[x]", "a[99999999999999999999]", "\"", ".", "[-1]",
	};
	size_t prefix;

	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		const struct doc_node *n = doc_get(d, fixed[i]);
		const struct doc_node *near = doc_get_nearest(d, fixed[i], &prefix);

		read_node(n);
		if (near)
			FUZZ_CHECK(prefix <= strlen(fixed[i]));
	}
	for (size_t i = 0; i < w->n; i++) {
		const struct doc_node *n = doc_get(d, w->paths[i]);

		read_node(n);
		(void)doc_get_nearest(d, w->paths[i], &prefix);
	}
}

/* Applies edits; checks the result either way. Returns the new doc (caller frees) or NULL. */
static struct doc *apply_checked(const struct doc *d, const struct doc_edit *ed, size_t n)
{
	struct doc *out = (struct doc *)1, *again = NULL;
	struct err e;
	const char *text;
	size_t len;
	int rc;

	err_clear(&e);
	rc = doc_apply(d, ed, n, &out, &e);
	if (rc != ERR_OK) {
		FUZZ_CHECK(out == NULL);
		FUZZ_CHECK(err_has_message(&e));
		return NULL;
	}
	FUZZ_CHECK(out != NULL);
	text = doc_text(out, &len);
	FUZZ_CHECK(text != NULL || len == 0);
	err_clear(&e);
	rc = doc_load("edited", text, len, &again, &e);
	if (rc != ERR_OK) {
		fprintf(stderr, "edited text does not load: %s\n", e.msg);
		FUZZ_CHECK(rc == ERR_OK);
	}
	/* (not doc_node_equal: its work budget makes it say "different" on alias bombs) */
	FUZZ_CHECK((doc_root(again) == NULL) == (doc_root(out) == NULL));
	FUZZ_CHECK(!doc_root(again) || doc_root(again)->kind == doc_root(out)->kind);
	doc_free(&again);
	return out;
}

/* Setting a value that the document already holds changes no byte (doc.h). */
static void check_idempotent(const struct doc *d, const struct doc_edit *ed)
{
	struct doc *out = NULL;
	struct err e;
	const char *a, *b;
	size_t alen, blen;

	err_clear(&e);
	if (doc_apply(d, ed, 1, &out, &e) != ERR_OK)
		return;
	a = doc_text(d, &alen);
	b = doc_text(out, &blen);
	FUZZ_CHECK(alen == blen && (alen == 0 || memcmp(a, b, alen) == 0));
	doc_free(&out);
}

static void edit(const struct doc *d, const struct walk *w, const uint8_t *data, size_t size)
{
	static const char *const values[] = {
		"1", "0", "-7", "true", "no", "null", "~", "1e-4", "[512, 768]", "[]", "{}",
		"{a: 1, b: [2, 3]}", "\"x: y\"", "'it''s'", "plain text", "\"\\t\\u00e9\"", "&x 3",
		"[1, [2, [3]]]", "\"\"", "#", "- a", "a: b", "|", "\"\\x1b[31m\"", "\xc3\xa9t\xc3\xa9",
	};
	const size_t nvalues = sizeof values / sizeof values[0];
	uint64_t s = seed_of(data, size);
	char slice[24];
	char newkey[MAX_PATH_LEN + 32];
	const char *set_path, *map_path = "", *coll_path = "";
	size_t coll_n = 0;
	struct doc_edit ed[3];
	struct doc *out;

	/* A value cut from the input: often not YAML at all. */
	{
		size_t off = size ? (size_t)(rng_next(&s) % size) : 0;
		size_t n = size - off < sizeof slice - 1 ? size - off : sizeof slice - 1;

		memcpy(slice, data + off, n);
		slice[n] = '\0';
	}

	set_path = w->n ? w->paths[rng_next(&s) % w->n] : "a";
	/* a mapping to insert under and a collection to remove from, if there are any */
	for (size_t k = 0, start = w->n ? (size_t)(rng_next(&s) % w->n) : 0; k < w->n; k++) {
		size_t i = (start + k) % w->n;

		if (w->nodes[i]->kind == DOC_MAP && !*map_path)
			map_path = w->paths[i];
		if ((w->nodes[i]->kind == DOC_MAP || w->nodes[i]->kind == DOC_SEQ) && !*coll_path) {
			coll_path = w->paths[i];
			coll_n = w->nodes[i]->n;
		}
	}
	snprintf(newkey, sizeof newkey, "%s%sfuzz_key_%u", map_path, *map_path ? "." : "",
		 (unsigned)(rng_next(&s) % 4));

	/* 1. set a scalar */
	ed[0] = (struct doc_edit){ DOC_EDIT_SET, set_path,
				   rng_next(&s) % 4 == 0 ? slice : values[rng_next(&s) % nvalues], 0 };
	out = apply_checked(d, &ed[0], 1);
	if (out) {
		check_idempotent(out, &ed[0]);
		doc_free(&out);
	}

	/* 2. insert a key */
	ed[1] = (struct doc_edit){ DOC_EDIT_SET, newkey, values[rng_next(&s) % nvalues], 0 };
	out = apply_checked(d, &ed[1], 1);
	if (out) {
		check_idempotent(out, &ed[1]);
		doc_free(&out);
	}

	/* 3. remove an item (or a key, when the collection is a mapping), or append an item */
	if (*coll_path && rng_next(&s) % 3 == 0) {
		ed[2] = (struct doc_edit){ DOC_EDIT_APPEND_ITEM, coll_path,
					   values[rng_next(&s) % nvalues], 0 };
	} else if (*coll_path && rng_next(&s) % 2) {
		ed[2] = (struct doc_edit){ DOC_EDIT_REMOVE_ITEM, coll_path, NULL,
					   coll_n ? (size_t)(rng_next(&s) % (coll_n + 1)) : 0 };
	} else {
		ed[2] = (struct doc_edit){ DOC_EDIT_REMOVE_KEY,
					   w->n ? w->paths[rng_next(&s) % w->n] : "a", NULL, 0 };
	}
	out = apply_checked(d, &ed[2], 1);
	doc_free(&out);

	/* all three in one call: later edits see the earlier ones */
	out = apply_checked(d, ed, 3);
	doc_free(&out);
}

static void parse_assignment(const uint8_t *data, size_t size)
{
	char line[128];
	size_t n = 0;
	char *path = NULL, *value = NULL;
	struct err e;

	while (n < size && n < sizeof line - 1 && data[n] != '\n' && data[n] != '\0') {
		line[n] = (char)data[n];
		n++;
	}
	line[n] = '\0';
	err_clear(&e);
	if (doc_parse_assignment(line, &path, &value, &e) == ERR_OK) {
		FUZZ_CHECK(path != NULL && value != NULL);
		free(path);
	} else {
		FUZZ_CHECK(err_has_message(&e));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doc *d = NULL;
	struct err e;
	struct walk *w;
	const char *text;
	size_t len;
	int rc;

	parse_assignment(data, size);

	err_clear(&e);
	rc = doc_load("fuzz.yaml", (const char *)data, size, &d, &e);
	if (rc != ERR_OK) {
		/* bytes in memory, far below every limit: only "not YAML" is a valid refusal */
		if (rc != ERR_DATA)
			fprintf(stderr, "doc_load: %d: %s\n", rc, e.msg);
		FUZZ_CHECK(rc == ERR_DATA);
		FUZZ_CHECK(d == NULL);
		FUZZ_CHECK(err_has_message(&e));
		return 0;
	}
	FUZZ_CHECK(d != NULL);
	text = doc_text(d, &len);
	FUZZ_CHECK(len == size && (size == 0 || memcmp(text, data, size) == 0));

	w = calloc(1, sizeof *w);
	if (!w) {
		doc_free(&d);
		return 0;
	}
	walk(w, doc_root(d), "", 0);
	read_paths(d, w);
	fuzz_read_job(d);
	edit(d, w, data, size);
	free(w);
	doc_free(&d);
	FUZZ_CHECK(d == NULL);
	return 0;
}
