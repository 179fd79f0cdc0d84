/* estimate_input.c — the one seam between a job and the memory model (SPEC §12): what the
 * estimate reads of the job, read once into a struct est_input. scripts/calibrate.py builds the
 * same struct from each public report, and tests/estimate feeds both models the same inputs. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oomfix/doc.h"
#include "oomfix/estimate.h"

/* The row model.name_or_path chooses within an arch ("1.3b", "flex"), "-" for the base row. */
static const char *variant_of(const struct job *j)
{
	char name[256] = "";
	const struct doc_node *n;
	char path[320];

	snprintf(path, sizeof path, "%s.model.name_or_path", j->process_path);
	n = doc_get(j->doc, path);
	if (n && (n = doc_deref(n)) && n->kind == DOC_SCALAR && n->value) {
		size_t i;
		for (i = 0; n->value[i] && i + 1 < sizeof name; i++)
			name[i] = (char)tolower((unsigned char)n->value[i]);
		name[i] = 0;
	}
	if (strstr(name, "1.3b") || strstr(name, "1_3b") || strstr(name, "1-3b"))
		return "1.3b";
	if (strstr(name, "flex"))
		return "flex";
	return "-";
}

static const struct doc_node *pget(const struct job *j, const char *rel)
{
	char path[320];
	snprintf(path, sizeof path, "%s.%s", j->process_path, rel);
	const struct doc_node *n = doc_get(j->doc, path);
	return n && !doc_is_null(n) ? n : NULL;
}

static bool pbool(const struct job *j, const char *rel, bool def)
{
	const struct doc_node *n = pget(j, rel);
	bool b;
	return n && doc_as_bool(n, &b) ? b : def;
}

static double pnum(const struct job *j, const char *rel, double def)
{
	const struct doc_node *n = pget(j, rel);
	double d;
	return n && doc_as_double(n, &d) ? d : def;
}

static const char *pstr(const struct job *j, const char *rel, const char *def)
{
	const struct doc_node *n = pget(j, rel);
	if (n)
		n = doc_deref(n);
	return n && n->kind == DOC_SCALAR && n->value && n->value[0] ? n->value : def;
}

static void copy_str(char *dst, size_t sz, const char *src)
{
	snprintf(dst, sz, "%s", src ? src : "");
}

void est_input_of(const struct job *j, struct est_input *in)
{
	memset(in, 0, sizeof *in);
	copy_str(in->arch, sizeof in->arch, j->arch);
	copy_str(in->variant, sizeof in->variant, variant_of(j));
	in->quantize = j->quantize;
	copy_str(in->qtype, sizeof in->qtype, j->qtype);
	in->quantize_te = j->quantize_te;
	copy_str(in->qtype_te, sizeof in->qtype_te, pstr(j, "model.qtype_te", "qfloat8"));
	in->low_vram = j->low_vram && j->arch_has_low_vram;
	in->offload = j->layer_offloading && j->arch_has_layer_offloading;
	if (in->offload) {
		in->offload_tr = pnum(j, "model.layer_offloading_transformer_percent", 1.0);
		in->offload_te = pnum(j, "model.layer_offloading_text_encoder_percent", 1.0);
	}
	in->assistant = pstr(j, "model.assistant_lora_path", NULL) != NULL;
	in->res = (double)job_max_bucket(j);
	if (in->res <= 0)
		in->res = 512;
	in->frames = 1;
	in->batch = j->batch_size > 0 ? j->batch_size : 1;
	in->cache_latents = j->ndatasets > 0;
	for (size_t i = 0; i < j->ndatasets; i++) {
		const struct job_dataset *d = &j->datasets[i];
		char rel[64];
		if (d->num_frames > in->frames)
			in->frames = d->num_frames;
		if (d->has_batch_size && d->batch_size > in->batch)
			in->batch = d->batch_size;
		in->cache_latents &= d->cache_latents;
		snprintf(rel, sizeof rel, "datasets[%zu].control_path", i);
		if (pstr(j, rel, NULL))
			in->control = true;
	}
	if (j->kind != JOB_KIND_VIDEO)
		in->frames = 1;
	in->gc = j->gradient_checkpointing;
	/* An adapter (redux, IP) trains about as much as a LoRA; no network and no adapter is a
	 * full fine-tune. */
	if (pget(j, "network") || pget(j, "adapter")) {
		in->rank = pnum(j, "network.linear", pnum(j, "network.rank", 16));
		if (!(in->rank >= 1) || !isfinite(in->rank))
			in->rank = 16; /* 0, negative or not a number: the trainer would refuse it */
	}
	copy_str(in->optimizer, sizeof in->optimizer, pstr(j, "train.optimizer", "adamw"));
	in->te_gpu = !(pbool(j, "train.unload_text_encoder", false) ||
		       pbool(j, "train.cache_text_embeddings", false) ||
		       pbool(j, "datasets[0].cache_text_embeddings", false));
	in->sampling = !j->disable_sampling && j->has_sample;
	in->baseline = in->sampling && !j->skip_first_sample;
	in->sample_w = j->sample_width > 0 ? (double)j->sample_width : 1024;
	in->sample_h = j->sample_height > 0 ? (double)j->sample_height : 1024;
	for (size_t i = 0; j->prompts && i < j->nprompt_items; i++) {
		if (j->prompts[i].has_width && (double)j->prompts[i].width > in->sample_w)
			in->sample_w = (double)j->prompts[i].width;
		if (j->prompts[i].has_height && (double)j->prompts[i].height > in->sample_h)
			in->sample_h = (double)j->prompts[i].height;
	}
	in->sample_frames = j->kind == JOB_KIND_VIDEO && j->sample_num_frames > 1
				    ? (double)j->sample_num_frames : 1;
	in->guidance = pnum(j, "sample.guidance_scale", 4.0) > 1.0;
}
