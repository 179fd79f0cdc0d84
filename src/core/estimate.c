/* estimate.c — each phase's GPU memory from an est_input, before the run (SPEC §12); the input
 * is read in estimate_input.c, the card in estimate_card.c, the path in estimate_path.c.
 *
 * Units inside are GiB as doubles; the results are bytes. scripts/calibrate.py holds the same
 * model in Python to fit the family coefficients; tests/estimate checks that both agree on every
 * data point, so a change here must be made there too.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "oomfix/doc.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "estimate_int.h"
#include "oomfix/measure.h"

enum load_tr { LT_GPU, LT_GPU_UNLESS_LOW_VRAM, LT_CPU };
enum load_te { LE_GPU_BF16, LE_CPU_QUANT };
enum with_te { WT_YES, WT_NO, WT_UNLESS_LOW_VRAM, WT_TE_FIRST };

/* One row of data/arch-memory.tsv with its counted activations (data/activations-sim.tsv). */
struct est_arch {
	const char *arch, *variant, *family;
	double tr_b, hidden;
	int experts;
	double te_b, aux_b;
	enum load_tr load_tr;
	enum load_te load_te;
	enum with_te tr_with_te;
	bool park, one_expert;
	bool te_flag_quantize;   /* the big TE follows model.quantize (sd3), else quantize_te */
	bool te_qtype_te;        /* it reads qtype_te, else qtype */
	double tok_px, tok_mult, frame_div;
	bool cfg, nominal;
	/* GiB per latent token and per text token that a training step keeps for backward:
	 * without checkpointing (sv), with it (ck), and the largest block's own (bl). */
	double sv_img, sv_txt, ck_img, ck_txt, bl_img, bl_txt;
	double txt_tok;          /* the text tokens the trainer feeds the denoiser */
	bool counted;            /* its own counted row; false: a sibling's form at its dimensions */
	const char *sim;         /* the counted arch it takes them from */
	double max_bucket, max_frames; /* the largest shapes among its family's data points */
	int blocks;              /* transformer blocks (an attention-only adapter's count) */
};

struct est_band {
	double lo, hi;           /* −lo, +hi of the phase */
	int points;              /* left-out residuals behind it */
};

#include "estimate_table.h"

#define GIB 1073741824.0

static const struct est_arch *find_row(const struct est_input *in)
{
	const struct est_arch *base = NULL;
	for (size_t i = 0; i < sizeof est_archs / sizeof *est_archs; i++) {
		if (strcmp(est_archs[i].arch, in->arch))
			continue;
		if (!strcmp(est_archs[i].variant, in->variant))
			return &est_archs[i];
		if (!strcmp(est_archs[i].variant, "-"))
			base = &est_archs[i];
	}
	return base;
}

/* Bytes per weight of a qtype (memory-reference §1), the ARA part after '|' ignored. */
static double qtype_bpp(const char *q, bool *unknown, bool *ara)
{
	char s[48];
	size_t i;
	for (i = 0; q && q[i] && q[i] != '|' && i + 1 < sizeof s; i++)
		s[i] = (char)tolower((unsigned char)q[i]);
	s[i] = 0;
	if (ara)
		*ara = q && strchr(q, '|');
	int bits;
	if (!strcmp(s, "uint8"))
		return 2.0; /* refused by the quantizer: stays bf16 */
	if ((sscanf(s, "uint%d", &bits) == 1 || sscanf(s, "convrotint%d", &bits) == 1) && bits >= 1 &&
	    bits <= 7)
		return bits / 8.0 + 3.0 / 64.0;
	if (!strcmp(s, "qfloat8") || !strcmp(s, "float8") || !strcmp(s, "int8") ||
	    !strcmp(s, "qint8") || !strcmp(s, "convrot8") || !strcmp(s, "fp8"))
		return 1.0;
	if (!strcmp(s, "nvfp4") || !strcmp(s, "convrot4") || !strcmp(s, "qint4") || !strcmp(s, "nf4"))
		return 0.5625;
	if (!strcmp(s, "qint2") || !strcmp(s, "int2"))
		return 2 / 8.0 + 3.0 / 64.0;
	if (!strcmp(s, "convrotbitnet"))
		return 0.25;
	if (!strcmp(s, "bf16") || !strcmp(s, "fp16") || !strcmp(s, "none") || !s[0])
		return 2.0;
	if (unknown)
		*unknown = true;
	return 1.0;
}

/* Quantized weights in GiB: most at bpp, a small share kept in bf16. */
static double qbytes(double params_b, double bpp)
{
	return params_b * 1e9 * (bpp + KEPT_BF16 * (2.0 - bpp)) / GIB;
}

/* Optimizer state bytes per trained parameter. */
static double opt_bytes(const char *o)
{
	char s[48];
	size_t i;
	for (i = 0; o && o[i] && i + 1 < sizeof s; i++)
		s[i] = (char)tolower((unsigned char)o[i]);
	s[i] = 0;
	if (strstr(s, "8bit"))
		return 2.0;
	if (strstr(s, "adafactor"))
		return 1.0;
	if (strstr(s, "prodigy"))
		return 16.0;
	if (strstr(s, "lion"))
		return 4.0;
	if (strstr(s, "automagic"))
		return 2.0;
	return 8.0;
}

/* Bytes of `gib`, saturated: a job read from a file can ask for anything (a 25-megapixel bucket,
 * a rank of 1e300), and no number may wrap or turn NaN into a size. */
static int64_t to_bytes(double gib)
{
	double b = gib * GIB;
	if (!(b > 0))
		return 0;
	if (b >= (double)EST_BYTES_MAX)
		return EST_BYTES_MAX;
	return (int64_t)llround(b);
}

/* A phase's parts in GiB before the fitted constants: `base` (weights, adapter, encoders, VAE)
 * and `act` (the counted activations, scaled by K_ACT_GC or K_ACT_NOGC); the phase is
 * K_TOTAL × (base + k × act) + CONTEXT_GIB for the training step, base + k × act + CONTEXT_GIB
 * for the others (scripts/calibrate.py's value()). */
struct est_parts {
	double weights, encoders, adapter, act, vae;
	double work;             /* a sample's working set (not scaled: no saved tensors) */
	bool gc;
	double arith;            /* the part that is arithmetic (weights and state a loader
				  * places): ± est_load_band beside the band of the rest */
	bool step;               /* the training step: K_TOTAL scales it */
};

/* The share K_TOTAL scales a phase by (calibrate.py's total_share()): the allocator's rounding
 * and workspace of the training step, whose peaks it is fitted on; the other phases are their
 * parts (weights placed whole, a sample's working set) in their own bands. */
static double total_share(const struct est_parts *p)
{
	return p->step ? K_TOTAL : 1.0;
}

static double parts_gib(const struct est_parts *p)
{
	double k = p->gc ? K_ACT_GC : K_ACT_NOGC;
	return total_share(p) * (p->weights + p->encoders + p->adapter + k * p->act + p->work +
				 p->vae) + CONTEXT_GIB;
}

/* The phase from its parts, with its band (−lo, +hi of the whole) and its terms in bytes: each
 * part as the constants scale it, the rest (context, rounding) as overhead. */
static void set_phase(struct est_phase_est *ph, const struct est_parts *p, struct est_band b,
		      enum est_basis basis)
{
	double gib = parts_gib(p);
	double k = p->gc ? K_ACT_GC : K_ACT_NOGC;
	ph->on = true;
	ph->bytes = to_bytes(gib);
	double kt = total_share(p), arith = kt * p->arith, rest = gib - arith;
	ph->low = to_bytes(arith * (1.0 - est_load_band.lo) + rest * (1.0 - b.lo));
	ph->high = to_bytes(arith * (1.0 + est_load_band.hi) + rest * (1.0 + b.hi));
	ph->points = b.points;
	ph->basis = basis;
	ph->terms.weights = to_bytes(kt * p->weights);
	ph->terms.encoders = to_bytes(kt * p->encoders);
	ph->terms.adapter = to_bytes(kt * p->adapter);
	ph->terms.activations = to_bytes(kt * (k * p->act + p->work));
	ph->terms.vae = to_bytes(kt * p->vae);
	int64_t parts = ph->terms.weights + ph->terms.encoders + ph->terms.adapter +
			ph->terms.activations + ph->terms.vae;
	ph->terms.overhead = ph->bytes > parts ? ph->bytes - parts : 0;
}

double est_sold_gib(double sold)
{
	for (size_t i = 0; i < sizeof card_table / sizeof *card_table; i++)
		if (fabs(card_table[i].sold - sold) < 0.01)
			return card_table[i].gib;
	return 0;
}

int64_t est_gib_bytes(double gib)
{
	return to_bytes(gib);
}

/* The weights on the GPU (GiB) and how the job places them. */
struct est_weights {
	bool quant, low, te_quant, te_gpu, ara;
	double tr_bf16, tq, te_bf16, eq, aux, tr_share, te_share;
	int experts_train;
};

static void weights_of(const struct est_input *in, const struct est_arch *a, struct estimate *out,
		       struct est_weights *w)
{
	bool unknown_q = false;
	w->ara = false;
	w->quant = in->quantize;
	w->low = in->low_vram;
	w->tr_bf16 = a->tr_b * 1e9 * 2.0 / GIB;
	w->tq = w->quant ? qbytes(a->tr_b, qtype_bpp(in->qtype, &unknown_q, &w->ara)) : w->tr_bf16;
	w->te_quant = a->te_flag_quantize ? in->quantize : in->quantize_te;
	const char *te_qtype = a->te_qtype_te ? in->qtype_te : in->qtype;
	w->te_bf16 = a->te_b * 1e9 * 2.0 / GIB;
	w->eq = w->te_quant ? qbytes(a->te_b, qtype_bpp(te_qtype, &unknown_q, NULL)) : w->te_bf16;
	w->aux = a->aux_b * 1e9 * 2.0 / GIB;
	if (w->ara)
		out->notes |= EST_NOTE_ARA;
	if (unknown_q)
		out->notes |= EST_NOTE_QTYPE;
	w->tr_share = 1.0;
	w->te_share = 1.0;
	if (in->offload) {
		w->tr_share = fmax(1.0 - in->offload_tr, 0.05);
		w->te_share = fmax(1.0 - in->offload_te, 0.05);
		out->notes |= EST_NOTE_OFFLOAD;
	}
	w->experts_train = w->low && a->one_expert ? 1 : a->experts;
	w->te_gpu = in->te_gpu;
}

static bool is_video(const struct est_arch *a)
{
	return !strcmp(a->family, "wan") || !strcmp(a->family, "ltx");
}

/* Latent tokens of one sample of w × h pixels and `frames` frames; a control image joins the
 * sequence (× 2) where the row does not count it already. */
static double tokens_of(const struct est_arch *a, const struct est_input *in, double w, double h,
			double frames)
{
	double lf = frames > 1 ? floor((frames - 1) / a->frame_div) + 1 : 1;
	double mult = in->control ? fmax(a->tok_mult, 2.0) : a->tok_mult;
	return (w / a->tok_px) * (h / a->tok_px) * mult * lf;
}

/* What one training step keeps for backward (GiB), as data/activations-sim.tsv counts it. */
static double activations_of(const struct est_arch *a, const struct est_input *in, double frames)
{
	double ti = tokens_of(a, in, in->res, in->res, frames), tt = a->txt_tok;
	double b = (double)in->batch;
	return in->gc ? b * (a->ck_img * ti + a->ck_txt * tt) : b * (a->sv_img * ti + a->sv_txt * tt);
}

/* The adapter and its optimizer state: p parameters, w and state in GiB. */
struct est_adapter {
	double p, w, state, opt_gib; /* opt_gib: the optimizer's state alone */
	const char *opt;
};

static void adapter_of(const struct est_input *in, const struct est_arch *a, struct estimate *out,
		       struct est_adapter *ad)
{
	ad->opt = in->optimizer;
	if (in->rank > 0) {
		/* On every linear layer of the blocks (AI Toolkit's default), or on the attention's
		 * four projections only (q, k, v, out). */
		if (in->adapter_attn)
			ad->p = in->rank * a->blocks * 4 * 2 * a->hidden * a->experts;
		else
			ad->p = in->rank * LORA_PER_RANK * a->tr_b * 1e9 / a->hidden * a->experts;
		/* AI Toolkit keeps the adapter in fp32; a bf16 adapter keeps its gradient and a
		 * full-width optimizer's state in bf16 too. */
		double ob = opt_bytes(ad->opt), wb = 4.0;
		if (in->adapter_bf16) {
			wb = 2.0;
			ob = ob >= 4 ? ob / 2 : ob;
		}
		ad->w = ad->p * wb / GIB;
		ad->opt_gib = ad->p * ob / GIB;
		ad->state = ad->p * wb / GIB + ad->opt_gib; /* the gradient, as wide as the weight */
	} else {
		/* A full fine-tune: gradients and optimizer state for every weight. */
		ad->p = a->tr_b * 1e9;
		ad->w = 0;
		ad->opt_gib = ad->p * opt_bytes(ad->opt) / GIB;
		ad->state = ad->p * 2.0 / GIB + ad->opt_gib;
		out->notes |= EST_NOTE_FULL_FT;
	}
}

/* Model load: the loader's worst moment (memory-reference §4); *resident_tr and *resident are
 * what it leaves on the GPU (the transformer, and it with the text encoder). */
static double load_gib(const struct est_input *in, const struct est_arch *a,
		       const struct est_weights *w, double *resident_tr, double *resident)
{
	double step_tr;
	if (w->quant) {
		bool on_gpu = a->load_tr == LT_GPU || (a->load_tr == LT_GPU_UNLESS_LOW_VRAM && !w->low);
		step_tr = on_gpu ? w->tr_bf16 + w->tq * (a->experts - 1) : w->tr_bf16 * BLOCK_SHARE;
		/* An accuracy-recovery or assistant adapter on a two-expert model quantized on the
		 * GPU: both experts are built in bf16 before either is quantized
		 * (wan22_14b_model.py); low_vram keeps them on the CPU. */
		if ((w->ara || in->assistant) && a->experts > 1 && on_gpu)
			step_tr = fmax(step_tr, w->tr_bf16 * a->experts);
	} else {
		step_tr = w->low && a->park ? 0 : w->tr_bf16 * a->experts;
	}
	if (a->tr_with_te == WT_TE_FIRST && !w->low) /* hidream: Llama first, kept on the GPU */
		step_tr += w->eq * w->te_share;
	bool tr_during_te = a->tr_with_te == WT_YES || (a->tr_with_te == WT_UNLESS_LOW_VRAM && !w->low);
	double te_step;
	if (a->load_te == LE_GPU_BF16)
		te_step = w->te_bf16;
	else
		te_step = w->te_quant || w->low ? 0 : w->te_bf16;
	double step_te = (tr_during_te ? w->tq * w->tr_share * a->experts : 0) + te_step * w->te_share;
	*resident_tr = w->low && a->park ? 0 : w->tq * w->tr_share * w->experts_train;
	*resident = *resident_tr + w->eq * w->te_share;
	return fmax(fmax(step_tr, step_te), *resident);
}

/* The training step's band and basis: its own counted row or a sibling's form; a step beyond
 * the calibrated shapes is extrapolated (wider); a full fine-tune or an unknown qtype rough. */
static enum est_basis training_band(const struct est_input *in, const struct est_arch *a,
				    unsigned notes, struct est_band *b)
{
	bool own = a->counted && !a->nominal;
	enum est_basis tb = own ? EST_CALIBRATED : EST_ROUGH;
	*b = est_train_band[own ? 0 : 1];
	for (size_t i = 0; est_family_band[i].family; i++)
		if (!strcmp(est_family_band[i].family, a->family))
			*b = est_family_band[i].b;
	if (in->res > a->max_bucket * 1.25 || (double)in->frames > a->max_frames * 1.25) {
		tb = EST_EXTRAPOLATED;
		b->lo = fmin(b->lo * 1.5, 0.9);
		b->hi *= 1.5;
	}
	if (notes & (EST_NOTE_FULL_FT | EST_NOTE_QTYPE)) {
		tb = tb == EST_CALIBRATED ? EST_ROUGH : tb;
		b->lo = fmax(b->lo, est_rough_band.lo);
		b->hi = fmax(b->hi, est_rough_band.hi);
	}
	return tb;
}

int estimate_job(const struct job *j, struct estimate *out)
{
	struct est_input in;
	est_input_of(j, &in);
	int rc = estimate_input(&in, out);
	size_t n = 0;
	const struct measurement *m = out->known ? measure_cached(&n) : NULL;
	if (!rc && n)
		estimate_apply_measured(out, &in, m, n);
	return rc;
}

/* How the settings of a measured run differ from `in` in the sizes a nearby run may change. */
static void differs_of(const struct est_input *in, const struct est_input *m, char *buf, size_t sz)
{
	size_t n = 0;
	buf[0] = 0;
#define PUT(...)                                                                                    \
	do {                                                                                       \
		int w_ = snprintf(buf + n, sz - n, __VA_ARGS__);                                   \
		if (w_ > 0 && (size_t)w_ < sz - n)                                                 \
			n += (size_t)w_;                                                           \
	} while (0)
	if (m->batch != in->batch)
		PUT("%sbatch %lld", n ? ", " : "", m->batch);
	if (m->res != in->res)
		PUT("%s%.0f px", n ? ", " : "", m->res);
	if (m->frames != in->frames)
		PUT("%s%lld frames", n ? ", " : "", m->frames);
	if (m->rank != in->rank)
		PUT("%srank %.0f", n ? ", " : "", m->rank);
	if (m->sample_w != in->sample_w || m->sample_h != in->sample_h ||
	    m->sample_frames != in->sample_frames)
		PUT("%ssample %.0fx%.0f", n ? ", " : "", m->sample_w, m->sample_h);
#undef PUT
}

void estimate_apply_measured(struct estimate *e, const struct est_input *in,
			     const struct measurement *m, size_t n)
{
	char base[1024], mbase[1024], key[1024], mkey[1024];
	if (!e->known || est_input_key(in, false, base, sizeof base) >= sizeof base)
		return;
	est_input_key(in, true, key, sizeof key);
	for (int p = 0; p < EST_NPHASES; p++) {
		struct est_phase_est *ph = &e->phase[p];
		if (!ph->on || ph->bytes <= 0)
			continue;
		/* the nearest: the same settings first, then the smallest change of the model */
		const struct measurement *best = NULL;
		struct estimate then, best_then;
		bool best_same = false;
		double best_d = 0;
		int rows = 0;
		for (size_t i = 0; i < n; i++) {
			if ((int)m[i].phase != p)
				continue;
			est_input_key(&m[i].in, false, mbase, sizeof mbase);
			if (strcmp(mbase, base))
				continue;
			est_input_key(&m[i].in, true, mkey, sizeof mkey);
			bool same = !strcmp(mkey, key);
			if (estimate_input(&m[i].in, &then) || !then.phase[p].on)
				continue;
			rows++;
			double d = fabs((double)(then.phase[p].bytes - ph->bytes)) / (double)ph->bytes;
			/* newest first in the list: ties keep the newer */
			if (!best || (same && !best_same) || (same == best_same && d < best_d)) {
				best = &m[i];
				best_same = same;
				best_d = d;
				best_then = then;
			}
		}
		if (!best)
			continue;
		int64_t diff = ph->bytes - best_then.phase[p].bytes;
		int64_t adj = best->bytes + diff;
		if (adj <= 0)
			continue;
		/* the model's spread, of the part carried across (none for the same settings) */
		double spread = (double)(ph->high - ph->low) / 2.0 / (double)ph->bytes;
		double carried = fabs((double)diff) * spread;
		int64_t model = ph->bytes, above = ph->high - ph->bytes;
		if (best->kind == MEASURE_LOWER) {
			/* it needed at least adj: never less; above it the model's spread */
			if (adj <= ph->low)
				continue; /* under the band's floor already: it tells nothing more */
			if (adj > ph->bytes)
				ph->bytes = adj;
			/* carried to other sizes the floor gives way by the whole change the model
			 * makes: a lower bound proves nothing of a smaller job */
			ph->low = adj - (int64_t)fabs((double)diff);
			if (ph->high < ph->bytes + above)
				ph->high = ph->bytes + above;
		} else {
			double half = 0.03 * (double)adj + carried;
			ph->bytes = adj;
			ph->low = adj - (int64_t)half;
			ph->high = adj + (int64_t)half;
		}
		struct est_measured *u = &e->measured[p];
		u->on = true;
		u->same = best_same;
		u->lower = best->kind == MEASURE_LOWER;
		u->bytes = best->bytes;
		u->adjusted = adj;
		u->card = best->card;
		u->at = (long long)best->at;
		u->rows = rows;
		differs_of(in, &best->in, u->differs, sizeof u->differs);
		if (ph->low > ph->bytes)
			ph->low = ph->bytes;
		ph->basis = EST_MEASURED;
		ph->points = rows;
		ph->terms.measured = ph->bytes - model; /* the terms still add up to the phase */
	}
	e->peak = EST_MODEL_LOAD;
	for (int p = 1; p < EST_NPHASES; p++)
		if (e->phase[p].on && e->phase[p].bytes > e->phase[e->peak].bytes)
			e->peak = (enum est_phase)p;
}

void estimate_measured_words(const struct estimate *e, enum est_phase p, char *buf, size_t sz)
{
	const struct est_measured *u = &e->measured[p];
	buf[0] = 0;
	if (!u->on)
		return;
	char b[32], a[32], when[32] = "";
	estimate_gib(u->bytes, b, sizeof b);
	estimate_gib(u->adjusted, a, sizeof a);
	time_t t = (time_t)u->at;
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%d", &tm);
	if (u->same)
		snprintf(buf, sz, u->lower ? _("%s: at least %s, measured by an OOM of this job on %s")
					   : _("%s: %s, measured in a run of this job on %s"),
			 est_phase_label(p), b, when);
	else
		snprintf(buf, sz, u->lower ? _("%s: at least %s here (%s measured by an OOM on %s at "
					       "%s, the model's difference added)")
					   : _("%s: %s here (%s measured on %s at %s, the model's "
					       "difference added)"),
			 est_phase_label(p), a, b, when, u->differs);
}

/* Mirrors estimate() in scripts/calibrate.py; tests/estimate holds the two together. */
int estimate_input(const struct est_input *in, struct estimate *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->arch, sizeof out->arch, "%s", in->arch);
	const struct est_arch *a = find_row(in);
	if (!a)
		return ERR_OK;
	out->known = true;
	out->row = a->variant[0] == '-' ? a->arch : a->variant;
	out->family = a->family;
	out->counted = a->counted;
	out->sim = a->sim;
	if (a->nominal)
		out->notes |= EST_NOTE_NOMINAL;
	struct est_weights w;
	struct est_adapter ad;
	weights_of(in, a, out, &w);
	adapter_of(in, a, out, &ad);
	bool video = is_video(a);
	double frames = video ? (double)in->frames : 1;
	double enc = video ? VIDEO_ENC : IMAGE_ENC, dec = video ? VIDEO_DEC : IMAGE_DEC;
	double pixels = in->res * in->res * frames;
	double ara_hi = w.ara ? est_rough_band.hi : 0;

	/* Training: the weights kept, the adapter with its state, what the step keeps. */
	struct est_parts tr = {
		.weights = w.tq * w.tr_share * w.experts_train,
		.encoders = (w.te_gpu ? w.eq * w.te_share : 0) + w.aux,
		.adapter = ad.w + ad.state,
		.act = activations_of(a, in, frames),
		.vae = in->cache_latents ? 0 : (double)in->batch * pixels * enc,
		.gc = in->gc,
		.step = true,
	};
	struct est_band tband;
	enum est_basis tb = training_band(in, a, out->notes, &tband);
	tband.hi += ara_hi;
	set_phase(&out->phase[EST_TRAINING], &tr, tband, tb);
	out->weights = out->phase[EST_TRAINING].terms.weights;
	out->adapter = out->phase[EST_TRAINING].terms.adapter;
	out->activations = out->phase[EST_TRAINING].terms.activations;
	out->context = to_bytes(CONTEXT_GIB);
	out->counted_gib = tr.act;

	/* Model load. Nominal parameter counts are not arithmetic: the rough band. */
	double resident_tr, resident;
	double load = load_gib(in, a, &w, &resident_tr, &resident);
	bool own = a->counted && !a->nominal, arith = !a->nominal;
	struct est_parts ld = { .weights = load, .encoders = w.aux, .gc = true,
				.arith = arith ? load + w.aux : 0 };
	struct est_band lband = own ? est_load_band : est_rough_band;
	lband.hi += ara_hi;
	set_phase(&out->phase[EST_MODEL_LOAD], &ld, lband, a->nominal ? EST_ROUGH : EST_CALIBRATED);

	/* Caching: the VAE encoding the largest bucket beside what the load left; only when the
	 * latents or the text embeddings are cached (else the VAE encodes in the step). */
	if (in->cache_latents || !w.te_gpu) {
		struct est_parts ca = { .weights = resident_tr,
					.encoders = w.eq * w.te_share + w.aux,
					.vae = pixels * enc, .gc = true,
					.arith = arith ? resident_tr + w.eq * w.te_share + w.aux : 0 };
		set_phase(&out->phase[EST_CACHING], &ca, est_rough_band, EST_ROUGH);
	}

	/* Sampling: one sample (× 2 with guidance) and its decode; the baseline sample before
	 * step 1 has no optimizer state yet. With low_vram the archs that park the transformer
	 * offload it for the decode (wan21.py's AggressiveWanUnloadPipeline). */
	if (in->sampling) {
		double sw = in->sample_w, sh = in->sample_h, sf = video ? in->sample_frames : 1;
		double cfg = a->cfg && in->guidance ? 2.0 : 1.0;
		double s_ti = tokens_of(a, in, sw, sh, sf);
		double s_act = cfg * (a->bl_img * s_ti + a->bl_txt * a->txt_tok) * SAMP_BLOCK;
		int experts_sample = w.low && a->one_expert ? 1 : a->experts;
		double s_w = w.tq * w.tr_share * experts_sample;
		double s_e = (w.te_gpu ? w.eq * w.te_share : 0) + w.aux;
		double decode = sw * sh * sf * dec;
		for (int k = 0; k < 2; k++) {
			enum est_phase ph = k ? EST_BASELINE_SAMPLE : EST_SAMPLING;
			double state = k ? ad.w : ad.w + ad.opt_gib;
			if (k && !in->baseline)
				continue;
			struct est_parts sp = { .weights = s_w, .encoders = s_e, .adapter = state,
						.work = s_act, .vae = decode, .gc = true,
						.arith = arith ? s_w + s_e + state : 0 };
			if (w.low && a->park) {
				if (w.aux + state + decode > s_w + s_e + state + s_act)
					sp = (struct est_parts){ .encoders = w.aux, .adapter = state,
								 .vae = decode, .gc = true,
								 .arith = arith ? w.aux + state : 0 };
				else
					sp.vae = 0;
			}
			set_phase(&out->phase[ph], &sp, est_rough_band, EST_ROUGH);
		}
	}
	out->peak = EST_MODEL_LOAD;
	for (int p = 1; p < EST_NPHASES; p++)
		if (out->phase[p].on && out->phase[p].bytes > out->phase[out->peak].bytes)
			out->peak = (enum est_phase)p;
	return ERR_OK;
}

enum est_verdict estimate_verdict(const struct estimate *e, int64_t card, enum est_phase *at)
{
	if (!e->known || card <= 0)
		return EST_V_UNKNOWN;
	enum est_verdict v = EST_V_FITS;
	enum est_phase where = e->peak;
	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_phase_est *ph = &e->phase[p];
		if (!ph->on)
			continue;
		if (ph->low > card) {
			v = EST_V_NO;
			where = (enum est_phase)p;
			break;
		}
		if (ph->high > card && v == EST_V_FITS) {
			v = EST_V_TIGHT;
			where = (enum est_phase)p;
		}
	}
	if (at)
		*at = where;
	return v;
}

const char *est_phase_name(enum est_phase p)
{
	static const char *const names[EST_NPHASES] = { "model_load", "caching",
							 "baseline_sample", "training",
							 "sampling" };
	return p >= 0 && p < EST_NPHASES ? names[p] : NULL;
}

bool est_phase_parse(const char *name, enum est_phase *p)
{
	for (int i = 0; name && i < EST_NPHASES; i++)
		if (!strcmp(name, est_phase_name((enum est_phase)i))) {
			*p = (enum est_phase)i;
			return true;
		}
	return false;
}

const char *est_phase_label(enum est_phase p)
{
	switch (p) {
	case EST_MODEL_LOAD: return _("model load");
	case EST_CACHING: return _("caching");
	case EST_BASELINE_SAMPLE: return _("baseline sample");
	case EST_TRAINING: return _("training");
	case EST_SAMPLING: return _("sampling");
	default: return "?";
	}
}

const char *est_basis_name(enum est_basis b)
{
	return b == EST_CALIBRATED ? "calibrated" : b == EST_ROUGH ? "rough"
		: b == EST_MEASURED ? "measured" : "extrapolated";
}

const char *est_verdict_name(enum est_verdict v)
{
	switch (v) {
	case EST_V_FITS: return "fits";
	case EST_V_TIGHT: return "tight";
	case EST_V_NO: return "no";
	default: return NULL;
	}
}

enum est_verdict est_verdict_parse(const char *name)
{
	for (int v = EST_V_FITS; name && v <= EST_V_NO; v++)
		if (!strcmp(name, est_verdict_name((enum est_verdict)v)))
			return (enum est_verdict)v;
	return EST_V_UNKNOWN;
}

void estimate_gib(int64_t bytes, char *buf, size_t sz)
{
	snprintf(buf, sz, "%.1f GiB", (double)bytes / 1073741824.0);
}

void estimate_verdict_words(enum est_verdict v, enum est_phase at, char *buf, size_t sz)
{
	switch (v) {
	case EST_V_FITS: snprintf(buf, sz, "%s", _("fits")); break;
	case EST_V_TIGHT: snprintf(buf, sz, _("tight at %s"), est_phase_label(at)); break;
	case EST_V_NO: snprintf(buf, sz, _("will not fit at %s"), est_phase_label(at)); break;
	default: buf[0] = 0; break;
	}
}

void estimate_line(const struct estimate *e, int64_t card, char *buf, size_t sz,
		   enum est_verdict *verdict, enum est_phase *at)
{
	enum est_phase a = EST_TRAINING;
	enum est_verdict v = e->known ? estimate_verdict(e, card, &a) : EST_V_UNKNOWN;
	if (verdict)
		*verdict = v;
	if (at)
		*at = a;
	if (!e->known) {
		snprintf(buf, sz, _("no estimate for arch '%s' (no memory table)"),
			 e->arch[0] ? e->arch : "?");
		return;
	}
	estimate_peak_words(e->phase[e->peak].bytes, e->peak, card, v, a, buf, sz);
	/* a phase that takes the user's own measurement says so: the number is not the model's */
	enum est_phase mp = e->measured[a].on ? a : e->peak;
	for (int p = 0; p < EST_NPHASES && !e->measured[mp].on; p++)
		if (e->measured[p].on)
			mp = (enum est_phase)p;
	if (e->measured[mp].on) {
		size_t n = strlen(buf);
		char b[32];
		estimate_gib(e->measured[mp].bytes, b, sizeof b);
		snprintf(buf + n, n < sz ? sz - n : 0,
			 e->measured[mp].lower ? _(" (measured: %s needed at least %s)")
					       : _(" (measured: %s held %s)"),
			 est_phase_label(mp), b);
	}
}

const char *est_term_id(int i)
{
	static const char *const ids[EST_NTERMS] = { "weights", "encoders", "adapter", "activations",
						     "vae", "overhead", "measured" };
	return i >= 0 && i < EST_NTERMS ? ids[i] : NULL;
}

void est_terms_list(const struct est_terms *t, int64_t v[EST_NTERMS])
{
	v[0] = t->weights;
	v[1] = t->encoders;
	v[2] = t->adapter;
	v[3] = t->activations;
	v[4] = t->vae;
	v[5] = t->overhead;
	v[6] = t->measured;
}

void estimate_terms_words(const struct estimate *e, enum est_phase p, char *buf, size_t sz)
{
	const struct est_phase_est *ph = &e->phase[p];
	const char *names[EST_NTERMS - 1] = {
		_("weights"), _("text encoder and VAE"), _("adapter and optimizer"),
		p == EST_TRAINING ? _("activations") : _("working set"), _("VAE pass"),
		_("context and rounding") };
	int64_t terms[EST_NTERMS];
	est_terms_list(&ph->terms, terms);
	char b[32];
	estimate_gib(ph->bytes, b, sizeof b);
	int n = snprintf(buf, sz, _("%s %s ="), est_phase_label(p), b);
	bool first = true;
	/* the parts the model adds up; the measured one last, signed */
	for (size_t t = 0; t < EST_NTERMS - 1 && n > 0 && (size_t)n < sz; t++) {
		if ((double)terms[t] < 0.05 * GIB) /* the parts under 0.05 GiB are left out */
			continue;
		n += snprintf(buf + n, sz - (size_t)n, "%s %.1f %s", first ? "" : " +",
			      (double)terms[t] / GIB, names[t]);
		first = false;
	}
	if (ph->terms.measured && n > 0 && (size_t)n < sz)
		snprintf(buf + n, sz - (size_t)n, _(" %s %.1f measured beyond the model"),
			 ph->terms.measured > 0 ? "+" : "-",
			 fabs((double)ph->terms.measured) / GIB);
}

void estimate_peak_words(int64_t peak_bytes, enum est_phase peak, int64_t card,
			 enum est_verdict v, enum est_phase at, char *buf, size_t sz)
{
	char pk[32], cb[32], words[128];
	estimate_gib(peak_bytes, pk, sizeof pk);
	if (v == EST_V_UNKNOWN) {
		snprintf(buf, sz, _("peak %s at %s (--vram gives a verdict)"), pk,
			 est_phase_label(peak));
		return;
	}
	estimate_gib(card, cb, sizeof cb);
	estimate_verdict_words(v, at, words, sizeof words);
	snprintf(buf, sz, _("peak %s at %s, %s card: %s"), pk, est_phase_label(peak), cb, words);
}

