/* memacct.c — see memacct.h. Hand-written matching of the fixed phrases torch prints: the
 * message is short, only lines that already matched an OOM signature reach here, and every
 * release moves the numbers around (the 1.x parenthesis puts the size before its words). */
#include "oomfix/memacct.h"

#include <stdio.h>
#include <string.h>

/* Sizes read from a log saturate at MEMACCT_SIZE_MAX, so that a sum of every size an account
 * holds (the eight listed processes, free, the job) stays inside int64_t; the sums saturate too. */
static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

void memacct_init(struct memacct *m)
{
	memset(m, 0, sizeof *m);
	m->capacity = m->free = m->requested = m->this_process = -1;
	m->pytorch_allocated = m->pytorch_reserved_unallocated = m->private_pools = m->limit = -1;
	m->this_pid = -1;
	m->job = m->unaccounted = -1;
}

static const struct { const char *unit; int64_t mult; } units[] = {
	{ "bytes", 1 }, { "byte", 1 }, { "KiB", 1LL << 10 }, { "MiB", 1LL << 20 },
	{ "GiB", 1LL << 30 }, { "TiB", 1LL << 40 }, { "KB", 1LL << 10 }, { "MB", 1LL << 20 },
	{ "GB", 1LL << 30 }, { "TB", 1LL << 40 }, { "B", 1 },
};

size_t memacct_size(const char *s, size_t n, int64_t *bytes)
{
	size_t i = 0, j;
	uint64_t whole = 0, frac = 0, scale = 1;

	if (n == 0 || !is_digit(s[0]))
		return 0;
	while (i < n && is_digit(s[i])) {
		if (whole < (1ULL << 40))
			whole = whole * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) {
		i++;
		while (i < n && is_digit(s[i])) {
			if (scale < 1000000) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				scale *= 10;
			}
			i++;
		}
	}
	j = i;
	while (j < n && s[j] == ' ')
		j++;
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
		size_t l = strlen(units[u].unit);
		if (j + l <= n && !memcmp(s + j, units[u].unit, l) && (j + l == n || !is_alpha(s[j + l]))) {
			uint64_t m = (uint64_t)units[u].mult, v;
			/* rounded to the byte: 2.00 GiB is exactly 2 << 30; beyond any card, saturated */
			if (whole > (uint64_t)MEMACCT_SIZE_MAX / m)
				v = (uint64_t)MEMACCT_SIZE_MAX;
			else
				v = whole * m + (frac * m + scale / 2) / scale;
			*bytes = v > (uint64_t)MEMACCT_SIZE_MAX ? MEMACCT_SIZE_MAX : (int64_t)v;
			return j + l;
		}
	}
	return 0;
}

/* The size that ends just before `at` ("4.43 GiB already allocated"), or -1. */
static int64_t size_before(const char *s, const char *at)
{
	const char *p = at;
	int64_t b;

	while (p > s && p[-1] == ' ')
		p--;
	while (p > s && is_alpha(p[-1]))
		p--;
	while (p > s && p[-1] == ' ')
		p--;
	while (p > s && (is_digit(p[-1]) || p[-1] == '.'))
		p--;
	while (*p == '.')
		p++;
	if (memacct_size(p, (size_t)(at - p), &b) == 0)
		return -1;
	return b;
}

/* The size that starts at or after `p` (after blanks and a ':'), or -1. */
static int64_t size_after(const char *p, const char *end)
{
	int64_t b;

	while (p < end && (*p == ' ' || *p == ':' || *p == '\t'))
		p++;
	return memacct_size(p, (size_t)(end - p), &b) ? b : -1;
}

static const char *find(const char *s, const char *end, const char *lit)
{
	size_t l = strlen(lit);
	if (s >= end)
		return NULL;
	return memmem(s, (size_t)(end - s), lit, l);
}

static bool keep(int64_t *field, int64_t v)
{
	if (v < 0 || *field >= 0)
		return false;
	*field = v;
	return true;
}

static bool add_process(struct memacct *m, long long pid, int64_t bytes)
{
	for (size_t i = 0; i < m->nother; i++)
		if (m->other[i].pid == pid)
			return false; /* the same message printed twice */
	if (m->nother >= MEMACCT_MAX_PROCS)
		return false;
	m->other[m->nother].pid = pid;
	m->other[m->nother].bytes = bytes;
	m->nother++;
	return true;
}

/* torch 1.x: "(GPU 0; 7.93 GiB total capacity; 4.43 GiB already allocated; 0 bytes free;
 * 6.40 GiB reserved in total by PyTorch)", older releases "... 4.81 GiB cached)". */
static bool parse_paren(struct memacct *m, const char *s, const char *end)
{
	const char *p = find(s, end, "(GPU "), *close;
	int64_t reserved = -1;
	bool any = false;

	if (!p)
		return false;
	close = memchr(p, ')', (size_t)(end - p));
	if (!close)
		close = end;
	p = memchr(p, ';', (size_t)(close - p));
	while (p && p < close) {
		const char *q = memchr(p + 1, ';', (size_t)(close - (p + 1)));
		const char *pe = q ? q : close;
		int64_t b;
		size_t k;

		p++;
		while (p < pe && *p == ' ')
			p++;
		k = memacct_size(p, (size_t)(pe - p), &b);
		if (k) {
			const char *w = p + k;
			size_t wl = (size_t)(pe - w);
			if (find(w, pe, "total capac"))
				any |= keep(&m->capacity, b);
			else if (find(w, pe, "already allocated"))
				any |= keep(&m->pytorch_allocated, b);
			else if (find(w, pe, "reserved in total") || find(w, pe, "cached"))
				reserved = b, any = true;
			else if (wl >= 5 && find(w, pe, "free"))
				any |= keep(&m->free, b);
		}
		p = q;
	}
	if (reserved >= 0 && m->pytorch_allocated >= 0 && m->pytorch_reserved_unallocated < 0)
		m->pytorch_reserved_unallocated =
			reserved > m->pytorch_allocated ? reserved - m->pytorch_allocated : 0;
	return any;
}

/* "Allocation on device 0 would exceed allowed memory. (out of memory)" and the lines under it:
 * "Currently allocated     : 3.02 GiB", "Requested : ...", "Device limit : ...",
 * "Free (according to CUDA): ...", "PyTorch limit (set by user-supplied memory fraction)"
 * with its value on the next line, which starts with ':'. */
static bool parse_fraction(struct memacct *m, const char *s, const char *end)
{
	const char *p;
	bool any = false;

	if ((p = find(s, end, "Currently allocated")) != NULL)
		any |= keep(&m->pytorch_allocated, size_after(p + 19, end));
	if ((p = find(s, end, "Requested ")) != NULL || (p = find(s, end, "Requested:")) != NULL)
		any |= keep(&m->requested, size_after(p + 9, end));
	if ((p = find(s, end, "Device limit")) != NULL)
		any |= keep(&m->capacity, size_after(p + 12, end));
	if ((p = find(s, end, "Free (according to CUDA)")) != NULL)
		any |= keep(&m->free, size_after(p + 24, end));
	if ((p = find(s, end, "memory fraction)")) != NULL) {
		int64_t b = size_after(p + 16, end);
		if (b >= 0)
			any |= keep(&m->limit, b);
		else
			m->want_limit = true;
	} else if (m->want_limit && s < end && *s == ':') {
		m->want_limit = false;
		any |= keep(&m->limit, size_after(s, end));
	}
	return any;
}

bool memacct_parse(struct memacct *m, const char *s, size_t n)
{
	const char *end = s + n, *p;
	bool any = false;

	if ((p = find(s, end, "Tried to allocate ")) != NULL)
		any |= keep(&m->requested, size_after(p + 18, end));
	/* 2.1 prints "total capacty" */
	if ((p = find(s, end, "has a total capac")) != NULL) {
		const char *of = find(p, end, " of ");
		if (of)
			any |= keep(&m->capacity, size_after(of + 4, end));
		if ((of = find(p, end, " of which ")) != NULL)
			any |= keep(&m->free, size_after(of + 10, end));
	}
	any |= parse_paren(m, s, end);
	for (p = s; (p = find(p, end, "Process ")) != NULL; p += 8) {
		const char *q = p + 8;
		long long pid = 0;
		int64_t b;
		size_t k;

		if (q >= end || !is_digit(*q))
			continue;
		while (q < end && is_digit(*q)) {
			if (pid < 100000000000LL)
				pid = pid * 10 + (*q - '0');
			q++;
		}
		if ((size_t)(end - q) < 5 || memcmp(q, " has ", 5))
			continue;
		q += 5;
		k = memacct_size(q, (size_t)(end - q), &b);
		if (k && find(q + k, end, " memory in use") == q + k)
			any |= add_process(m, pid, b);
	}
	if ((p = find(s, end, "this process has ")) != NULL)
		any |= keep(&m->this_process, size_after(p + 17, end));
	if ((p = find(s, end, "Of the allocated memory ")) != NULL)
		any |= keep(&m->pytorch_allocated, size_after(p + 24, end));
	if ((p = find(s, end, " allocated in private pools")) != NULL)
		any |= keep(&m->private_pools, size_before(s, p));
	if ((p = find(s, end, " is reserved by PyTorch but unallocated")) != NULL)
		any |= keep(&m->pytorch_reserved_unallocated, size_before(s, p));
	any |= parse_fraction(m, s, end);
	if (m->capacity >= 0 || m->pytorch_allocated >= 0 || m->this_process >= 0 || m->nother)
		m->present = true;
	return any;
}

void memacct_finish(struct memacct *m)
{
	int64_t reserved = -1;

	if (m->pytorch_allocated >= 0)
		reserved = sat_add(m->pytorch_allocated,
				   m->pytorch_reserved_unallocated > 0 ? m->pytorch_reserved_unallocated : 0);
	/* In a container torch cannot tell its own pid, so the job is one of the "Process N" lines:
	 * the smallest that holds at least what PyTorch reserved (a process holds its PyTorch
	 * memory and more). Nothing can be told without PyTorch's own numbers. */
	if (m->this_process < 0 && reserved > 0) {
		size_t best = m->nother;
		for (size_t i = 0; i < m->nother; i++)
			if (m->other[i].bytes >= reserved &&
			    (best == m->nother || m->other[i].bytes < m->other[best].bytes))
				best = i;
		if (best < m->nother) {
			m->this_process = m->other[best].bytes;
			m->this_pid = m->other[best].pid;
			m->other[best] = m->other[m->nother - 1];
			m->nother--;
		}
	}
	m->others_total = 0;
	for (size_t i = 0; i < m->nother; i++)
		m->others_total = sat_add(m->others_total, m->other[i].bytes);
	m->job = m->this_process >= 0 ? m->this_process : reserved >= 0 ? reserved : m->limit;
	m->unaccounted = -1;
	if (m->capacity > 0 && m->free >= 0) {
		/* capacity − (free + job + others), each part saturated: never below 0, never wraps */
		int64_t used = sat_add(sat_add(m->free, m->job > 0 ? m->job : 0), m->others_total);
		m->unaccounted = m->capacity > used ? m->capacity - used : 0;
	}
}

bool memacct_environment(const struct memacct *m)
{
	int64_t quarter, half;

	/* a per-process limit is its own cause: the card may have had room */
	if (!m->present || m->capacity <= 0 || m->limit >= 0)
		return false;
	quarter = m->capacity / 4;
	half = m->capacity / 2;
	if (m->job >= 0)
		return m->job < half && (m->others_total >= quarter || m->unaccounted >= quarter);
	/* This job is not told apart: it is one of the listed processes (so it holds less than
	 * they do together), or the account says nothing about it. */
	return m->nother > 0 && m->others_total < half && m->unaccounted >= quarter;
}

bool memacct_fits_alone(const struct memacct *m)
{
	/* a per-process limit is its own cause; every number must be said */
	if (!m->present || m->capacity <= 0 || m->limit >= 0 || m->nother == 0 || m->job < 0 ||
	    m->requested < 0 || m->free < 0)
		return false;
	return m->others_total + m->free >= m->requested &&
	       m->job + m->requested <= m->capacity / 10 * 9;
}

bool memacct_fragmented(const struct memacct *m)
{
	return m->pytorch_allocated > 0 && m->pytorch_reserved_unallocated >= 0 &&
	       m->pytorch_reserved_unallocated >= m->pytorch_allocated / 4;
}

void memacct_format(int64_t bytes, char *buf, size_t sz)
{
	static const char *const u[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int k = -1;

	if (bytes < 0) {
		snprintf(buf, sz, "?");
		return;
	}
	if (bytes < 1024) {
		snprintf(buf, sz, "%lld B", (long long)bytes);
		return;
	}
	while (v >= 1024 && k < 3) {
		v /= 1024;
		k++;
	}
	snprintf(buf, sz, "%.2f %s", v, u[k]);
}

bool memacct_parts(const struct memacct *m, int64_t part[MEMACCT_NPARTS])
{
	int64_t left;

	for (int i = 0; i < MEMACCT_NPARTS; i++)
		part[i] = 0;
	if (!m->present || m->capacity <= 0)
		return false;
	left = m->capacity;
	/* free first: it is measured; the others are clipped so the bar never overflows */
	part[MEMACCT_FREE] = m->free > 0 ? (m->free < left ? m->free : left) : 0;
	left -= part[MEMACCT_FREE];
	part[MEMACCT_JOB] = m->job > 0 ? (m->job < left ? m->job : left) : 0;
	left -= part[MEMACCT_JOB];
	part[MEMACCT_OTHERS] = m->others_total < left ? m->others_total : left;
	left -= part[MEMACCT_OTHERS];
	part[MEMACCT_UNACCOUNTED] = m->unaccounted > 0 ? (m->unaccounted < left ? m->unaccounted : left) : 0;
	return true;
}
