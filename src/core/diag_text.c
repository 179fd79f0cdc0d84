/* diag_text.c — the verdict in words, one wording for the command line and the terminal UI. */
#include "oomfix/diag.h"

#include <stdio.h>
#include <string.h>

#include "oomfix/i18n.h"

const struct diag_timing_def diag_timings[DIAG_T_COUNT] = {
	[DIAG_T_NONE] = { DIAG_T_NONE, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
	[DIAG_T_BEFORE_TRAINING] = {
		DIAG_T_BEFORE_TRAINING, 'A', "before_training", N_("before training"),
		N_("Loading the model, caching latents or text embeddings, or the baseline sample "
		   "needs more memory than the card has."),
		N_("low_vram for the model load, a smaller top bucket or fewer frames for caching, "
		   "lighter or no samples for the baseline."),
		N_("A before training"), N_("model load, caching or baseline sample"),
		N_("low VRAM/quantize; smaller top bucket; lighter sampling") },
	[DIAG_T_FIRST_STEPS] = {
		DIAG_T_FIRST_STEPS, 'B', "first_steps", N_("first steps"),
		N_("One training step does not fit: batch, resolution, frames or activations are too "
		   "big."),
		N_("the next step of the rollback plan below."),
		N_("B first steps 1-10"), N_("one training step is too big"),
		N_("the next step of the rollback plan") },
	[DIAG_T_SAMPLING] = {
		DIAG_T_SAMPLING, 'C', "sampling", N_("while sampling"),
		N_("Training fits, but the preview samples are bigger than the training batches."),
		N_("lighter_sampling, then disable_sampling."),
		N_("C while sampling"), N_("sample size, steps or frames"),
		N_("lighter sampling, then disable it") },
	[DIAG_T_INTERMITTENT] = {
		DIAG_T_INTERMITTENT, 'D', "intermittent", N_("intermittent"),
		N_("Most steps fit; the largest bucket or the longest clips go over the limit now and "
		   "then."),
		N_("drop_largest_bucket (video: num_frames)."),
		N_("D later, or skips"), N_("the largest bucket or longest clip"),
		N_("drop the largest bucket; fewer frames") },
	[DIAG_T_ENVIRONMENT] = {
		DIAG_T_ENVIRONMENT, 'E', "environment", N_("environment"),
		N_("A conservative job still fails at once, or other processes hold the card: the "
		   "worker or the GPU is at fault, not the settings."),
		N_("fresh_worker: stop retrying the same job, start a fresh worker, escalate if a "
		   "known-good job fails too."),
		N_("E environment"), N_("GPU or worker state, other process"),
		N_("fresh worker; escalate if it repeats") },
};

const char *diag_timing_name(enum diag_timing t)
{
	return (unsigned)t < DIAG_T_COUNT ? diag_timings[t].name : NULL;
}

char diag_timing_letter(enum diag_timing t)
{
	return (unsigned)t < DIAG_T_COUNT ? diag_timings[t].letter : 0;
}

const char *diag_timing_words(enum diag_timing t)
{
	return (unsigned)t < DIAG_T_COUNT && diag_timings[t].words ? _(diag_timings[t].words) : "";
}

const char *diag_phase_label(enum diag_phase p)
{
	static const char *const label[DIAG_P_COUNT] = {
		[DIAG_P_NONE] = N_("unknown"),
		[DIAG_P_MODEL_LOAD] = N_("loading the model"),
		[DIAG_P_CACHING] = N_("caching latents or text embeddings"),
		[DIAG_P_BASELINE_SAMPLING] = N_("generating the baseline samples"),
		[DIAG_P_TRAINING] = N_("training"),
		[DIAG_P_SAMPLING] = N_("generating samples"),
		[DIAG_P_SAVING] = N_("saving"),
	};
	return _(label[(unsigned)p < DIAG_P_COUNT ? p : DIAG_P_NONE]);
}

bool diag_has_hint(const struct diag_result *r, const char *id)
{
	for (size_t i = 0; i < r->nhints; i++)
		if (!strcmp(r->hints[i].id, id))
			return true;
	return false;
}

/* For the sentence "It ran out of GPU memory before training started, <phase>." */
static const char *phase_while(enum diag_phase p)
{
	static const char *const words[DIAG_P_COUNT] = {
		[DIAG_P_NONE] = N_("at an unknown point"),
		[DIAG_P_MODEL_LOAD] = N_("while the model was loading"),
		[DIAG_P_CACHING] = N_("while latents or text embeddings were being cached"),
		[DIAG_P_BASELINE_SAMPLING] = N_("while the baseline samples were being generated"),
		[DIAG_P_TRAINING] = N_("during a training step"),
		[DIAG_P_SAMPLING] = N_("while samples were being generated"),
		[DIAG_P_SAVING] = N_("while a checkpoint was being saved"),
	};
	return _(words[(unsigned)p < DIAG_P_COUNT ? p : DIAG_P_NONE]);
}

static const char *not_oom(enum diag_other o)
{
	static const char *const words[DIAG_O_COUNT] = {
		[DIAG_O_NONE] = N_("No GPU out-of-memory error was found in this log."),
		[DIAG_O_HOST_OOM] = N_("This was not a GPU out-of-memory: the machine ran out of RAM and "
				       "the kernel killed the trainer. Free host memory (fewer dataloader "
				       "workers, no other jobs, more swap) rather than changing GPU "
				       "settings."),
		[DIAG_O_MISSING_FILE] = N_("This was not a memory problem: a file or folder the job needs "
					   "does not exist."),
		[DIAG_O_HF_AUTH] = N_("This was not a memory problem: Hugging Face refused to serve the "
				      "model (token or licence acceptance)."),
		[DIAG_O_CONFIG_ERROR] = N_("This was not a memory problem: the trainer rejected the job's "
					   "configuration."),
		[DIAG_O_PYTHON_ERROR] = N_("This was not a memory problem: the trainer stopped with a "
					   "Python error."),
	};
	return _(words[(unsigned)o < DIAG_O_COUNT ? o : DIAG_O_NONE]);
}

/* The verdict of a run that did not run out of GPU memory: what stopped it, or what of the
 * memory it shows. */
static void no_oom_sentence(const struct diag_result *r, char *buf, size_t sz)
{
	if (r->lines == 0)
		snprintf(buf, sz, "%s", _("The log is empty."));
	else if (r->other == DIAG_O_PYTHON_ERROR && diag_has_hint(r, "cublas_not_initialized") &&
		 !diag_has_hint(r, "cudnn_no_memory"))
		snprintf(buf, sz, "%s",
			 _("No error that counts as GPU out-of-memory was found, but cuBLAS could "
			   "not start (CUBLAS_STATUS_NOT_INITIALIZED) while the model loaded or in "
			   "the first step, which usually means the card had no room left. Treat it "
			   "as GPU memory pressure: the rollback plan applies."));
	else if (diag_has_hint(r, "aoti_alloc_failed"))
		snprintf(buf, sz, "%s",
			 _("No error that counts as GPU out-of-memory was found, but an "
			   "AOTInductor-compiled model could not allocate a buffer "
			   "(aoti_torch_empty_strided … API call failed): probably out of GPU "
			   "memory, though the call does not say why."));
	else if (r->other == DIAG_O_PYTHON_ERROR && diag_has_hint(r, "cudnn_no_memory"))
		snprintf(buf, sz, "%s",
			 _("No error that counts as GPU out-of-memory was found, but cuDNN could "
			   "not get the memory it needed (CUDNN_STATUS_NOT_ENOUGH_MEMORY) and the "
			   "trainer stopped. Treat it as GPU memory pressure: the rollback plan "
			   "applies."));
	else if (r->other == DIAG_O_NONE && r->stopped && r->now_step > 0)
		snprintf(buf, sz, _("No GPU out-of-memory error was found in this log: the run was "
				    "stopped before its end (Ctrl-C, a hang-up or a retry's probe), "
				    "after training step %lld."), r->now_step);
	else if (r->other == DIAG_O_NONE && r->stopped)
		snprintf(buf, sz, "%s", _("No GPU out-of-memory error was found in this log: the run "
					  "was stopped before its end (Ctrl-C, a hang-up or a retry's "
					  "probe)."));
	else
		snprintf(buf, sz, "%s", not_oom(r->other));
}

/* Out of GPU memory because of the card, not the settings: other processes, memory none of
 * them accounts for, or a job that is already conservative. */
static void environment_sentence(const struct diag_result *r, char *buf, size_t sz)
{
	if (r->fitted_alone) {
		const struct memacct *m = &r->memory;
		char job[32], card[32], procs[256] = "";
		memacct_format(m->job, job, sizeof job);
		memacct_format(m->capacity, card, sizeof card);
		for (size_t i = 0; i < m->nother; i++) {
			char one[64], b[32];
			size_t k = strlen(procs);
			memacct_format(m->other[i].bytes, b, sizeof b);
			snprintf(one, sizeof one, _("process %lld: %s"), m->other[i].pid, b);
			snprintf(procs + k, sizeof procs - k, "%s%s", k ? ", " : "", one);
		}
		snprintf(buf, sz,
			 _("It ran out of GPU memory because other processes held the card: this "
			   "job had %s of %s and would have fitted alone (%s). Stop them, or start "
			   "a fresh worker; the settings are not what is too big."),
			 job, card, procs);
		return;
	}
	if (memacct_environment(&r->memory)) {
		const struct memacct *m = &r->memory;
		char job[32], card[32], rest[32];
		memacct_format(m->job, job, sizeof job);
		memacct_format(m->capacity, card, sizeof card);
		memacct_format(m->others_total + (m->unaccounted > 0 ? m->unaccounted : 0), rest,
			       sizeof rest);
		if (m->job < 0) {
			/* the job is not told apart from the processes listed: only what none
			 * of them holds is surely someone else's */
			memacct_format(m->unaccounted, rest, sizeof rest);
			snprintf(buf, sz,
				 _("It ran out of GPU memory because the card was held by others: "
				   "%s of %s was held by something no listed process accounts for. "
				   "The settings are not what is too big: free the card or start a "
				   "fresh worker."), rest, card);
			return;
		}
		snprintf(buf, sz,
			 _("It ran out of GPU memory because the card was held by others: this job "
			   "had %s of %s, other processes or memory it cannot see held %s. The "
			   "settings are not what is too big: free the card or start a fresh "
			   "worker."), job, card, rest);
		return;
	}
	snprintf(buf, sz, "%s",
		 _("It ran out of GPU memory although the job is already conservative: the "
		   "worker or the GPU is the likely cause, not the settings."));
}

/* Whether the run died of it: a sampling OOM caught, batches skipped, or a skip that crashed. */
static void survival_note(const struct diag_result *r, char *buf, size_t sz)
{
	size_t n = strlen(buf);
	if (r->survived && r->timing == DIAG_T_SAMPLING && n + 2 < sz)
		snprintf(buf + n, sz - n, " %s",
			 _("The trainer caught it and training went on to later steps; the run did "
			   "not die of it."));
	else if (r->survived && n + 2 < sz)
		snprintf(buf + n, sz - n, " %s",
			 _("The run skipped those batches and went on; it did not die of it."));
	else if (r->skip_crashed && n + 2 < sz)
		snprintf(buf + n, sz - n, " %s",
			 _("The trainer skipped the batch, then stopped at once with an error on the "
			   "skipped batch: that error is a consequence, the out-of-memory was the "
			   "failure."));
}

void diag_sentence(const struct diag_result *r, char *buf, size_t sz)
{
	long long st = r->failed_step;

	if (!r->oom) {
		no_oom_sentence(r, buf, sz);
		return;
	}
	switch (r->timing) {
	case DIAG_T_NONE:
		if (r->unknown == DIAG_U_SKIP_OUTCOME && st > 0)
			snprintf(buf, sz,
				 _("It ran out of GPU memory in training step %lld and the trainer skipped "
				   "that batch, but the log ends there: no later step and no error show "
				   "whether the run went on, so it is not taken as survived."), st);
		else if (r->phase == DIAG_P_TRAINING)
			snprintf(buf, sz, "%s",
				 _("It ran out of GPU memory during training, but the log does not show "
				   "at which step: no training progress bar was captured."));
		else
			snprintf(buf, sz, "%s",
				 _("It ran out of GPU memory, but the log does not show when: no phase "
				   "message, traceback frame or progress bar places it. A capture of the "
				   "trainer's whole output (stdout and stderr) would."));
		break;
	case DIAG_T_BEFORE_TRAINING:
		snprintf(buf, sz, _("It ran out of GPU memory before training started, %s."),
			 phase_while(r->phase));
		break;
	case DIAG_T_FIRST_STEPS:
		if (st > 0)
			snprintf(buf, sz,
				 _("It ran out of GPU memory in training step %lld, one of the first "
				   "steps: the step itself does not fit."), st);
		else
			snprintf(buf, sz, "%s",
				 _("It ran out of GPU memory in one of the first training steps: the "
				   "step itself does not fit."));
		break;
	case DIAG_T_SAMPLING:
		snprintf(buf, sz,
			 _("It ran out of GPU memory while generating samples at step %lld; training "
			   "itself fitted."), st);
		break;
	case DIAG_T_INTERMITTENT:
		if (st > 0)
			snprintf(buf, sz,
				 _("It ran out of GPU memory at step %lld, after training had been "
				   "running: some batches are bigger than others."), st);
		else
			snprintf(buf, sz, "%s",
				 _("It ran out of GPU memory now and then during training: some batches "
				   "are bigger than others."));
		break;
	case DIAG_T_ENVIRONMENT:
		environment_sentence(r, buf, sz);
		break;
	default:
		snprintf(buf, sz, "%s", _("It ran out of GPU memory."));
	}
	survival_note(r, buf, sz);
}

const char *diag_memory_part_label(int part)
{
	static const char *const label[MEMACCT_NPARTS] = {
		[MEMACCT_JOB] = N_("this job"),
		[MEMACCT_OTHERS] = N_("other processes"),
		[MEMACCT_UNACCOUNTED] = N_("unaccounted"),
		[MEMACCT_FREE] = N_("free"),
	};
	return part >= 0 && part < MEMACCT_NPARTS ? _(label[part]) : "";
}

void diag_memory_advice(const struct diag_result *r, char *buf, size_t sz)
{
	const struct memacct *m = &r->memory;
	size_t n = 0;
	char a[32], b[32];

	buf[0] = '\0';
	if (m->present && memacct_fragmented(m)) {
		memacct_format(m->pytorch_reserved_unallocated, a, sizeof a);
		memacct_format(m->pytorch_allocated, b, sizeof b);
		snprintf(buf, sz,
			 _("PyTorch held %s reserved but unused beside the %s it allocated: the memory "
			   "is fragmented. Starting the trainer with "
			   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in its environment may let "
			   "the same job fit (a setting of the environment, not of the job file)."),
			 a, b);
		n = strlen(buf);
	}
	if (m->present && m->limit >= 0 && n + 2 < sz) {
		if (n)
			buf[n++] = ' ';
		memacct_format(m->limit, a, sizeof a);
		memacct_format(m->capacity, b, sizeof b);
		snprintf(buf + n, sz - n, _("The allocation broke a per-process limit of %s on a %s "
					    "card: the program that runs the trainer (ComfyUI, for one) "
					    "set a memory fraction, which can be raised there."), a, b);
	}
}

bool diag_memory_suspected(const struct diag_result *r)
{
	return !r->oom && (diag_has_hint(r, "cudnn_no_memory") ||
			   diag_has_hint(r, "cublas_not_initialized") ||
			   diag_has_hint(r, "aoti_alloc_failed"));
}
