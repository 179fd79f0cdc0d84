/* retry_events.h — the protocol of `oomfix retry --events FD`, for both of its ends: the writer
 * (the CLI's JSON sink) and the reader (the UI's retry view, which runs the loop as a child).
 *
 * One JSON object per line, flushed as it happens:
 *   {"event":"try","try":N,"index":T,"max_tries":M,"log":PATH,"estimate":E}  a run starts (or
 *       is queued); E = {"known":B,"peak_phase":S,"bytes":N,"high":N,"card":N|null,
 *       "verdict":"fits"|"tight"|"no"|null,"verdict_phase":S|null}, or null
 *   {"event":"taken","try":N,"status":S}          the web UI's worker took the queued job
 *   {"event":"waiting","try":N,"text":S}          it has not, for long: what the worker needs
 *   {"event":"verdict","try":N,"oom":B,"timing":T,"phase":P,"step":K,"summary":S}
 *   {"event":"fix","try":N,"fix":ID,"title":S,"changes":[...],"rungs":N,"ruled_out":S|null,
 *       "note":S,"lesson":S}
 *   {"event":"end","try":N,"status":X,"outcome":O,"text":S}   the loop is over; X its exit status
 * N is the run's number (its log is <runs folder>/<N>.log; 0 is the log given with --log), T the
 * try's place in this invocation (1..M).
 *
 * The names live in the two tables below and nowhere else: a reader parses a name through the
 * table and then compares enum values, never strings.
 */
#ifndef OOMFIX_RETRY_EVENTS_H
#define OOMFIX_RETRY_EVENTS_H

#include <stdbool.h>
#include <string.h>

/* X(ID, "json name") */
#define RETRY_EVENTS(X) \
	X(TRY, "try") \
	X(TAKEN, "taken") \
	X(WAITING, "waiting") \
	X(VERDICT, "verdict") \
	X(FIX, "fix") \
	X(END, "end")

enum retry_event {
#define RETRY_EV_ENUM(id, name) RETRY_EV_##id,
	RETRY_EVENTS(RETRY_EV_ENUM)
#undef RETRY_EV_ENUM
	RETRY_EV_COUNT
};

/* How the loop ended: X(ID, "json name", exit status). The status is the one `oomfix retry`
 * exits with for that outcome (-1: it varies — an error carries its own sysexits code). */
#define RETRY_OUTCOMES(X) \
	X(FITS, "fits", 0)               /* a run finished */ \
	X(PROBE, "probe", 0)             /* a run passed the probe and was stopped */ \
	X(NOT_OOM, "not_oom", 65)        /* a run failed, not for GPU memory */ \
	X(WORKER, "worker", 69)          /* verdict E: a fresh worker, not a setting */ \
	X(EXHAUSTED, "exhausted", 69)    /* no fix left that acts on the failing phase */ \
	X(UNKNOWN, "unknown", 69)        /* the log does not show when it ran out: no guess */ \
	X(MAX_TRIES, "max_tries", 69)    /* N runs did not fit */ \
	X(INTERRUPTED, "interrupted", 130) /* Ctrl-C */ \
	X(STOPPED, "stopped", 130)       /* the web UI job was stopped in the UI */ \
	X(ERROR, "error", -1)            /* the job, its log or the command could not be used */

enum retry_outcome {
#define RETRY_OUT_ENUM(id, name, status) RETRY_OUT_##id,
	RETRY_OUTCOMES(RETRY_OUT_ENUM)
#undef RETRY_OUT_ENUM
	RETRY_OUT_COUNT
};

static inline const char *retry_event_name(enum retry_event ev)
{
	static const char *const names[] = {
#define RETRY_EV_NAME(id, name) name,
		RETRY_EVENTS(RETRY_EV_NAME)
#undef RETRY_EV_NAME
	};
	return (unsigned)ev < RETRY_EV_COUNT ? names[ev] : "";
}

/* The event named `s`, or RETRY_EV_COUNT when it is none of them (NULL too). */
static inline enum retry_event retry_event_parse(const char *s)
{
	for (int i = 0; s && i < RETRY_EV_COUNT; i++)
		if (!strcmp(s, retry_event_name((enum retry_event)i)))
			return (enum retry_event)i;
	return RETRY_EV_COUNT;
}

static inline const char *retry_outcome_name(enum retry_outcome o)
{
	static const char *const names[] = {
#define RETRY_OUT_NAME(id, name, status) name,
		RETRY_OUTCOMES(RETRY_OUT_NAME)
#undef RETRY_OUT_NAME
	};
	return (unsigned)o < RETRY_OUT_COUNT ? names[o] : "error";
}

/* The outcome named `s`; an unknown name (or NULL) is RETRY_OUT_ERROR. */
static inline enum retry_outcome retry_outcome_parse(const char *s)
{
	for (int i = 0; s && i < RETRY_OUT_COUNT; i++)
		if (!strcmp(s, retry_outcome_name((enum retry_outcome)i)))
			return (enum retry_outcome)i;
	return RETRY_OUT_ERROR;
}

/* The exit status of an outcome (-1 for ERROR: its error's own code). */
static inline int retry_outcome_status(enum retry_outcome o)
{
	static const int st[] = {
#define RETRY_OUT_STATUS(id, name, status) status,
		RETRY_OUTCOMES(RETRY_OUT_STATUS)
#undef RETRY_OUT_STATUS
	};
	return (unsigned)o < RETRY_OUT_COUNT ? st[o] : -1;
}

/* True when the loop ended with a job that fits (a finished run, or a passed probe). */
static inline bool retry_outcome_fits(enum retry_outcome o)
{
	return retry_outcome_status(o) == 0;
}

#endif
