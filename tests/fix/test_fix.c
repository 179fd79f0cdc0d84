/* test_fix.c — every fix on every example job and on our own fixtures: the result parses, holds
 * what SPEC §4 promises, changes no key the fix does not own, keeps every comment; switches and
 * clamps are idempotent and steps go one rung at a time.
 *
 * The expected values are computed here independently of fix.c (own ladder, own frame grid, own
 * tree walk over the node tree), so a wrong fix cannot agree with itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/job.h"
#include "oomfix/plan.h"

#define PROC "config.process[0]."

static char *path_join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);
	assert_non_null(p);
	snprintf(p, n, "%s/%s", a, b);
	return p;
}

static char *fixture(const char *name)
{
	const char *dir = getenv("TESTS_DIR");
	char buf[1024];
	snprintf(buf, sizeof buf, "%s/fix/fixtures", dir ? dir : "tests");
	return path_join(buf, name);
}

struct loaded {
	struct doc *d;
	struct job *j;
};

static void load(const char *path, struct loaded *l)
{
	struct err e;
	err_clear(&e);
	l->d = NULL;
	l->j = NULL;
	if (doc_load_file(path, &l->d, &e) != ERR_OK)
		fail_msg("%s: cannot load: %s (line %d)", path, e.msg, e.line);
	if (job_from_doc(l->d, &l->j, &e) != ERR_OK)
		fail_msg("%s: not a job: %s", path, e.msg);
}

static void unload(struct loaded *l)
{
	job_free(&l->j);
	doc_free(&l->d);
}

/* Applies one fix; returns false (and leaves *out empty) when it has nothing to change. */
static bool apply(const struct loaded *in, enum fix_id id, bool keep, struct loaded *out)
{
	struct fix_edit_list fl;
	struct err e;
	err_clear(&e);
	out->d = NULL;
	out->j = NULL;
	int rc = fix_edits(in->j, id, keep, &fl, &e);
	if (rc != ERR_OK)
		fail_msg("%s: fix_edits(%s) failed: %s", doc_name(in->d), fix_name(id), e.msg);
	if (!fl.n) {
		fix_edits_free(&fl);
		return false;
	}
	rc = doc_apply(in->d, fl.edits, fl.n, &out->d, &e);
	if (rc != ERR_OK)
		fail_msg("%s: doc_apply(%s) failed: %s (%s)", doc_name(in->d), fix_name(id), e.msg,
			 fl.edits[0].path);
	fix_edits_free(&fl);
	/* The result must load again from its bare text, as the trainer would read it. */
	size_t len;
	const char *text = doc_text(out->d, &len);
	struct doc *again = NULL;
	if (doc_load("again", text, len, &again, &e) != ERR_OK)
		fail_msg("%s + %s does not parse: %s", doc_name(in->d), fix_name(id), e.msg);
	doc_free(&again);
	if (job_from_doc(out->d, &out->j, &e) != ERR_OK)
		fail_msg("%s + %s is no longer a job: %s", doc_name(in->d), fix_name(id), e.msg);
	return true;
}

/* ---- an independent walk: every leaf as "path=value" ----------------------------------------- */

struct leaves {
	char **v;
	size_t n, cap;
};

static void leaf_add(struct leaves *l, const char *path, const char *value)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		assert_non_null(l->v);
	}
	size_t n = strlen(path) + strlen(value) + 2;
	l->v[l->n] = malloc(n);
	assert_non_null(l->v[l->n]);
	snprintf(l->v[l->n], n, "%s=%s", path, value);
	l->n++;
}

static void walk(const struct doc_node *n, const char *path, struct leaves *out, int depth)
{
	char sub[1024];
	if (!n) {
		leaf_add(out, path, "~");
		return;
	}
	if (depth > 64)
		return;
	if (n->kind == DOC_ALIAS)
		n = n->target;
	if (!n) {
		leaf_add(out, path, "~");
		return;
	}
	switch (n->kind) {
	case DOC_SCALAR:
		leaf_add(out, path, n->value ? n->value : "");
		break;
	case DOC_MAP:
		if (!n->n)
			leaf_add(out, path, "{}");
		for (size_t i = 0; i < n->n; i++) {
			const char *k = n->keys[i] && n->keys[i]->value ? n->keys[i]->value : "?";
			snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
			walk(n->items[i], sub, out, depth + 1);
		}
		break;
	case DOC_SEQ:
		if (!n->n)
			leaf_add(out, path, "[]");
		for (size_t i = 0; i < n->n; i++) {
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			walk(n->items[i], sub, out, depth + 1);
		}
		break;
	default:
		break;
	}
}

static void leaves_free(struct leaves *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* The path with every [digits] turned into [#] and the process prefix removed. */
static void shape(const char *leaf, char *out, size_t outsz)
{
	const char *p = leaf;
	if (!strncmp(p, PROC, strlen(PROC)))
		p += strlen(PROC);
	size_t o = 0;
	for (; *p && *p != '=' && o + 4 < outsz; p++) {
		if (!strncmp(p, ".<<", 3)) { /* a merged key belongs to the map it is merged into */
			p += 2;
			continue;
		}
		if (*p == '[') {
			out[o++] = '[';
			out[o++] = '#';
			while (p[1] && p[1] != ']')
				p++;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
}

static bool owned(enum fix_id id, const char *leaf)
{
	static const char *const own[FIX_COUNT][10] = {
		[FIX_GRADIENT_CHECKPOINTING] = { "train.gradient_checkpointing" },
		[FIX_BATCH_SIZE] = { "train.batch_size", "datasets[#].batch_size",
				     "train.gradient_accumulation", "train.gradient_accumulation_steps" },
		[FIX_DROP_LARGEST_BUCKET] = { "datasets[#].resolution", "datasets[#].resolution[#]" },
		[FIX_LIGHTER_SAMPLING] = { "sample.width", "sample.height", "sample.sample_steps",
					   "sample.sample_every", "sample.num_frames",
					   "sample.samples[#].width", "sample.samples[#].height",
					   "sample.samples[#].sample_steps",
					   "sample.samples[#].num_frames" },
		[FIX_DISABLE_SAMPLING] = { "train.disable_sampling" },
		[FIX_NUM_FRAMES] = { "datasets[#].num_frames", "sample.num_frames",
				     "sample.samples[#].num_frames" },
		[FIX_LOW_VRAM] = { "model.low_vram", "model.quantize", "model.quantize_te" },
	};
	char s[1024];
	if (strncmp(leaf, PROC, strlen(PROC)))
		return false;
	shape(leaf, s, sizeof s);
	for (int i = 0; i < 10 && own[id][i]; i++)
		if (!strcmp(s, own[id][i]))
			return true;
	return false;
}

static bool has_leaf(const struct leaves *l, const char *leaf)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], leaf))
			return true;
	return false;
}

static void check_only_owned(const struct loaded *a, const struct loaded *b, enum fix_id id)
{
	struct leaves la = { 0 }, lb = { 0 };
	walk(doc_root(a->d), "", &la, 0);
	walk(doc_root(b->d), "", &lb, 0);
	for (size_t i = 0; i < la.n; i++)
		if (!owned(id, la.v[i]) && !has_leaf(&lb, la.v[i]))
			fail_msg("%s: %s changed or removed %s", doc_name(a->d), fix_name(id), la.v[i]);
	for (size_t i = 0; i < lb.n; i++)
		if (!owned(id, lb.v[i]) && !has_leaf(&la, lb.v[i]))
			fail_msg("%s: %s added %s", doc_name(a->d), fix_name(id), lb.v[i]);
	leaves_free(&la);
	leaves_free(&lb);
}

/* ---- comments --------------------------------------------------------------------------------- */

/* Byte offset of the comment in a line (outside quotes, after a blank or at the start), or -1. */
static long comment_at(const char *line, size_t len)
{
	char q = 0;
	for (size_t i = 0; i < len; i++) {
		char c = line[i];
		if (q) {
			if (c == q)
				q = 0;
			continue;
		}
		if ((c == '"' || c == '\'') && (i == 0 || strchr(" \t[{,:-", line[i - 1])))
			q = c;
		else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
			return (long)i;
	}
	return -1;
}

static bool has_line(const char *text, size_t tlen, const char *line, size_t len)
{
	const char *p = text, *end = text + tlen;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (l == len && !memcmp(p, line, len))
			return true;
		p += l + 1;
	}
	return false;
}

/* The comment `com` as it is, or (D40) on a changed value "# oomfix: was OLD; " and its text. */
static bool comment_kept(const char *now, size_t nlen, const char *com, size_t clen)
{
	static const char mark[] = "# oomfix: was ";
	if (nlen == clen && !memcmp(now, com, clen))
		return true;
	size_t k = 1;
	while (k < clen && com[k] == ' ')
		k++;
	const char *semi = nlen > sizeof mark ? memchr(now, ';', nlen) : NULL;
	return semi && !memcmp(now, mark, sizeof mark - 1) &&
	       (size_t)(now + nlen - semi) == clen - k + 2 && semi[1] == ' ' &&
	       !memcmp(semi + 2, com + k, clen - k);
}

/* A line of text whose comment is `com` and whose text before it starts with `key`. */
static bool has_comment_on_key(const char *text, size_t tlen, const char *key, size_t klen,
			       const char *com, size_t clen)
{
	const char *p = text, *end = text + tlen;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		long c = comment_at(p, l);
		if (c >= 0 && comment_kept(p + c, l - (size_t)c, com, clen) && l >= klen &&
		    !memcmp(p, key, klen))
			return true;
		p += l + 1;
	}
	return false;
}

static void check_comments(const struct loaded *a, const struct loaded *b, enum fix_id id)
{
	size_t alen, blen;
	const char *at = doc_text(a->d, &alen), *bt = doc_text(b->d, &blen);
	const char *p = at, *end = at + alen;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		long c = comment_at(p, l);
		if (c >= 0 && !has_line(bt, blen, p, l)) {
			size_t ws = 0;
			while (ws < l && (p[ws] == ' ' || p[ws] == '\t'))
				ws++;
			/* A removed block item takes its own comment along. */
			bool removed_item = id == FIX_DROP_LARGEST_BUCKET && ws < l && p[ws] == '-';
			if (!removed_item) {
				if ((size_t)c == ws)
					fail_msg("%s: %s lost the comment line '%.*s'", doc_name(a->d),
						 fix_name(id), (int)l, p);
				const char *colon = memchr(p, ':', (size_t)c);
				size_t klen = colon ? (size_t)(colon - p) + 1 : ws;
				if (!has_comment_on_key(bt, blen, p, klen, p + c, l - (size_t)c))
					fail_msg("%s: %s moved or lost the comment of '%.*s'",
						 doc_name(a->d), fix_name(id), (int)l, p);
			}
		}
		p += l + 1;
	}
}

/* ---- what §4 promises ------------------------------------------------------------------------- */

static const struct doc_node *getp(const struct doc *d, const char *rel)
{
	char path[512];
	snprintf(path, sizeof path, PROC "%s", rel);
	return doc_get(d, path);
}

static long long getl(const struct doc *d, const char *rel, long long def)
{
	long long v;
	const struct doc_node *n = getp(d, rel);
	return n && doc_as_long(n, &v) ? v : def;
}

static bool getb(const struct doc *d, const char *rel, bool def)
{
	bool v;
	const struct doc_node *n = getp(d, rel);
	return n && doc_as_bool(n, &v) ? v : def;
}

static long long ladder_below(long long v)
{
	static const long long rungs[] = { 1536, 1280, 1024, 768, 512 };
	for (size_t i = 0; i < 5; i++)
		if (rungs[i] < v)
			return rungs[i];
	return v;
}

/* The grid point g·k+1 nearest v/2 (the lower on a tie), below v, at least 9 (D18: 81 → 41). */
static long long frames_half(long long v, int g)
{
	long long best = 1;
	for (long long n = 1; n < v; n += g)
		if (llabs(2 * n - v) < llabs(2 * best - v))
			best = n;
	return best < 9 ? 9 : best;
}

static long long eff_batch_max(const struct job *j)
{
	long long m = j->batch_size;
	if (j->ndatasets)
		m = 0;
	for (size_t i = 0; i < j->ndatasets; i++) {
		long long b = j->datasets[i].has_batch_size ? j->datasets[i].batch_size : j->batch_size;
		if (b > m)
			m = b;
	}
	return m < 1 ? 1 : m;
}

static void check_promise(const struct loaded *a, const struct loaded *b, enum fix_id id, bool keep)
{
	const char *name = doc_name(a->d);
	const struct job *ja = a->j, *jb = b->j;
	char rel[128];
	switch (id) {
	case FIX_GRADIENT_CHECKPOINTING:
		assert_true(getb(b->d, "train.gradient_checkpointing", false));
		break;
	case FIX_BATCH_SIZE: {
		assert_int_equal(getl(b->d, "train.batch_size", 1), 1);
		for (size_t i = 0; i < jb->ndatasets; i++) {
			snprintf(rel, sizeof rel, "datasets[%zu].batch_size", i);
			assert_true(getl(b->d, rel, 1) <= 1);
		}
		long long ga = getl(b->d, "train.gradient_accumulation", 1);
		long long gas = getl(b->d, "train.gradient_accumulation_steps", 1);
		if (ga > 1 && gas != 1)
			fail_msg("%s: both accumulation names in use (%lld, %lld)", name, ga, gas);
		if (keep && ja->grad_accum >= 1)
			assert_int_equal(jb->grad_accum, ja->grad_accum * eff_batch_max(ja));
		if (!keep)
			assert_int_equal(jb->grad_accum, ja->grad_accum);
		break;
	}
	case FIX_DROP_LARGEST_BUCKET:
		assert_int_equal(ja->ndatasets, jb->ndatasets);
		for (size_t i = 0; i < ja->ndatasets; i++) {
			const struct job_dataset *da = &ja->datasets[i], *db = &jb->datasets[i];
			long long max = 0;
			size_t nmax = 0;
			for (size_t k = 0; k < da->nres; k++)
				max = da->res[k] > max ? da->res[k] : max;
			for (size_t k = 0; k < da->nres; k++)
				nmax += da->res[k] == max;
			assert_true(db->nres >= 1 || da->nres == 0);
			if (max <= 512) {
				assert_int_equal(da->nres, db->nres);
				continue;
			}
			if (nmax < da->nres) { /* the largest goes, the rest stay in order */
				size_t o = 0;
				for (size_t k = 0; k < da->nres; k++)
					if (da->res[k] != max) {
						assert_true(o < db->nres);
						assert_int_equal(db->res[o++], da->res[k]);
					}
				assert_int_equal(o, db->nres);
			} else {
				assert_int_equal(db->nres, 1);
				assert_int_equal(db->res[0], ladder_below(max));
			}
		}
		break;
	case FIX_LIGHTER_SAMPLING: {
		long long w = getl(b->d, "sample.width", 512), h = getl(b->d, "sample.height", 512);
		long long ow = getl(a->d, "sample.width", 512), oh = getl(a->d, "sample.height", 512);
		assert_true(w <= 512 && h <= 512);
		if (w != ow || h != oh) {
			assert_true(w % 16 == 0 && h % 16 == 0 && w >= 16 && h >= 16);
			/* aspect within one rounding step of 16 */
			double ra = (double)ow / (double)oh, rb = (double)w / (double)h;
			assert_true(rb > ra * 0.9 && rb < ra * 1.1);
		}
		assert_true(getl(b->d, "sample.sample_steps", 20) <= 20);
		assert_true(getl(b->d, "sample.sample_every", 100) >= 500);
		if (jb->kind == JOB_KIND_VIDEO)
			assert_true(getl(b->d, "sample.num_frames", 1) <= 33);
		for (size_t k = 0; k < jb->nprompts; k++) {
			snprintf(rel, sizeof rel, "sample.samples[%zu].width", k);
			assert_true(getl(b->d, rel, 0) <= 512);
			snprintf(rel, sizeof rel, "sample.samples[%zu].height", k);
			assert_true(getl(b->d, rel, 0) <= 512);
			snprintf(rel, sizeof rel, "sample.samples[%zu].sample_steps", k);
			assert_true(getl(b->d, rel, 0) <= 20);
		}
		/* Values that were already lighter stay. */
		long long os = getl(a->d, "sample.sample_steps", 20);
		if (os <= 20)
			assert_int_equal(getl(b->d, "sample.sample_steps", 20), os);
		long long oe = getl(a->d, "sample.sample_every", 100);
		if (oe >= 500)
			assert_int_equal(getl(b->d, "sample.sample_every", 100), oe);
		break;
	}
	case FIX_DISABLE_SAMPLING:
		assert_true(getb(b->d, "train.disable_sampling", false));
		break;
	case FIX_NUM_FRAMES: {
		int g = strncmp(ja->arch, "ltx", 3) == 0 ? 8 : 4;
		for (size_t i = 0; i < ja->ndatasets; i++) {
			long long o = ja->datasets[i].num_frames, n = jb->datasets[i].num_frames;
			if (o > 9) {
				assert_int_equal(n, frames_half(o, g));
				assert_int_equal((n - 1) % g, 0);
			} else {
				assert_int_equal(n, o);
			}
		}
		long long o = getl(a->d, "sample.num_frames", 1), n = getl(b->d, "sample.num_frames", 1);
		assert_int_equal(n, o > 9 ? frames_half(o, g) : o);
		break;
	}
	case FIX_LOW_VRAM:
		if (ja->arch_has_low_vram)
			assert_true(getb(b->d, "model.low_vram", false));
		if (ja->arch_has_quantize) {
			assert_true(getb(b->d, "model.quantize", false));
			assert_true(jb->quantize_te || !strcmp(ja->arch, "hidream_o1"));
		}
		break;
	default:
		break;
	}
}

/* ---- one job, every fix ------------------------------------------------------------------------ */

static bool is_step(enum fix_id id)
{
	return id == FIX_DROP_LARGEST_BUCKET || id == FIX_NUM_FRAMES;
}

static long long rung(const struct loaded *l, enum fix_id id)
{
	if (id == FIX_DROP_LARGEST_BUCKET) {
		long long sum = 0; /* every bucket of every dataset: must strictly fall */
		for (size_t i = 0; i < l->j->ndatasets; i++)
			for (size_t k = 0; k < l->j->datasets[i].nres; k++)
				sum += l->j->datasets[i].res[k];
		return sum;
	}
	long long sum = getl(l->d, "sample.num_frames", 1);
	for (size_t i = 0; i < l->j->ndatasets; i++)
		sum += l->j->datasets[i].num_frames;
	return sum;
}

static void check_job_fix(const char *path, enum fix_id id, bool keep)
{
	struct loaded a, b, c;
	load(path, &a);
	char reason[256];
	enum fix_status st = fix_status(a.j, id, reason, sizeof reason);
	assert_true(reason[0] != '\0');
	if (st == FIX_NOT_APPLICABLE) {
		struct fix_edit_list fl;
		struct err e;
		err_clear(&e);
		assert_int_equal(fix_edits(a.j, id, keep, &fl, &e), ERR_DATA);
		assert_int_equal(fl.n, 0);
		unload(&a);
		return;
	}
	bool changed = apply(&a, id, keep, &b);
	if (st == FIX_DONE || id == FIX_FRESH_WORKER) {
		if (changed)
			fail_msg("%s: %s is done (%s) but still edits", path, fix_name(id), reason);
		unload(&a);
		return;
	}
	if (!changed)
		fail_msg("%s: %s is to do (%s) but has no edit", path, fix_name(id), reason);
	check_promise(&a, &b, id, keep);
	check_only_owned(&a, &b, id);
	check_comments(&a, &b, id);

	if (is_step(id)) {
		/* One rung per application, down to the floor, where it reports done. */
		int rounds = 0;
		struct loaded cur = b;
		long long last = rung(&a, id);
		for (;;) {
			long long now = rung(&cur, id);
			assert_true(now < last);
			last = now;
			if (fix_status(cur.j, id, NULL, 0) == FIX_DONE)
				break;
			assert_true(++rounds < 12);
			if (!apply(&cur, id, keep, &c))
				fail_msg("%s: %s is to do but has no edit", path, fix_name(id));
			check_promise(&cur, &c, id, keep);
			unload(&cur);
			cur = c;
		}
		assert_false(apply(&cur, id, keep, &c));
		unload(&cur);
	} else {
		/* Switches and clamps: the second application changes nothing. */
		assert_int_equal(fix_status(b.j, id, NULL, 0), FIX_DONE);
		if (apply(&b, id, keep, &c))
			fail_msg("%s: %s applied twice changed the file again", path, fix_name(id));
		unload(&b);
	}
	unload(&a);
}

static void check_all_fixes(const char *path)
{
	for (int id = 0; id < FIX_COUNT; id++) {
		check_job_fix(path, (enum fix_id)id, true);
		if (id == FIX_BATCH_SIZE)
			check_job_fix(path, (enum fix_id)id, false);
	}
}

static bool is_yaml(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Calls fn on every YAML file of dir in name order; returns how many. */
static size_t each_yaml(const char *dir, void (*fn)(const char *path, void *arg), void *arg)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return 0;
	char *names[256];
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) && n < 256)
		if (is_yaml(de->d_name))
			names[n++] = strdup(de->d_name);
	closedir(dp);
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *p = path_join(dir, names[i]);
		fn(p, arg);
		free(p);
		free(names[i]);
	}
	return n;
}

static void example_one(const char *path, void *arg)
{
	size_t *loaded = arg;
	struct doc *d = NULL;
	struct err e;
	err_clear(&e);
	if (strstr(path, "omnigen2")) {
		/* Invalid YAML upstream: must fail with a place, never crash. */
		assert_int_equal(doc_load_file(path, &d, &e), ERR_DATA);
		assert_true(e.line > 0);
		return;
	}
	check_all_fixes(path);
	(*loaded)++;
}

static void test_examples(void **state)
{
	const char *shared = getenv("SHARED_FIXTURES");
	char dir[1024];
	struct stat st;
	snprintf(dir, sizeof dir, "%s/aitk-examples", shared ? shared : "");
	if (!shared || stat(dir, &st) != 0)
		skip();
	size_t ok = 0;
	size_t n = each_yaml(dir, example_one, &ok);
	assert_true(n >= 20);
	assert_int_equal(ok, n - 1);
}

static void fixture_one(const char *path, void *arg)
{
	size_t *n = arg;
	check_all_fixes(path);
	(*n)++;
}

static void test_own_fixtures(void **state)
{
	const char *dir = getenv("TESTS_DIR");
	char buf[1024];
	snprintf(buf, sizeof buf, "%s/fix/fixtures", dir ? dir : "tests");
	size_t n = 0;
	each_yaml(buf, fixture_one, &n);
	assert_true(n >= 10);
}

/* ---- exact values on our fixtures --------------------------------------------------------------- */

static void apply_named(const char *file, enum fix_id id, bool keep, struct loaded *a,
			struct loaded *b)
{
	char *p = fixture(file);
	load(p, a);
	free(p);
	assert_true(apply(a, id, keep, b));
}

static void test_batch_per_dataset(void **state)
{
	struct loaded a, b;
	apply_named("per_dataset_batch.yaml", FIX_BATCH_SIZE, true, &a, &b);
	assert_int_equal(getl(b.d, "train.batch_size", 0), 1);
	assert_int_equal(getl(b.d, "datasets[0].batch_size", 0), 1);
	assert_int_equal(getl(b.d, "datasets[1].batch_size", 0), 1);
	assert_null(getp(b.d, "datasets[2].batch_size"));
	assert_int_equal(getl(b.d, "train.gradient_accumulation", 0), 4); /* largest effective: 4 */
	struct fix_edit_list fl;
	struct err e;
	assert_int_equal(fix_edits(a.j, FIX_BATCH_SIZE, true, &fl, &e), ERR_OK);
	assert_non_null(strstr(fl.note, "4")); /* the note says which batch the accumulation used */
	fix_edits_free(&fl);
	unload(&a);
	unload(&b);

	apply_named("per_dataset_batch.yaml", FIX_BATCH_SIZE, false, &a, &b);
	assert_int_equal(getl(b.d, "train.gradient_accumulation", 0), 1);
	unload(&a);
	unload(&b);
}

static void test_batch_legacy(void **state)
{
	struct loaded a, b;
	apply_named("legacy_accum.yaml", FIX_BATCH_SIZE, true, &a, &b);
	assert_int_equal(getl(b.d, "train.batch_size", 0), 1);
	assert_int_equal(getl(b.d, "train.gradient_accumulation_steps", 0), 4);
	assert_null(getp(b.d, "train.gradient_accumulation"));
	unload(&a);
	unload(&b);

	apply_named("both_accum.yaml", FIX_BATCH_SIZE, true, &a, &b);
	assert_int_equal(getl(b.d, "train.gradient_accumulation", 0), 6);
	assert_int_equal(getl(b.d, "train.gradient_accumulation_steps", 0), 1);
	unload(&a);
	unload(&b);
}

static void test_bucket_block_list(void **state)
{
	struct loaded a, b;
	apply_named("block_resolutions.yaml", FIX_DROP_LARGEST_BUCKET, true, &a, &b);
	assert_int_equal(b.j->datasets[0].nres, 2);
	assert_int_equal(b.j->datasets[0].res[0], 512);
	assert_int_equal(b.j->datasets[0].res[1], 768);
	size_t len;
	const char *t = doc_text(b.d, &len);
	assert_null(strstr(t, "# big one"));
	assert_non_null(strstr(t, "- 512   # small\n"));
	assert_non_null(strstr(t, "# buckets, largest last\n"));
	unload(&a);
	unload(&b);
}

static void test_bucket_single_ladder(void **state)
{
	static const long long want0[] = { 1280, 1024, 768, 512 };
	static const long long want1[] = { 1280, 1024, 768, 512 }; /* 1328 is off the ladder */
	char *p = fixture("single_bucket_1536.yaml");
	struct loaded cur, next;
	load(p, &cur);
	free(p);
	for (size_t r = 0; r < 4; r++) {
		assert_int_equal(fix_status(cur.j, FIX_DROP_LARGEST_BUCKET, NULL, 0), FIX_TODO);
		assert_true(apply(&cur, FIX_DROP_LARGEST_BUCKET, true, &next));
		assert_int_equal(getl(next.d, "datasets[0].resolution", 0), want0[r]);
		assert_int_equal(getl(next.d, "datasets[1].resolution[0]", 0), want1[r]);
		unload(&cur);
		cur = next;
	}
	assert_int_equal(fix_status(cur.j, FIX_DROP_LARGEST_BUCKET, NULL, 0), FIX_DONE);
	size_t len;
	assert_non_null(strstr(doc_text(cur.d, &len), "resolution: 512 # oomfix: was 1536; one big bucket\n"));
	unload(&cur);
}

/* E9 (review 4): a bucket dropped from a one-line flow list marks the comment after it with the
 * list as it was, the first time; a later drop keeps that first value, as does a comment
 * already marked. */
static void test_flow_list_comment_E9(void **state)
{
	struct loaded a, b, c;
	apply_named("flow_buckets_comment.yaml", FIX_DROP_LARGEST_BUCKET, true, &a, &b);
	size_t len;
	const char *t = doc_text(b.d, &len);
	assert_non_null(strstr(t, "resolution: [ 512, 768 ]  # oomfix: was [ 512, 768, 1024 ]; "
				  "all three buckets\n"));
	assert_non_null(strstr(t, "resolution: [512, 768] # oomfix: was [512, 1024, 1536, 768]; "
				  "marked before\n"));
	assert_true(apply(&b, FIX_DROP_LARGEST_BUCKET, true, &c));
	t = doc_text(c.d, &len);
	assert_non_null(strstr(t, "resolution: [ 512 ]  # oomfix: was [ 512, 768, 1024 ]; "
				  "all three buckets\n"));
	unload(&a);
	unload(&b);
	unload(&c);
}

static void test_lighter_per_prompt(void **state)
{
	struct loaded a, b;
	apply_named("per_prompt_sizes.yaml", FIX_LIGHTER_SAMPLING, true, &a, &b);
	assert_int_equal(getl(b.d, "sample.width", 0), 512);
	assert_int_equal(getl(b.d, "sample.height", 0), 512);
	assert_int_equal(getl(b.d, "sample.sample_steps", 0), 8); /* already lighter: kept */
	assert_int_equal(getl(b.d, "sample.sample_every", 0), 500);
	/* 1024×1792 → 292.6 → 288 × 512 */
	assert_int_equal(getl(b.d, "sample.samples[0].width", 0), 288);
	assert_int_equal(getl(b.d, "sample.samples[0].height", 0), 512);
	/* width 2048 with the section's 1536 height: 512 × 384, height written to keep aspect */
	assert_int_equal(getl(b.d, "sample.samples[1].width", 0), 512);
	assert_int_equal(getl(b.d, "sample.samples[1].height", 0), 384);
	assert_null(getp(b.d, "sample.samples[2].width"));
	assert_int_equal(getl(b.d, "sample.samples[3].width", 0), 256);
	assert_int_equal(getl(b.d, "sample.samples[3].height", 0), 384);
	assert_int_equal(getl(b.d, "sample.samples[3].sample_steps", 0), 20);
	size_t len;
	assert_non_null(strstr(doc_text(b.d, &len), "width: 288   # oomfix: was 1024; portrait\n"));
	unload(&a);
	unload(&b);

	/* Absent sample_every is 100 for the trainer, so it is written as 500. */
	apply_named("block_resolutions.yaml", FIX_LIGHTER_SAMPLING, true, &a, &b);
	assert_int_equal(getl(b.d, "sample.sample_every", 0), 500);
	assert_int_equal(getl(b.d, "sample.width", 0), 512);
	assert_int_equal(getl(b.d, "sample.height", 0), 288);
	assert_int_equal(getl(b.d, "sample.sample_steps", 0), 20);
	unload(&a);
	unload(&b);
}

static void frames_ladder(const char *file, const long long *want, size_t nwant, int grid)
{
	char *p = fixture(file);
	struct loaded cur, next;
	load(p, &cur);
	free(p);
	assert_int_equal(fix_frame_grid(cur.j), grid);
	for (size_t r = 0; r < nwant; r++) {
		assert_int_equal(fix_status(cur.j, FIX_NUM_FRAMES, NULL, 0), FIX_TODO);
		assert_true(apply(&cur, FIX_NUM_FRAMES, true, &next));
		assert_int_equal(getl(next.d, "datasets[0].num_frames", 0), want[r]);
		unload(&cur);
		cur = next;
	}
	assert_int_equal(fix_status(cur.j, FIX_NUM_FRAMES, NULL, 0), FIX_DONE);
	unload(&cur);
}

/* D18: halving 81 frames lands on 41 (the 4k+1 point nearest half), and after a failed training
 * step the previews keep their frames: only the clips are shortened. */
static void test_frames_D18(void **state)
{
	(void)state;
	char *p = fixture("wan_video.yaml");
	struct loaded a, b;
	load(p, &a);
	free(p);
	struct fix_edit_list fl;
	struct err e;
	err_clear(&e);
	assert_int_equal(fix_edits_after(a.j, FIX_NUM_FRAMES, true, DIAG_P_TRAINING, &fl, &e), ERR_OK);
	assert_int_equal(doc_apply(a.d, fl.edits, fl.n, &b.d, &e), ERR_OK);
	fix_edits_free(&fl);
	assert_int_equal(getl(b.d, "datasets[0].num_frames", 0), 61); /* 121 → 61 */
	assert_int_equal(getl(b.d, "sample.num_frames", 0), 81);      /* left alone */
	doc_free(&b.d);
	assert_int_equal(fix_edits_after(a.j, FIX_NUM_FRAMES, true, DIAG_P_SAMPLING, &fl, &e), ERR_OK);
	assert_int_equal(doc_apply(a.d, fl.edits, fl.n, &b.d, &e), ERR_OK);
	fix_edits_free(&fl);
	assert_int_equal(getl(b.d, "sample.num_frames", 0), 41);      /* 81 → 41 */
	doc_free(&b.d);
	unload(&a);
}

/* D40: a comment beside a value a fix changed says what the value was, so it does not lie;
 * a plain SET (the user's own edit) keeps the comment as it is. */
static void test_comments_D40(void **state)
{
	(void)state;
	struct loaded a, b;
	size_t len;
	apply_named("legacy_accum.yaml", FIX_GRADIENT_CHECKPOINTING, true, &a, &b);
	assert_non_null(strstr(doc_text(b.d, &len),
			       "gradient_checkpointing: true # oomfix: was false; turned off to go faster\n"));
	struct doc_edit ed = { .op = DOC_EDIT_SET, .path = PROC "train.gradient_checkpointing",
			       .value = "true" };
	struct doc *c = NULL;
	struct err e;
	err_clear(&e);
	assert_int_equal(doc_apply(a.d, &ed, 1, &c, &e), ERR_OK);
	assert_non_null(strstr(doc_text(c, &len),
			       "gradient_checkpointing: true # turned off to go faster\n"));
	doc_free(&c);
	unload(&a);
	unload(&b);
}

static void test_frames_grids(void **state)
{
	static const long long wan[] = { 61, 29, 13, 9 }, ltx[] = { 57, 25, 9 };
	frames_ladder("wan_video.yaml", wan, 4, 4);
	frames_ladder("ltx_video.yaml", ltx, 3, 8);

	struct loaded a, b;
	apply_named("wan_video.yaml", FIX_NUM_FRAMES, true, &a, &b);
	assert_int_equal(getl(b.d, "datasets[1].num_frames", 0), 25); /* 49 → 25 on 4k+1 */
	assert_null(getp(b.d, "datasets[2].num_frames"));
	assert_int_equal(getl(b.d, "sample.num_frames", 0), 41);      /* 81 → 41 (D18) */
	size_t len;
	assert_non_null(strstr(doc_text(b.d, &len), "num_frames: 61 # oomfix: was 121; five seconds\n"));
	unload(&a);
	unload(&b);

	apply_named("ltx_video.yaml", FIX_NUM_FRAMES, true, &a, &b);
	assert_int_equal(getl(b.d, "sample.num_frames", 0), 57);
	assert_int_equal(getl(b.d, "sample.samples[0].num_frames", 0), 25); /* 57 → 28 → 25 */
	unload(&a);
	unload(&b);

	char *p = fixture("per_prompt_sizes.yaml");
	load(p, &a);
	free(p);
	assert_int_equal(fix_status(a.j, FIX_NUM_FRAMES, NULL, 0), FIX_NOT_APPLICABLE);
	assert_int_equal(fix_frame_grid(a.j), 0);
	unload(&a);
}

static void test_low_vram(void **state)
{
	struct loaded a, b;
	char *p = fixture("no_low_vram.yaml");
	load(p, &a);
	free(p);
	assert_int_equal(fix_status(a.j, FIX_LOW_VRAM, NULL, 0), FIX_NOT_APPLICABLE);
	unload(&a);

	apply_named("flux_no_quant.yaml", FIX_LOW_VRAM, true, &a, &b);
	/* the web UI hides the checkbox for flux, but its loader honours low_vram */
	assert_true(getb(b.d, "model.low_vram", false));
	assert_true(getb(b.d, "model.quantize", false));
	assert_true(getb(b.d, "model.quantize_te", false));
	size_t len;
	assert_non_null(strstr(doc_text(b.d, &len), "quantize_te: true # oomfix: was false; keep T5 in bf16\n"));
	unload(&a);
	unload(&b);

	apply_named("block_resolutions.yaml", FIX_LOW_VRAM, true, &a, &b);
	assert_true(getb(b.d, "model.low_vram", false));
	assert_true(getb(b.d, "model.quantize", false));
	assert_true(getb(b.d, "model.quantize_te", false));
	struct fix_edit_list fl;
	struct err e;
	assert_int_equal(fix_edits(a.j, FIX_LOW_VRAM, true, &fl, &e), ERR_OK);
	assert_non_null(strstr(fl.note, "layer_offloading")); /* qwen_image can offload layers */
	fix_edits_free(&fl);
	unload(&a);
	unload(&b);
}

static void test_gc_and_disable(void **state)
{
	struct loaded a, b;
	apply_named("legacy_accum.yaml", FIX_GRADIENT_CHECKPOINTING, true, &a, &b);
	size_t len;
	assert_non_null(strstr(doc_text(b.d, &len),
			       "gradient_checkpointing: true # oomfix: was false; turned off to go faster\n"));
	unload(&a);
	unload(&b);

	char *p = fixture("ltx_video.yaml"); /* no gradient_checkpointing key: default on */
	load(p, &a);
	free(p);
	assert_int_equal(fix_status(a.j, FIX_GRADIENT_CHECKPOINTING, NULL, 0), FIX_DONE);
	unload(&a);

	apply_named("ltx_video.yaml", FIX_DISABLE_SAMPLING, true, &a, &b);
	assert_true(getb(b.d, "train.disable_sampling", false));
	unload(&a);
	unload(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_per_dataset),
		cmocka_unit_test(test_batch_legacy),
		cmocka_unit_test(test_bucket_block_list),
		cmocka_unit_test(test_bucket_single_ladder),
		cmocka_unit_test(test_lighter_per_prompt),
		cmocka_unit_test(test_frames_grids),
		cmocka_unit_test(test_frames_D18),
		cmocka_unit_test(test_comments_D40),
		cmocka_unit_test(test_flow_list_comment_E9),
		cmocka_unit_test(test_low_vram),
		cmocka_unit_test(test_gc_and_disable),
		cmocka_unit_test(test_own_fixtures),
		cmocka_unit_test(test_examples),
	};
	return cmocka_run_group_tests_name("fix", tests, NULL, NULL);
}
