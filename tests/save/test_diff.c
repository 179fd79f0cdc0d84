/* test_diff.c — diff_unified: exact output for the small cases, and the property that patch(1)
 * applied to the old text with our diff gives the new text, over many random edits of real job
 * files. A strict in-process applier checks the same property without patch, many more times. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "oomfix/diff.h"

/* A job file in the shape AI Toolkit uses; the fixtures folder adds the real examples. */
static const char job_yaml[] =
	"---\n"
	"job: extension\n"
	"config:\n"
	"  # this name will be the folder and filename name\n"
	"  name: \"my_first_flux_lora_v1\"\n"
	"  process:\n"
	"    - type: 'sd_trainer'\n"
	"      training_folder: \"output\"\n"
	"      device: cuda:0\n"
	"      network:\n"
	"        type: \"lora\"\n"
	"        linear: 16\n"
	"        linear_alpha: 16\n"
	"      save:\n"
	"        dtype: float16\n"
	"        save_every: 250\n"
	"        max_step_saves_to_keep: 4\n"
	"      datasets:\n"
	"        - folder_path: \"/path/to/images/folder\"\n"
	"          caption_ext: \"txt\"\n"
	"          caption_dropout_rate: 0.05\n"
	"          shuffle_tokens: false\n"
	"          cache_latents_to_disk: true\n"
	"          resolution: [ 512, 768, 1024 ]\n"
	"      train:\n"
	"        batch_size: 1\n"
	"        steps: 2000\n"
	"        gradient_accumulation_steps: 1\n"
	"        train_unet: true\n"
	"        train_text_encoder: false\n"
	"        gradient_checkpointing: true\n"
	"        noise_scheduler: \"flowmatch\"\n"
	"        optimizer: \"adamw8bit\"\n"
	"        lr: 1e-4\n"
	"        ema_config:\n"
	"          use_ema: true\n"
	"          ema_decay: 0.99\n"
	"        dtype: bf16\n"
	"      model:\n"
	"        name_or_path: \"black-forest-labs/FLUX.1-dev\"\n"
	"        is_flux: true\n"
	"        quantize: true\n"
	"      sample:\n"
	"        sampler: \"flowmatch\"\n"
	"        sample_every: 250\n"
	"        width: 1024\n"
	"        height: 1024\n"
	"        prompts:\n"
	"          - \"woman with red hair, playing chess at the park\"\n"
	"          - \"a man holding a sign that says, 'this is a sign'\"\n"
	"        neg: \"\"\n"
	"        seed: 42\n"
	"        walk_seed: true\n"
	"        guidance_scale: 4\n"
	"        sample_steps: 20\n"
	"meta:\n"
	"  name: \"[name]\"\n"
	"  version: '1.0'\n";

static char *diff_str(const char *a, const char *b, int ctx)
{
	char *d = diff_unified("a", a, strlen(a), "b", b, strlen(b), ctx);
	assert_non_null(d);
	return d;
}

/* Counts the hunk body lines starting with `ch` (the two file headers are not counted). */
static int count_lines(const char *d, char ch)
{
	int n = 0;
	const char *p = strstr(d, "\n@@");
	if (!p)
		return 0;
	for (p = p + 1; *p; p++) {
		if (*p == ch)
			n++;
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl;
	}
	return n;
}

static void test_equal_texts(void **state)
{
	(void)state;
	char *d = diff_str(job_yaml, job_yaml, 3);
	assert_string_equal(d, "");
	free(d);
	d = diff_str("", "", 3);
	assert_string_equal(d, "");
	free(d);
	d = diff_unified("a", NULL, 0, "b", NULL, 0, 3);
	assert_non_null(d);
	assert_string_equal(d, "");
	free(d);
}

static void test_single_line_change(void **state)
{
	(void)state;
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
	const char *b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n";
	char *d = diff_str(a, b, 3);
	assert_string_equal(d, "--- a\n+++ b\n"
			       "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
	free(d);

	/* The same on a real job: exactly one '-' and one '+', three context lines each side. */
	char *b2 = strdup(job_yaml);
	char *at = strstr(b2, "batch_size: 1");
	at[strlen("batch_size: ")] = '4';
	d = diff_str(job_yaml, b2, 3);
	assert_int_equal(count_lines(d, '-'), 1);
	assert_int_equal(count_lines(d, '+'), 1);
	assert_int_equal(count_lines(d, ' '), 6);
	assert_non_null(strstr(d, "\n-        batch_size: 1\n+        batch_size: 4\n"));
	free(d);
	free(b2);
}

static void test_insertion(void **state)
{
	(void)state;
	char *d = diff_str("a\nb\nc\nd\n", "a\nb\nX\nc\nd\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,4 +1,5 @@\n a\n b\n+X\n c\n d\n");
	free(d);
	/* At the very start, with no context before it. */
	d = diff_str("a\nb\nc\nd\ne\n", "X\na\nb\nc\nd\ne\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,3 +1,4 @@\n+X\n a\n b\n c\n");
	free(d);
	/* Into an empty text: the empty range names line 0. */
	d = diff_str("", "x\ny\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n");
	free(d);
}

static void test_deletion_start_end(void **state)
{
	(void)state;
	char *d = diff_str("a\nb\nc\nd\ne\n", "b\nc\nd\ne\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,4 +1,3 @@\n-a\n b\n c\n d\n");
	free(d);
	d = diff_str("a\nb\nc\nd\ne\n", "a\nb\nc\nd\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -2,4 +2,3 @@\n b\n c\n d\n-e\n");
	free(d);
	/* Everything deleted: the new range is empty and names line 0. */
	d = diff_str("a\nb\n", "", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-a\n-b\n");
	free(d);
	/* A one-line range is written without ",1", as GNU diff does. */
	d = diff_str("a\n", "", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n");
	free(d);
}

static void test_no_trailing_newline(void **state)
{
	(void)state;
	char *d = diff_str("a\nb", "a\nc", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n"
			       "\\ No newline at end of file\n+c\n\\ No newline at end of file\n");
	free(d);
	/* Adding the final newline is a change of the last line. */
	d = diff_str("a\nb", "a\nb\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n"
			       "\\ No newline at end of file\n+b\n");
	free(d);
	/* An unchanged last line without newline, shown as context, is marked too. */
	d = diff_str("a\nb", "x\nb", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-a\n+x\n b\n"
			       "\\ No newline at end of file\n");
	free(d);
}

static void test_crlf(void **state)
{
	(void)state;
	char *d = diff_str("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n");
	free(d);
	/* Only the line ending changed: still a change, the \r stays part of the line. */
	d = diff_str("a\nb\nc\n", "a\nb\r\nc\n", 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+b\r\n c\n");
	free(d);
}

static void test_context_and_hunks(void **state)
{
	(void)state;
	/* Two changes 6 unchanged lines apart share a hunk with 3 lines of context ... */
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";
	const char *b6 = "1\n2\nX\n4\n5\n6\n7\n8\n9\nY\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";
	const char *b7 = "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\nY\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";
	char *d = diff_str(a, b6, 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n 7\n"
			       " 8\n 9\n-10\n+Y\n 11\n 12\n 13\n");
	free(d);
	/* ... 7 apart they are two hunks. */
	d = diff_str(a, b7, 3);
	assert_string_equal(d, "--- a\n+++ b\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n"
			       "@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n 14\n");
	free(d);
	/* No context at all: an insertion names the line before it. */
	d = diff_str("a\nb\nc\n", "a\nb\nX\nc\n", 0);
	assert_string_equal(d, "--- a\n+++ b\n@@ -2,0 +3 @@\n+X\n");
	free(d);
	d = diff_str(a, b7, 1);
	assert_int_equal(count_lines(d, '@'), 2);
	assert_int_equal(count_lines(d, ' '), 4);
	free(d);
}

/* ---- applying a diff, strictly, in process ---- */

/* Applies diff `d` to `old` with no fuzz; returns the new text (malloc'd) or NULL when the
 * diff does not fit the old text exactly or is malformed. */
static char *apply_strict(const char *old, const char *d)
{
	size_t cap = strlen(old) + strlen(d) + 1, len = 0;
	char *out = malloc(cap);
	const char *op = old; /* next unconsumed line of old */
	long oline = 1;
	const char *p = d;
	if (!*d) {
		strcpy(out, old);
		return out;
	}
	if (strncmp(p, "--- ", 4) != 0 || !(p = strchr(p, '\n')) || strncmp(p + 1, "+++ ", 4) != 0 ||
	    !(p = strchr(p + 1, '\n')))
		goto bad;
	p++;
	while (*p) {
		long os, oc = 1, ns, nc = 1;
		if (sscanf(p, "@@ -%ld", &os) != 1)
			goto bad;
		const char *q = p + 4;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == ',')
			oc = strtol(q + 1, (char **)&q, 10);
		if (sscanf(q, " +%ld", &ns) != 1)
			goto bad;
		q = strchr(q, '+') + 1;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == ',')
			nc = strtol(q + 1, (char **)&q, 10);
		if (strncmp(q, " @@\n", 4) != 0)
			goto bad;
		p = q + 4;
		long first = oc == 0 ? os + 1 : os; /* an empty range names the line before */
		if (first < oline)
			goto bad;
		while (oline < first) { /* copy untouched lines */
			const char *nl = strchr(op, '\n');
			size_t n = nl ? (size_t)(nl - op) + 1 : strlen(op);
			if (!n)
				goto bad;
			memcpy(out + len, op, n);
			len += n;
			op += n;
			oline++;
		}
		long seen_o = 0, seen_n = 0;
		while (*p && *p != '@') {
			char kind = *p++;
			const char *nl = strchr(p, '\n');
			if (!nl)
				goto bad;
			size_t n = (size_t)(nl - p) + 1;
			bool no_eol = strncmp(nl + 1, "\\ No newline at end of file\n", 28) == 0;
			size_t body = no_eol ? n - 1 : n;
			if (kind == ' ' || kind == '-') {
				if (strncmp(op, p, body) != 0)
					goto bad;
				if (no_eol ? op[body] != '\0' : false)
					goto bad;
				op += body;
				oline++;
				seen_o++;
			}
			if (kind == ' ' || kind == '+') {
				memcpy(out + len, p, body);
				len += body;
				seen_n++;
			}
			if (kind != ' ' && kind != '-' && kind != '+')
				goto bad;
			p = nl + 1;
			if (no_eol)
				p += 28;
		}
		if (seen_o != oc || seen_n != nc)
			goto bad;
	}
	strcpy(out + len, op);
	return out;
bad:
	free(out);
	return NULL;
}

/* ---- random edits ---- */

struct lines {
	char **v;
	size_t n;
};

static struct lines split(const char *t)
{
	struct lines l = { NULL, 0 };
	size_t cap = 16;
	l.v = malloc(cap * sizeof *l.v);
	while (*t) {
		const char *nl = strchr(t, '\n');
		size_t n = nl ? (size_t)(nl - t) + 1 : strlen(t);
		if (l.n == cap)
			l.v = realloc(l.v, (cap *= 2) * sizeof *l.v);
		l.v[l.n++] = strndup(t, n);
		t += n;
	}
	return l;
}

static char *join(const struct lines *l)
{
	size_t total = 1;
	for (size_t i = 0; i < l->n; i++)
		total += strlen(l->v[i]);
	char *s = malloc(total), *p = s;
	for (size_t i = 0; i < l->n; i++)
		p = stpcpy(p, l->v[i]);
	*p = '\0';
	return s;
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static const char *const new_lines[] = {
	"        batch_size: 4\n", "        low_vram: true\n", "\n", "# comment\n",
	"          resolution: [ 512 ]\n", "        gradient_checkpointing: false\n", "x\r\n",
	"      train:\n",
};

/* One random edit; some keep the text's last line without its newline. */
static void random_edit(struct lines *l, unsigned *seed)
{
	int op = rand_r(seed) % 7;
	size_t nnew = sizeof new_lines / sizeof new_lines[0];
	size_t at = l->n ? (size_t)rand_r(seed) % l->n : 0;
	switch (op) {
	case 0: /* replace a line */
		if (!l->n)
			break;
		free(l->v[at]);
		l->v[at] = strdup(new_lines[(size_t)rand_r(seed) % nnew]);
		break;
	case 1: /* insert lines */
	case 2: {
		size_t k = 1 + (size_t)rand_r(seed) % 3;
		l->v = realloc(l->v, (l->n + k) * sizeof *l->v);
		at = (size_t)rand_r(seed) % (l->n + 1);
		memmove(l->v + at + k, l->v + at, (l->n - at) * sizeof *l->v);
		for (size_t i = 0; i < k; i++)
			l->v[at + i] = strdup(new_lines[(size_t)rand_r(seed) % nnew]);
		l->n += k;
		break;
	}
	case 3: { /* delete lines */
		size_t k = 1 + (size_t)rand_r(seed) % 4;
		if (at + k > l->n)
			k = l->n - at;
		for (size_t i = 0; i < k; i++)
			free(l->v[at + i]);
		memmove(l->v + at, l->v + at + k, (l->n - at - k) * sizeof *l->v);
		l->n -= k;
		break;
	}
	case 4: /* drop or add the final newline */
		if (l->n) {
			char *last = l->v[l->n - 1];
			size_t n = strlen(last);
			if (n && last[n - 1] == '\n') {
				last[n - 1] = '\0';
			} else {
				l->v[l->n - 1] = realloc(last, n + 2);
				strcpy(l->v[l->n - 1] + n, "\n");
			}
		}
		break;
	case 5: /* turn a line into CRLF */
		if (l->n) {
			char *s = l->v[at];
			size_t n = strlen(s);
			if (n && s[n - 1] == '\n' && (n < 2 || s[n - 2] != '\r')) {
				s = realloc(s, n + 2);
				strcpy(s + n - 1, "\r\n");
				l->v[at] = s;
			}
		}
		break;
	case 6: /* move a line elsewhere */
		if (l->n > 1) {
			char *s = l->v[at];
			memmove(l->v + at, l->v + at + 1, (l->n - at - 1) * sizeof *l->v);
			size_t to = (size_t)rand_r(seed) % l->n;
			memmove(l->v + to + 1, l->v + to, (l->n - 1 - to) * sizeof *l->v);
			l->v[to] = s;
		}
		break;
	}
	/* Only the last line may lack its newline: repair any interior one. */
	for (size_t i = 0; i + 1 < l->n; i++) {
		size_t n = strlen(l->v[i]);
		if (!n || l->v[i][n - 1] != '\n') {
			l->v[i] = realloc(l->v[i], n + 2);
			strcpy(l->v[i] + n, "\n");
		}
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, r;
	char *s = malloc(cap);
	while ((r = fread(s + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2)
			s = realloc(s, cap *= 2);
	}
	fclose(f);
	s[n] = '\0';
	if (len)
		*len = n;
	return s;
}

static int spit(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(s, 1, n, f);
	return fclose(f) == 0 && w == n ? 0 : -1;
}

/* The texts the property tests start from: the built-in job and the real examples. */
static size_t load_corpus(char **texts, size_t max)
{
	size_t n = 0;
	texts[n++] = strdup(job_yaml);
	const char *dir = getenv("SHARED_FIXTURES");
	char path[4096];
	if (!dir)
		return n;
	snprintf(path, sizeof path, "%s/aitk-examples", dir);
	DIR *d = opendir(path);
	if (!d)
		return n;
	struct dirent *de;
	while (n < max && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || (strcmp(de->d_name + l - 5, ".yaml") && strcmp(de->d_name + l - 4, ".yml")))
			continue;
		snprintf(path, sizeof path, "%s/aitk-examples/%s", dir, de->d_name);
		char *t = slurp(path, NULL);
		if (t && !memchr(t, '\0', strlen(t)))
			texts[n++] = t;
		else
			free(t);
	}
	closedir(d);
	return n;
}

static void test_random_edits_strict(void **state)
{
	(void)state;
	char *corpus[64];
	size_t nc = load_corpus(corpus, 64);
	unsigned seed = 12345;
	for (int iter = 0; iter < 3000; iter++) {
		const char *base = corpus[(size_t)iter % nc];
		struct lines l = split(base);
		int edits = 1 + rand_r(&seed) % 4;
		for (int k = 0; k < edits; k++)
			random_edit(&l, &seed);
		char *changed = join(&l);
		int ctx = iter % 5 == 0 ? rand_r(&seed) % 5 : 3;
		char *d = diff_str(base, changed, ctx);
		char *back = apply_strict(base, d);
		if (!back || strcmp(back, changed) != 0)
			fail_msg("iteration %d (context %d): applying the diff did not give the new "
				 "text\n%s",
				 iter, ctx, d);
		if (strcmp(base, changed) == 0)
			assert_string_equal(d, "");
		else
			assert_true(strlen(d) > 0);
		free(back);
		free(d);
		free(changed);
		free_lines(&l);
	}
	for (size_t i = 0; i < nc; i++)
		free(corpus[i]);
}

/* A single replaced line is always exactly one '-' and one '+' (the diff is minimal). */
static void test_single_edit_minimal(void **state)
{
	(void)state;
	char *corpus[64];
	size_t nc = load_corpus(corpus, 64);
	unsigned seed = 777;
	for (int iter = 0; iter < 500; iter++) {
		const char *base = corpus[(size_t)iter % nc];
		struct lines l = split(base);
		size_t at = (size_t)rand_r(&seed) % l.n;
		char *repl = strdup("        changed_by_test: 1\n");
		if (at == l.n - 1 && l.v[at][strlen(l.v[at]) - 1] != '\n')
			repl[strlen(repl) - 1] = '\0';
		free(l.v[at]);
		l.v[at] = repl;
		char *changed = join(&l);
		char *d = diff_str(base, changed, 3);
		assert_int_equal(count_lines(d, '-'), 1);
		assert_int_equal(count_lines(d, '+'), 1);
		free(d);
		free(changed);
		free_lines(&l);
	}
	for (size_t i = 0; i < nc; i++)
		free(corpus[i]);
}

static bool have_patch(void)
{
	return system("command -v patch >/dev/null 2>&1") == 0;
}

/* Runs GNU patch with no fuzz on dir/old with dir/d.patch into dir/out; true when it succeeded. */
static bool run_patch(const char *dir)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && patch -s -f -F0 --no-backup-if-mismatch -r rej -o out old d.patch "
		 ">log 2>&1",
		 dir);
	int st = system(cmd);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void rm_rf(const char *dir)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		print_error("could not remove %s\n", dir);
}

static char *make_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof tmpl, "%s/oomfix-diff-XXXXXX", t && *t ? t : "/tmp");
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return strdup(d);
}

/* Writes old/new/diff to a directory and checks that patch(1) makes new out of old. */
static void check_with_patch(const char *dir, const char *old, size_t oldlen, const char *neu,
			     size_t newlen, int ctx, int iter)
{
	char path[4096];
	char *d = diff_unified("old", old, oldlen, "new", neu, newlen, ctx);
	assert_non_null(d);
	if (!*d) {
		assert_true(oldlen == newlen && memcmp(old, neu, oldlen) == 0);
		free(d);
		return;
	}
	snprintf(path, sizeof path, "%s/old", dir);
	assert_int_equal(spit(path, old, oldlen), 0);
	snprintf(path, sizeof path, "%s/d.patch", dir);
	assert_int_equal(spit(path, d, strlen(d)), 0);
	snprintf(path, sizeof path, "%s/out", dir);
	unlink(path);
	if (!run_patch(dir))
		fail_msg("iteration %d: patch refused the diff:\n%s", iter, d);
	size_t outlen;
	char *out = slurp(path, &outlen);
	assert_non_null(out);
	if (outlen != newlen || memcmp(out, neu, newlen) != 0)
		fail_msg("iteration %d: patch gave a different text from the diff:\n%s", iter, d);
	free(out);
	free(d);
}

static void test_random_edits_patch(void **state)
{
	(void)state;
	if (!have_patch())
		skip();
	char *dir = make_tmpdir();
	char *corpus[64];
	size_t nc = load_corpus(corpus, 64);
	unsigned seed = 4242;
	for (int iter = 0; iter < 300; iter++) {
		const char *base = corpus[(size_t)iter % nc];
		struct lines l = split(base);
		int edits = 1 + rand_r(&seed) % 4;
		for (int k = 0; k < edits; k++)
			random_edit(&l, &seed);
		char *changed = join(&l);
		check_with_patch(dir, base, strlen(base), changed, strlen(changed), 3, iter);
		free(changed);
		free_lines(&l);
	}
	for (size_t i = 0; i < nc; i++)
		free(corpus[i]);
	rm_rf(dir);
	free(dir);
}

/* Big texts: a few edits in 200 000 lines, and two unrelated 30 000-line texts, which pass the
 * cost bound and take the heuristic path; both must still apply exactly. */
static void test_large_texts(void **state)
{
	(void)state;
	const long n = 200000;
	size_t cap = (size_t)n * 16, len = 0;
	char *a = malloc(cap), *b = malloc(cap + 64);
	for (long i = 0; i < n; i++)
		len += (size_t)sprintf(a + len, "line: %ld\n", i);
	memcpy(b, a, len + 1);
	b[10] = 'X';                          /* line 2 */
	strchr(b + len / 2, '\n')[1] = 'Y';   /* the first letter of a line in the middle */
	b[len - 2] = 'Z';                     /* the last digit of the last line */
	char *d = diff_unified("a", a, len, "b", b, len, 3);
	assert_non_null(d);
	assert_int_equal(count_lines(d, '-'), 3);
	assert_int_equal(count_lines(d, '+'), 3);
	char *back = apply_strict(a, d);
	assert_non_null(back);
	assert_string_equal(back, b);
	free(back);
	free(d);

	/* Unrelated texts over a small alphabet, so there are many short matches to consider. */
	unsigned seed = 99;
	size_t la = 0, lb = 0;
	for (long i = 0; i < 30000; i++) {
		la += (size_t)sprintf(a + la, "k%d\n", rand_r(&seed) % 8);
		lb += (size_t)sprintf(b + lb, "k%d\n", rand_r(&seed) % 8);
	}
	d = diff_unified("a", a, la, "b", b, lb, 3);
	assert_non_null(d);
	back = apply_strict(a, d);
	assert_non_null(back);
	assert_string_equal(back, b);
	if (have_patch()) {
		char *dir = make_tmpdir();
		check_with_patch(dir, a, la, b, lb, 3, 0);
		rm_rf(dir);
		free(dir);
	}
	free(back);
	free(d);
	free(a);
	free(b);
}

/* diff_apply: the edits of a -> b re-applied to a text changed elsewhere, and refused where
 * their lines changed too. */
static void apply_check(const char *a, const char *b, const char *onto, const char *want,
			size_t want_applied, size_t want_failed)
{
	char *d = diff_unified("a", a, strlen(a), "b", b, strlen(b), 3);
	size_t len = 0, ok = 0, bad = 0;
	char *r;

	assert_non_null(d);
	r = diff_apply(onto, strlen(onto), d, &len, &ok, &bad);
	assert_non_null(r);
	assert_int_equal(len, strlen(r));
	assert_string_equal(r, want);
	assert_int_equal(ok, want_applied);
	assert_int_equal(bad, want_failed);
	free(r);
	free(d);
}

static void test_apply(void **state)
{
	(void)state;
	const char *a = "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\n";
	const char *b = "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 11\n";

	/* onto the same text: the same result */
	apply_check(a, b, a, b, 1, 0);
	/* onto a text changed far from the edit (a line added at the top): both changes */
	apply_check(a, b, "# new\na: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\n",
		    "# new\na: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 11\n", 1, 0);
	/* onto a text where the edited line changed too: the edit is left out */
	apply_check(a, b, "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 12\n",
		    "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 12\n", 0, 1);
	/* two edits around a line that changed on disk: both still apply, that line is theirs */
	apply_check("a\nb: 2\nsteps: 2000\nacc: 1\nc\n", "a\nb: 1\nsteps: 2000\nacc: 2\nc\n",
		    "a\nb: 2\nsteps: 3000\nacc: 1\nc\n", "a\nb: 1\nsteps: 3000\nacc: 2\nc\n", 2, 0);
	/* no final newline survives */
	apply_check("x\ny", "x\nz", "x\ny", "x\nz", 1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_texts),
		cmocka_unit_test(test_single_line_change),
		cmocka_unit_test(test_insertion),
		cmocka_unit_test(test_deletion_start_end),
		cmocka_unit_test(test_no_trailing_newline),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_context_and_hunks),
		cmocka_unit_test(test_random_edits_strict),
		cmocka_unit_test(test_single_edit_minimal),
		cmocka_unit_test(test_random_edits_patch),
		cmocka_unit_test(test_large_texts),
		cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
