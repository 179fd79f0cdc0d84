/* The memory estimate (SPEC §12): scored on the calibration points and on the example jobs that
 * name their card; the loader rules of memory-reference §4; the card from --vram and nvidia-smi;
 * the path to a fitting job. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "oomfix/doc.h"
#include "oomfix/estimate.h"
#include "oomfix/job.h"

#define GIB 1073741824.0

struct loaded {
	struct doc *d;
	struct job *j;
};

static void load_text(const char *text, struct loaded *l)
{
	struct err e;
	err_clear(&e);
	l->d = NULL;
	l->j = NULL;
	int rc = doc_load("test.yaml", text, strlen(text), &l->d, &e);
	if (rc)
		fail_msg("doc_load: %s", e.msg);
	rc = job_from_doc(l->d, &l->j, &e);
	if (rc)
		fail_msg("job_from_doc: %s", e.msg);
}

static void unload(struct loaded *l)
{
	job_free(&l->j);
	doc_free(&l->d);
}

/* A job with the given model and train settings. */
static void job_text(char *buf, size_t sz, const char *arch, const char *model, const char *train,
		     const char *dataset, const char *sample)
{
	snprintf(buf, sz,
		 "job: extension\n"
		 "config:\n"
		 "  name: t\n"
		 "  process:\n"
		 "    - type: sd_trainer\n"
		 "      network:\n"
		 "        type: lora\n"
		 "        linear: 16\n"
		 "      datasets:\n"
		 "        - folder_path: /data\n"
		 "          cache_latents_to_disk: true\n"
		 "%s"
		 "      train:\n"
		 "        optimizer: adamw8bit\n"
		 "%s"
		 "      model:\n"
		 "        name_or_path: x\n"
		 "        arch: %s\n"
		 "%s"
		 "%s",
		 dataset, train, arch, model, sample);
}

static double gib_of(int64_t b)
{
	return (double)b / GIB;
}

/* ---- the points -------------------------------------------------------------------------- */

static char *file_text(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, fp) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = 0;
	fclose(fp);
	return s;
}

static const char *tests_dir(void)
{
	const char *t = getenv("TESTS_DIR");
	return t ? t : "tests";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A tab-separated table: its header's names and each line's fields (in place). */
#define MAXF 48
struct tsv {
	char *text, *save;
	char *name[MAXF];
	int nnames;
};

static int split_tabs(char *line, char **f)
{
	int n = 0;
	for (char *s = line, *tab; n < MAXF; s = tab + 1) {
		f[n++] = s;
		if (!(tab = strchr(s, '\t')))
			break;
		*tab = 0;
	}
	return n;
}

static void tsv_open(struct tsv *t, const char *path)
{
	memset(t, 0, sizeof *t);
	t->text = file_text(path);
	if (!t->text)
		fail_msg("cannot read %s", path);
	char *line;
	do
		line = strtok_r(t->save ? NULL : t->text, "\n", &t->save);
	while (line && line[0] == '#');
	assert_non_null(line);
	t->nnames = split_tabs(line, t->name);
}

static bool tsv_next(struct tsv *t, char **f)
{
	char *line = strtok_r(NULL, "\n", &t->save);
	if (!line)
		return false;
	int n = split_tabs(line, f);
	if (n != t->nnames)
		fail_msg("a line of %d fields under a header of %d", n, t->nnames);
	return true;
}

static const char *col(const struct tsv *t, char **f, const char *name)
{
	for (int i = 0; i < t->nnames; i++)
		if (!strcmp(t->name[i], name))
			return f[i];
	fail_msg("no column %s", name);
	return NULL;
}

static bool colb(const struct tsv *t, char **f, const char *name)
{
	return !strcmp(col(t, f, name), "true");
}

static double cold(const struct tsv *t, char **f, const char *name)
{
	return atof(col(t, f, name));
}

/* Every point of tests/estimate/points.tsv (written by scripts/calibrate.py) as the est_input
 * the script built: the C model must give what the script's gave, phase by phase (the two are
 * one model), and classify the points it was fitted on. */
static void test_points(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s/estimate/points.tsv", tests_dir());
	struct tsv t;
	tsv_open(&t, path);
	char *f[MAXF];
	int npoints = 0, judged = 0, right = 0, npeaks = 0;
	double errs[256];
	while (tsv_next(&t, f)) {
		const char *id = col(&t, f, "id");
		struct est_input in;
		memset(&in, 0, sizeof in);
		snprintf(in.arch, sizeof in.arch, "%s", col(&t, f, "arch"));
		snprintf(in.variant, sizeof in.variant, "%s", col(&t, f, "variant"));
		in.quantize = colb(&t, f, "quantize");
		snprintf(in.qtype, sizeof in.qtype, "%s", col(&t, f, "qtype"));
		in.quantize_te = colb(&t, f, "quantize_te");
		snprintf(in.qtype_te, sizeof in.qtype_te, "%s", col(&t, f, "qtype_te"));
		in.low_vram = colb(&t, f, "low_vram");
		in.offload = colb(&t, f, "offload");
		in.offload_tr = cold(&t, f, "offload_tr");
		in.offload_te = cold(&t, f, "offload_te");
		in.assistant = colb(&t, f, "assistant");
		in.res = cold(&t, f, "res");
		in.frames = atoll(col(&t, f, "frames"));
		in.batch = atoll(col(&t, f, "batch"));
		in.gc = colb(&t, f, "gc");
		in.rank = cold(&t, f, "rank");
		snprintf(in.optimizer, sizeof in.optimizer, "%s", col(&t, f, "optimizer"));
		in.adapter_attn = colb(&t, f, "adapter_attn");
		in.adapter_bf16 = colb(&t, f, "adapter_bf16");
		in.te_gpu = colb(&t, f, "te_gpu");
		in.cache_latents = colb(&t, f, "cache_latents");
		in.control = colb(&t, f, "control");
		in.sampling = colb(&t, f, "sampling");
		in.baseline = colb(&t, f, "baseline");
		in.sample_w = cold(&t, f, "sample_w");
		in.sample_h = cold(&t, f, "sample_h");
		in.sample_frames = cold(&t, f, "sample_frames");
		in.guidance = colb(&t, f, "guidance");
		struct estimate est;
		assert_int_equal(estimate_input(&in, &est), ERR_OK);
		if (!est.known)
			fail_msg("%s: no row for %s", id, in.arch);
		double judged_gib = 0;
		for (int p = 0; p < EST_NPHASES; p++) {
			char name[48];
			snprintf(name, sizeof name, "pred_%s", est_phase_name((enum est_phase)p));
			const char *want = col(&t, f, name);
			if (!strcmp(want, "-")) {
				if (est.phase[p].on)
					fail_msg("%s: %s is on here, off in calibrate.py", id, name);
				continue;
			}
			double w = atof(want), got = gib_of(est.phase[p].bytes);
			if (!est.phase[p].on || fabs(got - w) > 0.001 * w + 0.002)
				fail_msg("%s: %s is %.3f GiB here, %.3f GiB in calibrate.py", id,
					 est_phase_name((enum est_phase)p), got, w);
			/* the terms add up to the phase */
			int64_t tv[EST_NTERMS], sum = 0;
			est_terms_list(&est.phase[p].terms, tv);
			for (int k = 0; k < EST_NTERMS; k++)
				sum += tv[k];
			if (llabs(sum - est.phase[p].bytes) > 8)
				fail_msg("%s: the terms of %s add up to %lld, not %lld", id, name,
					 (long long)sum, (long long)est.phase[p].bytes);
			if (p == EST_TRAINING || !strcmp(col(&t, f, "aitk"), "true"))
				judged_gib = fmax(judged_gib, got);
		}
		if (strcmp(col(&t, f, "card_gib"), "-") && strcmp(col(&t, f, "outcome"), "-")) {
			judged++;
			right += (judged_gib <= cold(&t, f, "card_gib")) ==
				 !strcmp(col(&t, f, "outcome"), "fits");
		}
		if (strcmp(col(&t, f, "peak"), "-") && !strcmp(col(&t, f, "peak_kind"), "peak")) {
			enum est_phase ph;
			assert_true(est_phase_parse(col(&t, f, "peak_phase"), &ph));
			double peak = cold(&t, f, "peak"), got = gib_of(est.phase[ph].bytes);
			if (npeaks < 256)
				errs[npeaks++] = fabs(got - peak) / peak;
		}
		npoints++;
	}
	free(t.text);
	qsort(errs, (size_t)npeaks, sizeof *errs, cmp_double);
	double median = npeaks ? errs[npeaks / 2] : 1;
	printf("# %d points; %d of %d classified right by the centre; peak error median %.0f%% over "
	       "%d peaks\n", npoints, right, judged, 100 * median, npeaks);
	assert_true(npoints >= 100);
	assert_true(judged >= 80);
	assert_true(right * 100 >= judged * 85);
	assert_true(median <= 0.25);
}

/* The row of arch-memory.tsv that each architecture of data/activations-sim.tsv is. */
static const struct {
	const char *sim, *arch, *variant;
	int px, txt;
} sim_rows[] = {
	{ "flux", "flux", "-", 16, 512 },       { "flux2", "flux2", "-", 16, 512 },
	{ "chroma", "chroma", "-", 16, 512 },   { "qwen_image", "qwen_image", "-", 16, 256 },
	{ "wan21_14b", "wan21", "-", 16, 512 }, { "wan21_1.3b", "wan21", "1.3b", 16, 512 },
	{ "wan22_5b", "wan22_5b", "-", 32, 512 }, { "zimage", "zimage", "-", 16, 512 },
	{ "sd35", "sd3", "-", 16, 333 },        { "krea2", "krea2", "-", 16, 256 },
	{ "sdxl", "sdxl", "-", 8, 77 },         { "sd15", "sd1", "-", 8, 77 },
};

struct sim_row {
	int arch; /* index in sim_rows */
	int h, w, frames, batch;
	double saved, ckpt;
};

/* The counted activations of a sim row's shape (GiB), checkpointing on or off. */
static double counted(const struct sim_row *r, bool gc)
{
	struct est_input in;
	memset(&in, 0, sizeof in);
	snprintf(in.arch, sizeof in.arch, "%s", sim_rows[r->arch].arch);
	snprintf(in.variant, sizeof in.variant, "%s", sim_rows[r->arch].variant);
	snprintf(in.qtype, sizeof in.qtype, "bf16");
	snprintf(in.optimizer, sizeof in.optimizer, "adamw");
	/* a square bucket of the same number of latent tokens */
	int px = sim_rows[r->arch].px;
	in.res = sqrt((double)(r->h / px) * (double)(r->w / px)) * px;
	in.frames = r->frames;
	in.batch = r->batch;
	in.gc = gc;
	in.rank = 16;
	in.cache_latents = true;
	struct estimate est;
	assert_int_equal(estimate_input(&in, &est), ERR_OK);
	assert_true(est.known);
	assert_true(est.counted);
	return est.counted_gib;
}

/* data/activations-sim.tsv against the model: every row within 15 %, and every change of one
 * setting (batch, bucket, frames, checkpointing) within 30 % of the table's change. */
static void test_sim(void **state)
{
	(void)state;
	char path[1024];
	const char *root = getenv("SOURCE_ROOT");
	snprintf(path, sizeof path, "%s/data/activations-sim.tsv", root ? root : ".");
	struct tsv t;
	tsv_open(&t, path);
	char *f[MAXF];
	static struct sim_row rows[512];
	int n = 0;
	while (tsv_next(&t, f) && n < 512) {
		const char *a = col(&t, f, "arch");
		int k = -1;
		for (size_t i = 0; i < sizeof sim_rows / sizeof *sim_rows; i++)
			if (!strcmp(sim_rows[i].sim, a))
				k = (int)i;
		if (k < 0)
			fail_msg("activations-sim.tsv: an arch the test does not know: %s", a);
		rows[n++] = (struct sim_row){ k, atoi(col(&t, f, "height")), atoi(col(&t, f, "width")),
					      atoi(col(&t, f, "frames")), atoi(col(&t, f, "batch")),
					      cold(&t, f, "saved_gib"), cold(&t, f, "ckpt_gib") };
	}
	free(t.text);
	assert_true(n >= 150);
	int checked = 0, changes = 0;
	double worst = 0, worst_change = 0;
	for (int i = 0; i < n; i++) {
		for (int gc = 0; gc < 2; gc++) {
			double want = gc ? rows[i].ckpt : rows[i].saved, got = counted(&rows[i], gc);
			double e = fabs(got - want) / want;
			worst = fmax(worst, e);
			if (e > 0.15)
				fail_msg("%s %dx%d, %d frames, batch %d, checkpointing %s: %.3f GiB "
					 "counted, %.3f modelled", sim_rows[rows[i].arch].sim, rows[i].w,
					 rows[i].h, rows[i].frames, rows[i].batch, gc ? "on" : "off",
					 want, got);
			checked++;
		}
		/* checkpointing off against on, the same shape */
		double dw = rows[i].saved - rows[i].ckpt;
		double dg = counted(&rows[i], false) - counted(&rows[i], true);
		worst_change = fmax(worst_change, fabs(dg - dw) / dw);
		if (fabs(dg - dw) > 0.3 * dw)
			fail_msg("%s: checkpointing off adds %.2f GiB counted, %.2f modelled",
				 sim_rows[rows[i].arch].sim, dw, dg);
		changes++;
		/* one setting changed against the next row of the same arch */
		for (int j = 0; j < n; j++) {
			const struct sim_row *a = &rows[i], *b = &rows[j];
			if (i == j || a->arch != b->arch)
				continue;
			int diff = (a->h != b->h || a->w != b->w) + (a->frames != b->frames) +
				   (a->batch != b->batch);
			bool up = b->h * b->w * b->frames * b->batch > a->h * a->w * a->frames * a->batch;
			if (diff != 1 || !up)
				continue;
			for (int gc = 0; gc < 2; gc++) {
				double want = gc ? b->ckpt - a->ckpt : b->saved - a->saved;
				double got = counted(b, gc) - counted(a, gc);
				double e = fabs(got - want) / fabs(want);
				worst_change = fmax(worst_change, e);
				if (e > 0.3)
					fail_msg("%s: %dx%dx%d b%d -> %dx%dx%d b%d (checkpointing %s) "
						 "adds %.2f GiB counted, %.2f modelled",
						 sim_rows[a->arch].sim, a->w, a->h, a->frames, a->batch,
						 b->w, b->h, b->frames, b->batch, gc ? "on" : "off",
						 want, got);
				changes++;
			}
		}
	}
	printf("# %d counted rows, worst %.1f%%; %d one-setting changes, worst %.1f%%\n", checked,
	       100 * worst, changes, 100 * worst_change);
	assert_true(changes >= 36);
}

/* The one seam: est_input_of reads what the model needs from the job, and nothing else does. */
static void test_input_of(void **state)
{
	(void)state;
	char job[4096];
	job_text(job, sizeof job, "wan21",
		 "        quantize: true\n        qtype: uint4\n        low_vram: true\n"
		 "        assistant_lora_path: ostris/wan_assistant\n",
		 "        batch_size: 2\n        gradient_checkpointing: false\n"
		 "        cache_text_embeddings: true\n        skip_first_sample: true\n",
		 "          resolution: [512, 768]\n          num_frames: 33\n"
		 "          control_path: /data/ctrl\n",
		 "      sample:\n        width: 832\n        height: 480\n        num_frames: 41\n"
		 "        guidance_scale: 5\n");
	struct loaded l;
	load_text(job, &l);
	struct est_input in;
	est_input_of(l.j, &in);
	assert_string_equal(in.arch, "wan21");
	assert_true(in.quantize);
	assert_string_equal(in.qtype, "uint4");
	assert_true(in.low_vram);
	assert_true(in.assistant);
	assert_true(in.res == 768);
	assert_int_equal(in.frames, 33);
	assert_int_equal(in.batch, 2);
	assert_false(in.gc);
	assert_true(in.rank == 16);
	assert_false(in.te_gpu);
	assert_true(in.cache_latents);
	assert_true(in.control);
	assert_true(in.sampling);
	assert_false(in.baseline);
	assert_true(in.sample_w == 832 && in.sample_h == 480 && in.sample_frames == 41);
	assert_true(in.guidance);
	/* estimate_job is estimate_input of it */
	struct estimate a, b;
	estimate_job(l.j, &a);
	estimate_input(&in, &b);
	for (int p = 0; p < EST_NPHASES; p++)
		assert_int_equal(a.phase[p].bytes, b.phase[p].bytes);
	assert_false(in.adapter_attn); /* AI Toolkit's LoRA: every linear layer, in fp32 */
	assert_false(in.adapter_bf16);
	unload(&l);

	/* network_kwargs.only_if_contains naming the attention's projections narrows the LoRA to
	 * them (toolkit/lora_special.py): a smaller adapter, the same step otherwise. */
	static const char *const narrow[] = {
		"          only_if_contains:\n            - attn.to_q\n            - attn.to_k\n"
		"            - attn.to_v\n            - attn.to_out\n",
		"          only_if_contains: [\"attn\"]\n",
	};
	static const char *const wide[] = {
		"          only_if_contains:\n            - attn.to_q\n            - ff.net\n",
		"          only_if_contains: []\n",
		"          only_if_contains: attn\n", /* not a list: the trainer's default */
	};
	struct estimate all, attn;
	char base[4096];
	job_text(base, sizeof base, "flux", "        quantize: true\n", "", "", "");
	load_text(base, &l);
	est_input_of(l.j, &in);
	assert_false(in.adapter_attn);
	estimate_input(&in, &all);
	unload(&l);
	for (size_t i = 0; i < sizeof narrow / sizeof *narrow + sizeof wide / sizeof *wide; i++) {
		bool is_narrow = i < sizeof narrow / sizeof *narrow;
		const char *kw = is_narrow ? narrow[i] : wide[i - sizeof narrow / sizeof *narrow];
		char nj[4096], *at;
		snprintf(nj, sizeof nj, "%s", base);
		at = strstr(nj, "        linear: 16\n");
		assert_non_null(at);
		at += strlen("        linear: 16\n");
		char tail[4096];
		snprintf(tail, sizeof tail, "%s", at);
		snprintf(at, sizeof nj - (size_t)(at - nj), "        network_kwargs:\n%s%s", kw, tail);
		load_text(nj, &l);
		est_input_of(l.j, &in);
		assert_int_equal(in.adapter_attn, is_narrow);
		estimate_input(&in, &attn);
		if (is_narrow) {
			assert_true(attn.phase[EST_TRAINING].terms.adapter <
				    all.phase[EST_TRAINING].terms.adapter / 2);
			assert_int_equal(attn.phase[EST_TRAINING].terms.activations,
					 all.phase[EST_TRAINING].terms.activations);
		} else {
			assert_int_equal(attn.phase[EST_TRAINING].bytes,
					 all.phase[EST_TRAINING].bytes);
		}
		unload(&l);
	}
}

/* ---- the example jobs that name their card ------------------------------------------------- */

static void test_examples(void **state)
{
	(void)state;
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/estimate/examples", tests_dir());
	DIR *dp = opendir(dir);
	assert_non_null(dp);
	struct dirent *de;
	int n = 0, fit = 0;
	while ((de = readdir(dp))) {
		const char *name = de->d_name, *u = strrchr(name, '_');
		int gb;
		if (!strstr(name, ".yaml") || !u || sscanf(u, "_%d", &gb) != 1)
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		char *text = file_text(path);
		assert_non_null(text);
		struct loaded l;
		load_text(text, &l);
		free(text);
		struct estimate est;
		estimate_job(l.j, &est);
		assert_true(est.known);
		char v[16];
		int64_t card;
		snprintf(v, sizeof v, "%d", gb);
		struct err e;
		assert_int_equal(estimate_parse_vram(v, &card, NULL, NULL, &e), ERR_OK);
		enum est_phase at;
		enum est_verdict verdict = estimate_verdict(&est, card, &at);
		printf("# %-42s %2d GB: %s (%s)\n", name, gb, est_verdict_name(verdict),
		       est_phase_name(at));
		n++;
		fit += verdict == EST_V_FITS;
		/* The jobs made for 24 and 32 GB cards fit them: every phase's centre is under the
		 * card, and none is "will not fit" (a band that straddles the card is "tight"). */
		for (int p = 0; gb <= 32 && p < EST_NPHASES; p++)
			if (est.phase[p].on && est.phase[p].bytes > card)
				fail_msg("%s: %s is %.1f GiB, over its %d GB card", name,
					 est_phase_name((enum est_phase)p), gib_of(est.phase[p].bytes),
					 gb);
		assert_int_not_equal(verdict, EST_V_NO);
		unload(&l);
	}
	closedir(dp);
	printf("# %d of %d example jobs fit their named card\n", fit, n);
	assert_true(n >= 15);
}

/* ---- the loaders (memory-reference §4, checked in the trainer's source) ---------------------- */

static void estimate_of(const char *arch, const char *model, const char *train, const char *ds,
			struct estimate *est)
{
	char job[4096];
	job_text(job, sizeof job, arch, model, train, ds, "");
	struct loaded l;
	load_text(job, &l);
	assert_int_equal(estimate_job(l.j, est), ERR_OK);
	unload(&l);
}

static void test_load_peaks(void **state)
{
	(void)state;
	struct estimate est;
	/* FLUX.2 moves Mistral-24B to the GPU in bf16 before quantizing it (flux2_model.py:104):
	 * with the text embeddings cached the load peak is above the training peak. */
	estimate_of("flux2", "        quantize: true\n        low_vram: true\n",
		    "        cache_text_embeddings: true\n", "", &est);
	assert_true(est.known);
	assert_true(est.phase[EST_MODEL_LOAD].bytes > est.phase[EST_TRAINING].bytes);
	assert_true(gib_of(est.phase[EST_MODEL_LOAD].bytes) > 44.0);
	assert_int_equal(est.peak, EST_MODEL_LOAD);
	/* Wan 2.1 14B without low_vram quantizes a bf16 transformer on the GPU (wan21.py:362). */
	estimate_of("wan21", "        quantize: true\n", "", "", &est);
	assert_true(gib_of(est.phase[EST_MODEL_LOAD].bytes) > 26.6);
	assert_true(est.phase[EST_MODEL_LOAD].bytes > est.phase[EST_TRAINING].bytes);
	/* ... and low_vram keeps it on the CPU: the load falls under 24 GB. */
	estimate_of("wan21", "        quantize: true\n        low_vram: true\n", "", "", &est);
	assert_true(gib_of(est.phase[EST_MODEL_LOAD].bytes) < 23.0);
	/* FLUX.1's legacy loader: bf16 transformer on the GPU at quantize time unless low_vram
	 * (stable_diffusion_model.py:681-683). */
	struct estimate lv;
	estimate_of("flux", "        quantize: true\n", "", "", &est);
	estimate_of("flux", "        quantize: true\n        low_vram: true\n", "", "", &lv);
	assert_true(gib_of(est.phase[EST_MODEL_LOAD].bytes) > 22.2);
	assert_true(lv.phase[EST_MODEL_LOAD].bytes < est.phase[EST_MODEL_LOAD].bytes);
	/* HiDream loads Llama first and keeps it (quantized) on the GPU while its bf16 transformer
	 * is quantized there, unless low_vram (hidream_model.py:112-122,134-135). */
	estimate_of("hidream", "        quantize: true\n", "", "", &est);
	estimate_of("hidream", "        quantize: true\n        low_vram: true\n", "", "", &lv);
	assert_true(gib_of(est.phase[EST_MODEL_LOAD].bytes) > 31.7 + 7.5);
	assert_true(gib_of(lv.phase[EST_MODEL_LOAD].bytes) < 31.7);
	/* Chroma has no low_vram path (chroma_model.py:177): the flag changes nothing. */
	estimate_of("chroma", "        quantize: true\n", "", "", &est);
	estimate_of("chroma", "        quantize: true\n        low_vram: true\n", "", "", &lv);
	assert_int_equal(lv.phase[EST_MODEL_LOAD].bytes, est.phase[EST_MODEL_LOAD].bytes);
	/* Klein quantizes its Qwen3 on the CPU (flux2_klein_model.py:47-51): no bf16 TE spike. */
	estimate_of("flux2_klein_9b", "        quantize: true\n", "", "", &est);
	assert_true(est.phase[EST_MODEL_LOAD].bytes <= est.phase[EST_TRAINING].bytes);
	/* Wan 2.2 14B with low_vram keeps one expert on the GPU while training. */
	estimate_of("wan22_14b", "        quantize: true\n", "", "", &est);
	estimate_of("wan22_14b", "        quantize: true\n        low_vram: true\n", "", "", &lv);
	assert_true(gib_of(est.weights - lv.weights) > 12.0);
	/* Caching the text embeddings takes the TE off the GPU for training. */
	estimate_of("qwen_image", "        quantize: true\n        low_vram: true\n", "", "", &est);
	estimate_of("qwen_image", "        quantize: true\n        low_vram: true\n",
		    "        cache_text_embeddings: true\n", "", &lv);
	assert_true(gib_of(est.phase[EST_TRAINING].bytes - lv.phase[EST_TRAINING].bytes) > 7.0);
	/* Batch size and frames act on training. */
	estimate_of("wan21", "        quantize: true\n        low_vram: true\n",
		    "        batch_size: 1\n", "          num_frames: 81\n          resolution: [512]\n",
		    &est);
	estimate_of("wan21", "        quantize: true\n        low_vram: true\n",
		    "        batch_size: 1\n", "          num_frames: 41\n          resolution: [512]\n",
		    &lv);
	assert_true(lv.phase[EST_TRAINING].bytes < est.phase[EST_TRAINING].bytes);
	/* An arch without a row gets no number. */
	estimate_of("omnigen2", "", "", "", &est);
	assert_false(est.known);
	assert_int_equal(estimate_verdict(&est, (int64_t)(24 * GIB), NULL), EST_V_UNKNOWN);
	char line[256];
	estimate_line(&est, (int64_t)(24 * GIB), line, sizeof line, NULL, NULL);
	assert_string_equal(line, "no estimate for arch 'omnigen2' (no memory table)");
}

static void test_bands(void **state)
{
	(void)state;
	struct estimate est;
	estimate_of("flux", "        quantize: true\n        low_vram: true\n", "", "", &est);
	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_phase_est *ph = &est.phase[p];
		if (!ph->on)
			continue;
		assert_true(ph->low <= ph->bytes && ph->bytes <= ph->high);
		/* the training band rests on left-out residuals; the others are priors */
		assert_true(p != EST_TRAINING || ph->points > 0);
	}
	/* A bucket far outside the points is extrapolated, with a wider band. */
	struct estimate big;
	estimate_of("flux", "        quantize: true\n        low_vram: true\n", "",
		    "          resolution: [4096]\n", &big);
	assert_int_equal(big.phase[EST_TRAINING].basis, EST_EXTRAPOLATED);
	/* The verdict: a band under the card fits, a band over it does not, one across is tight. */
	const struct est_phase_est *t = &est.phase[est.peak];
	int64_t top = 0;
	for (int p = 0; p < EST_NPHASES; p++)
		if (est.phase[p].on && est.phase[p].high > top)
			top = est.phase[p].high;
	assert_int_equal(estimate_verdict(&est, top + 1, NULL), EST_V_FITS);
	enum est_phase at;
	assert_int_equal(estimate_verdict(&est, (t->low + t->high) / 2, &at), EST_V_TIGHT);
	assert_int_equal(estimate_verdict(&est, 1, &at), EST_V_NO);
}

/* ---- the card ------------------------------------------------------------------------------ */

static void test_vram(void **state)
{
	(void)state;
	int64_t b;
	double t;
	bool approx;
	struct err e;
	assert_int_equal(estimate_parse_vram("24", &b, &t, &approx, &e), ERR_OK);
	assert_true(fabs(gib_of(b) - 23.99) < 0.001);
	assert_true(fabs(t - 23.99) < 0.001);
	assert_false(approx);
	assert_int_equal(estimate_parse_vram("80", &b, &t, &approx, &e), ERR_OK);
	assert_true(fabs(gib_of(b) - 79.1) < 0.001);
	assert_int_equal(estimate_parse_vram("23.5GiB", &b, &t, &approx, &e), ERR_OK);
	assert_true(fabs(gib_of(b) - 23.5) < 0.001);
	assert_true(t == 0);
	/* the card as users name it: all a 24 GB card as sold */
	static const char *const sold[] = { "24GB", "24 GB", "24G", "24gb", "24 G" };
	for (size_t i = 0; i < sizeof sold / sizeof *sold; i++) {
		assert_int_equal(estimate_parse_vram(sold[i], &b, &t, &approx, &e), ERR_OK);
		assert_true(fabs(gib_of(b) - 23.99) < 0.001);
		assert_false(approx);
	}
	assert_int_equal(estimate_parse_vram("24GiB", &b, &t, &approx, &e), ERR_OK);
	assert_true(fabs(gib_of(b) - 24.0) < 0.001);
	assert_int_equal(estimate_parse_vram("24000MiB", &b, NULL, NULL, &e), ERR_OK);
	assert_true(fabs(gib_of(b) - 24000 / 1024.0) < 0.001);
	assert_int_equal(estimate_parse_vram("13", &b, &t, &approx, &e), ERR_OK);
	assert_true(approx);
	assert_int_equal(estimate_parse_vram("big", &b, NULL, NULL, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "big"));
	assert_int_equal(estimate_parse_vram("24 furlongs", &b, NULL, NULL, &e), ERR_USAGE);
	assert_int_equal(estimate_parse_vram("-3", &b, NULL, NULL, &e), ERR_USAGE);
	assert_int_equal(estimate_parse_vram("", &b, NULL, NULL, &e), ERR_USAGE);
}

static void test_smi(void **state)
{
	(void)state;
	struct est_gpus g;
	struct err e;
	const char *gpus = "0, GPU-aaa, NVIDIA GeForce RTX 4090, 24564, 300\n"
			   "1, GPU-bbb, NVIDIA RTX A6000, 49140, 13800\n";
	const char *apps = "GPU-bbb, 4242, 13312\nGPU-bbb, 77, 400\nGPU-zzz, 1, 5\n";
	assert_int_equal(estimate_parse_smi(gpus, apps, &g, &e), ERR_OK);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.gpu[0].index, 0);
	assert_true(fabs(gib_of(g.gpu[0].total) - 23.99) < 0.01);
	assert_int_equal(g.gpu[0].napps, 0);
	assert_int_equal(g.gpu[1].napps, 2);
	assert_int_equal(g.gpu[1].app[0].pid, 4242);
	assert_true(fabs(gib_of(g.gpu[1].app[0].bytes) - 13.0) < 0.001);
	assert_string_equal(g.gpu[1].name, "NVIDIA RTX A6000");
	/* Garbage, an error text, an empty answer: no card. */
	assert_int_equal(estimate_parse_smi("NVIDIA-SMI has failed because it couldn't communicate "
					    "with the NVIDIA driver.\n", NULL, &g, &e), ERR_DATA);
	assert_int_equal(estimate_parse_smi("", NULL, &g, &e), ERR_DATA);
	assert_int_equal(estimate_parse_smi("0, GPU-a, X, [N/A], 3\n", NULL, &g, &e), ERR_DATA);
	assert_int_equal(estimate_parse_smi("\x01\x02,,,,\n", "garbage", &g, &e), ERR_DATA);
}

/* ---- the path ---------------------------------------------------------------------------- */

static void test_path(void **state)
{
	(void)state;
	char job[4096];
	/* FLUX at batch 4 on 24 GB, quantized, without low_vram. */
	job_text(job, sizeof job, "flux", "        quantize: true\n",
		 "        batch_size: 4\n", "          resolution: [512, 768, 1024]\n", "");
	struct loaded l;
	load_text(job, &l);
	struct estimate est;
	estimate_job(l.j, &est);
	int64_t card;
	struct err e;
	estimate_parse_vram("24", &card, NULL, NULL, &e);
	enum est_phase at;
	assert_int_not_equal(estimate_verdict(&est, card, &at), EST_V_FITS);
	assert_int_equal(at, EST_TRAINING);
	struct est_path p;
	assert_int_equal(estimate_path(l.j, card, true, 0, &p, &e), ERR_OK);
	assert_true(p.n >= 1);
	assert_true(p.fits);
	assert_int_equal(p.step[0].fix, FIX_BATCH_SIZE); /* gradient checkpointing is on already */
	assert_non_null(p.doc);
	/* The user's job is untouched: the path works on a copy. */
	assert_int_equal(l.j->batch_size, 4);
	assert_int_equal(p.job->batch_size, 1);
	estimate_path_free(&p);
	/* Never the batch size for a load. */
	assert_int_not_equal(est_next_fix(l.j, EST_MODEL_LOAD), FIX_BATCH_SIZE);
	assert_int_equal(est_next_fix(l.j, EST_MODEL_LOAD), FIX_LOW_VRAM);
	enum fix_id sf = est_next_fix(l.j, EST_SAMPLING); /* never gradient checkpointing */
	assert_true(sf == FIX_LIGHTER_SAMPLING || sf == FIX_DISABLE_SAMPLING);
	unload(&l);

	/* Retry's step fixes go down several rungs at once, to the first whose band top fits. */
	job_text(job, sizeof job, "wan21", "        quantize: true\n        low_vram: true\n",
		 "        cache_text_embeddings: true\n",
		 "          num_frames: 81\n          resolution: [512]\n", "");
	load_text(job, &l);
	int rungs;
	bool fits;
	struct doc *after = NULL;
	assert_int_equal(estimate_rungs(l.j, FIX_NUM_FRAMES, 0, card, NULL, &rungs, &fits, &after, &e),
			 ERR_OK);
	assert_true(rungs >= 2); /* 81 → 41 is not enough at 512 on 24 GB */
	assert_true(fits);
	assert_non_null(after);
	struct job *aj = NULL;
	assert_int_equal(job_from_doc(after, &aj, &e), ERR_OK);
	assert_true(aj->datasets[0].num_frames < 41);
	struct estimate ae;
	estimate_job(aj, &ae);
	assert_int_equal(estimate_verdict(&ae, card, NULL), EST_V_FITS);
	job_free(&aj);
	doc_free(&after);
	/* The user's job is untouched: the same answer again. */
	int again;
	assert_int_equal(estimate_rungs(l.j, FIX_NUM_FRAMES, 0, card, NULL, &again, &fits, NULL, &e), ERR_OK);
	assert_int_equal(again, rungs);
	assert_int_equal(l.j->datasets[0].num_frames, 81);
	/* The rung before the one that fits, for saying what the estimate ruled out: it does not. */
	struct doc *prev = NULL;
	assert_int_equal(estimate_rung_doc(l.j, FIX_NUM_FRAMES, rungs - 1, &prev, &e), ERR_OK);
	assert_non_null(prev);
	assert_int_equal(job_from_doc(prev, &aj, &e), ERR_OK);
	assert_true(aj->datasets[0].num_frames < 81);
	estimate_job(aj, &ae);
	assert_int_not_equal(estimate_verdict(&ae, card, NULL), EST_V_FITS);
	job_free(&aj);
	doc_free(&prev);
	/* The line the UI and retry show: peak, phase, card, verdict; without a card, no verdict. */
	char line[256];
	enum est_verdict lv;
	struct estimate le;
	estimate_job(l.j, &le);
	estimate_line(&le, card, line, sizeof line, &lv, NULL);
	assert_int_equal(lv, estimate_verdict(&le, card, NULL));
	assert_non_null(strstr(line, "peak "));
	assert_non_null(strstr(line, " card: "));
	assert_non_null(strstr(line, lv == EST_V_NO ? "will not fit at " : lv == EST_V_TIGHT
									? "tight at " : "fits"));
	estimate_line(&le, 0, line, sizeof line, &lv, NULL);
	assert_int_equal(lv, EST_V_UNKNOWN);
	assert_non_null(strstr(line, "(--vram gives a verdict)"));
	assert_int_equal(estimate_rungs(l.j, FIX_BATCH_SIZE, 0, card, NULL, &rungs, &fits, NULL, &e), ERR_DATA);
	unload(&l);

	/* FLUX.2 on 24 GB: the bf16 Mistral at load cannot be shrunk by any setting oomfix knows. */
	job_text(job, sizeof job, "flux2", "        quantize: true\n        low_vram: true\n",
		 "        cache_text_embeddings: true\n", "",
		 "");
	load_text(job, &l);
	assert_int_equal(estimate_path(l.j, card, true, 0, &p, &e), ERR_OK);
	assert_true(p.exhausted);
	assert_int_equal(p.stuck, EST_MODEL_LOAD);
	assert_false(p.fits);
	estimate_path_free(&p);
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points),   cmocka_unit_test(test_sim),
		cmocka_unit_test(test_input_of), cmocka_unit_test(test_examples),
		cmocka_unit_test(test_load_peaks), cmocka_unit_test(test_bands),
		cmocka_unit_test(test_vram),     cmocka_unit_test(test_smi),
		cmocka_unit_test(test_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
