/* estimate_card.c — the card the estimate is for: --vram as users name it, and nvidia-smi's
 * answers (run by estimate_gpu.c) read into cards and the processes holding them (SPEC §12). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "oomfix/estimate.h"
#include "oomfix/memacct.h"
#include "oomfix/i18n.h"
#include "estimate_int.h"

int estimate_parse_vram(const char *arg, int64_t *bytes, double *table_gib, bool *approx,
			struct err *e)
{
	char *end;
	double v = strtod(arg ? arg : "", &end);
	if (table_gib)
		*table_gib = 0;
	if (approx)
		*approx = false;
	if (!arg || end == arg || !(v > 0) || v > 100000) {
		err_set(e, ERR_USAGE, NULL, 0, 0,
			_("--vram wants a card size, e.g. 24 (as sold) or 23.5GiB, not '%s'"),
			arg ? arg : "");
		return ERR_USAGE;
	}
	while (*end == ' ')
		end++;
	/* A bare number, GB or G is the card as it is sold (24, 24GB, 24 GB, 24G: a 24 GB card,
	 * which PyTorch reports as 23.99 GiB); GiB and MiB are exact capacities. */
	double gib;
	if (!*end || !strcasecmp(end, "GB") || !strcasecmp(end, "G")) {
		gib = est_sold_gib(v);
		if (gib > 0) {
			if (table_gib)
				*table_gib = gib;
		} else {
			gib = v * 0.98;
			if (approx)
				*approx = true;
		}
	} else if (!strcasecmp(end, "GiB")) {
		gib = v;
	} else if (!strcasecmp(end, "MiB") || !strcasecmp(end, "M")) {
		gib = v / 1024.0;
	} else {
		err_set(e, ERR_USAGE, NULL, 0, 0,
			_("--vram: unknown unit '%s' (a card as sold: 24, 24GB; an exact capacity: "
			  "23.5GiB or 24000MiB)"), end);
		return ERR_USAGE;
	}
	*bytes = est_gib_bytes(gib);
	return ERR_OK;
}

/* The next comma-separated field of a line, trimmed, into buf. */
static const char *csv_field(const char *s, const char *end, char *buf, size_t sz)
{
	const char *c = s;
	while (c < end && *c != ',')
		c++;
	const char *a = s, *b = c;
	while (a < b && isspace((unsigned char)*a))
		a++;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	size_t n = (size_t)(b - a) < sz - 1 ? (size_t)(b - a) : sz - 1;
	memcpy(buf, a, n);
	buf[n] = 0;
	return c < end ? c + 1 : NULL;
}

/* Splits the line at *l into at most `max` trimmed fields and moves *l to the next line (NULL at
 * the end). Returns the number of fields, or -1 when the line has more than `max`. */
static int csv_line(const char **l, char f[][64], int max)
{
	const char *nl = strchr(*l, '\n');
	const char *end = nl ? nl : *l + strlen(*l);
	const char *p = *l;
	int nf = 0;
	while (p && nf < max)
		p = csv_field(p, end, f[nf++], 64);
	*l = nl ? nl + 1 : NULL;
	return p ? -1 : nf;
}

static bool parse_mib(const char *s, int64_t *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0 || v > 1e9)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end && strcasecmp(end, "MiB"))
		return false;
	*out = (int64_t)llround(v * 1048576.0);
	return true;
}

int estimate_parse_smi(const char *gpus, const char *apps, struct est_gpus *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	char f[5][64];
	for (const char *l = gpus; l && *l && out->n < EST_MAX_GPUS;) {
		int nf = csv_line(&l, f, 5);
		struct est_gpu *g = &out->gpu[out->n];
		char *ie;
		long idx = nf == 5 ? strtol(f[0], &ie, 10) : -1;
		if (nf == 5 && ie != f[0] && !*ie && idx >= 0 && parse_mib(f[3], &g->total) &&
		    parse_mib(f[4], &g->used) && g->total > 0) {
			g->index = (int)idx;
			snprintf(g->uuid, sizeof g->uuid, "%s", f[1]);
			snprintf(g->name, sizeof g->name, "%s", f[2]);
			out->n++;
		} else {
			memset(g, 0, sizeof *g);
		}
	}
	if (!out->n) {
		err_set(e, ERR_DATA, NULL, 0, 0, "%s",
			_("nvidia-smi gave no card this program can read"));
		return ERR_DATA;
	}
	for (const char *l = apps; l && *l;) {
		int nf = csv_line(&l, f, 3);
		int64_t b;
		char *pe;
		long long pid = nf == 3 ? strtoll(f[1], &pe, 10) : -1;
		if (nf == 3 && pe != f[1] && !*pe && parse_mib(f[2], &b))
			for (size_t i = 0; i < out->n; i++) {
				struct est_gpu *g = &out->gpu[i];
				if (strcmp(g->uuid, f[0]) || g->napps >= EST_MAX_APPS)
					continue;
				g->app[g->napps].pid = pid;
				g->app[g->napps].bytes = b;
				g->napps++;
				g->apps_total += b;
			}
	}
	return ERR_OK;
}

int64_t est_card_others(const struct est_gpu *g, const struct memacct *m)
{
	if (g)
		return g->used > 0 ? g->used : 0;
	if (!m || !m->present)
		return 0;
	int64_t others = m->others_total > 0 ? m->others_total : 0;
	/* held by something the job cannot see (a container hides other tenants' pids); under half
	 * a GiB it is the driver's own */
	if (m->unaccounted > (int64_t)1 << 29)
		others += m->unaccounted;
	return others;
}

enum est_verdict estimate_verdict_beside(const struct estimate *e, int64_t card, int64_t others,
					 enum est_phase *at)
{
	int64_t usable = card - (others > 0 ? others : 0);
	return estimate_verdict(e, usable > 0 ? usable : 1, at);
}

void estimate_beside_words(const struct estimate *e, int64_t card, int64_t others, char *buf,
			   size_t sz)
{
	buf[0] = 0;
	if (!e->known || card <= 0 || others <= 0)
		return;
	enum est_phase at, at_beside;
	enum est_verdict alone = estimate_verdict(e, card, &at);
	enum est_verdict beside = estimate_verdict_beside(e, card, others, &at_beside);
	if (beside == alone)
		return;
	char ob[32], words[128];
	estimate_gib(others, ob, sizeof ob);
	estimate_verdict_words(beside, at_beside, words, sizeof words);
	snprintf(buf, sz, _("; with the %s others hold: %s"), ob, words);
}
