/* fitline.c — the fit line under the field panels (SPEC §12): the estimate of the job as it is
 * in memory, its peak and phase, the card, the verdict, and a small bar per phase; and the
 * estimate before → after the unsaved change, for the Diff and the save screen.
 *
 * estimate_job takes about ten microseconds, so the line is worked out again on every draw from
 * the job being edited. The card: --vram, else nvidia-smi asked once in a worker thread at start
 * (the first screen never waits for it; none is normal), else the capacity in the log's OOM
 * message, else no verdict (the line says --vram gives one).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oomfix/estimate.h"
#include "oomfix/source.h"
#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "view_diag.h"
#include "view.h"

static int64_t vram;                 /* --vram, 0 when not given */
static struct est_gpus *smi_gpus;    /* nvidia-smi's cards, once the worker is done (or NULL) */
static atomic_int smi_state;         /* 0 not asked, 1 asking, 2 done (redraw), 3 taken */
static time_t smi_started;           /* when it was asked (monotonic seconds) */

static void *smi_run(void *arg)
{
	struct est_gpus *g = calloc(1, sizeof *g);
	struct err e;
	err_clear(&e);
	if (g && estimate_query_gpus(g, &e) == ERR_OK && g->n)
		smi_gpus = g; /* read by the main thread after smi_state says 2 */
	else
		free(g);
	atomic_store_explicit(&smi_state, 2, memory_order_release);
	return arg;
}

void ui_fit_start(int64_t vram_bytes)
{
	vram = vram_bytes;
	if (vram > 0)
		return;
	pthread_t th;
	sigset_t all, old;
	sigfillset(&all);
	/* signals are the main thread's (SIGWINCH, the emergency save) */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	smi_started = now.tv_sec;
	atomic_store(&smi_state, 1);
	if (pthread_create(&th, NULL, smi_run, NULL) == 0)
		pthread_detach(th);
	else
		atomic_store(&smi_state, 3); /* no thread: no nvidia-smi rather than a wait */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

bool ui_fit_tick(const struct ui_env *v)
{
	int want = 2;
	return atomic_compare_exchange_strong(&smi_state, &want, 3);
}

/* Busy (the loop wakes up often to take the answer) for a few seconds at most: an nvidia-smi
 * that hangs must not keep the loop awake; a later answer still shows at the next key. */
bool ui_fit_busy(const struct ui_env *v)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return atomic_load(&smi_state) == 1 && now.tv_sec - smi_started < 5;
}

/* nvidia-smi's card for the job: the web UI job's GPU, else 0 (as `oomfix estimate` and
 * `retry` pick it); NULL before it answered or without one. */
static const struct est_gpu *smi_card_of(const struct ui_session *s)
{
	if (atomic_load_explicit(&smi_state, memory_order_acquire) < 2 || !smi_gpus)
		return NULL;
	int want = s->src && source_gpu(s->src) >= 0 ? source_gpu(s->src) : 0;
	for (size_t i = 0; i < smi_gpus->n; i++)
		if (smi_gpus->gpu[i].index == want)
			return &smi_gpus->gpu[i];
	return NULL;
}

/* The card: --vram, nvidia-smi once it answered, the OOM message's; 0 when none is known. With
 * it, *others: what other processes hold on it (now, or at the failure the card comes from). */
static int64_t card_and_others(const struct ui_session *s, int64_t *others)
{
	const struct est_gpu *g = smi_card_of(s);
	*others = 0;
	if (vram > 0)
		return vram;
	if (g && g->total > 0) {
		/* while the job's own run is being followed, what is in use is partly its own */
		*others = s->growing ? 0 : est_card_others(g, NULL);
		return g->total;
	}
	if (s->have_diag && s->diag.memory.present && s->diag.memory.capacity > 0) {
		*others = est_card_others(NULL, &s->diag.memory);
		return s->diag.memory.capacity;
	}
	return 0;
}

static int64_t card_of(const struct ui_session *s)
{
	int64_t others;
	return card_and_others(s, &others);
}

static enum ui_role verdict_role(enum est_verdict v)
{
	return v == EST_V_NO ? UI_R_ERROR : v == EST_V_TIGHT ? UI_R_OOM : v == EST_V_FITS ? UI_R_DONE
											   : UI_R_DIM;
}

/* One row of small bars, one a phase: " model load [###.....] caching [#.......] ...", each
 * filled by its share of the card (of the peak without a card); a phase over the card fills its
 * bar and ends in "!". bar_cells: the cells a bar gets in `width`, 0 when too narrow for 4. */
static int bar_cells(const struct estimate *e, int width)
{
	int label_w = 0, nph = 0;
	for (int p = 0; p < EST_NPHASES; p++) {
		if (!e->phase[p].on)
			continue;
		const char *lab = est_phase_label((enum est_phase)p);
		label_w += text_width(lab, strlen(lab));
		nph++;
	}
	if (!nph || e->phase[e->peak].bytes <= 0)
		return 0;
	/* each phase: a blank, its label, " [", the cells, "]" and "!" or a blank */
	int cells = (width - label_w - nph * 5) / nph;
	return cells < 4 ? 0 : cells > 12 ? 12 : cells;
}

static void draw_bars(WINDOW *win, int y, int x, int width, const struct estimate *e,
		      int64_t card, int cells)
{
	int64_t scale = card > 0 ? card : e->phase[e->peak].bytes;
	const char *full = ui_ascii() ? "#" : "\xe2\x96\x88", *empty = ui_ascii() ? "." : "\xe2\x96\x91";
	int end = x + width;
	for (int p = 0; p < EST_NPHASES; p++) {
		const struct est_phase_est *ph = &e->phase[p];
		if (!ph->on)
			continue;
		char lab[96];
		int n = (int)((ph->bytes * cells * 2 / scale + 1) / 2);
		bool over = card > 0 && ph->bytes > card;
		if (n > cells || over)
			n = cells;
		enum est_verdict pv = card <= 0 ? EST_V_UNKNOWN : ph->low > card ? EST_V_NO
				      : ph->high > card ? EST_V_TIGHT : EST_V_FITS;
		snprintf(lab, sizeof lab, " %s [", est_phase_label((enum est_phase)p));
		x += ui_put(win, y, x, end - x, UI_R_DIM, lab);
		for (int k = 0; k < cells && x < end; k++)
			x += ui_put(win, y, x, 1, k < n ? (pv == EST_V_UNKNOWN ? UI_R_VALUE
								    : verdict_role(pv)) : UI_R_DIM,
				    k < n ? full : empty);
		x += ui_put(win, y, x, end - x, over ? UI_R_ERROR : UI_R_DIM, over ? "]!" : "] ");
	}
}

/* The words of the fit line for job j, wrapped to `width`. */
static void fit_words(const struct ui_session *s, const struct job *j, struct ui_lines *l,
		      int width, struct estimate *est)
{
	char words[400], beside[200], line[640];
	enum est_verdict v;
	int64_t others, card = card_and_others(s, &others);
	estimate_job(j, est);
	estimate_line(est, card, words, sizeof words, &v, NULL);
	/* the same card as every front end: what others hold is not the job's to fit */
	estimate_beside_words(est, card, others, beside, sizeof beside);
	if (beside[0])
		v = estimate_verdict_beside(est, card, others, NULL);
	snprintf(line, sizeof line, _("Estimate: %s%s"), words, beside);
	ui_lines_wrap(l, est->known ? verdict_role(v) : UI_R_DIM, line, width, 2);
}

int ui_fit_draw(const struct ui_session *s, WINDOW *win, struct ui_rect r)
{
	const struct job *j = s->job;
	/* Below 10 rows the fields keep them all; below 12 the words get one row, below 16 no
	 * bars; the bars go before the words when the row is narrow. */
	if (!j || r.h < 10)
		return 0;
	struct ui_lines l = { 0 };
	struct estimate est;
	fit_words(s, j, &l, r.w - 2, &est);
	/* the words whole where there is room: a verdict cut short would say less than it is */
	int nw = r.h >= 16 && l.n > 2 ? 3 : r.h >= 12 && l.n > 1 ? 2 : 1;
	int cells = r.h >= 16 && est.known ? bar_cells(&est, r.w - 3) : 0;
	/* With room to spare, why the peak is the size it is: its terms, on one row. */
	char terms[512] = "";
	if (r.h >= 30 && est.known)
		estimate_terms_words(&est, est.peak, terms, sizeof terms);
	bool show_terms = terms[0] && text_width(terms, strlen(terms)) <= r.w - 3;
	int n = nw + (cells ? 1 : 0) + (show_terms ? 1 : 0);
	for (int i = 0; i < nw && i < (int)l.n; i++)
		ui_draw_line(win, r.y + r.h - n + i, r.x + 1, r.w - 1, &l.v[i], false);
	ui_lines_free(&l);
	if (cells)
		draw_bars(win, r.y + r.h - n + nw, r.x + 2, r.w - 3, &est, card_of(s), cells);
	if (show_terms)
		ui_put(win, r.y + r.h - 1, r.x + 3, r.w - 3, UI_R_DIM, terms);
	return n;
}

void ui_fit_change_lines(const struct ui_session *s, struct ui_lines *l, int width)
{
	if (!s->base_job || !s->job)
		return;
	struct estimate before, after;
	estimate_job(s->base_job, &before);
	estimate_job(s->job, &after);
	if (!after.known) {
		char w[400], line[512];
		estimate_line(&after, 0, w, sizeof w, NULL, NULL);
		snprintf(line, sizeof line, _("Estimate: %s"), w);
		ui_lines_wrap(l, UI_R_DIM, line, width, 2);
		return;
	}
	int64_t card = card_of(s);
	char b[400], af[400], line[1024];
	enum est_verdict vb, va;
	estimate_line(&before, card, b, sizeof b, &vb, NULL);
	estimate_line(&after, card, af, sizeof af, &va, NULL);
	snprintf(line, sizeof line, _("Estimate before: %s"), b);
	ui_lines_wrap(l, verdict_role(vb), line, width, 2);
	snprintf(line, sizeof line, _("       → after: %s"), af);
	ui_lines_wrap(l, verdict_role(va), line, width, 2);
}

void ui_fit_step_lines(const struct ui_session *s, enum fix_id fix, const struct estimate *after,
		       struct ui_lines *l, int width, int indent)
{
	char w[400], line[600], ph[32];
	enum est_verdict v;
	if (!after->known)
		return;
	/* the phase the step acts on, then the whole job's peak and verdict */
	enum est_phase acts = fix == FIX_LOW_VRAM ? EST_MODEL_LOAD
			      : fix == FIX_LIGHTER_SAMPLING || fix == FIX_DISABLE_SAMPLING
				      ? EST_SAMPLING : EST_TRAINING;
	int64_t card = card_of(s);
	v = EST_V_UNKNOWN;
	if (card > 0) {
		estimate_line(after, card, w, sizeof w, &v, NULL);
	} else { /* the fit line above says once that --vram gives a verdict */
		char pk[32];
		estimate_gib(after->phase[after->peak].bytes, pk, sizeof pk);
		snprintf(w, sizeof w, _("peak %s at %s"), pk, est_phase_label(after->peak));
	}
	if (after->phase[acts].on) {
		estimate_gib(after->phase[acts].bytes, ph, sizeof ph);
		snprintf(line, sizeof line, _("→ then %s %s; %s"), est_phase_label(acts), ph, w);
	} else {
		snprintf(line, sizeof line, _("→ then %s off; %s"), est_phase_label(acts), w);
	}
	ui_lines_wrap(l, verdict_role(v) == UI_R_DONE ? UI_R_DONE : UI_R_DIM, line, width, indent);
}
