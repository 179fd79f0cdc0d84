/* cmd_measure.c — `oomfix measurements`: what the user's own runs measured (SPEC §12.2), as a
 * table, as JSON, or as rows in the columns of the project's public data points (--export: no
 * paths and no names, so that a user can send them in). */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/measure.h"
#include "cli.h"

static void measure_help(FILE *fp)
{
	fputs(_("Usage: oomfix measurements [--json | --export]\n"
		"\n"
		"Lists what your own runs measured: each out-of-memory message oomfix read with\n"
		"its job (diagnose --job, plan, fix --log, retry, the UI) says how much that\n"
		"phase needed at least, on that card. The next estimate of the same job, or of\n"
		"one that differs only in its sizes, uses them.\n"
		"\n"
		"  --json      machine-readable output\n"
		"  --export    tab-separated rows in the columns of the project's public data\n"
		"              points, without paths or names, to send in\n"
		"\n"
		"The store: $OOMFIX_MEASUREMENTS, else $XDG_STATE_HOME/oomfix/measurements.db,\n"
		"else ~/.local/state/oomfix/measurements.db; OOMFIX_MEASUREMENTS=off keeps none.\n"
		"Exit status: 0 success; 64 usage; 74 the store cannot be read.\n"), fp);
}

static void when_of(long long at, char *buf, size_t sz)
{
	time_t t = (time_t)at;
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, sz, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, sz, "%lld", at);
}

static void print_table(const struct measurement *m, size_t n, const char *path)
{
	if (!n) {
		printf(_("No measurements yet (%s).\n"), path ? path : _("measurements are off"));
		return;
	}
	printf("%-16s  %-14s  %-16s  %12s  %9s  %s\n", _("when"), _("arch"), _("phase"),
	       _("measured"), _("card"), _("settings"));
	for (size_t i = 0; i < n; i++) {
		char when[32], b[32], c[32] = "-", what[160];
		when_of((long long)m[i].at, when, sizeof when);
		estimate_gib(m[i].bytes, b, sizeof b);
		if (m[i].card > 0)
			estimate_gib(m[i].card, c, sizeof c);
		snprintf(what, sizeof what, "%.0f px, batch %lld, rank %.0f%s%s", m[i].in.res,
			 m[i].in.batch, m[i].in.rank, m[i].in.quantize ? ", quantized" : "",
			 m[i].in.low_vram ? ", low_vram" : "");
		if (m[i].in.frames > 1) {
			char f[32];
			snprintf(f, sizeof f, ", %lld frames", m[i].in.frames);
			strncat(what, f, sizeof what - strlen(what) - 1);
		}
		printf("%-16s  %-14s  %-16s  %s%9s  %9s  %s\n", when, m[i].in.arch,
		       est_phase_name(m[i].phase), m[i].kind == MEASURE_LOWER ? ">= " : "   ", b, c,
		       what);
	}
	printf(_("%zu measurements in %s\n"), n, path);
}

static void print_json(const struct measurement *m, size_t n, const char *path)
{
	struct json js;
	json_init(&js, stdout, true);
	json_obj_begin(&js);
	json_key(&js, "store");
	json_str(&js, path);
	json_key(&js, "measurements");
	json_arr_begin(&js);
	for (size_t i = 0; i < n; i++) {
		char key[1024];
		est_input_key(&m[i].in, true, key, sizeof key);
		json_obj_begin(&js);
		json_key(&js, "at");
		json_int(&js, (long long)m[i].at);
		json_key(&js, "arch");
		json_str(&js, m[i].in.arch);
		json_key(&js, "phase");
		json_str(&js, est_phase_name(m[i].phase));
		json_key(&js, "kind");
		json_str(&js, m[i].kind == MEASURE_LOWER ? "at_least" : "peak");
		json_key(&js, "bytes");
		json_int(&js, m[i].bytes);
		json_key(&js, "card");
		if (m[i].card > 0)
			json_int(&js, m[i].card);
		else
			json_null(&js);
		json_key(&js, "settings");
		json_str(&js, key);
		json_key(&js, "log");
		json_str(&js, m[i].log);
		json_obj_end(&js);
	}
	json_arr_end(&js);
	json_obj_end(&js);
	json_finish(&js);
}

/* A GiB figure as the data points write it. */
static void gb(int64_t bytes, char *buf, size_t sz)
{
	snprintf(buf, sz, "%.2f GiB", (double)bytes / 1073741824.0);
}

static void print_export(const struct measurement *m, size_t n)
{
	printf("id\ttrainer\tarch\tquantize\tlow_vram\tresolution\tbatch_size\tgrad_checkpointing\t"
	       "rank\tframes\toptimizer\ttext_encoder\tcard\tcard_vram_gb\toutcome\tpeak_gb\t"
	       "phase_of_oom\tsource\tquote\tevidence\n");
	for (size_t i = 0; i < n; i++) {
		const struct est_input *in = &m[i].in;
		char peak[64], card[32] = "unknown", q[96];
		gb(m[i].bytes, peak, sizeof peak);
		if (m[i].kind == MEASURE_LOWER)
			strncat(peak, " needed at least (held + requested at failure)",
				sizeof peak - strlen(peak) - 1);
		if (m[i].card > 0)
			snprintf(card, sizeof card, "%.2f GiB", (double)m[i].card / 1073741824.0);
		snprintf(q, sizeof q, "%s", in->quantize ? in->qtype : "none (bf16)");
		char *bar = strchr(q, '|'); /* an adapter's path after the qtype: not exported */
		if (bar)
			snprintf(bar, sizeof q - (size_t)(bar - q), " + ARA");
		printf("U%zu\taitk\t%s%s%s\t%s\t%s\t%.0f\t%lld\t%s\t%.0f\t%lld\t%s\t%s\t%s\t%s\t%s\t"
		       "%s\t%s\toomfix measurements --export\t-\tmeasured: allocator message at OOM "
		       "(oomfix)\n",
		       i + 1, in->arch, strcmp(in->variant, "-") ? " " : "",
		       strcmp(in->variant, "-") ? in->variant : "", q, in->low_vram ? "true" : "false",
		       in->res, in->batch, in->gc ? "true" : "false", in->rank, in->frames,
		       in->optimizer, in->te_gpu ? "on GPU" : "cached or unloaded", card, card,
		       m[i].kind == MEASURE_LOWER ? "oom" : "fits", peak,
		       est_phase_name(m[i].phase));
	}
}

int cmd_measurements(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "export", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, export = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'x': export = true; break;
		case 'h': measure_help(stdout); return 0;
		default:
			fprintf(stderr, _("oomfix measurements: unknown option '%s'\n"),
				argv[optind - 1]);
			fprintf(stderr, "%s", _("See 'oomfix measurements --help'.\n"));
			return ERR_USAGE;
		}
	}
	if (json && export) {
		fprintf(stderr, "%s\n", _("oomfix measurements: --json and --export cannot be used "
					  "together"));
		return ERR_USAGE;
	}
	if (optind != argc) {
		fprintf(stderr, "%s\n", _("oomfix measurements: it takes no arguments"));
		return ERR_USAGE;
	}
	char pathbuf[4096];
	const char *path = measure_store_path(pathbuf, sizeof pathbuf);
	struct measurement *m = NULL;
	size_t n = 0;
	struct err e;
	err_clear(&e);
	measure_list(&m, &n, &e);
	const char *note = measure_note();
	if (note)
		fprintf(stderr, "oomfix: %s\n", note);
	if (e.code) {
		err_print(&e, stderr);
		free(m);
		return ERR_IOERR;
	}
	if (json) {
		setlocale(LC_MESSAGES, "C");
		print_json(m, n, path);
	} else if (export) {
		print_export(m, n);
	} else {
		print_table(m, n, path);
	}
	free(m);
	return ferror(stdout) || fflush(stdout) ? ERR_IOERR : 0;
}
