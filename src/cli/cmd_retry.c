/* cmd_retry.c — `oomfix retry [--max-tries N] [--probe STEPS] [--grace SECONDS] JOB -- CMD...`
 * and `oomfix retry aitk:NAME`: the options, the signals, and the wiring of the retry loop
 * (oomfix/retry.h, src/core/retry.c) to a runner (retry_proc.c for a file job's command,
 * retry_aitk.c for a web UI job) and its sinks (retry_sinks.c: the sentences on stderr, and the
 * JSON events of retry_events.h with --events FD).
 *
 * Exit status: 0 when a run finishes (or passes the probe), 65 when a run fails for a reason that
 * is not GPU memory, 69 when the verdict is E, when no fix acts on the failing phase, when CMD
 * cannot be run, or after N tries, 130 on Ctrl-C (the child's group gets SIGINT, then SIGTERM
 * after the grace period, then SIGKILL; nothing of it is left running).
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oomfix/aitkdb.h"
#include "oomfix/err.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/source.h"
#include "cli.h"
#include "retry_cli.h"

#define DEFAULT_GRACE 10.0

static volatile sig_atomic_t stop_requests; /* Ctrl-C, SIGTERM, SIGHUP received */

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requests++;
}

static void help(FILE *fp)
{
	fputs(_("Usage: oomfix retry [--max-tries N] [--probe STEPS] [--grace SECONDS]\n"
		"                    [--log LOG] [--events FD] JOB -- CMD [ARG...]\n"
		"       oomfix retry [--aitk DIR] [--max-tries N] [--probe STEPS] [--log LOG]\n"
		"                    [--events FD] aitk:NAME\n"
		"\n"
		"Runs CMD (for example: python run.py JOB) until the job fits on the card. When\n"
		"a run dies of GPU out-of-memory, the first fix for that failure is applied to\n"
		"JOB (only a fix that acts on the phase that failed), saved (JOB~ keeps the\n"
		"previous version, the journal JOB.oomfix.md names the try), and CMD runs\n"
		"again. Each run's output is shown and written to JOB.oomfix-runs/<n>.log; the\n"
		"job as it was before the first fix is kept as JOB.oomfix-runs/0.yaml\n"
		"(oomfix restore --first JOB puts it back).\n"
		"\n"
		"A web UI job (aitk:NAME) takes no CMD: oomfix queues it as the UI's start button\n"
		"does, follows the UI's worker through the database and shows the run's log.txt\n"
		"(a copy is kept in its run folder, job_config.json.oomfix-runs/<n>.log); fixes\n"
		"are saved into the database. The probe stops a run with the job's stop flag, as\n"
		"the UI's stop button does. Ctrl-C leaves the job alone in the UI. A job that is\n"
		"running is refused (75): oomfix starts the runs itself.\n"
		"\n"
		"  --max-tries N     stop after N runs (default 6)\n"
		"  --probe STEPS     a run that gets STEPS training steps past the step where\n"
		"                    the previous one failed, and through a preview sampling\n"
		"                    round during training (not the baseline sample), fits: it\n"
		"                    is stopped and the job is kept. An out-of-memory skip in\n"
		"                    it is a failure.\n"
		"  --grace SECONDS   how long a stopped run gets after SIGINT before SIGTERM, and\n"
		"                    after SIGTERM before SIGKILL (default 10)\n"
		"  --log LOG         LOG is a failed run of JOB as it is now: apply its fix\n"
		"                    before the first run instead of repeating that run\n"
		"  --events FD       also write each try, verdict, fix and the end as one JSON\n"
		"                    object per line to file descriptor FD (for programs)\n"
		"  --vram GB         the card, for the estimate each try prints (as in oomfix\n"
		"                    estimate); without it nvidia-smi, else the first OOM\n"
		"                    message. With a card known, a step fix (num_frames,\n"
		"                    drop_largest_bucket) goes down to the first rung that fits\n"
		"\n"
		"Exit status: 0 a run finished or passed the probe; 65 a run failed for a\n"
		"reason that is not GPU memory, or the job is invalid; 69 the worker is at\n"
		"fault (verdict E), no fix acts on the failing phase, CMD cannot be run, or N\n"
		"runs did not fit; 64 usage; 66 cannot open JOB; 75 JOB changed on disk while a\n"
		"run went on; 130 interrupted.\n"),
	      fp);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "oomfix retry: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	fprintf(stderr, "%s\n", _("Try 'oomfix retry --help'."));
	return ERR_USAGE;
}

static int open_ui_db(struct aitk_db **db)
{
	struct err e;
	err_clear(&e);
	char *root = NULL;
	int rc = aitkdb_find(source_aitk_dir(), &root, &e);
	if (rc == ERR_OK)
		rc = aitkdb_open(root, db, &e);
	free(root);
	if (rc)
		err_print(&e, stderr);
	return rc;
}

/* Runs the loop with the runner for the job's kind, telling people and (with --events) the
 * program reading `events`. */
static int run_loop(const struct retry_opts *o, char **cmd, double grace, FILE *events)
{
	struct retry_text said = { 0 };
	struct retry_sink sink[2] = { { &retry_text_ops, &said }, { &retry_json_ops, events } };
	struct retry_sinks sinks = { sink, events ? 2 : 1 };
	int status;
	if (cmd) {
		struct retry_proc rp = { cmd, grace };
		status = retry_run(o, &retry_proc_ops, &rp, &sinks);
	} else {
		struct retry_aitk ra = { NULL, o->job + strlen(SOURCE_AITK_PREFIX) };
		status = open_ui_db(&ra.db);
		if (status == ERR_OK)
			status = retry_run(o, &retry_aitk_ops, &ra, &sinks);
		aitkdb_close(&ra.db);
	}
	retry_text_free(&said);
	return status;
}

/* --events FD: a copy of the descriptor that the runs never inherit, into *events (one given
 * before is closed). 0, or the usage error. */
static int open_events(const char *arg, FILE **events)
{
	char *end;
	long fd = strtol(arg, &end, 10);
	if (*end || fd < 1 || fd > 1000 || fd == STDIN_FILENO)
		return usage_error(_("--events wants an open file descriptor, not '%s'"), arg);
	if (*events)
		fclose(*events);
	int dfd = fcntl((int)fd, F_DUPFD_CLOEXEC, 3); /* the runs never inherit it */
	if (dfd < 0 || !(*events = fdopen(dfd, "w"))) {
		if (dfd >= 0)
			close(dfd);
		return usage_error(_("--events wants an open file descriptor, not '%s'"), arg);
	}
	if (fd > STDERR_FILENO)
		close((int)fd);
	return 0;
}

/* Reads the options and JOB (-- CMD) into *r, *grace and *events: -1 to go on, with optind at
 * CMD's "--", else the exit status (help, usage). */
static int retry_options(int argc, char **argv, struct retry_opts *r, double *grace,
			 FILE **events)
{
	enum { O_PROBE = 256, O_GRACE, O_EVENTS, O_LOG, O_VRAM };
	static const struct option opts[] = {
		{ "max-tries", required_argument, NULL, 'n' },
		{ "probe", required_argument, NULL, O_PROBE },
		{ "grace", required_argument, NULL, O_GRACE },
		{ "events", required_argument, NULL, O_EVENTS },
		{ "log", required_argument, NULL, O_LOG },
		{ "vram", required_argument, NULL, O_VRAM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	char *end;
	optind = 1;
	opterr = 0;
	/* '+': options end at JOB, so CMD's own options are never read as ours */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			r->max_tries = (int)strtol(optarg, &end, 10);
			if (*end || r->max_tries < 1 || r->max_tries > 1000)
				return usage_error(_("--max-tries wants a number from 1 to 1000, not '%s'"),
						   optarg);
			break;
		case O_PROBE:
			r->probe = strtoll(optarg, &end, 10);
			if (*end || r->probe < 1)
				return usage_error(_("--probe wants a positive number of steps, not '%s'"),
						   optarg);
			break;
		case O_GRACE:
			*grace = strtod(optarg, &end);
			if (*end || !(*grace >= 0 && *grace <= 3600))
				return usage_error(_("--grace wants seconds from 0 to 3600, not '%s'"), optarg);
			break;
		case O_LOG:
			r->from_log = optarg;
			break;
		case O_VRAM: {
			struct err ve;
			err_clear(&ve);
			if (estimate_parse_vram(optarg, &r->card, NULL, NULL, &ve) != ERR_OK) {
				fprintf(stderr, "oomfix retry: %s\n", ve.msg);
				return ERR_USAGE;
			}
			break;
		}
		case O_EVENTS:
			if ((rc = open_events(optarg, events)) != 0)
				return rc;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return usage_error(_("unknown or incomplete option '%s'"), argv[optind - 1]);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		return usage_error("%s", _("expected JOB -- CMD [ARG...], or aitk:NAME"));
	r->job = argv[optind++];
	bool ui = source_is_aitk_arg(r->job);
	if (ui && optind < argc)
		/* the web UI's worker runs the job: there is nothing to run here */
		return usage_error("%s", _("a web UI job (aitk:NAME) takes no CMD: its runs are "
					   "started by the UI's worker"));
	if (!ui && (optind >= argc || strcmp(argv[optind], "--") != 0 || optind + 1 >= argc))
		return usage_error("%s", _("expected JOB -- CMD [ARG...], or aitk:NAME"));
	return -1;
}

int cmd_retry(int argc, char **argv)
{
	struct retry_opts r = { .max_tries = RETRY_DEFAULT_TRIES, .stop = &stop_requests };
	double grace = DEFAULT_GRACE;
	FILE *events = NULL; /* NULL: no events asked for */
	int status = retry_options(argc, argv, &r, &grace, &events);
	if (status >= 0)
		return status;
	bool ui = source_is_aitk_arg(r.job);

	{
		/* nvidia-smi once, before the first run; none is normal (the OOM message says the
		 * card). When it answers, each try asks it again for the job's card (the web UI
		 * job's GPU, else 0) and what other processes hold on it. */
		struct est_gpus *gpus = calloc(1, sizeof *gpus);
		struct err ge;
		err_clear(&ge);
		r.ask_smi = gpus && estimate_query_gpus(gpus, &ge) == ERR_OK && gpus->n;
		free(gpus);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: poll() wakes up at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	status = run_loop(&r, ui ? NULL : argv + optind + 1, grace, events);
	if (events)
		fclose(events);
	return status;
}
