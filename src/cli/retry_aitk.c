/* retry_aitk.c — the runner for a web UI job (aitk:NAME): there is no CMD. Each try queues the
 * job as the UI's start button does, waits for the UI's worker to take it, shows this run's
 * log.txt as it grows (a copy goes to the try's log, and to the probe), stops it with the job's
 * stop flag once the probe has decided, and returns when its status says it ended and its
 * trainer has exited (or gone quiet). Only autocommit SELECTs are made while waiting. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/gpuwatch.h"
#include "oomfix/i18n.h"
#include "oomfix/save.h"
#include "oomfix/source.h"
#include "retry_cli.h"

#define POLL_MS 100      /* how often the row and the log are looked at while following a run */
#define DRAIN_QUIET 1.5  /* seconds of silence that end a run whose trainer cannot be seen */
#define DRAIN_MAX 60.0   /* the longest wait for a trainer to exit once its row says it ended */
#define QUEUE_HINT_S 30.0 /* still queued after this long: say what the worker needs */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL); /* a signal cuts it short: Ctrl-C is seen at once */
}

/* Which file a path names now (exists = false when none or it cannot be seen), so the log of
 * this run is told from the one before it (the worker moves the old log.txt to
 * logs/<n>_log.txt when it starts a run). */
static void log_identity(const char *path, struct save_stamp *id)
{
	struct err ignore;
	memset(id, 0, sizeof *id);
	if (path)
		save_stamp(path, id, &ignore);
}

static bool log_is_new(const char *path, const struct save_stamp *before)
{
	struct save_stamp now;
	log_identity(path, &now);
	return now.exists && !save_stamp_same_file(&now, before);
}

static bool status_ended(const char *s)
{
	return s[0] && strcmp(s, "queued") != 0 && strcmp(s, "running") != 0;
}

/* How a followed run of a web UI job went. */
struct ui_run {
	bool taken;            /* the worker took the job from the queue */
	bool interrupted;      /* the user stopped the loop */
	char status[16];       /* the status the run ended with */
	char info[256];
};

/* Shows what the run's log holds now and copies it to the try's log, feeding the probe; true
 * when something came. */
static bool take_output(int fd, const struct retry_try *t, struct retry_probe *probe,
			const struct retry_sinks *sinks)
{
	char buf[65536];
	ssize_t n;
	bool got = false;
	while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
		retry_write_all(STDOUT_FILENO, buf, (size_t)n);
		if (retry_write_all(t->logfd, buf, (size_t)n) != 0)
			retry_tell_note(sinks, t, _("cannot write the run's log"));
		retry_probe_feed(probe, buf, (size_t)n);
		got = true;
	}
	return got;
}

/* The run went back to the queue (its return_to_queue flag) or started again (a new log.txt):
 * it ends without a verdict and the next one is the try, so its copy and its probe start over;
 * the log read so far (*cur, or the one at the path now) is not this run's any more. */
static void start_over(const struct retry_try *t, struct retry_probe *probe,
		       const struct retry_sinks *sinks, const char *log, int *fd,
		       struct save_stamp *prev, const struct save_stamp *cur)
{
	retry_tell_note(sinks, t, _("the job went back to the queue; following its next run."));
	if (*fd >= 0) {
		*prev = *cur;
		close(*fd);
		*fd = -1;
	} else {
		log_identity(log, prev);
	}
	if (ftruncate(t->logfd, 0) != 0 || lseek(t->logfd, 0, SEEK_SET) != 0)
		retry_tell_note(sinks, t, _("cannot write the run's log"));
	retry_probe_init(probe, t->job, probe->steps, probe->prev_fail);
}

/* Follows one queued run: see the top of the file. */
static int follow(struct retry_aitk *ra, const struct retry_try *t, struct retry_probe *probe,
		  const struct retry_sinks *sinks, volatile sig_atomic_t *stop,
		  const struct save_stamp *before, struct ui_run *ur, struct err *e)
{
	const char *log = source_log(t->src);
	struct save_stamp prev = *before; /* the log that is not this run's */
	struct save_stamp cur = { 0 };    /* the log being read */
	double started = retry_now(), hint_after = QUEUE_HINT_S;
	const char *hs = getenv("OOMFIX_QUEUE_HINT_MS"); /* a test hook: tests cannot wait 30 s */
	if (hs && *hs && atof(hs) > 0)
		hint_after = atof(hs) / 1000;
	bool hinted = false, asked = false;
	int fd = -1, rc = ERR_OK;
	double ended_at = 0, last_data = retry_now();
	long long pid = -1;
	sig_atomic_t seen = *stop;
	/* what the run holds on the card, phase by phase (SPEC §12.2): the try's copy of the log
	 * gives the phases, the job's row the trainer's pid */
	struct diag_job_info info = { t->job ? t->job->name : NULL, t->job ? (int)t->job->kind : 0,
				      t->job && job_is_conservative(t->job) ? 1 : 0 };
	struct gpuwatch *gw = t->job ? gpuwatch_new(t->log, 0, &info) : NULL;

	for (;;) {
		if (*stop != seen) {
			ur->interrupted = true;
			break;
		}
		struct aitk_status as;
		if ((rc = aitkdb_status(ra->db, ra->name, &as, e)) != ERR_OK)
			break;
		if (!ur->taken && !hinted && retry_now() - started > hint_after) {
			hinted = true;
			char text[512];
			snprintf(text, sizeof text, _("Still queued after %.0f s: the web UI's worker takes "
						      "queued jobs only while the UI runs and the job's "
						      "GPU queue is started."), hint_after);
			retry_tell_waiting(sinks, t, text);
			snprintf(text, sizeof text, _("still queued after %.0f s: the web UI's worker takes "
						      "queued jobs only while the UI runs and the job's "
						      "GPU queue is started (oomfix starts it when it "
						      "queues the job)."), hint_after);
			retry_tell_note(sinks, t, text);
		}
		if (!ur->taken && strcmp(as.status, "queued") != 0) {
			ur->taken = true;
			retry_tell_taken(sinks, t, as.status);
		} else if (ended_at == 0 && ((ur->taken && !strcmp(as.status, "queued")) ||
					     (fd >= 0 && log_is_new(log, &cur)))) {
			start_over(t, probe, sinks, log, &fd, &prev, &cur);
			ur->taken = strcmp(as.status, "queued") != 0;
			gpuwatch_free(&gw); /* that run is not the try's */
			gw = t->job ? gpuwatch_new(t->log, 0, &info) : NULL;
		}
		if (ur->taken && fd < 0 && log_is_new(log, &prev)) {
			fd = open(log, O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				save_stamp_fd(fd, &cur); /* failing, cur stays as it was */
		}
		bool gone = false;
		if (ur->taken && status_ended(as.status)) {
			if (ended_at == 0) {
				ended_at = retry_now();
				pid = as.pid;
				snprintf(ur->status, sizeof ur->status, "%s", as.status);
				snprintf(ur->info, sizeof ur->info, "%s", as.info);
			}
			/* The trainer writes its status before its last lines (run.py prints the
			 * traceback after on_error): read on until it has exited. */
			bool alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
			double quiet = retry_now() - last_data;
			gone = (!alive && quiet >= (pid > 0 ? 0.2 : DRAIN_QUIET)) ||
			       retry_now() - ended_at > DRAIN_MAX;
		}
		/* Everything the log holds now, after `gone` was decided: nothing written before the
		 * trainer exited is missed. */
		if (take_output(fd, t, probe, sinks))
			last_data = retry_now();
		if (ur->taken && as.pid > 0)
			gpuwatch_set_root(gw, (pid_t)as.pid);
		gpuwatch_tick(gw);
		if (probe->state != RETRY_PROBE_WATCHING && !asked && !status_ended(as.status)) {
			/* the run goes on a little until the trainer sees the flag */
			bool stopping;
			retry_say_probe(sinks, t, probe);
			if ((rc = aitkdb_request_stop(ra->db, ra->name, &stopping, e)) != ERR_OK)
				break;
			asked = true;
		}
		if (gone)
			break;
		sleep_ms(POLL_MS);
	}
	if (fd >= 0)
		close(fd);
	if (rc == ERR_OK && ur->taken)
		retry_keep_peaks(&gw, t, !strcmp(ur->status, "completed"), sinks);
	gpuwatch_free(&gw);
	return rc;
}

/* Queues the job (unless it is queued already, by the UI or by hand: then it is left in its
 * place). *queued_here: oomfix queued it. */
static int queue(struct retry_aitk *ra, const struct retry_try *t, const struct retry_sinks *sinks,
		 bool *queued_here, struct err *e)
{
	const struct aitk_job *row = source_row(t->src);
	char line[512], *was = NULL;
	*queued_here = !(row && row->status && !strcmp(row->status, "queued"));
	int rc = ERR_OK;
	if (*queued_here && (rc = aitkdb_queue(ra->db, ra->name, &was, e)) != ERR_OK) {
		unlink(t->log); /* nothing ran: no log */
		return rc;
	}
	if (*queued_here && aitkdb_was_queued(was))
		*queued_here = false; /* queued meanwhile */
	if (!*queued_here)
		snprintf(line, sizeof line, _("%s is queued already; waiting for the web UI's worker."),
			 source_label(t->src));
	else
		snprintf(line, sizeof line, _("%s queued (it was %s); waiting for the web UI's worker."),
			 source_label(t->src), was ? was : "?");
	free(was);
	retry_tell_note(sinks, t, line);
	return ERR_OK;
}

/* The end of an interrupted try, by where the job was left. */
static void interrupted(const struct retry_try *t, const struct ui_run *ur, bool queued_here,
			struct retry_try_result *out)
{
	const char *label = source_label(t->src);
	out->end = RETRY_RAN_INTERRUPTED;
	if (!ur->taken && queued_here)
		snprintf(out->head, sizeof out->head, _("interrupted. %s is still queued (oomfix queued "
							"it): the web UI's worker will run it unless "
							"you remove it from the queue in the UI."), label);
	else if (!ur->taken)
		snprintf(out->head, sizeof out->head, _("interrupted. %s is still queued, as it was "
							"before."), label);
	else if (!ur->status[0])
		snprintf(out->head, sizeof out->head, _("interrupted. %s goes on running in the web UI; "
							"oomfix leaves it alone (stop it there if you "
							"want)."), label);
	else
		snprintf(out->head, sizeof out->head, "%s", _("interrupted."));
	snprintf(out->text, sizeof out->text, "%s",
		 !ur->taken ? _("Interrupted; the job is still queued in the web UI.")
		 : !ur->status[0] ? _("Interrupted; the job goes on running in the web UI.")
				  : _("Interrupted."));
}

static int aitk_run(void *rn, const struct retry_try *t, struct retry_probe *probe,
		    const struct retry_sinks *sinks, volatile sig_atomic_t *stop,
		    struct retry_try_result *out, struct err *e)
{
	struct retry_aitk *ra = rn;
	memset(out, 0, sizeof *out);
	out->step = -1;
	struct save_stamp before;
	log_identity(source_log(t->src), &before);
	bool queued_here;
	int rc = queue(ra, t, sinks, &queued_here, e);
	if (rc)
		return rc;
	struct ui_run ur;
	memset(&ur, 0, sizeof ur);
	if ((rc = follow(ra, t, probe, sinks, stop, &before, &ur, e)) != ERR_OK)
		return rc;
	out->step = probe->step;
	if (ur.interrupted) {
		interrupted(t, &ur, queued_here, out);
	} else if (!strcmp(ur.status, "stopped") && probe->state == RETRY_PROBE_WATCHING) {
		out->end = RETRY_RAN_STOPPED;
		snprintf(out->head, sizeof out->head, _("try %d: the job was stopped in the web UI; the "
							"job is as the last try left it."), t->index);
		snprintf(out->text, sizeof out->text, "%s", _("The job was stopped in the web UI; it is "
							      "as the last try left it."));
	} else {
		/* stopped for the probe, or ended by itself: its log decides */
		out->exited_zero = !strcmp(ur.status, "completed");
		if (!out->exited_zero && strcmp(ur.status, "stopped") != 0 && ur.info[0]) {
			/* the first sentence of the trainer's exception text is enough here */
			char *dot = strstr(ur.info, ". "), line[512];
			if (dot)
				dot[1] = 0;
			snprintf(line, sizeof line, _("try %d ended with status %s: %s"), t->index,
				 ur.status, ur.info);
			retry_tell_note(sinks, t, line);
		}
	}
	return ERR_OK;
}

const struct retry_runner_ops retry_aitk_ops = { .run = aitk_run };
