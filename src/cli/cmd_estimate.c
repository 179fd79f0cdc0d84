/* cmd_estimate.c — `oomfix estimate`: each phase's GPU memory from the job before the run, whether
 * it fits the card, and the shortest path to a job that does (SPEC §12).
 *
 * The card comes from --vram, else nvidia-smi (estimate_query_gpus), else the
 * capacity in the last OOM message of the job's log, else the command asks for --vram (64).
 */
#include <getopt.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/aitkdb.h"
#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/err.h"
#include "oomfix/measure.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/job.h"
#include "oomfix/json.h"
#include "oomfix/memacct.h"
#include "oomfix/plan.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "oomfix/text.h"
#include "cli.h"

static void estimate_help(FILE *fp)
{
	fputs(_("Usage: oomfix estimate [--vram GB | --gpu N] [--log LOG] [--json]\n"
		"                       [--steps N] [--apply [-o OUT | -i [--force]]] JOB\n"
		"\n"
		"Estimates the peak GPU memory of each phase of JOB (model load, caching,\n"
		"training, sampling) before the run, says whether it fits the card and, when it\n"
		"does not, the shortest path of fixes to a job that does. An estimate is never\n"
		"a measurement: each phase has a band and says how many reported runs stand\n"
		"behind it.\n"
		"\n"
		"  --vram GB   the card by the size it is sold as (24, 24GB or 24G: taken as an\n"
		"              RTX 4090's 23.99 GiB; 80 for an H100), or an exact capacity\n"
		"              (23.5GiB, 24000MiB): an RTX 3090 reports about 23.7 GiB, a cloud\n"
		"              L4 or A10G about 22.5 GiB\n"
		"  --gpu N     the card nvidia-smi lists as N (default: the web UI\n"
		"              job's GPU, else 0)\n"
		"  --log LOG   a log whose last OOM message gives the card's capacity (used when\n"
		"              there is no --vram and no nvidia-smi)\n"
		"  --json      machine-readable output\n"
		"  --steps N   at most N fixes of the path (to stop at a tight rung)\n"
		"  --apply     write the path as one change: to stdout, to OUT with -o, or to\n"
		"              JOB with -i (JOB~ keeps the previous version, the journal gets\n"
		"              an entry); nothing is written when it does not reach a job that\n"
		"              fits\n"
		"\n"
		"Exit status: 0 success (whatever the verdict); 1 --apply found no path to a job\n"
		"that fits (nothing written); 64 usage or no card known (give --vram); 65 invalid\n"
		"job; 66 cannot open input; 73 cannot create output; 74 I/O error; 75 JOB\n"
		"changed on disk (use --force).\n"), fp);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "oomfix estimate: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	fprintf(stderr, "%s", _("Try 'oomfix estimate --help'.\n"));
	return ERR_USAGE;
}

/* Where the card's size came from. */
enum card_src { CARD_VRAM, CARD_SMI, CARD_LOG };

struct card {
	enum card_src src;
	int64_t bytes;
	double table_gib;     /* --vram: the table value used, 0 when given with a unit */
	bool approx;          /* --vram: a sold size not in the table */
	char name[96];        /* nvidia-smi: the card's name */
	int index;
	const struct est_gpu *gpu; /* nvidia-smi: the chosen card (its processes) */
	int64_t others_oom;   /* the log's OOM message: what others held at the failure */
};

/* Prints s padded with spaces to `cells` columns as the terminal draws them (Japanese labels
 * are two cells a character). */
static void cell(const char *s, int cells, bool right)
{
	int w = text_width(s, strlen(s)), pad = cells > w ? cells - w : 0;
	if (right)
		printf("%*s%s", pad, "", s);
	else
		printf("%s%*s", s, pad, "");
}

/* Prints a sentence wrapped to the report width (cli_report_width): its first line after `indent`
 * blanks, its further lines after `hang`, breaking where Japanese allows (cli_put_wrapped). */
static void para_hang(const char *s, int indent, int hang)
{
	int width = cli_report_width();
	printf("%*s", indent, "");
	cli_put_wrapped(s, width - indent, hang, width, false);
}

/* The estimate's prose: a paragraph at `indent`, its further lines in line with the first. */
static void para(const char *s, int indent)
{
	para_hang(s, indent, indent);
}

/* para() over a formatted message; newlines at its ends (from the msgid) become blank lines
 * before it and are dropped after it, and its leading blanks are its indent. A numbered step
 * ("  1. ...") goes on under its text. */
static void parap(int indent, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void parap(int indent, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char *s = buf;
	for (; *s == '\n'; s++)
		printf("\n");
	for (; *s == ' '; s++)
		indent++;
	size_t n = strlen(s);
	while (n && s[n - 1] == '\n')
		s[--n] = '\0';
	if (n)
		para_hang(s, indent, indent + (s[0] >= '0' && s[0] <= '9' ? 3 : 0));
}

/* The basis of a phase's number, in the reader's language (est_basis_name is the JSON word). */
static const char *basis_label(enum est_basis b)
{
	return b == EST_CALIBRATED ? _("calibrated") : b == EST_ROUGH ? _("rough")
		: b == EST_MEASURED ? _("measured") : _("extrapolated");
}

static void print_estimate(const struct estimate *est, int64_t card)
{
	printf("  ");
	cell(_("phase"), 16, false);
	cell(_("estimate"), 10, true);
	printf("  ");
	cell(_("band"), 19, false);
	cell(_("card"), 7, true);
	printf("  %s\n", _("basis (points)"));
	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_phase_est *ph = &est->phase[p];
		printf("%s ", (int)est->peak == p && ph->on ? "*" : " ");
		cell(est_phase_label((enum est_phase)p), 16, false);
		if (!ph->on) {
			cell(_("off"), 10, true);
			printf("\n");
			continue;
		}
		char b[32], lo[32], hi[32], band[64];
		estimate_gib(ph->bytes, b, sizeof b);
		estimate_gib(ph->low, lo, sizeof lo);
		estimate_gib(ph->high, hi, sizeof hi);
		snprintf(band, sizeof band, "%.1f–%s", (double)ph->low / 1073741824.0, hi);
		printf("%10s  ", b);
		cell(band, 19, false);
		printf(" %5.0f%%  %s", card > 0 ? 100.0 * (double)ph->bytes / (double)card : 0.0,
		       basis_label(ph->basis));
		if (ph->points > 0) /* the measured peaks behind the band; none: a prior */
			printf(" (%d)", ph->points);
		printf("\n");
	}
}

static void print_verdict(enum est_verdict v, enum est_phase at)
{
	switch (v) {
	case EST_V_FITS:
		para(_("Verdict: fits."), 0);
		break;
	case EST_V_TIGHT:
		parap(0, _("Verdict: tight at %s (the band straddles the card: it may or may not fit).\n"),
		       est_phase_label(at));
		break;
	case EST_V_NO:
		parap(0, _("Verdict: will not fit at %s.\n"), est_phase_label(at));
		break;
	default:
		break;
	}
}

static void print_notes(const struct estimate *est)
{
	if (est->notes & EST_NOTE_ARA)
		para(_("Note: an accuracy recovery adapter is in the qtype; layers it does "
				    "not cover stay bf16, so the weights are a lower bound."), 2);
	if (est->notes & EST_NOTE_FULL_FT)
		para(_("Note: no network section, so this is a full fine-tune; its "
				    "estimate is rough."), 2);
	if (est->notes & EST_NOTE_NOMINAL)
		para(_("Note: this arch's parameter counts are nominal (not checked)."), 2);
	if (est->notes & EST_NOTE_QTYPE)
		para(_("Note: a qtype oomfix does not know; 1 byte per weight assumed."), 2);
	if (est->notes & EST_NOTE_OFFLOAD)
		para(_("Note: layer offloading keeps most weights in host RAM."), 2);
}

static void json_phases(struct json *js, const struct estimate *est)
{
	json_key(js, "phases");
	json_arr_begin(js);
	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_phase_est *ph = &est->phase[p];
		if (!ph->on)
			continue;
		json_obj_begin(js);
		json_key(js, "phase");
		json_str(js, est_phase_name((enum est_phase)p));
		json_key(js, "bytes");
		json_int(js, ph->bytes);
		json_key(js, "low");
		json_int(js, ph->low);
		json_key(js, "high");
		json_int(js, ph->high);
		json_key(js, "points");
		json_int(js, ph->points);
		json_key(js, "basis");
		json_str(js, est_basis_name(ph->basis));
		/* why the phase is the size it is: its terms add up to bytes */
		int64_t terms[EST_NTERMS];
		est_terms_list(&ph->terms, terms);
		json_key(js, "terms");
		json_obj_begin(js);
		for (int t = 0; t < EST_NTERMS; t++) {
			json_key(js, est_term_id(t));
			json_int(js, terms[t]);
		}
		json_obj_end(js);
		json_obj_end(js);
	}
	json_arr_end(js);
	/* where the training step's activations come from: the arch's own counted row, or a
	 * sibling's per-block form at this arch's dimensions */
	json_key(js, "activations");
	json_obj_begin(js);
	json_key(js, "counted_from");
	json_str(js, est->sim);
	json_key(js, "own");
	json_bool(js, est->counted);
	json_obj_end(js);
	/* what the user's own runs measured and the phases took (SPEC §12.2) */
	json_key(js, "measured");
	json_arr_begin(js);
	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_measured *u = &est->measured[p];
		if (!u->on)
			continue;
		json_obj_begin(js);
		json_key(js, "phase");
		json_str(js, est_phase_name((enum est_phase)p));
		json_key(js, "kind");
		json_str(js, u->lower ? "at_least" : "peak");
		json_key(js, "bytes");
		json_int(js, u->bytes);
		json_key(js, "adjusted");
		json_int(js, u->adjusted);
		json_key(js, "same_settings");
		json_bool(js, u->same);
		json_key(js, "differs");
		json_str(js, u->differs);
		json_key(js, "card");
		if (u->card > 0)
			json_int(js, u->card);
		else
			json_null(js);
		json_key(js, "at");
		json_int(js, u->at);
		json_key(js, "measurements");
		json_int(js, u->rows);
		json_obj_end(js);
	}
	json_arr_end(js);
	json_key(js, "peak_phase");
	json_str(js, est_phase_name(est->peak));
}

static void json_step(struct json *js, const struct est_step *s)
{
	json_obj_begin(js);
	json_key(js, "fix");
	json_str(js, fix_name(s->fix));
	json_key(js, "for_phase");
	json_str(js, est_phase_name(s->phase));
	json_key(js, "after");
	json_obj_begin(js);
	json_key(js, "peak_phase");
	json_str(js, est_phase_name(s->after.peak));
	json_key(js, "bytes");
	json_int(js, s->after.phase[s->after.peak].bytes);
	json_key(js, "high");
	json_int(js, s->after.phase[s->after.peak].high);
	json_key(js, "verdict");
	json_str(js, est_verdict_name(s->verdict));
	json_obj_end(js);
	json_obj_end(js);
}

/* One line of the path: "low_vram (title) → model load 11.8 GiB; peak training 15.0 GiB, fits". */
static void print_step(size_t i, const struct est_step *s)
{
	char b[32], pb[32];
	estimate_gib(s->after.phase[s->phase].bytes, b, sizeof b);
	estimate_gib(s->after.phase[s->after.peak].bytes, pb, sizeof pb);
	const char *v = s->verdict == EST_V_FITS	? _("fits")
			: s->verdict == EST_V_TIGHT ? _("tight")
						    : _("does not fit yet");
	parap(0, _("  %zu. %s (%s) → %s %s; peak %s %s, %s\n"), i + 1, fix_name(s->fix),
	       _(fix_defs[s->fix].title), est_phase_label(s->phase), b,
	       est_phase_label(s->after.peak), pb, v);
}

/* The estimate against the card: its verdict, the path when it does not fit, and the verdict
 * beside what other processes hold on the card now (nvidia-smi). */
struct est_result {
	struct estimate est;
	enum est_verdict verdict, verdict_now;
	enum est_phase at;
	struct est_path path;
	int64_t others, free_now;
	int64_t card;               /* the card it was estimated for (bytes) */
};

/* Writes the job after the path: stdout, OUT, or JOB itself with a journal entry. */
static int write_result(struct source *src, const struct doc *orig, const struct est_result *r,
			const char *label, const char *out, bool inplace, bool force)
{
	const struct est_path *path = &r->path;
	struct err e;
	err_clear(&e);
	size_t nlen;
	const char *ntext = doc_text(path->doc, &nlen);
	if (!out && !inplace) {
		if (nlen && fwrite(ntext, 1, nlen, stdout) != nlen)
			return ERR_IOERR;
		return fflush(stdout) ? ERR_IOERR : 0;
	}
	if (out) {
		int rc = save_output(out, ntext, nlen, source_path(src), &e);
		if (rc)
			err_print(&e, stderr);
		return rc;
	}
	int rc = source_save(src, ntext, nlen, force ? SOURCE_FORCE : 0, &e);
	if (rc)
		return cli_save_failed(src, &e);
	const char *fixes[EST_MAX_PATH];
	for (size_t i = 0; i < path->n; i++)
		fixes[i] = fix_name(path->step[i].fix);
	char **changes;
	size_t nchanges = doc_changes(orig, path->doc, &changes);
	char note[128], cb[32];
	estimate_gib(r->card, cb, sizeof cb);
	snprintf(note, sizeof note, _("oomfix estimate, for a %s card"), cb);
	if (source_journal_note(src, note, fixes, path->n, (const char *const *)changes, nchanges,
				&e))
		err_print(&e, stderr); /* saved; a journal that cannot be written is a warning */
	doc_changes_free(changes, nchanges);
	fprintf(stderr, _("%s: saved (previous version in %s~)\n"), label, source_path(src));
	return 0;
}

/* What `oomfix estimate` was asked. */
struct est_args {
	const char *vram, *log, *out, *path;
	int gpu; /* --gpu, or -1 */
	bool json, apply, inplace, force;
	size_t steps; /* --steps: at most this many fixes of the path (0: until it fits) */
};

/* Reads the options into *o: -1 to go on, else the exit status (help, usage). */
static int estimate_options(int argc, char **argv, struct est_args *o)
{
	enum { O_FORCE = 256, O_APPLY, O_STEPS };
	static const struct option opts[] = {
		{ "vram", required_argument, NULL, 'v' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "log", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "apply", no_argument, NULL, O_APPLY },
		{ "output", required_argument, NULL, 'o' },
		{ "in-place", no_argument, NULL, 'i' },
		{ "force", no_argument, NULL, O_FORCE },
		{ "steps", required_argument, NULL, O_STEPS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct est_args){ .gpu = -1 };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "v:g:l:jo:ih", opts, NULL)) != -1) {
		switch (c) {
		case 'v': o->vram = optarg; break;
		case 'g': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 0 || v > 1023)
				return usage_error(_("--gpu wants a card number, not '%s'"), optarg);
			o->gpu = (int)v;
			break;
		}
		case 'l': o->log = optarg; break;
		case 'j': o->json = true; break;
		case O_APPLY: o->apply = true; break;
		case 'o': o->out = optarg; break;
		case 'i': o->inplace = true; break;
		case O_FORCE: o->force = true; break;
		case O_STEPS: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > EST_MAX_PATH)
				return usage_error(_("--steps wants a number of fixes from 1 to 16, "
						     "not '%s'"), optarg);
			o->steps = (size_t)v;
			break;
		}
		case 'h': estimate_help(stdout); return 0;
		default:
			return usage_error(_("unknown or incomplete option '%s'"), argv[optind - 1]);
		}
	}
	if (o->vram && o->gpu >= 0)
		return usage_error("%s", _("--vram and --gpu cannot be used together"));
	if (o->out && o->inplace)
		return usage_error("%s", _("-o and -i cannot be used together"));
	if ((o->out || o->inplace) && !o->apply)
		return usage_error("%s", _("-o and -i write the path: add --apply"));
	if (o->apply && o->json && !o->out && !o->inplace)
		return usage_error("%s", _("--apply without -o or -i prints YAML: leave out --json"));
	if (argc - optind != 1)
		return usage_error("%s", _("expected one JOB"));
	o->path = argv[optind];
	return -1;
}

/* The card nvidia-smi lists as `gpu`, else as the web UI job's GPU, else as 0, into *card.
 * ERR_USAGE, said, when it lists others only; else 0, with what went wrong with nvidia-smi in
 * `note` (left as it is when nothing did, or there is no nvidia-smi). */
static int card_from_smi(int gpu, const struct source *src, struct est_gpus *gpus,
			 struct card *card, char *note, size_t size)
{
	struct err ge;
	err_clear(&ge);
	int s = gpus ? estimate_query_gpus(gpus, &ge) : ERR_SOFTWARE;
	if (s == ERR_OK) {
		int want = gpu >= 0 ? gpu : source_gpu(src) >= 0 ? source_gpu(src) : 0;
		for (size_t i = 0; i < gpus->n; i++)
			if (gpus->gpu[i].index == want)
				card->gpu = &gpus->gpu[i];
		if (!card->gpu) {
			fprintf(stderr, _("oomfix estimate: nvidia-smi lists no card %d "
					  "(it lists %zu)\n"), want, gpus->n);
			return ERR_USAGE;
		}
		card->src = CARD_SMI;
		card->bytes = card->gpu->total;
		card->index = card->gpu->index;
		snprintf(card->name, sizeof card->name, "%s", card->gpu->name);
	} else if (s == ERR_DATA) {
		snprintf(note, size, "%s", _("nvidia-smi gave output this program cannot read"));
	} else if (s != ERR_UNAVAILABLE) {
		snprintf(note, size, "%s", _("nvidia-smi failed"));
	}
	return 0;
}

/* The capacity in the last OOM message of --log, else of the job's log, into *card (left as it
 * is without one); o->log becomes the log read. */
static void card_from_log(struct est_args *o, const struct source *src, const struct job *j,
			  struct card *card)
{
	struct err le;
	if (!o->log && cli_job_log(src, &o->log, &le) != ERR_OK)
		o->log = NULL;
	struct diag_result *v = o->log ? calloc(1, sizeof *v) : NULL;
	struct diag_job_info info = { .name = j->name, .kind = (int)j->kind, .conservative = -1 };
	if (v && diag_file(o->log, &info, v, &le) == ERR_OK && v->memory.present &&
	    v->memory.capacity > 0) {
		card->src = CARD_LOG;
		card->bytes = v->memory.capacity;
		card->others_oom = est_card_others(NULL, &v->memory);
	}
	free(v);
}

/* The card: --vram (already read into *card), else nvidia-smi, else the log's last OOM message.
 * 0, or the exit status once it has said why there is none. *gpus, nvidia-smi's list, is the
 * caller's to free. */
static int find_card(struct est_args *o, const struct source *src, const struct job *j,
		     struct card *card, struct est_gpus **gpus)
{
	char smi_note[256] = "";
	if (o->vram) {
		card->src = CARD_VRAM;
		return 0;
	}
	*gpus = calloc(1, sizeof **gpus);
	if (card_from_smi(o->gpu, src, *gpus, card, smi_note, sizeof smi_note))
		return ERR_USAGE;
	if (o->gpu >= 0 && card->src != CARD_SMI && !card->bytes) {
		fprintf(stderr, _("oomfix estimate: --gpu needs nvidia-smi (%s)\n"),
			smi_note[0] ? smi_note : _("not found"));
		return ERR_USAGE;
	}
	if (!card->gpu)
		card_from_log(o, src, j, card);
	if (!card->bytes) {
		if (smi_note[0])
			fprintf(stderr, "oomfix estimate: %s\n", smi_note);
		fprintf(stderr, "%s\n", _("oomfix estimate: which card? Give its size with "
					  "--vram GB (e.g. --vram 24); there is no nvidia-smi and "
					  "no OOM message in the job's log to read it from."));
		return ERR_USAGE;
	}
	return 0;
}

/* No memory table for the job's arch: no number rather than a guess. */
static void print_unknown(const struct job *j, const struct card *card, bool json)
{
	if (!json) {
		parap(0, _("No estimate: oomfix has no memory table for arch '%s', so it gives no "
			 "number rather than a guess.\n"), j->arch[0] ? j->arch : "?");
		return;
	}
	struct json js;
	json_init(&js, stdout, true);
	json_obj_begin(&js);
	json_key(&js, "arch");
	json_str(&js, j->arch[0] ? j->arch : NULL);
	json_key(&js, "known");
	json_bool(&js, false);
	json_key(&js, "card");
	json_int(&js, card->bytes);
	json_key(&js, "phases");
	json_arr_begin(&js);
	json_arr_end(&js);
	json_key(&js, "verdict");
	json_null(&js);
	json_obj_end(&js);
	json_finish(&js);
}


/* --apply: writes the path (write_result) and sets *status; true when nothing more is to be
 * printed. */
static bool apply_path(const struct est_args *o, struct source *src, const struct doc *d,
		       const struct est_result *r, int *status)
{
	if (!r->path.n) {
		fprintf(stderr, "%s\n", r->verdict == EST_V_NO
			? _("oomfix estimate: no change oomfix knows makes it fit; nothing written.")
			: r->verdict == EST_V_TIGHT
			? _("oomfix estimate: it is tight and no change oomfix knows is left; "
			    "nothing written.")
			: _("oomfix estimate: it fits already; nothing to change."));
		*status = r->verdict == EST_V_NO ? ERR_DATA : 0;
		return true;
	}
	if (!r->path.fits) {
		char cb[32];
		estimate_gib(r->card, cb, sizeof cb);
		fprintf(stderr, _("oomfix estimate: the changes oomfix knows do not reach a job that "
				  "fits the %s card; nothing written.\n"), cb);
		*status = 1;
		return true;
	}
	*status = write_result(src, d, r, o->path, o->out, o->inplace, o->force);
	return !o->out && !o->inplace;
}

/* What the card holds now besides the job: its processes, the memory in use and the verdict
 * beside them (null without nvidia-smi). */
static void json_card_now(struct json *js, const struct card *card, enum est_verdict verdict_now)
{
	json_key(js, "other_processes");
	json_arr_begin(js);
	for (size_t i = 0; card->gpu && i < card->gpu->napps; i++) {
		json_obj_begin(js);
		json_key(js, "pid");
		json_int(js, card->gpu->app[i].pid);
		json_key(js, "bytes");
		json_int(js, card->gpu->app[i].bytes);
		json_obj_end(js);
	}
	json_arr_end(js);
	json_key(js, "used_now");
	if (card->gpu)
		json_int(js, card->gpu->used);
	else
		json_null(js);
	json_key(js, "others");
	json_int(js, card->gpu ? est_card_others(card->gpu, NULL) : card->others_oom);
	json_key(js, "verdict_now");
	json_str(js, card->gpu || card->others_oom > 0 ? est_verdict_name(verdict_now) : NULL);
}

static void print_json(const struct card *card, const struct est_result *r)
{
	struct json js;
	json_init(&js, stdout, true);
	json_obj_begin(&js);
	json_key(&js, "arch");
	json_str(&js, r->est.arch);
	json_key(&js, "known");
	json_bool(&js, true);
	json_key(&js, "family");
	json_str(&js, r->est.family);
	json_key(&js, "card");
	json_int(&js, card->bytes);
	json_key(&js, "card_source");
	json_str(&js, card->src == CARD_VRAM ? "vram" : card->src == CARD_SMI ? "nvidia-smi" : "log");
	json_phases(&js, &r->est);
	json_key(&js, "verdict");
	json_str(&js, est_verdict_name(r->verdict));
	json_key(&js, "verdict_phase");
	json_str(&js, est_phase_name(r->at));
	json_key(&js, "change");
	if (r->path.n)
		json_step(&js, &r->path.step[0]);
	else
		json_null(&js);
	json_key(&js, "path");
	json_arr_begin(&js);
	for (size_t i = 0; i < r->path.n; i++)
		json_step(&js, &r->path.step[i]);
	json_arr_end(&js);
	json_key(&js, "path_fits");
	if (r->verdict != EST_V_FITS)
		json_bool(&js, r->path.fits);
	else
		json_null(&js);
	/* what the path leaves that a user should be told: clips under a second, only 512 */
	json_key(&js, "path_short_clip");
	json_bool(&js, r->path.short_clip);
	json_key(&js, "path_low_bucket");
	json_bool(&js, r->path.low_bucket);
	json_card_now(&js, card, r->verdict_now);
	json_obj_end(&js);
	json_finish(&js);
}

/* "Card: ..." with where its size came from. */
static void print_card(const struct est_args *o, const struct card *card)
{
	char cb[32];
	estimate_gib(card->bytes, cb, sizeof cb);
	if (card->src == CARD_VRAM && card->table_gib > 0)
		parap(0, _("Card: %s (--vram %s: what PyTorch reports for a card sold as %g GB)\n"), cb,
		       o->vram, strtod(o->vram, NULL));
	else if (card->src == CARD_VRAM && card->approx)
		parap(0, _("Card: %s (--vram %s: not in the table of cards; 0.98 GiB per GB assumed)\n"),
		       cb, o->vram);
	else if (card->src == CARD_VRAM)
		parap(0, _("Card: %s (--vram %s)\n"), cb, o->vram);
	else if (card->src == CARD_SMI)
		parap(0, _("Card: %s, GPU %d %s (nvidia-smi)\n"), cb, card->index, card->name);
	else
		parap(0, _("Card: %s (the capacity in the last OOM message of %s)\n"), cb, o->log);
}

/* Other processes on the card now (nvidia-smi), and whether the job fits beside them. */
static void print_others(const struct card *card, const struct est_result *r)
{
	char ob[32], fb[32];
	estimate_gib(r->others, ob, sizeof ob);
	estimate_gib(r->free_now > 0 ? r->free_now : 0, fb, sizeof fb);
	if (card->gpu)
		printf(_("Other processes hold %s on this card now, leaving %s:"), ob, fb);
	else
		printf(_("The OOM message shows %s held by other processes, leaving %s."), ob, fb);
	for (size_t i = 0; card->gpu && i < card->gpu->napps; i++) {
		char pb[32];
		estimate_gib(card->gpu->app[i].bytes, pb, sizeof pb);
		printf(_(" pid %lld (%s)"), card->gpu->app[i].pid, pb);
	}
	printf("\n");
	if (r->verdict_now != r->verdict || r->verdict_now == EST_V_NO)
		para(r->verdict_now == EST_V_NO
			? _("Beside them the job will not fit: stop them or use another card "
			    "before the run (the settings are not what is too big).")
			: _("Beside them it is tight: stop them or use another card before the run."),
		     0);
}

/* The changes that act on a job that does not fit, and what is left when none is. */
static void print_path(const struct est_result *r, bool apply, const char *path_job,
		       const char *path_vram, size_t steps)
{
	char steps_arg[32] = "";
	if (steps)
		snprintf(steps_arg, sizeof steps_arg, " --steps %zu", steps);
	if (r->path.n) {
		enum est_verdict last = r->path.step[r->path.n - 1].verdict;
		printf("\n%s\n", last == EST_V_FITS ? _("Shortest path to a job that fits:")
				 : last == EST_V_TIGHT ? _("Changes that act on it (tight at the end):")
						       : _("Changes that act on it (still not enough):"));
		for (size_t i = 0; i < r->path.n; i++)
			print_step(i, &r->path.step[i]);
		/* The rungs before the last that are tight with their centre under the card: a
		 * choice to stop there, at some risk. */
		size_t tight = 0;
		for (size_t i = 0; i + 1 < r->path.n && !tight; i++)
			if (r->path.step[i].verdict == EST_V_TIGHT &&
			    r->path.step[i].after.phase[r->path.step[i].after.peak].bytes <= r->card)
				tight = i + 1;
		if (tight && last == EST_V_FITS)
			parap(0, _("After step %zu it is tight: the estimate fits, the top of its band "
				   "does not. --steps %zu stops there.\n"), tight, tight);
		if (r->path.short_clip)
			para(_("The path ends with clips under about a second: too short for most "
			       "motion LoRAs. A bigger card keeps them longer."), 0);
		if (r->path.low_bucket)
			para(_("The path ends with nothing above a 512 bucket: the model learns less "
			       "fine detail."), 0);
		if (!apply) {
			char line[1200];
			snprintf(line, sizeof line, _("Write it with: oomfix estimate%s%s%s --apply -i %s"),
				 path_vram ? " --vram " : "", path_vram ? path_vram : "",
				 steps_arg, path_job);
			para(line, 0);
		}
	}
	if (r->path.exhausted)
		parap(0, _("\nNothing oomfix knows is left that shrinks %s: a bigger card, or a "
			 "smaller model.\n"), est_phase_label(r->path.stuck));
}

/* Why a phase is the size it is: its terms. */
static void print_terms(const struct estimate *est, enum est_phase p)
{
	char line[512];
	estimate_terms_words(est, p, line, sizeof line);
	para_hang(line, 2, 4);
}

static void print_text(const struct est_args *o, const struct card *card,
		       const struct est_result *r)
{
	parap(0, _("Job: %s (arch %s, family %s)\n"), o->path, r->est.arch, r->est.family);
	print_card(o, card);
	printf("\n");
	print_estimate(&r->est, card->bytes);
	printf("\n");
	print_terms(&r->est, r->est.peak);
	if (r->verdict != EST_V_FITS && r->verdict != EST_V_UNKNOWN && r->at != r->est.peak)
		print_terms(&r->est, r->at);
	for (int p = 0; p < EST_NPHASES; p++) {
		char line[512];
		estimate_measured_words(&r->est, (enum est_phase)p, line, sizeof line);
		if (line[0]) {
			char said[600];
			snprintf(said, sizeof said, _("Measured: %s."), line);
			para_hang(said, 2, 4);
		}
	}
	if (!r->est.counted) {
		char line[256];
		snprintf(line, sizeof line, _("(activations: %s's counted form at this arch's "
					      "dimensions)"), r->est.sim);
		para_hang(line, 2, 4);
	}
	printf("\n");
	print_verdict(r->verdict, r->at);
	print_notes(&r->est);
	if (r->others > 0)
		print_others(card, r);
	if (r->verdict != EST_V_FITS)
		print_path(r, o->apply, o->path, o->vram, o->steps);
}

/* The estimate of the job on the card, its verdict and path, and what of them is printed or
 * written: the exit status. */
static int estimate_on(const struct est_args *o, struct source *src, const struct doc *d,
		       const struct job *j, const struct card *card, struct est_result *r)
{
	struct err e;
	err_clear(&e);
	estimate_job(j, &r->est);
	if (!r->est.known) {
		print_unknown(j, card, o->json);
		return 0;
	}
	r->verdict = estimate_verdict(&r->est, card->bytes, &r->at);
	r->card = card->bytes;
	int rc;
	if (r->verdict != EST_V_FITS &&
	    (rc = estimate_path(j, card->bytes, true, o->steps, &r->path, &e))) {
		err_print(&e, stderr);
		return rc;
	}
	/* one card for every front end: what others hold now (nvidia-smi), or held at the OOM the
	 * card was read from */
	r->others = est_card_others(card->gpu, NULL);
	if (!card->gpu && card->src == CARD_LOG)
		r->others = card->others_oom;
	r->free_now = card->bytes - r->others;
	enum est_phase at_now;
	r->verdict_now = r->others > 0
		? estimate_verdict_beside(&r->est, card->bytes, r->others, &at_now) : r->verdict;
	int status = 0;
	if (o->apply && apply_path(o, src, d, r, &status))
		return status;
	if (o->json)
		print_json(card, r);
	else
		print_text(o, card, r);
	return status;
}

int cmd_estimate(int argc, char **argv)
{
	struct est_args o;
	int status = estimate_options(argc, argv, &o);
	if (status >= 0)
		return status;

	struct card card = { .index = -1 };
	struct err e;
	err_clear(&e);
	if (o.vram && estimate_parse_vram(o.vram, &card.bytes, &card.table_gib, &card.approx, &e)) {
		fprintf(stderr, "oomfix estimate: %s\n", e.msg);
		return ERR_USAGE;
	}
	struct doc *d = NULL;
	struct job *j = NULL;
	struct source *src = NULL;
	int rc = cli_open_job(o.path, &src, &d, &j, &e);
	if (rc) {
		err_print(&e, stderr);
		return rc;
	}
	if (o.json)
		setlocale(LC_MESSAGES, "C");
	struct est_gpus *gpus = NULL;
	struct est_result r = { 0 };
	status = find_card(&o, src, j, &card, &gpus);
	if (!status)
		status = estimate_on(&o, src, d, j, &card, &r);
	estimate_path_free(&r.path);
	free(gpus);
	job_free(&j);
	doc_free(&d);
	source_free(&src);
	if (!status && (ferror(stdout) || fflush(stdout)))
		status = ERR_IOERR;
	return status;
}

/* ---- the estimate beside a diagnosis (plan, diagnose --job) ---------------------------------- */

static enum est_phase phase_of(enum diag_phase p)
{
	switch (p) {
	case DIAG_P_MODEL_LOAD: return EST_MODEL_LOAD;
	case DIAG_P_CACHING: return EST_CACHING;
	case DIAG_P_BASELINE_SAMPLING: return EST_BASELINE_SAMPLE;
	case DIAG_P_SAMPLING: return EST_SAMPLING;
	default: return EST_TRAINING;
	}
}

/* What the failed run held when it ran out: this job's memory plus the request (a lower bound of
 * what that phase needed), or -1 when the message does not say. */
static int64_t measured(const struct diag_result *v)
{
	if (!v || !v->oom || !v->memory.present || v->memory.job < 0)
		return -1;
	return v->memory.job + (v->memory.requested > 0 ? v->memory.requested : 0);
}

void cli_measure(const struct source *src, const struct job *j, const struct diag_result *v,
		 const char *log)
{
	/* a log older than the job's last saved change ran other settings: not this job's */
	if (src && source_log_untried(src, log, NULL))
		return;
	measure_record_diag(j, v, log);
	const char *n = measure_note();
	if (n)
		fprintf(stderr, "oomfix: %s\n", n);
}

void cli_estimate_text(const struct job *j, const struct diag_result *v)
{
	char line[512];
	struct estimate est;
	if (!j || estimate_job(j, &est) != ERR_OK)
		return;
	printf("\n");
	if (!est.known) {
		snprintf(line, sizeof line, _("Estimate: none; oomfix has no memory table for arch "
					      "'%s'."), j->arch[0] ? j->arch : "?");
		para_hang(line, 0, 2);
		return;
	}
	const struct est_phase_est *pk = &est.phase[est.peak];
	char b[32], lo[32], hi[32];
	estimate_gib(pk->bytes, b, sizeof b);
	estimate_gib(pk->low, lo, sizeof lo);
	estimate_gib(pk->high, hi, sizeof hi);
	snprintf(line, sizeof line, _("Estimate before the run (not a measurement): peak %s at %s "
				      "(%s to %s, %s, %d points)."), b, est_phase_label(est.peak),
		 lo, hi, basis_label(pk->basis), pk->points);
	para_hang(line, 0, 2);
	int64_t card = v && v->memory.present ? v->memory.capacity : -1;
	if (card > 0) {
		enum est_phase at;
		enum est_verdict ver = estimate_verdict(&est, card, &at);
		char cb[32];
		estimate_gib(card, cb, sizeof cb);
		snprintf(line, sizeof line, _("On the card of the OOM message (%s): %s at %s."), cb,
			 ver == EST_V_FITS ? _("fits") : ver == EST_V_TIGHT ? _("tight")
									   : _("does not fit"),
			 est_phase_label(at));
		/* one card: what the message shows held by others, as the fit line and retry say */
		char beside[200];
		estimate_beside_words(&est, card, est_card_others(NULL, &v->memory), beside,
				      sizeof beside);
		if (beside[0]) {
			size_t n = strlen(line);
			if (n && line[n - 1] == '.')
				line[n - 1] = 0;
			snprintf(line + strlen(line), sizeof line - strlen(line), "%s.", beside);
		}
		para_hang(line, 2, 4);
	}
	int64_t m = measured(v);
	if (m > 0) {
		enum est_phase ph = phase_of(v->phase);
		char mb[32], eb[32];
		estimate_gib(m, mb, sizeof mb);
		estimate_gib(est.phase[ph].bytes, eb, sizeof eb);
		snprintf(line, sizeof line, _("Measured when it failed: at least %s at %s (held + "
					      "requested); estimated %s."), mb, est_phase_label(ph), eb);
		para_hang(line, 2, 4);
	}
}

void cli_estimate_json(struct json *js, const struct job *j, const struct diag_result *v)
{
	struct estimate est;
	json_key(js, "estimate");
	if (!j || estimate_job(j, &est) != ERR_OK) {
		json_null(js);
		return;
	}
	json_obj_begin(js);
	json_key(js, "known");
	json_bool(js, est.known);
	if (est.known) {
		json_phases(js, &est);
		int64_t card = v && v->memory.present ? v->memory.capacity : -1;
		json_key(js, "card");
		if (card > 0)
			json_int(js, card);
		else
			json_null(js);
		json_key(js, "verdict");
		json_str(js, card > 0 ? est_verdict_name(estimate_verdict(&est, card, NULL)) : NULL);
		int64_t m = measured(v);
		json_key(js, "measured");
		if (m > 0) {
			json_obj_begin(js);
			json_key(js, "phase");
			json_str(js, est_phase_name(phase_of(v->phase)));
			json_key(js, "at_least");
			json_int(js, m);
			json_obj_end(js);
		} else {
			json_null(js);
		}
	}
	json_obj_end(js);
}
