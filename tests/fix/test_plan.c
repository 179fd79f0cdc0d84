/* test_plan.c — the rollback plan, the first fix for every timing/phase (SPEC §3.4), the quick
 * checklist and the scale-up order, on our fixtures with hand-worked answers and on the shared
 * example cases against their expect.json.
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

#include "oomfix/doc.h"
#include "oomfix/job.h"
#include "oomfix/plan.h"

struct loaded {
	struct doc *d;
	struct job *j;
};

static void load_path(const char *path, struct loaded *l)
{
	struct err e;
	err_clear(&e);
	if (doc_load_file(path, &l->d, &e) != ERR_OK)
		fail_msg("%s: %s", path, e.msg);
	if (job_from_doc(l->d, &l->j, &e) != ERR_OK)
		fail_msg("%s: %s", path, e.msg);
}

static void load(const char *name, struct loaded *l)
{
	const char *dir = getenv("TESTS_DIR");
	char p[1024];
	snprintf(p, sizeof p, "%s/fix/fixtures/%s", dir ? dir : "tests", name);
	load_path(p, l);
}

static void unload(struct loaded *l)
{
	job_free(&l->j);
	doc_free(&l->d);
}

static struct diag_result verdict(enum diag_timing t, enum diag_phase p, int kind)
{
	struct diag_result v;
	memset(&v, 0, sizeof v);
	v.oom = t != DIAG_T_NONE;
	v.timing = t;
	v.phase = p;
	v.failed_step = -1;
	v.model_kind = kind;
	return v;
}

static enum fix_id first(const struct job *j, enum diag_timing t, enum diag_phase p, int kind)
{
	struct diag_result v = verdict(t, p, kind);
	struct plan pl;
	plan_build(j, &v, &pl);
	bool in = false;
	for (size_t i = 0; i < pl.naccept; i++)
		in |= pl.accept[i] == pl.first_fix;
	if (pl.first_fix != FIX_NONE && !in)
		fail_msg("first fix %s is not among the accepted ones", fix_name(pl.first_fix));
	return pl.first_fix;
}

static bool accepts(const struct job *j, enum diag_timing t, enum diag_phase p, enum fix_id id)
{
	struct diag_result v = verdict(t, p, 0);
	struct plan pl;
	plan_build(j, &v, &pl);
	for (size_t i = 0; i < pl.naccept; i++)
		if (pl.accept[i] == id)
			return true;
	return false;
}

#define A DIAG_T_BEFORE_TRAINING
#define B DIAG_T_FIRST_STEPS
#define C DIAG_T_SAMPLING
#define D DIAG_T_INTERMITTENT
#define E DIAG_T_ENVIRONMENT

static void test_first_fix_image(void **state)
{
	struct loaded l;
	/* flux, checkpointing on, batch 4/2/3, buckets up to 1024, samples 1024, quantized,
	 * low_vram off: the FLUX loader honours low_vram, so it is the model-load fix, and the
	 * batch size, which does not change a model load, never is */
	load("per_dataset_batch.yaml", &l);
	assert_int_equal(first(l.j, A, DIAG_P_MODEL_LOAD, 0), FIX_LOW_VRAM);
	assert_int_equal(first(l.j, A, DIAG_P_CACHING, 0), FIX_DROP_LARGEST_BUCKET);
	assert_int_equal(first(l.j, A, DIAG_P_BASELINE_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	assert_true(accepts(l.j, A, DIAG_P_BASELINE_SAMPLING, FIX_DISABLE_SAMPLING));
	assert_int_equal(first(l.j, A, DIAG_P_NONE, 0), FIX_BATCH_SIZE);
	assert_int_equal(first(l.j, B, DIAG_P_TRAINING, 0), FIX_BATCH_SIZE);
	assert_int_equal(first(l.j, C, DIAG_P_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	assert_true(accepts(l.j, C, DIAG_P_SAMPLING, FIX_DISABLE_SAMPLING));
	assert_int_equal(first(l.j, D, DIAG_P_TRAINING, 0), FIX_DROP_LARGEST_BUCKET);
	assert_int_equal(first(l.j, E, DIAG_P_TRAINING, 0), FIX_FRESH_WORKER);
	assert_int_equal(first(l.j, E, DIAG_P_MODEL_LOAD, 0), FIX_FRESH_WORKER);
	assert_int_equal(first(l.j, DIAG_T_NONE, DIAG_P_NONE, 0), FIX_NONE);
	unload(&l);

	/* SD3 with checkpointing off: B starts with gradient_checkpointing; a model load gets
	 * low_vram (SD3's loader honours it), never checkpointing, which acts on training only */
	load("legacy_accum.yaml", &l);
	assert_int_equal(first(l.j, B, DIAG_P_TRAINING, 0), FIX_GRADIENT_CHECKPOINTING);
	assert_int_equal(first(l.j, A, DIAG_P_MODEL_LOAD, 0), FIX_LOW_VRAM);
	assert_int_equal(first(l.j, C, DIAG_P_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	unload(&l);

	/* qwen_image with low_vram and quantize off */
	load("block_resolutions.yaml", &l);
	assert_int_equal(first(l.j, A, DIAG_P_MODEL_LOAD, 0), FIX_LOW_VRAM);
	unload(&l);
}

/* E11 (review 4): a bucket drop that did not move a now-and-then failure is followed by the next
 * fix of the order (batch size 1), and the decision's words say why; a failure that moved, a
 * first-steps failure or another last change leave the plan's own choice. */
static void test_after_unmoved_E11(void **state)
{
	struct loaded l;
	load("per_dataset_batch.yaml", &l); /* flux, checkpointing on, batch 4, buckets to 1024 */
	struct diag_result v = verdict(D, DIAG_P_TRAINING, 0);
	struct plan p;
	v.failed_step = 63;
	plan_build(l.j, &v, &p);
	assert_int_equal(p.first_fix, FIX_DROP_LARGEST_BUCKET);
	assert_true(plan_after_unmoved(&p, l.j, &v, FIX_DROP_LARGEST_BUCKET, 63));
	assert_int_equal(p.first_fix, FIX_BATCH_SIZE);
	struct plan_decision d = plan_decide(&p, &v, false);
	assert_int_equal(d.what, PLAN_NEXT_APPLY);
	assert_int_equal(d.fix, FIX_BATCH_SIZE);
	char words[768];
	plan_decision_text(&d, &p, l.j, words, sizeof words);
	assert_non_null(strstr(words, "drop_largest_bucket"));
	assert_non_null(strstr(words, "step 63"));
	assert_non_null(strstr(words, "batch_size"));
	bool in = false;
	for (size_t i = 0; i < p.naccept; i++)
		in |= p.accept[i] == FIX_BATCH_SIZE;
	assert_true(in);
	/* earlier than before did not move it either */
	plan_build(l.j, &v, &p);
	assert_true(plan_after_unmoved(&p, l.j, &v, FIX_DROP_LARGEST_BUCKET, 80));
	/* the failure moved later: the drop worked as far as it went, another one is right */
	plan_build(l.j, &v, &p);
	assert_false(plan_after_unmoved(&p, l.j, &v, FIX_DROP_LARGEST_BUCKET, 40));
	assert_int_equal(p.first_fix, FIX_DROP_LARGEST_BUCKET);
	plan_decision_text(&d, &p, l.j, words, sizeof words);
	assert_null(strstr(words, "did not move"));
	/* the last change was another one, or none */
	assert_false(plan_after_unmoved(&p, l.j, &v, FIX_LOW_VRAM, 63));
	assert_false(plan_after_unmoved(&p, l.j, &v, FIX_NONE, 63));
	assert_int_equal(p.first_fix, FIX_DROP_LARGEST_BUCKET);
	/* the first steps always fail at step 1 or so: the step says nothing there */
	struct diag_result b = verdict(B, DIAG_P_TRAINING, 0);
	b.failed_step = 1;
	plan_build(l.j, &b, &p);
	assert_false(plan_after_unmoved(&p, l.j, &b, p.first_fix, 1));
	unload(&l);

	/* video, batch 1 already: clips halved without moving the failure, then the next step
	 * of the order that is left, the 768 bucket */
	load("wan_video.yaml", &l);
	v = verdict(D, DIAG_P_TRAINING, 0);
	v.failed_step = 12;
	plan_build(l.j, &v, &p);
	assert_int_equal(p.first_fix, FIX_NUM_FRAMES);
	assert_true(plan_after_unmoved(&p, l.j, &v, FIX_NUM_FRAMES, 12));
	assert_int_equal(p.first_fix, FIX_DROP_LARGEST_BUCKET);
	unload(&l);
}

static void test_first_fix_video(void **state)
{
	struct loaded l;
	load("wan_video.yaml", &l);
	assert_int_equal(first(l.j, A, DIAG_P_MODEL_LOAD, 0), FIX_LOW_VRAM);
	assert_int_equal(first(l.j, A, DIAG_P_CACHING, 0), FIX_NUM_FRAMES);
	assert_int_equal(first(l.j, A, DIAG_P_BASELINE_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	assert_int_equal(first(l.j, B, DIAG_P_TRAINING, 0), FIX_NUM_FRAMES);
	assert_int_equal(first(l.j, C, DIAG_P_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	assert_int_equal(first(l.j, D, DIAG_P_TRAINING, 0), FIX_NUM_FRAMES);
	assert_int_equal(first(l.j, E, DIAG_P_TRAINING, 0), FIX_FRESH_WORKER);
	unload(&l);
}

static void test_first_fix_when_done(void **state)
{
	struct loaded l;
	/* batch 1, checkpointing on, bucket 512, sampling off, lumina2 quantized: all done.
	 * Only E blames the worker; otherwise the settings are exhausted for the phase. */
	load("conservative.yaml", &l);
	assert_int_equal(first(l.j, C, DIAG_P_SAMPLING, 0), FIX_NONE);
	assert_int_equal(first(l.j, B, DIAG_P_TRAINING, 0), FIX_NONE);
	assert_int_equal(first(l.j, A, DIAG_P_BASELINE_SAMPLING, 0), FIX_NONE);
	assert_int_equal(first(l.j, D, DIAG_P_TRAINING, 0), FIX_NONE);
	assert_int_equal(first(l.j, E, DIAG_P_TRAINING, 0), FIX_FRESH_WORKER);
	struct plan p;
	struct diag_result v = verdict(B, DIAG_P_TRAINING, 0);
	char text[512];
	plan_build(l.j, &v, &p);
	assert_true(p.exhausted);
	plan_exhausted_text(&p, l.j, text, sizeof text);
	assert_non_null(strstr(text, "exhausted"));
	assert_non_null(strstr(text, "training"));
	v = verdict(E, DIAG_P_TRAINING, 0);
	plan_build(l.j, &v, &p);
	assert_false(p.exhausted);
	plan_exhausted_text(&p, l.j, text, sizeof text);
	assert_string_equal(text, "");
	plan_build(l.j, NULL, &p);
	assert_int_equal(plan_next_step(&p), FIX_NONE);
	assert_int_equal(p.first_fix, FIX_NONE);
	assert_false(p.exhausted);
	unload(&l);

	/* zimage with sampling disabled and buckets 1536/1328: a sample cannot be fixed by a
	 * bucket; low_vram is the one sampling fix left */
	load("single_bucket_1536.yaml", &l);
	assert_int_equal(first(l.j, C, DIAG_P_SAMPLING, 0), FIX_LOW_VRAM);
	assert_int_equal(first(l.j, B, DIAG_P_TRAINING, 0), FIX_DROP_LARGEST_BUCKET);
	unload(&l);

	/* lighter already done but sampling on: C → disable_sampling */
	load("no_low_vram.yaml", &l);
	assert_int_equal(fix_status(l.j, FIX_LIGHTER_SAMPLING, NULL, 0), FIX_DONE);
	assert_int_equal(first(l.j, C, DIAG_P_SAMPLING, 0), FIX_DISABLE_SAMPLING);
	assert_int_equal(first(l.j, A, DIAG_P_BASELINE_SAMPLING, 0), FIX_DISABLE_SAMPLING);
	/* sdxl honours neither low_vram nor quantization: nothing acts on its model load */
	assert_int_equal(first(l.j, A, DIAG_P_MODEL_LOAD, 0), FIX_NONE);
	v = verdict(A, DIAG_P_MODEL_LOAD, 0);
	plan_build(l.j, &v, &p);
	assert_true(p.exhausted);
	unload(&l);
}

static void test_first_fix_without_job(void **state)
{
	assert_int_equal(first(NULL, B, DIAG_P_TRAINING, 0), FIX_GRADIENT_CHECKPOINTING);
	assert_true(accepts(NULL, B, DIAG_P_TRAINING, FIX_BATCH_SIZE));
	assert_true(accepts(NULL, B, DIAG_P_TRAINING, FIX_DROP_LARGEST_BUCKET));
	assert_int_equal(first(NULL, B, DIAG_P_TRAINING, JOB_KIND_VIDEO), FIX_NUM_FRAMES);
	assert_int_equal(first(NULL, D, DIAG_P_TRAINING, 0), FIX_DROP_LARGEST_BUCKET);
	assert_int_equal(first(NULL, D, DIAG_P_TRAINING, JOB_KIND_VIDEO), FIX_NUM_FRAMES);
	assert_int_equal(first(NULL, A, DIAG_P_MODEL_LOAD, 0), FIX_LOW_VRAM);
	assert_int_equal(first(NULL, A, DIAG_P_CACHING, 0), FIX_DROP_LARGEST_BUCKET);
	assert_int_equal(first(NULL, A, DIAG_P_BASELINE_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	assert_int_equal(first(NULL, C, DIAG_P_SAMPLING, 0), FIX_LIGHTER_SAMPLING);
	assert_int_equal(first(NULL, E, DIAG_P_TRAINING, 0), FIX_FRESH_WORKER);

	struct plan p;
	plan_build(NULL, NULL, &p);
	assert_int_equal(p.first_fix, FIX_NONE);
	assert_int_equal(p.n, 6);
	for (size_t i = 0; i < p.n; i++)
		assert_int_equal(p.steps[i].status, FIX_TODO);
}

static void test_plan_order(void **state)
{
	static const enum fix_id img[] = { FIX_GRADIENT_CHECKPOINTING, FIX_BATCH_SIZE,
					   FIX_DROP_LARGEST_BUCKET, FIX_LIGHTER_SAMPLING,
					   FIX_DISABLE_SAMPLING, FIX_LOW_VRAM };
	static const enum fix_id vid[] = { FIX_NUM_FRAMES, FIX_BATCH_SIZE, FIX_DROP_LARGEST_BUCKET,
					   FIX_LIGHTER_SAMPLING, FIX_DISABLE_SAMPLING, FIX_LOW_VRAM };
	static const enum fix_status img_st[] = { FIX_DONE, FIX_TODO, FIX_TODO, FIX_TODO, FIX_TODO,
						  FIX_TODO };
	static const enum fix_status vid_st[] = { FIX_TODO, FIX_DONE, FIX_TODO, FIX_TODO, FIX_TODO,
						  FIX_TODO };
	struct loaded l;
	struct plan p;
	load("per_dataset_batch.yaml", &l);
	plan_build(l.j, NULL, &p);
	assert_int_equal(p.n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(p.steps[i].fix, img[i]);
		assert_int_equal(p.steps[i].status, img_st[i]);
	}
	assert_int_equal(plan_next_step(&p), FIX_BATCH_SIZE);
	unload(&l);

	load("wan_video.yaml", &l);
	plan_build(l.j, NULL, &p);
	assert_int_equal(p.n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(p.steps[i].fix, vid[i]);
		assert_int_equal(p.steps[i].status, vid_st[i]);
	}
	unload(&l);

	load("no_low_vram.yaml", &l);
	plan_build(l.j, NULL, &p);
	assert_int_equal(p.steps[5].status, FIX_NOT_APPLICABLE);
	unload(&l);
}

static void test_checklist(void **state)
{
	struct loaded l;
	struct checklist cl;
	load("conservative.yaml", &l);
	checklist_build(l.j, NULL, &cl);
	assert_int_equal(cl.item[CHECK_BATCH], FIX_DONE);
	assert_int_equal(cl.item[CHECK_BUCKET], FIX_DONE);
	assert_int_equal(cl.item[CHECK_SAMPLING], FIX_DONE);
	assert_int_equal(cl.item[CHECK_GC], FIX_DONE);
	assert_int_equal(cl.item[CHECK_FRAMES], FIX_NOT_APPLICABLE);
	assert_int_equal(cl.item[CHECK_WORKER], FIX_DONE);
	/* an ordinary OOM of a conservative job is the plan's business; E is the worker's */
	struct diag_result v = verdict(B, DIAG_P_TRAINING, 0);
	checklist_build(l.j, &v, &cl);
	assert_int_equal(cl.item[CHECK_WORKER], FIX_NOT_APPLICABLE);
	struct diag_result ve = verdict(E, DIAG_P_TRAINING, 0);
	checklist_build(l.j, &ve, &cl);
	assert_int_equal(cl.item[CHECK_WORKER], FIX_TODO);
	unload(&l);

	load("per_dataset_batch.yaml", &l);
	checklist_build(l.j, &v, &cl);
	assert_int_equal(cl.item[CHECK_BATCH], FIX_TODO);
	assert_int_equal(cl.item[CHECK_BUCKET], FIX_TODO);
	assert_int_equal(cl.item[CHECK_SAMPLING], FIX_TODO);
	assert_int_equal(cl.item[CHECK_GC], FIX_DONE);
	assert_int_equal(cl.item[CHECK_WORKER], FIX_NOT_APPLICABLE);
	for (int c = 0; c < CHECK_COUNT; c++) {
		assert_true(cl.reason[c][0] != '\0');
		assert_true(checklist_label((enum check_item)c)[0] != '\0');
	}
	unload(&l);

	/* largest bucket 768: the plan can still drop it to 512, so the checklist does not tick
	 * it either (issue 10, defect 6: one status for both) */
	load("wan_video.yaml", &l);
	checklist_build(l.j, NULL, &cl);
	assert_int_equal(cl.item[CHECK_FRAMES], FIX_TODO);
	assert_int_equal(cl.item[CHECK_BUCKET], FIX_TODO);
	unload(&l);

	load("legacy_accum.yaml", &l);
	checklist_build(l.j, NULL, &cl);
	assert_int_equal(cl.item[CHECK_GC], FIX_TODO);
	assert_int_equal(cl.item[CHECK_BATCH], FIX_TODO);
	unload(&l);
}

static void test_scaleup(void **state)
{
	char t[512];
	struct loaded l;
	load("conservative.yaml", &l); /* bucket 512, sampling off */
	assert_int_equal(scaleup_next(l.j, SCALEUP_NONE, t, sizeof t), SCALEUP_STEPS);
	assert_non_null(strstr(t, "Keep"));
	assert_int_equal(scaleup_next(l.j, SCALEUP_STEPS, t, sizeof t), SCALEUP_BUCKETS);
	assert_non_null(strstr(t, "768"));
	assert_int_equal(scaleup_next(l.j, SCALEUP_BUCKETS, t, sizeof t), SCALEUP_SAMPLING);
	assert_non_null(strstr(t, "disable_sampling"));
	assert_int_equal(scaleup_next(l.j, SCALEUP_SAMPLING, t, sizeof t), SCALEUP_BATCH_OR_CLIP);
	assert_int_equal(scaleup_next(l.j, SCALEUP_BATCH_OR_CLIP, t, sizeof t), SCALEUP_NONE);
	unload(&l);

	load("per_dataset_batch.yaml", &l); /* 1024 bucket, rich sampling: nothing to raise there */
	assert_int_equal(scaleup_next(l.j, SCALEUP_STEPS, t, sizeof t), SCALEUP_BATCH_OR_CLIP);
	unload(&l);

	load("wan_video.yaml", &l);
	assert_int_equal(scaleup_next(l.j, SCALEUP_SAMPLING, t, sizeof t), SCALEUP_BATCH_OR_CLIP);
	assert_non_null(strstr(t, "num_frames"));
	unload(&l);

	for (int s = 0; s < SCALEUP_COUNT; s++)
		assert_true(scaleup_title((enum scaleup_step)s)[0] != '\0');
	assert_int_equal(scaleup_next(NULL, SCALEUP_NONE, t, sizeof t), SCALEUP_STEPS);
}

static void test_names(void **state)
{
	for (int i = 0; i < FIX_COUNT; i++) {
		assert_int_equal(fix_by_name(fix_defs[i].name), i);
		assert_int_equal(fix_defs[i].id, i);
		assert_string_equal(fix_name((enum fix_id)i), fix_defs[i].name);
		assert_true(strlen(fix_defs[i].why) > 80);
		assert_true(strlen(fix_defs[i].change) > 20);
		assert_true(strlen(fix_defs[i].lesson) > 80);
	}
	assert_int_equal(fix_by_name("next"), FIX_NONE);
	assert_int_equal(fix_by_name(NULL), FIX_NONE);
	assert_null(fix_name(FIX_NONE));
	/* one timing vocabulary: the row of each timing is its own, with every text filled */
	static const char *const names[] = { NULL, "before_training", "first_steps", "sampling",
					     "intermittent", "environment" };
	for (int t = 0; t < DIAG_T_COUNT; t++) {
		assert_int_equal(diag_timings[t].id, t);
		if (t == DIAG_T_NONE) {
			assert_null(diag_timing_name(DIAG_T_NONE));
			assert_int_equal(diag_timing_letter(DIAG_T_NONE), 0);
			assert_string_equal(diag_timing_words(DIAG_T_NONE), "");
			continue;
		}
		assert_string_equal(diag_timing_name((enum diag_timing)t), names[t]);
		assert_int_equal(diag_timing_letter((enum diag_timing)t), 'A' + t - 1);
		assert_true(diag_timings[t].words && diag_timings[t].cause && diag_timings[t].change &&
			    diag_timings[t].cause_brief && diag_timings[t].change_brief);
		/* the panel's "When" cell starts with the row's own letter: "B first steps 1-10" */
		assert_non_null(diag_timings[t].when_brief);
		assert_int_equal(diag_timings[t].when_brief[0], diag_timings[t].letter);
		assert_int_equal(diag_timings[t].when_brief[1], ' ');
	}
	assert_null(diag_timing_name(DIAG_T_COUNT));
	assert_int_equal(diag_timing_letter(DIAG_T_COUNT), 0);
}

/* Every fixture, every failing phase and timing: the first fix acts on the phase that failed
 * (SPEC §3.4), the steps marked as not helping are exactly the ones outside the phase's list,
 * and the answer is fresh_worker only for E. */
static void test_first_fix_acts_on_the_phase(void **state)
{
	static const char *const files[] = { "anchors_merge.yaml", "block_resolutions.yaml",
					     "both_accum.yaml", "conservative.yaml",
					     "flux_no_quant.yaml", "legacy_accum.yaml",
					     "ltx_video.yaml", "no_low_vram.yaml",
					     "per_dataset_batch.yaml", "per_prompt_sizes.yaml",
					     "single_bucket_1536.yaml", "wan_video.yaml" };
	static const struct { enum diag_timing t; enum diag_phase p; } cases[] = {
		{ A, DIAG_P_MODEL_LOAD }, { A, DIAG_P_CACHING }, { A, DIAG_P_BASELINE_SAMPLING },
		{ B, DIAG_P_TRAINING },   { C, DIAG_P_SAMPLING }, { D, DIAG_P_TRAINING },
		{ D, DIAG_P_SAVING },
	};
	int checked = 0;
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		struct loaded l;
		load(files[f], &l);
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			struct diag_result v = verdict(cases[c].t, cases[c].p, 0);
			struct plan p;
			plan_build(l.j, &v, &p);
			if (p.first_fix == FIX_FRESH_WORKER)
				fail_msg("%s: fresh_worker without an E verdict", files[f]);
			if (p.first_fix != FIX_NONE &&
			    !plan_fix_helps(p.first_fix, cases[c].p, (int)l.j->kind))
				fail_msg("%s: %s does not act on phase %d", files[f],
					 fix_name(p.first_fix), (int)cases[c].p);
			assert_int_equal(p.exhausted, p.first_fix == FIX_NONE);
			for (size_t i = 0; i < p.n; i++) {
				assert_int_equal(p.steps[i].helps,
						 plan_fix_helps(p.steps[i].fix, cases[c].p,
								(int)l.j->kind));
				/* nothing that helps is left to do when the plan is exhausted */
				if (p.exhausted && p.steps[i].helps)
					assert_int_not_equal(p.steps[i].status, FIX_TODO);
			}
			checked++;
		}
		unload(&l);
	}
	assert_int_equal(checked, 12 * 7);

	/* the phase table itself */
	assert_true(plan_fix_helps(FIX_LOW_VRAM, DIAG_P_MODEL_LOAD, JOB_KIND_IMAGE));
	assert_false(plan_fix_helps(FIX_BATCH_SIZE, DIAG_P_MODEL_LOAD, JOB_KIND_IMAGE));
	assert_false(plan_fix_helps(FIX_GRADIENT_CHECKPOINTING, DIAG_P_SAMPLING, JOB_KIND_IMAGE));
	assert_false(plan_fix_helps(FIX_GRADIENT_CHECKPOINTING, DIAG_P_BASELINE_SAMPLING, 0));
	assert_true(plan_fix_helps(FIX_NUM_FRAMES, DIAG_P_CACHING, JOB_KIND_VIDEO));
	assert_false(plan_fix_helps(FIX_NUM_FRAMES, DIAG_P_CACHING, JOB_KIND_IMAGE));
	assert_false(plan_fix_helps(FIX_LIGHTER_SAMPLING, DIAG_P_TRAINING, JOB_KIND_IMAGE));
	assert_true(plan_fix_helps(FIX_LOW_VRAM, DIAG_P_TRAINING, JOB_KIND_VIDEO));
	assert_true(plan_fix_helps(FIX_BATCH_SIZE, DIAG_P_NONE, JOB_KIND_IMAGE));
	assert_false(plan_fix_helps(FIX_FRESH_WORKER, DIAG_P_NONE, JOB_KIND_IMAGE));
}

/* Issue 10, defect 6: the checklist and the plan read one status per step. */
static void test_checklist_agrees_with_plan(void **state)
{
	static const char *const files[] = { "anchors_merge.yaml", "block_resolutions.yaml",
					     "conservative.yaml", "ltx_video.yaml",
					     "no_low_vram.yaml", "per_dataset_batch.yaml",
					     "single_bucket_1536.yaml", "wan_video.yaml" };
	static const struct { enum check_item c; enum fix_id f; } pairs[] = {
		{ CHECK_BATCH, FIX_BATCH_SIZE }, { CHECK_BUCKET, FIX_DROP_LARGEST_BUCKET },
		{ CHECK_GC, FIX_GRADIENT_CHECKPOINTING }, { CHECK_FRAMES, FIX_NUM_FRAMES },
	};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		struct loaded l;
		struct plan p;
		struct checklist cl;
		load(files[f], &l);
		plan_build(l.j, NULL, &p);
		checklist_build(l.j, NULL, &cl);
		for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
			enum fix_status st = fix_status(l.j, pairs[k].f, NULL, 0);
			for (size_t i = 0; i < p.n; i++)
				if (p.steps[i].fix == pairs[k].f)
					assert_int_equal(p.steps[i].status, st);
			if (cl.item[pairs[k].c] != st)
				fail_msg("%s: checklist %s is %s, the plan's %s is %s", files[f],
					 checklist_id(pairs[k].c),
					 fix_status_name(cl.item[pairs[k].c]),
					 fix_name(pairs[k].f), fix_status_name(st));
		}
		bool sampling_done = fix_status(l.j, FIX_LIGHTER_SAMPLING, NULL, 0) == FIX_DONE ||
				     fix_status(l.j, FIX_DISABLE_SAMPLING, NULL, 0) == FIX_DONE;
		assert_int_equal(cl.item[CHECK_SAMPLING] == FIX_DONE, sampling_done);
		unload(&l);
	}
}

/* ---- the shared example cases ----------------------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	char *buf = calloc(1, 65536);
	size_t n = fread(buf, 1, 65535, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* The string value of "key": "value" (or NULL for null) in a flat JSON text, into out. */
static bool json_str_field(const char *js, const char *key, char *out, size_t outsz)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(js, pat);
	assert_non_null(p);
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != '"')
		return false;
	const char *q = strchr(p + 1, '"');
	snprintf(out, outsz, "%.*s", (int)(q - p - 1), p + 1);
	return true;
}

/* The SPEC names in enum order (diag.h), kept here so this test needs no log reader. */
static const char *const timing_names[] = { "", "before_training", "first_steps", "sampling",
					    "intermittent", "environment" };
static const char *const phase_names[] = { "", "model_load", "caching", "baseline_sampling",
					   "training", "sampling", "saving" };

static void test_shared_cases(void **state)
{
	const char *shared = getenv("SHARED_FIXTURES");
	char dir[1024];
	struct stat st;
	snprintf(dir, sizeof dir, "%s/cases", shared ? shared : "");
	if (!shared || stat(dir, &st) != 0)
		skip();
	DIR *dp = opendir(dir);
	assert_non_null(dp);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dp))) {
		char jp[2048], ep[2048], s[64];
		snprintf(jp, sizeof jp, "%s/%s/job.yaml", dir, de->d_name);
		snprintf(ep, sizeof ep, "%s/%s/expect.json", dir, de->d_name);
		char *js = slurp(ep);
		if (!js)
			continue;
		struct loaded l;
		load_path(jp, &l);
		struct diag_result v = verdict(DIAG_T_NONE, DIAG_P_NONE, (int)l.j->kind);
		if (json_str_field(js, "timing", s, sizeof s)) {
			for (int t = 1; t < DIAG_T_COUNT; t++)
				if (!strcmp(timing_names[t], s))
					v.timing = (enum diag_timing)t;
			assert_int_not_equal(v.timing, DIAG_T_NONE);
			v.oom = true;
		}
		if (json_str_field(js, "phase", s, sizeof s))
			for (int p = 1; p < DIAG_P_COUNT; p++)
				if (!strcmp(phase_names[p], s))
					v.phase = (enum diag_phase)p;
		if (json_str_field(js, "model_kind", s, sizeof s))
			assert_string_equal(job_kind_name(l.j->kind), s);
		struct plan p;
		plan_build(l.j, &v, &p);
		const char *acc = strstr(js, "\"accept_first_fix\":");
		assert_non_null(acc);
		const char *end = strchr(acc, ']');
		if (!v.oom) {
			assert_int_equal(p.first_fix, FIX_NONE);
		} else {
			char q[64];
			snprintf(q, sizeof q, "\"%s\"", fix_name(p.first_fix));
			const char *hit = strstr(acc, q);
			if (!hit || hit > end)
				fail_msg("%s: first fix %s not in %.*s", de->d_name,
					 fix_name(p.first_fix), (int)(end - acc + 1), acc);
		}
		free(js);
		unload(&l);
		n++;
	}
	closedir(dp);
	assert_true(n >= 12);
}

/* One decision, every front end (SPEC §3.4): a case per answer of the closed set, each with the
 * fix it carries and a phrase of the words every front end prints for it. */
static void test_decision_table(void **state)
{
	(void)state;
	struct loaded big, done;
	load("legacy_accum.yaml", &big);  /* nothing rolled back yet: gradient checkpointing off */
	load("conservative.yaml", &done); /* every step of the plan already done */
	struct diag_result b = verdict(DIAG_T_FIRST_STEPS, DIAG_P_TRAINING, 0);
	struct diag_result e = verdict(DIAG_T_ENVIRONMENT, DIAG_P_TRAINING, 0);
	struct diag_result unknown = verdict(DIAG_T_NONE, DIAG_P_NONE, 0);
	unknown.oom = true; /* an OOM whose log does not show when */
	struct diag_result none = verdict(DIAG_T_NONE, DIAG_P_NONE, 0);
	struct diag_result skipped = verdict(DIAG_T_INTERMITTENT, DIAG_P_TRAINING, 0);
	skipped.survived = true;
	b.failed_step = 3;
	static const struct {
		const char *what;
		int job; /* 0 none, 1 legacy_accum, 2 conservative */
		int v;   /* 0 no log, 1 B, 2 E, 3 unknown, 4 no OOM, 5 survived, 6 skip ends the log */
		bool untried;
		enum plan_next answer;
		enum fix_id fix;
		const char *words;
	} t[] = {
		{ "fix for the verdict", 1, 1, false, PLAN_NEXT_APPLY, FIX_GRADIENT_CHECKPOINTING,
		  "Next change: gradient_checkpointing" },
		{ "no log: the plan's first step", 1, 0, false, PLAN_NEXT_APPLY,
		  FIX_GRADIENT_CHECKPOINTING, "Next change: gradient_checkpointing" },
		{ "E: fresh worker", 1, 2, false, PLAN_NEXT_FRESH_WORKER, FIX_FRESH_WORKER,
		  "fresh worker" },
		{ "E on a conservative job", 2, 2, false, PLAN_NEXT_FRESH_WORKER, FIX_FRESH_WORKER,
		  "fresh worker" },
		{ "timing unknown: no fix on a guess", 1, 3, false, PLAN_NEXT_WHEN_UNKNOWN, FIX_NONE,
		  "does not show when" },
		{ "timing unknown, no job", 0, 3, false, PLAN_NEXT_WHEN_UNKNOWN, FIX_NONE,
		  "no change is chosen on a guess" },
		{ "a skip banner ends the log", 1, 6, false, PLAN_NEXT_WHEN_UNKNOWN, FIX_NONE,
		  "does not show whether the run went on" },
		{ "nothing left for the phase", 2, 1, false, PLAN_NEXT_EXHAUSTED, FIX_NONE,
		  "exhausted for this phase (training)" },
		{ "no log, every step done", 2, 0, false, PLAN_NEXT_EXHAUSTED, FIX_NONE,
		  "no step of the plan is left" },
		{ "not a GPU OOM", 1, 4, false, PLAN_NEXT_NOT_OOM, FIX_NONE,
		  "no GPU out-of-memory" },
		{ "the run survived", 1, 5, false, PLAN_NEXT_SURVIVED, FIX_DROP_LARGEST_BUCKET,
		  "survived" },
		{ "the last change not tried yet", 1, 1, true, PLAN_NEXT_UNTRIED, FIX_NONE,
		  "has not been tried yet" },
		{ "untried wins over E", 1, 2, true, PLAN_NEXT_UNTRIED, FIX_NONE, "not been tried" },
	};
	struct diag_result open = verdict(DIAG_T_NONE, DIAG_P_TRAINING, 0);
	open.oom = true;
	open.failed_step = 337;
	open.unknown = DIAG_U_SKIP_OUTCOME;
	const struct diag_result *vs[] = { NULL, &b, &e, &unknown, &none, &skipped, &open };
	bool seen[PLAN_NEXT_COUNT] = { false };
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		const struct job *j = t[i].job == 1 ? big.j : t[i].job == 2 ? done.j : NULL;
		struct plan p;
		char words[768];
		plan_build(j, vs[t[i].v], &p);
		struct plan_decision d = plan_decide(&p, vs[t[i].v], t[i].untried);
		plan_decision_text(&d, &p, j, words, sizeof words);
		if (d.what != t[i].answer || d.fix != t[i].fix || !strstr(words, t[i].words))
			fail_msg("%s: got %s/%s \"%s\", expected %s/%s \"…%s…\"", t[i].what,
				 plan_next_name(d.what), fix_name(d.fix) ? fix_name(d.fix) : "-", words,
				 plan_next_name(t[i].answer),
				 fix_name(t[i].fix) ? fix_name(t[i].fix) : "-", t[i].words);
		seen[d.what] = true;
	}
	for (int a = 0; a < PLAN_NEXT_COUNT; a++)
		if (!seen[a])
			fail_msg("no case gives the answer %s", plan_next_name((enum plan_next)a));
	unload(&big);
	unload(&done);
}

/* D37: the checklist reads in the rollback plan's order (checkpointing first for an image job),
 * the worker last; an item ticked only by an unsaved edit says so. */
static void test_checklist_order_D37(void **state)
{
	(void)state;
	struct loaded l;
	load("legacy_accum.yaml", &l);
	struct plan p;
	plan_build(l.j, NULL, &p);
	enum check_item order[CHECK_COUNT];
	checklist_order(&p, order);
	assert_int_equal(p.steps[0].fix, FIX_GRADIENT_CHECKPOINTING);
	assert_int_equal(order[0], CHECK_GC);
	assert_int_equal(order[1], CHECK_BATCH);
	assert_int_equal(order[2], CHECK_BUCKET);
	assert_int_equal(order[CHECK_COUNT - 1], CHECK_WORKER);
	bool seen[CHECK_COUNT] = { false };
	for (int k = 0; k < CHECK_COUNT; k++) {
		assert_false(seen[order[k]]);
		seen[order[k]] = true;
	}

	/* The same job with gradient_checkpointing set but not saved. */
	struct doc_edit ed = { .op = DOC_EDIT_SET,
			       .path = "config.process[0].train.gradient_checkpointing",
			       .value = "true" };
	struct doc *nd = NULL;
	struct job *nj = NULL;
	struct err e;
	err_clear(&e);
	assert_int_equal(doc_apply(l.d, &ed, 1, &nd, &e), ERR_OK);
	assert_int_equal(job_from_doc(nd, &nj, &e), ERR_OK);
	struct checklist saved, now;
	checklist_build(l.j, NULL, &saved);
	checklist_build(nj, NULL, &now);
	checklist_mark_unsaved(&now, &saved);
	assert_int_equal(now.item[CHECK_GC], FIX_DONE);
	assert_non_null(strstr(now.reason[CHECK_GC], "(unsaved)"));
	assert_null(strstr(now.reason[CHECK_BATCH], "unsaved"));
	job_free(&nj);
	doc_free(&nd);
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_decision_table),
		cmocka_unit_test(test_first_fix_image),
		cmocka_unit_test(test_first_fix_video),
		cmocka_unit_test(test_after_unmoved_E11),
		cmocka_unit_test(test_first_fix_when_done),
		cmocka_unit_test(test_first_fix_without_job),
		cmocka_unit_test(test_first_fix_acts_on_the_phase),
		cmocka_unit_test(test_checklist_agrees_with_plan),
		cmocka_unit_test(test_plan_order),
		cmocka_unit_test(test_checklist),
		cmocka_unit_test(test_checklist_order_D37),
		cmocka_unit_test(test_scaleup),
		cmocka_unit_test(test_shared_cases),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
