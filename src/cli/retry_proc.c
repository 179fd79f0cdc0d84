/* retry_proc.c — the runner for a file job: each try runs CMD in a process group of its own, with
 * its output shown and written to the try's log, fed to the probe as it comes. Stopping (Ctrl-C,
 * or the probe has decided) escalates: SIGINT (the trainer stops cleanly), then SIGTERM after the
 * grace period, then SIGKILL; nothing of the try outlives it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/gpuwatch.h"
#include "oomfix/i18n.h"
#include "retry_cli.h"

/* Sends `sig` to the whole process group of the try. */
static void signal_group(pid_t pgid, int sig)
{
	if (kill(-pgid, sig) != 0 && errno == ESRCH)
		return;
}

static bool group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* Waits at most `secs` for every process of the group to be gone. */
static void wait_group_gone(pid_t pgid, double secs)
{
	double until = retry_now() + secs;
	while (group_alive(pgid) && retry_now() < until) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* Starts CMD in a new process group with stdout and stderr into a pipe and stdin from
 * /dev/null (it must never read the terminal oomfix is reading). Returns the child's pid, or -1
 * with *exec_errno set when CMD could not be started. */
static pid_t spawn(char **cmd, int *out_fd, int *exec_errno)
{
	int p[2], ep[2];
	*exec_errno = 0;
	if (pipe2(p, O_CLOEXEC) != 0)
		return *exec_errno = errno, -1;
	if (pipe2(ep, O_CLOEXEC) != 0) {
		*exec_errno = errno;
		close(p[0]), close(p[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		*exec_errno = errno;
		close(p[0]), close(p[1]), close(ep[0]), close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		int dn = open("/dev/null", O_RDONLY);
		if (dn >= 0)
			dup2(dn, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(cmd[0], cmd);
		int err = errno;
		if (write(ep[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: whichever runs first, the group exists before a signal */
	close(p[1]);
	close(ep[1]);
	int err = 0;
	ssize_t r;
	while ((r = read(ep[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (r == (ssize_t)sizeof err) {
		*exec_errno = err;
		waitpid(pid, NULL, 0);
		close(p[0]);
		return -1;
	}
	*out_fd = p[0];
	return pid;
}

/* How far stopping the group has gone. */
struct stopping {
	pid_t pid;
	int stage;        /* 0 running, 1 SIGINT sent, 2 SIGTERM sent, 3 SIGKILL sent */
	double deadline;
	double grace;
};

static void stop_begin(struct stopping *st)
{
	signal_group(st->pid, SIGINT);
	st->stage = 1;
	st->deadline = retry_now() + st->grace;
}

static void stop_escalate(struct stopping *st, bool reaped)
{
	if (st->stage == 0 || retry_now() < st->deadline || (reaped && !group_alive(st->pid)))
		return;
	if (st->stage == 1) {
		signal_group(st->pid, SIGTERM);
		st->stage = 2;
		st->deadline = retry_now() + st->grace;
	} else if (st->stage == 2) {
		signal_group(st->pid, SIGKILL);
		st->stage = 3;
	}
}

static int proc_run(void *rn, const struct retry_try *t, struct retry_probe *probe,
		    const struct retry_sinks *sinks, volatile sig_atomic_t *stop,
		    struct retry_try_result *out, struct err *e)
{
	const struct retry_proc *rp = rn;
	memset(out, 0, sizeof *out);
	out->step = -1;
	int fd, exec_errno;
	pid_t pid = spawn(rp->cmd, &fd, &exec_errno);
	if (pid < 0) {
		out->end = RETRY_RAN_NOT_STARTED;
		snprintf(out->head, sizeof out->head, _("cannot run %s: %s"), rp->cmd[0],
			 strerror(exec_errno));
		snprintf(out->text, sizeof out->text, _("Cannot run %s: %s."), rp->cmd[0],
			 strerror(exec_errno));
		return ERR_OK;
	}
	struct stopping st = { pid, 0, 0, rp->grace };
	/* what the run holds on the card, phase by phase (SPEC §12.2) */
	struct diag_job_info info = { t->job ? t->job->name : NULL, t->job ? (int)t->job->kind : 0,
				      t->job && job_is_conservative(t->job) ? 1 : 0 };
	struct gpuwatch *gw = t->job ? gpuwatch_new(t->log, pid, &info) : NULL;
	sig_atomic_t seen = *stop;
	bool eof = false, reaped = false, interrupted = false;
	double reaped_at = 0;
	int wst = 0;
	char buf[65536];

	for (;;) {
		if (*stop != seen) {
			seen = *stop;
			interrupted = true;
			if (st.stage == 0) {
				retry_tell_note(sinks, t, _("stopping the run (SIGINT to its process "
							   "group)..."));
				stop_begin(&st);
			} else {
				st.deadline = retry_now(); /* another Ctrl-C: no more waiting */
			}
		}
		stop_escalate(&st, reaped);
		gpuwatch_tick(gw);
		if (!reaped && waitpid(pid, &wst, WNOHANG) == pid) {
			reaped = true;
			reaped_at = retry_now();
		}
		/* Done when the output is closed and the child is gone; a grandchild that keeps the
		 * pipe open gets a second to finish, then the group is stopped below. */
		if (reaped && (eof || retry_now() - reaped_at > 1.0))
			break;
		if (eof && !reaped) {
			struct timespec ts = { 0, 50 * 1000000L };
			nanosleep(&ts, NULL);
			continue;
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int pr = poll(&pf, 1, 100);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = true;
			continue;
		}
		retry_write_all(STDOUT_FILENO, buf, (size_t)n); /* a closed terminal does not stop the run */
		if (retry_write_all(t->logfd, buf, (size_t)n) != 0 && !interrupted)
			retry_tell_note(sinks, t, _("cannot write the run's log"));
		if (retry_probe_feed(probe, buf, (size_t)n) != RETRY_PROBE_WATCHING && st.stage == 0) {
			retry_say_probe(sinks, t, probe);
			stop_begin(&st);
		}
	}
	close(fd);
	if (!reaped)
		waitpid(pid, &wst, 0);
	/* Nothing of the try may outlive it: whatever is left in its group is stopped too, and
	 * oomfix returns only once the group is gone (a killed process lingers until reaped). */
	if (group_alive(pid) && st.stage < 3) {
		signal_group(pid, SIGTERM);
		wait_group_gone(pid, rp->grace);
	}
	if (group_alive(pid)) {
		signal_group(pid, SIGKILL);
		wait_group_gone(pid, 5.0);
	}
	retry_keep_peaks(&gw, t, st.stage == 0 && WIFEXITED(wst) && WEXITSTATUS(wst) == 0, sinks);
	out->step = probe->step;
	out->exited_zero = WIFEXITED(wst) && WEXITSTATUS(wst) == 0;
	if (interrupted) {
		out->end = RETRY_RAN_INTERRUPTED;
		snprintf(out->head, sizeof out->head, _("try %d: interrupted; the run was stopped and the "
							"job is as the last try left it."), t->index);
		snprintf(out->text, sizeof out->text, "%s", _("Interrupted: the run was stopped, and the "
							      "job is as the last try left it."));
	}
	return ERR_OK;
}

const struct retry_runner_ops retry_proc_ops = { .run = proc_run };
