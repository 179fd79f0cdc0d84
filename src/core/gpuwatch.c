/* gpuwatch.c — the trainer's memory on the card while a run is followed; see gpuwatch.h.
 *
 * One nvidia-smi at a time, never waited for: it is started with its output on a non-blocking
 * pipe, read as it comes, and reaped with WNOHANG. The first query reads the cards (their
 * capacity, to tell which card a process is on), every later one the compute processes. A sample
 * counts for a phase only when the log showed that phase both when the query started and when
 * its answer came: a sample taken across a change of phase is dropped rather than misfiled.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oomfix/gpuwatch.h"
#include "oomfix/measure.h"

#define POLL_MS 1000            /* at most one query a second (SPEC §12.2) */
#define QUERY_LIMIT_MS 10000    /* a query that has not answered by then is stopped */
#define OUT_MAX (256u * 1024)   /* nvidia-smi's answer beyond this is not read */
#define MAX_FAILS 3             /* queries in a row that fail: nvidia-smi is not asked again */
#define MAX_KNOWN 32
#define MAX_FDS 4096            /* a process's descriptors looked at for the log */
#define READ_MAX (4u << 20)     /* bytes of the log read a tick */

struct gpuwatch {
	char *log;
	pid_t root;
	struct diag_state *ds;
	struct diag_result *res;
	enum diag_phase phase;        /* the log's phase at the last read */
	bool off;                     /* no nvidia-smi, or the measurements are off */
	int fails;
	/* the query running */
	pid_t child;
	int fd;
	bool cards_query;             /* it asks for the cards, not the processes */
	enum diag_phase phase_at_start;
	long long started_ms, last_ms;
	char *out;
	size_t len;
	char *cards;                  /* the first answer: the cards */
	/* what was seen */
	unsigned answers;
	int64_t peak[EST_NPHASES];
	int64_t card;                 /* the capacity of the card the trainer was seen on */
	pid_t trainer[MAX_KNOWN];     /* pids found to be the trainer's */
	size_t ntrainer;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool est_phase_of(enum diag_phase d, enum est_phase *p)
{
	switch (d) {
	case DIAG_P_MODEL_LOAD: *p = EST_MODEL_LOAD; return true;
	case DIAG_P_CACHING: *p = EST_CACHING; return true;
	case DIAG_P_BASELINE_SAMPLING: *p = EST_BASELINE_SAMPLE; return true;
	case DIAG_P_TRAINING: *p = EST_TRAINING; return true;
	case DIAG_P_SAMPLING: *p = EST_SAMPLING; return true;
	default: return false;
	}
}

struct gpuwatch *gpuwatch_new(const char *log, pid_t root, const struct diag_job_info *j)
{
	struct gpuwatch *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->log = strdup(log);
	w->res = calloc(1, sizeof *w->res);
	struct err e;
	err_clear(&e);
	if (!w->log || !w->res || diag_state_new(j, &w->ds, &e) != ERR_OK) {
		gpuwatch_free(&w);
		return NULL;
	}
	w->root = root;
	w->fd = -1;
	w->child = -1;
	w->last_ms = now_ms() - POLL_MS;
	for (int p = 0; p < EST_NPHASES; p++)
		w->peak[p] = -1;
	char path[4096];
	w->off = !measure_store_path(path, sizeof path);
	return w;
}

/* The log's phase now (the bytes appended since the last read only, READ_MAX at a time: a long
 * log opened mid-run is caught up with over several ticks, its phase unknown until then). */
static enum diag_phase read_phase(struct gpuwatch *w)
{
	enum diag_follow what;
	struct err e;
	err_clear(&e);
	if (diag_state_follow(w->ds, w->log, READ_MAX, &what, &e) == ERR_OK && what != DIAG_FOLLOW_SAME &&
	    diag_state_result(w->ds, w->res, &e) == ERR_OK)
		w->phase = w->res->now_phase;
	return diag_state_pending(w->ds) ? DIAG_P_NONE : w->phase;
}

static void start_query(struct gpuwatch *w)
{
	int fd[2];
	if (pipe(fd))
		return;
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(fd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		close(fd[0]);
		close(fd[1]);
		if (w->cards_query)
			execlp("nvidia-smi", "nvidia-smi", "--query-gpu=index,uuid,name,memory.total,memory.used",
			       "--format=csv,noheader,nounits", (char *)NULL);
		else
			execlp("nvidia-smi", "nvidia-smi", "--query-compute-apps=gpu_uuid,pid,used_memory",
			       "--format=csv,noheader,nounits", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) | O_NONBLOCK);
	fcntl(fd[0], F_SETFD, FD_CLOEXEC);
	w->child = pid;
	w->fd = fd[0];
	w->len = 0;
	w->started_ms = w->last_ms = now_ms();
}

static void end_query(struct gpuwatch *w, bool kill_it)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->child > 0) {
		if (kill_it)
			kill(w->child, SIGKILL);
		while (waitpid(w->child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	w->child = -1;
}

/* True when pid descends from root (or is it). */
static bool descends(pid_t pid, pid_t root)
{
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		if (pid == root)
			return true;
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			return false;
		buf[n] = 0;
		const char *rp = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
		char state;
		long ppid;
		if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2)
			return false;
		pid = (pid_t)ppid;
	}
	return false;
}

/* True when process pid has the file (dev, ino) open. */
static bool has_open(pid_t pid, dev_t dev, ino_t ino)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
	DIR *d = opendir(path);
	if (!d)
		return false;
	bool found = false;
	struct dirent *de;
	for (int i = 0; !found && i < MAX_FDS && (de = readdir(d)); i++) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && st.st_dev == dev && st.st_ino == ino)
			found = true;
	}
	closedir(d);
	return found;
}

static bool is_trainer(struct gpuwatch *w, pid_t pid, const struct stat *logst)
{
	for (size_t i = 0; i < w->ntrainer; i++)
		if (w->trainer[i] == pid)
			return true;
	bool yes = (w->root > 0 && descends(pid, w->root)) ||
		   (logst && has_open(pid, logst->st_dev, logst->st_ino));
	if (yes && w->ntrainer < MAX_KNOWN)
		w->trainer[w->ntrainer++] = pid;
	return yes;
}

/* A processes' answer: the trainer's bytes on the card it holds most of, for the phase. */
static void take_sample(struct gpuwatch *w)
{
	struct est_gpus g;
	struct err e;
	err_clear(&e);
	if (estimate_parse_smi(w->cards, w->out, &g, &e) != ERR_OK)
		return;
	w->answers++;
	enum est_phase p;
	enum diag_phase now = read_phase(w);
	if (now != w->phase_at_start || !est_phase_of(now, &p))
		return; /* across a change of phase, or in none the estimate has */
	struct stat logst;
	bool have_log = stat(w->log, &logst) == 0;
	for (size_t c = 0; c < g.n; c++) {
		int64_t mine = 0;
		for (size_t a = 0; a < g.gpu[c].napps; a++) {
			long long pid = g.gpu[c].app[a].pid;
			if (pid > 1 && pid <= INT_MAX &&
			    is_trainer(w, (pid_t)pid, have_log ? &logst : NULL))
				mine += g.gpu[c].app[a].bytes;
		}
		if (mine > w->peak[p]) {
			w->peak[p] = mine;
			w->card = g.gpu[c].total;
		}
	}
}

/* The query has ended: its answer read to the end. */
static void query_done(struct gpuwatch *w)
{
	int st = 0;
	pid_t r;
	while ((r = waitpid(w->child, &st, 0)) < 0 && errno == EINTR)
		;
	close(w->fd);
	w->fd = -1;
	w->child = -1;
	bool ok = r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && w->out;
	if (r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		w->off = true; /* not installed */
		return;
	}
	if (!ok) {
		if (++w->fails >= MAX_FAILS)
			w->off = true;
		return;
	}
	w->out[w->len] = 0;
	if (w->cards_query) {
		struct est_gpus g;
		struct err e;
		err_clear(&e);
		if (estimate_parse_smi(w->out, NULL, &g, &e) == ERR_OK && g.n) {
			free(w->cards);
			w->cards = w->out;
			w->out = NULL;
			w->fails = 0;
		} else if (++w->fails >= MAX_FAILS) {
			w->off = true;
		}
		return;
	}
	w->fails = 0;
	take_sample(w);
}

void gpuwatch_tick(struct gpuwatch *w)
{
	if (!w || w->off)
		return;
	if (w->child > 0) {
		for (;;) {
			if (!w->out) {
				w->out = malloc(OUT_MAX + 1);
				if (!w->out) {
					end_query(w, true);
					return;
				}
			}
			char drop[4096];
			bool full = w->len >= OUT_MAX;
			ssize_t n = full ? read(w->fd, drop, sizeof drop)
					 : read(w->fd, w->out + w->len, OUT_MAX - w->len);
			if (n > 0) {
				if (!full)
					w->len += (size_t)n;
				continue;
			}
			if (n == 0) {
				query_done(w);
				return;
			}
			if (errno == EINTR)
				continue;
			break; /* EAGAIN: the rest comes later */
		}
		if (now_ms() - w->started_ms > QUERY_LIMIT_MS) {
			end_query(w, true);
			if (++w->fails >= MAX_FAILS)
				w->off = true;
		}
		return;
	}
	if (now_ms() - w->last_ms < POLL_MS)
		return;
	w->cards_query = !w->cards;
	w->phase_at_start = read_phase(w);
	start_query(w);
}

void gpuwatch_set_root(struct gpuwatch *w, pid_t root)
{
	if (w && root > 0)
		w->root = root;
}

int64_t gpuwatch_peak(const struct gpuwatch *w, enum est_phase p)
{
	return w && p < EST_NPHASES ? w->peak[p] : -1;
}

unsigned gpuwatch_answers(const struct gpuwatch *w)
{
	return w ? w->answers : 0;
}

int gpuwatch_record(struct gpuwatch *w, const struct job *j, bool ended_well)
{
	if (!w || !j)
		return 0;
	if (w->child > 0)
		end_query(w, true);
	for (int i = 0; i < 4096 && read_phase(w) == DIAG_P_NONE && diag_state_pending(w->ds); i++)
		; /* to the end of the log (16 GiB at most) */
	const struct diag_result *r = w->res;
	if (diag_state_offset(w->ds) == 0)
		return 0;
	bool failed = r->oom && !r->survived;
	bool finished = (ended_well || r->run_ended) && !failed && r->other == DIAG_O_NONE;
	enum est_phase end = EST_NPHASES, oomp = EST_NPHASES;
	if (!est_phase_of(r->now_phase, &end))
		end = EST_NPHASES;
	if (!failed || !est_phase_of(r->phase, &oomp))
		oomp = EST_NPHASES;
	struct est_input in;
	est_input_of(j, &in);
	int kept = 0;
	for (int p = 0; p < EST_NPHASES; p++) {
		if (w->peak[p] <= 0 || p == (int)oomp)
			continue; /* where it ran out of memory the message's lower bound says more */
		/* a phase the run left is a peak; the one it stopped in, and training that did not
		 * finish or that survived out-of-memory skips, only a lower bound */
		bool lower = finished ? p == EST_TRAINING && r->oom
				      : p == (int)end || p == EST_TRAINING;
		if (measure_record(&in, w->card, (enum est_phase)p, w->peak[p],
				   lower ? MEASURE_LOWER : MEASURE_PEAK, w->log) == ERR_OK)
			kept++;
	}
	return kept;
}

void gpuwatch_free(struct gpuwatch **pw)
{
	if (!pw || !*pw)
		return;
	struct gpuwatch *w = *pw;
	if (w->child > 0)
		end_query(w, true);
	else if (w->fd >= 0)
		close(w->fd);
	diag_state_free(&w->ds);
	free(w->res);
	free(w->out);
	free(w->cards);
	free(w->log);
	free(w);
	*pw = NULL;
}
