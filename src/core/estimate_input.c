/* estimate_input.c — the one seam between a job and the memory model (SPEC §12): what the
 * estimate reads of the job, read once into a struct est_input. scripts/calibrate.py builds the
 * same struct from each public report, and tests/estimate feeds both models the same inputs. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* True when network.network_kwargs.only_if_contains narrows the LoRA to the attention: every
 * entry names an attention projection (AI Toolkit's LoRA otherwise takes every linear layer of
 * the blocks, toolkit/lora_special.py). */
static bool attention_only(const struct job *j)
{
	static const char *const attn[] = { "to_q", "to_k", "to_v", "to_out", "attn", "attention",
					    "q_proj", "k_proj", "v_proj", "o_proj" };
	const struct doc_node *n = pget(j, "network.network_kwargs.only_if_contains");
	if (n)
		n = doc_deref(n);
	if (!n || n->kind != DOC_SEQ || n->n == 0)
		return false;
	for (size_t i = 0; i < n->n; i++) {
		const struct doc_node *it = n->items[i] ? doc_deref(n->items[i]) : NULL;
		char v[128];
		size_t k;
		if (!it || it->kind != DOC_SCALAR || !it->value)
			return false;
		for (k = 0; it->value[k] && k + 1 < sizeof v; k++)
			v[k] = (char)tolower((unsigned char)it->value[k]);
		v[k] = 0;
		bool hit = false;
		for (size_t a = 0; a < sizeof attn / sizeof *attn && !hit; a++)
			hit = strstr(v, attn[a]) != NULL;
		if (!hit)
			return false;
	}
	return true;
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
	in->adapter_attn = in->rank > 0 && attention_only(j);
	in->adapter_bf16 = false; /* BaseSDTrainProcess: network.force_to(..., float32) */
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

/* ---- the input as text: a store's key (measure.c) ----------------------------------------- */

enum fkind { F_STR, F_BOOL, F_DBL, F_LL };

/* Every field of struct est_input, in one order; `shape` marks the sizes a nearby run may differ
 * in (the model's difference carries a measurement across them). */
static const struct {
	const char *name;
	enum fkind kind;
	size_t off, size;
	bool shape;
	bool optional;          /* added later: a stored key without it reads as false */
} fields[] = {
#define S(f) { #f, F_STR, offsetof(struct est_input, f), sizeof ((struct est_input *)0)->f, false, false }
#define B(f) { #f, F_BOOL, offsetof(struct est_input, f), 0, false, false }
#define O(f) { #f, F_BOOL, offsetof(struct est_input, f), 0, false, true }
#define D(f, sh) { #f, F_DBL, offsetof(struct est_input, f), 0, sh, false }
#define L(f, sh) { #f, F_LL, offsetof(struct est_input, f), 0, sh, false }
	S(arch), S(variant), B(quantize), S(qtype), B(quantize_te), S(qtype_te), B(low_vram),
	B(offload), D(offload_tr, false), D(offload_te, false), B(assistant), D(res, true),
	L(frames, true), L(batch, true), B(gc), D(rank, true), S(optimizer), O(adapter_attn),
	O(adapter_bf16), B(te_gpu),
	B(cache_latents), B(control), B(sampling), B(baseline), D(sample_w, true),
	D(sample_h, true), D(sample_frames, true), B(guidance),
#undef S
#undef B
#undef O
#undef D
#undef L
};

static size_t put_field(char *buf, size_t sz, size_t n, const struct est_input *in, size_t i)
{
	const char *p = (const char *)in + fields[i].off;
	char v[80];
	switch (fields[i].kind) {
	case F_STR: {
		/* the separators cannot occur in a value: they are replaced */
		size_t k;
		for (k = 0; p[k] && k + 1 < sizeof v; k++)
			v[k] = p[k] == ';' || p[k] == '=' ? '_' : p[k];
		v[k] = 0;
		break;
	}
	case F_BOOL: snprintf(v, sizeof v, "%d", *(const bool *)p ? 1 : 0); break;
	case F_DBL: snprintf(v, sizeof v, "%.6g", *(const double *)p); break;
	case F_LL: snprintf(v, sizeof v, "%lld", *(const long long *)p); break;
	}
	int w = snprintf(buf + (n < sz ? n : sz), n < sz ? sz - n : 0, "%s=%s;", fields[i].name, v);
	return n + (w > 0 ? (size_t)w : 0);
}

size_t est_input_key(const struct est_input *in, bool shape, char *buf, size_t sz)
{
	size_t n = 0;
	if (sz)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
		if (shape || !fields[i].shape)
			n = put_field(buf, sz, n, in, i);
	return n;
}

bool est_input_parse(const char *key, struct est_input *in)
{
	memset(in, 0, sizeof *in);
	/* each required field once: a key that repeats one cannot stand for another it lacks */
	uint64_t seen = 0, required = 0;
	_Static_assert(sizeof fields / sizeof *fields <= 64, "one bit per field");
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
		if (!fields[i].optional)
			required |= UINT64_C(1) << i;
	for (const char *s = key; s && *s;) {
		const char *eq = strchr(s, '='), *end = eq ? strchr(eq, ';') : NULL;
		if (!eq || !end)
			return false;
		size_t i;
		for (i = 0; i < sizeof fields / sizeof *fields; i++)
			if (strlen(fields[i].name) == (size_t)(eq - s) &&
			    !memcmp(fields[i].name, s, (size_t)(eq - s)))
				break;
		if (i < sizeof fields / sizeof *fields) {
			char v[80];
			size_t len = (size_t)(end - eq - 1);
			if (len >= sizeof v)
				return false;
			memcpy(v, eq + 1, len);
			v[len] = 0;
			char *p = (char *)in + fields[i].off, *e;
			switch (fields[i].kind) {
			case F_STR:
				if (len >= fields[i].size)
					return false;
				memcpy(p, v, len + 1);
				break;
			case F_BOOL: *(bool *)p = v[0] == '1'; break;
			case F_DBL:
				*(double *)p = strtod(v, &e);
				if (e == v || !isfinite(*(double *)p))
					return false;
				break;
			case F_LL:
				*(long long *)p = strtoll(v, &e, 10);
				if (e == v)
					return false;
				break;
			}
			if (!fields[i].optional)
				seen |= UINT64_C(1) << i;
		}
		s = end + 1;
	}
	if (seen != required)
		return false;
	/* sizes a job can have: a store edited by hand cannot ask the model for less */
	bool sane = in->res > 0 && in->res <= 1e6 && in->frames >= 1 && in->frames <= 1000000 &&
		    in->batch >= 1 && in->batch <= 1000000 && in->rank >= 0 && in->rank <= 1e6 &&
		    in->sample_w >= 0 && in->sample_w <= 1e6 && in->sample_h >= 0 &&
		    in->sample_h <= 1e6 && in->sample_frames >= 0 && in->sample_frames <= 1e6 &&
		    in->offload_tr >= 0 && in->offload_tr <= 1 && in->offload_te >= 0 &&
		    in->offload_te <= 1;
	return sane;
}
