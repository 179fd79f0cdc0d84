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

/* Every point of tests/estimate/points.tsv (written by scripts/calibrate.py) as a job: the C
 * estimate must give what the script's model gave (the two models are one), and the estimate
 * must classify the points and meet the reported peaks. */
static void test_points(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s/estimate/points.tsv", tests_dir());
	char *text = file_text(path);
	assert_non_null(text);
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	assert_non_null(line); /* the header */
	int npoints = 0, judged = 0, right = 0, npeaks = 0;
	double errs[128];
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *f[32];
		int n = 0;
		for (char *s = line, *tab; n < 32; s = tab + 1) {
			f[n++] = s;
			if (!(tab = strchr(s, '\t')))
				break;
			*tab = 0;
		}
		assert_int_equal(n, 28);
		/* id arch variant aitk quantize qtype quantize_te qtype_te low_vram offload_te res
		 * batch gc rank frames optimizer te_mode sample card_gib outcome weight peak
		 * peak_phase pred pred_model_load pred_caching pred_training pred_sampling */
		const char *id = f[0];
		bool aitk = !strcmp(f[3], "true");
		char model[1024], train[512], ds[256], sample[256], job[4096];
		snprintf(model, sizeof model,
			 "        name_or_path: %s\n"
			 "        quantize: %s\n        qtype: \"%s\"\n"
			 "        quantize_te: %s\n        qtype_te: \"%s\"\n"
			 "        low_vram: %s\n%s",
			 !strcmp(f[2], "1.3b") ? "Wan-AI/Wan2.1-T2V-1.3B-Diffusers"
			 : !strcmp(f[2], "flex") ? "ostris/Flex.1-alpha" : "x",
			 f[4], strcmp(f[5], "-") ? f[5] : "qfloat8", f[6], f[7], f[8],
			 strcmp(f[9], "-") ? "        layer_offloading: true\n"
					     "        layer_offloading_transformer_percent: 0\n"
					     "        layer_offloading_text_encoder_percent: 1.0\n" : "");
		snprintf(train, sizeof train,
			 "        batch_size: %s\n        gradient_checkpointing: %s\n"
			 "        optimizer: %s\n%s%s",
			 f[11], f[12], f[15],
			 !strcmp(f[16], "cached") ? "        cache_text_embeddings: true\n" : "",
			 !strcmp(f[16], "unload") ? "        unload_text_encoder: true\n" : "");
		if (!strcmp(f[17], "0"))
			strcat(train, "        disable_sampling: true\n");
		snprintf(ds, sizeof ds, "          resolution: [%s]\n          num_frames: %s\n",
			 f[10], f[14]);
		snprintf(sample, sizeof sample,
			 "      sample:\n        width: %s\n        height: %s\n"
			 "        guidance_scale: 4\n        num_frames: 1\n", f[17], f[17]);
		char arch[64];
		snprintf(arch, sizeof arch, "%s", f[1]);
		job_text(job, sizeof job, arch, model, train, ds, strcmp(f[17], "0") ? sample : "");
		/* the rank: the default 16 in job_text, else the point's */
		char *r = strstr(job, "linear: 16");
		char rank[32];
		snprintf(rank, sizeof rank, "%s", f[13]);
		if (!strcmp(rank, "-")) { /* a full fine-tune has no network */
			memmove(strstr(job, "      network:"), r + strlen("linear: 16\n"),
				strlen(r + strlen("linear: 16\n")) + 1);
		} else {
			char tail[4096];
			snprintf(tail, sizeof tail, "%s", r + strlen("linear: 16"));
			snprintf(r, sizeof job - (size_t)(r - job), "linear: %s%s", rank, tail);
		}
		struct loaded l;
		load_text(job, &l);
		struct estimate est;
		assert_int_equal(estimate_job(l.j, &est), ERR_OK);
		if (!est.known)
			fail_msg("%s: no row for %s", id, arch);
		/* The script and the program hold the same model. */
		static const enum est_phase col_phase[4] = { EST_MODEL_LOAD, EST_CACHING,
							     EST_TRAINING, EST_SAMPLING };
		for (int c = 0; c < 4; c++) {
			enum est_phase p = col_phase[c];
			const char *want = f[24 + c];
			if (!strcmp(want, "-")) {
				if (p == EST_SAMPLING && est.phase[p].on)
					fail_msg("%s: sampling on", id);
				continue;
			}
			double w = atof(want), got = gib_of(est.phase[p].bytes);
			if (fabs(got - w) > 0.01 * w + 0.01)
				fail_msg("%s: %s is %.3f GiB here, %.3f GiB in calibrate.py", id,
					 est_phase_name((enum est_phase)p), got, w);
		}
		double judged_gib = 0;
		for (int p = 0; p < EST_NPHASES; p++)
			if (est.phase[p].on && (aitk || p == EST_TRAINING))
				judged_gib = fmax(judged_gib, gib_of(est.phase[p].bytes));
		if (strcmp(f[18], "-") && strcmp(f[19], "-")) {
			judged++;
			right += (judged_gib <= atof(f[18])) == !strcmp(f[19], "fits");
		}
		if (strcmp(f[21], "-")) {
			enum est_phase ph = !strcmp(f[22], "caching") ? EST_CACHING : EST_TRAINING;
			double peak = atof(f[21]), got = gib_of(est.phase[ph].bytes);
			if (npeaks < 128)
				errs[npeaks++] = fabs(got - peak) / peak;
		}
		npoints++;
		unload(&l);
	}
	free(text);
	qsort(errs, (size_t)npeaks, sizeof *errs, cmp_double);
	double median = npeaks ? errs[npeaks / 2] : 1;
	printf("# %d points; %d of %d classified right; peak error median %.0f%% over %d peaks\n",
	       npoints, right, judged, 100 * median, npeaks);
	assert_true(npoints >= 30);
	assert_true(judged >= 25);
	assert_true(right * 100 >= judged * 85);  /* fits/OOM right on at least 85% */
	assert_true(median <= 0.10);              /* half the reported peaks within 10% */
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
		/* The jobs made for 24 and 32 GB cards must fit them; HiDream's 48 GB job rests on
		 * nominal parameter counts, so it may be tight, never "no". */
		if (gb <= 32 && verdict != EST_V_FITS)
			fail_msg("%s does not fit its %d GB card: %s at %s", name, gb,
				 est_verdict_name(verdict), est_phase_name(at));
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
		assert_true(ph->points > 0);
	}
	/* A bucket far outside the points is extrapolated, with a wider band. */
	struct estimate big;
	estimate_of("flux", "        quantize: true\n        low_vram: true\n", "",
		    "          resolution: [4096]\n", &big);
	assert_int_equal(big.phase[EST_TRAINING].basis, EST_EXTRAPOLATED);
	/* The verdict: a band under the card fits, a band over it does not, one across is tight. */
	const struct est_phase_est *t = &est.phase[est.peak];
	assert_int_equal(estimate_verdict(&est, t->high + 1, NULL), EST_V_FITS);
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
	assert_int_equal(estimate_verdict(&est, card, &at), EST_V_NO);
	assert_int_equal(at, EST_TRAINING);
	struct est_path p;
	assert_int_equal(estimate_path(l.j, card, true, &p, &e), ERR_OK);
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
	assert_int_equal(estimate_rungs(l.j, FIX_NUM_FRAMES, card, &rungs, &fits, &after, &e),
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
	assert_int_equal(estimate_rungs(l.j, FIX_NUM_FRAMES, card, &again, &fits, NULL, &e), ERR_OK);
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
	assert_int_equal(estimate_rungs(l.j, FIX_BATCH_SIZE, card, &rungs, &fits, NULL, &e), ERR_DATA);
	unload(&l);

	/* FLUX.2 on 24 GB: the bf16 Mistral at load cannot be shrunk by any setting oomfix knows. */
	job_text(job, sizeof job, "flux2", "        quantize: true\n        low_vram: true\n",
		 "        cache_text_embeddings: true\n", "",
		 "");
	load_text(job, &l);
	assert_int_equal(estimate_path(l.j, card, true, &p, &e), ERR_OK);
	assert_true(p.exhausted);
	assert_int_equal(p.stuck, EST_MODEL_LOAD);
	assert_false(p.fits);
	estimate_path_free(&p);
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points),   cmocka_unit_test(test_examples),
		cmocka_unit_test(test_load_peaks), cmocka_unit_test(test_bands),
		cmocka_unit_test(test_vram),     cmocka_unit_test(test_smi),
		cmocka_unit_test(test_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
